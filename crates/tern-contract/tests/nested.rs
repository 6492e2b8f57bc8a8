//! Nested contracts list every problem (issue 26): a field that is itself
//! a contract, a list, an `Option`, a `Box` or a map of contracts is
//! walked on the error path, so one `422` names each missing or mistyped
//! field inside it, in JSON and CBOR alike; at the limits (the deepest
//! nesting a body may have, 10,000 bad items) the answer stays bounded.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tern::{routing::post, test::TestClient, App};
use tern_contract::{contract, Valid, Violations};

#[contract]
struct Person {
    #[contract(length(min = 1))]
    name: String,
    #[contract(email)]
    email: String,
}

#[contract]
struct Item {
    #[contract(length(min = 1))]
    name: String,
    #[contract(range(min = 1))]
    qty: u32,
}

#[contract]
struct Order {
    owner: Person,
    #[contract(length(max = 20_000))]
    items: Vec<Item>,
    #[serde(default)]
    backup: Option<Person>,
    #[serde(default)]
    contacts: BTreeMap<String, Person>,
}

/// A chain as deep as a body may nest.
#[contract]
struct Node {
    #[contract(range(max = 10))]
    n: u32,
    #[serde(default)]
    child: Option<Box<Node>>,
}

async fn order(Valid(_): Valid<Order>) -> &'static str {
    "ok"
}

async fn node(Valid(_): Valid<Node>) -> &'static str {
    "ok"
}

fn client() -> TestClient {
    TestClient::new(
        App::new()
            .route("/orders", post(order))
            .route("/nodes", post(node)),
    )
}

fn cbor(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::into_writer(value, &mut out).unwrap();
    out
}

/// POSTs `body` as JSON, then as CBOR: the two problems, which must be
/// the same.
async fn post_both(client: &TestClient, path: &str, body: &Value) -> Value {
    let json_res = client.post(path).json(body).send().await;
    assert_eq!(json_res.status(), 422, "JSON: {}", json_res.text());
    let cbor_res = client
        .post(path)
        .header("content-type", "application/cbor")
        .body(cbor(body))
        .send()
        .await;
    assert_eq!(cbor_res.status(), 422, "CBOR: {}", cbor_res.text());
    let (a, b) = (json_res.problem(), cbor_res.problem());
    assert_eq!(a["errors"], b["errors"], "JSON and CBOR differ");
    a
}

fn pointers(problem: &Value) -> Vec<(String, String)> {
    problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["pointer"].as_str().unwrap().to_owned(),
                e["rule"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn good_person() -> Value {
    json!({"name": "Ada", "email": "ada@example.com"})
}

#[tokio::test]
async fn every_problem_inside_a_nested_contract_is_listed() {
    let client = client();
    type Case = (&'static str, Value, &'static [(&'static str, &'static str)]);
    let table: &[Case] = &[
        (
            "an empty nested contract",
            json!({"owner": {}, "items": []}),
            &[("/owner/name", "required"), ("/owner/email", "required")],
        ),
        (
            "a list with two bad items",
            json!({"owner": good_person(), "items": [
                {"name": "nails", "qty": "many"},
                {"qty": 3},
                {"name": "ok", "qty": 1},
            ]}),
            &[("/items/0/qty", "type"), ("/items/1/name", "required")],
        ),
        (
            "shape and rules at once, at every level",
            json!({"owner": {"name": "", "email": 7, "age": 3}, "items": [{"name": "", "qty": 0}]}),
            &[
                ("/owner/name", "length"),
                ("/owner/email", "type"),
                ("/owner/age", "additionalProperties"),
                ("/items/0/name", "length"),
                ("/items/0/qty", "range"),
            ],
        ),
        (
            "an Option and a map of contracts",
            json!({"owner": good_person(), "items": [],
                   "backup": {"name": "Bob"},
                   "contacts": {"ada": good_person(), "eve": {"email": "nope"}}}),
            &[
                ("/backup/email", "required"),
                ("/contacts/eve/name", "required"),
                ("/contacts/eve/email", "email"),
            ],
        ),
        (
            "not an object where a contract is: the strict message, there",
            json!({"owner": "Ada", "items": [{"name": "a", "qty": 1}, 5]}),
            &[("/owner", "type"), ("/items/1", "type")],
        ),
        (
            "missing at the top, broken inside",
            json!({"items": [{"name": "a"}]}),
            &[("/owner", "required"), ("/items/0/qty", "required")],
        ),
    ];
    for (case, body, expected) in table {
        let problem = post_both(&client, "/orders", body).await;
        let got = pointers(&problem);
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(p, r)| ((*p).to_owned(), (*r).to_owned()))
            .collect();
        assert_eq!(got, expected, "{case}: {problem}");
    }
}

/// `{"n": 1, "child": {"n": 1, "child": ...}}`, `depth` objects deep,
/// the innermost with `innermost`.
fn chain(depth: usize, innermost: Value) -> Value {
    let mut value = innermost;
    for _ in 1..depth {
        value = json!({"n": 1, "child": value});
    }
    value
}

async fn post_as(client: &TestClient, content_type: &str, body: &Value) -> (u16, Value) {
    let bytes = if content_type == "application/cbor" {
        cbor(body)
    } else {
        serde_json::to_vec(body).unwrap()
    };
    let res = client
        .post("/nodes")
        .header("content-type", content_type)
        .body(bytes)
        .send()
        .await;
    (res.status().as_u16(), res.problem())
}

#[tokio::test]
async fn the_deepest_nesting_allowed_is_walked_without_blowing_the_stack() {
    let client = client();
    // The strict reads allow 128 levels (`MAX_DEPTH`): serde_json counts
    // an object as one, the CBOR reader a map and the `Option` in it, so
    // the deepest chains a body can send are 127 and 64 objects.
    for (content_type, deepest) in [("application/json", 127), ("application/cbor", 64)] {
        let body = chain(deepest, json!({"n": "one", "child": null}));
        let started = Instant::now();
        let (status, problem) = post_as(&client, content_type, &body).await;
        let elapsed = started.elapsed();
        assert_eq!(status, 422, "{content_type}: {problem}");
        let deep = format!("{}/n", "/child".repeat(deepest - 1));
        assert_eq!(
            pointers(&problem),
            vec![(deep, "type".to_owned())],
            "{content_type}"
        );
        // Each level reads what is below it once more (the strict read of
        // its failing field, then the lenient one): at most 128 passes
        // over the chain. Far under a second even unoptimised; a walk
        // that went exponential would not be.
        assert!(
            elapsed < Duration::from_secs(5),
            "{content_type}: {elapsed:?}"
        );
        // One level more is past the limit: the strict read's 400.
        let too_deep = chain(deepest + 1, json!({"n": "one", "child": null}));
        let (status, problem) = post_as(&client, content_type, &too_deep).await;
        assert_eq!(status, 400, "{content_type}: {problem}");

        // A problem at every level: each one counted, once.
        let mut body = json!({"n": 11});
        for _ in 1..deepest {
            body = json!({"n": 11, "child": body, "x": 0});
        }
        let (status, problem) = post_as(&client, content_type, &body).await;
        assert_eq!(status, 422, "{content_type}: {problem}");
        let errors = pointers(&problem);
        // In field order at each level: `n`'s rule, then what is inside
        // `child`, then the unknown `x`.
        assert_eq!(errors[0], ("/n".to_owned(), "range".to_owned()));
        assert_eq!(errors[1], ("/child/n".to_owned(), "range".to_owned()));
        let found = errors.len() as u64 + problem["errorsCut"].as_u64().unwrap_or(0);
        assert_eq!(found, 2 * (deepest as u64 - 1) + 1, "{content_type}");
        assert_eq!(errors.len(), found.min(100) as usize);
    }
}

#[tokio::test]
async fn ten_thousand_bad_items_give_a_bounded_answer() {
    let client = client();
    let items: Vec<Value> = (0..10_000).map(|_| json!({})).collect();
    let body = json!({"owner": good_person(), "items": items});
    let started = Instant::now();
    let problem = post_both(&client, "/orders", &body).await;
    let elapsed = started.elapsed();
    let errors = problem["errors"].as_array().unwrap();
    assert_eq!(errors.len(), Violations::LISTED, "{problem}");
    assert_eq!(errors[0]["pointer"], "/items/0/name");
    assert_eq!(errors[1]["pointer"], "/items/0/qty");
    assert_eq!(errors[99]["pointer"], "/items/49/qty");
    // Every one counted, the rest cut, and the detail says so.
    assert_eq!(problem["errorsCut"], 20_000 - 100);
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("20000 values break their contract (the first 100 are listed in `errors`, 19900 more were cut)"),
        "{detail}"
    );
    assert!(detail.len() < 2_000, "{} bytes of detail", detail.len());
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
}

/// A small deterministic generator (xorshift), so that a failure names
/// its seed and replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[tokio::test]
async fn every_mutation_anywhere_is_named_once_differential() {
    // The reference is the list of what was broken: a valid order is
    // broken in one to five distinct places (a required field removed,
    // a value of the wrong type, an unknown field), anywhere in the
    // nesting; the 422 must name exactly those places.
    let client = client();
    let objects: Vec<(&str, &[&str])> = vec![
        ("/owner", &["name", "email"]),
        ("/items/0", &["name", "qty"]),
        ("/items/1", &["name", "qty"]),
        ("/items/2", &["name", "qty"]),
        ("/backup", &["name", "email"]),
        ("/contacts/ada", &["name", "email"]),
        ("/contacts/bob", &["name", "email"]),
    ];
    for seed in 1..=150u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut body = json!({
            "owner": good_person(),
            "items": [{"name": "a", "qty": 1}, {"name": "b", "qty": 2}, {"name": "c", "qty": 3}],
            "backup": good_person(),
            "contacts": {"ada": good_person(), "bob": good_person()},
        });
        let mut expected: Vec<(String, String)> = Vec::new();
        let mut used: Vec<(usize, usize)> = Vec::new();
        for _ in 0..=rng.below(5) {
            let o = rng.below(objects.len());
            let (at, fields) = &objects[o];
            // The fields, then a slot for an unknown one.
            let f = rng.below(fields.len() + 1);
            if used.contains(&(o, f)) {
                continue;
            }
            used.push((o, f));
            let object = body.pointer_mut(at).unwrap().as_object_mut().unwrap();
            if f == fields.len() {
                object.insert("zz".to_owned(), json!(true));
                expected.push((format!("{at}/zz"), "additionalProperties".to_owned()));
            } else if rng.below(2) == 0 {
                object.remove(fields[f]);
                expected.push((format!("{at}/{}", fields[f]), "required".to_owned()));
            } else {
                object.insert(fields[f].to_owned(), json!([]));
                expected.push((format!("{at}/{}", fields[f]), "type".to_owned()));
            }
        }
        let problem = post_both(&client, "/orders", &body).await;
        let mut got = pointers(&problem);
        got.sort();
        expected.sort();
        assert_eq!(got, expected, "seed {seed}: {body}");
    }
}
