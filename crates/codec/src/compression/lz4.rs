//! LZ4 (codec id 3): Kafka's subset of the LZ4 frame format, including the broken header checksum
//! of magic 0.
//!
//! # Framing
//!
//! What `Lz4BlockOutputStream.java` (formerly `KafkaLZ4BlockOutputStream`) writes:
//!
//! ```text
//! offset  size  field
//! 0       4     magic 04 22 4d 18 (0x184d2204 LE)
//! 4       1     FLG 0x60: version 01 (bits 7-6), block independence (bit 5); no block checksum
//!               (bit 4), no content size (bit 3), no content checksum (bit 2), bits 1-0 reserved 0
//! 5       1     BD 0x40: maximum block size id 4 = 64 KiB (bits 6-4); other bits reserved 0
//! [6      8     content size, u64 LE, if FLG bit 3]                       (read only)
//! 6       1     HC: (xxh32(descriptor, seed 0) >> 8) & 0xff
//! 7       4     block size, u32 LE: bit 31 set = stored uncompressed,   } one per 64 KiB
//!               bits 30-0 = the block's length in the stream            } of input
//! 11      n     block: an LZ4 block (or the raw bytes if bit 31 is set) }
//! [       4     block checksum, xxh32(block bytes) LE, if FLG bit 4]    } (read only)
//! ...     4     end mark 00 00 00 00
//! [       4     content checksum, if FLG bit 2]                           (read only)
//! ```
//!
//! The descriptor HC covers is FLG, BD (and the content size if present). For magic 0, Kafka 0.8's
//! bug, kept for compatibility (KAFKA-3160), hashes from the frame's first byte instead, magic
//! included: for `04 22 4d 18 60 40` that is HC `1a` where the correct value is `82`. Kafka writes
//! the broken byte for magic 0 and the correct one for magic 1 and 2; so do we.
//!
//! A block whose compressed form is not shorter than its input is stored uncompressed with bit 31
//! set, as Kafka does. Empty input is the 7-byte header and the end mark.
//!
//! Levels: Kafka accepts 1..=17 (default 9) and uses lz4-java's fast compressor for its default
//! and the high-compression one otherwise. lz4_flex has one (fast) compressor, so the level is
//! validated but does not change our output; it never appears on the wire. Compressed blocks are
//! valid LZ4 but need not be byte-identical to lz4-java's.
//!
//! # Reading
//!
//! As `Lz4BlockInputStream.java` reads: at least 6 bytes; the magic; FLG with version 01, block
//! independence set ("dependent block stream is unsupported") and reserved bits 0; BD with
//! reserved bits 0 and block size id 4..=7 (64 KiB to 4 MiB); an 8-byte content size skipped when
//! flagged; HC verified for magic 1 and 2 and not checked at all for magic 0 (Kafka's
//! `ignoreFlagDescriptorChecksum`, so both the broken and the correct byte pass); blocks no longer
//! than the maximum size, each decompressing to at most the maximum size; block checksums
//! verified when flagged; the end mark required. When the content checksum flag is set its four
//! bytes must be present but, as in every released Kafka, are not verified (KAFKA-20528 proposes
//! verifying them; Kafka's own writer never sets the flag). Bytes after the end mark are ignored,
//! as Kafka's stream never reads past it.
//!
//! Each block decompresses straight into `out`, at most `min(max block size, remaining limit + 1,
//! 255 × compressed length)` bytes at a time.

use super::bounded::BoundedOut;
use super::{block_window, checked_level, compress_error, le32};
use crate::{Compression, Result};
use xxhash_rust::xxh32::xxh32;

/// The frame magic as it appears on the wire.
pub const MAGIC: [u8; 4] = [0x04, 0x22, 0x4d, 0x18];
/// FLG as Kafka writes it: version 01, independent blocks, nothing else.
pub const FLG: u8 = 0x60;
/// BD as Kafka writes it: 64 KiB maximum block size.
pub const BD: u8 = 0x40;
/// Uncompressed bytes per block we write.
pub const BLOCK_SIZE: usize = 64 * 1024;

const FLG_VERSION_MASK: u8 = 0xc0;
const FLG_VERSION_01: u8 = 0x40;
const FLG_INDEPENDENT: u8 = 0x20;
const FLG_BLOCK_CHECKSUM: u8 = 0x10;
const FLG_CONTENT_SIZE: u8 = 0x08;
const FLG_CONTENT_CHECKSUM: u8 = 0x04;
const FLG_RESERVED: u8 = 0x03;
const BD_RESERVED: u8 = 0x8f;
const STORED: u32 = 0x8000_0000;

/// The header checksum byte Kafka writes for `magic` over a frame that starts with `header`
/// (magic + descriptor, without the HC byte): the correct one for magic 1 and 2, and for magic 0
/// the historical one computed from the frame's first byte. A `header` shorter than the 4-byte
/// magic is hashed as if its descriptor were empty.
pub fn header_checksum(header: &[u8], magic: u8) -> u8 {
    let covered = if magic == 0 {
        header
    } else {
        header.get(4..).unwrap_or(&[])
    };
    (xxh32(covered, 0) >> 8) as u8
}

#[allow(clippy::little_endian_bytes)] // LZ4 frame fields are little-endian
fn put_le32(out: &mut [u8; 4], value: u32) {
    *out = value.to_le_bytes();
}

/// Compresses `input` as Kafka's LZ4 frame appended to `out`.
///
/// `level` (1..=17) is validated and otherwise ignored (see the module docs); `magic` 0 selects
/// the broken header checksum. Each block is compressed straight into `out`.
///
/// # Errors
///
/// [`Error::InvalidLevel`](crate::Error::InvalidLevel) outside 1..=17;
/// [`Error::Compress`](crate::Error::Compress) if the output cannot be allocated.
pub fn compress(input: &[u8], level: Option<i32>, magic: u8, out: &mut Vec<u8>) -> Result<()> {
    checked_level(Compression::Lz4, level)?;
    let fail = compress_error(Compression::Lz4);
    let start = out.len();
    let block_bound = lz4_flex::block::get_maximum_output_size(BLOCK_SIZE).saturating_add(4);
    let blocks = input.len().div_ceil(BLOCK_SIZE);
    let bound = 7usize
        .saturating_add(blocks.saturating_mul(4))
        .saturating_add(input.len())
        .saturating_add(block_bound)
        .saturating_add(4);
    out.try_reserve_exact(bound)
        .map_err(|_| fail(format!("cannot allocate {bound} bytes")))?;

    let [m0, m1, m2, m3] = MAGIC;
    let descriptor = [m0, m1, m2, m3, FLG, BD];
    out.extend_from_slice(&descriptor);
    out.push(header_checksum(&descriptor, magic));
    let mut end = out.len();
    for chunk in input.chunks(BLOCK_SIZE) {
        let max = lz4_flex::block::get_maximum_output_size(chunk.len());
        let Some((word_bytes, body)) = block_window(out, end, max) else {
            out.truncate(start);
            return Err(fail(format!("no room for a block at output offset {end}")));
        };
        let n = match lz4_flex::block::compress_into(chunk, body) {
            Ok(n) => n,
            Err(e) => {
                out.truncate(start);
                return Err(fail(e.to_string()));
            }
        };
        // Kafka stores a block raw when compression does not make it smaller. `body` holds at
        // least `chunk.len()` bytes (lz4's bound is never below its input).
        let (word, len) = match body.get_mut(..chunk.len()) {
            Some(raw) if n >= chunk.len() => {
                raw.copy_from_slice(chunk);
                (STORED | chunk.len() as u32, chunk.len())
            }
            _ => (n as u32, n),
        };
        put_le32(word_bytes, word);
        end = end.saturating_add(4).saturating_add(len);
    }
    out.truncate(end);
    out.extend_from_slice(&[0, 0, 0, 0]);
    Ok(())
}

/// What the frame header says.
struct FrameHeader {
    flg: u8,
    max_block: usize,
    /// Where the first block starts.
    end: usize,
}

/// Parses and checks the frame header (magic, FLG, BD, the header checksum unless `magic` is
/// 0), as `KafkaLZ4BlockInputStream` does when it is opened.
fn parse_frame_header(input: &[u8], magic: u8, sink: &BoundedOut<'_>) -> Result<FrameHeader> {
    let Some(&[m0, m1, m2, m3, flg, bd]) = input.first_chunk() else {
        return Err(sink.error(format!(
            "lz4 frame header needs at least 6 bytes but {} remain",
            input.len()
        )));
    };
    if [m0, m1, m2, m3] != MAGIC {
        return Err(sink.error(format!(
            "expected lz4 frame magic 04 22 4d 18 at offset 0, found {m0:02x} {m1:02x} {m2:02x} {m3:02x}"
        )));
    }
    if flg & FLG_RESERVED != 0 {
        return Err(sink.error(format!(
            "lz4 FLG {flg:#04x} at offset 4 has reserved bits set"
        )));
    }
    if flg & FLG_VERSION_MASK != FLG_VERSION_01 {
        return Err(sink.error(format!(
            "lz4 FLG {flg:#04x} at offset 4: version {} (only 1 exists)",
            flg >> 6
        )));
    }
    if flg & FLG_INDEPENDENT == 0 {
        return Err(sink.error(format!(
            "lz4 FLG {flg:#04x} at offset 4: dependent block stream is unsupported (Kafka writes independent blocks)"
        )));
    }
    if bd & BD_RESERVED != 0 {
        return Err(sink.error(format!(
            "lz4 BD {bd:#04x} at offset 5 has reserved bits set"
        )));
    }
    // Block size ids 4..=7 are 64 KiB, 256 KiB, 1 MiB and 4 MiB (`1 << (2 * id + 8)`).
    let size_id = (bd >> 4) & 7;
    let max_block: usize = match size_id {
        4 => 64 << 10,
        5 => 256 << 10,
        6 => 1 << 20,
        7 => 4 << 20,
        _ => {
            return Err(sink.error(format!(
                "lz4 BD {bd:#04x} at offset 5: block size id {size_id} (expected 4..7)"
            )))
        }
    };
    // The content size, when flagged, is skipped and never trusted, as Kafka does.
    let hc_at: usize = if flg & FLG_CONTENT_SIZE != 0 { 14 } else { 6 };
    let Some((descriptor, &[hc, ..])) = input.split_at_checked(hc_at) else {
        return Err(sink.error(crate::error::shortfall(
            "lz4 frame descriptor",
            hc_at.saturating_add(1),
            input.len(),
        )));
    };
    if magic != 0 {
        let expected = header_checksum(descriptor, magic);
        if hc != expected {
            return Err(sink.error(format!(
                "lz4 header checksum at offset {hc_at} is {hc:02x} but the descriptor hashes to {expected:02x}"
            )));
        }
    }
    Ok(FrameHeader {
        flg,
        max_block,
        end: hc_at.saturating_add(1),
    })
}

/// Checks the frame header at the start of `input`, as `KafkaLZ4BlockInputStream`'s
/// constructor does (no block is read).
///
/// # Errors
///
/// [`Error::Decompress`](crate::Error::Decompress) for a bad or truncated header.
pub fn check_header(input: &[u8], magic: u8, at: usize) -> Result<()> {
    let mut none = Vec::new();
    let sink = BoundedOut::new(&mut none, 0, at, Compression::Lz4);
    parse_frame_header(input, magic, &sink).map(|_| ())
}

/// Decompresses Kafka's LZ4 frame, appending at most `limit` bytes to `out`.
///
/// `magic` 0 skips the header checksum check (see the module docs). On error `out` is left as it
/// was.
///
/// # Errors
///
/// [`Error::Decompress`](crate::Error::Decompress) for a bad or truncated frame, header or block
/// checksum mismatch, or a block that cannot be decoded;
/// [`Error::DecompressLimit`](crate::Error::DecompressLimit) once the output would pass `limit`.
pub fn decompress(
    input: &[u8],
    magic: u8,
    limit: usize,
    at: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    let mut sink = BoundedOut::new(out, limit, at, Compression::Lz4);
    let FrameHeader {
        flg,
        max_block,
        end: header_end,
    } = parse_frame_header(input, magic, &sink)?;
    // `pos` only moves forward over bytes that are present, so it stays `<= input.len()` and
    // cannot overflow; saturating arithmetic below just says so.
    let mut pos = header_end;

    loop {
        let rest = input.get(pos..).unwrap_or_default();
        let Some((&word_bytes, after_word)) = rest.split_first_chunk::<4>() else {
            return Err(sink.error(format!(
                "lz4 block size at offset {pos} needs 4 bytes but {} remain (no end mark)",
                rest.len()
            )));
        };
        #[allow(clippy::little_endian_bytes)] // LZ4 frame fields are little-endian
        let word = u32::from_le_bytes(word_bytes);
        let stored = word & STORED != 0;
        let size = (word & !STORED) as usize;
        if size == 0 {
            pos = pos.saturating_add(4);
            if flg & FLG_CONTENT_CHECKSUM != 0 && after_word.len() < 4 {
                return Err(sink.error(format!(
                    "lz4 content checksum at offset {pos} needs 4 bytes but {} remain",
                    after_word.len()
                )));
            }
            break;
        }
        if size > max_block {
            return Err(sink.error(format!(
                "lz4 block at offset {pos} declares {size} bytes but the frame allows at most {max_block}"
            )));
        }
        let data_start = pos.saturating_add(4);
        let Some((block, after_block)) = after_word.split_at_checked(size) else {
            return Err(sink.error(format!(
                "lz4 block at offset {pos} declares {size} bytes but {} remain",
                after_word.len()
            )));
        };
        pos = data_start.saturating_add(size);
        if flg & FLG_BLOCK_CHECKSUM != 0 {
            let Some(stored_sum) = le32(after_block, 0) else {
                return Err(sink.error(format!(
                    "lz4 block checksum at offset {pos} needs 4 bytes but {} remain",
                    after_block.len()
                )));
            };
            let sum = xxh32(block, 0);
            if sum != stored_sum {
                return Err(sink.error(format!(
                    "lz4 block checksum at offset {pos} is {stored_sum:08x} but the block hashes to {sum:08x}"
                )));
            }
            pos = pos.saturating_add(4);
        }
        if stored {
            sink.push(block)?;
            continue;
        }
        // A compressed LZ4 byte expands to at most 255 bytes (a run of 0xff length bytes).
        let plausible = size.saturating_mul(255).saturating_add(16).min(max_block);
        let by_limit = sink.remaining().saturating_add(1);
        let room = plausible.min(by_limit);
        let window = sink.window(room)?;
        match lz4_flex::block::decompress_into(block, window) {
            Ok(n) => sink.commit(n)?,
            Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) if room == by_limit => {
                return Err(sink.limit_error())
            }
            Err(e) => {
                return Err(sink.error(format!(
                    "lz4 block at offset {data_start} ({size} bytes, max {max_block} decompressed): {e}"
                )))
            }
        }
    }
    sink.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::test_data::{
        assert_capacity_bounded, assert_limit_refused, lines, random, round_trip_inputs,
    };
    use crate::Error;

    fn pack(data: &[u8], magic: u8) -> Vec<u8> {
        let mut out = Vec::new();
        compress(data, None, magic, &mut out).unwrap();
        out
    }

    fn unpack(data: &[u8], magic: u8, limit: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        decompress(data, magic, limit, 3, &mut out).map(|()| out)
    }

    fn compressible(n: usize) -> Vec<u8> {
        lines(n, |i| format!("{{\"offset\":{i},\"k\":\"v{}\"}}\n", i % 31))
    }

    /// Builds a frame by hand from a descriptor and blocks (word, bytes, optional checksum).
    fn frame(flg: u8, bd: u8, magic: u8, blocks: &[(u32, &[u8])], tail: &[u8]) -> Vec<u8> {
        let mut f = vec![0x04, 0x22, 0x4d, 0x18, flg, bd];
        if flg & FLG_CONTENT_SIZE != 0 {
            f.extend_from_slice(&[0xff; 8]);
        }
        let hc = header_checksum(&f, magic);
        f.push(hc);
        for (word, bytes) in blocks {
            #[allow(clippy::little_endian_bytes)]
            f.extend_from_slice(&word.to_le_bytes());
            f.extend_from_slice(bytes);
            if flg & FLG_BLOCK_CHECKSUM != 0 {
                #[allow(clippy::little_endian_bytes)]
                f.extend_from_slice(&xxh32(bytes, 0).to_le_bytes());
            }
        }
        f.extend_from_slice(&[0, 0, 0, 0]);
        f.extend_from_slice(tail);
        f
    }

    #[test]
    fn header_bytes_per_magic() {
        assert_eq!(
            pack(b"", 0),
            [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x1a, 0, 0, 0, 0]
        );
        assert_eq!(
            pack(b"", 1),
            [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82, 0, 0, 0, 0]
        );
        assert_eq!(pack(b"", 2)[6], 0x82);
    }

    #[test]
    fn round_trips() {
        for data in round_trip_inputs(11, compressible) {
            for magic in 0..=2 {
                for level in [None, Some(1), Some(17)] {
                    let mut packed = Vec::new();
                    compress(&data, level, magic, &mut packed).unwrap();
                    assert_eq!(unpack(&packed, magic, data.len()).unwrap(), data);
                }
            }
        }
    }

    #[test]
    fn incompressible_blocks_are_stored() {
        let data = random(BLOCK_SIZE + 10, 5);
        let packed = pack(&data, 2);
        let w0 = le32(&packed, 7).unwrap();
        assert_eq!(w0, STORED | BLOCK_SIZE as u32);
        assert_eq!(packed[11..11 + BLOCK_SIZE], data[..BLOCK_SIZE]);
        let w1 = le32(&packed, 11 + BLOCK_SIZE).unwrap();
        assert_eq!(w1, STORED | 10);
        assert_eq!(packed.len(), 7 + 4 + BLOCK_SIZE + 4 + 10 + 4);
        let text = compressible(BLOCK_SIZE * 2);
        let packed = pack(&text, 2);
        assert_eq!(le32(&packed, 7).unwrap() & STORED, 0);
    }

    /// `tests/vectors/peers/primitives/apache_kafka_lz4_header_checksum.json`: the HC bytes of
    /// Kafka's MessageCompressionTest for magic 0 (broken) and 1 (correct).
    #[test]
    fn kafka_header_checksum_vectors() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/vectors/peers/primitives/apache_kafka_lz4_header_checksum.json"
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let cases = v["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 2);
        for case in cases {
            let header = hex::decode(case["frame_header_hex"].as_str().unwrap()).unwrap();
            let magic = case["magic"].as_u64().unwrap() as u8;
            let hc = hex::decode(case["hc"].as_str().unwrap()).unwrap()[0];
            assert_eq!(header.len(), 7);
            assert_eq!(header[6], hc);
            assert_eq!(header_checksum(&header[..6], magic), hc, "magic {magic}");
            // Our writer produces exactly this header, and our reader takes it for that magic.
            let packed = pack(b"", magic);
            assert_eq!(packed[..7], header[..], "magic {magic}");
            let mut frame = header.clone();
            frame.extend_from_slice(&[0, 0, 0, 0]);
            assert_eq!(unpack(&frame, magic, 0).unwrap(), b"");
            match case["hc_variant"].as_str().unwrap() {
                "kafka08_broken" => {
                    assert_eq!(magic, 0);
                    // The broken byte is rejected where the correct one is required.
                    assert!(unpack(&frame, 1, 0).is_err());
                    assert!(unpack(&frame, 2, 0).is_err());
                }
                "correct" => {
                    assert!(magic >= 1);
                    assert_eq!(unpack(&frame, 0, 0).unwrap(), b"");
                    assert_eq!(unpack(&frame, 2, 0).unwrap(), b"");
                }
                other => panic!("unknown hc_variant {other}"),
            }
        }
    }

    #[test]
    fn header_checksum_rules() {
        let good_v0 = pack(b"abc", 0);
        let good_v1 = pack(b"abc", 1);
        // Magic 0 ignores HC entirely: both the broken and the correct byte, or any other.
        assert_eq!(unpack(&good_v0, 0, 10).unwrap(), b"abc");
        assert_eq!(unpack(&good_v1, 0, 10).unwrap(), b"abc");
        let mut any = good_v0.clone();
        any[6] = 0x00;
        assert_eq!(unpack(&any, 0, 10).unwrap(), b"abc");
        // Magic 1 and 2 verify it: the broken byte fails.
        for magic in [1, 2] {
            assert_eq!(unpack(&good_v1, magic, 10).unwrap(), b"abc");
            let err = unpack(&good_v0, magic, 10).unwrap_err();
            assert_eq!(
                err.to_string(),
                "byte 3: invalid lz4 data: lz4 header checksum at offset 6 is 1a but the descriptor hashes to 82"
            );
        }
    }

    #[test]
    fn descriptor_validation() {
        let cases: [(u8, u8, &str); 6] = [
            (0x40, 0x40, "dependent block stream is unsupported"),
            (0x61, 0x40, "reserved bits"),
            (0xa0, 0x40, "version 2"),
            (0x60, 0x41, "reserved bits"),
            (0x60, 0x30, "block size id 3"),
            (0x60, 0xc0, "reserved bits"),
        ];
        for (flg, bd, msg) in cases {
            let f = frame(flg, bd, 2, &[], &[]);
            let err = unpack(&f, 2, 10).unwrap_err();
            assert!(err.to_string().contains(msg), "{flg:#x} {bd:#x}: {err}");
        }
        let err = unpack(b"\x04\x22\x4d", 2, 10).unwrap_err();
        assert!(err.to_string().contains("needs at least 6 bytes"), "{err}");
        let err = unpack(b"\x04\x22\x4d\x19\x60\x40\x82\0\0\0\0", 2, 10).unwrap_err();
        assert!(
            err.to_string().contains("expected lz4 frame magic"),
            "{err}"
        );
    }

    #[test]
    fn optional_fields_are_handled() {
        let data = compressible(3000);
        let block = lz4_flex::block::compress(&data);
        // Content size (skipped), block checksums (verified), content checksum (present, unverified).
        let flg = FLG | FLG_CONTENT_SIZE | FLG_BLOCK_CHECKSUM | FLG_CONTENT_CHECKSUM;
        let good = frame(flg, 0x70, 2, &[(block.len() as u32, &block)], &[1, 2, 3, 4]);
        assert_eq!(unpack(&good, 2, 3000).unwrap(), data);
        // Block checksum mismatch.
        let mut bad = good.clone();
        let sum_at = 7 + 8 + 4 + block.len();
        bad[sum_at] ^= 1;
        let err = unpack(&bad, 2, 3000).unwrap_err();
        assert!(
            err.to_string().contains("block checksum at offset"),
            "{err}"
        );
        // Missing content checksum bytes.
        let short = &good[..good.len() - 1];
        let err = unpack(short, 2, 3000).unwrap_err();
        assert!(err.to_string().contains("content checksum"), "{err}");
        // Trailing bytes after the end mark are ignored, as Kafka never reads them.
        let mut tail = pack(b"abc", 2);
        tail.extend_from_slice(b"junk");
        assert_eq!(unpack(&tail, 2, 10).unwrap(), b"abc");
    }

    #[test]
    fn block_size_rules() {
        // A compressed block that declares more than the 64 KiB maximum.
        let f = frame(FLG, BD, 2, &[(70_000, &[0; 10])], &[]);
        let err = unpack(&f, 2, 1 << 20).unwrap_err();
        assert!(
            err.to_string().contains(
                "block at offset 7 declares 70000 bytes but the frame allows at most 65536"
            ),
            "{err}"
        );
        // A block that decompresses to more than the maximum block size.
        let big = vec![7u8; BLOCK_SIZE + 1];
        let block = lz4_flex::block::compress(&big);
        let f = frame(FLG, BD, 2, &[(block.len() as u32, &block)], &[]);
        assert!(matches!(
            unpack(&f, 2, 1 << 20),
            Err(Error::Decompress { .. })
        ));
        // With BD 0x50 (256 KiB) the same block is fine.
        let f = frame(FLG, 0x50, 2, &[(block.len() as u32, &block)], &[]);
        assert_eq!(unpack(&f, 2, 1 << 20).unwrap(), big);
        // A declared size longer than the rest of the input.
        let f = frame(FLG, BD, 2, &[(50, &[0; 10])], &[]);
        let err = unpack(&f[..f.len() - 4], 2, 1 << 20).unwrap_err();
        assert!(err.to_string().contains("declares 50 bytes but"), "{err}");
    }

    #[test]
    fn every_truncation_fails() {
        let packed = pack(&compressible(70_000), 2);
        for cut in 0..packed.len() {
            assert!(unpack(&packed[..cut], 2, 1 << 20).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn corruption_never_panics() {
        let data = compressible(70_000);
        let packed = pack(&data, 2);
        // Every byte of the header and first block size, then a stride through the rest.
        for i in (0..packed.len()).filter(|&i| i < 16 || i % 3 == 0) {
            let mut bad = packed.clone();
            bad[i] ^= 0x41;
            let _ = unpack(&bad, 2, 1 << 20);
        }
    }

    #[test]
    fn bombs_fail_fast_with_bounded_memory() {
        let limit = 1 << 20;
        let mut out = Vec::new();
        // Block size word claiming 2 GiB - 1 with BD 4 MiB: rejected before reading it.
        let mut f = frame(FLG, 0x70, 2, &[], &[]);
        f.truncate(7);
        f.extend_from_slice(&[0xff, 0xff, 0xff, 0x7f, 1, 2, 3]);
        assert!(matches!(
            decompress(&f, 2, limit, 0, &mut out),
            Err(Error::Decompress { .. })
        ));
        assert_eq!(out.capacity(), 0);
        // 64 MiB of zeros: one 4 MiB block repeated, ~16 KiB each.
        let zeros = vec![0u8; 4 << 20];
        let block = lz4_flex::block::compress(&zeros);
        let blocks: Vec<(u32, &[u8])> = (0..16).map(|_| (block.len() as u32, &block[..])).collect();
        let bomb = frame(FLG, 0x70, 2, &blocks, &[]);
        assert!(bomb.len() < 1 << 20);
        let err = decompress(&bomb, 2, limit, 0, &mut out).unwrap_err();
        assert_limit_refused(err, 0, Compression::Lz4, limit, &out);
        // Our own framing of many MiB of zeros.
        let packed = pack(&vec![0u8; 16 << 20], 2);
        let err = decompress(&packed, 2, limit, 0, &mut out).unwrap_err();
        assert!(matches!(err, Error::DecompressLimit { .. }));
        assert_capacity_bounded(&out, limit);
        // A tiny compressed block may not reserve a whole 4 MiB window.
        let tiny = lz4_flex::block::compress(b"abcabcabc");
        let f = frame(FLG, 0x70, 2, &[(tiny.len() as u32, &tiny)], &[]);
        let mut out = Vec::new();
        decompress(&f, 2, 64 << 20, 0, &mut out).unwrap();
        assert!(out.capacity() < 64 << 10, "capacity {}", out.capacity());
    }
}
