//! Response compression: [`compression`], tower-http's
//! `CompressionLayer` with Tern's rules, and a cache of the compressed
//! bytes of answers already seen.
//!
//! What is compressed:
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
//! - `Vary: Accept-Encoding` on what it compresses, and `Accept-Ranges`
//!   dropped there;
//! - a strong `ETag` on what it compresses becomes weak (`W/"..."`, as
//!   nginx does): the compressed bytes are not the identity bytes the
//!   strong tag names, and two requests may not compress alike;
//!   `If-None-Match` compares weakly, so revalidation still gets `304`.
//!
//! How, by the kind of body:
//!
//! - **A body whole in memory** (a rendered page, a serialized JSON
//!   document, a file read whole) of [`MIN_SIZE`] to
//!   [`MAX_CACHED_BODY`] bytes goes through the
//!   [`CompressionCache`], which keeps a body from its second sighting:
//!   the first time these exact bytes are sent in a coding they are
//!   compressed at [`LEVEL`], as the layer would, and only their hash is
//!   remembered (in a set of [`SEEN_ONCE_SLOTS`] hashes); the second
//!   time they are compressed at better levels (brotli 5, gzip 6, zstd 3:
//!   see [Levels](self#levels)) and kept; every later time the kept
//!   bytes are sent again (found by a hash of the body, confirmed by
//!   comparing the bytes). The page is still made for every request;
//!   only its compression is skipped. These answers carry their exact
//!   `Content-Length`.
//! - **Everything else** (streams, bodies over [`MAX_CACHED_BODY`], or
//!   every body with the cache [off](CompressionCache::off)) is
//!   compressed by tower-http's layer as it streams, without
//!   `Content-Length`, at [`LEVEL`], the fastest level of each coding:
//!   at tower-http's defaults (brotli 4) a 25 KB page cost 750 µs of
//!   brotli per request (`PERFORMANCE.md`, "The website").
//!
//! The coding is the one tower-http chooses for the request (q-values,
//! then zstd, brotli, gzip), computed the same way for both paths
//! (`coding.rs`, tested against tower-http's own choice), so a page is
//! never brotli from the cache and zstd from the layer.
//!
//! A page whose bytes differ on every request (a CSRF token or a CSP
//! nonce in it, the time) never hits, and is never kept: it costs what
//! it cost before the cache, [`LEVEL`] (brotli 1: 0.4-0.6 ms on the
//! showcase's home page, against 1.3-1.8 ms at the cache's brotli 5),
//! plus a hash and a lookup. The counts ([`CompressionCache::stats`],
//! or `/metrics` with [`CompressionCache::metrics`]:
//! `result="hit"`, `"miss"` for a second sighting compressed and kept,
//! `"first"` for a first sighting compressed fast and not kept,
//! `"bypass"`) show the hit rate; a first is neither a hit nor a miss,
//! and counts against the hit rate as a miss does. Files that never
//! change are better precompressed at the best level (`.br` siblings,
//! served as they are by [`StaticFiles`](crate::StaticFiles)).
//!
//! ```
//! use tern::App;
//!
//! // A cache of 8 MiB per process.
//! let app = App::new().layer(tern_site::compression());
//! // Its size from `SITE_COMPRESSION_CACHE` (bytes; 0: no cache), and
//! // its counts at `/metrics`.
//! let app = tern_site::compression::install(App::new());
//! ```
//!
//! # Levels
//!
//! The cache's levels, against the layer's and the slowest, on the
//! showcase's home page (31,757 bytes of HTML at `d6b7910`), one call of
//! each encoder on the whole page (release build, one core of the lab's
//! 2-core Xeon, shared: the times are the range of three runs of 20
//! calls, at a load average near 3):
//!
//! | coding | level | bytes | time per call |
//! |---|--:|--:|--:|
//! | brotli | 1 (the layer's) | 17,048 | 0.39-0.61 ms |
//! | brotli | 4 (tower-http's default) | 12,726 | 0.79-1.6 ms |
//! | brotli | **5** (the cache's) | 12,038 | 1.3-1.8 ms |
//! | brotli | 6 | 12,001 | 1.2-2.2 ms |
//! | brotli | 9 | 11,978 | 17-23 ms |
//! | brotli | 11 | 10,614 | 41-50 ms |
//! | gzip | 1 (the layer's) | 16,196 | 0.14 ms |
//! | gzip | **6** (the cache's) | 12,564 | 0.83 ms |
//! | gzip | 9 | 12,562 | 1.1 ms |
//! | zstd | 1 (the layer's) | 13,787 | 0.08-0.13 ms |
//! | zstd | **3** (the cache's) | 13,079 | 0.11-0.19 ms |
//! | zstd | 6 | 12,526 | 0.54-0.60 ms |
//! | zstd | 19 | 12,153 | 7.2-8.9 ms |
//!
//! Past these levels the bytes hardly shrink and the time grows tenfold
//! (brotli 9 and 11, zstd 19). The cache's levels are paid once per body
//! kept (and again if it is evicted and admitted again); a body seen once
//! pays the layer's level. The hash of the same page (xxh3)
//! takes 1-1.5 µs.

mod cache;
mod coding;
mod encode;
mod service;

use http::{header, Extensions, HeaderMap, StatusCode, Version};
use serde::Deserialize;
use tower::ServiceBuilder;
use tower_http::compression::{
    predicate::{Predicate, SizeAbove},
    CompressionLayer, CompressionLevel,
};

pub use cache::{
    CacheStats, CompressionCache, DEFAULT_CACHE_BYTES, MAX_CACHED_BODY, SEEN_ONCE_SLOTS,
};

/// The compression level of answers compressed as they stream: 1 for
/// gzip, brotli and zstd alike, the fast end of each (see the
/// [module](self)).
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

/// The compression layer with Tern's rules and a cache of
/// [`DEFAULT_CACHE_BYTES`] (see the [module](self)): add it with
/// `App::layer`.
pub fn compression() -> impl tern::routing::LayerBounds {
    compression_with(CompressionCache::default())
}

/// The compression layer with `cache` (a bound of its own, or
/// [`CompressionCache::off`]).
///
/// ```
/// use tern::App;
/// use tern_site::compression::{compression_with, CompressionCache};
///
/// let app = App::new().layer(compression_with(CompressionCache::bytes(1 << 20)));
/// ```
pub fn compression_with(cache: CompressionCache) -> impl tern::routing::LayerBounds {
    ServiceBuilder::new()
        .map_response(service::weaken_etag as fn(_) -> _)
        .layer(
            CompressionLayer::new()
                .no_deflate()
                .quality(CompressionLevel::Precise(LEVEL))
                .compress_when(SizeAbove::new(MIN_SIZE).and(by_type as fn(_, _, &_, &_) -> bool)),
        )
        .layer(service::CacheLayer::new(cache))
        .into_inner()
}

/// The settings of [`install`] (prefix `site_compression`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// `SITE_COMPRESSION_CACHE`: the cache's bound in bytes; 0 turns it
    /// off.
    #[serde(default = "default_cache")]
    cache: usize,
}

fn default_cache() -> usize {
    DEFAULT_CACHE_BYTES
}

/// Adds the compression layer to `app`, with its cache sized by the
/// setting `SITE_COMPRESSION_CACHE` (bytes, default
/// [`DEFAULT_CACHE_BYTES`]; `0` turns the cache off; or `cache` in
/// the `[site_compression]` table of `tern.toml`) and its counts at the
/// app's `/metrics` ([`CompressionCache::metrics`]).
///
/// ```
/// let config = tern::Config::from_settings([("SITE_COMPRESSION_CACHE", "0")]).unwrap();
/// let app = tern_site::compression::install(tern::App::new());
/// let app = app.build_with(config).unwrap();
/// ```
pub fn install<S: Clone + Send + Sync + 'static>(app: tern::App<S>) -> tern::App<S> {
    let cache = CompressionCache::default().metrics(app.metrics());
    let sized = cache.clone();
    app.settings::<Settings>("site_compression")
        .on_build(move |app: &tern::AppService| {
            if let Some(settings) = app.settings::<Settings>() {
                sized.resize(settings.cache);
            }
        })
        .layer(compression_with(cache))
}
