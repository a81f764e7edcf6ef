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

use crate::read::v2 as layout;
use crate::{Error, Result};

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
    if entry.len() < layout::RECORDS_OFFSET {
        return Err(Error::InvalidLength {
            at: 0,
            what: "record batch",
            expected: format!(">= {} bytes (the v2 header)", layout::RECORDS_OFFSET),
            found: entry.len() as i64,
        });
    }
    let length = i32::from_be_bytes(array(&entry[layout::LENGTH_OFFSET..]));
    if usize::try_from(length)
        .ok()
        .map(|l| l + crate::LOG_OVERHEAD)
        != Some(entry.len())
    {
        return Err(Error::InvalidLength {
            at: layout::LENGTH_OFFSET,
            what: "batch length",
            expected: format!(
                "{} (the entry's size less 12)",
                entry.len() - crate::LOG_OVERHEAD
            ),
            found: i64::from(length),
        });
    }
    if entry[layout::MAGIC_OFFSET] != 2 {
        return Err(Error::InvalidMagic {
            at: layout::MAGIC_OFFSET,
            found: entry[layout::MAGIC_OFFSET] as i8,
        });
    }
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
    use crate::write::{NewRecord, V2Builder};
    use crate::Compression;

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
