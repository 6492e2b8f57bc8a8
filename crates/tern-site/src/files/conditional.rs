//! Conditional and range requests (RFC 9110, sections 13 and 14) and the
//! choice of a precompressed variant (section 12.5.3).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{header, HeaderMap, Method};
use tern::accept::{coding_quality, Quality};

/// What the preconditions decide (RFC 9110, 13.2.2).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Precondition {
    /// Serve the file.
    Serve,
    /// `304 Not Modified`.
    NotModified,
    /// `412 Precondition Failed`.
    Failed,
}

/// Whether one entity tag in `list` (a header's value: `*`, or tags
/// separated by commas) matches `etag`: strongly (`If-Match`, `If-Range`)
/// or weakly (`If-None-Match`, where `W/` is ignored).
fn matches(list: &str, etag: &str, weak: bool) -> bool {
    let list = list.trim();
    if list == "*" {
        return true;
    }
    list.split(',').map(str::trim).any(|tag| {
        let (is_weak, tag) = match tag.strip_prefix("W/") {
            Some(t) => (true, t),
            None => (false, tag),
        };
        tag == etag && (weak || !is_weak)
    })
}

/// A header's value as text, when it is there and is text.
fn text(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn date(headers: &HeaderMap, name: header::HeaderName) -> Option<SystemTime> {
    httpdate::parse_http_date(text(headers, name)?).ok()
}

/// `modified` rounded down to the second, as HTTP dates carry it.
pub(crate) fn to_second(modified: SystemTime) -> SystemTime {
    let secs = modified
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    UNIX_EPOCH + Duration::from_secs(secs)
}

/// The preconditions of a request for a representation with `etag` and
/// `modified` (already to the second), in RFC 9110's order.
pub(crate) fn evaluate(
    method: &Method,
    headers: &HeaderMap,
    etag: &str,
    modified: Option<SystemTime>,
) -> Precondition {
    if let Some(list) = text(headers, header::IF_MATCH) {
        if !matches(list, etag, false) {
            return Precondition::Failed;
        }
    } else if let (Some(since), Some(modified)) =
        (date(headers, header::IF_UNMODIFIED_SINCE), modified)
    {
        if modified > since {
            return Precondition::Failed;
        }
    }
    let get = method == Method::GET || method == Method::HEAD;
    if let Some(list) = text(headers, header::IF_NONE_MATCH) {
        if matches(list, etag, true) {
            return if get {
                Precondition::NotModified
            } else {
                Precondition::Failed
            };
        }
    } else if get {
        if let (Some(since), Some(modified)) = (date(headers, header::IF_MODIFIED_SINCE), modified)
        {
            if modified <= since {
                return Precondition::NotModified;
            }
        }
    }
    Precondition::Serve
}

/// What a `Range` header asks of a representation of `len` bytes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Range {
    /// The whole representation (no `Range`, one Tern ignores, or an
    /// `If-Range` that no longer holds).
    Full,
    /// Bytes `start..end` (end exclusive): `206`.
    Part { start: u64, end: u64 },
    /// Nothing of it can be served: `416`.
    Unsatisfiable,
}

/// The range to serve (RFC 9110, 14.2). One range only: a request for
/// several gets the whole representation (allowed by 14.2; it spares the
/// server multipart answers and overlapping-range floods). A `Range` that
/// does not parse is ignored, as 14.2 says.
pub(crate) fn range(
    headers: &HeaderMap,
    etag: &str,
    modified: Option<SystemTime>,
    len: u64,
) -> Range {
    let Some(value) = text(headers, header::RANGE) else {
        return Range::Full;
    };
    if let Some(condition) = text(headers, header::IF_RANGE) {
        let condition = condition.trim();
        let holds = if condition.starts_with('"') || condition.starts_with("W/") {
            // A strong comparison: a weak tag never matches.
            !condition.starts_with("W/") && condition == etag
        } else {
            // A date only validates when it is exactly the last
            // modification (and so strong enough, 13.1.3).
            httpdate::parse_http_date(condition).ok() == modified && modified.is_some()
        };
        if !holds {
            return Range::Full;
        }
    }
    let Some(spec) = value.trim().strip_prefix("bytes=") else {
        return Range::Full;
    };
    if spec.contains(',') {
        return Range::Full;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Range::Full;
    };
    let number = |s: &str| -> Option<u64> {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Longer than u64: as large as can be.
        Some(s.parse().unwrap_or(u64::MAX))
    };
    let (first, last) = (first.trim(), last.trim());
    if first.is_empty() {
        // `-N`: the last N bytes.
        return match number(last) {
            None => Range::Full,
            Some(0) => Range::Unsatisfiable,
            Some(_) if len == 0 => Range::Unsatisfiable,
            Some(n) => Range::Part {
                start: len.saturating_sub(n),
                end: len,
            },
        };
    }
    let Some(start) = number(first) else {
        return Range::Full;
    };
    let end = if last.is_empty() {
        len
    } else {
        match number(last) {
            Some(last) if last >= start => last.saturating_add(1).min(len),
            _ => return Range::Full,
        }
    };
    if start >= len {
        return Range::Unsatisfiable;
    }
    Range::Part { start, end }
}

/// A content coding a precompressed sibling can have, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    Brotli,
    Zstd,
    Gzip,
}

impl Coding {
    pub(crate) const ALL: [Coding; 3] = [Coding::Brotli, Coding::Zstd, Coding::Gzip];

    /// The sibling's suffix.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Coding::Brotli => ".br",
            Coding::Zstd => ".zst",
            Coding::Gzip => ".gz",
        }
    }

    /// The `Content-Encoding` token.
    pub(crate) fn token(self) -> &'static str {
        match self {
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
            Coding::Gzip => "gzip",
        }
    }
}

/// The best coding among `available` that the request accepts, or `None`
/// (identity); `Accept-Encoding` read by [`tern::accept`], as every
/// Tern crate reads it.
pub(crate) fn choose(headers: &HeaderMap, available: &[Coding]) -> Option<Coding> {
    let accept = text(headers, header::ACCEPT_ENCODING)?;
    let mut best: Option<(Quality, Coding)> = None;
    for &c in available {
        let q = coding_quality(accept, c.token());
        if q.is_acceptable() && best.is_none_or(|(bq, _)| q > bq) {
            best = Some((q, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn ranges() {
        let len = 1000;
        let tag = "\"abc\"";
        let r = |v: &str| range(&headers(&[("range", v)]), tag, None, len);
        assert_eq!(r("bytes=0-99"), Range::Part { start: 0, end: 100 });
        assert_eq!(
            r("bytes=900-"),
            Range::Part {
                start: 900,
                end: 1000
            }
        );
        assert_eq!(
            r("bytes=-100"),
            Range::Part {
                start: 900,
                end: 1000
            }
        );
        assert_eq!(
            r("bytes=-5000"),
            Range::Part {
                start: 0,
                end: 1000
            }
        );
        assert_eq!(
            r("bytes=990-5000"),
            Range::Part {
                start: 990,
                end: 1000
            }
        );
        assert_eq!(
            r("bytes=999-999"),
            Range::Part {
                start: 999,
                end: 1000
            }
        );
        assert_eq!(r("bytes=1000-"), Range::Unsatisfiable);
        assert_eq!(r("bytes=-0"), Range::Unsatisfiable);
        assert_eq!(r("bytes=99999999999999999999999-"), Range::Unsatisfiable);
        assert_eq!(r("bytes=5-1"), Range::Full);
        assert_eq!(r("bytes=0-1,5-6"), Range::Full);
        assert_eq!(r("items=0-1"), Range::Full);
        assert_eq!(r("bytes=a-b"), Range::Full);
        assert_eq!(r("bytes=-"), Range::Full);
        assert_eq!(r("bytes=+1-2"), Range::Full);
        assert_eq!(r("bytes=1"), Range::Full);
        let when = to_second(SystemTime::now());
        let with_if_range = |cond: &str| {
            range(
                &headers(&[("range", "bytes=0-0"), ("if-range", cond)]),
                tag,
                Some(when),
                len,
            )
        };
        assert_eq!(with_if_range(tag), Range::Part { start: 0, end: 1 });
        assert_eq!(with_if_range("W/\"abc\""), Range::Full);
        assert_eq!(with_if_range("\"old\""), Range::Full);
        assert_eq!(
            with_if_range(&httpdate::fmt_http_date(when)),
            Range::Part { start: 0, end: 1 }
        );
        assert_eq!(
            with_if_range(&httpdate::fmt_http_date(when - Duration::from_secs(5))),
            Range::Full
        );
    }

    #[test]
    fn preconditions() {
        let tag = "\"abc\"";
        let when = to_second(SystemTime::now());
        let e = |pairs: &[(&'static str, &str)], m: Method| {
            evaluate(&m, &headers(pairs), tag, Some(when))
        };
        use Precondition::*;
        assert_eq!(e(&[], Method::GET), Serve);
        assert_eq!(e(&[("if-none-match", "\"abc\"")], Method::GET), NotModified);
        assert_eq!(
            e(&[("if-none-match", "W/\"abc\"")], Method::HEAD),
            NotModified
        );
        assert_eq!(
            e(&[("if-none-match", "\"x\", \"abc\"")], Method::GET),
            NotModified
        );
        assert_eq!(e(&[("if-none-match", "*")], Method::GET), NotModified);
        assert_eq!(e(&[("if-none-match", "\"x\"")], Method::GET), Serve);
        let now = httpdate::fmt_http_date(when);
        let before = httpdate::fmt_http_date(when - Duration::from_secs(60));
        assert_eq!(e(&[("if-modified-since", &now)], Method::GET), NotModified);
        assert_eq!(e(&[("if-modified-since", &before)], Method::GET), Serve);
        // If-None-Match wins over If-Modified-Since.
        assert_eq!(
            e(
                &[("if-none-match", "\"x\""), ("if-modified-since", &now)],
                Method::GET
            ),
            Serve
        );
        assert_eq!(e(&[("if-modified-since", "garbage")], Method::GET), Serve);
        assert_eq!(e(&[("if-match", "\"x\"")], Method::GET), Failed);
        assert_eq!(e(&[("if-match", "W/\"abc\"")], Method::GET), Failed);
        assert_eq!(e(&[("if-match", "\"abc\"")], Method::GET), Serve);
        assert_eq!(e(&[("if-unmodified-since", &before)], Method::GET), Failed);
        assert_eq!(e(&[("if-unmodified-since", &now)], Method::GET), Serve);
    }

    #[test]
    fn codings() {
        use Coding::*;
        let all = &Coding::ALL[..];
        let c = |v: &str| choose(&headers(&[("accept-encoding", v)]), all);
        assert_eq!(c("gzip, deflate, br, zstd"), Some(Brotli));
        assert_eq!(c("gzip"), Some(Gzip));
        assert_eq!(c("x-gzip"), Some(Gzip));
        assert_eq!(c("br;q=0, gzip"), Some(Gzip));
        assert_eq!(c("br;q=0.5, gzip;q=0.9"), Some(Gzip));
        assert_eq!(c("*"), Some(Brotli));
        assert_eq!(c("*;q=0"), None);
        assert_eq!(c("identity"), None);
        assert_eq!(c("br;q=2, gzip"), Some(Gzip));
        assert_eq!(c("br;q=0.0001, zstd"), Some(Zstd));
        assert_eq!(c("br;Q=0.5, gzip"), Some(Gzip));
        assert_eq!(c("GZIP;q=0.5, BR;q=0.2"), Some(Gzip));
        assert_eq!(c(""), None);
        assert_eq!(choose(&HeaderMap::new(), all), None);
        assert_eq!(
            choose(&headers(&[("accept-encoding", "br")]), &[Gzip]),
            None
        );
    }
}
