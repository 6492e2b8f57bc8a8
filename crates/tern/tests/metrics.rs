//! `/metrics` over real sockets: the names, types and labels served
//! (pinned), label sets that no request can grow, refusals counted by
//! reason, connections by protocol, and the token in production.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::{collections::BTreeSet, time::Duration};

use bytes::Bytes;
use http_body_util::Full;
use tern::{
    middleware::{from_fn, Next},
    routing::{get, post},
    App, Config, Request, Response,
};

async fn slow() -> &'static str {
    std::future::pending::<()>().await;
    "late"
}

async fn boom() -> &'static str {
    panic!("boom")
}

fn app() -> App {
    App::new()
        .route("/users/{id:u64}", get(|| async { "user" }))
        .route("/echo", post(|body: String| async move { body }))
        .route("/slow", get(slow))
        .route("/panic", get(boom))
}

fn config() -> Config {
    let mut c = common::config();
    c.metrics = true;
    c.timeouts.request = Duration::from_millis(200);
    c
}

/// The sample lines of a scrape (no comments), each as (series, value).
fn samples(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap();
            (series.to_owned(), value.to_owned())
        })
        .collect()
}

fn value(text: &str, series: &str) -> Option<f64> {
    samples(text)
        .into_iter()
        .find(|(s, _)| s == series)
        .map(|(_, v)| v.parse().unwrap())
}

async fn scrape(server: &common::TestServer) -> String {
    let res = common::get(server, "/metrics").await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    assert_eq!(res.header("cache-control"), Some("no-store"));
    res.text()
}

#[tokio::test]
async fn names_types_and_labels_are_pinned() {
    let server = common::spawn_with(app(), config()).await;
    let client = common::client();
    for path in ["/users/1", "/users/2", "/users/x", "/nowhere"] {
        common::get(&server, path).await;
    }
    let echo = common::send(
        &client,
        common::request("POST", &server.url("/echo"))
            .header("content-length", "5")
            .body(Full::new(Bytes::from_static(b"hello")))
            .unwrap(),
    )
    .await;
    assert_eq!(echo.text(), "hello");
    assert_eq!(common::get(&server, "/panic").await.status, 500);
    assert_eq!(common::get(&server, "/slow").await.status, 503);
    // Refused before the app: a head hyper cannot parse, one too large,
    // a body too large by its declared length, a junk Host.
    let bad = common::raw(server.addr, b"NOT HTTP\r\n\r\n", Duration::from_millis(300)).await;
    assert_eq!(common::statuses(&bad), [400]);
    let huge = format!(
        "GET / HTTP/1.1\r\nhost: a\r\nx-big: {}\r\n\r\n",
        "x".repeat(20_000)
    );
    let huge = common::raw(server.addr, huge.as_bytes(), Duration::from_millis(300)).await;
    assert_eq!(common::statuses(&huge), [431]);
    let large = common::raw(
        server.addr,
        b"POST /echo HTTP/1.1\r\nhost: a\r\ncontent-length: 99999999999\r\n\r\n",
        Duration::from_millis(300),
    )
    .await;
    assert_eq!(common::statuses(&large), [413]);
    let junk = common::raw(
        server.addr,
        b"GET /users/1 HTTP/1.1\r\nhost: a:80@b\r\n\r\n",
        Duration::from_millis(300),
    )
    .await;
    assert_eq!(common::statuses(&junk), [400]);

    let text = scrape(&server).await;
    // Every family Tern serves, with its type, in order.
    let types: Vec<&str> = text.lines().filter(|l| l.starts_with("# TYPE")).collect();
    assert_eq!(
        types,
        [
            "# TYPE tern_rejections_total counter",
            "# TYPE tern_connections_open gauge",
            "# TYPE tern_connections_total counter",
            "# TYPE tern_info gauge",
            "# TYPE tern_http_requests_in_flight gauge",
            "# TYPE tern_http_requests_total counter",
            "# TYPE tern_http_request_duration_seconds histogram",
            "# TYPE tern_http_request_body_bytes_total counter",
            "# TYPE tern_http_response_body_bytes_total counter",
            "# TYPE process_cpu_seconds_total counter",
            "# TYPE process_start_time_seconds gauge",
            "# TYPE process_resident_memory_bytes gauge",
            "# TYPE process_virtual_memory_bytes gauge",
            "# TYPE process_open_fds gauge",
            "# TYPE process_max_fds gauge",
            "# TYPE process_threads gauge",
        ],
        "{text}"
    );
    let requests: BTreeSet<String> = samples(&text)
        .into_iter()
        .filter(|(s, _)| s.starts_with("tern_http_requests_total"))
        .map(|(s, v)| format!("{s} {v}"))
        .collect();
    let want: BTreeSet<String> = [
        r#"tern_http_requests_total{route="/users/{id:u64}",method="GET",status="2xx"} 2"#,
        r#"tern_http_requests_total{route="(unmatched)",method="GET",status="4xx"} 2"#,
        r#"tern_http_requests_total{route="/echo",method="POST",status="2xx"} 1"#,
        r#"tern_http_requests_total{route="/panic",method="GET",status="5xx"} 1"#,
        r#"tern_http_requests_total{route="/slow",method="GET",status="5xx"} 1"#,
        r#"tern_http_requests_total{route="(refused)",method="other",status="4xx"} 2"#,
        r#"tern_http_requests_total{route="(refused)",method="POST",status="4xx"} 1"#,
        r#"tern_http_requests_total{route="(refused)",method="GET",status="4xx"} 1"#,
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(requests, want, "{text}");
    for (reason, n) in [
        ("parse", 1.0),
        ("head_too_large", 1.0),
        ("body_too_large", 1.0),
        ("host", 1.0),
        ("panic", 1.0),
        ("request_timeout", 1.0),
        ("framing", 0.0),
        ("max_connections", 0.0),
        ("header_timeout", 0.0),
        ("slow_reader", 0.0),
        ("uri_too_long", 0.0),
        ("content_coding", 0.0),
    ] {
        assert_eq!(
            value(
                &text,
                &format!(r#"tern_rejections_total{{reason="{reason}"}}"#)
            ),
            Some(n),
            "{reason}: {text}"
        );
    }
    // The scrape itself is in flight while it is written.
    assert_eq!(value(&text, "tern_http_requests_in_flight"), Some(1.0));
    let users = r#"route="/users/{id:u64}""#;
    assert_eq!(
        value(
            &text,
            &format!("tern_http_request_duration_seconds_count{{{users}}}")
        ),
        Some(2.0)
    );
    assert_eq!(
        value(
            &text,
            &format!(r#"tern_http_request_duration_seconds_bucket{{{users},le="+Inf"}}"#)
        ),
        Some(2.0)
    );
    assert_eq!(
        value(
            &text,
            r#"tern_http_request_duration_seconds_bucket{route="/slow",le="0.1"}"#
        ),
        Some(0.0),
        "the timed-out request took the request timeout (200 ms)"
    );
    assert_eq!(
        value(
            &text,
            r#"tern_http_request_body_bytes_total{route="/echo"}"#
        ),
        Some(5.0)
    );
    assert_eq!(
        value(
            &text,
            r#"tern_http_response_body_bytes_total{route="/echo"}"#
        ),
        Some(5.0)
    );
    assert_eq!(
        value(
            &text,
            &format!(r#"tern_info{{version="{}"}}"#, env!("CARGO_PKG_VERSION"))
        ),
        Some(1.0)
    );
    let rss = value(&text, "process_resident_memory_bytes").unwrap();
    assert!(rss > 1e6, "{rss}");
    assert!(value(&text, "process_open_fds").unwrap() >= 3.0);
    // No label value comes from a request: no raw path anywhere.
    for raw in ["/users/1", "/users/x", "/nowhere", "a:80@b"] {
        assert!(!text.contains(&format!("\"{raw}\"")), "{raw} in {text}");
    }
    promtool_accepts(&text);
    server.shutdown().await;
}

/// `promtool check metrics` (Prometheus's own linter) on a scrape, when
/// it is installed (`.ci/run` installs it).
fn promtool_accepts(text: &str) {
    use std::io::Write as _;
    let Ok(mut child) = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    else {
        tern::test::skip("promtool is not installed (Debian: apt-get install prometheus)");
        return;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn a_thousand_random_paths_add_no_series() {
    let server = common::spawn_with(app(), config()).await;
    let client = common::client();
    let get = |path: String| {
        common::send(
            &client,
            common::request("GET", &server.url(&path))
                .body(Full::default())
                .unwrap(),
        )
    };
    // The fixed labels a scan can reach, and the scrape's own route,
    // once each: their series exist before the scan.
    assert_eq!(get("/first-404".to_owned()).await.status, 404);
    assert_eq!(get("/%ff".to_owned()).await.status, 400);
    scrape(&server).await;
    let series = |text: &str| -> BTreeSet<String> {
        samples(text)
            .into_iter()
            .map(|(s, _)| s)
            .filter(|s| !s.starts_with("process_"))
            .collect()
    };
    let before = series(&scrape(&server).await);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..1000 {
        let mut path = String::from("/");
        for _ in 0..16 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            path.push(char::from(
                b"abcdefghijklmnopqrstuvwxyz0123456789-_.~%"[(seed % 41) as usize],
            ));
        }
        let status = get(path).await.status.as_u16();
        assert!(status == 404 || status == 400, "{status}");
    }
    let text = scrape(&server).await;
    let after = series(&text);
    assert_eq!(before, after, "a scan of random paths adds no series");
    let unmatched = value(
        &text,
        r#"tern_http_requests_total{route="(unmatched)",method="GET",status="4xx"}"#,
    )
    .unwrap();
    let malformed = value(
        &text,
        r#"tern_http_requests_total{route="(malformed)",method="GET",status="4xx"}"#,
    )
    .unwrap();
    assert_eq!(unmatched + malformed, 1002.0, "{text}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_route_behind_a_layer_that_waits_is_still_named() {
    async fn waits(req: Request, next: Next) -> Response {
        tokio::time::sleep(Duration::from_millis(2)).await;
        next.run(req).await
    }
    let server = common::spawn_with(app().layer(from_fn(waits)), config()).await;
    assert_eq!(common::get(&server, "/users/7").await.text(), "user");
    let text = scrape(&server).await;
    assert_eq!(
        value(
            &text,
            r#"tern_http_requests_total{route="/users/{id:u64}",method="GET",status="2xx"}"#
        ),
        Some(1.0),
        "{text}"
    );
    assert!(!text.contains("(unknown)"), "{text}");
    server.shutdown().await;
}

#[tokio::test]
async fn connections_are_counted_by_protocol() {
    let server = common::spawn_with(app(), config()).await;
    {
        let h2 = common::h2_client();
        let res = common::send(
            &h2,
            common::request("GET", &server.url("/users/1"))
                .body(Full::default())
                .unwrap(),
        )
        .await;
        assert_eq!(res.status, 200);
        let text = scrape(&server).await;
        assert_eq!(
            value(&text, r#"tern_connections_open{protocol="http2"}"#),
            Some(1.0),
            "{text}"
        );
    }
    // The HTTP/2 client is gone: its connection closes.
    let mut text = String::new();
    for _ in 0..50 {
        text = scrape(&server).await;
        if value(&text, r#"tern_connections_open{protocol="http2"}"#) == Some(0.0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        value(&text, r#"tern_connections_open{protocol="http2"}"#),
        Some(0.0),
        "{text}"
    );
    assert_eq!(
        value(&text, r#"tern_connections_total{protocol="http2"}"#),
        Some(1.0)
    );
    assert!(value(&text, r#"tern_connections_total{protocol="http1"}"#).unwrap() >= 1.0);
    server.shutdown().await;
}

#[tokio::test]
async fn openmetrics_when_asked() {
    let server = common::spawn_with(app(), config()).await;
    let res = common::send(
        &common::client(),
        common::request("GET", &server.url("/metrics"))
            .header("accept", "application/openmetrics-text; version=1.0.0")
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(
        res.header("content-type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    assert!(res.text().ends_with("# EOF\n"), "{}", res.text());
    server.shutdown().await;
}

#[tokio::test]
async fn off_by_default() {
    let server = common::spawn(app()).await;
    assert_eq!(common::get(&server, "/metrics").await.status, 404);
    server.shutdown().await;
}

fn production(token: Option<&str>) -> Result<Config, tern::config::ConfigError> {
    let mut settings = vec![
        ("TERN_ENV", "production"),
        ("SECRET_KEY", "k7Qp2vXw9LmN4rTb8YzH3cJf6GdS1aEu"),
        ("ALLOWED_HOSTS", "example.com"),
        ("TERN_METRICS", "on"),
    ];
    if let Some(token) = token {
        settings.push(("METRICS_TOKEN", token));
    }
    let config = Config::from_settings(settings)?;
    config.validate()?;
    Ok(config)
}

#[tokio::test]
async fn production_needs_the_token() {
    let err = production(None).unwrap_err();
    assert_eq!(err.setting(), "METRICS_TOKEN", "{err}");
    let err = production(Some("short")).unwrap_err();
    assert_eq!(err.setting(), "METRICS_TOKEN", "{err}");
    assert!(
        !err.to_string().contains("short"),
        "the value is never printed: {err}"
    );

    let token = "a-scraper-token-0123456789";
    let mut config = production(Some(token)).unwrap();
    config.timeouts.shutdown = Duration::from_secs(10);
    let server = common::spawn_with(app(), config).await;
    let client = common::client();
    // The scraper names the server by its address, not a public host: the
    // metrics, like the health check, answer any host (with the token).
    let ask = |auth: Option<String>| {
        let mut req = common::request("GET", &server.url("/metrics"));
        if let Some(auth) = auth {
            req = req.header("authorization", auth);
        }
        common::send(&client, req.body(Full::default()).unwrap())
    };
    let none = ask(None).await;
    assert_eq!(none.status, 401);
    assert_eq!(none.header("www-authenticate"), Some("Bearer"));
    assert!(none.problem(401)["detail"]
        .as_str()
        .unwrap()
        .contains("METRICS_TOKEN"));
    let wrong = ask(Some(format!("Bearer {}", "x".repeat(token.len())))).await;
    assert_eq!(wrong.status, 401);
    assert_eq!(ask(Some(format!("Bearer {token}x"))).await.status, 401);
    assert_eq!(ask(Some(token.to_owned())).await.status, 401);
    let right = ask(Some(format!("Bearer {token}"))).await;
    assert_eq!(right.status, 200);
    assert!(right.text().contains("tern_http_requests_total"));
    // Other paths still check the host.
    assert_eq!(common::get(&server, "/users/1").await.status, 400);
    server.shutdown().await;
}

/// The dashboard in `docs/operations/dashboard.json` (Grafana's format)
/// reads only metrics that `docs/operations.md` lists, and Prometheus's
/// own parser (`promtool check rules`) takes every query in it.
#[test]
fn the_dashboard_reads_documented_metrics_with_valid_queries() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let docs = std::fs::read_to_string(root.join("docs/operations.md")).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("docs/operations/dashboard.json")).unwrap(),
    )
    .unwrap();
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    let mut n = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            n += 1;
            rules.push_str(&format!(
                "      - record: dashboard:query_{n}\n        expr: {}\n",
                serde_json::to_string(expr).unwrap()
            ));
            // Every metric name in the query, histogram series named by
            // their family.
            let mut rest = expr;
            while let Some(at) = rest.find(|c: char| c.is_ascii_lowercase()) {
                rest = &rest[at..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                let word = &rest[..end];
                rest = &rest[end..];
                if !(word.starts_with("tern_") || word.starts_with("process_")) {
                    continue;
                }
                let family = word.strip_suffix("_bucket").unwrap_or(word);
                assert!(
                    docs.contains(&format!("`{family}`")) || docs.contains(&format!("`{word}`")),
                    "panel `{}` reads `{word}`, which docs/operations.md does not list",
                    panel["title"]
                );
            }
        }
    }
    assert!(n >= 14, "{n} queries");
    let file = std::env::temp_dir().join(format!("tern-dashboard-{}.yml", std::process::id()));
    std::fs::write(&file, rules).unwrap();
    match std::process::Command::new("promtool")
        .args(["check", "rules"])
        .arg(&file)
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "promtool: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => {
            tern::test::skip("promtool is not installed (Debian: apt-get install prometheus)")
        }
    }
    let _ = std::fs::remove_file(&file);
}
