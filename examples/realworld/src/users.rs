//! Registering, logging in, and the current user: tern-auth's accounts
//! (passwords hashed and checked by it, the login throttled by it) and
//! its API tokens.

use serde::Deserialize;
use serde_json::{json, Value};
use tern::{extract::ClientIp, settings::Settings, Json, StatusCode};
use tern_auth::{Accounts, Authenticated, NewToken, NewUser, Passwords, User, UserChange};
use tern_data::{query, Conn, Db, Row, Tx};

use crate::{required, Error};

/// `{"user": {...}}`, as Conduit's bodies come.
#[derive(Deserialize)]
pub struct UserBody<T> {
    user: T,
}

/// What registering, logging in and updating may send.
#[derive(Deserialize)]
pub struct UserIn {
    username: Option<String>,
    email: Option<String>,
    password: Option<String>,
    bio: Option<String>,
    image: Option<String>,
}

/// A user's profile columns (none until they set one).
#[derive(Row, Default)]
struct Bio {
    bio: Option<String>,
    image: Option<String>,
}

/// `POST /api/users`: a new account and its first token (201).
pub async fn register(
    Db(pool): Db,
    Settings(accounts): Settings<Accounts>,
    Settings(passwords): Settings<Passwords>,
    Json(UserBody { user }): Json<UserBody<UserIn>>,
) -> Result<(StatusCode, Json<Value>), Error> {
    let username = required(user.username, "username")?;
    let email = required(user.email, "email")?;
    let password = required(user.password, "password")?;
    let made = NewUser::new(&username, &password)
        .email(&email)
        .create(&pool, &passwords)
        .await?;
    let token = NewToken::new(&made, "conduit")
        .create(&pool, &accounts)
        .await?;
    let body = answer(&pool, &made, &token.secret).await?;
    Ok((StatusCode::CREATED, body))
}

/// `POST /api/users/login`: by email (or username) and password, behind
/// tern-auth's throttle; a new token.
pub async fn login(
    Db(pool): Db,
    ClientIp(ip): ClientIp,
    Settings(accounts): Settings<Accounts>,
    Settings(passwords): Settings<Passwords>,
    Json(UserBody { user }): Json<UserBody<UserIn>>,
) -> Result<Json<Value>, Error> {
    let email = required(user.email, "email")?;
    let password = required(user.password, "password")?;
    let found = tern_auth::login(&pool, &accounts, &passwords, ip, &email, &password).await?;
    let token = NewToken::new(&found, "conduit")
        .create(&pool, &accounts)
        .await?;
    answer(&pool, &found, &token.secret).await
}

/// `GET /api/user`: the token's user.
pub async fn current(Db(pool): Db, auth: Authenticated) -> Result<Json<Value>, Error> {
    answer(&pool, &auth.user, auth.token().unwrap_or_default()).await
}

/// `PUT /api/user`: any of username, email, password, bio, image.
pub async fn update(
    tx: Tx,
    auth: Authenticated,
    Settings(accounts): Settings<Accounts>,
    Settings(passwords): Settings<Passwords>,
    Json(UserBody { user: change }): Json<UserBody<UserIn>>,
) -> Result<Json<Value>, Error> {
    // One transaction: the name, the password and the profile change
    // together or not at all.
    let mut guard = tx.lock().await;
    let mut on = Conn::from(&mut guard);
    let mut user = auth.user.clone();
    if change.username.is_some() || change.email.is_some() {
        let mut edit = UserChange::new(user.id);
        if let Some(name) = &change.username {
            edit = edit.username(name);
        }
        if let Some(email) = &change.email {
            edit = edit.email(email);
        }
        user = edit.apply(&mut on).await?;
    }
    if let Some(password) = &change.password {
        tern_auth::set_password(&mut on, &accounts, &passwords, user.id, password).await?;
    }
    if change.bio.is_some() || change.image.is_some() {
        query(
            "INSERT INTO profiles (user_id, bio, image) VALUES ($1, $2, $3)
             ON CONFLICT (user_id) DO UPDATE
             SET bio = COALESCE($2, profiles.bio), image = COALESCE($3, profiles.image)",
        )
        .bind(user.id)
        .bind(change.bio)
        .bind(change.image)
        .execute(&mut on)
        .await?;
    }
    answer(on, &user, auth.token().unwrap_or_default()).await
}

/// `{"user": {email, token, username, bio, image}}`.
async fn answer<'c>(
    on: impl Into<Conn<'c>>,
    user: &User,
    token: &str,
) -> Result<Json<Value>, Error> {
    let bio = query("SELECT bio, image FROM profiles WHERE user_id = $1")
        .bind(user.id)
        .fetch_optional::<Bio>(on)
        .await?
        .unwrap_or_default();
    Ok(Json(json!({ "user": {
        "email": user.email, "token": token, "username": user.username,
        "bio": bio.bio, "image": bio.image,
    }})))
}
