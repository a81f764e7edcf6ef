//! Idempotent producers and transactions: every producer state rule, markers, the transaction
//! index, the last stable offset, read_committed reads, snapshots and their recovery.

use crate::util::*;
use krecords_codec::write::{end_txn_marker, EndTxnBatch};
use krecords_log::producer_state::parse_snapshot;
use krecords_log::storage::Storage;
use krecords_log::transaction::{AbortedTransaction, AbortedTxn};
use krecords_log::{AppendOrigin, Error, IsolationLevel, Log};

const RC: IsolationLevel = IsolationLevel::ReadCommitted;
const RU: IsolationLevel = IsolationLevel::ReadUncommitted;

fn end_txn(log: &mut Log, pid: i64, epoch: i16, coordinator_epoch: i32, commit: bool) -> i64 {
    log.append_end_txn(pid, epoch, coordinator_epoch, commit, NOW)
        .unwrap()
        .base_offset
}

#[test]
fn duplicate_returns_the_original_offsets_and_writes_nothing() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &v2(NOW, &["plain"]));
    let first = append(&mut log, &idem(7, 0, 0, false, &["a", "b"]));
    assert_eq!(
        (first.base_offset, first.last_offset, first.duplicate),
        (1, 2, false)
    );
    append(&mut log, &idem(7, 0, 2, false, &["c"]));
    let before = m.snapshot();
    let dup = append(&mut log, &idem(7, 0, 0, false, &["a", "b"]));
    assert!(dup.duplicate);
    assert_eq!((dup.base_offset, dup.last_offset), (1, 2));
    assert_eq!(dup.log_append_time, None);
    assert_eq!(m.snapshot(), before, "a duplicate wrote something");
    assert_eq!(log.log_end_offset(), 4);
    // A duplicate is recognised by its sequence range and epoch, not its contents (as Kafka).
    let dup = append(&mut log, &idem(7, 0, 2, false, &["other"]));
    assert!(dup.duplicate && dup.base_offset == 3);
    // The JSON line of `krec log append`.
    assert_eq!(
        serde_json::to_string(&dup).unwrap(),
        r#"{"base_offset":3,"last_offset":3,"log_append_time":null,"duplicate":true}"#
    );
}

#[test]
fn only_the_last_five_batches_are_remembered() {
    let m = mem();
    let mut log = m.create(&[]);
    for seq in 0..6 {
        append(&mut log, &idem(1, 0, seq, false, &["x"]));
    }
    // Batch 0 fell out: its retry is judged by its sequence.
    rejected(
        &m,
        &mut log,
        &idem(1, 0, 0, false, &["x"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    for seq in 1..6 {
        let d = append(&mut log, &idem(1, 0, seq, false, &["x"]));
        assert!(d.duplicate);
        assert_eq!(d.base_offset, i64::from(seq));
    }
    let state = log.producer_state(1).unwrap();
    assert_eq!(state.batches.len(), 5);
    assert_eq!(state.last_seq(), 5);
}

#[test]
fn duplicates_keep_the_log_append_time_of_the_original() {
    let m = mem();
    let mut log = m.create(&[("message.timestamp.type", "LogAppendTime")]);
    let first = append(&mut log, &idem(3, 0, 0, false, &["a"]));
    assert_eq!(first.log_append_time, Some(NOW));
    m.clock.advance(5000);
    let dup = append(&mut log, &idem(3, 0, 0, false, &["a"]));
    assert!(dup.duplicate);
    assert_eq!(dup.log_append_time, Some(NOW));
}

#[test]
fn sequences_must_follow_and_unknown_producers_start_anywhere() {
    let m = mem();
    let mut log = m.create(&[]);
    // No state for producer 9: any first sequence is taken.
    assert_eq!(
        append(&mut log, &idem(9, 4, 1000, false, &["a", "b"])).base_offset,
        0
    );
    rejected_for(
        &m,
        &mut log,
        &idem(9, 4, 1003, false, &["gap"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
        "expected sequence 1002",
    );
    rejected(
        &m,
        &mut log,
        &idem(9, 4, 1001, false, &["overlap"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    assert_eq!(
        append(&mut log, &idem(9, 4, 1002, false, &["c"])).base_offset,
        2
    );
}

#[test]
fn sequence_numbers_wrap_from_max_to_zero() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &idem(5, 0, i32::MAX - 1, false, &["a"]));
    // MAX, 0, 1: the batch wraps in the middle.
    let wrap = append(&mut log, &idem(5, 0, i32::MAX, false, &["b", "c", "d"]));
    assert_eq!((wrap.base_offset, wrap.last_offset), (1, 3));
    assert_eq!(log.producer_state(5).unwrap().last_seq(), 1);
    assert!(append(&mut log, &idem(5, 0, i32::MAX, false, &["b", "c", "d"])).duplicate);
    rejected(
        &m,
        &mut log,
        &idem(5, 0, i32::MAX, false, &["e"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    assert_eq!(
        append(&mut log, &idem(5, 0, 2, false, &["e"])).base_offset,
        4
    );
    // A batch ending exactly at MAX, then the next one at 0.
    append(&mut log, &idem(6, 0, i32::MAX - 1, false, &["f", "g"]));
    assert_eq!(
        append(&mut log, &idem(6, 0, 0, false, &["h"])).base_offset,
        7
    );
}

#[test]
fn epochs_fence_zombies_and_new_epochs_start_at_zero() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &idem(2, 3, 0, false, &["a"]));
    append(&mut log, &idem(2, 3, 1, false, &["b"]));
    let e = rejected(
        &m,
        &mut log,
        &idem(2, 2, 2, false, &["zombie"]),
        "INVALID_PRODUCER_EPOCH",
    );
    assert!(matches!(
        e,
        Error::InvalidProducerEpoch {
            epoch: 2,
            current_epoch: 3,
            ..
        }
    ));
    rejected(
        &m,
        &mut log,
        &idem(2, 4, 2, false, &["x"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    assert_eq!(
        append(&mut log, &idem(2, 4, 0, false, &["c"])).base_offset,
        2
    );
    // The old epoch's batches are forgotten; their retries are fenced.
    rejected(
        &m,
        &mut log,
        &idem(2, 3, 1, false, &["b"]),
        "INVALID_PRODUCER_EPOCH",
    );
    assert_eq!(log.producer_state(2).unwrap().producer_epoch, 4);
}

#[test]
fn non_transactional_batch_inside_a_transaction_is_invalid_txn_state() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &idem(4, 0, 0, true, &["t"]));
    rejected(
        &m,
        &mut log,
        &idem(4, 0, 1, false, &["plain"]),
        "INVALID_TXN_STATE",
    );
    // Sequence errors take precedence, as in Kafka.
    rejected(
        &m,
        &mut log,
        &idem(4, 0, 5, false, &["plain"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    append(&mut log, &idem(4, 0, 1, true, &["t2"]));
    end_txn(&mut log, 4, 0, 0, true);
    assert_eq!(
        append(&mut log, &idem(4, 0, 2, false, &["after"])).base_offset,
        3
    );
}

#[test]
fn clients_cannot_write_markers_but_the_coordinator_can() {
    let m = mem();
    let mut log = m.create(&[("compression.type", "gzip")]);
    append(&mut log, &idem(8, 1, 0, true, &["t"]));
    let marker = end_txn_marker(&EndTxnBatch {
        base_offset: 0,
        partition_leader_epoch: -1,
        producer_id: 8,
        producer_epoch: 1,
        coordinator_epoch: 3,
        commit: true,
        timestamp: NOW,
    })
    .unwrap();
    rejected(&m, &mut log, &marker, "INVALID_RECORD");
    let info = log.append(&marker, AppendOrigin::Coordinator).unwrap();
    assert_eq!(info.base_offset, 1);
    assert!(!info.rebuilt, "markers are not compressed");
    assert_eq!(log.last_stable_offset(), 2);
    let stored = log.read(1, 1 << 20).unwrap().bytes;
    let b = first_batch(&stored);
    let krecords_codec::read::Batch::V2(v) = b else {
        panic!()
    };
    assert!(v.is_control() && v.is_transactional());
    assert_eq!(v.compression().unwrap(), krecords_codec::Compression::None);
    assert_eq!(log.producer_state(8).unwrap().coordinator_epoch, 3);
    // Negative producer ids cannot end transactions.
    assert_eq!(
        log.append_end_txn(-1, 0, 0, true, NOW)
            .unwrap_err()
            .kafka_name(),
        "INVALID_RECORD"
    );
    // Below message format v2 there are no markers.
    let mut old = m.create_in("/logs/old-0", &[("message.format.version", "0.10.2")]);
    assert_eq!(
        old.append_end_txn(1, 0, 0, true, NOW)
            .unwrap_err()
            .kafka_name(),
        "UNSUPPORTED_FOR_MESSAGE_FORMAT"
    );
}

#[test]
fn stale_coordinator_and_producer_epochs_are_fenced() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &idem(1, 2, 0, true, &["a"]));
    end_txn(&mut log, 1, 2, 5, true);
    append(&mut log, &idem(1, 2, 1, true, &["b"]));
    let before = m.snapshot();
    let e = log.append_end_txn(1, 2, 4, false, NOW).unwrap_err();
    assert_eq!(e.kafka_name(), "TRANSACTION_COORDINATOR_FENCED");
    let e = log.append_end_txn(1, 1, 5, false, NOW).unwrap_err();
    assert_eq!(e.kafka_name(), "INVALID_PRODUCER_EPOCH");
    assert_eq!(m.snapshot(), before);
    assert_eq!(log.first_unstable_offset(), Some(2));
    // A newer coordinator epoch is taken; the marker may also bump the producer epoch.
    end_txn(&mut log, 1, 3, 6, false);
    let state = log.producer_state(1).unwrap();
    assert_eq!((state.producer_epoch, state.coordinator_epoch), (3, 6));
    assert!(state.batches.is_empty());
    assert_eq!(state.current_txn_first_offset, None);
    // After the bump the producer must start again at 0.
    rejected(
        &m,
        &mut log,
        &idem(1, 3, 2, false, &["c"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    append(&mut log, &idem(1, 3, 0, false, &["c"]));
    // A marker for a producer the log never saw is written and creates its state.
    end_txn(&mut log, 99, 0, 0, false);
    assert!(log.aborted_txns().iter().all(|t| t.producer_id != 99));
    assert_eq!(log.producer_state(99).unwrap().coordinator_epoch, 0);
}

/// Producers 1, 2 and 3 interleave in one segment: 2 aborts while 1 and 3 commit around it.
///
/// ```text
/// 0 p1 t  1 p2 t  2 plain  3 p2 t  4 p1 t  5 p3 t  6 p2 ABORT  7 p1 COMMIT  8 p3 t  9 p3 COMMIT
/// ```
fn interleaved(m: &Mem) -> Log {
    let mut log = m.create(&[]);
    append(&mut log, &idem(1, 0, 0, true, &["p1-a"]));
    append(&mut log, &idem(2, 0, 0, true, &["p2-a"]));
    append(&mut log, &v2(NOW, &["plain"]));
    append(&mut log, &idem(2, 0, 1, true, &["p2-b"]));
    append(&mut log, &idem(1, 0, 1, true, &["p1-b"]));
    append(&mut log, &idem(3, 0, 0, true, &["p3-a"]));
    assert_eq!(log.last_stable_offset(), 0);
    assert_eq!(end_txn(&mut log, 2, 0, 0, false), 6);
    assert_eq!(log.last_stable_offset(), 0);
    assert_eq!(end_txn(&mut log, 1, 0, 0, true), 7);
    assert_eq!(log.last_stable_offset(), 5);
    append(&mut log, &idem(3, 0, 1, true, &["p3-b"]));
    assert_eq!(end_txn(&mut log, 3, 0, 0, true), 9);
    assert_eq!(log.last_stable_offset(), 10);
    log
}

#[test]
fn aborts_interleaved_with_commits_of_other_producers() {
    let m = mem();
    let log = interleaved(&m);
    let expected = AbortedTxn {
        producer_id: 2,
        first_offset: 1,
        last_offset: 6,
        // Producer 1's transaction (from offset 0) was still open.
        last_stable_offset: 0,
    };
    assert_eq!(log.aborted_txns(), vec![expected]);
    let all = ["p1-a", "p2-a", "plain", "p2-b", "p1-b", "p3-a", "p3-b"];
    assert_eq!(consumed(&log, RU), all);
    assert_eq!(
        consumed(&log, RC),
        ["p1-a", "plain", "p1-b", "p3-a", "p3-b"]
    );
    let f = log.fetch(0, usize::MAX, RC).unwrap();
    assert_eq!(
        f.aborted_transactions,
        Some(vec![AbortedTransaction {
            producer_id: 2,
            first_offset: 1
        }])
    );
    assert_eq!(
        (f.next_offset, f.last_stable_offset, f.high_watermark),
        (10, 10, 10)
    );
    assert_eq!(
        log.fetch(0, usize::MAX, RU).unwrap().aborted_transactions,
        None
    );
    // From offset 7 the abort is behind: nothing is listed.
    assert_eq!(
        log.fetch(7, usize::MAX, RC).unwrap().aborted_transactions,
        Some(vec![])
    );
    // A small fetch from offset 3 still lists it (its marker is at 6, inside the range).
    let f = log.fetch(3, 1, RC).unwrap();
    assert_eq!(f.next_offset, 4);
    assert_eq!(f.aborted_transactions.unwrap().len(), 1);
    // The file: one 34-byte entry in Kafka's layout.
    let bytes = m.file(&seg(0, ".txnindex")).unwrap();
    assert_eq!(bytes, expected.to_bytes());
    assert_eq!(
        txn_index_files(&m),
        vec![(seg(0, ".txnindex"), vec![expected])]
    );
    assert_eq!(log.info().unwrap().last_stable_offset, 10);
}

#[test]
fn read_committed_stops_at_the_last_stable_offset() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &v2(NOW, &["a"]));
    append(&mut log, &idem(1, 0, 0, true, &["open"]));
    append(&mut log, &v2(NOW, &["b"]));
    assert_eq!((log.last_stable_offset(), log.high_watermark()), (1, 3));
    let f = log.fetch(0, usize::MAX, RC).unwrap();
    assert_eq!(f.next_offset, 1);
    assert_eq!(records_of(&f.bytes).len(), 1);
    // At or past the LSO: no bytes, no error (Kafka returns an empty fetch).
    for offset in [1, 2, 3] {
        let f = log.fetch(offset, usize::MAX, RC).unwrap();
        assert!(f.bytes.is_empty());
        assert_eq!(f.next_offset, offset);
    }
    assert_eq!(
        log.fetch(4, 1, RC).unwrap_err().kafka_name(),
        "OFFSET_OUT_OF_RANGE"
    );
    assert_eq!(consumed(&log, RC), ["a"]);
    assert_eq!(consumed(&log, RU), ["a", "open", "b"]);
    end_txn(&mut log, 1, 0, 0, true);
    assert_eq!(consumed(&log, RC), ["a", "open", "b"]);
    let c = log.consume(0, usize::MAX, RC).unwrap();
    assert_eq!(c.next_offset, 4);
    assert_eq!(
        c.records.iter().map(|r| r.offset).collect::<Vec<_>>(),
        [0, 1, 2]
    );
}

#[test]
fn a_transaction_spanning_a_segment_roll() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &idem(1, 0, 0, true, &["t0"]));
    append(&mut log, &v2(NOW, &["plain0"]));
    log.roll().unwrap();
    append(&mut log, &idem(1, 0, 1, true, &["t1"]));
    append(&mut log, &v2(NOW, &["plain1"]));
    assert_eq!(log.last_stable_offset(), 0);
    assert_eq!(end_txn(&mut log, 1, 0, 0, false), 4);
    // The entry goes to the segment of the marker, with the first offset in the segment before.
    assert_eq!(
        txn_index_files(&m),
        vec![(
            seg(2, ".txnindex"),
            vec![AbortedTxn {
                producer_id: 1,
                first_offset: 0,
                last_offset: 4,
                last_stable_offset: 5
            }]
        )]
    );
    assert!(!exists(&m, &seg(0, ".txnindex")));
    assert_eq!(consumed(&log, RC), ["plain0", "plain1"]);
    // A fetch of the first segment alone still gets the abort from the next one.
    let f = log.fetch(0, 1, RC).unwrap();
    assert_eq!(f.next_offset, 1);
    assert_eq!(f.aborted_transactions.unwrap().len(), 1);
    let c = log.consume(0, 1, RC).unwrap();
    assert!(c.records.is_empty());
    assert_eq!(c.next_offset, 1);
    // Same after a restart, and after a crash that rebuilds the active segment's index.
    log.close().unwrap();
    let log = m.open();
    assert_eq!(consumed(&log, RC), ["plain0", "plain1"]);
    drop(log);
    m.storage.crash();
    let log = m.open();
    assert!(!log.recovery_info().clean_shutdown);
    assert_eq!(log.aborted_txns().len(), 1);
    assert_eq!(consumed(&log, RC), ["plain0", "plain1"]);
}

#[test]
fn duplicates_across_a_clean_restart_use_the_snapshot() {
    let m = mem();
    let mut log = m.create(&[]);
    for seq in 0..3 {
        append(&mut log, &idem(1, 0, seq, false, &["x"]));
    }
    append(&mut log, &idem(2, 5, 0, true, &["open"]));
    log.close().unwrap();
    assert_eq!(snapshot_files(&m), vec![4]);
    let mut log = m.open();
    // The snapshot keeps each producer's last batch: its retry is still a duplicate.
    let d = append(&mut log, &idem(1, 0, 2, false, &["x"]));
    assert!(d.duplicate && d.base_offset == 2);
    // Older batches are judged by sequence, as after a Kafka restart.
    rejected(
        &m,
        &mut log,
        &idem(1, 0, 1, false, &["x"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    assert_eq!(
        append(&mut log, &idem(1, 0, 3, false, &["y"])).base_offset,
        4
    );
    // The open transaction survived.
    assert_eq!(log.last_stable_offset(), 3);
    assert_eq!(
        log.producer_state(2).unwrap().current_txn_first_offset,
        Some(3)
    );
}

#[test]
fn duplicates_across_a_crash_use_the_snapshot_and_the_log_after_it() {
    let m = mem();
    let mut log = m.create(&[("flush.messages", "1")]);
    append(&mut log, &idem(1, 0, 0, false, &["a"]));
    append(&mut log, &idem(1, 0, 1, false, &["b"]));
    log.roll().unwrap();
    assert_eq!(snapshot_files(&m), vec![2]);
    append(&mut log, &idem(1, 0, 2, false, &["c"]));
    append(&mut log, &idem(1, 0, 3, false, &["d"]));
    drop(log);
    m.storage.crash();
    let mut log = m.open();
    assert!(!log.recovery_info().clean_shutdown);
    // Snapshot at 2 (batch 1 only) + the log after it (batches 2 and 3).
    let state = log.producer_state(1).unwrap();
    assert_eq!(
        state.batches.iter().map(|b| b.last_seq).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    for (seq, offset) in [(1, 1), (2, 2), (3, 3)] {
        let d = append(&mut log, &idem(1, 0, seq, false, &["x"]));
        assert!(d.duplicate);
        assert_eq!(d.base_offset, offset);
    }
    rejected(
        &m,
        &mut log,
        &idem(1, 0, 0, false, &["a"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
}

#[test]
fn without_snapshots_the_state_is_rebuilt_from_the_log() {
    let m = mem();
    let mut log = m.create(&[("segment.bytes", "300")]);
    for seq in 0..6 {
        append(&mut log, &idem(1, 0, seq, seq >= 4, &["0123456789"]));
    }
    assert!(log.info().unwrap().segments.len() > 1);
    log.close().unwrap();
    for offset in snapshot_files(&m) {
        m.storage
            .remove(&m.path(&krecords_log::files::file_name(offset, ".snapshot")))
            .unwrap();
    }
    let mut log = m.open();
    // Scanned from the log start: all five last batches are known again.
    assert_eq!(log.producer_state(1).unwrap().batches.len(), 5);
    assert_eq!(log.first_unstable_offset(), Some(4));
    assert!(append(&mut log, &idem(1, 0, 1, false, &["0123456789"])).duplicate);
    assert!(append(&mut log, &idem(1, 0, 5, true, &["0123456789"])).duplicate);
    // And a snapshot was written at the log end for the next open.
    assert!(snapshot_files(&m).contains(&6));
}

#[test]
fn snapshot_files_hold_kafkas_entries() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &idem(10, 2, 7, false, &["a", "b", "c"]));
    append(&mut log, &idem(11, 0, 0, true, &["t"]));
    end_txn(&mut log, 12, 4, 9, false);
    let states = log.producer_states();
    log.close().unwrap();
    let bytes = m.file(&seg(5, ".snapshot")).unwrap();
    assert_eq!(&bytes[..2], &[0, 1], "version 1");
    assert_eq!(bytes.len(), 10 + 3 * 46);
    let entries = parse_snapshot(&m.path(&seg(5, ".snapshot")), &bytes).unwrap();
    let summary: Vec<_> = entries
        .iter()
        .map(|e| {
            (
                e.producer_id,
                e.producer_epoch,
                e.last_sequence,
                e.last_offset,
                e.offset_delta,
                e.coordinator_epoch,
                e.current_txn_first_offset,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (10, 2, 9, 2, 2, -1, -1),
            (11, 0, 0, 3, 0, -1, 3),
            (12, 4, -1, -1, 0, 9, -1)
        ]
    );
    assert_eq!(entries[2].timestamp, NOW);
    let log = m.open();
    assert_eq!(log.producer_states(), states);
}

#[test]
fn a_corrupt_snapshot_is_ignored_and_the_log_scanned() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &idem(1, 0, 0, true, &["a"]));
    append(&mut log, &idem(1, 0, 1, true, &["b"]));
    log.close().unwrap();
    let path = m.path(&seg(2, ".snapshot"));
    let mut bytes = m.file(&seg(2, ".snapshot")).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 0xff;
    m.storage
        .create(&path)
        .unwrap()
        .write_at(&bytes, 0)
        .unwrap();
    let mut log = m.open();
    // Rebuilt from the log: both batches known, transaction open.
    assert_eq!(log.producer_state(1).unwrap().batches.len(), 2);
    assert_eq!(log.first_unstable_offset(), Some(0));
    assert!(append(&mut log, &idem(1, 0, 0, true, &["a"])).duplicate);
    // The corrupt file was replaced by a good snapshot at the log end.
    let fresh = m.file(&seg(2, ".snapshot")).unwrap();
    assert!(parse_snapshot(&path, &fresh).is_ok());
}

#[test]
fn snapshots_are_taken_at_rolls_and_old_ones_deleted() {
    let m = mem();
    let mut log = m.create(&[]);
    for i in 0..5 {
        append(&mut log, &idem(1, 0, i, false, &["x"]));
        log.roll().unwrap();
    }
    // Segments at 0..=5; snapshots kept for the last two segments only.
    assert_eq!(log.info().unwrap().segments.len(), 6);
    assert_eq!(snapshot_files(&m), vec![4, 5]);
    assert_eq!(log.producer_snapshot_offsets(), vec![4, 5]);
    // Retention deletes the snapshots of the segments it deletes.
    let m2 = m.at("/logs/r-0");
    let mut log2 = m2.create(&[("retention.bytes", "0")]);
    for i in 0..3 {
        append(&mut log2, &idem(1, 0, i, false, &["x"]));
        log2.roll().unwrap();
    }
    assert_eq!(snapshot_files(&m2), vec![2, 3]);
    assert_eq!(log2.retain().unwrap().deleted_segments, 3);
    // The empty active segment at 3 stays, with its snapshot.
    assert_eq!(snapshot_files(&m2), vec![3]);
    // The producer is still known until the log reopens.
    assert!(log2.producer_state(1).is_some());
}

#[test]
fn producer_ids_expire() {
    let m = mem();
    let mut log = m.create(&[
        ("producer.id.expiration.ms", "1000"),
        ("producer.id.expiration.check.interval.ms", "100"),
    ]);
    append(&mut log, &idem(1, 0, 0, false, &["a"]));
    append(&mut log, &idem(2, 0, 0, true, &["open"]));
    m.clock.advance(1000);
    // The next append runs the check: producer 1 is gone, producer 2 has an open transaction.
    append(&mut log, &v2(NOW + 1000, &["tick"]));
    assert!(log.producer_state(1).is_none());
    assert!(log.producer_state(2).is_some());
    // An expired producer is unknown: any sequence goes.
    assert_eq!(
        append(&mut log, &idem(1, 0, 50, false, &["b"])).base_offset,
        3
    );
    // Loading a snapshot also drops expired producers.
    end_txn(&mut log, 2, 0, 0, true);
    log.close().unwrap();
    m.clock.advance(5000);
    let mut log = m.open();
    assert!(log.producer_states().is_empty());
    assert_eq!(log.remove_expired_producers(), 0);
}

#[test]
fn a_damaged_txnindex_is_rebuilt() {
    let m = mem();
    let log = interleaved(&m);
    let good = m.file(&seg(0, ".txnindex")).unwrap();
    log.close().unwrap();
    // A partial entry: the segment is recovered and its index rebuilt from the log.
    m.storage
        .create(&m.path(&seg(0, ".txnindex")))
        .unwrap()
        .write_at(&good[..20], 0)
        .unwrap();
    let log = m.open();
    assert_eq!(log.recovery_info().recovered_segments, 1);
    assert_eq!(m.file(&seg(0, ".txnindex")).unwrap(), good);
    assert_eq!(
        consumed(&log, RC),
        ["p1-a", "plain", "p1-b", "p3-a", "p3-b"]
    );
    // `krec log recover` rebuilds everything from scratch, with the same result.
    drop(log);
    let info = Log::recover_with(&m.dir, m.env.clone()).unwrap();
    assert_eq!(info.recovered_segments, 1);
    assert_eq!(m.file(&seg(0, ".txnindex")).unwrap(), good);
}

#[test]
fn control_and_aborted_records_are_hidden_from_consumers_on_old_and_new_paths() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &idem(1, 0, 0, true, &["x", "y"]));
    end_txn(&mut log, 1, 0, 0, false);
    append(&mut log, &idem(1, 0, 2, true, &["z"]));
    end_txn(&mut log, 1, 0, 0, true);
    // read_uncommitted shows the aborted records but never the markers.
    assert_eq!(consumed(&log, RU), ["x", "y", "z"]);
    assert_eq!(consumed(&log, RC), ["z"]);
    // From the middle of the aborted batch.
    let c = log.consume(1, usize::MAX, RC).unwrap();
    assert_eq!(c.records.len(), 1);
    assert_eq!(c.records[0].offset, 3);
    assert_eq!(c.next_offset, 5);
}

#[test]
fn append_all_checks_sequences_across_its_entries() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &v2(NOW, &["plain"]));
    let b0 = idem(7, 0, 0, false, &["a", "b"]);
    let b1 = idem(7, 0, 2, false, &["c"]);
    let gap = idem(7, 0, 4, false, &["e"]);
    // A gap in the third batch refuses all three, although the first two are in order.
    rejected_all(
        &m,
        &mut log,
        &[&b0, &b1, &gap],
        2,
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    assert!(log.producer_state(7).is_none());
    // The second batch is checked against the state the first leaves: an unknown producer may
    // start anywhere, but the next batch must follow it.
    let late_start = idem(8, 0, 40, false, &["x"]);
    let not_next = idem(8, 0, 40, false, &["x", "y"]);
    rejected_all(
        &m,
        &mut log,
        &[&late_start, &not_next],
        1,
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    // In order, they go in with consecutive offsets.
    let b2 = idem(7, 0, 3, false, &["d"]);
    let infos = log
        .append_all(&[&b0, &b1, &b2], AppendOrigin::Client)
        .unwrap();
    let ranges: Vec<(i64, i64, bool)> = infos
        .iter()
        .map(|i| (i.base_offset, i.last_offset, i.duplicate))
        .collect();
    assert_eq!(ranges, [(1, 2, false), (3, 3, false), (4, 4, false)]);
    let state = log.producer_state(7).unwrap();
    assert_eq!(state.last_seq(), 3);
    assert_eq!(state.batches.len(), 3);
    assert_eq!(consumed(&log, RU), ["plain", "a", "b", "c", "d"]);
}

#[test]
fn append_all_answers_duplicates_inside_the_call() {
    let m = mem();
    let mut log = m.create(&[]);
    let b0 = idem(7, 0, 0, false, &["a", "b"]);
    let b1 = idem(7, 0, 2, false, &["c"]);
    // A retry of an earlier entry of the same call is its duplicate: the offsets it got.
    let infos = log
        .append_all(&[&b0, &b1, &b0, &b1], AppendOrigin::Client)
        .unwrap();
    let ranges: Vec<(i64, i64, bool)> = infos
        .iter()
        .map(|i| (i.base_offset, i.last_offset, i.duplicate))
        .collect();
    assert_eq!(
        ranges,
        [(0, 1, false), (2, 2, false), (0, 1, true), (2, 2, true)]
    );
    assert_eq!(log.log_end_offset(), 3);
    assert_eq!(consumed(&log, RU), ["a", "b", "c"]);
    // A retry of a batch already in the log, then the next batch: the duplicate writes
    // nothing, the new batch follows.
    let before = m.snapshot();
    let b2 = idem(7, 0, 3, false, &["d"]);
    let infos = log.append_all(&[&b1, &b2], AppendOrigin::Client).unwrap();
    assert!(infos[0].duplicate && infos[0].base_offset == 2);
    assert_eq!((infos[1].base_offset, infos[1].duplicate), (3, false));
    assert_ne!(m.snapshot(), before);
    // A call of duplicates only writes nothing.
    let before = m.snapshot();
    let infos = log.append_all(&[&b0, &b2], AppendOrigin::Client).unwrap();
    assert!(infos.iter().all(|i| i.duplicate));
    assert_eq!(m.snapshot(), before);
    // A duplicate does not excuse a later refusal.
    rejected_all(
        &m,
        &mut log,
        &[&b2, &idem(7, 0, 9, false, &["z"])],
        1,
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
}

#[test]
fn append_all_checks_epochs_and_transactions_across_its_entries() {
    let m = mem();
    let mut log = m.create(&[]);
    // An epoch bump in the first entry fences the old epoch in the second.
    rejected_all(
        &m,
        &mut log,
        &[
            &idem(3, 1, 0, false, &["new"]),
            &idem(3, 0, 1, false, &["zombie"]),
        ],
        1,
        "INVALID_PRODUCER_EPOCH",
    );
    // A transaction opened by the first entry refuses a non-transactional batch in the second.
    rejected_all(
        &m,
        &mut log,
        &[
            &v2(NOW, &["plain"]),
            &idem(4, 0, 0, true, &["t"]),
            &idem(4, 0, 1, false, &["not-t"]),
        ],
        2,
        "INVALID_TXN_STATE",
    );
    assert_eq!(log.last_stable_offset(), 0);
    // Two producers' transactions in one call: both open, the LSO is the first one's start.
    let infos = log
        .append_all(
            &[
                &v2(NOW, &["plain"]),
                &idem(4, 0, 0, true, &["t4"]),
                &idem(5, 0, 0, true, &["t5"]),
                &idem(4, 0, 1, true, &["t4-b"]),
            ],
            AppendOrigin::Client,
        )
        .unwrap();
    assert_eq!(infos.len(), 4);
    assert_eq!(log.first_unstable_offset(), Some(1));
    end_txn(&mut log, 4, 0, 0, false);
    assert_eq!(log.last_stable_offset(), 2);
    end_txn(&mut log, 5, 0, 0, true);
    assert_eq!(log.last_stable_offset(), log.log_end_offset());
    assert_eq!(consumed(&log, RC), ["plain", "t5"]);
    assert_eq!(log.aborted_txns().len(), 1);
}

/// A marker whose write fails partway (its index entry, say, on a full disk) is undone: the
/// transaction stays open, the error says nothing was appended, and a retry writes one marker.
#[test]
fn a_marker_whose_write_fails_is_undone_and_its_retry_writes_one() {
    for n in 1.. {
        let m = mem();
        let mut log = m.create(&[("index.interval.bytes", "0"), ("segment.bytes", "300")]);
        append(&mut log, &idem(7, 0, 0, true, &["a", "b"]));
        append(&mut log, &idem(7, 0, 2, true, &["c"]));
        m.storage.fail_write_after(n);
        let r = log.append_end_txn(7, 0, 0, true, NOW);
        m.storage.clear_faults();
        let Err(e) = r else {
            assert!(n > 1, "the first write cannot succeed");
            break;
        };
        let at = format!("write {n}: {e}");
        assert!(
            matches!(
                e,
                Error::AppendFailed {
                    end_offset: 3,
                    undo_failed: None,
                    ..
                }
            ),
            "{at}"
        );
        assert_eq!(log.log_end_offset(), 3, "{at}");
        assert_eq!(log.first_unstable_offset(), Some(0), "{at}");
        assert!(
            log.consume(0, 1 << 20, RC).unwrap().records.is_empty(),
            "{at}"
        );
        assert_eq!(end_txn(&mut log, 7, 0, 0, true), 3, "{at}");
        assert_eq!(log.log_end_offset(), 4, "{at}");
        assert_eq!(
            log.consume(0, 1 << 20, RC).unwrap().records.len(),
            3,
            "{at}"
        );
        drop(log);
        let log = m.open();
        assert_eq!(log.recovery_info().truncated_bytes, 0, "{at}");
        assert_eq!(
            (log.log_end_offset(), log.first_unstable_offset()),
            (4, None)
        );
    }
}
