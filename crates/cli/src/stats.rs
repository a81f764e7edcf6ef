//! `krec stats`: sizes per magic and codec, and with `--what-if` the same records re-encoded in
//! every format and codec, measured (the chapter's V1-vs-V2 table, on the user's data).

use crate::build::parse_compression;
use crate::source::{expand_paths, Next, Source};
use crate::{Context, Failure, Outcome};
use clap::ValueEnum;
use krecords_codec::read::{Batch, Entries, Record as ReadRecord};
use krecords_codec::write::{LegacyBuilder, Record, V2Builder};
use krecords_codec::{Compression, Header, DEFAULT_DECOMPRESS_LIMIT};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;
use std::time::{Duration, Instant};

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
/// --what-if reads the records of every data batch (control batches are skipped) and encodes
/// the same records, offsets and timestamps as v0, v1 and v2 with every codec each allows
/// (v0/v1: none, gzip, snappy, lz4; v2: also zstd) at the default level and at the --levels
/// given, keeping the input's batching: v2 batches and v0/v1 wrappers as they are; runs of
/// uncompressed v0/v1 messages, which carry no batch boundaries, as one batch per run of up to
/// 1 MiB (what a broker accepts by default); or --records-per-batch N for all. Headers cannot be
/// written in v0/v1 and are dropped there (the row says so). Each row: bytes, bytes per record,
/// ratio = bytes / input bytes (below 1 is smaller than now), and encode and decode speed in
/// MB/s (10^6 bytes per second) of record payload (keys, values and headers, the same amount
/// for every row). Encode times the builders; decode times reading the entries, checking CRCs,
/// decompressing and iterating every record; each is repeated for at least --min-time-ms.
/// All records are held in memory: use --sample on large inputs.
///
/// Examples:
///   krec stats 00000000000000000000.log
///   krec stats --what-if --levels gzip:1,gzip:9,zstd:1,zstd:19 /var/kafka/events-0/
///   krec gen --magic 1 --records 1000 --value-size 100 --records-per-batch 1000 -o v1.bin
///   krec stats --what-if --format json v1.bin | jq '.rows[] | [.magic, .compression, .bytes_per_record]'
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Segment files, partition directories, or `-` for stdin.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Output format: aligned tables, or one JSON object {"summary","groups","what_if","rows"}.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Re-encode the records in every magic and codec and measure size and speed.
    #[arg(long)]
    what_if: bool,
    /// More levels for --what-if rows, comma-separated codec:level (gzip 1-9, lz4 1-17, zstd -131072-22).
    #[arg(long, value_delimiter = ',')]
    levels: Vec<String>,
    /// --what-if: N records per batch instead of the input's batching.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=i32::MAX as u64))]
    records_per_batch: Option<u64>,
    /// --what-if: use only the records of the first entries up to N records (0: all).
    #[arg(long, default_value_t = 0)]
    sample: u64,
    /// --what-if: repeat each encode and decode for at least this many milliseconds.
    #[arg(long, default_value_t = 50)]
    min_time_ms: u64,
    /// Upper bound on the decompressed size of one entry.
    #[arg(long, default_value_t = DEFAULT_DECOMPRESS_LIMIT)]
    max_decompressed_bytes: usize,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned tables.
    Text,
    /// One JSON object.
    Json,
}

/// A run of uncompressed v0/v1 messages becomes one what-if batch of at most this many input
/// bytes: Kafka's default `max.message.bytes` (1 MiB + 12), rounded to 1 MiB.
const LEGACY_RUN_BYTES: u64 = 1 << 20;

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

/// The records kept for --what-if, in one arena.
#[derive(Default)]
struct Store {
    arena: Vec<u8>,
    recs: Vec<Rec>,
    headers: Vec<(Range<usize>, Option<Range<usize>>)>,
    /// Batches of the input, as ranges of `recs`.
    groups: Vec<Range<usize>>,
    /// Stored bytes of the entries whose records are here.
    input_bytes: u64,
    payload: u64,
    header_count: u64,
    control_records: u64,
    /// Whether the last group is an open run of uncompressed v0/v1 messages, and its bytes.
    run_open: bool,
    run_bytes: u64,
    full: bool,
}

struct Rec {
    offset: i64,
    timestamp: i64,
    key: Option<Range<usize>>,
    value: Option<Range<usize>>,
    headers: Range<usize>,
}

impl Store {
    fn push_bytes(&mut self, b: Option<&[u8]>) -> Option<Range<usize>> {
        b.map(|b| {
            let start = self.arena.len();
            self.arena.extend_from_slice(b);
            start..self.arena.len()
        })
    }

    fn push(&mut self, r: &ReadRecord<'_>) {
        let key = self.push_bytes(r.key());
        let value = self.push_bytes(r.value());
        let h0 = self.headers.len();
        for h in r.headers() {
            let k = self.push_bytes(Some(h.key)).unwrap_or(0..0);
            let v = self.push_bytes(h.value);
            self.payload += (h.key.len() + h.value.map_or(0, <[u8]>::len)) as u64;
            self.headers.push((k, v));
            self.header_count += 1;
        }
        self.payload += (r.key().map_or(0, <[u8]>::len) + r.value().map_or(0, <[u8]>::len)) as u64;
        self.recs.push(Rec {
            offset: r.offset(),
            timestamp: r.timestamp().unwrap_or(-1),
            key,
            value,
            headers: h0..self.headers.len(),
        });
    }
}

/// Runs the subcommand.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let extra_levels = parse_levels(&args.levels)?;
    let paths = expand_paths(&args.paths).context(|| "cannot list input".into())?;
    let mut groups: BTreeMap<(u8, u8), Group> = BTreeMap::new();
    let mut summary = Summary {
        files: paths.len(),
        ..Summary::default()
    };
    let mut store = Store::default();
    let mut scratch = Vec::new();
    for path in &paths {
        let mut source =
            Source::open(path).context(|| format!("cannot open {}", path.display()))?;
        store.run_open = false;
        loop {
            let name = source.name.clone();
            match source
                .next_entry()
                .context(|| format!("cannot read {name}"))?
            {
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
                    if !batch.is_crc_valid() {
                        eprintln!(
                            "krec: {name}: entry at byte {}: crc mismatch",
                            batch.position()
                        );
                        summary.invalid_crc_entries += 1;
                    }
                    let collect = args.what_if && !store.full;
                    match account(
                        &batch,
                        &mut scratch,
                        args.max_decompressed_bytes,
                        collect.then_some(&mut store),
                    ) {
                        Ok((key, g)) => {
                            summary.records += g.records;
                            let entry = groups.entry(key).or_default();
                            merge(entry, &g);
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
                        }
                    }
                    if args.sample > 0 && store.recs.len() as u64 >= args.sample {
                        store.full = true;
                    }
                }
            }
        }
    }
    let group_rows: Vec<GroupJson> = groups
        .iter()
        .map(|(&(m, c), g)| GroupJson::new(m, c, g))
        .collect();
    let what_if = if args.what_if {
        Some(what_if(&args, &store, &extra_levels))
    } else {
        None
    };
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

fn payload_of(r: &ReadRecord<'_>) -> u64 {
    let headers: usize = r
        .headers()
        .map(|h| h.key.len() + h.value.map_or(0, <[u8]>::len))
        .sum();
    (r.key().map_or(0, <[u8]>::len) + r.value().map_or(0, <[u8]>::len) + headers) as u64
}

/// Sizes one entry (decoding its records) and, with a store, keeps its data records.
/// Returns the (magic, codec id) key and the entry's sizes.
fn account(
    batch: &Batch<'_>,
    scratch: &mut Vec<u8>,
    limit: usize,
    store: Option<&mut Store>,
) -> Result<((u8, u8), Group), krecords_codec::Error> {
    let size = batch.size_in_bytes() as u64;
    let codec = batch.compression()?;
    let mut g = Group {
        entries: 1,
        bytes: size,
        decoded_entries: 1,
        decoded_bytes: size,
        ..Group::default()
    };
    let control = matches!(batch, Batch::V2(b) if b.is_control());
    let legacy_plain = matches!(batch, Batch::Legacy(b) if !b.is_compressed());
    let mut kept = Vec::new();
    let mut records_size = 0u64;
    for r in batch.records(scratch, limit)? {
        let r = r?;
        let payload = payload_of(&r);
        let stored = match &r {
            ReadRecord::V2(v) => v.size as u64,
            ReadRecord::Legacy(m) => m.size_in_bytes() as u64,
        };
        g.records += 1;
        g.payload += payload;
        g.record_overhead += stored.saturating_sub(payload);
        records_size += stored;
        if store.is_some() && !control {
            kept.push(r);
        }
    }
    g.batch_overhead = match batch {
        Batch::V2(_) => krecords_codec::read::v2::RECORDS_OFFSET as u64,
        Batch::Legacy(b) if b.is_compressed() => size - b.value().map_or(0, <[u8]>::len) as u64,
        Batch::Legacy(_) => 0,
    };
    g.uncompressed = g.batch_overhead + records_size;
    if let Some(store) = store {
        if control {
            store.control_records += g.records;
            store.run_open = false;
        } else if !kept.is_empty() {
            let start = store.recs.len();
            for r in &kept {
                store.push(r);
            }
            store.input_bytes += size;
            if legacy_plain && store.run_open && store.run_bytes + size <= LEGACY_RUN_BYTES {
                if let Some(last) = store.groups.last_mut() {
                    last.end = store.recs.len();
                }
                store.run_bytes += size;
            } else {
                store.groups.push(start..store.recs.len());
                store.run_open = legacy_plain;
                store.run_bytes = size;
            }
        }
    }
    Ok(((batch.magic(), codec.id()), g))
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

/// What --what-if measured, besides the rows.
#[derive(Serialize)]
struct WhatIf {
    records: u64,
    /// Stored bytes of the entries the records came from.
    input_bytes: u64,
    /// Keys, values and headers of those records.
    payload_bytes: u64,
    /// Batches the records are grouped into.
    batches: u64,
    batching: String,
    speed_unit: &'static str,
    skipped_control_records: u64,
}

#[derive(Serialize)]
struct Row {
    magic: u8,
    compression: &'static str,
    level: Option<i32>,
    bytes: Option<u64>,
    records: u64,
    entries: Option<u64>,
    bytes_per_record: Option<f64>,
    ratio: Option<f64>,
    encode_mb_s: Option<f64>,
    decode_mb_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// A record to write, with the offset it had in the input.
struct Input<'a> {
    offset: i64,
    record: Record<'a>,
}

fn what_if(args: &Args, store: &Store, extra_levels: &[(Compression, i32)]) -> (WhatIf, Vec<Row>) {
    let slice = |r: &Range<usize>| &store.arena[r.clone()];
    let headers: Vec<Header<'_>> = store
        .headers
        .iter()
        .map(|(k, v)| Header {
            key: slice(k),
            value: v.as_ref().map(slice),
        })
        .collect();
    let inputs: Vec<Input<'_>> = store
        .recs
        .iter()
        .map(|r| Input {
            offset: r.offset,
            record: Record::new(
                r.timestamp,
                r.key.as_ref().map(slice),
                r.value.as_ref().map(slice),
            )
            .with_headers(&headers[r.headers.clone()]),
        })
        .collect();
    let (groups, batching): (Vec<Range<usize>>, String) = match args.records_per_batch {
        Some(n) => {
            let n = n as usize;
            let groups = (0..inputs.len()).step_by(n).map(|s| s..(s + n).min(inputs.len())).collect();
            (groups, format!("{n} records per batch (--records-per-batch)"))
        }
        None => (
            store.groups.clone(),
            "as in the input: v2 batches and v0/v1 wrappers kept, each run of uncompressed v0/v1 messages one batch of up to 1 MiB".into(),
        ),
    };
    let info = WhatIf {
        records: inputs.len() as u64,
        input_bytes: store.input_bytes,
        payload_bytes: store.payload,
        batches: groups.len() as u64,
        batching,
        speed_unit: "MB/s: 10^6 bytes of record payload (keys, values, headers) per second",
        skipped_control_records: store.control_records,
    };
    let min_time = Duration::from_millis(args.min_time_ms);
    let mut rows = Vec::new();
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
                rows.push(measure_row(
                    magic, codec, level, &inputs, &groups, &info, args, min_time,
                ));
            }
        }
    }
    (info, rows)
}

#[allow(clippy::too_many_arguments)]
fn measure_row(
    magic: u8,
    codec: Compression,
    level: Option<i32>,
    inputs: &[Input<'_>],
    groups: &[Range<usize>],
    info: &WhatIf,
    args: &Args,
    min_time: Duration,
) -> Row {
    let mut row = Row {
        magic,
        compression: codec.name(),
        level: level.or(codec.default_level()),
        bytes: None,
        records: inputs.len() as u64,
        entries: None,
        bytes_per_record: None,
        ratio: None,
        encode_mb_s: None,
        decode_mb_s: None,
        note: (magic < 2
            && info.payload_bytes > 0
            && inputs.iter().any(|i| !i.record.headers.is_empty()))
        .then(|| "headers dropped: v0/v1 cannot carry them".to_string()),
        error: None,
    };
    if codec == Compression::Lz4 && level.is_some_and(|l| Some(l) != codec.default_level()) {
        // krecords-codec's lz4 has one (fast) compressor; Kafka uses LZ4 HC for non-default levels.
        let note = "level not applied: one fast lz4 compressor (Kafka would use LZ4 HC)";
        row.note = Some(
            row.note
                .map_or_else(|| note.to_string(), |n| format!("{n}; {note}")),
        );
    }
    let mut encoded = Vec::new();
    let entries = match encode(magic, codec, level, inputs, groups, &mut encoded) {
        Ok(n) => n,
        Err(e) => {
            row.error = Some(e.to_string());
            return row;
        }
    };
    let mut scratch = Vec::new();
    let limit = args.max_decompressed_bytes;
    if let Err(e) = decode(&encoded, &mut scratch, limit) {
        row.error = Some(format!("reading back: {e}"));
        return row;
    }
    row.entries = Some(entries);
    row.bytes = Some(encoded.len() as u64);
    row.bytes_per_record = per(encoded.len() as u64, inputs.len() as u64);
    row.ratio = per(encoded.len() as u64, info.input_bytes);
    let mb_s = |reps: u64, elapsed: Duration| {
        let secs = elapsed.as_secs_f64();
        (secs > 0.0)
            .then(|| (info.payload_bytes as f64 * reps as f64 / secs / 1e6 * 10.0).round() / 10.0)
    };
    let mut out = Vec::with_capacity(encoded.len());
    let (reps, elapsed) = repeat(min_time, || {
        out.clear();
        let _ = encode(magic, codec, level, inputs, groups, &mut out);
    });
    row.encode_mb_s = mb_s(reps, elapsed);
    let (reps, elapsed) = repeat(min_time, || {
        let _ = decode(&encoded, &mut scratch, limit);
    });
    row.decode_mb_s = mb_s(reps, elapsed);
    row
}

/// Runs `f` until `min` has passed (at least once); returns repetitions and time taken.
fn repeat(min: Duration, mut f: impl FnMut()) -> (u64, Duration) {
    let start = Instant::now();
    let mut reps = 0u64;
    loop {
        f();
        reps += 1;
        let elapsed = start.elapsed();
        if elapsed >= min {
            return (reps, elapsed);
        }
    }
}

/// Encodes the records, group by group, into `out`; returns the number of entries written.
fn encode(
    magic: u8,
    codec: Compression,
    level: Option<i32>,
    inputs: &[Input<'_>],
    groups: &[Range<usize>],
    out: &mut Vec<u8>,
) -> krecords_codec::Result<u64> {
    let mut entries = 0u64;
    for g in groups {
        let chunk = &inputs[g.clone()];
        let Some(first) = chunk.first() else { continue };
        let base = first.offset;
        let mut prev: Option<i64> = None;
        let mut next_offset = |o: i64| {
            let o = match prev {
                Some(p) if o <= p => p + 1,
                _ => o,
            };
            prev = Some(o);
            o
        };
        if magic == 2 {
            let mut b = V2Builder::new(base).compression(codec, level);
            for i in chunk {
                b.append_with_offset(next_offset(i.offset), &i.record)?;
            }
            b.finish_into(out)?;
            entries += 1;
        } else {
            let mut b = LegacyBuilder::new(magic, base)?.compression(codec, level)?;
            for i in chunk {
                let r = Record {
                    headers: &[],
                    ..i.record
                };
                b.append_with_offset(next_offset(i.offset), &r)?;
            }
            b.finish_into(out)?;
            entries += if codec == Compression::None {
                chunk.len() as u64
            } else {
                1
            };
        }
    }
    Ok(entries)
}

/// Reads everything back as a consumer would: entries, CRCs, decompression, every record.
fn decode(buf: &[u8], scratch: &mut Vec<u8>, limit: usize) -> Result<u64, String> {
    let mut sum = 0u64;
    let mut entries = Entries::new(buf);
    for batch in &mut entries {
        let batch = batch.map_err(|e| e.to_string())?;
        if !batch.is_crc_valid() {
            return Err(format!("entry at byte {}: crc mismatch", batch.position()));
        }
        for r in batch.records(scratch, limit).map_err(|e| e.to_string())? {
            let r = r.map_err(|e| e.to_string())?;
            sum = sum
                .wrapping_add(r.value().map_or(0, <[u8]>::len) as u64 + r.headers().len() as u64);
        }
    }
    if let Some(p) = entries.partial() {
        return Err(format!(
            "{} bytes left over at byte {}",
            p.bytes, p.position
        ));
    }
    Ok(std::hint::black_box(sum))
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
        "(vs now: bytes / current bytes; speeds in {})",
        info.speed_unit
    )
}
