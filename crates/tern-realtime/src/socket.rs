//! An open WebSocket: [`WebSocket`], its [`Message`]s, how it fails
//! ([`WebSocketError`]).

use std::{fmt, ops::Deref, sync::Arc, time::Duration};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tern::{upgrade::Upgraded, DrainGuard, Shutdown};
use tokio::time::{Instant, Interval, MissedTickBehavior};
use tokio_tungstenite::{
    tungstenite::{
        self,
        protocol::{frame::coding::CloseCode, CloseFrame, WebSocketConfig},
        Utf8Bytes,
    },
    WebSocketStream,
};

use crate::settings::WebSockets;

/// The protocol library's configuration from the settings: the size
/// limits, and a small read buffer (4 KiB: a held, idle socket costs
/// little; messages are assembled apart from it). Frames are written when
/// flushed or when 16 KiB are waiting, so [`WebSocket::send_all`] writes
/// a burst at once; the buffer is allocated as it is used.
pub(crate) fn config(settings: &WebSockets) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(16 * 1024)
        .max_write_buffer_size(settings.max_message.saturating_mul(2).max(64 * 1024))
        .max_message_size(Some(settings.max_message))
        .max_frame_size(Some(settings.max_frame))
}

/// Text: UTF-8, cheap to clone (one buffer shared by every clone, so a
/// message sent to many sockets is encoded once).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Text(Utf8Bytes);

impl Text {
    /// The text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(s.into())
    }
}

impl From<&'static str> for Text {
    fn from(s: &'static str) -> Self {
        Text(Utf8Bytes::from_static(s))
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// A message: text or binary. Pings, pongs and the close handshake are
/// the socket's business, not the handler's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A text message (valid UTF-8: the socket checks).
    Text(Text),
    /// A binary message.
    Binary(Bytes),
}

impl Message {
    /// A text message.
    pub fn text(text: impl Into<Text>) -> Self {
        Message::Text(text.into())
    }

    /// A binary message.
    pub fn binary(bytes: impl Into<Bytes>) -> Self {
        Message::Binary(bytes.into())
    }

    /// The text, if it is a text message.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Message::Text(t) => Some(t.as_str()),
            Message::Binary(_) => None,
        }
    }

    /// The payload's length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Message::Text(t) => t.len(),
            Message::Binary(b) => b.len(),
        }
    }

    /// Whether the payload is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn into_frame(self) -> tungstenite::Message {
        match self {
            Message::Text(t) => tungstenite::Message::Text(t.0),
            Message::Binary(b) => tungstenite::Message::Binary(b),
        }
    }

    pub(crate) fn from_frame(frame: tungstenite::Message) -> Option<Self> {
        match frame {
            tungstenite::Message::Text(t) => Some(Message::Text(Text(t))),
            tungstenite::Message::Binary(b) => Some(Message::Binary(b)),
            _ => None,
        }
    }
}

impl From<String> for Message {
    fn from(s: String) -> Self {
        Message::text(s)
    }
}

impl From<&'static str> for Message {
    fn from(s: &'static str) -> Self {
        Message::text(s)
    }
}

impl From<Bytes> for Message {
    fn from(b: Bytes) -> Self {
        Message::Binary(b)
    }
}

impl From<Vec<u8>> for Message {
    fn from(b: Vec<u8>) -> Self {
        Message::Binary(b.into())
    }
}

/// Close codes of RFC 6455 that a server sends.
pub mod close_code {
    /// The purpose is fulfilled.
    pub const NORMAL: u16 = 1000;
    /// The server is going away (shutting down).
    pub const GOING_AWAY: u16 = 1001;
    /// The peer broke the protocol.
    pub const PROTOCOL: u16 = 1002;
    /// A text message was not UTF-8.
    pub const INVALID: u16 = 1007;
    /// A message broke a rule of the endpoint (a slow consumer, say).
    pub const POLICY: u16 = 1008;
    /// A message or frame was over the size limit.
    pub const TOO_BIG: u16 = 1009;
    /// The server hit an unexpected condition.
    pub const ERROR: u16 = 1011;
    /// Try again later (the server is overloaded).
    pub const AGAIN: u16 = 1013;
}

/// Why a socket failed.
#[derive(Debug)]
pub struct WebSocketError {
    kind: WebSocketErrorKind,
    message: String,
}

/// The kind of a [`WebSocketError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WebSocketErrorKind {
    /// The client broke the protocol (closed with `1002`).
    Protocol,
    /// A text message was not UTF-8 (closed with `1007`).
    InvalidUtf8,
    /// A message or frame over `WEBSOCKET_MAX_MESSAGE` / `_MAX_FRAME`
    /// (closed with `1009`).
    TooBig,
    /// Nothing from the client for `WEBSOCKET_IDLE_TIMEOUT`, or it stopped
    /// reading for `TERN_WRITE_TIMEOUT`.
    TimedOut,
    /// The socket is closed; nothing more can be sent.
    Closed,
    /// The connection failed (reset, broken pipe).
    Io,
}

impl WebSocketError {
    /// What went wrong.
    pub fn kind(&self) -> WebSocketErrorKind {
        self.kind
    }

    fn closed() -> Self {
        WebSocketError {
            kind: WebSocketErrorKind::Closed,
            message: "the WebSocket is closed".to_owned(),
        }
    }
}

impl fmt::Display for WebSocketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WebSocketError {}

impl From<tungstenite::Error> for WebSocketError {
    fn from(e: tungstenite::Error) -> Self {
        use tungstenite::Error as E;
        let kind = match &e {
            E::ConnectionClosed | E::AlreadyClosed => WebSocketErrorKind::Closed,
            E::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => WebSocketErrorKind::TimedOut,
            E::Io(_) => WebSocketErrorKind::Io,
            E::Capacity(_) | E::WriteBufferFull(_) => WebSocketErrorKind::TooBig,
            E::Utf8(_) => WebSocketErrorKind::InvalidUtf8,
            _ => WebSocketErrorKind::Protocol,
        };
        WebSocketError {
            kind,
            message: e.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    /// The server sent its close; the client's answer is awaited until then.
    Closing(Instant),
    Closed,
}

/// An open WebSocket, handed to [`WebSocketUpgrade::on_upgrade`]'s
/// callback.
///
/// [`recv`](Self::recv) answers pings, pings a quiet client every
/// `WEBSOCKET_PING_INTERVAL`, and returns `None` once the socket is closed
/// (by the client, by a failure, after `WEBSOCKET_IDLE_TIMEOUT` without a
/// byte from the client, or by the server's drain, which sends `1001`
/// first). A protocol error, a bad UTF-8 text or a message over the limit
/// closes the socket with `1002`, `1007` or `1009` and is returned once.
///
/// [`WebSocketUpgrade::on_upgrade`]: crate::WebSocketUpgrade::on_upgrade
pub struct WebSocket {
    stream: WebSocketStream<Upgraded>,
    settings: Arc<WebSockets>,
    ping: Interval,
    shutdown: Shutdown,
    state: State,
    protocol: Option<String>,
    client_ip: Option<std::net::IpAddr>,
    closed_by_client: Option<(u16, String)>,
    _guard: DrainGuard,
}

impl fmt::Debug for WebSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSocket")
            .field("state", &self.state)
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

impl WebSocket {
    pub(crate) fn new(
        stream: WebSocketStream<Upgraded>,
        settings: Arc<WebSockets>,
        shutdown: Shutdown,
        guard: DrainGuard,
        protocol: Option<String>,
        client_ip: Option<std::net::IpAddr>,
    ) -> Self {
        let every = settings.ping_interval.max(Duration::from_millis(10));
        let mut ping = tokio::time::interval_at(Instant::now() + every, every);
        ping.set_missed_tick_behavior(MissedTickBehavior::Delay);
        WebSocket {
            stream,
            settings,
            ping,
            shutdown,
            state: State::Open,
            protocol,
            client_ip,
            closed_by_client: None,
            _guard: guard,
        }
    }

    /// The subprotocol agreed in the handshake.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// The client's address, as [`tern::extract::ClientIp`] gives it (a
    /// trusted proxy's header, else the peer's): what
    /// [`Channels`](crate::Channels) shares a publish budget by. `None`
    /// when the server does not know it.
    pub fn client_ip(&self) -> Option<std::net::IpAddr> {
        self.client_ip
    }

    /// The code and reason the client closed with, once it has.
    pub fn close_reason(&self) -> Option<(u16, &str)> {
        self.closed_by_client
            .as_ref()
            .map(|(code, reason)| (*code, reason.as_str()))
    }

    /// Whether the socket is still open for sending.
    pub fn is_open(&self) -> bool {
        self.state == State::Open
    }

    /// The next message; `None` once the socket is closed. Cancel-safe:
    /// use it in `tokio::select!` beside other sources (a topic's queue).
    pub async fn recv(&mut self) -> Option<Result<Message, WebSocketError>> {
        loop {
            let deadline = match self.state {
                State::Closed => return None,
                State::Open => None,
                State::Closing(deadline) => Some(deadline),
            };
            let open = deadline.is_none();
            tokio::select! {
                biased;
                frame = self.stream.next() => match frame {
                    None => {
                        self.state = State::Closed;
                        return None;
                    }
                    Some(Ok(tungstenite::Message::Close(frame))) => {
                        self.closed_by_client = Some(frame.map_or((1005, String::new()), |f| {
                            (u16::from(f.code), f.reason.as_str().to_owned())
                        }));
                        // The library answers; the next read sends it and
                        // ends the stream.
                        if open {
                            self.state = State::Closing(Instant::now() + self.settings.close_timeout);
                        }
                    }
                    Some(Ok(frame)) => {
                        if let Some(message) = Message::from_frame(frame) {
                            if open {
                                return Some(Ok(message));
                            }
                        }
                    }
                    Some(Err(e)) => {
                        let e = WebSocketError::from(e);
                        self.fail(&e).await;
                        return match e.kind {
                            WebSocketErrorKind::Closed => None,
                            _ => Some(Err(e)),
                        };
                    }
                },
                _ = self.ping.tick(), if open => {
                    if let Err(e) = self.stream.send(tungstenite::Message::Ping(Bytes::new())).await {
                        let e = WebSocketError::from(e);
                        self.fail(&e).await;
                    }
                }
                () = self.shutdown.signaled(), if open => {
                    self.start_close(close_code::GOING_AWAY, "the server is shutting down").await;
                }
                () = sleep_until(deadline), if !open => {
                    // The client did not answer the close in time.
                    self.state = State::Closed;
                    return None;
                }
            }
        }
    }

    /// Sends a message (and flushes it). Waits while the client is slow to
    /// read; a client that reads nothing for `TERN_WRITE_TIMEOUT` fails
    /// it with [`WebSocketErrorKind::TimedOut`].
    pub async fn send(&mut self, message: impl Into<Message>) -> Result<(), WebSocketError> {
        if self.state != State::Open {
            return Err(WebSocketError::closed());
        }
        match self.stream.send(message.into().into_frame()).await {
            Ok(()) => Ok(()),
            Err(e) => {
                let e = WebSocketError::from(e);
                self.fail(&e).await;
                Err(e)
            }
        }
    }

    /// Sends several messages with one flush: frames are written 16 KiB at
    /// a time rather than one by one. Otherwise as [`send`](Self::send).
    pub async fn send_all<I>(&mut self, messages: I) -> Result<(), WebSocketError>
    where
        I: IntoIterator<Item = Message>,
    {
        if self.state != State::Open {
            return Err(WebSocketError::closed());
        }
        let stream = &mut self.stream;
        let sent = async {
            for message in messages {
                stream.feed(message.into_frame()).await?;
            }
            stream.flush().await
        }
        .await;
        match sent {
            Ok(()) => Ok(()),
            Err(e) => {
                let e = WebSocketError::from(e);
                self.fail(&e).await;
                Err(e)
            }
        }
    }

    /// Closes the socket with `code` and `reason` (at most 123 bytes) and
    /// waits for the client's answer, up to `WEBSOCKET_CLOSE_TIMEOUT`;
    /// messages that arrive meanwhile are dropped.
    pub async fn close(mut self, code: u16, reason: &str) -> Result<(), WebSocketError> {
        if self.state == State::Open {
            self.start_close(code, reason).await;
        }
        while self.recv().await.is_some() {}
        Ok(())
    }

    async fn start_close(&mut self, code: u16, reason: &str) {
        let mut reason = reason;
        while reason.len() > 123 {
            let mut end = 123;
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            reason = &reason[..end];
        }
        let frame = CloseFrame {
            code: CloseCode::from(code),
            reason: reason.to_owned().into(),
        };
        self.state = State::Closing(Instant::now() + self.settings.close_timeout);
        let sent =
            tokio::time::timeout(self.settings.close_timeout, self.stream.close(Some(frame))).await;
        if !matches!(sent, Ok(Ok(()))) {
            self.state = State::Closed;
        }
    }

    /// After an error: the close code it calls for, sent if the socket
    /// still can, then the socket is closed.
    async fn fail(&mut self, e: &WebSocketError) {
        let code = match e.kind {
            WebSocketErrorKind::Protocol => Some(close_code::PROTOCOL),
            WebSocketErrorKind::InvalidUtf8 => Some(close_code::INVALID),
            WebSocketErrorKind::TooBig => Some(close_code::TOO_BIG),
            WebSocketErrorKind::TimedOut | WebSocketErrorKind::Closed | WebSocketErrorKind::Io => {
                None
            }
        };
        if let (Some(code), State::Open) = (code, self.state) {
            tracing::debug!(error = %e, code, "websocket: closing after an error");
            let frame = CloseFrame {
                code: CloseCode::from(code),
                reason: e.message.chars().take(100).collect::<String>().into(),
            };
            let _ =
                tokio::time::timeout(self.settings.close_timeout, self.stream.close(Some(frame)))
                    .await;
        }
        self.state = State::Closed;
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
