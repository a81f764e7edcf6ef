//! The one error type of krecords-log.
//!
//! Every variant maps to the name of the Kafka error a broker would return for it
//! ([`Error::kafka_name`]), so a caller speaking Kafka's protocol (or printing
//! `{"error":"CORRUPT_MESSAGE",...}` like `krec log`) needs no table of its own. Messages are
//! lowercase and say where the problem is: a byte position in the bytes handed to
//! [`crate::Log::append`], or a segment file and the byte position in it.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The names of an [`Error::AlreadyExists`] directory's files its message shows.
const HOLDS_SHOWN: usize = 5;

/// A result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where a data problem was found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// A byte position in the payload handed to [`crate::Log::append`].
    Append {
        /// Byte position from the start of the payload.
        position: usize,
    },
    /// A byte position in a file of the log directory (a segment or an index).
    File {
        /// The file.
        path: PathBuf,
        /// Byte position from the start of the file.
        position: u64,
    },
    /// Not tied to a position (for example a batch rebuilt during validation).
    Unknown,
    /// A byte position in bytes read from the log and handed to the consumer-side filter
    /// ([`crate::consumer::consume`]).
    Read {
        /// Byte position from the start of the bytes.
        position: usize,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Append { position } => write!(f, "append payload at byte {position}"),
            Location::File { path, position } => {
                write!(f, "{} at byte {position}", path.display())
            }
            Location::Unknown => f.write_str("rebuilt batch"),
            Location::Read { position } => write!(f, "fetched bytes at byte {position}"),
        }
    }
}

/// One rejected record of an append, as Kafka's produce response lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    /// Index of the record within its batch (Kafka's `batchIndex`).
    pub batch_index: usize,
    /// Why it was rejected.
    pub message: String,
}

/// Everything that can go wrong in the log.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Bytes that fail a structural or checksum check (`CORRUPT_MESSAGE`): a bad entry size or
    /// magic, a CRC mismatch, undecodable compressed data, or a corrupt segment found while
    /// reading.
    CorruptMessage {
        /// Where: a byte position in the payload of an append, in a segment file, or in fetched
        /// bytes (see [`Location`]); for a codec error, where the codec found the problem.
        at: Location,
        /// What was wrong, in lowercase words.
        reason: String,
        /// The codec's error, when the codec found the problem (also [`std::error::Error::source`]).
        source: Option<krecords_codec::Error>,
    },
    /// A batch or record that breaks a rule of the append path (`INVALID_RECORD`): a non-zero
    /// v2 base offset, an inconsistent record count, a control batch from a client, a missing key
    /// on a compacted log, more than one v2 batch in one append, and so on.
    InvalidRecord {
        /// Where.
        at: Location,
        /// What was wrong.
        reason: String,
        /// The individual records rejected, when the problem was with records.
        record_errors: Vec<RecordError>,
    },
    /// One or more record timestamps outside `message.timestamp.before.max.ms` /
    /// `after.max.ms`, or a LogAppendTime batch from a producer (`INVALID_TIMESTAMP`).
    InvalidTimestamp {
        /// Where.
        at: Location,
        /// Summary.
        reason: String,
        /// The individual records rejected.
        record_errors: Vec<RecordError>,
    },
    /// A batch larger than `max.message.bytes`, its 12-byte offset and size prefix included
    /// (`MESSAGE_TOO_LARGE`).
    MessageTooLarge {
        /// Where.
        at: Location,
        /// Size of the batch including the prefix.
        size: usize,
        /// `max.message.bytes`.
        max: i32,
    },
    /// An append larger than `segment.bytes` (`RECORD_LIST_TOO_LARGE`).
    RecordListTooLarge {
        /// Bytes of the validated append.
        size: usize,
        /// `segment.bytes`.
        max: i32,
    },
    /// Data the log's message format cannot hold (`UNSUPPORTED_FOR_MESSAGE_FORMAT`):
    /// transactional or idempotent batches, or record headers, below magic 2.
    UnsupportedForMessageFormat {
        /// What cannot be stored.
        reason: String,
    },
    /// A codec the message format cannot carry, such as zstd below magic 2
    /// (`UNSUPPORTED_COMPRESSION_TYPE`).
    UnsupportedCompressionType {
        /// What was asked for.
        reason: String,
    },
    /// A read or lookup outside `[log start offset, log end offset]` (`OFFSET_OUT_OF_RANGE`).
    OffsetOutOfRange {
        /// The offset asked for.
        offset: i64,
        /// First offset of the log.
        log_start_offset: i64,
        /// Offset the next append will get.
        log_end_offset: i64,
    },
    /// A configuration name or value Kafka would refuse (`INVALID_CONFIG`).
    InvalidConfig {
        /// The configuration name (`segment.bytes`, ...).
        name: String,
        /// The value given.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// An I/O error on a file of the log directory (`KAFKA_STORAGE_ERROR`). A failed write or
    /// sync poisons the log.
    Io {
        /// The operation: `read`, `write`, `sync`, `open`, ...
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A write or sync failed earlier; the log refuses further writes until it is reopened, which
    /// recovers it from what reached the disk (`KAFKA_STORAGE_ERROR`).
    Poisoned {
        /// The error that poisoned the log.
        cause: String,
    },
    /// A derived file (index, checkpoint, configuration) that cannot be used
    /// (`KAFKA_STORAGE_ERROR`).
    CorruptFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A partition directory's configuration file (`krec-log.json`) that cannot be used: not
    /// JSON, or a setting Kafka would refuse (`KAFKA_STORAGE_ERROR`). Damaged data, unlike a
    /// derived file: nothing rebuilds it from the log, and no command replaces it (`krec
    /// verify` reports it, `krec salvage` goes on with the default configuration).
    DamagedConfig {
        /// The file.
        path: PathBuf,
        /// What is wrong with it: `not JSON: …` with the parser's error, or the refused
        /// setting.
        reason: String,
    },
    /// A segment damaged in the middle of the log, found by a read-only open: recovery would
    /// cut it at the damage although intact entries follow; or segments whose offsets overlap
    /// (position 0), which recovery does not repair (`CORRUPT_MESSAGE`).
    DamagedSegment {
        /// The segment file.
        path: PathBuf,
        /// The byte of the damaged entry in it.
        position: u64,
        /// The damage and the first intact entry after it.
        reason: String,
    },
    /// `create` on a directory that holds a log or any other file (its lock file aside), or a
    /// new partition directory (`PartitionWriter`: salvage, convert) at a path that holds
    /// files (`TOPIC_ALREADY_EXISTS`): a log is written into a new or empty directory only.
    AlreadyExists {
        /// The directory.
        path: PathBuf,
        /// The names of what it holds, sorted (empty when they could not be listed); the
        /// message names the first few.
        holds: Vec<String>,
    },
    /// `open` on a directory without a log in it (`KAFKA_STORAGE_ERROR`).
    NotALog {
        /// The directory.
        path: PathBuf,
    },
    /// `open` of a directory that does not exist (`KAFKA_STORAGE_ERROR`), said as every
    /// command says a missing input.
    NoSuchDirectory {
        /// The path given.
        path: PathBuf,
    },
    /// Another writer (a `Log` in this or another process) holds the directory's lock
    /// (`KAFKA_STORAGE_ERROR`): only one writer may have a log open at a time. Nothing was
    /// changed.
    LogLocked {
        /// The log directory.
        dir: PathBuf,
        /// The lock file in it (`krec.lock`).
        lock_file: PathBuf,
    },
    /// The directory belongs to a running Kafka broker: the broker holds the OS lock on the
    /// `.lock` file of its data directory (`KAFKA_STORAGE_ERROR`). Writing would race with the
    /// broker; see [`crate::OpenOptions::ignore_running_broker`]. Nothing was changed.
    BrokerRunning {
        /// The log directory.
        dir: PathBuf,
        /// The broker's lock file.
        lock_file: PathBuf,
    },
    /// A write to a log opened with [`crate::Log::open_read_only`] (`KAFKA_STORAGE_ERROR`).
    ReadOnly {
        /// The log directory.
        dir: PathBuf,
    },
    /// A batch from a producer epoch older than the one the log knows for its producer id: a
    /// fenced zombie (`INVALID_PRODUCER_EPOCH`, Kafka's `ProducerAppendInfo.checkProducerEpoch`).
    InvalidProducerEpoch {
        /// The producer id.
        producer_id: i64,
        /// The epoch of the batch or transaction marker.
        epoch: i16,
        /// The epoch the log knows.
        current_epoch: i16,
        /// The offset the batch would have had.
        offset: i64,
    },
    /// A sequence number that does not follow the producer's last one, or a new epoch that does
    /// not start at sequence 0 (`OUT_OF_ORDER_SEQUENCE_NUMBER`, Kafka's
    /// `ProducerAppendInfo.checkSequence`).
    OutOfOrderSequence {
        /// The producer id.
        producer_id: i64,
        /// The epoch of the batch.
        epoch: i16,
        /// The batch's base sequence.
        sequence: i32,
        /// The producer's last sequence at that epoch (-1 when none).
        last_sequence: i32,
        /// Which rule was broken.
        reason: String,
    },
    /// A non-transactional batch from a producer with an open transaction
    /// (`INVALID_TXN_STATE`, Kafka's `ProducerAppendInfo.appendDataBatch`).
    InvalidTxnState {
        /// The producer id.
        producer_id: i64,
        /// First offset of the open transaction.
        txn_first_offset: i64,
        /// The offset the batch would have had.
        offset: i64,
    },
    /// A transaction marker from a coordinator epoch older than the last one seen for the
    /// producer (`TRANSACTION_COORDINATOR_FENCED`, Kafka's
    /// `ProducerAppendInfo.checkCoordinatorEpoch`).
    TransactionCoordinatorFenced {
        /// The producer id.
        producer_id: i64,
        /// The marker's coordinator epoch.
        coordinator_epoch: i32,
        /// The coordinator epoch the log knows.
        current_coordinator_epoch: i32,
    },
    /// The codec failed while rebuilding a batch, for a reason other than bad input (for
    /// example a codec not available in this build) (`UNKNOWN_SERVER_ERROR`).
    Codec {
        /// Where.
        at: Location,
        /// The codec's error.
        source: krecords_codec::Error,
    },
    /// The records of a compressed batch in an append cannot be decompressed
    /// (`UNKNOWN_SERVER_ERROR`). This is what a Kafka broker answers such a produce with: its
    /// `LogValidator` lets the codec's exception through, and the broker answers any
    /// exception it does not know with this code, which a Kafka producer does not retry
    /// (`CORRUPT_MESSAGE` it would). Found by the differential tests against Kafka's
    /// `UnifiedLog`.
    UndecodableRecords {
        /// The batch.
        at: Location,
        /// The codec's error.
        source: krecords_codec::Error,
    },
    /// One entry of a [`crate::Log::append_all`] was refused, so none was written. The Kafka
    /// name is the wrapped error's; byte positions in it are within that entry.
    InEntry {
        /// Index of the refused entry in the slice handed to `append_all`, from 0.
        index: usize,
        /// Why [`crate::Log::append`] would refuse it.
        source: Box<Error>,
    },
    /// A storage failure while [`crate::Log::append_all`] wrote its entries
    /// (`KAFKA_STORAGE_ERROR`). The log was rolled back to where it was before the call
    /// (`undo_failed` is `None`), or rolling back failed too: the log then ends at
    /// `end_offset` (what a reopen recovers) and refuses writes until it is reopened.
    AppendFailed {
        /// The storage error met while writing.
        source: Box<Error>,
        /// The log end offset now: the one before the call when it was rolled back.
        end_offset: i64,
        /// Why rolling back failed; `None` when the log is as it was before the call.
        undo_failed: Option<String>,
    },
}

impl Error {
    /// The name of the Kafka error code this error corresponds to, as in Kafka's `Errors` enum:
    /// `CORRUPT_MESSAGE`, `INVALID_RECORD`, `MESSAGE_TOO_LARGE`, `RECORD_LIST_TOO_LARGE`,
    /// `INVALID_TIMESTAMP`, `UNSUPPORTED_FOR_MESSAGE_FORMAT`, `UNSUPPORTED_COMPRESSION_TYPE`,
    /// `OFFSET_OUT_OF_RANGE`, `INVALID_CONFIG`, `KAFKA_STORAGE_ERROR`, `TOPIC_ALREADY_EXISTS`,
    /// `INVALID_PRODUCER_EPOCH`, `OUT_OF_ORDER_SEQUENCE_NUMBER`, `INVALID_TXN_STATE`,
    /// `TRANSACTION_COORDINATOR_FENCED`, `UNKNOWN_SERVER_ERROR`.
    pub fn kafka_name(&self) -> &'static str {
        match self {
            Error::CorruptMessage { .. } => "CORRUPT_MESSAGE",
            Error::InvalidRecord { .. } => "INVALID_RECORD",
            Error::InvalidTimestamp { .. } => "INVALID_TIMESTAMP",
            Error::MessageTooLarge { .. } => "MESSAGE_TOO_LARGE",
            Error::RecordListTooLarge { .. } => "RECORD_LIST_TOO_LARGE",
            Error::UnsupportedForMessageFormat { .. } => "UNSUPPORTED_FOR_MESSAGE_FORMAT",
            Error::UnsupportedCompressionType { .. } => "UNSUPPORTED_COMPRESSION_TYPE",
            Error::OffsetOutOfRange { .. } => "OFFSET_OUT_OF_RANGE",
            Error::InvalidConfig { .. } => "INVALID_CONFIG",
            Error::Io { .. }
            | Error::Poisoned { .. }
            | Error::CorruptFile { .. }
            | Error::DamagedConfig { .. }
            | Error::NotALog { .. }
            | Error::NoSuchDirectory { .. }
            | Error::LogLocked { .. }
            | Error::BrokerRunning { .. }
            | Error::ReadOnly { .. } => "KAFKA_STORAGE_ERROR",
            Error::DamagedSegment { .. } => "CORRUPT_MESSAGE",
            Error::AlreadyExists { .. } => "TOPIC_ALREADY_EXISTS",
            Error::InvalidProducerEpoch { .. } => "INVALID_PRODUCER_EPOCH",
            Error::OutOfOrderSequence { .. } => "OUT_OF_ORDER_SEQUENCE_NUMBER",
            Error::InvalidTxnState { .. } => "INVALID_TXN_STATE",
            Error::TransactionCoordinatorFenced { .. } => "TRANSACTION_COORDINATOR_FENCED",
            Error::Codec { .. } | Error::UndecodableRecords { .. } => "UNKNOWN_SERVER_ERROR",
            Error::InEntry { source, .. } => source.kafka_name(),
            Error::AppendFailed { .. } => "KAFKA_STORAGE_ERROR",
        }
    }

    /// The numeric Kafka error code of [`Error::kafka_name`] (Kafka's `Errors` enum:
    /// `CORRUPT_MESSAGE` is 2, `KAFKA_STORAGE_ERROR` 56, `UNKNOWN_SERVER_ERROR` -1, ...), as a
    /// produce or fetch response would carry it.
    ///
    /// # Examples
    ///
    /// ```
    /// let e = krecords_log::Error::RecordListTooLarge { size: 10, max: 5 };
    /// assert_eq!((e.kafka_name(), e.kafka_code()), ("RECORD_LIST_TOO_LARGE", 18));
    /// ```
    pub fn kafka_code(&self) -> i16 {
        match self.kafka_name() {
            "OFFSET_OUT_OF_RANGE" => 1,
            "CORRUPT_MESSAGE" => 2,
            "MESSAGE_TOO_LARGE" => 10,
            "RECORD_LIST_TOO_LARGE" => 18,
            "INVALID_TIMESTAMP" => 32,
            "TOPIC_ALREADY_EXISTS" => 36,
            "INVALID_CONFIG" => 40,
            "UNSUPPORTED_FOR_MESSAGE_FORMAT" => 43,
            "OUT_OF_ORDER_SEQUENCE_NUMBER" => 45,
            "INVALID_PRODUCER_EPOCH" => 47,
            "INVALID_TXN_STATE" => 48,
            "TRANSACTION_COORDINATOR_FENCED" => 52,
            "KAFKA_STORAGE_ERROR" => 56,
            "UNSUPPORTED_COMPRESSION_TYPE" => 76,
            "INVALID_RECORD" => 87,
            _ => -1,
        }
    }

    /// For an [`Error::InEntry`] of [`crate::Log::append_all`]: the index of the refused entry
    /// and the error it met. `None` for any other error.
    pub fn in_entry(&self) -> Option<(usize, &Error)> {
        match self {
            Error::InEntry { index, source } => Some((*index, source)),
            _ => None,
        }
    }

    /// The records rejected individually, for the errors that list them.
    pub fn record_errors(&self) -> &[RecordError] {
        match self {
            Error::InvalidRecord { record_errors, .. }
            | Error::InvalidTimestamp { record_errors, .. } => record_errors,
            Error::InEntry { source, .. } => source.record_errors(),
            _ => &[],
        }
    }

    /// True for I/O failures (the ones that poison the log when they happen while writing).
    pub fn is_storage_error(&self) -> bool {
        match self {
            Error::Io { .. } | Error::Poisoned { .. } | Error::AppendFailed { .. } => true,
            Error::InEntry { source, .. } => source.is_storage_error(),
            _ => false,
        }
    }

    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }

    pub(crate) fn invalid_record(at: Location, reason: impl Into<String>) -> Self {
        Error::InvalidRecord {
            at,
            reason: reason.into(),
            record_errors: Vec::new(),
        }
    }

    pub(crate) fn corrupt(at: Location, reason: impl Into<String>) -> Self {
        Error::CorruptMessage {
            at,
            reason: reason.into(),
            source: None,
        }
    }

    /// `CORRUPT_MESSAGE` for a codec error found at `at`, keeping the codec's error.
    pub(crate) fn corrupt_codec(at: Location, e: krecords_codec::Error) -> Self {
        Error::CorruptMessage {
            at,
            reason: e.to_string(),
            source: Some(e),
        }
    }

    pub(crate) fn config(
        name: impl Into<String>,
        value: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Error::InvalidConfig {
            name: name.into(),
            value: value.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::CorruptMessage { at, reason, .. } => {
                write!(f, "{at}: corrupt message: {reason}")
            }
            Error::InvalidRecord { at, reason, .. } => write!(f, "{at}: invalid record: {reason}"),
            Error::InvalidTimestamp { at, reason, record_errors } => {
                write!(f, "{at}: invalid timestamp: {reason}")?;
                if let Some(first) = record_errors.first() {
                    write!(f, " (record {}: {})", first.batch_index, first.message)?;
                }
                Ok(())
            }
            Error::MessageTooLarge { at, size, max } => write!(
                f,
                "{at}: batch of {size} bytes exceeds max.message.bytes {max}"
            ),
            Error::RecordListTooLarge { size, max } => write!(
                f,
                "append of {size} bytes exceeds segment.bytes {max}"
            ),
            Error::UnsupportedForMessageFormat { reason } => {
                write!(f, "unsupported for the message format: {reason}")
            }
            Error::UnsupportedCompressionType { reason } => {
                write!(f, "unsupported compression type: {reason}")
            }
            Error::OffsetOutOfRange { offset, log_start_offset, log_end_offset } => write!(
                f,
                "offset {offset} is out of range [{log_start_offset}, {log_end_offset}]"
            ),
            Error::InvalidConfig { name, value, reason } => {
                write!(f, "invalid config {name}={value}: {reason}")
            }
            Error::Io { op, path, source } => {
                write!(f, "cannot {op} {}: {source}", path.display())
            }
            Error::Poisoned { cause } => write!(
                f,
                "log refuses writes after an earlier storage failure ({cause}); reopen it to recover"
            ),
            Error::CorruptFile { path, reason }
            | Error::DamagedConfig { path, reason }
            | Error::DamagedSegment { path, reason, .. } => {
                write!(f, "{}: {reason}", path.display())
            }
            Error::AlreadyExists { path, holds } => {
                write!(
                    f,
                    "{}: already holds files (a log is written into a new or empty \
                     directory)",
                    path.display()
                )?;
                if let Some((first, _)) = holds.split_first() {
                    write!(f, "; it holds {first}")?;
                    for name in holds.iter().skip(1).take(HOLDS_SHOWN - 1) {
                        write!(f, ", {name}")?;
                    }
                    if holds.len() > HOLDS_SHOWN {
                        write!(f, " and {} more", holds.len() - HOLDS_SHOWN)?;
                    }
                }
                Ok(())
            }
            Error::NoSuchDirectory { path } => write!(
                f,
                "cannot open {}: no such directory",
                path.display()
            ),
            Error::NotALog { path } => write!(
                f,
                "{}: not a log directory (no krec-log.json and no .log segments)",
                path.display()
            ),
            Error::LogLocked { dir, lock_file } => write!(
                f,
                "{}: another process has this log open for writing (it holds {}); try again, or wait for it",
                dir.display(),
                lock_file.file_name().map_or(lock_file.as_path(), Path::new).display()
            ),
            Error::BrokerRunning { dir, lock_file } => write!(
                f,
                "{}: a running Kafka broker owns this directory (it holds the lock on {}); refusing to write",
                dir.display(),
                lock_file.display()
            ),
            Error::ReadOnly { dir } => {
                write!(f, "{}: the log is open read-only", dir.display())
            }
            Error::InvalidProducerEpoch { producer_id, epoch, current_epoch, offset } => write!(
                f,
                "producer {producer_id} at offset {offset}: epoch {epoch} is older than the current epoch {current_epoch}"
            ),
            Error::OutOfOrderSequence { producer_id, epoch, sequence, last_sequence, reason } => write!(
                f,
                "producer {producer_id} epoch {epoch}: out of order sequence {sequence} (last sequence {last_sequence}): {reason}"
            ),
            Error::InvalidTxnState { producer_id, txn_first_offset, offset } => write!(
                f,
                "producer {producer_id} at offset {offset}: expected a transactional batch, the transaction started at offset {txn_first_offset} is open"
            ),
            Error::TransactionCoordinatorFenced { producer_id, coordinator_epoch, current_coordinator_epoch } => write!(
                f,
                "producer {producer_id}: coordinator epoch {coordinator_epoch} is older than the current {current_coordinator_epoch}"
            ),
            Error::Codec { at, source } => write!(f, "{at}: {source}"),
            Error::UndecodableRecords { at, source } => {
                write!(f, "{at}: the records cannot be decompressed: {source}")
            }
            Error::InEntry { index, source } => write!(f, "entry {index}: {source}"),
            Error::AppendFailed {
                source,
                end_offset,
                undo_failed: None,
            } => write!(
                f,
                "{source}; the log is as it was before these appends (end offset {end_offset}): \
                 nothing was appended"
            ),
            Error::AppendFailed {
                source,
                end_offset,
                undo_failed: Some(why),
            } => write!(
                f,
                "{source}; undoing the appends failed too ({why}): the log ends at offset \
                 {end_offset} (the appends before it are in the log) and refuses writes until \
                 it is reopened"
            ),
        }
    }
}

/// A codec error met outside any file or payload position the log knows: corruption is
/// `CORRUPT_MESSAGE`, anything else [`Error::Codec`]; the codec's error is the
/// [`std::error::Error::source`] either way.
impl From<krecords_codec::Error> for Error {
    fn from(e: krecords_codec::Error) -> Self {
        if e.is_corruption() {
            Error::corrupt_codec(Location::Unknown, e)
        } else {
            Error::Codec {
                at: Location::Unknown,
                source: e,
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Codec { source, .. } | Error::UndecodableRecords { source, .. } => Some(source),
            Error::CorruptMessage {
                source: Some(source),
                ..
            } => Some(source),
            Error::InEntry { source, .. } | Error::AppendFailed { source, .. } => {
                Some(source.as_ref())
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name and code against kafka-protocol's table (generated from Kafka's `Errors`).
    #[test]
    fn codes_are_kafkas() {
        let errors = [
            Error::corrupt(Location::Unknown, "x"),
            Error::invalid_record(Location::Unknown, "x"),
            Error::RecordListTooLarge { size: 1, max: 0 },
            Error::MessageTooLarge {
                at: Location::Unknown,
                size: 1,
                max: 0,
            },
            Error::InvalidTimestamp {
                at: Location::Unknown,
                reason: String::new(),
                record_errors: Vec::new(),
            },
            Error::UnsupportedForMessageFormat {
                reason: String::new(),
            },
            Error::UnsupportedCompressionType {
                reason: String::new(),
            },
            Error::OffsetOutOfRange {
                offset: 0,
                log_start_offset: 0,
                log_end_offset: 0,
            },
            Error::config("a", "b", "c"),
            Error::Poisoned {
                cause: String::new(),
            },
            Error::AlreadyExists {
                path: PathBuf::new(),
                holds: Vec::new(),
            },
            Error::InvalidProducerEpoch {
                producer_id: 0,
                epoch: 0,
                current_epoch: 0,
                offset: 0,
            },
            Error::OutOfOrderSequence {
                producer_id: 0,
                epoch: 0,
                sequence: 0,
                last_sequence: 0,
                reason: String::new(),
            },
            Error::InvalidTxnState {
                producer_id: 0,
                txn_first_offset: 0,
                offset: 0,
            },
            Error::TransactionCoordinatorFenced {
                producer_id: 0,
                coordinator_epoch: 0,
                current_coordinator_epoch: 0,
            },
        ];
        for e in &errors {
            let theirs = kafka_protocol::error::ResponseError::try_from_code(e.kafka_code())
                .map(|r| format!("{r:?}"))
                .unwrap_or_default();
            let camel: String = e
                .kafka_name()
                .split('_')
                .map(|w| w[..1].to_string() + &w[1..].to_lowercase())
                .collect();
            assert_eq!(theirs, camel, "{} = {}", e.kafka_name(), e.kafka_code());
        }
        let unknown = Error::Codec {
            at: Location::Unknown,
            source: krecords_codec::Error::InvalidLevel {
                compression: krecords_codec::Compression::Gzip,
                level: 99,
            },
        };
        assert_eq!(unknown.kafka_code(), -1);
    }

    #[test]
    fn codec_errors_are_kept_as_the_source() {
        let codec = krecords_codec::Error::Truncated {
            at: 3,
            what: "batch header",
            needed: 61,
            available: 10,
        };
        let e = Error::from(codec.clone());
        assert_eq!(e.kafka_name(), "CORRUPT_MESSAGE");
        let source = std::error::Error::source(&e).unwrap();
        assert_eq!(source.to_string(), codec.to_string());
    }

    #[test]
    fn names_and_messages() {
        let e = Error::corrupt(
            Location::File {
                path: "/p/00000000000000000000.log".into(),
                position: 4096,
            },
            "crc mismatch",
        );
        assert_eq!(e.kafka_name(), "CORRUPT_MESSAGE");
        assert_eq!(
            e.to_string(),
            "/p/00000000000000000000.log at byte 4096: corrupt message: crc mismatch"
        );
        let e = Error::MessageTooLarge {
            at: Location::Append { position: 0 },
            size: 10,
            max: 5,
        };
        assert_eq!(e.kafka_name(), "MESSAGE_TOO_LARGE");
        assert_eq!(
            e.to_string(),
            "append payload at byte 0: batch of 10 bytes exceeds max.message.bytes 5"
        );
        let e = Error::io("write", "/p/x.log", io::Error::other("disk full"));
        assert_eq!(e.kafka_name(), "KAFKA_STORAGE_ERROR");
        assert!(e.is_storage_error());
        assert!(std::error::Error::source(&e).is_some());
        assert_eq!(
            Error::RecordListTooLarge { size: 1, max: 0 }.kafka_name(),
            "RECORD_LIST_TOO_LARGE"
        );
        assert_eq!(
            Error::OffsetOutOfRange {
                offset: 9,
                log_start_offset: 0,
                log_end_offset: 3
            }
            .kafka_name(),
            "OFFSET_OUT_OF_RANGE"
        );
        assert_eq!(
            Error::config("segment.bytes", "x", "not a number").kafka_name(),
            "INVALID_CONFIG"
        );
    }
}
