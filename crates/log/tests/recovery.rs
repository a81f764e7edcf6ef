//! Opening after clean and unclean shutdowns: recovery, truncation of torn writes, index
//! rebuilds, leftovers, poisoning after storage failures.

use crate::util::*;
use krecords_log::storage::Storage;
use krecords_log::{AppendOrigin, Env, IsolationLevel, Log, OffsetSpec};
use std::path::PathBuf;

fn three_segments(m: &Mem) -> Log {
    let mut log = m.create(&[("segment.bytes", "250"), ("index.interval.bytes", "60")]);
    for i in 0..9 {
        append(&mut log, &v2(NOW + i, &["0123456789"]));
    }
    assert_eq!(log.info().unwrap().segments.len(), 3);
    log
}

#[test]
fn clean_shutdown_skips_recovery_and_trims_indexes() {
    let m = mem();
    let log = three_segments(&m);
    let before = read_all(&log, 1);
    log.close().unwrap();
    assert!(exists(&m, "krec-clean-shutdown"));
    assert_eq!(
        m.file(&seg(6, ".index")).unwrap().len(),
        16,
        "active index trimmed on close"
    );
    let log = m.open();
    let info = log.recovery_info();
    assert!(info.clean_shutdown);
    assert_eq!(info.recovered_segments, 0);
    assert!(
        !exists(&m, "krec-clean-shutdown"),
        "marker removed once opened"
    );
    assert_eq!(
        m.file(&seg(6, ".index")).unwrap().len(),
        10 << 20,
        "active index preallocated"
    );
    assert_eq!(read_all(&log, 1), before);
    log.verify_indexes().unwrap();
}

#[test]
fn unclean_shutdown_scans_from_the_recovery_point() {
    let m = mem();
    let log = three_segments(&m);
    let before = read_all(&log, 1);
    drop(log);
    let log = m.open();
    let info = log.recovery_info().clone();
    assert!(!info.clean_shutdown);
    assert_eq!(
        info.recovered_segments, 1,
        "only the active segment: {info:?}"
    );
    assert_eq!(info.truncated_bytes, 0);
    assert_eq!((info.segments, info.next_offset), (3, 9));
    assert_eq!(read_all(&log, 1), before);
    log.verify_indexes().unwrap();
}

#[test]
fn a_torn_tail_is_truncated() {
    let m = mem();
    let mut log = three_segments(&m);
    drop(log);
    let path = m.path(&seg(6, ".log"));
    let mut bytes = m.storage.file_bytes(&path).unwrap();
    let good = bytes.len();
    bytes.extend_from_slice(&v2(NOW, &["torn"])[..30]);
    m.storage.put_file(&path, &bytes);
    log = m.open();
    let info = log.recovery_info().clone();
    assert_eq!(info.truncated_bytes, 30);
    assert!(
        info.problems[0].contains("truncated entry"),
        "{:?}",
        info.problems
    );
    assert_eq!(m.file(&seg(6, ".log")).unwrap().len(), good);
    assert_eq!(log.log_end_offset(), 9);
    let a = append(&mut log, &v2(NOW, &["after"]));
    assert_eq!(a.base_offset, 9);
    log.verify_indexes().unwrap();
}

#[test]
fn a_corrupt_batch_truncates_there_and_drops_later_segments() {
    let m = mem();
    let log = three_segments(&m);
    drop(log);
    // Forget the recovery point so every segment is scanned, and corrupt batch 4 (segment 3).
    m.storage.remove(&m.path("krec-recovery-point")).unwrap();
    let path = m.path(&seg(3, ".log"));
    let mut bytes = m.storage.file_bytes(&path).unwrap();
    let batch = v2(NOW, &["0123456789"]).len();
    bytes[batch + 70] ^= 0x55;
    m.storage.put_file(&path, &bytes);
    let seg6 = m.file(&seg(6, ".log")).unwrap().len() as u64;
    let log = m.open();
    let info = log.recovery_info().clone();
    assert_eq!(info.deleted_segments, 1);
    assert_eq!(info.truncated_bytes, (bytes.len() - batch) as u64 + seg6);
    assert!(
        info.problems[0].contains("crc mismatch"),
        "{:?}",
        info.problems
    );
    assert_eq!(log.log_end_offset(), 4);
    assert!(!exists(&m, &seg(6, ".log")));
    assert!(!exists(&m, &seg(6, ".index")));
    assert_eq!(read_all(&log, 1).len(), 4);
    log.verify_indexes().unwrap();
}

/// Three segments (bases 0, 3, 6) as a broker leaves a partition: segments, trimmed indexes and
/// a producer snapshot, none of our own files. Returns its records.
fn kafka_partition(m: &Mem) -> Vec<Seen> {
    let log = three_segments(m);
    let records = read_all(&log, 1);
    log.close().unwrap();
    for name in [
        "krec-clean-shutdown",
        "krec-recovery-point",
        "krec-log.json",
    ] {
        let _ = m.storage.remove(&m.path(name));
    }
    records
}

/// Opens `m`'s log read-only: the segments scanned, and checks it serves `records` and changed
/// nothing.
fn scanned_read_only(m: &Mem, records: &[Seen]) -> usize {
    let before = m.snapshot();
    let log = Log::open_read_only_with(&m.dir, m.env.clone()).unwrap();
    assert_eq!(read_all(&log, 1), records);
    assert_eq!(
        m.snapshot(),
        before,
        "a read-only open changed the directory"
    );
    log.recovery_info().recovered_segments
}

#[test]
fn a_read_only_open_scans_what_the_brokers_data_directory_says() {
    let m = mem();
    let records = kafka_partition(&m);
    let root = |name: &str| PathBuf::from("/logs").join(name);
    let checkpoint = root("recovery-point-offset-checkpoint");
    // Outside a data directory that says anything: every segment, as after a crash.
    assert_eq!(scanned_read_only(&m, &records), 3);
    // Kafka's loader: from the segment holding the partition's recovery point on.
    for (text, scanned) in [
        (&b"0\n1\ntopic 0 4\n"[..], 2),
        (b"0\n2\nother 0 1\ntopic 0 7\n", 1),
        (b"0\n1\ntopic 0 9\n", 1),
        (b"0\n1\ntopic 0 0\n", 3),
        // No line for the partition, a malformed file, a count that disagrees: everything.
        (b"0\n1\ntopic 1 9\n", 3),
        (b"0\n1\ntopic zero 9\n", 3),
        (b"0\n2\ntopic 0 9\n", 3),
        (b"", 3),
    ] {
        m.storage.put_file(&checkpoint, text);
        let shown = String::from_utf8_lossy(text).into_owned();
        assert_eq!(scanned_read_only(&m, &records), scanned, "{shown:?}");
    }
    // A broker that stopped cleanly: nothing is scanned.
    m.storage.put_file(&checkpoint, b"0\n1\ntopic 0 4\n");
    m.storage.put_file(
        &root(".kafka_cleanshutdown"),
        b"{\"version\":0,\"brokerEpoch\":9}",
    );
    assert_eq!(scanned_read_only(&m, &records), 0);
    // A writer trusts none of it: its own crash would leave the broker's marker standing.
    let log = m.open();
    assert_eq!(log.recovery_info().recovered_segments, 3);
    assert_eq!(read_all(&log, 1), records);
}

#[test]
fn a_torn_tail_after_the_brokers_recovery_point_is_still_left_out() {
    let m = mem();
    let records = kafka_partition(&m);
    m.storage.put_file(
        &PathBuf::from("/logs/recovery-point-offset-checkpoint"),
        b"0\n1\ntopic 0 7\n",
    );
    let path = m.path(&seg(6, ".log"));
    let mut bytes = m.storage.file_bytes(&path).unwrap();
    bytes.extend_from_slice(&v2(NOW, &["torn"])[..30]);
    m.storage.put_file(&path, &bytes);
    assert_eq!(scanned_read_only(&m, &records), 1);
    let log = Log::open_read_only_with(&m.dir, m.env.clone()).unwrap();
    assert_eq!(log.recovery_info().truncated_bytes, 30);
    assert_eq!(log.log_end_offset(), 9);
}

/// A broker's partition (bases 0, 3, 6; no recovery point, so every segment is scanned) with
/// `damage` done to the bytes of segment `base`; the read-only open's result, the directory
/// checked unchanged.
fn read_only_after(
    m: &Mem,
    base: i64,
    damage: impl FnOnce(&mut Vec<u8>),
) -> krecords_log::Result<Log> {
    kafka_partition(m);
    let path = m.path(&seg(base, ".log"));
    let mut bytes = m.storage.file_bytes(&path).unwrap();
    damage(&mut bytes);
    m.storage.put_file(&path, &bytes);
    open_read_only_unchanged(m)
}

/// Opens `m`'s log read-only, checking that the open changed nothing in the directory.
fn open_read_only_unchanged(m: &Mem) -> krecords_log::Result<Log> {
    let before = m.snapshot();
    let opened = Log::open_read_only_with(&m.dir, m.env.clone());
    assert_eq!(
        m.snapshot(),
        before,
        "a read-only open changed the directory"
    );
    opened
}

/// The error of a read that reaches the damage of a read-only log opened on damage in its
/// middle, after checking that reads ending before it are served and questions about the end
/// are refused.
fn reached(opened: krecords_log::Result<Log>) -> krecords_log::Error {
    let log = opened.unwrap();
    let damage = log.damage().expect("damage in the middle is known").clone();
    let end = log.log_end_offset();
    assert_eq!(damage.offset, end);
    let e = damage.error();
    // Everything before the damage, in one fetch and record by record.
    let all = log.read(log.log_start_offset(), 1 << 20).unwrap();
    assert_eq!(all.next_offset, end);
    for o in log.log_start_offset()..end {
        let f = log.fetch(o, 1, IsolationLevel::ReadCommitted).unwrap();
        assert!(f.next_offset > o && !f.bytes.is_empty());
    }
    // Where the damage ends the log: the damage, not an empty answer.
    for isolation in [
        IsolationLevel::ReadUncommitted,
        IsolationLevel::ReadCommitted,
    ] {
        let f = log.fetch(end, 1 << 20, isolation).unwrap_err();
        assert_eq!(f.to_string(), e.to_string());
    }
    assert!(log.offsets(OffsetSpec::Latest).is_err());
    assert!(log.offsets(OffsetSpec::MaxTimestamp).is_err());
    assert!(log.offsets(OffsetSpec::Timestamp(i64::MAX)).is_err());
    assert!(log
        .offsets_at(OffsetSpec::Latest, IsolationLevel::ReadCommitted)
        .is_err());
    assert!(log.info().is_err());
    assert_eq!(
        log.offsets(OffsetSpec::Earliest).unwrap().offset,
        log.log_start_offset()
    );
    if end > log.log_start_offset() {
        // A time before the damage is found.
        let t = log.offsets(OffsetSpec::Timestamp(0)).unwrap();
        assert_eq!(t.offset, log.log_start_offset());
    }
    e
}

#[test]
fn a_read_only_log_refuses_reads_that_reach_damage_that_intact_entries_follow() {
    let batch = v2(NOW, &["0123456789"]).len();
    // A flipped bit in the second batch of the first segment: offsets 2..8 intact after it.
    let m = mem();
    let e = reached(read_only_after(&m, 0, |b| b[batch + 70] ^= 0x55));
    assert!(
        matches!(e, krecords_log::Error::DamagedSegment { .. }),
        "{e:?}"
    );
    assert_eq!(e.kafka_name(), "CORRUPT_MESSAGE");
    let text = e.to_string();
    assert!(
        text.contains(&format!(
            "{}: byte {batch}: crc mismatch",
            m.path(&seg(0, ".log")).display()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("the first at byte {}, offset 2", 2 * batch)),
        "{text}"
    );
    assert!(text.contains("krec salvage"), "{text}");
    // The last batch of the first segment: the intact entries are in the later segments, which
    // recovery would delete.
    let m = mem();
    let e = reached(read_only_after(&m, 0, |b| b[2 * batch + 70] ^= 0x55));
    let text = e.to_string();
    assert!(
        text.contains(&format!(
            "the first at byte 0 of {}, offset 3",
            m.path(&seg(3, ".log")).display()
        )),
        "{text}"
    );
    // A length field lying upwards (the entry seems to run past the end of the file).
    let m = mem();
    let e = reached(read_only_after(&m, 3, |b| b[11] = 0x7f));
    assert!(e.to_string().contains("offset 4"), "{e}");
    // A run of zeros over a batch, as a lost page leaves it, with batches after it.
    let m = mem();
    let e = reached(read_only_after(&m, 3, |b| b[..batch].fill(0)));
    assert!(e.to_string().contains("offset 4"), "{e}");
}

/// A cleanly closed log whose middle segment is damaged and has lost its offset index: the
/// index rebuild cuts that segment (Kafka's loader keeps the later segments then), so a
/// reader's view would have a hole a fetch skips silently (offsets 3.. served as 6..). The
/// read-only view ends at the damage instead: reads before it are served, reads that reach it
/// fail, and the error names where reads stay whole.
#[test]
fn damage_in_a_middle_segment_of_a_cleanly_closed_log_ends_the_read_only_view() {
    let m = mem();
    three_segments(&m).close().unwrap();
    let path = m.path(&seg(3, ".log"));
    let mut bytes = m.storage.file_bytes(&path).unwrap();
    bytes[8..12].copy_from_slice(&0x7fff_ff00u32.to_be_bytes());
    m.storage.put_file(&path, &bytes);
    m.storage.remove(&m.path(&seg(3, ".index"))).unwrap();
    let log = open_read_only_unchanged(&m).unwrap();
    assert_eq!(log.damage().map(|d| d.offset), Some(3));
    let e = reached(Ok(log));
    let text = e.to_string();
    assert!(text.contains("intact entries follow"), "{text}");
    assert!(text.contains("offset 4"), "{text}");
    assert!(
        text.contains("reads that end before offset 3 are whole"),
        "{text}"
    );
}

#[test]
fn a_read_only_open_leaves_out_a_torn_tail_with_nothing_intact_after_it() {
    let batch = v2(NOW, &["0123456789"]).len();
    let records = {
        let m = mem();
        kafka_partition(&m)
    };
    // A cut-off last batch, zeros as a preallocated or unflushed tail leaves them, garbage, and
    // a damaged last batch: only the bytes that hold no intact entry are left out.
    type Damage = Box<dyn Fn(&mut Vec<u8>)>;
    let damages: [(&str, Damage, usize); 4] = [
        (
            "cut",
            Box::new(|b: &mut Vec<u8>| b.truncate(b.len() - 7)),
            8,
        ),
        (
            "zeros",
            Box::new(|b: &mut Vec<u8>| b.extend_from_slice(&[0; 4096])),
            9,
        ),
        (
            "garbage",
            Box::new(|b: &mut Vec<u8>| b.extend((0..3000u32).map(|i| (i * 7919 % 251) as u8))),
            9,
        ),
        (
            "last batch",
            Box::new(move |b: &mut Vec<u8>| b[2 * batch + 70] ^= 0x55),
            8,
        ),
    ];
    for (what, damage, kept) in damages {
        let m = mem();
        let log = read_only_after(&m, 6, damage).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(log.damage(), None, "{what}");
        assert_eq!(read_all(&log, 1), records[..kept], "{what}");
        let info = log.recovery_info();
        assert_eq!(info.cuts.len(), 1, "{what}");
        assert_eq!(info.cuts[0].file, m.path(&seg(6, ".log")), "{what}");
        let notes = info.notes(&m.dir, true);
        assert!(
            notes.iter().any(|n| n.contains("are not whole batches")),
            "{what}: {notes:?}"
        );
    }
    // A writer's open cuts at the damage as Kafka's recovery does, intact entries after it or
    // not.
    let m = mem();
    kafka_partition(&m);
    let path = m.path(&seg(0, ".log"));
    let mut bytes = m.storage.file_bytes(&path).unwrap();
    bytes[batch + 70] ^= 0x55;
    m.storage.put_file(&path, &bytes);
    let log = m.open();
    assert_eq!(log.log_end_offset(), 1);
    assert_eq!(log.recovery_info().cuts[0].later.len(), 2);
}

#[test]
fn a_zero_filled_index_tail_is_rebuilt_even_after_a_clean_shutdown() {
    let m = mem();
    let log = three_segments(&m);
    log.close().unwrap();
    let path = m.path(&seg(0, ".index"));
    let mut index = m.storage.file_bytes(&path).unwrap();
    assert!(!index.is_empty());
    index.extend_from_slice(&[0u8; 64]);
    m.storage.put_file(&path, &index);
    let tpath = m.path(&seg(3, ".timeindex"));
    let mut tindex = m.storage.file_bytes(&tpath).unwrap();
    tindex.extend_from_slice(&[0u8; 36]);
    m.storage.put_file(&tpath, &tindex);
    let log = m.open();
    assert_eq!(log.recovery_info().recovered_segments, 2);
    assert_eq!(
        m.file(&seg(0, ".index")).unwrap(),
        index[..index.len() - 64]
    );
    assert_eq!(
        m.file(&seg(3, ".timeindex")).unwrap(),
        tindex[..tindex.len() - 36]
    );
    log.verify_indexes().unwrap();
}

#[test]
fn missing_indexes_are_rebuilt() {
    let m = mem();
    let log = three_segments(&m);
    log.close().unwrap();
    let expected = m.file(&seg(3, ".index")).unwrap();
    m.storage.remove(&m.path(&seg(3, ".index"))).unwrap();
    m.storage.remove(&m.path(&seg(3, ".timeindex"))).unwrap();
    let log = m.open();
    assert_eq!(log.recovery_info().recovered_segments, 1);
    assert_eq!(m.file(&seg(3, ".index")).unwrap(), expected);
    log.verify_indexes().unwrap();
}

#[test]
fn recover_scans_everything_and_reports_json() {
    let m = mem();
    let log = three_segments(&m);
    log.close().unwrap();
    let info = Log::recover_with(&m.dir, m.env.clone()).unwrap();
    assert_eq!(info.recovered_segments, 3);
    assert_eq!(
        serde_json::to_string(&info).unwrap(),
        r#"{"truncated_bytes":0,"segments":3,"next_offset":9}"#
    );
    assert!(m.open().recovery_info().clean_shutdown);
}

#[test]
fn leftovers_are_removed_on_open() {
    let m = mem();
    let log = three_segments(&m);
    log.close().unwrap();
    m.storage.put_file(&m.path("krec-log.json.tmp"), b"{");
    m.storage.put_file(&m.path(&seg(99, ".index")), &[0; 8]);
    m.storage
        .put_file(&m.path(&format!("{}.deleted", seg(0, ".log"))), b"x");
    let log = m.open();
    assert!(!exists(&m, "krec-log.json.tmp"));
    assert!(!exists(&m, &seg(99, ".index")));
    assert!(!exists(&m, &format!("{}.deleted", seg(0, ".log"))));
    assert_eq!(log.log_end_offset(), 9);
}

#[test]
fn not_a_log_and_already_exists() {
    let m = mem();
    m.storage.create_dir_all(&m.dir).unwrap();
    assert_eq!(
        Log::open_with(&m.dir, m.env.clone())
            .unwrap_err()
            .kafka_name(),
        "KAFKA_STORAGE_ERROR"
    );
    assert!(matches!(
        Log::open_with("/nowhere", m.env.clone()),
        Err(krecords_log::Error::NoSuchDirectory { .. })
    ));
    m.create(&[]);
    let e = Log::create_with(&m.dir, config(&[]), m.env.clone()).unwrap_err();
    assert_eq!(e.kafka_name(), "TOPIC_ALREADY_EXISTS");
}

#[test]
fn a_directory_without_our_config_opens_with_kafka_defaults() {
    // As a broker leaves it: segments only (here one v2 segment written by hand).
    let m = mem();
    m.storage.create_dir_all(&m.dir).unwrap();
    let mut bytes = Vec::new();
    let mut first = v2(NOW, &["a", "b"]);
    first[12..16].copy_from_slice(&5i32.to_be_bytes());
    bytes.extend_from_slice(&first);
    let mut second = v2(NOW + 1, &["c"]);
    second[0..8].copy_from_slice(&2i64.to_be_bytes());
    bytes.extend_from_slice(&second);
    m.storage.put_file(&m.path(&seg(0, ".log")), &bytes);
    m.storage
        .put_file(&m.path("leader-epoch-checkpoint"), b"0\n1\n5 0\n");
    let log = m.open();
    assert_eq!(log.config(), &krecords_log::LogConfig::default());
    assert_eq!(log.log_end_offset(), 3);
    assert_eq!(log.leader_epoch(), 5);
    assert!(!exists(&m, "krec-log.json"));
    let r = log
        .offsets(krecords_log::OffsetSpec::Timestamp(NOW + 1))
        .unwrap();
    assert_eq!(
        (r.offset, r.timestamp, r.leader_epoch),
        (2, Some(NOW + 1), None)
    );
}

#[test]
fn a_failed_write_poisons_the_log_until_reopened() {
    let m = mem();
    let mut log = m.create(&[("flush.messages", "1")]);
    append(&mut log, &v2(NOW, &["kept"]));
    m.storage.fail_write_after(1);
    let e = log
        .append(&v2(NOW, &["lost"]), AppendOrigin::Client)
        .unwrap_err();
    assert_eq!(e.kafka_name(), "KAFKA_STORAGE_ERROR");
    assert!(log.is_poisoned());
    let e = log
        .append(&v2(NOW, &["refused"]), AppendOrigin::Client)
        .unwrap_err();
    assert!(matches!(e, krecords_log::Error::Poisoned { .. }), "{e}");
    assert!(log.flush().is_err());
    assert!(log.retain().is_err());
    assert!(log.read(0, 100).is_ok(), "reads still work");
    assert!(log.close().is_err());
    let log = m.open();
    assert!(!log.recovery_info().clean_shutdown);
    assert_eq!(read_all(&log, 100).len(), 1);
}

#[test]
fn a_failed_sync_poisons_the_log() {
    let m = mem();
    let mut log = m.create(&[("flush.messages", "1")]);
    m.storage.fail_sync_after(1);
    let e = log
        .append(&v2(NOW, &["x"]), AppendOrigin::Client)
        .unwrap_err();
    assert_eq!(e.kafka_name(), "KAFKA_STORAGE_ERROR");
    assert!(log.is_poisoned());
    drop(log);
    m.storage.crash();
    let log = m.open();
    assert_eq!(
        log.log_end_offset(),
        0,
        "the unsynced batch is gone after the crash"
    );
}

#[test]
fn flush_messages_controls_durability() {
    let m = mem();
    let mut log = m.create(&[("flush.messages", "3")]);
    append(&mut log, &v2(NOW, &["a"]));
    append(&mut log, &v2(NOW, &["b"]));
    let path = m.path(&seg(0, ".log"));
    assert_eq!(m.storage.durable_bytes(&path).unwrap().len(), 0);
    append(&mut log, &v2(NOW, &["c"]));
    assert_eq!(m.storage.durable_bytes(&path).unwrap().len(), 3 * 70);
    // flush.ms: the next append after the interval syncs.
    let m = mem();
    let mut log = m.create(&[("flush.ms", "1000")]);
    append(&mut log, &v2(NOW, &["a"]));
    let path = m.path(&seg(0, ".log"));
    assert_eq!(m.storage.durable_bytes(&path).unwrap().len(), 0);
    m.clock.advance(1000);
    append(&mut log, &v2(NOW, &["b"]));
    assert_eq!(m.storage.durable_bytes(&path).unwrap().len(), 140);
}

#[test]
fn on_the_real_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("topic-0");
    let mut log = Log::create(&path, config(&[("segment.bytes", "250")])).unwrap();
    for i in 0..5 {
        append(
            &mut log,
            &v2(
                krecords_log::clock::Clock::now_ms(&krecords_log::clock::SystemClock) + i,
                &["0123456789"],
            ),
        );
    }
    log.close().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&path)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "00000000000000000000.index",
            "00000000000000000000.log",
            "00000000000000000000.timeindex",
            "00000000000000000003.index",
            "00000000000000000003.log",
            // Producer state snapshots: at the roll and at the clean shutdown.
            "00000000000000000003.snapshot",
            "00000000000000000003.timeindex",
            "00000000000000000005.snapshot",
            "krec-clean-shutdown",
            "krec-log.json",
            "krec-recovery-point",
            // The writer's lock file stays (it is never deleted).
            "krec.lock",
            "leader-epoch-checkpoint",
        ]
    );
    // A torn write on disk.
    use std::io::Write;
    let seg3 = path.join("00000000000000000003.log");
    std::fs::OpenOptions::new()
        .append(true)
        .open(&seg3)
        .unwrap()
        .write_all(&[0, 0, 0, 0, 0, 0, 0, 9, 0, 0])
        .unwrap();
    std::fs::remove_file(path.join("krec-clean-shutdown")).unwrap();
    let log = Log::open(&path).unwrap();
    assert_eq!(log.recovery_info().truncated_bytes, 10);
    assert_eq!(log.log_end_offset(), 5);
    log.verify_indexes().unwrap();
    let env = Env::fs();
    drop(log);
    assert_eq!(Log::recover_with(&path, env).unwrap().next_offset, 5);
}

/// Damage in the first entry of the first segment (its length field lying upwards) with
/// intact entries after it: nothing before the damage is readable, so the error says that the
/// log as read is empty rather than that "reads that end before offset 0 are whole".
#[test]
fn damage_in_the_first_entry_says_nothing_before_it_is_readable() {
    let m = mem();
    three_segments(&m).close().unwrap();
    let path = m.path(&seg(0, ".log"));
    let mut bytes = m.storage.file_bytes(&path).unwrap();
    bytes[8..12].copy_from_slice(&0x7fff_ff00u32.to_be_bytes());
    m.storage.put_file(&path, &bytes);
    m.storage.remove(&m.path(&seg(0, ".index"))).unwrap();
    let log = open_read_only_unchanged(&m).unwrap();
    assert_eq!(log.damage().map(|d| d.offset), Some(0));
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (0, 0));
    // Every read reaches it.
    let e = log
        .fetch(0, 1 << 20, IsolationLevel::ReadUncommitted)
        .unwrap_err();
    let text = e.to_string();
    assert!(text.contains("intact entries follow"), "{text}");
    assert!(
        text.contains("no offset of the log is readable before the damage"),
        "{text}"
    );
    assert!(!text.contains("reads that end before offset"), "{text}");
}

/// A `krec-log.json` that cannot be used is `DamagedConfig`, naming the file and what is wrong,
/// for a reader's open, a writer's and a recovery alike (damaged data, not a derived file the
/// log rebuilds: it was `CorruptFile`, and an invalid setting `InvalidConfig` without the
/// file); the file is left as it was.
#[test]
fn a_damaged_config_is_refused_by_every_open_and_left_as_it_was() {
    let m = mem();
    three_segments(&m).close().unwrap();
    let path = m.path("krec-log.json");
    for (bytes, reason) in [
        (
            &b"{"[..],
            "not JSON: EOF while parsing an object at line 1 column 1",
        ),
        (
            &br#"{"segment.bytes":"many"}"#[..],
            "invalid config segment.bytes=many",
        ),
    ] {
        m.storage.put_file(&path, bytes);
        for e in [
            Log::open_with(&m.dir, m.env.clone()).unwrap_err(),
            Log::open_read_only_with(&m.dir, m.env.clone()).unwrap_err(),
            Log::recover_with(&m.dir, m.env.clone()).unwrap_err(),
        ] {
            match &e {
                krecords_log::Error::DamagedConfig { path: p, reason: r } => {
                    assert_eq!(p, &path);
                    assert!(r.starts_with(reason), "{r}");
                }
                e => panic!("{e:?}"),
            }
            assert!(
                e.to_string()
                    .starts_with(&format!("{}: {reason}", path.display())),
                "{e}"
            );
            assert_eq!(e.kafka_name(), "KAFKA_STORAGE_ERROR");
        }
        assert_eq!(m.storage.file_bytes(&path).unwrap(), bytes);
    }
}
