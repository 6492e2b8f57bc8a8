//! Every shape error of a contract at once: a second, lenient read that
//! runs only when the strict one fails, and lists each missing field,
//! each value of the wrong type, each unknown field and each broken rule
//! of the fields that did decode.
//!
//! The strict read (serde's derive, `deny_unknown_fields`) stops at the
//! first error, as serde does: it stays the hot path. The lenient read
//! walks a tree already parsed (a JSON value, a query string's pairs), so
//! that a field that fails leaves the reader where the next field starts;
//! its cost is one pass over the input plus, for each failing field, one
//! more pass over that field's value to find the pointer inside it.

use std::marker::PhantomData;

use serde::{de::DeserializeOwned, Deserialize, Deserializer};
use serde_json::Value;
use tern::Response;
use tern_core::extract::Rejection;

use crate::{format::Format, Contract, Pointer, Violation, Violations};

/// The nesting the strict CBOR read allows (`format.rs`): a body that got
/// as far as a shape error is within it.
const MAX_DEPTH: usize = 128;

/// A field's value read on its own: the value, or why it is not one.
pub struct Captured<T>(pub Result<T, String>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Captured<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Captured(T::deserialize(d).map_err(|e| e.to_string())))
    }
}

/// Records that the required field `name` under `at` is absent.
pub fn missing(at: &Pointer<'_>, name: &'static str, errors: &mut Violations) {
    errors.add(&at.field(name), "required", "is required");
}

/// Records that the field `name` under `at` has a value its type does not
/// take (`message`, serde's), pointing inside it (`/owner/email`) when
/// `value`, the field's value as JSON, is at hand. `F` reads the field as
/// the contract does.
pub fn invalid<F: DeserializeOwned>(
    at: &Pointer<'_>,
    name: &'static str,
    message: &str,
    value: Option<&Value>,
    errors: &mut Violations,
) {
    if errors.is_full() {
        // Counted only: no pointer to look for.
        errors.push(Violation {
            pointer: String::new(),
            rule: "type",
            detail: String::new(),
        });
        return;
    }
    let mut pointer = at.field(name).render();
    if let Some(inner) = value.and_then(tern::__private::json_pointer::<F, _>) {
        pointer.push_str(&inner);
    }
    errors.push(Violation {
        pointer,
        rule: rule_of(message),
        detail: cut(message),
    });
}

/// Lists what is wrong in `value`, the JSON value of a field of
/// contract type `T` at `at` whose strict read failed: every missing,
/// mistyped and unknown field inside it and the rules of those that read
/// (recursing into the contracts inside it), else the strict read's own
/// message, pointing inside. `true` when something was listed.
///
/// Cost: the lenient read of `value`, which reads each of its fields
/// strictly and walks again only into those that fail; so a value costs
/// one pass per level of failing nesting above it, at most `MAX_DEPTH`
/// (the strict read's limit, which the body got past).
pub fn nested<T: Contract>(value: &Value, at: &Pointer<'_>, errors: &mut Violations) -> bool {
    let before = errors.len();
    match T::__collect(value, Some(value), at, errors) {
        Ok(true) if errors.len() > before => return true,
        Ok(_) => {}
        // Not an object: what the strict read says of it, below.
        Err(_) => errors.truncate(before),
    }
    match T::deserialize(value) {
        Ok(_) => false,
        Err(e) => {
            if errors.is_full() {
                errors.push(Violation {
                    pointer: String::new(),
                    rule: "type",
                    detail: String::new(),
                });
                return true;
            }
            let mut pointer = at.render();
            if let Some(inner) = tern::__private::json_pointer::<T, _>(value) {
                pointer.push_str(&inner);
            }
            let message = e.to_string();
            errors.push(Violation {
                pointer,
                rule: rule_of(&message),
                detail: cut(&message),
            });
            true
        }
    }
}

/// The rule a serde message names (its errors carry no kind): JSON's
/// `unknown variant`, a query's `expected one of`, ...
fn rule_of(message: &str) -> &'static str {
    if message.starts_with("unknown variant") || message.starts_with("expected one of") {
        "enum"
    } else if message.starts_with("missing field") {
        "required"
    } else if message.starts_with("unknown field") {
        "additionalProperties"
    } else {
        "type"
    }
}

/// Records that `key` under `at` is not one of `fields`.
pub fn unknown(at: &Pointer<'_>, key: &str, fields: &[&str], errors: &mut Violations) {
    errors.add(
        &at.key(key),
        "additionalProperties",
        format!(
            "is not a field of this contract; its fields are {}",
            fields.join(", ")
        ),
    );
}

/// A serde message, cut to a readable length: it may quote the client's
/// value.
fn cut(message: &str) -> String {
    const MAX: usize = 160;
    if message.len() <= MAX {
        return message.to_owned();
    }
    let mut end = MAX;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &message[..end])
}

/// What the lenient read of a `T` found: the violations, and whether `T`
/// can be read leniently at all (a contract written by `#[contract]`).
pub(crate) struct Collected<T> {
    pub(crate) violations: Violations,
    pub(crate) supported: bool,
    ty: PhantomData<fn() -> T>,
}

impl<'de, T: Contract> Deserialize<'de> for Collected<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut violations = Violations::default();
        let supported = T::__collect(d, None, &Pointer::root(), &mut violations)?;
        Ok(Collected {
            violations,
            supported,
            ty: PhantomData,
        })
    }
}

impl<T> Collected<T> {
    /// The violations, when the lenient read found some.
    pub(crate) fn found(self) -> Option<Violations> {
        (self.supported && !self.violations.is_empty()).then_some(self.violations)
    }
}

/// Decodes a body in `format` and checks it: the value, or a `422`
/// listing every missing, mistyped, unknown and rule-breaking field
/// (`400` for input that is not JSON or CBOR at all, as before).
// The error is the extractor's rejection (`Response`), returned as is.
#[allow(clippy::result_large_err)]
pub(crate) fn decode<T: Contract>(format: Format, bytes: &[u8]) -> Result<T, Response> {
    use tern::IntoResponse;
    let rejection: Rejection = match format.decode::<T>(bytes) {
        Ok(value) => {
            return match value.validate() {
                Ok(()) => Ok(value),
                Err(violations) => Err(crate::valid::invalid(
                    http::StatusCode::UNPROCESSABLE_ENTITY,
                    &violations,
                )),
            }
        }
        Err(rejection) => rejection,
    };
    if rejection.status() != http::StatusCode::UNPROCESSABLE_ENTITY {
        // Not JSON or CBOR at all: there is no tree to walk.
        return Err(rejection.into_response());
    }
    // The error path only: the body parsed once more, as a tree (within
    // the same depth limit as the strict read, which got this far).
    let tree: Option<Value> = match format {
        Format::Json => serde_json::from_slice(bytes).ok(),
        Format::Cbor | Format::Cose => {
            ciborium::de::from_reader_with_recursion_limit::<ciborium::Value, _>(bytes, MAX_DEPTH)
                .ok()
                .and_then(|v| serde_json::to_value(v).ok())
        }
    };
    let Some(tree) = tree else {
        return Err(rejection.into_response());
    };
    let mut violations = Violations::default();
    match T::__collect(&tree, Some(&tree), &Pointer::root(), &mut violations) {
        Ok(true) if !violations.is_empty() => Err(crate::valid::invalid(
            http::StatusCode::UNPROCESSABLE_ENTITY,
            &violations,
        )),
        // Not an object, or nothing the lenient read can name: the strict
        // read's own answer.
        _ => Err(rejection.into_response()),
    }
}
