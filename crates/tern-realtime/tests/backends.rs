//! Two servers sharing topics through Redis (`REDIS_URL`) and through
//! NATS (a `nats-server` this test starts, so that it can restart it):
//! messages reach WebSocket and SSE clients of the other server, presence
//! is the same on both, and when the backend connection drops (Redis
//! `CLIENT KILL`, a NATS restart) both keep serving, reconnect, and count
//! what was lost. The showcase's two-process test does the same with two
//! processes (`examples/showcase/tests/realtime.rs`).
#![allow(clippy::unwrap_used, missing_docs)]

use std::{
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::{json, Value};

mod common;

use common::*;

fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("tern-test-{name}-{}-{nanos}", std::process::id())
}

/// Waits until `ws` has seen `who` in `topic`'s presence (from the join
/// answer given, or from later events); the other events are returned.
async fn sees(ws: &mut Ws, joined: &Value, who: &str) {
    if names(&joined["presence"]).contains(&who) {
        return;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while let Some(m) = next_before(ws, deadline).await {
        if m["event"] == "presence.join" && m["data"]["name"] == who {
            return;
        }
    }
    panic!("{who} never appeared within 10 s");
}

/// Publishes `text` from `from` until `to` receives one (the backend may
/// still be reconnecting); how many tries it took.
async fn until_delivered(from: &mut Ws, to: &mut Ws, topic: &str) -> usize {
    for attempt in 1..=100 {
        send(
            from,
            json!({"op": "publish", "topic": topic, "event": "message", "data": attempt}),
        )
        .await;
        let deadline = Instant::now() + Duration::from_millis(200);
        while let Ok(Some(Ok(frame))) =
            tokio::time::timeout_at(deadline.into(), futures_util::StreamExt::next(to)).await
        {
            if let tokio_tungstenite::tungstenite::Message::Text(t) = frame {
                let m: Value = serde_json::from_str(t.as_str()).unwrap();
                if m["event"] == "message" {
                    return attempt;
                }
            }
        }
    }
    panic!("messages never got through again");
}

/// The checks for one backend: two servers with `settings`; `break_it`
/// drops the backend connection, `mend_it` (if any) brings it back.
async fn share_and_recover(
    settings: &[(&str, &str)],
    break_it: impl FnOnce(),
    mend_it: impl FnOnce(),
) -> (tern_realtime::hub::Stats, tern_realtime::hub::Stats) {
    let a = start(settings).await;
    let b = start(settings).await;
    let mut ada = connect(a.addr, Some("ada")).await;
    let joined_ada = join(&mut ada, "room").await;
    let mut bob = connect(b.addr, Some("bob")).await;
    let joined_bob = join(&mut bob, "room").await;
    // Presence: each sees the other, whichever arrived first.
    sees(&mut bob, &joined_bob, "ada").await;
    sees(&mut ada, &joined_ada, "bob").await;
    assert_eq!(names(&json!(a.hub.presence("room"))), ["ada", "bob"]);
    assert_eq!(names(&json!(b.hub.presence("room"))), ["ada", "bob"]);

    // A message on one reaches WebSocket and SSE clients of the other.
    let (mut sse, _) = SseClient::open(b.addr, None).await;
    send(
        &mut ada,
        json!({"op": "publish", "topic": "room", "event": "message", "data": "hello"}),
    )
    .await;
    let m = next(&mut bob).await;
    assert_eq!(
        (m["data"].as_str(), m["from"]["name"].as_str()),
        (Some("hello"), Some("ada"))
    );
    a.hub.publish("news", "story", "from a").unwrap();
    let (_, story) = sse.event().await.unwrap();
    assert_eq!(story["data"], "from a");

    // The backend goes away: both keep serving locally...
    break_it();
    let mut ada2 = connect(a.addr, Some("ada")).await;
    join(&mut ada2, "room").await;
    send(
        &mut ada,
        json!({"op": "publish", "topic": "room", "event": "message", "data": "local"}),
    )
    .await;
    // (ada's own message, to her other tab, on the same server)
    loop {
        let m = next(&mut ada2).await;
        if m["event"] == "message" {
            assert_eq!(m["data"], "local");
            break;
        }
    }
    mend_it();
    // ... and reconnect: messages cross again, presence holds.
    let tries = until_delivered(&mut ada, &mut bob, "room").await;
    println!("delivered again after {tries} tries");
    let deadline = Instant::now() + Duration::from_secs(10);
    while names(&json!(b.hub.presence("room"))) != ["ada", "bob"] {
        assert!(Instant::now() < deadline, "{:?}", b.hub.presence("room"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Leaving is seen on the other server.
    drop(ada);
    drop(ada2);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let m = next(&mut bob).await;
        if m["event"] == "presence.leave" && m["data"]["name"] == "ada" {
            break;
        }
        assert!(Instant::now() < deadline);
    }
    assert_eq!(names(&json!(b.hub.presence("room"))), ["bob"]);
    println!("a: {:?}\nb: {:?}", a.hub.stats(), b.hub.stats());
    (a.hub.stats(), b.hub.stats())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_topics_through_redis_and_survive_a_killed_connection() {
    logs();
    let Some(redis) = tern::test::service_url("REDIS_URL") else {
        return;
    };
    let channel = unique("redis");
    let settings = [
        ("REALTIME_BACKEND", "redis"),
        ("REALTIME_URL", redis.as_str()),
        ("REALTIME_CHANNEL", channel.as_str()),
        ("REALTIME_PRESENCE_INTERVAL", "300ms"),
    ];
    let (a, b) = share_and_recover(
        &settings,
        || {
            // Every subscriber connection of this channel's servers (and
            // any other pub/sub client: tests of other crates do not run
            // at the same time).
            let out = Command::new("redis-cli")
                .args(["-u", &redis, "CLIENT", "KILL", "TYPE", "pubsub"])
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
        },
        || {},
    )
    .await;
    // What `a` said while Redis was away never reached `b`: counted on
    // both sides (and logged).
    assert!(a.unsent >= 1, "{a:?}");
    assert!(b.lost >= 1, "{b:?}");
}

struct Nats {
    child: Child,
    port: u16,
}

impl Nats {
    fn start(port: u16) -> Option<Nats> {
        let child = Command::new("nats-server")
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Nats { child, port })
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.stop();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_topics_through_nats_and_survive_its_restart() {
    logs();
    // NATS_URL says NATS is available; this test starts a nats-server of
    // its own.
    if tern::test::service_url("NATS_URL").is_none() {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let Some(nats) = Nats::start(port) else {
        tern::test::skip("nats-server is not installed");
        return;
    };
    let url = format!("nats://127.0.0.1:{}", nats.port);
    let channel = unique("nats");
    let settings = [
        ("REALTIME_BACKEND", "nats"),
        ("REALTIME_URL", url.as_str()),
        ("REALTIME_CHANNEL", channel.as_str()),
        ("REALTIME_PRESENCE_INTERVAL", "300ms"),
    ];
    let nats = std::sync::Arc::new(std::sync::Mutex::new(Some(nats)));
    let (stopping, restarting) = (std::sync::Arc::clone(&nats), std::sync::Arc::clone(&nats));
    share_and_recover(
        &settings,
        move || {
            if let Some(n) = stopping.lock().unwrap().as_mut() {
                n.stop();
            }
        },
        move || {
            let mut slot = restarting.lock().unwrap();
            *slot = None;
            *slot = Nats::start(port);
        },
    )
    .await;
    // The restarted server lives until here.
    drop(nats);
}
