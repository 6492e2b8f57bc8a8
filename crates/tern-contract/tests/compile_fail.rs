//! The compile errors of contract mistakes: an unknown rule (with the
//! closest one), a rule on a type it does not apply to (at the rule), a
//! pattern that is not a regular expression, a field type that cannot be
//! in a contract. Expected output: `tests/ui/*.stderr`; regenerate with
//! `TRYBUILD=overwrite cargo test -p tern-contract --test compile_fail`.

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
