//! [`NodeDe`]: a [`Node`] tree read into a `Deserialize` type.

use std::borrow::Cow;

use serde::de::{self, DeserializeSeed, Visitor};

use super::{shorten, value::ValueDe, DeError, Node};

/// Reads a [`Node`]. In path mode a map of one entry also reads as that
/// entry's value and a map reads as a sequence of its values, so that
/// `Path<u64>` and `Path<(String, u64)>` work beside `Path<Struct>`.
pub(crate) struct NodeDe<'a, 'n> {
    pub(crate) node: &'n Node<'a>,
    pub(crate) path_mode: bool,
}

impl<'n> NodeDe<'_, 'n> {
    /// The one string this node reads as a scalar, and the key to name in
    /// its errors (the route parameter's, in path mode); or why there is
    /// not one.
    fn single(&self) -> Result<(&'n str, Option<&'n str>), DeError> {
        match self.node {
            Node::Value(v) => Ok((v, None)),
            Node::Map(entries) if self.path_mode && entries.len() == 1 => {
                match entries.get_index(0) {
                    Some((key, Node::Value(v))) => Ok((v, Some(key))),
                    _ => Err(expected_one()),
                }
            }
            Node::Map(entries) if self.path_mode => Err(de::Error::custom(format!(
                "the route has {} parameters; extract them as a tuple or a struct",
                entries.len()
            ))),
            Node::Seq(items) => Err(de::Error::custom(format!(
                "is given {} times; expected one value",
                items.len()
            ))),
            Node::Map(_) => Err(expected_one()),
        }
    }
}

/// `result`, its error named under `key` when there is one.
pub(super) fn named<T>(result: Result<T, DeError>, key: Option<&str>) -> Result<T, DeError> {
    match key {
        Some(key) => result.map_err(|e| e.at(key)),
        None => result,
    }
}

fn expected_one() -> DeError {
    de::Error::custom("expected a single value, not a map (`key[field]=...`)")
}

macro_rules! scalar {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            let (value, key) = self.single()?;
            named(ValueDe(value).$method(visitor), key)
        }
    )*};
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
            }),
        }
    }

    with_scalar_methods!(scalar);

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
                visitor.visit_seq(SeqAccess {
                    items: indexed.into_iter().map(|(_, v)| v),
                    index: 0,
                    path_mode: self.path_mode,
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
        // Whatever keeps this node from being one value, an enum answers
        // with the one message.
        let (value, key) = self.single().map_err(|_| expected_one())?;
        named(
            ValueDe(value).deserialize_enum(name, variants, visitor),
            key,
        )
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }
}

/// Reads `node` with `seed`, its errors named under `key`. Below the top
/// level a tree is never in path mode except through a sequence's items.
fn read_under<'de, T: DeserializeSeed<'de>>(
    seed: T,
    node: &Node<'_>,
    path_mode: bool,
    key: &str,
) -> Result<T::Value, DeError> {
    seed.deserialize(NodeDe { node, path_mode })
        .map_err(|e| e.at(key))
}

/// A sequence's items, each named in its errors by its index (`[2]`).
struct SeqAccess<I> {
    items: I,
    index: usize,
    path_mode: bool,
}

impl<'de, 'a: 'n, 'n, I> de::SeqAccess<'de> for SeqAccess<I>
where
    I: Iterator<Item = &'n Node<'a>>,
{
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
        read_under(seed, node, self.path_mode, &format!("[{index}]")).map(Some)
    }
}

/// In path mode, a map's values as a sequence (`Path<(String, u64)>`),
/// each named in its errors by its key.
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
        read_under(seed, node, false, key).map(Some)
    }
}

struct MapAccess<'a, 'n> {
    entries: indexmap::map::Iter<'n, Cow<'a, str>, Node<'a>>,
    value: Option<(&'n str, &'n Node<'a>)>,
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
        read_under(seed, node, false, key)
    }
}
