//! The rules a contract's fields can carry, each a check and the JSON
//! Schema keywords that say the same. The `#[contract]` attribute calls
//! these; a rule on a type it does not apply to is a compile error naming
//! the rule.

use std::{
    collections::{BTreeMap, HashMap},
    fmt::Display,
    sync::OnceLock,
};

use regex::Regex;
use serde_json::{json, Value};

use crate::{schema::set, violation::shorten, Pointer, Violations};

/// What `length` counts: the characters of a string, the items of a list,
/// the entries of a map.
#[diagnostic::on_unimplemented(
    message = "`length` does not apply to `{Self}`",
    note = "`length` counts the characters of a `String`, the items of a `Vec` or the entries of a map (in an `Option`, when present); for numbers use `range`"
)]
pub trait Length {
    /// What is counted, for messages.
    const UNIT: &'static str;
    /// The JSON Schema keywords for the bounds.
    const KEYWORDS: (&'static str, &'static str);
    /// The length, or `None` for an absent optional value.
    fn length(&self) -> Option<usize>;
}

impl Length for String {
    const UNIT: &'static str = "characters";
    const KEYWORDS: (&'static str, &'static str) = ("minLength", "maxLength");
    fn length(&self) -> Option<usize> {
        Some(self.chars().count())
    }
}

impl<T> Length for Vec<T> {
    const UNIT: &'static str = "items";
    const KEYWORDS: (&'static str, &'static str) = ("minItems", "maxItems");
    fn length(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<K, V, S> Length for HashMap<K, V, S> {
    const UNIT: &'static str = "entries";
    const KEYWORDS: (&'static str, &'static str) = ("minProperties", "maxProperties");
    fn length(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<K, V> Length for BTreeMap<K, V> {
    const UNIT: &'static str = "entries";
    const KEYWORDS: (&'static str, &'static str) = ("minProperties", "maxProperties");
    fn length(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<T: Length> Length for Option<T> {
    const UNIT: &'static str = T::UNIT;
    const KEYWORDS: (&'static str, &'static str) = T::KEYWORDS;
    fn length(&self) -> Option<usize> {
        self.as_ref().and_then(Length::length)
    }
}

/// `length(min = .., max = ..)`.
pub fn length<T: Length>(
    value: &T,
    min: Option<usize>,
    max: Option<usize>,
    at: &Pointer,
    errors: &mut Violations,
) {
    let Some(n) = value.length() else { return };
    let unit = T::UNIT;
    match (min, max) {
        (Some(min), Some(max)) if n < min || n > max => {
            let detail = if min == max {
                format!("must have exactly {min} {unit} (it has {n})")
            } else {
                format!("must have {min} to {max} {unit} (it has {n})")
            };
            errors.add(at, "length", detail);
        }
        (Some(min), None) if n < min => {
            errors.add(
                at,
                "length",
                format!("must have at least {min} {unit} (it has {n})"),
            );
        }
        (None, Some(max)) if n > max => {
            errors.add(
                at,
                "length",
                format!("must have at most {max} {unit} (it has {n})"),
            );
        }
        _ => {}
    }
}

/// The schema of `length`.
pub fn length_schema<T: Length>(schema: &mut Value, min: Option<usize>, max: Option<usize>) {
    let (lo, hi) = T::KEYWORDS;
    if let Some(min) = min {
        set(schema, lo, json!(min));
    }
    if let Some(max) = max {
        set(schema, hi, json!(max));
    }
}

/// What `range` bounds: a number.
#[diagnostic::on_unimplemented(
    message = "`range` does not apply to `{Self}`",
    note = "`range` bounds a number (an integer or a float, in an `Option` when present); for strings and lists use `length`"
)]
pub trait Bounded {
    /// The number type.
    type Number: PartialOrd + Display + Copy;
    /// The number, or `None` for an absent optional value.
    fn number(&self) -> Option<Self::Number>;
}

macro_rules! bounded {
    ($($ty:ty)*) => {$(
        impl Bounded for $ty {
            type Number = $ty;
            fn number(&self) -> Option<$ty> {
                Some(*self)
            }
        }
    )*};
}

bounded!(i8 i16 i32 i64 u8 u16 u32 u64 f32 f64);

impl<T: Bounded> Bounded for Option<T> {
    type Number = T::Number;
    fn number(&self) -> Option<T::Number> {
        self.as_ref().and_then(Bounded::number)
    }
}

/// `range(min = .., max = ..)`, both inclusive.
pub fn range<T: Bounded>(
    value: &T,
    min: Option<T::Number>,
    max: Option<T::Number>,
    at: &Pointer,
    errors: &mut Violations,
) {
    let Some(n) = value.number() else { return };
    let below = min.is_some_and(|min| n < min);
    let above = max.is_some_and(|max| n > max);
    // A NaN is in no range.
    let nan = n.partial_cmp(&n).is_none();
    if !(below || above || nan) {
        return;
    }
    let detail = match (min, max) {
        (Some(min), Some(max)) => format!("must be from {min} to {max} (it is {n})"),
        (Some(min), None) => format!("must be at least {min} (it is {n})"),
        (None, Some(max)) => format!("must be at most {max} (it is {n})"),
        (None, None) => return,
    };
    errors.add(at, "range", detail);
}

/// The schema of `range`.
pub fn range_schema(schema: &mut Value, min: Option<Value>, max: Option<Value>) {
    if let Some(min) = min {
        set(schema, "minimum", min);
    }
    if let Some(max) = max {
        set(schema, "maximum", max);
    }
}

/// What the string rules (`pattern`, `email`, `uri`, `uuid`,
/// `date_time`) check: a string.
#[diagnostic::on_unimplemented(
    message = "this rule checks a string, and `{Self}` is not one",
    note = "`pattern`, `email`, `uri`, `uuid` and `date_time` apply to a `String` (in an `Option`, when present); for the items of a list, write them in `each(...)`"
)]
pub trait Text {
    /// The string, or `None` for an absent optional value.
    fn text(&self) -> Option<&str>;
}

impl Text for String {
    fn text(&self) -> Option<&str> {
        Some(self)
    }
}

impl<T: Text> Text for Option<T> {
    fn text(&self) -> Option<&str> {
        self.as_ref().and_then(Text::text)
    }
}

/// `pattern = "..."`: the whole string must match (the pattern is
/// anchored, as JSON Schema's is not: write `.*` to search).
pub fn pattern<T: Text>(
    value: &T,
    regex: &'static OnceLock<Regex>,
    source: &'static str,
    at: &Pointer,
    errors: &mut Violations,
) {
    let Some(text) = value.text() else { return };
    let regex = regex.get_or_init(|| {
        // The derive checked the pattern when the crate was compiled.
        Regex::new(&format!("^(?:{source})$")).unwrap_or_else(|_| {
            Regex::new("$^").unwrap_or_else(|_| unreachable!("a constant pattern"))
        })
    });
    if !regex.is_match(text) {
        errors.add(
            at,
            "pattern",
            format!(
                "must match the pattern `{source}` (it is `{}`)",
                shorten(text)
            ),
        );
    }
}

/// The schema of `pattern`: anchored like the check.
pub fn pattern_schema(schema: &mut Value, source: &str) {
    set(schema, "pattern", json!(format!("^(?:{source})$")));
}

/// A string format: its rule name, its JSON Schema `format`, its check and
/// what a value that fails it must be.
struct Format {
    rule: &'static str,
    schema: &'static str,
    check: fn(&str) -> bool,
    must: &'static str,
}

/// The string formats.
const FORMATS: &[Format] = &[
    Format {
        rule: "email",
        schema: "email",
        check: is_email,
        must: "must be an email address",
    },
    Format {
        rule: "uri",
        schema: "uri",
        check: is_uri,
        must: "must be an absolute URI (`scheme:...`)",
    },
    Format {
        rule: "uuid",
        schema: "uuid",
        check: is_uuid,
        must: "must be a UUID",
    },
    Format {
        rule: "date_time",
        schema: "date-time",
        check: is_date_time,
        must: "must be an RFC 3339 date and time (`2026-11-30T12:00:00Z`)",
    },
];

/// An addr-spec (`local@domain`), not a display form (`Ada <ada@x.org>`),
/// as JSON Schema's `email` format means.
const EMAIL: email_address::Options = email_address::Options {
    minimum_sub_domains: 0,
    allow_domain_literal: true,
    allow_display_text: false,
    allow_long_local_parts: false,
};

fn is_email(s: &str) -> bool {
    // The common address is recognised here in a few dozen instructions;
    // email_address (about 1,700 for a short address) decides the rest.
    simple_email(s) || email_address::EmailAddress::parse_with_options(s, EMAIL).is_ok()
}

/// Whether `s` is the common address: a dot-atom local part of ASCII
/// `atext`, `@`, a domain of ASCII letter, digit and hyphen labels (each
/// starting and ending with a letter or digit), within the lengths of RFC
/// 5321. Every such address is one email_address accepts (tested); an
/// address outside this shape is for email_address to judge.
fn simple_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    let atext = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~".contains(&b);
    let dot_atom = !local.is_empty()
        && local.len() <= 64
        && local
            .split('.')
            .all(|atom| !atom.is_empty() && atom.bytes().all(atext));
    let label = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b.len() <= 63
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'-')
    };
    dot_atom && !domain.is_empty() && domain.len() <= 254 && domain.split('.').all(label)
}

fn is_uri(s: &str) -> bool {
    fluent_uri::Uri::parse(s).is_ok()
}

fn is_uuid(s: &str) -> bool {
    // The hyphenated form only, as JSON Schema's `uuid` format.
    s.len() == 36 && uuid::Uuid::try_parse(s).is_ok()
}

fn is_date_time(s: &str) -> bool {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).is_ok()
}

/// `email`, `uri`, `uuid`, `date_time`.
pub fn format<T: Text>(value: &T, rule: &'static str, at: &Pointer, errors: &mut Violations) {
    let Some(text) = value.text() else { return };
    if let Some(format) = FORMATS.iter().find(|f| f.rule == rule) {
        if !(format.check)(text) {
            errors.add(
                at,
                format.rule,
                format!("{} (it is `{}`)", format.must, shorten(text)),
            );
        }
    }
}

/// The schema of a format rule.
pub fn format_schema(schema: &mut Value, rule: &str) {
    if let Some(format) = FORMATS.iter().find(|f| f.rule == rule) {
        set(schema, "format", json!(format.schema));
    }
}

/// What `each(...)` walks: the items of a list.
#[diagnostic::on_unimplemented(
    message = "`each` does not apply to `{Self}`",
    note = "`each(...)` applies rules to every item of a `Vec` (in an `Option`, when present)"
)]
pub trait Items {
    /// The item type.
    type Item;
    /// The items; none for an absent optional list.
    fn items(&self) -> &[Self::Item];
}

impl<T> Items for Vec<T> {
    type Item = T;
    fn items(&self) -> &[T] {
        self
    }
}

impl<T: Items> Items for Option<T> {
    type Item = T::Item;
    fn items(&self) -> &[T::Item] {
        self.as_ref().map_or(&[], Items::items)
    }
}

/// `each(...)`: `check` runs on every item, at its index.
pub fn each<T: Items>(
    value: &T,
    at: &mut Pointer,
    errors: &mut Violations,
    check: impl Fn(&T::Item, &mut Pointer, &mut Violations),
) {
    for (i, item) in value.items().iter().enumerate() {
        at.push_index(i);
        check(item, at, errors);
        at.pop();
    }
}

/// The schema of `each(...)`: `apply` on the schema of the items.
pub fn each_schema(schema: &mut Value, apply: impl FnOnce(&mut Value)) {
    let items = match schema.get_mut("anyOf") {
        Some(Value::Array(any)) => any.first_mut().and_then(|s| s.get_mut("items")),
        _ => schema.get_mut("items"),
    };
    if let Some(items) = items {
        apply(items);
    }
}

/// `custom = path::to::check`: a function `fn(&T) -> Result<(), String>`
/// whose error is the detail; the rule is named after the function.
pub fn custom<T: ?Sized>(
    value: &T,
    check: impl Fn(&T) -> Result<(), String>,
    rule: &'static str,
    at: &Pointer,
    errors: &mut Violations,
) {
    if let Err(detail) = check(value) {
        errors.add(at, rule, detail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast check never accepts what email_address refuses: random
    /// strings over the characters that matter, and one-byte changes of
    /// valid addresses.
    #[test]
    fn simple_email_is_a_subset_of_email_address() {
        let alphabet: Vec<char> = "aZ09.@-+_!#[]\" é~".chars().collect();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut accepted = 0;
        let mut check = |s: &str| {
            if simple_email(s) {
                accepted += 1;
                assert!(
                    email_address::EmailAddress::parse_with_options(s, EMAIL).is_ok(),
                    "{s:?}"
                );
            }
        };
        for _ in 0..200_000 {
            let len = (next() % 24) as usize;
            let s: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            check(&s);
        }
        for base in ["ada@example.com", "a.b+c@x-y.z0", "x@y"] {
            for i in 0..base.len() {
                for c in alphabet.iter() {
                    let mut s = base.to_owned();
                    if s.is_char_boundary(i) && s.is_char_boundary(i + 1) {
                        s.replace_range(i..i + 1, &c.to_string());
                        check(&s);
                    }
                }
            }
        }
        assert!(
            accepted > 50,
            "only {accepted} accepted: the test does not test"
        );
    }

    #[test]
    fn formats() {
        for (rule, good, bad) in [
            ("email", "ada@example.com", "ada.example.com"),
            ("email", "\"quoted\"@example.com", "Ada <ada@example.com>"),
            ("email", "ada@[127.0.0.1]", "ada@-example.com"),
            ("uri", "https://example.com/a?b#c", "not a uri"),
            (
                "uuid",
                "67e55044-10b1-426f-9247-bb680e5fe0c8",
                "67e5504410b1426f9247bb680e5fe0c8",
            ),
            ("date_time", "2026-11-30T12:00:00Z", "2026-11-30 12:00"),
        ] {
            let check = FORMATS
                .iter()
                .find(|f| f.rule == rule)
                .expect("a format")
                .check;
            assert!(check(good), "{rule}: {good}");
            assert!(!check(bad), "{rule}: {bad}");
        }
    }
}
