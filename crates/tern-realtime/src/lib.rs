//! Realtime for Tern: WebSockets with limits, heartbeats and a graceful
//! close; topics with presence; server-sent events; and fan-out across
//! processes over Redis or NATS.
//!
//! A socket, by hand:
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
//! Topics, for browsers (the protocol is in [`channels`]), and the same
//! topic as server-sent events:
//!
//! ```no_run
//! use tern::{extract::Settings, routing::get, App, Response};
//! use tern_realtime::{sse::EventStream, Channels, Member, Realtime, WebSocketUpgrade};
//!
//! async fn socket(ws: WebSocketUpgrade, Settings(rt): Settings<Realtime>) -> Response {
//!     // Who holds the socket: in an app with accounts, the session's user.
//!     let member = Member::new("42", "ada");
//!     let channels = Channels::new(rt.hub()).authorize(|m, topic, _| {
//!         m.is_some() && topic.starts_with("room:")
//!     });
//!     ws.on_upgrade(move |socket| async move { channels.serve(socket, Some(member)).await })
//! }
//!
//! async fn news(events: EventStream, Settings(rt): Settings<Realtime>) -> Response {
//!     events.follow(rt.hub(), &["news"], None) // Last-Event-ID resumes
//! }
//!
//! # async fn run() -> Result<(), tern::Error> {
//! let app = App::new()
//!     .settings::<Realtime>("realtime") // REALTIME_BACKEND=memory|redis|nats
//!     .route("/socket", get(socket))
//!     .route("/news", get(news));
//! // Anywhere (a handler, a job): every subscriber, in every process.
//! // realtime.hub().publish("news", "story", &story)?;
//! tern::serve(app).await
//! # }
//! ```
//!
//! - **Handshake** ([`WebSocketUpgrade`]): RFC 6455 over HTTP/1.1 and RFC
//!   8441 over HTTP/2, with a `problem+json` for every refusal,
//!   subprotocols, and the `Origin` check: a page from another site
//!   cannot open a socket here (`403`) unless `WEBSOCKET_ORIGINS` lists
//!   it. The library underneath, tokio-tungstenite, was chosen by the
//!   Autobahn cases and the bench (`PERFORMANCE.md`).
//! - **Limits** ([`WebSockets`]): message and frame sizes (`1009` past
//!   them), pings every `WEBSOCKET_PING_INTERVAL`, closed after
//!   `WEBSOCKET_IDLE_TIMEOUT` without a byte from the client, and
//!   `TERN_WRITE_TIMEOUT` for a client that stops reading. A socket
//!   counts toward `TERN_MAX_CONNECTIONS` until it closes.
//! - **Drain**: when the server shuts down every socket is closed with
//!   `1001` (going away) and the drain waits for the close handshakes,
//!   within `TERN_SHUTDOWN_TIMEOUT`; event streams end.
//! - **Topics** ([`Hub`]): a message is serialized once for all its
//!   subscribers; each connection has one bounded queue, and a client
//!   that falls `REALTIME_SEND_QUEUE` behind is closed (`1008`) or skipped
//!   (`REALTIME_SLOW_CONSUMER`), never waited for; the kernel's send
//!   buffer per socket is capped (`WEBSOCKET_SEND_BUFFER`), so that queue
//!   fills soon after a client stops reading. Presence counts a member
//!   once however many tabs it has open. [`Channels`] serves topics to
//!   browsers in JSON or, with the subprotocol `tern.cbor`, in CBOR, with
//!   a publish rate per connection.
//! - **Across processes** ([`Realtime`]): `REALTIME_BACKEND=redis` or
//!   `nats` carries messages and presence between processes; each
//!   process numbers what it sends, so losses while a connection was
//!   down are counted and logged ([`hub::Stats`]); connections come back
//!   by themselves.
//! - **Metrics** ([`install`]): sockets and event streams open, the
//!   hub's subscribers, queued messages and counts, and whether its
//!   backend is connected, in the app's `/metrics`
//!   (`docs/operations.md` lists them).
//! - **Tests**: [`testing::WebSocketClient`] opens sockets on
//!   `tern::test::TestClient` without a port.

mod budget;
mod bus;
pub mod channels;
pub mod hub;
mod metrics;
mod settings;
mod socket;
pub mod sse;
pub mod testing;
mod upgrade;

pub use channels::Channels;
pub use hub::{Connection, Delivery, Hub, Member};
pub use settings::{Realtime, SlowConsumer, WebSockets};
pub use socket::{close_code, Message, Text, WebSocket, WebSocketError, WebSocketErrorKind};
pub use upgrade::WebSocketUpgrade;

/// Loads the [`Realtime`] settings (prefix `realtime`), makes the hub
/// (and connects to the bus) when the app starts (with `tern::run`,
/// `tern::serve` or the `serve` command; else at its first use) and, in
/// every build of the app (`App::on_build`: however it is served),
/// records realtime's metrics in the app's ([`Realtime::record_metrics`]):
/// sockets and event streams open, the hub's subscribers, queued
/// messages and counts, and whether its backend is connected. Adds the
/// readiness check `bus` (`/ready`): with `REALTIME_BACKEND=redis` or
/// `nats`, the bus must be connected.
///
/// ```no_run
/// # async fn run() -> Result<(), tern::Error> {
/// let app = tern_realtime::install(tern::App::new()); // REALTIME_BACKEND=...
/// tern::serve(app).await // TERN_METRICS=on: `/metrics` has them
/// # }
/// ```
pub fn install<S: Clone + Send + Sync + 'static>(app: tern::App<S>) -> tern::App<S> {
    // The connection series exist from the start (at zero).
    drop(metrics::RealtimeMeter::register(app.metrics()));
    app.settings::<Realtime>("realtime")
        .on_build(|app: &tern::AppService| {
            if let Some(realtime) = app.settings::<Realtime>() {
                realtime.record_metrics(app.metrics());
            }
        })
        // The hub (and with a backend, its connection to the bus) from
        // the start, not at the first message: the process receives
        // the others' messages and reports `tern_realtime_bus_up` at
        // once.
        .on_start(|app: tern::AppService| async move {
            if let Some(realtime) = app.settings::<Realtime>() {
                realtime.hub();
            }
            Ok(())
        })
        // `/ready`: with Redis or NATS, the bus must be connected (a
        // process cut off from it would serve its own sockets only).
        .ready_check("bus", |ctx: tern::RequestContext| async move {
            match ctx.settings::<Realtime>().and_then(|r| r.hub().bus_up()) {
                Some(false) => {
                    Err("the message bus (REALTIME_BACKEND) is not connected".to_owned())
                }
                _ => Ok(()),
            }
        })
}
