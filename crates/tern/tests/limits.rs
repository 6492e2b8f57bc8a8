//! Every limit and timeout of the configuration, over real sockets: what a
//! client that sends too much, too slowly or too often gets back, and that
//! the server keeps serving afterwards.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use tern::{
    routing::{get, post},
    App, Config,
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

/// Never answers: the request timeout is what ends it.
async fn slow() -> &'static str {
    std::future::pending::<()>().await;
    "late"
}

async fn boom() -> &'static str {
    panic!("boom")
}

fn app() -> App {
    App::new()
        .route("/", get(|| async { "ok" }))
        .route("/echo", post(|body: String| async move { body }))
        .route("/slow", get(slow))
        .route("/panic", get(boom))
        .route("/big", get(|| async { vec![b'x'; 16 * 1024 * 1024] }))
}

async fn spawn(config: Config) -> common::TestServer {
    common::spawn_with(app(), config).await
}

/// Reads one whole response (its body sized by Content-Length) from a
/// keep-alive connection, without waiting for the connection to go quiet.
async fn read_response(stream: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Some(end) = out.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&out[..end]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                if out.len() >= end + 4 + len {
                    return;
                }
            }
            let n = stream.read(&mut buf).await.expect("read");
            assert!(
                n > 0,
                "closed mid-response: {}",
                String::from_utf8_lossy(&out)
            );
            out.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("a whole response within 5 s");
    out
}

/// Waits for the server to close `stream`; returns how long it took, or
/// `None` if it stayed open for `limit`.
async fn time_to_close(stream: &mut TcpStream, limit: Duration) -> (Option<Duration>, Vec<u8>) {
    let start = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    let closed = tokio::time::timeout(limit, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    (closed.ok().map(|()| start.elapsed()), got)
}

/// The head of the first response in `bytes`, lower-cased.
fn head(bytes: &[u8]) -> String {
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase()
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).escape_debug().collect()
}

const QUIET: Duration = Duration::from_millis(1000);

#[tokio::test]
async fn a_head_over_max_head_bytes_gets_431() {
    let mut config = common::config();
    config.limits.max_head_bytes = 8192;
    let server = spawn(config).await;

    let fits = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(6 * 1024)
    );
    let got = common::raw(server.addr, fits.as_bytes(), QUIET).await;
    assert_eq!(common::statuses(&got), [200], "{}", show(&got));

    let over = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(20 * 1024)
    );
    let got = common::raw(server.addr, over.as_bytes(), QUIET).await;
    assert_eq!(common::statuses(&got), [431], "{}", show(&got));

    assert_eq!(common::get(&server, "/").await.status, 200);
}

#[tokio::test]
async fn more_headers_than_max_headers_gets_431() {
    let mut config = common::config();
    config.limits.max_headers = 10;
    let server = spawn(config).await;
    let with = |n: usize| {
        let extra: String = (0..n).map(|i| format!("X-H{i}: v\r\n")).collect();
        format!("GET / HTTP/1.1\r\nHost: x\r\n{extra}\r\n")
    };

    // Host and nine more: exactly the limit.
    let got = common::raw(server.addr, with(9).as_bytes(), QUIET).await;
    assert_eq!(common::statuses(&got), [200], "{}", show(&got));

    let got = common::raw(server.addr, with(20).as_bytes(), QUIET).await;
    assert_eq!(common::statuses(&got), [431], "{}", show(&got));

    assert_eq!(common::get(&server, "/").await.status, 200);
}

#[tokio::test]
async fn a_body_over_max_body_bytes_with_content_length_gets_413() {
    let mut config = common::config();
    config.limits.max_body_bytes = 1024;
    let server = spawn(config).await;
    let client = common::client();
    let post = |len: usize| {
        common::request("POST", &server.url("/echo"))
            .body(Full::new(Bytes::from("a".repeat(len))))
            .unwrap()
    };

    let res = common::send(&client, post(1024)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.body.len(), 1024);

    let res = common::send(&client, post(4096)).await;
    let doc = res.problem(413);
    assert!(doc["detail"].as_str().unwrap().contains("1024"), "{doc}");

    assert_eq!(common::get(&server, "/").await.status, 200);
}

#[tokio::test]
async fn a_chunked_body_over_max_body_bytes_gets_413_while_streaming() {
    let mut config = common::config();
    config.limits.max_body_bytes = 1024;
    let server = spawn(config).await;

    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        .await
        .unwrap();
    let chunk = format!("258\r\n{}\r\n", "a".repeat(600));
    for _ in 0..3 {
        stream.write_all(chunk.as_bytes()).await.unwrap();
    }
    // No final chunk: the answer has to come while the body is still open.
    let (got, _) = common::read_until_quiet(&mut stream, QUIET).await;
    assert_eq!(common::statuses(&got), [413], "{}", show(&got));
    assert!(
        head(&got).contains("content-type: application/problem+json"),
        "{}",
        show(&got)
    );

    assert_eq!(common::get(&server, "/").await.status, 200);
}

#[tokio::test]
async fn header_read_timeout_closes_a_slow_head() {
    let mut config = common::config();
    config.timeouts.header_read = Duration::from_millis(500);
    config.timeouts.keep_alive = Duration::from_secs(10);
    let server = spawn(config).await;

    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    let (closed, got) = time_to_close(&mut stream, Duration::from_secs(3)).await;
    let closed = closed.expect("the slow head's connection is still open after 3 s");
    assert!(
        (Duration::from_millis(400)..Duration::from_secs(2)).contains(&closed),
        "closed after {closed:?}"
    );
    // hyper closes without a response (no 408).
    assert!(got.is_empty(), "{}", show(&got));

    assert_eq!(common::get(&server, "/").await.status, 200);
}

#[tokio::test]
async fn header_read_timeout_closes_a_silent_connection() {
    let mut config = common::config();
    config.timeouts.header_read = Duration::from_millis(500);
    config.timeouts.keep_alive = Duration::from_secs(10);
    let server = spawn(config).await;

    // Nothing at all, and the first bytes of the HTTP/2 preface: both keep
    // the connection in hyper-util's protocol sniffing, before hyper's own
    // header timer runs.
    for sent in [&b""[..], b"PRI * HTTP/2.0\r\n"] {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream.write_all(sent).await.unwrap();
        let (closed, got) = time_to_close(&mut stream, Duration::from_secs(3)).await;
        let closed =
            closed.unwrap_or_else(|| panic!("sent {:?}: still open after 3 s", show(sent)));
        assert!(
            (Duration::from_millis(400)..Duration::from_secs(2)).contains(&closed),
            "sent {:?}: closed after {closed:?}",
            show(sent)
        );
        assert!(common::statuses(&got).is_empty(), "{}", show(&got));
    }

    assert_eq!(common::get(&server, "/").await.status, 200);
}

#[tokio::test]
async fn keep_alive_closes_an_idle_connection() {
    let mut config = common::config();
    config.timeouts.keep_alive = Duration::from_millis(500);
    config.timeouts.header_read = Duration::from_secs(10);
    let server = spawn(config).await;

    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let got = read_response(&mut stream).await;
    assert_eq!(common::statuses(&got), [200], "{}", show(&got));

    let (closed, got) = time_to_close(&mut stream, Duration::from_secs(3)).await;
    let closed = closed.expect("the idle connection is still open after 3 s");
    assert!(
        (Duration::from_millis(400)..Duration::from_secs(2)).contains(&closed),
        "closed after {closed:?}"
    );
    assert!(got.is_empty(), "{}", show(&got));
}

#[tokio::test]
async fn keep_alive_lets_a_busy_connection_live() {
    let mut config = common::config();
    config.timeouts.keep_alive = Duration::from_millis(500);
    config.timeouts.header_read = Duration::from_secs(10);
    let server = spawn(config).await;

    // Requests 300 ms apart for 1.2 s: never idle for the whole 500 ms.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    for _ in 0..4 {
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let got = read_response(&mut stream).await;
        assert_eq!(common::statuses(&got), [200], "{}", show(&got));
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // Then idle: closed about `keep_alive` after its last answer, though
    // the connection's timer was set for an earlier deadline while it was
    // busy (it fires early and is set again; not polled in between).
    let (closed, got) = time_to_close(&mut stream, Duration::from_secs(3)).await;
    let closed = closed.expect("the idle connection is still open after 3 s");
    assert!(
        (Duration::from_millis(100)..Duration::from_millis(1500)).contains(&closed),
        "closed {closed:?} after the last sleep (keep_alive 500 ms from the last answer)"
    );
    assert!(got.is_empty(), "{}", show(&got));
}

/// The two timeouts are independent: an idle keep-alive connection lives
/// for `keep_alive` even when `header_read` is shorter (hyper's own header
/// timer would cut it at `header_read`; Tern times heads itself), and a
/// request head that starts after the idle time must still arrive within
/// `header_read` (slowloris on a reused connection).
#[tokio::test]
async fn idle_keep_alive_and_header_read_are_independent() {
    let mut config = common::config();
    config.timeouts.keep_alive = Duration::from_millis(1500);
    config.timeouts.header_read = Duration::from_millis(300);
    let server = spawn(config).await;

    // Idle: closed after keep_alive, not after header_read.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let got = read_response(&mut stream).await;
    assert_eq!(common::statuses(&got), [200], "{}", show(&got));
    let (closed, _) = time_to_close(&mut stream, Duration::from_secs(4)).await;
    let closed = closed.expect("the idle connection is still open after 4 s");
    assert!(
        (Duration::from_millis(1200)..Duration::from_millis(3000)).contains(&closed),
        "closed after {closed:?}, expected about keep_alive (1.5 s)"
    );

    // Reused, then a slow head: closed after header_read from its first byte.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let got = read_response(&mut stream).await;
    assert_eq!(common::statuses(&got), [200], "{}", show(&got));
    tokio::time::sleep(Duration::from_millis(500)).await;
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let (closed, _) = time_to_close(&mut stream, Duration::from_secs(4)).await;
    let closed = closed.expect("the slow head is still open after 4 s");
    assert!(
        (Duration::from_millis(200)..Duration::from_millis(1200)).contains(&closed),
        "closed after {closed:?}, expected about header_read (300 ms)"
    );
}

#[tokio::test]
async fn request_timeout_answers_503_and_the_server_keeps_serving() {
    let mut config = common::config();
    config.timeouts.request = Duration::from_millis(300);
    let server = spawn(config).await;

    let start = Instant::now();
    let res = common::get(&server, "/slow").await;
    let took = start.elapsed();
    let doc = res.problem(503);
    assert!(took < Duration::from_secs(2), "503 after {took:?}");
    assert!(doc["detail"].as_str().unwrap().contains("300 ms"), "{doc}");

    let res = common::get(&server, "/").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.text(), "ok");
}

#[tokio::test]
async fn max_connections_refuses_the_one_too_many() {
    let mut config = common::config();
    config.limits.max_connections = 2;
    let server = spawn(config).await;

    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let got = read_response(&mut stream).await;
        assert_eq!(common::statuses(&got), [200], "{}", show(&got));
        held.push(stream);
    }

    // The third is accepted by the kernel, then closed by Tern unanswered.
    let mut third = TcpStream::connect(server.addr).await.unwrap();
    let _ = third.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
    let (closed, got) = time_to_close(&mut third, Duration::from_secs(2)).await;
    assert!(closed.is_some(), "the third connection was kept open");
    assert!(
        got.is_empty(),
        "the third connection was answered: {}",
        show(&got)
    );

    // The two held connections still work.
    for stream in &mut held {
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let got = read_response(stream).await;
        assert_eq!(common::statuses(&got), [200], "{}", show(&got));
    }

    // Once one closes, its slot is free again (the server notices the close
    // asynchronously: retry for a moment).
    drop(held.pop());
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let got = common::raw(
            server.addr,
            b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            QUIET,
        )
        .await;
        if common::statuses(&got) == [200] {
            break;
        }
        assert!(got.is_empty(), "{}", show(&got));
        assert!(Instant::now() < deadline, "no slot freed 3 s after a close");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_panicking_handler_gets_500_and_the_server_keeps_serving() {
    let server = spawn(common::config()).await;

    let res = common::get(&server, "/panic").await;
    let doc = res.problem(500);
    assert!(doc["detail"].as_str().unwrap().contains("boom"), "{doc}");

    let res = common::get(&server, "/").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.text(), "ok");
}

#[tokio::test]
async fn a_client_that_stops_reading_is_dropped_at_the_write_timeout() {
    let mut config = common::config();
    config.timeouts.write = Duration::from_millis(300);
    let server = spawn(config).await;

    // A small receive buffer and no reads: the 16 MiB answer stalls.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(&server.addr.into()).unwrap();
    socket.set_nonblocking(true).unwrap();
    let mut stream = TcpStream::from_std(socket.into()).unwrap();
    stream
        .write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;

    // Now read: what was buffered arrives, then the close, well short of
    // the whole body.
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut got)).await;
    assert!(
        read.is_ok(),
        "the stalled connection is still open after the write timeout"
    );
    assert!(
        got.len() < 16 * 1024 * 1024,
        "the whole body arrived ({} bytes): the connection was not cut",
        got.len()
    );
    // The server keeps serving others.
    let mut other = TcpStream::connect(server.addr).await.unwrap();
    other
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let res = read_response(&mut other).await;
    assert_eq!(common::statuses(&res), [200], "{}", show(&res));
}

#[tokio::test]
async fn a_slow_but_steady_reader_gets_the_whole_response() {
    let mut config = common::config();
    config.timeouts.write = Duration::from_millis(500);
    let server = spawn(config).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    // Reads in small pieces with pauses shorter than the write timeout.
    let mut total = 0usize;
    let mut buf = vec![0u8; 1024 * 1024];
    loop {
        let n = stream.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        total += n;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(total > 16 * 1024 * 1024, "read {total} bytes");
}

/// Sets its flag when the response stream that owns it is dropped.
struct DroppedFlag(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for DroppedFlag {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_client_leaving_mid_response_costs_only_that_response() {
    use std::sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    };
    let dropped = Arc::new(AtomicBool::new(false));
    let produced = Arc::new(AtomicU64::new(0));
    let (d, p) = (Arc::clone(&dropped), Arc::clone(&produced));
    // An endless body (an enormous response), produced as it is read.
    let app = App::new().route("/", get(|| async { "ok" })).route(
        "/endless",
        get(move || {
            let (d, p) = (Arc::clone(&d), Arc::clone(&p));
            async move {
                let flag = DroppedFlag(d);
                tern::response::StreamResponse::new(futures_util::stream::unfold(
                    (flag, p),
                    |(flag, p)| async move {
                        p.fetch_add(1, Ordering::SeqCst);
                        Some((Ok::<_, std::io::Error>(vec![b'x'; 64 * 1024]), (flag, p)))
                    },
                ))
            }
        }),
    );
    let server = common::spawn_with(app, common::config()).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET /endless HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut read = 0;
    while read < 4 * 1024 * 1024 {
        read += stream.read(&mut buf).await.unwrap();
    }
    drop(stream);
    // The server notices, drops the body (and its producer) and stops.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !dropped.load(Ordering::SeqCst) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        dropped.load(Ordering::SeqCst),
        "the endless body was not dropped"
    );
    let after = produced.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(produced.load(Ordering::SeqCst), after, "still producing");
    // And everyone else is served as before.
    let mut other = TcpStream::connect(server.addr).await.unwrap();
    other
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let res = read_response(&mut other).await;
    assert_eq!(common::statuses(&res), [200], "{}", show(&res));
}
