//! Salvaging a damaged partition: every intact entry, byte for byte at its offset, into a new
//! partition directory, where Kafka's recovery keeps only what comes before the first bad byte
//! (the engine of `krec salvage`).
//!
//! [`salvage_files_with`] reads segment files in order without changing them. At each position
//! it tries a whole entry: a 12-byte prefix whose size is between the smallest entry and
//! [`SalvageOptions::max_entry_size`], a magic byte of 0, 1 or 2, a header the codec parses, and
//! a CRC that checks (CRC-32 of a v0/v1 message or wrapper, CRC-32C of a v2 batch; every codec,
//! as the CRC covers the compressed bytes). Such an entry is kept when its offsets follow what
//! was kept before (first offset above the last kept one, at or above its segment's base offset,
//! as the log's recovery requires, but without overlap); a CRC-valid entry whose offsets go
//! backwards or overlap is reported ([`LeftOut`]) and left out, and so is an entry whose base
//! offset field (outside every CRC) the next entry shows to be damaged: the next one follows
//! what was kept but overlaps it, and it would fit before the next one where it should start,
//! exactly or one flipped bit away from its claim (see `docs/design.md`, Salvage). Anything else starts a damaged
//! region ([`Damage`]), and the scan moves on by one byte until an entry checks again: past
//! flipped bits, a lying length field, runs of zeros, garbage, a cut-off tail, and when the very
//! first entry is the damaged one.
//!
//! Cost: each position costs a constant number of byte reads unless its header is plausible,
//! and runs of zeros are skipped in blocks (no size field can start inside them), so the
//! time is linear in the damaged region; the CRC of a candidate is only computed for plausible
//! headers. Memory is one window of `2 × (max_entry_size + 12)` bytes (at least 64 KiB)
//! whatever the size fields claim.
//!
//! Output goes through [`PartitionWriter`]: one output segment per input segment that kept
//! anything (named by the input's base offset when it still holds), offset, time and
//! transaction indexes and producer snapshots built as the log's recovery would, the
//! `leader-epoch-checkpoint` rebuilt from the kept v2 batches' leader epochs, everything
//! appearing at the output path only when complete. The [`SalvageReport`] says what was kept,
//! what was lost (byte ranges with file, position, length and reason, and the offsets between
//! the entries kept around them), and what Kafka's own recovery would have kept.

#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use crate::config::LogConfig;
use crate::convert::{InsideSource, PartitionWriter};
use crate::data_dir;
use crate::entry_stream::{file_kind, FileKind};
use crate::epoch::{epoch_falls, LeaderEpochCache};
use crate::error::{Error, Result};
use crate::files::{self, LOG_SUFFIX};
use crate::log::Env;
use crate::resync::{candidate, claimed_len, implausible, skip_after_failure, Window, MIN_WINDOW};
use crate::segment;
use krecords_codec::control::{ControlRecordKey, EndTxnMarker};
use krecords_codec::layout::{LOG_OVERHEAD, MAGIC_OFFSET};
use krecords_codec::read::{Batch, V2Batch};
use krecords_codec::write::{end_txn_marker, EndTxnBatch};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The default [`SalvageOptions::max_entry_size`]: 16 MiB.
pub const DEFAULT_MAX_ENTRY_SIZE: usize = 16 << 20;

/// Bytes of a damaged region handed to [`SalvageSink::damaged`] at once.
const DAMAGED_CHUNK: usize = 1 << 20;

/// Bytes of entries read ahead after a loss for the next entry of each producer whose
/// transaction was open (see [`Transaction`]).
const LOOK_AHEAD: u64 = 64 << 20;

/// How a salvage reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SalvageOptions {
    /// The largest entry accepted, size field (the bytes after the 12-byte prefix) counted: a
    /// plausible header claiming more is damage. Bounds the memory used.
    pub max_entry_size: usize,
    /// Decompressed bytes allowed when counting the records of a compressed v0/v1 wrapper.
    pub max_decompressed_bytes: usize,
    /// Whether a transaction whose end marker was lost in a damaged range gets an ABORT marker
    /// of salvage's own at the first lost offset (see [`Transaction`]); `false` leaves the
    /// output byte for byte what the input kept.
    pub close_lost_transactions: bool,
}

impl Default for SalvageOptions {
    fn default() -> Self {
        SalvageOptions {
            max_entry_size: DEFAULT_MAX_ENTRY_SIZE,
            max_decompressed_bytes: krecords_codec::DEFAULT_DECOMPRESS_LIMIT,
            close_lost_transactions: true,
        }
    }
}

/// Receives progress and, if wanted, the bytes of damaged regions (for `--keep-damaged`).
pub trait SalvageSink {
    /// Bytes scanned so far, of `total` in all the input files.
    fn progress(&mut self, _scanned: u64, _total: u64) {}

    /// Whether [`SalvageSink::damaged`] wants the bytes (they are read again only then).
    fn wants_damaged(&self) -> bool {
        false
    }

    /// A chunk of a damaged region's bytes, in order; `position` is its position in `file`.
    ///
    /// # Errors
    ///
    /// Writing them failed: the salvage stops with that error.
    fn damaged(&mut self, _file: &Path, _position: u64, _bytes: &[u8]) -> io::Result<()> {
        Ok(())
    }

    /// The file [`SalvageSink::damaged`] writes into, which an error writing it names (`None`:
    /// "the damaged bytes' file").
    fn damaged_path(&self) -> Option<&Path> {
        None
    }
}

/// A sink that wants nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSink;

impl SalvageSink for NoSink {}

/// A damaged byte range: no entry there checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Damage {
    /// The file.
    pub file: PathBuf,
    /// Position of the first damaged byte.
    pub position: u64,
    /// Length of the range.
    pub length: u64,
    /// What was wrong with the entry expected at `position`.
    pub reason: String,
    /// The last offset kept before the range (`None`: nothing kept before it).
    pub last_kept_before: Option<i64>,
    /// The first offset kept after it (`None`: nothing kept after it).
    pub first_kept_after: Option<i64>,
}

impl Damage {
    /// The offsets that may have been lost in the range: from after the last kept before it
    /// to before the first kept after it (`None` for an end nothing bounds), `None` when no
    /// offset lies between them.
    pub fn lost_offsets(&self) -> Option<(Option<i64>, Option<i64>)> {
        let from = self.last_kept_before.map(|o| o.saturating_add(1));
        let to = self.first_kept_after.map(|o| o.saturating_sub(1));
        match (from, to) {
            (Some(f), Some(t)) if t < f => None,
            _ => Some((from, to)),
        }
    }
}

/// A CRC-valid entry left out because its offsets go backwards or overlap what was kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// The file.
    pub file: PathBuf,
    /// The entry's position.
    pub position: u64,
    /// Its length, prefix included.
    pub length: u64,
    /// Its first offset (for a v0/v1 wrapper, its first inner message's; its last offset
    /// stands in when the inner messages cannot be read).
    pub first_offset: i64,
    /// Its last offset.
    pub last_offset: i64,
    /// Why.
    pub reason: String,
}

/// A transaction that was open when something was lost, and whose end marker may have been in
/// what was lost.
///
/// Kafka ends a producer's open transaction with the next end marker of that producer in the
/// partition, whatever transaction the marker was written for. So when a damaged range swallows
/// a transaction's marker, the records kept before it share the fate of the producer's *next*
/// transaction (an aborted transaction's records would be committed with it), or, when the
/// producer writes nothing more, the partition's last stable offset stays at the transaction's
/// first offset for good. Salvage looks at the producer's next entry after the loss: its own
/// marker (same epoch, or one above as transaction version 2 bumps it) or the next batch of the
/// same transaction (same epoch) mean the transaction goes on and nothing is done; anything
/// else — a batch of another epoch, a later transaction's marker — means the marker was lost,
/// and salvage writes an ABORT marker at an offset lost before the producer's next entry
/// (`aborted_at`; the first one free): the records stay in the log, hidden at read_committed,
/// as Kafka's `kafka-transactions.sh abort` does to a hanging transaction. When the producer writes nothing
/// after the loss, the transaction may simply still be open (a transaction coordinator may end
/// it), so it is left open and reported. With transaction version 1, where a producer's
/// transactions share its epoch, a lost marker between two of them cannot be told from a
/// transaction that goes on (Kafka would make them one): unless the producer showed version 2
/// before (a marker one epoch above its batches), such a case is reported, and left as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Transaction {
    /// The producer.
    pub producer_id: i64,
    /// Its epoch in the transaction's last kept batch.
    pub producer_epoch: i16,
    /// The transaction's first kept offset.
    pub first_offset: i64,
    /// Its last kept offset before the loss.
    pub last_offset: i64,
    /// Where the loss was: file and position.
    pub lost_at: (PathBuf, u64),
    /// The offset of the ABORT marker salvage wrote (`None`: left open).
    pub aborted_at: Option<i64>,
    /// What salvage saw and did, in words.
    pub note: String,
}

/// A kept v2 batch whose partition leader epoch is below an earlier kept batch's. Kafka's
/// recovery keeps such a batch (its leader-epoch cache drops the higher epochs), and so does
/// salvage, byte for byte; `krec verify` reports it, by the same rule (epochs never go down in
/// a partition's log; epoch -1, "none", is skipped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EpochDown {
    /// The file.
    pub file: PathBuf,
    /// The batch's position.
    pub position: u64,
    /// Its first offset.
    pub first_offset: i64,
    /// Its last offset.
    pub last_offset: i64,
    /// Its partition leader epoch.
    pub epoch: i32,
    /// The higher epoch of the batch kept before it.
    pub earlier_epoch: i32,
    /// That batch's last offset.
    pub earlier_last_offset: i64,
}

/// A range of offsets kept without damage in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OffsetRange {
    /// First offset of the range's first entry.
    pub first: i64,
    /// Last offset of its last entry.
    pub last: i64,
}

/// What Kafka's recovery would keep of the same input: the entries before the first invalid
/// one (everything after it is truncated or deleted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KafkaRecovery {
    /// Entries kept.
    pub entries: u64,
    /// Records kept.
    pub records: u64,
    /// Where it would stop: file and position of the first invalid entry (`None`: nowhere).
    pub stops_at: Option<(PathBuf, u64)>,
}

/// One input file as salvaged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileReport {
    /// The file.
    pub file: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Its base offset, from a `<20 digits>.log` name.
    pub base_offset: Option<i64>,
    /// Entries kept from it.
    pub kept_entries: u64,
    /// Bytes of those entries.
    pub kept_bytes: u64,
}

/// What a salvage kept and lost.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SalvageReport {
    /// The input files in order.
    pub files: Vec<FileReport>,
    /// Entries kept.
    pub kept_entries: u64,
    /// Records kept (a v2 batch's records count; inner messages of a v0/v1 wrapper).
    pub kept_records: u64,
    /// Bytes kept.
    pub kept_bytes: u64,
    /// Offset ranges kept, each without damage or a left-out entry inside.
    pub kept_ranges: Vec<OffsetRange>,
    /// Damaged byte ranges, in file order.
    pub damaged: Vec<Damage>,
    /// CRC-valid entries left out for their offsets.
    pub left_out: Vec<LeftOut>,
    /// Transactions open when something was lost whose end marker may have been lost: those
    /// salvage closed with an ABORT marker of its own, and those it left open.
    pub transactions: Vec<Transaction>,
    /// Segments whose name says a base offset at or below what the segment before holds, or
    /// above the offsets the segment holds: the output names them after their first kept
    /// offset (a broker opens a segment only under its own base offset). Not a loss: a
    /// segment is read in the order of its contents whatever its name says
    /// ([`salvage_files_with`]).
    pub renamed: Vec<Renamed>,
    /// Kept v2 batches whose partition leader epoch goes down: kept, as Kafka's recovery
    /// keeps them, and listed since `krec verify` reports them. Not a loss.
    pub epochs_down: Vec<EpochDown>,
    /// Segments written (0 without an output).
    pub segments_written: u64,
    /// For comparison: what Kafka's recovery would keep.
    pub kafka_recovery: KafkaRecovery,
    /// Why the partition directory's `krec-log.json` could not be used (not JSON, an invalid
    /// setting): the salvage went on with the default configuration, as for a broker's
    /// directory, which has no such file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_problem: Option<String>,
}

/// A segment the output names after its first kept offset rather than its own name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Renamed {
    /// The input segment.
    pub file: PathBuf,
    /// The base offset its name says.
    pub named: i64,
    /// The base offset the output names it by.
    pub written_as: i64,
}

impl SalvageReport {
    /// Whether anything was lost (a damaged range or a left-out entry).
    pub fn lost_anything(&self) -> bool {
        !self.damaged.is_empty() || !self.left_out.is_empty()
    }

    /// Whether the input is not as a broker would open it: something lost, or a segment
    /// misnamed (the output differs from a copy of the input).
    pub fn found_anything(&self) -> bool {
        self.lost_anything() || !self.renamed.is_empty() || self.config_problem.is_some()
    }

    /// Bytes of the damaged ranges.
    pub fn damaged_bytes(&self) -> u64 {
        self.damaged.iter().map(|d| d.length).sum()
    }
}

/// Writes an optional offset as a number or `?`.
fn opt(o: Option<i64>) -> String {
    o.map_or_else(|| "?".into(), |o| o.to_string())
}

impl fmt::Display for SalvageReport {
    /// The text report: damaged ranges, left-out entries, kept ranges and a summary line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.config_problem {
            writeln!(
                f,
                "configuration: {p}; salvaged with the default configuration"
            )?;
        }
        for d in &self.damaged {
            write!(
                f,
                "damaged: {} bytes {}..{} ({} bytes): {}",
                d.file.display(),
                d.position,
                d.position.saturating_add(d.length),
                d.length,
                d.reason
            )?;
            match d.lost_offsets() {
                Some((from, to)) => writeln!(f, "; offsets lost: {}..={}", opt(from), opt(to))?,
                None => writeln!(f, "; no offset lost")?,
            }
        }
        for l in &self.left_out {
            writeln!(
                f,
                "left out: {} byte {} ({} bytes): offsets {}..={}: {}",
                l.file.display(),
                l.position,
                l.length,
                l.first_offset,
                l.last_offset,
                l.reason
            )?;
        }
        for r in &self.renamed {
            let why = if r.named > r.written_as {
                "above the offsets it holds"
            } else {
                "at or below the offsets before it"
            };
            writeln!(
                f,
                "renamed: {} is named for base offset {}, {why}; its entries start at {}: \
                 written as {:020}.log",
                r.file.display(),
                r.named,
                r.written_as,
                r.written_as
            )?;
        }
        for e in &self.epochs_down {
            writeln!(
                f,
                "epoch goes down: {} byte {}: offsets {}..={} have partition leader epoch {}, \
                 below epoch {} of offset {} kept before them; kept, as Kafka's recovery keeps \
                 them (krec verify reports it)",
                e.file.display(),
                e.position,
                e.first_offset,
                e.last_offset,
                e.epoch,
                e.earlier_epoch,
                e.earlier_last_offset
            )?;
        }
        for t in &self.transactions {
            writeln!(
                f,
                "transaction: producer {} epoch {}, offsets {}..={} kept, open when {} byte {} \
                 was lost: {}",
                t.producer_id,
                t.producer_epoch,
                t.first_offset,
                t.last_offset,
                t.lost_at.0.display(),
                t.lost_at.1,
                t.note
            )?;
        }
        let ranges: Vec<String> = self
            .kept_ranges
            .iter()
            .map(|r| format!("{}..={}", r.first, r.last))
            .collect();
        writeln!(
            f,
            "kept: {} entries, {} records, {} bytes; offsets {}",
            self.kept_entries,
            self.kept_records,
            self.kept_bytes,
            if ranges.is_empty() {
                "none".into()
            } else {
                ranges.join(", ")
            }
        )?;
        write!(
            f,
            "lost: {} damaged ranges ({} bytes), {} entries left out for their offsets; \
             Kafka's recovery would keep {} entries, {} records",
            self.damaged.len(),
            self.damaged_bytes(),
            self.left_out.len(),
            self.kafka_recovery.entries,
            self.kafka_recovery.records
        )?;
        if let Some((file, pos)) = &self.kafka_recovery.stops_at {
            write!(f, " (it stops at {} byte {pos})", file.display())?;
        }
        if !self.transactions.is_empty() {
            let aborted = self
                .transactions
                .iter()
                .filter(|t| t.aborted_at.is_some())
                .count();
            write!(
                f,
                "; transactions whose end marker may be lost: {aborted} closed with an ABORT \
                 marker, {} left open",
                self.transactions.len().saturating_sub(aborted)
            )?;
        }
        writeln!(f)
    }
}

/// Why `h`, an entry that checks and whose offsets follow what was kept, must have a damaged
/// base offset field (outside every CRC, so a flipped bit there leaves it valid), when the
/// entry after it, `n`, also checks: `n` overlaps `h` although it follows the last kept offset
/// `prev_last`, while `h` does not start where it should (`expected`: after the last kept
/// offset, or at its segment's base when it is the first kept there), and `h` started there —
/// or one flipped bit away from where it claims — would end before `n`. Otherwise (`None`) `h`
/// is kept and `n`, when it overlaps, is left out: without a gap in the offsets only the
/// damaged one of the two fits, and in compacted data with gaps the earlier one is trusted.
fn damaged_base_offset(
    h: &Kept,
    n: &Kept,
    prev_last: Option<i64>,
    expected: Option<i64>,
) -> Option<String> {
    let expected = expected?;
    if n.recovery_first > h.last
        || prev_last.is_some_and(|p| n.recovery_first <= p)
        || h.recovery_first == expected
    {
        return None;
    }
    let span = h.last.checked_sub(h.recovery_first)?.checked_add(1)?;
    let latest_start = n.recovery_first.checked_sub(span)?;
    if latest_start < expected {
        return None;
    }
    let one_bit_away = (0..64)
        .any(|k| (expected..=latest_start).contains(&(h.recovery_first ^ 1i64.wrapping_shl(k))));
    (latest_start == expected || one_bit_away).then(|| {
        format!(
            "offsets {}..={} overlap the next entry's (from {}), which follows what was kept: \
             this entry's base offset field (outside the CRC) is damaged",
            h.recovery_first, h.last, n.recovery_first
        )
    })
}

/// An entry that checks, at `pos` of the file being scanned.
struct Found {
    pos: u64,
    size: u64,
    kept: Kept,
}

/// State carried across the files of one salvage.
struct Scan<'a> {
    options: SalvageOptions,
    sink: &'a mut dyn SalvageSink,
    writer: Option<PartitionWriter>,
    report: SalvageReport,
    epochs: LeaderEpochCache,
    /// The last offset kept.
    prev_last: Option<i64>,
    /// Whether nothing has been lost yet (Kafka's recovery keeps up to the first loss).
    clean_prefix: bool,
    /// Whether the last kept range may grow (no loss since it started).
    range_open: bool,
    /// Jumps of the kept offsets inside an open kept range (last kept, next kept first): the
    /// range is split there at the end when a left-out entry's offsets lie between them.
    jumps: Vec<(i64, i64)>,
    /// Indexes into `report.damaged` still waiting for the next kept offset.
    pending: Vec<usize>,
    scratch: Vec<u8>,
    scanned_before: u64,
    total: u64,
    /// The input files, in the order of their contents ([`in_content_order`]).
    files: &'a [PathBuf],
    /// The base offset each file's name gives, when its contents start at or above it: the
    /// floor of its offsets. A name above them is not trusted (the file was renamed).
    bases: &'a [Option<i64>],
    /// Open transactions of the output by producer id.
    txns: BTreeMap<i64, OpenTxn>,
    /// The coordinator epoch of each producer's last kept marker.
    coordinator_epochs: HashMap<i64, i32>,
    /// Producers seen ending a transaction with a marker one epoch above its batches:
    /// transaction version 2, where each transaction has an epoch of its own.
    bumping: HashSet<i64>,
    /// The partition leader epoch of the last kept v2 entry.
    leader_epoch: i32,
    /// The last kept epoch and the last offset of its entry, for [`epoch_falls`].
    epoch_chain: Option<(i32, i64)>,
    /// The index of the file being scanned.
    file_index: usize,
}

/// A transaction open in the output.
struct OpenTxn {
    first: i64,
    last: i64,
    epoch: i16,
    timestamp: i64,
    /// Where something was lost while it was open, until the producer's next entry says
    /// whether its marker was there.
    interrupted: Option<(PathBuf, u64)>,
    /// Whether the look ahead found no later entry of the producer (to the end of the input,
    /// or in [`LOOK_AHEAD`] bytes): the report says it was left open, and later losses are
    /// not looked into again. With `next_at`, a transaction is looked into again only for a
    /// loss after the entry the last look ahead found: a transaction's look aheads do not
    /// overlap, and each costs at most [`LOOK_AHEAD`] bytes.
    settled: bool,
    /// Where (file index, position) the producer's next entry is, when a look ahead found it
    /// showing the transaction going on: a loss before it changes nothing.
    next_at: Option<(usize, u64)>,
    /// Its marker was lost: an ABORT marker is due before the producer's next entry.
    pending: Option<Pending>,
}

/// An ABORT marker due for a transaction whose own was lost.
struct Pending {
    /// The first offset of the producer's next entry (the marker goes below it).
    next_first: i64,
    /// That entry, in words.
    seen: String,
    /// Where the loss was.
    lost_at: (PathBuf, u64),
}

impl OpenTxn {
    /// Whether `n`, the producer's next entry after a loss, shows the transaction going on:
    /// its own end marker (same epoch, or one above: transaction version 2 bumps the epoch in
    /// the marker), or another of its batches (same epoch).
    fn goes_on(&self, n: &TxnFacts) -> bool {
        if n.marker.is_some() {
            return n.epoch == self.epoch || n.epoch == self.epoch.saturating_add(1);
        }
        n.transactional && n.epoch == self.epoch
    }
}

/// Words for a producer's entry at offset `first`.
fn describe(first: i64, n: &TxnFacts) -> String {
    if n.marker.is_some() {
        format!("an end marker of epoch {} at offset {first}", n.epoch)
    } else if n.transactional {
        format!(
            "a transactional batch of epoch {}, sequence {}, at offset {first}",
            n.epoch, n.base_seq
        )
    } else {
        format!("a batch outside any transaction at offset {first}")
    }
}

impl Scan<'_> {
    /// A loss at (`file`, `pos`): ends the kept range and Kafka's recovery, and interrupts
    /// the open transactions.
    fn lost(&mut self, file: &Path, pos: u64) {
        let at = (
            self.files
                .iter()
                .position(|f| f.as_path() == file)
                .unwrap_or(self.file_index),
            pos,
        );
        for t in self.txns.values_mut() {
            if t.interrupted.is_none()
                && t.pending.is_none()
                && !t.settled
                && t.next_at.is_none_or(|n| n <= at)
            {
                t.interrupted = Some((file.to_path_buf(), pos));
            }
        }
        self.range_open = false;
        if self.clean_prefix {
            self.clean_prefix = false;
            self.report.kafka_recovery.stops_at = Some((file.to_path_buf(), pos));
        }
    }

    /// Reports the entry `f` of `file` left out for `reason`.
    fn left_out(&mut self, file: &Path, f: &Found, reason: String) {
        self.report.left_out.push(LeftOut {
            file: file.to_path_buf(),
            position: f.pos,
            length: f.size,
            first_offset: f.kept.first,
            last_offset: f.kept.last,
            reason,
        });
    }

    /// Records the damaged region `start..end` of `w`'s file.
    fn damage(&mut self, w: &Window, start: u64, end: u64, reason: String) -> Result<()> {
        self.lost(&w.path, start);
        self.pending.push(self.report.damaged.len());
        self.report.damaged.push(Damage {
            file: w.path.clone(),
            position: start,
            length: end.saturating_sub(start),
            reason,
            last_kept_before: self.prev_last,
            first_kept_after: None,
        });
        if self.sink.wants_damaged() {
            let mut buf = vec![0u8; DAMAGED_CHUNK];
            let mut pos = start;
            while pos < end {
                let n = usize::try_from(end.saturating_sub(pos))
                    .unwrap_or(DAMAGED_CHUNK)
                    .min(DAMAGED_CHUNK);
                let chunk = buf.get_mut(..n).unwrap_or(&mut []);
                w.file
                    .read_exact_at(chunk, pos)
                    .map_err(|e| Error::io("read", &w.path, e))?;
                self.sink.damaged(&w.path, pos, chunk).map_err(|e| {
                    let path = self.sink.damaged_path();
                    let path = path.unwrap_or(Path::new("the damaged bytes' file"));
                    Error::io("write", path, e)
                })?;
                pos = pos.saturating_add(n as u64);
            }
        }
        Ok(())
    }

    /// The verdict on the entry at `pos` of `w`'s file: the entry, when a whole one checks
    /// there, or why not and how far the next candidate is.
    fn entry_at(
        &mut self,
        w: &mut Window,
        pos: u64,
    ) -> Result<std::result::Result<Found, (String, u64)>> {
        entry_at(w, pos, self.options, &mut self.scratch)
    }

    /// Decides on the transactions a loss interrupted, before the entry at `pos` of file
    /// `i` (first offset `next_first`) is written, or at the end (`None`): returns the ABORT
    /// markers to write before it, with their offsets (see [`Transaction`]).
    ///
    /// A marker goes at a lost offset before the producer's next entry. When several
    /// transactions need one and the offsets lost here are fewer, those whose producer comes
    /// back first get them; the others wait for a later gap before their producer's entry.
    fn close_interrupted(
        &mut self,
        env: &Env,
        i: usize,
        pos: u64,
        next_first: Option<i64>,
    ) -> Result<Vec<(i64, Vec<u8>)>> {
        let wanted: Vec<i64> = self
            .txns
            .iter()
            .filter(|(_, t)| t.interrupted.is_some())
            .map(|(&pid, _)| pid)
            .collect();
        if !wanted.is_empty() {
            self.decide(env, i, pos, next_first, &wanted)?;
        }
        let mut due: Vec<(i64, i64)> = self
            .txns
            .iter()
            .filter_map(|(&pid, t)| t.pending.as_ref().map(|p| (p.next_first, pid)))
            .collect();
        if due.is_empty() {
            return Ok(Vec::new());
        }
        due.sort_unstable();
        let mut free = self.prev_last.map_or(0, |p| p.saturating_add(1));
        let mut markers = Vec::new();
        for (n_first, pid) in due {
            let has_room = next_first.is_none_or(|nf| free < nf);
            if !has_room && next_first.is_some_and(|nf| n_first > nf) {
                continue; // a later gap may come before the producer's entry
            }
            let Some(mut t) = self.txns.remove(&pid) else {
                continue;
            };
            let Some(p) = t.pending.take() else {
                continue;
            };
            let mut report = Transaction {
                producer_id: pid,
                producer_epoch: t.epoch,
                first_offset: t.first,
                last_offset: t.last,
                lost_at: p.lost_at,
                aborted_at: None,
                note: String::new(),
            };
            let marker = if has_room {
                end_txn_marker(&EndTxnBatch {
                    base_offset: free,
                    partition_leader_epoch: self.leader_epoch,
                    producer_id: pid,
                    producer_epoch: t.epoch,
                    coordinator_epoch: self.coordinator_epochs.get(&pid).copied().unwrap_or(0),
                    commit: false,
                    timestamp: t.timestamp,
                })
                .map_err(|e| format!("no marker can be written for it: {e}"))
            } else {
                Err("no offset was lost before the producer's next entry to put a marker at".into())
            };
            match marker {
                Ok(m) => {
                    report.aborted_at = Some(free);
                    report.note = format!(
                        "the producer's next entry is {}, of another transaction: its end \
                         marker was lost; closed with an ABORT marker at offset {free} (its \
                         records stay in the log, hidden at read_committed)",
                        p.seen
                    );
                    markers.push((free, m));
                    free = free.saturating_add(1);
                }
                Err(why) => {
                    report.note = format!(
                        "the producer's next entry is {}, of another transaction: its end \
                         marker was lost; left open, as {why}",
                        p.seen
                    );
                    // Kafka ends it with the producer's next marker, as the input would.
                    t.settled = true;
                    self.txns.insert(pid, t);
                }
            }
            self.report.transactions.push(report);
        }
        Ok(markers)
    }

    /// Looks ahead for the next entry of each producer in `wanted` (their transactions
    /// interrupted) from the entry at `pos` of file `i` on, and decides: the transaction goes
    /// on, is left open (nothing of the producer follows), or its marker was lost (pending an
    /// ABORT marker, placed by [`Scan::close_interrupted`]).
    fn decide(
        &mut self,
        env: &Env,
        i: usize,
        pos: u64,
        next_first: Option<i64>,
        wanted: &[i64],
    ) -> Result<()> {
        let (next, stop) = match next_first {
            Some(_) => next_entries(
                env,
                self.files,
                i,
                pos,
                wanted,
                self.options,
                &mut self.scratch,
            )?,
            None => (HashMap::new(), Stop::End),
        };
        for pid in wanted {
            let Some(t) = self.txns.get_mut(pid) else {
                continue;
            };
            let Some(lost_at) = t.interrupted.take() else {
                continue;
            };
            let mut report = Transaction {
                producer_id: *pid,
                producer_epoch: t.epoch,
                first_offset: t.first,
                last_offset: t.last,
                lost_at,
                aborted_at: None,
                note: String::new(),
            };
            let n = next.get(pid);
            if let Some((n_first, n, at)) = n.filter(|(_, n, _)| t.goes_on(n)) {
                t.next_at = Some(*at);
                // A batch of the same epoch after lost offsets goes on with the transaction,
                // unless the loss held its end marker and this batch opens the producer's next
                // transaction: with transaction version 1 both keep the epoch, and Kafka would
                // end them with one marker. Unless the producer has shown version 2 (its own
                // epoch per transaction), salvage cannot tell: it says so and changes nothing.
                if n.marker.is_none()
                    && *n_first > t.last.saturating_add(1)
                    && !self.bumping.contains(pid)
                {
                    report.note = format!(
                        "the producer's next entry is {}, of the same epoch: the transaction \
                         goes on, or its end marker was lost and the producer's next \
                         transaction (transaction version 1 keeps the epoch) ends with it — \
                         salvage cannot tell them apart: left as it is; if offsets {}..={} \
                         belong to an aborted transaction, read_committed serves them",
                        describe(*n_first, n),
                        t.first,
                        t.last
                    );
                    self.report.transactions.push(report);
                }
                continue;
            }
            let Some((n_first, n, _)) = n else {
                t.settled = true;
                report.note = format!(
                    "the producer writes nothing after the loss{}, so the transaction may \
                     still be open: left open; read_committed consumers stop at offset {} until \
                     a transaction coordinator ends it, and if none will, \
                     `kafka-transactions.sh abort --start-offset {}` (with the topic and \
                     partition) ends it",
                    if stop == Stop::End {
                        String::new()
                    } else {
                        format!(" in the next {} MiB", LOOK_AHEAD >> 20)
                    },
                    t.first,
                    t.first
                );
                self.report.transactions.push(report);
                continue;
            };
            let seen = describe(*n_first, n);
            if !self.options.close_lost_transactions {
                t.settled = true;
                report.note = format!(
                    "the producer's next entry is {seen}, of another transaction: its end \
                     marker was lost; left as it is, so the producer's next marker ends it too"
                );
                self.report.transactions.push(report);
                continue;
            }
            t.pending = Some(Pending {
                next_first: *n_first,
                seen,
                lost_at: report.lost_at,
            });
        }
        Ok(())
    }

    /// Follows the transactions through the kept entry `k`.
    fn track(&mut self, k: &Kept) {
        if let Some(e) = k.leader_epoch {
            self.leader_epoch = e;
        }
        let Some(t) = k.txn else {
            return;
        };
        let pid = t.producer_id;
        if let Some(ce) = t.marker {
            if let Some(open) = self.txns.remove(&pid) {
                if t.epoch == open.epoch.saturating_add(1) {
                    self.bumping.insert(pid);
                }
            }
            self.coordinator_epochs.insert(pid, ce);
            return;
        }
        if !t.transactional || t.control {
            return;
        }
        let open = self.txns.entry(pid).or_insert(OpenTxn {
            first: k.first,
            last: k.last,
            epoch: t.epoch,
            timestamp: t.max_timestamp,
            interrupted: None,
            settled: false,
            next_at: None,
            pending: None,
        });
        open.last = k.last;
        open.next_at = None;
        open.epoch = t.epoch;
        open.timestamp = t.max_timestamp;
    }

    /// The first entry of the file `path`, when a whole one checks there (`None` also when the
    /// file cannot be read: its own scan reports that).
    fn first_entry(&mut self, env: &Env, path: &Path) -> Result<Option<Found>> {
        let Ok(file) = env.storage.open_read(path) else {
            return Ok(None);
        };
        let Ok(len) = file.len() else {
            return Ok(None);
        };
        let cap = self.options.max_entry_size.saturating_add(LOG_OVERHEAD);
        let mut w = Window::new(file, path, len, cap);
        Ok(self.entry_at(&mut w, 0)?.ok())
    }

    /// Salvages file `i`; the next one's first entry is looked at when this file's last
    /// entry is checked for a damaged base offset.
    fn file(&mut self, env: &Env, i: usize) -> Result<()> {
        let files = self.files;
        self.file_index = i;
        let Some(path) = files.get(i).map(PathBuf::as_path) else {
            return Ok(());
        };
        let next_file = files.get(i.saturating_add(1)).map(PathBuf::as_path);
        let file = env
            .storage
            .open_read(path)
            .map_err(|e| Error::io("open", path, e))?;
        let len = file.len().map_err(|e| Error::io("read", path, e))?;
        let base = path
            .file_name()
            .and_then(|n| files::parse_file_name(&n.to_string_lossy(), LOG_SUFFIX));
        let trusted = self.bases.get(i).copied().flatten();
        let max = self.options.max_entry_size;
        let need = max.saturating_add(LOG_OVERHEAD);
        let mut w = Window::new(file, path, len, need.saturating_mul(2).max(MIN_WINDOW));
        let mut fr = FileReport {
            file: path.to_path_buf(),
            bytes: len,
            base_offset: base,
            kept_entries: 0,
            kept_bytes: 0,
        };
        let mut started = false;
        let mut pos = 0u64;
        let mut bad: Option<(u64, String)> = None;
        let mut last_progress = 0u64;
        // The next entry when it was already checked (for the base offset rule).
        let mut peeked: Option<Found> = None;
        while pos < len {
            if pos.saturating_sub(last_progress) >= (64 << 20) {
                last_progress = pos;
                self.sink
                    .progress(self.scanned_before.saturating_add(pos), self.total);
            }
            let found = match peeked.take().filter(|f| f.pos == pos) {
                Some(f) => Ok(f),
                None => {
                    // Inside a damaged region the reason is not wanted: positions whose size
                    // field or magic byte rule out an entry are passed over without building
                    // one.
                    let head = w.at(pos, MAGIC_OFFSET + 1)?;
                    if bad.is_some() && implausible(head, max) {
                        pos = pos.saturating_add(skip_after_failure(head)).min(len);
                        continue;
                    }
                    self.entry_at(&mut w, pos)?
                }
            };
            let f = match found {
                Ok(f) => f,
                Err((reason, skip)) => {
                    bad.get_or_insert((pos, reason));
                    pos = pos.saturating_add(skip).min(len);
                    continue;
                }
            };
            let (k, size) = (&f.kept, f.size);
            if let Some((start, reason)) = bad.take() {
                self.damage(&w, start, pos, reason)?;
            }
            let floor = trusted.unwrap_or(0).max(0);
            // Recovery's rules, on the offsets recovery sees (`segment::offsets_check`).
            let first = k.recovery_first;
            let why_not = if k.last < first {
                Some(format!("last offset {} below first {first}", k.last))
            } else if first < floor {
                Some(format!("offset {first} below the segment's base {floor}"))
            } else if let Some(why) = segment::leaves_no_next_offset(k.last) {
                Some(why)
            } else {
                self.prev_last
                    .filter(|&p| first <= p)
                    .map(|p| format!("offsets {}..={} do not follow {p}", k.first, k.last))
            };
            if let Some(reason) = why_not {
                self.lost(path, pos);
                self.left_out(path, &f, reason);
                pos = pos.saturating_add(size);
                continue;
            }
            // The next entry says whether this one's base offset (outside every CRC) holds.
            let next_pos = pos.saturating_add(size);
            w.pin = Some(pos);
            let next = if next_pos < len {
                self.entry_at(&mut w, next_pos)?
                    .ok()
                    .map(|n| (path.to_path_buf(), n))
            } else {
                match next_file {
                    Some(nf) => self.first_entry(env, nf)?.map(|n| (nf.to_path_buf(), n)),
                    None => None,
                }
            };
            let expected = match (self.prev_last, trusted.filter(|_| !started)) {
                (Some(p), b) => Some(b.map_or(p.saturating_add(1), |b| b.max(p.saturating_add(1)))),
                (None, b) => b,
            };
            let blamed = next.as_ref().and_then(|(np, n)| {
                damaged_base_offset(k, &n.kept, self.prev_last, expected)
                    .map(|reason| (np.clone(), n.pos, reason))
            });
            peeked = next.filter(|(np, _)| np == path).map(|(_, n)| n);
            if let Some((next_path, next_at, reason)) = blamed {
                w.pin = None;
                // Kafka's recovery keeps it (it checks) and stops at the next one.
                if self.clean_prefix {
                    let kr = &mut self.report.kafka_recovery;
                    kr.entries = kr.entries.saturating_add(1);
                    kr.records = kr.records.saturating_add(f.kept.records);
                }
                self.lost(&next_path, next_at);
                self.left_out(path, &f, reason);
                pos = next_pos;
                continue;
            }
            // Kept, after the markers of transactions whose own were lost.
            let markers = self.close_interrupted(env, i, pos, Some(f.kept.first))?;
            let k = &f.kept;
            let bytes = w
                .at(pos, usize::try_from(size).unwrap_or(usize::MAX))?
                .get(..usize::try_from(size).unwrap_or(usize::MAX))
                .unwrap_or(&[]);
            let seg_base = (!started).then(|| {
                base.filter(|&b| self.prev_last.is_none_or(|p| b > p) && b <= k.recovery_first)
                    .unwrap_or(k.recovery_first)
            });
            if let (Some(named), Some(written_as)) = (base, seg_base) {
                if named != written_as {
                    self.report.renamed.push(Renamed {
                        file: path.to_path_buf(),
                        named,
                        written_as,
                    });
                }
            }
            if let Some(writer) = self.writer.as_mut() {
                // A marker below the new segment's base ends the previous one.
                let (before, after): (Vec<_>, Vec<_>) = markers
                    .iter()
                    .partition(|(o, _)| seg_base.is_some_and(|b| *o < b));
                for (_, m) in before {
                    writer.write_checked(m)?;
                }
                if let Some(b) = seg_base {
                    writer.start_segment(b)?;
                }
                for (_, m) in after {
                    writer.write_checked(m)?;
                }
                writer.write_checked(bytes)?;
            }
            w.pin = None;
            started = true;
            if let Some(epoch) = k.stored_epoch {
                if let Some((earlier_epoch, earlier_last_offset)) =
                    epoch_falls(&mut self.epoch_chain, epoch, k.last)
                {
                    self.report.epochs_down.push(EpochDown {
                        file: path.to_path_buf(),
                        position: pos,
                        first_offset: k.first,
                        last_offset: k.last,
                        epoch,
                        earlier_epoch,
                        earlier_last_offset,
                    });
                }
            }
            match k.leader_epoch {
                Some(e) => {
                    self.epochs.assign(e, k.first);
                }
                None => {
                    self.epochs.clear();
                }
            }
            for d in self.pending.drain(..) {
                if let Some(d) = self.report.damaged.get_mut(d) {
                    d.first_kept_after = Some(k.first);
                }
            }
            self.track(k);
            let r = &mut self.report;
            r.kept_entries = r.kept_entries.saturating_add(1);
            r.kept_records = r.kept_records.saturating_add(k.records);
            r.kept_bytes = r.kept_bytes.saturating_add(size);
            fr.kept_entries = fr.kept_entries.saturating_add(1);
            fr.kept_bytes = fr.kept_bytes.saturating_add(size);
            if self.clean_prefix {
                r.kafka_recovery.entries = r.kafka_recovery.entries.saturating_add(1);
                r.kafka_recovery.records = r.kafka_recovery.records.saturating_add(k.records);
            }
            match r.kept_ranges.last_mut() {
                Some(range) if self.range_open => {
                    if let Some(p) = self.prev_last.filter(|&p| k.first > p.saturating_add(1)) {
                        self.jumps.push((p, k.first));
                    }
                    range.last = k.last;
                }
                _ => r.kept_ranges.push(OffsetRange {
                    first: k.first,
                    last: k.last,
                }),
            }
            self.range_open = true;
            self.prev_last = Some(k.last);
            pos = pos.saturating_add(size);
        }
        if let Some((start, reason)) = bad.take() {
            self.damage(&w, start, len, reason)?;
        }
        self.scanned_before = self.scanned_before.saturating_add(len);
        self.sink.progress(self.scanned_before, self.total);
        self.report.files.push(fr);
        Ok(())
    }
}

/// What the scan needs of a kept entry.
struct Kept {
    /// The first offset (a v0/v1 wrapper's first inner one), for what the report says.
    first: i64,
    /// The first offset as Kafka's recovery takes it (a compressed v0/v1 wrapper's last: its
    /// header has no other), for the rules recovery applies (above the segment's base, after
    /// the previous entry); a segment is named after it.
    recovery_first: i64,
    last: i64,
    records: u64,
    leader_epoch: Option<i32>,
    /// A v2 batch's partition leader epoch as stored (-1 and other negatives too); `None` for
    /// v0/v1.
    stored_epoch: Option<i32>,
    /// For a v2 batch with a producer id.
    txn: Option<TxnFacts>,
}

/// What following transactions needs of a v2 batch with a producer id.
#[derive(Debug, Clone, Copy)]
struct TxnFacts {
    producer_id: i64,
    epoch: i16,
    base_seq: i32,
    transactional: bool,
    control: bool,
    /// For an end-transaction marker: its coordinator epoch.
    marker: Option<i32>,
    max_timestamp: i64,
}

impl TxnFacts {
    fn of(v: &V2Batch<'_>, scratch: &mut Vec<u8>) -> Option<TxnFacts> {
        (v.raw_producer_id() >= 0).then(|| TxnFacts {
            producer_id: v.raw_producer_id(),
            epoch: v.raw_producer_epoch(),
            base_seq: v.raw_base_sequence(),
            transactional: v.is_transactional(),
            control: v.is_control(),
            marker: if v.is_control() {
                marker_coordinator_epoch(v, scratch)
            } else {
                None
            },
            max_timestamp: v.max_timestamp(),
        })
    }
}

/// The coordinator epoch of the end-transaction marker in the control batch `v` (`None`: an
/// empty control batch, or another kind of control record: Kafka's producer state passes
/// over them).
fn marker_coordinator_epoch(v: &V2Batch<'_>, scratch: &mut Vec<u8>) -> Option<i32> {
    let mut records = v
        .records(scratch, krecords_codec::DEFAULT_DECOMPRESS_LIMIT)
        .ok()?;
    let record = records.next()?.ok()?;
    let key = ControlRecordKey::parse(record.key, 0).ok()?;
    if !key.kind.is_end_txn() {
        return None;
    }
    EndTxnMarker::parse(record.value, 0)
        .ok()
        .map(|m| m.coordinator_epoch)
}

/// The verdict on the entry at `pos` of `w`'s file: the entry, when a whole one checks
/// there, or why not and how far the next candidate is.
fn entry_at(
    w: &mut Window,
    pos: u64,
    options: SalvageOptions,
    scratch: &mut Vec<u8>,
) -> Result<std::result::Result<Found, (String, u64)>> {
    let max = options.max_entry_size;
    let head = w.at(pos, MAGIC_OFFSET + 1)?;
    // Up to the magic byte at least, whatever the bound (a bound below it accepts nothing).
    let least = MAGIC_OFFSET + 1;
    let want = claimed_len(head)
        .unwrap_or(0)
        .clamp(least, max.saturating_add(LOG_OVERHEAD).max(least));
    let avail = w.at(pos, want)?;
    Ok(match candidate(avail, pos, max) {
        Ok(b) => {
            let (kept, size) = Kept::of(&b, scratch, options);
            Ok(Found { pos, size, kept })
        }
        Err(reason) => Err((reason, skip_after_failure(avail))),
    })
}

/// Producer id → first offset and facts of its next entry.
type NextEntries = HashMap<i64, (i64, TxnFacts, (usize, u64))>;

/// Why a look ahead stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Every producer wanted was found.
    Found,
    /// At the end of the input.
    End,
    /// After [`LOOK_AHEAD`] bytes.
    Budget,
}

/// The next entry (first offset and facts) of each producer in `wanted` from position `pos`
/// of file `i` on, with its file index and position, reading at most [`LOOK_AHEAD`] bytes and
/// passing over damage as the scan does (entries that do not check are skipped, zero runs and
/// implausible headers quickly); and why it stopped.
fn next_entries(
    env: &Env,
    files: &[PathBuf],
    i: usize,
    pos: u64,
    wanted: &[i64],
    options: SalvageOptions,
    scratch: &mut Vec<u8>,
) -> Result<(NextEntries, Stop)> {
    let mut found = HashMap::new();
    let mut budget = LOOK_AHEAD;
    let cap = options
        .max_entry_size
        .saturating_add(LOG_OVERHEAD)
        .max(MIN_WINDOW);
    for (j, path) in files.iter().enumerate().skip(i) {
        let file = env
            .storage
            .open_read(path)
            .map_err(|e| Error::io("open", path, e))?;
        let len = file.len().map_err(|e| Error::io("read", path, e))?;
        let mut w = Window::new(file, path, len, cap).chunked(MIN_WINDOW);
        let mut p = if j == i { pos } else { 0 };
        while p < len {
            let head = w.at(p, MAGIC_OFFSET + 1)?;
            let step = if implausible(head, options.max_entry_size) {
                skip_after_failure(head)
            } else {
                match entry_at(&mut w, p, options, scratch)? {
                    Ok(f) => {
                        if let Some(t) = f.kept.txn.filter(|t| !t.control || t.marker.is_some()) {
                            if wanted.contains(&t.producer_id) {
                                found
                                    .entry(t.producer_id)
                                    .or_insert((f.kept.first, t, (j, p)));
                                if found.len() == wanted.len() {
                                    return Ok((found, Stop::Found));
                                }
                            }
                        }
                        f.size
                    }
                    Err((_, skip)) => skip,
                }
            };
            p = p.saturating_add(step);
            budget = budget.saturating_sub(step);
            if budget == 0 {
                return Ok((found, Stop::Budget));
            }
        }
    }
    Ok((found, Stop::End))
}

/// `ranges` split at each of the `jumps` (last kept offset, next kept first offset) whose
/// offsets between were those of a left-out entry: a kept range holds no left-out entry.
fn split_at_left_out(
    ranges: &[OffsetRange],
    jumps: &[(i64, i64)],
    left_out: &[LeftOut],
) -> Vec<OffsetRange> {
    let mut out = Vec::with_capacity(ranges.len());
    let mut cuts = jumps
        .iter()
        .filter(|&&(before, after)| {
            left_out
                .iter()
                .any(|l| l.first_offset < after && l.last_offset > before)
        })
        .peekable();
    for r in ranges {
        let mut first = r.first;
        // Jumps come in offset order, each inside one range.
        while let Some(&(before, after)) = cuts.next_if(|&&(b, a)| b >= first && a <= r.last) {
            out.push(OffsetRange {
                first,
                last: before,
            });
            first = after;
        }
        out.push(OffsetRange {
            first,
            last: r.last,
        });
    }
    out
}

impl Kept {
    /// The facts of `b` and its size.
    fn of(b: &Batch<'_>, scratch: &mut Vec<u8>, options: SalvageOptions) -> (Kept, u64) {
        let last = b.last_offset();
        // A compressed v0/v1 wrapper has no first offset in its header: its inner messages
        // give it (the wrapper's last offset stands in when they cannot be read).
        let (first, records) = match b.record_count() {
            Some(n) => (b.first_offset().unwrap_or(last), n as u64),
            None => b
                .record_span(scratch, options.max_decompressed_bytes)
                .map_or((last, 0), |s| (s.first_offset.min(last), s.count as u64)),
        };
        let (txn, stored_epoch) = match b {
            Batch::V2(v) => (
                TxnFacts::of(v, scratch),
                Some(v.raw_partition_leader_epoch()),
            ),
            _ => (None, None),
        };
        let kept = Kept {
            first,
            recovery_first: segment::recovery_first_offset(b),
            last,
            records,
            leader_epoch: b.partition_leader_epoch(),
            stored_epoch,
            txn,
        };
        (kept, b.size_in_bytes() as u64)
    }
}

/// Salvages the segment `files` on the real file system; see [`salvage_files_with`].
///
/// # Errors
///
/// As [`salvage_files_with`]; a file that is not a regular file (a FIFO, a device; links
/// followed) is refused before anything is opened, as [`Input::of`] refuses it.
pub fn salvage_files(
    files: &[PathBuf],
    output: Option<&Path>,
    config: &LogConfig,
    options: SalvageOptions,
    sink: &mut dyn SalvageSink,
) -> Result<SalvageReport> {
    refuse_special(files)?;
    salvage_files_with(&Env::fs(), files, output, config, options, sink)
}

/// Salvages the segment `files` (never modified) into the new partition directory `output`
/// with configuration `config` (see the [module](self) docs); with no output, only reports
/// what a salvage would keep and lose. The segment files named by a base offset are read in
/// the order of their contents, whatever their names say and whatever order they are given in
/// (each from where its first intact entry starts, checked against the entry after it; see
/// `in_content_order`), in the places such files take among `files`; the files named otherwise
/// stay where they were given. A segment whose name does not match its contents (names
/// swapped, or a name above its offsets) loses nothing for it: it is written under its first
/// kept offset and listed in [`SalvageReport::renamed`]. Finding where each file starts reads
/// its first entries, and a file's whole damaged prefix when it has one.
///
/// # Errors
///
/// An input cannot be read; the output exists and is not empty, or cannot be written; a
/// `SalvageSink` error. The output path then holds nothing new.
///
/// # Examples
///
/// ```
/// use krecords_codec::write::{NewRecord, V2Builder};
/// use krecords_log::clock::ManualClock;
/// use krecords_log::salvage::{self, NoSink, SalvageOptions};
/// use krecords_log::storage::{MemStorage, Storage};
/// use krecords_log::{Env, Log, LogConfig};
/// use std::path::{Path, PathBuf};
/// use std::sync::Arc;
///
/// let env = Env::new(Arc::new(MemStorage::new()), Arc::new(ManualClock::new(0)));
/// let mut bytes = Vec::new();
/// for offset in 0..3 {
///     let mut b = V2Builder::new(offset);
///     b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"hello"))).unwrap();
///     bytes.extend(b.finish().unwrap());
/// }
/// let len = bytes.len() / 3;
/// bytes[len + 40] ^= 0xff; // a flipped byte in the second batch
/// let seg = PathBuf::from("/in/00000000000000000000.log");
/// env.storage.create_dir_all(Path::new("/in")).unwrap();
/// env.storage.create(&seg).unwrap().write_at(&bytes, 0).unwrap();
///
/// let report = salvage::salvage_files_with(&env, &[seg], Some(Path::new("/out/t-0")),
///     &LogConfig::default(), SalvageOptions::default(), &mut NoSink)?;
/// assert_eq!(report.kept_entries, 2);
/// assert_eq!((report.damaged[0].position, report.damaged[0].length), (len as u64, len as u64));
/// assert_eq!(report.kafka_recovery.entries, 1);
/// assert_eq!(Log::open_read_only_with("/out/t-0", env)?.log_end_offset(), 3);
/// # Ok::<(), krecords_log::Error>(())
/// ```
pub fn salvage_files_with(
    env: &Env,
    files: &[PathBuf],
    output: Option<&Path>,
    config: &LogConfig,
    options: SalvageOptions,
    sink: &mut dyn SalvageSink,
) -> Result<SalvageReport> {
    let mut scratch = Vec::new();
    let (files, bases) = in_content_order(env, files, options, &mut scratch)?;
    let (files, bases) = (&files[..], &bases[..]);
    let mut total = 0u64;
    for f in files {
        let file = env
            .storage
            .open_read(f)
            .map_err(|e| Error::io("open", f, e))?;
        total = total.saturating_add(file.len().map_err(|e| Error::io("read", f, e))?);
    }
    let writer = match output {
        Some(out) => Some(PartitionWriter::create_with(out, config, env.clone())?),
        None => None,
    };
    let mut scan = Scan {
        options,
        sink,
        writer,
        report: SalvageReport::default(),
        epochs: LeaderEpochCache::default(),
        prev_last: None,
        clean_prefix: true,
        range_open: false,
        jumps: Vec::new(),
        pending: Vec::new(),
        scratch,
        scanned_before: 0,
        total,
        files,
        bases,
        txns: BTreeMap::new(),
        coordinator_epochs: HashMap::new(),
        bumping: HashSet::new(),
        leader_epoch: -1,
        epoch_chain: None,
        file_index: 0,
    };
    for i in 0..files.len() {
        scan.file(env, i)?;
    }
    // Transactions interrupted by a loss that nothing kept follows.
    scan.close_interrupted(env, files.len(), 0, None)?;
    let mut report = scan.report;
    report.kept_ranges = split_at_left_out(&report.kept_ranges, &scan.jumps, &report.left_out);
    if let Some(writer) = scan.writer {
        writer.store_epochs(&scan.epochs)?;
        report.segments_written = writer.finish()?;
    }
    Ok(report)
}

/// `files` in the offset order of their names, as [`segment_files`] lists a partition
/// directory's: the files named by a base offset (`00000000000000004096.log`) sorted by it, in
/// the places such files take among `files`; the files named otherwise stay where they were
/// given. Files of the same base offset keep their order. (A salvage then reads them in the
/// order of their contents, which a misnamed file does not follow: [`salvage_files_with`].)
///
/// # Examples
///
/// ```
/// use krecords_log::salvage::in_offset_order;
/// use std::path::PathBuf;
///
/// let given: Vec<PathBuf> = ["00000000000000000042.log", "copy.bin", "a/00000000000000000007.log"]
///     .iter()
///     .map(PathBuf::from)
///     .collect();
/// let sorted = in_offset_order(&given);
/// assert_eq!(sorted, [2, 1, 0].map(|i| given[i].clone()));
/// ```
pub fn in_offset_order(files: &[PathBuf]) -> Vec<PathBuf> {
    let base = |f: &PathBuf| {
        f.file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| files::parse_file_name(n, LOG_SUFFIX))
    };
    let mut named: Vec<(i64, &PathBuf)> = files
        .iter()
        .filter_map(|f| base(f).map(|b| (b, f)))
        .collect();
    // Stable: files of the same base offset keep their order.
    named.sort_by_key(|&(b, _)| b);
    let mut named = named.into_iter().map(|(_, f)| f);
    files
        .iter()
        .map(|f| match base(f) {
            Some(_) => named.next().unwrap_or(f).clone(),
            None => f.clone(),
        })
        .collect()
}

/// `files` in the order of their contents, and for each the base offset its name gives when
/// that name holds (at or below where its contents start; `None` for a file named otherwise
/// or misnamed). The files named by a base offset are sorted by [`content_start`] (their
/// name's base offset when nothing in them checks), then by name, in the places such files
/// take among `files` ([`in_offset_order`]'s places); the others stay where they were given.
///
/// # Errors
///
/// A file cannot be read (one that cannot be opened is left to its scan, which says why).
fn in_content_order(
    env: &Env,
    files: &[PathBuf],
    options: SalvageOptions,
    scratch: &mut Vec<u8>,
) -> Result<(Vec<PathBuf>, Vec<Option<i64>>)> {
    let name_of = |f: &PathBuf| {
        f.file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| files::parse_file_name(n, LOG_SUFFIX))
    };
    let mut named = Vec::new();
    for f in files {
        if let Some(name) = name_of(f) {
            let start = content_start(env, f, name, options, scratch)?;
            let holds = start.is_none_or(|s| name <= s);
            named.push((start.unwrap_or(name), name, holds.then_some(name), f));
        }
    }
    // Stable: files of the same start and name keep their order.
    named.sort_by_key(|&(start, name, ..)| (start, name));
    let mut named = named.into_iter();
    Ok(files
        .iter()
        .map(|f| match name_of(f).and_then(|_| named.next()) {
            Some((_, _, base, f)) => (f.clone(), base),
            None => (f.clone(), None),
        })
        .unzip())
}

/// Where the contents of the segment file `path`, named for base offset `name`, start: its
/// first intact entry's first offset as recovery takes it ([`order_key`] with the entry right
/// after it); `None` when nothing in it checks, or it cannot be opened.
///
/// # Errors
///
/// The file cannot be read.
fn content_start(
    env: &Env,
    path: &Path,
    name: i64,
    options: SalvageOptions,
    scratch: &mut Vec<u8>,
) -> Result<Option<i64>> {
    let Ok(file) = env.storage.open_read(path) else {
        return Ok(None);
    };
    let Ok(len) = file.len() else {
        return Ok(None);
    };
    let max = options.max_entry_size;
    let cap = max.saturating_add(LOG_OVERHEAD).max(MIN_WINDOW);
    let mut w = Window::new(file, path, len, cap).chunked(MIN_WINDOW);
    let mut pos = 0u64;
    while pos < len {
        let head = w.at(pos, MAGIC_OFFSET + 1)?;
        if implausible(head, max) {
            pos = pos.saturating_add(skip_after_failure(head));
            continue;
        }
        match entry_at(&mut w, pos, options, scratch)? {
            Ok(h) => {
                let next = pos.saturating_add(h.size);
                let n = if next < len {
                    entry_at(&mut w, next, options, scratch)?.ok()
                } else {
                    None
                };
                return Ok(Some(order_key(&h.kept, n.map(|n| n.kept).as_ref(), name)));
            }
            Err((_, skip)) => pos = pos.saturating_add(skip),
        }
    }
    Ok(None)
}

/// Where a segment named for base offset `name` starts, from its first intact entry `h` and
/// the entry right after it, `n`: `h`'s first offset as recovery takes it, unless a damaged
/// base offset (outside every CRC, so the entry still checks) shows.
/// - Without `n`, the name: one entry alone does not overrule it, since a flipped bit in its
///   base offset would move the whole file (and the scan then leaves that entry out).
/// - When `n` does not follow `h`, one of the two has a damaged base offset: `n`'s first
///   offset is taken (a raised one of `h`), unless it lies below the name (then `h`'s: a
///   lowered one of `n`).
/// - When `h` lies below the name while `n` is at or above it, `h` is taken only when `n`
///   starts right after it (the two agree, so the name is what is wrong); otherwise `h` alone
///   contradicts the name, and the name is taken (the scan then leaves `h` out as below its
///   segment's base).
fn order_key(h: &Kept, n: Option<&Kept>, name: i64) -> i64 {
    let Some(n) = n else {
        return name;
    };
    if n.recovery_first <= h.last {
        return if n.recovery_first < name {
            h.recovery_first
        } else {
            n.recovery_first
        };
    }
    let chained = h.last.checked_add(1) == Some(n.recovery_first);
    if h.recovery_first < name && name <= n.recovery_first && !chained {
        name
    } else {
        h.recovery_first
    }
}

/// What a salvage reads, told from the sources it was given ([`Input::of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Segment files, in the offset order of their names ([`in_offset_order`]): salvaged into
    /// one partition directory ([`salvage_files`], in the order of their contents).
    Files(Vec<PathBuf>),
    /// A partition directory (one holding segments): salvaged into one partition directory
    /// ([`salvage_partition`]).
    Partition(PathBuf),
    /// A broker's log.dirs root (a directory without segments): each of its partition
    /// directories is salvaged into the output directory under its own name.
    Root {
        /// The root.
        dir: PathBuf,
        /// Its partition directories, by topic then partition (never empty).
        partitions: Vec<data_dir::PartitionDir>,
    },
}

/// Why the sources given to a salvage cannot be salvaged ([`Input::of`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum InputError {
    /// Standard input (`-`) among the sources: salvage reads files it can read again.
    Stdin,
    /// A directory among several sources: salvage takes segment files or one directory.
    NotOneDirectory {
        /// The directories given.
        dirs: Vec<PathBuf>,
        /// How many sources were given.
        given: usize,
    },
    /// The output is a source directory or inside one.
    InsideSource(InsideSource),
    /// A directory holding no segment and no partition directory.
    Empty(PathBuf),
    /// A source, or a segment of the directory given, that is not a regular file (links
    /// followed): a FIFO, a device such as `/dev/zero`, a socket, a directory named as a
    /// segment. Salvage reads a file again after damage and needs its length, which only a
    /// regular file has (a FIFO would be waited on for ever, a device read as empty), so it is
    /// refused before anything is opened.
    NotAFile {
        /// The path, as given or listed.
        path: PathBuf,
        /// What it is, in words ("a FIFO", "a character device").
        kind: &'static str,
    },
    /// The output exists and is not an empty directory ([`output_state`]); a salvage never
    /// writes into or over it.
    OutputExists {
        /// The output.
        path: PathBuf,
        /// The names it holds, sorted (none when it is not a directory).
        holds: Vec<String>,
        /// Whether it is a partition directory as a salvage writes it (an earlier run's): then
        /// it can be kept and skipped (`skip_existing`).
        salvaged: bool,
    },
    /// A directory cannot be listed.
    Log(Error),
}

impl InputError {
    /// Whether the sources or the output are wrong as given (a usage error, exit 2 for `krec
    /// salvage`), rather than a directory that cannot be read ([`InputError::Log`]).
    pub fn is_usage(&self) -> bool {
        !matches!(self, InputError::Log(_))
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Stdin => f.write_str(
                "salvage reads segment files and partition directories, not standard input \
                 (-): write the bytes to a file named by its base offset \
                 (00000000000000000000.log) and salvage that",
            ),
            InputError::NotOneDirectory { dirs, given } => {
                let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
                write!(
                    f,
                    "salvage takes segment files or one directory (a partition directory or a \
                     log.dirs root), not {given} sources with directories among them ({}): \
                     salvage each directory into its own output, or give the log.dirs root \
                     that holds them",
                    names.join(", "),
                )
            }
            InputError::InsideSource(e) => write!(f, "{e}"),
            InputError::Empty(dir) => write!(
                f,
                "{} holds no segment and no partition directory",
                dir.display()
            ),
            InputError::NotAFile { path, kind } => write!(
                f,
                "{}: {kind}, not a regular file: salvage reads a segment more than once and \
                 needs its length, which only a regular file has; copy its bytes to a file \
                 named by its base offset (00000000000000000000.log) and salvage that",
                path.display()
            ),
            InputError::OutputExists {
                path,
                holds,
                salvaged,
            } => {
                let path = path.display();
                if holds.is_empty() {
                    return write!(
                        f,
                        "{path}: already exists and is not a directory; salvage writes only \
                         into a new or empty directory: move it away or give another --output"
                    );
                }
                const SHOWN: usize = 5;
                let mut names = holds
                    .iter()
                    .take(SHOWN)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ");
                if holds.len() > SHOWN {
                    names.push_str(&format!(" and {} more", holds.len() - SHOWN));
                }
                if *salvaged {
                    write!(
                        f,
                        "{path}: already holds a partition salvaged by an earlier run ({names}); \
                         salvage never writes over it: to keep it and salvage the rest, run \
                         again with --skip-existing; to salvage it again, move it away first"
                    )
                } else {
                    write!(
                        f,
                        "{path}: already holds files a salvage did not write ({names}); salvage \
                         never writes into or over them, even with --skip-existing: move them \
                         away or give another --output"
                    )
                }
            }
            InputError::Log(e) => write!(f, "{e}"),
        }
    }
}

/// What a salvage finds at a partition's output path before it writes there
/// ([`output_state`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputState {
    /// Nothing, or an empty directory: the salvage writes there.
    Free,
    /// A partition directory as a salvage writes it, left by an earlier run (a salvage renames
    /// a partition into place only when it is complete): skipped, as asked.
    Salvaged,
}

/// Whether the name `name` is one a salvage writes into a partition directory: its
/// `krec-log.json`, `leader-epoch-checkpoint`, recovery point, clean shutdown marker and lock
/// file, and segments, indexes and producer snapshots named by an offset.
fn salvage_writes(name: &str) -> bool {
    [
        files::CONFIG_FILE,
        files::LEADER_EPOCH_CHECKPOINT_FILE,
        files::RECOVERY_POINT_FILE,
        files::CLEAN_SHUTDOWN_FILE,
        files::LOCK_FILE,
    ]
    .contains(&name)
        || [
            LOG_SUFFIX,
            files::INDEX_SUFFIX,
            files::TIME_INDEX_SUFFIX,
            files::TXN_INDEX_SUFFIX,
            files::SNAPSHOT_SUFFIX,
        ]
        .iter()
        .any(|suffix| files::parse_file_name(name, suffix).is_some())
}

/// What is at `output`, a partition's output path, on the real file system, before a salvage
/// writes there: [`OutputState::Free`] when nothing or an empty directory;
/// [`OutputState::Salvaged`] when `skip_existing` is set and it is a partition directory as a
/// salvage writes it (a `krec-log.json` and only the files a salvage writes: an earlier run's,
/// renamed into place when complete), which the caller then skips. Nothing is changed.
///
/// # Errors
///
/// [`InputError::OutputExists`] for anything else: such a partition directory without
/// `skip_existing` (the message says how to go on), a directory holding other files or a
/// file, never written into or over; [`InputError::Log`] when it cannot be looked up.
pub fn output_state(
    output: &Path,
    skip_existing: bool,
) -> std::result::Result<OutputState, InputError> {
    let meta = match std::fs::metadata(output) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(OutputState::Free),
        Err(e) => return Err(InputError::Log(Error::io("stat", output, e))),
    };
    let mut holds = Vec::new();
    if meta.is_dir() {
        for entry in
            std::fs::read_dir(output).map_err(|e| InputError::Log(Error::io("list", output, e)))?
        {
            let entry = entry.map_err(|e| InputError::Log(Error::io("list", output, e)))?;
            holds.push(entry.file_name().to_string_lossy().into_owned());
        }
        if holds.is_empty() {
            return Ok(OutputState::Free);
        }
        holds.sort();
    }
    let salvaged =
        holds.iter().any(|n| n == files::CONFIG_FILE) && holds.iter().all(|n| salvage_writes(n));
    if salvaged && skip_existing {
        return Ok(OutputState::Salvaged);
    }
    Err(InputError::OutputExists {
        path: output.to_path_buf(),
        holds,
        salvaged,
    })
}

/// What the file at `path` is, in words, when it is not a regular file (links followed): a
/// FIFO, a device, a socket, a directory; `None` for a regular file, and for a path that
/// cannot be looked up (opening it says why). Only its metadata is read ([`file_kind`]).
/// Stricter than [`crate::check::read_once`], which reads a block device as a file: salvage
/// needs a length, and a device's is 0.
fn not_a_regular_file(path: &Path) -> Option<&'static str> {
    file_kind(path)
        .filter(|k| *k != FileKind::Regular)
        .map(FileKind::describe)
}

/// The first of `files` that is not a regular file, and what it is ([`not_a_regular_file`]).
fn first_special(files: &[PathBuf]) -> Option<(&PathBuf, &'static str)> {
    files
        .iter()
        .find_map(|f| not_a_regular_file(f).map(|kind| (f, kind)))
}

/// [`InputError::NotAFile`] for the first of `files` that is not a regular file.
fn regular_files(files: &[PathBuf]) -> std::result::Result<(), InputError> {
    match first_special(files) {
        Some((path, kind)) => Err(InputError::NotAFile {
            path: path.clone(),
            kind,
        }),
        None => Ok(()),
    }
}

/// [`regular_files`] as a log error (for the salvages of the real file system called without
/// [`Input::of`]).
fn refuse_special(files: &[PathBuf]) -> Result<()> {
    match first_special(files) {
        Some((path, kind)) => Err(Error::io(
            "open",
            path,
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{kind}, not a regular file"),
            ),
        )),
        None => Ok(()),
    }
}

impl std::error::Error for InputError {}

impl Input {
    /// What salvaging `sources` into `output` reads, on the real file system: segment files
    /// (put in offset order), or one directory, a partition directory when it holds segments
    /// and a log.dirs root otherwise. Nothing is created or changed.
    ///
    /// # Errors
    ///
    /// `-` among the sources ([`InputError::Stdin`]); a directory among several sources
    /// ([`InputError::NotOneDirectory`]); an `output` that is a source directory or inside one,
    /// links resolved ([`InputError::InsideSource`]); a directory with neither segments nor
    /// partition directories ([`InputError::Empty`]); a source file, or a segment of the
    /// directory's partitions, that is not a regular file, links followed: a FIFO, a device, a
    /// directory named as a segment ([`InputError::NotAFile`], told from its metadata: nothing
    /// is opened); a directory that cannot be listed.
    pub fn of(sources: &[PathBuf], output: &Path) -> std::result::Result<Input, InputError> {
        if sources.iter().any(|s| s == Path::new("-")) {
            return Err(InputError::Stdin);
        }
        let dirs: Vec<PathBuf> = sources.iter().filter(|s| s.is_dir()).cloned().collect();
        if !dirs.is_empty() && sources.len() > 1 {
            return Err(InputError::NotOneDirectory {
                dirs,
                given: sources.len(),
            });
        }
        InsideSource::check(output, &dirs).map_err(InputError::InsideSource)?;
        let Some(dir) = dirs.into_iter().next() else {
            regular_files(sources)?;
            return Ok(Input::Files(in_offset_order(sources)));
        };
        let segments = segment_files(&Env::fs(), &dir).map_err(InputError::Log)?;
        if !segments.is_empty() {
            regular_files(&segments)?;
            return Ok(Input::Partition(dir));
        }
        let partitions = data_dir::partition_dirs(&dir)
            .map_err(|e| InputError::Log(Error::io("list", &dir, e)))?;
        if partitions.is_empty() {
            return Err(InputError::Empty(dir));
        }
        for p in &partitions {
            regular_files(&segment_files(&Env::fs(), &p.path).map_err(InputError::Log)?)?;
        }
        Ok(Input::Root { dir, partitions })
    }
}

/// The segment files of the partition directory `dir`, in offset order.
///
/// # Errors
///
/// The directory cannot be listed.
pub fn segment_files(env: &Env, dir: &Path) -> Result<Vec<PathBuf>> {
    let names = env
        .storage
        .list_dir(dir)
        .map_err(|e| Error::io("list", dir, e))?;
    let mut bases: Vec<(i64, &String)> = names
        .iter()
        .filter_map(|n| files::parse_file_name(n, LOG_SUFFIX).map(|b| (b, n)))
        .collect();
    bases.sort();
    Ok(bases.into_iter().map(|(_, n)| dir.join(n)).collect())
}

/// Salvages the partition directory `dir` (never modified) into `output`, with its
/// `krec-log.json` when it has one and it can be used (the default configuration otherwise:
/// a damaged configuration is said in [`SalvageReport::config_problem`], not an error, since
/// salvage is what gets past damage); see [`salvage_files_with`].
///
/// # Errors
///
/// As [`salvage_files_with`]; `dir` or its configuration cannot be read.
pub fn salvage_partition_with(
    env: &Env,
    dir: &Path,
    output: Option<&Path>,
    options: SalvageOptions,
    sink: &mut dyn SalvageSink,
) -> Result<SalvageReport> {
    let segments = segment_files(env, dir)?;
    let (config, problem) = match files::read_config(env.storage.as_ref(), dir) {
        Ok(config) => (config.unwrap_or_default(), None),
        Err(e @ Error::DamagedConfig { .. }) => (LogConfig::default(), Some(e.to_string())),
        Err(e) => return Err(e),
    };
    let mut report = salvage_files_with(env, &segments, output, &config, options, sink)?;
    report.config_problem = problem;
    Ok(report)
}

/// [`salvage_partition_with`] on the real file system.
///
/// # Errors
///
/// As [`salvage_partition_with`]; a segment that is not a regular file (a FIFO, a device, a
/// directory; links followed) is refused before anything is opened, as [`Input::of`]
/// refuses it.
pub fn salvage_partition(
    dir: &Path,
    output: Option<&Path>,
    options: SalvageOptions,
    sink: &mut dyn SalvageSink,
) -> Result<SalvageReport> {
    refuse_special(&segment_files(&Env::fs(), dir)?)?;
    salvage_partition_with(&Env::fs(), dir, output, options, sink)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn zero_runs_are_skipped_but_never_past_a_size_field() {
        let mut buf = vec![0u8; 200];
        assert_eq!(skip_after_failure(&buf), 189);
        buf[100] = 1;
        // Positions up to 100 - 11 = 89 have a zero size field; 89 is the first to try.
        assert_eq!(skip_after_failure(&buf), 89);
        buf[8] = 1;
        assert_eq!(skip_after_failure(&buf), 1);
        assert_eq!(skip_after_failure(&[0u8; 5]), 1);
    }

    #[test]
    fn lost_offsets_between_kept_ones() {
        let d = |b, a| Damage {
            file: PathBuf::new(),
            position: 0,
            length: 1,
            reason: String::new(),
            last_kept_before: b,
            first_kept_after: a,
        };
        assert_eq!(d(Some(4), Some(9)).lost_offsets(), Some((Some(5), Some(8))));
        assert_eq!(d(Some(4), Some(5)).lost_offsets(), None);
        assert_eq!(d(None, Some(5)).lost_offsets(), Some((None, Some(4))));
        assert_eq!(d(Some(4), None).lost_offsets(), Some((Some(5), None)));
    }
}
