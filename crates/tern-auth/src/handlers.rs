//! The account routes: log in, log out, the current session, a new
//! password.

use http::{header, HeaderMap};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::json;
use tern::{
    doc::{Format, Operation},
    extract::{
        cookie::{Cookie, Cookies},
        ClientIp, FromRequest, FromRequestParts,
    },
    settings::Settings,
    Bytes, IntoResponse, Json, Request, Response, StatusCode,
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

/// A body read as JSON or as a form (see [`read`]).
pub(crate) struct JsonOrForm<T>(T);

/// The rules of a body's fields beyond their types (lengths, patterns),
/// for API documents: JSON Schema keywords by field name.
pub(crate) trait FieldRules {
    fn rules() -> serde_json::Value;
}

impl<T: DeserializeOwned + Send + FieldRules, S: Send + Sync> FromRequest<S> for JsonOrForm<T> {
    type Rejection = Response;

    /// Reads the request; keeps nothing of it.
    const KEEPS_REQUEST: bool = false;

    async fn from_request(req: Request, state: &S) -> Result<Self, Response> {
        let headers = req.headers().clone();
        let body = Bytes::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        read(&headers, &body)
            .map(JsonOrForm)
            .map_err(IntoResponse::into_response)
    }

    /// `T`'s fields (with their rules), as JSON or as a form.
    fn describe(op: &mut Operation) {
        op.body_of::<T>(&["application/json"], Format::Json);
        op.body_of::<T>(&["application/x-www-form-urlencoded"], Format::Urlencoded);
        if let serde_json::Value::Object(rules) = T::rules() {
            for (field, keywords) in rules {
                op.body_rules(&field, keywords);
            }
        }
        op.problem(
            "400",
            "The body does not parse (JSON, or a form with `Content-Type: \
             application/x-www-form-urlencoded`), or a field is missing.",
        );
        op.problem("413", "The body is larger than the body limit.");
    }
}

/// What a route answers, for API documents: an extractor that reads
/// nothing and always succeeds.
pub(crate) struct Answers<R>(std::marker::PhantomData<R>);

/// The answers of one account route.
pub(crate) trait RouteAnswers {
    fn describe(op: &mut Operation);
}

impl<R: RouteAnswers, S: Send + Sync> FromRequestParts<S> for Answers<R> {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        _: &mut http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Answers(std::marker::PhantomData))
    }

    fn describe(op: &mut Operation) {
        R::describe(op);
    }
}

/// The `200` of a login or a new password.
fn logged_in(op: &mut Operation) {
    op.responses.insert(
        "200".to_owned(),
        json!({
            "description": "Logged in: the session cookie is set; the body has the user and the \
                session's CSRF token (send it as `X-CSRF-Token` with later unsafe requests).",
            "content": { "application/json": { "schema": {
                "type": "object",
                "properties": {
                    "user": { "type": "object", "properties": {
                        "id": { "type": "integer" },
                        "username": { "type": "string" },
                        "email": { "type": ["string", "null"] },
                        "is_staff": { "type": "boolean" },
                        "is_superuser": { "type": "boolean" },
                    } },
                    "csrf_token": { "type": "string" },
                },
                "required": ["user", "csrf_token"],
            } } },
        }),
    );
}

/// The answers a form sent by a browser navigation gets (`crate::forms`).
fn see_other(op: &mut Operation, what: &str) {
    op.responses.insert(
        "303".to_owned(),
        json!({
            "description": format!(
                "A form sent by a browser (`Content-Type: application/x-www-form-urlencoded`, \
                 `Accept: text/html`): {what}"
            ),
            "headers": { "Location": { "schema": { "type": "string" } } },
        }),
    );
}

/// The answers of the checks of a password, and of the store behind.
fn checked(op: &mut Operation) {
    op.problem(
        "401",
        "Wrong user name or password (the same answer for both).",
    );
    op.problem(
        "403",
        "The CSRF check refused the request (a cross-site `Origin`, or a session without its \
         `X-CSRF-Token`).",
    );
    op.problem(
        "429",
        "Too many failed attempts for this account from this address; `Retry-After` says when \
         to try again.",
    );
    op.problem(
        "503",
        "The password hasher is busy; `Retry-After` says when to try again.",
    );
}

/// `POST /auth/login`.
pub(crate) struct LoginAnswers;

impl RouteAnswers for LoginAnswers {
    fn describe(op: &mut Operation) {
        logged_in(op);
        see_other(
            op,
            "to the `next` query parameter (a local path), else `/`, when logged in; back to \
             the form's page with `?error=invalid`, `throttled` or `busy` when not",
        );
        checked(op);
        op.parameters.push(json!({
            "name": "next", "in": "query", "required": false,
            "description": "where a form's `303` goes when logged in: a path on this site \
                (anything else is ignored)",
            "schema": { "type": "string" },
        }));
    }
}

/// `POST /auth/logout`.
pub(crate) struct LogoutAnswers;

impl RouteAnswers for LogoutAnswers {
    fn describe(op: &mut Operation) {
        op.responses.insert(
            "204".to_owned(),
            json!({ "description": "Logged out: the session is ended, its cookie removed." }),
        );
        see_other(op, "to the `next` query parameter (a local path), else `/`");
        op.parameters.push(json!({
            "name": "next", "in": "query", "required": false,
            "description": "where a form's `303` goes: a path on this site",
            "schema": { "type": "string" },
        }));
        op.problem("401", "Not logged in: no session to end.");
        op.problem(
            "403",
            "The CSRF check refused the request (no `X-CSRF-Token`).",
        );
    }
}

/// `GET /auth/session`.
pub(crate) struct SessionAnswers;

impl RouteAnswers for SessionAnswers {
    fn describe(op: &mut Operation) {
        logged_in(op);
        op.problem("401", "Not logged in.");
    }
}

/// `POST /auth/password`.
pub(crate) struct PasswordAnswers;

impl RouteAnswers for PasswordAnswers {
    fn describe(op: &mut Operation) {
        logged_in(op);
        checked(op);
        op.problem("401", "Not logged in, or the current password is wrong.");
        op.problem(
            "422",
            "The new password breaks the password rules (too short, too common, ...).",
        );
    }
}

#[derive(Deserialize)]
pub(crate) struct Credentials {
    username: String,
    password: String,
}

/// A username: 1 to 150 characters once trimmed, no control characters
/// (else `400`, `users::normalize`).
fn username_rules() -> serde_json::Value {
    json!({
        "minLength": 1,
        "maxLength": users::MAX_USERNAME_CHARS,
        "pattern": "^[^\\x00-\\x1f\\x7f-\\x9f]*[^\\s\\x00-\\x1f\\x7f-\\x9f][^\\x00-\\x1f\\x7f-\\x9f]*$",
    })
}

/// A password is at most `MAX_PASSWORD_BYTES` (1024) bytes (else `422`):
/// 256 characters of up to four bytes each.
const PASSWORD_CHARS: usize = crate::password::MAX_PASSWORD_BYTES / 4;

impl FieldRules for Credentials {
    fn rules() -> serde_json::Value {
        json!({
            "username": username_rules(),
            "password": { "maxLength": PASSWORD_CHARS },
        })
    }
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
#[allow(clippy::too_many_arguments)] // each is an extractor
pub(crate) async fn login(
    _: Answers<LoginAnswers>,
    Settings(accounts): Settings<Accounts>,
    Settings(passwords): Settings<Passwords>,
    Settings(db): Settings<Database>,
    client: Option<ClientIp>,
    mut cookies: Cookies,
    JsonOrForm(creds): JsonOrForm<Credentials>,
) -> Result<(Cookies, Json<LoggedIn>), AuthError> {
    let ip = address(client);
    let pool = db.pool();
    // Counted before it is evaluated: of a burst sent at once, only the
    // first `AUTH_LOGIN_FAILURES` are hashed.
    throttle::attempt(pool, &accounts, &creds.username, ip).await?;
    let user =
        users::authenticate_by(pool, &passwords, &creds.username, &creds.password, false).await?;
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
    _: Answers<LogoutAnswers>,
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
pub(crate) async fn current(_: Answers<SessionAnswers>, s: Session) -> Json<LoggedIn> {
    Json(LoggedIn {
        user: s.user,
        csrf_token: s.csrf,
    })
}

#[derive(Deserialize)]
pub(crate) struct NewPassword {
    current: String,
    new: String,
}

impl FieldRules for NewPassword {
    fn rules() -> serde_json::Value {
        json!({
            "current": { "maxLength": PASSWORD_CHARS },
            "new": {
                "minLength": crate::password::MIN_PASSWORD_CHARS,
                "maxLength": PASSWORD_CHARS,
            },
        })
    }
}

/// `POST /auth/password` with `current` and `new`: the new password,
/// every session of the user ended, and a new one for this client.
#[allow(clippy::too_many_arguments)] // each is an extractor
pub(crate) async fn change_password(
    _: Answers<PasswordAnswers>,
    Settings(accounts): Settings<Accounts>,
    Settings(passwords): Settings<Passwords>,
    Settings(db): Settings<Database>,
    client: Option<ClientIp>,
    s: Session,
    mut cookies: Cookies,
    JsonOrForm(change): JsonOrForm<NewPassword>,
) -> Result<(Cookies, Json<LoggedIn>), AuthError> {
    let ip = address(client);
    let pool = db.pool();
    throttle::attempt(pool, &accounts, &s.user.username, ip).await?;
    users::authenticate_by(pool, &passwords, &s.user.username, &change.current, false).await?;
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
