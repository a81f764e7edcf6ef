//! Kafka's own tools on our files, and our readers on Kafka's. Needs the Kafka jars: set
//! `KAFKA_CLASSPATH` to a Java classpath holding `org.apache.kafka.tools.DumpLogSegments`,
//! Kafka's storage classes and their dependencies (`interop/java/target/lib/*` after the interop
//! Maven build; checked with Kafka 4.4.0), then run
//! `cargo test -p krecords-log --test integration interop -- --ignored`. The reverse check
//! also needs `jshell` (JDK 17+).

use crate::util::*;
use krecords_log::{Log, OffsetSpec};
use std::process::Command;

fn dump_log(classpath: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new("java")
        .args(["-cp", classpath, "org.apache.kafka.tools.DumpLogSegments"])
        .args(args)
        .output()
        .expect("run java");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `KAFKA_CLASSPATH`, which these tests need.
fn kafka_classpath() -> String {
    std::env::var("KAFKA_CLASSPATH").expect("set KAFKA_CLASSPATH")
}

/// A temporary directory (keep it), the path of a partition directory `topic-0` in it, and the
/// time now.
fn partition_dir() -> (tempfile::TempDir, std::path::PathBuf, i64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("topic-0");
    let now = krecords_log::clock::Clock::now_ms(&krecords_log::clock::SystemClock);
    (dir, path, now)
}

#[test]
#[ignore = "needs the Kafka jars in KAFKA_CLASSPATH"]
fn kafka_dump_log_accepts_our_segments_and_indexes() {
    let classpath = kafka_classpath();
    let (_dir, path, now) = partition_dir();
    let mut log = Log::create(
        &path,
        config(&[
            ("segment.bytes", "2000"),
            ("index.interval.bytes", "100"),
            ("message.format.version", "0.9.0"),
        ]),
    )
    .unwrap();
    let mut cfg = log.config().clone();
    append(&mut log, &legacy(0, -1, &["v0-a", "v0-b"]));
    cfg.set("message.format.version", "0.10.2").unwrap();
    log.update_config(cfg.clone()).unwrap();
    append(&mut log, &legacy(1, now - 100, &["v1-c"]));
    cfg.set("message.format.version", "3.0").unwrap();
    log.update_config(cfg).unwrap();
    for i in 0..60 {
        append(
            &mut log,
            &v2_ts(&[(now + i, "value-value-value"), (now - i, "other")]),
        );
    }
    let active = log.segment_files().last().unwrap().clone();
    let sealed = log.segment_files()[0].clone();
    assert!(log.segment_files().len() > 2);
    let ts = log.offsets(OffsetSpec::Timestamp(now + 30)).unwrap();
    log.close().unwrap();
    for (l, i, t) in [&sealed, &active] {
        for file in [l, i, t] {
            let (ok, text) = dump_log(
                &classpath,
                &["--files", file.to_str().unwrap(), "--index-sanity-check"],
            );
            assert!(ok, "{text}");
            assert!(
                !text.contains("Exception") && !text.to_lowercase().contains("corrupt"),
                "{text}"
            );
            assert!(!text.contains("Mismatches"), "{text}");
        }
        let (ok, text) = dump_log(
            &classpath,
            &["--files", l.to_str().unwrap(), "--deep-iteration"],
        );
        assert!(ok, "{text}");
        assert!(!text.contains("isValid: false"), "{text}");
        let (ok, text) = dump_log(
            &classpath,
            &["--files", i.to_str().unwrap(), "--verify-index-only"],
        );
        assert!(ok && !text.contains("Mismatches"), "{text}");
        let (ok, text) = dump_log(
            &classpath,
            &["--files", t.to_str().unwrap(), "--verify-index-only"],
        );
        assert!(
            ok && !text.contains("Mismatches") && !text.contains("error"),
            "{text}"
        );
    }
    assert_eq!(ts.timestamp, Some(now + 30));
}

#[test]
#[ignore = "needs the Kafka jars in KAFKA_CLASSPATH"]
fn kafka_dump_log_reads_our_txnindex_and_snapshots() {
    let classpath = kafka_classpath();
    let (_dir, path, now) = partition_dir();
    let mut log = Log::create(&path, config(&[])).unwrap();
    let batch = |pid: i64, seq: i32, txn: bool, v: &str| {
        let mut b = krecords_codec::write::V2Builder::new(0)
            .producer(pid, 3, seq)
            .transactional(txn);
        b.append(&krecords_codec::write::NewRecord::new(
            now,
            None,
            Some(v.as_bytes()),
        ))
        .unwrap();
        b.finish().unwrap()
    };
    append(&mut log, &batch(1000, 0, true, "p1"));
    append(&mut log, &batch(2000, 0, true, "p2"));
    log.append_end_txn(1000, 3, 7, false, now).unwrap();
    log.roll().unwrap();
    append(&mut log, &batch(2000, 1, true, "p2b"));
    log.append_end_txn(2000, 3, 7, false, now).unwrap();
    append(&mut log, &batch(3000, 41, false, "idem"));
    log.close().unwrap();
    let file = |name: &str| path.join(name).to_str().unwrap().to_owned();
    let dump = |name: &str, extra: &[&str]| {
        let f = file(name);
        let mut args = vec!["--files", f.as_str()];
        args.extend_from_slice(extra);
        let (ok, text) = dump_log(&classpath, &args);
        assert!(ok && !text.contains("Exception"), "{text}");
        text
    };
    // Kafka's dump of `name` (with `extra` options) has each of `lines`.
    let dump_has = |name: &str, extra: &[&str], lines: &[&str]| {
        let text = dump(name, extra);
        for line in lines {
            assert!(text.contains(line), "{line}: {text}");
        }
        text
    };
    // The aborted transactions, each in the segment of its marker.
    dump_has(
        &seg(0, ".txnindex"),
        &[],
        &["version: 0 producerId: 1000 firstOffset: 0 lastOffset: 2 lastStableOffset: 1"],
    );
    dump_has(
        &seg(3, ".txnindex"),
        &[],
        &["version: 0 producerId: 2000 firstOffset: 1 lastOffset: 4 lastStableOffset: 5"],
    );
    // The snapshot of the roll (producer 2000 mid-transaction) and of the clean shutdown.
    dump_has(
        &seg(3, ".snapshot"),
        &[],
        &[
            "producerId: 1000 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: OptionalLong.empty",
            "producerId: 2000 producerEpoch: 3 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong[1]",
        ],
    );
    dump_has(
        &seg(6, ".snapshot"),
        &[],
        &[
            "producerId: 3000 producerEpoch: 3 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty",
            "firstSequence: 41 lastSequence: 41 lastOffset: 5 offsetDelta: 0",
        ],
    );
    // The marker batch as Kafka decodes it.
    let text = dump_has(
        &seg(3, ".log"),
        &["--deep-iteration"],
        &["isControl: true", "endTxnMarker: ABORT coordinatorEpoch: 7"],
    );
    assert!(!text.contains("isValid: false"), "{text}");
}

/// Kafka's own `ProducerStateManager.takeSnapshot` and `TransactionIndex.append` (through
/// `jshell`; `addBatch` is package-private, hence the reflection) write files our readers parse.
#[test]
#[ignore = "needs the Kafka jars in KAFKA_CLASSPATH and jshell"]
fn we_read_kafkas_txnindex_and_snapshots() {
    use krecords_log::producer_state::{parse_snapshot, ProducerSnapshotEntry};
    use krecords_log::transaction::{parse_txn_index, AbortedTxn};
    let classpath = kafka_classpath();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("write.jsh");
    std::fs::write(
        &script,
        r#"
import org.apache.kafka.storage.internals.log.*;
import org.apache.kafka.common.message.AbortedTxn;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import java.io.File;
import java.util.*;
var dir = new File(System.getProperty("out"));
var psm = new ProducerStateManager(new TopicPartition("t", 0), dir, 60000,
    new ProducerStateManagerConfig(86400000, false), Time.SYSTEM);
var addBatch = ProducerStateEntry.class.getDeclaredMethod("addBatch", short.class, int.class,
    long.class, int.class, long.class);
addBatch.setAccessible(true);
var a = new ProducerStateEntry(1000L, (short) 3, 7, 1714000000000L, OptionalLong.empty());
addBatch.invoke(a, (short) 3, 12, 40L, 2, 1714000000001L);
psm.loadProducerEntry(a);
var b = new ProducerStateEntry(2000L, (short) 0, -1, 1714000000002L, OptionalLong.of(41L));
addBatch.invoke(b, (short) 0, Integer.MAX_VALUE, 41L, 0, 1714000000002L);
psm.loadProducerEntry(b);
psm.loadProducerEntry(new ProducerStateEntry(3000L, (short) 9, 4, 1714000000003L, OptionalLong.empty()));
psm.updateMapEndOffset(42L);
psm.takeSnapshot();
var idx = new TransactionIndex(30L, new File(dir, "00000000000000000030.txnindex"));
idx.append(new AbortedTxn().setProducerId(1000L).setFirstOffset(20L).setLastOffset(35L).setLastStableOffset(36L));
idx.append(new AbortedTxn().setProducerId(2000L).setFirstOffset(25L).setLastOffset(39L).setLastStableOffset(41L));
idx.close();
/exit
"#,
    )
    .unwrap();
    let out = Command::new("jshell")
        .arg("--class-path")
        .arg(&classpath)
        .arg(format!("-R-Dout={}", dir.path().display()))
        .arg(&script)
        .output()
        .expect("run jshell");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snapshot = dir.path().join(seg(42, ".snapshot"));
    let bytes = std::fs::read(&snapshot).expect("Kafka wrote the snapshot");
    let mut entries = parse_snapshot(&snapshot, &bytes).unwrap();
    entries.sort_by_key(|e| e.producer_id);
    let entry = |producer_id,
                 producer_epoch,
                 last_sequence,
                 last_offset,
                 offset_delta,
                 timestamp,
                 coordinator_epoch,
                 current_txn_first_offset| ProducerSnapshotEntry {
        producer_id,
        producer_epoch,
        last_sequence,
        last_offset,
        offset_delta,
        timestamp,
        coordinator_epoch,
        current_txn_first_offset,
    };
    assert_eq!(
        entries,
        [
            entry(1000, 3, 12, 40, 2, 1_714_000_000_001, 7, -1),
            entry(2000, 0, i32::MAX, 41, 0, 1_714_000_000_002, -1, 41),
            entry(3000, 9, -1, -1, 0, 1_714_000_000_003, 4, -1),
        ]
    );
    let index = dir.path().join(seg(30, ".txnindex"));
    let bytes = std::fs::read(&index).unwrap();
    assert_eq!(
        parse_txn_index(&index, &bytes).unwrap(),
        [
            AbortedTxn {
                producer_id: 1000,
                first_offset: 20,
                last_offset: 35,
                last_stable_offset: 36
            },
            AbortedTxn {
                producer_id: 2000,
                first_offset: 25,
                last_offset: 39,
                last_stable_offset: 41
            },
        ]
    );
}
