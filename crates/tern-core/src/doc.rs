//! What an operation takes and answers, for API documents (OpenAPI):
//! extractors and responses describe themselves into an [`Operation`]
//! when the app is built.
//!
//! Values are OpenAPI 3.1 objects as JSON; schemas they refer to by
//! `#/components/schemas/Name` go in [`Operation::schemas`].
//!
//! A plain serde type has no schema of its own, but its `Deserialize`
//! impl says what it reads: [`schema_of`] asks it, without any data, and
//! gives the JSON Schema of what it accepts (field names, types, integer
//! bounds, which fields may be left out, whether unknown ones are
//! refused). What it cannot learn (a type that reads any value, such as
//! an untagged enum) it says, so the operation is marked
//! [`undescribed`](Operation::undescribed) rather than silently wrong.
//!
//! ```
//! use serde::Deserialize;
//! use tern_core::doc::{schema_of, Format};
//!
//! #[derive(Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct Search { q: String, page: Option<u32>, #[serde(default)] tag: Vec<String> }
//!
//! let schema = schema_of::<Search>(Format::Json).unwrap();
//! assert_eq!(schema["required"], serde_json::json!(["q"]));
//! assert_eq!(schema["properties"]["page"]["maximum"], u32::MAX);
//! assert_eq!(schema["additionalProperties"], false);
//! ```

use std::{cell::RefCell, collections::BTreeMap, fmt};

use serde::de::{
    self, value::StrDeserializer, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor,
};
use serde_json::{json, Map, Value};

/// One operation (a method on a path), as its extractors and its
/// response type describe it.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Operation {
    /// OpenAPI Parameter Objects (query, header; path parameters come
    /// from the route, and a `Path` extractor may type them: a parameter
    /// `in: path` here replaces the route's of the same name).
    pub parameters: Vec<Value>,
    /// The OpenAPI Request Body Object, if the operation reads a body it
    /// can describe.
    pub request_body: Option<Value>,
    /// OpenAPI Response Objects by status (`"200"`, `"422"`).
    pub responses: BTreeMap<String, Value>,
    /// The named schemas the others refer to.
    pub schemas: BTreeMap<String, Value>,
    /// What the document cannot say of this operation's input, one line
    /// per extractor that could not describe itself (`"the JSON body
    /// (app::Payload): it reads any value"`). An operation with any is
    /// listed by name in the document's description, its input left open:
    /// a reader (or a tester) is told, not misled.
    pub undescribed: Vec<String>,
    /// The protocol the operation switches to (`"websocket"`): not a
    /// request and an answer that OpenAPI can describe. Documents leave
    /// such an operation out of `paths` and list it in their description.
    pub upgrade: Option<String>,
}

impl Operation {
    /// Adds an `application/problem+json` answer for `status` (`"400"`),
    /// unless the operation lists one already (an extractor that knows
    /// more about it described it first).
    pub fn problem(&mut self, status: &str, description: &str) {
        self.responses.entry(status.to_owned()).or_insert_with(|| {
            json!({
                "description": description,
                "content": { "application/problem+json": {
                    "schema": { "$ref": "#/components/schemas/Problem" } } },
            })
        });
    }
}

impl Operation {
    /// Describes a query string read into `T`: one parameter per field
    /// (a nested struct as a `deepObject`), or, when `T`'s shape cannot be
    /// learnt, a line in [`undescribed`](Self::undescribed).
    pub fn query_of<T: DeserializeOwned>(&mut self) {
        match fields_of::<T>(Format::Urlencoded) {
            Ok(fields) => {
                for (name, mut schema, required) in fields {
                    // An `Option` reads an empty value as `None`: OpenAPI
                    // says so of a query parameter with `allowEmptyValue`.
                    let empty = json!({ "type": "string", "maxLength": 0 });
                    let mut allow_empty = false;
                    if let Some([inner, alt]) = schema["anyOf"].as_array().map(Vec::as_slice) {
                        if alt == &empty {
                            (schema, allow_empty) = (inner.clone(), true);
                        }
                    }
                    let mut parameter = json!({
                        "name": name, "in": "query", "required": required, "schema": schema,
                    });
                    if allow_empty {
                        parameter["allowEmptyValue"] = json!(true);
                    }
                    if parameter["schema"]["type"] == "object" {
                        parameter["style"] = json!("deepObject");
                        parameter["explode"] = json!(true);
                    }
                    self.parameters.push(parameter);
                }
            }
            Err(why) => self.undescribed.push(format!(
                "the query string (`{}`): {why}",
                std::any::type_name::<T>()
            )),
        }
    }

    /// Describes a required body read into `T`, in each of `media_types`:
    /// `T`'s schema, or, when it cannot be learnt, an open schema (`{}`)
    /// and a line in [`undescribed`](Self::undescribed). A body already
    /// described gains the media types.
    pub fn body_of<T: DeserializeOwned>(&mut self, media_types: &[&str], format: Format) {
        // `serde_json::Value` reads any JSON: the open schema is exact.
        let any_json = std::any::type_name::<T>() == "serde_json::value::Value";
        let schema = match schema_of::<T>(format) {
            Ok(schema) => schema,
            Err(_) if any_json && format == Format::Json => json!({}),
            Err(why) => {
                self.undescribed.push(format!(
                    "the {} body (`{}`): {why}",
                    media_types.join(" or "),
                    std::any::type_name::<T>()
                ));
                json!({})
            }
        };
        let body = self
            .request_body
            .get_or_insert_with(|| json!({ "required": true, "content": {} }));
        for media_type in media_types {
            body["content"][*media_type] = json!({ "schema": schema });
        }
    }

    /// Adds JSON Schema keywords (`minLength`, `pattern`) to the property
    /// `field` of the request body's schema, in each of its media types:
    /// the rules a handler checks beyond the type, which no `Deserialize`
    /// impl tells. Call it after the body's extractor has described it.
    ///
    /// ```
    /// # use tern_core::doc::{Format, Operation};
    /// # #[derive(serde::Deserialize)] struct Note { text: String }
    /// let mut op = Operation::default();
    /// op.body_of::<Note>(&["application/json"], Format::Json);
    /// op.body_rules("text", serde_json::json!({ "minLength": 1, "maxLength": 500 }));
    /// let schema = &op.request_body.unwrap()["content"]["application/json"]["schema"];
    /// assert_eq!(schema["properties"]["text"]["maxLength"], 500);
    /// ```
    pub fn body_rules(&mut self, field: &str, keywords: Value) {
        let (Some(body), Value::Object(keywords)) = (self.request_body.as_mut(), keywords) else {
            return;
        };
        let Some(content) = body["content"].as_object_mut() else {
            return;
        };
        for media in content.values_mut() {
            if let Some(property) = media["schema"]["properties"][field].as_object_mut() {
                property.extend(keywords.clone());
            }
        }
    }

    /// Types the route's path parameters by `T` (a struct by field name,
    /// a tuple or one value by position: `x-tern-position`) where `T`
    /// says more than "a string"; documents put these in place of the
    /// route's. Nothing when `T`'s shape cannot be learnt: the route's
    /// pattern still types each parameter.
    pub fn path_of<T: DeserializeOwned>(&mut self) {
        let Ok(schema) = schema_of::<T>(Format::Urlencoded) else {
            return;
        };
        let plain = |s: &Value| s == &json!({ "type": "string" });
        let mut add = |name: Option<&str>, position: usize, schema: &Value| {
            if plain(schema) {
                return;
            }
            let mut parameter = json!({ "in": "path", "required": true, "schema": schema });
            match name {
                Some(name) => parameter["name"] = json!(name),
                None => parameter["x-tern-position"] = json!(position),
            }
            self.parameters.push(parameter);
        };
        if let Some(properties) = schema["properties"].as_object() {
            for (i, (name, schema)) in properties.iter().enumerate() {
                add(Some(name), i, schema);
            }
        } else if let Some(items) = schema["prefixItems"].as_array() {
            for (i, schema) in items.iter().enumerate() {
                add(None, i, schema);
            }
        } else {
            add(None, 0, &schema);
        }
    }
}

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
enum Node {
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
struct Field {
    name: &'static str,
    node: Node,
    required: bool,
}

impl Node {
    fn schema(&self, format: Format) -> Value {
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
const URLENCODED_KEY: &str = r"^([^\[]*|[^\[]+(\[[^\]]*\])+)$";

/// How deep a type may nest before it is taken for a recursive one.
const MAX_DEPTH: usize = 24;

/// One step down into a type, to the part being learnt.
#[derive(Debug, Clone, Copy)]
enum Step {
    Some,
    Elem(usize),
    Field(&'static str),
    MapValue,
    Newtype,
}

/// What the part at the end of the steps does there.
#[derive(Clone, Copy)]
enum Act {
    /// Record its first request.
    Record,
    /// Hand its struct visitor every field but these (each a valid
    /// filler), plus an unknown one if `extra`; record how that went.
    Fill {
        skip: Option<&'static str>,
        extra: bool,
    },
    /// Choose this variant of its enum; record whether it is a unit one.
    Variant(&'static str),
}

/// The first request a type makes.
#[derive(Debug, Clone, Copy)]
enum Seen {
    Bool,
    Int(&'static str, i128, u128),
    Float(&'static str),
    Char,
    Str,
    Unit,
    Option,
    Seq,
    Tuple(usize),
    Map,
    Struct(&'static [&'static str]),
    Newtype,
    Enum(&'static [&'static str]),
    Any(&'static str),
}

/// How a filled struct went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filled {
    Ok,
    Missing(&'static str),
    Unknown,
    Other,
}

/// Everything a probe stops with; a stop is never shown to anyone.
#[derive(Debug)]
enum Halt {
    Stop,
    Missing(&'static str),
    Unknown,
    Other,
}

impl fmt::Display for Halt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Halt {}

impl de::Error for Halt {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Halt::Other
    }
    fn missing_field(field: &'static str) -> Self {
        Halt::Missing(field)
    }
    fn unknown_field(_: &str, _: &'static [&'static str]) -> Self {
        Halt::Unknown
    }
}

/// What the probe learnt on one run.
#[derive(Default)]
struct Log {
    seen: Option<Seen>,
    filled: Option<Filled>,
}

fn seen<T: DeserializeOwned>(path: &[Step]) -> Option<Seen> {
    let log = RefCell::new(Log::default());
    let _ = T::deserialize(Probe {
        path,
        act: Act::Record,
        log: &log,
    });
    let seen = log.borrow().seen;
    seen
}

fn filled<T: DeserializeOwned>(path: &[Step], skip: Option<&'static str>, extra: bool) -> Filled {
    let log = RefCell::new(Log::default());
    let _ = T::deserialize(Probe {
        path,
        act: Act::Fill { skip, extra },
        log: &log,
    });
    let filled = log.borrow().filled;
    filled.unwrap_or(Filled::Other)
}

fn trace<T: DeserializeOwned>(path: &mut Vec<Step>) -> Result<Node, String> {
    if path.len() > MAX_DEPTH {
        return Err("it nests too deep (a recursive type?)".to_owned());
    }
    let down = |step: Step, path: &mut Vec<Step>| {
        path.push(step);
        let node = trace::<T>(path);
        path.pop();
        node
    };
    Ok(match seen::<T>(path) {
        None => return Err("its Deserialize impl asks for nothing it can be given".to_owned()),
        Some(Seen::Any(why)) => return Err(format!("a part of it reads {why}")),
        Some(Seen::Bool) => Node::Bool,
        Some(Seen::Int(format, min, max)) => Node::Int { format, min, max },
        Some(Seen::Float(f)) => Node::Float(f),
        Some(Seen::Char) => Node::Char,
        Some(Seen::Str) => Node::Str,
        Some(Seen::Unit) => Node::Unit,
        Some(Seen::Option) => Node::Option(Box::new(down(Step::Some, path)?)),
        Some(Seen::Seq) => Node::Seq(Box::new(down(Step::Elem(0), path)?)),
        Some(Seen::Tuple(n)) => Node::Tuple(
            (0..n)
                .map(|i| down(Step::Elem(i), path))
                .collect::<Result<_, _>>()?,
        ),
        Some(Seen::Map) => Node::Map(Box::new(down(Step::MapValue, path)?)),
        Some(Seen::Newtype) => down(Step::Newtype, path)?,
        Some(Seen::Enum(variants)) => {
            if !variants.iter().all(|v| unit_variant::<T>(path, v)) {
                return Err("an enum with data in its variants".to_owned());
            }
            Node::Enum(variants)
        }
        Some(Seen::Struct(names)) => {
            let mut fields = Vec::with_capacity(names.len());
            for &name in names {
                let node = down(Step::Field(name), path)?;
                // Left out, the field is missing (required) or not; any
                // other answer (a filler refused) leaves it required.
                let required = filled::<T>(path, Some(name), false) != Filled::Ok;
                fields.push(Field {
                    name,
                    node,
                    required,
                });
            }
            let closed = filled::<T>(path, None, true) == Filled::Unknown;
            Node::Struct { fields, closed }
        }
    })
}

/// Whether `variant` of the enum at `path` is a unit variant.
fn unit_variant<T: DeserializeOwned>(path: &[Step], variant: &'static str) -> bool {
    let log = RefCell::new(Log::default());
    let _ = T::deserialize(Probe {
        path,
        act: Act::Variant(variant),
        log: &log,
    });
    let unit = log.borrow().filled == Some(Filled::Ok);
    unit
}

/// The recording deserializer: follows `path` down, then does `act`.
struct Probe<'a> {
    path: &'a [Step],
    act: Act,
    log: &'a RefCell<Log>,
}

impl<'a> Probe<'a> {
    fn record<V>(self, seen: Seen) -> Result<V, Halt> {
        self.log.borrow_mut().seen = Some(seen);
        Err(Halt::Stop)
    }

    fn next(&self) -> Option<(Step, Probe<'a>)> {
        let (&step, rest) = self.path.split_first()?;
        Some((
            step,
            Probe {
                path: rest,
                act: self.act,
                log: self.log,
            },
        ))
    }
}

macro_rules! scalar {
    ($($method:ident => $seen:expr,)*) => {$(
        fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Halt> {
            if !self.path.is_empty() { return Err(Halt::Other); }
            self.record($seen)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = Halt;

    scalar! {
        deserialize_bool => Seen::Bool,
        deserialize_i8 => Seen::Int("int8", i8::MIN.into(), 127),
        deserialize_i16 => Seen::Int("int16", i16::MIN.into(), 32_767),
        deserialize_i32 => Seen::Int("int32", i32::MIN.into(), 2_147_483_647),
        deserialize_i64 => Seen::Int("int64", i64::MIN.into(), 9_223_372_036_854_775_807),
        deserialize_i128 => Seen::Int("int128", i128::MIN, i128::MAX as u128),
        deserialize_u8 => Seen::Int("uint8", 0, u8::MAX.into()),
        deserialize_u16 => Seen::Int("uint16", 0, u16::MAX.into()),
        deserialize_u32 => Seen::Int("uint32", 0, u32::MAX.into()),
        deserialize_u64 => Seen::Int("uint64", 0, u64::MAX.into()),
        deserialize_u128 => Seen::Int("uint128", 0, u128::MAX),
        deserialize_f32 => Seen::Float("float"),
        deserialize_f64 => Seen::Float("double"),
        deserialize_char => Seen::Char,
        deserialize_str => Seen::Str,
        deserialize_string => Seen::Str,
        deserialize_identifier => Seen::Str,
        deserialize_unit => Seen::Unit,
        deserialize_bytes => Seen::Any("bytes"),
        deserialize_byte_buf => Seen::Any("bytes"),
        deserialize_any => Seen::Any("any value"),
        deserialize_ignored_any => Seen::Any("any value"),
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Halt> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        match self.next() {
            None => self.record(Seen::Option),
            Some((Step::Some, inner)) => visitor.visit_some(inner),
            Some(_) => Err(Halt::Other),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Halt> {
        match self.next() {
            None => self.record(Seen::Newtype),
            Some((Step::Newtype, inner)) => visitor.visit_newtype_struct(inner),
            Some(_) => Err(Halt::Other),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        match self.next() {
            None => self.record(Seen::Seq),
            Some((Step::Elem(at), inner)) => visitor.visit_seq(Elements {
                at,
                next: 0,
                len: at + 1,
                probe: Some(inner),
            }),
            Some(_) => Err(Halt::Other),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Halt> {
        match self.next() {
            None => self.record(Seen::Tuple(len)),
            Some((Step::Elem(at), inner)) => visitor.visit_seq(Elements {
                at,
                next: 0,
                len,
                probe: Some(inner),
            }),
            Some(_) => Err(Halt::Other),
        }
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Halt> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        match self.next() {
            None => self.record(Seen::Map),
            Some((Step::MapValue, inner)) => visitor.visit_map(OneEntry {
                key: Some("key"),
                value: Some(inner),
            }),
            Some(_) => Err(Halt::Other),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Halt> {
        match (self.next(), self.act) {
            (None, Act::Record) => self.record(Seen::Struct(fields)),
            (None, Act::Variant(_)) => Err(Halt::Other),
            (None, Act::Fill { skip, extra }) => {
                let result = visitor.visit_map(Fields {
                    fields,
                    skip,
                    extra,
                    next: 0,
                });
                self.log.borrow_mut().filled = Some(match result {
                    Ok(_) => Filled::Ok,
                    Err(Halt::Missing(field)) => Filled::Missing(field),
                    Err(Halt::Unknown) => Filled::Unknown,
                    Err(_) => Filled::Other,
                });
                Err(Halt::Stop)
            }
            (Some((Step::Field(name), inner)), _) => visitor.visit_map(OneEntry {
                key: Some(name),
                value: Some(inner),
            }),
            (Some(_), _) => Err(Halt::Other),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Halt> {
        match (self.next(), self.act) {
            (None, Act::Record) => self.record(Seen::Enum(variants)),
            (None, Act::Variant(variant)) => {
                let unit = visitor.visit_enum(UnitVariant(variant)).is_ok();
                self.log.borrow_mut().filled = Some(if unit { Filled::Ok } else { Filled::Other });
                Err(Halt::Stop)
            }
            _ => Err(Halt::Other),
        }
    }

    fn is_human_readable(&self) -> bool {
        true
    }
}

/// A sequence whose element `at` is probed; those before it are fillers.
struct Elements<'a> {
    at: usize,
    next: usize,
    len: usize,
    probe: Option<Probe<'a>>,
}

impl<'de> de::SeqAccess<'de> for Elements<'_> {
    type Error = Halt;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Halt> {
        let i = self.next;
        self.next += 1;
        if i >= self.len {
            return Ok(None);
        }
        if i == self.at {
            return match self.probe.take() {
                Some(probe) => seed.deserialize(probe).map(Some),
                None => Err(Halt::Other),
            };
        }
        seed.deserialize(Filler).map(Some)
    }
}

/// A map of one entry whose value is probed.
struct OneEntry<'a> {
    key: Option<&'static str>,
    value: Option<Probe<'a>>,
}

impl<'de> de::MapAccess<'de> for OneEntry<'_> {
    type Error = Halt;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Halt> {
        match self.key.take() {
            Some(key) => seed.deserialize(str_de(key)).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Halt> {
        match self.value.take() {
            Some(probe) => seed.deserialize(probe),
            None => Err(Halt::Other),
        }
    }
}

fn str_de(s: &'static str) -> StrDeserializer<'static, Halt> {
    s.into_deserializer()
}

/// A struct's fields, each a filler, but `skip`; then an unknown one if
/// `extra`.
struct Fields {
    fields: &'static [&'static str],
    skip: Option<&'static str>,
    extra: bool,
    next: usize,
}

impl<'de> de::MapAccess<'de> for Fields {
    type Error = Halt;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Halt> {
        while let Some(&name) = self.fields.get(self.next) {
            self.next += 1;
            if Some(name) != self.skip {
                return seed.deserialize(str_de(name)).map(Some);
            }
        }
        if self.extra {
            self.extra = false;
            return seed
                .deserialize(str_de("\u{1}tern-unknown-field"))
                .map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Halt> {
        seed.deserialize(Filler)
    }
}

/// Chooses one variant of an enum, and succeeds only if it is a unit
/// variant.
struct UnitVariant(&'static str);

impl<'de> de::EnumAccess<'de> for UnitVariant {
    type Error = Halt;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Halt> {
        Ok((seed.deserialize(str_de(self.0))?, self))
    }
}

impl<'de> de::VariantAccess<'de> for UnitVariant {
    type Error = Halt;

    fn unit_variant(self) -> Result<(), Halt> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value, Halt> {
        Err(Halt::Other)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Halt> {
        Err(Halt::Other)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Halt> {
        Err(Halt::Other)
    }
}

macro_rules! filler {
    ($($method:ident)* => $visit:ident $args:tt) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
            visitor.$visit $args
        }
    )*};
}

/// A small valid value of whatever type asks: `1`, `"a"`, `false`, an
/// empty list, `None`, a struct with every field filled, an enum's first
/// variant.
struct Filler;

impl<'de> de::Deserializer<'de> for Filler {
    type Error = Halt;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_unit()
    }
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_bool(false)
    }
    filler! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        => visit_u8(1)
    }
    filler! { deserialize_f32 deserialize_f64 => visit_f64(1.0) }
    filler! { deserialize_string deserialize_identifier => visit_str("a") }
    filler! { deserialize_byte_buf => visit_bytes(b"a") }
    filler! { deserialize_ignored_any => visit_unit() }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Halt> {
        visitor.visit_unit()
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Halt> {
        self.deserialize_tuple(len, visitor)
    }
    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_char('a')
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_str("a")
    }
    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_bytes(b"a")
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_none()
    }
    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_unit()
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Halt> {
        visitor.visit_newtype_struct(Filler)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_seq(Elements {
            at: usize::MAX,
            next: 0,
            len: 0,
            probe: None,
        })
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_seq(Elements {
            at: usize::MAX,
            next: 0,
            len,
            probe: None,
        })
    }
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_map(Fields {
            fields: &[],
            skip: None,
            extra: false,
            next: 0,
        })
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Halt> {
        visitor.visit_map(Fields {
            fields,
            skip: None,
            extra: false,
            next: 0,
        })
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Halt> {
        match variants.first() {
            Some(&first) => visitor.visit_enum(UnitVariant(first)),
            None => Err(Halt::Other),
        }
    }
}

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
    struct Search {
        q: String,
        page: Option<u32>,
        #[serde(default)]
        tag: Vec<String>,
    }

    #[test]
    fn a_query_is_one_parameter_per_field() {
        let mut op = super::Operation::default();
        op.query_of::<Search>();
        let p = |name: &str| op.parameters.iter().find(|p| p["name"] == name).unwrap();
        assert_eq!(p("q")["required"], true);
        assert_eq!(p("q")["schema"], json!({ "type": "string" }));
        // `?page=` reads as `None`.
        assert_eq!(p("page")["required"], false);
        assert_eq!(p("page")["allowEmptyValue"], true);
        assert_eq!(p("page")["schema"]["type"], "integer");
        assert_eq!(p("tag")["schema"]["type"], "array");
        assert!(p("tag").get("allowEmptyValue").is_none());
        assert!(op.undescribed.is_empty());

        let mut op = super::Operation::default();
        op.query_of::<serde_json::Value>();
        assert!(op.parameters.is_empty());
        assert_eq!(op.undescribed.len(), 1, "{:?}", op.undescribed);
    }

    #[test]
    fn a_form_s_unknown_keys_are_still_keys() {
        let mut op = super::Operation::default();
        op.body_of::<Search>(&["application/x-www-form-urlencoded"], Format::Urlencoded);
        op.body_rules("q", json!({ "minLength": 1 }));
        let body = op.request_body.unwrap();
        let schema = &body["content"]["application/x-www-form-urlencoded"]["schema"];
        assert_eq!(schema["properties"]["q"]["minLength"], 1);
        assert_eq!(schema["propertyNames"]["pattern"], super::URLENCODED_KEY);
        let mut op = super::Operation::default();
        op.body_of::<Search>(&["application/json"], Format::Json);
        let body = op.request_body.unwrap();
        assert!(body["content"]["application/json"]["schema"]["propertyNames"].is_null());
    }

    #[test]
    fn a_path_types_only_what_the_pattern_cannot() {
        let mut op = super::Operation::default();
        op.path_of::<(String, u32)>();
        assert_eq!(op.parameters.len(), 1, "{:?}", op.parameters);
        assert_eq!(op.parameters[0]["x-tern-position"], 1);
        assert_eq!(op.parameters[0]["schema"]["format"], "uint32");
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
