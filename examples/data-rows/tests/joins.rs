//! A join read into `#[derive(tern_data::Row)]` on SQLite and PostgreSQL,
//! from a crate with no sqlx in its dependencies (the derive's paths go
//! through `tern_data`): columns by name, `#[row(rename)]`, a UUID, a
//! date-time and a count.
#![allow(clippy::unwrap_used, missing_docs)]

use example_data_rows::{articles_by, create_schema, favorite, Article, ArticleRow, User};
use tern_data::{
    testing::{fresh, BACKENDS},
    time::Duration,
    DataError, Database, Model, OffsetDateTime, Uuid,
};

async fn user(pool: &tern_data::Pool, name: &str) -> User {
    User {
        id: 0,
        public_id: Uuid::new_v4(),
        username: name.to_owned(),
    }
    .insert(pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_join_into_a_row_struct() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let db = Database::from_url(&url).unwrap();
        let pool = db.pool();
        create_schema(pool).await.unwrap();
        let ada = user(pool, "ada").await;
        let bob = user(pool, "bob").await;
        let eve = user(pool, "eve").await;
        let at = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let mut articles = Vec::new();
        for (slug, author, at) in [
            ("first", &ada, at),
            ("second", &ada, at + Duration::milliseconds(1500)),
            ("elsewhere", &bob, at + Duration::days(1)),
        ] {
            let article = Article {
                id: 0,
                slug: slug.to_owned(),
                title: slug.to_uppercase(),
                author_id: author.id,
                created_at: at,
            };
            articles.push(article.insert(pool).await.unwrap());
        }
        favorite(pool, bob.id, articles[0].id).await.unwrap();
        favorite(pool, eve.id, articles[0].id).await.unwrap();

        let rows = articles_by(pool, "ada").await.unwrap();
        let row = |a: &Article, favorites| ArticleRow {
            slug: a.slug.clone(),
            title: a.title.clone(),
            author_id: ada.public_id,
            author: "ada".to_owned(),
            created_at: a.created_at,
            favorites,
        };
        assert_eq!(
            rows,
            [row(&articles[1], 0), row(&articles[0], 2)],
            "{backend:?}"
        );
        assert!(articles_by(pool, "nobody").await.unwrap().is_empty());
    }
}

/// A column the struct names but the query does not select is an error
/// naming it, not a panic or a default.
#[tokio::test]
async fn a_missing_column_is_an_error() {
    #[derive(Debug, tern_data::Row)]
    #[allow(dead_code)]
    struct Wrong {
        #[row(rename = "nickname")]
        name: String,
    }
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let db = Database::from_url(&url).unwrap();
        let pool = db.pool();
        create_schema(pool).await.unwrap();
        user(pool, "ada").await;
        let sql = "SELECT username FROM users";
        let got: Result<Vec<Wrong>, DataError> = async {
            Ok(tern_data::with_pool!(pool, p => {
                tern_data::sqlx::query_as(sql).fetch_all(p).await?
            }))
        }
        .await;
        let err = got.unwrap_err().to_string();
        assert!(err.contains("nickname"), "{backend:?}: {err}");
    }
}
