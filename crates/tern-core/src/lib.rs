//! The traits and types that Tern extensions depend on.
//!
//! An extension crate (an extractor, a response type, middleware) depends
//! on `tern-core` rather than on `tern`, so that it does not pull in the
//! server. Users import the same items through `tern`.
//!
//! - [`extract`]: [`FromRequestParts`](extract::FromRequestParts) and
//!   [`FromRequest`](extract::FromRequest), how handler arguments are built;
//!   [`OptionalFromRequestParts`](extract::OptionalFromRequestParts) and
//!   [`OptionalFromRequest`](extract::OptionalFromRequest), when an
//!   `Option<T>` argument is `None` (only when `T` is absent, never when
//!   it is invalid);
//! - [`response`]: [`IntoResponse`](response::IntoResponse), what handlers
//!   return;
//! - [`Problem`]: RFC 9457 `application/problem+json`, the shape of every
//!   error a client sees;
//! - [`body::Body`]: the body type of requests and responses;
//! - [`accept`]: the one reader of `Accept` and `Accept-Encoding` (media
//!   ranges, codings, q-values), so that every crate negotiates alike.
//!
//! ```
//! use tern_core::{extract::FromRequestParts, response::IntoResponse, Problem};
//! use http::{request::Parts, StatusCode};
//!
//! /// The tenant named by the `x-tenant` header.
//! struct Tenant(String);
//!
//! impl<S: Sync> FromRequestParts<S> for Tenant {
//!     type Rejection = Problem;
//!     async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Problem> {
//!         match parts.headers.get("x-tenant").and_then(|v| v.to_str().ok()) {
//!             Some(t) => Ok(Tenant(t.to_owned())),
//!             None => Err(Problem::new(StatusCode::BAD_REQUEST)
//!                 .with_detail("the `x-tenant` header is missing")),
//!         }
//!     }
//! }
//!
//! let res = Problem::new(StatusCode::BAD_REQUEST).into_response();
//! assert_eq!(res.status(), 400);
//! ```

pub mod accept;
pub mod body;
pub mod doc;
mod error;
pub mod extract;
mod problem;
mod rejection;
pub mod response;

pub use error::{BodyError, BoxError};
pub use problem::{Problem, PROBLEM_JSON};

/// A request as handlers and middleware see it.
pub type Request<B = body::Body> = http::Request<B>;

/// A response as handlers and middleware produce it.
pub type Response<B = body::Body> = http::Response<B>;
