//! Producer state: the hook for idempotent and transactional producers.
//!
//! Kafka's `ProducerStateManager` tracks, per producer id, the epoch, the last sequence numbers
//! and the open transaction, rejects out-of-order sequences and stale epochs, answers duplicates
//! with the offsets of the original batch, and feeds the last stable offset and the transaction
//! index. None of that is implemented yet (a later issue): batches with a producer id are stored
//! as they come, the last stable offset is the high watermark, and no append is a duplicate.
//! The append path already calls [`ProducerStateManager::check`] before writing and
//! [`ProducerStateManager::update`] after, so the later work has its place.

use crate::error::Result;
use krecords_codec::read::Batch;

/// The original offsets of a batch the producer sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Duplicate {
    pub(crate) first_offset: i64,
    pub(crate) last_offset: i64,
    pub(crate) log_append_time: Option<i64>,
}

/// Placeholder for Kafka's `ProducerStateManager`.
#[derive(Debug, Default)]
pub(crate) struct ProducerStateManager {
    /// Offset up to which the state reflects the log.
    map_end_offset: i64,
}

impl ProducerStateManager {
    /// Checks the batches of an append against producer state: sequence order, epochs,
    /// transaction state. Returns the original batch when this is a duplicate. Today: accepts
    /// everything.
    pub(crate) fn check(&self, _batches: &[Batch<'_>]) -> Result<Option<Duplicate>> {
        Ok(None)
    }

    /// Records appended batches (after they reached the segment).
    pub(crate) fn update(&mut self, _batches: &[Batch<'_>], next_offset: i64) {
        self.map_end_offset = next_offset;
    }

    /// Rebuilds the state after recovery or truncation from the log end.
    pub(crate) fn reset_to(&mut self, next_offset: i64) {
        self.map_end_offset = next_offset;
    }

    /// The last stable offset given the high watermark: the first offset of the oldest open
    /// transaction, or the high watermark. Today: the high watermark.
    pub(crate) fn last_stable_offset(&self, high_watermark: i64) -> i64 {
        high_watermark
    }
}
