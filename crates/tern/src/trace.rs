//! W3C Trace Context (`traceparent`): read from a trusted proxy, handed
//! on to the app's outgoing calls.
//!
//! A request's incoming `traceparent` is believed only from
//! `TRUSTED_PROXIES`, like its request ID (any other client could choose
//! the trace its requests join). Its trace ID goes into the request's
//! span (`trace_id`), so that logs of one trace across services can be
//! found together. [`RequestContext::traceparent`](crate::RequestContext::traceparent)
//! gives the header for a call the handler makes: the same trace, with
//! this request as the parent.

use std::hash::{BuildHasher, Hasher};

use http::HeaderValue;

/// A `traceparent` value that follows the W3C rules (version `00`, or a
/// later one read as `00`): its fields, as written.
pub(crate) fn parse(v: &HeaderValue) -> Option<HeaderValue> {
    let b = v.as_bytes();
    let hex = |s: &[u8]| s.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    let nonzero = |s: &[u8]| s.iter().any(|&c| c != b'0');
    let ok = b.len() >= 55
        && hex(&b[0..2])
        && &b[0..2] != b"ff"
        // Version 00 is exactly 55 bytes; a later version may add fields
        // after a `-`.
        && (b.len() == 55 || (&b[0..2] != b"00" && b[55] == b'-'))
        && b[2] == b'-'
        && hex(&b[3..35])
        && nonzero(&b[3..35])
        && b[35] == b'-'
        && hex(&b[36..52])
        && nonzero(&b[36..52])
        && b[52] == b'-'
        && hex(&b[53..55]);
    ok.then(|| {
        if b.len() == 55 {
            v.clone()
        } else {
            HeaderValue::from_bytes(&b[..55]).unwrap_or_else(|_| v.clone())
        }
    })
}

/// The trace ID of a value `parse` accepted.
pub(crate) fn trace_id(v: &HeaderValue) -> &str {
    v.to_str()
        .ok()
        .and_then(|s| s.get(3..35))
        .unwrap_or_default()
}

/// 64 bits derived from `seed` with this process's random key: the same
/// seed gives the same bits, and no one outside the process can predict
/// them.
fn derived(seed: &[u8], salt: u8) -> u64 {
    static KEY: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    let mut h = KEY
        .get_or_init(std::collections::hash_map::RandomState::new)
        .build_hasher();
    h.write_u8(salt);
    h.write(seed);
    h.finish().max(1)
}

/// The `traceparent` for a call made while answering the request with ID
/// `request_id`: `incoming`'s trace (or a new one, derived from the
/// request's ID) with the request as the parent (its span ID derived from
/// the request's ID, the same for every call of one request).
pub(crate) fn child(incoming: Option<&HeaderValue>, request_id: &[u8]) -> HeaderValue {
    let span = derived(request_id, 0);
    let value = match incoming {
        Some(v) => {
            let s = v.to_str().unwrap_or_default();
            format!(
                "00-{}-{span:016x}-{}",
                s.get(3..35).unwrap_or_default(),
                s.get(53..55).unwrap_or("01")
            )
        }
        None => format!(
            "00-{:016x}{:016x}-{span:016x}-01",
            derived(request_id, 1),
            derived(request_id, 2)
        ),
    };
    HeaderValue::try_from(value).unwrap_or_else(|_| HeaderValue::from_static(""))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn parses_the_w3c_examples_and_refuses_the_rest() {
        let v = parse(&HeaderValue::from_static(GOOD)).unwrap();
        assert_eq!(trace_id(&v), "4bf92f3577b34da6a3ce929d0e0e4736");
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(parse(&HeaderValue::from_static(bad)).is_none(), "{bad}");
        }
        // A later version may carry more, after a dash: read as 00.
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more";
        assert_eq!(
            parse(&HeaderValue::from_static(later)).unwrap(),
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
    }

    #[test]
    fn a_child_keeps_the_trace_and_names_the_request() {
        let incoming = HeaderValue::from_static(GOOD);
        let a = child(Some(&incoming), b"req-1");
        let a = a.to_str().unwrap();
        assert!(a.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"), "{a}");
        assert!(a.ends_with("-01"));
        assert_eq!(a.len(), 55);
        assert!(parse(&HeaderValue::from_str(a).unwrap()).is_some());
        assert_eq!(
            child(Some(&incoming), b"req-1"),
            a,
            "one parent per request"
        );
        assert_ne!(child(Some(&incoming), b"req-2"), a);
        let fresh = child(None, b"req-1");
        assert!(parse(&fresh).is_some(), "{fresh:?}");
        assert_eq!(child(None, b"req-1"), fresh);
    }
}
