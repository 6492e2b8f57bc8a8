//! The HTTP/1.1 connection's behaviours over a real socket, on whichever
//! engine `TERN_HTTP1` names (`.ci/run` runs this file on both): bodies
//! of every framing however the client splits them, `100 Continue`,
//! trailers, streamed answers to HTTP/1.1 and HTTP/1.0, a body the
//! handler leaves unread, pipelined batches, and the answer to a request
//! the client half-closes after.

#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::TestServer;
use futures_util::{stream, StreamExt as _};
use tern::{
    body::Body,
    routing::{get, post},
    App, Request, Response,
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

/// Echoes the body, then the request's trailers as `name=value` lines.
async fn echo(req: Request) -> Response {
    use http_body_util::BodyExt;
    let collected = match req.into_body().collect().await {
        Ok(c) => c,
        Err(e) => {
            return Response::new(Body::from(format!("body error: {e}")));
        }
    };
    let trailers = collected.trailers().cloned();
    let mut out = collected.to_bytes().to_vec();
    if let Some(t) = trailers {
        for (name, value) in &t {
            out.extend_from_slice(format!("\n{}={}", name, value.to_str().unwrap()).as_bytes());
        }
    }
    Response::new(Body::from(out))
}

/// Three chunks of unknown total length, streamed.
async fn streamed() -> Response {
    let parts = ["one ", "two ", "three"]
        .map(|s| Ok::<_, std::io::Error>(http_body::Frame::data(Bytes::from_static(s.as_bytes()))));
    Response::new(Body::new(http_body_util::StreamBody::new(stream::iter(
        parts,
    ))))
}

/// 300 KB whole, then 3 streamed frames of 40 KB: data above the
/// writer's copy limit goes out beside the write buffer.
async fn big() -> Response {
    Response::new(Body::from(pattern(300_000)))
}

async fn big_stream() -> Response {
    let frames = [0u8, 1, 2].map(|i| {
        let mut frame = pattern(40_000);
        frame[0] = b'A' + i;
        Ok::<_, std::io::Error>(http_body::Frame::data(Bytes::from(frame)))
    });
    Response::new(Body::new(http_body_util::StreamBody::new(stream::iter(
        frames,
    ))))
}

/// A body that never ends (an event stream's shape).
async fn endless() -> Response {
    let frames = stream::repeat_with(|| {
        Ok::<_, std::io::Error>(http_body::Frame::data(Bytes::from_static(b"tick\n")))
    })
    .then(|frame| async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        frame
    });
    Response::new(Body::new(http_body_util::StreamBody::new(frames)))
}

/// Answers at once and reads the body on a task of its own; the lengths
/// it read are reported in `READ`.
static READ: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

async fn spawned(req: Request) -> &'static str {
    use http_body_util::BodyExt;
    tokio::spawn(async move {
        let n = req
            .into_body()
            .collect()
            .await
            .map_or(0, |b| b.to_bytes().len());
        READ.lock().unwrap().push(n);
    });
    "spawned"
}

/// How many of the `/slow` handlers and `/guarded` bodies were dropped.
static DROPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A handler that takes a minute.
async fn slow() -> &'static str {
    let _guard = Guard;
    tokio::time::sleep(Duration::from_secs(60)).await;
    "late"
}

/// An endless body (an event stream's shape) that counts its drop.
async fn guarded() -> Response {
    let guard = Guard;
    let frames = stream::repeat_with(|| {
        Ok::<_, std::io::Error>(http_body::Frame::data(Bytes::from_static(b"tick\n")))
    })
    .then(move |frame| {
        let _keep = &guard;
        async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            frame
        }
    });
    Response::new(Body::new(http_body_util::StreamBody::new(frames)))
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

fn app() -> App {
    App::new()
        .route("/big", get(big))
        .route("/big-stream", get(big_stream))
        .route("/endless", get(endless))
        .route("/slow", get(slow))
        .route("/guarded", get(guarded))
        .route("/spawned", post(spawned))
        .route("/echo", post(echo))
        .route("/stream", get(streamed))
        .route("/ignore", post(|| async { "ignored" }))
        .route("/", get(|| async { "home" }))
}

async fn spawn() -> TestServer {
    common::spawn(app()).await
}

/// Writes `bytes` split at `cuts`, pausing between pieces, then reads
/// until the server closes or is quiet for 400 ms.
async fn exchange(server: &TestServer, bytes: &[u8], cuts: &[usize]) -> (String, bool) {
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let mut at = 0;
    for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
        stream.write_all(&bytes[at..cut]).await.unwrap();
        at = cut;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    read_until_quiet(&mut stream, Duration::from_millis(400)).await
}

async fn read_until_quiet(stream: &mut TcpStream, quiet: Duration) -> (String, bool) {
    let mut out = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match tokio::time::timeout(quiet, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&out).into_owned(), true),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&out).into_owned(), false),
        }
    }
}

/// The bodies of the answers in `text` (each framed by content-length).
fn bodies(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some((head, after)) = rest.split_once("\r\n\r\n") {
        let len = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .map_or(0, |n| n.parse::<usize>().unwrap());
        out.push(after[..len].to_owned());
        rest = &after[len..];
    }
    out
}

#[tokio::test]
async fn bodies_of_every_framing_arrive_whole_however_they_are_split() {
    let server = spawn().await;
    let cases: [(&str, &[u8], &str); 3] = [
        (
            "content-length",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 11\r\n\r\nhello world",
            "hello world",
        ),
        (
            "chunked with an extension and trailers",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n\
              5;a=b\r\nhello\r\n6\r\n world\r\n0\r\nx-sum: 11\r\n\r\n",
            "hello world\nx-sum=11",
        ),
        (
            "chunked, no trailers",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n\
              1\r\nh\r\na\r\nello world\r\n0\r\n\r\n",
            "hello world",
        ),
    ];
    for (name, bytes, want) in cases {
        // Whole, split at every offset of the body's part, and byte by
        // byte at the head/body boundary.
        let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let mut splits: Vec<Vec<usize>> = vec![vec![], vec![head_end]];
        splits.extend(
            (head_end + 1..bytes.len())
                .step_by(3)
                .map(|c| vec![head_end, c]),
        );
        splits.push((head_end - 2..bytes.len()).collect());
        for cuts in splits {
            let (text, closed) = exchange(&server, bytes, &cuts).await;
            assert!(closed, "{name} {cuts:?}: {text}");
            assert!(text.starts_with("HTTP/1.1 200 "), "{name} {cuts:?}: {text}");
            assert_eq!(bodies(&text), [want], "{name} {cuts:?}: {text}");
        }
    }
}

#[tokio::test]
async fn expect_100_continue_is_answered_before_the_body_is_sent() {
    let server = spawn().await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
        )
        .await
        .unwrap();
    let (interim, closed) = read_until_quiet(&mut stream, Duration::from_millis(300)).await;
    assert_eq!(interim, "HTTP/1.1 100 Continue\r\n\r\n");
    assert!(!closed);
    stream.write_all(b"hello").await.unwrap();
    let (text, _) = read_until_quiet(&mut stream, Duration::from_millis(300)).await;
    assert!(text.starts_with("HTTP/1.1 200 "), "{text}");
    assert_eq!(bodies(&text), ["hello"]);
    // A handler that never reads gets no `100` sent for it: its answer,
    // and the connection closes (the client may or may not send).
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(
            b"POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
        )
        .await
        .unwrap();
    let (text, _) = read_until_quiet(&mut stream, Duration::from_millis(300)).await;
    assert!(text.starts_with("HTTP/1.1 200 "), "{text}");
    assert!(!text.contains("100 Continue"), "{text}");
    assert_eq!(bodies(&text), ["ignored"]);
}

#[tokio::test]
async fn a_streamed_answer_is_chunked_to_1_1_and_close_delimited_to_1_0() {
    let server = spawn().await;
    let (text, _) = exchange(
        &server,
        b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
        &[],
    )
    .await;
    assert!(text.contains("transfer-encoding: chunked"), "{text}");
    assert!(
        text.contains("\r\n\r\n4\r\none \r\n4\r\ntwo \r\n5\r\nthree\r\n0\r\n\r\nHTTP/1.1 200 OK"),
        "{text}"
    );
    assert!(text.ends_with("home"), "{text}");

    let (text, closed) = exchange(
        &server,
        b"GET /stream HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
        &[],
    )
    .await;
    assert!(text.starts_with("HTTP/1.0 200 OK"), "{text}");
    assert!(!text.contains("transfer-encoding"), "{text}");
    assert!(text.ends_with("\r\n\r\none two three"), "{text}");
    assert!(closed, "a close-delimited answer ends with the connection");
}

#[tokio::test]
async fn a_body_left_unread_closes_the_connection_unless_it_was_all_read() {
    let server = spawn().await;
    // All of it arrived with the head: dropped, and the next request is
    // served on the same connection.
    let (text, closed) = exchange(
        &server,
        b"POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nHost: x\r\n\r\n",
        &[],
    )
    .await;
    assert_eq!(bodies(&text), ["ignored", "home"], "{text}");
    assert!(!closed);
    // Most of it still to come: the answer, then the close; what follows
    // is never read as a request.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc")
        .await
        .unwrap();
    let (text, closed) = read_until_quiet(&mut stream, Duration::from_millis(500)).await;
    assert_eq!(bodies(&text), ["ignored"], "{text}");
    assert!(closed, "{text}");
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order_then_the_half_closed_end() {
    let server = spawn().await;
    let mut batch = Vec::new();
    for i in 0..20 {
        if i % 2 == 0 {
            batch.extend_from_slice(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        } else {
            batch.extend_from_slice(
                format!("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{i:02}")
                    .as_bytes(),
            );
        }
    }
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(&batch).await.unwrap();
    // The client says it sends no more: every request still gets its
    // answer, then the connection closes.
    stream.shutdown().await.unwrap();
    let (text, closed) = read_until_quiet(&mut stream, Duration::from_secs(2)).await;
    let want: Vec<String> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                "home".to_owned()
            } else {
                format!("{i:02}")
            }
        })
        .collect();
    assert_eq!(bodies(&text), want, "{text}");
    assert!(closed);
}

#[tokio::test]
async fn large_answers_arrive_whole_in_order_to_a_slow_reader() {
    let server = spawn().await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(
            b"GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /big-stream HTTP/1.1\r\nHost: x\r\n\r\n\
              GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .await
        .unwrap();
    // Read slowly at first, so that the server's writes block.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .expect("the answers keep coming")
            .unwrap();
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8(out).unwrap();
    let whole = String::from_utf8(pattern(300_000)).unwrap();
    let (first, rest) = text.split_once("\r\n\r\n").unwrap();
    assert!(first.starts_with("HTTP/1.1 200 ") && first.contains("content-length: 300000"));
    assert!(rest.starts_with(&whole));
    let rest = &rest[whole.len()..];
    let (second, rest) = rest.split_once("\r\n\r\n").unwrap();
    assert!(second.contains("transfer-encoding: chunked"), "{second}");
    // Three chunks of 40,000 bytes (9c40 in hex), then the last chunk.
    let mut rest = rest;
    for i in 0..3u8 {
        // (hex digits in either case: hyper writes `9C40`)
        let chunk = rest
            .strip_prefix("9c40\r\n")
            .or_else(|| rest.strip_prefix("9C40\r\n"))
            .expect("a chunk of 40000 bytes");
        assert_eq!(chunk.as_bytes()[0], b'A' + i);
        assert_eq!(
            &chunk[1..40_000],
            &String::from_utf8(pattern(40_000)).unwrap()[1..]
        );
        rest = chunk[40_000..].strip_prefix("\r\n").unwrap();
    }
    let rest = rest.strip_prefix("0\r\n\r\n").unwrap();
    let (third, body) = rest.split_once("\r\n\r\n").unwrap();
    assert!(third.contains("connection: close"), "{third}");
    assert_eq!(body, whole);
}

#[tokio::test]
async fn a_head_request_never_waits_for_its_body() {
    let server = spawn().await;
    // HEAD of an endless stream: the head only, and the next request is
    // served on the same connection.
    let (text, closed) = exchange(
        &server,
        b"HEAD /endless HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        &[],
    )
    .await;
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(!text.contains("tick"), "{text}");
    assert!(text.ends_with("\r\n\r\nhome"), "{text}");
    assert!(closed);
}

#[tokio::test]
async fn a_body_read_on_another_task_after_the_answer_is_fed_whole() {
    let server = spawn().await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"POST /spawned HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello")
        .await
        .unwrap();
    let (text, closed) = read_until_quiet(&mut stream, Duration::from_millis(300)).await;
    assert_eq!(bodies(&text), ["spawned"], "{text}");
    assert!(!closed);
    // The rest of the body, then the next request on the same connection.
    stream
        .write_all(b"worldGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let (text, closed) = read_until_quiet(&mut stream, Duration::from_secs(2)).await;
    assert_eq!(bodies(&text), ["home"], "{text}");
    assert!(closed);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        READ.lock().unwrap().contains(&10),
        "{:?}",
        READ.lock().unwrap()
    );
}

/// A client that closes its connection while the handler works, or while
/// an endless answer waits for its next frame, cancels them: the handler's
/// future and the body are dropped at once (not when a write would fail,
/// which for an event stream may be many seconds away), as hyper's server
/// does.
#[tokio::test]
async fn a_client_that_leaves_cancels_its_handler_and_its_endless_answer() {
    use std::sync::atomic::Ordering;
    let server = spawn().await;
    let before = DROPPED.load(Ordering::SeqCst);
    for (path, head_first) in [("/slow", false), ("/guarded", true)] {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        if head_first {
            // The answer's head arrives; its body waits.
            let mut buf = [0u8; 1024];
            let n = stream.read(&mut buf).await.unwrap();
            assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{:?}", &buf[..n]);
        } else {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        drop(stream);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while DROPPED.load(Ordering::SeqCst) < before + 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "{} of 2 dropped",
            DROPPED.load(Ordering::SeqCst) - before
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
