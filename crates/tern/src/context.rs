//! The framework's per-request values (`Ctx`): the app, the peer, the
//! request ID, the route parameters, the server's drain.
//!
//! Where they live: while a request is Tern's own (its app's
//! [`ResponseFuture`](crate::ResponseFuture) routes it and polls its
//! handler), its context is a box the response future owns, made current
//! on the thread around each synchronous call and poll of the chain
//! ([`enter_ctx`]), like the current app below. Its readers take a
//! request's extensions ([`with`]): the context in them if the request
//! has one, else the current one. Before the request can leave Tern's
//! hands, the context moves into the request's extensions
//! ([`materialize`]), so it goes wherever the request goes: through tower
//! layers, into a task a middleware spawns (`tokio::spawn(next.run(req))`),
//! through `tower::buffer`'s worker, into a task a handler hands its whole
//! `Request` to. The places a request can leave by are few and all
//! Tern's: a tower service or layer in the chain (`Route::from_service`,
//! which every `layer`, `route_layer`, `from_fn` and `nest_service`
//! becomes) and a handler's last extractor that may keep the request
//! (`FromRequest::KEEPS_REQUEST`: `Request` itself and any extractor of an
//! app's own; Tern's body extractors and every `FromRequestParts` do
//! not). A request that no Tern app started has no context of its own:
//! outside every app its readers say so; inside a handler they read the
//! handler's request's context, the current one (an app called as a tower
//! service from a handler keeps the caller's peer this way).
//!
//! Why not always the extensions (issue 26's first design): the map costs
//! three allocations and ~500 instructions per request (the map, its
//! table, the boxed context; issue 31's in-process measurements), paid by
//! every request although most never leave their response future. Why not
//! a thread-local alone (the design before issue 26): a request handed to
//! another task lost its context and its handler answered `500`.
//! The boxes are reused per thread ([`boxed`], [`recycle`]): a request that
//! stays Tern's allocates nothing for its context.
//!
//! What has no request to read from, an answer's `IntoResponse` (the
//! configuration `tern-contract` consults, the routes of the API
//! document), reads the *current app* instead ([`with_app`]): a
//! thread-local that holds the app (never a request's values) only while
//! something that belongs to one request runs on the thread. Three scopes
//! set it, each around one synchronous poll or call, restoring the
//! previous value when it ends (also when unwinding):
//! - the app's [`ResponseFuture`](crate::ResponseFuture), around each poll
//!   of the middleware chain and the handler;
//! - a [`Route`](crate::routing::Route) called as a tower service (what
//!   every layer and `from_fn` middleware calls inward), around its
//!   `call` (where a handler whose extractors are ready at once extracts
//!   them) and around each poll of the inner chain, so a handler polled on
//!   another task has it too;
//! - [`RequestContext::scope`](crate::RequestContext::scope) and its
//!   `spawn` and `spawn_blocking`, for work a handler hands off.
//!
//! Because a scope lasts exactly one poll and puts back what it found,
//! a future polled later on the same thread, or a request served inline
//! inside another's handler, never sees another app's value.

use std::{
    cell::RefCell,
    future::Future,
    net::SocketAddr,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
};

use http::HeaderValue;
use smallvec::SmallVec;

use crate::app::Shared;

/// Runs `f` on the context of the request whose extensions these are:
/// the one in them, else the current one (see the module documentation);
/// `None` for a request that no Tern app started.
#[inline]
pub(crate) fn with<R>(extensions: &http::Extensions, f: impl FnOnce(&Ctx) -> R) -> Option<R> {
    match extensions.get::<Ctx>() {
        Some(ctx) => Some(f(ctx)),
        None => CURRENT.with(|c| c.try_borrow().ok()?.as_deref().map(f)),
    }
}

/// [`with`], mutably.
#[inline]
pub(crate) fn with_mut<R>(
    extensions: &mut http::Extensions,
    f: impl FnOnce(&mut Ctx) -> R,
) -> Option<R> {
    match extensions.get_mut::<Ctx>() {
        Some(ctx) => Some(f(ctx)),
        None => CURRENT.with(|c| c.try_borrow_mut().ok()?.as_deref_mut().map(f)),
    }
}

thread_local! {
    /// The context of the request whose chain runs on this thread now,
    /// while it has not moved into its request's extensions.
    static CURRENT: RefCell<Option<Box<Ctx>>> = const { RefCell::new(None) };
    /// A context's box kept for the thread's next request.
    static SPARE: std::cell::Cell<Option<Box<Ctx>>> = const { std::cell::Cell::new(None) };
}

/// A new request's context in a box: the thread's spare one if it has
/// one, filled in place (no parameters yet, no span).
#[inline]
pub(crate) fn boxed(
    shared: &Arc<Shared>,
    peer: Option<SocketAddr>,
    request_id: RequestIdValue,
    drain: Option<Arc<crate::drain::DrainState>>,
    traceparent: Option<HeaderValue>,
) -> Box<Ctx> {
    match SPARE.take() {
        Some(mut spare) => {
            // `recycle` left no parameters, span, drain or trace there.
            if !Arc::ptr_eq(&spare.shared, shared) {
                spare.shared = Arc::clone(shared);
            }
            spare.peer = peer;
            spare.request_id = request_id;
            spare.drain = drain;
            spare.traceparent = traceparent;
            spare
        }
        None => Box::new(Ctx {
            shared: Arc::clone(shared),
            peer,
            request_id,
            params: PathParams::default(),
            drain,
            span: tracing::Span::none(),
            traceparent,
        }),
    }
}

/// Keeps `ctx`'s box for the thread's next request. What could keep
/// something alive (the request ID's buffer, the span, the drain, the
/// parameters' names) is dropped now; the app's handle stays until the box
/// is reused.
#[inline]
pub(crate) fn recycle(mut ctx: Box<Ctx>) {
    ctx.request_id = RequestIdValue::from_static("-");
    ctx.params.clear();
    ctx.drain = None;
    if !ctx.span.is_none() {
        ctx.span = tracing::Span::none();
    }
    ctx.traceparent = None;
    SPARE.set(Some(ctx));
}

/// While alive, the context that was in `slot` is the current one and
/// `slot` holds the previous current context (a request served inside
/// another's handler); dropping it (also when unwinding) swaps them back.
/// A context [`materialize`]d meanwhile is gone from both.
pub(crate) struct EnteredCtx<'a> {
    slot: &'a mut Option<Box<Ctx>>,
}

/// Makes `slot`'s context current for as long as the guard lives.
#[inline]
pub(crate) fn enter_ctx(slot: &mut Option<Box<Ctx>>) -> EnteredCtx<'_> {
    swap_ctx(slot);
    EnteredCtx { slot }
}

#[inline]
fn swap_ctx(slot: &mut Option<Box<Ctx>>) {
    CURRENT.with(|c| {
        // `with` and `with_mut` borrow only for their closures, which
        // never enter a scope: both swaps of a guard succeed or neither.
        if let Ok(mut current) = c.try_borrow_mut() {
            std::mem::swap(&mut *current, slot);
        }
    });
}

impl Drop for EnteredCtx<'_> {
    #[inline]
    fn drop(&mut self) {
        swap_ctx(self.slot);
    }
}

/// Moves the current context into `extensions`, the request's it is,
/// unless they have a context already: the request is about to leave
/// Tern's hands (see the module documentation).
pub(crate) fn materialize(extensions: &mut http::Extensions) {
    if extensions.get::<Ctx>().is_some() {
        return;
    }
    let ctx = CURRENT.with(|c| c.try_borrow_mut().ok()?.take());
    if let Some(ctx) = ctx {
        extensions.insert(*ctx);
    }
}

thread_local! {
    /// The current app; see the module documentation for the scopes that
    /// set it and why no request can see another app's.
    static APP: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

/// Runs `f` on the current app (see the module documentation); `None`
/// outside every scope.
pub(crate) fn with_app<R>(f: impl FnOnce(&Shared) -> R) -> Option<R> {
    APP.with(|a| a.try_borrow().ok()?.as_deref().map(f))
}

/// While alive, the app that was in `slot` is the current one and `slot`
/// holds the previous current app (a request served inside another's
/// handler); dropping it (also when unwinding) swaps them back.
pub(crate) struct Entered<'a> {
    slot: &'a mut Option<Arc<Shared>>,
}

/// Makes `slot`'s app current for as long as the guard lives.
#[inline]
pub(crate) fn enter(slot: &mut Option<Arc<Shared>>) -> Entered<'_> {
    swap_current(slot);
    Entered { slot }
}

#[inline]
fn swap_current(slot: &mut Option<Arc<Shared>>) {
    APP.with(|c| {
        // Only `with_app` borrows, for the length of its closure. Were the
        // closure to poll a scope, both its swaps would be skipped alike,
        // so the guard never puts back a value it did not take.
        if let Ok(mut current) = c.try_borrow_mut() {
            std::mem::swap(&mut *current, slot);
        }
    });
}

impl Drop for Entered<'_> {
    #[inline]
    fn drop(&mut self) {
        swap_current(self.slot);
    }
}

pin_project_lite::pin_project! {
    /// A future polled with an app current; see [`scoped`].
    pub(crate) struct Scoped<F> {
        app: Option<Arc<Shared>>,
        #[pin]
        fut: F,
    }
}

/// `fut`, with `app` current while it polls.
pub(crate) fn scoped<F: Future>(app: Arc<Shared>, fut: F) -> Scoped<F> {
    Scoped {
        app: Some(app),
        fut,
    }
}

impl<F: Future> Future for Scoped<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _entered = enter(this.app);
        this.fut.poll(cx)
    }
}

/// The framework's per-request values; see the module documentation.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub(crate) shared: Arc<Shared>,
    pub(crate) peer: Option<SocketAddr>,
    pub(crate) request_id: RequestIdValue,
    pub(crate) params: PathParams,
    pub(crate) drain: Option<Arc<crate::drain::DrainState>>,
    /// The request's span (`tern::request`), for tasks it spawns.
    pub(crate) span: tracing::Span,
    /// A trusted incoming `traceparent` (`crate::trace`).
    pub(crate) traceparent: Option<http::HeaderValue>,
}

/// The route parameters of a matched request, decoded: the host
/// pattern's first, then the path's, each in pattern order.
#[derive(Clone, Default)]
pub(crate) struct PathParams {
    host_names: Option<Arc<[Box<str>]>>,
    names: Option<Arc<[Box<str>]>>,
    /// Every value, one after the other; `ends[i]` is where value `i`
    /// ends. A `String`, so that reading a value checks no UTF-8 again
    /// (the router gave `&str`s); its room is kept when the context is
    /// recycled ([`PathParams::clear`]), so a thread allocates it once,
    /// not per request.
    values: String,
    ends: SmallVec<[u32; 4]>,
}

impl PathParams {
    /// The parameters of a match: the host pattern's (if the app routes
    /// by host), then the path's.
    pub(crate) fn set(
        &mut self,
        host: Option<(&Arc<[Box<str>]>, &tern_router::Params<'_, '_>)>,
        names: &Arc<[Box<str>]>,
        params: &tern_router::Params<'_, '_>,
    ) {
        self.values.clear();
        self.ends.clear();
        self.host_names = host.map(|(names, params)| {
            self.push(params);
            Arc::clone(names)
        });
        self.push(params);
        self.names = Some(Arc::clone(names));
    }

    /// No parameters (an unmatched request's), keeping the values' room
    /// unless it grew past what a few long values need.
    fn clear(&mut self) {
        self.host_names = None;
        self.names = None;
        if self.values.capacity() > 1024 {
            self.values = String::new();
        } else {
            self.values.clear();
        }
        self.ends.clear();
    }

    fn push(&mut self, params: &tern_router::Params<'_, '_>) {
        for (_, value) in params.iter() {
            self.values.push_str(value);
            self.ends
                .push(u32::try_from(self.values.len()).unwrap_or(u32::MAX));
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        let host = self.host_names.as_deref().unwrap_or(&[]);
        let path = self.names.as_deref().unwrap_or(&[]);
        let names = host.iter().chain(path.iter());
        names
            .zip(self.ends.iter().enumerate())
            .map(move |(name, (i, &end))| {
                let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
                // Whole values were pushed: every range is on a boundary.
                let value = self.values.get(start..end as usize).unwrap_or_default();
                (&**name, value)
            })
    }

    /// The only parameter of a match with one (most routes that have
    /// any): read without walking the names.
    #[inline]
    pub(crate) fn single(&self) -> Option<(&str, &str)> {
        match (&self.host_names, self.names.as_deref(), &*self.ends) {
            (None, Some([name]), [end]) => Some((&**name, self.values.get(..*end as usize)?)),
            _ => None,
        }
    }

    pub(crate) fn is_matched(&self) -> bool {
        self.names.is_some()
    }
}

/// Names of a pattern's parameters, in order (`/a/{id}/{*rest}` →
/// `id`, `rest`).
pub(crate) fn param_names(pattern: &str) -> Arc<[Box<str>]> {
    // Every `{...}` not written `{{`, in order: whole segments and
    // parameters inside segments (`/img-{id}.png`) alike. The router has
    // checked the pattern already.
    let mut names = Vec::new();
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'{', Some(b'{')) | (b'}', Some(b'}')) => i += 2,
            (b'{', _) => {
                let len = pattern[i + 1..].find('}').unwrap_or(pattern.len() - i - 1);
                let inner = &pattern[i + 1..i + 1 + len];
                let inner = inner.strip_prefix('*').unwrap_or(inner);
                names.push(Box::from(inner.split(':').next().unwrap_or(inner)));
                i += len + 2;
            }
            _ => i += 1,
        }
    }
    names.into()
}

/// A request ID: generated ones are slices of a shared batch (see
/// `app::next_request_id`), trusted incoming ones share the request's
/// buffer; either way cloning it into the response is a reference count.
pub(crate) type RequestIdValue = HeaderValue;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Arc<[Box<str>]> {
        list.iter().map(|n| Box::from(*n)).collect()
    }

    #[test]
    fn path_params_read_back_as_matched_and_keep_their_room_when_cleared() {
        let mut router = tern_router::Router::new();
        router.insert("/u/{name}/{n}", ()).unwrap();
        router.insert("/one/{id}", ()).unwrap();
        let two = names(&["name", "n"]);
        let one = names(&["id"]);
        let host = names(&["tenant"]);

        let mut params = PathParams::default();
        assert!(!params.is_matched());
        // Decoded values, multi-byte UTF-8 among them.
        let m = router.at("/u/%C3%A9t%C3%A9%2Fx/7").unwrap();
        params.set(None, &two, &m.params);
        assert!(params.is_matched());
        assert_eq!(params.single(), None);
        assert_eq!(
            params.iter().collect::<Vec<_>>(),
            [("name", "été/x"), ("n", "7")]
        );

        let room = params.values.capacity();
        params.clear();
        assert!(!params.is_matched());
        assert_eq!(params.iter().count(), 0);
        assert_eq!(params.values.capacity(), room, "the values' room is kept");

        let m = router.at("/one/42").unwrap();
        params.set(None, &one, &m.params);
        assert_eq!(params.single(), Some(("id", "42")));
        assert_eq!(params.iter().collect::<Vec<_>>(), [("id", "42")]);

        // A host pattern's parameters come first; `single` is then `None`.
        let host_match = router.at("/one/acme").unwrap();
        params.set(Some((&host, &host_match.params)), &one, &m.params);
        assert_eq!(params.single(), None);
        assert_eq!(
            params.iter().collect::<Vec<_>>(),
            [("tenant", "acme"), ("id", "42")]
        );

        // A room grown past 1 KiB by a long value is not kept.
        let long = format!("/one/{}", "a".repeat(4096));
        let m = router.at(&long).unwrap();
        params.set(None, &one, &m.params);
        assert_eq!(params.single().map(|(_, v)| v.len()), Some(4096));
        params.clear();
        assert_eq!(params.values.capacity(), 0);
    }
}
