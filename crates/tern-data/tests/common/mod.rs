//! What the data tests share: fresh databases and a server over a socket.
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use std::net::SocketAddr;

use serde_json::Value;
use tern::{App, Config};
use tern_data::Database;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::oneshot,
};

pub use tern_data::testing::{fresh, BACKENDS};

pub struct Server {
    pub addr: SocketAddr,
    pub service: tern::AppService,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub async fn spawn(app: App, settings: &[(&str, &str)]) -> Server {
    let config = Config::from_settings(settings.iter().copied()).unwrap();
    let service = app.build_with(config).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(
        tern::Server::new(service.clone()).serve_with_shutdown(listener, async move {
            let _ = rx.await;
        }),
    );
    Server {
        addr,
        service,
        stop: Some(tx),
    }
}

impl Server {
    pub fn db(&self) -> std::sync::Arc<Database> {
        self.service.settings::<Database>().unwrap()
    }

    /// One request over the socket: the status, the head, the body.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, String, String) {
        let mut stream = TcpStream::connect(self.addr).await.unwrap();
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        let answer = String::from_utf8(answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        (
            head[9..12].parse().unwrap(),
            head.to_owned(),
            body.to_owned(),
        )
    }
}
