//! One writer per directory, and read-only opens that change nothing.

use crate::util::{append, config, dir_state, fs_log, locked, mem, v2, NOW};
use krecords_codec::read::Entries;
use krecords_log::storage::FsStorage;
use krecords_log::{Env, Error, LockWait, Log, OpenOptions};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn a_second_writer_is_refused_until_the_first_is_gone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    let log = fs_log(&dir);
    let before = dir_state(&dir);
    let err = Log::open(&dir).unwrap_err();
    assert!(matches!(err, Error::LogLocked { .. }), "{err}");
    assert_eq!(err.kafka_name(), "KAFKA_STORAGE_ERROR");
    assert!(err.to_string().contains("another process"), "{err}");
    assert!(matches!(
        Log::recover(&dir).unwrap_err(),
        Error::LogLocked { .. }
    ));
    assert!(matches!(
        Log::create(&dir, config(&[])).unwrap_err(),
        Error::LogLocked { .. }
    ));
    // The refused opens touched nothing.
    assert_eq!(dir_state(&dir), before);
    // Readers are never refused.
    let reader = Log::open_read_only(&dir).unwrap();
    assert_eq!(reader.log_end_offset(), 24);
    drop(log);
    let log = Log::open(&dir).unwrap();
    assert_eq!(log.log_end_offset(), 24);
    log.close().unwrap();
    // After a clean close too.
    Log::open(&dir).unwrap().close().unwrap();
}

#[test]
fn in_memory_storage_locks_too_and_a_crash_releases() {
    let m = mem();
    let log = m.create(&[]);
    assert!(locked(Log::open_with(&m.dir, m.env.clone())));
    m.storage.crash();
    // The crashed "process" held the lock; the machine came back without it.
    let again = Log::open_with(&m.dir, m.env.clone()).unwrap();
    drop(log);
    assert!(locked(Log::open_with(&m.dir, m.env.clone())));
    drop(again);
    m.open().close().unwrap();
}

#[test]
fn waiting_for_the_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    let log = fs_log(&dir);
    let short = OpenOptions::default().wait(LockWait::For(Duration::from_millis(150)));
    let start = Instant::now();
    assert!(locked(Log::open_with_options(&dir, Env::fs(), short)));
    assert!(start.elapsed() >= Duration::from_millis(150));
    let holder = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        log.close().unwrap();
    });
    let forever = OpenOptions::default().wait(LockWait::Forever);
    let log = Log::open_with_options(&dir, Env::fs(), forever).unwrap();
    holder.join().unwrap();
    assert_eq!(log.log_end_offset(), 24);
    assert!(log.recovery_info().clean_shutdown);
}

#[test]
fn nothing_is_created_in_a_directory_without_a_log() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), b"x").unwrap();
    assert!(matches!(
        Log::open(tmp.path()).unwrap_err(),
        Error::NotALog { .. }
    ));
    assert!(matches!(
        Log::open_read_only(tmp.path()).unwrap_err(),
        Error::NotALog { .. }
    ));
    assert_eq!(dir_state(tmp.path()).len(), 1);
}

#[test]
fn read_only_opens_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    let log = fs_log(&dir);
    // Unclean: no shutdown marker, an active segment mid-write, stale snapshots.
    drop(log);
    // A torn tail, a missing index and a stray snapshot: everything recovery would repair.
    use std::io::Write;
    let segments: Vec<PathBuf> = {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .collect();
        v.sort();
        v
    };
    let last = segments.last().unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(last)
        .unwrap()
        .write_all(&[0, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0, 99])
        .unwrap();
    std::fs::remove_file(segments[0].with_extension("index")).unwrap();
    std::fs::write(dir.join("00000000000000000099.snapshot"), b"stray").unwrap();
    let before = dir_state(&dir);
    std::thread::sleep(Duration::from_millis(20));

    let mut log = Log::open_read_only(&dir).unwrap();
    assert_eq!(log.log_end_offset(), 24);
    assert!(log.recovery_info().truncated_bytes >= 12);
    log.verify_indexes().unwrap();
    let read = log.read(0, 1 << 20).unwrap();
    assert!(read.next_offset > 0);
    let info = log.info().unwrap();
    assert_eq!(info.high_watermark, 24);
    for r in [
        log.append(&v2(NOW, &["x"]), krecords_log::AppendOrigin::Client)
            .map(|_| ()),
        log.retain().map(|_| ()),
        log.flush(),
        log.roll(),
    ] {
        assert!(matches!(r, Err(Error::ReadOnly { .. })), "{r:?}");
    }
    log.close().unwrap();
    assert_eq!(
        dir_state(&dir),
        before,
        "a read-only open changed the directory"
    );

    // A writer's open then repairs it, as before.
    let log = Log::open(&dir).unwrap();
    assert_eq!(log.log_end_offset(), 24);
    log.close().unwrap();
}

#[test]
fn read_only_on_files_without_write_permission() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    drop(fs_log(&dir));
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.push(dir.clone());
    for p in &names {
        let mut perms = std::fs::metadata(p).unwrap().permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(p, perms).unwrap();
    }
    let before = dir_state(&dir);
    let log = Log::open_read_only(&dir).unwrap();
    assert_eq!(log.log_end_offset(), 24);
    drop(log);
    assert_eq!(dir_state(&dir), before);
    for p in &names {
        let mut perms = std::fs::metadata(p).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(p, perms).unwrap();
    }
}

/// A reader opening the log again and again while a writer appends sees only whole, valid
/// batches with contiguous offsets: never a batch being written.
#[test]
fn readers_never_see_a_batch_being_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    let mut log = Log::create(&dir, config(&[("segment.bytes", "20000")])).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let value = "v".repeat(300);
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) && n < 3000 {
                append(&mut log, &v2(NOW + n, &[value.as_str(), value.as_str()]));
                n += 1;
            }
            log.close().unwrap();
            n
        })
    };
    let mut reads = 0;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
        let log = Log::open_read_only(&dir).unwrap();
        let end = log.log_end_offset();
        let mut offset = log.log_start_offset();
        while offset < end {
            let r = log.read(offset, 1 << 16).unwrap();
            for b in Entries::new(&r.bytes) {
                let b = b.unwrap();
                assert!(b.is_crc_valid());
                b.validate().unwrap();
                assert_eq!(b.offset_field(), offset, "offsets must be contiguous");
                offset = b.last_offset() + 1;
            }
            assert!(r.next_offset >= offset);
        }
        reads += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    assert!(reads > 0 && written > 0);
    let env = Env::new(
        Arc::new(FsStorage),
        Arc::new(krecords_log::clock::SystemClock),
    );
    assert_eq!(
        Log::open_with(&dir, env).unwrap().log_end_offset(),
        written * 2
    );
}

/// What `krec log append` relies on: once appends are flushed, a failure while closing (the
/// snapshot, the recovery point, the marker) loses none of them; the next open recovers.
#[test]
fn a_failed_close_after_a_flush_loses_nothing() {
    for fault in 1..=6 {
        let m = mem();
        let mut log = m.create(&[]);
        append(&mut log, &v2(NOW, &["a", "b"]));
        append(&mut log, &v2(NOW, &["c"]));
        log.flush().unwrap();
        // Fail the fault-th write or sync of the close.
        if fault % 2 == 0 {
            m.storage.fail_sync_after(fault / 2);
        } else {
            m.storage.fail_write_after(fault.div_ceil(2));
        }
        let closed = log.close();
        m.storage.clear_faults();
        // A power cut right after: only what was synced is left.
        m.storage.crash();
        let log = m.open();
        assert_eq!(log.log_end_offset(), 3, "fault {fault}, close: {closed:?}");
        let read = log.read(0, 1 << 20).unwrap();
        assert_eq!(read.next_offset, 3);
    }
}
