//! The final touches of every answer, whoever made it: an exact
//! `Content-Length`, a `500`'s detail hidden in production, the app's
//! problem renderer, the request ID and the security headers.

use http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use tern_core::{response::IntoResponse, Problem, Response};

use super::{Requested, Shared};
use crate::context::RequestIdValue;

/// The final touches of every answer, in place (a response is a few
/// hundred bytes: moving it in and out costs more than the touches).
/// With `defer_id`, the request ID is given back rather than inserted
/// (the codec's writer writes it, `AppService::call_checked`), unless its
/// name is one that writer reads itself (`server::h1_writer_may_set`).
pub(super) fn finish(
    shared: &Shared,
    res: &mut Response,
    request_id: Option<RequestIdValue>,
    defer_id: bool,
    is_head: bool,
    accept: Option<HeaderValue>,
) -> Option<RequestIdValue> {
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
    let name = &shared.config.request_id_header;
    let deferred = match request_id {
        Some(id) if !defer_id || !crate::server::h1_writer_may_set(name) => {
            headers.insert(name.clone(), id);
            None
        }
        id => id,
    };
    add_security_headers(headers, &shared.security_headers);
    deferred
}

/// Adds each of `security` (at most 64) the answer does not set itself.
/// Which it sets is found in one pass over its names rather than a
/// lookup of each (a custom name is hashed byte by byte), and room for
/// the rest is made once.
fn add_security_headers(headers: &mut HeaderMap, security: &[(HeaderName, HeaderValue)]) {
    if security.is_empty() {
        return;
    }
    // Bit `i`: the answer sets `security[i]`.
    let mut set = 0u64;
    for name in headers.keys() {
        for (i, (wanted, _)) in security.iter().enumerate().take(64) {
            if name == wanted {
                set |= 1 << i;
            }
        }
    }
    let missing = security.len().min(64) - set.count_ones() as usize;
    // Only room: a map already at its limit fails at the inserts, as before.
    let _ = headers.try_reserve(missing);
    for (i, (name, value)) in security.iter().enumerate() {
        if i >= 64 {
            // Beyond the mask's bits (no app has so many): a lookup each.
            if !headers.contains_key(name) {
                headers.insert(name.clone(), value.clone());
            }
        } else if set & (1 << i) == 0 {
            headers.append(name.clone(), value.clone());
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
    // A scan of the names, not a hash lookup: an answer carries a few
    // fields, and seldom a `Content-Length` (the first value, as `get`).
    let Some(declared) = res
        .headers()
        .iter()
        .find_map(|(name, value)| (name == header::CONTENT_LENGTH).then_some(value))
    else {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use http::{HeaderMap, HeaderName, HeaderValue};

    use super::add_security_headers;

    /// A lookup per header: what `add_security_headers` must agree with.
    fn reference(headers: &mut HeaderMap, security: &[(HeaderName, HeaderValue)]) {
        for (name, value) in security {
            if !headers.contains_key(name) {
                headers.insert(name.clone(), value.clone());
            }
        }
    }

    /// Every name with its values in order, names sorted.
    fn fields(headers: &HeaderMap) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<_> = headers
            .keys()
            .map(|name| {
                let values = headers.get_all(name).iter();
                let values = values.map(|v| v.to_str().unwrap().to_owned()).collect();
                (name.as_str().to_owned(), values)
            })
            .collect();
        out.sort();
        out
    }

    /// For every subset of the security headers an answer sets itself
    /// (once, or twice for the first of them), beside a field of its own:
    /// the one-pass version adds what the lookups add and keeps what the
    /// answer set. Then a list longer than the pass's 64-bit mask.
    #[test]
    fn one_pass_adds_what_lookups_add() {
        let security: Vec<(HeaderName, HeaderValue)> = [
            ("strict-transport-security", "max-age=1"),
            ("content-security-policy", "default-src 'self'"),
            ("x-frame-options", "DENY"),
            ("x-content-type-options", "nosniff"),
            ("x-xss-protection", "0"),
            ("referrer-policy", "no-referrer"),
            ("cross-origin-opener-policy", "same-origin"),
        ]
        .into_iter()
        .map(|(n, v)| (HeaderName::from_static(n), HeaderValue::from_static(v)))
        .collect();
        for set in 0..1u32 << security.len() {
            for twice in [false, true] {
                let mut answer = HeaderMap::new();
                answer.insert("content-type", HeaderValue::from_static("text/plain"));
                for (i, (name, _)) in security.iter().enumerate() {
                    if set & (1 << i) != 0 {
                        answer.append(name.clone(), HeaderValue::from_static("app"));
                        if twice && i == 0 {
                            answer.append(name.clone(), HeaderValue::from_static("again"));
                        }
                    }
                }
                let (mut fast, mut slow) = (answer.clone(), answer);
                add_security_headers(&mut fast, &security);
                reference(&mut slow, &security);
                assert_eq!(fields(&fast), fields(&slow), "set {set:#b}");
            }
        }
        let many: Vec<(HeaderName, HeaderValue)> = (0..70)
            .map(|i| {
                let name = HeaderName::from_bytes(format!("x-s-{i}").as_bytes()).unwrap();
                (name, HeaderValue::from(i))
            })
            .collect();
        let mut answer = HeaderMap::new();
        answer.insert("x-s-3", HeaderValue::from_static("app"));
        answer.insert("x-s-66", HeaderValue::from_static("app"));
        let (mut fast, mut slow) = (answer.clone(), answer);
        add_security_headers(&mut fast, &many);
        reference(&mut slow, &many);
        assert_eq!(fields(&fast), fields(&slow));
        assert_eq!(fast.len(), 70);
    }
}
