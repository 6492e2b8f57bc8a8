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
    /// Bounds on the length that cost nothing to find (at least, at
    /// most), or `None` for an absent optional value: within the rule's
    /// bounds, the length need not be counted.
    fn length_bounds(&self) -> Option<(usize, usize)> {
        self.length().map(|n| (n, n))
    }
}

impl Length for String {
    const UNIT: &'static str = "characters";
    const KEYWORDS: (&'static str, &'static str) = ("minLength", "maxLength");
    fn length(&self) -> Option<usize> {
        Some(self.chars().count())
    }
    fn length_bounds(&self) -> Option<(usize, usize)> {
        // A character is 1 to 4 bytes of UTF-8.
        Some((self.len().div_ceil(4), self.len()))
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
    fn length_bounds(&self) -> Option<(usize, usize)> {
        self.as_ref().and_then(Length::length_bounds)
    }
}

/// `length(min = .., max = ..)`.
pub fn length<T: Length>(
    value: &T,
    min: Option<usize>,
    max: Option<usize>,
    at: &Pointer<'_>,
    errors: &mut Violations,
) {
    let Some((at_least, at_most)) = value.length_bounds() else {
        return;
    };
    if min.is_none_or(|min| at_least >= min) && max.is_none_or(|max| at_most <= max) {
        return;
    }
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
    at: &Pointer<'_>,
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

/// A compiled `pattern`: a full DFA when the pattern's is small (a
/// megabyte at most), the regex crate otherwise. Either way the whole
/// string must match.
#[derive(Debug)]
pub struct Pattern(Matcher);

#[derive(Debug)]
enum Matcher {
    Dfa(Box<regex_automata::dfa::dense::DFA<Vec<u32>>>),
    Regex(Regex),
}

impl Pattern {
    /// Compiles `source`, anchored at both ends.
    pub fn new(source: &str) -> Pattern {
        use regex_automata::dfa::{dense, StartKind};
        const LIMIT: usize = 1 << 20;
        let anchored = format!("^(?:{source})$");
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .start_kind(StartKind::Anchored)
                    .dfa_size_limit(Some(LIMIT))
                    .determinize_size_limit(Some(LIMIT)),
            )
            .build(&anchored);
        match dfa {
            Ok(dfa) => Pattern(Matcher::Dfa(Box::new(dfa))),
            // The derive checked the pattern when the crate was compiled.
            Err(_) => Pattern(Matcher::Regex(Regex::new(&anchored).unwrap_or_else(|_| {
                Regex::new("$^").unwrap_or_else(|_| unreachable!("a constant pattern"))
            }))),
        }
    }

    /// Whether the whole of `text` matches.
    pub fn is_match(&self, text: &str) -> bool {
        use regex_automata::{dfa::Automaton, Anchored, Input};
        match &self.0 {
            Matcher::Dfa(dfa) => {
                let input = Input::new(text).anchored(Anchored::Yes).earliest(true);
                // No quit bytes are configured, so the search cannot fail.
                matches!(dfa.try_search_fwd(&input), Ok(Some(_)))
            }
            Matcher::Regex(regex) => regex.is_match(text),
        }
    }
}

/// `pattern = "..."`: the whole string must match (the pattern is
/// anchored, as JSON Schema's is not: write `.*` to search).
pub fn pattern<T: Text>(
    value: &T,
    compiled: &'static OnceLock<Pattern>,
    source: &'static str,
    at: &Pointer<'_>,
    errors: &mut Violations,
) {
    let Some(text) = value.text() else { return };
    if !compiled.get_or_init(|| Pattern::new(source)).is_match(text) {
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
/// what a value that fails it must be. The derive names one of the four
/// constants below, so a check costs no lookup.
#[derive(Debug)]
pub struct Format {
    rule: &'static str,
    schema: &'static str,
    check: fn(&str) -> bool,
    must: &'static str,
}

/// `email`.
pub const EMAIL: Format = Format {
    rule: "email",
    schema: "email",
    check: is_email,
    must: "must be an email address",
};

/// `uri`.
pub const URI: Format = Format {
    rule: "uri",
    schema: "uri",
    check: is_uri,
    must: "must be an absolute URI (`scheme:...`)",
};

/// `uuid`.
pub const UUID: Format = Format {
    rule: "uuid",
    schema: "uuid",
    check: is_uuid,
    must: "must be a UUID",
};

/// `date_time`.
pub const DATE_TIME: Format = Format {
    rule: "date_time",
    schema: "date-time",
    check: is_date_time,
    must: "must be an RFC 3339 date and time (`2026-11-30T12:00:00Z`)",
};

/// An addr-spec (`local@domain`), not a display form (`Ada <ada@x.org>`),
/// as JSON Schema's `email` format means.
const ADDR_SPEC: email_address::Options = email_address::Options {
    minimum_sub_domains: 0,
    allow_domain_literal: true,
    allow_display_text: false,
    allow_long_local_parts: false,
};

fn is_email(s: &str) -> bool {
    // The common address is recognised here in a few dozen instructions;
    // email_address (about 1,700 for a short address) decides the rest.
    simple_email(s) || email_address::EmailAddress::parse_with_options(s, ADDR_SPEC).is_ok()
}

/// Whether `s` is the common address: a dot-atom local part of ASCII
/// `atext`, `@`, a domain of ASCII letter, digit and hyphen labels (each
/// starting and ending with a letter or digit), within the lengths of RFC
/// 5321, read in one pass. Every such address is one email_address
/// accepts (tested); an address outside this shape is for email_address
/// to judge.
fn simple_email(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.len() > 64 + 1 + 254 {
        return false;
    }
    // The local part: atoms of `atext` between single dots, up to `@`.
    let mut rest = bytes.iter();
    let (mut local, mut atom) = (0usize, 0usize);
    loop {
        let Some(&b) = rest.next() else {
            return false;
        };
        if b == b'@' {
            break;
        }
        local += 1;
        if b == b'.' {
            if atom == 0 {
                return false;
            }
            atom = 0;
        } else if CLASS[b as usize] & ATEXT != 0 {
            atom += 1;
        } else {
            return false;
        }
    }
    if atom == 0 || local > 64 {
        return false;
    }
    // The domain: labels of letters, digits and inner hyphens.
    let domain = rest.as_slice();
    if domain.is_empty() || domain.len() > 254 {
        return false;
    }
    let (mut label, mut last) = (0usize, b'.');
    for &b in domain {
        if b == b'.' {
            if label == 0 || last == b'-' {
                return false;
            }
            label = 0;
        } else {
            let class = CLASS[b as usize];
            if class & ALNUM == 0 && (b != b'-' || label == 0) {
                return false;
            }
            label += 1;
            if label > 63 {
                return false;
            }
        }
        last = b;
    }
    label > 0 && last != b'-'
}

/// A byte of RFC 5322's `atext`: letters, digits and
/// ``!#$%&'*+-/=?^_`{|}~``.
const ATEXT: u8 = 1;
/// An ASCII letter or digit.
const ALNUM: u8 = 2;

/// Each byte's classes, for the email fast check.
const CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        if (b as u8).is_ascii_alphanumeric() {
            table[b] = ATEXT | ALNUM;
        }
        b += 1;
    }
    let extra = b"!#$%&'*+-/=?^_`{|}~";
    let mut i = 0;
    while i < extra.len() {
        table[extra[i] as usize] |= ATEXT;
        i += 1;
    }
    table
};

fn is_uri(s: &str) -> bool {
    fluent_uri::Uri::parse(s).is_ok()
}

fn is_uuid(s: &str) -> bool {
    // The hyphenated form only, as JSON Schema's `uuid` format.
    s.len() == 36 && uuid::Uuid::try_parse(s).is_ok()
}

fn is_date_time(s: &str) -> bool {
    // The common form is recognised here; time decides the rest.
    simple_date_time(s)
        || time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).is_ok()
}

/// Whether `s` is the common RFC 3339 form, read in one pass:
/// `YYYY-MM-DDTHH:MM:SS`, up to nine fraction digits, then `Z` or an
/// offset `+HH:MM`/`-HH:MM` (not `-00:00`), every field in its range (the
/// day within its month, leap years counted; no leap second). Every such
/// string is one time accepts (tested); anything else is for time to judge.
fn simple_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 20 {
        return false;
    }
    let digits = |at: usize, n: usize| -> Option<u32> {
        let mut v = 0u32;
        for &c in b.get(at..at + n)? {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + u32::from(c - b'0');
        }
        Some(v)
    };
    let fields = (|| {
        if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
            return None;
        }
        Some((
            digits(0, 4)?,
            digits(5, 2)?,
            digits(8, 2)?,
            digits(11, 2)?,
            digits(14, 2)?,
            digits(17, 2)?,
        ))
    })();
    let Some((year, month, day, hour, minute, second)) = fields else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days || hour > 23 || minute > 59 || second > 59 {
        return false;
    }
    let mut i = 19;
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start || i - start > 9 {
            return false;
        }
    }
    match &b[i..] {
        [b'Z'] => true,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => match (digits(i + 1, 2), digits(i + 4, 2)) {
            (Some(h), Some(m)) => h <= 23 && m <= 59 && !(*sign == b'-' && h == 0 && m == 0),
            _ => false,
        },
        _ => false,
    }
}

/// `email`, `uri`, `uuid`, `date_time`.
pub fn format<T: Text>(
    value: &T,
    format: &'static Format,
    at: &Pointer<'_>,
    errors: &mut Violations,
) {
    let Some(text) = value.text() else { return };
    if !(format.check)(text) {
        errors.add(
            at,
            format.rule,
            format!("{} (it is `{}`)", format.must, shorten(text)),
        );
    }
}

/// The schema of a format rule.
pub fn format_schema(schema: &mut Value, format: &Format) {
    set(schema, "format", json!(format.schema));
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
    at: &Pointer<'_>,
    errors: &mut Violations,
    check: impl Fn(&T::Item, &Pointer<'_>, &mut Violations),
) {
    for (i, item) in value.items().iter().enumerate() {
        check(item, &at.index(i), errors);
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
    at: &Pointer<'_>,
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
                    email_address::EmailAddress::parse_with_options(s, ADDR_SPEC).is_ok(),
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

    /// The fast check never accepts what time refuses, and accepts the
    /// common forms: random changes of valid date-times.
    #[test]
    fn simple_date_time_is_a_subset_of_time() {
        use time::format_description::well_known::Rfc3339;
        let alphabet: Vec<char> = "0123456789-+:.TZtz 9".chars().collect();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut accepted, mut checked) = (0, 0);
        let mut check = |s: &str| {
            checked += 1;
            if simple_date_time(s) {
                accepted += 1;
                assert!(time::OffsetDateTime::parse(s, &Rfc3339).is_ok(), "{s:?}");
            }
        };
        let bases = [
            "2026-11-30T12:00:00Z",
            "2024-02-29T23:59:59.123456789+05:30",
            "1999-12-31T00:00:00-08:00",
            "2000-02-29T01:02:03.5Z",
            "2100-02-28T10:20:30+00:00",
        ];
        for base in bases {
            assert!(simple_date_time(base), "{base}");
            for i in 0..base.len() {
                for c in alphabet.iter() {
                    let mut s = base.to_owned();
                    s.replace_range(i..i + 1, &c.to_string());
                    check(&s);
                }
            }
        }
        for _ in 0..200_000 {
            let base = bases[(next() % bases.len() as u64) as usize];
            let mut s = base.to_owned();
            for _ in 0..1 + next() % 3 {
                let i = (next() % s.len() as u64) as usize;
                let c = alphabet[(next() % alphabet.len() as u64) as usize];
                s.replace_range(i..i + 1, &c.to_string());
            }
            check(&s);
        }
        // Every day of four years, at both ends of the day.
        for year in [1900, 2000, 2023, 2024] {
            for month in 1..=12 {
                for day in 1..=31 {
                    check(&format!("{year:04}-{month:02}-{day:02}T00:00:00Z"));
                    check(&format!("{year:04}-{month:02}-{day:02}T23:59:59.9-23:59"));
                }
            }
        }
        assert!(accepted > 1_000, "only {accepted} of {checked} accepted");
    }

    /// Both engines agree with the regex crate on whole-string matches.
    #[test]
    fn patterns_match_the_whole_string() {
        for (source, good, bad) in [
            ("[A-Z]{3}-[0-9]{4}", "TEA-0042", "TEA-00421"),
            ("a|ab", "ab", "abc"),
            ("", "", "x"),
            ("\\w+", "été", "a b"),
            ("\\bx\\b", "x", "xx"),
            ("(?i)tea", "TeA", "teas"),
        ] {
            let p = Pattern::new(source);
            assert!(p.is_match(good), "{source}: {good}");
            assert!(!p.is_match(bad), "{source}: {bad}");
        }
        assert!(matches!(Pattern::new("[A-Z]{3}").0, Matcher::Dfa(_)));
        // A Unicode word boundary needs the regex crate.
        assert!(matches!(Pattern::new("\\bx\\b").0, Matcher::Regex(_)));
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
            let check = [&EMAIL, &URI, &UUID, &DATE_TIME]
                .into_iter()
                .find(|f| f.rule == rule)
                .expect("a format")
                .check;
            assert!(check(good), "{rule}: {good}");
            assert!(!check(bad), "{rule}: {bad}");
        }
    }
}
