//! Process-level crash safety (issue 9): `krec log append` killed with SIGKILL at random moments,
//! then the log reopened and checked.
//!
//! A log created with `flush.messages=1` fsyncs every batch before `append` returns, and
//! `krec log append` prints its `{"base_offset":..}` lines only after every batch of the command
//! was appended (so synced). Each round runs `krec log append` commands back to back (a few
//! records each, split into batches of 1 to 3 records, so one command writes and fsyncs several
//! batches) and SIGKILLs the running one (`Child::kill`) at a random moment 0 to 50 ms into the
//! round. Then:
//!
//! * the log opens (even rounds: `krec log recover`; odd rounds: the recovery `krec log info`
//!   does on open), exit 0;
//! * `krec verify` passes (every entry valid, indexes agree with the log);
//! * `krec log read` returns every acknowledged record at its acknowledged offset with its
//!   value, nothing that was not sent, no record twice, offsets contiguous from 0 and records in
//!   the order they were sent.
//!
//! The acknowledged records of every round are checked again after every later crash. Rounds:
//! `KRECORDS_SIGKILL_ROUNDS` (default 50). The PRNG is seeded per round, so a round's delays and
//! inputs are the same from run to run (where the kill lands still depends on timing).

use crate::util::krec;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// splitmix64: a small deterministic PRNG.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// Runs `krec args` to completion: (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = krec()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn krec");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Value of record `j` of append command `cmd`.
fn value(cmd: usize, j: usize) -> String {
    format!("c{cmd}-r{j}")
}

/// What one round saw, for the summary.
#[derive(Default)]
struct Tally {
    /// Kills while a `krec log append` had the log open (no clean-shutdown marker afterwards).
    log_open: usize,
    /// Kills that left a torn batch: recovery truncated bytes.
    torn: usize,
    /// Kills after some batch of the killed command reached the log (its records are there,
    /// unacknowledged).
    unacked_written: usize,
    /// Kills between two batches of one command: some but not all of its records are there.
    between_batches: usize,
}

#[test]
fn sigkilled_appends_lose_no_acknowledged_record_and_invent_none() {
    let rounds: u64 = std::env::var("KRECORDS_SIGKILL_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("events-0");
    let dir_arg = dir.display().to_string();
    let (code, _, err) = run(&[
        "log",
        "create",
        &dir_arg,
        "--config",
        "flush.messages=1",
        "--config",
        "segment.bytes=1500",
    ]);
    assert_eq!(code, 0, "create: {err}");

    // Every record sent: value -> (command, index in command).
    let mut sent: HashMap<String, (usize, usize)> = HashMap::new();
    // Acknowledged records: offset -> value.
    let mut acked: BTreeMap<i64, String> = BTreeMap::new();
    let mut cmd = 0usize;
    let mut tally = Tally::default();
    let mut completed_appends = 0usize;

    for round in 0..rounds {
        let mut rng = Rng(0x5EED_0000 + round);
        let delay = Duration::from_micros(rng.range(0, 50_000));
        let start = Instant::now();
        let mut killed_cmd = None;
        let mut killed_n = 0;
        while killed_cmd.is_none() {
            let n = rng.range(1, 12) as usize;
            let per_batch = rng.range(1, 3) as usize;
            let mut input = String::new();
            for j in 0..n {
                let v = value(cmd, j);
                input.push_str(&format!("{{\"key\":\"k{j}\",\"value\":\"{v}\"}}\n"));
                sent.insert(v, (cmd, j));
            }
            let mut child: Child = krec()
                .args([
                    "log",
                    "append",
                    &dir_arg,
                    "--records-per-batch",
                    &per_batch.to_string(),
                ])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn krec log append");
            // A few hundred bytes: fits in the pipe, no writer thread needed.
            let mut stdin = child.stdin.take().expect("stdin");
            let _ = stdin.write_all(input.as_bytes());
            drop(stdin);
            loop {
                if let Some(status) = child.try_wait().expect("try_wait") {
                    let mut out = String::new();
                    let mut err = String::new();
                    child
                        .stdout
                        .take()
                        .unwrap()
                        .read_to_string(&mut out)
                        .unwrap();
                    child
                        .stderr
                        .take()
                        .unwrap()
                        .read_to_string(&mut err)
                        .unwrap();
                    assert!(
                        status.success(),
                        "round {round}: append {cmd} failed ({status}): {err}{out}"
                    );
                    // One line per batch, in order: the batch's records at base..=last.
                    let lines: Vec<Value> = out
                        .lines()
                        .map(|l| serde_json::from_str(l).expect("ack line"))
                        .collect();
                    assert_eq!(lines.len(), n.div_ceil(per_batch), "round {round}: {out}");
                    for (b, line) in lines.iter().enumerate() {
                        let base = line["base_offset"].as_i64().expect("base_offset");
                        let last = line["last_offset"].as_i64().expect("last_offset");
                        let first = b * per_batch;
                        let count = per_batch.min(n - first);
                        assert_eq!(last - base + 1, count as i64, "round {round}: {line}");
                        for k in 0..count {
                            acked.insert(base + k as i64, value(cmd, first + k));
                        }
                    }
                    completed_appends += 1;
                    break;
                }
                if start.elapsed() >= delay {
                    // SIGKILL on Unix.
                    child.kill().expect("kill");
                    child.wait().expect("wait");
                    killed_cmd = Some(cmd);
                    killed_n = n;
                    break;
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            cmd += 1;
        }
        let killed_cmd = killed_cmd.unwrap();

        // Was the log open at the kill? A clean close leaves the marker.
        if !dir.join("krec-clean-shutdown").exists() {
            tally.log_open += 1;
        }

        // Open after the crash.
        let truncated = if round % 2 == 0 {
            let (code, out, err) = run(&["log", "recover", &dir_arg]);
            assert_eq!(code, 0, "round {round}: recover: {err}");
            let j: Value = serde_json::from_str(&out).expect("recover json");
            j["truncated_bytes"].as_u64().expect("truncated_bytes")
        } else {
            // Any writing command recovers the log when it opens it (reading ones never
            // change it).
            let (code, _, err) = run(&["log", "retain", &dir_arg]);
            assert_eq!(code, 0, "round {round}: retain: {err}");
            err.split("recovery truncated ")
                .nth(1)
                .and_then(|s| s.split_whitespace().next())
                .map_or(0, |n| n.parse().expect("truncated bytes"))
        };
        if truncated > 0 {
            tally.torn += 1;
        }

        let (code, out, err) = run(&["verify", &dir_arg]);
        assert_eq!(code, 0, "round {round}: verify: {err}{out}");

        let (code, out, err) = run(&["log", "read", &dir_arg]);
        assert_eq!(code, 0, "round {round}: read: {err}");
        check_read(
            round,
            &out,
            &sent,
            &acked,
            (killed_cmd, killed_n),
            &mut tally,
        );
    }
    eprintln!(
        "sigkill: {rounds} rounds, {completed_appends} appends completed, {} records acknowledged; \
         kills with the log open: {}, leaving a torn batch: {}, after a batch of the killed \
         append was written: {}, between two batches of one append: {}",
        acked.len(),
        tally.log_open,
        tally.torn,
        tally.unacked_written,
        tally.between_batches
    );
    assert!(tally.log_open > 0, "no kill landed while the log was open");
    check_dir_is_clean(&dir);
}

/// Checks `krec log read` output against what was sent and acknowledged.
fn check_read(
    round: u64,
    out: &str,
    sent: &HashMap<String, (usize, usize)>,
    acked: &BTreeMap<i64, String>,
    (killed_cmd, killed_n): (usize, usize),
    tally: &mut Tally,
) {
    let mut by_offset: BTreeMap<i64, String> = BTreeMap::new();
    let mut previous: Option<(usize, usize)> = None;
    let mut killed_written = 0;
    for (i, line) in out.lines().enumerate() {
        let r: Value = serde_json::from_str(line).expect("read line");
        let offset = r["offset"].as_i64().expect("offset");
        assert_eq!(
            offset, i as i64,
            "round {round}: offsets not contiguous: {line}"
        );
        let v = r["value"].as_str().expect("value").to_string();
        let origin = *sent
            .get(&v)
            .unwrap_or_else(|| panic!("round {round}: record never sent: {line}"));
        assert!(
            previous.is_none_or(|p| p < origin),
            "round {round}: record out of send order or twice: {line} after {previous:?}"
        );
        previous = Some(origin);
        killed_written += usize::from(origin.0 == killed_cmd);
        by_offset.insert(offset, v);
    }
    for (offset, v) in acked {
        assert_eq!(
            by_offset.get(offset),
            Some(v),
            "round {round}: acknowledged record lost at offset {offset}"
        );
    }
    if killed_written > 0 {
        tally.unacked_written += 1;
    }
    if killed_written > 0 && killed_written < killed_n {
        tally.between_batches += 1;
    }
}

/// After the last round the log was closed cleanly by the recovering `krec log recover` or
/// `retain` (`krec log read` only reads).
fn check_dir_is_clean(dir: &Path) {
    assert!(dir.join("krec-clean-shutdown").exists());
}
