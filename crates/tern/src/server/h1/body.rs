//! The body of an HTTP/1.1 request: `Content-Length` and chunked framing
//! decoded from the connection's buffer (step 2 of `docs/plans/http1.md`).
