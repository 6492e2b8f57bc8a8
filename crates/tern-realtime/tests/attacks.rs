//! Realtime under outside attack (issue 25): the SSE replay as an
//! amplifier (an unknown `Last-Event-ID`, the byte cap, the replay in the
//! send queue, the memory of 100 silent replays), the publish budget
//! shared by the sockets of one member and of one address, and the
//! WebSocket `Origin`'s scheme.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::{net::SocketAddr, time::Duration};

use common::*;
use serde_json::json;
use tokio::{
    io::AsyncWriteExt,
    net::{TcpSocket, TcpStream},
};

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
