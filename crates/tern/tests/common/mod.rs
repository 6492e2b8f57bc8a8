//! Shared harness: a real Tern server on 127.0.0.1, a real HTTP client,
//! and raw TCP for what clients would refuse to send.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, missing_docs)]

use std::{net::SocketAddr, time::Duration};

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::{
    client::legacy::{connect::HttpConnector, Client},
    rt::TokioExecutor,
};
use tern::{App, Config, Server};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::oneshot,
    task::JoinHandle,
};

/// A server running in this test's runtime.
pub struct TestServer {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    handle: JoinHandle<std::io::Result<()>>,
}

impl TestServer {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Sends the shutdown signal and waits for the server to return.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(30), self.handle)
            .await
            .expect("the server did not stop within 30 s")
            .expect("server task")
            .expect("server result");
    }

    /// Starts the shutdown without waiting.
    pub fn begin_shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    pub async fn join(self) {
        tokio::time::timeout(Duration::from_secs(30), self.handle)
            .await
            .expect("the server did not stop within 30 s")
            .expect("server task")
            .expect("server result");
    }
}

/// Development configuration with short timeouts for tests.
/// Whether the tests run on Tern's own HTTP/1 engine (the default; not
/// `TERN_HTTP1=hyper`): the few places where it answers otherwise than
/// hyper's path, each a recorded difference (`docs/plans/http1.md` §3.2),
/// check for it.
#[allow(dead_code)]
pub fn tern_engine() -> bool {
    std::env::var("TERN_HTTP1").as_deref() != Ok("hyper")
}

/// `TERN_HTTP1` in the environment chooses the HTTP/1 engine, so that the
/// same tests run on both (`.ci/run` runs them again with `hyper`).
pub fn config() -> Config {
    let mut c = Config::default();
    c.timeouts.shutdown = Duration::from_secs(10);
    if !tern_engine() {
        c.http1 = tern::config::Http1Engine::Hyper;
    }
    c
}

pub async fn spawn<S: Clone + Send + Sync + 'static>(app: App<S>) -> TestServer {
    spawn_with(app, config()).await
}

pub async fn spawn_with<S: Clone + Send + Sync + 'static>(
    app: App<S>,
    config: Config,
) -> TestServer {
    let service = app.build_with(config).expect("the app builds");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = oneshot::channel::<()>();
    let handle = tokio::spawn(
        Server::new(service).serve_with_shutdown(listener, async move {
            let _ = rx.await;
        }),
    );
    TestServer {
        addr,
        stop: Some(tx),
        handle,
    }
}

/// A response read whole.
#[derive(Debug)]
pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Resp {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }

    /// Asserts a problem+json body with this status; returns the document.
    pub fn problem(&self, status: u16) -> serde_json::Value {
        assert_eq!(
            self.status.as_u16(),
            status,
            "status; body: {}",
            self.text()
        );
        assert_eq!(
            self.headers
                .get("content-type")
                .map(|v| v.to_str().unwrap()),
            Some("application/problem+json"),
            "content-type; body: {}",
            self.text()
        );
        let doc = self.json();
        assert_eq!(doc["status"], status, "{doc}");
        assert!(
            doc["detail"].as_str().is_some_and(|d| !d.is_empty()),
            "{doc}"
        );
        doc
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }
}

pub type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// An HTTP/1.1 client with a connection pool (keep-alive).
pub fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

/// An HTTP/2 client (prior knowledge, h2c).
pub fn h2_client() -> HttpClient {
    Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

pub async fn send(client: &HttpClient, req: Request<Full<Bytes>>) -> Resp {
    let res = tokio::time::timeout(Duration::from_secs(20), client.request(req))
        .await
        .expect("no response within 20 s")
        .expect("request failed");
    let (parts, body) = res.into_parts();
    let body = body.collect().await.expect("body").to_bytes();
    Resp {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

pub async fn get(server: &TestServer, path: &str) -> Resp {
    send(
        &client(),
        Request::get(server.url(path))
            .body(Full::default())
            .unwrap(),
    )
    .await
}

pub fn request(method: &str, url: &str) -> http::request::Builder {
    Request::builder().method(method).uri(url)
}

/// Writes `bytes` on a new connection and reads until the server closes
/// it or `wait` passes with nothing more to read.
pub async fn raw(addr: SocketAddr, bytes: &[u8], wait: Duration) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let _ = stream.write_all(bytes).await;
    read_until_quiet(&mut stream, wait).await.0
}

/// Reads until EOF (returns true) or `wait` with no new bytes (false).
pub async fn read_until_quiet(stream: &mut TcpStream, wait: Duration) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match tokio::time::timeout(wait, stream.read(&mut buf)).await {
            Ok(Ok(0)) => return (out, true),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Ok(Err(_)) => return (out, true),
            Err(_) => return (out, false),
        }
    }
}

/// The status codes of every response in a raw byte stream, in order.
pub fn statuses(bytes: &[u8]) -> Vec<u16> {
    let text = String::from_utf8_lossy(bytes);
    text.match_indices("HTTP/1.1 ")
        .filter_map(|(i, _)| text.get(i + 9..i + 12)?.parse().ok())
        .collect()
}
