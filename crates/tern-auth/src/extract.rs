//! The current user, for handlers: `User`, `Option<User>`, `Staff`,
//! `Session`.
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

use http::request::Parts;
use tern::{extract::cookie::Cookies, settings::Settings, IntoResponse, Response};
use tern_core::extract::{FromRequestParts, OptionalFromRequestParts};
use tern_data::Database;

use crate::{session, Accounts, AuthError, Session, User};

/// The session found for a request, kept so that the CSRF check and the
/// extractors look it up once.
#[derive(Clone)]
struct Resolved(Option<Session>);

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
    let not_installed = |_| {
        AuthError::Internal(
            "the app has no accounts: call tern_auth::install(app) (and load tern_data::Database)"
                .to_owned(),
        )
    };
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
