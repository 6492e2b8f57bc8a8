//! The request body of Tern's own HTTP/1.1 connection: frames the
//! connection decodes from its read buffer, handed to the body through a
//! small shared slot.
//!
//! Not a public API: the connection (in the `tern` crate) holds the
//! [`Feed`], the handler the [`Body`] made by [`Body::from_conn`].
//!
//! Two tasks may meet here: the connection's, which decodes and feeds, and
//! the one that reads the body (the same task when the handler reads it
//! inline, another when it moved the body to a spawned task). Each side
//! parks its waker in the slot and the other wakes it, so no wakeup is lost
//! whichever task polls first: the body wakes the connection when it wants
//! data (and when it is dropped unread), the connection wakes the body when
//! it queued a frame, the end or an error.

use std::{
    collections::VecDeque,
    fmt, io,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    task::{Context, Poll, Waker},
};

use bytes::Bytes;
use http::HeaderMap;
use http_body::{Frame, SizeHint};

use super::{Body, Kind};
use crate::BodyError;

impl Body {
    /// A request body fed by a connection of Tern's own HTTP/1.1 codec, and
    /// the connection's half, the [`Feed`]. `length` is the declared
    /// `Content-Length` (`None` for a chunked body): the body's size hint
    /// is then exact. `expects_continue` for a request with
    /// `Expect: 100-continue`: [`Feed::take_continue`] says when to send the
    /// interim answer.
    ///
    /// Not a public API: for the `tern` crate's connection.
    #[doc(hidden)]
    pub fn from_conn(length: Option<u64>, expects_continue: bool) -> (Feed, Body) {
        let slot = Arc::new(Slot {
            state: Mutex::new(State {
                frames: VecDeque::new(),
                queued: 0,
                trailers: None,
                end: false,
                error: None,
                remaining: length,
                wants_data: false,
                continue_: if expects_continue {
                    Continue::Expected
                } else {
                    Continue::No
                },
                body: Side::Alive,
                body_waker: None,
                conn_waker: None,
            }),
        });
        let body = Body {
            kind: Kind::Conn(ConnBody {
                slot: Arc::clone(&slot),
                finished: false,
            }),
        };
        (Feed { slot }, body)
    }
}

/// The connection's half of a body made by [`Body::from_conn`]: it queues
/// the frames the connection decodes and learns what the body wants.
///
/// Dropping it before [`Feed::end`] or a failure ends the body with an
/// [`io::ErrorKind::UnexpectedEof`] error, so a reader never waits for a
/// connection that is gone.
pub struct Feed {
    slot: Arc<Slot>,
}

/// The body's half (`Kind::Conn`).
pub(super) struct ConnBody {
    slot: Arc<Slot>,
    /// The end (or an error) was handed out: nothing more to read.
    finished: bool,
}

struct Slot {
    state: Mutex<State>,
}

struct State {
    /// Data decoded and not yet read, in order.
    frames: VecDeque<Bytes>,
    /// Their total length (the connection's back-pressure).
    queued: usize,
    /// The trailer section, once decoded, until read.
    trailers: Option<HeaderMap>,
    /// The connection saw the body's end.
    end: bool,
    /// Why the body failed; handed out after the data queued before it.
    error: Option<BodyError>,
    /// What is left of a declared length (`None`: chunked).
    remaining: Option<u64>,
    /// The body was polled with nothing queued and waits for the connection.
    wants_data: bool,
    continue_: Continue,
    body: Side,
    body_waker: Option<Waker>,
    conn_waker: Option<Waker>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Continue {
    /// No `Expect: 100-continue`.
    No,
    /// Expected, and the body has not asked for data yet.
    Expected,
    /// The body asked for data: the connection owes a `100 Continue`.
    Owed,
    /// The connection took it ([`Feed::take_continue`]).
    Taken,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Alive,
    /// Dropped after its end was read.
    DroppedRead,
    /// Dropped before its end: the connection decides whether to read the
    /// rest or to close.
    DroppedUnread,
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, State> {
        // No code panics while holding the lock; a poisoned one is still
        // consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn park(slot: &mut Option<Waker>, waker: &Waker) {
    match slot {
        Some(old) if old.will_wake(waker) => {}
        _ => *slot = Some(waker.clone()),
    }
}

impl Feed {
    /// Queues a data frame (empty ones are skipped) and wakes the body.
    pub fn push_data(&self, data: Bytes) {
        if data.is_empty() {
            return;
        }
        let waker = {
            let mut state = self.slot.lock();
            // After the end, a failure, or the body's drop, nothing more
            // is kept.
            if state.end || state.error.is_some() || state.body != Side::Alive {
                return;
            }
            state.queued += data.len();
            state.frames.push_back(data);
            state.wants_data = false;
            state.body_waker.take()
        };
        wake(waker);
    }

    /// Queues the trailer section (read after the data) and wakes the body.
    pub fn push_trailers(&self, trailers: HeaderMap) {
        let waker = {
            let mut state = self.slot.lock();
            if state.end || state.error.is_some() || state.body != Side::Alive {
                return;
            }
            state.trailers = Some(trailers);
            state.wants_data = false;
            state.body_waker.take()
        };
        wake(waker);
    }

    /// Ends the body: once the queued frames are read, it is over.
    pub fn end(&self) {
        let waker = {
            let mut state = self.slot.lock();
            if state.end || state.error.is_some() {
                return;
            }
            state.end = true;
            state.wants_data = false;
            state.body_waker.take()
        };
        wake(waker);
    }

    /// Fails the body: once the queued data is read, reading it yields
    /// `error`. Nothing queued after it is read.
    pub fn fail(&self, error: BodyError) {
        let waker = {
            let mut state = self.slot.lock();
            if state.end || state.error.is_some() {
                return;
            }
            state.error = Some(error);
            state.trailers = None;
            state.wants_data = false;
            state.body_waker.take()
        };
        wake(waker);
    }

    /// Fails the body because it is longer than `limit` bytes
    /// (`TERN_MAX_BODY_BYTES`): the error's [`BodyError::is_length_limit`]
    /// is true, so extractors answer 413.
    pub fn fail_too_large(&self, limit: u64) {
        self.fail(BodyError::length_limit(limit));
    }

    /// Fails the body because the client closed the connection before its
    /// end ([`io::ErrorKind::UnexpectedEof`]).
    pub fn fail_incomplete(&self) {
        self.fail(BodyError::new(incomplete()));
    }

    /// The bytes queued and not yet read: the connection reads for the
    /// body only while this is small.
    pub fn queued_bytes(&self) -> usize {
        self.slot.lock().queued
    }

    /// Whether the body was polled with nothing queued and waits for data.
    pub fn wants_data(&self) -> bool {
        self.slot.lock().wants_data
    }

    /// Ready with `true` when the body waits for data, with `false` when
    /// the body is gone (read or dropped); else pending, and the
    /// connection's task is woken when either happens. For a connection
    /// whose body is read on another task.
    pub fn poll_wants_data(&self, cx: &mut Context<'_>) -> Poll<bool> {
        let mut state = self.slot.lock();
        if state.body != Side::Alive {
            return Poll::Ready(false);
        }
        if state.wants_data {
            return Poll::Ready(true);
        }
        park(&mut state.conn_waker, cx.waker());
        Poll::Pending
    }

    /// True once, when the request expected `100 Continue` and its body
    /// asked for data: the connection then writes the interim answer
    /// before reading the body. Never true for a body dropped unread or
    /// never polled (the answer then goes without a `100`).
    pub fn take_continue(&self) -> bool {
        let mut state = self.slot.lock();
        if state.continue_ == Continue::Owed && state.body == Side::Alive {
            state.continue_ = Continue::Taken;
            return true;
        }
        false
    }

    /// Whether the body was dropped before its end was read: the
    /// connection then reads and discards the rest, or closes.
    pub fn dropped_unread(&self) -> bool {
        self.slot.lock().body == Side::DroppedUnread
    }

    /// Whether the body was dropped (read to its end or not).
    pub fn body_dropped(&self) -> bool {
        self.slot.lock().body != Side::Alive
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        let waker = {
            let mut state = self.slot.lock();
            if state.end || state.error.is_some() {
                return;
            }
            state.error = Some(BodyError::new(incomplete()));
            state.body_waker.take()
        };
        wake(waker);
    }
}

impl fmt::Debug for Feed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Feed").finish_non_exhaustive()
    }
}

fn incomplete() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the connection closed before the end of the request body",
    )
}

fn wake(waker: Option<Waker>) {
    if let Some(waker) = waker {
        waker.wake();
    }
}

impl ConnBody {
    pub(super) fn poll_frame(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        if self.finished {
            return Poll::Ready(None);
        }
        let (frame, waker) = {
            let mut state = self.slot.lock();
            if let Some(data) = state.frames.pop_front() {
                state.queued -= data.len();
                if let Some(remaining) = &mut state.remaining {
                    *remaining = remaining.saturating_sub(data.len() as u64);
                }
                return Poll::Ready(Some(Ok(Frame::data(data))));
            }
            if let Some(error) = state.error.take() {
                self.finished = true;
                return Poll::Ready(Some(Err(error)));
            }
            if let Some(trailers) = state.trailers.take() {
                return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
            }
            if state.end {
                self.finished = true;
                return Poll::Ready(None);
            }
            state.wants_data = true;
            if state.continue_ == Continue::Expected {
                state.continue_ = Continue::Owed;
            }
            park(&mut state.body_waker, cx.waker());
            (Poll::Pending, state.conn_waker.take())
        };
        wake(waker);
        frame
    }

    pub(super) fn is_end_stream(&self) -> bool {
        if self.finished {
            return true;
        }
        let state = self.slot.lock();
        state.end && state.frames.is_empty() && state.trailers.is_none()
    }

    pub(super) fn size_hint(&self) -> SizeHint {
        if self.finished {
            return SizeHint::with_exact(0);
        }
        match self.slot.lock().remaining {
            Some(n) => SizeHint::with_exact(n),
            None => SizeHint::default(),
        }
    }
}

impl Drop for ConnBody {
    fn drop(&mut self) {
        let waker = {
            let mut state = self.slot.lock();
            let read =
                self.finished || (state.end && state.frames.is_empty() && state.trailers.is_none());
            state.body = if read {
                Side::DroppedRead
            } else {
                Side::DroppedUnread
            };
            state.wants_data = false;
            // The queued data is the connection's buffer: let it go now.
            state.frames.clear();
            state.queued = 0;
            state.body_waker = None;
            state.conn_waker.take()
        };
        wake(waker);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::{
        pin::Pin,
        sync::atomic::{AtomicUsize, Ordering},
        task::Wake,
    };

    use futures_util::FutureExt;
    use http_body::Body as _;
    use http_body_util::BodyExt;

    use super::*;

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl Count {
        fn get(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

    fn poll(body: &mut Body, waker: &Arc<Count>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let waker = Waker::from(Arc::clone(waker));
        Pin::new(body).poll_frame(&mut Context::from_waker(&waker))
    }

    fn data(frame: Poll<Option<Result<Frame<Bytes>, BodyError>>>) -> Bytes {
        match frame {
            Poll::Ready(Some(Ok(frame))) => frame.into_data().expect("a data frame"),
            other => panic!("expected data, got {other:?}"),
        }
    }

    #[test]
    fn frames_then_trailers_then_end_collect() {
        let (feed, body) = Body::from_conn(None, false);
        feed.push_data(Bytes::from_static(b"hello "));
        feed.push_data(Bytes::new());
        feed.push_data(Bytes::from_static(b"world"));
        let mut trailers = HeaderMap::new();
        trailers.insert("x-sum", "1".parse().unwrap());
        feed.push_trailers(trailers.clone());
        feed.end();
        assert_eq!(feed.queued_bytes(), 11);
        let collected = body.collect().now_or_never().unwrap().unwrap();
        assert_eq!(collected.trailers(), Some(&trailers));
        assert_eq!(collected.to_bytes(), "hello world");
        // Read to its end: not "unread".
        assert!(feed.body_dropped());
        assert!(!feed.dropped_unread());
    }

    #[test]
    fn an_empty_body_waits_then_is_woken_by_each_frame() {
        let (feed, mut body) = Body::from_conn(Some(4), false);
        let reader = Arc::new(Count::default());
        let conn = Arc::new(Count::default());
        let conn_waker = Waker::from(Arc::clone(&conn));
        let mut conn_cx = Context::from_waker(&conn_waker);

        assert!(!feed.wants_data());
        assert!(feed.poll_wants_data(&mut conn_cx).is_pending());
        assert!(poll(&mut body, &reader).is_pending());
        assert!(feed.wants_data());
        assert_eq!(
            conn.get(),
            1,
            "the connection is woken when the body wants data"
        );
        assert_eq!(feed.poll_wants_data(&mut conn_cx), Poll::Ready(true));

        feed.push_data(Bytes::from_static(b"ab"));
        assert_eq!(reader.get(), 1);
        assert!(!feed.wants_data());
        assert_eq!(body.size_hint().exact(), Some(4));
        assert_eq!(data(poll(&mut body, &reader)), "ab");
        assert_eq!(body.size_hint().exact(), Some(2));
        assert!(!body.is_end_stream());

        assert!(poll(&mut body, &reader).is_pending());
        feed.push_data(Bytes::from_static(b"cd"));
        feed.end();
        assert_eq!(
            reader.get(),
            2,
            "one wake for the data; the end found no waker parked"
        );
        assert!(!body.is_end_stream());
        assert_eq!(data(poll(&mut body, &reader)), "cd");
        assert!(body.is_end_stream());
        assert!(matches!(poll(&mut body, &reader), Poll::Ready(None)));
        assert!(matches!(poll(&mut body, &reader), Poll::Ready(None)));
        assert_eq!(body.size_hint().exact(), Some(0));
    }

    #[test]
    fn the_end_wakes_a_waiting_body() {
        let (feed, mut body) = Body::from_conn(None, false);
        let reader = Arc::new(Count::default());
        assert!(poll(&mut body, &reader).is_pending());
        assert_eq!(body.size_hint().exact(), None);
        feed.end();
        assert_eq!(reader.get(), 1);
        assert!(body.is_end_stream());
        assert!(matches!(poll(&mut body, &reader), Poll::Ready(None)));
    }

    #[test]
    fn an_error_comes_after_the_data_queued_before_it() {
        let (feed, mut body) = Body::from_conn(None, false);
        let reader = Arc::new(Count::default());
        feed.push_data(Bytes::from_static(b"abc"));
        feed.fail(BodyError::new(io::Error::new(
            io::ErrorKind::InvalidData,
            "bad chunk",
        )));
        // Nothing after the failure counts.
        feed.push_data(Bytes::from_static(b"def"));
        feed.end();
        assert_eq!(data(poll(&mut body, &reader)), "abc");
        match poll(&mut body, &reader) {
            Poll::Ready(Some(Err(e))) => assert_eq!(e.to_string(), "bad chunk"),
            other => panic!("expected the error, got {other:?}"),
        }
        assert!(matches!(poll(&mut body, &reader), Poll::Ready(None)));
        assert!(body.is_end_stream());
    }

    #[test]
    fn too_large_is_a_length_limit_error() {
        let (feed, body) = Body::from_conn(None, false);
        feed.push_data(Bytes::from_static(b"0123456789"));
        feed.fail_too_large(10);
        let err = body.collect().now_or_never().unwrap().unwrap_err();
        assert!(err.is_length_limit());
        assert_eq!(err.length_limit_bytes(), Some(10));
    }

    #[test]
    fn a_connection_gone_mid_body_is_an_unexpected_eof() {
        let (feed, mut body) = Body::from_conn(Some(10), false);
        let reader = Arc::new(Count::default());
        feed.push_data(Bytes::from_static(b"abc"));
        assert_eq!(data(poll(&mut body, &reader)), "abc");
        assert!(poll(&mut body, &reader).is_pending());
        drop(feed);
        assert_eq!(reader.get(), 1, "the waiting body is woken");
        let err = body.collect().now_or_never().unwrap().unwrap_err();
        let io = std::error::Error::source(&err)
            .and_then(|e| e.downcast_ref::<io::Error>())
            .expect("an io::Error");
        assert_eq!(io.kind(), io::ErrorKind::UnexpectedEof);

        let (feed, body) = Body::from_conn(None, false);
        feed.fail_incomplete();
        let err = body.collect().now_or_never().unwrap().unwrap_err();
        assert!(err.to_string().contains("closed before the end"));
    }

    #[test]
    fn a_feed_dropped_after_the_end_changes_nothing() {
        let (feed, body) = Body::from_conn(Some(2), false);
        feed.push_data(Bytes::from_static(b"ok"));
        feed.end();
        drop(feed);
        let collected = body.collect().now_or_never().unwrap().unwrap();
        assert_eq!(collected.to_bytes(), "ok");
    }

    #[test]
    fn dropping_the_body_unread_tells_the_connection() {
        let (feed, mut body) = Body::from_conn(Some(10), false);
        let conn = Arc::new(Count::default());
        let conn_waker = Waker::from(Arc::clone(&conn));
        let mut conn_cx = Context::from_waker(&conn_waker);
        feed.push_data(Bytes::from_static(b"abc"));
        assert!(feed.poll_wants_data(&mut conn_cx).is_pending());
        let reader = Arc::new(Count::default());
        assert_eq!(data(poll(&mut body, &reader)), "abc");
        drop(body);
        assert_eq!(conn.get(), 1, "the connection is woken");
        assert!(feed.dropped_unread());
        assert!(feed.body_dropped());
        assert!(!feed.wants_data());
        assert_eq!(feed.poll_wants_data(&mut conn_cx), Poll::Ready(false));
        // Frames queued after are dropped, not kept.
        feed.push_data(Bytes::from_static(b"def"));
        feed.push_trailers(HeaderMap::new());
        assert_eq!(feed.queued_bytes(), 0);
        feed.end();

        // Data queued and never read: unread too, and let go.
        let (feed, body) = Body::from_conn(None, false);
        feed.push_data(Bytes::from_static(b"abc"));
        feed.end();
        drop(body);
        assert!(feed.dropped_unread());
        assert_eq!(feed.queued_bytes(), 0);

        // Everything read but the end not yet polled: read.
        let (feed, mut body) = Body::from_conn(Some(3), false);
        feed.push_data(Bytes::from_static(b"abc"));
        feed.end();
        assert_eq!(data(poll(&mut body, &reader)), "abc");
        drop(body);
        assert!(!feed.dropped_unread());
        assert!(feed.body_dropped());
    }

    #[test]
    fn continue_is_owed_once_the_body_asks_for_data() {
        let (feed, mut body) = Body::from_conn(Some(3), true);
        let reader = Arc::new(Count::default());
        assert!(!feed.take_continue(), "not before the body is polled");
        assert!(poll(&mut body, &reader).is_pending());
        assert!(feed.take_continue());
        assert!(!feed.take_continue(), "only once");
        assert!(poll(&mut body, &reader).is_pending());
        assert!(!feed.take_continue());
        feed.push_data(Bytes::from_static(b"abc"));
        feed.end();
        assert_eq!(data(poll(&mut body, &reader)), "abc");

        // Without the expectation, never.
        let (feed, mut body) = Body::from_conn(Some(3), false);
        assert!(poll(&mut body, &reader).is_pending());
        assert!(!feed.take_continue());

        // Dropped before a poll: no 100, and the connection learns it.
        let (feed, body) = Body::from_conn(Some(3), true);
        drop(body);
        assert!(!feed.take_continue());
        assert!(feed.dropped_unread());
    }

    #[test]
    fn a_body_read_on_another_thread_is_woken() {
        let (feed, body) = Body::from_conn(None, false);
        let reader = std::thread::spawn(move || {
            futures_util::future::poll_fn({
                let mut body = Some(body);
                let mut out = Vec::new();
                move |cx| loop {
                    let b = body.as_mut().expect("polled after the end");
                    match Pin::new(&mut *b).poll_frame(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Some(Ok(f))) => out.extend_from_slice(&f.into_data().unwrap()),
                        Poll::Ready(Some(Err(e))) => panic!("{e}"),
                        Poll::Ready(None) => return Poll::Ready(std::mem::take(&mut out)),
                    }
                }
            })
            .block()
        });
        let mut sent = Vec::new();
        for i in 0..200u8 {
            // Wait as a connection does until the body asks, then feed it.
            futures_util::future::poll_fn(|cx| feed.poll_wants_data(cx)).block();
            let chunk = vec![i; usize::from(i % 7) + 1];
            sent.extend_from_slice(&chunk);
            feed.push_data(Bytes::from(chunk));
        }
        feed.end();
        assert_eq!(reader.join().unwrap(), sent);
    }

    /// Polls a future to its end on this thread, parking between wakes.
    trait Block: std::future::Future + Sized {
        fn block(self) -> Self::Output {
            struct Unpark(std::thread::Thread);
            impl Wake for Unpark {
                fn wake(self: Arc<Self>) {
                    self.0.unpark();
                }
            }
            let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
            let mut cx = Context::from_waker(&waker);
            let mut fut = std::pin::pin!(self);
            loop {
                if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
                    return out;
                }
                std::thread::park();
            }
        }
    }

    impl<F: std::future::Future> Block for F {}

    #[test]
    fn debug_and_collect_bytes() {
        let (feed, body) = Body::from_conn(Some(2), false);
        assert_eq!(format!("{body:?}"), "Body(\"incoming\")");
        feed.push_data(Bytes::from_static(b"hi"));
        feed.end();
        assert_eq!(body.collect_bytes().now_or_never().unwrap().unwrap(), "hi");
    }
}
