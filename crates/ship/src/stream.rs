//! A stream of entries (standard input) read as a source, at read_committed.
//!
//! A stream is read once, front to back, with no index: the reader keeps the entries read but
//! not handed out yet, tracks each producer's open transaction from the entries themselves
//! (its first transactional batch opens it, its commit or abort marker ends it), and hands out
//! only what lies before the first open transaction — the stream's last stable offset — with
//! the aborted transactions of that range, as a broker's read_committed fetch would. What an
//! open transaction holds back stays in memory up to [`STREAM_HOLD_LIMIT`]; entries before the
//! job's committed position are skipped, so piping the same data again resumes the job.
//!
//! The bytes are untrusted: the codec's panic lints apply (`untrusted_modules!` in lib.rs),
//! offsets are added with saturation.

use crate::{Error, Fetched, Result};
use krecords_codec::control::{ControlRecordKey, ControlRecordType};
use krecords_codec::read::stream::{ReadFill, Step, Streamer};
use krecords_codec::read::Batch;
use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;
use krecords_log::transaction::AbortedTransaction;
use std::collections::{BTreeMap, VecDeque};
use std::io::Read;

/// The most bytes of entries a stream source holds back behind an open transaction (256 MiB);
/// past it shipping stops with an error naming the transaction (ship the segment files or the
/// partition directory instead: a log reads past an open transaction without holding it).
pub const STREAM_HOLD_LIMIT: usize = 256 << 20;

/// See the module documentation.
pub(crate) struct StreamReader {
    entries: Streamer<ReadFill<Box<dyn Read + Send>>>,
    /// Entries read and not handed out: (last offset, bytes).
    held: VecDeque<(i64, Vec<u8>)>,
    held_bytes: usize,
    /// Open transactions: producer id → first offset.
    open: BTreeMap<i64, i64>,
    /// Aborted transactions whose marker was read, with the marker's offset.
    aborted: Vec<(AbortedTransaction, i64)>,
    /// The offset after the last entry read.
    end: i64,
    eof: bool,
    scratch: Vec<u8>,
}

impl StreamReader {
    pub(crate) fn new(reader: Box<dyn Read + Send>) -> Self {
        StreamReader {
            entries: Streamer::new(ReadFill::new(reader), 0, i32::MAX as usize),
            held: VecDeque::new(),
            held_bytes: 0,
            open: BTreeMap::new(),
            aborted: Vec::new(),
            end: 0,
            eof: false,
            scratch: Vec::new(),
        }
    }

    /// The first offset not stable yet: the first open transaction's first offset.
    fn last_stable_offset(&self) -> i64 {
        self.open.values().min().copied().unwrap_or(self.end)
    }

    /// The entries from `pos` that can be handed out, up to `max_bytes` (at least one entry);
    /// `None` at the end of the stream's committed data.
    pub(crate) fn next(
        &mut self,
        pos: i64,
        max_bytes: usize,
        name: &str,
    ) -> Result<Option<Fetched>> {
        loop {
            while self.held.front().is_some_and(|(last, _)| *last < pos) {
                if let Some((_, b)) = self.held.pop_front() {
                    self.held_bytes = self.held_bytes.saturating_sub(b.len());
                }
            }
            let lso = self.last_stable_offset();
            let (mut count, mut bytes) = (0usize, 0usize);
            for (last, b) in &self.held {
                if *last >= lso || (count > 0 && bytes.saturating_add(b.len()) > max_bytes) {
                    break;
                }
                count = count.saturating_add(1);
                bytes = bytes.saturating_add(b.len());
            }
            // Hand out what is ready when the next read could wait (a pipe between writes).
            let full = count > 0 && (bytes >= max_bytes || count < self.held.len());
            if full || (count > 0 && (self.eof || self.entries.buffered() == 0)) {
                return Ok(Some(self.hand_out(pos, count, bytes)));
            }
            if self.eof {
                return Ok(None);
            }
            if self.held_bytes > STREAM_HOLD_LIMIT {
                let (pid, first) = self
                    .open
                    .iter()
                    .min_by_key(|(_, first)| **first)
                    .map_or((-1, lso), |(p, f)| (*p, *f));
                return Err(Error::usage(format!(
                    "{name}: the transaction of producer {pid} open since offset {first} holds back more than {} MiB of later entries; ship the segment files or the partition directory instead",
                    STREAM_HOLD_LIMIT >> 20
                )));
            }
            self.read_entry(name)?;
        }
    }

    /// Reads one entry into `held`, or notes the end of the stream.
    fn read_entry(&mut self, name: &str) -> Result<()> {
        let step = self.entries.next_entry().map_err(|e| Error::Io {
            context: format!("cannot read {name}"),
            source: e,
        })?;
        let batch = match step {
            Step::Entry(b) => b,
            Step::End => {
                self.eof = true;
                return Ok(());
            }
            Step::Partial(p) => {
                return Err(Error::Data(format!(
                    "{name}: the stream ends inside an entry at byte {}",
                    p.position
                )))
            }
            Step::Error(e) => {
                return Err(Error::Data(format!(
                    "{name}: byte {}: {e}",
                    self.entries.position()
                )))
            }
        };
        let last = batch.last_offset();
        let first = batch.first_offset().unwrap_or(last);
        if first < self.end {
            return Err(Error::Data(format!(
                "{name}: byte {}: offset {first} after offset {}: the entries are not in offset order",
                batch.position(),
                self.end.saturating_sub(1)
            )));
        }
        if let Batch::V2(v) = &batch {
            if let (true, Some(pid)) = (v.is_transactional(), batch.producer_id()) {
                if v.is_control() {
                    let abort = marker_is_abort(&batch, &mut self.scratch)
                        .map_err(|e| Error::Data(format!("{name}: {e}")))?;
                    if let Some(first_offset) = self.open.remove(&pid) {
                        if abort {
                            let t = AbortedTransaction {
                                producer_id: pid,
                                first_offset,
                            };
                            self.aborted.push((t, last));
                        }
                    }
                } else {
                    self.open.entry(pid).or_insert(first);
                }
            }
        }
        let bytes = batch.as_bytes().to_vec();
        self.end = last.saturating_add(1);
        self.held_bytes = self.held_bytes.saturating_add(bytes.len());
        self.held.push_back((last, bytes));
        Ok(())
    }

    /// The first `count` held entries (`bytes` long) as one fetch from `pos`.
    fn hand_out(&mut self, pos: i64, count: usize, bytes: usize) -> Fetched {
        let mut out = Vec::new();
        let mut next_offset = pos;
        for (last, b) in self.held.drain(..count) {
            // One entry (a large batch) is handed over as it was read, not copied again.
            if out.is_empty() {
                out = b;
            } else {
                out.extend_from_slice(&b);
            }
            next_offset = last.saturating_add(1);
        }
        self.held_bytes = self.held_bytes.saturating_sub(bytes);
        // Transactions aborted in or after the range, begun before its end (as a broker lists
        // them for a fetch); those ended before it are forgotten.
        self.aborted.retain(|(_, marker)| *marker >= pos);
        let aborted = self
            .aborted
            .iter()
            .filter(|(t, _)| t.first_offset < next_offset)
            .map(|(t, _)| *t)
            .collect();
        Fetched {
            bytes: out.into(),
            aborted,
            next_offset,
            end: None,
        }
    }

    /// At the end of the stream with a transaction still open: (its first offset, the offset
    /// after the stream's last entry).
    pub(crate) fn stalled(&self) -> Option<(i64, i64)> {
        let lso = self.last_stable_offset();
        (self.eof && lso < self.end).then_some((lso, self.end))
    }
}

/// Whether a control batch's marker is an abort.
fn marker_is_abort(batch: &Batch<'_>, scratch: &mut Vec<u8>) -> krecords_codec::Result<bool> {
    let mut records = batch.records(scratch, DEFAULT_DECOMPRESS_LIMIT)?;
    let Some(first) = records.next() else {
        return Ok(false);
    };
    let key = ControlRecordKey::parse(first?.key(), batch.position())?;
    Ok(key.kind == ControlRecordType::Abort)
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;
    use krecords_codec::read::Entries;
    use krecords_log::ship::{plan, PlanOptions};
    use krecords_log::Log;
    use krecords_testkit::batches::{batch, marker};
    use proptest::prelude::*;

    /// The values a ship of these fetches would send.
    fn values(fetched: &Fetched, pos: i64, out: &mut Vec<String>) -> i64 {
        let p = plan(
            &fetched.bytes,
            pos,
            &fetched.aborted,
            &PlanOptions::default(),
        )
        .unwrap();
        let mut scratch = Vec::new();
        for b in &p.batches {
            for e in Entries::new(b.bytes.of(&fetched.bytes).unwrap()) {
                for r in e
                    .unwrap()
                    .records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
                    .unwrap()
                {
                    out.push(String::from_utf8(r.unwrap().value().unwrap().to_vec()).unwrap());
                }
            }
        }
        p.next_offset.max(fetched.next_offset).max(pos)
    }

    /// Batches, transactional batches and markers in offset order, as a log holds them.
    fn entries(ops: &[(u8, i64)]) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut open = std::collections::BTreeSet::new();
        let mut offset = 0;
        for (i, &(kind, pid)) in ops.iter().enumerate() {
            let value = format!("v{i}");
            match kind {
                0 | 1 => {
                    let pid = (kind == 1).then_some(pid);
                    if let Some(pid) = pid {
                        open.insert(pid);
                    }
                    bytes.extend(batch(offset, pid, &[&value, &value]));
                    offset += 2;
                }
                _ if open.remove(&pid) => {
                    bytes.extend(marker(offset, pid, kind == 2));
                    offset += 1;
                }
                _ => {}
            }
        }
        bytes
    }

    proptest! {
        /// A stream of entries ships what the same entries in a segment file ship: the
        /// committed records, in order, up to the first open transaction.
        #[test]
        fn a_stream_ships_what_a_segment_file_ships(
            ops in proptest::collection::vec((0u8..4, 1i64..4), 0..40),
            max_bytes in 1usize..400,
        ) {
            let bytes = entries(&ops);
            let mut from_stream = Vec::new();
            let mut s = StreamReader::new(Box::new(std::io::Cursor::new(bytes.clone())));
            let mut pos = 0;
            while let Some(f) = s.next(pos, max_bytes, "-").unwrap() {
                pos = values(&f, pos, &mut from_stream);
            }
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("t-0");
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("00000000000000000000.log"), &bytes).unwrap();
            let mut from_file = Vec::new();
            let log = Log::open_read_only(&dir).unwrap();
            let mut pos = 0;
            while pos < log.last_stable_offset() {
                let f = log
                    .fetch(pos, max_bytes, krecords_log::IsolationLevel::ReadCommitted)
                    .unwrap();
                if f.bytes.is_empty() {
                    break;
                }
                let f = Fetched {
                    bytes: f.bytes.into(),
                    aborted: f.aborted_transactions.unwrap_or_default(),
                    next_offset: f.next_offset,
                    end: None,
                };
                pos = values(&f, pos, &mut from_file);
            }
            prop_assert_eq!(from_stream, from_file);
            prop_assert_eq!(s.stalled().map(|(lso, _)| lso), (log.last_stable_offset() < log.high_watermark()).then(|| log.last_stable_offset()));
        }

        /// Any bytes: entries, an error or the end, never a panic.
        #[test]
        fn any_bytes_end_in_entries_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let mut s = StreamReader::new(Box::new(std::io::Cursor::new(bytes)));
            let mut pos = 0;
            while let Ok(Some(f)) = s.next(pos, 100, "-") {
                prop_assert!(f.next_offset > pos || f.next_offset == i64::MAX);
                pos = f.next_offset;
            }
        }
    }
}
