use std::net::{IpAddr, SocketAddr};

use http::request::Parts;
use tern_core::extract::FromRequestParts;

use super::Rejection;
use crate::context::Ctx;

/// The client's IP address.
///
/// The peer's address, unless `TRUSTED_PROXY_HEADER` is set and the peer
/// is one of `TRUSTED_PROXIES`: then the last address of that header (the
/// one the trusted proxy appended). A header sent by any other peer is
/// ignored, so a client cannot forge its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

/// The TCP peer's address, proxy headers ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// The request's ID: the trusted incoming `x-request-id` or one generated
/// here; also sent back in the response's `x-request-id` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

fn ctx(parts: &Parts) -> Result<&Ctx, Rejection> {
    parts
        .extensions
        .get::<Ctx>()
        .ok_or_else(|| Rejection::internal("this request was not received by a Tern app"))
}

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        let ctx = ctx(parts)?;
        let peer = ctx
            .peer
            .ok_or_else(|| Rejection::internal("the client's address is unknown"))?;
        if let Some(name) = &ctx.shared.config.trusted_proxy_header {
            if ctx.shared.is_trusted_proxy(Some(peer)) {
                let forwarded = parts
                    .headers
                    .get_all(name)
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .flat_map(|v| v.split(','))
                    .filter_map(|ip| parse_ip(ip.trim()))
                    .next_back();
                if let Some(ip) = forwarded {
                    return Ok(ClientIp(ip));
                }
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
        ctx(parts)?
            .peer
            .map(PeerAddr)
            .ok_or_else(|| Rejection::internal("the client's address is unknown"))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RequestId {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        let id = &ctx(parts)?.request_id;
        Ok(RequestId(
            String::from_utf8_lossy(id.as_bytes()).into_owned(),
        ))
    }
}
