//! The body decoder's tests: one table row per rule, the limits at their
//! edge, and the decoder against the naive reference on random framings
//! cut at random offsets.

use super::*;
use crate::__fuzz::h1_body::{run, Case, Outcome};

#[path = "reference.rs"]
mod reference_impl;

fn reference(input: &[u8], case: &Case) -> Outcome {
    reference_impl::decode(input, case)
}

const CASE: Case = Case {
    length: None,
    max_body: 1 << 20,
    max_trailer_bytes: 16 * 1024,
    max_trailer_fields: 100,
};

fn length(n: u64) -> Case {
    Case {
        length: Some(n),
        ..CASE
    }
}

/// Runs `input` whole, byte by byte and cut in three, checks the three
/// agree with each other and with the reference, and returns the outcome.
fn check(input: &[u8], case: Case) -> Outcome {
    let whole = run(input, case, &[]);
    let ones: Vec<usize> = (1..input.len()).collect();
    assert_eq!(run(input, case, &ones), whole, "byte by byte: {input:?}");
    let thirds = [input.len() / 3, 2 * input.len() / 3];
    assert_eq!(run(input, case, &thirds), whole, "in thirds: {input:?}");
    assert_eq!(reference(input, &case), whole, "the reference: {input:?}");
    whole
}

fn ok(input: &[u8], case: Case, data: &[u8], consumed: usize) -> Outcome {
    let out = check(input, case);
    assert_eq!(out.error, None, "{input:?}");
    assert_eq!(out.data, data, "{input:?}");
    assert_eq!(out.consumed, Some(consumed), "{input:?}");
    out
}

fn refused(input: &[u8], case: Case, error: Error) {
    let out = check(input, case);
    assert_eq!(out.error, Some(error.name()), "{input:?}");
    assert_eq!(out.status, Some(error.status().as_u16()));
    assert_eq!(out.consumed, None);
}

#[test]
fn content_length_takes_exactly_its_bytes() {
    ok(b"hello", length(5), b"hello", 5);
    ok(b"helloGET / HTTP/1.1\r\n", length(5), b"hello", 5);
    ok(b"", length(0), b"", 0);
    ok(b"next", length(0), b"", 0);
    refused(b"hell", length(5), Error::Incomplete);
    refused(b"", length(1), Error::Incomplete);
}

#[test]
fn chunked_bodies_that_are_well_formed() {
    let rows: &[(&[u8], &[u8], usize)] = &[
        (b"0\r\n\r\n", b"", 5),
        (b"5\r\nhello\r\n0\r\n\r\n", b"hello", 15),
        (
            b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\nGET",
            b"hello world",
            26,
        ),
        (b"A\r\n0123456789\r\n0\r\n\r\n", b"0123456789", 20),
        (b"a\r\n0123456789\r\n000\r\n\r\n", b"0123456789", 22),
        (b"0000000000000001\r\nx\r\n0\r\n\r\n", b"x", 26),
        // Extensions, as RFC 9112 §7.1.1 has them, are ignored.
        (b"1;a\r\nx\r\n0\r\n\r\n", b"x", 13),
        (b"1;a=b;c=\"d \\\" e\"\r\nx\r\n0;last\r\n\r\n", b"x", 31),
        (b"1 ;a\r\nx\r\n0\r\n\r\n", b"x", 14),
        (b"1\t; a = b ; c\r\nx\r\n0\r\n\r\n", b"x", 23),
        (b"1;a=\"\xff\t\"\r\nx\r\n0\r\n\r\n", b"x", 18),
        // Data holding CR, LF and digits is data.
        (b"4\r\n\r\n0\n\r\n0\r\n\r\n", b"\r\n0\n", 14),
    ];
    for (input, data, consumed) in rows {
        ok(input, CASE, data, *consumed);
    }
}

#[test]
fn trailers_become_a_header_map() {
    let input = b"1\r\nx\r\n0\r\nX-Sum: 12 \r\nx-list:a\r\nEmpty:\r\nX-LIST: b\t\r\n\r\nnext";
    let out = ok(input, CASE, b"x", input.len() - 4);
    assert_eq!(
        out.trailers,
        [
            ("empty".to_owned(), b"".to_vec()),
            ("x-list".to_owned(), b"a".to_vec()),
            ("x-list".to_owned(), b"b".to_vec()),
            ("x-sum".to_owned(), b"12".to_vec()),
        ]
    );
    // obs-text and inner whitespace are kept.
    let out = ok(b"0\r\nA: b \xff c\r\n\r\n", CASE, b"", 15);
    assert_eq!(out.trailers, [("a".to_owned(), b"b \xff c".to_vec())]);
    // Framing fields are not refused: they stay trailers, never merged.
    let out = ok(b"0\r\nContent-Length: 5\r\n\r\n", CASE, b"", 24);
    assert_eq!(out.trailers.len(), 1);
}

#[test]
fn each_framing_rule_refuses_with_its_error() {
    use Error::*;
    let rows: &[(&[u8], Error)] = &[
        // chunk size
        (b"\r\n", ChunkSize),
        (b"x\r\n", ChunkSize),
        (b"-1\r\n", ChunkSize),
        (b"+1\r\n", ChunkSize),
        (b"0x1\r\n", ChunkSize),
        (b"1x\r\n", ChunkSize),
        (b"00000000000000001\r\nx\r\n", ChunkSize),
        (b"fffffffffffffffff\r\n", ChunkSize),
        (b"1 \r\nx\r\n0\r\n\r\n", ChunkSize),
        (b"1 x\r\n", ChunkSize),
        (b" 1\r\n", ChunkSize),
        // extensions
        (b"1;\r\nx\r\n", ChunkExtension),
        (b"1;a \r\nx\r\n", ChunkExtension),
        (b"1;a=\r\nx\r\n", ChunkExtension),
        (b"1;a=b \r\n", ChunkExtension),
        (b"1;a=\"b\r\n", ChunkExtension),
        (b"1;a=\"b\"c\r\n", ChunkExtension),
        (b"1;a=b=c\r\n", ChunkExtension),
        (b"1;=b\r\n", ChunkExtension),
        (b"1;a b\r\n", ChunkExtension),
        (b"1;a=\"\x01\"\r\n", ChunkExtension),
        (b"1;a=\"\\\x01\"\r\n", ChunkExtension),
        (b"1;a\x00\r\n", ChunkExtension),
        (b"1;;a\r\n", ChunkExtension),
        // line endings
        (b"1\nx\r\n0\r\n\r\n", LineEnding),
        (b"1\rx\r\n", LineEnding),
        (b"1;a\nx\r\n", LineEnding),
        (b"1;a=\"b\nc\"\r\n", LineEnding),
        (b"0\r\n\n", LineEnding),
        (b"0\r\n\r\r", LineEnding),
        (b"0\r\nA: b\n\r\n", LineEnding),
        (b"0\r\nA: b\rc\r\n\r\n", LineEnding),
        (b"0\r\nA\n", LineEnding),
        // the end of a chunk's data
        (b"1\r\nxy\r\n", ChunkEnd),
        (b"1\r\nx\n0\r\n\r\n", ChunkEnd),
        (b"1\r\nx\r0\r\n\r\n", ChunkEnd),
        // trailer lines
        (b"0\r\n A: b\r\n\r\n", Trailer),
        (b"0\r\nA : b\r\n\r\n", Trailer),
        (b"0\r\nA\r\n\r\n", Trailer),
        (b"0\r\n:b\r\n\r\n", Trailer),
        (b"0\r\nA(: b\r\n\r\n", Trailer),
        (b"0\r\nA: b\x7f\r\n\r\n", Trailer),
        (b"0\r\nA: b\x00\r\n\r\n", Trailer),
        (b"0\r\nA: b\r\n c\r\n\r\n", Trailer),
        // cut short
        (b"", Incomplete),
        (b"1", Incomplete),
        (b"1\r", Incomplete),
        (b"1;a=\"", Incomplete),
        (b"1\r\n", Incomplete),
        (b"1\r\nx", Incomplete),
        (b"1\r\nx\r", Incomplete),
        (b"1\r\nx\r\n", Incomplete),
        (b"0\r\n", Incomplete),
        (b"0\r\nA: b\r\n", Incomplete),
        (b"0\r\n\r", Incomplete),
    ];
    for (input, error) in rows {
        refused(input, CASE, *error);
    }
}

#[test]
fn errors_have_their_status() {
    for e in Error::ALL {
        let expected = match e {
            Error::TooLarge => 413,
            Error::TrailersTooLarge | Error::TooManyTrailers => 431,
            _ => 400,
        };
        assert_eq!(e.status().as_u16(), expected, "{e:?}");
        assert!(!e.detail().is_empty());
    }
}

#[test]
fn a_chunk_size_of_sixteen_digits() {
    // The largest size; refused by the limit, not by an overflow.
    refused(b"ffffffffffffffff\r\n", CASE, Error::TooLarge);
    let huge = Case {
        max_body: u64::MAX,
        ..CASE
    };
    let out = check(b"ffffffffffffffff\r\nabc", huge);
    assert_eq!(out.error, Some("incomplete"));
    assert_eq!(out.data, b"abc");
    // And the body limit cannot overflow either.
    refused(b"1\r\nx\r\nffffffffffffffff\r\n", huge, Error::TooLarge);
}

#[test]
fn the_largest_body_the_limit_allows_and_one_byte_more() {
    let small = Case {
        max_body: 10,
        ..CASE
    };
    ok(
        b"0123456789",
        Case {
            length: Some(10),
            ..small
        },
        b"0123456789",
        10,
    );
    refused(
        b"0123456789x",
        Case {
            length: Some(11),
            ..small
        },
        Error::TooLarge,
    );
    // Refused before any byte is read.
    refused(
        b"",
        Case {
            length: Some(11),
            ..small
        },
        Error::TooLarge,
    );

    ok(
        b"4\r\n0123\r\n6\r\n456789\r\n0\r\n\r\n",
        small,
        b"0123456789",
        25,
    );
    // The chunk that would pass the limit is refused at its size line;
    // what came before it was delivered.
    let out = check(b"4\r\n0123\r\n7\r\n", small);
    assert_eq!(out.error, Some("too-large"));
    assert_eq!(out.data, b"0123");
    let out = check(b"b\r\n", small);
    assert_eq!(out.error, Some("too-large"));
}

#[test]
fn sixteen_kib_of_extensions_and_one_byte_more() {
    // 16,384 bytes after the sizes: `;` + name, in two chunks.
    let ext = |n: usize| format!(";{}", "e".repeat(n - 1));
    let body = format!("1{}\r\nx\r\n0{}\r\n\r\n", ext(10_000), ext(6_384));
    ok(body.as_bytes(), CASE, b"x", body.len());
    let body = format!("1{}\r\nx\r\n0{}\r\n\r\n", ext(10_000), ext(6_385));
    refused(body.as_bytes(), CASE, Error::ExtensionsTooLong);
    // Whitespace counts too.
    let body = format!("0{};a\r\n\r\n", " ".repeat(16_382));
    ok(body.as_bytes(), CASE, b"", body.len());
    let body = format!("0{};a\r\n\r\n", " ".repeat(16_383));
    refused(body.as_bytes(), CASE, Error::ExtensionsTooLong);
}

#[test]
fn trailers_at_the_head_limit_and_one_byte_more() {
    // A section of exactly `max_trailer_bytes`, its final CRLF included.
    let limit = 64;
    let case = Case {
        max_trailer_bytes: limit,
        ..CASE
    };
    let field = |len: usize| format!("A: {}\r\n", "v".repeat(len - 5));
    let section = format!("{}\r\n", field(limit - 2));
    assert_eq!(section.len(), limit);
    let body = format!("0\r\n{section}");
    let out = ok(body.as_bytes(), case, b"", body.len());
    assert_eq!(out.trailers[0].1.len(), limit - 7);
    let body = format!("0\r\n{}\r\n", field(limit - 1));
    refused(body.as_bytes(), case, Error::TrailersTooLarge);
    // Refused as the byte past the limit arrives, without waiting for the
    // section's end.
    let body = format!("0\r\nA: {}", "v".repeat(limit));
    refused(body.as_bytes(), case, Error::TrailersTooLarge);
}

#[test]
fn the_most_trailer_fields_and_one_more() {
    let case = Case {
        max_trailer_fields: 100,
        ..CASE
    };
    let section = |n: usize| (0..n).map(|i| format!("F{i}: {i}\r\n")).collect::<String>();
    let body = format!("0\r\n{}\r\n", section(100));
    let out = ok(body.as_bytes(), case, b"", body.len());
    assert_eq!(out.trailers.len(), 100);
    let body = format!("0\r\n{}\r\n", section(101));
    refused(body.as_bytes(), case, Error::TooManyTrailers);
    // The field count is judged at the extra field's first byte.
    let body = format!("0\r\n{}F", section(100));
    refused(body.as_bytes(), case, Error::TooManyTrailers);
}

/// Past what a `HeaderMap` holds (at most 32,768 names), with a
/// `TERN_MAX_HEADERS` above it: 431, not a panic.
#[test]
fn more_trailers_than_a_header_map_holds() {
    let case = Case {
        max_trailer_bytes: 1 << 20,
        max_trailer_fields: 50_000,
        ..CASE
    };
    let body = |n: usize| {
        let mut body = b"0\r\n".to_vec();
        for i in 0..n {
            body.extend_from_slice(format!("f{i}:\r\n").as_bytes());
        }
        body.extend_from_slice(b"\r\n");
        body
    };
    let out = run(&body(40_000), case, &[]);
    assert_eq!(out.error, Some(Error::TooManyTrailers.name()));
    // The reference knows no such limit; the decoder alone refuses.
    assert_eq!(reference(&body(40_000), &case).error, None);
    let out = run(&body(20_000), case, &[]);
    assert_eq!(out.error, None);
    assert_eq!(out.trailers.len(), 20_000);
}

#[test]
fn the_decoder_gives_back_what_follows_the_body() {
    let limits = Limits {
        max_body: 100,
        max_trailer_bytes: 100,
        max_trailer_fields: 10,
    };
    let mut d = Decoder::chunked(limits);
    let mut buf = BytesMut::from(&b"3\r\nabc\r\n0\r\nX: y\r\n\r\nGET / HTTP/1.1\r\n"[..]);
    let Ok(Some(Event::Data(data))) = d.decode(&mut buf) else {
        panic!("data first");
    };
    assert_eq!(data, "abc");
    let next = d.decode(&mut buf);
    let Ok(Some(Event::Trailers(map))) = next else {
        panic!("then the trailers, not {next:?}");
    };
    assert_eq!(map["x"], "y");
    assert!(matches!(d.decode(&mut buf), Ok(Some(Event::End))));
    assert!(d.is_done());
    assert_eq!(&buf[..], b"GET / HTTP/1.1\r\n");
    // Done: it consumes nothing more.
    assert!(matches!(d.decode(&mut buf), Ok(Some(Event::End))));
    assert!(matches!(d.decode_eof(&mut buf), Ok(Some(Event::End))));
    assert_eq!(buf.len(), 16);

    // An error is sticky.
    let mut d = Decoder::chunked(limits);
    let mut buf = BytesMut::from(&b"z\r\n"[..]);
    assert_eq!(d.decode(&mut buf).unwrap_err(), Error::ChunkSize);
    let mut more = BytesMut::from(&b"0\r\n\r\n"[..]);
    assert_eq!(d.decode(&mut more).unwrap_err(), Error::ChunkSize);
    assert_eq!(d.decode_eof(&mut more).unwrap_err(), Error::ChunkSize);
}

/// The data is the buffer's own bytes (`run` checks each frame's address
/// against the buffer's); a frame may span no more than what was read.
#[test]
fn data_is_sliced_from_the_buffer() {
    let limits = Limits {
        max_body: 1 << 20,
        max_trailer_bytes: 100,
        max_trailer_fields: 10,
    };
    let mut d = Decoder::length(6, limits);
    let mut buf = BytesMut::with_capacity(64);
    buf.extend_from_slice(b"abc");
    let start = buf.as_ptr();
    let Ok(Some(Event::Data(data))) = d.decode(&mut buf) else {
        panic!("data");
    };
    assert_eq!(data.as_ptr(), start);
    assert!(d.decode(&mut buf).unwrap().is_none());
    buf.extend_from_slice(b"defNEXT");
    let Ok(Some(Event::Data(data))) = d.decode(&mut buf) else {
        panic!("data");
    };
    assert_eq!(data, "def");
    assert!(matches!(d.decode(&mut buf), Ok(Some(Event::End))));
    assert_eq!(&buf[..], b"NEXT");
}

/// Every byte is looked at once however the reads split the body: a body
/// sent one byte per read costs what it costs whole, plus one step per
/// read (no line is scanned again).
#[test]
fn the_cost_is_linear_however_the_bytes_are_split() {
    let mut body = Vec::new();
    for i in 0..2_000 {
        body.extend_from_slice(format!("{:x};n=\"v\"\r\n", i % 50 + 1).as_bytes());
        body.extend(std::iter::repeat_n(b'x', i % 50 + 1));
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n");
    for i in 0..100 {
        body.extend_from_slice(format!("Field-{i}: {}\r\n", "v".repeat(100)).as_bytes());
    }
    body.extend_from_slice(b"\r\n");
    let limits = Limits {
        max_body: 1 << 20,
        max_trailer_bytes: 1 << 20,
        max_trailer_fields: 1000,
    };
    for step in [1, 2, 7, 64, body.len()] {
        let mut d = Decoder::chunked(limits);
        let mut buf = BytesMut::new();
        let mut reads = 0;
        let mut done = false;
        for piece in body.chunks(step) {
            reads += 1;
            buf.extend_from_slice(piece);
            while let Some(event) = d.decode(&mut buf).unwrap() {
                if matches!(event, Event::End) {
                    done = true;
                    break;
                }
            }
        }
        assert!(done);
        assert!(
            d.examined <= body.len() + reads,
            "{} steps for {} bytes in {reads} reads",
            d.examined,
            body.len()
        );
    }
}

/// A small xorshift: the property test's inputs are the same on every run
/// (the seed is printed on a failure).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a [u8]]) -> &'a [u8] {
        items[self.below(items.len())]
    }
}

/// A random body: mostly well-framed chunks (sizes right or off by one,
/// extensions valid or not), trailers, and now and then a byte of noise.
fn random_body(rng: &mut Rng) -> Vec<u8> {
    const EXTS: &[&[u8]] = &[
        b"",
        b"",
        b"",
        b";a",
        b";a=b",
        b";a=\"q \\\" x\"",
        b" ;a",
        b";a ",
        b";",
        b"; a = b",
        b";a=\"",
        b";\x00",
        b" ",
        b";a=b;c",
        b";a=\"\xff\"",
    ];
    const ENDS: &[&[u8]] = &[
        b"\r\n", b"\r\n", b"\r\n", b"\r\n", b"\n", b"\r", b"", b"\r\r\n",
    ];
    const TRAILERS: &[&[u8]] = &[
        b"X-A: 1\r\n",
        b"x-a:2\r\n",
        b"B: \t v \t\r\n",
        b"C:\r\n",
        b" D: 1\r\n",
        b"E : 1\r\n",
        b"F: \x01\r\n",
        b"G: 1\n",
        b"H\r\n",
        b"I: \xfe\r\n",
    ];
    let mut out = Vec::new();
    for _ in 0..rng.below(6) {
        let len = rng.below(40);
        let declared = match rng.below(10) {
            0 => len + 1,
            1 if len > 0 => len - 1,
            _ => len.max(1),
        };
        let digits = format!("{declared:x}");
        match rng.below(12) {
            0 => out.extend_from_slice(format!("{digits:0>17}").as_bytes()),
            1 => out.extend_from_slice(format!("{digits:0>16}").as_bytes()),
            2 => out.extend_from_slice(digits.to_uppercase().as_bytes()),
            _ => out.extend_from_slice(digits.as_bytes()),
        }
        if rng.below(12) == 0 {
            // Near the 16 KiB of extensions a body may have.
            let n = 8_000 + rng.below(9_000);
            out.push(b';');
            out.extend(std::iter::repeat_n(b'e', n));
        } else {
            out.extend_from_slice(rng.pick(EXTS));
        }
        out.extend_from_slice(rng.pick(ENDS));
        out.extend((0..len.max(1)).map(|i| b"x\r\n0"[(i + rng.below(4)) % 4]));
        out.extend_from_slice(rng.pick(ENDS));
    }
    if rng.below(8) > 0 {
        out.extend_from_slice(b"0");
        out.extend_from_slice(rng.pick(EXTS));
        out.extend_from_slice(b"\r\n");
        for _ in 0..rng.below(4) {
            out.extend_from_slice(rng.pick(TRAILERS));
        }
        out.extend_from_slice(rng.pick(ENDS));
    }
    if !out.is_empty() && rng.below(5) == 0 {
        let at = rng.below(out.len());
        out[at] = rng.next() as u8;
    }
    if rng.below(4) == 0 {
        let cut = rng.below(out.len() + 1);
        out.truncate(cut);
    }
    if rng.below(3) == 0 {
        out.extend_from_slice(b"GET / HTTP/1.1\r\n");
    }
    out
}

#[test]
fn the_decoder_agrees_with_the_reference_on_random_framings_and_splits() {
    // H1_BODY_SEED and H1_BODY_CASES run other or more cases by hand.
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let seed = env("H1_BODY_SEED").unwrap_or(0x5eed_0031_b0d1).max(1);
    let cases = env("H1_BODY_CASES").unwrap_or(20_000);
    let mut rng = Rng(seed);
    let mut errors = std::collections::BTreeMap::<&str, usize>::new();
    for case_no in 0..cases {
        let chunked = rng.below(4) > 0;
        let case = Case {
            length: (!chunked).then(|| rng.below(64) as u64),
            max_body: [8, 40, 100, 1 << 20][rng.below(4)] as u64,
            max_trailer_bytes: [2, 10, 30, 16 * 1024][rng.below(4)],
            max_trailer_fields: [0, 1, 2, 100][rng.below(4)],
        };
        let input = if chunked {
            random_body(&mut rng)
        } else {
            (0..rng.below(80)).map(|_| rng.next() as u8).collect()
        };
        let splits: Vec<usize> = (0..rng.below(6))
            .map(|_| rng.below(input.len() + 1))
            .collect();
        let expected = reference(&input, &case);
        let got = run(&input, case, &splits);
        assert_eq!(
            got,
            expected,
            "case {case_no} (seed {seed:#x}): {case:?}, splits {splits:?}, input {:?}",
            String::from_utf8_lossy(&input)
        );
        *errors.entry(got.error.unwrap_or("ok")).or_default() += 1;
    }
    eprintln!("{cases} cases, seed {seed:#x}: {errors:?}");
    // Every outcome is reached, so the comparison covers every rule.
    for name in Error::ALL.map(Error::name).into_iter().chain(["ok"]) {
        assert!(
            errors.get(name).is_some_and(|&n| n >= 20),
            "{name} too rare: {errors:?}"
        );
    }
}
