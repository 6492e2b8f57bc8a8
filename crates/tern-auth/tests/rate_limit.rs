//! Rate limits over real sockets: in process, per address and per user,
//! and shared by two servers through Redis (`REDIS_URL`, as `.ci/run`
//! sets it).
#![allow(clippy::unwrap_used, missing_docs)]

use std::{net::SocketAddr, time::Duration};

use tern::{App, Config};
use tern_auth::RateLimit;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

async fn serve(app: App) -> SocketAddr {
    let service = app.build_with(Config::default()).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(tern::Server::new(service).serve_with_shutdown(listener, std::future::pending()));
    addr
}

/// One `GET`: the status and the head (lower case).
async fn get(addr: SocketAddr, path: &str, headers: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head =
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{headers}\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap().to_lowercase();
    let head = answer.split("\r\n\r\n").next().unwrap().to_owned();
    (head[9..12].parse().unwrap(), head)
}

fn header<'h>(head: &'h str, name: &str) -> &'h str {
    head.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no {name} in {head}"))
}

#[tokio::test]
async fn in_process_by_address_with_headers_and_recovery() {
    let limit = RateLimit::per(3, Duration::from_secs(3));
    let addr = serve(App::new().route("/", get_hi()).route_layer(limit.layer())).await;
    let (mut remaining, mut reset) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let (status, head) = get(addr, "/", "").await;
        assert_eq!(status, 200);
        assert_eq!(header(&head, "ratelimit-limit"), "3");
        assert_eq!(header(&head, "ratelimit-policy"), "3;w=3");
        remaining.push(header(&head, "ratelimit-remaining").to_owned());
        reset.push(header(&head, "ratelimit-reset").to_owned());
    }
    assert_eq!(remaining, ["2", "1", "0"]);
    // Seconds until the bucket is full again: one request comes back
    // each second.
    assert_eq!(reset, ["1", "2", "3"]);
    let (status, head) = get(addr, "/", "").await;
    assert_eq!(status, 429);
    assert_eq!(header(&head, "retry-after"), "1");
    assert_eq!(header(&head, "ratelimit-remaining"), "0");
    assert_eq!(header(&head, "ratelimit-reset"), "1");
    assert!(head.contains("application/problem+json"));
    // One interval later, one more request.
    tokio::time::sleep(Duration::from_millis(1050)).await;
    assert_eq!(get(addr, "/", "").await.0, 200);
    assert_eq!(get(addr, "/", "").await.0, 429);
    // Unknown routes are not counted, and stay 404.
    assert_eq!(get(addr, "/nope", "").await.0, 404);
}

fn get_hi() -> tern::routing::MethodRouter {
    tern::routing::get(|| async { "hi" })
}

#[tokio::test]
async fn a_key_function_decides_what_is_counted_together() {
    let limit = RateLimit::per(1, Duration::from_secs(60)).key_by(|parts| {
        parts
            .headers
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    });
    let addr = serve(App::new().route("/", get_hi()).route_layer(limit.layer())).await;
    assert_eq!(get(addr, "/", "X-Api-Key: a\r\n").await.0, 200);
    assert_eq!(get(addr, "/", "X-Api-Key: a\r\n").await.0, 429);
    assert_eq!(get(addr, "/", "X-Api-Key: b\r\n").await.0, 200);
    // No key: not limited.
    for _ in 0..3 {
        assert_eq!(get(addr, "/", "").await.0, 200);
    }
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn two_servers_share_one_limit_through_redis() {
    let Some(url) = tern::test::service_url("REDIS_URL") else {
        return;
    };
    // A name of its own, so that another run's counts do not matter.
    let name = format!("test-{}-{}", std::process::id(), rand_suffix());
    let limit = || {
        RateLimit::per(4, Duration::from_secs(60))
            .named(&name)
            .shared(&url)
            .unwrap()
    };
    let a = serve(App::new().route("/", get_hi()).route_layer(limit().layer())).await;
    let b = serve(App::new().route("/", get_hi()).route_layer(limit().layer())).await;
    let mut statuses = Vec::new();
    for i in 0..6 {
        let (status, head) = get(if i % 2 == 0 { a } else { b }, "/", "").await;
        if status == 200 {
            assert_eq!(header(&head, "ratelimit-remaining"), (3 - i).to_string());
        } else {
            let retry: u64 = header(&head, "retry-after").parse().unwrap();
            assert!((1..=15).contains(&retry), "{retry}");
        }
        statuses.push(status);
    }
    assert_eq!(statuses, [200, 200, 200, 200, 429, 429]);
    // A Redis that cannot be reached lets requests through.
    let down = RateLimit::per(1, Duration::from_secs(60))
        .shared("redis://127.0.0.1:1/")
        .unwrap();
    let c = serve(App::new().route("/", get_hi()).route_layer(down.layer())).await;
    assert_eq!(get(c, "/", "").await.0, 200);
    assert_eq!(get(c, "/", "").await.0, 200);
}

#[cfg(feature = "redis")]
fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}
