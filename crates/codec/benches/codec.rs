//! Decode and encode throughput of v2 batches: 1000-record batches with 100-byte values (the
//! chapter's example), CRC checked, every record's key and value touched.
//!
//! Run: `cargo bench -p krecords-codec --bench codec`.

#![allow(missing_docs)] // criterion_group! generates an undocumented function

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use krecords_codec::read::Entries;
use krecords_codec::write::{LegacyBuilder, Record, V2Builder};

const RECORDS: usize = 1000;
const BATCHES: usize = 16;

fn values(size: usize) -> Vec<Vec<u8>> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    (0..RECORDS)
        .map(|_| {
            (0..size)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    b'a' + (seed % 26) as u8
                })
                .collect()
        })
        .collect()
}

fn build_v2(values: &[Vec<u8>], keys: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for batch in 0..BATCHES {
        let mut b = V2Builder::new((batch * RECORDS) as i64);
        for (i, (k, v)) in keys.iter().zip(values).enumerate() {
            b.append(&Record::new(1_714_000_000_000 + i as i64, Some(k), Some(v)))
                .unwrap();
        }
        b.finish_into(&mut out).unwrap();
    }
    out
}

fn keys() -> Vec<Vec<u8>> {
    (0..RECORDS)
        .map(|i| format!("key-{i}").into_bytes())
        .collect()
}

/// Iterates every record, validating the CRC of each batch; returns a checksum of lengths.
fn decode(bytes: &[u8], scratch: &mut Vec<u8>) -> usize {
    let mut sum = 0usize;
    for batch in Entries::new(bytes) {
        let batch = batch.unwrap();
        assert!(batch.is_crc_valid());
        for r in batch.records(scratch, usize::MAX).unwrap() {
            let r = r.unwrap();
            sum += r.key().map_or(0, <[u8]>::len) + r.value().map_or(0, <[u8]>::len);
        }
    }
    sum
}

fn bench(c: &mut Criterion) {
    let keys = keys();
    for size in [10usize, 100, 10_240] {
        let values = values(size);
        let v2 = build_v2(&values, &keys);
        let mut g = c.benchmark_group(format!("v2_decode_{size}B"));
        g.throughput(Throughput::Bytes(v2.len() as u64));
        let mut scratch = Vec::new();
        g.bench_function("bytes", |b| b.iter(|| decode(black_box(&v2), &mut scratch)));
        g.throughput(Throughput::Elements((RECORDS * BATCHES) as u64));
        g.bench_function("records", |b| {
            b.iter(|| decode(black_box(&v2), &mut scratch))
        });
        g.finish();

        let mut g = c.benchmark_group(format!("v2_encode_{size}B"));
        g.throughput(Throughput::Bytes(v2.len() as u64));
        g.bench_function("bytes", |b| b.iter(|| build_v2(black_box(&values), &keys)));
        g.throughput(Throughput::Elements((RECORDS * BATCHES) as u64));
        g.bench_function("records", |b| {
            b.iter(|| build_v2(black_box(&values), &keys))
        });
        g.finish();
    }

    let values = values(100);
    let mut v1 = Vec::new();
    let mut b = LegacyBuilder::new(1, 0).unwrap();
    for (i, (k, v)) in keys.iter().zip(&values).enumerate() {
        b.append(&Record::new(1_714_000_000_000 + i as i64, Some(k), Some(v)))
            .unwrap();
    }
    b.finish_into(&mut v1).unwrap();
    let mut g = c.benchmark_group("v1_decode_100B");
    g.throughput(Throughput::Bytes(v1.len() as u64));
    let mut scratch = Vec::new();
    g.bench_function("bytes", |b| b.iter(|| decode(black_box(&v1), &mut scratch)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
