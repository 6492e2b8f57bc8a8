//! Articles: a model for the table, a row for the joined reads (author,
//! favourites, following), lists of Conduit's shape, tags kept in the
//! same transaction as their article.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tern::{extract::Path, Json, StatusCode};
use tern_auth::Authenticated;
use tern_data::{
    list::{ListShape, Listing, Paging, Where},
    query, Conn, Db, JsonColumn, Model, OffsetDateTime, Page, Row, Tx, Uuid,
};

use crate::{profiles::Profile, required, Error};

/// A row of `articles`.
#[derive(Debug, Clone, Model)]
#[model(table = "articles")]
pub struct Article {
    /// The key.
    #[model(primary_key)]
    pub id: i64,
    /// The URL's name: the title's words and a random suffix.
    #[model(unique)]
    pub slug: String,
    /// The title.
    pub title: String,
    /// The summary.
    pub description: String,
    /// The text.
    pub body: String,
    /// The tags, sorted (also one row each in `article_tags`, for the
    /// tag filter and `/api/tags`).
    pub tag_list: JsonColumn<Vec<String>>,
    /// The author (`tern_users.id`).
    pub author_id: i64,
    /// Written at.
    pub created_at: OffsetDateTime,
    /// Last changed at.
    pub updated_at: OffsetDateTime,
}

/// An article as a reader sees it (the first `$1` is the reader, or NULL).
macro_rules! article_rows {
    ($where:literal) => {
        concat!(
            "SELECT a.id, a.slug, a.title, a.description, a.body, a.tag_list,
                    a.created_at, a.updated_at, u.username, p.bio, p.image,
                    EXISTS (SELECT 1 FROM follows f
                            WHERE f.follower_id = $1 AND f.followee_id = a.author_id) AS following,
                    EXISTS (SELECT 1 FROM favorites v
                            WHERE v.user_id = $1 AND v.article_id = a.id) AS favorited,
                    (SELECT COUNT(*) FROM favorites v WHERE v.article_id = a.id) AS favorites_count
             FROM articles a
             JOIN tern_users u ON u.id = a.author_id
             LEFT JOIN profiles p ON p.user_id = a.author_id ",
            $where
        )
    };
}

/// An article as Conduit shows it: the joined row, serialized as read.
#[derive(Row, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArticleRow {
    slug: String,
    title: String,
    description: String,
    body: String,
    tag_list: JsonColumn<Vec<String>>,
    #[serde(with = "tern_data::timestamp")]
    created_at: OffsetDateTime,
    #[serde(with = "tern_data::timestamp")]
    updated_at: OffsetDateTime,
    favorited: bool,
    favorites_count: i64,
    #[row(flatten)]
    author: Profile,
}

/// `GET /api/articles`: `?tag=`, `?author=`, `?favorited=`, `limit`
/// (20, at most 100), `offset`; newest first.
pub struct Articles;

impl ListShape for Articles {
    const PAGING: Paging = Paging::Offset {
        limit: 20,
        max: 100,
    };
    const ITEMS: &'static str = "articles";
    const TOTAL: &'static str = "articlesCount";
    const FILTERS: &'static [Where] = &[
        Where {
            param: "tag",
            sql: "id IN (SELECT article_id FROM article_tags WHERE tag = {})",
        },
        Where {
            param: "author",
            sql: "username = {}",
        },
        Where {
            param: "favorited",
            sql: "id IN (SELECT v.article_id FROM favorites v
                         JOIN tern_users fu ON fu.id = v.user_id WHERE fu.username = {})",
        },
    ];
    const ORDER: &'static str = "created_at DESC, id DESC";
}

/// `GET /api/articles/feed`: the followed authors' articles.
pub struct Feed;

impl ListShape for Feed {
    const PAGING: Paging = Articles::PAGING;
    const ITEMS: &'static str = Articles::ITEMS;
    const TOTAL: &'static str = Articles::TOTAL;
    const ORDER: &'static str = Articles::ORDER;
}

/// `GET /api/articles`.
pub async fn list(
    Db(pool): Db,
    me: Option<Authenticated>,
    listing: Listing<Articles>,
) -> Result<Json<Page<ArticleRow, Articles>>, Error> {
    let page: Page<ArticleRow, Articles> = query(article_rows!(""))
        .bind(me.map(|a| a.user.id))
        .list(&pool, &listing)
        .await?;
    Ok(Json(page))
}

/// `GET /api/articles/feed`.
pub async fn feed(
    Db(pool): Db,
    me: Authenticated,
    listing: Listing<Feed>,
) -> Result<Json<Page<ArticleRow, Feed>>, Error> {
    let sql = article_rows!(
        "WHERE a.author_id IN (SELECT followee_id FROM follows WHERE follower_id = $1)"
    );
    let page: Page<ArticleRow, Feed> = query(sql).bind(me.user.id).list(&pool, &listing).await?;
    Ok(Json(page))
}

/// `GET /api/articles/{slug}`.
pub async fn show(
    Db(pool): Db,
    me: Option<Authenticated>,
    Path(slug): Path<String>,
) -> Result<Json<Value>, Error> {
    let me = me.map(|a| a.user.id);
    answer(&mut Conn::from(&pool), me, &slug).await
}

/// What creating and updating send.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArticleIn {
    title: Option<String>,
    description: Option<String>,
    body: Option<String>,
    tag_list: Option<Vec<String>>,
}

/// `{"article": {...}}`.
#[derive(Deserialize)]
pub struct ArticleBody {
    article: ArticleIn,
}

/// `POST /api/articles` (201): the article and its tags, together.
pub async fn create(
    me: Authenticated,
    tx: Tx,
    Json(ArticleBody { article: new }): Json<ArticleBody>,
) -> Result<(StatusCode, Json<Value>), Error> {
    let title = required(new.title, "title")?;
    let now = OffsetDateTime::now_utc();
    let article = Article {
        id: 0,
        slug: slug(&title),
        description: required(new.description, "description")?,
        body: required(new.body, "body")?,
        tag_list: JsonColumn(tags(new.tag_list.unwrap_or_default())),
        title,
        author_id: me.user.id,
        created_at: now,
        updated_at: now,
    };
    let mut t = tx.lock().await;
    let mut on = Conn::from(&mut t);
    let article = article.insert(&mut on).await?;
    save_tags(&mut on, &article).await?;
    Ok((
        StatusCode::CREATED,
        answer(&mut on, Some(me.user.id), &article.slug).await?,
    ))
}

/// `PUT /api/articles/{slug}`: any field; the slug follows the title.
pub async fn update(
    me: Authenticated,
    tx: Tx,
    Path(slug_was): Path<String>,
    Json(ArticleBody { article: change }): Json<ArticleBody>,
) -> Result<Json<Value>, Error> {
    let mut t = tx.lock().await;
    let mut on = Conn::from(&mut t);
    let mut article = own(&mut on, &me, &slug_was).await?;
    if let Some(title) = change.title {
        article.slug = slug(&title);
        article.title = required(Some(title), "title")?;
    }
    if let Some(description) = change.description {
        article.description = description;
    }
    if let Some(body) = change.body {
        article.body = body;
    }
    let retag = change.tag_list.is_some();
    if let Some(list) = change.tag_list {
        article.tag_list = JsonColumn(tags(list));
    }
    article.updated_at = OffsetDateTime::now_utc();
    let article = article.update(&mut on).await?;
    if retag {
        query("DELETE FROM article_tags WHERE article_id = $1")
            .bind(article.id)
            .execute(&mut on)
            .await?;
        save_tags(&mut on, &article).await?;
    }
    answer(&mut on, Some(me.user.id), &article.slug).await
}

/// `DELETE /api/articles/{slug}` (its author only).
pub async fn remove(
    me: Authenticated,
    Db(pool): Db,
    Path(slug): Path<String>,
) -> Result<StatusCode, Error> {
    let article = own(&mut Conn::from(&pool), &me, &slug).await?;
    Article::delete(&pool, article.id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/articles/{slug}/favorite` (idempotent).
pub async fn favorite(
    me: Authenticated,
    Db(pool): Db,
    Path(slug): Path<String>,
) -> Result<Json<Value>, Error> {
    let article = Article::find_by_slug(&pool, &slug).await?;
    query("INSERT INTO favorites (user_id, article_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
        .bind(me.user.id)
        .bind(article.id)
        .execute(&pool)
        .await?;
    answer(&mut Conn::from(&pool), Some(me.user.id), &slug).await
}

/// `DELETE /api/articles/{slug}/favorite` (idempotent).
pub async fn unfavorite(
    me: Authenticated,
    Db(pool): Db,
    Path(slug): Path<String>,
) -> Result<Json<Value>, Error> {
    let article = Article::find_by_slug(&pool, &slug).await?;
    query("DELETE FROM favorites WHERE user_id = $1 AND article_id = $2")
        .bind(me.user.id)
        .bind(article.id)
        .execute(&pool)
        .await?;
    answer(&mut Conn::from(&pool), Some(me.user.id), &slug).await
}

/// `GET /api/tags`: every tag in use.
pub async fn tags_in_use(Db(pool): Db) -> Result<Json<Value>, Error> {
    let tags: Vec<(String,)> = query("SELECT DISTINCT tag FROM article_tags ORDER BY tag")
        .fetch_all(&pool)
        .await?;
    Ok(Json(
        json!({ "tags": tags.into_iter().map(|(t,)| t).collect::<Vec<_>>() }),
    ))
}

/// The article at `slug`, if `me` wrote it (else 403).
pub(crate) async fn own(
    on: &mut Conn<'_>,
    me: &Authenticated,
    slug: &str,
) -> Result<Article, Error> {
    let article = Article::find_by_slug(on, slug).await?;
    if article.author_id != me.user.id {
        return Err(Error::new(
            StatusCode::FORBIDDEN,
            "only its author may change this article",
        ));
    }
    Ok(article)
}

async fn save_tags(on: &mut Conn<'_>, article: &Article) -> Result<(), Error> {
    for tag in &article.tag_list.0 {
        query("INSERT INTO article_tags (article_id, tag) VALUES ($1, $2)")
            .bind(article.id)
            .bind(tag.as_str())
            .execute(&mut *on)
            .await?;
    }
    Ok(())
}

async fn answer(on: &mut Conn<'_>, me: Option<i64>, slug: &str) -> Result<Json<Value>, Error> {
    let row = query(article_rows!("WHERE a.slug = $2"))
        .bind(me)
        .bind(slug)
        .fetch_one::<ArticleRow>(on)
        .await?;
    Ok(Json(json!({ "article": row })))
}

/// Tags trimmed, without blanks or repeats, sorted.
fn tags(mut list: Vec<String>) -> Vec<String> {
    list.iter_mut().for_each(|t| *t = t.trim().to_owned());
    list.retain(|t| !t.is_empty());
    list.sort();
    list.dedup();
    list
}

/// `How to train your dragon` -> `how-to-train-your-dragon-1a2b3c4d`.
fn slug(title: &str) -> String {
    let words: Vec<String> = title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let random = Uuid::new_v4().simple().to_string();
    format!("{}-{}", words.join("-"), &random[..8])
}
