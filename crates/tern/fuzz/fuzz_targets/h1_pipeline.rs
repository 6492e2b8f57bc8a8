//! Tern's own HTTP/1.1 connection, whole, in memory: the fuzzer's bytes
//! choose a pipeline of requests of every framing (none, Content-Length,
//! chunked with extensions and trailers, `Expect: 100-continue`, an
//! upgrade the app does not grant, HTTP/1.0 with and without keep-alive)
//! with garbage between them, and where to cut it into writes; the
//! connection serves it to an app that records what it sees. The check
//! (`tern::__fuzz::H1::pipeline`, which the unit tests also run over
//! `hardening/corpus/h1/`): answers in order, one per request before the
//! first bad garbage, at most one refusal after them and nothing after it,
//! the connection ends with no answer lost, and the app saw exactly the
//! generator's requests.
//!
//! `cd crates/tern/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run h1_pipeline ../../../hardening/corpus/h1`
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tern::__fuzz::H1::pipeline(data);
});
