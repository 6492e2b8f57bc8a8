//! The request-body decoder of Tern's own HTTP/1.1 codec
//! (`server/h1/body.rs`) over arbitrary framings cut into arbitrary reads:
//! it never panics, and its data, trailers, error and length equal those
//! of the naive reference decoder (`server/h1/body/reference.rs`, shared
//! as source with the unit tests), whole and split. `run` also reads each
//! body through `Body::from_conn` and panics if that disagrees.
//!
//! `cd crates/tern/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run h1_body`
#![no_main]

use libfuzzer_sys::{arbitrary, fuzz_target};
use tern::__fuzz::h1_body::{run, Case, Outcome};

#[path = "../../src/server/h1/body/reference.rs"]
mod reference;

#[derive(Debug, arbitrary::Arbitrary)]
struct Input {
    /// `Some`: `Content-Length`; `None`: chunked.
    length: Option<u16>,
    max_body: u16,
    max_trailer_bytes: u16,
    max_trailer_fields: u8,
    /// Pieces of a chunked body, so that valid framing is likely.
    pieces: Vec<Piece>,
    splits: Vec<u16>,
}

#[derive(Debug, arbitrary::Arbitrary)]
enum Piece {
    Raw(Vec<u8>),
    /// A chunk whose size line declares `declared` (or its true length).
    Chunk {
        data: Vec<u8>,
        declared: Option<u16>,
        zeros: u8,
        extension: Extension,
        end: End,
    },
    LastChunk(Extension),
    Trailer(Vec<u8>, Vec<u8>),
    Crlf,
    Lf,
    Cr,
    Space,
    /// Many extension bytes, near the 16 KiB per body.
    LongExtension(u16),
}

#[derive(Debug, arbitrary::Arbitrary)]
enum Extension {
    None,
    Name(u8),
    Token(u8, u8),
    Quoted(u8, Vec<u8>),
    Raw(Vec<u8>),
}

#[derive(Debug, arbitrary::Arbitrary)]
enum End {
    Crlf,
    Lf,
    Cr,
    Nothing,
}

fn letter(b: u8) -> char {
    char::from(b'a' + b % 26)
}

fn extension(e: &Extension, out: &mut Vec<u8>) {
    match e {
        Extension::None => {}
        Extension::Name(n) => out.extend_from_slice(format!(";{}", letter(*n)).as_bytes()),
        Extension::Token(n, v) => {
            out.extend_from_slice(format!(";{}={}", letter(*n), letter(*v)).as_bytes())
        }
        Extension::Quoted(n, v) => {
            out.extend_from_slice(format!(";{}=\"", letter(*n)).as_bytes());
            out.extend_from_slice(v);
            out.push(b'"');
        }
        Extension::Raw(b) => out.extend_from_slice(b),
    }
}

fn end(e: &End, out: &mut Vec<u8>) {
    out.extend_from_slice(match e {
        End::Crlf => b"\r\n",
        End::Lf => b"\n",
        End::Cr => b"\r",
        End::Nothing => b"",
    });
}

fn render(pieces: &[Piece]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in pieces {
        match p {
            Piece::Raw(b) => out.extend_from_slice(b),
            Piece::Chunk {
                data,
                declared,
                zeros,
                extension: ext,
                end: e,
            } => {
                let size = declared.map_or(data.len(), usize::from);
                let zeros = usize::from(zeros % 18);
                out.extend_from_slice(format!("{}{size:x}", "0".repeat(zeros)).as_bytes());
                extension(ext, &mut out);
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(data);
                end(e, &mut out);
            }
            Piece::LastChunk(ext) => {
                out.push(b'0');
                extension(ext, &mut out);
                out.extend_from_slice(b"\r\n");
            }
            Piece::Trailer(name, value) => {
                out.extend_from_slice(name);
                out.push(b':');
                out.extend_from_slice(value);
                out.extend_from_slice(b"\r\n");
            }
            Piece::Crlf => out.extend_from_slice(b"\r\n"),
            Piece::Lf => out.push(b'\n'),
            Piece::Cr => out.push(b'\r'),
            Piece::Space => out.push(b' '),
            Piece::LongExtension(n) => {
                out.push(b';');
                out.extend(std::iter::repeat_n(b'e', usize::from(n % 17_000)));
            }
        }
    }
    out
}

fuzz_target!(|input: Input| {
    let case = Case {
        length: input.length.map(u64::from),
        max_body: u64::from(input.max_body),
        // At least the final CRLF; below `HeaderName`'s 64 KiB.
        max_trailer_bytes: usize::from(input.max_trailer_bytes).max(2),
        max_trailer_fields: usize::from(input.max_trailer_fields),
    };
    let bytes = render(&input.pieces);
    let expected: Outcome = reference::decode(&bytes, &case);
    let whole = run(&bytes, case, &[]);
    assert_eq!(whole, expected, "whole, against the reference");
    let splits: Vec<usize> = input.splits.iter().map(|&s| usize::from(s)).collect();
    assert_eq!(run(&bytes, case, &splits), expected, "split at {splits:?}");
    if bytes.len() <= 512 {
        let ones: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(run(&bytes, case, &ones), expected, "byte by byte");
    }
});
