//! Ad-hoc queries with tern-data: a join that no model writes, read into
//! a struct with `#[derive(tern_data::Row)]`, on SQLite and PostgreSQL,
//! without sqlx among this crate's dependencies.

use tern_data::{sqlx, with_pool, DataError, Model, OffsetDateTime, Pool, Uuid};

/// A user: only what the join needs.
#[derive(Debug, Clone, PartialEq, Model)]
#[model(table = "users")]
pub struct User {
    /// The key.
    #[model(primary_key)]
    pub id: i64,
    /// The public id.
    pub public_id: Uuid,
    /// The name.
    pub username: String,
}

/// An article, written through its model (so that its date-time sorts
/// by time on SQLite too).
#[derive(Debug, Clone, PartialEq, Model)]
#[model(table = "articles")]
pub struct Article {
    /// The key.
    #[model(primary_key)]
    pub id: i64,
    /// The URL's name of the article.
    pub slug: String,
    /// Its title.
    pub title: String,
    /// Its author (`users.id`).
    pub author_id: i64,
    /// When it was written.
    pub created_at: OffsetDateTime,
}

/// An article with its author's name and its number of favourites: a
/// row of a join, which no model describes.
#[derive(Debug, Clone, PartialEq, tern_data::Row)]
pub struct ArticleRow {
    /// The article's slug.
    pub slug: String,
    /// Its title.
    pub title: String,
    /// Its author's public id (`users.public_id`).
    #[row(rename = "public_id")]
    pub author_id: Uuid,
    /// Its author's name (`users.username`).
    #[row(rename = "username")]
    pub author: String,
    /// When it was written.
    pub created_at: OffsetDateTime,
    /// How many users favour it.
    pub favorites: i64,
}

/// The tables, for either database.
pub async fn create_schema(pool: &Pool) -> Result<(), DataError> {
    let sql = match pool {
        Pool::Sqlite(_) => {
            "CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT,
                 public_id BLOB NOT NULL UNIQUE, username TEXT NOT NULL UNIQUE);
             CREATE TABLE articles (id INTEGER PRIMARY KEY AUTOINCREMENT,
                 slug TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
                 author_id INTEGER NOT NULL REFERENCES users (id), created_at TEXT NOT NULL);
             CREATE TABLE favorites (user_id INTEGER NOT NULL REFERENCES users (id),
                 article_id INTEGER NOT NULL REFERENCES articles (id),
                 PRIMARY KEY (user_id, article_id));"
        }
        Pool::Postgres(_) => {
            "CREATE TABLE users (id BIGSERIAL PRIMARY KEY,
                 public_id UUID NOT NULL UNIQUE, username TEXT NOT NULL UNIQUE);
             CREATE TABLE articles (id BIGSERIAL PRIMARY KEY,
                 slug TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
                 author_id BIGINT NOT NULL REFERENCES users (id), created_at TIMESTAMPTZ NOT NULL);
             CREATE TABLE favorites (user_id BIGINT NOT NULL REFERENCES users (id),
                 article_id BIGINT NOT NULL REFERENCES articles (id),
                 PRIMARY KEY (user_id, article_id));"
        }
    };
    with_pool!(pool, p => {
        sqlx::raw_sql(sql).execute(p).await?;
    });
    Ok(())
}

/// Marks `article` as a favourite of `user`.
pub async fn favorite(pool: &Pool, user: i64, article: i64) -> Result<(), DataError> {
    let sql = "INSERT INTO favorites (user_id, article_id) VALUES ($1, $2)";
    with_pool!(pool, p => {
        sqlx::query(sql).bind(user).bind(article).execute(p).await?;
    });
    Ok(())
}

/// The articles of the user named `author`, newest first, with the
/// author's public id and name and each article's number of favourites.
pub async fn articles_by(pool: &Pool, author: &str) -> Result<Vec<ArticleRow>, DataError> {
    let sql = "SELECT a.slug, a.title, u.public_id, u.username, a.created_at,
                      COUNT(f.user_id) AS favorites
               FROM articles a
               JOIN users u ON u.id = a.author_id
               LEFT JOIN favorites f ON f.article_id = a.id
               WHERE u.username = $1
               GROUP BY a.id, a.slug, a.title, u.public_id, u.username, a.created_at
               ORDER BY a.created_at DESC";
    Ok(with_pool!(pool, p => {
        sqlx::query_as(sql).bind(author).fetch_all(p).await?
    }))
}
