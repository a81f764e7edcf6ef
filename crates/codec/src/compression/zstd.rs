//! zstd (codec id 4, magic 2 only): standard zstd frames (RFC 8878), concatenated frames read.
//!
//! # Framing
//!
//! ```text
//! offset  size   field
//! 0       4      magic 28 b5 2f fd (0xfd2fb528 LE)
//! 4       1      frame header descriptor (FHD): bits 7-6 content size field size,
//!                bit 5 single segment, bit 2 content checksum, bits 1-0 dictionary id size
//! [5      1      window descriptor, unless single segment]
//! [       0-4    dictionary id]
//! [       0-8    frame content size]
//! ...     3+n    blocks: 3-byte LE header (last flag, type raw/RLE/compressed, size) + data
//! [       4      content checksum: low 32 bits of XXH64, if FHD bit 2]
//! ```
//!
//! Kafka writes through zstd-jni's `ZstdOutputStreamNoFinalizer` behind a 16 KiB
//! `BufferedOutputStream` (`ZstdCompression.java`): a streaming frame with no content size
//! (the size is unknown when the frame starts), no checksum and no dictionary. We write the
//! same header flags (FHD bit 5, bits 7-6, bit 2 and bits 1-0 all zero) with libzstd's one-shot
//! path, so the window descriptor is sized for the actual input where Kafka's is sized for "unknown
//! size" (2 MiB at level 3): smaller and faster for small batches. The blocks are libzstd's either
//! way and need not match zstd-jni's byte for byte.
//!
//! Levels: Kafka accepts -131072..=22 (zstd's own range), default 3; level 0 means zstd's default.
//!
//! # Reading
//!
//! Streaming decompression into `out`'s spare capacity, frame after frame until the input is used
//! up (skippable frames are skipped). The frame header's content size is never trusted for
//! allocation: a first frame that declares more than the limit fails at once with
//! [`Error::DecompressLimit`](crate::Error::DecompressLimit), a smaller declared size is only a
//! capped first guess for the output reservation. libzstd's window buffer is bounded by limiting
//! the window log to `clamp(log2(limit), 23, 27)`: 8 MiB is enough for every level up to 19 with
//! unknown size, and 27 (128 MiB) is libzstd's default maximum, which Kafka's zstd-jni reader uses
//! too.

use std::cell::RefCell;

use zstd::zstd_safe::{
    self, zstd_sys::ZSTD_EndDirective, CCtx, CParameter, DCtx, DParameter, InBuffer, OutBuffer,
    ResetDirective,
};

use super::bounded::BoundedOut;
use super::{checked_level, compress_error, le32};
use crate::{Compression, Result};

/// Kafka's default zstd level.
pub const DEFAULT_LEVEL: i32 = 3;

/// libzstd's default (and Kafka's) maximum window log.
const WINDOW_LOG_DEFAULT_MAX: u32 = 27;
/// Smallest window log we always allow: 8 MiB covers zstd levels 1..=19 on unknown-size input.
const WINDOW_LOG_FLOOR: u32 = 23;

thread_local! {
    static CCTX: RefCell<Option<CCtx<'static>>> = const { RefCell::new(None) };
    static DCTX: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
}

/// The window log cap for a limit: `clamp(ceil(log2(limit)), 23, 27)`.
fn window_log_max(limit: usize) -> u32 {
    // `leading_zeros() <= usize::BITS`, so this cannot underflow.
    let log = usize::BITS.saturating_sub(limit.saturating_sub(1).leading_zeros());
    log.clamp(WINDOW_LOG_FLOOR, WINDOW_LOG_DEFAULT_MAX)
}

/// Compresses `input` into one zstd frame appended to `out`, without content size or checksum
/// (as Kafka's frames).
///
/// `level` is -131072..=22, `None` for Kafka's default (3). The compression context is kept per
/// thread; the frame is written straight into `out`.
///
/// # Errors
///
/// [`Error::InvalidLevel`](crate::Error::InvalidLevel) outside zstd's range;
/// [`Error::Compress`](crate::Error::Compress) if libzstd fails or the output cannot be allocated.
pub fn compress(input: &[u8], level: Option<i32>, out: &mut Vec<u8>) -> Result<()> {
    let level = checked_level(Compression::Zstd, level)?.unwrap_or(DEFAULT_LEVEL);
    let fail = compress_error(Compression::Zstd);
    let zfail = |code: usize| fail(zstd_safe::get_error_name(code).to_string());
    let start = out.len();
    let bound = zstd_safe::compress_bound(input.len());
    out.try_reserve(bound)
        .map_err(|_| fail(format!("cannot allocate {bound} bytes")))?;
    let result = CCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        let cctx = match slot.as_mut() {
            Some(cctx) => cctx,
            None => {
                let mut cctx = CCtx::create();
                cctx.set_parameter(CParameter::ContentSizeFlag(false))
                    .map_err(zfail)?;
                cctx.set_parameter(CParameter::ChecksumFlag(false))
                    .map_err(zfail)?;
                slot.insert(cctx)
            }
        };
        // A session reset also clears the error state a failed call leaves behind.
        cctx.reset(ResetDirective::SessionOnly).map_err(zfail)?;
        cctx.set_parameter(CParameter::CompressionLevel(level))
            .map_err(zfail)?;
        let mut src = InBuffer::around(input);
        loop {
            let pos = out.len();
            let mut dst = OutBuffer::around_pos(out, pos);
            let left = cctx
                .compress_stream2(&mut dst, &mut src, ZSTD_EndDirective::ZSTD_e_end)
                .map_err(zfail)?;
            if left == 0 {
                return Ok(());
            }
            // Only reachable if compress_bound were wrong; make room and finish the frame.
            out.try_reserve(left.max(1 << 16))
                .map_err(|_| fail("cannot allocate output".into()))?;
        }
    });
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// Decompresses one or more zstd frames, appending at most `limit` bytes to `out`.
///
/// Decodes straight into `out`'s spare capacity, growing it in steps bounded by what remains of
/// `limit`. A frame whose header declares a content size must hold exactly that many bytes. The
/// decompression context is kept per thread. On error `out` is left as it was.
///
/// # Errors
///
/// [`Error::Decompress`](crate::Error::Decompress) for empty, corrupt or truncated input;
/// [`Error::DecompressLimit`](crate::Error::DecompressLimit) when the output would pass `limit`,
/// when the first frame declares a content size above it, or when a frame needs a window larger
/// than the limit allows (but within libzstd's default 128 MiB).
pub fn decompress(input: &[u8], limit: usize, at: usize, out: &mut Vec<u8>) -> Result<()> {
    let mut sink = BoundedOut::new(out, limit, at, Compression::Zstd);
    if input.is_empty() {
        return Err(sink.error("empty input (a zstd frame has at least a 6-byte header)"));
    }
    // A generous first guess for typical batches, refined by a declared content size.
    let mut want = input.len().saturating_mul(8).clamp(64 << 10, 4 << 20);
    if let Ok(Some(declared)) = zstd_safe::get_frame_content_size(input) {
        if declared > limit as u64 {
            return Err(sink.limit_error());
        }
        // Trusted only up to a ratio of 64:1, so a lying header cannot make us reserve much.
        want = (declared as usize)
            .min(input.len().saturating_mul(64))
            .max(1);
    }
    let window_log = window_log_max(limit);
    DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        let dctx = slot.get_or_insert_with(DCtx::create);
        let zerr = |sink: &BoundedOut<'_>, code: usize, pos: usize| {
            let name = zstd_safe::get_error_name(code);
            if name.contains("too much memory") && window_log < WINDOW_LOG_DEFAULT_MAX {
                return sink.limit_error();
            }
            if name.contains("too much memory") {
                return sink.error(format!(
                    "zstd frame near offset {pos} needs a window larger than 2^{WINDOW_LOG_DEFAULT_MAX} bytes (libzstd's and Kafka's maximum)"
                ));
            }
            sink.error(format!("zstd data near offset {pos}: {}", name.to_lowercase()))
        };
        dctx.reset(ResetDirective::SessionOnly).map_err(|c| zerr(&sink, c, 0))?;
        dctx.set_parameter(DParameter::WindowLogMax(window_log))
            .map_err(|c| zerr(&sink, c, 0))?;
        let mut src = InBuffer::around(input);
        refuse_legacy(&sink, input, 0)?;
        // Where the current frame's output starts, and the size its header declares: libzstd's
        // streaming decoder does not always check that size (it skips the check when the output
        // room is smaller than the declared size), its one-shot decoder does, so we check it.
        let declared_at = |p: usize| {
            zstd_safe::get_frame_content_size(input.get(p..).unwrap_or_default())
                .ok()
                .flatten()
        };
        let mut frame_start = 0usize;
        let mut frame_declared = declared_at(0);
        loop {
            let vec = sink.room(want)?;
            let pos = vec.len();
            let before_in = src.pos;
            let (result, wrote) = {
                let mut dst = OutBuffer::around_pos(vec, pos);
                let result = dctx.decompress_stream(&mut dst, &mut src);
                // libzstd only moves `dst.pos()` forward from `pos`.
                (result, dst.pos().saturating_sub(pos))
            };
            let hint = result.map_err(|c| zerr(&sink, c, src.pos))?;
            sink.sync()?;
            if hint == 0 {
                // A frame ended; another may follow.
                let held = sink.produced().saturating_sub(frame_start);
                if let Some(declared) = frame_declared.filter(|&d| d != held as u64) {
                    return Err(sink.error(format!(
                        "zstd frame ending at offset {} declares {declared} bytes of content but holds {held}",
                        src.pos
                    )));
                }
                if src.pos == input.len() {
                    return Ok(());
                }
                refuse_legacy(&sink, input, src.pos)?;
                frame_start = sink.produced();
                frame_declared = declared_at(src.pos);
            } else if src.pos == input.len() && sink.spare() > 0 {
                return Err(sink.error(format!(
                    "zstd frame is cut short: the input ends at offset {} with the frame incomplete",
                    input.len()
                )));
            } else if wrote == 0 && src.pos == before_in && sink.spare() > 0 {
                return Err(sink.error(format!("zstd data makes no progress at offset {}", src.pos)));
            }
            want = sink.produced().max(128 << 10);
        }
    })?;
    sink.finish();
    Ok(())
}

/// Refuses a frame in one of zstd's pre-1.0 formats (magics `0xFD2FB522..=0xFD2FB527`). The
/// `zstd` crate may be built with legacy support (other crates enable it), and legacy decoders
/// allocate their windows without the limits set on the decompression context; Kafka has only
/// ever written zstd 1.x frames.
fn refuse_legacy(sink: &BoundedOut<'_>, input: &[u8], pos: usize) -> Result<()> {
    match le32(input, pos) {
        Some(m @ 0xFD2F_B522..=0xFD2F_B527) => Err(sink.error(format!(
            "zstd frame at offset {pos} has the legacy pre-1.0 magic 0x{m:08x}, which Kafka never writes"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::test_data::{
        assert_appends_and_reuses_capacity, assert_capacity_bounded, assert_every_truncation_fails,
        assert_limit_refused, lines, round_trip_inputs,
    };
    use crate::Error;

    fn pack(data: &[u8], level: Option<i32>) -> Vec<u8> {
        let mut out = Vec::new();
        compress(data, level, &mut out).unwrap();
        out
    }

    fn unpack(data: &[u8], limit: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        decompress(data, limit, 61, &mut out).map(|()| out)
    }

    fn compressible(n: usize) -> Vec<u8> {
        lines(n, |i| format!("{{\"seq\":{i},\"name\":\"n{}\"}}\n", i % 17))
    }

    #[test]
    fn frame_header_has_no_content_size_or_checksum() {
        for data in [&b""[..], b"hello", &compressible(100_000)] {
            let packed = pack(data, None);
            assert_eq!(packed[..4], [0x28, 0xb5, 0x2f, 0xfd]);
            let fhd = packed[4];
            assert_eq!(fhd & 0xc0, 0, "no content size field");
            assert_eq!(fhd & 0x20, 0, "not single segment (needs a content size)");
            assert_eq!(fhd & 0x04, 0, "no checksum");
            assert_eq!(fhd & 0x03, 0, "no dictionary id");
            assert!(matches!(
                zstd_safe::get_frame_content_size(&packed),
                Ok(None)
            ));
        }
    }

    #[test]
    fn round_trips() {
        let levels = [None, Some(-131072), Some(-1), Some(0), Some(1), Some(22)];
        for data in round_trip_inputs(9, compressible) {
            for level in levels {
                if level == Some(22) && data.len() > 1000 {
                    continue; // level 22 in a debug build is slow; covered on small input
                }
                let packed = pack(&data, level);
                assert_eq!(
                    unpack(&packed, data.len()).unwrap(),
                    data,
                    "level {level:?}"
                );
                assert_eq!(zstd::bulk::decompress(&packed, data.len()).unwrap(), data);
            }
        }
        assert_eq!(
            unpack(&pack(&compressible(300_000), Some(19)), 1 << 20)
                .unwrap()
                .len(),
            300_000
        );
    }

    #[test]
    fn invalid_levels() {
        let mut out = Vec::new();
        assert!(matches!(
            compress(b"a", Some(23), &mut out),
            Err(Error::InvalidLevel { .. })
        ));
        assert!(matches!(
            compress(b"a", Some(-131073), &mut out),
            Err(Error::InvalidLevel { .. })
        ));
        assert!(out.is_empty());
    }

    #[test]
    fn frames_from_other_writers() {
        // zstd's bulk API writes a content size and can add a checksum.
        let data = compressible(50_000);
        let mut enc = zstd::bulk::Compressor::new(5).unwrap();
        enc.include_checksum(true).unwrap();
        let packed = enc.compress(&data).unwrap();
        assert!(matches!(
            zstd_safe::get_frame_content_size(&packed),
            Ok(Some(50_000))
        ));
        assert_eq!(unpack(&packed, 50_000).unwrap(), data);
        // A corrupted checksum is caught.
        let mut bad = packed.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(unpack(&bad, 50_000).is_err());
        // A declared size above the limit fails before decoding.
        assert_eq!(
            unpack(&packed, 49_999).unwrap_err(),
            Error::DecompressLimit {
                at: 61,
                compression: Compression::Zstd,
                limit: 49_999
            }
        );
    }

    #[test]
    fn concatenated_and_skippable_frames() {
        let mut packed = pack(b"hello ", Some(1));
        // A skippable frame: magic 0x184d2a50 LE, length 3, payload.
        packed.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
        packed.extend(pack(b"world", Some(7)));
        assert_eq!(unpack(&packed, 100).unwrap(), b"hello world");
        let mut garbage = pack(b"x", None);
        garbage.extend_from_slice(b"junk");
        assert!(unpack(&garbage, 100).is_err());
    }

    #[test]
    fn appends_and_reuses_capacity() {
        let data = compressible(300_000);
        assert_appends_and_reuses_capacity(decompress, &pack(&data, None), &data);
    }

    #[test]
    fn every_truncation_fails() {
        assert_every_truncation_fails(decompress, &pack(&compressible(200_000), None), 61);
    }

    #[test]
    fn corruption_never_panics_and_restores_output() {
        let data = compressible(100_000);
        let packed = pack(&data, None);
        for i in 0..packed.len() {
            let mut bad = packed.clone();
            bad[i] ^= 0x24;
            let mut out = b"keep".to_vec();
            if decompress(&bad, 1 << 20, 0, &mut out).is_err() {
                assert_eq!(out, b"keep");
            }
        }
    }

    /// Decodes into an empty vector and after a byte already in one: both must accept or both
    /// refuse, with the same output.
    fn both_paths(data: &[u8], limit: usize) -> Result<Vec<u8>> {
        let mut empty = Vec::new();
        let fresh = decompress(data, limit, 61, &mut empty);
        let mut prefixed = vec![0x5a];
        let appended = decompress(data, limit, 61, &mut prefixed);
        // Where an error is found may differ with the output room; whether one is may not.
        assert_eq!(fresh.is_ok(), appended.is_ok(), "{fresh:?} vs {appended:?}");
        if fresh.is_ok() {
            assert_eq!(empty[..], prefixed[1..]);
        }
        fresh.map(|()| empty)
    }

    #[test]
    fn declared_content_size_must_match() {
        // Fuzz finding: a single-segment frame declaring 6400 bytes whose blocks hold 7. libzstd's
        // streaming decoder accepted it when its output room was under 6400 bytes; its one-shot
        // decoder and the zstd crate's reader refuse it, and so do we now.
        let frame =
            hex::decode("28b52ffd600018380000 0cb52f6c7565 00010000".replace(' ', "")).unwrap();
        assert!(zstd::stream::decode_all(&frame[..]).is_err());
        let e = both_paths(&frame, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("declares 6400 bytes"), "{e}");
        // A frame whose declared size is right still decodes, alone and after another frame.
        let mut right = Vec::new();
        let mut cctx = CCtx::create();
        cctx.set_parameter(CParameter::ContentSizeFlag(true))
            .unwrap();
        let mut buf = Vec::with_capacity(1024);
        cctx.compress2(&mut buf, b"sized content").unwrap();
        right.extend_from_slice(&pack(b"first ", None));
        right.extend_from_slice(&buf);
        assert_eq!(both_paths(&right, 1 << 20).unwrap(), b"first sized content");
    }

    #[test]
    fn window_log_cap() {
        assert_eq!(window_log_max(0), 23);
        assert_eq!(window_log_max(1 << 20), 23);
        assert_eq!(window_log_max((16 << 20) + 1), 25);
        assert_eq!(window_log_max(256 << 20), 27);
        assert_eq!(window_log_max(usize::MAX), 27);
        // A frame that asks for a 2^26 window under a 1 MiB limit is refused as over the limit.
        let mut big_window = Vec::new();
        let mut e = zstd::stream::write::Encoder::new(&mut big_window, 1).unwrap();
        e.set_parameter(CParameter::WindowLog(26)).unwrap();
        std::io::Write::write_all(&mut e, &compressible(1000)).unwrap();
        e.finish().unwrap();
        assert!(matches!(
            both_paths(&big_window, 1 << 20),
            Err(Error::DecompressLimit { .. })
        ));
        assert_eq!(unpack(&big_window, 256 << 20).unwrap(), compressible(1000));
    }

    #[test]
    fn bombs_fail_fast_with_bounded_memory() {
        let limit = 1 << 20;
        let mut out = Vec::new();
        // Header claiming 8 GiB (see franz_go_zstd_header_claims_8gib.json).
        let claim = hex::decode("28b52ffdc0000000000002000000").unwrap();
        assert!(matches!(
            decompress(&claim, limit, 0, &mut out),
            Err(Error::DecompressLimit { .. })
        ));
        assert_eq!(out.capacity(), 0);
        // The same claim under a limit above 8 GiB: no blocks follow, so it is truncated, and
        // nothing near 8 GiB was reserved.
        let err = decompress(&claim, usize::MAX, 0, &mut out).unwrap_err();
        assert!(matches!(err, Error::Decompress { .. }), "{err}");
        assert!(out.capacity() < 1 << 20, "capacity {}", out.capacity());
        // A real stream of 64 MiB of zeros: a frame of RLE blocks (3-byte header + 1 byte each).
        let mut bomb = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50]; // FHD 0, window 2^20
        let blocks = 512;
        for i in 0..blocks {
            let last = u32::from(i == blocks - 1);
            let header = last | (1 << 1) | ((128 << 10) << 3); // RLE, 128 KiB
            #[allow(clippy::little_endian_bytes)]
            bomb.extend_from_slice(&header.to_le_bytes()[..3]);
            bomb.push(0);
        }
        assert_eq!(
            zstd::bulk::decompress(&bomb, 64 << 20).unwrap().len(),
            64 << 20
        );
        let mut out = Vec::new();
        let err = decompress(&bomb, limit, 3, &mut out).unwrap_err();
        assert_limit_refused(err, 3, Compression::Zstd, limit, &out);
        // Our own framing of many MiB of zeros.
        let packed = pack(&vec![0u8; 16 << 20], Some(1));
        let err = decompress(&packed, limit, 0, &mut out).unwrap_err();
        assert!(matches!(err, Error::DecompressLimit { .. }));
        assert_capacity_bounded(&out, limit);
    }

    #[test]
    fn legacy_frames_are_refused_before_decoding() {
        // The 61-byte v0.6 frame the fuzzer found making libzstd's legacy decoder allocate 64 MiB.
        let mut legacy = vec![0x26, 0xb5, 0x2f, 0xfd];
        legacy.extend_from_slice(&[0u8; 57]);
        let e = unpack(&legacy, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("legacy"), "{e}");
        // Also after a valid frame.
        let mut two = pack(b"hello", None);
        two.extend_from_slice(&legacy);
        assert!(unpack(&two, 1 << 20)
            .unwrap_err()
            .to_string()
            .contains("legacy"));
    }
}
