//! The showcase's contract API, as a client meets it over a socket (the
//! binary with every battery installed): a body or a query that breaks
//! its contract in several places gets one `422` listing each place,
//! JSON and CBOR alike (issue 26).
#![allow(clippy::unwrap_used, missing_docs)]

use std::{
    io::{Read, Write},
    net::TcpStream,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_showcase");

/// A showcase process on a free port, killed when dropped.
struct Showcase {
    child: Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl Showcase {
    fn start() -> Showcase {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // One directory per showcase: the tests of this file run in
        // parallel, and one must not delete the other's database.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("tern-contract-errors-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = Command::new(BIN)
            .env("TERN_ADDR", format!("127.0.0.1:{port}"))
            .env("DATABASE_URL", format!("sqlite://{}/app.db", dir.display()))
            .env_remove("COSE_KEYS")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the showcase exited at start"
            );
            assert!(Instant::now() < deadline, "the showcase did not answer");
            std::thread::sleep(Duration::from_millis(50));
        }
        Showcase { child, port, dir }
    }

    /// One request: the status, the `Content-Type` and the body.
    fn send(&self, method: &str, target: &str, content_type: &str, body: &[u8]) -> Answer {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let head = format!(
            "{method} {target} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n\
             Content-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(body).unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&out[..split]).into_owned();
        let status = head[9..12].parse().unwrap();
        let body = &out[split + 4..];
        let doc = serde_json::from_slice(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
        Answer { status, head, doc }
    }
}

impl Drop for Showcase {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct Answer {
    status: u16,
    head: String,
    doc: Value,
}

impl Answer {
    /// The `errors` of a problem, as (pointer, rule) pairs; each with a
    /// detail.
    fn errors(&self) -> Vec<(String, String)> {
        let Some(errors) = self.doc["errors"].as_array() else {
            panic!("no `errors` in: {}\n{}", self.head, self.doc);
        };
        errors
            .iter()
            .map(|e| {
                assert!(
                    !e["detail"].as_str().unwrap_or_default().is_empty(),
                    "an error without a detail: {e}"
                );
                (
                    e["pointer"].as_str().unwrap().to_owned(),
                    e["rule"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }
}

fn cbor(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::ser::into_writer(value, &mut out).unwrap();
    out
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(p, r)| ((*p).to_owned(), (*r).to_owned()))
        .collect()
}

#[test]
fn every_missing_and_invalid_field_is_listed_in_one_422() {
    let showcase = Showcase::start();
    for (body, expected) in [
        // Nothing at all: each required field, by its pointer.
        (
            json!({}),
            &[
                ("/name", "required"),
                ("/qty", "required"),
                ("/owner", "required"),
            ][..],
        ),
        // One missing, one of the wrong type, one breaking its rule, and
        // one the contract does not have.
        (
            json!({"name": "", "qty": "three", "colour": "red"}),
            &[
                ("/name", "length"),
                ("/qty", "type"),
                ("/owner", "required"),
                ("/colour", "additionalProperties"),
            ][..],
        ),
        // Missing, of the wrong type, and breaking its rule inside a list.
        (
            json!({"qty": 0, "owner": 7, "tags": ["", "ok"]}),
            &[
                ("/name", "required"),
                ("/qty", "range"),
                ("/owner", "type"),
                ("/tags/0", "length"),
            ][..],
        ),
    ] {
        let expected = pairs(expected);
        for (content_type, bytes) in [
            ("application/json", serde_json::to_vec(&body).unwrap()),
            ("application/cbor", cbor(&body)),
        ] {
            let answer = showcase.send("POST", "/items", content_type, &bytes);
            assert_eq!(answer.status, 422, "{content_type} {body}: {}", answer.doc);
            assert!(
                answer.head.contains("application/problem+json"),
                "{}",
                answer.head
            );
            assert_eq!(answer.errors(), expected, "{content_type} {body}");
            let detail = answer.doc["detail"].as_str().unwrap();
            assert!(
                detail.starts_with(&format!("{} values break", expected.len())),
                "{detail}"
            );
        }
    }
    // A valid item is still created, and what does not parse is still 400.
    let good = json!({"name": "saw", "qty": 2, "owner": "ada@example.com"});
    let answer = showcase.send(
        "POST",
        "/items",
        "application/json",
        &serde_json::to_vec(&good).unwrap(),
    );
    assert_eq!(answer.status, 200, "{}", answer.doc);
    let answer = showcase.send("POST", "/items", "application/json", b"{\"name\":");
    assert_eq!(answer.status, 400, "{}", answer.doc);
    let answer = showcase.send("POST", "/items", "application/cbor", &[0xff, 0x00]);
    assert_eq!(answer.status, 400, "{}", answer.doc);
}

#[test]
fn a_query_contract_lists_every_bad_parameter_with_422() {
    let showcase = Showcase::start();
    let long = "x".repeat(41);
    for (target, expected) in [
        (
            format!("/items?limit=500&q={long}"),
            &[("/limit", "range"), ("/q", "length")][..],
        ),
        (
            "/items?limit=five&page=2".to_owned(),
            &[("/limit", "type"), ("/page", "additionalProperties")][..],
        ),
    ] {
        let answer = showcase.send("GET", &target, "text/plain", b"");
        assert_eq!(answer.status, 422, "{target}: {}", answer.doc);
        assert_eq!(answer.errors(), pairs(expected), "{target}");
    }
    // What cannot be parsed at all stays a 400.
    let answer = showcase.send("GET", "/items?q=%ZZ", "text/plain", b"");
    assert_eq!(answer.status, 400, "{}", answer.doc);
    let answer = showcase.send("GET", "/items?limit=5", "text/plain", b"");
    assert_eq!(answer.status, 200, "{}", answer.doc);
}
