//! Magic 0 and 1: single messages, and compressed wrappers around inner messages.
//!
//! The layout of a message is in [`layout::legacy`](crate::layout::legacy).
//!
//! Deep iteration of a compressed wrapper follows Kafka's `AbstractLegacyRecordBatch`: v0 inner
//! offsets are absolute; v1 inner offsets are relative and the wrapper carries the absolute offset
//! of the last inner message, except that a wrapper offset of 0 means the inner offsets are used
//! as they are. A v1 LogAppendTime wrapper's timestamp replaces every inner v1 timestamp. A
//! truncated inner tail ends iteration silently, as Kafka's `DataLogInputStream` does.

use super::bytes::{i32_at, i64_at, take, u32_at, u8_at};
use crate::layout::legacy::*;
use crate::layout::{LOG_OVERHEAD, MIN_ENTRY_SIZE};
use crate::{Compression, Error, Result, TimestampType};

/// A view of one v0/v1 message (the whole entry, offset and size prefix included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyBatch<'a> {
    /// The entry bytes, exactly `12 + size`.
    buf: &'a [u8],
    /// Absolute position of `buf[0]`.
    position: usize,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
    /// Bytes after the value that no field accounts for.
    trailing: usize,
}

impl<'a> LegacyBatch<'a> {
    /// Views `entry`, exactly one v0/v1 message with its 12-byte prefix. `position` is its
    /// absolute position.
    ///
    /// # Errors
    ///
    /// A size below the format's minimum, a magic other than 0/1, or a key or value length that
    /// runs past the message.
    pub fn new(entry: &'a [u8], position: usize) -> Result<Self> {
        let size = i32_at(entry, 8);
        let magic = u8_at(entry, MAGIC_OFFSET);
        if magic > 1 {
            return Err(Error::InvalidMagic {
                at: position.saturating_add(MAGIC_OFFSET),
                found: magic as i8,
            });
        }
        let min = if magic == 0 {
            MIN_ENTRY_SIZE
        } else {
            MIN_SIZE_V1
        };
        if size < min {
            return Err(Error::InvalidLength {
                at: position.saturating_add(8),
                what: "message size",
                expected: format!(">= {min} for magic {magic}"),
                found: i64::from(size),
            });
        }
        let buf = take(
            entry,
            0,
            (size as usize).saturating_add(LOG_OVERHEAD),
            position,
            "message",
        )?;
        let mut p = if magic == 0 {
            KEY_SIZE_OFFSET_V0
        } else {
            KEY_SIZE_OFFSET_V1
        };
        let key = read_sized(buf, &mut p, position, "message key")?;
        let value = read_sized(buf, &mut p, position, "message value")?;
        Ok(LegacyBatch {
            buf,
            position,
            key,
            value,
            trailing: buf.len().saturating_sub(p),
        })
    }

    /// The whole entry.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.buf
    }

    /// Absolute position of the entry.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The offset field: the message's offset, or for a compressed wrapper the offset of its last
    /// inner message (v1 with offset 0 excepted, see the module docs).
    pub fn offset(&self) -> i64 {
        i64_at(self.buf, 0)
    }

    /// The message size field (bytes after it).
    pub fn message_size(&self) -> i32 {
        i32_at(self.buf, 8)
    }

    /// The stored CRC-32.
    pub fn crc(&self) -> u32 {
        u32_at(self.buf, CRC_OFFSET)
    }

    /// CRC-32 of magic .. end.
    pub fn compute_crc(&self) -> u32 {
        crate::crc::crc32(self.buf.get(MAGIC_OFFSET..).unwrap_or(&[]))
    }

    /// Whether the stored CRC matches.
    pub fn is_crc_valid(&self) -> bool {
        self.crc() == self.compute_crc()
    }

    /// 0 or 1.
    pub fn magic(&self) -> u8 {
        u8_at(self.buf, MAGIC_OFFSET)
    }

    /// The attributes byte.
    pub fn attributes(&self) -> u8 {
        u8_at(self.buf, ATTRIBUTES_OFFSET)
    }

    /// The codec.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownCompression`] for ids 5..7.
    pub fn compression(&self) -> Result<Compression> {
        let id = self.attributes() & COMPRESSION_MASK;
        Compression::from_id(id).ok_or(Error::UnknownCompression {
            at: self.position.saturating_add(ATTRIBUTES_OFFSET),
            id,
        })
    }

    /// Whether the message is a compressed wrapper (any non-zero codec id).
    pub fn is_compressed(&self) -> bool {
        self.attributes() & COMPRESSION_MASK != 0
    }

    /// `NoTimestamp` for v0; CreateTime or LogAppendTime (attributes bit 3) for v1.
    pub fn timestamp_type(&self) -> TimestampType {
        timestamp_type(self.magic(), self.attributes())
    }

    /// The timestamp field, `None` for v0. For a LogAppendTime wrapper this is the append time,
    /// which applies to every inner message.
    pub fn timestamp(&self) -> Option<i64> {
        (self.magic() == 1).then(|| i64_at(self.buf, TIMESTAMP_OFFSET))
    }

    /// The key, `None` for null.
    pub fn key(&self) -> Option<&'a [u8]> {
        self.key
    }

    /// The value, `None` for null. For a wrapper: the compressed inner messages.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.value
    }

    /// Bytes after the value that no field accounts for (0 in well-formed data).
    pub fn trailing_bytes(&self) -> usize {
        self.trailing
    }

    /// The message as one record (shallow: a wrapper is returned as itself).
    pub fn as_record(&self) -> LegacyRecord<'a> {
        LegacyRecord {
            offset: self.offset(),
            timestamp: self.timestamp(),
            timestamp_type: self.timestamp_type(),
            magic: self.magic(),
            attributes: self.attributes(),
            crc: self.crc(),
            key: self.key,
            value: self.value,
            raw: self.buf,
            position: self.position,
        }
    }

    /// Iterates the records: the message itself when uncompressed, the inner messages (with
    /// absolute offsets) for a compressed wrapper, which decompresses into `scratch` (cleared
    /// first, at most `limit` bytes).
    ///
    /// This does **not** check the CRC of the message nor those of inner messages: a corrupted
    /// entry may yield wrong records without an error. Use [`Self::checked_records`] for data
    /// that may be corrupt.
    ///
    /// # Errors
    ///
    /// The errors Kafka raises before iterating a wrapper: zstd or an unknown codec, a null
    /// value, a decompression failure, no inner messages, an inner message that is itself
    /// compressed or has magic above 1, an undersized inner message, and a v1 wrapper offset below
    /// the last inner offset (and not 0).
    pub fn records<'b>(&self, scratch: &'b mut Vec<u8>, limit: usize) -> Result<LegacyRecords<'b>>
    where
        'a: 'b,
    {
        self.records_with(scratch, limit, false)
    }

    /// Iterates the records after checking the CRC, decompressing a wrapper once; each inner
    /// message's CRC is checked as it is read. This is what Kafka's consumer checks
    /// (`check.crcs`: `ensureValid()` on the entry and on every record).
    ///
    /// Like Kafka's reader it takes a message whose size field counts bytes after its value;
    /// [`Self::validate_with`] refuses those.
    ///
    /// # Errors
    ///
    /// [`Error::CrcMismatch`], and those of [`Self::records`]; an inner message whose CRC does
    /// not match is an [`Error::CrcMismatch`] in its place.
    pub fn checked_records<'b>(
        &self,
        scratch: &'b mut Vec<u8>,
        limit: usize,
    ) -> Result<LegacyRecords<'b>>
    where
        'a: 'b,
    {
        super::check_crc(self.position, self.crc(), self.compute_crc())?;
        self.records_with(scratch, limit, true)
    }

    /// Refuses bytes after the value that the message's fields do not account for (Kafka's
    /// reader takes them; [`Self::validate_with`] does not).
    fn check_no_trailing_bytes(&self) -> Result<()> {
        if self.trailing != 0 {
            return Err(Error::InvalidLength {
                at: self.position.saturating_add(8),
                what: "message size",
                expected: format!(
                    "{} (the bytes its fields take)",
                    (self.message_size() as usize).saturating_sub(self.trailing)
                ),
                found: i64::from(self.message_size()),
            });
        }
        Ok(())
    }

    /// [`Self::records`], checking every inner message's CRC when `check_crc`.
    fn records_with<'b>(
        &self,
        scratch: &'b mut Vec<u8>,
        limit: usize,
        check_crc: bool,
    ) -> Result<LegacyRecords<'b>>
    where
        'a: 'b,
    {
        let compression = self.compression()?;
        if compression == Compression::None {
            // An uncompressed message's CRC is the entry's, checked by `checked_records`.
            return Ok(LegacyRecords {
                inner: Inner::Single(Some(self.as_record())),
            });
        }
        if !compression.allowed_in(self.magic()) {
            return Err(Error::UnsupportedCompression {
                at: self.position,
                compression,
                magic: self.magic(),
            });
        }
        let value_at = self.value_position();
        let Some(value) = self.value else {
            return Err(Error::InvalidRecord {
                at: self.position,
                reason: format!(
                    "compressed message (magic {}) has a null value",
                    self.magic()
                ),
            });
        };
        scratch.clear();
        crate::compression::decompress(compression, self.magic(), value, limit, value_at, scratch)?;
        let data: &'b [u8] = scratch.as_slice();
        let scan = scan_inner(data, value_at)?;
        let absolute_base = if self.magic() == 1 {
            let wrapper = self.offset();
            if wrapper == 0 {
                Some(0)
            } else if wrapper < scan.last_offset {
                return Err(Error::InvalidRecord {
                    at: self.position,
                    reason: format!(
                        "wrapper offset {wrapper} is less than the last inner offset {} and not 0",
                        scan.last_offset
                    ),
                });
            } else {
                Some(wrapper.wrapping_sub(scan.last_offset))
            }
        } else {
            None
        };
        let wrapper_log_append_time = (self.timestamp_type() == TimestampType::LogAppendTime)
            .then(|| self.timestamp())
            .flatten();
        Ok(LegacyRecords {
            inner: Inner::Deep {
                data: data.get(..scan.end).unwrap_or(&[]),
                pos: 0,
                absolute_base,
                wrapper_log_append_time,
                wrapper_timestamp_type: self.timestamp_type(),
                value_at,
                check_crc_at: check_crc.then_some(self.position),
            },
        })
    }

    /// Absolute position of the value bytes (after the value length).
    fn value_position(&self) -> usize {
        let value_len = self.value.map_or(0, <[u8]>::len);
        self.position
            .saturating_add(self.buf.len())
            .saturating_sub(self.trailing)
            .saturating_sub(value_len)
    }

    /// Checks the CRC, the codec, that the fields fill the message exactly, and for a wrapper
    /// every inner message (decompressing into `scratch`, at most `limit` bytes) including its
    /// CRC. To read the records as well, iterate [`Self::checked_records`] instead: it checks the
    /// same and decompresses once.
    ///
    /// # Errors
    ///
    /// The first problem found.
    pub fn validate_with(&self, scratch: &mut Vec<u8>, limit: usize) -> Result<()> {
        self.check_no_trailing_bytes()?;
        for record in self.checked_records(scratch, limit)? {
            record?;
        }
        Ok(())
    }

    /// As [`Self::validate_with`] with a fresh buffer and the default limit.
    ///
    /// # Errors
    ///
    /// The first problem found.
    pub fn validate(&self) -> Result<()> {
        self.validate_with(&mut Vec::new(), crate::DEFAULT_DECOMPRESS_LIMIT)
    }
}

fn timestamp_type(magic: u8, attributes: u8) -> TimestampType {
    if magic == 0 {
        TimestampType::NoTimestamp
    } else if attributes & TIMESTAMP_TYPE_MASK != 0 {
        TimestampType::LogAppendTime
    } else {
        TimestampType::CreateTime
    }
}

/// Reads an i32 length (negative = null) and that many bytes.
fn read_sized<'a>(
    buf: &'a [u8],
    p: &mut usize,
    position: usize,
    what: &'static str,
) -> Result<Option<&'a [u8]>> {
    let len_bytes = take(buf, *p, 4, position, what)?;
    let len = i32_at(len_bytes, 0);
    *p = p.saturating_add(4);
    if len < 0 {
        return Ok(None);
    }
    let bytes = take(buf, *p, len as usize, position, what)?;
    *p = p.saturating_add(len as usize);
    Ok(Some(bytes))
}

struct Scan {
    last_offset: i64,
    /// End of the last complete inner message.
    end: usize,
}

/// Walks the inner messages of a decompressed wrapper, checking each as Kafka's deep iterator
/// does, without allocating.
fn scan_inner(data: &[u8], value_at: usize) -> Result<Scan> {
    let mut pos = 0;
    let mut count = 0usize;
    let mut last_offset = 0;
    while let Some(inner) = next_inner(data, pos, value_at)? {
        last_offset = inner.offset();
        pos = pos.saturating_add(inner.as_bytes().len());
        count = count.saturating_add(1);
    }
    if count == 0 {
        return Err(Error::InvalidRecord {
            at: value_at,
            reason: "compressed message set has no inner messages".into(),
        });
    }
    Ok(Scan {
        last_offset,
        end: pos,
    })
}

/// The inner message at `pos`, `None` at the end or at a truncated tail.
fn next_inner(data: &[u8], pos: usize, value_at: usize) -> Result<Option<LegacyBatch<'_>>> {
    let rest = data.get(pos..).unwrap_or(&[]);
    if rest.len() < LOG_OVERHEAD {
        return Ok(None);
    }
    let locate = |e: Error| Error::InvalidRecord {
        at: value_at,
        reason: format!("inner message at decompressed byte {pos}: {e}"),
    };
    let size = i32_at(rest, 8);
    if size < MIN_ENTRY_SIZE {
        // Kafka: a CorruptRecordException, as for an entry's own size.
        return Err(Error::InvalidLength {
            at: value_at,
            what: "inner message size",
            expected: format!(">= {MIN_ENTRY_SIZE} (at decompressed byte {pos})"),
            found: i64::from(size),
        });
    }
    if rest.len() < (size as usize).saturating_add(LOG_OVERHEAD) {
        return Ok(None);
    }
    let inner = LegacyBatch::new(rest, pos).map_err(|e| {
        // A message whose fields do not parse and whose CRC does not match is corrupt, as
        // Kafka reports it (it checks an inner message's CRC before reading its fields).
        if let Some((stored, computed)) = crc_mismatch(rest, size as usize) {
            return Error::CrcMismatch {
                at: value_at,
                stored,
                computed,
            };
        }
        let e = match e {
            Error::InvalidMagic { found, .. } => Error::InvalidRecord {
                at: pos.saturating_add(MAGIC_OFFSET),
                reason: format!("inner message magic {found} (expected 0 or 1)"),
            },
            other => other,
        };
        match e {
            Error::CrcMismatch { .. } => e,
            e => locate(e),
        }
    })?;
    if inner.is_compressed() {
        return Err(locate(Error::InvalidRecord {
            at: pos,
            reason: "inner messages must not be compressed".into(),
        }));
    }
    Ok(Some(inner))
}

/// The stored and computed CRC of the message at the start of `rest` (of `size` bytes after
/// its offset and size prefix) when they differ.
fn crc_mismatch(rest: &[u8], size: usize) -> Option<(u32, u32)> {
    let message = rest.get(LOG_OVERHEAD..LOG_OVERHEAD.saturating_add(size))?;
    let stored = u32::from_be_bytes(*message.first_chunk::<4>()?);
    let computed = crate::crc::crc32(message.get(4..)?);
    (stored != computed).then_some((stored, computed))
}

/// One v0/v1 message as a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyRecord<'a> {
    /// Absolute offset.
    pub offset: i64,
    /// Timestamp, `None` for v0; the wrapper's time for inner v1 messages of a LogAppendTime
    /// wrapper.
    pub timestamp: Option<i64>,
    /// Timestamp type (the wrapper's, for inner messages of magic 1).
    pub timestamp_type: TimestampType,
    /// Magic of this message.
    pub magic: u8,
    /// Attributes of this message.
    pub attributes: u8,
    /// Stored CRC-32 of this message.
    pub crc: u32,
    /// Key, `None` for null.
    pub key: Option<&'a [u8]>,
    /// Value, `None` for null.
    pub value: Option<&'a [u8]>,
    /// The message bytes including its offset and size prefix (for an inner message, as stored
    /// inside the wrapper, with its relative offset).
    pub raw: &'a [u8],
    /// Position: absolute for an outer message, within the decompressed wrapper for an inner one.
    pub position: usize,
}

impl LegacyRecord<'_> {
    /// CRC-32 computed over the message's magic .. end.
    pub fn compute_crc(&self) -> u32 {
        crate::crc::crc32(self.raw.get(MAGIC_OFFSET..).unwrap_or(&[]))
    }

    /// Size of the message including its 12-byte prefix.
    pub fn size_in_bytes(&self) -> usize {
        self.raw.len()
    }
}

/// Iterator over the records of a v0/v1 entry.
#[derive(Debug, Clone)]
pub struct LegacyRecords<'a> {
    inner: Inner<'a>,
}

#[derive(Debug, Clone)]
enum Inner<'a> {
    Single(Option<LegacyRecord<'a>>),
    Deep {
        /// Decompressed inner messages, cut at the end of the last complete one.
        data: &'a [u8],
        pos: usize,
        /// v1: added to inner offsets; v0: `None`, inner offsets are absolute.
        absolute_base: Option<i64>,
        wrapper_log_append_time: Option<i64>,
        wrapper_timestamp_type: TimestampType,
        value_at: usize,
        /// For [`LegacyBatch::checked_records`]: the wrapper's position, where an inner message
        /// whose CRC does not match is reported.
        check_crc_at: Option<usize>,
    },
}

impl<'a> LegacyRecords<'a> {
    /// The decompressed inner messages of a wrapper; empty for a single message.
    pub(crate) fn data(&self) -> &'a [u8] {
        match &self.inner {
            Inner::Single(_) => &[],
            Inner::Deep { data, .. } => data,
        }
    }
}

impl<'a> Iterator for LegacyRecords<'a> {
    type Item = Result<LegacyRecord<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::Single(r) => r.take().map(Ok),
            Inner::Deep {
                data,
                pos,
                absolute_base,
                wrapper_log_append_time,
                wrapper_timestamp_type,
                value_at,
                check_crc_at,
            } => {
                // The scan already checked every inner message up to `data.len()`.
                let inner = match next_inner(data, *pos, *value_at) {
                    Ok(Some(inner)) => inner,
                    Ok(None) => return None,
                    Err(e) => {
                        *pos = data.len();
                        return Some(Err(e));
                    }
                };
                *pos = pos.saturating_add(inner.as_bytes().len());
                let mut record = inner.as_record();
                if let Some(at) = *check_crc_at {
                    let computed = record.compute_crc();
                    if record.crc != computed {
                        // As Kafka's `record.ensureValid()`: a corrupt message, like an entry's.
                        let e = Error::CrcMismatch {
                            at,
                            stored: record.crc,
                            computed,
                        };
                        *pos = data.len();
                        return Some(Err(e));
                    }
                }
                if let Some(base) = absolute_base {
                    record.offset = base.wrapping_add(record.offset);
                }
                if record.magic == 1 {
                    record.timestamp_type = *wrapper_timestamp_type;
                    if let Some(t) = wrapper_log_append_time {
                        record.timestamp = Some(*t);
                    }
                }
                Some(Ok(record))
            }
        }
    }
}
