//! Users: who they are, and their password hashes.

use std::sync::Arc;

use serde::Serialize;
use tern_data::{with_pool, Pool};

use crate::{password, Accounts, AuthError, Passwords};

/// A logged-in user, as handlers see one (an extractor: `401` without a
/// session; `Option<User>` for pages that work either way).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    /// The user's id.
    pub id: i64,
    /// The user's name (lower case).
    pub username: String,
    /// Whether the user is staff (the admin's, and [`Staff`](crate::Staff)'s).
    pub is_staff: bool,
}

/// The longest username, in characters.
pub const MAX_USERNAME_CHARS: usize = 150;

/// A username as stored: trimmed, lower case, 1 to 150 characters, no
/// control characters.
pub(crate) fn normalize(username: &str) -> Result<String, AuthError> {
    let name = username.trim().to_lowercase();
    let n = name.chars().count();
    if n == 0 || n > MAX_USERNAME_CHARS || name.chars().any(char::is_control) {
        return Err(AuthError::BadRequest(format!(
            "a username has 1 to {MAX_USERNAME_CHARS} characters, none of them control characters"
        )));
    }
    Ok(name)
}

pub(crate) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl Passwords {
    pub(crate) fn pepper(&self) -> Option<Arc<[u8]>> {
        self.pepper
            .as_ref()
            .map(|p| Arc::from(p.expose().as_bytes()))
    }
}

/// Checks, before serving, that the accounts' password hashes can be
/// verified: an error naming `PASSWORD_PEPPER` when some were made with a
/// pepper and none is set (every one of those users would be refused at
/// login). Call it after the migrations, at every start; once a pepper
/// is in use it is required, in production as elsewhere.
///
/// Setting a pepper later needs no step: hashes made without one still
/// verify and are rehashed with it at each user's next login.
pub async fn check_pepper(pool: &Pool, passwords: &Passwords) -> Result<(), AuthError> {
    if passwords.pepper.is_some() {
        return Ok(());
    }
    // `keyid=cGVwcGVy`: the base64 of `password::PEPPER_KEYID`.
    let sql = "SELECT COUNT(*) FROM tern_users WHERE password_hash LIKE '%,keyid=cGVwcGVy$%'";
    let peppered: i64 = with_pool!(pool, p => {
        tern_data::sqlx::query_scalar(sql).fetch_one(p).await?
    });
    if peppered > 0 {
        return Err(AuthError::Internal(format!(
            "PASSWORD_PEPPER is not set, but {peppered} account(s) have passwords hashed \
             with a pepper: none of them could log in. Set PASSWORD_PEPPER to the pepper \
             they were hashed with"
        )));
    }
    Ok(())
}

/// Creates a user with `password` (its rules checked, hashed with
/// Argon2id); `409` when the name is taken.
pub async fn create_user(
    pool: &Pool,
    passwords: &Passwords,
    username: &str,
    password: &str,
    staff: bool,
) -> Result<User, AuthError> {
    let username = normalize(username)?;
    password::acceptable(password)?;
    let hash = password::hash(password, passwords.pepper()).await?;
    let sql = "INSERT INTO tern_users (username, password_hash, is_staff, is_active, created_at) \
               VALUES ($1, $2, $3, TRUE, $4) RETURNING id";
    let id: i64 = with_pool!(pool, p => {
        tern_data::sqlx::query_scalar(sql)
            .bind(&username)
            .bind(&hash)
            .bind(staff)
            .bind(now())
            .fetch_one(p)
            .await?
    });
    Ok(User {
        id,
        username,
        is_staff: staff,
    })
}

/// Sets a user's password (its rules checked) and ends every session of
/// the user.
pub async fn set_password(
    pool: &Pool,
    accounts: &Accounts,
    passwords: &Passwords,
    user_id: i64,
    password: &str,
) -> Result<(), AuthError> {
    password::acceptable(password)?;
    let hash = password::hash(password, passwords.pepper()).await?;
    store_hash(pool, user_id, &hash).await?;
    crate::session::delete_all(pool, accounts, user_id).await
}

pub(crate) async fn store_hash(pool: &Pool, user_id: i64, hash: &str) -> Result<(), AuthError> {
    let sql = "UPDATE tern_users SET password_hash = $1 WHERE id = $2";
    with_pool!(pool, p => {
        tern_data::sqlx::query(sql).bind(hash).bind(user_id).execute(p).await?.rows_affected()
    });
    Ok(())
}

/// The user `username` if `password` is theirs and the account is
/// active. Unknown users are checked against a decoy hash, so that every
/// failure takes as long and answers the same.
pub(crate) async fn authenticate(
    pool: &Pool,
    passwords: &Passwords,
    username: &str,
    password: &str,
) -> Result<User, AuthError> {
    password::bounded(password)?;
    let username = normalize(username).map_err(|_| AuthError::BadCredentials)?;
    let sql = "SELECT id, password_hash, is_staff, is_active FROM tern_users WHERE username = $1";
    let row: Option<(i64, String, bool, bool)> = with_pool!(pool, p => {
        tern_data::sqlx::query_as(sql).bind(&username).fetch_optional(p).await?
    });
    let pepper = passwords.pepper();
    let Some((id, hash, is_staff, active)) = row else {
        let _ = password::verify(password, password::decoy(), pepper).await?;
        return Err(AuthError::BadCredentials);
    };
    let verdict = password::verify(password, &hash, pepper.clone()).await?;
    if !verdict.ok || !active {
        return Err(AuthError::BadCredentials);
    }
    if verdict.rehash {
        let fresh = password::hash(password, pepper).await?;
        store_hash(pool, id, &fresh).await?;
    }
    Ok(User {
        id,
        username,
        is_staff,
    })
}
