use http::{request::Parts, StatusCode};
use tern_core::{
    extract::{FromRequestParts, OptionalFromRequestParts},
    response::{IntoResponse, IntoResponseParts},
    Response,
};

use super::Rejection;

/// A header parsed into its type from the [`headers`](crate::headers)
/// crate (`UserAgent`, `ContentType`, `Authorization<Bearer>`,
/// `IfNoneMatch`, ...).
///
/// As an extractor, a missing header is a `400` naming it, and so is a
/// malformed one. `Option<TypedHeader<T>>` is `None` when the header is
/// absent, and still the `400` when it is malformed. As a response part
/// or response, it sets the header.
///
/// ```
/// use tern::{extract::TypedHeader, headers::UserAgent};
///
/// async fn ua(TypedHeader(agent): TypedHeader<UserAgent>) -> String {
///     agent.to_string()
/// }
/// # let _: tern::routing::MethodRouter = tern::routing::get(ua);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct TypedHeader<T>(pub T);

impl<T, S> FromRequestParts<S> for TypedHeader<T>
where
    T: headers::Header + Send,
    S: Send + Sync,
{
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        let name = T::name();
        let mut values = parts.headers.get_all(name).iter().peekable();
        if values.peek().is_none() {
            return Err(Rejection::missing(
                StatusCode::BAD_REQUEST,
                format!("the `{name}` header is missing"),
            )
            .with_field(name.as_str()));
        }
        T::decode(&mut values).map(TypedHeader).map_err(|_| {
            Rejection::invalid(
                StatusCode::BAD_REQUEST,
                format!("the `{name}` header is malformed"),
            )
            .with_field(name.as_str())
        })
    }
}

/// `None` when the header is absent; a malformed one is the `400` of
/// `TypedHeader<T>`, not `None`.
impl<T, S> OptionalFromRequestParts<S> for TypedHeader<T>
where
    T: headers::Header + Send,
    S: Send + Sync,
{
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Option<Self>, Rejection> {
        if !parts.headers.contains_key(T::name()) {
            return Ok(None);
        }
        <Self as FromRequestParts<S>>::from_request_parts(parts, state)
            .await
            .map(Some)
    }
}

impl<T: headers::Header> IntoResponseParts for TypedHeader<T> {
    fn into_response_parts(self, res: &mut Response) {
        let mut values = Vec::new();
        self.0.encode(&mut values);
        let name = T::name();
        res.headers_mut().remove(name);
        for value in values {
            res.headers_mut().append(name, value);
        }
    }
}

impl<T: headers::Header> IntoResponse for TypedHeader<T> {
    fn into_response(self) -> Response {
        let mut res = ().into_response();
        self.into_response_parts(&mut res);
        res
    }
}
