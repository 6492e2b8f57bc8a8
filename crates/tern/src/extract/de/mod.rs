//! One deserializer for route parameters, query strings and forms: a small
//! tree of strings (`a=1&tag[]=x&user[name]=y`) read into any
//! `serde::Deserialize` type, with errors that name the offending key.
//!
//! - [`urlencoded`]: text to a [`Node`] tree, within [`UrlencodedLimits`];
//! - [`node`]: [`NodeDe`], a tree read into a type;
//! - [`params`]: [`ParamsDe`], route parameters read without a tree when
//!   one scalar is asked for;
//! - [`value`]: one string read as whatever scalar the type asks for;
//! - [`error`]: [`DeError`], with the key path where reading failed.

use std::borrow::Cow;

use indexmap::IndexMap;

/// Calls `$then!` with every `deserialize_*` method that reads one string
/// (a scalar), the list [`NodeDe`] and [`ParamsDe`] both forward.
macro_rules! with_scalar_methods {
    ($then:ident) => {
        $then! {
            deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
            deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
            deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string
            deserialize_bytes deserialize_byte_buf deserialize_unit deserialize_identifier
        }
    };
}

mod error;
mod node;
mod params;
mod urlencoded;
mod value;

pub(crate) use error::{shorten, DeError};
pub(crate) use node::NodeDe;
pub(crate) use params::ParamsDe;
pub(crate) use urlencoded::{from_urlencoded, UrlencodedLimits};

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

#[cfg(test)]
mod tests;
