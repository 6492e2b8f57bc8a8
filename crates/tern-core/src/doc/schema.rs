//! The JSON Schema of what a type's `Deserialize` impl accepts:
//! [`schema_of`] and [`fields_of`] trace the type into a tree of
//! [`Node`]s, which renders as a schema for a [`Format`].

use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use super::trace::trace;

/// How the values of a type are written, which changes what its schema
/// may say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON (or CBOR): an `Option` may also be `null`.
    Json,
    /// A query string or a form: every value is text, an `Option` is
    /// absent or empty, never `null`.
    Urlencoded,
}

/// The JSON Schema of what `T`'s `Deserialize` impl accepts, learnt by
/// asking it with a deserializer that records each request (and builds
/// nothing); `Err` says which part could not be learnt (a type that reads
/// any value: `deserialize_any`, as untagged and internally tagged enums
/// and `#[serde(flatten)]` do; an enum with data; a recursive type).
///
/// What it knows: structs (by their field names as serde spells them, a
/// field left out is allowed when it is an `Option` or has a
/// `#[serde(default)]`, unknown fields refused under
/// `deny_unknown_fields`), integers with their type's bounds, floats,
/// strings, `bool`, `Option`, sequences, tuples, maps, newtypes and
/// enums of unit variants. A field renamed by an alias is listed under
/// each name.
pub fn schema_of<T: DeserializeOwned>(format: Format) -> Result<Value, String> {
    let node = trace::<T>(&mut Vec::new())?;
    Ok(node.schema(format))
}

/// The schema of each field of the struct `T`, in declaration order, and
/// whether it is required: one query parameter each. `Err` when `T` is
/// not a struct, or a field cannot be learnt.
pub fn fields_of<T: DeserializeOwned>(
    format: Format,
) -> Result<Vec<(String, Value, bool)>, String> {
    match trace::<T>(&mut Vec::new())? {
        Node::Struct { fields, .. } => Ok(fields
            .into_iter()
            .map(|f| (f.name.to_owned(), f.node.schema(format), f.required))
            .collect()),
        _ => Err("it is not a struct".to_owned()),
    }
}

/// What a type reads, as a tree.
#[derive(Debug)]
pub(super) enum Node {
    Bool,
    Int {
        format: &'static str,
        min: i128,
        max: u128,
    },
    Float(&'static str),
    Char,
    Str,
    Unit,
    Option(Box<Node>),
    Seq(Box<Node>),
    Tuple(Vec<Node>),
    Map(Box<Node>),
    Struct {
        fields: Vec<Field>,
        closed: bool,
    },
    Enum(&'static [&'static str]),
}

#[derive(Debug)]
pub(super) struct Field {
    pub(super) name: &'static str,
    pub(super) node: Node,
    pub(super) required: bool,
}

impl Node {
    pub(super) fn schema(&self, format: Format) -> Value {
        match self {
            Node::Bool => json!({ "type": "boolean" }),
            Node::Int { format, min, max } => {
                json!({ "type": "integer", "format": format, "minimum": min, "maximum": max })
            }
            Node::Float(f) => json!({ "type": "number", "format": f }),
            Node::Char => json!({ "type": "string", "minLength": 1, "maxLength": 1 }),
            Node::Str => json!({ "type": "string" }),
            Node::Unit => match format {
                Format::Json => json!({ "type": "null" }),
                Format::Urlencoded => json!({ "type": "string", "maxLength": 0 }),
            },
            Node::Option(inner) => {
                let mut schema = inner.schema(format);
                match format {
                    Format::Json => match schema.get("type").cloned() {
                        Some(Value::String(t)) => schema["type"] = json!([t, "null"]),
                        _ => schema = json!({ "anyOf": [schema, { "type": "null" }] }),
                    },
                    // An empty value reads as `None`.
                    Format::Urlencoded if schema["type"] != "string" => {
                        schema = json!({ "anyOf": [schema, { "type": "string", "maxLength": 0 }] })
                    }
                    Format::Urlencoded => {}
                }
                schema
            }
            Node::Seq(item) => json!({ "type": "array", "items": item.schema(format) }),
            Node::Tuple(items) => json!({
                "type": "array",
                "prefixItems": items.iter().map(|n| n.schema(format)).collect::<Vec<_>>(),
                "minItems": items.len(),
                "maxItems": items.len(),
            }),
            Node::Map(value) => {
                json!({ "type": "object", "additionalProperties": value.schema(format) })
            }
            Node::Struct { fields, closed } => {
                let mut properties = Map::new();
                let mut required = Vec::new();
                for field in fields {
                    properties.insert(field.name.to_owned(), field.node.schema(format));
                    if field.required {
                        required.push(field.name);
                    }
                }
                let mut schema = json!({ "type": "object", "properties": properties });
                if !required.is_empty() {
                    schema["required"] = json!(required);
                }
                if *closed {
                    schema["additionalProperties"] = json!(false);
                } else if format == Format::Urlencoded {
                    // Unknown keys are ignored, but each is still read as
                    // a key: `a`, or `a[b]`, `a[]`, never `a[b` or `[b]`.
                    schema["propertyNames"] = json!({ "pattern": URLENCODED_KEY });
                }
                schema
            }
            Node::Enum(variants) => json!({ "type": "string", "enum": variants }),
        }
    }
}

/// The keys a query string or a form may hold: a name with no `[`, or a
/// name followed by `[...]` groups (`user[address][city]`, `tag[]`).
pub(super) const URLENCODED_KEY: &str = r"^([^\[]*|[^\[]+(\[[^\]]*\])+)$";

#[cfg(test)]
#[allow(clippy::unwrap_used, dead_code)]
mod tests {
    use std::collections::HashMap;

    use serde::Deserialize;
    use serde_json::json;

    use super::{fields_of, schema_of, Format};

    #[derive(Deserialize)]
    struct Inner {
        a: i8,
        #[serde(default)]
        b: bool,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "kebab-case")]
    enum Color {
        Red,
        DarkBlue,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Everything {
        name: String,
        count: u16,
        ratio: Option<f64>,
        #[serde(default)]
        tags: Vec<String>,
        pair: (u8, String),
        inner: Inner,
        color: Color,
        scores: HashMap<String, u32>,
        #[serde(rename = "when")]
        at: Option<Option<u64>>,
    }

    #[test]
    fn a_struct_is_learnt_from_its_deserialize_impl() {
        let schema = schema_of::<Everything>(Format::Json).unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(
            schema["required"],
            json!(["name", "count", "pair", "inner", "color", "scores"])
        );
        let p = &schema["properties"];
        assert_eq!(p["name"], json!({ "type": "string" }));
        assert_eq!(p["count"]["maximum"], 65_535);
        assert_eq!(p["count"]["minimum"], 0);
        assert_eq!(p["ratio"]["type"], json!(["number", "null"]));
        assert_eq!(p["tags"]["items"]["type"], "string");
        assert_eq!(p["pair"]["prefixItems"][0]["maximum"], 255);
        assert_eq!(p["pair"]["maxItems"], 2);
        assert_eq!(p["inner"]["required"], json!(["a"]));
        assert_eq!(p["inner"]["properties"]["a"]["minimum"], -128);
        assert!(p["inner"].get("additionalProperties").is_none());
        assert_eq!(p["color"]["enum"], json!(["red", "dark-blue"]));
        assert_eq!(p["scores"]["additionalProperties"]["format"], "uint32");
        assert!(p["when"].is_object());
    }

    #[test]
    fn urlencoded_options_are_absent_or_empty_never_null() {
        let fields = fields_of::<Everything>(Format::Urlencoded).unwrap();
        let ratio = fields.iter().find(|f| f.0 == "ratio").unwrap();
        assert!(!ratio.2);
        assert_eq!(ratio.1["anyOf"][0]["type"], "number");
        assert_eq!(ratio.1["anyOf"][1]["maxLength"], 0);
        let name = fields.iter().find(|f| f.0 == "name").unwrap();
        assert_eq!(
            (name.1.clone(), name.2),
            (json!({ "type": "string" }), true)
        );
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        N(u32),
        S(String),
    }

    #[derive(Deserialize)]
    struct WithData {
        e: Option<Either>,
    }

    #[derive(Deserialize)]
    enum Shape {
        Circle(f64),
        Dot,
    }

    #[derive(Deserialize)]
    struct Tree {
        children: Vec<Tree>,
    }

    #[test]
    fn what_cannot_be_learnt_is_said() {
        for (why, got) in [
            ("untagged", schema_of::<WithData>(Format::Json)),
            ("any", schema_of::<serde_json::Value>(Format::Json)),
            ("data", schema_of::<Shape>(Format::Json)),
            ("recursive", schema_of::<Tree>(Format::Json)),
        ] {
            assert!(got.is_err(), "{why}: {got:?}");
        }
        assert!(fields_of::<u32>(Format::Urlencoded).is_err());
    }
}
