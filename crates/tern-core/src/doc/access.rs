//! The sequences, maps and enums the deserializers hand a visitor: each
//! fills what the type asks for, but the one part that is probed.

use serde::de::{self, value::StrDeserializer, DeserializeSeed, IntoDeserializer, Visitor};

use super::{
    filler::Filler,
    probe::{Halt, Probe},
};

/// A sequence whose element `at` is probed; those before it are fillers.
pub(super) struct Elements<'a> {
    at: usize,
    next: usize,
    len: usize,
    probe: Option<Probe<'a>>,
}

impl<'a> Elements<'a> {
    /// `len` elements, each a filler.
    pub(super) fn fillers(len: usize) -> Self {
        Elements {
            at: usize::MAX,
            next: 0,
            len,
            probe: None,
        }
    }

    /// `len` elements, element `at` read by `probe`.
    pub(super) fn probing(at: usize, len: usize, probe: Probe<'a>) -> Self {
        Elements {
            at,
            next: 0,
            len,
            probe: Some(probe),
        }
    }
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
pub(super) struct OneEntry<'a> {
    key: Option<&'static str>,
    value: Option<Probe<'a>>,
}

impl<'a> OneEntry<'a> {
    /// The entry `key`, its value read by `probe`.
    pub(super) fn new(key: &'static str, probe: Probe<'a>) -> Self {
        OneEntry {
            key: Some(key),
            value: Some(probe),
        }
    }
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
pub(super) struct Fields {
    fields: &'static [&'static str],
    skip: Option<&'static str>,
    extra: bool,
    next: usize,
}

impl Fields {
    /// Every one of `fields` but `skip`, then an unknown one if `extra`.
    pub(super) fn new(
        fields: &'static [&'static str],
        skip: Option<&'static str>,
        extra: bool,
    ) -> Self {
        Fields {
            fields,
            skip,
            extra,
            next: 0,
        }
    }
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
pub(super) struct UnitVariant(pub(super) &'static str);

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
