//! `krec verify`: every entry checked deeply (CRC, structure, decompression), offsets in order,
//! and for partition directories the files derived from the log (offset and time indexes,
//! transaction indexes, producer snapshots, the leader epoch checkpoint, krec-log.json) checked
//! against it. Read-only, streaming: one entry in memory at a time, plus each index file.
//!
//! The checks, the choice of a data directory's partitions and the totals are the log's
//! ([`krecords_log::check`], [`krecords_log::data_dir::PartitionFilter`]); this command picks
//! the inputs and prints the problems the checks report, with progress and exit codes.

mod remote;

use crate::args::{CountArgs, Format, ReadArgs};
use crate::outcome::{Context, Failure, Outcome};
use crate::progress::{Progress, Unit};
use crate::source::{open_file, open_sources, read_options, EachPartition};
use krecords_log::check::{self, CheckError, Checker, Problem, ProblemKind, Totals};
use krecords_log::data_dir::{PartitionFilter, SelectError, Taken};
use krecords_source::{classify_dir, DirKind, IsolationLevel, SeenLive, SourceSpec, Sources};
use std::cell::RefCell;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
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
/// partition with problems and a summary of partitions ok and not. --topic (repeatable) and
/// --partition narrow it and any other partitions given (a partition directory, a segment
/// file of one, kafka://) as in dump; selecting nothing is exit 2, naming the topics there.
///
/// With --start, --end, --count or --isolation read-committed (default: read-uncommitted,
/// every batch as the files hold it), the entries in that range are checked (not the indexes),
/// the same way on files, directories, broker roots and kafka:// topics; a read that stops
/// before the high watermark says where and why ("stopped at last stable offset 3; high
/// watermark 9: an open transaction from producer 7 since offset 3").
///
/// With --remote LOCATION, both tiers of a broker are checked together: the remote tier
/// (Kafka tiered storage as Aiven's plugin writes it; for now file:///ROOT/PREFIX or a local
/// directory, the plugin's filesystem backend) is reconciled with __remote_log_metadata, read
/// from the root's __remote_log_metadata-N directories (or --remote-metadata DIR, or a live
/// cluster's kafka://HOST:PORT/__remote_log_metadata), replayed as Kafka's metadata cache
/// replays it, and with the root's partitions. One line per problem,
/// `partition: object: offset N: [check] message`:
///   metadata          an event Kafka drops or refuses (invalid state transition, update of
///                     an unknown segment), or a record that does not decode
///   copy-unfinished   COPY_SEGMENT_STARTED never followed by COPY_SEGMENT_FINISHED (on a
///                     running broker, possibly an upload in progress)
///   delete-unfinished DELETE_SEGMENT_STARTED never followed by DELETE_SEGMENT_FINISHED
///   missing           a copied segment whose .log, .indexes or .rsm-manifest is not there
///   orphan            objects no metadata names
///   manifest          a manifest that does not parse or decrypt, or whose chunk index does
///                     not match the size of its .log object
///   mismatch          the manifest's remoteLogSegmentMetadata, the object name or the data
///                     disagreeing with the metadata record (offsets, leader epochs, size)
///   offsets           a gap or overlap between consecutive remote segments; a gap between
///                     the remote tier's end and the local log's first offset
///   epoch             leader epochs going backwards, or not those of the local
///                     leader-epoch-checkpoint
///   chunk             a chunk or index that does not decrypt or decompress
///   entry, index, ... every batch of every remote segment CRC-checked and its offset, time
///                     and transaction indexes checked against it, as for local segments
///                     (byte positions in the original segment or index)
/// then `remote tier LOCATION: N partitions (...), M segments (K intact, ...), ...`.
/// Encrypted segments need --rsm-private-key KEYID=PEMFILE. --topic narrows the remote tier
/// too. The remote segments are checked by --threads workers across partitions, each holding
/// one decoded segment at a time; the report is in the same order whatever the threading.
///
/// Prints one line per problem with the file and byte position, then a summary. Exit 1 when
/// there is any problem, 0 when everything is clean, 2 when a path holds nothing to verify or
/// a file could not be read (an `[io]` problem: the rest is still checked and reported).
///
/// Examples:
///   krec verify /var/kafka/data                      (a whole broker)
///   krec verify /var/kafka/data --topic 'orders*' --threads 4
///   krec verify /var/kafka/events-0/
///   krec verify 00000000000000000000.log other.bin
///   krec verify --format json /tmp/events-0 | jq 'select(.check)'
///   krec verify /var/kafka/data --remote file:///var/kafka-tier/tiered/
///   krec verify --remote /var/kafka-tier --remote-metadata /var/kafka/data \
///       --rsm-private-key k1=/etc/kafka/rsm-k1.pem
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Segment files, files of concatenated entries, partition directories, `-` for stdin, or
    /// kafka://HOST:PORT/TOPIC[/PARTITION].
    #[arg(required_unless_present = "remote")]
    paths: Vec<PathBuf>,
    /// The remote tier of the broker (Kafka tiered storage as Aiven's plugin writes it):
    /// file:///ROOT/PREFIX (split at the last '/': the storage root, then the key prefix) or a
    /// local directory (a storage root, no prefix), reconciled with __remote_log_metadata and
    /// the local logs.
    #[arg(long, value_name = "LOCATION")]
    remote: Option<String>,
    /// With --remote: where __remote_log_metadata is read, a broker data directory, one
    /// __remote_log_metadata-N directory or a live cluster's topic
    /// (kafka://HOST:PORT/__remote_log_metadata; default: the broker root given).
    #[arg(long, value_name = "DIR", requires = "remote")]
    remote_metadata: Option<PathBuf>,
    /// Output: one line per problem and a summary, or JSON Lines (one object per problem, then
    /// {"summary":{...}}).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    count: CountArgs,
    /// Only topics matching this glob (*, ?, [...]; repeatable); kafka:// URLs naming no topic.
    #[arg(long, value_name = "GLOB")]
    topic: Vec<String>,
    /// Only this partition number.
    #[arg(long, value_name = "N")]
    partition: Option<i32>,
    /// Partitions verified at once in a data directory, and remote segments with --remote
    /// (default: the machine's cores). The report is the same whatever the number.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

/// Prints problems as they are found.
struct Printer<'o, W: Write> {
    format: Format,
    out: &'o mut W,
    /// Some input could not be read ([`ProblemKind::Io`]): the check is incomplete (exit 2).
    io_failed: bool,
}

impl<W: Write> Printer<'_, W> {
    /// Prints `p`, found in the data directory partition `partition` if any.
    fn problem(&mut self, p: &Problem, partition: Option<&str>) -> io::Result<()> {
        self.io_failed |= p.kind == ProblemKind::Io;
        match self.format {
            Format::Json => writeln!(self.out, "{}", p.to_json(partition)),
            Format::Text => writeln!(self.out, "{p}"),
        }
    }
}

/// A check that could not be carried out, as the command reports it.
fn failure(e: CheckError) -> Failure {
    match e {
        CheckError::NoSegments(_) => Failure::Usage(e.to_string()),
        CheckError::Io { what, error } => Failure::Io(error, what),
    }
}

/// A selection of partitions that could not be made, as the command reports it.
fn select_failure(e: SelectError) -> Failure {
    match e {
        SelectError::List { root, error } => {
            Failure::Io(error, format!("cannot list {}", root.display()))
        }
        e => Failure::Usage(e.to_string()),
    }
}

/// Whether `filter` takes the partition directory or segment file `path` (by its TOPIC-N).
fn takes(filter: &PartitionFilter, taken: &mut Taken, path: &Path) -> bool {
    let id = krecords_source::partition_of_path(path);
    filter.take(
        taken,
        id.as_ref().map(|i| i.0.as_str()),
        id.as_ref().map(|i| i.1),
    )
}

/// Whether `path` is a data directory (a `log.dirs` root).
fn is_root(path: &std::path::Path) -> bool {
    path.is_dir() && matches!(classify_dir(path), Ok(DirKind::Root(_)))
}

/// Runs the subcommand.
pub fn run(mut args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let limit = args.read.max_decompressed_bytes();
    // Each argument is checked on its own: a quoted pattern is every file it matches.
    args.paths =
        krecords_source::expand_globs(&args.paths).map_err(|e| Failure::Usage(e.to_string()))?;
    args.paths = Sources::paths_once(&args.paths, &mut |n| eprintln!("krec: {n}"));
    if let Some(p) = args.paths.iter().find(|p| {
        p.to_str()
            .and_then(krecords_remote::location::Location::parse)
            .is_some()
    }) {
        return Err(Failure::Usage(format!(
            "{}: a remote tier is verified with --remote LOCATION, against \
             __remote_log_metadata (from a broker ROOT or --remote-metadata DIR)",
            p.display()
        )));
    }
    let given = [args.paths.as_slice(), args.remote_metadata.as_slice()].concat();
    args.read.kafka.client.warn_unused(&given);
    // --remote: where the metadata and the local partitions are, checked before anything runs.
    let root = args.paths.iter().find(|p| is_root(p)).cloned();
    let remote_metadata = match (&args.remote, &args.remote_metadata, &root) {
        (None, _, _) => None,
        (Some(_), Some(dir), _) => Some(dir.clone()),
        (Some(_), None, Some(root)) => Some(root.clone()),
        (Some(_), None, None) => {
            return Err(Failure::Usage(
                "--remote reads __remote_log_metadata from a broker root (ROOT) or --remote-metadata DIR".into(),
            ))
        }
    };
    let remote_keys = match &args.remote {
        Some(_) => Some(args.read.kafka.client.remote_options()?),
        None => None,
    };
    let printer = RefCell::new(Printer {
        format: args.format,
        out,
        io_failed: false,
    });
    let mut sink = |p: Problem| printer.borrow_mut().problem(&p, None);
    let mut checker = Checker::new(limit, &mut sink);
    // Partitions of data directories, verified by checkers of their own.
    let mut partitions = Totals::default();
    let options = read_options(
        &args.read.kafka.range,
        args.count,
        IsolationLevel::ReadUncommitted,
        limit,
        None,
    );
    // The whole of every file, its indexes too, unless a range or read_committed asks for part.
    let whole = options.range.is_all() && options.isolation == IsolationLevel::ReadUncommitted;
    let mut stops = Vec::new();
    let mut unreadable = 0u64;
    let filter = krecords_source::partition_filter(&args.paths, &args.topic, args.partition)?;
    let mut taken = Taken::default();
    // Partitions read over the network (counted as files by the checker).
    let mut live = 0u64;
    // Each live partition is checked once, however many arguments name it and however they
    // spell the cluster's servers (as `krec dump` reads it once).
    let mut seen_live = SeenLive::new();
    for path in &args.paths {
        let local = matches!(
            SourceSpec::parse(path)?,
            SourceSpec::Path(_) | SourceSpec::Stdin
        );
        if whole && local && path.is_dir() {
            let kind = classify_dir(path).context(|| format!("cannot list {}", path.display()))?;
            if let DirKind::Root(_) = kind {
                data_dir(path, &filter, &mut taken, &args, &printer, &mut partitions)?;
            } else if takes(&filter, &mut taken, path) {
                checker.partition_dir(path).map_err(failure)?;
            }
        } else if whole && local {
            if !takes(&filter, &mut taken, path) {
                continue;
            }
            let base = check::segment_base(path);
            let (name, mut source) =
                open_file(path).context(|| format!("cannot open {}", path.display()))?;
            checker
                .entries(&mut source, &name, Some(path), base, &mut None)
                .map_err(failure)?;
        } else {
            // A live topic, or part of any source: its entries, checked as a file of entries.
            let mut sources = open_sources(std::slice::from_ref(path), &args.read.kafka.client)?;
            sources.retain(&filter, &mut taken);
            sources.partitions.retain(|p| {
                let again = p.live().and_then(|l| seen_live.repeat(l));
                if let Some(n) = &again {
                    eprintln!("krec: {n}");
                }
                again.is_none()
            });
            let mut each = EachPartition::new(&sources, &options);
            for i in 0..sources.partitions.len() {
                let Some(mut reader) = each.open(i)? else {
                    continue;
                };
                let mut check = || -> Result<bool, Failure> {
                    while let Some(file) = reader.next_file()? {
                        live += u64::from(!local);
                        checker
                            .entries(&mut reader, &file.name, None, None, &mut None)
                            .map_err(failure)?;
                    }
                    Ok(false)
                };
                let checked = check();
                each.carry_on(checked)?;
                if let Some(stop) = reader.stop() {
                    stops.push((reader.name().to_owned(), stop));
                }
            }
            // A partition the read could not reach the end of (damage) is a problem.
            unreadable += each.finish()?;
        }
    }
    if !args.paths.is_empty() {
        let given: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
        filter
            .check(&taken, &given.join(" "))
            .map_err(select_failure)?;
    }
    let mut s = partitions;
    s.counts.add(&checker.summary());
    s.counts.problems += unreadable;
    drop(checker);
    let printer = printer.into_inner();
    let (out, io_failed) = (printer.out, printer.io_failed);
    let remote = match (&args.remote, remote_metadata, remote_keys) {
        (Some(location), Some(metadata), Some(keys)) => {
            let metadata = remote::read_metadata(&metadata, &args.read.kafka.client, limit)?;
            let topics = |t: &str| filter.matches_topic(t);
            let options = krecords_remote::verify::Options {
                local_root: root.as_deref(),
                max_decompressed_bytes: limit,
                topic_filter: Some(&topics),
                threads: args.threads.unwrap_or_else(default_threads),
            };
            let json = printer.format == Format::Json;
            let summary = remote::run(location, &keys, &metadata, &options, json, &mut *out)?;
            Some((location, summary))
        }
        _ => None,
    };
    let local = !args.paths.is_empty();
    for (name, stop) in &stops {
        match printer.format {
            Format::Json => writeln!(out, "{}", stop.to_json(name))?,
            Format::Text => writeln!(out, "{name}: {stop}")?,
        }
    }
    match printer.format {
        Format::Json => {
            let mut summary = if local {
                serde_json::to_value(s).map_err(io::Error::from)?
            } else {
                serde_json::json!({})
            };
            if let (Some((_, r)), Some(o)) = (&remote, summary.as_object_mut()) {
                o.insert("remote".into(), r.to_json());
            }
            crate::outcome::print_json(out, &serde_json::json!({ "summary": summary }))?;
        }
        Format::Text => {
            if local {
                writeln!(out, "{}", s.describe(live))?;
            }
            if let Some((location, r)) = &remote {
                writeln!(out, "{}", r.describe(location))?;
            }
        }
    }
    let remote_clean = remote.as_ref().is_none_or(|(_, r)| r.problems == 0);
    Ok(if io_failed {
        Outcome::Unreadable
    } else if s.counts.problems == 0 && remote_clean {
        Outcome::Ok
    } else {
        Outcome::DataProblem
    })
}

/// The default of `--threads`: the machine's cores.
fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Verifies the partitions of a broker's data directory that `filter` takes (noted in `taken`),
/// in parallel, then its own files, adding what it found to `total`.
fn data_dir<W: Write>(
    root: &Path,
    filter: &PartitionFilter,
    taken: &mut Taken,
    args: &Args,
    printer: &RefCell<Printer<'_, W>>,
    total: &mut Totals,
) -> Result<(), Failure> {
    let Some(selection) = filter.select_noting(root, taken).map_err(select_failure)? else {
        return Ok(());
    };
    let threads = args.threads.unwrap_or_else(default_threads);
    let bytes = selection.log_bytes();
    let progress = Mutex::new((Progress::new("verify", Unit::Bytes, bytes, 256 << 20), 0u64));
    let limit = args.read.max_decompressed_bytes();
    let report = check::check_selection(&selection, threads, limit, &|part| {
        if let Ok(mut p) = progress.lock() {
            p.1 += part.log_bytes();
            let done = p.1;
            p.0.update(done);
        }
    });
    if let Ok(mut p) = progress.lock() {
        p.0.finish();
    }
    let report = report.map_err(failure)?;
    let mut p = printer.borrow_mut();
    for (part, r) in selection.chosen.iter().zip(&report.partitions) {
        if let Some(n) = krecords_log::files::orphaned_indexes_note(&part.path) {
            eprintln!("krec: warning: {}: {n}", part.path.display());
        }
        for problem in &r.problems {
            p.problem(problem, Some(&part.name()))?;
        }
        if args.format == Format::Json {
            writeln!(p.out, "{}", r.partition_json(part))?;
        }
    }
    for problem in report.files.iter().flat_map(|f| &f.problems) {
        p.problem(problem, None)?;
    }
    let totals = report.totals(&selection.chosen);
    total.add_root(&totals);
    if args.format == Format::Text && !totals.is_clean() {
        let mut bad = totals.with_problems;
        if totals.files_with_problems {
            bad.push(format!("{} (its own files)", root.display()));
        }
        writeln!(p.out, "problems in: {}", bad.join(", "))?;
    }
    Ok(())
}
