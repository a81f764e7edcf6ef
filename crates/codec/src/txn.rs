//! Transactions as a reader sees them: the isolation level of a read, the aborted transactions
//! a Fetch response lists, and the read_committed filter over the entries of a fetch.
//!
//! A read_committed consumer gets, with the bytes of a fetch, the transactions that were
//! aborted in their range (producer id and first offset, Kafka's
//! `FetchResponseData.AbortedTransaction`). It drops their batches with the rules of the Java
//! consumer's `CompletedFetch.nextFetchedRecord`, which [`ReadCommitted`] follows:
//!
//! * entries are taken in order; only v2 batches with a producer id take part;
//! * before such a batch is looked at, every aborted transaction whose first offset is at or
//!   below the batch's last offset moves from the list (ordered by first offset, ties in list
//!   order) to a set of aborted producer ids;
//! * a control batch whose first record is an ABORT marker removes its producer from the set
//!   (the transaction ended; the producer's later batches belong to another one);
//! * a transactional data batch of a producer in the set is aborted: the consumer skips it whole.
//!
//! Control batches themselves are never handed to an application, at either isolation level:
//! that is up to the reader, as is everything about records below the fetch offset.

use crate::control::{ControlRecordKey, ControlRecordType};
use crate::read::Batch;
use crate::{Result, DEFAULT_DECOMPRESS_LIMIT};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::str::FromStr;

/// Which records a read may see (Kafka's `IsolationLevel`, the `isolation_level` of ListOffsets
/// and Fetch, a consumer's `isolation.level`).
///
/// There is no default: every reader says which it uses (an inspecting command shows what the
/// log holds, a consumer hands on only what was committed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IsolationLevel {
    /// Everything up to the high watermark, aborted transactions included (control records are
    /// still not handed to an application).
    ReadUncommitted,
    /// Only up to the last stable offset, without the batches of aborted transactions.
    ReadCommitted,
}

impl IsolationLevel {
    /// Both levels, read_uncommitted first.
    pub const ALL: [IsolationLevel; 2] = [
        IsolationLevel::ReadUncommitted,
        IsolationLevel::ReadCommitted,
    ];

    /// Kafka's configuration value: `read_uncommitted` or `read_committed`.
    pub fn name(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "read_uncommitted",
            IsolationLevel::ReadCommitted => "read_committed",
        }
    }

    /// Kafka's wire id: 0 read_uncommitted, 1 read_committed.
    pub fn id(self) -> i8 {
        match self {
            IsolationLevel::ReadUncommitted => 0,
            IsolationLevel::ReadCommitted => 1,
        }
    }
}

impl fmt::Display for IsolationLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not an isolation level (see [`IsolationLevel`]'s [`FromStr`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseIsolationLevelError(pub String);

impl fmt::Display for ParseIsolationLevelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not read_committed or read_uncommitted", self.0)
    }
}

impl std::error::Error for ParseIsolationLevelError {}

impl FromStr for IsolationLevel {
    type Err = ParseIsolationLevelError;

    /// Parses `read_uncommitted` / `read_committed`, also with `-` for `_` (as `krec`'s
    /// `--isolation` spells them) and in any case (Kafka's enum names are upper case).
    ///
    /// ```
    /// use krecords_codec::txn::IsolationLevel;
    /// assert_eq!("read-committed".parse(), Ok(IsolationLevel::ReadCommitted));
    /// assert_eq!("READ_UNCOMMITTED".parse(), Ok(IsolationLevel::ReadUncommitted));
    /// assert!("committed".parse::<IsolationLevel>().is_err());
    /// ```
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        IsolationLevel::ALL
            .into_iter()
            .find(|l| {
                let name = l.name().as_bytes();
                s.len() == name.len()
                    && s.bytes()
                        .zip(name)
                        .all(|(a, &b)| a.to_ascii_lowercase() == b || (a == b'-' && b == b'_'))
            })
            .ok_or_else(|| ParseIsolationLevelError(s.to_string()))
    }
}

/// An aborted transaction as a Fetch response lists it (Kafka's
/// `FetchResponseData.AbortedTransaction`): what a read_committed consumer needs to drop the
/// transaction's batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AbortedTransaction {
    /// The transaction's producer id.
    pub producer_id: i64,
    /// Offset of the transaction's first batch.
    pub first_offset: i64,
}

/// Kafka's `containsAbortMarker`: the batch's first record has an ABORT control key. Costs one
/// decompression for a compressed batch (bounded by [`DEFAULT_DECOMPRESS_LIMIT`]).
///
/// # Errors
///
/// The batch's records cannot be read, or its first record's key is not a control key
/// ([`crate::Error::InvalidRecord`], from [`ControlRecordKey::parse`]).
pub fn contains_abort_marker(batch: &Batch<'_>, scratch: &mut Vec<u8>) -> Result<bool> {
    let mut records = batch.records(scratch, DEFAULT_DECOMPRESS_LIMIT)?;
    let Some(first) = records.next() else {
        return Ok(false);
    };
    let key = ControlRecordKey::parse(first?.key(), batch.position())?;
    Ok(key.kind == ControlRecordType::Abort)
}

/// The read_committed filter over the entries of one fetch (see the module documentation):
/// give it every entry in order with [`ReadCommitted::is_aborted`].
///
/// # Examples
///
/// ```
/// use krecords_codec::read::Entries;
/// use krecords_codec::txn::{AbortedTransaction, ReadCommitted};
/// use krecords_codec::write::{NewRecord, V2Builder};
///
/// // A transactional batch of producer 7 at offset 10, aborted.
/// let mut b = V2Builder::new(10).producer(7, 0, 0).transactional(true);
/// b.append(&NewRecord::new(0, None, Some(b"x"))).unwrap();
/// let bytes = b.finish().unwrap();
/// let mut filter = ReadCommitted::new(&[AbortedTransaction { producer_id: 7, first_offset: 10 }]);
/// let mut scratch = Vec::new();
/// for batch in Entries::new(&bytes) {
///     assert!(filter.is_aborted(&batch?, &mut scratch)?);
/// }
/// # Ok::<(), krecords_codec::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct ReadCommitted {
    /// The aborted transactions not reached yet, by (first offset, place in the list): Kafka's
    /// `PriorityQueue` by first offset.
    pending: BTreeMap<(i64, usize), i64>,
    /// Producers whose aborted transaction is under way at the current entry.
    aborted: HashSet<i64>,
}

impl ReadCommitted {
    /// A filter for a fetch whose response listed `aborted`.
    pub fn new(aborted: &[AbortedTransaction]) -> Self {
        ReadCommitted {
            pending: aborted
                .iter()
                .enumerate()
                .map(|(i, t)| ((t.first_offset, i), t.producer_id))
                .collect(),
            aborted: HashSet::new(),
        }
    }

    /// Takes the next entry of the fetch: whether it is a data batch of an aborted
    /// transaction, which a read_committed consumer skips whole. Control batches are never
    /// aborted (they only end transactions); `scratch` holds the decompressed records of a
    /// control batch while its first record is looked at.
    ///
    /// # Errors
    ///
    /// As [`contains_abort_marker`], for a control batch of a producer.
    pub fn is_aborted(&mut self, batch: &Batch<'_>, scratch: &mut Vec<u8>) -> Result<bool> {
        let Batch::V2(v) = batch else {
            return Ok(false);
        };
        let producer_id = v.raw_producer_id();
        if producer_id < 0 {
            return Ok(false);
        }
        let last = v.last_offset();
        while let Some(next) = self.pending.first_entry() {
            if next.key().0 > last {
                break;
            }
            self.aborted.insert(next.remove());
        }
        if v.is_control() {
            if contains_abort_marker(batch, scratch)? {
                self.aborted.remove(&producer_id);
            }
            return Ok(false);
        }
        Ok(v.is_transactional() && self.aborted.contains(&producer_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::Entries;
    use crate::write::V2Builder;
    use krecords_testkit::batches::{batch, marker};
    use proptest::prelude::*;

    fn verdicts(bytes: &[u8], aborted: &[AbortedTransaction]) -> Vec<bool> {
        let mut filter = ReadCommitted::new(aborted);
        let mut scratch = Vec::new();
        Entries::new(bytes)
            .map(|b| filter.is_aborted(&b.unwrap(), &mut scratch).unwrap())
            .collect()
    }

    #[test]
    fn aborted_transactions_end_at_their_marker() {
        // 0: p1 txn | 1: p2 txn | 2: plain | 3: p1 abort | 4: p1 txn | 5: p2 commit | 6: p1 commit
        let mut bytes = batch(0, Some(1), &["v"]);
        bytes.extend(batch(1, Some(2), &["v"]));
        bytes.extend(batch(2, None, &["v"]));
        bytes.extend(marker(3, 1, false));
        bytes.extend(batch(4, Some(1), &["v"]));
        bytes.extend(marker(5, 2, true));
        bytes.extend(marker(6, 1, true));
        let p1_from = |first_offset| AbortedTransaction {
            producer_id: 1,
            first_offset,
        };
        let cases = [
            (vec![p1_from(0)], [true, false, false, false, false, false, false]),
            (vec![], [false; 7]),
            // A transaction listed later than the batches seen is not applied early.
            (vec![p1_from(4)], [false, false, false, false, true, false, false]),
        ];
        for (aborted, expected) in cases {
            assert_eq!(verdicts(&bytes, &aborted), expected, "aborted {aborted:?}");
        }
    }

    #[test]
    fn a_control_batch_without_a_control_key_is_an_error() {
        let mut b = V2Builder::new(0)
            .producer(1, 0, -1)
            .transactional(true)
            .control(true);
        b.append_control(5, b"x", b"").unwrap();
        let bytes = b.finish().unwrap();
        let batch = Entries::new(&bytes).next().unwrap().unwrap();
        let e = ReadCommitted::new(&[])
            .is_aborted(&batch, &mut Vec::new())
            .unwrap_err();
        assert!(matches!(e, crate::Error::InvalidRecord { .. }), "{e}");
    }

    /// One step of a generated partition: a transactional batch of a producer (0..3), its
    /// marker, or a batch without a producer.
    #[derive(Debug, Clone, Copy)]
    enum Step {
        Data(i64),
        Marker(i64, bool),
        Plain,
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Against a model of the log: a transactional batch is aborted exactly when its
        /// transaction (its producer's batches since that producer's previous marker) ended
        /// with an ABORT marker, the broker listing each aborted transaction by its first
        /// offset, in any order.
        #[test]
        fn the_filter_drops_exactly_the_aborted_transactions(
            steps in proptest::collection::vec(
                prop_oneof![
                    (0i64..3).prop_map(Step::Data),
                    ((0i64..3), any::<bool>()).prop_map(|(p, c)| Step::Marker(p, c)),
                    Just(Step::Plain),
                ],
                0..40,
            ),
            reverse in any::<bool>(),
        ) {
            let mut bytes = Vec::new();
            // Per producer: the offsets of its open transaction's batches.
            let mut open: [Vec<usize>; 3] = Default::default();
            let mut expected = Vec::new();
            let mut aborted = Vec::new();
            for (offset, step) in steps.iter().enumerate() {
                let o = offset as i64;
                match *step {
                    Step::Data(p) => {
                        bytes.extend(batch(o, Some(p), &["v"]));
                        open[p as usize].push(expected.len());
                        expected.push(false);
                    }
                    Step::Marker(p, commit) => {
                        let batches = std::mem::take(&mut open[p as usize]);
                        if let (false, Some(&first)) = (commit, batches.first()) {
                            for &i in &batches {
                                expected[i] = true;
                            }
                            aborted.push((first, p));
                        }
                        bytes.extend(marker(o, p, commit));
                        expected.push(false);
                    }
                    Step::Plain => {
                        bytes.extend(batch(o, None, &["v"]));
                        expected.push(false);
                    }
                }
            }
            // The list names first offsets: the entry index of the first batch is its offset.
            let mut list: Vec<AbortedTransaction> = aborted
                .iter()
                .map(|&(first, p)| AbortedTransaction { producer_id: p, first_offset: first as i64 })
                .collect();
            if reverse {
                list.reverse();
            }
            prop_assert_eq!(verdicts(&bytes, &list), expected);
        }
    }

    #[test]
    fn isolation_names() {
        for l in IsolationLevel::ALL {
            assert_eq!(l.name().parse(), Ok(l));
            assert_eq!(l.name().replace('_', "-").parse(), Ok(l));
            assert_eq!(l.to_string(), l.name());
        }
        assert_eq!(IsolationLevel::ReadCommitted.id(), 1);
        assert_eq!(IsolationLevel::ReadUncommitted.id(), 0);
        let e = "read committed".parse::<IsolationLevel>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"read committed\" is not read_committed or read_uncommitted"
        );
        assert!("read_committed_".parse::<IsolationLevel>().is_err());
    }
}
