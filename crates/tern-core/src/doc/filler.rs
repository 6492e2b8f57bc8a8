//! [`Filler`]: a deserializer that gives a small valid value of whatever
//! type asks, for the parts of a type that are not being probed.

use serde::de::{self, Visitor};

use super::{
    access::{Elements, Fields, UnitVariant},
    probe::{structs_by_shape, Halt},
};

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
pub(super) struct Filler;

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
    structs_by_shape!();
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
        visitor.visit_seq(Elements::fillers(0))
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_seq(Elements::fillers(len))
    }
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        visitor.visit_map(Fields::new(&[], None, false))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Halt> {
        visitor.visit_map(Fields::new(fields, None, false))
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
