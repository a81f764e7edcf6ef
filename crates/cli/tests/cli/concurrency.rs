//! Many `krec` processes on one log at once: one writer at a time, nothing acknowledged lost,
//! and reading commands that leave every byte of the directory as it was.
//!
//! `KREC_CONCURRENCY_ROUNDS` sets the rounds (default 6).

use crate::util::{finish, krec, start, Dir, Started};
use krecords_testkit::files::dir_state;
use std::collections::{BTreeMap, HashSet};

const APPENDERS: usize = 4;
const RECORDS: usize = 400;
const PER_BATCH: usize = 50;
const LOCKED: &str = "another process has this log open for writing";

fn rounds() -> usize {
    std::env::var("KREC_CONCURRENCY_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6)
}

/// Starts `krec args` with `stdin` written in the background.
fn spawn(args: &[String], stdin: Vec<u8>) -> Started {
    start(krec().args(args), stdin)
}

/// The value of record `i` of appender `p` in round `r`: every acknowledged record is
/// recognisable.
fn value(r: usize, p: usize, i: usize) -> String {
    format!("round {r} appender {p} record {i:05}")
}

fn input(r: usize, p: usize) -> Vec<u8> {
    (0..RECORDS)
        .map(|i| format!("{{\"value\":\"{}\"}}\n", value(r, p, i)))
        .collect::<String>()
        .into_bytes()
}

/// Offset → value of every record the log holds, read as a consumer reads it.
fn log_values(dir: &str) -> BTreeMap<i64, String> {
    let r = krec().args(["log", "read", dir]).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    String::from_utf8(r.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["offset"].as_i64().unwrap(),
                v["value"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Runs `rounds` rounds of four appenders, a retain and an end-txn at once. Returns
/// (commands run, commands refused, batches acknowledged).
fn hammer(wait: bool) -> (usize, usize, usize) {
    let d = Dir::new();
    let dir = d.arg("log-0");
    krec()
        .args(["log", "create", &dir, "--config", "segment.bytes=60000"])
        .output()
        .unwrap();
    let wait_arg = |args: &mut Vec<String>| {
        if wait {
            args.push("--wait=120".into());
        }
    };
    let mut acknowledged: Vec<(i64, i64, String)> = Vec::new();
    let mut offsets_seen = HashSet::new();
    let (mut commands, mut refused) = (0, 0);
    for r in 0..rounds() {
        let mut appenders = Vec::new();
        for p in 0..APPENDERS {
            let mut args: Vec<String> = ["log", "append", &dir, "--records-per-batch"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            args.push(PER_BATCH.to_string());
            wait_arg(&mut args);
            appenders.push((p, spawn(&args, input(r, p))));
        }
        let mut others = Vec::new();
        for extra in [
            vec!["log", "retain", &dir],
            vec![
                "log",
                "end-txn",
                &dir,
                "--producer-id",
                "99",
                "--producer-epoch",
                "0",
                "--coordinator-epoch",
                "0",
                "--commit",
            ],
        ] {
            let mut args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
            wait_arg(&mut args);
            others.push(spawn(&args, Vec::new()));
        }
        for (p, child) in appenders {
            let run = finish(child);
            commands += 1;
            match run.code {
                0 => {
                    let lines = run.json_lines();
                    assert_eq!(lines.len(), RECORDS / PER_BATCH, "{}", run.out());
                    for (batch, line) in lines.iter().enumerate() {
                        let base = line["base_offset"].as_i64().unwrap();
                        let last = line["last_offset"].as_i64().unwrap();
                        assert_eq!(last - base + 1, PER_BATCH as i64);
                        for o in base..=last {
                            assert!(offsets_seen.insert(o), "offset {o} acknowledged twice");
                        }
                        for (k, o) in (base..=last).enumerate() {
                            acknowledged.push((o, o, value(r, p, batch * PER_BATCH + k)));
                        }
                    }
                }
                2 if !wait && run.stderr.contains(LOCKED) => {
                    assert!(
                        run.stdout.is_empty(),
                        "a refused append printed {}",
                        run.out()
                    );
                    refused += 1;
                }
                _ => panic!("append exited {}: {}", run.code, run.stderr),
            }
        }
        for child in others {
            let run = finish(child);
            commands += 1;
            match run.code {
                0 => {}
                2 if !wait && run.stderr.contains(LOCKED) => refused += 1,
                _ => panic!("exited {}: {}", run.code, run.stderr),
            }
        }
        let verify = krec().args(["verify", &dir]).output().unwrap();
        assert!(
            verify.status.success(),
            "verify after round {r}: {}{}",
            String::from_utf8_lossy(&verify.stdout),
            String::from_utf8_lossy(&verify.stderr)
        );
        // Every acknowledged record is at its offset with its own bytes, and the log holds
        // nothing else: refused commands wrote nothing.
        let values = log_values(&dir);
        for (o, _, v) in &acknowledged {
            assert_eq!(values.get(o), Some(v), "acknowledged record at offset {o}");
        }
        assert_eq!(values.len(), acknowledged.len());
    }
    (commands, refused, acknowledged.len() / PER_BATCH)
}

#[test]
fn concurrent_writers_lose_nothing() {
    let (commands, refused, batches) = hammer(false);
    eprintln!(
        "without --wait: {commands} commands, {refused} refused (locked), {batches} batches acknowledged, 0 lost"
    );
    assert!(batches > 0);
}

#[test]
fn concurrent_writers_with_wait_all_succeed() {
    let (commands, refused, batches) = hammer(true);
    eprintln!("with --wait: {commands} commands, {batches} batches acknowledged, 0 lost");
    assert_eq!(refused, 0);
    assert_eq!(batches, rounds() * APPENDERS * RECORDS / PER_BATCH);
}

#[test]
fn a_locked_log_is_one_clear_line_and_exit_2() {
    let d = Dir::new();
    let dir = d.arg("log-0");
    d.run(&["log", "create", &dir], b"").ok();
    // Hold the lock from this process, as a writer would.
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(d.path("log-0").join("krec.lock"))
        .unwrap();
    lock.lock().unwrap();
    let before = dir_state(&d.path("log-0"));
    for args in [
        vec!["log", "append", &dir],
        vec!["log", "retain", &dir],
        vec!["log", "recover", &dir],
        vec![
            "log",
            "end-txn",
            &dir,
            "--producer-id",
            "1",
            "--producer-epoch",
            "0",
            "--coordinator-epoch",
            "0",
            "--abort",
        ],
        vec!["log", "append", &dir, "--wait=0.2"],
    ] {
        let r = d.run(&args, b"{\"value\":\"x\"}\n");
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stderr.contains(LOCKED), "{}", r.stderr);
        assert!(r.stdout.is_empty());
    }
    // Readers still read.
    d.run(&["log", "info", &dir], b"").ok();
    assert_eq!(dir_state(&d.path("log-0")), before);
    lock.unlock().unwrap();
    d.run(&["log", "append", &dir], b"{\"value\":\"x\"}\n").ok();
    let r = d.run(&["log", "append", &dir, "--wait=abc"], b"");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("seconds"), "{}", r.stderr);
}

/// Every reading command, on the log `dir` (with `dir/..` its parent).
fn reading_commands(dir: &str, segment: &str) -> Vec<Vec<String>> {
    let cmds: Vec<Vec<&str>> = vec![
        vec!["log", "read", dir],
        vec!["log", "read", dir, "--isolation", "read-committed"],
        vec!["log", "info", dir],
        vec!["log", "offsets", dir, "--latest"],
        vec!["log", "offsets", dir, "--earliest"],
        vec!["log", "offsets", dir, "--max-timestamp"],
        vec!["log", "offsets", dir, "--time", "0"],
        vec!["dump", "--deep", "--print-data", segment],
        vec!["dump", "--format", "json", segment],
        vec!["explain", segment],
        vec!["verify", dir],
        vec!["stats", dir],
        vec!["stats", "--what-if", "--sample", "100", dir],
    ];
    cmds.into_iter()
        .map(|c| c.into_iter().map(str::to_owned).collect())
        .collect()
}

/// A log with several segments, an aborted and a committed transaction, then left as after a
/// crash: no clean shutdown marker, a torn tail, a missing index.
fn unclean_log(d: &Dir) -> (String, String) {
    let dir = d.arg("t-0");
    d.run(
        &["log", "create", &dir, "--config", "segment.bytes=1200"],
        b"",
    )
    .ok();
    let records: String = (0..60)
        .map(|i| format!("{{\"key\":\"k{i}\",\"value\":\"value {i}\"}}\n"))
        .collect();
    d.run(
        &["log", "append", &dir, "--records-per-batch", "7"],
        records.as_bytes(),
    )
    .ok();
    let txn = [
        "--producer-id",
        "5",
        "--producer-epoch",
        "0",
        "--transactional",
        "--records-per-batch",
        "7",
    ];
    let mut args = vec!["log", "append", &dir];
    args.extend(txn);
    d.run(&args, records.as_bytes()).ok();
    let end = [
        "log",
        "end-txn",
        &dir,
        "--producer-id",
        "5",
        "--producer-epoch",
        "0",
        "--coordinator-epoch",
        "0",
        "--abort",
    ];
    d.run(&end, b"").ok();
    d.run(
        &["log", "append", &dir, "--records-per-batch", "7"],
        records.as_bytes(),
    )
    .ok();
    let p = d.path("t-0");
    let mut segments: Vec<_> = std::fs::read_dir(&p)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|x| x.extension().is_some_and(|e| e == "log"))
        .collect();
    segments.sort();
    assert!(segments.len() >= 3, "{segments:?}");
    std::fs::remove_file(p.join("krec-clean-shutdown")).unwrap();
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(segments.last().unwrap())
        .unwrap()
        .write_all(&[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 80, 0])
        .unwrap();
    std::fs::remove_file(segments[1].with_extension("index")).unwrap();
    (dir, segments[0].display().to_string())
}

#[test]
fn reading_commands_leave_the_directory_byte_identical() {
    let d = Dir::new();
    let (dir, segment) = unclean_log(&d);
    let before = dir_state(&d.path("t-0"));
    for cmd in reading_commands(&dir, &segment) {
        let r = krec().args(&cmd).output().unwrap();
        // verify and stats find the torn tail (exit 1, the one rule for a truncated tail);
        // everything else succeeds.
        let code = r.status.code().unwrap();
        assert!(
            code == 0 || (code == 1 && ["verify", "stats"].contains(&cmd[0].as_str())),
            "{cmd:?} exited {code}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert_eq!(
            dir_state(&d.path("t-0")),
            before,
            "{cmd:?} changed the directory"
        );
    }
    // Reading sees what recovery would keep: the aborted records are filtered at read-committed.
    let committed = krec()
        .args(["log", "read", &dir, "--isolation", "read-committed"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&committed.stdout).lines().count(),
        120
    );
}

/// The same on a directory the reading user cannot write to: as root (which ignores permission
/// bits) the commands run as `nobody` through `setpriv`, when it exists.
#[test]
fn reading_commands_work_without_write_permission() {
    let d = Dir::new();
    let (dir, segment) = unclean_log(&d);
    let p = d.path("t-0");
    let set_mode = |mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        for e in std::fs::read_dir(&p).unwrap() {
            let path = e.unwrap().path();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o444)).unwrap();
        }
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        std::fs::set_permissions(d.tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    set_mode(0o555);
    let before = dir_state(&p);
    let is_root = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false);
    let as_nobody = is_root
        && std::process::Command::new("setpriv")
            .arg("--version")
            .output()
            .is_ok();
    if is_root && !as_nobody {
        eprintln!("setpriv is missing: running as root, permission bits are not enforced");
    }
    for cmd in reading_commands(&dir, &segment) {
        let r = if as_nobody {
            std::process::Command::new("setpriv")
                .args([
                    "--reuid=65534",
                    "--regid=65534",
                    "--clear-groups",
                    "--",
                    env!("CARGO_BIN_EXE_krec"),
                ])
                .args(&cmd)
                .output()
                .unwrap()
        } else {
            krec().args(&cmd).output().unwrap()
        };
        let code = r.status.code().unwrap();
        assert!(
            code == 0 || (code == 1 && ["verify", "stats"].contains(&cmd[0].as_str())),
            "{cmd:?} exited {code}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert_eq!(dir_state(&p), before, "{cmd:?} changed the directory");
    }
    // A writer, as nobody, is refused cleanly (it cannot create the lock file).
    if as_nobody {
        let r = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_krec"))
            .args(["log", "retain", &dir])
            .output()
            .unwrap();
        assert_eq!(r.status.code(), Some(2));
        assert_eq!(dir_state(&p), before);
    }
    set_mode(0o755);
}
