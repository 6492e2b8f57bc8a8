//! One HTTP/1.1 connection served by Tern's own codec (step 4 of
//! `docs/plans/http1.md`, §1.4): one future per connection, with its own
//! fields (no atomics shared with another component), reading heads with
//! [`parse`](super::parse), feeding request bodies with
//! [`body`](super::body), writing answers with [`write`](super::write).
//!
//! The life of a connection:
//! - **Head**: bytes are read (a buffer is taken only once the socket is
//!   readable, see [`buf`](super::buf)) and scanned; a whole head is parsed
//!   and checked, and the request is dispatched. A refused head is answered
//!   and the connection closes.
//! - **Serve**: the app's [`ResponseFuture`] is polled inline; while it
//!   waits, the request body is fed from the read buffer as the body asks.
//! - **Answer**: the answer's head and body go into the write buffer, a
//!   streamed body frame by frame.
//! - Then back to **Head**: a pipelined request already in the buffer is
//!   served before anything is written, so a batch of pipelined answers
//!   leaves in one write; the buffer is written whenever the connection
//!   would otherwise wait (nothing waits behind a slow handler, a streamed
//!   body or a `100 Continue`), and past [`MAX_UNSENT`] bytes.
//! - **Close**: what is written is flushed (under the write timeout), then
//!   the socket is shut down and closed the lingering way, so that our last
//!   words reach the client. A client that stops reading is reset.
//! - **Upgrade**: after a `101` (or a `2xx` to `CONNECT`) is flushed, the
//!   socket and the bytes read past the head go to `tern::upgrade`.
//!
//! Timeouts use one timer, moved only when a deadline comes *sooner* than
//! the one it holds; a timer that fires early is set again to the real
//! deadline. So a busy keep-alive connection does not touch the timer per
//! request: the clock is read when the connection goes idle, when a head
//! is left partial, and when a write is refused.

use std::{
    future::Future,
    net::SocketAddr,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
};

use bytes::BytesMut;
use http::{HeaderMap, Version};
use tern_core::body::{conn::Feed, Body};
use tokio::{
    sync::{oneshot, watch},
    time::{Instant, Sleep},
};

use super::{
    body::Decoder,
    buf::{self, Socket},
    parse::{self, Scan},
    write,
};
use crate::{
    app::{AppService, ResponseFuture},
    config::Timeouts,
    drain::DrainState,
    server::watchdog::Linger,
};

/// Answer bytes kept unsent at most: past this the buffer is written even
/// if more pipelined requests could be answered first.
const MAX_UNSENT: usize = 64 * 1024;

mod answer;
mod fuzz;
mod io;
mod request;
mod socket;
mod wait;

pub(crate) use socket::{Handover, PendingUpgrade};
pub(in crate::server) use socket::{Memory, Permitted};

/// What the connection keeps of a request while it is served.
#[derive(Clone, Copy)]
struct Facts {
    version: Version,
    method: write::Method,
    keep_alive: bool,
    /// `TE: trailers`: the answer's trailers may be sent.
    trailers: bool,
}

/// The request body still to come from the socket.
enum Incoming {
    /// None, or all of it was handed over already.
    Done,
    /// Being decoded from the read buffer into the body's slot (the
    /// decoder boxed: every idle connection would carry its size).
    Feeding { feed: Feed, decoder: Box<Decoder> },
    /// Its framing was refused or the client left: the connection closes
    /// after the answer.
    Broken,
}

/// Where the connection is. Small and `Copy`: what a request holds (the
/// app's future, the answer's body, the request body's feed) lives in
/// the connection's fields, so no step moves it.
#[derive(Clone, Copy)]
enum State {
    /// Reading (or waiting for) the next head.
    Head,
    /// The app's future (`fut`) is polled.
    Serve(Facts),
    /// The answer's body (`body`) is written under `framing`.
    Answer {
        framing: write::Framing,
        facts: Facts,
        keep_alive: bool,
    },
    /// The answer is written; the request body is still read (by a task
    /// the handler spawned): fed to its end before the next request.
    Drain {
        keep_alive: bool,
    },
    /// A `101` written: flush it, then hand the socket over (`upgrade`).
    Upgrade,
    /// Flush, shut down, close lingering.
    Close,
    /// A client that stopped reading: reset.
    Reset,
    Done,
}

/// What a step of the state machine did.
enum Step {
    /// Changed state or made progress: step again.
    Again,
    /// Waits for the socket, the app or the body (a waker is registered).
    Wait,
}

/// The connection's settings, shared by all its requests.
pub(in crate::server) struct Settings {
    pub(in crate::server) app: AppService,
    pub(in crate::server) drain: Arc<DrainState>,
    pub(in crate::server) timeouts: Timeouts,
    pub(in crate::server) limits: parse::Limits,
}

/// One HTTP/1.1 connection; completes when it is closed or upgraded.
pub(in crate::server) struct H1Conn<S>
where
    S: Socket + Linger + 'static,
{
    io: Option<Permitted<S>>,
    settings: Arc<Settings>,
    peer: SocketAddr,
    rd: BytesMut,
    scan: Scan,
    /// The last request's `Host` value (see `parse::head_with`).
    host: Option<Box<http::HeaderValue>>,
    wr: Vec<u8>,
    /// Bytes of `wr` already written.
    wr_at: usize,
    /// Body data larger than [`write::COPY_MAX`], written after `wr`
    /// without being copied into it, and what follows it (a chunk's end).
    big: Option<bytes::Bytes>,
    after_big: Option<&'static [u8]>,
    state: State,
    /// The app's future for the request being served.
    fut: Option<ResponseFuture>,
    /// The body of the answer being written, and its trailers.
    body: Option<Body>,
    trailers: Option<Box<HeaderMap>>,
    /// The request body still to come.
    incoming: Incoming,
    /// The hand-over of an upgrade the request asked for.
    upgrade: Option<oneshot::Sender<Handover>>,
    /// The socket's read side ended.
    eof: bool,
    /// Requests served so far.
    requests: u64,
    accepted: Instant,
    /// Since when the connection has waited with no request begun.
    idle_since: Option<Instant>,
    /// Since when a head has been partly read.
    head_since: Option<Instant>,
    /// Since when the socket has refused our bytes.
    blocked_since: Option<Instant>,
    timer: Pin<Box<Sleep>>,
    stop: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// The waker `stop` and `timer` were last polled with: `stop` is polled
    /// again only when the signal changed (`DrainState::stop_changed`) or
    /// with another waker, `timer` when it was set or fired (see
    /// `poll_wait`; a poll of either costs ~100-200 instructions).
    wait_waker: Option<std::task::Waker>,
    /// `timer` is registered with `wait_waker` at its current deadline
    /// and has not fired: polling it again would say `Pending`.
    timer_armed: bool,
    /// The server drains: answers say `Connection: close`; an idle
    /// connection closes after [`DRAIN_IDLE_GRACE`].
    draining: Option<Instant>,
}

impl<S> H1Conn<S>
where
    S: Socket + Linger + 'static,
{
    /// Serves `io`, whose first bytes (read to choose the protocol) are
    /// `first`.
    pub(in crate::server) fn new(
        io: Permitted<S>,
        first: &[u8],
        settings: Arc<Settings>,
        peer: SocketAddr,
        mut stop: watch::Receiver<bool>,
    ) -> Self {
        let mut rd = BytesMut::new();
        if !first.is_empty() {
            rd = buf::take_read();
            rd.extend_from_slice(first);
        }
        let accepted = Instant::now();
        let first_deadline = accepted
            + settings
                .timeouts
                .header_read
                .min(settings.timeouts.keep_alive);
        H1Conn {
            io: Some(io),
            settings,
            peer,
            rd,
            scan: Scan::default(),
            host: None,
            wr: Vec::new(),
            wr_at: 0,
            big: None,
            after_big: None,
            state: State::Head,
            fut: None,
            body: None,
            trailers: None,
            incoming: Incoming::Done,
            upgrade: None,
            eof: false,
            requests: 0,
            accepted,
            idle_since: None,
            head_since: None,
            blocked_since: None,
            timer: Box::pin(tokio::time::sleep_until(first_deadline)),
            wait_waker: None,
            timer_armed: false,
            stop: Some(Box::pin(async move {
                let _ = stop.wait_for(|s| *s).await;
            })),
            draining: None,
        }
    }

    fn metrics(&self) -> Option<&crate::metrics::http::HttpMetrics> {
        self.settings.app.http_metrics()
    }

    fn step(&mut self, cx: &mut Context<'_>) -> Step {
        match self.state {
            State::Head => self.head(cx),
            State::Serve(facts) => self.serve(cx, facts),
            State::Answer {
                framing,
                facts,
                keep_alive,
            } => self.answer(cx, framing, facts, keep_alive),
            State::Drain { keep_alive } => self.drain(cx, keep_alive),
            State::Upgrade => self.upgrade(cx),
            State::Close => self.close(cx),
            State::Reset => {
                if let Some(io) = self.io.take() {
                    io.io.reset_on_close();
                }
                self.state = State::Done;
                Step::Again
            }
            State::Done => Step::Wait,
        }
    }
}

impl<S> Future for H1Conn<S>
where
    S: Socket + Linger + 'static,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        loop {
            while let Step::Again = this.step(cx) {
                if matches!(this.state, State::Done) {
                    return Poll::Ready(());
                }
            }
            if matches!(this.state, State::Done) {
                return Poll::Ready(());
            }
            if this.poll_wait(cx).is_pending() {
                return Poll::Pending;
            }
        }
    }
}

impl<S> Drop for H1Conn<S>
where
    S: Socket + Linger + 'static,
{
    fn drop(&mut self) {
        // Dropped while open (the server's task cancelled): close as a
        // finished connection does.
        if let Some(io) = self.io.take() {
            io.io.discard_unread();
            io.io.linger_close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every idle connection holds this much (plus its task's header, the
    /// socket's registration, its timer and its stop signal): a field that
    /// grows it must say why. What a request holds only while it is
    /// served (a request body's decoder, an answer's trailers) is boxed.
    #[test]
    fn an_idle_connection_is_small() {
        let conn = std::mem::size_of::<H1Conn<tokio::net::TcpStream>>();
        // 800: the waker the stop signal and the timer were polled with
        // (16 bytes, and a flag) lets a connection skip both polls while
        // it waits (~220 instructions a request, session 43).
        assert!(conn <= 800, "{conn} bytes");
        assert!(std::mem::size_of::<State>() <= 24);
        assert!(std::mem::size_of::<Incoming>() <= 24);
    }
}
