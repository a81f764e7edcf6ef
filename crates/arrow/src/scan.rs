//! Scans: any krec source ([`krecords_source::Sources`]) between two positions at an isolation
//! level, as a bounded-memory stream of Arrow record batches of one fixed schema.
//!
//! [`PartitionScan`] reads one partition ([`Sources::read`]: offset and time positions are
//! resolved by the source, with the offset and time indexes of a partition directory or
//! ListOffsets on a live topic, and the segments before the start are never opened; the read
//! stops at the first entry at or after the end). At read_committed the reader leaves the
//! batches of aborted transactions out ([`krecords_codec::txn::ReadCommitted`]) and the builder
//! skips control batches, so the rows are what a consumer sees. Records of the first and last
//! entries outside the range are not rows. [`Scan`] chains the partitions of a [`Sources`].
//!
//! Memory: the reader's window buffer (the largest entry), one decompression buffer, the record
//! batch in the making and at most one entry's worth of completed ones.

use crate::builder::{Options, RecordBatchBuilder, Report};
use crate::Error as ArrowError;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use krecords_codec::read::Step;
use krecords_source::{
    ErrorClass, FileInfo, IsolationLevel, LeftOut, ProgressFn, Range, ReadOptions, Reader, Resolved,
    Sources, Stop, StopCause, Watermarks,
};
use std::collections::VecDeque;

/// What a scan reads and builds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOptions {
    /// The positions to read between (offsets, times, `earliest`, `latest`, a count).
    pub range: Range,
    /// read_committed (the default: what a consumer sees, unlike the sources layer's
    /// [`ReadOptions`], which defaults to read_uncommitted as the inspecting commands read) or
    /// read_uncommitted (every data record the log holds, aborted ones included; control
    /// batches are never rows).
    pub isolation: IsolationLevel,
    /// The projection, key and value formats and record batch sizes. Its `offsets` are set by
    /// the scan from the range.
    pub batch: Options,
    /// A truncated last entry (a log being written) ends the partition's scan cleanly instead
    /// of being an error ([`ScanError::Truncated`]).
    pub allow_truncated_tail: bool,
}

impl Default for ScanOptions {
    /// The whole partition, read_committed, every column as binary, truncated tails refused.
    fn default() -> Self {
        ScanOptions {
            range: Range::default(),
            isolation: IsolationLevel::ReadCommitted,
            batch: Options::default(),
            allow_truncated_tail: false,
        }
    }
}

impl ScanOptions {
    /// The sources layer's read options of this scan.
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            range: self.range,
            isolation: self.isolation,
            max_bytes: None,
            max_decompressed_bytes: self.batch.decompress_limit,
            counted: None,
            // Rows are what a consumer is served: a directory is read as its log.
            as_log: true,
        }
    }
}

/// Why a scan failed.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The source could not be opened or read (usage, I/O, broker errors), as the sources
    /// layer says.
    #[error(transparent)]
    Source(#[from] krecords_source::Error),
    /// An entry is corrupt: its file (or live partition), the position of the entry, why.
    #[error("{}", corrupt_message(name, *position, source))]
    Corrupt {
        /// The file or live partition.
        name: String,
        /// The byte position of the entry in it.
        position: usize,
        /// Why.
        source: ArrowError,
    },
    /// The input ends inside an entry (see [`ScanOptions::allow_truncated_tail`]).
    #[error("{name}: truncated entry at byte {position} ({bytes} bytes present)")]
    Truncated {
        /// The file or live partition.
        name: String,
        /// The byte position of the entry in it.
        position: usize,
        /// The bytes of it present.
        bytes: usize,
    },
    /// Reading the input failed (the file named once: the damage a reader passes on names it
    /// already).
    #[error("{}", krecords_source::named_once(name, &source.to_string()))]
    Io {
        /// The file or live partition.
        name: String,
        /// The error.
        source: std::io::Error,
    },
}

/// `NAME: corrupt entry at byte P: WHY`, the position said once when the codec's error already
/// says it (`entry at byte P: crc mismatch ...`).
fn corrupt_message(name: &str, position: usize, source: &ArrowError) -> String {
    let why = source.to_string();
    let at = format!("entry at byte {position}: ");
    match why.strip_prefix(&at) {
        Some(rest) => format!("{name}: corrupt entry at byte {position}: {rest}"),
        None => format!("{name}: corrupt entry at byte {position}: {why}"),
    }
}

impl ScanError {
    /// The class of the error: corrupt or truncated data is [`ErrorClass::Data`] (exit 1).
    pub fn class(&self) -> ErrorClass {
        match self {
            ScanError::Source(e) => e.class(),
            ScanError::Corrupt { .. } | ScanError::Truncated { .. } => ErrorClass::Data,
            ScanError::Io { source, .. } => krecords_source::classify_io(source),
        }
    }

    /// The exit code of a command that fails with it.
    pub fn exit_code(&self) -> u8 {
        self.class().exit_code()
    }
}

/// One partition of a source as record batches (an iterator of `Result<RecordBatch,
/// ScanError>`; after an error, the record batches of the rows before it come first, then the
/// error, then nothing).
pub struct PartitionScan {
    reader: Reader,
    builder: RecordBatchBuilder,
    topic: String,
    partition: i32,
    allow_truncated_tail: bool,
    files: Vec<FileInfo>,
    /// The current file's name, while one is open.
    current: Option<String>,
    bytes_read: u64,
    last_offset: Option<i64>,
    error: Option<ScanError>,
    done: bool,
    /// See [`PartitionScan::notes`].
    notes: Vec<String>,
}

impl std::fmt::Debug for PartitionScan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionScan")
            .field("reader", &self.reader)
            .field("topic", &self.topic)
            .field("partition", &self.partition)
            .finish_non_exhaustive()
    }
}

impl PartitionScan {
    /// Opens partition `index` of `sources` (see [`Sources::read`]). Rows carry the partition's
    /// topic and number; when the source does not know them (a plain file), the topic is empty
    /// and the partition -1.
    ///
    /// # Errors
    ///
    /// As [`Sources::read`]: a position outside the partition, an empty range given
    /// explicitly, read_committed on standard input, a log or broker that cannot be read.
    pub fn open(
        sources: &Sources,
        index: usize,
        options: &ScanOptions,
    ) -> Result<PartitionScan, ScanError> {
        let reader = sources.read(index, &options.read_options())?;
        let part = sources.partitions.get(index);
        let topic = part.and_then(|p| p.topic.clone()).unwrap_or_default();
        let partition = part.and_then(|p| p.partition).unwrap_or(-1);
        let builder = RecordBatchBuilder::new(topic.clone(), partition, options.batch.clone());
        Ok(PartitionScan {
            reader,
            builder,
            topic,
            partition,
            allow_truncated_tail: options.allow_truncated_tail,
            files: Vec::new(),
            current: None,
            bytes_read: 0,
            last_offset: None,
            error: None,
            done: false,
            notes: Vec::new(),
        })
    }

    /// Reports the reader's progress (files started, bytes read, live fetches) to `f`.
    pub fn set_progress(&mut self, f: ProgressFn) {
        self.reader.set_progress(f);
    }

    /// The schema of the record batches (the same for every partition with the same options).
    pub fn schema(&self) -> SchemaRef {
        self.builder.schema()
    }

    /// The topic of the rows.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The partition number of the rows.
    pub fn partition(&self) -> i32 {
        self.partition
    }

    /// The files (or live partition) opened so far, in order: a narrow range opens only the
    /// segments that hold it.
    pub fn files(&self) -> &[FileInfo] {
        &self.files
    }

    /// The offsets read, as the source resolved the range.
    pub fn range(&self) -> Resolved {
        self.reader.range()
    }

    /// The partition's watermarks, when the source knows them and the read needed them.
    pub fn watermarks(&self) -> Option<Watermarks> {
        self.reader.watermarks()
    }

    /// Bytes of the entries read so far (their size in the log).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The offset after the last entry read (control batches included, records past the end
    /// of the range not), `None` before the first: where a later scan continues.
    pub fn next_offset(&self) -> Option<i64> {
        let next = self.last_offset?.saturating_add(1);
        Some(match self.reader.range().end {
            Some(end) => next.min(end),
            None => next,
        })
    }

    /// What the builder has done so far (rows, entries, control batches, invalid strings).
    pub fn report(&self) -> Report {
        self.builder.report()
    }

    /// Where and why the read stopped before the high watermark (see [`Reader::stop`]).
    pub fn stop(&self) -> Option<Stop> {
        self.reader.stop()
    }

    /// What a user should know of the read once it has ended, one line each, for a command
    /// to show: a torn tail at the end of a partition directory's log that it passed over
    /// ([`Reader::notes`]), and a stop at the last stable offset (read_committed: an open
    /// transaction holds the rest back; [`Reader::stop`]). Empty before the end.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Takes the reader's notes and a stop at the last stable offset into `notes`.
    fn take_notes(&mut self) {
        self.notes.extend_from_slice(self.reader.notes());
        if let Some(stop) = self.reader.stop() {
            if stop.cause == StopCause::LastStable {
                self.notes.push(format!("{}: {stop}", self.reader.name()));
            }
        }
    }

    /// Reads one step: opens a file or pushes one entry. `Ok(false)` at the end.
    fn step(&mut self) -> Result<bool, ScanError> {
        let Some(name) = self.current.clone() else {
            return match self.reader.next_file()? {
                Some(info) => {
                    self.current = Some(info.name.clone());
                    self.files.push(info);
                    Ok(true)
                }
                None => Ok(false),
            };
        };
        let position = self.reader.position();
        let io = |source| ScanError::Io {
            name: name.clone(),
            source,
        };
        let (step, bounds) = self.reader.next_with_bounds().map_err(io)?;
        match step {
            Step::Entry(b) => {
                let start = bounds.start.unwrap_or(i64::MIN);
                let end = bounds.end.map_or(i64::MAX, |e| e.saturating_sub(1));
                self.builder.set_offsets(start..=end);
                self.bytes_read = self.bytes_read.saturating_add(b.size_in_bytes() as u64);
                let last = b.last_offset();
                // Offsets only go up in a partition: an entry that does not follow the last
                // one (its offset field damaged; no CRC covers a v2 batch's base offset) would
                // put rows under offsets the partition does not hold.
                let first = b.first_offset().unwrap_or(last);
                if let Some(previous) = self.last_offset.filter(|&p| first <= p) {
                    let reason = format!(
                        "the entry holds offsets {first}..={last}, not after the previous \
                         entry's last offset {previous}: its offset field is damaged (`krec \
                         verify` lists the damage, `krec salvage` keeps every intact entry)"
                    );
                    return Err(ScanError::Corrupt {
                        name,
                        position: b.position(),
                        source: krecords_codec::Error::InvalidRecord {
                            at: b.position(),
                            reason,
                        }
                        .into(),
                    });
                }
                self.last_offset = Some(last);
                self.builder.push(&b).map_err(|source| ScanError::Corrupt {
                    name: name.clone(),
                    position: b.position(),
                    source,
                })?;
            }
            Step::End => self.current = None,
            Step::Error(e) => {
                return Err(ScanError::Corrupt {
                    name,
                    position,
                    source: e.into(),
                })
            }
            Step::Partial(p) => {
                if !self.allow_truncated_tail {
                    return Err(ScanError::Truncated {
                        name,
                        position: p.position,
                        bytes: p.bytes,
                    });
                }
                self.current = None;
            }
        }
        Ok(true)
    }
}

impl Iterator for PartitionScan {
    type Item = Result<RecordBatch, ScanError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(batch) = self.builder.pop() {
                return Some(Ok(batch));
            }
            if self.done {
                return self.error.take().map(Err);
            }
            match self.step() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    self.take_notes();
                    if let Err(e) = self.builder.finish() {
                        self.error = Some(ScanError::Corrupt {
                            name: self.reader.name().to_owned(),
                            position: self.reader.position(),
                            source: e,
                        });
                    }
                }
                Err(e) => {
                    self.done = true;
                    self.error = Some(e);
                    // The first error is the one to report; the rows before it come out.
                    drop(self.builder.finish());
                }
            }
        }
    }
}

/// Several partitions of a [`Sources`], one after another, as record batches of one schema
/// (each record batch holds rows of one partition).
pub struct Scan<'a> {
    sources: &'a Sources,
    pending: VecDeque<usize>,
    options: ScanOptions,
    schema: SchemaRef,
    current: Option<PartitionScan>,
    totals: Totals,
    done: bool,
    /// The partitions left out because a position is outside them.
    outside: LeftOut,
}

/// What a [`Scan`] has read so far, over its partitions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    /// Partitions opened.
    pub partitions: u64,
    /// Files (or live partitions) opened.
    pub files: u64,
    /// Bytes of the entries read.
    pub bytes_read: u64,
    /// Rows built.
    pub rows: u64,
    /// Record batches made.
    pub record_batches: u64,
    /// Per column with any: the values it could not represent and holds as null (bytes that
    /// are not UTF-8 in a `string` key or value, say), as [`Report::invalid`](crate::Report).
    pub invalid: Vec<(String, u64)>,
    /// What the reads passed over without an error, for a command to show (see
    /// [`PartitionScan::notes`]).
    pub notes: Vec<String>,
}

impl std::fmt::Debug for Scan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scan")
            .field("pending", &self.pending)
            .field("options", &self.options)
            .field("totals", &self.totals)
            .finish_non_exhaustive()
    }
}

impl<'a> Scan<'a> {
    /// Every partition of `sources`, in order.
    pub fn new(sources: &'a Sources, options: ScanOptions) -> Scan<'a> {
        Self::of(sources, 0..sources.partitions.len(), options)
    }

    /// The partitions of `sources` at `indices` (a filter on `partition` pushed down: the
    /// others are never opened).
    pub fn of(
        sources: &'a Sources,
        indices: impl IntoIterator<Item = usize>,
        options: ScanOptions,
    ) -> Scan<'a> {
        let schema = scan_schema(&options);
        let pending: VecDeque<usize> = indices.into_iter().collect();
        Scan {
            sources,
            outside: LeftOut::new(sources, pending.len()),
            pending,
            options,
            schema,
            current: None,
            totals: Totals::default(),
            done: false,
        }
    }

    /// The schema of every record batch.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// What has been read so far (the current partition included).
    pub fn totals(&self) -> Totals {
        let mut t = self.totals.clone();
        if let Some(c) = &self.current {
            add(&mut t, c);
        }
        t
    }

    /// The partition being read.
    pub fn current(&self) -> Option<&PartitionScan> {
        self.current.as_ref()
    }
}

fn add(t: &mut Totals, c: &PartitionScan) {
    let r = c.report();
    t.partitions = t.partitions.saturating_add(1);
    t.files = t.files.saturating_add(c.files().len() as u64);
    t.bytes_read = t.bytes_read.saturating_add(c.bytes_read());
    t.rows = t.rows.saturating_add(r.rows);
    t.record_batches = t.record_batches.saturating_add(r.record_batches);
    t.notes.extend_from_slice(c.notes());
    for (column, n) in r.invalid {
        match t.invalid.iter_mut().find(|(c, _)| *c == column) {
            Some((_, sum)) => *sum = sum.saturating_add(n),
            None => t.invalid.push((column, n)),
        }
    }
}

/// The schema of the record batches of a scan with `options` (known before any data).
pub fn scan_schema(options: &ScanOptions) -> SchemaRef {
    RecordBatchBuilder::new("", 0, options.batch.clone()).schema()
}

impl Iterator for Scan<'_> {
    type Item = Result<RecordBatch, ScanError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done {
                return None;
            }
            if let Some(c) = self.current.as_mut() {
                match c.next() {
                    Some(Ok(b)) => return Some(Ok(b)),
                    Some(Err(e)) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                    None => {
                        if let Some(c) = self.current.take() {
                            add(&mut self.totals, &c);
                        }
                    }
                }
            }
            let Some(index) = self.pending.pop_front() else {
                self.done = true;
                // Every partition was left out: the range is outside all of them.
                return self.outside.finish().err().map(|e| Err(e.into()));
            };
            let opened = match PartitionScan::open(self.sources, index, &self.options) {
                Ok(c) => Ok(c),
                // A position outside one of several partitions (past its end, a time window
                // it holds nothing of) leaves that partition out with a note, as every krec
                // command that reads several does.
                Err(ScanError::Source(e)) => match self.outside.leave_out(e) {
                    Ok(note) => {
                        self.totals.notes.push(note);
                        continue;
                    }
                    Err(e) => Err(e.into()),
                },
                Err(e) => Err(e),
            };
            match opened {
                Ok(c) => self.current = Some(c),
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
