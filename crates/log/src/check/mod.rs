//! Integrity checks of a partition directory, as data: every problem found in its files, and
//! what was checked (the engine side of `krec verify`, as redb's `Database::check_integrity` is
//! to its tools).
//!
//! [`check_partition`] examines one partition directory without changing it (no lock, no
//! writes; the compaction check opens the log with [`Log::open_read_only`]):
//!
//! * every entry of every segment: its CRC, its structure and its records, decompressing
//!   compressed ones (inner CRCs of v0/v1 wrappers too); a truncated entry at the end of a file
//!   (a torn write); offsets increasing across entries and segments, each entry at or above its
//!   segment's base offset (a compressed v0/v1 wrapper counting as its last offset, as recovery
//!   counts it); the partition leader epochs of v2 batches never going down along the
//!   partition's log, across segments too (epoch -1, none, skipped; no CRC covers the field);
//! * the `.index` beside each segment: entries increasing, each at an entry boundary of the log
//!   with that entry's last offset, none past the end; the `.timeindex`: timestamps increasing,
//!   each the largest timestamp of the entries up to its offset; the `.txnindex`: each aborted
//!   transaction ending at an abort marker of its producer. Zero-filled tails (preallocated
//!   space) and missing index files are not problems;
//! * `<offset>.snapshot` producer snapshots (version, CRC-32C, entry count, offset within the
//!   log), `leader-epoch-checkpoint`, `krec-log.json`, and for a compacted log with
//!   `krec-cleaner-offset` the cleaned part below it.
//!
//! [`Checker`] does the same step by step, reporting each [`Problem`] to a callback as it is
//! found (a caller printing them needs no memory for them), and also checks single files of
//! entries, any [`EntrySource`], and a broker data directory's own files
//! ([`Checker::data_dir_files`]).
//!
//! [`check_root`] checks a broker's data directory whole, its partitions in parallel;
//! [`check_selection`] the partitions a [`data_dir::PartitionFilter`] chose of it (a topic
//! glob, a partition). [`RootReport::totals`] and [`Totals`] count what was found as
//! `krec verify` reports it.
//!
//! [`Log::open_read_only`]: crate::Log::open_read_only

pub use crate::entry_stream::{
    count_rest, file_streamer, known_len, read_once, streamer, EntrySource, EntryStream, Next,
    COUNT_LIMIT,
};

use crate::data_dir::{self, PartitionDir, Selection};
use crate::epoch::epoch_falls;
use crate::files::{
    self, INDEX_SUFFIX, LEADER_EPOCH_CHECKPOINT_FILE, LOG_SUFFIX, SNAPSHOT_SUFFIX,
    TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX,
};
use crate::index::rules::{EntryFacts, Index, IndexEntry, IndexKind, Rules};
use crate::index::{offset, time};
use crate::producer_state::{self, SNAPSHOT_ENTRY_SIZE, SNAPSHOT_VERSION};
use crate::segment;
use crate::transaction::AbortedTxn;
use krecords_codec::control::{ControlRecordKey, ControlRecordType};
use krecords_codec::read::Batch;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What a [`Problem`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// An entry that fails its CRC, its structure or its records, or whose partition leader
    /// epoch is below the one of a v2 batch before it in the partition's log.
    Entry,
    /// Offsets that do not increase, or an entry below its segment's base offset.
    Offsets,
    /// A truncated entry at the end of a file.
    Truncated,
    /// The offset index (`.index`).
    Index,
    /// The time index (`.timeindex`).
    TimeIndex,
    /// The transaction index (`.txnindex`).
    TxnIndex,
    /// A producer state snapshot (`.snapshot`).
    Snapshot,
    /// `leader-epoch-checkpoint`, or an offset checkpoint of a data directory.
    Checkpoint,
    /// `krec-log.json`.
    Config,
    /// The cleaned part of a compacted log.
    Compaction,
    /// A data directory's `meta.properties`.
    Meta,
    /// A file or directory that cannot be read.
    Io,
}

impl ProblemKind {
    /// The short name `krec verify` prints: `entry`, `offsets`, `truncated`, `index`,
    /// `timeindex`, `txnindex`, `snapshot`, `checkpoint`, `config`, `compaction`, `meta`, `io`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::Entry => "entry",
            ProblemKind::Offsets => "offsets",
            ProblemKind::Truncated => "truncated",
            ProblemKind::Index => "index",
            ProblemKind::TimeIndex => "timeindex",
            ProblemKind::TxnIndex => "txnindex",
            ProblemKind::Snapshot => "snapshot",
            ProblemKind::Checkpoint => "checkpoint",
            ProblemKind::Config => "config",
            ProblemKind::Compaction => "compaction",
            ProblemKind::Meta => "meta",
            ProblemKind::Io => "io",
        }
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file (its path as displayed, or a stream's name).
    pub file: String,
    /// Byte position in the file, when the problem has one.
    pub position: Option<u64>,
    /// What kind of problem it is.
    pub kind: ProblemKind,
    /// What is wrong, in words.
    pub message: String,
}

impl Problem {
    /// The problem as the JSON object `krec verify --format json` prints:
    /// `{"partition"?,"file","position","check","message"}`, with `partition` (the
    /// `topic-partition` of a data directory's partition) only when given and `position` null
    /// when the problem has none.
    ///
    /// ```
    /// use krecords_log::check::{Problem, ProblemKind};
    ///
    /// let p = Problem {
    ///     file: "a.log".into(),
    ///     position: None,
    ///     kind: ProblemKind::Index,
    ///     message: "bad".into(),
    /// };
    /// assert_eq!(
    ///     p.to_json(Some("t-0")).to_string(),
    ///     r#"{"partition":"t-0","file":"a.log","position":null,"check":"index","message":"bad"}"#
    /// );
    /// assert_eq!(p.to_string(), "a.log: [index] bad");
    /// ```
    pub fn to_json(&self, partition: Option<&str>) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        if let Some(p) = partition {
            m.insert("partition".into(), p.into());
        }
        m.insert("file".into(), self.file.as_str().into());
        m.insert("position".into(), self.position.into());
        m.insert("check".into(), self.kind.as_str().into());
        m.insert("message".into(), self.message.as_str().into());
        serde_json::Value::Object(m)
    }
}

/// The line `krec verify` prints: `FILE: byte N: [check] message`, or `FILE: [check] message`
/// when the problem has no position.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(at) => write!(
                f,
                "{}: byte {at}: [{}] {}",
                self.file, self.kind, self.message
            ),
            None => write!(f, "{}: [{}] {}", self.file, self.kind, self.message),
        }
    }
}

/// What was checked.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Files read (segments and the files beside them).
    pub files: u64,
    /// Entries (batches or v0/v1 messages) read.
    pub entries: u64,
    /// Records in the entries that passed their checks.
    pub records: u64,
    /// Bytes of the entries.
    pub bytes: u64,
    /// Problems found.
    pub problems: u64,
}

impl Summary {
    /// Adds another summary's counts to this one.
    pub fn add(&mut self, o: &Summary) {
        self.files += o.files;
        self.entries += o.entries;
        self.records += o.records;
        self.bytes += o.bytes;
        self.problems += o.problems;
    }

    /// The summary for people, each noun agreeing with its count: `1 file, 1 entry, 10
    /// records, 1151 bytes: no problems`. `live` of the files are partitions read over the
    /// network, named as such (`1 live partition, ...`; no `0 files` then).
    ///
    /// ```
    /// use krecords_log::check::Summary;
    ///
    /// let s = Summary { files: 1, entries: 1, records: 10, bytes: 1151, problems: 0 };
    /// assert_eq!(s.describe(0), "1 file, 1 entry, 10 records, 1151 bytes: no problems");
    /// let live = Summary { files: 2, entries: 3, records: 1, bytes: 80, problems: 1 };
    /// assert_eq!(live.describe(2), "2 live partitions, 3 entries, 1 record, 80 bytes: 1 problem");
    /// ```
    pub fn describe(&self, live: u64) -> String {
        let n = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let files = self.files.saturating_sub(live);
        let mut parts = Vec::new();
        if live > 0 {
            parts.push(n(live, "live partition", "live partitions"));
        }
        if files > 0 || live == 0 {
            parts.push(n(files, "file", "files"));
        }
        parts.push(n(self.entries, "entry", "entries"));
        parts.push(n(self.records, "record", "records"));
        parts.push(n(self.bytes, "byte", "bytes"));
        let problems = match self.problems {
            0 => "no problems".to_owned(),
            p => n(p, "problem", "problems"),
        };
        format!("{}: {problems}", parts.join(", "))
    }
}

/// What [`check_partition`] found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Every problem, in the order found.
    pub problems: Vec<Problem>,
    /// What was checked.
    pub summary: Summary,
    /// The offsets the segments hold: the first segment's base offset and the offset after the
    /// last entry, when there are segments.
    pub range: Option<(i64, i64)>,
}

impl Report {
    /// The report of the data directory partition `part` as `krec verify --format json`
    /// prints it after its problems: `{"partition":{"name","dir","ok","problems","files",
    /// "entries","records","bytes"}}`.
    pub fn partition_json(&self, part: &PartitionDir) -> serde_json::Value {
        let s = &self.summary;
        serde_json::json!({"partition": {
            "name": part.name(),
            "dir": part.path.display().to_string(),
            "ok": s.problems == 0,
            "problems": s.problems,
            "files": s.files,
            "entries": s.entries,
            "records": s.records,
            "bytes": s.bytes,
        }})
    }
}

/// Why a check could not be carried out (damage is a [`Problem`], not an error).
#[derive(Debug)]
pub enum CheckError {
    /// The directory holds no `.log` files.
    NoSegments(PathBuf),
    /// An I/O error; `what` says what was being done (empty when the problem callback failed).
    Io {
        /// What failed, such as `cannot read <path>`.
        what: String,
        /// The error.
        error: io::Error,
    },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::NoSegments(dir) => write!(f, "{}: no .log files to verify", dir.display()),
            CheckError::Io { what, error } if what.is_empty() => write!(f, "{error}"),
            CheckError::Io { what, error } => write!(f, "{what}: {error}"),
        }
    }
}

impl std::error::Error for CheckError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckError::NoSegments(_) => None,
            CheckError::Io { error, .. } => Some(error),
        }
    }
}

impl From<io::Error> for CheckError {
    fn from(error: io::Error) -> Self {
        CheckError::Io {
            what: String::new(),
            error,
        }
    }
}

type CheckResult<T> = std::result::Result<T, CheckError>;

/// What `krec verify` calls an entry whose length field runs past the end of its file when
/// intact entries follow it (with nothing intact after it, it is a truncated tail).
pub const LENGTH_PAST_THE_END: &str =
    "damaged entry: its length field runs past the end of the file";

/// After damage at byte `position` of the segment file `path` (an entry that cannot be read, or
/// one whose length field runs past the end of the file): the first intact entry after it in
/// the file (whole, its CRC valid), as salvage finds one — its byte and first offset. `None`
/// when nothing intact follows: the damage is a truncated tail. This is how `krec verify` (and
/// `krec stats`, in the same words: [`damage_before_intact`]) tells damage in the middle of a
/// file from a truncated tail. A file read once ([`read_once`]: a FIFO, a socket, a device) is
/// not searched (as standard input is not): `None`.
///
/// # Errors
///
/// The file cannot be read.
pub fn intact_after(path: &Path, position: u64) -> crate::Result<Option<(u64, i64)>> {
    if read_once(path) {
        return Ok(None);
    }
    let files = [path.to_path_buf()];
    let found = crate::resync::first_intact(
        &crate::storage::FsStorage,
        &files,
        position.saturating_add(1),
        u64::MAX,
    )?;
    Ok(found.map(|(_, at, first)| (at, first)))
}

/// `krec verify`'s words for damage (`what`) at byte `position` of a file that intact entries
/// follow from byte `at` (offset `first`), as [`intact_after`] finds them.
pub fn damage_before_intact(what: &str, position: u64, at: u64, first: i64) -> String {
    format!(
        "{what}; intact entries follow from byte {at} (offset {first}); the {} bytes before \
         them cannot be read",
        at.saturating_sub(position)
    )
}

/// After damage at byte `position` of the file at `path` (none: a source that is not a file
/// here, which is not searched): the first intact entry after it, as salvage finds one — its
/// position and first offset — and a stream of the file's entries from there. `None` when
/// nothing intact follows (a torn tail).
fn resume_after(
    path: Option<&Path>,
    position: u64,
    name: &str,
) -> CheckResult<Option<(u64, i64, EntryStream)>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let read_error = |e: crate::Error| CheckError::Io {
        what: format!("cannot read {name}"),
        error: io::Error::other(e.to_string()),
    };
    let found = intact_after(path, position).map_err(read_error)?;
    let Some((at, first)) = found else {
        return Ok(None);
    };
    let stream = io_context(EntryStream::open_file_at(path, at), || {
        format!("cannot read {name}")
    })?;
    Ok(Some((at, first, stream)))
}

/// Adds what failed to an I/O error.
fn io_context<T>(r: io::Result<T>, what: impl FnOnce() -> String) -> CheckResult<T> {
    r.map_err(|error| CheckError::Io {
        what: what(),
        error,
    })
}

/// Checks the partition directory `dir` and returns every problem found (see the [module
/// documentation](self)); `max_decompressed_bytes` bounds the decompressed size of one entry.
/// The directory is only read.
///
/// # Errors
///
/// [`CheckError::NoSegments`] when `dir` holds no `.log` file, [`CheckError::Io`] when it or a
/// segment cannot be read.
///
/// # Examples
///
/// ```
/// use krecords_codec::write::{NewRecord, V2Builder};
/// use krecords_log::check::{check_partition, ProblemKind};
/// use krecords_log::{AppendOrigin, Log, LogConfig};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let mut log = Log::create(dir.path(), LogConfig::default())?;
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"hello")))?;
/// log.append(&b.finish()?, AppendOrigin::Client)?;
/// log.close()?;
///
/// let report = check_partition(dir.path(), 64 << 20)?;
/// assert!(report.problems.is_empty());
/// assert_eq!((report.summary.entries, report.summary.records), (1, 1));
///
/// // A torn write: half of the last batch is gone.
/// let seg = dir.path().join("00000000000000000000.log");
/// let len = std::fs::metadata(&seg)?.len();
/// std::fs::OpenOptions::new().write(true).open(&seg)?.set_len(len - 10)?;
/// let report = check_partition(dir.path(), 64 << 20)?;
/// assert_eq!(report.problems[0].kind, ProblemKind::Truncated);
/// # Ok(())
/// # }
/// ```
pub fn check_partition(dir: &Path, max_decompressed_bytes: usize) -> CheckResult<Report> {
    let mut problems = Vec::new();
    let mut sink = |p: Problem| {
        problems.push(p);
        Ok(())
    };
    let mut checker = Checker::new(max_decompressed_bytes, &mut sink);
    let range = checker.partition_dir(dir)?;
    let summary = checker.summary();
    Ok(Report {
        problems,
        summary,
        range,
    })
}

/// Checks one file of concatenated entries as `krec verify FILE` does and returns every problem
/// found: each entry (structure, CRC, records, offsets), and when the file is named as a
/// segment (`<20 digits>.log`) the offset, time and transaction indexes beside it.
///
/// # Errors
///
/// The file cannot be opened or read.
///
/// ```
/// use krecords_codec::write::{NewRecord, V2Builder};
///
/// let dir = tempfile::tempdir().unwrap();
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"x"))).unwrap();
/// let mut bytes = b.finish().unwrap().to_vec();
/// let path = dir.path().join("entries.bin");
/// std::fs::write(&path, &bytes).unwrap();
/// let report = krecords_log::check::check_file(&path, 1 << 20).unwrap();
/// assert!(report.problems.is_empty());
/// assert_eq!((report.summary.entries, report.summary.records), (1, 1));
/// bytes[65] ^= 0xff; // inside the record: the CRC no longer checks
/// std::fs::write(&path, &bytes).unwrap();
/// let report = krecords_log::check::check_file(&path, 1 << 20).unwrap();
/// assert_eq!(report.problems[0].position, Some(0));
/// ```
pub fn check_file(path: &Path, max_decompressed_bytes: usize) -> CheckResult<Report> {
    let mut problems = Vec::new();
    let mut sink = |p: Problem| {
        problems.push(p);
        Ok(())
    };
    let mut checker = Checker::new(max_decompressed_bytes, &mut sink);
    let mut source = io_context(EntryStream::open_file(path, None), || {
        format!("cannot open {}", path.display())
    })?;
    let name = path.display().to_string();
    checker.entries(
        &mut source,
        &name,
        Some(path),
        segment_base(path),
        &mut None,
    )?;
    let summary = checker.summary();
    Ok(Report {
        problems,
        summary,
        range: None,
    })
}

/// Checks the partition directories `parts` of a data directory on `threads` workers (at least
/// one) and returns their reports in the order of `parts`, whatever the threading; `done` is
/// called, from the worker, as each partition is finished (for progress).
///
/// Each report is that of [`check_partition`], except that a directory without segments (Kafka
/// creates them empty) is no problem, and a directory that cannot be read is one problem of
/// kind [`ProblemKind::Io`] (after those found before the failure) rather than an error.
///
/// ```
/// use krecords_log::check::check_partitions;
/// use krecords_log::data_dir::PartitionDir;
///
/// let root = tempfile::tempdir().unwrap();
/// let parts: Vec<PartitionDir> = (0..3)
///     .map(|partition| {
///         let path = root.path().join(format!("t-{partition}"));
///         std::fs::create_dir(&path).unwrap();
///         PartitionDir { topic: "t".into(), partition, path }
///     })
///     .collect();
/// let finished = std::sync::atomic::AtomicUsize::new(0);
/// let reports = check_partitions(&parts, 2, 1 << 20, &|_| {
///     finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
/// });
/// assert_eq!(reports.len(), 3);
/// assert!(reports.iter().all(|r| r.problems.is_empty() && r.range.is_none()));
/// assert_eq!(finished.into_inner(), 3);
/// let line = reports[0].partition_json(&parts[0]).to_string();
/// assert!(line.starts_with(r#"{"partition":{"name":"t-0","dir":"#), "{line}");
/// assert!(line.ends_with(r#""ok":true,"problems":0,"files":0,"entries":0,"records":0,"bytes":0}}"#));
/// ```
pub fn check_partitions(
    parts: &[PartitionDir],
    threads: usize,
    max_decompressed_bytes: usize,
    done: &(dyn Fn(&PartitionDir) + Sync),
) -> Vec<Report> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Report>>> = parts.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, parts.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(part) = parts.get(i) else {
                    break;
                };
                let report = check_partition_lenient(&part.path, max_decompressed_bytes);
                done(part);
                if let Some(Ok(mut slot)) = slots.get(i).map(Mutex::lock) {
                    *slot = Some(report);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|m| m.into_inner().ok().flatten().unwrap_or_default())
        .collect()
}

/// What [`check_root`] found in a broker's data directory.
#[derive(Debug, Clone, Default)]
pub struct RootReport {
    /// Each partition's report, in the order of the partitions checked.
    pub partitions: Vec<Report>,
    /// The root's own files (`meta.properties`, the offset checkpoints) against every
    /// partition, when they were checked.
    pub files: Option<Report>,
}

/// Checks a broker's data directory (a `log.dirs` root) as `krec verify ROOT` does: the
/// partition directories `parts` on `threads` workers ([`check_partitions`], `done` called as
/// each ends), then, with `root_files`, the root's own files against `all` its partition
/// directories ([`Checker::data_dir_files`]; the offsets each checked partition holds are
/// compared with the checkpoints). `all` is what [`data_dir::partition_dirs`] lists; `parts`
/// is all of it or a selection (a topic, a partition), with whose reports the root's files
/// are better not checked.
///
/// # Errors
///
/// A root file cannot be read (a partition that cannot be read is a problem in its report).
///
/// ```
/// use krecords_log::check::check_root;
/// use krecords_log::data_dir::partition_dirs;
///
/// let root = tempfile::tempdir().unwrap();
/// std::fs::create_dir(root.path().join("t-0")).unwrap();
/// std::fs::write(root.path().join("recovery-point-offset-checkpoint"), "0\n1\nt 7 0\n").unwrap();
/// let all = partition_dirs(root.path()).unwrap();
/// let report = check_root(root.path(), &all, &all, true, 2, 1 << 20, &|_| {}).unwrap();
/// assert!(report.partitions[0].problems.is_empty());
/// // The checkpoint names partition t-7, which has no directory.
/// let files = report.files.unwrap();
/// assert_eq!(files.problems.len(), 1, "{:?}", files.problems);
/// ```
pub fn check_root(
    root: &Path,
    all: &[PartitionDir],
    parts: &[PartitionDir],
    root_files: bool,
    threads: usize,
    max_decompressed_bytes: usize,
    done: &(dyn Fn(&PartitionDir) + Sync),
) -> CheckResult<RootReport> {
    let partitions = check_partitions(parts, threads, max_decompressed_bytes, done);
    let files = if root_files {
        let ranges: BTreeMap<(String, i32), (i64, i64)> = parts
            .iter()
            .zip(&partitions)
            .filter_map(|(p, r)| Some(((p.topic.clone(), p.partition), r.range?)))
            .collect();
        let mut problems = Vec::new();
        let mut sink = |p: Problem| {
            problems.push(p);
            Ok(())
        };
        let mut checker = Checker::new(max_decompressed_bytes, &mut sink);
        checker.data_dir_files(root, all, &ranges)?;
        let summary = checker.summary();
        Some(Report {
            problems,
            summary,
            range: None,
        })
    } else {
        None
    };
    Ok(RootReport { partitions, files })
}

/// [`check_root`] of the partitions a [`PartitionFilter`](data_dir::PartitionFilter) chose:
/// the root's own files only when it chose every partition ([`Selection::whole`]).
///
/// # Errors
///
/// As [`check_root`].
///
/// ```
/// use krecords_log::check::{check_selection, Totals};
/// use krecords_log::data_dir::select_partitions;
///
/// let root = tempfile::tempdir().unwrap();
/// for dir in ["orders-0", "orders-1", "payments-0"] {
///     std::fs::create_dir(root.path().join(dir)).unwrap();
/// }
/// let selection = select_partitions(root.path(), Some("orders*"), None).unwrap();
/// let report = check_selection(&selection, 4, 1 << 20, &|_| {}).unwrap();
/// assert!(report.files.is_none(), "the root's files only for every partition");
/// let totals = report.totals(&selection.chosen);
/// assert_eq!((totals.partitions, totals.is_clean()), (2, true));
/// let mut all = Totals::default();
/// all.add_root(&totals);
/// assert_eq!(all.describe(0), "2 partitions (2 ok, 0 with problems), 0 files, 0 entries, \
///     0 records, 0 bytes: no problems");
/// ```
pub fn check_selection(
    selection: &Selection,
    threads: usize,
    max_decompressed_bytes: usize,
    done: &(dyn Fn(&PartitionDir) + Sync),
) -> CheckResult<RootReport> {
    check_root(
        &selection.root,
        &selection.all,
        &selection.chosen,
        selection.whole,
        threads,
        max_decompressed_bytes,
        done,
    )
}

impl RootReport {
    /// The report's totals: `parts` are the partitions checked, in the order of
    /// [`RootReport::partitions`].
    pub fn totals(&self, parts: &[PartitionDir]) -> RootTotals {
        let mut totals = RootTotals {
            partitions: self.partitions.len() as u64,
            ..RootTotals::default()
        };
        for (part, r) in parts.iter().zip(&self.partitions) {
            totals.counts.add(&r.summary);
            if r.summary.problems > 0 {
                totals.with_problems.push(part.name());
            }
        }
        if let Some(files) = &self.files {
            totals.counts.add(&files.summary);
            totals.files_with_problems = files.summary.problems > 0;
        }
        totals
    }
}

/// What a check of a data directory found, counted ([`RootReport::totals`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RootTotals {
    /// The partitions' counts and the root's own files', summed.
    pub counts: Summary,
    /// Partitions checked.
    pub partitions: u64,
    /// The partitions with problems (`topic-partition`), in partition order.
    pub with_problems: Vec<String>,
    /// Whether the root's own files (checked or not) have problems.
    pub files_with_problems: bool,
}

impl RootTotals {
    /// Whether nothing had a problem.
    pub fn is_clean(&self) -> bool {
        self.with_problems.is_empty() && !self.files_with_problems
    }
}

/// What a check of several inputs (files, partition directories, data directories) found in
/// all, as `krec verify` sums it up: the counts, and the partitions of data directories when
/// there were some. Serialized as `krec verify --format json` prints its summary: the counts
/// of [`Summary`], then `partitions` and `partitions_with_problems` when some data directory
/// was checked.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Totals {
    /// Everything counted.
    #[serde(flatten)]
    pub counts: Summary,
    /// Partitions of data directories checked, when a data directory was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u64>,
    /// Those of them with problems (not counting a root's own files), when a data directory
    /// was checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions_with_problems: Option<u64>,
}

impl Totals {
    /// Adds a data directory's totals.
    pub fn add_root(&mut self, root: &RootTotals) {
        self.counts.add(&root.counts);
        self.partitions = Some(self.partitions.unwrap_or(0) + root.partitions);
        let bad = root.with_problems.len() as u64;
        self.partitions_with_problems = Some(self.partitions_with_problems.unwrap_or(0) + bad);
    }

    /// The totals for people: `N partitions (K ok, B with problems), ` when data directories
    /// were checked, then [`Summary::describe`] (`live` of the files being partitions read
    /// over the network).
    pub fn describe(&self, live: u64) -> String {
        let partitions = match (self.partitions, self.partitions_with_problems) {
            (Some(n), Some(bad)) => {
                format!("{n} partitions ({} ok, {bad} with problems), ", n - bad)
            }
            _ => String::new(),
        };
        format!("{partitions}{}", self.counts.describe(live))
    }
}

/// [`check_partition`] for [`check_partitions`]: no segments is no problem, a failure one
/// problem.
fn check_partition_lenient(dir: &Path, max_decompressed_bytes: usize) -> Report {
    let mut problems = Vec::new();
    let mut sink = |p: Problem| {
        problems.push(p);
        Ok(())
    };
    let mut checker = Checker::new(max_decompressed_bytes, &mut sink);
    let range = match checker.partition_dir(dir) {
        Ok(r) => r,
        Err(CheckError::NoSegments(_)) => None,
        Err(e) => {
            let _ = checker.report(Problem {
                file: dir.display().to_string(),
                position: None,
                kind: ProblemKind::Io,
                message: e.to_string(),
            });
            None
        }
    };
    let summary = checker.summary();
    Report {
        problems,
        summary,
        range,
    }
}

/// The base offset of a segment file named `<20 digits>.log`.
pub fn segment_base(path: &Path) -> Option<i64> {
    let name = path.file_name()?.to_str()?;
    (name.len() == 20 + LOG_SUFFIX.len())
        .then(|| files::parse_file_name(name, LOG_SUFFIX))
        .flatten()
}

/// A file beside `log` with another suffix (`.index`, ...).
fn sibling(log: &Path, suffix: &str) -> PathBuf {
    let stem = log.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    log.with_file_name(format!("{stem}{suffix}"))
}

impl IndexKind {
    fn problem_kind(self) -> ProblemKind {
        match self {
            IndexKind::Offset => ProblemKind::Index,
            IndexKind::Time => ProblemKind::TimeIndex,
            IndexKind::Txn => ProblemKind::TxnIndex,
        }
    }
}

/// The indexes of a segment held in memory ([`Checker::segment_bytes`]): each as its name in
/// problems and its bytes; `None` when the segment has no such index.
#[derive(Debug, Clone, Copy, Default)]
pub struct SegmentIndexBytes<'a> {
    /// The offset index (`.index`).
    pub offset: Option<(&'a str, &'a [u8])>,
    /// The time index (`.timeindex`).
    pub time: Option<(&'a str, &'a [u8])>,
    /// The transaction index (`.txnindex`).
    pub txn: Option<(&'a str, &'a [u8])>,
}

/// The callback a [`Checker`] reports problems to; an error from it ends the check.
pub type ProblemSink<'s> = dyn FnMut(Problem) -> io::Result<()> + 's;

/// Checks files step by step, reporting each [`Problem`] to a callback as it is found and
/// counting what it checked ([`Checker::summary`]).
pub struct Checker<'s> {
    limit: usize,
    sink: &'s mut ProblemSink<'s>,
    summary: Summary,
    scratch: Vec<u8>,
    /// The last partition leader epoch of the segment checked last, with its entry's last
    /// offset, and the `chain` that segment left (its last offset): the next segment of the
    /// same partition, whose `chain` is that one, goes on from it ([`epoch_step`]).
    epoch_chain: Option<(i64, (i32, i64))>,
}

impl fmt::Debug for Checker<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checker")
            .field("limit", &self.limit)
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

impl<'s> Checker<'s> {
    /// A checker decompressing at most `max_decompressed_bytes` per entry and reporting
    /// problems to `sink`.
    pub fn new(max_decompressed_bytes: usize, sink: &'s mut ProblemSink<'s>) -> Self {
        Checker {
            limit: max_decompressed_bytes,
            sink,
            summary: Summary::default(),
            scratch: Vec::new(),
            epoch_chain: None,
        }
    }

    /// What was checked so far.
    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// The index rules, reporting to this checker.
    fn rules(
        &mut self,
    ) -> Rules<impl FnMut(&str, Option<u64>, IndexKind, &str) -> io::Result<()> + use<'_, 's>> {
        Rules(
            move |file: &str, at: Option<u64>, kind: IndexKind, message: &str| {
                self.problem(file, at, kind.problem_kind(), message)
            },
        )
    }

    /// Reports a problem.
    fn problem(
        &mut self,
        file: &str,
        position: Option<u64>,
        kind: ProblemKind,
        message: &str,
    ) -> io::Result<()> {
        self.summary.problems += 1;
        (self.sink)(Problem {
            file: file.to_string(),
            position,
            kind,
            message: message.to_string(),
        })
    }

    /// Reports a problem the caller found (a directory that cannot be read, say), counting it.
    ///
    /// # Errors
    ///
    /// The error of the problem callback.
    pub fn report(&mut self, problem: Problem) -> io::Result<()> {
        self.summary.problems += 1;
        (self.sink)(problem)
    }

    /// Checks a partition directory (see [`check_partition`]); returns the offset range its
    /// segments hold (first segment's base offset, offset after the last entry) when they hold
    /// any.
    ///
    /// # Errors
    ///
    /// As [`check_partition`], and the error of the problem callback.
    pub fn partition_dir(&mut self, dir: &Path) -> CheckResult<Option<(i64, i64)>> {
        let mut names: Vec<String> = io_context(std::fs::read_dir(dir), || {
            format!("cannot list {}", dir.display())
        })?
        .filter_map(|e| e.ok().and_then(|e| e.file_name().into_string().ok()))
        .collect();
        names.sort();
        let mut segments: Vec<(i64, PathBuf)> = Vec::new();
        let mut other_logs = Vec::new();
        for n in &names {
            let p = dir.join(n);
            match segment_base(&p) {
                Some(base) => segments.push((base, p)),
                None if n.ends_with(LOG_SUFFIX) => other_logs.push(p),
                None => {}
            }
        }
        if segments.is_empty() && other_logs.is_empty() {
            return Err(CheckError::NoSegments(dir.to_path_buf()));
        }
        segments.sort_by_key(|s| s.0);
        let mut chain = None;
        for (base, path) in &segments {
            self.segment_file(path, Some(*base), &mut chain)?;
        }
        for path in &other_logs {
            self.segment_file(path, None, &mut None)?;
        }
        // Wrapping: offsets near i64::MAX are damage, reported elsewhere, never a panic.
        let log_end = chain.map(|last: i64| last.wrapping_add(1));
        for n in &names {
            let p = dir.join(n);
            if let Some(offset) = files::parse_file_name(n, SNAPSHOT_SUFFIX) {
                self.snapshot(&p, offset, log_end)?;
            } else if n == LEADER_EPOCH_CHECKPOINT_FILE {
                self.epoch_checkpoint(&p, log_end)?;
            } else if n == files::CONFIG_FILE {
                self.config(&p)?;
            }
        }
        if names.iter().any(|n| n == files::CLEANER_OFFSET_FILE) {
            self.compaction(dir)?;
        }
        let first = segments.first().map(|s| s.0);
        Ok(first.map(|f| (f, log_end.unwrap_or(f))))
    }

    /// Checks one file of entries; `base` is its base offset when it is a segment (its indexes
    /// are checked too); `chain` is the last offset of the previous segment of the partition,
    /// updated to this one's.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or the problem callback failed.
    pub fn segment_file(
        &mut self,
        path: &Path,
        base: Option<i64>,
        chain: &mut Option<i64>,
    ) -> CheckResult<()> {
        let mut source = io_context(EntryStream::open_file(path, None), || {
            format!("cannot open {}", path.display())
        })?;
        let name = path.display().to_string();
        self.entries(&mut source, &name, Some(path), base, chain)
    }

    /// Checks the entries of `source`, named `name` in problems. With `path` (the file it
    /// reads) and `base` (its base offset), a segment whose indexes are checked too; `chain` is
    /// the last offset of the previous segment, updated to this one's when `base` is given.
    /// The last partition leader epoch of a segment carries over to the next one this checker
    /// is given with the `chain` it left, so that epochs are checked across segments too.
    ///
    /// # Errors
    ///
    /// The source or an index cannot be read, or the problem callback failed.
    pub fn entries(
        &mut self,
        source: &mut dyn EntrySource,
        name: &str,
        path: Option<&Path>,
        base: Option<i64>,
        chain: &mut Option<i64>,
    ) -> CheckResult<()> {
        let indexes = match (base, path) {
            (Some(b), Some(path)) => [
                self.load_index(&sibling(path, INDEX_SUFFIX), IndexKind::Offset, b)?,
                self.load_index(&sibling(path, TIME_INDEX_SUFFIX), IndexKind::Time, b)?,
                self.load_index(&sibling(path, TXN_INDEX_SUFFIX), IndexKind::Txn, b)?,
            ],
            _ => [None, None, None],
        };
        self.entries_with_indexes(source, name, path, base, chain, indexes)
    }

    /// Checks a segment held in memory, as [`Checker::segment_file`] checks one on disk: `log`
    /// is the segment's bytes, named `name` in problems (positions are positions in `log`),
    /// `base` its base offset, and `indexes` the bytes of its offset, time and transaction
    /// indexes, each named as given. Used for segments read from elsewhere (the remote tier).
    ///
    /// # Errors
    ///
    /// The problem callback failed.
    pub fn segment_bytes(
        &mut self,
        log: Vec<u8>,
        name: &str,
        base: i64,
        indexes: SegmentIndexBytes<'_>,
        chain: &mut Option<i64>,
    ) -> CheckResult<()> {
        let len = log.len() as u64;
        let mut source = EntryStream::new(io::Cursor::new(log), Some(len));
        self.segment_entries(&mut source, name, base, indexes, chain)
    }

    /// Checks a segment read from `source`, as [`Checker::segment_bytes`] checks one in
    /// memory: one entry in memory at a time, so a segment streamed from elsewhere (the
    /// remote tier, chunk by chunk) costs memory by its largest entry, not its size. A read
    /// error of `source` is returned, after the problems of the entries before it.
    ///
    /// # Errors
    ///
    /// `source` failed, or the problem callback did.
    pub fn segment_entries(
        &mut self,
        source: &mut dyn EntrySource,
        name: &str,
        base: i64,
        indexes: SegmentIndexBytes<'_>,
        chain: &mut Option<i64>,
    ) -> CheckResult<()> {
        let mut loaded = [None, None, None];
        for (slot, (kind, given)) in loaded.iter_mut().zip([
            (IndexKind::Offset, indexes.offset),
            (IndexKind::Time, indexes.time),
            (IndexKind::Txn, indexes.txn),
        ]) {
            if let Some((index_name, bytes)) = given {
                self.summary.files += 1;
                *slot = Some(self.parse_index(index_name, bytes, kind, base)?);
            }
        }
        self.entries_with_indexes(source, name, None, Some(base), chain, loaded)
    }

    /// [`Checker::entries`] with its indexes already loaded. With `path` (the file `source`
    /// reads), damage in the middle of the file does not end the check: the entries after it
    /// are found as salvage finds them and checked too, and the problem says where they
    /// resume.
    fn entries_with_indexes(
        &mut self,
        source: &mut dyn EntrySource,
        name: &str,
        path: Option<&Path>,
        base: Option<i64>,
        chain: &mut Option<i64>,
        [mut oi, mut ti, mut tx]: [Option<Index>; 3],
    ) -> CheckResult<()> {
        self.summary.files += 1;
        if let (Some(b), Some(prev)) = (base, *chain) {
            if b <= prev {
                self.problem(
                    name,
                    None,
                    ProblemKind::Offsets,
                    &format!(
                        "segment base offset {b} is not above the previous segment's last offset {prev}"
                    ),
                )?;
            }
        }
        let mut prev_last = *chain;
        // The previous segment's last epoch, when `chain` is still where that segment left it.
        let mut prev_epoch = self
            .epoch_chain
            .filter(|(last, _)| *chain == Some(*last))
            .map(|(_, e)| e);
        let mut running_max = -1i64;
        let mut clean = true;
        let mut end = 0u64;
        // The rest of the file after damage in its middle, when intact entries follow it.
        let mut resumed: Option<EntryStream> = None;
        loop {
            let src: &mut dyn EntrySource = match resumed.as_mut() {
                Some(r) => r,
                None => &mut *source,
            };
            let next = io_context(src.next_entry(), || format!("cannot read {name}"))?;
            let (facts, recovery_first, epoch) = match next {
                Next::End => break,
                Next::Partial(p) => {
                    clean = false;
                    let (position, bytes) = (p.position as u64, p.bytes);
                    if self.resume(name, path, position, LENGTH_PAST_THE_END, &mut resumed)? {
                        continue;
                    }
                    self.problem(
                        name,
                        Some(position),
                        ProblemKind::Truncated,
                        &format!("truncated entry: the last {bytes} bytes are not a whole entry"),
                    )?;
                    break;
                }
                Next::Error(e) => {
                    clean = false;
                    let e = e.to_string();
                    let position = src.position() as u64;
                    let rest = io_context(src.remaining_bytes(), || format!("cannot read {name}"))?;
                    if self.resume(name, path, position, &e, &mut resumed)? {
                        continue;
                    }
                    self.problem(
                        name,
                        Some(position),
                        ProblemKind::Entry,
                        &format!("{e}; the {rest} bytes from here on cannot be read"),
                    )?;
                    break;
                }
                Next::Entry(batch) => {
                    self.summary.entries += 1;
                    self.summary.bytes += batch.size_in_bytes() as u64;
                    end = (batch.position() + batch.size_in_bytes()) as u64;
                    let (facts, records, problem) =
                        entry_facts(&batch, &mut self.scratch, self.limit);
                    self.summary.records += records;
                    if let Some(p) = problem {
                        self.problem(name, Some(facts.position), ProblemKind::Entry, &p)?;
                    }
                    let epoch = match &batch {
                        Batch::V2(v) => Some(v.raw_partition_leader_epoch()),
                        Batch::Legacy(_) => None,
                    };
                    (facts, segment::recovery_first_offset(&batch), epoch)
                }
            };
            if let Some(prev) = prev_last {
                if facts.first_offset <= prev {
                    self.problem(
                        name,
                        Some(facts.position),
                        ProblemKind::Offsets,
                        &format!(
                            "entry with offsets {}..={} does not follow the previous last offset {prev}",
                            facts.first_offset, facts.last_offset
                        ),
                    )?;
                }
            }
            if let Some(b) = base {
                // Recovery's rule: a compressed v0/v1 wrapper counts as its last offset (a
                // segment may be named after it).
                if recovery_first < b {
                    self.problem(
                        name,
                        Some(facts.position),
                        ProblemKind::Offsets,
                        &format!(
                            "entry with offsets {}..={} is below the segment's base offset {b}",
                            facts.first_offset, facts.last_offset
                        ),
                    )?;
                }
            }
            if let Some(why) = segment::leaves_no_next_offset(facts.last_offset) {
                // As recovery has it (`segment::offsets_check`).
                self.problem(
                    name,
                    Some(facts.position),
                    ProblemKind::Offsets,
                    &format!("entry with first offset {}: {why}", facts.first_offset),
                )?;
            }
            if let Some(message) = epoch.and_then(|e| epoch_step(&mut prev_epoch, e, &facts)) {
                self.problem(name, Some(facts.position), ProblemKind::Entry, &message)?;
            }
            prev_last = Some(prev_last.map_or(facts.last_offset, |p| p.max(facts.last_offset)));
            running_max = running_max.max(facts.max_timestamp);
            self.rules()
                .match_indexes([&mut oi, &mut ti, &mut tx], &facts, running_max, name)?;
        }
        // Index entries left over point past the last entry; after a corrupt or truncated entry
        // they cannot be checked (the problem is already reported).
        if clean {
            self.rules().index_leftovers([oi, ti, tx], name, end)?;
        }
        if base.is_some() {
            *chain = prev_last;
            self.epoch_chain = prev_last.zip(prev_epoch);
        }
        Ok(())
    }

    /// After damage at byte `position` of `name` (`what` it is): when intact entries follow it
    /// in the file (`path`), reports the damage and where they resume, points `resumed` at them
    /// and returns `true`; `false` when nothing intact follows (a torn tail) or the source is
    /// not a file.
    fn resume(
        &mut self,
        name: &str,
        path: Option<&Path>,
        position: u64,
        what: &str,
        resumed: &mut Option<EntryStream>,
    ) -> CheckResult<bool> {
        let Some((at, first, rest)) = resume_after(path, position, name)? else {
            return Ok(false);
        };
        self.problem(
            name,
            Some(position),
            ProblemKind::Entry,
            &damage_before_intact(what, position, at, first),
        )?;
        *resumed = Some(rest);
        Ok(true)
    }

    /// Reads a small file beside the segments; `None` when it does not exist.
    fn read_file(&mut self, path: &Path) -> CheckResult<Option<Vec<u8>>> {
        match std::fs::read(path) {
            Ok(b) => {
                self.summary.files += 1;
                Ok(Some(b))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(CheckError::Io {
                what: format!("cannot read {}", path.display()),
                error,
            }),
        }
    }

    /// Loads a fixed-size-entry index, reporting structural problems (a partial entry, entries
    /// that do not increase); a zero-filled tail is dropped as preallocated space.
    fn load_index(
        &mut self,
        path: &Path,
        kind: IndexKind,
        base: i64,
    ) -> CheckResult<Option<Index>> {
        let Some(bytes) = self.read_file(path)? else {
            return Ok(None);
        };
        let name = path.display().to_string();
        self.parse_index(&name, &bytes, kind, base).map(Some)
    }

    /// Parses a fixed-size-entry index named `name` (see [`Checker::load_index`]).
    fn parse_index(
        &mut self,
        name: &str,
        bytes: &[u8],
        kind: IndexKind,
        base: i64,
    ) -> CheckResult<Index> {
        let name = name.to_string();
        let pk = kind.problem_kind();
        let size = kind.entry_size();
        let whole = bytes.len() / size * size;
        if whole != bytes.len() {
            self.problem(
                &name,
                Some(whole as u64),
                pk,
                &format!(
                    "{} bytes of a partial entry at the end (entries are {size} bytes)",
                    bytes.len() - whole
                ),
            )?;
        }
        let raw: Vec<&[u8]> = bytes[..whole].chunks_exact(size).collect();
        // Preallocated space: a run of all-zero entries at the end (for the txnindex, which
        // Kafka never preallocates, zeros are entries like any other).
        let mut used = raw.len();
        if kind != IndexKind::Txn {
            while used > 0 && raw[used - 1].iter().all(|&b| b == 0) {
                used -= 1;
            }
        }
        let mut entries: Vec<IndexEntry> = Vec::with_capacity(used);
        for (n, e) in raw[..used].iter().enumerate() {
            let at = (n * size) as u64;
            let n = n as u64;
            let parsed = match kind {
                IndexKind::Offset => {
                    let (rel, pos) = offset::decode_entry(e);
                    if rel < 0 || pos < 0 {
                        Err(format!(
                            "entry {n} has a negative relative offset {rel} or position {pos}"
                        ))
                    } else {
                        Ok(IndexEntry {
                            at,
                            n,
                            offset: base.wrapping_add(i64::from(rel)),
                            value: i64::from(pos),
                            first: 0,
                        })
                    }
                }
                IndexKind::Time => {
                    let (ts, rel) = time::decode_entry(e);
                    if rel < 0 {
                        Err(format!("entry {n} has a negative relative offset {rel}"))
                    } else {
                        Ok(IndexEntry {
                            at,
                            n,
                            offset: base.wrapping_add(i64::from(rel)),
                            value: ts,
                            first: 0,
                        })
                    }
                }
                IndexKind::Txn => match AbortedTxn::parse(e) {
                    Ok(Some(t)) if t.first_offset > t.last_offset || t.last_offset < base => {
                        Err(format!(
                            "entry {n} (producer {}) has offsets {}..={}, \
                             which do not end in this segment (base offset {base})",
                            t.producer_id, t.first_offset, t.last_offset
                        ))
                    }
                    Ok(Some(t)) => Ok(IndexEntry {
                        at,
                        n,
                        offset: t.last_offset,
                        value: t.producer_id,
                        first: t.first_offset,
                    }),
                    // Whole entries only here, so a parse error is a version.
                    _ => Err(format!(
                        "entry {n} has version {} (expected 0)",
                        crate::transaction::entry_version(e)
                    )),
                },
            };
            let entry = match parsed {
                Ok(entry) => entry,
                Err(what) => {
                    self.problem(&name, Some(at), pk, &what)?;
                    continue;
                }
            };
            self.rules()
                .push_index_entry(&name, kind, &mut entries, entry)?;
        }
        Ok(Index {
            kind,
            name,
            entries,
            next: 0,
        })
    }

    /// Kafka's producer snapshot (see [`producer_state`]): version, CRC-32C of everything
    /// after it, then an array of producer entries; and no snapshot past the log end.
    fn snapshot(&mut self, path: &Path, offset: i64, log_end: Option<i64>) -> CheckResult<()> {
        let Some(bytes) = self.read_file(path)? else {
            return Ok(());
        };
        let name = path.display().to_string();
        let Some(h) = producer_state::snapshot_header(&bytes) else {
            return Ok(self.problem(
                &name,
                Some(0),
                ProblemKind::Snapshot,
                &format!("{} bytes is too short for a producer snapshot", bytes.len()),
            )?);
        };
        if h.version != SNAPSHOT_VERSION {
            return Ok(self.problem(
                &name,
                Some(0),
                ProblemKind::Snapshot,
                &format!("version {} (expected {SNAPSHOT_VERSION})", h.version),
            )?);
        }
        if h.stored_crc != h.computed_crc {
            self.problem(
                &name,
                Some(h.crc_position),
                ProblemKind::Snapshot,
                &format!(
                    "crc mismatch (stored {}, computed {})",
                    h.stored_crc, h.computed_crc
                ),
            )?;
        }
        let expected = usize::try_from(h.count)
            .ok()
            .and_then(|c| c.checked_mul(SNAPSHOT_ENTRY_SIZE))
            .and_then(|b| b.checked_add(h.header_size));
        if expected != Some(bytes.len()) {
            self.problem(
                &name,
                Some(h.count_position),
                ProblemKind::Snapshot,
                &format!(
                    "{} producer entries do not fit the {} bytes of the file",
                    h.count,
                    bytes.len()
                ),
            )?;
        }
        if let Some(end) = log_end {
            if offset > end {
                self.problem(
                    &name,
                    None,
                    ProblemKind::Snapshot,
                    &format!("snapshot at offset {offset} is past the log end offset {end}"),
                )?;
            }
        }
        Ok(())
    }

    /// Kafka's leader epoch checkpoint: `0`, a count, then `epoch start-offset` lines with both
    /// increasing, none starting past the log end offset `log_end` (Kafka truncates the cache to
    /// the log end; an epoch may start at it, a leader that has written nothing yet). An empty
    /// file, or one that ends after the version, holds no entries (Kafka's `CheckpointFile` reads
    /// it so; Kafka 4.4 leaves an empty file for a log without epochs).
    fn epoch_checkpoint(&mut self, path: &Path, log_end: Option<i64>) -> CheckResult<()> {
        let Some(bytes) = self.read_file(path)? else {
            return Ok(());
        };
        let name = path.display().to_string();
        if let Some(p) = files::epoch_checkpoint_problem(&bytes) {
            self.problem(&name, None, ProblemKind::Checkpoint, &p)?;
        } else if let Some(end) = log_end {
            let past = files::parse_epoch_checkpoint(path, &bytes)
                .unwrap_or_default()
                .into_iter()
                .find(|&(_, start)| start > end);
            if let Some((epoch, start)) = past {
                self.problem(
                    &name,
                    None,
                    ProblemKind::Checkpoint,
                    &format!(
                        "epoch {epoch} starts at offset {start}, past the log end offset {end}"
                    ),
                )?;
            }
        }
        Ok(())
    }

    /// `krec-log.json`: JSON holding a valid [`crate::LogConfig`].
    fn config(&mut self, path: &Path) -> CheckResult<()> {
        let Some(bytes) = self.read_file(path)? else {
            return Ok(());
        };
        let name = path.display().to_string();
        // What every other reader of the file refuses (exit 1), said the same way.
        let problem = match files::parse_config(path, &bytes) {
            Err(crate::Error::DamagedConfig { reason, .. }) => reason,
            Err(e) => e.to_string(),
            Ok(_) => return Ok(()),
        };
        self.problem(&name, None, ProblemKind::Config, &problem)?;
        Ok(())
    }

    /// A compacted log's cleaned part (below `krec-cleaner-offset`): every key at most once among
    /// the records a read_committed consumer sees, no record without a key, every v2 tombstone
    /// in a batch with a delete horizon (the cleaner sets it on the first pass that keeps one).
    fn compaction(&mut self, dir: &Path) -> CheckResult<()> {
        let path = dir.join(files::CLEANER_OFFSET_FILE);
        let Some(bytes) = self.read_file(&path)? else {
            return Ok(());
        };
        let name = path.display().to_string();
        let Some(first_dirty) = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| t.trim().parse::<i64>().ok())
        else {
            self.problem(&name, None, ProblemKind::Compaction, "expected one offset")?;
            return Ok(());
        };
        // Problems of the segments themselves are reported by the other checks.
        let Ok(log) = crate::Log::open_read_only(dir) else {
            return Ok(());
        };
        if !log.config().cleanup_policy.compact
            || first_dirty < log.log_start_offset()
            || first_dirty > log.log_end_offset()
        {
            return Ok(());
        }
        let end = first_dirty.min(log.last_stable_offset());
        let rc = crate::IsolationLevel::ReadCommitted;
        let mut visible = BTreeSet::new();
        let mut offset = log.log_start_offset();
        while offset < end {
            let Ok(c) = log.consume(offset, 1 << 20, rc) else {
                return Ok(());
            };
            visible.extend(c.records.iter().map(|r| r.offset));
            if c.next_offset <= offset {
                break;
            }
            offset = c.next_offset;
        }
        let mut seen: HashMap<Vec<u8>, i64> = HashMap::new();
        let mut problems = Vec::new();
        let mut offset = log.log_start_offset();
        while offset < end && problems.len() < 100 {
            let Ok(r) = log.read(offset, 1 << 20) else {
                return Ok(());
            };
            for b in krecords_codec::read::Entries::new(&r.bytes).flatten() {
                let (control, horizon) = match &b {
                    Batch::V2(v) => (v.is_control(), Some(v.has_delete_horizon())),
                    Batch::Legacy(_) => (false, None),
                };
                if control {
                    continue;
                }
                let Ok(records) = b.records(&mut self.scratch, self.limit) else {
                    continue;
                };
                for rec in records.flatten() {
                    let o = rec.offset();
                    if o < offset || o >= end || !visible.contains(&o) {
                        continue;
                    }
                    let Some(key) = rec.key() else {
                        problems.push(format!("offset {o}: a record without a key below the first dirty offset {first_dirty}"));
                        continue;
                    };
                    if let Some(prev) = seen.insert(key.to_vec(), o) {
                        problems.push(format!(
                            "offset {o}: key {} also at offset {prev}, both below the first dirty offset {first_dirty}",
                            String::from_utf8_lossy(key)
                        ));
                    }
                    if rec.value().is_none() && horizon == Some(false) {
                        problems.push(format!("offset {o}: a tombstone in a batch without a delete horizon below the first dirty offset {first_dirty}"));
                    }
                }
            }
            if r.next_offset <= offset {
                break;
            }
            offset = r.next_offset;
        }
        for p in problems {
            self.problem(&name, None, ProblemKind::Compaction, &p)?;
        }
        Ok(())
    }

    /// A broker data directory's own files: `meta.properties` and the offset checkpoints
    /// against its partitions (`all`: every partition directory; `ranges`: first and next
    /// offset of each partition with segments, as [`Checker::partition_dir`] returns them).
    ///
    /// # Errors
    ///
    /// A file cannot be read, or the problem callback failed.
    pub fn data_dir_files(
        &mut self,
        root: &Path,
        all: &[PartitionDir],
        ranges: &BTreeMap<(String, i32), (i64, i64)>,
    ) -> CheckResult<()> {
        let meta = root.join(data_dir::META_PROPERTIES);
        if let Some(bytes) = self.read_file(&meta)? {
            if let Err(e) = data_dir::parse_meta_properties(&bytes) {
                self.problem(&meta.display().to_string(), None, ProblemKind::Meta, &e)?;
            }
        }
        let dirs: BTreeSet<(String, i32)> =
            all.iter().map(|p| (p.topic.clone(), p.partition)).collect();
        for name in data_dir::OFFSET_CHECKPOINTS {
            let path = root.join(name);
            let Some(bytes) = self.read_file(&path)? else {
                continue;
            };
            let file = path.display().to_string();
            let entries = match data_dir::parse_offset_checkpoint(&bytes) {
                Ok(e) => e,
                Err(e) => {
                    self.problem(&file, None, ProblemKind::Checkpoint, &e)?;
                    continue;
                }
            };
            for e in entries {
                let key = (e.topic.clone(), e.partition);
                let what = format!("{}-{}", e.topic, e.partition);
                let msg = if !dirs.contains(&key) {
                    Some(format!(
                        "names {what}, which has no partition directory here"
                    ))
                } else if e.offset < 0 {
                    Some(format!("{what}: negative offset {}", e.offset))
                } else {
                    match ranges.get(&key) {
                        Some(&(_, end)) if e.offset > end => Some(format!(
                            "{what}: offset {} is past the partition's log end {end}",
                            e.offset
                        )),
                        _ => None,
                    }
                };
                if let Some(msg) = msg {
                    self.problem(&file, None, ProblemKind::Checkpoint, &msg)?;
                }
            }
        }
        Ok(())
    }
}

/// Checks an entry deeply; returns what the offset and index checks need, its record count and
/// the problem found, if any. The facts of an entry that fails come from its header alone (a
/// v0/v1 wrapper's first offset is then taken as its last).
fn entry_facts(
    batch: &Batch<'_>,
    scratch: &mut Vec<u8>,
    limit: usize,
) -> (EntryFacts, u64, Option<String>) {
    let position = batch.position() as u64;
    let mut facts = match batch {
        Batch::V2(b) => EntryFacts {
            position,
            first_offset: b.base_offset(),
            last_offset: b.last_offset(),
            max_timestamp: b.max_timestamp(),
            abort_marker_of: None,
        },
        Batch::Legacy(l) => EntryFacts {
            position,
            first_offset: l.offset(),
            last_offset: l.offset(),
            max_timestamp: l.timestamp().unwrap_or(-1),
            abort_marker_of: None,
        },
    };
    if let Err(e) = batch.validate_with(scratch, limit) {
        return (facts, 0, Some(e.to_string()));
    }
    match deep_facts(batch, scratch, limit, &mut facts) {
        Ok(records) => (facts, records, None),
        Err(e) => (facts, 0, Some(e)),
    }
}

/// The rule that partition leader epochs never go down along a partition's log
/// ([`epoch_falls`], which salvage shares): a v2 entry (`facts`) with the stored epoch `epoch`
/// after the last entry with one, `prev` (its epoch and last offset, updated here). Followers truncate to the leader's log before they fetch,
/// so a replica's log holds the epochs of its leaders in order; the CRC does not cover the
/// field, so a flipped bit there shows only here. Epoch -1 ("none", written by some tools) is
/// skipped; another negative one is reported when it follows an epoch, and never followed.
///
/// The problem is the entry whose epoch is lower than the one before it, once: a bit that
/// lowers an epoch is found at its entry, a bit that raises one (0, 0, 432, 0, 0) at the entry
/// after it, whose right epoch is then below the raised one (and not at all in the last v2
/// entry of the partition).
fn epoch_step(prev: &mut Option<(i32, i64)>, epoch: i32, facts: &EntryFacts) -> Option<String> {
    epoch_falls(prev, epoch, facts.last_offset).map(|(p, at)| {
        format!(
            "entry with offsets {}..={}: partition leader epoch {epoch} is below epoch {p} of \
             an earlier entry (last offset {at}): epochs never go down in a partition's log \
             (a flipped bit, or logs of two replicas mixed)",
            facts.first_offset, facts.last_offset
        )
    })
}

/// Fills in what only the records tell (a wrapper's first offset, an abort marker) and
/// returns the record count.
fn deep_facts(
    batch: &Batch<'_>,
    scratch: &mut Vec<u8>,
    limit: usize,
    facts: &mut EntryFacts,
) -> Result<u64, String> {
    let position = facts.position;
    match batch {
        Batch::V2(b) => {
            if b.is_control() {
                for r in batch.records(scratch, limit).map_err(|e| e.to_string())? {
                    let r = r.map_err(|e| e.to_string())?;
                    if let Ok(k) = ControlRecordKey::parse(r.key(), batch.position()) {
                        if k.kind == ControlRecordType::Abort {
                            facts.abort_marker_of = Some(b.raw_producer_id());
                        }
                    }
                }
            }
            Ok(u64::try_from(b.records_count()).unwrap_or(0))
        }
        Batch::Legacy(l) if !l.is_compressed() => Ok(1),
        Batch::Legacy(_) => {
            let mut first = None;
            let mut prev: Option<i64> = None;
            let mut count = 0u64;
            for r in batch.records(scratch, limit).map_err(|e| e.to_string())? {
                let r = r.map_err(|e| e.to_string())?;
                if let Some(p) = prev {
                    if r.offset() <= p {
                        return Err(format!(
                            "entry at byte {position}: inner message offset {} does not increase after {p}",
                            r.offset()
                        ));
                    }
                }
                if r.offset() > batch.last_offset() {
                    return Err(format!(
                        "entry at byte {position}: inner message offset {} is past the wrapper offset {}",
                        r.offset(),
                        batch.last_offset()
                    ));
                }
                first.get_or_insert(r.offset());
                prev = Some(r.offset());
                count += 1;
            }
            facts.first_offset = first.unwrap_or(facts.last_offset);
            Ok(count)
        }
    }
}
