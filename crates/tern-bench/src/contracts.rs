//! Schema contracts on the wire: what validation, CBOR and COSE cost per
//! request, against plain serde.
//!
//! Four scenarios, one order (8 fields) in and one acknowledgement (5
//! fields) out, routed through the 1,000-route table of
//! [`crate::inprocess::route_table`]:
//!
//! | scenario | route | body | extractor and answer |
//! |---|---|---|---|
//! | `generic` | `POST /generic` | JSON | `tern::Json<GenericOrder>` → `tern::Json<GenericAck>`, no rules |
//! | `json` | `POST /json` | JSON | `Valid<Order>` → `Valid<Ack>`: both validated |
//! | `cbor` | `POST /cbor` | CBOR | the same handler, CBOR both ways |
//! | `cose` | `POST /cose` | COSE_Encrypt0 (AES-256-GCM) of the CBOR | the same handler: decrypt, validate, encode, encrypt with a fresh nonce |
//!
//! `/json`, `/cbor` and `/cose` are one handler under three paths, so
//! that each scenario names its route; they cost the same to route.
//!
//! The app refuses a COSE message it has seen within its replay window,
//! so a load of `cose` requests replays a pool of distinct sealed
//! messages ([`table`]) against a server whose window is
//! [`REPLAY_WINDOW_S`]: a message comes round again only after the pool
//! has cycled, seconds later. [`lab`] runs the scenarios over real
//! sockets and under callgrind.

use anyhow::{bail, ensure, Context, Result};
use base64::Engine as _;
use bytes::Bytes;
use http::{header, Request};
use serde::{Deserialize, Serialize};
use tern::{routing::post, App, AppService, Config, Json};
use tern_contract::{
    contract,
    cose::{Keyring, Seal},
    Valid,
};

use crate::{inprocess::route_table, wrk::TableRequest};

pub mod lab;

/// A scenario: its name, route and the media type of its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scenario {
    /// `generic`, `json`, `cbor` or `cose`.
    pub name: &'static str,
    /// The route it posts to.
    pub path: &'static str,
    /// The request's `Content-Type`, which the answer's must equal.
    pub content_type: &'static str,
    /// What it measures.
    pub description: &'static str,
}

/// The scenarios, in table order.
pub const SCENARIOS: [Scenario; 4] = [
    Scenario {
        name: "generic",
        path: "/generic",
        content_type: "application/json",
        description: "tern::Json<GenericOrder> in, tern::Json<GenericAck> out: plain serde, no rules",
    },
    Scenario {
        name: "json",
        path: "/json",
        content_type: "application/json",
        description: "Valid<Order> in, Valid<Ack> out, JSON: request and answer validated",
    },
    Scenario {
        name: "cbor",
        path: "/cbor",
        content_type: "application/cbor",
        description: "the same handler, CBOR both ways",
    },
    Scenario {
        name: "cose",
        path: "/cose",
        content_type: "application/cose",
        description: "the same handler, COSE_Encrypt0 (AES-256-GCM) both ways: decrypt, validate, encode, encrypt with a fresh nonce",
    },
];

/// The scenario called `name`.
pub fn scenario(name: &str) -> Result<Scenario> {
    SCENARIOS
        .iter()
        .find(|s| s.name == name)
        .copied()
        .with_context(|| {
            format!(
                "unknown scenario `{name}`; the scenarios are {}",
                SCENARIOS.map(|s| s.name).join(", ")
            )
        })
}

/// A currency: a string with a fixed set of values.
#[contract]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Currency {
    /// Euro.
    Eur,
    /// US dollar.
    Usd,
    /// Pound sterling.
    Gbp,
}

/// The order: 8 fields, a rule on each but `currency` (whose rule is its
/// set of values).
#[contract]
#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    /// 1 to 80 characters.
    #[contract(length(min = 1, max = 80))]
    pub name: String,
    /// 1 to 1,000.
    #[contract(range(min = 1, max = 1000))]
    pub qty: u32,
    /// An email address.
    #[contract(email)]
    pub owner: String,
    /// At most 8 tags of at most 20 characters.
    #[contract(length(max = 8), each(length(max = 20)))]
    pub tags: Vec<String>,
    /// `ABC-1234`.
    #[contract(pattern = "[A-Z]{3}-[0-9]{4}")]
    pub sku: String,
    /// 1 cent to 100,000.00.
    #[contract(range(min = 1, max = 10000000))]
    pub price_cents: u64,
    /// The currency.
    pub currency: Currency,
    /// At most 200 characters, if any.
    #[contract(length(max = 200))]
    pub note: Option<String>,
}

/// The acknowledgement: 5 fields.
#[contract]
#[derive(Debug, Clone, PartialEq)]
pub struct Ack {
    /// At least 1.
    #[contract(range(min = 1))]
    pub id: u64,
    /// `accepted`.
    pub status: String,
    /// `qty * price_cents`.
    pub total_cents: u64,
    /// The order's currency.
    pub currency: Currency,
    /// An RFC 3339 date and time.
    #[contract(date_time)]
    pub accepted_at: String,
}

/// [`Currency`] as plain serde.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GenericCurrency {
    /// Euro.
    Eur,
    /// US dollar.
    Usd,
    /// Pound sterling.
    Gbp,
}

/// [`Order`] as plain serde: the same fields and wire form, no rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenericOrder {
    /// Name.
    pub name: String,
    /// Quantity.
    pub qty: u32,
    /// Owner's email address.
    pub owner: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Stock-keeping unit.
    pub sku: String,
    /// Unit price.
    pub price_cents: u64,
    /// Currency.
    pub currency: GenericCurrency,
    /// A note.
    pub note: Option<String>,
}

/// [`Ack`] as plain serde.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenericAck {
    /// Order number.
    pub id: u64,
    /// `accepted`.
    pub status: String,
    /// `qty * price_cents`.
    pub total_cents: u64,
    /// The order's currency.
    pub currency: GenericCurrency,
    /// An RFC 3339 date and time.
    pub accepted_at: String,
}

/// The time every answer gives: a constant, so that no scenario pays for
/// a clock the others do not.
pub const ACCEPTED_AT: &str = "2025-06-01T12:00:00Z";

/// The order every request carries.
pub fn order() -> Order {
    Order {
        name: "Darjeeling, first flush".to_owned(),
        qty: 3,
        owner: "amber@example.com".to_owned(),
        tags: vec!["tea".to_owned(), "loose".to_owned(), "organic".to_owned()],
        sku: "TEA-0042".to_owned(),
        price_cents: 1250,
        currency: Currency::Eur,
        note: Some("ring twice".to_owned()),
    }
}

/// The answer to [`order`].
pub fn expected_ack() -> Ack {
    Ack {
        id: 4203,
        status: "accepted".to_owned(),
        total_cents: 3750,
        currency: Currency::Eur,
        accepted_at: ACCEPTED_AT.to_owned(),
    }
}

async fn generic(Json(o): Json<GenericOrder>) -> Json<GenericAck> {
    Json(GenericAck {
        id: 4200 + u64::from(o.qty),
        status: "accepted".to_owned(),
        total_cents: o.price_cents * u64::from(o.qty),
        currency: o.currency,
        accepted_at: ACCEPTED_AT.to_owned(),
    })
}

async fn validated(Valid(o): Valid<Order>) -> Valid<Ack> {
    Valid(Ack {
        id: 4200 + u64::from(o.qty),
        status: "accepted".to_owned(),
        total_cents: o.price_cents * u64::from(o.qty),
        currency: o.currency,
        accepted_at: ACCEPTED_AT.to_owned(),
    })
}

/// The bench's AES-256-GCM key, `k1`: public, fixed, never a secret.
const BENCH_KEY: [u8; 32] = [0x5a; 32];

/// The key id of the bench's key.
pub const KID: &[u8] = b"k1";

/// Seconds the server remembers a COSE message (`COSE_REPLAY_WINDOW`).
pub const REPLAY_WINDOW_S: u64 = 1;

/// Messages the server may remember at once (`COSE_REPLAY_CAPACITY`):
/// the default (100,000) is reached within the 1 s window above 100,000
/// requests per second, and a full cache refuses messages (503).
pub const REPLAY_CAPACITY: usize = 2_000_000;

/// The settings of the server's keyring (`COSE_KEYS`,
/// `COSE_REPLAY_WINDOW`, `COSE_REPLAY_CAPACITY`), as environment
/// variables.
pub fn server_settings() -> Vec<(&'static str, String)> {
    vec![
        (
            "COSE_KEYS",
            format!(
                "k1:A256GCM:{}",
                base64::engine::general_purpose::STANDARD.encode(BENCH_KEY)
            ),
        ),
        ("COSE_REPLAY_WINDOW", REPLAY_WINDOW_S.to_string()),
        ("COSE_REPLAY_CAPACITY", REPLAY_CAPACITY.to_string()),
    ]
}

/// The client's keyring: the same key, to seal requests and open answers.
pub fn client_keyring() -> Result<Keyring> {
    let config = Config::from_settings(server_settings())?;
    Ok(tern::settings::load("cose", &config)?)
}

/// The app: the generic route, the contract routes and the 1,000-route
/// table, with the keyring in its settings. Build it with a configuration
/// that holds [`server_settings`].
pub fn app() -> App {
    let app = App::new()
        .route("/generic", post(generic))
        .route("/json", post(validated))
        .route("/cbor", post(validated))
        .route("/cose", post(validated))
        .settings::<Keyring>("cose");
    route_table(app)
}

/// The app built for in-process requests: [`server_settings`], no health
/// route (as the in-process table).
pub fn inprocess_app() -> Result<AppService> {
    let mut config = Config::from_settings(server_settings())?;
    config.health_path = None;
    Ok(app().build_with(config)?)
}

/// The order in CBOR.
pub fn order_cbor() -> Result<Vec<u8>> {
    let mut out = Vec::new();
    ciborium::into_writer(&order(), &mut out)?;
    Ok(out)
}

/// The body of one request of `scenario`; each `cose` body is sealed with
/// a fresh nonce, so no two are the same message.
pub fn body(scenario: &Scenario, keyring: &Keyring) -> Result<Vec<u8>> {
    Ok(match scenario.name {
        "cbor" => order_cbor()?,
        "cose" => keyring
            .seal(Seal::Encrypt0, KID, &order_cbor()?)
            .map_err(anyhow::Error::msg)?,
        _ => serde_json::to_vec(&order())?,
    })
}

/// One in-process request of `scenario`.
pub fn request(scenario: &Scenario, keyring: &Keyring) -> Result<Request<Bytes>> {
    Ok(Request::post(scenario.path)
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, scenario.content_type)
        .body(Bytes::from(body(scenario, keyring)?))?)
}

/// The wrk table of `scenario`: one request, or for `cose` a pool of
/// `pool` distinct sealed ones.
pub fn table(scenario: &Scenario, keyring: &Keyring, pool: usize) -> Result<Vec<TableRequest>> {
    let count = if scenario.name == "cose" {
        pool.max(1)
    } else {
        1
    };
    (0..count)
        .map(|_| {
            Ok(TableRequest {
                method: "POST".into(),
                path: scenario.path.into(),
                headers: vec![("Content-Type".into(), scenario.content_type.into())],
                body: Some(body(scenario, keyring)?),
            })
        })
        .collect()
}

/// Checks an answer of `scenario`: `200`, the request's media type, and
/// the body decoding (a `cose` answer opened with `keyring`) to
/// [`expected_ack`].
pub async fn check_answer(
    scenario: &Scenario,
    status: u16,
    content_type: Option<&str>,
    body: &[u8],
    keyring: &Keyring,
) -> Result<()> {
    let shown = || String::from_utf8_lossy(body).into_owned();
    ensure!(
        status == 200,
        "{}: status {status}, body {}",
        scenario.name,
        shown()
    );
    ensure!(
        content_type == Some(scenario.content_type),
        "{}: content type {content_type:?}, expected {}",
        scenario.name,
        scenario.content_type
    );
    let expected = expected_ack();
    let ack: Ack = match scenario.name {
        "generic" => {
            let plain: GenericAck = serde_json::from_slice(body)?;
            // The plain answer has the contract's wire form.
            serde_json::from_value(serde_json::to_value(plain)?)?
        }
        "json" => serde_json::from_slice(body)?,
        "cbor" => ciborium::from_reader(body)?,
        "cose" => {
            let opened = keyring
                .open(body)
                .await
                .map_err(|e| anyhow::anyhow!("cose: the answer does not open: {e}"))?;
            ensure!(
                opened.seal == Seal::Encrypt0 && opened.kid == KID,
                "cose: the answer is sealed as {:?} with `{}`",
                opened.seal,
                String::from_utf8_lossy(&opened.kid)
            );
            ciborium::from_reader(opened.payload.as_slice())?
        }
        other => bail!("unknown scenario `{other}`"),
    };
    ensure!(
        ack == expected,
        "{}: answered {ack:?}, expected {expected:?}",
        scenario.name
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inprocess::tern_once;
    use tern_contract::Contract as _;

    #[tokio::test]
    async fn every_scenario_answers_in_process() -> Result<()> {
        let app = inprocess_app()?;
        let keyring = client_keyring()?;
        for s in &SCENARIOS {
            // Twice: a second sealed request is a new message, not a replay.
            for _ in 0..2 {
                let res = app
                    .call(request(s, &keyring)?.map(tern::body::Body::from), None)
                    .await;
                let status = res.status().as_u16();
                let content_type = res
                    .headers()
                    .get(header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let body = res.into_body().collect_bytes().await?;
                check_answer(s, status, content_type.as_deref(), &body, &keyring).await?;
            }
        }
        Ok(())
    }

    #[tokio::test]
    async fn generic_and_json_read_the_same_bytes() -> Result<()> {
        let keyring = client_keyring()?;
        let json = body(&SCENARIOS[1], &keyring)?;
        assert_eq!(body(&SCENARIOS[0], &keyring)?, json);
        let plain: GenericOrder = serde_json::from_slice(&json)?;
        assert_eq!(serde_json::to_vec(&plain)?, json);
        order().validate().map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(())
    }

    #[tokio::test]
    async fn a_replayed_cose_request_is_refused() -> Result<()> {
        let app = inprocess_app()?;
        let keyring = client_keyring()?;
        let cose = scenario("cose")?;
        let sealed = Bytes::from(body(&cose, &keyring)?);
        let send = || {
            Request::post(cose.path)
                .header(header::HOST, "localhost")
                .header(header::CONTENT_TYPE, cose.content_type)
                .body(sealed.clone())
        };
        let (req, again) = (send()?, send()?);
        assert_eq!(tern_once(&app, req).await.0, 200);
        // The pool of the load exists because of this refusal.
        assert_eq!(tern_once(&app, again).await.0, 401);
        Ok(())
    }

    #[test]
    fn a_cose_table_holds_distinct_messages() -> Result<()> {
        let keyring = client_keyring()?;
        let t = table(&scenario("cose")?, &keyring, 50)?;
        let mut bodies: Vec<_> = t.iter().filter_map(|r| r.body.clone()).collect();
        bodies.sort();
        bodies.dedup();
        assert_eq!(bodies.len(), 50);
        assert_eq!(table(&scenario("json")?, &keyring, 50)?.len(), 1);
        Ok(())
    }
}
