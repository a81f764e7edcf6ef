//! What a Kafka consumer makes of fetched bytes: the records it hands to the application.
//!
//! [`consume`] follows the Java consumer's `CompletedFetch.nextFetchedRecord`:
//!
//! * Batches are taken in order; records below the fetch offset (the head of a batch or v0/v1
//!   wrapper that starts earlier) are skipped.
//! * read_committed, for a batch with a producer id: every aborted transaction whose first
//!   offset is at or below the batch's last offset moves from the fetch response's list (ordered
//!   by first offset) to a set of aborted producer ids. A control batch whose first record is an
//!   ABORT marker removes its producer from the set; a transactional batch of a producer in the
//!   set is skipped whole. These rules are the codec's [`ReadCommitted`] filter.
//! * Control records (COMMIT and ABORT markers) are never returned, at either isolation level.
//! * v2 batch CRCs are checked (`check.crcs`, on by default), as are v0/v1 message CRCs.
//!
//! The consumer's position afterwards is the offset after the last batch of the fetch.

use crate::error::{Error, Location, Result};
use crate::transaction::{AbortedTransaction, IsolationLevel};
use krecords_codec::read::{Batch, Entries};
use krecords_codec::txn::ReadCommitted;
use krecords_codec::TimestampType;

/// A header of a consumed record.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConsumedHeader {
    /// The key (UTF-8 in Kafka's API; kept as bytes here).
    pub key: Vec<u8>,
    /// The value, `None` for null.
    pub value: Option<Vec<u8>>,
}

/// A record as the consumer hands it to the application (keys, values and header values are
/// raw bytes; `krec log read` renders them per `--bytes`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConsumedRecord {
    /// Its offset.
    pub offset: i64,
    /// Its timestamp (`None` for magic 0).
    pub timestamp: Option<i64>,
    /// The batch's timestamp type.
    pub timestamp_type: TimestampType,
    /// The key, `None` for null.
    pub key: Option<Vec<u8>>,
    /// The value, `None` for null.
    pub value: Option<Vec<u8>>,
    /// The headers, in order.
    pub headers: Vec<ConsumedHeader>,
    /// The partition leader epoch of its batch (`None` for v0/v1 and unset epochs).
    pub leader_epoch: Option<i32>,
}

/// The records of a fetch as the consumer sees them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Consumed {
    /// The records, in offset order.
    pub records: Vec<ConsumedRecord>,
    /// The consumer's next fetch offset: the offset after the last batch of the fetch (the
    /// fetch offset when the fetch held no batch).
    pub next_offset: i64,
}

/// Turns fetched bytes (whole entries, as [`crate::Log::fetch`] returns them) into the records
/// a Kafka consumer at `isolation` returns, given the fetch offset and the fetch response's
/// aborted transactions (`None` for read_uncommitted, or a response without the list). The list
/// is ignored for read_uncommitted, as the Java consumer ignores it.
///
/// Costs one decompression per compressed batch that is not skipped.
///
/// # Errors
///
/// [`Error::CorruptMessage`] for an entry that does not parse or fails its CRC,
/// [`Error::InvalidRecord`] for a control record whose key is not a control key.
///
/// # Examples
///
/// ```
/// use krecords_codec::write::{NewRecord, V2Builder};
/// use krecords_log::consumer::consume;
/// use krecords_log::transaction::{AbortedTransaction, IsolationLevel};
///
/// // A transactional batch of producer 7 at offset 10, aborted.
/// let mut b = V2Builder::new(10).producer(7, 0, 0).transactional(true);
/// b.append(&NewRecord::new(0, None, Some(b"x"))).unwrap();
/// let bytes = b.finish().unwrap();
/// let aborted = [AbortedTransaction { producer_id: 7, first_offset: 10 }];
/// let seen = consume(&bytes, 10, IsolationLevel::ReadCommitted, Some(&aborted)).unwrap();
/// assert!(seen.records.is_empty());
/// assert_eq!(seen.next_offset, 11);
/// let seen = consume(&bytes, 10, IsolationLevel::ReadUncommitted, None).unwrap();
/// assert_eq!(seen.records[0].value.as_deref(), Some(&b"x"[..]));
/// ```
pub fn consume(
    bytes: &[u8],
    fetch_offset: i64,
    isolation: IsolationLevel,
    aborted: Option<&[AbortedTransaction]>,
) -> Result<Consumed> {
    match consume_until_error(bytes, fetch_offset, isolation, aborted) {
        (seen, None) => Ok(seen),
        (_, Some(e)) => Err(e),
    }
}

/// As [`consume`], keeping what comes before the first entry that cannot be read: the records
/// of the entries before it (none of the failing entry's), the next offset after them, and that
/// entry's error. Kafka's consumer does the same: it returns the records before a corrupt batch
/// and raises the error when the batch is reached.
///
/// # Examples
///
/// ```
/// use krecords_codec::write::{NewRecord, V2Builder};
/// use krecords_log::consumer::consume_until_error;
/// use krecords_log::transaction::IsolationLevel;
///
/// let batch = |base: i64| {
///     let mut b = V2Builder::new(base);
///     b.append(&NewRecord::new(0, None, Some(b"x"))).unwrap();
///     b.finish().unwrap()
/// };
/// let mut bytes = batch(0);
/// let mut damaged = batch(1);
/// let last = damaged.len() - 1;
/// damaged[last] ^= 0xff; // the CRC no longer matches
/// bytes.extend_from_slice(&damaged);
/// let (seen, error) = consume_until_error(&bytes, 0, IsolationLevel::ReadUncommitted, None);
/// assert_eq!(seen.records.len(), 1);
/// assert_eq!(seen.next_offset, 1);
/// assert!(error.is_some());
/// ```
pub fn consume_until_error(
    bytes: &[u8],
    fetch_offset: i64,
    isolation: IsolationLevel,
    aborted: Option<&[AbortedTransaction]>,
) -> (Consumed, Option<Error>) {
    let mut filter = (isolation == IsolationLevel::ReadCommitted)
        .then(|| ReadCommitted::new(aborted.unwrap_or(&[])));
    let mut out = Consumed {
        records: Vec::new(),
        next_offset: fetch_offset,
    };
    let mut scratch = Vec::new();
    for entry in Entries::new(bytes) {
        let (kept, next_offset) = (out.records.len(), out.next_offset);
        if let Err(e) = consume_entry(entry, filter.as_mut(), &mut scratch, &mut out) {
            // None of the failing entry's records: what precedes it is whole entries.
            out.records.truncate(kept);
            out.next_offset = next_offset;
            return (out, Some(e));
        }
    }
    (out, None)
}

/// Adds the records of one fetched entry to `out`, as [`consume`] describes.
fn consume_entry(
    entry: krecords_codec::Result<Batch<'_>>,
    filter: Option<&mut ReadCommitted>,
    scratch: &mut Vec<u8>,
    out: &mut Consumed,
) -> Result<()> {
    let corrupt = |position: usize, reason: String| Error::CorruptMessage {
        at: Location::Read { position },
        reason,
        source: None,
    };
    let batch = checked_entry(entry)?;
    let position = batch.position();
    let next_offset = batch.last_offset() + 1;
    let (control, leader_epoch) = match &batch {
        Batch::V2(v) => (v.is_control(), v.partition_leader_epoch()),
        Batch::Legacy(_) => (false, None),
    };
    if let Some(filter) = filter {
        if aborted_batch(filter, &batch, scratch)? {
            out.next_offset = next_offset;
            return Ok(());
        }
    }
    if !control {
        let timestamp_type = batch.timestamp_type();
        let records = batch
            .records(scratch, krecords_codec::DEFAULT_DECOMPRESS_LIMIT)
            .map_err(|e| corrupt(e.position().unwrap_or(position), e.to_string()))?;
        for record in records {
            let record =
                record.map_err(|e| corrupt(e.position().unwrap_or(position), e.to_string()))?;
            if let krecords_codec::read::Record::Legacy(r) = &record {
                if r.compute_crc() != r.crc {
                    return Err(corrupt(
                        position,
                        format!("record at offset {} is invalid (crc)", r.offset),
                    ));
                }
            }
            if record.offset() < out.next_offset {
                continue;
            }
            out.next_offset = record.offset() + 1;
            out.records.push(ConsumedRecord {
                offset: record.offset(),
                timestamp: record.timestamp(),
                timestamp_type,
                key: record.key().map(<[u8]>::to_vec),
                value: record.value().map(<[u8]>::to_vec),
                headers: record
                    .headers()
                    .map(|h| ConsumedHeader {
                        key: h.key.to_vec(),
                        value: h.value.map(<[u8]>::to_vec),
                    })
                    .collect(),
                leader_epoch,
            });
        }
    }
    out.next_offset = out.next_offset.max(next_offset);
    Ok(())
}

/// One entry of [`Entries`] with its CRC checked: [`Error::CorruptMessage`] for an entry that
/// does not parse or fails its CRC (the v2 batch CRC, or a v0/v1 message's).
pub(crate) fn checked_entry<'a>(entry: krecords_codec::Result<Batch<'a>>) -> Result<Batch<'a>> {
    let batch = entry.map_err(|e| {
        Error::corrupt_codec(
            Location::Read {
                position: e.position().unwrap_or(0),
            },
            e,
        )
    })?;
    if !batch.is_crc_valid() {
        return Err(Error::CorruptMessage {
            at: Location::Read {
                position: batch.position(),
            },
            reason: format!(
                "{} is invalid: crc mismatch (stored {}, computed {})",
                entry_name(&batch),
                batch.crc(),
                batch.compute_crc()
            ),
            source: None,
        });
    }
    Ok(batch)
}

/// An entry named as dump, verify and salvage name entries: by its base offset (the error's
/// location gives its file and byte once the log knows them). A compressed v0/v1 wrapper
/// carries only its last offset.
fn entry_name(batch: &Batch<'_>) -> String {
    let last = batch.last_offset();
    match batch.first_offset() {
        Some(first) if first == last => format!("the entry with base offset {first}"),
        Some(first) => format!("the entry with base offset {first} (offsets {first}..={last})"),
        None => format!("the wrapper entry with last offset {last}"),
    }
}

/// [`ReadCommitted::is_aborted`] with its errors as the log reports them: a control record
/// whose key is not a control key is [`Error::InvalidRecord`], any other failure to read the
/// control batch [`Error::CorruptMessage`].
pub(crate) fn aborted_batch(
    filter: &mut ReadCommitted,
    batch: &Batch<'_>,
    scratch: &mut Vec<u8>,
) -> Result<bool> {
    let at = Location::Read {
        position: batch.position(),
    };
    filter.is_aborted(batch, scratch).map_err(|e| match e {
        krecords_codec::Error::InvalidRecord { .. } => Error::invalid_record(at, e.to_string()),
        e => Error::corrupt_codec(at, e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
    use krecords_testkit::batches::marker;

    fn data(offset: i64, pid: i64, txn: bool, values: &[&str]) -> Vec<u8> {
        let mut b = V2Builder::new(offset);
        if pid >= 0 {
            b = b.producer(pid, 0, 0).transactional(txn);
        }
        for v in values {
            b.append(&NewRecord::new(5, Some(b"k"), Some(v.as_bytes())))
                .unwrap();
        }
        b.finish().unwrap()
    }

    fn values(c: &Consumed) -> Vec<String> {
        c.records
            .iter()
            .map(|r| String::from_utf8(r.value.clone().unwrap()).unwrap())
            .collect()
    }

    #[test]
    fn aborted_batches_and_markers_are_dropped() {
        // 0: p1 txn a | 1: p2 txn b | 2: plain c | 3: p1 abort | 4: p1 txn d | 5: p2 commit
        // 6: p1 commit
        let mut bytes = data(0, 1, true, &["a"]);
        bytes.extend(data(1, 2, true, &["b"]));
        bytes.extend(data(2, -1, false, &["c"]));
        bytes.extend(marker(3, 1, false));
        bytes.extend(data(4, 1, true, &["d"]));
        bytes.extend(marker(5, 2, true));
        bytes.extend(marker(6, 1, true));
        let aborted = [AbortedTransaction {
            producer_id: 1,
            first_offset: 0,
        }];
        let rc = consume(&bytes, 0, IsolationLevel::ReadCommitted, Some(&aborted)).unwrap();
        assert_eq!(values(&rc), ["b", "c", "d"]);
        assert_eq!(rc.next_offset, 7);
        let ru = consume(&bytes, 0, IsolationLevel::ReadUncommitted, Some(&aborted)).unwrap();
        assert_eq!(values(&ru), ["a", "b", "c", "d"]);
        // Fetching from offset 1 with the same list: the aborted batch is not in the bytes.
        let tail = &bytes[data(0, 1, true, &["a"]).len()..];
        let rc = consume(tail, 1, IsolationLevel::ReadCommitted, Some(&aborted)).unwrap();
        assert_eq!(values(&rc), ["b", "c", "d"]);
        // Without the list, nothing is known to be aborted.
        let rc = consume(&bytes, 0, IsolationLevel::ReadCommitted, None).unwrap();
        assert_eq!(values(&rc), ["a", "b", "c", "d"]);
    }

    #[test]
    fn records_below_the_fetch_offset_are_skipped() {
        let bytes = data(10, -1, false, &["a", "b", "c"]);
        let c = consume(&bytes, 11, IsolationLevel::ReadUncommitted, None).unwrap();
        assert_eq!(values(&c), ["b", "c"]);
        assert_eq!(c.records[0].offset, 11);
        let mut legacy = LegacyBuilder::new(1, 3).unwrap();
        legacy
            .append(&NewRecord::new(7, None, Some(b"old")))
            .unwrap();
        let legacy = legacy.finish().unwrap();
        let c = consume(&legacy, 3, IsolationLevel::ReadCommitted, Some(&[])).unwrap();
        assert_eq!(values(&c), ["old"]);
        assert_eq!(c.records[0].timestamp, Some(7));
        assert_eq!(
            consume(&[], 4, IsolationLevel::ReadCommitted, None)
                .unwrap()
                .next_offset,
            4
        );
    }

    #[test]
    fn corrupt_batches_are_errors() {
        let mut bytes = data(0, -1, false, &["a"]);
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let e = consume(&bytes, 0, IsolationLevel::ReadUncommitted, None).unwrap_err();
        assert_eq!(e.kafka_name(), "CORRUPT_MESSAGE");
        assert!(e.to_string().contains("fetched bytes at byte 0"), "{e}");
    }
}
