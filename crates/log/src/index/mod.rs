//! The indexes of a segment, in Kafka's file formats.
//!
//! The offset and time indexes are sparse arrays of fixed-size big-endian entries, preallocated
//! to `segment.index.bytes` (rounded down to a whole entry) while their segment is active and
//! trimmed to their entries when it rolls or the log closes, as Kafka's `AbstractIndex` does. An
//! index that was not trimmed (an unclean shutdown) has a zero-filled tail; recovery rebuilds it
//! from the log. Lookups binary-search the file with positioned reads; only the entry count and
//! the last entry are kept in memory.
//!
//! The transaction index ([`txn`]) lists aborted transactions; it grows by one entry per abort.

pub(crate) mod offset;
pub(crate) mod rules;
pub(crate) mod time;
pub(crate) mod txn;

pub(crate) use offset::OffsetIndex;
pub(crate) use time::TimeIndex;
pub(crate) use txn::TxnIndex;

use crate::error::{Error, Result};
use crate::storage::{Storage, StorageFile};
use std::path::{Path, PathBuf};

/// A file of fixed-size entries.
#[derive(Debug)]
pub(crate) struct IndexFile {
    path: PathBuf,
    file: Box<dyn StorageFile>,
    entry_size: u64,
    /// Entries written (the rest of the file is preallocated space).
    entries: u64,
    /// Length of the file.
    len: u64,
}

impl IndexFile {
    /// Creates (or truncates) the file and preallocates `max_bytes` rounded down to whole entries.
    pub(crate) fn create(
        storage: &dyn Storage,
        path: &Path,
        entry_size: u64,
        max_bytes: u64,
    ) -> Result<Self> {
        let file = storage
            .create(path)
            .map_err(|e| Error::io("create", path, e))?;
        let mut index = IndexFile {
            path: path.to_path_buf(),
            file,
            entry_size,
            entries: 0,
            len: 0,
        };
        index.resize(max_bytes)?;
        Ok(index)
    }

    /// Opens an existing file; every whole entry in it counts (as Kafka's `AbstractIndex` does),
    /// so an untrimmed file needs [`IndexFile::reset`] or a sanity check.
    pub(crate) fn open(storage: &dyn Storage, path: &Path, entry_size: u64) -> Result<Self> {
        let file = storage.open(path).map_err(|e| Error::io("open", path, e))?;
        let len = file.len().map_err(|e| Error::io("read", path, e))?;
        Ok(IndexFile {
            path: path.to_path_buf(),
            file,
            entry_size,
            entries: len / entry_size,
            len,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn entries(&self) -> u64 {
        self.entries
    }

    /// Entries the file has room for.
    pub(crate) fn max_entries(&self) -> u64 {
        self.len / self.entry_size
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Reads entry `n` into `buf` (`entry_size` bytes).
    pub(crate) fn read_entry(&self, n: u64, buf: &mut [u8]) -> Result<()> {
        let pos = n * self.entry_size;
        self.file
            .read_exact_at(buf, pos)
            .map_err(|e| Error::io("read", &self.path, e))
    }

    /// Writes the next entry, growing the file by one entry when it is full.
    pub(crate) fn push(&mut self, entry: &[u8]) -> Result<()> {
        let pos = self.entries * self.entry_size;
        self.file
            .write_at(entry, pos)
            .map_err(|e| Error::io("write", &self.path, e))?;
        self.entries += 1;
        self.len = self.len.max(pos + self.entry_size);
        Ok(())
    }

    /// Sets the file length to `bytes` rounded down to whole entries, dropping entries beyond it.
    pub(crate) fn resize(&mut self, bytes: u64) -> Result<()> {
        let rounded = bytes / self.entry_size * self.entry_size;
        if rounded != self.len {
            self.file
                .set_len(rounded)
                .map_err(|e| Error::io("write", &self.path, e))?;
            self.len = rounded;
        }
        self.entries = self.entries.min(self.max_entries());
        Ok(())
    }

    /// Shrinks the file to its entries.
    pub(crate) fn trim(&mut self) -> Result<()> {
        self.resize(self.entries * self.entry_size)
    }

    /// Drops every entry and preallocates `max_bytes` of zeros.
    pub(crate) fn reset(&mut self, max_bytes: u64) -> Result<()> {
        self.entries = 0;
        self.file
            .set_len(0)
            .map_err(|e| Error::io("write", &self.path, e))?;
        self.len = 0;
        self.resize(max_bytes)
    }

    pub(crate) fn sync(&self) -> Result<()> {
        self.file
            .sync()
            .map_err(|e| Error::io("sync", &self.path, e))
    }

    pub(crate) fn corrupt(&self, reason: impl Into<String>) -> Error {
        Error::CorruptFile {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }
}

/// What sets the offset and time indexes apart; the rest is [`SparseIndex`].
pub(crate) trait IndexKind {
    /// Size of one entry.
    const ENTRY_SIZE: u64;
    /// An entry as callers see it, absolute offsets.
    type Entry;
    /// What is kept of the last entry in memory.
    type Last: Copy + std::fmt::Debug;
    /// Reads and decodes entry `n` of `file`.
    fn read(file: &IndexFile, n: u64, base_offset: i64) -> Result<Self::Entry>;
    /// [`Self::Last`] of an index whose last entry is `entry`, or of an empty one (`None`).
    fn last(entry: Option<Self::Entry>, base_offset: i64) -> Self::Last;
}

/// An offset or time index: a sparse array of fixed-size entries in an [`IndexFile`], with
/// the last entry kept in memory.
#[derive(Debug)]
pub(crate) struct SparseIndex<K: IndexKind> {
    file: IndexFile,
    base_offset: i64,
    last: K::Last,
}

impl<K: IndexKind> SparseIndex<K> {
    pub(crate) fn create(
        storage: &dyn Storage,
        path: &Path,
        base_offset: i64,
        max_bytes: u64,
    ) -> Result<Self> {
        let file = IndexFile::create(storage, path, K::ENTRY_SIZE, max_bytes)?;
        Ok(SparseIndex {
            file,
            base_offset,
            last: K::last(None, base_offset),
        })
    }

    pub(crate) fn open(storage: &dyn Storage, path: &Path, base_offset: i64) -> Result<Self> {
        let file = IndexFile::open(storage, path, K::ENTRY_SIZE)?;
        let mut index = SparseIndex {
            file,
            base_offset,
            last: K::last(None, base_offset),
        };
        index.reload_last()?;
        Ok(index)
    }

    /// Opens the index at `path` if it exists, else creates it with `max_bytes` preallocated.
    /// Returns it and whether it was missing (its segment then needs recovery).
    pub(crate) fn open_or_create(
        storage: &dyn Storage,
        path: &Path,
        base_offset: i64,
        max_bytes: u64,
    ) -> Result<(Self, bool)> {
        if storage
            .exists(path)
            .map_err(|e| Error::io("open", path, e))?
        {
            Ok((Self::open(storage, path, base_offset)?, false))
        } else {
            Ok((Self::create(storage, path, base_offset, max_bytes)?, true))
        }
    }

    fn reload_last(&mut self) -> Result<()> {
        let n = self.file.entries();
        let last = if n == 0 {
            None
        } else {
            Some(self.entry(n - 1)?)
        };
        self.last = K::last(last, self.base_offset);
        Ok(())
    }

    pub(crate) fn path(&self) -> &Path {
        self.file.path()
    }

    pub(crate) fn entries(&self) -> u64 {
        self.file.entries()
    }

    /// Entry `n`, with absolute offsets.
    pub(crate) fn entry(&self, n: u64) -> Result<K::Entry> {
        K::read(&self.file, n, self.base_offset)
    }

    /// The last entry as kept in memory.
    pub(crate) fn last_entry(&self) -> K::Last {
        self.last
    }

    /// The first check of `sanity_check`: the file holds whole entries.
    fn check_whole_entries(&self) -> std::result::Result<(), String> {
        if self.file.len().is_multiple_of(K::ENTRY_SIZE) {
            Ok(())
        } else {
            Err(format!(
                "length {} is not a multiple of {}",
                self.file.len(),
                K::ENTRY_SIZE
            ))
        }
    }

    pub(crate) fn trim(&mut self) -> Result<()> {
        self.file.trim()
    }

    pub(crate) fn resize(&mut self, max_bytes: u64) -> Result<()> {
        self.file.resize(max_bytes)?;
        self.reload_last()
    }

    pub(crate) fn reset(&mut self, max_bytes: u64) -> Result<()> {
        self.file.reset(max_bytes)?;
        self.last = K::last(None, self.base_offset);
        Ok(())
    }

    pub(crate) fn sync(&self) -> Result<()> {
        self.file.sync()
    }

    pub(crate) fn corrupt(&self, reason: impl Into<String>) -> Error {
        self.file.corrupt(reason)
    }
}

/// Index of the last entry `e` in `0..n` with `key(e) <= target`, `None` when even the first
/// entry is above it. `key` reads an entry and may fail.
pub(crate) fn search<F>(n: u64, target: i64, mut key: F) -> Result<Option<u64>>
where
    F: FnMut(u64) -> Result<i64>,
{
    if n == 0 || key(0)? > target {
        return Ok(None);
    }
    let (mut lo, mut hi) = (0u64, n - 1);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if key(mid)? <= target {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok(Some(lo))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_finds_greatest_lower_bound() {
        let keys = [10i64, 20, 30, 40];
        let f = |i: u64| Ok(keys[i as usize]);
        assert_eq!(search(4, 5, f).unwrap(), None);
        assert_eq!(search(4, 10, f).unwrap(), Some(0));
        assert_eq!(search(4, 29, f).unwrap(), Some(1));
        assert_eq!(search(4, 40, f).unwrap(), Some(3));
        assert_eq!(search(4, 99, f).unwrap(), Some(3));
        assert_eq!(search(0, 99, f).unwrap(), None);
    }
}
