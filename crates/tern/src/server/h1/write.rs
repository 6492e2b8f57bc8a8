//! The answer to an HTTP/1.x request, encoded into the connection's write
//! buffer (step 3 of `docs/plans/http1.md`, §1.5): the head with its
//! framing fields, then the body under the framing [`head`] chose.
//!
//! The write buffer is a `Vec<u8>`, not a `BytesMut`: what is written is
//! never split or shared (it goes to the socket and the buffer is
//! cleared), so `Vec`'s plain `extend_from_slice` is all it needs, and a
//! large body goes out beside it with a vectored write instead of into it
//! ([`COPY_MAX`]).
//!
//! # The head
//! - The status line comes whole from a static table for the common
//!   codes, else is formatted with the canonical reason phrase (or none:
//!   `HTTP/1.1 599 \r\n`, the reason being optional in RFC 9112 §4). An
//!   HTTP/1.0 request is answered `HTTP/1.0` (as hyper does: a 1.0 client
//!   may not read a 1.1 answer's features).
//! - The app's fields, one `name: value\r\n` per value, in the map's
//!   order, names lowercase as `HeaderName` holds them; except the framing
//!   fields `content-length`, `transfer-encoding` and `connection`, which
//!   the writer writes itself (below), and `trailer` when the body is not
//!   chunked (no trailer section can follow).
//! - The request ID, when the app left it to the writer ([`head`]'s
//!   `set`): after the app's fields, in place of any of its name.
//! - `date` ([`date`]) last, unless the app set one.
//!
//! # The framing (RFC 9112 §6, RFC 9110 §8.6)
//! | answer | fields written | [`Framing`] |
//! |---|---|---|
//! | 1xx, 204, 304 | none | `Empty` |
//! | 101, or 2xx to `CONNECT` (a tunnel follows) | none; the app's `connection` fields kept as they are (`connection: upgrade`) | `Empty` |
//! | to `HEAD` | `content-length` of the body's exact size if not 0, else the one the app declared (app/finish.rs lets an empty `HEAD` body declare `GET`'s length), else none | `Empty` |
//! | body of exact size n | `content-length: n` (also 0) | `Length(n)`, `Empty` if 0 |
//! | body of unknown size, the app declared `content-length: n` | `content-length: n` | `Length(n)`: the connection must stop at n and close if the body ends short |
//! | body of unknown size, HTTP/1.1 | `transfer-encoding: chunked` | `Chunked` |
//! | body of unknown size, HTTP/1.0 | none | `Close` (never chunked to 1.0) |
//!
//! A 304 never carries `content-length`, even one the app set: RFC 9110
//! §8.6 lets a 304 send the length a 200 would have had, but does not
//! require it, and a wrong one is a MUST NOT; hyper drops it too for a
//! 304 with an empty body. 1xx answers other than 101 cannot be the final
//! answer (the client would wait for another): such an answer becomes a
//! 500 with no body, as hyper does (only `100 Continue` is written as an
//! interim answer, [`CONTINUE`]).
//!
//! # Persistence
//! `connection: close` when the connection closes after this answer: the
//! connection said so ([`For::keep_alive`] false), the app's `connection`
//! field has `close` (`close_after_refusal`, the drain), or the body is
//! close-delimited. `connection: keep-alive` on an HTTP/1.0 answer whose
//! connection stays open (a 1.0 client closes otherwise). [`Written`] says
//! which it was.
//!
//! # Cost
//! One pass over the app's fields, each a handful of comparisons of
//! standard names and three copies; the date is a 39-byte copy; numbers
//! are formatted on the stack. No allocation once the buffer has grown to
//! the head's size (the pool's 8 KiB, §1.8).

// Used by the connection (step 4); the tests use every item meanwhile.
#![cfg_attr(not(test), allow(dead_code))]

pub(crate) mod date;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

use http::{header, response::Parts, HeaderMap, HeaderName, HeaderValue, StatusCode, Version};
use http_body::SizeHint;

use crate::protocol::h1::{self, ConnectionTokens};

/// The interim answer to `Expect: 100-continue` (RFC 9110 §10.1.1),
/// written before the body is read.
pub(crate) const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Body data of at most this many bytes is copied into the write buffer
/// after the head (one write per batch); larger data goes out with a
/// vectored write beside the buffer, not copied: for a chunked body,
/// [`chunk_prefix`] into the buffer, the data, then [`CHUNK_END`].
pub(crate) const COPY_MAX: usize = 16 * 1024;

/// What follows each chunk's data.
pub(crate) const CHUNK_END: &[u8] = b"\r\n";

/// The request method, as far as the answer's framing depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    /// The answer has no body, whatever its fields say.
    Head,
    /// A 2xx answer starts a tunnel: no body, no framing fields.
    Connect,
    /// Any other.
    Other,
}

impl Method {
    /// The framing-relevant kind of `method`.
    pub(crate) fn of(method: &http::Method) -> Method {
        if method == http::Method::HEAD {
            Method::Head
        } else if method == http::Method::CONNECT {
            Method::Connect
        } else {
            Method::Other
        }
    }
}

/// What the writer needs to know of the request an answer is for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct For {
    /// `HTTP_10` or `HTTP_11` (anything else is answered as 1.1).
    pub(crate) version: Version,
    pub(crate) method: Method,
    /// Whether the connection stays open after this answer, as the
    /// connection decided (the request's `Connection`, RFC 9112 §9.3; the
    /// drain; an unread body).
    pub(crate) keep_alive: bool,
}

/// How the body after a head is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Nothing follows: the app's body, if any, is not sent (1xx, 204,
    /// 304, `HEAD`, a tunnel's answer, or a body of 0 bytes).
    Empty,
    /// Exactly this many bytes follow, as they are ([`data`]).
    Length(u64),
    /// Chunks follow ([`data`], [`chunk_prefix`]), then [`end_chunked`].
    Chunked,
    /// The bytes follow as they are, and the end of the connection ends
    /// them: the connection closes after this answer.
    Close,
}

/// What [`head`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Written {
    /// The framing the connection must write the body under.
    pub(crate) framing: Framing,
    /// Whether the connection may stay open after the answer: false if
    /// the head said `connection: close` (the request's decision, the
    /// app's `connection: close`, or a close-delimited body).
    pub(crate) keep_alive: bool,
}

/// Writes the status line and fields of `parts` into `buf`, with
/// `size_hint` the body's; returns the framing the body must follow and
/// whether the connection stays open (see the module's tables).
///
/// The `date` written is this thread's cached one: the connection calls
/// [`date::tick`] at the start of each batch of answers, which reads the
/// clock (a thread that never ticked reads it on its first answer).
///
/// `set` is a field the answer carries as if inserted into its map (it
/// replaces the map's fields of its name): the request ID, which the app
/// leaves to the writer on this path (`ResponseFuture::take_request_id`)
/// rather than hash its name into the map. It is written after the
/// map's fields; its name passes [`may_set`].
pub(crate) fn head(
    buf: &mut Vec<u8>,
    parts: &Parts,
    size_hint: &SizeHint,
    req: &For,
    set: Option<(&HeaderName, &HeaderValue)>,
) -> Written {
    debug_assert!(set.is_none_or(|(name, _)| may_set(name)));
    let status = parts.status;
    if status.is_informational() && status != StatusCode::SWITCHING_PROTOCOLS {
        return interim_as_final(buf, req);
    }
    let http10 = req.version == Version::HTTP_10;
    let tunnel = status == StatusCode::SWITCHING_PROTOCOLS
        || (req.method == Method::Connect && status.is_success());
    let no_content =
        tunnel || status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED;

    // The framing and the `content-length` to write, if any.
    let (framing, length) = if no_content {
        (Framing::Empty, None)
    } else if req.method == Method::Head {
        let length = match size_hint.exact() {
            Some(n) if n > 0 => Some(n),
            _ => declared_length(&parts.headers),
        };
        (Framing::Empty, length)
    } else if let Some(n) = size_hint
        .exact()
        .or_else(|| declared_length(&parts.headers))
    {
        (
            if n == 0 {
                Framing::Empty
            } else {
                Framing::Length(n)
            },
            Some(n),
        )
    } else if http10 {
        (Framing::Close, None)
    } else {
        (Framing::Chunked, None)
    };

    buf.reserve(128 + 32 * parts.headers.len());
    status_line(buf, status, http10);

    let mut app_close = false;
    let mut has_date = false;
    let fields = parts.headers.iter();
    let fields = fields.filter(|(name, _)| set.is_none_or(|(set, _)| *name != set));
    for (name, value) in fields.chain(set) {
        if *name == header::CONTENT_LENGTH || *name == header::TRANSFER_ENCODING {
            continue;
        }
        if *name == header::CONNECTION {
            if tunnel {
                field(buf, name, value.as_bytes());
            } else {
                let mut tokens = ConnectionTokens::default();
                tokens.add(value.as_bytes());
                app_close |= tokens.close;
            }
            continue;
        }
        if *name == header::TRAILER && framing != Framing::Chunked {
            continue;
        }
        has_date |= *name == header::DATE;
        field(buf, name, value.as_bytes());
    }

    if let Some(n) = length {
        buf.extend_from_slice(b"content-length: ");
        decimal(buf, n);
        buf.extend_from_slice(b"\r\n");
    }
    if framing == Framing::Chunked {
        buf.extend_from_slice(b"transfer-encoding: chunked\r\n");
    }
    let keep_alive = req.keep_alive && !app_close && framing != Framing::Close;
    if !tunnel {
        if !keep_alive {
            buf.extend_from_slice(b"connection: close\r\n");
        } else if http10 {
            buf.extend_from_slice(b"connection: keep-alive\r\n");
        }
    }
    if has_date {
        buf.extend_from_slice(b"\r\n");
    } else {
        buf.extend_from_slice(&date::line());
    }
    Written {
        framing,
        keep_alive,
    }
}

/// Whether [`head`] writes a field of this name handed to it (`set`) as
/// the same field inserted into the answer's map: any name but those it
/// reads itself (framing, persistence, `date`). A field of such a name
/// goes into the map instead.
pub(crate) fn may_set(name: &HeaderName) -> bool {
    !matches!(
        *name,
        header::CONTENT_LENGTH
            | header::TRANSFER_ENCODING
            | header::CONNECTION
            | header::TRAILER
            | header::DATE
    )
}

/// Body data under `framing`: as it is for `Length` and `Close`; a chunk
/// for `Chunked` (nothing for empty data: an empty chunk would end the
/// body); nothing for `Empty`.
pub(crate) fn data(buf: &mut Vec<u8>, framing: Framing, data: &[u8]) {
    match framing {
        Framing::Empty => {}
        Framing::Length(_) | Framing::Close => buf.extend_from_slice(data),
        Framing::Chunked => {
            if !data.is_empty() {
                chunk_prefix(buf, data.len());
                buf.extend_from_slice(data);
                buf.extend_from_slice(CHUNK_END);
            }
        }
    }
}

/// The size line of a chunk of `len` bytes (`len` > 0), written alone:
/// the data and [`CHUNK_END`] follow, from elsewhere (a vectored write).
pub(crate) fn chunk_prefix(buf: &mut Vec<u8>, len: usize) {
    debug_assert!(len > 0, "a chunk of 0 bytes ends the body");
    let mut digits = [0u8; 16];
    let mut at = digits.len();
    let mut n = len as u64;
    loop {
        at -= 1;
        digits[at] = b"0123456789abcdef"[(n & 0xf) as usize];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
    buf.extend_from_slice(b"\r\n");
}

/// The end of a chunked body: the last chunk, the trailer fields, the
/// empty line. `trailers` is `None` unless the request accepts them
/// ([`accepts_trailers`]); fields that RFC 9110 §6.5.1 keeps out of a
/// trailer section (framing, routing, authentication, the ones whose
/// meaning changes the processing of the content, as hyper's list) are
/// dropped.
pub(crate) fn end_chunked(buf: &mut Vec<u8>, trailers: Option<&HeaderMap>) {
    buf.extend_from_slice(b"0\r\n");
    for (name, value) in trailers.into_iter().flat_map(HeaderMap::iter) {
        if allowed_in_trailers(name) {
            field(buf, name, value.as_bytes());
        }
    }
    buf.extend_from_slice(b"\r\n");
}

/// Whether a request's `TE` field lists `trailers` (RFC 9110 §10.1.4):
/// only then is a trailer section sent.
pub(crate) fn accepts_trailers(request: &HeaderMap) -> bool {
    request
        .get_all(header::TE)
        .iter()
        .any(|value| h1::lists_token(value.as_bytes(), b"trailers"))
}

/// hyper's list of fields not sent in a trailer section
/// (`is_valid_trailer_field`, hyper 1.12 proto/h1/encode.rs).
fn allowed_in_trailers(name: &HeaderName) -> bool {
    !matches!(
        *name,
        header::AUTHORIZATION
            | header::CACHE_CONTROL
            | header::CONTENT_ENCODING
            | header::CONTENT_LENGTH
            | header::CONTENT_RANGE
            | header::CONTENT_TYPE
            | header::HOST
            | header::MAX_FORWARDS
            | header::SET_COOKIE
            | header::TRAILER
            | header::TRANSFER_ENCODING
            | header::TE
    )
}

/// The length the app's `content-length` fields declare: `None` if there
/// is none, if one is not a length (RFC 9110 §8.6, the request rule of
/// [`h1::content_length`]), or if they disagree.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    let mut declared = None;
    for value in headers.get_all(header::CONTENT_LENGTH) {
        let n = h1::content_length(value.as_bytes())?;
        if declared.is_some_and(|d| d != n) {
            return None;
        }
        declared = Some(n);
    }
    declared
}

/// A 1xx other than 101 as the final answer: the client would wait for
/// another, so a 500 with no body goes instead (hyper's answer).
fn interim_as_final(buf: &mut Vec<u8>, req: &For) -> Written {
    tracing::warn!("a handler answered with an interim (1xx) status: answering 500 instead");
    let http10 = req.version == Version::HTTP_10;
    status_line(buf, StatusCode::INTERNAL_SERVER_ERROR, http10);
    buf.extend_from_slice(b"content-length: 0\r\n");
    if !req.keep_alive {
        buf.extend_from_slice(b"connection: close\r\n");
    } else if http10 {
        buf.extend_from_slice(b"connection: keep-alive\r\n");
    }
    buf.extend_from_slice(&date::line());
    Written {
        framing: Framing::Empty,
        keep_alive: req.keep_alive,
    }
}

/// `name: value\r\n`.
#[inline]
fn field(buf: &mut Vec<u8>, name: &HeaderName, value: &[u8]) {
    buf.extend_from_slice(name.as_str().as_bytes());
    buf.extend_from_slice(b": ");
    buf.extend_from_slice(value);
    buf.extend_from_slice(b"\r\n");
}

/// `n` in decimal.
fn decimal(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}

/// The status line, whole from [`known_line`] when the code is there.
fn status_line(buf: &mut Vec<u8>, status: StatusCode, http10: bool) {
    let start = buf.len();
    match known_line(status) {
        Some(line) => buf.extend_from_slice(line),
        None => formatted_line(buf, status),
    }
    if http10 {
        // `HTTP/1.1` → `HTTP/1.0`: the table's lines and the formatted ones
        // all start with `HTTP/1.1 `.
        buf[start + 7] = b'0';
    }
}

/// The general status line: `HTTP/1.1 <code> <canonical reason>\r\n`.
fn formatted_line(buf: &mut Vec<u8>, status: StatusCode) {
    buf.extend_from_slice(b"HTTP/1.1 ");
    buf.extend_from_slice(status.as_str().as_bytes());
    buf.push(b' ');
    buf.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
    buf.extend_from_slice(b"\r\n");
}

/// The whole status line of the codes apps answer most, `None` for the
/// others (formatted by [`formatted_line`]).
#[inline]
fn known_line(status: StatusCode) -> Option<&'static [u8]> {
    Some(match status.as_u16() {
        101 => b"HTTP/1.1 101 Switching Protocols\r\n",
        200 => b"HTTP/1.1 200 OK\r\n",
        201 => b"HTTP/1.1 201 Created\r\n",
        202 => b"HTTP/1.1 202 Accepted\r\n",
        204 => b"HTTP/1.1 204 No Content\r\n",
        206 => b"HTTP/1.1 206 Partial Content\r\n",
        301 => b"HTTP/1.1 301 Moved Permanently\r\n",
        302 => b"HTTP/1.1 302 Found\r\n",
        303 => b"HTTP/1.1 303 See Other\r\n",
        304 => b"HTTP/1.1 304 Not Modified\r\n",
        307 => b"HTTP/1.1 307 Temporary Redirect\r\n",
        308 => b"HTTP/1.1 308 Permanent Redirect\r\n",
        400 => b"HTTP/1.1 400 Bad Request\r\n",
        401 => b"HTTP/1.1 401 Unauthorized\r\n",
        403 => b"HTTP/1.1 403 Forbidden\r\n",
        404 => b"HTTP/1.1 404 Not Found\r\n",
        405 => b"HTTP/1.1 405 Method Not Allowed\r\n",
        406 => b"HTTP/1.1 406 Not Acceptable\r\n",
        408 => b"HTTP/1.1 408 Request Timeout\r\n",
        409 => b"HTTP/1.1 409 Conflict\r\n",
        412 => b"HTTP/1.1 412 Precondition Failed\r\n",
        413 => b"HTTP/1.1 413 Payload Too Large\r\n",
        414 => b"HTTP/1.1 414 URI Too Long\r\n",
        415 => b"HTTP/1.1 415 Unsupported Media Type\r\n",
        416 => b"HTTP/1.1 416 Range Not Satisfiable\r\n",
        422 => b"HTTP/1.1 422 Unprocessable Entity\r\n",
        429 => b"HTTP/1.1 429 Too Many Requests\r\n",
        431 => b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
        500 => b"HTTP/1.1 500 Internal Server Error\r\n",
        501 => b"HTTP/1.1 501 Not Implemented\r\n",
        502 => b"HTTP/1.1 502 Bad Gateway\r\n",
        503 => b"HTTP/1.1 503 Service Unavailable\r\n",
        504 => b"HTTP/1.1 504 Gateway Timeout\r\n",
        _ => return None,
    })
}
