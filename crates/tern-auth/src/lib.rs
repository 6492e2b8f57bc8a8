//! Accounts for Tern: users with Argon2id passwords, server-side
//! sessions in a signed cookie, CSRF checks, and a login throttle, kept
//! in the app's database (or, `AUTH_STORE=redis`, sessions and counts in
//! Redis) so that every process shares them.
//!
//! ```no_run
//! use tern::{App, routing::get};
//! use tern_auth::{Staff, User};
//! use tern_data::Database;
//!
//! async fn me(user: User) -> String { format!("hello {}", user.username) }
//! async fn admin(Staff(user): Staff) -> String { format!("{} is staff", user.username) }
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = tern::Config::from_env()?; // SECRET_KEY signs the session cookie
//! let app = App::new()
//!     .settings::<Database>("database")
//!     .route("/me", get(me))
//!     .route("/admin", get(admin));
//! // POST /auth/login, POST /auth/logout, GET /auth/session,
//! // POST /auth/password; the CSRF check on every route.
//! let service = tern_auth::install(app).build_with(config)?;
//! let db = service.settings::<Database>().expect("loaded");
//! db.migrate(&tern_auth::MIGRATIONS).await?; // its tables, its own record
//! let passwords = service.settings::<tern_auth::Passwords>().expect("loaded");
//! tern_auth::check_pepper(db.pool(), &passwords).await?; // hashes that need a missing pepper
//! tern::Server::new(service).serve().await?;
//! # Ok(()) }
//! ```
//!
//! - **Users**: a username kept as given and compared without regard
//!   to case (`Ada` logs in as `ada`; no one else can take `ADA`), an
//!   optional email, unique the same way ([`NewUser`], [`create_user`]);
//!   [`password::authenticate`] checks a username or an email and a
//!   password for an app that takes logins its own way, [`login`] the
//!   same behind the throttle; [`find_user`] by name, [`UserChange`] to
//!   rename or change the email.
//! - **Passwords**: Argon2id at OWASP's minimum (19 MiB, 2 passes), a
//!   pepper from `PASSWORD_PEPPER` if set (required from then on:
//!   [`check_pepper`] refuses a start without it), rehashed at login when
//!   the parameters or the pepper change; at most 1,024 bytes (refused before hashing).
//!   Bounded memory: one hasher per core, each reusing the 19 MiB of
//!   one hash ([`password::concurrency`]), a queue with a deadline
//!   beyond them, then `503` with `Retry-After`. Unknown users are checked
//!   against a decoy hash: the same answer and the same time as a wrong
//!   password. The same hashing for the app's own use: [`password`]'s
//!   `hash`, `verify` (with whether to rehash) and `rehash`.
//! - **Sessions**: a 256-bit random token in a signed, `HttpOnly`,
//!   `SameSite=Lax` cookie (`Secure` in production); the database keeps
//!   its SHA-256 digest, the user, a CSRF token, and ends it after
//!   `AUTH_SESSION_LIFETIME` or `AUTH_SESSION_IDLE`. A login replaces any
//!   session the client had (no fixation); logout deletes it; a new
//!   password ends all of the user's sessions.
//! - **API tokens**: opaque `tern_...` secrets for clients that send
//!   `Authorization: Bearer` (the schemes of `AUTH_TOKEN_SCHEMES`)
//!   instead of a cookie, kept as digests, with names, scopes, an expiry
//!   and a last use ([`NewToken`], [`list_tokens`], [`revoke_token`]);
//!   [`Authenticated`] takes a token or a session.
//! - **CSRF**: see [`csrf()`].
//! - **Pages without scripts**: a browser's form (`Accept: text/html`)
//!   posted to `/auth/login` or `/auth/logout` gets a `303` to the `next`
//!   query parameter (a path on this site, else `/`), or for a failed
//!   login back to the form's page with `?error=invalid`, `throttled` or
//!   `busy`: a login page works under a CSP that allows no inline script
//!   (`<form method="post" action="/auth/login?next=/notes">`).
//! - **Throttle**: `AUTH_LOGIN_FAILURES` attempts (10) per account and
//!   client address (`ClientIp`, so trusted proxies apply) within
//!   `AUTH_LOGIN_WINDOW` (1 minute), then `429` with `Retry-After`. Each
//!   attempt is counted atomically before its password is verified, so a
//!   parallel burst gets no more; a success resets the count.

mod commands;
mod csrf;
mod error;
mod extract;
mod forms;
mod handlers;
mod hasher_pool;
mod metrics;
pub mod password;
mod rate_limit;
#[cfg(feature = "redis")]
mod redis_store;
mod session;
mod settings;
mod throttle;
mod tokens;
mod users;

pub use csrf::{csrf, FIELD as CSRF_FIELD, HEADER as CSRF_HEADER};
pub use error::AuthError;
pub use extract::{Authenticated, Credential, Staff};
pub use handlers::LoggedIn;
pub use rate_limit::RateLimit;
pub use session::{delete_all as end_all_sessions, Session};
pub use settings::{Accounts, Passwords};
pub use tokens::{
    list_tokens, revoke_all_tokens, revoke_token, ApiToken, IssuedToken, NewToken, Scopes,
    MAX_SCOPE_CHARS, MAX_TOKEN_NAME_CHARS,
};
pub use users::{
    check_pepper, create_user, find_user, login, set_password, NewUser, User, UserChange,
    MAX_EMAIL_CHARS, MAX_USERNAME_CHARS,
};

use tern::{
    middleware::{from_fn, from_fn_with_state},
    routing::{get, post},
    App,
};
use tern_data::Migrations;

/// The accounts' tables (`tern_users`, `tern_sessions`,
/// `tern_login_failures`, `tern_api_tokens`), recorded in `_tern_auth_migrations` so that
/// their versions never meet the app's.
pub static MIGRATIONS: Migrations =
    tern_data::migrations!("migrations").with_table("_tern_auth_migrations");

/// Adds accounts to `app`: the settings ([`Accounts`] under `auth`,
/// [`Passwords`] under `password`), the routes `POST /auth/login`,
/// `POST /auth/logout`, `GET /auth/session`, `POST /auth/password`, and
/// the [`csrf()`] check after routing on every route; on the app's
/// command line, `createsuperuser` (a superuser) and the pepper's
/// line of `check`; at start, [`check_pepper`]. In the app's metrics:
/// `tern_auth_logins_total{result="ok"|"failed"|"throttled"|"busy"}`
/// and the refusals `tern_rejections_total{reason="csrf"|"throttle"}`. The app loads its [`tern_data::Database`] itself
/// ([`tern_data::install`], with [`MIGRATIONS`] among its migrations).
pub fn install<S: Clone + Send + Sync + 'static>(app: App<S>) -> App<S> {
    let meter = metrics::AuthMeter::register(app.metrics());
    app.settings::<Accounts>("auth")
        .settings::<Passwords>("password")
        .route(
            "/auth/login",
            post(handlers::login)
                .layer(from_fn_with_state(meter.clone(), metrics::login))
                .layer(from_fn(forms::login)),
        )
        .route(
            "/auth/logout",
            post(handlers::logout).layer(from_fn(forms::logout)),
        )
        .route("/auth/session", get(handlers::current))
        .route(
            "/auth/password",
            post(handlers::change_password)
                .layer(from_fn_with_state(meter.clone(), metrics::password)),
        )
        .route_layer(from_fn_with_state(meter, csrf::csrf_counted))
        .command(commands::createsuperuser())
        .check(commands::check)
        .on_start(commands::pepper_at_start)
}
