//! Zero-copy reading of log entries in any mix of formats.
//!
//! [`Entries`] walks a buffer of concatenated entries. Every entry starts with
//! `offset: i64, size: i32` and has its magic byte at position 16, so one look at that byte tells
//! the format: 0 or 1 gives a [`LegacyBatch`] (one message, possibly a compressed wrapper), 2 a
//! [`V2Batch`]. Both sit behind the [`Batch`] enum. Records borrow from the input, or for
//! compressed entries from one decompressed buffer the caller provides and may reuse.
//!
//! A buffer that ends inside an entry is not corrupt: fetch responses routinely cut the last batch
//! short. [`Entries`] stops there and [`Entries::partial`] reports the leftover bytes. For a file,
//! where a corrupt size field in the middle would look just like such a tail and hide every
//! entry after it, [`Entries::max_entry_size`] refuses sizes above a bound and
//! [`Entries::strict`] makes any truncated entry an error.
//!
//! Input larger than memory (a file, stdin, a segment read at positions) goes through
//! [`Streamer`] ([`stream`]): one window buffer, bounded whatever the size fields claim, handing
//! each entry to [`Entries`].

mod bytes;
pub mod legacy;
mod owned;
pub mod stream;
pub mod v2;

pub use legacy::{LegacyBatch, LegacyRecord, LegacyRecords};
pub use owned::{OwnedHeader, OwnedRecord};
pub use stream::{Fill, ReadFill, Step, Streamer};
pub use v2::{Headers, RecordsScan, V2Batch, V2Record, V2Records};

use crate::layout::{LOG_OVERHEAD, MAGIC_OFFSET, MIN_ENTRY_SIZE};
use crate::{Compression, Error, Header, Result, TimestampType};
use bytes::{i32_at, i64_at, u8_at};

/// Bytes needed to see the magic byte of an entry (offset, size, 4 more bytes, magic).
const HEADER_SIZE_UP_TO_MAGIC: usize = MAGIC_OFFSET + 1;

/// A truncated entry at the end of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partial {
    /// Absolute position where the truncated entry starts.
    pub position: usize,
    /// Bytes present from there to the end of the buffer.
    pub bytes: usize,
    /// Total size the entry declares (offset and size prefix included), when the size field was
    /// complete.
    pub declared_size: Option<usize>,
}

/// Iterator over the entries of a buffer of concatenated log entries of any format.
///
/// Yields `Result<Batch>`; after an error it yields nothing more. A truncated last entry ends the
/// iteration without an error and is reported by [`Entries::partial`] (the default, right for
/// fetch responses); [`Entries::max_entry_size`] and [`Entries::strict`] make a bad size an
/// error instead, for files.
///
/// # Examples
///
/// ```
/// use krecords_codec::read::Entries;
/// let bytes = [0u8; 5]; // shorter than any entry
/// let mut entries = Entries::new(&bytes);
/// assert!(entries.next().is_none());
/// assert_eq!(entries.partial().unwrap().bytes, 5);
/// ```
#[derive(Debug, Clone)]
pub struct Entries<'a> {
    buf: &'a [u8],
    /// Position of the next entry within `buf`.
    pos: usize,
    /// Absolute position of `buf[0]` (non-zero when the caller hands in a window of a file).
    base: usize,
    /// Set once iteration ended (end of input, partial tail or error).
    done: bool,
    partial: Option<Partial>,
    /// Largest size field accepted, if bounded ([`Entries::max_entry_size`]).
    max_size: Option<usize>,
    /// Whether a truncated entry is an error ([`Entries::strict`]).
    strict: bool,
}

impl<'a> Entries<'a> {
    /// Iterates the entries of `buf`; positions are reported relative to `buf[0]`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self::with_base(buf, 0)
    }

    /// Iterates the entries of `buf`, reporting positions as `base + index into buf` (for a window
    /// of a larger file).
    pub fn with_base(buf: &'a [u8], base: usize) -> Self {
        // Positions are `base + index`; keep them representable whatever the caller passes.
        let base = base.min(usize::MAX.saturating_sub(buf.len()));
        Entries {
            buf,
            pos: 0,
            base,
            done: false,
            partial: None,
            max_size: None,
            strict: false,
        }
    }

    /// Refuses entries whose size field (the bytes after the 12-byte offset and size prefix)
    /// is above `max`, with [`Error::InvalidLength`], whether or not the buffer holds that many
    /// bytes. Kafka's `ByteBufferLogInputStream` bounds a produce request's batches so, by
    /// `max.message.bytes`. Without it a size field that corruption made large in the middle of
    /// a buffer ends iteration as a [`Partial`] tail, and the entries after it are not seen.
    ///
    /// ```
    /// use krecords_codec::read::Entries;
    /// use krecords_codec::write::{NewRecord, V2Builder};
    ///
    /// let mut b = V2Builder::new(0);
    /// b.append(&NewRecord::new(1714000000000, None, Some(b"x"))).unwrap();
    /// let one = b.finish().unwrap();
    /// let mut file = [one.clone(), one.clone()].concat();
    /// file[8..12].copy_from_slice(&100_000_000i32.to_be_bytes()); // a corrupt size
    ///
    /// // By default: a "partial tail" at byte 0, nothing read, no error.
    /// let mut lax = Entries::new(&file);
    /// assert!(lax.next().is_none());
    /// assert_eq!(lax.partial().unwrap().position, 0);
    /// // Bounded: an error naming the size field.
    /// let mut bounded = Entries::new(&file).max_entry_size(1 << 20);
    /// assert!(bounded.next().unwrap().is_err());
    /// ```
    pub fn max_entry_size(mut self, max: usize) -> Self {
        self.max_size = Some(max);
        self
    }

    /// Makes a truncated entry an error ([`Error::Truncated`]) instead of a [`Partial`] tail:
    /// for buffers that must hold whole entries only, such as a closed segment file or a
    /// file of entries to append. [`Entries::partial`] then stays `None`.
    ///
    /// ```
    /// use krecords_codec::read::Entries;
    /// use krecords_codec::Error;
    /// let bytes = [0u8; 5]; // shorter than any entry
    /// let mut entries = Entries::new(&bytes).strict();
    /// assert!(matches!(entries.next(), Some(Err(Error::Truncated { at: 0, .. }))));
    /// assert!(entries.next().is_none());
    /// ```
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }

    /// The truncated entry that ended iteration, if any.
    pub fn partial(&self) -> Option<Partial> {
        self.partial
    }

    /// Absolute position of the next entry (after iteration: the end of the last complete entry,
    /// or the position of the error).
    pub fn next_position(&self) -> usize {
        self.base.saturating_add(self.pos)
    }

    /// Bytes not consumed by complete entries so far.
    pub fn remaining(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    /// Returns the next entry, `Ok(None)` at the end of the input or at a truncated tail.
    ///
    /// # Errors
    ///
    /// An entry whose size is below the minimum, whose magic is not 0..2, or whose fixed header
    /// does not fit its declared size; iteration stops after the first error.
    pub fn next_entry(&mut self) -> Result<Option<Batch<'a>>> {
        if self.done {
            return Ok(None);
        }
        let rest = self.remaining();
        let at = self.next_position();
        if rest.is_empty() {
            self.done = true;
            return Ok(None);
        }
        let Some(EntryPrefix { size, .. }) = EntryPrefix::parse(rest) else {
            return self.stop_partial(None);
        };
        if size < MIN_ENTRY_SIZE {
            self.done = true;
            return Err(Error::InvalidLength {
                at: at.saturating_add(8),
                what: "entry size",
                expected: format!(">= {MIN_ENTRY_SIZE}"),
                found: i64::from(size),
            });
        }
        // size >= 14 here, so the conversion cannot fail; total cannot overflow on 64-bit.
        let total = (size as usize).saturating_add(LOG_OVERHEAD);
        if let Some(max) = self.max_size.filter(|&max| size as usize > max) {
            self.done = true;
            return Err(Error::InvalidLength {
                at: at.saturating_add(8),
                what: "entry size",
                expected: format!("<= {max} (the maximum entry size)"),
                found: i64::from(size),
            });
        }
        if rest.len() < HEADER_SIZE_UP_TO_MAGIC {
            return self.stop_partial(Some(total));
        }
        let magic = u8_at(rest, MAGIC_OFFSET) as i8;
        if !(0..=2).contains(&magic) {
            self.done = true;
            return Err(Error::InvalidMagic {
                at: at.saturating_add(MAGIC_OFFSET),
                found: magic,
            });
        }
        let Some(entry) = rest.get(..total) else {
            return self.stop_partial(Some(total));
        };
        let batch = if magic == 2 {
            V2Batch::new(entry, at).map(Batch::V2)
        } else {
            LegacyBatch::new(entry, at).map(Batch::Legacy)
        };
        match batch {
            Ok(b) => {
                self.pos = self.pos.saturating_add(total);
                Ok(Some(b))
            }
            Err(e) => {
                self.done = true;
                Err(e)
            }
        }
    }

    /// Ends iteration at a truncated entry: a [`Partial`] tail, or in strict mode an error.
    fn stop_partial(&mut self, declared_size: Option<usize>) -> Result<Option<Batch<'a>>> {
        self.done = true;
        let partial = Partial {
            position: self.next_position(),
            bytes: self.remaining().len(),
            declared_size,
        };
        if self.strict {
            return Err(Error::Truncated {
                at: partial.position,
                what: "entry",
                needed: declared_size.unwrap_or(LOG_OVERHEAD),
                available: partial.bytes,
            });
        }
        self.partial = Some(partial);
        Ok(None)
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<Batch<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().transpose()
    }
}

/// One log entry: a v0/v1 message or a v2 record batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch<'a> {
    /// Magic 0 or 1: one message, possibly a compressed wrapper around inner messages.
    Legacy(LegacyBatch<'a>),
    /// Magic 2: a record batch.
    V2(V2Batch<'a>),
}

/// The 12-byte prefix every entry starts with, whatever its format: an offset (a v2 batch's base
/// offset, a v0/v1 entry's last offset) and the size of the bytes that follow. Tools that walk
/// entries without parsing them (positioning, counting, sizing a read) read it here.
///
/// ```
/// use krecords_codec::read::EntryPrefix;
///
/// let mut bytes = 42i64.to_be_bytes().to_vec();
/// bytes.extend_from_slice(&61i32.to_be_bytes());
/// let p = EntryPrefix::parse(&bytes).unwrap();
/// assert_eq!((p.offset, p.size, p.entry_len()), (42, 61, Some(73)));
/// assert_eq!(EntryPrefix::parse(&bytes[..11]), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryPrefix {
    /// The offset field.
    pub offset: i64,
    /// The size field as stored: in damaged input it may be negative or far too large.
    pub size: i32,
}

impl EntryPrefix {
    /// The prefix at the start of `buf`; `None` when `buf` holds fewer than
    /// [`LOG_OVERHEAD`] bytes.
    pub fn parse(buf: &[u8]) -> Option<EntryPrefix> {
        let b = buf.get(..LOG_OVERHEAD)?;
        Some(EntryPrefix {
            offset: i64_at(b, 0),
            size: i32_at(b, 8),
        })
    }

    /// The whole entry's length, prefix included, when the size field is at least
    /// [`MIN_ENTRY_SIZE`]; `None` for a size no entry can have (damaged input).
    pub fn entry_len(&self) -> Option<u64> {
        let size = u64::try_from(self.size)
            .ok()
            .filter(|_| self.size >= MIN_ENTRY_SIZE)?;
        size.checked_add(LOG_OVERHEAD as u64)
    }
}

/// The fields only a v2 batch header has beyond offsets, timestamps and the codec: producer
/// state, the transactional and control flags, the partition leader epoch and the delete
/// horizon. A v0/v1 entry has none of them and reads as [`V2HeaderFields::NONE`], the values a
/// v2 batch carries when they are unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct V2HeaderFields {
    /// Partition leader epoch as stored (-1: unset).
    pub partition_leader_epoch: i32,
    /// Producer id as stored (-1: none).
    pub producer_id: i64,
    /// Producer epoch as stored (-1: none).
    pub producer_epoch: i16,
    /// Base sequence as stored (-1: none).
    pub base_sequence: i32,
    /// The transactional flag.
    pub transactional: bool,
    /// The control flag.
    pub control: bool,
    /// The delete horizon (KIP-534), when the batch has one.
    pub delete_horizon_ms: Option<i64>,
}

impl V2HeaderFields {
    /// No producer, no epoch, not transactional, not control, no delete horizon.
    pub const NONE: V2HeaderFields = V2HeaderFields {
        partition_leader_epoch: -1,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        transactional: false,
        control: false,
        delete_horizon_ms: None,
    };
}

impl<'a> Batch<'a> {
    /// The entry's v2-only header fields ([`V2HeaderFields::NONE`] for v0/v1).
    ///
    /// ```
    /// use krecords_codec::read::{Entries, V2HeaderFields};
    /// use krecords_codec::write::{NewRecord, V2Builder};
    ///
    /// let mut b = V2Builder::new(0).producer(7, 0, 0);
    /// b.append(&NewRecord::new(1714000000000, None, Some(b"x"))).unwrap();
    /// let bytes = b.finish().unwrap();
    /// let fields = Entries::new(&bytes).next().unwrap().unwrap().v2_header_fields();
    /// assert_eq!(fields.producer_id, 7);
    /// assert_eq!(V2HeaderFields { producer_id: 7, producer_epoch: 0, base_sequence: 0, ..V2HeaderFields::NONE }, fields);
    /// ```
    pub fn v2_header_fields(&self) -> V2HeaderFields {
        match self {
            Batch::Legacy(_) => V2HeaderFields::NONE,
            Batch::V2(b) => V2HeaderFields {
                partition_leader_epoch: b.raw_partition_leader_epoch(),
                producer_id: b.raw_producer_id(),
                producer_epoch: b.raw_producer_epoch(),
                base_sequence: b.raw_base_sequence(),
                transactional: b.is_transactional(),
                control: b.is_control(),
                delete_horizon_ms: b.delete_horizon_ms(),
            },
        }
    }

    /// The whole entry, offset and size prefix included.
    pub fn as_bytes(&self) -> &'a [u8] {
        match self {
            Batch::Legacy(b) => b.as_bytes(),
            Batch::V2(b) => b.as_bytes(),
        }
    }

    /// Absolute position of the entry in the buffer it was read from.
    pub fn position(&self) -> usize {
        match self {
            Batch::Legacy(b) => b.position(),
            Batch::V2(b) => b.position(),
        }
    }

    /// Size of the whole entry including the 12-byte offset and size prefix.
    pub fn size_in_bytes(&self) -> usize {
        self.as_bytes().len()
    }

    /// The magic byte: 0, 1 or 2.
    pub fn magic(&self) -> u8 {
        match self {
            Batch::Legacy(b) => b.magic(),
            Batch::V2(_) => 2,
        }
    }

    /// The offset field of the entry: the base offset for v2, the (last) offset for v0/v1.
    pub fn offset_field(&self) -> i64 {
        i64_at(self.as_bytes(), 0)
    }

    /// The first offset, when the header holds it: a v2 batch's base offset, an uncompressed
    /// v0/v1 message's offset. `None` for a compressed v0/v1 wrapper, whose first offset is its
    /// first inner message's: [`Batch::record_span`] decompresses to find it.
    ///
    /// ```
    /// use krecords_codec::read::Entries;
    /// use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
    /// use krecords_codec::Compression;
    ///
    /// let mut b = V2Builder::new(40);
    /// b.append(&NewRecord::new(1714000000000, None, Some(b"a"))).unwrap();
    /// b.append(&NewRecord::new(1714000000000, None, Some(b"b"))).unwrap();
    /// let v2 = b.finish().unwrap();
    /// let batch = Entries::new(&v2).next().unwrap().unwrap();
    /// assert_eq!((batch.first_offset(), batch.last_offset()), (Some(40), 41));
    ///
    /// let mut b = LegacyBuilder::new(1, 40).unwrap().compression(Compression::Gzip, None).unwrap();
    /// b.append(&NewRecord::new(1714000000000, None, Some(b"a"))).unwrap();
    /// b.append(&NewRecord::new(1714000000000, None, Some(b"b"))).unwrap();
    /// let wrapper = b.finish().unwrap();
    /// let batch = Entries::new(&wrapper).next().unwrap().unwrap();
    /// assert_eq!((batch.first_offset(), batch.last_offset()), (None, 41));
    /// ```
    pub fn first_offset(&self) -> Option<i64> {
        match self {
            Batch::Legacy(b) if b.is_compressed() => None,
            Batch::Legacy(b) => Some(b.offset()),
            Batch::V2(b) => Some(b.base_offset()),
        }
    }

    /// The last offset the entry covers: `base_offset + last_offset_delta` for v2, the offset
    /// field for v0/v1 (a wrapper carries its last inner offset, except a v1 wrapper with offset
    /// 0, whose inner offsets are taken as they are; [`Batch::record_span`] reads them).
    pub fn last_offset(&self) -> i64 {
        match self {
            Batch::Legacy(b) => b.offset(),
            Batch::V2(b) => b.last_offset(),
        }
    }

    /// The number of records, when the header holds it: a v2 batch's records count (`None` if
    /// negative, which only corrupt input has), 1 for an uncompressed v0/v1 message. `None` for a
    /// compressed v0/v1 wrapper: [`Batch::record_span`] decompresses to count its inner messages.
    ///
    /// ```
    /// use krecords_codec::read::Entries;
    /// use krecords_codec::write::{NewRecord, V2Builder};
    ///
    /// let mut b = V2Builder::new(0);
    /// for v in [b"a", b"b", b"c"] {
    ///     b.append(&NewRecord::new(1714000000000, None, Some(v))).unwrap();
    /// }
    /// let bytes = b.finish().unwrap();
    /// let batch = Entries::new(&bytes).next().unwrap().unwrap();
    /// assert_eq!(batch.record_count(), Some(3));
    /// ```
    pub fn record_count(&self) -> Option<usize> {
        match self {
            Batch::Legacy(b) if b.is_compressed() => None,
            Batch::Legacy(_) => Some(1),
            Batch::V2(b) => usize::try_from(b.records_count()).ok(),
        }
    }

    /// First offset, last offset and number of records, for every format. A v2 batch and an
    /// uncompressed v0/v1 message answer from their header (`scratch` is untouched); a compressed
    /// v0/v1 wrapper decompresses into `scratch` (at most `limit` bytes) and reads its inner
    /// messages, as [`Batch::records`] does.
    ///
    /// For v2 the first offset is the base offset and the last offset the header's (both kept
    /// through compaction, so they may lie outside the offsets of the records left); the count is
    /// the header's.
    ///
    /// # Errors
    ///
    /// A negative v2 records count, and for a wrapper the errors of [`Batch::records`] and of its
    /// records.
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_codec::read::{Entries, RecordSpan};
    /// use krecords_codec::write::{LegacyBuilder, NewRecord};
    /// use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};
    ///
    /// let mut b = LegacyBuilder::new(1, 40).unwrap().compression(Compression::Gzip, None).unwrap();
    /// b.append(&NewRecord::new(1714000000000, None, Some(b"a"))).unwrap();
    /// b.append(&NewRecord::new(1714000000000, None, Some(b"b"))).unwrap();
    /// let wrapper = b.finish().unwrap();
    /// let batch = Entries::new(&wrapper).next().unwrap().unwrap();
    /// let mut scratch = Vec::new();
    /// let span = batch.record_span(&mut scratch, DEFAULT_DECOMPRESS_LIMIT).unwrap();
    /// assert_eq!(span, RecordSpan { first_offset: 40, last_offset: 41, count: 2 });
    /// ```
    pub fn record_span(&self, scratch: &mut Vec<u8>, limit: usize) -> Result<RecordSpan> {
        match self {
            Batch::V2(b) => {
                let count = b.records_count();
                let count = usize::try_from(count).map_err(|_| Error::InvalidLength {
                    at: b
                        .position()
                        .saturating_add(crate::layout::v2::RECORDS_COUNT_OFFSET),
                    what: "records count",
                    expected: ">= 0".into(),
                    found: i64::from(count),
                })?;
                Ok(RecordSpan {
                    first_offset: b.base_offset(),
                    last_offset: b.last_offset(),
                    count,
                })
            }
            Batch::Legacy(b) if !b.is_compressed() => Ok(RecordSpan {
                first_offset: b.offset(),
                last_offset: b.offset(),
                count: 1,
            }),
            Batch::Legacy(b) => {
                let mut span: Option<RecordSpan> = None;
                for record in b.records(scratch, limit)? {
                    let offset = record?.offset;
                    match &mut span {
                        None => {
                            span = Some(RecordSpan {
                                first_offset: offset,
                                last_offset: offset,
                                count: 1,
                            })
                        }
                        Some(s) => {
                            s.last_offset = offset;
                            s.count = s.count.saturating_add(1);
                        }
                    }
                }
                // `records` refuses a wrapper without inner messages.
                span.ok_or(Error::InvalidRecord {
                    at: b.position(),
                    reason: "compressed message set has no inner messages".into(),
                })
            }
        }
    }

    /// Producer id of an idempotent or transactional v2 batch; `None` when not set (-1) and for
    /// v0/v1, which have no producer fields.
    ///
    /// ```
    /// use krecords_codec::read::Entries;
    /// use krecords_codec::write::{NewRecord, V2Builder};
    ///
    /// let mut b = V2Builder::new(0).producer(7, 2, 10).transactional(true);
    /// b.append(&NewRecord::new(1714000000000, None, Some(b"x"))).unwrap();
    /// let bytes = b.finish().unwrap();
    /// let batch = Entries::new(&bytes).next().unwrap().unwrap();
    /// assert_eq!(batch.producer_id(), Some(7));
    /// assert_eq!(batch.producer_epoch(), Some(2));
    /// assert_eq!(batch.base_sequence(), Some(10));
    /// assert!(batch.is_transactional() && !batch.is_control());
    /// ```
    pub fn producer_id(&self) -> Option<i64> {
        match self {
            Batch::Legacy(_) => None,
            Batch::V2(b) => b.producer_id(),
        }
    }

    /// Producer epoch of a v2 batch; `None` when not set (-1) and for v0/v1.
    pub fn producer_epoch(&self) -> Option<i16> {
        match self {
            Batch::Legacy(_) => None,
            Batch::V2(b) => b.producer_epoch(),
        }
    }

    /// Base sequence of a v2 batch (the first record's sequence); `None` when not set (-1) and
    /// for v0/v1.
    pub fn base_sequence(&self) -> Option<i32> {
        match self {
            Batch::Legacy(_) => None,
            Batch::V2(b) => b.base_sequence(),
        }
    }

    /// Whether the entry is part of a transaction (v2 attributes bit 4; never for v0/v1).
    pub fn is_transactional(&self) -> bool {
        match self {
            Batch::Legacy(_) => false,
            Batch::V2(b) => b.is_transactional(),
        }
    }

    /// Whether the entry is a control batch, holding control records (transaction markers,
    /// KRaft records) rather than data (v2 attributes bit 5; never for v0/v1).
    pub fn is_control(&self) -> bool {
        match self {
            Batch::Legacy(_) => false,
            Batch::V2(b) => b.is_control(),
        }
    }

    /// The max timestamp as Kafka's `RecordBatch.maxTimestamp` reports it: the v2 header field
    /// (the largest record timestamp, or the append time under LogAppendTime), a v1 message's
    /// timestamp (a wrapper's: its largest inner timestamp or its append time), and -1 (Kafka's
    /// `NO_TIMESTAMP`) for v0.
    ///
    /// ```
    /// use krecords_codec::read::Entries;
    /// use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
    ///
    /// let mut b = V2Builder::new(0);
    /// b.append(&NewRecord::new(1714000000005, None, Some(b"a"))).unwrap();
    /// b.append(&NewRecord::new(1714000000001, None, Some(b"b"))).unwrap();
    /// let bytes = b.finish().unwrap();
    /// assert_eq!(Entries::new(&bytes).next().unwrap().unwrap().max_timestamp(), 1714000000005);
    ///
    /// let mut b = LegacyBuilder::new(0, 0).unwrap();
    /// b.append(&NewRecord::new(-1, None, Some(b"a"))).unwrap();
    /// let v0 = b.finish().unwrap();
    /// assert_eq!(Entries::new(&v0).next().unwrap().unwrap().max_timestamp(), -1);
    /// ```
    pub fn max_timestamp(&self) -> i64 {
        match self {
            Batch::V2(b) => b.max_timestamp(),
            Batch::Legacy(b) => b.timestamp().unwrap_or(-1),
        }
    }

    /// The partition leader epoch of a v2 batch; `None` when not set (-1) and for v0/v1.
    pub fn partition_leader_epoch(&self) -> Option<i32> {
        match self {
            Batch::Legacy(_) => None,
            Batch::V2(b) => b.partition_leader_epoch(),
        }
    }

    /// The stored checksum (CRC-32 for v0/v1, CRC-32C for v2).
    pub fn crc(&self) -> u32 {
        match self {
            Batch::Legacy(b) => b.crc(),
            Batch::V2(b) => b.crc(),
        }
    }

    /// The checksum computed over the bytes the stored one covers.
    pub fn compute_crc(&self) -> u32 {
        match self {
            Batch::Legacy(b) => b.compute_crc(),
            Batch::V2(b) => b.compute_crc(),
        }
    }

    /// Whether the stored checksum matches.
    pub fn is_crc_valid(&self) -> bool {
        self.crc() == self.compute_crc()
    }

    /// The compression codec (for v0/v1, the wrapper's; inner messages are uncompressed).
    ///
    /// # Errors
    ///
    /// [`Error::UnknownCompression`] for codec ids 5..7.
    pub fn compression(&self) -> Result<Compression> {
        match self {
            Batch::Legacy(b) => b.compression(),
            Batch::V2(b) => b.compression(),
        }
    }

    /// The timestamp type: `NoTimestamp` for v0, CreateTime or LogAppendTime (attributes bit 3)
    /// for v1 and v2.
    pub fn timestamp_type(&self) -> TimestampType {
        match self {
            Batch::Legacy(b) => b.timestamp_type(),
            Batch::V2(b) => b.timestamp_type(),
        }
    }

    /// Checks everything that can be checked: CRC, lengths, record count, and for compressed
    /// entries the decompressed contents (bounded by [`crate::DEFAULT_DECOMPRESS_LIMIT`]). To
    /// read the records too, iterate [`Batch::checked_records`] instead of calling this and then
    /// [`Batch::records`]: it checks the same with one decompression.
    ///
    /// # Errors
    ///
    /// The first problem found.
    pub fn validate(&self) -> Result<()> {
        let mut scratch = Vec::new();
        self.validate_with(&mut scratch, crate::DEFAULT_DECOMPRESS_LIMIT)
    }

    /// As [`Batch::validate`], decompressing into `scratch` with at most `limit` bytes.
    ///
    /// # Errors
    ///
    /// The first problem found.
    pub fn validate_with(&self, scratch: &mut Vec<u8>, limit: usize) -> Result<()> {
        match self {
            Batch::Legacy(b) => b.validate_with(scratch, limit),
            Batch::V2(b) => b.validate_with(scratch, limit),
        }
    }

    /// Iterates the records of the entry. Compressed entries decompress into `scratch` (cleared
    /// first, at most `limit` bytes) and the records borrow from it; uncompressed entries borrow
    /// from the input.
    ///
    /// This does **not** check the CRC: a corrupted entry may yield wrong records (keys, values,
    /// offsets, timestamps) without any error. It is for input already checked (such as a
    /// batch the caller just built, or one [`Batch::validate`]d before); for anything read from
    /// disk or the network use [`Batch::checked_records`], which checks and decompresses once.
    ///
    /// # Errors
    ///
    /// Decompression failures and, for v0/v1 wrappers, the structural errors Kafka raises before
    /// iterating (empty wrapper, null value, bad wrapper offset).
    pub fn records<'b>(&self, scratch: &'b mut Vec<u8>, limit: usize) -> Result<Records<'b>>
    where
        'a: 'b,
    {
        match self {
            Batch::Legacy(b) => b.records(scratch, limit).map(Records::Legacy),
            Batch::V2(b) => b.records(scratch, limit).map(Records::V2),
        }
    }

    /// Checks the entry and iterates its records, decompressing once: the CRC before the first
    /// record, then each record as it is parsed (v0/v1 wrappers: each inner message's CRC).
    /// This is exactly what Kafka's consumer checks (`check.crcs=true`), and it accepts what
    /// Kafka's reader accepts (the differential tests against Kafka 4.4.0 hold it to that), at
    /// the cost of [`Batch::records`] alone.
    ///
    /// [`Batch::validate_with`] is stricter, as the broker is with a producer's batch: it also
    /// refuses a v2 records count that disagrees with the last offset delta, a record whose
    /// offset delta falls outside its batch, and v0/v1 message bytes its fields do not account
    /// for. Kafka's reader takes those, and so does this.
    ///
    /// `scratch` and `limit` are as for [`Batch::records`]; pass
    /// [`DEFAULT_DECOMPRESS_LIMIT`](crate::DEFAULT_DECOMPRESS_LIMIT) unless you know better, so
    /// that a small compressed batch cannot claim unbounded memory.
    ///
    /// # Errors
    ///
    /// [`Error::CrcMismatch`] and the other header problems before iterating, and those of
    /// [`Batch::records`]; a record that fails its check is an error in its place, after which
    /// the iterator yields nothing more.
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_codec::read::Entries;
    /// use krecords_codec::write::{NewRecord, V2Builder};
    /// use krecords_codec::{Compression, Error, DEFAULT_DECOMPRESS_LIMIT};
    ///
    /// let mut b = V2Builder::new(0).compression(Compression::Lz4, None);
    /// b.append(&NewRecord::new(1714000000000, None, Some(b"hello"))).unwrap();
    /// let mut bytes = b.finish().unwrap();
    ///
    /// let mut scratch = Vec::new();
    /// let batch = Entries::new(&bytes).next().unwrap().unwrap();
    /// let values: Vec<Vec<u8>> = batch
    ///     .checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
    ///     .unwrap()
    ///     .map(|r| r.map(|r| r.value().unwrap_or_default().to_vec()))
    ///     .collect::<Result<_, Error>>()
    ///     .unwrap();
    /// assert_eq!(values, [b"hello".to_vec()]);
    ///
    /// // One flipped bit in the records is caught before any record is read.
    /// let last = bytes.len() - 1;
    /// bytes[last] ^= 1;
    /// let batch = Entries::new(&bytes).next().unwrap().unwrap();
    /// let e = batch.checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT).unwrap_err();
    /// assert!(matches!(e, Error::CrcMismatch { .. }));
    /// ```
    pub fn checked_records<'b>(&self, scratch: &'b mut Vec<u8>, limit: usize) -> Result<Records<'b>>
    where
        'a: 'b,
    {
        match self {
            Batch::Legacy(b) => b.checked_records(scratch, limit).map(Records::Legacy),
            Batch::V2(b) => b.checked_records(scratch, limit).map(Records::V2),
        }
    }
}

/// [`Error::CrcMismatch`] at `at` unless the stored checksum is the computed one: the check that
/// opens every entry's `checked_records`, whatever its format.
#[inline]
pub(crate) fn check_crc(at: usize, stored: u32, computed: u32) -> Result<()> {
    if stored == computed {
        Ok(())
    } else {
        Err(Error::CrcMismatch {
            at,
            stored,
            computed,
        })
    }
}

/// First offset, last offset and number of records of an entry, from [`Batch::record_span`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordSpan {
    /// Offset of the first record (a v2 batch's base offset).
    pub first_offset: i64,
    /// Offset of the last record (a v2 batch's `base_offset + last_offset_delta`).
    pub last_offset: i64,
    /// Number of records (a v2 batch's records count).
    pub count: usize,
}

/// Iterator over the records of a [`Batch`].
#[derive(Debug, Clone)]
pub enum Records<'a> {
    /// Records of a v0/v1 entry.
    Legacy(LegacyRecords<'a>),
    /// Records of a v2 batch.
    V2(V2Records<'a>),
}

impl<'a> Records<'a> {
    /// The bytes the records borrow from (for a compressed entry, the decompressed records).
    pub(crate) fn data(&self) -> &'a [u8] {
        match self {
            Records::Legacy(r) => r.data(),
            Records::V2(r) => r.data(),
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Records::Legacy(r) => r.next().map(|r| r.map(Record::Legacy)),
            Records::V2(r) => r.next_as(Record::V2),
        }
    }
}

/// One record of any format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record<'a> {
    /// A v0/v1 message (for a wrapper, one inner message with its absolute offset).
    Legacy(LegacyRecord<'a>),
    /// A v2 record.
    V2(V2Record<'a>),
}

impl<'a> Record<'a> {
    /// Absolute offset.
    #[inline]
    pub fn offset(&self) -> i64 {
        match self {
            Record::Legacy(r) => r.offset,
            Record::V2(r) => r.offset,
        }
    }

    /// Timestamp with LogAppendTime applied; `None` for v0.
    #[inline]
    pub fn timestamp(&self) -> Option<i64> {
        match self {
            Record::Legacy(r) => r.timestamp,
            Record::V2(r) => Some(r.timestamp),
        }
    }

    /// Key, `None` for a null key.
    #[inline]
    pub fn key(&self) -> Option<&'a [u8]> {
        match self {
            Record::Legacy(r) => r.key,
            Record::V2(r) => r.key,
        }
    }

    /// Value, `None` for a null value (a tombstone).
    #[inline]
    pub fn value(&self) -> Option<&'a [u8]> {
        match self {
            Record::Legacy(r) => r.value,
            Record::V2(r) => r.value,
        }
    }

    /// Headers in order (always empty for v0/v1).
    #[inline]
    pub fn headers(&self) -> Headers<'a> {
        match self {
            Record::Legacy(_) => Headers::empty(),
            Record::V2(r) => r.headers,
        }
    }

    /// Collects the headers into a vector.
    pub fn header_vec(&self) -> Vec<Header<'a>> {
        self.headers().collect()
    }
}
