//! Arguments that several subcommands share, declared once (flattened into each command's
//! `Args` with `#[command(flatten)]`) and parsed once.

use crate::kafka::ClientArgs;
use crate::outcome::Failure;
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};
use krecords_source::{IsolationLevel, Position, Range};

const POSITIONS: &str = "Positions and isolation (files, directories, broker roots, kafka://)";

/// `--start`, `--end` and `--isolation`: the same on every source (files, partition
/// directories, broker roots, live topics).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RangeArgs {
    /// Where to start: an offset, -N (N offsets before the end, as kcat's -o -N), earliest
    /// (default), latest, or a time (ISO 8601, or @ and epoch ms, e.g. @1714000000000): the
    /// first offset whose timestamp is at or after it. The entry holding the start is read
    /// whole; its records before the start are not shown.
    #[arg(long, value_name = "POS", allow_hyphen_values = true, value_parser = Position::parse, help_heading = POSITIONS)]
    pub start: Option<Position>,
    /// Where to stop (exclusive), as --start; default: the end (the high watermark; the last
    /// stable offset at read-committed). An offset outside the partition, or an end that is
    /// not after the start, is an error.
    #[arg(long, value_name = "POS", allow_hyphen_values = true, value_parser = Position::parse, help_heading = POSITIONS)]
    pub end: Option<Position>,
    /// Isolation: read-uncommitted shows every batch as the log holds it (the default of the
    /// commands that inspect data: dump, verify, explain, stats, log read); read-committed
    /// shows what a transactional consumer sees: up to the last stable offset, aborted
    /// transactions left out (the default of ship). A read that stops before the high
    /// watermark says where and why.
    #[arg(long, help_heading = POSITIONS, value_parser = crate::isolation::isolation_parser([
        (IsolationLevel::ReadUncommitted, "Every batch up to the high watermark, aborted transactions included"),
        (IsolationLevel::ReadCommitted, "Up to the last stable offset, aborted transactions left out"),
    ]))]
    pub isolation: Option<IsolationLevel>,
}

impl RangeArgs {
    /// `--isolation`, or `default`.
    pub fn isolation(&self, default: IsolationLevel) -> IsolationLevel {
        self.isolation.unwrap_or(default)
    }
}

/// `--count`, for the commands that read records (dump, verify, stats, log read).
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct CountArgs {
    /// Read at most N records from --start.
    #[arg(long, value_name = "N", value_parser = parse_count, allow_negative_numbers = true, help_heading = POSITIONS)]
    pub count: Option<u64>,
}

/// Parses `--count`: a number of records, at least 1.
fn parse_count(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err(
            "a count of records must be at least 1 (leave --count out to read to the end)".into(),
        ),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "not a count of records: {s:?} (a whole number from 1)"
        )),
    }
}

/// [`RangeArgs`] and [`CountArgs`]: the positions of a command that reads records and has no
/// other `kafka://` options struct.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PositionArgs {
    #[command(flatten)]
    pub range: RangeArgs,
    #[command(flatten)]
    pub count: CountArgs,
}

impl RangeArgs {
    /// The range asked for, with `--count`.
    pub fn with_count(&self, count: CountArgs) -> Range {
        Range {
            start: self.start,
            end: self.end,
            count: count.count,
        }
    }
}

/// Parses `codec[:level]`.
pub fn parse_compression(s: &str) -> Result<(Compression, Option<i32>), Failure> {
    Compression::parse_with_level(s).map_err(Failure::Usage)
}

/// `--max-decompressed-bytes`, for every command that reads entries.
#[derive(clap::Args)]
pub struct DecompressArgs {
    /// Upper bound on the decompressed size of one entry.
    #[arg(long, default_value_t = DEFAULT_DECOMPRESS_LIMIT)]
    pub max_decompressed_bytes: usize,
}

/// `--magic` and `--compression` with their defaults, for the commands that write entries from
/// scratch.
#[derive(clap::Args)]
pub struct EncodingArgs {
    /// Message format: 0, 1 or 2.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub magic: u8,
    /// Codec, optionally with a level: none, gzip[:1-9], snappy, lz4 (its default level 9 only:
    /// Kafka's other lz4 levels are LZ4 HC, which krecords does not have), zstd[:-131072-22]
    /// (zstd needs magic 2).
    #[arg(long, default_value = "none")]
    compression: String,
}

impl EncodingArgs {
    /// `--compression` parsed (see [`parse_compression`]).
    pub fn compression(&self) -> Result<(Compression, Option<i32>), Failure> {
        parse_compression(&self.compression)
    }
}

/// `--format`: every command that reports has a text form for people and a JSON form for
/// programs; each command's `--format` help says what the two look like there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people.
    Text,
    /// For programs.
    Json,
}

/// How the commands that check or measure entries (`explain`, `convert`, `verify`, `stats`) read
/// their input: the bound on one entry's decompressed size and the `kafka://` source options.
#[derive(clap::Args)]
pub struct ReadArgs {
    #[command(flatten)]
    decompress: DecompressArgs,
    /// The `kafka://` source options.
    #[command(flatten)]
    pub kafka: KafkaArgs,
}

impl ReadArgs {
    /// `--max-decompressed-bytes`.
    pub fn max_decompressed_bytes(&self) -> usize {
        self.decompress.max_decompressed_bytes
    }
}

/// Options for `kafka://` sources: client properties, positions and isolation.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct KafkaArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub range: RangeArgs,
}
