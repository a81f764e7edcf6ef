//! Where every field of every entry format sits: the one definition of Kafka's byte layouts that
//! the readers ([`read`](crate::read)), the writers ([`write`](crate::write)), in-place patching
//! ([`patch`](crate::patch)), the field walker ([`explain`](crate::explain)) and the log's
//! segments all use.
//!
//! Every entry of every format starts with the same 12 bytes (the log overhead: offset and size)
//! and has its magic byte at [`MAGIC_OFFSET`]; what follows depends on the magic: [`v2`] for a
//! record batch, [`legacy`] for a v0/v1 message.
//!
//! ```
//! use krecords_codec::layout::{self, v2};
//! use krecords_codec::write::{NewRecord, V2Builder};
//!
//! let mut b = V2Builder::new(7);
//! b.append(&NewRecord::new(1714000000000, None, Some(b"x"))).unwrap();
//! let bytes = b.finish().unwrap();
//! assert_eq!(bytes[layout::MAGIC_OFFSET], 2);
//! let count = &bytes[v2::RECORDS_COUNT_OFFSET..v2::RECORDS_OFFSET];
//! assert_eq!(count, 1i32.to_be_bytes());
//! ```

/// Position of the offset field (i64) that every entry starts with.
pub const OFFSET_OFFSET: usize = 0;
/// Position of the size field (i32): the bytes of the entry after it.
pub const SIZE_OFFSET: usize = OFFSET_OFFSET + 8;
/// Size of the `offset` (i64) + `size` (i32) prefix that every log entry of every format starts
/// with. Kafka calls it `LOG_OVERHEAD`.
pub const LOG_OVERHEAD: usize = SIZE_OFFSET + 4;
/// Position of the magic byte in every entry, whatever its format.
pub const MAGIC_OFFSET: usize = 16;
/// Smallest possible entry size field: a v0 message with null key and value
/// (crc 4 + magic 1 + attributes 1 + key length 4 + value length 4). Kafka's
/// `LegacyRecord.RECORD_OVERHEAD_V0`.
pub const MIN_ENTRY_SIZE: i32 = 14;

/// Magic 2: the record batch.
///
/// ```text
/// offset  size  field                      covered by CRC-32C
///      0     8  base offset
///      8     4  batch length (bytes after this field)
///     12     4  partition leader epoch
///     16     1  magic (2)
///     17     4  crc (CRC-32C of bytes 21..end)
///     21     2  attributes                   ┐
///     23     4  last offset delta            │
///     27     8  base timestamp               │
///     35     8  max timestamp                │
///     43     8  producer id                  │
///     51     2  producer epoch               │
///     53     4  base sequence                │
///     57     4  records count                │
///     61     …  records (compressed whole)   ┘
/// ```
///
/// A record: `length: varint`, then `attributes: i8, timestamp delta: varlong,
/// offset delta: varint, key length: varint, key, value length: varint, value,
/// header count: varint, headers [key length: varint, key, value length: varint, value]`.
pub mod v2 {
    /// Position of the base offset.
    pub const BASE_OFFSET_OFFSET: usize = super::OFFSET_OFFSET;
    /// Position of the batch length.
    pub const LENGTH_OFFSET: usize = super::SIZE_OFFSET;
    /// Position of the partition leader epoch.
    pub const PARTITION_LEADER_EPOCH_OFFSET: usize = LENGTH_OFFSET + 4;
    /// Position of the magic byte.
    pub const MAGIC_OFFSET: usize = PARTITION_LEADER_EPOCH_OFFSET + 4;
    /// Position of the CRC-32C.
    pub const CRC_OFFSET: usize = MAGIC_OFFSET + 1;
    /// Position of the attributes; the CRC covers from here to the end.
    pub const ATTRIBUTES_OFFSET: usize = CRC_OFFSET + 4;
    /// Position of the last offset delta.
    pub const LAST_OFFSET_DELTA_OFFSET: usize = ATTRIBUTES_OFFSET + 2;
    /// Position of the base timestamp.
    pub const BASE_TIMESTAMP_OFFSET: usize = LAST_OFFSET_DELTA_OFFSET + 4;
    /// Position of the max timestamp.
    pub const MAX_TIMESTAMP_OFFSET: usize = BASE_TIMESTAMP_OFFSET + 8;
    /// Position of the producer id.
    pub const PRODUCER_ID_OFFSET: usize = MAX_TIMESTAMP_OFFSET + 8;
    /// Position of the producer epoch.
    pub const PRODUCER_EPOCH_OFFSET: usize = PRODUCER_ID_OFFSET + 8;
    /// Position of the base sequence.
    pub const BASE_SEQUENCE_OFFSET: usize = PRODUCER_EPOCH_OFFSET + 2;
    /// Position of the records count.
    pub const RECORDS_COUNT_OFFSET: usize = BASE_SEQUENCE_OFFSET + 4;
    /// Position of the first record; also the size of the batch header (Kafka's
    /// `RECORD_BATCH_OVERHEAD`, 61).
    pub const RECORDS_OFFSET: usize = RECORDS_COUNT_OFFSET + 4;

    /// Attributes bits 0..2: the compression codec.
    pub const COMPRESSION_MASK: i16 = 0x07;
    /// Attributes bit 3: LogAppendTime.
    pub const TIMESTAMP_TYPE_MASK: i16 = 0x08;
    /// Attributes bit 4: part of a transaction.
    pub const TRANSACTIONAL_MASK: i16 = 0x10;
    /// Attributes bit 5: a control batch (transaction markers, KRaft records).
    pub const CONTROL_MASK: i16 = 0x20;
    /// Attributes bit 6: the base timestamp holds the delete horizon (compaction).
    pub const DELETE_HORIZON_MASK: i16 = 0x40;
    /// Attributes bits 7..15: unused, written as 0.
    pub const UNUSED_ATTRIBUTES_MASK: u16 = 0xff80;

    /// The fewest bytes a record can take: length, attributes, timestamp delta, offset delta,
    /// key length, value length and header count, one byte each.
    pub const MIN_RECORD_SIZE: usize = 7;

    /// Bytes of an entry that [`HeaderPeek::parse`](crate::read::v2::HeaderPeek::parse)
    /// reads: through the last offset delta.
    pub const PEEK_LEN: usize = LAST_OFFSET_DELTA_OFFSET + 4;

    const _: () = assert!(MAGIC_OFFSET == super::MAGIC_OFFSET);
    const _: () = assert!(RECORDS_OFFSET == 61);
}

/// Magic 0 and 1: single messages, and compressed wrappers around inner messages.
///
/// ```text
/// offset  size  field                 v0   v1
///      0     8  offset                 ✓    ✓   (a wrapper: offset of its last inner message)
///      8     4  message size           ✓    ✓   (bytes after this field)
///     12     4  crc (CRC-32 of magic..end)
///     16     1  magic                  0    1
///     17     1  attributes                       (bits 0..2 codec, bit 3 LogAppendTime in v1)
///     18     8  timestamp              -    ✓
///  18/26     4  key length (-1 = null), key
///            4  value length (-1 = null), value  (a wrapper: the compressed inner messages)
/// ```
pub mod legacy {
    /// Position of the CRC.
    pub const CRC_OFFSET: usize = super::LOG_OVERHEAD;
    /// Position of the magic byte; the CRC covers from here to the end.
    pub const MAGIC_OFFSET: usize = CRC_OFFSET + 4;
    /// Position of the attributes.
    pub const ATTRIBUTES_OFFSET: usize = MAGIC_OFFSET + 1;
    /// Position of the v1 timestamp.
    pub const TIMESTAMP_OFFSET: usize = ATTRIBUTES_OFFSET + 1;
    /// Position of the key length in v0.
    pub const KEY_SIZE_OFFSET_V0: usize = ATTRIBUTES_OFFSET + 1;
    /// Position of the key length in v1.
    pub const KEY_SIZE_OFFSET_V1: usize = TIMESTAMP_OFFSET + 8;
    /// Smallest v1 message size field (v0's is [`MIN_ENTRY_SIZE`](super::MIN_ENTRY_SIZE), 14).
    pub const MIN_SIZE_V1: i32 = 22;

    /// Attributes bits 0..2: the codec.
    pub const COMPRESSION_MASK: u8 = 0x07;
    /// Attributes bit 3 (v1): LogAppendTime.
    pub const TIMESTAMP_TYPE_MASK: u8 = 0x08;
    /// Attributes bits that are unused in v0 (3..7).
    pub const UNUSED_ATTRIBUTES_MASK_V0: u8 = 0xf8;
    /// Attributes bits that are unused in v1 (4..7).
    pub const UNUSED_ATTRIBUTES_MASK_V1: u8 = 0xf0;

    const _: () = assert!(MAGIC_OFFSET == super::MAGIC_OFFSET);
}
