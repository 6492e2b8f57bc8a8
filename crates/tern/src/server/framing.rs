//! Strict line endings for HTTP/1 requests.
//!
//! httparse (and so hyper) accepts a bare LF as a line terminator in the
//! request line and header section (RFC 9112 §2.2 lets a recipient do so).
//! A front end that does not would read `X: y\nContent-Length: 23` as one
//! header where Tern reads two, and the two would disagree on where the
//! next request starts. [`Framing`] follows the bytes of a connection as
//! hyper frames them (request heads, `Content-Length` and chunked bodies,
//! trailers, upgrades) and turns a bare LF in a head or trailer section
//! into a NUL, a byte httparse refuses: hyper answers 400 and closes. A
//! bare CR needs nothing: httparse and hyper's chunked decoder refuse it.
//!
//! The follower mirrors hyper's framing decisions
//! (`proto/h1/role.rs`, `proto/h1/decode.rs`) for every message hyper
//! accepts. Where hyper refuses a message it closes the connection, so the
//! follower only has to stop: its later reads fail, and if it ever took
//! for an error what hyper accepts, the connection ends instead of going
//! on unchecked. Bodies cost a subtraction per read; heads one `memchr`
//! per line.
//!
//! The rules themselves (the bare-LF rule and the answer it forces, the
//! `Content-Length` and `Transfer-Encoding` rules of hyper mirrored here,
//! the HTTP/2 preface) are `crate::protocol`'s; this is the machinery that
//! applies them to a connection's reads.

use std::sync::atomic::Ordering;

use super::watchdog::Activity;
use crate::protocol::{
    h1,
    h2::{HTTP2_LINE, PREFACE},
};

/// The longest head line kept while it spans reads; hyper refuses a head
/// over `TERN_MAX_HEAD_BYTES` (at most this) anyway.
const MAX_LINE: usize = 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The first bytes match the first `n` of the HTTP/2 preface.
    Preface(u8),
    Head,
    /// A `Content-Length` body: bytes left.
    Body(u64),
    Chunk(Chunk),
    /// After a request that asked for an upgrade, until its answer says
    /// whether the connection switched protocols: nothing more is read.
    AwaitUpgrade,
    /// HTTP/2, or an upgraded connection: bytes pass untouched.
    Passthrough,
    /// hyper refuses this message (or the follower lost track): hyper
    /// closes the connection after its answer; any further read fails.
    Doomed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// The chunk size so far, and whether a digit was seen.
    Size(u64, bool),
    SizeLws(u64),
    Ext(u64),
    SizeLf(u64),
    Data(u64),
    DataCr,
    DataLf,
    /// After the last chunk: the end of the trailer section, or a trailer.
    EndCr,
    EndLf,
    Trailer,
    TrailerLf,
}

/// What the head of the current request said about its framing.
#[derive(Debug, Default)]
struct Head {
    request_line: bool,
    http11: bool,
    connect: bool,
    upgrade: bool,
    is_cl: bool,
    content_length: Option<u64>,
    is_te: bool,
    te_chunked: bool,
    invalid: bool,
}

/// Follows one connection's request bytes; see the module docs.
pub(super) struct Framing {
    state: State,
    /// The last byte of the previous read was a CR (a line may end across
    /// reads).
    prev_cr: bool,
    /// The current head line, when it spans reads.
    line: Vec<u8>,
    head: Head,
    /// Request heads seen, numbered like `Activity::requests`.
    heads: u64,
    /// The current request asked for an upgrade.
    upgrade_pending: bool,
    /// Where a bare LF was found, in the slice being scanned.
    cut: Option<usize>,
    /// Bytes read past a request that asked for an upgrade, held until
    /// its answer.
    pub(super) held: Vec<u8>,
}

/// What to do with the bytes of one read.
pub(super) enum Scan {
    /// Hand all of them on.
    All,
    /// Hand on the first `n`; hold the rest until the upgrade is decided.
    Hold(usize),
    /// Hand on the first `n`, then `held` (the end of a head that hyper
    /// refuses); drop the rest.
    Cut(usize),
}

impl Framing {
    pub(super) fn new() -> Self {
        Framing {
            state: State::Preface(0),
            prev_cr: false,
            line: Vec::new(),
            head: Head::default(),
            heads: 0,
            upgrade_pending: false,
            cut: None,
            held: Vec::new(),
        }
    }

    /// A follower for a connection already known to speak HTTP/2 (its
    /// preface read and checked before this follower was made): every
    /// byte passes untouched.
    pub(super) fn http2() -> Self {
        Framing {
            state: State::Passthrough,
            ..Framing::new()
        }
    }

    /// Whether reads must fail: hyper refused a message and closes.
    pub(super) fn doomed(&self) -> bool {
        matches!(self.state, State::Doomed)
    }

    /// Complete request heads handed to hyper so far (hyper may not
    /// have parsed them yet).
    #[inline]
    pub(super) fn heads(&self) -> u64 {
        self.heads
    }

    /// Whether bytes pass untouched from now on.
    pub(super) fn passthrough(&self) -> bool {
        matches!(self.state, State::Passthrough)
    }

    /// Whether the follower waits for an upgrade to be decided; applies the
    /// decision when it has been made.
    pub(super) fn awaiting_upgrade(&mut self, activity: &Activity) -> bool {
        if !matches!(self.state, State::AwaitUpgrade) {
            return false;
        }
        match activity.upgrade_decision(self.heads) {
            Some(true) => {
                self.state = State::Passthrough;
                false
            }
            Some(false) => {
                self.state = State::Head;
                false
            }
            None => true,
        }
    }

    /// Checks the bytes just read (`buf`), rewriting a bare LF in a head
    /// to NUL.
    pub(super) fn scan(&mut self, buf: &mut [u8], activity: &Activity) -> Scan {
        let mut i = 0;
        while i < buf.len() {
            match self.state {
                State::Passthrough | State::Doomed => return Scan::All,
                State::AwaitUpgrade => {
                    if self.awaiting_upgrade(activity) {
                        return Scan::Hold(i);
                    }
                }
                State::Preface(n) => {
                    let n = usize::from(n);
                    if buf[i] == PREFACE[n] {
                        i += 1;
                        if n + 1 == PREFACE.len() {
                            self.state = State::Passthrough;
                        } else {
                            self.state = State::Preface((n + 1) as u8);
                        }
                    } else if n >= HTTP2_LINE {
                        // `PRI * HTTP/2.0` and then not the preface: no
                        // HTTP/1 parser takes version 2.0; hyper refuses it.
                        self.doom(0);
                        return Scan::Cut(i + 1);
                    } else {
                        // HTTP/1: the bytes matched so far begin its
                        // request line (they hold no line end).
                        self.state = State::Head;
                        self.line.extend_from_slice(&PREFACE[..n]);
                    }
                }
                State::Head => {
                    let used = self.head_bytes(&mut buf[i..], activity);
                    if let Some(at) = self.cut.take() {
                        return Scan::Cut(i + at);
                    }
                    i += used;
                }
                State::Body(left) => {
                    let take = left.min((buf.len() - i) as u64);
                    i += take as usize;
                    self.state = State::Body(left - take);
                    if left == take {
                        self.message_end(activity);
                    }
                }
                State::Chunk(chunk) => {
                    let used = self.chunk_bytes(chunk, &mut buf[i..], activity);
                    if let Some(at) = self.cut.take() {
                        return Scan::Cut(i + at);
                    }
                    i += used;
                }
            }
        }
        Scan::All
    }

    /// Reads head lines from `buf` until the head ends (or `buf` does);
    /// returns the bytes used.
    fn head_bytes(&mut self, buf: &mut [u8], activity: &Activity) -> usize {
        let mut start = 0;
        loop {
            let Some(at) = memchr::memchr(b'\n', &buf[start..]) else {
                let rest = &buf[start..];
                if let Some(&last) = rest.last() {
                    self.prev_cr = last == b'\r';
                    if self.line.len() + rest.len() > MAX_LINE {
                        // hyper refuses a head this long (431).
                        return self.doom(start + (MAX_LINE - self.line.len()) + 1);
                    }
                    self.line.extend_from_slice(rest);
                }
                return buf.len();
            };
            let lf = start + at;
            let cr = if lf > start {
                buf[lf - 1] == b'\r'
            } else {
                // The CR would have ended the previous read.
                start == 0 && !self.line.is_empty() && self.prev_cr
            };
            if !cr {
                if !self.head.request_line && lf == start && self.line.is_empty() {
                    // An empty line before the request line, which every
                    // parser skips (llhttp's strict mode too): it frames
                    // nothing.
                    start = lf + 1;
                    continue;
                }
                return self.bare_lf(buf, lf);
            }
            let ended = if self.line.is_empty() {
                let line = &buf[start..lf - 1];
                self.head_line(line)
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&buf[start..lf]);
                line.pop(); // its CR
                let ended = self.head_line(&line);
                line.clear();
                self.line = line;
                ended
            };
            self.prev_cr = false;
            start = lf + 1;
            if ended {
                if !self.head_end(activity) {
                    // hyper refuses this head: it gets the head, not what
                    // follows it.
                    return self.doom(start);
                }
                return start;
            }
        }
    }

    /// One line of a head, without its CRLF; true at the empty line that
    /// ends the head.
    fn head_line(&mut self, line: &[u8]) -> bool {
        let head = &mut self.head;
        if !head.request_line {
            // httparse skips empty lines before a request line.
            if !line.is_empty() {
                head.request_line = true;
                head.connect = line.starts_with(b"CONNECT ");
                head.http11 = line.ends_with(b" HTTP/1.1");
            }
            return false;
        }
        if line.is_empty() {
            return true;
        }
        // Only `Transfer-Encoding`, `Content-Length` and `Upgrade` matter;
        // most lines are known not to by their first byte.
        if !matches!(line[0] | 0x20, b't' | b'c' | b'u') {
            return false;
        }
        let Some(colon) = memchr::memchr(b':', line) else {
            return false;
        };
        let name = &line[..colon];
        let value = &line[colon + 1..];
        // hyper's order of rules (`Server::parse` in `proto/h1/role.rs`).
        if name.eq_ignore_ascii_case(b"transfer-encoding") {
            if !head.http11 {
                head.invalid = true;
            }
            head.is_te = true;
            head.content_length = None;
            head.te_chunked = h1::ends_chunked(value);
        } else if name.eq_ignore_ascii_case(b"content-length") {
            head.is_cl = true;
            if head.is_te {
                return false;
            }
            match h1::content_length(value) {
                Some(len) => match head.content_length {
                    Some(prev) if prev != len => head.invalid = true,
                    _ => head.content_length = Some(len),
                },
                None => head.invalid = true,
            }
        } else if name.eq_ignore_ascii_case(b"upgrade") {
            head.upgrade = head.http11;
        }
        false
    }

    /// The head ended; false when hyper refuses it.
    fn head_end(&mut self, activity: &Activity) -> bool {
        let head = std::mem::take(&mut self.head);
        self.heads += 1;
        if head.invalid || (head.is_te && !head.te_chunked) {
            return false;
        }
        if head.connect || head.upgrade {
            activity.expect_upgrade(self.heads, head.connect);
        }
        self.upgrade_pending = head.connect || head.upgrade;
        self.state = if head.te_chunked {
            State::Chunk(Chunk::Size(0, false))
        } else {
            match head.content_length {
                Some(len) if len > 0 => State::Body(len),
                _ => {
                    self.message_end(activity);
                    return true;
                }
            }
        };
        true
    }

    fn message_end(&mut self, activity: &Activity) {
        if std::mem::take(&mut self.upgrade_pending) {
            self.state = State::AwaitUpgrade;
            self.awaiting_upgrade(activity);
        } else {
            self.state = State::Head;
        }
    }

    /// Follows a chunked body the way hyper's decoder reads it; returns the
    /// bytes used.
    fn chunk_bytes(&mut self, mut chunk: Chunk, buf: &mut [u8], activity: &Activity) -> usize {
        let mut i = 0;
        while i < buf.len() {
            let b = buf[i];
            chunk = match chunk {
                Chunk::Size(size, digit) => match b {
                    b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                        let d = (b as char).to_digit(16).map_or(0, u64::from);
                        match size.checked_mul(16).and_then(|s| s.checked_add(d)) {
                            Some(size) => Chunk::Size(size, true),
                            None => return self.doom(i + 1),
                        }
                    }
                    _ if !digit => return self.doom(i + 1),
                    b'\t' | b' ' => Chunk::SizeLws(size),
                    b';' => Chunk::Ext(size),
                    b'\r' => Chunk::SizeLf(size),
                    _ => return self.doom(i + 1),
                },
                Chunk::SizeLws(size) => match b {
                    b'\t' | b' ' => Chunk::SizeLws(size),
                    b';' => Chunk::Ext(size),
                    b'\r' => Chunk::SizeLf(size),
                    _ => return self.doom(i + 1),
                },
                Chunk::Ext(size) => match memchr::memchr2(b'\r', b'\n', &buf[i..]) {
                    None => {
                        i = buf.len();
                        continue;
                    }
                    Some(at) => {
                        i += at;
                        if buf[i] == b'\n' {
                            return self.doom(i + 1);
                        }
                        Chunk::SizeLf(size)
                    }
                },
                Chunk::SizeLf(size) => match (b, size) {
                    (b'\n', 0) => Chunk::EndCr,
                    (b'\n', size) => Chunk::Data(size),
                    _ => return self.doom(i + 1),
                },
                Chunk::Data(left) => {
                    let take = left.min((buf.len() - i) as u64);
                    i += take as usize;
                    chunk = if left == take {
                        Chunk::DataCr
                    } else {
                        Chunk::Data(left - take)
                    };
                    continue;
                }
                Chunk::DataCr if b == b'\r' => Chunk::DataLf,
                Chunk::DataLf if b == b'\n' => Chunk::Size(0, false),
                Chunk::DataCr | Chunk::DataLf => return self.doom(i + 1),
                Chunk::EndCr => match b {
                    b'\r' => Chunk::EndLf,
                    b'\n' => return self.bare_lf(buf, i),
                    _ => Chunk::Trailer,
                },
                Chunk::Trailer => match memchr::memchr2(b'\r', b'\n', &buf[i..]) {
                    None => {
                        i = buf.len();
                        continue;
                    }
                    Some(at) => {
                        i += at;
                        if buf[i] == b'\n' {
                            return self.bare_lf(buf, i);
                        }
                        Chunk::TrailerLf
                    }
                },
                Chunk::TrailerLf if b == b'\n' => Chunk::EndCr,
                Chunk::TrailerLf => return self.doom(i + 1),
                Chunk::EndLf if b == b'\n' => {
                    self.message_end(activity);
                    return i + 1;
                }
                Chunk::EndLf => return self.doom(i + 1),
            };
            i += 1;
        }
        self.state = State::Chunk(chunk);
        buf.len()
    }

    /// A bare LF at `buf[at]`: httparse would end a line there. It becomes
    /// a NUL followed by an empty line, so that hyper reads a complete head
    /// (or trailer section) holding a byte it refuses, answers 400 and
    /// closes; nothing after it is handed on.
    fn bare_lf(&mut self, buf: &mut [u8], at: usize) -> usize {
        let end = h1::refuse_bare_lf(buf, at);
        self.cut = Some(at + 1);
        self.held.clear();
        self.held.extend_from_slice(end);
        self.state = State::Doomed;
        0
    }

    /// hyper refuses what it reads up to `end` (in the slice being
    /// scanned): hand on that much and nothing after it; stop following.
    fn doom(&mut self, end: usize) -> usize {
        self.state = State::Doomed;
        self.held.clear();
        self.cut = Some(end);
        0
    }
}

/// `Activity`'s side: which request asked for an upgrade, and what its
/// answer decided.
pub(super) struct Upgrades {
    /// The number of the request that asked (0: none), and whether it was
    /// a `CONNECT`.
    pub(super) request: std::sync::atomic::AtomicU64,
    pub(super) connect: std::sync::atomic::AtomicBool,
    /// 0 undecided, 1 switched, 2 not.
    pub(super) decision: std::sync::atomic::AtomicU8,
    pub(super) waker: std::sync::Mutex<Option<std::task::Waker>>,
}

impl Upgrades {
    pub(super) fn new() -> Self {
        Upgrades {
            request: std::sync::atomic::AtomicU64::new(0),
            connect: std::sync::atomic::AtomicBool::new(false),
            decision: std::sync::atomic::AtomicU8::new(0),
            waker: std::sync::Mutex::new(None),
        }
    }
}

impl Activity {
    /// Request number `n` asked for an upgrade (or is a `CONNECT`).
    fn expect_upgrade(&self, n: u64, connect: bool) {
        let u = &self.upgrades;
        u.decision.store(0, Ordering::Relaxed);
        u.connect.store(connect, Ordering::Relaxed);
        u.request.store(n, Ordering::Release);
    }

    fn upgrade_decision(&self, n: u64) -> Option<bool> {
        let u = &self.upgrades;
        if u.request.load(Ordering::Acquire) != n {
            return Some(false);
        }
        match u.decision.load(Ordering::Acquire) {
            1 => Some(true),
            2 => Some(false),
            _ => None,
        }
    }

    /// The answer to request number `n` has status `status`: if that
    /// request asked for an upgrade, this decides it (hyper switches on a
    /// `101`, or a `2xx` to `CONNECT`), and wakes a waiting reader.
    #[inline]
    pub(super) fn on_answer(&self, n: u64, status: http::StatusCode) {
        let u = &self.upgrades;
        if u.request.load(Ordering::Acquire) != n {
            return;
        }
        let switched = status == http::StatusCode::SWITCHING_PROTOCOLS
            || (u.connect.load(Ordering::Relaxed) && status.is_success());
        u.decision
            .store(if switched { 1 } else { 2 }, Ordering::Release);
        if let Ok(mut waker) = u.waker.lock() {
            if let Some(waker) = waker.take() {
                waker.wake();
            }
        }
    }

    pub(super) fn wait_for_upgrade(&self, waker: &std::task::Waker) {
        if let Ok(mut slot) = self.upgrades.waker.lock() {
            *slot = Some(waker.clone());
        }
    }
}

/// Runs the follower over `input` delivered in reads cut at `splits`, the
/// way the server's socket does, deciding every upgrade as refused; returns
/// what hyper would be handed. For the `framing` fuzz target, which checks
/// that the result does not depend on the splits.
#[doc(hidden)]
pub fn fuzz_framing(input: &[u8], splits: &[usize]) -> Vec<u8> {
    let activity = Activity::new();
    let mut framing = Framing::new();
    let mut out = Vec::new();
    let mut at = 0;
    let mut cuts = splits.iter().copied().chain(std::iter::once(input.len()));
    loop {
        if framing.doomed() && framing.held.is_empty() {
            return out;
        }
        if matches!(framing.state, State::AwaitUpgrade) {
            // The answer was not a 101.
            activity.on_answer(framing.heads, http::StatusCode::OK);
            framing.awaiting_upgrade(&activity);
        }
        let mut read: Vec<u8> = if !framing.held.is_empty() {
            std::mem::take(&mut framing.held)
        } else {
            let Some(end) = cuts.next() else { return out };
            let end = end.clamp(at, input.len());
            let v = input[at..end].to_vec();
            at = end;
            if v.is_empty() {
                if at >= input.len() {
                    return out;
                }
                continue;
            }
            v
        };
        match framing.scan(&mut read, &activity) {
            Scan::All => out.extend_from_slice(&read),
            Scan::Hold(n) => {
                out.extend_from_slice(&read[..n]);
                let mut rest = read[n..].to_vec();
                rest.append(&mut framing.held);
                framing.held = rest;
            }
            Scan::Cut(n) => {
                out.extend_from_slice(&read[..n]);
                out.append(&mut framing.held);
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fuzz_framing;

    fn every_split(input: &[u8]) -> Vec<u8> {
        let whole = fuzz_framing(input, &[]);
        for at in 0..=input.len() {
            assert_eq!(fuzz_framing(input, &[at]), whole, "cut at {at}");
        }
        let ones: Vec<usize> = (1..input.len()).collect();
        assert_eq!(fuzz_framing(input, &ones), whole, "byte by byte");
        whole
    }

    #[test]
    fn a_refused_head_hands_on_nothing_after_it() {
        // The fuzzer's find: a head hyper refuses (Transfer-Encoding on a
        // request line that is not HTTP/1.1) was followed by what came in
        // the same read, and by nothing when the rest came later.
        let input = b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\nX: 1\r\n";
        assert_eq!(every_split(input), &input[..58]);
    }

    #[test]
    fn a_bare_lf_ends_what_is_handed_on() {
        let input = b"GET / HTTP/1.1\r\nX: y\nContent-Length: 5\r\n\r\nhello";
        let out = every_split(input);
        assert_eq!(out, b"GET / HTTP/1.1\r\nX: y\0\r\n\r\n");
    }

    #[test]
    fn bodies_are_not_touched() {
        let input = b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\n\n\n\nPOST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n\n\n\r\n0\r\n\r\n";
        assert_eq!(every_split(input), &input[..]);
    }
}
