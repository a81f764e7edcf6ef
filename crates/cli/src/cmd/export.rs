//! `krec export SOURCE... --output DIR`: partitions as a Hive-partitioned Parquet (or Arrow
//! IPC) dataset, incremental and exactly once.
//!
//! Argument parsing and printing only: the engine is the `krecords-export` library
//! ([`krecords_export::Exporter`]; its documentation states the exactly-once rule).

use crate::args::Format as ReportFormat;
use crate::kafka::ClientArgs;
use crate::outcome::{Failure, Outcome};
use crate::progress::Progress;
use crate::source::{open_sources, open_sources_quietly};
use clap::ValueEnum;
use krecords_arrow::BytesFormat;
use krecords_export::{Event, ExportError, ExportOptions, Exporter, Format};
use krecords_source::{ErrorClass, IsolationLevel, Position, Range, Sources};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Export partitions as a Parquet (or Arrow IPC) dataset, incrementally and exactly once.
///
/// The dataset: DIR/topic=T/partition=P/<first offset>-<last offset>.parquet (or .arrow), in
/// the fixed schema of `krec sql --help` (the source repository's docs/design.md, "Records as
/// Arrow"). Files are written under a hidden temporary name and renamed when complete; a run
/// continues each partition after the last offset already in DIR, so a run killed at any
/// moment and run again leaves every record exactly once. --start/--end bound the export (per
/// partition, as every krec command takes positions): a partition starts at the later of
/// --start and the dataset's end, so the same command run again after a kill completes the
/// range, each record once. Partitions are exported by --jobs threads, each partition by one
/// of them.
///
/// Examples:
///   krec export /var/lib/kafka/data --output /lake/kafka
///   krec export /var/lib/kafka/data --topic 'orders*' --topic payments -o /lake/kafka
///   krec export kafka://localhost:9092/events --output /lake/kafka --follow --roll-ms 60000
///   krec export /var/lib/kafka/data/events-0 -o ds --value-format string --format-report json
///   duckdb -c "SELECT partition, count(*) FROM read_parquet('ds/**/*.parquet',
///       hive_partitioning = true) GROUP BY partition"
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment, after_long_help = crate::kafka::REMOTE_HELP)]
pub struct Args {
    /// Partition directories, a broker's log.dirs root, kafka://HOST:PORT/TOPIC[/PARTITION], or
    /// a remote tier location (s3://BUCKET/PREFIX, gs://, az://, file:///ROOT/PREFIX)
    /// (plain segment files have no topic and partition: name their directory).
    #[arg(required = true, value_name = "SOURCE")]
    sources: Vec<PathBuf>,
    /// Only the partitions of topics matching this glob (*, ?, [...]; repeatable), as in dump
    /// and verify: of a broker root, partition directories, a remote tier location, a kafka://
    /// URL naming no topic. Default: every topic of the sources, Kafka's internal ones
    /// (__consumer_offsets, ...) included. Globs matching no topic are exit 2, naming the
    /// topics there are.
    #[arg(long, value_name = "GLOB")]
    topic: Vec<String>,
    /// The dataset directory (created if missing).
    #[arg(long, short = 'o', value_name = "DIR")]
    output: PathBuf,
    /// Where each partition's export starts: an offset, -N (N offsets before the end),
    /// earliest (default), latest, or a time (ISO 8601, or @ and epoch ms): the first offset
    /// whose timestamp is at or after it. A partition whose dataset already ends later
    /// continues from there instead: no offset is exported twice.
    #[arg(long, value_name = "POS", allow_hyphen_values = true, value_parser = Position::parse)]
    start: Option<Position>,
    /// Where each partition's export stops (exclusive), as --start; default: the end (the last
    /// stable offset at read-committed). An end offset past a partition's end stops at its end
    /// (the same command run later goes on to it); a start past it leaves the partition out,
    /// listed in the report; an end not after the start is an error. Not with --follow.
    #[arg(long, value_name = "POS", allow_hyphen_values = true, value_parser = Position::parse, conflicts_with = "follow")]
    end: Option<Position>,
    /// Partitions exported at the same time (threads; a partition's files are written by one
    /// thread, one after another, as with --jobs 1); default: the number of cores. Memory
    /// grows with it (a reader and a row group in the making per thread).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..1025))]
    jobs: Option<u64>,
    /// The file format: Parquet (zstd) or Arrow IPC files. A dataset keeps the format and the
    /// key and value formats of its first files: an export into it with others is refused.
    #[arg(long, value_enum, default_value_t = FileFormat::Parquet)]
    format: FileFormat,
    /// Isolation: read-committed (default) exports what a consumer sees: aborted transactions
    /// and transaction markers left out, up to the last stable offset; read-uncommitted every
    /// data record.
    #[arg(long, value_parser = crate::isolation::isolation_parser([
        (IsolationLevel::ReadUncommitted, "Every data record, aborted transactions included"),
        (IsolationLevel::ReadCommitted, "What a consumer sees, aborted transactions left out"),
    ]))]
    isolation: Option<IsolationLevel>,
    /// How the key column holds keys: binary, or string (UTF-8; keys that are not are null
    /// and counted).
    #[arg(long, value_enum, default_value_t = Bytes::Binary)]
    key_format: Bytes,
    /// How the value column holds values, as --key-format.
    #[arg(long, value_enum, default_value_t = Bytes::Binary)]
    value_format: Bytes,
    /// Complete a file once it holds about this many bytes.
    #[arg(long, default_value_t = 256 << 20, value_name = "BYTES")]
    roll_bytes: u64,
    /// With --follow: complete a file once it has been open this long.
    #[arg(long, default_value_t = 60_000, value_name = "MS")]
    roll_ms: u64,
    /// Keep exporting what is appended to the sources (polling every --poll-ms). SIGINT or
    /// SIGTERM stops it after the pass under way: the open files are completed and the report
    /// printed, exit 0 (a second Ctrl-C ends it at once; a later run continues exactly either
    /// way).
    #[arg(long)]
    follow: bool,
    /// Poll interval of --follow, in ms.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    poll_ms: u64,
    /// Output of the final report: a few lines for people, or one JSON object.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format_report: ReportFormat,
    #[command(flatten)]
    client: ClientArgs,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FileFormat {
    /// Parquet files, zstd-compressed.
    Parquet,
    /// Arrow IPC files.
    Arrow,
}

/// `--key-format`, `--value-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Bytes {
    /// Arrow binary.
    Binary,
    /// Arrow UTF-8 strings.
    String,
}

impl From<Bytes> for BytesFormat {
    fn from(b: Bytes) -> Self {
        match b {
            Bytes::Binary => BytesFormat::Binary,
            Bytes::String => BytesFormat::String,
        }
    }
}

/// A library error as a command failure (exit 1 for bad data, 2 otherwise).
fn failure(e: &ExportError) -> Failure {
    match e.class() {
        ErrorClass::Data => Failure::Data(e.to_string()),
        ErrorClass::Usage | ErrorClass::Io => Failure::Usage(e.to_string()),
    }
}

/// Runs `krec export`.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let mut options = ExportOptions::new(&args.output);
    options.format = match args.format {
        FileFormat::Parquet => Format::Parquet,
        FileFormat::Arrow => Format::Arrow,
    };
    options.isolation = args.isolation.unwrap_or(IsolationLevel::ReadCommitted);
    options.key_format = args.key_format.into();
    options.value_format = args.value_format.into();
    options.roll_bytes = args.roll_bytes.max(1);
    options.allow_truncated_tail = args.follow;
    if args.follow {
        options.roll_after = Some(Duration::from_millis(args.roll_ms));
    }
    options.range = Range {
        start: args.start,
        end: args.end,
        count: None,
    };
    options
        .range
        .check()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let jobs = match args.jobs {
        Some(n) => usize::try_from(n).unwrap_or(1),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    // --topic: the partitions of the topics chosen, each pass (dump's rule).
    let filter = krecords_source::partition_filter(&args.sources, &args.topic, None)?;
    let given: Vec<String> = args
        .sources
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let open = |first: bool| -> Result<Sources, Failure> {
        let mut sources = match first {
            true => open_sources(&args.sources, &args.client)?,
            false => open_sources_quietly(&args.sources, &args.client)?,
        };
        sources.select(&filter, &given.join(" "))?;
        Ok(sources)
    };
    // The sources first: a source that cannot be opened, or a --topic that chooses nothing,
    // leaves no dataset directory behind.
    args.client.warn_unused(&args.sources);
    let mut first_sources = Some(open(true)?);
    if let Some(s) = &first_sources {
        krecords_export::check_named(s).map_err(|e| failure(&e))?;
    }
    let mut exporter = Exporter::open(options, &args.sources).map_err(|e| failure(&e))?;
    let progress = Mutex::new((Progress::live("krec export"), 0u64));
    let on = |e: Event<'_>| {
        if let Event::Batch {
            partition,
            rows,
            bytes_in,
        } = e
        {
            let mut p = progress.lock().unwrap_or_else(|p| p.into_inner());
            p.1 = p.1.saturating_add(rows as u64);
            let records = p.1;
            p.0.message(&format!(
                "krec export: {partition}: {records} records, {} MiB read",
                bytes_in >> 20
            ));
        }
    };
    // Each failed partition's name and error.
    let mut errors: Vec<(String, ExportError)> = Vec::new();
    // --follow stops at SIGINT or SIGTERM after the pass under way: the open files are
    // completed and the report printed (a second Ctrl-C ends it at once; the next run
    // continues exactly either way).
    let stop = match args.follow {
        true => Some(crate::outcome::stop_on_signals(true)?),
        false => None,
    };
    let stopped = || stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
    loop {
        let started = Instant::now();
        let sources = match first_sources.take() {
            Some(s) => s,
            None => open(false)?,
        };
        let failed = exporter.export_all(&sources, jobs, args.follow, &on);
        for f in failed {
            let e = f.error;
            if args.follow {
                return Err(failure(&e));
            }
            // The first error that is not the data's ends the command below, said there once.
            let ends = e.class() != ErrorClass::Data
                && errors.iter().all(|(_, x)| x.class() == ErrorClass::Data);
            if !ends {
                eprintln!("krec: {e}");
            }
            errors.push((f.partition, e));
        }
        if !args.follow || stopped() {
            break;
        }
        exporter.roll_due(&mut |e| on(e)).map_err(|e| failure(&e))?;
        drop(sources);
        let wait = Duration::from_millis(args.poll_ms).saturating_sub(started.elapsed());
        let until = Instant::now() + wait;
        while !stopped() && Instant::now() < until {
            std::thread::sleep(wait.min(Duration::from_millis(50)));
        }
        if stopped() {
            break;
        }
    }
    if stopped() {
        eprintln!("krec: stopped by a signal; completing the open files");
    }
    exporter.finish(&mut |e| on(e)).map_err(|e| failure(&e))?;
    progress
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .0
        .finish();
    report(&exporter, &errors, &args, out)?;
    if let Some((_, e)) = errors.iter().find(|(_, e)| e.class() != ErrorClass::Data) {
        return Err(failure(e));
    }
    // A range outside some partitions leaves them out; outside every one, it is the usage
    // error a read of one partition gives.
    let s = exporter.summary();
    if let Some(last) = s.outside.last() {
        if s.outside.len() as u64 >= s.partitions {
            return Err(Failure::Usage(format!(
                "no partition holds the positions asked for (the last: {last})"
            )));
        }
    }
    Ok(if errors.is_empty() {
        Outcome::Ok
    } else {
        Outcome::DataProblem
    })
}

fn report(
    exporter: &Exporter,
    errors: &[(String, ExportError)],
    args: &Args,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let s = exporter.summary();
    match args.format_report {
        ReportFormat::Json => {
            // The failed partitions too (said on stderr as well): a script reading the report
            // sees why the exit code is not 0.
            let mut json = s.to_json(&args.output);
            if let Some(o) = json.as_object_mut() {
                let errors = errors
                    .iter()
                    .map(|(partition, e)| {
                        serde_json::json!({
                            "partition": partition,
                            "exit_code": e.class().exit_code(),
                            "message": e.to_string(),
                        })
                    })
                    .collect();
                o.insert("errors".into(), serde_json::Value::Array(errors));
            }
            writeln!(out, "{json}")?
        }
        ReportFormat::Text => s.write_text(&args.output, out)?,
    }
    Ok(())
}
