//! Topics over a WebSocket: a small JSON protocol for browsers, with an
//! authorization hook per topic.
//!
//! The client sends commands, one JSON object per text message:
//!
//! | command | answer |
//! |---|---|
//! | `{"op":"join","topic":"room:1"}` | `{"op":"joined","topic":"room:1","presence":[{"id":..,"name":..}]}` |
//! | `{"op":"leave","topic":"room:1"}` | `{"op":"left","topic":"room:1"}` |
//! | `{"op":"publish","topic":"room:1","event":"message","data":..}` | the message, to every subscriber |
//! | `{"op":"presence","topic":"room:1"}` | `{"op":"presence","topic":"room:1","presence":[..]}` |
//!
//! and receives the topics' messages, `{"topic":..,"event":..,"id":..,
//! "from":{"id":..,"name":..},"data":..}` (`from` set by the server from
//! the connection's member, never by the client), and presence events
//! (`presence.join`, `presence.leave`, `data` the member). A refused or
//! malformed command is answered `{"op":"error","topic":..,"error":".."}`
//! and the socket stays open.
//!
//! **CBOR.** A client that asks for the subprotocol [`CBOR`] (`tern.cbor`,
//! offered by the handler with [`WebSocketUpgrade::protocols`]) sends the
//! same commands and receives the same answers and envelopes as CBOR maps
//! (RFC 8949) in binary messages. Each message is encoded in CBOR once,
//! for every CBOR client of the process, beside its one JSON encoding.
//!
//! **Limits.** A member publishes at most
//! [`publish_rate`](Channels::publish_rate) messages a second (20 by
//! default, in bursts of up to 40), however many sockets it holds, and so
//! do all the sockets of one client address together
//! ([`address_rate`](Channels::address_rate), the same by default; an
//! IPv6 address counts by its /64): twenty guest names from one address
//! publish no more than one. An anonymous socket whose address is not
//! known has a budget of its own. Past that a `publish` is answered with
//! an error and dropped. The budgets are per process. A connection joins
//! at most [`MAX_TOPICS`] topics.
//! A client that falls behind is handled as `REALTIME_SLOW_CONSUMER`
//! says (closed with `1008`, or skipped).
//!
//! [`WebSocketUpgrade::protocols`]: crate::WebSocketUpgrade::protocols

use std::sync::Arc;

use serde::Deserialize;

use crate::{
    budget::{address_key, Bucket},
    close_code,
    hub::{check_name, Connection, Overflowed},
    Hub, Member, Message, WebSocket,
};

/// The most topics one connection may join.
pub const MAX_TOPICS: usize = 32;

/// The subprotocol of clients that speak CBOR (binary messages) instead
/// of JSON text.
pub const CBOR: &str = "tern.cbor";

/// The most queued messages written to a socket at one wake-up, before
/// one flush.
const BATCH: usize = 64;

/// How a connection's commands and messages are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Cbor,
}

impl Format {
    fn encode(self, value: &serde_json::Value) -> Message {
        match self {
            Format::Json => Message::text(value.to_string()),
            Format::Cbor => {
                let mut out = Vec::new();
                ciborium::into_writer(value, &mut out).expect("JSON values encode in CBOR");
                Message::binary(out)
            }
        }
    }

    fn delivery(self, d: &crate::Delivery) -> Message {
        match self {
            Format::Json => Message::Text(d.text().clone()),
            Format::Cbor => Message::Binary(d.cbor().clone()),
        }
    }
}

/// What a client asks to do in a topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Join it: receive its messages and appear in its presence.
    Join,
    /// Publish to it.
    Publish,
}

type Authorize = dyn Fn(Option<&Member>, &str, Access) -> bool + Send + Sync;

/// Serves the protocol above on WebSockets; see the [module](self).
#[derive(Clone)]
pub struct Channels {
    hub: Hub,
    authorize: Arc<Authorize>,
    rate: u32,
    burst: u32,
    address: Option<(u32, u32)>,
}

/// Whose budgets a connection's publishes spend.
struct Spender {
    /// The member's and the address's buckets in the hub.
    shared: Vec<(String, u32, u32)>,
    /// Its own, when it has neither.
    own: Bucket,
}

impl Spender {
    fn take(&mut self, hub: &Hub) -> bool {
        if self.shared.is_empty() {
            self.own.take()
        } else {
            hub.inner.budgets.take(&self.shared)
        }
    }
}

impl std::fmt::Debug for Channels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channels")
            .field("hub", &self.hub)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
enum Command {
    Join {
        topic: String,
    },
    Leave {
        topic: String,
    },
    Publish {
        topic: String,
        event: String,
        #[serde(default)]
        data: serde_json::Value,
    },
    Presence {
        topic: String,
    },
}

fn error(topic: Option<&str>, error: &str) -> serde_json::Value {
    serde_json::json!({"op": "error", "topic": topic, "error": error})
}

impl Channels {
    /// Channels on `hub`; by default members (connections with a
    /// [`Member`]) may join and publish to any topic, anonymous ones
    /// nothing: set [`authorize`](Self::authorize) to decide per topic.
    pub fn new(hub: &Hub) -> Self {
        Channels {
            hub: hub.clone(),
            authorize: Arc::new(|member, _, _| member.is_some()),
            rate: 20,
            burst: 40,
            address: None,
        }
    }

    /// At most `per_second` publishes a second per member (all its
    /// sockets together; an anonymous socket on its own), in bursts of up
    /// to `burst` (default 20 and 40). Past that, a `publish` is answered
    /// with an error and dropped.
    pub fn publish_rate(mut self, per_second: u32, burst: u32) -> Self {
        self.rate = per_second;
        self.burst = burst.max(1);
        self
    }

    /// At most `per_second` publishes a second from one client address
    /// (all its sockets and members together), in bursts of up to
    /// `burst`; by default the same as [`publish_rate`](Self::publish_rate).
    /// Raise it when many people share an address (one office behind
    /// NAT).
    pub fn address_rate(mut self, per_second: u32, burst: u32) -> Self {
        self.address = Some((per_second, burst.max(1)));
        self
    }

    /// Decides who may join or publish to which topic.
    pub fn authorize<F>(mut self, decide: F) -> Self
    where
        F: Fn(Option<&Member>, &str, Access) -> bool + Send + Sync + 'static,
    {
        self.authorize = Arc::new(decide);
        self
    }

    /// Serves one socket until it closes; `member` is who holds it (the
    /// session's user), `None` for anonymous clients.
    pub async fn serve(&self, mut socket: WebSocket, member: Option<Member>) {
        let format = if socket.protocol() == Some(CBOR) {
            Format::Cbor
        } else {
            Format::Json
        };
        let (address_rate, address_burst) = self.address.unwrap_or((self.rate, self.burst));
        let mut shared = Vec::new();
        if let Some(m) = &member {
            shared.push((format!("member:{}", m.id), self.rate, self.burst));
        }
        if let Some(ip) = socket.client_ip() {
            shared.push((address_key(ip), address_rate, address_burst));
        }
        let mut bucket = Spender {
            shared,
            own: Bucket::new(self.rate, self.burst),
        };
        let mut conn = self.hub.connect(member);
        let mut batch = Vec::new();
        loop {
            let answer = tokio::select! {
                incoming = socket.recv() => match incoming {
                    Some(Ok(message)) => self.command(&mut conn, format, &message, &mut bucket),
                    Some(Err(_)) | None => return,
                },
                delivery = conn.recv() => match delivery {
                    Ok(first) => {
                        // What is queued goes out at this wake-up, with one
                        // flush.
                        batch.push(format.delivery(&first));
                        while batch.len() < BATCH {
                            match conn.try_recv() {
                                Some(d) => batch.push(format.delivery(&d)),
                                None => break,
                            }
                        }
                        let stalled = tokio::select! {
                            sent = socket.send_all(batch.drain(..)) => {
                                if sent.is_err() {
                                    return;
                                }
                                false
                            }
                            () = conn.overflowed() => true,
                        };
                        if stalled {
                            // It fell behind while a write waited: the
                            // close goes after what it has not read, and
                            // reaches it if it reads again within
                            // WEBSOCKET_CLOSE_TIMEOUT.
                            drop(conn);
                            let _ = socket.close(close_code::POLICY, "too slow: fell behind on messages").await;
                            return;
                        }
                        None
                    }
                    Err(Overflowed) => {
                        drop(conn);
                        let _ = socket.close(close_code::POLICY, "too slow: fell behind on messages").await;
                        return;
                    }
                },
            };
            if let Some(answer) = answer {
                if socket.send(format.encode(&answer)).await.is_err() {
                    return;
                }
            }
        }
    }

    /// Runs one command; the answer to send, if any.
    fn command(
        &self,
        conn: &mut Connection,
        format: Format,
        message: &Message,
        bucket: &mut Spender,
    ) -> Option<serde_json::Value> {
        let parsed = match (format, message) {
            (Format::Json, Message::Text(text)) => {
                serde_json::from_str::<Command>(text).map_err(|e| e.to_string())
            }
            (Format::Cbor, Message::Binary(bytes)) => {
                ciborium::from_reader::<Command, _>(&bytes[..]).map_err(|e| e.to_string())
            }
            (Format::Json, Message::Binary(_)) => {
                return Some(error(None, "commands are JSON text messages (or CBOR binary ones with the subprotocol tern.cbor)"));
            }
            (Format::Cbor, Message::Text(_)) => {
                return Some(error(
                    None,
                    "this socket speaks tern.cbor: commands are CBOR binary messages",
                ));
            }
        };
        let command = match parsed {
            Ok(c) => c,
            Err(e) => {
                return Some(error(
                    None,
                    &format!("not a command ({e}): send {{\"op\": \"join\" | \"leave\" | \"publish\" | \"presence\", \"topic\": ...}}"),
                ))
            }
        };
        let topic = match &command {
            Command::Join { topic }
            | Command::Leave { topic }
            | Command::Publish { topic, .. }
            | Command::Presence { topic } => topic.as_str(),
        };
        if let Err(e) = check_name("topic", topic) {
            return Some(error(None, &e.to_string()));
        }
        let allowed = |access| (self.authorize)(conn.member(), topic, access);
        match &command {
            Command::Join { topic } => {
                if !allowed(Access::Join) {
                    return Some(error(Some(topic), "not allowed to join this topic"));
                }
                if conn.topics().len() >= MAX_TOPICS && !conn.topics().contains(topic) {
                    return Some(error(
                        Some(topic),
                        &format!("a connection joins at most {MAX_TOPICS} topics"),
                    ));
                }
                match conn.join(topic) {
                    Ok(presence) => Some(
                        serde_json::json!({"op": "joined", "topic": topic, "presence": presence}),
                    ),
                    Err(e) => Some(error(Some(topic), &e.to_string())),
                }
            }
            Command::Leave { topic } => {
                conn.leave(topic);
                Some(serde_json::json!({"op": "left", "topic": topic}))
            }
            Command::Publish { topic, event, data } => {
                if !allowed(Access::Publish) {
                    return Some(error(Some(topic), "not allowed to publish to this topic"));
                }
                if event.starts_with("presence.") {
                    return Some(error(Some(topic), "`presence.` events are the server's"));
                }
                if !bucket.take(&self.hub) {
                    return Some(error(
                        Some(topic),
                        &format!(
                            "publishing too fast: at most {} messages a second (bursts of {}) per \
                             member and per address, across sockets; this one was dropped",
                            self.rate, self.burst
                        ),
                    ));
                }
                match self.hub.publish_from(topic, event, conn.member(), data) {
                    Ok(_) => None,
                    Err(e) => Some(error(Some(topic), &e.to_string())),
                }
            }
            Command::Presence { topic } => {
                if !allowed(Access::Join) {
                    return Some(error(Some(topic), "not allowed to see this topic"));
                }
                Some(
                    serde_json::json!({"op": "presence", "topic": topic, "presence": self.hub.presence(topic)}),
                )
            }
        }
    }
}
