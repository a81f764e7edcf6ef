//! The format-independent accessors of `read::Batch` over v0, v1 (plain and compressed wrapper)
//! and v2 batches, against values computed from what was written.

use krecords_codec::read::{Batch, Entries, RecordSpan};
use krecords_codec::write::{end_txn_marker, EndTxnBatch, LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, Error, TimestampType, DEFAULT_DECOMPRESS_LIMIT};

const T0: i64 = 1_714_000_000_000;

/// Three records at offsets base, base+1, base+3 with timestamps T0+5, T0+9, T0+1.
fn three() -> [(i64, NewRecord<'static>); 3] {
    [
        (0, NewRecord::new(T0 + 5, Some(b"k"), Some(b"a"))),
        (1, NewRecord::new(T0 + 9, None, Some(b"b"))),
        (3, NewRecord::new(T0 + 1, Some(b"k"), None)),
    ]
}

fn legacy(magic: u8, codec: Compression, base: i64) -> Vec<u8> {
    let mut b = LegacyBuilder::new(magic, base)
        .unwrap()
        .compression(codec, None)
        .unwrap();
    for (delta, r) in three() {
        b.append_with_offset(base + delta, &r).unwrap();
    }
    b.finish().unwrap()
}

fn batches(bytes: &[u8]) -> Vec<Batch<'_>> {
    Entries::new(bytes).collect::<Result<_, _>>().unwrap()
}

fn span(b: &Batch<'_>) -> RecordSpan {
    let mut scratch = Vec::new();
    b.record_span(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
        .unwrap()
}

/// What every legacy entry answers for the v2-only fields (and a v2 batch written with no
/// producer and no partition leader epoch).
fn no_v2_fields(b: &Batch<'_>) {
    assert_eq!(b.producer_id(), None);
    assert_eq!(b.producer_epoch(), None);
    assert_eq!(b.base_sequence(), None);
    assert!(!b.is_transactional());
    assert!(!b.is_control());
    assert_eq!(b.partition_leader_epoch(), None);
}

#[test]
fn plain_v0_and_v1_messages() {
    for magic in [0u8, 1] {
        let bytes = legacy(magic, Compression::None, 100);
        let got = batches(&bytes);
        assert_eq!(got.len(), 3, "one entry per message");
        for (b, (delta, r)) in got.iter().zip(three()) {
            let offset = 100 + delta;
            assert_eq!(b.first_offset(), Some(offset));
            assert_eq!(b.last_offset(), offset);
            assert_eq!(b.record_count(), Some(1));
            assert_eq!(
                span(b),
                RecordSpan {
                    first_offset: offset,
                    last_offset: offset,
                    count: 1
                }
            );
            assert_eq!(b.compression().unwrap(), Compression::None);
            if magic == 0 {
                assert_eq!(b.timestamp_type(), TimestampType::NoTimestamp);
                assert_eq!(b.max_timestamp(), -1);
            } else {
                assert_eq!(b.timestamp_type(), TimestampType::CreateTime);
                assert_eq!(b.max_timestamp(), r.timestamp);
            }
            no_v2_fields(b);
        }
    }
}

#[test]
fn compressed_v0_and_v1_wrappers() {
    for magic in [0u8, 1] {
        for codec in [Compression::Gzip, Compression::Snappy, Compression::Lz4] {
            let bytes = legacy(magic, codec, 100);
            let got = batches(&bytes);
            assert_eq!(got.len(), 1, "one wrapper");
            let b = &got[0];
            assert_eq!(b.first_offset(), None, "needs decompression");
            assert_eq!(b.last_offset(), 103);
            assert_eq!(b.record_count(), None, "needs decompression");
            assert_eq!(
                span(b),
                RecordSpan {
                    first_offset: 100,
                    last_offset: 103,
                    count: 3
                },
                "v{magic} {codec}"
            );
            assert_eq!(b.compression().unwrap(), codec);
            if magic == 0 {
                assert_eq!(b.timestamp_type(), TimestampType::NoTimestamp);
                assert_eq!(b.max_timestamp(), -1);
            } else {
                assert_eq!(b.timestamp_type(), TimestampType::CreateTime);
                assert_eq!(b.max_timestamp(), T0 + 9, "the largest inner timestamp");
            }
            no_v2_fields(b);
        }
    }
}

#[test]
fn v1_log_append_time_wrapper() {
    let mut b = LegacyBuilder::new(1, 0)
        .unwrap()
        .compression(Compression::Gzip, None)
        .unwrap()
        .timestamp_type(TimestampType::LogAppendTime, T0 + 77);
    b.append(&NewRecord::new(T0, None, Some(b"a"))).unwrap();
    let bytes = b.finish().unwrap();
    let b = batches(&bytes)[0];
    assert_eq!(b.timestamp_type(), TimestampType::LogAppendTime);
    assert_eq!(b.max_timestamp(), T0 + 77);
}

#[test]
fn record_span_decompresses_within_the_limit() {
    let bytes = legacy(1, Compression::Gzip, 0);
    let b = batches(&bytes)[0];
    let e = b.record_span(&mut Vec::new(), 10).unwrap_err();
    assert!(matches!(e, Error::DecompressLimit { .. }), "{e:?}");
    // Header-answered entries do not touch the scratch buffer or the limit.
    let v2 = v2(Compression::Gzip, |b| b);
    let b = batches(&v2)[0];
    let mut scratch = vec![1, 2, 3];
    assert_eq!(b.record_span(&mut scratch, 0).unwrap().count, 3);
    assert_eq!(scratch, [1, 2, 3]);
}

fn v2(codec: Compression, configure: impl FnOnce(V2Builder) -> V2Builder) -> Vec<u8> {
    let mut b = configure(V2Builder::new(100).compression(codec, None));
    for (delta, r) in three() {
        b.append_with_offset(100 + delta, &r).unwrap();
    }
    b.finish().unwrap()
}

#[test]
fn v2_batches_plain_and_compressed() {
    for codec in Compression::ALL {
        let bytes = v2(codec, |b| b);
        let b = batches(&bytes)[0];
        assert_eq!(b.first_offset(), Some(100));
        assert_eq!(b.last_offset(), 103);
        assert_eq!(b.record_count(), Some(3));
        assert_eq!(
            span(&b),
            RecordSpan {
                first_offset: 100,
                last_offset: 103,
                count: 3
            }
        );
        assert_eq!(b.compression().unwrap(), codec);
        assert_eq!(b.timestamp_type(), TimestampType::CreateTime);
        assert_eq!(b.max_timestamp(), T0 + 9);
        no_v2_fields(&b);
    }
}

#[test]
fn v2_producer_fields_epoch_and_log_append_time() {
    let bytes = v2(Compression::Lz4, |b| {
        b.producer(42, 3, 17)
            .transactional(true)
            .partition_leader_epoch(5)
            .timestamp_type(TimestampType::LogAppendTime, T0 + 1000)
    });
    let b = batches(&bytes)[0];
    assert_eq!(b.producer_id(), Some(42));
    assert_eq!(b.producer_epoch(), Some(3));
    assert_eq!(b.base_sequence(), Some(17));
    assert!(b.is_transactional());
    assert!(!b.is_control());
    assert_eq!(b.partition_leader_epoch(), Some(5));
    assert_eq!(b.timestamp_type(), TimestampType::LogAppendTime);
    assert_eq!(b.max_timestamp(), T0 + 1000);
}

#[test]
fn v2_control_batch() {
    let bytes = end_txn_marker(&EndTxnBatch {
        base_offset: 7,
        partition_leader_epoch: -1,
        producer_id: 42,
        producer_epoch: 3,
        coordinator_epoch: 1,
        commit: true,
        timestamp: T0,
    })
    .unwrap();
    let b = batches(&bytes)[0];
    assert!(b.is_control() && b.is_transactional());
    assert_eq!((b.producer_id(), b.producer_epoch()), (Some(42), Some(3)));
    assert_eq!(b.base_sequence(), None);
    assert_eq!((b.first_offset(), b.last_offset()), (Some(7), 7));
    assert_eq!(b.record_count(), Some(1));
}

#[test]
fn v2_empty_and_negative_counts() {
    let mut bytes = Vec::new();
    krecords_codec::write::write_empty_batch(
        &mut bytes,
        &krecords_codec::write::EmptyBatch {
            base_offset: 10,
            last_offset: 14,
            partition_leader_epoch: 2,
            timestamp_type: TimestampType::CreateTime,
            timestamp: T0,
            producer_id: 9,
            producer_epoch: 0,
            base_sequence: 3,
            transactional: false,
            control: false,
        },
    )
    .unwrap();
    let b = batches(&bytes)[0];
    assert_eq!(b.record_count(), Some(0));
    assert_eq!(
        span(&b),
        RecordSpan {
            first_offset: 10,
            last_offset: 14,
            count: 0
        }
    );
    // A negative count (corrupt input): no count, and the span says why.
    bytes[57..61].copy_from_slice(&(-1i32).to_be_bytes());
    let b = batches(&bytes)[0];
    assert_eq!(b.record_count(), None);
    let e = b.record_span(&mut Vec::new(), 0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidLength {
                at: 57,
                found: -1,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn v1_wrapper_with_offset_zero_spans_its_inner_offsets() {
    // A wrapper offset of 0 means the inner offsets are used as they are (Kafka's
    // AbstractLegacyRecordBatch); the offset field is outside the CRC.
    let mut bytes = legacy(1, Compression::Gzip, 0);
    bytes[..8].copy_from_slice(&0i64.to_be_bytes());
    let b = batches(&bytes)[0];
    b.validate().unwrap();
    assert_eq!(b.last_offset(), 0, "the offset field");
    assert_eq!(
        span(&b),
        RecordSpan {
            first_offset: 0,
            last_offset: 3,
            count: 3
        }
    );
}
