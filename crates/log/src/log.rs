//! The partition log: segments, appends, reads, offset lookups, rolls, retention, durability.

use crate::clock::{Clock, SystemClock};
use crate::config::LogConfig;
use crate::consumer::{self, Consumed};
use crate::epoch::LeaderEpochCache;
use crate::error::{Error, Location, Result};
use crate::files::{self, CLEAN_SHUTDOWN_FILE, CONFIG_FILE, LOG_SUFFIX, RECOVERY_POINT_FILE};
use crate::producer_state::{Checked, Origin, ProducerState, ProducerStateManager, Staged};
use crate::recovery::{self, RecoverInfo};
use crate::segment::{BatchMeta, Segment};
use crate::storage::{DirLock, FsStorage, LockWait, MemStorage, ReadOnlyStorage, Storage};
use crate::transaction::{AbortedTransaction, AbortedTxn, IsolationLevel};
use crate::validate::{self, Settings};
use krecords_codec::read::v2::RECORDS_OFFSET;
use krecords_codec::read::{Batch, Entries};
use krecords_codec::write::{end_txn_marker, EndTxnBatch};
use krecords_codec::TimestampType;
use serde::Serialize;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The storage and clock a log uses.
#[derive(Debug, Clone)]
pub struct Env {
    /// File access.
    pub storage: Arc<dyn Storage>,
    /// Wall-clock time.
    pub clock: Arc<dyn Clock>,
}

impl Env {
    /// The given storage and clock.
    pub fn new(storage: Arc<dyn Storage>, clock: Arc<dyn Clock>) -> Self {
        Env { storage, clock }
    }

    /// The real file system and the system clock.
    pub fn fs() -> Self {
        Env::new(Arc::new(FsStorage), Arc::new(SystemClock))
    }

    /// A fresh [`MemStorage`] and the system clock (for examples and tests).
    pub fn memory() -> Self {
        Env::new(Arc::new(MemStorage::new()), Arc::new(SystemClock))
    }
}

impl Default for Env {
    fn default() -> Self {
        Env::fs()
    }
}

/// Who is appending (Kafka's `AppendOrigin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AppendOrigin {
    /// A producer: the batch is validated and the log assigns offsets; control batches are
    /// refused; idempotent batches get duplicate and sequence checks.
    Client,
    /// The transaction coordinator writing COMMIT / ABORT markers (see
    /// [`Log::append_end_txn`]): control batches are allowed, the client-only batch checks and
    /// the sequence checks are skipped, epochs and coordinator epochs are checked.
    Coordinator,
    /// Entries that already have their offsets, such as the batches of an existing segment
    /// (Kafka's `REPLICATION` origin: a follower appends the leader's batches as they are).
    /// They are stored byte for byte: each entry must be whole, within `max.message.bytes`
    /// and have a valid CRC, and the offsets are the entries' own, the first at or past the log
    /// end offset and each entry's past the one before it (a gap is allowed, as on a
    /// replica); [`Error::InvalidRecord`](crate::Error::InvalidRecord) otherwise.
    /// Records are not validated again, control batches are taken, the producer state is
    /// updated from the batches without duplicate, epoch or sequence checks, and the leader
    /// epoch cache from their partition leader epochs. One append may hold many entries.
    /// To move batches to other offsets first, use
    /// [`krecords_codec::write::set_base_offset`].
    Import,
}

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

/// What [`Log::fetch_into`] found, apart from the bytes it appended to the caller's buffer:
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
    const NONE: ListOffsetsResult = ListOffsetsResult {
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
    /// [`Log::cleanable`]); absent otherwise.
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

/// A Kafka partition log in a directory: segments, indexes and checkpoints in Kafka's layout.
///
/// Not thread-safe by itself (appends take `&mut self`); wrap it in a mutex to share it.
/// Dropping a log without [`Log::close`] leaves it as a crash would: the next open recovers it.
#[derive(Debug)]
pub struct Log {
    pub(crate) dir: PathBuf,
    pub(crate) env: Env,
    pub(crate) config: LogConfig,
    /// Oldest first; never empty; the last one is active.
    pub(crate) segments: Vec<Segment>,
    pub(crate) log_start_offset: i64,
    /// Segments from the one holding this offset on are scanned after an unclean shutdown.
    recovery_point: i64,
    leader_epoch: i32,
    epoch_cache: LeaderEpochCache,
    pub(crate) producer_state: ProducerStateManager,
    unflushed_messages: i64,
    last_flush_ms: i64,
    /// Set by a failed write or sync; every later write is refused.
    poisoned: Option<String>,
    recovery: RecoverInfo,
    /// The writer's lock, held while the log lives (`None` when read-only).
    _lock: Option<DirLock>,
    /// Opened with [`Log::open_read_only`]: every write is refused and nothing reaches the
    /// directory.
    read_only: bool,
}

/// How [`Log::open_with_options`], [`Log::create_with_options`] and
/// [`Log::recover_with_options`] take the directory.
///
/// A log open for writing holds an exclusive OS lock on [`files::LOCK_FILE`] in its directory
/// until it is closed or dropped, or its process dies; a second writer gets
/// [`Error::LogLocked`] before it changes anything. Read-only opens ([`Log::open_read_only`])
/// take no lock and are never refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// How long to wait while another writer holds the directory (default: not at all).
    pub lock_wait: LockWait,
    /// Write even into a partition directory of a running Kafka broker (one whose data
    /// directory's `.lock` the broker holds). Off by default: the broker keeps its own view of
    /// the files and would overwrite or trip over the changes.
    pub ignore_running_broker: bool,
}

impl OpenOptions {
    /// Waits as `wait` says for another writer to let go.
    pub fn wait(mut self, wait: LockWait) -> Self {
        self.lock_wait = wait;
        self
    }
}

/// Refuses `dir` when a running Kafka broker owns it, then takes the writer's lock.
fn lock_for_writing(st: &dyn Storage, dir: &Path, options: OpenOptions) -> Result<DirLock> {
    if !options.ignore_running_broker {
        match st.running_broker_lock(dir) {
            Ok(Some(lock_file)) => {
                return Err(Error::BrokerRunning {
                    dir: dir.to_path_buf(),
                    lock_file,
                })
            }
            Ok(None) => {}
            Err(e) => return Err(Error::io("check the broker lock of", dir, e)),
        }
    }
    match st.lock_dir(dir, options.lock_wait) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(Error::LogLocked {
            dir: dir.to_path_buf(),
        }),
        Err(e) => Err(Error::io("lock", dir.join(files::LOCK_FILE), e)),
    }
}

/// An append after its checks: what to write, or the answer to a duplicate.
enum Prepared<'a> {
    /// A producer's retry of a batch in the log (or staged before it): nothing to write.
    Duplicate(AppendInfo),
    /// New batches to write.
    Append(Box<Checks<'a>>),
}

/// What an append that passed its checks writes and records ([`Log::commit`]).
struct Checks<'a> {
    /// The entries to write, offsets assigned.
    validated: validate::Validated<'a>,
    /// Position, size, last offset and max timestamp of each batch of `validated`.
    metas: Vec<BatchMeta>,
    /// Per batch: partition leader epoch and base offset of a v2 batch, `None` for v0/v1.
    epochs: Vec<Option<(i32, i64)>>,
    /// The producer state changes.
    update: crate::producer_state::ProducerUpdate,
    /// The append time stamped, for LogAppendTime.
    log_append_time: Option<i64>,
}

fn is_storage_failure(e: &Error) -> bool {
    matches!(e, Error::Io { .. } | Error::CorruptFile { .. })
}

/// Kafka's `LogLoader` producer state steps (`removeStraySnapshots`, then
/// `rebuildProducerState`): loads the latest usable snapshot, no later than the first segment
/// whose transaction index recovery emptied, replays the log after it (refilling those
/// transaction indexes, as Kafka's `LogSegment.recover` does), and takes a snapshot at the log
/// end. Snapshots are also taken at the base offsets of the last two segments when the replay
/// passes them. Without a snapshot the replay starts at the log start offset (Kafka skips it
/// after a clean shutdown, assuming an upgrade from a broker without snapshots; this log never
/// does, so state is never silently lost).
fn load_producer_state(
    st: &dyn Storage,
    dir: &Path,
    names: &[String],
    config: &LogConfig,
    segments: &mut [Segment],
    now: i64,
) -> Result<ProducerStateManager> {
    let bases: Vec<i64> = segments.iter().map(Segment::base_offset).collect();
    let log_start = bases.first().copied().unwrap_or(0);
    let log_end = segments.last().map_or(log_start, Segment::next_offset);
    let mut ps = ProducerStateManager::new(log_start, now);
    ps.load_snapshot_names(st, dir, names, &bases)?;
    let rebuild_from = segments
        .iter()
        .find(|s| s.txn_index().needs_rebuild())
        .map(Segment::base_offset);
    let limit = rebuild_from.map_or(log_end, |r| r.min(log_end));
    ps.load_latest_snapshot(
        st,
        dir,
        log_start,
        limit,
        now,
        config.producer_id_expiration_ms,
    )?;
    let snapshot_bases = &bases[bases.len().saturating_sub(2)..];
    let mut scratch = Vec::new();
    for segment in segments.iter_mut() {
        let rebuild = segment.txn_index().needs_rebuild();
        if !rebuild && segment.next_offset() <= ps.map_end_offset() {
            continue;
        }
        let start = ps
            .map_end_offset()
            .max(segment.base_offset())
            .max(log_start);
        ps.set_map_end_offset(start);
        if start == segment.base_offset() && snapshot_bases.contains(&start) {
            ps.take_snapshot(st, dir)?;
        }
        let mut aborted = Vec::new();
        segment.for_each_batch_header(|b| {
            if b.last_offset() >= start {
                if let Some((txn, lso)) = ps.replay(b, &mut scratch) {
                    if txn.aborted {
                        aborted.push(AbortedTxn {
                            producer_id: txn.producer_id,
                            first_offset: txn.first_offset,
                            last_offset: txn.last_offset,
                            last_stable_offset: lso,
                        });
                    }
                }
            }
            Ok(())
        })?;
        if rebuild {
            for t in aborted {
                segment.append_aborted(st, t)?;
            }
            segment.txn_index_rebuilt()?;
        }
        ps.set_map_end_offset(segment.next_offset().max(start));
    }
    ps.set_map_end_offset(log_end);
    ps.take_snapshot(st, dir)?;
    st.sync_dir(dir).map_err(|e| Error::io("sync", dir, e))?;
    Ok(ps)
}

impl Log {
    /// Creates a log in `dir` (created if needed) on the real file system.
    ///
    /// # Errors
    ///
    /// [`Error::AlreadyExists`] if `dir` holds a log, [`Error::InvalidConfig`], I/O errors.
    pub fn create(dir: impl AsRef<Path>, config: LogConfig) -> Result<Log> {
        Log::create_with(dir, config, Env::fs())
    }

    /// Creates a log in `dir` with the given storage and clock.
    ///
    /// Writes `krec-log.json` and an empty first segment (base offset 0, indexes preallocated),
    /// and syncs the directory.
    ///
    /// # Errors
    ///
    /// As [`Log::create`].
    pub fn create_with(dir: impl AsRef<Path>, config: LogConfig, env: Env) -> Result<Log> {
        Log::create_with_options(dir, config, env, OpenOptions::default())
    }

    /// As [`Log::create_with`], taking the directory as `options` say.
    ///
    /// # Errors
    ///
    /// As [`Log::create`], and [`Error::LogLocked`] / [`Error::BrokerRunning`].
    pub fn create_with_options(
        dir: impl AsRef<Path>,
        config: LogConfig,
        env: Env,
        options: OpenOptions,
    ) -> Result<Log> {
        let dir = dir.as_ref().to_path_buf();
        let storage = env.storage.clone();
        config.validate()?;
        storage
            .create_dir_all(&dir)
            .map_err(|e| Error::io("create", &dir, e))?;
        let lock = lock_for_writing(storage.as_ref(), &dir, options)?;
        let names = storage
            .list_dir(&dir)
            .map_err(|e| Error::io("list", &dir, e))?;
        if names
            .iter()
            .any(|n| n == CONFIG_FILE || files::parse_file_name(n, LOG_SUFFIX).is_some())
        {
            return Err(Error::AlreadyExists { path: dir });
        }
        let json = serde_json::to_vec_pretty(&config.to_json()).unwrap_or_default();
        files::write_atomic(storage.as_ref(), &dir, CONFIG_FILE, &json)?;
        let now = env.clock.now_ms();
        let segment = Segment::create(storage.as_ref(), &dir, 0, &config, now)?;
        storage
            .sync_dir(&dir)
            .map_err(|e| Error::io("sync", &dir, e))?;
        Ok(Log {
            dir,
            env,
            config,
            segments: vec![segment],
            log_start_offset: 0,
            recovery_point: 0,
            leader_epoch: 0,
            epoch_cache: LeaderEpochCache::default(),
            producer_state: ProducerStateManager::new(0, now),
            unflushed_messages: 0,
            last_flush_ms: now,
            poisoned: None,
            recovery: RecoverInfo {
                segments: 1,
                clean_shutdown: true,
                ..RecoverInfo::default()
            },
            _lock: Some(lock),
            read_only: false,
        })
    }

    /// Opens the log in `dir` on the real file system, recovering it if it was not closed
    /// cleanly (see [`Log::recovery_info`]).
    ///
    /// A directory without `krec-log.json` but with `.log` segments (one a Kafka broker wrote)
    /// opens with the default configuration; its segments are scanned as after a crash.
    ///
    /// # Errors
    ///
    /// [`Error::NotALog`], a corrupt configuration, I/O errors.
    pub fn open(dir: impl AsRef<Path>) -> Result<Log> {
        Log::open_with(dir, Env::fs())
    }

    /// Opens the log in `dir` with the given storage and clock.
    ///
    /// # Errors
    ///
    /// As [`Log::open`].
    pub fn open_with(dir: impl AsRef<Path>, env: Env) -> Result<Log> {
        Log::open_with_options(dir, env, OpenOptions::default())
    }

    /// Opens the log in `dir` for writing, taking the directory as `options` say (waiting for
    /// another writer, or writing into a running broker's directory).
    ///
    /// # Errors
    ///
    /// As [`Log::open`].
    pub fn open_with_options(dir: impl AsRef<Path>, env: Env, options: OpenOptions) -> Result<Log> {
        Log::load(dir.as_ref(), env, false, Some(options))
    }

    /// Opens the log in `dir` for reading only, on the real file system. See
    /// [`Log::open_read_only_with`].
    ///
    /// # Errors
    ///
    /// [`Error::NotALog`], a corrupt configuration, I/O errors.
    pub fn open_read_only(dir: impl AsRef<Path>) -> Result<Log> {
        Log::open_read_only_with(dir, Env::fs())
    }

    /// Opens the log in `dir` for reading only: nothing in the directory is created, deleted,
    /// renamed or rewritten, and no lock is taken, so it works on a live log (a writer's, or a
    /// Kafka broker's partition directory), a read-only mount, or files without write
    /// permission.
    ///
    /// The log is loaded as [`Log::open`] loads it — a torn tail is cut, missing or damaged
    /// indexes are rebuilt, producer state is replayed — but through a
    /// [`ReadOnlyStorage`], so all of that happens in memory. Each file's length is taken when
    /// it is first opened: the log shows what was complete then, never a batch a writer is
    /// still writing (a partial or corrupt tail is left out, as recovery would cut it), and
    /// not what is appended later. Every write ([`Log::append`], [`Log::retain`], ...) is
    /// refused with [`Error::ReadOnly`]; [`Log::close`] does nothing.
    ///
    /// # Errors
    ///
    /// As [`Log::open_read_only`].
    pub fn open_read_only_with(dir: impl AsRef<Path>, env: Env) -> Result<Log> {
        let view = Env::new(
            Arc::new(ReadOnlyStorage::new(env.storage.clone())),
            env.clock.clone(),
        );
        Log::load(dir.as_ref(), view, false, None)
    }

    /// Opens the log in `dir`, scans every segment (whether or not it was closed cleanly),
    /// truncates at the first invalid batch, rebuilds every index, and closes it again.
    /// This is `krec log recover`.
    ///
    /// # Errors
    ///
    /// As [`Log::open`].
    pub fn recover(dir: impl AsRef<Path>) -> Result<RecoverInfo> {
        Log::recover_with(dir, Env::fs())
    }

    /// As [`Log::recover`] with the given storage and clock.
    ///
    /// # Errors
    ///
    /// As [`Log::open`].
    pub fn recover_with(dir: impl AsRef<Path>, env: Env) -> Result<RecoverInfo> {
        Log::recover_with_options(dir, env, OpenOptions::default())
    }

    /// As [`Log::recover_with`], taking the directory as `options` say.
    ///
    /// # Errors
    ///
    /// As [`Log::open`].
    pub fn recover_with_options(
        dir: impl AsRef<Path>,
        env: Env,
        options: OpenOptions,
    ) -> Result<RecoverInfo> {
        let log = Log::load(dir.as_ref(), env, true, Some(options))?;
        let info = log.recovery.clone();
        log.close()?;
        Ok(info)
    }

    /// Loads the log; `writer` is `Some` for a writer (which takes the lock as its options
    /// say), `None` for a read-only open (whose storage is a [`ReadOnlyStorage`]).
    fn load(dir: &Path, env: Env, full_scan: bool, writer: Option<OpenOptions>) -> Result<Log> {
        let storage = env.storage.clone();
        let st = storage.as_ref();
        let list = || match st.list_dir(dir) {
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::NotALog {
                path: dir.to_path_buf(),
            }),
            Err(e) => Err(Error::io("list", dir, e)),
        };
        let mut names = list()?;
        let looks_like_log = |names: &[String]| {
            names
                .iter()
                .any(|n| n == CONFIG_FILE || files::parse_file_name(n, LOG_SUFFIX).is_some())
        };
        let lock = match writer {
            Some(options) => {
                // Nothing is created in a directory that holds no log, not even the lock.
                if !looks_like_log(&names) {
                    return Err(Error::NotALog {
                        path: dir.to_path_buf(),
                    });
                }
                let lock = lock_for_writing(st, dir, options)?;
                // The previous writer may have changed the directory while we waited.
                names = list()?;
                Some(lock)
            }
            None => None,
        };
        let has_config = names.iter().any(|n| n == CONFIG_FILE);
        let config = match files::read_small_file(st, &dir.join(CONFIG_FILE))? {
            Some(bytes) => {
                let json: serde_json::Value =
                    serde_json::from_slice(&bytes).map_err(|e| Error::CorruptFile {
                        path: dir.join(CONFIG_FILE),
                        reason: format!("not JSON: {e}"),
                    })?;
                LogConfig::from_json(&json)?
            }
            None => LogConfig::default(),
        };
        let bases = recovery::clean_dir(st, dir, &names)?;
        if !has_config && bases.is_empty() {
            return Err(Error::NotALog {
                path: dir.to_path_buf(),
            });
        }
        let clean = names.iter().any(|n| n == CLEAN_SHUTDOWN_FILE) && !full_scan;
        let recover_from = if clean {
            None
        } else if full_scan {
            Some(i64::MIN)
        } else {
            let path = dir.join(RECOVERY_POINT_FILE);
            Some(match files::read_small_file(st, &path)? {
                Some(bytes) => files::parse_recovery_point(&path, &bytes).unwrap_or(i64::MIN),
                None => i64::MIN,
            })
        };
        let now = env.clock.now_ms();
        let (mut segments, mut info) =
            recovery::load_segments(st, dir, &config, &bases, recover_from, now)?;
        if segments.is_empty() {
            segments.push(Segment::create(st, dir, 0, &config, now)?);
            st.sync_dir(dir).map_err(|e| Error::io("sync", dir, e))?;
        }
        let active = segments.len() - 1;
        segments[active].resize_indexes(&config)?;
        let log_end = segments[active].next_offset();
        let (mut epoch_cache, readable) = LeaderEpochCache::load(st, dir)?;
        let mut epochs_changed = !readable;
        epochs_changed |= epoch_cache.truncate_from_end(log_end);
        epochs_changed |= epoch_cache.truncate_from_start(segments[0].base_offset());
        if epochs_changed {
            epoch_cache.store(st, dir)?;
        }
        if names.iter().any(|n| n == CLEAN_SHUTDOWN_FILE) {
            // From here on a crash must not look like a clean shutdown.
            files::remove_if_exists(st, &dir.join(CLEAN_SHUTDOWN_FILE))?;
            st.sync_dir(dir).map_err(|e| Error::io("sync", dir, e))?;
        }
        info.segments = segments.len();
        info.next_offset = log_end;
        let producer_state = load_producer_state(st, dir, &names, &config, &mut segments, now)?;
        Ok(Log {
            dir: dir.to_path_buf(),
            log_start_offset: segments[0].base_offset(),
            recovery_point: segments[active].base_offset(),
            leader_epoch: epoch_cache.latest_epoch().unwrap_or(0),
            segments,
            env,
            config,
            epoch_cache,
            producer_state,
            unflushed_messages: 0,
            last_flush_ms: now,
            poisoned: None,
            recovery: info,
            read_only: lock.is_none(),
            _lock: lock,
        })
    }

    /// The log directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The configuration.
    pub fn config(&self) -> &LogConfig {
        &self.config
    }

    /// What opening the log found and repaired.
    pub fn recovery_info(&self) -> &RecoverInfo {
        &self.recovery
    }

    /// The first offset of the log.
    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset
    }

    /// The offset the next append gets.
    pub fn log_end_offset(&self) -> i64 {
        self.active().next_offset()
    }

    /// The high watermark: the log end offset, as this log is its only replica.
    pub fn high_watermark(&self) -> i64 {
        self.log_end_offset()
    }

    /// The last stable offset: the first offset of the earliest open transaction, else the
    /// high watermark. read_committed fetches stop here.
    pub fn last_stable_offset(&self) -> i64 {
        self.producer_state
            .last_stable_offset(self.high_watermark())
    }

    /// The first offset of the earliest open transaction (Kafka's first unstable offset), `None`
    /// when no transaction is open.
    pub fn first_unstable_offset(&self) -> Option<i64> {
        self.producer_state.first_unstable_offset()
    }

    /// What the log knows about a producer id: epoch, last batches, open transaction.
    pub fn producer_state(&self, producer_id: i64) -> Option<ProducerState> {
        self.producer_state.producer(producer_id).cloned()
    }

    /// Every producer id the log knows, in increasing order.
    pub fn producer_states(&self) -> Vec<ProducerState> {
        self.producer_state.producers().cloned().collect()
    }

    /// Offsets of the producer state snapshots in the directory (`<offset>.snapshot`), oldest
    /// first.
    pub fn producer_snapshot_offsets(&self) -> Vec<i64> {
        self.producer_state.snapshot_offsets().collect()
    }

    /// Every entry of the transaction indexes (the aborted transactions whose markers are in
    /// the log), oldest first.
    pub fn aborted_txns(&self) -> Vec<AbortedTxn> {
        self.segments
            .iter()
            .flat_map(|s| s.txn_index().entries().iter().copied())
            .collect()
    }

    /// Forgets the producer ids without an open transaction whose last write is at least
    /// `producer.id.expiration.ms` old (Kafka's `removeExpiredProducers`; appends run it every
    /// `producer.id.expiration.check.interval.ms`). Returns how many were removed.
    pub fn remove_expired_producers(&mut self) -> usize {
        let now = self.env.clock.now_ms();
        self.producer_state
            .remove_expired(now, self.config.producer_id_expiration_ms)
    }

    /// The leader epoch stamped on appended v2 batches (0 for a new log; after reopening, the
    /// latest epoch of `leader-epoch-checkpoint`).
    pub fn leader_epoch(&self) -> i32 {
        self.leader_epoch
    }

    /// Sets the leader epoch for later appends (a new leadership in Kafka's terms).
    pub fn set_leader_epoch(&mut self, epoch: i32) {
        self.leader_epoch = epoch;
    }

    /// Whether an earlier storage failure made the log refuse writes.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.is_some()
    }

    fn active(&self) -> &Segment {
        // `segments` is never empty.
        &self.segments[self.segments.len() - 1]
    }

    fn active_mut(&mut self) -> &mut Segment {
        let last = self.segments.len() - 1;
        &mut self.segments[last]
    }

    pub(crate) fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly {
                dir: self.dir.clone(),
            });
        }
        match &self.poisoned {
            Some(cause) => Err(Error::Poisoned {
                cause: cause.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Poisons the log when `r` is a storage failure.
    pub(crate) fn guard<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            if is_storage_failure(e) {
                self.poisoned = Some(e.to_string());
            }
        }
        r
    }

    /// Validates `bytes` (the records of one produce request for this partition: v0/v1
    /// messages, a v1 compressed wrapper or one v2 batch) as Kafka's leader does, assigns
    /// offsets, writes the result to the active segment (rolling first if needed), and syncs
    /// as `flush.messages` / `flush.ms` say.
    ///
    /// See [the crate documentation](crate#append-validation) for the rules, and
    /// [`producer_state`](crate::producer_state) for idempotent and transactional producers: a
    /// retried batch is answered with the original's offsets and `duplicate: true`, and nothing
    /// is written. A v2 append holds one batch; split a buffer of several batches and append
    /// each, or hand them to [`Log::append_all`] to have them written all or nothing.
    ///
    /// # Errors
    ///
    /// A validation error (`CORRUPT_MESSAGE`, `INVALID_RECORD`, `MESSAGE_TOO_LARGE`,
    /// `RECORD_LIST_TOO_LARGE`, `INVALID_TIMESTAMP`, `UNSUPPORTED_FOR_MESSAGE_FORMAT`, ...)
    /// or a producer state error (`INVALID_PRODUCER_EPOCH`, `OUT_OF_ORDER_SEQUENCE_NUMBER`,
    /// `INVALID_TXN_STATE`, `TRANSACTION_COORDINATOR_FENCED`) leaves the log untouched. A
    /// storage error poisons the log.
    pub fn append(&mut self, bytes: &[u8], origin: AppendOrigin) -> Result<AppendInfo> {
        self.check_writable()?;
        let now = self.start_append();
        match self.prepare(bytes, origin, now, self.log_end_offset(), None)? {
            Prepared::Duplicate(info) => Ok(info),
            Prepared::Append(p) => self.commit(p, now),
        }
    }

    /// Appends several entries all or nothing: each is what [`Log::append`] takes (the records
    /// of one produce request: one v2 batch, a v1 compressed wrapper or v0/v1 messages), and
    /// every one of them is validated, in order, before anything is written.
    ///
    /// Entry `i` is checked as [`Log::append`] would check it after entries `0..i` had been
    /// appended: it gets the offsets it would get, and its producer checks (duplicates,
    /// epochs, sequences, transactions) see a staged copy of the producer state with the
    /// earlier entries in it. So a batch may follow another of the same producer in the same
    /// call, and a retry of an earlier entry of the call is a duplicate of it. A duplicate is
    /// answered with the original's offsets and `duplicate: true` and writes nothing, as in
    /// [`Log::append`]; the other entries are written in order (each one rolls the segment as
    /// an append would), and their [`AppendInfo`]s are returned in entry order.
    ///
    /// # Errors
    ///
    /// When any entry is refused, nothing at all is written and the error is
    /// [`Error::InEntry`], naming the entry (its index in `entries`, from 0) and wrapping the
    /// error [`Log::append`] gives for it ([`Error::kafka_name`] is the wrapped error's). A
    /// storage error while writing poisons the log as in [`Log::append`]; the entries written
    /// before it stay in the log (all-or-nothing covers refusals, not storage failures or
    /// crashes).
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_codec::write::{NewRecord, V2Builder};
    /// use krecords_log::{AppendOrigin, Env, Log, LogConfig};
    ///
    /// # fn main() -> krecords_log::Result<()> {
    /// let mut log = Log::create_with("/t-0", LogConfig::default(), Env::memory())?;
    /// let batch = |seq: i32| {
    ///     let mut b = V2Builder::new(0).producer(7, 0, seq);
    ///     b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"x"))).unwrap();
    ///     b.finish().unwrap()
    /// };
    /// let (b0, b1, gap) = (batch(0), batch(1), batch(5));
    /// // Sequence 5 does not follow 1: neither of the first two batches is written.
    /// let e = log.append_all(&[&b0, &b1, &gap], AppendOrigin::Client).unwrap_err();
    /// assert_eq!(e.kafka_name(), "OUT_OF_ORDER_SEQUENCE_NUMBER");
    /// assert_eq!(e.in_entry().map(|(i, _)| i), Some(2));
    /// assert_eq!(log.log_end_offset(), 0);
    /// // Without it they go in; a retry of the first in the same call is its duplicate.
    /// let infos = log.append_all(&[&b0, &b1, &b0], AppendOrigin::Client)?;
    /// assert_eq!(infos.iter().map(|i| i.base_offset).collect::<Vec<_>>(), [0, 1, 0]);
    /// assert!(infos[2].duplicate);
    /// # Ok(())
    /// # }
    /// ```
    pub fn append_all(
        &mut self,
        entries: &[&[u8]],
        origin: AppendOrigin,
    ) -> Result<Vec<AppendInfo>> {
        self.check_writable()?;
        let now = self.start_append();
        // 1. Validate every entry against the staged offsets and producer state.
        let mut staged = Staged::default();
        let mut next_offset = self.log_end_offset();
        let mut steps = Vec::with_capacity(entries.len());
        for (index, bytes) in entries.iter().enumerate() {
            let step = self
                .prepare(bytes, origin, now, next_offset, Some(&staged))
                .map_err(|e| Error::InEntry {
                    index,
                    source: Box::new(e),
                })?;
            if let Prepared::Append(p) = &step {
                self.producer_state.stage(&mut staged, &p.update);
                next_offset = p.validated.last_offset + 1;
            }
            steps.push(step);
        }
        // 2. Write them.
        let mut infos = Vec::with_capacity(steps.len());
        for step in steps {
            infos.push(match step {
                Prepared::Duplicate(info) => info,
                Prepared::Append(p) => self.commit(p, now)?,
            });
        }
        Ok(infos)
    }

    /// What every append does first: producer id expiration when due; returns the time of the
    /// append.
    fn start_append(&mut self) -> i64 {
        let now = self.env.clock.now_ms();
        self.producer_state.maybe_remove_expired(
            now,
            self.config.producer_id_expiration_ms,
            self.config.producer_id_expiration_check_interval_ms,
        );
        now
    }

    /// The checks of an append, changing nothing: validation and offset assignment from
    /// `next_offset`, the size limits, and the producer checks against the producer state as
    /// `staged` changes it.
    fn prepare<'a>(
        &self,
        bytes: &'a [u8],
        origin: AppendOrigin,
        now: i64,
        next_offset: i64,
        staged: Option<&Staged>,
    ) -> Result<Prepared<'a>> {
        let settings = Settings {
            config: &self.config,
            now,
            partition_leader_epoch: self.leader_epoch,
            origin,
        };
        let validated = match origin {
            AppendOrigin::Import => validate::import(bytes, next_offset, &self.config)?,
            AppendOrigin::Client | AppendOrigin::Coordinator => {
                validate::validate(bytes, next_offset, &settings)?
            }
        };
        let total_size = validated.bytes.len() + validated.tail.len();
        // With a tail, `validated.bytes` is the patched header of one non-control v2 batch whose
        // records stay in the input: the producer checks and the index bookkeeping read only
        // header fields, so they get a view of the header alone (its length field set to an
        // empty records section) and the batch's size is the whole.
        let mut header_view = [0u8; RECORDS_OFFSET];
        let mut batches: Vec<Batch<'_>> = Vec::new();
        if !validated.tail.is_empty() {
            header_view.copy_from_slice(&validated.bytes);
            let empty = (RECORDS_OFFSET - krecords_codec::LOG_OVERHEAD) as i32;
            header_view[8..12].copy_from_slice(&empty.to_be_bytes());
        }
        let parsed: &[u8] = if validated.tail.is_empty() {
            &validated.bytes
        } else {
            &header_view
        };
        // Validated entries: whole, so a truncated one is an error (a bug), never a tail.
        for entry in Entries::new(parsed).strict() {
            let b = entry.map_err(|e| Error::Codec {
                at: Location::Unknown,
                source: e,
            })?;
            if validated.rebuilt && b.size_in_bytes() > self.config.max_message_bytes as usize {
                return Err(Error::MessageTooLarge {
                    at: Location::Unknown,
                    size: b.size_in_bytes(),
                    max: self.config.max_message_bytes,
                });
            }
            batches.push(b);
        }
        if total_size > self.config.segment_bytes as usize {
            return Err(Error::RecordListTooLarge {
                size: total_size,
                max: self.config.segment_bytes,
            });
        }
        let append_time = self.config.message_timestamp_type == TimestampType::LogAppendTime;
        let producer_origin = match origin {
            AppendOrigin::Client => Origin::Client,
            AppendOrigin::Coordinator => Origin::Coordinator,
            AppendOrigin::Import => Origin::Replay,
        };
        let mut scratch = Vec::new();
        let update =
            match self
                .producer_state
                .check(&batches, producer_origin, staged, &mut scratch)?
            {
                Checked::Append(update) => update,
                Checked::Duplicate(dup) => {
                    return Ok(Prepared::Duplicate(AppendInfo {
                        base_offset: dup.first_offset(),
                        last_offset: dup.last_offset,
                        log_append_time: append_time.then_some(dup.timestamp),
                        duplicate: true,
                        record_count: 0,
                        max_timestamp: -1,
                        size_bytes: 0,
                        rebuilt: false,
                        trimmed_bytes: validated.trimmed_bytes,
                    }));
                }
            };
        let metas: Vec<BatchMeta> = batches
            .iter()
            .map(|b| BatchMeta {
                position: b.position() as u64,
                size: if validated.tail.is_empty() {
                    b.size_in_bytes() as u64
                } else {
                    total_size as u64
                },
                last_offset: b.last_offset(),
                max_timestamp: b.max_timestamp(),
            })
            .collect();
        let epochs = batches
            .iter()
            .map(|b| match b {
                Batch::V2(v) => Some((v.raw_partition_leader_epoch(), v.base_offset())),
                Batch::Legacy(_) => None,
            })
            .collect();
        drop(batches);
        // Imported batches keep the times they have.
        let log_append_time =
            (append_time && origin != AppendOrigin::Import).then_some(validated.now);
        Ok(Prepared::Append(Box::new(Checks {
            validated,
            metas,
            epochs,
            update,
            log_append_time,
        })))
    }

    /// Writes an append that passed [`Log::prepare`] (rolling first if needed), updates the
    /// leader epochs, producer state and transaction index, and syncs as `flush.messages` /
    /// `flush.ms` say. Only storage errors are possible; they poison the log.
    fn commit(&mut self, p: Box<Checks<'_>>, now: i64) -> Result<AppendInfo> {
        let Checks {
            validated,
            metas,
            epochs,
            update,
            log_append_time,
        } = *p;
        let max_timestamp = metas.iter().map(|m| m.max_timestamp).max().unwrap_or(-1);
        let size = (validated.bytes.len() + validated.tail.len()) as u64;
        if self.active().should_roll(
            &self.config,
            size,
            max_timestamp,
            validated.last_offset,
            now,
        ) {
            let r = self.roll_at(Some(validated.first_offset));
            self.guard(r)?;
        }
        let mut epochs_changed = false;
        for e in epochs {
            epochs_changed |= match e {
                Some((epoch, base_offset)) => self.epoch_cache.assign(epoch, base_offset),
                None => self.epoch_cache.clear(),
            };
        }
        let r = self
            .active_mut()
            .append(&validated.bytes, validated.tail, &metas);
        self.guard(r)?;
        if epochs_changed {
            let r = self.epoch_cache.store(self.env.storage.as_ref(), &self.dir);
            self.guard(r)?;
        }
        self.producer_state.apply(&update);
        for txn in &update.completed {
            let lso = self.producer_state.last_stable_offset_after(txn);
            if txn.aborted {
                let st = self.env.storage.clone();
                let entry = AbortedTxn {
                    producer_id: txn.producer_id,
                    first_offset: txn.first_offset,
                    last_offset: txn.last_offset,
                    last_stable_offset: lso,
                };
                let r = self.active_mut().append_aborted(st.as_ref(), entry);
                self.guard(r)?;
            }
            self.producer_state.complete_txn(txn);
        }
        self.producer_state
            .set_map_end_offset(validated.last_offset + 1);
        self.unflushed_messages = self
            .unflushed_messages
            .saturating_add(i64::try_from(validated.record_count).unwrap_or(i64::MAX));
        if self.unflushed_messages >= self.config.flush_messages
            || now.saturating_sub(self.last_flush_ms) >= self.config.flush_ms
        {
            self.flush()?;
        }
        Ok(AppendInfo {
            base_offset: validated.first_offset,
            last_offset: validated.last_offset,
            log_append_time,
            duplicate: false,
            record_count: validated.record_count,
            max_timestamp,
            size_bytes: size as usize,
            rebuilt: validated.rebuilt,
            trimmed_bytes: validated.trimmed_bytes,
        })
    }

    /// Writes a transaction marker, as the transaction coordinator does through
    /// WriteTxnMarkers: a control batch (transactional, base sequence -1) of one COMMIT or ABORT
    /// record with `coordinator_epoch`, for `producer_id` at `producer_epoch`, appended with
    /// [`AppendOrigin::Coordinator`]. It ends the producer's open transaction, if any (a marker
    /// without one is still written, as Kafka writes it); an aborted transaction is added to
    /// the active segment's `.txnindex`. `timestamp` is the marker record's timestamp (Kafka's
    /// coordinator uses its clock); it is checked like any CreateTime timestamp.
    ///
    /// # Errors
    ///
    /// `INVALID_PRODUCER_EPOCH` for an epoch below the producer's, `TRANSACTION_COORDINATOR_FENCED`
    /// for a coordinator epoch below the last marker's, `INVALID_RECORD` for a negative producer
    /// id or epoch, `UNSUPPORTED_FOR_MESSAGE_FORMAT` below message format v2, `INVALID_TIMESTAMP`,
    /// storage errors.
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_codec::write::{NewRecord, V2Builder};
    /// use krecords_log::transaction::IsolationLevel;
    /// use krecords_log::{AppendOrigin, Env, Log, LogConfig};
    ///
    /// # fn main() -> krecords_log::Result<()> {
    /// let mut log = Log::create_with("/t-0", LogConfig::default(), Env::memory())?;
    /// let now = 1_714_000_000_000;
    /// let mut b = V2Builder::new(0).producer(42, 0, 0).transactional(true);
    /// b.append(&NewRecord::new(now, None, Some(b"pending"))).unwrap();
    /// log.append(&b.finish().unwrap(), AppendOrigin::Client)?;
    /// assert_eq!(log.last_stable_offset(), 0);
    /// let marker = log.append_end_txn(42, 0, 0, false, now)?;
    /// assert_eq!((marker.base_offset, log.last_stable_offset()), (1, 2));
    /// let seen = log.consume(0, 1 << 20, IsolationLevel::ReadCommitted)?;
    /// assert!(seen.records.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn append_end_txn(
        &mut self,
        producer_id: i64,
        producer_epoch: i16,
        coordinator_epoch: i32,
        commit: bool,
        timestamp: i64,
    ) -> Result<AppendInfo> {
        if producer_id < 0 || producer_epoch < 0 {
            return Err(Error::invalid_record(
                Location::Unknown,
                format!(
                    "a transaction marker needs a producer id and epoch, not {producer_id} and {producer_epoch}"
                ),
            ));
        }
        let bytes = end_txn_marker(&EndTxnBatch {
            base_offset: 0,
            partition_leader_epoch: -1,
            producer_id,
            producer_epoch,
            coordinator_epoch,
            commit,
            timestamp,
        })
        .map_err(|e| Error::Codec {
            at: Location::Unknown,
            source: e,
        })?;
        self.append(&bytes, AppendOrigin::Coordinator)
    }

    /// Syncs the active segment's log file (older segments were synced when they rolled).
    ///
    /// # Errors
    ///
    /// A sync failure, which poisons the log.
    pub fn flush(&mut self) -> Result<()> {
        self.check_writable()?;
        let r = self.active().flush();
        self.guard(r)?;
        self.unflushed_messages = 0;
        self.last_flush_ms = self.env.clock.now_ms();
        Ok(())
    }

    /// Rolls to a new empty segment at the log end offset (nothing happens when the active
    /// segment is empty).
    ///
    /// # Errors
    ///
    /// Storage errors, which poison the log.
    pub fn roll(&mut self) -> Result<()> {
        self.check_writable()?;
        let r = self.roll_at(None);
        self.guard(r)
    }

    /// Kafka's `roll`: seals the active segment (final time index entry, trimmed indexes, all
    /// synced), creates the next one at `max(expected, log end offset)`, syncs the directory,
    /// takes a producer state snapshot at the new base offset, moves the recovery point to it and
    /// deletes the snapshots no longer needed.
    fn roll_at(&mut self, expected_next_offset: Option<i64>) -> Result<()> {
        let log_end = self.log_end_offset();
        let base = expected_next_offset.map_or(log_end, |o| o.max(log_end));
        if self.active().size() == 0 && self.active().base_offset() == base {
            return Ok(());
        }
        let st = self.env.storage.clone();
        self.active_mut().seal()?;
        let now = self.env.clock.now_ms();
        let segment = Segment::create(st.as_ref(), &self.dir, base, &self.config, now)?;
        st.sync_dir(&self.dir)
            .map_err(|e| Error::io("sync", &self.dir, e))?;
        self.segments.push(segment);
        self.unflushed_messages = 0;
        self.producer_state.set_map_end_offset(base);
        self.producer_state.take_snapshot(st.as_ref(), &self.dir)?;
        self.set_recovery_point(base)?;
        self.delete_old_snapshots()
    }

    /// Kafka's `deleteSnapshotsAfterRecoveryPointCheckpoint`: keeps the snapshots of the last
    /// two segments and of the segment before the recovery point.
    fn delete_old_snapshots(&mut self) -> Result<()> {
        let lower = |offset: i64| {
            self.segments
                .iter()
                .rev()
                .find(|s| s.base_offset() < offset)
                .map(Segment::base_offset)
        };
        let active = self.active().base_offset();
        let two_segments = lower(active).unwrap_or(active);
        let recovery = lower(self.recovery_point).unwrap_or(self.recovery_point);
        let st = self.env.storage.clone();
        if self.producer_state.delete_snapshots_before(
            st.as_ref(),
            &self.dir,
            two_segments.min(recovery),
        )? {
            st.sync_dir(&self.dir)
                .map_err(|e| Error::io("sync", &self.dir, e))?;
        }
        Ok(())
    }

    fn set_recovery_point(&mut self, offset: i64) -> Result<()> {
        files::write_atomic(
            self.env.storage.as_ref(),
            &self.dir,
            RECOVERY_POINT_FILE,
            format!("{offset}\n").as_bytes(),
        )?;
        self.recovery_point = offset;
        Ok(())
    }

    /// Reads whole entries starting with the one holding `offset`, up to `max_bytes` (at least
    /// one entry even when it is larger, as Kafka's `minOneMessage`), across segments. The
    /// bytes are returned as stored: no decompression, no conversion.
    ///
    /// # Errors
    ///
    /// [`Error::OffsetOutOfRange`] outside `[log start offset, log end offset]`; corruption or
    /// I/O errors met while reading.
    pub fn read(&self, offset: i64, max_bytes: usize) -> Result<ReadResult> {
        let f = self.fetch(offset, max_bytes, IsolationLevel::ReadUncommitted)?;
        Ok(ReadResult {
            bytes: f.bytes,
            next_offset: f.next_offset,
            high_watermark: f.high_watermark,
            log_start_offset: f.log_start_offset,
        })
    }

    /// Reads as a Kafka Fetch does at `isolation`: whole entries from the one holding `offset`,
    /// up to `max_bytes` (at least one entry), stopping at the high watermark
    /// (read_uncommitted) or at the last stable offset (read_committed: an offset at or past it
    /// returns no bytes, as Kafka does). For read_committed the aborted transactions that
    /// overlap the range returned are listed, from the transaction indexes of the segments from
    /// the one holding `offset` on (Kafka's `collectAbortedTransactions`). Kafka bounds that
    /// range from the offset index (an approximation from above); this log uses the offset after
    /// the last entry returned, which lists no transaction that starts after the bytes.
    ///
    /// # Errors
    ///
    /// [`Error::OffsetOutOfRange`] outside `[log start offset, log end offset]`; corruption or
    /// I/O errors met while reading.
    pub fn fetch(
        &self,
        offset: i64,
        max_bytes: usize,
        isolation: IsolationLevel,
    ) -> Result<FetchResult> {
        let mut bytes = Vec::new();
        let info = self.fetch_into(offset, max_bytes, isolation, &mut bytes)?;
        Ok(FetchResult {
            bytes,
            next_offset: info.next_offset,
            high_watermark: info.high_watermark,
            last_stable_offset: info.last_stable_offset,
            log_start_offset: info.log_start_offset,
            aborted_transactions: info.aborted_transactions,
        })
    }

    /// [`Log::fetch`] into a buffer of the caller's: the entries are appended to `buf` (read
    /// from the segment files straight into it, nothing else allocated for them), so one buffer
    /// serves fetch after fetch, or a response being assembled takes the entries where they
    /// belong. `max_bytes` counts the bytes of this fetch only, not what `buf` held before;
    /// [`FetchInfo::range`] says where in `buf` they are. On error `buf` is as it was.
    ///
    /// To share a [`FetchResult`]'s bytes instead (between threads, consumers, or as
    /// [`OwnedRecord`](krecords_codec::read::OwnedRecord)s), turn them into a `bytes::Bytes`:
    /// `Bytes::from(result.bytes)` takes the vector's allocation without copying.
    ///
    /// # Errors
    ///
    /// As [`Log::fetch`].
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_codec::write::{NewRecord, V2Builder};
    /// use krecords_log::{AppendOrigin, Env, IsolationLevel, Log, LogConfig};
    ///
    /// # fn main() -> krecords_log::Result<()> {
    /// let mut log = Log::create_with("/t-0", LogConfig::default(), Env::memory())?;
    /// for v in [b"a", b"b"] {
    ///     let mut b = V2Builder::new(0);
    ///     b.append(&NewRecord::new(1_714_000_000_000, None, Some(v))).unwrap();
    ///     log.append(&b.finish().unwrap(), AppendOrigin::Client)?;
    /// }
    /// let mut buf = b"response header".to_vec();
    /// let info = log.fetch_into(0, 1 << 20, IsolationLevel::ReadUncommitted, &mut buf)?;
    /// assert_eq!((info.range.start, info.next_offset), (15, 2));
    /// assert_eq!(&buf[info.range], &log.read(0, 1 << 20)?.bytes[..]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fetch_into(
        &self,
        offset: i64,
        max_bytes: usize,
        isolation: IsolationLevel,
        buf: &mut Vec<u8>,
    ) -> Result<FetchInfo> {
        let log_end = self.log_end_offset();
        let start = buf.len();
        let mut result = FetchInfo {
            range: start..start,
            next_offset: offset,
            high_watermark: self.high_watermark(),
            last_stable_offset: self.last_stable_offset(),
            log_start_offset: self.log_start_offset,
            aborted_transactions: None,
        };
        if offset < self.log_start_offset || offset > log_end {
            return Err(Error::OffsetOutOfRange {
                offset,
                log_start_offset: self.log_start_offset,
                log_end_offset: log_end,
            });
        }
        let max_offset = match isolation {
            IsolationLevel::ReadUncommitted => result.high_watermark,
            IsolationLevel::ReadCommitted => result.last_stable_offset,
        };
        let first = self
            .segments
            .iter()
            .rposition(|s| s.base_offset() <= offset)
            .unwrap_or(0);
        if offset < max_offset {
            for segment in &self.segments[first..] {
                let read = segment.find_position(offset).and_then(|p| match p {
                    Some(position) => segment
                        .read_into(position, max_bytes, max_offset, buf, start)
                        .map(Some),
                    None => Ok(None),
                });
                let (last, full) = match read {
                    Ok(Some(r)) => r,
                    Ok(None) => continue,
                    Err(e) => {
                        buf.truncate(start);
                        return Err(e);
                    }
                };
                if let Some(last) = last {
                    result.next_offset = last + 1;
                }
                if full {
                    break;
                }
            }
        }
        result.range = start..buf.len();
        if isolation == IsolationLevel::ReadCommitted {
            let mut aborted = Vec::new();
            if !result.range.is_empty() {
                for segment in &self.segments[first..] {
                    let (found, complete) = segment.txn_index().collect(offset, result.next_offset);
                    aborted.extend(found.iter().map(AbortedTxn::as_aborted_transaction));
                    if complete {
                        break;
                    }
                }
            }
            result.aborted_transactions = Some(aborted);
        }
        Ok(result)
    }

    /// Fetches at `isolation` and filters the bytes as a Kafka consumer does
    /// ([`consumer::consume`]): the records an application would see, aborted transactions and
    /// control records dropped. This is `krec log read --isolation ...`: page on from
    /// `next_offset`; a result with `next_offset == offset` means nothing more is visible yet
    /// (the high watermark, or for read_committed the last stable offset, was reached).
    ///
    /// # Errors
    ///
    /// As [`Log::fetch`] and [`consumer::consume`].
    pub fn consume(
        &self,
        offset: i64,
        max_bytes: usize,
        isolation: IsolationLevel,
    ) -> Result<Consumed> {
        let f = self.fetch(offset, max_bytes, isolation)?;
        consumer::consume(
            &f.bytes,
            offset,
            isolation,
            f.aborted_transactions.as_deref(),
        )
    }

    /// Kafka's ListOffsets: the log start or end offset, the record with the largest
    /// timestamp, or the first record with a timestamp at or after a given one (using the time
    /// indexes). Unlike Kafka, a time lookup that finds nothing in the first segment whose
    /// largest timestamp qualifies goes on to the next one (this only matters for segments
    /// without timestamps, which Kafka dates by file modification time).
    ///
    /// # Errors
    ///
    /// Corruption or I/O errors; a compressed batch the codec cannot decompress.
    pub fn offsets(&self, spec: OffsetSpec) -> Result<ListOffsetsResult> {
        let epoch_of = |found: Option<crate::segment::TimestampAndOffset>| match found {
            Some(t) => ListOffsetsResult {
                offset: t.offset,
                timestamp: Some(t.timestamp),
                leader_epoch: t.leader_epoch,
            },
            None => ListOffsetsResult::NONE,
        };
        match spec {
            // As Kafka: the earliest cached epoch, when it starts at or before the log start
            // offset (after a format upgrade the oldest data may predate epochs).
            OffsetSpec::Earliest => Ok(ListOffsetsResult {
                offset: self.log_start_offset,
                timestamp: None,
                leader_epoch: self
                    .epoch_cache
                    .entries()
                    .first()
                    .filter(|&&(_, start)| start <= self.log_start_offset)
                    .map(|&(epoch, _)| epoch),
            }),
            OffsetSpec::Latest => Ok(ListOffsetsResult {
                offset: self.log_end_offset(),
                timestamp: None,
                leader_epoch: self.epoch_cache.latest_epoch(),
            }),
            OffsetSpec::MaxTimestamp => {
                let mut best: Option<&Segment> = None;
                for s in &self.segments {
                    if best.is_none_or(|b| s.max_timestamp() > b.max_timestamp()) {
                        best = Some(s);
                    }
                }
                match best {
                    Some(s) if s.size() > 0 => Ok(epoch_of(s.max_timestamp_record()?)),
                    _ => Ok(ListOffsetsResult::NONE),
                }
            }
            OffsetSpec::Timestamp(target) => {
                let st = self.env.storage.as_ref();
                for s in &self.segments {
                    if s.size() == 0 || s.largest_timestamp(st)? < target {
                        continue;
                    }
                    if let Some(found) =
                        s.find_offset_by_timestamp(target, self.log_start_offset)?
                    {
                        return Ok(epoch_of(Some(found)));
                    }
                }
                Ok(ListOffsetsResult::NONE)
            }
        }
    }

    /// ListOffsets as a consumer at `isolation` asks it (Kafka's
    /// `Partition.fetchOffsetForTimestamp`): the last fetchable offset is the high watermark for
    /// read_uncommitted and the last stable offset for read_committed. `Latest` answers it, and
    /// a timestamp or max-timestamp lookup that lands at or past it finds nothing (offset -1);
    /// `Earliest` is never filtered. [`Log::offsets`] is the same without an isolation level
    /// (a replica's view: up to the log end).
    ///
    /// # Examples
    ///
    /// ```
    /// # use krecords_log::{AppendOrigin, Env, IsolationLevel, Log, LogConfig, OffsetSpec};
    /// # use krecords_codec::write::{NewRecord, V2Builder};
    /// # fn main() -> krecords_log::Result<()> {
    /// let mut log = Log::create_with("/t-0", LogConfig::default(), Env::memory())?;
    /// let mut b = V2Builder::new(0).producer(7, 0, 0).transactional(true);
    /// b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"open"))).unwrap();
    /// log.append(&b.finish().unwrap(), AppendOrigin::Client)?;
    /// // The transaction is still open: read_committed consumers cannot see offset 0 yet.
    /// assert_eq!(log.offsets_at(OffsetSpec::Latest, IsolationLevel::ReadCommitted)?.offset, 0);
    /// assert_eq!(log.offsets_at(OffsetSpec::Latest, IsolationLevel::ReadUncommitted)?.offset, 1);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Log::offsets`].
    pub fn offsets_at(
        &self,
        spec: OffsetSpec,
        isolation: IsolationLevel,
    ) -> Result<ListOffsetsResult> {
        let last_fetchable = match isolation {
            IsolationLevel::ReadUncommitted => self.high_watermark(),
            IsolationLevel::ReadCommitted => self.last_stable_offset(),
        };
        match spec {
            OffsetSpec::Latest => Ok(ListOffsetsResult {
                offset: last_fetchable,
                timestamp: None,
                leader_epoch: self.epoch_cache.latest_epoch(),
            }),
            OffsetSpec::Earliest => self.offsets(spec),
            OffsetSpec::MaxTimestamp | OffsetSpec::Timestamp(_) => {
                let found = self.offsets(spec)?;
                Ok(if found.offset >= last_fetchable {
                    ListOffsetsResult::NONE
                } else {
                    found
                })
            }
        }
    }

    /// Kafka's `deleteOldSegments` for `cleanup.policy=delete`: deletes the oldest segments
    /// while the log is over `retention.bytes`, then those whose largest timestamp is older
    /// than `retention.ms`, and moves the log start offset up. The active segment is deleted
    /// too when it qualifies, after rolling a new empty one at the log end.
    ///
    /// # Errors
    ///
    /// Storage errors, which poison the log.
    pub fn retain(&mut self) -> Result<RetainInfo> {
        self.check_writable()?;
        let r = self.retain_inner();
        self.guard(r)
    }

    fn retain_inner(&mut self) -> Result<RetainInfo> {
        let mut deleted = 0;
        if self.config.cleanup_policy.delete {
            let retention_bytes = self.config.retention_bytes;
            let total: u64 = self.segments.iter().map(Segment::size).sum();
            if retention_bytes >= 0 && total >= retention_bytes as u64 {
                let mut diff = total - retention_bytes as u64;
                let n = self
                    .segments
                    .iter()
                    .take_while(|s| {
                        if s.size() <= diff {
                            diff -= s.size();
                            true
                        } else {
                            false
                        }
                    })
                    .count();
                deleted += self.delete_oldest(n)?;
            }
            let retention_ms = self.config.retention_ms;
            if retention_ms >= 0 {
                let now = self.env.clock.now_ms();
                let st = self.env.storage.clone();
                let mut n = 0;
                for s in &self.segments {
                    if now.saturating_sub(s.largest_timestamp(st.as_ref())?) > retention_ms {
                        n += 1;
                    } else {
                        break;
                    }
                }
                deleted += self.delete_oldest(n)?;
            }
        }
        Ok(RetainInfo {
            deleted_segments: deleted,
            log_start_offset: self.log_start_offset,
        })
    }

    /// Deletes the `n` oldest segments (never an empty active segment; rolls first when all
    /// would go). Returns how many were deleted.
    fn delete_oldest(&mut self, mut n: usize) -> Result<usize> {
        n = n.min(self.segments.len());
        if n == self.segments.len() && self.active().size() == 0 {
            n -= 1;
        }
        if n == 0 {
            return Ok(0);
        }
        if n == self.segments.len() {
            self.roll_at(None)?;
        }
        let st = self.env.storage.clone();
        for segment in self.segments.drain(..n) {
            segment.delete(st.as_ref(), &self.dir)?;
            self.producer_state.delete_snapshot_at(
                st.as_ref(),
                &self.dir,
                segment.base_offset(),
            )?;
        }
        st.sync_dir(&self.dir)
            .map_err(|e| Error::io("sync", &self.dir, e))?;
        self.log_start_offset = self.segments[0].base_offset();
        self.producer_state
            .on_log_start_offset_incremented(self.log_start_offset);
        if self.epoch_cache.truncate_from_start(self.log_start_offset) {
            self.epoch_cache.store(st.as_ref(), &self.dir)?;
        }
        Ok(n)
    }

    /// The state of the log for `krec log info`.
    ///
    /// # Errors
    ///
    /// I/O errors reading the cleaner's checkpoint (compacted logs only).
    pub fn info(&self) -> Result<LogInfo> {
        let segments = self
            .segments
            .iter()
            .map(|s| {
                let (oi, ti) = s.index_entries();
                SegmentInfo {
                    file: files::file_name(s.base_offset(), LOG_SUFFIX),
                    base_offset: s.base_offset(),
                    next_offset: s.next_offset(),
                    size_bytes: s.size(),
                    max_timestamp: Some(s.max_timestamp()).filter(|&t| t >= 0),
                    offset_index_entries: oi,
                    time_index_entries: ti,
                }
            })
            .collect();
        let dirty_ratio = if self.config.cleanup_policy.compact {
            Some(self.cleanable(self.env.clock.now_ms())?.dirty_ratio)
        } else {
            None
        };
        Ok(LogInfo {
            log_start_offset: self.log_start_offset,
            high_watermark: self.high_watermark(),
            last_stable_offset: self.last_stable_offset(),
            segments,
            dirty_ratio,
            log_end_offset: self.log_end_offset(),
            leader_epoch: self.leader_epoch,
            leader_epochs: self.epoch_cache.entries().to_vec(),
        })
    }

    /// Replaces the configuration (stored in `krec-log.json` atomically). New settings apply to
    /// later appends, rolls and retention; existing batches are not rewritten, so a log can hold
    /// several message formats.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`], storage errors (which poison the log).
    pub fn update_config(&mut self, config: LogConfig) -> Result<()> {
        self.check_writable()?;
        config.validate()?;
        let json = serde_json::to_vec_pretty(&config.to_json()).unwrap_or_default();
        let r = files::write_atomic(self.env.storage.as_ref(), &self.dir, CONFIG_FILE, &json);
        self.guard(r)?;
        self.config = config;
        Ok(())
    }

    /// Checks every index entry against the segments (what `kafka-dump-log
    /// --index-sanity-check` and `krec verify` look at): offset entries at batch boundaries,
    /// increasing; time entries holding the running maximum timestamp.
    ///
    /// # Errors
    ///
    /// The first inconsistency, as [`Error::CorruptFile`] naming the index.
    pub fn verify_indexes(&self) -> Result<()> {
        for s in &self.segments {
            s.verify_indexes()?;
        }
        Ok(())
    }

    /// The paths of every segment's `.log`, `.index` and `.timeindex` files, oldest first.
    pub fn segment_files(&self) -> Vec<(PathBuf, PathBuf, PathBuf)> {
        self.segments
            .iter()
            .map(|s| {
                let (oi, ti) = s.index_paths();
                (
                    s.log_path().to_path_buf(),
                    oi.to_path_buf(),
                    ti.to_path_buf(),
                )
            })
            .collect()
    }

    /// Closes the log cleanly: seals the active segment (final time index entry, indexes
    /// trimmed, everything synced), takes a producer state snapshot at the log end, writes the
    /// recovery point and the clean shutdown marker, and syncs the directory. The next open
    /// skips recovery.
    ///
    /// # Errors
    ///
    /// [`Error::Poisoned`] after an earlier storage failure (no marker is written, so the next
    /// open recovers); storage errors.
    pub fn close(mut self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.check_writable()?;
        self.active_mut().seal()?;
        let log_end = self.log_end_offset();
        let st = self.env.storage.clone();
        self.producer_state.set_map_end_offset(log_end);
        self.producer_state.take_snapshot(st.as_ref(), &self.dir)?;
        self.set_recovery_point(log_end)?;
        let marker = self.dir.join(CLEAN_SHUTDOWN_FILE);
        let f = st
            .create(&marker)
            .map_err(|e| Error::io("create", &marker, e))?;
        f.sync().map_err(|e| Error::io("sync", &marker, e))?;
        st.sync_dir(&self.dir)
            .map_err(|e| Error::io("sync", &self.dir, e))
    }
}
