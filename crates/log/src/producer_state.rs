//! Producer state: idempotent and transactional producers (Kafka's `ProducerStateManager`,
//! `ProducerAppendInfo`, `ProducerStateEntry` and `BatchMetadata`), and the `.snapshot` files
//! that persist it.
//!
//! # The rules
//!
//! For every v2 batch with a producer id (Kafka's `UnifiedLog.analyzeAndValidateProducerState`),
//! after the batch passed validation and got its offsets:
//!
//! 1. From a client, a batch whose epoch is the producer's and whose sequence range equals one of
//!    the producer's last five batches is a duplicate: the append returns the offsets of the
//!    original and writes nothing (`ProducerStateEntry.findDuplicateBatch`).
//! 2. An epoch below the producer's is `INVALID_PRODUCER_EPOCH`, for data batches and markers
//!    (`checkProducerEpoch`, for markers the legacy rule of transaction versions 0 and 1: the
//!    marker epoch may equal the producer's).
//! 3. From a client (`checkSequence`): at a new epoch the first sequence must be 0, unless the
//!    log knows no epoch for the producer (an unknown or expired producer id: any sequence is
//!    accepted); at the same epoch it must follow the last sequence (`last + 1`, or 0 after
//!    `i32::MAX`), where "no last sequence" (the epoch was bumped by a marker) means it must be
//!    0; a producer entry without an epoch accepts anything. Otherwise
//!    `OUT_OF_ORDER_SEQUENCE_NUMBER`. Coordinator appends skip this check.
//! 4. A non-transactional batch from a producer with an open transaction is
//!    `INVALID_TXN_STATE`; a transactional batch from a producer without one opens a transaction
//!    at its base offset (`appendDataBatch`).
//! 5. A COMMIT or ABORT marker (a control batch from the coordinator) with a coordinator epoch
//!    below the last one seen for the producer is `TRANSACTION_COORDINATOR_FENCED`
//!    (`checkCoordinatorEpoch`). It ends the producer's open transaction, if any; an aborted one
//!    goes into the transaction index with the last stable offset after it
//!    (`appendEndTxnMarker`, `ProducerStateManager.lastStableOffset`). The marker's epoch becomes
//!    the producer's (a higher one forgets the last five batches) and its coordinator epoch the
//!    last seen.
//!
//! The last stable offset is the first offset of the earliest open transaction, or the high
//! watermark. Kafka's transaction version 2 rules (markers must bump the epoch) and the
//! partition verification of KIP-890 need the coordinator's transaction version, which a
//! marker batch does not carry; this log applies the version 0/1 rules.
//!
//! # Snapshots
//!
//! `<offset>.snapshot` holds the state of every producer after the batches below `offset`, in
//! Kafka's schema (`ProducerStateManager.PID_SNAPSHOT_MAP_SCHEMA`, version 1):
//!
//! ```text
//! version  i16   1
//! crc      u32   CRC-32C of everything after this field
//! count    i32   number of entries
//! entry (46 bytes), count times:
//!   producer id               i64
//!   epoch                     i16
//!   last sequence             i32   -1 when the producer has no batch at its epoch
//!   last offset               i64   -1 likewise
//!   offset delta              i32   last offset - first offset of the last batch (0 when none)
//!   timestamp                 i64   last timestamp (of a batch or a marker)
//!   coordinator epoch         i32
//!   current txn first offset  i64   -1 when no transaction is open
//! ```
//!
//! Only the last batch of each producer is kept, so after loading a snapshot a retry of an older
//! batch is judged by its sequence, as in Kafka. Snapshots are taken when a segment rolls (at the
//! new base offset) and when the log closes or finishes loading (at the log end), only for an
//! offset past the last snapshot. Loading keeps the latest snapshot whose CRC and structure check
//! out (others found corrupt are deleted, as `loadFromSnapshot` does), forgets producers expired
//! by `producer.id.expiration.ms`, and replays the log after it; with no usable snapshot the log
//! is replayed from its start. After each roll the snapshots below the second-newest segment (and
//! below the segment before the recovery point) are deleted, as Kafka's
//! `deleteSnapshotsAfterRecoveryPointCheckpoint`, so the last two segments keep theirs.

use crate::error::{Error, Location, Result};
use crate::files::{self, SNAPSHOT_SUFFIX};
use crate::storage::Storage;
use crate::transaction::CompletedTxn;
use krecords_codec::control::{ControlRecordKey, ControlRecordType, EndTxnMarker};
use krecords_codec::read::{Batch, V2Batch};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Batches remembered per producer for duplicate detection (Kafka's
/// `ProducerStateEntry.NUM_BATCHES_TO_RETAIN`).
pub const NUM_BATCHES_TO_RETAIN: usize = 5;

/// Version of the snapshot format (Kafka's `PRODUCER_SNAPSHOT_VERSION`).
pub const SNAPSHOT_VERSION: i16 = 1;

/// Size of one snapshot entry.
pub const SNAPSHOT_ENTRY_SIZE: usize = 46;

/// Bytes before the entries: version, CRC and entry count.
const SNAPSHOT_HEADER_SIZE: usize = 10;
/// Where the CRC'd part starts (after version and CRC).
const SNAPSHOT_CRC_START: usize = 6;

const NO_PRODUCER_EPOCH: i16 = -1;
const NO_SEQUENCE: i32 = -1;

/// `sequence - decrement`, wrapping below 0 to `i32::MAX` as Kafka's
/// `DefaultRecordBatch.decrementSequence` does.
///
/// # Examples
///
/// ```
/// use krecords_log::producer_state::decrement_sequence;
/// assert_eq!(decrement_sequence(10, 3), 7);
/// assert_eq!(decrement_sequence(1, 3), i32::MAX - 1);
/// ```
pub fn decrement_sequence(sequence: i32, decrement: i32) -> i32 {
    if sequence < decrement {
        i32::MAX
            .wrapping_sub(decrement.wrapping_sub(sequence))
            .wrapping_add(1)
    } else {
        sequence.wrapping_sub(decrement)
    }
}

/// One of the last batches of a producer (Kafka's `BatchMetadata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct BatchMetadata {
    /// Sequence of the batch's last record.
    pub last_seq: i32,
    /// Offset of the batch's last record.
    pub last_offset: i64,
    /// `last_offset` minus the offset of the first record.
    pub offset_delta: i32,
    /// The batch's max timestamp as stored (the append time for LogAppendTime).
    pub timestamp: i64,
}

impl BatchMetadata {
    /// Sequence of the batch's first record (wrapping as sequences do).
    pub fn first_seq(&self) -> i32 {
        decrement_sequence(self.last_seq, self.offset_delta)
    }

    /// Offset of the batch's first record.
    pub fn first_offset(&self) -> i64 {
        self.last_offset - i64::from(self.offset_delta)
    }
}

/// What the log knows about one producer id (Kafka's `ProducerStateEntry`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProducerState {
    /// The producer id.
    pub producer_id: i64,
    /// The current epoch (-1 when none is known).
    pub producer_epoch: i16,
    /// Epoch of the coordinator that wrote the last marker (-1 when none).
    pub coordinator_epoch: i32,
    /// Timestamp of the last batch or marker (-1 when none).
    pub last_timestamp: i64,
    /// First offset of the open transaction.
    pub current_txn_first_offset: Option<i64>,
    /// The last batches at the current epoch, oldest first, at most
    /// [`NUM_BATCHES_TO_RETAIN`].
    pub batches: Vec<BatchMetadata>,
}

impl ProducerState {
    fn empty(producer_id: i64) -> Self {
        ProducerState {
            producer_id,
            producer_epoch: NO_PRODUCER_EPOCH,
            coordinator_epoch: -1,
            last_timestamp: -1,
            current_txn_first_offset: None,
            batches: Vec::new(),
        }
    }

    /// Sequence of the last record of the last batch, -1 when there is none.
    pub fn last_seq(&self) -> i32 {
        self.batches.last().map_or(NO_SEQUENCE, |b| b.last_seq)
    }

    /// The same state without its batches (Kafka's `withProducerIdAndBatchMetadata(pid, empty)`,
    /// the starting point of an append's updated entry).
    fn without_batches(&self) -> Self {
        ProducerState {
            batches: Vec::new(),
            ..self.clone()
        }
    }

    /// A new epoch forgets the batches of the old one.
    fn maybe_update_epoch(&mut self, epoch: i16) {
        if self.producer_epoch != epoch {
            self.batches.clear();
            self.producer_epoch = epoch;
        }
    }

    fn add_batch_metadata(&mut self, b: BatchMetadata) {
        if self.batches.len() == NUM_BATCHES_TO_RETAIN {
            self.batches.remove(0);
        }
        self.batches.push(b);
    }

    /// Kafka's `update(nextEntry)`: the state after an append merged in.
    fn update_from(&mut self, next: ProducerState) {
        self.maybe_update_epoch(next.producer_epoch);
        for b in next.batches {
            self.add_batch_metadata(b);
        }
        self.coordinator_epoch = next.coordinator_epoch;
        self.current_txn_first_offset = next.current_txn_first_offset;
        self.last_timestamp = next.last_timestamp;
    }

    /// Kafka's `findDuplicateBatch`.
    fn find_duplicate(&self, epoch: i16, first_seq: i32, last_seq: i32) -> Option<BatchMetadata> {
        if epoch != self.producer_epoch {
            return None;
        }
        self.batches
            .iter()
            .find(|b| b.first_seq() == first_seq && b.last_seq == last_seq)
            .copied()
    }

    fn to_snapshot_entry(&self) -> ProducerSnapshotEntry {
        let last = self.batches.last();
        ProducerSnapshotEntry {
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            last_sequence: last.map_or(NO_SEQUENCE, |b| b.last_seq),
            last_offset: last.map_or(-1, |b| b.last_offset),
            offset_delta: last.map_or(0, |b| b.offset_delta),
            timestamp: self.last_timestamp,
            coordinator_epoch: self.coordinator_epoch,
            current_txn_first_offset: self.current_txn_first_offset.unwrap_or(-1),
        }
    }

    fn from_snapshot_entry(e: &ProducerSnapshotEntry) -> Self {
        let batches = if e.last_offset >= 0 {
            vec![BatchMetadata {
                last_seq: e.last_sequence,
                last_offset: e.last_offset,
                offset_delta: e.offset_delta,
                timestamp: e.timestamp,
            }]
        } else {
            Vec::new()
        };
        ProducerState {
            producer_id: e.producer_id,
            producer_epoch: e.producer_epoch,
            coordinator_epoch: e.coordinator_epoch,
            last_timestamp: e.timestamp,
            current_txn_first_offset: Some(e.current_txn_first_offset).filter(|&o| o >= 0),
            batches,
        }
    }
}

/// One entry of a `.snapshot` file, field by field as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ProducerSnapshotEntry {
    /// The producer id.
    pub producer_id: i64,
    /// The producer's epoch.
    pub producer_epoch: i16,
    /// Last sequence written (-1 when none at this epoch).
    pub last_sequence: i32,
    /// Offset of the last record written (-1 when none).
    pub last_offset: i64,
    /// Last offset minus first offset of the last batch.
    pub offset_delta: i32,
    /// Timestamp of the last batch or marker.
    pub timestamp: i64,
    /// Epoch of the coordinator of the last marker.
    pub coordinator_epoch: i32,
    /// First offset of the open transaction, -1 when none.
    pub current_txn_first_offset: i64,
}

/// Encodes a snapshot file (see the module documentation for the layout).
///
/// # Examples
///
/// ```
/// use krecords_log::producer_state::{encode_snapshot, parse_snapshot};
/// let bytes = encode_snapshot(&[]);
/// assert_eq!(bytes.len(), 10);
/// assert!(parse_snapshot(std::path::Path::new("0.snapshot"), &bytes).unwrap().is_empty());
/// ```
pub fn encode_snapshot(entries: &[ProducerSnapshotEntry]) -> Vec<u8> {
    let mut b = Vec::with_capacity(SNAPSHOT_HEADER_SIZE + entries.len() * SNAPSHOT_ENTRY_SIZE);
    b.extend_from_slice(&SNAPSHOT_VERSION.to_be_bytes());
    b.extend_from_slice(&[0; 4]);
    let count = i32::try_from(entries.len()).unwrap_or(i32::MAX);
    b.extend_from_slice(&count.to_be_bytes());
    for e in entries.iter().take(count as usize) {
        b.extend_from_slice(&e.producer_id.to_be_bytes());
        b.extend_from_slice(&e.producer_epoch.to_be_bytes());
        b.extend_from_slice(&e.last_sequence.to_be_bytes());
        b.extend_from_slice(&e.last_offset.to_be_bytes());
        b.extend_from_slice(&e.offset_delta.to_be_bytes());
        b.extend_from_slice(&e.timestamp.to_be_bytes());
        b.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
        b.extend_from_slice(&e.current_txn_first_offset.to_be_bytes());
    }
    let crc = krecords_codec::crc::crc32c(&b[SNAPSHOT_CRC_START..]);
    b[2..6].copy_from_slice(&crc.to_be_bytes());
    b
}

/// The fixed header of a snapshot file, field by field, with where the fields are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SnapshotHeader {
    pub(crate) version: i16,
    pub(crate) stored_crc: u32,
    /// CRC-32C of everything after the CRC field.
    pub(crate) computed_crc: u32,
    /// The entry count as stored (may be negative).
    pub(crate) count: i32,
    /// Byte positions of the CRC and count fields.
    pub(crate) crc_position: u64,
    pub(crate) count_position: u64,
    /// Bytes before the entries.
    pub(crate) header_size: usize,
}

/// Reads the header of a snapshot file; `None` when `bytes` is shorter than it.
pub(crate) fn snapshot_header(bytes: &[u8]) -> Option<SnapshotHeader> {
    let h = bytes.get(..SNAPSHOT_HEADER_SIZE)?;
    Some(SnapshotHeader {
        version: i16::from_be_bytes([h[0], h[1]]),
        stored_crc: u32::from_be_bytes([h[2], h[3], h[4], h[5]]),
        computed_crc: krecords_codec::crc::crc32c(&bytes[SNAPSHOT_CRC_START..]),
        count: i32::from_be_bytes([h[6], h[7], h[8], h[9]]),
        crc_position: 2,
        count_position: SNAPSHOT_CRC_START as u64,
        header_size: SNAPSHOT_HEADER_SIZE,
    })
}

/// Parses a snapshot file. `path` only names the file in errors.
///
/// # Errors
///
/// [`Error::CorruptFile`] for a version other than 1, a CRC mismatch, a negative count, or
/// fewer bytes than the count needs (Kafka's `CorruptSnapshotException`). Bytes after the last
/// entry are ignored, as Kafka's schema reader ignores them (the CRC still covers them).
pub fn parse_snapshot(path: &Path, bytes: &[u8]) -> Result<Vec<ProducerSnapshotEntry>> {
    let bad = |reason: String| Error::CorruptFile {
        path: path.to_path_buf(),
        reason,
    };
    let Some(SnapshotHeader {
        version,
        stored_crc: stored,
        computed_crc: computed,
        count,
        ..
    }) = snapshot_header(bytes)
    else {
        return Err(bad(format!(
            "{} bytes is shorter than the {SNAPSHOT_HEADER_SIZE}-byte header",
            bytes.len()
        )));
    };
    if version != SNAPSHOT_VERSION {
        return Err(bad(format!(
            "snapshot contained an unknown file version {version}"
        )));
    }
    if stored != computed {
        return Err(bad(format!(
            "snapshot is corrupt (stored crc {stored}, computed {computed})"
        )));
    }
    let Ok(count) = usize::try_from(count) else {
        return Err(bad(format!("array size {count} cannot be negative")));
    };
    let body = &bytes[SNAPSHOT_HEADER_SIZE..];
    if count > body.len() / SNAPSHOT_ENTRY_SIZE {
        return Err(bad(format!(
            "{count} entries need {} bytes, only {} are left",
            count.saturating_mul(SNAPSHOT_ENTRY_SIZE),
            body.len()
        )));
    }
    let mut out = Vec::with_capacity(count);
    for e in body.chunks_exact(SNAPSHOT_ENTRY_SIZE).take(count) {
        let i64_at = |at: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&e[at..at + 8]);
            i64::from_be_bytes(x)
        };
        let i32_at = |at: usize| i32::from_be_bytes([e[at], e[at + 1], e[at + 2], e[at + 3]]);
        out.push(ProducerSnapshotEntry {
            producer_id: i64_at(0),
            producer_epoch: i16::from_be_bytes([e[8], e[9]]),
            last_sequence: i32_at(10),
            last_offset: i64_at(14),
            offset_delta: i32_at(22),
            timestamp: i64_at(26),
            coordinator_epoch: i32_at(34),
            current_txn_first_offset: i64_at(38),
        });
    }
    Ok(out)
}

/// Where an append comes from, for the producer checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A producer: duplicates, epochs, sequences, transaction state.
    Client,
    /// The transaction coordinator (markers): epochs, coordinator epochs, no sequences.
    Coordinator,
    /// Replaying the log while loading: no checks (Kafka's `REPLICATION` origin).
    Replay,
}

/// The outcome of checking an append against producer state.
#[derive(Debug)]
pub(crate) enum Checked {
    /// A retry of a batch in the log: its metadata.
    Duplicate(BatchMetadata),
    /// New batches: what to apply once they are written.
    Append(ProducerUpdate),
}

/// Producer changes of one append (Kafka's `ProducerAppendInfo`s and completed transactions).
#[derive(Debug, Default)]
pub(crate) struct ProducerUpdate {
    /// The updated entry of every producer touched, in first-touched order.
    entries: Vec<ProducerState>,
    /// Transactions started: (first offset, producer id).
    started: Vec<(i64, i64)>,
    /// Transactions ended by markers.
    pub(crate) completed: Vec<CompletedTxn>,
}

/// Producer entries as they would be after appends that were checked but not yet applied: the
/// staged state [`crate::Log::append_all`] checks each of its entries against (only the
/// producers touched are held; the others are read from the manager).
#[derive(Debug, Default)]
pub(crate) struct Staged {
    producers: BTreeMap<i64, ProducerState>,
}

/// Kafka's `ProducerStateManager`.
#[derive(Debug)]
pub(crate) struct ProducerStateManager {
    producers: BTreeMap<i64, ProducerState>,
    /// Open transactions: first offset → producer id.
    ongoing: BTreeMap<i64, i64>,
    /// Offsets of the snapshot files in the directory.
    snapshots: BTreeSet<i64>,
    /// The state reflects the log below this offset.
    map_end_offset: i64,
    /// Offset of the last snapshot taken or loaded.
    last_snap_offset: i64,
    /// When expired producers were last removed.
    last_expiration_check_ms: i64,
}

fn at(b: &Batch<'_>) -> Location {
    Location::Append {
        position: b.position(),
    }
}

impl ProducerStateManager {
    /// An empty state for a log starting at `start_offset`.
    pub(crate) fn new(start_offset: i64, now_ms: i64) -> Self {
        ProducerStateManager {
            producers: BTreeMap::new(),
            ongoing: BTreeMap::new(),
            snapshots: BTreeSet::new(),
            map_end_offset: start_offset,
            last_snap_offset: start_offset,
            last_expiration_check_ms: now_ms,
        }
    }

    pub(crate) fn producer(&self, producer_id: i64) -> Option<&ProducerState> {
        self.producers.get(&producer_id)
    }

    pub(crate) fn producers(&self) -> impl Iterator<Item = &ProducerState> {
        self.producers.values()
    }

    pub(crate) fn snapshot_offsets(&self) -> impl Iterator<Item = i64> + '_ {
        self.snapshots.iter().copied()
    }

    /// First offset of the earliest open transaction.
    pub(crate) fn first_unstable_offset(&self) -> Option<i64> {
        self.ongoing.keys().next().copied()
    }

    /// The last stable offset given the high watermark.
    pub(crate) fn last_stable_offset(&self, high_watermark: i64) -> i64 {
        self.first_unstable_offset()
            .map_or(high_watermark, |o| o.min(high_watermark))
    }

    pub(crate) fn map_end_offset(&self) -> i64 {
        self.map_end_offset
    }

    pub(crate) fn set_map_end_offset(&mut self, offset: i64) {
        self.map_end_offset = offset;
    }

    /// The entry of `producer_id`: the staged one when there is one, else the manager's.
    fn lookup<'s>(
        &'s self,
        staged: Option<&'s Staged>,
        producer_id: i64,
    ) -> Option<&'s ProducerState> {
        staged
            .and_then(|s| s.producers.get(&producer_id))
            .or_else(|| self.producers.get(&producer_id))
    }

    /// Checks the batches of a validated append (offsets assigned) as the module documentation
    /// describes, against the manager's state as changed by `staged` (the earlier entries of a
    /// multi-entry append; `None` for a single append). Nothing changes until [`Self::apply`]
    /// (or [`Self::stage`]).
    pub(crate) fn check(
        &self,
        batches: &[Batch<'_>],
        origin: Origin,
        staged: Option<&Staged>,
        scratch: &mut Vec<u8>,
    ) -> Result<Checked> {
        let mut update = ProducerUpdate::default();
        for b in batches {
            let Batch::V2(v) = b else { continue };
            let pid = v.raw_producer_id();
            if pid < 0 {
                continue;
            }
            if origin == Origin::Client {
                if let Some(e) = self.lookup(staged, pid) {
                    let last_seq = v.last_sequence().unwrap_or(NO_SEQUENCE);
                    if let Some(d) =
                        e.find_duplicate(v.raw_producer_epoch(), v.raw_base_sequence(), last_seq)
                    {
                        return Ok(Checked::Duplicate(d));
                    }
                }
            }
            self.check_batch(&mut update, b, v, origin, staged, scratch)?;
        }
        Ok(Checked::Append(update))
    }

    /// Records a checked append in `staged` as [`Self::apply`] would record it in the manager,
    /// so that the next entry of a multi-entry append is checked against it.
    pub(crate) fn stage(&self, staged: &mut Staged, update: &ProducerUpdate) {
        for e in &update.entries {
            let merged = match self.lookup(Some(staged), e.producer_id) {
                Some(current) => {
                    let mut merged = current.clone();
                    merged.update_from(e.clone());
                    merged
                }
                None => e.clone(),
            };
            staged.producers.insert(e.producer_id, merged);
        }
    }

    /// Kafka's `ProducerAppendInfo.append` for one batch.
    fn check_batch(
        &self,
        update: &mut ProducerUpdate,
        b: &Batch<'_>,
        v: &V2Batch<'_>,
        origin: Origin,
        staged: Option<&Staged>,
        scratch: &mut Vec<u8>,
    ) -> Result<()> {
        let pid = v.raw_producer_id();
        let empty;
        let current = match self.lookup(staged, pid) {
            Some(e) => e,
            None => {
                empty = ProducerState::empty(pid);
                &empty
            }
        };
        let i = match update.entries.iter().position(|e| e.producer_id == pid) {
            Some(i) => i,
            None => {
                update.entries.push(current.without_batches());
                update.entries.len() - 1
            }
        };
        let updated = &mut update.entries[i];
        let epoch = v.raw_producer_epoch();
        if v.is_control() {
            let mut records = v
                .records(scratch, krecords_codec::DEFAULT_DECOMPRESS_LIMIT)
                .map_err(|e| Error::invalid_record(at(b), e.to_string()))?;
            let Some(record) = records.next() else {
                // An empty control batch: the transaction was cleaned away.
                return Ok(());
            };
            let record = record.map_err(|e| Error::invalid_record(at(b), e.to_string()))?;
            let key = ControlRecordKey::parse(record.key, b.position())
                .map_err(|e| Error::invalid_record(at(b), e.to_string()))?;
            if !key.kind.is_end_txn() {
                return Err(Error::invalid_record(
                    at(b),
                    format!(
                        "invalid control record type for end transaction marker: {}",
                        key.kind.kafka_name()
                    ),
                ));
            }
            let marker = EndTxnMarker::parse(record.value, b.position())
                .map_err(|e| Error::invalid_record(at(b), e.to_string()))?;
            let offset = v.base_offset();
            check_epoch(updated, epoch, offset, origin)?;
            if updated.coordinator_epoch > marker.coordinator_epoch && origin != Origin::Replay {
                return Err(Error::TransactionCoordinatorFenced {
                    producer_id: pid,
                    coordinator_epoch: marker.coordinator_epoch,
                    current_coordinator_epoch: updated.coordinator_epoch,
                });
            }
            if let Some(first) = updated.current_txn_first_offset {
                update.completed.push(CompletedTxn {
                    producer_id: pid,
                    first_offset: first,
                    last_offset: offset,
                    aborted: key.kind == ControlRecordType::Abort,
                });
            }
            updated.maybe_update_epoch(epoch);
            updated.coordinator_epoch = marker.coordinator_epoch;
            updated.current_txn_first_offset = None;
            updated.last_timestamp = record.timestamp;
            return Ok(());
        }
        let first_offset = v.base_offset();
        let last_offset = v.last_offset();
        let first_seq = v.raw_base_sequence();
        check_epoch(updated, epoch, first_offset, origin)?;
        if origin == Origin::Client {
            check_sequence(current, updated, epoch, first_seq, first_offset)?;
        }
        updated.maybe_update_epoch(epoch);
        updated.add_batch_metadata(BatchMetadata {
            last_seq: v.last_sequence().unwrap_or(NO_SEQUENCE),
            last_offset,
            offset_delta: i32::try_from(last_offset - first_offset).unwrap_or(i32::MAX),
            timestamp: v.max_timestamp(),
        });
        updated.last_timestamp = v.max_timestamp();
        match updated.current_txn_first_offset {
            Some(txn_first_offset) if !v.is_transactional() => {
                return Err(Error::InvalidTxnState {
                    producer_id: pid,
                    txn_first_offset,
                    offset: first_offset,
                });
            }
            None if v.is_transactional() => {
                updated.current_txn_first_offset = Some(first_offset);
                update.started.push((first_offset, pid));
            }
            _ => {}
        }
        Ok(())
    }

    /// Records a checked append once its batches are in the segment (Kafka's `update` for every
    /// producer; the started transactions become open). Completed transactions are ended by
    /// [`Self::complete_txn`] after the caller wrote the transaction index.
    pub(crate) fn apply(&mut self, update: &ProducerUpdate) {
        for e in &update.entries {
            match self.producers.get_mut(&e.producer_id) {
                Some(current) => current.update_from(e.clone()),
                None => {
                    self.producers.insert(e.producer_id, e.clone());
                }
            }
        }
        for &(first, pid) in &update.started {
            self.ongoing.insert(first, pid);
        }
    }

    /// Kafka's `lastStableOffset(completedTxn)`: the first offset of the earliest open
    /// transaction of another producer, else the offset after the marker.
    pub(crate) fn last_stable_offset_after(&self, txn: &CompletedTxn) -> i64 {
        self.ongoing
            .iter()
            .find(|(_, &pid)| pid != txn.producer_id)
            .map_or(txn.last_offset + 1, |(&first, _)| first)
    }

    /// Kafka's `completeTxn`.
    pub(crate) fn complete_txn(&mut self, txn: &CompletedTxn) {
        self.ongoing.remove(&txn.first_offset);
    }

    /// Replays one batch while loading (no checks, as Kafka's `REPLICATION` origin). Returns
    /// the transaction it completed with the last stable offset after it. A batch that cannot
    /// be interpreted (a control batch that is not a marker) is skipped.
    pub(crate) fn replay(
        &mut self,
        b: &Batch<'_>,
        scratch: &mut Vec<u8>,
    ) -> Option<(CompletedTxn, i64)> {
        let Batch::V2(v) = b else { return None };
        if v.raw_producer_id() < 0 {
            return None;
        }
        let mut update = ProducerUpdate::default();
        if self
            .check_batch(&mut update, b, v, Origin::Replay, None, scratch)
            .is_err()
        {
            return None;
        }
        self.apply(&update);
        let txn = update.completed.first().copied()?;
        let lso = self.last_stable_offset_after(&txn);
        self.complete_txn(&txn);
        Some((txn, lso))
    }

    /// Kafka's `isProducerExpired`.
    fn is_expired(e: &ProducerState, now_ms: i64, expiration_ms: i64) -> bool {
        e.current_txn_first_offset.is_none()
            && now_ms.saturating_sub(e.last_timestamp) >= expiration_ms
    }

    /// Kafka's `removeExpiredProducers`. Returns how many were removed.
    pub(crate) fn remove_expired(&mut self, now_ms: i64, expiration_ms: i64) -> usize {
        let before = self.producers.len();
        self.producers
            .retain(|_, e| !Self::is_expired(e, now_ms, expiration_ms));
        self.last_expiration_check_ms = now_ms;
        before - self.producers.len()
    }

    /// Runs [`Self::remove_expired`] when `interval_ms` passed since the last run (Kafka's
    /// periodic `PeriodicProducerExpirationCheck`).
    pub(crate) fn maybe_remove_expired(
        &mut self,
        now_ms: i64,
        expiration_ms: i64,
        interval_ms: i64,
    ) {
        if now_ms.saturating_sub(self.last_expiration_check_ms) >= interval_ms {
            self.remove_expired(now_ms, expiration_ms);
        }
    }

    /// Takes a snapshot at the map end offset unless one was already taken there or later
    /// (Kafka's `takeSnapshot`).
    pub(crate) fn take_snapshot(&mut self, storage: &dyn Storage, dir: &Path) -> Result<()> {
        if self.map_end_offset <= self.last_snap_offset {
            return Ok(());
        }
        let entries: Vec<ProducerSnapshotEntry> = self
            .producers
            .values()
            .map(ProducerState::to_snapshot_entry)
            .collect();
        let name = files::file_name(self.map_end_offset, SNAPSHOT_SUFFIX);
        files::write_atomic(storage, dir, &name, &encode_snapshot(&entries))?;
        self.snapshots.insert(self.map_end_offset);
        self.last_snap_offset = self.map_end_offset;
        Ok(())
    }

    fn delete_snapshot(&mut self, storage: &dyn Storage, dir: &Path, offset: i64) -> Result<()> {
        self.snapshots.remove(&offset);
        files::remove_if_exists(
            storage,
            &dir.join(files::file_name(offset, SNAPSHOT_SUFFIX)),
        )?;
        Ok(())
    }

    /// Deletes the snapshots below `offset` (Kafka's `deleteSnapshotsBefore`); the caller syncs
    /// the directory.
    pub(crate) fn delete_snapshots_before(
        &mut self,
        storage: &dyn Storage,
        dir: &Path,
        offset: i64,
    ) -> Result<bool> {
        let old: Vec<i64> = self.snapshots.range(..offset).copied().collect();
        for o in &old {
            self.delete_snapshot(storage, dir, *o)?;
        }
        Ok(!old.is_empty())
    }

    /// Deletes the snapshot at `offset` if there is one (a segment with this base offset was
    /// deleted: Kafka's `deleteProducerSnapshots`); the caller syncs the directory.
    pub(crate) fn delete_snapshot_at(
        &mut self,
        storage: &dyn Storage,
        dir: &Path,
        offset: i64,
    ) -> Result<bool> {
        if !self.snapshots.contains(&offset) {
            return Ok(false);
        }
        self.delete_snapshot(storage, dir, offset)?;
        Ok(true)
    }

    /// Kafka's `onLogStartOffsetIncremented`.
    pub(crate) fn on_log_start_offset_incremented(&mut self, log_start_offset: i64) {
        if self.map_end_offset < log_start_offset {
            self.map_end_offset = log_start_offset;
        }
        self.last_snap_offset = self
            .snapshots
            .iter()
            .next_back()
            .copied()
            .unwrap_or(log_start_offset);
    }

    /// Loading, step 1: notes the snapshot files among `names` and removes the stray ones
    /// (Kafka's `removeStraySnapshots`): those not at a segment base offset, except the latest
    /// when it is past every segment base (the one a clean shutdown writes at the log end).
    pub(crate) fn load_snapshot_names(
        &mut self,
        storage: &dyn Storage,
        dir: &Path,
        names: &[String],
        segment_bases: &[i64],
    ) -> Result<()> {
        self.snapshots = names
            .iter()
            .filter_map(|n| files::parse_file_name(n, SNAPSHOT_SUFFIX))
            .collect();
        let strays: Vec<i64> = self
            .snapshots
            .iter()
            .copied()
            .filter(|o| segment_bases.binary_search(o).is_err())
            .collect();
        let max_base = segment_bases.last().copied();
        if let Some((&latest, older)) = strays.split_last() {
            for &o in older {
                self.delete_snapshot(storage, dir, o)?;
            }
            if max_base.is_some_and(|m| latest < m) {
                self.delete_snapshot(storage, dir, latest)?;
            }
        }
        Ok(())
    }

    /// Loading, step 2 (Kafka's `truncateAndReload` and `loadFromSnapshot`): deletes the
    /// snapshots above `log_end` or `load_limit`, or at or below `log_start`, then loads the
    /// latest one that reads back, deleting those that do not; the map end offset becomes its
    /// offset (`log_start` without one). Producers expired at `now_ms` are not loaded. Returns
    /// the offset of the snapshot loaded.
    pub(crate) fn load_latest_snapshot(
        &mut self,
        storage: &dyn Storage,
        dir: &Path,
        log_start: i64,
        load_limit: i64,
        now_ms: i64,
        expiration_ms: i64,
    ) -> Result<Option<i64>> {
        let out_of_range: Vec<i64> = self
            .snapshots
            .iter()
            .copied()
            .filter(|&o| o > load_limit || o <= log_start)
            .collect();
        for o in out_of_range {
            self.delete_snapshot(storage, dir, o)?;
        }
        self.producers.clear();
        self.ongoing.clear();
        while let Some(&offset) = self.snapshots.iter().next_back() {
            let path = dir.join(files::file_name(offset, SNAPSHOT_SUFFIX));
            let parsed = match files::read_small_file(storage, &path)? {
                Some(bytes) => parse_snapshot(&path, &bytes),
                None => Err(Error::CorruptFile {
                    path: path.clone(),
                    reason: "vanished".into(),
                }),
            };
            match parsed {
                Ok(entries) => {
                    for e in &entries {
                        let state = ProducerState::from_snapshot_entry(e);
                        if Self::is_expired(&state, now_ms, expiration_ms) {
                            continue;
                        }
                        if let Some(first) = state.current_txn_first_offset {
                            self.ongoing.insert(first, state.producer_id);
                        }
                        self.producers.insert(state.producer_id, state);
                    }
                    self.map_end_offset = offset;
                    self.last_snap_offset = offset;
                    return Ok(Some(offset));
                }
                Err(_) => self.delete_snapshot(storage, dir, offset)?,
            }
        }
        self.map_end_offset = log_start;
        self.last_snap_offset = log_start;
        Ok(None)
    }
}

/// Kafka's `checkProducerEpoch` (transaction versions 0 and 1).
fn check_epoch(updated: &ProducerState, epoch: i16, offset: i64, origin: Origin) -> Result<()> {
    if epoch < updated.producer_epoch && origin != Origin::Replay {
        return Err(Error::InvalidProducerEpoch {
            producer_id: updated.producer_id,
            epoch,
            current_epoch: updated.producer_epoch,
            offset,
        });
    }
    Ok(())
}

/// Kafka's `checkSequence` (without the KIP-890 verification state).
fn check_sequence(
    current: &ProducerState,
    updated: &ProducerState,
    epoch: i16,
    first_seq: i32,
    offset: i64,
) -> Result<()> {
    let err = |last_sequence: i32, reason: String| Error::OutOfOrderSequence {
        producer_id: current.producer_id,
        epoch,
        sequence: first_seq,
        last_sequence,
        reason,
    };
    if epoch != updated.producer_epoch {
        if first_seq != 0 && updated.producer_epoch != NO_PRODUCER_EPOCH {
            return Err(err(
                NO_SEQUENCE,
                format!(
                    "a new epoch must start at sequence 0 (offset {offset}, current epoch {})",
                    updated.producer_epoch
                ),
            ));
        }
        return Ok(());
    }
    let last = if !updated.batches.is_empty() {
        updated.last_seq()
    } else if epoch == current.producer_epoch {
        current.last_seq()
    } else {
        NO_SEQUENCE
    };
    let in_sequence =
        i64::from(first_seq) == i64::from(last) + 1 || (first_seq == 0 && last == i32::MAX);
    if current.producer_epoch != NO_PRODUCER_EPOCH && !in_sequence {
        return Err(err(
            last,
            format!(
                "expected sequence {} at offset {offset}",
                expected_after(last)
            ),
        ));
    }
    Ok(())
}

fn expected_after(last: i32) -> i32 {
    if last == i32::MAX {
        0
    } else {
        last + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemStorage;
    use krecords_codec::control::END_TXN_MARKER_SIZE;
    use krecords_codec::read::Entries;
    use krecords_codec::write::{end_txn_marker, EndTxnBatch, NewRecord, V2Builder};

    struct B {
        pid: i64,
        epoch: i16,
        seq: i32,
        count: i64,
        txn: bool,
    }

    fn data(offset: i64, b: B) -> Vec<u8> {
        let mut w = V2Builder::new(offset)
            .producer(b.pid, b.epoch, b.seq)
            .transactional(b.txn);
        for _ in 0..b.count {
            w.append(&NewRecord::new(1000, None, Some(b"v"))).unwrap();
        }
        w.finish().unwrap()
    }

    fn marker(offset: i64, pid: i64, epoch: i16, coordinator_epoch: i32, commit: bool) -> Vec<u8> {
        let value = EndTxnMarker {
            version: 0,
            coordinator_epoch,
        };
        assert_eq!(value.to_bytes().len(), END_TXN_MARKER_SIZE);
        end_txn_marker(&EndTxnBatch {
            base_offset: offset,
            partition_leader_epoch: -1,
            producer_id: pid,
            producer_epoch: epoch,
            coordinator_epoch,
            commit,
            timestamp: 2000,
        })
        .unwrap()
    }

    /// Checks and applies one append the way the log does.
    fn run(m: &mut ProducerStateManager, bytes: &[u8], origin: Origin) -> Result<Checked> {
        let batches: Vec<Batch<'_>> = Entries::new(bytes).map(|b| b.unwrap()).collect();
        let mut scratch = Vec::new();
        let checked = m.check(&batches, origin, None, &mut scratch)?;
        if let Checked::Append(u) = &checked {
            m.apply(u);
            for t in &u.completed {
                m.complete_txn(t);
            }
            m.set_map_end_offset(batches.last().unwrap().last_offset() + 1);
        }
        Ok(checked)
    }

    fn name(r: Result<Checked>) -> &'static str {
        match r {
            Ok(Checked::Append(_)) => "OK",
            Ok(Checked::Duplicate(_)) => "DUPLICATE",
            Err(e) => e.kafka_name(),
        }
    }

    /// The outcome of appending, as a client, a batch `b` at `offset`.
    fn client(m: &mut ProducerStateManager, offset: i64, b: B) -> &'static str {
        name(run(m, &data(offset, b), Origin::Client))
    }

    fn b(pid: i64, epoch: i16, seq: i32, count: i64) -> B {
        B {
            pid,
            epoch,
            seq,
            count,
            txn: false,
        }
    }

    #[test]
    fn sequence_rules() {
        let mut m = ProducerStateManager::new(0, 0);
        // Unknown producer: any sequence.
        assert_eq!(client(&mut m, 0, b(1, 1, 42, 2)), "OK");
        assert_eq!(
            client(&mut m, 2, b(1, 1, 45, 1)),
            "OUT_OF_ORDER_SEQUENCE_NUMBER"
        );
        assert_eq!(client(&mut m, 2, b(1, 1, 44, 1)), "OK");
        // Duplicates of any of the last five.
        assert_eq!(client(&mut m, 9, b(1, 1, 42, 2)), "DUPLICATE");
        // Same first sequence, different range: not a duplicate, out of order.
        assert_eq!(
            client(&mut m, 9, b(1, 1, 42, 1)),
            "OUT_OF_ORDER_SEQUENCE_NUMBER"
        );
        // Lower epoch.
        assert_eq!(client(&mut m, 3, b(1, 0, 45, 1)), "INVALID_PRODUCER_EPOCH");
        // New epoch must start at 0.
        assert_eq!(
            client(&mut m, 3, b(1, 2, 45, 1)),
            "OUT_OF_ORDER_SEQUENCE_NUMBER"
        );
        assert_eq!(client(&mut m, 3, b(1, 2, 0, 1)), "OK");
        // The old epoch's batches are forgotten: a retry at the old epoch is fenced.
        assert_eq!(client(&mut m, 9, b(1, 1, 44, 1)), "INVALID_PRODUCER_EPOCH");
        // Coordinator appends skip sequence checks.
        assert_eq!(
            name(run(&mut m, &data(4, b(1, 2, 77, 1)), Origin::Coordinator)),
            "OK"
        );
    }

    #[test]
    fn sequence_wraps_and_five_batches_are_kept() {
        let mut m = ProducerStateManager::new(0, 0);
        let start = i32::MAX - 3;
        assert_eq!(client(&mut m, 0, b(5, 0, start, 2)), "OK");
        // Last sequence MAX-2; the next batch of 4 runs MAX-1, MAX, 0, 1.
        assert_eq!(client(&mut m, 2, b(5, 0, i32::MAX - 1, 4)), "OK");
        let e = m.producer(5).unwrap();
        assert_eq!(e.last_seq(), 1);
        assert_eq!(e.batches[1].first_seq(), i32::MAX - 1);
        assert_eq!(client(&mut m, 6, b(5, 0, 2, 1)), "OK");
        for (i, seq) in (3..7).enumerate() {
            run(&mut m, &data(7 + i as i64, b(5, 0, seq, 1)), Origin::Client).unwrap();
        }
        let e = m.producer(5).unwrap();
        assert_eq!(e.batches.len(), NUM_BATCHES_TO_RETAIN);
        assert_eq!(e.batches[0].first_seq(), 2);
        // The wrapping batch fell out of the five: a retry is out of order.
        assert_eq!(
            client(&mut m, 20, b(5, 0, i32::MAX - 1, 4)),
            "OUT_OF_ORDER_SEQUENCE_NUMBER"
        );
        match run(&mut m, &data(20, b(5, 0, 3, 1)), Origin::Client).unwrap() {
            Checked::Duplicate(d) => assert_eq!((d.first_offset(), d.last_offset), (7, 7)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn transactions_markers_and_lso() {
        let mut m = ProducerStateManager::new(0, 0);
        let t = |pid, seq| B {
            pid,
            epoch: 0,
            seq,
            count: 1,
            txn: true,
        };
        run(&mut m, &data(0, t(1, 0)), Origin::Client).unwrap();
        run(&mut m, &data(1, t(2, 0)), Origin::Client).unwrap();
        assert_eq!(m.last_stable_offset(10), 0);
        // Non-transactional from a producer with an open transaction.
        assert_eq!(client(&mut m, 2, b(1, 0, 1, 1)), "INVALID_TXN_STATE");
        // Abort producer 1: LSO after it is producer 2's first offset.
        let Checked::Append(u) =
            run(&mut m, &marker(2, 1, 0, 5, false), Origin::Coordinator).unwrap()
        else {
            panic!()
        };
        assert_eq!(u.completed.len(), 1);
        assert!(u.completed[0].aborted);
        assert_eq!(m.last_stable_offset(10), 1);
        // A stale coordinator epoch is fenced; a stale producer epoch too.
        assert_eq!(
            name(run(&mut m, &marker(3, 1, 0, 4, true), Origin::Coordinator)),
            "TRANSACTION_COORDINATOR_FENCED"
        );
        run(&mut m, &marker(3, 2, 2, 0, true), Origin::Coordinator).unwrap();
        assert_eq!(
            name(run(&mut m, &marker(4, 2, 1, 0, true), Origin::Coordinator)),
            "INVALID_PRODUCER_EPOCH"
        );
        // The marker with a higher epoch (2) bumped it: the next batch must start at 0.
        assert_eq!(m.last_stable_offset(10), 10);
        assert_eq!(
            client(&mut m, 4, b(2, 2, 1, 1)),
            "OUT_OF_ORDER_SEQUENCE_NUMBER"
        );
        assert_eq!(client(&mut m, 4, b(2, 2, 0, 1)), "OK");
        // The LSO of a completed transaction skips the producer's own open one.
        let t3 = run(&mut m, &data(5, t(3, 0)), Origin::Client);
        assert!(t3.is_ok());
        let txn = CompletedTxn {
            producer_id: 3,
            first_offset: 5,
            last_offset: 9,
            aborted: true,
        };
        assert_eq!(m.last_stable_offset_after(&txn), 10);
    }

    #[test]
    fn snapshot_round_trip_and_corruption() {
        let s = MemStorage::new();
        let dir = Path::new("/d");
        s.create_dir_all(dir).unwrap();
        let mut m = ProducerStateManager::new(0, 0);
        run(&mut m, &data(0, b(1, 3, 10, 3)), Origin::Client).unwrap();
        run(
            &mut m,
            &data(
                3,
                B {
                    pid: 2,
                    epoch: 0,
                    seq: 0,
                    count: 1,
                    txn: true,
                },
            ),
            Origin::Client,
        )
        .unwrap();
        run(&mut m, &marker(4, 9, 2, 7, true), Origin::Coordinator).unwrap();
        m.take_snapshot(&s, dir).unwrap();
        let bytes = s
            .file_bytes(&dir.join("00000000000000000005.snapshot"))
            .unwrap();
        assert_eq!(bytes.len(), 10 + 3 * SNAPSHOT_ENTRY_SIZE);
        assert_eq!(&bytes[0..2], &[0, 1]);
        let entries = parse_snapshot(dir, &bytes).unwrap();
        assert_eq!(
            entries[0],
            ProducerSnapshotEntry {
                producer_id: 1,
                producer_epoch: 3,
                last_sequence: 12,
                last_offset: 2,
                offset_delta: 2,
                timestamp: 1000,
                coordinator_epoch: -1,
                current_txn_first_offset: -1
            }
        );
        assert_eq!(entries[1].current_txn_first_offset, 3);
        assert_eq!(
            (
                entries[2].last_offset,
                entries[2].last_sequence,
                entries[2].coordinator_epoch
            ),
            (-1, -1, 7)
        );
        assert_eq!(encode_snapshot(&entries), bytes);
        // Loading gives the same state with the last batch only, and the open transaction.
        let mut l = ProducerStateManager::new(0, 0);
        l.load_snapshot_names(&s, dir, &["00000000000000000005.snapshot".into()], &[0])
            .unwrap();
        assert_eq!(
            l.load_latest_snapshot(&s, dir, 0, 5, 0, i64::MAX).unwrap(),
            Some(5)
        );
        assert_eq!(l.producer(1).unwrap().batches.len(), 1);
        assert_eq!(l.producer(1).unwrap().batches[0].first_seq(), 10);
        assert_eq!(l.first_unstable_offset(), Some(3));
        assert_eq!(l.producer(9), m.producer(9));
        // Expired producers are not loaded (the one with an open transaction stays).
        let mut l = ProducerStateManager::new(0, 0);
        l.load_snapshot_names(&s, dir, &["00000000000000000005.snapshot".into()], &[0])
            .unwrap();
        l.load_latest_snapshot(&s, dir, 0, 5, 1000 + 50, 50)
            .unwrap();
        assert!(l.producer(1).is_none());
        assert!(l.producer(2).is_some());
        // Every single-bit flip is caught.
        for i in 0..bytes.len() {
            let mut c = bytes.clone();
            c[i] ^= 0x10;
            assert!(parse_snapshot(dir, &c).is_err(), "flip at byte {i}");
        }
        assert!(parse_snapshot(dir, &bytes[..bytes.len() - 1]).is_err());
        // A corrupt latest snapshot is deleted and the next one used.
        s.create(&dir.join("00000000000000000009.snapshot"))
            .unwrap()
            .write_at(b"garbage", 0)
            .unwrap();
        let mut l = ProducerStateManager::new(0, 0);
        let names = [
            "00000000000000000005.snapshot".into(),
            "00000000000000000009.snapshot".into(),
        ];
        l.load_snapshot_names(&s, dir, &names, &[0, 5, 9]).unwrap();
        assert_eq!(
            l.load_latest_snapshot(&s, dir, 0, 9, 0, i64::MAX).unwrap(),
            Some(5)
        );
        assert!(s
            .file_bytes(&dir.join("00000000000000000009.snapshot"))
            .is_none());
    }

    #[test]
    fn stray_and_out_of_range_snapshots() {
        let s = MemStorage::new();
        let dir = Path::new("/d");
        s.create_dir_all(dir).unwrap();
        let names: Vec<String> = [0i64, 3, 5, 8, 12, 20]
            .iter()
            .map(|&o| {
                let n = files::file_name(o, SNAPSHOT_SUFFIX);
                s.create(&dir.join(&n))
                    .unwrap()
                    .write_at(&encode_snapshot(&[]), 0)
                    .unwrap();
                n
            })
            .collect();
        let mut m = ProducerStateManager::new(0, 0);
        // Segments at 0, 5, 8: strays 3 and 12 go, 20 (the latest, past every base) stays.
        m.load_snapshot_names(&s, dir, &names, &[0, 5, 8]).unwrap();
        assert_eq!(m.snapshot_offsets().collect::<Vec<_>>(), vec![0, 5, 8, 20]);
        // Above the limit or at the log start: gone.
        assert_eq!(
            m.load_latest_snapshot(&s, dir, 0, 8, 0, 1).unwrap(),
            Some(8)
        );
        assert_eq!(m.snapshot_offsets().collect::<Vec<_>>(), vec![5, 8]);
        assert!(m.delete_snapshots_before(&s, dir, 8).unwrap());
        assert_eq!(m.snapshot_offsets().collect::<Vec<_>>(), vec![8]);
        assert_eq!(decrement_sequence(0, 1), i32::MAX);
        // Hostile values wrap as Java's int arithmetic does instead of panicking.
        assert_eq!(decrement_sequence(i32::MIN, i32::MAX), i32::MIN + 1);
    }
}
