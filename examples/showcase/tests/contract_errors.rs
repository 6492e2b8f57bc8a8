//! The showcase's contract API, as a client meets it over a socket (the
//! binary with every battery installed): a body or a query that breaks
//! its contract in several places gets one `422` listing each place,
//! JSON and CBOR alike, and sealed when the request was (issue 26).
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use serde_json::{json, Value};
use support::{parts, request_bytes, Showcase};

impl Showcase {
    /// A showcase on a free port, with a database of its own.
    fn start() -> Showcase {
        Showcase::start_with(None)
    }

    /// A showcase with `COSE_KEYS`, when given.
    fn start_with(cose_keys: Option<&str>) -> Showcase {
        Showcase::inheriting("contract-errors", cose_keys)
    }

    /// One request: the status, the `Content-Type` and the body.
    fn send(&self, method: &str, target: &str, content_type: &str, body: &[u8]) -> Answer {
        self.send_accepting(method, target, content_type, "application/json", body)
    }

    /// One request with its own `Accept`.
    fn send_accepting(
        &self,
        method: &str,
        target: &str,
        content_type: &str,
        accept: &str,
        body: &[u8],
    ) -> Answer {
        let mut raw = format!(
            "{method} {target} HTTP/1.1\r\nHost: localhost\r\nAccept: {accept}\r\n\
             Content-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        raw.extend_from_slice(body);
        let out = request_bytes(self.port, &raw).unwrap();
        let (status, head, body) = parts(&out);
        let doc = serde_json::from_slice(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
        Answer {
            status,
            head,
            doc,
            raw: body.to_vec(),
        }
    }
}

struct Answer {
    status: u16,
    head: String,
    doc: Value,
    /// The body's bytes (a sealed answer is not JSON).
    raw: Vec<u8>,
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

#[test]
fn a_sealed_body_that_breaks_its_contract_gets_a_sealed_422() {
    use base64::Engine as _;
    use tern_contract::cose::{Keyring, Seal};

    let keys = format!(
        "k1:A256GCM:{}",
        base64::engine::general_purpose::STANDARD.encode([0x11; 32])
    );
    let showcase = Showcase::start_with(Some(&keys));
    let config = tern::Config::from_settings([("COSE_KEYS", keys.as_str())]).unwrap();
    let client: Keyring = tern::settings::load("cose", &config).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    // Behind the showcase's layers and its HTML problem renderer: the
    // `422` quotes the client's value, so it must not go out in clear.
    let secret = "secret@example.com-as-qty";
    let body = cbor(&json!({"name": "", "qty": secret, "owner": "ada@example.com"}));
    for accept in ["application/cose", "*/*", "text/html"] {
        // A fresh message each time (a resent one is a replay).
        let sealed = client.seal(Seal::Encrypt0, b"k1", &body).unwrap();
        let answer = showcase.send_accepting("POST", "/items", "application/cose", accept, &sealed);
        assert_eq!(answer.status, 422, "{accept}: {}", answer.head);
        assert!(
            answer.head.contains("content-type: application/cose"),
            "{accept}: {}",
            answer.head
        );
        assert!(
            !answer
                .raw
                .windows(secret.len())
                .any(|w| w == secret.as_bytes()),
            "{accept}: the problem went out in clear"
        );
        let opened = runtime.block_on(client.open(&answer.raw)).unwrap();
        let problem: Value = ciborium::de::from_reader(&opened.payload[..]).unwrap();
        let errors: Vec<&str> = problem["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["pointer"].as_str().unwrap())
            .collect();
        assert_eq!(errors, ["/name", "/qty"], "{accept}: {problem}");
    }
    // Sealed with a key the showcase does not hold: refused before it
    // is opened, in plaintext, without the payload.
    let stranger_keys = format!(
        "zz:A256GCM:{}",
        base64::engine::general_purpose::STANDARD.encode([0x44; 32])
    );
    let stranger: Keyring = tern::settings::load(
        "cose",
        &tern::Config::from_settings([("COSE_KEYS", stranger_keys.as_str())]).unwrap(),
    )
    .unwrap();
    let sealed = stranger.seal(Seal::Encrypt0, b"zz", &body).unwrap();
    let answer = showcase.send_accepting("POST", "/items", "application/cose", "*/*", &sealed);
    assert_eq!(answer.status, 401, "{}", answer.doc);
    assert!(
        answer.head.contains("application/problem+json"),
        "{}",
        answer.head
    );
    assert!(!answer.doc.to_string().contains(secret), "{}", answer.doc);
}
