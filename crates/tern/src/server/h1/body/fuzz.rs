// The `h1_body` fuzz target's view of the request-body decoder
// (`server/h1/body.rs`): a body's framing and limits in, what it decoded
// to out. The body of `tern::__fuzz::h1_body` (lib.rs `include!`s it
// there: the decoder's module is private to the server, this one must be
// reachable); not a public API.

/// Decodes `input`, a body framed and limited as `case` says, delivered
/// in reads cut at `splits` (offsets into `input`, any order, clamped),
/// appended to one buffer as a connection reads; the end of `input` is the
/// connection's end. Every event also goes through a
/// `tern_core::body::Body` made by `Body::from_conn`, read as each read
/// is decoded; it panics (the fuzz target's crash) if that body yields
/// other data, trailers or error, or if a data frame is empty or copied
/// rather than sliced from the buffer.
pub fn run(input: &[u8], case: Case, splits: &[usize]) -> Outcome {
    Runner::run(input, case, splits)
}

/// What `server/h1/body.rs` implements [`run`] on.
pub(crate) struct Runner;

/// How a body is framed and limited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    /// `Some(n)`: `Content-Length: n`; `None`: chunked.
    pub length: Option<u64>,
    /// `TERN_MAX_BODY_BYTES`.
    pub max_body: u64,
    /// `TERN_MAX_HEAD_BYTES`, the trailer section's limit.
    pub max_trailer_bytes: usize,
    /// `TERN_MAX_HEADERS`, the trailer section's field limit.
    pub max_trailer_fields: usize,
}

/// What a body decoded to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The data, concatenated.
    pub data: Vec<u8>,
    /// The trailer fields (lowercase names, values without the
    /// whitespace around them), sorted by name, stably.
    pub trailers: Vec<(String, Vec<u8>)>,
    /// The error's name, if the body was refused or cut short.
    pub error: Option<&'static str>,
    /// The status of the answer to that error.
    pub status: Option<u16>,
    /// The body's length on the wire, when it ended.
    pub consumed: Option<usize>,
}

