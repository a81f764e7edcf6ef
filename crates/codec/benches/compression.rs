//! Compression throughput: each codec through Kafka's framing (`krecords_codec::compression`)
//! next to the bare codec crate call on the same 1 MiB of record-like data, so the cost of the
//! framing (xerial chunks, LZ4 frame blocks, gzip header/trailer and CRC, zstd streaming) shows.
//!
//! Throughput is in uncompressed bytes for both directions. Run with
//! `cargo bench -p krecords-codec --bench compression`.

#![allow(missing_docs)] // criterion_group! generates an undocumented pub fn

use std::hint::black_box;
use std::io::{Read, Write};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use krecords_codec::compression::{compress, decompress};
use krecords_codec::Compression;
use krecords_testkit::data::json_lines;

fn raw_compress(codec: Compression, data: &[u8]) -> Vec<u8> {
    match codec {
        Compression::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
            enc.write_all(data).unwrap();
            enc.finish().unwrap()
        }
        Compression::Snappy => snap::raw::Encoder::new().compress_vec(data).unwrap(),
        Compression::Lz4 => lz4_flex::block::compress(data),
        Compression::Zstd => zstd::bulk::compress(data, 3).unwrap(),
        Compression::None => data.to_vec(),
    }
}

fn raw_decompress(codec: Compression, packed: &[u8], len: usize) -> Vec<u8> {
    match codec {
        Compression::Gzip => {
            let mut out = Vec::with_capacity(len);
            flate2::read::GzDecoder::new(packed)
                .read_to_end(&mut out)
                .unwrap();
            out
        }
        Compression::Snappy => snap::raw::Decoder::new().decompress_vec(packed).unwrap(),
        Compression::Lz4 => lz4_flex::block::decompress(packed, len).unwrap(),
        Compression::Zstd => zstd::bulk::decompress(packed, len).unwrap(),
        Compression::None => packed.to_vec(),
    }
}

const CODECS: [Compression; 4] = [
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn bench(c: &mut Criterion) {
    let data = json_lines(1 << 20);
    for codec in CODECS {
        let mut framed = Vec::new();
        compress(codec, None, 2, &data, &mut framed).unwrap();
        let raw = raw_compress(codec, &data);
        eprintln!(
            "{codec}: {} -> framed {} bytes ({:.2}x), raw {} bytes",
            data.len(),
            framed.len(),
            data.len() as f64 / framed.len() as f64,
            raw.len()
        );

        let mut group = c.benchmark_group(format!("compress/{codec}"));
        group.throughput(Throughput::Bytes(data.len() as u64));
        let mut out = Vec::with_capacity(framed.len() * 2);
        group.bench_function(BenchmarkId::new("krecords", "1MiB"), |b| {
            b.iter(|| {
                out.clear();
                compress(codec, None, 2, black_box(&data), &mut out).unwrap();
                black_box(out.len())
            })
        });
        group.bench_function(BenchmarkId::new("raw", "1MiB"), |b| {
            b.iter(|| black_box(raw_compress(codec, black_box(&data)).len()))
        });
        group.finish();

        let mut group = c.benchmark_group(format!("decompress/{codec}"));
        group.throughput(Throughput::Bytes(data.len() as u64));
        let mut scratch = Vec::with_capacity(data.len());
        group.bench_function(BenchmarkId::new("krecords", "1MiB"), |b| {
            b.iter(|| {
                scratch.clear();
                decompress(codec, 2, black_box(&framed), 64 << 20, 0, &mut scratch).unwrap();
                black_box(scratch.len())
            })
        });
        group.bench_function(BenchmarkId::new("raw", "1MiB"), |b| {
            b.iter(|| black_box(raw_decompress(codec, black_box(&raw), data.len()).len()))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
