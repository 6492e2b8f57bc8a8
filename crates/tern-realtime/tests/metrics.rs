//! Realtime's metrics over real sockets, with the app started as
//! `tern::serve` starts it (so `install`'s start hook records them):
//! sockets and event streams open and closed, subscribers and queued
//! messages up and back to zero, the hub's counts, and, with NATS (a
//! `nats-server` this test starts and stops), whether the backend is up.
#![allow(clippy::unwrap_used, missing_docs)]

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use tern::{routing::get, settings::Settings, App, Config};
use tern_realtime::{Connection, Realtime};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

mod common;

use common::{connect, events, join, socket, SseClient};

async fn scrape(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    answer
}

fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let (s, v) = l.rsplit_once(' ')?;
        (s == series).then(|| v.parse().unwrap())
    })
}

/// Scrapes until every `(series, value)` of `want` is served (a socket
/// closes on its task, just after the client sees it close), 5 s at most.
async fn until(addr: SocketAddr, want: &[(&str, f64)]) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = scrape(addr).await;
        if want.iter().all(|(s, v)| value(&text, s) == Some(*v)) {
            return text;
        }
        assert!(Instant::now() < deadline, "never {want:?}:\n{text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Serves `tern_realtime::install`'s app as `tern::serve` does, on a
/// free port; `/park` adds a hub connection that joins `feed` and never
/// reads, `/unpark` drops them, `/publish` sends one message to `feed`.
async fn serve(settings: &[(&str, &str)]) -> SocketAddr {
    let parked: Arc<Mutex<Vec<Connection>>> = Arc::default();
    let (park, unpark) = (Arc::clone(&parked), parked);
    let app = App::new()
        .route("/socket", get(socket))
        .route("/news", get(events))
        .route(
            "/park",
            get(move |Settings(rt): Settings<Realtime>| {
                let parked = Arc::clone(&park);
                async move {
                    let mut c = rt.hub().connect(None);
                    c.join("feed").unwrap();
                    parked.lock().unwrap().push(c);
                    "parked"
                }
            }),
        )
        .route(
            "/unpark",
            get(move || {
                let parked = Arc::clone(&unpark);
                async move {
                    parked.lock().unwrap().clear();
                    "gone"
                }
            }),
        )
        .route(
            "/publish",
            get(|Settings(rt): Settings<Realtime>| async move {
                rt.hub().publish("feed", "tick", &1).unwrap();
                "sent"
            }),
        );
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = free.local_addr().unwrap();
    drop(free);
    let mut config = Config::from_settings(settings.iter().copied()).unwrap();
    config.metrics = true;
    config.addr = addr;
    config.workers = 1;
    tokio::spawn(tern::serve(tern_realtime::install(app).config(config)));
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(addr).await.is_err() {
        assert!(Instant::now() < deadline, "the app did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    addr
}

async fn get_path(addr: SocketAddr, path: &str) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test]
async fn sockets_streams_subscribers_and_queues_go_up_and_back_to_zero() {
    let addr = serve(&[("REALTIME_SEND_QUEUE", "4")]).await;
    let text = scrape(addr).await;
    for (series, n) in [
        (r#"tern_connections_open{protocol="websocket"}"#, 0.0),
        (r#"tern_connections_open{protocol="sse"}"#, 0.0),
        ("tern_realtime_subscribers", 0.0),
        ("tern_realtime_queued_messages", 0.0),
        ("tern_realtime_messages_published_total", 0.0),
    ] {
        assert_eq!(value(&text, series), Some(n), "{series}:\n{text}");
    }
    // No backend: no `bus_up`, and nothing to wait for.
    assert!(!text.contains("tern_realtime_bus_up"), "{text}");
    get_path(addr, "/ready").await;

    let mut ada = connect(addr, Some("ada")).await;
    join(&mut ada, "room").await;
    let (sse, _) = SseClient::open(addr, None).await;
    get_path(addr, "/park").await;
    until(
        addr,
        &[
            (r#"tern_connections_open{protocol="websocket"}"#, 1.0),
            (r#"tern_connections_total{protocol="websocket"}"#, 1.0),
            (r#"tern_connections_open{protocol="sse"}"#, 1.0),
            (r#"tern_connections_total{protocol="sse"}"#, 1.0),
            // ada in `room`, the stream in `news`, the parked one in `feed`.
            ("tern_realtime_subscribers", 3.0),
        ],
    )
    .await;

    // The parked connection never reads: four fill its queue, the fifth
    // closes it as a slow consumer (REALTIME_SLOW_CONSUMER=close).
    for _ in 0..5 {
        get_path(addr, "/publish").await;
    }
    let text = scrape(addr).await;
    for (series, n) in [
        ("tern_realtime_queued_messages", 4.0),
        ("tern_realtime_messages_published_total", 5.0),
        ("tern_realtime_slow_consumers_closed_total", 1.0),
        ("tern_realtime_messages_dropped_total", 0.0),
        ("tern_realtime_bus_lost_total", 0.0),
        ("tern_realtime_bus_unsent_total", 0.0),
    ] {
        assert_eq!(value(&text, series), Some(n), "{series}:\n{text}");
    }

    get_path(addr, "/unpark").await;
    ada.close(None).await.unwrap();
    drop(sse);
    until(
        addr,
        &[
            (r#"tern_connections_open{protocol="websocket"}"#, 0.0),
            (r#"tern_connections_open{protocol="sse"}"#, 0.0),
            (r#"tern_connections_total{protocol="websocket"}"#, 1.0),
            ("tern_realtime_subscribers", 0.0),
            ("tern_realtime_queued_messages", 0.0),
        ],
    )
    .await;
}

/// An app that builds its service and serves it itself (no start hooks)
/// has the hub's metrics too: `install` records them in every build.
#[tokio::test]
async fn recorded_in_an_app_served_without_start_hooks() {
    let app = App::new().route(
        "/publish",
        get(|Settings(rt): Settings<Realtime>| async move {
            rt.hub().publish("feed", "tick", &1).unwrap();
            "sent"
        }),
    );
    let mut config = Config::default();
    config.metrics = true;
    let service = tern_realtime::install(app).build_with(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(tern::Server::new(service).serve_with_shutdown(listener, std::future::pending()));
    // Before the hub is made: at zero.
    let text = scrape(addr).await;
    assert_eq!(
        value(&text, "tern_realtime_messages_published_total"),
        Some(0.0),
        "{text}"
    );
    get_path(addr, "/publish").await;
    get_path(addr, "/publish").await;
    let text = scrape(addr).await;
    assert_eq!(
        value(&text, "tern_realtime_messages_published_total"),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        value(&text, "tern_realtime_subscribers"),
        Some(0.0),
        "{text}"
    );
}

#[cfg(feature = "nats")]
#[tokio::test]
async fn bus_up_follows_the_nats_server() {
    use std::process::{Command, Stdio};

    // NATS_URL says NATS is available; this test starts a nats-server of
    // its own, to stop it.
    if tern::test::service_url("NATS_URL").is_none() {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let Ok(mut nats) = Command::new("nats-server")
        .args(["-a", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        tern::test::skip("nats-server is not installed");
        return;
    };
    let url = format!("nats://127.0.0.1:{port}");
    let channel = format!("tern-test-metrics-{}", std::process::id());
    let addr = serve(&[
        ("REALTIME_BACKEND", "nats"),
        ("REALTIME_URL", url.as_str()),
        ("REALTIME_CHANNEL", channel.as_str()),
    ])
    .await;
    until(addr, &[("tern_realtime_bus_up", 1.0)]).await;
    assert_eq!(ready(addr).await, 200);
    let _ = nats.kill();
    let _ = nats.wait();
    until(addr, &[("tern_realtime_bus_up", 0.0)]).await;
    // `/ready` says so (its verdict is kept a second).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(ready(addr).await, 503);
}

/// The status of `GET /ready`.
#[cfg(feature = "nats")]
async fn ready(addr: SocketAddr) -> u16 {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /ready HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer[9..12].parse().unwrap()
}
