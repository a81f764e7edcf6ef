//! Kafka's message formats, read and written byte for byte as Apache Kafka does.
//!
//! Three formats share the log, told apart by the magic byte at offset 16 of every entry:
//! magic 0 and 1 (single "messages", possibly a compressed wrapper around inner messages) and
//! magic 2, the RecordBatch. [`read::Entries`] walks any buffer of concatenated entries (a segment
//! file, the records field of a fetch response) and yields a [`read::Batch`] per entry without
//! copying; [`write::V2Builder`] and [`write::LegacyBuilder`] write entries identical to Apache
//! Kafka's `MemoryRecordsBuilder` (for compressed entries: the same framing and contents, with
//! the compressed bytes themselves as our codec libraries produce them).
//!
//! # Examples
//!
//! ```
//! use krecords_codec::read::Entries;
//! use krecords_codec::write::{V2Builder, NewRecord};
//! use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;
//!
//! let mut builder = V2Builder::new(0);
//! builder.append(&NewRecord::new(1714000000000, None, Some(b"hello"))).unwrap();
//! builder.append(&NewRecord::new(1714000000000, None, Some(b"world"))).unwrap();
//! let bytes = builder.finish().unwrap();
//! assert_eq!(bytes.len(), 85);
//!
//! // Read: `checked_records` checks the CRC and iterates with one decompression, bounded by
//! // DEFAULT_DECOMPRESS_LIMIT (`records` alone does not check the CRC).
//! let mut scratch = Vec::new();
//! for batch in Entries::new(&bytes) {
//!     let batch = batch?;
//!     for record in batch.checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)? {
//!         let record = record?;
//!         println!("{} {:?}", record.offset(), record.value());
//!     }
//! }
//! # Ok::<(), krecords_codec::Error>(())
//! ```
#![deny(missing_docs)]

pub mod build;
pub mod control;
pub mod convert;
pub mod crc;
mod error;
pub mod explain;
pub mod java_text;
pub mod layout;
pub mod patch;
pub mod sample;
pub mod stats;
pub mod varint;
pub mod what_if;
pub mod write;

/// Declares modules that read untrusted bytes (files, network responses, any input) with the
/// panic lints denied outside tests: no indexing, unwrapping, expecting, panicking or
/// unchecked arithmetic (`clippy::indexing_slicing`, `unwrap_used`, `expect_used`, `panic`,
/// `arithmetic_side_effects`). The one declaration of those lints for the workspace: write
/// `krecords_codec::untrusted_modules! { pub mod read; mod stream; }` in the parent module
/// instead of the module's `mod` lines. Tests inside such a module may unwrap and index.
#[macro_export]
macro_rules! untrusted_modules {
    ($($(#[$attr:meta])* $vis:vis mod $name:ident;)*) => {
        $(
            $(#[$attr])*
            #[cfg_attr(
                not(test),
                deny(
                    clippy::indexing_slicing,
                    clippy::unwrap_used,
                    clippy::expect_used,
                    clippy::panic,
                    clippy::arithmetic_side_effects
                )
            )]
            $vis mod $name;
        )*
    };
}

untrusted_modules! {
    pub mod compression;
    pub mod read;
    pub mod txn;
}

pub use error::{Error, Result};

/// The default cap on decompressed bytes per batch: 256 MiB, well above Kafka's largest
/// `max.message.bytes` in practice and well below this machine's memory.
pub const DEFAULT_DECOMPRESS_LIMIT: usize = 256 << 20;

/// The compression codec of an entry: bits 0..2 of the attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Compression {
    /// Uncompressed (id 0).
    None,
    /// gzip (id 1).
    Gzip,
    /// snappy, xerial-framed when written (id 2).
    Snappy,
    /// LZ4 in Kafka's frame (id 3).
    Lz4,
    /// zstd (id 4); v2 only.
    Zstd,
}

impl Compression {
    /// All codecs, in id order.
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// The codec for an attributes id, `None` for ids 5..7.
    pub fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            4 => Compression::Zstd,
            _ => return None,
        })
    }

    /// The attributes id (0..4).
    pub fn id(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }

    /// Kafka's name: `none`, `gzip`, `snappy`, `lz4`, `zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    /// Parses Kafka's name (case-insensitive).
    pub fn from_name(name: &str) -> Option<Self> {
        Compression::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
    }

    /// Whether the codec may appear in the given message format (zstd needs magic 2).
    pub fn allowed_in(self, magic: u8) -> bool {
        match self {
            Compression::Zstd => magic >= 2,
            _ => magic <= 2,
        }
    }

    /// The inclusive range of levels Kafka (3.8+) accepts for the codec, `None` for codecs
    /// without levels (none, snappy).
    pub fn level_range(self) -> Option<(i32, i32)> {
        match self {
            Compression::Gzip => Some((1, 9)),
            Compression::Lz4 => Some((1, 17)),
            Compression::Zstd => Some((-131072, 22)),
            Compression::None | Compression::Snappy => None,
        }
    }

    /// Whether Kafka accepts `level` for the codec: within [`Self::level_range`], or -1 for gzip
    /// (`Deflater.DEFAULT_COMPRESSION`, which Kafka's gzip level config also accepts). Codecs
    /// without levels accept none.
    pub fn is_valid_level(self, level: i32) -> bool {
        match self.level_range() {
            Some((lo, hi)) => {
                (lo..=hi).contains(&level) || (self == Compression::Gzip && level == -1)
            }
            None => false,
        }
    }

    /// Whether krecords writes the codec at `level` as Kafka would, with the reason when not:
    /// a level for a codec without levels (none, snappy), a level outside
    /// [`Self::level_range`], or an lz4 level other than the default (Kafka's LZ4 HC,
    /// [`convert::check_lz4_level`]). `None` (the default level) always is. What every front
    /// end (the CLI's `--compression codec:level`, the Python package's `level=`) checks.
    ///
    /// ```
    /// use krecords_codec::Compression;
    /// assert!(Compression::Zstd.check_level(Some(19)).is_ok());
    /// assert!(Compression::Gzip.check_level(Some(10)).unwrap_err().contains("outside 1 to 9"));
    /// assert!(Compression::Snappy.check_level(Some(3)).unwrap_err().contains("no levels"));
    /// assert!(Compression::Lz4.check_level(Some(3)).unwrap_err().contains("LZ4 HC"));
    /// assert!(Compression::Lz4.check_level(None).is_ok());
    /// ```
    pub fn check_level(self, level: Option<i32>) -> std::result::Result<(), String> {
        let name = self.name();
        match (level, self.level_range()) {
            (None, _) => return Ok(()),
            (Some(_), None) => return Err(format!("{name} has no levels")),
            (Some(l), Some((lo, hi))) if !self.is_valid_level(l) => {
                return Err(format!("{name} level {l} outside {lo} to {hi}"))
            }
            _ => {}
        }
        convert::check_lz4_level(self, level).map_err(|e| e.to_string())
    }

    /// Parses `codec` or `codec:level` (`zstd:3`), the level checked by [`Self::check_level`].
    ///
    /// ```
    /// use krecords_codec::Compression;
    /// assert_eq!(Compression::parse_with_level("zstd:3"), Ok((Compression::Zstd, Some(3))));
    /// assert_eq!(Compression::parse_with_level("GZIP"), Ok((Compression::Gzip, None)));
    /// assert!(Compression::parse_with_level("lz5").is_err());
    /// assert!(Compression::parse_with_level("gzip:x").is_err());
    /// ```
    pub fn parse_with_level(s: &str) -> std::result::Result<(Compression, Option<i32>), String> {
        let (name, level) = match s.split_once(':') {
            Some((n, l)) => (n, Some(l)),
            None => (s, None),
        };
        let codec = Compression::from_name(name).ok_or_else(|| {
            format!("unknown compression {name:?} (none, gzip, snappy, lz4, zstd)")
        })?;
        let level = match level {
            None => None,
            Some(l) => Some(
                l.parse::<i32>()
                    .map_err(|_| format!("invalid level {l:?}"))?,
            ),
        };
        codec.check_level(level)?;
        Ok((codec, level))
    }

    /// Kafka's default level for the codec (gzip 6 as `Deflater.DEFAULT_COMPRESSION`, lz4 9,
    /// zstd 3), `None` for codecs without levels.
    pub fn default_level(self) -> Option<i32> {
        match self {
            Compression::Gzip => Some(6),
            Compression::Lz4 => Some(9),
            Compression::Zstd => Some(3),
            Compression::None | Compression::Snappy => None,
        }
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a timestamp was assigned: attributes bit 3 (v1 and v2); v0 has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimestampType {
    /// Magic 0: no timestamps at all.
    NoTimestamp,
    /// The producer's timestamp.
    CreateTime,
    /// The broker's append time, set on the batch (v2) or wrapper (v1).
    LogAppendTime,
}

impl TimestampType {
    /// Name as in the JSON output: `none`, `create_time`, `log_append_time`.
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::NoTimestamp => "none",
            TimestampType::CreateTime => "create_time",
            TimestampType::LogAppendTime => "log_append_time",
        }
    }

    /// Kafka's display name (`TimestampType.toString`): `NoTimestampType`, `CreateTime`, `LogAppendTime`.
    pub fn kafka_name(self) -> &'static str {
        match self {
            TimestampType::NoTimestamp => "NoTimestampType",
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }

    /// Parses `none`/`create_time`/`log_append_time` (also Kafka's spellings).
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().replace('-', "_").as_str() {
            "none" | "no_timestamp_type" => Some(TimestampType::NoTimestamp),
            "create_time" | "createtime" => Some(TimestampType::CreateTime),
            "log_append_time" | "logappendtime" => Some(TimestampType::LogAppendTime),
            _ => None,
        }
    }
}

/// One record header: a UTF-8 key (not checked for UTF-8 on read, as Kafka's reader does not)
/// and an optional value. Order and duplicates are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header<'a> {
    /// Header key bytes.
    pub key: &'a [u8],
    /// Header value, `None` for a null value (length -1).
    pub value: Option<&'a [u8]>,
}

impl<'a> From<&'a (Vec<u8>, Option<Vec<u8>>)> for Header<'a> {
    /// The header of an owned `(key, value)` pair, as records built from data hold them.
    fn from((key, value): &'a (Vec<u8>, Option<Vec<u8>>)) -> Self {
        Header {
            key,
            value: value.as_deref(),
        }
    }
}
