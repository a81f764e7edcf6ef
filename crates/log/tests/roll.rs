//! Segment rolls: by size, by time, by index fullness; what a roll leaves on disk.

use crate::util::*;

#[test]
fn rolls_by_size() {
    let batch = v2(NOW, &["0123456789"]);
    let limit = 2 * batch.len() + 10;
    let m = mem();
    let mut log = m.create(&[("segment.bytes", &limit.to_string())]);
    for _ in 0..7 {
        append(&mut log, &batch);
    }
    assert_eq!(segment_bases(&log), vec![0, 2, 4, 6]);
    for s in log.info().unwrap().segments {
        assert!(s.size_bytes as usize <= limit);
    }
    // Exactly filling a segment does not roll; one byte more does.
    let m = mem();
    let mut log = m.create(&[("segment.bytes", &(2 * batch.len()).to_string())]);
    append(&mut log, &batch);
    append(&mut log, &batch);
    assert_eq!(segment_bases(&log), vec![0]);
    append(&mut log, &batch);
    assert_eq!(segment_bases(&log), vec![0, 2]);
    log.verify_indexes().unwrap();
}

#[test]
fn rolls_by_time_using_record_timestamps() {
    let m = mem();
    let mut log = m.create(&[("segment.ms", "1000")]);
    append(&mut log, &v2(NOW, &["a"]));
    append(&mut log, &v2(NOW + 1000, &["b"])); // waited exactly segment.ms: no roll
    assert_eq!(segment_bases(&log), vec![0]);
    append(&mut log, &v2(NOW + 1001, &["c"]));
    assert_eq!(segment_bases(&log), vec![0, 2]);
    // The wall clock does not matter while batches carry timestamps.
    m.clock.advance(10_000);
    append(&mut log, &v2(NOW + 1500, &["d"]));
    assert_eq!(segment_bases(&log), vec![0, 2]);
}

#[test]
fn rolls_by_time_using_the_clock_without_timestamps() {
    let m = mem();
    let mut log = m.create(&[("segment.ms", "1000"), ("message.format.version", "0.9.0")]);
    append(&mut log, &legacy(0, -1, &["a"]));
    m.clock.advance(1000);
    append(&mut log, &legacy(0, -1, &["b"]));
    assert_eq!(segment_bases(&log), vec![0]);
    m.clock.advance(1);
    append(&mut log, &legacy(0, -1, &["c"]));
    assert_eq!(segment_bases(&log), vec![0, 2]);
}

#[test]
fn rolls_when_an_index_is_full() {
    let m = mem();
    // Room for 3 offset entries and 2 time entries (one of them reserved for the roll).
    let mut log = m.create(&[("segment.index.bytes", "24"), ("index.interval.bytes", "0")]);
    for i in 0..10 {
        append(&mut log, &v2(NOW + i, &["x"]));
    }
    let info = log.info().unwrap();
    assert!(info.segments.len() >= 4, "{info:?}");
    for s in &info.segments[..info.segments.len() - 1] {
        assert!(s.time_index_entries <= 2);
        assert!(s.offset_index_entries <= 3);
    }
    log.verify_indexes().unwrap();
}

#[test]
fn a_roll_trims_the_old_indexes_and_preallocates_the_new_ones() {
    let m = mem();
    let mut log = m.create(&[
        ("segment.index.bytes", "1000"),
        ("index.interval.bytes", "0"),
    ]);
    append(&mut log, &v2(NOW, &["a"]));
    append(&mut log, &v2(NOW + 5, &["b"]));
    append(&mut log, &v2(NOW + 3, &["c"]));
    assert_eq!(m.file(&seg(0, ".index")).unwrap().len(), 1000 / 8 * 8);
    assert_eq!(m.file(&seg(0, ".timeindex")).unwrap().len(), 1000 / 12 * 12);
    log.roll().unwrap();
    log.roll().unwrap(); // the new segment is empty: nothing happens
    assert_eq!(segment_bases(&log), vec![0, 3]);
    // Offset index: batches 2 and 3 got entries (the first batch of a segment never does).
    let index = m.file(&seg(0, ".index")).unwrap();
    assert_eq!(index, [0, 0, 0, 1, 0, 0, 0, 70, 0, 0, 0, 2, 0, 0, 0, 140]);
    // Time index: (NOW+5, 1) once; NOW+3 is not larger; the roll adds nothing new.
    let time = m.file(&seg(0, ".timeindex")).unwrap();
    let mut expected = (NOW + 5).to_be_bytes().to_vec();
    expected.extend_from_slice(&1i32.to_be_bytes());
    assert_eq!(time, expected);
    assert_eq!(m.file(&seg(3, ".index")).unwrap().len(), 1000 / 8 * 8);
    assert_eq!(m.file("krec-recovery-point").unwrap(), b"3\n");
    // The old segment is synced: a crash now keeps all of it.
    assert_eq!(
        m.storage
            .durable_bytes(&m.path(&seg(0, ".log")))
            .unwrap()
            .len(),
        210
    );
    log.verify_indexes().unwrap();
}
