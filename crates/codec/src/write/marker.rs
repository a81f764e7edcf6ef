//! End-transaction marker batches, written in one call.

use super::V2Builder;
use crate::control::{ControlRecordKey, ControlRecordType, EndTxnMarker};
use crate::{Error, Result};

/// The fields of an end-transaction marker batch: the control batch a transaction coordinator
/// has each partition leader write to commit or abort a producer's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndTxnBatch {
    /// Offset of the marker (a broker assigns the real one on append).
    pub base_offset: i64,
    /// Partition leader epoch (-1: not set; a broker sets it on append).
    pub partition_leader_epoch: i32,
    /// The transaction's producer id (non-negative).
    pub producer_id: i64,
    /// The transaction's producer epoch (non-negative).
    pub producer_epoch: i16,
    /// Epoch of the transaction coordinator writing the marker.
    pub coordinator_epoch: i32,
    /// `true` for a commit marker, `false` for an abort marker.
    pub commit: bool,
    /// The marker's timestamp in ms (its record's and the batch's), or -1 for none.
    pub timestamp: i64,
}

/// Writes an end-transaction marker batch as Kafka's `MemoryRecords.withEndTransactionMarker`
/// does: one uncompressed CreateTime v2 batch, transactional and control, without a base
/// sequence, holding one control record whose key is version 0 and commit (1) or abort (0), and
/// whose value is the version 0 [`EndTxnMarker`] with the coordinator epoch.
///
/// # Errors
///
/// [`Error::Unencodable`] for a negative producer id or epoch, or a negative timestamp other
/// than -1.
///
/// # Examples
///
/// ```
/// use krecords_codec::control::{ControlRecordKey, ControlRecordType, EndTxnMarker};
/// use krecords_codec::read::Entries;
/// use krecords_codec::write::{end_txn_marker, EndTxnBatch};
/// use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;
///
/// let bytes = end_txn_marker(&EndTxnBatch {
///     base_offset: 100,
///     partition_leader_epoch: -1,
///     producer_id: 42,
///     producer_epoch: 1,
///     coordinator_epoch: 7,
///     commit: true,
///     timestamp: 1714000000000,
/// })
/// .unwrap();
///
/// let batch = Entries::new(&bytes).next().unwrap().unwrap();
/// assert!(batch.is_control() && batch.is_transactional());
/// assert_eq!((batch.producer_id(), batch.producer_epoch()), (Some(42), Some(1)));
/// let mut scratch = Vec::new();
/// let record = batch
///     .checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
///     .unwrap()
///     .next()
///     .unwrap()
///     .unwrap();
/// assert_eq!(record.offset(), 100);
/// assert_eq!(ControlRecordKey::parse(record.key(), 0).unwrap().kind, ControlRecordType::Commit);
/// assert_eq!(EndTxnMarker::parse(record.value(), 0).unwrap().coordinator_epoch, 7);
/// ```
pub fn end_txn_marker(m: &EndTxnBatch) -> Result<Vec<u8>> {
    if m.producer_id < 0 || m.producer_epoch < 0 {
        return Err(Error::Unencodable {
            reason: format!(
                "an end transaction marker needs a producer id and epoch, not {} and {}",
                m.producer_id, m.producer_epoch
            ),
        });
    }
    let key = ControlRecordKey {
        version: 0,
        kind: if m.commit {
            ControlRecordType::Commit
        } else {
            ControlRecordType::Abort
        },
    };
    let value = EndTxnMarker {
        version: 0,
        coordinator_epoch: m.coordinator_epoch,
    };
    let mut b = V2Builder::new(m.base_offset)
        .partition_leader_epoch(m.partition_leader_epoch)
        .producer(m.producer_id, m.producer_epoch, -1)
        .transactional(true)
        .control(true);
    b.append_control(m.timestamp, &key.to_bytes(), &value.to_bytes())?;
    b.finish()
}
