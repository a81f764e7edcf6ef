//! The leader epoch cache and its `leader-epoch-checkpoint` file (Kafka's
//! `LeaderEpochFileCache`): which leader epoch started at which offset.
//!
//! Appends of v2 batches add `(epoch, base offset)` when the epoch is new; an append of a v0/v1
//! batch clears the cache, as Kafka does during a message format downgrade. Truncation drops
//! entries past the new end; retention moves the first entry up to the new log start offset.

use crate::error::Result;
use crate::files::{self, LEADER_EPOCH_CHECKPOINT_FILE};
use crate::storage::Storage;
use std::path::Path;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct LeaderEpochCache {
    /// `(epoch, start offset)`, both strictly increasing.
    entries: Vec<(i32, i64)>,
}

impl LeaderEpochCache {
    /// Loads the checkpoint; a missing or unreadable file gives an empty cache (Kafka starts
    /// empty too), reported as `Err` only for I/O errors.
    pub(crate) fn load(storage: &dyn Storage, dir: &Path) -> Result<(Self, bool)> {
        let path = dir.join(LEADER_EPOCH_CHECKPOINT_FILE);
        match files::read_small_file(storage, &path)? {
            None => Ok((Self::default(), true)),
            Some(bytes) => match files::parse_epoch_checkpoint(&path, &bytes) {
                Ok(entries) => Ok((LeaderEpochCache { entries }, true)),
                Err(_) => Ok((Self::default(), false)),
            },
        }
    }

    pub(crate) fn store(&self, storage: &dyn Storage, dir: &Path) -> Result<()> {
        let text = files::format_epoch_checkpoint(&self.entries);
        files::write_atomic(storage, dir, LEADER_EPOCH_CHECKPOINT_FILE, text.as_bytes())
    }

    pub(crate) fn entries(&self) -> &[(i32, i64)] {
        &self.entries
    }

    pub(crate) fn latest_epoch(&self) -> Option<i32> {
        self.entries.last().map(|e| e.0)
    }

    /// Kafka's `assign`: records that `epoch` starts at `start_offset`. Entries that conflict
    /// (an epoch at or above it, or a start offset at or above it) are dropped first. Returns
    /// whether the cache changed.
    pub(crate) fn assign(&mut self, epoch: i32, start_offset: i64) -> bool {
        if epoch < 0 || start_offset < 0 {
            return false;
        }
        if let Some(&(e, s)) = self.entries.last() {
            if e == epoch && s <= start_offset {
                return false;
            }
        }
        self.entries.retain(|&(e, s)| e < epoch && s < start_offset);
        self.entries.push((epoch, start_offset));
        true
    }

    /// Drops everything. Returns whether the cache changed.
    pub(crate) fn clear(&mut self) -> bool {
        let changed = !self.entries.is_empty();
        self.entries.clear();
        changed
    }

    /// Drops entries starting at or after `end_offset`. Returns whether the cache changed.
    pub(crate) fn truncate_from_end(&mut self, end_offset: i64) -> bool {
        let before = self.entries.len();
        self.entries.retain(|&(_, s)| s < end_offset);
        before != self.entries.len()
    }

    /// Kafka's `truncateFromStart`: entries entirely before `start_offset` go; the last of them
    /// is kept with its start moved up to `start_offset`. Returns whether the cache changed.
    pub(crate) fn truncate_from_start(&mut self, start_offset: i64) -> bool {
        let below = self
            .entries
            .iter()
            .filter(|&&(_, s)| s < start_offset)
            .count();
        if below == 0 {
            return false;
        }
        let (epoch, _) = self.entries[below - 1];
        self.entries.drain(..below);
        if self.entries.first().map(|e| e.1) != Some(start_offset) {
            self.entries.insert(0, (epoch, start_offset));
        }
        true
    }
}

/// The rule that partition leader epochs never go down along a partition's log, shared by
/// `krec verify` (which reports a fall) and salvage (which keeps the batch, as Kafka's recovery
/// does, and lists the fall): one v2 entry's stored epoch `epoch`, whose last offset is
/// `last_offset`, after `prev`, the epoch and last offset of the last entry with one (updated
/// here). Returns `prev` as it was when `epoch` is below it: the fall.
///
/// Epoch -1 ("none", written by some tools) is skipped; another negative one is a fall when it
/// follows an epoch, and is never followed. v0/v1 entries have no epoch and are not passed.
pub(crate) fn epoch_falls(
    prev: &mut Option<(i32, i64)>,
    epoch: i32,
    last_offset: i64,
) -> Option<(i32, i64)> {
    if epoch == -1 {
        return None;
    }
    let fall = prev.filter(|(p, _)| epoch < *p);
    if epoch >= 0 {
        *prev = Some((epoch, last_offset));
    }
    fall
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assign_truncate() {
        let mut c = LeaderEpochCache::default();
        assert!(c.assign(0, 0));
        assert!(!c.assign(0, 5));
        assert!(c.assign(2, 10));
        assert!(c.assign(3, 20));
        assert_eq!(c.entries(), &[(0, 0), (2, 10), (3, 20)]);
        assert!(c.truncate_from_start(15));
        assert_eq!(c.entries(), &[(2, 15), (3, 20)]);
        assert!(c.truncate_from_end(20));
        assert_eq!(c.entries(), &[(2, 15)]);
        // A lower epoch at a higher offset replaces the conflicting entries.
        assert!(c.assign(1, 30));
        assert_eq!(c.entries(), &[(1, 30)]);
        assert!(c.clear());
        assert_eq!(c.latest_epoch(), None);
    }

    #[test]
    fn an_epoch_falls_below_the_last_one_minus_one_aside() {
        let mut prev = None;
        assert_eq!(epoch_falls(&mut prev, 3, 0), None);
        assert_eq!(epoch_falls(&mut prev, 5, 1), None);
        assert_eq!(epoch_falls(&mut prev, -1, 2), None, "-1 is skipped");
        assert_eq!(epoch_falls(&mut prev, 4, 3), Some((5, 1)));
        assert_eq!(epoch_falls(&mut prev, 4, 4), None, "once");
        assert_eq!(epoch_falls(&mut prev, -7, 5), Some((4, 4)));
        assert_eq!(prev, Some((4, 4)), "a negative epoch is never followed");
    }
}
