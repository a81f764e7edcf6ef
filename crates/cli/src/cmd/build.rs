//! `krec build`: JSON lines of records in, Kafka log entries out.

use crate::args::EncodingArgs;
use crate::bytes_fmt::BytesFormat;
use crate::outcome::{Context, Failure, Outcome};
use crate::time_fmt::now_ms;
use krecords_codec::control::ControlRecordType;
use krecords_codec::write::{end_txn_marker, EndTxnBatch, LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, Header, TimestampType};
use serde::Deserialize;
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// Build log entries from JSON lines of records read on stdin (or --input).
///
/// Each input line: {"timestamp":1714000000000,"key":null,"value":"hello","headers":[{"key":"k","value":"v"}]}
/// ("offset" is optional: gaps are allowed, offsets must increase). Keys and values are read per
/// --bytes. Offsets run on from --base-offset across batches; producer sequences likewise.
///
/// Examples:
///   echo '{"timestamp":1714000000000,"value":"hello"}' | krec build --output one.bin
///   krec build --magic 1 --compression gzip:9 --records-per-batch 100 < records.jsonl > v1.bin
///   krec build --control commit --producer-id 7 --producer-epoch 0 --coordinator-epoch 3 > marker.bin
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(flatten)]
    encoding: EncodingArgs,
    /// Offset of the first record.
    #[arg(long, default_value_t = 0)]
    base_offset: i64,
    /// create_time or log_append_time (v1, v2).
    #[arg(long, default_value = "create_time")]
    timestamp_type: String,
    /// Append time written under log_append_time (default: now).
    #[arg(long)]
    log_append_time: Option<i64>,
    /// Producer id (v2).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    producer_id: i64,
    /// Producer epoch (v2).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    producer_epoch: i16,
    /// Base sequence of the first batch (v2); later batches continue from it.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    base_sequence: i32,
    /// Mark batches transactional (v2).
    #[arg(long)]
    transactional: bool,
    /// Partition leader epoch (v2); -1 as a producer writes it.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    partition_leader_epoch: i32,
    /// Delete horizon in ms (v2; sets attributes bit 6).
    #[arg(long)]
    delete_horizon_ms: Option<i64>,
    /// Records per entry (batch or wrapper); 0 = all in one.
    #[arg(long, default_value_t = 0)]
    records_per_batch: usize,
    /// How keys, values and header values are given.
    #[arg(long, value_enum, default_value_t = BytesFormat::Utf8)]
    bytes: BytesFormat,
    /// Read records from this file instead of stdin.
    #[arg(long)]
    input: Option<PathBuf>,
    /// Write here instead of stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Write a transaction marker batch instead (commit or abort); reads no input.
    #[arg(long)]
    control: Option<String>,
    /// Coordinator epoch of the marker.
    #[arg(long, default_value_t = 0)]
    coordinator_epoch: i32,
    /// Timestamp of the marker (default: now).
    #[arg(long)]
    timestamp: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InputRecord {
    #[serde(default)]
    offset: Option<i64>,
    #[serde(default)]
    timestamp: Option<i64>,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    headers: Vec<InputHeader>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InputHeader {
    key: String,
    #[serde(default)]
    value: Option<String>,
}

/// A record read from a JSON line, with owned bytes.
pub struct OwnedRecord {
    /// The `offset` given in the input, if any.
    pub offset: Option<i64>,
    /// The timestamp (the time of reading when the input had none).
    pub timestamp: i64,
    /// Key bytes.
    pub key: Option<Vec<u8>>,
    /// Value bytes.
    pub value: Option<Vec<u8>>,
    /// Headers in order: key bytes, optional value bytes.
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

/// Appends `$recs` (each at its given offset, or at the next one) to `$b`, a `V2Builder` or a
/// `LegacyBuilder` (alike in these methods, with no trait in common), and finishes the entry into
/// `$buf`; evaluates to the offset after the entry, returning a codec error from the function.
macro_rules! append_all {
    ($b:ident, $recs:expr, $buf:expr) => {{
        let mut b = $b;
        for (offset, r) in $recs {
            match offset {
                Some(o) => b.append_with_offset(*o, r).map_err(codec_error)?,
                None => {
                    b.append(r).map_err(codec_error)?;
                }
            }
        }
        let next_offset = b.next_offset();
        b.finish_into($buf).map_err(codec_error)?;
        next_offset
    }};
}

/// Runs the subcommand.
pub fn run(args: Args, stdout: &mut impl Write) -> Result<Outcome, Failure> {
    let bytes = if let Some(kind) = &args.control {
        build_control(&args, kind)?
    } else {
        let records = read_records(&args)?;
        build_records(&args, &records)?
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, &bytes).context(|| format!("cannot write {}", path.display()))?
        }
        None => stdout.write_all(&bytes)?,
    }
    Ok(Outcome::Ok)
}

fn read_records(args: &Args) -> Result<Vec<OwnedRecord>, Failure> {
    let reader: Box<dyn BufRead> = match &args.input {
        Some(p) => Box::new(std::io::BufReader::new(
            std::fs::File::open(p).context(|| format!("cannot open {}", p.display()))?,
        )),
        None => Box::new(std::io::stdin().lock()),
    };
    read_json_records(reader, args.bytes)
}

/// Reads records as JSON lines (`{"timestamp":..,"key":..,"value":..,"headers":[..]}`, bytes
/// per `bytes`; blank lines skipped; a missing timestamp is now).
///
/// # Errors
///
/// A usage error naming the line for malformed JSON or bytes; I/O errors.
pub fn read_json_records(
    reader: impl BufRead,
    bytes: BytesFormat,
) -> Result<Vec<OwnedRecord>, Failure> {
    let now = now_ms();
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.context(|| "cannot read input".into())?;
        if line.trim().is_empty() {
            continue;
        }
        let r: InputRecord = serde_json::from_str(&line)
            .map_err(|e| Failure::Usage(format!("input line {}: {e}", i + 1)))?;
        let parse = |s: Option<String>| -> Result<Option<Vec<u8>>, Failure> {
            s.map(|s| {
                bytes
                    .parse(&s)
                    .map_err(|e| Failure::Usage(format!("input line {}: {e}", i + 1)))
            })
            .transpose()
        };
        let mut headers = Vec::with_capacity(r.headers.len());
        for h in r.headers {
            headers.push((h.key.into_bytes(), parse(h.value)?));
        }
        out.push(OwnedRecord {
            offset: r.offset,
            timestamp: r.timestamp.unwrap_or(now),
            key: parse(r.key)?,
            value: parse(r.value)?,
            headers,
        });
    }
    Ok(out)
}

fn codec_error(e: krecords_codec::Error) -> Failure {
    Failure::Usage(e.to_string())
}

fn build_records(args: &Args, records: &[OwnedRecord]) -> Result<Vec<u8>, Failure> {
    let (compression, level) = args.encoding.compression()?;
    let timestamp_type = TimestampType::from_name(&args.timestamp_type).ok_or_else(|| {
        Failure::Usage(format!("unknown timestamp type {:?}", args.timestamp_type))
    })?;
    let opts = BatchOptions {
        magic: args.encoding.magic,
        compression,
        level,
        timestamp_type,
        log_append_time: args.log_append_time.unwrap_or_else(now_ms),
        producer_id: args.producer_id,
        producer_epoch: args.producer_epoch,
        base_sequence: args.base_sequence,
        transactional: args.transactional,
        partition_leader_epoch: args.partition_leader_epoch,
        delete_horizon_ms: args.delete_horizon_ms,
        records_per_batch: args.records_per_batch,
        base_offset: args.base_offset,
        restart_offsets: false,
    };
    let mut out = Vec::new();
    build_batches(&opts, records, |bytes, _| {
        out.extend_from_slice(bytes);
        Ok(())
    })?;
    Ok(out)
}

/// Batch-level settings for [`build_batches`].
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Message format: 0, 1 or 2.
    pub magic: u8,
    /// Codec.
    pub compression: Compression,
    /// Codec level (`None`: the codec's default).
    pub level: Option<i32>,
    /// Timestamp type (v1, v2).
    pub timestamp_type: TimestampType,
    /// Append time written under LogAppendTime.
    pub log_append_time: i64,
    /// Producer id (v2; -1 for none).
    pub producer_id: i64,
    /// Producer epoch (v2; -1 for none).
    pub producer_epoch: i16,
    /// Base sequence of the first batch (v2; -1 for none); later batches continue from it.
    pub base_sequence: i32,
    /// Transactional flag (v2).
    pub transactional: bool,
    /// Partition leader epoch (v2).
    pub partition_leader_epoch: i32,
    /// Delete horizon (v2).
    pub delete_horizon_ms: Option<i64>,
    /// Records per entry; 0 = all in one.
    pub records_per_batch: usize,
    /// Offset of the first record.
    pub base_offset: i64,
    /// Start every batch at `base_offset` again, as a producer writes batches for a broker to
    /// assign offsets (`krec log append`), instead of running offsets on across batches.
    pub restart_offsets: bool,
}

/// Builds entries from `records` (`records_per_batch` at a time) and hands each entry's bytes and
/// record count to `emit`, in order.
///
/// # Errors
///
/// Usage errors for options the magic cannot carry and for records the builders refuse;
/// whatever `emit` returns.
pub fn build_batches(
    opts: &BatchOptions,
    records: &[OwnedRecord],
    mut emit: impl FnMut(&[u8], usize) -> Result<(), Failure>,
) -> Result<(), Failure> {
    if opts.magic < 2
        && (opts.producer_id != -1 || opts.transactional || opts.delete_horizon_ms.is_some())
    {
        return Err(Failure::Usage(format!(
            "magic {} has no producer id, transactions or delete horizon",
            opts.magic
        )));
    }
    let per = if opts.records_per_batch == 0 {
        records.len().max(1)
    } else {
        opts.records_per_batch
    };
    let mut buf = Vec::new();
    let mut next_offset = opts.base_offset;
    let mut sequence = opts.base_sequence;
    for chunk in records.chunks(per) {
        if opts.restart_offsets {
            next_offset = opts.base_offset;
        }
        // As Kafka's builder: the batch starts at the running offset; records with explicit
        // offsets may sit after it (gaps), and the next batch starts after the last offset.
        let base = next_offset;
        let header_store: Vec<Vec<Header<'_>>> = chunk
            .iter()
            .map(|r| {
                r.headers
                    .iter()
                    .map(|(k, v)| Header {
                        key: k,
                        value: v.as_deref(),
                    })
                    .collect()
            })
            .collect();
        let recs: Vec<(Option<i64>, NewRecord<'_>)> = chunk
            .iter()
            .zip(&header_store)
            .map(|(r, h)| {
                (
                    r.offset,
                    NewRecord::new(r.timestamp, r.key.as_deref(), r.value.as_deref())
                        .with_headers(h),
                )
            })
            .collect();
        buf.clear();
        if opts.magic == 2 {
            let b = V2Builder::new(base)
                .compression(opts.compression, opts.level)
                .timestamp_type(opts.timestamp_type, opts.log_append_time)
                .producer(opts.producer_id, opts.producer_epoch, sequence)
                .transactional(opts.transactional)
                .partition_leader_epoch(opts.partition_leader_epoch)
                .delete_horizon_ms(opts.delete_horizon_ms);
            next_offset = append_all!(b, &recs, &mut buf);
        } else {
            let b = LegacyBuilder::new(opts.magic, base)
                .map_err(codec_error)?
                .compression(opts.compression, opts.level)
                .map_err(codec_error)?
                .timestamp_type(opts.timestamp_type, opts.log_append_time);
            next_offset = append_all!(b, &recs, &mut buf);
        }
        emit(&buf, chunk.len())?;
        if sequence >= 0 {
            // A record's sequence is the base sequence plus its offset delta, so the next batch
            // continues after the offset span of this one.
            let span = i32::try_from(next_offset.wrapping_sub(base)).unwrap_or(i32::MAX);
            sequence = krecords_codec::read::v2::increment_sequence(sequence, span);
        }
    }
    Ok(())
}

fn build_control(args: &Args, kind: &str) -> Result<Vec<u8>, Failure> {
    let kind = ControlRecordType::from_name(kind)
        .filter(|k| k.is_end_txn())
        .ok_or_else(|| Failure::Usage(format!("--control takes commit or abort, not {kind:?}")))?;
    if args.producer_id < 0 || args.producer_epoch < 0 {
        return Err(Failure::Usage(
            "--control needs --producer-id and --producer-epoch".into(),
        ));
    }
    end_txn_marker(&EndTxnBatch {
        base_offset: args.base_offset,
        partition_leader_epoch: args.partition_leader_epoch,
        producer_id: args.producer_id,
        producer_epoch: args.producer_epoch,
        coordinator_epoch: args.coordinator_epoch,
        commit: kind == ControlRecordType::Commit,
        timestamp: args.timestamp.unwrap_or_else(now_ms),
    })
    .map_err(codec_error)
}
