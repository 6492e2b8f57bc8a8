//! Realtime for Tern: WebSockets with limits, heartbeats and a graceful
//! close.
//!
//! ```no_run
//! use tern::{routing::get, App, Response};
//! use tern_realtime::{WebSocketUpgrade, WebSockets};
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
//! # async fn run() -> Result<(), tern::Error> {
//! let app = App::new()
//!     .settings::<WebSockets>("websocket") // WEBSOCKET_* limits; optional
//!     .route("/echo", get(echo));
//! tern::serve(app).await
//! # }
//! ```
//!
//! - **Handshake** ([`WebSocketUpgrade`]): RFC 6455 over HTTP/1.1, with a
//!   `problem+json` for every refusal, subprotocols, and the `Origin`
//!   check: a page from another site cannot open a socket here (`403`)
//!   unless `WEBSOCKET_ORIGINS` lists it.
//! - **Limits** ([`WebSockets`]): message and frame sizes (`1009` past
//!   them), pings every `WEBSOCKET_PING_INTERVAL`, closed after
//!   `WEBSOCKET_IDLE_TIMEOUT` without a byte from the client, and
//!   `TERN_WRITE_TIMEOUT` for a client that stops reading. A socket
//!   counts toward `TERN_MAX_CONNECTIONS` until it closes.
//! - **Drain**: when the server shuts down every socket is closed with
//!   `1001` (going away) and the drain waits for the close handshakes,
//!   within `TERN_SHUTDOWN_TIMEOUT`.
//! - **Tests**: [`testing::WebSocketClient`] opens sockets on
//!   `tern::test::TestClient` without a port.

mod bus;
pub mod channels;
pub mod hub;
mod settings;
mod socket;
pub mod sse;
pub mod testing;
mod upgrade;

pub use channels::Channels;
pub use hub::{Connection, Delivery, Hub, Member};
pub use settings::{Realtime, SlowConsumer, WebSockets};
pub use socket::{close_code, Error, ErrorKind, Message, Text, WebSocket};
pub use upgrade::WebSocketUpgrade;
