//! Bench server: Tern's realtime beside its JSON path. `TERN_ADDR`,
//! `REALTIME_*` and `WEBSOCKET_*` as for any Tern app; one current-thread
//! runtime (one server core); prints `listening on ADDR`.
//!
//! - `GET /json`: `{"message":"Hello, World!"}` (the lab's json workload);
//! - `GET /socket`: the channel protocol (`tern_realtime::channels`);
//!   anyone may join and publish to topics under `bench:`;
//! - `GET /events/{topic}`: a topic under `bench:` as server-sent events.

use serde::Serialize;
use tern::{
    extract::{Path, Settings},
    routing::get,
    App, IntoResponse, Json, Problem, Response, StatusCode,
};
use tern_realtime::{sse::EventStream, Channels, Realtime, WebSocketUpgrade, WebSockets};

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

async fn json() -> Json<Message> {
    Json(Message {
        message: "Hello, World!",
    })
}

async fn socket(ws: WebSocketUpgrade, Settings(realtime): Settings<Realtime>) -> Response {
    // The bench's publisher sends as fast as the workload asks: no
    // publish rate (the default, 20 a second, is for browsers).
    let channels = Channels::new(realtime.hub())
        .authorize(|_, topic, _| topic.starts_with("bench:"))
        .publish_rate(u32::MAX, u32::MAX);
    ws.on_upgrade(move |socket| async move { channels.serve(socket, None).await })
}

async fn events(
    events: EventStream,
    Path(topic): Path<String>,
    Settings(realtime): Settings<Realtime>,
) -> Response {
    if !topic.starts_with("bench:") {
        return Problem::new(StatusCode::NOT_FOUND).into_response();
    }
    events.follow(realtime.hub(), &[&topic], None)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = tern::Config::from_env()?;
    config.access_log = false;
    config.health_path = None;
    let service = App::new()
        .settings::<Realtime>("realtime")
        .settings::<WebSockets>("websocket")
        .route("/json", get(json))
        .route("/socket", get(socket))
        .route("/events/{topic}", get(events))
        .build_with(config.clone())?;
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = tokio::net::TcpListener::bind(config.addr).await?;
            println!("listening on {}", listener.local_addr()?);
            tern::Server::new(service)
                .serve_with_shutdown(listener, tern::shutdown_signal())
                .await
        })?;
    Ok(())
}
