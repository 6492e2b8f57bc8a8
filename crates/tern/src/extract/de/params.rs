//! [`ParamsDe`]: route parameters, read without building a tree when the
//! handler asks for one scalar.

use std::borrow::Cow;

use serde::de::{self, Visitor};

use super::{node::named, value::ValueDe, DeError, Node, NodeDe};

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
                [(name, value)] => named(ValueDe(value).$method(visitor), Some(name)),
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

    with_scalar_methods!(param_scalar);

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
