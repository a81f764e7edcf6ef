//! Ship a partition directory into a topic, or show what would be shipped.
//!
//! ```sh
//! # No arguments: a partition directory made here (plain, transactional, aborted, compacted
//! # and v1 data), and its plan batch by batch: what a ship would send and why.
//! cargo run -p krecords-ship --example ship_dir
//! # A real job: the directory's committed data into the topic, exactly once (run it again to
//! # see the resume: nothing is shipped twice).
//! cargo run -p krecords-ship --example ship_dir -- /var/kafka/data/orders-0 kafka://localhost:9092/orders
//! ```

use krecords_codec::write::{end_txn_marker, EndTxnBatch, LegacyBuilder, NewRecord, V2Builder};
use krecords_log::transaction::IsolationLevel;
use krecords_log::Log;
use krecords_ship::{plan, ship, Event, PlanOptions, ShipOptions, Sources, Target};
use std::error::Error;
use std::ops::ControlFlow;
use std::path::Path;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            let tmp = tempfile::tempdir()?;
            let dir = tmp.path().join("demo-0");
            write_demo_partition(&dir)?;
            print_plan(&dir)
        }
        [dir, url] => ship_to(dir, url),
        _ => Err("usage: ship_dir [DIR kafka://HOST:PORT/TOPIC[/PARTITION]]".into()),
    }
}

/// What shipping `dir` would send: its committed data planned fetch by fetch.
fn print_plan(dir: &Path) -> Result<(), Box<dyn Error>> {
    let log = Log::open_read_only(dir)?;
    println!(
        "{}: offsets {}..{}, last stable offset {}",
        dir.display(),
        log.log_start_offset(),
        log.log_end_offset(),
        log.last_stable_offset()
    );
    let mut pos = log.log_start_offset();
    while pos < log.last_stable_offset() {
        let f = log.fetch(pos, 1 << 20, IsolationLevel::ReadCommitted)?;
        if f.bytes.is_empty() {
            break;
        }
        let aborted = f.aborted_transactions.unwrap_or_default();
        let p = plan(&f.bytes, pos, &aborted, &PlanOptions::default())?;
        for b in &p.batches {
            println!(
                "  ship {:?}: source offsets {}..={}, {} records, {} bytes",
                b.kind,
                b.source_first_offset,
                b.source_last_offset,
                b.records,
                b.bytes.len()
            );
        }
        println!(
            "  skipped: {} control batches, {} aborted batches ({} records)",
            p.skipped_control, p.skipped_aborted, p.skipped_aborted_records
        );
        pos = p.next_offset.max(f.next_offset).max(pos + 1);
    }
    Ok(())
}

/// Ships `dir` into the `kafka://` target `url`.
fn ship_to(dir: &str, url: &str) -> Result<(), Box<dyn Error>> {
    let rest = url
        .strip_prefix("kafka://")
        .ok_or("the target must be kafka://HOST:PORT/TOPIC[/PARTITION]")?;
    let (servers, path) = rest.split_once('/').ok_or("no topic in the target")?;
    let (topic, partition) = match path.split_once('/') {
        Some((t, p)) => (t, Some(p.parse()?)),
        None => (path, None),
    };
    let target = Target::new(servers, topic, partition);
    let mut sources = Sources::new(partition);
    sources.add_path(dir)?;
    let report = ship(&target, sources.finish()?, &ShipOptions::default(), |e| {
        if let Event::Progress(p) = e {
            eprintln!("{} records, {} bytes read", p.records, p.bytes);
        }
        ControlFlow::Continue(())
    })?;
    for (p, t) in &report.partitions {
        println!(
            "{}/{p}: {} records in {} transactions ({} batches as is, {} re-batched, {} up-converted)",
            report.target,
            t.records,
            t.transactions,
            t.batches_as_is,
            t.batches_rebatched,
            t.batches_upconverted
        );
    }
    Ok(())
}

/// A partition directory with one segment: v1 messages, a plain v2 batch, an aborted and a
/// committed transaction, and a batch with compaction's offset gaps.
fn write_demo_partition(dir: &Path) -> Result<(), Box<dyn Error>> {
    let ts = 1_714_000_000_000;
    let mut bytes = Vec::new();
    for o in 0..2 {
        let mut b = LegacyBuilder::new(1, o)?;
        b.append(&NewRecord::new(ts, Some(b"k"), Some(b"v1 message")))?;
        bytes.extend(b.finish()?);
    }
    let v2 = |offset: i64, pid: Option<i64>, values: &[&str]| -> Result<Vec<u8>, Box<dyn Error>> {
        let mut b = V2Builder::new(offset);
        if let Some(pid) = pid {
            b = b.producer(pid, 0, 0).transactional(true);
        }
        for v in values {
            b.append(&NewRecord::new(ts, Some(b"k"), Some(v.as_bytes())))?;
        }
        Ok(b.finish()?)
    };
    let marker = |offset: i64, pid: i64, commit: bool| {
        end_txn_marker(&EndTxnBatch {
            base_offset: offset,
            partition_leader_epoch: 0,
            producer_id: pid,
            producer_epoch: 0,
            coordinator_epoch: 0,
            commit,
            timestamp: ts,
        })
    };
    bytes.extend(v2(2, None, &["plain", "batch"])?);
    bytes.extend(v2(4, Some(7), &["aborted"])?);
    bytes.extend(marker(5, 7, false)?);
    bytes.extend(v2(6, Some(8), &["committed", "transaction"])?);
    bytes.extend(marker(8, 8, true)?);
    let mut gaps = V2Builder::new(9);
    for (o, v) in [(9, "kept"), (12, "after a gap")] {
        gaps.append_with_offset(o, &NewRecord::new(ts, Some(b"k"), Some(v.as_bytes())))?;
    }
    bytes.extend(gaps.finish()?);
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("00000000000000000000.log"), bytes)?;
    Ok(())
}
