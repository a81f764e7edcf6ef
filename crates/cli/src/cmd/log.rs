//! `krec log`: the partition log engine (krecords-log) from the command line.
//!
//! Every subcommand opens the log, does one thing, prints JSON (one object per line, the shapes
//! docs/design.md gives) and closes the log cleanly: a log dropped without `close` would be
//! recovered on the next open as after a crash.
//!
//! Outcomes: a request the broker would refuse (an append that fails validation or a producer
//! check) exits 1 and prints `{"error":"KAFKA_ERROR_NAME","message":"..."}` on stdout and a
//! short line on stderr; bad arguments (a position outside the log among them, as in every
//! command), an invalid configuration given as an argument and storage (I/O) errors exit 2 with
//! a message on stderr; damaged data, a damaged krec-log.json among it, exits 1.

use crate::args::PositionArgs;
use crate::bytes_fmt::BytesFormat;
use crate::cmd::build::{build_batches, read_json_records, BatchOptions};
use crate::isolation::isolation_parser;
use crate::kafka::ClientArgs;
use crate::outcome::{print_json, Failure, Outcome};
use crate::source::open_sources;
use crate::time_fmt::now_ms;
use clap::Subcommand;
use krecords_codec::TimestampType;
use krecords_log::consumer::ConsumedRecord;
use krecords_log::raw_append;
use krecords_log::{
    AppendOrigin, Env, IsolationLevel, LockWait, Log, LogConfig, OffsetSpec, OpenOptions,
};
use krecords_source::{
    classify_log, ErrorClass, Position, Range, ReadOptions, Sources, Stop, Watermarks,
};
use krecords_source::{entry_json, records};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The partition log engine: create, append, end transactions, read, look up offsets, recover.
///
/// Appends take idempotent and transactional producers too.
///
/// A log is a directory in Kafka's layout (<20-digit base offset>.log segments with .index,
/// .timeindex and .txnindex files, <offset>.snapshot producer state, leader-epoch-checkpoint)
/// plus krec-log.json with its configuration under Kafka's topic config names. A directory a
/// Kafka broker wrote opens too.
///
/// Every subcommand prints JSON, one object per line. A request the broker would refuse (an
/// append that fails validation or a producer check) exits 1 and prints
/// {"error":"KAFKA_ERROR_NAME","message":"..."}; usage errors (a position outside the log among
/// them, as in every command) and storage errors exit 2; damaged data exits 1 (a krec-log.json
/// that is not JSON or holds an invalid setting among it: every subcommand refuses it, naming
/// the file, and none replaces it).
///
/// One writer at a time: create, append, end-txn, recover and retain hold an OS lock on
/// krec.lock in the directory while they run. Another writer exits 2 at once with "another
/// process has this log open for writing", or waits for it with --wait[=SECONDS]. They refuse
/// the partition directory of a running Kafka broker (its data directory's .lock is held)
/// unless --force. read, info and offsets take no lock and never create, delete or change a
/// file: what opening the log would repair (a torn tail, an index) is repaired in memory only,
/// and they see the batches complete when they start, never one being written.
///
/// Examples:
///   krec log create /tmp/events-0 --config segment.bytes=1048576
///   echo '{"key":"k","value":"hello"}' | krec log append /tmp/events-0
///   krec build --compression zstd < records.jsonl | krec log append /tmp/events-0 --raw
///   krec log append /tmp/events-0 --producer-id 7 --producer-epoch 0 --transactional < r.jsonl
///   krec log end-txn /tmp/events-0 --producer-id 7 --producer-epoch 0 --coordinator-epoch 0 --commit
///   krec log read /tmp/events-0 --offset 0 --isolation read-committed
///   krec log offsets /tmp/events-0 --time 2024-04-24T23:06:40Z
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
    /// For kafka://HOST:PORT/TOPIC/PARTITION, the partition's offsets as the cluster gives them
    /// (ListOffsets): {"log_start_offset":N,"high_watermark":N,"last_stable_offset":N}.
    ///
    /// last_stable_offset is the first offset of the earliest transaction still open (the high
    /// watermark when none is): read-committed reads stop there.
    ///
    /// {"log_start_offset":N,"high_watermark":N,"last_stable_offset":N,"segments":[{"file":..,
    ///  "base_offset":N,"next_offset":N,"size_bytes":N,"max_timestamp":T|null,
    ///  "offset_index_entries":N,"time_index_entries":N},...]}
    /// plus "dirty_ratio":R for a compacted log (the cleaner's dirty ratio now).
    #[command(verbatim_doc_comment)]
    Info(DirArgs),
    /// Scan every segment, truncate at the first invalid batch, rebuild the indexes.
    ///
    /// What opening a log after a crash does, for every segment whether or not the log was
    /// closed cleanly. Prints {"truncated_bytes":N,"segments":N,"next_offset":N}; what was cut
    /// and why goes to stderr.
    #[command(verbatim_doc_comment)]
    Recover(WriteDirArgs),
    /// Delete the segments past retention.bytes and retention.ms.
    ///
    /// Kafka's retention for cleanup.policy=delete: the oldest segments go while the log is over
    /// retention.bytes, then those whose newest timestamp is older than retention.ms; the log
    /// start offset moves up. Prints {"deleted_segments":N,"log_start_offset":N}.
    #[command(verbatim_doc_comment)]
    Retain(WriteDirArgs),
    Compact(CompactArgs),
}

/// Run one pass of Kafka's log cleaner on a cleanup.policy=compact log.
///
/// Keeps the latest record of each key; tombstones (null values) and markers of emptied
/// transactions stay until their delete horizon (now + delete.retention.ms, set on the first
/// pass that keeps them); aborted transactional data goes; each producer's last batch stays
/// (empty if need be); batches keep their offsets. Cleans only when Kafka's cleaner would pick
/// the log (dirty ratio above min.cleanable.dirty.ratio, or max.compaction.lag.ms exceeded)
/// unless --always. Prints one line:
///   {"cleaned":B,"first_dirty_offset":N,"first_uncleanable_offset":N,"dirty_ratio":R,
///    "next_dirty_offset":N,"segments_cleaned":N,"segments_written":N,"bytes_before":N,
///    "bytes_after":N,"records_read":N,"records_removed":N,"tombstones_removed":N,
///    "keyless_records_removed":N,"aborted_records_removed":N,"markers_removed":N,
///    "batches_removed":N,"batches_rewritten":N,"batches_emptied":N,"delete_horizons_set":N,
///    "map_keys":N,"map_full":B}
///
/// Examples:
///   krec log compact /tmp/table-0
///   krec log compact /tmp/table-0 --now 1714000000000 --always
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
struct CompactArgs {
    /// The log directory.
    dir: PathBuf,
    /// The cleaner's clock, in ms since the epoch (default: now): delete horizons are set to
    /// and compared with it, and the compaction lags measured from it. The log is opened on
    /// this clock too (producer expiry), as Kafka's cleaner runs on its broker's clock.
    #[arg(long, value_name = "MS")]
    now: Option<i64>,
    /// Clean whatever the dirty ratio and lags say (anything below the first uncleanable offset).
    #[arg(long)]
    always: bool,
    #[command(flatten)]
    writer: WriterArgs,
}

/// Create an empty log in DIR, a new or empty directory (created if needed).
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
    /// cleanup.policy, flush.messages, flush.ms, min.cleanable.dirty.ratio, min.compaction.lag.ms,
    /// max.compaction.lag.ms, delete.retention.ms, log.cleaner.dedupe.buffer.size,
    /// log.cleaner.io.buffer.size.
    #[arg(long = "config", value_name = "NAME=VALUE")]
    configs: Vec<String>,
    #[command(flatten)]
    writer: WriterArgs,
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
/// With --producer-id the batches come from an idempotent producer (sequences run on from
/// --base-sequence across the batches), with --transactional from a transactional one (end the
/// transaction with `krec log end-txn`). The log checks them as a broker does: a retry of one of
/// the producer's last five batches is answered with the original offsets and
/// "duplicate":true and writes nothing; an older epoch is INVALID_PRODUCER_EPOCH, a sequence
/// that does not follow the last one OUT_OF_ORDER_SEQUENCE_NUMBER, a non-transactional batch
/// during an open transaction INVALID_TXN_STATE. Every krec command reopens the log, and a
/// reopened log knows only each producer's last batch (Kafka's producer snapshot keeps one),
/// and forgets producers whose last batch is older than producer.id.expiration.ms (default: a
/// day) and who have no open transaction.
///
/// All or nothing per command: every append is checked (against the offsets and the producer
/// state the earlier ones leave) before any is written, and a write failure (a full disk) undoes
/// them all, so nothing is written unless all are; the error names the batch or entry refused.
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
    /// Codec of the batches sent, optionally with a level: none, gzip[:1-9], snappy, lz4 (level 9
    /// only), zstd[:level].
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
    #[command(flatten)]
    writer: WriterArgs,
}

/// End a producer's transaction: write its COMMIT or ABORT marker, as the transaction
/// coordinator does.
///
/// The marker is a control batch of one record, appended with the coordinator's rights. It ends
/// the producer's open transaction (a marker without one is still written, as Kafka writes it);
/// an aborted transaction goes into the segment's .txnindex, and the last stable offset moves
/// on. Prints the append's line:
///   {"base_offset":N,"last_offset":N,"log_append_time":T|null,"duplicate":false}
///
/// An epoch older than the producer's is INVALID_PRODUCER_EPOCH, a coordinator epoch older than
/// the last marker's TRANSACTION_COORDINATOR_FENCED (exit 1, nothing written).
///
/// Examples:
///   krec log end-txn /tmp/events-0 --producer-id 7 --producer-epoch 0 --coordinator-epoch 0 --commit
///   krec log end-txn /tmp/events-0 --producer-id 7 --producer-epoch 0 --coordinator-epoch 3 --abort
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
    /// Timestamp of the marker record, in epoch milliseconds (default: now).
    #[arg(long, value_name = "MS", allow_negative_numbers = true)]
    timestamp: Option<i64>,
    #[command(flatten)]
    writer: WriterArgs,
}

/// Read records as a consumer sees them, one JSON line per record.
///
/// {"offset":..,"timestamp":..,"key":..,"value":..,"headers":[..]} from --start (default: the
/// log start) up to --end (default: the high watermark), at most --count records, fetched as a
/// Kafka consumer fetches and filtered as it filters: records below --start in the first entry
/// are skipped and control records (transaction markers) are never shown. --isolation
/// read-committed (default: read-uncommitted) stops at the last stable offset (the first offset
/// of the earliest transaction still open) and drops the records of aborted transactions, which
/// the log lists from its transaction indexes; a read that stops before the high watermark says
/// where and why on stderr. --max-bytes makes it one fetch of at most that many bytes of stored
/// entries (at least one entry). Positions are those of every command: an offset, -N, earliest,
/// latest or a time; one outside the log is an error (exit 2).
///
/// DIR may be a live partition, kafka://HOST:PORT/TOPIC/PARTITION (with -X/-F client
/// properties): the same, with the watermarks ListOffsets gives at start and the aborted
/// transactions each Fetch response lists, as Kafka's Java consumer filters them.
///
/// Examples:
///   krec log read /tmp/events-0
///   krec log read /tmp/events-0 --start 100 --max-bytes 65536 --bytes hex
///   krec log read /tmp/events-0 --start -10
///   krec log read /tmp/events-0 --isolation read-committed
///   krec log read kafka://localhost:9092/orders/0 --isolation read-committed
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
struct ReadArgs {
    /// The log directory, or kafka://HOST:PORT/TOPIC/PARTITION.
    dir: PathBuf,
    /// The same as --start N (kept for scripts).
    #[arg(
        long,
        hide = true,
        conflicts_with = "start",
        allow_negative_numbers = true
    )]
    offset: Option<i64>,
    /// Stop after this many bytes of stored entries (at least one entry is read).
    #[arg(long)]
    max_bytes: Option<usize>,
    #[command(flatten)]
    positions: PositionArgs,
    /// How keys, values and header values appear.
    #[arg(long, value_enum, default_value_t = BytesFormat::Utf8)]
    bytes: BytesFormat,
    #[command(flatten)]
    client: ClientArgs,
}

impl ReadArgs {
    /// The range asked for (`--offset N` is `--start N`).
    fn range(&self) -> Range {
        let mut r = self.positions.range.with_count(self.positions.count);
        if let Some(o) = self.offset {
            r.start = Some(Position::Offset(o));
        }
        r
    }

    fn isolation(&self) -> IsolationLevel {
        self.positions
            .range
            .isolation(IsolationLevel::ReadUncommitted)
    }
}

/// Look up an offset (Kafka's ListOffsets): prints {"offset":N,"timestamp":T|null}.
///
/// --earliest: the log start offset; --latest: the log end offset; --max-timestamp: the record
/// with the largest timestamp; --time MS: the first record with a timestamp at or after MS
/// (offset -1 when there is none).
///
/// Examples:
///   krec log offsets /tmp/events-0 --latest
///   krec log offsets /tmp/events-0 --time 2024-04-24T23:06:40Z
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
#[command(group(clap::ArgGroup::new("spec").required(true).args(["earliest", "latest", "max_timestamp", "time"])))]
struct OffsetsArgs {
    /// The log directory, or kafka://HOST:PORT/TOPIC/PARTITION (ListOffsets on the cluster).
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
    /// The first offset with a timestamp at or after T: epoch ms (or @ and epoch ms) or ISO
    /// 8601 (as `krec offsets --time`).
    #[arg(long, value_name = "T", value_parser = crate::time_fmt::parse_lookup_time, allow_negative_numbers = true)]
    time: Option<i64>,
    /// Answer as a consumer at this isolation level does: read-committed --latest is the last
    /// stable offset, and time lookups find nothing past it (without: up to the log end).
    #[arg(long, value_parser = isolation_parser(ISOLATION))]
    isolation: Option<IsolationLevel>,
    #[command(flatten)]
    client: ClientArgs,
}

/// The arguments of `info`.
#[derive(clap::Args)]
struct DirArgs {
    /// The log directory, or kafka://HOST:PORT/TOPIC/PARTITION (its watermarks, from the
    /// cluster).
    dir: PathBuf,
    #[command(flatten)]
    client: ClientArgs,
}

/// The arguments of `recover` and `retain`.
#[derive(clap::Args)]
struct WriteDirArgs {
    /// The log directory.
    dir: PathBuf,
    #[command(flatten)]
    writer: WriterArgs,
}

/// How a writing subcommand takes the log (the options every one of them has).
#[derive(clap::Args, Clone, Copy, Debug)]
struct WriterArgs {
    /// When another process is writing to the log, wait for it (at most SECONDS; without a
    /// value, as long as it takes) instead of exiting 2 at once.
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, require_equals = true,
          default_missing_value = "forever", value_parser = str::parse::<LockWait>)]
    wait: Option<LockWait>,
    /// Write even into a partition directory of a running Kafka broker (the broker holds the
    /// .lock of its data directory). The broker does not see the change and may overwrite or
    /// trip over it: only for a broker that does not use this directory.
    #[arg(long)]
    force: bool,
}

impl WriterArgs {
    fn options(self) -> OpenOptions {
        OpenOptions {
            lock_wait: self.wait.unwrap_or(LockWait::NoWait),
            ignore_running_broker: self.force,
        }
    }
}

/// How a subcommand opens the log.
#[derive(Clone, Copy)]
enum Access {
    /// Read-only: no lock, no file touched.
    Read,
    /// Writing, with the writer's lock.
    Write(OpenOptions),
    /// Writing, with the log's clock standing at the given time (`compact --now`: producer
    /// expiry and every other time-dependent decision of the open see the cleaner's clock, as
    /// Kafka's cleaner sees its broker's).
    WriteAt(OpenOptions, i64),
}

/// Runs the subcommand.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    match args.command {
        Command::Create(a) => create(a, out),
        Command::Append(a) => append(a, out),
        Command::EndTxn(a) => {
            let access = Access::Write(a.writer.options());
            with_log(&a.dir.clone(), access, out, |log, out| {
                end_txn(log, &a, out)
            })
        }
        Command::Read(a) if is_live(&a.dir, &a.client) => read_live(&a, out),
        Command::Read(a) => with_log(&a.dir.clone(), Access::Read, out, |log, out| {
            read(log, &a, out)
        }),
        Command::Offsets(a) if is_live(&a.dir, &a.client) => offsets_live(&a, out),
        Command::Offsets(a) => with_log(&a.dir.clone(), Access::Read, out, |log, out| {
            offsets(log, &a, out)
        }),
        Command::Info(a) if is_live(&a.dir, &a.client) => info_live(&a, out),
        Command::Info(a) => with_log(&a.dir, Access::Read, out, |log, out| {
            let info = log.info()?;
            print_json(out, &info)?;
            Ok(Outcome::Ok)
        }),
        Command::Recover(a) => recover(&a.dir, a.writer.options(), out),
        Command::Compact(a) => {
            let access = match a.now {
                Some(now) => Access::WriteAt(a.writer.options(), now),
                None => Access::Write(a.writer.options()),
            };
            with_log(&a.dir.clone(), access, out, |log, out| {
                let now = a.now.unwrap_or_else(now_ms);
                let info = if a.always {
                    log.compact_now(now)?
                } else {
                    log.compact(now)?
                };
                print_json(out, &info)?;
                Ok(Outcome::Ok)
            })
        }
        Command::Retain(a) => {
            let access = Access::Write(a.writer.options());
            with_log(&a.dir, access, out, |log, out| {
                let info = log.retain()?;
                print_json(out, &info)?;
                Ok(Outcome::Ok)
            })
        }
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
    let class = classify_log(e);
    if class == ErrorClass::Data {
        print_json(
            out,
            &serde_json::json!({"error": e.kafka_name(), "message": message}),
        )?;
        eprintln!("krec: {}: {message}", e.kafka_name());
        Ok(Outcome::DataProblem)
    } else if class == ErrorClass::Io {
        Err(Failure::Io(io::Error::other(message), String::new()))
    } else {
        Err(Failure::Usage(message))
    }
}

/// Opens the log, says on stderr when the open had to recover it.
fn open(dir: &Path, access: Access) -> Result<Log, krecords_log::Error> {
    let log = match access {
        Access::Read => Log::open_read_only(dir)?,
        Access::Write(options) => Log::open_with_options(dir, Env::fs(), options)?,
        Access::WriteAt(options, now) => Log::open_with_options(dir, Env::fs_at(now), options)?,
    };
    let read_only = matches!(access, Access::Read);
    // With damage in the middle, the bytes cut are not a torn tail: a read that reaches them
    // fails naming the damage (Log::damage), one that ends before them needs no note.
    let notes = match log.damage() {
        Some(_) => Vec::new(),
        None => log.recovery_info().notes(dir, read_only),
    };
    for note in notes {
        eprintln!("krec: {note}");
    }
    Ok(log)
}

/// Opens the log, runs `body`, and closes the log whatever happened (a failed body's error wins
/// over a failed close).
///
/// A writing body syncs what it did before it prints it, so once it has succeeded a failure to
/// close (the producer state snapshot, the recovery point, the clean shutdown marker) loses
/// nothing: it is reported on stderr as a warning and the command still exits 0; the next open
/// recovers the log from its segments.
fn with_log<W: Write>(
    dir: &Path,
    access: Access,
    out: &mut W,
    body: impl FnOnce(&mut Log, &mut W) -> Result<Outcome, CmdError>,
) -> Result<Outcome, Failure> {
    let mut log = match open(dir, access) {
        Ok(log) => log,
        Err(e) => return log_outcome(&e, "", out),
    };
    let result = body(&mut log, out);
    let closed = log.close();
    match result {
        Err(CmdError::Other(f)) => Err(f),
        Err(CmdError::Log(e)) => log_outcome(&e, "", out),
        Ok(outcome) => {
            if let Err(e) = closed {
                eprintln!(
                    "krec: warning: {}: closing the log failed ({e}); what was printed is in the \
                     log and synced, and the next open recovers the log",
                    dir.display()
                );
            }
            Ok(outcome)
        }
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
    let log = match Log::create_with_options(&args.dir, config, Env::fs(), args.writer.options()) {
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

fn append(args: AppendArgs, out: &mut impl Write) -> Result<Outcome, Failure> {
    let access = Access::Write(args.writer.options());
    if args.raw {
        let mut input = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut input)
            .map_err(|e| Failure::Io(e, "cannot read stdin".into()))?;
        // Parsed once the log is open: entries are bounded by its max.message.bytes, so a
        // corrupt size field is refused rather than read as a truncated tail.
        return with_log(&args.dir, access, out, |log, out| {
            let max = usize::try_from(log.config().max_message_bytes).unwrap_or(0);
            match raw_groups(&input, max) {
                Ok(groups) => append_groups(log, &groups, out),
                Err(rejection) => {
                    // Nothing was written.
                    print_json(
                        out,
                        &serde_json::json!({"error": "CORRUPT_MESSAGE", "message": rejection}),
                    )?;
                    eprintln!("krec: CORRUPT_MESSAGE: {rejection}");
                    Ok(Outcome::DataProblem)
                }
            }
        });
    }
    let groups = json_groups(&args)?;
    with_log(&args.dir, access, out, |log, out| {
        append_groups(log, &groups, out)
    })
}

/// Builds one append per batch from JSON lines on stdin.
fn json_groups(args: &AppendArgs) -> Result<Vec<Group>, Failure> {
    let (compression, level) = crate::args::parse_compression(&args.compression)?;
    // As a producer sends them: each batch from offset 0, partition leader epoch -1.
    let opts = BatchOptions {
        compression,
        level,
        timestamp_type: if args.magic == 0 {
            TimestampType::NoTimestamp
        } else {
            TimestampType::CreateTime
        },
        records_per_batch: args.records_per_batch,
        restart_offsets: true,
        ..BatchOptions::new(args.magic)
    }
    .with_producer(
        args.producer_id,
        args.producer_epoch,
        args.base_sequence,
        args.transactional,
    )
    .map_err(Failure::Usage)?;
    let records = read_json_records(io::stdin().lock(), args.bytes)?;
    if records.iter().any(|r| r.offset.is_some()) {
        return Err(Failure::Usage(
            "records for `krec log append` cannot carry an \"offset\": the log assigns offsets"
                .into(),
        ));
    }
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
    })?;
    Ok(groups)
}

/// Splits pre-built entries into appends ([`raw_append::split`]), noting a dropped
/// truncated tail.
fn raw_groups(input: &[u8], max_message_bytes: usize) -> Result<Vec<Group>, String> {
    let split = raw_append::split(input, max_message_bytes)?;
    if let Some(p) = split.dropped {
        eprintln!(
            "krec: dropped {} bytes of a truncated entry at byte {} of the input",
            p.bytes, p.position
        );
    }
    Ok(split
        .appends
        .into_iter()
        .map(|a| Group {
            bytes: a.bytes,
            context: format!("input entry at byte {}", a.position),
        })
        .collect())
}

/// Appends every group all or nothing ([`Log::append_all`]) and prints one line each.
fn append_groups(
    log: &mut Log,
    groups: &[Group],
    out: &mut impl Write,
) -> Result<Outcome, CmdError> {
    let entries: Vec<&[u8]> = groups.iter().map(|g| g.bytes.as_slice()).collect();
    match log.append_all(&entries, AppendOrigin::Client) {
        Ok(infos) => {
            // Acknowledged only once durable.
            if let Err(e) = log.flush() {
                let context = "the appends are in the log but syncing them failed";
                return Ok(log_outcome(&e, context, out)?);
            }
            for info in &infos {
                print_json(out, info)?;
            }
            Ok(Outcome::Ok)
        }
        Err(e) => match e.in_entry() {
            Some((i, cause)) => {
                let context = groups
                    .get(i)
                    .map_or_else(String::new, |g| g.context.clone());
                let context = match groups.len() {
                    1 => context,
                    n => format!("{context} (nothing of the {n} appends was written)"),
                };
                Ok(log_outcome(cause, &context, out)?)
            }
            None if e.is_storage_error() && groups.len() > 1 => {
                let context = "appending";
                Ok(log_outcome(&e, context, out)?)
            }
            None => Err(e.into()),
        },
    }
}

fn end_txn(log: &mut Log, args: &EndTxnArgs, out: &mut impl Write) -> Result<Outcome, CmdError> {
    let timestamp = args.timestamp.unwrap_or_else(now_ms);
    let info = log.append_end_txn(
        args.producer_id,
        args.producer_epoch,
        args.coordinator_epoch,
        args.commit,
        timestamp,
    )?;
    log.flush()?;
    print_json(out, &info)?;
    Ok(Outcome::Ok)
}

impl OffsetsArgs {
    /// What to look up.
    fn spec(&self) -> OffsetSpec {
        if self.earliest {
            OffsetSpec::Earliest
        } else if self.latest {
            OffsetSpec::Latest
        } else if self.max_timestamp {
            OffsetSpec::MaxTimestamp
        } else {
            OffsetSpec::Timestamp(self.time.unwrap_or(0))
        }
    }
}

fn offsets(log: &mut Log, args: &OffsetsArgs, out: &mut impl Write) -> Result<Outcome, CmdError> {
    let spec = args.spec();
    let r = match args.isolation {
        Some(i) => log.offsets_at(spec, i)?,
        None => log.offsets(spec)?,
    };
    print_json(out, &r)?;
    Ok(Outcome::Ok)
}

/// The values of `krec log offsets --isolation`, with their help.
const ISOLATION: [(IsolationLevel, &str); 2] = [
    (
        IsolationLevel::ReadUncommitted,
        "Every record up to the high watermark (aborted ones included, markers not)",
    ),
    (
        IsolationLevel::ReadCommitted,
        "Records of committed transactions and non-transactional records, up to the last stable offset",
    ),
];

fn read(log: &mut Log, args: &ReadArgs, out: &mut impl Write) -> Result<Outcome, CmdError> {
    let name = args.dir.display().to_string();
    let mut print = |r: &ConsumedRecord| print_record(r, args.bytes, out);
    let stop = records::read_log(
        log,
        &name,
        &args.range(),
        args.isolation(),
        args.max_bytes,
        &mut print,
    )
    .map_err(|e| match e {
        krecords_source::Error::Log { source, .. } => CmdError::Log(*source),
        e => CmdError::Other(e.into()),
    })?;
    report_stop(&name, stop);
    Ok(Outcome::Ok)
}

/// Says on stderr where and why a read stopped before the high watermark.
fn report_stop(name: &str, stop: Option<Stop>) {
    if let Some(stop) = stop {
        eprintln!("krec: {name}: {stop}");
    }
}

/// Whether DIR is a live or remote tier partition, not a directory (warns of unused -X/-F).
fn is_live(dir: &Path, client: &ClientArgs) -> bool {
    client.warn_unused(&[dir.to_path_buf()]);
    crate::source::is_url_source(dir)
}

/// The one live or remote tier partition DIR names, and its name.
fn live_partition(
    dir: &Path,
    client: &ClientArgs,
    command: &str,
) -> Result<(Sources, String), Failure> {
    let sources = open_sources(&[dir.to_path_buf()], client)?;
    match sources.partitions.as_slice() {
        [p] if p.live().is_some() || p.is_remote() => {
            let name = p.name.clone();
            Ok((sources, name))
        }
        _ => Err(Failure::Usage(format!(
            "{}: {command} reads one partition: kafka://HOST:PORT/TOPIC/PARTITION or a remote \
             tier partition (LOCATION/<topic>-<topicId>/<partition>)",
            dir.display()
        ))),
    }
}

/// `krec log read kafka://…`: what a consumer at `--isolation` receives from a live partition.
fn read_live(args: &ReadArgs, out: &mut impl Write) -> Result<Outcome, Failure> {
    let (sources, live) = live_partition(&args.dir, &args.client, "krec log read")?;
    let options = ReadOptions {
        range: Range {
            count: None,
            ..args.range()
        },
        isolation: args.isolation(),
        ..ReadOptions::default()
    };
    let mut reader = sources.read(0, &options)?;
    let mut print = |r: &ConsumedRecord| print_record(r, args.bytes, out);
    let count = args.positions.count.count;
    let stop = records::read_entries(&mut reader, count, args.max_bytes, &mut print)?;
    report_stop(&live, stop);
    Ok(Outcome::Ok)
}

/// `krec log info kafka://…`: the partition's watermarks from the cluster.
fn info_live(args: &DirArgs, out: &mut impl Write) -> Result<Outcome, Failure> {
    let (sources, _) = live_partition(&args.dir, &args.client, "krec log info")?;
    let w = sources.watermarks(0)?.unwrap_or(Watermarks::EMPTY);
    print_json(out, &w.to_json())?;
    Ok(Outcome::Ok)
}

/// `krec log offsets kafka://…`: ListOffsets on the cluster.
fn offsets_live(args: &OffsetsArgs, out: &mut impl Write) -> Result<Outcome, Failure> {
    let (sources, _) = live_partition(&args.dir, &args.client, "krec log offsets")?;
    let isolation = args
        .isolation
        .map_or(IsolationLevel::ReadUncommitted, IsolationLevel::from);
    print_json(out, &sources.list_offsets(0, args.spec(), isolation)?)?;
    Ok(Outcome::Ok)
}

/// Prints a record as the `krec log read` lines of docs/design.md.
fn print_record(r: &ConsumedRecord, bytes: BytesFormat, out: &mut impl Write) -> io::Result<()> {
    print_json(out, &entry_json::consumed(r, bytes.into()))
}

fn recover(dir: &Path, options: OpenOptions, out: &mut impl Write) -> Result<Outcome, Failure> {
    match Log::recover_with_options(dir, Env::fs(), options) {
        Ok(info) => {
            for p in info.problems.iter().chain(&info.deleted()) {
                eprintln!("krec: recovered: {p}");
            }
            print_json(out, &info)?;
            Ok(Outcome::Ok)
        }
        Err(e) => log_outcome(&e, "", out),
    }
}
