//! One partition of a source to Arrow record batches, between offsets, at an isolation level:
//! the SQL filters pushed down become a [`Range`] of krecords-arrow's
//! [`PartitionScan`](krecords_arrow::PartitionScan), the one reading path of every krec
//! command that makes record batches.

use crate::pushdown::Interval;
use crate::ScanCounters;
use datafusion::arrow::array::RecordBatch;
use krecords_arrow::{Options, PartitionScan, ScanError, ScanOptions};
use krecords_source::{Error, IsolationLevel, Position, Range, Sources};
use std::sync::atomic::Ordering;

/// What to read of one partition.
pub(crate) struct PartitionRead<'a> {
    pub sources: &'a Sources,
    pub index: usize,
    pub isolation: IsolationLevel,
    pub offsets: Interval,
    /// Lower end of the timestamps wanted: the read starts at the first offset at or after it.
    pub min_timestamp: Option<i64>,
    pub arrow: Options,
    pub counters: &'a ScanCounters,
}

/// The range to read of a partition: the pushed-down offsets, raised to the first offset at or
/// after the time lower bound, clamped to the partition. `None`: nothing to read.
///
/// Offsets outside the partition bound nothing (a filter `offset > 10^12` reads nothing rather
/// than failing as `--start` would); a time lower bound becomes the first offset at or after it
/// (Kafka's ListOffsets by time, the time index on disk).
fn range_of(read: &PartitionRead<'_>) -> Result<Option<Range>, Error> {
    let sources = read.sources;
    let mut offsets = read.offsets;
    if let Some(t) = read.min_timestamp {
        match sources.offset_for_time(read.index, t, read.isolation)? {
            Some(o) => offsets.lo = Some(offsets.lo.map_or(o, |l| l.max(o))),
            None => {
                // Standard input cannot look times up: read it all, the filter decides.
                if sources.watermarks(read.index)?.is_some() {
                    return Ok(None);
                }
            }
        }
    }
    // Without bounds the whole partition is read as the sources layer resolves it, so that a
    // corrupt file is an error rather than an empty partition.
    let bounded = offsets != Interval::default();
    let watermarks = if bounded {
        match sources.watermarks(read.index) {
            Ok(w) => w,
            // A log whose end is damage: the bounds go to the read unclamped, which serves
            // them when they end before the damage and fails when they reach it.
            Err(e) if e.is_damage() => None,
            Err(e) => return Err(e),
        }
    } else {
        None
    };
    // An end at or past what the isolation level shows is left to the read, which then says
    // where read_committed stopped (an open transaction), as a read without bounds does.
    let mut open_end = offsets.hi.is_none();
    if let Some(w) = watermarks {
        let end = w.readable_end(read.isolation);
        offsets.lo = Some(offsets.lo.map_or(w.log_start, |l| l.max(w.log_start)));
        open_end |= offsets.hi.is_some_and(|h| h >= end);
        offsets.hi = Some(offsets.hi.map_or(end, |h| h.min(end)));
    }
    if offsets.is_empty() {
        return Ok(None);
    }
    Ok(Some(Range {
        start: offsets.lo.map(Position::Offset),
        end: offsets.hi.filter(|_| !open_end).map(Position::Offset),
        count: None,
    }))
}

/// A scan error as the sources layer's error, which [`crate::source_error`] finds again to
/// give the exit code: corrupt and truncated entries are data errors naming the file and the
/// entry's position.
fn source_error(e: ScanError) -> Error {
    match e {
        ScanError::Source(e) => e,
        ScanError::Io { name, source } => Error::reading(&name, source),
        e @ (ScanError::Corrupt { .. } | ScanError::Truncated { .. }) => Error::Data(e.to_string()),
    }
}

/// Reads the partition, giving each record batch to `sink` until it returns `false`.
///
/// # Errors
///
/// The source cannot be read, or holds a corrupt or truncated entry (a data error naming the
/// file and position; the record batches already given stay valid).
pub(crate) fn scan_partition(
    read: PartitionRead<'_>,
    sink: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<(), Error> {
    let Some(range) = range_of(&read)? else {
        return Ok(());
    };
    let options = ScanOptions {
        range,
        isolation: read.isolation,
        batch: read.arrow,
        allow_truncated_tail: false,
    };
    let mut scan = PartitionScan::open(read.sources, read.index, &options).map_err(source_error)?;
    let counters = read.counters;
    counters.partitions.fetch_add(1, Ordering::Relaxed);
    // The counters move as the scan goes, so that a query stopped early (a LIMIT) shows what
    // it read.
    let mut files = 0;
    let mut entries = 0;
    let mut count = |scan: &PartitionScan| {
        let f = scan.files().len() as u64;
        let report = scan.report();
        let e = report.entries.saturating_add(report.control_entries);
        counters
            .files
            .fetch_add(f.saturating_sub(files), Ordering::Relaxed);
        counters
            .entries
            .fetch_add(e.saturating_sub(entries), Ordering::Relaxed);
        files = f;
        entries = e;
    };
    while let Some(batch) = scan.next() {
        count(&scan);
        if !sink(batch.map_err(source_error)?) {
            return Ok(());
        }
    }
    count(&scan);
    for (column, n) in scan.report().invalid {
        counters.add_invalid(&column, n);
    }
    counters.add_notes(scan.notes());
    Ok(())
}
