//! Response compression: [`compression`], tower-http's
//! `CompressionLayer` with Tern's rules.
//!
//! - gzip, brotli and zstd, as the request's `Accept-Encoding` prefers
//!   (deflate is not offered: browsers all take gzip);
//! - only bodies of at least [`MIN_SIZE`] bytes (below that the headers
//!   outweigh the savings), and only text-like media types (HTML, CSS,
//!   scripts, JSON, XML, SVG, WebAssembly, plain text): never images,
//!   archives, fonts already compressed, or event streams (whose events
//!   must not wait in a compressor);
//! - never a response that is already encoded (a precompressed static
//!   file) or a range (`206`);
//! - `Vary: Accept-Encoding` on what it compresses; `Content-Length` and
//!   `Accept-Ranges` dropped there (the length is not known in advance);
//! - streaming bodies are compressed as they stream.
//!
//! ```
//! use tern::App;
//!
//! let app = App::new().layer(tern_site::compression());
//! ```

use http::{header, Extensions, HeaderMap, StatusCode, Version};
use tower_http::compression::{
    predicate::{Predicate, SizeAbove},
    CompressionLayer,
};

/// Bodies smaller than this are sent as they are.
pub const MIN_SIZE: u16 = 1024;

/// Whether a response's media type is worth compressing.
pub fn compressible(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == "text/event-stream" {
        return false;
    }
    essence.starts_with("text/")
        || matches!(
            essence.as_str(),
            "application/json"
                | "application/problem+json"
                | "application/javascript"
                | "application/xml"
                | "application/xhtml+xml"
                | "application/rss+xml"
                | "application/atom+xml"
                | "application/manifest+json"
                | "application/ld+json"
                | "application/wasm"
                | "image/svg+xml"
        )
}

fn by_type(_: StatusCode, _: Version, headers: &HeaderMap, _: &Extensions) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(compressible)
}

/// The compression layer with Tern's rules (see the [module](self)):
/// add it with `App::layer`.
pub fn compression() -> CompressionLayer<impl Predicate> {
    CompressionLayer::new()
        .no_deflate()
        .compress_when(SizeAbove::new(MIN_SIZE).and(by_type as fn(_, _, &_, &_) -> bool))
}
