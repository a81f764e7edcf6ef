//! Compression codecs with Kafka's exact framings, one submodule per codec.
//!
//! | codec  | id | framing on the wire                                             | magic |
//! |--------|----|-----------------------------------------------------------------|-------|
//! | gzip   | 1  | gzip members (RFC 1952); readers accept concatenated members    | 0,1,2 |
//! | snappy | 2  | xerial snappy-java stream framing written; xerial or raw read   | 0,1,2 |
//! | lz4    | 3  | Kafka's LZ4 frame: independent 64 KiB blocks, no block checksum | 0,1,2 |
//! | zstd   | 4  | zstd frames without content size or checksum; concatenation read | 2     |
//!
//! Each submodule's docs draw its framing byte by byte and list where Kafka's reader is lenient
//! or strict.
//!
//! Every decompression takes a limit and stops with [`Error::DecompressLimit`] once output
//! would exceed it; no allocation is sized from a length the input claims beyond what the input
//! could really expand to or what the limit allows. Decompressors append straight into the
//! caller's vector (reusing its capacity) and leave it unchanged when they fail.
//!
//! The deflate, inflate and zstd contexts are expensive to set up, so each thread keeps one of
//! each after first use (libzstd trims a context that stays oversized for long).
//!
//! # Examples
//!
//! ```
//! use krecords_codec::compression::{compress, decompress};
//! use krecords_codec::Compression;
//!
//! let mut packed = Vec::new();
//! compress(Compression::Lz4, None, 2, b"hello hello hello", &mut packed).unwrap();
//! let mut scratch = Vec::new();
//! decompress(Compression::Lz4, 2, &packed, 1 << 20, 0, &mut scratch).unwrap();
//! assert_eq!(scratch, b"hello hello hello");
//! ```

mod bounded;
pub mod gzip;
pub mod lz4;
pub mod snappy;
#[cfg(test)]
mod test_data;
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

/// `level` checked as Kafka checks it for `codec` ([`Compression::is_valid_level`]); `None`
/// (and gzip's -1, `Deflater.DEFAULT_COMPRESSION`) stands for the codec's default.
fn checked_level(codec: Compression, level: Option<i32>) -> Result<Option<i32>> {
    match level {
        None => Ok(None),
        Some(-1) if codec == Compression::Gzip => Ok(None),
        Some(level) if codec.is_valid_level(level) => Ok(Some(level)),
        Some(level) => Err(Error::InvalidLevel {
            compression: codec,
            level,
        }),
    }
}

/// What a compressor of `codec` fails with: [`Error::Compress`] for a reason.
fn compress_error(codec: Compression) -> impl Fn(String) -> Error {
    move |reason| Error::Compress {
        compression: codec,
        reason,
    }
}

/// The window `out[end..end + 4 + max]` for a length-prefixed block (the LZ4 and xerial snappy
/// framings), split into the 4-byte length and room for `max` bytes of body. `out` is extended
/// with zeros as far as the window needs; `None` only if `end` is beyond `out`.
#[inline]
fn block_window(out: &mut Vec<u8>, end: usize, max: usize) -> Option<(&mut [u8; 4], &mut [u8])> {
    // `end` stays within what the caller reserved, far from overflowing.
    let window_end = end.saturating_add(4).saturating_add(max);
    // Zero-fill only what the previous block did not already leave zeroed or written.
    if out.len() < window_end {
        out.resize(window_end, 0);
    }
    out.get_mut(end..window_end)
        .and_then(|w| w.split_first_chunk_mut::<4>())
}

/// The `N` bytes at `bytes[at..]`, if there are that many.
#[inline]
fn chunk_at<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..)?.first_chunk().copied()
}

/// The little-endian `u16` at `bytes[at..]` (gzip fields).
#[allow(clippy::little_endian_bytes)] // gzip fields are little-endian
#[inline]
fn le16(bytes: &[u8], at: usize) -> Option<u16> {
    chunk_at(bytes, at).map(u16::from_le_bytes)
}

/// The little-endian `u32` at `bytes[at..]` (gzip, LZ4 and zstd fields).
#[allow(clippy::little_endian_bytes)] // gzip, LZ4 and zstd fields are little-endian
#[inline]
fn le32(bytes: &[u8], at: usize) -> Option<u32> {
    chunk_at(bytes, at).map(u32::from_le_bytes)
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
                return Err(Error::DecompressLimit {
                    at,
                    compression: codec,
                    limit,
                });
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

/// What Kafka's decompressing stream checks when it is opened, before any record is read:
/// `GZIPInputStream` reads the gzip header; `KafkaLZ4BlockInputStream` the LZ4 frame header
/// (and its checksum, except for magic 0); snappy-java's `SnappyInputStream` the xerial
/// header, or, for a raw snappy block, decodes all of it; zstd-jni reads nothing until asked.
/// A v2 batch that declares no records is still opened this way by Kafka's reader, so an
/// empty batch with a broken compressed section is refused there and here alike.
///
/// # Errors
///
/// [`Error::Decompress`] as the codec's `decompress` reports a bad header;
/// [`Error::DecompressLimit`] for a raw snappy block larger than `limit`.
pub fn check_stream_start(
    codec: Compression,
    magic: u8,
    input: &[u8],
    limit: usize,
    at: usize,
) -> Result<()> {
    match codec {
        Compression::None | Compression::Zstd => Ok(()),
        Compression::Gzip => gzip::check_header(input, at),
        Compression::Lz4 => lz4::check_header(input, magic, at),
        Compression::Snappy => snappy::check_start(input, limit, at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::path::PathBuf;

    fn vectors_dir(sub: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/vectors")
            .join(sub)
    }

    fn load(path: &std::path::Path) -> Value {
        let text = std::fs::read_to_string(path).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Peer vectors whose writer (franz-go) expects an error where Kafka's reader accepts the
    /// input: 1 to 3 stray bytes after the last xerial chunk end the stream in snappy-java.
    /// Where peers disagree we follow Kafka (found by the differential tests).
    const KAFKA_ACCEPTS: [&str; 1] = ["franz_go_xerial_header_only_too_short.json"];

    /// Every peer codec vector, run through the public dispatcher. An `expect` key this test does
    /// not know fails it, so a new vector cannot be skipped silently.
    #[test]
    fn peer_codec_vectors() {
        let mut files: Vec<_> = std::fs::read_dir(vectors_dir("peers/codec"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        assert!(files.len() >= 9, "found {} vectors", files.len());
        for path in &files {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let v = load(path);
            let codec = Compression::from_name(v["codec"].as_str().unwrap()).unwrap();
            let input = hex::decode(v["hex"].as_str().unwrap()).unwrap();
            let expect = v["expect"].as_object().unwrap();
            let limit = 1 << 20;
            let mut out = Vec::new();
            let result = decompress(codec, 2, &input, limit, 1000, &mut out);
            for (key, value) in expect {
                match key.as_str() {
                    "decompressed_hex" => {
                        assert!(result.is_ok(), "{name}: {result:?}");
                        assert_eq!(hex::encode(&out), value.as_str().unwrap(), "{name}");
                    }
                    "xerial_decode_error" | "error" if KAFKA_ACCEPTS.contains(&name.as_str()) => {
                        // Peers disagree; Kafka's reader (snappy-java) takes it, and so do we.
                        assert!(result.is_ok(), "{name}: {result:?}");
                    }
                    "xerial_decode_error" | "error" => {
                        assert_eq!(value, &Value::Bool(true), "{name}");
                        let err = result.as_ref().expect_err(&name);
                        assert_eq!(err.position(), Some(1000), "{name}");
                        assert!(out.is_empty(), "{name}");
                        assert!(
                            out.capacity() < limit,
                            "{name}: capacity {}",
                            out.capacity()
                        );
                    }
                    "reason" => {} // prose for the "error" case
                    "is_xerial" => {
                        assert_eq!(
                            snappy::is_xerial(&input),
                            value.as_bool().unwrap(),
                            "{name}"
                        );
                    }
                    other => panic!("{name}: unknown expectation {other:?}"),
                }
            }
        }
    }

    #[test]
    fn every_codec_round_trips_through_the_dispatcher() {
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_be_bytes())
            .collect();
        for codec in Compression::ALL {
            for magic in 0..=2u8 {
                if !codec.allowed_in(magic) {
                    continue;
                }
                let mut packed = Vec::new();
                compress(codec, None, magic, &data, &mut packed).unwrap();
                let mut out = vec![1, 2, 3];
                decompress(codec, magic, &packed, data.len(), 7, &mut out).unwrap();
                assert_eq!(out[3..], data[..], "{codec} magic {magic}");
                let err = decompress(codec, magic, &packed, data.len() - 1, 7, &mut out);
                assert_eq!(
                    err.unwrap_err(),
                    Error::DecompressLimit {
                        at: 7,
                        compression: codec,
                        limit: data.len() - 1
                    },
                    "{codec} magic {magic}"
                );
                assert_eq!(out.len(), 3 + data.len());
            }
        }
    }

    #[test]
    fn levels_are_checked_at_both_ends() {
        for codec in [Compression::Gzip, Compression::Lz4, Compression::Zstd] {
            let (lo, hi) = codec.level_range().unwrap();
            let mut out = Vec::new();
            for level in [lo, hi] {
                if codec == Compression::Zstd && level == hi {
                    continue; // zstd 22 is exercised in zstd.rs on small input
                }
                out.clear();
                compress(codec, Some(level), 2, b"level level level", &mut out).unwrap();
                let mut back = Vec::new();
                decompress(codec, 2, &out, 100, 0, &mut back).unwrap();
                assert_eq!(back, b"level level level");
            }
            for level in [lo - 1, hi + 1] {
                assert_eq!(
                    compress(codec, Some(level), 2, b"x", &mut out),
                    Err(Error::InvalidLevel {
                        compression: codec,
                        level
                    })
                );
            }
        }
    }
}
