//! The extractor traits: how handler arguments are built from a request.
//!
//! # `Option<T>` and `Result<T, R>`
//!
//! `Option<T>` is `None` only when what `T` reads is *absent*: no such
//! header, no query string, no session cookie. When it is there but
//! invalid (a malformed header, a query that does not parse, a session
//! store that cannot be reached), the handler does not run and the client
//! gets `T`'s rejection, as it would without the `Option`: a mistake is
//! never silently read as "not sent". An extractor says what absent means
//! by implementing [`OptionalFromRequestParts`] (or
//! [`OptionalFromRequest`] for one that reads the body); `Option<T>` of
//! any other `T` does not compile.
//!
//! `Result<T, R>`, with `R` the rejection of `T`, never fails: the
//! handler gets every rejection of `T` and decides what each means.
//!
//! ```
//! use tern_core::extract::{FromRequestParts, OptionalFromRequestParts};
//! use tern_core::Problem;
//! use http::{request::Parts, StatusCode};
//!
//! /// The `x-tenant` header, a lowercase name.
//! struct Tenant(String);
//!
//! fn tenant(parts: &Parts) -> Result<Option<Tenant>, Problem> {
//!     let Some(value) = parts.headers.get("x-tenant") else {
//!         return Ok(None);
//!     };
//!     match value.to_str() {
//!         Ok(name) if !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase()) => {
//!             Ok(Some(Tenant(name.to_owned())))
//!         }
//!         _ => Err(Problem::new(StatusCode::BAD_REQUEST)
//!             .with_detail("the `x-tenant` header must be a lowercase name")),
//!     }
//! }
//!
//! impl<S: Sync> FromRequestParts<S> for Tenant {
//!     type Rejection = Problem;
//!     async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Problem> {
//!         tenant(parts)?.ok_or_else(|| {
//!             Problem::new(StatusCode::BAD_REQUEST).with_detail("send an `x-tenant` header")
//!         })
//!     }
//! }
//!
//! // `Option<Tenant>`: `None` without the header, `400` for a bad one.
//! impl<S: Sync> OptionalFromRequestParts<S> for Tenant {
//!     type Rejection = Problem;
//!     async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Option<Self>, Problem> {
//!         tenant(parts)
//!     }
//! }
//!
//! # let mut parts = http::Request::builder().header("x-tenant", "ACME").body(()).unwrap().into_parts().0;
//! # let got = block_on(<Option<Tenant> as FromRequestParts<()>>::from_request_parts(&mut parts, &()));
//! # assert!(got.is_err());
//! # fn block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     let waker = std::task::Waker::noop();
//! #     let mut cx = std::task::Context::from_waker(&waker);
//! #     let mut f = std::pin::pin!(f);
//! #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
//! # }
//! ```

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
    note = "handler arguments are extractors: any number that read the request head (`Path<T>`, `Query<T>`, `State<T>`, `HeaderMap`, `TypedHeader<T>`, `Cookies`, `Extension<T>`, `Option<T>` of those that can be absent, ...; they implement `FromRequestParts`), then at most one that reads the body, last (`Json<T>`, `Form<T>`, `String`, `Bytes`, `Multipart`, `Request`; they implement only `FromRequest`)",
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

    /// Whether [`from_request_parts`](Self::from_request_parts)'s future
    /// is always ready at its first poll: it awaits nothing (it reads the
    /// head, the route's parameters, the app's state). A handler whose
    /// extractors all say so extracts them when it is called, and its
    /// future holds their values instead of the request: a smaller future
    /// to box, the request's head dropped at once. The default is `false`;
    /// an extractor that says `true` and is not ready at once answers
    /// `500`.
    const IMMEDIATE: bool = false;

    /// Checks, when the app is built, that this extractor can work on
    /// `route` (its path parameters, what the app provides): an error
    /// stops the build, naming the route, instead of failing every
    /// request. `Path` compares its type with the parameters, `Settings<T>`
    /// asks whether the app loads a `T`; the default accepts any route.
    fn check_route(route: &RouteCheck<'_>) -> Result<(), String> {
        let _ = route;
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
    note = "handler arguments are extractors: any number that read the request head (`Path<T>`, `Query<T>`, `State<T>`, `HeaderMap`, `TypedHeader<T>`, `Cookies`, `Extension<T>`, `Option<T>` of those that can be absent, ...; they implement `FromRequestParts`), then at most one that reads the body, last (`Json<T>`, `Form<T>`, `String`, `Bytes`, `Multipart`, `Request`; they implement only `FromRequest`)",
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

    /// Whether this extractor may keep the request, or hand it to another
    /// task, past the moment it is called (`Request` itself does: the
    /// handler may send it anywhere). When it may, the framework first puts
    /// its per-request values into the request's extensions, so that they
    /// go with it; otherwise they stay where reading them costs less. The
    /// default is the safe `true`; an extractor that only reads the
    /// request and returns a value of its own (a parsed body) says `false`.
    const KEEPS_REQUEST: bool = true;

    /// Whether this is a [`FromRequestParts`] extractor (the blanket
    /// implementation), which [`from_parts`](Self::from_parts) then runs
    /// on the request's head in place. Not for implementors: the framework
    /// reads it to skip putting the head back into a request.
    #[doc(hidden)]
    const VIA_PARTS: bool = false;

    /// A [`FromRequestParts`] extractor's
    /// [`IMMEDIATE`](FromRequestParts::IMMEDIATE) (the blanket
    /// implementation), `false` for any other. Not for implementors.
    #[doc(hidden)]
    const IMMEDIATE: bool = false;

    /// A [`FromRequestParts`] extractor's future on the head alone, `None`
    /// for any other (see [`VIA_PARTS`](Self::VIA_PARTS)). Not for
    /// implementors.
    #[doc(hidden)]
    fn from_parts<'a>(
        parts: &'a mut Parts,
        state: &'a S,
    ) -> Option<impl Future<Output = Result<Self, Self::Rejection>> + Send> {
        let _ = (parts, state);
        None::<std::future::Pending<Result<Self, Self::Rejection>>>
    }

    /// Checks, when the app is built, that this extractor can work on
    /// `route`; see [`FromRequestParts::check_route`]. The default accepts
    /// any route.
    fn check_route(route: &RouteCheck<'_>) -> Result<(), String> {
        let _ = route;
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

    const KEEPS_REQUEST: bool = false;

    const VIA_PARTS: bool = true;

    const IMMEDIATE: bool = <T as FromRequestParts<S>>::IMMEDIATE;

    fn from_parts<'a>(
        parts: &'a mut Parts,
        state: &'a S,
    ) -> Option<impl Future<Output = Result<Self, Self::Rejection>> + Send> {
        Some(<T as FromRequestParts<S>>::from_request_parts(parts, state))
    }

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

    fn check_route(route: &RouteCheck<'_>) -> Result<(), String> {
        <T as FromRequestParts<S>>::check_route(route)
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

    const IMMEDIATE: bool = true;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.method.clone())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for http::Uri {
    type Rejection = std::convert::Infallible;

    const IMMEDIATE: bool = true;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.uri.clone())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for http::Version {
    type Rejection = std::convert::Infallible;

    const IMMEDIATE: bool = true;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.version)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for http::HeaderMap {
    type Rejection = std::convert::Infallible;

    const IMMEDIATE: bool = true;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.headers.clone())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for http::Extensions {
    type Rejection = std::convert::Infallible;

    const IMMEDIATE: bool = true;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.extensions.clone())
    }
}

/// What `Option<Self>` extracts from the request head: `Ok(None)` when
/// what `Self` reads is absent, `Ok(Some(_))` when it is there and valid,
/// and `Err` when it is there but invalid (the same rejection
/// `Self` answers). See [the module docs](self).
///
/// Implemented beside [`FromRequestParts`] (`Option<Self>` needs both:
/// it takes `check_route` and `describe` from that one). Not a supertrait,
/// so that `Self::Rejection` in an impl is not ambiguous.
#[diagnostic::on_unimplemented(
    message = "`Option<{Self}>` is not an extractor: `{Self}` does not say when it is absent",
    label = "`{Self}` does not implement `OptionalFromRequestParts`",
    note = "`Option<T>` is `None` only when what `T` reads is absent (no such header, no query string, no session); an invalid one is still rejected. Extractors that can be absent implement `OptionalFromRequestParts` (`TypedHeader<T>`, `Query<T>`, `Extension<T>`, `Host`, `ClientIp`, `PeerAddr`, tern-auth's `User` and `Session`)",
    note = "for a type of your own, implement `OptionalFromRequestParts<S>` for it; to handle every rejection yourself, take `Result<{Self}, R>` with `R` its rejection type"
)]
pub trait OptionalFromRequestParts<S>: Sized {
    /// What an invalid (present but unusable) value answers.
    type Rejection: IntoResponse;

    /// Extracts `Some(Self)`, or `None` when it is absent.
    fn from_request_parts(
        parts: &mut Parts,
        state: &S,
    ) -> impl Future<Output = Result<Option<Self>, Self::Rejection>> + Send;
}

/// What `Option<Self>` extracts from the whole request (an extractor
/// that reads the body, so the last argument): `Ok(None)` when there is
/// no body for it, `Err` when there is one it cannot read. Implemented
/// beside [`FromRequest`]. See [`OptionalFromRequestParts`] and
/// [the module docs](self).
#[diagnostic::on_unimplemented(
    message = "`Option<{Self}>` is not an extractor: `{Self}` does not say when it is absent",
    label = "`{Self}` does not implement `OptionalFromRequest`",
    note = "`Option<T>` is `None` only when what `T` reads is absent; an invalid one is still rejected. Body extractors that can be absent implement `OptionalFromRequest` (`Json<T>`, `Form<T>`: no body and no `Content-Type`)",
    note = "for a type of your own, implement `OptionalFromRequest<S>` for it; to handle every rejection yourself, take `Result<{Self}, R>` with `R` its rejection type"
)]
pub trait OptionalFromRequest<S>: Sized {
    /// What an invalid (present but unusable) body answers.
    type Rejection: IntoResponse;

    /// Extracts `Some(Self)`, or `None` when it is absent.
    fn from_request(
        req: Request,
        state: &S,
    ) -> impl Future<Output = Result<Option<Self>, Self::Rejection>> + Send;
}

/// Runs `T`'s `describe` and marks what it added as optional: its query
/// and header parameters are not required, nor its body, since an
/// `Option` takes their absence. A path parameter stays required
/// (OpenAPI demands it, and the route cannot match without it).
fn describe_optional(
    op: &mut crate::doc::Operation,
    describe: impl FnOnce(&mut crate::doc::Operation),
) {
    let params = op.parameters.len();
    let had_body = op.request_body.is_some();
    describe(op);
    for param in op.parameters.iter_mut().skip(params) {
        if let Some(param) = param.as_object_mut() {
            if param.get("in").and_then(|i| i.as_str()) != Some("path") {
                param.insert("required".to_owned(), serde_json::Value::Bool(false));
            }
        }
    }
    if !had_body {
        if let Some(body) = op.request_body.as_mut().and_then(|b| b.as_object_mut()) {
            body.insert("required".to_owned(), serde_json::Value::Bool(false));
        }
    }
}

impl<S, T> FromRequestParts<S> for Option<T>
where
    S: Send + Sync,
    T: OptionalFromRequestParts<S> + FromRequestParts<S>,
{
    type Rejection = <T as OptionalFromRequestParts<S>>::Rejection;

    /// `None` when `T` is absent; `T`'s rejection when it is invalid.
    fn from_request_parts(
        parts: &mut Parts,
        state: &S,
    ) -> impl Future<Output = Result<Self, Self::Rejection>> + Send {
        <T as OptionalFromRequestParts<S>>::from_request_parts(parts, state)
    }

    /// `T`'s check: an `Option<T>` that cannot fit the route would fail
    /// or be `None` on every request.
    fn check_route(route: &RouteCheck<'_>) -> Result<(), String> {
        <T as FromRequestParts<S>>::check_route(route)
    }

    /// `T`'s description, its query and header parameters not required.
    fn describe(op: &mut crate::doc::Operation) {
        describe_optional(op, <T as FromRequestParts<S>>::describe);
    }
}

impl<S, T> FromRequest<S> for Option<T>
where
    S: Send + Sync,
    T: OptionalFromRequest<S> + FromRequest<S>,
{
    type Rejection = <T as OptionalFromRequest<S>>::Rejection;

    /// `T`'s: its optional form reads the request as `T` does.
    const KEEPS_REQUEST: bool = <T as FromRequest<S>>::KEEPS_REQUEST;

    /// `None` when there is no body for `T`; `T`'s rejection when there
    /// is one it cannot read.
    fn from_request(
        req: Request,
        state: &S,
    ) -> impl Future<Output = Result<Self, Self::Rejection>> + Send {
        <T as OptionalFromRequest<S>>::from_request(req, state)
    }

    fn check_route(route: &RouteCheck<'_>) -> Result<(), String> {
        <T as FromRequest<S>>::check_route(route)
    }

    /// `T`'s description, its body not required.
    fn describe(op: &mut crate::doc::Operation) {
        describe_optional(op, <T as FromRequest<S>>::describe);
    }
}

impl<S, T> FromRequestParts<S> for Result<T, <T as FromRequestParts<S>>::Rejection>
where
    S: Send + Sync,
    T: FromRequestParts<S>,
{
    type Rejection = std::convert::Infallible;

    /// `T`'s: this awaits `T`'s future alone.
    const IMMEDIATE: bool = T::IMMEDIATE;

    /// `T`, or its rejection for the handler to answer; never fails.
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Ok(T::from_request_parts(parts, state).await)
    }

    fn check_route(route: &RouteCheck<'_>) -> Result<(), String> {
        T::check_route(route)
    }

    fn describe(op: &mut crate::doc::Operation) {
        T::describe(op);
    }
}

impl<S, T> FromRequest<S> for Result<T, <T as FromRequest<S>>::Rejection>
where
    S: Send + Sync,
    T: FromRequest<S>,
{
    type Rejection = std::convert::Infallible;

    const KEEPS_REQUEST: bool = T::KEEPS_REQUEST;

    /// `T`, or its rejection for the handler to answer; never fails.
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        Ok(T::from_request(req, state).await)
    }

    fn check_route(route: &RouteCheck<'_>) -> Result<(), String> {
        T::check_route(route)
    }

    fn describe(op: &mut crate::doc::Operation) {
        T::describe(op);
    }
}

impl<S: Send + Sync> FromRequest<S> for bytes::Bytes {
    type Rejection = Rejection;

    const KEEPS_REQUEST: bool = false;

    /// The whole body, read within the body limit (`413` past it).
    fn from_request(req: Request, _: &S) -> impl Future<Output = Result<Self, Rejection>> + Send {
        // The future holds the body alone, not the head.
        let body = req.into_body();
        async move {
            body.collect_bytes()
                .await
                .map_err(Rejection::from_body_error)
        }
    }
}

impl<S: Send + Sync> FromRequest<S> for String {
    type Rejection = Rejection;

    const KEEPS_REQUEST: bool = false;

    /// The body as UTF-8 text; `400` when it is not UTF-8.
    fn from_request(req: Request, _: &S) -> impl Future<Output = Result<Self, Rejection>> + Send {
        // The future holds the body alone, not the head.
        let body = req.into_body();
        async move {
            let bytes = body
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
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::doc::Operation;

    /// Describes a path, a query and a header parameter, and a body.
    struct Described;

    impl<S: Send + Sync> FromRequestParts<S> for Described {
        type Rejection = std::convert::Infallible;

        async fn from_request_parts(_: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
            Ok(Described)
        }

        fn describe(op: &mut Operation) {
            for place in ["path", "query", "header"] {
                op.parameters
                    .push(json!({"name": place, "in": place, "required": true}));
            }
            op.request_body = Some(json!({"required": true, "content": {}}));
        }
    }

    impl<S: Send + Sync> OptionalFromRequestParts<S> for Described {
        type Rejection = std::convert::Infallible;

        async fn from_request_parts(_: &mut Parts, _: &S) -> Result<Option<Self>, Self::Rejection> {
            Ok(None)
        }
    }

    #[test]
    fn an_option_describes_what_it_wraps_as_not_required() {
        let mut op = Operation::default();
        op.parameters
            .push(json!({"name": "before", "in": "query", "required": true}));
        <Option<Described> as FromRequestParts<()>>::describe(&mut op);
        let required: Vec<_> = op
            .parameters
            .iter()
            .map(|p| {
                (
                    p["name"].as_str().unwrap_or_default(),
                    p["required"].clone(),
                )
            })
            .collect();
        assert_eq!(
            required,
            [
                // Another extractor's parameter is left as it was.
                ("before", json!(true)),
                // A path parameter is always required in OpenAPI.
                ("path", json!(true)),
                ("query", json!(false)),
                ("header", json!(false)),
            ]
        );
        assert_eq!(
            op.request_body,
            Some(json!({"required": false, "content": {}}))
        );

        let mut plain = Operation::default();
        <Result<Described, std::convert::Infallible> as FromRequestParts<()>>::describe(&mut plain);
        assert_eq!(plain.parameters[1]["required"], json!(true));
    }
}

/// What an extractor's build-time check ([`FromRequestParts::check_route`])
/// knows of the route it is on: the route's path parameters and the
/// values the app provides.
///
/// ```
/// use std::any::TypeId;
/// use tern_core::extract::RouteCheck;
///
/// struct Shop;
/// let provides = |id: TypeId| id == TypeId::of::<Shop>();
/// let route = RouteCheck::new(Some(&["owner", "repo"]), &provides);
/// assert_eq!(route.params(), Some(&["owner", "repo"][..]));
/// assert!(route.provides::<Shop>());
/// assert!(!route.provides::<String>());
/// ```
#[derive(Clone, Copy)]
pub struct RouteCheck<'a> {
    params: Option<&'a [&'a str]>,
    provides: &'a (dyn Fn(std::any::TypeId) -> bool + 'a),
}

impl<'a> RouteCheck<'a> {
    /// A route with these path parameters (`None` when they are not known
    /// until a request comes: a route under a host pattern, whose
    /// parameters join the host's), in an app that provides a value of a
    /// type when `provides` says so.
    pub fn new(
        params: Option<&'a [&'a str]>,
        provides: &'a (dyn Fn(std::any::TypeId) -> bool + 'a),
    ) -> Self {
        RouteCheck { params, provides }
    }

    /// The route's path parameters in order (`["owner", "repo"]` for
    /// `/repos/{owner}/{repo}`); `None` when they are not known at build
    /// time (see [`new`](Self::new)).
    pub fn params(&self) -> Option<&'a [&'a str]> {
        self.params
    }

    /// Whether the app provides a value of type `T` to extractors (in
    /// Tern, the settings types it loads with `App::settings`).
    pub fn provides<T: 'static>(&self) -> bool {
        (self.provides)(std::any::TypeId::of::<T>())
    }
}

impl std::fmt::Debug for RouteCheck<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouteCheck")
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}
