//! Panic-free big-endian field access over byte slices.
//!
//! Views check their length once in their constructor; these helpers then read fixed offsets and
//! fall back to zero if a caller ever broke that invariant, so no read path can panic.

use crate::{Error, Result};

#[inline]
pub(crate) fn array<const N: usize>(buf: &[u8], at: usize) -> [u8; N] {
    match buf.get(at..at.wrapping_add(N)) {
        Some(s) => {
            let mut a = [0u8; N];
            a.copy_from_slice(s);
            a
        }
        None => [0u8; N],
    }
}

#[inline]
pub(crate) fn u8_at(buf: &[u8], at: usize) -> u8 {
    buf.get(at).copied().unwrap_or(0)
}

#[inline]
pub(crate) fn i16_at(buf: &[u8], at: usize) -> i16 {
    i16::from_be_bytes(array(buf, at))
}

#[inline]
pub(crate) fn i32_at(buf: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(array(buf, at))
}

#[inline]
pub(crate) fn u32_at(buf: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(array(buf, at))
}

#[inline]
pub(crate) fn i64_at(buf: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(array(buf, at))
}

/// Takes `len` bytes at `pos` of `buf`, or reports how many were missing. `base` is the absolute
/// position of `buf[0]`.
#[inline]
pub(crate) fn take<'a>(
    buf: &'a [u8],
    pos: usize,
    len: usize,
    base: usize,
    what: &'static str,
) -> Result<&'a [u8]> {
    match pos.checked_add(len).and_then(|end| buf.get(pos..end)) {
        Some(s) => Ok(s),
        None => Err(Error::Truncated {
            at: base.saturating_add(pos),
            what,
            needed: len,
            available: buf.len().saturating_sub(pos),
        }),
    }
}
