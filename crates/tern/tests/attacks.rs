//! Security round 3 (issue 25), the framework's part: attacks an outsider
//! made on the showcase, over real sockets against a bare app. The same
//! attacks on the composed showcase: examples/showcase/tests/attacks/.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::time::Duration;

use common::{request, send};
use http_body_util::Full;
use tern::{extract::Host, routing::get, App, Config};

/// The sitemap's pattern: a URL built from the client's host.
fn host_app() -> App {
    App::new().route(
        "/sitemap.xml",
        get(|Host(host): Host| async move { format!("<loc>http://{host}/</loc>") }),
    )
}

fn production() -> Config {
    common::config()
        .with_secret_key("q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ")
        .with_allowed_hosts(["127.0.0.1", "localhost"])
        .production()
}

/// Host spellings that are not `uri-host [ ":" port ]`: each would pass
/// a check that strips "the port" at the last colon.
const JUNK_HOSTS: &[&str] = &[
    "127.0.0.1:4305@evil.example",
    "127.0.0.1:80/evil",
    "localhost:0@evil.example",
    "localhost:",
    "[::1",
    "localhost:80:80",
    "localhost:abc",
    "localhost:65536",
    "localhost:000080",
    "user@localhost",
    "local host",
    "localhost%00",
    "localhost?x=1",
    "localhost#x",
    "localhost\\evil.example",
    "[localhost]:80",
    "[::1]x",
    ".localhost",
    "localhost..",
];

async fn sitemap_over_h1(server: &common::TestServer, host: &str) -> String {
    let raw = format!("GET /sitemap.xml HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    let out = common::raw(server.addr, raw.as_bytes(), Duration::from_secs(5)).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// Issue 25 item 4: `Host: 127.0.0.1:4305@evil.example` passed
/// `ALLOWED_HOSTS=127.0.0.1` (the "port" was `4305@evil.example`) and
/// the sitemap answered `<loc>http://127.0.0.1:4305@evil.example/</loc>`.
/// Every junk spelling is a 400 problem+json, in production and in
/// development (where no allow-list runs at all), and no URL built from
/// the host ever names it.
#[tokio::test]
async fn junk_hosts_are_refused_before_the_allow_list() {
    for (env, config) in [
        ("production", production()),
        ("development", common::config()),
    ] {
        let server = common::spawn_with(host_app(), config).await;
        let mut failures = Vec::new();
        for host in JUNK_HOSTS {
            let text = sitemap_over_h1(&server, host).await;
            let ok = text.starts_with("HTTP/1.1 400 ")
                && text.contains("content-type: application/problem+json")
                && text.contains("is not a host name with an optional port")
                && !text.contains("<loc>");
            if !ok {
                failures.push(format!("{env} {host:?}: {text}"));
            }
        }
        for (host, loc) in [
            ("127.0.0.1:4305", "<loc>http://127.0.0.1:4305/</loc>"),
            ("localhost", "<loc>http://localhost/</loc>"),
            ("LOCALHOST:80", "<loc>http://LOCALHOST:80/</loc>"),
            ("localhost:65535", "<loc>http://localhost:65535/</loc>"),
        ] {
            let text = sitemap_over_h1(&server, host).await;
            if !(text.starts_with("HTTP/1.1 200 ") && text.ends_with(loc)) {
                failures.push(format!("{env} {host:?} should be served: {text}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        server.shutdown().await;
    }
}

/// A bracketed IPv6 host is valid (development: any host); a junk one in
/// an absolute-form target is refused like a junk `Host`, and so is a
/// junk `Host` next to a valid absolute-form target.
#[tokio::test]
async fn ipv6_hosts_and_absolute_form_targets() {
    let server = common::spawn(host_app()).await;
    let text = sitemap_over_h1(&server, "[::1]:80").await;
    assert!(
        text.starts_with("HTTP/1.1 200 ") && text.ends_with("<loc>http://[::1]:80/</loc>"),
        "{text}"
    );
    for raw in [
        "GET http://localhost:80:80/sitemap.xml HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        "GET http://localhost/sitemap.xml HTTP/1.1\r\nHost: localhost:80@evil.example\r\nConnection: close\r\n\r\n",
        "GET http://u@localhost/sitemap.xml HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    ] {
        let out = common::raw(server.addr, raw.as_bytes(), Duration::from_secs(5)).await;
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with("HTTP/1.1 400 "), "{raw:?}: {text}");
        assert!(!text.contains("<loc>"), "{raw:?}: {text}");
    }
    server.shutdown().await;
}

/// HTTP/2: `:authority` is held to the same grammar, and a `Host` header
/// that names another host than `:authority` is refused (RFC 9113
/// §8.3.1), so the two cannot be played against each other.
#[tokio::test]
async fn http2_authority_is_checked_like_host() {
    let server = common::spawn_with(host_app(), production()).await;
    let client = common::h2_client();
    let port = server.addr.port();
    let ok = send(
        &client,
        request("GET", &format!("http://localhost:{port}/sitemap.xml"))
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(ok.text(), format!("<loc>http://localhost:{port}/</loc>"));

    // userinfo in the authority: `127.0.0.1:4305@localhost:PORT`.
    let junk = send(
        &client,
        request(
            "GET",
            &format!("http://127.0.0.1:4305@localhost:{port}/sitemap.xml"),
        )
        .body(Full::default())
        .unwrap(),
    )
    .await;
    let doc = junk.problem(400);
    assert!(
        doc["detail"]
            .as_str()
            .unwrap()
            .contains("is not a host name with an optional port"),
        "{doc}"
    );

    let mismatch = send(
        &client,
        request("GET", &format!("http://localhost:{port}/sitemap.xml"))
            .header("host", "evil.example")
            .body(Full::default())
            .unwrap(),
    )
    .await;
    let doc = mismatch.problem(400);
    assert!(
        doc["detail"]
            .as_str()
            .unwrap()
            .contains("name different hosts"),
        "{doc}"
    );
    server.shutdown().await;
}
