//! Append validation (every error Kafka's leader raises) and offset assignment.

use crate::util::*;
use krecords_codec::read::Batch;
use krecords_codec::write::{write_empty_batch, EmptyBatch, NewRecord, V2Builder};
use krecords_codec::{Compression, TimestampType};
use krecords_log::{AppendOrigin, Error, Log};

#[test]
fn smoke() {
    let m = mem();
    let mut log = m.create(&[]);
    let a = append(&mut log, &v2(NOW, &["a", "b"]));
    assert_eq!((a.base_offset, a.last_offset), (0, 1));
    let b = append(&mut log, &v2(NOW, &["c"]));
    assert_eq!((b.base_offset, b.last_offset), (2, 2));
    let all = read_all(&log, 1);
    assert_eq!(
        all.iter().map(|s| s.offset).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    log.close().unwrap();
    let log = m.open();
    assert!(log.recovery_info().clean_shutdown);
    assert_eq!(log.log_end_offset(), 3);
    log.verify_indexes().unwrap();
}

/// The log's first batch is compressed with `codec` and holds `records` records.
fn assert_first_batch(log: &Log, codec: Compression, records: usize) {
    let stored = log.read(0, 1 << 20).unwrap().bytes;
    assert_eq!(first_batch(&stored).compression().unwrap(), codec);
    assert_eq!(records_of(&stored).len(), records);
}

/// The offset of every record of the log.
fn offsets(log: &Log) -> Vec<i64> {
    read_all(log, 1 << 20).iter().map(|s| s.offset).collect()
}

fn setup(pairs: &[(&str, &str)]) -> (Mem, Log) {
    let m = mem();
    let mut log = m.create(pairs);
    append(&mut log, &v2(NOW, &["first"]));
    (m, log)
}

#[test]
fn corrupt_message_for_bad_crc_in_every_magic() {
    let (m, mut log) = setup(&[]);
    for mut bytes in [
        v2(NOW, &["x"]),
        legacy(1, NOW, &["x"]),
        legacy(0, NOW, &["x"]),
    ] {
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        let e = rejected(&m, &mut log, &bytes, "CORRUPT_MESSAGE");
        assert!(e.to_string().contains("append payload at byte 0"), "{e}");
        assert!(e.to_string().contains("crc"), "{e}");
    }
}

#[test]
fn corrupt_message_for_bad_size_or_magic() {
    let (m, mut log) = setup(&[]);
    let mut bytes = v2(NOW, &["x"]);
    bytes[8..12].copy_from_slice(&13i32.to_be_bytes());
    rejected(&m, &mut log, &bytes, "CORRUPT_MESSAGE");
    let mut bytes = v2(NOW, &["x"]);
    bytes[16] = 3;
    rejected(&m, &mut log, &bytes, "CORRUPT_MESSAGE");
    // A v2 entry shorter than the 61-byte header.
    let mut bytes = v2(NOW, &["x"]);
    bytes[8..12].copy_from_slice(&20i32.to_be_bytes());
    rejected(&m, &mut log, &bytes, "CORRUPT_MESSAGE");
    // A second entry with a bad CRC: the position names it.
    let mut two = legacy(1, NOW, &["a", "b"]);
    let last = two.len() - 1;
    two[last] ^= 1;
    let e = rejected(&m, &mut log, &two, "CORRUPT_MESSAGE");
    let second = legacy(1, NOW, &["a"]).len();
    assert!(e.to_string().contains(&format!("at byte {second}")), "{e}");
}

#[test]
fn invalid_record_for_nonzero_v2_base_offset() {
    let (m, mut log) = setup(&[]);
    let mut bytes = v2(NOW, &["x"]);
    bytes[0..8].copy_from_slice(&5i64.to_be_bytes());
    rejected_for(&m, &mut log, &bytes, "INVALID_RECORD", "should be 0");
}

#[test]
fn invalid_record_for_inconsistent_counts() {
    let (m, mut log) = setup(&[]);
    // Count 3 but last offset delta 1.
    let mut bytes = v2(NOW, &["a", "b"]);
    bytes[57..61].copy_from_slice(&3i32.to_be_bytes());
    fix_v2_crc(&mut bytes);
    rejected_for(&m, &mut log, &bytes, "INVALID_RECORD", "inconsistent");
    // Count 0 (a record-less batch).
    let mut empty = Vec::new();
    write_empty_batch(
        &mut empty,
        &EmptyBatch {
            base_offset: 0,
            last_offset: 0,
            partition_leader_epoch: -1,
            timestamp_type: TimestampType::CreateTime,
            timestamp: NOW,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            transactional: false,
            control: false,
        },
    )
    .unwrap();
    rejected_for(&m, &mut log, &empty, "INVALID_RECORD", "record count 0");
    // A negative last offset delta.
    let mut bytes = v2(NOW, &["a"]);
    bytes[23..27].copy_from_slice(&(-1i32).to_be_bytes());
    fix_v2_crc(&mut bytes);
    rejected_for(
        &m,
        &mut log,
        &bytes,
        "INVALID_RECORD",
        "invalid offset range",
    );
}

#[test]
fn invalid_record_for_client_control_batch() {
    let (m, mut log) = setup(&[]);
    let mut b = V2Builder::new(0).control(true).producer(7, 0, -1);
    b.append_control(NOW, &[0, 0, 0, 1], &[0, 0, 0, 0, 0, 0])
        .unwrap();
    let bytes = b.finish().unwrap();
    rejected_for(&m, &mut log, &bytes, "INVALID_RECORD", "control");
}

#[test]
fn invalid_record_for_producer_id_without_sequence() {
    let (m, mut log) = setup(&[]);
    let mut b = V2Builder::new(0).producer(7, 0, 0);
    b.append(&NewRecord::new(NOW, None, Some(b"v"))).unwrap();
    let mut bytes = b.finish().unwrap();
    bytes[53..57].copy_from_slice(&(-1i32).to_be_bytes());
    fix_v2_crc(&mut bytes);
    rejected_for(&m, &mut log, &bytes, "INVALID_RECORD", "sequence");
}

#[test]
fn invalid_record_for_two_v2_batches_or_mixed_magic() {
    let (m, mut log) = setup(&[]);
    let mut two = v2(NOW, &["a"]);
    two.extend(v2(NOW, &["b"]));
    rejected_for(&m, &mut log, &two, "INVALID_RECORD", "more than one batch");
    let mut mixed = legacy(0, NOW, &["a"]);
    mixed.extend(legacy(1, NOW, &["b"]));
    rejected_for(&m, &mut log, &mixed, "INVALID_RECORD", "magic");
}

#[test]
fn invalid_record_for_empty_append_and_bad_record_structure() {
    let (m, mut log) = setup(&[]);
    rejected(&m, &mut log, &[], "INVALID_RECORD");
    rejected(&m, &mut log, &[0u8; 5], "INVALID_RECORD");
    // A record length that runs past the batch, with a valid CRC.
    let mut bytes = v2(NOW, &["abc"]);
    bytes[61] = 0x7e; // record length varint 63
    fix_v2_crc(&mut bytes);
    rejected(&m, &mut log, &bytes, "INVALID_RECORD");
}

#[test]
fn invalid_record_for_missing_key_on_compacted_log() {
    let (m, mut log) = setup(&[("cleanup.policy", "compact")]);
    let mut b = V2Builder::new(0);
    b.append(&NewRecord::new(NOW, Some(b"k"), Some(b"v")))
        .unwrap();
    b.append(&NewRecord::new(NOW, None, Some(b"v"))).unwrap();
    let e = rejected(&m, &mut log, &b.finish().unwrap(), "INVALID_RECORD");
    assert_eq!(e.record_errors().len(), 1);
    assert_eq!(e.record_errors()[0].batch_index, 1);
    assert!(e.record_errors()[0].message.contains("without key"));
}

#[test]
fn message_too_large_counts_the_12_byte_prefix() {
    let bytes = v2(NOW, &["0123456789"]);
    let exact = bytes.len().to_string();
    let (m, mut log) = setup(&[("max.message.bytes", &exact)]);
    append(&mut log, &bytes);
    let smaller = (bytes.len() - 1).to_string();
    let (m2, mut log2) = setup(&[("max.message.bytes", &smaller)]);
    let e = rejected(&m2, &mut log2, &bytes, "MESSAGE_TOO_LARGE");
    assert!(matches!(e, Error::MessageTooLarge { size, .. } if size == bytes.len()));
    drop(m);
}

#[test]
fn message_too_large_after_up_conversion() {
    // A v0 message that fits, but its v2 form (61-byte header) does not.
    let bytes = legacy(0, -1, &["v"]);
    let max = (bytes.len() + 10).to_string();
    let m = mem();
    let mut log = m.create(&[("max.message.bytes", &max)]);
    rejected_for(&m, &mut log, &bytes, "MESSAGE_TOO_LARGE", "rebuilt batch");
}

#[test]
fn record_list_too_large_when_the_append_exceeds_segment_bytes() {
    let many: Vec<String> = (0..20).map(|i| format!("value-{i}")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    let bytes = legacy(1, NOW, &refs);
    let (m, mut log) = setup(&[
        ("segment.bytes", "300"),
        ("message.format.version", "0.10.2"),
    ]);
    rejected_for(
        &m,
        &mut log,
        &bytes,
        "RECORD_LIST_TOO_LARGE",
        "segment.bytes 300",
    );
}

#[test]
fn invalid_timestamp_outside_the_window() {
    let (m, mut log) = setup(&[
        ("message.timestamp.before.max.ms", "1000"),
        ("message.timestamp.after.max.ms", "500"),
    ]);
    append(&mut log, &v2(NOW - 1000, &["edge-old"]));
    append(&mut log, &v2(NOW + 500, &["edge-new"]));
    append(&mut log, &v2(-1, &["no timestamp"]));
    let e = rejected(
        &m,
        &mut log,
        &v2_ts(&[(NOW, "ok"), (NOW - 1001, "old")]),
        "INVALID_TIMESTAMP",
    );
    assert_eq!(e.record_errors().len(), 1);
    assert_eq!(e.record_errors()[0].batch_index, 1);
    assert!(e.record_errors()[0].message.contains("out of range"));
    rejected(&m, &mut log, &v2(NOW + 501, &["new"]), "INVALID_TIMESTAMP");
    rejected(
        &m,
        &mut log,
        &legacy(1, NOW + 501, &["new"]),
        "INVALID_TIMESTAMP",
    );
    // The default window: one hour into the future.
    let (m, mut log) = setup(&[]);
    append(&mut log, &v2(1, &["ancient is fine"]));
    rejected(
        &m,
        &mut log,
        &v2(NOW + 3_600_001, &["future"]),
        "INVALID_TIMESTAMP",
    );
}

#[test]
fn invalid_timestamp_for_producer_log_append_time() {
    let mut b = V2Builder::new(0).timestamp_type(TimestampType::LogAppendTime, NOW);
    b.append(&NewRecord::new(-1, None, Some(b"v"))).unwrap();
    let bytes = b.finish().unwrap();
    // Under LogAppendTime the producer's LogAppendTime flag is refused.
    let (m, mut log) = setup(&[("message.timestamp.type", "LogAppendTime")]);
    rejected(&m, &mut log, &bytes, "INVALID_TIMESTAMP");
}

#[test]
fn unsupported_for_message_format_below_v2() {
    let (m, mut log) = setup(&[("message.format.version", "0.10.2")]);
    let producer_batch = |transactional: bool| {
        let mut b = V2Builder::new(0)
            .producer(7, 0, 0)
            .transactional(transactional);
        b.append(&NewRecord::new(NOW, None, Some(b"v"))).unwrap();
        b.finish().unwrap()
    };
    for (bytes, refused) in [
        (producer_batch(true), "transactional"),
        (producer_batch(false), "idempotent"),
        (v2_with_headers(NOW, "v"), "headers"),
    ] {
        rejected_for(
            &m,
            &mut log,
            &bytes,
            "UNSUPPORTED_FOR_MESSAGE_FORMAT",
            refused,
        );
    }
}

#[test]
fn unsupported_compression_type_for_zstd_below_v2() {
    let (m, mut log) = setup(&[("message.format.version", "0.10.2")]);
    rejected(
        &m,
        &mut log,
        &v2_compressed(Compression::Zstd, NOW, &["v"]),
        "UNSUPPORTED_COMPRESSION_TYPE",
    );
}

#[test]
fn v2_in_place_rewrites_only_base_offset_and_epoch() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &v2(NOW, &["a", "b", "c"]));
    log.set_leader_epoch(7);
    let sent = v2(NOW, &["d", "e"]);
    let info = append(&mut log, &sent);
    assert_eq!(
        (info.base_offset, info.last_offset, info.rebuilt),
        (3, 4, false)
    );
    assert_eq!(info.log_append_time, None);
    let stored = log.read(3, 1 << 20).unwrap().bytes;
    assert_eq!(stored.len(), sent.len());
    assert_eq!(&stored[0..8], &3i64.to_be_bytes());
    assert_eq!(&stored[12..16], &7i32.to_be_bytes());
    assert_eq!(
        &stored[16..],
        &sent[16..],
        "CRC and everything after it unchanged"
    );
    assert_eq!(log.info().unwrap().leader_epochs, vec![(0, 0), (7, 3)]);
    assert_eq!(
        m.file("leader-epoch-checkpoint").unwrap(),
        b"0\n2\n0 0\n7 3\n"
    );
}

#[test]
fn v2_max_timestamp_is_corrected_and_crc_recomputed() {
    let m = mem();
    let mut log = m.create(&[]);
    let mut sent = v2_ts(&[(NOW - 5, "a"), (NOW - 2, "b")]);
    sent[35..43].copy_from_slice(&(NOW + 99).to_be_bytes()); // a wrong max timestamp
    fix_v2_crc(&mut sent);
    append(&mut log, &sent);
    let stored = log.read(0, 1 << 20).unwrap().bytes;
    match first_batch(&stored) {
        Batch::V2(b) => {
            assert_eq!(b.max_timestamp(), NOW - 2);
            assert!(b.is_crc_valid());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn log_append_time_is_stamped() {
    let m = mem();
    let mut log = m.create(&[("message.timestamp.type", "LogAppendTime")]);
    m.clock.set(NOW + 42);
    let info = append(&mut log, &v2(NOW - 10_000_000_000, &["a", "b"]));
    assert_eq!(info.log_append_time, Some(NOW + 42));
    let stored = log.read(0, 1 << 20).unwrap().bytes;
    assert_eq!(timestamp_type(&stored), TimestampType::LogAppendTime);
    assert!(first_batch(&stored).is_crc_valid());
    let seen = records_of(&stored);
    assert!(seen.iter().all(|s| s.timestamp == Some(NOW + 42)));
    // v1 in place gets the time too.
    let m = mem();
    let mut log = m.create(&[
        ("message.timestamp.type", "LogAppendTime"),
        ("message.format.version", "0.10.2"),
    ]);
    let info = append(&mut log, &legacy(1, 5, &["x", "y"]));
    assert_eq!(
        (info.base_offset, info.last_offset, info.rebuilt),
        (0, 1, false)
    );
    let stored = log.read(0, 1 << 20).unwrap().bytes;
    assert!(records_of(&stored).iter().all(|s| s.timestamp == Some(NOW)));
    assert_eq!(magics(&stored), vec![1, 1]);
}

#[test]
fn legacy_input_is_up_converted_to_v2() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &v2(NOW, &["v2"]));
    let info = append(&mut log, &legacy(0, -1, &["a", "b", "c"]));
    assert_eq!(
        (info.base_offset, info.last_offset, info.rebuilt),
        (1, 3, true)
    );
    let info = append(&mut log, &legacy(1, NOW, &["d"]));
    assert_eq!((info.base_offset, info.last_offset), (4, 4));
    let stored = log.read(1, 1 << 20).unwrap().bytes;
    assert_eq!(magics(&stored), vec![2, 2]);
    let seen = records_of(&stored);
    let values: Vec<_> = seen
        .iter()
        .map(|s| (s.offset, s.timestamp, s.value.clone()))
        .collect();
    assert_eq!(
        values,
        vec![
            (1, Some(-1), b"a".to_vec()),
            (2, Some(-1), b"b".to_vec()),
            (3, Some(-1), b"c".to_vec()),
            (4, Some(NOW), b"d".to_vec()),
        ]
    );
}

#[test]
fn v2_input_is_down_converted_for_an_old_format() {
    let m = mem();
    let mut log = m.create(&[("message.format.version", "0.10.2")]);
    let info = append(&mut log, &v2(NOW, &["a", "b"]));
    assert!(info.rebuilt);
    let stored = log.read(0, 1 << 20).unwrap().bytes;
    assert_eq!(magics(&stored), vec![1, 1]);
    let m = mem();
    let mut log = m.create(&[("message.format.version", "0.9.0")]);
    append(&mut log, &v2(NOW, &["a"]));
    append(&mut log, &legacy(1, NOW, &["b"]));
    let stored = log.read(0, 1 << 20).unwrap().bytes;
    assert_eq!(magics(&stored), vec![0, 0]);
    assert!(records_of(&stored).iter().all(|s| s.timestamp.is_none()));
}

#[test]
fn legacy_in_place_assigns_each_message_an_offset() {
    let m = mem();
    let mut log = m.create(&[("message.format.version", "0.9.0")]);
    let sent = legacy(0, -1, &["a", "b", "c"]);
    let info = append(&mut log, &sent);
    assert_eq!(
        (info.base_offset, info.last_offset, info.rebuilt),
        (0, 2, false)
    );
    let info = append(&mut log, &sent);
    assert_eq!((info.base_offset, info.last_offset), (3, 5));
    let all = read_all(&log, 1);
    assert_eq!(
        all.iter().map(|s| s.offset).collect::<Vec<_>>(),
        (0..6).collect::<Vec<_>>()
    );
}

#[test]
fn truncated_trailing_entry_is_trimmed_like_kafka() {
    let m = mem();
    let mut log = m.create(&[("message.format.version", "0.10.2")]);
    let mut bytes = legacy(1, NOW, &["a", "b"]);
    let whole = bytes.len();
    bytes.extend_from_slice(&legacy(1, NOW, &["c"])[..20]);
    let info = append(&mut log, &bytes);
    assert_eq!(
        (info.base_offset, info.last_offset, info.trimmed_bytes),
        (0, 1, 20)
    );
    assert_eq!(info.size_bytes, whole);
}

#[test]
/// As Kafka's `assignOffsetsNonCompressed`: a v2 batch whose offset deltas are out of order is
/// stored in place, its records at the offsets their deltas give (Kafka 4.4.0 takes it so, the
/// differential tests found; the rebuild this log did before also failed for a producer id
/// without an epoch).
fn out_of_order_v2_offset_deltas_are_kept_in_place_as_kafka_keeps_them() {
    let m = mem();
    let mut log = m.create(&[]);
    let mut b = V2Builder::new(0);
    b.append_with_offset(0, &NewRecord::new(NOW, None, Some(b"a")))
        .unwrap();
    b.append_with_offset(2, &NewRecord::new(NOW, None, Some(b"b")))
        .unwrap();
    let mut bytes = b.finish().unwrap();
    // Two records with last offset delta 1: consistent count, but deltas 0 and 2.
    bytes[23..27].copy_from_slice(&1i32.to_be_bytes());
    fix_v2_crc(&mut bytes);
    let info = append(&mut log, &bytes);
    assert!(!info.rebuilt);
    assert_eq!((info.base_offset, info.last_offset), (0, 1));
    let stored = log.read(0, 1 << 20).unwrap().bytes;
    // As sent, but for the base offset and the partition leader epoch the log sets.
    assert_eq!(&stored[16..], &bytes[16..]);
    let mut scratch = Vec::new();
    let batch = krecords_codec::read::Entries::new(&stored)
        .next()
        .unwrap()
        .unwrap();
    let offsets: Vec<i64> = batch
        .records(&mut scratch, 1 << 20)
        .unwrap()
        .map(|r| r.unwrap().offset())
        .collect();
    assert_eq!(offsets, [0, 2]);
}

#[test]
fn compressed_v2_is_kept_in_place_or_recompressed() {
    let m = mem();
    let mut log = m.create(&[]);
    append(&mut log, &v2(NOW, &["x"]));
    let sent = v2_compressed(Compression::Gzip, NOW, &["a", "b"]);
    let info = append(&mut log, &sent);
    assert!(!info.rebuilt);
    let stored = log.read(1, 1 << 20).unwrap().bytes;
    assert_eq!(&stored[16..], &sent[16..]);
    let m = mem();
    let mut log = m.create(&[("compression.type", "lz4")]);
    let info = append(&mut log, &sent);
    assert!(info.rebuilt);
    assert_first_batch(&log, Compression::Lz4, 2);
}

#[test]
fn append_json_matches_design() {
    let m = mem();
    let mut log = m.create(&[]);
    let info = append(&mut log, &v2(NOW, &["a", "b"]));
    assert_eq!(
        serde_json::to_string(&info).unwrap(),
        r#"{"base_offset":0,"last_offset":1,"log_append_time":null,"duplicate":false}"#
    );
}

#[test]
fn v1_compressed_wrapper_is_kept_in_place() {
    let m = mem();
    let mut log = m.create(&[("message.format.version", "0.10.2")]);
    append(&mut log, &legacy(1, NOW, &["x"]));
    let sent = legacy_compressed(1, Compression::Gzip, NOW, &["a", "b", "c"]);
    let info = append(&mut log, &sent);
    assert_eq!(
        (info.base_offset, info.last_offset, info.rebuilt),
        (1, 3, false)
    );
    let stored = log.read(1, 1 << 20).unwrap().bytes;
    assert_eq!(
        &stored[..8],
        &3i64.to_be_bytes(),
        "wrapper offset: the last inner offset"
    );
    assert_eq!(&stored[8..], &sent[8..]);
    assert_eq!(offsets(&log), vec![0, 1, 2, 3]);
}

#[test]
fn v0_compressed_wrappers_are_always_rebuilt() {
    let m = mem();
    let mut log = m.create(&[("message.format.version", "0.9.0")]);
    append(&mut log, &legacy(0, -1, &["x"]));
    let info = append(
        &mut log,
        &legacy_compressed(0, Compression::Gzip, -1, &["a", "b"]),
    );
    assert_eq!(
        (info.base_offset, info.last_offset, info.rebuilt),
        (1, 2, true)
    );
    assert_eq!(offsets(&log), vec![0, 1, 2]);
}

#[test]
fn uncompressed_input_is_compressed_to_the_configured_codec() {
    let m = mem();
    let mut log = m.create(&[("compression.type", "snappy")]);
    let info = append(&mut log, &v2(NOW, &["a", "b"]));
    assert!(info.rebuilt);
    assert_first_batch(&log, Compression::Snappy, 2);
}

#[test]
fn log_append_time_on_a_compressed_batch_patches_only_the_header() {
    let m = mem();
    let mut log = m.create(&[("message.timestamp.type", "LogAppendTime")]);
    let sent = v2_compressed(Compression::Gzip, NOW - 5, &["a", "b"]);
    let info = append(&mut log, &sent);
    assert!(!info.rebuilt);
    let stored = log.read(0, 1 << 20).unwrap().bytes;
    assert_eq!(
        &stored[61..],
        &sent[61..],
        "the compressed records are untouched"
    );
    assert!(first_batch(&stored).is_crc_valid());
    assert!(records_of(&stored).iter().all(|s| s.timestamp == Some(NOW)));
}

#[test]
fn logs_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<Log>();
    assert_send::<Error>();
}

#[test]
fn append_all_writes_nothing_when_a_later_entry_is_refused() {
    let (m, mut log) = setup(&[]);
    let good = v2(NOW, &["a", "b"]);
    let mut corrupt = v2(NOW, &["c"]);
    let last = corrupt.len() - 1;
    corrupt[last] ^= 1;
    rejected_all(
        &m,
        &mut log,
        &[&good, &good, &corrupt],
        2,
        "CORRUPT_MESSAGE",
    );
    let late = v2(NOW + 3_600_000 * 24 * 365 * 10, &["late"]);
    let e = rejected_all(&m, &mut log, &[&good, &late], 1, "INVALID_TIMESTAMP");
    // The wrapped error keeps its record errors.
    assert_eq!(e.record_errors().len(), 1);
    // A control batch is refused from a client even after good data; so is an entry with no
    // complete batch.
    let marker = {
        let mut b = V2Builder::new(0)
            .producer(1, 0, -1)
            .transactional(true)
            .control(true);
        b.append_control(NOW, &[0, 0, 0, 1], &[0, 0, 0, 0, 0, 0])
            .unwrap();
        b.finish().unwrap()
    };
    rejected_all(&m, &mut log, &[&good, &marker], 1, "INVALID_RECORD");
    rejected_all(&m, &mut log, &[&good, &good[..10]], 1, "INVALID_RECORD");
    // Over segment.bytes on its own: refused before the good first entry is written.
    let (m2, mut log2) = setup(&[("segment.bytes", "200")]);
    let big = v2(NOW, &["x"; 20]);
    rejected_all(&m2, &mut log2, &[&good, &big], 1, "RECORD_LIST_TOO_LARGE");
    // The same entries without the bad one all go in.
    let infos = log
        .append_all(
            &[&good, &legacy(1, NOW, &["d"]), &good],
            AppendOrigin::Client,
        )
        .unwrap();
    let ranges: Vec<(i64, i64)> = infos
        .iter()
        .map(|i| (i.base_offset, i.last_offset))
        .collect();
    assert_eq!(ranges, [(1, 2), (3, 3), (4, 5)]);
    assert!(infos.iter().all(|i| !i.duplicate && i.record_count > 0));
    assert!(infos[1].rebuilt, "v1 is up-converted");
    // Nothing to append: nothing happens.
    assert!(log
        .append_all(&[], AppendOrigin::Client)
        .unwrap()
        .is_empty());
    drop(m);
}

#[test]
fn append_all_writes_what_the_same_appends_one_by_one_write() {
    // Small segments, so that the entries roll the log as separate appends would.
    let pairs = [("segment.bytes", "300"), ("index.interval.bytes", "0")];
    let entries: Vec<Vec<u8>> = vec![
        v2(NOW, &["a", "b"]),
        idem(5, 0, 0, false, &["c", "d", "e"]),
        legacy(1, NOW, &["f"]),
        idem(5, 0, 3, false, &["g"]),
        v2_compressed(Compression::Gzip, NOW, &["h", "i"]),
        idem(6, 0, 0, true, &["j"]),
        idem(5, 0, 4, false, &["k", "l"]),
    ];
    let one_by_one = mem();
    let mut a = one_by_one.create(&pairs);
    let mut expected = Vec::new();
    for e in &entries {
        expected.push(append(&mut a, e));
    }
    let all = mem();
    let mut b = all.create(&pairs);
    let refs: Vec<&[u8]> = entries.iter().map(Vec::as_slice).collect();
    assert_eq!(b.append_all(&refs, AppendOrigin::Client).unwrap(), expected);
    assert!(b.info().unwrap().segments.len() > 2);
    assert_eq!(all.snapshot(), one_by_one.snapshot());
    assert_eq!(b.producer_states(), a.producer_states());
    assert_eq!(b.last_stable_offset(), a.last_stable_offset());
    a.close().unwrap();
    b.close().unwrap();
    assert_eq!(all.snapshot(), one_by_one.snapshot());
}

/// A storage failure partway through `append_all` (a full disk: the nth write fails, or
/// writes half its bytes) rolls the log back to where it was, at every write the call makes,
/// rolls included: nothing of the call stays, the producer state is as before, the log reads
/// clean (no torn tail), takes writes again, and a retry appends every entry once.
#[test]
fn append_all_rolls_back_when_a_write_fails_partway() {
    let batch = |seq: i32| {
        let mut b = V2Builder::new(0).producer(7, 0, seq);
        for v in ["a", "b"] {
            b.append(&NewRecord::new(NOW, None, Some(v.as_bytes())))
                .unwrap();
        }
        b.finish().unwrap()
    };
    let entries: Vec<Vec<u8>> = (2..12).map(|i| batch(2 * i)).collect();
    let refs: Vec<&[u8]> = entries.iter().map(Vec::as_slice).collect();
    let mut failed = 0;
    for torn in [false, true] {
        for n in 1.. {
            let m = mem();
            let mut log = m.create(&[("segment.bytes", "400")]);
            append(&mut log, &batch(0));
            append(&mut log, &batch(2));
            let segments = log.segment_files().len();
            let producer = log.producer_state(7).unwrap();
            if torn {
                m.storage.short_write_after(n);
            } else {
                m.storage.fail_write_after(n);
            }
            let r = log.append_all(&refs, AppendOrigin::Client);
            m.storage.clear_faults();
            let Err(e) = r else {
                assert!(n > 1, "the first write cannot succeed");
                assert!(log.segment_files().len() > segments, "the call rolls");
                break;
            };
            failed += 1;
            let at = format!("write {n} (torn: {torn}): {e}");
            assert!(
                matches!(
                    e,
                    Error::AppendFailed {
                        end_offset: 4,
                        undo_failed: None,
                        ..
                    }
                ),
                "{at}"
            );
            assert_eq!(e.kafka_name(), "KAFKA_STORAGE_ERROR");
            assert!(
                e.to_string()
                    .contains("(end offset 4): nothing was appended"),
                "{at}"
            );
            assert!(!log.is_poisoned(), "{at}");
            assert_eq!(log.log_end_offset(), 4, "{at}");
            assert_eq!(log.segment_files().len(), segments, "{at}");
            assert_eq!(log.producer_state(7).unwrap(), producer, "{at}");
            assert_eq!(read_all(&log, 1).len(), 4, "{at}");
            log.verify_indexes().unwrap();
            // What a reader (and the next open) finds: no torn tail.
            let view = Log::open_read_only_with(&m.dir, m.env.clone()).unwrap();
            assert_eq!(view.recovery_info().truncated_bytes, 0, "{at}");
            assert_eq!(view.log_end_offset(), 4, "{at}");
            drop(view);
            // The retry goes in once, as new appends.
            let infos = log.append_all(&refs, AppendOrigin::Client).unwrap();
            assert!(infos.iter().all(|i| !i.duplicate), "{at}");
            assert_eq!(log.log_end_offset(), 24, "{at}");
            log.close().unwrap();
            let log = m.open();
            assert_eq!(log.recovery_info().truncated_bytes, 0, "{at}");
            log.verify_indexes().unwrap();
            assert_eq!(read_all(&log, 1).len(), 24, "{at}");
        }
    }
    assert!(failed > 10, "{failed}");
}
