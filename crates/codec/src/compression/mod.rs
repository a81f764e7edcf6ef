//! Compression codecs with Kafka's exact framings, one submodule per codec.
//!
//! | codec  | id | framing on the wire                                             | magic |
//! |--------|----|-----------------------------------------------------------------|-------|
//! | gzip   | 1  | gzip members (RFC 1952); readers accept concatenated members    | 0,1,2 |
//! | snappy | 2  | xerial snappy-java stream framing written; xerial or raw read   | 0,1,2 |
//! | lz4    | 3  | Kafka's LZ4 frame: independent 64 KiB blocks, no block checksum | 0,1,2 |
//! | zstd   | 4  | zstd frame                                                      | 2     |
//!
//! Every decompression takes a limit and stops with [`Error::DecompressLimit`] once output
//! would exceed it; no allocation is sized from a length the input claims.

pub mod gzip;
pub mod lz4;
pub mod snappy;
pub mod zstd;

use crate::{Compression, Error, Result};

/// Compresses `input` with `codec` and appends the framed result to `out`.
///
/// `level` is the codec level (`None` for Kafka's default); `magic` selects framing quirks (the
/// LZ4 header checksum of magic 0).
///
/// # Errors
///
/// [`Error::InvalidLevel`] for a level outside the codec's range, [`Error::Compress`] if a codec
/// library fails.
pub fn compress(
    codec: Compression,
    level: Option<i32>,
    magic: u8,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    if let (Some(level), Some((lo, hi))) = (level, codec.level_range()) {
        if level < lo || level > hi {
            return Err(Error::InvalidLevel { compression: codec, level });
        }
    }
    match codec {
        Compression::None => {
            out.extend_from_slice(input);
            Ok(())
        }
        Compression::Gzip => gzip::compress(input, level, out),
        Compression::Snappy => snappy::compress(input, out),
        Compression::Lz4 => lz4::compress(input, level, magic, out),
        Compression::Zstd => zstd::compress(input, level, out),
    }
}

/// Decompresses `input` (framed as Kafka writes `codec`) and appends the result to `out`, never
/// letting `out` grow by more than `limit` bytes.
///
/// `at` is the absolute position of `input[0]` in the caller's buffer, used in errors.
///
/// # Errors
///
/// [`Error::Decompress`] for data the codec cannot decode, [`Error::DecompressLimit`] when the
/// output would exceed `limit`.
pub fn decompress(
    codec: Compression,
    magic: u8,
    input: &[u8],
    limit: usize,
    at: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    match codec {
        Compression::None => {
            if input.len() > limit {
                return Err(Error::DecompressLimit { at, compression: codec, limit });
            }
            out.extend_from_slice(input);
            Ok(())
        }
        Compression::Gzip => gzip::decompress(input, limit, at, out),
        Compression::Snappy => snappy::decompress(input, limit, at, out),
        Compression::Lz4 => lz4::decompress(input, magic, limit, at, out),
        Compression::Zstd => zstd::decompress(input, limit, at, out),
    }
}
