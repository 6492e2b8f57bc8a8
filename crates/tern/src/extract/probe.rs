//! What a `Deserialize` type asks for, learnt without any data: a struct's
//! field names and whether each is a list, a tuple's length.
//!
//! A type's `Deserialize` impl calls one `deserialize_*` method first; the
//! probe deserializer records which (and its arguments) and then fails, so
//! nothing is built. App settings use it to refuse unknown keys and to read
//! a comma-separated variable into a list field; routes use it to compare a
//! handler's `Path` type with the route's parameters when the app is built.

use std::{cell::Cell, fmt};

use serde::de::{self, DeserializeOwned, DeserializeSeed, Visitor};

/// The first thing a type asks a deserializer for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// One value (a number, a string, a bool, an enum).
    Scalar,
    /// A list of any length.
    Seq,
    /// A tuple (or tuple struct) of this many values.
    Tuple(usize),
    /// A struct with these fields.
    Struct(&'static [&'static str]),
    /// A map, or a type that reads anything (`deserialize_any`).
    Other,
}

/// The shape of `T` (through `Option` and newtypes).
pub(crate) fn shape_of<T: DeserializeOwned>() -> Shape {
    let seen = Cell::new(Shape::Other);
    let _ = T::deserialize(Probe { seen: &seen });
    seen.get()
}

/// The shape of each field of the struct `T`, in declaration order; `None`
/// when `T` is not a struct.
pub(crate) fn field_shapes<T: DeserializeOwned>() -> Option<Vec<(&'static str, Shape)>> {
    let Shape::Struct(fields) = shape_of::<T>() else {
        return None;
    };
    Some(
        fields
            .iter()
            .map(|&field| {
                let seen = Cell::new(Shape::Other);
                let _ = T::deserialize(OneField { field, seen: &seen });
                (field, seen.get())
            })
            .collect(),
    )
}

#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("probed")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

struct Probe<'c> {
    seen: &'c Cell<Shape>,
}

macro_rules! record {
    ($shape:expr => $($method:ident($($arg:ident: $ty:ty),*))*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* _: V) -> Result<V::Value, Stop> {
            $(let _ = $arg;)*
            self.seen.set($shape);
            Err(Stop)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = Stop;

    record! { Shape::Scalar =>
        deserialize_bool() deserialize_i8() deserialize_i16() deserialize_i32() deserialize_i64()
        deserialize_i128() deserialize_u8() deserialize_u16() deserialize_u32() deserialize_u64()
        deserialize_u128() deserialize_f32() deserialize_f64() deserialize_char() deserialize_str()
        deserialize_string() deserialize_bytes() deserialize_byte_buf() deserialize_unit()
        deserialize_unit_struct(name: &'static str) deserialize_identifier()
        deserialize_enum(name: &'static str, variants: &'static [&'static str])
    }
    record! { Shape::Seq => deserialize_seq() }
    record! { Shape::Other => deserialize_any() deserialize_map() deserialize_ignored_any() }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, _: V) -> Result<V::Value, Stop> {
        self.seen.set(Shape::Tuple(len));
        Err(Stop)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        len: usize,
        _: V,
    ) -> Result<V::Value, Stop> {
        self.seen.set(Shape::Tuple(len));
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        self.seen.set(Shape::Struct(fields));
        Err(Stop)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self)
    }
}

/// A struct holding only `field`, whose value is probed.
struct OneField<'c> {
    field: &'static str,
    seen: &'c Cell<Shape>,
}

impl<'de> de::Deserializer<'de> for OneField<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_map(OneFieldMap {
            field: Some(self.field),
            seen: self.seen,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

struct OneFieldMap<'c> {
    field: Option<&'static str>,
    seen: &'c Cell<Shape>,
}

impl<'de> de::MapAccess<'de> for OneFieldMap<'_> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Stop> {
        match self.field.take() {
            Some(field) => seed
                .deserialize(de::value::StrDeserializer::<Stop>::new(field))
                .map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Stop> {
        seed.deserialize(Probe { seen: self.seen })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Settings {
        token: String,
        hosts: Vec<String>,
        page: Option<u32>,
        maybe: Option<Vec<u8>>,
        pair: (u8, u8),
    }

    #[test]
    fn shapes() {
        assert_eq!(shape_of::<u64>(), Shape::Scalar);
        assert_eq!(shape_of::<Option<String>>(), Shape::Scalar);
        assert_eq!(shape_of::<(u64, String)>(), Shape::Tuple(2));
        assert_eq!(shape_of::<Vec<u8>>(), Shape::Seq);
        assert_eq!(shape_of::<serde_json::Value>(), Shape::Other);
        assert_eq!(
            field_shapes::<Settings>(),
            Some(vec![
                ("token", Shape::Scalar),
                ("hosts", Shape::Seq),
                ("page", Shape::Scalar),
                ("maybe", Shape::Seq),
                ("pair", Shape::Tuple(2)),
            ])
        );
        assert_eq!(field_shapes::<u64>(), None);
    }
}
