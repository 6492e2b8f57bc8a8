//! [`RequestContext`]: what Tern knows of a request (its ID, its client,
//! its route parameters, the app's settings and configuration), as a
//! handle a handler can keep and move into a task.
//!
//! The framework keeps these values in the request's extensions, so
//! middleware, tower layers and extractors find them wherever the request
//! is handled, also on a task a layer hands it to. Work a handler starts
//! on a task of its own has no request: it takes a `RequestContext`
//! along, reads the values from it, and runs under
//! [`spawn`](RequestContext::spawn), [`spawn_blocking`](RequestContext::spawn_blocking)
//! or [`scope`](RequestContext::scope) so that what Tern's batteries read
//! without a request (the configuration an answer of `tern-contract`
//! consults, the routes of the API document) is the request's app there
//! too.
//!
//! Taking one clones the values once (a few reference counts and the
//! route parameters, usually inline); a handler that does not take it
//! pays nothing.

use std::{borrow::Cow, fmt, future::Future, net::SocketAddr, sync::Arc};

use http::request::Parts;
use tern_core::{extract::FromRequestParts, Request};

use crate::{context::Ctx, extract::Rejection, Config, Shutdown};

/// The request's framework values, to keep past the handler's return or
/// move into another task: `Clone + Send + Sync + 'static`, cheap to
/// clone (a reference count).
///
/// Take it as an extractor, or from a request in middleware with
/// [`RequestContext::of`]. It reads the request's ID, client address and
/// route parameters, and the app's settings and configuration, as they
/// were when it was taken (route parameters are known once the request is
/// routed: an app-wide [`layer`](crate::App::layer) sees none).
///
/// ```
/// use serde::Deserialize;
/// use tern::{routing::get, test::TestClient, App, Config, RequestContext};
///
/// #[derive(Deserialize)]
/// struct Mail { from: String }
///
/// async fn confirm(ctx: RequestContext) -> String {
///     // The work goes on in a task of its own, which keeps the
///     // request's context.
///     let task = ctx.clone();
///     let sent = ctx.spawn(async move {
///         let mail = task.settings::<Mail>().expect("the app loads `Mail`");
///         format!(
///             "order {} confirmed by {} (request {})",
///             task.param("id").unwrap_or("?"),
///             mail.from,
///             task.request_id().len(),
///         )
///     });
///     sent.await.unwrap_or_default()
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let config = Config::from_settings([("MAIL_FROM", "shop@example.com")]).unwrap();
/// let app = App::new()
///     .settings::<Mail>("mail")
///     .route("/orders/{id}/confirm", get(confirm));
/// let client = TestClient::from_service(app.build_with(config).unwrap());
/// let res = client.get("/orders/7/confirm").send().await;
/// assert_eq!(res.text(), "order 7 confirmed by shop@example.com (request 32)");
/// # }
/// ```
#[derive(Clone)]
pub struct RequestContext {
    ctx: Arc<Ctx>,
}

impl RequestContext {
    /// The context of `req`, for middleware (which gets the request
    /// rather than extractors); `None` if no Tern app received `req`.
    pub fn of(req: &Request) -> Option<Self> {
        crate::context::with(req.extensions(), Self::from_ctx)
    }

    fn from_ctx(ctx: &Ctx) -> Self {
        RequestContext {
            ctx: Arc::new(ctx.clone()),
        }
    }

    /// The request's ID: the trusted incoming one or the one Tern made,
    /// as the response's `x-request-id` carries it.
    pub fn request_id(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.ctx.request_id.as_bytes())
    }

    /// The TCP peer's address (proxy headers ignored; see
    /// [`ClientIp`](crate::extract::ClientIp) for the client's); `None`
    /// when the app was called without one.
    pub fn peer(&self) -> Option<SocketAddr> {
        self.ctx.peer
    }

    /// The route parameter `name`, percent-decoded (a host pattern's
    /// parameters too); `None` if the route has no such parameter or the
    /// request was not routed yet.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Every route parameter as `(name, value)`: the host pattern's, then
    /// the path's, each in pattern order.
    pub fn params(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.ctx.params.iter()
    }

    /// The app's settings `T` ([`App::settings`](crate::App::settings));
    /// `None` if the app loads no `T`.
    pub fn settings<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.ctx.shared.settings.get::<T>()
    }

    /// The configuration of the app serving the request.
    pub fn config(&self) -> &Config {
        &self.ctx.shared.config
    }

    /// The server's shutdown, to hold a drain open while the work lasts
    /// (see [`Shutdown`]).
    pub fn shutdown(&self) -> Shutdown {
        Shutdown::of(self.ctx.drain.clone())
    }

    /// `fut`, polled with this request's app current, so that what Tern
    /// reads without a request (the configuration an answer of
    /// `tern-contract` consults, the API document's routes) finds it.
    /// For a future that runs off the request's own task; the handler's
    /// own future needs no scope.
    ///
    /// Called while the request is answered, its log lines carry the
    /// request's fields too (`crate::log`).
    pub fn scope<F: Future>(&self, fut: F) -> impl Future<Output = F::Output> {
        crate::log::carry(crate::context::scoped(Arc::clone(&self.ctx.shared), fut))
    }

    /// Runs `f` with this request's app current (see
    /// [`scope`](RequestContext::scope)).
    pub fn sync_scope<R>(&self, f: impl FnOnce() -> R) -> R {
        let mut app = Some(Arc::clone(&self.ctx.shared));
        let _entered = crate::context::enter(&mut app);
        f()
    }

    /// Spawns `fut` on the Tokio runtime, in this request's
    /// [`scope`](RequestContext::scope). Needs a Tokio runtime, as
    /// `tokio::spawn` does.
    pub fn spawn<F>(&self, fut: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        use tracing::Instrument as _;
        tokio::spawn(self.scope(fut).instrument(self.ctx.span.clone()))
    }

    /// The request's span (target `tern::request`: method, route, request
    /// ID, client, status, latency): events inside it carry its fields.
    /// Handlers and middleware run inside it already, and so do tasks
    /// started with [`spawn`](RequestContext::spawn); enter it in other
    /// work done for the request.
    ///
    /// Tern's default log output does not need it (its lines take the
    /// request's fields from Tern's own context, [`crate::log`]) and turns
    /// it off, unless OpenTelemetry export is on: then this span is
    /// disabled. A subscriber of the app's own gets it.
    pub fn span(&self) -> &tracing::Span {
        &self.ctx.span
    }

    /// The W3C `traceparent` header for a call made while answering this
    /// request: the trace of the request's own `traceparent` (believed
    /// only from `TRUSTED_PROXIES`), or a new trace, with this request as
    /// the parent (the same value for every call of one request). With
    /// the feature `otel` and an OpenTelemetry layer recording the
    /// request, the parent is the request's exported span (its trace ID
    /// and span ID).
    pub fn traceparent(&self) -> http::HeaderValue {
        #[cfg(feature = "otel")]
        if let Some(own) = crate::otel::traceparent(&self.ctx.span) {
            return own;
        }
        crate::trace::child(
            self.ctx.traceparent.as_ref(),
            self.ctx.request_id.as_bytes(),
        )
    }

    /// Runs `f` on Tokio's blocking pool, in this request's
    /// [`scope`](RequestContext::scope). Needs a Tokio runtime, as
    /// `tokio::task::spawn_blocking` does.
    pub fn spawn_blocking<F, R>(&self, f: F) -> tokio::task::JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let this = self.clone();
        let mut fields = crate::log::current();
        // The blocking pool's threads have no subscriber of their own
        // when the caller's is a scoped one (a test's): events go where
        // the request's go.
        let dispatch = tracing::dispatcher::get_default(Clone::clone);
        tokio::task::spawn_blocking(move || {
            tracing::dispatcher::with_default(&dispatch, || {
                let _span = this.ctx.span.enter();
                let _fields = crate::log::enter(&mut fields);
                this.sync_scope(f)
            })
        })
    }
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("request_id", &self.request_id())
            .field("peer", &self.ctx.peer)
            .field("params", &self.params().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RequestContext {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        crate::context::with(&parts.extensions, Self::from_ctx)
            .ok_or_else(|| Rejection::internal("this request was not received by a Tern app"))
    }
}
