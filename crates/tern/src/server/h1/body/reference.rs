//! The naive reference of the body decoder: the whole body at once, read
//! front to back with an index, no state kept between reads, no limits
//! checked ahead of the bytes they bound. `Decoder` (fed in pieces) must
//! agree with it on every input: data, trailers, error and length.
//!
//! Shared, as source, by the unit tests (`body/tests.rs`) and the `h1_body`
//! fuzz target (`#[path]`), so it uses only std and the caller's `Case` and
//! `Outcome` (in scope as `super::{Case, Outcome}`).

use super::{Case, Outcome};

const MAX_DIGITS: usize = 16;
const MAX_EXTENSIONS: usize = 16 * 1024;

/// Decodes `input`, a body framed as `case` says, whose end is the
/// connection's end.
pub(crate) fn decode(input: &[u8], case: &Case) -> Outcome {
    let mut out = Outcome::default();
    let result = match case.length {
        Some(n) => length(input, n, case, &mut out),
        None => chunked(input, case, &mut out),
    };
    match result {
        Ok(len) => out.consumed = Some(len),
        Err((name, status)) => {
            out.error = Some(name);
            out.status = Some(status);
            out.trailers.clear();
        }
    }
    out
}

type Fail = (&'static str, u16);

const TOO_LARGE: Fail = ("too-large", 413);
const CHUNK_SIZE: Fail = ("chunk-size", 400);
const CHUNK_EXTENSION: Fail = ("chunk-extension", 400);
const EXTENSIONS_TOO_LONG: Fail = ("extensions-too-long", 400);
const CHUNK_END: Fail = ("chunk-end", 400);
const LINE_ENDING: Fail = ("line-ending", 400);
const TRAILER: Fail = ("trailer", 400);
const TRAILERS_TOO_LARGE: Fail = ("trailers-too-large", 431);
const TOO_MANY_TRAILERS: Fail = ("too-many-trailers", 431);
const INCOMPLETE: Fail = ("incomplete", 400);

fn length(input: &[u8], n: u64, case: &Case, out: &mut Outcome) -> Result<usize, Fail> {
    if n > case.max_body {
        return Err(TOO_LARGE);
    }
    if (input.len() as u64) < n {
        out.data.extend_from_slice(input);
        return Err(INCOMPLETE);
    }
    let n = n as usize;
    out.data.extend_from_slice(&input[..n]);
    Ok(n)
}

fn tchar(b: u8) -> bool {
    matches!(b,
        b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9'
        | b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_'
        | b'`' | b'|' | b'~')
}

fn ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// VCHAR, obs-text, SP, HTAB.
fn vchar(b: u8) -> bool {
    b == b'\t' || b == b' ' || (0x21..=0x7e).contains(&b) || b >= 0x80
}

/// The earliest of the candidate failures, each at the index of the byte
/// that shows it; at the same byte, the first listed (limits are counted
/// before a byte is judged).
fn earliest(candidates: &[Option<(usize, Fail)>]) -> Option<(usize, Fail)> {
    let mut best: Option<(usize, Fail)> = None;
    for &(at, fail) in candidates.iter().flatten() {
        if best.is_none_or(|(b, _)| at < b) {
            best = Some((at, fail));
        }
    }
    best
}

fn chunked(input: &[u8], case: &Case, out: &mut Outcome) -> Result<usize, Fail> {
    let len = input.len();
    let mut at = 0;
    let mut total: u64 = 0;
    let mut extensions = 0usize;
    loop {
        // chunk-size: 1 to 16 hex digits.
        let digits = input[at..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
        if digits > MAX_DIGITS {
            return Err(CHUNK_SIZE);
        }
        let q = at + digits;
        if q == len {
            return Err(INCOMPLETE);
        }
        if digits == 0 {
            return Err(CHUNK_SIZE);
        }
        let text = std::str::from_utf8(&input[at..q]).map_err(|_| CHUNK_SIZE)?;
        let size = u64::from_str_radix(text, 16).map_err(|_| CHUNK_SIZE)?;
        // The rest of the line, up to its first CR or LF.
        let r = q + input[q..]
            .iter()
            .take_while(|&&b| b != b'\r' && b != b'\n')
            .count();
        let region = &input[q..r];
        if !region.is_empty() && !ws(region[0]) && region[0] != b';' {
            // Not an extension's start, and not counted as one.
            return Err(CHUNK_SIZE);
        }
        let over = (extensions + region.len() > MAX_EXTENSIONS)
            .then(|| (q + (MAX_EXTENSIONS - extensions), EXTENSIONS_TOO_LONG));
        let (grammar, complete) = parse_extensions(region);
        let grammar = grammar.map(|(i, fail)| (q + i, fail));
        let end = if r == len {
            Some((len, INCOMPLETE))
        } else if input[r] == b'\n' {
            Some((r, LINE_ENDING))
        } else if !complete {
            let all_ws = region.iter().all(|&b| ws(b));
            Some((r, if all_ws { CHUNK_SIZE } else { CHUNK_EXTENSION }))
        } else if r + 1 == len {
            Some((len, INCOMPLETE))
        } else if input[r + 1] != b'\n' {
            Some((r + 1, LINE_ENDING))
        } else {
            None
        };
        if let Some((_, fail)) = earliest(&[over, grammar, end]) {
            return Err(fail);
        }
        extensions += region.len();
        at = r + 2;
        if size == 0 {
            break;
        }
        if total.checked_add(size).is_none_or(|t| t > case.max_body) {
            return Err(TOO_LARGE);
        }
        total += size;
        let available = (len - at) as u64;
        if available < size {
            out.data.extend_from_slice(&input[at..]);
            return Err(INCOMPLETE);
        }
        let end = at + size as usize;
        out.data.extend_from_slice(&input[at..end]);
        at = end;
        match input.get(at..at + 2) {
            Some(b"\r\n") => at += 2,
            _ if input.get(at).is_some_and(|&b| b != b'\r') => return Err(CHUNK_END),
            _ if input.get(at + 1).is_some() => return Err(CHUNK_END),
            _ => return Err(INCOMPLETE),
        }
    }
    trailer_section(input, at, case, out)
}

/// RFC 9112 §7.1.1 over a size line's bytes after the digits (no CR or
/// LF in them): `*( BWS ";" BWS name [ BWS "=" BWS ( token /
/// quoted-string ) ] )`. Returns the first byte that cannot continue it
/// (with its error) and whether the bytes are a whole `chunk-ext`.
fn parse_extensions(s: &[u8]) -> (Option<(usize, Fail)>, bool) {
    let bad = |i: usize| (Some((i, CHUNK_EXTENSION)), false);
    let skip_ws = |mut i: usize| {
        while i < s.len() && ws(s[i]) {
            i += 1;
        }
        i
    };
    if s.is_empty() {
        return (None, true);
    }
    let mut i = skip_ws(0);
    if i == s.len() {
        return (None, false);
    }
    if s[i] != b';' {
        return (Some((i, CHUNK_SIZE)), false);
    }
    loop {
        i = skip_ws(i + 1);
        let name = i;
        while i < s.len() && tchar(s[i]) {
            i += 1;
        }
        if i == s.len() {
            return (None, i > name);
        }
        if i == name {
            return bad(i);
        }
        let after_name = i;
        i = skip_ws(i);
        if i == s.len() {
            return (None, i == after_name);
        }
        if s[i] == b';' {
            continue;
        }
        if s[i] != b'=' {
            return bad(i);
        }
        i = skip_ws(i + 1);
        if i == s.len() {
            return (None, false);
        }
        if s[i] == b'"' {
            i += 1;
            loop {
                match s.get(i) {
                    None => return (None, false),
                    Some(b'"') => break,
                    Some(b'\\') => {
                        i += 1;
                        match s.get(i) {
                            None => return (None, false),
                            Some(&b) if vchar(b) => {}
                            Some(_) => return bad(i),
                        }
                    }
                    Some(&b) if b != b'"' && b != b'\\' && vchar(b) => {}
                    Some(_) => return bad(i),
                }
                i += 1;
            }
            i += 1;
        } else {
            let value = i;
            while i < s.len() && tchar(s[i]) {
                i += 1;
            }
            if i == value {
                return bad(i);
            }
        }
        let after_value = i;
        i = skip_ws(i);
        if i == s.len() {
            return (None, i == after_value);
        }
        if s[i] != b';' {
            return bad(i);
        }
    }
}

/// The trailer section from `start` to its empty line: line by line, each
/// line's first grammar error weighed against the section's byte limit
/// and the field count.
fn trailer_section(
    input: &[u8],
    start: usize,
    case: &Case,
    out: &mut Outcome,
) -> Result<usize, Fail> {
    let len = input.len();
    // The first byte past the limit, if the input has it.
    let over = start
        .checked_add(case.max_trailer_bytes)
        .filter(|&i| i < len)
        .map(|i| (i, TRAILERS_TOO_LARGE));
    let mut at = start;
    let mut fields: Vec<(String, Vec<u8>)> = Vec::new();
    loop {
        let (end, line_error) = field_line(input, at);
        let count = (at < len && tchar(input[at]) && fields.len() >= case.max_trailer_fields)
            .then_some((at, TOO_MANY_TRAILERS));
        let line_over = over.filter(|&(i, _)| i < end);
        if let Some((_, fail)) = earliest(&[line_over, count, line_error]) {
            return Err(fail);
        }
        let line = &input[at..end - 2];
        at = end;
        if line.is_empty() {
            break;
        }
        let colon = line.iter().position(|&b| b == b':').ok_or(TRAILER)?;
        let name = String::from_utf8(line[..colon].to_ascii_lowercase()).map_err(|_| TRAILER)?;
        let mut value = &line[colon + 1..];
        while let [b' ' | b'\t', rest @ ..] = value {
            value = rest;
        }
        while let [rest @ .., b' ' | b'\t'] = value {
            value = rest;
        }
        fields.push((name, value.to_vec()));
    }
    out.trailers = fields;
    out.trailers.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(at)
}

/// The line at `at`: the index after its CRLF, and its first error (the
/// input's end is [`INCOMPLETE`]). Either the empty line, or a field line
/// `name ":" value` (name: tchars, value: VCHAR, obs-text, SP, HTAB).
fn field_line(input: &[u8], at: usize) -> (usize, Option<(usize, Fail)>) {
    let len = input.len();
    let end_of = |cr: usize| -> (usize, Option<(usize, Fail)>) {
        match input.get(cr + 1) {
            None => (len, Some((len, INCOMPLETE))),
            Some(b'\n') => (cr + 2, None),
            Some(_) => (len, Some((cr + 1, LINE_ENDING))),
        }
    };
    let fail = |i: usize, f: Fail| (len, Some((i, f)));
    match input.get(at) {
        None => return fail(len, INCOMPLETE),
        Some(b'\r') => return end_of(at),
        Some(b'\n') => return fail(at, LINE_ENDING),
        Some(&b) if !tchar(b) => return fail(at, TRAILER),
        Some(_) => {}
    }
    let mut i = at;
    while i < len && tchar(input[i]) {
        i += 1;
    }
    match input.get(i) {
        None => return fail(len, INCOMPLETE),
        Some(b':') => {}
        Some(b'\n') => return fail(i, LINE_ENDING),
        Some(_) => return fail(i, TRAILER),
    }
    i += 1;
    while i < len && input[i] != b'\r' && vchar(input[i]) {
        i += 1;
    }
    match input.get(i) {
        None => fail(len, INCOMPLETE),
        Some(b'\r') => end_of(i),
        Some(b'\n') => fail(i, LINE_ENDING),
        Some(_) => fail(i, TRAILER),
    }
}
