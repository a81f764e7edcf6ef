//! Records as Arrow: every column of every format against the codec's own record views, the
//! limits, projection, string formats and hostile input.

#![allow(missing_docs, clippy::unwrap_used)]

use arrow_array::cast::AsArray;
use arrow_array::types::{Int16Type, Int32Type, Int64Type, Int8Type, TimestampMillisecondType};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use krecords_arrow::{
    full_schema, timestamp_type_name, BytesFormat, Column, Error, Options, RecordBatchBuilder,
    RecordBatches, Report,
};
use krecords_codec::read::{Entries, Record};
use krecords_codec::write::{end_txn_marker, EndTxnBatch, LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, Header, TimestampType, DEFAULT_DECOMPRESS_LIMIT};
use proptest::prelude::*;

const T0: i64 = 1_714_000_000_000;

/// One row, as the columns hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    topic: String,
    partition: i32,
    offset: i64,
    timestamp: Option<i64>,
    timestamp_type: String,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(Option<String>, Option<Vec<u8>>)>,
    producer_id: i64,
    producer_epoch: i16,
    sequence: Option<i32>,
    is_transactional: bool,
    batch_offset: i64,
    magic: i8,
    compression: String,
}

/// Every row of `batches` (all columns, binary keys and values), checking the schema.
fn rows_of(batches: &[RecordBatch]) -> Vec<Row> {
    let mut rows = Vec::new();
    for b in batches {
        assert_eq!(
            b.schema().as_ref(),
            &full_schema(BytesFormat::Binary, BytesFormat::Binary)
        );
        for c in b.columns() {
            c.to_data().validate_full().unwrap();
        }
        let col = |name: &str| b.column_by_name(name).unwrap().clone();
        let (topic, ts_type, compression) =
            (col("topic"), col("timestamp_type"), col("compression"));
        let (key, value, headers) = (col("key"), col("value"), col("headers"));
        let headers = headers.as_list::<i32>();
        let timestamp = col("timestamp");
        let sequence = col("sequence");
        for i in 0..b.num_rows() {
            let bytes =
                |a: &dyn Array| (!a.is_null(i)).then(|| a.as_binary::<i32>().value(i).to_vec());
            let hs = headers.value(i);
            let hs = hs.as_struct();
            let (hk, hv) = (
                hs.column(0).as_string::<i32>(),
                hs.column(1).as_binary::<i32>(),
            );
            rows.push(Row {
                topic: topic.as_string::<i32>().value(i).to_string(),
                partition: col("partition").as_primitive::<Int32Type>().value(i),
                offset: col("offset").as_primitive::<Int64Type>().value(i),
                timestamp: (!timestamp.is_null(i)).then(|| {
                    timestamp
                        .as_primitive::<TimestampMillisecondType>()
                        .value(i)
                }),
                timestamp_type: ts_type.as_string::<i32>().value(i).to_string(),
                key: bytes(&key),
                value: bytes(&value),
                headers: (0..hs.len())
                    .map(|j| {
                        (
                            (!hk.is_null(j)).then(|| hk.value(j).to_string()),
                            (!hv.is_null(j)).then(|| hv.value(j).to_vec()),
                        )
                    })
                    .collect(),
                producer_id: col("producer_id").as_primitive::<Int64Type>().value(i),
                producer_epoch: col("producer_epoch").as_primitive::<Int16Type>().value(i),
                sequence: (!sequence.is_null(i))
                    .then(|| sequence.as_primitive::<Int32Type>().value(i)),
                is_transactional: col("is_transactional").as_boolean().value(i),
                batch_offset: col("batch_offset").as_primitive::<Int64Type>().value(i),
                magic: col("magic").as_primitive::<Int8Type>().value(i),
                compression: compression.as_string::<i32>().value(i).to_string(),
            });
        }
    }
    rows
}

/// The rows the codec's own record views give for `bytes`, control batches left out.
fn expected(bytes: &[u8], topic: &str, partition: i32) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut scratch = Vec::new();
    for entry in Entries::new(bytes) {
        let entry = entry.unwrap();
        if entry.is_control() {
            continue;
        }
        let records: Vec<Record<'_>> = entry
            .checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let batch_offset = records[0].offset();
        for r in &records {
            let (magic, ts_type, sequence) = match r {
                Record::Legacy(l) => (l.magic, l.timestamp_type, None),
                Record::V2(v) => (2, entry.timestamp_type(), v.sequence),
            };
            rows.push(Row {
                topic: topic.into(),
                partition,
                offset: r.offset(),
                timestamp: r.timestamp(),
                timestamp_type: timestamp_type_name(ts_type).into(),
                key: r.key().map(<[u8]>::to_vec),
                value: r.value().map(<[u8]>::to_vec),
                headers: r
                    .headers()
                    .map(|h| {
                        (
                            Some(String::from_utf8(h.key.to_vec()).unwrap()),
                            h.value.map(<[u8]>::to_vec),
                        )
                    })
                    .collect(),
                producer_id: entry.producer_id().unwrap_or(-1),
                producer_epoch: entry.producer_epoch().unwrap_or(-1),
                sequence,
                is_transactional: entry.is_transactional(),
                batch_offset,
                magic: magic as i8,
                compression: entry.compression().unwrap().name().into(),
            });
        }
    }
    rows
}

fn convert(bytes: &[u8], options: Options) -> (Vec<RecordBatch>, Report) {
    let mut it = RecordBatches::new(Entries::new(bytes), "events", 3, options);
    let batches = it.by_ref().collect::<Result<Vec<_>, _>>().unwrap();
    (batches, it.report())
}

fn all_rows(bytes: &[u8]) -> Vec<Row> {
    rows_of(&convert(bytes, Options::default()).0)
}

/// A v2 batch of four records: keys and a null key, a tombstone, headers with a duplicate key
/// and a null value.
fn v2_batch(base: i64, codec: Compression, out: &mut Vec<u8>) {
    let headers = [
        Header {
            key: b"h",
            value: Some(b"1"),
        },
        Header {
            key: b"h",
            value: None,
        },
        Header {
            key: b"trace",
            value: Some(b""),
        },
    ];
    let mut b = V2Builder::new(base).compression(codec, None);
    b.append(&NewRecord::new(T0, Some(b"k1"), Some(b"v1")))
        .unwrap();
    b.append(&NewRecord::new(T0 + 5, None, Some(b"no key")))
        .unwrap();
    b.append(&NewRecord::new(T0 + 2, Some(b"k1"), None))
        .unwrap();
    b.append(&NewRecord::new(T0 + 9, Some(b""), Some(b"")).with_headers(&headers))
        .unwrap();
    b.finish_into(out).unwrap();
}

#[test]
fn v2_every_codec_every_column() {
    for codec in Compression::ALL {
        let mut bytes = Vec::new();
        v2_batch(100, codec, &mut bytes);
        let rows = all_rows(&bytes);
        assert_eq!(rows, expected(&bytes, "events", 3), "{codec}");
        assert_eq!(rows.len(), 4);
        let r = &rows[0];
        assert_eq!(
            (r.topic.as_str(), r.partition, r.offset),
            ("events", 3, 100)
        );
        assert_eq!(
            (r.timestamp, r.timestamp_type.as_str()),
            (Some(T0), "CreateTime")
        );
        assert_eq!(
            (r.key.as_deref(), r.value.as_deref()),
            (Some(&b"k1"[..]), Some(&b"v1"[..]))
        );
        assert_eq!(
            (r.producer_id, r.producer_epoch, r.sequence),
            (-1, -1, None)
        );
        assert_eq!(
            (r.is_transactional, r.batch_offset, r.magic),
            (false, 100, 2)
        );
        assert_eq!(r.compression, codec.name());
        assert_eq!(rows[1].key, None);
        assert_eq!(rows[2].value, None); // a tombstone
        assert_eq!(rows[2].timestamp, Some(T0 + 2));
        assert_eq!(
            (rows[3].key.as_deref(), rows[3].value.as_deref()),
            (Some(&b""[..]), Some(&b""[..]))
        );
        assert_eq!(
            rows[3].headers,
            [
                (Some("h".into()), Some(b"1".to_vec())),
                (Some("h".into()), None),
                (Some("trace".into()), Some(vec![])),
            ]
        );
        assert!(rows[..3].iter().all(|r| r.headers.is_empty()));
        assert!(rows.iter().all(|r| r.batch_offset == 100));
    }
}

/// Every row of `bytes` is as expected and carries the broker's time `ts`.
fn assert_log_append_time(bytes: &[u8], ts: i64) {
    let rows = all_rows(bytes);
    assert_eq!(rows, expected(bytes, "events", 3));
    assert!(rows
        .iter()
        .all(|r| r.timestamp == Some(ts) && r.timestamp_type == "LogAppendTime"));
}

#[test]
fn v2_log_append_time() {
    let mut b = V2Builder::new(0).timestamp_type(TimestampType::LogAppendTime, T0 + 1000);
    b.append(&NewRecord::new(T0, None, Some(b"a"))).unwrap();
    b.append(&NewRecord::new(T0 + 1, None, Some(b"b"))).unwrap();
    let bytes = b.finish().unwrap();
    assert_log_append_time(&bytes, T0 + 1000);
}

#[test]
fn legacy_v0_v1_every_codec() {
    for magic in [0u8, 1] {
        for codec in Compression::ALL.into_iter().filter(|c| c.allowed_in(magic)) {
            let mut b = LegacyBuilder::new(magic, 50).unwrap();
            if codec != Compression::None {
                b = b.compression(codec, None).unwrap();
            }
            b.append(&NewRecord::new(T0, Some(b"k"), Some(b"v")))
                .unwrap();
            b.append(&NewRecord::new(T0 + 1, None, None)).unwrap();
            let bytes = b.finish().unwrap();
            let rows = all_rows(&bytes);
            assert_eq!(rows, expected(&bytes, "events", 3), "v{magic} {codec}");
            assert_eq!(rows.len(), 2);
            for (i, r) in rows.iter().enumerate() {
                assert_eq!(r.offset, 50 + i as i64);
                assert_eq!(r.magic, magic as i8);
                assert_eq!(r.compression, codec.name());
                assert!(r.headers.is_empty());
                assert_eq!(
                    (r.producer_id, r.producer_epoch, r.sequence),
                    (-1, -1, None)
                );
                assert!(!r.is_transactional);
                // A wrapper's first inner offset; each uncompressed message its own.
                let first = if codec == Compression::None {
                    r.offset
                } else {
                    50
                };
                assert_eq!(r.batch_offset, first);
                if magic == 0 {
                    assert_eq!(
                        (r.timestamp, r.timestamp_type.as_str()),
                        (None, "NoTimestamp")
                    );
                } else {
                    assert_eq!(r.timestamp, Some(T0 + i as i64));
                    assert_eq!(r.timestamp_type, "CreateTime");
                }
            }
            assert_eq!((rows[1].key.as_ref(), rows[1].value.as_ref()), (None, None));
        }
    }
}

#[test]
fn legacy_v1_log_append_time_wrapper() {
    let mut b = LegacyBuilder::new(1, 0)
        .unwrap()
        .compression(Compression::Gzip, None)
        .unwrap()
        .timestamp_type(TimestampType::LogAppendTime, T0 + 77);
    b.append(&NewRecord::new(T0, None, Some(b"a"))).unwrap();
    b.append(&NewRecord::new(T0, None, Some(b"b"))).unwrap();
    let bytes = b.finish().unwrap();
    assert_log_append_time(&bytes, T0 + 77);
}

#[test]
fn idempotent_and_transactional_batches_control_skipped() {
    let mut bytes = Vec::new();
    let mut b = V2Builder::new(0).producer(42, 3, 2_147_483_646);
    for v in [b"a", b"b", b"c"] {
        b.append(&NewRecord::new(T0, None, Some(v))).unwrap();
    }
    b.finish_into(&mut bytes).unwrap();
    let mut b = V2Builder::new(3).producer(43, 0, 0).transactional(true);
    b.append(&NewRecord::new(T0, None, Some(b"t"))).unwrap();
    b.finish_into(&mut bytes).unwrap();
    bytes.extend(
        end_txn_marker(&EndTxnBatch {
            base_offset: 4,
            partition_leader_epoch: 0,
            producer_id: 43,
            producer_epoch: 0,
            coordinator_epoch: 0,
            commit: true,
            timestamp: T0,
        })
        .unwrap(),
    );
    let (batches, report) = convert(&bytes, Options::default());
    let rows = rows_of(&batches);
    assert_eq!(rows, expected(&bytes, "events", 3));
    assert_eq!(rows.len(), 4);
    assert_eq!(report.control_entries, 1);
    assert_eq!(report.entries, 2);
    // Sequences wrap as the producer's do.
    let seq: Vec<_> = rows.iter().map(|r| r.sequence).collect();
    assert_eq!(seq, [Some(2_147_483_646), Some(i32::MAX), Some(0), Some(0)]);
    assert_eq!((rows[0].producer_id, rows[0].producer_epoch), (42, 3));
    assert!(!rows[0].is_transactional);
    assert_eq!((rows[3].producer_id, rows[3].is_transactional), (43, true));
}

/// `n` v2 batches of `per` records with 100-byte values.
fn many(n: i64, per: i64, codec: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    let value = [b'x'; 100];
    for i in 0..n {
        let mut b = V2Builder::new(i * per).compression(codec, None);
        for _ in 0..per {
            b.append(&NewRecord::new(T0, Some(b"key"), Some(&value)))
                .unwrap();
        }
        b.finish_into(&mut out).unwrap();
    }
    out
}

#[test]
fn row_limit_splits_batches_and_inside_entries() {
    let bytes = many(3, 10, Compression::Lz4);
    let options = Options {
        max_rows: 7,
        ..Options::default()
    };
    let (batches, report) = convert(&bytes, options);
    let sizes: Vec<_> = batches.iter().map(RecordBatch::num_rows).collect();
    assert_eq!(sizes, [7, 7, 7, 7, 2]);
    assert_eq!(rows_of(&batches), expected(&bytes, "events", 3));
    assert_eq!((report.rows, report.record_batches), (30, 5));
}

#[test]
fn byte_limit_bounds_batches() {
    let bytes = many(4, 50, Compression::None);
    let options = Options {
        max_bytes: 2000,
        ..Options::default()
    };
    let (batches, _) = convert(&bytes, options);
    assert!(batches.len() > 10);
    for b in &batches {
        let value = b.column_by_name("value").unwrap().as_binary::<i32>();
        assert!(value.value_data().len() <= 2000);
    }
    assert_eq!(rows_of(&batches), expected(&bytes, "events", 3));
    // A record larger than the limit makes a batch of its own.
    let options = Options {
        max_bytes: 10,
        ..Options::default()
    };
    let (batches, _) = convert(&bytes, options);
    assert!(batches.iter().all(|b| b.num_rows() == 1));
    assert_eq!(batches.len(), 200);
}

#[test]
fn projection_builds_only_the_columns_asked_in_their_order() {
    let mut bytes = Vec::new();
    v2_batch(0, Compression::Zstd, &mut bytes);
    let options = Options {
        columns: vec![Column::Value, Column::Offset],
        ..Options::default()
    };
    let (batches, _) = convert(&bytes, options);
    let schema = batches[0].schema();
    let names: Vec<_> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["value", "offset"]);
    assert_eq!(
        batches[0].column(1).as_primitive::<Int64Type>().values(),
        &[0, 1, 2, 3]
    );
    // count(*): no columns, the row count only.
    let options = Options {
        columns: vec![],
        max_rows: 3,
        ..Options::default()
    };
    let (batches, report) = convert(&bytes, options);
    assert!(batches.iter().all(|b| b.num_columns() == 0));
    assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 4);
    assert_eq!(report.rows, 4);
}

#[test]
fn string_formats_count_invalid_utf8_as_null() {
    let bad = [0xff, 0xfe];
    let headers = [
        Header {
            key: &bad,
            value: Some(b"x"),
        },
        Header {
            key: b"ok",
            value: None,
        },
    ];
    let mut b = V2Builder::new(0);
    b.append(&NewRecord::new(T0, Some(b"k\xc3\xa9"), Some(b"{}")))
        .unwrap();
    b.append(&NewRecord::new(T0, Some(&bad), Some(&bad)).with_headers(&headers))
        .unwrap();
    b.append(&NewRecord::new(T0, None, None)).unwrap();
    let bytes = b.finish().unwrap();
    let options = Options {
        key_format: BytesFormat::String,
        value_format: BytesFormat::String,
        ..Options::default()
    };
    let (batches, report) = convert(&bytes, options);
    let b = &batches[0];
    assert_eq!(
        b.schema().field_with_name("key").unwrap().data_type(),
        &DataType::Utf8
    );
    let key = b.column_by_name("key").unwrap().as_string::<i32>();
    let value = b.column_by_name("value").unwrap().as_string::<i32>();
    assert_eq!(key.value(0), "ké");
    assert_eq!(value.value(0), "{}");
    // Not UTF-8: null, and counted (never replaced); a null key is null, and not counted.
    assert!(key.is_null(1) && value.is_null(1) && key.is_null(2) && value.is_null(2));
    assert_eq!((report.invalid("key"), report.invalid("value")), (1, 1));
    assert_eq!(report.invalid("headers"), 1);
    let headers = b
        .column_by_name("headers")
        .unwrap()
        .as_list::<i32>()
        .value(1);
    let keys = headers.as_struct().column(0).as_string::<i32>();
    assert!(keys.is_null(0));
    assert_eq!(keys.value(1), "ok");
    // As binary nothing is invalid.
    let (_, report) = convert(&bytes, Options::default());
    assert_eq!(report.invalid("key") + report.invalid("value"), 0);
    assert_eq!(report.invalid, [("headers".to_string(), 1)]);
}

#[test]
fn offset_range_keeps_the_records_inside() {
    let bytes = many(2, 10, Compression::Snappy);
    let options = Options {
        offsets: 5..=12,
        ..Options::default()
    };
    let (batches, report) = convert(&bytes, options);
    let rows = rows_of(&batches);
    let offsets: Vec<_> = rows.iter().map(|r| r.offset).collect();
    assert_eq!(offsets, (5..13).collect::<Vec<_>>());
    assert_eq!(rows[0].batch_offset, 0);
    assert_eq!(report.outside_offsets, 12);
}

#[test]
fn corrupt_entry_is_an_error_and_earlier_rows_stay_valid() {
    let mut bytes = many(3, 10, Compression::None);
    let good = bytes.len() * 2 / 3;
    // A flipped bit in the last batch's records: its CRC fails.
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let options = Options {
        max_rows: 4,
        ..Options::default()
    };
    let mut it = RecordBatches::new(Entries::new(&bytes), "events", 3, options);
    let mut rows = Vec::new();
    let mut errors = 0;
    for b in it.by_ref() {
        match b {
            Ok(b) => rows.extend(rows_of(&[b])),
            Err(e) => {
                assert!(matches!(
                    e,
                    Error::Codec(krecords_codec::Error::CrcMismatch { .. })
                ));
                errors += 1;
            }
        }
    }
    assert_eq!(errors, 1);
    assert_eq!(rows, expected(&bytes[..good], "events", 3));
    assert!(it.next().is_none());
}

#[test]
fn builder_direct_use_and_partitions() {
    let bytes = many(1, 3, Compression::Gzip);
    let mut b = RecordBatchBuilder::new("a", 0, Options::default());
    let entry = Entries::new(&bytes).next().unwrap().unwrap();
    b.push(&entry).unwrap();
    b.finish().unwrap();
    b.set_partition("b", 7);
    b.push(&entry).unwrap();
    b.finish().unwrap();
    let first = rows_of(&[b.pop().unwrap()]);
    let second = rows_of(&[b.pop().unwrap()]);
    assert!(b.pop().is_none());
    assert_eq!(first, expected(&bytes, "a", 0));
    assert_eq!(second, expected(&bytes, "b", 7));
    // finish with nothing pending makes nothing.
    b.finish().unwrap();
    assert!(b.pop().is_none());
}

/// A record to write: timestamp, key, value, headers.
type RecordSpec = (
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(Vec<u8>, Option<Vec<u8>>)>,
);

/// A random record: timestamps, keys, values and headers, any of them null or empty.
fn record() -> impl Strategy<Value = RecordSpec> {
    let bytes = proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40));
    let header = (
        proptest::collection::vec(b'a'..=b'c', 0..3),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..5)),
    );
    (
        -1i64..1_000_000,
        bytes.clone(),
        bytes,
        proptest::collection::vec(header, 0..4),
    )
}

/// A random entry: a v2 batch (any codec, producer, transactional, LogAppendTime) or a v0/v1
/// message set.
#[derive(Debug, Clone)]
struct EntrySpec {
    magic: u8,
    codec: Compression,
    producer: Option<(i64, i16, i32)>,
    transactional: bool,
    log_append_time: bool,
    records: Vec<RecordSpec>,
}

fn entry_spec() -> impl Strategy<Value = EntrySpec> {
    (
        0u8..3,
        proptest::sample::select(Compression::ALL.to_vec()),
        proptest::option::of((0i64..1000, 0i16..10, 0i32..i32::MAX)),
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(record(), 1..8),
    )
        .prop_map(
            |(magic, codec, producer, transactional, log_append_time, records)| {
                let codec = if codec.allowed_in(magic) {
                    codec
                } else {
                    Compression::Gzip
                };
                EntrySpec {
                    magic,
                    codec,
                    producer,
                    transactional,
                    log_append_time,
                    records,
                }
            },
        )
}

fn write(specs: &[EntrySpec]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offset = 0i64;
    for s in specs {
        let hs: Vec<Vec<Header<'_>>> = s
            .records
            .iter()
            .map(|r| {
                r.3.iter()
                    .map(|(k, v)| Header {
                        key: k,
                        value: v.as_deref(),
                    })
                    .collect()
            })
            .collect();
        let news: Vec<NewRecord<'_>> = s
            .records
            .iter()
            .zip(&hs)
            .map(|(r, h)| NewRecord::new(r.0, r.1.as_deref(), r.2.as_deref()).with_headers(h))
            .collect();
        let ts_type = if s.log_append_time {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        };
        if s.magic == 2 {
            let mut b = V2Builder::new(offset)
                .compression(s.codec, None)
                .timestamp_type(ts_type, 5_000_000)
                .transactional(s.transactional && s.producer.is_some());
            if let Some((id, epoch, seq)) = s.producer {
                b = b.producer(id, epoch, seq);
            }
            for r in &news {
                b.append(r).unwrap();
            }
            b.finish_into(&mut out).unwrap();
        } else {
            let mut b = LegacyBuilder::new(s.magic, offset).unwrap();
            if s.codec != Compression::None {
                b = b.compression(s.codec, None).unwrap();
            }
            if s.magic == 1 {
                b = b.timestamp_type(ts_type, 5_000_000);
            }
            for r in &news {
                // v0/v1 have no headers; v0 no timestamps.
                b.append(&NewRecord::new(r.timestamp.max(0), r.key, r.value))
                    .unwrap();
            }
            b.finish_into(&mut out).unwrap();
        }
        offset += s.records.len() as i64;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Every row equals the codec's own record view, field by field, whatever the row limit.
    #[test]
    fn rows_equal_the_codecs_record_views(
        specs in proptest::collection::vec(entry_spec(), 1..6),
        max_rows in 1usize..20,
    ) {
        let bytes = write(&specs);
        let (batches, report) = convert(&bytes, Options { max_rows, ..Options::default() });
        prop_assert!(batches.iter().all(|b| b.num_rows() <= max_rows && b.num_rows() > 0));
        let want = expected(&bytes, "events", 3);
        prop_assert_eq!(report.rows as usize, want.len());
        prop_assert_eq!(rows_of(&batches), want);
    }

    /// Any bytes: an error or record batches, never a panic; what is made is valid.
    #[test]
    fn hostile_bytes_never_panic(
        specs in proptest::collection::vec(entry_spec(), 1..4),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut bytes = write(&specs);
        for (at, x) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= x;
        }
        for b in RecordBatches::new(Entries::new(&bytes), "t", 0, Options { max_rows: 3, ..Options::default() }).flatten() {
            for c in b.columns() {
                c.to_data().validate_full().unwrap();
            }
        }
    }
}

#[test]
fn a_long_topic_counts_towards_the_byte_limit() {
    let bytes = many(1, 10, Compression::None);
    let topic = "t".repeat(10_000);
    let options = Options {
        max_bytes: 25_000,
        ..Options::default()
    };
    let batches: Vec<_> = RecordBatches::new(Entries::new(&bytes), topic, 0, options)
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(batches.iter().all(|b| b.num_rows() <= 2));
    assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 10);
}

/// Entries of different kinds in one record batch: the columns filled per entry (runs of texts,
/// repeated values, nulls for a whole entry) change value from one entry to the next, and a
/// column's first null comes after valid rows (or the other way round) inside one record batch.
#[test]
fn mixed_entries_in_one_record_batch() {
    let mut bytes = Vec::new();
    // No producer: sequences null for the whole entry.
    let mut b = V2Builder::new(0).compression(Compression::Lz4, None);
    b.append(&NewRecord::new(T0, Some(b"a"), None)).unwrap();
    b.append(&NewRecord::new(T0 + 1, None, Some(b"b"))).unwrap();
    b.finish_into(&mut bytes).unwrap();
    // Idempotent: sequences, then a v0 message (null timestamp, no sequence), then
    // LogAppendTime without a producer again, then a v1 message.
    let mut b = V2Builder::new(2).producer(7, 1, 5);
    b.append(&NewRecord::new(T0 + 2, Some(b"c"), Some(b"c")))
        .unwrap();
    b.append(&NewRecord::new(T0 + 3, Some(b"d"), Some(b"d")))
        .unwrap();
    b.finish_into(&mut bytes).unwrap();
    let mut b = LegacyBuilder::new(0, 4).unwrap();
    b.append(&NewRecord::new(0, None, Some(b"v0"))).unwrap();
    b.finish_into(&mut bytes).unwrap();
    let mut b = V2Builder::new(5)
        .compression(Compression::Zstd, None)
        .timestamp_type(TimestampType::LogAppendTime, T0 + 100);
    b.append(&NewRecord::new(T0 + 5, Some(b"e"), None)).unwrap();
    b.finish_into(&mut bytes).unwrap();
    let mut b = LegacyBuilder::new(1, 6).unwrap();
    b.append(&NewRecord::new(T0 + 6, Some(b"f"), Some(b"f")))
        .unwrap();
    b.finish_into(&mut bytes).unwrap();

    let (batches, _) = convert(&bytes, Options::default());
    assert_eq!(batches.len(), 1);
    let rows = rows_of(&batches);
    assert_eq!(rows, expected(&bytes, "events", 3));
    let seq: Vec<_> = rows.iter().map(|r| r.sequence).collect();
    assert_eq!(seq, [None, None, Some(5), Some(6), None, None, None]);
    let ts: Vec<_> = rows.iter().map(|r| r.timestamp).collect();
    assert_eq!(
        ts,
        [
            Some(T0),
            Some(T0 + 1),
            Some(T0 + 2),
            Some(T0 + 3),
            None,
            Some(T0 + 100),
            Some(T0 + 6)
        ]
    );
    let texts: Vec<_> = rows
        .iter()
        .map(|r| (r.compression.as_str(), r.timestamp_type.as_str(), r.magic))
        .collect();
    assert_eq!(
        texts,
        [
            ("lz4", "CreateTime", 2),
            ("lz4", "CreateTime", 2),
            ("none", "CreateTime", 2),
            ("none", "CreateTime", 2),
            ("none", "NoTimestamp", 0),
            ("zstd", "LogAppendTime", 2),
            ("none", "CreateTime", 1)
        ]
    );
    let producers: Vec<_> = rows.iter().map(|r| r.producer_id).collect();
    assert_eq!(producers, [-1, -1, 7, 7, -1, -1, -1]);
    let batch_offsets: Vec<_> = rows.iter().map(|r| r.batch_offset).collect();
    assert_eq!(batch_offsets, [0, 0, 2, 2, 4, 5, 6]);
    // The same rows one record batch per row: every column starts anew each time.
    let (batches, _) = convert(
        &bytes,
        Options {
            max_rows: 1,
            ..Options::default()
        },
    );
    assert_eq!(batches.len(), 7);
    assert_eq!(rows_of(&batches), rows);
}
