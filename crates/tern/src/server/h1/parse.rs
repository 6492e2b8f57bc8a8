//! The head of an HTTP/1.1 request: scanned, parsed and checked (step 1 of
//! `docs/plans/http1.md`).
