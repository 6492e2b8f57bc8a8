//! Rules on the host a request names: the `Host` header and the target's
//! authority (HTTP/2's `:authority`). See the [catalogue](super).

use std::net::Ipv6Addr;

use http::{header, HeaderMap, HeaderValue, Uri, Version};

/// **More than one `Host`** is refused (400; RFC 9112 §3.2 for HTTP/1, and
/// HTTP/2 requests too): a front end that reads the first and an app that
/// reads the last would route the same request to different hosts.
/// `Err` is the detail of the 400.
pub(crate) fn at_most_one_host(hosts: usize) -> Result<(), String> {
    if hosts > 1 {
        return Err("the request carries more than one `Host` header".to_owned());
    }
    Ok(())
}

/// **Host grammar**: every spelling of the host a request carries must be a valid
/// `uri-host [ ":" port ]` (RFC 9110 §4.2.3, §7.2): the `Host` header
/// (even when an absolute-form target makes it ignored: a junk one is
/// never valid, and some code reads the header itself) and the target's
/// authority (HTTP/2's `:authority`). With HTTP/2 both must name the
/// same host (RFC 9113 §8.3.1). An empty `Host` is no host, not an
/// error (RFC 9112 §3.2). `Err` is the detail of a `400`.
///
/// `host` is the first `Host` field and `hosts` the number of them, as
/// the caller's one pass over the header fields found them
/// (`request::check_request`), so that the map is not searched again.
///
/// Why: `127.0.0.1:80@evil.example` is the host `evil.example` to a URL
/// parser and `127.0.0.1` to a check that cuts the port at the last colon
/// (an `ALLOWED_HOSTS` bypass, security round 3); and a host put in a URL
/// (`url_for`, redirects) must not change the URL's shape.
pub(crate) fn check_host(
    uri: &Uri,
    host: Option<&HeaderValue>,
    hosts: usize,
    version: Version,
) -> Result<(), String> {
    at_most_one_host(hosts)?;
    // An empty `Host` names no host.
    let host = host.filter(|h| !h.is_empty());
    if let Some(value) = host {
        if !is_valid_host(value.as_bytes()) {
            return Err(match value.to_str() {
                Ok(text) => invalid("`Host` header", text),
                Err(_) => "the `Host` header is not printable ASCII".to_owned(),
            });
        }
    }
    if let Some(authority) = uri.authority() {
        let text = authority.as_str();
        if !is_valid_authority(text.as_bytes()) {
            return Err(invalid("request target's host", text));
        }
        if version >= Version::HTTP_2 {
            if let Some(other) =
                host.filter(|h| !h.as_bytes().eq_ignore_ascii_case(text.as_bytes()))
            {
                return Err(format!(
                    "the `Host` header (`{}`) and `:authority` (`{}`) name different hosts",
                    // The grammar above took it: ASCII.
                    shown(other.to_str().unwrap_or_default()),
                    shown(text)
                ));
            }
        }
    }
    Ok(())
}

/// [`check_host`] on a request's parts, finding the `Host` fields itself
/// (for the `Host` extractor, which checks a request built by hand too).
pub(crate) fn check_host_parts(
    uri: &Uri,
    headers: &HeaderMap,
    version: Version,
) -> Result<(), String> {
    let mut values = headers.get_all(header::HOST).iter();
    let host = values.next();
    check_host(uri, host, host.map_or(0, |_| 1 + values.count()), version)
}

fn invalid(what: &str, value: &str) -> String {
    format!(
        "the {what} `{}` is not a host name with an optional port (RFC 9110 §7.2: \
         `example.com`, `example.com:8080`, `192.0.2.1`, `[2001:db8::1]:443`)",
        shown(value)
    )
}

/// At most 100 characters of a client's value, for a problem's detail.
fn shown(value: &str) -> &str {
    value
        .char_indices()
        .nth(100)
        .map_or(value, |(at, _)| &value[..at])
}

/// [`is_valid_authority`] for a `Host` value, remembering the thread's
/// last valid one: the requests of a connection (and of a thread's
/// connections, behind a proxy) name the same host, and comparing bytes
/// costs a fraction of reading the grammar again. Only a value found
/// valid is kept, and the answer is the same either way.
fn is_valid_host(s: &[u8]) -> bool {
    const KEPT: usize = 64;
    thread_local! {
        static LAST_VALID: std::cell::RefCell<(usize, [u8; KEPT])> =
            const { std::cell::RefCell::new((usize::MAX, [0; KEPT])) };
    }
    if s.len() > KEPT {
        return is_valid_authority(s);
    }
    LAST_VALID
        .try_with(|last| {
            let Ok(mut last) = last.try_borrow_mut() else {
                return is_valid_authority(s);
            };
            if last.0 == s.len() && last.1.get(..s.len()) == Some(s) {
                return true;
            }
            let valid = is_valid_authority(s);
            if valid {
                last.0 = s.len();
                last.1[..s.len()].copy_from_slice(s);
            }
            valid
        })
        .unwrap_or_else(|_| is_valid_authority(s))
}

/// Whether `s` is `uri-host [ ":" port ]`, with `uri-host` a DNS-style
/// name or IPv4 address (letters, digits, `-` and `_` in dot-separated
/// labels of at most 63, an optional final dot, at most 253 in all) or a
/// bracketed IPv6 address, and `port` 1 to 5 digits of at most 65535.
///
/// Stricter than RFC 3986's `reg-name`, on purpose: percent-encoding,
/// sub-delimiters (`!$&'()*+,;=`) and `IPvFuture` are grammatical there
/// but name no host a resolver knows, and an empty port (`host:`) is
/// refused as the typo or trick it always is here.
///
/// One pass over the bytes for a name (every request's `Host` is one):
/// the tests hold it to the plain reading of the grammar above
/// (`tests::reference`).
pub(crate) fn is_valid_authority(s: &[u8]) -> bool {
    if let Some(rest) = s.strip_prefix(b"[") {
        return is_valid_ipv6_authority(rest);
    }
    // The name runs to the first colon (a second one fails the port).
    // `start` is where the label being read starts: a dot ends a
    // non-empty one, so a name ending in a dot ends with `start == end`.
    // One table look-up per byte; a label's length is checked where it
    // ends.
    let mut start = 0usize;
    let mut end = s.len();
    for (i, &b) in s.iter().enumerate() {
        match NAME_CLASS[b as usize] {
            LABEL => {}
            DOT => {
                if i == start || i - start > 63 {
                    return false;
                }
                start = i + 1;
            }
            COLON => {
                end = i;
                break;
            }
            _ => return false,
        }
    }
    if end - start > 63 {
        return false;
    }
    // Without its optional final dot, the name is not empty and at most
    // 253 bytes long.
    let final_dot = usize::from(start == end);
    let name_ok = end > final_dot && end - final_dot <= 253;
    name_ok && (end == s.len() || is_valid_port(&s[end + 1..]))
}

/// `[` already taken: `IPv6address "]" [ ":" port ]`.
#[cold]
fn is_valid_ipv6_authority(rest: &[u8]) -> bool {
    let Some(close) = rest.iter().position(|&b| b == b']') else {
        return false;
    };
    let ip = std::str::from_utf8(&rest[..close]).ok();
    let port_ok = match &rest[close + 1..] {
        [] => true,
        [b':', port @ ..] => is_valid_port(port),
        _ => false,
    };
    port_ok && ip.is_some_and(|ip| ip.parse::<Ipv6Addr>().is_ok())
}

/// A name's bytes by what they do: a label's (ASCII letters, digits,
/// `-`, `_`), the dot between labels, the colon before the port, or none.
const LABEL: u8 = 0;
const DOT: u8 = 1;
const COLON: u8 = 2;
const OTHER: u8 = 3;
const NAME_CLASS: [u8; 256] = {
    let mut table = [OTHER; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' {
            LABEL
        } else if c == b'.' {
            DOT
        } else if c == b':' {
            COLON
        } else {
            OTHER
        };
        b += 1;
    }
    table
};

fn is_valid_port(port: &[u8]) -> bool {
    if !(1..=5).contains(&port.len()) {
        return false;
    }
    let mut n = 0u32;
    for &b in port {
        if !b.is_ascii_digit() {
            return false;
        }
        n = n * 10 + u32::from(b - b'0');
    }
    n <= 65535
}

#[cfg(test)]
mod tests {
    use std::net::Ipv6Addr;

    use super::{at_most_one_host, is_valid_authority};

    /// The grammar of [`is_valid_authority`] read plainly, on text (the
    /// implementation before the one-pass version): the reference the
    /// fast path must agree with.
    fn reference(s: &str) -> bool {
        let (name_ok, port) = if let Some(rest) = s.strip_prefix('[') {
            let Some((ip, after)) = rest.split_once(']') else {
                return false;
            };
            let port = match after {
                "" => None,
                _ => match after.strip_prefix(':') {
                    Some(port) => Some(port),
                    None => return false,
                },
            };
            (ip.parse::<Ipv6Addr>().is_ok(), port)
        } else {
            match s.split_once(':') {
                Some((name, port)) => (reference_name(name), Some(port)),
                None => (reference_name(s), None),
            }
        };
        name_ok
            && port.is_none_or(|port| {
                (1..=5).contains(&port.len())
                    && port.bytes().all(|b| b.is_ascii_digit())
                    && port.parse::<u32>().is_ok_and(|p| p <= 65535)
            })
    }

    fn reference_name(name: &str) -> bool {
        let name = name.strip_suffix('.').unwrap_or(name);
        !name.is_empty()
            && name.len() <= 253
            && name.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            })
    }

    /// Every string of up to five bytes from an alphabet of the grammar's
    /// edges (each kind of label byte, the separators, brackets, bytes
    /// just outside the label set, a non-ASCII one), then long random
    /// ones around the length limits: the one-pass check agrees with the
    /// reference on all of them.
    #[test]
    fn one_pass_check_agrees_with_the_reference() {
        const ALPHABET: &[u8] = b"aZ09-_.:[]@/ \x80";
        let check = |bytes: &[u8]| {
            let expected = std::str::from_utf8(bytes).is_ok_and(reference);
            assert_eq!(is_valid_authority(bytes), expected, "{bytes:?}");
        };
        let mut buf = Vec::new();
        let mut counts = [0usize; 2];
        for len in 0..=5u32 {
            for mut n in 0..ALPHABET.len().pow(len) {
                buf.clear();
                for _ in 0..len {
                    buf.push(ALPHABET[n % ALPHABET.len()]);
                    n /= ALPHABET.len();
                }
                check(&buf);
                counts[usize::from(is_valid_authority(&buf))] += 1;
            }
        }
        // Both answers are well represented.
        assert!(counts[0] > 1000 && counts[1] > 1000, "{counts:?}");
        // Long names: labels near 63 bytes, names near 253, ports near
        // five digits, from a fixed xorshift sequence.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let ipv6 = ["[::1]", "[2001:db8::1]", "[::ffff:1.2.3.4]", "[::g]"];
        for _ in 0..20_000 {
            buf.clear();
            if next() % 8 == 0 {
                buf.extend_from_slice(ipv6[(next() % 4) as usize].as_bytes());
            } else {
                for _ in 0..1 + next() % 6 {
                    let len = [1, 62, 63, 64, 40][(next() % 5) as usize];
                    buf.extend((0..len).map(|_| b"ab-_9"[(next() % 5) as usize]));
                    buf.push(b'.');
                }
                if next() % 2 == 0 {
                    buf.pop();
                }
            }
            if next() % 2 == 0 {
                buf.push(b':');
                let port = ["1", "80", "65535", "65536", "99999", "123456", "", "00080"];
                buf.extend_from_slice(port[(next() % 8) as usize].as_bytes());
            }
            check(&buf);
        }
    }

    /// The thread's last valid `Host` is remembered, never an invalid
    /// one: a value that differs from it (by one byte, same length) or
    /// is longer than what is kept is read by the grammar again.
    #[test]
    fn the_remembered_host_never_lets_another_pass() {
        use super::is_valid_host;
        for _ in 0..3 {
            assert!(is_valid_host(b"api.example:8080"));
            assert!(!is_valid_host(b"api.example:80@0"));
            assert!(!is_valid_host(b"api.examp/e:8080"));
            assert!(is_valid_host(b"api.example:8080"));
            assert!(!is_valid_host(b""));
        }
        let long_ok = format!("{}.example", "a".repeat(60));
        let long_bad = format!("{}.exam@le", "a".repeat(60));
        assert!(is_valid_host(long_ok.as_bytes()));
        assert!(!is_valid_host(long_bad.as_bytes()));
        assert!(is_valid_host(long_ok.as_bytes()));
    }

    #[test]
    fn authority_spellings() {
        for good in [
            "localhost",
            "localhost:80",
            "LOCALHOST:65535",
            "127.0.0.1",
            "127.0.0.1:4305",
            "example.com.",
            "example.com.:443",
            "a-b_c.example",
            "[::1]",
            "[::1]:80",
            "[2001:db8::1]:443",
            "xn--bcher-kva.example",
        ] {
            assert!(is_valid_authority(good.as_bytes()), "{good}");
        }
        for bad in [
            "",
            "127.0.0.1:4305@evil.example",
            "127.0.0.1:80/evil",
            "localhost:0@evil.example",
            "localhost:",
            "localhost:80:80",
            "localhost:abc",
            "localhost:65536",
            "localhost:000080",
            "localhost:+80",
            "user@localhost",
            "local host",
            "localhost%00",
            "localhost\0",
            "[::1",
            "[::1]80",
            "[::1]:",
            "[::1]:x",
            "[evil.example]",
            "[fe80::1%25eth0]",
            "::1",
            ":80",
            ".example.com",
            "a..example",
            "example.com..",
            "a\\b",
            "a?b",
            "a#b",
            "ex!ample.com",
        ] {
            assert!(!is_valid_authority(bad.as_bytes()), "{bad:?}");
        }
        assert!(!is_valid_authority("a".repeat(64).as_bytes()));
        assert!(is_valid_authority("a".repeat(63).as_bytes()));
        assert!(!is_valid_authority(["a"; 128].join(".").as_bytes()));
        // 253 bytes, with and without the final dot; 254.
        let name = [
            "a".repeat(63),
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(61),
        ]
        .join(".");
        assert_eq!(name.len(), 253);
        assert!(is_valid_authority(name.as_bytes()));
        assert!(is_valid_authority(format!("{name}.:80").as_bytes()));
        assert!(!is_valid_authority(format!("{name}e").as_bytes()));
    }

    #[test]
    fn one_host_at_most() {
        assert!(at_most_one_host(0).is_ok());
        assert!(at_most_one_host(1).is_ok());
        assert!(at_most_one_host(2).is_err());
    }
}
