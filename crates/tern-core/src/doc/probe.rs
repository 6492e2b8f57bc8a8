//! [`Probe`], the recording deserializer, and [`Halt`], the error every
//! deserializer of this module stops with.

use std::{cell::RefCell, fmt};

use serde::de::{self, Visitor};

use super::{
    access::{Elements, Fields, OneEntry, UnitVariant},
    trace::{Act, Filled, Log, Seen, Step},
};

/// Everything a probe stops with; a stop is never shown to anyone.
#[derive(Debug)]
pub(super) enum Halt {
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

/// The recording deserializer: follows `path` down, then does `act`.
pub(super) struct Probe<'a> {
    pub(super) path: &'a [Step],
    pub(super) act: Act,
    pub(super) log: &'a RefCell<Log>,
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

/// A deserializer's methods for a unit struct and a tuple struct: read
/// as a unit and as a tuple, the name saying nothing of what they read.
/// The same for every deserializer here.
macro_rules! structs_by_shape {
    () => {
        fn deserialize_unit_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            visitor: V,
        ) -> Result<V::Value, Halt> {
            self.deserialize_unit(visitor)
        }

        fn deserialize_tuple_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            len: usize,
            visitor: V,
        ) -> Result<V::Value, Halt> {
            self.deserialize_tuple(len, visitor)
        }
    };
}
pub(super) use structs_by_shape;

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

    structs_by_shape!();

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
            Some((Step::Elem(at), inner)) => {
                visitor.visit_seq(Elements::probing(at, at + 1, inner))
            }
            Some(_) => Err(Halt::Other),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Halt> {
        match self.next() {
            None => self.record(Seen::Tuple(len)),
            Some((Step::Elem(at), inner)) => visitor.visit_seq(Elements::probing(at, len, inner)),
            Some(_) => Err(Halt::Other),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Halt> {
        match self.next() {
            None => self.record(Seen::Map),
            Some((Step::MapValue, inner)) => visitor.visit_map(OneEntry::new("key", inner)),
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
                let result = visitor.visit_map(Fields::new(fields, skip, extra));
                self.log.borrow_mut().filled = Some(match result {
                    Ok(_) => Filled::Ok,
                    Err(Halt::Missing(field)) => Filled::Missing(field),
                    Err(Halt::Unknown) => Filled::Unknown,
                    Err(_) => Filled::Other,
                });
                Err(Halt::Stop)
            }
            (Some((Step::Field(name), inner)), _) => visitor.visit_map(OneEntry::new(name, inner)),
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
