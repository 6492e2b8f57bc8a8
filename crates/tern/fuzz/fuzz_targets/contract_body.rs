//! Contract bodies through `tern_contract::Valid<T>` in process: JSON,
//! CBOR and COSE bytes as a client would send them, and CBOR payloads
//! sealed with a valid COSE envelope so that the decoder behind the seal
//! is reached too. Every answer is a 200 or a 4xx: never a 500, a panic
//! or a hang.
//!
//! `cd crates/tern/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run contract_body`
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::{arbitrary, fuzz_target};
use tern::{routing::post, App, AppService, Config};
use tern_contract::{
    contract,
    cose::{Keyring, Seal},
    Valid,
};

#[contract]
#[derive(Debug)]
struct Item {
    #[contract(length(min = 1, max = 80))]
    name: String,
    #[contract(range(min = 1, max = 1000))]
    qty: u32,
    #[contract(email)]
    owner: Option<String>,
    #[serde(default)]
    #[contract(length(max = 8), each(length(max = 20), pattern = "[a-z]+"))]
    tags: Vec<String>,
    #[serde(default)]
    parts: Vec<Part>,
    kind: Option<Kind>,
}

#[contract]
#[derive(Debug)]
struct Part {
    #[contract(uuid)]
    id: String,
    #[contract(date_time)]
    at: Option<String>,
    #[serde(default)]
    meta: std::collections::BTreeMap<String, serde_json::Value>,
}

#[contract]
#[derive(Debug)]
enum Kind {
    Tool,
    Part,
}

#[derive(Debug, arbitrary::Arbitrary)]
enum Input {
    Json(Vec<u8>),
    Cbor(Vec<u8>),
    Cose(Vec<u8>),
    /// A valid envelope around fuzzed CBOR.
    Sealed(u8, Vec<u8>),
}

const KEYS: &str = "k1:A256GCM:ERERERERERERERERERERERERERERERERERERERERERE=,\
                    m1:HMAC256:IiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiI=,\
                    s1:EdDSA:MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM=";

fn config() -> Config {
    Config::from_settings([
        ("COSE_KEYS", KEYS),
        ("COSE_REPLAY_WINDOW", "1"),
        ("COSE_REPLAY_CAPACITY", "100000000"),
    ])
    .expect("a configuration")
}

async fn echo(Valid(item): Valid<Item>) -> Valid<Item> {
    Valid(item)
}

fn app() -> AppService {
    App::new()
        .settings::<Keyring>("cose")
        .route("/items", post(echo))
        .build_with(config())
        .expect("the app builds")
}

fuzz_target!(|input: Input| {
    thread_local! {
        static APP: AppService = app();
        static KEYRING: Keyring = tern::settings::load("cose", &config()).expect("keys");
    }
    let (content_type, body) = match input {
        Input::Json(b) => ("application/json", b),
        Input::Cbor(b) => ("application/cbor", b),
        Input::Cose(b) => ("application/cose", b),
        Input::Sealed(which, payload) => {
            let (seal, kid) = match which % 3 {
                0 => (Seal::Encrypt0, "k1"),
                1 => (Seal::Mac0, "m1"),
                _ => (Seal::Sign1, "s1"),
            };
            let sealed = KEYRING.with(|k| k.seal(seal, kid.as_bytes(), &payload));
            ("application/cose", sealed.expect("sealed"))
        }
    };
    let len = body.len();
    let app = APP.with(Clone::clone);
    common::block_on(async move {
        let req = http::Request::post("/items")
            .header("content-type", content_type)
            .body(tern::body::Body::from(body))
            .expect("a request");
        let res = app.call(req, None).await;
        common::assert_ok_or_client_error(
            res.status().as_u16(),
            format_args!("{content_type}, {len} bytes"),
        );
    });
});
