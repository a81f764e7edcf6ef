//! snappy (codec id 2): the xerial (snappy-java) stream framing written; xerial or a raw snappy
//! block read.
//!
//! # Framing
//!
//! Apache Kafka wraps its output in snappy-java's `SnappyOutputStream` (`SnappyCompression.java`),
//! whose format is not Google's snappy framing format (`ff 06 00 00 "sNaPpY"`, which Kafka never
//! used):
//!
//! ```text
//! offset  size  field
//! 0       8     magic: 82 53 4e 41 50 50 59 00   (0x82, "SNAPPY", 0)
//! 8       4     version, i32 BE: 1
//! 12      4     minimum compatible version, i32 BE: 1
//! 16      4     chunk length n, i32 BE            } repeated: one chunk per 32 KiB of input
//! 20      n     raw snappy block                  }
//! ...
//! ```
//!
//! A raw snappy block starts with its uncompressed length as a little-endian base-128 varint,
//! then literal and copy elements. Each chunk holds at most 32 KiB of uncompressed bytes:
//! snappy-java's default block size, which is also the default of Kafka's `SnappyCompression`
//! builder (its block size can be set from 1 KiB up; readers never depend on it).
//! Empty input is the 16-byte header alone, as `SnappyOutputStream` writes the header on close
//! even when nothing was written. There is no checksum: the batch CRC covers the bytes.
//!
//! # Reading
//!
//! As snappy-java's `SnappyInputStream` reads, with the differences listed at the end:
//!
//! - Empty input is an error (snappy-java: "Cannot decompress empty stream").
//! - Input of 16 bytes or more that starts with the 8-byte magic is xerial. The version fields are
//!   not looked at (Redpanda once wrote them little-endian; snappy-java ignores them too).
//!   Anything else, including an 8..15-byte input that starts with the magic, is one raw snappy
//!   block, which is what librdkafka and franz-go write.
//! - A chunk length of `0x82534e41` (the magic's first four bytes) starts another xerial header,
//!   i.e. concatenated streams, which snappy-java reads too.
//! - Each block's declared length is checked before any output is allocated: against what its
//!   compressed bytes can possibly expand to (a snappy element of 3 bytes yields at most 64) and
//!   against the remaining limit. The decoded length must equal the declared one.
//!
//! - As snappy-java (and so Kafka's reader), 1 to 3 stray bytes where a chunk length should be
//!   end the stream silently (franz-go rejects them), and so does a `0x82534e41` chunk length
//!   followed by the rest of a 16-byte header that is not the magic; one followed by fewer than
//!   12 bytes is an error. A negative chunk length or one longer than the bytes left is an error
//!   in both. (The differential tests against Kafka's reader found the first two; they were
//!   errors here before.)

use super::bounded::BoundedOut;
use super::{block_window, compress_error};
use crate::{Compression, Result};

/// The xerial magic: 0x82, "SNAPPY", 0.
pub const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];

/// The full 16-byte header we write: magic, version 1, minimum compatible version 1 (both BE).
pub const XERIAL_HEADER: [u8; 16] = [
    0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
];

/// Uncompressed bytes per xerial chunk: snappy-java's (and so Kafka's) default block size.
pub const BLOCK_SIZE: usize = 32 * 1024;

/// The first four magic bytes read as a big-endian chunk length: a concatenated stream's header.
const MAGIC_HEAD: u32 = 0x8253_4e41;

/// Whether `input` is xerial-framed, decided as snappy-java decides: at least a full 16-byte
/// header, starting with the 8-byte magic. The version fields are not examined.
pub fn is_xerial(input: &[u8]) -> bool {
    input.len() >= XERIAL_HEADER.len() && input.first_chunk() == Some(&XERIAL_MAGIC)
}

/// Compresses `input` as a xerial stream appended to `out`: the 16-byte header, then one chunk
/// per 32 KiB. Each chunk is compressed straight into `out`.
///
/// # Errors
///
/// [`Error::Compress`](crate::Error::Compress) if the output cannot be allocated.
pub fn compress(input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let fail = compress_error(Compression::Snappy);
    let start = out.len();
    let bound = input
        .chunks(BLOCK_SIZE)
        .fold(XERIAL_HEADER.len(), |acc, chunk| {
            acc.saturating_add(4)
                .saturating_add(snap::raw::max_compress_len(chunk.len()))
        });
    out.try_reserve_exact(bound)
        .map_err(|_| fail(format!("cannot allocate {bound} bytes")))?;
    out.extend_from_slice(&XERIAL_HEADER);
    let mut end = out.len();
    let mut encoder = snap::raw::Encoder::new();
    for chunk in input.chunks(BLOCK_SIZE) {
        let max = snap::raw::max_compress_len(chunk.len());
        let Some((length, body)) = block_window(out, end, max) else {
            out.truncate(start);
            return Err(fail(format!("no room for a chunk at output offset {end}")));
        };
        let n = match encoder.compress(chunk, body) {
            Ok(n) => n,
            Err(e) => {
                out.truncate(start);
                return Err(fail(e.to_string()));
            }
        };
        // A chunk of at most 32 KiB compresses to far less than 2^31 bytes.
        *length = (n as u32).to_be_bytes();
        end = end.saturating_add(4).saturating_add(n);
    }
    out.truncate(end);
    Ok(())
}

/// Decompresses a xerial stream or a raw snappy block, appending at most `limit` bytes to `out`.
///
/// Each block decodes straight into `out` after its declared length has been checked; on error
/// `out` is left as it was.
///
/// # Errors
///
/// [`Error::Decompress`](crate::Error::Decompress) for empty input, bad chunk lengths, a block that
/// cannot be decoded or whose declared length is impossible;
/// [`Error::DecompressLimit`](crate::Error::DecompressLimit) if a block's declared length would
/// take the output past `limit`.
pub fn decompress(input: &[u8], limit: usize, at: usize, out: &mut Vec<u8>) -> Result<()> {
    let mut sink = BoundedOut::new(out, limit, at, Compression::Snappy);
    if input.is_empty() {
        return Err(sink.error("empty input (snappy data is at least one byte)"));
    }
    if !is_xerial(input) {
        decode_block(input, 0, &mut sink)?;
        sink.finish();
        return Ok(());
    }
    // `pos` only moves forward over bytes that are present, so it stays `<= input.len()` and
    // cannot overflow; saturating arithmetic below just says so.
    let mut pos = XERIAL_HEADER.len();
    while let Some(rest) = input.get(pos..).filter(|rest| !rest.is_empty()) {
        let left = rest.len();
        // Fewer than 4 bytes left: snappy-java's `hasNextChunk` ends the stream there.
        let Some((&word_bytes, body)) = rest.split_first_chunk::<4>() else {
            break;
        };
        let word = u32::from_be_bytes(word_bytes);
        if word == MAGIC_HEAD {
            if left < XERIAL_HEADER.len() {
                return Err(sink.error(format!(
                    "bytes 82 53 4e 41 at offset {pos} start a concatenated xerial header, but only {left} bytes remain"
                )));
            }
            if rest.first_chunk() != Some(&XERIAL_MAGIC) {
                // Not a valid header: snappy-java stops reading here.
                break;
            }
            pos = pos.saturating_add(XERIAL_HEADER.len());
            continue;
        }
        let Ok(n) = i32::try_from(word) else {
            return Err(sink.error(format!(
                "xerial chunk at offset {pos} declares a negative length {}",
                word as i32
            )));
        };
        let n = n as usize;
        let Some(block) = body.get(..n) else {
            return Err(sink.error(format!(
                "xerial chunk at offset {pos} declares {n} bytes but {} remain",
                body.len()
            )));
        };
        let block_at = pos.saturating_add(4);
        decode_block(block, block_at, &mut sink)?;
        pos = block_at.saturating_add(n);
    }
    sink.finish();
    Ok(())
}

/// What snappy-java's `SnappyInputStream` checks when it is opened: a xerial header is only
/// read; anything else is one raw block, decoded whole (at most `limit` bytes).
///
/// # Errors
///
/// As [`decompress`] for empty input or a bad raw block.
pub fn check_start(input: &[u8], limit: usize, at: usize) -> Result<()> {
    if is_xerial(input) {
        return Ok(());
    }
    decompress(input, limit, at, &mut Vec::new())
}

/// The most output `len` bytes of a raw snappy block (preamble included) can decode to.
fn max_expansion(len: usize) -> usize {
    // The densest element is a 3-byte copy of 64 bytes; literals and 2-byte copies expand less.
    len.saturating_mul(64) / 3
}

/// Decodes one raw snappy block found at `offset` in the compressed data.
fn decode_block(block: &[u8], offset: usize, sink: &mut BoundedOut<'_>) -> Result<()> {
    if block.is_empty() {
        return Err(sink.error(format!("snappy block at offset {offset} is empty")));
    }
    let declared = snap::raw::decompress_len(block).map_err(|e| {
        sink.error(format!(
            "snappy block at offset {offset}: bad length preamble: {e}"
        ))
    })?;
    let max = max_expansion(block.len());
    if declared > max {
        return Err(sink.error(format!(
            "snappy block at offset {offset} declares {declared} bytes but its {} bytes can hold at most {max}",
            block.len()
        )));
    }
    if declared > sink.remaining() {
        return Err(sink.limit_error());
    }
    let window = sink.window(declared)?;
    let n = snap::raw::Decoder::new()
        .decompress(block, window)
        .map_err(|e| sink.error(format!("snappy block at offset {offset}: {e}")))?;
    sink.commit(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::test_data::{assert_capacity_bounded, lines, round_trip_inputs};
    use crate::Error;

    fn pack(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        compress(data, &mut out).unwrap();
        out
    }

    fn unpack(data: &[u8], limit: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        decompress(data, limit, 40, &mut out).map(|()| out)
    }

    fn compressible(n: usize) -> Vec<u8> {
        lines(n, |i| format!("{{\"id\":{i},\"tag\":\"t{}\"}}\n", i % 13))
    }

    /// Reads a xerial stream independently of `decompress`: header, then chunks.
    fn chunks(stream: &[u8]) -> Vec<&[u8]> {
        let mut pos = 16;
        let mut chunks = Vec::new();
        while pos < stream.len() {
            let n = u32::from_be_bytes(stream[pos..pos + 4].try_into().unwrap()) as usize;
            chunks.push(&stream[pos + 4..pos + 4 + n]);
            pos += 4 + n;
        }
        chunks
    }

    #[test]
    fn round_trips_and_framing() {
        for data in round_trip_inputs(3, compressible) {
            let packed = pack(&data);
            assert_eq!(packed[..16], XERIAL_HEADER);
            let chunks = chunks(&packed);
            assert_eq!(chunks.len(), data.len().div_ceil(BLOCK_SIZE));
            let mut joined = Vec::new();
            for (i, chunk) in chunks.iter().enumerate() {
                let raw = snap::raw::Decoder::new().decompress_vec(chunk).unwrap();
                let expect = data.len().saturating_sub(i * BLOCK_SIZE).min(BLOCK_SIZE);
                assert_eq!(raw.len(), expect);
                joined.extend(raw);
            }
            assert_eq!(joined, data);
            assert_eq!(unpack(&packed, data.len()).unwrap(), data);
        }
    }

    #[test]
    fn empty_input_is_header_only_and_reads_back_empty() {
        let packed = pack(b"");
        assert_eq!(packed, XERIAL_HEADER);
        assert_eq!(unpack(&packed, 0).unwrap(), b"");
        assert!(matches!(
            unpack(b"", 10),
            Err(Error::Decompress { at: 40, .. })
        ));
    }

    #[test]
    fn appends_and_restores_on_error() {
        let mut out = b"ab".to_vec();
        decompress(&pack(b"cd"), 2, 0, &mut out).unwrap();
        assert_eq!(out, b"abcd");
        let mut bad = pack(&compressible(100_000));
        bad.truncate(bad.len() - 1);
        assert!(decompress(&bad, 1 << 20, 0, &mut out).is_err());
        assert_eq!(out, b"abcd");
    }

    #[test]
    fn raw_blocks_are_read() {
        let data = compressible(100_000);
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert!(!is_xerial(&raw));
        assert_eq!(unpack(&raw, data.len()).unwrap(), data);
        // A short raw block that happens to start with the magic is still raw (snappy-java).
        assert!(!is_xerial(&XERIAL_HEADER[..15]));
    }

    #[test]
    fn concatenated_streams() {
        let mut packed = pack(b"hello ");
        packed.extend(pack(b"world"));
        assert_eq!(unpack(&packed, 100).unwrap(), b"hello world");
        // A magic head followed by too few bytes for a header is rejected (snappy-java:
        // "Insufficient header size in a concatenated block").
        let mut bad = pack(b"hello");
        bad.extend_from_slice(&[0x82, 0x53, 0x4e, 0x41, 0, 0, 0, 0]);
        let err = unpack(&bad, 100).unwrap_err();
        assert!(
            err.to_string()
                .contains("start a concatenated xerial header, but only 8 bytes remain"),
            "{err}"
        );
        // A whole 16 bytes that are not the magic end the stream, as snappy-java stops there.
        let mut stop = pack(b"hello");
        stop.extend_from_slice(&[0x82, 0x53, 0x4e, 0x41, 9, 9, 9, 9, 0, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(unpack(&stop, 100).unwrap(), b"hello");
    }

    #[test]
    fn chunk_errors_say_where() {
        let mut packed = XERIAL_HEADER.to_vec();
        packed.extend_from_slice(&70000u32.to_be_bytes());
        packed.extend_from_slice(&[0; 12]);
        let err = unpack(&packed, 1 << 20).unwrap_err();
        assert_eq!(
            err.to_string(),
            "byte 40: invalid snappy data: xerial chunk at offset 16 declares 70000 bytes but 12 remain"
        );
        let mut packed = XERIAL_HEADER.to_vec();
        packed.extend_from_slice(&(-5i32).to_be_bytes());
        let err = unpack(&packed, 1 << 20).unwrap_err();
        assert!(err.to_string().contains("negative length -5"), "{err}");
        let mut packed = XERIAL_HEADER.to_vec();
        packed.extend_from_slice(&0u32.to_be_bytes());
        let err = unpack(&packed, 1 << 20).unwrap_err();
        assert!(
            err.to_string()
                .contains("snappy block at offset 20 is empty"),
            "{err}"
        );
    }

    #[test]
    fn every_truncation_of_xerial_fails_inside_a_chunk() {
        let packed = pack(&compressible(40_000));
        let boundaries: Vec<usize> = {
            let mut b = vec![16];
            let mut pos = 16;
            for c in chunks(&packed) {
                pos += 4 + c.len();
                b.push(pos);
            }
            b
        };
        for cut in 1..packed.len() {
            let result = unpack(&packed[..cut], 1 << 20);
            // Cut between chunks, or 1-3 bytes into the next chunk length (where snappy-java
            // ends the stream): a shorter but readable stream.
            if boundaries.iter().any(|&b| cut >= b && cut - b <= 3) {
                assert!(result.is_ok(), "cut {cut}");
            } else {
                assert!(result.is_err(), "cut {cut}");
            }
        }
    }

    #[test]
    fn corruption_never_panics() {
        let data = compressible(40_000);
        let packed = pack(&data);
        // Every byte of the header and first chunk length, then a stride through the rest.
        for i in (0..packed.len()).filter(|&i| i < 24 || i % 3 == 0) {
            let mut bad = packed.clone();
            bad[i] ^= 0x55;
            if let Ok(out) = unpack(&bad, 1 << 20) {
                // Without a checksum a flipped literal byte decodes "successfully"; lengths hold.
                assert!(out.len() <= 1 << 20);
            }
        }
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        for i in (0..raw.len()).filter(|&i| i < 8 || i % 3 == 1) {
            let mut bad = raw.clone();
            bad[i] = bad[i].wrapping_add(1);
            let _ = unpack(&bad, 1 << 20);
        }
    }

    #[test]
    fn bombs_fail_fast_with_bounded_memory() {
        let limit = 1 << 20;
        // Raw preamble claiming 4 GiB - 1 with almost nothing behind it: impossible, so corrupt.
        let mut out = Vec::new();
        let err =
            decompress(&[0xff, 0xff, 0xff, 0xff, 0x0f, 0, 1, 2], limit, 0, &mut out).unwrap_err();
        assert!(
            err.to_string().contains("declares 4294967295 bytes"),
            "{err}"
        );
        assert_eq!(out.capacity(), 0);
        // A plausible claim above the limit: the limit error, before any allocation.
        let zeros = vec![0u8; 2 << 20];
        let raw = snap::raw::Encoder::new().compress_vec(&zeros).unwrap();
        let err = decompress(&raw, limit, 9, &mut out).unwrap_err();
        assert_eq!(
            err,
            Error::DecompressLimit {
                at: 9,
                compression: Compression::Snappy,
                limit
            }
        );
        assert_eq!(out.capacity(), 0);
        // A xerial chunk claiming 2 GiB - 1.
        let mut packed = XERIAL_HEADER.to_vec();
        packed.extend_from_slice(&0x7fff_ffffu32.to_be_bytes());
        packed.extend_from_slice(&[0u8; 4096]);
        assert!(matches!(
            decompress(&packed, limit, 0, &mut out),
            Err(Error::Decompress { .. })
        ));
        // A real xerial stream of 64 MiB of zeros, made by repeating one chunk.
        let chunk = snap::raw::Encoder::new()
            .compress_vec(&zeros[..BLOCK_SIZE])
            .unwrap();
        let mut bomb = XERIAL_HEADER.to_vec();
        for _ in 0..2048 {
            bomb.extend_from_slice(&(chunk.len() as u32).to_be_bytes());
            bomb.extend_from_slice(&chunk);
        }
        assert!(bomb.len() < 4 << 20);
        let err = decompress(&bomb, limit, 0, &mut out).unwrap_err();
        assert!(matches!(err, Error::DecompressLimit { .. }));
        assert!(out.is_empty());
        assert_capacity_bounded(&out, limit);
    }
}
