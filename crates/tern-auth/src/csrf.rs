//! CSRF: every unsafe request of a cookie session carries the session's
//! token, and comes from the app's own origin.

use http::{header, request::Parts, HeaderMap, Method};
use http_body_util::{BodyExt as _, Limited};
use subtle::ConstantTimeEq as _;
use tern::{body::Body, extract::Scheme, middleware::Next, IntoResponse, Request, Response};
use tern_core::extract::FromRequestParts as _;

use crate::{
    extract::{by_token, current, ByToken},
    AuthError,
};

/// The header a script sends the token in.
pub const HEADER: &str = "x-csrf-token";
/// The form field a page sends the token in.
pub const FIELD: &str = "csrf_token";
/// The largest form body read for its token.
const MAX_FORM: usize = 1 << 20;

/// The CSRF check, as middleware (`tern_auth::install` adds it after
/// routing, to every route):
///
/// - safe methods (`GET`, `HEAD`, `OPTIONS`, `TRACE`) pass;
/// - a request that a live API token authenticated (`Authorization` in a
///   scheme of `AUTH_TOKEN_SCHEMES`, see [`Authenticated`](crate::Authenticated))
///   passes, even with a session cookie: a cross-site page cannot set
///   that header. Any other `Authorization` (junk, a revoked or expired
///   token, another scheme) earns nothing: the checks below apply;
/// - an `Origin` (else a `Referer`) naming another origin than the
///   request's (scheme, host and port: `https://host` is not
///   `http://host`) or one listed in `CORS_ALLOWED_ORIGINS` (not `*`)
///   is refused, session or not (a login from another site too);
/// - with a session, the token must be in the `X-CSRF-Token` header or
///   the `csrf_token` field of a form body, and equal the session's
///   (compared in constant time).
///
/// The request's scheme is tern's [`Scheme`]: a trusted proxy's
/// (`TRUSTED_PROXIES`, loopback by default) `X-Forwarded-Proto`, else
/// HTTP/2's `:scheme`, else `https` when Tern serves TLS itself
/// (`TERN_TLS_CERT`), `http` otherwise. Behind a proxy that terminates TLS, have it send
/// `X-Forwarded-Proto` (nginx: `proxy_set_header X-Forwarded-Proto
/// $scheme;`), or every form of an `https` page is refused.
///
/// A refusal is a `403` problem naming what was missing or wrong.
pub async fn csrf(req: Request, next: Next) -> Response {
    guarded(req, next, |_| {}).await
}

/// [`csrf`] as `install` adds it: its refusals (`403`, not a database
/// error) counted.
pub(crate) fn csrf_counted(
    meter: std::sync::Arc<crate::metrics::AuthMeter>,
    req: Request,
    next: Next,
) -> impl std::future::Future<Output = Response> + Send {
    guarded(req, next, move |refusal| {
        if refusal.status() == http::StatusCode::FORBIDDEN {
            meter.csrf.inc();
        }
    })
}

/// The check, then the rest of the chain; `refused` sees a refusal
/// before it is answered.
async fn guarded(req: Request, next: Next, refused: impl FnOnce(&Response)) -> Response {
    let req = if nothing_to_check(&req) {
        req
    } else {
        match Box::pin(check_credentials(req)).await {
            Ok(req) => req,
            Err(refusal) => {
                refused(&refusal);
                return refusal;
            }
        }
    };
    next.run(req).await
}

/// Whether every check passes without reading anything: a safe method,
/// or no `Authorization`, no `Origin` or `Referer`, no cookie and nothing
/// looked up before (no token, no other site, no session). Decided
/// without a future: the checks' futures (a database query each) are
/// boxed only when there is something to check, since as part of every
/// request's middleware future they made it several times larger, and
/// each move of it a copy.
fn nothing_to_check(req: &Request) -> bool {
    if matches!(
        *req.method(),
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE
    ) {
        return true;
    }
    let headers = req.headers();
    !headers.contains_key(header::AUTHORIZATION)
        && !headers.contains_key(header::ORIGIN)
        && !headers.contains_key(header::REFERER)
        && !headers.contains_key(header::COOKIE)
        && !crate::extract::remembered(req.extensions())
}

/// The checks of an unsafe request that brings a credential, an origin
/// or a cookie.
async fn check_credentials(req: Request) -> Result<Request, Response> {
    let (mut parts, body) = req.into_parts();
    // A live API token authenticated the request: no cookie speaks for
    // it, so there is no forgery to stop (a cross-site page cannot set
    // `Authorization`). Anything else in the header (junk, a revoked
    // token) earns no exemption.
    if let ByToken::Valid(_) = by_token(&mut parts)
        .await
        .map_err(IntoResponse::into_response)?
    {
        return Ok(Request::from_parts(parts, body));
    }
    same_origin(&mut parts)
        .await
        .map_err(IntoResponse::into_response)?;
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

/// An origin: scheme (lower case), host (lower case, IPv6 in brackets),
/// port (the scheme's default when none is written).
#[derive(Debug, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        match self.port {
            Some(port) if Some(port) != default_port(&self.scheme) => write!(f, ":{port}"),
            _ => Ok(()),
        }
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
}

/// `host[:port]` (RFC 9110's `uri-host [ ":" port ]`: a reg-name, an
/// IPv4 or a bracketed IPv6 address, a numeric port) of `scheme`; `None`
/// for anything else (userinfo, junk after the colon).
fn origin(scheme: &str, authority: &str) -> Option<Origin> {
    let scheme = scheme.to_ascii_lowercase();
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (inside, after) = rest.split_once(']')?;
            let ipv6 = |b: u8| b.is_ascii_hexdigit() || b == b':' || b == b'.';
            if inside.is_empty() || !inside.bytes().all(ipv6) {
                return None;
            }
            let port = match after {
                "" => None,
                colon_port => Some(colon_port.strip_prefix(':')?),
            };
            (&authority[..inside.len() + 2], port)
        }
        None => match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let reg_name = |b: u8| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=%".contains(&b);
    if host.is_empty() || (!host.starts_with('[') && !host.bytes().all(reg_name)) {
        return None;
    }
    let port = match port {
        None | Some("") => default_port(&scheme),
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse::<u16>().ok()?),
        Some(_) => return None,
    };
    Some(Origin {
        host: host.to_ascii_lowercase(),
        scheme,
        port,
    })
}

/// The origin of an `Origin` header or a `Referer` URL.
fn theirs(value: &str) -> Option<Origin> {
    let (scheme, rest) = value.trim().split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    origin(scheme, authority)
}

/// The request's own origin: its scheme ([`Scheme`]) and the host it
/// asked for (the URL's authority, else `Host`).
async fn ours(parts: &mut Parts) -> Option<Origin> {
    let scheme = Scheme::from_request_parts(parts, &()).await.ok()?;
    let host = parts.uri.authority().map(|a| a.as_str()).or_else(|| {
        parts
            .headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
    })?;
    origin(scheme.as_str(), host)
}

/// Whether `origin` is listed in `CORS_ALLOWED_ORIGINS` (the app lets
/// that site's pages call it; `*` trusts no one here: it is not a list
/// of sites the app knows).
fn trusted_by_cors(origin: &Origin) -> bool {
    tern::__private::current_config(|config| match &config.cors {
        Some(tern::config::Cors {
            allowed_origins: tern::config::CorsList::Only(list),
            ..
        }) => list.iter().any(|o| theirs(o).as_ref() == Some(origin)),
        _ => false,
    })
    .unwrap_or(false)
}

/// `Origin`, else `Referer`, when present, must name the request's own
/// origin (scheme, host and port), or one of `CORS_ALLOWED_ORIGINS`.
async fn same_origin(parts: &mut Parts) -> Result<(), AuthError> {
    let headers = &parts.headers;
    let (name, value) = match (headers.get(header::ORIGIN), headers.get(header::REFERER)) {
        (Some(origin), _) => ("Origin", origin),
        (None, Some(referer)) => ("Referer", referer),
        (None, None) => return Ok(()),
    };
    let value = value.to_str().unwrap_or("").to_owned();
    let theirs = theirs(&value);
    let ours = ours(parts).await;
    if theirs.is_some() && theirs == ours {
        return Ok(());
    }
    if theirs.as_ref().is_some_and(trusted_by_cors) {
        return Ok(());
    }
    let shown: String = value.chars().take(80).collect();
    let ours = ours.map_or_else(|| "this host".to_owned(), |o| format!("this site's `{o}`"));
    Err(AuthError::Csrf(format!(
        "the request comes from another site ({name} `{shown}`, not {ours})"
    )))
}
