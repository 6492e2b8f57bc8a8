//! What the realtime tests share: an app with a channel socket
//! (`/socket?user=NAME`) and an SSE route (`/news`), a server, clients.
#![allow(dead_code, unreachable_pub)]

use std::{net::SocketAddr, time::Duration};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tern::{
    extract::{Query, Settings},
    routing::get,
    App, Config, Response,
};
use tern_realtime::{
    channels::Access, sse::EventStream, Channels, Hub, Member, Realtime, WebSocketUpgrade,
};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    net::{TcpListener, TcpStream},
    sync::oneshot,
};
use tokio_tungstenite::{tungstenite, MaybeTlsStream, WebSocketStream};

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

#[derive(serde::Deserialize)]
pub struct Who {
    user: Option<String>,
}

/// `?user=ada` makes the connection the member `ada`; none is anonymous.
/// Topics under `staff:` only for `root`.
pub async fn socket(
    ws: WebSocketUpgrade,
    Query(who): Query<Who>,
    Settings(realtime): Settings<Realtime>,
) -> Response {
    let channels = Channels::new(realtime.hub()).authorize(|member, topic, access| {
        match (member, topic.strip_prefix("staff:")) {
            (Some(m), Some(_)) => m.id == "root",
            (Some(_), None) => true,
            (None, _) => access == Access::Join && topic.starts_with("public:"),
        }
    });
    let member = who.user.map(|u| Member::new(u.clone(), u));
    ws.protocols([tern_realtime::channels::CBOR])
        .on_upgrade(move |socket| async move { channels.serve(socket, member).await })
}

pub async fn events(events: EventStream, Settings(realtime): Settings<Realtime>) -> Response {
    events.follow(realtime.hub(), &["news"], None)
}

pub struct Server {
    pub addr: SocketAddr,
    pub hub: Hub,
    pub stop: Option<oneshot::Sender<()>>,
    pub done: tokio::task::JoinHandle<std::io::Result<()>>,
}

pub async fn start(settings: &[(&str, &str)]) -> Server {
    // `TERN_HTTP1` in the environment chooses the HTTP/1 engine (`.ci/run`
    // runs these tests on both).
    let engine = std::env::var("TERN_HTTP1").unwrap_or_default();
    let engine = (!engine.is_empty()).then_some(("TERN_HTTP1", engine.as_str()));
    let config = Config::from_settings(settings.iter().copied().chain(engine)).unwrap();
    let service = App::new()
        .settings::<Realtime>("realtime")
        .settings::<tern_realtime::WebSockets>("websocket")
        .route("/socket", get(socket))
        .route("/news", get(events))
        .build_with(config)
        .unwrap();
    let hub = service.settings::<Realtime>().unwrap().hub().clone();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let done = tokio::spawn(
        tern::Server::new(service).serve_with_shutdown(listener, async move {
            let _ = rx.await;
        }),
    );
    Server {
        addr,
        hub,
        stop: Some(tx),
        done,
    }
}

pub async fn connect(addr: SocketAddr, user: Option<&str>) -> Ws {
    let query = user.map(|u| format!("?user={u}")).unwrap_or_default();
    tokio_tungstenite::connect_async(format!("ws://{addr}/socket{query}"))
        .await
        .unwrap()
        .0
}

pub async fn send(ws: &mut Ws, command: Value) {
    ws.send(tungstenite::Message::text(command.to_string()))
        .await
        .unwrap();
}

/// The next JSON text message (pings skipped), within 5 s.
pub async fn next(ws: &mut Ws) -> Value {
    next_before(ws, tokio::time::Instant::now() + Duration::from_secs(5))
        .await
        .expect("nothing arrived within 5 s")
}

/// The next JSON text message (pings skipped) if one comes before
/// `deadline`.
pub async fn next_before(ws: &mut Ws, deadline: tokio::time::Instant) -> Option<Value> {
    loop {
        let frame = tokio::time::timeout_at(deadline, ws.next())
            .await
            .ok()?
            .expect("the socket ended")
            .unwrap();
        if let tungstenite::Message::Text(t) = frame {
            return Some(serde_json::from_str(t.as_str()).unwrap());
        }
    }
}

/// The crate's log lines (the backends' connects, losses and
/// reconnects) in the test's output, which the harness shows when a
/// test fails.
pub fn logs() {
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_ansi(false)
        .with_env_filter("tern_realtime=info")
        .try_init();
}

/// Nothing arrives within `ms`.
pub async fn quiet(ws: &mut Ws, ms: u64) {
    if let Ok(Some(Ok(frame))) = tokio::time::timeout(Duration::from_millis(ms), ws.next()).await {
        panic!("unexpected: {frame:?}");
    }
}

pub async fn join(ws: &mut Ws, topic: &str) -> Value {
    send(ws, json!({"op": "join", "topic": topic})).await;
    next(ws).await
}

pub fn names(presence: &Value) -> Vec<&str> {
    presence
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect()
}

/// Reads an SSE response: the head, then events as they come.
pub struct SseClient {
    lines: tokio::io::Lines<BufReader<TcpStream>>,
}

impl SseClient {
    pub async fn open(addr: SocketAddr, last_id: Option<&str>) -> (SseClient, String) {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let extra = last_id
            .map(|id| format!("Last-Event-ID: {id}\r\n"))
            .unwrap_or_default();
        s.write_all(format!("GET /news HTTP/1.1\r\nHost: {addr}\r\n{extra}\r\n").as_bytes())
            .await
            .unwrap();
        let mut lines = BufReader::new(s).lines();
        let mut head = String::new();
        loop {
            let line = lines.next_line().await.unwrap().unwrap();
            if line.is_empty() {
                break;
            }
            head.push_str(&line.to_lowercase());
            head.push('\n');
        }
        (SseClient { lines }, head)
    }

    /// The next event's (or comment's) lines, chunk-size lines skipped.
    pub async fn next(&mut self) -> Option<Vec<String>> {
        let mut event = Vec::new();
        loop {
            let line = tokio::time::timeout(Duration::from_secs(5), self.lines.next_line())
                .await
                .expect("no event came")
                .ok()??;
            if line.is_empty() {
                if !event.is_empty() {
                    return Some(event);
                }
                continue;
            }
            // Chunked transfer: size lines are hex digits only.
            if line.chars().all(|c| c.is_ascii_hexdigit()) {
                if line == "0" {
                    return None;
                }
                continue;
            }
            event.push(line);
        }
    }

    /// The next real event (comments skipped): its id and data JSON.
    pub async fn event(&mut self) -> Option<(String, Value)> {
        loop {
            let lines = self.next().await?;
            if lines.iter().all(|l| l.starts_with(':')) {
                continue;
            }
            let id = lines
                .iter()
                .find_map(|l| l.strip_prefix("id: "))
                .unwrap()
                .to_owned();
            let data = lines.iter().find_map(|l| l.strip_prefix("data: ")).unwrap();
            return Some((id, serde_json::from_str(data).unwrap()));
        }
    }
}
