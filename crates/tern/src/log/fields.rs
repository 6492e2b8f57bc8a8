//! The request's fields, where Tern's log output finds them when it
//! writes a line.
//!
//! A `tracing` span would carry them too, but a span costs its fields'
//! formatting when it is made and a registry entry entered and left on
//! every poll, whether or not a line is ever written: about 12,000
//! instructions per request with `tracing-subscriber`'s fmt layer, more
//! than the request itself (PERFORMANCE.md, Operations). Tern's own
//! output reads them instead from a thread-local slot the request's
//! future fills while it is polled: a pointer moved in before each poll
//! and out after (no lock; the boxes are reused per thread, so no
//! allocation either once warm), formatted only when a line is written.
//! Tasks started with `RequestContext::spawn` carry a copy.
//!
//! The slot is used only once Tern's output is made ([`set_on`]); until
//! then, a request makes no fields at all.

use std::{
    cell::RefCell,
    net::IpAddr,
    pin::Pin,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    task::{Context, Poll},
};

use http::{HeaderValue, Method};

/// What a log line says of the request it is written for.
#[derive(Clone)]
pub(crate) struct RequestFields {
    pub(crate) method: Method,
    /// The route's id in the app's table (its pattern is the metrics'
    /// label, looked up when a line is written), once routed.
    pub(crate) route: Option<u32>,
    pub(crate) request_id: HeaderValue,
    /// The client's address, by `ClientIp`'s rule.
    pub(crate) client: Option<IpAddr>,
    /// A trusted incoming `traceparent`, whose trace ID the line shows.
    pub(crate) traceparent: Option<HeaderValue>,
    /// Set at the answer.
    pub(crate) status: Option<u16>,
    pub(crate) latency_us: Option<u64>,
}

impl RequestFields {
    /// The route to show: the pattern (from the current app's table:
    /// the request's own app is current wherever its fields are), or
    /// `(unknown)` once answered without a route read.
    pub(crate) fn route(&self) -> Option<Route> {
        match self.route {
            Some(id) => {
                crate::context::with_app(|app| app.table.labels().get(id as usize).cloned())
                    .flatten()
                    .map(Route::Pattern)
            }
            None if self.status.is_some() => Some(Route::Special(
                crate::metrics::route::SPECIAL[crate::metrics::route::UNKNOWN as usize],
            )),
            None => None,
        }
    }

    /// The request ID as text (Tern makes and accepts visible ASCII).
    pub(crate) fn request_id(&self) -> &str {
        self.request_id.to_str().unwrap_or("(not text)")
    }

    pub(crate) fn trace_id(&self) -> Option<&str> {
        self.traceparent.as_ref().map(crate::trace::trace_id)
    }
}

/// A route as a line shows it.
pub(crate) enum Route {
    Pattern(Arc<str>),
    Special(&'static str),
}

impl std::ops::Deref for Route {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Route::Pattern(p) => p,
            Route::Special(s) => s,
        }
    }
}

/// Boxes kept for reuse, per thread (a request's box is taken from and
/// given back to the thread that polls it, mostly the same one).
const KEPT: usize = 64;

thread_local! {
    // The boxes themselves are what is kept: each request owns one while
    // it runs, moved in and out of `CURRENT` as a pointer.
    #[allow(clippy::vec_box)]
    static FREE: RefCell<Vec<Box<RequestFields>>> = const { RefCell::new(Vec::new()) };
}

/// `fields` in a box, a reused one if this thread kept one.
pub(crate) fn boxed(fields: RequestFields) -> Box<RequestFields> {
    let reused = FREE
        .try_with(|free| free.try_borrow_mut().ok()?.pop())
        .ok()
        .flatten();
    match reused {
        Some(mut b) => {
            *b = fields;
            b
        }
        None => Box::new(fields),
    }
}

/// Gives a request's box back once its lines are written, and returns
/// the request ID it held.
pub(crate) fn recycle(mut b: Box<RequestFields>) -> HeaderValue {
    let id = std::mem::replace(&mut b.request_id, HeaderValue::from_static(""));
    b.traceparent = None;
    let _ = FREE.try_with(|free| {
        if let Ok(mut free) = free.try_borrow_mut() {
            if free.len() < KEPT {
                free.push(b);
            }
        }
    });
    id
}

static ON: AtomicBool = AtomicBool::new(false);

/// Whether a request should make its fields: Tern's output exists.
#[inline]
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Called when Tern's output is made.
pub(crate) fn set_on() {
    ON.store(true, Ordering::Relaxed);
}

thread_local! {
    static CURRENT: RefCell<Option<Box<RequestFields>>> = const { RefCell::new(None) };
}

/// The fields in `slot` (if any) current until the guard drops; `slot`
/// holds whatever was current before meanwhile (nothing, or the fields
/// of the request that serves this one, for an app inside another's
/// route).
pub(crate) fn enter(slot: &mut Option<Box<RequestFields>>) -> Option<Entered<'_>> {
    if slot.is_none() {
        return None;
    }
    swap(slot);
    Some(Entered { slot })
}

fn swap(slot: &mut Option<Box<RequestFields>>) {
    // `try_with`: the slot is gone while the thread's locals are torn
    // down; nothing is current then.
    let _ = CURRENT.try_with(|c| {
        if let Ok(mut current) = c.try_borrow_mut() {
            std::mem::swap(&mut *current, slot);
        }
    });
}

pub(crate) struct Entered<'a> {
    slot: &'a mut Option<Box<RequestFields>>,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        swap(self.slot);
    }
}

/// `f` of the current request's fields; `None` if no request is
/// current.
pub(crate) fn with_current<R>(f: impl FnOnce(&RequestFields) -> R) -> Option<R> {
    CURRENT
        .try_with(|c| c.try_borrow().ok()?.as_deref().map(f))
        .ok()
        .flatten()
}

/// A copy of the current request's fields, for a task it starts.
pub(crate) fn current() -> Option<Box<RequestFields>> {
    if !on() {
        return None;
    }
    with_current(|f| boxed(f.clone()))
}

pin_project_lite::pin_project! {
    /// A future polled with a request's fields current.
    pub(crate) struct Carried<F> {
        fields: Option<Box<RequestFields>>,
        #[pin]
        fut: F,
    }
}

/// `fut`, polled with the current request's fields (if any) current.
pub(crate) fn carry<F: std::future::Future>(fut: F) -> Carried<F> {
    Carried {
        fields: current(),
        fut,
    }
}

impl<F: std::future::Future> std::future::Future for Carried<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _entered = enter(this.fields);
        this.fut.poll(cx)
    }
}
