//! The body of an HTTP/1.1 request: `Content-Length` and chunked framing
//! decoded from the connection's buffer (step 2 of `docs/plans/http1.md`).
//!
//! [`Decoder`] is a state machine over the connection's read buffer, fed
//! as bytes arrive: each call consumes what it has decided on and returns
//! the next [`Event`], or `None` when it needs more bytes. Data is sliced
//! out of the buffer (`split_to(..).freeze()`), never copied; chunk-size
//! lines are read byte by byte and skipped; only a trailer section is
//! copied (it becomes a `HeaderMap`). Every byte is looked at once,
//! however the reads split the body, so the cost is linear in it.
//!
//! The rules (RFC 9112 §6, §7.1), each refused with its own [`Error`]:
//! - `Content-Length` n: exactly n bytes; n over `TERN_MAX_BODY_BYTES` is
//!   refused before a byte is read.
//! - chunk size: 1 to 16 hex digits (16 hold any `u64`: no overflow); a
//!   chunk that would take the body past `TERN_MAX_BODY_BYTES` is refused
//!   once its size line is read, before its data.
//! - chunk extensions: RFC 9112 §7.1.1's grammar, `*( BWS ";" BWS name
//!   [ BWS "=" BWS ( token / quoted-string ) ] )`, then ignored; at most
//!   16 KiB of them per body (hyper 1.12's `CHUNKED_EXTENSIONS_LIMIT`,
//!   counting every byte between the size and the CR). Whitespace after
//!   the size is BWS, so allowed only before a `;`: `5 \r\n` is refused
//!   (hyper takes it, llhttp's strict mode refuses it).
//! - lines end in CRLF: a bare LF or a bare CR in a size line or the
//!   trailer section is refused (the head's rule, `protocol::h1`); the
//!   data of a chunk must be followed by CRLF.
//! - the trailer section: field lines as in a head (a token, `:`, a value
//!   of VCHAR, obs-text, SP and HTAB; no whitespace before a name, so no
//!   obs-fold), at most `TERN_MAX_HEAD_BYTES` bytes (the final CRLF
//!   included) and `TERN_MAX_HEADERS` fields (431 past either). Trailer
//!   fields are handed to the app as trailers, never merged into the head,
//!   so none is refused for its name (RFC 9110 §6.5.1).

use std::{fmt, io};

use bytes::{Buf, Bytes, BytesMut};
use http::{header::HeaderName, HeaderMap, HeaderValue, StatusCode};
use tern_core::{body::conn::Feed, BodyError};

use crate::__fuzz::h1_body::{Case, Outcome};

/// The most hex digits of a chunk size: 16 hold any `u64`, so the size
/// cannot overflow; more (even leading zeros) are refused.
pub(crate) const MAX_SIZE_DIGITS: u8 = 16;

/// The most bytes of chunk extensions in one body (hyper 1.12's
/// `CHUNKED_EXTENSIONS_LIMIT`): a client cannot make the server read
/// extensions for ever while no data arrives.
pub(crate) const MAX_EXTENSION_BYTES: u64 = 16 * 1024;

/// The limits a body is decoded with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// `TERN_MAX_BODY_BYTES`: the most data bytes of one body.
    pub(crate) max_body: u64,
    /// `TERN_MAX_HEAD_BYTES`: the most bytes of a trailer section.
    pub(crate) max_trailer_bytes: usize,
    /// `TERN_MAX_HEADERS`: the most fields of a trailer section.
    pub(crate) max_trailer_fields: usize,
}

/// What the decoder found next.
#[derive(Debug)]
pub(crate) enum Event {
    /// Body data, sliced from the buffer; never empty.
    Data(Bytes),
    /// The trailer section of a chunked body (only when it has fields),
    /// after the last data; `End` follows.
    Trailers(HeaderMap),
    /// The body is over; the buffer's next byte is the next request's.
    End,
}

/// Why a body is refused. Every error but [`Error::Incomplete`] is the
/// client's framing: the connection answers (if it has not yet) and
/// closes, since where the next request starts is unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Error {
    /// More data than `TERN_MAX_BODY_BYTES` (413).
    TooLarge,
    /// A chunk size that is not 1 to 16 hex digits, or whitespace after
    /// it that no extension follows.
    ChunkSize,
    /// A chunk extension outside RFC 9112 §7.1.1's grammar.
    ChunkExtension,
    /// More than [`MAX_EXTENSION_BYTES`] of chunk extensions in the body.
    ExtensionsTooLong,
    /// A chunk's data not followed by CRLF.
    ChunkEnd,
    /// A bare LF or bare CR in a chunk-size line or the trailer section.
    LineEnding,
    /// A trailer field line that is not `name: value`.
    Trailer,
    /// A trailer section over `TERN_MAX_HEAD_BYTES` (431).
    TrailersTooLarge,
    /// More trailer fields than `TERN_MAX_HEADERS` (431).
    TooManyTrailers,
    /// The connection closed before the body's end.
    Incomplete,
}

impl Error {
    /// Every error.
    #[cfg(test)]
    pub(crate) const ALL: [Error; 10] = [
        Error::TooLarge,
        Error::ChunkSize,
        Error::ChunkExtension,
        Error::ExtensionsTooLong,
        Error::ChunkEnd,
        Error::LineEnding,
        Error::Trailer,
        Error::TrailersTooLarge,
        Error::TooManyTrailers,
        Error::Incomplete,
    ];

    /// The status of the answer, when the request has none yet.
    pub(crate) fn status(self) -> StatusCode {
        match self {
            Error::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Error::TrailersTooLarge | Error::TooManyTrailers => {
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
            }
            _ => StatusCode::BAD_REQUEST,
        }
    }

    /// A short stable name (the fuzz target and the tests compare these).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Error::TooLarge => "too-large",
            Error::ChunkSize => "chunk-size",
            Error::ChunkExtension => "chunk-extension",
            Error::ExtensionsTooLong => "extensions-too-long",
            Error::ChunkEnd => "chunk-end",
            Error::LineEnding => "line-ending",
            Error::Trailer => "trailer",
            Error::TrailersTooLarge => "trailers-too-large",
            Error::TooManyTrailers => "too-many-trailers",
            Error::Incomplete => "incomplete",
        }
    }

    /// The words of the problem+json answer (and of the body's error).
    pub(crate) fn detail(self) -> &'static str {
        match self {
            Error::TooLarge => {
                "the request body is larger than the limit of TERN_MAX_BODY_BYTES bytes"
            }
            Error::ChunkSize => {
                "a chunk size must be 1 to 16 hexadecimal digits, then CRLF or a chunk extension"
            }
            Error::ChunkExtension => {
                "a chunk extension must be `;name` or `;name=value` (a token or a quoted string)"
            }
            Error::ExtensionsTooLong => {
                "the chunk extensions of the request body are longer than 16 KiB"
            }
            Error::ChunkEnd => "the data of a chunk must be followed by CRLF",
            Error::LineEnding => {
                "a chunk-size or trailer line must end with CRLF (no bare LF or CR)"
            }
            Error::Trailer => "a trailer field must be `Name: value` on one line",
            Error::TrailersTooLarge => {
                "the trailer section is larger than the limit of TERN_MAX_HEAD_BYTES bytes"
            }
            Error::TooManyTrailers => "the trailer section has more fields than TERN_MAX_HEADERS",
            Error::Incomplete => "the connection closed before the end of the request body",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.detail())
    }
}

impl std::error::Error for Error {}

/// Ends `feed`'s body with `error`, as the connection does: a body over
/// `max_body` with a length-limit error (the extractors' 413), a body cut
/// short with `UnexpectedEof`, bad framing with `InvalidData`; the
/// `io::Error` carries the [`Error`].
pub(crate) fn fail(feed: &Feed, error: Error, max_body: u64) {
    let kind = match error {
        Error::TooLarge => return feed.fail_too_large(max_body),
        Error::Incomplete => io::ErrorKind::UnexpectedEof,
        _ => io::ErrorKind::InvalidData,
    };
    feed.fail(BodyError::new(io::Error::new(kind, error)));
}

/// Where the decoder is. The states between `Size` and `TrailerEndLf` read
/// one byte at a time; the others slice data or are over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// `Content-Length` data left.
    Length(u64),
    /// The hex digits of a chunk size (`digits` of them so far).
    Size,
    /// Whitespace after the size: only a `;` may follow.
    SizeWs,
    /// After `;`: BWS, then an extension's name.
    ExtBeforeName,
    ExtName,
    /// Whitespace after a name: `=` or `;` may follow.
    ExtAfterName,
    /// After `=`: BWS, then a token or a quoted string.
    ExtBeforeValue,
    ExtToken,
    ExtQuoted,
    /// After a `\` in a quoted string.
    ExtQuotedPair,
    /// Right after a quoted string's closing quote.
    ExtQuoteEnd,
    /// Whitespace after a value: only `;` may follow.
    ExtAfterValue,
    /// After the CR of a size line.
    SizeLf,
    /// A chunk's data left.
    Data(u64),
    DataCr,
    DataLf,
    /// The start of a trailer line (or of the final empty line).
    TrailerLine,
    TrailerName,
    TrailerValue,
    TrailerValueLf,
    /// After the final empty line's CR.
    TrailerEndLf,
    Done,
    Failed(Error),
}

impl State {
    /// The states that read one byte at a time.
    fn by_byte(self) -> bool {
        !matches!(
            self,
            State::Length(_) | State::Data(_) | State::Done | State::Failed(_)
        )
    }
}

/// The body decoder of one request.
#[derive(Debug)]
pub(crate) struct Decoder {
    state: State,
    limits: Limits,
    /// Data bytes of the chunks accepted so far.
    received: u64,
    size: u64,
    digits: u8,
    extension_bytes: u64,
    /// The field lines of the trailer section, each with its CRLF.
    trailer: BytesMut,
    trailer_bytes: usize,
    trailer_fields: usize,
    /// Bytes looked at, to test that the cost is linear.
    #[cfg(test)]
    examined: usize,
}

impl Decoder {
    /// A body of `length` bytes (`Content-Length`).
    pub(crate) fn length(length: u64, limits: Limits) -> Self {
        let state = if length > limits.max_body {
            State::Failed(Error::TooLarge)
        } else {
            State::Length(length)
        };
        Decoder::new(state, limits)
    }

    /// A chunked body (`Transfer-Encoding: chunked`).
    pub(crate) fn chunked(limits: Limits) -> Self {
        Decoder::new(State::Size, limits)
    }

    fn new(state: State, limits: Limits) -> Self {
        Decoder {
            state,
            limits,
            received: 0,
            size: 0,
            digits: 0,
            extension_bytes: 0,
            trailer: BytesMut::new(),
            trailer_bytes: 0,
            trailer_fields: 0,
            #[cfg(test)]
            examined: 0,
        }
    }

    /// Whether the body's end was decoded.
    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decodes from the front of `buf`, consuming what it decided on:
    /// the next event, or `None` when all of `buf` is consumed and more is
    /// needed. After [`Event::End`] it consumes nothing and returns `End`
    /// again; after an error, the same error.
    pub(crate) fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Event>, Error> {
        let result = self.step(buf);
        if let Err(e) = result {
            self.state = State::Failed(e);
        }
        result
    }

    /// As [`Decoder::decode`], when the connection has read its end: what
    /// `decode` would return, but [`Error::Incomplete`] instead of `None`.
    pub(crate) fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Event>, Error> {
        match self.decode(buf) {
            Ok(None) => {
                self.state = State::Failed(Error::Incomplete);
                Err(Error::Incomplete)
            }
            other => other,
        }
    }

    fn step(&mut self, buf: &mut BytesMut) -> Result<Option<Event>, Error> {
        loop {
            match self.state {
                State::Failed(e) => return Err(e),
                State::Done => return Ok(Some(Event::End)),
                State::Length(0) => self.state = State::Done,
                State::Length(left) | State::Data(left) => {
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    let n = usize::try_from(left).map_or(buf.len(), |left| left.min(buf.len()));
                    #[cfg(test)]
                    {
                        self.examined += 1;
                    }
                    let left = left - n as u64;
                    self.state = match self.state {
                        State::Length(_) => State::Length(left),
                        _ if left == 0 => State::DataCr,
                        _ => State::Data(left),
                    };
                    return Ok(Some(Event::Data(buf.split_to(n).freeze())));
                }
                _ => {
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    let (used, event) = self.lines(buf);
                    buf.advance(used);
                    if let Some(event) = event? {
                        return Ok(Some(event));
                    }
                }
            }
        }
    }

    /// Runs the byte states over `input` until a state that slices data,
    /// an event, an error or the end of `input`; returns the bytes used.
    fn lines(&mut self, input: &[u8]) -> (usize, Result<Option<Event>, Error>) {
        for (i, &b) in input.iter().enumerate() {
            #[cfg(test)]
            {
                self.examined += 1;
            }
            match self.byte(b) {
                Ok(None) if self.state.by_byte() => {}
                other => return (i + 1, other),
            }
        }
        (input.len(), Ok(None))
    }

    fn byte(&mut self, b: u8) -> Result<Option<Event>, Error> {
        use State::*;
        let state = self.state;
        match state {
            Size => {
                if let Some(digit) = hex(b) {
                    if self.digits == MAX_SIZE_DIGITS {
                        return Err(Error::ChunkSize);
                    }
                    self.digits += 1;
                    self.size = self.size << 4 | u64::from(digit);
                    return Ok(None);
                }
                if self.digits == 0 {
                    return Err(Error::ChunkSize);
                }
                self.state = match b {
                    b'\r' => SizeLf,
                    b'\n' => return Err(Error::LineEnding),
                    b';' => {
                        self.extension_byte()?;
                        ExtBeforeName
                    }
                    b' ' | b'\t' => {
                        self.extension_byte()?;
                        SizeWs
                    }
                    _ => return Err(Error::ChunkSize),
                };
            }
            SizeWs | ExtBeforeName | ExtName | ExtAfterName | ExtBeforeValue | ExtToken
            | ExtQuoted | ExtQuotedPair | ExtQuoteEnd | ExtAfterValue => {
                if b == b'\n' {
                    return Err(Error::LineEnding);
                }
                if b == b'\r' {
                    self.state = match state {
                        ExtName | ExtToken | ExtQuoteEnd => SizeLf,
                        SizeWs => return Err(Error::ChunkSize),
                        _ => return Err(Error::ChunkExtension),
                    };
                    return Ok(None);
                }
                self.extension_byte()?;
                self.state = extension(state, b)?;
            }
            SizeLf => {
                if b != b'\n' {
                    return Err(Error::LineEnding);
                }
                let size = std::mem::take(&mut self.size);
                self.digits = 0;
                if size == 0 {
                    self.state = TrailerLine;
                } else {
                    // `received` never exceeds `max_body`.
                    if size > self.limits.max_body - self.received {
                        return Err(Error::TooLarge);
                    }
                    self.received += size;
                    self.state = Data(size);
                }
            }
            DataCr => {
                if b != b'\r' {
                    return Err(Error::ChunkEnd);
                }
                self.state = DataLf;
            }
            DataLf => {
                if b != b'\n' {
                    return Err(Error::ChunkEnd);
                }
                self.state = Size;
            }
            TrailerLine | TrailerName | TrailerValue | TrailerValueLf | TrailerEndLf => {
                self.trailer_bytes += 1;
                if self.trailer_bytes > self.limits.max_trailer_bytes {
                    return Err(Error::TrailersTooLarge);
                }
                return self.trailer_byte(state, b);
            }
            Length(_) | Data(_) | Done | Failed(_) => {
                unreachable!("`lines` runs only the byte states")
            }
        }
        Ok(None)
    }

    fn extension_byte(&mut self) -> Result<(), Error> {
        self.extension_bytes += 1;
        if self.extension_bytes > MAX_EXTENSION_BYTES {
            return Err(Error::ExtensionsTooLong);
        }
        Ok(())
    }

    fn trailer_byte(&mut self, state: State, b: u8) -> Result<Option<Event>, Error> {
        use State::*;
        self.state = match (state, b) {
            (TrailerLine, b'\r') => TrailerEndLf,
            (TrailerLine, _) if is_tchar(b) => {
                self.trailer_fields += 1;
                if self.trailer_fields > self.limits.max_trailer_fields {
                    return Err(Error::TooManyTrailers);
                }
                TrailerName
            }
            (TrailerName, _) if is_tchar(b) => TrailerName,
            (TrailerName, b':') => TrailerValue,
            (TrailerValue, b'\r') => TrailerValueLf,
            (TrailerValue, _) if is_field_vchar(b) => TrailerValue,
            (TrailerValueLf, b'\n') => TrailerLine,
            (TrailerEndLf, b'\n') => {
                self.state = Done;
                let trailer = std::mem::take(&mut self.trailer).freeze();
                return Ok(Some(if self.trailer_fields == 0 {
                    Event::End
                } else {
                    Event::Trailers(trailers(trailer, self.trailer_fields)?)
                }));
            }
            (TrailerValueLf | TrailerEndLf, _) | (_, b'\n') => return Err(Error::LineEnding),
            _ => return Err(Error::Trailer),
        };
        if self.state != TrailerEndLf {
            self.trailer.extend_from_slice(&[b]);
        }
        Ok(None)
    }
}

/// The next state of a chunk extension after the byte `b` (not CR or LF).
fn extension(state: State, b: u8) -> Result<State, Error> {
    use State::*;
    let ws = b == b' ' || b == b'\t';
    Ok(match state {
        SizeWs if ws => SizeWs,
        SizeWs if b == b';' => ExtBeforeName,
        SizeWs => return Err(Error::ChunkSize),
        ExtBeforeName if ws => ExtBeforeName,
        ExtBeforeName | ExtName if is_tchar(b) => ExtName,
        ExtName | ExtAfterName if ws => ExtAfterName,
        ExtName | ExtAfterName if b == b'=' => ExtBeforeValue,
        ExtBeforeValue if ws => ExtBeforeValue,
        ExtBeforeValue | ExtToken if is_tchar(b) => ExtToken,
        ExtBeforeValue if b == b'"' => ExtQuoted,
        ExtQuoted if b == b'"' => ExtQuoteEnd,
        ExtQuoted if b == b'\\' => ExtQuotedPair,
        ExtQuoted if is_qdtext(b) => ExtQuoted,
        ExtQuotedPair if is_field_vchar(b) => ExtQuoted,
        ExtToken | ExtQuoteEnd | ExtAfterValue if ws => ExtAfterValue,
        ExtName | ExtAfterName | ExtToken | ExtQuoteEnd | ExtAfterValue if b == b';' => {
            ExtBeforeName
        }
        _ => return Err(Error::ChunkExtension),
    })
}

/// The trailer fields of `section` (field lines, each ending in CRLF,
/// already checked byte by byte). Values are slices of it, not copies.
fn trailers(section: Bytes, fields: usize) -> Result<HeaderMap, Error> {
    // A `HeaderMap` holds some 24,000 to 32,768 fields (its
    // `with_capacity` and `append` panic past that): allocated ahead only
    // when it can be, and more fields than it holds, with a
    // `TERN_MAX_HEADERS` above that, are too many.
    let mut map = HeaderMap::try_with_capacity(fields).unwrap_or_default();
    let mut at = 0;
    while at < section.len() {
        let line_end = at
            + section[at..]
                .iter()
                .position(|&b| b == b'\r')
                .ok_or(Error::Trailer)?;
        let colon = at
            + section[at..line_end]
                .iter()
                .position(|&b| b == b':')
                .ok_or(Error::Trailer)?;
        let name = HeaderName::from_bytes(&section[at..colon]).map_err(|_| Error::Trailer)?;
        let mut start = colon + 1;
        let mut end = line_end;
        while start < end && matches!(section[start], b' ' | b'\t') {
            start += 1;
        }
        while end > start && matches!(section[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        let value = HeaderValue::from_maybe_shared(section.slice(start..end))
            .map_err(|_| Error::Trailer)?;
        map.try_append(name, value)
            .map_err(|_| Error::TooManyTrailers)?;
        at = line_end + 2;
    }
    Ok(map)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// RFC 9110 §5.6.2 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A field value's byte (RFC 9110 §5.5): VCHAR, obs-text, SP, HTAB. Also
/// what may follow a `\` in a quoted string (§5.6.4).
fn is_field_vchar(b: u8) -> bool {
    matches!(b, b'\t' | b' ' | 0x21..=0x7e | 0x80..=0xff)
}

/// RFC 9110 §5.6.4 `qdtext`.
fn is_qdtext(b: u8) -> bool {
    matches!(b, b'\t' | b' ' | 0x21 | 0x23..=0x5b | 0x5d..=0x7e | 0x80..=0xff)
}

/// The decoder run over a whole body cut into reads: the `h1_body` fuzz
/// target's and the tests' entry point (`tern::__fuzz::h1_body::run`,
/// whose types live in `body/fuzz.rs`).
impl crate::__fuzz::h1_body::Runner {
    /// See `tern::__fuzz::h1_body::run`.
    pub(crate) fn run(input: &[u8], case: Case, splits: &[usize]) -> Outcome {
        let limits = Limits {
            max_body: case.max_body,
            max_trailer_bytes: case.max_trailer_bytes,
            max_trailer_fields: case.max_trailer_fields,
        };
        let mut decoder = match case.length {
            Some(n) => Decoder::length(n, limits),
            None => Decoder::chunked(limits),
        };
        let mut cuts: Vec<usize> = splits.iter().map(|&s| s.min(input.len())).collect();
        cuts.sort_unstable();
        cuts.push(input.len());

        let (feed, body) = tern_core::body::Body::from_conn(case.length, false);
        let mut reader = read::Reader::new(body);
        let mut outcome = Outcome::default();
        let mut buf = BytesMut::new();
        let mut fed = 0;
        let mut cut = cuts.into_iter().peekable();
        loop {
            let at_eof = cut.peek().is_none();
            let read = buf.as_ptr_range();
            let event = if at_eof {
                decoder.decode_eof(&mut buf)
            } else {
                decoder.decode(&mut buf)
            };
            match event {
                Ok(Some(Event::Data(data))) => {
                    assert!(!data.is_empty(), "an empty data frame");
                    let sliced = data.as_ptr_range();
                    assert!(
                        read.start <= sliced.start && sliced.end <= read.end,
                        "data must be sliced from the buffer, not copied"
                    );
                    outcome.data.extend_from_slice(&data);
                    feed.push_data(data);
                }
                Ok(Some(Event::Trailers(map))) => {
                    outcome.trailers = read::sorted(&map);
                    feed.push_trailers(map);
                }
                Ok(Some(Event::End)) => {
                    assert!(decoder.is_done());
                    outcome.consumed = Some(fed - buf.len());
                    feed.end();
                    break;
                }
                Err(e) => {
                    outcome.error = Some(e.name());
                    outcome.status = Some(e.status().as_u16());
                    fail(&feed, e, case.max_body);
                    break;
                }
                Ok(None) => {
                    reader.read();
                    // `decode_eof` never returns `None`.
                    let end = cut.next().unwrap_or(input.len());
                    let start = fed.min(end);
                    let piece = &input[start..end];
                    // The data frames must be slices of the reads, not
                    // copies: a new read goes into a fresh buffer when
                    // the old one is empty, as a connection's would.
                    if buf.is_empty() {
                        buf = BytesMut::with_capacity(piece.len());
                    }
                    buf.extend_from_slice(piece);
                    fed = end.max(fed);
                }
            }
        }
        drop(feed);
        reader.finish(&outcome);
        outcome
    }
}

/// The body's side of `Runner::run`: a `Body` read as a handler would.
mod read {
    use std::{
        pin::Pin,
        task::{Context, Poll, Waker},
    };

    use http::HeaderMap;
    use http_body::Body as _;
    use tern_core::body::Body;

    use super::{Error, Outcome};

    pub(super) struct Reader {
        body: Body,
        data: Vec<u8>,
        trailers: Vec<(String, Vec<u8>)>,
        error: Option<tern_core::BodyError>,
        ended: bool,
    }

    impl Reader {
        pub(super) fn new(body: Body) -> Self {
            Reader {
                body,
                data: Vec::new(),
                trailers: Vec::new(),
                error: None,
                ended: false,
            }
        }

        /// Reads what is queued.
        pub(super) fn read(&mut self) {
            let mut cx = Context::from_waker(Waker::noop());
            while !self.ended {
                match Pin::new(&mut self.body).poll_frame(&mut cx) {
                    Poll::Pending => return,
                    Poll::Ready(None) => self.ended = true,
                    Poll::Ready(Some(Err(e))) => {
                        self.error = Some(e);
                        self.ended = true;
                    }
                    Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                        Ok(data) => {
                            assert!(!data.is_empty(), "the body yielded an empty frame");
                            self.data.extend_from_slice(&data);
                        }
                        Err(frame) => {
                            if let Ok(map) = frame.into_trailers() {
                                self.trailers = sorted(&map);
                            }
                        }
                    },
                }
            }
        }

        /// Reads the rest and checks it against the decoder's outcome.
        pub(super) fn finish(mut self, outcome: &Outcome) {
            self.read();
            assert!(self.ended, "the body did not end after its feed");
            assert_eq!(self.data, outcome.data, "the body's data");
            assert_eq!(self.trailers, outcome.trailers, "the body's trailers");
            let error = self.error.as_ref().map(|e| {
                if e.is_length_limit() {
                    return Error::TooLarge.name();
                }
                std::error::Error::source(e)
                    .and_then(|e| e.downcast_ref::<std::io::Error>())
                    .and_then(|e| e.get_ref())
                    .and_then(|e| e.downcast_ref::<Error>())
                    .map_or("other", |e| e.name())
            });
            assert_eq!(error, outcome.error, "the body's error");
        }
    }

    /// A trailer map as the outcome lists it.
    pub(super) fn sorted(map: &HeaderMap) -> Vec<(String, Vec<u8>)> {
        let mut list: Vec<(String, Vec<u8>)> = map
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), value.as_bytes().to_vec()))
            .collect();
        list.sort_by(|a, b| a.0.cmp(&b.0));
        list
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
