//! Our log engine on partition directories a real Kafka broker wrote.
//!
//! `interop/run.sh` starts a Kafka broker (KRaft), produces plain, idempotent and transactional
//! data (commits and aborts) with every codec, consumes it with read_committed and
//! read_uncommitted consumers, asks the broker for offsets (ListOffsets), stops it cleanly and
//! saves the partition directories with `scenario.json` (what was produced, what each consumer
//! received, what ListOffsets answered; see `interop/java/.../BrokerScenario.java`). These tests
//! read that directory:
//!
//! ```text
//! KRECORDS_BROKER_PARTITIONS=/tmp/krecords-broker-partitions.XXXXXX \
//!     cargo test -p krecords-log --test integration broker -- --ignored --nocapture --test-threads=1
//! ```
//!
//! Every partition is copied to a temporary directory first (opening writes snapshots and
//! indexes), and opened two ways:
//!
//! * *recovered*: as the broker left it. The directory has no `krec-log.json` (default
//!   configuration), no recovery point and no clean shutdown marker of ours, so the open scans
//!   and validates every segment, rebuilds the offset, time and transaction indexes, ignores the
//!   broker's producer snapshots (none is at or below the first rebuilt segment) and replays the
//!   producer state from the log start, then writes its own snapshot at the log end.
//! * *as written*: with our clean shutdown marker added, so that nothing is rebuilt: lookups use
//!   the broker's `.index` / `.timeindex`, read_committed fetches the broker's `.txnindex`
//!   entries, and the producer state is the broker's latest `.snapshot`.
//!
//! Each test prints one `PASS check/topic: ...` or `FAIL check/topic: ...` line per partition
//! (also appended to the file `KRECORDS_BROKER_REPORT` names, which run.sh counts) and fails at
//! the end, listing every disagreement, when any check failed.

use krecords_codec::read::{Batch, Entries};
use krecords_log::consumer::ConsumedRecord;
use krecords_log::files::{self, CLEAN_SHUTDOWN_FILE};
use krecords_log::producer_state::{parse_snapshot, ProducerSnapshotEntry};
use krecords_log::transaction::{parse_txn_index, AbortedTxn, IsolationLevel};
use krecords_log::{ListOffsetsResult, Log, OffsetSpec};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

const ENV: &str = "KRECORDS_BROKER_PARTITIONS";
/// When set, the PASS/FAIL lines are also appended to this file (run.sh counts them).
const REPORT_ENV: &str = "KRECORDS_BROKER_REPORT";

/// The directory run.sh saved: partition directories and scenario.json.
struct Saved {
    root: PathBuf,
    scenario: Value,
}

fn saved() -> Saved {
    let Some(root) = std::env::var_os(ENV).map(PathBuf::from) else {
        panic!(
            "set {ENV} to the directory interop/run.sh saved (its last lines print it: \
             /tmp/krecords-broker-partitions.XXXXXX)"
        );
    };
    let path = root.join("scenario.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (is {ENV} a broker partition dump?)",
            path.display()
        )
    });
    let scenario: Value = serde_json::from_str(&text).expect("scenario.json is JSON");
    Saved { root, scenario }
}

impl Saved {
    /// The scenario's topics (one partition each, `TOPIC-0`) with their part of scenario.json.
    fn topics(&self) -> Vec<(String, PathBuf, &Value)> {
        let topics = self.scenario["topics"]
            .as_object()
            .expect("scenario.json has topics");
        assert!(!topics.is_empty(), "scenario.json lists no topic");
        topics
            .iter()
            .map(|(name, t)| (name.clone(), self.root.join(format!("{name}-0")), t))
            .collect()
    }

    /// Every partition directory (`NAME-N`), the broker's internal topics included.
    fn partitions(&self) -> Vec<(String, PathBuf)> {
        let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&self.root)
            .expect("list the saved directory")
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.is_dir())
            .filter_map(|p| {
                let name = p.file_name()?.to_str()?.to_owned();
                let (_, n) = name.rsplit_once('-')?;
                (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some((name, p))
            })
            .collect();
        out.sort();
        assert!(
            !out.is_empty(),
            "no partition directory in {}",
            self.root.display()
        );
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Recovered,
    AsWritten,
}

impl Mode {
    const BOTH: [Mode; 2] = [Mode::Recovered, Mode::AsWritten];

    fn name(self) -> &'static str {
        match self {
            Mode::Recovered => "recovered",
            Mode::AsWritten => "as written",
        }
    }
}

/// A copy of a partition directory, opened by our log.
struct Opened {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    log: Log,
}

/// Copies the files of `src` whose name `keep` accepts into a temporary directory of the same
/// name and opens it.
fn open_copy_filtered(
    src: &Path,
    mode: Mode,
    keep: impl Fn(&str) -> bool,
) -> Result<Opened, String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = tmp.path().join(src.file_name().unwrap_or_default());
    std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(src).map_err(|e| format!("{}: {e}", src.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_file() && keep(&name) {
            std::fs::copy(entry.path(), dir.join(&name))
                .map_err(|e| format!("copy {name}: {e}"))?;
        }
    }
    if mode == Mode::AsWritten {
        std::fs::write(dir.join(CLEAN_SHUTDOWN_FILE), b"").map_err(|e| e.to_string())?;
    }
    let log = Log::open(&dir).map_err(|e| format!("Log::open ({}) failed: {e}", mode.name()))?;
    Ok(Opened {
        _tmp: tmp,
        dir,
        log,
    })
}

fn open_copy(src: &Path, mode: Mode) -> Result<Opened, String> {
    open_copy_filtered(src, mode, |_| true)
}

/// PASS/FAIL lines per check and partition; fails the test at the end if anything failed.
#[derive(Default)]
struct Report {
    failures: Vec<String>,
    passed: usize,
}

impl Report {
    fn check(&mut self, name: &str, problems: &[String], detail: impl FnOnce() -> String) {
        let line = if problems.is_empty() {
            self.passed += 1;
            format!("PASS {name}: {}", detail())
        } else {
            let shown: Vec<&str> = problems.iter().take(8).map(String::as_str).collect();
            let more = problems.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" (+{more} more)")
            } else {
                String::new()
            };
            self.failures
                .push(format!("{name}:\n    {}", problems.join("\n    ")));
            format!("FAIL {name}: {}{more}", shown.join("; "))
        };
        println!("{line}");
        // run.sh counts these lines: one append per line, so tests running at once do not mix them.
        if let Some(path) = std::env::var_os(REPORT_ENV) {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .unwrap_or_else(|e| panic!("{REPORT_ENV}={}: {e}", Path::new(&path).display()));
            f.write_all(format!("{}\n", line.replace('\n', " ")).as_bytes())
                .expect("write the report line");
        }
    }

    fn finish(self) {
        assert!(
            self.failures.is_empty(),
            "{} check(s) failed ({} passed):\n{}",
            self.failures.len(),
            self.passed,
            self.failures.join("\n")
        );
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn short(v: &impl std::fmt::Display) -> String {
    let s = v.to_string();
    if s.len() > 160 {
        let mut cut = 157;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &s[..cut])
    } else {
        s
    }
}

/// A consumed record as BrokerScenario writes the Java consumer's (bytes in hex).
fn record_json(r: &ConsumedRecord) -> Value {
    json!({
        "offset": r.offset,
        "timestamp": r.timestamp.unwrap_or(-1),
        "timestamp_type": r.timestamp_type.name(),
        "key": r.key.as_deref().map(hex),
        "value": r.value.as_deref().map(hex),
        "headers": r.headers.iter().map(|h| json!({
            "key": String::from_utf8_lossy(&h.key),
            "value": h.value.as_deref().map(hex),
        })).collect::<Vec<_>>(),
        "leader_epoch": r.leader_epoch,
    })
}

/// Everything `Log::consume` returns from the log start on, fetch after fetch of `page` bytes,
/// until a fetch makes no progress; with the offset it stopped at.
fn consume_all(
    log: &Log,
    isolation: IsolationLevel,
    page: usize,
) -> Result<(Vec<ConsumedRecord>, i64), String> {
    let mut offset = log.log_start_offset();
    let mut out = Vec::new();
    for _ in 0..1_000_000 {
        let c = log.consume(offset, page, isolation).map_err(|e| {
            format!(
                "consume({offset}, {page}, {}) failed: {e}",
                isolation.name()
            )
        })?;
        out.extend(c.records);
        if c.next_offset <= offset {
            return Ok((out, offset));
        }
        offset = c.next_offset;
    }
    Err(format!("consume({}) did not stop", isolation.name()))
}

/// Differences between the Java consumer's records and ours, record by record.
fn compare_records(theirs: &[Value], ours: &[Value]) -> Vec<String> {
    let mut p = Vec::new();
    if theirs.len() != ours.len() {
        let offsets = |v: &[Value]| -> BTreeSet<i64> {
            v.iter().filter_map(|r| r["offset"].as_i64()).collect()
        };
        let (a, b) = (offsets(theirs), offsets(ours));
        p.push(format!(
            "consumer {} records, krec {}; only the consumer's offsets {:?}, only krec's {:?}",
            theirs.len(),
            ours.len(),
            a.difference(&b).collect::<Vec<_>>(),
            b.difference(&a).collect::<Vec<_>>()
        ));
    }
    for (a, b) in theirs.iter().zip(ours) {
        if a == b {
            continue;
        }
        let fields: Vec<String> = a
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, v)| b.get(k.as_str()) != Some(v))
            .map(|(k, v)| format!("{k}: consumer {} krec {}", short(v), short(&b[k.as_str()])))
            .collect();
        p.push(format!("offset {}: {}", a["offset"], fields.join(", ")));
    }
    p
}

fn consumer_check(isolation: IsolationLevel, key: &str) {
    let saved = saved();
    let mut report = Report::default();
    for (topic, dir, t) in saved.topics() {
        let theirs = t[key].as_array().cloned().unwrap_or_default();
        let mut problems = Vec::new();
        let mut summary = String::new();
        for mode in Mode::BOTH {
            let opened = match open_copy(&dir, mode) {
                Ok(o) => o,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            let log = &opened.log;
            let stop_at = match isolation {
                IsolationLevel::ReadCommitted => log.last_stable_offset(),
                IsolationLevel::ReadUncommitted => log.high_watermark(),
            };
            // One fetch of everything, and one fetch per batch (the aborted transactions then
            // come fetch by fetch).
            for page in [1 << 24, 1] {
                match consume_all(log, isolation, page) {
                    Ok((records, end)) => {
                        let ours: Vec<Value> = records.iter().map(record_json).collect();
                        for d in compare_records(&theirs, &ours) {
                            problems.push(format!("{}, {page}-byte fetches: {d}", mode.name()));
                        }
                        if end != stop_at {
                            problems.push(format!(
                                "{}, {page}-byte fetches: stopped at offset {end}, not at {stop_at}",
                                mode.name()
                            ));
                        }
                    }
                    Err(e) => problems.push(format!("{}: {e}", mode.name())),
                }
            }
            if isolation == IsolationLevel::ReadCommitted
                && log.last_stable_offset() != log.high_watermark()
            {
                problems.push(format!(
                    "{}: last stable offset {} below the high watermark {} (the broker had no open transaction; \
                     first unstable offset {:?})",
                    mode.name(),
                    log.last_stable_offset(),
                    log.high_watermark(),
                    log.first_unstable_offset()
                ));
            }
            summary = format!("up to offset {stop_at}");
        }
        report.check(&format!("{}/{topic}", isolation.name().replace('_', "-")), &problems, || {
            format!(
                "Log::consume equals the {key} consumer's {} records (offset, timestamp and type, key, value, \
                 headers, leader epoch), {summary}, opened recovered and as written, one fetch and one fetch per batch",
                theirs.len()
            )
        });
    }
    report.finish();
}

/// (a) read_uncommitted: `Log::consume` from the log start to the high watermark returns what
/// the Java consumer with isolation.level=read_uncommitted received.
#[test]
#[ignore = "needs a broker partition dump: run interop/run.sh"]
fn read_uncommitted_equals_the_java_consumer() {
    consumer_check(IsolationLevel::ReadUncommitted, "read_uncommitted");
}

/// (b) read_committed: aborted transactions and markers dropped, as the Java consumer with
/// isolation.level=read_committed received it.
#[test]
#[ignore = "needs a broker partition dump: run interop/run.sh"]
fn read_committed_equals_the_java_consumer() {
    consumer_check(IsolationLevel::ReadCommitted, "read_committed");
}

/// Every record of the log, control records included: (offset, timestamp, partition leader
/// epoch of its batch).
fn all_records(log: &Log) -> Result<Vec<(i64, i64, Option<i32>)>, String> {
    let mut out = Vec::new();
    let mut offset = log.log_start_offset();
    let mut scratch = Vec::new();
    while offset < log.high_watermark() {
        let r = log
            .read(offset, 1 << 24)
            .map_err(|e| format!("read({offset}) failed: {e}"))?;
        if r.next_offset <= offset {
            return Err(format!("read({offset}) made no progress"));
        }
        for entry in Entries::new(&r.bytes) {
            let batch = entry.map_err(|e| e.to_string())?;
            let epoch = match &batch {
                Batch::V2(v) => v.partition_leader_epoch(),
                Batch::Legacy(_) => None,
            };
            for rec in batch
                .records(&mut scratch, krecords_codec::DEFAULT_DECOMPRESS_LIMIT)
                .map_err(|e| e.to_string())?
            {
                let rec = rec.map_err(|e| e.to_string())?;
                if rec.offset() >= offset {
                    out.push((rec.offset(), rec.timestamp().unwrap_or(-1), epoch));
                }
            }
        }
        offset = r.next_offset;
    }
    Ok(out)
}

/// ListOffsets answered from the records themselves.
fn brute_force(
    records: &[(i64, i64, Option<i32>)],
    log: &Log,
    spec: OffsetSpec,
) -> (i64, i64, Option<i32>) {
    let found =
        |r: Option<&(i64, i64, Option<i32>)>| r.map_or((-1, -1, None), |&(o, t, e)| (o, t, e));
    match spec {
        OffsetSpec::Earliest => (
            log.log_start_offset(),
            -1,
            records.first().and_then(|r| r.2),
        ),
        OffsetSpec::Latest => (log.high_watermark(), -1, records.last().and_then(|r| r.2)),
        OffsetSpec::MaxTimestamp => {
            let max = records.iter().map(|r| r.1).max();
            found(records.iter().find(|r| Some(r.1) == max))
        }
        OffsetSpec::Timestamp(t) => found(records.iter().find(|r| r.1 >= t)),
    }
}

fn ours(r: &ListOffsetsResult) -> (i64, i64, Option<i32>) {
    (r.offset, r.timestamp.unwrap_or(-1), r.leader_epoch)
}

fn broker_answer(v: &Value) -> (i64, i64, Option<i32>) {
    (
        v["offset"].as_i64().unwrap_or(i64::MIN),
        v["timestamp"].as_i64().unwrap_or(i64::MIN),
        v["leader_epoch"]
            .as_i64()
            .and_then(|e| i32::try_from(e).ok()),
    )
}

fn spec_name(s: OffsetSpec) -> String {
    match s {
        OffsetSpec::Earliest => "earliest".into(),
        OffsetSpec::Latest => "latest".into(),
        OffsetSpec::MaxTimestamp => "max timestamp".into(),
        OffsetSpec::Timestamp(t) => format!("timestamp {t}"),
    }
}

/// (c) ListOffsets: ours equals a brute-force answer from the records (control records
/// included: Kafka's lookup sees the markers' timestamps) and the broker's own answer recorded
/// in scenario.json. Offsets and timestamps are one check, the leader epochs another.
#[test]
#[ignore = "needs a broker partition dump: run interop/run.sh"]
fn offsets_for_time_equal_the_brokers() {
    let saved = saved();
    let mut report = Report::default();
    for (topic, dir, t) in saved.topics() {
        let broker = &t["list_offsets"];
        let mut problems = Vec::new();
        let mut epoch_problems = Vec::new();
        let mut asked = 0;
        let mut asked_broker = 0;
        for mode in Mode::BOTH {
            let opened = match open_copy(&dir, mode) {
                Ok(o) => o,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            let log = &opened.log;
            let records = match all_records(log) {
                Ok(r) => r,
                Err(e) => {
                    problems.push(format!("{}: {e}", mode.name()));
                    continue;
                }
            };
            // The queries: the broker's, every timestamp of the log and the millisecond before
            // and after it, and a few beyond.
            let mut queries: BTreeSet<i64> = [0, 1, i64::MAX].into();
            for &(_, ts, _) in &records {
                queries.extend([ts.saturating_sub(1), ts, ts.saturating_add(1)]);
            }
            if let Some(first) = records.iter().map(|r| r.1).min() {
                queries.insert(first.saturating_sub(1000).max(0));
            }
            let mut broker_answers: Vec<(OffsetSpec, &Value)> = Vec::new();
            for (key, spec) in [
                ("earliest", OffsetSpec::Earliest),
                ("latest", OffsetSpec::Latest),
                ("max_timestamp", OffsetSpec::MaxTimestamp),
            ] {
                if !broker[key].is_null() {
                    broker_answers.push((spec, &broker[key]));
                }
            }
            for a in broker["for_timestamp"].as_array().into_iter().flatten() {
                if let Some(q) = a["query"].as_i64() {
                    queries.insert(q);
                    broker_answers.push((OffsetSpec::Timestamp(q), a));
                }
            }
            let mut specs = vec![
                OffsetSpec::Earliest,
                OffsetSpec::Latest,
                OffsetSpec::MaxTimestamp,
            ];
            specs.extend(
                queries
                    .iter()
                    .filter(|&&q| q >= 0)
                    .map(|&q| OffsetSpec::Timestamp(q)),
            );
            let mut answered = std::collections::HashMap::new();
            for spec in specs {
                let got = match log.offsets(spec) {
                    Ok(r) => ours(&r),
                    Err(e) => {
                        problems.push(format!(
                            "{}: offsets({}) failed: {e}",
                            mode.name(),
                            spec_name(spec)
                        ));
                        continue;
                    }
                };
                answered.insert(format!("{spec:?}"), got);
                let want = brute_force(&records, log, spec);
                if (got.0, got.1) != (want.0, want.1) {
                    problems.push(format!(
                        "{}: {}: krec offset {} timestamp {}, the records say offset {} timestamp {}",
                        mode.name(),
                        spec_name(spec),
                        got.0,
                        got.1,
                        want.0,
                        want.1
                    ));
                } else if got.2 != want.2 {
                    epoch_problems.push(format!(
                        "{}: {}: krec leader epoch {:?}, its batch's {:?}",
                        mode.name(),
                        spec_name(spec),
                        got.2,
                        want.2
                    ));
                }
            }
            asked = answered.len();
            if broker.is_null() {
                continue;
            }
            if let Some(lso) = broker["latest_read_committed"]["offset"].as_i64() {
                if lso != log.last_stable_offset() {
                    problems.push(format!(
                        "{}: latest (read_committed): broker {lso}, krec last stable offset {}",
                        mode.name(),
                        log.last_stable_offset()
                    ));
                }
            }
            asked_broker = broker_answers.len();
            for (spec, a) in broker_answers {
                let theirs = broker_answer(a);
                let Some(&got) = answered.get(&format!("{spec:?}")) else {
                    continue;
                };
                if (got.0, got.1) != (theirs.0, theirs.1) {
                    problems.push(format!(
                        "{}: {}: broker offset {} timestamp {}, krec offset {} timestamp {}",
                        mode.name(),
                        spec_name(spec),
                        theirs.0,
                        theirs.1,
                        got.0,
                        got.1
                    ));
                } else if got.2 != theirs.2 {
                    epoch_problems.push(format!(
                        "{}: {}: broker leader epoch {:?}, krec {:?}",
                        mode.name(),
                        spec_name(spec),
                        theirs.2,
                        got.2
                    ));
                }
            }
        }
        if broker.is_null() {
            problems.push(
                "scenario.json has no list_offsets for this topic (an older BrokerScenario?)"
                    .into(),
            );
        }
        report.check(&format!("list-offsets/{topic}"), &problems, || {
            format!(
                "{asked} lookups (earliest, latest, max timestamp, timestamps) equal the records' answer, {asked_broker} \
                 equal the broker's ListOffsets answer (offset and timestamp), recovered and as written"
            )
        });
        report.check(
            &format!("list-offsets-epoch/{topic}"),
            &epoch_problems,
            || format!("leader epochs of the {asked} lookups equal the batches' and the broker's"),
        );
    }
    report.finish();
}

/// The broker's files of one kind in a partition directory: (base offset, path), sorted.
fn files_with(dir: &Path, suffix: &str) -> Vec<(i64, PathBuf)> {
    let mut out: Vec<(i64, PathBuf)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| {
                let e = e.ok()?;
                let name = e.file_name().to_str()?.to_owned();
                Some((files::parse_file_name(&name, suffix)?, e.path()))
            })
            .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn diff_lists<T: PartialEq + Debug>(what: &str, theirs: &[T], ours: &[T]) -> Vec<String> {
    if theirs == ours {
        return Vec::new();
    }
    let mut p = vec![format!(
        "{what}: broker {} entries, krec {}",
        theirs.len(),
        ours.len()
    )];
    let n = theirs.len().max(ours.len());
    for i in 0..n {
        let (a, b) = (theirs.get(i), ours.get(i));
        if a != b {
            p.push(format!("{what} entry {i}: broker {a:?}, krec {b:?}"));
        }
    }
    p
}

/// (d) The broker's `.txnindex` files: our parser reads them; our recovery of the same log
/// rebuilds the same entries, file by file and byte for byte; opened as written, the log lists
/// the broker's entries.
#[test]
#[ignore = "needs a broker partition dump: run interop/run.sh"]
fn txnindex_equals_the_brokers() {
    let saved = saved();
    let mut report = Report::default();
    for (topic, dir, t) in saved.topics() {
        let mut problems = Vec::new();
        let aborted_records = t["produced"]
            .as_array()
            .map_or(0, |p| p.iter().filter(|r| r["fate"] == "aborted").count());
        let mut theirs_all: Vec<AbortedTxn> = Vec::new();
        let broker_files = files_with(&dir, files::TXN_INDEX_SUFFIX);
        let mut theirs_by_file = Vec::new();
        for (base, path) in &broker_files {
            let bytes = std::fs::read(path).unwrap_or_default();
            match parse_txn_index(path, &bytes) {
                Ok(entries) => {
                    theirs_all.extend(entries.iter().copied());
                    theirs_by_file.push((*base, bytes, entries));
                }
                Err(e) => problems.push(format!(
                    "parse_txn_index on the broker's {}: {e}",
                    path.display()
                )),
            }
        }
        if aborted_records > 0 && theirs_all.is_empty() {
            problems.push(format!(
                "{aborted_records} records were aborted but the broker wrote no .txnindex entry ({} files)",
                broker_files.len()
            ));
        }
        match open_copy(&dir, Mode::Recovered) {
            Ok(opened) => {
                problems.extend(diff_lists(
                    "Log::aborted_txns after recovery",
                    &theirs_all,
                    &opened.log.aborted_txns(),
                ));
                let ours_files = files_with(&opened.dir, files::TXN_INDEX_SUFFIX);
                let our_bases: Vec<i64> = ours_files.iter().map(|f| f.0).collect();
                let their_bases: Vec<i64> = broker_files.iter().map(|f| f.0).collect();
                if our_bases != their_bases {
                    problems.push(format!(
                        ".txnindex files: broker at {their_bases:?}, krec at {our_bases:?}"
                    ));
                }
                for (base, their_bytes, entries) in &theirs_by_file {
                    let Some((_, path)) = ours_files.iter().find(|f| f.0 == *base) else {
                        continue;
                    };
                    let bytes = std::fs::read(path).unwrap_or_default();
                    match parse_txn_index(path, &bytes) {
                        Ok(ours) => problems.extend(diff_lists(
                            &files::file_name(*base, ".txnindex"),
                            entries,
                            &ours,
                        )),
                        Err(e) => problems.push(format!("our rebuilt {}: {e}", path.display())),
                    }
                    if &bytes != their_bytes {
                        problems.push(format!(
                            "{}: our rebuilt bytes differ from the broker's",
                            files::file_name(*base, ".txnindex")
                        ));
                    }
                }
            }
            Err(e) => problems.push(e),
        }
        match open_copy(&dir, Mode::AsWritten) {
            Ok(opened) => {
                problems.extend(diff_lists(
                    "Log::aborted_txns as written",
                    &theirs_all,
                    &opened.log.aborted_txns(),
                ));
                if opened.log.recovery_info().recovered_segments > 0 {
                    problems.push(format!(
                        "as written: {} segment(s) were rebuilt on open: {:?}",
                        opened.log.recovery_info().recovered_segments,
                        opened.log.recovery_info().problems
                    ));
                }
            }
            Err(e) => problems.push(e),
        }
        report.check(&format!("txnindex/{topic}"), &problems, || {
            let list: Vec<String> = theirs_all
                .iter()
                .map(|a| format!("pid {} {}..{} lso {}", a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset))
                .collect();
            format!(
                "{} .txnindex file(s) of the broker parsed, {} aborted transaction(s) [{}]; our recovery rebuilds them \
                 byte for byte; opened as written the log lists them",
                broker_files.len(),
                theirs_all.len(),
                list.join(", ")
            )
        });
    }
    report.finish();
}

fn sorted(mut v: Vec<ProducerSnapshotEntry>) -> Vec<ProducerSnapshotEntry> {
    v.sort_by_key(|e| e.producer_id);
    v
}

/// (d) The broker's `.snapshot` files: our parser reads them, and for each one (taken at a
/// segment roll or at the clean shutdown, offset X) our log rebuilt from the broker's segments
/// below X alone (no snapshot: producer state replayed from the log start) writes a snapshot at
/// X with the same entries (producer id, epoch, last sequence, last offset, offset delta,
/// timestamp, coordinator epoch, open transaction), and `Log::producer_states` agrees.
#[test]
#[ignore = "needs a broker partition dump: run interop/run.sh"]
fn snapshots_equal_the_brokers() {
    let saved = saved();
    let mut report = Report::default();
    for (topic, dir, t) in saved.topics() {
        let mut problems = Vec::new();
        let snapshots = files_with(&dir, files::SNAPSHOT_SUFFIX);
        let segments: Vec<i64> = files_with(&dir, files::LOG_SUFFIX)
            .iter()
            .map(|f| f.0)
            .collect();
        let has_producers = t["produced"]
            .as_array()
            .is_some_and(|p| p.iter().any(|r| r["producer"] != "plain"));
        if has_producers && snapshots.is_empty() {
            problems.push(
                "idempotent and transactional producers wrote, but the broker left no .snapshot"
                    .into(),
            );
        }
        let mut described = Vec::new();
        for (x, path) in &snapshots {
            let bytes = std::fs::read(path).unwrap_or_default();
            let theirs = match parse_snapshot(path, &bytes) {
                Ok(e) => sorted(e),
                Err(e) => {
                    problems.push(format!(
                        "parse_snapshot on the broker's {}: {e}",
                        path.display()
                    ));
                    continue;
                }
            };
            let x = *x;
            // The broker's segments below X, nothing else.
            let keep = |name: &str| {
                files::parse_file_name(name, files::LOG_SUFFIX).is_some_and(|b| b < x)
                    || name == files::LEADER_EPOCH_CHECKPOINT_FILE
            };
            if !segments.iter().any(|&b| b < x) {
                described.push(format!(
                    "{x}: {} producer(s), no segment below it",
                    theirs.len()
                ));
                if !theirs.is_empty() {
                    problems.push(format!(
                        "snapshot {x}: {} producers before any segment",
                        theirs.len()
                    ));
                }
                continue;
            }
            let opened = match open_copy_filtered(&dir, Mode::Recovered, keep) {
                Ok(o) => o,
                Err(e) => {
                    problems.push(format!("snapshot {x}: {e}"));
                    continue;
                }
            };
            let end = opened.log.log_end_offset();
            if end != x {
                problems.push(format!(
                    "snapshot {x}: the segments below it end at {end}, not at a segment boundary (not compared)"
                ));
                continue;
            }
            let ours_path = opened.dir.join(files::file_name(x, files::SNAPSHOT_SUFFIX));
            match std::fs::read(&ours_path)
                .map_err(|e| e.to_string())
                .and_then(|b| parse_snapshot(&ours_path, &b).map_err(|e| e.to_string()))
            {
                Ok(ours) => problems.extend(diff_lists(
                    &format!("snapshot {x} (sorted by producer id)"),
                    &theirs,
                    &sorted(ours),
                )),
                Err(e) => problems.push(format!(
                    "snapshot {x}: our log wrote no readable snapshot at {x}: {e}"
                )),
            }
            // The in-memory state, in the snapshot's terms.
            let states: Vec<(i64, i16, i32, Option<i64>)> = opened
                .log
                .producer_states()
                .iter()
                .map(|s| {
                    (
                        s.producer_id,
                        s.producer_epoch,
                        s.last_seq(),
                        s.current_txn_first_offset,
                    )
                })
                .collect();
            let want: Vec<(i64, i16, i32, Option<i64>)> = theirs
                .iter()
                .map(|e| {
                    (
                        e.producer_id,
                        e.producer_epoch,
                        e.last_sequence,
                        Some(e.current_txn_first_offset).filter(|&o| o >= 0),
                    )
                })
                .collect();
            if states != want {
                problems.push(format!(
                    "snapshot {x}: Log::producer_states (pid, epoch, last sequence, open txn) {states:?}, broker {want:?}"
                ));
            }
            described.push(format!(
                "{x}: {}",
                theirs
                    .iter()
                    .map(|e| format!(
                        "pid {} epoch {} seq {}",
                        e.producer_id, e.producer_epoch, e.last_sequence
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        report.check(&format!("snapshot/{topic}"), &problems, || {
            format!(
                "{} broker snapshot(s) parsed and rebuilt identically from the segments below them [{}]",
                snapshots.len(),
                described.join("; ")
            )
        });
    }
    report.finish();
}

/// Offset index entries (relative offset, position) and time index entries (timestamp,
/// relative offset) of a file: the first `n`, or when `n` is `None` all but a zero-filled tail
/// (a preallocated index that was not trimmed).
fn index_entries(path: &Path, size: usize, n: Option<u64>) -> Vec<(i64, i64)> {
    let bytes = std::fs::read(path).unwrap_or_default();
    let n = n.map_or_else(
        || {
            bytes
                .chunks_exact(size)
                .rposition(|c| c.iter().any(|&b| b != 0))
                .map_or(0, |i| i + 1)
        },
        |n| usize::try_from(n).unwrap_or(usize::MAX),
    );
    bytes
        .chunks_exact(size)
        .take(n)
        .map(|c| {
            if size == 8 {
                (
                    i64::from(i32::from_be_bytes([c[0], c[1], c[2], c[3]])),
                    i64::from(i32::from_be_bytes([c[4], c[5], c[6], c[7]])),
                )
            } else {
                let mut ts = [0u8; 8];
                ts.copy_from_slice(&c[..8]);
                (
                    i64::from_be_bytes(ts),
                    i64::from(i32::from_be_bytes([c[8], c[9], c[10], c[11]])),
                )
            }
        })
        .collect()
}

/// Every partition directory the broker left (its internal topics too) opens: recovered, with
/// nothing truncated and the scenario's log end offset; as written, with the broker's indexes
/// accepted (no segment rebuilt) and passing our index checks; read_uncommitted reads to the
/// high watermark. And our recovery rebuilds the broker's sparse `.index` and `.timeindex`
/// entries (Kafka's rule: an entry after more than `index.interval.bytes` of batches).
#[test]
#[ignore = "needs a broker partition dump: run interop/run.sh"]
fn every_broker_partition_opens() {
    let saved = saved();
    let mut report = Report::default();
    let topics = saved.topics();
    for (name, dir) in saved.partitions() {
        let mut problems = Vec::new();
        let mut detail = String::new();
        let scenario_end = topics
            .iter()
            .find(|(_, d, _)| d == &dir)
            .and_then(|(_, _, t)| t["list_offsets"]["latest"]["offset"].as_i64());
        // An index still preallocated (zero-filled tail): the broker did not close the segment
        // (its KRaft metadata log is left so). Kafka's own sanity check rejects such a time index
        // and rebuilds it, as ours does; and a rebuild (Kafka's LogSegment.recover as ours) ends
        // with the final time index entry that only a close would have written.
        let untrimmed = [files::INDEX_SUFFIX, files::TIME_INDEX_SUFFIX]
            .iter()
            .any(|suffix| {
                files_with(&dir, suffix).iter().any(|(_, path)| {
                    let size = if *suffix == files::INDEX_SUFFIX {
                        8
                    } else {
                        12
                    };
                    let len = std::fs::metadata(path).map_or(0, |m| m.len());
                    len as usize > index_entries(path, size, None).len() * size
                })
            });
        for mode in Mode::BOTH {
            let opened = match open_copy(&dir, mode) {
                Ok(o) => o,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            let log = &opened.log;
            let info = log.recovery_info();
            if info.truncated_bytes > 0 || !info.problems.is_empty() {
                problems.push(format!(
                    "{}: recovery truncated {} bytes: {:?}",
                    mode.name(),
                    info.truncated_bytes,
                    info.problems
                ));
            }
            if mode == Mode::AsWritten && info.recovered_segments > 0 && !untrimmed {
                problems.push(format!(
                    "as written: {} of {} segment(s) rebuilt on open (our checks rejected the broker's indexes)",
                    info.recovered_segments, info.segments
                ));
            }
            if let Some(end) = scenario_end {
                if end != log.log_end_offset() {
                    problems.push(format!(
                        "{}: log end offset {}, the broker's {end}",
                        mode.name(),
                        log.log_end_offset()
                    ));
                }
            }
            if let Err(e) = log.verify_indexes() {
                problems.push(format!("{}: verify_indexes: {e}", mode.name()));
            }
            match consume_all(log, IsolationLevel::ReadUncommitted, 1 << 20) {
                Ok((records, end)) => {
                    if end != log.high_watermark() {
                        problems.push(format!(
                            "{}: read_uncommitted stopped at {end} of {}",
                            mode.name(),
                            log.high_watermark()
                        ));
                    }
                    detail = format!(
                        "{} segment(s), offsets {}..{}, {} records",
                        info.segments,
                        log.log_start_offset(),
                        log.log_end_offset(),
                        records.len()
                    );
                }
                Err(e) => problems.push(format!("{}: {e}", mode.name())),
            }
            if mode == Mode::Recovered {
                // Our rebuilt indexes against the broker's (trimmed at its clean shutdown).
                let segs = log.info().map(|i| i.segments).unwrap_or_default();
                for s in &segs {
                    let base = s.base_offset;
                    for (suffix, size, ours_n) in [
                        (files::INDEX_SUFFIX, 8, s.offset_index_entries),
                        (files::TIME_INDEX_SUFFIX, 12, s.time_index_entries),
                    ] {
                        let fname = files::file_name(base, suffix);
                        let theirs = index_entries(&dir.join(&fname), size, None);
                        let ours = index_entries(&opened.dir.join(&fname), size, Some(ours_n));
                        let last = segs.last().map(|l| l.base_offset) == Some(base);
                        let final_entry_only = untrimmed
                            && last
                            && suffix == files::TIME_INDEX_SUFFIX
                            && ours.len() == theirs.len() + 1
                            && ours.starts_with(&theirs);
                        if theirs != ours && !final_entry_only {
                            problems.push(format!(
                                "{fname}{}: broker's entries {theirs:?}, our rebuilt {ours:?}",
                                if last { " (active segment)" } else { "" }
                            ));
                        }
                    }
                }
            }
        }
        report.check(&format!("open/{name}"), &problems, || {
            if untrimmed {
                format!(
                    "{detail}; opened recovered (nothing truncated, indexes rebuilt like the broker's, plus the final \
                     time index entry of Kafka's recovery) and as written (the broker left its indexes preallocated, \
                     unclosed: rebuilt, as Kafka's sanity check would have them)"
                )
            } else {
                format!(
                    "{detail}; opened recovered (nothing truncated, indexes rebuilt like the broker's) and as written \
                     (the broker's indexes accepted and verified)"
                )
            }
        });
    }
    report.finish();
}

/// The last value of each key a read_committed consumer ends with (tombstones remove the key;
/// records without a key, which compaction drops, are left out).
fn latest_per_key(log: &Log) -> Result<std::collections::BTreeMap<Vec<u8>, Vec<u8>>, String> {
    let (records, _) = consume_all(log, IsolationLevel::ReadCommitted, 1 << 20)?;
    let mut view = std::collections::BTreeMap::new();
    for r in records {
        let Some(key) = r.key else { continue };
        match r.value {
            Some(v) => view.insert(key, v),
            None => view.remove(&key),
        };
    }
    Ok(view)
}

/// Every partition the broker wrote (`__consumer_offsets` included; not the KRaft metadata log,
/// which Kafka never cleans), rolled and cleaned by us as `cleanup.policy=compact`: no error, the
/// same last value per key for a read_committed consumer, producer state unchanged, indexes
/// verify, and it reopens to the same records.
#[test]
#[ignore = "needs a broker partition dump: run interop/run.sh"]
fn every_broker_partition_is_recleaned() {
    let saved = saved();
    let mut report = Report::default();
    for (name, dir) in saved.partitions() {
        if name.starts_with("__cluster_metadata") {
            continue;
        }
        let mut problems = Vec::new();
        let mut detail = String::new();
        match open_copy(&dir, Mode::AsWritten) {
            Err(e) => problems.push(e),
            Ok(mut opened) => {
                let log = &mut opened.log;
                let run = (|| -> Result<Vec<String>, String> {
                    let mut problems = Vec::new();
                    let mut config = log.config().clone();
                    config
                        .set("cleanup.policy", "compact")
                        .map_err(|e| e.to_string())?;
                    log.update_config(config).map_err(|e| e.to_string())?;
                    log.roll().map_err(|e| e.to_string())?;
                    let before = latest_per_key(log)?;
                    let producers = log.producer_states();
                    let info = log.compact_now(i64::MAX / 2).map_err(|e| e.to_string())?;
                    detail = format!(
                        "{} records read, {} removed, {} -> {} bytes",
                        info.records_read,
                        info.records_removed,
                        info.bytes_before,
                        info.bytes_after
                    );
                    if latest_per_key(log)? != before {
                        problems.push("the last value per key changed".into());
                    }
                    if log.producer_states() != producers {
                        problems.push("producer state changed".into());
                    }
                    log.verify_indexes().map_err(|e| e.to_string())?;
                    Ok(problems)
                })();
                match run {
                    Ok(p) => problems.extend(p),
                    Err(e) => problems.push(e),
                }
                let dir = opened.dir.clone();
                drop(opened.log);
                match Log::open(&dir) {
                    Ok(log) => {
                        if let Err(e) = log.verify_indexes() {
                            problems.push(format!("after reopening: {e}"));
                        }
                    }
                    Err(e) => problems.push(format!("reopen: {e}")),
                }
            }
        }
        report.check(&format!("recleaned/{name}"), &problems, || detail.clone());
    }
    report.finish();
}
