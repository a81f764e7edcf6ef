//! Magic 2: the record batch.
//!
//! The layout of the header and of a record is in [`layout::v2`](crate::layout::v2).

use super::bytes::{i16_at, i32_at, i64_at, take, u32_at, u8_at};
use crate::layout::v2::*;
use crate::layout::LOG_OVERHEAD;
use crate::varint::{read_varint, read_varlong, unzigzag32, unzigzag64};
use crate::{Compression, Error, Header, Result, TimestampType};

// `HeaderPeek::parse` reads these chunks in this order.
const _: () = assert!(PEEK_LEN == 8 + 4 + 4 + 1 + 4 + 2 + 4);

/// What the first [`PEEK_LEN`] bytes of an entry say about it, read without the rest (no CRC,
/// no records): how a reader walking a file through a small window finds batch boundaries and
/// offsets before it reads a whole batch.
///
/// # Examples
///
/// ```
/// use krecords_codec::layout::v2::PEEK_LEN;
/// use krecords_codec::read::v2::HeaderPeek;
/// use krecords_codec::write::{NewRecord, V2Builder};
///
/// let mut b = V2Builder::new(40);
/// b.append(&NewRecord::new(1714000000000, None, Some(b"a"))).unwrap();
/// b.append(&NewRecord::new(1714000000000, None, Some(b"b"))).unwrap();
/// let bytes = b.finish().unwrap();
/// let peek = HeaderPeek::parse(&bytes[..PEEK_LEN]).unwrap();
/// assert_eq!(peek.v2_entry_size(), Some(bytes.len() as u64));
/// assert_eq!((peek.base_offset, peek.last_offset()), (40, 41));
/// assert!(!peek.is_control());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderPeek {
    /// The base offset field (a v0/v1 entry's offset field).
    pub base_offset: i64,
    /// The batch length field: the bytes after it.
    pub length: i32,
    /// The magic byte.
    pub magic: u8,
    /// The attributes field (meaningful for magic 2 only).
    pub attributes: i16,
    /// The last offset delta field (meaningful for magic 2 only).
    pub last_offset_delta: i32,
}

impl HeaderPeek {
    /// Reads the fields from `prefix`; `None` when it is shorter than [`PEEK_LEN`].
    pub fn parse(prefix: &[u8]) -> Option<HeaderPeek> {
        // Field by field in layout order: fixed-size chunks, no index arithmetic (this runs
        // once per batch on the read path).
        let (base, rest) = prefix.split_first_chunk::<8>()?;
        let (length, rest) = rest.split_first_chunk::<4>()?;
        let (_leader_epoch, rest) = rest.split_first_chunk::<4>()?;
        let (&[magic], rest) = rest.split_first_chunk::<1>()?;
        let (_crc, rest) = rest.split_first_chunk::<4>()?;
        let (attributes, rest) = rest.split_first_chunk::<2>()?;
        let (last_offset_delta, _) = rest.split_first_chunk::<4>()?;
        Some(HeaderPeek {
            base_offset: i64::from_be_bytes(*base),
            length: i32::from_be_bytes(*length),
            magic,
            attributes: i16::from_be_bytes(*attributes),
            last_offset_delta: i32::from_be_bytes(*last_offset_delta),
        })
    }

    /// The whole entry's size (length prefix included) when this is a v2 batch with at least a
    /// full header: what [`V2Batch::new`] would need; `None` otherwise.
    pub fn v2_entry_size(&self) -> Option<u64> {
        let min = (RECORDS_OFFSET - LOG_OVERHEAD) as i32;
        (self.magic == 2 && self.length >= min)
            .then(|| (self.length as u64).saturating_add(LOG_OVERHEAD as u64))
    }

    /// `base_offset + last_offset_delta`, wrapping as Java's longs do.
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    /// Whether the control attribute bit is set.
    pub fn is_control(&self) -> bool {
        self.attributes & CONTROL_MASK != 0
    }
}

/// A copy of a v2 batch's header (its first [`RECORDS_OFFSET`] bytes) with the batch length
/// set to an empty records section, so that [`V2Batch::new`] accepts it: a view of the header
/// fields alone for code that reads nothing else (records count and CRC stay as stored, so
/// the CRC no longer matches). `None` when `header` is shorter than [`RECORDS_OFFSET`].
///
/// ```
/// use krecords_codec::layout::v2::RECORDS_OFFSET;
/// use krecords_codec::read::v2::{header_only, V2Batch};
/// use krecords_codec::write::{NewRecord, V2Builder};
///
/// let mut b = V2Builder::new(7).producer(3, 0, 5);
/// b.append(&NewRecord::new(1714000000000, None, Some(b"hello"))).unwrap();
/// let bytes = b.finish().unwrap();
/// let head = header_only(&bytes).unwrap();
/// let v = V2Batch::new(&head, 0).unwrap();
/// assert_eq!((v.base_offset(), v.raw_producer_id(), v.records_count()), (7, 3, 1));
/// assert_eq!(v.as_bytes().len(), RECORDS_OFFSET);
/// ```
pub fn header_only(header: &[u8]) -> Option<[u8; RECORDS_OFFSET]> {
    let mut view = [0u8; RECORDS_OFFSET];
    view.copy_from_slice(header.get(..RECORDS_OFFSET)?);
    let empty = (RECORDS_OFFSET - LOG_OVERHEAD) as i32;
    view.get_mut(LENGTH_OFFSET..LENGTH_OFFSET + 4)?
        .copy_from_slice(&empty.to_be_bytes());
    Some(view)
}

/// A view of one v2 record batch (the whole entry, offset and length prefix included).
///
/// The constructor checks that the fixed 61-byte header is present; accessors then cannot fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V2Batch<'a> {
    /// The entry bytes; `buf.len() >= RECORDS_OFFSET` and equals `12 + batch_length`.
    buf: &'a [u8],
    /// Absolute position of `buf[0]`.
    position: usize,
}

impl<'a> V2Batch<'a> {
    /// Views `entry`, which must be exactly one v2 batch (its length field is taken as given;
    /// [`crate::read::Entries`] slices entries by it). `position` is its absolute position.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidLength`] when the entry is shorter than the 61-byte header,
    /// [`Error::Truncated`] when `entry` is shorter than the length field says.
    pub fn new(entry: &'a [u8], position: usize) -> Result<Self> {
        let length = i32_at(entry, LENGTH_OFFSET);
        let min = (RECORDS_OFFSET - LOG_OVERHEAD) as i32;
        if entry.len() < RECORDS_OFFSET || length < min {
            return Err(Error::InvalidLength {
                at: position.saturating_add(LENGTH_OFFSET),
                what: "batch length",
                expected: format!(">= {min} (the v2 header)"),
                found: i64::from(length),
            });
        }
        let total = (length as usize).saturating_add(LOG_OVERHEAD);
        let buf = take(entry, 0, total, position, "record batch")?;
        if u8_at(buf, MAGIC_OFFSET) != 2 {
            return Err(Error::InvalidMagic {
                at: position.saturating_add(MAGIC_OFFSET),
                found: u8_at(buf, MAGIC_OFFSET) as i8,
            });
        }
        Ok(V2Batch { buf, position })
    }

    /// The whole entry.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.buf
    }

    /// Absolute position of the entry.
    pub fn position(&self) -> usize {
        self.position
    }

    /// Base offset: the offset of the first record (before compaction).
    pub fn base_offset(&self) -> i64 {
        i64_at(self.buf, BASE_OFFSET_OFFSET)
    }

    /// The batch length field: bytes after it (total size minus 12).
    pub fn batch_length(&self) -> i32 {
        i32_at(self.buf, LENGTH_OFFSET)
    }

    /// Partition leader epoch, `None` for -1 (not set, as producers write it).
    pub fn partition_leader_epoch(&self) -> Option<i32> {
        Some(self.raw_partition_leader_epoch()).filter(|&e| e >= 0)
    }

    /// Partition leader epoch as stored (-1 when not set).
    pub fn raw_partition_leader_epoch(&self) -> i32 {
        i32_at(self.buf, PARTITION_LEADER_EPOCH_OFFSET)
    }

    /// The stored CRC-32C.
    pub fn crc(&self) -> u32 {
        u32_at(self.buf, CRC_OFFSET)
    }

    /// CRC-32C of the bytes the stored CRC covers (attributes to the end).
    pub fn compute_crc(&self) -> u32 {
        crate::crc::crc32c(self.buf.get(ATTRIBUTES_OFFSET..).unwrap_or(&[]))
    }

    /// Whether the stored CRC matches.
    pub fn is_crc_valid(&self) -> bool {
        self.crc() == self.compute_crc()
    }

    /// The 16-bit attributes as stored.
    pub fn attributes(&self) -> i16 {
        i16_at(self.buf, ATTRIBUTES_OFFSET)
    }

    /// The compression codec.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownCompression`] for ids 5..7.
    pub fn compression(&self) -> Result<Compression> {
        let id = (self.attributes() & COMPRESSION_MASK) as u8;
        Compression::from_id(id).ok_or(Error::UnknownCompression {
            at: self.position.saturating_add(ATTRIBUTES_OFFSET),
            id,
        })
    }

    /// CreateTime or LogAppendTime.
    pub fn timestamp_type(&self) -> TimestampType {
        if self.attributes() & TIMESTAMP_TYPE_MASK != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    /// Part of a transaction.
    pub fn is_transactional(&self) -> bool {
        self.attributes() & TRANSACTIONAL_MASK != 0
    }

    /// A control batch (its records are control records).
    pub fn is_control(&self) -> bool {
        self.attributes() & CONTROL_MASK != 0
    }

    /// Whether the base timestamp field holds a delete horizon.
    pub fn has_delete_horizon(&self) -> bool {
        self.attributes() & DELETE_HORIZON_MASK != 0
    }

    /// The delete horizon set by compaction, `None` unless attributes bit 6 is set.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.has_delete_horizon().then(|| self.base_timestamp())
    }

    /// Last offset delta: `last_offset - base_offset`.
    pub fn last_offset_delta(&self) -> i32 {
        i32_at(self.buf, LAST_OFFSET_DELTA_OFFSET)
    }

    /// The last offset of the batch (kept through compaction).
    pub fn last_offset(&self) -> i64 {
        self.base_offset()
            .wrapping_add(i64::from(self.last_offset_delta()))
    }

    /// The offset after this batch.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// Base timestamp: the first record's timestamp, or the delete horizon when
    /// [`Self::has_delete_horizon`]. Record timestamps are deltas from it.
    pub fn base_timestamp(&self) -> i64 {
        i64_at(self.buf, BASE_TIMESTAMP_OFFSET)
    }

    /// Max timestamp: the largest record timestamp, or the append time for LogAppendTime.
    pub fn max_timestamp(&self) -> i64 {
        i64_at(self.buf, MAX_TIMESTAMP_OFFSET)
    }

    /// Producer id, `None` for -1 (not idempotent).
    pub fn producer_id(&self) -> Option<i64> {
        Some(self.raw_producer_id()).filter(|&p| p >= 0)
    }

    /// Producer id as stored.
    pub fn raw_producer_id(&self) -> i64 {
        i64_at(self.buf, PRODUCER_ID_OFFSET)
    }

    /// Producer epoch, `None` for -1.
    pub fn producer_epoch(&self) -> Option<i16> {
        Some(self.raw_producer_epoch()).filter(|&e| e >= 0)
    }

    /// Producer epoch as stored.
    pub fn raw_producer_epoch(&self) -> i16 {
        i16_at(self.buf, PRODUCER_EPOCH_OFFSET)
    }

    /// Base sequence, `None` for -1.
    pub fn base_sequence(&self) -> Option<i32> {
        Some(self.raw_base_sequence()).filter(|&s| s >= 0)
    }

    /// Base sequence as stored.
    pub fn raw_base_sequence(&self) -> i32 {
        i32_at(self.buf, BASE_SEQUENCE_OFFSET)
    }

    /// Sequence of the last record: `base_sequence + last_offset_delta`, wrapping from
    /// `i32::MAX` to 0 as Kafka's `DefaultRecordBatch.incrementSequence` does; `None` without a
    /// base sequence.
    pub fn last_sequence(&self) -> Option<i32> {
        self.base_sequence()
            .map(|s| increment_sequence(s, self.last_offset_delta()))
    }

    /// The records count as stored (may be negative in corrupt input).
    pub fn records_count(&self) -> i32 {
        i32_at(self.buf, RECORDS_COUNT_OFFSET)
    }

    /// The records section as stored (compressed when the batch is).
    pub fn records_section(&self) -> &'a [u8] {
        self.buf.get(RECORDS_OFFSET..).unwrap_or(&[])
    }

    /// Iterates the records. A compressed batch decompresses into `scratch` (cleared first, at
    /// most `limit` bytes) and records borrow from it; otherwise records borrow from the input and
    /// `scratch` is untouched. A batch with count 0 yields nothing without decompressing, as in
    /// Kafka.
    ///
    /// This does **not** check the CRC, nor that record offsets stay within the batch: a
    /// corrupted batch may yield wrong records without an error. Use
    /// [`Self::checked_records`] for data that may be corrupt.
    ///
    /// # Errors
    ///
    /// A negative count, an unknown codec, a decompression failure, or a count that cannot fit
    /// the records section (each record takes at least 7 bytes) — all before any allocation
    /// sized by the count.
    pub fn records<'b>(&self, scratch: &'b mut Vec<u8>, limit: usize) -> Result<V2Records<'b>>
    where
        'a: 'b,
    {
        self.records_with(scratch, limit, u32::MAX)
    }

    /// Iterates the records after checking the CRC, decompressing once: what Kafka's consumer
    /// checks (`check.crcs`: `ensureValid()`, then every record as it is parsed). The records
    /// are as [`Self::records`] gives them.
    ///
    /// It takes what Kafka's reader takes: a records count that disagrees with the last offset
    /// delta, or a record whose offset delta falls outside the batch, is read as Kafka reads it.
    /// [`Self::validate_with`] also refuses those (the broker refuses such a batch from a
    /// producer); the differential tests against Kafka's reader pin the difference.
    ///
    /// # Errors
    ///
    /// [`Error::CrcMismatch`], and those of [`Self::records`].
    pub fn checked_records<'b>(
        &self,
        scratch: &'b mut Vec<u8>,
        limit: usize,
    ) -> Result<V2Records<'b>>
    where
        'a: 'b,
    {
        self.checked(scratch, limit, false)
    }

    /// [`Self::checked_records`]; `strict` adds the batch's own consistency: the records count
    /// against the last offset delta, each record's offset delta within the batch.
    fn checked<'b>(
        &self,
        scratch: &'b mut Vec<u8>,
        limit: usize,
        strict: bool,
    ) -> Result<V2Records<'b>>
    where
        'a: 'b,
    {
        super::check_crc(self.position, self.crc(), self.compute_crc())?;
        if !strict {
            return self.records_with(scratch, limit, u32::MAX);
        }
        let count = self.records_count();
        let delta = self.last_offset_delta();
        if count > 0 && (delta < 0 || count.saturating_sub(1) > delta) {
            return Err(Error::RecordCountMismatch {
                at: self.position,
                declared: i64::from(count),
                found: format!(
                    "last offset delta {delta} allows at most {} records",
                    i64::from(delta.max(-1)).saturating_add(1)
                ),
            });
        }
        // With records, `delta >= 0` here; without, the bound is never consulted.
        self.records_with(scratch, limit, u32::try_from(delta).unwrap_or(0))
    }

    /// [`Self::records`] with records whose offset delta, as a `u32`, is above
    /// `max_offset_delta` reported as errors (`u32::MAX`: no check).
    #[inline]
    fn records_with<'b>(
        &self,
        scratch: &'b mut Vec<u8>,
        limit: usize,
        max_offset_delta: u32,
    ) -> Result<V2Records<'b>>
    where
        'a: 'b,
    {
        let compression = self.compression()?;
        self.check_count()?;
        let section = self.records_section();
        let section_at = self.position.saturating_add(RECORDS_OFFSET);
        if compression == Compression::None {
            return self.records_over(section, section_at, false, max_offset_delta);
        }
        if self.records_count() == 0 {
            // Kafka's reader opens the decompressing stream even for no records.
            crate::compression::check_stream_start(compression, 2, section, limit, section_at)?;
            return self.records_over(section, section_at, false, max_offset_delta);
        }
        scratch.clear();
        crate::compression::decompress(compression, 2, section, limit, section_at, scratch)?;
        self.records_over(scratch.as_slice(), section_at, true, max_offset_delta)
    }

    /// Iterates the records of an uncompressed batch, borrowing from the input for `'a`.
    ///
    /// # Errors
    ///
    /// As [`Self::records`]; a compressed batch with records is [`Error::InvalidRecord`].
    pub fn uncompressed_records(&self) -> Result<V2Records<'a>> {
        let compression = self.compression()?;
        self.check_count()?;
        if compression != Compression::None && self.records_count() != 0 {
            return Err(Error::InvalidRecord {
                at: self.position.saturating_add(ATTRIBUTES_OFFSET),
                reason: format!("batch is {compression}-compressed; decompress it to read records"),
            });
        }
        self.records_over(
            self.records_section(),
            self.position.saturating_add(RECORDS_OFFSET),
            false,
            u32::MAX,
        )
    }

    /// Reads the records of an uncompressed batch once without keeping them, for a caller that
    /// only needs to know they are sound (the log's append path): each record is framed by the
    /// same parser as [`Self::uncompressed_records`] (lengths, varints, headers, nothing left
    /// over after the last declared record) and handed to `visit`, which returns `false` to give
    /// up. Returns the record count and the largest record timestamp (-1 without records).
    ///
    /// `None` when the batch is compressed with records, its count is negative, a record does not
    /// frame, or `visit` gave up; [`Self::uncompressed_records`] then says what is wrong. The CRC
    /// is not checked.
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_codec::read::{Batch, Entries, RecordsScan};
    /// use krecords_codec::write::{NewRecord, V2Builder};
    ///
    /// let mut b = V2Builder::new(0);
    /// b.append(&NewRecord::new(1714000000000, Some(b"k"), Some(b"a"))).unwrap();
    /// b.append(&NewRecord::new(1714000000500, None, Some(b"b"))).unwrap();
    /// let bytes = b.finish().unwrap();
    /// let Some(Ok(Batch::V2(v))) = Entries::new(&bytes).next() else { unreachable!() };
    ///
    /// let scan = v.scan_records(|_| true).unwrap();
    /// assert_eq!(scan, RecordsScan { count: 2, max_timestamp: 1714000000500 });
    /// // A caller's own rule: every record keyed.
    /// assert!(v.scan_records(|r| r.key.is_some()).is_none());
    /// ```
    #[inline]
    pub fn scan_records(
        &self,
        mut visit: impl FnMut(&V2Record<'a>) -> bool,
    ) -> Option<RecordsScan> {
        let mut scan = RecordsScan {
            count: 0,
            max_timestamp: -1,
        };
        for record in self.uncompressed_records().ok()? {
            let record = record.ok()?;
            if !visit(&record) {
                return None;
            }
            scan.count = scan.count.saturating_add(1);
            scan.max_timestamp = scan.max_timestamp.max(record.timestamp);
        }
        Some(scan)
    }

    fn check_count(&self) -> Result<()> {
        let count = self.records_count();
        if count < 0 {
            return Err(Error::InvalidLength {
                at: self.position.saturating_add(RECORDS_COUNT_OFFSET),
                what: "records count",
                expected: ">= 0".into(),
                found: i64::from(count),
            });
        }
        Ok(())
    }

    fn records_over<'b>(
        &self,
        data: &'b [u8],
        at: usize,
        compressed: bool,
        max_offset_delta: u32,
    ) -> Result<V2Records<'b>> {
        let count = self.records_count();
        let count_usize = usize::try_from(count).unwrap_or(0);
        if count_usize.saturating_mul(MIN_RECORD_SIZE) > data.len() {
            return Err(Error::RecordCountMismatch {
                at: self.position,
                declared: i64::from(count),
                found: format!(
                    "the {} records section has only {} bytes (at least {} needed)",
                    if compressed { "decompressed" } else { "" },
                    data.len(),
                    count_usize.saturating_mul(MIN_RECORD_SIZE)
                )
                .replace("the  records", "the records"),
            });
        }
        let log_append_time =
            (self.timestamp_type() == TimestampType::LogAppendTime).then(|| self.max_timestamp());
        Ok(V2Records {
            data,
            pos: 0,
            at,
            compressed,
            remaining: count_usize,
            declared: count,
            base_offset: self.base_offset(),
            base_timestamp: self.base_timestamp(),
            log_append_time,
            base_sequence: self.base_sequence(),
            batch_at: self.position,
            max_offset_delta,
        })
    }

    /// Checks the CRC, the codec, the record count against the records present and against the
    /// last offset delta, and every record's lengths and offset delta; decompresses into
    /// `scratch` (at most `limit` bytes). This is krecords' integrity check (what `krec verify`
    /// and the log's append validation use): stricter than Kafka's reader, which
    /// [`Self::checked_records`] matches, by the batch's own consistency.
    ///
    /// # Errors
    ///
    /// The first problem found.
    pub fn validate_with(&self, scratch: &mut Vec<u8>, limit: usize) -> Result<()> {
        for record in self.checked(scratch, limit, true)? {
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

/// What [`V2Batch::scan_records`] found in a batch whose records are sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordsScan {
    /// Records read: the header's records count.
    pub count: usize,
    /// The largest record timestamp (-1 when there are none): base timestamp + delta, or the
    /// batch's max timestamp under LogAppendTime.
    pub max_timestamp: i64,
}

/// `sequence + increment`, wrapping past `i32::MAX` to 0 as Kafka's producer sequences do.
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    // Java's int arithmetic wraps; so does ours, so hostile deltas cannot overflow.
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}

/// Iterator over the records of a v2 batch. Yields `Result<V2Record>` and stops after an error.
#[derive(Debug, Clone)]
pub struct V2Records<'a> {
    data: &'a [u8],
    pos: usize,
    /// Absolute position of the records section in the input.
    at: usize,
    /// Whether `data` is decompressed (positions then refer to it, not to the input).
    compressed: bool,
    remaining: usize,
    /// Records the header declares.
    declared: i32,
    base_offset: i64,
    base_timestamp: i64,
    log_append_time: Option<i64>,
    base_sequence: Option<i32>,
    batch_at: usize,
    /// Records whose offset delta (as a `u32`, so negative ones too) is above this are errors:
    /// the last offset delta for [`V2Batch::checked_records`], `u32::MAX` (no check) otherwise.
    max_offset_delta: u32,
}

impl<'a> V2Records<'a> {
    /// The bytes the records are read from: the records section, or the decompressed records.
    pub(crate) fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Records not yet read, as the header declares.
    pub fn remaining(&self) -> usize {
        self.remaining
    }

    fn stop(&mut self) {
        self.remaining = 0;
        self.pos = self.data.len();
    }

    /// Maps an error inside decompressed data to the position of the compressed section.
    fn locate(&self, e: Error) -> Error {
        if self.compressed {
            Error::InvalidRecord {
                at: self.at,
                reason: format!("in the decompressed records: {e}"),
            }
        } else {
            e.shifted(self.at)
        }
    }

    /// Returns the next record.
    ///
    /// # Errors
    ///
    /// Any structural problem in the record; and on the last declared record, bytes left over
    /// after it (Kafka's "records still remaining").
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<V2Record<'a>>> {
        self.next_as(|r| r).transpose()
    }

    /// The next record passed through `wrap`, built in place: the common case (see
    /// [`parse_record_fast`]) is parsed inline and the record constructed once, directly in the
    /// caller's result, instead of being moved through `Result`/`Option`/enum layers (each move
    /// of the ~100-byte record cost a store-forwarding stall per record). Everything else goes
    /// through the out-of-line [`Self::next_slow`].
    #[inline(always)]
    pub(crate) fn next_as<T>(&mut self, wrap: impl FnOnce(V2Record<'a>) -> T) -> Option<Result<T>> {
        if self.remaining == 0 {
            return None;
        }
        let remaining = self.remaining.wrapping_sub(1);
        if let Some((record, end)) = parse_record_fast(self.data, self.pos) {
            if (remaining != 0 || end == self.data.len())
                && record.offset_delta as u32 <= self.max_offset_delta
            {
                self.pos = end;
                self.remaining = remaining;
                return Some(Ok(wrap(self.finish(record))));
            }
        }
        self.next_slow().map(|r| r.map(wrap))
    }

    /// Fills in what a parsed record takes from the batch: absolute offset, timestamp (with
    /// LogAppendTime), sequence and absolute position.
    #[inline(always)]
    fn finish(&self, mut record: V2Record<'a>) -> V2Record<'a> {
        record.offset = self
            .base_offset
            .wrapping_add(i64::from(record.offset_delta));
        record.timestamp = match self.log_append_time {
            Some(t) => t,
            None => self.base_timestamp.wrapping_add(record.timestamp_delta),
        };
        record.sequence = self
            .base_sequence
            .map(|s| increment_sequence(s, record.offset_delta));
        if !self.compressed {
            record.position = record.position.saturating_add(self.at);
        }
        record
    }

    /// [`Self::next_as`] for everything the fast path leaves: long varints, errors, and bytes
    /// left after the last declared record.
    #[cold]
    #[inline(never)]
    fn next_slow(&mut self) -> Option<Result<V2Record<'a>>> {
        if self.remaining == 0 {
            return None;
        }
        match parse_record_full(self.data, self.pos) {
            Ok((record, end)) => {
                self.pos = end;
                self.remaining = self.remaining.saturating_sub(1);
                if self.remaining == 0 && self.pos != self.data.len() {
                    let left = self.data.len().saturating_sub(self.pos);
                    let e = Error::RecordCountMismatch {
                        at: self.batch_at,
                        declared: i64::from(self.declared),
                        found: format!("{left} bytes remain after the last declared record"),
                    };
                    self.stop();
                    return Some(Err(e));
                }
                let record = self.finish(record);
                if record.offset_delta as u32 > self.max_offset_delta {
                    let e = Error::InvalidRecord {
                        at: record.position,
                        reason: format!(
                            "record offset delta {} outside the batch's 0..={}",
                            record.offset_delta, self.max_offset_delta
                        ),
                    };
                    // An uncompressed record's position is absolute already (`finish`); a
                    // decompressed one's is not, and the error points at the section instead.
                    let e = if self.compressed { self.locate(e) } else { e };
                    self.stop();
                    return Some(Err(e));
                }
                Some(Ok(record))
            }
            Err(e) => {
                let e = self.locate(e);
                self.stop();
                Some(Err(e))
            }
        }
    }
}

impl<'a> Iterator for V2Records<'a> {
    type Item = Result<V2Record<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.next_as(|r| r)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining))
    }
}

/// An unsigned varint of one to three bytes at `p` of `buf` (values below 2^21), or `None` —
/// longer, truncated or not there. The common case of the record fields, kept branch-light.
#[inline(always)]
fn short_varint(buf: &[u8], p: usize) -> Option<(u32, usize)> {
    let b0 = u32::from(*buf.get(p)?);
    if b0 < 0x80 {
        return Some((b0, 1));
    }
    let b1 = u32::from(*buf.get(p.wrapping_add(1))?);
    if b1 < 0x80 {
        return Some(((b0 & 0x7f) | (b1 << 7), 2));
    }
    let b2 = u32::from(*buf.get(p.wrapping_add(2))?);
    if b2 < 0x80 {
        return Some(((b0 & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14), 3));
    }
    None
}

/// A [`short_varint`]-length field at `p`: `Some(None)` for null (any negative length, as Kafka
/// reads it), with the position after it.
#[inline(always)]
fn short_bytes(body: &[u8], p: usize) -> Option<(Option<&[u8]>, usize)> {
    let (raw, n) = short_varint(body, p)?;
    let p = p.wrapping_add(n);
    let len = unzigzag32(raw);
    if len < 0 {
        return Some((None, p));
    }
    // `len < 2^20` and `p <= body.len()`: the sum cannot wrap.
    let end = p.wrapping_add(len as usize);
    Some((Some(body.get(p..end)?), end))
}

/// The fast path of record parsing ([`V2Records::next_as`]): a well-formed record whose varints all take at most three
/// bytes (lengths below 1 MiB, timestamp deltas within ±17 minutes, up to a million headers),
/// which is nearly every record Kafka writes. Anything else — longer varints, and every malformed
/// record — returns `None`, and [`parse_record_full`] parses it again and names the problem. The
/// two must agree on every input they both accept (a property test checks it).
///
/// Positions stay below `data.len()` plus values under 2^21, so the `wrapping_add`s cannot wrap.
#[inline(always)]
fn parse_record_fast(data: &[u8], pos: usize) -> Option<(V2Record<'_>, usize)> {
    let (raw_length, n) = short_varint(data, pos)?;
    let length = unzigzag32(raw_length);
    if length < 0 {
        return None;
    }
    let body_at = pos.wrapping_add(n);
    let end = body_at.wrapping_add(length as usize);
    let body = data.get(body_at..end)?;
    let attributes = *body.first()? as i8;
    let (raw_timestamp_delta, n) = short_varint(body, 1)?;
    let p = 1usize.wrapping_add(n);
    let (raw_offset_delta, n) = short_varint(body, p)?;
    let p = p.wrapping_add(n);
    let (key, p) = short_bytes(body, p)?;
    let (value, p) = short_bytes(body, p)?;
    let (raw_header_count, n) = short_varint(body, p)?;
    let header_count = unzigzag32(raw_header_count);
    if header_count < 0 {
        return None;
    }
    let headers_start = p.wrapping_add(n);
    let mut p = headers_start;
    for _ in 0..header_count {
        let (raw_key_len, n) = short_varint(body, p)?;
        let key_len = unzigzag32(raw_key_len);
        if key_len < 0 {
            return None;
        }
        p = p.wrapping_add(n).wrapping_add(key_len as usize);
        if p > body.len() {
            return None;
        }
        (_, p) = short_bytes(body, p)?;
    }
    if p != body.len() {
        return None;
    }
    Some((
        V2Record {
            offset: 0,
            timestamp: 0,
            sequence: None,
            offset_delta: unzigzag32(raw_offset_delta),
            timestamp_delta: unzigzag64(u64::from(raw_timestamp_delta)),
            attributes,
            key,
            value,
            headers: Headers {
                buf: body.get(headers_start..).unwrap_or(&[]),
                remaining: header_count as u32,
            },
            position: pos,
            size: end.wrapping_sub(pos),
        },
        end,
    ))
}

/// Parses one record starting at `pos` of `data`, for every input: handles varints of any legal
/// length and reports the first problem of a malformed record with its position (relative to
/// `data`). Returns the record (offset, timestamp and sequence still relative) and the end
/// position.
#[cold]
#[inline(never)]
fn parse_record_full(data: &[u8], pos: usize) -> Result<(V2Record<'_>, usize)> {
    let rest = data.get(pos..).unwrap_or(&[]);
    let (length, n) = read_varint(rest, pos)?;
    let body_at = pos.saturating_add(n);
    let Ok(length) = usize::try_from(length) else {
        return Err(Error::InvalidLength {
            at: pos,
            what: "record length",
            expected: ">= 0".into(),
            found: i64::from(length),
        });
    };
    let body = take(data, body_at, length, 0, "record")?;
    let mut p = 0usize;
    let attributes = *body.first().ok_or(Error::Truncated {
        at: body_at,
        what: "record attributes",
        needed: 1,
        available: 0,
    })? as i8;
    p = p.saturating_add(1);
    let (timestamp_delta, n) =
        read_varlong(body.get(p..).unwrap_or(&[]), body_at.saturating_add(p))?;
    p = p.saturating_add(n);
    let (offset_delta, n) = read_varint(body.get(p..).unwrap_or(&[]), body_at.saturating_add(p))?;
    p = p.saturating_add(n);
    let key = read_bytes(body, &mut p, body_at, "record key")?;
    let value = read_bytes(body, &mut p, body_at, "record value")?;
    let count_at = body_at.saturating_add(p);
    let (header_count, n) = read_varint(body.get(p..).unwrap_or(&[]), count_at)?;
    p = p.saturating_add(n);
    if header_count < 0 {
        return Err(Error::InvalidRecord {
            at: count_at,
            reason: format!("invalid header count {header_count}"),
        });
    }
    let headers_start = p;
    for _ in 0..header_count {
        let key_at = body_at.saturating_add(p);
        let (key_len, n) = read_varint(body.get(p..).unwrap_or(&[]), key_at)?;
        if key_len < 0 {
            return Err(Error::InvalidRecord {
                at: key_at,
                reason: format!("invalid header key length {key_len} (header keys cannot be null)"),
            });
        }
        p = p.saturating_add(n);
        take(body, p, key_len as usize, body_at, "header key")?;
        p = p.saturating_add(key_len as usize);
        read_bytes(body, &mut p, body_at, "header value")?;
    }
    if p != body.len() {
        return Err(Error::InvalidLength {
            at: pos,
            what: "record length",
            expected: format!("{p} (the bytes its fields take)"),
            found: length as i64,
        });
    }
    let headers = Headers {
        buf: body.get(headers_start..).unwrap_or(&[]),
        remaining: header_count as u32,
    };
    Ok((
        V2Record {
            offset: 0,
            timestamp: 0,
            sequence: None,
            offset_delta,
            timestamp_delta,
            attributes,
            key,
            value,
            headers,
            position: pos,
            size: n_total(body_at, pos, length),
        },
        body_at.saturating_add(length),
    ))
}

#[inline]
fn n_total(body_at: usize, pos: usize, length: usize) -> usize {
    body_at.saturating_sub(pos).saturating_add(length)
}

/// Reads a varint length and that many bytes; a negative length is null (Kafka treats every
/// negative length so).
#[inline(always)]
fn read_bytes<'a>(
    body: &'a [u8],
    p: &mut usize,
    body_at: usize,
    what: &'static str,
) -> Result<Option<&'a [u8]>> {
    let (len, n) = read_varint(body.get(*p..).unwrap_or(&[]), body_at.saturating_add(*p))?;
    *p = p.saturating_add(n);
    if len < 0 {
        return Ok(None);
    }
    let bytes = take(body, *p, len as usize, body_at, what)?;
    *p = p.saturating_add(len as usize);
    Ok(Some(bytes))
}

/// One v2 record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V2Record<'a> {
    /// Absolute offset: base offset + offset delta.
    pub offset: i64,
    /// Timestamp: the batch's max timestamp under LogAppendTime, else base timestamp + delta.
    pub timestamp: i64,
    /// Producer sequence of this record (base sequence + offset delta, wrapping), `None` when the
    /// batch has no base sequence.
    pub sequence: Option<i32>,
    /// Offset delta as stored.
    pub offset_delta: i32,
    /// Timestamp delta as stored.
    pub timestamp_delta: i64,
    /// Record attributes byte (unused by Kafka, always 0 when written).
    pub attributes: i8,
    /// Key, `None` for null.
    pub key: Option<&'a [u8]>,
    /// Value, `None` for null.
    pub value: Option<&'a [u8]>,
    /// Headers, in order, duplicates and null values kept.
    pub headers: Headers<'a>,
    /// Position of the record's length varint: absolute in the input for uncompressed batches,
    /// within the decompressed records for compressed ones.
    pub position: usize,
    /// Size of the record including its length varint.
    pub size: usize,
}

/// The headers of a record: a lazily decoded, already validated list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headers<'a> {
    buf: &'a [u8],
    remaining: u32,
}

impl<'a> Headers<'a> {
    /// No headers.
    pub fn empty() -> Self {
        Headers {
            buf: &[],
            remaining: 0,
        }
    }

    /// Number of headers.
    pub fn len(&self) -> usize {
        self.remaining as usize
    }

    /// Whether there are no headers.
    pub fn is_empty(&self) -> bool {
        self.remaining == 0
    }
}

impl<'a> Iterator for Headers<'a> {
    type Item = Header<'a>;

    fn next(&mut self) -> Option<Header<'a>> {
        if self.remaining == 0 {
            return None;
        }
        // Validated when the record was parsed; a failure here means nothing is left.
        let mut p = 0usize;
        let (key_len, n) = read_varint(self.buf, 0).ok()?;
        p = p.saturating_add(n);
        let key = self
            .buf
            .get(p..p.saturating_add(usize::try_from(key_len).ok()?))?;
        p = p.saturating_add(key.len());
        let value = read_bytes(self.buf, &mut p, 0, "header value").ok()?;
        self.buf = self.buf.get(p..)?;
        self.remaining = self.remaining.saturating_sub(1);
        Some(Header { key, value })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining as usize, Some(self.remaining as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::varint::{write_varint, write_varlong};
    use proptest::collection::vec;
    use proptest::prelude::*;

    /// A record's bytes from its fields, lengths written as given (so they may lie).
    #[allow(clippy::type_complexity)]
    fn record_bytes(
        length_adjust: i32,
        timestamp_delta: i64,
        offset_delta: i32,
        key: &Option<Vec<u8>>,
        value: &Option<Vec<u8>>,
        headers: &[(Vec<u8>, Option<Vec<u8>>)],
    ) -> Vec<u8> {
        let sized = |out: &mut Vec<u8>, b: Option<&[u8]>| match b {
            Some(b) => {
                write_varint(out, b.len() as i32);
                out.extend_from_slice(b);
            }
            None => write_varint(out, -1),
        };
        let mut body = vec![0u8];
        write_varlong(&mut body, timestamp_delta);
        write_varint(&mut body, offset_delta);
        sized(&mut body, key.as_deref());
        sized(&mut body, value.as_deref());
        write_varint(&mut body, headers.len() as i32);
        for (k, v) in headers {
            sized(&mut body, Some(k));
            sized(&mut body, v.as_deref());
        }
        let mut out = Vec::new();
        write_varint(&mut out, body.len() as i32 + length_adjust);
        out.extend_from_slice(&body);
        out
    }

    fn delta() -> impl Strategy<Value = i64> {
        prop_oneof![
            -70i64..70,
            -20_000i64..20_000,
            -2_000_000i64..2_000_000,
            any::<i64>()
        ]
    }

    fn bytes() -> impl Strategy<Value = Option<Vec<u8>>> {
        prop_oneof![
            Just(None),
            vec(any::<u8>(), 0..40).prop_map(Some),
            vec(any::<u8>(), 8_000..8_300).prop_map(Some),
        ]
    }

    fn config() -> ProptestConfig {
        ProptestConfig {
            cases: 512,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    }

    proptest! {
        #![proptest_config(config())]

        /// Whatever the fast path accepts, the full parser accepts with the same result; and
        /// well-formed records with short varints do take the fast path.
        #[test]
        fn fast_path_agrees_with_full_parser(
            length_adjust in prop_oneof![Just(0i32), -3i32..3],
            timestamp_delta in delta(),
            offset_delta in delta(),
            key in bytes(),
            value in bytes(),
            headers in vec((vec(any::<u8>(), 0..10), bytes()), 0..4),
            prefix in vec(any::<u8>(), 0..3),
            suffix in vec(any::<u8>(), 0..3),
            flip in proptest::option::of((any::<proptest::sample::Index>(), any::<u8>())),
            cut in proptest::option::of(any::<proptest::sample::Index>()),
        ) {
            let offset_delta = offset_delta as i32;
            let record = record_bytes(
                length_adjust, timestamp_delta, offset_delta, &key, &value, &headers,
            );
            let mut data = prefix.clone();
            data.extend_from_slice(&record);
            data.extend_from_slice(&suffix);
            let pristine = flip.is_none() && cut.is_none();
            if let Some((i, x)) = flip {
                let i = i.index(data.len());
                data[i] ^= x;
            }
            if let Some(c) = cut {
                data.truncate(c.index(data.len() + 1));
            }
            let pos = prefix.len();
            let fast = parse_record_fast(&data, pos);
            let full = parse_record_full(&data, pos);
            if let Some((r, end)) = fast {
                let (r2, end2) = full.expect("the full parser refused what the fast path took");
                prop_assert_eq!(r, r2);
                prop_assert_eq!(end, end2);
            }
            let short = |v: i64| (-(1 << 20)..(1 << 20)).contains(&v);
            if pristine
                && length_adjust == 0
                && short(timestamp_delta)
                && short(i64::from(offset_delta))
            {
                let (r, end) = fast.expect("a well-formed short record missed the fast path");
                prop_assert_eq!(end, pos + record.len());
                prop_assert_eq!(r.key, key.as_deref());
                prop_assert_eq!(r.value, value.as_deref());
                prop_assert_eq!(r.headers.len(), headers.len());
            }
        }
    }
}
