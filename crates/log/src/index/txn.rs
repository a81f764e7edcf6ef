//! The transaction index (`.txnindex`): Kafka's `TransactionIndex`, entries in the format of
//! [`crate::transaction::AbortedTxn`].
//!
//! Unlike the offset and time indexes it is not preallocated: the file is created by the first
//! entry, and a segment with no aborted transaction has none (as current Kafka). Entries are
//! few (one per aborted transaction), so they are kept in memory as well; the file is only
//! written. After an unclean shutdown recovery resets the index of every segment it scans and
//! the producer state replay writes the entries again.

use crate::error::{Error, Result};
use crate::files;
use crate::storage::{Storage, StorageFile};
use crate::transaction::{parse_txn_index, AbortedTxn, ABORTED_TXN_SIZE};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub(crate) struct TxnIndex {
    path: PathBuf,
    base_offset: i64,
    /// Open once the file exists.
    file: Option<Box<dyn StorageFile>>,
    /// Every entry of the file, in order.
    entries: Vec<AbortedTxn>,
    /// Set by [`TxnIndex::reset`]: the entries must be written again by a producer state replay.
    needs_rebuild: bool,
}

impl TxnIndex {
    /// An index with no file yet (a new segment).
    pub(crate) fn new(path: &Path, base_offset: i64) -> Self {
        TxnIndex {
            path: path.to_path_buf(),
            base_offset,
            file: None,
            entries: Vec::new(),
            needs_rebuild: false,
        }
    }

    /// Opens the index of an existing segment. Returns it and, when the file fails Kafka's sanity
    /// check (or is not whole entries), why: the segment then needs recovery.
    pub(crate) fn open(
        storage: &dyn Storage,
        path: &Path,
        base_offset: i64,
    ) -> Result<(Self, Option<String>)> {
        let mut index = TxnIndex::new(path, base_offset);
        let Some((file, bytes)) = files::open_small_file(storage, path)? else {
            return Ok((index, None));
        };
        index.file = Some(file);
        let problem = match parse_txn_index(path, &bytes) {
            Ok(entries) => {
                index.entries = entries;
                index.sanity_check().err()
            }
            Err(e) => Some(e.to_string()),
        };
        Ok((index, problem))
    }

    /// Kafka's `sanityCheck` (every last offset at or above the base offset), plus increasing
    /// last offsets.
    fn sanity_check(&self) -> std::result::Result<(), String> {
        let mut prev: Option<i64> = None;
        for (n, t) in self.entries.iter().enumerate() {
            if t.last_offset < self.base_offset {
                return Err(format!(
                    "entry {n}: last offset {} is below the base offset {}",
                    t.last_offset, self.base_offset
                ));
            }
            if prev.is_some_and(|p| t.last_offset <= p) {
                return Err(format!(
                    "entry {n}: last offset {} does not increase",
                    t.last_offset
                ));
            }
            prev = Some(t.last_offset);
        }
        Ok(())
    }

    pub(crate) fn entries(&self) -> &[AbortedTxn] {
        &self.entries
    }

    pub(crate) fn needs_rebuild(&self) -> bool {
        self.needs_rebuild
    }

    /// Appends an entry, creating the file if needed (Kafka's `append`: last offsets must
    /// increase).
    pub(crate) fn append(&mut self, storage: &dyn Storage, txn: AbortedTxn) -> Result<()> {
        if let Some(last) = self.entries.last() {
            if txn.last_offset <= last.last_offset {
                return Err(Error::CorruptFile {
                    path: self.path.clone(),
                    reason: format!(
                        "the last offset of appended transactions must increase, but {} is not greater than {}",
                        txn.last_offset, last.last_offset
                    ),
                });
            }
        }
        if self.file.is_none() {
            let f = storage
                .create(&self.path)
                .map_err(|e| Error::io("create", &self.path, e))?;
            self.file = Some(f);
        }
        let pos = (self.entries.len() * ABORTED_TXN_SIZE) as u64;
        if let Some(f) = &self.file {
            f.write_at(&txn.to_bytes(), pos)
                .map_err(|e| Error::io("write", &self.path, e))?;
        }
        self.entries.push(txn);
        Ok(())
    }

    /// Kafka's `reset`: drops every entry (the file, if any, is truncated to 0) and marks the
    /// index for a rebuild.
    pub(crate) fn reset(&mut self) -> Result<()> {
        if let Some(f) = &self.file {
            f.set_len(0)
                .map_err(|e| Error::io("truncate", &self.path, e))?;
        }
        self.entries.clear();
        self.needs_rebuild = true;
        Ok(())
    }

    /// Marks the rebuild done.
    pub(crate) fn rebuilt(&mut self) {
        self.needs_rebuild = false;
    }

    pub(crate) fn sync(&self) -> Result<()> {
        match &self.file {
            Some(f) => f.sync().map_err(|e| Error::io("sync", &self.path, e)),
            None => Ok(()),
        }
    }

    /// Kafka's `collectAbortedTxns`: the entries overlapping `[fetch_offset, upper_bound)`, and
    /// whether the search is complete (an entry's last stable offset reached `upper_bound`).
    pub(crate) fn collect(&self, fetch_offset: i64, upper_bound: i64) -> (Vec<AbortedTxn>, bool) {
        let mut out = Vec::new();
        for t in &self.entries {
            if t.last_offset >= fetch_offset && t.first_offset < upper_bound {
                out.push(*t);
            }
            if t.last_stable_offset >= upper_bound {
                return (out, true);
            }
        }
        (out, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemStorage;

    fn t(first: i64, last: i64, lso: i64) -> AbortedTxn {
        AbortedTxn {
            producer_id: 1,
            first_offset: first,
            last_offset: last,
            last_stable_offset: lso,
        }
    }

    #[test]
    fn lazy_file_append_reopen_reset() {
        let s = MemStorage::new();
        s.create_dir_all(Path::new("/d")).unwrap();
        let p = Path::new("/d/00000000000000000010.txnindex");
        let mut idx = TxnIndex::new(p, 10);
        assert!(s.file_bytes(p).is_none(), "no file until the first entry");
        idx.append(&s, t(5, 12, 13)).unwrap();
        idx.append(&s, t(11, 20, 14)).unwrap();
        assert!(idx.append(&s, t(15, 20, 21)).is_err());
        assert_eq!(s.file_bytes(p).unwrap().len(), 68);
        let (re, problem) = TxnIndex::open(&s, p, 10).unwrap();
        assert_eq!(problem, None);
        assert_eq!(re.entries(), &[t(5, 12, 13), t(11, 20, 14)]);
        assert_eq!(re.collect(13, 30), (vec![t(11, 20, 14)], false));
        assert_eq!(re.collect(0, 14), (vec![t(5, 12, 13), t(11, 20, 14)], true));
        assert_eq!(re.collect(0, 13), (vec![t(5, 12, 13)], true));
        // Below the base offset: Kafka's sanity check fails.
        let (_, problem) = TxnIndex::open(&s, p, 15).unwrap();
        assert!(problem.unwrap().contains("below the base offset"));
        idx.reset().unwrap();
        assert!(idx.needs_rebuild());
        assert_eq!(s.file_bytes(p).unwrap().len(), 0);
        let (missing, problem) =
            TxnIndex::open(&s, Path::new("/d/00000000000000000099.txnindex"), 99).unwrap();
        assert!(problem.is_none() && missing.entries().is_empty());
    }
}
