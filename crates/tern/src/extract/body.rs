//! Body helpers shared by the body extractors, and what an absent body
//! is for `Option<Json<T>>` and `Option<Form<T>>`.

use bytes::Bytes;
use serde::de::DeserializeOwned;
use tern_core::{
    body::Body,
    extract::{FromRequest, OptionalFromRequest},
    Request,
};

use super::Rejection;
use crate::Json;

/// Reads the whole body, enforcing the body limit while reading.
pub(crate) async fn read_body(body: Body) -> Result<Bytes, Rejection> {
    body.collect_bytes()
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

/// The request, or `None` when it carries no body at all: no
/// `Content-Type` and not one byte. A body without a `Content-Type` is
/// still there, so it stays for the extractor to refuse (`415`) rather
/// than read as absent.
pub(crate) async fn unless_absent(req: Request) -> Result<Option<Request>, Rejection> {
    if req.headers().contains_key(http::header::CONTENT_TYPE) {
        return Ok(Some(req));
    }
    let (parts, body) = req.into_parts();
    let bytes = body
        .collect_bytes()
        .await
        .map_err(Rejection::from_body_error)?;
    if bytes.is_empty() {
        return Ok(None);
    }
    Ok(Some(Request::from_parts(parts, Body::from(bytes))))
}

/// `None` for a request with no body and no `Content-Type`; any other is
/// read as `Json<T>` reads it (`415`, `413`, `400`, `422`), never `None`.
/// (Here rather than beside `Json` in `json.rs`: it is a question about
/// the body, the same one `Option<Form<T>>` asks.)
impl<T, S> OptionalFromRequest<S> for Json<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Rejection;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Rejection> {
        match unless_absent(req).await? {
            Some(req) => <Self as FromRequest<S>>::from_request(req, state)
                .await
                .map(Some),
            None => Ok(None),
        }
    }
}
