//! The partition log: segments, appends, reads, offset lookups, rolls, retention, durability.

mod append;
mod open;
mod read;
mod retention;
mod types;

use crate::clock::{Clock, SystemClock};
use crate::config::LogConfig;
use crate::epoch::LeaderEpochCache;
use crate::error::{Error, Result};
use crate::files::{self, CLEAN_SHUTDOWN_FILE, CONFIG_FILE, LOG_SUFFIX};
use crate::producer_state::{ProducerState, ProducerStateManager};
use crate::recovery::RecoverInfo;
use crate::segment::Segment;
use crate::storage::{DirLock, FsStorage, LockWait, MemStorage, Storage};
use crate::transaction::AbortedTxn;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::validate::AppendOrigin;
pub(crate) use open::{lock_for_writing, replay_batch};
pub use types::*;

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

    /// The real file system and a clock stopped at `now_ms` (epoch milliseconds): what
    /// retention, roll and timestamps see is that time (`krec log ... --now`).
    pub fn fs_at(now_ms: i64) -> Self {
        Env::new(
            Arc::new(FsStorage),
            Arc::new(crate::clock::ManualClock::new(now_ms)),
        )
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
    /// Damage in the middle of the log found by a read-only open (see [`Log::damage`]).
    damage: Option<crate::recovery::Damage>,
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

fn is_storage_failure(e: &Error) -> bool {
    matches!(e, Error::Io { .. } | Error::CorruptFile { .. })
}

impl Log {
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

    /// Damage in the middle of the log, found by a read-only open ([`Log::open_read_only`]):
    /// the log as read ends at [`Damage::offset`](crate::Damage) although intact entries follow
    /// the damaged bytes. A fetch that reaches that end fails with the damage's error; reads
    /// that end before it are whole. `None` for a log opened for writing (its open truncated
    /// the damage as Kafka's recovery does) and for an undamaged log.
    pub fn damage(&self) -> Option<&crate::recovery::Damage> {
        self.damage.as_ref()
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

    /// The state of the log for `krec log info`.
    ///
    /// # Errors
    ///
    /// I/O errors reading the cleaner's checkpoint (compacted logs only);
    /// [`Error::DamagedSegment`] when the log's end is damage ([`Log::damage`]).
    pub fn info(&self) -> Result<LogInfo> {
        if let Some(d) = &self.damage {
            return Err(d.error());
        }
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
