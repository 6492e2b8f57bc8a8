//! The named inputs: the table of `tests/hostile.rs` (shared through
//! `tests/common/hostile_cases.rs`), the byte strings of
//! `tests/framing.rs` (copied here: they are written inline in its
//! tests), and the files of `hardening/corpus/h1/`.

use crate::hostile_cases;

/// A named input.
pub struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
}

fn input(name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Input {
    Input {
        name: name.into(),
        bytes: bytes.into(),
    }
}

pub fn hostile() -> Vec<Input> {
    hostile_cases::cases()
        .into_iter()
        .chain(hostile_cases::sneaky_cases())
        .map(|c| input(format!("hostile: {}", c.name), c.bytes))
        .collect()
}

/// `tests/framing.rs`'s requests (its routes are this app's paths).
pub fn framing() -> Vec<Input> {
    let mut out: Vec<Input> = [
        (
            "a header ended by a bare LF hides Content-Length",
            &b"GET / HTTP/1.1\r\nHost: x\r\nX: y\nContent-Length: 23\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n"[..],
        ),
        ("bare LF after the request line", b"GET / HTTP/1.1\nHost: x\r\n\r\n"),
        ("every line ended by a bare LF", b"GET / HTTP/1.1\nHost: x\n\n"),
        ("bare LF ending the head", b"GET / HTTP/1.1\r\nHost: x\r\n\n"),
        (
            "bare LF in the second pipelined head",
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\nX: y\r\n\r\n",
        ),
        (
            "bare LF in a head after a Content-Length body",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\na\nb\nGET /smuggled HTTP/1.1\nHost: x\r\n\r\n",
        ),
        (
            "bare LF in a head after a chunked body",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\na\nb\r\n0\r\n\r\nGET /smuggled HTTP/1.1\nHost: x\r\n\r\n",
        ),
        (
            "bare LF in a trailer section",
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX-T: 1\nContent-Length: 9\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
        ),
        (
            "bare CR in a header",
            b"GET / HTTP/1.1\r\nHost: x\r\nX: y\rContent-Length: 23\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
        ),
        (
            "an empty line of a bare LF before the request line",
            b"\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        ),
        (
            "an upgrade not switched, then a bare LF",
            b"GET /up HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\nGET /smuggled HTTP/1.1\nHost: x\r\n\r\n",
        ),
    ]
    .into_iter()
    .map(|(name, bytes)| input(format!("framing: {name}"), bytes))
    .collect();
    // Bodies full of LFs, CRs and NULs, framed both ways, pipelined.
    let body: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    let mut bytes = Vec::new();
    bytes.extend_from_slice(
        format!(
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    bytes.extend_from_slice(&body);
    bytes
        .extend_from_slice(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    for piece in body.chunks(1000) {
        bytes.extend_from_slice(format!("{:x};ext=1\r\n", piece.len()).as_bytes());
        bytes.extend_from_slice(piece);
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(b"0\r\nX-Trailer: t\r\n\r\n");
    bytes.extend_from_slice(b"\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    out.push(input("framing: bodies and pipelines pass untouched", bytes));
    out
}

/// One input for each recorded difference the other inputs may not
/// show (so that a row that no longer applies is noticed whatever the
/// seed).
pub fn recorded() -> Vec<Input> {
    [
        (
            "a refusal after an HTTP/1.0 request",
            &b"POST /g/0 HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx\
               GET /g/1 HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n"[..],
        ),
        (
            "requests after an upgrade not granted",
            b"GET /g/0 HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n\
              GET /g/1 HTTP/1.0\r\n\r\n",
        ),
        (
            "a chunk extension name that is not a token",
            b"PUT /g/0 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
              5;ext=1;\xe1ame=\"v\"\r\nhello\r\n0\r\n\r\n\
              GET /g/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        ),
        (
            "a body left unread, then a request",
            b"POST /u/0 HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhelloworld\
              GET /g/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        ),
    ]
    .into_iter()
    .map(|(name, bytes)| input(format!("recorded: {name}"), bytes))
    .collect()
}

/// The committed seed corpus of the codec's fuzz targets.
pub fn corpus() -> Vec<Input> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../hardening/corpus/h1");
    let mut out: Vec<Input> = std::fs::read_dir(dir)
        .expect("hardening/corpus/h1")
        .map(|entry| {
            let path = entry.expect("a corpus entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            input(
                format!("corpus: {name}"),
                std::fs::read(&path).expect("read"),
            )
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(out.len() >= 40, "{} corpus files", out.len());
    out
}
