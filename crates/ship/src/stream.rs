//! A stream of entries (standard input) read as a source, at read_committed.
//!
//! A stream is read once, front to back, with no index: the reader keeps the entries read but
//! not handed out yet, tracks each producer's open transaction from the entries themselves
//! (its first transactional batch opens it, its commit or abort marker ends it), and hands out
//! only what lies before the first open transaction — the stream's last stable offset — with
//! the aborted transactions of that range, as a broker's read_committed fetch would. What an
//! open transaction holds back stays in memory up to [`STREAM_HOLD_LIMIT`]; entries before the
//! job's committed position are skipped, so piping the same data again resumes the job.

use crate::source::Fetched;
use crate::{Error, Result};
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
                    self.held_bytes -= b.len();
                }
            }
            let lso = self.last_stable_offset();
            let (mut count, mut bytes) = (0usize, 0usize);
            for (last, b) in &self.held {
                if *last >= lso || (count > 0 && bytes + b.len() > max_bytes) {
                    break;
                }
                count += 1;
                bytes += b.len();
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
                self.end - 1
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
        self.end = last + 1;
        self.held_bytes += bytes.len();
        self.held.push_back((last, bytes));
        Ok(())
    }

    /// The first `count` held entries (`bytes` long) as one fetch from `pos`.
    fn hand_out(&mut self, pos: i64, count: usize, bytes: usize) -> Fetched {
        let mut out = Vec::with_capacity(bytes);
        let mut next_offset = pos;
        for (last, b) in self.held.drain(..count) {
            out.extend_from_slice(&b);
            next_offset = last + 1;
        }
        self.held_bytes -= bytes;
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
            bytes: out,
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
