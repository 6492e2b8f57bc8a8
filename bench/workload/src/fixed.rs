//! The fixed endpoints: one path each, one exact body each.

use std::{borrow::Cow, path::Path, sync::OnceLock};

use crate::rng::XorShift64;

/// `Content-Type` of the text endpoints (`/plaintext`, `/compression/text`,
/// `/llms.txt`).
pub const TEXT_PLAIN: &str = "text/plain; charset=utf-8";
/// `Content-Type` of every JSON response, and of every JSON request body.
pub const APPLICATION_JSON: &str = "application/json";
/// `Content-Type` of the sized bodies (`/small`, `/medium`, `/large`).
pub const OCTET_STREAM: &str = "application/octet-stream";

/// The body of `GET /plaintext`: 13 bytes (a `str`, so frameworks can
/// answer it with their idiomatic `&'static str` response).
pub const PLAINTEXT: &str = "Hello, World!";

/// The message `GET /json` serializes per request.
pub const JSON_MESSAGE: &str = "Hello, World!";

/// The body of `GET /json`: `{"message":"Hello, World!"}`, which servers
/// must produce by serializing a `{ message: &str }` value per request
/// (not by sending these bytes).
pub const JSON: &[u8] = br#"{"message":"Hello, World!"}"#;

/// Length of `GET /small`.
pub const SMALL_LEN: usize = 128;
/// Length of `GET /medium`.
pub const MEDIUM_LEN: usize = 1_024;
/// Length of `GET /large`, and the longest [`body`].
pub const LARGE_LEN: usize = 102_400;

const ALNUM: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// `A`..`Z`, `a`..`z`, `0`..`9`, repeated: printable, nothing to escape in
/// any format, and every sized body is a prefix of the same bytes.
static PATTERN: [u8; LARGE_LEN] = {
    let mut out = [0u8; LARGE_LEN];
    let mut i = 0;
    while i < LARGE_LEN {
        out[i] = ALNUM[i % ALNUM.len()];
        i += 1;
    }
    out
};

/// The first `len` bytes of the sized-body pattern: `GET /small` is
/// `body(SMALL_LEN)`, `/medium` is `body(MEDIUM_LEN)`, `/large` is
/// `body(LARGE_LEN)`.
///
/// The pattern is `A-Z a-z 0-9` (62 bytes) repeated; it is static, so
/// servers may send it without copying.
///
/// ```
/// use tern_bench_workload::{body, SMALL_LEN};
/// assert_eq!(body(SMALL_LEN).len(), 128);
/// assert!(body(SMALL_LEN).starts_with(b"ABCDEFGHIJ"));
/// ```
///
/// # Panics
/// If `len` is larger than [`LARGE_LEN`].
pub fn body(len: usize) -> &'static [u8] {
    &PATTERN[..len]
}

/// Length of [`compression_text`]: 50 KiB.
pub const COMPRESSION_TEXT_LEN: usize = 51_200;

const WORDS: &[&str] = &[
    "request",
    "response",
    "router",
    "handler",
    "server",
    "client",
    "header",
    "body",
    "stream",
    "socket",
    "buffer",
    "latency",
    "throughput",
    "worker",
    "thread",
    "runtime",
    "future",
    "task",
    "connection",
    "pipeline",
    "compression",
    "gzip",
    "brotli",
    "cache",
    "static",
    "dynamic",
    "route",
    "path",
    "query",
    "param",
    "json",
    "text",
    "byte",
    "frame",
    "window",
    "limit",
    "timeout",
    "keep-alive",
    "shutdown",
    "signal",
    "graceful",
    "drain",
    "tern",
    "hyper",
    "tokio",
    "tower",
    "service",
    "layer",
    "middleware",
    "extractor",
    "state",
    "error",
    "problem",
    "status",
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "is",
    "for",
    "with",
    "on",
    "every",
    "each",
    "one",
];

/// The body of `GET /compression/text`: exactly [`COMPRESSION_TEXT_LEN`]
/// bytes of English-like ASCII prose (sentences of words from a fixed
/// list, paragraphs of a few sentences), generated once from a fixed seed.
///
/// Servers send it with `Content-Type: text/plain; charset=utf-8`,
/// compressed with gzip or brotli as the request's `Accept-Encoding` asks
/// (identity when it asks for neither); a check compares the bytes after
/// decompression.
///
/// ```
/// let text = tern_bench_workload::compression_text();
/// assert_eq!(text.len(), 51_200);
/// assert!(text.is_ascii());
/// ```
pub fn compression_text() -> &'static [u8] {
    static TEXT: OnceLock<Vec<u8>> = OnceLock::new();
    TEXT.get_or_init(|| {
        let mut rng = XorShift64::new(0x7465_7874); // "text"
        let mut out = Vec::with_capacity(COMPRESSION_TEXT_LEN + 256);
        while out.len() < COMPRESSION_TEXT_LEN {
            for _ in 0..rng.between(3, 6) {
                for i in 0..rng.between(6, 16) {
                    let word = rng.pick(WORDS).as_bytes();
                    if i == 0 {
                        out.push(word[0].to_ascii_uppercase());
                        out.extend_from_slice(&word[1..]);
                    } else {
                        out.push(b' ');
                        out.extend_from_slice(word);
                    }
                }
                out.extend_from_slice(b". ");
            }
            out.pop();
            out.extend_from_slice(b"\n\n");
        }
        out.truncate(COMPRESSION_TEXT_LEN - 1);
        out.push(b'\n');
        out
    })
}

/// The body of `GET /compression/json`: about 50 KB (at least 50,000
/// bytes) of compact JSON, an array of objects such as
/// `{"id":0,"name":"item-0","category":"router","price_cents":1234,"in_stock":true,"tags":["gzip","tokio"],"description":"..."}`,
/// generated once from a fixed seed.
///
/// Servers send these bytes as they are (they are not re-serialized), with
/// `Content-Type: application/json`, compressed as for
/// [`compression_text`].
///
/// ```
/// let json = tern_bench_workload::compression_json();
/// assert!(json.len() >= 50_000 && json.len() < 52_000);
/// assert!(json.starts_with(b"[{\"id\":0,"));
/// ```
pub fn compression_json() -> &'static [u8] {
    static JSON: OnceLock<Vec<u8>> = OnceLock::new();
    JSON.get_or_init(|| {
        let mut rng = XorShift64::new(0x6a73_6f6e); // "json"
        let mut out = Vec::with_capacity(52_000);
        out.push(b'[');
        let mut id = 0u64;
        while out.len() < 50_000 {
            if id > 0 {
                out.push(b',');
            }
            let category = rng.pick(WORDS);
            let price = rng.between(100, 99_999);
            let in_stock = rng.chance(80);
            out.extend_from_slice(
                format!(
                    r#"{{"id":{id},"name":"item-{id}","category":"{category}","price_cents":{price},"in_stock":{in_stock},"tags":["#
                )
                .as_bytes(),
            );
            for t in 0..rng.between(1, 4) {
                if t > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(format!("\"{}\"", rng.pick(WORDS)).as_bytes());
            }
            out.extend_from_slice(br#"],"description":""#);
            for w in 0..rng.between(5, 12) {
                if w > 0 {
                    out.push(b' ');
                }
                out.extend_from_slice(rng.pick(WORDS).as_bytes());
            }
            out.extend_from_slice(b"\"}");
            id += 1;
        }
        out.push(b']');
        out
    })
}

/// The body of `GET /user/{id}`: `{"id":ID,"name":"user-ID"}` with `ID` the
/// path parameter as a decimal `u64` (servers parse it; a parameter that
/// is not a `u64` is not part of the workload).
///
/// ```
/// assert_eq!(tern_bench_workload::user_body(42), br#"{"id":42,"name":"user-42"}"#);
/// ```
pub fn user_body(id: u64) -> Vec<u8> {
    format!(r#"{{"id":{id},"name":"user-{id}"}}"#).into_bytes()
}

/// The bytes of `GET /llms.txt`, as the crate ships them in
/// `static/llms.txt`. Servers must not embed these: they read the file at
/// [`llms_txt_path`] for every request.
pub const LLMS_TXT: &[u8] = include_bytes!("../static/llms.txt");

/// Where `static/llms.txt` is on this machine: the file every server reads
/// from disk for each `GET /llms.txt` (the path of this crate's sources at
/// build time, so a server binary must run where it was built).
///
/// ```
/// let path = tern_bench_workload::llms_txt_path();
/// assert_eq!(std::fs::read(path).unwrap(), tern_bench_workload::LLMS_TXT);
/// ```
pub fn llms_txt_path() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/static/llms.txt"))
}

/// A fixed endpoint: a `GET` of `path` answered `200` with `body` and
/// `content_type`.
///
/// The list is [`fixed`]; workload names in evidence files are the
/// `name`s here (and `mixed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixed {
    /// Workload name: `plaintext`, `json`, `small`, `medium`, `large`,
    /// `compression-text`, `compression-json`, `user`, `static`.
    pub name: &'static str,
    /// Request path (for `user`, one concrete id: `/user/42`).
    pub path: Cow<'static, str>,
    /// The exact `Content-Type` header value.
    pub content_type: &'static str,
    /// The exact body, after decompression for compressible endpoints.
    pub body: Cow<'static, [u8]>,
    /// Whether the server compresses it by `Accept-Encoding` (gzip, br);
    /// only the two compression endpoints are, every other one is sent as
    /// it is even when the client accepts compression.
    pub compressible: bool,
}

/// Every fixed endpoint, in a stable order.
///
/// ```
/// let all = tern_bench_workload::fixed();
/// assert_eq!(all[0].path, "/plaintext");
/// assert_eq!(all.iter().filter(|f| f.compressible).count(), 2);
/// ```
pub fn fixed() -> Vec<Fixed> {
    let entry = |name, path: &'static str, content_type, body: &'static [u8], compressible| Fixed {
        name,
        path: Cow::Borrowed(path),
        content_type,
        body: Cow::Borrowed(body),
        compressible,
    };
    vec![
        entry(
            "plaintext",
            "/plaintext",
            TEXT_PLAIN,
            PLAINTEXT.as_bytes(),
            false,
        ),
        entry("json", "/json", APPLICATION_JSON, JSON, false),
        entry("small", "/small", OCTET_STREAM, body(SMALL_LEN), false),
        entry("medium", "/medium", OCTET_STREAM, body(MEDIUM_LEN), false),
        entry("large", "/large", OCTET_STREAM, body(LARGE_LEN), false),
        entry(
            "compression-text",
            "/compression/text",
            TEXT_PLAIN,
            compression_text(),
            true,
        ),
        entry(
            "compression-json",
            "/compression/json",
            APPLICATION_JSON,
            compression_json(),
            true,
        ),
        Fixed {
            name: "user",
            path: Cow::Borrowed("/user/42"),
            content_type: APPLICATION_JSON,
            body: Cow::Owned(user_body(42)),
            compressible: false,
        },
        entry("static", "/llms.txt", TEXT_PLAIN, LLMS_TXT, false),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sized_bodies_are_prefixes_of_one_pattern() {
        assert_eq!(body(SMALL_LEN).len(), 128);
        assert_eq!(body(MEDIUM_LEN).len(), 1_024);
        assert_eq!(body(LARGE_LEN).len(), 102_400);
        assert!(body(LARGE_LEN).iter().all(u8::is_ascii_alphanumeric));
        assert_eq!(&body(LARGE_LEN)[62..72], b"ABCDEFGHIJ");
    }

    #[test]
    fn compression_bodies_are_stable_and_compressible_size() {
        let text = compression_text();
        assert_eq!(text.len(), COMPRESSION_TEXT_LEN);
        assert!(text.is_ascii() && text.ends_with(b"\n"));
        let json = compression_json();
        assert!((50_000..52_000).contains(&json.len()), "{}", json.len());
        assert!(json.starts_with(b"[{") && json.ends_with(b"}]"));
        // Brackets and quotes balance (the peers' smoke test parses it with
        // serde_json as well).
        let quotes = json.iter().filter(|&&b| b == b'"').count();
        assert_eq!(quotes % 2, 0);
        let open = json.iter().filter(|&&b| b == b'{').count();
        let close = json.iter().filter(|&&b| b == b'}').count();
        assert_eq!(open, close);
    }

    #[test]
    fn llms_txt_is_a_few_kilobytes_on_disk() {
        assert!((2_000..16_000).contains(&LLMS_TXT.len()));
        assert_eq!(
            std::fs::read(llms_txt_path()).ok().as_deref(),
            Some(LLMS_TXT)
        );
    }

    #[test]
    fn fixed_names_are_unique() {
        let all = fixed();
        for (i, a) in all.iter().enumerate() {
            assert!(all[i + 1..]
                .iter()
                .all(|b| b.name != a.name && b.path != a.path));
        }
    }
}
