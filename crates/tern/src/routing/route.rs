//! `Route`: a type-erased endpoint, the unit the middleware chain is built from.

use std::{
    convert::Infallible,
    fmt,
    future::Future,
    marker::PhantomData,
    sync::Arc,
    task::{Context, Poll},
};

use bytes::Bytes;
use http::StatusCode;
use tern_core::{body::Body, response::IntoResponse, BoxError, Problem, Request, Response};
use tower::ServiceExt;
use tower_service::Service;

use crate::handler::{BoxFuture, Handler};

/// A type-erased endpoint: a handler, or a handler wrapped in middleware.
///
/// Cloning a `Route` is one reference-count increment; calling it runs the
/// composed chain. Chains are composed once, when the app is built.
#[derive(Clone)]
pub struct Route(Arc<dyn Endpoint>);

/// A link of the chain. The request comes in a slot that every link
/// reads (and may change) in place, and the link that answers takes: a
/// request is a few hundred bytes, and passing it by value through each
/// of the chain's dynamic calls copied it at every level.
pub(crate) trait Endpoint: Send + Sync + 'static {
    /// `req` holds the request; the endpoint that answers takes it.
    fn call(&self, req: &mut Option<Request>) -> BoxFuture;
}

/// The answer of an endpoint handed an empty slot (a link before it took
/// the request and passed it on anyway): a bug in the chain, answered
/// rather than a panic.
pub(crate) fn taken() -> BoxFuture {
    Box::pin(std::future::ready(
        Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
            .with_detail("the request was taken before it reached its handler")
            .into_response(),
    ))
}

impl fmt::Debug for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Route")
    }
}

impl Route {
    pub(crate) fn from_endpoint(endpoint: impl Endpoint) -> Self {
        Route(Arc::new(endpoint))
    }

    pub(crate) fn from_handler<H, T, S>(handler: H, state: S) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
        S: Clone + Send + Sync + 'static,
    {
        Route::from_endpoint(HandlerEndpoint {
            handler,
            state,
            _marker: PhantomData,
        })
    }

    /// Wraps any tower service that answers with a response.
    ///
    /// Errors become a 500 problem (a 503 for a `tower::timeout` elapsed).
    pub fn from_service<T, B>(service: T) -> Self
    where
        T: Service<Request, Response = http::Response<B>> + Clone + Send + Sync + 'static,
        T::Error: Into<BoxError>,
        T::Future: Send + 'static,
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        Route::from_endpoint(ServiceEndpoint(service))
    }

    /// Calls the endpoint with a request of its own.
    #[inline]
    pub(crate) fn call(&self, req: Request) -> BoxFuture {
        self.0.call(&mut Some(req))
    }

    /// Calls the endpoint with the request in `req` (see [`Endpoint`]).
    #[inline]
    pub(crate) fn call_in(&self, req: &mut Option<Request>) -> BoxFuture {
        self.0.call(req)
    }

    /// Wraps this route in a tower layer.
    pub(crate) fn layer<L>(self, layer: &L) -> Route
    where
        L: LayerBounds,
    {
        Route::from_service(layer.layer(self))
    }
}

/// What a tower `Layer` must satisfy to wrap Tern routes; implemented for
/// every suitable layer (you never implement it).
pub trait LayerBounds:
    tower_layer::Layer<Route, Service = Self::Out> + Clone + Send + Sync + 'static
{
    /// The wrapped service.
    type Out: Service<
            Request,
            Response = http::Response<Self::Body>,
            Error = Self::Err,
            Future = Self::Fut,
        > + Clone
        + Send
        + Sync
        + 'static;
    /// The wrapped service's response body.
    type Body: http_body::Body<Data = Bytes, Error = Self::BodyErr> + Send + 'static;
    /// The body's error.
    type BodyErr: Into<BoxError>;
    /// The service's error.
    type Err: Into<BoxError>;
    /// The service's future.
    type Fut: Future<Output = Result<http::Response<Self::Body>, Self::Err>> + Send + 'static;
}

impl<L, Svc, B> LayerBounds for L
where
    L: tower_layer::Layer<Route, Service = Svc> + Clone + Send + Sync + 'static,
    Svc: Service<Request, Response = http::Response<B>> + Clone + Send + Sync + 'static,
    Svc::Error: Into<BoxError>,
    Svc::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Out = Svc;
    type Body = B;
    type BodyErr = B::Error;
    type Err = Svc::Error;
    type Fut = Svc::Future;
}

struct HandlerEndpoint<H, T, S> {
    handler: H,
    state: S,
    _marker: PhantomData<fn() -> T>,
}

impl<H, T, S> Endpoint for HandlerEndpoint<H, T, S>
where
    H: Handler<T, S>,
    T: 'static,
    S: Clone + Send + Sync + 'static,
{
    #[inline]
    fn call(&self, req: &mut Option<Request>) -> BoxFuture {
        match req.take() {
            Some(req) => self.handler.clone().call(req, self.state.clone()),
            None => taken(),
        }
    }
}

struct ServiceEndpoint<T>(T);

impl<T, B> Endpoint for ServiceEndpoint<T>
where
    T: Service<Request, Response = http::Response<B>> + Clone + Send + Sync + 'static,
    T::Error: Into<BoxError>,
    T::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    fn call(&self, req: &mut Option<Request>) -> BoxFuture {
        // Read in its slot: each move of a request is a copy of it.
        let Some(slot) = req.as_mut() else {
            return taken();
        };
        // A tower service may keep the request, or run it on another task:
        // its context goes with it (see `context`).
        crate::context::materialize(slot.extensions_mut());
        let mut svc = self.0.clone();
        // A service ready at once (every `from_fn` middleware, most
        // layers) is called here, and only its future is boxed: a future
        // that also held the service and the request until its first poll
        // was several hundred bytes larger, and boxing copies all of it.
        // A service not ready yet has seen a waker that does nothing; the
        // future polls it again with the task's. A panic of the service's
        // `poll_ready` or `call` comes out of the future, where the app's
        // guard turns it into a `500` as before.
        let called = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            match svc.poll_ready(&mut Context::from_waker(std::task::Waker::noop())) {
                Poll::Ready(Ok(())) => Ok(req.take().map(|req| svc.call(req))),
                Poll::Ready(Err(err)) => Err(err),
                Poll::Pending => Ok(None),
            }
        }));
        match called {
            Ok(Ok(Some(fut))) => Box::pin(async move { answer(fut.await) }),
            Ok(Ok(None)) => match req.take() {
                Some(req) => Box::pin(async move { answer(svc.oneshot(req).await) }),
                None => taken(),
            },
            Ok(Err(err)) => Box::pin(std::future::ready(service_error(err.into()))),
            Err(panic) => Box::pin(futures_util::future::lazy(move |_| -> Response {
                std::panic::resume_unwind(panic)
            })),
        }
    }
}

/// A tower service's result as the chain's answer.
fn answer<B, E>(result: Result<http::Response<B>, E>) -> Response
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
    E: Into<BoxError>,
{
    match result {
        Ok(res) => res.map(Body::new),
        Err(err) => service_error(err.into()),
    }
}

pub(crate) fn service_error(err: BoxError) -> Response {
    if err.is::<tower::timeout::error::Elapsed>() {
        return Problem::new(StatusCode::SERVICE_UNAVAILABLE)
            .with_detail("the request took longer than the route's time limit")
            .into_response();
    }
    tracing::error!(error = %err, "middleware failed");
    Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
        .with_detail("the server failed to answer this request")
        .into_response()
}

impl<B> Service<Request<B>> for Route
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = RouteFuture;

    #[inline]
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    #[inline]
    fn call(&mut self, req: Request<B>) -> RouteFuture {
        // A layer may poll this future on another task (`tower::buffer`,
        // a middleware that spawns `next.run(req)`): it makes the
        // request's app current itself (see `context`).
        let mut app = crate::context::with(req.extensions(), |c| Arc::clone(&c.shared));
        // Current around the call too: a handler whose extractors are
        // ready at once extracts (and answers a rejection) in it.
        let fut = {
            let _entered = crate::context::enter(&mut app);
            Route::call(self, req.map(Body::new))
        };
        RouteFuture { fut, app }
    }
}

/// The future of a [`Route`] called as a tower service.
pub struct RouteFuture {
    fut: BoxFuture,
    app: Option<Arc<crate::app::Shared>>,
}

impl fmt::Debug for RouteFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RouteFuture")
    }
}

impl Future for RouteFuture {
    type Output = Result<Response, Infallible>;

    #[inline]
    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let _entered = crate::context::enter(&mut this.app);
        this.fut.as_mut().poll(cx).map(Ok)
    }
}
