//! `application/x-www-form-urlencoded` text to a [`Node`] tree, within
//! [`UrlencodedLimits`].

use std::borrow::Cow;

use serde::de::{self, DeserializeOwned};
use smallvec::SmallVec;

use super::{shorten, DeError, Map, Node, NodeDe};

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

/// Reads a query string or form body into `T`: [`parse_urlencoded`], then
/// [`NodeDe`]. Both `Query<T>` and `Form<T>` read this way.
pub(crate) fn from_urlencoded<T: DeserializeOwned>(
    input: &str,
    limits: UrlencodedLimits,
) -> Result<T, DeError> {
    let node = parse_urlencoded(input, limits)?;
    T::deserialize(NodeDe {
        node: &node,
        path_mode: false,
    })
}

/// Decodes `application/x-www-form-urlencoded` text (`+` is a space) into a
/// tree: repeated keys and `key[]` make lists, `key[sub]` makes maps.
///
/// Cost is linear in the input: one pass over the pairs, a hashed lookup
/// per key level, no recursion (the tree's depth is bounded by
/// `limits.depth`, which also bounds the deserializer's recursion).
fn parse_urlencoded<'a>(input: &'a str, limits: UrlencodedLimits) -> Result<Node<'a>, DeError> {
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
