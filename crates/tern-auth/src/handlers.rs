//! The account routes: log in, log out, the current session, a new
//! password.

use http::{header, HeaderMap};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use tern::{
    extract::{
        cookie::{Cookie, Cookies},
        ClientIp,
    },
    settings::Settings,
    Bytes, Json, StatusCode,
};
use tern_data::Database;

use crate::{session, throttle, users, Accounts, AuthError, Passwords, Session, User};

/// A body as JSON or as a form, by its `Content-Type`.
fn read<T: DeserializeOwned>(headers: &HeaderMap, body: &[u8]) -> Result<T, AuthError> {
    let form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if form {
        serde_urlencoded::from_bytes(body)
            .map_err(|e| AuthError::BadRequest(format!("the form does not parse: {e}")))
    } else {
        serde_json::from_slice(body)
            .map_err(|e| AuthError::BadRequest(format!("the JSON body does not parse: {e}")))
    }
}

#[derive(Deserialize)]
struct Credentials {
    username: String,
    password: String,
}

/// What a login or a new password answers: the user and the session's
/// CSRF token (for scripts: the `X-CSRF-Token` of later requests).
#[derive(Debug, Serialize)]
pub struct LoggedIn {
    /// The user.
    pub user: User,
    /// The session's CSRF token.
    pub csrf_token: String,
}

/// The client's address; without one (an in-process test client), the
/// unspecified address: the throttle then counts by account alone.
fn address(client: Option<ClientIp>) -> std::net::IpAddr {
    client.map_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), |c| {
        c.0
    })
}

fn set_cookie(cookies: &mut Cookies, accounts: &Accounts, token: &str) {
    let mut cookie = Cookie::new(accounts.cookie.clone(), token.to_owned());
    if let Ok(age) = i64::try_from(accounts.session_lifetime.as_secs()) {
        cookie.set_max_age(tern::extract::cookie::time::Duration::seconds(age));
    }
    cookies.add_signed(cookie);
}

/// `POST /auth/login` with `username` and `password` (JSON or a form):
/// a new session (a session cookie sent with the request is ended, never
/// kept: no fixation), `401` for a wrong name or password alike, `429`
/// after too many attempts for the account from this address (counted
/// before the password is checked; a success resets the count).
pub(crate) async fn login(
    Settings(accounts): Settings<Accounts>,
    Settings(passwords): Settings<Passwords>,
    Settings(db): Settings<Database>,
    client: Option<ClientIp>,
    mut cookies: Cookies,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(Cookies, Json<LoggedIn>), AuthError> {
    let ip = address(client);
    let creds: Credentials = read(&headers, &body)?;
    let pool = db.pool();
    // Counted before it is evaluated: of a burst sent at once, only the
    // first `AUTH_LOGIN_FAILURES` are hashed.
    throttle::attempt(pool, &accounts, &creds.username, ip).await?;
    let user = users::authenticate(pool, &passwords, &creds.username, &creds.password).await?;
    throttle::succeeded(pool, &accounts, &creds.username, ip).await?;
    if let Some(old) = cookies.get_signed(&accounts.cookie) {
        session::delete(pool, &accounts, old.value()).await?;
    }
    let s = session::create(pool, &accounts, &user).await?;
    set_cookie(&mut cookies, &accounts, &s.token);
    Ok((
        cookies,
        Json(LoggedIn {
            user,
            csrf_token: s.csrf,
        }),
    ))
}

/// `POST /auth/logout`: ends the session, here and in every process.
pub(crate) async fn logout(
    Settings(accounts): Settings<Accounts>,
    Settings(db): Settings<Database>,
    s: Session,
    mut cookies: Cookies,
) -> Result<(Cookies, StatusCode), AuthError> {
    session::delete(db.pool(), &accounts, &s.token).await?;
    cookies.remove(accounts.cookie.clone());
    Ok((cookies, StatusCode::NO_CONTENT))
}

/// `GET /auth/session`: the current user and the session's CSRF token.
pub(crate) async fn current(s: Session) -> Json<LoggedIn> {
    Json(LoggedIn {
        user: s.user,
        csrf_token: s.csrf,
    })
}

#[derive(Deserialize)]
struct NewPassword {
    current: String,
    new: String,
}

/// `POST /auth/password` with `current` and `new`: the new password,
/// every session of the user ended, and a new one for this client.
#[allow(clippy::too_many_arguments)] // each is an extractor
pub(crate) async fn change_password(
    Settings(accounts): Settings<Accounts>,
    Settings(passwords): Settings<Passwords>,
    Settings(db): Settings<Database>,
    client: Option<ClientIp>,
    s: Session,
    mut cookies: Cookies,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(Cookies, Json<LoggedIn>), AuthError> {
    let ip = address(client);
    let change: NewPassword = read(&headers, &body)?;
    let pool = db.pool();
    throttle::attempt(pool, &accounts, &s.user.username, ip).await?;
    users::authenticate(pool, &passwords, &s.user.username, &change.current).await?;
    throttle::succeeded(pool, &accounts, &s.user.username, ip).await?;
    users::set_password(pool, &accounts, &passwords, s.user.id, &change.new).await?;
    let fresh = session::create(pool, &accounts, &s.user).await?;
    set_cookie(&mut cookies, &accounts, &fresh.token);
    Ok((
        cookies,
        Json(LoggedIn {
            user: s.user,
            csrf_token: fresh.csrf,
        }),
    ))
}
