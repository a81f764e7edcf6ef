//! Sequential reading of the entries of a segment file through a window buffer.
//!
//! [`SegmentReader`] reads a window of the file (growing it for batches larger than the window),
//! slices it by each entry's size field and hands the entry to the codec's [`Entries`] for its
//! structural checks, so a segment is read with one positioned read per window rather than one
//! per batch. It stops at the end, at a truncated tail, or at the first entry that cannot be
//! parsed, and says which.

use crate::storage::StorageFile;
use krecords_codec::read::{Batch, Entries, MIN_ENTRY_SIZE};
use krecords_codec::LOG_OVERHEAD;
use std::io;

/// Window size for scans that read everything (recovery, fetches).
pub(crate) const SCAN_WINDOW: usize = 1 << 20;
/// Window size for short scans from an index entry.
pub(crate) const SEEK_WINDOW: usize = 16 << 10;

/// What [`SegmentReader::next_entry`] found.
#[derive(Debug)]
pub(crate) enum Next<'a> {
    /// A complete entry that parsed; its position is `batch.position()`.
    Batch(Batch<'a>),
    /// The end of the range.
    End,
    /// The range ends inside an entry (a torn write): `bytes` are left from `position`.
    Partial { position: u64, bytes: u64 },
    /// An entry that cannot be parsed.
    Corrupt { position: u64, reason: String },
}

pub(crate) struct SegmentReader<'f> {
    file: &'f dyn StorageFile,
    pos: u64,
    end: u64,
    window: usize,
    buf: Vec<u8>,
    /// File position of `buf[0]`.
    buf_start: u64,
}

impl<'f> SegmentReader<'f> {
    /// Reads the entries in `[start, end)` of `file`.
    pub(crate) fn new(file: &'f dyn StorageFile, start: u64, end: u64, window: usize) -> Self {
        SegmentReader {
            file,
            pos: start,
            end,
            window,
            buf: Vec::new(),
            buf_start: start,
        }
    }

    /// Position of the next entry.
    pub(crate) fn position(&self) -> u64 {
        self.pos
    }

    /// Makes `[pos, pos + n)` available in the buffer.
    fn fill(&mut self, pos: u64, n: usize) -> io::Result<()> {
        let have_start = pos >= self.buf_start;
        let have_end = pos + n as u64 <= self.buf_start + self.buf.len() as u64;
        if have_start && have_end {
            return Ok(());
        }
        let remaining = usize::try_from(self.end - pos).unwrap_or(usize::MAX);
        let len = n.max(self.window).min(remaining);
        self.buf.resize(len, 0);
        self.file.read_exact_at(&mut self.buf, pos)?;
        self.buf_start = pos;
        Ok(())
    }

    /// The next entry.
    pub(crate) fn next_entry(&mut self) -> io::Result<Next<'_>> {
        let pos = self.pos;
        if pos >= self.end {
            return Ok(Next::End);
        }
        let available = self.end - pos;
        if available < LOG_OVERHEAD as u64 {
            return Ok(Next::Partial {
                position: pos,
                bytes: available,
            });
        }
        self.fill(pos, LOG_OVERHEAD)?;
        let off = (pos - self.buf_start) as usize;
        let s = &self.buf[off + 8..off + 12];
        let size = i32::from_be_bytes([s[0], s[1], s[2], s[3]]);
        if size < MIN_ENTRY_SIZE {
            return Ok(Next::Corrupt {
                position: pos,
                reason: format!("entry size {size} is below the minimum {MIN_ENTRY_SIZE}"),
            });
        }
        let total = size as u64 + LOG_OVERHEAD as u64;
        if total > available {
            return Ok(Next::Partial {
                position: pos,
                bytes: available,
            });
        }
        let total = total as usize;
        self.fill(pos, total)?;
        let off = (pos - self.buf_start) as usize;
        let slice = &self.buf[off..off + total];
        let mut entries = Entries::with_base(slice, pos as usize);
        match entries.next_entry() {
            Ok(Some(batch)) => {
                self.pos = pos + total as u64;
                Ok(Next::Batch(batch))
            }
            Ok(None) => Ok(Next::Partial {
                position: pos,
                bytes: available,
            }),
            Err(e) => Ok(Next::Corrupt {
                position: pos,
                reason: e.to_string(),
            }),
        }
    }
}
