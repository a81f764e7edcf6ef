//! `krec dump`: print the entries of segment files (kafka-dump-log style text, or JSON Lines).
//!
//! The arguments, the partitions to read and the exit code; the rendering is
//! [`krecords_source::dump`]'s, which streams entry by entry with bounded memory and skips the
//! entries the filters exclude from their headers, without decompressing them.

use crate::args::{DecompressArgs, Format, PositionArgs};
use crate::bytes_fmt::BytesFormat;
use crate::kafka::ClientArgs;
use crate::outcome::{Failure, Outcome};
use crate::source::{open_sources, read_options, EachPartition};
use crate::time_fmt;
use clap::ValueEnum;
use krecords_source::dump::{self, DumpOptions, Dumper};
use krecords_source::filter::Filter;
use krecords_source::IsolationLevel;
use krecords_topics::Kind;
use std::io::Write;
use std::path::PathBuf;

/// Print the entries of log segments or any file of concatenated Kafka entries.
///
/// Text output is kafka-dump-log's, line for line (Kafka 4.4.0's DumpLogSegments with
/// --deep-iteration / --print-data-log). JSON output is one line per entry: its file and
/// position, every header field (magic, base_offset, last_offset, count, size_bytes, crc,
/// crc_valid, compression, timestamp_type, base_timestamp, max_timestamp, producer_id, ...,
/// transactional, control) and with --deep its "records" (offset, timestamp, key, value,
/// headers as [{"key","value"}]).
///
/// PATH is a segment file, any file of concatenated entries, a partition directory (its .log
/// files in offset order), `-` for stdin, or a glob pattern with *, ? and [...] that the shell
/// did not expand (krec expands it, in sorted order), or a live topic or partition:
/// kafka://HOST:PORT[,HOST:PORT...]/TOPIC[/PARTITION] (its partitions one after another; see
/// the kafka:// options below). A partition named more than once (a root twice, a root and
/// one of its directories, a segment and its directory, a kafka:// partition of one cluster
/// however its servers are spelled: by the cluster id) is read once, said on stderr.
///
/// Positions (the same on files, directories, broker roots and kafka:// topics):
///   --start POS / --end POS   offsets from POS (inclusive) / up to POS (exclusive): an offset,
///                             -N (N before the end), earliest, latest, or a time (ISO 8601
///                             or @ and epoch ms: the first offset at or after it)
///   --count N                 at most N records from --start (of those the filters below
///                             show)
///   --isolation LEVEL         read-uncommitted (default: every batch, as kafka-dump-log shows
///                             the files) or read-committed (up to the last stable offset,
///                             aborted transactions left out)
/// A read that stops before the high watermark says where and why on stderr. On several
/// partitions (a root, a topic) a position outside one of them leaves it out with a note on
/// stderr; outside all of them, exit 2.
///
/// Filters (all optional, combined with AND; entries filtered out are neither decoded nor
/// checked, so they cannot make the exit code 1):
///   --time-start T / --time-end T       timestamps T.. (inclusive) / ..T (exclusive); T is epoch
///                                       ms (0 or more) or ISO 8601 (2024-04-24T23:06:40Z,
///                                       2024-04-24T23:06:40.123+02:00, 2024-04-24; UTC if no zone)
/// An entry is printed when its offsets [base, last] and its timestamps [base timestamp, max
/// timestamp] overlap the positions and ranges (a v0/v1 compressed wrapper: its inner messages'
/// offsets and timestamps); with --deep only the records inside them are printed (JSON "count"
/// stays the entry's). v0 entries have no timestamps: a time filter leaves them all out.
///   --producer-id N       entries of this producer (-1: non-idempotent v2 and all v0/v1)
///   --control-only        control batches only (transaction markers, KRaft records)
///   --transactional-only  transactional batches only (their markers included)
///   --max-bytes N         read only the first N bytes of each file, as kafka-dump-log's
///                         --max-bytes: entries that end past N are not printed, and neither is
///                         the cut (no "invalid bytes" line, no JSON "partial" line)
///
/// Kafka's internal topics are decoded as kafka-dump-log 4.4.0's decoders show them: in
/// __consumer_offsets-N, __transaction_state-N, __cluster_metadata-N (segments and .checkpoint
/// snapshots), __share_group_state-N and __remote_log_metadata-N, or with --decode offsets|
/// transactions|metadata|share-state|remote-log-metadata for files out of their directory
/// (--decode none: bytes). Text (--print-data): the `key:` and `payload:` of --offsets-decoder,
/// --transaction-log-decoder, --cluster-metadata-decoder, --share-group-state-decoder,
/// --remote-log-metadata-decoder; JSON (--deep): records gain key_decoded and value_decoded.
///
/// --timestamps human adds ISO 8601 UTC forms: JSON fields base_timestamp_iso,
/// max_timestamp_iso and (records) timestamp_iso; in text " (2024-04-24T23:06:40.000Z)" after
/// each timestamp. Kafka's -1 ("no timestamp") has none.
///
/// Examples:
///   krec dump 00000000000000000000.log
///   krec dump --deep --format json --bytes hex /var/kafka/topic-0/
///   krec dump --deep --start 1000 --end 2000 '/var/kafka/topic-*/'
///   krec dump --deep --start -10 /var/kafka/topic-0/
///   krec dump --deep --time-start 2024-04-24T23:00:00Z --timestamps human topic-0/
///   krec dump --transactional-only --producer-id 4001 --format json topic-0/
///   krec dump --print-data /var/kafka/__consumer_offsets-0/
///   cat entries.bin | krec dump --format json -
///   krec dump --deep --format json --start 2024-04-24T23:00:00Z kafka://localhost:9092/events/0
///   krec dump --deep --format json -X s3.endpoint.url=http://localhost:9000 s3://tiered/prefix/
///   krec dump --deep --rsm-private-key k1=private.pem file:///var/kafka-tier/
#[derive(clap::Args)]
#[command(verbatim_doc_comment, after_long_help = crate::kafka::REMOTE_HELP)]
pub struct Args {
    /// Segment files, partition directories, glob patterns, `-` for stdin, kafka:// URLs, or
    /// remote tier locations (s3://BUCKET/PREFIX, gs://, az://, file:///ROOT/PREFIX).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Iterate the records of every entry (kafka-dump-log's --deep-iteration).
    #[arg(long, alias = "deep-iteration")]
    deep: bool,
    /// Print keys, values and headers (kafka-dump-log's --print-data-log); implies --deep.
    #[arg(long, alias = "print-data-log")]
    print_data: bool,
    /// Output format: kafka-dump-log's line format, or one JSON object per entry.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// How keys, values and header values appear.
    #[arg(long, value_enum, default_value_t = BytesFormat::Utf8)]
    bytes: BytesFormat,
    #[command(flatten)]
    decompress: DecompressArgs,
    /// Only timestamps from T on (inclusive): epoch ms, 0 or more (or @ and epoch ms), ISO 8601.
    #[arg(long, value_name = "T", value_parser = time_fmt::parse_record_time, allow_negative_numbers = true)]
    time_start: Option<i64>,
    /// Only timestamps before T (exclusive): epoch ms, 0 or more (or @ and epoch ms), ISO 8601.
    #[arg(long, value_name = "T", value_parser = time_fmt::parse_record_time, allow_negative_numbers = true)]
    time_end: Option<i64>,
    /// Only entries with this producer id (-1: non-idempotent and v0/v1).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    producer_id: Option<i64>,
    /// Only control batches (transaction markers, KRaft control records).
    #[arg(long)]
    control_only: bool,
    /// Only transactional batches.
    #[arg(long)]
    transactional_only: bool,
    /// Read only the first N bytes of each file (kafka-dump-log's --max-bytes).
    #[arg(long, value_name = "N")]
    max_bytes: Option<u64>,
    /// How timestamps appear: ms as Kafka prints them, or human (ISO 8601 UTC added).
    #[arg(long, value_enum, default_value_t = Timestamps::Ms)]
    timestamps: Timestamps,
    /// Decode the records of Kafka's internal topics (with --print-data in text, with --deep in
    /// JSON): auto picks the decoder from the partition directory's topic name.
    #[arg(long, value_enum, default_value_t = Decode::Auto)]
    decode: Decode,
    /// Only the partitions of topics matching this glob (*, ?, [...]; repeatable): of a broker
    /// root, partition directories, a remote tier location, a kafka:// URL naming no topic.
    #[arg(long, value_name = "GLOB")]
    topic: Vec<String>,
    #[command(flatten)]
    positions: PositionArgs,
    #[command(flatten)]
    client: ClientArgs,
}

/// `krec dump --decode`: which of [`krecords_topics`]' decoders applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Decode {
    /// From the partition directory's topic name (`__consumer_offsets-N`, ...).
    Auto,
    /// Keys and values as bytes.
    None,
    /// `__consumer_offsets` (kafka-dump-log's --offsets-decoder).
    Offsets,
    /// `__transaction_state` (--transaction-log-decoder).
    Transactions,
    /// `__cluster_metadata` segments and snapshots (--cluster-metadata-decoder).
    Metadata,
    /// `__share_group_state` (--share-group-state-decoder).
    ShareState,
    /// `__remote_log_metadata` (--remote-log-metadata-decoder).
    RemoteLogMetadata,
}

impl From<Decode> for dump::Decode {
    fn from(d: Decode) -> Self {
        match d {
            Decode::Auto => dump::Decode::Auto,
            Decode::None => dump::Decode::None,
            Decode::Offsets => dump::Decode::Topic(Kind::Offsets),
            Decode::Transactions => dump::Decode::Topic(Kind::Transactions),
            Decode::Metadata => dump::Decode::Topic(Kind::Metadata),
            Decode::ShareState => dump::Decode::Topic(Kind::ShareState),
            Decode::RemoteLogMetadata => dump::Decode::Topic(Kind::RemoteLogMetadata),
        }
    }
}

/// Timestamp rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Timestamps {
    /// Milliseconds since the epoch only (Kafka's output).
    Ms,
    /// Also ISO 8601 in UTC (JSON: extra `*_iso` fields; text: in parentheses).
    Human,
}

/// Runs the subcommand.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    if let (Some(s), Some(e)) = (args.time_start, args.time_end) {
        if e <= s {
            return Err(Failure::Usage(format!(
                "--time-end ({e}) must be later than --time-start ({s}): the end is exclusive"
            )));
        }
    }
    let filter = krecords_source::partition_filter(&args.paths, &args.topic, None)?;
    args.client.warn_unused(&args.paths);
    let mut sources = open_sources(&args.paths, &args.client)?;
    let given: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
    sources.select(&filter, &given.join(" "))?;
    let mut options = read_options(
        &args.positions.range,
        args.positions.count,
        IsolationLevel::ReadUncommitted,
        args.decompress.max_decompressed_bytes,
        args.max_bytes,
    );
    let mut dumper = Dumper::new(DumpOptions {
        format: match args.format {
            Format::Text => dump::Format::Text,
            Format::Json => dump::Format::Json,
        },
        deep: args.deep,
        print_data: args.print_data,
        bytes: args.bytes.into(),
        iso: args.timestamps == Timestamps::Human,
        max_decompressed_bytes: args.decompress.max_decompressed_bytes,
        filter: Filter {
            time_start: args.time_start,
            time_end: args.time_end,
            producer_id: args.producer_id,
            control_only: args.control_only,
            transactional_only: args.transactional_only,
            ..Filter::default()
        },
        bounded: !options.range.is_all(),
        partial_tails: args.max_bytes.is_none(),
        decode: args.decode.into(),
    })
    .on_error(|name, e| eprintln!("krec: {name}: {e}"));
    // --count counts the records the filters show.
    options.counted = Some(dumper.filter());
    let mut problem = false;
    let mut each = EachPartition::new(&sources, &options);
    for (i, part) in sources.partitions.iter().enumerate() {
        let Some(mut reader) = each.open(i)? else {
            continue;
        };
        let dumped = dumper.partition(part, &mut reader, out);
        problem |= each.carry_on(dumped.map_err(Failure::from))?;
        if let Some(stop) = reader.stop() {
            eprintln!("krec: {}: {stop}", reader.name());
        }
    }
    problem |= each.finish()? > 0;
    Ok(if problem {
        Outcome::DataProblem
    } else {
        Outcome::Ok
    })
}
