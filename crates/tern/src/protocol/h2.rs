//! The HTTP/2 connection preface, where HTTP/1 and HTTP/2 part: the bytes
//! that decide a connection's protocol and Tern's answer to a broken
//! preface. See the [catalogue](super).

/// The HTTP/2 connection preface (RFC 9113 §3.4): a connection that starts
/// with it is HTTP/2, and none of the HTTP/1 rules apply to it.
pub(crate) const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// `PRI * HTTP/2.0`, the preface's first 14 bytes: a request line no
/// HTTP/1 parser takes (version 2.0). A connection that leaves the preface
/// before this many bytes is HTTP/1 (`POST`, a lone `P`, `PRI` on
/// HTTP/1.1); one that leaves it after is a broken HTTP/2 preface.
pub(crate) const HTTP2_LINE: usize = 14;

/// **Broken preface** (Tern's rule): a connection that starts with
/// [`HTTP2_LINE`] and then leaves [`PREFACE`] gets these bytes, the
/// server's (empty) SETTINGS, which must be its first frame, and GOAWAY
/// (last stream 0, `PROTOCOL_ERROR`), then a close.
///
/// Why: RFC 9113 §3.4 makes an invalid preface a connection error
/// `PROTOCOL_ERROR` (§5.4.1); hyper-util's `auto` builder took anything
/// short of the whole preface for HTTP/1 and answered an HTTP/1.1 400 to an
/// HTTP/2 client. Enforced by `server/preface.rs` (`PrefaceCheck`).
pub(crate) const PREFACE_REFUSAL: [u8; 26] = [
    0, 0, 0, 0x4, 0, 0, 0, 0, 0, // SETTINGS, no parameters
    0, 0, 8, 0x7, 0, 0, 0, 0, 0, // GOAWAY, 8 bytes, stream 0
    0, 0, 0, 0, // last stream id
    0, 0, 0, 0x1, // PROTOCOL_ERROR
];
