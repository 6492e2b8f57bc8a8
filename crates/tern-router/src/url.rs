//! Building paths from patterns: the inverse of matching.

use crate::constraint::{ConstraintId, Constraints};
use crate::error::UrlError;

/// One segment of a route, as URL building needs it.
#[derive(Debug, Clone)]
pub(crate) enum UrlPart {
    Static(Box<str>),
    /// A parameter, with its constraint's name and id when it has one.
    Param(Box<str>, Option<(Box<str>, ConstraintId)>),
    Glob(Box<str>),
    /// Text and parameters in one segment.
    Mixed(Box<[UrlPiece]>),
}

/// A piece of a [`UrlPart::Mixed`].
#[derive(Debug, Clone)]
pub(crate) enum UrlPiece {
    Text(Box<str>),
    Param(Box<str>, Option<(Box<str>, ConstraintId)>),
}

pub(crate) fn build(
    pattern: &str,
    shape: &[UrlPart],
    params: &[(&str, &str)],
    constraints: &Constraints,
) -> Result<String, UrlError> {
    let mut used = vec![false; params.len()];
    let mut take =
        |name: &str| -> Result<&str, UrlError> {
            let i = params.iter().position(|(n, _)| *n == name).ok_or_else(|| {
                UrlError::MissingParam {
                    pattern: pattern.to_owned(),
                    name: name.to_owned(),
                }
            })?;
            used[i] = true;
            let value = params[i].1;
            if value.is_empty() {
                return Err(invalid(pattern, name, value));
            }
            Ok(value)
        };
    let mut out = String::with_capacity(pattern.len() + 16);
    for part in shape {
        out.push('/');
        match part {
            UrlPart::Static(text) => encode_segment(text, &mut out),
            UrlPart::Param(name, constraint) => {
                let value = take(name)?;
                if let Some((_, id)) = constraint {
                    if !constraints.accepts(*id, value) {
                        return Err(invalid(pattern, name, value));
                    }
                }
                encode_segment(value, &mut out);
            }
            UrlPart::Mixed(pieces) => {
                // The segment as matching sees it (decoded), split again:
                // a value holding the text after it would split elsewhere.
                let mut segment = String::new();
                let mut values = Vec::new();
                let mut parts = Vec::with_capacity(pieces.len());
                for piece in pieces.iter() {
                    match piece {
                        UrlPiece::Text(text) => {
                            segment.push_str(text);
                            parts.push(crate::tree::Part::Text(text.clone()));
                        }
                        UrlPiece::Param(name, constraint) => {
                            let value = take(name)?;
                            segment.push_str(value);
                            values.push((name, value));
                            parts.push(crate::tree::Part::Param(constraint.as_ref().map(|c| c.1)));
                        }
                    }
                }
                let template = crate::tree::Template {
                    parts: parts.into_boxed_slice(),
                };
                let split = template.split(&segment, constraints);
                for (i, (name, value)) in values.iter().enumerate() {
                    let back = split
                        .as_ref()
                        .and_then(|ranges| ranges.iter().nth(i).map(|&(s, e)| &segment[s..e]));
                    if back != Some(*value) {
                        return Err(invalid(pattern, name, value));
                    }
                }
                encode_segment(&segment, &mut out);
            }
            UrlPart::Glob(name) => {
                let value = take(name)?;
                if value.starts_with('/') {
                    return Err(invalid(pattern, name, value));
                }
                for (i, segment) in value.split('/').enumerate() {
                    if i > 0 {
                        out.push('/');
                    }
                    encode_segment(segment, &mut out);
                }
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    if let Some(i) = used.iter().position(|u| !u) {
        return Err(UrlError::UnknownParam {
            pattern: pattern.to_owned(),
            name: params[i].0.to_owned(),
        });
    }
    Ok(out)
}

fn invalid(pattern: &str, name: &str, value: &str) -> UrlError {
    UrlError::InvalidValue {
        pattern: pattern.to_owned(),
        name: name.to_owned(),
        value: value.to_owned(),
    }
}

/// Percent-encodes one path segment: RFC 3986 `pchar`s stay, everything
/// else (`/`, `%`, `?`, `#`, spaces, non-ASCII) is escaped, and so are the
/// dots of a `.` or `..` segment, which clients would otherwise normalize
/// away.
pub(crate) fn encode_segment(segment: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let dots_only = segment == "." || segment == "..";
    for b in segment.bytes() {
        let keep = match b {
            b'.' => !dots_only,
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => true,
            b'-' | b'_' | b'~' | b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b','
            | b';' | b'=' | b':' | b'@' => true,
            _ => false,
        };
        if keep {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        }
    }
}
