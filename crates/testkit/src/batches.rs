//! Batch builders the tests of several crates share.

use krecords_codec::write::{end_txn_marker, EndTxnBatch, NewRecord, V2Builder};

/// `count` v2 batches of `per_batch` records each, offsets from 0; record `o` is `record(o)`:
/// (timestamp, key, value).
///
/// ```
/// let b = krecords_testkit::batches::numbered(3, 3, |o| (o, b"k".to_vec(), format!("v{o}").into_bytes()));
/// assert_eq!(b.len(), 3);
/// assert_eq!(krecords_testkit::batches::next_offset(&b[2]), 9);
/// ```
pub fn numbered(
    count: i64,
    per_batch: i64,
    record: impl Fn(i64) -> (i64, Vec<u8>, Vec<u8>),
) -> Vec<Vec<u8>> {
    (0..count)
        .map(|b| {
            let mut builder = V2Builder::new(b * per_batch);
            for o in b * per_batch..(b + 1) * per_batch {
                let (ts, key, value) = record(o);
                builder
                    .append(&NewRecord::new(ts, Some(&key), Some(&value)))
                    .expect("a record");
            }
            builder.finish().expect("a batch")
        })
        .collect()
}

/// One v2 batch at `offset` with these values (timestamps 1_714_000_000_000 + offset); of
/// producer `pid` in a transaction when `pid` is `Some`.
pub fn batch(offset: i64, pid: Option<i64>, values: &[&str]) -> Vec<u8> {
    let mut b = V2Builder::new(offset);
    if let Some(pid) = pid {
        b = b.producer(pid, 0, 0).transactional(true);
    }
    for (i, v) in values.iter().enumerate() {
        let ts = 1_714_000_000_000 + offset + i as i64;
        b.append(&NewRecord::new(ts, Some(b"k"), Some(v.as_bytes())))
            .expect("a record");
    }
    b.finish().expect("a batch")
}

/// A commit (or abort) marker of producer `pid` at `offset`.
pub fn marker(offset: i64, pid: i64, commit: bool) -> Vec<u8> {
    end_txn_marker(&EndTxnBatch {
        base_offset: offset,
        partition_leader_epoch: -1,
        producer_id: pid,
        producer_epoch: 0,
        coordinator_epoch: 0,
        commit,
        timestamp: 1_714_000_000_000,
    })
    .expect("a marker")
}

/// The offset after a v2 batch, from its header (base offset + last offset delta + 1), so
/// that a batch with a broken magic byte has one too.
pub fn next_offset(batch: &[u8]) -> i64 {
    let field = |at: usize, n: usize| -> i64 {
        batch.get(at..at + n).map_or(0, |b| {
            b.iter().fold(0i64, |acc, &x| (acc << 8) | i64::from(x))
        })
    };
    let base = field(0, 8);
    let delta = i64::from(field(23, 4) as i32);
    base + delta + 1
}
