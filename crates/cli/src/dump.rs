//! `krec dump`: print the entries of segment files (kafka-dump-log style text, or JSON Lines).

use crate::bytes_fmt::BytesFormat;
use crate::entry_json;
use crate::java_text;
use crate::source::{expand_paths, Next, Source};
use crate::{Context, Failure, Outcome};
use clap::ValueEnum;
use krecords_codec::read::{Batch, Record};
use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;
use std::io::Write;
use std::path::PathBuf;

/// Print the entries of log segments or any file of concatenated Kafka entries.
///
/// Examples:
///   krec dump 00000000000000000000.log
///   krec dump --deep --format json --bytes hex /var/kafka/topic-0/
///   cat entries.bin | krec dump --format json -
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Segment files, partition directories, or `-` for stdin.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Iterate the records of every entry (kafka-dump-log's --deep-iteration).
    #[arg(long, alias = "deep-iteration")]
    deep: bool,
    /// Print keys, values and headers (kafka-dump-log's --print-data-log); implies --deep.
    #[arg(long, alias = "print-data-log")]
    print_data: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// How keys, values and header values appear.
    #[arg(long, value_enum, default_value_t = BytesFormat::Utf8)]
    bytes: BytesFormat,
    /// Upper bound on the decompressed size of one entry.
    #[arg(long, default_value_t = DEFAULT_DECOMPRESS_LIMIT)]
    max_decompressed_bytes: usize,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// kafka-dump-log's line format.
    Text,
    /// One JSON object per entry.
    Json,
}

/// Runs the subcommand.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let paths = expand_paths(&args.paths).context(|| "cannot list input".into())?;
    let mut problem = false;
    let mut scratch = Vec::new();
    for path in &paths {
        let mut source =
            Source::open(path).context(|| format!("cannot open {}", path.display()))?;
        if args.format == Format::Text {
            writeln!(out, "Dumping {}", source.name)?;
            if let Some(start) = log_start_offset(path) {
                writeln!(out, "Log starting offset: {start}")?;
            }
        }
        loop {
            let name = source.name.clone();
            let next = source
                .next_entry()
                .context(|| format!("cannot read {name}"))?;
            match next {
                Next::End => break,
                Next::Entry(batch) => {
                    if !dump_entry(&args, &name, &batch, &mut scratch, out)? {
                        problem = true;
                    }
                }
                Next::Partial(p) => match args.format {
                    Format::Json => writeln!(
                        out,
                        "{}",
                        serde_json::json!({"file": name, "position": p.position, "partial": true, "bytes": p.bytes})
                    )?,
                    Format::Text => writeln!(
                        out,
                        "Found {} invalid bytes at the end of {}",
                        p.bytes,
                        file_name(&name)
                    )?,
                },
                Next::Error(e) => {
                    problem = true;
                    let position = source.position();
                    let rest = source
                        .remaining_bytes()
                        .context(|| format!("cannot read {name}"))?;
                    match args.format {
                        Format::Json => writeln!(
                            out,
                            "{}",
                            serde_json::json!({"file": name, "position": position, "error": e.to_string()})
                        )?,
                        Format::Text => {
                            writeln!(
                                out,
                                "Found {rest} invalid bytes at the end of {}",
                                file_name(&name)
                            )?;
                            eprintln!("krec: {name}: {e}");
                        }
                    }
                }
            }
        }
    }
    Ok(if problem {
        Outcome::DataProblem
    } else {
        Outcome::Ok
    })
}

fn file_name(name: &str) -> &str {
    std::path::Path::new(name)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(name)
}

/// The base offset in a segment file name (`00000000000000000042.log` → 42).
fn log_start_offset(path: &std::path::Path) -> Option<i64> {
    let stem = path.file_stem()?.to_str()?;
    (path.extension()? == "log" && stem.len() == 20).then(|| stem.parse().ok())?
}

/// Prints one entry; returns false when it has a problem (bad CRC or undecodable records).
fn dump_entry(
    args: &Args,
    name: &str,
    batch: &Batch<'_>,
    scratch: &mut Vec<u8>,
    out: &mut impl Write,
) -> Result<bool, Failure> {
    let deep = args.deep || args.print_data;
    let legacy_wrapper = matches!(batch, Batch::Legacy(b) if b.is_compressed());
    let control = matches!(batch, Batch::V2(b) if b.is_control());
    let mut records = Vec::new();
    let mut record_error = None;
    let mut first_offset = None;
    let mut count = 0i64;
    if deep || legacy_wrapper {
        match batch.records(scratch, args.max_decompressed_bytes) {
            Ok(iter) => {
                for r in iter {
                    match r {
                        Ok(r) => {
                            first_offset.get_or_insert(r.offset());
                            count += 1;
                            if deep {
                                records.push(r);
                            }
                        }
                        Err(e) => {
                            record_error = Some(e);
                            break;
                        }
                    }
                }
            }
            Err(e) => record_error = Some(e),
        }
    }
    let ok = batch.is_crc_valid() && record_error.is_none();
    let (first, cnt) = if legacy_wrapper {
        (first_offset, Some(count))
    } else {
        (None, None)
    };
    match args.format {
        Format::Json => {
            if let Some(e) = &record_error {
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"file": name, "position": batch.position(), "error": e.to_string()})
                )?;
                return Ok(false);
            }
            let mut entry = entry_json::entry(name, batch, first, cnt);
            if deep {
                entry.records = Some(
                    records
                        .iter()
                        .map(|r| entry_json::record(r, control, args.bytes))
                        .collect(),
                );
            }
            serde_json::to_writer(&mut *out, &entry).map_err(std::io::Error::from)?;
            out.write_all(b"\n")?;
        }
        Format::Text => {
            write_text_entry(out, batch, first, cnt)?;
            for r in &records {
                write_text_record(
                    out,
                    r,
                    batch.timestamp_type().kafka_name(),
                    control,
                    args.print_data,
                )?;
            }
            if let Some(e) = &record_error {
                eprintln!("krec: {name}: {e}");
            }
        }
    }
    Ok(ok)
}

/// The batch line of kafka-dump-log (Kafka 4.4.0's `DumpLogSegments.printBatchLevel`).
fn write_text_entry(
    out: &mut impl Write,
    batch: &Batch<'_>,
    first: Option<i64>,
    count: Option<i64>,
) -> std::io::Result<()> {
    let e = entry_json::entry("", batch, first, count);
    match batch {
        Batch::V2(b) => write!(
            out,
            "baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} isControl: {} deleteHorizonMs: {}",
            e.base_offset,
            e.last_offset,
            e.count,
            e.base_sequence,
            b.last_sequence().unwrap_or(-1),
            e.producer_id,
            e.producer_epoch,
            e.partition_leader_epoch,
            e.transactional,
            e.control,
            b.delete_horizon_ms()
                .map_or("OptionalLong.empty".to_string(), |d| format!("OptionalLong[{d}]")),
        )?,
        // Legacy entries print only their (last) offset.
        Batch::Legacy(b) => write!(out, "offset: {}", b.offset())?,
    }
    writeln!(
        out,
        " position: {} {}: {} size: {} magic: {} compresscodec: {} crc: {} isvalid: {}",
        e.position,
        batch.timestamp_type().kafka_name(),
        e.max_timestamp.unwrap_or(-1),
        e.size_bytes,
        e.magic,
        e.compression,
        e.crc,
        e.crc_valid
    )
}

/// KRaft control records as kafka-dump-log 4.4.0 prints them: the type and the value as JSON.
fn write_kraft_control(out: &mut impl Write, r: &Record<'_>) -> std::io::Result<()> {
    use krecords_codec::control::{kraft_json, ControlRecordKey, ControlRecordType};
    let Ok(key) = ControlRecordKey::parse(r.key(), 0) else {
        return Ok(());
    };
    let label = match key.kind {
        ControlRecordType::LeaderChange => "LeaderChange:",
        ControlRecordType::SnapshotHeader => "SnapshotHeader",
        ControlRecordType::SnapshotFooter => "SnapshotFooter",
        ControlRecordType::KRaftVersion => "KRaftVersion",
        ControlRecordType::KRaftVoters => "KRaftVoters",
        _ => {
            return write!(
                out,
                " controlType: {}({})",
                key.kind.kafka_name(),
                key.kind.id()
            )
        }
    };
    match kraft_json(key.kind, r.value(), 0) {
        Ok(Some(json)) => write!(out, " {label} {json}"),
        _ => write!(out, " {label}"),
    }
}

/// A record line of kafka-dump-log (`| offset: ...`), with Java's rendering of bytes as text.
fn write_text_record(
    out: &mut impl Write,
    r: &Record<'_>,
    batch_ts_name: &'static str,
    control: bool,
    data: bool,
) -> std::io::Result<()> {
    let size = |b: Option<&[u8]>| b.map_or(-1, |b| b.len() as i64);
    write!(
        out,
        "| offset: {} {batch_ts_name}: {} keySize: {} valueSize: {}",
        r.offset(),
        r.timestamp().unwrap_or(-1),
        size(r.key()),
        size(r.value())
    )?;
    match r {
        Record::V2(v) => {
            let keys: Vec<String> = r.headers().map(|h| java_text::decode(h.key)).collect();
            write!(
                out,
                " sequence: {} headerKeys: [{}]",
                v.sequence.unwrap_or(-1),
                keys.join(",")
            )?;
        }
        Record::Legacy(l) => write!(out, " isValid: {} crc: {}", l.crc == l.compute_crc(), l.crc)?,
    }
    if control {
        let j = entry_json::record(r, true, BytesFormat::Hex);
        if let Some(c) = j.control {
            match c.coordinator_epoch {
                Some(epoch) => write!(
                    out,
                    " endTxnMarker: {} coordinatorEpoch: {}",
                    c.kind.to_uppercase(),
                    epoch
                )?,
                None => write_kraft_control(out, r)?,
            }
        }
    } else if data {
        if let Some(k) = r.key() {
            write!(out, " key: {}", java_text::decode(k))?;
        }
        if let Some(v) = r.value() {
            write!(out, " payload: {}", java_text::decode(v))?;
        }
    }
    writeln!(out)
}
