//! Creating, opening and recovering a log (Kafka's `LogLoader` steps that live in the log:
//! the writer's lock, the segments' recovery through `recovery`, the producer state replay).

use super::*;
use crate::config::LogConfig;
use crate::data_dir::{self, RootRecovery};
use crate::epoch::LeaderEpochCache;
use crate::error::{Error, Result};
use crate::files::{self, CLEAN_SHUTDOWN_FILE, CONFIG_FILE, LOG_SUFFIX, RECOVERY_POINT_FILE};
use crate::producer_state::ProducerStateManager;
use crate::recovery::{self, RecoverInfo};
use crate::segment::Segment;
use crate::storage::{DirLock, ReadOnlyStorage, Storage};
use crate::transaction::AbortedTxn;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// The names in `dir` but the writer's lock file, sorted: what makes it no new or empty
/// directory for [`Log::create`].
fn held(st: &dyn Storage, dir: &Path) -> Result<Vec<String>> {
    let mut names = st.list_dir(dir).map_err(|e| Error::io("list", dir, e))?;
    names.retain(|n| n != files::LOCK_FILE);
    names.sort();
    Ok(names)
}

/// Refuses `dir` when a running Kafka broker owns it, then takes the writer's lock.
pub(crate) fn lock_for_writing(
    st: &dyn Storage,
    dir: &Path,
    options: OpenOptions,
) -> Result<DirLock> {
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
    let lock_file = dir.join(files::LOCK_FILE);
    match st.lock_file(&lock_file, options.lock_wait) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(Error::LogLocked {
            dir: dir.to_path_buf(),
            lock_file,
        }),
        Err(e) => Err(Error::io("lock", lock_file, e)),
    }
}

/// Kafka's `LogLoader` producer state steps (`removeStraySnapshots`, then
/// `rebuildProducerState`): loads the latest usable snapshot, no later than the first segment
/// whose transaction index recovery emptied, replays the log after it (refilling those
/// transaction indexes, as Kafka's `LogSegment.recover` does), and takes a snapshot at the log
/// end. Snapshots are also taken at the base offsets of the last two segments when the replay
/// passes them. Without a snapshot the replay starts at the log start offset (Kafka skips it
/// after a clean shutdown, assuming an upgrade from a broker without snapshots; this log never
/// does, so state is never silently lost).
pub(super) fn load_producer_state(
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
                aborted.extend(replay_batch(&mut ps, b, &mut scratch));
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

/// Replays one batch into the producer state as the loader does; returns the aborted
/// transaction whose marker it is, for its segment's transaction index.
pub(crate) fn replay_batch(
    ps: &mut ProducerStateManager,
    b: &krecords_codec::read::Batch<'_>,
    scratch: &mut Vec<u8>,
) -> Option<AbortedTxn> {
    let (txn, lso) = ps.replay(b, scratch)?;
    txn.aborted.then_some(AbortedTxn {
        producer_id: txn.producer_id,
        first_offset: txn.first_offset,
        last_offset: txn.last_offset,
        last_stable_offset: lso,
    })
}

/// The leader epoch cache of `dir`, cut to the offsets `log_start..log_end` and stored again
/// when that changed it (or it was unreadable), as the loader does.
fn load_epochs(
    st: &dyn Storage,
    dir: &Path,
    log_start: i64,
    log_end: i64,
) -> Result<LeaderEpochCache> {
    let (mut epoch_cache, readable) = LeaderEpochCache::load(st, dir)?;
    let mut epochs_changed = !readable;
    epochs_changed |= epoch_cache.truncate_from_end(log_end);
    epochs_changed |= epoch_cache.truncate_from_start(log_start);
    if epochs_changed {
        epoch_cache.store(st, dir)?;
    }
    Ok(epoch_cache)
}

impl Log {
    /// The log over `segments`, just written into `dir` and indexed by
    /// [`crate::convert::PartitionWriter`], with the producer state it replayed while writing
    /// (snapshots taken): what [`Log::recover_with`] builds of the same directory, without
    /// reading the segments again. `lock` is the writer's lock on `dir`. Close it to finish the
    /// directory as a clean shutdown.
    ///
    /// # Errors
    ///
    /// The leader epoch checkpoint cannot be read or stored.
    pub(crate) fn assemble(
        dir: &Path,
        env: Env,
        config: LogConfig,
        segments: Vec<Segment>,
        producer_state: ProducerStateManager,
        lock: DirLock,
    ) -> Result<Log> {
        let (Some(first), Some(active)) = (segments.first(), segments.last()) else {
            return Err(Error::NotALog {
                path: dir.to_path_buf(),
            });
        };
        let log_end = active.next_offset();
        let epoch_cache = load_epochs(env.storage.as_ref(), dir, first.base_offset(), log_end)?;
        let recovery = RecoverInfo {
            segments: segments.len(),
            next_offset: log_end,
            ..RecoverInfo::default()
        };
        let now = env.clock.now_ms();
        Ok(Log::from_parts(
            dir,
            env,
            config,
            segments,
            (epoch_cache, producer_state),
            recovery,
            Some(lock),
            now,
        ))
    }

    /// A loaded log of non-empty `segments` (the last one active, the recovery point at its
    /// base) with its leader epochs and producer state; read-only without a `lock`.
    #[allow(clippy::too_many_arguments)]
    fn from_parts(
        dir: &Path,
        env: Env,
        config: LogConfig,
        segments: Vec<Segment>,
        (epoch_cache, producer_state): (LeaderEpochCache, ProducerStateManager),
        recovery: RecoverInfo,
        lock: Option<DirLock>,
        now: i64,
    ) -> Log {
        Log {
            dir: dir.to_path_buf(),
            log_start_offset: segments.first().map_or(0, Segment::base_offset),
            recovery_point: segments.last().map_or(0, Segment::base_offset),
            leader_epoch: epoch_cache.latest_epoch().unwrap_or(0),
            segments,
            env,
            config,
            epoch_cache,
            producer_state,
            unflushed_messages: 0,
            last_flush_ms: now,
            poisoned: None,
            recovery,
            damage: None,
            read_only: lock.is_none(),
            _lock: lock,
        }
    }

    /// Creates a log in `dir` (created if needed) on the real file system.
    ///
    /// # Errors
    ///
    /// [`Error::AlreadyExists`] if `dir` is no new or empty directory: it holds a log, or any
    /// other file but a lock file (a directory without a log is refused before anything is
    /// created in it); [`Error::InvalidConfig`], I/O errors.
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
        // A directory holding files but no log is refused before anything is created in it;
        // one holding a log only once its lock is taken, so that a log another writer has
        // open is said to be locked.
        let exists = storage
            .exists(&dir)
            .map_err(|e| Error::io("stat", &dir, e))?;
        if exists {
            let holds = held(storage.as_ref(), &dir)?;
            let is_log = holds
                .iter()
                .any(|n| n == CONFIG_FILE || files::parse_file_name(n, LOG_SUFFIX).is_some());
            if !holds.is_empty() && !is_log {
                return Err(Error::AlreadyExists { path: dir, holds });
            }
        }
        storage
            .create_dir_all(&dir)
            .map_err(|e| Error::io("create", &dir, e))?;
        let lock = lock_for_writing(storage.as_ref(), &dir, options)?;
        let holds = held(storage.as_ref(), &dir)?;
        if !holds.is_empty() {
            return Err(Error::AlreadyExists { path: dir, holds });
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
            damage: None,
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
    /// Only a torn tail is left out quietly ([`RecoverInfo::notes`] says how many bytes): when
    /// an intact entry follows the bytes recovery cut, the damage is in the middle of the log
    /// and Kafka's recovery would delete good entries with it. The log then knows it
    /// ([`Log::damage`]): reads that end before the damage are served, and a fetch that
    /// reaches it (the log's end as read) fails with [`Error::DamagedSegment`] instead of
    /// showing a log that silently ends at the damage.
    ///
    /// A broker's partition directory (without a clean shutdown marker or recovery point of
    /// ours) is scanned as Kafka's loader would scan it, from what its data directory (the
    /// parent) says: nothing after the broker's clean shutdown (`.kafka_cleanshutdown`), the
    /// segments from the partition's recovery point on (`recovery-point-offset-checkpoint`)
    /// otherwise, every segment when neither says anything. A writer's open trusts neither.
    ///
    /// # Errors
    ///
    /// As [`Log::open_read_only`].
    pub fn open_read_only_with(dir: impl AsRef<Path>, env: Env) -> Result<Log> {
        let view = Env::new(
            Arc::new(ReadOnlyStorage::new(env.storage.clone())),
            env.clock.clone(),
        );
        let mut log = Log::load(dir.as_ref(), view, false, None)?;
        let (start, end) = (log.log_start_offset(), log.log_end_offset());
        for cut in &log.recovery.cuts {
            if let Some(d) = recovery::check_cut(env.storage.as_ref(), cut, end, start)? {
                log.damage = Some(d);
                break;
            }
        }
        Ok(log)
    }

    /// Opens a list of segment files as one read-only log, without links, copies or any change
    /// to them: each file must be named `<20-digit base offset>.log` (as Kafka names them) and
    /// may sit in any directory; its index files (`.index`, `.timeindex`, `.txnindex` of the
    /// same name next to it) are used when present and rebuilt in memory otherwise.
    ///
    /// The log's directory ([`Log::dir`]) is the directory of the first file, so a file of
    /// that directory is named by its real path in errors. The log is loaded as
    /// [`Log::open_read_only`] loads a directory (recovery and index rebuilds in memory; writes
    /// refused).
    ///
    /// # Errors
    ///
    /// [`Error::NotALog`] for an empty list; [`Error::Io`] for a file with another name, two
    /// files with the same base offset, or a file that cannot be read; then as
    /// [`Log::open_read_only`].
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_codec::write::{NewRecord, V2Builder};
    /// use krecords_log::Log;
    ///
    /// let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    /// let batch = |offset| {
    ///     let mut w = V2Builder::new(offset);
    ///     w.append(&NewRecord::new(1_714_000_000_000, None, Some(b"v"))).unwrap();
    ///     w.finish().unwrap()
    /// };
    /// let first = a.path().join("00000000000000000000.log");
    /// let second = b.path().join("00000000000000000001.log");
    /// std::fs::write(&first, batch(0)).unwrap();
    /// std::fs::write(&second, batch(1)).unwrap();
    /// let log = Log::open_segment_files(&[first, second]).unwrap();
    /// assert_eq!(log.log_end_offset(), 2);
    /// assert_eq!(log.dir(), a.path());
    /// ```
    pub fn open_segment_files(files: &[impl AsRef<Path>]) -> Result<Log> {
        let Some(first) = files.first() else {
            return Err(Error::NotALog {
                path: Default::default(),
            });
        };
        let dir = first
            .as_ref()
            .parent()
            .unwrap_or(Path::new(""))
            .to_path_buf();
        let mut listed: std::collections::BTreeMap<String, std::path::PathBuf> = Default::default();
        for file in files {
            let file = file.as_ref();
            let invalid = |why: String| {
                Error::io(
                    "open",
                    file,
                    io::Error::new(io::ErrorKind::InvalidInput, why),
                )
            };
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let Some(base) = files::parse_file_name(name, LOG_SUFFIX) else {
                return Err(invalid(
                    "not a segment file: a .log file named by its 20-digit base offset".into(),
                ));
            };
            if let Some(other) = listed.get(name) {
                return Err(invalid(format!(
                    "base offset {base} is listed twice (also {})",
                    other.display()
                )));
            }
            for suffix in [
                LOG_SUFFIX,
                files::INDEX_SUFFIX,
                files::TIME_INDEX_SUFFIX,
                files::TXN_INDEX_SUFFIX,
            ] {
                let name = files::file_name(base, suffix);
                let real = file.with_file_name(&name);
                if suffix == LOG_SUFFIX || real.is_file() {
                    listed.insert(name, real);
                }
            }
        }
        let storage = crate::storage::ListedStorage::new(dir.clone(), listed);
        Log::open_read_only_with(
            dir,
            Env::new(Arc::new(storage), Arc::new(crate::clock::SystemClock)),
        )
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
    pub(super) fn load(
        dir: &Path,
        env: Env,
        full_scan: bool,
        writer: Option<OpenOptions>,
    ) -> Result<Log> {
        Log::load_locked(dir, env, full_scan, writer, None)
    }

    /// As [`Log::load`]; a writer with `held`, the writer's lock it already holds, takes no
    /// other (how [`Log::append_all`] reloads the log it rolled back).
    pub(super) fn load_locked(
        dir: &Path,
        env: Env,
        full_scan: bool,
        writer: Option<OpenOptions>,
        held: Option<DirLock>,
    ) -> Result<Log> {
        let storage = env.storage.clone();
        let st = storage.as_ref();
        let list = || match st.list_dir(dir) {
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::NoSuchDirectory {
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
            Some(_) if held.is_some() => held,
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
        let config = files::read_config(st, dir)?.unwrap_or_default();
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
            match files::read_small_file(st, &path)? {
                Some(bytes) => Some(files::parse_recovery_point(&path, &bytes).unwrap_or(i64::MIN)),
                // A broker's partition: its data directory says what to scan, as Kafka's
                // loader reads it. Only a reader trusts that: a writer's own crash would leave
                // the broker's clean-shutdown marker standing.
                None if writer.is_none() => match data_dir::root_recovery(st, dir) {
                    RootRecovery::Clean => None,
                    RootRecovery::From(offset) => Some(offset),
                    RootRecovery::Unknown => Some(i64::MIN),
                },
                None => Some(i64::MIN),
            }
        };
        let now = env.clock.now_ms();
        let (mut segments, mut info) = recovery::load_segments(
            st,
            dir,
            &config,
            &bases,
            recover_from,
            writer.is_none(),
            now,
        )?;
        if segments.is_empty() {
            segments.push(Segment::create(st, dir, 0, &config, now)?);
            st.sync_dir(dir).map_err(|e| Error::io("sync", dir, e))?;
        }
        let active = segments.len() - 1;
        segments[active].resize_indexes(&config)?;
        let log_end = segments[active].next_offset();
        let epoch_cache = load_epochs(st, dir, segments[0].base_offset(), log_end)?;
        if names.iter().any(|n| n == CLEAN_SHUTDOWN_FILE) {
            // From here on a crash must not look like a clean shutdown.
            files::remove_if_exists(st, &dir.join(CLEAN_SHUTDOWN_FILE))?;
            st.sync_dir(dir).map_err(|e| Error::io("sync", dir, e))?;
        }
        info.segments = segments.len();
        info.next_offset = log_end;
        let producer_state = load_producer_state(st, dir, &names, &config, &mut segments, now)?;
        Ok(Log::from_parts(
            dir,
            env,
            config,
            segments,
            (epoch_cache, producer_state),
            info,
            lock,
            now,
        ))
    }
}
