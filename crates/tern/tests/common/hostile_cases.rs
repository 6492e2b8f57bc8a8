//! The hostile HTTP/1.1 requests of `tests/hostile.rs` as a table, with
//! what the server must do with each; `tests/h1_engines.rs` sends the
//! same bytes to both HTTP/1 engines and compares what they do.
#![allow(dead_code, unreachable_pub)]

/// What the server must do with one case.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
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

pub struct Case {
    pub name: &'static str,
    pub bytes: Vec<u8>,
    pub expect: Expect,
}

pub fn case(name: &'static str, bytes: impl Into<Vec<u8>>, expect: Expect) -> Case {
    Case {
        name,
        bytes: bytes.into(),
        expect,
    }
}

pub const REJECT: Expect = Expect::Reject;
pub const BAD: Expect = Expect::Status(&[400]);
/// The head is fine, the body's framing is not: hyper hands the handler a
/// body that fails to read, and Tern's extractor answers.
pub const BODY: Expect = Expect::Problem(400);

/// A chunked `POST /echo` whose body part is `body` verbatim.
pub fn chunked(body: &str) -> Vec<u8> {
    format!("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n{body}")
        .into_bytes()
}

/// A `POST /echo` with these extra header lines, then `body`.
/// A request with both `Transfer-Encoding` and `Content-Length`: on
/// hyper's engine, chunked wins and the connection closes after `hyper`'s
/// answers; Tern's own engine refuses it (problem+json 400, closed).
pub fn te_with_cl(hyper: &'static [(u16, Option<&'static str>)]) -> Expect {
    if crate::common::tern_engine() {
        Expect::Problem(400)
    } else {
        Expect::Exchange {
            responses: hyper,
            closes: true,
        }
    }
}

pub fn post_with(headers: &str, body: &str) -> Vec<u8> {
    format!("POST /echo HTTP/1.1\r\nHost: x\r\n{headers}\r\n{body}").into_bytes()
}

pub fn cases() -> Vec<Case> {
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
pub fn sneaky_cases() -> Vec<Case> {
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
