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

#[tokio::test]
async fn every_items_route_answers_cbor_when_asked() {
    let client = TestClient::new(showcase("cbor", &keys()));
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
        assert_eq!(res.status(), 200, "{accept:?}: {}", res.text());
        assert_eq!(res.header("content-type"), Some(CBOR), "{accept:?}");
        assert_eq!(from_cbor(res.bytes())["name"], "anvil");
    }
    for path in ["/items", "/items?limit=1", "/items/1"] {
        let res = client.get(path).header("accept", CBOR).send().await;
        assert_eq!(res.status(), 200, "{path}: {}", res.text());
        assert_eq!(res.header("content-type"), Some(CBOR), "{path}");
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
    let client = TestClient::new(showcase("cose", &keys()));
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
            assert_eq!(res.status(), 200, "{seal:?} {accept:?}: {}", res.text());
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
    let service = showcase("socket", &keys()).build().unwrap();
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
    let _ = stop.send(());
}
