//! The output side shared by the decompressors: appends to the caller's `Vec`, never past a
//! limit, and grows it only by amounts the decompressor has earned.
//!
//! Two kinds of decoder write through it:
//!
//! - decoders that fill the spare capacity of a `Vec` (flate2, zstd) get [`BoundedOut::room`],
//!   which reserves at most `remaining + 1` bytes: one byte past the limit is how an over-long
//!   stream is told apart from one that ends exactly at the limit;
//! - decoders that need an initialised `&mut [u8]` (snap, lz4_flex) get [`BoundedOut::window`],
//!   a zero-filled slice past the written bytes. The zeroed area is kept between calls, so across
//!   a whole stream each output byte is zeroed once, plus one window.
//!
//! Capacity grows geometrically but never above `start + limit + 1`, so a caller that sets a limit
//! of L never sees its buffer reach much more than L bytes because of what an input claims.
//! A spare-capacity decoder fills whatever spare capacity the vector already has, so when the
//! caller hands in more capacity than `limit + 1`, an over-long stream can fill some of it before
//! the limit is noticed: no memory is allocated for that and the length is truncated back, only
//! the work is bounded by the caller's capacity instead of the limit.
//! Dropping a `BoundedOut` without [`BoundedOut::finish`] truncates the vector back to its length
//! on entry, so an error never leaves partial output behind.

use crate::{Compression, Error};

/// Output appended to a caller's vector, bounded by a limit.
///
/// Invariants: `start <= written <= out.len()`; `written - start` is the decompressed output so
/// far; bytes `written..out.len()` are zeroed scratch for [`BoundedOut::window`].
pub(crate) struct BoundedOut<'a> {
    out: &'a mut Vec<u8>,
    /// `out.len()` on entry: everything before it belongs to the caller.
    start: usize,
    /// End of the decompressed output.
    written: usize,
    /// Maximum number of bytes to append.
    limit: usize,
    /// Absolute position of the compressed data, for errors.
    at: usize,
    compression: Compression,
    finished: bool,
}

impl<'a> BoundedOut<'a> {
    pub(crate) fn new(
        out: &'a mut Vec<u8>,
        limit: usize,
        at: usize,
        compression: Compression,
    ) -> Self {
        let start = out.len();
        BoundedOut {
            out,
            start,
            written: start,
            limit,
            at,
            compression,
            finished: false,
        }
    }

    /// Bytes decompressed so far.
    pub(crate) fn produced(&self) -> usize {
        // `start <= written` always; saturating only spells out that it cannot underflow.
        self.written.saturating_sub(self.start)
    }

    /// Bytes that may still be appended.
    pub(crate) fn remaining(&self) -> usize {
        self.limit.saturating_sub(self.produced())
    }

    /// The decompressed bytes so far (for trailer checksums).
    pub(crate) fn output(&self) -> &[u8] {
        // In bounds by the invariant `start <= written <= out.len()`; were it ever broken, an
        // empty slice makes the caller's checksum fail instead of panicking.
        self.out.get(self.start..self.written).unwrap_or_default()
    }

    /// A [`Error::Decompress`] at this stream's position.
    pub(crate) fn error(&self, reason: impl Into<String>) -> Error {
        Error::Decompress {
            at: self.at,
            compression: self.compression,
            reason: reason.into(),
        }
    }

    /// The [`Error::DecompressLimit`] of this stream.
    pub(crate) fn limit_error(&self) -> Error {
        Error::DecompressLimit {
            at: self.at,
            compression: self.compression,
            limit: self.limit,
        }
    }

    /// Highest total capacity this stream ever asks for.
    fn hard_cap(&self) -> usize {
        self.start.saturating_add(self.limit).saturating_add(1)
    }

    /// Makes `out.capacity() >= total`, growing geometrically up to the hard cap.
    fn reserve_total(&mut self, total: usize) -> Result<(), Error> {
        let capacity = self.out.capacity();
        if capacity >= total {
            return Ok(());
        }
        let target = capacity.saturating_mul(2).min(self.hard_cap()).max(total);
        // `target >= total > capacity >= len`.
        let additional = target.saturating_sub(self.out.len());
        self.out
            .try_reserve_exact(additional)
            .map_err(|_| self.error(format!("cannot allocate {additional} bytes of output")))
    }

    /// For spare-capacity decoders: truncates the vector to the written bytes and makes sure at
    /// least `min(want, remaining + 1)` bytes of spare capacity follow, then hands the vector out.
    /// Call [`BoundedOut::sync`] after the decoder wrote.
    pub(crate) fn room(&mut self, want: usize) -> Result<&mut Vec<u8>, Error> {
        self.out.truncate(self.written);
        let room = want.clamp(1, self.remaining().saturating_add(1));
        self.reserve_total(self.written.saturating_add(room))?;
        Ok(self.out)
    }

    /// Takes the bytes a spare-capacity decoder appended. Fails once output passed the limit.
    pub(crate) fn sync(&mut self) -> Result<(), Error> {
        self.written = self.out.len();
        if self.produced() > self.limit {
            return Err(self.limit_error());
        }
        Ok(())
    }

    /// Spare capacity after the written bytes (what a spare-capacity decoder may fill).
    pub(crate) fn spare(&self) -> usize {
        self.out.capacity().saturating_sub(self.out.len())
    }

    /// For slice decoders: a zero-initialised window of `len` bytes right after the written
    /// bytes. `len` must not exceed `remaining() + 1` (the caller bounds it).
    pub(crate) fn window(&mut self, len: usize) -> Result<&mut [u8], Error> {
        debug_assert!(len <= self.remaining().saturating_add(1));
        let end = self.written.saturating_add(len);
        if self.out.len() < end {
            self.reserve_total(end)?;
            self.out.resize(end, 0);
        }
        let (at, compression) = (self.at, self.compression);
        self.out
            .get_mut(self.written..end)
            .ok_or_else(|| Error::Decompress {
                at,
                compression,
                reason: format!("cannot take an output window of {len} bytes"),
            })
    }

    /// Accepts `len` bytes written at the start of the last window. Fails past the limit.
    pub(crate) fn commit(&mut self, len: usize) -> Result<(), Error> {
        debug_assert!(self.written.saturating_add(len) <= self.out.len());
        if len > self.remaining() {
            return Err(self.limit_error());
        }
        // The window was `out[written..written + len']` with `len <= len'`, so this stays within
        // `out.len()`.
        self.written = self.written.saturating_add(len);
        Ok(())
    }

    /// Appends `bytes` (a stored block), checking the limit first.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.len() > self.remaining() {
            return Err(self.limit_error());
        }
        self.window(bytes.len())?.copy_from_slice(bytes);
        self.written = self.written.saturating_add(bytes.len());
        Ok(())
    }

    /// Keeps the output: truncates the scratch area and leaves the decompressed bytes appended.
    pub(crate) fn finish(mut self) {
        self.out.truncate(self.written);
        self.finished = true;
    }
}

impl Drop for BoundedOut<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.out.truncate(self.start);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_never_passes_limit_plus_one() {
        let mut out = Vec::new();
        let mut sink = BoundedOut::new(&mut out, 1000, 0, Compression::Lz4);
        for _ in 0..10 {
            let w = sink.window(100).unwrap();
            w.fill(7);
            sink.commit(100).unwrap();
        }
        assert!(matches!(sink.window(1).unwrap().len(), 1));
        assert!(matches!(
            sink.commit(1),
            Err(Error::DecompressLimit { limit: 1000, .. })
        ));
        sink.finish();
        assert_eq!(out.len(), 1000);
        assert!(out.capacity() <= 1001, "capacity {}", out.capacity());
    }

    #[test]
    fn drop_without_finish_restores_length() {
        let mut out = b"keep".to_vec();
        {
            let mut sink = BoundedOut::new(&mut out, 10, 0, Compression::Gzip);
            sink.push(b"abc").unwrap();
        }
        assert_eq!(out, b"keep");
    }
}
