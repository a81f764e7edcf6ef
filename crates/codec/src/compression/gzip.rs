//! gzip (codec id 1): one RFC 1952 member written, concatenated members read.
//!
//! # Framing
//!
//! ```text
//! offset  size  field
//! 0       2     magic 1f 8b
//! 2       1     CM: 08 (deflate)
//! 3       1     FLG: 00 when written (FTEXT 01, FHCRC 02, FEXTRA 04, FNAME 08, FCOMMENT 10)
//! 4       4     MTIME: 00 00 00 00
//! 8       1     XFL: 00
//! 9       1     OS: ff ("unknown")
//! [FEXTRA]      u16 LE length + that many bytes           } only read, never written
//! [FNAME]       zero-terminated name                      }
//! [FCOMMENT]    zero-terminated comment                   }
//! [FHCRC]       u16 LE: low 16 bits of CRC-32 of the header so far
//! 10      n     raw deflate data (RFC 1951)
//! 10+n    4     CRC-32 of the uncompressed bytes, LE
//! 14+n    4     ISIZE: uncompressed length mod 2^32, LE
//! ```
//!
//! Apache Kafka wraps its output in `java.util.zip.GZIPOutputStream` (`GzipCompression.java`,
//! through the `GzipOutputStream.java` subclass that sets the level). That class writes the fixed
//! 10-byte header above: MTIME 0, XFL 0 whatever the level, and OS `ff` since JDK 16
//! (JDK-8244706; JDK 8 to 15 wrote `00`). We write the same header and trailer byte for byte.
//! The deflate data in between is zlib-rs's and need not match the JDK's zlib bit for bit: any
//! inflater reads either.
//!
//! Levels are 1 (fastest) to 9 (smallest); the default is 6, zlib's value for Java's
//! `Deflater.DEFAULT_COMPRESSION` (-1), which is Kafka's default. Kafka's builder accepts -1
//! explicitly as well, and so does [`compress`].
//!
//! # Reading
//!
//! As `java.util.zip.GZIPInputStream` reads (Kafka's `wrapForInput`): the first member must have a
//! valid header (magic, method 8, optional fields, header CRC when FHCRC is set); reserved FLG bits,
//! MTIME, XFL and OS are ignored; each member's CRC-32 and ISIZE are checked. After a complete
//! member, more bytes that start a valid header begin another member, while bytes that do not
//! form a complete valid header are ignored, as the JDK does. A stream cut short anywhere
//! (header, deflate data, trailer) is an error.

use std::cell::RefCell;

use flate2::{Compress, Decompress, FlushCompress, FlushDecompress, Status};

use super::bounded::BoundedOut;
use super::{checked_level, compress_error, le16, le32};
use crate::{Compression, Result};

/// The 10-byte member header we write: magic, deflate, no flags, MTIME 0, XFL 0, OS unknown.
pub const HEADER: [u8; 10] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff];

/// Kafka's default gzip level (`Deflater.DEFAULT_COMPRESSION`, which zlib maps to 6).
pub const DEFAULT_LEVEL: i32 = 6;

const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;

thread_local! {
    /// Deflate and inflate states are a few hundred KiB to set up; keep one of each per thread.
    static DEFLATE: RefCell<Option<(i32, Compress)>> = const { RefCell::new(None) };
    static INFLATE: RefCell<Option<Decompress>> = const { RefCell::new(None) };
}

/// zlib's `compressBound` for raw deflate: the most a stream of `n` bytes can take.
fn deflate_bound(n: usize) -> usize {
    n.saturating_add(n >> 12)
        .saturating_add(n >> 14)
        .saturating_add(n >> 25)
        .saturating_add(13)
}

/// Compresses `input` into one gzip member appended to `out`.
///
/// `level` is 1..=9, or -1 (`Deflater.DEFAULT_COMPRESSION`, which Kafka's `GzipCompression`
/// builder also accepts) or `None` for Kafka's default, 6. Costs one deflate pass and one CRC-32
/// pass; the deflate state is kept per thread between calls.
///
/// # Errors
///
/// [`Error::InvalidLevel`](crate::Error::InvalidLevel) outside 1..=9 and -1;
/// [`Error::Compress`](crate::Error::Compress) if the output cannot be allocated or zlib-rs fails.
pub fn compress(input: &[u8], level: Option<i32>, out: &mut Vec<u8>) -> Result<()> {
    let level = checked_level(Compression::Gzip, level)?.unwrap_or(DEFAULT_LEVEL);
    let fail = compress_error(Compression::Gzip);
    let start = out.len();
    let bound = deflate_bound(input.len())
        .saturating_add(HEADER.len())
        .saturating_add(8);
    out.try_reserve(bound)
        .map_err(|_| fail(format!("cannot allocate {bound} bytes")))?;
    out.extend_from_slice(&HEADER);

    let result = DEFLATE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let deflate = match slot.as_mut() {
            Some((current, deflate)) => {
                deflate.reset();
                if *current != level {
                    deflate
                        .set_level(flate2::Compression::new(level as u32))
                        .map_err(|e| fail(e.to_string()))?;
                    *current = level;
                }
                deflate
            }
            None => {
                let deflate = Compress::new(flate2::Compression::new(level as u32), false);
                &mut slot.insert((level, deflate)).1
            }
        };
        let mut consumed = 0;
        loop {
            let before = deflate.total_in();
            // zlib never reports more input consumed than it was given, so this is in bounds.
            let rest = input.get(consumed..).unwrap_or_default();
            let status = deflate
                .compress_vec(rest, out, FlushCompress::Finish)
                .map_err(|e| fail(e.to_string()))?;
            consumed = consumed.saturating_add(deflate.total_in().saturating_sub(before) as usize);
            match status {
                Status::StreamEnd => return Ok(()),
                // The bound makes this unreachable; keep going with more room if it happens.
                Status::Ok | Status::BufError => out
                    .try_reserve(64 << 10)
                    .map_err(|_| fail("cannot allocate output".into()))?,
            }
        }
    });
    if let Err(e) = result {
        out.truncate(start);
        return Err(e);
    }
    write_trailer(input, out);
    Ok(())
}

/// Appends CRC-32 and ISIZE, both little-endian as RFC 1952 says.
#[allow(clippy::little_endian_bytes)] // the gzip trailer is little-endian
fn write_trailer(input: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&crc32fast::hash(input).to_le_bytes());
    // ISIZE is the length modulo 2^32: the truncating cast is the definition.
    out.extend_from_slice(&(input.len() as u32).to_le_bytes());
}

/// Parses a member header at `input[pos..]`; returns its length, or why it is not one.
fn parse_header(input: &[u8], pos: usize) -> std::result::Result<usize, String> {
    // The caller only asks at `pos < input.len()`; past the end reads as a cut-short header.
    let h = input.get(pos..).unwrap_or_default();
    let cut = |what: &str, need: usize| {
        format!(
            "gzip header at offset {pos} is cut short: {what} needs byte {need} but only {} remain",
            h.len()
        )
    };
    if let Some(&[m0, m1]) = h.first_chunk() {
        if [m0, m1] != [0x1f, 0x8b] {
            return Err(format!(
                "expected gzip magic 1f 8b at offset {pos}, found {m0:02x} {m1:02x}"
            ));
        }
    }
    let Some(&[_, _, method, flags, ..]) = h.first_chunk::<10>() else {
        return Err(cut("the fixed header", 10));
    };
    if method != 8 {
        return Err(format!(
            "gzip member at offset {pos}: compression method {method} (only 8, deflate, exists)"
        ));
    }
    // `n` never passes `h.len()` (each step is checked against it), so it cannot overflow.
    let mut n = 10usize;
    if flags & FEXTRA != 0 {
        let xlen = le16(h, n).ok_or_else(|| cut("the FEXTRA length", n.saturating_add(2)))?;
        n = n.saturating_add(2).saturating_add(usize::from(xlen));
        if n > h.len() {
            return Err(cut("the FEXTRA field", n));
        }
    }
    for (flag, what) in [(FNAME, "the FNAME field"), (FCOMMENT, "the FCOMMENT field")] {
        if flags & flag != 0 {
            let zero = h
                .get(n..)
                .unwrap_or_default()
                .iter()
                .position(|&b| b == 0)
                .ok_or_else(|| cut(what, h.len().saturating_add(1)))?;
            n = n.saturating_add(zero).saturating_add(1);
        }
    }
    if flags & FHCRC != 0 {
        let stored = le16(h, n).ok_or_else(|| cut("the header CRC", n.saturating_add(2)))?;
        let covered = h
            .get(..n)
            .ok_or_else(|| cut("the header CRC", n.saturating_add(2)))?;
        let computed = (crc32fast::hash(covered) & 0xffff) as u16;
        if stored != computed {
            return Err(format!(
                "gzip header at offset {pos}: header crc {stored:04x} but the header hashes to {computed:04x}"
            ));
        }
        n = n.saturating_add(2);
    }
    Ok(n)
}

/// Checks the gzip header at the start of `input`, as `GZIPInputStream`'s constructor does.
///
/// # Errors
///
/// [`Error::Decompress`](crate::Error::Decompress) for empty input or a bad header.
pub fn check_header(input: &[u8], at: usize) -> Result<()> {
    let mut none = Vec::new();
    let sink = BoundedOut::new(&mut none, 0, at, Compression::Gzip);
    if input.is_empty() {
        return Err(sink.error("empty input (a gzip stream has at least a 10-byte header)"));
    }
    parse_header(input, 0)
        .map(|_| ())
        .map_err(|e| sink.error(e))
}

/// Decompresses gzip members from `input`, appending at most `limit` bytes to `out`.
///
/// Inflates straight into `out`'s spare capacity (no intermediate buffer), growing it in steps
/// bounded by what remains of `limit`. On error `out` is left as it was.
///
/// # Errors
///
/// [`Error::Decompress`](crate::Error::Decompress) for a bad header, corrupt or truncated deflate
/// data, or a CRC-32/ISIZE mismatch; [`Error::DecompressLimit`](crate::Error::DecompressLimit) once
/// the output would pass `limit`.
pub fn decompress(input: &[u8], limit: usize, at: usize, out: &mut Vec<u8>) -> Result<()> {
    let mut sink = BoundedOut::new(out, limit, at, Compression::Gzip);
    if input.is_empty() {
        return Err(sink.error("empty input (a gzip stream has at least a 10-byte header)"));
    }
    INFLATE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let inflate = slot.get_or_insert_with(|| Decompress::new(false));
        let mut pos = 0;
        let mut first = true;
        while pos < input.len() {
            let header_len = match parse_header(input, pos) {
                Ok(n) => n,
                Err(reason) if first => return Err(sink.error(reason)),
                // The JDK's GZIPInputStream ignores trailing bytes that are not a member.
                Err(_) => break,
            };
            first = false;
            // `pos` only moves forward within `input` (a header or deflate data never claims
            // more than the bytes left), so it never overflows and stays `<= input.len()`.
            let data_start = pos.saturating_add(header_len);
            pos = data_start;
            let member_start = sink.produced();
            inflate.reset(false);
            // First guess: typical ratios; later steps double what came out so far.
            let mut want = input
                .len()
                .saturating_sub(pos)
                .saturating_mul(4)
                .max(32 << 10);
            loop {
                let vec = sink.room(want)?;
                let before_in = inflate.total_in();
                let before_out = inflate.total_out();
                let rest = input.get(pos..).unwrap_or_default();
                let status = inflate
                    .decompress_vec(rest, vec, FlushDecompress::None)
                    .map_err(|e| {
                        sink.error(format!(
                            "deflate data starting at offset {data_start} is corrupt near offset {}: {}",
                            (data_start as u64).saturating_add(inflate.total_in()),
                            e.message().unwrap_or("invalid data")
                        ))
                    })?;
                pos = pos.saturating_add(inflate.total_in().saturating_sub(before_in) as usize);
                let progressed = inflate.total_out() != before_out;
                sink.sync()?;
                if status == Status::StreamEnd {
                    break;
                }
                if pos == input.len() && sink.spare() > 0 {
                    return Err(sink.error(format!(
                        "deflate data starting at offset {data_start} ends at offset {pos} before its final block"
                    )));
                }
                if !progressed && sink.spare() > 0 && pos < input.len() && status == Status::BufError {
                    return Err(sink.error(format!(
                        "deflate data starting at offset {data_start} makes no progress at offset {pos}"
                    )));
                }
                want = sink.produced().max(32 << 10);
            }
            let (Some(stored_crc), Some(stored_size)) =
                (le32(input, pos), le32(input, pos.saturating_add(4)))
            else {
                return Err(sink.error(format!(
                    "gzip trailer at offset {pos} needs 8 bytes but {} remain",
                    input.len().saturating_sub(pos)
                )));
            };
            // `member_start` is an earlier `produced()`, so this is always in bounds.
            let Some(member) = sink.output().get(member_start..) else {
                return Err(sink.error(format!(
                    "gzip member at offset {data_start}: output shrank while inflating"
                )));
            };
            let crc = crc32fast::hash(member);
            if crc != stored_crc {
                return Err(sink.error(format!(
                    "gzip trailer at offset {pos}: crc32 {stored_crc:08x} but the data hashes to {crc:08x}"
                )));
            }
            if stored_size != member.len() as u32 {
                return Err(sink.error(format!(
                    "gzip trailer at offset {}: isize {stored_size} but the member inflates to {} bytes",
                    pos.saturating_add(4),
                    member.len()
                )));
            }
            pos = pos.saturating_add(8);
        }
        Ok(())
    })?;
    sink.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::test_data::{
        assert_appends_and_reuses_capacity, assert_capacity_bounded, assert_every_truncation_fails,
        assert_limit_refused, lines, round_trip_inputs,
    };
    use crate::Error;
    use std::io::{Read, Write};

    fn gz(data: &[u8], level: Option<i32>) -> Vec<u8> {
        let mut out = Vec::new();
        compress(data, level, &mut out).unwrap();
        out
    }

    fn gunzip(data: &[u8], limit: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        decompress(data, limit, 100, &mut out).map(|()| out)
    }

    fn compressible(n: usize) -> Vec<u8> {
        lines(n, |i| {
            format!(
                "{{\"id\":{i},\"user\":\"user-{}\",\"event\":\"click\"}}\n",
                i % 97
            )
        })
    }

    #[test]
    fn header_is_javas() {
        let out = gz(b"hello", None);
        assert_eq!(out[..10], [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
        assert_eq!(out[out.len() - 4..], [5, 0, 0, 0]);
    }

    #[test]
    fn round_trips() {
        for data in round_trip_inputs(7, compressible) {
            for level in [None, Some(1), Some(9)] {
                let packed = gz(&data, level);
                assert_eq!(
                    gunzip(&packed, data.len()).unwrap(),
                    data,
                    "level {level:?}"
                );
                // flate2's own reader agrees.
                let mut check = Vec::new();
                flate2::read::GzDecoder::new(&packed[..])
                    .read_to_end(&mut check)
                    .unwrap();
                assert_eq!(check, data);
            }
        }
    }

    #[test]
    fn appends_and_reuses_capacity() {
        let data = compressible(100_000);
        assert_appends_and_reuses_capacity(decompress, &gz(&data, None), &data);
    }

    #[test]
    fn invalid_level() {
        let mut out = Vec::new();
        assert!(matches!(
            compress(b"a", Some(0), &mut out),
            Err(Error::InvalidLevel { level: 0, .. })
        ));
        assert!(matches!(
            compress(b"a", Some(10), &mut out),
            Err(Error::InvalidLevel { .. })
        ));
        // Java's Deflater.DEFAULT_COMPRESSION is accepted by Kafka and means 6.
        compress(b"a", Some(-1), &mut out).unwrap();
        assert_eq!(out, gz(b"a", Some(6)));
    }

    #[test]
    fn concatenated_members() {
        let mut packed = gz(b"hello ", Some(1));
        packed.extend(gz(b"world", Some(9)));
        assert_eq!(gunzip(&packed, 100).unwrap(), b"hello world");
    }

    #[test]
    fn optional_header_fields() {
        let mut enc = flate2::GzBuilder::new()
            .filename("f.txt")
            .comment("c")
            .extra(vec![1, 2, 3])
            .write(Vec::new(), flate2::Compression::default());
        enc.write_all(b"fields").unwrap();
        let mut packed = enc.finish().unwrap();
        assert_eq!(gunzip(&packed, 100).unwrap(), b"fields");
        // Add FHCRC by hand: flags |= 2 and insert the CRC16 after the optional fields.
        let header_len = parse_header(&packed, 0).unwrap();
        packed[3] |= FHCRC;
        let crc = (crc32fast::hash(&packed[..header_len]) & 0xffff) as u16;
        #[allow(clippy::little_endian_bytes)]
        let crc_bytes = crc.to_le_bytes();
        packed.splice(header_len..header_len, crc_bytes);
        assert_eq!(gunzip(&packed, 100).unwrap(), b"fields");
        packed[header_len] ^= 1;
        let err = gunzip(&packed, 100).unwrap_err();
        assert!(err.to_string().contains("header crc"), "{err}");
    }

    #[test]
    fn trailing_garbage_after_a_member_is_ignored_like_the_jdk() {
        let mut packed = gz(b"data", None);
        packed.extend_from_slice(b"\x00\x00garbage");
        assert_eq!(gunzip(&packed, 100).unwrap(), b"data");
        // A valid second header with missing data is an error, as in the JDK.
        let mut packed = gz(b"data", None);
        packed.extend_from_slice(&HEADER);
        assert!(gunzip(&packed, 100).is_err());
    }

    #[test]
    fn every_truncation_fails() {
        assert_every_truncation_fails(decompress, &gz(&compressible(5000), None), 100);
    }

    #[test]
    fn corruption_fails_without_panic() {
        let data = compressible(20_000);
        let packed = gz(&data, None);
        for i in 0..packed.len() {
            for bit in [0x01, 0x80] {
                let mut bad = packed.clone();
                bad[i] ^= bit;
                // Header bytes MTIME/XFL/OS and reserved flags are ignored; anything else must
                // either fail or (vanishingly unlikely) still yield the right bytes.
                if let Ok(out) = gunzip(&bad, 1 << 20) {
                    assert!(out == data || (3..10).contains(&i), "byte {i} bit {bit}");
                }
            }
        }
        let err = gunzip(b"\x1f\x8c\x08\x00\x00\x00\x00\x00\x00\xff", 10).unwrap_err();
        assert!(
            err.to_string()
                .contains("expected gzip magic 1f 8b at offset 0"),
            "{err}"
        );
    }

    #[test]
    fn bomb_of_zeros_stops_at_limit() {
        // 64 MiB of zeros as 64 concatenated 1 MiB members: about 64 KiB of input.
        let zeros = vec![0u8; 1 << 20];
        let member = gz(&zeros, Some(9));
        let packed: Vec<u8> = member
            .iter()
            .copied()
            .cycle()
            .take(member.len() * 64)
            .collect();
        assert!(packed.len() < 100 << 10);
        let limit = 1 << 20;
        let mut out = Vec::new();
        let err = decompress(&packed, limit, 5, &mut out).unwrap_err();
        assert_limit_refused(err, 5, Compression::Gzip, limit, &out);
        // One member of 16 MiB of zeros (a single deflate stream) stops at the limit too.
        let big = gz(&vec![0u8; 16 << 20], Some(1));
        let err = decompress(&big, limit, 5, &mut out).unwrap_err();
        assert!(matches!(err, Error::DecompressLimit { .. }));
        assert_capacity_bounded(&out, limit);
        // Exactly at the limit is fine, one byte more is not.
        assert_eq!(gunzip(&member, limit).unwrap().len(), limit);
        assert!(gunzip(&member, limit - 1).is_err());
    }

    #[test]
    fn caller_capacity_beyond_limit_is_not_exceeded_in_length() {
        let packed = gz(&vec![1u8; 10_000], None);
        let mut out = Vec::with_capacity(1 << 20);
        let err = decompress(&packed, 100, 0, &mut out).unwrap_err();
        assert!(matches!(err, Error::DecompressLimit { limit: 100, .. }));
        assert!(out.is_empty());
    }
}
