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
