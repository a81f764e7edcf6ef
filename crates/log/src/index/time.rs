//! The time index (`.timeindex`): Kafka's `TimeIndex`.
//!
//! ```text
//! entry (12 bytes): timestamp i64 BE | relative offset i32 BE
//! ```
//!
//! An entry `(t, offset - base offset)` says the largest timestamp of the batches up to the one
//! ending at `offset` is `t`, and `offset` ends the batch where it first appeared. Entries are
//! added at the offset index's cadence when the running maximum grew, and once more when the
//! segment stops being active; timestamps strictly increase. A segment with only magic 0 data
//! has an empty time index. One slot is kept free for the final entry, so the index counts as
//! full one entry early.

use super::{search, IndexFile, IndexKind, SparseIndex};
use crate::error::Result;

/// Size of one entry.
pub const ENTRY_SIZE: u64 = 12;

/// Decodes one entry (timestamp, relative offset) from the first 12 bytes of `b`; missing bytes
/// read as zeros.
pub fn decode_entry(b: &[u8]) -> (i64, i32) {
    let mut e = [0u8; ENTRY_SIZE as usize];
    let n = b.len().min(e.len());
    e[..n].copy_from_slice(&b[..n]);
    let ts = i64::from_be_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]);
    let rel = i32::from_be_bytes([e[8], e[9], e[10], e[11]]);
    (ts, rel)
}

/// The time index's entries: `(timestamp, absolute offset)`; the last one is kept as such, or
/// as Kafka's `(-1, base offset)` when there is none.
#[derive(Debug)]
pub(crate) enum Times {}

/// The time index of a segment.
pub(crate) type TimeIndex = SparseIndex<Times>;

impl IndexKind for Times {
    const ENTRY_SIZE: u64 = ENTRY_SIZE;
    type Entry = (i64, i64);
    type Last = (i64, i64);

    fn read(file: &IndexFile, n: u64, base_offset: i64) -> Result<(i64, i64)> {
        let mut b = [0u8; 12];
        file.read_entry(n, &mut b)?;
        let (ts, rel) = decode_entry(&b);
        Ok((ts, base_offset + i64::from(rel)))
    }

    fn last(entry: Option<(i64, i64)>, base_offset: i64) -> (i64, i64) {
        entry.unwrap_or((-1, base_offset))
    }
}

impl TimeIndex {
    /// Kafka's `isFull`: one slot is reserved for the entry written when the segment rolls.
    pub(crate) fn is_full(&self) -> bool {
        self.file.entries() >= self.file.max_entries().saturating_sub(1)
    }

    /// Appends `(timestamp, offset)` if `timestamp` is above the last entry's (Kafka's
    /// `maybeAppend`). Unless `final_entry`, nothing is written to a full index.
    pub(crate) fn maybe_append(
        &mut self,
        timestamp: i64,
        offset: i64,
        final_entry: bool,
    ) -> Result<()> {
        if !final_entry && self.is_full() {
            return Ok(());
        }
        let (last_ts, last_offset) = self.last;
        if self.entries() != 0 && offset < last_offset {
            return Err(self.file.corrupt(format!(
                "time index offset {offset} is below the last one, {last_offset}"
            )));
        }
        if self.entries() != 0 && timestamp < last_ts {
            return Err(self.file.corrupt(format!(
                "time index timestamp {timestamp} is below the last one, {last_ts}"
            )));
        }
        if timestamp > last_ts {
            let Ok(rel) = i32::try_from(offset - self.base_offset) else {
                return Err(self.file.corrupt(format!(
                    "offset {offset} cannot be indexed from base {}",
                    self.base_offset
                )));
            };
            let mut b = [0u8; 12];
            b[..8].copy_from_slice(&timestamp.to_be_bytes());
            b[8..].copy_from_slice(&rel.to_be_bytes());
            self.file.push(&b)?;
            self.last = (timestamp, offset);
        }
        Ok(())
    }

    /// The greatest entry with timestamp <= `target`, or `(-1, base offset)`.
    pub(crate) fn lookup(&self, target: i64) -> Result<(i64, i64)> {
        if self.entries() > 0 && self.last.0 <= target {
            return Ok(self.last);
        }
        match search(self.entries(), target, |n| self.entry(n).map(|e| e.0))? {
            Some(n) => self.entry(n),
            None => Ok((-1, self.base_offset)),
        }
    }

    /// Quick checks on open: whole entries, a last entry inside the segment's offsets, and no
    /// zero-filled tail.
    pub(crate) fn sanity_check(
        &self,
        next_offset_bound: Option<i64>,
    ) -> std::result::Result<(), String> {
        self.check_whole_entries()?;
        let n = self.entries();
        if n == 0 {
            return Ok(());
        }
        let (ts, offset) = self.last;
        if offset < self.base_offset {
            return Err(format!("last offset {offset} is below the base offset"));
        }
        if let Some(bound) = next_offset_bound {
            if offset >= bound {
                return Err(format!("last offset {offset} is beyond the segment"));
            }
        }
        if n >= 2 {
            let (first_ts, _) = self.entry(0).map_err(|e| e.to_string())?;
            if ts < first_ts || (ts == 0 && offset == self.base_offset) {
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
    fn maybe_append_and_lookup() {
        let s = MemStorage::new();
        s.create_dir_all(Path::new("/d")).unwrap();
        let p = Path::new("/d/00000000000000000010.timeindex");
        let mut idx = TimeIndex::create(&s, p, 10, 12 * 4).unwrap();
        assert_eq!(idx.lookup(5).unwrap(), (-1, 10));
        idx.maybe_append(-1, 11, false).unwrap(); // no timestamp: nothing written
        assert_eq!(idx.entries(), 0);
        idx.maybe_append(100, 12, false).unwrap();
        idx.maybe_append(100, 13, false).unwrap(); // not larger: skipped
        idx.maybe_append(200, 15, false).unwrap();
        assert_eq!(idx.entries(), 2);
        assert!(idx.maybe_append(150, 16, false).is_err());
        assert!(idx.maybe_append(300, 14, false).is_err());
        idx.maybe_append(300, 17, false).unwrap();
        assert!(idx.is_full());
        idx.maybe_append(400, 18, false).unwrap(); // full: skipped
        assert_eq!(idx.entries(), 3);
        idx.maybe_append(400, 18, true).unwrap(); // the final entry uses the reserved slot
        assert_eq!(idx.entries(), 4);
        assert_eq!(idx.lookup(99).unwrap(), (-1, 10));
        assert_eq!(idx.lookup(100).unwrap(), (100, 12));
        assert_eq!(idx.lookup(250).unwrap(), (200, 15));
        assert_eq!(idx.lookup(1000).unwrap(), (400, 18));
        assert_eq!(
            &s.file_bytes(p).unwrap()[..12],
            &[0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 2]
        );
    }
}
