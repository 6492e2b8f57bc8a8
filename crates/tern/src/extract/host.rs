use http::{header, request::Parts, HeaderMap, StatusCode, Uri};
use tern_core::{
    extract::{FromRequestParts, OptionalFromRequestParts},
    Request,
};

use super::Rejection;
use crate::protocol::host::check_host_parts;

/// The host the client asked for (from the URI authority, as HTTP/2
/// sends it, or the `Host` header), port included if given.
///
/// Guarantees: the value is a valid RFC 9110 `uri-host [ ":" port ]`
/// (a DNS-style name or IPv4 address, or a bracketed IPv6 address, and
/// a numeric port of at most 65535): a request naming anything else
/// (`a:80@b`, `a:80/x`, `a:`, `[::1`) is refused with `400` before any
/// middleware, so the value can be put in a URL as it is. When
/// `ALLOWED_HOSTS` is set, only allowed hosts reach a handler.
///
/// `Option<Host>` is `None` for a request that names no host (an HTTP/1.0
/// request without `Host`, or with an empty one); an invalid host is the
/// `400`, never `None`.
///
/// ```
/// use tern::extract::Host;
///
/// async fn sitemap(Host(host): Host) -> String {
///     format!("http://{host}/")
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host(pub String);

/// The request's host, once `protocol::check_request` has passed it.
pub(crate) fn host_of(req: &Request) -> Option<&str> {
    host_of_parts(req.uri(), req.headers())
}

fn host_of_parts<'a>(uri: &'a Uri, headers: &'a HeaderMap) -> Option<&'a str> {
    uri.authority()
        .map(|a| a.as_str())
        .or_else(|| headers.get(header::HOST).and_then(|h| h.to_str().ok()))
        .filter(|h| !h.is_empty())
}

/// `example.com:8080` → `example.com`; `[::1]:80` → `[::1]`. For a host
/// `protocol::host::check_host` has passed (one colon at most outside
/// brackets).
pub(crate) fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

impl<S: Send + Sync> FromRequestParts<S> for Host {
    type Rejection = Rejection;

    const IMMEDIATE: bool = true;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        // The app checks every request before routing; this check is for
        // a request built by hand and handed to the extractor directly.
        if let Err(detail) = check_host_parts(&parts.uri, &parts.headers, parts.version) {
            return Err(Rejection::missing(StatusCode::BAD_REQUEST, detail));
        }
        host_of_parts(&parts.uri, &parts.headers)
            .map(|h| Host(h.to_owned()))
            .ok_or_else(|| {
                Rejection::missing(
                    StatusCode::BAD_REQUEST,
                    "the request names no host: send a `Host` header",
                )
            })
    }
}

impl<S: Send + Sync> OptionalFromRequestParts<S> for Host {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Option<Self>, Rejection> {
        if let Err(detail) = check_host_parts(&parts.uri, &parts.headers, parts.version) {
            return Err(Rejection::invalid(StatusCode::BAD_REQUEST, detail));
        }
        Ok(host_of_parts(&parts.uri, &parts.headers).map(|h| Host(h.to_owned())))
    }
}
