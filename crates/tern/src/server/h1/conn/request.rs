//! The request side: reading and parsing heads, refusing bad ones,
//! dispatching to the app, and feeding request bodies from the read
//! buffer as they are asked for.

use std::{
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
};

use http::Version;
use tern_core::body::Body;
use tokio::time::Instant;

use super::{Facts, H1Conn, Incoming, PendingUpgrade, State, Step};
use crate::{
    metrics::http::Reason,
    protocol::h1::Refusal,
    server::{
        h1::{
            body::{self as h1body, Decoder, Event},
            buf::Socket,
            parse::{self, Framing, Scan, Scanned},
            write,
        },
        watchdog::Linger,
    },
};

impl<S> H1Conn<S>
where
    S: Socket + Linger + 'static,
{
    /// Reads and parses the next head.
    pub(super) fn head(&mut self, cx: &mut Context<'_>) -> Step {
        loop {
            if !self.rd.is_empty() {
                match self.scan.next(&self.rd, self.settings.limits.max_head) {
                    Ok(Scanned::Head { start, end }) => {
                        let _ = self.rd.split_to(start);
                        let bytes = self.rd.split_to(end - start).freeze();
                        self.scan = Scan::default();
                        self.head_since = None;
                        self.idle_since = None;
                        // The first answer of a batch: the date's second
                        // is read once for the batch.
                        if self.wr.is_empty() {
                            write::date::tick();
                        }
                        return match parse::head_with(&bytes, &self.settings.limits, &mut self.host)
                        {
                            Ok(head) => self.dispatch(head),
                            Err(refusal) => {
                                // The request line's method, for the
                                // metrics, if it is one.
                                let method = bytes
                                    .split(|b| *b == b' ')
                                    .next()
                                    .and_then(|m| http::Method::from_bytes(m).ok());
                                self.refuse(&refusal, method.as_ref())
                            }
                        };
                    }
                    Ok(Scanned::Partial) => {}
                    Err(refusal) => return self.refuse(&refusal, None),
                }
            }
            if self.eof {
                // A partial head at the end: nothing to answer.
                self.state = State::Close;
                return Step::Again;
            }
            match self.poll_fill(cx) {
                Poll::Ready(Ok(0)) => {
                    self.eof = true;
                }
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(e)) => {
                    tracing::debug!(error = %e, "connection read failed");
                    self.state = State::Done;
                    return Step::Again;
                }
                Poll::Pending => {
                    let now_idle = self.scan.idle(self.rd.len());
                    if now_idle {
                        if self.idle_since.is_none() {
                            self.idle_since = Some(Instant::now());
                        }
                        if self.rd.is_empty() && !self.unsent() {
                            self.release_buffers();
                        }
                    } else if self.head_since.is_none() {
                        self.head_since = Some(Instant::now());
                    }
                    self.state = State::Head;
                    return Step::Wait;
                }
            }
        }
    }

    /// Answers a refused head and closes.
    pub(super) fn refuse(&mut self, refusal: &Refusal, method: Option<&http::Method>) -> Step {
        let res = self.settings.app.refusal(refusal, method);
        let facts = Facts {
            version: Version::HTTP_11,
            method: write::Method::Other,
            keep_alive: false,
            trailers: false,
        };
        self.incoming = Incoming::Broken;
        self.respond(res, facts);
        Step::Again
    }

    /// Hands a parsed request to the app.
    pub(super) fn dispatch(&mut self, head: parse::Head) -> Step {
        self.requests += 1;
        let facts = Facts {
            version: head.version,
            method: write::Method::of(&head.method),
            keep_alive: head.keep_alive,
            trailers: head.te_trailers,
        };
        let body = match head.framing {
            Framing::None | Framing::Length(0) => Body::empty(),
            Framing::Length(n) if self.rd.len() as u64 >= n => {
                // The common small body: all of it read with the head.
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                Body::from(self.rd.split_to(n).freeze())
            }
            Framing::Length(n) => {
                let (feed, body) = Body::from_conn(Some(n), head.expect_continue);
                let decoder = Box::new(Decoder::length(n, self.body_limits()));
                self.incoming = Incoming::Feeding { feed, decoder };
                body
            }
            Framing::Chunked => {
                let (feed, body) = Body::from_conn(None, head.expect_continue);
                let decoder = Box::new(Decoder::chunked(self.body_limits()));
                self.incoming = Incoming::Feeding { feed, decoder };
                body
            }
        };
        let upgrade_asked = head.upgrade;
        let mut req = http::Request::from_parts(head.into_parts(), body);
        if upgrade_asked {
            let (tx, pending) = PendingUpgrade::new();
            req.extensions_mut().insert(pending);
            self.upgrade = Some(tx);
        }
        self.fut = Some(self.settings.app.call_checked(
            req,
            Some(self.peer),
            Some(Arc::clone(&self.settings.drain)),
        ));
        self.state = State::Serve(facts);
        Step::Again
    }

    fn body_limits(&self) -> h1body::Limits {
        h1body::Limits {
            max_body: self.settings.limits.max_body,
            max_trailer_bytes: self.settings.limits.max_head,
            max_trailer_fields: self.settings.limits.max_headers,
        }
    }

    /// Polls the app for the answer, feeding the request body meanwhile.
    pub(super) fn serve(&mut self, cx: &mut Context<'_>, facts: Facts) -> Step {
        loop {
            let Some(fut) = self.fut.as_mut() else {
                self.state = State::Close;
                return Step::Again;
            };
            if let Poll::Ready(res) = Pin::new(fut).poll(cx) {
                self.respond_to(res, facts);
                return Step::Again;
            }
            match self.feed(cx) {
                // The body took something: the handler may go on.
                Poll::Ready(true) => continue,
                Poll::Ready(false) | Poll::Pending => return Step::Wait,
            }
        }
    }

    /// Feeds the request body what it asks for: `Ready(true)` when it
    /// queued something (or ended the body), `Ready(false)` when there is
    /// nothing to do, `Pending` when it waits for the socket or the body.
    pub(super) fn feed(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        if !matches!(self.incoming, Incoming::Feeding { .. }) {
            return Poll::Ready(false);
        }
        let mut incoming = std::mem::replace(&mut self.incoming, Incoming::Done);
        let fed = self.feed_from(cx, &mut incoming);
        self.incoming = incoming;
        fed
    }

    fn feed_from(&mut self, cx: &mut Context<'_>, incoming: &mut Incoming) -> Poll<bool> {
        let Incoming::Feeding { feed, .. } = incoming else {
            return Poll::Ready(false);
        };
        if feed.take_continue() {
            self.wr().extend_from_slice(write::CONTINUE);
        }
        match feed.poll_wants_data(cx) {
            Poll::Ready(true) => {}
            // Read or dropped: an unread rest is dealt with at the answer.
            Poll::Ready(false) => return Poll::Ready(false),
            Poll::Pending => return Poll::Pending,
        }
        // Whatever is unsent (a `100 Continue`) goes out before the body is
        // waited for.
        if self.unsent() {
            match self.poll_flush(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(_)) => {
                    self.fail_body(incoming, h1body::Error::Incomplete);
                    return Poll::Ready(true);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
        loop {
            match self.decode(incoming) {
                Some(true) => return Poll::Ready(true),
                Some(false) => {}
                None => return Poll::Ready(false),
            }
            if self.eof {
                self.fail_body(incoming, h1body::Error::Incomplete);
                return Poll::Ready(true);
            }
            match self.poll_fill(cx) {
                Poll::Ready(Ok(0)) => self.eof = true,
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(_)) => {
                    self.eof = true;
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Decodes what the read buffer holds of the body into its slot:
    /// `Some(true)` when something was queued or the body ended,
    /// `Some(false)` when more bytes are needed, `None` when there is no
    /// body being fed.
    pub(super) fn decode(&mut self, incoming: &mut Incoming) -> Option<bool> {
        let Incoming::Feeding { feed, decoder } = incoming else {
            return None;
        };
        let mut queued = false;
        loop {
            match decoder.decode(&mut self.rd) {
                Ok(Some(Event::Data(data))) => {
                    feed.push_data(data);
                    queued = true;
                }
                Ok(Some(Event::Trailers(trailers))) => {
                    feed.push_trailers(trailers);
                    queued = true;
                }
                Ok(Some(Event::End)) => {
                    feed.end();
                    *incoming = Incoming::Done;
                    return Some(true);
                }
                Ok(None) => return Some(queued),
                Err(e) => {
                    self.fail_body(incoming, e);
                    return Some(true);
                }
            }
        }
    }

    pub(super) fn fail_body(&self, incoming: &mut Incoming, error: h1body::Error) {
        if let Incoming::Feeding { feed, .. } = incoming {
            h1body::fail(feed, error, self.settings.limits.max_body);
            // A body too large is counted where it is answered (the
            // extractor's 413); a client that left is no refusal.
            let reason = match error {
                h1body::Error::TooLarge | h1body::Error::Incomplete => None,
                h1body::Error::TrailersTooLarge | h1body::Error::TooManyTrailers => {
                    Some(Reason::HeadTooLarge)
                }
                _ => Some(Reason::Framing),
            };
            if let (Some(m), Some(reason)) = (self.metrics(), reason) {
                m.reject(reason);
            }
        }
        *incoming = Incoming::Broken;
    }
}
