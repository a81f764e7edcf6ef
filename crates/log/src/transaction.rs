//! Transactions as the log stores them: the transaction index entry (Kafka's `AbortedTxn`).
//! The aborted-transaction list of a fetch response and the isolation level are the codec's
//! ([`krecords_codec::txn`]), re-exported here.
//!
//! Each segment may have a `<base offset>.txnindex` listing the transactions aborted by a marker
//! written in that segment (a transaction may start in an earlier segment). Kafka's
//! `TransactionIndex` creates the file only when the first entry is written; so does this log.
//!
//! ```text
//! entry (34 bytes, big-endian):
//!   version            i16   0
//!   producer id        i64
//!   first offset       i64   first offset of the aborted transaction
//!   last offset        i64   offset of its ABORT marker
//!   last stable offset i64   the partition's last stable offset once the abort completed
//! ```
//!
//! Entries are in marker order, so their last offsets increase. A read_committed fetch returns,
//! from the segments at and after the fetch offset, every entry whose range overlaps
//! `[fetch offset, upper bound)` and stops at the first entry whose last stable offset reaches
//! the upper bound (Kafka's `TransactionIndex.collectAbortedTxns`): no transaction aborted later
//! can have started before it.

use crate::error::{Error, Result};
pub use krecords_codec::txn::{AbortedTransaction, IsolationLevel};
use serde::Serialize;
use std::path::Path;

/// Size of one transaction index entry (Kafka's `AbortedTxn.TOTAL_SIZE`).
pub const ABORTED_TXN_SIZE: usize = 34;

/// The only entry version (Kafka's `AbortedTxn.CURRENT_VERSION`).
pub const ABORTED_TXN_VERSION: i16 = 0;

/// One entry of a `.txnindex` file: a transaction that was aborted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct AbortedTxn {
    /// The producer id.
    pub producer_id: i64,
    /// Offset of the transaction's first batch.
    pub first_offset: i64,
    /// Offset of the ABORT marker.
    pub last_offset: i64,
    /// The last stable offset right after the abort: the first offset of the earliest
    /// transaction of another producer still open, or `last_offset + 1`.
    pub last_stable_offset: i64,
}

impl AbortedTxn {
    /// The 34 bytes of the entry (version 0).
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_log::transaction::AbortedTxn;
    /// let t = AbortedTxn { producer_id: 7, first_offset: 10, last_offset: 20, last_stable_offset: 21 };
    /// let b = t.to_bytes();
    /// assert_eq!(&b[..2], &[0, 0]);
    /// assert_eq!(AbortedTxn::parse(&b).unwrap(), Some(t));
    /// ```
    pub fn to_bytes(&self) -> [u8; ABORTED_TXN_SIZE] {
        let mut b = [0u8; ABORTED_TXN_SIZE];
        b[0..2].copy_from_slice(&ABORTED_TXN_VERSION.to_be_bytes());
        b[2..10].copy_from_slice(&self.producer_id.to_be_bytes());
        b[10..18].copy_from_slice(&self.first_offset.to_be_bytes());
        b[18..26].copy_from_slice(&self.last_offset.to_be_bytes());
        b[26..34].copy_from_slice(&self.last_stable_offset.to_be_bytes());
        b
    }

    /// Parses one entry from the first 34 bytes of `b`. `Ok(None)` when `b` is shorter.
    ///
    /// # Errors
    ///
    /// A version other than 0, as a message (Kafka fails the read with "Unexpected aborted
    /// transaction version").
    pub fn parse(b: &[u8]) -> std::result::Result<Option<AbortedTxn>, String> {
        let Some(b) = b.get(..ABORTED_TXN_SIZE) else {
            return Ok(None);
        };
        let i64_at = |at: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[at..at + 8]);
            i64::from_be_bytes(x)
        };
        let version = entry_version(b);
        if version != ABORTED_TXN_VERSION {
            return Err(format!(
                "unexpected aborted transaction version {version}, expected {ABORTED_TXN_VERSION}"
            ));
        }
        Ok(Some(AbortedTxn {
            producer_id: i64_at(2),
            first_offset: i64_at(10),
            last_offset: i64_at(18),
            last_stable_offset: i64_at(26),
        }))
    }

    /// The entry as a fetch response lists it (producer id and first offset).
    pub fn as_aborted_transaction(&self) -> AbortedTransaction {
        AbortedTransaction {
            producer_id: self.producer_id,
            first_offset: self.first_offset,
        }
    }
}

/// The version field of an entry (its first two bytes; missing bytes read as zeros).
pub(crate) fn entry_version(b: &[u8]) -> i16 {
    i16::from_be_bytes([
        b.first().copied().unwrap_or(0),
        b.get(1).copied().unwrap_or(0),
    ])
}

/// Parses a whole `.txnindex` file. `path` only names the file in errors.
///
/// # Errors
///
/// [`Error::CorruptFile`] when the length is not a multiple of 34 or an entry has a version
/// other than 0. (Kafka ignores a partial trailing entry; this log treats it as damage and
/// rebuilds the index.)
pub fn parse_txn_index(path: &Path, bytes: &[u8]) -> Result<Vec<AbortedTxn>> {
    let bad = |reason: String| Error::CorruptFile {
        path: path.to_path_buf(),
        reason,
    };
    if !bytes.len().is_multiple_of(ABORTED_TXN_SIZE) {
        return Err(bad(format!(
            "length {} is not a multiple of {ABORTED_TXN_SIZE}",
            bytes.len()
        )));
    }
    let mut out = Vec::with_capacity(bytes.len() / ABORTED_TXN_SIZE);
    for (n, chunk) in bytes.chunks_exact(ABORTED_TXN_SIZE).enumerate() {
        match AbortedTxn::parse(chunk) {
            Ok(Some(t)) => out.push(t),
            Ok(None) => break,
            Err(e) => return Err(bad(format!("entry {n}: {e}"))),
        }
    }
    Ok(out)
}

/// A transaction completed by a marker (Kafka's `CompletedTxn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CompletedTxn {
    pub(crate) producer_id: i64,
    pub(crate) first_offset: i64,
    /// Offset of the marker.
    pub(crate) last_offset: i64,
    pub(crate) aborted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_layout_is_kafkas() {
        let t = AbortedTxn {
            producer_id: 0x0102030405060708,
            first_offset: 5,
            last_offset: 9,
            last_stable_offset: 3,
        };
        let b = t.to_bytes();
        assert_eq!(b.len(), 34);
        assert_eq!(&b[0..2], &[0, 0]);
        assert_eq!(&b[2..10], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&b[10..18], &5i64.to_be_bytes());
        assert_eq!(&b[18..26], &9i64.to_be_bytes());
        assert_eq!(&b[26..34], &3i64.to_be_bytes());
        let p = Path::new("x.txnindex");
        let mut file = b.to_vec();
        file.extend_from_slice(&b);
        assert_eq!(parse_txn_index(p, &file).unwrap(), vec![t, t]);
        assert!(parse_txn_index(p, &file[..40]).is_err());
        let mut v1 = b;
        v1[1] = 1;
        assert!(parse_txn_index(p, &v1)
            .unwrap_err()
            .to_string()
            .contains("version 1"));
        assert_eq!(AbortedTxn::parse(&b[..33]).unwrap(), None);
        assert_eq!(
            t.as_aborted_transaction(),
            AbortedTransaction {
                producer_id: t.producer_id,
                first_offset: 5
            }
        );
    }
}
