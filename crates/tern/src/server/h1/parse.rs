//! The head of an HTTP/1.1 request: scanned, parsed and checked (step 1 of
//! `docs/plans/http1.md`, §1.1), in three stages, each linear in the bytes:
//!
//! 1. [`Scan`]: from where the last read stopped, a search for each LF. A
//!    bare LF is refused; CRLF empty lines before the request line are
//!    skipped; the empty line after it ends the head; a head whose end is
//!    not within `TERN_MAX_HEAD_BYTES` is refused (431) as soon as more is
//!    buffered, before more is read.
//! 2. httparse, once, on the whole head (never on a partial one, so a
//!    client sending one byte per read costs one parse, not one per read):
//!    strict defaults (one SP in the request line, tokens, no bare CR, no
//!    obs-fold), headers into a stack array of `TERN_MAX_HEADERS`.
//! 3. [`head`]: one pass building the `http` types on slices of the one
//!    frozen `Bytes` of the head (no copy per field) and collecting the
//!    framing facts the rules of [`crate::protocol::h1`] decide on.
//!
//! [`Verdict`] drives the three over a pipelined byte stream for the
//! fuzz target and the differential against llhttp
//! (`tern::__fuzz::H1::verdict`, `examples/h1_verdict.rs`,
//! `hardening/differential.py`).

use std::mem::MaybeUninit;

use bytes::{Bytes, BytesMut};
use http::{header, HeaderMap, HeaderName, HeaderValue, Method, Uri, Version};

use super::body;
use crate::protocol::{
    h1::{self, ConnectionTokens, Refusal},
    search,
};

/// The limits the head is read under (`TERN_MAX_HEAD_BYTES`,
/// `TERN_MAX_HEADERS`, `TERN_MAX_BODY_BYTES`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_head: usize,
    pub(crate) max_headers: usize,
    pub(crate) max_body: u64,
}

impl From<&crate::config::Limits> for Limits {
    fn from(l: &crate::config::Limits) -> Self {
        Limits {
            max_head: l.max_head_bytes,
            max_headers: l.max_headers,
            max_body: l.max_body_bytes,
        }
    }
}

/// The incremental scan of one head: where it stopped, so that each byte
/// is looked at once however the head arrives. Offsets are from the start
/// of the buffer the head begins at; a new head takes a fresh `Scan`.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// The next byte to look at.
    at: usize,
    /// The start of the line being read.
    line: usize,
    /// The start of the request line, once a non-empty line was seen.
    start: Option<usize>,
}

/// What a scan found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scanned {
    /// No end of head yet, and everything buffered is within the limit.
    Partial,
    /// A whole head: the request line starts at `start` (before it, only
    /// skipped CRLF empty lines) and the empty line ending it ends at `end`.
    Head { start: usize, end: usize },
}

impl Scan {
    /// Looks at the bytes of `buf` not seen yet (`buf` is the buffer of
    /// the last call with more bytes appended).
    pub(crate) fn next(&mut self, buf: &[u8], max_head: usize) -> Result<Scanned, Refusal> {
        // The end of a head within the limit lies in the first `max_head`
        // bytes: nothing past them needs a look.
        let window = buf.len().min(max_head);
        while self.at < window {
            let Some(i) = search::byte(&buf[self.at..window], b'\n') else {
                self.at = window;
                break;
            };
            let lf = self.at + i;
            self.at = lf + 1;
            if lf == self.line || buf[lf - 1] != b'\r' {
                return Err(h1::bare_lf());
            }
            let line = self.line;
            self.line = lf + 1;
            if lf - 1 > line {
                self.start.get_or_insert(line);
            } else if let Some(start) = self.start {
                return Ok(Scanned::Head { start, end: lf + 1 });
            }
        }
        if h1::head_over_limit(buf.len(), max_head) {
            return Err(Refusal::head_too_large());
        }
        Ok(Scanned::Partial)
    }

    /// Whether the `len` bytes scanned are nothing but skipped empty lines
    /// (no request begun: a connection may end there).
    pub(crate) fn idle(&self, len: usize) -> bool {
        self.start.is_none() && self.line == len
    }
}

/// How the request's body is framed (RFC 9112 §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No `Content-Length`, no `Transfer-Encoding`: no body.
    None,
    /// `Content-Length: n`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// A request head the codec accepted: the `http` types, and the facts the
/// connection acts on. Every rule of [`crate::protocol::h1`] holds for it,
/// so the app's `check_head` need not run again (§1.1's `checked` flag).
#[derive(Debug)]
pub(crate) struct Head {
    pub(crate) method: Method,
    pub(crate) uri: Uri,
    pub(crate) version: Version,
    pub(crate) headers: HeaderMap,
    pub(crate) framing: Framing,
    /// The connection stays open after the answer (RFC 9112 §9.3).
    pub(crate) keep_alive: bool,
    /// `Expect: 100-continue` on HTTP/1.1.
    pub(crate) expect_continue: bool,
    /// `Connection: upgrade` with `Upgrade` on HTTP/1.1, or `CONNECT`:
    /// nothing after this request is parsed until its answer decides.
    pub(crate) upgrade: bool,
    /// `TE` lists `trailers`: the answer may carry a trailer section.
    pub(crate) te_trailers: bool,
}

impl Head {
    /// The head as `http::request::Parts`, for `Request::from_parts`.
    pub(crate) fn into_parts(self) -> http::request::Parts {
        let (mut parts, ()) = http::Request::new(()).into_parts();
        parts.method = self.method;
        parts.uri = self.uri;
        parts.version = self.version;
        // The default map it replaces owns no memory (`HeaderMap::new`
        // allocates nothing): forgotten, not dropped, it costs nothing
        // (a drop walks its empty parts, ~60 instructions).
        std::mem::forget(std::mem::replace(&mut parts.headers, self.headers));
        parts
    }
}

/// The longest `Host` value a connection keeps for its next request (a
/// name of at most 253 bytes and a port).
const MAX_KEPT_HOST: usize = 260;

/// Field slots on the stack: `TERN_MAX_HEADERS`' default. A larger setting
/// takes a vector per head (the configuration's choice).
const STACK_FIELDS: usize = 100;

/// Parses and checks one whole head (`bytes`: the request line through the
/// empty line, as [`Scan`] found it, frozen): httparse, then the build
/// pass. `Err` is the answer (and the connection's end).
pub(crate) fn head(bytes: &Bytes, limits: &Limits) -> Result<Head, Refusal> {
    head_with(bytes, limits, &mut None)
}

/// [`head`], with the connection's last `Host` value in `host`: a request
/// that names the same host (nearly every request of a connection does)
/// shares that value instead of checking and cutting its bytes again
/// (~200 instructions). The kept value is a copy, so it holds on to no
/// read buffer; boxed, so that a connection that waits is no larger.
pub(crate) fn head_with(
    bytes: &Bytes,
    limits: &Limits,
    host: &mut Option<Box<HeaderValue>>,
) -> Result<Head, Refusal> {
    let mut stack = [MaybeUninit::<httparse::Header<'_>>::uninit(); STACK_FIELDS];
    let mut heap;
    let slots: &mut [MaybeUninit<httparse::Header<'_>>] = if limits.max_headers <= STACK_FIELDS {
        &mut stack[..limits.max_headers]
    } else {
        heap = vec![MaybeUninit::uninit(); limits.max_headers];
        &mut heap
    };
    let mut req = httparse::Request::new(&mut []);
    match req.parse_with_uninit_headers(bytes, slots) {
        // The scan found the empty line that ends the head: httparse must
        // end there too, or the head is not one it reads as we do.
        Ok(httparse::Status::Complete(n)) if n == bytes.len() => {}
        Ok(_) => return Err(Refusal::parse()),
        Err(httparse::Error::TooManyHeaders) => return Err(Refusal::head_too_large()),
        Err(_) => return Err(Refusal::parse()),
    }
    let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version) else {
        return Err(Refusal::parse());
    };
    let method = Method::from_bytes(method.as_bytes()).map_err(|_| Refusal::parse())?;
    let version = match version {
        0 => Version::HTTP_10,
        1 => Version::HTTP_11,
        _ => return Err(Refusal::parse()),
    };
    if target.len() > h1::MAX_TARGET_LEN {
        return Err(h1::target_too_long());
    }
    h1::no_fragment(target.as_bytes())?;
    let uri =
        Uri::from_maybe_shared(bytes.slice_ref(target.as_bytes())).map_err(|_| Refusal::parse())?;

    let mut headers =
        super::buf::take_map(req.headers.len()).map_err(|_| Refusal::head_too_large())?;
    let mut length: Option<u64> = None;
    let mut codings = 0usize;
    let mut last_coding: &[u8] = b"";
    let mut hosts = 0usize;
    let mut connection = ConnectionTokens::default();
    let mut expect_continue = false;
    let mut upgrade_field = false;
    let mut te_trailers = false;
    for field in req.headers.iter() {
        let name = HeaderName::from_bytes(field.name.as_bytes()).map_err(|_| Refusal::parse())?;
        if name == header::CONTENT_LENGTH {
            length = Some(h1::repeated_length(length, field.value)?);
        } else if name == header::TRANSFER_ENCODING {
            codings += 1;
            last_coding = field.value;
        } else if name == header::HOST {
            hosts += 1;
            if let Some(same) = host.as_deref().filter(|h| h.as_bytes() == field.value) {
                headers
                    .try_append(name, same.clone())
                    .map_err(|_| Refusal::head_too_large())?;
                continue;
            }
            if hosts == 1 && field.value.len() <= MAX_KEPT_HOST {
                if let Ok(value) = HeaderValue::from_bytes(field.value) {
                    match host {
                        Some(kept) => **kept = value,
                        None => *host = Some(Box::new(value)),
                    }
                }
            }
        } else if name == header::CONNECTION {
            connection.add(field.value);
        } else if name == header::EXPECT {
            expect_continue |= h1::expects_continue(version, field.value);
        } else if name == header::UPGRADE {
            upgrade_field = true;
        } else if name == header::TE {
            te_trailers |= h1::lists_token(field.value, b"trailers");
        }
        let value = HeaderValue::from_maybe_shared(bytes.slice_ref(field.value))
            .map_err(|_| Refusal::parse())?;
        headers
            .try_append(name, value)
            .map_err(|_| Refusal::head_too_large())?;
    }

    let framing = if codings > 0 {
        h1::transfer_coding(version, codings, last_coding, length.is_some())?;
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::None
    };
    h1::target_form(&method, &uri)?;
    h1::host_count(version, hosts, uri.scheme().is_some())?;
    if let Framing::Length(n) = framing {
        h1::declared_length(n, limits.max_body)?;
    }
    let upgrade = h1::asks_upgrade(&method, version, connection, upgrade_field);
    Ok(Head {
        method,
        uri,
        version,
        headers,
        framing,
        keep_alive: connection.keep_alive(version),
        expect_continue,
        upgrade,
        te_trailers,
    })
}

// ---------------------------------------------------------------------
// The verdict on a byte stream: the codec's head parsing over pipelined
// requests, for the fuzz target and the differential against llhttp.
// ---------------------------------------------------------------------

/// One request of a [`Verdict`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Message {
    /// Where the message starts in the input (the empty lines before its
    /// request line included).
    pub(crate) at: usize,
    pub(crate) method: String,
    pub(crate) target: String,
    pub(crate) fields: usize,
    pub(crate) body: u64,
    /// `Expect: 100-continue` (HTTP/1.1).
    pub(crate) expect: bool,
}

/// How a byte stream ends for the codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// At a message boundary: nothing, or only skipped empty lines, after
    /// the last message.
    Valid,
    /// A refusal with this status; nothing after it is read.
    Invalid(u16),
    /// A head or body not finished when the bytes end.
    Incomplete,
    /// The last message asked for an upgrade (or is `CONNECT`): nothing
    /// after it is parsed before its answer.
    Upgrade,
    /// The last message closes the connection (`Connection: close`,
    /// HTTP/1.0 without keep-alive) and bytes follow it, never read.
    Closed,
}

impl End {
    fn name(self) -> &'static str {
        match self {
            End::Valid => "valid",
            End::Invalid(_) => "invalid",
            End::Incomplete => "incomplete",
            End::Upgrade => "upgrade",
            End::Closed => "closed",
        }
    }
}

/// What the codec makes of a byte stream: the requests it reads, in
/// order, and how the stream ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) messages: Vec<Message>,
    pub(crate) end: End,
    /// The bytes of the input the complete messages take (their heads,
    /// the empty lines before them, their bodies): where the refused or
    /// the unfinished message starts. Nothing after a refused message is
    /// ever read.
    pub(crate) read: usize,
}

impl Verdict {
    /// The verdict on `input` delivered in reads cut at `cuts` (offsets,
    /// in order; the way a socket delivers it).
    pub(crate) fn of(input: &[u8], cuts: &[usize], limits: Limits) -> Verdict {
        let mut reader = Reader {
            buf: BytesMut::new(),
            state: State::Head(Scan::default()),
            limits,
            messages: Vec::new(),
            read: 0,
        };
        let mut at = 0;
        for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
            let cut = cut.clamp(at, input.len());
            reader.feed(&input[at..cut]);
            at = cut;
            if let State::Done(_) = reader.state {
                break;
            }
        }
        reader.finish()
    }

    /// One JSON line: `{"state", "status", "messages": [{"at", "method",
    /// "target", "fields", "body"}], "read"}`.
    pub(crate) fn to_json(&self) -> String {
        let status = match self.end {
            End::Invalid(s) => serde_json::Value::from(s),
            _ => serde_json::Value::Null,
        };
        serde_json::json!({
            "state": self.end.name(),
            "status": status,
            "messages": self.messages.iter().map(|m| serde_json::json!({
                "at": m.at,
                "method": m.method,
                "target": m.target,
                "fields": m.fields,
                "body": m.body,
                "expect": m.expect,
            })).collect::<Vec<_>>(),
            "read": self.read,
        })
        .to_string()
    }
}

enum State {
    Head(Scan),
    /// A body, through the connection's decoder (`server/h1/body.rs`).
    Body {
        decoder: body::Decoder,
        message: Message,
        after: After,
        /// The head's bytes and the body's so far: what the message takes.
        len: usize,
    },
    /// A message that closes the connection is complete.
    Closing,
    Done(End),
}

/// What follows a complete message.
#[derive(Clone, Copy)]
enum After {
    Next,
    Close,
    Upgrade,
}

/// A connection's reading, without a socket: the buffer a socket fills,
/// split as the connection will split it.
struct Reader {
    buf: BytesMut,
    state: State,
    limits: Limits,
    messages: Vec<Message>,
    read: usize,
}

impl Reader {
    fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        loop {
            match &mut self.state {
                State::Done(_) => return,
                State::Closing => {
                    if !self.buf.is_empty() {
                        self.state = State::Done(End::Closed);
                    }
                    return;
                }
                State::Head(scan) => match scan.next(&self.buf, self.limits.max_head) {
                    Ok(Scanned::Partial) => return,
                    Err(refusal) => {
                        self.state = State::Done(End::Invalid(refusal.status.as_u16()));
                        return;
                    }
                    Ok(Scanned::Head { start, end }) => {
                        let bytes = self.buf.split_to(end).freeze().slice(start..);
                        match head(&bytes, &self.limits) {
                            Err(refusal) => {
                                self.state = State::Done(End::Invalid(refusal.status.as_u16()));
                                return;
                            }
                            Ok(head) => self.start_body(head, end),
                        }
                    }
                },
                State::Body {
                    decoder,
                    message,
                    len,
                    ..
                } => {
                    let before = self.buf.len();
                    let event = decoder.decode(&mut self.buf);
                    *len += before - self.buf.len();
                    match event {
                        Err(error) => {
                            self.state = State::Done(End::Invalid(error.status().as_u16()));
                            return;
                        }
                        Ok(None) => return,
                        Ok(Some(body::Event::Data(data))) => {
                            message.body += data.len() as u64;
                            continue;
                        }
                        Ok(Some(body::Event::Trailers(_))) => continue,
                        Ok(Some(body::Event::End)) => {}
                    }
                    let State::Body {
                        message,
                        after,
                        len,
                        ..
                    } = std::mem::replace(&mut self.state, State::Closing)
                    else {
                        unreachable!("matched above")
                    };
                    self.complete(message, after, len);
                }
            }
        }
    }

    fn start_body(&mut self, head: Head, head_len: usize) {
        let at = self.read;
        let after = if head.upgrade {
            After::Upgrade
        } else if head.keep_alive {
            After::Next
        } else {
            After::Close
        };
        let framing = head.framing;
        let fields = head.headers.len();
        let expect = head.expect_continue;
        let parts = head.into_parts();
        let message = Message {
            at,
            method: parts.method.as_str().to_owned(),
            target: parts.uri.to_string(),
            fields,
            body: 0,
            expect,
        };
        let limits = body::Limits {
            max_body: self.limits.max_body,
            max_trailer_bytes: self.limits.max_head,
            max_trailer_fields: self.limits.max_headers,
        };
        let decoder = match framing {
            // CONNECT's bytes after the head, if any, are the tunnel's
            // (RFC 9110 §9.3.6).
            _ if parts.method == Method::CONNECT => None,
            Framing::Length(n) if n > 0 => Some(body::Decoder::length(n, limits)),
            Framing::Chunked => Some(body::Decoder::chunked(limits)),
            Framing::Length(_) | Framing::None => None,
        };
        match decoder {
            Some(decoder) => {
                self.state = State::Body {
                    decoder,
                    message,
                    after,
                    len: head_len,
                };
            }
            None => self.complete(message, after, head_len),
        }
    }

    fn complete(&mut self, message: Message, after: After, len: usize) {
        self.read += len;
        self.messages.push(message);
        self.state = match after {
            After::Next => State::Head(Scan::default()),
            After::Close => State::Closing,
            After::Upgrade => State::Done(End::Upgrade),
        };
    }

    fn finish(self) -> Verdict {
        let end = match self.state {
            State::Done(end) => end,
            State::Closing => End::Valid,
            State::Head(scan) if scan.idle(self.buf.len()) => End::Valid,
            State::Head(_) | State::Body { .. } => End::Incomplete,
        };
        Verdict {
            messages: self.messages,
            end,
            read: self.read,
        }
    }
}

impl crate::__fuzz::H1 {
    /// The verdict of Tern's HTTP/1.1 codec on `input` delivered in reads
    /// cut at `cuts`, under `limits`, as one JSON line: `state` (`valid`,
    /// `invalid` with `status`, `incomplete`, `upgrade`, `closed`),
    /// `messages` (each `method`, `target`, `fields`, `body`
    /// length) and `read` (the bytes those messages take). Not a public
    /// API: for the `h1_parse` fuzz target and `examples/h1_verdict.rs`.
    pub fn verdict(input: &[u8], cuts: &[usize], limits: &crate::config::Limits) -> String {
        Verdict::of(input, cuts, limits.into()).to_json()
    }

    /// The `h1_parse` fuzz target's check, also run over the seed corpus
    /// (`hardening/corpus/h1/`) by the unit tests: under Tern's default
    /// limits and under small ones (so that short inputs reach them), the
    /// verdict on `input` is the same whole, cut at `cuts`, and (inputs up
    /// to 512 bytes) cut at every offset and into single bytes; and what
    /// the verdict read is a stream of its own with the same messages, so
    /// nothing after a refused, unfinished or closing message was taken.
    /// Panics on a violation.
    pub fn check(input: &[u8], cuts: &[usize]) {
        let small = Limits {
            max_head: 256,
            max_headers: 8,
            max_body: 1024,
        };
        for limits in [(&crate::config::Limits::default()).into(), small] {
            let whole = Verdict::of(input, &[], limits);
            assert_eq!(Verdict::of(input, cuts, limits), whole, "cut at {cuts:?}");
            if input.len() <= 512 {
                for cut in 0..=input.len() {
                    assert_eq!(Verdict::of(input, &[cut], limits), whole, "cut at {cut}");
                }
                let bytes: Vec<usize> = (1..input.len()).collect();
                assert_eq!(Verdict::of(input, &bytes, limits), whole, "byte by byte");
            }
            assert!(whole.read <= input.len());
            let read = Verdict::of(&input[..whole.read], &[], limits);
            assert_eq!(read.messages, whole.messages, "the bytes read alone");
            let end = if whole.end == End::Upgrade {
                End::Upgrade
            } else {
                End::Valid
            };
            assert_eq!(read.end, end, "the bytes read alone");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_head: 16 * 1024,
        max_headers: 100,
        max_body: 2 * 1024 * 1024,
    };

    fn verdict(input: &[u8]) -> Verdict {
        Verdict::of(input, &[], LIMITS)
    }

    fn state(input: &[u8]) -> (End, usize) {
        let v = verdict(input);
        (v.end, v.messages.len())
    }

    /// What the whole head rules answer, one row per rule of
    /// `protocol::h1` (and httparse's defaults): bytes → (end, messages).
    #[test]
    fn each_rule_on_its_rows() {
        use End::*;
        let rows: &[(&[u8], End, usize)] = &[
            // Well-formed.
            (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", Valid, 1),
            (b"GET / HTTP/1.0\r\n\r\n", Valid, 1),
            (b"GET /a?b=c HTTP/1.1\r\nHost: a\r\nX: \r\n\r\n", Valid, 1),
            (b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", Valid, 1),
            (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n\r\n", Valid, 1),
            (b"", Valid, 0),
            (b"\r\n", Valid, 0),
            // §2.2: bare LF anywhere, bare CR (httparse).
            (b"GET / HTTP/1.1\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.1\r\nHost: a\r\n\n", Invalid(400), 0),
            (b"\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.1\r\nHost: a\r\r\n\r\n", Invalid(400), 0),
            (b"\r\rGET / HTTP/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            // §2.2, §5.1: whitespace before the first field, before a colon.
            (b"GET / HTTP/1.1\r\n Host: a\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.1\r\nHost : a\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.1\r\nHost: a\r\nNo colon\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.1\r\nHost: a\r\n: v\r\n\r\n", Invalid(400), 0),
            // §3: one SP, a version of 1.0 or 1.1.
            (b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.2\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"GET / http/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            // §5: names are tokens; values hold no CTL.
            (b"GET / HTTP/1.1\r\nHost: a\r\nX\x00: v\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fb\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\tb\r\n\r\n", Valid, 1),
            // §5.2: obs-fold.
            (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", Invalid(400), 0),
            // §3.2: Host.
            (b"GET / HTTP/1.1\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", Invalid(400), 0),
            (b"GET http://a/x HTTP/1.1\r\n\r\n", Valid, 1),
            (b"GET http://a/x HTTP/1.1\r\nHost: a\r\n\r\n", Valid, 1),
            // §3.2.3-4: target forms.
            (b"GET a:80 HTTP/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"CONNECT a:80 HTTP/1.1\r\nHost: a:80\r\n\r\n", Upgrade, 1),
            (b"CONNECT /x HTTP/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"CONNECT a HTTP/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"GET * HTTP/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", Valid, 1),
            (b"GET HTTPS://a/ HTTP/1.1\r\n\r\n", Valid, 1),
            (b"GET ht0tp://a/ HTTP/1.1\r\n\r\n", Invalid(400), 0),
            (b"GET ftp://a/ HTTP/1.1\r\n\r\n", Invalid(400), 0),
            // §3.2: no fragment.
            (b"GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", Invalid(400), 0),
            (b"GET http://a#b/ HTTP/1.1\r\n\r\n", Invalid(400), 0),
            // §6.3: Content-Length.
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc", Valid, 1),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 03\r\n\r\nabc", Valid, 1),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", Valid, 1),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x3\r\n\r\nabc", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551616\r\n\r\n", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2097153\r\n\r\n", Invalid(413), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nabc", Incomplete, 0),
            // §6.1, §6.3: Transfer-Encoding.
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", Valid, 1),
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked \r\n\r\n", Incomplete, 0),
            // §7.1: chunked bodies, through the body decoder.
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX: 1\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", Valid, 2),
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n300000\r\n", Invalid(413), 0),
            (b"CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\nContent-Length: 3\r\n\r\nabc", Upgrade, 1),
            (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n", Invalid(400), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", Invalid(501), 0),
            (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", Invalid(501), 0),
            // §9.3: persistence; RFC 9110 §7.6.1: Connection tokens.
            (b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\n", Closed, 1),
            (b"GET / HTTP/1.1\r\nHost: a\r\nConnection: x, CLOSE\r\n\r\nGET", Closed, 1),
            (b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", Valid, 1),
            (b"GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\n", Closed, 1),
            (b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n", Valid, 2),
            // RFC 9110 §7.8: upgrades.
            (b"GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: ws\r\n\r\nxyz", Upgrade, 1),
            (b"GET / HTTP/1.1\r\nHost: a\r\nUpgrade: ws\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", Valid, 2),
            (b"GET / HTTP/1.0\r\nConnection: upgrade, keep-alive\r\nUpgrade: ws\r\n\r\n", Valid, 1),
            // Pipelining: bodies skipped by their length.
            (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET /2 HTTP/1.1\r\nHost: a\r\n\r\n", Valid, 2),
            (b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\nHost: a\r\n\r\n", Invalid(400), 1),
            (b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HT", Incomplete, 1),
        ];
        for (i, &(input, end, messages)) in rows.iter().enumerate() {
            assert_eq!(
                state(input),
                (end, messages),
                "row {i}: {:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn messages_carry_method_target_fields_and_body() {
        let input = b"PUT /x?y HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nX: 1\r\n\r\nhi\
              MKCOL http://a/b HTTP/1.1\r\n\r\n";
        let v = verdict(input);
        assert_eq!(v.end, End::Valid);
        assert_eq!(v.read, input.len());
        assert_eq!(
            v.messages,
            [
                Message {
                    at: 0,
                    method: "PUT".into(),
                    target: "/x?y".into(),
                    fields: 3,
                    body: 2,
                    expect: false,
                },
                Message {
                    at: 57,
                    method: "MKCOL".into(),
                    target: "http://a/b".into(),
                    fields: 0,
                    body: 0,
                    expect: false,
                },
            ]
        );
        let json: serde_json::Value = serde_json::from_str(&v.to_json()).expect("JSON");
        assert_eq!(
            json,
            serde_json::json!({
                "state": "valid",
                "status": null,
                "messages": [
                    {"at": 0, "method": "PUT", "target": "/x?y", "fields": 3, "body": 2, "expect": false},
                    {"at": 57, "method": "MKCOL", "target": "http://a/b", "fields": 0, "body": 0, "expect": false},
                ],
                "read": input.len(),
            })
        );
        let refused: serde_json::Value =
            serde_json::from_str(&verdict(b"GET / HTTP/1.1\r\n\r\n").to_json()).expect("JSON");
        assert_eq!(
            (&refused["state"], &refused["status"]),
            (&"invalid".into(), &400.into())
        );
    }

    #[test]
    fn the_head_keeps_its_fields_in_order_on_one_buffer() {
        let bytes = Bytes::from_static(
            b"POST /p HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a: 2\r\nExpect: 100-Continue\r\n\
              Connection: keep-alive\r\nContent-Length: 0\r\n\r\n",
        );
        let head = head(&bytes, &LIMITS).expect("valid");
        assert_eq!(head.method, Method::POST);
        assert_eq!(head.version, Version::HTTP_11);
        assert_eq!(head.framing, Framing::Length(0));
        assert!(head.keep_alive && head.expect_continue && !head.upgrade);
        let all: Vec<_> = head.headers.get_all("x-a").iter().collect();
        assert_eq!(all, ["1", "2"]);
        let parts = head.into_parts();
        assert_eq!(parts.uri, "/p");
        assert_eq!(parts.headers.len(), 6);
    }

    /// The connection's kept `Host`: a request naming the same host
    /// shares the kept value (no bytes of the read buffer held), one
    /// naming another replaces it, and the fields read the same either way.
    #[test]
    fn a_repeated_host_shares_the_kept_value() {
        let mut kept = None;
        let first = Bytes::from_static(b"GET / HTTP/1.1\r\nHost: a.example:8080\r\nX: 1\r\n\r\n");
        let head1 = head_with(&first, &LIMITS, &mut kept).expect("valid");
        let kept1 = kept.as_deref().cloned().expect("kept");
        assert_eq!(kept1, "a.example:8080");
        // A copy: not a slice of the read buffer.
        let range = first.as_ptr_range();
        assert!(!range.contains(&kept1.as_bytes().as_ptr()));
        assert_eq!(head1.headers["host"], "a.example:8080");
        let second = Bytes::from_static(b"GET / HTTP/1.1\r\nX: 2\r\nHost: a.example:8080\r\n\r\n");
        let head2 = head_with(&second, &LIMITS, &mut kept).expect("valid");
        let shared = &head2.headers["host"];
        assert_eq!(shared, "a.example:8080");
        assert_eq!(shared.as_bytes().as_ptr(), kept1.as_bytes().as_ptr());
        assert_eq!(head2.headers["x"], "2");
        // Another host (same length): read from its bytes, and kept.
        let third = Bytes::from_static(b"GET / HTTP/1.1\r\nHost: b.example:8080\r\n\r\n");
        let head3 = head_with(&third, &LIMITS, &mut kept).expect("valid");
        assert_eq!(head3.headers["host"], "b.example:8080");
        assert_eq!(
            kept.as_ref().map(|h| h.as_bytes()),
            Some(&b"b.example:8080"[..])
        );
        // Two `Host` fields, one of them the kept value: both counted,
        // refused as before.
        let twice = Bytes::from_static(
            b"GET / HTTP/1.1\r\nHost: b.example:8080\r\nHost: b.example:8080\r\n\r\n",
        );
        let refusal = head_with(&twice, &LIMITS, &mut kept).expect_err("two hosts");
        assert_eq!(refusal.status.as_u16(), 400);
    }

    #[test]
    fn refusals_carry_the_words_and_reasons_of_todays_path() {
        use crate::metrics::http::Reason;
        let cases: &[(&[u8], u16, Reason)] = &[
            (b"GET / HTTP/1.1\r\nbad\r\n\r\n", 400, Reason::Parse),
            (b"GET / HTTP/1.1\r\n\r\n", 400, Reason::Framing),
            (
                b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
                501,
                Reason::ContentCoding,
            ),
            (
                b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9999999\r\n\r\n",
                413,
                Reason::BodyTooLarge,
            ),
        ];
        for &(input, status, reason) in cases {
            let refusal = head(&Bytes::from_static(input), &LIMITS).expect_err("refused");
            assert_eq!((refusal.status.as_u16(), refusal.reason), (status, reason));
        }
        let r = head(&Bytes::from_static(b"GET / HTTP/1.1\r\n\r\n"), &LIMITS).expect_err("no host");
        assert_eq!(r.detail, "an HTTP/1.1 request must carry a `Host` header");
    }

    /// A head of `len` bytes: `GET / HTTP/1.1`, `Host`, one field padded.
    fn head_of_len(len: usize) -> Vec<u8> {
        let fixed = b"GET / HTTP/1.1\r\nHost: a\r\nX: \r\n\r\n".len();
        let mut h = b"GET / HTTP/1.1\r\nHost: a\r\nX: ".to_vec();
        h.resize(len - 4, b'v');
        h.extend_from_slice(b"\r\n\r\n");
        assert!(len >= fixed && h.len() == len);
        h
    }

    #[test]
    fn a_head_of_exactly_the_limit_is_read_one_byte_more_is_431() {
        let at = head_of_len(LIMITS.max_head);
        assert_eq!(state(&at), (End::Valid, 1));
        let over = head_of_len(LIMITS.max_head + 1);
        assert_eq!(state(&over), (End::Invalid(431), 0));
        // 431 as soon as the buffer passes the limit, before the end.
        assert_eq!(state(&over[..LIMITS.max_head + 1]), (End::Invalid(431), 0));
        assert_eq!(state(&over[..LIMITS.max_head]), (End::Incomplete, 0));
        // Leading empty lines count toward the limit.
        let mut led = b"\r\n".to_vec();
        led.extend_from_slice(&at);
        assert_eq!(state(&led), (End::Invalid(431), 0));
        // The longest line the limit allows, read a byte at a time.
        let cuts: Vec<usize> = (1..at.len()).collect();
        assert_eq!(Verdict::of(&at, &cuts, LIMITS).end, End::Valid);
    }

    #[test]
    fn the_most_fields_are_read_one_more_is_431() {
        let with = |n: usize| {
            let mut h = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
            for i in 1..n {
                h.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
            }
            h.extend_from_slice(b"\r\n");
            h
        };
        let v = verdict(&with(LIMITS.max_headers));
        assert_eq!(
            (v.end, v.messages[0].fields),
            (End::Valid, LIMITS.max_headers)
        );
        assert_eq!(state(&with(LIMITS.max_headers + 1)), (End::Invalid(431), 0));
        // Above the stack's slots (a larger setting): a vector per head.
        let big = Limits {
            max_headers: 300,
            ..LIMITS
        };
        let v = Verdict::of(&with(300), &[], big);
        assert_eq!((v.end, v.messages[0].fields), (End::Valid, 300));
        assert_eq!(Verdict::of(&with(301), &[], big).end, End::Invalid(431));
        // Past what a `HeaderMap` holds (32,768 fields): 431, not a panic.
        let huge = Limits {
            max_head: 1 << 20,
            max_headers: 40_000,
            ..LIMITS
        };
        assert_eq!(Verdict::of(&with(33_000), &[], huge).end, End::Invalid(431));
    }

    #[test]
    fn a_target_over_65534_bytes_is_414() {
        let big = Limits {
            max_head: 128 * 1024,
            ..LIMITS
        };
        let with = |n: usize| {
            let mut h = b"GET /".to_vec();
            h.resize(4 + n, b'a');
            h.extend_from_slice(b" HTTP/1.1\r\nHost: a\r\n\r\n");
            h
        };
        assert_eq!(Verdict::of(&with(65_534), &[], big).end, End::Valid);
        assert_eq!(Verdict::of(&with(65_535), &[], big).end, End::Invalid(414));
    }

    /// Inputs for the split test: every row shape, pipelined, cut short.
    fn samples() -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = vec![
            b"GET / HTTP/1.1\r\nHost: a\r\n\r\nPOST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nabcd\r\nGET /y HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(),
            b"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nX: y\nZ: 1\r\n\r\n".to_vec(),
            b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\n\r\n".to_vec(),
            b"GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\n\x00\x01".to_vec(),
            b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".to_vec(),
            b"GET / HTTP/1.1\r\nHost: a\r\r\n\r\n".to_vec(),
            b"GET / HTTP/1.1\r\nHost: a\r\n\r\n\r\n\r".to_vec(),
        ];
        out.push(head_of_len(300));
        out
    }

    #[test]
    fn split_at_every_offset_the_verdict_is_the_whole_ones() {
        let small = Limits {
            max_head: 64,
            ..LIMITS
        };
        for input in samples() {
            for limits in [LIMITS, small] {
                let whole = Verdict::of(&input, &[], limits);
                for cut in 0..=input.len() {
                    assert_eq!(
                        Verdict::of(&input, &[cut], limits),
                        whole,
                        "cut at {cut}: {:?}",
                        String::from_utf8_lossy(&input)
                    );
                }
                let every: Vec<usize> = (1..input.len()).collect();
                assert_eq!(Verdict::of(&input, &every, limits), whole);
            }
        }
    }

    #[test]
    fn the_scan_resumes_where_it_stopped() {
        let input = head_of_len(1000);
        let mut scan = Scan::default();
        for len in 0..input.len() {
            assert_eq!(
                scan.next(&input[..len], LIMITS.max_head),
                Ok(Scanned::Partial)
            );
            // Each call looks only at the bytes not seen yet.
            assert_eq!(scan.at, len);
        }
        assert_eq!(
            scan.next(&input, LIMITS.max_head),
            Ok(Scanned::Head {
                start: 0,
                end: input.len()
            })
        );
    }

    /// The fuzz target's check over the committed seed corpus, so that
    /// the check cannot rot between fuzz runs.
    #[test]
    fn the_fuzz_check_holds_on_the_seed_corpus() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../hardening/corpus/h1");
        let mut files = 0;
        for entry in std::fs::read_dir(dir).expect("hardening/corpus/h1") {
            let input = std::fs::read(entry.expect("entry").path()).expect("read");
            let cuts: Vec<usize> = (0..input.len()).step_by(7).collect();
            crate::__fuzz::H1::check(&input, &cuts);
            files += 1;
        }
        assert!(files >= 40, "{files} files");
    }

    /// The fuzz check on mutations of the seed corpus (a fixed seed, so a
    /// failure repeats): between fuzz runs, `cargo test` still sends the
    /// codec a few thousand malformed streams.
    #[test]
    fn the_fuzz_check_holds_on_mutations_of_the_corpus() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../hardening/corpus/h1");
        let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(dir)
            .expect("hardening/corpus/h1")
            .map(|e| std::fs::read(e.expect("entry").path()).expect("read"))
            .collect();
        seeds.sort();
        let pieces: &[&[u8]] = &[
            b"\r\n",
            b"\n",
            b"\r",
            b" ",
            b"\t",
            b"\x00",
            b":",
            b",",
            b"0",
            b"\xff",
            b"\r\n\r\n",
            b"Content-Length: 3\r\n",
            b"Transfer-Encoding: chunked\r\n",
            b"Connection: close\r\n",
            b"Host: a\r\n",
            b"GET / HTTP/1.1\r\n",
        ];
        // xorshift64*: no dependency, the same inputs on every run.
        let mut state = 0x2026_1204_u64;
        let mut next = |n: usize| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
        };
        for _ in 0..3000 {
            let mut input = seeds[next(seeds.len())].clone();
            for _ in 0..=next(3) {
                let at = next(input.len() + 1);
                match next(3) {
                    0 => {
                        let piece = pieces[next(pieces.len())];
                        input.splice(at..at, piece.iter().copied());
                    }
                    1 => {
                        let end = (at + 1 + next(3)).min(input.len());
                        input.drain(at.min(end)..end);
                    }
                    _ => {
                        if let Some(b) = input.get_mut(at) {
                            *b = next(256) as u8;
                        }
                    }
                }
            }
            let cuts: Vec<usize> = (0..input.len()).step_by(1 + next(16)).collect();
            crate::__fuzz::H1::check(&input, &cuts);
        }
    }

    #[test]
    fn nothing_after_a_refusal_is_read() {
        let input = b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\nX: 1\r\n\r\nGET /3 HTTP/1.1\r\nHost: a\r\n\r\n";
        let v = verdict(input);
        assert_eq!((v.end, v.messages.len()), (End::Invalid(400), 1));
        assert_eq!(v.read, b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\n".len());
    }
}
