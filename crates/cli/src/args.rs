//! Arguments that several subcommands share, declared once (flattened into each command's
//! `Args` with `#[command(flatten)]`) and parsed once.

use crate::kafka::KafkaArgs;
use crate::outcome::Failure;
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};

/// Parses `codec[:level]`.
pub fn parse_compression(s: &str) -> Result<(Compression, Option<i32>), Failure> {
    let (name, level) = match s.split_once(':') {
        Some((n, l)) => (n, Some(l)),
        None => (s, None),
    };
    let codec = Compression::from_name(name).ok_or_else(|| {
        Failure::Usage(format!(
            "unknown compression {name:?} (none, gzip, snappy, lz4, zstd)"
        ))
    })?;
    let level = match level {
        None => None,
        Some(l) => {
            let l: i32 = l
                .parse()
                .map_err(|_| Failure::Usage(format!("invalid level {l:?}")))?;
            match codec.level_range() {
                Some(_) if codec.is_valid_level(l) => Some(l),
                Some((lo, hi)) => {
                    return Err(Failure::Usage(format!(
                        "{name} level {l} outside {lo}..={hi}"
                    )))
                }
                None => return Err(Failure::Usage(format!("{name} has no levels"))),
            }
        }
    };
    Ok((codec, level))
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
    /// Codec, optionally with a level: none, gzip[:1-9], snappy, lz4[:1-17], zstd[:-131072-22]
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
