//! Retention by size and by time, the log start offset, and reads below it.

use crate::util::*;
use krecords_log::Log;

fn filled(pairs: &[(&str, &str)], timestamps: &[i64]) -> (Mem, Log) {
    let m = mem();
    let batch = v2(NOW, &["0123456789"]);
    let seg_bytes = (2 * batch.len()).to_string();
    let mut all: Vec<(&str, &str)> = vec![("segment.bytes", &seg_bytes)];
    all.extend_from_slice(pairs);
    let mut log = m.create(&all);
    for &ts in timestamps {
        append(&mut log, &v2(ts, &["0123456789"]));
    }
    (m, log)
}

#[test]
fn retention_by_size_deletes_whole_old_segments() {
    // Segments of 2 batches (160 bytes): 0-1, 2-3, 4-5, 6.
    let (m, mut log) = filled(&[("retention.bytes", "330")], &[NOW; 7]);
    assert_eq!(segment_bases(&log), vec![0, 2, 4, 6]);
    // 560 bytes, 230 over: only one whole segment (160) fits in the excess.
    let r = log.retain().unwrap();
    assert_eq!((r.deleted_segments, r.log_start_offset), (1, 2));
    assert_eq!(segment_bases(&log), vec![2, 4, 6]);
    assert!(!exists(&m, &seg(0, ".log")));
    assert!(!exists(&m, &seg(0, ".index")));
    assert!(!exists(&m, &seg(0, ".timeindex")));
    assert_eq!(log.retain().unwrap().deleted_segments, 0);
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        r#"{"deleted_segments":1,"log_start_offset":2}"#
    );
}

#[test]
fn retention_by_time_uses_the_largest_timestamp_of_each_segment() {
    let day = 86_400_000;
    let (_m, mut log) = filled(
        &[("retention.ms", &day.to_string())],
        &[
            NOW - 3 * day,
            NOW - 2 * day,
            NOW - 2 * day,
            NOW - 1000,
            NOW,
            NOW,
        ],
    );
    assert_eq!(segment_bases(&log), vec![0, 2, 4]);
    // Segment 0 ends 2 days ago, segment 2 holds a recent batch.
    let r = log.retain().unwrap();
    assert_eq!((r.deleted_segments, r.log_start_offset), (1, 2));
    // Reads below the log start offset are out of range; earliest moved.
    let e = log.read(1, 100).unwrap_err();
    assert_eq!(e.kafka_name(), "OFFSET_OUT_OF_RANGE");
    assert_eq!(log.read(2, 1).unwrap().next_offset, 3);
    assert_eq!(
        log.offsets(krecords_log::OffsetSpec::Earliest)
            .unwrap()
            .offset,
        2
    );
}

#[test]
fn retention_can_delete_the_active_segment_after_rolling() {
    let (m, mut log) = filled(
        &[("retention.ms", "1000")],
        &[NOW - 5000, NOW - 5000, NOW - 5000],
    );
    assert_eq!(segment_bases(&log), vec![0, 2]);
    let r = log.retain().unwrap();
    assert_eq!((r.deleted_segments, r.log_start_offset), (2, 3));
    assert_eq!(segment_bases(&log), vec![3]);
    assert_eq!(log.log_end_offset(), 3);
    assert_eq!(log.read(3, 100).unwrap().bytes, Vec::<u8>::new());
    // An empty active segment is never deleted.
    m.clock.advance(1_000_000);
    assert_eq!(log.retain().unwrap().deleted_segments, 0);
    append(&mut log, &v2(NOW + 1_000_000, &["after"]));
    assert_eq!(read_all(&log, 1).len(), 1);
    log.close().unwrap();
    let log = m.open();
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (3, 4));
}

#[test]
fn retention_trims_the_leader_epoch_checkpoint() {
    let (m, mut log) = filled(&[("retention.bytes", "0")], &[]);
    append(&mut log, &v2(NOW, &["0123456789"]));
    log.set_leader_epoch(3);
    append(&mut log, &v2(NOW, &["0123456789"]));
    append(&mut log, &v2(NOW, &["0123456789"]));
    append(&mut log, &v2(NOW, &["0123456789"]));
    assert_eq!(log.info().unwrap().leader_epochs, vec![(0, 0), (3, 1)]);
    log.retain().unwrap();
    assert_eq!(log.log_start_offset(), 4);
    assert_eq!(log.info().unwrap().leader_epochs, vec![(3, 4)]);
    assert_eq!(m.file("leader-epoch-checkpoint").unwrap(), b"0\n1\n3 4\n");
}

#[test]
fn compact_only_logs_are_not_deleted_by_retention() {
    let (_m, mut log) = filled(
        &[("cleanup.policy", "compact"), ("retention.ms", "0")],
        &[NOW - 10_000; 5],
    );
    assert_eq!(log.retain().unwrap().deleted_segments, 0);
    let (_m, mut log) = filled(
        &[("retention.ms", "-1"), ("retention.bytes", "-1")],
        &[1; 5],
    );
    assert_eq!(log.retain().unwrap().deleted_segments, 0);
}

#[test]
fn segments_without_timestamps_age_by_modification_time() {
    let m = mem();
    let mut log = m.create(&[
        ("message.format.version", "0.9.0"),
        ("segment.bytes", "40"),
        ("retention.ms", "1000"),
    ]);
    append(&mut log, &legacy(0, -1, &["a"]));
    append(&mut log, &legacy(0, -1, &["b"]));
    m.clock.advance(2000);
    append(&mut log, &legacy(0, -1, &["c"]));
    assert_eq!(segment_bases(&log), vec![0, 1, 2]);
    let r = log.retain().unwrap();
    assert_eq!((r.deleted_segments, r.log_start_offset), (2, 2));
}
