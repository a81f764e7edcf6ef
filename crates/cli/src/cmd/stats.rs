//! `krec stats`: sizes per magic and codec, and with `--what-if` the same records re-encoded in
//! every format and codec, measured (the chapter's V1-vs-V2 table, on the user's data).

mod what_if;

use crate::args::{parse_compression, Format, ReadArgs};
use crate::cmd::convert;
use crate::kafka::{expand_inputs, Input};
use crate::outcome::{Failure, Outcome};
use crate::source::Next;
use krecords_codec::convert::ConvertOptions;
use krecords_codec::read::{Batch, Record};
use krecords_codec::Compression;
use serde::Serialize;
use std::collections::BTreeMap;
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
/// record); small inputs are converted again until --min-time-ms is measured. --no-timing
/// skips timing and reading back.
/// --sample N uses only the first entries up to N records.
///
/// Examples:
///   krec stats 00000000000000000000.log
///   krec stats --what-if --levels gzip:1,gzip:9,zstd:1,zstd:19 /var/kafka/events-0/
///   krec stats --what-if --no-timing --threads 4 /var/kafka/events-0/00000000000000000000.log
///   krec gen --magic 1 --records 1000 --value-size 100 --records-per-batch 1000 -o v1.bin
///   krec stats --what-if --format json v1.bin | jq '.rows[] | [.magic, .compression, .bytes_per_record]'
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Segment files, partition directories, `-` for stdin, or kafka://HOST:PORT/TOPIC[/PARTITION].
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
    #[arg(long, value_delimiter = ',')]
    levels: Vec<String>,
    /// --what-if: N records per batch instead of convert's default batching.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=i32::MAX as u64))]
    records_per_batch: Option<u64>,
    /// --what-if: use only the records of the first entries up to N records (0: all).
    #[arg(long, default_value_t = 0)]
    sample: u64,
    /// --what-if: convert small inputs again until each row has this many milliseconds of
    /// encode and of decode measured.
    #[arg(long, default_value_t = 50)]
    min_time_ms: u64,
    /// --what-if: sizes only; no timing and no reading back.
    #[arg(long)]
    no_timing: bool,
    /// --what-if: threads converting rows in parallel (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    #[command(flatten)]
    read: ReadArgs,
}

/// Sizes of the entries of one magic and codec.
#[derive(Debug, Default, Clone)]
struct Group {
    entries: u64,
    bytes: u64,
    /// Entries whose records were decoded, and their stored bytes.
    decoded_entries: u64,
    decoded_bytes: u64,
    records: u64,
    batch_overhead: u64,
    record_overhead: u64,
    payload: u64,
    /// Size the decoded entries would take uncompressed.
    uncompressed: u64,
}

#[derive(Serialize)]
struct GroupJson {
    magic: u8,
    compression: String,
    entries: u64,
    records: u64,
    bytes: u64,
    undecoded_entries: u64,
    bytes_per_record: Option<f64>,
    batch_overhead_per_record: Option<f64>,
    record_overhead_per_record: Option<f64>,
    payload_per_record: Option<f64>,
    records_per_batch: Option<f64>,
    compression_ratio: Option<f64>,
    batch_overhead_bytes: u64,
    record_overhead_bytes: u64,
    payload_bytes: u64,
    uncompressed_bytes: u64,
}

fn per(n: u64, d: u64) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

fn codec_name(id: u8) -> String {
    Compression::from_id(id).map_or_else(|| format!("unknown({id})"), |c| c.name().to_string())
}

impl GroupJson {
    fn new(magic: u8, codec: u8, g: &Group) -> Self {
        GroupJson {
            magic,
            compression: codec_name(codec),
            entries: g.entries,
            records: g.records,
            bytes: g.bytes,
            undecoded_entries: g.entries - g.decoded_entries,
            bytes_per_record: per(g.decoded_bytes, g.records),
            batch_overhead_per_record: per(g.batch_overhead, g.records),
            record_overhead_per_record: per(g.record_overhead, g.records),
            payload_per_record: per(g.payload, g.records),
            records_per_batch: per(g.records, g.decoded_entries),
            compression_ratio: per(g.uncompressed, g.decoded_bytes),
            batch_overhead_bytes: g.batch_overhead,
            record_overhead_bytes: g.record_overhead,
            payload_bytes: g.payload,
            uncompressed_bytes: g.uncompressed,
        }
    }
}

#[derive(Serialize, Default)]
struct Summary {
    files: usize,
    entries: u64,
    records: u64,
    bytes: u64,
    /// Bytes of truncated tails (not corruption).
    partial_bytes: u64,
    /// Entries with a CRC mismatch.
    invalid_crc_entries: u64,
    /// Entries whose records could not be decoded, and files cut short by an invalid entry.
    errors: u64,
}

/// What --what-if is fed, block by block, and how much.
#[derive(Default)]
struct Feed {
    block: what_if::Block,
    records: u64,
    payload: u64,
    input_bytes: u64,
    control_records: u64,
    headers: u64,
    /// Entries not fed: CRC mismatches and entries whose records cannot be decoded.
    left_out: u64,
    full: bool,
}

impl Feed {
    fn send(&mut self, sink: &mut dyn FnMut(what_if::Block), file_end: bool) {
        let name = self.block.name.clone();
        let mut block = std::mem::take(&mut self.block);
        block.file_end = file_end;
        self.block.name = name;
        sink(block);
    }
}

/// Runs the subcommand.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let extra_levels = parse_levels(&args.levels)?;
    let inputs = expand_inputs(&args.paths, &args.read.kafka)?;
    let paths = &inputs.items;
    let specs = if args.what_if {
        row_specs(&args, &extra_levels)?
    } else {
        Vec::new()
    };
    let mut groups: BTreeMap<(u8, u8), Group> = BTreeMap::new();
    let mut summary = Summary {
        files: paths.len(),
        ..Summary::default()
    };
    let mut feed = Feed::default();
    let mut scan = |sink: &mut dyn FnMut(what_if::Block)| -> Result<(), Failure> {
        let mut scratch = Vec::new();
        for input in paths {
            let mut source = inputs.open(input, None)?;
            if args.what_if {
                source = source.without_progress();
            }
            feed.block.name = source.name.as_str().into();
            loop {
                let name = source.name.clone();
                match source.next()? {
                    Next::End => break,
                    Next::Partial(p) => {
                        summary.partial_bytes += p.bytes as u64;
                        break;
                    }
                    Next::Error(e) => {
                        eprintln!("krec: {name}: {e}");
                        summary.errors += 1;
                        break;
                    }
                    Next::Entry(batch) => {
                        summary.entries += 1;
                        summary.bytes += batch.size_in_bytes() as u64;
                        let crc_valid = batch.is_crc_valid();
                        if !crc_valid {
                            eprintln!(
                                "krec: {name}: entry at byte {}: crc mismatch",
                                batch.position()
                            );
                            summary.invalid_crc_entries += 1;
                        }
                        let feeding = args.what_if && !feed.full;
                        let left_out = feed.left_out;
                        match account(&batch, &mut scratch, args.read.max_decompressed_bytes()) {
                            Ok((key, g, headers)) => {
                                summary.records += g.records;
                                let entry = groups.entry(key).or_default();
                                merge(entry, &g);
                                if feeding && crc_valid {
                                    let b = &mut feed.block;
                                    if b.data.is_empty() {
                                        b.base = batch.position();
                                    }
                                    b.data.extend_from_slice(batch.as_bytes());
                                    feed.input_bytes += g.bytes;
                                    if matches!(&batch, Batch::V2(b) if b.is_control()) {
                                        feed.control_records += g.records;
                                    } else {
                                        feed.records += g.records;
                                        feed.payload += g.payload;
                                        feed.headers += headers;
                                        feed.block.payload += g.payload;
                                    }
                                    if feed.block.data.len() >= what_if::BLOCK_BYTES {
                                        feed.send(sink, false);
                                    }
                                } else if feeding {
                                    feed.left_out += 1;
                                }
                            }
                            Err(e) => {
                                eprintln!("krec: {name}: cannot decode the records of the entry at byte {}: {e}", batch.position());
                                summary.errors += 1;
                                let id = match &batch {
                                    Batch::Legacy(b) => b.attributes() & 7,
                                    Batch::V2(b) => (b.attributes() & 7) as u8,
                                };
                                let entry = groups.entry((batch.magic(), id)).or_default();
                                entry.entries += 1;
                                entry.bytes += batch.size_in_bytes() as u64;
                                if feeding {
                                    feed.left_out += 1;
                                }
                            }
                        }
                        if feed.left_out > left_out && !feed.block.data.is_empty() {
                            // The next block starts after the entry left out.
                            feed.send(sink, false);
                        }
                        if args.sample > 0 && feed.records >= args.sample {
                            feed.full = true;
                        }
                    }
                }
            }
            if args.what_if {
                feed.send(sink, true);
            }
        }
        Ok(())
    };
    let what_if = if args.what_if {
        let total_bytes = paths
            .iter()
            .filter_map(Input::path)
            .filter_map(|p| std::fs::metadata(p).ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum();
        let threads = match args.threads {
            Some(n) => n as usize,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let cfg = what_if::Config {
            threads: threads.min(specs.len()).max(1),
            timing: (!args.no_timing).then(|| Duration::from_millis(args.min_time_ms)),
            clock: what_if::Clock::detect(),
            decompress_limit: args.read.max_decompressed_bytes(),
            total_bytes,
        };
        let measured = what_if::run(&specs, &cfg, &mut scan)?;
        Some(what_if_rows(&args, &cfg, &feed, &specs, measured))
    } else {
        scan(&mut |_| {})?;
        None
    };
    let group_rows: Vec<GroupJson> = groups
        .iter()
        .map(|(&(m, c), g)| GroupJson::new(m, c, g))
        .collect();
    match args.format {
        Format::Json => {
            let mut obj = serde_json::json!({"summary": summary, "groups": group_rows});
            if let Some((info, rows)) = &what_if {
                obj["what_if"] = serde_json::to_value(info).map_err(std::io::Error::from)?;
                obj["rows"] = serde_json::to_value(rows).map_err(std::io::Error::from)?;
            }
            serde_json::to_writer(&mut *out, &obj).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
        Format::Text => {
            write_text_summary(out, &summary, &group_rows)?;
            if let Some((info, rows)) = &what_if {
                write_text_what_if(out, info, rows)?;
            }
        }
    }
    let problem = summary.errors > 0 || summary.invalid_crc_entries > 0;
    Ok(if problem {
        Outcome::DataProblem
    } else {
        Outcome::Ok
    })
}

fn merge(into: &mut Group, g: &Group) {
    into.entries += g.entries;
    into.bytes += g.bytes;
    into.decoded_entries += g.decoded_entries;
    into.decoded_bytes += g.decoded_bytes;
    into.records += g.records;
    into.batch_overhead += g.batch_overhead;
    into.record_overhead += g.record_overhead;
    into.payload += g.payload;
    into.uncompressed += g.uncompressed;
}

fn payload_of(r: &Record<'_>) -> u64 {
    let headers: usize = r
        .headers()
        .map(|h| h.key.len() + h.value.map_or(0, <[u8]>::len))
        .sum();
    (r.key().map_or(0, <[u8]>::len) + r.value().map_or(0, <[u8]>::len) + headers) as u64
}

/// Sizes one entry (decoding its records). Returns the (magic, codec id) key, the entry's sizes
/// and its number of headers.
fn account(
    batch: &Batch<'_>,
    scratch: &mut Vec<u8>,
    limit: usize,
) -> Result<((u8, u8), Group, u64), krecords_codec::Error> {
    let size = batch.size_in_bytes() as u64;
    let codec = batch.compression()?;
    let mut g = Group {
        entries: 1,
        bytes: size,
        decoded_entries: 1,
        decoded_bytes: size,
        ..Group::default()
    };
    let mut records_size = 0u64;
    let mut headers = 0u64;
    for r in batch.records(scratch, limit)? {
        let r = r?;
        let payload = payload_of(&r);
        let stored = match &r {
            Record::V2(v) => v.size as u64,
            Record::Legacy(m) => m.size_in_bytes() as u64,
        };
        g.records += 1;
        g.payload += payload;
        g.record_overhead += stored.saturating_sub(payload);
        records_size += stored;
        headers += r.headers().len() as u64;
    }
    g.batch_overhead = match batch {
        Batch::V2(_) => krecords_codec::layout::v2::RECORDS_OFFSET as u64,
        Batch::Legacy(b) if b.is_compressed() => size - b.value().map_or(0, <[u8]>::len) as u64,
        Batch::Legacy(_) => 0,
    };
    g.uncompressed = g.batch_overhead + records_size;
    Ok(((batch.magic(), codec.id()), g, headers))
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

/// The rows: every magic × codec it allows, at the default level and at the extra levels, each
/// with the options `krec convert` would use (checked here, so a refused level is a usage error).
fn row_specs(
    args: &Args,
    extra_levels: &[(Compression, i32)],
) -> Result<Vec<(what_if::Spec, ConvertOptions)>, Failure> {
    let mut specs = Vec::new();
    for magic in 0..=2u8 {
        for codec in Compression::ALL.into_iter().filter(|c| c.allowed_in(magic)) {
            let mut levels: Vec<Option<i32>> = vec![None];
            let mut extra: Vec<i32> = extra_levels
                .iter()
                .filter(|(c, l)| *c == codec && Some(*l) != codec.default_level())
                .map(|&(_, l)| l)
                .collect();
            extra.sort_unstable();
            extra.dedup();
            levels.extend(extra.into_iter().map(Some));
            for level in levels {
                let opts = convert::options(
                    magic,
                    Some(codec),
                    level,
                    args.records_per_batch,
                    args.read.max_decompressed_bytes(),
                );
                opts.validate()
                    .map_err(|e| Failure::Usage(format!("--levels: {e}")))?;
                specs.push((
                    what_if::Spec {
                        magic,
                        codec,
                        level,
                    },
                    opts,
                ));
            }
        }
    }
    Ok(specs)
}

/// What --what-if measured, besides the rows.
#[derive(Serialize)]
struct WhatIf {
    /// Data records converted (control records not counted).
    records: u64,
    /// Stored bytes of the entries converted.
    input_bytes: u64,
    /// Keys, values and headers of those records.
    payload_bytes: u64,
    /// Entries of the uncompressed v2 row: the batches the records make.
    batches: u64,
    batching: String,
    speed_unit: &'static str,
    /// How the speed columns were measured.
    timing: String,
    threads: usize,
    /// Records of control batches (transaction markers): kept as they are in v2 rows, dropped
    /// in v0/v1 rows, as convert does; not counted in `records`.
    skipped_control_records: u64,
    /// Entries left out: CRC mismatches and entries whose records cannot be decoded.
    entries_left_out: u64,
}

#[derive(Serialize)]
struct Row {
    magic: u8,
    compression: &'static str,
    level: Option<i32>,
    bytes: Option<u64>,
    records: u64,
    entries: Option<u64>,
    /// Entries already in this format and codec, copied unchanged (as convert does).
    entries_copied: Option<u64>,
    bytes_per_record: Option<f64>,
    ratio: Option<f64>,
    encode_mb_s: Option<f64>,
    decode_mb_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

fn what_if_rows(
    args: &Args,
    cfg: &what_if::Config,
    feed: &Feed,
    specs: &[(what_if::Spec, ConvertOptions)],
    measured: Vec<what_if::Measured>,
) -> (WhatIf, Vec<Row>) {
    let mb_s = |(payload, elapsed): (u64, Duration)| {
        let secs = elapsed.as_secs_f64();
        (secs > 0.0).then(|| (payload as f64 / secs / 1e6 * 10.0).round() / 10.0)
    };
    let mut rows = Vec::new();
    let mut batches = 0;
    for ((spec, _), m) in specs.iter().zip(measured) {
        let mut row = Row {
            magic: spec.magic,
            compression: spec.codec.name(),
            level: spec.level.or(spec.codec.default_level()),
            bytes: None,
            records: feed.records,
            entries: None,
            entries_copied: None,
            bytes_per_record: None,
            ratio: None,
            encode_mb_s: None,
            decode_mb_s: None,
            note: (spec.magic < 2 && feed.headers > 0)
                .then(|| "headers dropped: v0/v1 cannot carry them".to_string()),
            error: m.error,
        };
        if row.error.is_none() {
            let bytes = m.stats.bytes_out as u64;
            row.bytes = Some(bytes);
            row.entries = Some(m.stats.entries_out as u64);
            row.entries_copied = Some(m.stats.entries_passed_through as u64);
            row.bytes_per_record = per(bytes, feed.records);
            row.ratio = per(bytes, feed.input_bytes);
            row.encode_mb_s = mb_s(m.encode);
            row.decode_mb_s = mb_s(m.decode);
            if let (Some(level), n @ 1..) = (spec.level, m.stats.entries_passed_through) {
                let note = format!(
                    "{n} entries already {} copied unchanged, not recompressed at level {level} \
                     (as convert does: Kafka compares codecs, not levels)",
                    spec.codec.name()
                );
                row.note = Some(match row.note.take() {
                    Some(n) => format!("{n}; {note}"),
                    None => note,
                });
            }
            if spec.magic == 2 && spec.codec == Compression::None && spec.level.is_none() {
                batches = m.stats.entries_out as u64;
            }
        }
        rows.push(row);
    }
    let timing = if cfg.timing.is_some() {
        let clock = match cfg.clock {
            what_if::Clock::ThreadCpu => {
                "CPU time of the one thread that ran it (Linux schedstat), so other rows and \
                 other processes do not count"
            }
            what_if::Clock::Wall => "wall time of the one thread that ran it",
        };
        format!(
            "each row timed single-threaded: {clock} ({} thread{} ran rows in parallel); \
             encode = converting the input into the row (reading and decompressing it, building \
             and compressing the entries), decode = reading the row's entries back (CRCs, \
             decompression, every record)",
            cfg.threads,
            if cfg.threads == 1 { "" } else { "s" }
        )
    } else {
        "not measured (--no-timing)".to_string()
    };
    let info = WhatIf {
        records: feed.records,
        input_bytes: feed.input_bytes,
        payload_bytes: feed.payload,
        batches,
        batching: format!(
            "as krec convert does: {}",
            convert::batching_text(args.records_per_batch)
        ),
        speed_unit: "MB/s: 10^6 bytes of record payload (keys, values, headers) per second",
        timing,
        threads: cfg.threads,
        skipped_control_records: feed.control_records,
        entries_left_out: feed.left_out,
    };
    (info, rows)
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.decimals$}"))
}

fn write_text_summary(
    out: &mut impl Write,
    s: &Summary,
    groups: &[GroupJson],
) -> std::io::Result<()> {
    writeln!(
        out,
        "{} file{}, {} {}, {} records, {} bytes{}",
        s.files,
        if s.files == 1 { "" } else { "s" },
        s.entries,
        if s.entries == 1 { "entry" } else { "entries" },
        s.records,
        s.bytes,
        if s.partial_bytes > 0 {
            format!(" (+{} bytes of a truncated tail)", s.partial_bytes)
        } else {
            String::new()
        }
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:>5}  {:<11}  {:>9}  {:>10}  {:>12}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>6}",
        "magic",
        "compression",
        "entries",
        "records",
        "bytes",
        "bytes/rec",
        "batch",
        "record",
        "payload",
        "rec/batch",
        "ratio"
    )?;
    for g in groups {
        writeln!(
            out,
            "{:>5}  {:<11}  {:>9}  {:>10}  {:>12}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>6}",
            g.magic,
            g.compression,
            g.entries,
            g.records,
            g.bytes,
            opt(g.bytes_per_record, 2),
            opt(g.batch_overhead_per_record, 2),
            opt(g.record_overhead_per_record, 2),
            opt(g.payload_per_record, 2),
            opt(g.records_per_batch, 1),
            opt(g.compression_ratio, 2),
        )?;
    }
    writeln!(
        out,
        "(bytes/rec: stored; batch + record overhead + payload per record add up to the uncompressed size; ratio: uncompressed / stored)"
    )
}

fn write_text_what_if(out: &mut impl Write, info: &WhatIf, rows: &[Row]) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "what if: the same {} records ({} payload bytes, now {} bytes) in {} batch{}, batched {}",
        info.records,
        info.payload_bytes,
        info.input_bytes,
        info.batches,
        if info.batches == 1 { "" } else { "es" },
        info.batching
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:>5}  {:<11}  {:>5}  {:>12}  {:>9}  {:>8}  {:>11}  {:>11}",
        "magic",
        "compression",
        "level",
        "bytes",
        "bytes/rec",
        "vs now",
        "encode MB/s",
        "decode MB/s"
    )?;
    for r in rows {
        let line = format!(
            "{:>5}  {:<11}  {:>5}  {:>12}  {:>9}  {:>8}  {:>11}  {:>11}",
            r.magic,
            r.compression,
            r.level.map_or_else(|| "-".into(), |l| l.to_string()),
            r.bytes.map_or_else(|| "-".into(), |b| b.to_string()),
            opt(r.bytes_per_record, 2),
            opt(r.ratio, 3),
            opt(r.encode_mb_s, 1),
            opt(r.decode_mb_s, 1),
        );
        match (&r.error, &r.note) {
            (Some(e), _) => writeln!(out, "{line}  error: {e}")?,
            (None, Some(n)) => writeln!(out, "{line}  {n}")?,
            (None, None) => writeln!(out, "{line}")?,
        }
    }
    writeln!(
        out,
        "(each row is what `krec convert --magic M --compression CODEC[:LEVEL]` writes, entries \
         already in its format and codec copied unchanged; vs now: bytes / current bytes)"
    )?;
    if info.skipped_control_records > 0 || info.entries_left_out > 0 {
        writeln!(
            out,
            "({} control records not counted: v2 rows keep their batches, v0/v1 rows drop them; \
             {} entries left out: crc mismatch or undecodable)",
            info.skipped_control_records, info.entries_left_out
        )?;
    }
    writeln!(out, "(speeds in {}; {})", info.speed_unit, info.timing)
}
