//! Log recovery over an arbitrary directory image, in the log's in-memory storage
//! (`storage::MemStorage`).
//!
//! Input: a sequence of files, each `[tag: u8][len: u16 LE][len bytes]` (a short last file takes
//! what is left). `tag & 0x0f` picks the file kind (see `KINDS`: segment `.log`, `.index`,
//! `.timeindex`, `.txnindex`, `.snapshot`, `leader-epoch-checkpoint`, `krec-log.json`, the clean
//! shutdown marker, the recovery point, leftover `.deleted` / `.cleaned` / `.tmp` files),
//! `(tag >> 4) & 7` the base offset of segment files from `BASES`. A later file of the same name
//! replaces an earlier one. An image without `krec-log.json` gets one setting only
//! `segment.index.bytes` to 4096 (fast), unless bit 7 of its first tag is set. The offset index and time index readers are private to
//! `krecords-log`: this target is how they are fuzzed.
//!
//! Asserts: `Log::open_with` never panics, and neither do reads of what it opened. When its
//! recovery scanned every segment (no clean shutdown marker, nothing below a recovery point
//! trusted), and always after `Log::recover_with` of the same image: the indexes pass
//! `verify_indexes`, reading (`read`, `consume` read_uncommitted and read_committed) from the
//! log start offset to the high watermark never fails, entries come back with increasing offsets
//! below the high watermark, every non-empty page moves forward (an empty page below the high watermark, a gap left by empty
//! segments, ends the read); `close` succeeds and the log reopens with
//! the same start and end offsets and consistent indexes. Files trusted after a clean shutdown
//! (as Kafka trusts them) may make reads fail, but not panic.
#![no_main]

use krecords_codec::read::Entries;
use krecords_log::clock::ManualClock;
use krecords_log::files::{self, file_name};
use krecords_log::storage::{MemStorage, Storage};
use krecords_log::{Env, IsolationLevel, Log};
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::Arc;

const NOW: i64 = 1_714_000_000_000;
const BASES: [i64; 8] = [0, 1, 2, 3, 5, 10, 100, 1000];
const DIR: &str = "/logs/t-0";

fn name(tag: u8) -> Option<String> {
    let base = BASES[usize::from((tag >> 4) & 7)];
    let seg = |suffix: &str| Some(file_name(base, suffix));
    match tag & 0x0f {
        0 => seg(files::LOG_SUFFIX),
        1 => seg(files::INDEX_SUFFIX),
        2 => seg(files::TIME_INDEX_SUFFIX),
        3 => seg(files::TXN_INDEX_SUFFIX),
        4 => seg(files::SNAPSHOT_SUFFIX),
        5 => Some(files::LEADER_EPOCH_CHECKPOINT_FILE.to_string()),
        6 => Some(files::CONFIG_FILE.to_string()),
        7 => Some(files::CLEAN_SHUTDOWN_FILE.to_string()),
        8 => Some(files::RECOVERY_POINT_FILE.to_string()),
        9 => Some(file_name(base, files::LOG_SUFFIX) + files::DELETED_SUFFIX),
        10 => Some(file_name(base, files::LOG_SUFFIX) + files::CLEANED_SUFFIX),
        11 => Some(file_name(base, files::INDEX_SUFFIX) + files::TMP_SUFFIX),
        _ => None,
    }
}

/// Reads everything from the log start to the high watermark. `strict`: every segment was
/// scanned by recovery, so nothing may fail; otherwise (files trusted after a clean shutdown or
/// below the recovery point, as Kafka trusts them) errors are allowed, panics are not.
fn read_all(log: &Log, strict: bool) {
    let start = log.log_start_offset();
    let hw = log.high_watermark();
    assert!(
        start <= hw,
        "log start {start} past the high watermark {hw}"
    );
    let mut offset = start;
    let mut last = None::<i64>;
    let mut pages = 0;
    while offset < hw {
        pages += 1;
        assert!(pages <= 100_000, "read does not terminate");
        let r = match log.read(offset, 4096) {
            Ok(r) => r,
            Err(e) if !strict => {
                let _ = e.to_string();
                return;
            }
            Err(e) => panic!("read at {offset} (start {start}, hw {hw}) after recovery: {e}"),
        };
        // Nothing from `offset` on: legal below the high watermark when the segments leave a
        // gap (empty segments, or a compacted tail), as Kafka returns no records there.
        if r.bytes.is_empty() || (!strict && r.next_offset <= offset) {
            return;
        }
        assert!(
            r.next_offset > offset,
            "read at {offset} did not move forward"
        );
        assert!(r.next_offset <= hw, "read past the high watermark");
        for entry in Entries::new(&r.bytes) {
            let entry = match entry {
                Ok(e) => e,
                Err(e) if !strict => {
                    let _ = e.to_string();
                    break;
                }
                Err(e) => panic!("read returned a bad entry after recovery: {e}"),
            };
            let l = entry.last_offset();
            if strict {
                if let Some(p) = last {
                    assert!(l > p, "entry last offsets not increasing: {p} then {l}");
                }
                assert!(l < hw, "entry ends at {l}, past hw {hw}");
            }
            last = Some(l);
        }
        for isolation in [
            IsolationLevel::ReadUncommitted,
            IsolationLevel::ReadCommitted,
        ] {
            match log.consume(offset, 4096, isolation) {
                Ok(c) => {
                    let mut prev = offset - 1;
                    for rec in &c.records {
                        assert!(
                            !strict || rec.offset > prev,
                            "consumed offsets not increasing"
                        );
                        prev = rec.offset;
                    }
                }
                Err(e) if !strict => {
                    let _ = e.to_string();
                }
                Err(e) => panic!("consume {isolation:?} at {offset} after recovery: {e}"),
            }
        }
        offset = r.next_offset;
    }
}

fn env_with(data: &[u8]) -> Env {
    let clock = Arc::new(ManualClock::new(NOW));
    let storage = MemStorage::with_clock(clock.clone());
    let env = Env::new(Arc::new(storage.clone()), clock);
    let dir = Path::new(DIR);
    storage.create_dir_all(dir).unwrap();
    let mut rest = data;
    while let Some((&tag, tail)) = rest.split_first() {
        let len = match tail {
            [a, b, ..] => usize::from(u16::from_le_bytes([*a, *b])),
            _ => break,
        };
        let tail = &tail[2..];
        let (bytes, tail) = tail.split_at(len.min(tail.len()));
        if let Some(n) = name(tag) {
            storage.put_file(&dir.join(n), bytes);
        }
        rest = tail;
    }
    // Without a configuration the log uses Kafka's defaults, whose 10 MiB preallocated indexes
    // make every execution slow: give it small ones, unless bit 7 of the first tag asks for the
    // missing-configuration path.
    let config = dir.join(files::CONFIG_FILE);
    if storage.file_bytes(&config).is_none() && data.first().is_some_and(|t| t & 0x80 == 0) {
        storage.put_file(&config, br#"{"segment.index.bytes": 4096}"#);
    }
    env
}

/// Checks a log recovery has fully scanned, then closes and reopens it.
fn check_recovered(log: Log, env: Env) {
    let dir = Path::new(DIR);
    if let Err(e) = log.verify_indexes() {
        panic!("indexes inconsistent after recovery: {e}");
    }
    read_all(&log, true);
    let (start, end) = (log.log_start_offset(), log.log_end_offset());
    log.close()
        .unwrap_or_else(|e| panic!("close after recovery: {e}"));
    let log = Log::open_with(dir, env).unwrap_or_else(|e| panic!("reopen after close: {e}"));
    assert_eq!(
        log.log_start_offset(),
        start,
        "log start changed by close + reopen"
    );
    assert_eq!(
        log.log_end_offset(),
        end,
        "log end changed by close + reopen"
    );
    log.verify_indexes()
        .unwrap_or_else(|e| panic!("indexes inconsistent after reopen: {e}"));
    read_all(&log, true);
}

fuzz_target!(|data: &[u8]| {
    let dir = Path::new(DIR);
    // 1. Open the image as it is. Recovery scans the segments it does not trust; when it
    // scanned every one, everything must be consistent.
    let env = env_with(data);
    if let Ok(log) = Log::open_with(dir, env.clone()) {
        let info = log.recovery_info();
        let full = !info.clean_shutdown && info.recovered_segments == info.segments;
        if full {
            check_recovered(log, env);
        } else {
            let _ = log.verify_indexes();
            read_all(&log, false);
            let _ = log.close();
        }
    }
    // 2. The same image through `Log::recover_with` (scans every segment, rebuilds every
    // index): afterwards the log must open and be consistent.
    let env = env_with(data);
    if Log::recover_with(dir, env.clone()).is_ok() {
        let log = Log::open_with(dir, env.clone())
            .unwrap_or_else(|e| panic!("open after a successful recover: {e}"));
        check_recovered(log, env);
    }
});
