//! Decode and encode throughput of v2 batches: 1000-record batches with 100-byte values (the
//! chapter's example), CRC checked, every record's key and value touched. `v2_checked_*`
//! compares, on lz4 and zstd batches, `Batch::records` alone (no CRC check) with
//! `Batch::checked_records` (CRC and record checks, one decompression) and with the pattern it
//! replaces, `validate` then `records` (two decompressions); `crc_only` is the CRC pass that
//! `checked_records` adds.
//!
//! Run: `cargo bench -p krecords-codec --bench codec`.

#![allow(missing_docs)] // criterion_group! generates an undocumented function

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use krecords_codec::read::{Entries, Records};
use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};

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
    build_v2_with(values, keys, Compression::None)
}

fn build_v2_with(values: &[Vec<u8>], keys: &[Vec<u8>], codec: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    for batch in 0..BATCHES {
        let mut b = V2Builder::new((batch * RECORDS) as i64).compression(codec, None);
        for (i, (k, v)) in keys.iter().zip(values).enumerate() {
            b.append(&NewRecord::new(
                1_714_000_000_000 + i as i64,
                Some(k),
                Some(v),
            ))
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
        sum += touch(batch.records(scratch, DEFAULT_DECOMPRESS_LIMIT).unwrap());
    }
    sum
}

/// Reads every record's key and value; returns a checksum of their lengths.
#[inline]
fn touch(records: Records<'_>) -> usize {
    let mut sum = 0usize;
    for r in records {
        let r = r.unwrap();
        sum += r.key().map_or(0, <[u8]>::len) + r.value().map_or(0, <[u8]>::len);
    }
    sum
}

/// How `v2_checked_*` reads each batch.
#[derive(Clone, Copy)]
enum Read {
    /// `records` alone: no CRC check.
    Records,
    /// `checked_records`: CRC and record checks, one decompression.
    Checked,
    /// `validate` then `records`: the same checks, two decompressions.
    ValidateThenRecords,
    /// The CRC alone: what `checked_records` adds to `records`.
    CrcOnly,
}

fn read_all(bytes: &[u8], scratch: &mut Vec<u8>, how: Read) -> usize {
    let mut sum = 0usize;
    for batch in Entries::new(bytes) {
        let batch = batch.unwrap();
        if let Read::CrcOnly = how {
            sum += batch.compute_crc() as usize;
            continue;
        }
        let records = match how {
            Read::Records | Read::CrcOnly => batch.records(scratch, DEFAULT_DECOMPRESS_LIMIT),
            Read::Checked => batch.checked_records(scratch, DEFAULT_DECOMPRESS_LIMIT),
            Read::ValidateThenRecords => {
                batch
                    .validate_with(scratch, DEFAULT_DECOMPRESS_LIMIT)
                    .unwrap();
                batch.records(scratch, DEFAULT_DECOMPRESS_LIMIT)
            }
        };
        sum += touch(records.unwrap());
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
    for codec in [Compression::Lz4, Compression::Zstd] {
        let bytes = build_v2_with(&values, &keys, codec);
        let mut g = c.benchmark_group(format!("v2_checked_{codec}_100B"));
        g.throughput(Throughput::Elements((RECORDS * BATCHES) as u64));
        let mut scratch = Vec::new();
        for (name, how) in [
            ("records", Read::Records),
            ("checked_records", Read::Checked),
            ("validate_then_records", Read::ValidateThenRecords),
            ("crc_only", Read::CrcOnly),
        ] {
            g.bench_function(name, |b| {
                b.iter(|| read_all(black_box(&bytes), &mut scratch, how))
            });
        }
        g.finish();
    }

    let mut v1 = Vec::new();
    let mut b = LegacyBuilder::new(1, 0).unwrap();
    for (i, (k, v)) in keys.iter().zip(&values).enumerate() {
        b.append(&NewRecord::new(
            1_714_000_000_000 + i as i64,
            Some(k),
            Some(v),
        ))
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
