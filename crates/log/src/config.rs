//! The log configuration: Kafka's topic configuration names, defaults and validation.
//!
//! | name                               | default             | Kafka's bound          |
//! |------------------------------------|---------------------|------------------------|
//! | `segment.bytes`                    | 1073741824 (1 GiB)  | >= 14 (3.x)            |
//! | `segment.ms`                       | 604800000 (7 days)  | >= 1                   |
//! | `segment.index.bytes`              | 10485760 (10 MiB)   | >= 4, see below        |
//! | `index.interval.bytes`             | 4096                | >= 0                   |
//! | `max.message.bytes`                | 1048588             | >= 0                   |
//! | `message.timestamp.type`           | CreateTime          | CreateTime, LogAppendTime |
//! | `message.timestamp.before.max.ms`  | 9223372036854775807 | >= 0                   |
//! | `message.timestamp.after.max.ms`   | 3600000 (1 hour)    | >= 0                   |
//! | `compression.type`                 | producer            | uncompressed, gzip, snappy, lz4, zstd, producer |
//! | `compression.gzip.level`           | -1 (zlib default 6) | -1 or 1..=9            |
//! | `compression.lz4.level`            | 9                   | 1..=17                 |
//! | `compression.zstd.level`           | 3                   | -131072..=22           |
//! | `message.format.version`           | 3.0                 | 0.8.0 .. 3.x           |
//! | `retention.ms`                     | 604800000 (7 days)  | >= -1 (-1: forever)    |
//! | `retention.bytes`                  | -1 (no limit)       | any                    |
//! | `cleanup.policy`                   | delete              | delete, compact, both  |
//! | `flush.messages`                   | 9223372036854775807 | >= 1                   |
//! | `flush.ms`                         | 9223372036854775807 | >= 0                   |
//! | `producer.id.expiration.ms`        | 86400000 (1 day)    | 1 ..= 2147483647       |
//! | `producer.id.expiration.check.interval.ms` | 600000 (10 min) | 1 ..= 2147483647 |
//! | `min.cleanable.dirty.ratio`        | 0.5                 | 0 ..= 1                |
//! | `min.compaction.lag.ms`            | 0                   | >= 0                   |
//! | `max.compaction.lag.ms`            | 9223372036854775807 | >= 1                   |
//! | `delete.retention.ms`              | 86400000 (1 day)    | >= 0                   |
//! | `log.cleaner.dedupe.buffer.size`   | 134217728 (128 MiB) | >= 48 (two map slots)  |
//! | `log.cleaner.io.buffer.size`       | 524288 (512 KiB)    | >= 0                   |
//!
//! The compaction settings (see [`crate::cleaner`]): `min.compaction.lag.ms` may not exceed
//! `max.compaction.lag.ms` (Kafka's `LogConfig.validateValues`). The two `log.cleaner.*` settings
//! are broker configurations in Kafka (`CleanerConfig`, one cleaner thread): the memory of the
//! cleaner's offset map (24 bytes a slot: a 16-byte MD5 of the key and an 8-byte offset) and of
//! its read and write buffers (half each). Kafka accepts any dedupe buffer size; below two slots
//! a cleaning pass could not map a single key, so it is refused here.
//!
//! Defaults follow current Apache Kafka (4.x), where `message.timestamp.after.max.ms` became one
//! hour (it was `Long.MAX_VALUE` in 3.x). `message.format.version` is kept as Kafka had it before
//! 3.0 made it a no-op, so a log can hold data written before a format upgrade: 0.8.x and 0.9.x
//! store magic 0, 0.10.x magic 1, 0.11.0 and later magic 2. `segment.bytes` keeps 3.x's lower
//! bound of 14 bytes (4.x raised it to 1 MiB) so tests can roll small segments.
//! `segment.index.bytes` must hold at least one time index entry (12 bytes): Kafka accepts 4
//! but then fails to create the index, so it is refused here up front.
//!
//! The two `producer.id.*` settings are broker configurations in Kafka (`TransactionLogConfig`,
//! both INT), kept here because this log is its own broker: a producer id with no open
//! transaction whose last write is `producer.id.expiration.ms` old is forgotten (its next batch is
//! accepted with any sequence), checked every `producer.id.expiration.check.interval.ms` (on
//! appends here, by a scheduler in Kafka) and when producer state is loaded from a snapshot.
//! `transactional.id.expiration.ms` (7 days) belongs to the transaction coordinator, which
//! expires transactional ids; a partition log never reads it, so it is not a setting here.
//!
//! The configuration is stored as `krec-log.json` in the log directory: one JSON object mapping
//! each Kafka name to its value.

use crate::error::{Error, Result};
use krecords_codec::{Compression, TimestampType};
use serde_json::{Map, Value};

/// `compression.type`: the codec the log stores batches in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompressionType {
    /// `producer`: keep whatever codec the producer used.
    Producer,
    /// `uncompressed`.
    Uncompressed,
    /// `gzip`.
    Gzip,
    /// `snappy`.
    Snappy,
    /// `lz4`.
    Lz4,
    /// `zstd` (needs message format v2).
    Zstd,
}

impl CompressionType {
    /// Kafka's name.
    pub fn name(self) -> &'static str {
        match self {
            CompressionType::Producer => "producer",
            CompressionType::Uncompressed => "uncompressed",
            CompressionType::Gzip => "gzip",
            CompressionType::Snappy => "snappy",
            CompressionType::Lz4 => "lz4",
            CompressionType::Zstd => "zstd",
        }
    }

    /// Parses Kafka's name (case-insensitive; `none` is taken for `uncompressed`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "producer" => CompressionType::Producer,
            "uncompressed" | "none" => CompressionType::Uncompressed,
            "gzip" => CompressionType::Gzip,
            "snappy" => CompressionType::Snappy,
            "lz4" => CompressionType::Lz4,
            "zstd" => CompressionType::Zstd,
            _ => return None,
        })
    }

    /// The codec, `None` for `producer`.
    pub fn codec(self) -> Option<Compression> {
        Some(match self {
            CompressionType::Producer => return None,
            CompressionType::Uncompressed => Compression::None,
            CompressionType::Gzip => Compression::Gzip,
            CompressionType::Snappy => Compression::Snappy,
            CompressionType::Lz4 => Compression::Lz4,
            CompressionType::Zstd => Compression::Zstd,
        })
    }
}

/// `message.format.version`: a Kafka version string and the magic it selects.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MessageFormatVersion {
    version: String,
    magic: u8,
}

impl MessageFormatVersion {
    /// Parses a Kafka version such as `0.9.0`, `0.10.2`, `0.10.0-IV1`, `0.11.0`, `2.8` or `3.0`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for anything that is not a Kafka version.
    pub fn parse(version: &str) -> Result<Self> {
        let bad = |why: &str| Error::config("message.format.version", version, why);
        let trimmed = version.trim();
        let (numbers, iv) = match trimmed.split_once('-') {
            Some((n, iv)) => (n, Some(iv)),
            None => (trimmed, None),
        };
        if let Some(iv) = iv {
            let ok = iv
                .strip_prefix("IV")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if !ok {
                return Err(bad("expected a suffix like -IV0"));
            }
        }
        let parts: Vec<&str> = numbers.split('.').collect();
        if parts.len() < 2
            || parts.len() > 3
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(bad("expected a Kafka version such as 0.10.2, 2.8 or 3.0"));
        }
        let major: u32 = parts[0]
            .parse()
            .map_err(|_| bad("version number too large"))?;
        let minor: u32 = parts[1]
            .parse()
            .map_err(|_| bad("version number too large"))?;
        let magic = match (major, minor) {
            (0, 8) | (0, 9) => 0,
            (0, 10) => 1,
            (0, 11) => 2,
            (0, _) => return Err(bad("no such Kafka version")),
            (1..=4, _) => 2,
            _ => return Err(bad("no such Kafka version")),
        };
        Ok(MessageFormatVersion {
            version: trimmed.to_owned(),
            magic,
        })
    }

    /// The version string as given.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The magic byte batches are stored with: 0, 1 or 2.
    pub fn magic(&self) -> u8 {
        self.magic
    }
}

/// `cleanup.policy`: `delete`, `compact` or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CleanupPolicy {
    /// Segments are deleted by `retention.ms` / `retention.bytes`.
    pub delete: bool,
    /// The log is compacted: appends must carry keys, and [`crate::Log::compact`] cleans it.
    pub compact: bool,
}

impl CleanupPolicy {
    fn name(self) -> String {
        match (self.delete, self.compact) {
            (true, true) => "delete,compact".into(),
            (false, true) => "compact".into(),
            _ => "delete".into(),
        }
    }
}

/// `min.cleanable.dirty.ratio`: a ratio between 0 and 1 (never NaN, so it is `Eq`).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct DirtyRatio(f64);

impl Eq for DirtyRatio {}

impl DirtyRatio {
    /// The ratio, `None` outside 0..=1 or NaN.
    pub fn new(ratio: f64) -> Option<Self> {
        (0.0..=1.0).contains(&ratio).then_some(DirtyRatio(ratio))
    }

    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// The names [`LogConfig`] knows, in the order [`LogConfig::to_pairs`] lists them.
pub const CONFIG_NAMES: [&str; 26] = [
    "segment.bytes",
    "segment.ms",
    "segment.index.bytes",
    "index.interval.bytes",
    "max.message.bytes",
    "message.timestamp.type",
    "message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms",
    "compression.type",
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.zstd.level",
    "message.format.version",
    "retention.ms",
    "retention.bytes",
    "cleanup.policy",
    "flush.messages",
    "flush.ms",
    "producer.id.expiration.ms",
    "producer.id.expiration.check.interval.ms",
    "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms",
    "max.compaction.lag.ms",
    "delete.retention.ms",
    "log.cleaner.dedupe.buffer.size",
    "log.cleaner.io.buffer.size",
];

/// The configuration of one log, with Kafka's topic configuration names and defaults (see the
/// module documentation for the table).
///
/// # Examples
///
/// ```
/// use krecords_log::LogConfig;
/// let config = LogConfig::from_pairs([("segment.bytes", "1048576"), ("message.format.version", "0.10.2")]).unwrap();
/// assert_eq!(config.segment_bytes, 1 << 20);
/// assert_eq!(config.record_magic(), 1);
/// assert_eq!(LogConfig::from_pairs([("segment.ms", "0")]).unwrap_err().kafka_name(), "INVALID_CONFIG");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// `segment.bytes`: roll when a segment would grow past this.
    pub segment_bytes: i32,
    /// `segment.ms`: roll when the first and the newest timestamps of a segment are this far apart.
    pub segment_ms: i64,
    /// `segment.index.bytes`: preallocated size of the offset and time indexes; a full index
    /// rolls the segment.
    pub segment_index_bytes: i32,
    /// `index.interval.bytes`: bytes of batches between two index entries.
    pub index_interval_bytes: i32,
    /// `max.message.bytes`: largest batch, its 12-byte prefix included.
    pub max_message_bytes: i32,
    /// `message.timestamp.type`: CreateTime or LogAppendTime.
    pub message_timestamp_type: TimestampType,
    /// `message.timestamp.before.max.ms`: how far in the past a CreateTime timestamp may be.
    pub message_timestamp_before_max_ms: i64,
    /// `message.timestamp.after.max.ms`: how far in the future a CreateTime timestamp may be.
    pub message_timestamp_after_max_ms: i64,
    /// `compression.type`.
    pub compression_type: CompressionType,
    /// `compression.gzip.level` (-1: zlib's default).
    pub compression_gzip_level: i32,
    /// `compression.lz4.level`.
    pub compression_lz4_level: i32,
    /// `compression.zstd.level`.
    pub compression_zstd_level: i32,
    /// `message.format.version`.
    pub message_format_version: MessageFormatVersion,
    /// `retention.ms` (-1: keep forever).
    pub retention_ms: i64,
    /// `retention.bytes` (negative: no limit).
    pub retention_bytes: i64,
    /// `cleanup.policy`.
    pub cleanup_policy: CleanupPolicy,
    /// `flush.messages`: fsync after this many appended records.
    pub flush_messages: i64,
    /// `flush.ms`: fsync when the last fsync is this old (checked on append).
    pub flush_ms: i64,
    /// `producer.id.expiration.ms`: how long after its last write a producer id without an open
    /// transaction is forgotten.
    pub producer_id_expiration_ms: i64,
    /// `producer.id.expiration.check.interval.ms`: how often (checked on append) expired producer
    /// ids are removed.
    pub producer_id_expiration_check_interval_ms: i64,
    /// `min.cleanable.dirty.ratio`: a compacted log is cleaned once the dirty part is more than
    /// this share of the cleanable bytes.
    pub min_cleanable_dirty_ratio: DirtyRatio,
    /// `min.compaction.lag.ms`: segments whose newest timestamp is younger are not cleaned.
    pub min_compaction_lag_ms: i64,
    /// `max.compaction.lag.ms`: a log whose oldest dirty segment started this long ago is cleaned
    /// whatever its dirty ratio.
    pub max_compaction_lag_ms: i64,
    /// `delete.retention.ms`: how long tombstones (and markers of emptied transactions) are kept
    /// after the cleaner first keeps them (KIP-534's delete horizon).
    pub delete_retention_ms: i64,
    /// `log.cleaner.dedupe.buffer.size`: memory of the cleaner's offset map.
    pub cleaner_dedupe_buffer_size: i64,
    /// `log.cleaner.io.buffer.size`: memory of the cleaner's read and write buffers.
    pub cleaner_io_buffer_size: i64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: 1 << 30,
            segment_ms: 7 * 24 * 60 * 60 * 1000,
            segment_index_bytes: 10 << 20,
            index_interval_bytes: 4096,
            max_message_bytes: (1 << 20) + 12,
            message_timestamp_type: TimestampType::CreateTime,
            message_timestamp_before_max_ms: i64::MAX,
            message_timestamp_after_max_ms: 3_600_000,
            compression_type: CompressionType::Producer,
            compression_gzip_level: -1,
            compression_lz4_level: 9,
            compression_zstd_level: 3,
            message_format_version: MessageFormatVersion {
                version: "3.0".into(),
                magic: 2,
            },
            retention_ms: 7 * 24 * 60 * 60 * 1000,
            retention_bytes: -1,
            cleanup_policy: CleanupPolicy {
                delete: true,
                compact: false,
            },
            flush_messages: i64::MAX,
            flush_ms: i64::MAX,
            producer_id_expiration_ms: 86_400_000,
            producer_id_expiration_check_interval_ms: 600_000,
            min_cleanable_dirty_ratio: DirtyRatio(0.5),
            min_compaction_lag_ms: 0,
            max_compaction_lag_ms: i64::MAX,
            delete_retention_ms: 86_400_000,
            cleaner_dedupe_buffer_size: 128 << 20,
            cleaner_io_buffer_size: 512 << 10,
        }
    }
}

fn parse_long(name: &str, value: &str, min: i64, max: i64) -> Result<i64> {
    let v: i64 = value
        .trim()
        .parse()
        .map_err(|_| Error::config(name, value, "expected an integer"))?;
    if v < min || v > max {
        let range = if max == i64::MAX {
            format!("at least {min}")
        } else {
            format!("between {min} and {max}")
        };
        return Err(Error::config(name, value, format!("value must be {range}")));
    }
    Ok(v)
}

/// A ratio as Java's `Double.toString` prints the usual ones (`0.5`, `1.0`, `0.0`).
fn format_ratio(r: f64) -> String {
    if r.fract() == 0.0 {
        format!("{r:.1}")
    } else {
        r.to_string()
    }
}

fn parse_int(name: &str, value: &str, min: i32, max: i32) -> Result<i32> {
    let v = parse_long(name, value, i64::from(min), i64::from(max))?;
    Ok(v as i32)
}

impl LogConfig {
    /// The defaults with `pairs` applied, then checked as a whole.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for an unknown name, a bad value, or a bad combination.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut config = LogConfig::default();
        for (name, value) in pairs {
            config.set(name, value)?;
        }
        config.validate()?;
        Ok(config)
    }

    /// Splits a `NAME=VALUE` argument as `krec log create --config` takes it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] without a `=`.
    pub fn parse_assignment(arg: &str) -> Result<(&str, &str)> {
        match arg.split_once('=') {
            Some((name, value)) => Ok((name.trim(), value)),
            None => Err(Error::config(arg, "", "expected NAME=VALUE")),
        }
    }

    /// Sets one configuration by its Kafka name. Combinations are checked by
    /// [`LogConfig::validate`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for an unknown name or a value out of Kafka's bounds.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        match name {
            "segment.bytes" => self.segment_bytes = parse_int(name, value, 14, i32::MAX)?,
            "segment.ms" => self.segment_ms = parse_long(name, value, 1, i64::MAX)?,
            "segment.index.bytes" => {
                self.segment_index_bytes = parse_int(name, value, 12, i32::MAX)?;
            }
            "index.interval.bytes" => {
                self.index_interval_bytes = parse_int(name, value, 0, i32::MAX)?;
            }
            "max.message.bytes" => self.max_message_bytes = parse_int(name, value, 0, i32::MAX)?,
            "message.timestamp.type" => {
                self.message_timestamp_type = match value.trim() {
                    "CreateTime" => TimestampType::CreateTime,
                    "LogAppendTime" => TimestampType::LogAppendTime,
                    _ => {
                        return Err(Error::config(
                            name,
                            value,
                            "expected CreateTime or LogAppendTime",
                        ))
                    }
                }
            }
            "message.timestamp.before.max.ms" => {
                self.message_timestamp_before_max_ms = parse_long(name, value, 0, i64::MAX)?;
            }
            "message.timestamp.after.max.ms" => {
                self.message_timestamp_after_max_ms = parse_long(name, value, 0, i64::MAX)?;
            }
            "compression.type" => {
                self.compression_type =
                    CompressionType::from_name(value.trim()).ok_or_else(|| {
                        Error::config(
                            name,
                            value,
                            "expected uncompressed, gzip, snappy, lz4, zstd or producer",
                        )
                    })?;
            }
            "compression.gzip.level" => {
                let level = parse_int(name, value, -1, 9)?;
                if level == 0 {
                    return Err(Error::config(
                        name,
                        value,
                        "value must be -1 or between 1 and 9",
                    ));
                }
                self.compression_gzip_level = level;
            }
            "compression.lz4.level" => self.compression_lz4_level = parse_int(name, value, 1, 17)?,
            "compression.zstd.level" => {
                self.compression_zstd_level = parse_int(name, value, -131_072, 22)?;
            }
            "message.format.version" => {
                self.message_format_version = MessageFormatVersion::parse(value)?;
            }
            "retention.ms" => self.retention_ms = parse_long(name, value, -1, i64::MAX)?,
            "retention.bytes" => {
                self.retention_bytes = parse_long(name, value, i64::MIN, i64::MAX)?
            }
            "cleanup.policy" => {
                let mut policy = CleanupPolicy {
                    delete: false,
                    compact: false,
                };
                for item in value.split(',').map(str::trim) {
                    let slot = match item.to_ascii_lowercase().as_str() {
                        "delete" => &mut policy.delete,
                        "compact" => &mut policy.compact,
                        _ => {
                            return Err(Error::config(
                                name,
                                value,
                                "expected delete, compact or both",
                            ))
                        }
                    };
                    if *slot {
                        return Err(Error::config(name, value, "duplicate policy"));
                    }
                    *slot = true;
                }
                self.cleanup_policy = policy;
            }
            "flush.messages" => self.flush_messages = parse_long(name, value, 1, i64::MAX)?,
            "flush.ms" => self.flush_ms = parse_long(name, value, 0, i64::MAX)?,
            "producer.id.expiration.ms" => {
                self.producer_id_expiration_ms = parse_long(name, value, 1, i64::from(i32::MAX))?;
            }
            "producer.id.expiration.check.interval.ms" => {
                self.producer_id_expiration_check_interval_ms =
                    parse_long(name, value, 1, i64::from(i32::MAX))?;
            }
            "min.cleanable.dirty.ratio" => {
                let ratio: f64 = value
                    .trim()
                    .parse()
                    .map_err(|_| Error::config(name, value, "expected a number"))?;
                self.min_cleanable_dirty_ratio = DirtyRatio::new(ratio)
                    .ok_or_else(|| Error::config(name, value, "value must be between 0 and 1"))?;
            }
            "min.compaction.lag.ms" => {
                self.min_compaction_lag_ms = parse_long(name, value, 0, i64::MAX)?;
            }
            "max.compaction.lag.ms" => {
                self.max_compaction_lag_ms = parse_long(name, value, 1, i64::MAX)?;
            }
            "delete.retention.ms" => {
                self.delete_retention_ms = parse_long(name, value, 0, i64::MAX)?
            }
            "log.cleaner.dedupe.buffer.size" => {
                self.cleaner_dedupe_buffer_size = parse_long(name, value, 48, i64::MAX)?;
            }
            "log.cleaner.io.buffer.size" => {
                self.cleaner_io_buffer_size = parse_long(name, value, 0, i64::from(i32::MAX))?;
            }
            _ => return Err(Error::config(name, value, "unknown configuration")),
        }
        Ok(())
    }

    /// The value of one configuration as a string, `None` for an unknown name.
    pub fn get(&self, name: &str) -> Option<String> {
        Some(match name {
            "segment.bytes" => self.segment_bytes.to_string(),
            "segment.ms" => self.segment_ms.to_string(),
            "segment.index.bytes" => self.segment_index_bytes.to_string(),
            "index.interval.bytes" => self.index_interval_bytes.to_string(),
            "max.message.bytes" => self.max_message_bytes.to_string(),
            "message.timestamp.type" => self.message_timestamp_type.kafka_name().to_owned(),
            "message.timestamp.before.max.ms" => self.message_timestamp_before_max_ms.to_string(),
            "message.timestamp.after.max.ms" => self.message_timestamp_after_max_ms.to_string(),
            "compression.type" => self.compression_type.name().to_owned(),
            "compression.gzip.level" => self.compression_gzip_level.to_string(),
            "compression.lz4.level" => self.compression_lz4_level.to_string(),
            "compression.zstd.level" => self.compression_zstd_level.to_string(),
            "message.format.version" => self.message_format_version.version().to_owned(),
            "retention.ms" => self.retention_ms.to_string(),
            "retention.bytes" => self.retention_bytes.to_string(),
            "cleanup.policy" => self.cleanup_policy.name(),
            "flush.messages" => self.flush_messages.to_string(),
            "flush.ms" => self.flush_ms.to_string(),
            "producer.id.expiration.ms" => self.producer_id_expiration_ms.to_string(),
            "producer.id.expiration.check.interval.ms" => {
                self.producer_id_expiration_check_interval_ms.to_string()
            }
            "min.cleanable.dirty.ratio" => format_ratio(self.min_cleanable_dirty_ratio.get()),
            "min.compaction.lag.ms" => self.min_compaction_lag_ms.to_string(),
            "max.compaction.lag.ms" => self.max_compaction_lag_ms.to_string(),
            "delete.retention.ms" => self.delete_retention_ms.to_string(),
            "log.cleaner.dedupe.buffer.size" => self.cleaner_dedupe_buffer_size.to_string(),
            "log.cleaner.io.buffer.size" => self.cleaner_io_buffer_size.to_string(),
            _ => return None,
        })
    }

    /// Every configuration with its value, in [`CONFIG_NAMES`] order.
    pub fn to_pairs(&self) -> Vec<(&'static str, String)> {
        CONFIG_NAMES
            .iter()
            .map(|&n| (n, self.get(n).unwrap_or_default()))
            .collect()
    }

    /// Checks combinations: zstd needs message format v2; `min.compaction.lag.ms` may not exceed
    /// `max.compaction.lag.ms`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] naming the offending setting.
    pub fn validate(&self) -> Result<()> {
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms {
            return Err(Error::config(
                "min.compaction.lag.ms",
                self.min_compaction_lag_ms.to_string(),
                format!(
                    "conflicts with max.compaction.lag.ms ({}): the minimum lag may not exceed the maximum",
                    self.max_compaction_lag_ms
                ),
            ));
        }
        if self.compression_type == CompressionType::Zstd && self.record_magic() < 2 {
            return Err(Error::config(
                "compression.type",
                "zstd",
                format!(
                    "zstd needs message.format.version 0.11.0 or later, not {}",
                    self.message_format_version.version()
                ),
            ));
        }
        Ok(())
    }

    /// The age at which the active segment rolls (Kafka's `LogConfig.maxSegmentMs`):
    /// `segment.ms`, or `max.compaction.lag.ms` when that is smaller on a compacted log, so that
    /// no record stays in the never-cleaned active segment past the maximum lag (KIP-354).
    pub fn max_segment_ms(&self) -> i64 {
        if self.cleanup_policy.compact && self.max_compaction_lag_ms > 0 {
            self.max_compaction_lag_ms.min(self.segment_ms)
        } else {
            self.segment_ms
        }
    }

    /// The magic byte batches are stored in (from `message.format.version`).
    pub fn record_magic(&self) -> u8 {
        self.message_format_version.magic()
    }

    /// The codec and level a batch is stored with when the producer used `source`
    /// (Kafka's `BrokerCompressionType.targetCompression`).
    pub fn target_compression(&self, source: Compression) -> (Compression, Option<i32>) {
        let codec = self.compression_type.codec().unwrap_or(source);
        let level = match codec {
            Compression::Gzip => Some(self.compression_gzip_level).filter(|&l| l > 0),
            Compression::Lz4 => Some(self.compression_lz4_level),
            Compression::Zstd => Some(self.compression_zstd_level),
            Compression::None | Compression::Snappy => None,
        };
        (codec, level)
    }

    /// The configuration as the JSON object stored in `krec-log.json` (numbers as numbers).
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        for (name, value) in self.to_pairs() {
            let v = match value.parse::<i64>() {
                Ok(n) if name != "message.format.version" => Value::from(n),
                _ if name == "min.cleanable.dirty.ratio" => {
                    Value::from(self.min_cleanable_dirty_ratio.get())
                }
                _ => Value::from(value),
            };
            map.insert(name.to_owned(), v);
        }
        Value::Object(map)
    }

    /// Reads a configuration from the JSON object of `krec-log.json`; names it lacks keep their
    /// defaults.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for a value that is not a string or number, an unknown name or a
    /// bad value.
    pub fn from_json(json: &Value) -> Result<Self> {
        let Some(map) = json.as_object() else {
            return Err(Error::config(
                "krec-log.json",
                json.to_string(),
                "expected a JSON object",
            ));
        };
        let mut pairs = Vec::with_capacity(map.len());
        for (name, value) in map {
            let value = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => {
                    return Err(Error::config(
                        name,
                        other.to_string(),
                        "expected a string or number",
                    ))
                }
            };
            pairs.push((name.as_str(), value));
        }
        let mut config = LogConfig::default();
        for (name, value) in &pairs {
            config.set(name, value)?;
        }
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_kafkas() {
        let c = LogConfig::default();
        assert_eq!(c.segment_bytes, 1_073_741_824);
        assert_eq!(c.segment_ms, 604_800_000);
        assert_eq!(c.segment_index_bytes, 10_485_760);
        assert_eq!(c.index_interval_bytes, 4096);
        assert_eq!(c.max_message_bytes, 1_048_588);
        assert_eq!(c.message_timestamp_type, TimestampType::CreateTime);
        assert_eq!(c.message_timestamp_before_max_ms, i64::MAX);
        assert_eq!(c.message_timestamp_after_max_ms, 3_600_000);
        assert_eq!(c.compression_type, CompressionType::Producer);
        assert_eq!(c.record_magic(), 2);
        assert_eq!(c.retention_ms, 604_800_000);
        assert_eq!(c.retention_bytes, -1);
        assert!(c.cleanup_policy.delete && !c.cleanup_policy.compact);
        assert_eq!(c.flush_messages, i64::MAX);
        assert_eq!(c.flush_ms, i64::MAX);
        assert_eq!(c.producer_id_expiration_ms, 86_400_000);
        assert_eq!(c.producer_id_expiration_check_interval_ms, 600_000);
        assert_eq!(c.min_cleanable_dirty_ratio.get(), 0.5);
        assert_eq!(c.min_compaction_lag_ms, 0);
        assert_eq!(c.max_compaction_lag_ms, i64::MAX);
        assert_eq!(c.delete_retention_ms, 86_400_000);
        assert_eq!(c.cleaner_dedupe_buffer_size, 134_217_728);
        assert_eq!(c.cleaner_io_buffer_size, 524_288);
        assert_eq!(c.to_pairs().len(), CONFIG_NAMES.len());
    }

    #[test]
    fn compaction_settings() {
        let c = LogConfig::from_pairs([
            ("cleanup.policy", "compact"),
            ("min.cleanable.dirty.ratio", "0.25"),
            ("min.compaction.lag.ms", "1000"),
            ("max.compaction.lag.ms", "5000"),
            ("delete.retention.ms", "0"),
            ("log.cleaner.dedupe.buffer.size", "4800"),
            ("log.cleaner.io.buffer.size", "1024"),
        ])
        .unwrap();
        assert_eq!(c.get("min.cleanable.dirty.ratio").unwrap(), "0.25");
        let json = c.to_json();
        assert_eq!(json["min.cleanable.dirty.ratio"], 0.25);
        assert_eq!(json["max.compaction.lag.ms"], 5000);
        assert_eq!(LogConfig::from_json(&json).unwrap(), c);
        let d = LogConfig::default();
        assert_eq!(d.get("min.cleanable.dirty.ratio").unwrap(), "0.5");
        assert_eq!(LogConfig::from_json(&d.to_json()).unwrap(), d);
        let one = LogConfig::from_pairs([("min.cleanable.dirty.ratio", "1")]).unwrap();
        assert_eq!(one.get("min.cleanable.dirty.ratio").unwrap(), "1.0");
        assert_eq!(LogConfig::from_json(&one.to_json()).unwrap(), one);
        for (n, v) in [
            ("min.cleanable.dirty.ratio", "1.5"),
            ("min.cleanable.dirty.ratio", "-0.1"),
            ("min.cleanable.dirty.ratio", "NaN"),
            ("min.cleanable.dirty.ratio", "x"),
            ("min.compaction.lag.ms", "-1"),
            ("max.compaction.lag.ms", "0"),
            ("delete.retention.ms", "-1"),
            ("log.cleaner.dedupe.buffer.size", "47"),
            ("log.cleaner.io.buffer.size", "-1"),
        ] {
            let e = LogConfig::from_pairs([(n, v)]).unwrap_err();
            assert_eq!(e.kafka_name(), "INVALID_CONFIG", "{n}={v}");
        }
        let e = LogConfig::from_pairs([
            ("min.compaction.lag.ms", "10"),
            ("max.compaction.lag.ms", "5"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("max.compaction.lag.ms"), "{e}");
        let lagged = LogConfig::from_pairs([("max.compaction.lag.ms", "1000")]).unwrap();
        assert_eq!(lagged.max_segment_ms(), 604_800_000);
        let compacted = LogConfig::from_pairs([
            ("max.compaction.lag.ms", "1000"),
            ("cleanup.policy", "compact"),
        ])
        .unwrap();
        assert_eq!(compacted.max_segment_ms(), 1000);
    }

    #[test]
    fn message_format_versions_map_to_magic() {
        for (v, m) in [
            ("0.8.0", 0),
            ("0.8.2", 0),
            ("0.9.0", 0),
            ("0.10.0", 1),
            ("0.10.0-IV0", 1),
            ("0.10.2", 1),
            ("0.11.0", 2),
            ("1.0", 2),
            ("2.8", 2),
            ("3.0", 2),
            ("3.0-IV1", 2),
        ] {
            assert_eq!(MessageFormatVersion::parse(v).unwrap().magic(), m, "{v}");
        }
        for bad in [
            "",
            "0.7",
            "3",
            "x.y",
            "0.10.0-IV",
            "9.0",
            "1.2.3.4",
            "0.10.0-XX1",
        ] {
            assert!(MessageFormatVersion::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rejects_out_of_bounds_and_unknown() {
        for (n, v) in [
            ("segment.bytes", "13"),
            ("segment.bytes", "2147483648"),
            ("segment.ms", "0"),
            ("segment.index.bytes", "8"),
            ("index.interval.bytes", "-1"),
            ("max.message.bytes", "x"),
            ("message.timestamp.type", "createtime"),
            ("message.timestamp.after.max.ms", "-1"),
            ("compression.type", "brotli"),
            ("compression.gzip.level", "0"),
            ("compression.lz4.level", "18"),
            ("compression.zstd.level", "23"),
            ("retention.ms", "-2"),
            ("cleanup.policy", "delete,delete"),
            ("cleanup.policy", "archive"),
            ("flush.messages", "0"),
            ("flush.ms", "-1"),
            ("producer.id.expiration.ms", "0"),
            ("producer.id.expiration.ms", "2147483648"),
            ("producer.id.expiration.check.interval.ms", "0"),
            ("transactional.id.expiration.ms", "604800000"),
            ("no.such.config", "1"),
        ] {
            let e = LogConfig::from_pairs([(n, v)]).unwrap_err();
            assert_eq!(e.kafka_name(), "INVALID_CONFIG", "{n}={v}");
        }
        let e = LogConfig::from_pairs([
            ("compression.type", "zstd"),
            ("message.format.version", "0.10.2"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("zstd needs"), "{e}");
    }

    #[test]
    fn json_round_trip() {
        let c = LogConfig::from_pairs([
            ("segment.bytes", "4096"),
            ("message.timestamp.type", "LogAppendTime"),
            ("cleanup.policy", "compact,delete"),
            ("message.format.version", "0.10.2"),
            ("compression.type", "gzip"),
        ])
        .unwrap();
        let json = c.to_json();
        assert_eq!(json["segment.bytes"], 4096);
        assert_eq!(json["message.format.version"], "0.10.2");
        assert_eq!(json["cleanup.policy"], "delete,compact");
        assert_eq!(LogConfig::from_json(&json).unwrap(), c);
        assert_eq!(
            c.target_compression(Compression::Snappy),
            (Compression::Gzip, None)
        );
        let p = LogConfig::default();
        assert_eq!(
            p.target_compression(Compression::Zstd),
            (Compression::Zstd, Some(3))
        );
        assert_eq!(
            LogConfig::parse_assignment("a.b=c=d").unwrap(),
            ("a.b", "c=d")
        );
        assert!(LogConfig::parse_assignment("nope").is_err());
    }
}
