//! A whole body compressed in one call, for the cache: the encoders
//! tower-http's layer streams through (brotli, flate2's gzip, zstd),
//! called directly on bytes in memory.
//!
//! The levels are higher than the layer's [`LEVEL`](super::LEVEL),
//! since a cached body is compressed once per process and sent many
//! times, but never the slowest ones: a page whose bytes change on every
//! request misses every time and pays its level every time. Their sizes
//! and times on the showcase's home page are in the [module](super#levels)'s
//! table.

use std::io::{self, Write};

use super::coding::Coding;

/// Brotli's quality for a cached body.
pub(crate) const BROTLI_LEVEL: i32 = 5;
/// gzip's level for a cached body (zlib's default).
pub(crate) const GZIP_LEVEL: u32 = 6;
/// zstd's level for a cached body (zstd's default).
pub(crate) const ZSTD_LEVEL: i32 = 3;

/// `input` compressed with `coding` (identity: as it is).
pub(crate) fn encode(coding: Coding, input: &[u8]) -> io::Result<Vec<u8>> {
    match coding {
        Coding::Identity => Ok(input.to_vec()),
        Coding::Brotli => {
            let params = brotli::enc::BrotliEncoderParams {
                quality: BROTLI_LEVEL,
                size_hint: input.len(),
                ..Default::default()
            };
            let mut out = Vec::with_capacity(input.len() / 2);
            brotli::BrotliCompress(&mut &input[..], &mut out, &params)?;
            Ok(out)
        }
        Coding::Gzip => {
            let mut encoder = flate2::write::GzEncoder::new(
                Vec::with_capacity(input.len() / 2),
                flate2::Compression::new(GZIP_LEVEL),
            );
            encoder.write_all(input)?;
            encoder.finish()
        }
        Coding::Zstd => zstd::bulk::compress(input, ZSTD_LEVEL),
    }
}
