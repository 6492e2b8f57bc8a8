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

use std::sync::Arc;

use serde::Deserialize;

use crate::{
    close_code,
    hub::{check_name, Connection, Overflowed},
    Hub, Member, Message, WebSocket,
};

/// The most topics one connection may join.
pub const MAX_TOPICS: usize = 32;

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

fn error(topic: Option<&str>, error: &str) -> Message {
    Message::text(serde_json::json!({"op": "error", "topic": topic, "error": error}).to_string())
}

impl Channels {
    /// Channels on `hub`; by default members (connections with a
    /// [`Member`]) may join and publish to any topic, anonymous ones
    /// nothing: set [`authorize`](Self::authorize) to decide per topic.
    pub fn new(hub: &Hub) -> Self {
        Channels {
            hub: hub.clone(),
            authorize: Arc::new(|member, _, _| member.is_some()),
        }
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
        let mut conn = self.hub.connect(member);
        loop {
            tokio::select! {
                incoming = socket.recv() => match incoming {
                    Some(Ok(Message::Text(text))) => {
                        if let Some(answer) = self.command(&mut conn, &text) {
                            if socket.send(answer).await.is_err() {
                                return;
                            }
                        }
                    }
                    Some(Ok(Message::Binary(_))) => {
                        if socket.send(error(None, "commands are JSON text messages")).await.is_err() {
                            return;
                        }
                    }
                    Some(Err(_)) | None => return,
                },
                delivery = conn.recv() => match delivery {
                    Ok(delivery) => {
                        let message = Message::Text(delivery.text().clone());
                        tokio::select! {
                            sent = socket.send(message) => if sent.is_err() { return },
                            // Fell behind while this send waited: the
                            // socket cannot take a close frame either.
                            () = conn.overflowed() => return,
                        }
                    }
                    Err(Overflowed) => {
                        let _ = socket.close(close_code::POLICY, "too slow: fell behind on messages").await;
                        return;
                    }
                },
            }
        }
    }

    /// Runs one command; the answer to send, if any.
    fn command(&self, conn: &mut Connection, text: &str) -> Option<Message> {
        let command: Command = match serde_json::from_str(text) {
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
                    Ok(presence) => Some(Message::text(
                        serde_json::json!({"op": "joined", "topic": topic, "presence": presence})
                            .to_string(),
                    )),
                    Err(e) => Some(error(Some(topic), &e.to_string())),
                }
            }
            Command::Leave { topic } => {
                conn.leave(topic);
                Some(Message::text(
                    serde_json::json!({"op": "left", "topic": topic}).to_string(),
                ))
            }
            Command::Publish { topic, event, data } => {
                if !allowed(Access::Publish) {
                    return Some(error(Some(topic), "not allowed to publish to this topic"));
                }
                if event.starts_with("presence.") {
                    return Some(error(Some(topic), "`presence.` events are the server's"));
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
                Some(Message::text(
                    serde_json::json!({"op": "presence", "topic": topic, "presence": self.hub.presence(topic)})
                        .to_string(),
                ))
            }
        }
    }
}
