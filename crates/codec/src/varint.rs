//! Zigzag varints and varlongs, as the v2 record format uses them.
//!
//! A varint is at most 5 bytes and a varlong at most 10. Like Kafka's `ByteUtils.readVarint`, a
//! continuation bit on the last allowed byte is an error, and bits of the last byte that do not
//! fit the integer are dropped (Kafka shifts them out).

use crate::{Error, Result};

/// Zigzag-encodes an i32.
#[inline]
pub fn zigzag32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

/// Zigzag-encodes an i64.
#[inline]
pub fn zigzag64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Decodes a zigzag-encoded u32.
#[inline]
pub fn unzigzag32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

/// Decodes a zigzag-encoded u64.
#[inline]
pub fn unzigzag64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Reads a zigzag varint from the start of `buf`; returns the value and the bytes used.
///
/// `at` is the absolute position of `buf[0]`, used in errors.
///
/// # Errors
///
/// [`Error::Truncated`] when `buf` ends inside the varint, [`Error::InvalidVarint`] when the 5th
/// byte still has its continuation bit set.
#[inline(always)]
pub fn read_varint(buf: &[u8], at: usize) -> Result<(i32, usize)> {
    // Fast paths: one or two bytes, which is what lengths and deltas of records take.
    match buf {
        [b0, ..] if *b0 < 0x80 => return Ok((unzigzag32(u32::from(*b0)), 1)),
        [b0, b1, ..] if *b1 < 0x80 => {
            let v = u32::from(b0 & 0x7f) | (u32::from(*b1) << 7);
            return Ok((unzigzag32(v), 2));
        }
        _ => {}
    }
    let mut value: u32 = 0;
    for (i, &b) in buf.iter().take(5).enumerate() {
        value |= u32::from(b & 0x7f).wrapping_shl(7 * i as u32);
        if b & 0x80 == 0 {
            return Ok((unzigzag32(value), i + 1));
        }
    }
    if buf.len() >= 5 {
        Err(Error::InvalidVarint { at, max_bytes: 5 })
    } else {
        Err(Error::Truncated {
            at,
            what: "varint",
            needed: buf.len() + 1,
            available: buf.len(),
        })
    }
}

/// Reads a zigzag varlong from the start of `buf`; returns the value and the bytes used.
///
/// # Errors
///
/// As [`read_varint`], with a limit of 10 bytes.
#[inline(always)]
pub fn read_varlong(buf: &[u8], at: usize) -> Result<(i64, usize)> {
    match buf {
        [b0, ..] if *b0 < 0x80 => return Ok((unzigzag64(u64::from(*b0)), 1)),
        [b0, b1, ..] if *b1 < 0x80 => {
            let v = u64::from(b0 & 0x7f) | (u64::from(*b1) << 7);
            return Ok((unzigzag64(v), 2));
        }
        _ => {}
    }
    let mut value: u64 = 0;
    for (i, &b) in buf.iter().take(10).enumerate() {
        value |= u64::from(b & 0x7f).wrapping_shl(7 * i as u32);
        if b & 0x80 == 0 {
            return Ok((unzigzag64(value), i + 1));
        }
    }
    if buf.len() >= 10 {
        Err(Error::InvalidVarint { at, max_bytes: 10 })
    } else {
        Err(Error::Truncated {
            at,
            what: "varlong",
            needed: buf.len() + 1,
            available: buf.len(),
        })
    }
}

/// Reads an unsigned varint (no zigzag; up to 5 bytes), as Kafka's flexible protocol messages
/// use for compact lengths and tagged fields.
///
/// # Errors
///
/// As [`read_varint`].
#[inline]
pub fn read_unsigned_varint(buf: &[u8], at: usize) -> Result<(u32, usize)> {
    let (v, n) = read_varint(buf, at)?;
    // read_varint decoded zigzag; undo it to get the raw unsigned value.
    Ok((zigzag32(v), n))
}

/// Bytes the zigzag varint encoding of `v` takes (1..=5).
#[inline]
pub fn varint_len(v: i32) -> usize {
    // Comparisons rather than a leading-zero count: baseline x86-64 has no LZCNT, and BSR plus
    // the division by 7 showed up in encode profiles.
    let u = zigzag32(v);
    1 + usize::from(u >= 1 << 7)
        + usize::from(u >= 1 << 14)
        + usize::from(u >= 1 << 21)
        + usize::from(u >= 1 << 28)
}

/// Bytes the zigzag varlong encoding of `v` takes (1..=10).
#[inline]
pub fn varlong_len(v: i64) -> usize {
    unsigned_len(zigzag64(v))
}

#[inline]
fn unsigned_len(v: u64) -> usize {
    // 1 byte per started group of 7 bits, at least 1.
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Appends the zigzag varint encoding of `v`.
#[inline]
pub fn write_varint(out: &mut Vec<u8>, v: i32) {
    write_unsigned(out, u64::from(zigzag32(v)));
}

/// Appends the zigzag varlong encoding of `v`.
#[inline]
pub fn write_varlong(out: &mut Vec<u8>, v: i64) {
    write_unsigned(out, zigzag64(v));
}

#[inline]
fn write_unsigned(out: &mut Vec<u8>, v: u64) {
    encode_unsigned(v, |b| out.push(b));
}

/// Emits the unsigned base-128 bytes of `v`, low group first, through `put`; one and two bytes
/// (what record lengths, deltas and sizes take) without a loop. The one encoder behind the `Vec`
/// writers here and the v2 builder's in-place writer.
#[inline(always)]
pub(crate) fn encode_unsigned(mut v: u64, mut put: impl FnMut(u8)) {
    if v < 0x80 {
        put(v as u8);
        return;
    }
    if v < 0x4000 {
        put((v as u8) | 0x80);
        put((v >> 7) as u8);
        return;
    }
    while v >= 0x80 {
        put((v as u8) | 0x80);
        v >>= 7;
    }
    put(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_edges() {
        for v in [0, 1, -1, 63, -64, 64, -65, i32::MAX, i32::MIN] {
            let mut out = Vec::new();
            write_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v));
            assert_eq!(read_varint(&out, 0).unwrap(), (v, out.len()));
        }
        for v in [0, 1, -1, i64::MAX, i64::MIN, 1 << 40] {
            let mut out = Vec::new();
            write_varlong(&mut out, v);
            assert_eq!(out.len(), varlong_len(v));
            assert_eq!(read_varlong(&out, 0).unwrap(), (v, out.len()));
        }
    }

    #[test]
    fn too_long_is_an_error_and_short_is_truncated() {
        let six = [0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
        assert!(matches!(
            read_varint(&six, 7),
            Err(Error::InvalidVarint {
                at: 7,
                max_bytes: 5
            })
        ));
        assert!(matches!(
            read_varint(&[0x80, 0x80], 3),
            Err(Error::Truncated { at: 3, .. })
        ));
        assert!(matches!(
            read_varint(&[], 3),
            Err(Error::Truncated { at: 3, .. })
        ));
        let eleven = [0xffu8; 11];
        assert!(matches!(
            read_varlong(&eleven, 0),
            Err(Error::InvalidVarint { max_bytes: 10, .. })
        ));
    }

    #[test]
    fn fifth_byte_high_bits_are_dropped_as_kafka_does() {
        // 0xff 0xff 0xff 0xff 0x7f: Kafka computes result |= 0x7f << 28, keeping the low 4 bits.
        let (v, n) = read_varint(&[0xff, 0xff, 0xff, 0xff, 0x7f], 0).unwrap();
        assert_eq!(n, 5);
        assert_eq!(v, unzigzag32(u32::MAX));
    }
}
