//! Realtime under outside attack (issue 25): the SSE replay as an
//! amplifier (an unknown `Last-Event-ID`, the byte cap, the replay in the
//! send queue, the memory of 100 silent replays), the publish budget
//! shared by the sockets of one member and of one address, and the
//! WebSocket `Origin`'s scheme.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::{net::SocketAddr, time::Duration};

use common::*;
use futures_util::StreamExt;
use serde_json::json;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpSocket, TcpStream},
};
use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest};

/// The messages published so far on `news` have these ids.
fn publish(server: &Server, n: usize, size: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            server
                .hub
                .publish("news", "story", &json!({"i": i, "pad": "x".repeat(size)}))
                .unwrap()
        })
        .collect()
}

#[tokio::test]
async fn an_unknown_last_event_id_starts_the_stream_now() {
    let server = start(&[]).await;
    publish(&server, 3, 10);
    for id in ["nope", "0000000000000000.1"] {
        let (mut sse, head) = SseClient::open(server.addr, Some(id)).await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        let live = server.hub.publish("news", "story", &"live").unwrap();
        let (first, data) = sse.event().await.unwrap();
        assert_eq!(first, live, "{id}: replayed {data}");
    }
}

#[tokio::test]
async fn the_replay_buffer_is_capped_by_bytes() {
    // About 10 KB a message: 35 000 bytes keep the last three.
    let server = start(&[("REALTIME_REPLAY_BYTES", "35000")]).await;
    let ids = publish(&server, 10, 10_000);
    let (mut sse, _) = SseClient::open(server.addr, Some(&ids[7])).await;
    for id in &ids[8..] {
        assert_eq!(&sse.event().await.unwrap().0, id);
    }
    let live = server.hub.publish("news", "story", &"live").unwrap();
    assert_eq!(sse.event().await.unwrap().0, live);
    // The seventh fell out of the buffer: a resume from it starts now.
    let (mut late, _) = SseClient::open(server.addr, Some(&ids[6])).await;
    let live = server.hub.publish("news", "story", &"live").unwrap();
    assert_eq!(late.event().await.unwrap().0, live);
}

#[tokio::test]
async fn a_replay_goes_through_the_send_queue() {
    // Nine missed, a queue of four: the newest four are replayed.
    let server = start(&[("REALTIME_SEND_QUEUE", "4"), ("REALTIME_REPLAY", "20")]).await;
    let ids = publish(&server, 10, 10);
    let (mut sse, _) = SseClient::open(server.addr, Some(&ids[0])).await;
    for id in &ids[6..] {
        assert_eq!(&sse.event().await.unwrap().0, id);
    }
    let live = server.hub.publish("news", "story", &"live").unwrap();
    assert_eq!(sse.event().await.unwrap().0, live);
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// Opens an event stream that never reads (a 4 KiB receive buffer).
async fn silent(addr: SocketAddr, last_id: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut s = socket.connect(addr).await.unwrap();
    s.write_all(
        format!("GET /news HTTP/1.1\r\nHost: {addr}\r\nLast-Event-ID: {last_id}\r\n\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    s
}

/// The room as the attack filled it (100 messages of 65 KB), then 100
/// silent streams with an unknown id and 100 with the oldest id kept:
/// the process grows by less than 32 MiB, and is back within 8 MiB once
/// they are gone. (Before: every one got the whole buffer formatted
/// afresh, 6.5 MB each.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_replays_share_the_buffer_and_cost_little_memory() {
    let server = start(&[("TERN_WRITE_TIMEOUT", "60s")]).await;
    let ids = publish(&server, 100, 65_000);
    // The oldest message the buffer still has (a resume from it replays
    // all the others): probed from the newest back.
    let mut oldest = ids[98].clone();
    for id in ids[..98].iter().rev() {
        let (mut probe, _) = SseClient::open(server.addr, Some(id)).await;
        if tokio::time::timeout(Duration::from_millis(300), probe.event())
            .await
            .is_err()
        {
            break;
        }
        oldest = id.clone();
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_kib();
    let mut streams = Vec::new();
    for i in 0..200 {
        let id = if i % 2 == 0 { "nope" } else { &oldest };
        streams.push(silent(server.addr, id).await);
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while server.hub.local_subscribers("news") < 200 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let during = rss_kib();
    drop(streams);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while server.hub.local_subscribers("news") > 0 && tokio::time::Instant::now() < deadline {
        // The hub forgets a stream when its queue is next used.
        let _ = server.hub.publish("news", "story", &0);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = rss_kib();
    println!("RSS {before} KiB, with 200 silent streams {during} KiB, after {after} KiB");
    assert!(
        during.saturating_sub(before) < 32 * 1024,
        "200 silent replays: {before} -> {during} KiB"
    );
    assert!(
        after.saturating_sub(before) < 8 * 1024,
        "after they closed: {before} -> {after} KiB"
    );
}

/// A channel socket from `from` (a loopback address) as `user`.
async fn connect_from(server: SocketAddr, from: &str, user: &str) -> Ws {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let stream = socket.connect(server).await.unwrap();
    let request = format!("ws://{server}/socket?user={user}")
        .into_client_request()
        .unwrap();
    tokio_tungstenite::client_async(request, tokio_tungstenite::MaybeTlsStream::Plain(stream))
        .await
        .unwrap()
        .0
}

/// What `reader` receives of `room:1` within 1.5 s.
async fn delivered(reader: &mut Ws) -> usize {
    let mut n = 0;
    while let Ok(Some(Ok(tungstenite::Message::Text(t)))) =
        tokio::time::timeout(Duration::from_millis(1500), reader.next()).await
    {
        if t.as_str().contains(r#""event":"m""#) {
            n += 1;
        }
    }
    n
}

async fn burst(sockets: &mut [Ws], each: usize) {
    for ws in sockets {
        for i in 0..each {
            send(
                ws,
                json!({"op": "publish", "topic": "room:1", "event": "m", "data": i}),
            )
            .await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_of_one_address_or_one_member_share_the_publish_budget() {
    let server = start(&[]).await;
    let mut reader = connect_from(server.addr, "127.0.0.9", "reader").await;
    join(&mut reader, "room:1").await;

    // 20 members on one address, 40 each at once: one burst in all.
    let mut crowd = Vec::new();
    for i in 0..20 {
        crowd.push(connect_from(server.addr, "127.0.0.1", &format!("guest{i}")).await);
    }
    burst(&mut crowd, 40).await;
    let got = delivered(&mut reader).await;
    assert!((40..=50).contains(&got), "one address published {got}");

    // Another address has a budget of its own.
    let mut other = vec![connect_from(server.addr, "127.0.0.2", "carol").await];
    burst(&mut other, 40).await;
    assert_eq!(delivered(&mut reader).await, 40);

    // One member on two addresses: one budget.
    let mut ada = vec![
        connect_from(server.addr, "127.0.0.3", "ada").await,
        connect_from(server.addr, "127.0.0.4", "ada").await,
    ];
    burst(&mut ada, 40).await;
    let got = delivered(&mut reader).await;
    assert!((40..=45).contains(&got), "one member published {got}");
    // The refused were told why (on either socket: their commands
    // interleave).
    let mut told = 0;
    for ws in &mut ada {
        while let Ok(Some(Ok(tungstenite::Message::Text(t)))) =
            tokio::time::timeout(Duration::from_millis(300), ws.next()).await
        {
            if t.as_str().contains("publishing too fast") {
                told += 1;
            }
        }
    }
    assert_eq!(told + got, 80);
}

fn handshake(addr: SocketAddr, extra: &str) -> String {
    format!(
        "GET /socket HTTP/1.1\r\nHost: {addr}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
    )
}

async fn raw(addr: SocketAddr, head: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[tokio::test]
async fn a_websocket_origin_is_compared_by_scheme_host_and_port() {
    let server = start(&[]).await;
    let addr = server.addr;
    let port = addr.port();
    for (extra, status) in [
        // This plain-HTTP server: only http://host:port is its origin.
        (format!("Origin: http://{addr}\r\n"), "101"),
        (format!("Origin: HTTP://{addr}\r\n"), "101"),
        (format!("Origin: https://{addr}\r\n"), "403"),
        (format!("Origin: ws://{addr}\r\n"), "403"),
        (format!("Origin: http://{addr}/\r\n"), "403"),
        (format!("Origin: http://127.0.0.1:{}\r\n", port + 1), "403"),
        // Behind a TLS proxy, which says so: https is the page's scheme.
        (
            format!("Origin: https://{addr}\r\nX-Forwarded-Proto: https\r\n"),
            "101",
        ),
        (
            format!("Origin: http://{addr}\r\nX-Forwarded-Proto: https\r\n"),
            "403",
        ),
        (
            format!("Origin: https://{addr}\r\nForwarded: for=1.2.3.4;proto=https\r\n"),
            "101",
        ),
    ] {
        let answer = raw(addr, &handshake(addr, &extra)).await;
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{extra}: {answer}"
        );
    }
    // Default ports: `https://host` is `https://host:443`.
    let head = "GET /socket HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\n\
                Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
                Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nX-Forwarded-Proto: https\r\n";
    for (origin, status) in [
        ("https://example.com", "101"),
        ("https://example.com:443", "101"),
        ("https://example.com:8443", "403"),
        ("http://example.com", "403"),
    ] {
        let answer = raw(addr, &format!("{head}Origin: {origin}\r\n\r\n")).await;
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{origin}: {answer}"
        );
    }
}
