//! The chunk index: where each chunk of the original `.log` lies in the transformed object.
//!
//! The plugin cuts the segment into chunks of `originalChunkSize` bytes (the last one shorter)
//! and transforms each on its own (zstd, then AES-GCM). The manifest's `chunkIndex` maps the
//! chunks (plugin: `manifest/index/AbstractChunkIndex.java`):
//!
//! - `"type": "fixed"` (`FixedSizeChunkIndex`): no compression, so every transformed chunk has
//!   the same size `transformedChunkSize` (the original size, or 12 + size + 16 with
//!   encryption) except the last, `finalTransformedChunkSize`. Chunk count:
//!   `ceil(originalFileSize / originalChunkSize)`.
//! - `"type": "variable"` (`VariableSizeChunkIndex`): with compression, each transformed size
//!   is stored in `transformedChunks`, a string: standard base64 of a zstd frame (content size
//!   set, at most 10 MiB decompressed) of the binary list below (`ChunkSizesBinaryCodec`). The
//!   chunk count is the list's length.
//!
//! ```text
//! count: i32 BE
//! count == 0: nothing more
//! count == 1: last: i32 BE
//! count >= 2: base: i32 BE | width: u8 (1..=4) | (count - 1) values of `width` bytes, BE,
//!             each plus base | last: i32 BE
//! ```

use base64::engine::general_purpose::GeneralPurpose;
use base64::engine::{DecodePaddingMode, GeneralPurposeConfig};
use base64::Engine;

use crate::error::{Error, Result};

/// The plugin's cap on the decoded `transformedChunks` list
/// (`TransformedChunksDeserializer.MAX_DECOMPRESSED_SIZE`): 10 MiB.
pub const MAX_ENCODED_CHUNK_SIZES: usize = 10 * 1024 * 1024;

/// Standard base64 that accepts a missing padding, as Jackson's reader does.
pub(crate) const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// One chunk: its place in the original file and in the transformed object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    /// The chunk number, from 0.
    pub id: u32,
    /// Its first byte in the original file.
    pub original_position: u64,
    /// Its size in the original file.
    pub original_size: u32,
    /// Its first byte in the transformed object.
    pub transformed_position: u64,
    /// Its size in the transformed object.
    pub transformed_size: u32,
}

/// How the transformed chunk sizes are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkSizes {
    /// `"fixed"`: one size for all chunks but the last.
    Fixed {
        /// `transformedChunkSize`.
        transformed_chunk_size: u32,
        /// `finalTransformedChunkSize`.
        final_transformed_chunk_size: u32,
    },
    /// `"variable"`: one size per chunk (`transformedChunks`, decoded).
    Variable(Vec<u32>),
}

/// A validated chunk index: the sizes are consistent and every position fits in a `u64`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkIndex {
    original_chunk_size: u32,
    original_file_size: u32,
    sizes: ChunkSizes,
    /// Invariant: `chunk_count * original_chunk_size >= original_file_size` and the chunks but
    /// the last are full.
    chunk_count: u32,
    /// For a variable index, the transformed start of each chunk and, last, the total.
    starts: Vec<u64>,
    transformed_total: u64,
}

impl ChunkIndex {
    /// Validates an index: `originalChunkSize` positive, `originalFileSize` non-negative (both
    /// Java ints), and for a variable index exactly `ceil(originalFileSize / originalChunkSize)`
    /// sizes.
    ///
    /// # Errors
    ///
    /// [`Error::Manifest`] naming the field.
    pub fn new(original_chunk_size: i64, original_file_size: i64, sizes: ChunkSizes) -> Result<Self> {
        let field = |name: &str, reason: String| crate::error::manifest(&format!("chunkIndex.{name}"), reason);
        let ocs = u32::try_from(original_chunk_size)
            .ok()
            .filter(|v| *v > 0 && i32::try_from(*v).is_ok())
            .ok_or_else(|| field("originalChunkSize", format!("{original_chunk_size} is not a positive int")))?;
        let ofs = u32::try_from(original_file_size)
            .ok()
            .filter(|v| i32::try_from(*v).is_ok())
            .ok_or_else(|| field("originalFileSize", format!("{original_file_size} is not a non-negative int")))?;
        let expected = ofs.div_ceil(ocs);
        let (chunk_count, starts, transformed_total) = match &sizes {
            ChunkSizes::Fixed {
                transformed_chunk_size,
                final_transformed_chunk_size,
            } => {
                for (name, v) in [
                    ("transformedChunkSize", transformed_chunk_size),
                    ("finalTransformedChunkSize", final_transformed_chunk_size),
                ] {
                    if i32::try_from(*v).is_err() {
                        return Err(field(name, format!("{v} is not a non-negative int")));
                    }
                }
                let total = match expected.checked_sub(1) {
                    None => 0,
                    Some(full) => u64::from(full)
                        .checked_mul(u64::from(*transformed_chunk_size))
                        .and_then(|v| v.checked_add(u64::from(*final_transformed_chunk_size)))
                        .ok_or_else(|| field("transformedChunkSize", "overflows".into()))?,
                };
                (expected, Vec::new(), total)
            }
            ChunkSizes::Variable(list) => {
                if u32::try_from(list.len()).ok() != Some(expected) {
                    return Err(field(
                        "transformedChunks",
                        format!(
                            "{} chunk sizes for {ofs} bytes in chunks of {ocs} (expected {expected})",
                            list.len()
                        ),
                    ));
                }
                let mut starts = Vec::new();
                starts
                    .try_reserve_exact(list.len().saturating_add(1))
                    .map_err(|_| field("transformedChunks", "too many chunks".into()))?;
                let mut at = 0u64;
                for size in list {
                    if i32::try_from(*size).is_err() {
                        return Err(field("transformedChunks", format!("size {size} is not a non-negative int")));
                    }
                    starts.push(at);
                    at = at
                        .checked_add(u64::from(*size))
                        .ok_or_else(|| field("transformedChunks", "overflows".into()))?;
                }
                starts.push(at);
                (expected, starts, at)
            }
        };
        Ok(ChunkIndex {
            original_chunk_size: ocs,
            original_file_size: ofs,
            sizes,
            chunk_count,
            starts,
            transformed_total,
        })
    }

    /// `originalChunkSize`.
    pub fn original_chunk_size(&self) -> u32 {
        self.original_chunk_size
    }

    /// `originalFileSize`: the size of the segment's `.log`.
    pub fn original_file_size(&self) -> u32 {
        self.original_file_size
    }

    /// The stored transformed sizes.
    pub fn sizes(&self) -> &ChunkSizes {
        &self.sizes
    }

    /// The number of chunks.
    pub fn chunk_count(&self) -> u32 {
        self.chunk_count
    }

    /// The size the transformed object must have: the sum of the transformed chunk sizes.
    pub fn transformed_size(&self) -> u64 {
        self.transformed_total
    }

    /// The chunk numbered `id`, or `None` past the last. Costs O(1).
    pub fn chunk(&self, id: u32) -> Option<Chunk> {
        if id >= self.chunk_count {
            return None;
        }
        let ocs = u64::from(self.original_chunk_size);
        let original_position = u64::from(id).checked_mul(ocs)?;
        let is_last = id.checked_add(1) == Some(self.chunk_count);
        let original_size = if is_last {
            u32::try_from(u64::from(self.original_file_size).checked_sub(original_position)?).ok()?
        } else {
            self.original_chunk_size
        };
        let (transformed_position, transformed_size) = match &self.sizes {
            ChunkSizes::Fixed {
                transformed_chunk_size,
                final_transformed_chunk_size,
            } => (
                u64::from(id).checked_mul(u64::from(*transformed_chunk_size))?,
                if is_last {
                    *final_transformed_chunk_size
                } else {
                    *transformed_chunk_size
                },
            ),
            ChunkSizes::Variable(list) => {
                let i = usize::try_from(id).ok()?;
                (*self.starts.get(i)?, *list.get(i)?)
            }
        };
        Some(Chunk {
            id,
            original_position,
            original_size,
            transformed_position,
            transformed_size,
        })
    }

    /// The chunk holding byte `offset` of the original file, or `None` at or past its end
    /// (the plugin's `findChunkForOriginalOffset`).
    pub fn chunk_at(&self, offset: u64) -> Option<Chunk> {
        if offset >= u64::from(self.original_file_size) {
            return None;
        }
        let id = u32::try_from(offset.checked_div(u64::from(self.original_chunk_size))?).ok()?;
        self.chunk(id)
    }

    /// The chunks covering original bytes `start..end` (clamped to the file), in order (the
    /// plugin's `chunksForRange`, with an exclusive end).
    pub fn chunks_for_range(&self, start: u64, end: u64) -> impl Iterator<Item = Chunk> + '_ {
        let end = end.min(u64::from(self.original_file_size));
        let first = self.chunk_at(start).map(|c| c.id);
        let last = end
            .checked_sub(1)
            .filter(|_| end > start)
            .and_then(|e| self.chunk_at(e))
            .map(|c| c.id);
        let ids = match (first, last) {
            (Some(a), Some(b)) => a..b.saturating_add(1),
            _ => 0..0,
        };
        ids.filter_map(move |id| self.chunk(id))
    }

    /// All chunks, in order.
    pub fn chunks(&self) -> impl Iterator<Item = Chunk> + '_ {
        (0..self.chunk_count).filter_map(move |id| self.chunk(id))
    }
}

/// Decodes `transformedChunks`: base64, then a zstd frame whose content size is declared and at
/// most `limit` (at most [`MAX_ENCODED_CHUNK_SIZES`]), then [`decode_chunk_sizes`].
///
/// # Errors
///
/// [`Error::ChunkIndex`] for bad base64, a frame without content size or above the limit, or
/// a malformed list.
pub fn decode_transformed_chunks(text: &str, limit: usize) -> Result<Vec<u32>> {
    let limit = limit.min(MAX_ENCODED_CHUNK_SIZES);
    let bad = |reason: String| Error::ChunkIndex { at: 0, reason };
    let compressed = BASE64
        .decode(text)
        .map_err(|e| bad(format!("transformedChunks is not base64: {e}")))?;
    let declared = zstd::zstd_safe::get_frame_content_size(&compressed)
        .map_err(|_| bad("transformedChunks is not a zstd frame".into()))?
        .ok_or_else(|| bad("transformedChunks' zstd frame declares no content size".into()))?;
    let size = usize::try_from(declared)
        .ok()
        .filter(|s| *s <= limit)
        .ok_or_else(|| bad(format!("transformedChunks declares {declared} bytes, above the limit of {limit}")))?;
    let raw = zstd::bulk::decompress(&compressed, size)
        .map_err(|e| bad(format!("transformedChunks does not decompress: {e}")))?;
    if raw.len() != size {
        return Err(bad(format!(
            "transformedChunks decompressed to {} bytes, its frame declares {size}",
            raw.len()
        )));
    }
    decode_chunk_sizes(&raw)
}

/// Encodes chunk sizes as the plugin's `TransformedChunksSerializer` does: the binary list,
/// one zstd frame with its content size, standard base64.
///
/// # Errors
///
/// [`Error::ChunkIndex`] if a size is not a non-negative int or the list is above 10 MiB.
pub fn encode_transformed_chunks(sizes: &[u32]) -> Result<String> {
    let raw = encode_chunk_sizes(sizes)?;
    if raw.len() > MAX_ENCODED_CHUNK_SIZES {
        return Err(Error::ChunkIndex {
            at: 0,
            reason: format!("encoded index of {} bytes is too big", raw.len()),
        });
    }
    let mut compressor = zstd::bulk::Compressor::new(3).map_err(|e| Error::ChunkIndex {
        at: 0,
        reason: e.to_string(),
    })?;
    compressor
        .include_contentsize(true)
        .map_err(|e| Error::ChunkIndex {
            at: 0,
            reason: e.to_string(),
        })?;
    let compressed = compressor.compress(&raw).map_err(|e| Error::ChunkIndex {
        at: 0,
        reason: e.to_string(),
    })?;
    Ok(base64::engine::general_purpose::STANDARD.encode(compressed))
}

/// Decodes the binary list of chunk sizes (the plugin's `ChunkSizesBinaryCodec.decode`). Every
/// byte must be used; the count is checked against the bytes present before allocating.
///
/// # Errors
///
/// [`Error::ChunkIndex`] with the byte position of the problem.
pub fn decode_chunk_sizes(bytes: &[u8]) -> Result<Vec<u32>> {
    let mut r = Cursor { bytes, at: 0 };
    let count = r.i32()?;
    let count = u32::try_from(count).map_err(|_| Error::ChunkIndex {
        at: 0,
        reason: format!("negative count {count}"),
    })?;
    let mut out = Vec::new();
    match count {
        0 => {}
        1 => out.push(r.non_negative()?),
        _ => {
            let base = r.non_negative()?;
            let width_at = r.at;
            let width = r.u8()?;
            if !(1..=4).contains(&width) {
                return Err(Error::ChunkIndex {
                    at: width_at,
                    reason: format!("{width} bytes per value, expected 1 to 4"),
                });
            }
            let values = count.saturating_sub(1);
            let needed = u64::from(values)
                .checked_mul(u64::from(width))
                .and_then(|v| v.checked_add(4))
                .unwrap_or(u64::MAX);
            let available = u64::try_from(bytes.len().saturating_sub(r.at)).unwrap_or(u64::MAX);
            if needed != available {
                return Err(Error::ChunkIndex {
                    at: r.at,
                    reason: format!(
                        "{count} sizes of {width} bytes need {needed} more bytes, {available} present"
                    ),
                });
            }
            out.try_reserve_exact(usize::try_from(count).unwrap_or(usize::MAX))
                .map_err(|_| Error::ChunkIndex {
                    at: 0,
                    reason: format!("cannot hold {count} sizes"),
                })?;
            for _ in 0..values {
                let at = r.at;
                let mut v = 0u32;
                for _ in 0..width {
                    v = (v << 8) | u32::from(r.u8()?);
                }
                let value = v
                    .checked_add(base)
                    .filter(|s| i32::try_from(*s).is_ok())
                    .ok_or_else(|| Error::ChunkIndex {
                        at,
                        reason: format!("size {v} plus base {base} overflows an int"),
                    })?;
                out.push(value);
            }
            out.push(r.non_negative()?);
        }
    }
    if r.at != bytes.len() {
        return Err(Error::ChunkIndex {
            at: r.at,
            reason: format!("{} bytes after the last size", bytes.len().saturating_sub(r.at)),
        });
    }
    Ok(out)
}

/// Encodes chunk sizes in the plugin's binary list (`ChunkSizesBinaryCodec.encode`).
///
/// # Errors
///
/// [`Error::ChunkIndex`] if a size is above `i32::MAX` (Java ints).
pub fn encode_chunk_sizes(sizes: &[u32]) -> Result<Vec<u8>> {
    if let Some(v) = sizes.iter().find(|v| i32::try_from(**v).is_err()) {
        return Err(Error::ChunkIndex {
            at: 0,
            reason: format!("size {v} is not a non-negative int"),
        });
    }
    let count = i32::try_from(sizes.len()).map_err(|_| Error::ChunkIndex {
        at: 0,
        reason: "too many sizes".into(),
    })?;
    let mut out = count.to_be_bytes().to_vec();
    let Some((last, rest)) = sizes.split_last() else {
        return Ok(out);
    };
    if let Some(base) = rest.iter().copied().min() {
        let max_delta = rest.iter().map(|v| v.saturating_sub(base)).max().unwrap_or(0);
        let width: u8 = match max_delta {
            0..=0xFF => 1,
            0x100..=0xFFFF => 2,
            0x1_0000..=0xFF_FFFF => 3,
            _ => 4,
        };
        out.extend_from_slice(&base.to_be_bytes());
        out.push(width);
        for v in rest {
            let be = v.saturating_sub(base).to_be_bytes();
            out.extend(be.iter().skip(4usize.saturating_sub(usize::from(width))));
        }
    }
    out.extend_from_slice(&last.to_be_bytes());
    Ok(out)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let end = self.at.checked_add(N);
        let slice = end.and_then(|e| self.bytes.get(self.at..e));
        let array: [u8; N] = slice
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| Error::ChunkIndex {
                at: self.at,
                reason: format!(
                    "truncated: needed {N} bytes, {} available",
                    self.bytes.len().saturating_sub(self.at)
                ),
            })?;
        self.at = end.unwrap_or(self.at);
        Ok(array)
    }
    fn u8(&mut self) -> Result<u8> {
        let [b] = self.take::<1>()?;
        Ok(b)
    }
    fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.take::<4>()?))
    }
    fn non_negative(&mut self) -> Result<u32> {
        let at = self.at;
        let v = self.i32()?;
        u32::try_from(v).map_err(|_| Error::ChunkIndex {
            at,
            reason: format!("negative size {v}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fixed_index_as_in_the_plugins_javadoc() {
        // Original [0-100) [100-200) [200-250); transformed 110, 110, 80.
        let index = ChunkIndex::new(
            100,
            250,
            ChunkSizes::Fixed {
                transformed_chunk_size: 110,
                final_transformed_chunk_size: 80,
            },
        )
        .unwrap();
        let chunks: Vec<Chunk> = index.chunks().collect();
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[2], Chunk {
            id: 2,
            original_position: 200,
            original_size: 50,
            transformed_position: 220,
            transformed_size: 80
        });
        assert_eq!(index.transformed_size(), 300);
        assert_eq!(index.chunk_at(199).unwrap().id, 1);
        assert_eq!(index.chunk_at(250), None);
        let ids: Vec<u32> = index.chunks_for_range(150, 201).map(|c| c.id).collect();
        assert_eq!(ids, [1, 2]);
        assert_eq!(index.chunks_for_range(100, 100).count(), 0);
        assert_eq!(index.chunks_for_range(0, u64::MAX).count(), 3);
    }

    #[test]
    fn variable_index_as_in_the_plugins_javadoc() {
        let index = ChunkIndex::new(100, 250, ChunkSizes::Variable(vec![30, 20, 10])).unwrap();
        let c = index.chunk(1).unwrap();
        assert_eq!((c.transformed_position, c.transformed_size), (30, 20));
        assert_eq!(index.transformed_size(), 60);
        assert!(ChunkIndex::new(100, 250, ChunkSizes::Variable(vec![30, 20])).is_err());
        assert!(ChunkIndex::new(100, 250, ChunkSizes::Variable(vec![30, 20, 10, 1])).is_err());
    }

    #[test]
    fn refuses_absurd_sizes() {
        let fixed = |a, b| ChunkSizes::Fixed {
            transformed_chunk_size: a,
            final_transformed_chunk_size: b,
        };
        assert!(ChunkIndex::new(0, 10, fixed(1, 1)).is_err());
        assert!(ChunkIndex::new(-1, 10, fixed(1, 1)).is_err());
        assert!(ChunkIndex::new(1, -10, fixed(1, 1)).is_err());
        assert!(ChunkIndex::new(1 << 31, 10, fixed(1, 1)).is_err());
        assert!(ChunkIndex::new(1, 10, fixed(u32::MAX, 1)).is_err());
        // Two billion chunks of one byte: valid, O(1) per lookup, nothing materialized.
        let huge = ChunkIndex::new(1, i64::from(i32::MAX), fixed(i32::MAX as u32, 5)).unwrap();
        assert_eq!(huge.chunk_count(), i32::MAX as u32);
        assert_eq!(huge.chunk(i32::MAX as u32 - 1).unwrap().transformed_size, 5);
    }

    #[test]
    fn binary_codec_matches_the_plugins_layout() {
        // 1000000, 1000010, 1000020 and a last of 7: base 1000000, one byte per value.
        let bytes = encode_chunk_sizes(&[1_000_000, 1_000_010, 1_000_020, 7]).unwrap();
        let mut expected = 4i32.to_be_bytes().to_vec();
        expected.extend(1_000_000i32.to_be_bytes());
        expected.extend([1, 0, 10, 20]);
        expected.extend(7i32.to_be_bytes());
        assert_eq!(bytes, expected);
        assert_eq!(encode_chunk_sizes(&[]).unwrap(), [0, 0, 0, 0]);
        assert_eq!(encode_chunk_sizes(&[9]).unwrap(), [0, 0, 0, 1, 0, 0, 0, 9]);
        assert_eq!(decode_chunk_sizes(&bytes).unwrap(), [1_000_000, 1_000_010, 1_000_020, 7]);
    }

    #[test]
    fn binary_codec_refuses_hostile_input() {
        // A count of two billion with nothing behind it: refused before allocating.
        let mut b = i32::MAX.to_be_bytes().to_vec();
        b.extend(0i32.to_be_bytes());
        b.push(4);
        assert!(matches!(decode_chunk_sizes(&b), Err(Error::ChunkIndex { at: 9, .. })));
        assert!(decode_chunk_sizes(&(-1i32).to_be_bytes()).is_err());
        assert!(decode_chunk_sizes(&[0, 0, 0, 1, 0xff, 0, 0, 0]).is_err());
        assert!(decode_chunk_sizes(&[0, 0, 0, 2, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0]).is_err());
        assert!(decode_chunk_sizes(&[0, 0, 0, 0, 1]).is_err());
        assert!(decode_chunk_sizes(&[0, 0]).is_err());
        // Base plus value above an int.
        let mut b = 2i32.to_be_bytes().to_vec();
        b.extend(i32::MAX.to_be_bytes());
        b.push(1);
        b.push(1);
        b.extend(0i32.to_be_bytes());
        assert!(decode_chunk_sizes(&b).is_err());
    }

    #[test]
    fn transformed_chunks_refuses_undeclared_or_huge_frames() {
        let text = encode_transformed_chunks(&[5, 6, 7]).unwrap();
        assert_eq!(decode_transformed_chunks(&text, MAX_ENCODED_CHUNK_SIZES).unwrap(), [5, 6, 7]);
        assert!(decode_transformed_chunks(&text, 3).is_err());
        assert!(decode_transformed_chunks("not base64!", 100).is_err());
        // A frame without a content size.
        let mut enc = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
        enc.include_contentsize(false).unwrap();
        std::io::Write::write_all(&mut enc, &encode_chunk_sizes(&[1, 2]).unwrap()).unwrap();
        let frame = enc.finish().unwrap();
        let text = base64::engine::general_purpose::STANDARD.encode(frame);
        let err = decode_transformed_chunks(&text, 100).unwrap_err();
        assert!(err.to_string().contains("no content size"), "{err}");
    }

    proptest! {
        #[test]
        fn binary_codec_round_trips(sizes in proptest::collection::vec(0u32..=i32::MAX as u32, 0..200)) {
            let bytes = encode_chunk_sizes(&sizes).unwrap();
            prop_assert_eq!(decode_chunk_sizes(&bytes).unwrap(), sizes);
        }

        #[test]
        fn binary_decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(sizes) = decode_chunk_sizes(&bytes) {
                prop_assert_eq!(encode_chunk_sizes(&sizes).unwrap().len(), bytes.len());
            }
        }

        #[test]
        fn chunks_tile_the_file(ocs in 1i64..1000, ofs in 0i64..100_000, t in 0u32..2000, f in 0u32..2000,
                                start in 0u64..100_000, len in 0u64..100_000) {
            let index = ChunkIndex::new(ocs, ofs, ChunkSizes::Fixed {
                transformed_chunk_size: t, final_transformed_chunk_size: f }).unwrap();
            let mut original = 0u64;
            let mut transformed = 0u64;
            for c in index.chunks() {
                prop_assert_eq!(c.original_position, original);
                prop_assert_eq!(c.transformed_position, transformed);
                prop_assert!(c.original_size > 0);
                original += u64::from(c.original_size);
                transformed += u64::from(c.transformed_size);
            }
            prop_assert_eq!(original, ofs as u64);
            prop_assert_eq!(transformed, index.transformed_size());
            let end = start.saturating_add(len);
            let covered: Vec<Chunk> = index.chunks_for_range(start, end).collect();
            let clamped_end = end.min(ofs as u64);
            if start < clamped_end {
                let first = covered.first().unwrap();
                let last = covered.last().unwrap();
                prop_assert!(first.original_position <= start);
                prop_assert!(last.original_position + u64::from(last.original_size) >= clamped_end);
            } else {
                prop_assert!(covered.is_empty());
            }
        }
    }
}
