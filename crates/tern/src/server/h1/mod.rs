//! Tern's own HTTP/1.1 server codec (issue 31; plan `docs/plans/http1.md`),
//! built beside hyper's HTTP/1 path until it replaces it: the head
//! (`parse`), the request body (`body`), the answer's head and framing
//! (`write`), the buffers and the readiness-then-read socket (`buf`); the
//! connection follows.
//!
//! Strict by construction: every rule of RFC 9112 it enforces is in
//! `crate::protocol::h1`, applied while the bytes are read, each limit
//! checked before the bytes it bounds are buffered.

pub(crate) mod body;
pub(crate) mod buf;
pub(crate) mod conn;
pub(crate) mod parse;
pub(crate) mod write;
