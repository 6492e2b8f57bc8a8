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
    App, Bytes, Config, Request, Response,
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

/// The apps: one per place a middleware can sit.
fn apps() -> Vec<(&'static str, App)> {
    let base = || {
        App::new()
            .settings::<Keyring>("cose")
            .config(Config::from_settings([("COSE_KEYS", keys())]).unwrap())
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
            base().route("/orders", post(order).layer(from_fn(pass))),
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
    assert_eq!(res.status(), 500, "{}", res.text());
    assert_eq!(res.header("content-type"), Some("application/problem+json"));
    assert!(!res.text().contains("secret"), "{}", res.text());
    let detail = res.detail().unwrap_or_default();
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
