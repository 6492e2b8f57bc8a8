//! The accounts' settings.

use std::time::Duration;

use serde::Deserialize;
use tern::settings::Secret;

/// Sessions and the login throttle: settings under the prefix `auth`.
///
/// | variable | default |
/// |---|---|
/// | `AUTH_SESSION_LIFETIME` | `14d`: a session ends this long after login, whatever happens |
/// | `AUTH_SESSION_IDLE` | `1d`: or this long after its last request |
/// | `AUTH_LOGIN_FAILURES` | `10` failed logins per account and address ... |
/// | `AUTH_LOGIN_WINDOW` | ... within `1m`, then `429` until the window ends |
/// | `AUTH_COOKIE` | `tern_session`: the session cookie's name (signed with `SECRET_KEY`) |
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Accounts {
    #[serde(default = "lifetime", deserialize_with = "tern::settings::duration")]
    pub(crate) session_lifetime: Duration,
    #[serde(default = "idle", deserialize_with = "tern::settings::duration")]
    pub(crate) session_idle: Duration,
    #[serde(default = "failures")]
    pub(crate) login_failures: u32,
    #[serde(default = "window", deserialize_with = "tern::settings::duration")]
    pub(crate) login_window: Duration,
    #[serde(default = "cookie")]
    pub(crate) cookie: String,
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

impl Default for Accounts {
    fn default() -> Self {
        Accounts {
            session_lifetime: lifetime(),
            session_idle: idle(),
            login_failures: failures(),
            login_window: window(),
            cookie: cookie(),
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
