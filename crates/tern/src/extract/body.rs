//! Body helpers shared by the body extractors.

use bytes::Bytes;
use tern_core::Request;

use super::Rejection;

/// Reads the whole body, enforcing the body limit while reading.
pub(crate) async fn read_body(req: Request) -> Result<Bytes, Rejection> {
    req.into_body()
        .collect_bytes()
        .await
        .map_err(Rejection::from_body_error)
}
/// Whether the request's `Content-Type` is `mime` (parameters ignored).
pub(crate) fn has_content_type(req: &Request, mime: &str, suffix: Option<&str>) -> bool {
    let Some(value) = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case(mime)
        || suffix.is_some_and(|suffix| {
            essence.len() > suffix.len()
                && essence[essence.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
                && essence.contains('/')
        })
}
