//! A Kafka partition log: Kafka's on-disk layout, the broker's append validation, sparse
//! indexes, time lookups, segment rolls, retention, crash recovery, idempotent producers and
//! transactions.
//!
//! A [`Log`] lives in a directory laid out as a Kafka broker lays out a partition (see
//! [`files`]): `<20-digit base offset>.log` segments holding entries of any magic,
//! `.index`, `.timeindex` and `.txnindex` files and `.snapshot` producer state in Kafka's
//! formats, `leader-epoch-checkpoint`, plus our
//! `krec-log.json` with the configuration under Kafka's topic config names ([`LogConfig`]).
//!
//! # Examples
//!
//! ```
//! use krecords_codec::write::{NewRecord, V2Builder};
//! use krecords_log::clock::ManualClock;
//! use krecords_log::storage::MemStorage;
//! use krecords_log::{AppendOrigin, Env, Log, LogConfig, OffsetSpec};
//! use std::sync::Arc;
//!
//! # fn main() -> krecords_log::Result<()> {
//! // In memory here; `Log::create(dir, config)` uses the file system.
//! let env = Env::new(Arc::new(MemStorage::new()), Arc::new(ManualClock::new(1_714_000_000_000)));
//! let config = LogConfig::from_pairs([("segment.bytes", "1048576")])?;
//! let mut log = Log::create_with("/data/events-0", config, env.clone())?;
//!
//! // A producer's batch: base offset 0, the log assigns the real offsets.
//! let mut batch = V2Builder::new(0);
//! batch.append(&NewRecord::new(1_714_000_000_000, None, Some(b"hello"))).unwrap();
//! batch.append(&NewRecord::new(1_714_000_000_000, None, Some(b"world"))).unwrap();
//! let info = log.append(&batch.finish().unwrap(), AppendOrigin::Client)?;
//! assert_eq!((info.base_offset, info.last_offset), (0, 1));
//!
//! // Reads return whole batches as stored.
//! let read = log.read(1, 1 << 20)?;
//! assert_eq!(read.next_offset, 2);
//!
//! // ListOffsets.
//! assert_eq!(log.offsets(OffsetSpec::Timestamp(1_714_000_000_000))?.offset, 0);
//! assert_eq!(log.offsets(OffsetSpec::Latest)?.offset, 2);
//!
//! // A clean close lets the next open skip recovery.
//! log.close()?;
//! let log = Log::open_with("/data/events-0", env)?;
//! assert!(log.recovery_info().clean_shutdown);
//! # Ok(())
//! # }
//! ```
//!
//! # Append validation
//!
//! [`Log::append`] takes what a produce request carries for one partition and follows Kafka's
//! leader path (`UnifiedLog.analyzeAndValidateRecords` and `LogValidator`):
//!
//! * Any magic is accepted; every entry must parse and pass its CRC (`CORRUPT_MESSAGE`) and fit
//!   `max.message.bytes` counting its 12-byte offset and size prefix (`MESSAGE_TOO_LARGE`); a v2
//!   batch from a client must have base offset 0 and a record count equal to its offset range,
//!   may not be a control batch, and comes alone (`INVALID_RECORD`). A truncated trailing entry
//!   is dropped, as Kafka trims it.
//! * Records: a key on compacted logs (`INVALID_RECORD`); CreateTime timestamps within
//!   `message.timestamp.before.max.ms` / `after.max.ms` of now, no LogAppendTime from producers
//!   (`INVALID_TIMESTAMP`); no transactional, idempotent or header-carrying data below magic 2
//!   (`UNSUPPORTED_FOR_MESSAGE_FORMAT`).
//! * Offsets are assigned in place when codec and magic already match the log's (for v2: the base
//!   offset and partition leader epoch, outside the CRC; the max timestamp, attributes and CRC
//!   only for LogAppendTime or a wrong max timestamp). Otherwise the records are rebuilt:
//!   v0/v1 up-converted to v2, down-converted when `message.format.version` is older, or
//!   recompressed to `compression.type`. The log's magic follows `message.format.version`
//!   (0.8/0.9: v0, 0.10: v1, 0.11 and later: v2), so a log upgraded with
//!   [`Log::update_config`] holds each format in order.
//! * An append over `segment.bytes` is `RECORD_LIST_TOO_LARGE`. Every validation error leaves the
//!   log untouched; [`Error::kafka_name`] gives the Kafka error name.
//! * [`Log::append_all`] takes several such appends and writes them all or none: each is
//!   validated with the offsets and the producer state the earlier ones would leave, and a
//!   refusal of any ([`Error::InEntry`] names it) writes nothing.
//!
//! # Durability and recovery
//!
//! Appends are written with one positioned write and synced per `flush.messages` / `flush.ms`
//! (or [`Log::flush`]); a roll syncs the finished segment and its trimmed indexes, then the
//! directory, then records the recovery point. Creations, renames and deletions are followed by
//! a directory sync. After a failed write or sync the log is poisoned: every later write is
//! refused until it is reopened. Opening a log that was not [`Log::close`]d scans the segments
//! from the recovery point, validates every batch, truncates at the first invalid one, deletes
//! any later segment and rebuilds the indexes ([`RecoverInfo`]). All file access goes through
//! [`storage::Storage`], whose in-memory implementation injects faults and simulates crashes.
//!
//! # One writer, any number of readers
//!
//! A log open for writing ([`Log::create`], [`Log::open`], [`Log::recover`]) holds an exclusive
//! OS lock on `krec.lock` in its directory until it is closed or dropped, or its process dies
//! (`flock`: a killed writer never leaves the directory locked). A second writer, in this process
//! or another, gets [`Error::LogLocked`] before it changes anything, or waits for the lock
//! ([`OpenOptions::lock_wait`]). A directory whose parent holds the `.lock` of a running Kafka
//! broker is refused ([`Error::BrokerRunning`]) unless [`OpenOptions::ignore_running_broker`]
//! says otherwise.
//!
//! [`Log::open_read_only`] takes no lock and never changes the directory: recovery, index
//! rebuilds and producer state replay run in memory ([`storage::ReadOnlyStorage`]). It sees the
//! complete batches present when it opened each file, never a batch a writer is still writing,
//! and works on live logs, Kafka broker directories and read-only file systems alike.
//!
//! # Idempotent producers and transactions
//!
//! Batches with a producer id are checked against per-producer state as a Kafka leader checks
//! them ([`producer_state`]): a retry of one of the producer's last five batches is answered
//! with the original offsets (`AppendInfo::duplicate`), a stale epoch is
//! `INVALID_PRODUCER_EPOCH`, a gap in sequence numbers `OUT_OF_ORDER_SEQUENCE_NUMBER`, a
//! non-transactional batch inside an open transaction `INVALID_TXN_STATE`.
//! [`Log::append_end_txn`] writes the coordinator's COMMIT or ABORT marker (a stale coordinator
//! epoch is `TRANSACTION_COORDINATOR_FENCED`); aborted transactions go to the segment's
//! `.txnindex` ([`transaction`]). The last stable offset is the first offset of the earliest
//! open transaction. [`Log::fetch`] reads at an isolation level, read_committed stopping at the
//! last stable offset and listing the aborted transactions of the range; [`consumer::consume`]
//! (and [`Log::consume`]) turn fetched bytes into the records a Java consumer would return.
//! Producer state is saved in Kafka's `<offset>.snapshot` files at rolls and clean shutdowns and
//! rebuilt from the latest one plus the log after it when the log opens.
//!
//! # Checking a directory
//!
//! [`check::check_partition`] examines a partition directory without changing it and returns
//! every problem as data ([`check::Problem`]): entry CRCs and records, offsets, the indexes
//! against the log, producer snapshots, the leader epoch checkpoint, the configuration. `krec
//! verify` prints what it reports.
//!
//! # Compaction
//!
//! [`Log::compact`] runs one pass of Kafka's log cleaner on a `cleanup.policy=compact` log: the
//! latest record of each key is kept, tombstones until their delete horizon (KIP-534), aborted
//! transactional data and finished markers go, producers' last batches stay; cleaned segments are
//! swapped in crash-safely. See [`cleaner`].
//!
//! # Not yet
//!
//! Down-conversion on read for old consumers is not available.
#![deny(missing_docs)]

pub mod check;
pub mod cleaner;
pub mod clock;
pub mod config;
pub mod consumer;
pub mod convert;
pub mod data_dir;
mod entry_stream;
mod epoch;
mod error;
pub mod files;
mod index;
mod log;

/// The entries of the offset (`.index`) and time (`.timeindex`) indexes, decoded from bytes
/// read elsewhere (a remote tier's `.indexes` object): the log's own decoders.
pub mod index_entries {
    pub use crate::index::offset::{decode_entry as offset_entry, ENTRY_SIZE as OFFSET_ENTRY_SIZE};
    pub use crate::index::time::{decode_entry as time_entry, ENTRY_SIZE as TIME_ENTRY_SIZE};
}
pub mod producer_state;
krecords_codec::untrusted_modules! {
    pub mod raw_append;
}
mod reader;
mod recovery;
mod resync;
pub mod salvage;
pub mod sample;
mod segment;
pub mod ship;
pub mod storage;
mod swap;
pub mod transaction;
mod validate;

pub use cleaner::{CleanableInfo, CompactInfo};
pub use config::LogConfig;
pub use error::{Error, Location, RecordError, Result};
/// The codec this log is built on, re-exported so that one dependency gives both.
pub use krecords_codec as codec;
pub use log::{
    AppendInfo, AppendOrigin, Env, FetchInfo, FetchResult, ListOffsetsResult, Log, LogInfo,
    OffsetSpec, OpenOptions, ReadResult, RetainInfo, SegmentInfo,
};
pub use recovery::{Cut, Damage, RecoverInfo};
pub use storage::LockWait;
pub use transaction::IsolationLevel;
