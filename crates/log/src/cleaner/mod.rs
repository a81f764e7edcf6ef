//! Log compaction for `cleanup.policy=compact`, as Kafka's log cleaner does it (`Cleaner`,
//! `LogCleanerManager.cleanableOffsets`, `LogToClean`, `MemoryRecords.filterTo`).
//!
//! # A cleaning pass ([`Log::compact`])
//!
//! 1. **First dirty offset**: read from `krec-cleaner-offset` (Kafka's
//!    `cleaner-offset-checkpoint` for this one partition); the log start offset when the file is
//!    missing or unreadable, or when the offset is below the log start or above the log end
//!    (then the file is rewritten, Kafka's `forceUpdateCheckpoint`).
//! 2. **First uncleanable offset**: the smallest of the last stable offset, the active segment's
//!    base offset and, with `min.compaction.lag.ms` > 0, the base offset of the first dirty
//!    non-active segment whose largest timestamp is newer than `now - min.compaction.lag.ms`;
//!    not below the first dirty offset; then rounded down to the base offset of the segment
//!    holding it (Kafka's `calculateCleanableBytes`), so a segment the last stable offset falls
//!    in stays dirty. A first dirty offset past that base leaves nothing cleanable.
//! 3. **Dirty ratio**: bytes of the segments overlapping `[min(first dirty, first uncleanable),
//!    first uncleanable)` over
//!    those plus the bytes of the segments overlapping `[log start, first dirty)` (a segment
//!    holding the first dirty offset counts on both sides, as in Kafka). [`Log::compact`] cleans
//!    when the ratio exceeds `min.cleanable.dirty.ratio`, or when the earliest first-batch
//!    timestamp of a dirty non-active segment is older than `now - max.compaction.lag.ms` and
//!    there are dirty bytes (KIP-354); [`Log::compact_now`] cleans whenever there are dirty bytes
//!    (what Kafka's tests do by calling the `Cleaner` directly).
//! 4. **Offset map** (`offset_map.rs`): the latest offset of every key in the dirty range, from
//!    the dirty segments in order, skipping control batches and aborted transactional batches.
//!    When the map holds `0.9 × slots` keys the next put stops it: the map ends at the last offset
//!    put (a partial clean). A completely read segment moves the map's end to the next segment's
//!    base offset - 1 (offset gaps).
//! 5. **Groups** (`grouping.rs`): every segment from the log start to the map's end + 1, grouped.
//!    Each group is cleaned into one new segment at the group's first base offset and swapped in
//!    (`swap.rs`, which also documents the recovery of an interrupted swap).
//! 6. The map's end + 1 becomes the new first dirty offset.
//!
//! # Retention of records and batches
//!
//! * A record past the map's end is kept. A record without a key is dropped (on a compacted
//!   topic it is invalid). A record is kept if its offset is at least its key's offset in the
//!   map, and either it has a value or deletes are still retained: for v2, while the batch has no
//!   delete horizon or the horizon is in the future; for v0/v1 while the segment's modification
//!   time is after the last clean segment's modification time - `delete.retention.ms`.
//! * Aborted transactional batches are dropped whole; so are markers whose transaction's data is
//!   gone (an ABORT whose data this pass did not see, a COMMIT of a transaction whose data this
//!   pass did not read), once the batch carries a delete horizon that has passed. The producer's
//!   last batch (the batch ending at its last data offset, or its last marker when it has no data
//!   batch) of every producer the log knows is kept, without records when they all go.
//! * KIP-534: a kept v2 batch that keeps a tombstone, or a marker that may go, and has no delete
//!   horizon yet is written again with the delete-horizon attribute (bit 6) and base timestamp
//!   `now + delete.retention.ms`; a later pass after that time drops the tombstones and markers.
//! * A v2 batch that keeps every record and needs no horizon is copied byte for byte. Otherwise
//!   it is rebuilt (Kafka 4.4's `buildRetainedRecordsInto`) as magic 2 with the same codec (at
//!   the codec's default level, as Kafka's `Compression.of(type).build()`), timestamp type,
//!   producer id, epoch, base sequence, transactional and control flags and partition leader
//!   epoch, its base offset and its last offset (Kafka's `overrideLastOffset`, so the
//!   producer's last sequence stays).
//! * A v0/v1 batch is never copied: every one a pass keeps is rebuilt as a v2 batch (base
//!   offset its first kept record's, CreateTime for v0, no producer, no leader epoch); one that
//!   keeps a tombstone gets a delete horizon like any v2 batch, after which its tombstones follow
//!   KIP-534, not segment times.
//! * A v2 batch whose next offset is the high watermark is kept, without records when they all
//!   go (Kafka 4.4's `checkBatchRetention`), so a log whose active segment is empty keeps its
//!   end.
//! * Each cleaned segment's `.txnindex` holds the aborted transactions whose ABORT marker it
//!   keeps while this pass removed their data. The transaction state spans every group of a
//!   pass, so data removed in one group keeps its marker in a later one.
//!
//! Producer state is not changed by cleaning: the batches it was built from that matter (each
//! producer's last) stay, so a replay after reopening gives the same state.
//!
//! # Checked against Kafka's own cleaner
//!
//! `interop/py/compact_referee.py` (interop steps `compact-referee`, `compact-broker`) runs
//! Kafka 4.4.0's `Cleaner` and this module on the same directories with the same clock and
//! settings and requires the same segments batch for batch, `.txnindex` files, checkpoint and
//! offsets. The v0/v1 and high-watermark rules above and the rounding of the first uncleanable
//! offset to its segment were found that way (Kafka 4.4 differs there from the 2024 sources
//! this module was first written from, or our reading of them).
//!
//! # Where Kafka's behaviour was inferred (not yet decided by the referee)
//!
//! * An empty control batch (kept for producer state) counts as a marker that may go.
//! * The cleaned segment's `.log` gets the modification time of the last segment it replaces
//!   (Kafka sets it on every file of the segment); only the `.log` time is ever read.
//! * `log.cleaner.io.buffer.size` sets the read window (half of it); batches larger than it are
//!   read whole.

mod clean;
pub(crate) mod grouping;
pub(crate) mod offset_map;
mod transactions;

use crate::error::{Error, Result};
use crate::files::{self, CLEANED_SUFFIX, CLEANER_OFFSET_FILE};
use crate::log::Log;
use crate::segment::{BatchMeta, Segment};
use crate::swap;
use crate::transaction::AbortedTxn;
use clean::{Context, LastRecord};
use grouping::{group_segments, SegmentSizes};
use krecords_codec::read::{Batch, Entries};
use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;
use offset_map::OffsetMap;
use serde::Serialize;
use std::collections::HashMap;
use std::ops::Range;
use transactions::TxnMetadata;

/// Where the log stands for compaction (Kafka's `LogToClean`), as [`Log::cleanable`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CleanableInfo {
    /// The first offset not yet cleaned.
    pub first_dirty_offset: i64,
    /// The first offset that may not be cleaned now.
    pub first_uncleanable_offset: i64,
    /// Bytes of the segments overlapping `[log start, first dirty)`.
    pub clean_bytes: u64,
    /// Bytes of the segments overlapping `[first dirty, first uncleanable)`.
    pub cleanable_bytes: u64,
    /// `cleanable_bytes / (clean_bytes + cleanable_bytes)`, 0 for an empty log.
    pub dirty_ratio: f64,
    /// How long past `max.compaction.lag.ms` the oldest dirty segment is (0: not overdue).
    pub compaction_delay_ms: i64,
    /// Whether Kafka's cleaner would pick the log now.
    pub eligible: bool,
    /// The stored first dirty offset was outside the log and is reset.
    #[serde(skip)]
    pub reset: bool,
}

/// What a cleaning pass did, as `krec log compact` prints it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CompactInfo {
    /// Whether a pass ran (`false`: nothing to clean, not eligible, or not a compacted log).
    pub cleaned: bool,
    /// The first dirty offset before the pass.
    pub first_dirty_offset: i64,
    /// The first uncleanable offset of the pass.
    pub first_uncleanable_offset: i64,
    /// The dirty ratio before the pass.
    pub dirty_ratio: f64,
    /// The first dirty offset after the pass (the end of the offset map + 1).
    pub next_dirty_offset: i64,
    /// Old segments replaced.
    pub segments_cleaned: usize,
    /// New segments written in their place.
    pub segments_written: usize,
    /// Bytes of the old segments.
    pub bytes_before: u64,
    /// Bytes of the new segments.
    pub bytes_after: u64,
    /// Records read from the old segments (markers included).
    pub records_read: u64,
    /// Records dropped (every reason).
    pub records_removed: u64,
    /// Tombstones dropped (their delete horizon had passed, or a later record has the key).
    pub tombstones_removed: u64,
    /// Records without a key dropped.
    pub keyless_records_removed: u64,
    /// Records of aborted transactions dropped.
    pub aborted_records_removed: u64,
    /// Transaction markers dropped.
    pub markers_removed: u64,
    /// Batches dropped whole.
    pub batches_removed: u64,
    /// Batches written again (records dropped or a delete horizon set).
    pub batches_rewritten: u64,
    /// Batches kept without records for producer state.
    pub batches_emptied: u64,
    /// Batches given a delete horizon.
    pub delete_horizons_set: u64,
    /// Distinct keys in the offset map.
    pub map_keys: u64,
    /// Whether the map filled up before the dirty range ended (a partial clean).
    pub map_full: bool,
}

/// Kafka's `LocalLog.segments(from, to)`: the segments overlapping `[from, to)` (from the one
/// holding `from`, or the first, to the last with a base offset below `to`).
fn segments_in(segments: &[Segment], from: i64, to: i64) -> Range<usize> {
    if from >= to {
        return 0..0;
    }
    let start = segments
        .iter()
        .rposition(|s| s.base_offset() <= from)
        .unwrap_or(0);
    let end = segments
        .iter()
        .position(|s| s.base_offset() >= to)
        .unwrap_or(segments.len());
    start..end.max(start)
}

fn read_checkpoint(log: &Log) -> Result<Option<i64>> {
    let st = log.env.storage.as_ref();
    let path = log.dir.join(CLEANER_OFFSET_FILE);
    Ok(files::read_small_file(st, &path)?
        .and_then(|b| std::str::from_utf8(&b).ok()?.trim().parse().ok()))
}

fn write_checkpoint(log: &Log, offset: i64) -> Result<()> {
    files::write_atomic(
        log.env.storage.as_ref(),
        &log.dir,
        CLEANER_OFFSET_FILE,
        format!("{offset}\n").as_bytes(),
    )
}

/// The aborted transactions of the `.txnindex` files of `segments[from..]` that overlap
/// `[log_start, upper)` (Kafka's `collectAbortedTransactions`).
fn aborted_txns(segments: &[Segment], from: usize, log_start: i64, upper: i64) -> Vec<AbortedTxn> {
    segments[from..]
        .iter()
        .flat_map(|s| s.txn_index().entries().iter().copied())
        .filter(|t| t.last_offset >= log_start && t.first_offset < upper)
        .collect()
}

impl Log {
    /// Where the log stands for compaction at `now_ms`: first dirty and first uncleanable
    /// offsets, dirty ratio, and whether Kafka's cleaner would clean it now (see
    /// [the cleaner](crate::cleaner)).
    ///
    /// # Errors
    ///
    /// I/O errors reading the checkpoint or segment times.
    pub fn cleanable(&self, now_ms: i64) -> Result<CleanableInfo> {
        let st = self.env.storage.as_ref();
        let segs = &self.segments;
        let log_start = self.log_start_offset;
        let log_end = self.log_end_offset();
        let (first_dirty, reset) = match read_checkpoint(self)? {
            None => (log_start, false),
            Some(c) if c < log_start || c > log_end => (log_start, true),
            Some(c) => (c, false),
        };
        let active_base = segs[segs.len() - 1].base_offset();
        let mut uncleanable = self.last_stable_offset().min(active_base);
        let min_lag = self.config.min_compaction_lag_ms.max(0);
        if min_lag > 0 {
            for s in &segs[segments_in(segs, first_dirty, active_base)] {
                if s.largest_timestamp(st)? > now_ms.saturating_sub(min_lag) {
                    uncleanable = uncleanable.min(s.base_offset());
                    break;
                }
            }
        }
        let uncleanable = uncleanable.max(first_dirty);
        // Kafka's `calculateCleanableBytes`: the first uncleanable offset is rounded down to the
        // base offset of the segment holding it (the active segment's when it is at or past it),
        // so a segment the last stable offset falls in is not cleaned (decided by the interop
        // referee, case `open-transaction`).
        let uncleanable = if uncleanable >= active_base {
            active_base
        } else {
            segs[segs
                .iter()
                .rposition(|s| s.base_offset() <= uncleanable)
                .unwrap_or(0)]
            .base_offset()
        };
        let bytes = |r: Range<usize>| segs[r].iter().map(Segment::size).sum::<u64>();
        let clean_bytes = bytes(segments_in(segs, -1, first_dirty));
        let cleanable_bytes = bytes(segments_in(segs, first_dirty.min(uncleanable), uncleanable));
        let total = clean_bytes + cleanable_bytes;
        let dirty_ratio = if total == 0 {
            0.0
        } else {
            cleanable_bytes as f64 / total as f64
        };
        let mut earliest = i64::MAX;
        for s in &segs[segments_in(segs, first_dirty, active_base)] {
            if let Some(ts) = s.first_batch_timestamp()? {
                if ts > 0 {
                    earliest = earliest.min(ts);
                }
            }
        }
        let clean_until = now_ms.saturating_sub(self.config.max_compaction_lag_ms.max(0));
        let compaction_delay_ms = if earliest < clean_until {
            clean_until - earliest
        } else {
            0
        };
        let eligible = self.config.cleanup_policy.compact
            && ((compaction_delay_ms > 0 && cleanable_bytes > 0)
                || dirty_ratio > self.config.min_cleanable_dirty_ratio.get());
        Ok(CleanableInfo {
            first_dirty_offset: first_dirty,
            first_uncleanable_offset: uncleanable,
            clean_bytes,
            cleanable_bytes,
            dirty_ratio,
            compaction_delay_ms,
            eligible,
            reset,
        })
    }

    /// One cleaning pass at time `now_ms` if Kafka's cleaner would pick the log now (the dirty
    /// ratio above `min.cleanable.dirty.ratio`, or `max.compaction.lag.ms` exceeded); see
    /// [the cleaner](crate::cleaner) for what a pass does. A log whose `cleanup.policy` does not
    /// include `compact` is never cleaned.
    ///
    /// # Errors
    ///
    /// [`Error::ReadOnly`], [`Error::Poisoned`]; corruption met while reading; storage errors,
    /// which poison the log (reopening finishes or undoes the interrupted replacement).
    pub fn compact(&mut self, now_ms: i64) -> Result<CompactInfo> {
        self.check_writable()?;
        let r = self.compact_inner(now_ms, false);
        self.guard(r)
    }

    /// As [`Log::compact`], cleaning whatever the dirty ratio (when anything is dirty).
    ///
    /// # Errors
    ///
    /// As [`Log::compact`].
    pub fn compact_now(&mut self, now_ms: i64) -> Result<CompactInfo> {
        self.check_writable()?;
        let r = self.compact_inner(now_ms, true);
        self.guard(r)
    }

    fn compact_inner(&mut self, now_ms: i64, force: bool) -> Result<CompactInfo> {
        let state = self.cleanable(now_ms)?;
        let mut info = CompactInfo {
            first_dirty_offset: state.first_dirty_offset,
            first_uncleanable_offset: state.first_uncleanable_offset,
            dirty_ratio: state.dirty_ratio,
            next_dirty_offset: state.first_dirty_offset,
            ..CompactInfo::default()
        };
        if !self.config.cleanup_policy.compact {
            return Ok(info);
        }
        if state.reset {
            write_checkpoint(self, state.first_dirty_offset)?;
        }
        let start = state.first_dirty_offset;
        let upper = state.first_uncleanable_offset;
        if start >= upper || state.cleanable_bytes == 0 || !(force || state.eligible) {
            return Ok(info);
        }
        let st = self.env.storage.clone();
        let legacy_delete_horizon = match segments_in(&self.segments, 0, start).last() {
            Some(i) => self.segments[i]
                .last_modified(st.as_ref())?
                .saturating_sub(self.config.delete_retention_ms),
            None => 0,
        };
        let memory = usize::try_from(
            self.config
                .cleaner_dedupe_buffer_size
                .min(i64::from(i32::MAX)),
        )
        .unwrap_or(usize::MAX);
        let mut map = OffsetMap::new(memory);
        info.map_full = self.build_offset_map(start, upper, &mut map)?;
        info.map_keys = map.len() as u64;
        let end_offset = map.latest_offset() + 1;
        let n = self
            .segments
            .iter()
            .position(|s| s.base_offset() >= end_offset)
            .unwrap_or(self.segments.len())
            .min(self.segments.len() - 1);
        let sizes: Vec<SegmentSizes> = self.segments[..n]
            .iter()
            .map(|s| {
                let (oi, ti) = s.index_bytes();
                SegmentSizes {
                    base_offset: s.base_offset(),
                    log_bytes: s.size(),
                    offset_index_bytes: oi,
                    time_index_bytes: ti,
                }
            })
            .collect();
        let groups = group_segments(
            &sizes,
            u64::try_from(self.config.segment_bytes).unwrap_or(0),
            u64::try_from(self.config.segment_index_bytes).unwrap_or(0),
            upper,
        );
        let active_producers: HashMap<i64, LastRecord> = self
            .producer_state
            .producers()
            .map(|p| {
                (
                    p.producer_id,
                    LastRecord {
                        last_data_offset: p.batches.last().map(|b| b.last_offset),
                        producer_epoch: p.producer_epoch,
                    },
                )
            })
            .collect();
        // One transaction state for the whole pass, as Kafka's `doClean` passes one
        // `CleanedTransactionMetadata` to every group.
        let mut txn = TxnMetadata::default();
        let mut shift = 0;
        for g in groups {
            let r = (g.start - shift)..(g.end - shift);
            shift += r.len() - 1;
            let ctx = Context {
                map: &map,
                now_ms,
                delete_retention_ms: self.config.delete_retention_ms,
                active_producers: &active_producers,
                high_watermark: self.high_watermark(),
            };
            self.clean_group(r, &ctx, &mut txn, legacy_delete_horizon, &mut info)?;
        }
        write_checkpoint(self, end_offset)?;
        info.cleaned = true;
        info.next_dirty_offset = end_offset;
        Ok(info)
    }

    fn read_window(&self) -> usize {
        usize::try_from(self.config.cleaner_io_buffer_size / 2).unwrap_or(0)
    }

    /// Kafka's `buildOffsetMap`: maps the keys of `[start, end)`. Returns whether the map
    /// filled up.
    fn build_offset_map(&self, start: i64, end: i64, map: &mut OffsetMap) -> Result<bool> {
        let segs = &self.segments;
        let range = segments_in(segs, start, end);
        let mut txn = TxnMetadata::default();
        txn.add_aborted(aborted_txns(segs, range.start, self.log_start_offset, end));
        let max = map.max_desired_len();
        let mut scratch = Vec::new();
        let mut key_scratch = Vec::new();
        let mut digests: Vec<([u8; 16], i64)> = Vec::new();
        for i in range.clone() {
            let seg = &segs[i];
            let next_start = if i + 1 < range.end {
                segs[i + 1].base_offset()
            } else {
                end
            };
            let mut r = seg.reader(self.read_window());
            while let Some(b) = seg.next_batch(&mut r)? {
                if b.last_offset() >= end {
                    break;
                }
                let (control, transactional, pid) = match &b {
                    Batch::V2(v) => (v.is_control(), v.is_transactional(), v.raw_producer_id()),
                    Batch::Legacy(_) => (false, false, -1),
                };
                if let (true, Batch::V2(v)) = (control, &b) {
                    let key = clean::control_key(v, &mut key_scratch).map_err(|e| {
                        Error::corrupt(seg.location(b.position() as u64), e.to_string())
                    })?;
                    txn.on_control_batch(v, key);
                } else if !txn.on_batch(b.last_offset(), transactional, pid) {
                    let at = b.position();
                    let records = b
                        .records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
                        .map_err(|e| Error::corrupt_codec(seg.location(at as u64), e))?;
                    // Digests first, then the puts in a tight loop (see `put_digest`).
                    digests.clear();
                    for rec in records {
                        let rec =
                            rec.map_err(|e| Error::corrupt_codec(seg.location(at as u64), e))?;
                        if let Some(key) = rec.key().filter(|_| rec.offset() >= start) {
                            digests.push((offset_map::md5(key), rec.offset()));
                        }
                    }
                    for (digest, offset) in &digests {
                        if map.len() >= max || !map.put_digest(digest, *offset) {
                            return Ok(true);
                        }
                    }
                }
                if b.last_offset() >= start {
                    map.update_latest_offset(b.last_offset());
                }
            }
            map.update_latest_offset(next_start - 1);
        }
        Ok(false)
    }

    /// Kafka's `cleanSegments`: cleans `self.segments[range]` into one new segment and swaps it
    /// in.
    fn clean_group(
        &mut self,
        range: Range<usize>,
        ctx: &Context<'_>,
        txn: &mut TxnMetadata,
        legacy_delete_horizon: i64,
        info: &mut CompactInfo,
    ) -> Result<()> {
        let st = self.env.storage.clone();
        let st = st.as_ref();
        let dir = self.dir.clone();
        let segs = &self.segments;
        let base = segs[range.start].base_offset();
        let end = segs[range.end].base_offset();
        let now = self.env.clock.now_ms();
        let mut cleaned =
            Segment::create_with_suffix(st, &dir, base, &self.config, now, CLEANED_SUFFIX)?;
        let window = self.read_window();
        let mut scratch = Vec::new();
        let mut out = Vec::new();
        let mut metas = Vec::new();
        let mut kept_txns = Vec::new();
        for i in range.clone() {
            let seg = &segs[i];
            let upper = if i + 1 < range.end {
                segs[i + 1].base_offset()
            } else {
                seg.next_offset()
            };
            txn.add_aborted(aborted_txns(segs, i, self.log_start_offset, upper));
            let retain_legacy_deletes = seg.last_modified(st)? > legacy_delete_horizon;
            let mut r = seg.reader(window);
            while let Some(b) = seg.next_batch(&mut r)? {
                let before = out.len();
                let wrote = clean::clean_batch(
                    ctx,
                    txn,
                    &b,
                    retain_legacy_deletes,
                    &mut scratch,
                    &mut out,
                    info,
                )
                .map_err(|e| match e {
                    Error::CorruptFile { reason, .. } => {
                        Error::corrupt(seg.location(b.position() as u64), reason)
                    }
                    other => other,
                })?;
                if wrote {
                    // Entries just written: a truncated one would be a bug, not a tail.
                    for entry in Entries::with_base(&out[before..], before).strict() {
                        let w = entry.map_err(|e| {
                            Error::corrupt_codec(seg.location(b.position() as u64), e)
                        })?;
                        metas.push(BatchMeta {
                            position: w.position() as u64,
                            size: w.size_in_bytes() as u64,
                            last_offset: w.last_offset(),
                            max_timestamp: w.max_timestamp(),
                        });
                    }
                }
                if out.len() >= window.max(1) {
                    cleaned.append(&out, &[], &metas)?;
                    out.clear();
                    metas.clear();
                }
            }
            if !out.is_empty() {
                cleaned.append(&out, &[], &metas)?;
                out.clear();
                metas.clear();
            }
            for t in txn.cleaned_index.drain(..) {
                cleaned.append_aborted(st, t)?;
                kept_txns.push(t);
            }
            info.bytes_before += seg.size();
        }
        cleaned.seal()?;
        info.bytes_after += cleaned.size();
        drop(cleaned);
        // Kafka's `cleaned.setLastModified(segments.last.lastModified)`.
        let modified = segs[range.end - 1].last_modified(st)?;
        let cleaned_log = dir.join(format!(
            "{}{CLEANED_SUFFIX}",
            files::file_name(base, files::LOG_SUFFIX)
        ));
        st.set_modified_ms(&cleaned_log, modified)
            .map_err(|e| Error::io("set the modification time of", &cleaned_log, e))?;
        st.sync_dir(&dir).map_err(|e| Error::io("sync", &dir, e))?;
        let old: Vec<i64> = segs[range.clone()]
            .iter()
            .map(Segment::base_offset)
            .collect();
        swap::replace(st, &dir, &[base], end, &old)?;
        let (mut segment, needs_recovery) = Segment::open(st, &dir, base, &self.config, now)?;
        if needs_recovery {
            // Not expected for a segment just written and synced; recovery empties the
            // transaction index, so it is written again from what was kept.
            segment.recover(&self.config)?;
            for t in kept_txns {
                segment.append_aborted(st, t)?;
            }
            segment.txn_index_rebuilt()?;
        }
        info.segments_cleaned += range.len();
        info.segments_written += 1;
        self.segments.splice(range, [segment]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::config::LogConfig;
    use crate::log::{AppendOrigin, Env};
    use crate::storage::MemStorage;
    use krecords_codec::write::{NewRecord, V2Builder};
    use std::sync::Arc;

    /// Kafka's `testBuildPartialOffsetMap`: a map with room for two keys, built from offset 2
    /// of five single-record batches, holds keys 2 and 3, says it is full, and ends at 3.
    #[test]
    fn test_build_partial_offset_map() {
        let clock = Arc::new(ManualClock::new(1_714_000_000_000));
        let env = Env::new(Arc::new(MemStorage::with_clock(clock.clone())), clock);
        let mut config = LogConfig::default();
        config.set("segment.index.bytes", "4096").unwrap();
        let mut log = Log::create_with("/t-0", config, env).unwrap();
        for k in 0..5 {
            let k = k.to_string();
            let mut b = V2Builder::new(0);
            b.append(&NewRecord::new(0, Some(k.as_bytes()), Some(k.as_bytes())))
                .unwrap();
            log.append(&b.finish().unwrap(), AppendOrigin::Client)
                .unwrap();
        }
        log.roll().unwrap();
        // Three slots and Kafka's load factor of 0.9: two keys (Kafka's test: three slots at
        // 0.75).
        let mut map = OffsetMap::new(3 * 24);
        assert_eq!(map.max_desired_len(), 2);
        let full = log
            .build_offset_map(2, i64::from(i32::MAX), &mut map)
            .unwrap();
        assert!(full);
        assert_eq!(map.len(), 2);
        for (key, offset) in [("0", -1), ("2", 2), ("3", 3), ("4", -1)] {
            assert_eq!(map.get(key.as_bytes()), offset, "key {key}");
        }
        assert_eq!(map.latest_offset(), 3);
    }
}
