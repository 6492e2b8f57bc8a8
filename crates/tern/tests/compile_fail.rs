//! The compile errors of handler and routing mistakes: each names the
//! argument, return type or state type at fault and what to do.
//!
//! The expected errors are the committed `tests/ui/*.stderr`; after a
//! deliberate change, regenerate them with
//! `TRYBUILD=overwrite cargo test -p tern --test compile_fail` and read the
//! diff. `tests/ui/pass/*.rs` must compile (and run) with the attribute.
//! The dependencies are built once, in `target/tests/trybuild`.

#[cfg(feature = "macros")]
#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
