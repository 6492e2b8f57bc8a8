//! Server-side sessions: an opaque random token in a signed cookie; the
//! database keeps its SHA-256 digest, the user, a CSRF token and the
//! times that end it.

use base64::Engine as _;
use rand::RngCore as _;
use sha2::{Digest, Sha256};
use tern_data::{with_pool, Conn, Pool};

use crate::{settings::Store, users::now, Accounts, AuthError, User};

/// A new random token: 32 bytes from the CSPRNG, URL-safe base64.
pub(crate) fn token() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// What the database keeps for a token: its digest (a stolen table
/// holds no usable session).
pub(crate) fn digest(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A live session, as loaded for a request.
#[derive(Clone)]
pub struct Session {
    /// Its user.
    pub user: User,
    /// The CSRF token every unsafe request of this session must carry.
    pub csrf: String,
    pub(crate) token: String,
}

/// The user; the tokens are secrets, never shown (not in a log either).
impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("user", &self.user)
            .field("csrf", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// Starts a session for `user`: its token (for the cookie) and CSRF token.
pub(crate) async fn create(
    pool: &Pool,
    accounts: &Accounts,
    user: &User,
) -> Result<Session, AuthError> {
    let (token, csrf, at) = (token(), crate::session::token(), now());
    match &accounts.store {
        Store::Database => {
            let sql = "INSERT INTO tern_sessions (id_hash, user_id, csrf, created_at, last_seen) \
                       VALUES ($1, $2, $3, $4, $4)";
            with_pool!(pool, p => {
                tern_data::sqlx::query(sql)
                    .bind(digest(&token))
                    .bind(user.id)
                    .bind(&csrf)
                    .bind(at)
                    .execute(p)
                    .await?
                    .rows_affected()
            });
        }
        #[cfg(feature = "redis")]
        Store::Redis(redis) => {
            let stored = crate::redis_store::Stored {
                csrf: csrf.clone(),
                created: at,
                seen: at,
                user_id: user.id,
                username: user.username.clone(),
                email: user.email.clone(),
                is_staff: user.is_staff,
                is_superuser: user.is_superuser,
            };
            let idle = accounts.session_idle.as_secs();
            let lifetime = accounts.session_lifetime.as_secs();
            redis
                .create(&digest(&token), &stored, idle.min(lifetime), lifetime)
                .await?;
        }
    }
    Ok(Session {
        user: user.clone(),
        csrf,
        token,
    })
}

/// The live session of `token`, if any: an expired one (past its
/// lifetime, or idle too long) is deleted; one of an inactive user is
/// not live. Its last use is recorded at most once a minute.
pub(crate) async fn load(
    pool: &Pool,
    accounts: &Accounts,
    token: &str,
) -> Result<Option<Session>, AuthError> {
    #[cfg(feature = "redis")]
    if let Store::Redis(redis) = &accounts.store {
        return load_redis(redis, accounts, token).await;
    }
    let id_hash = digest(token);
    let sql = "SELECT s.csrf, s.created_at, s.last_seen, u.id, u.username, u.email, u.is_staff, \
               u.is_superuser, u.is_active \
               FROM tern_sessions s JOIN tern_users u ON u.id = s.user_id WHERE s.id_hash = $1";
    type Row = (
        String,
        i64,
        i64,
        i64,
        String,
        Option<String>,
        bool,
        bool,
        bool,
    );
    let row: Option<Row> = with_pool!(pool, p => {
        tern_data::sqlx::query_as(sql).bind(&id_hash).fetch_optional(p).await?
    });
    let Some((csrf, created, seen, id, username, email, is_staff, is_superuser, active)) = row
    else {
        return Ok(None);
    };
    let at = now();
    let lifetime = i64::try_from(accounts.session_lifetime.as_secs()).unwrap_or(i64::MAX);
    let idle = i64::try_from(accounts.session_idle.as_secs()).unwrap_or(i64::MAX);
    if at.saturating_sub(created) >= lifetime || at.saturating_sub(seen) >= idle {
        delete(pool, accounts, token).await?;
        return Ok(None);
    }
    if !active {
        return Ok(None);
    }
    if at - seen >= 60 {
        let sql = "UPDATE tern_sessions SET last_seen = $1 WHERE id_hash = $2";
        with_pool!(pool, p => {
            tern_data::sqlx::query(sql).bind(at).bind(&id_hash).execute(p).await?.rows_affected()
        });
    }
    Ok(Some(Session {
        user: User {
            id,
            username,
            email,
            is_staff,
            is_superuser,
        },
        csrf,
        token: token.to_owned(),
    }))
}

#[cfg(feature = "redis")]
async fn load_redis(
    redis: &crate::redis_store::RedisStore,
    accounts: &Accounts,
    token: &str,
) -> Result<Option<Session>, AuthError> {
    let id_hash = digest(token);
    let Some(s) = redis.load(&id_hash).await? else {
        return Ok(None);
    };
    let at = now();
    let lifetime = i64::try_from(accounts.session_lifetime.as_secs()).unwrap_or(i64::MAX);
    let idle = i64::try_from(accounts.session_idle.as_secs()).unwrap_or(i64::MAX);
    let age = at.saturating_sub(s.created);
    if age >= lifetime || at.saturating_sub(s.seen) >= idle {
        redis.delete(&id_hash).await?;
        return Ok(None);
    }
    if at - s.seen >= 60 {
        let ttl = idle.min(lifetime - age);
        redis
            .touch(&id_hash, at, u64::try_from(ttl).unwrap_or(1))
            .await?;
    }
    Ok(Some(Session {
        user: User {
            id: s.user_id,
            username: s.username,
            email: s.email,
            is_staff: s.is_staff,
            is_superuser: s.is_superuser,
        },
        csrf: s.csrf,
        token: token.to_owned(),
    }))
}

/// Ends the session of `token`.
pub(crate) async fn delete(pool: &Pool, accounts: &Accounts, token: &str) -> Result<(), AuthError> {
    match &accounts.store {
        Store::Database => {
            let sql = "DELETE FROM tern_sessions WHERE id_hash = $1";
            with_pool!(pool, p => {
                tern_data::sqlx::query(sql).bind(digest(token)).execute(p).await?.rows_affected()
            });
        }
        #[cfg(feature = "redis")]
        Store::Redis(redis) => redis.delete(&digest(token)).await?,
    }
    Ok(())
}

/// Ends every session of the user (after a change to the account, or to
/// sign them out everywhere).
pub async fn delete_all<'c>(
    on: impl Into<Conn<'c>>,
    accounts: &Accounts,
    user_id: i64,
) -> Result<(), AuthError> {
    match &accounts.store {
        Store::Database => {
            let sql = "DELETE FROM tern_sessions WHERE user_id = $1";
            tern_data::query(sql).bind(user_id).execute(on).await?;
        }
        #[cfg(feature = "redis")]
        Store::Redis(redis) => {
            let _ = on;
            redis.delete_all(user_id).await?
        }
    }
    Ok(())
}
