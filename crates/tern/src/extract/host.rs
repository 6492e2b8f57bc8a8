use http::{header, request::Parts, StatusCode};
use tern_core::{extract::FromRequestParts, Request};

use super::Rejection;

/// The host the client asked for (from the URI authority, as HTTP/2
/// sends it, or the `Host` header), port included if given. When
/// `ALLOWED_HOSTS` is set, only allowed hosts reach a handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host(pub String);

pub(crate) fn host_of(req: &Request) -> Option<&str> {
    host_of_parts(req.uri(), req.headers())
}

fn host_of_parts<'a>(uri: &'a http::Uri, headers: &'a http::HeaderMap) -> Option<&'a str> {
    uri.authority()
        .map(|a| a.as_str())
        .or_else(|| headers.get(header::HOST).and_then(|h| h.to_str().ok()))
        .filter(|h| !h.is_empty())
}

/// `example.com:8080` → `example.com`; `[::1]:80` → `[::1]`.
pub(crate) fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

impl<S: Send + Sync> FromRequestParts<S> for Host {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
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
