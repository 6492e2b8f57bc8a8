//! A small seeded generator of pipelines: 1 to 5 requests of every
//! framing (none, `Content-Length`, chunked with extensions and trailers,
//! `Expect: 100-continue`, an upgrade the app does not grant, HTTP/1.0
//! with and without keep-alive), the last one asking to close, and
//! sometimes one mutation: a byte flipped, a CRLF turned into a bare LF,
//! a header line duplicated, a length off by one.

/// xorshift64*: no dependency, the same cases on every run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// One generated case: its bytes, and what was done to them.
pub struct Generated {
    pub name: String,
    pub bytes: Vec<u8>,
}

const BODY_BYTES: &[u8] = b"hello\r\nGET /in-body HTTP/1.1\r\n\r\n\0\xff world";

fn body(rng: &mut Rng) -> Vec<u8> {
    let len = rng.below(BODY_BYTES.len() + 1);
    let start = rng.below(BODY_BYTES.len() - len + 1);
    BODY_BYTES[start..start + len].to_vec()
}

/// One request; `last` asks to close the connection after it.
fn request(rng: &mut Rng, i: usize, last: bool) -> (String, Vec<u8>) {
    let close = if last { "Connection: close\r\n" } else { "" };
    // One request in five goes where the app leaves the body unread.
    let g = if rng.chance(20) { "u" } else { "g" };
    let mut out = Vec::new();
    let kind = rng.below(8);
    let name = match kind {
        0 => {
            out.extend_from_slice(
                format!("GET /g/{i}?q={i} HTTP/1.1\r\nHost: x\r\n{close}\r\n").as_bytes(),
            );
            "none"
        }
        1 => {
            let b = body(rng);
            out.extend_from_slice(
                format!(
                    "POST /{g}/{i} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n{close}\r\n",
                    b.len()
                )
                .as_bytes(),
            );
            out.extend_from_slice(&b);
            "content-length"
        }
        2 => {
            out.extend_from_slice(
                format!(
                    "PUT /g/{i} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n{close}\r\n"
                )
                .as_bytes(),
            );
            for _ in 0..rng.below(3) {
                let b = body(rng);
                if b.is_empty() {
                    continue;
                }
                let ext = if rng.chance(50) {
                    ";ext=1;name=\"v\""
                } else {
                    ""
                };
                out.extend_from_slice(format!("{:x}{ext}\r\n", b.len()).as_bytes());
                out.extend_from_slice(&b);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n");
            if rng.chance(50) {
                out.extend_from_slice(b"X-Trailer: t\r\nX-Sum: 1\r\n");
            }
            out.extend_from_slice(b"\r\n");
            "chunked"
        }
        3 => {
            let b = body(rng);
            out.extend_from_slice(
                format!(
                    "POST /{g}/{i} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: {}\r\n{close}\r\n",
                    b.len()
                )
                .as_bytes(),
            );
            out.extend_from_slice(&b);
            "expect"
        }
        4 => {
            out.extend_from_slice(
                format!(
                    "GET /g/{i} HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: echo\r\n{close}\r\n"
                )
                .as_bytes(),
            );
            "upgrade not granted"
        }
        5 => {
            // HTTP/1.0 without keep-alive: the connection closes after it.
            out.extend_from_slice(format!("GET /g/{i} HTTP/1.0\r\n\r\n").as_bytes());
            "1.0"
        }
        6 => {
            let b = body(rng);
            let keep = if last {
                ""
            } else {
                "Connection: keep-alive\r\n"
            };
            out.extend_from_slice(
                format!(
                    "POST /{g}/{i} HTTP/1.0\r\n{keep}Content-Length: {}\r\n\r\n",
                    b.len()
                )
                .as_bytes(),
            );
            out.extend_from_slice(&b);
            "1.0 keep-alive"
        }
        _ => {
            out.extend_from_slice(
                format!("\r\nDELETE /g/{i} HTTP/1.1\r\nHost: x\r\n{close}\r\n").as_bytes(),
            );
            "empty line, delete"
        }
    };
    (name.to_owned(), out)
}

fn find_all(bytes: &[u8], needle: &[u8]) -> Vec<usize> {
    bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

/// Applies one mutation; its name.
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) -> &'static str {
    match rng.below(4) {
        0 => {
            let at = rng.below(bytes.len());
            bytes[at] ^= 1 << rng.below(8);
            "a byte flipped"
        }
        1 => {
            let crlfs = find_all(bytes, b"\r\n");
            let at = crlfs[rng.below(crlfs.len())];
            bytes.remove(at);
            "a CRLF turned into LF"
        }
        2 => {
            // A header line: after a CRLF, a name, a colon, up to the CRLF.
            let crlfs = find_all(bytes, b"\r\n");
            let lines: Vec<(usize, usize)> = crlfs
                .windows(2)
                .map(|w| (w[0] + 2, w[1] + 2))
                .filter(|&(s, e)| {
                    let line = &bytes[s..e];
                    line.iter().position(|b| *b == b':').is_some_and(|c| {
                        c > 0
                            && line[..c]
                                .iter()
                                .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
                    })
                })
                .collect();
            if lines.is_empty() {
                return "nothing duplicated";
            }
            let (s, e) = lines[rng.below(lines.len())];
            let line = bytes[s..e].to_vec();
            bytes.splice(e..e, line);
            "a header duplicated"
        }
        _ => {
            // A Content-Length value or a chunk size, one more or one less.
            let mut spots: Vec<(usize, usize, u64, u32)> = Vec::new();
            for at in find_all(bytes, b"Content-Length: ") {
                let s = at + 16;
                let e = s + bytes[s..].iter().take_while(|b| b.is_ascii_digit()).count();
                if let Ok(n) = std::str::from_utf8(&bytes[s..e]).unwrap().parse() {
                    spots.push((s, e, n, 10));
                }
            }
            for at in find_all(bytes, b"\r\n") {
                let s = at + 2;
                let e = s + bytes[s..]
                    .iter()
                    .take_while(|b| b.is_ascii_hexdigit())
                    .count();
                let ends = bytes[e..].starts_with(b"\r\n") || bytes[e..].starts_with(b";");
                if e > s && ends {
                    let digits = std::str::from_utf8(&bytes[s..e]).unwrap();
                    if let Ok(n) = u64::from_str_radix(digits, 16) {
                        spots.push((s, e, n, 16));
                    }
                }
            }
            if spots.is_empty() {
                return "no length to change";
            }
            let (s, e, n, radix) = spots[rng.below(spots.len())];
            let m = if n == 0 || rng.chance(50) {
                n + 1
            } else {
                n - 1
            };
            let text = if radix == 10 {
                m.to_string()
            } else {
                format!("{m:x}")
            };
            bytes.splice(s..e, text.into_bytes());
            "a length off by one"
        }
    }
}

/// `count` cases from `seed`.
pub fn cases(seed: u64, count: usize) -> Vec<Generated> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|n| {
            let requests = 1 + rng.below(5);
            let mut bytes = Vec::new();
            let mut kinds = Vec::new();
            for i in 0..requests {
                let (kind, req) = request(&mut rng, i, i + 1 == requests);
                kinds.push(kind);
                bytes.extend_from_slice(&req);
            }
            let mut name = format!("generated {n}: {}", kinds.join(", "));
            if rng.chance(60) {
                name.push_str(&format!("; {}", mutate(&mut rng, &mut bytes)));
            }
            Generated { name, bytes }
        })
        .collect()
}
