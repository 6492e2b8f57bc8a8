//! The bare-LF follower (`server/framing.rs`) over arbitrary request
//! streams cut into arbitrary reads: it never panics, what it hands on
//! does not depend on where the reads were cut, and it changes nothing but
//! a bare LF (to a NUL, then an empty line and the end of what is read).
//!
//! `cd crates/tern/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run framing`
#![no_main]

use libfuzzer_sys::{arbitrary, fuzz_target};

#[derive(Debug, arbitrary::Arbitrary)]
struct Input {
    /// Pieces of requests, so that valid framing is likely.
    pieces: Vec<Piece>,
    splits: Vec<u16>,
}

#[derive(Debug, arbitrary::Arbitrary)]
enum Piece {
    Raw(Vec<u8>),
    RequestLine,
    Header(u8, Vec<u8>),
    ContentLength(u16),
    Chunked,
    Chunk(Vec<u8>),
    LastChunk,
    Upgrade,
    Crlf,
    Lf,
    Cr,
    Body(u16, u8),
}

fn render(pieces: &[Piece]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in pieces {
        match p {
            Piece::Raw(b) => out.extend_from_slice(b),
            Piece::RequestLine => out.extend_from_slice(b"POST /x HTTP/1.1\r\nHost: h\r\n"),
            Piece::Header(n, v) => {
                out.extend_from_slice(format!("X-{n}: ").as_bytes());
                out.extend_from_slice(v);
                out.extend_from_slice(b"\r\n");
            }
            Piece::ContentLength(n) => {
                out.extend_from_slice(format!("Content-Length: {n}\r\n").as_bytes())
            }
            Piece::Chunked => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
            Piece::Chunk(b) => {
                out.extend_from_slice(format!("{:x}\r\n", b.len()).as_bytes());
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            Piece::LastChunk => out.extend_from_slice(b"0\r\n"),
            Piece::Upgrade => out.extend_from_slice(b"Upgrade: x\r\n"),
            Piece::Crlf => out.extend_from_slice(b"\r\n"),
            Piece::Lf => out.push(b'\n'),
            Piece::Cr => out.push(b'\r'),
            Piece::Body(n, b) => out.extend(std::iter::repeat_n(*b, usize::from(*n))),
        }
    }
    out
}

fuzz_target!(|input: Input| {
    let bytes = render(&input.pieces);
    let whole = tern::__fuzz::framing(&bytes, &[]);
    let mut cuts: Vec<usize> = input
        .splits
        .iter()
        .map(|&s| usize::from(s) % (bytes.len() + 1))
        .collect();
    cuts.sort_unstable();
    let split = tern::__fuzz::framing(&bytes, &cuts);
    assert_eq!(whole, split, "the reads' cuts changed the result");
    let ones: Vec<usize> = (1..bytes.len()).collect();
    assert_eq!(whole, tern::__fuzz::framing(&bytes, &ones), "byte by byte");
    // Only bare LFs change (to NUL); a cut at one ends the output with an
    // empty line, the only bytes ever added.
    let cut = whole.len() >= 5
        && whole.ends_with(b"\0\r\n\r\n")
        && bytes.get(whole.len() - 5) == Some(&b'\n');
    let kept = if cut {
        &whole[..whole.len() - 4]
    } else {
        &whole[..]
    };
    assert!(kept.len() <= bytes.len(), "bytes were added without a cut");
    for (i, (&a, &b)) in kept.iter().zip(&bytes).enumerate() {
        if a != b {
            assert!(b == b'\n' && a == 0, "byte {i} changed from {b} to {a}");
        }
    }
});
