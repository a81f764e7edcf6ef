//! Kafka data as a dataset: the partitions of any krec source ([`krecords_source::Sources`])
//! written as Parquet (or Arrow IPC) files in a Hive layout, incrementally and exactly once.
//!
//! Layout: `DIR/topic=T/partition=P/<20-digit first offset>-<20-digit last offset>.parquet`
//! (`.arrow` for Arrow IPC files), each file the rows of offsets `first..=last` of its
//! partition in the schema of [`krecords_arrow`] (every column, read_committed by default).
//!
//! # The exactly-once rule
//!
//! A file is written under a hidden temporary name (`.<first>.parquet.krec-tmp`, which
//! readers skip), synced, renamed to its final name and the directory synced: a reader never
//! sees a torn file, and a file with a final name holds every row of its offset range. An
//! export of a partition starts after the largest last offset of the files already there
//! (and removes leftover temporary files first), so a run killed at any moment and run again
//! leaves every record exactly once. One export at a time per directory (a lock file,
//! `DIR/.krec-export.lock`, released by the system when the process ends).
//!
//! ```
//! use krecords_export::{ExportOptions, Exporter};
//! use krecords_source::Sources;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let part = dir.path().join("events-0");
//! # std::fs::create_dir(&part)?;
//! # let mut b = krecords_codec::write::V2Builder::new(0);
//! # b.append(&krecords_codec::write::NewRecord::new(1_714_000_000_000, None, Some(b"v")))?;
//! # std::fs::write(part.join("00000000000000000000.log"), b.finish()?)?;
//! let out = dir.path().join("dataset");
//! let sources = Sources::open(&[part.clone()], &mut || unreachable!())?;
//! let mut exporter = Exporter::open(ExportOptions::new(&out), &[part])?;
//! for index in 0..sources.partitions.len() {
//!     exporter.export(&sources, index, &mut |_| {})?;
//! }
//! exporter.finish(&mut |_| {})?;
//! assert_eq!(exporter.summary().records, 1);
//! assert!(out.join("topic=events/partition=0/00000000000000000000-00000000000000000000.parquet").exists());
//! # Ok(())
//! # }
//! ```

#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod writer;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::RecordBatch;
use krecords_arrow::{BytesFormat, Column, Options, PartitionScan, ScanError, ScanOptions};
use krecords_source::{ErrorClass, IsolationLevel, Position, Range, Sources};
use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;
use writer::OpenFile;

/// The suffix of temporary files.
pub const TMP_SUFFIX: &str = ".krec-tmp";
/// The lock file in the output directory.
pub const LOCK_FILE: &str = ".krec-export.lock";

/// The file format of a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Parquet, zstd-compressed.
    #[default]
    Parquet,
    /// Arrow IPC files.
    Arrow,
}

impl Format {
    /// The file extension (`parquet`, `arrow`).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Arrow => "arrow",
        }
    }
}

/// How to export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// The dataset directory (created if missing).
    pub output: PathBuf,
    /// Parquet or Arrow IPC.
    pub format: Format,
    /// read_committed (default) or read_uncommitted.
    pub isolation: IsolationLevel,
    /// How keys are stored.
    pub key_format: BytesFormat,
    /// How values are stored.
    pub value_format: BytesFormat,
    /// A file is completed once it holds about this many bytes (default 256 MiB).
    pub roll_bytes: u64,
    /// A file kept open between passes ([`Exporter::export_open`]) is completed once it is this
    /// old ([`Exporter::roll_due`]).
    pub roll_after: Option<Duration>,
    /// A Parquet row group is completed once its encoded data reaches about this many bytes
    /// (default 64 MiB; also at most 1 Mi rows).
    pub row_group_bytes: usize,
    /// A truncated last entry (a log being written) ends the pass instead of being an error.
    pub allow_truncated_tail: bool,
    /// The positions to export between (`--start`, `--end`; its `count` is not used), resolved
    /// per partition as every krec command resolves them. A partition's export starts at the
    /// later of the start and the dataset's end (the offset after its files' last), so no
    /// offset is ever written twice. The start is resolved to an offset once per partition in
    /// a run (at the first pass it is inside the partition) and that offset stays the floor of
    /// every later `--follow` pass, whether or not a pass wrote anything. Default: everything.
    pub range: Range,
}

impl ExportOptions {
    /// Defaults into `output`: Parquet, read_committed, binary keys and values.
    pub fn new(output: impl Into<PathBuf>) -> ExportOptions {
        ExportOptions {
            output: output.into(),
            format: Format::Parquet,
            isolation: IsolationLevel::ReadCommitted,
            key_format: BytesFormat::Binary,
            value_format: BytesFormat::Binary,
            roll_bytes: 256 << 20,
            roll_after: None,
            row_group_bytes: 64 << 20,
            allow_truncated_tail: false,
            range: Range::default(),
        }
    }
}

/// What an export did, over all its partitions.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Partitions read (each once, however many `--follow` passes read it).
    pub partitions: u64,
    /// Files completed.
    pub files: u64,
    /// Records (rows) written into completed files: the records the dataset gained.
    pub records: u64,
    /// Records read into a file that could not be completed (a write error, a full disk):
    /// not in the dataset, and not counted in [`records`](Summary::records).
    pub records_not_written: u64,
    /// Bytes of the log entries read into completed files (and of those, such as control
    /// batches, that make no rows).
    pub bytes_in: u64,
    /// Bytes of the files completed.
    pub bytes_out: u64,
    /// Leftover temporary files of an earlier run removed.
    pub removed_temporary: u64,
    /// Records the source no longer has that the dataset does not hold either (the
    /// partition's log start moved past where the dataset ends), by partition.
    pub gaps: Vec<Gap>,
    /// Partitions the range asked for is outside of (a start past their end, a time window
    /// they hold nothing of), one line each: nothing of them was exported.
    pub outside: Vec<String>,
    /// Per column with any, the values written as null because they could not be
    /// represented: keys and values that are not UTF-8 with `--key-format`/`--value-format
    /// string`, header keys that are not UTF-8.
    pub invalid: std::collections::BTreeMap<String, u64>,
    /// What the reads passed over without an error, one line each: a torn tail at the end of a
    /// partition directory's log, which is not part of the log Kafka serves (see
    /// `krecords_source::Reader::notes`). A `--follow` of a log being written has none.
    pub notes: Vec<String>,
}

impl Summary {
    /// Writes the summary as `krec export` prints it: a line of counts, a line for removed
    /// temporary files, a line per gap; `output` is the dataset's directory.
    pub fn write_text(&self, output: &Path, out: &mut impl std::io::Write) -> std::io::Result<()> {
        writeln!(
            out,
            "exported {} records of {} partitions into {} files in {} ({} bytes in, {} bytes out)",
            self.records,
            self.partitions,
            self.files,
            output.display(),
            self.bytes_in,
            self.bytes_out
        )?;
        if self.records_not_written > 0 {
            writeln!(
                out,
                "{} records read were not written: their file could not be completed",
                self.records_not_written
            )?;
        }
        if self.removed_temporary > 0 {
            writeln!(
                out,
                "removed {} temporary files of an interrupted run",
                self.removed_temporary
            )?;
        }
        for g in &self.gaps {
            writeln!(
                out,
                "topic {} partition {}: offsets {}..{} are no longer in the source (log start moved past the dataset's end)",
                g.topic, g.partition, g.from, g.to
            )?;
        }
        for o in &self.outside {
            writeln!(out, "{o}; nothing of it is in the range")?;
        }
        for (column, n) in &self.invalid {
            writeln!(
                out,
                "{n} {column} value(s) were not UTF-8 and are null in the dataset"
            )?;
        }
        for n in &self.notes {
            writeln!(out, "{n}")?;
        }
        Ok(())
    }

    /// The summary as `krec export --format-report json` prints it: its fields and
    /// `"output"`, the dataset's directory.
    pub fn to_json(&self, output: &Path) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "output".into(),
                serde_json::Value::String(output.display().to_string()),
            );
        }
        v
    }
}

/// Offsets a partition no longer has between the dataset's end and its log start.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Gap {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The first missing offset.
    pub from: i64,
    /// The log start offset (exclusive end of the gap).
    pub to: i64,
}

/// What an export reports as it goes.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A record batch was written to a partition's open file.
    Batch {
        /// `topic=T/partition=P`.
        partition: &'a str,
        /// Rows of the batch.
        rows: usize,
        /// Bytes of log entries read by the export so far.
        bytes_in: u64,
    },
    /// A file was completed.
    File {
        /// Its path.
        path: &'a Path,
        /// Its rows.
        records: u64,
        /// Its size.
        bytes: u64,
    },
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Reading the source failed (corrupt data is [`ErrorClass::Data`]).
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// The source's partitions cannot be listed or read.
    #[error(transparent)]
    Source(#[from] krecords_source::Error),
    /// A partition without a known topic and partition number (a plain file).
    #[error("{0}: its topic and partition are unknown (name a TOPIC-N partition directory, a log.dirs root or a kafka:// URL)")]
    Unnamed(String),
    /// The output cannot be written.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// Another export holds the output directory.
    #[error("{0}: another krec export is writing to this directory")]
    Locked(PathBuf),
    /// The output already holds files of another format or schema than this export writes
    /// (a dataset is read as one table: its files must agree).
    #[error("{0}")]
    Mismatch(String),
    /// The output directory is a local source directory (a partition directory, a log.dirs
    /// root) or inside one: its files would land in the data the export reads.
    #[error(
        "the output directory {output} is inside the source {dir}: its files would land in \
         the data it reads (a broker would take them for its own); export into another \
         directory"
    )]
    InsideSource {
        /// The output directory, as given.
        output: PathBuf,
        /// The source directory, as given.
        dir: PathBuf,
    },
    /// Writing Parquet or Arrow failed.
    #[error("{what}: {message}")]
    Write {
        /// The file.
        what: String,
        /// Why.
        message: String,
    },
}

impl ExportError {
    /// The class of the error (exit 1 for data problems, 2 otherwise).
    pub fn class(&self) -> ErrorClass {
        match self {
            ExportError::Scan(e) => e.class(),
            ExportError::Source(e) => e.class(),
            ExportError::Unnamed(_)
            | ExportError::Locked(_)
            | ExportError::Mismatch(_)
            | ExportError::InsideSource { .. } => ErrorClass::Usage,
            ExportError::Io { .. } | ExportError::Write { .. } => ErrorClass::Io,
        }
    }

    /// The exit code of a command that fails with it.
    pub fn exit_code(&self) -> u8 {
        self.class().exit_code()
    }
}

pub(crate) fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ExportError {
    let what = what.into();
    move |source| ExportError::Io { what, source }
}

/// A partition [`Exporter::export_all`] could not export.
#[derive(Debug)]
pub struct PartitionError {
    /// Its index in the sources.
    pub index: usize,
    /// Its name ([`krecords_source::Partition::name`]; empty if the index has no partition).
    pub partition: String,
    /// Why.
    pub error: ExportError,
}

impl PartitionError {
    fn new(sources: &Sources, index: usize, error: ExportError) -> PartitionError {
        PartitionError {
            index,
            partition: partition_name(sources, index).to_owned(),
            error,
        }
    }
}

/// Writes partitions into a dataset directory (see the [crate] docs for the rule).
#[derive(Debug)]
pub struct Exporter {
    options: ExportOptions,
    _lock: File,
    summary: Summary,
    /// Files kept open between passes, by partition directory.
    open: HashMap<PathBuf, OpenFile>,
    /// The partition directories passed over once in this run (a partition counts once in
    /// the summary, a range outside it is reported once).
    passed: HashSet<PathBuf>,
    /// The offset [`ExportOptions::range`]'s start resolved to, by partition directory, once
    /// it has: every later pass starts at it or later, whether or not a file was written, and
    /// a time or `-N` is not resolved again against a partition that has grown since.
    starts: HashMap<PathBuf, i64>,
}

impl Exporter {
    /// Creates the output directory if needed and takes its lock. `sources` are the sources
    /// the export reads, as given to [`Sources::open`]: an output directory that is one of
    /// their local directories (a partition directory, a log.dirs root) or inside one, links
    /// resolved, is refused before anything is created.
    ///
    /// # Errors
    ///
    /// The output is inside a source ([`ExportError::InsideSource`]), is not a directory or
    /// cannot be created, another export holds it, or it holds files this export's options
    /// did not write ([`ExportError::Mismatch`]).
    pub fn open(options: ExportOptions, sources: &[PathBuf]) -> Result<Exporter, ExportError> {
        let out = &options.output;
        if let Some(dir) = krecords_source::log::convert::source_holding(out, sources) {
            return Err(ExportError::InsideSource {
                output: out.clone(),
                dir: dir.to_path_buf(),
            });
        }
        if out.exists() && !out.is_dir() {
            return Err(io_err(format!("cannot export into {}", out.display()))(
                std::io::Error::new(
                    std::io::ErrorKind::NotADirectory,
                    "not a directory (a dataset is a directory of topic=T/partition=P folders)",
                ),
            ));
        }
        std::fs::create_dir_all(out).map_err(io_err(format!("cannot create {}", out.display())))?;
        let lock_path = out.join(LOCK_FILE);
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io_err(format!("cannot open {}", lock_path.display())))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(ExportError::Locked(out.clone())),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(io_err(format!("cannot lock {}", lock_path.display()))(e))
            }
        }
        check_dataset(&options)?;
        Ok(Exporter {
            options,
            _lock: lock,
            summary: Summary::default(),
            open: HashMap::new(),
            passed: HashSet::new(),
            starts: HashMap::new(),
        })
    }

    /// What has been done so far.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The options.
    pub fn options(&self) -> &ExportOptions {
        &self.options
    }

    /// Exports partition `index` of `sources` from where the dataset ends (or from
    /// [`ExportOptions::range`]'s start when that is later) to the end of what the isolation
    /// level shows (or the range's end when that comes first), completing its last file.
    ///
    /// # Errors
    ///
    /// The partition has no topic and number, cannot be read, holds corrupt data (the rows
    /// before it are written and their file completed), a position of the range is outside
    /// the partition, or the output cannot be written.
    pub fn export(
        &mut self,
        sources: &Sources,
        index: usize,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ExportError> {
        self.export_one(false, (sources, index), on)
    }

    /// As [`export`](Self::export), but keeps the partition's last file open for the next pass
    /// (`--follow`): it is completed when it reaches [`ExportOptions::roll_bytes`], by
    /// [`roll_due`](Self::roll_due) or by [`finish`](Self::finish).
    ///
    /// # Errors
    ///
    /// As [`export`](Self::export).
    pub fn export_open(
        &mut self,
        sources: &Sources,
        index: usize,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ExportError> {
        self.export_one(true, (sources, index), on)
    }

    /// Exports every partition of `sources` with `jobs` threads, each partition as
    /// [`export`](Self::export) (or [`export_open`](Self::export_open) with `keep_open`) does:
    /// a partition is written by one thread at a time (a partition named twice by the sources
    /// is exported by one thread, in order), so each partition's files are still written,
    /// renamed and resumed as the [crate] docs say. Returns the partitions that failed, in
    /// index order; the others are exported whatever the failures.
    pub fn export_all(
        &mut self,
        sources: &Sources,
        jobs: usize,
        keep_open: bool,
        on: &(dyn Fn(Event<'_>) + Sync),
    ) -> Vec<PartitionError> {
        let mut failed: Vec<PartitionError> = Vec::new();
        // One task per partition directory, in the order of the sources.
        let mut tasks: Vec<Task> = Vec::new();
        for index in 0..sources.partitions.len() {
            match partition_dir(&self.options.output, sources, index) {
                Err(e) => failed.push(PartitionError::new(sources, index, e)),
                Ok((dir, label)) => match tasks.iter_mut().find(|t| t.dir == dir) {
                    Some(t) => t.indices.push(index),
                    None => {
                        let open = self.open.remove(&dir);
                        let first_pass = !self.passed.contains(&dir);
                        let start = self.starts.get(&dir).copied();
                        tasks.push(Task {
                            dir,
                            label,
                            indices: vec![index],
                            open,
                            first_pass,
                            start,
                        });
                    }
                },
            }
        }
        let queue = Mutex::new(tasks.into_iter().collect::<VecDeque<Task>>());
        let done: Mutex<Vec<Done>> = Mutex::new(Vec::new());
        let options = &self.options;
        let threads = jobs.max(1).min(lock(&queue).len());
        let work = || loop {
            let Some(task) = lock(&queue).pop_front() else {
                break;
            };
            let mut part = PartWork {
                options,
                summary: Summary::default(),
                dir: task.dir,
                label: task.label,
                open: task.open,
                first_pass: task.first_pass,
                start: task.start,
                topic_id: None,
            };
            let mut errors = Vec::new();
            for index in task.indices {
                if let Err(e) = part.run(sources, index, keep_open, &mut |e| on(e)) {
                    errors.push(PartitionError::new(sources, index, e));
                }
            }
            lock(&done).push(Done {
                dir: part.dir,
                start: part.start,
                open: part.open,
                summary: part.summary,
                errors,
            });
        };
        if threads <= 1 {
            work();
        } else {
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(work);
                }
            });
        }
        for d in done.into_inner().unwrap_or_else(|p| p.into_inner()) {
            let first_pass = self.passed.insert(d.dir.clone());
            self.add(d.summary, first_pass);
            if let Some(s) = d.start {
                self.starts.insert(d.dir.clone(), s);
            }
            if let Some(f) = d.open {
                self.open.insert(d.dir, f);
            }
            failed.extend(d.errors);
        }
        failed.sort_by_key(|f| f.index);
        failed
    }

    /// Completes the open files older than [`ExportOptions::roll_after`].
    ///
    /// # Errors
    ///
    /// A file cannot be completed.
    pub fn roll_due(&mut self, on: &mut dyn FnMut(Event<'_>)) -> Result<(), ExportError> {
        let Some(after) = self.options.roll_after else {
            return Ok(());
        };
        let due: Vec<PathBuf> = self
            .open
            .iter()
            .filter(|(_, f)| f.opened.elapsed() >= after)
            .map(|(d, _)| d.clone())
            .collect();
        for d in due {
            self.complete(&d, on)?;
        }
        Ok(())
    }

    /// Completes every open file.
    ///
    /// # Errors
    ///
    /// A file cannot be completed.
    pub fn finish(&mut self, on: &mut dyn FnMut(Event<'_>)) -> Result<(), ExportError> {
        let dirs: Vec<PathBuf> = self.open.keys().cloned().collect();
        for d in dirs {
            self.complete(&d, on)?;
        }
        Ok(())
    }

    fn complete(&mut self, dir: &Path, on: &mut dyn FnMut(Event<'_>)) -> Result<(), ExportError> {
        let Some(f) = self.open.remove(dir) else {
            return Ok(());
        };
        complete(f, self.options.format, &mut self.summary, on)
    }

    /// Adds what a pass over a partition did; a partition counts once however many passes
    /// (`--follow`) read it.
    fn add(&mut self, mut summary: Summary, first_pass: bool) {
        if !first_pass {
            summary.partitions = 0;
        }
        self.summary.add(summary);
    }

    /// One pass over partition `index` on this thread.
    fn export_one(
        &mut self,
        keep_open: bool,
        (sources, index): (&Sources, usize),
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ExportError> {
        let (dir, label) = partition_dir(&self.options.output, sources, index)?;
        let open = self.open.remove(&dir);
        let first_pass = self.passed.insert(dir.clone());
        let start = self.starts.get(&dir).copied();
        let mut part = PartWork {
            options: &self.options,
            summary: Summary::default(),
            dir,
            label,
            open,
            first_pass,
            start,
            topic_id: None,
        };
        let result = part.run(sources, index, keep_open, on);
        let PartWork {
            summary,
            dir,
            open,
            start,
            ..
        } = part;
        self.add(summary, first_pass);
        if let Some(s) = start {
            self.starts.insert(dir.clone(), s);
        }
        if let Some(f) = open {
            self.open.insert(dir, f);
        }
        result
    }
}

/// A mutex's guard, poisoned or not (a panicking thread ends the whole export anyway).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The partitions of one output directory, waiting for a thread of [`Exporter::export_all`].
struct Task {
    dir: PathBuf,
    label: String,
    indices: Vec<usize>,
    open: Option<OpenFile>,
    first_pass: bool,
    start: Option<i64>,
}

/// What a thread of [`Exporter::export_all`] did with a [`Task`].
struct Done {
    dir: PathBuf,
    start: Option<i64>,
    open: Option<OpenFile>,
    summary: Summary,
    errors: Vec<PartitionError>,
}

/// Checks that every partition of `sources` has a topic and a partition number to name its
/// dataset directory by (`topic=T/partition=P`): a plain segment file outside a `TOPIC-N`
/// directory has none. Call it before [`Exporter::open`], so that sources that cannot be
/// exported leave no dataset directory behind.
///
/// # Errors
///
/// [`ExportError::Unnamed`] for the first partition without them.
pub fn check_named(sources: &Sources) -> Result<(), ExportError> {
    (0..sources.partitions.len())
        .try_for_each(|index| partition_dir(Path::new(""), sources, index).map(|_| ()))
}

/// The dataset directory of partition `index` and its label `topic=T/partition=P`.
fn partition_dir(
    output: &Path,
    sources: &Sources,
    index: usize,
) -> Result<(PathBuf, String), ExportError> {
    let part = sources
        .partitions
        .get(index)
        .ok_or_else(|| ExportError::Unnamed(format!("partition {index}")))?;
    let (Some(topic), Some(partition)) = (part.topic.as_deref(), part.partition) else {
        return Err(ExportError::Unnamed(part.name.clone()));
    };
    if topic.is_empty() || topic.contains(['/', '\\']) || topic.starts_with('.') {
        return Err(ExportError::Unnamed(part.name.clone()));
    }
    let label = format!("topic={topic}/partition={partition}");
    Ok((output.join(&label), label))
}

/// Completes `f`, counting it and its records in `summary`; a file that cannot be completed
/// is removed and its records counted as not written.
fn complete(
    f: OpenFile,
    format: Format,
    summary: &mut Summary,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<(), ExportError> {
    let (records, bytes_in) = (f.records, f.bytes_in);
    let (path, bytes) = match f.complete(format) {
        Ok(done) => done,
        Err(e) => {
            summary.records_not_written = summary.records_not_written.saturating_add(records);
            return Err(e);
        }
    };
    // Renamed: its records are in the dataset, whether or not the directory's sync succeeds.
    summary.files = summary.files.saturating_add(1);
    summary.records = summary.records.saturating_add(records);
    summary.bytes_in = summary.bytes_in.saturating_add(bytes_in);
    summary.bytes_out = summary.bytes_out.saturating_add(bytes);
    if let Some(dir) = path.parent() {
        writer::sync_dir(dir)?;
    }
    on(Event::File {
        path: &path,
        records,
        bytes,
    });
    Ok(())
}

impl Summary {
    /// Adds what another pass did.
    fn add(&mut self, other: Summary) {
        self.partitions = self.partitions.saturating_add(other.partitions);
        self.files = self.files.saturating_add(other.files);
        self.records = self.records.saturating_add(other.records);
        self.records_not_written = self
            .records_not_written
            .saturating_add(other.records_not_written);
        self.bytes_in = self.bytes_in.saturating_add(other.bytes_in);
        self.bytes_out = self.bytes_out.saturating_add(other.bytes_out);
        self.removed_temporary = self
            .removed_temporary
            .saturating_add(other.removed_temporary);
        self.gaps.extend(other.gaps);
        self.gaps
            .sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        self.outside.extend(other.outside);
        self.outside.sort();
        self.add_invalid(other.invalid);
        self.notes.extend(other.notes);
    }

    /// Adds invalid counts by column (a scan's [`krecords_arrow::Report::invalid`], another
    /// summary's [`invalid`](Summary::invalid)).
    fn add_invalid(&mut self, counts: impl IntoIterator<Item = (String, u64)>) {
        for (column, n) in counts {
            let sum = self.invalid.entry(column).or_default();
            *sum = sum.saturating_add(n);
        }
    }
}

/// One partition's export: its directory, its open file and what it did (one thread's).
struct PartWork<'a> {
    options: &'a ExportOptions,
    summary: Summary,
    dir: PathBuf,
    label: String,
    open: Option<OpenFile>,
    /// Whether this is the run's first pass over the directory (a range outside the
    /// partition is reported once).
    first_pass: bool,
    /// The offset [`ExportOptions::range`]'s start resolved to, once it has (see
    /// `Exporter::starts`); until then the range's start is resolved again at each pass.
    start: Option<i64>,
    /// The source topic's id, when its source says (see `Partition::topic_id`).
    topic_id: Option<String>,
}

impl PartWork<'_> {
    /// One pass over partition `index`: from the dataset's end, or the range's start when
    /// later, to the range's end or the end of what the isolation level shows. Completes the
    /// last file unless `keep_open`.
    fn run(
        &mut self,
        sources: &Sources,
        index: usize,
        keep_open: bool,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ExportError> {
        let result = self.pass(sources, index, keep_open, on);
        self.first_pass = false;
        if result.is_err() || !keep_open {
            // After an error, the rows before it make a complete, valid file.
            self.complete(on)?;
        }
        result
    }

    /// Reports a range outside the partition, on the run's first pass over it only.
    fn outside(&mut self, message: String) {
        if self.first_pass {
            self.summary.outside.push(message);
        }
    }

    fn complete(&mut self, on: &mut dyn FnMut(Event<'_>)) -> Result<(), ExportError> {
        match self.open.take() {
            Some(f) => complete(f, self.options.format, &mut self.summary, on),
            None => Ok(()),
        }
    }

    /// One pass over partition `index`. Its dataset directory is made only when a file is
    /// about to be written ([`write_batch`](Self::write_batch)), so that a partition that
    /// cannot be read (a damaged `krec-log.json`, a log that does not open, corrupt data
    /// before any row), has nothing to export or is outside the range asked for leaves no
    /// empty directory behind.
    fn pass(
        &mut self,
        sources: &Sources,
        index: usize,
        keep_open: bool,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ExportError> {
        match self.open_scan(sources, index, keep_open)? {
            Some(scan) => self.write_scan(scan, on),
            None => Ok(()),
        }
    }

    /// The scan of partition `index` from where its dataset ends (or the range's start) to
    /// the range's end; `None` when there is nothing to export. Makes nothing in the output
    /// but the temporary files of an earlier run it removes. Followed (`keep_open`), a start
    /// offset past the partition's end is waited for rather than outside it.
    fn open_scan(
        &mut self,
        sources: &Sources,
        index: usize,
        keep_open: bool,
    ) -> Result<Option<PartitionScan>, ExportError> {
        let isolation = self.options.isolation;
        let name = partition_name(sources, index);
        self.summary.partitions = self.summary.partitions.saturating_add(1);
        self.topic_id = sources.partitions.get(index).and_then(|p| p.topic_id());
        let resume = match &self.open {
            Some(f) => Some(f.last.saturating_add(1)),
            // A dataset not there yet is made once the source is open.
            None if !self.dir.is_dir() => None,
            None => {
                let (last, removed) = scan_dir(&self.dir)?;
                self.summary.removed_temporary =
                    self.summary.removed_temporary.saturating_add(removed);
                if last.is_some() {
                    self.check_topic_id()?;
                }
                last.map(|l| l.saturating_add(1))
            }
        };
        // The range's start until it has resolved; then the offset it resolved to (a floor
        // for every later pass, whether or not a file was written).
        let floor = self.start;
        let range = Range {
            start: self.options.range.start.filter(|_| floor.is_none()),
            end: self.options.range.end,
            count: None,
        };
        let mut start = None;
        let mut end = None;
        if resume.is_some() || floor.is_some() || !range.is_all() {
            if let Some(w) = sources.watermarks(index)? {
                let readable = w.readable_end(isolation);
                // The range asked for, in offsets (times looked up in the time index or with
                // ListOffsets); a position outside the partition is an error.
                // An end offset past the partition's end is where this pass stops (a later one
                // goes on to it); a start past it, or a window the partition holds nothing of,
                // leaves the partition out.
                let range = Range {
                    end: range.end.map(|e| match e {
                        Position::Offset(o) if o > w.high_watermark => {
                            Position::Offset(w.high_watermark)
                        }
                        e => e,
                    }),
                    ..range
                };
                if let (Some(Position::Offset(s)), Some(Position::Offset(e))) =
                    (range.start, range.end)
                {
                    // Only a start past the partition's end gets here (the end was after it).
                    if e <= s {
                        self.outside(format!(
                            "{name}: offset {s} is out of range: the partition holds [{}, {})",
                            w.log_start, w.high_watermark
                        ));
                        return Ok(None);
                    }
                }
                let resolved = range.resolve(Some(&w), isolation, &mut |ms| {
                    sources.offset_for_time(index, ms, isolation)
                });
                let asked = match resolved {
                    // A start past the partition's end, followed: nothing yet (a later pass
                    // exports from it once the partition gets there).
                    Err(krecords_source::Error::OutOfRange(_))
                        if keep_open
                            && matches!(range.start, Some(Position::Offset(s))
                                if s >= w.high_watermark) =>
                    {
                        return Ok(None);
                    }
                    Err(krecords_source::Error::OutOfRange(m)) => {
                        self.outside(format!("{name}: {m}"));
                        return Ok(None);
                    }
                    r => r?,
                };
                let asked_start = match range.start {
                    Some(_) => {
                        self.start = Some(asked.start);
                        Some(asked.start)
                    }
                    None => floor,
                };
                let stop = asked.end.unwrap_or(readable);
                // Never an offset at or before the dataset's end: each record at most once.
                let from = match (resume, asked_start) {
                    (Some(r), Some(s)) => r.max(s),
                    (r, s) => r.or(s).unwrap_or(w.log_start),
                };
                if from >= stop {
                    return Ok(None);
                }
                if let Some(r) = resume.filter(|&r| r < w.log_start && from == r) {
                    self.summary.gaps.push(Gap {
                        topic: topic_of(sources, index),
                        partition: sources
                            .partitions
                            .get(index)
                            .and_then(|p| p.partition)
                            .unwrap_or(-1),
                        from: r,
                        to: w.log_start,
                    });
                }
                start = Some(Position::Offset(from.max(w.log_start)));
                end = asked.asked_end.map(|_| Position::Offset(stop));
            } else {
                start = resume.map(Position::Offset);
            }
        }
        let options = ScanOptions {
            range: Range {
                start,
                end,
                count: None,
            },
            isolation,
            batch: Options {
                columns: Column::ALL.to_vec(),
                key_format: self.options.key_format,
                value_format: self.options.value_format,
                ..Options::default()
            },
            allow_truncated_tail: self.options.allow_truncated_tail,
        };
        match PartitionScan::open(sources, index, &options) {
            Ok(s) => Ok(Some(s)),
            // An empty partition (nothing at or after the start) has nothing to export.
            Err(ScanError::Source(krecords_source::Error::Usage(_)))
                if sources
                    .watermarks(index)?
                    .is_some_and(|w| w.readable_end(isolation) <= w.log_start) =>
            {
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    fn write_scan(
        &mut self,
        mut scan: PartitionScan,
        on: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), ExportError> {
        let offset_col =
            scan.schema()
                .index_of(Column::Offset.name())
                .map_err(|e| ExportError::Write {
                    what: self.label.clone(),
                    message: e.to_string(),
                })?;
        let mut read_before = 0;
        let mut bytes_in = 0u64;
        // Bytes read not yet counted in a file (entries before a batch's rows are written).
        let mut pending = 0u64;
        while let Some(batch) = scan.next() {
            let bytes_read = scan.bytes_read();
            let read = bytes_read.saturating_sub(read_before);
            pending = pending.saturating_add(read);
            bytes_in = bytes_in.saturating_add(read);
            read_before = bytes_read;
            let batch = match batch {
                Ok(b) => b,
                Err(e) => {
                    self.summary.add_invalid(scan.report().invalid);
                    return Err(e.into());
                }
            };
            self.write_batch(&batch, offset_col)?;
            if let Some(f) = &mut self.open {
                f.bytes_in = f.bytes_in.saturating_add(std::mem::take(&mut pending));
            }
            on(Event::Batch {
                partition: &self.label,
                rows: batch.num_rows(),
                bytes_in,
            });
            if self
                .open
                .as_ref()
                .is_some_and(|f| f.size() >= self.options.roll_bytes)
            {
                self.complete(on)?;
            }
        }
        // Entries that made no rows (control batches) after the last record batch: the open
        // file's, or read and done with when no file is open.
        pending = pending.saturating_add(scan.bytes_read().saturating_sub(read_before));
        match &mut self.open {
            Some(f) => f.bytes_in = f.bytes_in.saturating_add(pending),
            None => self.summary.bytes_in = self.summary.bytes_in.saturating_add(pending),
        }
        self.summary.add_invalid(scan.report().invalid);
        // A log being written (`--follow`) has a partial last entry now and then.
        if !self.options.allow_truncated_tail {
            self.summary.notes.extend_from_slice(scan.notes());
        }
        Ok(())
    }

    /// Refuses to continue the partition's files from a topic other than the one they came
    /// from: a topic deleted and created again under the same name, or another cluster's, has
    /// another id (Kafka's own test for a recreated topic). Files or sources without an id are
    /// not compared.
    fn check_topic_id(&self) -> Result<(), ExportError> {
        let Some(ours) = &self.topic_id else {
            return Ok(());
        };
        let files = dataset_files(&self.dir)
            .map_err(io_err(format!("cannot list {}", self.dir.display())))?;
        let Some((_, _, last)) = files.last() else {
            return Ok(());
        };
        let (_, metadata) = read_footer(last)?;
        match metadata.get(TOPIC_ID_KEY) {
            Some(theirs) if theirs != ours => Err(ExportError::Mismatch(format!(
                "{}: holds topic id {theirs} (in {}), this source's topic has id {ours}: a \
                 topic deleted and created again, or another cluster's; export into another \
                 directory",
                self.dir.display(),
                last.display()
            ))),
            _ => Ok(()),
        }
    }

    fn write_batch(&mut self, batch: &RecordBatch, offset_col: usize) -> Result<(), ExportError> {
        let Some(offsets) = batch.columns().get(offset_col) else {
            return Ok(());
        };
        let offsets = offsets.as_primitive::<Int64Type>();
        let (Some(first), Some(last)) = (
            offsets.values().first().copied(),
            offsets.values().last().copied(),
        ) else {
            return Ok(());
        };
        let f = match &mut self.open {
            Some(f) => f,
            None => {
                let created = std::fs::create_dir_all(&self.dir)
                    .map_err(io_err(format!("cannot create {}", self.dir.display())))
                    .and_then(|()| {
                        OpenFile::create(
                            &self.dir,
                            first,
                            batch.schema(),
                            self.options,
                            self.topic_id.as_deref(),
                        )
                    });
                match created {
                    Ok(f) => self.open.insert(f),
                    Err(e) => {
                        self.summary.records_not_written = self
                            .summary
                            .records_not_written
                            .saturating_add(batch.num_rows() as u64);
                        return Err(e);
                    }
                }
            }
        };
        if let Err(e) = f.write(batch, last, self.options.row_group_bytes) {
            // A file that failed to be written is given up (its records are not exported): its
            // temporary is removed now rather than by the next run.
            if let Some(f) = self.open.take() {
                let lost = f.records.saturating_add(batch.num_rows() as u64);
                self.summary.records_not_written =
                    self.summary.records_not_written.saturating_add(lost);
                f.discard();
            }
            return Err(e);
        }
        // Counted in the summary once the file is completed.
        Ok(())
    }
}

/// The name of partition `index` ([`krecords_source::Partition::name`]; empty if none).
fn partition_name(sources: &Sources, index: usize) -> &str {
    sources
        .partitions
        .get(index)
        .map_or("", |p| p.name.as_str())
}

/// The topic of partition `index`.
fn topic_of(sources: &Sources, index: usize) -> String {
    sources
        .partitions
        .get(index)
        .and_then(|p| p.topic.clone())
        .unwrap_or_default()
}

/// Removes the temporary files of `dir` and finds the largest last offset of its files:
/// `(largest last offset, temporary files removed)`.
fn scan_dir(dir: &Path) -> Result<(Option<i64>, u64), ExportError> {
    let mut last = None;
    let mut removed = 0;
    let entries =
        std::fs::read_dir(dir).map_err(io_err(format!("cannot list {}", dir.display())))?;
    for entry in entries {
        let entry = entry.map_err(io_err(format!("cannot list {}", dir.display())))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.ends_with(TMP_SUFFIX) {
            let path = entry.path();
            std::fs::remove_file(&path)
                .map_err(io_err(format!("cannot remove {}", path.display())))?;
            removed += 1;
            continue;
        }
        if let Some((_, l)) = parse_file_name(name) {
            last = Some(last.map_or(l, |x: i64| x.max(l)));
        }
    }
    if removed > 0 {
        writer::sync_dir(dir)?;
    }
    Ok((last, removed))
}

/// The first dataset file (by [`parse_file_name`]) in a `topic=T/partition=P` directory of
/// `output`, if any.
fn first_file(output: &Path) -> Result<Option<PathBuf>, ExportError> {
    let list = |dir: &Path| -> Result<Vec<std::fs::DirEntry>, ExportError> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .and_then(|r| r.collect::<std::io::Result<Vec<_>>>())
            .map_err(io_err(format!("cannot list {}", dir.display())))?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        Ok(entries)
    };
    let named = |e: &std::fs::DirEntry, prefix: &str| {
        e.file_name().to_string_lossy().starts_with(prefix) && e.path().is_dir()
    };
    for topic in list(output)?.iter().filter(|e| named(e, "topic=")) {
        for part in list(&topic.path())?
            .iter()
            .filter(|e| named(e, "partition="))
        {
            let files = list(&part.path())?;
            let file = files
                .iter()
                .find(|e| e.file_name().to_str().and_then(parse_file_name).is_some());
            if let Some(file) = file {
                return Ok(Some(file.path()));
            }
        }
    }
    Ok(None)
}

pub use krecords_arrow::ISOLATION_KEY;

/// The key of the file metadata that holds the source topic's id as Kafka prints it, when the
/// source says (a partition directory's `partition.metadata`, a live topic's Metadata).
pub const TOPIC_ID_KEY: &str = "krec.topic_id";

/// Refuses an export into a dataset whose files another format, schema or isolation level
/// wrote (another `--format`, `--key-format`, `--value-format` or `--isolation`): its files
/// would not read as one table, or would mix aborted records into a committed view.
fn check_dataset(options: &ExportOptions) -> Result<(), ExportError> {
    let Some(file) = first_file(&options.output)? else {
        return Ok(());
    };
    let what = || file.display().to_string();
    let ours = options.format.extension();
    let theirs = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    if theirs != ours {
        return Err(ExportError::Mismatch(format!(
            "{}: the dataset holds {theirs} files (such as {}); this export writes {ours} \
             files, and one dataset is read as one table: export with --format {theirs} or \
             into another directory",
            options.output.display(),
            what()
        )));
    }
    let (schema, metadata) = read_footer(&file)?;
    // Files written before the key existed say nothing: nothing to compare.
    if let Some(theirs) = metadata
        .get(ISOLATION_KEY)
        .filter(|i| *i != options.isolation.name())
    {
        return Err(ExportError::Mismatch(format!(
            "{}: was exported at {theirs}, this export reads at {}; one dataset holds one \
             view of the topic: export with --isolation {} or into another directory",
            what(),
            options.isolation.name(),
            theirs.replace('_', "-")
        )));
    }
    let want = krecords_arrow::full_schema(options.key_format, options.value_format);
    for field in want.fields() {
        let Ok(have) = schema.field_with_name(field.name()) else {
            return Err(ExportError::Mismatch(format!(
                "{}: has no column {}, which this export writes: export into another directory",
                what(),
                field.name()
            )));
        };
        if have.data_type() != field.data_type() {
            let option = match field.name().as_str() {
                "key" => " (--key-format)",
                "value" => " (--value-format)",
                _ => "",
            };
            return Err(ExportError::Mismatch(format!(
                "{}: column {} is {}, this export writes it as {}{option}; one dataset is read \
                 as one table: export with the options that wrote it or into another directory",
                what(),
                field.name(),
                have.data_type(),
                field.data_type()
            )));
        }
    }
    Ok(())
}

/// The schema and the file metadata (Parquet key-value metadata, Arrow IPC custom metadata) of
/// a dataset file, its format told by its extension.
fn read_footer(
    file: &Path,
) -> Result<(arrow_schema::SchemaRef, HashMap<String, String>), ExportError> {
    let bad = |e: &dyn std::fmt::Display| ExportError::Write {
        what: file.display().to_string(),
        message: e.to_string(),
    };
    let f = File::open(file).map_err(io_err(format!("cannot open {}", file.display())))?;
    if file
        .extension()
        .is_some_and(|e| e == Format::Arrow.extension())
    {
        let r = arrow_ipc::reader::FileReader::try_new(f, None).map_err(|e| bad(&e))?;
        return Ok((r.schema(), r.custom_metadata().clone()));
    }
    let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .map_err(|e| bad(&e))?;
    let metadata = b
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .filter_map(|kv| Some((kv.key.clone(), kv.value.clone()?)))
        .collect();
    Ok((b.schema().clone(), metadata))
}

/// The offsets of a dataset file name `<20 digits>-<20 digits>.parquet` (or `.arrow`).
pub fn parse_file_name(name: &str) -> Option<(i64, i64)> {
    let stem = name
        .strip_suffix(".parquet")
        .or_else(|| name.strip_suffix(".arrow"))?;
    let (a, b) = stem.split_once('-')?;
    let digits = |s: &str| s.len() == 20 && s.bytes().all(|c| c.is_ascii_digit());
    if !digits(a) || !digits(b) {
        return None;
    }
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The file name of offsets `first..=last`.
pub fn file_name(first: i64, last: i64, format: Format) -> String {
    format!("{first:020}-{last:020}.{}", format.extension())
}

/// The dataset files of a partition directory, in offset order: `(first, last, path)`.
///
/// # Errors
///
/// The directory cannot be listed.
pub fn dataset_files(dir: &Path) -> std::io::Result<Vec<(i64, i64, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if let Some((a, b)) = entry.file_name().to_str().and_then(parse_file_name) {
            out.push((a, b, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// The record batches of one dataset file, Parquet or Arrow IPC by its extension (the whole
/// file in memory: for checks and small files; engines read datasets themselves).
///
/// # Errors
///
/// The file cannot be opened or is not a valid Parquet or Arrow IPC file.
pub fn read_file(path: &Path) -> Result<Vec<RecordBatch>, ExportError> {
    let what = || path.display().to_string();
    let bad = |e: &dyn std::fmt::Display| ExportError::Write {
        what: what(),
        message: e.to_string(),
    };
    let file = File::open(path).map_err(io_err(format!("cannot open {}", what())))?;
    if path.extension().is_some_and(|e| e == "arrow") {
        let reader = arrow_ipc::reader::FileReader::try_new(file, None).map_err(|e| bad(&e))?;
        reader.map(|b| b.map_err(|e| bad(&e))).collect()
    } else {
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|e| bad(&e))?;
        reader.map(|b| b.map_err(|e| bad(&e))).collect()
    }
}
