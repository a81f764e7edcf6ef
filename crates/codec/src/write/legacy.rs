//! The v0/v1 message builder: plain messages, or one compressed wrapper around inner messages.

use super::{check_append, len_i32, NewRecord};
use crate::layout::legacy as layout;
use crate::layout::LOG_OVERHEAD;
use crate::{Compression, Error, Result, TimestampType};

/// Builds v0/v1 entries as Kafka's `MemoryRecordsBuilder` does: uncompressed, one entry per
/// record; compressed, one wrapper whose value holds the inner messages.
///
/// For a v1 wrapper the inner offsets are relative (0, 1, ...) and the wrapper offset is the
/// last absolute offset; for v0 inner offsets are absolute. The wrapper timestamp is the append
/// time under LogAppendTime, else the max inner timestamp. Under LogAppendTime every message's
/// timestamp is replaced by the append time.
///
/// As for [`V2Builder`](super::V2Builder), the configuration is fixed by the first append:
/// messages are written as they are appended (plain entries with absolute offsets, or inner
/// messages with relative ones, with the timestamp type's attributes), so
/// [`compression`](LegacyBuilder::compression) after an append returns
/// [`Error::ConfigAfterAppend`], and [`timestamp_type`](LegacyBuilder::timestamp_type) after an
/// append is not applied and makes every later append and finish return it.
///
/// ```
/// use krecords_codec::write::{LegacyBuilder, NewRecord};
/// use krecords_codec::{Compression, Error};
/// let mut b = LegacyBuilder::new(1, 100).unwrap();
/// b.append(&NewRecord::new(1714000000000, None, Some(b"hello"))).unwrap();
/// let late = b.compression(Compression::Gzip, None);
/// assert_eq!(late.err(), Some(Error::ConfigAfterAppend { setter: "compression" }));
/// ```
#[derive(Debug, Clone)]
pub struct LegacyBuilder {
    magic: u8,
    base_offset: i64,
    compression: Compression,
    level: Option<i32>,
    timestamp_type: TimestampType,
    log_append_time: i64,
    /// Uncompressed: the finished entries. Compressed: the inner messages.
    buf: Vec<u8>,
    count: usize,
    last_offset: Option<i64>,
    max_timestamp: i64,
    /// A setter called after a record was appended: the builder refuses to go on.
    late_setter: Option<&'static str>,
}

impl LegacyBuilder {
    /// A builder for `magic` 0 or 1 starting at `base_offset`, uncompressed, CreateTime (v1).
    ///
    /// # Errors
    ///
    /// [`Error::Unencodable`] for a magic other than 0 or 1.
    pub fn new(magic: u8, base_offset: i64) -> Result<Self> {
        if magic > 1 {
            return Err(Error::Unencodable {
                reason: format!("legacy builder writes magic 0 or 1, not {magic}"),
            });
        }
        Ok(LegacyBuilder {
            magic,
            base_offset,
            compression: Compression::None,
            level: None,
            timestamp_type: if magic == 0 {
                TimestampType::NoTimestamp
            } else {
                TimestampType::CreateTime
            },
            log_append_time: -1,
            buf: Vec::new(),
            count: 0,
            last_offset: None,
            max_timestamp: -1,
            late_setter: None,
        })
    }

    /// The error for a builder a setter was called on after an append.
    fn check_configured(&self) -> Result<()> {
        match self.late_setter {
            None => Ok(()),
            Some(setter) => Err(Error::ConfigAfterAppend { setter }),
        }
    }

    /// Sets the codec and level. Before the first append only.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedCompression`] for zstd, which v0/v1 cannot carry;
    /// [`Error::ConfigAfterAppend`] once a record was appended (inner messages and plain entries
    /// carry different offsets).
    pub fn compression(mut self, compression: Compression, level: Option<i32>) -> Result<Self> {
        // An earlier late setter is the one reported.
        self.check_configured()?;
        if self.count > 0 {
            return Err(Error::ConfigAfterAppend {
                setter: "compression",
            });
        }
        if !compression.allowed_in(self.magic) {
            return Err(Error::UnsupportedCompression {
                at: 0,
                compression,
                magic: self.magic,
            });
        }
        self.compression = compression;
        self.level = level;
        Ok(self)
    }

    /// Sets the timestamp type (v1; ignored for v0) and the append time used under
    /// LogAppendTime. Before the first append only: afterwards the setting is not applied and
    /// every later append and finish return [`Error::ConfigAfterAppend`].
    pub fn timestamp_type(mut self, timestamp_type: TimestampType, log_append_time: i64) -> Self {
        if self.count > 0 {
            self.late_setter.get_or_insert("timestamp_type");
            return self;
        }
        if self.magic == 1 && timestamp_type != TimestampType::NoTimestamp {
            self.timestamp_type = timestamp_type;
        }
        self.log_append_time = log_append_time;
        self
    }

    /// Records appended so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The offset the next [`LegacyBuilder::append`] uses (after `i64::MAX` it wraps, and the
    /// append is refused as not increasing).
    pub fn next_offset(&self) -> i64 {
        self.last_offset
            .map_or(self.base_offset, |o| o.wrapping_add(1))
    }

    /// Appends a record at the next offset and returns the offset.
    ///
    /// # Errors
    ///
    /// Headers (v0/v1 cannot carry them), a negative timestamp other than -1, a key or value
    /// over `i32::MAX` bytes; [`Error::ConfigAfterAppend`] after a late setter.
    pub fn append(&mut self, record: &NewRecord<'_>) -> Result<i64> {
        let offset = self.next_offset();
        self.append_with_offset(offset, record)?;
        Ok(offset)
    }

    /// Appends a record at `offset` (above the previous one).
    ///
    /// # Errors
    ///
    /// As [`LegacyBuilder::append`], plus an offset that does not increase.
    pub fn append_with_offset(&mut self, offset: i64, record: &NewRecord<'_>) -> Result<()> {
        self.check_configured()?;
        check_append(self.base_offset, self.last_offset, offset, record.timestamp)?;
        if !record.headers.is_empty() {
            return Err(Error::Unencodable {
                reason: format!("magic {} does not support record headers", self.magic),
            });
        }
        let timestamp = if self.timestamp_type == TimestampType::LogAppendTime {
            self.log_append_time
        } else {
            record.timestamp
        };
        let inner_offset = if self.magic > 0 && self.compression != Compression::None {
            offset - self.base_offset
        } else {
            offset
        };
        let attributes = self.attributes(Compression::None);
        write_message(
            &mut self.buf,
            inner_offset,
            self.magic,
            attributes,
            timestamp,
            record.key,
            record.value,
        )?;
        self.count += 1;
        self.last_offset = Some(offset);
        if self.magic > 0 && timestamp > self.max_timestamp {
            self.max_timestamp = timestamp;
        }
        Ok(())
    }

    fn attributes(&self, compression: Compression) -> u8 {
        let mut a = compression.id();
        if self.magic > 0 && self.timestamp_type == TimestampType::LogAppendTime {
            a |= layout::TIMESTAMP_TYPE_MASK;
        }
        a
    }

    /// Finishes and returns the entries (nothing when no record was appended).
    ///
    /// # Errors
    ///
    /// A bad compression level, a wrapper over `i32::MAX` bytes, or [`Error::ConfigAfterAppend`]
    /// after a late setter.
    pub fn finish(self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.finish_into(&mut out)?;
        Ok(out)
    }

    /// As [`LegacyBuilder::finish`], appending to `out`.
    ///
    /// # Errors
    ///
    /// As [`LegacyBuilder::finish`].
    pub fn finish_into(self, out: &mut Vec<u8>) -> Result<()> {
        self.check_configured()?;
        if self.count == 0 {
            return Ok(());
        }
        if self.compression == Compression::None {
            out.extend_from_slice(&self.buf);
            return Ok(());
        }
        let mut compressed = Vec::new();
        crate::compression::compress(
            self.compression,
            self.level,
            self.magic,
            &self.buf,
            &mut compressed,
        )?;
        let timestamp = if self.timestamp_type == TimestampType::LogAppendTime {
            self.log_append_time
        } else {
            self.max_timestamp
        };
        write_message(
            out,
            self.last_offset.unwrap_or(self.base_offset),
            self.magic,
            self.attributes(self.compression),
            timestamp,
            None,
            Some(&compressed),
        )
    }
}

/// Appends one message with its offset and size prefix.
pub(crate) fn write_message(
    out: &mut Vec<u8>,
    offset: i64,
    magic: u8,
    attributes: u8,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<()> {
    let key_len = key.map_or(0, <[u8]>::len);
    let value_len = value.map_or(0, <[u8]>::len);
    let overhead = if magic == 0 { 14 } else { 22 };
    let size = len_i32(overhead + key_len + value_len, "message")?;
    let start = out.len();
    out.reserve(LOG_OVERHEAD + size as usize);
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&size.to_be_bytes());
    out.extend_from_slice(&[0; 4]); // crc, filled below
    out.push(magic);
    out.push(attributes);
    if magic > 0 {
        out.extend_from_slice(&timestamp.to_be_bytes());
    }
    for field in [key, value] {
        match field {
            Some(b) => {
                out.extend_from_slice(&len_i32(b.len(), "field")?.to_be_bytes());
                out.extend_from_slice(b);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    let crc = crate::crc::crc32(out.get(start + layout::MAGIC_OFFSET..).unwrap_or(&[]));
    if let Some(dst) = out.get_mut(start + layout::CRC_OFFSET..start + layout::CRC_OFFSET + 4) {
        dst.copy_from_slice(&crc.to_be_bytes());
    }
    Ok(())
}
