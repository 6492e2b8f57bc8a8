//! The accounts' settings.

use std::time::Duration;

use serde::Deserialize;
use tern::settings::Secret;

/// Sessions, API tokens and the login throttle: settings under the
/// prefix `auth`.
///
/// | variable | default |
/// |---|---|
/// | `AUTH_SESSION_LIFETIME` | `14d`: a session ends this long after login, whatever happens |
/// | `AUTH_SESSION_IDLE` | `1d`: or this long after its last request |
/// | `AUTH_LOGIN_FAILURES` | `10` login attempts per account and address (counted before the password is checked; a success resets the count) ... |
/// | `AUTH_LOGIN_WINDOW` | ... within `1m`, then `429` until the window ends |
/// | `AUTH_COOKIE` | `tern_session`: the session cookie's name (signed with `SECRET_KEY`) |
/// | `AUTH_STORE` | `database`: where sessions and the throttle's counts live; `redis` keeps them in Redis (the `redis` feature) |
/// | `AUTH_REDIS_URL` | the Redis of `AUTH_STORE=redis` |
/// | `AUTH_REDIS_PREFIX` | `tern`: the first part of every key, so that apps sharing a Redis keep apart |
/// | `AUTH_TOKEN_SCHEMES` | `Bearer`: the `Authorization` schemes API tokens are sent with, a comma-separated list compared without regard to case (`Token` for a Conduit client; `Bearer,Token` for both) |
/// | `AUTH_TOKEN_LIFETIME` | `30d`: how long a new API token lasts ([`NewToken::expires_in`](crate::NewToken::expires_in) sets another) |
///
/// With either store every process sees the same sessions and counts. In
/// Redis a session keeps its user's name and staff flag as they were at
/// login: end the user's sessions ([`end_all_sessions`](crate::end_all_sessions))
/// when an account changes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawAccounts")]
pub struct Accounts {
    pub(crate) session_lifetime: Duration,
    pub(crate) session_idle: Duration,
    pub(crate) login_failures: u32,
    pub(crate) login_window: Duration,
    pub(crate) cookie: String,
    pub(crate) store: Store,
    pub(crate) token_schemes: Vec<String>,
    pub(crate) token_lifetime: Duration,
}

/// Where sessions and the throttle's counts live.
#[derive(Debug)]
pub(crate) enum Store {
    /// The app's database.
    Database,
    /// Redis.
    #[cfg(feature = "redis")]
    Redis(Box<crate::redis_store::RedisStore>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccounts {
    #[serde(default = "lifetime", deserialize_with = "tern::settings::duration")]
    session_lifetime: Duration,
    #[serde(default = "idle", deserialize_with = "tern::settings::duration")]
    session_idle: Duration,
    #[serde(default = "failures")]
    login_failures: u32,
    #[serde(default = "window", deserialize_with = "tern::settings::duration")]
    login_window: Duration,
    #[serde(default = "cookie")]
    cookie: String,
    #[serde(default)]
    store: Option<String>,
    #[serde(default)]
    redis_url: Option<Secret>,
    #[serde(default)]
    redis_prefix: Option<String>,
    #[serde(default)]
    token_schemes: Option<String>,
    #[serde(
        default = "token_lifetime",
        deserialize_with = "tern::settings::duration"
    )]
    token_lifetime: Duration,
}

impl TryFrom<RawAccounts> for Accounts {
    type Error = String;

    fn try_from(raw: RawAccounts) -> Result<Self, String> {
        let store = match raw.store.as_deref().unwrap_or("database") {
            "database" => {
                if raw.redis_url.is_some() {
                    return Err("AUTH_REDIS_URL is set but AUTH_STORE is not `redis`".to_owned());
                }
                Store::Database
            }
            "redis" => redis_store(raw.redis_url, raw.redis_prefix.as_deref().unwrap_or("tern"))?,
            other => {
                return Err(format!(
                    "AUTH_STORE is `{other}`: it is `database` (the default) or `redis`"
                ))
            }
        };
        let token_schemes = match raw.token_schemes.as_deref() {
            Some(list) => schemes(list)?,
            None => token_schemes(),
        };
        if raw.token_lifetime.is_zero() {
            return Err("AUTH_TOKEN_LIFETIME is 0: a token would be expired when made".to_owned());
        }
        Ok(Accounts {
            session_lifetime: raw.session_lifetime,
            session_idle: raw.session_idle,
            login_failures: raw.login_failures,
            login_window: raw.login_window,
            cookie: raw.cookie,
            store,
            token_schemes,
            token_lifetime: raw.token_lifetime,
        })
    }
}

/// `AUTH_TOKEN_SCHEMES`: comma-separated authentication schemes, each an
/// RFC 9110 token (`Bearer`, `Token`), none twice (without regard to
/// case).
fn schemes(list: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for scheme in list.split(',').map(str::trim) {
        let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if scheme.is_empty() || !scheme.bytes().all(tchar) {
            return Err(format!(
                "AUTH_TOKEN_SCHEMES is `{list}`: it is a comma-separated list of \
                 authentication schemes, like `Bearer` or `Bearer,Token`"
            ));
        }
        if out.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
            return Err(format!(
                "AUTH_TOKEN_SCHEMES names `{scheme}` twice (schemes are compared without regard to case)"
            ));
        }
        out.push(scheme.to_owned());
    }
    Ok(out)
}

#[cfg(feature = "redis")]
fn redis_store(url: Option<Secret>, prefix: &str) -> Result<Store, String> {
    let url = url.ok_or("AUTH_STORE is `redis`: set AUTH_REDIS_URL")?;
    crate::redis_store::RedisStore::new(url.expose(), prefix)
        .map(|r| Store::Redis(Box::new(r)))
        .map_err(|e| format!("AUTH_REDIS_URL: {e}"))
}

#[cfg(not(feature = "redis"))]
fn redis_store(_: Option<Secret>, _: &str) -> Result<Store, String> {
    Err("AUTH_STORE is `redis`, but tern-auth was built without its `redis` feature".to_owned())
}

fn lifetime() -> Duration {
    Duration::from_secs(14 * 86_400)
}
fn idle() -> Duration {
    Duration::from_secs(86_400)
}
fn failures() -> u32 {
    10
}
fn window() -> Duration {
    Duration::from_secs(60)
}
fn cookie() -> String {
    "tern_session".to_owned()
}
fn token_schemes() -> Vec<String> {
    vec!["Bearer".to_owned()]
}
fn token_lifetime() -> Duration {
    Duration::from_secs(30 * 86_400)
}

impl Default for Accounts {
    fn default() -> Self {
        Accounts {
            session_lifetime: lifetime(),
            session_idle: idle(),
            login_failures: failures(),
            login_window: window(),
            cookie: cookie(),
            store: Store::Database,
            token_schemes: token_schemes(),
            token_lifetime: token_lifetime(),
        }
    }
}

/// Password hashing: settings under the prefix `password`.
///
/// `PASSWORD_PEPPER`, optional: a secret mixed into every hash (Argon2's
/// secret input), kept out of the database, so that a stolen database
/// alone cannot be attacked offline. Once set, it must stay: hashes made
/// with it verify only with it. In production it must be a real secret
/// (16 bytes or more, not an example value).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Passwords {
    #[serde(default)]
    pub(crate) pepper: Option<Secret>,
}
