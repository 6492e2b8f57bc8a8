//! The built app, [`AppService`], and [`ResponseFuture`], one request's
//! way through it.

use std::{
    any::Any,
    convert::Infallible,
    fmt,
    future::Future,
    net::SocketAddr,
    panic::AssertUnwindSafe,
    sync::Arc,
    task::{Context, Poll},
};

use futures_util::FutureExt;
use http::{header, HeaderValue, Method, StatusCode};
use tern_core::{body::Body, response::IntoResponse, Problem, Request, Response};

use super::{
    finish::{finish, HIDDEN_DETAIL},
    head::prepare,
    request_id::next_request_id,
    Shared,
};
use crate::{
    config::Config,
    context::RequestIdValue,
    metrics::{
        http::{method_index, Answer, Reason},
        route,
    },
    routing::Route,
};

pub(super) struct AppInner {
    pub(super) chain: Route,
    pub(super) shared: Arc<Shared>,
    pub(super) listing: Vec<crate::routing::RouteListing>,
    pub(super) middleware: Vec<&'static str>,
}

/// A built app: the tower `Service` the server runs and the test client
/// calls.
///
/// Cloning is one reference-count increment; every connection shares the
/// same composed routes and middleware.
#[derive(Clone)]
pub struct AppService {
    pub(super) inner: Arc<AppInner>,
}

impl fmt::Debug for AppService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AppService")
    }
}

/// Finishes the answer to a request the server refused before the app
/// saw it: a fresh request ID set in its map (not left to the writer),
/// not an answer to `HEAD`, no `Accept` to choose the problem's format.
fn finish_refusal(shared: &Shared, res: &mut Response) {
    finish(shared, res, Some(next_request_id()), false, false, None);
}

impl AppService {
    /// The configuration the app was built with.
    pub fn config(&self) -> &Config {
        &self.inner.shared.config
    }

    /// The app's metrics (see [`crate::metrics`]).
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.inner.shared.metrics
    }

    /// The server's own metric cells, when `TERN_METRICS` is on.
    pub(crate) fn http_metrics(&self) -> Option<&crate::metrics::http::HttpMetrics> {
        self.inner.shared.http_metrics.as_deref()
    }

    /// What a client gets for an HTTP/1 request hyper could not parse,
    /// instead of hyper's bare `status` with an empty body: the same
    /// problem+json as every other answer, with a request ID and the app's
    /// renderer, as the bytes of an HTTP/1.1 response that closes the
    /// connection. `date` is hyper's `date` line. `None` for a status hyper
    /// does not send for a parse error, or a rendered body not ready at
    /// once (hyper's answer then goes out as it is).
    pub(crate) fn unparsable_answer(&self, status: StatusCode, date: &[u8]) -> Option<Vec<u8>> {
        let shared = &self.inner.shared;
        let limits = &shared.config.limits;
        let detail = match status.as_u16() {
            400 => "the request is not a valid HTTP/1.1 request: it must start with a request \
                    line `METHOD /path HTTP/1.1`, then header lines `Name: value`, each ended \
                    by CRLF, then an empty line"
                .to_owned(),
            414 => "the request target (path and query) is too long".to_owned(),
            431 => format!(
                "the request head is larger than the limit of {} bytes (TERN_MAX_HEAD_BYTES) \
                 or has more than {} header fields (TERN_MAX_HEADERS)",
                limits.max_head_bytes, limits.max_headers
            ),
            _ => return None,
        };
        if let Some(m) = shared.http_metrics.as_deref() {
            let reason = match status.as_u16() {
                414 => Reason::UriTooLong,
                431 => Reason::HeadTooLarge,
                _ => Reason::Parse,
            };
            m.refused(reason, 7, status.as_u16());
        }
        let mut res = Problem::new(status).with_detail(detail).into_response();
        finish_refusal(shared, &mut res);
        let (parts, body) = res.into_parts();
        let body = http_body_util::BodyExt::collect(body)
            .now_or_never()?
            .ok()?
            .to_bytes();
        let mut out = Vec::with_capacity(256 + body.len());
        out.extend_from_slice(b"HTTP/1.1 ");
        out.extend_from_slice(parts.status.as_str().as_bytes());
        out.push(b' ');
        out.extend_from_slice(parts.status.canonical_reason().unwrap_or("").as_bytes());
        out.extend_from_slice(b"\r\n");
        for (name, value) in &parts.headers {
            if name == header::CONNECTION || name == header::CONTENT_LENGTH {
                continue;
            }
            out.extend_from_slice(name.as_str().as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"connection: close\r\ncontent-length: ");
        out.extend_from_slice(body.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
        if !date.is_empty() {
            out.extend_from_slice(date);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&body);
        Some(out)
    }

    /// The answer to an HTTP/1 request head Tern's codec refused
    /// (`server/h1`): the same problem+json as every other answer, with a
    /// request ID and the app's renderer; counted as a refusal. The
    /// connection closes after it.
    /// `method` is the request line's, when the head got that far.
    pub(crate) fn refusal(
        &self,
        refusal: &crate::protocol::h1::Refusal,
        method: Option<&Method>,
    ) -> Response {
        let shared = &self.inner.shared;
        if let Some(m) = shared.http_metrics.as_deref() {
            let method = method.map_or(7, method_index);
            m.refused(refusal.reason, method, refusal.status.as_u16());
        }
        let limits = &shared.config.limits;
        let detail = if refusal.status == StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE {
            // The limits' values, as the hyper path's answer gives them.
            format!(
                "the request head is larger than the limit of {} bytes (TERN_MAX_HEAD_BYTES) \
                 or has more than {} header fields (TERN_MAX_HEADERS)",
                limits.max_head_bytes, limits.max_headers
            )
        } else {
            refusal.detail.clone().into_owned()
        };
        let mut res = Problem::new(refusal.status)
            .with_detail(detail)
            .into_response();
        finish_refusal(shared, &mut res);
        res
    }

    /// The app's routes as API documents see them (`tern-contract`'s
    /// OpenAPI document is made from them), in registration order; the
    /// built-in readiness and metrics routes (`TERN_READY_PATH`,
    /// `TERN_METRICS_PATH`) are not among them.
    pub fn api_routes(&self) -> &[crate::routing::ApiRoute] {
        self.inner.shared.table.api()
    }

    /// Every route with its methods, handlers and layers, in registration
    /// order (what the `routes` command prints).
    pub fn routes(&self) -> &[crate::routing::RouteListing] {
        &self.inner.listing
    }

    /// The type names of the app's own layers ([`App::layer`](crate::App::layer)), which
    /// wrap every request, outermost first.
    pub fn middleware(&self) -> &[&'static str] {
        &self.inner.middleware
    }

    /// The settings `T` loaded by [`App::settings`](crate::App::settings), if the app loads a `T`.
    pub fn settings<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.inner.shared.settings.get::<T>()
    }

    /// The path of the route registered with
    /// [`named_route`](crate::App::named_route) as `name`, with `params`
    /// percent-encoded and checked against the route's constraints.
    pub fn url_for(
        &self,
        name: &str,
        params: &[(&str, &str)],
    ) -> Result<String, crate::routing::UrlError> {
        self.inner.shared.table.url_for(name, params)
    }

    /// Answers one request from a client at `peer`.
    ///
    /// Never fails and never panics: a panicking handler becomes a `500`
    /// problem, a handler slower than the request timeout a `503`.
    pub fn call(&self, req: Request, peer: Option<SocketAddr>) -> ResponseFuture {
        self.call_with_drain(req, peer, None)
    }

    /// [`call`](Self::call), for a server that drains (`drain`).
    pub(crate) fn call_with_drain(
        &self,
        req: Request,
        peer: Option<SocketAddr>,
        drain: Option<Arc<crate::drain::DrainState>>,
    ) -> ResponseFuture {
        self.call_inner(req, peer, drain, false)
    }

    /// [`call_with_drain`](Self::call_with_drain) for a request whose head
    /// Tern's HTTP/1 codec read (`server/h1/parse.rs`): the rules of
    /// `protocol::check_request` the codec applies itself (target form,
    /// `Host` count, transfer coding, declared length) are not applied
    /// again; the content coding, the host grammar and `ALLOWED_HOSTS`
    /// are. A request from anywhere else must take `call_with_drain`.
    ///
    /// The answer leaves its request ID to the codec's writer
    /// ([`ResponseFuture::take_request_id`]): written from there, its
    /// custom name is never hashed into the answer's map (~200
    /// instructions a request).
    pub(crate) fn call_checked(
        &self,
        req: Request,
        peer: Option<SocketAddr>,
        drain: Option<Arc<crate::drain::DrainState>>,
    ) -> ResponseFuture {
        self.call_inner(req, peer, drain, true)
    }

    fn call_inner(
        &self,
        mut req: Request,
        peer: Option<SocketAddr>,
        drain: Option<Arc<crate::drain::DrainState>>,
        from_codec: bool,
    ) -> ResponseFuture {
        let inner = Arc::clone(&self.inner);
        let metrics = inner.shared.http_metrics.as_deref();
        let state = match prepare(&inner.shared, &req, peer, drain, from_codec) {
            // Refused before routing (framing, body length, host): the
            // answer still carries a request ID, like every answer Tern makes.
            Err((mut res, reason)) => {
                if let Some(m) = metrics {
                    m.refused(reason, method_index(req.method()), res.status().as_u16());
                }
                finish_refusal(&inner.shared, &mut res);
                State::Done(Some(res))
            }
            Ok(mut ctx) => {
                let span = request_span(&inner.shared, &req, &ctx);
                if !span.is_disabled() {
                    ctx.span = span.clone();
                }
                let is_head = req.method() == Method::HEAD;
                let http1 = req.version() <= http::Version::HTTP_11;
                let accept = match inner.shared.renderer {
                    Some(_) => req.headers().get(header::ACCEPT).cloned(),
                    None => None,
                };
                let log = inner.shared.config.access_log.then(|| {
                    Box::new(AccessLog {
                        started: crate::metrics::clock::now(),
                        method: req.method().clone(),
                        path: req.uri().path().to_owned(),
                    })
                });
                // The context goes with the request, wherever the chain
                // takes it; the response future keeps what it needs of it:
                // the request ID in the log's fields when Tern's log output
                // is on, else on its own.
                let (mut request_id, peer) = (Some(ctx.request_id.clone()), ctx.peer);
                let mut fields = crate::log::on().then(|| {
                    crate::log::boxed(crate::log::RequestFields {
                        method: req.method().clone(),
                        route: None,
                        request_id: request_id.take().unwrap_or_else(|| ctx.request_id.clone()),
                        client: crate::extract::client_ip(&inner.shared, ctx.peer, req.headers()),
                        traceparent: ctx.traceparent.clone(),
                        status: None,
                        latency_us: None,
                    })
                });
                let mut metered = (metrics.is_some() || !span.is_disabled()).then(|| {
                    if let Some(m) = metrics {
                        m.started();
                    }
                    Metered::new(&req)
                });
                // Current around each call and poll of the chain, and in
                // the request's extensions once the request may leave
                // (`context`).
                // A request that brings a context already (an app served
                // inside another app's route, through a tower service) has
                // this app's in its extensions instead, in the outer one's
                // place.
                let mut ctx = match req.extensions().get::<crate::context::Ctx>() {
                    None => Some(ctx),
                    Some(_) => {
                        req.extensions_mut().insert(*ctx);
                        None
                    }
                };
                let mut app = Some(Arc::clone(&inner.shared));
                // Routing (and any synchronous part of the chain) runs here.
                let routing = metered.is_some() || fields.is_some();
                let fut = {
                    let _entered = crate::context::enter(&mut app);
                    let _ctx = crate::context::enter_ctx(&mut ctx);
                    let _span = span.enter();
                    let _fields = crate::log::enter(&mut fields);
                    if routing {
                        route::clear();
                    }
                    inner.chain.call_in(&mut Some(req))
                };
                if routing {
                    read_route(&inner.shared, &mut metered, &span, &mut fields);
                }
                State::Running {
                    fut,
                    app,
                    ctx,
                    request_id,
                    defer_id: from_codec,
                    peer,
                    timer: None,
                    is_head,
                    http1,
                    log,
                    accept,
                    metered,
                    span,
                    fields,
                }
            }
        };
        ResponseFuture { inner, state }
    }
}

/// The future of one request through an [`AppService`]: the app's
/// middleware chain and handler, guarded against panics and the request
/// timeout, then the response's final touches (exact `Content-Length`,
/// request ID, security headers, the problem renderer).
///
/// The request timeout's timer is only set if the handler has to wait
/// (most answer on their first poll and never touch the timer wheel), so
/// the timeout counts from the handler's first wait.
pub struct ResponseFuture {
    inner: Arc<AppInner>,
    state: State,
}

impl ResponseFuture {
    /// The request ID the answer carries as if in its map, in the field
    /// `Config::request_id_header` names, for the writer of
    /// `AppService::call_checked`'s answers: `None` before the answer, on
    /// other paths (the ID is in the map), and when the app adds no ID.
    pub(crate) fn take_request_id(&mut self) -> Option<RequestIdValue> {
        match &mut self.state {
            State::Answered(id) => id.take(),
            _ => None,
        }
    }
}

enum State {
    Running {
        fut: crate::handler::BoxFuture,
        /// The app, current while the chain polls (see `context`), for
        /// answers that have no request to read it from.
        app: Option<Arc<Shared>>,
        /// The request's context while it has not moved into the
        /// request's extensions (see `context`).
        ctx: Option<Box<crate::context::Ctx>>,
        request_id: Option<RequestIdValue>,
        /// The request ID is left to the codec's writer (`call_checked`).
        defer_id: bool,
        peer: Option<SocketAddr>,
        timer: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
        is_head: bool,
        http1: bool,
        log: Option<Box<AccessLog>>,
        /// The request's `Accept`, kept only for an app's problem renderer.
        accept: Option<HeaderValue>,
        /// What the metrics and the span need, when either is on.
        metered: Option<Metered>,
        /// The request's span (disabled when no subscriber wants it).
        span: tracing::Span,
        /// The request's fields for Tern's log output (`crate::log`),
        /// current while the chain polls.
        fields: Option<Box<crate::log::RequestFields>>,
    },
    Done(Option<Response>),
    /// Answered, with the request ID left to the codec's writer
    /// (`call_checked`; kept in the state so that the future, which a
    /// connection holds while it waits, is no larger).
    Answered(Option<RequestIdValue>),
}

/// The request's span: target `tern::request`, level `info`, with the
/// request's method, ID, client (by `ClientIp`'s rule) and trace ID at
/// once, and its route, status and latency recorded at the answer.
fn request_span(shared: &Shared, req: &Request, ctx: &crate::context::Ctx) -> tracing::Span {
    // No subscriber at all (an app served with `Server` and neither
    // `tern::run`'s log output nor a `tracing` setup of its own): nobody
    // can see the span, and `tracing`'s `log` fallback would spend ~300
    // instructions a request on its enter and exit lines for a `log`
    // logger at trace level. No span then. That fallback is only taken
    // while no global subscriber was ever set, so an app with one (every
    // app `tern::run` serves) skips the look-up (~100 instructions: a
    // downcast through each of the subscriber's layers).
    if !tracing::dispatcher::has_been_set()
        && tracing::dispatcher::get_default(|d| d.is::<tracing::subscriber::NoSubscriber>())
    {
        return tracing::Span::none();
    }
    let span = tracing::info_span!(
        target: "tern::request",
        "request",
        method = %req.method(),
        route = tracing::field::Empty,
        request_id = %Lossy(ctx.request_id.as_bytes()),
        client = tracing::field::Empty,
        trace_id = tracing::field::Empty,
        status = tracing::field::Empty,
        latency_us = tracing::field::Empty,
    );
    if span.is_disabled() {
        // Without its metadata: entering, leaving and dropping it then
        // check nothing (a disabled span keeps its metadata for `tracing`'s
        // `log` fallback, which a subscriber's presence turns off).
        return tracing::Span::none();
    }
    {
        if let Some(ip) = crate::extract::client_ip(shared, ctx.peer, req.headers()) {
            span.record("client", tracing::field::display(ip));
        }
        if let Some(t) = &ctx.traceparent {
            span.record("trace_id", crate::trace::trace_id(t));
        }
    }
    #[cfg(feature = "otel")]
    crate::otel::request(&span, req, ctx);
    span
}

/// Bytes shown as text (a request ID is visible ASCII).
struct Lossy<'a>(&'a [u8]);

impl fmt::Display for Lossy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&String::from_utf8_lossy(self.0), f)
    }
}

/// What is kept of a request for its metrics.
struct Metered {
    started: crate::metrics::clock::Stamp,
    request_bytes: u64,
    /// The route's id once the table has routed (`NOT_YET` before).
    route: u32,
    method: u8,
}

const NOT_YET: u32 = u32::MAX;

impl Metered {
    fn new(req: &Request) -> Self {
        Metered {
            started: crate::metrics::clock::now(),
            // The declared length, as the body knows it (no header lookup).
            request_bytes: http_body::Body::size_hint(req.body()).exact().unwrap_or(0),
            route: NOT_YET,
            method: method_index(req.method()),
        }
    }
}

/// Reads the route the table wrote, if it has routed yet, into the
/// metrics' record, the span and the log's fields.
fn read_route(
    shared: &Shared,
    metered: &mut Option<Metered>,
    span: &tracing::Span,
    fields: &mut Option<Box<crate::log::RequestFields>>,
) {
    let Some(id) = route::take(shared.table.id()) else {
        return;
    };
    if let Some(m) = metered {
        m.route = id;
    }
    let label = shared.table.labels().get(id as usize);
    if let Some(fields) = fields {
        fields.route = Some(id);
    }
    if !span.is_disabled() {
        if let Some(label) = label {
            span.record("route", &**label);
        }
    }
}

struct AccessLog {
    started: crate::metrics::clock::Stamp,
    method: Method,
    path: String,
}

impl fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseFuture")
    }
}

impl Future for ResponseFuture {
    type Output = Response;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        let this = self.get_mut();
        let shared = &this.inner.shared;
        // The answer is bound once and finished in place: a response is
        // 184 bytes, and each move of it is a `memcpy`.
        let (fut, app, ctx, peer, timer, metered, span, fields) = match &mut this.state {
            State::Done(res) => return Poll::Ready(res.take().unwrap_or_else(already_taken)),
            State::Answered(_) => return Poll::Ready(already_taken()),
            State::Running {
                fut,
                app,
                ctx,
                peer,
                timer,
                metered,
                span,
                fields,
                ..
            } => (fut, app, ctx, peer, timer, metered, span, fields),
        };
        let entered = span.enter();
        // Routed in a later poll (behind a layer that waited).
        let routing = metered.as_ref().is_some_and(|m| m.route == NOT_YET)
            || fields.as_ref().is_some_and(|f| f.route.is_none());
        let polled = {
            let _fields = crate::log::enter(fields);
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                let _entered = crate::context::enter(app);
                let _ctx = crate::context::enter_ctx(ctx);
                if routing {
                    route::clear();
                }
                fut.as_mut().poll(cx)
            }))
        };
        if routing {
            read_route(shared, metered, span, fields);
        }
        let mut reason = None;
        let mut res = match polled {
            Ok(Poll::Ready(res)) => res,
            Err(panic) => {
                reason = Some(Reason::Panic);
                let _fields = crate::log::enter(fields);
                let _entered = crate::context::enter(app);
                panic_response(shared, panic, *peer)
            }
            Ok(Poll::Pending) => {
                let limit = shared.config.timeouts.request;
                let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
                match timer.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(()) => {
                        reason = Some(Reason::RequestTimeout);
                        Problem::new(StatusCode::SERVICE_UNAVAILABLE)
                            .with_detail(format!(
                                "the server did not answer within the request timeout ({} ms)",
                                limit.as_millis()
                            ))
                            .into_response()
                    }
                }
            }
        };
        if let (Some(reason), Some(m)) = (reason, shared.http_metrics.as_deref()) {
            m.reject(reason);
        }
        drop(entered);
        let State::Running {
            request_id,
            defer_id,
            app,
            ctx,
            is_head,
            http1,
            log,
            accept,
            metered,
            span,
            fields,
            ..
        } = &mut this.state
        else {
            return Poll::Ready(res);
        };
        let (is_head, http1, log, accept) = (*is_head, *http1, log.take(), accept.take());
        let defer_id = *defer_id;
        let metered = metered.take();
        let mut fields = fields.take();
        let span = std::mem::replace(span, tracing::Span::none());
        let mut request_id = request_id.take();
        let mut app = app.take();
        if let Some(ctx) = ctx.take() {
            crate::context::recycle(ctx);
        }
        this.state = State::Done(None);
        let _span = span.enter();
        // One reading for the span and the metrics: time to the answer's
        // head.
        let micros = metered.as_ref().map(|m| m.started.micros());
        if let (Some(metered), Some(micros), false) = (&metered, micros, span.is_disabled()) {
            if metered.route == NOT_YET {
                span.record("route", route::SPECIAL[route::UNKNOWN as usize]);
            }
            span.record("status", res.status().as_u16());
            span.record("latency_us", micros);
        }
        if let Some(log) = log {
            let micros = log.started.micros();
            let id = match (&request_id, &fields) {
                (Some(id), _) => Some(id.clone()),
                (None, Some(fields)) => Some(fields.request_id.clone()),
                (None, None) => None,
            };
            if let Some(fields) = &mut fields {
                fields.status = Some(res.status().as_u16());
                fields.latency_us = Some(micros);
            }
            // The app current too: the lines' route is read from its table.
            let _entered = crate::context::enter(&mut app);
            let _fields = crate::log::enter(&mut fields);
            tracing::info!(
                target: "tern::access",
                method = %log.method,
                path = log.path,
                status = res.status().as_u16(),
                micros,
                request_id = id.as_ref().and_then(|id| id.to_str().ok()).unwrap_or_default(),
                "request"
            );
        }
        if let Some(fields) = fields {
            request_id = Some(crate::log::recycle(fields));
        }
        let deferred = finish(shared, &mut res, request_id, defer_id, is_head, accept);
        if deferred.is_some() {
            this.state = State::Answered(deferred);
        }
        if res.status() == StatusCode::PAYLOAD_TOO_LARGE {
            // The rest of the body is unread and may be any size: the
            // connection ends here rather than reading it to stay open.
            crate::protocol::close_after_refusal(&mut res, http1);
        }
        if let (Some(metered), Some(m), Some(micros)) =
            (metered, shared.http_metrics.as_deref(), micros)
        {
            if res.status() == StatusCode::PAYLOAD_TOO_LARGE {
                m.reject(Reason::BodyTooLarge);
            }
            m.finished(&Answer {
                route: if metered.route == NOT_YET {
                    route::UNKNOWN
                } else {
                    metered.route
                },
                method: metered.method,
                status: res.status().as_u16(),
                micros,
                request_bytes: metered.request_bytes,
                response_bytes: http_body::Body::size_hint(res.body()).exact().unwrap_or(0),
            });
        }
        Poll::Ready(res)
    }
}

/// The answer to a poll after the answer.
fn already_taken() -> Response {
    Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
        .with_detail("the response was already taken")
        .into_response()
}

impl Drop for ResponseFuture {
    fn drop(&mut self) {
        // A request dropped before its answer (the client went away): no
        // longer in flight, and not counted as answered.
        if let State::Running {
            metered: Some(_), ..
        } = &self.state
        {
            // `metered` with the metrics on means `started` counted it.
            if let Some(m) = self.inner.shared.http_metrics.as_deref() {
                m.abandoned();
            }
        }
    }
}

fn panic_response(
    shared: &Shared,
    panic: Box<dyn Any + Send>,
    peer: Option<SocketAddr>,
) -> Response {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a handler panicked".to_owned());
    tracing::error!(panic = %message, "handler panicked; answered 500");
    let local = peer.is_none_or(|p| p.ip().is_loopback());
    let detail = if !shared.config.is_production() && local {
        format!("the handler panicked: {message} (shown because this is development and you are on loopback)")
    } else {
        HIDDEN_DETAIL.to_owned()
    };
    Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
        .with_detail(detail)
        .into_response()
}

impl<B> tower_service::Service<http::Request<B>> for AppService
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<tern_core::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future =
        futures_util::future::Map<ResponseFuture, fn(Response) -> Result<Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        // An app served inside another app's route keeps the outer
        // request's peer.
        let peer = req
            .extensions()
            .get::<std::net::SocketAddr>()
            .copied()
            .or_else(|| crate::context::with(req.extensions(), |c| c.peer).flatten());
        AppService::call(self, req.map(Body::new), peer).map(Ok)
    }
}
