//! What can go wrong with accounts, and the answer each gets.

use std::fmt;

use tern::{IntoResponse, Problem, Response, StatusCode};
use tern_data::DataError;

/// An accounts error, answered as problem+json.
#[derive(Debug)]
pub enum AuthError {
    /// Unknown user, wrong password or an inactive account: one answer
    /// for all three (`401`), so that it does not say which.
    BadCredentials,
    /// Too many failed logins for this account from this address (`429`,
    /// `Retry-After` in seconds).
    Throttled(u64),
    /// No valid session (`401`).
    NotLoggedIn,
    /// Logged in, but not staff (`403`).
    NotStaff,
    /// Neither an API token nor a session ([`Authenticated`](crate::Authenticated)):
    /// `401` with `WWW-Authenticate: <scheme>`, the first of
    /// `AUTH_TOKEN_SCHEMES`.
    NoCredentials(String),
    /// An API token in this scheme that is unknown, revoked, expired or
    /// of an inactive user: `401` with `WWW-Authenticate: <scheme>
    /// error="invalid_token"` (RFC 6750).
    InvalidToken(String),
    /// The API token lacks this scope (`403`).
    MissingScope(String),
    /// No such thing of this user (`404`): what was looked for.
    NotFound(String),
    /// The CSRF check failed (`403`): what was missing or wrong.
    Csrf(String),
    /// A new password breaks a rule (`422`), or a password is longer
    /// than a login accepts (`413`-like refusal before hashing: `422`).
    Password(String),
    /// A body that is not the expected form or JSON (`400`).
    BadRequest(String),
    /// The database's error.
    Data(DataError),
    /// The session store (Redis) cannot be reached, or the password
    /// hashers are busy (their queue is full, or a login waited past its
    /// deadline): `503` with `Retry-After`.
    Unavailable(String),
    /// Hashing failed (`500`).
    Internal(String),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::BadCredentials => f.write_str("wrong username or password"),
            AuthError::Throttled(s) => write!(
                f,
                "too many failed logins for this account from this address: try again in {s} s"
            ),
            AuthError::NotLoggedIn => f.write_str("log in first: this needs a session"),
            AuthError::NotStaff => f.write_str("this needs a staff account"),
            AuthError::NoCredentials(scheme) => write!(
                f,
                "this needs an API token (`Authorization: {scheme} <token>`) or a session"
            ),
            AuthError::InvalidToken(scheme) => write!(
                f,
                "the {scheme} token is not valid: unknown, revoked or expired"
            ),
            AuthError::MissingScope(scope) => {
                write!(f, "the API token does not have the scope `{scope}`")
            }
            AuthError::Csrf(why)
            | AuthError::Password(why)
            | AuthError::BadRequest(why)
            | AuthError::NotFound(why)
            | AuthError::Unavailable(why) => f.write_str(why),
            AuthError::Data(e) => write!(f, "{e}"),
            AuthError::Internal(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for AuthError {}

impl From<DataError> for AuthError {
    fn from(e: DataError) -> Self {
        AuthError::Data(e)
    }
}

impl From<tern_data::sqlx::Error> for AuthError {
    fn from(e: tern_data::sqlx::Error) -> Self {
        AuthError::Data(DataError::Sqlx(e))
    }
}

impl IntoResponse for AuthError {
    fn into_response(self) -> Response {
        let status = match &self {
            AuthError::BadCredentials
            | AuthError::NotLoggedIn
            | AuthError::NoCredentials(_)
            | AuthError::InvalidToken(_) => StatusCode::UNAUTHORIZED,
            AuthError::Throttled(_) => StatusCode::TOO_MANY_REQUESTS,
            AuthError::NotStaff | AuthError::Csrf(_) | AuthError::MissingScope(_) => {
                StatusCode::FORBIDDEN
            }
            AuthError::NotFound(_) => StatusCode::NOT_FOUND,
            AuthError::Password(_) => StatusCode::UNPROCESSABLE_ENTITY,
            AuthError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AuthError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            AuthError::Data(_) => return self.into_data().into_response(),
            AuthError::Internal(e) => {
                tracing::error!(error = %e, "accounts");
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        // An internal error's reason goes to the log, not to the client.
        let detail = match &self {
            AuthError::Internal(_) => {
                "an internal error (the server's log has the reason)".to_owned()
            }
            _ => self.to_string(),
        };
        let mut res = Problem::new(status).with_detail(detail).into_response();
        let challenge = match &self {
            AuthError::NoCredentials(scheme) => Some(scheme.clone()),
            AuthError::InvalidToken(scheme) => Some(format!("{scheme} error=\"invalid_token\"")),
            _ => None,
        };
        if let Some(v) = challenge.and_then(|c| http::HeaderValue::from_str(&c).ok()) {
            res.headers_mut().insert(http::header::WWW_AUTHENTICATE, v);
        }
        let retry = match self {
            AuthError::Throttled(seconds) => Some(seconds.max(1)),
            AuthError::Unavailable(_) => Some(1),
            _ => None,
        };
        if let Some(seconds) = retry {
            if let Ok(v) = http::HeaderValue::from_str(&seconds.to_string()) {
                res.headers_mut().insert(http::header::RETRY_AFTER, v);
            }
        }
        res
    }
}

impl AuthError {
    fn into_data(self) -> DataError {
        match self {
            AuthError::Data(e) => e,
            other => DataError::Config(other.to_string()),
        }
    }
}
