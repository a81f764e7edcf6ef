//! Records to Arrow against the codec's plain decode of the same data: 100 v2 batches of 1000
//! records (100,000 records, 100-byte values, short keys), uncompressed and lz4. `decode` is
//! `checked_records` touching every key and value (the CRC and record checks the builder makes
//! too); `arrow_all` builds every column of the schema, `arrow_key_value` the key and value only,
//! `arrow_count` no column (a row count). Issue 28's target: Arrow at least 0.5 of decode.
//!
//! More projections: `arrow_offset_timestamp` (two per-record primitives), `arrow_entry_columns`
//! (the columns constant within an entry: topic, partition, producer fields, is_transactional,
//! batch_offset, magic, compression, timestamp_type) and `arrow_headers`.
//!
//! Run: `cargo bench -p krecords-arrow --bench arrow`. On a loaded machine, count instructions
//! instead: `ARROW_BENCH_ONCE=none:arrow_all` runs one workload once (after building its input)
//! and exits, for `valgrind --tool=callgrind --toggle-collect='*run_once_workload*'`.

#![allow(missing_docs)] // criterion_group! generates an undocumented function

use criterion::{black_box, criterion_group, Criterion, Throughput};
use krecords_arrow::{Column, Options, RecordBatches};
use krecords_codec::read::Entries;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};

const RECORDS: usize = 1000;
const BATCHES: usize = 100;

fn segment(codec: Compression) -> Vec<u8> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut out = Vec::new();
    for batch in 0..BATCHES {
        let mut b = V2Builder::new((batch * RECORDS) as i64).compression(codec, None);
        for i in 0..RECORDS {
            let value: Vec<u8> = (0..100)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    b'a' + (seed % 26) as u8
                })
                .collect();
            let key = format!("key-{i}");
            b.append(&NewRecord::new(
                1_714_000_000_000 + i as i64,
                Some(key.as_bytes()),
                Some(&value),
            ))
            .unwrap();
        }
        b.finish_into(&mut out).unwrap();
    }
    out
}

/// The codec's plain decode: every record checked, its key and value touched.
fn decode(bytes: &[u8], scratch: &mut Vec<u8>) -> usize {
    let mut sum = 0usize;
    for batch in Entries::new(bytes) {
        let batch = batch.unwrap();
        for r in batch
            .checked_records(scratch, DEFAULT_DECOMPRESS_LIMIT)
            .unwrap()
        {
            let r = r.unwrap();
            sum += r.key().map_or(0, <[u8]>::len) + r.value().map_or(0, <[u8]>::len);
        }
    }
    sum
}

/// Records to Arrow record batches of `columns`; returns the rows.
fn to_arrow(bytes: &[u8], columns: &[Column]) -> usize {
    let options = Options {
        columns: columns.to_vec(),
        ..Options::default()
    };
    RecordBatches::new(Entries::new(bytes), "bench", 0, options)
        .map(|b| black_box(b.unwrap()).num_rows())
        .sum()
}

/// The workloads: a name and the columns built (`None`: the plain decode).
const WORKLOADS: &[(&str, Option<&[Column]>)] = &[
    ("decode", None),
    ("arrow_all", Some(&Column::ALL)),
    ("arrow_key_value", Some(&[Column::Key, Column::Value])),
    (
        "arrow_offset_timestamp",
        Some(&[Column::Offset, Column::Timestamp]),
    ),
    (
        "arrow_entry_columns",
        Some(&[
            Column::Topic,
            Column::Partition,
            Column::TimestampType,
            Column::ProducerId,
            Column::ProducerEpoch,
            Column::IsTransactional,
            Column::BatchOffset,
            Column::Magic,
            Column::Compression,
        ]),
    ),
    ("arrow_headers", Some(&[Column::Headers])),
    ("arrow_count", Some(&[])),
];

/// Runs one workload over `bytes`; returns what it counted (bytes or rows).
fn run(bytes: &[u8], columns: Option<&[Column]>, scratch: &mut Vec<u8>) -> usize {
    match columns {
        None => decode(bytes, scratch),
        Some(columns) => to_arrow(bytes, columns),
    }
}

/// One workload once, for an instruction count (callgrind collects inside this function only).
#[inline(never)]
fn run_once_workload(bytes: &[u8], columns: Option<&[Column]>) -> usize {
    run(bytes, columns, &mut Vec::new())
}

fn bench(c: &mut Criterion) {
    for codec in [Compression::None, Compression::Lz4] {
        let bytes = segment(codec);
        let mut g = c.benchmark_group(format!("records_to_arrow_100B_{codec}"));
        g.throughput(Throughput::Elements((RECORDS * BATCHES) as u64));
        let mut scratch = Vec::new();
        for &(name, columns) in WORKLOADS {
            g.bench_function(name, |b| {
                b.iter(|| run(black_box(&bytes), columns, &mut scratch))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(spec) = std::env::var("ARROW_BENCH_ONCE") {
        let (codec, name) = spec
            .split_once(':')
            .expect("ARROW_BENCH_ONCE=CODEC:WORKLOAD");
        let codec = match codec {
            "none" => Compression::None,
            "lz4" => Compression::Lz4,
            other => panic!("codec {other}: none or lz4"),
        };
        let &(_, columns) = WORKLOADS
            .iter()
            .find(|(n, _)| *n == name)
            .expect("a workload of WORKLOADS");
        let bytes = segment(codec);
        println!("{}", run_once_workload(black_box(&bytes), columns));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
