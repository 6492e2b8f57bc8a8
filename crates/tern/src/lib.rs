//! Tern: the fastest honest web framework for Rust, with the batteries a
//! product team needs.
//!
//! ```
//! use serde::Deserialize;
//! use tern::{App, Json, extract::{Path, Query}, routing::get, test::TestClient};
//!
//! #[derive(Deserialize)]
//! struct Page { page: Option<u32> }
//!
//! async fn hello() -> &'static str { "Hello, World!" }
//!
//! async fn user(Path(id): Path<u64>, Query(p): Query<Page>) -> Json<serde_json::Value> {
//!     Json(serde_json::json!({ "id": id, "page": p.page.unwrap_or(1) }))
//! }
//!
//! fn app() -> App {
//!     App::new()
//!         .route("/", get(hello))
//!         .route("/users/{id:u64}", get(user))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // In-process, the way your tests do it:
//! let client = TestClient::new(app());
//! assert_eq!(client.get("/").send().await.text(), "Hello, World!");
//! let res = client.get("/users/7?page=2").send().await;
//! assert_eq!(res.text(), r#"{"id":7,"page":2}"#);
//! let res = client.get("/users/7?page=two").send().await;
//! assert_eq!(res.status(), 400); // problem+json naming `page`
//! # }
//! ```
//!
//! To serve it, from a plain `fn main` (the address is `TERN_ADDR`,
//! default `127.0.0.1:3000`; Ctrl-C or `SIGTERM` drains and stops):
//!
//! ```no_run
//! # fn app() -> tern::App { tern::App::new() }
//! fn main() -> Result<(), tern::Error> {
//!     tern::run(app())
//! }
//! ```
//!
//! or, from async code such as `#[tokio::main]`, on that runtime:
//!
//! ```no_run
//! # fn app() -> tern::App { tern::App::new() }
//! #[tokio::main]
//! async fn main() -> Result<(), tern::Error> {
//!     tern::serve(app()).await
//! }
//! ```
//!
//! # The pieces
//! - [`App`]: routes ([`routing`]), scopes, middleware, state; built once
//!   into an [`AppService`] that every connection shares.
//! - [`extract`]: typed handler arguments ([`Path`](extract::Path),
//!   [`Query`](extract::Query), [`Json`], [`Form`](extract::Form),
//!   [`State`](extract::State), ...); each rejection is a problem+json.
//! - [`response`]: what handlers return ([`IntoResponse`]).
//! - [`middleware`]: async-fn middleware and tower layers, global, per
//!   scope or per route.
//! - [`Config`]: typed settings from the environment or `tern.toml`;
//!   production refuses weak secrets.
//! - [`run`] and [`Server`]: hyper underneath, HTTP/1.1 (keep-alive,
//!   pipelining) and HTTP/2, limits, timeouts, graceful shutdown.
//! - [`upgrade`]: the connection after a `101` (WebSockets, tunnels),
//!   still under the connection limit, with idle and write timeouts.
//! - [`test::TestClient`]: in-process requests for your tests.
//! - [`Problem`]: RFC 9457 errors; every error a client sees is one.
//!
//! # Errors a client can see
//! Every rejection and framework error is `application/problem+json` with
//! a `detail` that says what was wrong: `404` for an unknown path, `405`
//! with `Allow` for a known path and wrong method, `400` for a malformed
//! parameter, `413`, `415`, `422`, `500` for a panicking handler (the
//! server keeps serving), `503` past the request timeout. Replace the
//! rendering with [`App::problem_renderer`].

mod app;
pub mod config;
mod context;
mod drain;
pub mod extract;
mod handler;
mod json;
pub mod middleware;
pub mod net;
pub mod response;
pub mod routing;
mod server;
pub mod settings;
pub mod test;
#[cfg(feature = "tls")]
mod tls;
pub mod upgrade;

pub use app::{App, AppService, BuildError, ResponseFuture, Scope};
pub use config::Config;
pub use drain::{DrainGuard, Shutdown};
pub use handler::Handler;
pub use json::Json;
pub use response::IntoResponse;
pub use server::{run, serve, shutdown_signal, Error, Server};

/// For Tern's fuzz targets; not a public API.
#[doc(hidden)]
pub mod __fuzz {
    pub use crate::server::fuzz_framing as framing;
}
pub use tern_core::{body, Problem, Request, Response};

#[doc(no_inline)]
pub use bytes::Bytes;
/// Typed headers for [`TypedHeader`](extract::TypedHeader), re-exported
/// from the `headers` crate.
pub use headers;
#[doc(no_inline)]
pub use http::{self, HeaderMap, Method, StatusCode, Uri};
