//! The pool's metrics over real sockets, on SQLite and PostgreSQL: the
//! app started as `tern::serve` starts it (so `install`'s start hook
//! meters the pool), statements and a transaction timed, a wait and a
//! timeout counted with a pool of one connection, and the pool's
//! gauges read at the scrape.
#![allow(clippy::unwrap_used, missing_docs)]

use std::{net::SocketAddr, time::Duration};

use tern::{routing::get, App, Config, StatusCode};
use tern_data::{query, testing::fresh, Backend, DataError, Db, Migrations, Tx};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

static MIGRATIONS: Migrations = tern_data::migrations!("tests/migrations");

async fn count(Db(pool): Db) -> Result<String, DataError> {
    let n: i64 = query("SELECT COUNT(*) FROM notes").scalar(&pool).await?;
    Ok(n.to_string())
}

/// Holds the pool's only connection in a transaction for a while.
async fn hold(tx: Tx) -> Result<StatusCode, DataError> {
    let mut t = tx.lock().await;
    let _: i64 = query("SELECT COUNT(*) FROM notes").scalar(&mut t).await?;
    tokio::time::sleep(Duration::from_millis(700)).await;
    Ok(StatusCode::NO_CONTENT)
}

/// One request over a socket: the status and the body.
async fn get_path(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (head[9..12].parse().unwrap(), body.to_owned())
}

fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let (s, v) = l.rsplit_once(' ')?;
            (s == series).then(|| v.parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no `{series}` in:\n{text}"))
}

/// Serves `app` as `tern::serve` does (start hooks first) on a free
/// port, and waits until it answers.
async fn serve(app: App, url: &str) -> SocketAddr {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = free.local_addr().unwrap();
    drop(free);
    let mut config = Config::from_settings([
        ("DATABASE_URL", url),
        ("DATABASE_MAX_CONNECTIONS", "1"),
        ("DATABASE_ACQUIRE_TIMEOUT", "200ms"),
    ])
    .unwrap();
    config.metrics = true;
    config.addr = addr;
    config.workers = 1;
    tokio::spawn(tern::serve(app.config(config)));
    for _ in 0..200 {
        if TcpStream::connect(addr).await.is_ok() {
            return addr;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the app did not start on {addr}");
}

#[tokio::test]
async fn acquires_waits_timeouts_and_the_pool_size_are_counted() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let app = App::new()
            .route("/count", get(count))
            .route("/hold", get(hold))
            .route_layer(tern_data::transactions());
        let addr = serve(tern_data::install(app, [&MIGRATIONS]), &url).await;

        let (status, text) = get_path(addr, "/metrics").await;
        assert_eq!(status, 200, "{text}");
        // Started: the migrations ran on the pool (not through `query`).
        let before = value(&text, "tern_db_pool_acquire_seconds_count");
        assert_eq!(value(&text, "tern_db_pool_max"), 1.0, "{backend:?}");

        for _ in 0..3 {
            assert_eq!(get_path(addr, "/count").await, (200, "0".to_owned()));
        }
        // While `/hold` keeps the only connection, `/count` waits, then
        // gives up after 200 ms: a 503.
        let held = tokio::spawn(async move { get_path(addr, "/hold").await });
        tokio::time::sleep(Duration::from_millis(150)).await;
        let (status, body) = get_path(addr, "/count").await;
        assert_eq!(status, 503, "{body}");
        assert_eq!(held.await.unwrap().0, 204);

        // sqlx gives a connection back to the pool on a task of its own,
        // just after the answer.
        let mut text = String::new();
        for _ in 0..40 {
            text = get_path(addr, "/metrics").await.1;
            if value(&text, r#"tern_db_pool_connections{state="in_use"}"#) == 0.0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        // Three statements, the transaction and the one that timed out.
        assert_eq!(
            value(&text, "tern_db_pool_acquire_seconds_count") - before,
            5.0,
            "{backend:?}: {text}"
        );
        assert!(value(&text, "tern_db_pool_waits_total") >= 1.0, "{text}");
        assert_eq!(value(&text, "tern_db_pool_timeouts_total"), 1.0, "{text}");
        // The slow one waited at least the acquire timeout.
        assert!(
            value(&text, "tern_db_pool_acquire_seconds_sum") >= 0.2,
            "{text}"
        );
        assert_eq!(
            value(&text, r#"tern_db_pool_connections{state="in_use"}"#),
            0.0,
            "{text}"
        );
        assert_eq!(
            value(&text, r#"tern_db_pool_connections{state="idle"}"#),
            1.0,
            "{text}"
        );
    }
}

/// `/ready` has the check `database`: a connection from the pool.
#[tokio::test]
async fn ready_when_the_database_answers() {
    let dir = std::env::temp_dir().join(format!("tern-data-ready-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}/ready.db", dir.display());
    let app = tern_data::install(App::new(), [&MIGRATIONS]);
    let addr = serve(app, &url).await;
    assert_eq!(get_path(addr, "/ready").await, (200, "ready".to_owned()));
    // Nothing listens on the port of this PostgreSQL: not ready, and
    // the answer names the check, not the address.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let app = tern_data::install(App::new().route("/", get(|| async { "up" })), [&MIGRATIONS]);
    let url = format!("postgres://nobody@127.0.0.1:{port}/none");
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = free.local_addr().unwrap();
    drop(free);
    let mut config = Config::from_settings([("DATABASE_URL", url.as_str())]).unwrap();
    config.addr = addr;
    // Built and served without the start hooks (which would migrate):
    // the process is up, its database is not.
    let service = app.build_with(config).unwrap();
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    tokio::spawn(tern::Server::new(service).serve_with_shutdown(listener, std::future::pending()));
    let (status, body) = get_path(addr, "/ready").await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("\"database\""), "{body}");
    assert!(!body.contains(&port.to_string()), "{body}");
    assert_eq!(get_path(addr, "/health").await.0, 200);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An app that builds its service and serves it itself (no start hooks)
/// still has its pool metered: `install` meters it in every build.
#[tokio::test]
async fn metered_in_an_app_served_without_start_hooks() {
    async fn one(Db(pool): Db) -> Result<String, DataError> {
        let n: i64 = query("SELECT 1").scalar(&pool).await?;
        Ok(n.to_string())
    }
    let app = tern_data::install(App::new().route("/one", get(one)), [&MIGRATIONS]);
    let mut config = Config::from_settings([("DATABASE_URL", "sqlite::memory:")]).unwrap();
    config.metrics = true;
    let service = app.build_with(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(tern::Server::new(service).serve_with_shutdown(listener, std::future::pending()));
    // Before the pool is made: its families, at zero.
    let (_, text) = get_path(addr, "/metrics").await;
    assert_eq!(
        value(&text, "tern_db_pool_acquire_seconds_count"),
        0.0,
        "{text}"
    );
    assert_eq!(get_path(addr, "/one").await, (200, "1".to_owned()));
    assert_eq!(get_path(addr, "/one").await, (200, "1".to_owned()));
    let (_, text) = get_path(addr, "/metrics").await;
    assert_eq!(
        value(&text, "tern_db_pool_acquire_seconds_count"),
        2.0,
        "{text}"
    );
    assert!(value(&text, "tern_db_pool_max") >= 1.0, "{text}");
}
