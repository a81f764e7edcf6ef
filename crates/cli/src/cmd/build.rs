//! `krec build`: JSON lines of records in, Kafka log entries out.

use crate::args::EncodingArgs;
use crate::bytes_fmt::BytesFormat;
use crate::cmd::convert::say_removed;
use crate::outcome::{Context, Failure, Outcome};
use crate::time_fmt::now_ms;
use krecords_codec::build::{self, JsonLinesError};
pub use krecords_codec::build::{BatchOptions, BuildRecord};
use krecords_codec::control::ControlRecordType;
use krecords_codec::write::{end_txn_marker, EndTxnBatch};
use krecords_codec::TimestampType;
use krecords_log::convert::{remove_leftovers, write_file};
use krecords_log::storage::FsStorage;
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// Build log entries from JSON lines of records read on stdin (or --input).
///
/// Each input line: {"timestamp":1714000000000,"key":null,"value":"hello","headers":[{"key":"k","value":"v"}]}
/// ("offset" is optional: gaps are allowed, offsets must increase and are not negative). Keys
/// and values are read per --bytes. Offsets run on from --base-offset across batches; producer
/// sequences likewise.
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
    /// Offset of the first record (not negative; the last record's at most 9223372036854775807).
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

/// Runs the subcommand.
pub fn run(args: Args, stdout: &mut impl Write) -> Result<Outcome, Failure> {
    let bytes = if let Some(kind) = &args.control {
        build_control(&args, kind)?
    } else {
        let records = read_records(&args)?;
        build_records(&args, &records)?
    };
    match &args.output {
        // Whole or not at all: a failed write leaves an earlier file of that name as it was.
        Some(path) => {
            say_removed(&remove_leftovers(&FsStorage, path));
            write_file(path, |sink| {
                sink.write_all(&bytes)
                    .context(|| format!("cannot write {}", path.display()))
            })?
        }
        None => stdout.write_all(&bytes)?,
    }
    Ok(Outcome::Ok)
}

fn read_records(args: &Args) -> Result<Vec<BuildRecord>, Failure> {
    let reader: Box<dyn BufRead> = match &args.input {
        Some(p) => Box::new(std::io::BufReader::new(
            std::fs::File::open(p).context(|| format!("cannot open {}", p.display()))?,
        )),
        None => Box::new(std::io::stdin().lock()),
    };
    read_json_records(reader, args.bytes)
}

/// Reads records as JSON lines ([`krecords_codec::build::read_json_records`]; a missing
/// timestamp is now).
///
/// # Errors
///
/// A usage error naming the line for malformed JSON or bytes; I/O errors.
pub fn read_json_records(
    reader: impl BufRead,
    bytes: BytesFormat,
) -> Result<Vec<BuildRecord>, Failure> {
    build::read_json_records(reader, bytes.into(), now_ms()).map_err(|e| match e {
        JsonLinesError::Io(e) => Failure::Io(e, "cannot read input".into()),
        line @ JsonLinesError::Line { .. } => Failure::Usage(line.to_string()),
    })
}

fn codec_error(e: krecords_codec::Error) -> Failure {
    Failure::Usage(e.to_string())
}

fn build_records(args: &Args, records: &[BuildRecord]) -> Result<Vec<u8>, Failure> {
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
    build::build(&opts, records).map_err(codec_error)
}

/// Builds entries from `records` ([`krecords_codec::build::build_batches`]) and hands each
/// entry's bytes and record count to `emit`, in order.
///
/// # Errors
///
/// Usage errors for options the magic cannot carry and for records the builders refuse.
pub fn build_batches(
    opts: &BatchOptions,
    records: &[BuildRecord],
    emit: impl FnMut(&[u8], usize),
) -> Result<(), Failure> {
    build::build_batches(opts, records, emit).map_err(codec_error)
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
    build::check_base_offset(args.base_offset).map_err(codec_error)?;
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
