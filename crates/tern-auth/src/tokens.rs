//! API tokens: opaque secrets a client sends in `Authorization` (a
//! script, a mobile app, a single-page app on another origin) instead of
//! a session cookie.
//!
//! A token is `tern_` and 32 random bytes in URL-safe base64 (the prefix
//! lets secret scanners spot a leaked one). It is shown once, when made
//! ([`IssuedToken::secret`]); the database keeps only its SHA-256 digest
//! and looks a presented token up by that digest (a stolen table holds
//! no usable token, and no comparison of secrets leaks their prefix by
//! its timing). Tokens always live in the database, also with
//! `AUTH_STORE=redis`.
//!
//! **Opaque, not JWT**, on purpose: revoking a token and listing a
//! user's tokens need server state anyway, so a signature buys nothing
//! and the lookup costs what a session's does; there is no signing key
//! to rotate (reusing `SECRET_KEY` would tie rotating the cookie key to
//! logging every client out), no `alg` pitfalls, and no new crypto
//! crate. A client treats the token as an opaque string either way.
//!
//! The [`Authenticated`](crate::Authenticated) extractor accepts a token
//! (in a scheme of `AUTH_TOKEN_SCHEMES`, `Bearer` by default) or a
//! session; a request a valid token authenticated needs no CSRF token.

use std::time::Duration;

use serde::Serialize;
use tern_data::{with_pool, Pool};

use crate::{
    session::{digest, token},
    users::now,
    Accounts, AuthError, User,
};

/// What every token's secret starts with.
pub(crate) const PREFIX: &str = "tern_";
/// The longest token name, in characters.
pub const MAX_TOKEN_NAME_CHARS: usize = 100;
/// The longest scope, in characters.
pub const MAX_SCOPE_CHARS: usize = 64;
/// The scope that stands for every scope.
const ALL: &str = "*";

/// What a token may do: a list of scopes (the app's words,
/// `articles:write` say), or every scope (`*`: a token made without
/// [`NewToken::scopes`]; a session has every scope too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scopes(Vec<String>);

impl Scopes {
    /// Every scope.
    pub fn all() -> Scopes {
        Scopes(vec![ALL.to_owned()])
    }

    /// Whether these are every scope.
    pub fn is_all(&self) -> bool {
        self.0.iter().any(|s| s == ALL)
    }

    /// Whether `scope` is among these (compared exactly), or these are
    /// every scope.
    pub fn allows(&self, scope: &str) -> bool {
        self.is_all() || self.0.iter().any(|s| s == scope)
    }

    /// The scopes, as given (`*` for every scope).
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    /// As stored: space-separated (OAuth's form; a scope has no space).
    fn stored(&self) -> String {
        self.0.join(" ")
    }

    fn from_stored(text: &str) -> Scopes {
        Scopes(
            text.split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }
}

/// A list of strings: `["*"]`, `["articles:read"]`.
impl Serialize for Scopes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// An API token as stored: everything but its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiToken {
    /// The token's id (to revoke it: [`revoke_token`]).
    pub id: i64,
    /// Its user.
    pub user_id: i64,
    /// Its name, as given (`"laptop"`, `"ci"`): for the user's list.
    pub name: String,
    /// What it may do.
    pub scopes: Scopes,
    /// When it was made, in unix seconds.
    pub created_at: i64,
    /// When it stops working, in unix seconds; `None`: never.
    pub expires_at: Option<i64>,
    /// When it was last used, in unix seconds (recorded at most once a
    /// minute); `None`: never.
    pub last_used: Option<i64>,
}

/// A token just made: its secret (shown this once: the database keeps
/// only its digest) and what is stored.
#[derive(Clone)]
pub struct IssuedToken {
    /// The secret to give the client, `tern_...`: it goes in
    /// `Authorization: Bearer <secret>` (or another scheme of
    /// `AUTH_TOKEN_SCHEMES`).
    pub secret: String,
    /// The token as stored.
    pub token: ApiToken,
}

impl std::fmt::Debug for IssuedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedToken")
            .field("secret", &"<redacted>")
            .field("token", &self.token)
            .finish()
    }
}

/// A token to make for a user: a name, optionally scopes and a lifetime.
///
/// ```no_run
/// # async fn make(db: &tern_data::Database, accounts: &tern_auth::Accounts, user: &tern_auth::User) -> Result<(), tern_auth::AuthError> {
/// use std::time::Duration;
/// use tern_auth::NewToken;
///
/// let issued = NewToken::new(user, "deploy script")
///     .scopes(["articles:write"])
///     .expires_in(Duration::from_secs(7 * 86_400))
///     .create(db.pool(), accounts)
///     .await?;
/// println!("your token (shown once): {}", issued.secret);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct NewToken<'a> {
    user_id: i64,
    name: &'a str,
    scopes: Option<Vec<String>>,
    lifetime: Option<Duration>,
}

impl<'a> NewToken<'a> {
    /// A token of `user` named `name` (trimmed, 1 to 100 characters, no
    /// control characters): every scope, lasting `AUTH_TOKEN_LIFETIME`.
    pub fn new(user: &User, name: &'a str) -> Self {
        NewToken {
            user_id: user.id,
            name,
            scopes: None,
            lifetime: None,
        }
    }

    /// What the token may do: these scopes only (each 1 to 64 printable
    /// ASCII characters, no space, `"` or `\`, as OAuth's; `*` is every
    /// scope). An empty list makes a token that proves who its user is
    /// and may do nothing scoped.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// How long the token lasts (instead of `AUTH_TOKEN_LIFETIME`).
    pub fn expires_in(mut self, lifetime: Duration) -> Self {
        self.lifetime = Some(lifetime);
        self
    }

    /// Makes the token: its secret and what is stored. `400` for a bad
    /// name, scope or a zero lifetime; `409` when the user does not
    /// exist. The user's expired tokens are deleted on the way.
    pub async fn create(self, pool: &Pool, accounts: &Accounts) -> Result<IssuedToken, AuthError> {
        let name = self.name.trim();
        let n = name.chars().count();
        if n == 0 || n > MAX_TOKEN_NAME_CHARS || name.chars().any(char::is_control) {
            return Err(AuthError::BadRequest(format!(
                "a token's name has 1 to {MAX_TOKEN_NAME_CHARS} characters, none of them control \
                 characters"
            )));
        }
        let scopes = match self.scopes {
            None => Scopes::all(),
            Some(list) => {
                let mut kept: Vec<String> = Vec::new();
                for scope in list {
                    check_scope(&scope)?;
                    if !kept.contains(&scope) {
                        kept.push(scope);
                    }
                }
                if kept.iter().any(|s| s == ALL) {
                    Scopes::all()
                } else {
                    Scopes(kept)
                }
            }
        };
        let lifetime = self.lifetime.unwrap_or(accounts.token_lifetime);
        if lifetime.is_zero() {
            return Err(AuthError::BadRequest(
                "a token's lifetime is more than 0 seconds".to_owned(),
            ));
        }
        let at = now();
        let expires_at = expiry(lifetime);
        let secret = format!("{PREFIX}{}", token());
        let sql = "DELETE FROM tern_api_tokens WHERE user_id = $1 AND expires_at <= $2";
        with_pool!(pool, p => {
            tern_data::sqlx::query(sql).bind(self.user_id).bind(at).execute(p).await?.rows_affected()
        });
        let sql = "INSERT INTO tern_api_tokens \
                   (user_id, token_hash, name, scopes, created_at, expires_at) \
                   VALUES ($1, $2, $3, $4, $5, $6) RETURNING id";
        let id: i64 = with_pool!(pool, p => {
            tern_data::sqlx::query_scalar(sql)
                .bind(self.user_id)
                .bind(digest(&secret))
                .bind(name)
                .bind(scopes.stored())
                .bind(at)
                .bind(expires_at)
                .fetch_one(p)
                .await?
        });
        Ok(IssuedToken {
            secret,
            token: ApiToken {
                id,
                user_id: self.user_id,
                name: name.to_owned(),
                scopes,
                created_at: at,
                expires_at: Some(expires_at),
                last_used: None,
            },
        })
    }
}

/// The second at which a token made now with `lifetime` expires, rounded
/// up: the token lives at least `lifetime` (rounded down, a one-second
/// token made late in a second would die within milliseconds).
fn expiry(lifetime: Duration) -> i64 {
    let end = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .saturating_add(lifetime);
    let secs = end
        .as_secs()
        .saturating_add(u64::from(end.subsec_nanos() > 0));
    i64::try_from(secs).unwrap_or(i64::MAX)
}

/// RFC 6749's `scope-token`: `%x21 / %x23-5B / %x5D-7E`, here at most
/// [`MAX_SCOPE_CHARS`].
fn check_scope(scope: &str) -> Result<(), AuthError> {
    let ok = |b: u8| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b);
    if scope.is_empty() || scope.len() > MAX_SCOPE_CHARS || !scope.bytes().all(ok) {
        let shown: String = scope.chars().take(MAX_SCOPE_CHARS).collect();
        return Err(AuthError::BadRequest(format!(
            "`{shown}` is not a scope: one has 1 to {MAX_SCOPE_CHARS} printable ASCII \
             characters, without spaces, `\"` or `\\`"
        )));
    }
    Ok(())
}

type Row = (i64, i64, String, String, i64, Option<i64>, Option<i64>);

fn api_token((id, user_id, name, scopes, created_at, expires_at, last_used): Row) -> ApiToken {
    ApiToken {
        id,
        user_id,
        name,
        scopes: Scopes::from_stored(&scopes),
        created_at,
        expires_at,
        last_used,
    }
}

/// The user's tokens, oldest first, expired ones included (until the
/// user's next token is made): never their secrets, which are not kept.
pub async fn list_tokens(pool: &Pool, user_id: i64) -> Result<Vec<ApiToken>, AuthError> {
    let sql = "SELECT id, user_id, name, scopes, created_at, expires_at, last_used \
               FROM tern_api_tokens WHERE user_id = $1 ORDER BY id";
    let rows: Vec<Row> = with_pool!(pool, p => {
        tern_data::sqlx::query_as(sql).bind(user_id).fetch_all(p).await?
    });
    Ok(rows.into_iter().map(api_token).collect())
}

/// Revokes the user's token `id` at once (it is deleted); `404` when the
/// user has no token `id` (another user's included: no one revokes or
/// learns of another's tokens).
pub async fn revoke_token(pool: &Pool, user_id: i64, id: i64) -> Result<(), AuthError> {
    let sql = "DELETE FROM tern_api_tokens WHERE id = $1 AND user_id = $2";
    let deleted = with_pool!(pool, p => {
        tern_data::sqlx::query(sql).bind(id).bind(user_id).execute(p).await?.rows_affected()
    });
    if deleted == 0 {
        return Err(AuthError::NotFound(format!(
            "the user has no API token {id}"
        )));
    }
    Ok(())
}

/// Revokes every token of the user (a lost device, a new password): how
/// many there were.
pub async fn revoke_all_tokens(pool: &Pool, user_id: i64) -> Result<u64, AuthError> {
    let sql = "DELETE FROM tern_api_tokens WHERE user_id = $1";
    let deleted = with_pool!(pool, p => {
        tern_data::sqlx::query(sql).bind(user_id).execute(p).await?.rows_affected()
    });
    Ok(deleted)
}

/// The live token of `secret` and its user: `None` for an unknown,
/// revoked or expired token, or one of an inactive user. Looked up by
/// the secret's digest (the unique index), so no secret is compared.
/// Its last use is recorded at most once a minute.
pub(crate) async fn load(pool: &Pool, secret: &str) -> Result<Option<(ApiToken, User)>, AuthError> {
    // Not one of ours (or absurdly long): no lookup.
    if !secret.starts_with(PREFIX) || secret.len() > 256 {
        return Ok(None);
    }
    let sql = "SELECT t.id, t.user_id, t.name, t.scopes, t.created_at, t.expires_at, t.last_used, \
               u.username, u.email, u.is_staff, u.is_superuser, u.is_active \
               FROM tern_api_tokens t JOIN tern_users u ON u.id = t.user_id WHERE t.token_hash = $1";
    type Joined = (
        i64,
        i64,
        String,
        String,
        i64,
        Option<i64>,
        Option<i64>,
        String,
        Option<String>,
        bool,
        bool,
        bool,
    );
    let row: Option<Joined> = with_pool!(pool, p => {
        tern_data::sqlx::query_as(sql).bind(digest(secret)).fetch_optional(p).await?
    });
    let Some((
        id,
        user_id,
        name,
        scopes,
        created,
        expires,
        used,
        username,
        email,
        is_staff,
        is_superuser,
        active,
    )) = row
    else {
        return Ok(None);
    };
    let at = now();
    if !active || expires.is_some_and(|e| e <= at) {
        return Ok(None);
    }
    let mut token = api_token((id, user_id, name, scopes, created, expires, used));
    if used.is_none_or(|u| at - u >= 60) {
        let sql = "UPDATE tern_api_tokens SET last_used = $1 WHERE id = $2";
        with_pool!(pool, p => {
            tern_data::sqlx::query(sql).bind(at).bind(id).execute(p).await?.rows_affected()
        });
        token.last_used = Some(at);
    }
    let user = User {
        id: user_id,
        username,
        email,
        is_staff,
        is_superuser,
    };
    Ok(Some((token, user)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_stored_space_separated_and_star_is_all() {
        let s = Scopes(vec!["articles:read".into(), "articles:write".into()]);
        assert_eq!(s.stored(), "articles:read articles:write");
        assert_eq!(Scopes::from_stored(&s.stored()), s);
        assert!(s.allows("articles:write") && !s.allows("admin") && !s.is_all());
        assert!(Scopes::all().allows("anything"));
        assert_eq!(Scopes::from_stored(""), Scopes(vec![]));
        assert!(!Scopes::from_stored("").allows("read"));
    }

    #[test]
    fn scopes_are_oauth_scope_tokens() {
        for good in ["read", "articles:write", "a", "!#[]~"] {
            assert!(check_scope(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "two words",
            "quote\"",
            "back\\slash",
            "é",
            "tab\t",
            &"x".repeat(65),
        ] {
            assert!(check_scope(bad).is_err(), "{bad}");
        }
    }
}
