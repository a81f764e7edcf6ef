//! `krec stats`: sizes per magic and codec, and with `--what-if` the same records re-encoded in
//! every format and codec, measured (the chapter's V1-vs-V2 table, on the user's data).

use crate::args::{parse_compression, CountArgs, Format, ReadArgs};
use crate::outcome::{Failure, Outcome};
use crate::progress::{Progress, Unit};
use crate::source::{open_sources, read_options, EachPartition};
use krecords_codec::stats::Stats;
use krecords_codec::what_if::{self, Clock, Feeder};
use krecords_codec::Compression;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Sizes per magic and codec; with --what-if, the same records re-encoded in every format and codec.
///
/// Per magic × codec: entries, records, bytes, bytes per record, and bytes per record split into
///   batch overhead   v2: the 61-byte batch header (12-byte offset and size prefix included);
///                    v0/v1: a compressed wrapper's own message overhead (34 bytes for v1)
///   record overhead  v2: each record's varints, attributes and lengths;
///                    v0/v1: 12-byte prefix + 14 (v0) or 22 (v1) bytes per message
///   payload          key + value + header keys and values
/// These three add up to the uncompressed size; the compression ratio is that size divided by
/// the bytes stored. Entries whose records cannot be decoded count in entries and bytes only.
///
/// --what-if converts the input to v0, v1 and v2 with every codec each allows (v0/v1: none,
/// gzip, snappy, lz4; v2: also zstd) at the default level and at the --levels given, each row
/// exactly as `krec convert --magic M --compression CODEC[:LEVEL]` would (same options, same
/// code), so a row's bytes are the bytes convert writes. Batching is convert's: v2 batches and
/// v0/v1 wrappers keep their boundaries; each run of uncompressed v0/v1 messages, which carry
/// no batch boundaries, becomes one batch of up to 1 MiB of input (what a broker accepts by
/// default); --records-per-batch N regroups all records instead. Entries already in a row's
/// format and codec are copied unchanged, as convert does; transaction markers are kept in v2
/// rows and dropped in v0/v1 rows, and so are headers (the v0/v1 rows say so). lz4 rows are at
/// the default level only (Kafka uses LZ4 HC at other levels, which krecords does not have).
///
/// The input is streamed: each block of entries is converted in every row as it is read and
/// only sizes and timings are kept, so memory stays bounded whatever the input size; rows run
/// in parallel on --threads threads. Each row: bytes, bytes per record, vs now = bytes / input
/// bytes (below 1 is smaller than now), and encode and decode speed in MB/s (10^6 bytes per
/// second) of record payload (keys, values and headers, the same amount for every row). Each
/// row is timed on the one thread that runs it, in that thread's CPU time (Linux schedstat;
/// wall time elsewhere), so parallel rows and a busy machine do not lower the figures. Encode
/// is the conversion (reading and decompressing the input, building and compressing the row's
/// entries); decode reads the row's entries back as a consumer (CRCs, decompression, every
/// record); small inputs are converted again until --min-time-ms is measured. A compressed
/// row's encode speed counts only the records it compressed: a row that copied every entry
/// unchanged shows - (null in JSON). --no-timing skips timing and reading back.
/// --sample N uses only the first entries up to N records.
///
/// Sizes belong to entries, so --start, --end and --count select the entries that hold the
/// range and count each one whole, its records outside the range included (a note on stderr
/// says how many entries and records that is).
///
/// Exit 1 when an entry has a CRC mismatch or undecodable records, or an input cannot be read
/// to its end, ends in a truncated entry, or is not Kafka data (its bytes are reported as bytes
/// that cannot be read), as verify and dump exit.
///
/// Examples:
///   krec stats 00000000000000000000.log
///   krec stats --what-if --levels gzip:1,gzip:9,zstd:1,zstd:19 /var/kafka/events-0/
///   krec stats --what-if --no-timing --threads 4 /var/kafka/events-0/00000000000000000000.log
///   krec gen --magic 1 --records 1000 --value-size 100 --records-per-batch 1000 -o v1.bin
///   krec stats --what-if --format json v1.bin | jq '.rows[] | [.magic, .compression, .bytes_per_record]'
#[derive(clap::Args)]
#[command(verbatim_doc_comment, after_long_help = crate::kafka::REMOTE_HELP)]
pub struct Args {
    /// Segment files, partition directories, `-` for stdin, kafka://HOST:PORT/TOPIC[/PARTITION],
    /// or a remote tier location (s3://BUCKET/PREFIX, gs://, az://, file:///ROOT/PREFIX).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Output format: aligned tables, or one JSON object {"summary","groups","what_if","rows"}.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Convert the input to every magic and codec and measure size and speed.
    #[arg(long)]
    what_if: bool,
    /// More levels for --what-if rows, comma-separated codec:level (gzip 1-9, zstd -131072-22;
    /// lz4 only at its default, 9).
    #[arg(long, value_delimiter = ',', requires = "what_if")]
    levels: Vec<String>,
    /// --what-if: N records per batch instead of convert's default batching.
    #[arg(long, requires = "what_if", value_parser = clap::value_parser!(u64).range(1..=i32::MAX as u64))]
    records_per_batch: Option<u64>,
    /// --what-if: use only the records of the first entries up to N records (0: all).
    #[arg(long, default_value_t = 0, requires = "what_if")]
    sample: u64,
    /// --what-if: convert small inputs again until each row has this many milliseconds of
    /// encode and of decode measured.
    #[arg(long, default_value_t = 50, requires = "what_if")]
    min_time_ms: u64,
    /// --what-if: sizes only; no timing and no reading back.
    #[arg(long, requires = "what_if")]
    no_timing: bool,
    /// --what-if: threads converting rows in parallel (default: all cores).
    #[arg(long, requires = "what_if", value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    count: CountArgs,
}

/// Runs the subcommand.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let extra_levels = parse_levels(&args.levels)?;
    args.read.kafka.client.warn_unused(&args.paths);
    let sources = open_sources(&args.paths, &args.read.kafka.client)?;
    let limit = args.read.max_decompressed_bytes();
    let options = read_options(
        &args.read.kafka.range,
        args.count,
        krecords_source::IsolationLevel::ReadUncommitted,
        limit,
        None,
    );
    let parts = &sources.partitions;
    let targets = if args.what_if {
        what_if::targets(&extra_levels, args.records_per_batch, limit)
            .map_err(|e| Failure::Usage(format!("--levels: {e}")))?
    } else {
        Vec::new()
    };
    let mut stats = Stats::new(limit);
    // How a truncated tail ends the command (the sources layer's rule, as in verify and dump).
    let mut tail = None;
    // Partitions whose data could not be read (one of several: said, and the others read).
    let mut damaged = 0;
    let mut scan = |mut feeder: Option<&mut Feeder<'_>>| -> Result<(), Failure> {
        // A partition the range misses is left out with a note, as in dump and verify.
        let mut each = EachPartition::new(&sources, &options);
        for i in 0..parts.len() {
            let Some(mut reader) = each.open(i)? else {
                continue;
            };
            if args.what_if {
                // The what-if table draws its own progress.
                reader.set_progress(Box::new(|_| {}));
            }
            let live = parts.get(i).is_some_and(|p| p.live().is_some());
            let mut warn = |w: String| eprintln!("krec: {w}");
            let f = feeder.as_deref_mut();
            if let Some(t) =
                krecords_source::stats::feed(&mut reader, live, &mut stats, f, &mut warn)?
            {
                tail = Some(t);
            }
        }
        damaged = each.finish()?;
        Ok(())
    };
    let what_if = if args.what_if {
        let total_bytes = parts
            .iter()
            .flat_map(|p| p.files())
            .filter_map(|p| std::fs::metadata(p).ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum();
        let cfg = what_if::Config {
            threads: match args.threads {
                Some(n) => n as usize,
                None => std::thread::available_parallelism().map_or(1, |n| n.get()),
            },
            timing: (!args.no_timing).then(|| Duration::from_millis(args.min_time_ms)),
            clock: Clock::detect(),
            decompress_limit: limit,
            sample: args.sample,
            records_per_batch: args.records_per_batch,
        };
        let mut progress =
            Progress::new("krec stats --what-if", Unit::Bytes, total_bytes, 64 << 20);
        let report = what_if::run(&targets, &cfg, &mut |done| progress.update(done), |f| {
            scan(Some(f))
        })?;
        progress.finish();
        Some((report.info, report.rows))
    } else {
        scan(None)?;
        None
    };
    let group_rows = stats.groups();
    let summary = stats.summary();
    let range = &args.read.kafka.range;
    if range.start.is_some() || range.end.is_some() || args.count.count.is_some() {
        let (e, r) = (summary.entries, summary.records);
        let entries = if e == 1 { "entry" } else { "entries" };
        let records = if r == 1 { "record" } else { "records" };
        eprintln!("krec: stats counts whole entries: the {e} {entries} holding the range hold {r} {records}");
    }
    match args.format {
        Format::Json => {
            let mut obj = serde_json::json!({"summary": summary, "groups": group_rows});
            if let Some((info, rows)) = &what_if {
                obj["what_if"] = serde_json::to_value(info).map_err(std::io::Error::from)?;
                obj["rows"] = serde_json::to_value(rows).map_err(std::io::Error::from)?;
            }
            crate::outcome::print_json(out, &obj)?;
        }
        Format::Text => {
            krecords_codec::stats::write_text(out, summary, &group_rows)?;
            if let Some((info, rows)) = &what_if {
                what_if::write_text(out, info, rows)?;
            }
        }
    }
    let tail_is_data = tail == Some(krecords_source::ErrorClass::Data);
    Ok(if stats.has_problems() || tail_is_data || damaged > 0 {
        Outcome::DataProblem
    } else {
        Outcome::Ok
    })
}

/// Parses --levels into (codec, level) pairs.
fn parse_levels(levels: &[String]) -> Result<Vec<(Compression, i32)>, Failure> {
    let mut out = Vec::new();
    for l in levels.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let (codec, level) = parse_compression(l)?;
        match level {
            Some(level) => out.push((codec, level)),
            None => {
                return Err(Failure::Usage(format!(
                    "--levels takes codec:level, not {l:?}"
                )))
            }
        }
    }
    Ok(out)
}
