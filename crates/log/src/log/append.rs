//! Appends: validation through `validate`, producer state checks, the write into the active
//! segment, END_TXN markers, rolls and the recovery point.

use super::*;
use crate::error::{Error, Location, Result};
use crate::files::{self, RECOVERY_POINT_FILE};
use crate::producer_state::{Checked, Origin, Staged};
use crate::segment::{BatchMeta, Segment};
use crate::transaction::AbortedTxn;
use crate::validate::{self, Settings};
use krecords_codec::layout::v2::RECORDS_OFFSET;
use krecords_codec::read::v2::header_only;
use krecords_codec::read::{Batch, Entries};
use krecords_codec::write::{end_txn_marker, EndTxnBatch};
use krecords_codec::TimestampType;

/// An append after its checks: what to write, or the answer to a duplicate.
pub(super) enum Prepared<'a> {
    /// A producer's retry of a batch in the log (or staged before it): nothing to write.
    Duplicate(AppendInfo),
    /// New batches to write.
    Append(Box<Checks<'a>>),
}

/// What an append that passed its checks writes and records ([`Log::commit`]).
pub(super) struct Checks<'a> {
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

impl Log {
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
    /// error [`Log::append`] gives for it ([`Error::kafka_name`] is the wrapped error's).
    ///
    /// A storage error while writing (a full disk) is [`Error::AppendFailed`]: the log is
    /// rolled back to where it was before the call (the segments it rolled deleted, the
    /// active segment cut back, then reloaded as recovery loads it: indexes, producer state
    /// and leader epochs as they were), so nothing of the call is in it and the log takes
    /// writes again. Cutting frees space, so this works on a full disk. If rolling back fails
    /// too, the error says so and where the log ends, and the log stays poisoned as in
    /// [`Log::append`]. A crash while writing is still recovered as any crash is: the whole
    /// batches written before it stay.
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
                next_offset = p.validated.next_offset();
            }
            steps.push(step);
        }
        // 2. Write them, all or nothing.
        let start = (
            self.segments.len(),
            self.active().size(),
            self.log_end_offset(),
        );
        let mut infos = Vec::with_capacity(steps.len());
        for step in steps {
            infos.push(match step {
                Prepared::Duplicate(info) => info,
                Prepared::Append(p) => match self.commit(p, now) {
                    Ok(info) => info,
                    Err(e) => return Err(self.roll_back(start, e)),
                },
            });
        }
        Ok(infos)
    }

    /// Undoes the writes of an [`Log::append_all`] that failed with `error`: deletes the
    /// segments it rolled (newest first), cuts the segment that was active back to its size,
    /// moves the recovery point to that segment and reloads the log from the directory with
    /// the lock it holds, as recovery does. `start` is the number of segments, the active
    /// segment's size and the log end offset before the call. Returns the error to report.
    fn roll_back(&mut self, (segments, size, end): (usize, u64, i64), error: Error) -> Error {
        let mut end_now = self.log_end_offset();
        let undone = self.undo(segments, size, end, &mut end_now);
        let undo_failed = match undone.and_then(|()| self.reload()) {
            Ok(()) => {
                end_now = end;
                None
            }
            Err(e) => {
                self.poisoned.get_or_insert_with(|| e.to_string());
                Some(e.to_string())
            }
        };
        Error::AppendFailed {
            source: Box::new(error),
            end_offset: end_now,
            undo_failed,
        }
    }

    /// The file part of [`Log::roll_back`]; `end_now` follows what is left in the log.
    fn undo(&mut self, segments: usize, size: u64, end: i64, end_now: &mut i64) -> Result<()> {
        let st = self.env.storage.clone();
        while self.segments.len() > segments.max(1) {
            let last = self.segments.len() - 1;
            self.segments[last].delete(st.as_ref(), &self.dir)?;
            *end_now = self.segments[last].base_offset();
            self.segments.pop();
        }
        // What the call left besides: the files of a segment whose roll failed halfway, the
        // producer state snapshots its rolls took.
        let base = self.active().base_offset();
        let names = st
            .list_dir(&self.dir)
            .map_err(|e| Error::io("list", &self.dir, e))?;
        for name in names {
            let segment_file = [
                files::LOG_SUFFIX,
                files::INDEX_SUFFIX,
                files::TIME_INDEX_SUFFIX,
                files::TXN_INDEX_SUFFIX,
            ]
            .iter()
            .any(|s| files::parse_file_name(&name, s).is_some_and(|o| o > base));
            let snapshot =
                files::parse_file_name(&name, files::SNAPSHOT_SUFFIX).is_some_and(|o| o > end);
            if segment_file || snapshot {
                files::remove_if_exists(st.as_ref(), &self.dir.join(name))?;
            }
        }
        self.active_mut().cut(size)?;
        *end_now = end;
        st.sync_dir(&self.dir)
            .map_err(|e| Error::io("sync", &self.dir, e))?;
        // The cut segment's indexes are rebuilt from its file by the reload, which scans from
        // the recovery point (a roll of the call moved it past that segment).
        if self.recovery_point > base {
            self.set_recovery_point(base)?;
        }
        Ok(())
    }

    /// Loads the log again from its directory (after [`Log::undo`]), keeping the lock, the
    /// leader epoch, the log start offset and what the open found.
    fn reload(&mut self) -> Result<()> {
        let lock = self._lock.take();
        let options = Some(OpenOptions::default());
        let mut log = Log::load_locked(&self.dir, self.env.clone(), false, options, lock)?;
        log.leader_epoch = self.leader_epoch;
        log.log_start_offset = self.log_start_offset;
        log.recovery = std::mem::take(&mut self.recovery);
        log.damage = self.damage.take();
        *self = log;
        Ok(())
    }

    /// What every append does first: producer id expiration when due; returns the time of the
    /// append.
    pub(super) fn start_append(&mut self) -> i64 {
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
    pub(super) fn prepare<'a>(
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
        let header_view = if validated.tail.is_empty() {
            None
        } else {
            Some(header_only(&validated.bytes).ok_or(Error::Codec {
                at: Location::Unknown,
                source: krecords_codec::Error::Truncated {
                    at: 0,
                    what: "v2 batch header",
                    needed: RECORDS_OFFSET,
                    available: validated.bytes.len(),
                },
            })?)
        };
        let mut batches: Vec<Batch<'_>> = Vec::new();
        let parsed: &[u8] = match &header_view {
            Some(h) => h,
            None => &validated.bytes,
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
    pub(super) fn commit(&mut self, p: Box<Checks<'_>>, now: i64) -> Result<AppendInfo> {
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
            .set_map_end_offset(validated.next_offset());
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
    /// id or epoch, `UNSUPPORTED_FOR_MESSAGE_FORMAT` below message format v2, `INVALID_TIMESTAMP`;
    /// a storage error while writing is [`Error::AppendFailed`], the marker undone as
    /// [`Log::append_all`] undoes its appends (so a retry writes one marker).
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
        // Through append_all, so that a failed write leaves no marker behind.
        match self.append_all(&[&bytes], AppendOrigin::Coordinator) {
            Ok(mut infos) => Ok(infos.remove(0)),
            Err(Error::InEntry { source, .. }) => Err(*source),
            Err(e) => Err(e),
        }
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
    pub(super) fn roll_at(&mut self, expected_next_offset: Option<i64>) -> Result<()> {
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
    pub(super) fn delete_old_snapshots(&mut self) -> Result<()> {
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

    pub(super) fn set_recovery_point(&mut self, offset: i64) -> Result<()> {
        files::write_atomic(
            self.env.storage.as_ref(),
            &self.dir,
            RECOVERY_POINT_FILE,
            format!("{offset}\n").as_bytes(),
        )?;
        self.recovery_point = offset;
        Ok(())
    }
}
