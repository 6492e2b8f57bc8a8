//! Percent-decoding of path segments.
//!
//! Paths are matched segment by segment on their decoded text, so a segment
//! is split on `/` first and decoded second: `%2F` yields a `/` inside one
//! segment and never creates a new one.

use std::borrow::Cow;

/// A `%` not followed by two hex digits, or decoded bytes that are not UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Malformed;

/// Decodes `%XX` escapes in one path segment.
///
/// Borrows when the segment has no `%`, so a clean segment costs nothing;
/// otherwise allocates exactly one `String`. `+` is left alone: it means a
/// space only in query strings, never in paths.
pub(crate) fn decode(segment: &str) -> Result<Cow<'_, str>, Malformed> {
    if !segment.as_bytes().contains(&b'%') {
        return Ok(Cow::Borrowed(segment));
    }
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = bytes.get(i + 1).copied().and_then(hex).ok_or(Malformed)?;
            let lo = bytes.get(i + 2).copied().and_then(hex).ok_or(Malformed)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map(Cow::Owned)
        .map_err(|_| Malformed)
}

fn hex(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn decodes_valid_escapes() {
        let cases = [
            ("", ""),
            ("plain", "plain"),
            ("caf%C3%A9", "café"),
            ("caf%c3%a9", "café"),
            ("a%20b", "a b"),
            ("a%2Fb", "a/b"),
            ("%25", "%"),
            ("%2525", "%25"),
            ("a+b", "a+b"),
            ("%41%42%43", "ABC"),
            ("é", "é"),
        ];
        for (input, expected) in cases {
            assert_eq!(decode(input).unwrap(), expected, "decoding {input:?}");
        }
    }

    #[test]
    fn borrows_without_escapes() {
        assert!(matches!(decode("users").unwrap(), Cow::Borrowed("users")));
        assert!(matches!(decode("a%20b").unwrap(), Cow::Owned(_)));
    }

    #[test]
    fn rejects_malformed_escapes() {
        let cases = [
            "%",
            "%4",
            "a%",
            "%zz",
            "%4g",
            "%g4",
            "%%41",
            "%C3",
            "%FF",
            "%C3%28",
            "%ED%A0%80",
        ];
        for input in cases {
            assert_eq!(decode(input), Err(Malformed), "decoding {input:?}");
        }
    }
}
