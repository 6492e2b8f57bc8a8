//! The extractor traits: how handler arguments are built from a request.

use std::future::Future;

use http::request::Parts;

pub use crate::rejection::Rejection;
use crate::{response::IntoResponse, Request};

mod private {
    #[derive(Debug, Clone, Copy)]
    pub enum ViaParts {}
    #[derive(Debug, Clone, Copy)]
    pub enum ViaRequest {}
}

/// An extractor that needs only the request head (method, URI, headers,
/// extensions), so any number of them can run before the body is read.
///
/// `S` is the application state.
///
/// ```
/// use tern_core::{extract::FromRequestParts, Problem};
/// use http::{request::Parts, StatusCode};
///
/// /// The caller's API key, from the `x-api-key` header.
/// struct ApiKey(String);
///
/// impl<S: Sync> FromRequestParts<S> for ApiKey {
///     type Rejection = Problem;
///
///     async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Problem> {
///         parts.headers.get("x-api-key")
///             .and_then(|v| v.to_str().ok())
///             .map(|v| ApiKey(v.to_owned()))
///             .ok_or_else(|| Problem::new(StatusCode::UNAUTHORIZED)
///                 .with_detail("send your API key in the `x-api-key` header"))
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an extractor, so it cannot be a handler argument",
    label = "not an extractor of the request head",
    note = "handler arguments are extractors: any number that read the request head (`Path<T>`, `Query<T>`, `State<T>`, `HeaderMap`, `TypedHeader<T>`, `Cookies`, `Extension<T>`, `Option<T>`, ...; they implement `FromRequestParts`), then at most one that reads the body, last (`Json<T>`, `Form<T>`, `String`, `Bytes`, `Multipart`, `Request`; they implement only `FromRequest`)",
    note = "to take a type of your own, implement `FromRequestParts<S>` for it (the docs of `tern::extract::FromRequestParts` show how), or `FromRequest<S>` if it reads the body"
)]
pub trait FromRequestParts<S>: Sized {
    /// What a failed extraction answers; usually a `Problem`.
    type Rejection: IntoResponse;

    /// Extracts `Self` from the request head.
    fn from_request_parts(
        parts: &mut Parts,
        state: &S,
    ) -> impl Future<Output = Result<Self, Self::Rejection>> + Send;

    /// Checks, when the app is built, that this extractor can work on a
    /// route with these path parameters (`["owner", "repo"]` for
    /// `/repos/{owner}/{repo}`): an error stops the build, naming the
    /// route, instead of failing every request. `Path` compares its type
    /// with the parameters; the default accepts any route.
    fn check_route(params: &[&str]) -> Result<(), String> {
        let _ = params;
        Ok(())
    }

    /// Describes what this extractor takes (parameters, a body, the
    /// errors it answers) for API documents; the default adds nothing.
    fn describe(op: &mut crate::doc::Operation) {
        let _ = op;
    }
}

/// An extractor that consumes the whole request, body included; it can only
/// be a handler's last argument.
///
/// Every [`FromRequestParts`] is also a `FromRequest`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an extractor, so it cannot be a handler argument",
    label = "not an extractor",
    note = "handler arguments are extractors: any number that read the request head (`Path<T>`, `Query<T>`, `State<T>`, `HeaderMap`, `TypedHeader<T>`, `Cookies`, `Extension<T>`, `Option<T>`, ...; they implement `FromRequestParts`), then at most one that reads the body, last (`Json<T>`, `Form<T>`, `String`, `Bytes`, `Multipart`, `Request`; they implement only `FromRequest`)",
    note = "to take a type of your own, implement `FromRequestParts<S>` for it (the docs of `tern::extract::FromRequestParts` show how), or `FromRequest<S>` if it reads the body"
)]
pub trait FromRequest<S, M = private::ViaRequest>: Sized {
    /// What a failed extraction answers; usually a `Problem`.
    type Rejection: IntoResponse;

    /// Extracts `Self` from the request.
    fn from_request(
        req: Request,
        state: &S,
    ) -> impl Future<Output = Result<Self, Self::Rejection>> + Send;

    /// Checks, when the app is built, that this extractor can work on a
    /// route with these path parameters; see
    /// [`FromRequestParts::check_route`]. The default accepts any route.
    fn check_route(params: &[&str]) -> Result<(), String> {
        let _ = params;
        Ok(())
    }

    /// Describes what this extractor takes (parameters, a body, the
    /// errors it answers) for API documents; the default adds nothing.
    fn describe(op: &mut crate::doc::Operation) {
        let _ = op;
    }
}

impl<S, T> FromRequest<S, private::ViaParts> for T
where
    S: Send + Sync,
    T: FromRequestParts<S>,
{
    type Rejection = <Self as FromRequestParts<S>>::Rejection;

    fn from_request(
        req: Request,
        state: &S,
    ) -> impl Future<Output = Result<Self, Self::Rejection>> + Send {
        // Split before the future is made, which then holds the head
        // alone rather than the whole request as well: a smaller future
        // to move into the handler's box.
        let (mut parts, _) = req.into_parts();
        async move { Self::from_request_parts(&mut parts, state).await }
    }

    fn check_route(params: &[&str]) -> Result<(), String> {
        <T as FromRequestParts<S>>::check_route(params)
    }

    fn describe(op: &mut crate::doc::Operation) {
        <T as FromRequestParts<S>>::describe(op);
    }
}

impl<S: Send + Sync> FromRequest<S> for Request {
    type Rejection = std::convert::Infallible;

    async fn from_request(req: Request, _: &S) -> Result<Self, Self::Rejection> {
        Ok(req)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for http::Method {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.method.clone())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for http::Uri {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.uri.clone())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for http::Version {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.version)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for http::HeaderMap {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.headers.clone())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for http::Extensions {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.extensions.clone())
    }
}

impl<S, T> FromRequestParts<S> for Option<T>
where
    S: Send + Sync,
    T: FromRequestParts<S>,
{
    type Rejection = std::convert::Infallible;

    /// `None` when `T` is rejected; never fails.
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Ok(T::from_request_parts(parts, state).await.ok())
    }

    /// `T`'s check: an `Option<Path<T>>` that cannot fit the route would
    /// be `None` on every request.
    fn check_route(params: &[&str]) -> Result<(), String> {
        T::check_route(params)
    }
}

impl<S: Send + Sync> FromRequest<S> for bytes::Bytes {
    type Rejection = Rejection;

    /// The whole body, read within the body limit (`413` past it).
    async fn from_request(req: Request, _: &S) -> Result<Self, Rejection> {
        req.into_body()
            .collect_bytes()
            .await
            .map_err(Rejection::from_body_error)
    }
}

impl<S: Send + Sync> FromRequest<S> for String {
    type Rejection = Rejection;

    /// The body as UTF-8 text; `400` when it is not UTF-8.
    async fn from_request(req: Request, _: &S) -> Result<Self, Rejection> {
        let bytes = req
            .into_body()
            .collect_bytes()
            .await
            .map_err(Rejection::from_body_error)?;
        String::from_utf8(bytes.to_vec()).map_err(|e| {
            Rejection::invalid(
                http::StatusCode::BAD_REQUEST,
                format!(
                    "the request body is not UTF-8 (invalid byte at offset {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        })
    }
}
