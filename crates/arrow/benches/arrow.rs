//! Records to Arrow against the codec's plain decode of the same data: 100 v2 batches of 1000
//! records (100,000 records, 100-byte values, short keys), uncompressed and lz4. `decode` is
//! `checked_records` touching every key and value (the CRC and record checks the builder makes
//! too); `arrow_all` builds every column of the schema, `arrow_key_value` the key and value only,
//! `arrow_count` no column (a row count). Issue 28's target: Arrow at least 0.5 of decode.
//!
//! Run: `cargo bench -p krecords-arrow --bench arrow`.

#![allow(missing_docs)] // criterion_group! generates an undocumented function

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
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

fn bench(c: &mut Criterion) {
    for codec in [Compression::None, Compression::Lz4] {
        let bytes = segment(codec);
        let mut g = c.benchmark_group(format!("records_to_arrow_100B_{codec}"));
        g.throughput(Throughput::Elements((RECORDS * BATCHES) as u64));
        let mut scratch = Vec::new();
        g.bench_function("decode", |b| {
            b.iter(|| decode(black_box(&bytes), &mut scratch))
        });
        g.bench_function("arrow_all", |b| {
            b.iter(|| to_arrow(black_box(&bytes), &Column::ALL))
        });
        g.bench_function("arrow_key_value", |b| {
            b.iter(|| to_arrow(black_box(&bytes), &[Column::Key, Column::Value]))
        });
        g.bench_function("arrow_count", |b| {
            b.iter(|| to_arrow(black_box(&bytes), &[]))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
