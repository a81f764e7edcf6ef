//! Tests that run other processes (a SIGKILLed writer, a stand-in for a Kafka broker's lock).
//!
//! Their own test binary: a child process inherits every open file of the test process until it
//! execs, locks included, so spawning while other tests open and close logs in the same process
//! would make those tests see a lock held for a moment. Cargo runs test binaries one at a time,
//! and the tests here take turns through [`SPAWN`].

#[path = "util.rs"]
mod util;

use krecords_log::{Env, Error, Log, OpenOptions};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use util::{append, dir_state, fs_log, locked, v2, NOW};

/// Held by each test for its whole run.
static SPAWN: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    SPAWN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Env var that makes [`lock_holder_child`] hold a log open.
const HOLDER_ENV: &str = "KRECORDS_TEST_LOCK_HOLDER";

/// Not a test on its own: the child process of `a_killed_writer_leaves_no_lock_behind`.
#[test]
#[ignore = "run as a child process by a_killed_writer_leaves_no_lock_behind"]
fn lock_holder_child() {
    let Ok(dir) = std::env::var(HOLDER_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let mut log = Log::open(&dir).unwrap();
    append(&mut log, &v2(NOW, &["from the child"]));
    std::fs::write(dir.with_extension("ready"), b"").unwrap();
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
fn a_killed_writer_leaves_no_lock_behind() {
    let _turn = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    fs_log(&dir).close().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "lock_holder_child", "--ignored", "--nocapture"])
        .env(HOLDER_ENV, &dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ready = dir.with_extension("ready");
    let start = Instant::now();
    while !ready.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "child never got ready"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(locked(Log::open(&dir)));
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let log = Log::open(&dir).unwrap();
    // The child's append is there: it was written before the kill.
    assert_eq!(log.log_end_offset(), 25);
    assert!(!log.recovery_info().clean_shutdown);
}

/// A process holding a POSIX record lock (what a Kafka broker holds on `.lock`) on the parent
/// directory's `.lock` makes writers refuse the partition directory; readers still read.
#[test]
fn a_running_broker_directory_is_refused() {
    let _turn = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    fs_log(&dir).close().unwrap();
    let lock = tmp.path().join(".lock");
    std::fs::write(&lock, b"").unwrap();
    // Without a holder the file alone means nothing.
    Log::open(&dir).unwrap().close().unwrap();
    let script = "import fcntl,sys,time\nf=open(sys.argv[1],'r+')\nfcntl.lockf(f,fcntl.LOCK_EX)\nprint('locked',flush=True)\ntime.sleep(60)\n";
    let Ok(mut holder) = Command::new("python3")
        .args(["-c", script])
        .arg(&lock)
        .stdout(Stdio::piped())
        .spawn()
    else {
        eprintln!("python3 is missing: skipped");
        return;
    };
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "locked");
    let before = dir_state(&dir);
    let err = Log::open(&dir).unwrap_err();
    assert!(matches!(err, Error::BrokerRunning { .. }), "{err}");
    assert!(err.to_string().contains("running Kafka broker"), "{err}");
    assert_eq!(dir_state(&dir), before);
    assert_eq!(Log::open_read_only(&dir).unwrap().log_end_offset(), 24);
    let force = OpenOptions {
        ignore_running_broker: true,
        ..OpenOptions::default()
    };
    Log::open_with_options(&dir, Env::fs(), force)
        .unwrap()
        .close()
        .unwrap();
    holder.kill().unwrap();
    holder.wait().unwrap();
    Log::open(&dir).unwrap().close().unwrap();
}
