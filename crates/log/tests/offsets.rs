//! ListOffsets semantics: earliest, latest, max timestamp, and time lookups through the time
//! index, checked against a brute-force scan.

use crate::util::*;
use krecords_log::{ListOffsetsResult, Log, OffsetSpec};

fn lookup(log: &Log, spec: OffsetSpec) -> (i64, Option<i64>) {
    let r = log.offsets(spec).unwrap();
    (r.offset, r.timestamp)
}

#[test]
fn empty_log() {
    let m = mem();
    let log = m.create(&[]);
    assert_eq!(lookup(&log, OffsetSpec::Earliest), (0, None));
    assert_eq!(lookup(&log, OffsetSpec::Latest), (0, None));
    assert_eq!(lookup(&log, OffsetSpec::MaxTimestamp), (-1, None));
    assert_eq!(lookup(&log, OffsetSpec::Timestamp(0)), (-1, None));
}

/// A deterministic jumble of timestamps: batches of 1..4 records, not in time order.
fn jumbled_log(m: &Mem, pairs: &[(&str, &str)]) -> (Log, Vec<(i64, i64)>) {
    let mut log = m.create(pairs);
    let mut seed = 12345u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as i64
    };
    let mut expected = Vec::new();
    for _ in 0..60 {
        let n = 1 + next() % 4;
        let recs: Vec<(i64, String)> = (0..n)
            .map(|_| (NOW - 100_000 + next() % 100_000, "v".repeat(10)))
            .collect();
        let refs: Vec<(i64, &str)> = recs.iter().map(|(t, v)| (*t, v.as_str())).collect();
        let info = append(&mut log, &v2_ts(&refs));
        for (i, (t, _)) in recs.iter().enumerate() {
            expected.push((info.base_offset + i as i64, *t));
        }
    }
    (log, expected)
}

#[test]
fn time_lookups_match_a_brute_force_scan() {
    let m = mem();
    let (log, records) = jumbled_log(
        &m,
        &[("segment.bytes", "1200"), ("index.interval.bytes", "150")],
    );
    let info = log.info().unwrap();
    assert!(info.segments.len() > 5, "{info:?}");
    assert!(info.segments.iter().any(|s| s.time_index_entries > 1));
    let mut targets: Vec<i64> = records.iter().map(|r| r.1).collect();
    targets.extend(records.iter().map(|r| r.1 + 1));
    targets.extend([i64::MIN, -1, 0, NOW - 200_000, NOW, NOW + 1]);
    for target in targets {
        let expected = records
            .iter()
            .find(|r| r.1 >= target)
            .map_or((-1, None), |r| (r.0, Some(r.1)));
        assert_eq!(
            lookup(&log, OffsetSpec::Timestamp(target)),
            expected,
            "target {target}"
        );
    }
    let max = records.iter().map(|r| r.1).max().unwrap();
    let first_max = records.iter().find(|r| r.1 == max).unwrap();
    assert_eq!(
        lookup(&log, OffsetSpec::MaxTimestamp),
        (first_max.0, Some(max))
    );
    assert_eq!(
        lookup(&log, OffsetSpec::Latest),
        (records.len() as i64, None)
    );
    log.verify_indexes().unwrap();
    // The same after a clean reopen (indexes read back from disk).
    log.close().unwrap();
    let log = m.open();
    let target = records[records.len() / 2].1;
    let expected = records.iter().find(|r| r.1 >= target).unwrap();
    assert_eq!(
        lookup(&log, OffsetSpec::Timestamp(target)),
        (expected.0, Some(expected.1))
    );
}

#[test]
fn time_lookup_respects_the_log_start_offset() {
    let m = mem();
    let (mut log, records) = jumbled_log(
        &m,
        &[("segment.bytes", "1200"), ("retention.bytes", "3000")],
    );
    log.retain().unwrap();
    let start = log.log_start_offset();
    assert!(start > 0);
    let target = i64::MIN;
    let first = records.iter().find(|r| r.0 >= start).unwrap();
    assert_eq!(
        lookup(&log, OffsetSpec::Timestamp(target)),
        (first.0, Some(first.1))
    );
    assert_eq!(lookup(&log, OffsetSpec::Earliest), (start, None));
}

#[test]
fn max_timestamp_picks_the_first_record_with_it() {
    let m = mem();
    let mut log = m.create(&[]);
    append(
        &mut log,
        &v2_ts(&[(NOW - 5, "a"), (NOW - 1, "b"), (NOW - 3, "c")]),
    );
    append(&mut log, &v2_ts(&[(NOW - 1, "d")]));
    append(&mut log, &v2_ts(&[(NOW - 9, "e")]));
    assert_eq!(lookup(&log, OffsetSpec::MaxTimestamp), (1, Some(NOW - 1)));
    assert_eq!(
        lookup(&log, OffsetSpec::Timestamp(NOW - 4)),
        (1, Some(NOW - 1))
    );
    assert_eq!(
        lookup(&log, OffsetSpec::Timestamp(NOW - 5)),
        (0, Some(NOW - 5))
    );
    assert_eq!(lookup(&log, OffsetSpec::Timestamp(NOW)), (-1, None));
    let r: ListOffsetsResult = log.offsets(OffsetSpec::MaxTimestamp).unwrap();
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        format!(r#"{{"offset":1,"timestamp":{}}}"#, NOW - 1)
    );
    assert_eq!(OffsetSpec::from_kafka_timestamp(-2), OffsetSpec::Earliest);
    assert_eq!(OffsetSpec::from_kafka_timestamp(-1), OffsetSpec::Latest);
    assert_eq!(
        OffsetSpec::from_kafka_timestamp(-3),
        OffsetSpec::MaxTimestamp
    );
    assert_eq!(
        OffsetSpec::from_kafka_timestamp(7),
        OffsetSpec::Timestamp(7)
    );
}

#[test]
fn log_append_time_logs_answer_with_append_times() {
    let m = mem();
    let mut log = m.create(&[("message.timestamp.type", "LogAppendTime")]);
    for i in 0..5 {
        m.clock.set(NOW + i * 1000);
        append(&mut log, &v2(1, &["a", "b"]));
    }
    assert_eq!(
        lookup(&log, OffsetSpec::Timestamp(NOW + 1500)),
        (4, Some(NOW + 2000))
    );
    assert_eq!(
        lookup(&log, OffsetSpec::MaxTimestamp),
        (8, Some(NOW + 4000))
    );
}

#[test]
fn magic_0_data_has_no_timestamps_to_find() {
    let m = mem();
    let mut log = m.create(&[("message.format.version", "0.9.0")]);
    append(&mut log, &legacy(0, -1, &["a", "b"]));
    assert_eq!(lookup(&log, OffsetSpec::Timestamp(0)), (-1, None));
    assert_eq!(lookup(&log, OffsetSpec::MaxTimestamp), (-1, None));
    assert_eq!(lookup(&log, OffsetSpec::Latest), (2, None));
}

#[test]
fn earliest_reports_the_first_epoch_when_it_covers_the_log_start() {
    // Kafka's ListOffsets EARLIEST carries the earliest cached leader epoch if that epoch starts
    // at or before the log start offset (the broker answers epoch 0 for a fresh topic).
    let m = mem();
    let mut log = m.create(&[]);
    assert_eq!(
        log.offsets(OffsetSpec::Earliest).unwrap().leader_epoch,
        None
    );
    log.set_leader_epoch(3);
    append(&mut log, &v2(1_714_000_000_000, &["a", "b"]));
    let r = log.offsets(OffsetSpec::Earliest).unwrap();
    assert_eq!((r.offset, r.leader_epoch), (0, Some(3)));
}

/// ListOffsets at an isolation level, as Kafka's `Partition.fetchOffsetForTimestamp` answers:
/// read_committed stops at the last stable offset, time lookups past the last fetchable offset
/// find nothing, earliest is never filtered.
#[test]
fn offsets_at_an_isolation_level() {
    use krecords_log::IsolationLevel as I;
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &v2(NOW, &["a", "b"])); // 0, 1
    append(&mut log, &idem(9, 0, 0, true, &["open"])); // 2: an open transaction
    append(&mut log, &v2(NOW + 5, &["c"])); // 3
    let at = |log: &Log, spec, i| log.offsets_at(spec, i).unwrap().offset;
    assert_eq!(at(&log, OffsetSpec::Latest, I::ReadUncommitted), 4);
    assert_eq!(at(&log, OffsetSpec::Latest, I::ReadCommitted), 2);
    assert_eq!(at(&log, OffsetSpec::Earliest, I::ReadCommitted), 0);
    assert_eq!(at(&log, OffsetSpec::Timestamp(NOW), I::ReadCommitted), 0);
    // The first record at NOW + 5 is offset 3, past the last stable offset.
    assert_eq!(
        at(&log, OffsetSpec::Timestamp(NOW + 5), I::ReadCommitted),
        -1
    );
    assert_eq!(
        at(&log, OffsetSpec::Timestamp(NOW + 5), I::ReadUncommitted),
        3
    );
    assert_eq!(at(&log, OffsetSpec::MaxTimestamp, I::ReadCommitted), -1);
    assert_eq!(at(&log, OffsetSpec::MaxTimestamp, I::ReadUncommitted), 3);
    // Without an isolation level: the log end.
    assert_eq!(log.offsets(OffsetSpec::Latest).unwrap().offset, 4);
    log.append_end_txn(9, 0, 0, true, NOW).unwrap(); // 4: commit
    assert_eq!(at(&log, OffsetSpec::Latest, I::ReadCommitted), 5);
    assert_eq!(
        at(&log, OffsetSpec::Timestamp(NOW + 5), I::ReadCommitted),
        3
    );
}

/// An offset index entry whose position was damaged to point past its batch: reads and time
/// lookups start where the records are, not at a later batch (they started 4 offsets late).
#[test]
fn a_damaged_offset_index_entry_does_not_move_reads() {
    let m = mem();
    let mut log = m.create(&[("index.interval.bytes", "100")]);
    for i in 0..40 {
        append(&mut log, &v2(NOW + i, &["0123456789"]));
    }
    log.close().unwrap();
    let index = m.path("00000000000000000000.index");
    let mut bytes = m.storage.file_bytes(&index).unwrap();
    let batch = v2(NOW, &["0123456789"]).len() as u32;
    // Entry 4's position, moved forward by four batches.
    let entry = 4 * 8;
    let pos = u32::from_be_bytes(bytes[entry + 4..entry + 8].try_into().unwrap());
    let rel = u32::from_be_bytes(bytes[entry..entry + 4].try_into().unwrap());
    bytes[entry + 4..entry + 8].copy_from_slice(&(pos + 4 * batch).to_be_bytes());
    m.storage.put_file(&index, &bytes);
    let log = Log::open_read_only_with(&m.dir, m.env.clone()).unwrap();
    for o in [i64::from(rel), i64::from(rel) + 1] {
        let f = log.read(o, 1).unwrap();
        let b = krecords_log::codec::read::Entries::new(&f.bytes)
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(b.first_offset(), Some(o), "read at {o}");
        assert_eq!(lookup(&log, OffsetSpec::Timestamp(NOW + o)).0, o);
    }
}
