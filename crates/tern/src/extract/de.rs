//! One deserializer for route parameters, query strings and forms: a small
//! tree of strings (`a=1&tag[]=x&user[name]=y`) read into any
//! `serde::Deserialize` type, with errors that name the offending key.

use std::{borrow::Cow, fmt};

use indexmap::IndexMap;
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use smallvec::SmallVec;

/// A parsed query string or set of route parameters.
#[derive(Debug, PartialEq)]
pub(crate) enum Node<'a> {
    Value(Cow<'a, str>),
    Seq(Vec<Node<'a>>),
    /// Keys in the order they first appear; a hashed index keeps each
    /// lookup constant-time, so a form of many keys costs linear time.
    Map(Map<'a>),
}

pub(crate) type Map<'a> = IndexMap<Cow<'a, str>, Node<'a>>;

/// How much structure a client may send in one query string or form
/// (`TERN_MAX_FORM_FIELDS`, `TERN_MAX_FORM_DEPTH`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct UrlencodedLimits {
    /// Most `key=value` pairs.
    pub(crate) fields: usize,
    /// Most bracket levels in one key (`a[b][c]` is 2).
    pub(crate) depth: usize,
}

impl UrlencodedLimits {
    pub(crate) fn of(limits: &crate::config::Limits) -> Self {
        UrlencodedLimits {
            fields: limits.max_form_fields,
            depth: limits.max_form_depth,
        }
    }

    /// The configured limits of the request being served, or the defaults.
    pub(crate) fn current(extensions: &http::Extensions) -> Self {
        crate::context::with(extensions, |c| Self::of(&c.shared.config.limits))
            .unwrap_or_else(|| Self::of(&crate::config::Limits::default()))
    }
}

/// A deserialization error, with the key path where it happened.
#[derive(Debug, PartialEq)]
pub(crate) struct DeError {
    pub(crate) path: String,
    pub(crate) message: String,
    /// A limit was exceeded (the answer names the setting).
    pub(crate) limit: bool,
    /// A tuple or sequence got another number of values than its type
    /// holds: for route parameters, the route and the handler disagree.
    pub(crate) arity: Option<(usize, String)>,
}

impl DeError {
    fn at(mut self, key: &str) -> Self {
        let key = shorten(key);
        self.path = if self.path.is_empty() {
            key.into_owned()
        } else if self.path.starts_with('[') {
            format!("{key}{}", self.path)
        } else {
            format!("{key}[{}]", self.path)
        };
        self
    }

    fn limit(message: String) -> Self {
        DeError {
            path: String::new(),
            message,
            limit: true,
            arity: None,
        }
    }
}

/// Client text quoted in an error, cut to a readable length: a 2 MiB key
/// is not echoed back.
pub(crate) fn shorten(text: &str) -> Cow<'_, str> {
    const MAX: usize = 64;
    if text.len() <= MAX {
        return Cow::Borrowed(text);
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}...", &text[..end]))
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "`{}`: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError {
            path: String::new(),
            message: msg.to_string(),
            limit: false,
            arity: None,
        }
    }

    fn invalid_length(len: usize, exp: &dyn de::Expected) -> Self {
        DeError {
            arity: Some((len, exp.to_string())),
            ..de::Error::custom(format_args!("invalid length {len}, expected {exp}"))
        }
    }
}

/// Decodes `application/x-www-form-urlencoded` text (`+` is a space) into a
/// tree: repeated keys and `key[]` make lists, `key[sub]` makes maps.
///
/// Cost is linear in the input: one pass over the pairs, a hashed lookup
/// per key level, no recursion (the tree's depth is bounded by
/// `limits.depth`, which also bounds the deserializer's recursion).
pub(crate) fn parse_urlencoded<'a>(
    input: &'a str,
    limits: UrlencodedLimits,
) -> Result<Node<'a>, DeError> {
    let mut root = Map::default();
    let mut fields = 0usize;
    for pair in input.split('&').filter(|p| !p.is_empty()) {
        fields += 1;
        if fields > limits.fields {
            return Err(DeError::limit(format!(
                "more than {} fields; the limit is TERN_MAX_FORM_FIELDS",
                limits.fields
            )));
        }
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(key)?;
        let value = decode(value)?;
        let segments = key_segments(&key, limits.depth)?;
        insert(&mut root, &segments, value).map_err(|e| e.at(&key))?;
    }
    Ok(Node::Map(root))
}

fn decode(s: &str) -> Result<Cow<'_, str>, DeError> {
    if !s.bytes().any(|b| b == b'%' || b == b'+') {
        return Ok(Cow::Borrowed(s));
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hi = bytes.get(i + 1).and_then(|b| (*b as char).to_digit(16));
                let lo = bytes.get(i + 2).and_then(|b| (*b as char).to_digit(16));
                match (hi, lo) {
                    (Some(hi), Some(lo)) => {
                        out.push((hi * 16 + lo) as u8);
                        i += 2;
                    }
                    _ => {
                        return Err(de::Error::custom(format!(
                            "`{}` has a malformed percent-escape",
                            shorten(s)
                        )))
                    }
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out)
        .map(Cow::Owned)
        .map_err(|_| de::Error::custom(format!("`{}` is not UTF-8 once decoded", shorten(s))))
}

/// `user[address][city]` → `user`, `address`, `city`; `tag[]` → `tag`, ``.
/// More than `max_depth` bracket levels is an error.
fn key_segments(key: &str, max_depth: usize) -> Result<SmallVec<[&str; 4]>, DeError> {
    let Some(open) = key.find('[') else {
        return Ok(smallvec::smallvec![key]);
    };
    let mut segments: SmallVec<[&str; 4]> = smallvec::smallvec![&key[..open]];
    let mut rest = &key[open..];
    while !rest.is_empty() {
        if segments.len() > max_depth {
            return Err(DeError::limit(format!(
                "the key `{}` nests deeper than {max_depth} levels; the limit is TERN_MAX_FORM_DEPTH",
                shorten(key)
            )));
        }
        let close = match (rest.starts_with('['), rest.find(']')) {
            (true, Some(close)) => close,
            _ => {
                return Err(de::Error::custom(format!(
                    "the key `{}` has unbalanced brackets",
                    shorten(key)
                )))
            }
        };
        segments.push(&rest[1..close]);
        rest = &rest[close + 1..];
    }
    if segments[0].is_empty() {
        return Err(de::Error::custom(format!(
            "the key `{}` has no name before `[`",
            shorten(key)
        )));
    }
    Ok(segments)
}

/// Puts `value` at `segments` (`["user", "address", "city"]`) in `map`,
/// walking down level by level (no recursion).
fn insert<'a>(
    mut map: &mut Map<'a>,
    segments: &[&str],
    value: Cow<'a, str>,
) -> Result<(), DeError> {
    let mut i = 0;
    loop {
        let key = segments[i];
        let Some(&next) = segments.get(i + 1) else {
            // The last segment: a value, or one more item of a list.
            match map.get_mut(key) {
                None => {
                    map.insert(Cow::Owned(key.to_owned()), Node::Value(value));
                }
                Some(Node::Seq(items)) => items.push(Node::Value(value)),
                Some(node @ Node::Value(_)) => {
                    let first = std::mem::replace(node, Node::Seq(Vec::new()));
                    *node = Node::Seq(vec![first, Node::Value(value)]);
                }
                Some(Node::Map(_)) => return Err(mixed()),
            }
            return Ok(());
        };
        // The key is copied only when it is new (`entry` would copy it for
        // every pair that names an existing map or list).
        let index = match map.get_index_of(key) {
            Some(index) => index,
            None => {
                let empty = if next.is_empty() {
                    Node::Seq(Vec::new())
                } else {
                    Node::Map(Map::default())
                };
                map.insert_full(Cow::Owned(key.to_owned()), empty).0
            }
        };
        let node = &mut map[index];
        match (node, next.is_empty()) {
            (Node::Map(inner), false) => {
                map = inner;
                i += 1;
            }
            (Node::Seq(items), true) => {
                // `tag[]=x`: one more item; `item[][name]=x`: one more map.
                if segments.len() == i + 2 {
                    items.push(Node::Value(value));
                    return Ok(());
                }
                items.push(Node::Map(Map::default()));
                let Some(Node::Map(inner)) = items.last_mut() else {
                    return Err(mixed());
                };
                map = inner;
                i += 2;
            }
            (node @ Node::Value(_), true) if segments.len() == i + 2 => {
                let first = std::mem::replace(node, Node::Seq(Vec::new()));
                *node = Node::Seq(vec![first, Node::Value(value)]);
                return Ok(());
            }
            _ => return Err(mixed()),
        }
    }
}

fn mixed() -> DeError {
    de::Error::custom("is given both as a single value and as a list or map")
}

/// Reads a [`Node`]. In path mode a map of one entry also reads as that
/// entry's value and a map reads as a sequence of its values, so that
/// `Path<u64>` and `Path<(String, u64)>` work beside `Path<Struct>`.
pub(crate) struct NodeDe<'a, 'n> {
    pub(crate) node: &'n Node<'a>,
    pub(crate) path_mode: bool,
}

macro_rules! scalar {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            match self.node {
                Node::Value(v) => ValueDe(v).$method(visitor),
                Node::Map(entries) if self.path_mode && entries.len() == 1 => {
                    let Some((key, node)) = entries.get_index(0) else { return Err(expected_one()) };
                    ValueDe(match node { Node::Value(v) => v, _ => return Err(expected_one()) })
                        .$method(visitor)
                        .map_err(|e| e.at(key))
                }
                Node::Map(entries) if self.path_mode => Err(de::Error::custom(format!(
                    "the route has {} parameters; extract them as a tuple or a struct",
                    entries.len()
                ))),
                Node::Seq(items) => Err(de::Error::custom(format!(
                    "is given {} times; expected one value", items.len()
                ))),
                Node::Map(_) => Err(expected_one()),
            }
        }
    )*};
}

fn expected_one() -> DeError {
    de::Error::custom("expected a single value, not a map (`key[field]=...`)")
}

impl<'de> de::Deserializer<'de> for NodeDe<'_, '_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Value(v) => ValueDe(v).deserialize_any(visitor),
            Node::Seq(items) => visitor.visit_seq(SeqAccess {
                items: items.iter(),
                index: 0,
                path_mode: self.path_mode,
            }),
            Node::Map(entries) => visitor.visit_map(MapAccess {
                entries: entries.iter(),
                value: None,
                path_mode: self.path_mode,
            }),
        }
    }

    scalar! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string
        deserialize_bytes deserialize_byte_buf deserialize_unit deserialize_identifier
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Value(v) if v.is_empty() => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Value(_) => visitor.visit_seq(SeqAccess {
                items: std::slice::from_ref(self.node).iter(),
                index: 0,
                path_mode: self.path_mode,
            }),
            Node::Seq(items) => visitor.visit_seq(SeqAccess {
                items: items.iter(),
                index: 0,
                path_mode: self.path_mode,
            }),
            Node::Map(entries) if self.path_mode => visitor.visit_seq(MapValues {
                entries: entries.iter(),
            }),
            Node::Map(entries) => {
                // `a[0]=x&a[1]=y`: a map with index keys is a list.
                let mut indexed: Vec<(usize, &Node<'_>)> = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    let i = k.parse().map_err(|_| {
                        de::Error::custom(format!(
                            "expected a list, but `{}` is not an index",
                            shorten(k)
                        ))
                    })?;
                    indexed.push((i, v));
                }
                indexed.sort_by_key(|(i, _)| *i);
                let items: Vec<&Node<'_>> = indexed.into_iter().map(|(_, v)| v).collect();
                visitor.visit_seq(RefSeqAccess {
                    items: items.into_iter(),
                    index: 0,
                })
            }
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node {
            Node::Map(entries) => visitor.visit_map(MapAccess {
                entries: entries.iter(),
                value: None,
                path_mode: self.path_mode,
            }),
            _ => Err(de::Error::custom("expected a map (`key[field]=value`)")),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.node {
            Node::Value(v) => ValueDe(v).deserialize_enum(name, variants, visitor),
            Node::Map(entries) if self.path_mode && entries.len() == 1 => {
                match entries.get_index(0) {
                    Some((key, Node::Value(v))) => ValueDe(v)
                        .deserialize_enum(name, variants, visitor)
                        .map_err(|e| e.at(key)),
                    _ => Err(expected_one()),
                }
            }
            _ => Err(expected_one()),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }
}

/// Route parameters, read the way [`NodeDe`] reads them in path mode;
/// the common case, one parameter read as a scalar (`Path<u64>`), goes
/// straight to the value without building a tree.
pub(crate) struct ParamsDe<'p> {
    pub(crate) params: &'p [(&'p str, &'p str)],
}

impl ParamsDe<'_> {
    fn with_tree<R>(&self, read: impl FnOnce(NodeDe<'_, '_>) -> R) -> R {
        let node = Node::Map(
            self.params
                .iter()
                .map(|&(k, v)| (Cow::Borrowed(k), Node::Value(Cow::Borrowed(v))))
                .collect(),
        );
        read(NodeDe {
            node: &node,
            path_mode: true,
        })
    }
}

macro_rules! param_scalar {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            match self.params {
                [(name, value)] => ValueDe(value).$method(visitor).map_err(|e| e.at(name)),
                _ => self.with_tree(|de| de.$method(visitor)),
            }
        }
    )*};
}

macro_rules! param_tree {
    ($($method:ident($($arg:ident: $ty:ty),*))*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, DeError> {
            self.with_tree(|de| de.$method($($arg,)* visitor))
        }
    )*};
}

impl<'de> de::Deserializer<'de> for ParamsDe<'_> {
    type Error = DeError;

    param_scalar! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string
        deserialize_bytes deserialize_byte_buf deserialize_unit deserialize_identifier
    }

    param_tree! {
        deserialize_any()
        deserialize_option()
        deserialize_unit_struct(name: &'static str)
        deserialize_newtype_struct(name: &'static str)
        deserialize_seq()
        deserialize_tuple(len: usize)
        deserialize_tuple_struct(name: &'static str, len: usize)
        deserialize_map()
        deserialize_struct(name: &'static str, fields: &'static [&'static str])
        deserialize_enum(name: &'static str, variants: &'static [&'static str])
        deserialize_ignored_any()
    }
}

struct SeqAccess<'a, 'n> {
    items: std::slice::Iter<'n, Node<'a>>,
    index: usize,
    path_mode: bool,
}

impl<'de> de::SeqAccess<'de> for SeqAccess<'_, '_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(node) = self.items.next() else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        seed.deserialize(NodeDe {
            node,
            path_mode: self.path_mode,
        })
        .map(Some)
        .map_err(|e| e.at(&format!("[{index}]")))
    }
}

struct RefSeqAccess<'a, 'n> {
    items: std::vec::IntoIter<&'n Node<'a>>,
    index: usize,
}

impl<'de> de::SeqAccess<'de> for RefSeqAccess<'_, '_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(node) = self.items.next() else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        seed.deserialize(NodeDe {
            node,
            path_mode: false,
        })
        .map(Some)
        .map_err(|e| e.at(&format!("[{index}]")))
    }
}

struct MapValues<'a, 'n> {
    entries: indexmap::map::Iter<'n, Cow<'a, str>, Node<'a>>,
}

impl<'de> de::SeqAccess<'de> for MapValues<'_, '_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some((key, node)) = self.entries.next() else {
            return Ok(None);
        };
        seed.deserialize(NodeDe {
            node,
            path_mode: false,
        })
        .map(Some)
        .map_err(|e| e.at(key))
    }
}

struct MapAccess<'a, 'n> {
    entries: indexmap::map::Iter<'n, Cow<'a, str>, Node<'a>>,
    value: Option<(&'n str, &'n Node<'a>)>,
    path_mode: bool,
}

impl<'de> de::MapAccess<'de> for MapAccess<'_, '_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some((key, node)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some((key, node));
        seed.deserialize(ValueDe(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let (key, node) = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value was asked for before its key"))?;
        seed.deserialize(NodeDe {
            node,
            path_mode: false,
        })
        .map_err(|e| {
            let _ = self.path_mode;
            e.at(key)
        })
    }
}

/// One string, parsed into whatever the target type asks for.
struct ValueDe<'v>(&'v str);

macro_rules! parse {
    ($($method:ident => $visit:ident : $ty:ty, $what:expr;)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            match self.0.parse::<$ty>() {
                Ok(v) => visitor.$visit(v),
                Err(_) => Err(de::Error::custom(format!("expected {}, got `{}`", $what, shorten(self.0)))),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for ValueDe<'_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_str(self.0)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.0 {
            "true" | "on" | "1" => visitor.visit_bool(true),
            "false" | "off" | "0" => visitor.visit_bool(false),
            other => Err(de::Error::custom(format!(
                "expected true or false, got `{}`",
                shorten(other)
            ))),
        }
    }

    parse! {
        deserialize_i8 => visit_i8: i8, "an integer from -128 to 127";
        deserialize_i16 => visit_i16: i16, "an integer from -32768 to 32767";
        deserialize_i32 => visit_i32: i32, "a 32-bit integer";
        deserialize_i64 => visit_i64: i64, "a 64-bit integer";
        deserialize_i128 => visit_i128: i128, "an integer";
        deserialize_u8 => visit_u8: u8, "an integer from 0 to 255";
        deserialize_u16 => visit_u16: u16, "an integer from 0 to 65535";
        deserialize_u32 => visit_u32: u32, "a non-negative 32-bit integer";
        deserialize_u64 => visit_u64: u64, "a non-negative integer";
        deserialize_u128 => visit_u128: u128, "a non-negative integer";
        deserialize_f32 => visit_f32: f32, "a number";
        deserialize_f64 => visit_f64: f64, "a number";
        deserialize_char => visit_char: char, "a single character";
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.0.is_empty() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_seq(de::value::SeqDeserializer::new(std::iter::once(self)))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        if !variants.contains(&self.0) {
            return Err(de::Error::custom(format!(
                "expected one of {}, got `{}`",
                variants
                    .iter()
                    .map(|v| format!("`{v}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                shorten(self.0)
            )));
        }
        let de: de::value::StrDeserializer<'_, DeError> = self.0.into_deserializer();
        visitor.visit_enum(de)
    }

    serde::forward_to_deserialize_any! {
        str string bytes byte_buf unit_struct tuple tuple_struct map struct identifier ignored_any
    }
}

impl<'de> IntoDeserializer<'de, DeError> for ValueDe<'_> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn query<T: serde::de::DeserializeOwned>(q: &str) -> Result<T, DeError> {
        let node = parse_urlencoded(q, LIMITS)?;
        T::deserialize(NodeDe {
            node: &node,
            path_mode: false,
        })
    }

    const LIMITS: UrlencodedLimits = UrlencodedLimits {
        fields: 1000,
        depth: 32,
    };

    #[derive(Debug, Deserialize, PartialEq)]
    struct User {
        name: String,
        age: Option<u8>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Search {
        q: String,
        #[serde(default)]
        tag: Vec<String>,
        page: Option<u32>,
        user: Option<User>,
        #[serde(default)]
        exact: bool,
    }

    #[test]
    fn arrays_both_ways() {
        let a: Search = query("q=rust&tag=a&tag=b").expect("repeated");
        let b: Search = query("q=rust&tag[]=a&tag[]=b").expect("brackets");
        let c: Search = query("q=rust&tag[1]=b&tag[0]=a").expect("indexed");
        assert_eq!(a.tag, ["a", "b"]);
        assert_eq!(a, b);
        assert_eq!(a, c);
        let one: Search = query("q=x&tag=only").expect("one");
        assert_eq!(one.tag, ["only"]);
    }

    #[test]
    fn nested_and_decoded() {
        let s: Search = query("q=caf%C3%A9+au+lait&user[name]=Ada%20L&user[age]=36&exact=on&page=")
            .expect("nested");
        assert_eq!(s.q, "café au lait");
        assert_eq!(
            s.user,
            Some(User {
                name: "Ada L".into(),
                age: Some(36)
            })
        );
        assert!(s.exact);
        assert_eq!(s.page, None);
    }

    #[test]
    fn errors_name_the_field() {
        let e = query::<Search>("q=x&page=two").expect_err("page");
        assert_eq!(e.path, "page");
        assert!(e.message.contains("`two`"), "{e}");
        let e = query::<Search>("q=x&user[name]=a&user[age]=300").expect_err("age");
        assert_eq!(e.path, "user[age]");
        let e = query::<Search>("tag=a").expect_err("missing");
        assert!(e.to_string().contains("missing field `q`"), "{e}");
        let e = query::<Search>("q=a&q=b").expect_err("twice");
        assert_eq!(e.path, "q");
        assert!(query::<Search>("q=%zz").is_err());
        assert!(query::<Search>("q=a&tag[=x").is_err());
        assert!(query::<Search>("q=a&tag=x&tag[k]=y").is_err());
    }

    #[test]
    fn limits_name_the_setting() {
        let deep = format!("a{}=1", "[]".repeat(33));
        let e = query::<std::collections::HashMap<String, serde_json::Value>>(&deep)
            .expect_err("too deep");
        assert!(e.limit && e.message.contains("TERN_MAX_FORM_DEPTH"), "{e}");
        let ok = format!("a{}=1", "[]".repeat(32));
        query::<std::collections::HashMap<String, serde_json::Value>>(&ok).expect("at the limit");
        let many: String = (0..1001).map(|i| format!("k{i}=1&")).collect();
        let e = query::<std::collections::HashMap<String, String>>(&many).expect_err("too many");
        assert!(e.limit && e.message.contains("TERN_MAX_FORM_FIELDS"), "{e}");
        let most: String = (0..1000).map(|i| format!("k{i}=1&")).collect();
        let map = query::<std::collections::HashMap<String, String>>(&most).expect("at the limit");
        assert_eq!(map.len(), 1000);
    }

    #[test]
    fn nested_lists_of_maps() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct Item {
            name: String,
        }
        #[derive(Debug, Deserialize, PartialEq)]
        struct Order {
            item: Vec<Item>,
        }
        let o: Order = query("item[][name]=a&item[][name]=b").expect("list of maps");
        assert_eq!(
            o.item,
            [Item { name: "a".into() }, Item { name: "b".into() }]
        );
        let e = query::<Search>("q=x&tag=a&tag[][k]=b").expect_err("mixed");
        assert_eq!(e.path, "tag[][k]");
    }

    #[test]
    fn long_client_text_is_not_echoed_whole() {
        let long = "x".repeat(100_000);
        let e = query::<Search>(&format!("q=a&page={long}")).expect_err("not a number");
        assert!(e.message.len() < 200, "{}", e.message.len());
        let e = query::<Search>(&format!("q=a&{long}[=1")).expect_err("unbalanced");
        assert!(e.message.len() < 200, "{}", e.message.len());
    }

    #[test]
    fn path_mode() {
        let node = Node::Map(
            [(Cow::Borrowed("id"), Node::Value(Cow::Borrowed("42")))]
                .into_iter()
                .collect(),
        );
        let id: u64 = u64::deserialize(NodeDe {
            node: &node,
            path_mode: true,
        })
        .expect("one");
        assert_eq!(id, 42);
        let node = Node::Map(
            [
                (Cow::Borrowed("org"), Node::Value(Cow::Borrowed("tern"))),
                (Cow::Borrowed("id"), Node::Value(Cow::Borrowed("x"))),
            ]
            .into_iter()
            .collect(),
        );
        let e = <(String, u64)>::deserialize(NodeDe {
            node: &node,
            path_mode: true,
        })
        .expect_err("bad id");
        assert_eq!(e.path, "id");
    }
}
