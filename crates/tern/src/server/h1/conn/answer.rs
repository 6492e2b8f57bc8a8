//! The answer side: the head written under the framing it chooses, the
//! body frame by frame, then what comes next: the next request, an
//! upgrade's hand-over, or the close.

use std::{
    pin::Pin,
    task::{Context, Poll},
};

use http::{HeaderMap, StatusCode};
use http_body::Body as _;
use tern_core::{body::Body, Response};
use tokio::sync::oneshot;

use super::{says_close, Facts, H1Conn, Handover, Incoming, State, Step, MAX_UNSENT};
use crate::server::{
    h1::{body::Event, buf::Socket, write},
    watchdog::Linger,
};

impl<S> H1Conn<S>
where
    S: Socket + Linger + 'static,
{
    /// Writes the answer's head and moves on to its body.
    pub(super) fn respond(
        &mut self,
        res: Response,
        facts: Facts,
        mut incoming: Incoming,
        upgrade: Option<oneshot::Sender<Handover>>,
    ) {
        let (parts, body) = res.into_parts();
        let status = parts.status;
        let switching = upgrade.is_some()
            && (status == StatusCode::SWITCHING_PROTOCOLS
                || (facts.method == write::Method::Connect && status.is_success()));
        let mut keep_alive = facts.keep_alive
            && self.draining.is_none()
            && !says_close(&parts.headers)
            && !matches!(incoming, Incoming::Broken);
        // A body the handler is done with but that is not over: what is
        // buffered of it is dropped; if that is not all of it, the
        // connection cannot find the next request and closes after this
        // answer (which says so).
        if let Incoming::Feeding { feed, .. } = &incoming {
            if feed.body_dropped() {
                self.discard(&mut incoming);
                if !matches!(incoming, Incoming::Done) {
                    keep_alive = false;
                }
            }
        }
        let size = body.size_hint();
        let req = write::For {
            version: facts.version,
            method: facts.method,
            keep_alive,
        };
        let written = write::head(self.wr(), &parts, &size, &req);
        let framing = written.framing;
        keep_alive &= written.keep_alive;
        self.state = State::Answer {
            body,
            framing,
            facts,
            keep_alive,
            incoming,
            trailers: None,
            upgrade: if switching { upgrade } else { None },
        };
    }

    /// Drops what the read buffer holds of a body nobody reads.
    pub(super) fn discard(&mut self, incoming: &mut Incoming) {
        let Incoming::Feeding { decoder, .. } = incoming else {
            return;
        };
        loop {
            match decoder.decode(&mut self.rd) {
                Ok(Some(Event::End)) => {
                    *incoming = Incoming::Done;
                    return;
                }
                Ok(Some(_)) => {}
                Ok(None) => return,
                Err(_) => {
                    *incoming = Incoming::Broken;
                    return;
                }
            }
        }
    }

    /// Writes the answer's body.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn answer(
        &mut self,
        cx: &mut Context<'_>,
        mut body: Body,
        mut framing: write::Framing,
        facts: Facts,
        mut keep_alive: bool,
        mut incoming: Incoming,
        mut trailers: Option<HeaderMap>,
        upgrade: Option<oneshot::Sender<Handover>>,
    ) -> Step {
        let bodyless = matches!(framing, write::Framing::Empty);
        loop {
            if self.wr.len() - self.wr_at >= MAX_UNSENT {
                match self.poll_flush(cx) {
                    Poll::Ready(Ok(())) => {}
                    Poll::Ready(Err(e)) => {
                        tracing::debug!(error = %e, "connection write failed");
                        self.state = State::Done;
                        return Step::Again;
                    }
                    Poll::Pending => {
                        self.state = State::Answer {
                            body,
                            framing,
                            facts,
                            keep_alive,
                            incoming,
                            trailers,
                            upgrade,
                        };
                        return Step::Wait;
                    }
                }
            }
            if bodyless && body.is_end_stream() {
                break;
            }
            match Pin::new(&mut body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(mut data) => {
                        if let write::Framing::Length(left) = &mut framing {
                            // A body longer than the length its head
                            // declared: the rest is not sent, and the
                            // connection closes (nothing after it could be
                            // told from it).
                            let n = usize::try_from(*left).unwrap_or(usize::MAX);
                            if data.len() > n {
                                data.truncate(n);
                                keep_alive = false;
                            }
                            *left -= data.len() as u64;
                        }
                        if !bodyless {
                            write::data(self.wr(), framing, &data);
                        }
                    }
                    Err(frame) => {
                        if let Ok(t) = frame.into_trailers() {
                            trailers = Some(t);
                        }
                    }
                },
                Poll::Ready(None) => break,
                Poll::Ready(Some(Err(e))) => {
                    // The answer cannot be completed: its framing tells the
                    // client it is cut short when the connection closes.
                    tracing::debug!(error = %e, "answer body failed: closing the connection");
                    self.state = State::Close;
                    return Step::Again;
                }
                Poll::Pending => {
                    // A body read on another task may still want data.
                    let _ = self.feed(cx, &mut incoming);
                    self.state = State::Answer {
                        body,
                        framing,
                        facts,
                        keep_alive,
                        incoming,
                        trailers,
                        upgrade,
                    };
                    return Step::Wait;
                }
            }
        }
        match framing {
            write::Framing::Chunked => {
                let sent = trailers.as_ref().filter(|_| facts.trailers);
                write::end_chunked(self.wr(), sent);
            }
            // Shorter than declared: the client learns it from the close.
            write::Framing::Length(left) if left > 0 => keep_alive = false,
            _ => {}
        }
        drop(body);
        if let Some(tx) = upgrade {
            self.state = State::Upgrade(Some(tx));
            return Step::Again;
        }
        match incoming {
            Incoming::Done => {}
            Incoming::Broken => keep_alive = false,
            Incoming::Feeding { .. } => {
                // Still read by someone: the connection cannot serve the
                // next request before the body is over. Drop what is
                // buffered; if the body goes on, close.
                self.discard(&mut incoming);
                if !matches!(incoming, Incoming::Done) {
                    keep_alive = false;
                }
            }
        }
        self.state = if keep_alive {
            State::Head
        } else {
            State::Close
        };
        Step::Again
    }

    /// Flushes the `101` and hands the socket over.
    pub(super) fn upgrade(
        &mut self,
        cx: &mut Context<'_>,
        tx: Option<oneshot::Sender<Handover>>,
    ) -> Step {
        match self.poll_flush(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(_)) => {
                self.state = State::Done;
                return Step::Again;
            }
            Poll::Pending => {
                self.state = State::Upgrade(tx);
                return Step::Wait;
            }
        }
        if let (Some(tx), Some(io)) = (tx, self.io.take()) {
            let read = std::mem::take(&mut self.rd).freeze();
            // A handler that answered 101 without asking for the socket:
            // it comes back here and is dropped (closed).
            let _ = tx.send((Box::new(io), read));
        }
        self.state = State::Done;
        Step::Again
    }

    /// Flushes what is written, shuts the socket down, closes lingering.
    pub(super) fn close(&mut self, cx: &mut Context<'_>) -> Step {
        if self.wr_at < self.wr.len() {
            match self.poll_flush(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(_)) => {
                    self.state = State::Done;
                    return Step::Again;
                }
                Poll::Pending => {
                    self.state = State::Close;
                    return Step::Wait;
                }
            }
        }
        if let Some(io) = self.io.as_mut() {
            match Pin::new(&mut io.io).poll_shutdown(cx) {
                Poll::Pending => {
                    self.state = State::Close;
                    return Step::Wait;
                }
                Poll::Ready(_) => {}
            }
        }
        if let Some(io) = self.io.take() {
            io.io.discard_unread();
            io.io.linger_close();
        }
        self.state = State::Done;
        Step::Again
    }
}
