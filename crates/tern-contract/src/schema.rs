//! JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) for contract
//! types and the types of their fields.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Map, Value};

/// The named schemas a document collects (`$defs`, or OpenAPI's
/// `components/schemas`), and how references to them are written.
#[derive(Debug, Clone)]
pub struct Definitions {
    prefix: &'static str,
    schemas: BTreeMap<String, Value>,
}

impl Definitions {
    /// Schemas referenced as `#/$defs/Name`, for a JSON Schema document.
    pub fn json_schema() -> Self {
        Definitions {
            prefix: "#/$defs/",
            schemas: BTreeMap::new(),
        }
    }

    /// Schemas referenced as `#/components/schemas/Name`, for OpenAPI.
    pub fn openapi() -> Self {
        Definitions {
            prefix: "#/components/schemas/",
            schemas: BTreeMap::new(),
        }
    }

    /// A reference to the schema `name`, built by `build` the first time
    /// (a recursive type finds its own name taken and refers to it).
    pub fn reference(&mut self, name: &str, build: impl FnOnce(&mut Self) -> Value) -> Value {
        if !self.schemas.contains_key(name) {
            self.schemas.insert(name.to_owned(), Value::Null);
            let schema = build(self);
            self.schemas.insert(name.to_owned(), schema);
        }
        json!({ "$ref": format!("{}{name}", self.prefix) })
    }

    /// The collected schemas, by name.
    pub fn into_schemas(self) -> BTreeMap<String, Value> {
        self.schemas
    }
}

/// A type a contract's field may have: its JSON Schema, and the checks of
/// the contracts inside it (a nested contract, the items of a list).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the type of a contract's field",
    note = "a field's type must be a string, a number, a bool, a `Vec`, an `Option`, a map with string keys, `serde_json::Value`, or a type with `#[contract]` itself"
)]
pub trait FieldType {
    /// Whether the field may be absent (an `Option`).
    const OPTIONAL: bool = false;

    /// The JSON Schema of the type (a `$ref` for a contract).
    fn schema(defs: &mut Definitions) -> Value;

    /// Checks the contracts inside the value; nothing for plain values.
    fn validate_nested(&self, at: &crate::Pointer<'_>, errors: &mut crate::Violations) {
        let _ = (at, errors);
    }

    /// Whether the type holds contracts (a contract, or a list, map,
    /// `Option` or `Box` of them): whether [`FieldType::__collect_value`]
    /// can list what is wrong inside a value. For the lenient read.
    #[doc(hidden)]
    const __NESTED: bool = false;

    /// Lists everything wrong in `value` (JSON) read as this type at
    /// `at`: each contract inside it read leniently (see
    /// `Contract::__collect`). `true` when something was listed; `false`
    /// when the type cannot tell (a plain value: the caller reports the
    /// strict read's message). For the error path of the lenient read;
    /// `#[contract]` writes it for a contract.
    #[doc(hidden)]
    fn __collect_value(
        value: &Value,
        at: &crate::Pointer<'_>,
        errors: &mut crate::Violations,
    ) -> bool {
        let _ = (value, at, errors);
        false
    }
}

macro_rules! plain {
    ($($ty:ty => $schema:expr;)*) => {$(
        impl FieldType for $ty {
            fn schema(_: &mut Definitions) -> Value {
                $schema
            }
        }
    )*};
}

plain! {
    String => json!({ "type": "string" });
    bool => json!({ "type": "boolean" });
    char => json!({ "type": "string", "minLength": 1, "maxLength": 1 });
    f32 => json!({ "type": "number", "format": "float" });
    f64 => json!({ "type": "number", "format": "double" });
    Value => json!({});
}

macro_rules! integer {
    ($($ty:ty => $format:literal;)*) => {$(
        impl FieldType for $ty {
            fn schema(_: &mut Definitions) -> Value {
                json!({
                    "type": "integer",
                    "format": $format,
                    "minimum": <$ty>::MIN,
                    "maximum": <$ty>::MAX,
                })
            }
        }
    )*};
}

integer! {
    i8 => "int8"; i16 => "int16"; i32 => "int32"; i64 => "int64";
    u8 => "uint8"; u16 => "uint16"; u32 => "uint32"; u64 => "uint64";
}

impl<T: FieldType> FieldType for Option<T> {
    const OPTIONAL: bool = true;

    fn schema(defs: &mut Definitions) -> Value {
        nullable(T::schema(defs))
    }

    fn validate_nested(&self, at: &crate::Pointer<'_>, errors: &mut crate::Violations) {
        if let Some(value) = self {
            value.validate_nested(at, errors);
        }
    }

    const __NESTED: bool = T::__NESTED;

    fn __collect_value(
        value: &Value,
        at: &crate::Pointer<'_>,
        errors: &mut crate::Violations,
    ) -> bool {
        // `null` is `None`: nothing wrong there.
        !value.is_null() && T::__collect_value(value, at, errors)
    }
}

impl<T: FieldType> FieldType for Box<T> {
    const OPTIONAL: bool = T::OPTIONAL;

    fn schema(defs: &mut Definitions) -> Value {
        T::schema(defs)
    }

    fn validate_nested(&self, at: &crate::Pointer<'_>, errors: &mut crate::Violations) {
        (**self).validate_nested(at, errors);
    }

    const __NESTED: bool = T::__NESTED;

    fn __collect_value(
        value: &Value,
        at: &crate::Pointer<'_>,
        errors: &mut crate::Violations,
    ) -> bool {
        T::__collect_value(value, at, errors)
    }
}

impl<T: FieldType> FieldType for Vec<T> {
    fn schema(defs: &mut Definitions) -> Value {
        json!({ "type": "array", "items": T::schema(defs) })
    }

    fn validate_nested(&self, at: &crate::Pointer<'_>, errors: &mut crate::Violations) {
        for (i, item) in self.iter().enumerate() {
            item.validate_nested(&at.index(i), errors);
        }
    }

    const __NESTED: bool = T::__NESTED;

    fn __collect_value(
        value: &Value,
        at: &crate::Pointer<'_>,
        errors: &mut crate::Violations,
    ) -> bool {
        // Not a list (or a list of plain values): the strict message.
        let (true, Value::Array(items)) = (T::__NESTED, value) else {
            return false;
        };
        let before = errors.len();
        for (i, item) in items.iter().enumerate() {
            T::__collect_value(item, &at.index(i), errors);
        }
        errors.len() > before
    }
}

macro_rules! map {
    ($($map:ident $(, $extra:ident)*);*) => {$(
        impl<T: FieldType, $($extra),*> FieldType for $map<String, T, $($extra),*> {
            fn schema(defs: &mut Definitions) -> Value {
                json!({ "type": "object", "additionalProperties": T::schema(defs) })
            }

            fn validate_nested(&self, at: &crate::Pointer<'_>, errors: &mut crate::Violations) {
                for (key, value) in self {
                    value.validate_nested(&at.key(key), errors);
                }
            }

            const __NESTED: bool = T::__NESTED;

            fn __collect_value(
                value: &Value,
                at: &crate::Pointer<'_>,
                errors: &mut crate::Violations,
            ) -> bool {
                let (true, Value::Object(members)) = (T::__NESTED, value) else {
                    return false;
                };
                let before = errors.len();
                for (key, member) in members {
                    T::__collect_value(member, &at.key(key), errors);
                }
                errors.len() > before
            }
        }
    )*};
}

map!(HashMap, S; BTreeMap);

/// `schema` or `null`.
fn nullable(schema: Value) -> Value {
    match schema {
        Value::Object(mut map) if map.get("type").is_some_and(Value::is_string) => {
            let ty = map.remove("type").unwrap_or(Value::Null);
            map.insert("type".to_owned(), json!([ty, "null"]));
            Value::Object(map)
        }
        Value::Object(map) if map.is_empty() => Value::Object(map),
        other => json!({ "anyOf": [other, { "type": "null" }] }),
    }
}

/// Sets `keyword` on the schema a field's rules apply to: the schema
/// itself, or the non-null branch of an optional `$ref`.
pub fn set(schema: &mut Value, keyword: &str, value: Value) {
    if let Some(Value::Array(any)) = schema.get_mut("anyOf") {
        if let Some(Value::Object(first)) = any.first_mut() {
            if first.contains_key("$ref") {
                // Keywords beside `$ref` apply too (2020-12): keep the ref.
                first.insert(keyword.to_owned(), value);
                return;
            }
        }
    }
    if let Value::Object(map) = schema {
        map.insert(keyword.to_owned(), value);
    }
}

/// The schema of a struct's fields.
pub fn object(properties: Map<String, Value>, required: Vec<&str>) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}
