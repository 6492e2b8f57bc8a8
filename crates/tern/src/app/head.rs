//! What is checked of a request's head before any middleware sees it: the
//! protocol rules hyper leaves to the server (`crate::protocol`: framing,
//! request target, body length, a junk `Host`), the `ALLOWED_HOSTS` list;
//! then the request's context, with its ID.

use std::{net::SocketAddr, sync::Arc};

use http::{Method, StatusCode};
use tern_core::{response::IntoResponse, Problem, Request, Response};

use super::{request_id::next_request_id, Shared};

const TRACEPARENT: http::HeaderName = http::HeaderName::from_static("traceparent");
use crate::{context::Ctx, metrics::http::Reason, protocol::Fields};

/// Checks done before any middleware: the protocol rules
/// (`crate::protocol::check_request`; `from_codec` as there), then
/// `ALLOWED_HOSTS`; then the request's context (see `context`). The
/// header fields all of them read are found in one pass
/// (`protocol::Fields`).
#[allow(clippy::result_large_err)] // the error path is the rare one
pub(super) fn prepare(
    shared: &Arc<Shared>,
    req: &Request,
    peer: Option<SocketAddr>,
    drain: Option<Arc<crate::drain::DrainState>>,
    from_codec: bool,
) -> Result<Box<Ctx>, (Response, Reason)> {
    let config = &shared.config;
    let fields = Fields::of(req, [&config.request_id_header, &TRACEPARENT]);
    crate::protocol::check_request(req, &fields, config.limits.max_body_bytes, from_codec)?;
    // The built-in health check answers whatever the host: orchestrators'
    // probes (Kubernetes) name the pod's address, not a public host, and
    // `ok` tells a forged host nothing (docs/configuration.md).
    // The built-in readiness and metrics too: probes and scrapers name the
    // pod's address (the metrics need their token in production).
    let health_probe = matches!(*req.method(), Method::GET | Method::HEAD)
        && (shared.table.builtin_health() == Some(req.uri().path())
            || shared.ready_path.as_deref() == Some(req.uri().path())
            || shared.metrics_path.as_deref() == Some(req.uri().path()));
    if !config.allowed_hosts.is_empty() && !health_probe {
        // `extract::host_of`, from the fields at hand.
        let host = match req.uri().authority() {
            Some(authority) => Some(authority.as_str()),
            None => fields.host.and_then(|h| h.to_str().ok()),
        }
        .filter(|h| !h.is_empty());
        let allowed = host.is_some_and(|h| {
            let name = crate::extract::strip_port(h);
            config.allowed_hosts.iter().any(|p| p.matches(name))
        });
        if !allowed {
            return Err((
                Problem::new(StatusCode::BAD_REQUEST)
                    .with_detail(match host {
                        Some(h) => format!("the host `{h}` is not served here (see ALLOWED_HOSTS)"),
                        None => "the request names no host (see ALLOWED_HOSTS)".to_owned(),
                    })
                    .into_response(),
                Reason::Host,
            ));
        }
    }
    // The peer is looked up in `TRUSTED_PROXIES` only when the request
    // brings a field it would have to be trusted for (most bring none).
    let [id, traceparent] =
        match fields.named.iter().any(Option::is_some) && shared.is_trusted_proxy(peer) {
            true => fields.named,
            false => [None, None],
        };
    let trusted_id = id.filter(|v| v.len() <= 128 && !v.is_empty()).cloned();
    let traceparent = traceparent.and_then(crate::trace::parse);
    let request_id = trusted_id.unwrap_or_else(next_request_id);
    Ok(crate::context::boxed(
        shared,
        peer,
        request_id,
        drain,
        traceparent,
    ))
}
