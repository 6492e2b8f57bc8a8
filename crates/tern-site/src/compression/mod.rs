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
//! - streaming bodies are compressed as they stream;
//! - a strong `ETag` on what it compresses becomes weak (`W/"..."`, as
//!   nginx does): the compressed bytes are not the identity bytes the
//!   strong tag names, and two requests may not compress alike;
//!   `If-None-Match` compares weakly, so revalidation still gets `304`;
//! - the fastest level of each coding ([`LEVEL`]), for bodies made per
//!   request: at tower-http's defaults (brotli 4) a 25 KB page cost
//!   750 µs of brotli per request (`PERFORMANCE.md`, "The website");
//!   files that never change are better precompressed at the best level
//!   (`.br` siblings, served as they are by
//!   [`StaticFiles`](crate::StaticFiles)).
//!
//! ```
//! use tern::App;
//!
//! let app = App::new().layer(tern_site::compression());
//! ```

use http::{header, Extensions, HeaderMap, HeaderValue, StatusCode, Version};
use tower::ServiceBuilder;
use tower_http::compression::{
    predicate::{Predicate, SizeAbove},
    CompressionBody, CompressionLayer, CompressionLevel,
};

/// The compression level: 1 for gzip, brotli and zstd alike, the fast end
/// of each (see the [module](self)).
pub const LEVEL: i32 = 1;

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
pub fn compression() -> impl tern::routing::LayerBounds {
    ServiceBuilder::new()
        .map_response(weaken_etag as fn(_) -> _)
        .layer(
            CompressionLayer::new()
                .no_deflate()
                .quality(CompressionLevel::Precise(LEVEL))
                .compress_when(SizeAbove::new(MIN_SIZE).and(by_type as fn(_, _, &_, &_) -> bool)),
        )
        .map_response(mark_identity as fn(_) -> _)
        .into_inner()
}

/// Set on a response that left the app without a `Content-Encoding`.
#[derive(Clone, Copy)]
struct Identity;

fn mark_identity(mut res: tern::Response) -> tern::Response {
    if !res.headers().contains_key(header::CONTENT_ENCODING) {
        res.extensions_mut().insert(Identity);
    }
    res
}

/// A strong `ETag` on a response the layer compressed becomes weak.
fn weaken_etag(
    mut res: http::Response<CompressionBody<tern::body::Body>>,
) -> http::Response<CompressionBody<tern::body::Body>> {
    let compressed = res.extensions_mut().remove::<Identity>().is_some()
        && res.headers().contains_key(header::CONTENT_ENCODING);
    if compressed {
        if let Some(tag) = res.headers().get(header::ETAG) {
            if tag.as_bytes().starts_with(b"\"") {
                let mut weak = b"W/".to_vec();
                weak.extend_from_slice(tag.as_bytes());
                if let Ok(weak) = HeaderValue::from_bytes(&weak) {
                    res.headers_mut().insert(header::ETAG, weak);
                }
            }
        }
    }
    res
}
