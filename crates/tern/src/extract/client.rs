use std::net::{IpAddr, SocketAddr};

use http::request::Parts;
use tern_core::extract::{FromRequestParts, OptionalFromRequestParts};

use super::Rejection;
use crate::context::Ctx;

/// The client's IP address.
///
/// The peer's address, unless `TRUSTED_PROXY_HEADER` is set and the peer
/// is one of `TRUSTED_PROXIES`: then the last (rightmost) entry of that
/// header, the one the trusted proxy appended. If that entry is not an
/// address (`unknown`), the peer's address, never an entry further left
/// (the client may have written those). A header sent by any other peer
/// is ignored, so a client cannot forge its address.
///
/// `Option<ClientIp>` is `None` when the peer's address is unknown (a
/// request handed to the app in process, without one); `ClientIp` is a
/// `500` then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

/// The TCP peer's address, proxy headers ignored.
///
/// `Option<PeerAddr>` is `None` when it is unknown, as for [`ClientIp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// The request's ID: the trusted incoming `x-request-id` or one generated
/// here; also sent back in the response's `x-request-id` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

fn with_ctx<R>(parts: &Parts, f: impl FnOnce(&Ctx) -> R) -> Result<R, Rejection> {
    crate::context::with(&parts.extensions, f)
        .ok_or_else(|| Rejection::internal("this request was not received by a Tern app"))
}

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        with_ctx(parts, |ctx| {
            client_ip(&ctx.shared, ctx.peer, &parts.headers)
        })?
        .map(ClientIp)
        .ok_or_else(|| Rejection::internal("the client's address is unknown"))
    }
}

/// The client's address by [`ClientIp`]'s rule; `None` when the peer is
/// unknown.
pub(crate) fn client_ip(
    shared: &crate::app::Shared,
    peer: Option<SocketAddr>,
    headers: &http::HeaderMap,
) -> Option<IpAddr> {
    let peer = peer?;
    let header = shared
        .config
        .trusted_proxy_header
        .as_ref()
        .filter(|_| shared.is_trusted_proxy(Some(peer)));
    if let Some(name) = header {
        // Only the rightmost entry is the trusted proxy's own: anything
        // left of it may come from the client. When the proxy wrote
        // something that is not an address (`unknown`, an obfuscated
        // name), skipping it would let a client-supplied entry win.
        let rightmost = headers
            .get_all(name)
            .iter()
            .next_back()
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit(',').next())
            .and_then(|ip| parse_ip(ip.trim()));
        if let Some(ip) = rightmost {
            return Some(ip);
        }
    }
    Some(peer.ip())
}

fn parse_ip(s: &str) -> Option<IpAddr> {
    s.parse::<IpAddr>()
        .ok()
        .or_else(|| s.parse::<SocketAddr>().ok().map(|a| a.ip()))
}

impl<S: Send + Sync> FromRequestParts<S> for PeerAddr {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        with_ctx(parts, |ctx| ctx.peer)?
            .map(PeerAddr)
            .ok_or_else(|| Rejection::internal("the client's address is unknown"))
    }
}

/// `None` when the peer is unknown; a request that no Tern app received
/// is still the `500`, not `None` (that is a mistake in the app, not an
/// absent address).
impl<S: Send + Sync> OptionalFromRequestParts<S> for ClientIp {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Option<Self>, Rejection> {
        if with_ctx(parts, |ctx| ctx.peer.is_none())? {
            return Ok(None);
        }
        <Self as FromRequestParts<S>>::from_request_parts(parts, state)
            .await
            .map(Some)
    }
}

/// `None` when the peer is unknown, as for `Option<ClientIp>`.
impl<S: Send + Sync> OptionalFromRequestParts<S> for PeerAddr {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Option<Self>, Rejection> {
        with_ctx(parts, |ctx| ctx.peer.map(PeerAddr))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RequestId {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        with_ctx(parts, |ctx| {
            RequestId(String::from_utf8_lossy(ctx.request_id.as_bytes()).into_owned())
        })
    }
}

/// Builds URLs of named routes ([`App::named_route`](crate::App::named_route))
/// inside a handler.
///
/// ```
/// use tern::{App, extract::Urls, routing::get, response::Redirect};
///
/// async fn old(urls: Urls) -> Result<Redirect, tern::Problem> {
///     let to = urls.url_for("profile", &[("name", "ada")]).map_err(|e| {
///         tern::Problem::new(tern::StatusCode::INTERNAL_SERVER_ERROR).with_detail(e.to_string())
///     })?;
///     Ok(Redirect::permanent(&to))
/// }
/// let app = App::new()
///     .named_route("profile", "/people/{name}", get(|| async { "a profile" }))
///     .route("/old-profile", get(old));
/// # let _ = app.build().unwrap();
/// ```
#[derive(Clone)]
pub struct Urls {
    shared: std::sync::Arc<crate::app::Shared>,
}

impl std::fmt::Debug for Urls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Urls")
    }
}

impl Urls {
    /// The path of the route named `name` with `params` percent-encoded;
    /// an error when the name is unknown, a parameter is missing or extra,
    /// or a value breaks the route's constraint.
    pub fn url_for(
        &self,
        name: &str,
        params: &[(&str, &str)],
    ) -> Result<String, crate::routing::UrlError> {
        self.shared.table.url_for(name, params)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Urls {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        with_ctx(parts, |ctx| Urls {
            shared: std::sync::Arc::clone(&ctx.shared),
        })
    }
}

/// The scheme the client used to reach the app: what an `Origin` is
/// compared with (the CSRF and WebSocket checks).
///
/// In order: the `X-Forwarded-Proto` of a trusted proxy (a peer in
/// `TRUSTED_PROXIES`; its last value, the one the nearest proxy wrote;
/// else `proto=` of the last element of its RFC 7239 `Forwarded`),
/// else HTTP/2's `:scheme`, else
/// `https` when Tern serves TLS itself (`TERN_TLS_CERT`), else `http`.
/// A header sent by any other peer is ignored, as for [`ClientIp`].
///
/// ```
/// use tern::{App, extract::Scheme, routing::get};
///
/// async fn show(scheme: Scheme) -> &'static str { scheme.as_str() }
/// let app = App::new().route("/scheme", get(show));
/// # let _ = app.build().unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Plain HTTP.
    Http,
    /// HTTP over TLS.
    Https,
}

impl Scheme {
    /// `"http"` or `"https"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    /// The scheme's default port: 80 or 443.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }

    fn named(s: &str) -> Option<Scheme> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("https") {
            Some(Scheme::Https)
        } else if s.eq_ignore_ascii_case("http") {
            Some(Scheme::Http)
        } else {
            None
        }
    }
}

impl std::fmt::Display for Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Scheme {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        let (trusted, tls) = with_ctx(parts, |ctx| {
            (
                ctx.shared.is_trusted_proxy(ctx.peer),
                ctx.shared.config.tls.is_some(),
            )
        })?;
        if trusted {
            let forwarded = parts
                .headers
                .get_all("x-forwarded-proto")
                .iter()
                .next_back()
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.rsplit(',').next())
                .and_then(Scheme::named);
            // RFC 7239: `proto=` of the last element (the nearest proxy's).
            let standard = || {
                let last = parts
                    .headers
                    .get_all(http::header::FORWARDED)
                    .iter()
                    .next_back()?
                    .to_str()
                    .ok()?
                    .rsplit(',')
                    .next()?;
                last.split(';').find_map(|pair| {
                    let (k, v) = pair.split_once('=')?;
                    k.trim()
                        .eq_ignore_ascii_case("proto")
                        .then(|| Scheme::named(v.trim().trim_matches('"')))?
                })
            };
            if let Some(scheme) = forwarded.or_else(standard) {
                return Ok(scheme);
            }
        }
        // HTTP/2's `:scheme` (a browser's word); an HTTP/1 absolute-form
        // target names what the client wrote, not how it connected.
        if parts.version == http::Version::HTTP_2 {
            if let Some(scheme) = parts.uri.scheme_str().and_then(Scheme::named) {
                return Ok(scheme);
            }
        }
        Ok(if tls { Scheme::Https } else { Scheme::Http })
    }
}
