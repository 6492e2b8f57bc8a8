//! Response types: [`Html`], [`Redirect`], [`StreamResponse`] (a streamed
//! body), and the [`IntoResponse`] trait.

use http::{header, HeaderValue, StatusCode};
pub use tern_core::response::{IntoResponse, IntoResponseParts};
use tern_core::{body::Body, Problem, Response};

pub use crate::json::Json;

/// An HTML response (`text/html; charset=utf-8`).
///
/// ```
/// use tern::response::Html;
/// async fn home() -> Html<&'static str> { Html("<h1>Tern</h1>") }
/// # let _: tern::routing::MethodRouter = tern::routing::get(home);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Html<T>(pub T);

impl<T: Into<Body>> IntoResponse for Html<T> {
    fn into_response(self) -> Response {
        let mut res = Response::new(self.0.into());
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        res
    }
}

/// A redirect: `303 See Other` (after a form), `307` (temporary, same
/// method) or `308` (permanent, same method).
#[derive(Debug, Clone)]
pub struct Redirect {
    status: StatusCode,
    location: Result<HeaderValue, String>,
}

impl Redirect {
    fn new(status: StatusCode, uri: &str) -> Self {
        Redirect {
            status,
            location: HeaderValue::try_from(uri).map_err(|_| uri.to_owned()),
        }
    }

    /// `303 See Other`: the client follows with a `GET`.
    pub fn to(uri: &str) -> Self {
        Redirect::new(StatusCode::SEE_OTHER, uri)
    }

    /// `307 Temporary Redirect`: same method and body.
    pub fn temporary(uri: &str) -> Self {
        Redirect::new(StatusCode::TEMPORARY_REDIRECT, uri)
    }

    /// `308 Permanent Redirect`: same method and body.
    pub fn permanent(uri: &str) -> Self {
        Redirect::new(StatusCode::PERMANENT_REDIRECT, uri)
    }
}

impl IntoResponse for Redirect {
    fn into_response(self) -> Response {
        match self.location {
            Ok(location) => {
                let mut res = self.status.into_response();
                res.headers_mut().insert(header::LOCATION, location);
                res
            }
            Err(uri) => Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
                .with_detail(format!(
                    "the redirect target `{uri}` is not a valid header value"
                ))
                .into_response(),
        }
    }
}

/// A response whose body is streamed: each chunk a stream yields is sent
/// as it comes (chunked over HTTP/1.1), with a `Content-Type` of
/// `application/octet-stream` unless [`content_type`](Self::content_type)
/// sets another.
///
/// ```
/// use tern::response::StreamResponse;
/// use futures_util::stream;
///
/// async fn numbers() -> StreamResponse {
///     let lines = (0..3).map(|i| Ok::<_, std::io::Error>(format!("{i}\n")));
///     StreamResponse::new(stream::iter(lines)).content_type("text/plain; charset=utf-8")
/// }
/// # let _: tern::routing::MethodRouter = tern::routing::get(numbers);
/// ```
#[derive(Debug)]
pub struct StreamResponse {
    body: Body,
    content_type: Option<HeaderValue>,
}

impl StreamResponse {
    /// A stream of chunks (`String`, `Vec<u8>`, `Bytes`, ...).
    pub fn new<S, T, E>(stream: S) -> Self
    where
        S: futures_util::Stream<Item = Result<T, E>> + Send + 'static,
        T: Into<bytes::Bytes> + 'static,
        E: Into<tern_core::BoxError> + 'static,
    {
        StreamResponse {
            body: Body::from_stream(stream),
            content_type: None,
        }
    }

    /// Sets the `Content-Type` (default `application/octet-stream`).
    pub fn content_type(mut self, value: &'static str) -> Self {
        self.content_type = Some(HeaderValue::from_static(value));
        self
    }
}

impl IntoResponse for StreamResponse {
    fn into_response(self) -> Response {
        let mut res = Response::new(self.body);
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            self.content_type
                .unwrap_or(HeaderValue::from_static("application/octet-stream")),
        );
        res
    }
}
