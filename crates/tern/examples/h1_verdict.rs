//! The verdict of Tern's own HTTP/1.1 codec on raw byte streams, for
//! `hardening/differential.py` (the differential against llhttp).
//!
//! Reads cases from stdin, each a 4-byte big-endian length then that many
//! bytes, and prints one JSON line per case: `state` (`valid`, `invalid`
//! with `status`, `incomplete`, `upgrade`, `closed`), the `messages` read
//! (`at`, `method`, `target`, `fields`, `body`, `expect`) and `read` (the
//! bytes they take). Bodies go through the codec's body decoder.
//!
//! ```sh
//! cargo run -q -p tern --example h1_verdict -- [--max-head N] [--max-headers N] [--max-body N] < cases
//! ```
//! The limits default to Tern's (`TERN_MAX_HEAD_BYTES` 16 KiB,
//! `TERN_MAX_HEADERS` 100, `TERN_MAX_BODY_BYTES` 2 MiB).

use std::io::{self, BufWriter, Read as _, Write as _};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut limits = tern::config::Limits::default();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--max-head" => limits.max_head_bytes = value.parse()?,
            "--max-headers" => limits.max_headers = value.parse()?,
            "--max-body" => limits.max_body_bytes = value.parse()?,
            _ => return Err(format!("unknown argument {flag}").into()),
        }
    }
    let mut input = Vec::new();
    io::stdin().lock().read_to_end(&mut input)?;
    let mut out = BufWriter::new(io::stdout().lock());
    let mut rest = &input[..];
    while !rest.is_empty() {
        let (len, tail) = rest
            .split_first_chunk::<4>()
            .ok_or("a case's length is cut short")?;
        let len = usize::try_from(u32::from_be_bytes(*len))?;
        let case = tail.get(..len).ok_or("a case is shorter than its length")?;
        writeln!(out, "{}", tern::__fuzz::H1::verdict(case, &[], &limits))?;
        rest = &tail[len..];
    }
    out.flush()?;
    Ok(())
}
