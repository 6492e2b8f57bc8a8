//! Production safety over real sockets: `ALLOWED_HOSTS` against forged
//! hosts, security headers, no internals in production errors, panics
//! cost one 500.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::{request, send};
use http_body_util::Full;
use tern::{routing::get, App, Config};

fn app() -> App {
    App::new().route("/", get(|| async { "home" })).route(
        "/panic",
        get(|| async {
            if true {
                panic!("secret internals: db password is hunter2");
            }
            "unreachable"
        }),
    )
}

fn production() -> Config {
    let mut c = common::config()
        .with_secret_key("q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ")
        .with_allowed_hosts(["example.com", ".example.org"])
        .production();
    c.timeouts.shutdown = std::time::Duration::from_secs(5);
    c
}

async fn get_host(server: &common::TestServer, path: &str, host: &str) -> common::Resp {
    send(
        &common::client(),
        request("GET", &server.url(path))
            .header("host", host)
            .body(Full::default())
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn allowed_hosts_reject_forged_hosts() {
    let server = common::spawn_with(app(), production()).await;
    for host in [
        "example.com",
        "EXAMPLE.COM:443",
        "example.org",
        "api.example.org",
    ] {
        let res = get_host(&server, "/", host).await;
        assert_eq!(res.status, 200, "{host}: {}", res.text());
    }
    for host in [
        "evil.com",
        "example.com.evil.com",
        "notexample.org",
        "127.0.0.1",
    ] {
        let doc = get_host(&server, "/", host).await.problem(400);
        assert!(
            doc["detail"].as_str().unwrap().contains("ALLOWED_HOSTS"),
            "{doc}"
        );
    }
    // Attempts around the check: the absolute-form target names the host
    // (RFC 9112 §3.2.2), whatever the Host header says; userinfo, a port
    // trick, a trailing-dot twin of a forbidden host, a second Host.
    for raw in [
        &b"GET http://evil.com/ HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: example.com@evil.com\r\nConnection: close\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: evil.com:80@example.com\r\nConnection: close\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: evil.com.\r\nConnection: close\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: example.com\r\nHost: evil.com\r\nConnection: close\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: example.com.evil.com:443\r\nConnection: close\r\n\r\n",
    ] {
        let got = common::raw(server.addr, raw, std::time::Duration::from_secs(2)).await;
        let text = String::from_utf8_lossy(&got);
        assert!(
            text.starts_with("HTTP/1.1 400 "),
            "{}: {text}",
            String::from_utf8_lossy(raw)
        );
    }
    // HTTP/1.0 without any Host header is refused too.
    let raw = common::raw(
        server.addr,
        b"GET / HTTP/1.0\r\n\r\n",
        std::time::Duration::from_secs(2),
    )
    .await;
    let text = String::from_utf8_lossy(&raw);
    assert!(text.contains(" 400 "), "{text}");
    server.shutdown().await;
}

#[tokio::test]
async fn production_sends_security_headers() {
    let server = common::spawn_with(app(), production()).await;
    let res = get_host(&server, "/", "example.com").await;
    for (name, value) in [
        (
            "strict-transport-security",
            "max-age=63072000; includeSubDomains",
        ),
        ("x-frame-options", "DENY"),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "strict-origin-when-cross-origin"),
        ("x-xss-protection", "0"),
        ("cross-origin-opener-policy", "same-origin"),
    ] {
        assert_eq!(res.header(name), Some(value), "{name}");
    }
    assert!(res
        .header("content-security-policy")
        .unwrap()
        .contains("default-src 'self'"));
    // Errors carry them too.
    let res = get_host(&server, "/missing", "example.com").await;
    assert_eq!(res.header("x-frame-options"), Some("DENY"));
    server.shutdown().await;

    let dev = common::spawn(app()).await;
    let res = common::get(&dev, "/").await;
    assert_eq!(
        res.header("x-frame-options"),
        None,
        "development sends none by default"
    );
    dev.shutdown().await;
}

#[tokio::test]
async fn panics_cost_one_500_and_hide_internals_in_production() {
    let server = common::spawn_with(app(), production()).await;
    let doc = get_host(&server, "/panic", "example.com")
        .await
        .problem(500);
    let text = doc.to_string();
    assert!(
        !text.contains("hunter2") && !text.contains("panicked"),
        "{text}"
    );
    assert_eq!(get_host(&server, "/", "example.com").await.status, 200);
    server.shutdown().await;

    // Development, loopback client: the panic message helps the developer.
    let dev = common::spawn(app()).await;
    let doc = common::get(&dev, "/panic").await.problem(500);
    assert!(doc["detail"].as_str().unwrap().contains("hunter2"), "{doc}");
    for _ in 0..20 {
        common::get(&dev, "/panic").await.problem(500);
    }
    assert_eq!(common::get(&dev, "/").await.text(), "home");
    dev.shutdown().await;
}

#[tokio::test]
async fn health_is_automatic_movable_and_can_be_disabled() {
    let server = common::spawn(app()).await;
    let res = common::get(&server, "/health").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.text(), "ok");
    assert_eq!(res.header("cache-control"), Some("no-store"));
    server.shutdown().await;

    let mut moved = common::config();
    moved.health_path = Some("/_up".into());
    let server = common::spawn_with(app(), moved).await;
    assert_eq!(common::get(&server, "/_up").await.text(), "ok");
    common::get(&server, "/health").await.problem(404);
    server.shutdown().await;

    let mut off = common::config();
    off.health_path = None;
    let server = common::spawn_with(app(), off).await;
    common::get(&server, "/health").await.problem(404);
    server.shutdown().await;
}

#[tokio::test]
async fn health_answers_probes_for_any_host_in_production() {
    // Kubernetes probes send `Host: <pod IP>:<port>`, which `ALLOWED_HOSTS`
    // (the public names) does not list: the built-in health check answers
    // them; every other route still refuses the host.
    let server = common::spawn_with(app(), production()).await;
    for host in ["10.1.2.3:8080", "10.1.2.3", "[fd00::7]:8080", "evil.com"] {
        let res = get_host(&server, "/health", host).await;
        assert_eq!(res.status, 200, "{host}: {}", res.text());
        assert_eq!(res.text(), "ok", "{host}");
        let head = send(
            &common::client(),
            request("HEAD", &server.url("/health"))
                .header("host", host)
                .body(Full::default())
                .unwrap(),
        )
        .await;
        assert_eq!(head.status, 200, "HEAD {host}");
        get_host(&server, "/", host).await.problem(400);
        get_host(&server, "/health/x", host).await.problem(400);
        let post = send(
            &common::client(),
            request("POST", &server.url("/health"))
                .header("host", host)
                .body(Full::default())
                .unwrap(),
        )
        .await;
        post.problem(400);
    }
    server.shutdown().await;

    // An app's own route at the health path is the app's: the host rule
    // applies to it.
    let own = app().route("/health", get(|| async { "my own health" }));
    let server = common::spawn_with(own, production()).await;
    get_host(&server, "/health", "10.1.2.3:8080")
        .await
        .problem(400);
    let res = get_host(&server, "/health", "example.com").await;
    assert_eq!(res.text(), "my own health");
    server.shutdown().await;

    // A moved health check is exempt at its new path only.
    let mut moved = production();
    moved.health_path = Some("/_up".into());
    let server = common::spawn_with(app(), moved).await;
    assert_eq!(
        get_host(&server, "/_up", "10.1.2.3:8080").await.text(),
        "ok"
    );
    get_host(&server, "/health", "10.1.2.3:8080")
        .await
        .problem(400);
    server.shutdown().await;
}

/// Issue 10: in production no `500` detail reaches the client (a type
/// name in a framework message, an app's internal message); development
/// shows them.
#[tokio::test]
async fn production_hides_the_details_of_every_500() {
    let app = || {
        App::new()
            .route(
                "/fails",
                get(|| async {
                    tern::Problem::new(tern::StatusCode::INTERNAL_SERVER_ERROR)
                        .with_detail("connection to db.internal:5432 refused")
                }),
            )
            .route(
                "/extension",
                get(|tern::extract::Extension(s): tern::extract::Extension<String>| async move { s }),
            )
    };
    let prod = common::spawn_with(app(), production()).await;
    let dev = common::spawn(app()).await;
    for path in ["/fails", "/extension"] {
        let res = get_host(&prod, path, "example.com").await;
        let doc = res.problem(500);
        assert_eq!(
            doc["detail"], "the server failed to answer this request",
            "{doc}"
        );
        assert!(res.header("x-request-id").is_some());
        let res = common::get(&dev, path).await;
        let doc = res.problem(500);
        assert_ne!(
            doc["detail"], "the server failed to answer this request",
            "{doc}"
        );
    }
    prod.shutdown().await;
    dev.shutdown().await;
}
