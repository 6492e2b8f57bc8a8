//! Server-sent events: [`EventStream`] answers with a `text/event-stream`
//! of [`Event`]s, keep-alive comments, and an end when the server drains.
//!
//! ```
//! use tern::{extract::Settings, routing::get, App, Response};
//! use tern_realtime::{sse::EventStream, Realtime};
//!
//! /// The topic `news` as SSE: a client that reconnects with
//! /// `Last-Event-ID` first gets what it missed (from the replay buffer).
//! async fn news(events: EventStream, Settings(realtime): Settings<Realtime>) -> Response {
//!     events.follow(realtime.hub(), &["news"], None)
//! }
//!
//! let app = App::new().settings::<Realtime>("realtime").route("/news", get(news));
//! # let _ = app;
//! ```

use std::{convert::Infallible, fmt::Write as _, time::Duration};

use bytes::Bytes;
use futures_util::{stream, Stream, StreamExt};
use http::{header, request::Parts, HeaderValue};
use tern::{
    extract::FromRequestParts,
    metrics::{ConnectionGuard, Connections},
    settings::Settings,
    IntoResponse, Response, Shutdown,
};
use tern_core::body::Body;

use crate::{
    hub::{Connection, Delivery},
    Hub, Member, Realtime,
};

/// One event. `data` may hold several lines: each becomes a `data:` line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    id: Option<String>,
    event: Option<String>,
    data: String,
    retry: Option<Duration>,
}

/// Removes what would end a field early (a line break).
fn one_line(s: &str) -> String {
    s.chars().filter(|c| *c != '\n' && *c != '\r').collect()
}

impl Event {
    /// An event with this data.
    pub fn data(data: impl Into<String>) -> Self {
        Event {
            data: data.into(),
            ..Event::default()
        }
    }

    /// An event whose data is `value` as JSON.
    ///
    /// # Errors
    /// When `value` does not serialize.
    pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        Ok(Event::data(serde_json::to_string(value)?))
    }

    /// Its id (`Last-Event-ID` when the client reconnects); line breaks
    /// are removed.
    pub fn id(mut self, id: &str) -> Self {
        self.id = Some(one_line(id));
        self
    }

    /// Its type (the browser's `addEventListener` name).
    pub fn event(mut self, event: &str) -> Self {
        self.event = Some(one_line(event));
        self
    }

    /// How long the browser waits before reconnecting.
    pub fn retry(mut self, after: Duration) -> Self {
        self.retry = Some(after);
        self
    }

    fn encode(&self) -> Bytes {
        let mut out = String::with_capacity(self.data.len() + 32);
        if let Some(id) = &self.id {
            let _ = writeln!(out, "id: {id}");
        }
        if let Some(event) = &self.event {
            let _ = writeln!(out, "event: {event}");
        }
        if let Some(retry) = self.retry {
            let _ = writeln!(out, "retry: {}", retry.as_millis());
        }
        for line in self.data.split('\n') {
            let _ = writeln!(out, "data: {}", line.strip_suffix('\r').unwrap_or(line));
        }
        out.push('\n');
        Bytes::from(out)
    }
}

/// `d` as one event: its id, its event name, and the envelope's JSON as
/// `data` (made once per message: [`Delivery::sse`]).
pub(crate) fn frame(d: &Delivery) -> Bytes {
    // The envelope's JSON is one line (serde_json escapes line breaks).
    let mut out = String::with_capacity(d.text().len() + 48);
    if let Some(id) = d.id() {
        let _ = writeln!(out, "id: {id}");
    }
    let _ = writeln!(out, "event: {}", d.event());
    let _ = writeln!(out, "data: {}", d.text().as_str());
    out.push('\n');
    Bytes::from(out)
}

const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// A request for an event stream: its `Last-Event-ID`, and the server's
/// drain, which ends the stream (the browser reconnects elsewhere or
/// later, and resumes).
#[derive(Debug, Clone)]
pub struct EventStream {
    last_event_id: Option<String>,
    shutdown: Shutdown,
    keep_alive: Duration,
    /// The app's stream counts, when it records realtime's metrics.
    counted: Option<Connections>,
}

impl<S: Send + Sync> FromRequestParts<S> for EventStream {
    type Rejection = tern::extract::Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let last_event_id = parts
            .headers
            .get("last-event-id")
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty() && v.len() <= 256)
            .map(str::to_owned);
        let (keep_alive, counted) = match Settings::<Realtime>::from_request_parts(parts, &()).await
        {
            Ok(Settings(r)) => (r.keep_alive, r.meter.get().map(|m| m.sse.clone())),
            Err(_) => (Realtime::default().keep_alive, None),
        };
        let shutdown = Shutdown::from_request_parts(parts, &()).await?;
        Ok(EventStream {
            last_event_id,
            shutdown,
            keep_alive,
            counted,
        })
    }

    /// A `200` that is an event stream (`text/event-stream`, open until
    /// the client or the server leaves), resumed from `Last-Event-ID`.
    fn describe(op: &mut tern::doc::Operation) {
        op.parameters.push(serde_json::json!({
            "name": "Last-Event-ID",
            "in": "header",
            "required": false,
            "description": "the id of the last event the client saw (a browser's EventSource \
                sends it when it reconnects); the stream resumes after it where it can. An \
                empty one, or one longer than 256 bytes, is ignored",
            "schema": { "type": "string" },
        }));
        op.responses.insert(
            "200".to_owned(),
            serde_json::json!({
                "description": "Server-sent events, one by one as they happen, until the client \
                    or the server leaves (a comment line every keep-alive period).",
                "content": { "text/event-stream": { "schema": { "type": "string" } } },
            }),
        );
    }
}

fn respond(body: impl Stream<Item = Bytes> + Send + 'static) -> Response {
    let mut res = Body::from_stream(body.map(Ok::<_, Infallible>)).into_response();
    let headers = res.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Proxies that buffer (nginx) would hold events back.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    res
}

impl EventStream {
    /// The `Last-Event-ID` the client sent (it is reconnecting).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// Answers with `events`, a comment every `REALTIME_KEEP_ALIVE` while
    /// none comes, and an end when `events` ends or the server drains.
    pub fn stream<E>(self, events: E) -> Response
    where
        E: Stream<Item = Event> + Send + 'static,
    {
        let EventStream {
            shutdown,
            keep_alive,
            counted,
            ..
        } = self;
        // Open while the body is: dropped with it.
        let open = counted.as_ref().map(Connections::open);
        let state = (Box::pin(events), shutdown, keep_alive, open);
        respond(stream::unfold(
            state,
            |(mut events, shutdown, every, open)| async move {
                tokio::select! {
                    biased;
                    () = shutdown.signaled() => None,
                    next = events.next() => next.map(|e| (e.encode(), (events, shutdown, every, open))),
                    () = tokio::time::sleep(every) => Some((Bytes::from_static(KEEP_ALIVE), (events, shutdown, every, open))),
                }
            },
        ))
    }

    /// Answers with the messages of `topics` on `hub` as they are
    /// published (the event's `id`, `event` and, as `data`, the
    /// envelope's JSON), first replaying what the client missed after its
    /// `Last-Event-ID` (from the replay buffer of the first topic).
    ///
    /// - Each message is formatted as an event once, and every stream and
    ///   replay sends that one shared buffer ([`Delivery::sse`]).
    /// - A `Last-Event-ID` that is not in the buffer (unknown, or older
    ///   than what it keeps) replays nothing: the stream starts now. A
    ///   40-byte request cannot ask for the whole buffer; a client that
    ///   was away longer than the buffer reaches has lost messages either
    ///   way.
    /// - The replay is queued like live messages, so it counts toward
    ///   `REALTIME_SEND_QUEUE`: a client that falls that many messages
    ///   behind, replay included, is ended (policy `close`) and resumes
    ///   when it reconnects.
    ///
    /// `member` appears in the topics' presence while the stream lasts.
    pub fn follow(self, hub: &Hub, topics: &[&str], member: Option<Member>) -> Response {
        let mut conn = hub.connect(member);
        for (i, topic) in topics.iter().enumerate() {
            let after = if i == 0 {
                self.last_event_id.as_deref()
            } else {
                None
            };
            if let Err(e) = conn.join_after(topic, after) {
                return tern::Problem::new(http::StatusCode::BAD_REQUEST)
                    .with_detail(e.to_string())
                    .into_response();
            }
        }
        let EventStream {
            shutdown,
            keep_alive,
            counted,
            ..
        } = self;
        let open = counted.as_ref().map(Connections::open);
        respond(stream::unfold(
            (conn, shutdown, keep_alive, open),
            |(mut conn, shutdown, every, open): (
                Connection,
                Shutdown,
                Duration,
                Option<ConnectionGuard>,
            )| async move {
                tokio::select! {
                    biased;
                    () = shutdown.signaled() => None,
                    d = conn.recv() => match d {
                        Ok(d) => Some((d.sse().clone(), (conn, shutdown, every, open))),
                        // Fell behind: end; the client resumes from its last id.
                        Err(_) => None,
                    },
                    () = tokio::time::sleep(every) => Some((Bytes::from_static(KEEP_ALIVE), (conn, shutdown, every, open))),
                }
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_framed() {
        let e = Event::data("one\ntwo")
            .id("7\nx")
            .event("note")
            .retry(Duration::from_secs(3));
        assert_eq!(
            e.encode(),
            "id: 7x\nevent: note\nretry: 3000\ndata: one\ndata: two\n\n"
        );
        assert_eq!(Event::data("").encode(), "data: \n\n");
    }
}
