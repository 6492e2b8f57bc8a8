//! Two showcase processes share the chat through Redis and through NATS:
//! a message sent on one reaches WebSocket and SSE clients of the other,
//! presence is the same on both, and when the backend connection drops
//! (Redis `CLIENT KILL`; a nats-server this test started, restarted)
//! both keep serving, reconnect, and say in their logs what was lost.
//! Needs the `redis` and `nats` features, `REDIS_URL`, `NATS_URL` and
//! `nats-server`, as `.ci/run` runs it:
//! `cargo test -p showcase --features redis,nats --test realtime`.
#![cfg(all(feature = "redis", feature = "nats"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::{
    io::{BufRead, BufReader, Write},
    net::TcpStream,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use support::{free_port, isolated, listening, scratch, sqlite, unique, wait_for, Showcase};
use tokio_tungstenite::{tungstenite::Message, MaybeTlsStream, WebSocketStream};

const ROOM: &str = "chat:lobby";

type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

impl Showcase {
    /// A showcase with only `envs`; its log goes to a file the test
    /// reads.
    fn start(envs: &[(&str, &str)]) -> Showcase {
        let dir = scratch("realtime");
        let mut command = isolated();
        command
            .env("DATABASE_URL", sqlite(&dir))
            .env("RUST_LOG", "info")
            .envs(envs.iter().copied())
            // The log goes to stdout; what stops a start, to stderr.
            .stdout(std::fs::File::create(dir.join("showcase.log")).unwrap())
            .stderr(Stdio::piped());
        Showcase::spawn(command, dir)
    }

    fn log(&mut self) -> String {
        std::fs::read_to_string(self.dir.join("showcase.log")).unwrap_or_default()
    }

    async fn guest(&self, name: &str) -> Ws {
        let url = format!("ws://127.0.0.1:{}/chat/socket?name={name}", self.port);
        let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        ws.send(Message::text(
            json!({"op": "join", "topic": ROOM}).to_string(),
        ))
        .await
        .unwrap();
        ws
    }
}

/// The next JSON text message, within 10 s.
async fn next(ws: &mut Ws) -> Value {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("nothing arrived")
            .unwrap()
            .unwrap();
        if let Message::Text(t) = frame {
            return serde_json::from_str(t.as_str()).unwrap();
        }
    }
}

/// Reads until `ws` knows `who` is here: from the join answer or an event.
async fn sees(ws: &mut Ws, who: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let m = next(ws).await;
        let listed = m["op"] == "joined"
            && m["presence"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == who);
        if listed || (m["event"] == "presence.join" && m["data"]["name"] == who) {
            return;
        }
    }
    panic!("{who} never appeared");
}

async fn say(ws: &mut Ws, text: &str) {
    ws.send(Message::text(
        json!({"op": "publish", "topic": ROOM, "event": "message", "data": {"text": text}})
            .to_string(),
    ))
    .await
    .unwrap();
}

/// Reads until a chat message arrives; its text.
async fn heard(ws: &mut Ws) -> String {
    loop {
        let m = next(ws).await;
        if m["event"] == "message" {
            return m["data"]["text"].as_str().unwrap().to_owned();
        }
    }
}

/// An SSE client of `/chat/events`, on a thread of its own: each event's
/// data line goes to the channel.
fn sse(port: u16) -> std::sync::mpsc::Receiver<Value> {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET /chat/events HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(s).lines() {
            let Ok(line) = line else { return };
            if let Some(data) = line.strip_prefix("data: ") {
                if tx.send(serde_json::from_str(data).unwrap()).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

/// The checks, with `backend` settings; `break_it` drops the backend,
/// `mend_it` brings it back.
async fn chat_across(
    backend: &[(&str, &str)],
    break_it: impl FnOnce(),
    mend_it: impl FnOnce(),
) -> (Showcase, Showcase) {
    let channel = unique("chat");
    let mut envs = vec![
        ("REALTIME_CHANNEL", channel.as_str()),
        ("REALTIME_PRESENCE_INTERVAL", "300ms"),
    ];
    envs.extend_from_slice(backend);
    let a = Showcase::start(&envs);
    let b = Showcase::start(&envs);
    let mut ada = a.guest("ada").await;
    sees(&mut ada, "ada (guest)").await;
    let mut bob = b.guest("bob").await;
    let events = sse(b.port);
    sees(&mut bob, "ada (guest)").await;
    sees(&mut ada, "bob (guest)").await;

    say(&mut ada, "hello from a").await;
    assert_eq!(heard(&mut bob).await, "hello from a");
    assert_eq!(heard(&mut ada).await, "hello from a");
    // (presence events come first on the stream: it follows the room)
    let event = loop {
        let e = events.recv_timeout(Duration::from_secs(10)).unwrap();
        if e["event"] == "message" {
            break e;
        }
    };
    assert_eq!(event["data"]["text"], "hello from a");
    assert_eq!(event["from"]["name"], "ada (guest)");

    break_it();
    // Each process still serves its own clients.
    say(&mut ada, "while away").await;
    assert_eq!(heard(&mut ada).await, "while away");
    mend_it();
    // Messages cross again (a few tries while they reconnect).
    let mut crossed = false;
    for attempt in 0..100 {
        say(&mut ada, &format!("again {attempt}")).await;
        let got = tokio::time::timeout(Duration::from_millis(300), heard(&mut bob)).await;
        if let Ok(text) = got {
            if text.starts_with("again") || text == "while away" {
                crossed = true;
                break;
            }
        }
    }
    assert!(crossed, "messages never crossed again");
    // Presence holds across both, and a departure is seen on the other.
    drop(bob);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let m = next(&mut ada).await;
        if m["event"] == "presence.leave" && m["data"]["name"] == "bob (guest)" {
            break;
        }
        assert!(Instant::now() < deadline, "bob's leaving was not seen");
    }
    (a, b)
}

fn services() -> Option<(String, String)> {
    // .ci/run sets both.
    Some((
        tern::test::service_url("REDIS_URL")?,
        tern::test::service_url("NATS_URL")?,
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_chat_through_redis_and_survive_a_killed_connection() {
    let Some((redis, _)) = services() else { return };
    let backend = [
        ("REALTIME_BACKEND", "redis"),
        ("REALTIME_URL", redis.as_str()),
    ];
    let (mut a, mut b) = chat_across(
        &backend,
        || {
            let out = Command::new("redis-cli")
                .args(["-u", &redis, "CLIENT", "KILL", "TYPE", "pubsub"])
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
        },
        || {},
    )
    .await;
    // What was lost is in the logs: unsent on a's side, the gap on b's.
    let (la, lb) = (a.log(), b.log());
    assert!(la.contains("lost the connection to Redis"), "{la}");
    assert!(la.contains("connected to Redis again"), "{la}");
    assert!(la.contains("unsent"), "{la}");
    assert!(lb.contains("messages of another process were lost"), "{lb}");
}

struct Nats(Child);

impl Nats {
    fn start(port: u16) -> Nats {
        let mut child = Command::new("nats-server")
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server (.ci/run installs it)");
        wait_for(&mut child, "nats-server", Duration::from_secs(10), || {
            listening(port)
        });
        Nats(child)
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_chat_through_nats_and_survive_its_restart() {
    if services().is_none() {
        return;
    }
    // A server of this test's own, so that it can restart it.
    let port = free_port();
    let nats = std::sync::Arc::new(std::sync::Mutex::new(Some(Nats::start(port))));
    let url = format!("nats://127.0.0.1:{port}");
    let backend = [("REALTIME_BACKEND", "nats"), ("REALTIME_URL", url.as_str())];
    let (stop, restart) = (std::sync::Arc::clone(&nats), std::sync::Arc::clone(&nats));
    let (mut a, mut b) = chat_across(
        &backend,
        move || *stop.lock().unwrap() = None,
        move || *restart.lock().unwrap() = Some(Nats::start(port)),
    )
    .await;
    for log in [a.log(), b.log()] {
        assert!(log.contains("lost the connection to NATS"), "{log}");
        assert!(log.contains("connected to NATS again"), "{log}");
    }
    drop(nats);
}
