//! Comments on an article.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tern::{extract::Path, Json, StatusCode};
use tern_auth::Authenticated;
use tern_data::{query, Db, Model, OffsetDateTime, Row};

use crate::{articles::Article, profiles::Profile, required, Error};

/// A row of `comments`.
#[derive(Debug, Clone, Model)]
#[model(table = "comments")]
pub struct Comment {
    /// The key (Conduit's clients use it in the delete path).
    #[model(primary_key)]
    pub id: i64,
    /// The article (`articles.id`).
    pub article_id: i64,
    /// The author (`tern_users.id`).
    pub author_id: i64,
    /// The text.
    pub body: String,
    /// Written at.
    pub created_at: OffsetDateTime,
    /// Last changed at.
    pub updated_at: OffsetDateTime,
}

/// A comment with its author, as a reader (`$1`, or NULL) sees them.
const COMMENT_ROWS: &str =
    "SELECT c.id, c.body, c.created_at, c.updated_at, u.username, p.bio, p.image,
        EXISTS (SELECT 1 FROM follows f
                WHERE f.follower_id = $1 AND f.followee_id = c.author_id) AS following
    FROM comments c
    JOIN tern_users u ON u.id = c.author_id
    LEFT JOIN profiles p ON p.user_id = c.author_id
    WHERE c.article_id = $2 AND ($3 IS NULL OR c.id = $3)
    ORDER BY c.created_at, c.id";

/// A comment as Conduit shows it: the joined row, serialized as read.
#[derive(Row, Serialize)]
#[serde(rename_all = "camelCase")]
struct CommentRow {
    id: i64,
    body: String,
    #[serde(with = "tern_data::timestamp")]
    created_at: OffsetDateTime,
    #[serde(with = "tern_data::timestamp")]
    updated_at: OffsetDateTime,
    #[row(flatten)]
    author: Profile,
}

/// `{"comment": {"body": ...}}`.
#[derive(Deserialize)]
pub struct CommentBody {
    comment: CommentIn,
}

/// What a new comment sends.
#[derive(Deserialize)]
pub struct CommentIn {
    body: Option<String>,
}

/// `GET /api/articles/{slug}/comments`, oldest first.
pub async fn list(
    Db(pool): Db,
    me: Option<Authenticated>,
    Path(slug): Path<String>,
) -> Result<Json<Value>, Error> {
    let article = Article::find_by_slug(&pool, &slug).await?;
    let rows: Vec<CommentRow> = query(COMMENT_ROWS)
        .bind(me.map(|a| a.user.id))
        .bind(article.id)
        .bind(None::<i64>)
        .fetch_all(&pool)
        .await?;
    Ok(Json(json!({ "comments": rows })))
}

/// `POST /api/articles/{slug}/comments`.
pub async fn create(
    Db(pool): Db,
    me: Authenticated,
    Path(slug): Path<String>,
    Json(CommentBody { comment }): Json<CommentBody>,
) -> Result<Json<Value>, Error> {
    let article = Article::find_by_slug(&pool, &slug).await?;
    let now = OffsetDateTime::now_utc();
    let made = Comment {
        id: 0,
        article_id: article.id,
        author_id: me.user.id,
        body: required(comment.body, "body")?,
        created_at: now,
        updated_at: now,
    }
    .insert(&pool)
    .await?;
    let row: CommentRow = query(COMMENT_ROWS)
        .bind(Some(me.user.id))
        .bind(article.id)
        .bind(Some(made.id))
        .fetch_one(&pool)
        .await?;
    Ok(Json(json!({ "comment": row })))
}

/// `DELETE /api/articles/{slug}/comments/{id}` (its author only).
pub async fn remove(
    Db(pool): Db,
    me: Authenticated,
    Path((slug, id)): Path<(String, i64)>,
) -> Result<StatusCode, Error> {
    let article = Article::find_by_slug(&pool, &slug).await?;
    let comment = Comment::get(&pool, id).await?;
    if comment.article_id != article.id {
        return Err(Error::new(
            StatusCode::NOT_FOUND,
            "no such comment on this article",
        ));
    }
    if comment.author_id != me.user.id {
        return Err(Error::new(
            StatusCode::FORBIDDEN,
            "only its author may delete this comment",
        ));
    }
    Comment::delete(&pool, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
