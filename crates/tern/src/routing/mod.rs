//! Routing: which handler answers which method and path.
//!
//! Paths are matched by the `tern-router` crate: static segments,
//! parameters (`{id}`), typed constraints (`{id:u64}`, `{id:i64}`,
//! `{slug:slug}`, `{id:uuid}`), and globs (`{*path}`); at each segment a
//! static match beats a constrained one, which beats a parameter, which
//! beats a glob, and a failed branch backtracks to the next.

mod into_method_router;
pub(crate) mod method_router;
pub(crate) mod route;
pub(crate) mod table;

pub use into_method_router::IntoMethodRouter;
#[doc(hidden)]
pub use into_method_router::SameState;
pub use method_router::{
    any, delete, get, head, on, options, patch, post, put, trace, MethodRouter,
};
pub use route::{LayerBounds, Route, RouteFuture};
pub use table::TrailingSlash;
pub use tern_router::UrlError;

/// A route as the `routes` command lists it
/// ([`AppService::routes`](crate::AppService::routes)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RouteListing {
    /// The host pattern, for routes under [`App::host`](crate::App::host).
    pub host: Option<String>,
    /// The path pattern as registered (`/users/{id:u64}`).
    pub path: String,
    /// The route's name ([`App::named_route`](crate::App::named_route)).
    pub name: Option<String>,
    /// Each method's handler.
    pub methods: Vec<MethodListing>,
}

/// One method of a [`RouteListing`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MethodListing {
    /// `GET`, `POST`, ..., or `*` for a handler of any method.
    pub method: String,
    /// The handler's type name (`my_app::users::show`).
    pub handler: &'static str,
    /// The type names of the layers around this handler only (the
    /// route's, its scopes', [`App::route_layer`](crate::App::route_layer)'s),
    /// outermost first; the app's own [`App::layer`](crate::App::layer)s
    /// wrap every route and are listed by
    /// [`AppService::middleware`](crate::AppService::middleware).
    pub middleware: Vec<&'static str>,
}

/// A route as API documents (OpenAPI) see it: its pattern and what each
/// method's handler takes and answers, as the extractors and the response
/// type describe themselves (`describe` on `FromRequest`,
/// `FromRequestParts` and `IntoResponse`). Listed by
/// [`AppService::api_routes`](crate::AppService::api_routes).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ApiRoute {
    /// The host pattern, for routes under [`App::host`](crate::App::host).
    pub host: Option<String>,
    /// The path pattern as registered (`/users/{id:u64}`).
    pub path: String,
    /// Each method's operation.
    pub operations: Vec<(http::Method, tern_core::doc::Operation)>,
}
