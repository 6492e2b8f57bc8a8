//! The final touches of every answer, whoever made it: an exact
//! `Content-Length`, a `500`'s detail hidden in production, the app's
//! problem renderer, the request ID and the security headers.

use http::{header, HeaderValue, StatusCode};
use tern_core::{response::IntoResponse, Problem, Response};

use super::{Requested, Shared};
use crate::context::RequestIdValue;

/// The final touches of every answer, in place (a response is a few
/// hundred bytes: moving it in and out costs more than the touches).
pub(super) fn finish(
    shared: &Shared,
    res: &mut Response,
    request_id: Option<RequestIdValue>,
    is_head: bool,
    accept: Option<HeaderValue>,
) {
    exact_content_length(res, is_head);
    if res.status() == StatusCode::INTERNAL_SERVER_ERROR && shared.config.is_production() {
        if let Some(hidden) = hide_internals(res, request_id.as_ref(), is_head) {
            *res = hidden;
        }
    }
    if let Some(render) = &shared.renderer {
        if let Some(problem) = res.extensions().get::<Problem>() {
            let problem = problem.clone();
            let headers = std::mem::take(res.headers_mut());
            *res = render(&problem, &Requested::new(accept));
            // The problem's status, whatever the renderer answered: a
            // renderer that forgets it must not turn errors into `200`s.
            *res.status_mut() = problem.status();
            for (name, value) in headers.iter() {
                if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
                    res.headers_mut().append(name, value.clone());
                }
            }
        }
    }
    let headers = res.headers_mut();
    if let Some(id) = request_id {
        headers.insert(shared.config.request_id_header.clone(), id);
    }
    for (name, value) in &shared.security_headers {
        if !headers.contains_key(name) {
            headers.insert(name.clone(), value.clone());
        }
    }
}

/// What a `500` problem says in production: its detail (a type name, an
/// internal message of the app's) is logged with the request ID, not
/// sent.
pub(super) const HIDDEN_DETAIL: &str = "the server failed to answer this request";

/// In production, a `500` problem's detail is replaced by
/// [`HIDDEN_DETAIL`] and logged instead: details of server faults are for
/// the operator, not the client. `None`: `res` may be sent as it is.
fn hide_internals(
    res: &Response,
    request_id: Option<&RequestIdValue>,
    is_head: bool,
) -> Option<Response> {
    let problem = res.extensions().get::<Problem>()?;
    if problem.detail() == HIDDEN_DETAIL {
        return None;
    }
    tracing::error!(
        request_id = request_id.and_then(|v| v.to_str().ok()).unwrap_or(""),
        detail = problem.detail(),
        "answered 500 (in production the detail is logged, not sent)"
    );
    let mut hidden = Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
        .with_detail(HIDDEN_DETAIL)
        .into_response();
    for (name, value) in res.headers() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            hidden.headers_mut().append(name, value.clone());
        }
    }
    exact_content_length(&mut hidden, is_head);
    Some(hidden)
}

/// A `Content-Length` header that disagrees with a body of known length
/// would make the response unreadable (and trips hyper's assertions): the
/// body wins. An empty `HEAD` response may advertise the `GET` length.
fn exact_content_length(res: &mut Response, is_head: bool) {
    use http_body::Body as _;
    let Some(len) = res.body().size_hint().exact() else {
        return;
    };
    let Some(declared) = res.headers().get(header::CONTENT_LENGTH) else {
        return;
    };
    if (is_head && len == 0)
        || declared.to_str().ok().and_then(|d| d.parse::<u64>().ok()) == Some(len)
    {
        return;
    }
    tracing::warn!(declared = ?declared, actual = len, "a response declared a wrong Content-Length; sending the body's length");
    res.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
}
