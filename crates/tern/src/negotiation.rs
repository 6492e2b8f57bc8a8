//! What a negotiated answer (`IntoResponse::NEGOTIATED`) needs of its
//! request, carried by the handler's own future.
//!
//! `IntoResponse::into_response` gets no request, so the answer finds the
//! request's `Accept` and `Content-Type`, and what the extractor left for
//! it (the key a COSE request was sealed with), in a slot that is the
//! thread's current one only while the handler's future polls
//! ([`scoped`]). The slot lives in that future, not in the request
//! context: the answer is made after the handler has taken (and usually
//! dropped) the request, and the handler's future, wherever it is polled
//! (a layer may run it on another task), always carries its slot.
//!
//! Why the thread-local is safe: it is set only by [`scoped`], around one
//! synchronous poll of one handler's future, and by [`enter_now`], around
//! the synchronous extraction of a handler whose extractors are ready at
//! once (in its `call`), and put back as it was when that poll or call
//! ends (a guard, so also when unwinding). Everything that reads it
//! ([`take`], [`set_hint`]) runs inside such a scope, so it sees the
//! negotiation of the handler being polled and no other: a task that
//! polls another request's handler in between (a handler serving a
//! request inline) swaps its own in and out the same way. A future the
//! handler spawns is polled outside the scope and sees none (its answer
//! is not the handler's).
//!
//! An answer that is not negotiated (a handler's `Err(Problem)` next to
//! its `Ok(Valid<T>)`, any response it builds itself) does not take the
//! negotiation. When the handler's future ends with the negotiation still
//! in its slot, its answer passes through the [`Finish`] the extractor
//! left there, if any: a sealed (COSE) request's problem is sealed too,
//! instead of going out in plaintext because it was made without the key.

use std::{cell::RefCell, future::Future, pin::pin, sync::Arc};

use http::HeaderValue;
use tern_core::Response;

thread_local! {
    static CURRENT: RefCell<Option<Negotiated>> = const { RefCell::new(None) };
}

/// What a negotiated answer needs of its request (see
/// `IntoResponse::NEGOTIATED`), kept past the handler's taking of it.
#[derive(Clone, Default)]
pub struct Negotiated {
    /// The request's `Accept`.
    pub accept: Option<HeaderValue>,
    /// The request's `Content-Type`.
    pub content_type: Option<HeaderValue>,
    /// What the request's extractor left for the answer (the key a COSE
    /// request was sealed with).
    pub hint: Option<Arc<dyn std::any::Any + Send + Sync>>,
    /// What the handler's answer passes through when no negotiated
    /// answer took this negotiation (when the negotiated handler's future
    /// ends).
    pub finish: Option<Finish>,
}

/// Turns an answer that was made without the negotiation into one that
/// keeps its promises (a sealed request's problem, sealed).
pub type Finish = Arc<dyn Fn(Response) -> Response + Send + Sync>;

impl Negotiated {
    /// The negotiation of `req`.
    pub(crate) fn of(req: &tern_core::Request) -> Self {
        Negotiated {
            accept: req.headers().get(http::header::ACCEPT).cloned(),
            content_type: req.headers().get(http::header::CONTENT_TYPE).cloned(),
            hint: None,
            finish: None,
        }
    }
}

/// Polls `fut` (a negotiated handler's extraction, call and answer) with
/// `negotiation` as the thread's current one; then, if no negotiated
/// answer took it, passes the response through its [`Finish`].
pub(crate) async fn scoped<F>(negotiation: Negotiated, fut: F) -> Response
where
    F: Future<Output = Response>,
{
    let mut slot = Some(negotiation);
    let mut fut = pin!(fut);
    let res = std::future::poll_fn(|cx| {
        let _entered = Entered::new(&mut slot);
        fut.as_mut().poll(cx)
    })
    .await;
    // Still here: the answer (an extractor's rejection, the handler's
    // `Err`, a response it built) was made without the negotiation.
    finished(slot, res)
}

/// Runs `f` with the negotiation in `slot` current, synchronously (a
/// handler's extractors that are ready at once, run when it is called):
/// what `f` leaves in it (a hint, a [`Finish`]) stays in `slot`, for the
/// handler's future ([`scoped`]) or for [`finished`]. An empty slot (a
/// handler that is not negotiated) changes nothing.
pub(crate) fn enter_now<R>(slot: &mut Option<Negotiated>, f: impl FnOnce() -> R) -> R {
    if slot.is_none() {
        return f();
    }
    let _entered = Entered::new(slot);
    f()
}

/// An answer made under [`enter_now`] that did not take the negotiation
/// (an extractor's rejection), passed through its [`Finish`] as
/// [`scoped`] passes one.
pub(crate) fn finished(slot: Option<Negotiated>, res: Response) -> Response {
    match slot.and_then(|n| n.finish) {
        Some(finish) => finish(res),
        None => res,
    }
}

/// While alive, the negotiation that was in `slot` is current and `slot`
/// holds the previous one; dropping it (also when unwinding) swaps them
/// back.
struct Entered<'a> {
    slot: &'a mut Option<Negotiated>,
}

impl<'a> Entered<'a> {
    fn new(slot: &'a mut Option<Negotiated>) -> Self {
        swap(slot);
        Entered { slot }
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        swap(self.slot);
    }
}

fn swap(slot: &mut Option<Negotiated>) {
    CURRENT.with(|c| {
        // Only `take` and `set_hint` borrow, never across a poll.
        if let Ok(mut current) = c.try_borrow_mut() {
            std::mem::swap(&mut *current, slot);
        }
    });
}

/// Takes the current negotiation (one answer per request).
pub(crate) fn take() -> Option<Negotiated> {
    CURRENT.with(|c| c.try_borrow_mut().ok()?.take())
}

/// Leaves `hint` for the current negotiated answer; `false` when no
/// negotiated answer is being prepared on this thread.
pub(crate) fn set_hint(hint: Arc<dyn std::any::Any + Send + Sync>) -> bool {
    CURRENT.with(|c| match c.try_borrow_mut() {
        Ok(mut current) => match current.as_mut() {
            Some(n) => {
                n.hint = Some(hint);
                true
            }
            None => false,
        },
        Err(_) => false,
    })
}

/// Leaves `finish` for the answer of the current negotiated handler, in
/// case that answer does not take the negotiation; `false` when no
/// negotiated answer is being prepared on this thread.
pub(crate) fn set_finish(finish: Finish) -> bool {
    CURRENT.with(|c| match c.try_borrow_mut() {
        Ok(mut current) => match current.as_mut() {
            Some(n) => {
                n.finish = Some(finish);
                true
            }
            None => false,
        },
        Err(_) => false,
    })
}
