//! Tern's own HTTP/1.1 server (issue 31; plan `docs/plans/http1.md`), the
//! default engine (`TERN_HTTP1=hyper` is the way back for one release): the
//! head (`parse`), the request body (`body`), the answer's head and framing
//! (`write`), the buffers and the readiness-then-read socket (`buf`), and
//! the connection's state machine that drives them (`conn`).
//!
//! Strict by construction: every rule of RFC 9112 it enforces is in
//! `crate::protocol::h1`, applied while the bytes are read, each limit
//! checked before the bytes it bounds are buffered.

pub(crate) mod body;
pub(crate) mod buf;
pub(crate) mod conn;
pub(crate) mod parse;
pub(crate) mod write;
