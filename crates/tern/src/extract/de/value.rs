//! [`ValueDe`]: one string, read as whatever scalar the type asks for.

use serde::de::{self, IntoDeserializer, Visitor};

use super::{shorten, DeError};

/// One string, parsed into whatever the target type asks for.
pub(super) struct ValueDe<'v>(pub(super) &'v str);

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
