//! The result and option types of the log's operations.

use crate::transaction::AbortedTransaction;
use serde::Serialize;

/// The outcome of an append.
///
/// Serializes as the `krec log append` line of docs/design.md:
/// `{"base_offset":N,"last_offset":N,"log_append_time":T|null,"duplicate":false}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppendInfo {
    /// Offset of the first record appended.
    pub base_offset: i64,
    /// Offset of the last record appended.
    pub last_offset: i64,
    /// The append time stamped on the batches, when the log uses LogAppendTime.
    pub log_append_time: Option<i64>,
    /// Whether the batch was a producer retry of one already in the log: nothing was written
    /// and the offsets (and append time) are the original batch's.
    pub duplicate: bool,
    /// Records appended.
    #[serde(skip)]
    pub record_count: u64,
    /// Largest batch max timestamp of the append (-1 when none).
    #[serde(skip)]
    pub max_timestamp: i64,
    /// Bytes written to the segment.
    #[serde(skip)]
    pub size_bytes: usize,
    /// Whether the records were rebuilt (format conversion or recompression) rather than
    /// stored as sent.
    #[serde(skip)]
    pub rebuilt: bool,
    /// Bytes of a truncated trailing entry that were dropped, as Kafka trims them.
    #[serde(skip)]
    pub trimmed_bytes: usize,
}

/// Raw bytes read from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadResult {
    /// Whole entries as stored (any magic, compressed or not). The first may start before the
    /// offset asked for: a v2 batch or a v0/v1 wrapper is returned whole, and consumers skip
    /// the records below the offset they asked for.
    pub bytes: Vec<u8>,
    /// The offset after the last entry returned (the offset asked for when nothing was).
    pub next_offset: i64,
    /// The high watermark (the log end offset: this log is its only replica).
    pub high_watermark: i64,
    /// The log start offset.
    pub log_start_offset: i64,
}

/// Raw bytes read from the log at an isolation level (a Fetch response for one partition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchResult {
    /// Whole entries as stored, as [`ReadResult::bytes`]; for read_committed only batches
    /// below the last stable offset.
    pub bytes: Vec<u8>,
    /// The offset after the last entry returned (the offset asked for when nothing was).
    pub next_offset: i64,
    /// The high watermark (the log end offset).
    pub high_watermark: i64,
    /// The last stable offset.
    pub last_stable_offset: i64,
    /// The log start offset.
    pub log_start_offset: i64,
    /// For read_committed, the aborted transactions overlapping the returned range (from the
    /// transaction indexes, Kafka's `collectAbortedTransactions`); `None` for read_uncommitted,
    /// as in Kafka's response.
    pub aborted_transactions: Option<Vec<AbortedTransaction>>,
}

/// What [`Log::fetch_into`](crate::Log::fetch_into) found, apart from the bytes it appended to the caller's buffer:
/// the fields of [`FetchResult`], and where the entries are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchInfo {
    /// Where in the buffer the entries of this fetch are (empty when none were read).
    pub range: std::ops::Range<usize>,
    /// As [`FetchResult::next_offset`].
    pub next_offset: i64,
    /// As [`FetchResult::high_watermark`].
    pub high_watermark: i64,
    /// As [`FetchResult::last_stable_offset`].
    pub last_stable_offset: i64,
    /// As [`FetchResult::log_start_offset`].
    pub log_start_offset: i64,
    /// As [`FetchResult::aborted_transactions`].
    pub aborted_transactions: Option<Vec<AbortedTransaction>>,
}

/// What `offsets` looks up (ListOffsets semantics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetSpec {
    /// The log start offset (Kafka's timestamp -2).
    Earliest,
    /// The log end offset (Kafka's timestamp -1).
    Latest,
    /// The record with the largest timestamp (Kafka's timestamp -3).
    MaxTimestamp,
    /// The first record with a timestamp at or after this one.
    Timestamp(i64),
}

impl OffsetSpec {
    /// The spec for a ListOffsets request timestamp: -2 earliest, -1 latest, -3 max timestamp,
    /// -4 (earliest local) as earliest, anything else a timestamp.
    pub fn from_kafka_timestamp(ts: i64) -> Self {
        match ts {
            -1 => OffsetSpec::Latest,
            -2 | -4 => OffsetSpec::Earliest,
            -3 => OffsetSpec::MaxTimestamp,
            t => OffsetSpec::Timestamp(t),
        }
    }
}

/// The answer to an offsets lookup.
///
/// Serializes as `{"offset":N,"timestamp":T|null}`; `offset` is -1 when nothing matches, as in
/// Kafka's ListOffsets response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ListOffsetsResult {
    /// The offset found, -1 when none.
    pub offset: i64,
    /// The timestamp of the record found (`None` for earliest, latest and no match).
    pub timestamp: Option<i64>,
    /// Partition leader epoch of the batch found, when known.
    #[serde(skip)]
    pub leader_epoch: Option<i32>,
}

impl ListOffsetsResult {
    pub(super) const NONE: ListOffsetsResult = ListOffsetsResult {
        offset: -1,
        timestamp: None,
        leader_epoch: None,
    };
}

/// One segment, as `info` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SegmentInfo {
    /// File name of the `.log` file.
    pub file: String,
    /// Base offset (the file name's number).
    pub base_offset: i64,
    /// Offset after its last batch.
    pub next_offset: i64,
    /// Bytes in the `.log` file.
    pub size_bytes: u64,
    /// Largest batch timestamp, `None` when no batch has one.
    pub max_timestamp: Option<i64>,
    /// Entries in the offset index.
    pub offset_index_entries: u64,
    /// Entries in the time index.
    pub time_index_entries: u64,
}

/// The state of the log, as `krec log info` prints it:
/// `{"log_start_offset":N,"high_watermark":N,"last_stable_offset":N,"segments":[...]}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogInfo {
    /// First offset of the log.
    pub log_start_offset: i64,
    /// Offset the next append gets (this log is its own only replica).
    pub high_watermark: i64,
    /// Offset below which no transaction is open: the first offset of the earliest open
    /// transaction, else the high watermark.
    pub last_stable_offset: i64,
    /// The segments, oldest first.
    pub segments: Vec<SegmentInfo>,
    /// For a compacted log (`cleanup.policy` with `compact`), the cleaner's dirty ratio now:
    /// bytes not yet cleaned (and cleanable) over all cleanable bytes (see
    /// [`Log::cleanable`](crate::Log::cleanable)); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_ratio: Option<f64>,
    /// The log end offset (equal to the high watermark).
    #[serde(skip)]
    pub log_end_offset: i64,
    /// The leader epoch stamped on new v2 batches.
    #[serde(skip)]
    pub leader_epoch: i32,
    /// `(epoch, start offset)` of the leader epoch checkpoint.
    #[serde(skip)]
    pub leader_epochs: Vec<(i32, i64)>,
}

/// What `retain` did, as `krec log retain` prints it:
/// `{"deleted_segments":N,"log_start_offset":N}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RetainInfo {
    /// Segments deleted.
    pub deleted_segments: usize,
    /// The log start offset afterwards.
    pub log_start_offset: i64,
}
