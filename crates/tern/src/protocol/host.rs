//! Rules on the host a request names: the `Host` header and the target's
//! authority (HTTP/2's `:authority`). See the [catalogue](super).

use std::net::Ipv6Addr;

use http::{header, HeaderMap, Uri, Version};
use tern_core::Request;

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
/// Why: `127.0.0.1:80@evil.example` is the host `evil.example` to a URL
/// parser and `127.0.0.1` to a check that cuts the port at the last colon
/// (an `ALLOWED_HOSTS` bypass, security round 3); and a host put in a URL
/// (`url_for`, redirects) must not change the URL's shape.
pub(crate) fn check_host(req: &Request) -> Result<(), String> {
    check_host_parts(req.uri(), req.headers(), req.version())
}

/// [`check_host`] on a request's parts (for the `Host` extractor, which
/// checks a request built by hand too).
pub(crate) fn check_host_parts(
    uri: &Uri,
    headers: &HeaderMap,
    version: Version,
) -> Result<(), String> {
    let mut values = headers.get_all(header::HOST).iter();
    let host = values.next();
    at_most_one_host(host.map_or(0, |_| 1 + values.count()))?;
    let host = match host {
        Some(value) => match value.to_str() {
            Ok(text) => Some(text),
            Err(_) => return Err("the `Host` header is not printable ASCII".to_owned()),
        },
        None => None,
    };
    if let Some(text) = host.filter(|h| !h.is_empty()) {
        if !is_valid_authority(text) {
            return Err(invalid("`Host` header", text));
        }
    }
    if let Some(authority) = uri.authority() {
        let text = authority.as_str();
        if !is_valid_authority(text) {
            return Err(invalid("request target's host", text));
        }
        if version >= Version::HTTP_2 {
            if let Some(other) = host.filter(|h| !h.eq_ignore_ascii_case(text)) {
                return Err(format!(
                    "the `Host` header (`{}`) and `:authority` (`{}`) name different hosts",
                    shown(other),
                    shown(text)
                ));
            }
        }
    }
    Ok(())
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

/// Whether `s` is `uri-host [ ":" port ]`, with `uri-host` a DNS-style
/// name or IPv4 address (letters, digits, `-` and `_` in dot-separated
/// labels of at most 63, an optional final dot, at most 253 in all) or a
/// bracketed IPv6 address, and `port` 1 to 5 digits of at most 65535.
///
/// Stricter than RFC 3986's `reg-name`, on purpose: percent-encoding,
/// sub-delimiters (`!$&'()*+,;=`) and `IPvFuture` are grammatical there
/// but name no host a resolver knows, and an empty port (`host:`) is
/// refused as the typo or trick it always is here.
pub(crate) fn is_valid_authority(s: &str) -> bool {
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
            Some((name, port)) => (is_valid_name(name), Some(port)),
            None => (is_valid_name(s), None),
        }
    };
    name_ok && port.is_none_or(is_valid_port)
}

fn is_valid_name(name: &str) -> bool {
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

fn is_valid_port(port: &str) -> bool {
    (1..=5).contains(&port.len())
        && port.bytes().all(|b| b.is_ascii_digit())
        && port.parse::<u32>().is_ok_and(|p| p <= 65535)
}

#[cfg(test)]
mod tests {
    use super::{at_most_one_host, is_valid_authority};

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
            assert!(is_valid_authority(good), "{good}");
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
            assert!(!is_valid_authority(bad), "{bad:?}");
        }
        assert!(!is_valid_authority(&"a".repeat(64)));
        assert!(is_valid_authority(&"a".repeat(63)));
        assert!(!is_valid_authority(&["a"; 128].join(".")));
    }

    #[test]
    fn one_host_at_most() {
        assert!(at_most_one_host(0).is_ok());
        assert!(at_most_one_host(1).is_ok());
        assert!(at_most_one_host(2).is_err());
    }
}
