//! `kafka://` sources against the test kit's fake cluster on 127.0.0.1: topic `t` (two
//! partitions of three batches each), topic `bad` (one partition whose second batch has magic
//! 7), `__transaction_state` (a broker-written segment) and topic `open` (three records, then a
//! transaction of producer 7 that is still open: last stable offset 3, high watermark 9).

use crate::util::{ints, record_offsets, run};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_testkit::batches::numbered;
use krecords_testkit::FakeCluster;
use std::sync::OnceLock;

const TS: i64 = 1_700_000_000_000;

/// Three batches of three records, offsets 0..9; record `o` has timestamp `TS + o`.
fn partition_log(p: i32) -> Vec<Vec<u8>> {
    numbered(3, 3, |o| {
        (
            TS + o,
            b"k".to_vec(),
            format!("p{p} value {o}").into_bytes(),
        )
    })
}

/// Topic `open`: a batch of three records, then producer 7's transaction of two batches with
/// no marker yet.
fn open_log() -> Vec<Vec<u8>> {
    let mut batches = vec![partition_log(0).remove(0)];
    for base in [3, 6] {
        let mut b = V2Builder::new(base)
            .producer(7, 0, i32::try_from(base - 3).unwrap())
            .transactional(true);
        for i in 0..3 {
            let o = base + i;
            b.append(&NewRecord::new(
                TS + o,
                None,
                Some(format!("txn {o}").as_bytes()),
            ))
            .unwrap();
        }
        batches.push(b.finish().unwrap());
    }
    batches
}

/// The broker-written `__transaction_state-0` segment of the decoder fixtures.
const TXN_FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/internal/__transaction_state-0/00000000000000000000.log"
);

/// The entries of a segment file as the fake serves them.
fn fixture_batches(path: &str) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).unwrap();
    krecords_codec::read::Entries::new(&bytes)
        .map(|e| e.unwrap().as_bytes().to_vec())
        .collect()
}

/// The fake's port (one fake for the whole test binary).
fn fake() -> u16 {
    static CLUSTER: OnceLock<FakeCluster> = OnceLock::new();
    CLUSTER
        .get_or_init(|| {
            let c = FakeCluster::start(&[
                ("t", 2),
                ("bad", 1),
                ("__transaction_state", 1),
                ("open", 1),
            ]);
            c.append("t", 0, &partition_log(0));
            c.append("t", 1, &partition_log(1));
            let mut bad = partition_log(0);
            bad[1][16] = 7; // the magic byte
            c.append("bad", 0, &bad);
            c.append("__transaction_state", 0, &fixture_batches(TXN_FIXTURE));
            let mut open = open_log();
            let txn = open.split_off(1);
            c.append("open", 0, &open);
            c.append_open("open", 0, 7, &txn);
            c
        })
        .broker()
        .port()
}

fn url(path: &str) -> String {
    format!("kafka://127.0.0.1:{}/{path}", fake())
}

const FAST: [&str; 4] = ["-X", "retries=1", "-X", "retry.backoff.ms=1"];

fn krec_live(args: &[&str]) -> crate::util::Run {
    let mut all: Vec<&str> = args.to_vec();
    all.extend_from_slice(&FAST);
    run(&all)
}

/// JSON lines without the fields that name where an entry was read.
fn without_place(lines: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    lines
        .into_iter()
        .map(|mut l| {
            let o = l.as_object_mut().unwrap();
            o.remove("file");
            o.remove("position");
            o.remove("partition");
            l
        })
        .collect()
}

fn partition_file(dir: &std::path::Path, p: i32) -> String {
    let path = dir.join(format!("p{p}.log"));
    std::fs::write(&path, partition_log(p).concat()).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn dump_json_of_a_live_partition_equals_the_dump_of_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let file = partition_file(dir.path(), 1);
    let live = krec_live(&["dump", "--deep", "--format", "json", &url("t/1")]);
    let lines = live.json_lines();
    assert_eq!(live.code, 0, "{}", live.stderr);
    assert_eq!(lines.len(), 3);
    for l in &lines {
        assert_eq!(l["partition"], 1);
        assert_eq!(l["file"], url("t/1"));
    }
    let from_file = run(&["dump", "--deep", "--format", "json", &file]).json_lines();
    assert_eq!(without_place(lines), without_place(from_file));
}

#[test]
fn dump_text_of_a_topic_is_every_partition_with_a_header() {
    let dir = tempfile::tempdir().unwrap();
    let live = krec_live(&["dump", "--deep", &url("t")]).ok();
    let h0 = format!("Dumping {}\n", url("t/0"));
    let h1 = format!("Dumping {}\n", url("t/1"));
    let (p0, p1) = live
        .strip_prefix(&h0)
        .and_then(|rest| rest.split_once(&h1))
        .unwrap_or_else(|| panic!("headers: {live}"));
    for (p, text) in [(0, p0), (1, p1)] {
        let file = partition_file(dir.path(), p);
        let from_file = run(&["dump", "--deep", &file]).ok();
        let body = from_file.split_once('\n').unwrap().1;
        assert_eq!(text, body, "partition {p}");
    }
}

#[test]
fn start_and_end_as_offsets_and_times() {
    let offsets = |args: &[&str]| -> Vec<i64> {
        let mut all = vec!["dump", "--format", "json"];
        all.extend_from_slice(args);
        let u = url("t/0");
        all.push(&u);
        let r = krec_live(&all);
        assert_eq!(r.code, 0, "{}", r.stderr);
        ints(&r.json_lines(), "base_offset")
    };
    assert_eq!(offsets(&[]), [0, 3, 6]);
    assert_eq!(offsets(&["--start", "3"]), [3, 6]);
    assert_eq!(offsets(&["--start", "4", "--end", "6"]), [3]);
    assert_eq!(offsets(&["--start", "latest"]), Vec::<i64>::new());
    // An empty range is a usage error, with the resolved offsets (issue 27, observation 3).
    let r = krec_live(&[
        "dump",
        "--start",
        "earliest",
        "--end",
        "earliest",
        &url("t/0"),
    ]);
    r.fails(
        2,
        "empty range: end earliest (offset 0) is not after start earliest",
    );
    let t = (TS + 6).to_string();
    assert_eq!(offsets(&["--start", &format!("@{t}")]), [6]);
    assert_eq!(offsets(&["--end", "2023-11-14T22:13:20.003Z"]), [0]);
    assert_eq!(
        offsets(&[
            "--isolation",
            "read-uncommitted",
            "--start",
            "@1800000000000"
        ]),
        Vec::<i64>::new()
    );
}

#[test]
fn stats_of_a_live_partition_equals_stats_of_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let file = partition_file(dir.path(), 0);
    // A live partition is counted as one, not as a file; everything else is the same.
    let same = |live: crate::util::Run, from_file: crate::util::Run| {
        assert_eq!(live.code, 0, "{}", live.stderr);
        let (mut live, mut from_file) = (live.json(), from_file.json());
        assert_eq!(
            (
                &live["summary"]["files"],
                &live["summary"]["live_partitions"]
            ),
            (&serde_json::json!(0), &serde_json::json!(1))
        );
        assert_eq!(
            (
                &from_file["summary"]["files"],
                &from_file["summary"]["live_partitions"]
            ),
            (&serde_json::json!(1), &serde_json::json!(0))
        );
        for j in [&mut live, &mut from_file] {
            j["summary"]["files"] = serde_json::json!(0);
            j["summary"]["live_partitions"] = serde_json::json!(0);
        }
        assert_eq!(live, from_file);
    };
    same(
        krec_live(&["stats", "--format", "json", &url("t/0")]),
        run(&["stats", "--format", "json", &file]),
    );
    let what_if = ["stats", "--what-if", "--no-timing", "--format", "json"];
    same(
        krec_live(&[&what_if[..], &[url("t/0").as_str()]].concat()),
        run(&[&what_if[..], &[file.as_str()]].concat()),
    );
    let text = krec_live(&["stats", &url("t/0")]);
    assert!(
        text.out().starts_with("1 live partition, "),
        "{}",
        text.out()
    );
}

#[test]
fn corrupt_data_from_the_broker_is_exit_1_after_the_good_entries() {
    let r = krec_live(&["dump", "--format", "json", &url("bad/0")]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 2, "{}", r.out());
    assert_eq!(lines[0]["base_offset"], 0);
    assert!(lines[1]["error"].is_string(), "{}", r.out());
    assert_eq!(lines[1]["partition"], 0, "{}", r.out());
}

#[test]
fn unknown_topic_refused_connection_and_bad_options_are_one_line_exit_2() {
    let r = krec_live(&["dump", &url("nope")]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("UNKNOWN_TOPIC_OR_PARTITION"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);

    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let r = krec_live(&["stats", &format!("kafka://127.0.0.1:{port}/t/0")]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("127.0.0.1:{port}")),
        "{}",
        r.stderr
    );

    let r = krec_live(&["dump", &url("t/9")]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = run(&["dump", "kafka://127.0.0.1:x/t"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = krec_live(&["dump", "--start", "soon", &url("t/0")]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = krec_live(&["dump", "-X", "no.such=1", &url("t/0")]);
    r.fails(2, "no.such");
}

#[test]
fn verify_of_a_live_topic_checks_every_partition() {
    let r = krec_live(&["verify", "--format", "json", &url("t")]);
    assert_eq!(r.code, 0, "{}{}", r.out(), r.stderr);
    let lines = r.json_lines();
    let s = &lines.last().unwrap()["summary"];
    assert_eq!(
        (
            s["files"].as_i64(),
            s["entries"].as_i64(),
            s["records"].as_i64()
        ),
        (Some(2), Some(6), Some(18)),
        "{s}"
    );

    let r = krec_live(&["verify", &url("bad/0")]);
    assert_eq!(r.code, 1, "{}{}", r.out(), r.stderr);
    assert!(r.out().contains(&url("bad/0")), "{}", r.out());
}

/// The internal-topic decoders work on a live partition too: chosen from the topic name, with
/// the same text as for the broker's own segment file.
#[test]
fn internal_topics_are_decoded_over_kafka_too() {
    let live = krec_live(&[
        "dump",
        "--deep",
        "--print-data",
        &url("__transaction_state/0"),
    ])
    .ok();
    let header = format!("Dumping {}\n", url("__transaction_state/0"));
    let body = live
        .strip_prefix(&header)
        .unwrap_or_else(|| panic!("{live}"));
    let from_file = run(&["dump", "--deep", "--print-data", TXN_FIXTURE]).ok();
    // "Dumping FILE" and the "Log starting offset" line of a segment file name.
    let file_body = from_file
        .split_once('\n')
        .unwrap()
        .1
        .strip_prefix("Log starting offset: 0\n")
        .unwrap();
    assert_eq!(body, file_body);
    assert!(body.contains("transactionalId"), "{body}");
}

#[test]
fn explain_of_a_live_partition_equals_explain_of_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let file = partition_file(dir.path(), 0);
    let live = krec_live(&["explain", "--count", "2", &url("t/0")]);
    assert_eq!(live.code, 0, "{}", live.stderr);
    let from_file = run(&["explain", "--count", "2", &file]).ok();
    assert_eq!(live.out(), from_file);
    // One entry by default; --start picks the batch holding that offset.
    let one = krec_live(&["explain", "--start", "7", &url("t/0")]).ok();
    assert!(one.starts_with("# magic 2 record batch at byte 0"), "{one}");
    assert!(one.contains("base offset                    6"), "{one}");
    assert_eq!(one.matches("# magic 2 record batch").count(), 1, "{one}");
    let r = krec_live(&["explain", &url("t")]);
    r.fails(2, "reads one partition");
}

#[test]
fn convert_of_a_live_partition_is_a_partition_directory_with_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t-1");
    let r = krec_live(&["convert", &url("t/1"), out.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let segment = std::fs::read(out.join("00000000000000000000.log")).unwrap();
    assert_eq!(segment, partition_log(1).concat());
    for index in [
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
    ] {
        assert!(out.join(index).exists(), "{index}");
    }
    let v = run(&["verify", out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "{}{}", v.out(), v.stderr);
    // A consumer's view of the copy is the consumer's view of the live partition.
    let copy = run(&["log", "read", "--bytes", "hex", out.to_str().unwrap()]).ok();
    let live = krec_live(&["log", "read", "--bytes", "hex", &url("t/1")]).ok();
    assert_eq!(copy.lines().count(), 9);
    assert_eq!(copy, live);
    let live = krec_live(&[
        "log",
        "read",
        "--offset",
        "4",
        "--max-bytes",
        "1",
        &url("t/1"),
    ])
    .ok();
    let offsets: Vec<&str> = live.lines().map(|l| &l[..12]).collect();
    assert_eq!(offsets, [r#"{"offset":4,"#, r#"{"offset":5,"#]);
    // A non-empty target is refused and left alone.
    let r = krec_live(&["convert", &url("t/1"), out.to_str().unwrap()]);
    r.fails(2, "already holds files");
}

/// Observation 1 of issue 27: a live read defaulted to read_committed and stopped silently at
/// the last stable offset. Now every inspecting command reads everything by default, and a
/// read_committed read says where it stopped and why.
#[test]
fn inspecting_commands_read_uncommitted_and_say_why_a_committed_read_stops() {
    let u = url("open/0");
    let summary = |r: &crate::util::Run| r.out().lines().last().unwrap_or_default().to_owned();
    let r = krec_live(&["verify", &u]);
    assert_eq!(r.code, 0, "{}{}", r.out(), r.stderr);
    assert!(
        summary(&r).contains("1 live partition, 3 entries, 9 records"),
        "{}",
        r.out()
    );
    let r = krec_live(&["verify", "--isolation", "read-committed", &u]);
    assert_eq!(r.code, 0, "{}{}", r.out(), r.stderr);
    assert!(
        summary(&r).contains("1 live partition, 1 entry, 3 records"),
        "{}",
        r.out()
    );
    assert!(
        r.out().contains(&format!(
            "{u}: stopped at last stable offset 3; high watermark 9: an open transaction from \
             producer 7 since offset 3"
        )),
        "{}",
        r.out()
    );
    // dump and log read agree: everything by default.
    let dumped = krec_live(&["dump", "--deep", "--format", "json", &u]).json_lines();
    assert_eq!(dumped.len(), 3);
    let read = krec_live(&["log", "read", &u]).ok();
    assert_eq!(read.lines().count(), 9);
    let r = krec_live(&["log", "read", "--isolation", "read-committed", &u]);
    assert_eq!(r.ok().lines().count(), 3);
    assert!(
        r.stderr.contains("stopped at last stable offset 3"),
        "{}",
        r.stderr
    );
    let r = krec_live(&["dump", "--isolation", "read-committed", &u]);
    assert!(
        r.stderr.contains("stopped at last stable offset 3"),
        "{}",
        r.stderr
    );
}

/// Observations 2 and 4: positions trim to records on a live partition, and count from the end.
#[test]
fn live_positions_trim_records_and_count_from_the_end() {
    let record_offsets = |args: &[&str]| -> Vec<i64> {
        let u = url("t/0");
        let mut all = vec!["dump", "--deep", "--format", "json"];
        all.extend_from_slice(args);
        all.push(&u);
        let r = krec_live(&all);
        assert_eq!(r.code, 0, "{}", r.stderr);
        record_offsets(&r.json_lines())
    };
    assert_eq!(record_offsets(&["--start", "5", "--end", "8"]), [5, 6, 7]);
    assert_eq!(record_offsets(&["--start", "-2"]), [7, 8]);
    assert_eq!(
        record_offsets(&["--start", "1", "--count", "4"]),
        [1, 2, 3, 4]
    );
    let t = format!("@{}", TS + 4);
    assert_eq!(record_offsets(&["--start", &t, "--end", "6"]), [4, 5]);
}

/// Observation 3: an inverted range and an offset outside the partition are usage errors with
/// the same message as on files.
#[test]
fn live_ranges_outside_the_partition_are_usage_errors() {
    let u = url("t/0");
    let r = krec_live(&["dump", "--start", "7", "--end", "5", &u]);
    r.fails(2, "empty range: end 5 is not after start 7");
    assert_eq!(r.out(), "");
    for cmd in [
        &["log", "read", "--offset", "5000"][..],
        &["dump", "--start", "5000"][..],
    ] {
        let mut args = cmd.to_vec();
        args.push(&u);
        let r = krec_live(&args);
        assert_eq!(r.code, 2, "{cmd:?}: {}", r.stderr);
        assert!(
            r.stderr
                .ends_with("offset 5000 is out of range: the partition holds [0, 9)\n"),
            "{cmd:?}: {}",
            r.stderr
        );
    }
}

/// Observation 8 (log info|offsets of a live partition): answered from the cluster.
#[test]
fn log_info_and_offsets_of_a_live_partition_come_from_the_cluster() {
    let r = krec_live(&["log", "info", &url("open/0")]);
    assert_eq!(
        r.json(),
        serde_json::json!({"log_start_offset": 0, "high_watermark": 9, "last_stable_offset": 3}),
        "{}",
        r.stderr
    );
    let latest = |iso: &str| {
        krec_live(&[
            "log",
            "offsets",
            "--latest",
            "--isolation",
            iso,
            &url("open/0"),
        ])
        .json()
    };
    assert_eq!(latest("read-committed")["offset"], 3);
    assert_eq!(latest("read-uncommitted")["offset"], 9);
    let t = (TS + 4).to_string();
    let r = krec_live(&["log", "offsets", "--time", &t, &url("t/0")]).json();
    assert_eq!(r["offset"], 4);
    let r = krec_live(&["log", "info", &url("t")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("reads one partition"), "{}", r.stderr);
}

/// Issue 30, item 8: an unknown topic reads the same in every command: Kafka's code and the
/// sentence "the topic does not exist".
#[test]
fn an_unknown_topic_reads_the_same_in_dump_verify_and_ship() {
    let d = crate::util::Dir::new();
    let part = d.path("orders-0");
    std::fs::create_dir_all(&part).unwrap();
    for args in [
        vec!["dump".to_owned(), url("nope")],
        vec!["verify".to_owned(), url("nope")],
        vec!["ship".to_owned(), part.display().to_string(), url("nope")],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = krec_live(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("nope") && r.stderr.contains("the topic does not exist"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

/// `kafka://localhost:PORT/...`: the fake on 127.0.0.1 under another spelling of its address.
fn url_by_name(path: &str) -> String {
    format!("kafka://localhost:{}/{path}", fake())
}

/// A partition named under two spellings of its cluster's servers (`localhost` and
/// `127.0.0.1`: one cluster, by its cluster id) is read once, each record printed once and the
/// repeat said on stderr with the name it is read as.
#[test]
fn dump_of_a_partition_spelled_twice_prints_each_record_once() {
    let (by_name, by_ip) = (url_by_name("t/0"), url("t/0"));
    let once = krec_live(&["dump", "--deep", "--format", "json", &by_ip]);
    assert_eq!(once.code, 0, "{}", once.stderr);
    let twice = krec_live(&["dump", "--deep", "--format", "json", &by_name, &by_ip]);
    assert_eq!(twice.code, 0, "{}", twice.stderr);
    let lines = twice.json_lines();
    assert_eq!(record_offsets(&lines), (0..9).collect::<Vec<i64>>());
    assert!(lines.iter().all(|l| l["file"] == by_name.as_str()));
    assert_eq!(without_place(lines), without_place(once.json_lines()));
    assert_eq!(
        twice.stderr,
        format!(
            "krec: {by_ip}: named more than once (as {by_name}, of the same cluster), read once\n"
        )
    );
}

/// `verify`, `sql --table` and `export` of a topic and one of its partitions spelled otherwise
/// read that partition once, and say so.
#[test]
fn verify_sql_and_export_read_a_partition_spelled_twice_once() {
    let (topic, one) = (url_by_name("t"), url("t/0"));
    let note = format!(
        "{one}: named more than once (as {}, of the same cluster), read once\n",
        url_by_name("t/0")
    );
    let r = krec_live(&["verify", "--format", "json", &topic, &one]);
    assert_eq!(r.code, 0, "{}{}", r.out(), r.stderr);
    let lines = r.json_lines();
    let s = &lines.last().unwrap()["summary"];
    assert_eq!(
        (s["files"].as_i64(), s["records"].as_i64()),
        (Some(2), Some(18)),
        "{s}"
    );
    assert_eq!(r.stderr, format!("krec: {note}"));

    let per_partition = |table: &str| {
        let table = format!("t={table}");
        let query = "SELECT partition, count(*) AS n, count(DISTINCT \"offset\") AS o FROM t \
                     GROUP BY partition ORDER BY partition";
        let r = krec_live(&["sql", query, "--table", &table, "--format", "csv"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        (r.out(), r.stderr)
    };
    let (rows, stderr) = per_partition(&format!("{topic},{one}"));
    assert_eq!(rows, "partition,n,o\n0,9,9\n1,9,9\n");
    assert_eq!(stderr, format!("krec sql: {note}"));

    let d = crate::util::Dir::new();
    let out = d.arg("out");
    let r = krec_live(&["export", &topic, &one, "--output", &out]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains(&format!("krec: {note}")), "{}", r.stderr);
    let (rows, _) = per_partition(&out);
    assert_eq!(rows, "partition,n,o\n0,9,9\n1,9,9\n");
}

/// A broker that stops in the middle of a read (one batch per Fetch, the second Fetch
/// unanswered): the error says the partition and the first offset not read, naming the URL
/// once (it said `cannot read URL: URL: ...`), in every command that reads records.
#[test]
fn a_broker_that_stops_mid_read_says_where_the_read_stopped() {
    let c = FakeCluster::start(&[("t", 1)]);
    c.append("t", 0, &partition_log(0));
    let u = format!("kafka://{}/t/0", c.addr());
    let table = format!("t={u}");
    let d = crate::util::Dir::new();
    let out = d.arg("out");
    for args in [
        &["dump", &u][..],
        &["stats", &u],
        &["verify", &u],
        &["log", "read", &u],
        &["sql", "SELECT count(*) FROM t", "--table", &table],
        &["export", &u, "--output", &out],
    ] {
        let mut args = args.to_vec();
        args.extend(["-X", "max.partition.fetch.bytes=1"]);
        args.extend_from_slice(&FAST);
        c.stop_after_fetches(1);
        let r = run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        r.one_line();
        let said = format!("krec: {u}: stopped at offset 3 (not read): ");
        assert!(r.stderr.starts_with(&said), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("connection closed"),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(r.stderr.matches(&u).count(), 1, "{args:?}: {}", r.stderr);
        if args[0] == "dump" {
            assert!(
                r.out().contains("baseOffset: 0 lastOffset: 2"),
                "{}",
                r.out()
            );
            assert!(!r.out().contains("baseOffset: 3"), "{}", r.out());
        }
    }
}

/// A topic named by a kafka:// URL and by --topic too (both were taken, the URL's topic
/// filtered by the globs) is a usage error in every command that takes --topic; a partition
/// named by the URL and by --partition too, the same.
#[test]
fn a_topic_in_the_url_and_with_topic_too_is_a_usage_error() {
    let u = url("t");
    let said = format!("{u}: the topic is given twice, in the URL and with --topic: give it once");
    let d = crate::util::Dir::new();
    let out = d.arg("out");
    for args in [
        &["dump", &u, "--topic", "t"][..],
        &["dump", &u, "--topic", "other"],
        &["verify", &u, "--topic", "t*"],
        &["export", &u, "--topic", "t", "--output", &out],
        &["metadata", &u, "--topic", "t"],
        &["offsets", &u, "--topic", "t"],
    ] {
        let r = krec_live(args);
        r.fails(2, &said);
        r.one_line();
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.out());
    }
    assert!(!std::path::Path::new(&out).exists());
    let one = url("t/0");
    krec_live(&["verify", &one, "--partition", "0"]).fails(
        2,
        &format!(
            "{one}: the partition is given twice, in the URL and with --partition: give it once"
        ),
    );
    // The cluster's URL without a topic: --topic chooses.
    let cluster = format!("kafka://127.0.0.1:{}", fake());
    let r = krec_live(&["offsets", &cluster, "--topic", "t", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json_lines().len(), 2, "{}", r.out());
}
