//! WebSockets over real sockets: the handshake and its refusals, echo,
//! limits (1009, 1007, 1002), heartbeats and the idle timeout, a client
//! that stops reading, the connection limit, the drain's 1001; and the
//! in-process test client.
#![allow(clippy::unwrap_used, missing_docs)]

use std::{net::SocketAddr, time::Duration};

use futures_util::{SinkExt, StreamExt};
use tern::{routing::get, test::TestClient, App, Config, Response};
use tern_realtime::{
    close_code,
    testing::{Received, WebSocketClient as _},
    Message, WebSocketErrorKind, WebSocketUpgrade, WebSockets,
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::{mpsc, oneshot},
};
use tokio_tungstenite::tungstenite::{
    self,
    client::IntoClientRequest,
    protocol::{
        frame::{
            coding::{Data, OpCode},
            Frame,
        },
        CloseFrame,
    },
};

async fn echo(ws: WebSocketUpgrade) -> Response {
    ws.protocols(["chat.v2", "chat.v1"])
        .on_upgrade(|mut socket| async move {
            while let Some(Ok(message)) = socket.recv().await {
                if socket.send(message).await.is_err() {
                    break;
                }
            }
        })
}

fn app(report: Option<mpsc::UnboundedSender<String>>) -> App {
    App::new()
        .settings::<WebSockets>("websocket")
        .route("/echo", get(echo))
        .route(
            "/flood",
            get(move |ws: WebSocketUpgrade| {
                let report = report.clone();
                async move {
                    ws.on_upgrade(move |mut socket| async move {
                        // Sends until the client's refusal to read fails it.
                        let chunk = Message::binary(vec![7u8; 32 * 1024]);
                        let outcome = loop {
                            if let Err(e) = socket.send(chunk.clone()).await {
                                break format!("{:?}", e.kind());
                            }
                        };
                        if let Some(report) = report {
                            let _ = report.send(outcome);
                        }
                    })
                }
            }),
        )
}

struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start(settings: &[(&str, &str)], report: Option<mpsc::UnboundedSender<String>>) -> Server {
    // `TERN_HTTP1` in the environment chooses the HTTP/1 engine (`.ci/run`
    // runs these tests on both).
    let engine = std::env::var("TERN_HTTP1").unwrap_or_default();
    let engine = (!engine.is_empty()).then_some(("TERN_HTTP1", engine.as_str()));
    let config = Config::from_settings(settings.iter().copied().chain(engine)).unwrap();
    let service = app(report).build_with(config).unwrap();
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
        stop: Some(tx),
        done,
    }
}

impl Server {
    fn url(&self, path: &str) -> String {
        format!("ws://{}{path}", self.addr)
    }

    /// The raw answer to a handshake request with these extra headers.
    async fn raw(&self, head: &str) -> String {
        let mut s = TcpStream::connect(self.addr).await.unwrap();
        s.write_all(head.as_bytes()).await.unwrap();
        let mut buf = vec![0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}

fn handshake(addr: SocketAddr, extra: &str) -> String {
    format!(
        "GET /echo HTTP/1.1\r\nHost: {addr}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
    )
}

#[tokio::test]
async fn the_handshake_echo_and_every_refusal() {
    let server = start(&[("WEBSOCKET_ORIGINS", "https://app.example.com")], None).await;
    let addr = server.addr;

    // RFC 6455's example key gives its example accept value.
    let ok = server
        .raw(&handshake(
            addr,
            "Sec-WebSocket-Protocol: chat.v1, chat.v2\r\n",
        ))
        .await;
    assert!(ok.starts_with("HTTP/1.1 101"), "{ok}");
    let lower = ok.to_lowercase();
    assert!(
        lower.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="),
        "{ok}"
    );
    assert!(lower.contains("sec-websocket-protocol: chat.v1"), "{ok}");

    for (head, status, says) in [
        (
            format!("GET /echo HTTP/1.1\r\nHost: {addr}\r\n\r\n"),
            "426",
            "upgrade: websocket",
        ),
        (
            handshake(addr, "").replace("Version: 13", "Version: 8"),
            "426",
            "sec-websocket-version: 13",
        ),
        (
            handshake(addr, "").replace("dGhlIHNhbXBsZSBub25jZQ==", "short"),
            "400",
            "sec-websocket-key",
        ),
        (
            handshake(addr, "Origin: https://evil.example\r\n"),
            "403",
            "websocket_origins",
        ),
        (
            handshake(addr, "Origin: http://127.0.0.2:1\r\n"),
            "403",
            "origin",
        ),
    ] {
        let answer = server.raw(&head).await.to_lowercase();
        assert!(
            answer.starts_with(&format!("http/1.1 {status}")),
            "{head}: {answer}"
        );
        assert!(answer.contains("application/problem+json"), "{answer}");
        assert!(answer.contains(says), "{head}: {answer}");
    }
    // Same site, and a listed site, are accepted.
    for origin in [
        format!("http://{addr}"),
        "https://app.example.com".to_owned(),
    ] {
        let answer = server
            .raw(&handshake(addr, &format!("Origin: {origin}\r\n")))
            .await;
        assert!(answer.starts_with("HTTP/1.1 101"), "{origin}: {answer}");
    }

    // Echo, text and binary, through a real client.
    let (mut ws, res) = tokio_tungstenite::connect_async(server.url("/echo"))
        .await
        .unwrap();
    assert_eq!(res.status(), 101);
    ws.send(tungstenite::Message::text("héllo")).await.unwrap();
    assert_eq!(
        ws.next().await.unwrap().unwrap().into_text().unwrap(),
        "héllo"
    );
    ws.send(tungstenite::Message::binary(vec![0u8, 255, 1]))
        .await
        .unwrap();
    assert_eq!(
        ws.next().await.unwrap().unwrap().into_data().as_ref(),
        [0, 255, 1]
    );
    // A fragmented message arrives whole.
    ws.send(tungstenite::Message::Frame(Frame::message(
        &b"frag"[..],
        OpCode::Data(Data::Text),
        false,
    )))
    .await
    .unwrap();
    ws.send(tungstenite::Message::Frame(Frame::message(
        &b"ments"[..],
        OpCode::Data(Data::Continue),
        true,
    )))
    .await
    .unwrap();
    assert_eq!(
        ws.next().await.unwrap().unwrap().into_text().unwrap(),
        "fragments"
    );
    // The client's close is answered.
    ws.close(None).await.unwrap();
    let mut closed = false;
    while let Some(frame) = ws.next().await {
        if let Ok(tungstenite::Message::Close(_)) = frame {
            closed = true;
        }
    }
    assert!(closed);
}

/// The close frame the server sends next (other frames skipped).
async fn close_code<S>(ws: &mut tokio_tungstenite::WebSocketStream<S>) -> Option<u16>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let frame = tokio::time::timeout_at(deadline, ws.next()).await.ok()??;
        match frame {
            Ok(tungstenite::Message::Close(Some(CloseFrame { code, .. }))) => {
                return Some(u16::from(code))
            }
            Ok(tungstenite::Message::Close(None)) => return Some(1005),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

#[tokio::test]
async fn limits_close_with_the_code_the_rfc_names() {
    let server = start(
        &[
            ("WEBSOCKET_MAX_MESSAGE", "1024"),
            ("WEBSOCKET_MAX_FRAME", "512"),
        ],
        None,
    )
    .await;
    // One frame over the frame limit.
    let (mut ws, _) = tokio_tungstenite::connect_async(server.url("/echo"))
        .await
        .unwrap();
    ws.send(tungstenite::Message::binary(vec![1u8; 513]))
        .await
        .unwrap();
    assert_eq!(close_code(&mut ws).await, Some(close_code::TOO_BIG));
    // At the limits: accepted.
    let (mut ws, _) = tokio_tungstenite::connect_async(server.url("/echo"))
        .await
        .unwrap();
    ws.send(tungstenite::Message::binary(vec![1u8; 512]))
        .await
        .unwrap();
    assert_eq!(ws.next().await.unwrap().unwrap().into_data().len(), 512);
    // Frames under the limit making a message over it.
    for (i, op) in [
        OpCode::Data(Data::Binary),
        OpCode::Data(Data::Continue),
        OpCode::Data(Data::Continue),
    ]
    .into_iter()
    .enumerate()
    {
        ws.send(tungstenite::Message::Frame(Frame::message(
            vec![2u8; 500],
            op,
            i == 2,
        )))
        .await
        .unwrap();
    }
    assert_eq!(close_code(&mut ws).await, Some(close_code::TOO_BIG));
    // Text that is not UTF-8.
    let (mut ws, _) = tokio_tungstenite::connect_async(server.url("/echo"))
        .await
        .unwrap();
    ws.send(tungstenite::Message::Frame(Frame::message(
        vec![0xc3u8, 0x28],
        OpCode::Data(Data::Text),
        true,
    )))
    .await
    .unwrap();
    assert_eq!(close_code(&mut ws).await, Some(close_code::INVALID));
    // A continuation with nothing to continue: a protocol error.
    let (mut ws, _) = tokio_tungstenite::connect_async(server.url("/echo"))
        .await
        .unwrap();
    ws.send(tungstenite::Message::Frame(Frame::message(
        &b"x"[..],
        OpCode::Data(Data::Continue),
        true,
    )))
    .await
    .unwrap();
    assert_eq!(close_code(&mut ws).await, Some(close_code::PROTOCOL));
    // The server still serves.
    let (mut ws, _) = tokio_tungstenite::connect_async(server.url("/echo"))
        .await
        .unwrap();
    ws.send(tungstenite::Message::text("still here"))
        .await
        .unwrap();
    assert_eq!(
        ws.next().await.unwrap().unwrap().into_text().unwrap(),
        "still here"
    );
}

#[tokio::test]
async fn pings_keep_a_client_that_answers_and_idle_ends_one_that_does_not() {
    let server = start(
        &[
            ("WEBSOCKET_PING_INTERVAL", "100ms"),
            ("WEBSOCKET_IDLE_TIMEOUT", "400ms"),
        ],
        None,
    )
    .await;
    // A client library answers pings as it reads: alive past the timeout.
    let (mut ws, _) = tokio_tungstenite::connect_async(server.url("/echo"))
        .await
        .unwrap();
    let mut pings = 0;
    let until = tokio::time::Instant::now() + Duration::from_millis(1000);
    while let Ok(Some(Ok(frame))) = tokio::time::timeout_at(until, ws.next()).await {
        if frame.is_ping() {
            pings += 1;
        }
    }
    assert!(pings >= 5, "{pings} pings in a second at 100ms");
    ws.send(tungstenite::Message::text("alive")).await.unwrap();
    let mut echoed = false;
    while let Some(Ok(frame)) = ws.next().await {
        if frame.is_text() {
            echoed = true;
            break;
        }
    }
    assert!(echoed);

    // A client that completes the handshake and then says nothing: the
    // connection ends after the idle timeout.
    let mut raw = TcpStream::connect(server.addr).await.unwrap();
    raw.write_all(handshake(server.addr, "").as_bytes())
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let mut buf = vec![0u8; 4096];
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match raw.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "a silent client was kept");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(350), "closed after {took:?}");
}

#[tokio::test]
async fn a_client_that_stops_reading_fails_the_send_after_the_write_timeout() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let server = start(&[("TERN_WRITE_TIMEOUT", "300ms")], Some(tx)).await;
    let (ws, _) = tokio_tungstenite::connect_async(server.url("/flood"))
        .await
        .unwrap();
    // The client never reads.
    let outcome = tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("the send never failed")
        .unwrap();
    assert_eq!(outcome, format!("{:?}", WebSocketErrorKind::TimedOut));
    drop(ws);
}

#[tokio::test]
async fn sockets_count_toward_max_connections() {
    let server = start(&[("TERN_MAX_CONNECTIONS", "2")], None).await;
    let (mut a, _) = tokio_tungstenite::connect_async(server.url("/echo"))
        .await
        .unwrap();
    let (b, _) = tokio_tungstenite::connect_async(server.url("/echo"))
        .await
        .unwrap();
    // A third is refused: the server closes it unanswered.
    let third = tokio::time::timeout(
        Duration::from_secs(5),
        tokio_tungstenite::connect_async(server.url("/echo")),
    )
    .await
    .unwrap();
    assert!(third.is_err(), "a third connection was served");
    // One closes: room again, once the server has seen the close (until
    // then a connection is still refused unanswered: retry for a moment).
    b.close_gracefully().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut c = loop {
        match tokio_tungstenite::connect_async(server.url("/echo")).await {
            Ok((c, _)) => break c,
            Err(e) => assert!(
                tokio::time::Instant::now() < deadline,
                "no room 5 s after a close: {e}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    for ws in [&mut a, &mut c] {
        ws.send(tungstenite::Message::text("x")).await.unwrap();
        assert!(ws.next().await.unwrap().unwrap().is_text());
    }
}

trait CloseGracefully {
    async fn close_gracefully(self);
}

impl<S> CloseGracefully for tokio_tungstenite::WebSocketStream<S>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    async fn close_gracefully(mut self) {
        self.close(None).await.unwrap();
        while let Some(Ok(_)) = self.next().await {}
    }
}

#[tokio::test]
async fn the_drain_says_going_away_and_waits_for_the_answer() {
    let mut server = start(&[("TERN_SHUTDOWN_TIMEOUT", "10s")], None).await;
    let (mut a, _) = tokio_tungstenite::connect_async(server.url("/echo"))
        .await
        .unwrap();
    let (mut b, _) = tokio_tungstenite::connect_async(server.url("/echo"))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    server.stop.take().unwrap().send(()).unwrap();
    for ws in [&mut a, &mut b] {
        assert_eq!(close_code(ws).await, Some(close_code::GOING_AWAY));
    }
    // The clients answer (tungstenite does as it reads); the drain ends.
    for ws in [&mut a, &mut b] {
        while let Some(Ok(_)) = ws.next().await {}
    }
    tokio::time::timeout(Duration::from_secs(5), &mut server.done)
        .await
        .expect("the drain did not end")
        .unwrap()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn the_in_process_client_speaks_websocket() {
    // On each HTTP/1 engine: the test client's connection is served by the
    // one the app's configuration names.
    for engine in ["hyper", "tern"] {
        let config = Config::from_settings([("TERN_HTTP1", engine)]).unwrap();
        in_process_websocket(TestClient::from_service(
            app(None).build_with(config).unwrap(),
        ))
        .await;
    }
}

async fn in_process_websocket(client: TestClient) {
    let mut socket = client.websocket("/echo").await.unwrap();
    socket.send("one").await;
    assert_eq!(socket.recv_text().await, "one");
    socket.send(vec![1u8, 2, 3]).await;
    assert_eq!(
        socket.recv().await,
        Some(Received::Message(Message::binary(vec![1u8, 2, 3])))
    );
    socket.close().await;

    // A subprotocol, and a refusal with its problem.
    let mut request = "ws://localhost/echo".into_client_request().unwrap();
    request
        .headers_mut()
        .insert("sec-websocket-protocol", "chat.v1".parse().unwrap());
    let socket = client.websocket_with(request).await.unwrap();
    assert_eq!(socket.protocol(), Some("chat.v1"));
    let mut request = "ws://localhost/echo".into_client_request().unwrap();
    request
        .headers_mut()
        .insert("origin", "https://evil.example".parse().unwrap());
    let refused = client.websocket_with(request).await.unwrap_err();
    assert_eq!(refused.status, 403);
    assert!(refused.body.contains("Origin"), "{}", refused.body);
    // A plain request through `send` cannot switch protocols: 426.
    let res = client.get("/echo").send().await;
    assert_eq!(res.status(), 426);
}

#[tokio::test]
async fn websockets_over_http2_with_an_extended_connect() {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use tokio_tungstenite::{tungstenite::protocol::Role, WebSocketStream};

    let server = start(
        &[
            ("WEBSOCKET_MAX_MESSAGE", "200000"),
            ("WEBSOCKET_MAX_FRAME", "200000"),
        ],
        None,
    )
    .await;
    // HTTP/2 by prior knowledge; the server's SETTINGS allow extended
    // CONNECT (RFC 8441).
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .unwrap();
    tokio::spawn(conn);
    let connect = |path: &str, protocol: &'static str| {
        let mut req = http::Request::builder()
            .method(http::Method::CONNECT)
            .uri(format!("http://{}{path}", server.addr))
            .header("sec-websocket-version", "13")
            .header("sec-websocket-protocol", "chat.v1")
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .unwrap();
        req.extensions_mut()
            .insert(hyper::ext::Protocol::from_static(protocol));
        req
    };
    // The settings frame may not be in yet.
    let mut res = None;
    for _ in 0..50 {
        sender.ready().await.unwrap();
        match sender.send_request(connect("/echo", "websocket")).await {
            Ok(r) => {
                res = Some(r);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    let res = res.expect("the extended CONNECT was never sent");
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["sec-websocket-protocol"], "chat.v1");
    let upgraded = hyper::upgrade::on(res).await.unwrap();
    let mut ws = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Client, None).await;
    ws.send(tungstenite::Message::text("over one stream"))
        .await
        .unwrap();
    assert_eq!(
        ws.next().await.unwrap().unwrap().into_text().unwrap(),
        "over one stream"
    );
    // Another stream of the same connection, at the same time.
    let res = sender
        .send_request(connect("/echo", "websocket"))
        .await
        .unwrap();
    let mut second = WebSocketStream::from_raw_socket(
        TokioIo::new(hyper::upgrade::on(res).await.unwrap()),
        Role::Client,
        None,
    )
    .await;
    // Past HTTP/2's initial window (65,535 bytes): flow control both ways.
    second
        .send(tungstenite::Message::binary(vec![9u8; 150_000]))
        .await
        .unwrap();
    assert_eq!(
        second.next().await.unwrap().unwrap().into_data().len(),
        150_000
    );
    ws.send(tungstenite::Message::text("still")).await.unwrap();
    assert_eq!(
        ws.next().await.unwrap().unwrap().into_text().unwrap(),
        "still"
    );
    // Another protocol is refused.
    let refused = sender
        .send_request(connect("/echo", "webtransport"))
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    ws.close(None).await.unwrap();
}
