//! Profiles, and following their users.

use serde::Serialize;
use serde_json::{json, Value};
use tern::{extract::Path, Json};
use tern_auth::{find_user, Authenticated};
use tern_data::{query, Db, Pool, Row};

use crate::Error;

/// A user as others see them; also an article's or a comment's author.
#[derive(Row, Serialize)]
pub struct Profile {
    /// Their name.
    pub username: String,
    /// What they say of themselves.
    pub bio: Option<String>,
    /// Their picture's URL.
    pub image: Option<String>,
    /// Whether the reader follows them.
    pub following: bool,
}

/// `GET /api/profiles/{username}` (with or without a token).
pub async fn show(
    Db(pool): Db,
    me: Option<Authenticated>,
    Path(username): Path<String>,
) -> Result<Json<Value>, Error> {
    let me = me.map(|a| a.user.id);
    profile(&pool, me, &username).await
}

/// `POST /api/profiles/{username}/follow` (idempotent).
pub async fn follow(
    Db(pool): Db,
    me: Authenticated,
    Path(username): Path<String>,
) -> Result<Json<Value>, Error> {
    let them = user_id(&pool, &username).await?;
    query("INSERT INTO follows (follower_id, followee_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
        .bind(me.user.id)
        .bind(them)
        .execute(&pool)
        .await?;
    profile(&pool, Some(me.user.id), &username).await
}

/// `DELETE /api/profiles/{username}/follow` (idempotent).
pub async fn unfollow(
    Db(pool): Db,
    me: Authenticated,
    Path(username): Path<String>,
) -> Result<Json<Value>, Error> {
    let them = user_id(&pool, &username).await?;
    query("DELETE FROM follows WHERE follower_id = $1 AND followee_id = $2")
        .bind(me.user.id)
        .bind(them)
        .execute(&pool)
        .await?;
    profile(&pool, Some(me.user.id), &username).await
}

async fn user_id(pool: &Pool, username: &str) -> Result<i64, Error> {
    match find_user(pool, username).await? {
        Some(user) => Ok(user.id),
        None => Err(Error::new(tern::StatusCode::NOT_FOUND, "no such profile")),
    }
}

async fn profile(pool: &Pool, me: Option<i64>, username: &str) -> Result<Json<Value>, Error> {
    let them = user_id(pool, username).await?;
    let profile = query(
        "SELECT u.username, p.bio, p.image,
                EXISTS (SELECT 1 FROM follows f
                        WHERE f.follower_id = $1 AND f.followee_id = u.id) AS following
         FROM tern_users u LEFT JOIN profiles p ON p.user_id = u.id
         WHERE u.id = $2",
    )
    .bind(me)
    .bind(them)
    .fetch_one::<Profile>(pool)
    .await?;
    Ok(Json(json!({ "profile": profile })))
}
