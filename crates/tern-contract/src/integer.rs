//! Integers as JSON Schema counts them: `507.0` is the integer 507 (JSON
//! Schema's `integer` is any number with no fractional part), where serde
//! refuses a float for an integer type. `#[contract]` reads integer fields
//! through these, so that a value the schema allows is never refused.

use std::{fmt, marker::PhantomData};

use serde::de::{self, Deserializer, Visitor};

/// An integer type a contract field may have.
pub trait Integer: Sized + TryFrom<i128> {
    /// For messages: `u32`.
    const NAME: &'static str;
}

macro_rules! integer {
    ($($ty:ident)*) => {$(
        impl Integer for $ty {
            const NAME: &'static str = stringify!($ty);
        }
    )*};
}

integer!(i8 i16 i32 i64 u8 u16 u32 u64);

// The one piece of ambient state in the contract crates: whether integer
// fields also read decimal text. It stays a thread-local because the mode
// has to reach `deserialize` below, a `deserialize_with` function that
// serde's derive calls with nothing but the deserializer (a seed cannot
// pass through a derived `Deserialize`, and the deserializer is tern's
// query reader, which this crate cannot wrap without taking over its
// every method). It is safe because it is only ever set by
// [`TextIntegers`], whose `Deserialize` sets it, runs `T::deserialize`
// and restores the previous value: within one synchronous call on one
// thread, with no `.await` in between (nothing another task could run
// in), restored by a guard's `Drop` (so also when the call unwinds), and
// nested uses restore what they found.
thread_local! {
    static TEXT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A `T` whose integer fields also read decimal text, for the whole of
/// its (synchronous) deserialization: every value of a query string is
/// text (`?limit=20`), where a JSON body that sends `"20"` for an integer
/// is refused. `ValidQuery` reads `Query<TextIntegers<T>>`.
pub(crate) struct TextIntegers<T>(pub(crate) T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for TextIntegers<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let _text = TextMode::enter();
        T::deserialize(d).map(TextIntegers)
    }
}

/// While alive, `TEXT` is set; dropping it restores what it was.
struct TextMode {
    before: bool,
}

impl TextMode {
    fn enter() -> Self {
        TextMode {
            before: TEXT.replace(true),
        }
    }
}

impl Drop for TextMode {
    fn drop(&mut self) {
        TEXT.set(self.before);
    }
}

struct IntegerVisitor<T>(PhantomData<T>);

impl<T: Integer> IntegerVisitor<T> {
    fn fit<E: de::Error>(v: i128) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::custom(format!("{v} is out of range for {}", T::NAME)))
    }
}

impl<'de, T: Integer> Visitor<'de> for IntegerVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an integer ({})", T::NAME)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Self::fit(i128::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Self::fit(i128::from(v))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<T, E> {
        Self::fit(v)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<T, E> {
        Self::fit(i128::try_from(v).map_err(|_| E::custom("out of range"))?)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        let digits = v.strip_prefix('-').unwrap_or(v);
        let decimal =
            !digits.is_empty() && digits.len() <= 39 && digits.bytes().all(|b| b.is_ascii_digit());
        match v.parse::<i128>() {
            Ok(n) if decimal && TEXT.get() => Self::fit(n),
            _ => Err(E::invalid_type(de::Unexpected::Str(v), &self)),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        // 2^63 and beyond lose integers' exactness as f64; refuse them.
        if v.fract() == 0.0 && v.abs() < 9.223_372_036_854_776e18 {
            #[allow(clippy::cast_possible_truncation)]
            Self::fit(v as i128)
        } else {
            Err(E::invalid_type(de::Unexpected::Float(v), &self))
        }
    }
}

/// A field of an integer type.
pub fn deserialize<'de, D: Deserializer<'de>, T: Integer>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(IntegerVisitor(PhantomData))
}

struct OptionVisitor<T>(PhantomData<T>);

impl<'de, T: Integer> Visitor<'de> for OptionVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an integer ({}) or null", T::NAME)
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        deserialize(d).map(Some)
    }
}

/// A field of type `Option` of an integer type.
pub fn option<'de, D: Deserializer<'de>, T: Integer>(d: D) -> Result<Option<T>, D::Error> {
    d.deserialize_option(OptionVisitor(PhantomData))
}
