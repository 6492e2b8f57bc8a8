//! The engine over real sockets: keep-alive, pipelining, HTTP/2 by prior
//! knowledge (hyper's client and curl), exact `Content-Length`, streaming,
//! `HEAD`, graceful shutdown with requests in flight.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use bytes::Bytes;
use common::{read_until_quiet, request, send, statuses};
use futures_util::stream;
use http_body_util::Full;
use tern::{
    extract::Path,
    response::StreamResponse,
    routing::{get, post},
    App,
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

fn app() -> App {
    App::new()
        .route("/", get(|| async { "Hello, World!" }))
        .route(
            "/echo/{word}",
            get(|Path(w): Path<String>| async move { w }),
        )
        .route(
            "/upload",
            post(|body: Bytes| async move { body.len().to_string() }),
        )
        .route(
            "/stream",
            get(|| async {
                StreamResponse::new(stream::iter(
                    ["one ", "two ", "three"].map(Ok::<_, std::io::Error>),
                ))
                .content_type("text/plain")
            }),
        )
        .route(
            "/ticks",
            get(|| async {
                // Five chunks 100 ms apart.
                StreamResponse::new(stream::unfold(0u32, |i| async move {
                    if i == 5 {
                        return None;
                    }
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Some((Ok::<_, std::io::Error>(format!("tick{i} ")), i + 1))
                }))
                .content_type("text/plain")
            }),
        )
        .route(
            "/slow/{ms}",
            get(|Path(ms): Path<u64>| async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                format!("slept {ms}")
            }),
        )
}

#[tokio::test]
async fn keep_alive_reuses_one_connection() {
    let server = common::spawn(app()).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    for word in ["first", "second", "third"] {
        let req = format!("GET /echo/{word} HTTP/1.1\r\nHost: t\r\n\r\n");
        stream.write_all(req.as_bytes()).await.unwrap();
        let (bytes, closed) = read_until_quiet(&mut stream, Duration::from_millis(300)).await;
        let text = String::from_utf8_lossy(&bytes);
        assert!(!closed, "the server closed a keep-alive connection");
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert!(text.ends_with(word), "{text}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let server = common::spawn(app()).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let mut batch = String::new();
    let words: Vec<String> = (0..16).map(|i| format!("w{i:02}")).collect();
    for w in &words {
        batch.push_str(&format!("GET /echo/{w} HTTP/1.1\r\nHost: t\r\n\r\n"));
    }
    // One write with sixteen requests, as TechEmpower's pipeline test does.
    stream.write_all(batch.as_bytes()).await.unwrap();
    let (bytes, _) = read_until_quiet(&mut stream, Duration::from_millis(500)).await;
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(statuses(&bytes), vec![200; 16], "{text}");
    let mut last = 0;
    for w in &words {
        let at = text[last..]
            .find(w.as_str())
            .unwrap_or_else(|| panic!("{w} missing or out of order: {text}"));
        last += at + w.len();
    }
    server.shutdown().await;
}

#[tokio::test]
async fn pipelined_answers_do_not_wait_for_a_slow_one_or_a_stream() {
    // Answers to a pipelined batch are written together (one write), but
    // never held for a request that does not answer at once.
    let server = common::spawn(app()).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(
            b"GET /echo/first HTTP/1.1\r\nHost: t\r\n\r\n\
              GET /slow/600 HTTP/1.1\r\nHost: t\r\n\r\n\
              GET /ticks HTTP/1.1\r\nHost: t\r\n\r\n\
              GET /echo/last HTTP/1.1\r\nHost: t\r\n\r\n",
        )
        .await
        .unwrap();
    let sent = tokio::time::Instant::now();
    // Everything that arrives until `at` after the batch was sent.
    async fn read_until(stream: &mut TcpStream, at: tokio::time::Instant) -> String {
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(Ok(n)) = tokio::time::timeout_at(at, stream.read(&mut buf)).await {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    let text = read_until(&mut stream, sent + Duration::from_millis(300)).await;
    assert!(text.contains("first") && !text.contains("slept"), "{text}");
    // At 600 ms the slow answer, then the stream's first chunk at once,
    // while a request waits behind the stream (its last chunk at 1 s).
    let text = read_until(&mut stream, sent + Duration::from_millis(800)).await;
    assert!(
        text.contains("slept 600") && text.contains("tick0"),
        "{text}"
    );
    assert!(!text.contains("tick4") && !text.contains("last"), "{text}");
    let (bytes, _) = read_until_quiet(&mut stream, Duration::from_millis(500)).await;
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("tick4") && text.ends_with("last"), "{text}");
    server.shutdown().await;
}

#[tokio::test]
async fn http2_prior_knowledge_with_hyper_client() {
    let server = common::spawn(app()).await;
    let client = common::h2_client();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let client = client.clone();
        let url = server.url(&format!("/echo/h2-{i}"));
        tasks.push(tokio::spawn(async move {
            send(&client, request("GET", &url).body(Full::default()).unwrap()).await
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        let res = task.await.unwrap();
        assert_eq!(res.status, 200);
        assert_eq!(res.text(), format!("h2-{i}"));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn http2_prior_knowledge_with_curl() {
    let server = common::spawn(app()).await;
    let url = server.url("/");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("curl")
            .args([
                "-s",
                "--http2-prior-knowledge",
                "-w",
                "\n%{http_version} %{http_code}",
                &url,
            ])
            .output()
    })
    .await
    .unwrap();
    match out {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(text, "Hello, World!\n2 200", "curl said: {text}");
        }
        Err(e) => tern::test::skip(&format!("curl is not installed ({e})")),
    }
    server.shutdown().await;
}

#[tokio::test]
async fn fixed_bodies_have_content_length_and_streams_are_chunked() {
    let server = common::spawn(app()).await;
    let fixed = common::raw(
        server.addr,
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        Duration::from_secs(2),
    )
    .await;
    let fixed = String::from_utf8_lossy(&fixed).to_ascii_lowercase();
    assert!(fixed.contains("content-length: 13\r\n"), "{fixed}");
    assert!(!fixed.contains("transfer-encoding"), "{fixed}");
    assert!(fixed.contains("\r\ndate: "), "{fixed}");

    let streamed = common::raw(
        server.addr,
        b"GET /stream HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        Duration::from_secs(2),
    )
    .await;
    let streamed = String::from_utf8_lossy(&streamed).to_ascii_lowercase();
    assert!(
        streamed.contains("transfer-encoding: chunked"),
        "{streamed}"
    );
    let res = common::get(&server, "/stream").await;
    assert_eq!(res.text(), "one two three");
    server.shutdown().await;
}

#[tokio::test]
async fn head_is_answered_by_get_without_a_body() {
    let server = common::spawn(app()).await;
    let bytes = common::raw(
        server.addr,
        b"HEAD / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        Duration::from_secs(2),
    )
    .await;
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("content-length: 13"),
        "{text}"
    );
    assert!(
        text.ends_with("\r\n\r\n"),
        "a HEAD response carried a body: {text}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn request_bodies_are_read() {
    let server = common::spawn(app()).await;
    let body = vec![b'x'; 100_000];
    let res = send(
        &common::client(),
        request("POST", &server.url("/upload"))
            .body(Full::new(Bytes::from(body)))
            .unwrap(),
    )
    .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.text(), "100000");
    server.shutdown().await;
}

#[tokio::test]
async fn graceful_shutdown_lets_in_flight_requests_finish() {
    // A handler that says when a request has reached it, then holds it
    // until the test lets it go.
    let (entered_tx, mut entered) = tokio::sync::mpsc::unbounded_channel::<()>();
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let held = get({
        let release = Arc::clone(&release);
        move || {
            let (entered_tx, release) = (entered_tx.clone(), Arc::clone(&release));
            async move {
                let _ = entered_tx.send(());
                let _permit = release.acquire().await.unwrap();
                "released"
            }
        }
    });
    let mut server = common::spawn(app().route("/held", held)).await;
    let client = common::client();
    let done = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let client = client.clone();
        let url = server.url("/held");
        let done = Arc::clone(&done);
        tasks.push(tokio::spawn(async move {
            let res = send(&client, request("GET", &url).body(Full::default()).unwrap()).await;
            assert_eq!(res.status, 200);
            assert_eq!(res.text(), "released");
            done.fetch_add(1, Ordering::SeqCst);
        }));
    }
    // Once every request is in its handler, ask the server to stop.
    for _ in 0..8 {
        tokio::time::timeout(Duration::from_secs(10), entered.recv())
            .await
            .expect("the requests reached their handler")
            .unwrap();
    }
    let addr = server.addr;
    server.begin_shutdown();
    // The shutdown has begun (the listener is closed), and only then do
    // the handlers finish.
    until_not_listening(addr).await;
    release.add_permits(8);
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(
        done.load(Ordering::SeqCst),
        8,
        "every in-flight request completed"
    );
    server.join().await;
    // Stopped: nothing listens any more.
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
}

/// Returns once nothing listens on `addr`: the server closes its listener
/// when its shutdown begins, and tells its connections at the same step.
async fn until_not_listening(addr: std::net::SocketAddr) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(addr).await.is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "still listening 10 s after the shutdown began"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn graceful_shutdown_closes_idle_keep_alive_connections() {
    let mut server = common::spawn(app()).await;
    let mut idle = TcpStream::connect(server.addr).await.unwrap();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let (first, closed) = read_until_quiet(&mut idle, Duration::from_millis(300)).await;
    assert!(!closed && first.starts_with(b"HTTP/1.1 200"));
    // Another that served a few requests first (its wait polls the stop
    // signal only when the signal changed).
    let mut busy = TcpStream::connect(server.addr).await.unwrap();
    for _ in 0..5 {
        busy.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            .await
            .unwrap();
        let (answer, closed) = read_until_quiet(&mut busy, Duration::from_millis(200)).await;
        assert!(!closed && answer.starts_with(b"HTTP/1.1 200"));
    }
    server.begin_shutdown();
    let (_, closed) = read_until_quiet(&mut idle, Duration::from_secs(3)).await;
    assert!(closed, "the idle connection was closed at shutdown");
    let (_, closed) = read_until_quiet(&mut busy, Duration::from_secs(3)).await;
    assert!(
        closed,
        "the connection that served requests was closed at shutdown"
    );
    server.join().await;
}

/// A client that sends its next request on a keep-alive connection just as
/// the server begins to shut down is answered (with `Connection: close`),
/// not cut off: closing an idle connection at once would race with
/// requests already on the wire.
#[tokio::test]
async fn a_request_racing_the_shutdown_on_a_keep_alive_connection_is_answered() {
    let mut server = common::spawn(app()).await;
    let mut conn = TcpStream::connect(server.addr).await.unwrap();
    conn.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let (first, closed) = read_until_quiet(&mut conn, Duration::from_millis(300)).await;
    assert!(!closed && first.starts_with(b"HTTP/1.1 200"));
    server.begin_shutdown();
    until_not_listening(server.addr).await;
    conn.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let (second, closed) = read_until_quiet(&mut conn, Duration::from_secs(3)).await;
    let text = String::from_utf8_lossy(&second).to_ascii_lowercase();
    assert!(text.starts_with("http/1.1 200"), "{text}");
    assert!(text.contains("connection: close"), "{text}");
    assert!(closed, "the connection closes after the answer");
    server.join().await;
}

/// Upgraded connections (WebSockets later) take part in the drain: a
/// handler holds a `DrainGuard` for the connection's life and says goodbye
/// when the server signals shutdown; the server waits for it.
#[tokio::test]
async fn upgraded_connections_take_part_in_the_drain() {
    use tern::{IntoResponse, Request, Shutdown, StatusCode};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt as _, BufReader};

    async fn upgrade(shutdown: Shutdown, mut req: Request) -> tern::Response {
        let guard = shutdown.guard();
        // `tern::upgrade`, not `hyper::upgrade`: it works on both HTTP/1
        // engines (`TERN_HTTP1`).
        let on_upgrade = tern::upgrade::on(&mut req);
        tokio::spawn(async move {
            let _guard = guard;
            let Ok(upgraded) = on_upgrade.await else {
                return;
            };
            let (read, mut write) = tokio::io::split(upgraded);
            let mut lines = BufReader::new(read).lines();
            loop {
                tokio::select! {
                    line = lines.next_line() => match line {
                        Ok(Some(line)) => { let _ = write.write_all(format!("echo {line}\n").as_bytes()).await; }
                        _ => return,
                    },
                    () = shutdown.signaled() => {
                        // Let the test see the server wait for us.
                        tokio::time::sleep(Duration::from_millis(300)).await;
                        let _ = write.write_all(b"bye\n").await;
                        let _ = write.shutdown().await;
                        return;
                    }
                }
            }
        });
        let mut res = StatusCode::SWITCHING_PROTOCOLS.into_response();
        res.headers_mut()
            .insert("connection", http::HeaderValue::from_static("upgrade"));
        res.headers_mut()
            .insert("upgrade", http::HeaderValue::from_static("line-echo"));
        res
    }

    let mut server = common::spawn(App::new().route("/echo", get(upgrade))).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(
            b"GET /echo HTTP/1.1\r\nHost: t\r\nConnection: upgrade\r\nUpgrade: line-echo\r\n\r\n",
        )
        .await
        .unwrap();
    let (head, _) = read_until_quiet(&mut stream, Duration::from_millis(300)).await;
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    stream.write_all(b"hello\n").await.unwrap();
    let (echo, _) = read_until_quiet(&mut stream, Duration::from_millis(300)).await;
    assert_eq!(echo, b"echo hello\n");

    let started = std::time::Instant::now();
    server.begin_shutdown();
    let (bye, closed) = read_until_quiet(&mut stream, Duration::from_secs(5)).await;
    assert_eq!(bye, b"bye\n");
    assert!(closed);
    server.join().await;
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the server waited for the guard"
    );
}
