//! Turning handler results into responses.

use std::convert::Infallible;

use bytes::{Bytes, BytesMut};
use http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};

use crate::{body::Body, Response};

/// Something a handler can return.
///
/// Implemented for strings, bytes, status codes, header maps, tuples that
/// add a status or headers, `Result`, and the response types of `tern`
/// (`Json`, `Html`, `Redirect`, ...).
///
/// ```
/// use tern_core::response::IntoResponse;
/// use http::StatusCode;
///
/// let res = (StatusCode::CREATED, "made").into_response();
/// assert_eq!(res.status(), 201);
/// assert_eq!(res.headers()["content-type"], "text/plain; charset=utf-8");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a handler",
    note = "return a type that implements `IntoResponse`: a `String`, `&'static str`, `Json<T>`, `Html<T>`, `StatusCode`, a tuple such as `(StatusCode, T)`, or a `Result` of those"
)]
pub trait IntoResponse {
    /// Whether the response is negotiated: it depends on the request's
    /// `Accept` and `Content-Type` (a contract answered as JSON or CBOR).
    /// A handler returning such a type keeps those two headers for it, so
    /// that `into_response` can read them where the request is gone.
    /// Default `false`: nothing is kept, nothing costs.
    const NEGOTIATED: bool = false;

    /// Builds the response.
    fn into_response(self) -> Response;

    /// Describes the answers (statuses, bodies) for API documents; the
    /// default adds nothing.
    fn describe(op: &mut crate::doc::Operation) {
        let _ = op;
    }
}

/// Something that can set parts of a response (status aside): headers,
/// extensions. Used in tuples such as `(HeaderMap, T)` or
/// `(StatusCode, [(HeaderName, V); N], T)`.
///
/// Headers can be given as a [`HeaderMap`] or as an array of
/// `(HeaderName, V)` where `V` is a [`HeaderValue`], a `&'static str` or a
/// `String` (a `String` that is not a valid header value makes the answer
/// a `500` naming the header; for a borrowed `&str`, `.to_owned()` it):
///
/// ```
/// use tern_core::{response::IntoResponse, Response};
/// use http::{header, StatusCode};
///
/// fn created(id: u64) -> Response {
///     let location = format!("/items/{id}");
///     (StatusCode::CREATED, [(header::LOCATION, location)], "created").into_response()
/// }
/// assert_eq!(created(7).headers()[header::LOCATION], "/items/7");
/// ```
pub trait IntoResponseParts {
    /// Adds itself to the response.
    fn into_response_parts(self, res: &mut Response);
}

const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
const OCTET: HeaderValue = HeaderValue::from_static("application/octet-stream");

fn with_type(body: Body, content_type: HeaderValue) -> Response {
    let mut res = Response::new(body);
    res.headers_mut().insert(header::CONTENT_TYPE, content_type);
    res
}

impl IntoResponse for Response {
    #[inline]
    fn into_response(self) -> Response {
        self
    }
}

impl IntoResponse for Body {
    fn into_response(self) -> Response {
        Response::new(self)
    }
}

impl IntoResponse for () {
    fn into_response(self) -> Response {
        Response::new(Body::empty())
    }
}

impl IntoResponse for Infallible {
    fn into_response(self) -> Response {
        match self {}
    }
}

impl IntoResponse for &'static str {
    #[inline]
    fn into_response(self) -> Response {
        with_type(Body::from(self), TEXT)
    }
}

impl IntoResponse for String {
    #[inline]
    fn into_response(self) -> Response {
        with_type(Body::from(self), TEXT)
    }
}

impl IntoResponse for std::borrow::Cow<'static, str> {
    fn into_response(self) -> Response {
        match self {
            std::borrow::Cow::Borrowed(s) => s.into_response(),
            std::borrow::Cow::Owned(s) => s.into_response(),
        }
    }
}

impl IntoResponse for Bytes {
    fn into_response(self) -> Response {
        with_type(Body::from(self), OCTET)
    }
}

impl IntoResponse for BytesMut {
    fn into_response(self) -> Response {
        self.freeze().into_response()
    }
}

impl IntoResponse for Vec<u8> {
    fn into_response(self) -> Response {
        with_type(Body::from(self), OCTET)
    }
}

impl IntoResponse for &'static [u8] {
    fn into_response(self) -> Response {
        with_type(Body::from(self), OCTET)
    }
}

impl IntoResponse for StatusCode {
    fn into_response(self) -> Response {
        let mut res = Response::new(Body::empty());
        *res.status_mut() = self;
        res
    }
}

impl IntoResponse for HeaderMap {
    fn into_response(self) -> Response {
        let mut res = Response::new(Body::empty());
        *res.headers_mut() = self;
        res
    }
}

impl<T: IntoResponse, E: IntoResponse> IntoResponse for Result<T, E> {
    const NEGOTIATED: bool = T::NEGOTIATED || E::NEGOTIATED;

    fn describe(op: &mut crate::doc::Operation) {
        T::describe(op);
        E::describe(op);
    }

    #[inline]
    fn into_response(self) -> Response {
        match self {
            Ok(t) => t.into_response(),
            Err(e) => e.into_response(),
        }
    }
}

impl IntoResponseParts for HeaderMap {
    fn into_response_parts(self, res: &mut Response) {
        res.headers_mut().extend(self);
    }
}

impl<const N: usize> IntoResponseParts for [(HeaderName, HeaderValue); N] {
    fn into_response_parts(self, res: &mut Response) {
        for (name, value) in self {
            res.headers_mut().insert(name, value);
        }
    }
}

/// Static header values, without a copy.
impl<const N: usize> IntoResponseParts for [(HeaderName, &'static str); N] {
    fn into_response_parts(self, res: &mut Response) {
        for (name, value) in self {
            res.headers_mut()
                .insert(name, HeaderValue::from_static(value));
        }
    }
}

/// Header values as `String`s (`[(header::LOCATION, url)]`); a value that
/// is not a valid header value turns the answer into a `500` naming the
/// header.
impl<const N: usize> IntoResponseParts for [(HeaderName, String); N] {
    fn into_response_parts(self, res: &mut Response) {
        for (name, value) in self {
            if !insert_header(res, name, HeaderValue::try_from(value)) {
                return;
            }
        }
    }
}

/// Sets one header, or turns the answer into a `500` naming it when its
/// value is not a valid header value (false).
fn insert_header(
    res: &mut Response,
    name: HeaderName,
    value: Result<HeaderValue, http::header::InvalidHeaderValue>,
) -> bool {
    match value {
        Ok(value) => {
            res.headers_mut().insert(name, value);
            true
        }
        Err(_) => {
            *res = crate::Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
                .with_detail(format!(
                    "the handler set the header `{name}` to a value that is not a valid header value"
                ))
                .into_response();
            res.extensions_mut().insert(PartFailed);
            false
        }
    }
}

/// Marks an answer that a response part turned into a `500`: a tuple's
/// status does not override it.
#[derive(Clone, Copy)]
struct PartFailed;

impl IntoResponseParts for http::Extensions {
    fn into_response_parts(self, res: &mut Response) {
        res.extensions_mut().extend(self);
    }
}

impl<T: IntoResponse> IntoResponse for (StatusCode, T) {
    const NEGOTIATED: bool = T::NEGOTIATED;

    fn describe(op: &mut crate::doc::Operation) {
        T::describe(op);
    }

    #[inline]
    fn into_response(self) -> Response {
        let mut res = self.1.into_response();
        *res.status_mut() = self.0;
        res
    }
}

macro_rules! tuple_parts {
    ($($p:ident),+) => {
        impl<$($p: IntoResponseParts,)+ T: IntoResponse> IntoResponse for ($($p,)+ T) {
            const NEGOTIATED: bool = T::NEGOTIATED;

            fn describe(op: &mut crate::doc::Operation) {
                T::describe(op);
            }

            #[allow(non_snake_case)]
            fn into_response(self) -> Response {
                let ($($p,)+ t) = self;
                let mut res = t.into_response();
                $($p.into_response_parts(&mut res);)+
                res
            }
        }
        impl<$($p: IntoResponseParts,)+ T: IntoResponse> IntoResponse for (StatusCode, $($p,)+ T) {
            const NEGOTIATED: bool = T::NEGOTIATED;

            fn describe(op: &mut crate::doc::Operation) {
                T::describe(op);
            }

            #[allow(non_snake_case)]
            fn into_response(self) -> Response {
                let (status, $($p,)+ t) = self;
                let mut res = t.into_response();
                $($p.into_response_parts(&mut res);)+
                // A part that could not be set made the answer a 500.
                if res.extensions().get::<PartFailed>().is_none() {
                    *res.status_mut() = status;
                }
                res
            }
        }
    };
}
tuple_parts!(P1);
tuple_parts!(P1, P2);
tuple_parts!(P1, P2, P3);
