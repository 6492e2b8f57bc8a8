//! CSRF: every unsafe request of a cookie session carries the session's
//! token, and comes from the app's own origin.

use http::{header, HeaderMap, Method};
use http_body_util::{BodyExt as _, Limited};
use subtle::ConstantTimeEq as _;
use tern::{body::Body, middleware::Next, IntoResponse, Request, Response};

use crate::{extract::current, AuthError};

/// The header a script sends the token in.
pub const HEADER: &str = "x-csrf-token";
/// The form field a page sends the token in.
pub const FIELD: &str = "csrf_token";
/// The largest form body read for its token.
const MAX_FORM: usize = 1 << 20;

/// The CSRF check, as middleware (`tern_auth::install` adds it after
/// routing, to every route):
///
/// - safe methods (`GET`, `HEAD`, `OPTIONS`, `TRACE`) and requests with
///   `Authorization: Bearer` (no cookie authority) pass;
/// - an `Origin` (else a `Referer`) naming another host than the
///   request's is refused, session or not (a login from another site
///   too);
/// - with a session, the token must be in the `X-CSRF-Token` header or
///   the `csrf_token` field of a form body, and equal the session's
///   (compared in constant time).
///
/// A refusal is a `403` problem naming what was missing or wrong.
pub async fn csrf(req: Request, next: Next) -> Response {
    match check(req).await {
        Ok(req) => next.run(req).await,
        Err(refusal) => refusal,
    }
}

async fn check(req: Request) -> Result<Request, Response> {
    if matches!(
        *req.method(),
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE
    ) || has_bearer(req.headers())
    {
        return Ok(req);
    }
    same_origin(&req).map_err(IntoResponse::into_response)?;
    let (mut parts, body) = req.into_parts();
    let Some(session) = current(&mut parts)
        .await
        .map_err(IntoResponse::into_response)?
    else {
        return Ok(Request::from_parts(parts, body));
    };
    let (sent, body) = if let Some(v) = parts.headers.get(HEADER) {
        (Some(v.as_bytes().to_vec()), body)
    } else if is_form(&parts.headers) {
        let bytes = Limited::new(body, MAX_FORM)
            .collect()
            .await
            .map_err(|_| {
                AuthError::Csrf(format!(
                    "the form is larger than {MAX_FORM} bytes: send its CSRF token in the X-CSRF-Token header"
                ))
                .into_response()
            })?
            .to_bytes();
        let token = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&bytes)
            .ok()
            .and_then(|pairs| pairs.into_iter().find(|(k, _)| k == FIELD))
            .map(|(_, v)| v.into_bytes());
        (token, Body::from(bytes))
    } else {
        (None, body)
    };
    let Some(sent) = sent else {
        return Err(AuthError::Csrf(
            "the request has no CSRF token: send the session's token in the X-CSRF-Token header \
             or a csrf_token form field"
                .to_owned(),
        )
        .into_response());
    };
    let expected = session.csrf.as_bytes();
    let equal = sent.len() == expected.len() && bool::from(sent.ct_eq(expected));
    if !equal {
        return Err(
            AuthError::Csrf("the CSRF token does not match this session".to_owned())
                .into_response(),
        );
    }
    Ok(Request::from_parts(parts, body))
}

fn has_bearer(headers: &HeaderMap) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.len() > 7 && v[..7].eq_ignore_ascii_case("bearer "))
}

fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| {
            v.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
}

/// `Origin`, else `Referer`, when present, must name the request's host.
fn same_origin(req: &Request) -> Result<(), AuthError> {
    let headers = req.headers();
    let (name, value) = match (headers.get(header::ORIGIN), headers.get(header::REFERER)) {
        (Some(origin), _) => ("Origin", origin),
        (None, Some(referer)) => ("Referer", referer),
        (None, None) => return Ok(()),
    };
    let value = value.to_str().unwrap_or("");
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()))
        .unwrap_or("");
    let theirs = value
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or(""))
        .unwrap_or("");
    if !theirs.is_empty() && theirs.eq_ignore_ascii_case(host) {
        return Ok(());
    }
    let shown: String = value.chars().take(80).collect();
    Err(AuthError::Csrf(format!(
        "the request comes from another site ({name} `{shown}`, not this host)"
    )))
}
