//! A whole body compressed in one call, for the cache: the encoders
//! tower-http's layer streams through (brotli, flate2's gzip, zstd),
//! called directly on bytes in memory.
//!
//! Two sets of levels: the layer's [`LEVEL`](super::LEVEL) for a body
//! seen for the first time ([`encode_fast`]), whose compressed bytes are
//! sent and dropped, and higher ones for a body seen again
//! ([`encode`]), whose bytes are kept and sent many times. The kept
//! levels are never the slowest ones all the same: a body evicted and
//! admitted again pays them again. Their sizes and times on the
//! showcase's home page are in the [module](super#levels)'s table.

use std::io::{self, Write};

use super::{coding::Coding, LEVEL};

/// Brotli's quality for a cached body.
pub(crate) const BROTLI_LEVEL: i32 = 5;
/// gzip's level for a cached body (zlib's default).
pub(crate) const GZIP_LEVEL: u32 = 6;
/// zstd's level for a cached body (zstd's default).
pub(crate) const ZSTD_LEVEL: i32 = 3;

/// `input` compressed with `coding` at the levels of a kept body
/// (identity: as it is).
pub(crate) fn encode(coding: Coding, input: &[u8]) -> io::Result<Vec<u8>> {
    encode_at(coding, input, BROTLI_LEVEL, GZIP_LEVEL, ZSTD_LEVEL)
}

/// `input` compressed with `coding` at the layer's [`LEVEL`], for a body
/// that is not kept (identity: as it is).
pub(crate) fn encode_fast(coding: Coding, input: &[u8]) -> io::Result<Vec<u8>> {
    encode_at(coding, input, LEVEL, LEVEL.unsigned_abs(), LEVEL)
}

fn encode_at(
    coding: Coding,
    input: &[u8],
    brotli_level: i32,
    gzip_level: u32,
    zstd_level: i32,
) -> io::Result<Vec<u8>> {
    match coding {
        Coding::Identity => Ok(input.to_vec()),
        Coding::Brotli => {
            let params = brotli::enc::BrotliEncoderParams {
                quality: brotli_level,
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
                flate2::Compression::new(gzip_level),
            );
            encoder.write_all(input)?;
            encoder.finish()
        }
        Coding::Zstd => zstd::bulk::compress(input, zstd_level),
    }
}
