//! Negotiated answers behind every kind of middleware (issue 26): CBOR
//! when `Accept` asks for it, a sealed answer to a sealed request, and
//! never plaintext for a sealed request, whether the handler runs bare,
//! behind an app layer, a route layer, a path's own layer, or a layer
//! that hands the rest of the chain to another task.
#![allow(clippy::unwrap_used, missing_docs)]

use base64::Engine as _;
use serde_json::{json, Value};
use tern::{
    middleware::{from_fn, Next},
    routing::post,
    test::TestClient,
    App, Bytes, Config, Problem, Request, Response, StatusCode,
};
use tern_contract::{
    contract,
    cose::{is_cose, Keyring, Seal},
    Valid,
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

/// A problem of the handler's own, quoting the opened payload (`item`).
async fn missing(Valid(o): Valid<Order>) -> Result<Valid<Receipt>, Problem> {
    Err(Problem::new(StatusCode::NOT_FOUND).with_detail(format!("{} item 7 not found", o.item)))
}

/// An error of the handler's own that is not a problem: plaintext that
/// quotes the opened payload.
async fn conflict(Valid(o): Valid<Order>) -> Result<Valid<Receipt>, (StatusCode, String)> {
    Err((StatusCode::CONFLICT, format!("{} is taken", o.item)))
}

/// An answer in a contract to a body it never opened.
async fn unopened(_body: Bytes) -> Valid<Receipt> {
    Valid(Receipt {
        item: "secret".to_owned(),
        total: 1,
    })
}

async fn pass(req: Request, next: Next) -> Response {
    next.run(req).await
}

/// The rest of the chain on another task, as `tower::buffer` does.
async fn elsewhere(req: Request, next: Next) -> Response {
    tokio::spawn(next.run(req)).await.unwrap()
}

fn keys() -> String {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    format!(
        "k1:A256GCM:{},m1:HMAC256:{},s1:EdDSA:{}",
        b64(&[0x11; 32]),
        b64(&[0x22; 32]),
        b64(&[0x33; 32])
    )
}

fn keyring() -> Keyring {
    let config = Config::from_settings([("COSE_KEYS", keys())]).unwrap();
    tern::settings::load("cose", &config).unwrap()
}

fn cbor(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::into_writer(value, &mut out).unwrap();
    out
}

/// The apps: one per place a middleware can sit. Each serves `order`
/// at `/orders`, and the handlers that answer errors of their own at
/// `/missing` and `/conflict`.
fn apps() -> Vec<(&'static str, App)> {
    let base = || {
        App::new()
            .settings::<Keyring>("cose")
            .config(Config::from_settings([("COSE_KEYS", keys())]).unwrap())
            .route("/missing", post(missing))
            .route("/conflict", post(conflict))
    };
    vec![
        ("bare", base().route("/orders", post(order))),
        (
            "app layer",
            base().route("/orders", post(order)).layer(from_fn(pass)),
        ),
        (
            "route layer",
            base()
                .route("/orders", post(order))
                .route_layer(from_fn(pass)),
        ),
        (
            "path layer",
            base()
                .route("/orders", post(order).layer(from_fn(pass)))
                .route("/missing/layered", post(missing).layer(from_fn(pass))),
        ),
        (
            "another task",
            base()
                .route("/orders", post(order))
                .route_layer(from_fn(elsewhere)),
        ),
        (
            "all of them",
            base()
                .route("/orders", post(order).layer(from_fn(pass)))
                .route("/missing/layered", post(missing).layer(from_fn(pass)))
                .route_layer(from_fn(elsewhere))
                .route_layer(from_fn(pass))
                .layer(from_fn(pass)),
        ),
    ]
}

#[tokio::test]
async fn every_layer_keeps_the_negotiation() {
    let client_keys = keyring();
    for (n, (name, app)) in apps().into_iter().enumerate() {
        let client = TestClient::new(app);
        let res = client
            .post("/orders")
            .header("content-type", "application/json")
            .header("accept", "application/cbor")
            .json(&json!({"item": "nails", "qty": 2}))
            .send()
            .await;
        assert_eq!(res.status(), 200, "{name}: {}", res.text());
        assert_eq!(
            res.header("content-type"),
            Some("application/cbor"),
            "{name}"
        );
        let receipt: Value = ciborium::from_reader(&res.bytes()[..]).unwrap();
        assert_eq!(receipt["total"], 6, "{name}");

        for (seal, kid) in [
            (Seal::Encrypt0, "k1"),
            (Seal::Mac0, "m1"),
            (Seal::Sign1, "s1"),
        ] {
            let payload = cbor(&json!({"item": format!("secret-{n}-{seal:?}"), "qty": 3}));
            let sealed = client_keys.seal(seal, kid.as_bytes(), &payload).unwrap();
            let res = client
                .post("/orders")
                .header("content-type", "application/cose")
                .header("accept", "application/cose")
                .body(sealed)
                .send()
                .await;
            assert_eq!(res.status(), 200, "{name} {seal:?}: {}", res.text());
            assert_eq!(
                res.header("content-type"),
                Some("application/cose"),
                "{name} {seal:?}: {}",
                res.text()
            );
            let opened = client_keys.open(res.bytes()).await.unwrap();
            let receipt: Value = ciborium::from_reader(&opened.payload[..]).unwrap();
            assert_eq!(receipt["total"], 9, "{name} {seal:?}");
        }
    }
}

#[tokio::test]
async fn a_sealed_request_never_gets_plaintext() {
    let client_keys = keyring();
    for (n, (name, app)) in apps().into_iter().enumerate() {
        let client = TestClient::new(app);
        // `Accept` excludes COSE: a 406 that says why, not the plaintext
        // the request asked for.
        for (i, accept) in ["application/json", "application/cbor", "text/html"]
            .into_iter()
            .enumerate()
        {
            let payload = cbor(&json!({"item": format!("secret-{n}-{i}"), "qty": 3}));
            let sealed = client_keys.seal(Seal::Encrypt0, b"k1", &payload).unwrap();
            let res = client
                .post("/orders")
                .header("content-type", "application/cose")
                .header("accept", accept)
                .body(sealed)
                .send()
                .await;
            assert_eq!(res.status(), 406, "{name} {accept}: {}", res.text());
            assert_eq!(res.header("content-type"), Some("application/problem+json"));
            assert!(!res.text().contains("secret"), "{name}: {}", res.text());
            let detail = res.detail().unwrap_or_default();
            assert!(
                detail.contains("sealed") && detail.contains("application/cose"),
                "{name}: {detail}"
            );
        }
    }
}

#[tokio::test]
async fn an_answer_to_a_sealed_body_it_never_opened_is_an_error() {
    // The handler read the COSE body as bytes: there is no key to seal
    // its answer with, and CBOR labelled `application/cose` would be
    // plaintext.
    let app = App::new()
        .settings::<Keyring>("cose")
        .config(Config::from_settings([("COSE_KEYS", keys())]).unwrap())
        .route("/raw", post(unopened));
    let client = TestClient::new(app);
    for accept in [None, Some("application/cose"), Some("*/*")] {
        let mut req = client
            .post("/raw")
            .header("content-type", "application/cose")
            .body(&b"\xd0\x80"[..]);
        if let Some(accept) = accept {
            req = req.header("accept", accept);
        }
        let res = req.send().await;
        assert_eq!(res.status(), 500, "{accept:?}: {}", res.text());
        assert_eq!(res.header("content-type"), Some("application/problem+json"));
        assert!(!is_cose(res.bytes()));
        assert!(!res.text().contains("secret"), "{}", res.text());
        let detail = res.detail().unwrap_or_default();
        assert!(detail.contains("could not be sealed"), "{detail}");
    }
}

/// A contract opened, answered with a type that is not negotiated.
async fn plain_answer(Valid(o): Valid<Order>) -> tern::Json<Value> {
    tern::Json(json!({"item": o.item, "total": o.qty}))
}

#[tokio::test]
async fn a_sealed_request_to_a_handler_that_cannot_seal_is_an_error() {
    let app = App::new()
        .settings::<Keyring>("cose")
        .config(Config::from_settings([("COSE_KEYS", keys())]).unwrap())
        .route("/plain", post(plain_answer));
    let client = TestClient::new(app);
    let sealed = keyring()
        .seal(
            Seal::Encrypt0,
            b"k1",
            &cbor(&json!({"item": "secret", "qty": 3})),
        )
        .unwrap();
    let res = client
        .post("/plain")
        .header("content-type", "application/cose")
        .body(sealed)
        .send()
        .await;
    // The problem is sealed like the request (it was opened): the client
    // opens it to read why.
    assert_eq!(res.status(), 500, "{}", res.text());
    assert_eq!(res.header("content-type"), Some("application/cose"));
    assert!(!res.text().contains("secret"), "{}", res.text());
    let opened = keyring().open(res.bytes()).await.unwrap();
    let problem: Value = ciborium::from_reader(&opened.payload[..]).unwrap();
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("could not be sealed") && detail.contains("Valid<T>"),
        "{detail}"
    );
    // A plain request to it is answered as the handler says.
    let res = client
        .post("/plain")
        .json(&json!({"item": "nails", "qty": 3}))
        .send()
        .await;
    assert_eq!(res.status(), 200, "{}", res.text());
}

/// The plaintext a problem would leak: the client's own value, quoted
/// back by serde's message.
const SECRET: &str = "secret-quantity";

#[tokio::test]
async fn a_problem_with_a_sealed_request_is_sealed_too() {
    let client_keys = keyring();
    for (name, app) in apps() {
        let client = TestClient::new(app);
        for (seal, kid) in [
            (Seal::Encrypt0, "k1"),
            (Seal::Mac0, "m1"),
            (Seal::Sign1, "s1"),
        ] {
            // Two fields break the contract; one quotes the client's value.
            let payload = cbor(&json!({"item": "", "qty": SECRET}));
            let sealed = client_keys.seal(seal, kid.as_bytes(), &payload).unwrap();
            let res = client
                .post("/orders")
                .header("content-type", "application/cose")
                .body(sealed)
                .send()
                .await;
            assert_eq!(res.status(), 422, "{name} {seal:?}: {}", res.text());
            assert_eq!(
                res.header("content-type"),
                Some("application/cose"),
                "{name} {seal:?}: {}",
                res.text()
            );
            if seal == Seal::Encrypt0 {
                let raw = res.bytes();
                assert!(
                    !raw.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
                    "{name}: the encrypted problem holds the value in clear"
                );
            }
            // A fresh keyring: the same problem sealed with MAC twice is the
            // same message, which one keyring would take for a replay.
            let opened = keyring().open(res.bytes()).await.unwrap();
            assert_eq!(opened.seal, seal, "{name}");
            let problem: Value = ciborium::from_reader(&opened.payload[..]).unwrap();
            assert_eq!(problem["status"], 422, "{name} {seal:?}: {problem}");
            let pointers: Vec<&str> = problem["errors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["pointer"].as_str().unwrap())
                .collect();
            assert_eq!(pointers, ["/item", "/qty"], "{name} {seal:?}: {problem}");
            assert!(problem["detail"].as_str().unwrap().contains(SECRET));
        }

        // A payload that is not CBOR at all, once opened: its 400 sealed.
        let sealed = client_keys
            .seal(Seal::Encrypt0, b"k1", b"\xff\xff")
            .unwrap();
        let res = client
            .post("/orders")
            .header("content-type", "application/cose")
            .body(sealed)
            .send()
            .await;
        assert_eq!(res.status(), 400, "{name}: {}", res.text());
        assert_eq!(
            res.header("content-type"),
            Some("application/cose"),
            "{name}"
        );
        let opened = keyring().open(res.bytes()).await.unwrap();
        let problem: Value = ciborium::from_reader(&opened.payload[..]).unwrap();
        assert_eq!(problem["status"], 400, "{name}: {problem}");
    }
}

#[tokio::test]
async fn a_request_that_cannot_be_opened_gets_plaintext_without_its_payload() {
    // Sealed with a key the app does not have: refused before anything
    // is opened, in plaintext (there is no key to seal with, and the
    // problem says nothing of the payload).
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let stranger: Keyring = tern::settings::load(
        "cose",
        &Config::from_settings([("COSE_KEYS", format!("zz:A256GCM:{}", b64(&[0x44; 32])))])
            .unwrap(),
    )
    .unwrap();
    for (name, app) in apps() {
        let client = TestClient::new(app);
        let payload = cbor(&json!({"item": "", "qty": SECRET}));
        let sealed = stranger.seal(Seal::Encrypt0, b"zz", &payload).unwrap();
        let res = client
            .post("/orders")
            .header("content-type", "application/cose")
            .body(sealed)
            .send()
            .await;
        assert_eq!(res.status(), 401, "{name}: {}", res.text());
        assert_eq!(
            res.header("content-type"),
            Some("application/problem+json"),
            "{name}"
        );
        assert!(!res.text().contains(SECRET), "{name}: {}", res.text());
        assert!(res.problem().get("errors").is_none(), "{name}");
    }
}

#[tokio::test]
async fn a_problem_that_cannot_be_sealed_tells_nothing_of_the_request() {
    // The app verifies `s1`'s signatures but holds no seed to sign its
    // answers with: the problem cannot be sealed, so it goes out
    // without its detail.
    let seed = [0x33; 32];
    let public = ed25519_dalek::SigningKey::from_bytes(&seed)
        .verifying_key()
        .to_bytes();
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let app = App::new()
        .settings::<Keyring>("cose")
        .config(
            Config::from_settings([("COSE_KEYS", format!("s1:EdDSA-public:{}", b64(&public)))])
                .unwrap(),
        )
        .route("/orders", post(order));
    let client = TestClient::new(app);
    let payload = cbor(&json!({"item": "", "qty": SECRET}));
    let sealed = keyring().seal(Seal::Sign1, b"s1", &payload).unwrap();
    let res = client
        .post("/orders")
        .header("content-type", "application/cose")
        .body(sealed)
        .send()
        .await;
    assert_eq!(res.status(), 422, "{}", res.text());
    assert_eq!(res.header("content-type"), Some("application/problem+json"));
    assert!(!res.text().contains(SECRET), "{}", res.text());
    assert!(!res.text().contains("/qty"), "{}", res.text());
    let problem = res.problem();
    assert!(problem.get("errors").is_none(), "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("cannot be sealed"),
        "{problem}"
    );
}

#[tokio::test]
async fn a_problem_the_handler_returns_to_a_sealed_request_is_sealed_too() {
    let client_keys = keyring();
    for (name, app) in apps() {
        let layered = name == "path layer" || name == "all of them";
        let client = TestClient::new(app);
        for (seal, kid) in [
            (Seal::Encrypt0, "k1"),
            (Seal::Mac0, "m1"),
            (Seal::Sign1, "s1"),
        ] {
            let paths: &[&str] = if layered {
                &["/missing", "/missing/layered"]
            } else {
                &["/missing"]
            };
            for (p, path) in paths.iter().enumerate() {
                // `Accept` is ignored for a problem, as for the 422.
                for (qty, accept) in [(1, None), (2, Some("application/json"))] {
                    // `qty` makes each message new: the same MAC twice is
                    // a replay.
                    let payload = cbor(&json!({"item": "secret", "qty": qty + 10 * p}));
                    let sealed = client_keys.seal(seal, kid.as_bytes(), &payload).unwrap();
                    let mut req = client
                        .post(path)
                        .header("content-type", "application/cose")
                        .body(sealed);
                    if let Some(accept) = accept {
                        req = req.header("accept", accept);
                    }
                    let res = req.send().await;
                    let what = format!("{name} {path} {seal:?} {accept:?}");
                    assert_eq!(res.status(), 404, "{what}: {}", res.text());
                    assert_eq!(
                        res.header("content-type"),
                        Some("application/cose"),
                        "{what}: {}",
                        res.text()
                    );
                    if seal == Seal::Encrypt0 {
                        assert!(!res.text().contains("secret"), "{what}: {}", res.text());
                    }
                    // A fresh keyring: one would take a second MAC of the
                    // same problem for a replay.
                    let opened = keyring().open(res.bytes()).await.unwrap();
                    assert_eq!(opened.seal, seal, "{what}");
                    let problem: Value = ciborium::from_reader(&opened.payload[..]).unwrap();
                    assert_eq!(problem["status"], 404, "{what}: {problem}");
                    assert_eq!(
                        problem["detail"], "secret item 7 not found",
                        "{what}: {problem}"
                    );
                }
            }
        }
        // The same handler to a plaintext request: its problem as it is.
        let res = client
            .post("/missing")
            .json(&json!({"item": "nails", "qty": 3}))
            .send()
            .await;
        assert_eq!(res.status(), 404, "{name}: {}", res.text());
        assert_eq!(res.header("content-type"), Some("application/problem+json"));
        assert_eq!(
            res.detail().as_deref(),
            Some("nails item 7 not found"),
            "{name}"
        );
    }
}

#[tokio::test]
async fn an_error_the_handler_returns_to_a_sealed_request_is_never_plaintext() {
    // `(StatusCode, String)` is no problem document: there is nothing to
    // seal but its status, so the client gets a sealed problem of that
    // status, and the string (which quotes the payload) is not sent.
    let client_keys = keyring();
    for (name, app) in apps() {
        let client = TestClient::new(app);
        let payload = cbor(&json!({"item": "secret", "qty": 3}));
        let sealed = client_keys.seal(Seal::Encrypt0, b"k1", &payload).unwrap();
        let res = client
            .post("/conflict")
            .header("content-type", "application/cose")
            .body(sealed)
            .send()
            .await;
        assert_eq!(res.status(), 409, "{name}: {}", res.text());
        assert_eq!(
            res.header("content-type"),
            Some("application/cose"),
            "{name}: {}",
            res.text()
        );
        let opened = keyring().open(res.bytes()).await.unwrap();
        let problem: Value = ciborium::from_reader(&opened.payload[..]).unwrap();
        assert_eq!(problem["status"], 409, "{name}: {problem}");
        assert!(!problem.to_string().contains("secret"), "{name}: {problem}");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("could not be sealed"),
            "{name}: {problem}"
        );
        // To a plaintext request, the handler's own answer.
        let res = client
            .post("/conflict")
            .json(&json!({"item": "nails", "qty": 3}))
            .send()
            .await;
        assert_eq!(res.status(), 409, "{name}");
        assert_eq!(res.text(), "nails is taken", "{name}");
    }
}

#[tokio::test]
async fn a_handler_problem_that_cannot_be_sealed_tells_nothing_of_the_request() {
    // As for the 422: no seed to sign the problem with, so it keeps its
    // status and loses its detail.
    let seed = [0x33; 32];
    let public = ed25519_dalek::SigningKey::from_bytes(&seed)
        .verifying_key()
        .to_bytes();
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let app = App::new()
        .settings::<Keyring>("cose")
        .config(
            Config::from_settings([("COSE_KEYS", format!("s1:EdDSA-public:{}", b64(&public)))])
                .unwrap(),
        )
        .route("/missing", post(missing));
    let client = TestClient::new(app);
    let payload = cbor(&json!({"item": "secret", "qty": 3}));
    let sealed = keyring().seal(Seal::Sign1, b"s1", &payload).unwrap();
    let res = client
        .post("/missing")
        .header("content-type", "application/cose")
        .body(sealed)
        .send()
        .await;
    assert_eq!(res.status(), 404, "{}", res.text());
    assert_eq!(res.header("content-type"), Some("application/problem+json"));
    assert!(!res.text().contains("secret"), "{}", res.text());
    assert!(
        res.detail()
            .unwrap_or_default()
            .contains("cannot be sealed"),
        "{}",
        res.text()
    );
}

/// A `?` on an internal error after the request was opened: a `500`
/// whose detail names internals.
async fn failing(Valid(o): Valid<Order>) -> Result<Valid<Receipt>, Problem> {
    Err(
        Problem::new(StatusCode::INTERNAL_SERVER_ERROR).with_detail(format!(
            "the database refused row {}: disk full at /var/db",
            o.item
        )),
    )
}

#[tokio::test]
async fn a_500_to_a_sealed_request_hides_its_internals_in_production() {
    let app = |production: bool| {
        let mut settings = vec![("COSE_KEYS", keys())];
        if production {
            settings.extend([
                ("TERN_ENV", "production".to_owned()),
                ("SECRET_KEY", "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ".to_owned()),
                ("ALLOWED_HOSTS", "localhost".to_owned()),
            ]);
        }
        App::new()
            .settings::<Keyring>("cose")
            .config(Config::from_settings(settings).unwrap())
            .route("/failing", post(failing))
    };
    for (production, expected) in [
        (
            false,
            "the database refused row secret: disk full at /var/db",
        ),
        (true, "the server failed to answer this request"),
    ] {
        let client = TestClient::new(app(production));
        let payload = cbor(&json!({"item": "secret", "qty": 3}));
        let sealed = keyring().seal(Seal::Encrypt0, b"k1", &payload).unwrap();
        let res = client
            .post("/failing")
            .header("host", "localhost")
            .header("content-type", "application/cose")
            .body(sealed)
            .send()
            .await;
        assert_eq!(res.status(), 500, "{production}: {}", res.text());
        assert_eq!(res.header("content-type"), Some("application/cose"));
        let opened = keyring().open(res.bytes()).await.unwrap();
        let problem: Value = ciborium::from_reader(&opened.payload[..]).unwrap();
        assert_eq!(problem["detail"], expected, "{production}: {problem}");
    }
}
