//! Malformed and hostile HTTP/1.1 requests, sent as raw bytes to a real
//! server: each must be refused (a 4xx or a closed connection), never
//! answered 2xx; the valid-but-sneaky ones (pipelining, smuggling
//! attempts) must be framed exactly as RFC 9112 says. The server must
//! survive the whole table.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::{net::SocketAddr, time::Duration};

use tern::{
    extract::Host,
    routing::{get, post},
    App,
};
use tokio::{io::AsyncWriteExt, net::TcpStream};

// The table of cases, shared with `tests/h1_engines.rs`.
#[path = "common/hostile_cases.rs"]
mod hostile_cases;
use hostile_cases::*;

/// One response parsed out of a raw byte stream.
struct Parsed {
    status: u16,
    head: String,
    body: Vec<u8>,
}

/// Splits a raw byte stream into responses (Content-Length, chunked or
/// close-delimited bodies). Stops at the first thing that is not a
/// response.
fn parse_responses(mut bytes: &[u8]) -> Vec<Parsed> {
    let mut out = Vec::new();
    while let Some(end) = find(bytes, b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
        let Some(status) = head
            .strip_prefix("HTTP/1.1 ")
            .and_then(|s| s.get(..3))
            .and_then(|s| s.parse().ok())
        else {
            break;
        };
        let lower = head.to_ascii_lowercase();
        let rest = &bytes[end + 4..];
        let length = lower
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok());
        let (body, rest) = if let Some(len) = length {
            let len = len.min(rest.len());
            (rest[..len].to_vec(), &rest[len..])
        } else if lower.contains("transfer-encoding: chunked") {
            dechunk(rest)
        } else {
            (rest.to_vec(), &rest[rest.len()..])
        };
        out.push(Parsed { status, head, body });
        bytes = rest;
    }
    out
}

fn dechunk(mut bytes: &[u8]) -> (Vec<u8>, &[u8]) {
    let mut body = Vec::new();
    while let Some(eol) = find(bytes, b"\r\n") {
        let size = std::str::from_utf8(&bytes[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok())
            .unwrap_or(0);
        bytes = &bytes[eol + 2..];
        if size == 0 {
            let end = find(bytes, b"\r\n").map_or(bytes.len(), |i| i + 2);
            return (body, &bytes[end..]);
        }
        let size = size.min(bytes.len());
        body.extend_from_slice(&bytes[..size]);
        bytes = &bytes[(size + 2).min(bytes.len())..];
    }
    (body, bytes)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut shown: String = text.escape_debug().collect();
    if shown.len() > 400 {
        let cut = (0..=400)
            .rev()
            .find(|&i| shown.is_char_boundary(i))
            .unwrap_or(0);
        shown.truncate(cut);
        shown.push_str(&format!("… ({} bytes)", bytes.len()));
    }
    shown
}

/// `Ok` when the server did what `expect` says with `got`.
fn judge(expect: Expect, got: &[u8], closed: bool) -> Result<(), String> {
    let counted = common::statuses(got);
    let parsed = parse_responses(got);
    let statuses: Vec<u16> = parsed.iter().map(|r| r.status).collect();
    if counted != statuses {
        return Err(format!(
            "the stream holds {counted:?} but parses as {statuses:?}"
        ));
    }
    if let Some(ok) = statuses.iter().find(|s| (200..300).contains(*s)) {
        if !matches!(expect, Expect::Exchange { .. }) {
            return Err(format!("answered {ok} to a malformed request"));
        }
    }
    match expect {
        Expect::Reject => match statuses.first() {
            None => Ok(()),
            Some(s) if (400..500).contains(s) && statuses.len() == 1 => Ok(()),
            Some(_) => Err(format!("expected one 4xx or none, got {statuses:?}")),
        },
        Expect::Status(allowed) => match statuses.as_slice() {
            [s] if allowed.contains(s) => Ok(()),
            _ => Err(format!("expected one of {allowed:?}, got {statuses:?}")),
        },
        Expect::Problem(status) => match parsed.as_slice() {
            [r] if r.status == status
                && r.head
                    .to_ascii_lowercase()
                    .contains("content-type: application/problem+json") =>
            {
                Ok(())
            }
            _ => Err(format!(
                "expected one {status} problem+json, got {statuses:?}"
            )),
        },
        Expect::Closed => {
            if !statuses.is_empty() {
                Err(format!("expected no HTTP/1 response, got {statuses:?}"))
            } else if !closed {
                Err("expected the connection to be closed".to_owned())
            } else {
                Ok(())
            }
        }
        Expect::Exchange { responses, closes } => {
            let want: Vec<u16> = responses.iter().map(|(s, _)| *s).collect();
            if statuses != want {
                return Err(format!("expected responses {want:?}, got {statuses:?}"));
            }
            for (i, ((_, body), got)) in responses.iter().zip(&parsed).enumerate() {
                if let Some(body) = body {
                    if got.body != body.as_bytes() {
                        return Err(format!(
                            "response {i}: expected body {body:?}, got {:?}",
                            show(&got.body)
                        ));
                    }
                }
            }
            if closes && !closed {
                return Err("expected the connection to be closed after the responses".to_owned());
            }
            Ok(())
        }
    }
}

fn app() -> App {
    App::new()
        .route("/", get(|| async { "ok" }))
        .route("/echo", post(|body: String| async move { body }))
        .route("/host", get(|Host(host): Host| async move { host }))
}

/// Sends every case on its own connection, all at once (a connection left
/// open costs the quiet wait once, not once per case); returns a message
/// per case the server got wrong.
async fn run(addr: SocketAddr, table: &[Case]) -> Vec<String> {
    let mut tasks = tokio::task::JoinSet::new();
    for (i, case) in table.iter().enumerate() {
        let bytes = case.bytes.clone();
        tasks.spawn(async move {
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            // The server may close before reading everything; what it
            // answered is still to be read.
            let _ = stream.write_all(&bytes).await;
            let (got, closed) = common::read_until_quiet(&mut stream, QUIET).await;
            (i, got, closed)
        });
    }
    let outcomes = tokio::time::timeout(Duration::from_secs(20), tasks.join_all())
        .await
        .expect("every case finishes within 20 s");
    let mut failures = Vec::new();
    for (i, got, closed) in outcomes {
        let case = &table[i];
        if let Err(why) = judge(case.expect, &got, closed) {
            failures.push(format!(
                "case `{}` ({:?}): {why}\n    sent: {}\n    got ({}): {}",
                case.name,
                case.expect,
                show(&case.bytes),
                if closed { "then closed" } else { "still open" },
                show(&got)
            ));
        }
    }
    failures.sort();
    failures
}

const QUIET: Duration = Duration::from_millis(1500);

#[tokio::test]
async fn hostile_requests_are_refused_and_the_server_survives() {
    let server = common::spawn(app()).await;
    let table: Vec<Case> = cases().into_iter().chain(sneaky_cases()).collect();
    assert!(table.len() >= 45, "{} cases", table.len());

    let failures = run(server.addr, &table).await;
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        table.len(),
        failures.join("\n")
    );

    let res = common::get(&server, "/").await;
    assert_eq!(
        res.status, 200,
        "the server no longer answers after the table"
    );
    assert_eq!(res.text(), "ok");
    server.shutdown().await;
}

/// With `ALLOWED_HOSTS` set (as production requires), the host Tern checks
/// is the host the handler sees, however the client spells it.
#[tokio::test]
async fn allowed_hosts_hold_against_hostile_host_headers() {
    let config = common::config().with_allowed_hosts(["good.example"]);
    let server = common::spawn_with(app(), config).await;
    let host = |headers: &str| format!("GET /host HTTP/1.1\r\n{headers}\r\n").into_bytes();
    let served = |responses| Expect::Exchange {
        responses,
        closes: false,
    };
    const GOOD: &[(u16, Option<&str>)] = &[(200, Some("good.example"))];
    let table = vec![
        case(
            "an allowed host",
            host("Host: good.example\r\n"),
            served(GOOD),
        ),
        case(
            "an allowed host with a port",
            host("Host: good.example:8080\r\n"),
            served(&[(200, Some("good.example:8080"))]),
        ),
        case(
            "an allowed host in capitals",
            host("Host: GOOD.example\r\n"),
            served(&[(200, Some("GOOD.example"))]),
        ),
        // RFC 9112 §3.2: HTTP/1.1 without Host MUST get 400.
        case("no Host", host(""), Expect::Problem(400)),
        case("an empty Host", host("Host: \r\n"), Expect::Problem(400)),
        case(
            "another host",
            host("Host: evil.example\r\n"),
            Expect::Problem(400),
        ),
        case(
            "the allowed host as a prefix",
            host("Host: good.example.evil.net\r\n"),
            Expect::Problem(400),
        ),
        case(
            "the allowed host as a suffix",
            host("Host: notgood.example\r\n"),
            Expect::Problem(400),
        ),
        case(
            "userinfo before the allowed host",
            host("Host: evil@good.example\r\n"),
            Expect::Problem(400),
        ),
        case(
            "a bad host, then the allowed one",
            host("Host: evil.example\r\nHost: good.example\r\n"),
            Expect::Problem(400),
        ),
        // RFC 9112 §3.2: two Host lines MUST get 400.
        case(
            "the allowed host, then a bad one",
            host("Host: good.example\r\nHost: evil.example\r\n"),
            Expect::Problem(400),
        ),
        // RFC 9112 §3.2.2: with an absolute-form target, its authority is
        // the host and the Host header is ignored.
        case(
            "absolute-form naming the allowed host",
            "GET http://good.example/host HTTP/1.1\r\nHost: evil.example\r\n\r\n",
            served(GOOD),
        ),
        case(
            "absolute-form naming another host",
            "GET http://evil.example/host HTTP/1.1\r\nHost: good.example\r\n\r\n",
            Expect::Problem(400),
        ),
        case("NUL in Host", host("Host: good.example\0\r\n"), BAD),
        case(
            "space inside Host",
            host("Host: good .example\r\n"),
            Expect::Problem(400),
        ),
    ];

    let failures = run(server.addr, &table).await;
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        table.len(),
        failures.join("\n")
    );
    server.shutdown().await;
}

/// Issue 10: a request hyper cannot parse (a garbage request line, a head
/// over the limit) gets problem+json with a request ID, not a bare status.
#[tokio::test]
async fn unparsable_requests_get_problem_json() {
    let server = common::spawn(App::new().route("/", get(|| async { "ok" }))).await;
    let big = format!(
        "GET / HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\n\r\n",
        "a".repeat(20_000)
    );
    for (bytes, status, detail) in [
        (
            &b"HELLO THERE\r\n\r\n"[..],
            400,
            "not a valid HTTP/1.1 request",
        ),
        (
            &b"GET / HTTP/1.1\r\nHost: a\r\nbad header\r\n\r\n"[..],
            400,
            "header lines",
        ),
        (
            &b"G@T / HTTP/1.1\r\nHost: a\r\n\r\n"[..],
            400,
            "request line",
        ),
        (
            big.as_bytes(),
            431,
            "larger than the limit of 16384 bytes (TERN_MAX_HEAD_BYTES)",
        ),
    ] {
        let out = common::raw(server.addr, bytes, Duration::from_secs(2)).await;
        let text = String::from_utf8_lossy(&out);
        let (head, body) = text.split_once("\r\n\r\n").expect("a response");
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{text}");
        assert!(
            head.contains("content-type: application/problem+json"),
            "{text}"
        );
        assert!(head.contains("x-request-id: "), "{text}");
        assert!(head.contains("connection: close"), "{text}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{text}"
        );
        let doc: serde_json::Value = serde_json::from_str(body).expect("json");
        assert_eq!(doc["status"], status, "{text}");
        assert!(doc["detail"].as_str().unwrap().contains(detail), "{text}");
    }
    // A handler's own empty 400 is not touched.
    let server2 =
        common::spawn(App::new().route("/", get(|| async { tern::StatusCode::BAD_REQUEST }))).await;
    let out = common::raw(
        server2.addr,
        b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        Duration::from_secs(2),
    )
    .await;
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.starts_with("HTTP/1.1 400 ") && text.contains("content-length: 0"),
        "{text}"
    );
    server.shutdown().await;
    server2.shutdown().await;
}
