//! COSE over real sockets: each seal both ways, every refusal, and
//! pycose (another implementation) sealing requests and opening answers.
#![allow(clippy::unwrap_used, missing_docs)]

use std::net::SocketAddr;

use base64::Engine as _;
use serde_json::{json, Value};
use tern::{routing::post, App, Config};
use tern_contract::{
    contract,
    cose::{Keyring, Seal},
    Valid,
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::oneshot,
};

#[contract]
struct Order {
    #[contract(length(min = 1, max = 40))]
    item: String,
    #[contract(range(min = 1, max = 100))]
    qty: u32,
}

#[contract]
struct Receipt {
    item: String,
    total: u32,
}

async fn order(Valid(o): Valid<Order>) -> Valid<Receipt> {
    Valid(Receipt {
        total: o.qty * 3,
        item: o.item,
    })
}

const K1: [u8; 32] = [0x11; 32];
const M1: [u8; 32] = [0x22; 32];
const C1_SEED: [u8; 32] = [0x33; 32];
const S1_SEED: [u8; 32] = [0x44; 32];

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn public(seed: &[u8; 32]) -> [u8; 32] {
    ed25519_dalek::SigningKey::from_bytes(seed)
        .verifying_key()
        .to_bytes()
}

/// The server's keys: the shared AES and HMAC keys, its own signing seed,
/// the client's public key.
fn server_keys() -> String {
    format!(
        "k1:A256GCM:{},m1:HMAC256:{},s1:EdDSA:{},c1:EdDSA-public:{}",
        b64(&K1),
        b64(&M1),
        b64(&S1_SEED),
        b64(&public(&C1_SEED))
    )
}

/// The client's keyring: the same shared keys, its seed, the server's
/// public key.
fn client() -> Keyring {
    let keys = format!(
        "k1:A256GCM:{},m1:HMAC256:{},c1:EdDSA:{},s1:EdDSA-public:{}",
        b64(&K1),
        b64(&M1),
        b64(&C1_SEED),
        b64(&public(&S1_SEED))
    );
    let config = Config::from_settings([("COSE_KEYS", keys.as_str())]).unwrap();
    tern::settings::load("cose", &config).unwrap()
}

struct Server {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

async fn spawn(with_keys: bool) -> Server {
    let keys = server_keys();
    let mut settings = vec![("COSE_REPLAY_WINDOW", "60")];
    let mut app = App::new().route("/orders", post(order));
    if with_keys {
        settings.push(("COSE_KEYS", keys.as_str()));
        app = app.settings::<Keyring>("cose");
    }
    let config = Config::from_settings(settings).unwrap();
    let service = app.build_with(config).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(
        tern::Server::new(service).serve_with_shutdown(listener, async move {
            let _ = rx.await;
        }),
    );
    Server { addr, _stop: tx }
}

async fn send(server: &Server, headers: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /orders HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{headers}\
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
        head,
        answer[split + 4..].to_vec(),
    )
}

fn cbor(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::into_writer(value, &mut out).unwrap();
    out
}

const COSE: &str = "Content-Type: application/cose\r\n";

fn detail(body: &[u8]) -> String {
    let doc: Value = serde_json::from_slice(body).unwrap();
    doc["detail"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn each_seal_both_ways() {
    let server = spawn(true).await;
    let client = client();
    let request = cbor(&json!({"item": "nails", "qty": 7}));
    for (seal, kid, answer_kid) in [
        (Seal::Encrypt0, "k1", "k1"),
        (Seal::Mac0, "m1", "m1"),
        (Seal::Sign1, "c1", "s1"),
    ] {
        let sealed = client.seal(seal, kid.as_bytes(), &request).unwrap();
        let (status, head, body) = send(&server, COSE, &sealed).await;
        assert_eq!(
            status,
            200,
            "{seal:?}: {head}\n{}",
            String::from_utf8_lossy(&body)
        );
        assert!(head.contains("content-type: application/cose"), "{head}");
        let opened = client.open(&body).await.unwrap();
        assert_eq!(
            (opened.seal, opened.kid.as_slice()),
            (seal, answer_kid.as_bytes())
        );
        let receipt: Value = ciborium::from_reader(&opened.payload[..]).unwrap();
        assert_eq!(receipt, json!({"item": "nails", "total": 21}));
        // Two answers to the same request differ: a fresh nonce each.
        if seal == Seal::Encrypt0 {
            let again = client.seal(seal, kid.as_bytes(), &request).unwrap();
            let (_, _, body2) = send(&server, COSE, &again).await;
            assert_ne!(body, body2);
        }
    }
    // A sealed request never gets a plain answer, even when it asks for
    // one: a 406 that says why. (Another order: an HMAC or an Ed25519
    // signature of the same bytes is the same message, which would be a
    // replay.)
    let request = cbor(&json!({"item": "nails", "qty": 8}));
    let sealed = client.seal(Seal::Mac0, b"m1", &request).unwrap();
    let (status, head, body) = send(
        &server,
        "Content-Type: application/cose\r\nAccept: application/json\r\n",
        &sealed,
    )
    .await;
    assert_eq!(status, 406, "{head}");
    assert!(head.contains("application/problem+json"), "{head}");
    assert!(detail(&body).contains("sealed"), "{}", detail(&body));
    assert!(!String::from_utf8_lossy(&body).contains("nails"));
    // A plain request cannot ask for a sealed answer (which key?).
    let (status, _, body) = send(
        &server,
        "Content-Type: application/cbor\r\nAccept: application/cose\r\n",
        &request,
    )
    .await;
    assert_eq!(status, 406, "{}", detail(&body));
    // The rules still hold inside the seal: 422 listing them, sealed
    // like the request (the problem may quote the payload).
    let bad = client
        .seal(Seal::Encrypt0, b"k1", &cbor(&json!({"item": "", "qty": 0})))
        .unwrap();
    let (status, head, body) = send(&server, COSE, &bad).await;
    assert_eq!(status, 422);
    assert!(head.contains("application/cose"), "{head}");
    let opened = client.open(&body).await.unwrap();
    let doc: Value = ciborium::from_reader(&opened.payload[..]).unwrap();
    assert_eq!(doc["errors"].as_array().unwrap().len(), 2, "{doc}");
}

#[tokio::test]
async fn every_refusal_is_specific() {
    let server = spawn(true).await;
    let client = client();
    let request = cbor(&json!({"item": "nails", "qty": 7}));
    let sealed = client.seal(Seal::Encrypt0, b"k1", &request).unwrap();
    let (status, _, _) = send(&server, COSE, &sealed).await;
    assert_eq!(status, 200);
    let mut tampered_tag = client.seal(Seal::Mac0, b"m1", &request).unwrap();
    let last = tampered_tag.len() - 1;
    tampered_tag[last] ^= 1;
    let mut tampered_ct = client.seal(Seal::Encrypt0, b"k1", &request).unwrap();
    let last = tampered_ct.len() - 1;
    tampered_ct[last] ^= 1;
    let mut tampered_sig = client.seal(Seal::Sign1, b"c1", &request).unwrap();
    let last = tampered_sig.len() - 1;
    tampered_sig[last] ^= 1;
    // Sealed by a key the server does not have.
    let stranger_keys = format!("x9:A256GCM:{}", b64(&[0x55; 32]));
    let stranger: Keyring = tern::settings::load(
        "cose",
        &Config::from_settings([("COSE_KEYS", stranger_keys.as_str())]).unwrap(),
    )
    .unwrap();
    let unknown = stranger.seal(Seal::Encrypt0, b"x9", &request).unwrap();
    // The server's own answer key `s1` is public on the client: a message
    // that claims to be signed by `s1`'s owner cannot be made; one signed
    // with the client's seed but naming `k1` has the wrong algorithm.
    let wrong_alg = {
        let mut m = client.seal(Seal::Sign1, b"c1", &request).unwrap();
        // Rename the kid `c1` to `k1` in the protected header: the
        // signature then also fails, but the algorithm check comes first.
        let at = m.windows(2).position(|w| w == b"c1").unwrap();
        m[at] = b'k';
        m
    };
    let untagged = request.clone();
    for (body, status, text) in [
        (sealed, 401, "already received"),
        (tampered_tag, 401, "tag does not verify"),
        (tampered_ct, 401, "does not decrypt"),
        (tampered_sig, 401, "signature does not verify"),
        (unknown, 401, "unknown key id `x9`"),
        (wrong_alg, 401, "not the one configured for key `k1`"),
        (untagged, 400, "must be a tagged COSE_Encrypt0"),
        (vec![0xd0, 0x84, 0x40], 400, "malformed COSE_Encrypt0"),
        (vec![0xd1], 400, "malformed COSE_Mac0"),
    ] {
        let (got, head, answer) = send(&server, COSE, &body).await;
        let text_got = detail(&answer);
        assert_eq!(got, status, "{head}\n{text_got}");
        assert!(text_got.contains(text), "{text_got}");
    }
    // An app without COSE keys refuses the media type.
    let plain = spawn(false).await;
    let sealed = client.seal(Seal::Encrypt0, b"k1", &request).unwrap();
    let (status, _, answer) = send(&plain, COSE, &sealed).await;
    assert_eq!(status, 415, "{}", detail(&answer));
}

#[test]
fn keys_that_cannot_work_stop_the_start_naming_the_setting() {
    let config = Config::from_settings([("COSE_KEYS", "k1:A256GCM:c2hvcnQ=")]).unwrap();
    let err = App::new()
        .settings::<Keyring>("cose")
        .build_with(config)
        .unwrap_err();
    assert_eq!(err.setting(), Some("COSE_KEYS"), "{err}");
    assert!(
        err.to_string().starts_with(
            "COSE_KEYS: at `[0]`: `k1`: A256GCM needs a key of 32 bytes (this one has 5)"
        ),
        "{err}"
    );
}

/// pycose's side: `tests/pycose_peer.py` with the reference Python.
fn pycose(mode: &str, kind: &str, input: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let python = std::env::var("CONTRACT_REFERENCE_PYTHON").unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pycose_peer.py");
    let mut child = std::process::Command::new(python)
        .args([script, mode, kind])
        .env("K1", b64(&K1))
        .env("M1", b64(&M1))
        .env("C1", b64(&C1_SEED))
        .env("S1", b64(&public(&S1_SEED)))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "pycose {mode} {kind}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[tokio::test]
async fn pycose_seals_requests_and_opens_answers() {
    // A Python with tests/requirements.txt; .ci/run sets it.
    if tern::test::service_url("CONTRACT_REFERENCE_PYTHON").is_none() {
        return;
    }
    let server = spawn(true).await;
    for kind in ["encrypt0", "mac0", "sign1"] {
        let request = pycose("seal", kind, br#"{"item": "screws", "qty": 4}"#);
        let (status, head, body) = send(&server, COSE, &request).await;
        assert_eq!(
            status,
            200,
            "{kind}: {head}\n{}",
            String::from_utf8_lossy(&body)
        );
        let answer = pycose("open", kind, &body);
        let receipt: Value = serde_json::from_slice(&answer).unwrap();
        assert_eq!(receipt, json!({"item": "screws", "total": 12}), "{kind}");
        // pycose's message, sent again: a replay.
        let (status, _, body) = send(&server, COSE, &request).await;
        assert_eq!(status, 401, "{kind}: {}", detail(&body));
    }
}
