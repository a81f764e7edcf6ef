//! The sample partition of `krec demo`: a topic that lived through Kafka's format upgrades,
//! written by the log engine as a broker would have written it: a log created with
//! `message.format.version` 0.9 (v0 data), upgraded to 0.10 (v1, timestamps), then to 3.0 (v2,
//! with compression, an idempotent producer whose retry the log answers as a duplicate, and two
//! transactions, one committed and one aborted, ended by the coordinator's markers), one segment
//! per format.
//!
//! For synthetic records in bulk, see `krecords_codec::sample`.
//!
//! # Examples
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let p = krecords_log::sample::write_demo_partition(&dir.path().join("orders-0")).unwrap();
//! assert_eq!(p.segments.len(), 3);
//! assert_eq!((p.retry.base_offset, p.retry.last_offset), (10, 19));
//! ```

use crate::{AppendInfo, AppendOrigin, Log, LogConfig, Result};
use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, Header};
use std::path::{Path, PathBuf};

/// Timestamp of the demo's first v1 record, in ms.
pub const T0: i64 = 1_714_000_000_000;

/// The producer id of the demo's committed transaction.
pub const COMMITTED_PID: i64 = 2000;
/// The producer id of the demo's aborted transaction.
pub const ABORTED_PID: i64 = 2001;

/// The demo partition, as written.
#[derive(Debug)]
pub struct DemoPartition {
    /// The `.log` files, oldest first.
    pub segments: Vec<PathBuf>,
    /// What the log answered to the idempotent producer's retry.
    pub retry: AppendInfo,
}

/// Sets `message.format.version`, as an operator upgrading a topic would.
fn upgrade(log: &mut Log, version: &str) -> Result<()> {
    let mut config = log.config().clone();
    config.set("message.format.version", version)?;
    log.update_config(config)
}

/// Appends what a producer sent; the log assigns the offsets.
fn produce(log: &mut Log, bytes: &[u8]) -> Result<AppendInfo> {
    log.append(bytes, AppendOrigin::Client)
}

/// Writes the demo partition into `dir` (a new log) with the log engine.
///
/// # Errors
///
/// The log's errors (a directory that already holds a log, storage errors).
pub fn write_demo_partition(dir: &Path) -> Result<DemoPartition> {
    let value = |i: usize| {
        format!(
            "{{\"order\":{i},\"item\":\"widget-{}\",\"qty\":{}}}",
            i % 7,
            i % 5 + 1
        )
    };
    let key = |i: usize| format!("user-{i}");
    let config = LogConfig::from_pairs([("message.format.version", "0.9.0")])?;
    let mut log = Log::create(dir, config)?;

    // Kafka 0.8/0.9 (v0): no timestamps; two plain messages, then a gzip wrapper of three.
    let mut b = LegacyBuilder::new(0, 0)?;
    for i in 0..2 {
        let (k, v) = (key(i), value(i));
        b.append(&NewRecord::new(-1, Some(k.as_bytes()), Some(v.as_bytes())))?;
    }
    produce(&mut log, &b.finish()?)?;
    let mut b = LegacyBuilder::new(0, 0).and_then(|b| b.compression(Compression::Gzip, None))?;
    for i in 2..5 {
        let (k, v) = (key(i), value(i));
        b.append(&NewRecord::new(-1, Some(k.as_bytes()), Some(v.as_bytes())))?;
    }
    produce(&mut log, &b.finish()?)?;
    log.roll()?;

    // Kafka 0.10 (v1): timestamps.
    upgrade(&mut log, "0.10.2")?;
    let mut b = LegacyBuilder::new(1, 0)?;
    for i in 5..10 {
        let (k, v) = (key(i - 5), value(i));
        b.append(&NewRecord::new(
            T0 + i as i64,
            Some(k.as_bytes()),
            Some(v.as_bytes()),
        ))?;
    }
    produce(&mut log, &b.finish()?)?;
    log.roll()?;

    // Kafka 0.11+ (v2): batches with headers, an idempotent producer and its retry, zstd, and
    // two transactions.
    upgrade(&mut log, "3.0")?;
    let trace = [Header {
        key: b"trace-id",
        value: Some(b"4bf92f35"),
    }];
    let mut b = V2Builder::new(0)
        .compression(Compression::Lz4, None)
        .producer(1000, 0, 0);
    for i in 10..20 {
        let v = value(i);
        b.append(
            &NewRecord::new(T0 + 100 + i as i64, Some(b"user-1"), Some(v.as_bytes()))
                .with_headers(&trace),
        )?;
    }
    let idempotent = b.finish()?;
    produce(&mut log, &idempotent)?;
    // The producer did not hear back and sends the batch again: the log recognises the
    // sequence numbers, answers with the original offsets and writes nothing.
    let retry = produce(&mut log, &idempotent)?;
    let mut b = V2Builder::new(0).compression(Compression::Zstd, None);
    for i in 20..23 {
        let (k, v) = (key(i % 3), value(i));
        b.append(&NewRecord::new(
            T0 + 200 + i as i64,
            Some(k.as_bytes()),
            Some(v.as_bytes()),
        ))?;
    }
    produce(&mut log, &b.finish()?)?;
    // Two transactional producers write interleaved; the coordinator commits the first and
    // aborts the second (COMMIT and ABORT marker batches; the abort goes into the .txnindex).
    for (seq, step) in [(0, "reserve"), (1, "charge")] {
        for pid in [COMMITTED_PID, ABORTED_PID] {
            let mut b = V2Builder::new(0).producer(pid, 0, seq).transactional(true);
            let v = format!("{{\"txn\":{pid},\"step\":\"{step}\"}}");
            b.append(&NewRecord::new(
                T0 + 300 + i64::from(seq),
                Some(b"user-2"),
                Some(v.as_bytes()),
            ))?;
            produce(&mut log, &b.finish()?)?;
        }
    }
    for (pid, commit) in [(COMMITTED_PID, true), (ABORTED_PID, false)] {
        log.append_end_txn(pid, 0, 0, commit, T0 + 310)?;
    }
    let segments = log.segment_files().into_iter().map(|s| s.0).collect();
    log.close()?;
    Ok(DemoPartition { segments, retry })
}
