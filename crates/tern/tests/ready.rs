//! `/ready` over real sockets: the checks an app registers, their time
//! limit and shared verdict, any host, and `503` while the server drains
//! (with `/health` still `200`).
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::{
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use tern::{routing::get, App};
use tokio::io::AsyncWriteExt;

fn app(up: Arc<AtomicBool>, runs: Arc<AtomicUsize>) -> App {
    App::new()
        .route("/", get(|| async { "home" }))
        .ready_check("database", move |_ctx| {
            let up = Arc::clone(&up);
            let runs = Arc::clone(&runs);
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                if up.load(Ordering::SeqCst) {
                    Ok(())
                } else {
                    Err("connection refused by db.internal:5432 for user app".to_owned())
                }
            }
        })
}

#[tokio::test]
async fn ready_when_every_check_passes_and_503_naming_the_one_that_fails() {
    let up = Arc::new(AtomicBool::new(true));
    let runs = Arc::new(AtomicUsize::new(0));
    let server =
        common::spawn_with(app(Arc::clone(&up), Arc::clone(&runs)), common::config()).await;
    let res = common::get(&server, "/ready").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.text(), "ready");
    assert_eq!(res.header("cache-control"), Some("no-store"));
    // The verdict is kept for a second: a storm of probes runs it once.
    for _ in 0..20 {
        assert_eq!(common::get(&server, "/ready").await.status, 200);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    up.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let res = common::get(&server, "/ready").await;
    assert_eq!(res.status, 503);
    assert_eq!(res.header("content-type"), Some("application/json"));
    assert_eq!(res.json()["failing"], serde_json::json!(["database"]));
    assert!(
        !res.text().contains("db.internal"),
        "the error is logged, not sent"
    );
    // Liveness is another question.
    assert_eq!(common::get(&server, "/health").await.status, 200);
    server.shutdown().await;
}

#[tokio::test]
async fn a_check_that_hangs_fails_after_a_second() {
    let app = App::new().ready_check("bus", |_ctx| async {
        std::future::pending::<()>().await;
        Ok(())
    });
    let server = common::spawn_with(app, common::config()).await;
    let started = Instant::now();
    let res = common::get(&server, "/ready").await;
    assert_eq!(res.status, 503);
    assert_eq!(res.json()["failing"], serde_json::json!(["bus"]));
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(3),
        "{took:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn any_host_may_ask_in_production() {
    let mut config = tern::Config::from_settings([
        ("TERN_ENV", "production"),
        ("SECRET_KEY", "k7Qp2vXw9LmN4rTb8YzH3cJf6GdS1aEu"),
        ("ALLOWED_HOSTS", "example.com"),
    ])
    .unwrap();
    config.timeouts.shutdown = Duration::from_secs(10);
    let up = Arc::new(AtomicBool::new(true));
    let server = common::spawn_with(app(up, Arc::default()), config).await;
    let probe = common::raw(
        server.addr,
        b"GET /ready HTTP/1.1\r\nhost: 10.1.2.3:8080\r\nconnection: close\r\n\r\n",
        Duration::from_secs(2),
    )
    .await;
    assert_eq!(common::statuses(&probe), [200]);
    let page = common::raw(
        server.addr,
        b"GET / HTTP/1.1\r\nhost: 10.1.2.3:8080\r\nconnection: close\r\n\r\n",
        Duration::from_secs(2),
    )
    .await;
    assert_eq!(common::statuses(&page), [400]);
    server.shutdown().await;
}

#[tokio::test]
async fn draining_is_not_ready_while_health_stays_ok() {
    let up = Arc::new(AtomicBool::new(true));
    let mut server = common::spawn_with(app(up, Arc::default()), common::config()).await;
    // Two idle keep-alive connections, each with one request answered.
    let mut conns = Vec::new();
    for _ in 0..2 {
        let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nhost: a\r\n\r\n")
            .await
            .unwrap();
        let (first, _) = common::read_until_quiet(&mut s, Duration::from_millis(200)).await;
        assert_eq!(common::statuses(&first), [200]);
        conns.push(s);
    }
    server.begin_shutdown();
    tokio::time::sleep(Duration::from_millis(50)).await;
    // A request on an idle connection during the drain is still answered.
    conns[0]
        .write_all(b"GET /ready HTTP/1.1\r\nhost: a\r\n\r\n")
        .await
        .unwrap();
    let (ready, _) = common::read_until_quiet(&mut conns[0], Duration::from_secs(1)).await;
    assert_eq!(
        common::statuses(&ready),
        [503],
        "{}",
        String::from_utf8_lossy(&ready)
    );
    assert!(String::from_utf8_lossy(&ready).contains("draining"));
    conns[1]
        .write_all(b"GET /health HTTP/1.1\r\nhost: a\r\n\r\n")
        .await
        .unwrap();
    let (health, _) = common::read_until_quiet(&mut conns[1], Duration::from_secs(1)).await;
    assert_eq!(common::statuses(&health), [200]);
    server.join().await;
}

#[tokio::test]
async fn off_and_an_app_route_wins() {
    let mut config = common::config();
    config.ready_path = None;
    let server = common::spawn_with(App::new(), config).await;
    assert_eq!(common::get(&server, "/ready").await.status, 404);
    server.shutdown().await;
    let own = App::new().route("/ready", get(|| async { "mine" }));
    let server = common::spawn_with(own, common::config()).await;
    assert_eq!(common::get(&server, "/ready").await.text(), "mine");
    server.shutdown().await;
}

#[test]
fn the_built_in_probes_are_not_in_api_documents() {
    let mut config = common::config();
    config.metrics = true;
    let app = App::new()
        .route("/", get(|| async { "home" }))
        .build_with(config)
        .unwrap();
    let paths: Vec<&str> = app.api_routes().iter().map(|r| r.path.as_str()).collect();
    assert!(paths.contains(&"/"), "{paths:?}");
    assert!(
        !paths.contains(&"/ready") && !paths.contains(&"/metrics"),
        "{paths:?}"
    );
    let listed: Vec<&str> = app.routes().iter().map(|r| r.path.as_str()).collect();
    assert!(
        listed.contains(&"/ready") && listed.contains(&"/metrics"),
        "{listed:?}"
    );
}
