//! What is checked of a request's head before any middleware sees it:
//! framing and body length (RFC 9112 rules hyper leaves to the server),
//! a junk `Host`, the `ALLOWED_HOSTS` list; then the request's context,
//! with its ID.

use std::{net::SocketAddr, sync::Arc};

use http::{header, HeaderValue, Method, StatusCode};
use tern_core::{response::IntoResponse, Problem, Request, Response};

use super::{request_id::next_request_id, Shared};
use crate::context::{Ctx, PathParams};

/// RFC 9112 rules hyper leaves to the server: an HTTP/1.1 request has
/// exactly one `Host` (§3.2), and the only transfer coding served is a
/// single `chunked` (§6.1: 501 for the others, rather than handing the app
/// a body still in a coding it did not ask for); a body in a content
/// coding is refused (415, RFC 9110 §15.5.16) for the same reason; and a
/// declared body larger than the limit is refused before it is read (413). One pass over
/// the headers rather than a lookup per rule.
#[allow(clippy::result_large_err)] // the error path is the rare one
fn check_head(req: &Request, max_body: u64) -> Result<(), Problem> {
    let (mut hosts, mut codings) = (0u32, 0u32);
    let mut coding = None;
    let mut length = None;
    let mut content_coding = None;
    for (name, value) in req.headers() {
        if name == header::CONTENT_ENCODING {
            if content_coding.is_none() && !is_identity(value) {
                content_coding = Some(value);
            }
        } else if name == header::HOST {
            hosts += 1;
        } else if name == header::TRANSFER_ENCODING {
            codings += 1;
            coding = Some(value);
        } else if name == header::CONTENT_LENGTH {
            length = Some(value);
        }
    }
    // RFC 9112 §3.2: the authority form is for CONNECT and the asterisk
    // form for OPTIONS; anything else must be a path or an absolute URL.
    let uri = req.uri();
    if uri.scheme().is_none() && uri.authority().is_some() && req.method() != Method::CONNECT {
        return Err(Problem::new(StatusCode::BAD_REQUEST).with_detail(
            "the request target must be a path starting with `/` or an absolute URL",
        ));
    }
    if uri.path() == "*" && req.method() != Method::OPTIONS {
        return Err(Problem::new(StatusCode::BAD_REQUEST)
            .with_detail("the request target `*` is only for OPTIONS"));
    }
    if req.version() <= http::Version::HTTP_11 {
        if hosts == 0 && req.version() == http::Version::HTTP_11 && req.uri().authority().is_none()
        {
            return Err(Problem::new(StatusCode::BAD_REQUEST)
                .with_detail("an HTTP/1.1 request must carry a `Host` header"));
        }
        if hosts > 1 {
            return Err(Problem::new(StatusCode::BAD_REQUEST)
                .with_detail("the request carries more than one `Host` header"));
        }
    }
    if let Some(first) = coding {
        if codings > 1 || !first.as_bytes().eq_ignore_ascii_case(b"chunked") {
            return Err(Problem::new(StatusCode::NOT_IMPLEMENTED)
                .with_detail("only `Transfer-Encoding: chunked` is supported; send the body chunked or with a `Content-Length`"));
        }
    }
    // RFC 9110 §8.4.1, §15.5.16: Tern decodes no content coding, and a
    // body read as if plain while it is `br` or `gzip` is a lie to the
    // handler (and a way around every check of its bytes): 415, with
    // `Accept-Encoding: identity` saying what is taken (`prepare`).
    if let Some(value) = content_coding {
        if !http_body::Body::is_end_stream(req.body()) {
            let shown: String = String::from_utf8_lossy(value.as_bytes())
                .chars()
                .take(40)
                .collect();
            return Err(Problem::new(StatusCode::UNSUPPORTED_MEDIA_TYPE).with_detail(format!(
                "the request body is in the content coding `{shown}` (Content-Encoding), which this server does not decode: send it without a Content-Encoding"
            )));
        }
    }
    if let Some(len) = length {
        let len = len.to_str().ok().and_then(|s| s.parse::<u64>().ok());
        if len.is_some_and(|len| len > max_body) {
            return Err(Problem::new(StatusCode::PAYLOAD_TOO_LARGE)
                .with_detail(tern_core::body::too_large_detail(max_body)));
        }
    }
    Ok(())
}

/// Whether a `Content-Encoding` value names no coding but `identity`
/// (RFC 9110 §8.4.1: a list, in the order applied).
fn is_identity(value: &HeaderValue) -> bool {
    value.to_str().is_ok_and(|v| {
        v.split(',')
            .map(str::trim)
            .all(|c| c.is_empty() || c.eq_ignore_ascii_case("identity"))
    })
}

/// Checks done before any middleware: framing, body length, host; then
/// the request's context (see `context`).
#[allow(clippy::result_large_err)] // the error path is the rare one
pub(super) fn prepare(
    shared: &Arc<Shared>,
    req: &Request,
    peer: Option<SocketAddr>,
    drain: Option<Arc<crate::drain::DrainState>>,
) -> Result<Ctx, Response> {
    let config = &shared.config;
    if let Err(problem) = check_head(req, config.limits.max_body_bytes) {
        let unsupported_coding = problem.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE;
        let mut res = problem.into_response();
        if unsupported_coding {
            res.headers_mut().insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_static("identity"),
            );
        }
        if req.version() <= http::Version::HTTP_11 {
            // The body was not read and its framing may be the problem:
            // nothing after it on this connection can be trusted.
            res.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        return Err(res);
    }
    // A junk host (`a:80@b`, `a:80/x`) is never valid, in any
    // environment: refused before the allow-list, so that no pattern, no
    // `Host` extractor and no URL built from it ever sees one.
    if let Err(detail) = crate::extract::check_host(req) {
        let mut res = Problem::new(StatusCode::BAD_REQUEST)
            .with_detail(detail)
            .into_response();
        if req.version() <= http::Version::HTTP_11 {
            res.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        return Err(res);
    }
    // The built-in health check answers whatever the host: orchestrators'
    // probes (Kubernetes) name the pod's address, not a public host, and
    // `ok` tells a forged host nothing (docs/configuration.md).
    let health_probe = matches!(*req.method(), Method::GET | Method::HEAD)
        && shared.table.builtin_health() == Some(req.uri().path());
    if !config.allowed_hosts.is_empty() && !health_probe {
        let host = crate::extract::host_of(req);
        let allowed = host.is_some_and(|h| {
            let name = crate::extract::strip_port(h);
            config.allowed_hosts.iter().any(|p| p.matches(name))
        });
        if !allowed {
            return Err(Problem::new(StatusCode::BAD_REQUEST)
                .with_detail(match host {
                    Some(h) => format!("the host `{h}` is not served here (see ALLOWED_HOSTS)"),
                    None => "the request names no host (see ALLOWED_HOSTS)".to_owned(),
                })
                .into_response());
        }
    }
    let trusted_id = if shared.is_trusted_proxy(peer) {
        req.headers()
            .get(&config.request_id_header)
            .filter(|v| v.len() <= 128 && !v.is_empty())
            .cloned()
    } else {
        None
    };
    let request_id = trusted_id.unwrap_or_else(next_request_id);
    Ok(Ctx {
        shared: Arc::clone(shared),
        peer,
        request_id,
        params: PathParams::default(),
        drain,
    })
}
