//! The answer side: the head written under the framing it chooses, the
//! body frame by frame, then what comes next: the next request, an
//! upgrade's hand-over, or the close.

use std::{
    pin::Pin,
    task::{Context, Poll},
};

use http::StatusCode;
use http_body::Body as _;
use tern_core::Response;

use super::{Facts, H1Conn, Incoming, State, Step, MAX_UNSENT};
use crate::app::ResponseFuture;
use crate::server::{
    h1::{
        body::Event,
        buf::{self, Socket},
        write,
    },
    watchdog::Linger,
};

impl<S> H1Conn<S>
where
    S: Socket + Linger + 'static,
{
    /// Writes the answer of the app's future (`fut`), with the request ID
    /// it leaves to the writer, and drops the future.
    pub(super) fn respond_to(&mut self, res: Response, facts: Facts) {
        // Read in place: the future is a few hundred bytes to move.
        let id = self.fut.as_mut().and_then(ResponseFuture::take_request_id);
        self.fut = None;
        self.write_answer(res, facts, id);
    }

    /// Writes an answer's head and moves on to its body.
    pub(super) fn respond(&mut self, res: Response, facts: Facts) {
        self.write_answer(res, facts, None);
    }

    /// Writes an answer's head, with the request ID `id` as if in its map
    /// (see `write::head`), and moves on to its body.
    fn write_answer(&mut self, res: Response, facts: Facts, id: Option<http::HeaderValue>) {
        let (parts, body) = res.into_parts();
        let status = parts.status;
        let switching = self.upgrade.is_some()
            && (status == StatusCode::SWITCHING_PROTOCOLS
                || (facts.method == write::Method::Connect && status.is_success()));
        if !switching {
            self.upgrade = None;
        }
        let mut keep_alive = facts.keep_alive && self.draining.is_none();
        match &self.incoming {
            Incoming::Done => {}
            Incoming::Broken => keep_alive = false,
            // A body the handler is done with but that is not over: what
            // is buffered of it is dropped; if that is not all of it, the
            // connection cannot find the next request and closes after
            // this answer (which says so).
            Incoming::Feeding { feed, .. } => {
                if feed.body_dropped() {
                    keep_alive &= self.discard();
                }
            }
        }
        let size = body.size_hint();
        let req = write::For {
            version: facts.version,
            method: facts.method,
            keep_alive,
        };
        // The writer also reads the app's own `connection: close`.
        self.wr();
        // The name is the app's (the app of every future of this
        // connection), borrowed beside the write buffer.
        let name = &self.settings.app.config().request_id_header;
        let set = id.as_ref().map(|id| (name, id));
        let written = write::head(&mut self.wr, &parts, &size, &req, set);
        // Its room serves the next request (`buf::take_map`).
        buf::give_map(parts.headers);
        keep_alive &= written.keep_alive;
        self.body = Some(body);
        self.state = State::Answer {
            framing: written.framing,
            facts,
            keep_alive,
        };
    }

    /// Drops what the read buffer holds of a body nobody reads: true if
    /// that was all of it.
    pub(super) fn discard(&mut self) -> bool {
        let Incoming::Feeding { decoder, .. } = &mut self.incoming else {
            return matches!(self.incoming, Incoming::Done);
        };
        loop {
            match decoder.decode(&mut self.rd) {
                Ok(Some(Event::End)) => {
                    self.incoming = Incoming::Done;
                    return true;
                }
                Ok(Some(_)) => {}
                Ok(None) => return false,
                Err(_) => {
                    self.incoming = Incoming::Broken;
                    return false;
                }
            }
        }
    }

    /// Writes the answer's body.
    pub(super) fn answer(
        &mut self,
        cx: &mut Context<'_>,
        mut framing: write::Framing,
        facts: Facts,
        mut keep_alive: bool,
    ) -> Step {
        let bodyless = matches!(framing, write::Framing::Empty);
        loop {
            if self.big.is_some() || self.wr.len() - self.wr_at >= MAX_UNSENT {
                match self.poll_flush(cx) {
                    Poll::Ready(Ok(())) => {}
                    Poll::Ready(Err(e)) => {
                        tracing::debug!(error = %e, "connection write failed");
                        self.state = State::Done;
                        return Step::Again;
                    }
                    Poll::Pending => {
                        self.state = State::Answer {
                            framing,
                            facts,
                            keep_alive,
                        };
                        return Step::Wait;
                    }
                }
            }
            let Some(body) = self.body.as_mut() else {
                break;
            };
            // Nothing of it is sent (HEAD, 1xx, 204, 304, a tunnel's
            // answer): it is dropped unpolled, so that an endless body (an
            // event stream asked with HEAD) cannot keep the connection.
            if bodyless {
                break;
            }
            match Pin::new(body).poll_frame(cx) {
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
                        if data.is_empty() {
                            continue;
                        }
                        if data.len() > write::COPY_MAX {
                            // Written beside the buffer, not copied into
                            // it (the loop's top writes it out first).
                            if framing == write::Framing::Chunked {
                                write::chunk_prefix(self.wr(), data.len());
                                self.after_big = Some(write::CHUNK_END);
                            }
                            self.big = Some(data);
                        } else {
                            write::data(self.wr(), framing, &data);
                        }
                    }
                    Err(frame) => {
                        if let Ok(t) = frame.into_trailers() {
                            self.trailers = Some(Box::new(t));
                        }
                    }
                },
                Poll::Ready(None) => break,
                Poll::Ready(Some(Err(e))) => {
                    // The answer cannot be completed: its framing tells the
                    // client it is cut short when the connection closes.
                    tracing::debug!(error = %e, "answer body failed: closing the connection");
                    self.body = None;
                    self.state = State::Close;
                    return Step::Again;
                }
                Poll::Pending => {
                    // A body read on another task may still want data.
                    let _ = self.feed(cx);
                    self.state = State::Answer {
                        framing,
                        facts,
                        keep_alive,
                    };
                    return Step::Wait;
                }
            }
        }
        self.body = None;
        match framing {
            write::Framing::Chunked => {
                let trailers = self.trailers.take();
                let sent = trailers.as_deref().filter(|_| facts.trailers);
                write::end_chunked(self.wr(), sent);
            }
            // Shorter than declared: the client learns it from the close.
            write::Framing::Length(left) if left > 0 => keep_alive = false,
            _ => {}
        }
        if self.upgrade.is_some() {
            self.state = State::Upgrade;
            return Step::Again;
        }
        self.after_answer(keep_alive)
    }

    /// The answer is written: the next request, once the request body is
    /// over. A body something still reads (a task the handler spawned) is
    /// fed to its end first (`State::Drain`); one nobody reads is dropped
    /// from the buffer, and if it goes on past the buffer the connection
    /// closes, since the next request's start is unknown.
    fn after_answer(&mut self, mut keep_alive: bool) -> Step {
        match &self.incoming {
            Incoming::Done => {}
            Incoming::Feeding { feed, .. } if !feed.body_dropped() => {
                self.state = State::Drain { keep_alive };
                return Step::Again;
            }
            _ => keep_alive &= self.discard(),
        }
        self.state = if keep_alive {
            State::Head
        } else {
            State::Close
        };
        Step::Again
    }

    /// Feeds a request body still read after its answer until it ends or
    /// its reader drops it.
    pub(super) fn drain(&mut self, cx: &mut Context<'_>, keep_alive: bool) -> Step {
        loop {
            let read = matches!(
                &self.incoming,
                Incoming::Feeding { feed, .. } if !feed.body_dropped()
            );
            if !read {
                return self.after_answer(keep_alive);
            }
            // Ready: it queued something, ended the body, or found it
            // dropped; either way, look again.
            if self.feed(cx).is_pending() {
                return Step::Wait;
            }
        }
    }

    /// Flushes the `101` and hands the socket over.
    pub(super) fn upgrade(&mut self, cx: &mut Context<'_>) -> Step {
        match self.poll_flush(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(_)) => {
                self.state = State::Done;
                return Step::Again;
            }
            Poll::Pending => return Step::Wait,
        }
        if let (Some(tx), Some(io)) = (self.upgrade.take(), self.io.take()) {
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
        if self.unsent() {
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
