//! What the site tests share: a server on a real socket, and a raw
//! HTTP/1 exchange.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::{net::SocketAddr, time::Duration};

use tern::{App, Config};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// Serves `app` (development defaults) on a loopback port.
pub async fn serve(app: App) -> SocketAddr {
    serve_with(app, Config::default()).await
}

/// Serves `app` with `config` on a loopback port.
pub async fn serve_with(app: App, config: Config) -> SocketAddr {
    let service = app.build_with(config).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(tern::Server::new(service).serve_with_shutdown(listener, std::future::pending()));
    addr
}

/// Sends `request` (a whole request head: it must close the connection,
/// `Connection: close` or HTTP/1.0) and reads the answer to its end: the
/// head (up to the blank line, as sent) and the body's raw bytes.
pub async fn exchange(addr: SocketAddr, request: &str) -> (String, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("answered within 10 s")
        .unwrap();
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    (
        String::from_utf8(raw[..end].to_vec()).unwrap(),
        raw[end..].to_vec(),
    )
}

/// A request head: `METHOD PATH VERSION`, `Host: x`, the headers, and
/// `Connection: close` for HTTP/1.1.
pub fn head(method: &str, path: &str, version: &str, headers: &[(&str, &str)]) -> String {
    let mut head = format!("{method} {path} {version}\r\nHost: x\r\n");
    if version == "HTTP/1.1" {
        head.push_str("Connection: close\r\n");
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head
}
