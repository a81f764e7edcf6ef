//! Runs a partition log in a directory laid out as a Kafka broker lays one out: a plain
//! producer, an idempotent one whose retry is recognised, two transactions (one committed, one
//! aborted) ended by the coordinator's markers, reads at both isolation levels, ListOffsets at
//! both, a restart that recovers the state, and an import of the log's batches into a second
//! log with their own offsets.
//!
//! Run: `cargo run -p krecords-log --example partition_log` (it works in a temporary
//! directory).

use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::Compression;
use krecords_log::{AppendOrigin, IsolationLevel, Log, LogConfig, OffsetSpec};

const NOW: i64 = 1_714_000_000_000;

/// A producer's batch: base offset 0, the log assigns the offsets.
fn batch(producer: Option<(i64, i32)>, transactional: bool, values: &[&str]) -> Vec<u8> {
    let mut b = V2Builder::new(0).compression(Compression::Lz4, None);
    if let Some((id, sequence)) = producer {
        b = b.producer(id, 0, sequence).transactional(transactional);
    }
    for v in values {
        b.append(&NewRecord::new(NOW, Some(b"key"), Some(v.as_bytes())))
            .expect("a valid record");
    }
    b.finish().expect("a valid batch")
}

fn main() -> krecords_log::Result<()> {
    let root = tempfile::tempdir().map_err(|e| krecords_log::Error::Io {
        op: "create a temporary directory",
        path: std::env::temp_dir(),
        source: e,
    })?;
    let dir = root.path().join("orders-0");
    let config = LogConfig::from_pairs([("segment.bytes", "4096"), ("cleanup.policy", "delete")])?;
    let mut log = Log::create(&dir, config)?;

    // A plain producer, then an idempotent one (producer id 1) and its retry.
    log.append(&batch(None, false, &["a", "b"]), AppendOrigin::Client)?;
    let first = log.append(&batch(Some((1, 0)), false, &["c"]), AppendOrigin::Client)?;
    let retry = log.append(&batch(Some((1, 0)), false, &["c"]), AppendOrigin::Client)?;
    assert!(retry.duplicate && retry.base_offset == first.base_offset);

    // Two transactions, interleaved: producer 2 commits, producer 3 aborts.
    log.append(&batch(Some((2, 0)), true, &["t2-a"]), AppendOrigin::Client)?;
    log.append(&batch(Some((3, 0)), true, &["t3-a"]), AppendOrigin::Client)?;
    log.append(&batch(Some((2, 1)), true, &["t2-b"]), AppendOrigin::Client)?;
    println!(
        "open transactions: log end {}, last stable offset {}",
        log.log_end_offset(),
        log.last_stable_offset()
    );
    log.append_end_txn(2, 0, 0, true, NOW)?; // commit
    log.append_end_txn(3, 0, 0, false, NOW)?; // abort

    for isolation in [
        IsolationLevel::ReadUncommitted,
        IsolationLevel::ReadCommitted,
    ] {
        let consumed = log.consume(0, 1 << 20, isolation)?;
        let values: Vec<String> = consumed
            .records
            .iter()
            .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
            .collect();
        let latest = log.offsets_at(OffsetSpec::Latest, isolation)?.offset;
        println!("{isolation:?}: {values:?}, latest offset {latest}");
    }
    let fetched = log.fetch(0, 1 << 20, IsolationLevel::ReadCommitted)?;
    println!(
        "read_committed fetch: {} bytes, aborted transactions {:?}",
        fetched.bytes.len(),
        fetched.aborted_transactions
    );

    // Restart: the producer state and the transaction index come back from the files.
    let end = log.log_end_offset();
    log.close()?;
    let log = Log::open(&dir)?;
    assert_eq!(log.log_end_offset(), end);
    println!(
        "reopened: {} segments, log end {end}, files: {:?}",
        log.segment_files().len(),
        std::fs::read_dir(&dir)
            .map(|d| d.filter_map(|e| e.ok()).count())
            .unwrap_or(0)
    );

    // Import: the batches into a second log, offsets their own, bytes unchanged.
    let mut copy = Log::create(root.path().join("orders-copy-0"), LogConfig::default())?;
    let all = log.read(0, usize::MAX >> 1)?;
    copy.append(&all.bytes, AppendOrigin::Import)?;
    assert_eq!(copy.read(0, usize::MAX >> 1)?.bytes, all.bytes);
    assert_eq!(copy.last_stable_offset(), log.last_stable_offset());
    println!(
        "imported {} bytes into a second log, identical",
        all.bytes.len()
    );
    copy.close()?;
    log.close()
}
