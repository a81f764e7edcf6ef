//! One partition of a source to Arrow record batches, between offsets, at an isolation level:
//! the sources layer's [`Reader`](krecords_source::Reader) feeding krecords-arrow's
//! [`RecordBatchBuilder`].

use crate::pushdown::Interval;
use crate::ScanCounters;
use datafusion::arrow::array::RecordBatch;
use krecords_arrow::{Options, RecordBatchBuilder};
use krecords_codec::read::Step;
use krecords_source::{Error, IsolationLevel, Position, Range, ReadOptions, Sources};
use std::sync::atomic::Ordering;

/// What to read of one partition.
pub(crate) struct PartitionScan<'a> {
    pub sources: &'a Sources,
    pub index: usize,
    pub topic: String,
    pub partition: i32,
    pub isolation: IsolationLevel,
    pub offsets: Interval,
    /// Lower end of the timestamps wanted: the read starts at the first offset at or after it.
    pub min_timestamp: Option<i64>,
    pub arrow: Options,
    pub counters: &'a ScanCounters,
}

/// Reads the partition, giving each record batch to `sink` until it returns `false`.
///
/// Offsets outside the partition bound nothing (a filter `offset > 10^12` reads nothing rather
/// than failing as `--start` would); a time lower bound becomes the first offset at or after it
/// (Kafka's ListOffsets by time, the time index on disk).
///
/// # Errors
///
/// The source cannot be read, or holds a corrupt or truncated entry (a data error naming the
/// file and position; the record batches already given stay valid).
pub(crate) fn scan_partition(
    scan: PartitionScan<'_>,
    sink: &mut dyn FnMut(RecordBatch) -> bool,
) -> Result<(), Error> {
    let sources = scan.sources;
    let mut offsets = scan.offsets;
    if let Some(t) = scan.min_timestamp {
        match sources.offset_for_time(scan.index, t, scan.isolation)? {
            Some(o) => offsets.lo = Some(offsets.lo.map_or(o, |l| l.max(o))),
            None => {
                // Standard input cannot look times up: read it all, the filter decides.
                if sources.watermarks(scan.index)?.is_some() {
                    return Ok(());
                }
            }
        }
    }
    // Without bounds the whole partition is read as the sources layer resolves it, so that a
    // corrupt file is an error rather than an empty partition.
    let bounded = offsets != Interval::default();
    let watermarks = if bounded {
        sources.watermarks(scan.index)?
    } else {
        None
    };
    if let Some(w) = watermarks {
        let end = w.readable_end(scan.isolation);
        offsets.lo = Some(offsets.lo.map_or(w.log_start, |l| l.max(w.log_start)));
        offsets.hi = Some(offsets.hi.map_or(end, |h| h.min(end)));
    }
    if offsets.is_empty() {
        return Ok(());
    }
    let range = Range {
        start: offsets.lo.map(Position::Offset),
        end: offsets.hi.map(Position::Offset),
        count: None,
    };
    let options = ReadOptions {
        range,
        isolation: scan.isolation,
        max_decompressed_bytes: scan.arrow.decompress_limit,
        ..ReadOptions::default()
    };
    let mut reader = sources.read(scan.index, &options)?;
    let resolved = reader.range();
    let mut arrow = scan.arrow;
    arrow.offsets = resolved.start..=resolved.end.map_or(i64::MAX, |e| e.saturating_sub(1));
    let mut builder = RecordBatchBuilder::new(scan.topic, scan.partition, arrow);
    let name = reader.name().to_string();
    scan.counters.partitions.fetch_add(1, Ordering::Relaxed);
    while let Some(file) = reader.next_file()? {
        scan.counters.files.fetch_add(1, Ordering::Relaxed);
        loop {
            let position = reader.position();
            let step = reader
                .next_entry()
                .map_err(|e| Error::io(format!("cannot read {}", file.name), e))?;
            match step {
                Step::Entry(entry) => {
                    scan.counters.entries.fetch_add(1, Ordering::Relaxed);
                    // The codec's error names the entry's position.
                    builder
                        .push(&entry)
                        .map_err(|e| Error::Data(format!("{}: {e}", file.name)))?;
                    while let Some(batch) = builder.pop() {
                        if !sink(batch) {
                            return Ok(());
                        }
                    }
                }
                Step::End => break,
                Step::Error(e) => {
                    return Err(Error::Data(format!(
                        "{}: corrupt entry at byte {position}: {e}",
                        file.name
                    )))
                }
                Step::Partial(_) => {
                    return Err(Error::Data(format!(
                        "{}: truncated entry at byte {position}: the input ends inside it",
                        file.name
                    )))
                }
            }
        }
    }
    builder
        .finish()
        .map_err(|e| Error::Data(format!("{name}: {e}")))?;
    let invalid = builder.report().invalid;
    while let Some(batch) = builder.pop() {
        if !sink(batch) {
            return Ok(());
        }
    }
    for (column, n) in invalid {
        scan.counters.add_invalid(&column, n);
    }
    Ok(())
}
