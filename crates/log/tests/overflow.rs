//! Segments whose offsets overflow their indexes' 32-bit relative range (written by brokers
//! before KAFKA-6264): the loader splits them as Kafka's `splitOverflowedSegment` does. Ports
//! of `LogLoaderTest.testRecoveryOfSegmentWithOffsetOverflow`, the crash phases of
//! `testRecoveryAfterCrashDuringSplitPhase1`–`5` (as a crash at every write, sync and rename of
//! the split), and `LogCleanerTest.testSegmentWithOffsetOverflow`.

use crate::util::*;
use krecords_codec::read::Entries;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_log::storage::Storage;
use krecords_log::{AppendOrigin, Log};

const MAX: i64 = i32::MAX as i64;

/// Kafka's `LogTestUtils.initializeLogDirWithOverflowedSegment` sample: batches at `base`,
/// `base + 1 ..= base + 2` and `base + MAX - 1`, each record's key and value its offset as
/// text. Returns the bytes and the offset after the sample.
fn sample(base: i64) -> (Vec<u8>, i64) {
    let mut out = Vec::new();
    for (first, n) in [(base, 1), (base + 1, 2), (base + MAX - 1, 1)] {
        let mut b = V2Builder::new(first);
        for o in first..first + n {
            let t = o.to_string();
            b.append(&NewRecord::new(NOW, Some(t.as_bytes()), Some(t.as_bytes())))
                .unwrap();
        }
        out.extend(b.finish().unwrap());
    }
    (out, base + MAX)
}

/// Three segments, the second holding two samples (so offsets up to `3 * MAX - 1` in a segment
/// based at `MAX`), with empty index files as Kafka's test writes them. Returns every record's
/// value, in order.
fn overflowed_dir(m: &Mem) -> Vec<String> {
    m.storage.create_dir_all(&m.dir).unwrap();
    // Small preallocated indexes keep the many opens of the crash test quick.
    m.storage.put_file(
        &m.path("krec-log.json"),
        br#"{"segment.index.bytes":"4096"}"#,
    );
    let (first, next) = sample(0);
    let (mut second, after) = sample(next);
    let (more, next) = sample(after);
    second.extend(more);
    let (third, _) = sample(next);
    let mut values = Vec::new();
    for (base, bytes) in [(0, &first), (MAX, &second), (3 * MAX, &third)] {
        m.storage.put_file(&m.path(&seg(base, ".log")), bytes);
        m.storage.put_file(&m.path(&seg(base, ".index")), b"");
        m.storage.put_file(&m.path(&seg(base, ".timeindex")), b"");
        values.extend(values_of(bytes));
    }
    values
}

fn values_of(bytes: &[u8]) -> Vec<String> {
    records_of(bytes)
        .into_iter()
        .map(|s| String::from_utf8(s.value).unwrap())
        .collect()
}

/// Every value the log serves, read from its start.
fn values(log: &Log) -> Vec<String> {
    read_all(log, 1 << 20)
        .into_iter()
        .map(|s| String::from_utf8(s.value).unwrap())
        .collect()
}

/// Kafka's `LogTestUtils.hasOffsetOverflow`: a batch below its segment's base offset or past
/// `base + MAX`.
fn has_offset_overflow(m: &Mem) -> bool {
    let names = m.storage.list_dir(&m.dir).unwrap();
    names.iter().any(|n| {
        let Some(base) = n.strip_suffix(".log").and_then(|b| b.parse::<i64>().ok()) else {
            return false;
        };
        let bytes = m.file(n).unwrap();
        Entries::new(&bytes).any(|b| {
            let b = b.unwrap();
            b.first_offset().unwrap() < base || b.last_offset() > base + MAX
        })
    })
}

/// The split segments: the overflowed one keeps its base and takes batches up to `2 * MAX`
/// (relative offset `MAX` still fits), the rest starts at the next batch's base.
const SPLIT_BASES: [i64; 4] = [0, MAX, 2 * MAX + 1, 3 * MAX];

#[test]
fn test_recovery_of_segment_with_offset_overflow() {
    let m = mem();
    let expected = overflowed_dir(&m);
    assert!(has_offset_overflow(&m));
    let log = m.open();
    assert_eq!(segment_bases(&log), SPLIT_BASES);
    assert_eq!(
        log.recovery_info().splits.len(),
        1,
        "{:?}",
        log.recovery_info()
    );
    assert_eq!(values(&log), expected);
    assert!(!has_offset_overflow(&m));
    assert_no_swap_leftovers(&m, "after the split");
    log.verify_indexes().unwrap();
    // Reads find the batches past the old segment's range through the new segments' indexes.
    let r = log.read(2 * MAX + 1, 1 << 20).unwrap();
    assert_eq!(
        values_of(&r.bytes)[..2],
        [(2 * MAX + 1).to_string(), (2 * MAX + 2).to_string()]
    );
    log.close().unwrap();
    // Nothing is left to split.
    let log = m.open();
    assert!(log.recovery_info().splits.is_empty());
    assert_eq!(segment_bases(&log), SPLIT_BASES);
    assert_eq!(values(&log), expected);
}

/// After a clean shutdown nothing is scanned, but the overflow is still found and split (Kafka
/// finds it only when its cleaner or a reader trips over it).
#[test]
fn a_cleanly_closed_log_with_an_overflowed_segment_is_split_on_open() {
    let m = mem();
    let expected = overflowed_dir(&m);
    m.storage.put_file(&m.path("krec-clean-shutdown"), b"");
    let log = m.open();
    assert!(log.recovery_info().clean_shutdown);
    assert_eq!(segment_bases(&log), SPLIT_BASES);
    assert_eq!(values(&log), expected);
    assert!(!has_offset_overflow(&m));
}

/// A read-only open serves the split segments and changes nothing in the directory.
#[test]
fn a_read_only_open_splits_in_memory_only() {
    let m = mem();
    let expected = overflowed_dir(&m);
    let before = m.snapshot();
    let log = Log::open_read_only_with(&m.dir, m.env.clone()).unwrap();
    assert_eq!(segment_bases(&log), SPLIT_BASES);
    assert_eq!(values(&log), expected);
    drop(log);
    assert_eq!(m.snapshot(), before);
}

/// A crash at every write, sync and rename of the split (Kafka's five phases and every step
/// between them), both as a power cut (what was not synced is lost) and as a killed process
/// (everything done so far stays, renames in any state): the next open finishes or redoes it,
/// and the log holds every record once.
#[test]
fn test_recovery_after_crash_during_split() {
    let reference = mem();
    let expected = overflowed_dir(&reference);
    let (w0, s0, r0) = (
        reference.storage.write_count(),
        reference.storage.sync_count(),
        reference.storage.rename_count(),
    );
    drop(reference.open());
    let writes = reference.storage.write_count() - w0;
    let syncs = reference.storage.sync_count() - s0;
    let renames = reference.storage.rename_count() - r0;
    assert!(
        writes > 3 && syncs > 3 && renames > 6,
        "{writes} {syncs} {renames}"
    );
    let mut failed = 0;
    let faults = [("write", writes), ("sync", syncs), ("rename", renames)];
    for (power_cut, (kind, count)) in [false, true]
        .into_iter()
        .flat_map(|p| faults.into_iter().map(move |f| (p, f)))
    {
        for n in 1..=count {
            let m = mem();
            overflowed_dir(&m);
            match kind {
                "write" => m.storage.fail_write_after(n),
                "sync" => m.storage.fail_sync_after(n),
                _ => m.storage.fail_rename_after(n),
            }
            let r = Log::open_with(&m.dir, m.env.clone());
            m.storage.clear_faults();
            failed += usize::from(r.is_err());
            drop(r);
            if power_cut {
                m.storage.crash();
            }
            let log = m.open();
            let what = format!("{kind} {n} of {count}, power cut {power_cut}");
            assert_eq!(values(&log), expected, "{what}");
            assert_eq!(segment_bases(&log), SPLIT_BASES, "{what}");
            assert!(!has_offset_overflow(&m), "{what}");
            assert_no_swap_leftovers(&m, &what);
            log.verify_indexes()
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        }
    }
    assert!(failed > 0);
}

/// Kafka's `testSegmentWithOffsetOverflow`: a log with an overflowed segment is cleaned (Kafka
/// splits it when its cleaner trips over it and retries; here the loader already has), every
/// record survives that a key overwrite does not replace, and no segment overflows afterwards.
#[test]
fn test_segment_with_offset_overflow() {
    let m = mem();
    let mut expected = overflowed_dir(&m);
    m.storage.put_file(
        &m.path("krec-log.json"),
        br#"{"cleanup.policy":"compact","segment.index.bytes":"4096"}"#,
    );
    let mut log = m.open();
    // Overwrite the keys of the first two records.
    let end = log.log_end_offset();
    let mut b = V2Builder::new(0);
    for k in ["0", "1"] {
        b.append(&NewRecord::new(NOW, Some(k.as_bytes()), Some(b"new")))
            .unwrap();
    }
    log.append(&b.finish().unwrap(), AppendOrigin::Client)
        .unwrap();
    log.roll().unwrap();
    let info = log.compact_now(NOW).unwrap();
    assert!(info.segments_cleaned >= 4, "{info:?}");
    expected.drain(..2);
    expected.extend(["new".to_string(), "new".to_string()]);
    assert_eq!(values(&log), expected);
    assert!(log.log_end_offset() > end);
    assert!(!has_offset_overflow(&m));
    log.verify_indexes().unwrap();
}
