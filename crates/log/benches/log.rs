//! Log throughput next to the machine's limits, each measured in the same run, on the same bytes
//! and on the same file system (issue 5's benchmarks; issue 8's "log append of pre-built batches
//! at least 80% of raw sequential write").
//!
//! Every group pairs the log with its baseline; the ratio is the `log` line's throughput over the
//! baseline's. Throughput counts the bytes of the uncompressed produce payloads (appends) or of
//! the segment files (reads, recovery).
//!
//! * `append_1MiB`: [`Log::append`] of a pre-built produce payload (one uncompressed v2 batch of
//!   1000 records of ~1 KiB, just under 1 MiB, base offset 0 as a producer sends it; one batch per
//!   append) into a log with the default configuration, so no fsync per append as in Kafka
//!   (`log`), next to `write_all` of the same bytes to a plain file (`raw_write`).
//! * `append_1MiB_flush_each`: the same with `flush.messages=1` (`log_flush_messages_1`), next to
//!   `write_all` + `sync_data` per payload (`raw_write_fdatasync`; the log syncs with
//!   `sync_data` too).
//! * `recompress_<producer>_to_<log>`: appends whose producer codec differs from the log's
//!   `compression.type`, so the broker decompresses, validates and rebuilds every batch (`log`),
//!   next to the codec work alone of that rebuild on the same bytes (`codec`: decompress the
//!   producer's records section, compress it with the log's codec and level). There is no raw
//!   file equivalent.
//! * `read`: [`Log::read`]`(offset, 1 MiB)` paging through a whole log, batches as stored
//!   (`log`), next to sequential 1 MiB `read`s of its segment files into one buffer (`raw_read`).
//! * `recover`: [`Log::recover`] of the same log (every batch parsed and CRC-checked, indexes
//!   rebuilt, closed cleanly) (`log`), next to `raw_read` and `raw_read_crc32c` (the same reads
//!   plus CRC-32C of every byte, which recovery cannot avoid).
//!
//! Appends go to fresh logs and fresh raw files; when a file reaches the append cap, it is
//! dropped and a new one created outside the timed part, so both sides see the same page-cache
//! state. Reads and recovery find the log in the page cache (the run just wrote it): they measure
//! the CPU and copy cost, not the disk.
//!
//! # Sizes and places
//!
//! * `KRECORDS_BENCH_SIZE`: `full` (read/recovery log of 256 MiB, append files capped at
//!   256 MiB), `small` (4 MiB and 16 MiB), or a number of MiB for the read/recovery log. The
//!   default is `full`, except in criterion's test mode (`cargo bench -- --test`,
//!   `cargo test --benches`: each benchmark runs once), where it is `small`. Only the 1 MiB
//!   payload is built up front; the compressed payloads and the read/recovery log are built
//!   when a benchmark that needs them first runs, so a filter skips them.
//! * `KRECORDS_BENCH_DIR`: where the temporary directories go (default: the system temporary
//!   directory); point it at the file system to measure.
//!
//! Run: `cargo bench -p krecords-log --bench log -- --warm-up-time 1 --measurement-time 3`.
//! Smoke (CI): `cargo bench -p krecords-log --bench log -- --test`.

#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::cell::OnceCell;
use std::fs::File;
use std::hint::black_box;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use krecords_codec::compression::{compress, decompress};
use krecords_codec::layout::v2::RECORDS_OFFSET;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::Compression;
use krecords_log::{AppendOrigin, Log, LogConfig};
use krecords_testkit::data::json_lines;
use tempfile::TempDir;

const MIB: u64 = 1 << 20;
/// Records per produce payload.
const RECORDS: usize = 1000;
/// Bytes per `Log::read` and per raw read.
const FETCH_BYTES: usize = 1 << 20;

struct Settings {
    /// Bytes of the log the read and recovery benchmarks use.
    log_bytes: u64,
    /// Largest file an append benchmark grows before starting a fresh one.
    append_cap: u64,
    /// Where temporary directories go.
    dir: PathBuf,
}

fn settings() -> Settings {
    // Criterion's own rule: test mode with `--test`, or without cargo bench's `--bench`.
    let args: Vec<String> = std::env::args().collect();
    let test_mode = args.iter().any(|a| a == "--test") || !args.iter().any(|a| a == "--bench");
    let size = std::env::var("KRECORDS_BENCH_SIZE").ok();
    let (log_mib, cap_mib) = match size.as_deref() {
        Some("small") => (4, 16),
        Some("full") => (256, 256),
        Some(n) => (
            n.parse::<u64>()
                .expect("KRECORDS_BENCH_SIZE: small, full or a number of MiB"),
            256,
        ),
        None if test_mode => (4, 16),
        None => (256, 256),
    };
    let dir = std::env::var_os("KRECORDS_BENCH_DIR").map_or_else(std::env::temp_dir, PathBuf::from);
    Settings {
        log_bytes: log_mib * MIB,
        append_cap: cap_mib * MIB,
        dir,
    }
}

fn tempdir(s: &Settings) -> TempDir {
    tempfile::Builder::new()
        .prefix("krecords-logbench-")
        .tempdir_in(&s.dir)
        .expect("temporary directory")
}

fn config(pairs: &[(&str, &str)]) -> LogConfig {
    LogConfig::from_pairs(pairs.iter().copied()).expect("valid configuration")
}

/// The records of every produce payload: `RECORDS` values of `value_size` bytes cut from one
/// text, timestamped "now" (the log checks CreateTime against its clock).
struct Payloads {
    text: Vec<u8>,
    value_size: usize,
    timestamp: i64,
}

impl Payloads {
    /// Values as large as an uncompressed payload of at most 1 MiB allows (the default
    /// `max.message.bytes` is 1 MiB + 12).
    fn new() -> Self {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock after 1970")
            .as_millis();
        let mut p = Payloads {
            text: json_lines(RECORDS * 1024),
            value_size: 1024,
            timestamp: i64::try_from(now).expect("timestamp fits i64"),
        };
        loop {
            let len = p.batch(Compression::None).len();
            if len as u64 <= MIB {
                return p;
            }
            p.value_size -= (len - MIB as usize).div_ceil(RECORDS);
        }
    }

    /// One v2 batch as a producer sends it (base offset 0).
    fn batch(&self, codec: Compression) -> Vec<u8> {
        let mut b = V2Builder::new(0).compression(codec, None);
        for (i, value) in self.text.chunks_exact(self.value_size).enumerate() {
            let key = format!("key-{i:06}");
            let ts = self.timestamp + (i / 100) as i64;
            b.append(&NewRecord::new(ts, Some(key.as_bytes()), Some(value)))
                .expect("record fits");
        }
        b.finish().expect("batch builds")
    }
}

/// Appends `payload` `iters` times to fresh logs configured by `pairs`; returns the time spent
/// in `Log::append` only.
fn log_appends(
    s: &Settings,
    iters: u64,
    payload: &[u8],
    pairs: &[(&str, &str)],
    rebuilt: bool,
) -> Duration {
    let mut elapsed = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let tmp = tempdir(s);
        let mut log = Log::create(tmp.path().join("bench-0"), config(pairs)).expect("create");
        let mut size = 0u64;
        let start = Instant::now();
        while left > 0 && size < s.append_cap {
            let info = log
                .append(black_box(payload), AppendOrigin::Client)
                .expect("append");
            assert_eq!(info.rebuilt, rebuilt);
            size += info.size_bytes as u64;
            left -= 1;
        }
        elapsed += start.elapsed();
        assert_eq!(log.log_end_offset() % RECORDS as i64, 0);
        // Dropped unclosed, as after a crash; the directory goes with `tmp`.
        drop(log);
    }
    elapsed
}

/// `write_all` of `payload` `iters` times to fresh files (with `sync_data` after each when
/// `sync`); returns the time spent writing (and syncing).
fn raw_writes(s: &Settings, iters: u64, payload: &[u8], sync: bool) -> Duration {
    let mut elapsed = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let tmp = tempdir(s);
        let mut f = File::create(tmp.path().join("00000000000000000000.log")).expect("create");
        let mut size = 0u64;
        let start = Instant::now();
        while left > 0 && size < s.append_cap {
            f.write_all(black_box(payload)).expect("write");
            if sync {
                f.sync_data().expect("sync");
            }
            size += payload.len() as u64;
            left -= 1;
        }
        elapsed += start.elapsed();
    }
    elapsed
}

/// A log of about `Settings::log_bytes` built through `Log::append` and closed cleanly.
struct Fixture {
    _tmp: TempDir,
    dir: PathBuf,
    /// The `.log` files, oldest first.
    segments: Vec<PathBuf>,
    end_offset: i64,
}

impl Fixture {
    fn build(s: &Settings, payload: &[u8]) -> Self {
        let tmp = tempdir(s);
        let dir = tmp.path().join("bench-0");
        let mut log = Log::create(&dir, LogConfig::default()).expect("create");
        let mut bytes = 0u64;
        while bytes < s.log_bytes {
            bytes += log
                .append(payload, AppendOrigin::Client)
                .expect("append")
                .size_bytes as u64;
        }
        let end_offset = log.log_end_offset();
        let segments: Vec<PathBuf> = log.segment_files().into_iter().map(|f| f.0).collect();
        log.close().expect("close");
        let on_disk: u64 = segments
            .iter()
            .map(|p| std::fs::metadata(p).expect("segment").len())
            .sum();
        assert_eq!(on_disk, bytes);
        Fixture {
            _tmp: tmp,
            dir,
            segments,
            end_offset,
        }
    }
}

/// Reads the whole log in `FETCH_BYTES` pages; returns the bytes read.
fn log_read_all(log: &Log) -> u64 {
    let mut offset = log.log_start_offset();
    let end = log.log_end_offset();
    let mut bytes = 0u64;
    while offset < end {
        let r = log.read(offset, FETCH_BYTES).expect("read");
        bytes += black_box(&r.bytes).len() as u64;
        offset = r.next_offset;
    }
    bytes
}

/// Reads `files` sequentially into `buf` (CRC-32C of every chunk when `crc`); returns the bytes
/// read and the checksums combined.
fn raw_read(files: &[PathBuf], buf: &mut [u8], crc: bool) -> (u64, u32) {
    let mut bytes = 0u64;
    let mut sum = 0u32;
    for path in files {
        let mut f = File::open(path).expect("open");
        loop {
            let n = f.read(buf).expect("read");
            if n == 0 {
                break;
            }
            if crc {
                sum ^= krecords_codec::crc::crc32c(&buf[..n]);
            }
            bytes += n as u64;
        }
    }
    (black_box(bytes), sum)
}

/// The codec work of the broker's rebuild: decompress the producer's records section (when
/// compressed) and compress the records with the log's codec and level.
fn recode(
    from: Compression,
    to: (Compression, Option<i32>),
    records: &[u8],
    plain: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> usize {
    out.clear();
    if from == Compression::None {
        compress(to.0, to.1, 2, records, out).expect("compress");
    } else {
        plain.clear();
        decompress(from, 2, records, usize::MAX, 0, plain).expect("decompress");
        compress(to.0, to.1, 2, plain, out).expect("compress");
    }
    out.len()
}

fn bench(c: &mut Criterion) {
    let s = settings();
    let payloads = OnceCell::new();
    let payloads = || payloads.get_or_init(Payloads::new);
    let plain = OnceCell::new();
    let plain = || plain.get_or_init(|| payloads().batch(Compression::None));

    // 1. Appends of pre-built payloads next to raw writes.
    let mut g = c.benchmark_group("append_1MiB");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(plain().len() as u64));
    g.bench_function("log", |b| {
        b.iter_custom(|iters| log_appends(&s, iters, plain(), &[], false));
    });
    g.bench_function("raw_write", |b| {
        b.iter_custom(|iters| raw_writes(&s, iters, plain(), false));
    });
    g.finish();

    let mut g = c.benchmark_group("append_1MiB_flush_each");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(plain().len() as u64));
    g.bench_function("log_flush_messages_1", |b| {
        b.iter_custom(|iters| log_appends(&s, iters, plain(), &[("flush.messages", "1")], false));
    });
    g.bench_function("raw_write_fdatasync", |b| {
        b.iter_custom(|iters| raw_writes(&s, iters, plain(), true));
    });
    g.finish();

    // 2. Appends the broker recompresses, next to the codec work of the rebuild.
    for (from, to, to_name) in [
        (Compression::Lz4, Compression::Zstd, "zstd"),
        (Compression::None, Compression::Zstd, "zstd"),
        (Compression::None, Compression::Gzip, "gzip"),
    ] {
        let pairs = [("compression.type", to_name)];
        let payload = OnceCell::new();
        let payload = || payload.get_or_init(|| payloads().batch(from));
        let mut g = c.benchmark_group(format!("recompress_{from}_to_{to}"));
        g.sample_size(10);
        g.throughput(Throughput::Bytes(plain().len() as u64));
        g.bench_function("log", |b| {
            b.iter_custom(|iters| log_appends(&s, iters, payload(), &pairs, true));
        });
        let target = config(&pairs).target_compression(from);
        let (mut scratch, mut out) = (Vec::new(), Vec::new());
        g.bench_function("codec", |b| {
            let records = &payload()[RECORDS_OFFSET..];
            b.iter(|| recode(from, target, black_box(records), &mut scratch, &mut out));
        });
        g.finish();
    }

    // 3. Reads and 4. recovery of one log, built on first use. Its size is known beforehand
    // (whole payloads, stored as sent), so a filtered-out group does not build it.
    let fixture = OnceCell::new();
    let fixture = || fixture.get_or_init(|| Fixture::build(&s, plain()));
    let log_bytes = s.log_bytes.div_ceil(plain().len() as u64) * plain().len() as u64;
    let mut buf = vec![0u8; FETCH_BYTES];

    let read_log = OnceCell::new();
    let reader = || read_log.get_or_init(|| Log::open(&fixture().dir).expect("open"));
    let mut g = c.benchmark_group("read");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(log_bytes));
    g.bench_function("log", |b| {
        b.iter(|| assert_eq!(log_read_all(reader()), log_bytes));
    });
    g.bench_function("raw_read", |b| {
        b.iter(|| assert_eq!(raw_read(&fixture().segments, &mut buf, false).0, log_bytes));
    });
    g.finish();
    drop(read_log); // `recover` needs the directory to itself

    let mut g = c.benchmark_group("recover");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(log_bytes));
    g.bench_function("log", |b| {
        b.iter(|| {
            let info = Log::recover(&fixture().dir).expect("recover");
            assert_eq!(
                (info.next_offset, info.truncated_bytes),
                (fixture().end_offset, 0)
            );
        });
    });
    g.bench_function("raw_read", |b| {
        b.iter(|| assert_eq!(raw_read(&fixture().segments, &mut buf, false).0, log_bytes));
    });
    g.bench_function("raw_read_crc32c", |b| {
        b.iter(|| raw_read(&fixture().segments, &mut buf, true));
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
