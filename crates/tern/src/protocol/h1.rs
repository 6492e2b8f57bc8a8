//! HTTP/1 rules on the bytes of a connection: the rules of Tern's own
//! HTTP/1.1 codec (`server/h1`, RFC 9112), each a function or constant
//! with its why, and, for hyper's path while it lasts, the bare-LF rule
//! Tern adds before hyper's parser, the framing rules of hyper that
//! [`Framing`](crate::server) mirrors to follow a connection, and the
//! shape of hyper's own refusal. See the [catalogue](super).

use std::borrow::Cow;

use http::{Method, StatusCode, Uri, Version};

use crate::metrics::http::Reason;

/// **Bare LF** (Tern's rule): a LF not preceded by CR in a request line, a
/// header section or a trailer section is refused with 400, and the
/// connection closed; nothing after it on the connection is read.
///
/// Why: httparse (and so hyper) ends a line at a bare LF, as RFC 9112 §2.2
/// allows a recipient to. A front end that ends lines only at CRLF reads
/// `X: y\nContent-Length: 23` as one header where Tern would read two, and
/// the two then disagree on where the next request starts (request
/// smuggling).
///
/// How: the LF at `buf[at]` becomes a NUL, a byte httparse refuses in a
/// head, and the caller hands on `buf[..=at]` and then the returned bytes,
/// which end the head (or trailer section) so that hyper parses it at
/// once, answers its own 400 and closes. Enforced by the HTTP/1 framing
/// follower (`server/framing.rs`, `Framing::bare_lf`).
#[inline]
pub(crate) fn refuse_bare_lf(buf: &mut [u8], at: usize) -> &'static [u8] {
    buf[at] = 0;
    b"\r\n\r\n"
}

/// hyper's `Content-Length` rule (`headers::content_length_parse`): the
/// value, without the spaces and tabs around it, is digits only: no sign,
/// no list, no overflow of `u64`. Anything else is refused by hyper (400).
/// `None` for a value hyper refuses.
pub(crate) fn content_length(value: &[u8]) -> Option<u64> {
    let s = trim_ows(value);
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |n, &b| match b {
        b'0'..=b'9' => n.checked_mul(10)?.checked_add(u64::from(b - b'0')),
        _ => None,
    })
}

/// hyper's `Transfer-Encoding` rule (`headers::is_chunked_`): a request
/// whose (last) `Transfer-Encoding` field does not end with the coding
/// `chunked` is refused by hyper (400); one that does has a chunked body,
/// whatever codings come before (those Tern refuses later, with 501:
/// `request::check_transfer_coding`).
pub(crate) fn ends_chunked(value: &[u8]) -> bool {
    trim_ows(value)
        .rsplit(|&b| b == b',')
        .next()
        .is_some_and(|last| trim_ows(last).eq_ignore_ascii_case(b"chunked"))
}

/// A field value without the optional whitespace (SP, HTAB) around it.
pub(crate) fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

// ---------------------------------------------------------------------
// The rules of Tern's own HTTP/1.1 codec (`server/h1/parse.rs`), in the
// order a head meets them. Each refusal closes the connection: nothing
// after a refused head can be trusted to start a request.
// ---------------------------------------------------------------------

/// Why the codec refuses a request head: the status, the metric reason
/// and the words of the problem+json answer (the words and reasons of
/// hyper's path and of `request::check_request` where they exist).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) reason: Reason,
    pub(crate) detail: Cow<'static, str>,
}

impl Refusal {
    fn new(status: StatusCode, reason: Reason, detail: &'static str) -> Self {
        Refusal {
            status,
            reason,
            detail: Cow::Borrowed(detail),
        }
    }

    /// A head that is not HTTP/1.1 (400): the words of hyper's path
    /// (`AppService::unparsable_answer`).
    pub(crate) fn parse() -> Self {
        Refusal::new(StatusCode::BAD_REQUEST, Reason::Parse, NOT_HTTP1)
    }

    /// A head over `TERN_MAX_HEAD_BYTES` or `TERN_MAX_HEADERS` (431).
    pub(crate) fn head_too_large() -> Self {
        Refusal::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Reason::HeadTooLarge,
            HEAD_TOO_LARGE,
        )
    }

    /// Framing or target rules (400), with their words.
    fn framing(detail: &'static str) -> Self {
        Refusal::new(StatusCode::BAD_REQUEST, Reason::Framing, detail)
    }
}

/// The words of a 400 for a head httparse or the scan refuses.
pub(crate) const NOT_HTTP1: &str = "the request is not a valid HTTP/1.1 request: it must start \
     with a request line `METHOD /path HTTP/1.1`, then header lines `Name: value`, each ended \
     by CRLF, then an empty line";

/// The words of a 431 (the limits' values are the configuration's; the
/// answer's renderer may add them).
pub(crate) const HEAD_TOO_LARGE: &str = "the request head is larger than the limit of \
     TERN_MAX_HEAD_BYTES bytes or has more than TERN_MAX_HEADERS header fields";

/// **Lines end in CRLF** (RFC 9112 §2.2), the codec's scan: a LF not
/// preceded by CR, anywhere in a head, is refused (400, close); so is a
/// bare CR (httparse). CRLF empty lines before the request line are
/// skipped, and counted toward `TERN_MAX_HEAD_BYTES` (so a client cannot
/// send them for ever); a bare LF there is refused like any other.
///
/// Why: a recipient MAY take a bare LF as a line end (httparse does); a
/// front end that does not reads `X: y\nContent-Length: 23` as one field
/// where Tern would read two, and the two disagree on where the next
/// request starts (smuggling). llhttp's strict mode refuses them too.
pub(crate) fn bare_lf() -> Refusal {
    Refusal::parse()
}

/// **Head limit, while reading**: a head whose end is not within the first
/// `max_head` bytes (leading empty lines included) is refused (431) as
/// soon as the buffer holds more than `max_head` bytes, before more is
/// read. A head of exactly `max_head` bytes is read.
#[inline]
pub(crate) fn head_over_limit(buffered: usize, max_head: usize) -> bool {
    buffered > max_head
}

/// **Request-target length**: a target longer than 65,534 bytes is refused
/// with 414 (hyper's `MAX_URI_LEN`; `http::Uri` holds no longer ones). Only
/// reachable when `TERN_MAX_HEAD_BYTES` is set above it.
pub(crate) const MAX_TARGET_LEN: usize = (u16::MAX - 1) as usize;

/// The refusal of a target over [`MAX_TARGET_LEN`].
pub(crate) fn target_too_long() -> Refusal {
    Refusal::new(
        StatusCode::URI_TOO_LONG,
        Reason::UriTooLong,
        "the request target (path and query) is too long",
    )
}

/// **No fragment** (RFC 9112 §3.2): no request-target form has one (a
/// client strips `#...` before sending); a target with `#` is refused
/// (400).
///
/// Why: `http::Uri` drops what follows `#`, so `/a#/../admin` would reach
/// the router as `/a` while a front end that keeps the bytes routes,
/// logs or caches something else; llhttp reads `http://h#x/p`'s host
/// differently again.
pub(crate) fn no_fragment(target: &[u8]) -> Result<(), Refusal> {
    if super::search::byte(target, b'#').is_some() {
        return Err(Refusal::framing(
            "the request target must not carry a fragment (`#`)",
        ));
    }
    Ok(())
}

/// **Request-target form** (RFC 9112 §3.2): origin form (`/path?q`) for
/// every method but `CONNECT`; absolute form (`http://host/path`) for any;
/// authority form (`host:port`) only, and always, for `CONNECT` (§3.2.3);
/// the asterisk `*` only for `OPTIONS` (§3.2.4); an absolute form's scheme
/// `http` or `https` (§3.2.2: the URIs this server can be the origin of;
/// `ht0tp://` is a valid scheme to `http::Uri` and not to llhttp). Anything
/// else: 400.
///
/// Why: the router would read a host as a path where a front end routes it
/// as the authority it is; llhttp's strict mode refuses both.
pub(crate) fn target_form(method: &Method, uri: &Uri) -> Result<(), Refusal> {
    let authority_form = uri.scheme().is_none() && uri.authority().is_some();
    if *method == Method::CONNECT {
        // RFC 9112 §3.2.3: `authority-form = uri-host ":" port`.
        if !authority_form || uri.port().is_none() {
            return Err(Refusal::framing(
                "a CONNECT request's target must be `host:port` (authority form)",
            ));
        }
        return Ok(());
    }
    if authority_form {
        return Err(Refusal::framing(
            "the request target must be a path starting with `/` or an absolute URL",
        ));
    }
    if let Some(scheme) = uri.scheme_str() {
        if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
            return Err(Refusal::framing(
                "an absolute request target must start with `http://` or `https://`",
            ));
        }
    }
    if uri.path() == "*" && uri.scheme().is_none() && *method != Method::OPTIONS {
        return Err(Refusal::framing(
            "the request target `*` is only for OPTIONS",
        ));
    }
    Ok(())
}

/// **One `Host`** (RFC 9112 §3.2): an HTTP/1.1 request carries exactly one
/// `Host` field, or none with an absolute-form target (which names the
/// host); an HTTP/1.0 request at most one. Else 400.
///
/// Why: a server MUST answer 400; with two, a front end that reads the
/// first and an app that reads the last route the request to different
/// hosts. The `uri-host` grammar and `ALLOWED_HOSTS` are checked later,
/// for every protocol (`protocol::host`, `app/head.rs`).
pub(crate) fn host_count(version: Version, hosts: usize, absolute: bool) -> Result<(), Refusal> {
    if hosts > 1 {
        return Err(Refusal::framing(
            "the request carries more than one `Host` header",
        ));
    }
    if hosts == 0 && version == Version::HTTP_11 && !absolute {
        return Err(Refusal::framing(
            "an HTTP/1.1 request must carry a `Host` header",
        ));
    }
    Ok(())
}

/// **`Content-Length`, repeated** (RFC 9110 §8.6, RFC 9112 §6.3): each
/// value is digits only ([`content_length`]: no sign, no list, no
/// overflow); fields repeating the same length are one length; differing
/// lengths are refused (400). `previous` is the length of the fields
/// before this one.
///
/// Why: two parsers that pick different lengths disagree on where the next
/// request starts. Identical repeats frame the body alike whichever is
/// read (llhttp refuses them: an allowlisted difference).
pub(crate) fn repeated_length(previous: Option<u64>, value: &[u8]) -> Result<u64, Refusal> {
    let Some(n) = content_length(value) else {
        return Err(Refusal::framing(
            "the `Content-Length` header must be one number of digits only",
        ));
    };
    match previous {
        Some(p) if p != n => Err(Refusal::framing(
            "the request carries `Content-Length` headers with different values",
        )),
        _ => Ok(n),
    }
}

/// **Declared length over the limit** (RFC 9110 §15.5.14): a
/// `Content-Length` over `TERN_MAX_BODY_BYTES` is refused (413) before a
/// byte of the body is read, and the connection closed (the unread body
/// stays on it).
pub(crate) fn declared_length(length: u64, max_body: u64) -> Result<(), Refusal> {
    if length > max_body {
        return Err(Refusal {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            reason: Reason::BodyTooLarge,
            detail: Cow::Owned(tern_core::body::too_large_detail(max_body)),
        });
    }
    Ok(())
}

/// **`Transfer-Encoding`** (RFC 9112 §6.1, §6.3), given the number of its
/// fields, the last field's value and whether `Content-Length` came too:
/// - on HTTP/1.0: 400 (§6.1: a server MUST treat it as faulty framing);
/// - with `Content-Length`: 400 (§6.3: "ought to be handled as an error";
///   hyper lets the coding win and closes after the answer, llhttp's strict
///   mode refuses, and so does Tern now: no reading of such a request can
///   agree with every front end);
/// - a last coding other than `chunked`: 400 (the body has no end);
/// - anything but one field naming only `chunked` (`gzip, chunked`, two
///   fields): 501, the words of `request::check_transfer_coding` (Tern
///   decodes only chunked).
pub(crate) fn transfer_coding(
    version: Version,
    fields: usize,
    last: &[u8],
    content_length: bool,
) -> Result<(), Refusal> {
    if version == Version::HTTP_10 {
        return Err(Refusal::framing(
            "`Transfer-Encoding` is not allowed in an HTTP/1.0 request",
        ));
    }
    if content_length {
        return Err(Refusal::framing(
            "the request carries both `Transfer-Encoding` and `Content-Length`",
        ));
    }
    if !ends_chunked(last) {
        return Err(Refusal::framing(
            "the last transfer coding of the request must be `chunked`",
        ));
    }
    if fields > 1 || !trim_ows(last).eq_ignore_ascii_case(b"chunked") {
        return Err(Refusal {
            status: StatusCode::NOT_IMPLEMENTED,
            reason: Reason::ContentCoding,
            detail: Cow::Borrowed(
                "only `Transfer-Encoding: chunked` is supported; send the body chunked or with a `Content-Length`",
            ),
        });
    }
    Ok(())
}

/// The tokens of the `Connection` fields the codec acts on (RFC 9110
/// §7.6.1: a comma-separated list of case-insensitive tokens; others are
/// names of hop-by-hop fields, ignored).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ConnectionTokens {
    pub(crate) close: bool,
    pub(crate) keep_alive: bool,
    pub(crate) upgrade: bool,
}

impl ConnectionTokens {
    /// Adds the tokens of one `Connection` field value.
    pub(crate) fn add(&mut self, value: &[u8]) {
        for token in value.split(|&b| b == b',').map(trim_ows) {
            if token.eq_ignore_ascii_case(b"close") {
                self.close = true;
            } else if token.eq_ignore_ascii_case(b"keep-alive") {
                self.keep_alive = true;
            } else if token.eq_ignore_ascii_case(b"upgrade") {
                self.upgrade = true;
            }
        }
    }

    /// **Persistence** (RFC 9112 §9.3): HTTP/1.1 keeps the connection
    /// unless `close`; HTTP/1.0 only with `keep-alive` (and no `close`).
    pub(crate) fn keep_alive(&self, version: Version) -> bool {
        !self.close && (version == Version::HTTP_11 || self.keep_alive)
    }
}

/// **`Expect: 100-continue`** (RFC 9110 §10.1.1): honoured on HTTP/1.1 only
/// (a server MUST ignore it from HTTP/1.0), the value compared
/// case-insensitively; other expectations are ignored, as hyper does.
/// Whether a comma-separated field value lists `token` (case-insensitive,
/// optional whitespace around each element; RFC 9110 §5.6.1), such as
/// `trailers` in `TE` (RFC 9110 §10.1.4: only then may an answer carry a
/// trailer section).
pub(crate) fn lists_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|element| trim_ows(element).eq_ignore_ascii_case(token))
}

pub(crate) fn expects_continue(version: Version, value: &[u8]) -> bool {
    version == Version::HTTP_11 && trim_ows(value).eq_ignore_ascii_case(b"100-continue")
}

/// **Upgrade** (RFC 9110 §7.8): a request asks for one with an `Upgrade`
/// field *and* the token `upgrade` in `Connection`, on HTTP/1.1 (a server
/// MUST ignore `Upgrade` from HTTP/1.0); `CONNECT` always does (RFC 9110
/// §9.3.6). The codec then parses nothing after the request until the
/// answer decides (101, or a 2xx to `CONNECT`, hands the bytes over).
pub(crate) fn asks_upgrade(
    method: &Method,
    version: Version,
    connection: ConnectionTokens,
    upgrade_field: bool,
) -> bool {
    *method == Method::CONNECT
        || (version == Version::HTTP_11 && connection.upgrade && upgrade_field)
}

/// The longest answer that can be hyper's own refusal. Every answer of
/// the app carries a request ID, and so is longer: for them the check
/// costs a length comparison.
pub(crate) const MAX_HYPER_REFUSAL: usize = 128;

/// Whether `buf`, a write hyper makes on an HTTP/1 connection, can be its
/// own refusal (then checked whole by [`hyper_refusal`]).
#[inline]
pub(crate) fn may_be_hyper_refusal(buf: &[u8]) -> bool {
    buf.len() <= MAX_HYPER_REFUSAL && buf.starts_with(b"HTTP/1.1 4")
}

/// hyper's own answer to a request head it cannot parse, recognised by its
/// bytes: `HTTP/1.1 400 Bad Request` (or 414, 431), then only
/// `connection: close`, `content-length: 0` and `date: ...`, and no body.
/// Returns the status and the `date` line. No answer of the app has this
/// shape: each carries a request ID.
///
/// Why by its bytes: hyper writes this answer itself
/// (`proto/h1/conn.rs`, `on_parse_error`, with `role.rs`'s `on_error`)
/// and then closes; neither the published hyper nor its builders offer a
/// hook to render or suppress it, and the service never sees the request.
/// Parsing heads ahead of hyper to answer first would be a second HTTP/1
/// parser that must agree with httparse on every byte (the disagreement
/// this module exists to prevent); patching hyper would reach only builds
/// inside this repository (`[patch]` does not reach an app's build). So
/// on `TERN_HTTP1=hyper` (the way back; Tern's own engine answers these
/// itself, `server/h1`) the watched
/// socket (`server/watchdog/io.rs`, `WatchedIo::replaces`) swaps these
/// bytes for `AppService::unparsable_answer`.
///
/// What pins the bytes: `tests::hyper_refusals_are_recognised` below runs
/// hyper's HTTP/1 server on malformed heads and checks that each refusal
/// (400, 414, 431) is recognised here; `tests/hostile.rs`
/// (`unparsable_requests_get_problem_json`) checks the replaced answer
/// over a socket. A hyper release that changes the bytes fails the first;
/// the client would then get hyper's bare answer, not a wrong one.
pub(crate) fn hyper_refusal(buf: &[u8]) -> Option<(http::StatusCode, &[u8])> {
    let head = buf.strip_suffix(b"\r\n\r\n")?;
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let status_line = lines.next()?;
    let status = http::StatusCode::from_bytes(status_line.get(9..12)?).ok()?;
    let mut date: &[u8] = &[];
    for line in lines {
        match line {
            b"connection: close" | b"content-length: 0" => {}
            _ if line.starts_with(b"date: ") => date = line,
            _ => return None,
        }
    }
    Some((status, date))
}

#[cfg(test)]
mod tests {
    use std::{convert::Infallible, time::Duration};

    use http_body_util::Empty;
    use hyper_util::rt::TokioIo;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// What hyper's HTTP/1 server (configured as Tern's is, with a head
    /// limit of `max_head` bytes) writes for `request`, up to its close.
    async fn hyper_answer(request: Vec<u8>, max_head: usize) -> Vec<u8> {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let service = hyper::service::service_fn(|_req: http::Request<_>| async {
            Ok::<_, Infallible>(http::Response::new(Empty::<bytes::Bytes>::new()))
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.max_buf_size(max_head).max_headers(100);
        tokio::spawn(async move {
            let _ = builder
                .serve_connection(TokioIo::new(server), service)
                .await;
        });
        client.write_all(&request).await.expect("write");
        let mut out = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), client.read_to_end(&mut out))
            .await
            .expect("hyper answers and closes within 5 s")
            .expect("read");
        out
    }

    #[tokio::test]
    async fn hyper_refusals_are_recognised() {
        let long_target = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(70_000));
        let big_head = format!(
            "GET / HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\n\r\n",
            "a".repeat(20_000)
        );
        // A target over 65,534 bytes is a 414 when the head limit
        // (`TERN_MAX_HEAD_BYTES`) lets it be read whole, a 431 otherwise.
        for (request, max_head, status) in [
            (b"HELLO THERE\r\n\r\n".to_vec(), 16 * 1024, 400),
            (
                b"GET / HTTP/1.1\r\nHost: a\r\nX: y\0\r\n\r\n".to_vec(),
                16 * 1024,
                400,
            ),
            (
                b"GET / HTTP/1.1\r\nbad header\r\n\r\n".to_vec(),
                16 * 1024,
                400,
            ),
            (long_target.into_bytes(), 128 * 1024, 414),
            (big_head.into_bytes(), 16 * 1024, 431),
        ] {
            let answer = hyper_answer(request, max_head).await;
            let text = String::from_utf8_lossy(&answer).into_owned();
            assert!(may_be_hyper_refusal(&answer), "{text}");
            let (got, date) = hyper_refusal(&answer).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(got.as_u16(), status, "{text}");
            assert!(date.starts_with(b"date: "), "{text}");
        }
    }

    #[test]
    fn an_answer_of_the_app_is_not_a_refusal() {
        let answer = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\nx-request-id: 1\r\ncontent-length: 0\r\n\r\n";
        assert!(may_be_hyper_refusal(answer));
        assert_eq!(hyper_refusal(answer), None);
        let with_body = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\nno";
        assert_eq!(hyper_refusal(with_body), None);
    }

    #[test]
    fn content_length_and_chunked_follow_hyper() {
        assert_eq!(content_length(b" 42\t"), Some(42));
        for bad in [
            &b""[..],
            b"+1",
            b"-1",
            b"1,1",
            b"0x10",
            b"18446744073709551616",
        ] {
            assert_eq!(content_length(bad), None, "{bad:?}");
        }
        assert!(ends_chunked(b"chunked"));
        assert!(ends_chunked(b"gzip, Chunked "));
        assert!(!ends_chunked(b"chunked, gzip"));
        assert!(!ends_chunked(b"chunkedx"));
    }
}
