//! What the data tests share: fresh databases and a server over a socket.
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use std::{
    net::SocketAddr,
    sync::atomic::{AtomicU32, Ordering},
};

use serde_json::Value;
use tern::{App, Config};
use tern_data::{Backend, Database};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::oneshot,
};

pub const BACKENDS: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

/// A fresh database URL per call: a new SQLite file, or a new schema of
/// the PostgreSQL database at `POSTGRES_URL`.
pub async fn fresh(backend: Backend) -> Option<String> {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let tag = format!("tern_data_{}_{n}", std::process::id());
    match backend {
        Backend::Sqlite => {
            let dir = std::env::temp_dir().join(&tag);
            Some(format!("sqlite://{}/nested/app.db", dir.display()))
        }
        Backend::Postgres => {
            let Ok(url) = std::env::var("POSTGRES_URL") else {
                eprintln!("skipped on PostgreSQL: POSTGRES_URL is not set");
                return None;
            };
            let admin = sqlx::PgPool::connect(&url).await.unwrap();
            // The schemas of earlier runs go (this run's stay until the next).
            let old: Vec<String> = sqlx::query_scalar(
                "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'tern_data_%' \
                 AND nspname NOT LIKE $1",
            )
            .bind(format!("tern_data_{}_%", std::process::id()))
            .fetch_all(&admin)
            .await
            .unwrap();
            for schema in old {
                let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                    "DROP SCHEMA IF EXISTS {schema} CASCADE"
                )))
                .execute(&admin)
                .await;
            }
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "DROP SCHEMA IF EXISTS {tag} CASCADE; CREATE SCHEMA {tag}"
            )))
            .execute(&admin)
            .await
            .unwrap();
            let sep = if url.contains('?') { '&' } else { '?' };
            Some(format!("{url}{sep}options[search_path]={tag}"))
        }
    }
}

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
