//! [`RecordBatchBuilder`]: log entries in, Arrow record batches of bounded size out; and
//! [`RecordBatches`], the same over an iterator of entries.

use crate::columns::{column_builder, ColumnBuilder, EntryInfo};
use crate::schema::{format_of, BytesFormat, Column};
use crate::Error;
use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::{Schema, SchemaRef};
use krecords_codec::read::{Batch, Record};
use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;
use std::collections::VecDeque;
use std::ops::RangeInclusive;
use std::sync::Arc;

/// The largest [`Options::max_bytes`] honoured: a record batch's byte columns then stay far
/// below Arrow's 2 GiB limit for 32-bit offsets, even with one large record on top.
pub const MAX_BATCH_BYTES: usize = 1 << 30;

/// Bytes counted per row on top of the record's own size, for the fixed-width columns.
const ROW_OVERHEAD: usize = 64;

/// What to build, and how large record batches may grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The columns to build, in output order (the projection). Empty builds none: record
    /// batches then carry a row count only (a `count(*)`).
    pub columns: Vec<Column>,
    /// How the `key` column holds its bytes.
    pub key_format: BytesFormat,
    /// How the `value` column holds its bytes.
    pub value_format: BytesFormat,
    /// Most rows per record batch (at least 1).
    pub max_rows: usize,
    /// About the most bytes per record batch: the records' own sizes plus, per row, the topic's
    /// length and a fixed amount. A single larger record makes a record batch of its own. Capped at
    /// [`MAX_BATCH_BYTES`].
    pub max_bytes: usize,
    /// The most bytes a compressed entry may decompress to.
    pub decompress_limit: usize,
    /// Only records whose offset is in this range are rows (as a consumer positioned at
    /// `start` skips the earlier records of its first batch). Default: all.
    pub offsets: RangeInclusive<i64>,
}

impl Default for Options {
    /// Every column, binary keys and values, 8192 rows or 64 MiB per record batch, all offsets.
    fn default() -> Self {
        Options {
            columns: Column::ALL.to_vec(),
            key_format: BytesFormat::Binary,
            value_format: BytesFormat::Binary,
            max_rows: 8192,
            max_bytes: 64 << 20,
            decompress_limit: DEFAULT_DECOMPRESS_LIMIT,
            offsets: i64::MIN..=i64::MAX,
        }
    }
}

/// What a [`RecordBatchBuilder`] has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Data entries read (v2 batches and v0/v1 messages).
    pub entries: u64,
    /// Control batches skipped: their records are never rows.
    pub control_entries: u64,
    /// Rows built.
    pub rows: u64,
    /// Records skipped for an offset outside [`Options::offsets`].
    pub outside_offsets: u64,
    /// Record batches completed.
    pub record_batches: u64,
    /// Per column with any: the values it could not represent and holds as null (for `key`,
    /// `value` as strings and header keys in `headers`: bytes that are not UTF-8).
    pub invalid: Vec<(String, u64)>,
}

impl Report {
    /// The invalid count of the column named `column` (0 if none).
    pub fn invalid(&self, column: &str) -> u64 {
        self.invalid
            .iter()
            .find(|(name, _)| name == column)
            .map_or(0, |&(_, n)| n)
    }
}

/// Builds Arrow record batches from the log entries of partitions.
///
/// Feed it entries with [`push`](Self::push): every record of a data entry becomes a row (those
/// inside [`Options::offsets`]); control batches are skipped. Which entries to push is the
/// caller's decision: a read_committed reader leaves out aborted transactions' batches before
/// they get here. Completed record batches of at most [`Options::max_rows`] rows and about
/// [`Options::max_bytes`] bytes wait in a queue for [`pop`](Self::pop); [`finish`](Self::finish)
/// completes the last one. Memory: the queue (as much as one entry makes), the batch in the
/// making and one decompression buffer.
///
/// Each entry's CRC and records are checked as Kafka's consumer checks them. A corrupt entry is
/// an error from `push`; the rows of its records before the bad one are kept, as a consumer
/// would have returned them, and every record batch made stays valid.
///
/// ```
/// use arrow_array::cast::AsArray;
/// use arrow_array::types::Int64Type;
/// use krecords_arrow::{Column, Options, RecordBatchBuilder};
/// use krecords_codec::read::Entries;
/// use krecords_codec::write::{NewRecord, V2Builder};
///
/// let mut b = V2Builder::new(10);
/// for v in [b"a", b"b", b"c"] {
///     b.append(&NewRecord::new(1714000000000, None, Some(v))).unwrap();
/// }
/// let bytes = b.finish().unwrap();
///
/// let options = Options { columns: vec![Column::Offset, Column::Value], max_rows: 2, ..Options::default() };
/// let mut builder = RecordBatchBuilder::new("events", 0, options);
/// for entry in Entries::new(&bytes) {
///     builder.push(&entry.unwrap()).unwrap();
/// }
/// builder.finish().unwrap();
/// let first = builder.pop().unwrap();
/// assert_eq!(first.num_rows(), 2);
/// assert_eq!(first.column(0).as_primitive::<Int64Type>().values(), &[10, 11]);
/// assert_eq!(builder.pop().unwrap().num_rows(), 1);
/// assert_eq!(builder.report().rows, 3);
/// ```
pub struct RecordBatchBuilder {
    options: Options,
    topic: String,
    partition: i32,
    /// Decompressed records of the current entry.
    scratch: Vec<u8>,
    /// Reused storage for the rows of one entry not yet given to the columns (always empty
    /// between calls; see [`reuse`]).
    rows: Vec<Record<'static>>,
    out: Output,
}

/// The batch in the making and the completed ones.
struct Output {
    schema: SchemaRef,
    columns: Vec<Box<dyn ColumnBuilder>>,
    /// Rows of the batch in the making, including those not yet given to the columns.
    rows: usize,
    /// Their estimated bytes.
    bytes: usize,
    ready: VecDeque<RecordBatch>,
    report: Report,
}

impl RecordBatchBuilder {
    /// A builder of the columns `options` asks for, for the partition `topic`/`partition`.
    pub fn new(topic: impl Into<String>, partition: i32, options: Options) -> Self {
        let columns = options
            .columns
            .iter()
            .map(|&c| column_builder(c, format_of(c, options.key_format, options.value_format)))
            .collect();
        RecordBatchBuilder {
            options,
            topic: topic.into(),
            partition,
            scratch: Vec::new(),
            rows: Vec::new(),
            out: Output::new(columns),
        }
    }

    /// Adds a column after the others (a value decoder, say). Call before the first
    /// [`push`](Self::push).
    pub fn with_column(mut self, column: Box<dyn ColumnBuilder>) -> Self {
        self.out.columns.push(column);
        self.out.schema = schema_of(&self.out.columns);
        self
    }

    /// The schema of the record batches.
    pub fn schema(&self) -> SchemaRef {
        self.out.schema.clone()
    }

    /// Sets the partition of the entries pushed from now on (rows of several partitions may
    /// share a record batch: call [`finish`](Self::finish) first to keep them apart).
    pub fn set_partition(&mut self, topic: impl Into<String>, partition: i32) {
        self.topic = topic.into();
        self.partition = partition;
    }

    /// Sets [`Options::offsets`] for the entries pushed from now on (a reader's bounds may
    /// narrow as it reads).
    pub fn set_offsets(&mut self, offsets: RangeInclusive<i64>) {
        self.options.offsets = offsets;
    }

    /// Appends the records of one entry as rows; a control batch is skipped.
    ///
    /// # Errors
    ///
    /// The entry's CRC or a record fails the consumer's checks, its codec is unknown or its
    /// records do not decompress within [`Options::decompress_limit`]. Rows of the records
    /// before the failing one are kept.
    pub fn push(&mut self, entry: &Batch<'_>) -> Result<(), Error> {
        if entry.is_control() {
            self.out.report.control_entries = self.out.report.control_entries.saturating_add(1);
            return Ok(());
        }
        self.out.report.entries = self.out.report.entries.saturating_add(1);
        let header = entry.v2_header_fields();
        let mut info = EntryInfo {
            topic: &self.topic,
            partition: self.partition,
            magic: entry.magic(),
            compression: entry.compression()?,
            timestamp_type: entry.timestamp_type(),
            producer_id: header.producer_id,
            producer_epoch: header.producer_epoch,
            transactional: header.transactional,
            first_offset: entry.first_offset().unwrap_or(-1),
        };
        let known_first = entry.first_offset().is_some();
        let records = entry.checked_records(&mut self.scratch, self.options.decompress_limit)?;
        let mut rows: Vec<Record<'_>> = reuse(std::mem::take(&mut self.rows));
        let max_rows = self.options.max_rows.max(1);
        let max_bytes = self.options.max_bytes.min(MAX_BATCH_BYTES);
        let mut result = Ok(());
        for (i, record) in records.enumerate() {
            let record = match record {
                Ok(r) => r,
                Err(e) => {
                    result = Err(e.into());
                    break;
                }
            };
            if i == 0 && !known_first {
                info.first_offset = record.offset();
            }
            if !self.options.offsets.contains(&record.offset()) {
                self.out.report.outside_offsets = self.out.report.outside_offsets.saturating_add(1);
                continue;
            }
            // The topic is counted too: its column repeats it on every row.
            let size = record_size(&record)
                .saturating_add(ROW_OVERHEAD)
                .saturating_add(self.topic.len());
            if self.out.rows > 0
                && (self.out.rows >= max_rows || self.out.bytes.saturating_add(size) > max_bytes)
            {
                self.out.append(&info, &rows);
                rows.clear();
                if let Err(e) = self.out.complete() {
                    result = Err(e);
                    break;
                }
            }
            rows.push(record);
            self.out.rows = self.out.rows.saturating_add(1);
            self.out.bytes = self.out.bytes.saturating_add(size);
        }
        self.out.append(&info, &rows);
        self.rows = reuse(rows);
        result
    }

    /// Completes the record batch in the making, if it has rows, and queues it for
    /// [`pop`](Self::pop).
    ///
    /// # Errors
    ///
    /// A column (a custom one: the built-in ones never fail) cannot make its array.
    pub fn finish(&mut self) -> Result<(), Error> {
        if self.out.rows > 0 {
            self.out.complete()?;
        }
        Ok(())
    }

    /// The oldest completed record batch, if any.
    pub fn pop(&mut self) -> Option<RecordBatch> {
        self.out.ready.pop_front()
    }

    /// What the builder has done so far, with the columns' invalid counts.
    pub fn report(&self) -> Report {
        let mut report = self.out.report.clone();
        report.invalid = self
            .out
            .columns
            .iter()
            .filter(|c| c.invalid() > 0)
            .map(|c| (c.field().name().clone(), c.invalid()))
            .collect();
        report
    }
}

impl Output {
    fn new(columns: Vec<Box<dyn ColumnBuilder>>) -> Self {
        Output {
            schema: schema_of(&columns),
            columns,
            rows: 0,
            bytes: 0,
            ready: VecDeque::new(),
            report: Report::default(),
        }
    }

    /// Gives `rows` to every column.
    fn append(&mut self, info: &EntryInfo<'_>, rows: &[Record<'_>]) {
        if rows.is_empty() {
            return;
        }
        for c in &mut self.columns {
            c.append_all(info, rows);
        }
        let n = rows.len() as u64;
        self.report.rows = self.report.rows.saturating_add(n);
    }

    /// Makes the record batch of the rows given to the columns and queues it.
    fn complete(&mut self) -> Result<(), Error> {
        let arrays = self
            .columns
            .iter_mut()
            .map(|c| c.finish())
            .collect::<Result<Vec<_>, _>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(self.rows));
        let batch = RecordBatch::try_new_with_options(self.schema.clone(), arrays, &options)?;
        self.rows = 0;
        self.bytes = 0;
        self.ready.push_back(batch);
        self.report.record_batches = self.report.record_batches.saturating_add(1);
        Ok(())
    }
}

/// The schema of `columns`' fields.
fn schema_of(columns: &[Box<dyn ColumnBuilder>]) -> SchemaRef {
    Arc::new(Schema::new(
        columns.iter().map(|c| c.field()).collect::<Vec<_>>(),
    ))
}

/// A record's size in its entry (the bytes its key, value and headers come from).
fn record_size(record: &Record<'_>) -> usize {
    match record {
        Record::V2(r) => r.size,
        Record::Legacy(r) => r.raw.len(),
    }
}

/// An empty vector of another lifetime on the same allocation: the rows of one entry borrow its
/// decompression buffer, and the storage outlives it. (Collecting an empty `IntoIter` into a
/// type of the same layout reuses the allocation.)
#[allow(clippy::unnecessary_filter_map)] // `filter` could not change the lifetime
fn reuse<'x, 'y>(mut rows: Vec<Record<'x>>) -> Vec<Record<'y>> {
    rows.clear();
    rows.into_iter().filter_map(|_| None).collect()
}

/// Record batches from an iterator of entries: [`RecordBatchBuilder`] as an iterator.
///
/// The entries are those to read, already filtered (a read_committed reader leaves aborted
/// transactions out); control batches are skipped here. After an error the record batches of the
/// rows before it come first, then the error, then nothing.
///
/// ```
/// use krecords_arrow::{Options, RecordBatches};
/// use krecords_codec::read::Entries;
/// use krecords_codec::write::{NewRecord, V2Builder};
///
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1714000000000, Some(b"k"), Some(b"v"))).unwrap();
/// let bytes = b.finish().unwrap();
/// let batches = RecordBatches::new(Entries::new(&bytes), "t", 0, Options::default());
/// let rows: usize = batches.map(|b| b.unwrap().num_rows()).sum();
/// assert_eq!(rows, 1);
/// ```
pub struct RecordBatches<I> {
    entries: I,
    builder: RecordBatchBuilder,
    /// The error to give once the record batches before it are out.
    error: Option<Error>,
    /// Whether the entries ended (or failed) and the last batch was completed.
    done: bool,
}

impl<I> RecordBatches<I> {
    /// Record batches of the entries `entries` of `topic`/`partition`.
    pub fn new(entries: I, topic: impl Into<String>, partition: i32, options: Options) -> Self {
        Self::with_builder(entries, RecordBatchBuilder::new(topic, partition, options))
    }

    /// Record batches of `entries`, made by `builder` (with custom columns, say).
    pub fn with_builder(entries: I, builder: RecordBatchBuilder) -> Self {
        RecordBatches {
            entries,
            builder,
            error: None,
            done: false,
        }
    }

    /// The builder's report so far.
    pub fn report(&self) -> Report {
        self.builder.report()
    }

    /// The schema of the record batches.
    pub fn schema(&self) -> SchemaRef {
        self.builder.schema()
    }
}

impl<'a, I, E> Iterator for RecordBatches<I>
where
    I: Iterator<Item = Result<Batch<'a>, E>>,
    E: Into<Error>,
{
    type Item = Result<RecordBatch, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(batch) = self.builder.pop() {
                return Some(Ok(batch));
            }
            if self.done {
                return self.error.take().map(Err);
            }
            let step = match self.entries.next() {
                Some(Ok(entry)) => self.builder.push(&entry),
                Some(Err(e)) => Err(e.into()),
                None => {
                    self.done = true;
                    self.builder.finish()
                }
            };
            if let Err(e) = step {
                self.done = true;
                self.error = Some(e);
                if let Err(e) = self.builder.finish() {
                    // The first error is the one to report.
                    drop(e);
                }
            }
        }
    }
}
