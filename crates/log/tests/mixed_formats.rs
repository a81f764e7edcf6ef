//! A log that lived through message format upgrades: v0 and v1 data written before, v2 after,
//! all readable in order, through rolls, reopen and recovery.

use crate::util::*;
use krecords_log::{Log, LogConfig, OffsetSpec};

fn upgrade(log: &mut Log, version: &str) {
    let mut config: LogConfig = log.config().clone();
    config.set("message.format.version", version).unwrap();
    log.update_config(config).unwrap();
}

#[test]
fn v0_then_v1_then_v2_all_readable_in_order() {
    let m = mem();
    let mut log = m.create(&[
        ("message.format.version", "0.9.0"),
        ("segment.bytes", "150"),
    ]);
    append(&mut log, &legacy(0, -1, &["v0-a", "v0-b"]));
    append(&mut log, &legacy(0, -1, &["v0-c"]));
    upgrade(&mut log, "0.10.2");
    append(&mut log, &legacy(1, NOW - 10, &["v1-d", "v1-e"]));
    append(&mut log, &legacy(0, -1, &["v0-as-v1-f"])); // up-converted to v1
    upgrade(&mut log, "3.0");
    append(&mut log, &v2(NOW - 5, &["v2-g", "v2-h"]));
    append(&mut log, &legacy(1, NOW - 4, &["v1-as-v2-i"])); // up-converted to v2
    append(&mut log, &v2(NOW, &["v2-j"]));

    let everything = log.read(0, usize::MAX).unwrap().bytes;
    assert_eq!(magics(&everything), vec![0, 0, 0, 1, 1, 1, 2, 2, 2]);
    let seen = read_all(&log, 1);
    let values: Vec<String> = seen
        .iter()
        .map(|s| String::from_utf8(s.value.clone()).unwrap())
        .collect();
    assert_eq!(
        values,
        [
            "v0-a",
            "v0-b",
            "v0-c",
            "v1-d",
            "v1-e",
            "v0-as-v1-f",
            "v2-g",
            "v2-h",
            "v1-as-v2-i",
            "v2-j"
        ]
    );
    assert_eq!(
        seen.iter().map(|s| s.offset).collect::<Vec<_>>(),
        (0..10).collect::<Vec<_>>()
    );
    assert_eq!(seen[0].timestamp, None);
    assert_eq!(
        seen[5].timestamp,
        Some(-1),
        "v0 up-converted to v1 has no timestamp (-1)"
    );
    assert_eq!(seen[8].timestamp, Some(NOW - 4));
    assert!(log.info().unwrap().segments.len() >= 3);
    // Time lookups skip the timestamp-less v0 data.
    let r = log.offsets(OffsetSpec::Timestamp(NOW - 100)).unwrap();
    assert_eq!((r.offset, r.timestamp), (3, Some(NOW - 10)));
    // The leader epoch cache starts with the first v2 batch.
    assert_eq!(log.info().unwrap().leader_epochs, vec![(0, 6)]);
    log.verify_indexes().unwrap();

    // Reopen after a crash: everything is scanned and still reads the same.
    drop(log);
    let log = m.open();
    assert!(!log.recovery_info().clean_shutdown);
    assert_eq!(log.recovery_info().truncated_bytes, 0);
    assert_eq!(read_all(&log, 100), seen);
    log.verify_indexes().unwrap();
}

#[test]
fn log_created_at_0_10_then_upgraded_to_3_0() {
    let m = mem();
    let mut log = m.create(&[("message.format.version", "0.10")]);
    append(&mut log, &legacy(0, -1, &["old-v0"]));
    append(&mut log, &legacy(1, NOW, &["old-v1"]));
    upgrade(&mut log, "3.0");
    append(&mut log, &v2(NOW, &["new-v2"]));
    let bytes = log.read(0, usize::MAX).unwrap().bytes;
    assert_eq!(magics(&bytes), vec![1, 1, 2]);
    assert_eq!(read_all(&log, 1).len(), 3);
    // The new format survives a restart.
    log.close().unwrap();
    let mut log = m.open();
    assert_eq!(log.config().record_magic(), 2);
    append(&mut log, &legacy(1, NOW, &["converted"]));
    let bytes = log.read(0, usize::MAX).unwrap().bytes;
    assert_eq!(magics(&bytes), vec![1, 1, 2, 2]);
}

#[test]
fn a_downgrade_clears_the_leader_epoch_cache_like_kafka() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &v2(NOW, &["a"]));
    assert_eq!(log.info().unwrap().leader_epochs, vec![(0, 0)]);
    upgrade(&mut log, "0.10.2");
    append(&mut log, &v2(NOW, &["b"]));
    assert!(log.info().unwrap().leader_epochs.is_empty());
    assert_eq!(m.file("leader-epoch-checkpoint").unwrap(), b"0\n0\n");
    assert_eq!(magics(&log.read(0, usize::MAX).unwrap().bytes), vec![2, 1]);
}

#[test]
fn reads_return_whole_batches_within_the_limit() {
    let m = mem();
    let mut log = m.create(&[("segment.bytes", "300")]);
    let batch = v2(NOW, &["a", "b", "c"]);
    for _ in 0..6 {
        append(&mut log, &batch);
    }
    // An offset inside a batch returns the whole batch.
    let r = log.read(4, 1).unwrap();
    assert_eq!(r.bytes.len(), batch.len());
    assert_eq!(r.next_offset, 6);
    assert_eq!(&r.bytes[..8], &3i64.to_be_bytes());
    // Two batches fit, three do not; reads continue across segments.
    let r = log.read(0, 3 * batch.len() - 1).unwrap();
    assert_eq!(r.bytes.len(), 2 * batch.len());
    let r = log.read(0, usize::MAX).unwrap();
    assert_eq!(r.bytes.len(), 6 * batch.len());
    assert_eq!(
        (r.next_offset, r.high_watermark, r.log_start_offset),
        (18, 18, 0)
    );
    // At the end: nothing; past it: out of range.
    assert!(log.read(18, 100).unwrap().bytes.is_empty());
    assert_eq!(
        log.read(19, 100).unwrap_err().kafka_name(),
        "OFFSET_OUT_OF_RANGE"
    );
    assert_eq!(
        log.read(-1, 100).unwrap_err().kafka_name(),
        "OFFSET_OUT_OF_RANGE"
    );
}
