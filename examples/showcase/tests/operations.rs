//! What an operator sees of the composed showcase (every battery and
//! layer installed) under production settings: `/metrics` behind its
//! token, route patterns as labels, counts that match a parallel burst of
//! the same request exactly, and JSON log lines that each carry their
//! request's span.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::{
    io::Read,
    process::{Command, Stdio},
    time::Duration,
};

use support::{
    body, header, isolated, request, scratch, sqlite, status, wait_for, Showcase, STRONG,
};

const TOKEN: &str = "a-metrics-token-for-the-test-0123";

fn production(dir: &std::path::Path) -> Command {
    let mut command = isolated();
    command
        .current_dir(dir)
        .env("TERN_ENV", "production")
        .env("SECRET_KEY", STRONG)
        .env("ALLOWED_HOSTS", "localhost")
        .env("SHOWCASE_ADMIN_PASSWORD", "an operator's own password")
        .env("DATABASE_URL", sqlite(dir))
        .env("TERN_METRICS", "on")
        .env("METRICS_TOKEN", TOKEN)
        .env("TERN_LOG_FORMAT", "json")
        .env("TERN_ACCESS_LOG", "on");
    command
}

fn get(port: u16, path: &str, host: &str, auth: Option<&str>) -> String {
    let auth = auth.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
    request(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{auth}Connection: close\r\n\r\n"),
    )
    .unwrap()
}

fn value(metrics: &str, series: &str) -> Option<f64> {
    metrics.lines().find_map(|l| {
        let (s, v) = l.rsplit_once(' ')?;
        (s == series).then(|| v.parse().unwrap())
    })
}

#[test]
fn metrics_and_json_logs_of_the_composed_showcase_in_production() {
    let dir = scratch("operations");
    let migrated = production(&dir)
        .arg("migrate")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(migrated.success());
    let mut command = production(&dir);
    command.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut server = Showcase::spawn(command, dir);
    let port = server.port;
    wait_for(
        &mut server.child,
        "the showcase",
        Duration::from_secs(20),
        || (status(&get(port, "/health", "localhost", None)) == 200).then_some(()),
    );

    // The metrics need their token in production, whatever the host.
    let refused = get(port, "/metrics", "10.1.2.3:3000", None);
    assert_eq!(status(&refused), 401, "{refused}");
    assert_eq!(header(&refused, "www-authenticate"), Some("Bearer"));
    let wrong = get(
        port,
        "/metrics",
        "10.1.2.3:3000",
        Some("Bearer not-the-token-at-all-000"),
    );
    assert_eq!(status(&wrong), 401);

    // Readiness answers the pod's address too.
    let ready = get(port, "/ready", "10.1.2.3:3000", None);
    assert_eq!(status(&ready), 200, "{ready}");

    // A parallel burst of the same request: every one counted, once.
    const BURST: usize = 32;
    let answers: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..BURST)
            .map(|_| s.spawn(|| status(&get(port, "/users/42", "localhost", None))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(answers.iter().all(|&s| s == 200), "{answers:?}");
    // A parallel burst of wrong passwords for one account: each is
    // counted once, as failed or throttled.
    const LOGINS: usize = 12;
    let json = r#"{"username":"admin","password":"not the password at all"}"#;
    let login = format!(
        "POST /auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{json}",
        json.len()
    );
    let refused: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..LOGINS)
            .map(|_| s.spawn(|| status(&request(port, &login).unwrap())))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(refused.iter().all(|&s| s == 401 || s == 429), "{refused:?}");
    let throttled = refused.iter().filter(|&&s| s == 429).count();

    // A page and a refusal by host.
    assert_eq!(status(&get(port, "/", "localhost", None)), 200);
    assert_eq!(status(&get(port, "/", "evil.example", None)), 400);

    let scraped = get(
        port,
        "/metrics",
        "10.1.2.3:3000",
        Some(&format!("Bearer {TOKEN}")),
    );
    assert_eq!(status(&scraped), 200, "{scraped}");
    let metrics = body(&scraped);
    assert_eq!(
        value(
            metrics,
            r#"tern_http_requests_total{route="/users/{id:u64}",method="GET",status="2xx"}"#
        ),
        Some(BURST as f64),
        "{metrics}"
    );
    assert_eq!(
        value(
            metrics,
            r#"tern_http_requests_total{route="/",method="GET",status="2xx"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        value(metrics, r#"tern_rejections_total{reason="host"}"#),
        Some(1.0),
        "{metrics}"
    );
    assert!(!metrics.contains("\"/users/42\""), "no raw path is a label");
    // The batteries' metrics, in the same answer.
    let logins = |result: &str| {
        value(
            metrics,
            &format!(r#"tern_auth_logins_total{{result="{result}"}}"#),
        )
        .unwrap_or(0.0)
    };
    assert_eq!(
        logins("failed") + logins("throttled"),
        LOGINS as f64,
        "{metrics}"
    );
    assert_eq!(logins("throttled"), throttled as f64, "{metrics}");
    assert_eq!(
        value(metrics, r#"tern_rejections_total{reason="throttle"}"#),
        Some(throttled as f64)
    );
    for family in [
        "tern_db_pool_max",
        r#"tern_connections_open{protocol="websocket"}"#,
        r#"tern_connections_open{protocol="sse"}"#,
        r#"tern_rejections_total{reason="rate_limit"}"#,
        r#"tern_rejections_total{reason="csrf"}"#,
        "tern_realtime_subscribers",
    ] {
        assert!(value(metrics, family).is_some(), "{family}: {metrics}");
    }
    // The production checklist at start, for operators who do not run
    // `check`.
    assert_eq!(
        value(
            metrics,
            r#"tern_check_findings{setting="METRICS_TOKEN",verdict="ok"}"#
        ),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        value(
            metrics,
            r#"tern_check_findings{setting="TERN_ENV",verdict="ok"}"#
        ),
        Some(1.0)
    );

    // Stop it and read what it wrote: one JSON object per line.
    let _ = server.child.kill();
    let _ = server.child.wait();
    let mut out = String::new();
    server
        .child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let burst: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["target"] == "tern::access" && l["path"] == "/users/42")
        .collect();
    assert_eq!(burst.len(), BURST, "{out}");
    let mut ids: Vec<&str> = burst
        .iter()
        .map(|l| {
            let span = &l["span"];
            assert_eq!(span["route"], "/users/{id:u64}", "{l}");
            assert_eq!(span["status"], 200, "{l}");
            assert_eq!(span["client"], "127.0.0.1", "{l}");
            assert_eq!(span["request_id"], l["request_id"], "{l}");
            span["request_id"].as_str().unwrap()
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), BURST, "each request its own ID");
    assert!(
        !out.contains(STRONG) && !out.contains(TOKEN),
        "a secret was logged"
    );
}
