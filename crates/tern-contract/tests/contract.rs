//! Contracts over real sockets: every rule family, every error shape,
//! responses checked, and the JSON Schema of the same rules.
#![allow(clippy::unwrap_used, missing_docs, dead_code)]

use std::{collections::BTreeMap, net::SocketAddr};

use serde_json::{json, Value};
use tern::{routing::post, App, Config};
use tern_contract::{contract, Contract, Valid};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::oneshot,
};

#[contract]
#[derive(Debug, Clone)]
struct CreateItem {
    #[contract(length(min = 1, max = 80))]
    name: String,
    #[contract(range(min = 1, max = 1000))]
    qty: u32,
    #[contract(email)]
    owner: String,
    #[contract(length(max = 8), each(length(max = 20)))]
    tags: Vec<String>,
    #[contract(pattern = "[a-z0-9-]+")]
    slug: String,
    #[contract(range(min = 0.0, max = 1.0))]
    ratio: f64,
    #[contract(uri)]
    homepage: Option<String>,
    #[contract(uuid)]
    batch: Option<String>,
    #[contract(date_time)]
    due: Option<String>,
    #[contract(custom = even)]
    pairs: u32,
    kind: Kind,
    #[contract(length(max = 2))]
    address: Option<Vec<Address>>,
    #[serde(default)]
    #[contract(length(max = 3))]
    labels: BTreeMap<String, u8>,
}

fn even(n: &u32) -> Result<(), String> {
    if n.is_multiple_of(2) {
        Ok(())
    } else {
        Err(format!("must be even (it is {n})"))
    }
}

#[contract]
#[derive(Debug, Clone)]
#[serde(rename_all = "camelCase")]
struct Address {
    #[contract(length(min = 1))]
    street_name: String,
    #[contract(pattern = "[0-9]{5}")]
    postal_code: String,
}

#[contract]
#[derive(Debug, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Tool,
    SparePart,
}

#[contract]
struct Ack {
    #[contract(range(min = 1))]
    id: u64,
    #[contract(length(min = 1))]
    name: String,
}

fn good() -> Value {
    json!({
        "name": "hammer", "qty": 3, "owner": "ada@example.com", "tags": ["tools"],
        "slug": "hammer-1", "ratio": 0.5, "homepage": "https://example.com",
        "batch": "67e55044-10b1-426f-9247-bb680e5fe0c8", "due": "2026-11-30T12:00:00Z",
        "pairs": 2, "kind": "spare_part",
        "address": [{"streetName": "Main St", "postalCode": "12345"}],
    })
}

async fn create(Valid(item): Valid<CreateItem>) -> Valid<Ack> {
    // `qty` 999 answers an Ack that breaks its contract (id 0): a bug.
    let id = if item.qty == 999 {
        0
    } else {
        u64::from(item.qty)
    };
    Valid(Ack {
        id,
        name: item.name,
    })
}

fn app() -> App {
    App::new().route("/items", post(create))
}

struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

async fn spawn(config: Config) -> Server {
    let service = app().build_with(config).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(
        tern::Server::new(service).serve_with_shutdown(listener, async move {
            let _ = rx.await;
        }),
    );
    Server {
        addr,
        stop: Some(tx),
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// One `POST /items` over a socket: the status, the head, the body.
async fn post_items(server: &Server, content_type: &str, body: &[u8]) -> (u16, String, Value) {
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /items HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    (
        status,
        head.to_owned(),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

async fn post_json(server: &Server, value: &Value) -> (u16, Value) {
    let (status, _, body) =
        post_items(server, "application/json", value.to_string().as_bytes()).await;
    (status, body)
}

/// `(pointer, rule)` of every error of a 422.
fn errors(body: &Value) -> Vec<(String, String)> {
    body["errors"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|e| {
            (
                e["pointer"].as_str().unwrap().to_owned(),
                e["rule"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn with(changes: &[(&str, Value)]) -> Value {
    let mut v = good();
    for (key, value) in changes {
        v[*key] = value.clone();
    }
    v
}

#[tokio::test]
async fn a_valid_request_gets_its_answer() {
    let server = spawn(Config::default()).await;
    let (status, body) = post_json(&server, &good()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"id": 3, "name": "hammer"}));
    // Optional fields may be absent or null; a map may be absent (default).
    let mut v = good();
    v["homepage"] = Value::Null;
    v.as_object_mut().unwrap().remove("batch");
    v.as_object_mut().unwrap().remove("due");
    v.as_object_mut().unwrap().remove("address");
    assert_eq!(post_json(&server, &v).await.0, 200);
}

#[tokio::test]
async fn every_rule_family_is_checked_and_every_broken_rule_listed() {
    let server = spawn(Config::default()).await;
    let cases: Vec<(Value, Vec<(&str, &str)>)> = vec![
        (with(&[("name", json!(""))]), vec![("/name", "length")]),
        (
            with(&[("name", json!("é".repeat(81)))]),
            vec![("/name", "length")],
        ),
        // 80 characters of two bytes each: characters are counted.
        (with(&[("name", json!("é".repeat(80)))]), vec![]),
        (with(&[("qty", json!(0))]), vec![("/qty", "range")]),
        (with(&[("qty", json!(1001))]), vec![("/qty", "range")]),
        (with(&[("ratio", json!(1.5))]), vec![("/ratio", "range")]),
        (with(&[("owner", json!("ada"))]), vec![("/owner", "email")]),
        (
            with(&[("tags", json!(vec!["t"; 9]))]),
            vec![("/tags", "length")],
        ),
        (
            with(&[("tags", json!(["ok", "x".repeat(21), "ok", "y".repeat(30)]))]),
            vec![("/tags/1", "length"), ("/tags/3", "length")],
        ),
        (
            with(&[("slug", json!("Not A Slug"))]),
            vec![("/slug", "pattern")],
        ),
        // The pattern is anchored: a match inside is not enough.
        (
            with(&[("slug", json!("ok-but-!"))]),
            vec![("/slug", "pattern")],
        ),
        (
            with(&[("homepage", json!("not a uri"))]),
            vec![("/homepage", "uri")],
        ),
        (
            with(&[("batch", json!("67e55044"))]),
            vec![("/batch", "uuid")],
        ),
        (
            with(&[("due", json!("tomorrow"))]),
            vec![("/due", "date_time")],
        ),
        (with(&[("pairs", json!(3))]), vec![("/pairs", "even")]),
        (
            with(&[("address", json!([{"streetName": "", "postalCode": "1234"}]))]),
            vec![
                ("/address/0/streetName", "length"),
                ("/address/0/postalCode", "pattern"),
            ],
        ),
        (
            with(&[("labels", json!({"a": 1, "b": 2, "c": 3, "d": 4}))]),
            vec![("/labels", "length")],
        ),
        // Several fields at once: all of them, in field order.
        (
            with(&[
                ("name", json!("")),
                ("qty", json!(0)),
                ("owner", json!("x")),
            ]),
            vec![("/name", "length"), ("/qty", "range"), ("/owner", "email")],
        ),
    ];
    for (body, expected) in cases {
        let (status, answer) = post_json(&server, &body).await;
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(p, r)| ((*p).to_owned(), (*r).to_owned()))
            .collect();
        if expected.is_empty() {
            assert_eq!(status, 200, "{answer}");
            continue;
        }
        assert_eq!(status, 422, "{answer}");
        assert_eq!(errors(&answer), expected, "{answer}");
        assert_eq!(answer["status"], 422);
        for e in answer["errors"].as_array().unwrap() {
            assert!(!e["detail"].as_str().unwrap().is_empty(), "{e}");
        }
        let detail = answer["detail"].as_str().unwrap();
        assert!(detail.contains(&expected[0].0), "{detail}");
    }
}

#[tokio::test]
async fn decoding_errors_keep_their_statuses() {
    let server = spawn(Config::default()).await;
    // A value of the wrong type, an enum value not in the set, an
    // unknown field: 422 listing it, with its pointer and rule.
    for (body, pointer, rule) in [
        (with(&[("qty", json!("three"))]), "/qty", "type"),
        (with(&[("kind", json!("toy"))]), "/kind", "enum"),
        (
            with(&[("colour", json!("red"))]),
            "/colour",
            "additionalProperties",
        ),
    ] {
        let (status, answer) = post_json(&server, &body).await;
        assert_eq!(status, 422, "{answer}");
        assert_eq!(
            errors(&answer),
            [(pointer.to_owned(), rule.to_owned())],
            "{answer}"
        );
    }
    // JSON Schema's `integer` includes `3.0`: accepted, as the schema
    // says; `3.5` is not an integer.
    assert_eq!(
        post_json(&server, &with(&[("qty", json!(3.0))])).await.0,
        200
    );
    let qty = |rule: &str| vec![("/qty".to_owned(), rule.to_owned())];
    let (status, answer) = post_json(&server, &with(&[("qty", json!(3.5))])).await;
    assert_eq!((status, errors(&answer)), (422, qty("type")), "{answer}");
    let (status, answer) = post_json(&server, &with(&[("qty", json!(5e9))])).await;
    assert_eq!((status, errors(&answer)), (422, qty("type")), "{answer}");
    let mut missing = good();
    missing.as_object_mut().unwrap().remove("qty");
    let (status, answer) = post_json(&server, &missing).await;
    assert_eq!(
        (status, errors(&answer)),
        (422, qty("required")),
        "{answer}"
    );
    // Malformed JSON: 400. Another media type: 415.
    let (status, _, answer) = post_items(&server, "application/json", b"{\"name\":").await;
    assert_eq!(status, 400, "{answer}");
    let (status, _, answer) = post_items(&server, "text/plain", b"hello").await;
    assert_eq!(status, 415, "{answer}");
}

#[tokio::test]
async fn every_missing_and_invalid_field_is_listed_in_one_422() {
    let server = spawn(Config::default()).await;
    let mut body = with(&[
        ("qty", json!("three")),
        ("owner", json!("ada")),
        ("kind", json!("toy")),
        ("colour", json!("red")),
        (
            "address",
            json!([{"streetName": "", "postalCode": "12345"}, {"streetName": "Main St", "postalCode": 12345}]),
        ),
    ]);
    body.as_object_mut().unwrap().remove("name");
    body.as_object_mut().unwrap().remove("slug");
    let expected: Vec<(String, String)> = [
        ("/name", "required"),
        ("/qty", "type"),
        ("/owner", "email"),
        ("/slug", "required"),
        ("/kind", "enum"),
        // Nested contracts: every problem inside each, pointed into
        // (a broken rule in one item, a mistyped field in the next).
        ("/address/0/streetName", "length"),
        ("/address/1/postalCode", "type"),
        ("/colour", "additionalProperties"),
    ]
    .iter()
    .map(|(p, r)| ((*p).to_owned(), (*r).to_owned()))
    .collect();
    let (status, answer) = post_json(&server, &body).await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(errors(&answer), expected, "{answer}");
    let detail = answer["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("8 values break their contract"),
        "{detail}"
    );
    for e in answer["errors"].as_array().unwrap() {
        assert!(!e["detail"].as_str().unwrap().is_empty(), "{e}");
    }
    // The same in CBOR.
    let (status, _, answer) = post_items(&server, "application/cbor", &cbor(&body)).await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(errors(&answer), expected, "{answer}");
    // `{}`: every required field, in field order.
    let (status, answer) = post_json(&server, &json!({})).await;
    assert_eq!(status, 422, "{answer}");
    let names: Vec<String> = errors(&answer).into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        names,
        ["/name", "/qty", "/owner", "/tags", "/slug", "/ratio", "/pairs", "/kind"],
        "{answer}"
    );
    // A client's long value is not echoed back whole.
    let (_, answer) = post_json(&server, &with(&[("qty", json!("x".repeat(10_000)))])).await;
    assert!(answer.to_string().len() < 1_000, "{answer}");
    // Not an object: the shape error as before.
    let (status, answer) = post_json(&server, &json!([1, 2])).await;
    assert_eq!(status, 422, "{answer}");
    assert!(
        answer["detail"].as_str().unwrap().contains("expected"),
        "{answer}"
    );
}

#[tokio::test]
async fn an_answer_that_breaks_its_contract_is_the_handlers_bug() {
    // Development: a 500 naming the value and the rule.
    let server = spawn(Config::default()).await;
    let (status, answer) = post_json(&server, &with(&[("qty", json!(999))])).await;
    assert_eq!(status, 500, "{answer}");
    assert_eq!(errors(&answer), [("/id".to_owned(), "range".to_owned())]);
    assert!(answer["detail"]
        .as_str()
        .unwrap()
        .contains("breaks its contract"));

    // Production: sent (the default) or a 500 (`fail`), logged either way.
    let production = |policy: &str| {
        Config::from_settings([
            ("TERN_ENV", "production"),
            ("SECRET_KEY", "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ"),
            ("ALLOWED_HOSTS", "localhost"),
            ("TERN_INVALID_RESPONSES", policy),
        ])
        .unwrap()
    };
    let server = spawn(production("send")).await;
    let (status, answer) = post_json(&server, &with(&[("qty", json!(999))])).await;
    assert_eq!((status, answer), (200, json!({"id": 0, "name": "hammer"})));
    let server = spawn(production("fail")).await;
    let (status, answer) = post_json(&server, &with(&[("qty", json!(999))])).await;
    assert_eq!(status, 500, "{answer}");
    // Production shows no internals.
    assert_eq!(answer["detail"], "the server failed to answer this request");
    let err = Config::from_settings([("TERN_INVALID_RESPONSES", "maybe")]).unwrap_err();
    assert_eq!(err.setting(), "TERN_INVALID_RESPONSES");
}

#[test]
fn the_schema_says_what_the_checks_do() {
    let schema = CreateItem::json_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["$ref"], "#/$defs/CreateItem");
    let item = &schema["$defs"]["CreateItem"];
    assert_eq!(item["additionalProperties"], false);
    let p = &item["properties"];
    assert_eq!(p["name"]["minLength"], 1);
    assert_eq!(p["name"]["maxLength"], 80);
    assert_eq!(p["qty"]["minimum"], 1);
    assert_eq!(p["qty"]["maximum"], 1000);
    assert_eq!(p["qty"]["type"], "integer");
    assert_eq!(p["ratio"]["maximum"], 1.0);
    assert_eq!(p["owner"]["format"], "email");
    assert_eq!(p["tags"]["maxItems"], 8);
    assert_eq!(p["tags"]["items"]["maxLength"], 20);
    assert_eq!(p["slug"]["pattern"], "^(?:[a-z0-9-]+)$");
    assert_eq!(p["homepage"]["format"], "uri");
    assert_eq!(p["homepage"]["type"], json!(["string", "null"]));
    assert_eq!(p["batch"]["format"], "uuid");
    assert_eq!(p["due"]["format"], "date-time");
    assert_eq!(p["kind"]["$ref"], "#/$defs/Kind");
    assert_eq!(p["labels"]["maxProperties"], 3);
    assert_eq!(p["address"]["items"]["$ref"], "#/$defs/Address");
    assert_eq!(p["address"]["type"], json!(["array", "null"]));
    assert_eq!(p["address"]["maxItems"], 2);
    let required: Vec<&str> = item["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        required,
        ["name", "qty", "owner", "tags", "slug", "ratio", "pairs", "kind"]
    );
    assert_eq!(
        schema["$defs"]["Kind"],
        json!({"type": "string", "enum": ["tool", "spare_part"]})
    );
    let address = &schema["$defs"]["Address"]["properties"];
    assert_eq!(address["postalCode"]["pattern"], "^(?:[0-9]{5})$");
    assert_eq!(address["streetName"]["minLength"], 1);
}

/// One request with these headers; the status, the head, the raw body.
async fn exchange(server: &Server, headers: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /items HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{headers}\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(answer[..split].to_vec()).unwrap();
    let status = head[9..12].parse().unwrap();
    (status, head, answer[split + 4..].to_vec())
}

fn cbor(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::into_writer(value, &mut out).unwrap();
    out
}

fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[tokio::test]
async fn cbor_both_ways_and_negotiation() {
    let server = spawn(Config::default()).await;
    // CBOR in, CBOR out (the request's format).
    let (status, head, body) = exchange(
        &server,
        "Content-Type: application/cbor\r\n",
        &cbor(&good()),
    )
    .await;
    assert_eq!(status, 200, "{head}");
    assert_eq!(header(&head, "content-type"), Some("application/cbor"));
    let ack: Value = ciborium::from_reader(&body[..]).unwrap();
    assert_eq!(ack, json!({"id": 3, "name": "hammer"}));
    // CBOR in, JSON out by Accept; JSON in, CBOR out by Accept.
    let (status, head, body) = exchange(
        &server,
        "Content-Type: application/cbor\r\nAccept: application/json\r\n",
        &cbor(&good()),
    )
    .await;
    assert_eq!(
        (status, header(&head, "content-type")),
        (200, Some("application/json"))
    );
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap()["id"], 3);
    let (status, head, body) = exchange(
        &server,
        "Content-Type: application/json\r\nAccept: application/cbor;q=0.9, application/json;q=0.1\r\n",
        good().to_string().as_bytes(),
    )
    .await;
    assert_eq!(
        (status, header(&head, "content-type")),
        (200, Some("application/cbor"))
    );
    assert_eq!(
        ciborium::from_reader::<Value, _>(&body[..]).unwrap()["id"],
        3
    );
    // Nothing acceptable: 406, as problem+json.
    let (status, head, body) = exchange(
        &server,
        "Content-Type: application/json\r\nAccept: text/html\r\n",
        good().to_string().as_bytes(),
    )
    .await;
    assert_eq!(status, 406, "{head}");
    let doc: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        doc["detail"].as_str().unwrap().contains("text/html"),
        "{doc}"
    );
    // Every broken rule of a CBOR body, as for JSON.
    let (status, _, body) = exchange(
        &server,
        "Content-Type: application/cbor\r\n",
        &cbor(&with(&[
            ("name", json!("")),
            ("tags", json!(["x".repeat(21)])),
        ])),
    )
    .await;
    assert_eq!(status, 422);
    let doc: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        errors(&doc),
        [
            ("/name".to_owned(), "length".to_owned()),
            ("/tags/0".to_owned(), "length".to_owned())
        ]
    );
}

#[tokio::test]
async fn hostile_cbor_gets_a_specific_problem() {
    let server = spawn(Config::default()).await;
    let ct = "Content-Type: application/cbor\r\n";
    // Nested 10,000 deep: an array of an array of ...
    let deep = vec![0x81u8; 10_000];
    // An indefinite-length array that never ends, of indefinite-length
    // byte strings: bounded by the body limit, refused at its end.
    let mut bomb = vec![0x9f];
    for _ in 0..50_000 {
        bomb.extend_from_slice(&[0x5f, 0x41, 0x00, 0xff]);
    }
    let mut two_items = cbor(&good());
    two_items.extend_from_slice(&cbor(&good()));
    let mut wrong_type = good();
    wrong_type["qty"] = json!("three");
    for (body, status, detail) in [
        (vec![0xff, 0x00], 400, "not valid CBOR"),
        (cbor(&good())[..20].to_vec(), 400, "ends too early"),
        (deep, 400, "nested deeper than 128 levels"),
        (bomb, 400, "ends too early"),
        (two_items, 400, "not one CBOR item"),
        (cbor(&wrong_type), 422, "/qty invalid type"),
        (cbor(&json!([1, 2, 3])), 422, "expected shape"),
    ] {
        let (got, head, answer) = exchange(&server, ct, &body).await;
        let doc: Value = serde_json::from_slice(&answer).unwrap();
        let text = doc["detail"].as_str().unwrap();
        assert_eq!(got, status, "{head}\n{text}");
        assert!(text.contains(detail), "{text}");
    }
    // Over the body limit (2 MiB by default): 413 before decoding.
    let big = vec![0x40u8; 3 * 1024 * 1024];
    let (got, _, _) = exchange(&server, ct, &big).await;
    assert_eq!(got, 413);
    // Still serving.
    let (got, _, _) = exchange(&server, ct, &cbor(&good())).await;
    assert_eq!(got, 200);
}

/// The Python of a virtual environment with the reference tools
/// (`tests/requirements.txt`), or `None` with a notice: `.ci/run` sets it.
fn reference_python() -> Option<String> {
    // A Python with crates/tern-contract/tests/requirements.txt; .ci/run
    // sets it. Skipped without; a failure under CI.
    tern::test::service_url("CONTRACT_REFERENCE_PYTHON")
}

/// Runs `script` with the reference Python, `input` on its stdin; its
/// stdout, or a panic with its stderr.
fn python(python: &str, script: &str, input: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = std::process::Command::new(python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A query read as a contract.
#[contract]
#[derive(Debug, Clone)]
struct Search {
    #[contract(range(min = 1, max = 100))]
    limit: Option<u32>,
    #[contract(length(min = 1, max = 20))]
    q: String,
    #[serde(default)]
    #[contract(length(max = 3), each(length(max = 8)))]
    tag: Vec<String>,
    kind: Option<Kind>,
}

async fn search(tern_contract::ValidQuery(s): tern_contract::ValidQuery<Search>) -> String {
    format!("{} {} {:?} {:?}", s.q, s.limit.unwrap_or(20), s.tag, s.kind)
}

/// One `GET` over a socket: the status and the body.
async fn get(addr: SocketAddr, target: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (head[9..12].parse().unwrap(), body.to_owned())
}

#[tokio::test]
async fn a_query_contract_reads_checks_and_lists_every_broken_rule() {
    let service = App::new()
        .route("/search", tern::routing::get(search))
        .build_with(Config::default())
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(
        tern::Server::new(service).serve_with_shutdown(listener, async move {
            let _ = rx.await;
        }),
    );
    assert_eq!(
        get(addr, "/search?q=tea&limit=5&tag=a&tag=b&kind=tool").await,
        (200, r#"tea 5 ["a", "b"] Some(Tool)"#.to_owned())
    );
    assert_eq!(get(addr, "/search?q=tea").await.0, 200);
    // Every broken rule, each at its pointer.
    let (status, body) = get(
        addr,
        "/search?q=&limit=500&tag=a&tag=b&tag=c&tag=toolongtag",
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        errors(&body),
        [
            ("/limit".to_owned(), "range".to_owned()),
            ("/q".to_owned(), "length".to_owned()),
            ("/tag".to_owned(), "length".to_owned()),
            ("/tag/3".to_owned(), "length".to_owned()),
        ]
    );
    // A value of the wrong type, a parameter the contract does not have,
    // a missing one: the same 422, every one of them listed (issue 26).
    for (target, expected) in [
        ("/search?q=tea&limit=five", &[("/limit", "type")][..]),
        ("/search?q=tea&limit=5.5", &[("/limit", "type")][..]),
        ("/search?q=tea&kind=spoon", &[("/kind", "enum")][..]),
        (
            "/search?q=tea&page=2",
            &[("/page", "additionalProperties")][..],
        ),
        ("/search?limit=2", &[("/q", "required")][..]),
        (
            "/search?limit=five&kind=spoon&page=2&tag=a&tag=toolongtag",
            &[
                ("/limit", "type"),
                ("/q", "required"),
                ("/tag/1", "length"),
                ("/kind", "enum"),
                ("/page", "additionalProperties"),
            ][..],
        ),
    ] {
        let (status, body) = get(addr, target).await;
        assert_eq!(status, 422, "{target}: {body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(p, r)| ((*p).to_owned(), (*r).to_owned()))
            .collect();
        assert_eq!(errors(&body), expected, "{target}: {body}");
    }
    // What cannot be read at all stays a 400.
    for target in ["/search?q=%ZZ", "/search?q=%FF", "/search?q[=1"] {
        let (status, body) = get(addr, target).await;
        assert_eq!(status, 400, "{target}: {body}");
    }
    let _ = tx.send(());
}

#[tokio::test]
async fn the_openapi_document_is_valid_for_openapi_spec_validator() {
    use tern_contract::openapi::OpenApi;
    async fn show(tern::extract::Path(id): tern::extract::Path<u64>) -> Valid<Ack> {
        Valid(Ack {
            id,
            name: "hammer".into(),
        })
    }
    let app = OpenApi::new("Shop", "1.0.0").serve(
        app()
            .route("/items/{id:u64}", tern::routing::get(show))
            .route("/files/{*path}", tern::routing::get(|| async { "a file" }))
            .route("/search", tern::routing::get(search)),
    );
    let service = app.build_with(Config::default()).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(
        tern::Server::new(service).serve_with_shutdown(listener, async move {
            let _ = rx.await;
        }),
    );
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /openapi.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let _ = tx.send(());
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let body = &answer[split + 4..];
    let doc: Value = serde_json::from_slice(body).unwrap();
    // Routes without contracts are there too, with their parameters.
    assert_eq!(
        doc["paths"]["/files/{path}"]["get"]["parameters"][0]["in"],
        "path"
    );
    let post = &doc["paths"]["/items"]["post"];
    assert_eq!(
        post["requestBody"]["content"]["application/cbor"]["schema"]["$ref"],
        "#/components/schemas/CreateItem"
    );
    assert!(post["responses"]["422"].is_object(), "{post}");
    assert!(doc["components"]["schemas"]["Address"].is_object());
    // A query contract is one parameter per field, with its constraints.
    let params = doc["paths"]["/search"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let param = |name: &str| {
        params
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no parameter {name}: {params:?}"))
    };
    assert_eq!(param("limit")["in"], "query");
    assert_eq!(param("limit")["required"], false);
    assert_eq!(param("limit")["schema"]["type"], "integer");
    assert_eq!(param("limit")["schema"]["maximum"], 100);
    assert_eq!(param("q")["required"], true);
    assert_eq!(param("q")["schema"]["maxLength"], 20);
    assert_eq!(param("tag")["schema"]["items"]["maxLength"], 8);
    assert_eq!(param("kind")["schema"]["$ref"], "#/components/schemas/Kind");
    assert!(
        param("kind").get("style").is_none(),
        "a string is not a deepObject"
    );
    assert!(doc["paths"]["/search"]["get"]["responses"]["422"].is_object());
    let Some(py) = reference_python() else { return };
    python(
        &py,
        "import sys, json; from openapi_spec_validator import validate; \
         validate(json.load(sys.stdin)); print('valid')",
        body,
    );
}

#[tokio::test]
async fn cbor_interoperates_with_cbor2() {
    let Some(py) = reference_python() else { return };
    let server = spawn(Config::default()).await;
    // A request made by cbor2, answered in CBOR, read back by cbor2.
    let request = python(
        &py,
        "import sys, json, cbor2; sys.stdout.buffer.write(cbor2.dumps(json.load(sys.stdin)))",
        good().to_string().as_bytes(),
    );
    let (status, head, body) =
        exchange(&server, "Content-Type: application/cbor\r\n", &request).await;
    assert_eq!(status, 200, "{head}");
    let decoded = python(
        &py,
        "import sys, json, cbor2; print(json.dumps(cbor2.loads(sys.stdin.buffer.read()), sort_keys=True))",
        &body,
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&decoded).unwrap(),
        json!({"id": 3, "name": "hammer"})
    );
    // cbor2's canonical encoding and its indefinite-length strings decode too.
    let request = python(
        &py,
        "import sys, json, cbor2; sys.stdout.buffer.write(cbor2.dumps(json.load(sys.stdin), canonical=True))",
        good().to_string().as_bytes(),
    );
    let (status, _, _) = exchange(&server, "Content-Type: application/cbor\r\n", &request).await;
    assert_eq!(status, 200);
}
