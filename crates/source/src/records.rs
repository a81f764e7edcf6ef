//! The records of one partition as a consumer at an isolation level receives them, between the
//! positions of a [`Range`] and at most its count: what `krec log read` prints, from a log
//! directory (through the log's own fetch and read_committed filter, as a broker serves it) or
//! from any partition a [`Reader`] reads (a live one: the broker already applied the isolation
//! level).
//!
//! Both hand each record to a callback and return where and why the read stopped before the
//! high watermark ([`Stop`]), for the caller to say.

use crate::{Error, IsolationLevel, Range, Reader, Resolved, Stop, StopCause, Watermarks};
use krecords_codec::read::Step;
use krecords_log::consumer::{consume, consume_until_error, ConsumedRecord};
use krecords_log::{Log, OffsetSpec};
use std::io;

/// Bytes asked of the log per fetch when no byte budget is given.
const PAGE_BYTES: usize = 1 << 20;

/// What a callback does with each record; an error stops the read.
pub type RecordFn<'a> = dyn FnMut(&ConsumedRecord) -> io::Result<()> + 'a;

/// Whether one record is shown ([`Window::admit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Before the range: not shown, the read goes on.
    Skip,
    /// Inside the range: shown.
    Show,
    /// At or past the end of the range, or the count is reached: the read is over.
    Done,
}

/// Which records of a read are shown: those inside a resolved range, at most its count.
#[derive(Debug, Clone)]
pub struct Window {
    range: Resolved,
    left: Option<u64>,
    isolation: IsolationLevel,
}

impl Window {
    /// The records of `range` (its `count` included) read at `isolation`.
    pub fn new(range: Resolved, isolation: IsolationLevel) -> Window {
        Window {
            left: range.count,
            range,
            isolation,
        }
    }

    /// Decides for the record at `offset` (records come in offset order); a shown record counts
    /// against the count, and the last one it allows ends the range after it.
    pub fn admit(&mut self, offset: i64) -> Admit {
        if !self.range.contains(offset) {
            return if self.range.end.is_some_and(|e| offset >= e) {
                Admit::Done
            } else {
                Admit::Skip
            };
        }
        if self.left == Some(0) {
            return Admit::Done;
        }
        if let Some(n) = self.left.as_mut() {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.range.end = Some(offset.saturating_add(1));
            }
        }
        Admit::Show
    }

    /// Whether the count is reached.
    pub fn full(&self) -> bool {
        self.left == Some(0)
    }

    /// Hands the shown records of `records` to `each`; false once the range or count is over.
    fn show(&mut self, records: &[ConsumedRecord], each: &mut RecordFn<'_>) -> Result<bool, Error> {
        for r in records {
            match self.admit(r.offset) {
                Admit::Skip => {}
                Admit::Show => each(r).map_err(|e| Error::io("", e))?,
                Admit::Done => return Ok(false),
            }
        }
        Ok(!self.full())
    }

    /// Where and why the read stopped before the high watermark of `w`, if it did: the count,
    /// the range's end, or (read_committed) the last stable offset, held by `open_txn`
    /// (producer id, first offset) when known. `None` when it read to the high watermark, or
    /// stopped for another reason (a byte budget).
    pub fn stop(&self, w: &Watermarks, open_txn: Option<(i64, i64)>) -> Option<Stop> {
        let at = self.range.end.filter(|&e| e < w.high_watermark)?;
        let cause = if self.full() {
            StopCause::Count(self.range.count.unwrap_or(0))
        } else if self.range.asked_end == Some(at) {
            StopCause::End
        } else if self.isolation == IsolationLevel::ReadCommitted {
            StopCause::LastStable
        } else {
            return None;
        };
        Some(Stop {
            at,
            cause,
            high_watermark: Some(w.high_watermark),
            open_txn,
        })
    }
}

/// Reads the records of the log directory `log` (named `name` in errors) between the positions
/// of `range` at `isolation`, handing each to `each`, as a consumer fetching from this log
/// receives them: fetch after fetch until the end (the high watermark; read_committed: the last
/// stable offset), or with `max_bytes` one fetch of at most that many bytes of entries (at
/// least one entry), as a consumer with `fetch.max.bytes` makes it.
///
/// Errors: a range the log cannot resolve is a usage error; a fetch the log refuses is
/// [`Error::Log`]; an error of `each` is [`Error::Io`].
pub fn read_log(
    log: &mut Log,
    name: &str,
    range: &Range,
    isolation: IsolationLevel,
    max_bytes: Option<usize>,
    each: &mut RecordFn<'_>,
) -> Result<Option<Stop>, Error> {
    let lso = log.last_stable_offset();
    let watermarks = Watermarks {
        log_start: log.log_start_offset(),
        high_watermark: log.high_watermark(),
        last_stable: Some(lso),
    };
    let mut time = |t| {
        let found = log.offsets(OffsetSpec::Timestamp(t));
        Ok(found
            .ok()
            .filter(|r: &krecords_log::ListOffsetsResult| r.offset >= 0)
            .map(|r| r.offset))
    };
    let resolved = match log.damage() {
        None => range.resolve(Some(&watermarks), isolation, &mut time),
        Some(d) => range
            .resolve_before(Some(&watermarks), isolation, &mut time, d)?
            .ok_or_else(|| Error::log(name, d.error())),
    }
    .map_err(|e| e.named(name))?;
    let end = resolved.end.unwrap_or(i64::MAX);
    let mut window = Window::new(resolved, isolation);
    let mut offset = resolved.start;
    let page = max_bytes.map_or(PAGE_BYTES, |m| m.max(1));
    while offset < end {
        let f = log
            .fetch(offset, page, isolation)
            .map_err(|e| Error::log(name, e))?;
        // Entries after the end are not this read's: not decoded, so damage there is not
        // reported by a read that ends before it.
        let bytes = f.bytes.get(..entries_before(&f.bytes, end)).unwrap_or(&[]);
        // The records before an entry that cannot be read are shown first, as a consumer
        // returns them before it raises the error.
        let (seen, damage) =
            consume_until_error(bytes, offset, isolation, f.aborted_transactions.as_deref());
        let more = window.show(&seen.records, each)?;
        // A read whose window closed before the entry did not reach it.
        if let (Some(e), true) = (damage, more) {
            return Err(Error::log(name, log.locate_fetched(offset, e)));
        }
        if seen.next_offset <= offset {
            break;
        }
        offset = seen.next_offset;
        if !more || max_bytes.is_some() {
            break;
        }
    }
    // A read that reached the end of a log whose end is damage did not see all it asked for.
    if let Some(d) = log.damage() {
        if offset >= end && !window.full() && !d.spares(resolved.asked_end) {
            return Err(Error::log(name, d.error()));
        }
    }
    let open_txn = log.producer_states().into_iter().find_map(|p| {
        p.current_txn_first_offset
            .filter(|&f| f == lso)
            .map(|f| (p.producer_id, f))
    });
    // The high watermark of a log whose end is damage is not known.
    Ok(window.stop(&watermarks, open_txn).map(|s| Stop {
        high_watermark: s.high_watermark.filter(|_| log.damage().is_none()),
        ..s
    }))
}

/// The length of the entries of `bytes` (whole entries, as a fetch returns them) that can hold
/// offsets below `end`: up to the first entry that starts at or after it. An entry whose
/// first offset its header does not give (a compressed v0/v1 wrapper) ends the run when its
/// last offset reaches `end`; bytes that do not frame as an entry are kept, for the decoder to
/// report.
fn entries_before(bytes: &[u8], end: i64) -> usize {
    let mut entries = krecords_codec::read::Entries::new(bytes);
    while let Some(Ok(b)) = entries.next() {
        match b.first_offset() {
            Some(first) if first >= end => return b.position(),
            None if b.last_offset() >= end => return b.position() + b.size_in_bytes(),
            _ => {}
        }
    }
    bytes.len()
}

/// Reads the records `reader` yields (opened at the isolation level and range wanted, without
/// a count: the reader's isolation already applied), at most `count` of them and with
/// `max_bytes` whole entries up to that many bytes (at least one), handing each to `each`.
///
/// Returns where and why the read stopped before the high watermark, when the partition has
/// watermarks (a live one). A truncated last entry ends the read (a fetch cut it short); a
/// corrupt entry or one that does not decode is a data error.
pub fn read_entries(
    reader: &mut Reader,
    count: Option<u64>,
    max_bytes: Option<usize>,
    each: &mut RecordFn<'_>,
) -> Result<Option<Stop>, Error> {
    let resolved = Resolved {
        count,
        ..reader.range()
    };
    let mut window = Window::new(resolved, reader.isolation());
    let mut budget = max_bytes;
    'read: while let Some(file) = reader.next_file()? {
        let name = file.name;
        let data = |e: &dyn std::fmt::Display| Error::Data(format!("{name}: {e}"));
        loop {
            let batch = match reader.next_entry().map_err(|e| Error::io("", e))? {
                Step::Entry(b) => b,
                Step::End => break,
                Step::Partial(_) => break 'read,
                Step::Error(e) => return Err(data(&e)),
            };
            let position = batch.position();
            let size = batch.size_in_bytes();
            if let Some(max) = budget.as_mut() {
                if size > *max && *max < max_bytes.unwrap_or(0) {
                    break 'read;
                }
                *max = max.saturating_sub(size);
            }
            let seen = consume(
                batch.as_bytes(),
                resolved.start,
                IsolationLevel::ReadUncommitted,
                None,
            )
            .map_err(|e| match e {
                // Positions in the entry's bytes, made positions in the file.
                krecords_log::Error::CorruptMessage {
                    at: krecords_log::Location::Read { position: at },
                    reason,
                    ..
                } => data(&format_args!(
                    "byte {}: {reason}",
                    position.saturating_add(at)
                )),
                e => data(&format_args!("the entry at byte {position}: {e}")),
            })?;
            if !window.show(&seen.records, each)? || budget == Some(0) {
                break 'read;
            }
        }
    }
    Ok(reader
        .watermarks()
        .and_then(|w| window.stop(&w, reader.stop().and_then(|s| s.open_txn))))
}
