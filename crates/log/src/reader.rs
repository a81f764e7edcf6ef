//! Sequential reading of the entries of a segment file: the codec's
//! [`Streamer`](krecords_codec::read::Streamer) over positioned reads of a [`StorageFile`].
//!
//! The streamer reads a window of the file (growing it for batches larger than the window, never
//! past the range's end), slices it by each entry's size field and hands the entry to the codec's
//! `Entries` for its structural checks, so a segment is read with one positioned read per window
//! rather than one per batch. It stops at the end, at a truncated tail, or at the first entry that
//! cannot be parsed, and says which ([`Step`](krecords_codec::read::Step)).

use crate::storage::StorageFile;
use krecords_codec::read::{Fill, Streamer};
use std::io;

/// Window size for scans that read everything (recovery, fetches).
pub(crate) const SCAN_WINDOW: usize = 1 << 20;
/// Window size for short scans from an index entry.
pub(crate) const SEEK_WINDOW: usize = 16 << 10;

/// The bytes `[.., end)` of a segment file, read at positions.
#[derive(Debug)]
pub(crate) struct FileRange<'f> {
    file: &'f dyn StorageFile,
    end: u64,
}

impl Fill for FileRange<'_> {
    fn fill_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        let n = usize::try_from(self.end.saturating_sub(pos))
            .unwrap_or(usize::MAX)
            .min(buf.len());
        self.file.read_exact_at(&mut buf[..n], pos)?;
        Ok(n)
    }

    fn len_from(&self, pos: u64) -> Option<u64> {
        Some(self.end.saturating_sub(pos))
    }
}

/// A reader of the entries in `[start, end)` of a segment file.
pub(crate) type SegmentReader<'f> = Streamer<FileRange<'f>>;

/// Reads the entries in `[start, end)` of `file`, `window` bytes at a time. Entries are bounded
/// by the range only (a segment's entries were validated when appended).
pub(crate) fn segment_reader(
    file: &dyn StorageFile,
    start: u64,
    end: u64,
    window: usize,
) -> SegmentReader<'_> {
    Streamer::new(FileRange { file, end }, start, i32::MAX as usize).read_size(window)
}
