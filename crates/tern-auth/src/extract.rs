//! The current user, for handlers: `User`, `Option<User>`, `Staff`,
//! `Session` (a session cookie only), and `Authenticated` (an API token
//! or a session cookie).
//!
//! `Option<User>` (and `Option<Session>`, `Option<Staff>`) is `None` for
//! a request with no live session: no session cookie, one whose
//! signature does not verify, or one whose session has ended (expired,
//! logged out, an inactive user). A session store that fails (the
//! database or Redis unreachable) is its `500`/`503`, never `None`: a
//! page that works either way must not show a logged-in user the
//! logged-out page because the store had a hiccup.
//!
//! A tampered or foreign cookie reads as no session rather than a `400`
//! on purpose: a cookie signed with a rotated `SECRET_KEY`, or left by
//! another app on the same host, is what a browser legitimately holds,
//! and answering every page with an error until the user clears their
//! cookies would lock them out. It cannot be used as a session either
//! way, and `User` (required) answers it `401`.
//!
//! An `Authorization` header is another matter: a client sent it on
//! purpose. For [`Authenticated`], a header of a scheme of
//! `AUTH_TOKEN_SCHEMES` decides alone: a valid token is the request's
//! credential, anything else in it is a `401` (`WWW-Authenticate: <scheme>
//! error="invalid_token"`), never a fall-back to the cookie. A header of
//! another scheme (`Basic`) is not looked at.

use http::request::Parts;
use tern::{extract::cookie::Cookies, settings::Settings, IntoResponse, Response};
use tern_core::extract::{FromRequestParts, OptionalFromRequestParts};
use tern_data::Database;

use crate::{session, tokens, Accounts, ApiToken, AuthError, Session, User};

/// The session found for a request, kept so that the CSRF check and the
/// extractors look it up once.
#[derive(Clone)]
struct Resolved(Option<Session>);

/// Whether a session or an API token was looked up for this request
/// already (and is remembered in `extensions`).
pub(crate) fn remembered(extensions: &http::Extensions) -> bool {
    extensions.get::<Resolved>().is_some() || extensions.get::<ResolvedToken>().is_some()
}

/// The request's live session, if any (its signed cookie, then the
/// database).
pub(crate) async fn current(parts: &mut Parts) -> Result<Option<Session>, AuthError> {
    if let Some(Resolved(s)) = parts.extensions.get::<Resolved>() {
        return Ok(s.clone());
    }
    // No cookie at all: no session, and nothing to look up or remember.
    if !parts.headers.contains_key(http::header::COOKIE) {
        return Ok(None);
    }
    let Settings(accounts) = Settings::<Accounts>::from_request_parts(parts, &())
        .await
        .map_err(not_installed)?;
    let cookies = Cookies::from_request_parts(parts, &())
        .await
        .map_err(|e| AuthError::Internal(e.to_string()))?;
    let found = match cookies.get_signed(&accounts.cookie) {
        Some(cookie) => {
            let Settings(db) = Settings::<Database>::from_request_parts(parts, &())
                .await
                .map_err(not_installed)?;
            session::load(db.pool(), &accounts, cookie.value()).await?
        }
        None => None,
    };
    parts.extensions.insert(Resolved(found.clone()));
    Ok(found)
}

fn not_installed<E>(_: E) -> AuthError {
    AuthError::Internal(
        "the app has no accounts: call tern_auth::install(app) (and load tern_data::Database)"
            .to_owned(),
    )
}

/// What the request's `Authorization` says, as far as API tokens go.
#[derive(Clone)]
pub(crate) enum ByToken {
    /// No `Authorization` of a token scheme.
    Absent,
    /// A live token.
    Valid(Box<Authenticated>),
    /// A token scheme (as configured) with no live token.
    Invalid(String),
}

/// The token resolution, kept so that the CSRF check and the extractors
/// look it up once.
#[derive(Clone)]
struct ResolvedToken(ByToken);

/// The request's `Authorization` of a scheme of `AUTH_TOKEN_SCHEMES`:
/// the scheme (as configured) and the credentials, if there is exactly
/// one; `Err(scheme)` for one that cannot be a token (empty, not ASCII)
/// or for two.
fn presented(parts: &Parts, schemes: &[String]) -> Result<Option<(String, String)>, String> {
    let mut found: Option<(String, String)> = None;
    for value in parts.headers.get_all(http::header::AUTHORIZATION) {
        let bytes = value.as_bytes();
        let (scheme, rest) = match bytes.iter().position(|b| *b == b' ') {
            Some(i) => (&bytes[..i], &bytes[i + 1..]),
            None => (bytes, &b""[..]),
        };
        let Some(ours) = schemes
            .iter()
            .find(|s| s.as_bytes().eq_ignore_ascii_case(scheme))
        else {
            continue;
        };
        let credentials = std::str::from_utf8(rest).map(str::trim).unwrap_or("");
        if found.is_some() || credentials.is_empty() || !credentials.is_ascii() {
            return Err(ours.clone());
        }
        found = Some((ours.clone(), credentials.to_owned()));
    }
    Ok(found)
}

/// The request's API token, if it sent one: looked up once per request.
pub(crate) async fn by_token(parts: &mut Parts) -> Result<ByToken, AuthError> {
    if let Some(ResolvedToken(t)) = parts.extensions.get::<ResolvedToken>() {
        return Ok(t.clone());
    }
    // No header at all: nothing to look up or remember.
    if !parts.headers.contains_key(http::header::AUTHORIZATION) {
        return Ok(ByToken::Absent);
    }
    let Settings(accounts) = Settings::<Accounts>::from_request_parts(parts, &())
        .await
        .map_err(not_installed)?;
    let resolved = match presented(parts, &accounts.token_schemes) {
        Ok(None) => ByToken::Absent,
        Err(scheme) => ByToken::Invalid(scheme),
        Ok(Some((scheme, secret))) => {
            let Settings(db) = Settings::<Database>::from_request_parts(parts, &())
                .await
                .map_err(not_installed)?;
            match tokens::load(db.pool(), &secret).await? {
                Some((token, user)) => ByToken::Valid(Box::new(Authenticated {
                    user,
                    by: Credential::Token(token),
                    presented: Some(secret),
                })),
                None => ByToken::Invalid(scheme),
            }
        }
    };
    parts.extensions.insert(ResolvedToken(resolved.clone()));
    Ok(resolved)
}

/// An authenticated request's user and how it was authenticated: an API
/// token (`Authorization: Bearer tern_...`, in a scheme of
/// `AUTH_TOKEN_SCHEMES`) or a session cookie.
///
/// - A token of a configured scheme decides alone: unknown, revoked,
///   expired, or of an inactive user, it is a `401` with
///   `WWW-Authenticate: <scheme> error="invalid_token"`, even when a
///   good session cookie comes with it.
/// - Else the session cookie; neither: `401` (`WWW-Authenticate:
///   <scheme>`).
/// - `Option<Authenticated>` is `None` only without credentials: no
///   token header and no live session (a stale cookie is none, as for
///   [`User`]); a bad token is still its `401`, a store error its
///   `500`/`503`.
///
/// A request a valid token authenticated needs no CSRF token (no cookie
/// speaks for it), even when a session cookie comes with it; one with a
/// bad token is checked like any other. [`User`], [`Session`] and
/// [`Staff`] stay cookie-only.
///
/// ```no_run
/// use tern_auth::Authenticated;
///
/// async fn me(auth: Authenticated) -> String {
///     format!("{} (token: {})", auth.user.username, auth.token().is_some())
/// }
///
/// async fn publish(auth: Authenticated) -> Result<&'static str, tern_auth::AuthError> {
///     auth.require_scope("articles:write")?; // 403 for a token without it
///     Ok("published")
/// }
/// ```
#[derive(Clone)]
pub struct Authenticated {
    /// The user.
    pub user: User,
    /// What authenticated the request.
    pub by: Credential,
    presented: Option<String>,
}

/// What authenticated a request: a session cookie or an API token.
#[derive(Debug, Clone)]
pub enum Credential {
    /// A session cookie: every scope.
    Session(Session),
    /// An API token: its scopes.
    Token(ApiToken),
}

impl std::fmt::Debug for Authenticated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticated")
            .field("user", &self.user)
            .field("by", &self.by)
            .finish_non_exhaustive()
    }
}

impl Authenticated {
    /// The API token's secret as the request presented it (to echo it
    /// back, as Conduit's `GET /user` does); `None` for a session.
    pub fn token(&self) -> Option<&str> {
        self.presented.as_deref()
    }

    /// Whether the request may do `scope`: a session may do anything; a
    /// token what its [`Scopes`](crate::Scopes) allow.
    pub fn has_scope(&self, scope: &str) -> bool {
        match &self.by {
            Credential::Session(_) => true,
            Credential::Token(t) => t.scopes.allows(scope),
        }
    }

    /// [`has_scope`](Self::has_scope), else `403` naming the scope.
    pub fn require_scope(&self, scope: &str) -> Result<(), AuthError> {
        if self.has_scope(scope) {
            Ok(())
        } else {
            Err(AuthError::MissingScope(scope.to_owned()))
        }
    }
}

/// The request's credentials: a token (which decides alone), else a
/// live session, else none.
async fn authenticated(parts: &mut Parts) -> Result<Option<Authenticated>, AuthError> {
    match by_token(parts).await? {
        ByToken::Valid(auth) => Ok(Some(*auth)),
        ByToken::Invalid(scheme) => Err(AuthError::InvalidToken(scheme)),
        ByToken::Absent => Ok(current(parts).await?.map(|s| Authenticated {
            user: s.user.clone(),
            by: Credential::Session(s),
            presented: None,
        })),
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Authenticated {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        match authenticated(parts).await {
            Ok(Some(auth)) => Ok(auth),
            Ok(None) => {
                let Settings(accounts) = Settings::<Accounts>::from_request_parts(parts, &())
                    .await
                    .map_err(|e| not_installed(e).into_response())?;
                let scheme = accounts.token_schemes.first().cloned().unwrap_or_default();
                Err(AuthError::NoCredentials(scheme).into_response())
            }
            Err(e) => Err(e.into_response()),
        }
    }
}

/// `None` without credentials; a bad token is its `401`, a store error
/// its `500`/`503`.
impl<S: Send + Sync> OptionalFromRequestParts<S> for Authenticated {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Option<Self>, Response> {
        authenticated(parts)
            .await
            .map_err(IntoResponse::into_response)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Session {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        current(parts)
            .await
            .map_err(IntoResponse::into_response)?
            .ok_or_else(|| AuthError::NotLoggedIn.into_response())
    }
}

/// `None` without a live session; a store error is its answer (`500`,
/// `503`), not `None`.
impl<S: Send + Sync> OptionalFromRequestParts<S> for Session {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Option<Self>, Response> {
        current(parts).await.map_err(IntoResponse::into_response)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for User {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        <Session as FromRequestParts<S>>::from_request_parts(parts, state)
            .await
            .map(|s| s.user)
    }
}

/// `None` without a live session, as `Option<Session>`.
impl<S: Send + Sync> OptionalFromRequestParts<S> for User {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Option<Self>, Response> {
        <Session as OptionalFromRequestParts<S>>::from_request_parts(parts, state)
            .await
            .map(|s| s.map(|s| s.user))
    }
}

/// A logged-in staff user: `401` without a session, `403` for a user
/// who is not staff. `Option<Staff>` is `None` for both: there is no
/// staff user (a page with extra links for staff); a store error is
/// still its `500`/`503`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staff(pub User);

impl<S: Send + Sync> FromRequestParts<S> for Staff {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let user = <User as FromRequestParts<S>>::from_request_parts(parts, state).await?;
        if user.is_staff {
            Ok(Staff(user))
        } else {
            Err(AuthError::NotStaff.into_response())
        }
    }
}

impl<S: Send + Sync> OptionalFromRequestParts<S> for Staff {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Option<Self>, Response> {
        let user = <User as OptionalFromRequestParts<S>>::from_request_parts(parts, state).await?;
        Ok(user.filter(|u| u.is_staff).map(Staff))
    }
}
