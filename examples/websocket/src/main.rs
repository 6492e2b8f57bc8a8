//! A WebSocket echo with Tern: `cargo run -p example-websocket`, then
//! connect to `ws://localhost:3000/echo`.
//!
//! `.ci/run` points the Autobahn cases at it (`kosoku 127.0.0.1:PORT`,
//! with `WEBSOCKET_MAX_MESSAGE` raised for their 16 MiB messages).

use tern::{routing::get, App, Response};
use tern_realtime::{WebSocketUpgrade, WebSockets};

/// Sends every message back.
async fn echo(ws: WebSocketUpgrade) -> Response {
    ws.on_upgrade(|mut socket| async move {
        while let Some(Ok(message)) = socket.recv().await {
            if socket.send(message).await.is_err() {
                break;
            }
        }
    })
}

fn main() -> Result<(), tern::Error> {
    tern::run(
        App::new()
            .settings::<WebSockets>("websocket")
            .route("/echo", get(echo))
            // Autobahn's client asks for `/` (and `/getCaseCount`, ...).
            .fallback(echo),
    )
}
