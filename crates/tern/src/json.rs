//! `Json`: a typed JSON body in, serialized JSON out.

use bytes::{BufMut, BytesMut};
use http::{header, HeaderValue, StatusCode};
use serde::{de::DeserializeOwned, Serialize};
use tern_core::{
    body::Body, extract::FromRequest, response::IntoResponse, Problem, Request, Response,
};

use crate::extract::{
    body::{has_content_type, read_body},
    Rejection,
};

/// JSON, both ways.
///
/// As an extractor: requires `Content-Type: application/json` (or a
/// `+json` type; else `415`), reads the body within the body limit
/// (`413`), answers malformed JSON with `400` and JSON of the wrong shape
/// with `422`, each with a detail naming the line and column; a `422`
/// names the value at fault by its JSON pointer in a `pointer` member
/// (`/tags/2`; a missing or unknown field under its parent: `/title`).
///
/// As a response: serializes `T` with `Content-Type: application/json` and
/// an exact `Content-Length`.
///
/// ```
/// use tern::Json;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Deserialize)]
/// struct NewUser { name: String }
/// #[derive(Serialize)]
/// struct User { id: u64, name: String }
///
/// async fn create(Json(new): Json<NewUser>) -> Json<User> {
///     Json(User { id: 1, name: new.name })
/// }
/// # let _: tern::routing::MethodRouter = tern::routing::post(create);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

impl<T, S> FromRequest<S> for Json<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Rejection;

    /// Reads the request; keeps nothing of it.
    const KEEPS_REQUEST: bool = false;

    fn from_request(
        req: Request,
        _: &S,
    ) -> impl std::future::Future<Output = Result<Self, Rejection>> + Send {
        // The head is read and dropped now: the future holds the body
        // alone, a smaller future for the handler's to hold and move.
        let body =
            has_content_type(&req, "application/json", Some("+json")).then(|| req.into_body());
        async move {
            let Some(body) = body else {
                return Err(Rejection::unsupported_media_type(
                    "expected JSON: send `Content-Type: application/json`",
                ));
            };
            let bytes = read_body(body).await?;
            Json::from_bytes(&bytes)
        }
    }

    /// A JSON body of `T`'s shape, learnt from its `Deserialize` impl
    /// (field names, types, which may be left out); a type whose shape
    /// cannot be learnt leaves the body open and the operation marked
    /// [`undescribed`](tern_core::doc::Operation::undescribed). Rules
    /// beyond the type (lengths, ranges) are `tern-contract`'s `Valid<T>`.
    fn describe(op: &mut tern_core::doc::Operation) {
        op.body_of::<T>(&["application/json"], tern_core::doc::Format::Json);
        op.problem("400", "The body is not valid JSON.");
        op.problem("413", "The body is larger than the body limit.");
        op.problem(
            "415",
            "The body is not `application/json` (or a `+json` type).",
        );
        op.problem(
            "422",
            "The JSON does not have the expected shape; `pointer` names the value at fault.",
        );
    }
}

impl<T: DeserializeOwned> Json<T> {
    /// Parses JSON bytes, with the same rejections as the extractor.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Rejection> {
        serde_json::from_slice(bytes).map(Json).map_err(|e| {
            use serde_json::error::Category;
            match e.classify() {
                Category::Data => match pointer_of::<T>(bytes) {
                    Some(pointer) => Rejection::invalid(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        format!(
                            "the JSON body does not have the expected shape at `{pointer}`: {e}"
                        ),
                    )
                    .with_pointer(&pointer),
                    None => Rejection::invalid(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        format!("the JSON body does not have the expected shape: {e}"),
                    ),
                },
                Category::Eof => Rejection::invalid(
                    StatusCode::BAD_REQUEST,
                    format!("the JSON body ends too early: {e}"),
                ),
                _ => Rejection::invalid(
                    StatusCode::BAD_REQUEST,
                    format!("the body is not valid JSON: {e}"),
                ),
            }
        })
    }
}

/// The JSON pointer (RFC 6901: `/tags/2`) of the value `bytes` gets
/// wrong for `T`. Parsed again, on the error path only, so that a body
/// that parses costs nothing more.
fn pointer_of<T: DeserializeOwned>(bytes: &[u8]) -> Option<String> {
    pointer_with::<T, _>(&mut serde_json::Deserializer::from_slice(bytes))
}

/// The JSON pointer of the value `de` gets wrong for `T`, whatever the
/// format (CBOR decoded as a generic value, say).
pub(crate) fn pointer_with<'de, T, D>(de: D) -> Option<String>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    let err = serde_path_to_error::deserialize::<_, T>(de).err()?;
    let mut pointer = String::new();
    for segment in err.path().iter() {
        use serde_path_to_error::Segment;
        pointer.push('/');
        match segment {
            Segment::Seq { index } => pointer.push_str(&index.to_string()),
            Segment::Map { key } => pointer.push_str(&key.replace('~', "~0").replace('/', "~1")),
            Segment::Enum { variant } => pointer.push_str(variant),
            Segment::Unknown => pointer.push('?'),
        }
    }
    // A missing field is reported at its parent: name it. (An unknown
    // one is in the path already.)
    let message = err.inner().to_string();
    let named = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next());
    if let Some(name) = named {
        pointer.push('/');
        pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
    }
    (!pointer.is_empty()).then_some(pointer)
}

const JSON: HeaderValue = HeaderValue::from_static("application/json");

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        let mut buf = BytesMut::with_capacity(128).writer();
        match serde_json::to_writer(&mut buf, &self.0) {
            Ok(()) => {
                let mut res = Response::new(Body::from(buf.into_inner().freeze()));
                res.headers_mut().insert(header::CONTENT_TYPE, JSON);
                res
            }
            Err(e) => Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
                .with_detail(format!("the response could not be serialized as JSON: {e}"))
                .into_response(),
        }
    }
}

impl<T> std::ops::Deref for Json<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
