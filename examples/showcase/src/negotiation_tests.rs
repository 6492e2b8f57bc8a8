//! Content negotiation on `/items` in the composed showcase (issue 26):
//! the app as `main` builds it (the rate limit, the data layer, the auth
//! battery's CSRF route layer, the HTML problem renderer, the OpenAPI
//! routes), through `TestClient` and over a socket. Each route answers
//! CBOR when asked, a COSE request gets a sealed answer, and a sealed
//! request never gets plaintext.

use serde_json::{json, Value};
use tern::test::TestClient;
use tern_contract::cose::{is_cose, Keyring, Seal};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use base64::Engine as _;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The server's keys: shared AES and HMAC keys and an Ed25519 seed.
fn keys() -> String {
    format!(
        "k1:A256GCM:{},m1:HMAC256:{},s1:EdDSA:{}",
        b64(&[0x5a; 32]),
        b64(&[0x6b; 32]),
        b64(&[0x7c; 32])
    )
}

/// The client's copy of the same keys.
fn client_keys() -> Keyring {
    let config = tern::Config::from_settings([("COSE_KEYS", keys())]).unwrap();
    tern::settings::load("cose", &config).unwrap()
}

/// The composed showcase with COSE keys, on a database of its own.
fn showcase(name: &str, cose_keys: &str) -> tern::App<crate::items::Store> {
    let dir = std::env::temp_dir().join(format!(
        "showcase-negotiation-{name}-{}",
        std::process::id()
    ));
    let url = format!("sqlite://{}/app.db", dir.display());
    let config =
        tern::Config::from_settings([("DATABASE_URL", url.as_str()), ("COSE_KEYS", cose_keys)])
            .unwrap();
    // `app()` adds the keyring when the process has `COSE_KEYS`; a test
    // must not change its process's environment, so it adds it here.
    crate::app(&crate::Showcase::default())
        .unwrap()
        .settings::<Keyring>("cose")
        .config(config)
}

fn cbor(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::into_writer(value, &mut out).unwrap();
    out
}

fn from_cbor(bytes: &[u8]) -> Value {
    ciborium::from_reader(bytes).unwrap()
}

const CBOR: &str = "application/cbor";
const COSE: &str = "application/cose";

/// The showcase as `main` builds it, and with `tern_data`'s transaction
/// layer around every route as well (an app that writes through `Tx`).
fn variants(name: &str) -> [(&'static str, TestClient); 2] {
    [
        ("showcase", TestClient::new(showcase(name, &keys()))),
        (
            "showcase + transactions",
            TestClient::new(
                showcase(&format!("{name}-tx"), &keys()).route_layer(tern_data::transactions()),
            ),
        ),
    ]
}

#[tokio::test]
async fn every_items_route_answers_cbor_when_asked() {
    for (variant, client) in variants("cbor") {
        every_items_route_answers_cbor(variant, &client).await;
    }
}

async fn every_items_route_answers_cbor(variant: &str, client: &TestClient) {
    let item = json!({"name": "anvil", "qty": 3, "owner": "ada@example.com"});
    // `Accept: application/cbor`, and no `Accept` (the request's format).
    for accept in [Some(CBOR), None] {
        let mut req = client
            .post("/items")
            .header("content-type", CBOR)
            .body(cbor(&item));
        if let Some(accept) = accept {
            req = req.header("accept", accept);
        }
        let res = req.send().await;
        assert_eq!(res.status(), 200, "{variant} {accept:?}: {}", res.text());
        assert_eq!(
            res.header("content-type"),
            Some(CBOR),
            "{variant} {accept:?}"
        );
        assert_eq!(from_cbor(res.bytes())["name"], "anvil");
    }
    for path in ["/items", "/items?limit=1", "/items/1"] {
        let res = client.get(path).header("accept", CBOR).send().await;
        assert_eq!(res.status(), 200, "{variant} {path}: {}", res.text());
        assert_eq!(res.header("content-type"), Some(CBOR), "{variant} {path}");
        let answer = from_cbor(res.bytes());
        assert!(
            answer["name"] == "anvil" || answer["items"][0]["name"] == "anvil",
            "{path}: {answer}"
        );
        // JSON still when asked, or by default.
        let res = client.get(path).send().await;
        assert_eq!(res.header("content-type"), Some("application/json"));
    }
    // A format `Accept` does not allow: 406, a problem, no item.
    let res = client
        .get("/items")
        .header("accept", "application/xml")
        .send()
        .await;
    assert_eq!(res.status(), 406, "{}", res.text());
    assert_eq!(res.header("content-type"), Some("application/problem+json"));
    assert!(!res.text().contains("anvil"), "{}", res.text());
}

#[tokio::test]
async fn a_sealed_request_gets_a_sealed_answer_never_plaintext() {
    for (variant, client) in variants("cose") {
        a_sealed_request_gets_a_sealed_answer(variant, &client).await;
    }
}

async fn a_sealed_request_gets_a_sealed_answer(variant: &str, client: &TestClient) {
    let keyring = client_keys();
    for (i, (seal, kid)) in [
        (Seal::Encrypt0, "k1"),
        (Seal::Mac0, "m1"),
        (Seal::Sign1, "s1"),
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("top-secret-{i}");
        let payload = cbor(&json!({"name": name, "qty": 1, "owner": "secret@example.com"}));
        let sealed = keyring.seal(seal, kid.as_bytes(), &payload).unwrap();
        for accept in [Some(COSE), Some("*/*"), None] {
            // A fresh message each time: the same one again is a replay.
            let sealed = if accept == Some(COSE) {
                sealed.clone()
            } else {
                let payload = cbor(&json!({"name": format!("{name}-{accept:?}"), "qty": 1,
                    "owner": "secret@example.com"}));
                keyring.seal(seal, kid.as_bytes(), &payload).unwrap()
            };
            let mut req = client
                .post("/items")
                .header("content-type", COSE)
                .body(sealed);
            if let Some(accept) = accept {
                req = req.header("accept", accept);
            }
            let res = req.send().await;
            assert_eq!(
                res.status(),
                200,
                "{variant} {seal:?} {accept:?}: {}",
                res.text()
            );
            assert_eq!(
                res.header("content-type"),
                Some(COSE),
                "{seal:?} {accept:?}"
            );
            if seal == Seal::Encrypt0 {
                // Secret, not only authenticated.
                assert!(!res.text().contains("secret@example.com"));
            }
            let opened = keyring.open(res.bytes()).await.unwrap();
            assert_eq!(opened.seal, seal);
            assert_eq!(from_cbor(&opened.payload)["owner"], "secret@example.com");
        }
        // A sealed request whose `Accept` excludes COSE: never the
        // plaintext it asked for, a 406 problem that says why.
        for accept in ["application/json", CBOR] {
            let payload = cbor(&json!({"name": format!("{name}-{accept}"), "qty": 1,
                "owner": "secret@example.com"}));
            let sealed = keyring.seal(seal, kid.as_bytes(), &payload).unwrap();
            let res = client
                .post("/items")
                .header("content-type", COSE)
                .header("accept", accept)
                .body(sealed)
                .send()
                .await;
            assert_eq!(res.status(), 406, "{seal:?} {accept}: {}", res.text());
            assert_eq!(res.header("content-type"), Some("application/problem+json"));
            assert!(!res.text().contains("secret@example.com"), "{}", res.text());
            assert!(!is_cose(res.bytes()));
            assert!(
                res.detail().unwrap_or_default().contains("sealed"),
                "{}",
                res.text()
            );
        }
    }
}

/// RFC 8032 §7.1, test 1: an Ed25519 seed and its public key.
const RFC8032_SEED: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const RFC8032_PUBLIC: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[tokio::test]
async fn a_sealed_request_whose_answer_cannot_be_sealed_gets_an_error() {
    // The server checks the client's signatures (its public key) but
    // holds no seed to sign its answers with.
    let client_keys = format!("c1:EdDSA:{}", b64(&hex(RFC8032_SEED)));
    let config = tern::Config::from_settings([("COSE_KEYS", client_keys.as_str())]).unwrap();
    let keyring: Keyring = tern::settings::load("cose", &config).unwrap();
    let signed = keyring
        .seal(
            Seal::Sign1,
            b"c1",
            &cbor(&json!({"name": "unsealable", "qty": 1, "owner": "secret@example.com"})),
        )
        .unwrap();
    let server_keys = format!("c1:EdDSA-public:{}", b64(&hex(RFC8032_PUBLIC)));
    let client = TestClient::new(showcase("unsealable", &server_keys));
    let res = client
        .post("/items")
        .header("content-type", COSE)
        .header("accept", COSE)
        .body(signed)
        .send()
        .await;
    assert_eq!(res.status(), 500, "{}", res.text());
    assert_eq!(res.header("content-type"), Some("application/problem+json"));
    assert!(!res.text().contains("secret@example.com"), "{}", res.text());
    assert!(!res.text().contains("unsealable"), "{}", res.text());
    assert!(
        res.detail()
            .unwrap_or_default()
            .contains("could not be sealed"),
        "{}",
        res.text()
    );
}

/// Why a sealed lookup is made: a secret of the client's, which the
/// answer must not carry in clear.
#[tern_contract::contract]
struct Lookup {
    #[contract(length(min = 1, max = 80))]
    reason: String,
}

/// `GET /items/{id}`'s own handler behind a sealed body. The showcase
/// opens a sealed request only on `POST /items`, whose handler has no
/// problem of its own to answer; this route puts `items::show` (and its
/// `Err(Problem)` 404) behind `Valid<T>`, in the composed app, under
/// every route layer the showcase installs.
async fn show_sealed(
    store: tern::extract::State<crate::items::Store>,
    id: tern::extract::Path<u64>,
    tern_contract::Valid(_): tern_contract::Valid<Lookup>,
) -> Result<tern_contract::Valid<crate::items::Item>, tern::Problem> {
    crate::items::show(store, id).await
}

#[tokio::test]
async fn a_missing_item_to_a_sealed_request_is_a_sealed_404() {
    let app = showcase("sealed-404", &keys())
        .route("/items/{id:u64}/sealed", tern::routing::post(show_sealed));
    let client = TestClient::new(app);
    let keyring = client_keys();
    // The HTML problem renderer must not render the sealed problem again
    // in plaintext, whatever `Accept` prefers.
    let accepts = [
        None,
        Some(COSE),
        Some("text/html"),
        Some("text/html,application/xhtml+xml,*/*;q=0.8"),
    ];
    for (seal, kid) in [
        (Seal::Encrypt0, "k1"),
        (Seal::Mac0, "m1"),
        (Seal::Sign1, "s1"),
    ] {
        for (i, accept) in accepts.into_iter().enumerate() {
            let payload = cbor(&json!({"reason": format!("top-secret-{i}")}));
            let sealed = keyring.seal(seal, kid.as_bytes(), &payload).unwrap();
            let mut req = client
                .post("/items/999/sealed")
                .header("content-type", COSE)
                .body(sealed);
            if let Some(accept) = accept {
                req = req.header("accept", accept);
            }
            let res = req.send().await;
            let what = format!("{seal:?} {accept:?}");
            assert_eq!(res.status(), 404, "{what}: {}", res.text());
            assert_eq!(
                res.header("content-type"),
                Some(COSE),
                "{what}: {}",
                res.text()
            );
            if seal == Seal::Encrypt0 {
                assert!(!res.text().contains("item 999"), "{what}: {}", res.text());
            }
            // A fresh keyring: the same problem MACed twice is the same
            // message, which one keyring would take for a replay.
            let opened = client_keys().open(res.bytes()).await.unwrap();
            assert_eq!(opened.seal, seal, "{what}");
            let problem = from_cbor(&opened.payload);
            assert_eq!(problem["status"], 404, "{what}: {problem}");
            assert_eq!(
                problem["detail"], "there is no item 999",
                "{what}: {problem}"
            );
        }
    }
    // The same route to a plaintext request: the showcase's own 404, and
    // its HTML page for a browser.
    let res = client
        .post("/items/999/sealed")
        .json(&json!({"reason": "browsing"}))
        .send()
        .await;
    assert_eq!(res.status(), 404, "{}", res.text());
    assert_eq!(res.header("content-type"), Some("application/problem+json"));
    assert_eq!(res.detail().as_deref(), Some("there is no item 999"));
    let res = client
        .post("/items/999/sealed")
        .header("accept", "text/html")
        .json(&json!({"reason": "browsing"}))
        .send()
        .await;
    assert_eq!(res.status(), 404, "{}", res.text());
    assert!(
        res.header("content-type")
            .unwrap_or_default()
            .starts_with("text/html"),
        "{}",
        res.text()
    );
}

#[tokio::test]
async fn a_missing_item_asked_for_in_cose_is_a_plaintext_problem_with_nothing_sealed_in_it() {
    // `GET /items/{id}` opens nothing: a GET asking for COSE, or carrying
    // a sealed body the route never reads, has no key to seal with. Its
    // 404 is plaintext and says only what the path said; it is not
    // turned into a 406 for the `Accept` it ignores.
    let client = TestClient::new(showcase("cose-get-404", &keys()));
    let keyring = client_keys();
    for body in [false, true] {
        let mut req = client.get("/items/999").header("accept", COSE);
        if body {
            let payload = cbor(&json!({"reason": "top-secret"}));
            req = req
                .header("content-type", COSE)
                .body(keyring.seal(Seal::Encrypt0, b"k1", &payload).unwrap());
        }
        let res = req.send().await;
        assert_eq!(res.status(), 404, "{body}: {}", res.text());
        assert_eq!(res.header("content-type"), Some("application/problem+json"));
        assert_eq!(res.detail().as_deref(), Some("there is no item 999"));
        assert!(!res.text().contains("top-secret"), "{}", res.text());
    }
}

/// One exchange over a socket: the status, the head, the body.
async fn exchange(
    addr: std::net::SocketAddr,
    target: &str,
    headers: &str,
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let method = if body.is_empty() { "GET" } else { "POST" };
    let head = format!(
        "{method} {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{headers}\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(answer[..split].to_vec()).unwrap();
    (
        head[9..12].parse().unwrap(),
        head.to_ascii_lowercase(),
        answer[split + 4..].to_vec(),
    )
}

#[tokio::test]
async fn negotiation_holds_over_a_socket() {
    let service = showcase("socket", &keys())
        .route("/items/{id:u64}/sealed", tern::routing::post(show_sealed))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(
        tern::Server::new(service).serve_with_shutdown(listener, async move {
            let _ = stopped.await;
        }),
    );
    let item = cbor(&json!({"name": "socket", "qty": 2, "owner": "ada@example.com"}));
    let (status, head, body) = exchange(
        addr,
        "/items",
        "Content-Type: application/cbor\r\nAccept: application/cbor\r\n",
        &item,
    )
    .await;
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("content-type: application/cbor"), "{head}");
    assert_eq!(from_cbor(&body)["name"], "socket");
    let (status, head, body) = exchange(addr, "/items", "Accept: application/cbor\r\n", &[]).await;
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("content-type: application/cbor"), "{head}");
    assert_eq!(from_cbor(&body)["total"], 1);
    let keyring = client_keys();
    let sealed = keyring
        .seal(
            Seal::Encrypt0,
            b"k1",
            &cbor(&json!({"name": "top-secret-item", "qty": 1, "owner": "secret@example.com"})),
        )
        .unwrap();
    let (status, head, body) = exchange(
        addr,
        "/items",
        "Content-Type: application/cose\r\nAccept: application/cose\r\n",
        &sealed,
    )
    .await;
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("content-type: application/cose"), "{head}");
    let opened = keyring.open(&body).await.unwrap();
    assert_eq!(from_cbor(&opened.payload)["name"], "top-secret-item");
    // The handler's own 404 to a sealed request, sealed on the wire too,
    // even for a browser's `Accept`.
    let sealed = keyring
        .seal(
            Seal::Encrypt0,
            b"k1",
            &cbor(&json!({"reason": "top-secret-reason"})),
        )
        .unwrap();
    let (status, head, body) = exchange(
        addr,
        "/items/999/sealed",
        "Content-Type: application/cose\r\nAccept: text/html\r\n",
        &sealed,
    )
    .await;
    assert_eq!(status, 404, "{head}");
    assert!(head.contains("content-type: application/cose"), "{head}");
    assert!(!body.windows(8).any(|w| w == b"item 999"), "{head}");
    let opened = keyring.open(&body).await.unwrap();
    assert_eq!(from_cbor(&opened.payload)["detail"], "there is no item 999");
    let _ = stop.send(());
}
