//! The head of Tern's own HTTP/1.1 codec (`server/h1/parse.rs`: the scan,
//! httparse on the whole head, the build pass with RFC 9112's rules) over
//! arbitrary byte streams of pipelined requests: it never panics; the
//! verdict is the same whole and cut into reads (every offset and single
//! bytes for inputs up to 512 bytes, the cuts the input chooses above);
//! what it read is a stream of its own with the same messages, so nothing
//! after a refused message is taken (`tern::__fuzz::H1::check`, which the
//! unit tests also run over `hardening/corpus/h1/`).
//!
//! `cd crates/tern/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run h1_parse ../../../hardening/corpus/h1 -- -max_len=65536`
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte chooses the reads' size for inputs over 512 bytes.
    let Some((&step, input)) = data.split_first() else {
        return;
    };
    let step = usize::from(step).max(1);
    let cuts: Vec<usize> = (step..input.len()).step_by(step).collect();
    tern::__fuzz::H1::check(input, &cuts);
});
