//! Transaction-aware cleaning (Kafka's `CleanedTransactionMetadata`): which batches belong to
//! aborted transactions, which markers may go, and the `.txnindex` entries a cleaned segment
//! keeps.
//!
//! The aborted transactions of the range (from the `.txnindex` files) are consumed in order of
//! first offset as the batches are read. A transactional data batch of a producer with a
//! consumed aborted transaction is aborted data and is discarded; any other transactional batch
//! marks its producer's transaction as committed data seen. An ABORT marker may be discarded
//! unless this pass discarded data of its transaction (then the marker stays one more pass and
//! the aborted transaction is written to the cleaned segment's `.txnindex`); a COMMIT marker may
//! be discarded unless data of its transaction was read in this pass. Markers that may be
//! discarded still wait for their delete horizon (see the crate's cleaner module).

use crate::transaction::AbortedTxn;
use krecords_codec::control::{ControlRecordKey, ControlRecordType};
use krecords_codec::read::V2Batch;
use std::collections::{HashMap, HashSet, VecDeque};

#[derive(Debug, Default)]
pub(crate) struct TxnMetadata {
    /// Aborted transactions not yet reached, by first offset.
    aborted: VecDeque<AbortedTxn>,
    /// Reached aborted transactions by producer id: the entry and whether data of it was read.
    ongoing_aborted: HashMap<i64, (AbortedTxn, bool)>,
    /// Producers whose transactional data (not aborted) was read.
    ongoing_committed: HashSet<i64>,
    /// Entries for the cleaned segment's `.txnindex`, in marker order.
    pub(crate) cleaned_index: Vec<AbortedTxn>,
}

impl TxnMetadata {
    pub(crate) fn add_aborted(&mut self, txns: impl IntoIterator<Item = AbortedTxn>) {
        let mut all: Vec<AbortedTxn> = self.aborted.drain(..).collect();
        for t in txns {
            if !all.contains(&t) {
                all.push(t);
            }
        }
        all.sort_by_key(|t| (t.first_offset, t.last_offset));
        self.aborted = all.into();
    }

    fn consume_up_to(&mut self, offset: i64) {
        while self
            .aborted
            .front()
            .is_some_and(|t| t.first_offset <= offset)
        {
            if let Some(t) = self.aborted.pop_front() {
                self.ongoing_aborted
                    .entry(t.producer_id)
                    .or_insert((t, false));
            }
        }
    }

    /// A control batch was read; returns whether it may be discarded. `key` is the control
    /// record key of its first record, `None` when it has no record (an emptied batch Kafka's
    /// cleaner already kept for producer state: discardable).
    pub(crate) fn on_control_batch(
        &mut self,
        batch: &V2Batch<'_>,
        key: Option<ControlRecordKey>,
    ) -> bool {
        self.consume_up_to(batch.last_offset());
        let Some(key) = key else {
            return true;
        };
        let producer_id = batch.raw_producer_id();
        match key.kind {
            ControlRecordType::Abort => match self.ongoing_aborted.remove(&producer_id) {
                Some((txn, true)) => {
                    self.cleaned_index.push(txn);
                    false
                }
                _ => true,
            },
            ControlRecordType::Commit => !self.ongoing_committed.remove(&producer_id),
            _ => false,
        }
    }

    /// A data batch was read (any magic: `transactional` is false below v2); returns whether it
    /// is aborted data.
    pub(crate) fn on_batch(
        &mut self,
        last_offset: i64,
        transactional: bool,
        producer_id: i64,
    ) -> bool {
        self.consume_up_to(last_offset);
        if !transactional {
            return false;
        }
        match self.ongoing_aborted.get_mut(&producer_id) {
            Some(entry) => {
                entry.1 = true;
                true
            }
            None => {
                self.ongoing_committed.insert(producer_id);
                false
            }
        }
    }
}
