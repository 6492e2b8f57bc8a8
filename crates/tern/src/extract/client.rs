use std::net::{IpAddr, SocketAddr};

use http::request::Parts;
use tern_core::extract::FromRequestParts;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

/// The TCP peer's address, proxy headers ignored.
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
        let (peer, header) = with_ctx(parts, |ctx| {
            let header = ctx.peer.and_then(|peer| {
                let name = ctx.shared.config.trusted_proxy_header.as_ref()?;
                ctx.shared
                    .is_trusted_proxy(Some(peer))
                    .then(|| name.clone())
            });
            (ctx.peer, header)
        })?;
        let peer = peer.ok_or_else(|| Rejection::internal("the client's address is unknown"))?;
        if let Some(name) = header {
            // Only the rightmost entry is the trusted proxy's own: anything
            // left of it may come from the client. When the proxy wrote
            // something that is not an address (`unknown`, an obfuscated
            // name), skipping it would let a client-supplied entry win.
            let rightmost = parts
                .headers
                .get_all(name)
                .iter()
                .next_back()
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.rsplit(',').next())
                .and_then(|ip| parse_ip(ip.trim()));
            if let Some(ip) = rightmost {
                return Ok(ClientIp(ip));
            }
        }
        Ok(ClientIp(peer.ip()))
    }
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
