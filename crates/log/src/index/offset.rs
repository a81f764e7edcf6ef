//! The offset index (`.index`): Kafka's `OffsetIndex`.
//!
//! ```text
//! entry (8 bytes): relative offset i32 BE | position i32 BE
//! ```
//!
//! An entry `(offset - base offset, position)` says the batch starting at byte `position` of
//! the segment ends at `offset`. Entries are sparse (one per `index.interval.bytes` of batches)
//! and strictly increasing in both fields. A lookup returns the greatest entry at or below the
//! target; the reader then scans forward from its position.

use super::{search, IndexFile, IndexKind, SparseIndex};
use crate::error::Result;

/// Size of one entry.
pub const ENTRY_SIZE: u64 = 8;

/// The offset index's entries: `(absolute offset, position)`; the last one is kept as such,
/// `None` when there is none.
#[derive(Debug)]
pub(crate) enum Offsets {}

/// The offset index of a segment.
pub(crate) type OffsetIndex = SparseIndex<Offsets>;

impl IndexKind for Offsets {
    const ENTRY_SIZE: u64 = ENTRY_SIZE;
    type Entry = (i64, u64);
    type Last = Option<(i64, u64)>;

    /// Negative stored values come back as such (positions wrap to huge numbers) and fail the
    /// sanity checks.
    fn read(file: &IndexFile, n: u64, base_offset: i64) -> Result<(i64, u64)> {
        let mut b = [0u8; 8];
        file.read_entry(n, &mut b)?;
        let (rel, pos) = decode_entry(&b);
        Ok((base_offset + i64::from(rel), pos as u32 as u64))
    }

    fn last(entry: Option<(i64, u64)>, _base_offset: i64) -> Option<(i64, u64)> {
        entry
    }
}

/// Decodes one entry (relative offset, position) from the first 8 bytes of `b`; missing bytes
/// read as zeros.
pub fn decode_entry(b: &[u8]) -> (i32, i32) {
    let mut e = [0u8; ENTRY_SIZE as usize];
    let n = b.len().min(e.len());
    e[..n].copy_from_slice(&b[..n]);
    let rel = i32::from_be_bytes([e[0], e[1], e[2], e[3]]);
    let pos = i32::from_be_bytes([e[4], e[5], e[6], e[7]]);
    (rel, pos)
}

impl OffsetIndex {
    /// Kafka's `isFull`: no room for another entry.
    pub(crate) fn is_full(&self) -> bool {
        self.file.entries() >= self.file.max_entries()
    }

    /// Whether `offset` can be stored relative to the base offset (Kafka's `canAppendOffset`).
    pub(crate) fn can_append_offset(&self, offset: i64) -> bool {
        let rel = offset.wrapping_sub(self.base_offset);
        offset >= self.base_offset && rel <= i64::from(i32::MAX)
    }

    /// Appends an entry; the caller checks [`Self::is_full`] and that offsets increase.
    pub(crate) fn append(&mut self, offset: i64, position: u64) -> Result<()> {
        if let Some((last, _)) = self.last {
            if offset <= last {
                return Err(self.file.corrupt(format!(
                    "offset index entry {offset} does not follow {last}"
                )));
            }
        }
        let (Ok(rel), Ok(pos)) = (
            i32::try_from(offset - self.base_offset),
            i32::try_from(position),
        ) else {
            return Err(self.file.corrupt(format!(
                "offset {offset} at position {position} cannot be indexed from base {}",
                self.base_offset
            )));
        };
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&rel.to_be_bytes());
        b[4..].copy_from_slice(&pos.to_be_bytes());
        self.file.push(&b)?;
        self.last = Some((offset, position));
        Ok(())
    }

    /// The greatest entry with offset <= `target`, or `(base offset, 0)`.
    pub(crate) fn lookup(&self, target: i64) -> Result<(i64, u64)> {
        if let Some((o, p)) = self.last {
            if o <= target {
                return Ok((o, p));
            }
        }
        let found = search(self.entries(), target, |n| self.entry(n).map(|e| e.0))?;
        match found {
            Some(n) => self.entry(n),
            None => Ok((self.base_offset, 0)),
        }
    }

    /// Quick checks on open: whole entries, and a last entry that lies inside the segment and
    /// is not part of a zero-filled preallocated tail.
    pub(crate) fn sanity_check(&self, log_size: u64) -> std::result::Result<(), String> {
        self.check_whole_entries()?;
        let n = self.entries();
        if let Some((offset, position)) = self.last {
            if offset < self.base_offset {
                return Err(format!("last offset {offset} is below the base offset"));
            }
            if position >= log_size {
                return Err(format!(
                    "last position {position} is beyond the segment's {log_size} bytes"
                ));
            }
            if n >= 2 && offset == self.base_offset && position == 0 {
                return Err("ends in zero entries (an untrimmed preallocated index)".into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{MemStorage, Storage};
    use std::path::Path;

    #[test]
    fn append_lookup_trim_reopen() {
        let s = MemStorage::new();
        s.create_dir_all(Path::new("/d")).unwrap();
        let p = Path::new("/d/00000000000000000100.index");
        let mut idx = OffsetIndex::create(&s, p, 100, 8 * 4 + 5).unwrap();
        assert_eq!(s.file_bytes(p).unwrap().len(), 32);
        assert_eq!(idx.lookup(150).unwrap(), (100, 0));
        idx.append(110, 1000).unwrap();
        idx.append(120, 2000).unwrap();
        idx.append(130, 3000).unwrap();
        assert!(idx.append(130, 4000).is_err());
        assert!(!idx.is_full());
        assert_eq!(idx.lookup(105).unwrap(), (100, 0));
        assert_eq!(idx.lookup(110).unwrap(), (110, 1000));
        assert_eq!(idx.lookup(125).unwrap(), (120, 2000));
        assert_eq!(idx.lookup(999).unwrap(), (130, 3000));
        idx.append(140, 4000).unwrap();
        assert!(idx.is_full());
        // An untrimmed index with a zero tail fails the sanity check once reopened.
        let mut idx2 = OffsetIndex::create(&s, Path::new("/d/x.index"), 100, 32).unwrap();
        idx2.append(110, 10).unwrap();
        let reopened = OffsetIndex::open(&s, Path::new("/d/x.index"), 100).unwrap();
        assert_eq!(reopened.entries(), 4);
        assert!(reopened.sanity_check(100).is_err());
        idx2.trim().unwrap();
        let reopened = OffsetIndex::open(&s, Path::new("/d/x.index"), 100).unwrap();
        assert_eq!(reopened.entries(), 1);
        reopened.sanity_check(100).unwrap();
        assert!(reopened.sanity_check(10).is_err());
        assert_eq!(idx.last_entry(), Some((140, 4000)));
        assert_eq!(&s.file_bytes(p).unwrap()[..8], &[0, 0, 0, 10, 0, 0, 3, 232]);
    }
}
