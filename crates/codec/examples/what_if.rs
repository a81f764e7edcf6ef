//! What `krec stats --what-if` computes, as a library call: a sample partition of v1 messages
//! (made here with `krecords_codec::sample`) measured as it is stored ([`Stats`]) and converted
//! to every magic and codec ([`what_if::run`]), on two threads, with timing.
//!
//! Run: `cargo run --release -p krecords-codec --example what_if`.

use krecords_codec::read::Entries;
use krecords_codec::sample::{Content, Sample, SampleSpec};
use krecords_codec::stats::Stats;
use krecords_codec::what_if::{self, Clock, Config};
use krecords_codec::{Compression, Error, DEFAULT_DECOMPRESS_LIMIT};
use std::time::Duration;

fn main() -> Result<(), Error> {
    // 20,000 JSON events as Kafka 0.10 stored them: v1 messages, uncompressed.
    let mut sample = Sample::new(SampleSpec {
        magic: 1,
        records: 20_000,
        value_size: 120,
        key_size: 12,
        content: Content::Json,
        ..SampleSpec::default()
    });
    let mut segment = Vec::new();
    while let Some(entry) = sample.next_entry() {
        segment.extend_from_slice(entry?.0);
    }

    // The rows: every magic × codec, and gzip at level 1 and zstd at level 19 besides the
    // defaults, batched as `krec convert` batches.
    let targets = what_if::targets(
        &[(Compression::Gzip, 1), (Compression::Zstd, 19)],
        None,
        DEFAULT_DECOMPRESS_LIMIT,
    )?;
    let cfg = Config {
        threads: 2,
        timing: Some(Duration::from_millis(20)),
        clock: Clock::detect(),
        ..Config::sizes_only()
    };
    let mut stats = Stats::new(DEFAULT_DECOMPRESS_LIMIT);
    let report = what_if::run(&targets, &cfg, &mut |_done| {}, |feeder| {
        stats.start_input();
        feeder.start_input("sample");
        for batch in Entries::new(&segment) {
            let batch = batch?;
            let accounted = stats.entry(&batch);
            feeder.entry(&batch, &accounted);
        }
        feeder.end_input();
        Ok::<(), Error>(())
    })?;

    for g in stats.groups() {
        println!(
            "now: magic {} {}: {} records in {} bytes, {:.2} bytes/record",
            g.magic,
            g.compression,
            g.records,
            g.bytes,
            g.bytes_per_record.unwrap_or(0.0)
        );
    }
    println!("\nmagic  codec   level        bytes  vs now  encode MB/s  decode MB/s");
    let speed = |s: Option<f64>| s.map_or_else(|| "-".to_string(), |s| format!("{s:.1}"));
    for r in &report.rows {
        println!(
            "{:>5}  {:<6}  {:>5}  {:>11}  {:>6}  {:>11}  {:>11}",
            r.magic,
            r.compression,
            r.level.map_or_else(|| "-".to_string(), |l| l.to_string()),
            r.bytes.unwrap_or(0),
            r.ratio
                .map_or_else(|| "-".to_string(), |v| format!("{v:.3}")),
            speed(r.encode_mb_s),
            speed(r.decode_mb_s),
        );
    }
    // v1 uncompressed rows copy the input unchanged: the same bytes.
    let v1 = report
        .rows
        .iter()
        .find(|r| r.magic == 1 && r.compression == "none");
    assert_eq!(v1.and_then(|r| r.bytes), Some(segment.len() as u64));
    println!("\n{}", report.info.timing);
    Ok(())
}
