//! Malformed and hostile HTTP/1.1 requests, sent as raw bytes to a real
//! server: each must be refused (a 4xx or a closed connection), never
//! answered 2xx; the valid-but-sneaky ones (pipelining, smuggling
//! attempts) must be framed exactly as RFC 9112 says. The server must
//! survive the whole table.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::{net::SocketAddr, time::Duration};

use tern::{
    extract::Host,
    routing::{get, post},
    App,
};
use tokio::{io::AsyncWriteExt, net::TcpStream};

/// What the server must do with one case.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Malformed: a 4xx response, or no response at all; never a 2xx.
    Reject,
    /// Malformed: exactly one response, with one of these statuses.
    Status(&'static [u16]),
    /// Refused by Tern itself: one `application/problem+json` response.
    Problem(u16),
    /// No HTTP/1 response at all, and the connection closed.
    Closed,
    /// Valid, if odd: exactly these responses in order (status, and the
    /// exact body where given); `closes` when the server must close after.
    Exchange {
        responses: &'static [(u16, Option<&'static str>)],
        closes: bool,
    },
}

struct Case {
    name: &'static str,
    bytes: Vec<u8>,
    expect: Expect,
}

fn case(name: &'static str, bytes: impl Into<Vec<u8>>, expect: Expect) -> Case {
    Case {
        name,
        bytes: bytes.into(),
        expect,
    }
}

const REJECT: Expect = Expect::Reject;
const BAD: Expect = Expect::Status(&[400]);
/// The head is fine, the body's framing is not: hyper hands the handler a
/// body that fails to read, and Tern's extractor answers.
const BODY: Expect = Expect::Problem(400);

/// A chunked `POST /echo` whose body part is `body` verbatim.
fn chunked(body: &str) -> Vec<u8> {
    format!("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n{body}")
        .into_bytes()
}

/// A `POST /echo` with these extra header lines, then `body`.
/// A request with both `Transfer-Encoding` and `Content-Length`: on
/// hyper's engine, chunked wins and the connection closes after `hyper`'s
/// answers; Tern's own engine refuses it (problem+json 400, closed).
fn te_with_cl(hyper: &'static [(u16, Option<&'static str>)]) -> Expect {
    if common::tern_engine() {
        Expect::Problem(400)
    } else {
        Expect::Exchange {
            responses: hyper,
            closes: true,
        }
    }
}

fn post_with(headers: &str, body: &str) -> Vec<u8> {
    format!("POST /echo HTTP/1.1\r\nHost: x\r\n{headers}\r\n{body}").into_bytes()
}

fn cases() -> Vec<Case> {
    let big = "a".repeat(20 * 1024);
    let many_headers: String = (0..150).map(|i| format!("X-H{i}: v\r\n")).collect();
    let extensions = ";a=b".repeat(5 * 1024);
    let tls_client_hello: &[u8] = &[
        0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03, 0x5e, 0x2f, 0x11, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x20, 0x13, 0x01, 0x13, 0x02, 0x13, 0x03, 0x00, 0x2f, 0x00, 0x35, 0x01, 0x00, 0x00,
        0x58, 0x00, 0x00, 0x00, 0x0e, 0x00, 0x0c, 0x00, 0x00, 0x09, b'l', b'o', b'c', b'a', b'l',
        b'h', b'o', b's', b't', 0x00, 0x0a, 0x00, 0x04, 0x00, 0x02, 0x00, 0x1d,
    ];
    let mut h2_garbage = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    h2_garbage.extend_from_slice(
        b"\xde\xad\xbe\xef garbage that is not a SETTINGS frame \xff\xff\xff\xff",
    );

    vec![
        // --- The request line (RFC 9112 §3) ---
        case("missing version", "GET /\r\nHost: x\r\n\r\n", BAD),
        case(
            "unknown version HTTP/9.9",
            "GET / HTTP/9.9\r\nHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "HTTP/2.0 in an HTTP/1 request line",
            "GET / HTTP/2.0\r\nHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "lowercase version",
            "GET / http/1.1\r\nHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "lowercase method and extra spaces",
            "get  /  HTTP/1.1\r\nHost: x\r\n\r\n",
            BAD,
        ),
        // `get` is a valid extension method (methods are case-sensitive),
        // not `GET`: the path has no handler for it.
        case(
            "lowercase method",
            "get / HTTP/1.1\r\nHost: x\r\n\r\n",
            Expect::Problem(405),
        ),
        case(
            "two spaces before the target",
            "GET  / HTTP/1.1\r\nHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "trailing space after the version",
            "GET / HTTP/1.1 \r\nHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "leading space before the method",
            " GET / HTTP/1.1\r\nHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "tabs as separators",
            "GET\t/\tHTTP/1.1\r\nHost: x\r\n\r\n",
            BAD,
        ),
        case("no target", "GET HTTP/1.1\r\nHost: x\r\n\r\n", BAD),
        case("non-token method", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", BAD),
        case(
            "absolute URI with garbage",
            "GET http://[::1/ HTTP/1.1\r\nHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "absolute URI with a bad scheme",
            "GET h%tp://x/ HTTP/1.1\r\nHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "control character in the target",
            "GET /a\x01b HTTP/1.1\r\nHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "DEL in the target",
            "GET /a\x7fb HTTP/1.1\r\nHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "NUL in the path",
            "GET /a\0b HTTP/1.1\r\nHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "non-UTF-8 bytes in the path",
            &b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n"[..],
            BAD,
        ),
        case(
            "malformed percent-escape",
            "GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n",
            Expect::Problem(400),
        ),
        case(
            "percent-escape of non-UTF-8",
            "GET /%ff%fe HTTP/1.1\r\nHost: x\r\n\r\n",
            Expect::Problem(400),
        ),
        case(
            "truncated percent-escape",
            "GET /%4 HTTP/1.1\r\nHost: x\r\n\r\n",
            Expect::Problem(400),
        ),
        // RFC 9112 §3.2.4: the asterisk form is only for OPTIONS (the
        // llhttp oracle in hardening/ found hyper passing it on).
        case(
            "asterisk-form on GET",
            "GET * HTTP/1.1\r\nHost: x\r\n\r\n",
            Expect::Problem(400),
        ),
        // RFC 9112 §3.2.3: the authority form is only for CONNECT.
        case(
            "authority-form on GET",
            "GET example.com:80 HTTP/1.1\r\nHost: x\r\n\r\n",
            Expect::Problem(400),
        ),
        // Valid request-target forms, but no route has such a path.
        case(
            "authority-form on CONNECT",
            "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n",
            Expect::Problem(404),
        ),
        case("HTTP/0.9 simple request", "GET /\r\n\r\n", BAD),
        case(
            "request line over the head limit",
            format!("GET /{big} HTTP/1.1\r\nHost: x\r\n\r\n"),
            Expect::Status(&[431, 414]),
        ),
        // --- Header fields (RFC 9112 §5) ---
        case(
            "space before the colon",
            "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
            BAD,
        ),
        case(
            "Content-Length with a space before the colon",
            post_with("Content-Length : 5\r\n", "hello"),
            BAD,
        ),
        case(
            "non-token header name",
            "GET / HTTP/1.1\r\nHost: x\r\nX(y)\"z: 1\r\n\r\n",
            BAD,
        ),
        case(
            "empty header name",
            "GET / HTTP/1.1\r\nHost: x\r\n: empty\r\n\r\n",
            BAD,
        ),
        case(
            "header line without a colon",
            "GET / HTTP/1.1\r\nHost: x\r\nX-No-Colon\r\n\r\n",
            BAD,
        ),
        case(
            "NUL in a header value",
            "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n",
            BAD,
        ),
        case(
            "bare CR in a header value",
            "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n",
            BAD,
        ),
        case(
            "bare CR ending the request line",
            "GET / HTTP/1.1\rHost: x\r\n\r\n",
            BAD,
        ),
        case(
            "bare LF inside the request line",
            "GET /\n HTTP/1.1\r\nHost: x\r\n\r\n",
            BAD,
        ),
        // RFC 9112 §5.2: a server MUST reject obs-fold with 400 or unfold it.
        case(
            "obs-fold line folding",
            "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n",
            BAD,
        ),
        // RFC 9112 §2.2: whitespace before the first field line MUST be
        // rejected or the line ignored.
        case(
            "whitespace before the first header",
            "GET / HTTP/1.1\r\n Host: x\r\n\r\n",
            BAD,
        ),
        case(
            "too many headers",
            format!("GET / HTTP/1.1\r\nHost: x\r\n{many_headers}\r\n"),
            Expect::Status(&[431]),
        ),
        case(
            "one oversized header",
            format!("GET / HTTP/1.1\r\nHost: x\r\nX-Big: {big}\r\n\r\n"),
            Expect::Status(&[431]),
        ),
        // --- Message framing (RFC 9112 §6) ---
        case(
            "two different Content-Lengths",
            post_with("Content-Length: 5\r\nContent-Length: 6\r\n", "hello!"),
            BAD,
        ),
        case(
            "Content-Length list",
            post_with("Content-Length: 5, 6\r\n", "hello!"),
            BAD,
        ),
        case(
            "Content-Length: -1",
            post_with("Content-Length: -1\r\n", "hello"),
            BAD,
        ),
        case(
            "Content-Length: 1e3",
            post_with("Content-Length: 1e3\r\n", "hello"),
            BAD,
        ),
        case(
            "Content-Length: +5",
            post_with("Content-Length: +5\r\n", "hello"),
            BAD,
        ),
        case(
            "Content-Length in hex",
            post_with("Content-Length: 0x5\r\n", "hello"),
            BAD,
        ),
        case(
            "Content-Length over u64",
            post_with("Content-Length: 99999999999999999999999999\r\n", "hello"),
            BAD,
        ),
        // Fits in u64: hyper accepts the number (its own cap is u64::MAX - 2),
        // Tern refuses it before reading a byte.
        case(
            "Content-Length just under u64::MAX",
            post_with("Content-Length: 18446744073709551613\r\n", "hello"),
            Expect::Problem(413),
        ),
        case("chunk size zz", chunked("zz\r\nhello\r\n0\r\n\r\n"), BODY),
        case(
            "negative chunk size",
            chunked("-5\r\nhello\r\n0\r\n\r\n"),
            BODY,
        ),
        case(
            "overflowing chunk size",
            chunked("fffffffffffffffffff\r\nhello\r\n0\r\n\r\n"),
            BODY,
        ),
        case(
            "chunk size ended by a bare LF",
            chunked("5\nhello\r\n0\r\n\r\n"),
            BODY,
        ),
        case(
            "chunk data longer than its size",
            chunked("5\r\nhelloXX\r\n0\r\n\r\n"),
            BODY,
        ),
        case(
            "chunk extensions over 16 KiB",
            chunked(&format!("5{extensions}\r\nhello\r\n0\r\n\r\n")),
            BODY,
        ),
        case(
            "chunk extension with a bare LF",
            chunked("5;a=b\nc\r\nhello\r\n0\r\n\r\n"),
            BODY,
        ),
        case(
            "missing final chunk, then garbage",
            chunked("5\r\nhello\r\nGARBAGE\r\n\r\n"),
            BODY,
        ),
        case(
            "Transfer-Encoding: chunked, gzip",
            post_with(
                "Transfer-Encoding: chunked, gzip\r\n",
                "5\r\nhello\r\n0\r\n\r\n",
            ),
            BAD,
        ),
        case(
            "Transfer-Encoding: xchunked",
            post_with("Transfer-Encoding: xchunked\r\n", "5\r\nhello\r\n0\r\n\r\n"),
            BAD,
        ),
        case(
            "Transfer-Encoding: identity",
            post_with(
                "Transfer-Encoding: identity\r\nContent-Length: 5\r\n",
                "hello",
            ),
            BAD,
        ),
        case(
            "duplicated Transfer-Encoding, chunked first",
            post_with(
                "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
                "5\r\nhello\r\n0\r\n\r\n",
            ),
            BAD,
        ),
        case(
            "Transfer-Encoding on HTTP/1.0",
            concat!(
                "POST /echo HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
                "5\r\nhello\r\n0\r\n\r\n",
            ),
            BAD,
        ),
        case(
            "Transfer-Encoding with a space before the colon",
            post_with(
                "Transfer-Encoding : chunked\r\nContent-Length: 5\r\n",
                "hello",
            ),
            BAD,
        ),
        // --- Garbage ---
        case("only empty lines", "\r\n\r\n\r\n", REJECT),
        case(
            "binary garbage",
            &b"\x00\x01\x02\x03\xff\xfe\xfd\x80\x81\r\n\r\n"[..],
            BAD,
        ),
        case("TLS ClientHello on the plain port", tls_client_hello, BAD),
        case("HTTP/2 preface then garbage", h2_garbage, Expect::Closed),
    ]
}

/// Cases that are valid HTTP, but where a lax parser would split or
/// merge messages: the responses must be exactly these.
fn sneaky_cases() -> Vec<Case> {
    vec![
        // RFC 9112 §6.3: with both, Transfer-Encoding wins and the server
        // MUST close the connection after responding. The CL-framed reading
        // would leave `GET /smuggled` as a second request; it must never be
        // answered.
        //
        // Tern's own engine refuses the pair instead (400, closed): RFC
        // 9112 §6.3 says such a message "ought to be handled as an error",
        // and llhttp's strict mode refuses it.
        case(
            "Content-Length and chunked together (CL.TE)",
            post_with(
                "Content-Length: 40\r\nTransfer-Encoding: chunked\r\n",
                "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
            ),
            te_with_cl(&[(200, Some(""))]),
        ),
        // The reverse: the chunk holds what a CL-reader would take for a
        // second request; it is body, echoed once.
        case(
            "chunked and a short Content-Length (TE.CL)",
            post_with(
                "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
                "c\r\nGET / HTTP/1\r\n0\r\n\r\n",
            ),
            te_with_cl(&[(200, Some("GET / HTTP/1"))]),
        ),
        // RFC 9112 §6.3 point 5 allows identical repeated values.
        case(
            "two identical Content-Lengths",
            post_with("Content-Length: 5\r\nContent-Length: 5\r\n", "hello"),
            Expect::Exchange {
                responses: &[(200, Some("hello"))],
                closes: false,
            },
        ),
        // Bytes past Content-Length are the next request on this connection
        // (pipelining), not part of the body: the echo is exactly `hello`,
        // and the trailing request is answered on its own, here a 404 since
        // nothing routes `/smuggled`. On a direct connection the sender of
        // both is the same client, so this is not smuggling.
        case(
            "body longer than Content-Length, then a second request",
            post_with(
                "Content-Length: 5\r\n",
                "helloGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
            ),
            Expect::Exchange {
                responses: &[(200, Some("hello")), (404, None)],
                closes: false,
            },
        ),
        case(
            "body longer than Content-Length, then garbage",
            post_with("Content-Length: 5\r\n", "hello\x01\x02 garbage\r\n\r\n"),
            Expect::Exchange {
                responses: &[(200, Some("hello")), (400, None)],
                closes: true,
            },
        ),
        // RFC 9112 §2.2 lets a recipient accept a bare LF as a line
        // terminator; httparse does, but a front end that does not would
        // frame the message differently (issue 9): Tern refuses it.
        case("bare LF line endings", "GET / HTTP/1.1\nHost: x\n\n", BAD),
        // Leading whitespace in a field value is OWS (RFC 9110 §5.5),
        // stripped: this is plain `chunked`.
        case(
            "Transfer-Encoding value with leading whitespace",
            post_with(
                "Transfer-Encoding: \t chunked\r\n",
                "5\r\nhello\r\n0\r\n\r\n",
            ),
            Expect::Exchange {
                responses: &[(200, Some("hello"))],
                closes: false,
            },
        ),
        // hyper would decode a duplicated `chunked` once; Tern serves only a
        // single `chunked` coding (RFC 9112 §6.1) and answers 501.
        case(
            "duplicated Transfer-Encoding: chunked",
            post_with(
                "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
                "5\r\nhello\r\n0\r\n\r\n",
            ),
            Expect::Problem(501),
        ),
        // RFC 9112 §6.1: a server SHOULD answer 501 to a transfer coding it
        // does not implement; hyper would hand the app gzip-coded bytes.
        case(
            "Transfer-Encoding: gzip, chunked",
            post_with(
                "Transfer-Encoding: gzip, chunked\r\n",
                "5\r\nhello\r\n0\r\n\r\n",
            ),
            Expect::Problem(501),
        ),
        // RFC 9112 §3.2: an HTTP/1.1 request without Host MUST get 400.
        case(
            "HTTP/1.1 without Host",
            "GET / HTTP/1.1\r\n\r\n",
            Expect::Problem(400),
        ),
        case(
            "two pipelined requests",
            "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n",
            Expect::Exchange {
                responses: &[(200, Some("ok")), (404, None)],
                closes: false,
            },
        ),
    ]
}

/// One response parsed out of a raw byte stream.
struct Parsed {
    status: u16,
    head: String,
    body: Vec<u8>,
}

/// Splits a raw byte stream into responses (Content-Length, chunked or
/// close-delimited bodies). Stops at the first thing that is not a
/// response.
fn parse_responses(mut bytes: &[u8]) -> Vec<Parsed> {
    let mut out = Vec::new();
    while let Some(end) = find(bytes, b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
        let Some(status) = head
            .strip_prefix("HTTP/1.1 ")
            .and_then(|s| s.get(..3))
            .and_then(|s| s.parse().ok())
        else {
            break;
        };
        let lower = head.to_ascii_lowercase();
        let rest = &bytes[end + 4..];
        let length = lower
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok());
        let (body, rest) = if let Some(len) = length {
            let len = len.min(rest.len());
            (rest[..len].to_vec(), &rest[len..])
        } else if lower.contains("transfer-encoding: chunked") {
            dechunk(rest)
        } else {
            (rest.to_vec(), &rest[rest.len()..])
        };
        out.push(Parsed { status, head, body });
        bytes = rest;
    }
    out
}

fn dechunk(mut bytes: &[u8]) -> (Vec<u8>, &[u8]) {
    let mut body = Vec::new();
    while let Some(eol) = find(bytes, b"\r\n") {
        let size = std::str::from_utf8(&bytes[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok())
            .unwrap_or(0);
        bytes = &bytes[eol + 2..];
        if size == 0 {
            let end = find(bytes, b"\r\n").map_or(bytes.len(), |i| i + 2);
            return (body, &bytes[end..]);
        }
        let size = size.min(bytes.len());
        body.extend_from_slice(&bytes[..size]);
        bytes = &bytes[(size + 2).min(bytes.len())..];
    }
    (body, bytes)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut shown: String = text.escape_debug().collect();
    if shown.len() > 400 {
        let cut = (0..=400)
            .rev()
            .find(|&i| shown.is_char_boundary(i))
            .unwrap_or(0);
        shown.truncate(cut);
        shown.push_str(&format!("… ({} bytes)", bytes.len()));
    }
    shown
}

/// `Ok` when the server did what `expect` says with `got`.
fn judge(expect: Expect, got: &[u8], closed: bool) -> Result<(), String> {
    let counted = common::statuses(got);
    let parsed = parse_responses(got);
    let statuses: Vec<u16> = parsed.iter().map(|r| r.status).collect();
    if counted != statuses {
        return Err(format!(
            "the stream holds {counted:?} but parses as {statuses:?}"
        ));
    }
    if let Some(ok) = statuses.iter().find(|s| (200..300).contains(*s)) {
        if !matches!(expect, Expect::Exchange { .. }) {
            return Err(format!("answered {ok} to a malformed request"));
        }
    }
    match expect {
        Expect::Reject => match statuses.first() {
            None => Ok(()),
            Some(s) if (400..500).contains(s) && statuses.len() == 1 => Ok(()),
            Some(_) => Err(format!("expected one 4xx or none, got {statuses:?}")),
        },
        Expect::Status(allowed) => match statuses.as_slice() {
            [s] if allowed.contains(s) => Ok(()),
            _ => Err(format!("expected one of {allowed:?}, got {statuses:?}")),
        },
        Expect::Problem(status) => match parsed.as_slice() {
            [r] if r.status == status
                && r.head
                    .to_ascii_lowercase()
                    .contains("content-type: application/problem+json") =>
            {
                Ok(())
            }
            _ => Err(format!(
                "expected one {status} problem+json, got {statuses:?}"
            )),
        },
        Expect::Closed => {
            if !statuses.is_empty() {
                Err(format!("expected no HTTP/1 response, got {statuses:?}"))
            } else if !closed {
                Err("expected the connection to be closed".to_owned())
            } else {
                Ok(())
            }
        }
        Expect::Exchange { responses, closes } => {
            let want: Vec<u16> = responses.iter().map(|(s, _)| *s).collect();
            if statuses != want {
                return Err(format!("expected responses {want:?}, got {statuses:?}"));
            }
            for (i, ((_, body), got)) in responses.iter().zip(&parsed).enumerate() {
                if let Some(body) = body {
                    if got.body != body.as_bytes() {
                        return Err(format!(
                            "response {i}: expected body {body:?}, got {:?}",
                            show(&got.body)
                        ));
                    }
                }
            }
            if closes && !closed {
                return Err("expected the connection to be closed after the responses".to_owned());
            }
            Ok(())
        }
    }
}

fn app() -> App {
    App::new()
        .route("/", get(|| async { "ok" }))
        .route("/echo", post(|body: String| async move { body }))
        .route("/host", get(|Host(host): Host| async move { host }))
}

/// Sends every case on its own connection, all at once (a connection left
/// open costs the quiet wait once, not once per case); returns a message
/// per case the server got wrong.
async fn run(addr: SocketAddr, table: &[Case]) -> Vec<String> {
    let mut tasks = tokio::task::JoinSet::new();
    for (i, case) in table.iter().enumerate() {
        let bytes = case.bytes.clone();
        tasks.spawn(async move {
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            // The server may close before reading everything; what it
            // answered is still to be read.
            let _ = stream.write_all(&bytes).await;
            let (got, closed) = common::read_until_quiet(&mut stream, QUIET).await;
            (i, got, closed)
        });
    }
    let outcomes = tokio::time::timeout(Duration::from_secs(20), tasks.join_all())
        .await
        .expect("every case finishes within 20 s");
    let mut failures = Vec::new();
    for (i, got, closed) in outcomes {
        let case = &table[i];
        if let Err(why) = judge(case.expect, &got, closed) {
            failures.push(format!(
                "case `{}` ({:?}): {why}\n    sent: {}\n    got ({}): {}",
                case.name,
                case.expect,
                show(&case.bytes),
                if closed { "then closed" } else { "still open" },
                show(&got)
            ));
        }
    }
    failures.sort();
    failures
}

const QUIET: Duration = Duration::from_millis(1500);

#[tokio::test]
async fn hostile_requests_are_refused_and_the_server_survives() {
    let server = common::spawn(app()).await;
    let table: Vec<Case> = cases().into_iter().chain(sneaky_cases()).collect();
    assert!(table.len() >= 45, "{} cases", table.len());

    let failures = run(server.addr, &table).await;
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        table.len(),
        failures.join("\n")
    );

    let res = common::get(&server, "/").await;
    assert_eq!(
        res.status, 200,
        "the server no longer answers after the table"
    );
    assert_eq!(res.text(), "ok");
    server.shutdown().await;
}

/// With `ALLOWED_HOSTS` set (as production requires), the host Tern checks
/// is the host the handler sees, however the client spells it.
#[tokio::test]
async fn allowed_hosts_hold_against_hostile_host_headers() {
    let config = common::config().with_allowed_hosts(["good.example"]);
    let server = common::spawn_with(app(), config).await;
    let host = |headers: &str| format!("GET /host HTTP/1.1\r\n{headers}\r\n").into_bytes();
    let served = |responses| Expect::Exchange {
        responses,
        closes: false,
    };
    const GOOD: &[(u16, Option<&str>)] = &[(200, Some("good.example"))];
    let table = vec![
        case(
            "an allowed host",
            host("Host: good.example\r\n"),
            served(GOOD),
        ),
        case(
            "an allowed host with a port",
            host("Host: good.example:8080\r\n"),
            served(&[(200, Some("good.example:8080"))]),
        ),
        case(
            "an allowed host in capitals",
            host("Host: GOOD.example\r\n"),
            served(&[(200, Some("GOOD.example"))]),
        ),
        // RFC 9112 §3.2: HTTP/1.1 without Host MUST get 400.
        case("no Host", host(""), Expect::Problem(400)),
        case("an empty Host", host("Host: \r\n"), Expect::Problem(400)),
        case(
            "another host",
            host("Host: evil.example\r\n"),
            Expect::Problem(400),
        ),
        case(
            "the allowed host as a prefix",
            host("Host: good.example.evil.net\r\n"),
            Expect::Problem(400),
        ),
        case(
            "the allowed host as a suffix",
            host("Host: notgood.example\r\n"),
            Expect::Problem(400),
        ),
        case(
            "userinfo before the allowed host",
            host("Host: evil@good.example\r\n"),
            Expect::Problem(400),
        ),
        case(
            "a bad host, then the allowed one",
            host("Host: evil.example\r\nHost: good.example\r\n"),
            Expect::Problem(400),
        ),
        // RFC 9112 §3.2: two Host lines MUST get 400.
        case(
            "the allowed host, then a bad one",
            host("Host: good.example\r\nHost: evil.example\r\n"),
            Expect::Problem(400),
        ),
        // RFC 9112 §3.2.2: with an absolute-form target, its authority is
        // the host and the Host header is ignored.
        case(
            "absolute-form naming the allowed host",
            "GET http://good.example/host HTTP/1.1\r\nHost: evil.example\r\n\r\n",
            served(GOOD),
        ),
        case(
            "absolute-form naming another host",
            "GET http://evil.example/host HTTP/1.1\r\nHost: good.example\r\n\r\n",
            Expect::Problem(400),
        ),
        case("NUL in Host", host("Host: good.example\0\r\n"), BAD),
        case(
            "space inside Host",
            host("Host: good .example\r\n"),
            Expect::Problem(400),
        ),
    ];

    let failures = run(server.addr, &table).await;
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        table.len(),
        failures.join("\n")
    );
    server.shutdown().await;
}

/// Issue 10: a request hyper cannot parse (a garbage request line, a head
/// over the limit) gets problem+json with a request ID, not a bare status.
#[tokio::test]
async fn unparsable_requests_get_problem_json() {
    let server = common::spawn(App::new().route("/", get(|| async { "ok" }))).await;
    let big = format!(
        "GET / HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\n\r\n",
        "a".repeat(20_000)
    );
    for (bytes, status, detail) in [
        (
            &b"HELLO THERE\r\n\r\n"[..],
            400,
            "not a valid HTTP/1.1 request",
        ),
        (
            &b"GET / HTTP/1.1\r\nHost: a\r\nbad header\r\n\r\n"[..],
            400,
            "header lines",
        ),
        (
            &b"G@T / HTTP/1.1\r\nHost: a\r\n\r\n"[..],
            400,
            "request line",
        ),
        (
            big.as_bytes(),
            431,
            "larger than the limit of 16384 bytes (TERN_MAX_HEAD_BYTES)",
        ),
    ] {
        let out = common::raw(server.addr, bytes, Duration::from_secs(2)).await;
        let text = String::from_utf8_lossy(&out);
        let (head, body) = text.split_once("\r\n\r\n").expect("a response");
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{text}");
        assert!(
            head.contains("content-type: application/problem+json"),
            "{text}"
        );
        assert!(head.contains("x-request-id: "), "{text}");
        assert!(head.contains("connection: close"), "{text}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{text}"
        );
        let doc: serde_json::Value = serde_json::from_str(body).expect("json");
        assert_eq!(doc["status"], status, "{text}");
        assert!(doc["detail"].as_str().unwrap().contains(detail), "{text}");
    }
    // A handler's own empty 400 is not touched.
    let server2 =
        common::spawn(App::new().route("/", get(|| async { tern::StatusCode::BAD_REQUEST }))).await;
    let out = common::raw(
        server2.addr,
        b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        Duration::from_secs(2),
    )
    .await;
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.starts_with("HTTP/1.1 400 ") && text.contains("content-length: 0"),
        "{text}"
    );
    server.shutdown().await;
    server2.shutdown().await;
}
