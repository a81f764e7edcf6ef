//! Rewriting the offset of an entry in place.

use crate::layout::v2::{LAST_OFFSET_DELTA_OFFSET, RECORDS_OFFSET};
use crate::layout::{LOG_OVERHEAD, MAGIC_OFFSET};
use crate::{Error, Result};

/// Sets the base offset of an entry in place: a v2 batch's base offset (its records keep their
/// offset deltas, so every record moves with it), or an uncompressed v0/v1 message's offset.
///
/// The checksum is unaffected, as in Kafka's `DefaultRecordBatch.setLastOffset` and
/// `MemoryRecords` offset rewriting on the replica path: a v2 batch's CRC covers the bytes from
/// the attributes on, a v0/v1 message's from its magic byte on, and the offset field lies
/// before both. This is what moving existing batches to other offsets needs (say, to append a
/// segment's batches after what a log already holds, through
/// `krecords_log::AppendOrigin::Import`).
///
/// A compressed v0/v1 wrapper is refused: its inner offsets are inside the compressed value
/// (absolute ones for magic 0), so moving it means rebuilding it
/// ([`crate::convert`] does).
///
/// # Errors
///
/// [`Error::Truncated`] for an entry too short for its header, [`Error::InvalidMagic`],
/// [`Error::Unencodable`] for a negative offset, a last offset (`base_offset +
/// last_offset_delta`) beyond `i64::MAX`, or a compressed wrapper. The entry is unchanged on
/// error.
///
/// # Examples
///
/// ```
/// use krecords_codec::read::Entries;
/// use krecords_codec::write::{set_base_offset, NewRecord, V2Builder};
///
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1714000000000, None, Some(b"a"))).unwrap();
/// b.append(&NewRecord::new(1714000000000, None, Some(b"b"))).unwrap();
/// let mut bytes = b.finish().unwrap();
/// let crc = Entries::new(&bytes).next().unwrap().unwrap().crc();
///
/// set_base_offset(&mut bytes, 1000).unwrap();
/// let batch = Entries::new(&bytes).next().unwrap().unwrap();
/// assert_eq!((batch.first_offset(), batch.last_offset()), (Some(1000), 1001));
/// assert_eq!(batch.crc(), crc);
/// assert!(batch.is_crc_valid());
/// ```
pub fn set_base_offset(entry: &mut [u8], base_offset: i64) -> Result<()> {
    let magic = match entry.get(MAGIC_OFFSET) {
        Some(&m) => m as i8,
        None => {
            return Err(Error::Truncated {
                at: 0,
                what: "entry header",
                needed: MAGIC_OFFSET + 1,
                available: entry.len(),
            })
        }
    };
    if base_offset < 0 {
        return Err(Error::Unencodable {
            reason: format!("offset {base_offset} is negative"),
        });
    }
    match magic {
        2 => {
            let delta = entry
                .get(LAST_OFFSET_DELTA_OFFSET..LAST_OFFSET_DELTA_OFFSET + 4)
                .filter(|_| entry.len() >= RECORDS_OFFSET)
                .and_then(|d| <[u8; 4]>::try_from(d).ok());
            let Some(delta) = delta else {
                return Err(Error::Truncated {
                    at: 0,
                    what: "record batch header",
                    needed: RECORDS_OFFSET,
                    available: entry.len(),
                });
            };
            let delta = i32::from_be_bytes(delta);
            if base_offset.checked_add(i64::from(delta)).is_none() {
                return Err(Error::Unencodable {
                    reason: format!(
                        "base offset {base_offset} + last offset delta {delta} overflows"
                    ),
                });
            }
        }
        0 | 1 => {
            // Attributes follow the magic byte; the codec is in their low 3 bits.
            let attributes = entry.get(MAGIC_OFFSET + 1).copied().unwrap_or(0);
            if attributes & 0x07 != 0 {
                return Err(Error::Unencodable {
                    reason: "the offsets of a compressed v0/v1 wrapper are inside its \
                             compressed value; convert it to move it"
                        .into(),
                });
            }
        }
        found => {
            return Err(Error::InvalidMagic {
                at: MAGIC_OFFSET,
                found,
            })
        }
    }
    if let Some(field) = entry.get_mut(..LOG_OVERHEAD - 4) {
        field.copy_from_slice(&base_offset.to_be_bytes());
    }
    Ok(())
}
