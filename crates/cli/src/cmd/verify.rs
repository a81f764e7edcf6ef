//! `krec verify`: every entry checked deeply (CRC, structure, decompression), offsets in order,
//! and for partition directories the files derived from the log (offset and time indexes,
//! transaction indexes, producer snapshots, the leader epoch checkpoint, krec-log.json) checked
//! against it. Read-only, streaming: one entry in memory at a time, plus each index file.

use crate::args::{DecompressArgs, Format};
use crate::kafka::{expand_inputs, KafkaArgs, KafkaUrl};
use crate::outcome::{Context, Failure, Outcome};
use crate::source::{Next, Source};
use krecords_codec::control::{ControlRecordKey, ControlRecordType};
use krecords_codec::read::Batch;
use krecords_log::data_dir::{self, PartitionDir};
use krecords_log::files::{
    self, INDEX_SUFFIX, LEADER_EPOCH_CHECKPOINT_FILE, LOG_SUFFIX, TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Check segments and partition directories: CRCs, structure, offsets, indexes.
///
/// For every entry: the CRC, the structure and the records, decompressing compressed ones (inner
/// CRCs of v0/v1 wrappers too); offsets increasing across entries and, in a partition
/// directory, across segments (each above the previous one and at or above its file's base
/// offset). A truncated entry at the end of a file is a problem (a torn write).
///
/// For a segment named <20-digit base offset>.log, the files beside it:
///   .index      entries increasing, each at an entry boundary of the .log with that entry's
///               last offset (kafka-dump-log --verify-index-only's rule), none past the end
///   .timeindex  timestamps increasing, each the largest timestamp of the entries up to its
///               offset, offsets within the segment
///   .txnindex   Kafka's 34-byte aborted-transaction entries, each ending at an abort marker
///               of its producer
/// and in the directory: <offset>.snapshot producer snapshots (version, CRC-32C, entry count),
/// leader-epoch-checkpoint and krec-log.json; for a compacted log with krec-cleaner-offset, the
/// cleaned part below it (each key once among committed records, no keyless record, v2
/// tombstones with a delete horizon). Zero-filled index tails (preallocated space of an
/// active segment) are not problems; missing index files are not either (Kafka rebuilds them).
///
/// A broker's data directory (a log.dirs root: meta.properties, checkpoints and TOPIC-N
/// partition directories, internal topics included) is checked whole: every partition as above,
/// spread over --threads workers, then meta.properties and the offset checkpoints
/// (recovery-point, log-start, replication, cleaner) against the partitions they name: a
/// partition without a directory, an offset past the partition's log end. The report is in
/// partition order whatever the threading: each problem line names its file, then one line per
/// partition with problems and a summary of partitions ok and not. --topic and --partition
/// narrow it.
///
/// Prints one line per problem with the file and byte position, then a summary. Exit 1 when
/// there is any problem, 0 when everything is clean, 2 when a path holds nothing to verify.
///
/// Examples:
///   krec verify /var/kafka/data                      (a whole broker)
///   krec verify /var/kafka/data --topic 'orders*' --threads 4
///   krec verify /var/kafka/events-0/
///   krec verify 00000000000000000000.log other.bin
///   krec verify --format json /tmp/events-0 | jq 'select(.check)'
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Segment files, files of concatenated entries, partition directories, `-` for stdin, or
    /// kafka://HOST:PORT/TOPIC[/PARTITION].
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Output: one line per problem and a summary, or JSON Lines (one object per problem, then
    /// {"summary":{...}}).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    decompress: DecompressArgs,
    #[command(flatten)]
    kafka: KafkaArgs,
    /// In a data directory, only the partitions of topics matching this glob (*, ?, [...]).
    #[arg(long, value_name = "GLOB")]
    topic: Option<String>,
    /// In a data directory, only this partition number.
    #[arg(long, value_name = "N")]
    partition: Option<i32>,
    /// Partitions verified at once in a data directory (default: the machine's cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

/// One problem, as `--format json` prints it.
#[derive(Serialize)]
struct Problem<'a> {
    /// `topic-partition`, when a data directory is verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    partition: Option<&'a str>,
    file: &'a str,
    /// Byte position in the file, when the problem has one.
    position: Option<u64>,
    /// entry | offsets | truncated | index | timeindex | txnindex | snapshot | checkpoint |
    /// config | meta | io
    check: &'static str,
    message: &'a str,
}

/// What was checked.
#[derive(Default, Serialize, Clone, Copy)]
struct Summary {
    files: u64,
    entries: u64,
    records: u64,
    bytes: u64,
    problems: u64,
    /// Partitions of data directories verified, and those with problems.
    #[serde(skip_serializing_if = "Option::is_none")]
    partitions: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partitions_with_problems: Option<u64>,
}

impl Summary {
    fn add(&mut self, o: &Summary) {
        self.files += o.files;
        self.entries += o.entries;
        self.records += o.records;
        self.bytes += o.bytes;
        self.problems += o.problems;
    }
}

/// Whether `dir` holds segments of its own (a partition directory) rather than partitions.
fn has_logs(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.ends_with(LOG_SUFFIX))
        })
    })
}

/// Runs the subcommand.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let mut v = Verifier {
        format: args.format,
        limit: args.decompress.max_decompressed_bytes,
        out,
        summary: Summary::default(),
        scratch: Vec::new(),
        partition: None,
    };
    for path in &args.paths {
        if path.to_str().and_then(KafkaUrl::parse).is_some() {
            // A live topic or partition: its entries, fetched, checked as a file of entries.
            let inputs = expand_inputs(std::slice::from_ref(path), &args.kafka)?;
            for input in &inputs.items {
                let source = inputs.open(input, None)?;
                v.source(source, None, None, &mut None)?;
            }
        } else if path.is_dir() && !has_logs(path) && data_dir::is_data_dir(path) {
            v.data_dir(path, &args)?;
        } else if path.is_dir() {
            v.directory(path)?;
        } else {
            let base = segment_base(path);
            let mut chain = None;
            v.segment(path, base, &mut chain)?;
        }
    }
    let s = &v.summary;
    match v.format {
        Format::Json => {
            serde_json::to_writer(&mut *v.out, &serde_json::json!({ "summary": s }))
                .map_err(io::Error::from)?;
            v.out.write_all(b"\n")?;
        }
        Format::Text => writeln!(
            v.out,
            "{}{} files, {} entries, {} records, {} bytes: {}",
            match (s.partitions, s.partitions_with_problems) {
                (Some(n), Some(bad)) =>
                    format!("{n} partitions ({} ok, {bad} with problems), ", n - bad),
                _ => String::new(),
            },
            s.files,
            s.entries,
            s.records,
            s.bytes,
            match s.problems {
                0 => "no problems".to_string(),
                1 => "1 problem".to_string(),
                n => format!("{n} problems"),
            }
        )?,
    }
    Ok(if s.problems == 0 {
        Outcome::Ok
    } else {
        Outcome::DataProblem
    })
}

/// What verifying one partition of a data directory gave.
struct PartitionResult {
    /// Its problem lines, in the output format.
    output: Vec<u8>,
    summary: Summary,
    range: Option<(i64, i64)>,
}

/// Verifies `parts` on `threads` workers; the results come back in the order of `parts`.
fn verify_partitions(
    parts: &[PartitionDir],
    threads: usize,
    format: Format,
    limit: usize,
) -> Vec<PartitionResult> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<PartitionResult>>> =
        parts.iter().map(|_| Mutex::new(None)).collect();
    let total: u64 = parts.iter().map(|p| log_bytes(&p.path)).sum();
    let progress = Mutex::new((
        crate::progress::Progress::new("verify", crate::progress::Unit::Bytes, total, 256 << 20),
        0u64,
    ));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(part) = parts.get(i) else {
                    break;
                };
                let r = verify_one(part, format, limit);
                if let Ok(mut p) = progress.lock() {
                    p.1 += log_bytes(&part.path);
                    let done = p.1;
                    p.0.update(done);
                }
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(r);
                }
            });
        }
    });
    if let Ok(mut p) = progress.lock() {
        p.0.finish();
    }
    slots
        .into_iter()
        .map(|m| {
            m.into_inner().ok().flatten().unwrap_or(PartitionResult {
                output: Vec::new(),
                summary: Summary::default(),
                range: None,
            })
        })
        .collect()
}

/// Bytes of the `.log` files in `dir` (for progress).
fn log_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.ends_with(LOG_SUFFIX))
            })
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    })
}

fn verify_one(part: &PartitionDir, format: Format, limit: usize) -> PartitionResult {
    let mut output = Vec::new();
    let name = part.name();
    let mut v = Verifier {
        format,
        limit,
        out: &mut output,
        summary: Summary::default(),
        scratch: Vec::new(),
        partition: Some(name),
    };
    let range = match v.directory(&part.path) {
        Ok(r) => r,
        // A partition directory without segments (Kafka creates them empty) is fine.
        Err(Failure::Usage(_)) => None,
        Err(f) => {
            let message = match f {
                Failure::Io(e, what) if what.is_empty() => e.to_string(),
                Failure::Io(e, what) => format!("{what}: {e}"),
                Failure::Usage(m) | Failure::Data(m) => m,
            };
            let dir = part.path.display().to_string();
            let _ = v.problem(&dir, None, "io", &message);
            None
        }
    };
    let summary = v.summary;
    PartitionResult {
        output,
        summary,
        range,
    }
}

/// The base offset of a segment file named `<20 digits>.log`.
fn segment_base(path: &Path) -> Option<i64> {
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

fn be_i64(b: &[u8], at: usize) -> i64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(a)
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    i32::from_be_bytes(a)
}

fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}

struct Verifier<'o, W: Write> {
    format: Format,
    limit: usize,
    out: &'o mut W,
    summary: Summary,
    scratch: Vec<u8>,
    /// `topic-partition` while a partition of a data directory is verified.
    partition: Option<String>,
}

/// One entry of an index, with where it is in its file.
#[derive(Debug, Clone, Copy)]
struct IndexEntry {
    /// Byte position of the entry in the index file.
    at: u64,
    /// Entry number.
    n: u64,
    /// Absolute offset.
    offset: i64,
    /// `.index`: position in the .log; `.timeindex`: the timestamp; `.txnindex`: the producer id.
    value: i64,
    /// `.txnindex`: the first offset of the transaction.
    first: i64,
}

/// An index being matched against the entries of its segment, in order.
struct Index {
    name: String,
    entries: Vec<IndexEntry>,
    next: usize,
}

impl Index {
    fn current(&self) -> Option<IndexEntry> {
        self.entries.get(self.next).copied()
    }
}

/// What the scan of a segment needs to know about one entry.
struct EntryFacts {
    position: u64,
    first_offset: i64,
    last_offset: i64,
    max_timestamp: i64,
    /// Producer id of an abort marker batch.
    abort_marker_of: Option<i64>,
}

impl<W: Write> Verifier<'_, W> {
    fn problem(
        &mut self,
        file: &str,
        position: Option<u64>,
        check: &'static str,
        message: &str,
    ) -> io::Result<()> {
        self.summary.problems += 1;
        match self.format {
            Format::Json => {
                let p = Problem {
                    partition: self.partition.as_deref(),
                    file,
                    position,
                    check,
                    message,
                };
                serde_json::to_writer(&mut *self.out, &p).map_err(io::Error::from)?;
                self.out.write_all(b"\n")
            }
            Format::Text => match position {
                Some(p) => writeln!(self.out, "{file}: byte {p}: [{check}] {message}"),
                None => writeln!(self.out, "{file}: [{check}] {message}"),
            },
        }
    }

    /// Verifies a partition directory; returns the offset range its segments hold
    /// (first segment's base offset, offset after the last entry) when they hold any.
    fn directory(&mut self, dir: &Path) -> Result<Option<(i64, i64)>, Failure> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .context(|| format!("cannot list {}", dir.display()))?
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
            return Err(Failure::Usage(format!(
                "{}: no .log files to verify",
                dir.display()
            )));
        }
        segments.sort_by_key(|s| s.0);
        let mut chain = None;
        for (base, path) in &segments {
            self.segment(path, Some(*base), &mut chain)?;
        }
        for path in &other_logs {
            self.segment(path, None, &mut None)?;
        }
        let log_end = chain.map(|last: i64| last + 1);
        for n in &names {
            let p = dir.join(n);
            if let Some(offset) = files::parse_file_name(n, ".snapshot") {
                self.snapshot(&p, offset, log_end)?;
            } else if n == LEADER_EPOCH_CHECKPOINT_FILE {
                self.epoch_checkpoint(&p)?;
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

    /// Verifies a broker's data directory: its partitions in parallel, then its own files.
    fn data_dir(&mut self, root: &Path, args: &Args) -> Result<(), Failure> {
        let pattern = match &args.topic {
            Some(t) => Some(
                glob::Pattern::new(t).map_err(|e| Failure::Usage(format!("--topic {t:?}: {e}")))?,
            ),
            None => None,
        };
        let all =
            data_dir::partition_dirs(root).context(|| format!("cannot list {}", root.display()))?;
        let parts: Vec<PartitionDir> = all
            .iter()
            .filter(|p| pattern.as_ref().is_none_or(|g| g.matches(&p.topic)))
            .filter(|p| args.partition.is_none_or(|n| n == p.partition))
            .cloned()
            .collect();
        if parts.is_empty() {
            return Err(Failure::Usage(format!(
                "{}: no partition directories{} to verify",
                root.display(),
                if args.topic.is_some() || args.partition.is_some() {
                    " match --topic/--partition"
                } else {
                    ""
                }
            )));
        }
        let threads = args
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
            .clamp(1, parts.len());
        let results = verify_partitions(&parts, threads, self.format, self.limit);
        let mut ranges = BTreeMap::new();
        let mut bad = Vec::new();
        for (part, r) in parts.iter().zip(results) {
            self.out.write_all(&r.output)?;
            self.summary.add(&r.summary);
            if r.summary.problems > 0 {
                bad.push(part.name());
            }
            if self.format == Format::Json {
                let line = serde_json::json!({"partition": {
                    "name": part.name(),
                    "dir": part.path.display().to_string(),
                    "ok": r.summary.problems == 0,
                    "problems": r.summary.problems,
                    "files": r.summary.files,
                    "entries": r.summary.entries,
                    "records": r.summary.records,
                    "bytes": r.summary.bytes,
                }});
                serde_json::to_writer(&mut *self.out, &line).map_err(io::Error::from)?;
                self.out.write_all(b"\n")?;
            }
            if let Some(range) = r.range {
                ranges.insert((part.topic.clone(), part.partition), range);
            }
        }
        let bad_partitions = bad.len() as u64;
        // The root's own files, unless only some partitions were asked for.
        if pattern.is_none() && args.partition.is_none() {
            self.partition = None;
            let before = self.summary.problems;
            self.root_files(root, &all, &ranges)?;
            if self.summary.problems > before {
                bad.push(format!("{} (its own files)", root.display()));
            }
        }
        let s = &mut self.summary;
        s.partitions = Some(s.partitions.unwrap_or(0) + parts.len() as u64);
        s.partitions_with_problems = Some(s.partitions_with_problems.unwrap_or(0) + bad_partitions);
        if self.format == Format::Text && !bad.is_empty() {
            writeln!(self.out, "problems in: {}", bad.join(", "))?;
        }
        Ok(())
    }

    /// `meta.properties` and the offset checkpoints of a data directory, against its partitions
    /// (`ranges`: first and next offset of each partition with segments).
    fn root_files(
        &mut self,
        root: &Path,
        all: &[PartitionDir],
        ranges: &BTreeMap<(String, i32), (i64, i64)>,
    ) -> Result<(), Failure> {
        let meta = root.join(data_dir::META_PROPERTIES);
        if let Some(bytes) = self.read_file(&meta)? {
            if let Err(e) = data_dir::parse_meta_properties(&bytes) {
                self.problem(&meta.display().to_string(), None, "meta", &e)?;
            }
        }
        let dirs: std::collections::BTreeSet<(String, i32)> =
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
                    self.problem(&file, None, "checkpoint", &e)?;
                    continue;
                }
            };
            for e in entries {
                let key = (e.topic.clone(), e.partition);
                let what = format!("{}-{}", e.topic, e.partition);
                if !dirs.contains(&key) {
                    let msg = format!("names {what}, which has no partition directory here");
                    self.problem(&file, None, "checkpoint", &msg)?;
                } else if e.offset < 0 {
                    let msg = format!("{what}: negative offset {}", e.offset);
                    self.problem(&file, None, "checkpoint", &msg)?;
                } else if let Some(&(_, end)) = ranges.get(&key) {
                    if e.offset > end {
                        let msg = format!(
                            "{what}: offset {} is past the partition's log end {end}",
                            e.offset
                        );
                        self.problem(&file, None, "checkpoint", &msg)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// A compacted log's cleaned part (below `krec-cleaner-offset`): every key at most once among
    /// the records a read_committed consumer sees, no record without a key, every v2 tombstone
    /// in a batch with a delete horizon (the cleaner sets it on the first pass that keeps one).
    fn compaction(&mut self, dir: &Path) -> Result<(), Failure> {
        let path = dir.join(files::CLEANER_OFFSET_FILE);
        let Some(bytes) = self.read_file(&path)? else {
            return Ok(());
        };
        let name = path.display().to_string();
        let Some(first_dirty) = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| t.trim().parse::<i64>().ok())
        else {
            self.problem(&name, None, "compaction", "expected one offset")?;
            return Ok(());
        };
        // Problems of the segments themselves are reported by the other checks.
        let Ok(log) = krecords_log::Log::open_read_only(dir) else {
            return Ok(());
        };
        if !log.config().cleanup_policy.compact
            || first_dirty < log.log_start_offset()
            || first_dirty > log.log_end_offset()
        {
            return Ok(());
        }
        let end = first_dirty.min(log.last_stable_offset());
        let rc = krecords_log::IsolationLevel::ReadCommitted;
        let mut visible = std::collections::BTreeSet::new();
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
        let mut seen: std::collections::HashMap<Vec<u8>, i64> = std::collections::HashMap::new();
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
            self.problem(&name, None, "compaction", &p)?;
        }
        Ok(())
    }

    /// Reads a small derived file; `None` when it does not exist.
    fn read_file(&mut self, path: &Path) -> Result<Option<Vec<u8>>, Failure> {
        match std::fs::read(path) {
            Ok(b) => {
                self.summary.files += 1;
                Ok(Some(b))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Failure::Io(e, format!("cannot read {}", path.display()))),
        }
    }

    /// Loads a fixed-size-entry index, reporting structural problems (a partial entry, entries
    /// that do not increase); a zero-filled tail is dropped as preallocated space.
    fn load_index(
        &mut self,
        path: &Path,
        kind: &'static str,
        base: i64,
    ) -> Result<Option<Index>, Failure> {
        let Some(bytes) = self.read_file(path)? else {
            return Ok(None);
        };
        let name = path.display().to_string();
        let size = match kind {
            "index" => 8,
            "timeindex" => 12,
            _ => 34,
        };
        let whole = bytes.len() / size * size;
        if whole != bytes.len() {
            self.problem(
                &name,
                Some(whole as u64),
                kind,
                &format!(
                    "{} bytes of a partial entry at the end (entries are {size} bytes)",
                    bytes.len() - whole
                ),
            )?;
        }
        let raw: Vec<&[u8]> = bytes[..whole].chunks(size).collect();
        // Preallocated space: a run of all-zero entries at the end (for the txnindex, which
        // Kafka never preallocates, zeros are entries like any other).
        let mut used = raw.len();
        if kind != "txnindex" {
            while used > 0 && raw[used - 1].iter().all(|&b| b == 0) {
                used -= 1;
            }
            if used == 0 {
                return Ok(Some(Index {
                    name,
                    entries: Vec::new(),
                    next: 0,
                }));
            }
        }
        let mut entries: Vec<IndexEntry> = Vec::with_capacity(used);
        for (n, e) in raw[..used].iter().enumerate() {
            let at = (n * size) as u64;
            let n = n as u64;
            let entry = match kind {
                "index" => {
                    let rel = be_i32(e, 0);
                    let pos = be_i32(e, 4);
                    if rel < 0 || pos < 0 {
                        self.problem(
                            &name,
                            Some(at),
                            kind,
                            &format!(
                                "entry {n} has a negative relative offset {rel} or position {pos}"
                            ),
                        )?;
                        continue;
                    }
                    IndexEntry {
                        at,
                        n,
                        offset: base + i64::from(rel),
                        value: i64::from(pos),
                        first: 0,
                    }
                }
                "timeindex" => {
                    let ts = be_i64(e, 0);
                    let rel = be_i32(e, 8);
                    if rel < 0 {
                        self.problem(
                            &name,
                            Some(at),
                            kind,
                            &format!("entry {n} has a negative relative offset {rel}"),
                        )?;
                        continue;
                    }
                    IndexEntry {
                        at,
                        n,
                        offset: base + i64::from(rel),
                        value: ts,
                        first: 0,
                    }
                }
                _ => {
                    let version = be_i16(e, 0);
                    let producer = be_i64(e, 2);
                    let first = be_i64(e, 10);
                    let last = be_i64(e, 18);
                    if version != 0 {
                        self.problem(
                            &name,
                            Some(at),
                            kind,
                            &format!("entry {n} has version {version} (expected 0)"),
                        )?;
                        continue;
                    }
                    if first > last || last < base {
                        self.problem(
                            &name,
                            Some(at),
                            kind,
                            &format!(
                                "entry {n} (producer {producer}) has offsets {first}..={last}, \
                                 which do not end in this segment (base offset {base})"
                            ),
                        )?;
                        continue;
                    }
                    IndexEntry {
                        at,
                        n,
                        offset: last,
                        value: producer,
                        first,
                    }
                }
            };
            if let Some(prev) = entries.last() {
                let bad = match kind {
                    "index" => entry.offset <= prev.offset || entry.value <= prev.value,
                    "timeindex" => entry.value <= prev.value || entry.offset < prev.offset,
                    _ => entry.offset <= prev.offset,
                };
                if bad {
                    let what = match kind {
                        "index" => format!(
                            "entry {n} (offset {}, position {}) does not increase after entry {} (offset {}, position {})",
                            entry.offset, entry.value, prev.n, prev.offset, prev.value
                        ),
                        "timeindex" => format!(
                            "entry {n} (timestamp {}, offset {}) does not increase after entry {} (timestamp {}, offset {})",
                            entry.value, entry.offset, prev.n, prev.value, prev.offset
                        ),
                        _ => format!(
                            "entry {n} (last offset {}) does not increase after entry {} (last offset {})",
                            entry.offset, prev.n, prev.offset
                        ),
                    };
                    self.problem(&name, Some(at), kind, &what)?;
                    continue;
                }
            }
            entries.push(entry);
        }
        Ok(Some(Index {
            name,
            entries,
            next: 0,
        }))
    }

    /// Checks one file of entries; `base` is its base offset when it is a segment (its indexes
    /// are checked too); `chain` is the last offset of the previous segment of the partition.
    fn segment(
        &mut self,
        path: &Path,
        base: Option<i64>,
        chain: &mut Option<i64>,
    ) -> Result<(), Failure> {
        let source = Source::open(path).context(|| format!("cannot open {}", path.display()))?;
        self.source(source, Some(path), base, chain)
    }

    /// Checks the entries of `source` (read from `path` if a file; with `base`, a segment whose
    /// indexes are checked too).
    fn source(
        &mut self,
        mut source: Source,
        path: Option<&Path>,
        base: Option<i64>,
        chain: &mut Option<i64>,
    ) -> Result<(), Failure> {
        self.summary.files += 1;
        let name = source.name.clone();
        let (mut oi, mut ti, mut tx) = match (base, path) {
            (Some(b), Some(path)) => (
                self.load_index(&sibling(path, INDEX_SUFFIX), "index", b)?,
                self.load_index(&sibling(path, TIME_INDEX_SUFFIX), "timeindex", b)?,
                self.load_index(&sibling(path, TXN_INDEX_SUFFIX), "txnindex", b)?,
            ),
            _ => (None, None, None),
        };
        if let (Some(b), Some(prev)) = (base, *chain) {
            if b <= prev {
                self.problem(
                    &name,
                    None,
                    "offsets",
                    &format!(
                        "segment base offset {b} is not above the previous segment's last offset {prev}"
                    ),
                )?;
            }
        }
        let mut prev_last = *chain;
        let mut running_max = -1i64;
        let mut clean = true;
        let mut end = 0u64;
        loop {
            let next = source
                .next_entry()
                .context(|| format!("cannot read {name}"))?;
            let facts = match next {
                Next::End => break,
                Next::Partial(p) => {
                    clean = false;
                    self.problem(
                        &name,
                        Some(p.position as u64),
                        "truncated",
                        &format!(
                            "truncated entry: the last {} bytes are not a whole entry",
                            p.bytes
                        ),
                    )?;
                    break;
                }
                Next::Error(e) => {
                    clean = false;
                    let position = source.position() as u64;
                    let rest = source
                        .remaining_bytes()
                        .context(|| format!("cannot read {name}"))?;
                    self.problem(
                        &name,
                        Some(position),
                        "entry",
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
                        self.problem(&name, Some(facts.position), "entry", &p)?;
                    }
                    facts
                }
            };
            if let Some(prev) = prev_last {
                if facts.first_offset <= prev {
                    self.problem(
                        &name,
                        Some(facts.position),
                        "offsets",
                        &format!(
                            "entry with offsets {}..={} does not follow the previous last offset {prev}",
                            facts.first_offset, facts.last_offset
                        ),
                    )?;
                }
            }
            if let Some(b) = base {
                if facts.first_offset < b {
                    self.problem(
                        &name,
                        Some(facts.position),
                        "offsets",
                        &format!(
                            "entry with offsets {}..={} is below the segment's base offset {b}",
                            facts.first_offset, facts.last_offset
                        ),
                    )?;
                }
            }
            prev_last = Some(prev_last.map_or(facts.last_offset, |p| p.max(facts.last_offset)));
            running_max = running_max.max(facts.max_timestamp);
            if let Some(ix) = oi.as_mut() {
                self.match_offset_index(ix, &facts, &name)?;
            }
            if let Some(ix) = ti.as_mut() {
                self.match_time_index(ix, &facts, running_max)?;
            }
            if let Some(ix) = tx.as_mut() {
                self.match_txn_index(ix, &facts)?;
            }
        }
        // Index entries left over point past the last entry; after a corrupt or truncated entry
        // they cannot be checked (the problem is already reported).
        if clean {
            for ix in [oi, ti, tx].into_iter().flatten() {
                for e in &ix.entries[ix.next..] {
                    let what = match ix.name.rsplit('.').next() {
                        Some("index") => format!(
                            "entry {} (offset {}, position {}) is past the last entry of {name} (its entries end at byte {end})",
                            e.n, e.offset, e.value
                        ),
                        Some("timeindex") => format!(
                            "entry {} (timestamp {}, offset {}) is past the last offset of {name}",
                            e.n, e.value, e.offset
                        ),
                        _ => format!(
                            "entry {} (producer {}, offsets {}..={}) is past the last offset of {name}",
                            e.n, e.value, e.first, e.offset
                        ),
                    };
                    let check = match ix.name.rsplit('.').next() {
                        Some("index") => "index",
                        Some("timeindex") => "timeindex",
                        _ => "txnindex",
                    };
                    self.problem(&ix.name, Some(e.at), check, &what)?;
                }
            }
        }
        if base.is_some() {
            *chain = prev_last;
        }
        Ok(())
    }

    /// Offset index entries must sit at entry boundaries and carry that entry's last offset.
    fn match_offset_index(
        &mut self,
        ix: &mut Index,
        f: &EntryFacts,
        log_name: &str,
    ) -> io::Result<()> {
        while let Some(e) = ix.current() {
            let position = e.value as u64;
            if position > f.position {
                break;
            }
            ix.next += 1;
            let name = ix.name.clone();
            if position < f.position {
                self.problem(
                    &name,
                    Some(e.at),
                    "index",
                    &format!(
                        "entry {} (offset {}, position {position}) is not at an entry boundary of {log_name}",
                        e.n, e.offset
                    ),
                )?;
            } else if e.offset != f.last_offset {
                self.problem(
                    &name,
                    Some(e.at),
                    "index",
                    &format!(
                        "entry {} (offset {}, position {position}): the entry there has last offset {}",
                        e.n, e.offset, f.last_offset
                    ),
                )?;
            }
        }
        Ok(())
    }

    /// Time index entries must name an offset of an entry and the largest timestamp up to it.
    fn match_time_index(
        &mut self,
        ix: &mut Index,
        f: &EntryFacts,
        running_max: i64,
    ) -> io::Result<()> {
        while let Some(e) = ix.current() {
            if e.offset > f.last_offset {
                break;
            }
            ix.next += 1;
            let name = ix.name.clone();
            if e.offset < f.first_offset {
                self.problem(
                    &name,
                    Some(e.at),
                    "timeindex",
                    &format!(
                        "entry {} (timestamp {}, offset {}): no entry holds that offset",
                        e.n, e.value, e.offset
                    ),
                )?;
            } else if e.value != running_max {
                self.problem(
                    &name,
                    Some(e.at),
                    "timeindex",
                    &format!(
                        "entry {} (timestamp {}, offset {}): the largest timestamp up to that offset is {running_max}",
                        e.n, e.value, e.offset
                    ),
                )?;
            }
        }
        Ok(())
    }

    /// Aborted transactions must end at an abort marker of their producer.
    fn match_txn_index(&mut self, ix: &mut Index, f: &EntryFacts) -> io::Result<()> {
        while let Some(e) = ix.current() {
            if e.offset > f.last_offset {
                break;
            }
            ix.next += 1;
            let at_marker = e.offset >= f.first_offset && f.abort_marker_of == Some(e.value);
            if !at_marker {
                let name = ix.name.clone();
                self.problem(
                    &name,
                    Some(e.at),
                    "txnindex",
                    &format!(
                        "entry {} (producer {}, offsets {}..={}): no abort marker of that producer at offset {}",
                        e.n, e.value, e.first, e.offset, e.offset
                    ),
                )?;
            }
        }
        Ok(())
    }

    /// Kafka's producer snapshot: version 1 (i16), CRC-32C (u32) of everything after it, then an
    /// array (i32 count) of 46-byte producer entries.
    fn snapshot(&mut self, path: &Path, offset: i64, log_end: Option<i64>) -> Result<(), Failure> {
        let Some(bytes) = self.read_file(path)? else {
            return Ok(());
        };
        let name = path.display().to_string();
        const ENTRY: usize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;
        if bytes.len() < 10 {
            return Ok(self.problem(
                &name,
                Some(0),
                "snapshot",
                &format!("{} bytes is too short for a producer snapshot", bytes.len()),
            )?);
        }
        let version = be_i16(&bytes, 0);
        if version != 1 {
            return Ok(self.problem(
                &name,
                Some(0),
                "snapshot",
                &format!("version {version} (expected 1)"),
            )?);
        }
        let stored = be_i32(&bytes, 2) as u32;
        let computed = krecords_codec::crc::crc32c(&bytes[6..]);
        if stored != computed {
            self.problem(
                &name,
                Some(2),
                "snapshot",
                &format!("crc mismatch (stored {stored}, computed {computed})"),
            )?;
        }
        let count = be_i32(&bytes, 6);
        let expected = usize::try_from(count).ok().map(|c| 10 + c * ENTRY);
        if expected != Some(bytes.len()) {
            self.problem(
                &name,
                Some(6),
                "snapshot",
                &format!(
                    "{count} producer entries do not fit the {} bytes of the file",
                    bytes.len()
                ),
            )?;
        }
        if let Some(end) = log_end {
            if offset > end {
                self.problem(
                    &name,
                    None,
                    "snapshot",
                    &format!("snapshot at offset {offset} is past the log end offset {end}"),
                )?;
            }
        }
        Ok(())
    }

    /// Kafka's leader epoch checkpoint: `0`, a count, then `epoch start-offset` lines with both
    /// increasing. An empty file, or one that ends after the version, holds no entries (Kafka's
    /// `CheckpointFile` reads it so; Kafka 4.4 leaves an empty file for a log without epochs).
    fn epoch_checkpoint(&mut self, path: &Path) -> Result<(), Failure> {
        let Some(bytes) = self.read_file(path)? else {
            return Ok(());
        };
        let name = path.display().to_string();
        let text = String::from_utf8_lossy(&bytes);
        if text.lines().count() < 2 && text.lines().next().is_none_or(|l| l.trim() == "0") {
            return Ok(());
        }
        let mut lines = text.lines();
        let mut problem = None;
        if lines.next().map(str::trim) != Some("0") {
            problem = Some("the first line is not version 0".to_string());
        }
        let count: Option<usize> = lines.next().and_then(|l| l.trim().parse().ok());
        let entries: Vec<Option<(i32, i64)>> = lines
            .map(|l| {
                let mut it = l.split_whitespace();
                match (it.next(), it.next(), it.next()) {
                    (Some(e), Some(o), None) => Some((e.parse().ok()?, o.parse().ok()?)),
                    _ => None,
                }
            })
            .collect();
        if problem.is_none() {
            if count != Some(entries.len()) {
                problem = Some(format!(
                    "declares {count:?} entries but holds {}",
                    entries.len()
                ));
            } else if entries.iter().any(Option::is_none) {
                problem = Some("a line is not `epoch start-offset`".into());
            } else {
                let e: Vec<(i32, i64)> = entries.into_iter().flatten().collect();
                if e.windows(2).any(|w| w[1].0 <= w[0].0 || w[1].1 < w[0].1) {
                    problem = Some("epochs or start offsets do not increase".into());
                }
            }
        }
        if let Some(p) = problem {
            self.problem(&name, None, "checkpoint", &p)?;
        }
        Ok(())
    }

    fn config(&mut self, path: &Path) -> Result<(), Failure> {
        let Some(bytes) = self.read_file(path)? else {
            return Ok(());
        };
        let name = path.display().to_string();
        let problem = match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Err(e) => Some(format!("not JSON: {e}")),
            Ok(json) => krecords_log::LogConfig::from_json(&json)
                .err()
                .map(|e| e.to_string()),
        };
        if let Some(p) = problem {
            self.problem(&name, None, "config", &p)?;
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
