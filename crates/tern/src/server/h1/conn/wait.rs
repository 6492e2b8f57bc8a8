//! Waiting: the batch's write, the stop signal and the one timer of the
//! connection's deadlines (a head too slow, an idle keep-alive, the
//! drain's grace, a client that stopped reading).

use std::{
    future::Future,
    task::{Context, Poll},
};

use tokio::time::Instant;

use super::{H1Conn, Incoming, State};
use crate::{
    metrics::http::Reason,
    server::{
        h1::buf::Socket,
        watchdog::{Linger, DRAIN_IDLE_GRACE},
    },
};

impl<S> H1Conn<S>
where
    S: Socket + Linger + 'static,
{
    /// The deadline of what the connection waits for, and what passing it
    /// means.
    pub(super) fn deadline(&self) -> Option<(Instant, Expiry)> {
        let t = &self.settings.timeouts;
        let write = self
            .blocked_since
            .map(|b| (b + t.write, Expiry::SlowReader));
        let other = match self.state {
            State::Head => {
                if let Some(since) = self.head_since {
                    Some((since + t.header_read, Expiry::SlowHead))
                } else if let Some(since) = self.draining {
                    Some((since + DRAIN_IDLE_GRACE, Expiry::Idle))
                } else if self.requests == 0 {
                    Some((
                        self.accepted + t.header_read.min(t.keep_alive),
                        Expiry::SlowHead,
                    ))
                } else {
                    self.idle_since.map(|s| (s + t.keep_alive, Expiry::Idle))
                }
            }
            _ => None,
        };
        match (write, other) {
            (Some(w), Some(o)) => Some(if w.0 <= o.0 { w } else { o }),
            (w, o) => w.or(o),
        }
    }

    /// Before waiting: writes the batch, watches the stop signal and the
    /// timer. `Ready` when something happened that needs another step.
    pub(super) fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.unsent() && !matches!(self.state, State::Done) {
            match self.poll_flush(cx) {
                Poll::Ready(Ok(())) => {
                    // Written: a state that waited for it goes on.
                    if matches!(self.state, State::Head) && self.rd.is_empty() {
                        self.release_buffers();
                    }
                }
                Poll::Ready(Err(e)) => {
                    tracing::debug!(error = %e, "connection write failed");
                    self.state = State::Done;
                    return Poll::Ready(());
                }
                Poll::Pending => {}
            }
        }
        if self.poll_peer_left(cx).is_ready() {
            return Poll::Ready(());
        }
        // The stop signal and the timer wake the waker they were last
        // polled with: with the same waker, each is polled again only when
        // it may have something to say (a poll of either costs ~100-200
        // instructions, and the connection waits once a request).
        let same_waker = self
            .wait_waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()));
        if !same_waker {
            self.wait_waker = Some(cx.waker().clone());
            self.timer_armed = false;
        }
        if let Some(stop) = self.stop.as_mut() {
            // Unchanged and polled with this waker: nothing to see.
            let changed = self.settings.drain.stop_changed();
            if (changed || !same_waker) && stop.as_mut().poll(cx).is_ready() {
                self.stop = None;
                self.draining = Some(Instant::now());
                if matches!(self.state, State::Head) && self.scan.idle(self.rd.len()) {
                    // Idle: a request already on the wire still gets its
                    // answer (with `Connection: close`), for a short grace.
                    return Poll::Ready(());
                }
            }
        }
        let Some((deadline, expiry)) = self.deadline() else {
            return Poll::Pending;
        };
        if self.timer.deadline() > deadline || self.timer.is_elapsed() {
            // Sooner, or fired (early or not): set, and polled below.
            self.timer.as_mut().reset(deadline);
            self.timer_armed = false;
        }
        if self.timer_armed {
            return Poll::Pending;
        }
        if self.timer.as_mut().poll(cx).is_pending() {
            self.timer_armed = true;
            return Poll::Pending;
        }
        if Instant::now() < deadline {
            // An early timer: set it to the real deadline.
            self.timer.as_mut().reset(deadline);
            return match self.timer.as_mut().poll(cx) {
                Poll::Pending => {
                    self.timer_armed = true;
                    Poll::Pending
                }
                Poll::Ready(()) => self.expire(expiry),
            };
        }
        self.expire(expiry)
    }

    /// While the app works on an answer, or streams one, and reads nothing
    /// of the request, a client that closes its side is noticed, as
    /// hyper's server notices it (`mid_message_detect_eof`): the answer is
    /// dropped (the handler cancelled, an endless event stream ended) and
    /// the connection closed. Bytes the client sends meanwhile (a
    /// pipelined request) are kept for later; once some are, the check
    /// stops, as hyper's does. `Ready` when the client left.
    fn poll_peer_left(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let watched = matches!(self.state, State::Serve(_) | State::Answer { .. })
            && matches!(self.incoming, Incoming::Done)
            && !self.eof
            && self.rd.is_empty()
            && self.upgrade.is_none();
        if !watched {
            return Poll::Pending;
        }
        match self.poll_fill(cx) {
            Poll::Ready(Ok(0) | Err(_)) => {
                tracing::debug!("the client left before its answer was written");
                self.eof = true;
                self.fut = None;
                self.body = None;
                self.state = State::Close;
                Poll::Ready(())
            }
            // Read: kept for the next head. Pending: the read side's waker
            // is registered.
            Poll::Ready(Ok(_)) | Poll::Pending => Poll::Pending,
        }
    }

    pub(super) fn expire(&mut self, expiry: Expiry) -> Poll<()> {
        match expiry {
            Expiry::SlowReader => {
                if let Some(m) = self.metrics() {
                    m.reject(Reason::SlowReader);
                }
                tracing::debug!("resetting a connection whose client stopped reading");
                self.state = State::Reset;
            }
            Expiry::SlowHead => {
                if let Some(m) = self.metrics() {
                    m.reject(Reason::HeaderTimeout);
                }
                // Nothing to answer yet (slowloris): dropped.
                self.state = State::Done;
            }
            Expiry::Idle => self.state = State::Close,
        }
        Poll::Ready(())
    }
}

/// What passing a deadline means.
#[derive(Clone, Copy, Debug)]
pub(super) enum Expiry {
    SlowReader,
    SlowHead,
    Idle,
}
