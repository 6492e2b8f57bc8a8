//! HTTP/2 streams after the handler: the unread rest of a request body,
//! and a response that waits for a flow-control window that never opens.
//!
//! **The rest of a request body.** When a handler answers without reading
//! the whole body, hyper drops it, and h2 resets the stream (`NO_ERROR`
//! once the answer is complete, RFC 9113 §8.1; `CANCEL` before). From
//! then on h2 ignores the client's frames on that stream (§5.1: an
//! endpoint MUST ignore frames on a stream it has reset). Whether a
//! rule-breaking frame (DATA beyond `content-length`, a second HEADERS
//! without END_STREAM, ...) got the stream error RFC 9113 prescribes
//! (§8.1.1: `PROTOCOL_ERROR`) or was ignored thus depended on whether the
//! handler had answered first. [`unread_hook`] keeps reading such a body
//! after the handler drops it — within what is left of
//! `TERN_MAX_BODY_BYTES` and `TERN_REQUEST_TIMEOUT` — so the stream stays
//! open and h2 keeps checking it, whichever is faster. Past either bound
//! the rest is dropped as before (and the reset is then ours, sent before
//! any later frame). A body whose declared length is already over the
//! limit is not read.
//!
//! **A window that never opens.** hyper's stream task waits for send
//! capacity with a chunk of the answer in hand, and polls nothing of ours
//! meanwhile: a client that never opens its window held the stream, its
//! task and its answer until the connection closed. [`StreamExec`] spawns
//! hyper's stream tasks inside [`StallGuard`], and [`ConnBody`] tells the
//! guard (through a thread-local, while the guard polls) whether the last
//! thing the stream did was to take a chunk it could not send yet. A chunk
//! that waits longer than `TERN_WRITE_TIMEOUT` ends the task: the stream is
//! reset (`CANCEL`) and its memory freed, while the connection and its
//! other streams go on. `ConnBody` hands HTTP/2 answers on in chunks of at
//! most [`CHUNK`] bytes, so what h2 itself buffers for a stalled stream
//! stays within one chunk. A timer exists only for a stream that waits for
//! its window; nothing of this runs for HTTP/1.

use std::{
    cell::Cell,
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http_body::{Body as _, Frame, SizeHint};
use http_body_util::BodyExt;
use tern_core::body::{Body, OnUnread};
use tokio::time::{Instant, Sleep};

/// The largest piece of an HTTP/2 answer handed to h2 at once: h2's
/// default frame size.
pub(super) const CHUNK: usize = 16 * 1024;

/// The hook that reads the rest of an HTTP/2 request body its handler
/// dropped (see the module docs).
pub(super) fn unread_hook(timeout: Duration) -> OnUnread {
    Arc::new(move |body: hyper::body::Incoming, remaining: u64| {
        // More than the limit allows is declared: reading it is wasted,
        // the stream would be reset at the limit anyway.
        if remaining == 0 || body.size_hint().lower() > remaining {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(read_rest(body, remaining, timeout));
        }
    })
}

async fn read_rest(mut body: hyper::body::Incoming, mut remaining: u64, timeout: Duration) {
    let _ = tokio::time::timeout(timeout, async {
        while let Some(Ok(frame)) = body.frame().await {
            if let Some(data) = frame.data_ref() {
                let len = data.len() as u64;
                if len > remaining {
                    return;
                }
                remaining -= len;
            }
        }
    })
    .await;
}

/// What the last poll of an HTTP/2 answer's body did while the stall guard
/// polled its stream: `TOOK_CHUNK` if it handed out a chunk and the task
/// then stopped (hyper's stream task polls the body again only once the
/// chunk before is sent, so the chunk now waits for send capacity),
/// `MOVED` if it was polled and had nothing (or ended).
const NOTHING: u8 = 0;
const TOOK_CHUNK: u8 = 1;
const MOVED: u8 = 2;

thread_local! {
    /// Safe as a thread-local: a [`StallGuard`] clears it, polls its own
    /// stream (which polls that stream's body, the only writer), and reads
    /// it back, all in one synchronous poll; no other stream's body is
    /// polled inside that poll, so the value read is this stream's. It
    /// holds no request's values, only what the last body poll did.
    static LAST_BODY_POLL: Cell<u8> = const { Cell::new(NOTHING) };
}

/// The body of every answer, as hyper sends it. For HTTP/2 it tells the
/// stream's [`StallGuard`] when a chunk waits for send capacity, and hands
/// on at most [`CHUNK`] bytes at a time; for HTTP/1 it is the app's body.
pub(super) struct ConnBody {
    body: Body,
    h2: bool,
    /// The part of a large chunk not yet handed on.
    rest: Option<Bytes>,
}

impl ConnBody {
    #[inline]
    pub(super) fn new(body: Body, h2: bool) -> Self {
        ConnBody {
            body,
            h2,
            rest: None,
        }
    }
}

impl http_body::Body for ConnBody {
    type Data = Bytes;
    type Error = tern_core::BodyError;

    #[inline]
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if !this.h2 {
            return Pin::new(&mut this.body).poll_frame(cx);
        }
        let mut chunk = match this.rest.take() {
            Some(rest) => rest,
            None => match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => data,
                    Err(frame) => {
                        LAST_BODY_POLL.set(MOVED);
                        return Poll::Ready(Some(Ok(frame)));
                    }
                },
                other => {
                    LAST_BODY_POLL.set(MOVED);
                    return other;
                }
            },
        };
        if chunk.len() > CHUNK {
            this.rest = Some(chunk.split_off(CHUNK));
        }
        LAST_BODY_POLL.set(if chunk.is_empty() { MOVED } else { TOOK_CHUNK });
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    #[inline]
    fn is_end_stream(&self) -> bool {
        self.rest.is_none() && self.body.is_end_stream()
    }

    #[inline]
    fn size_hint(&self) -> SizeHint {
        match &self.rest {
            None => self.body.size_hint(),
            Some(rest) => {
                let mut hint = self.body.size_hint();
                let n = rest.len() as u64;
                hint.set_lower(hint.lower() + n);
                if let Some(upper) = hint.upper() {
                    hint.set_upper(upper + n);
                }
                hint
            }
        }
    }
}

/// The executor hyper spawns its HTTP/2 stream tasks on: each in a
/// [`StallGuard`].
#[derive(Clone, Copy, Debug)]
pub(super) struct StreamExec {
    pub(super) write_timeout: Duration,
}

impl<F> hyper::rt::Executor<F> for StreamExec
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        tokio::spawn(StallGuard {
            fut,
            write_timeout: self.write_timeout,
            stalled: false,
            timer: None,
        });
    }
}

pin_project_lite::pin_project! {
    /// A stream task that ends (resetting its stream) once a chunk of its
    /// answer has waited longer than the write timeout for send capacity.
    pub(super) struct StallGuard<F> {
        #[pin]
        fut: F,
        write_timeout: Duration,
        stalled: bool,
        // Made when the stream first waits for its window.
        timer: Option<Pin<Box<Sleep>>>,
    }
}

impl<F: Future> Future for StallGuard<F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        LAST_BODY_POLL.set(NOTHING);
        let res = this.fut.poll(cx);
        let last = LAST_BODY_POLL.replace(NOTHING);
        if res.is_ready() {
            return Poll::Ready(());
        }
        match last {
            // The body was polled, so the chunk before went out: the new
            // one waits from now.
            TOOK_CHUNK => {
                *this.stalled = true;
                let deadline = Instant::now() + *this.write_timeout;
                match this.timer {
                    Some(timer) => timer.as_mut().reset(deadline),
                    None => *this.timer = Some(Box::pin(tokio::time::sleep_until(deadline))),
                }
            }
            MOVED => *this.stalled = false,
            _ => {}
        }
        if *this.stalled {
            if let Some(timer) = this.timer {
                if timer.as_mut().poll(cx).is_ready() {
                    tracing::debug!(
                        "resetting an HTTP/2 stream whose client did not open its window"
                    );
                    return Poll::Ready(());
                }
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(body: &mut ConnBody) -> Vec<usize> {
        let waker = futures_util::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut sizes = Vec::new();
        while let Poll::Ready(Some(Ok(frame))) = Pin::new(&mut *body).poll_frame(&mut cx) {
            sizes.push(frame.into_data().map_or(0, |d| d.len()));
            if body.is_end_stream() {
                break;
            }
        }
        sizes
    }

    #[test]
    fn http2_answers_go_out_in_chunks_and_http1_ones_whole() {
        let big = vec![b'x'; 2 * CHUNK + 5];
        let mut h2 = ConnBody::new(Body::from(big.clone()), true);
        assert_eq!(h2.size_hint().exact(), Some(big.len() as u64));
        assert_eq!(drain(&mut h2), vec![CHUNK, CHUNK, 5]);
        assert!(h2.is_end_stream());
        let mut h1 = ConnBody::new(Body::from(big.clone()), false);
        assert_eq!(drain(&mut h1), vec![big.len()]);
    }

    #[test]
    fn the_guard_hears_of_a_chunk_only_from_http2_bodies() {
        let mut h2 = ConnBody::new(Body::from("abc"), true);
        LAST_BODY_POLL.set(NOTHING);
        drain(&mut h2);
        assert_eq!(LAST_BODY_POLL.get(), TOOK_CHUNK);
        let mut h1 = ConnBody::new(Body::from("abc"), false);
        LAST_BODY_POLL.set(NOTHING);
        drain(&mut h1);
        assert_eq!(LAST_BODY_POLL.get(), NOTHING);
    }

    #[tokio::test]
    async fn a_chunk_that_waits_past_the_write_timeout_ends_the_task() {
        // A stream task that takes a chunk and then waits forever (as
        // hyper's does for a window that never opens).
        struct Waits {
            body: ConnBody,
            polled: bool,
        }
        impl Future for Waits {
            type Output = ();
            fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
                if !self.polled {
                    self.polled = true;
                    let _ = Pin::new(&mut self.body).poll_frame(cx);
                }
                Poll::Pending
            }
        }
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let exec = StreamExec {
            write_timeout: Duration::from_millis(300),
        };
        hyper::rt::Executor::execute(&exec, async move {
            let _tx = tx;
            Waits {
                body: ConnBody::new(Body::from("abc"), true),
                polled: false,
            }
            .await;
        });
        let start = Instant::now();
        let _ = rx.await;
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(290) && took < Duration::from_millis(1500),
            "{took:?}"
        );
    }
}
