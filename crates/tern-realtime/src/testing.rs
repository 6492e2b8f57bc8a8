//! WebSockets in tests without a port: [`WebSocketClient::websocket`]
//! opens one through [`TestClient`]'s in-memory connection, handshake
//! and all.
//!
//! ```
//! use tern::{routing::get, test::TestClient, App, Response};
//! use tern_realtime::{testing::WebSocketClient as _, WebSocketUpgrade};
//!
//! async fn echo(ws: WebSocketUpgrade) -> Response {
//!     ws.on_upgrade(|mut socket| async move {
//!         while let Some(Ok(message)) = socket.recv().await {
//!             if socket.send(message).await.is_err() {
//!                 break;
//!             }
//!         }
//!     })
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let client = TestClient::new(App::new().route("/echo", get(echo)));
//! let mut socket = client.websocket("/echo").await.unwrap();
//! socket.send("hello").await;
//! assert_eq!(socket.recv_text().await, "hello");
//! socket.close().await;
//! # }
//! ```

use futures_util::{SinkExt, StreamExt};
use tern::test::TestClient;
use tokio::io::DuplexStream;
use tokio_tungstenite::{
    tungstenite::{self, client::IntoClientRequest, http},
    WebSocketStream,
};

use crate::Message;

/// Opens WebSockets on a [`TestClient`].
pub trait WebSocketClient {
    /// Opens a WebSocket on `path` (no `Origin`, as a non-browser client).
    ///
    /// # Errors
    /// The handshake's answer when it is not `101` (status, headers, the
    /// problem's body).
    fn websocket(
        &self,
        path: &str,
    ) -> impl std::future::Future<Output = Result<TestWebSocket, Refused>> + Send;

    /// Opens a WebSocket with a request of the test's own (headers such
    /// as `Origin`, `Cookie`, `Sec-WebSocket-Protocol`).
    fn websocket_with(
        &self,
        request: http::Request<()>,
    ) -> impl std::future::Future<Output = Result<TestWebSocket, Refused>> + Send;
}

/// A handshake that was not accepted.
#[derive(Debug)]
pub struct Refused {
    /// The answer's status.
    pub status: u16,
    /// The answer's body (a problem's JSON).
    pub body: String,
}

impl WebSocketClient for TestClient {
    async fn websocket(&self, path: &str) -> Result<TestWebSocket, Refused> {
        let request = format!("ws://localhost{path}")
            .into_client_request()
            .unwrap_or_else(|e| panic!("invalid WebSocket path {path}: {e}"));
        self.websocket_with(request).await
    }

    async fn websocket_with(&self, request: http::Request<()>) -> Result<TestWebSocket, Refused> {
        let io = self.connect();
        match tokio_tungstenite::client_async(request, io).await {
            Ok((stream, response)) => Ok(TestWebSocket {
                stream,
                protocol: response
                    .headers()
                    .get("sec-websocket-protocol")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned),
            }),
            Err(tungstenite::Error::Http(res)) => Err(Refused {
                status: res.status().as_u16(),
                body: res
                    .body()
                    .as_ref()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default(),
            }),
            Err(e) => panic!("the WebSocket handshake failed: {e}"),
        }
    }
}

/// The client's end of a WebSocket opened in a test.
#[derive(Debug)]
pub struct TestWebSocket {
    stream: WebSocketStream<DuplexStream>,
    protocol: Option<String>,
}

/// What a test socket received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// A message.
    Message(Message),
    /// The server's close: its code and reason.
    Close(u16, String),
}

impl TestWebSocket {
    /// The subprotocol the server picked.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// Sends a message.
    ///
    /// # Panics
    /// When the socket is closed.
    pub async fn send(&mut self, message: impl Into<Message>) {
        if let Err(e) = self.stream.send(message.into().into_frame()).await {
            panic!("the test socket could not send: {e}");
        }
    }

    /// The next message or close; `None` when the connection ended
    /// without one. Pings are answered and skipped.
    pub async fn recv(&mut self) -> Option<Received> {
        loop {
            match self.stream.next().await? {
                Ok(tungstenite::Message::Close(frame)) => {
                    return Some(frame.map_or(Received::Close(1005, String::new()), |f| {
                        Received::Close(u16::from(f.code), f.reason.as_str().to_owned())
                    }));
                }
                Ok(frame) => {
                    if let Some(message) = Message::from_frame(frame) {
                        return Some(Received::Message(message));
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// The next message, which must be text.
    ///
    /// # Panics
    /// When the next thing received is not a text message.
    pub async fn recv_text(&mut self) -> String {
        match self.recv().await {
            Some(Received::Message(Message::Text(t))) => t.as_str().to_owned(),
            other => panic!("expected a text message, got {other:?}"),
        }
    }

    /// Closes with `1000` and waits for the server's answer.
    pub async fn close(mut self) {
        let _ = self.stream.close(None).await;
        while let Some(Ok(_)) = self.stream.next().await {}
    }
}
