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

/// The same, behind a valid host on the same connection: a connection
/// keeps its last `Host` value and a thread its last valid one, and
/// neither lets a junk host that follows pass (each junk spelling is sent
/// after a request naming a valid host of the same length where one
/// exists, pipelined on one connection).
#[tokio::test]
async fn junk_hosts_behind_a_valid_one_on_the_same_connection_are_refused() {
    let server = common::spawn_with(host_app(), production()).await;
    let mut failures = Vec::new();
    for junk in JUNK_HOSTS {
        // A valid host as long as the junk one, where one can be spelled.
        let valid = match junk.len() {
            0..=8 => "localhost".to_owned(),
            n => format!("localhost:{}", "8".repeat((n - 10).clamp(1, 4))),
        };
        let raw = format!(
            "GET /sitemap.xml HTTP/1.1\r\nHost: {valid}\r\n\r\n\
             GET /sitemap.xml HTTP/1.1\r\nHost: {junk}\r\n\r\n"
        );
        let out = common::raw(server.addr, raw.as_bytes(), Duration::from_secs(5)).await;
        let text = String::from_utf8_lossy(&out);
        let second = text.find("HTTP/1.1 400 ").map(|at| &text[at..]);
        let ok = text.starts_with("HTTP/1.1 200 ")
            && second.is_some_and(|s| {
                s.contains("is not a host name with an optional port") && !s.contains("<loc>")
            });
        if !ok {
            failures.push(format!("{valid:?} then {junk:?}: {text}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    server.shutdown().await;
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

/// Issue 25 item 6: a body with `Content-Encoding: br` (or any coding)
/// reached `Form`, `Json` and `Bytes` as if it were plain. Tern decodes
/// no content coding, so each is a 415 naming the coding, with
/// `Accept-Encoding: identity` (RFC 9110 §15.5.16), before the handler;
/// over HTTP/1.1 and HTTP/2. `identity`, and a coding on a request
/// without a body, are served.
#[tokio::test]
async fn content_codings_are_refused_with_415() {
    use tern::routing::post;
    let app = App::new()
        .route(
            "/form",
            post(
                |tern::extract::Form(f): tern::extract::Form<
                    std::collections::HashMap<String, String>,
                >| async move { format!("form {}", f.len()) },
            ),
        )
        .route(
            "/json",
            post(|tern::Json(v): tern::Json<serde_json::Value>| async move { format!("json {v}") }),
        )
        .route(
            "/bytes",
            post(|b: bytes::Bytes| async move { format!("bytes {}", b.len()) }),
        )
        .route("/get", get(|| async { "got" }));
    let server = common::spawn(app).await;
    let gzip_of_text =
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03+I\xad(\x01\x00\x0c~\x7f\xd8\x04\x00\x00\x00";
    for (path, content_type) in [
        ("/form", "application/x-www-form-urlencoded"),
        ("/json", "application/json"),
        ("/bytes", "application/octet-stream"),
    ] {
        for coding in [
            "br",
            "gzip",
            "deflate",
            "zstd",
            "x-custom",
            "identity, gzip",
            "GZIP",
        ] {
            for client in [common::client(), common::h2_client()] {
                let res = send(
                    &client,
                    request("POST", &server.url(path))
                        .header("content-type", content_type)
                        .header("content-encoding", coding)
                        .body(Full::new(bytes::Bytes::from_static(gzip_of_text)))
                        .unwrap(),
                )
                .await;
                let doc = res.problem(415);
                let detail = doc["detail"].as_str().unwrap();
                assert!(
                    detail.contains(&format!("`{coding}`")) && detail.contains("Content-Encoding"),
                    "{path} {coding}: {doc}"
                );
                assert_eq!(
                    res.header("accept-encoding"),
                    Some("identity"),
                    "{path} {coding}"
                );
            }
        }
    }
    // identity is no coding at all; a coding without a body harms nothing.
    let res = send(
        &common::client(),
        request("POST", &server.url("/form"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("content-encoding", "identity")
            .body(Full::new(bytes::Bytes::from_static(b"a=1&b=2")))
            .unwrap(),
    )
    .await;
    assert_eq!(
        (res.status.as_u16(), res.text()),
        (200, "form 2".to_owned())
    );
    let res = send(
        &common::client(),
        request("GET", &server.url("/get"))
            .header("content-encoding", "gzip")
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!((res.status.as_u16(), res.text()), (200, "got".to_owned()));
    // Chunked, so the length is not known up front.
    let raw = "POST /bytes HTTP/1.1\r\nHost: localhost\r\nContent-Encoding: br\r\n\
               Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let out = common::raw(server.addr, raw.as_bytes(), Duration::from_secs(5)).await;
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 415 "), "{text}");
    server.shutdown().await;
}

/// Issue 25 item 6: `my-super-secret-key-for-production-2024` and
/// `0123456789abcdef0123456789abcdef0123` started a production server
/// (long enough, no example value left once the deny-list was stripped).
/// Production now needs an estimated 128 bits; keys made by a generator
/// pass, and the error names `SECRET_KEY`, says how to make one, and
/// never shows the key. (`tern::run` refuses to serve on this error: the
/// showcase's attack test starts the process with these keys.)
#[test]
fn guessable_secret_keys_stop_production() {
    let config = |key: &str| {
        Config::default()
            .with_secret_key(key)
            .with_allowed_hosts(["example.com"])
            .production()
    };
    for weak in [
        "my-super-secret-key-for-production-2024",
        "0123456789abcdef0123456789abcdef0123",
        "MySuperSecretKeyForProduction2024!",
        "correct-horse-battery-staple-tern-production-secret",
    ] {
        let err = config(weak).validate().expect_err(weak);
        let text = err.to_string();
        assert_eq!(err.setting(), "SECRET_KEY", "{weak}: {text}");
        assert!(text.contains("openssl rand"), "{weak}: {text}");
        assert!(!text.contains(weak), "the key itself is shown: {text}");
    }
    for strong in [
        "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ",
        // 32 bytes from a CSPRNG, as hex and as base64.
        "3f9a0c6e1b7d24e8a5c09f13d6b2e47a8c1f05d9b3e6a27c4d80f1e9b5a3c672",
        "rQ3x9V0bT6yKp1ZmW4eLs8Hc2JdN7uGfA5oXiB0kYjE=",
    ] {
        assert!(config(strong).validate().is_ok(), "{strong}");
    }
}

/// The scheme the CSRF and WebSocket origin checks compare an `Origin`
/// with: `X-Forwarded-Proto` (or `Forwarded: proto=`) only from a peer in
/// `TRUSTED_PROXIES` (the CSRF check believed it from loopback and the
/// WebSocket check from anyone, each by its own rule), never an HTTP/1
/// absolute-form target's.
#[tokio::test]
async fn the_scheme_comes_from_trusted_proxies_only() {
    let app = || {
        App::new().route(
            "/scheme",
            get(|s: tern::extract::Scheme| async move { s.as_str() }),
        )
    };
    let ask = |addr, extra: &str, target: &str| {
        let raw =
            format!("GET {target} HTTP/1.1\r\nHost: localhost\r\n{extra}Connection: close\r\n\r\n");
        async move {
            let out = common::raw(addr, raw.as_bytes(), Duration::from_secs(5)).await;
            let out = String::from_utf8_lossy(&out).into_owned();
            out.rsplit("\r\n\r\n").next().unwrap().to_owned()
        }
    };
    // Loopback is a trusted proxy by default.
    let trusted = common::spawn(app()).await;
    for (extra, target, scheme) in [
        ("", "/scheme", "http"),
        ("X-Forwarded-Proto: https\r\n", "/scheme", "https"),
        ("X-Forwarded-Proto: http, https\r\n", "/scheme", "https"),
        ("X-Forwarded-Proto: https, http\r\n", "/scheme", "http"),
        ("X-Forwarded-Proto: gopher\r\n", "/scheme", "http"),
        ("Forwarded: for=1.2.3.4;proto=https\r\n", "/scheme", "https"),
        ("Forwarded: proto=https, for=5.6.7.8\r\n", "/scheme", "http"),
        ("", "https://localhost/scheme", "http"),
    ] {
        assert_eq!(
            ask(trusted.addr, extra, target).await,
            scheme,
            "{extra} {target}"
        );
    }
    // Another network's proxies: the loopback client's word is ignored.
    let mut config = common::config();
    config.trusted_proxies = vec!["10.0.0.0/8".parse().unwrap()];
    let untrusted = common::spawn_with(app(), config).await;
    for extra in ["X-Forwarded-Proto: https\r\n", "Forwarded: proto=https\r\n"] {
        assert_eq!(
            ask(untrusted.addr, extra, "/scheme").await,
            "http",
            "{extra}"
        );
    }
}
