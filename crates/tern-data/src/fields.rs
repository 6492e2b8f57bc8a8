//! A model's fields as form text, both ways: what an admin or any form
//! page needs to show a row and to read one back from a submission.
//!
//! `#[derive(Model)]` implements [`Fields`] for every model: each field's
//! type reads and shows itself through [`FormValue`] (numbers, text,
//! `bool`, [`Uuid`], [`OffsetDateTime`], [`Encrypted`] values, `Option`s
//! of them; bytes and [`JsonColumn`]s are shown but not meant to be
//! typed in). A field of another type needs a `FormValue` impl.

use std::fmt;

use time::{
    format_description::well_known::Rfc3339, macros::format_description, PrimitiveDateTime,
};

use crate::{
    encryption::Plaintext, model::Column, DataError, Encrypted, JsonColumn, Model, OffsetDateTime,
    Uuid,
};

/// What a form says about one column, as [`Fields::from_form`] asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input<'a> {
    /// Not in the form: the base row's value (an edit), else the type's
    /// [`FormValue::placeholder`] (a create: the key, a read-only or a
    /// `default` column, which `INSERT` leaves to the database or a hook
    /// sets).
    Keep,
    /// The form's text for the column; `None` when the field was absent
    /// (an unchecked checkbox is `false`, an absent `Option` is `None`,
    /// any other absent value is an error).
    Given(Option<&'a str>),
}

/// A column's value as a page shows it.
#[derive(Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// `NULL` (a `None`).
    Null,
    /// Text: a number, a date-time, a UUID or text, as a form writes it.
    Text(String),
    /// A boolean.
    Bool(bool),
    /// The plaintext of an [`Encrypted`] value: a page shows it only where
    /// it may be changed, and never logs it (its `Debug` hides it).
    Secret(String),
    /// Bytes: their number only.
    Binary(usize),
}

impl fmt::Debug for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldValue::Null => f.write_str("Null"),
            FieldValue::Text(t) => f.debug_tuple("Text").field(t).finish(),
            FieldValue::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
            FieldValue::Secret(_) => f.write_str("Secret(***)"),
            FieldValue::Binary(n) => f.debug_tuple("Binary").field(n).finish(),
        }
    }
}

impl FieldValue {
    /// The value as a form's text: a `Text`'s or a `Secret`'s text,
    /// `true`/`false`, empty for `Null`, `(n bytes)` for bytes.
    pub fn form_text(&self) -> String {
        match self {
            FieldValue::Null => String::new(),
            FieldValue::Text(t) | FieldValue::Secret(t) => t.clone(),
            FieldValue::Bool(b) => b.to_string(),
            FieldValue::Binary(n) => format!("({n} bytes)"),
        }
    }
}

/// The message of a required value that is missing or empty.
pub const REQUIRED: &str = "this field is required";

/// A field's type, read from and shown as form text.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read from or shown in a form",
    label = "a `#[derive(Model)]` field's type needs `tern_data::FormValue`",
    note = "implement `tern_data::FormValue` for it (parse, show, placeholder); a `JsonColumn<T>` needs `T: Default`"
)]
pub trait FormValue: Sized {
    /// The value of `text`, or why it is not one (a message for people,
    /// without the field's name: "must be a whole number").
    fn parse(text: &str) -> Result<Self, String>;
    /// The value as a page shows it.
    fn show(&self) -> FieldValue;
    /// A stand-in for a value the form does not give on create (a key,
    /// a `default` column): never written by `INSERT`, or set by a hook.
    fn placeholder() -> Self;
    /// The value of an absent field: [`REQUIRED`] unless the type has
    /// one (`false` for a `bool`, `None` for an `Option`).
    fn absent() -> Result<Self, String> {
        Err(REQUIRED.to_owned())
    }
    /// Whether a person types it into a form (`false` for bytes and
    /// JSON: a form page shows them and keeps the stored value).
    const TYPED: bool = true;
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl FormValue for $t {
            fn parse(text: &str) -> Result<Self, String> {
                let text = text.trim();
                if text.is_empty() {
                    return Err(REQUIRED.to_owned());
                }
                text.parse().map_err(|_| {
                    format!("must be a whole number from {} to {}", <$t>::MIN, <$t>::MAX)
                })
            }
            fn show(&self) -> FieldValue {
                FieldValue::Text(self.to_string())
            }
            fn placeholder() -> Self {
                0
            }
        }
    )*};
}
integers!(i16, i32, i64);

macro_rules! reals {
    ($($t:ty),*) => {$(
        impl FormValue for $t {
            fn parse(text: &str) -> Result<Self, String> {
                let text = text.trim();
                if text.is_empty() {
                    return Err(REQUIRED.to_owned());
                }
                match text.parse::<$t>() {
                    Ok(v) if v.is_finite() => Ok(v),
                    _ => Err("must be a number (such as 2.5)".to_owned()),
                }
            }
            fn show(&self) -> FieldValue {
                FieldValue::Text(self.to_string())
            }
            fn placeholder() -> Self {
                0.0
            }
        }
    )*};
}
reals!(f32, f64);

impl FormValue for bool {
    /// A checkbox: present is `true` (`on`, `true`, `1`, `yes`);
    /// `false`, `0`, `off`, `no` and empty are `false`.
    fn parse(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "on" | "true" | "1" | "yes" => Ok(true),
            "" | "off" | "false" | "0" | "no" => Ok(false),
            _ => Err("must be yes or no".to_owned()),
        }
    }
    fn show(&self) -> FieldValue {
        FieldValue::Bool(*self)
    }
    fn placeholder() -> Self {
        false
    }
    fn absent() -> Result<Self, String> {
        Ok(false)
    }
}

impl FormValue for String {
    /// The text as given; empty (or only spaces) is [`REQUIRED`] (an
    /// `Option<String>` takes it as `None`).
    fn parse(text: &str) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Err(REQUIRED.to_owned());
        }
        Ok(text.to_owned())
    }
    fn show(&self) -> FieldValue {
        FieldValue::Text(self.clone())
    }
    fn placeholder() -> Self {
        String::new()
    }
}

impl FormValue for Uuid {
    fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err(REQUIRED.to_owned());
        }
        Uuid::parse_str(text)
            .map_err(|_| "must be a UUID (such as 67e55044-10b1-426f-9247-bb680e5fe0c8)".to_owned())
    }
    fn show(&self) -> FieldValue {
        FieldValue::Text(self.hyphenated().to_string())
    }
    fn placeholder() -> Self {
        Uuid::nil()
    }
}

impl FormValue for OffsetDateTime {
    /// A `datetime-local` input's text, `YYYY-MM-DDTHH:MM` or with
    /// seconds (and a fraction), read as UTC; or RFC 3339 with its offset.
    fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err(REQUIRED.to_owned());
        }
        if let Ok(at) = OffsetDateTime::parse(text, &Rfc3339) {
            return Ok(at);
        }
        let minutes = format_description!("[year]-[month]-[day]T[hour]:[minute]");
        let seconds = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");
        let fraction =
            format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond]");
        [minutes, seconds, fraction]
            .iter()
            .find_map(|f| PrimitiveDateTime::parse(text, f).ok())
            .map(PrimitiveDateTime::assume_utc)
            .ok_or_else(|| {
                "must be a date and time, YYYY-MM-DDTHH:MM (UTC), or RFC 3339".to_owned()
            })
    }
    /// UTC, as a `datetime-local` input takes it: `YYYY-MM-DDTHH:MM:SS`,
    /// with the fraction of a second when there is one.
    fn show(&self) -> FieldValue {
        let utc = self.to_offset(time::UtcOffset::UTC);
        FieldValue::Text(datetime_local(utc))
    }
    fn placeholder() -> Self {
        OffsetDateTime::UNIX_EPOCH
    }
}

/// `utc` as [`OffsetDateTime`]'s `show` writes it: `time`'s
/// `[year]-[month]-[day]T[hour]:[minute]:[second]`, then `.[subsecond]`
/// (the fraction's digits up to the last one not zero) when there is a
/// fraction. Written digit by digit: `time`'s formatter costs about ten
/// times as much, and an admin list shows a date-time in every row (the
/// bench's list, issue 29). A year outside 0-9999 (a sign, more digits)
/// goes through `time`'s formatter.
fn datetime_local(utc: OffsetDateTime) -> String {
    let year = utc.year();
    if !(0..=9999).contains(&year) {
        let text = if utc.nanosecond() == 0 {
            utc.format(format_description!(
                "[year]-[month]-[day]T[hour]:[minute]:[second]"
            ))
        } else {
            utc.format(format_description!(
                "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond]"
            ))
        };
        return text.unwrap_or_default();
    }
    fn digits(out: &mut [u8], mut n: u32) {
        for b in out.iter_mut().rev() {
            *b = b'0' + (n % 10) as u8;
            n /= 10;
        }
    }
    let mut buf = *b"0000-00-00T00:00:00.000000000";
    digits(&mut buf[0..4], year.unsigned_abs());
    digits(&mut buf[5..7], u32::from(u8::from(utc.month())));
    digits(&mut buf[8..10], u32::from(utc.day()));
    digits(&mut buf[11..13], u32::from(utc.hour()));
    digits(&mut buf[14..16], u32::from(utc.minute()));
    digits(&mut buf[17..19], u32::from(utc.second()));
    let nanos = utc.nanosecond();
    let len = if nanos == 0 {
        19
    } else {
        digits(&mut buf[20..29], nanos);
        // `[subsecond]`: one digit at least, no trailing zeros.
        20 + buf[20..29]
            .iter()
            .rposition(|&b| b != b'0')
            .map_or(1, |i| i + 1)
    };
    // ASCII digits and separators only.
    std::str::from_utf8(&buf[..len])
        .unwrap_or_default()
        .to_owned()
}

impl<T: FormValue> FormValue for Option<T> {
    const TYPED: bool = T::TYPED;
    /// Empty (or only spaces) is `None`.
    fn parse(text: &str) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        T::parse(text).map(Some)
    }
    fn show(&self) -> FieldValue {
        self.as_ref().map_or(FieldValue::Null, T::show)
    }
    fn placeholder() -> Self {
        None
    }
    fn absent() -> Result<Self, String> {
        Ok(None)
    }
}

impl<T: FormValue + Plaintext> FormValue for Encrypted<T> {
    const TYPED: bool = T::TYPED;
    /// As `T`; shown as a [`FieldValue::Secret`].
    fn parse(text: &str) -> Result<Self, String> {
        T::parse(text).map(Encrypted)
    }
    fn show(&self) -> FieldValue {
        match self.0.show() {
            FieldValue::Text(t) | FieldValue::Secret(t) => FieldValue::Secret(t),
            other => other,
        }
    }
    fn placeholder() -> Self {
        Encrypted(T::placeholder())
    }
    fn absent() -> Result<Self, String> {
        T::absent().map(Encrypted)
    }
}

impl FormValue for Vec<u8> {
    const TYPED: bool = false;
    /// Bytes are not typed into a form: refused (a form page keeps the
    /// stored value, [`Input::Keep`]).
    fn parse(_: &str) -> Result<Self, String> {
        Err("bytes cannot be typed in here".to_owned())
    }
    fn show(&self) -> FieldValue {
        FieldValue::Binary(self.len())
    }
    fn placeholder() -> Self {
        Vec::new()
    }
}

impl<T> FormValue for JsonColumn<T>
where
    T: serde::Serialize + serde::de::DeserializeOwned + Default,
{
    const TYPED: bool = false;
    /// JSON text of `T` (a form page usually keeps the stored value,
    /// [`Input::Keep`]).
    fn parse(text: &str) -> Result<Self, String> {
        serde_json::from_str(text)
            .map(JsonColumn)
            .map_err(|e| format!("must be JSON of the right shape ({e})"))
    }
    /// Its JSON text.
    fn show(&self) -> FieldValue {
        FieldValue::Text(serde_json::to_string(&self.0).unwrap_or_default())
    }
    fn placeholder() -> Self {
        JsonColumn(T::default())
    }
}

/// A model's rows as form text: generated by `#[derive(Model)]`.
///
/// ```
/// use tern_data::{fields::{FieldValue, Input}, Fields, Model};
///
/// #[derive(Model, Debug, PartialEq)]
/// #[model(table = "notes", name = "note")]
/// struct Note {
///     #[model(primary_key)]
///     id: i64,
///     #[model(max_length = 20)]
///     text: String,
///     pinned: bool,
/// }
///
/// let note = Note { id: 7, text: "hello".into(), pinned: true };
/// assert_eq!(note.key_text(), "7");
/// assert_eq!(note.values()[1], FieldValue::Text("hello".into()));
/// // An edit: the key kept, the rest from the form (the checkbox unticked).
/// let edited = Note::from_form(
///     &|c| match c.name {
///         "text" => Input::Given(Some("bye")),
///         "pinned" => Input::Given(None),
///         _ => Input::Keep,
///     },
///     Some(&note),
/// )
/// .unwrap();
/// assert_eq!(edited, Note { id: 7, text: "bye".into(), pinned: false });
/// // Every problem, one per field.
/// let errors = Note::from_form(&|_| Input::Given(Some("")), None).unwrap_err();
/// assert_eq!(errors.len(), 2); // `id` and `text`: required
/// ```
pub trait Fields: Model {
    /// The key of `text` (as a path gives it), or `None` when it cannot
    /// be one.
    fn parse_key(text: &str) -> Option<Self::Key>;
    /// The row's key as text: what [`parse_key`](Fields::parse_key) reads.
    fn key_text(&self) -> String;
    /// Every column's value, in [`Model::COLUMNS`] order.
    fn values(&self) -> Vec<FieldValue>;
    /// The row a form describes: each column as `input` says (see
    /// [`Input`]), `base` the row being edited (`None` on create). On
    /// error, every problem: one `(column, message)` per field, the
    /// message without the field's name; the text checks of
    /// [`Model::check_values`] (NUL, `max_length`, `choices`) included.
    fn from_form<'a>(
        input: &dyn Fn(&'static Column) -> Input<'a>,
        base: Option<&Self>,
    ) -> Result<Self, Vec<(&'static str, String)>>;
    /// Per column, in [`Model::COLUMNS`] order, whether a form types it
    /// ([`FormValue::TYPED`] of its field's type).
    const TYPED: &'static [bool];
}

/// One column's value from a given [`Input`] for [`Fields::from_form`]
/// (the generated code answers [`Input::Keep`] itself): the text read,
/// or on error the placeholder, the error pushed with the column's name.
#[doc(hidden)]
pub fn read<T: FormValue>(
    column: &'static Column,
    input: Input<'_>,
    errors: &mut Vec<(&'static str, String)>,
) -> T {
    let read = match input {
        Input::Keep => return T::placeholder(),
        Input::Given(Some(text)) => T::parse(text),
        Input::Given(None) => T::absent(),
    };
    read.unwrap_or_else(|e| {
        errors.push((column.name, e));
        T::placeholder()
    })
}

/// The text checks of one text value (NUL, `max_length` in characters,
/// `choices`): the message without the field's name.
#[doc(hidden)]
pub fn check_text(column: &Column, text: &str) -> Result<(), String> {
    if text.contains('\0') {
        return Err("must not contain a NUL character (text columns cannot store it)".to_owned());
    }
    if let Some(max) = column.max_length {
        let n = text.chars().count();
        if n > max as usize {
            return Err(format!("has at most {max} characters (this has {n})"));
        }
    }
    if !column.choices.is_empty() && !column.choices.contains(&text) {
        return Err(format!("must be one of: {}", column.choices.join(", ")));
    }
    Ok(())
}

/// [`check_text`] as [`Model::check_values`] answers it: `422` naming
/// the field.
#[doc(hidden)]
pub fn check_text_value(column: &Column, text: &str) -> Result<(), DataError> {
    check_text(column, text).map_err(|e| DataError::Invalid(format!("`{}` {e}", column.name)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_and_show_back() {
        assert_eq!(i64::parse(" 42 ").unwrap(), 42);
        assert!(i16::parse("70000").unwrap_err().contains("whole number"));
        assert_eq!(i32::parse("").unwrap_err(), REQUIRED);
        assert_eq!(f64::parse("2.5").unwrap(), 2.5);
        assert!(f64::parse("NaN").is_err());
        assert!(bool::parse("on").unwrap());
        assert!(!bool::absent().unwrap());
        assert!(bool::parse("maybe").is_err());
        assert_eq!(String::parse("  ").unwrap_err(), REQUIRED);
        assert_eq!(Option::<String>::parse("").unwrap(), None);
        assert_eq!(Option::<i64>::absent().unwrap(), None);
        assert_eq!(String::absent().unwrap_err(), REQUIRED);
        let at = OffsetDateTime::parse("2026-12-04T10:30:00Z", &Rfc3339).unwrap();
        for text in [
            "2026-12-04T10:30",
            "2026-12-04T10:30:00",
            "2026-12-04T11:30:00+01:00",
        ] {
            assert_eq!(
                <OffsetDateTime as FormValue>::parse(text).unwrap(),
                at,
                "{text}"
            );
        }
        assert!(<OffsetDateTime as FormValue>::parse("yesterday").is_err());
        assert_eq!(at.show(), FieldValue::Text("2026-12-04T10:30:00".into()));
        let id = Uuid::new_v4();
        assert_eq!(Uuid::parse(&id.form_text()).unwrap(), id);
        assert!(Uuid::parse("abc").is_err());
        let secret = Encrypted("hush".to_owned());
        assert_eq!(secret.show(), FieldValue::Secret("hush".into()));
        assert_eq!(format!("{:?}", secret.show()), "Secret(***)");
        assert_eq!(vec![1_u8, 2].show(), FieldValue::Binary(2));
        let tags = JsonColumn(vec!["a".to_owned()]);
        assert_eq!(tags.show(), FieldValue::Text(r#"["a"]"#.into()));
        assert_eq!(JsonColumn::<Vec<String>>::parse(r#"["a"]"#).unwrap(), tags);
    }

    /// The digit-by-digit writer agrees with `time`'s formatter (the
    /// reference) on whole seconds, fractions of every length, the ends
    /// of the fast path's years and the years past them.
    #[test]
    fn datetime_local_agrees_with_time() {
        let whole = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");
        let fraction =
            format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond]");
        let reference = |at: OffsetDateTime| {
            if at.nanosecond() == 0 {
                at.format(whole).unwrap()
            } else {
                at.format(fraction).unwrap()
            }
        };
        let mut cases = vec![
            OffsetDateTime::UNIX_EPOCH,
            OffsetDateTime::parse("0000-01-01T00:00:00Z", &Rfc3339).unwrap(),
            OffsetDateTime::parse("9999-12-31T23:59:59.999999999Z", &Rfc3339).unwrap(),
            OffsetDateTime::parse("2026-12-04T10:30:00.5Z", &Rfc3339).unwrap(),
            OffsetDateTime::parse("2026-12-04T10:30:00.000000001Z", &Rfc3339).unwrap(),
            OffsetDateTime::parse("2026-12-04T10:30:00.120Z", &Rfc3339).unwrap(),
        ];
        // Every month and hour, nanoseconds of every length.
        let mut at = OffsetDateTime::parse("1969-07-20T20:17:40Z", &Rfc3339).unwrap();
        let mut nanos = 1_u32;
        for _ in 0..2_000 {
            at += time::Duration::seconds(86_400 * 17 + 3_671);
            nanos = nanos.wrapping_mul(7).wrapping_add(13) % 1_000_000_000;
            cases.push(at);
            cases.push(at.replace_nanosecond(nanos).unwrap());
        }
        for at in cases {
            assert_eq!(datetime_local(at), reference(at), "{at}");
            assert_eq!(at.show(), FieldValue::Text(reference(at)), "{at}");
        }
        // Past the fast path's years: `time`'s own text.
        let far = OffsetDateTime::UNIX_EPOCH.replace_year(-1).unwrap();
        assert_eq!(datetime_local(far), reference(far));
    }

    trait FormText {
        fn form_text(&self) -> String;
    }
    impl<T: FormValue> FormText for T {
        fn form_text(&self) -> String {
            self.show().form_text()
        }
    }
}
