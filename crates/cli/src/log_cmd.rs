//! `krec log`: the partition log engine (krecords-log) from the command line.
//!
//! Every subcommand opens the log, does one thing, prints JSON (one object per line, the shapes
//! DESIGN.md gives) and closes the log cleanly: a log dropped without `close` would be recovered
//! on the next open as after a crash.
//!
//! Outcomes: a request the broker would refuse (an append that fails validation, a read outside
//! the log) exits 1 and prints `{"error":"KAFKA_ERROR_NAME","message":"..."}` on stdout and a
//! short line on stderr; bad arguments, an invalid configuration and storage (I/O) errors exit 2
//! with a message on stderr.

use crate::build::{build_batches, read_json_records, BatchOptions};
use crate::bytes_fmt::BytesFormat;
use crate::entry_json;
use crate::{Failure, Outcome};
use clap::Subcommand;
use krecords_codec::control::{ControlRecordKey, ControlRecordType};
use krecords_codec::read::{Batch, Entries};
use krecords_codec::{Compression, TimestampType, DEFAULT_DECOMPRESS_LIMIT};
use krecords_log::{AppendOrigin, Env, Log, LogConfig, OffsetSpec};
use std::collections::{HashSet, VecDeque};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The partition log engine: create a log, append to it, read it, look up offsets, recover it.
///
/// A log is a directory in Kafka's layout (<20-digit base offset>.log segments with .index and
/// .timeindex files, leader-epoch-checkpoint) plus krec-log.json with its configuration under
/// Kafka's topic config names. A directory a Kafka broker wrote opens too.
///
/// Every subcommand prints JSON, one object per line. A request the broker would refuse (an
/// append that fails validation, a read outside the log) exits 1 and prints
/// {"error":"KAFKA_ERROR_NAME","message":"..."}; usage and storage errors exit 2.
///
/// Examples:
///   krec log create /tmp/events-0 --config segment.bytes=1048576
///   echo '{"key":"k","value":"hello"}' | krec log append /tmp/events-0
///   krec build --compression zstd < records.jsonl | krec log append /tmp/events-0 --raw
///   krec log read /tmp/events-0 --offset 0
///   krec log offsets /tmp/events-0 --time 1714000000000
///   krec log info /tmp/events-0
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Create(CreateArgs),
    Append(AppendArgs),
    EndTxn(EndTxnArgs),
    Read(ReadArgs),
    Offsets(OffsetsArgs),
    /// Print the log's offsets and segments.
    ///
    /// {"log_start_offset":N,"high_watermark":N,"last_stable_offset":N,"segments":[{"file":..,
    ///  "base_offset":N,"next_offset":N,"size_bytes":N,"max_timestamp":T|null,
    ///  "offset_index_entries":N,"time_index_entries":N},...]}
    #[command(verbatim_doc_comment)]
    Info(DirArgs),
    /// Scan every segment, truncate at the first invalid batch, rebuild the indexes.
    ///
    /// What opening a log after a crash does, for every segment whether or not the log was
    /// closed cleanly. Prints {"truncated_bytes":N,"segments":N,"next_offset":N}; what was cut
    /// and why goes to stderr.
    #[command(verbatim_doc_comment)]
    Recover(DirArgs),
    /// Delete the segments past retention.bytes and retention.ms.
    ///
    /// Kafka's retention for cleanup.policy=delete: the oldest segments go while the log is over
    /// retention.bytes, then those whose newest timestamp is older than retention.ms; the log
    /// start offset moves up. Prints {"deleted_segments":N,"log_start_offset":N}.
    #[command(verbatim_doc_comment)]
    Retain(DirArgs),
}

/// Create an empty log in DIR (created if needed).
///
/// Prints {"dir":"DIR","config":{...}} with every setting.
///
/// Examples:
///   krec log create /tmp/events-0
///   krec log create /tmp/old-0 --config message.format.version=0.10.2 --config segment.bytes=1048576
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
struct CreateArgs {
    /// The log directory.
    dir: PathBuf,
    /// A topic configuration, NAME=VALUE with Kafka's names: segment.bytes, segment.ms,
    /// segment.index.bytes, index.interval.bytes, max.message.bytes, message.timestamp.type,
    /// message.timestamp.before.max.ms, message.timestamp.after.max.ms, compression.type,
    /// compression.{gzip,lz4,zstd}.level, message.format.version, retention.ms, retention.bytes,
    /// cleanup.policy, flush.messages, flush.ms.
    #[arg(long = "config", value_name = "NAME=VALUE")]
    configs: Vec<String>,
}

/// Append records (JSON lines on stdin) or pre-built entries (--raw) to the log.
///
/// JSON lines as `krec build` reads them: {"timestamp":..,"key":..,"value":..,"headers":[..]}
/// (no "offset": the log assigns offsets). They are built into batches of --records-per-batch
/// records (0: one batch) with the given format and codec, each with base offset 0 as a producer
/// sends it, and appended one batch per append. Prints one line per append:
///   {"base_offset":N,"last_offset":N,"log_append_time":T|null,"duplicate":false}
///
/// --raw reads entries as a produce request carries them (e.g. from `krec build`): each v2 batch
/// and each compressed v0/v1 wrapper is one append; runs of uncompressed v0/v1 messages of one
/// magic are one append. A v2 batch must have base offset 0, as from a producer.
///
/// Every append is validated first (the broker's rules, against a scratch copy of the log's
/// configuration in memory), so a rejected append writes nothing at all.
///
/// Examples:
///   printf '{"value":"a"}\n{"value":"b"}\n' | krec log append /tmp/events-0
///   krec log append /tmp/events-0 --compression lz4 --records-per-batch 100 < records.jsonl
///   krec log append /tmp/events-0 --producer-id 7 --producer-epoch 0 --base-sequence 0 < r.jsonl
///   krec build < records.jsonl | krec log append /tmp/events-0 --raw
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
struct AppendArgs {
    /// The log directory.
    dir: PathBuf,
    /// Read pre-built entries (binary) instead of JSON lines.
    #[arg(long, conflicts_with_all = ["magic", "compression", "producer_id", "producer_epoch", "base_sequence", "transactional", "records_per_batch", "bytes"])]
    raw: bool,
    /// Message format of the batches sent: 0, 1 or 2 (the log converts to its own format).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=2))]
    magic: u8,
    /// Codec of the batches sent, optionally with a level: none, gzip[:1-9], snappy, lz4[:1-17], zstd[:level].
    #[arg(long, default_value = "none")]
    compression: String,
    /// Producer id of an idempotent or transactional producer (v2).
    #[arg(long, allow_negative_numbers = true)]
    producer_id: Option<i64>,
    /// Producer epoch (with --producer-id).
    #[arg(long, allow_negative_numbers = true)]
    producer_epoch: Option<i16>,
    /// Sequence of the first record (with --producer-id; default 0); later batches continue from it.
    #[arg(long, allow_negative_numbers = true)]
    base_sequence: Option<i32>,
    /// Mark the batches transactional (with --producer-id).
    #[arg(long)]
    transactional: bool,
    /// Records per batch; 0 = all in one.
    #[arg(long, default_value_t = 0)]
    records_per_batch: usize,
    /// How keys, values and header values are given.
    #[arg(long, value_enum, default_value_t = BytesFormat::Utf8)]
    bytes: BytesFormat,
}

/// Write a transaction marker (commit or abort) for a producer: not supported yet.
///
/// The log engine cannot append transaction markers until idempotent producers and
/// transactions land in it; this subcommand exits 2 until then.
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
struct EndTxnArgs {
    /// The log directory.
    dir: PathBuf,
    /// Producer id.
    #[arg(long)]
    producer_id: i64,
    /// Producer epoch.
    #[arg(long)]
    producer_epoch: i16,
    /// Epoch of the transaction coordinator writing the marker.
    #[arg(long)]
    coordinator_epoch: i32,
    /// Commit the transaction.
    #[arg(long, conflicts_with = "abort", required_unless_present = "abort")]
    commit: bool,
    /// Abort the transaction.
    #[arg(long)]
    abort: bool,
}

/// Read records as a consumer sees them, one JSON line per record.
///
/// {"offset":..,"timestamp":..,"key":..,"value":..,"headers":[..]} from --offset (default: the log
/// start) up to the high watermark, or until --max-bytes of stored entries have been read (at least
/// one entry). Records below --offset in the first entry are skipped and control records are never
/// shown, as a consumer does. --isolation read-committed stops at the first transaction still open
/// and drops the records of aborted transactions (the transactions are resolved from the markers in
/// the log, as the log does not keep a transaction index yet).
///
/// Examples:
///   krec log read /tmp/events-0
///   krec log read /tmp/events-0 --offset 100 --max-bytes 65536 --bytes hex
///   krec log read /tmp/events-0 --isolation read-committed
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
struct ReadArgs {
    /// The log directory.
    dir: PathBuf,
    /// First offset to return (default: the log start offset).
    #[arg(long)]
    offset: Option<i64>,
    /// Stop after this many bytes of stored entries (at least one entry is read).
    #[arg(long)]
    max_bytes: Option<usize>,
    /// read-uncommitted (everything) or read-committed (committed transactions only).
    #[arg(long, value_enum, default_value_t = Isolation::ReadUncommitted)]
    isolation: Isolation,
    /// How keys, values and header values appear.
    #[arg(long, value_enum, default_value_t = BytesFormat::Utf8)]
    bytes: BytesFormat,
}

/// A consumer's isolation level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Isolation {
    /// Every record up to the high watermark.
    ReadUncommitted,
    /// Records of committed transactions and non-transactional records, up to the first open
    /// transaction.
    ReadCommitted,
}

/// Look up an offset (Kafka's ListOffsets): prints {"offset":N,"timestamp":T|null}.
///
/// --earliest: the log start offset; --latest: the log end offset; --max-timestamp: the record
/// with the largest timestamp; --time MS: the first record with a timestamp at or after MS
/// (offset -1 when there is none).
///
/// Examples:
///   krec log offsets /tmp/events-0 --latest
///   krec log offsets /tmp/events-0 --time 1714000000000
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
#[command(group(clap::ArgGroup::new("spec").required(true).args(["earliest", "latest", "max_timestamp", "time"])))]
struct OffsetsArgs {
    /// The log directory.
    dir: PathBuf,
    /// The log start offset.
    #[arg(long)]
    earliest: bool,
    /// The log end offset.
    #[arg(long)]
    latest: bool,
    /// The offset of the record with the largest timestamp.
    #[arg(long)]
    max_timestamp: bool,
    /// The first offset with a timestamp at or after MS (epoch milliseconds).
    #[arg(long, value_name = "MS", allow_negative_numbers = true)]
    time: Option<i64>,
}

/// The arguments of `info`, `recover` and `retain`.
#[derive(clap::Args)]
struct DirArgs {
    /// The log directory.
    dir: PathBuf,
}

/// Runs the subcommand.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    match args.command {
        Command::Create(a) => create(a, out),
        Command::Append(a) => append(a, out),
        Command::EndTxn(a) => end_txn(a),
        Command::Read(a) => with_log(&a.dir.clone(), out, |log, out| read(log, &a, out)),
        Command::Offsets(a) => with_log(&a.dir.clone(), out, |log, out| offsets(log, &a, out)),
        Command::Info(a) => with_log(&a.dir, out, |log, out| {
            let info = log.info()?;
            print_json(out, &info)?;
            Ok(Outcome::Ok)
        }),
        Command::Recover(a) => recover(&a.dir, out),
        Command::Retain(a) => with_log(&a.dir, out, |log, out| {
            let info = log.retain()?;
            print_json(out, &info)?;
            Ok(Outcome::Ok)
        }),
    }
}

/// What a subcommand body can fail with: a log error (mapped by [`log_outcome`]) or anything else.
enum CmdError {
    Log(krecords_log::Error),
    Other(Failure),
}

impl From<krecords_log::Error> for CmdError {
    fn from(e: krecords_log::Error) -> Self {
        CmdError::Log(e)
    }
}

impl From<Failure> for CmdError {
    fn from(e: Failure) -> Self {
        CmdError::Other(e)
    }
}

impl From<io::Error> for CmdError {
    fn from(e: io::Error) -> Self {
        CmdError::Other(Failure::from(e))
    }
}

/// Whether a log error is about the request (exit 1, JSON on stdout) rather than about the
/// arguments or the storage (exit 2).
fn is_rejection(e: &krecords_log::Error) -> bool {
    use krecords_log::Error as E;
    !(e.is_storage_error()
        || matches!(
            e,
            E::CorruptFile { .. }
                | E::NotALog { .. }
                | E::AlreadyExists { .. }
                | E::InvalidConfig { .. }
        ))
}

/// Maps a log error to the command's outcome: a rejection prints
/// `{"error":"NAME","message":"..."}` and exits 1; anything else exits 2.
fn log_outcome(
    e: &krecords_log::Error,
    context: &str,
    out: &mut impl Write,
) -> Result<Outcome, Failure> {
    let message = if context.is_empty() {
        e.to_string()
    } else {
        format!("{context}: {e}")
    };
    if is_rejection(e) {
        print_json(
            out,
            &serde_json::json!({"error": e.kafka_name(), "message": message}),
        )?;
        eprintln!("krec: {}: {message}", e.kafka_name());
        Ok(Outcome::DataProblem)
    } else if e.is_storage_error() || matches!(e, krecords_log::Error::CorruptFile { .. }) {
        Err(Failure::Io(io::Error::other(message), String::new()))
    } else {
        Err(Failure::Usage(message))
    }
}

fn print_json(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Opens the log, says on stderr when the open had to recover it.
fn open(dir: &Path) -> Result<Log, krecords_log::Error> {
    let log = Log::open(dir)?;
    let r = log.recovery_info();
    if !r.clean_shutdown && (r.truncated_bytes > 0 || r.deleted_segments > 0) {
        eprintln!(
            "krec: {} was not closed cleanly; recovery truncated {} bytes",
            dir.display(),
            r.truncated_bytes
        );
        for p in &r.problems {
            eprintln!("krec:   {p}");
        }
    }
    Ok(log)
}

/// Opens the log, runs `body`, and closes the log whatever happened (a failed body's error wins
/// over a failed close).
fn with_log<W: Write>(
    dir: &Path,
    out: &mut W,
    body: impl FnOnce(&mut Log, &mut W) -> Result<Outcome, CmdError>,
) -> Result<Outcome, Failure> {
    let mut log = match open(dir) {
        Ok(log) => log,
        Err(e) => return log_outcome(&e, "", out),
    };
    let result = body(&mut log, out);
    let closed = log.close();
    match result {
        Err(CmdError::Other(f)) => Err(f),
        Err(CmdError::Log(e)) => log_outcome(&e, "", out),
        Ok(outcome) => match closed {
            Ok(()) => Ok(outcome),
            Err(e) => log_outcome(&e, "cannot close the log", out),
        },
    }
}

fn create(args: CreateArgs, out: &mut impl Write) -> Result<Outcome, Failure> {
    let mut pairs = Vec::new();
    for c in &args.configs {
        let pair = LogConfig::parse_assignment(c).map_err(|e| Failure::Usage(e.to_string()))?;
        pairs.push(pair);
    }
    let config = LogConfig::from_pairs(pairs).map_err(|e| Failure::Usage(e.to_string()))?;
    let json = config.to_json();
    let log = match Log::create(&args.dir, config) {
        Ok(log) => log,
        Err(e) => return log_outcome(&e, "", out),
    };
    if let Err(e) = log.close() {
        return log_outcome(&e, "cannot close the log", out);
    }
    print_json(
        out,
        &serde_json::json!({"dir": args.dir.display().to_string(), "config": json}),
    )?;
    Ok(Outcome::Ok)
}

/// One append: the bytes and which part of the input they are, for messages.
struct Group {
    bytes: Vec<u8>,
    context: String,
}

impl Group {
    fn context(&self) -> String {
        self.context.clone()
    }
}

fn append(args: AppendArgs, out: &mut impl Write) -> Result<Outcome, Failure> {
    let groups = if args.raw {
        let mut input = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut input)
            .map_err(|e| Failure::Io(e, "cannot read stdin".into()))?;
        match raw_groups(&input) {
            Ok(g) => g,
            Err(rejection) => {
                // Nothing was written; check the log exists so that a wrong DIR is not
                // reported as bad input.
                return with_log(&args.dir, out, |_, out| {
                    print_json(
                        out,
                        &serde_json::json!({"error": "CORRUPT_MESSAGE", "message": rejection}),
                    )?;
                    eprintln!("krec: CORRUPT_MESSAGE: {rejection}");
                    Ok(Outcome::DataProblem)
                });
            }
        }
    } else {
        json_groups(&args)?
    };
    with_log(&args.dir, out, |log, out| append_groups(log, &groups, out))
}

/// Builds one append per batch from JSON lines on stdin.
fn json_groups(args: &AppendArgs) -> Result<Vec<Group>, Failure> {
    let (compression, level) = crate::build::parse_compression(&args.compression)?;
    let (producer_id, producer_epoch, base_sequence) =
        match (args.producer_id, args.producer_epoch, args.base_sequence) {
            (None, None, None) => (-1, -1, -1),
            (Some(id), Some(epoch), seq) if id >= 0 && epoch >= 0 => {
                let seq = seq.unwrap_or(0);
                if seq < 0 {
                    return Err(Failure::Usage(format!(
                        "--base-sequence must be at least 0, not {seq}"
                    )));
                }
                (id, epoch, seq)
            }
            (Some(_), None, _) => {
                return Err(Failure::Usage(
                    "--producer-id needs --producer-epoch".into(),
                ))
            }
            (Some(id), Some(epoch), _) => {
                return Err(Failure::Usage(format!(
                    "--producer-id and --producer-epoch must be at least 0, not {id} and {epoch}"
                )))
            }
            (None, _, _) => {
                return Err(Failure::Usage(
                    "--producer-epoch and --base-sequence need --producer-id".into(),
                ))
            }
        };
    if args.transactional && producer_id < 0 {
        return Err(Failure::Usage("--transactional needs --producer-id".into()));
    }
    let records = read_json_records(io::stdin().lock(), args.bytes)?;
    if records.iter().any(|r| r.offset.is_some()) {
        return Err(Failure::Usage(
            "records for `krec log append` cannot carry an \"offset\": the log assigns offsets"
                .into(),
        ));
    }
    let opts = BatchOptions {
        magic: args.magic,
        compression,
        level,
        timestamp_type: if args.magic == 0 {
            TimestampType::NoTimestamp
        } else {
            TimestampType::CreateTime
        },
        log_append_time: -1,
        producer_id,
        producer_epoch,
        base_sequence,
        transactional: args.transactional,
        partition_leader_epoch: -1,
        delete_horizon_ms: None,
        records_per_batch: args.records_per_batch,
        base_offset: 0,
        restart_offsets: true,
    };
    let mut groups = Vec::new();
    let mut first_record = 1;
    build_batches(&opts, &records, |bytes, count| {
        groups.push(Group {
            bytes: bytes.to_vec(),
            context: format!(
                "batch of input records {first_record}..={}",
                first_record + count - 1
            ),
        });
        first_record += count;
        Ok(())
    })?;
    Ok(groups)
}

/// Splits pre-built entries into appends, checking each entry's structure and CRC first.
/// A truncated trailing entry is dropped with a note, as Kafka trims it.
fn raw_groups(input: &[u8]) -> Result<Vec<Group>, String> {
    let mut groups: Vec<Group> = Vec::new();
    // Magic of the open run of uncompressed v0/v1 messages, if the last group is one.
    let mut run_magic: Option<u8> = None;
    let mut entries = Entries::new(input);
    loop {
        let batch = match entries.next_entry() {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(e) => return Err(e.to_string()),
        };
        let position = batch.position();
        if !batch.is_crc_valid() {
            return Err(format!(
                "entry at byte {position}: record is corrupt (stored crc {}, computed {})",
                batch.crc(),
                batch.compute_crc()
            ));
        }
        let codec = batch
            .compression()
            .map_err(|e| format!("entry at byte {position}: {e}"))?;
        let plain_legacy = matches!(batch, Batch::Legacy(_)) && codec == Compression::None;
        match groups.last_mut() {
            Some(g) if plain_legacy && run_magic == Some(batch.magic()) => {
                g.bytes.extend_from_slice(batch.as_bytes());
            }
            _ => {
                groups.push(Group {
                    bytes: batch.as_bytes().to_vec(),
                    context: format!("input entry at byte {position}"),
                });
                run_magic = plain_legacy.then_some(batch.magic());
            }
        }
    }
    if let Some(p) = entries.partial() {
        eprintln!(
            "krec: dropped {} bytes of a truncated entry at byte {} of the input",
            p.bytes, p.position
        );
    }
    Ok(groups)
}

/// Scratch logs are replaced after this many bytes so that a dry run holds bounded memory.
const DRY_RUN_BYTES: usize = 64 << 20;

/// A log in memory with `log`'s configuration, on which appends are tried first.
fn dry_run_log(log: &Log) -> Result<Log, krecords_log::Error> {
    let mut config = log.config().clone();
    // Small indexes: the scratch log only validates, it is never read.
    config.set("segment.index.bytes", "65536")?;
    let mut scratch = Log::create_with("/krec-dry-run", config, Env::memory())?;
    scratch.set_leader_epoch(log.leader_epoch());
    Ok(scratch)
}

/// Validates every group against a scratch log, then appends them all and prints one line each.
fn append_groups(
    log: &mut Log,
    groups: &[Group],
    out: &mut impl Write,
) -> Result<Outcome, CmdError> {
    // 1. Dry run: the broker's validation of every append before anything is written.
    let mut scratch: Option<(Log, usize)> = None;
    for g in groups {
        let (s, used) = match scratch.take() {
            Some((s, used)) if used < DRY_RUN_BYTES => (s, used),
            _ => (dry_run_log(log)?, 0),
        };
        let mut s = s;
        match s.append(&g.bytes, AppendOrigin::Client) {
            Ok(info) => scratch = Some((s, used + info.size_bytes)),
            Err(e) if is_rejection(&e) => {
                return Ok(log_outcome(&e, &g.context(), out)?);
            }
            Err(e) => return Err(e.into()),
        }
    }
    drop(scratch);
    // 2. The real appends.
    for (i, g) in groups.iter().enumerate() {
        match log.append(&g.bytes, AppendOrigin::Client) {
            Ok(info) => print_json(out, &info)?,
            Err(e) => {
                let context = match i {
                    0 => g.context(),
                    _ => format!("{} ({i} earlier appends were written)", g.context()),
                };
                return Ok(log_outcome(&e, &context, out)?);
            }
        }
    }
    Ok(Outcome::Ok)
}

fn end_txn(args: EndTxnArgs) -> Result<Outcome, Failure> {
    let kind = if args.commit { "commit" } else { "abort" };
    Err(Failure::Usage(format!(
        "log end-txn: not supported yet: the log engine cannot append transaction markers \
         until idempotent producers and transactions land in it (asked: {kind} for producer {} \
         epoch {} with coordinator epoch {} in {})",
        args.producer_id,
        args.producer_epoch,
        args.coordinator_epoch,
        args.dir.display()
    )))
}

fn offsets(log: &mut Log, args: &OffsetsArgs, out: &mut impl Write) -> Result<Outcome, CmdError> {
    let spec = if args.earliest {
        OffsetSpec::Earliest
    } else if args.latest {
        OffsetSpec::Latest
    } else if args.max_timestamp {
        OffsetSpec::MaxTimestamp
    } else {
        OffsetSpec::Timestamp(args.time.unwrap_or(0))
    };
    let r = log.offsets(spec)?;
    print_json(out, &r)?;
    Ok(Outcome::Ok)
}

/// Bytes asked of the log per read.
const PAGE_BYTES: usize = 1 << 20;

fn read(log: &mut Log, args: &ReadArgs, out: &mut impl Write) -> Result<Outcome, CmdError> {
    let committed = args.isolation == Isolation::ReadCommitted;
    let high_watermark = log.high_watermark();
    // Records at or past `end` are not returned: a read-committed consumer stops at the last
    // stable offset.
    let end = if committed {
        log.last_stable_offset().min(high_watermark)
    } else {
        high_watermark
    };
    let requested = args.offset.unwrap_or_else(|| log.log_start_offset());
    // Out-of-range offsets are refused by the log (OFFSET_OUT_OF_RANGE).
    log.read(requested, 1)?;
    let budget = args.max_bytes.unwrap_or(usize::MAX).max(1);
    let mut scratch = Vec::new();
    let mut filter = TxnFilter::new(committed);
    if committed {
        // Transactions are resolved from their markers, so every transaction that may still be
        // open at `requested` must be seen: scan from the log start to there, printing nothing.
        let mut offset = log.log_start_offset();
        'scan: while offset < requested {
            let r = log.read(offset, PAGE_BYTES)?;
            if r.bytes.is_empty() || r.next_offset <= offset {
                break;
            }
            for entry in Entries::new(&r.bytes) {
                let batch = entry.map_err(|e| corrupt_read(&e))?;
                if batch.last_offset() >= requested {
                    break 'scan;
                }
                let view = View {
                    take: false,
                    track: true,
                    requested,
                    end,
                };
                filter.entry(&batch, view, args.bytes, &mut scratch, out)?;
            }
            offset = r.next_offset;
        }
    }
    let mut offset = requested;
    let mut used = 0usize;
    let mut first = true;
    while offset < high_watermark {
        let collecting = used < budget && offset < end;
        if !collecting && !filter.has_pending() {
            break;
        }
        let page = if collecting {
            (budget - used).clamp(1, PAGE_BYTES)
        } else {
            PAGE_BYTES
        };
        let r = log.read(offset, page)?;
        if r.bytes.is_empty() || r.next_offset <= offset {
            break;
        }
        // Whether the data records of this page may be printed: past --max-bytes only the
        // markers matter (they decide transactions whose records were printed or held).
        let mut take = collecting;
        if collecting {
            if !first && r.bytes.len() > budget - used {
                // One entry larger than what is left: only the first entry may exceed the limit.
                take = false;
                used = budget;
            } else {
                used = used.saturating_add(r.bytes.len());
                first = false;
            }
        }
        for entry in Entries::new(&r.bytes) {
            let batch = entry.map_err(|e| corrupt_read(&e))?;
            let view = View {
                take,
                track: take,
                requested,
                end,
            };
            filter.entry(&batch, view, args.bytes, &mut scratch, out)?;
        }
        offset = r.next_offset;
    }
    filter.finish(out)?;
    Ok(Outcome::Ok)
}

/// What [`TxnFilter::entry`] may do with the records of an entry.
#[derive(Debug, Clone, Copy)]
struct View {
    /// Data records in `[requested, end)` are printed (or held).
    take: bool,
    /// Later records may still be printed, so a transaction starting here must be tracked even
    /// when none of its records are printed.
    track: bool,
    requested: i64,
    end: i64,
}

fn corrupt_read(e: &krecords_codec::Error) -> krecords_log::Error {
    krecords_log::Error::CorruptMessage {
        at: krecords_log::Location::Unknown,
        reason: format!("read: {e}"),
    }
}

/// What a consumer does with the records of transactions: read-uncommitted prints everything;
/// read-committed holds the records from the first undecided transactional batch on until the
/// producer's marker decides it (commit: print, abort: drop), and never prints past a
/// transaction that is still open.
struct TxnFilter {
    committed: bool,
    /// Records in offset order from the first undecided transactional batch on.
    queue: VecDeque<Held>,
    /// Producers with undecided batches in `queue`.
    open: HashSet<i64>,
}

struct Held {
    /// The producer of a transactional batch; `None` for records that are decided already.
    producer: Option<i64>,
    decided: Option<bool>,
    lines: Vec<String>,
}

impl TxnFilter {
    fn new(committed: bool) -> Self {
        TxnFilter {
            committed,
            queue: VecDeque::new(),
            open: HashSet::new(),
        }
    }

    fn has_pending(&self) -> bool {
        !self.open.is_empty()
    }

    /// Handles one stored entry: markers decide transactions; data records are printed or
    /// held as `view` says.
    fn entry(
        &mut self,
        batch: &Batch<'_>,
        view: View,
        bytes: BytesFormat,
        scratch: &mut Vec<u8>,
        out: &mut impl Write,
    ) -> Result<(), CmdError> {
        if let Batch::V2(b) = batch {
            if b.is_control() {
                if !self.committed {
                    return Ok(());
                }
                let records = batch
                    .records(scratch, DEFAULT_DECOMPRESS_LIMIT)
                    .map_err(|e| corrupt_read(&e))?;
                for r in records {
                    let r = r.map_err(|e| corrupt_read(&e))?;
                    // Markers past the last stable offset still decide transactions before it.
                    match ControlRecordKey::parse(r.key(), batch.position()).map(|k| k.kind) {
                        Ok(ControlRecordType::Commit) => self.decide(b.raw_producer_id(), true),
                        Ok(ControlRecordType::Abort) => self.decide(b.raw_producer_id(), false),
                        _ => {}
                    }
                }
                return Ok(self.flush(out)?);
            }
        }
        let mut lines = Vec::new();
        if view.take && batch.last_offset() >= view.requested {
            let records = batch
                .records(scratch, DEFAULT_DECOMPRESS_LIMIT)
                .map_err(|e| corrupt_read(&e))?;
            for r in records {
                let r = r.map_err(|e| corrupt_read(&e))?;
                if r.offset() < view.requested {
                    continue;
                }
                if r.offset() >= view.end {
                    break;
                }
                let json = entry_json::record(&r, false, bytes);
                lines.push(serde_json::to_string(&json).map_err(io::Error::from)?);
            }
        }
        let transactional = match batch {
            Batch::V2(b) if self.committed && b.is_transactional() => {
                Some((b.raw_producer_id(), b.base_offset()))
            }
            _ => None,
        };
        match transactional {
            Some((producer, base)) => {
                // A transaction starting at or past the end blocks nothing that is printed.
                if !lines.is_empty() || (view.track && base < view.end) {
                    self.open.insert(producer);
                    self.queue.push_back(Held {
                        producer: Some(producer),
                        decided: None,
                        lines,
                    });
                }
            }
            None if self.queue.is_empty() => {
                for l in &lines {
                    writeln!(out, "{l}")?;
                }
            }
            None => {
                if !lines.is_empty() {
                    self.queue.push_back(Held {
                        producer: None,
                        decided: Some(true),
                        lines,
                    });
                }
            }
        }
        Ok(())
    }

    fn decide(&mut self, producer: i64, commit: bool) {
        if !self.open.remove(&producer) {
            return;
        }
        for h in &mut self.queue {
            if h.producer == Some(producer) && h.decided.is_none() {
                h.decided = Some(commit);
            }
        }
    }

    /// Prints the decided records at the front of the queue.
    fn flush(&mut self, out: &mut impl Write) -> io::Result<()> {
        while let Some(h) = self.queue.front() {
            let Some(keep) = h.decided else { break };
            if keep {
                for l in &h.lines {
                    writeln!(out, "{l}")?;
                }
            }
            self.queue.pop_front();
        }
        Ok(())
    }

    /// Prints what is decided; records from the first open transaction on are past the last
    /// stable offset and are not returned.
    fn finish(&mut self, out: &mut impl Write) -> io::Result<()> {
        self.flush(out)
    }
}

fn recover(dir: &Path, out: &mut impl Write) -> Result<Outcome, Failure> {
    match Log::recover(dir) {
        Ok(info) => {
            for p in &info.problems {
                eprintln!("krec: recovered: {p}");
            }
            print_json(out, &info)?;
            Ok(Outcome::Ok)
        }
        Err(e) => log_outcome(&e, "", out),
    }
}
