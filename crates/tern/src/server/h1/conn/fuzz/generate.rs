//! The `h1_pipeline` fuzz target's generator: the fuzzer's bytes read as
//! the choices of a pipeline of well-formed requests of every framing,
//! with garbage between them, and the cuts to write it with. Garbage is
//! of two kinds whose effect is known without a parser: empty lines
//! (CRLF), which a server skips before a request line, and bytes that
//! begin with one no request line can begin with, which end the
//! connection's requests there.

/// The fuzzer's bytes, read as choices (zeros once they run out).
pub(super) struct Choices<'a>(&'a [u8]);

impl<'a> Choices<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Choices(data)
    }

    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    /// A number below `n` (at least 1).
    fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }

    /// Up to `max` bytes, taken as they are.
    fn bytes(&mut self, max: usize) -> &'a [u8] {
        let n = self.below(max + 1).min(self.0.len());
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        taken
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A request the generator wrote, as the app must see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Expected {
    pub(super) method: String,
    pub(super) target: String,
    pub(super) body: Vec<u8>,
    pub(super) http10: bool,
}

/// A generated pipeline.
#[derive(Debug)]
pub(super) struct Pipeline {
    pub(super) bytes: Vec<u8>,
    /// The requests the app must see, in order: those before the first
    /// bad garbage and up to one that closes the connection.
    pub(super) served: Vec<Expected>,
    /// Bad garbage follows the served requests (so one refusal may
    /// follow their answers, or none if it never ends its head).
    pub(super) refused: bool,
    /// Offsets to cut the bytes at, in order.
    pub(super) cuts: Vec<usize>,
}

const METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];
/// Bytes no request line begins with (not a token character, nor the CR
/// of an empty line); a bare LF is refused anywhere.
const BAD_FIRST: &[u8] = b"\x00\x7f@\"(\n\xff";

/// Bytes of a field value or a target's query, from the fuzzer's (mapped
/// into what each may hold).
fn text(c: &mut Choices<'_>, max: usize, allowed: &[u8]) -> String {
    c.bytes(max)
        .iter()
        .map(|b| char::from(allowed[usize::from(*b) % allowed.len()]))
        .collect()
}

const QUERY: &[u8] = b"abcxyz0129-._~=&+";
const VALUE: &[u8] = b"abcXYZ019 -_.,;:/=\t!";

/// One request; its bytes and what the app must see. `close`: it asks to
/// close the connection (or is HTTP/1.0 without keep-alive).
fn request(c: &mut Choices<'_>, i: usize) -> (Vec<u8>, Expected, bool) {
    let kind = c.below(8);
    let http10 = kind >= 6;
    let method = if kind == 4 {
        "GET"
    } else {
        METHODS[c.below(METHODS.len())]
    };
    let mut target = format!("/p/{i}");
    if c.below(3) == 0 {
        target.push('?');
        target.push_str(&text(c, 12, QUERY));
    }
    let version = if http10 { "1.0" } else { "1.1" };
    let mut head = format!("{method} {target} HTTP/{version}\r\n");
    if !http10 || c.below(2) == 0 {
        head.push_str(if c.below(2) == 0 {
            "Host: x\r\n"
        } else {
            "host: x\r\n"
        });
    }
    for n in 0..c.below(3) {
        head.push_str(&format!("X-F{n}: {}\r\n", text(c, 16, VALUE).trim()));
    }
    let close = match kind {
        // HTTP/1.0 closes unless it asks to stay.
        6 => true,
        7 => {
            head.push_str("Connection: keep-alive\r\n");
            false
        }
        _ => {
            let close = c.below(6) == 0;
            if close {
                head.push_str("Connection: close\r\n");
            }
            close
        }
    };
    let body = c.bytes(64).to_vec();
    let mut bytes = Vec::new();
    match kind {
        // No body.
        0 => {
            bytes.extend_from_slice(head.as_bytes());
            bytes.extend_from_slice(b"\r\n");
            return (bytes, expected(method, target, Vec::new(), http10), close);
        }
        // Chunked, with extensions and trailers.
        2 => {
            head.push_str("Transfer-Encoding: chunked\r\n\r\n");
            bytes.extend_from_slice(head.as_bytes());
            let mut rest = &body[..];
            while !rest.is_empty() {
                let n = (1 + c.below(rest.len())).min(rest.len());
                let ext = match c.below(3) {
                    0 => "",
                    1 => ";a=b",
                    _ => ";name=\"q v\";x",
                };
                bytes.extend_from_slice(format!("{n:x}{ext}\r\n").as_bytes());
                bytes.extend_from_slice(&rest[..n]);
                bytes.extend_from_slice(b"\r\n");
                rest = &rest[n..];
            }
            bytes.extend_from_slice(b"0\r\n");
            if c.below(2) == 0 {
                bytes.extend_from_slice(b"X-Trailer: t\r\n");
            }
            bytes.extend_from_slice(b"\r\n");
            return (bytes, expected(method, target, body, http10), close);
        }
        // Expect: 100-continue.
        3 => head.push_str("Expect: 100-continue\r\n"),
        // An upgrade the app does not grant.
        4 => {
            head.push_str("Connection: upgrade\r\nUpgrade: echo\r\n");
            bytes.extend_from_slice(head.as_bytes());
            bytes.extend_from_slice(b"\r\n");
            return (bytes, expected(method, target, Vec::new(), http10), close);
        }
        _ => {}
    }
    // Content-Length (any case of the name).
    let name = if c.below(2) == 0 {
        "Content-Length"
    } else {
        "content-length"
    };
    head.push_str(&format!("{name}: {}\r\n\r\n", body.len()));
    bytes.extend_from_slice(head.as_bytes());
    bytes.extend_from_slice(&body);
    (bytes, expected(method, target, body, http10), close)
}

fn expected(method: &str, target: String, body: Vec<u8>, http10: bool) -> Expected {
    Expected {
        method: method.to_owned(),
        target,
        body,
        http10,
    }
}

/// The pipeline the fuzzer's `data` chooses.
pub(super) fn pipeline(data: &[u8]) -> Pipeline {
    let mut c = Choices::new(data);
    let mut bytes = Vec::new();
    let mut served = Vec::new();
    let mut refused = false;
    // Whether the connection still reads: not after a request that closes
    // it, nor after bad garbage.
    let mut open = true;
    for i in 0..1 + c.below(8) {
        match c.below(8) {
            0 => {
                // Empty lines: skipped.
                for _ in 0..1 + c.below(3) {
                    bytes.extend_from_slice(b"\r\n");
                }
            }
            1 => {
                // Bad garbage: the requests end here.
                bytes.push(BAD_FIRST[c.below(BAD_FIRST.len())]);
                bytes.extend_from_slice(c.bytes(96));
                refused |= open;
                open = false;
            }
            _ => {}
        }
        let (req, expected, close) = request(&mut c, i);
        bytes.extend_from_slice(&req);
        if open {
            served.push(expected);
            open = !close;
        }
    }
    // The rest chooses the cuts.
    let mut cuts = Vec::new();
    let mut at = 0;
    while !c.is_empty() {
        at += 1 + c.below(96);
        if at >= bytes.len() {
            break;
        }
        cuts.push(at);
    }
    Pipeline {
        bytes,
        served,
        refused,
        cuts,
    }
}
