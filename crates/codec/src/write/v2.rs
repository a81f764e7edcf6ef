//! The v2 record batch builder.

use super::{check_append, len_i32, NewRecord};
use crate::layout::v2 as layout;
use crate::varint::{encode_unsigned, varint_len, varlong_len, zigzag32, zigzag64};
use crate::{Compression, Error, Header, Result, TimestampType};

/// Builds one v2 record batch, identical to Kafka's `MemoryRecordsBuilder` for the same input.
///
/// The base timestamp is the first record's timestamp (or the delete horizon when one is set);
/// the max timestamp is the largest record timestamp, or the append time under LogAppendTime.
///
/// # Configuration is fixed by the first append
///
/// The setters ([`compression`](V2Builder::compression),
/// [`timestamp_type`](V2Builder::timestamp_type), [`producer`](V2Builder::producer),
/// [`transactional`](V2Builder::transactional), [`control`](V2Builder::control),
/// [`partition_leader_epoch`](V2Builder::partition_leader_epoch),
/// [`delete_horizon_ms`](V2Builder::delete_horizon_ms)) configure the batch before its first
/// record. Records are encoded as they are appended (in place, or into the buffer the codec
/// compresses, with timestamp deltas from the base timestamp), so a setter called after a
/// record was appended is refused: it is not applied, and every later append and
/// [`finish`](V2Builder::finish) return [`Error::ConfigAfterAppend`] naming it. A builder cannot
/// produce a batch that disagrees with its records.
///
/// ```
/// use krecords_codec::write::{V2Builder, NewRecord};
/// use krecords_codec::{Compression, Error};
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1714000000000, None, Some(b"hello"))).unwrap();
/// let late = b.compression(Compression::Gzip, None).finish();
/// assert_eq!(late, Err(Error::ConfigAfterAppend { setter: "compression" }));
/// ```
///
/// # Examples
///
/// ```
/// use krecords_codec::write::{V2Builder, NewRecord};
/// use krecords_codec::Compression;
/// let mut b = V2Builder::new(100).compression(Compression::None, None);
/// b.append(&NewRecord::new(1714000000000, Some(b"k"), Some(b"v"))).unwrap();
/// let bytes = b.finish().unwrap();
/// assert_eq!(&bytes[..8], &100i64.to_be_bytes());
/// ```
#[derive(Debug, Clone)]
pub struct V2Builder {
    base_offset: i64,
    compression: Compression,
    level: Option<i32>,
    timestamp_type: TimestampType,
    log_append_time: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    control: bool,
    partition_leader_epoch: i32,
    delete_horizon_ms: Option<i64>,
    /// The output: bytes before `start` are the caller's (see [`V2Builder::appending_to`]);
    /// from `start`, uncompressed batches are written in place after a reserved 61-byte header.
    buf: Vec<u8>,
    /// Where this batch starts in `buf`.
    start: usize,
    /// Compressed batches only: the records, compressed into `buf` on finish.
    records: Vec<u8>,
    /// End of the bytes written so far in the vector records go to (`buf` uncompressed,
    /// `records` compressed); that vector may be longer (see [`write_record`]).
    end: usize,
    count: i32,
    last_offset: Option<i64>,
    base_timestamp: Option<i64>,
    max_timestamp: i64,
    /// The first setter called after a record was appended: the builder refuses to go on.
    late_setter: Option<&'static str>,
}

impl V2Builder {
    /// A builder for a batch starting at `base_offset`, uncompressed, CreateTime, no producer.
    pub fn new(base_offset: i64) -> Self {
        Self::with_buffer(base_offset, Vec::new())
    }

    /// As [`V2Builder::new`], writing into `buf` (cleared; its capacity is reused).
    pub fn with_buffer(base_offset: i64, mut buf: Vec<u8>) -> Self {
        buf.clear();
        Self::appending_to(base_offset, buf)
    }

    /// As [`V2Builder::new`], writing the batch after the bytes already in `out`:
    /// [`V2Builder::finish`] returns `out` with the batch appended (or unchanged when no record was
    /// appended). An uncompressed batch is written in place, so a stream of batches built this way
    /// into one buffer is never copied.
    ///
    /// ```
    /// use krecords_codec::write::{V2Builder, NewRecord};
    /// let mut out = Vec::new();
    /// for base in [0, 10] {
    ///     let mut b = V2Builder::appending_to(base, out);
    ///     b.append(&NewRecord::new(1714000000000, None, Some(b"v"))).unwrap();
    ///     out = b.finish().unwrap();
    /// }
    /// assert_eq!(krecords_codec::read::Entries::new(&out).count(), 2);
    /// ```
    pub fn appending_to(base_offset: i64, mut buf: Vec<u8>) -> Self {
        let start = buf.len();
        buf.resize(start + layout::RECORDS_OFFSET, 0);
        V2Builder {
            base_offset,
            compression: Compression::None,
            level: None,
            timestamp_type: TimestampType::CreateTime,
            log_append_time: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            transactional: false,
            control: false,
            partition_leader_epoch: -1,
            delete_horizon_ms: None,
            buf,
            start,
            records: Vec::new(),
            end: start + layout::RECORDS_OFFSET,
            count: 0,
            last_offset: None,
            base_timestamp: None,
            max_timestamp: -1,
            late_setter: None,
        }
    }

    /// Applies a setting while no record is in the batch; afterwards records it as the late
    /// setter that makes every later append and finish fail (see the type's docs).
    #[inline]
    fn configure(mut self, setter: &'static str, apply: impl FnOnce(&mut Self)) -> Self {
        if self.count == 0 {
            apply(&mut self);
        } else {
            self.late_setter.get_or_insert(setter);
        }
        self
    }

    /// The error for a builder a setter was called on after an append.
    #[inline]
    fn check_configured(&self) -> Result<()> {
        match self.late_setter {
            None => Ok(()),
            Some(setter) => Err(Error::ConfigAfterAppend { setter }),
        }
    }

    /// Sets the codec and level (`None`: the codec's default). Before the first append only
    /// (see [the type's docs](V2Builder#configuration-is-fixed-by-the-first-append)).
    pub fn compression(self, compression: Compression, level: Option<i32>) -> Self {
        self.configure("compression", |b| {
            b.compression = compression;
            b.level = level;
            // Uncompressed batches are written in place after a reserved header; compressed ones
            // collect the records alone and get their header on finish.
            b.records.clear();
            b.buf.truncate(b.start);
            if compression == Compression::None {
                b.buf.resize(b.start + layout::RECORDS_OFFSET, 0);
                b.end = b.buf.len();
            } else {
                b.end = 0;
            }
        })
    }

    /// Sets the timestamp type; `log_append_time` becomes the max timestamp (and so every
    /// record's timestamp on read) under LogAppendTime. Before the first append only.
    pub fn timestamp_type(self, timestamp_type: TimestampType, log_append_time: i64) -> Self {
        self.configure("timestamp_type", |b| {
            b.timestamp_type = timestamp_type;
            b.log_append_time = log_append_time;
        })
    }

    /// Sets producer id, epoch and base sequence (-1 for none). Before the first append only.
    pub fn producer(self, producer_id: i64, producer_epoch: i16, base_sequence: i32) -> Self {
        self.configure("producer", |b| {
            b.producer_id = producer_id;
            b.producer_epoch = producer_epoch;
            b.base_sequence = base_sequence;
        })
    }

    /// Marks the batch transactional. Before the first append only.
    pub fn transactional(self, transactional: bool) -> Self {
        self.configure("transactional", |b| b.transactional = transactional)
    }

    /// Makes this a control batch; append control records with [`V2Builder::append_control`].
    /// Before the first append only.
    pub fn control(self, control: bool) -> Self {
        self.configure("control", |b| b.control = control)
    }

    /// Sets the partition leader epoch (-1: not set). Before the first append only.
    pub fn partition_leader_epoch(self, epoch: i32) -> Self {
        self.configure("partition_leader_epoch", |b| {
            b.partition_leader_epoch = epoch;
        })
    }

    /// Sets a delete horizon: it becomes the base timestamp and attributes bit 6 is set. Before
    /// the first append only (record timestamps are written as deltas from it).
    pub fn delete_horizon_ms(self, delete_horizon_ms: Option<i64>) -> Self {
        self.configure("delete_horizon_ms", |b| {
            b.delete_horizon_ms = delete_horizon_ms.filter(|&d| d >= 0);
            // Without a horizon the first record's timestamp is the base again.
            b.base_timestamp = b.delete_horizon_ms;
        })
    }

    /// Records appended so far.
    pub fn count(&self) -> i32 {
        self.count
    }

    /// Uncompressed bytes written so far (header included for uncompressed batches).
    pub fn len(&self) -> usize {
        if self.compression == Compression::None {
            self.end.saturating_sub(self.start)
        } else {
            self.end
        }
    }

    /// Whether no record was appended.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The offset the next [`V2Builder::append`] uses (after `i64::MAX` it wraps, and the append
    /// is refused as not increasing).
    #[inline]
    pub fn next_offset(&self) -> i64 {
        self.last_offset
            .map_or(self.base_offset, |o| o.wrapping_add(1))
    }

    /// Appends a record at the next offset and returns that offset.
    ///
    /// # Errors
    ///
    /// [`Error::Unencodable`] for a negative timestamp other than -1, a field too long for its
    /// length, or when called on a control batch; [`Error::ConfigAfterAppend`] after a setter
    /// was called on a builder holding records.
    #[inline]
    pub fn append(&mut self, record: &NewRecord<'_>) -> Result<i64> {
        let offset = self.next_offset();
        self.append_with_offset(offset, record)?;
        Ok(offset)
    }

    /// Appends a record at `offset`, which must be above the previous one (gaps are allowed, as
    /// compaction leaves them).
    ///
    /// # Errors
    ///
    /// As [`V2Builder::append`], plus an offset that does not increase.
    #[inline]
    pub fn append_with_offset(&mut self, offset: i64, record: &NewRecord<'_>) -> Result<()> {
        self.check_configured()?;
        if self.control {
            return Err(Error::Unencodable {
                reason: "only control records can be appended to a control batch".into(),
            });
        }
        self.append_raw(offset, record)
    }

    /// Appends a control record (key and value already encoded, see [`crate::control`]) at the
    /// next offset.
    ///
    /// # Errors
    ///
    /// [`Error::Unencodable`] unless this is a control batch; [`Error::ConfigAfterAppend`] as
    /// for [`V2Builder::append`].
    pub fn append_control(&mut self, timestamp: i64, key: &[u8], value: &[u8]) -> Result<i64> {
        self.check_configured()?;
        if !self.control {
            return Err(Error::Unencodable {
                reason: "control records can only be appended to control batches".into(),
            });
        }
        let offset = self.next_offset();
        self.append_raw(offset, &NewRecord::new(timestamp, Some(key), Some(value)))?;
        Ok(offset)
    }

    #[inline]
    fn append_raw(&mut self, offset: i64, record: &NewRecord<'_>) -> Result<()> {
        check_append(self.base_offset, self.last_offset, offset, record.timestamp)?;
        if self.count == i32::MAX {
            return Err(Error::Unencodable {
                reason: "more than i32::MAX records".into(),
            });
        }
        let base_timestamp = *self.base_timestamp.get_or_insert(record.timestamp);
        let offset_delta = (offset - self.base_offset) as i32;
        let timestamp_delta = record.timestamp.wrapping_sub(base_timestamp);
        let out = if self.compression == Compression::None {
            &mut self.buf
        } else {
            &mut self.records
        };
        write_record(out, &mut self.end, offset_delta, timestamp_delta, record)?;
        self.count += 1;
        self.last_offset = Some(offset);
        if record.timestamp > self.max_timestamp {
            self.max_timestamp = record.timestamp;
        }
        Ok(())
    }

    /// Finishes the batch and returns it (after the caller's bytes, for
    /// [`V2Builder::appending_to`]). A batch without records is empty (no bytes), as
    /// Kafka's builder returns `MemoryRecords.EMPTY`; write a record-less batch with
    /// [`write_empty_batch`].
    ///
    /// # Errors
    ///
    /// Producer fields Kafka rejects (transactional without producer id, producer id without
    /// epoch, idempotent data without a base sequence), a bad compression level, or a batch
    /// over `i32::MAX` bytes; [`Error::ConfigAfterAppend`] when a setter was called after a
    /// record was appended.
    pub fn finish(mut self) -> Result<Vec<u8>> {
        self.check_configured()?;
        self.check_producer_state()?;
        let start = self.start;
        let mut out = std::mem::take(&mut self.buf);
        if self.count == 0 {
            out.truncate(start);
            return Ok(out);
        }
        if self.compression == Compression::None {
            out.truncate(self.end);
        } else {
            self.records.truncate(self.end);
            out.truncate(start);
            out.resize(start + layout::RECORDS_OFFSET, 0);
            crate::compression::compress(self.compression, self.level, 2, &self.records, &mut out)?;
        }
        write_header(&mut out, start, &self.header_fields())?;
        Ok(out)
    }

    /// As [`V2Builder::finish`], appending the batch to `out` (a copy, unless the builder's
    /// buffer can simply be handed over; [`V2Builder::appending_to`] avoids the copy).
    ///
    /// # Errors
    ///
    /// As [`V2Builder::finish`].
    pub fn finish_into(self, out: &mut Vec<u8>) -> Result<()> {
        let start = self.start;
        let mut batch = self.finish()?;
        let bytes = batch.get(start..).unwrap_or(&[]);
        if start == 0 && out.is_empty() && out.capacity() < bytes.len() {
            // Hand our buffer over when the caller's could not hold the batch anyway; otherwise
            // copy into theirs so a caller reusing a large buffer keeps its capacity.
            std::mem::swap(out, &mut batch);
        } else {
            out.extend_from_slice(bytes);
        }
        Ok(())
    }

    fn header_fields(&self) -> HeaderFields {
        let last_offset = self.last_offset.unwrap_or(self.base_offset);
        let max_timestamp = if self.timestamp_type == TimestampType::LogAppendTime {
            self.log_append_time
        } else {
            self.max_timestamp
        };
        HeaderFields {
            base_offset: self.base_offset,
            last_offset_delta: (last_offset - self.base_offset) as i32,
            partition_leader_epoch: self.partition_leader_epoch,
            attributes: self.attributes(),
            base_timestamp: self.base_timestamp.unwrap_or(-1),
            max_timestamp,
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            base_sequence: self.base_sequence,
            count: self.count,
        }
    }

    fn attributes(&self) -> i16 {
        attributes(
            self.compression,
            self.timestamp_type,
            self.transactional,
            self.control,
            self.delete_horizon_ms.is_some(),
        )
    }

    fn check_producer_state(&self) -> Result<()> {
        if self.transactional && self.producer_id == -1 {
            return Err(Error::Unencodable {
                reason: "transactional batches need a producer id".into(),
            });
        }
        if self.producer_id != -1 {
            if self.producer_epoch == -1 {
                return Err(Error::Unencodable {
                    reason: "a producer id needs a producer epoch".into(),
                });
            }
            if self.base_sequence < 0 && !self.control {
                return Err(Error::Unencodable {
                    reason: "a producer id needs a non-negative base sequence".into(),
                });
            }
        }
        Ok(())
    }
}

fn attributes(
    compression: Compression,
    timestamp_type: TimestampType,
    transactional: bool,
    control: bool,
    delete_horizon: bool,
) -> i16 {
    let mut a = i16::from(compression.id());
    if timestamp_type == TimestampType::LogAppendTime {
        a |= layout::TIMESTAMP_TYPE_MASK;
    }
    if transactional {
        a |= layout::TRANSACTIONAL_MASK;
    }
    if control {
        a |= layout::CONTROL_MASK;
    }
    if delete_horizon {
        a |= layout::DELETE_HORIZON_MASK;
    }
    a
}

struct HeaderFields {
    base_offset: i64,
    last_offset_delta: i32,
    partition_leader_epoch: i32,
    attributes: i16,
    base_timestamp: i64,
    max_timestamp: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    count: i32,
}

/// Fills the 61-byte header of the batch at `out[start..]` (already reserved, records after it)
/// and its CRC.
fn write_header(out: &mut [u8], start: usize, h: &HeaderFields) -> Result<()> {
    let batch = out.get_mut(start..).unwrap_or(&mut []);
    let length = len_i32(
        batch.len().saturating_sub(crate::layout::LOG_OVERHEAD),
        "record batch",
    )?;
    let mut put = |at: usize, bytes: &[u8]| {
        if let Some(dst) = batch.get_mut(at..at + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    };
    put(layout::BASE_OFFSET_OFFSET, &h.base_offset.to_be_bytes());
    put(layout::LENGTH_OFFSET, &length.to_be_bytes());
    put(
        layout::PARTITION_LEADER_EPOCH_OFFSET,
        &h.partition_leader_epoch.to_be_bytes(),
    );
    put(layout::MAGIC_OFFSET, &[2]);
    put(layout::ATTRIBUTES_OFFSET, &h.attributes.to_be_bytes());
    put(
        layout::LAST_OFFSET_DELTA_OFFSET,
        &h.last_offset_delta.to_be_bytes(),
    );
    put(
        layout::BASE_TIMESTAMP_OFFSET,
        &h.base_timestamp.to_be_bytes(),
    );
    put(layout::MAX_TIMESTAMP_OFFSET, &h.max_timestamp.to_be_bytes());
    put(layout::PRODUCER_ID_OFFSET, &h.producer_id.to_be_bytes());
    put(
        layout::PRODUCER_EPOCH_OFFSET,
        &h.producer_epoch.to_be_bytes(),
    );
    put(layout::BASE_SEQUENCE_OFFSET, &h.base_sequence.to_be_bytes());
    put(layout::RECORDS_COUNT_OFFSET, &h.count.to_be_bytes());
    let crc = crate::crc::crc32c(batch.get(layout::ATTRIBUTES_OFFSET..).unwrap_or(&[]));
    if let Some(dst) = batch.get_mut(layout::CRC_OFFSET..layout::CRC_OFFSET + 4) {
        dst.copy_from_slice(&crc.to_be_bytes());
    }
    Ok(())
}

/// Bytes of a length-prefixed field: varint length + bytes, or a 1-byte -1 for null.
#[inline]
fn sized_len(b: Option<&[u8]>) -> Result<usize> {
    Ok(match b {
        Some(b) => varint_len(len_i32(b.len(), "field")?) + b.len(),
        None => 1,
    })
}

/// Size of a record body (without its length varint), as Kafka's
/// `DefaultRecord.sizeOfBodyInBytes`.
pub(crate) fn record_body_size(
    offset_delta: i32,
    timestamp_delta: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[Header<'_>],
) -> Result<usize> {
    let mut size = 1 + varlong_len(timestamp_delta) + varint_len(offset_delta);
    size += sized_len(key)? + sized_len(value)?;
    size += varint_len(len_i32(headers.len(), "header count")?);
    for h in headers {
        size += sized_len(Some(h.key))? + sized_len(h.value)?;
    }
    Ok(size)
}

/// Bytes `out` grows by (zero-filled, as `Vec::resize` must) when a record does not fit in what
/// is left of it: growing in chunks keeps the zero-fill out of the per-record path.
const WINDOW: usize = 512;

/// Writes one record (length varint + body) at `*end` of `out` and advances `*end`. `out` may
/// extend past `*end` (a window for the next records); the builder truncates it on finish.
///
/// The body is written once, after room for its length varint. Its size lies between the size
/// with every varint at its narrowest and at its widest; when both take the same length varint
/// (nearly always) that is the one, so fields are not sized one by one; otherwise the body is
/// sized exactly first.
#[inline]
fn write_record(
    out: &mut Vec<u8>,
    end: &mut usize,
    offset_delta: i32,
    timestamp_delta: i64,
    record: &NewRecord<'_>,
) -> Result<()> {
    // attributes, timestamp delta, offset delta, key length, value length, header count.
    const MIN: usize = 1 + 1 + 1 + 1 + 1 + 1;
    const MAX: usize = 1 + 10 + 5 + 5 + 5 + 5;
    let field = |b: Option<&[u8]>| b.map_or(0, <[u8]>::len);
    let data = field(record.key).saturating_add(field(record.value));
    let mut min = MIN.saturating_add(data);
    let mut max = MAX.saturating_add(data);
    for h in record.headers {
        let n = h.key.len().saturating_add(field(h.value));
        min = min.saturating_add(2).saturating_add(n);
        max = max.saturating_add(10).saturating_add(n);
    }
    let length_len = match (i32::try_from(min), i32::try_from(max)) {
        (Ok(lo), Ok(hi)) if varint_len(lo) == varint_len(hi) => varint_len(hi),
        _ => {
            let body = record_body_size(
                offset_delta,
                timestamp_delta,
                record.key,
                record.value,
                record.headers,
            )?;
            varint_len(len_i32(body, "record")?)
        }
    };
    let body_at = *end + length_len;
    let need = body_at + max;
    if out.len() < need {
        out.resize(need.max(end.saturating_add(WINDOW)), 0);
    }
    let mut w = SliceWriter {
        buf: out.get_mut(body_at..need).unwrap_or(&mut []),
        pos: 0,
    };
    w.byte(0); // attributes: unused
    w.varlong(timestamp_delta);
    w.varint(offset_delta);
    w.sized(record.key);
    w.sized(record.value);
    w.varint(record.headers.len() as i32);
    for h in record.headers {
        w.sized(Some(h.key));
        w.sized(h.value);
    }
    let body = w.pos;
    let body_i32 = len_i32(body, "record")?;
    debug_assert_eq!(
        varint_len(body_i32),
        length_len,
        "record length sized wrong"
    );
    let mut w = SliceWriter {
        buf: out.get_mut(*end..body_at).unwrap_or(&mut []),
        pos: 0,
    };
    w.varint(body_i32);
    *end = body_at + body;
    Ok(())
}

/// Writes into bytes already reserved for them; the caller reserves at least what it writes (an
/// upper bound of the record body, or the exact length varint), so a write past the end cannot
/// happen — were it to, it would be dropped, never a panic, and debug builds assert the sizes.
struct SliceWriter<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl SliceWriter<'_> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        if let Some(x) = self.buf.get_mut(self.pos) {
            *x = b;
        }
        self.pos += 1;
    }

    #[inline(always)]
    fn slice(&mut self, s: &[u8]) {
        let end = self.pos + s.len();
        if let Some(dst) = self.buf.get_mut(self.pos..end) {
            dst.copy_from_slice(s);
        }
        self.pos = end;
    }

    #[inline(always)]
    fn unsigned(&mut self, v: u64) {
        encode_unsigned(v, |b| self.byte(b));
    }

    #[inline(always)]
    fn varint(&mut self, v: i32) {
        self.unsigned(u64::from(zigzag32(v)));
    }

    #[inline(always)]
    fn varlong(&mut self, v: i64) {
        self.unsigned(zigzag64(v));
    }

    #[inline(always)]
    fn sized(&mut self, b: Option<&[u8]>) {
        match b {
            Some(b) => {
                self.varint(b.len() as i32);
                self.slice(b);
            }
            None => self.varint(-1),
        }
    }
}

/// The fields of a batch without records, as compaction leaves it to keep producer state
/// (Kafka's `DefaultRecordBatch.writeEmptyHeader`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmptyBatch {
    /// Base offset.
    pub base_offset: i64,
    /// Last offset (kept from the batch that was emptied).
    pub last_offset: i64,
    /// Partition leader epoch (-1: none).
    pub partition_leader_epoch: i32,
    /// Timestamp type.
    pub timestamp_type: TimestampType,
    /// Written as the max timestamp (the base timestamp is -1, as Kafka writes it).
    pub timestamp: i64,
    /// Producer id (-1: none).
    pub producer_id: i64,
    /// Producer epoch (-1: none).
    pub producer_epoch: i16,
    /// Base sequence (-1: none).
    pub base_sequence: i32,
    /// Transactional flag.
    pub transactional: bool,
    /// Control flag.
    pub control: bool,
}

/// Appends a v2 batch with zero records (61 bytes) to `out`.
///
/// # Errors
///
/// An offset range beyond i32.
pub fn write_empty_batch(out: &mut Vec<u8>, b: &EmptyBatch) -> Result<()> {
    let delta = b.last_offset.wrapping_sub(b.base_offset);
    let last_offset_delta = i32::try_from(delta).map_err(|_| Error::Unencodable {
        reason: format!("last offset delta {delta} does not fit an i32"),
    })?;
    let start = out.len();
    out.resize(start + layout::RECORDS_OFFSET, 0);
    let header = HeaderFields {
        base_offset: b.base_offset,
        last_offset_delta,
        partition_leader_epoch: b.partition_leader_epoch,
        attributes: attributes(
            Compression::None,
            b.timestamp_type,
            b.transactional,
            b.control,
            false,
        ),
        base_timestamp: -1,
        max_timestamp: b.timestamp,
        producer_id: b.producer_id,
        producer_epoch: b.producer_epoch,
        base_sequence: b.base_sequence,
        count: 0,
    };
    write_header(out, start, &header)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch of `n` records whose sizes cross the 1/2/3-byte length-varint boundaries.
    fn build(into: Option<Vec<u8>>, base: i64, codec: Compression, n: usize) -> Vec<u8> {
        let mut b = match into {
            Some(out) => V2Builder::appending_to(base, out),
            None => V2Builder::new(base),
        }
        .compression(codec, None);
        let values: Vec<Vec<u8>> = (0..n).map(|i| vec![b'v'; (i * 37) % 9000]).collect();
        let header_value = [7u8; 70];
        let headers = [Header {
            key: b"h",
            value: Some(&header_value),
        }];
        for (i, v) in values.iter().enumerate() {
            let r = NewRecord::new(1_714_000_000_000 + (i as i64) * 7919, Some(b"k"), Some(v));
            let r = if i % 3 == 0 {
                r.with_headers(&headers)
            } else {
                r
            };
            b.append(&r).unwrap();
        }
        b.finish().unwrap()
    }

    #[test]
    fn appending_to_writes_the_same_batches_after_the_callers_bytes() {
        for codec in [Compression::None, Compression::Lz4] {
            let mut expected = b"prefix".to_vec();
            let mut out = b"prefix".to_vec();
            for (i, n) in [1usize, 40, 300].into_iter().enumerate() {
                let base = (i as i64) * 1000;
                expected.extend_from_slice(&build(None, base, codec, n));
                out = build(Some(out), base, codec, n);
            }
            assert_eq!(out, expected, "{codec}");
            // An empty builder leaves the caller's bytes alone.
            let b = V2Builder::appending_to(5, out.clone()).compression(codec, None);
            assert_eq!(b.finish().unwrap(), out);
        }
    }

    #[test]
    fn record_lengths_at_varint_boundaries_match_exact_sizing() {
        // Bodies of every size around the 1-, 2- and 3-byte length varints (63/64, 8191/8192).
        for value_len in (30..80).chain(8150..8200) {
            let value = vec![1u8; value_len];
            for header in [false, true] {
                let headers = [Header {
                    key: b"key",
                    value: None,
                }];
                let mut r = NewRecord::new(1_714_000_000_000, None, Some(&value));
                if header {
                    r = r.with_headers(&headers);
                }
                let mut b = V2Builder::new(0);
                b.append(&r).unwrap();
                let bytes = b.finish().unwrap();
                let body = record_body_size(0, 0, None, Some(&value), r.headers).unwrap();
                let records = &bytes[layout::RECORDS_OFFSET..];
                let (length, n) = crate::varint::read_varint(records, 0).unwrap();
                assert_eq!(length as usize, body);
                assert_eq!(records.len(), n + body);
            }
        }
    }

    #[test]
    fn hello_world_batch_matches_kafka_python_bytes() {
        // kafka-python writes partition leader epoch 0 where Kafka's producer writes -1.
        let mut b = V2Builder::new(0).partition_leader_epoch(0);
        b.append(&NewRecord::new(1714000000000, None, Some(b"hello")))
            .unwrap();
        b.append(&NewRecord::new(1714000000000, None, Some(b"world")))
            .unwrap();
        let bytes = b.finish().unwrap();
        let expected = "0000000000000000000000490000000002dbda21c90000000000010000018f125c74000000018f125c7400ffffffffffffffffffffffffffff0000000216000000010a68656c6c6f0016000002010a776f726c6400";
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, expected);
    }
}
