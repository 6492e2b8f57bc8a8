//! Schema contracts: one Rust type gives validation, the JSON Schema and
//! the extractor that enforces both.
//!
//! ```
//! use tern::{App, routing::post, test::TestClient};
//! use tern_contract::{contract, Contract, Valid};
//!
//! #[contract]
//! struct CreateItem {
//!     #[contract(length(min = 1, max = 80))]
//!     name: String,
//!     #[contract(range(min = 1, max = 1000))]
//!     qty: u32,
//!     #[contract(email)]
//!     owner: String,
//!     #[contract(length(max = 8), each(length(max = 20)))]
//!     tags: Vec<String>,
//! }
//!
//! #[contract]
//! struct Ack {
//!     #[contract(range(min = 1))]
//!     id: u64,
//! }
//!
//! async fn create(Valid(item): Valid<CreateItem>) -> Valid<Ack> {
//!     Valid(Ack { id: u64::from(item.qty) })
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let client = TestClient::new(App::new().route("/items", post(create)));
//! let res = client.post("/items")
//!     .json(&serde_json::json!({"name": "", "qty": 0, "owner": "ada", "tags": []}))
//!     .send().await;
//! assert_eq!(res.status(), 422);
//! let errors = &res.problem()["errors"];
//! assert_eq!(errors.as_array().unwrap().len(), 3); // every broken rule
//! assert_eq!(errors[0]["pointer"], "/name");
//! assert_eq!(errors[0]["rule"], "length");
//!
//! // The same rules, as JSON Schema (draft 2020-12):
//! let schema = CreateItem::json_schema();
//! assert_eq!(schema["$defs"]["CreateItem"]["properties"]["qty"]["maximum"], 1000);
//! # }
//! ```
//!
//! # Rules
//! | rule | applies to | schema |
//! |---|---|---|
//! | `length(min = a, max = b)` | characters of a `String`, items of a `Vec`, entries of a map | `minLength`/`maxLength`, `minItems`/`maxItems`, `minProperties`/`maxProperties` |
//! | `range(min = a, max = b)` | numbers (inclusive) | `minimum`/`maximum` |
//! | `pattern = "regex"` | strings; the whole string must match (checked at compile time) | `pattern` (anchored) |
//! | `email`, `uri`, `uuid`, `date_time` | strings | `format` |
//! | `each(rules)` | every item of a `Vec` | on `items` |
//! | `custom = path::to::check` | anything: `fn(&T) -> Result<(), String>` | none |
//!
//! A rule on an `Option` applies when the value is present; an `Option`
//! field may be absent or `null`. A field whose type is itself a contract
//! is checked with its own rules (pointers continue: `/owner/email`), as
//! are contracts in lists and maps; a `422` lists every problem inside
//! them too (`/owner/name`, `/items/3/qty`). It lists at most
//! [`Violations::LISTED`] (100) and counts the rest (`errorsCut`), so
//! that 10,000 bad items cannot make a huge answer. A query's nested
//! parameters (`user[name]=x`) name the first problem inside each. A
//! unit `enum` with `#[contract]` is a
//! string with a fixed set of values. Unknown fields are refused (`422`
//! naming them), as the schema's `additionalProperties: false` says.
//!
//! # Formats
//! [`Valid<T>`] reads `application/json`, `application/cbor` (RFC 8949)
//! and, when the app loads a [`cose::Keyring`], `application/cose` (RFC
//! 9052: `COSE_Encrypt0`, `COSE_Mac0`, `COSE_Sign1`); it answers in the
//! format `Accept` prefers, else the request's. A sealed request gets a
//! sealed answer, never plaintext: `406` when `Accept` refuses
//! `application/cose`, a `500` without payload when the answer cannot be
//! sealed. A problem found once the request is opened (its `422`, a
//! payload that is not CBOR, an answer that breaks its contract, a
//! problem the handler returns itself) is sealed the same way
//! (`application/cose`, the problem in CBOR), or, when it cannot be, sent
//! without its detail. A request refused before it can be opened (no
//! key, an unknown key, a bad tag, a replay) gets a plaintext problem:
//! nothing of the payload is known to put in it. Negotiation holds
//! behind any layer (it travels with the handler's future, not in the
//! request context). [`ValidQuery<T>`] reads a query string as a contract
//! (`?limit=20&tag=a&tag=b`) with the same rules and the same `422`.
//! [`openapi::OpenApi`] makes the app's OpenAPI 3.1 document from the same
//! types (a `ValidQuery` field is a query parameter with its constraints)
//! and serves it with a docs page.
//!
//! `#[contract]` derives `serde::Serialize` and `serde::Deserialize`
//! (do not derive them again); `#[serde(rename = ..)]`,
//! `#[serde(rename_all = ..)]` and `#[serde(default)]` are understood, and
//! errors and schemas use the names on the wire.

pub mod cose;
mod format;
#[doc(hidden)]
pub mod integer;
pub mod openapi;
mod query;
pub mod rules;
pub mod schema;
#[doc(hidden)]
pub mod shape;
mod valid;
mod violation;

pub use format::Format;
pub use query::ValidQuery;
pub use schema::{Definitions, FieldType};
pub use valid::Valid;
pub use violation::{Pointer, Violation, Violations};

/// Makes a struct (named fields) or a unit enum a contract; see the
/// [crate documentation](crate).
pub use tern_macros::contract;

use serde::{de::DeserializeOwned, Serialize};
use serde_json::{json, Value};

/// A type whose values have rules: implemented by `#[contract]`.
pub trait Contract: Serialize + DeserializeOwned + FieldType {
    /// The type's name in schemas (`CreateItem`).
    const NAME: &'static str;

    /// Checks every rule of the value, adding what is broken to `errors`
    /// at the pointers under `at`.
    fn validate_into(&self, at: &Pointer<'_>, errors: &mut Violations);

    /// The schema of the type's object, with the named schemas of the
    /// contracts inside it added to `defs`.
    fn object_schema(defs: &mut Definitions) -> Value;

    /// Checks every rule; every broken one, in field order.
    fn validate(&self) -> Result<(), Violations> {
        let mut errors = Violations::default();
        self.validate_into(&Pointer::root(), &mut errors);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// Reads a value leniently from `de` (a tree: a JSON value, a query
    /// string's pairs), adding to `errors` every missing field, every
    /// value of the wrong type, every unknown field, and every broken rule
    /// of the fields that decoded; `whole` is the same value as JSON,
    /// when at hand, to point inside a field's value. `Ok(false)` when the
    /// type cannot (a contract not written by `#[contract]`). For the
    /// error path of [`Valid`] and [`ValidQuery`]; `#[contract]` writes
    /// it.
    #[doc(hidden)]
    fn __collect<'de, D: serde::Deserializer<'de>>(
        de: D,
        whole: Option<&Value>,
        at: &Pointer<'_>,
        errors: &mut Violations,
    ) -> Result<bool, D::Error> {
        let _ = (de, whole, at, errors);
        Ok(false)
    }

    /// A JSON Schema document (draft 2020-12) for the type.
    fn json_schema() -> Value {
        let mut defs = Definitions::json_schema();
        let root = Self::schema(&mut defs);
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": root["$ref"],
            "$defs": defs.into_schemas(),
        })
    }
}

/// For the code `#[contract]` generates; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::{integer, rules, schema, shape};
    pub use serde;
    pub use serde_json;
    pub use std::sync::OnceLock;
}
