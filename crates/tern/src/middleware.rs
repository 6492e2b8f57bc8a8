//! Middleware: async functions or tower layers around handlers.
//!
//! Both kinds attach the same way, and where they attach decides whether
//! they run before or after routing:
//!
//! | attached with | runs | for |
//! |---|---|---|
//! | [`App::layer`](crate::App::layer) | before routing, for every request (also future `404`s and `405`s) | logging, CORS, compression, timeouts |
//! | [`App::route_layer`](crate::App::route_layer) | after routing, for every matched route and method | authentication, authorization |
//! | [`Scope::route_layer`](crate::Scope::route_layer) | after routing, for the scope's matched routes and methods | auth of one part of the app |
//! | [`MethodRouter::layer`](crate::routing::MethodRouter::layer) | after routing, for one path's matched methods | per-route limits, timeouts |
//!
//! Outer to inner: app layers, route layers, scope layers (outer scopes
//! first), the path's own layers, the handler. Within one list, layers
//! added later run first. Chains are composed once when the app is built.
//!
//! Put authentication after routing: as an app `layer`, an unauthenticated
//! `POST /nope` gets `401` instead of `404`, and a `PATCH` on a `GET`
//! route `401` instead of `405`.
//!
//! ```
//! use tern::{App, Request, Response, middleware::{from_fn, Next}, routing::get};
//!
//! async fn timing(req: Request, next: Next) -> Response {
//!     let start = std::time::Instant::now();
//!     let mut res = next.run(req).await;
//!     let ms = start.elapsed().as_millis().to_string();
//!     res.headers_mut().insert("x-elapsed-ms", ms.parse().unwrap());
//!     res
//! }
//!
//! let app = App::new().route("/", get(|| async { "hi" })).layer(from_fn(timing));
//! # let _ = app.build().unwrap();
//! ```

use std::{
    convert::Infallible,
    fmt,
    future::Future,
    task::{Context, Poll},
};

use tern_core::{response::IntoResponse, Request, Response};
use tower_layer::Layer;
use tower_service::Service;

use crate::{handler::BoxFuture, routing::Route};

/// The rest of the chain, handed to a [`from_fn`] middleware.
#[derive(Debug, Clone)]
pub struct Next {
    route: Route,
}

impl Next {
    /// Runs the rest of the chain (inner middleware and the handler).
    pub async fn run(self, req: Request) -> Response {
        self.route.call(req).await
    }
}

/// Middleware from an async function `fn(Request, Next) -> impl IntoResponse`.
///
/// The function may answer on its own (return without calling `next`),
/// change the request before, or the response after.
pub fn from_fn<F>(f: F) -> FromFnLayer<F, ()> {
    FromFnLayer { f, state: () }
}

/// Middleware from an async function `fn(S, Request, Next)` that also gets
/// a state value.
pub fn from_fn_with_state<F, S>(state: S, f: F) -> FromFnLayer<F, WithState<S>> {
    FromFnLayer {
        f,
        state: WithState(state),
    }
}

/// The layer made by [`from_fn`].
#[derive(Clone)]
pub struct FromFnLayer<F, S> {
    f: F,
    state: S,
}

impl<F, S> fmt::Debug for FromFnLayer<F, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromFnLayer")
    }
}

impl<F: Clone, S: Clone, I> Layer<I> for FromFnLayer<F, S>
where
    I: Service<Request, Response = Response, Error = Infallible> + Clone + Send + Sync + 'static,
    I::Future: Send + 'static,
{
    type Service = FromFn<F, S>;

    fn layer(&self, inner: I) -> FromFn<F, S> {
        FromFn {
            f: self.f.clone(),
            state: self.state.clone(),
            // Erased once, here, so that a request makes no new box for it.
            next: Route::from_service(inner),
        }
    }
}

/// The service made by [`FromFnLayer`].
#[derive(Clone)]
pub struct FromFn<F, S> {
    f: F,
    state: S,
    next: Route,
}

impl<F, S> fmt::Debug for FromFn<F, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromFn")
    }
}

/// What [`from_fn`] and [`from_fn_with_state`] accept; implemented for
/// `Fn(Request, Next)` and `Fn(S, Request, Next)` async functions.
pub trait Middleware<S>: Clone + Send + Sync + 'static {
    /// Runs the middleware.
    fn call(&self, state: S, req: Request, next: Next) -> BoxFuture;
}

impl<F, Fut, R> Middleware<()> for F
where
    F: Fn(Request, Next) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoResponse,
{
    fn call(&self, _: (), req: Request, next: Next) -> BoxFuture {
        let fut = self(req, next);
        Box::pin(async move { fut.await.into_response() })
    }
}

/// Marks middleware functions that take a state argument.
#[derive(Debug, Clone)]
pub struct WithState<S>(pub S);

impl<F, Fut, R, S> Middleware<WithState<S>> for F
where
    F: Fn(S, Request, Next) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoResponse,
    S: Send + 'static,
{
    fn call(&self, state: WithState<S>, req: Request, next: Next) -> BoxFuture {
        let fut = self(state.0, req, next);
        Box::pin(async move { fut.await.into_response() })
    }
}

impl<F, S> Service<Request> for FromFn<F, S>
where
    S: Clone + Send + Sync + 'static,
    F: Middleware<S>,
{
    type Response = Response;
    type Error = Infallible;
    type Future =
        futures_util::future::Map<BoxFuture, fn(Response) -> Result<Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        use futures_util::FutureExt;
        let next = Next {
            route: self.next.clone(),
        };
        self.f.call(self.state.clone(), req, next).map(Ok)
    }
}
