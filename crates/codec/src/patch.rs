//! Rewriting a v2 batch's header in place, records bytes untouched.
//!
//! A broker rewrites a few header fields of every batch it appends (base offset, partition
//! leader epoch) without touching the records section; a producer sending stored batches again
//! (`krec ship`) rewrites the producer fields. [`patch_v2_header`] does either: it sets the
//! fields asked for and recomputes the CRC (CRC-32C over the attributes to the end of the
//! batch), leaving the records section, compression and record count as they are.
//!
//! # Examples
//!
//! ```
//! use krecords_codec::patch::{patch_v2_header, V2HeaderPatch};
//! use krecords_codec::read::Entries;
//! use krecords_codec::write::{NewRecord, V2Builder};
//!
//! let mut b = V2Builder::new(40);
//! b.append(&NewRecord::new(1714000000000, None, Some(b"hello"))).unwrap();
//! let mut bytes = b.finish().unwrap();
//! let patch = V2HeaderPatch {
//!     base_offset: Some(0),
//!     producer: Some((7, 0, 12)),
//!     transactional: Some(true),
//!     ..V2HeaderPatch::default()
//! };
//! patch_v2_header(&mut bytes, &patch).unwrap();
//! let batch = Entries::new(&bytes).next().unwrap().unwrap();
//! assert!(batch.is_crc_valid());
//! assert_eq!((batch.offset_field(), batch.producer_id(), batch.base_sequence()), (0, Some(7), Some(12)));
//! assert!(batch.is_transactional());
//! ```

use crate::layout::v2 as layout;
use crate::{Error, Result, TimestampType};

/// The header fields [`patch_v2_header`] sets; `None` leaves a field as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct V2HeaderPatch {
    /// The base offset (a producer sends 0; a broker assigns the real one).
    pub base_offset: Option<i64>,
    /// The partition leader epoch (a producer sends -1).
    pub partition_leader_epoch: Option<i32>,
    /// Producer id, producer epoch and base sequence, together.
    pub producer: Option<(i64, i16, i32)>,
    /// The transactional attribute bit.
    pub transactional: Option<bool>,
}

/// Sets the fields of `patch` in the v2 batch `entry` (exactly one batch: its 12-byte prefix,
/// header and records) and recomputes its CRC. The records section is not read or changed, so
/// a compressed batch stays compressed byte for byte.
///
/// Setting the transactional bit of a control batch, or patching any field of one, is allowed
/// (the caller decides what makes sense); the CRC is always recomputed, so a batch whose CRC
/// was wrong before comes out with a valid one: check [`crate::read::Batch::is_crc_valid`]
/// first when that matters.
///
/// # Errors
///
/// [`Error::InvalidLength`] when `entry` is shorter than a v2 header or its length field does
/// not match `entry`'s length; [`Error::InvalidMagic`] when it is not magic 2.
pub fn patch_v2_header(entry: &mut [u8], patch: &V2HeaderPatch) -> Result<()> {
    check_v2(entry)?;
    if let Some(base) = patch.base_offset {
        put(entry, layout::BASE_OFFSET_OFFSET, &base.to_be_bytes());
    }
    if let Some(epoch) = patch.partition_leader_epoch {
        put(
            entry,
            layout::PARTITION_LEADER_EPOCH_OFFSET,
            &epoch.to_be_bytes(),
        );
    }
    if let Some((id, epoch, sequence)) = patch.producer {
        put(entry, layout::PRODUCER_ID_OFFSET, &id.to_be_bytes());
        put(entry, layout::PRODUCER_EPOCH_OFFSET, &epoch.to_be_bytes());
        put(entry, layout::BASE_SEQUENCE_OFFSET, &sequence.to_be_bytes());
    }
    if let Some(txn) = patch.transactional {
        let mut attrs = i16::from_be_bytes(array(&entry[layout::ATTRIBUTES_OFFSET..]));
        if txn {
            attrs |= layout::TRANSACTIONAL_MASK;
        } else {
            attrs &= !layout::TRANSACTIONAL_MASK;
        }
        put(entry, layout::ATTRIBUTES_OFFSET, &attrs.to_be_bytes());
    }
    let crc = crate::crc::crc32c(&entry[layout::ATTRIBUTES_OFFSET..]);
    put(entry, layout::CRC_OFFSET, &crc.to_be_bytes());
    Ok(())
}

/// Kafka's `setLastOffset`, `setPartitionLeaderEpoch` and `setMaxTimestamp` on the entry that
/// starts `entry`, as a broker assigns offsets to an appended batch in place:
///
/// * v2: the base offset becomes `last_offset` less the batch's last offset delta and the
///   partition leader epoch `leader_epoch` (neither is covered by the CRC); with `timestamp`,
///   the timestamp type bit and the max timestamp are set, and the CRC recomputed, only when
///   they differ from the batch's.
/// * v0/v1: the offset field becomes `last_offset` (a wrapper's offset is its last inner
///   offset); for v1 with `timestamp`, the timestamp type bit and the timestamp are set, and the
///   CRC-32 recomputed, only when they differ. `leader_epoch` does not apply.
///
/// When nothing the CRC covers changes, `entry` may be just the entry's header (a v2 batch's
/// first 61 bytes): the records are not read.
///
/// # Errors
///
/// [`Error::InvalidLength`] when `entry` is shorter than the header, or than the whole entry
/// when the CRC must be recomputed; [`Error::InvalidMagic`] for a magic other than 0, 1 or 2.
pub fn assign_offsets(
    entry: &mut [u8],
    last_offset: i64,
    leader_epoch: i32,
    timestamp: Option<(TimestampType, i64)>,
) -> Result<()> {
    use crate::layout::legacy as l;
    let short = |at: usize, what: &'static str, need: usize, found: usize| Error::InvalidLength {
        at,
        what,
        expected: format!(">= {need} bytes"),
        found: found as i64,
    };
    // The magic byte is at the same position in every format.
    const _: () = assert!(layout::MAGIC_OFFSET == l::MAGIC_OFFSET);
    let magic = *entry
        .get(layout::MAGIC_OFFSET)
        .ok_or_else(|| short(0, "entry", layout::MAGIC_OFFSET + 1, entry.len()))?;
    match magic {
        2 => {
            if entry.len() < layout::RECORDS_OFFSET {
                return Err(short(
                    0,
                    "record batch",
                    layout::RECORDS_OFFSET,
                    entry.len(),
                ));
            }
            let delta = i32::from_be_bytes(array(&entry[layout::LAST_OFFSET_DELTA_OFFSET..]));
            put(
                entry,
                layout::BASE_OFFSET_OFFSET,
                &(last_offset.wrapping_sub(i64::from(delta))).to_be_bytes(),
            );
            put(
                entry,
                layout::PARTITION_LEADER_EPOCH_OFFSET,
                &leader_epoch.to_be_bytes(),
            );
            let Some((tt, ts)) = timestamp else {
                return Ok(());
            };
            let attrs = i16::from_be_bytes(array(&entry[layout::ATTRIBUTES_OFFSET..]));
            let max = i64::from_be_bytes(array(&entry[layout::MAX_TIMESTAMP_OFFSET..]));
            let mut new_attrs = attrs & !layout::TIMESTAMP_TYPE_MASK;
            if tt == TimestampType::LogAppendTime {
                new_attrs |= layout::TIMESTAMP_TYPE_MASK;
            }
            if new_attrs == attrs && max == ts {
                return Ok(());
            }
            whole(entry)?;
            put(entry, layout::ATTRIBUTES_OFFSET, &new_attrs.to_be_bytes());
            put(entry, layout::MAX_TIMESTAMP_OFFSET, &ts.to_be_bytes());
            let crc = crate::crc::crc32c(&entry[layout::ATTRIBUTES_OFFSET..]);
            put(entry, layout::CRC_OFFSET, &crc.to_be_bytes());
            Ok(())
        }
        0 | 1 => {
            put(entry, 0, &last_offset.to_be_bytes());
            let (Some((tt, ts)), 1) = (timestamp, magic) else {
                return Ok(());
            };
            if entry.len() < l::TIMESTAMP_OFFSET + 8 {
                return Err(short(0, "message", l::TIMESTAMP_OFFSET + 8, entry.len()));
            }
            let attrs = entry[l::ATTRIBUTES_OFFSET];
            let old = i64::from_be_bytes(array(&entry[l::TIMESTAMP_OFFSET..]));
            let mut new_attrs = attrs & !l::TIMESTAMP_TYPE_MASK;
            if tt == TimestampType::LogAppendTime {
                new_attrs |= l::TIMESTAMP_TYPE_MASK;
            }
            if new_attrs == attrs && old == ts {
                return Ok(());
            }
            whole(entry)?;
            entry[l::ATTRIBUTES_OFFSET] = new_attrs;
            put(entry, l::TIMESTAMP_OFFSET, &ts.to_be_bytes());
            let crc = crate::crc::crc32(&entry[l::MAGIC_OFFSET..]);
            put(entry, l::CRC_OFFSET, &crc.to_be_bytes());
            Ok(())
        }
        m => Err(Error::InvalidMagic {
            at: layout::MAGIC_OFFSET,
            found: m as i8,
        }),
    }
}

/// Sets the last offset delta of the v2 batch that is `batch` (Kafka's
/// `MemoryRecordsBuilder.overrideLastOffset`: a batch keeps its original last offset when
/// records at its end are gone, so the producer's last sequence stays) and recomputes the CRC
/// when it changes.
///
/// # Errors
///
/// As [`patch_v2_header`]: `batch` must be exactly one whole v2 batch.
pub fn set_last_offset_delta(batch: &mut [u8], last_offset_delta: i32) -> Result<()> {
    check_v2(batch)?;
    let at = layout::LAST_OFFSET_DELTA_OFFSET;
    if batch[at..at + 4] != last_offset_delta.to_be_bytes() {
        put(batch, at, &last_offset_delta.to_be_bytes());
        let crc = crate::crc::crc32c(&batch[layout::ATTRIBUTES_OFFSET..]);
        put(batch, layout::CRC_OFFSET, &crc.to_be_bytes());
    }
    Ok(())
}

/// Checks that `entry` (at least 12 bytes) is the whole entry its size field announces: every
/// format starts with an 8-byte offset and a 4-byte size of the bytes after it.
fn whole(entry: &[u8]) -> Result<()> {
    let size = i32::from_be_bytes(array(&entry[layout::LENGTH_OFFSET..]));
    if usize::try_from(size)
        .ok()
        .map(|s| s + crate::layout::LOG_OVERHEAD)
        != Some(entry.len())
    {
        return Err(Error::InvalidLength {
            at: layout::LENGTH_OFFSET,
            what: "entry size",
            expected: format!(
                "{} (the entry's size less 12)",
                entry.len().saturating_sub(crate::layout::LOG_OVERHEAD)
            ),
            found: i64::from(size),
        });
    }
    Ok(())
}

/// `entry` is one whole v2 batch: at least a v2 header, its length field matching, magic 2.
fn check_v2(entry: &[u8]) -> Result<()> {
    if entry.len() < layout::RECORDS_OFFSET {
        return Err(Error::InvalidLength {
            at: 0,
            what: "record batch",
            expected: format!(">= {} bytes (the v2 header)", layout::RECORDS_OFFSET),
            found: entry.len() as i64,
        });
    }
    whole(entry)?;
    if entry[layout::MAGIC_OFFSET] != 2 {
        return Err(Error::InvalidMagic {
            at: layout::MAGIC_OFFSET,
            found: entry[layout::MAGIC_OFFSET] as i8,
        });
    }
    Ok(())
}

fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut a = [0; N];
    a.copy_from_slice(&bytes[..N]);
    a
}

fn put(entry: &mut [u8], at: usize, bytes: &[u8]) {
    entry[at..at + bytes.len()].copy_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{Batch, Entries};
    use crate::write::{LegacyBuilder, NewRecord, V2Builder};
    use crate::Compression;

    fn first(bytes: &[u8]) -> Batch<'_> {
        Entries::new(bytes).next().unwrap().unwrap()
    }

    #[test]
    fn assign_offsets_of_a_v2_batch_touches_the_crc_only_for_a_new_timestamp() {
        let original = batch(Compression::Lz4);
        let b = first(&original);
        let (crc, max) = (b.crc(), b.max_timestamp());
        // Offsets and epoch only: the CRC stays, and the header alone is enough.
        let mut head = original[..layout::RECORDS_OFFSET].to_vec();
        assign_offsets(&mut head, 519, 4, Some((TimestampType::CreateTime, max))).unwrap();
        let mut whole = original.clone();
        whole[..layout::RECORDS_OFFSET].copy_from_slice(&head);
        let b = first(&whole);
        assert_eq!((b.offset_field(), b.last_offset()), (500, 519));
        assert_eq!(b.partition_leader_epoch(), Some(4));
        assert_eq!(b.crc(), crc);
        assert!(b.is_crc_valid());
        // LogAppendTime: attributes and max timestamp change, the CRC is recomputed.
        let mut bytes = original.clone();
        assign_offsets(&mut bytes, 19, -1, Some((TimestampType::LogAppendTime, 7))).unwrap();
        let b = first(&bytes);
        assert_eq!(b.timestamp_type(), TimestampType::LogAppendTime);
        assert_eq!(b.max_timestamp(), 7);
        assert!(b.is_crc_valid());
        assert_ne!(b.crc(), crc);
        // ... which needs the whole batch.
        let mut head = original[..layout::RECORDS_OFFSET].to_vec();
        assert!(matches!(
            assign_offsets(&mut head, 19, -1, Some((TimestampType::LogAppendTime, 7))),
            Err(Error::InvalidLength { .. })
        ));
    }

    #[test]
    fn assign_offsets_of_v0_and_v1_messages() {
        for magic in [0u8, 1] {
            let mut b = LegacyBuilder::new(magic, 0).unwrap();
            b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"v")))
                .unwrap();
            let mut bytes = b.finish().unwrap();
            assign_offsets(&mut bytes, 42, 9, Some((TimestampType::LogAppendTime, 5))).unwrap();
            let m = first(&bytes);
            assert_eq!(m.offset_field(), 42);
            assert!(m.is_crc_valid(), "magic {magic}");
            if magic == 1 {
                assert_eq!(m.timestamp_type(), TimestampType::LogAppendTime);
                assert_eq!(m.max_timestamp(), 5);
            }
        }
    }

    #[test]
    fn assign_offsets_refuses_short_input_and_unknown_magic() {
        assert!(assign_offsets(&mut [0u8; 10], 1, 0, None).is_err());
        let mut bytes = batch(Compression::None);
        bytes[layout::MAGIC_OFFSET] = 3;
        assert!(matches!(
            assign_offsets(&mut bytes, 1, 0, None),
            Err(Error::InvalidMagic { found: 3, .. })
        ));
        let mut v0 = vec![0u8; 20];
        v0[layout::MAGIC_OFFSET] = 1;
        assert!(assign_offsets(&mut v0, 1, 0, Some((TimestampType::CreateTime, 1))).is_err());
    }

    #[test]
    fn set_last_offset_delta_recomputes_the_crc() {
        let mut bytes = batch(Compression::Zstd);
        set_last_offset_delta(&mut bytes, 30).unwrap();
        let b = first(&bytes);
        assert_eq!(b.last_offset(), 1030);
        assert!(b.is_crc_valid());
        assert!(set_last_offset_delta(&mut bytes[..40], 30).is_err());
    }

    fn batch(compression: Compression) -> Vec<u8> {
        let mut b = V2Builder::new(1000)
            .compression(compression, None)
            .producer(5, 3, 77)
            .partition_leader_epoch(9);
        for i in 0..20 {
            let v = format!("value {i}").repeat(10);
            b.append(&NewRecord::new(
                1_700_000_000_000 + i,
                Some(b"k"),
                Some(v.as_bytes()),
            ))
            .unwrap();
        }
        b.finish().unwrap()
    }

    fn records(bytes: &[u8]) -> Vec<(i64, Option<Vec<u8>>)> {
        let b = Entries::new(bytes).next().unwrap().unwrap();
        let mut scratch = Vec::new();
        b.checked_records(&mut scratch, crate::DEFAULT_DECOMPRESS_LIMIT)
            .unwrap()
            .map(|r| {
                let r = r.unwrap();
                (r.offset() - b.offset_field(), r.value().map(<[u8]>::to_vec))
            })
            .collect()
    }

    #[test]
    fn producer_fields_change_and_records_stay() {
        for c in [Compression::None, Compression::Lz4, Compression::Zstd] {
            let original = batch(c);
            let mut bytes = original.clone();
            let patch = V2HeaderPatch {
                base_offset: Some(0),
                partition_leader_epoch: Some(-1),
                producer: Some((123_456, 2, 40)),
                transactional: Some(true),
            };
            patch_v2_header(&mut bytes, &patch).unwrap();
            assert_eq!(bytes.len(), original.len());
            // The records section is byte-equal.
            assert_eq!(
                bytes[layout::RECORDS_OFFSET..],
                original[layout::RECORDS_OFFSET..]
            );
            let Batch::V2(v) = Entries::new(&bytes).next().unwrap().unwrap() else {
                panic!("not v2")
            };
            assert!(v.is_crc_valid());
            assert_ne!(
                v.crc(),
                Entries::new(&original).next().unwrap().unwrap().crc()
            );
            assert_eq!(v.base_offset(), 0);
            assert_eq!(v.raw_producer_id(), 123_456);
            assert_eq!(v.producer_epoch(), Some(2));
            assert_eq!(v.base_sequence(), Some(40));
            assert!(v.is_transactional());
            assert_eq!(v.partition_leader_epoch(), None);
            assert_eq!(v.compression().unwrap(), c);
            assert_eq!(records(&bytes), records(&original));
            // Clearing the flag again and leaving the rest.
            patch_v2_header(
                &mut bytes,
                &V2HeaderPatch {
                    transactional: Some(false),
                    ..V2HeaderPatch::default()
                },
            )
            .unwrap();
            let b = Entries::new(&bytes).next().unwrap().unwrap();
            assert!(b.is_crc_valid() && !b.is_transactional());
            assert_eq!(b.producer_id(), Some(123_456));
        }
    }

    #[test]
    fn wrong_entries_are_refused() {
        let good = batch(Compression::None);
        let mut short = good[..40].to_vec();
        assert!(patch_v2_header(&mut short, &V2HeaderPatch::default()).is_err());
        let mut longer = good.clone();
        longer.push(0);
        assert!(patch_v2_header(&mut longer, &V2HeaderPatch::default()).is_err());
        let mut cut = good[..good.len() - 1].to_vec();
        assert!(patch_v2_header(&mut cut, &V2HeaderPatch::default()).is_err());
        let mut v1 = good.clone();
        v1[layout::MAGIC_OFFSET] = 1;
        assert!(matches!(
            patch_v2_header(&mut v1, &V2HeaderPatch::default()),
            Err(Error::InvalidMagic { .. })
        ));
        // Nothing was changed by a refusal.
        assert_eq!(&v1[..layout::MAGIC_OFFSET], &good[..layout::MAGIC_OFFSET]);
    }
}
