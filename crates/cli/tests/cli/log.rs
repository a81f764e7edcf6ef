//! `krec log` through the binary: docs/design.md's JSON shapes for create, append, end-txn, read,
//! offsets, info, retain and recover; rejected appends (exit 1, nothing written, all or nothing
//! per command); idempotent retries, sequence gaps, zombie epochs and fenced coordinators;
//! transactions read at both isolation levels; usage and storage errors (exit 2).

use crate::util::{ints, misname_third_segment, Dir, Run, COMMIT_MARKER};
use serde_json::{json, Value};

const T0: i64 = 1_714_000_000_000;

/// JSON lines of `n` records with values `v0..`, keys `k0..` and timestamps `T0 + i`.
fn records(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{{\"timestamp\":{},\"key\":\"k{i}\",\"value\":\"v{i}\"}}\n",
                T0 + i as i64
            )
        })
        .collect()
}

/// Creates a log `name` with `configs` and returns its path argument.
fn create(d: &Dir, name: &str, configs: &[&str]) -> String {
    let mut args = vec!["log", "create", name];
    for c in configs {
        args.push("--config");
        args.push(c);
    }
    d.run(&args, b"").ok();
    d.arg(name)
}

/// Every file of the log directory with its bytes, to show that nothing changed.
fn snapshot(d: &Dir, name: &str) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(d.path(name))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().into_string().unwrap(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn create_prints_the_config_and_lays_out_a_kafka_partition() {
    let d = Dir::new();
    let r = d.run(
        &[
            "log",
            "create",
            "events-0",
            "--config",
            "segment.bytes=1000",
            "--config",
            "message.format.version=0.10.2",
        ],
        b"",
    );
    r.ok();
    let j = r.json();
    assert_eq!(j["dir"], "events-0");
    assert_eq!(j["config"]["segment.bytes"], 1000);
    assert_eq!(j["config"]["message.format.version"], "0.10.2");
    assert_eq!(j["config"]["cleanup.policy"], "delete");
    for f in [
        "00000000000000000000.log",
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
        "krec-log.json",
    ] {
        assert!(d.path("events-0").join(f).exists(), "{f}");
    }
    // Closed cleanly.
    assert!(d.path("events-0/krec-clean-shutdown").exists());
}

#[test]
fn append_prints_one_line_per_batch_and_read_returns_every_record() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    let r = d.run(
        &["log", "append", &log, "--records-per-batch", "2"],
        records(5).as_bytes(),
    );
    assert_eq!(
        r.ok(),
        concat!(
            r#"{"base_offset":0,"last_offset":1,"log_append_time":null,"duplicate":false}"#,
            "\n",
            r#"{"base_offset":2,"last_offset":3,"log_append_time":null,"duplicate":false}"#,
            "\n",
            r#"{"base_offset":4,"last_offset":4,"log_append_time":null,"duplicate":false}"#,
            "\n"
        )
    );
    let out = d.run(&["log", "read", &log], b"").ok();
    let expected: String = (0..5)
        .map(|i| {
            format!(
                "{{\"offset\":{i},\"timestamp\":{},\"key\":\"k{i}\",\"value\":\"v{i}\",\"headers\":[]}}\n",
                T0 + i
            )
        })
        .collect();
    assert_eq!(out, expected);
    // A second append continues the offsets.
    let r = d.run(&["log", "append", &log], records(1).as_bytes());
    assert_eq!(
        r.json(),
        json!({"base_offset":5,"last_offset":5,"log_append_time":null,"duplicate":false})
    );
}

#[test]
fn read_skips_records_below_the_offset_and_stops_at_max_bytes() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    d.run(
        &["log", "append", &log, "--records-per-batch", "2"],
        records(6).as_bytes(),
    )
    .ok();
    // Offset 3 is in the batch 2..=3: the consumer skips offset 2.
    let lines = d
        .run(&["log", "read", &log, "--offset", "3"], b"")
        .json_lines();
    assert_eq!(ints(&lines, "offset"), [3, 4, 5]);
    // A byte limit below one batch still returns the first batch whole, and no more.
    let lines = d
        .run(
            &["log", "read", &log, "--offset", "3", "--max-bytes", "1"],
            b"",
        )
        .json_lines();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["offset"], 3);
    // Two batches' worth.
    let lines = d
        .run(&["log", "read", &log, "--max-bytes", "170"], b"")
        .json_lines();
    assert_eq!(lines.len(), 4);
    // At the log end: nothing.
    assert_eq!(d.run(&["log", "read", &log, "--offset", "6"], b"").ok(), "");
    // Bytes rendered on request.
    let lines = d
        .run(
            &["log", "read", &log, "--offset", "5", "--bytes", "hex"],
            b"",
        )
        .json_lines();
    assert_eq!(lines[0]["value"], "7635");
}

#[test]
fn headers_and_null_keys_survive_append_and_read() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    let input = format!(
        "{{\"timestamp\":{T0},\"key\":null,\"value\":null,\"headers\":[{{\"key\":\"h\",\"value\":\"x\"}},{{\"key\":\"h\",\"value\":null}}]}}\n"
    );
    d.run(&["log", "append", &log], input.as_bytes()).ok();
    let out = d.run(&["log", "read", &log], b"").ok();
    assert_eq!(
        out,
        format!("{{\"offset\":0,\"timestamp\":{T0},\"key\":null,\"value\":null,\"headers\":[{{\"key\":\"h\",\"value\":\"x\"}},{{\"key\":\"h\",\"value\":null}}]}}\n")
    );
}

#[test]
fn append_in_old_formats_and_with_compression() {
    let d = Dir::new();
    let log = create(&d, "p", &["message.format.version=0.10.2"]);
    for (magic, codec) in [("0", "none"), ("1", "gzip"), ("2", "lz4"), ("2", "snappy")] {
        d.run(
            &[
                "log",
                "append",
                &log,
                "--magic",
                magic,
                "--compression",
                codec,
                "--records-per-batch",
                "2",
            ],
            records(3).as_bytes(),
        )
        .ok();
    }
    let lines = d.run(&["log", "read", &log], b"").json_lines();
    assert_eq!(lines.len(), 12);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["offset"], i as i64);
        assert_eq!(l["value"], format!("v{}", i % 3));
    }
    // The log stores its own format (v1 for 0.10.2) whatever was sent.
    let dump = d.run(&["dump", "--format", "json", &log], b"").json_lines();
    assert!(dump.iter().all(|e| e["magic"] == 1), "{dump:?}");
    assert_eq!(d.run(&["verify", &log], b"").code, 0);
    // zstd cannot be stored in v1.
    let r = d.run(
        &["log", "append", &log, "--compression", "zstd"],
        records(1).as_bytes(),
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"], "UNSUPPORTED_COMPRESSION_TYPE");
}

#[test]
fn log_append_time_is_reported() {
    let d = Dir::new();
    let log = create(&d, "p", &["message.timestamp.type=LogAppendTime"]);
    let r = d.run(&["log", "append", &log], records(2).as_bytes());
    let j = r.json();
    let t = j["log_append_time"].as_i64().expect("a timestamp");
    assert!(t > T0);
    let lines = d.run(&["log", "read", &log], b"").json_lines();
    assert!(lines.iter().all(|l| l["timestamp"] == t));
}

#[test]
fn producer_options_go_into_the_batches() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    d.run(
        &[
            "log",
            "append",
            &log,
            "--producer-id",
            "7",
            "--producer-epoch",
            "2",
            "--base-sequence",
            "5",
            "--transactional",
            "--records-per-batch",
            "2",
        ],
        records(3).as_bytes(),
    )
    .ok();
    let dump = d.run(&["dump", "--format", "json", &log], b"").json_lines();
    assert_eq!(dump.len(), 2);
    for (e, seq) in dump.iter().zip([5, 7]) {
        assert_eq!(e["producer_id"], 7);
        assert_eq!(e["producer_epoch"], 2);
        assert_eq!(e["base_sequence"], seq);
        assert_eq!(e["transactional"], true);
    }
    // Idempotent without a transaction: the sequence defaults to 0.
    let log2 = create(&d, "q", &[]);
    d.run(
        &[
            "log",
            "append",
            &log2,
            "--producer-id",
            "9",
            "--producer-epoch",
            "0",
        ],
        records(1).as_bytes(),
    )
    .ok();
    let dump = d
        .run(&["dump", "--format", "json", &log2], b"")
        .json_lines();
    assert_eq!(
        (
            &dump[0]["producer_id"],
            &dump[0]["base_sequence"],
            &dump[0]["transactional"]
        ),
        (&json!(9), &json!(0), &json!(false))
    );
}

#[test]
fn producer_option_mistakes_are_usage_errors() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    let before = snapshot(&d, "p");
    for args in [
        vec!["--transactional"],
        vec!["--producer-id", "1"],
        vec!["--producer-epoch", "1"],
        vec![
            "--magic",
            "1",
            "--producer-id",
            "1",
            "--producer-epoch",
            "0",
        ],
    ] {
        let mut all = vec!["log", "append", log.as_str()];
        all.extend(args.iter());
        let r = d.run(&all, records(1).as_bytes());
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(r.out(), "");
    }
    // Offsets are the log's to assign.
    let r = d.run(
        &["log", "append", &log],
        b"{\"offset\":5,\"value\":\"x\"}\n",
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("offset"), "{}", r.stderr);
    assert_eq!(snapshot(&d, "p"), before);
}

#[test]
fn raw_append_takes_entries_as_a_producer_sends_them() {
    let d = Dir::new();
    let log = create(&d, "p", &["message.format.version=0.10.2"]);
    // Three v1 messages: one append.
    let v1 = d
        .run(&["build", "--magic", "1"], records(3).as_bytes())
        .stdout;
    let r = d.run(&["log", "append", &log, "--raw"], &v1);
    assert_eq!(
        r.ok(),
        "{\"base_offset\":0,\"last_offset\":2,\"log_append_time\":null,\"duplicate\":false}\n"
    );
    // A v2 batch with base offset 0 (as a producer sends it), then a gzip v1 wrapper: two
    // appends.
    let mut input = d.run(&["build"], records(2).as_bytes()).stdout;
    input.extend(
        d.run(
            &["build", "--magic", "1", "--compression", "gzip"],
            records(2).as_bytes(),
        )
        .stdout,
    );
    let r = d.run(&["log", "append", &log, "--raw"], &input);
    let lines = r.json_lines();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(lines.len(), 2);
    assert_eq!(
        (&lines[0]["base_offset"], &lines[0]["last_offset"]),
        (&json!(3), &json!(4))
    );
    assert_eq!(
        (&lines[1]["base_offset"], &lines[1]["last_offset"]),
        (&json!(5), &json!(6))
    );
    let values: Vec<String> = d
        .run(&["log", "read", &log], b"")
        .json_lines()
        .iter()
        .map(|l| l["value"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(values, ["v0", "v1", "v2", "v0", "v1", "v0", "v1"]);
}

#[test]
fn a_raw_append_with_a_corrupt_entry_writes_nothing() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    d.run(&["log", "append", &log], records(2).as_bytes()).ok();
    let good = d.run(&["build"], records(1).as_bytes()).stdout;
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0x01; // inside the record: the CRC no longer matches
    let mut input = good.clone();
    input.extend_from_slice(&bad);
    let before = snapshot(&d, "p");
    let r = d.run(&["log", "append", &log, "--raw"], &input);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["error"], "CORRUPT_MESSAGE");
    let msg = j["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("byte {}", good.len())) && msg.contains("crc"),
        "{msg}"
    );
    assert!(r.stderr.contains("CORRUPT_MESSAGE"), "{}", r.stderr);
    // Not even the good first entry was written.
    assert_eq!(snapshot(&d, "p"), before);
    assert_eq!(d.run(&["log", "read", &log], b"").json_lines().len(), 2);
}

#[test]
fn a_raw_append_with_a_corrupt_size_in_the_middle_is_refused_not_cut_short() {
    // Issue 19: a size field made huge by corruption used to read as a truncated tail: the
    // entries from there on were dropped with a note and the ones before it appended.
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    let one = d.run(&["build"], records(1).as_bytes()).stdout;
    let mut input = [one.clone(), one.clone(), one.clone()].concat();
    input[one.len() + 8..one.len() + 12].copy_from_slice(&50_000_000i32.to_be_bytes());
    let before = snapshot(&d, "p");
    let r = d.run(&["log", "append", &log, "--raw"], &input);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["error"], "CORRUPT_MESSAGE");
    let msg = j["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("{}", one.len() + 8)) && msg.contains("50000000"),
        "{msg}"
    );
    assert_eq!(snapshot(&d, "p"), before);
    // A tail cut short within max.message.bytes is still dropped with a note, as before.
    let cut = &input[..one.len() + 20];
    let mut cut = cut.to_vec();
    cut[one.len() + 8..one.len() + 12].copy_from_slice(&(one.len() as i32 - 12).to_be_bytes());
    let r = d.run(&["log", "append", &log, "--raw"], &cut);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("dropped 20 bytes"), "{}", r.stderr);
    assert_eq!(d.run(&["log", "read", &log], b"").json_lines().len(), 1);
}

#[test]
fn a_rejected_json_append_writes_nothing() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    let before = snapshot(&d, "p");
    // The second batch is an hour and more in the future: INVALID_TIMESTAMP, and the first
    // batch is not written either.
    let input = "{\"value\":\"ok\"}\n{\"timestamp\":9999999999999,\"value\":\"late\"}\n";
    let r = d.run(
        &["log", "append", &log, "--records-per-batch", "1"],
        input.as_bytes(),
    );
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["error"], "INVALID_TIMESTAMP");
    assert!(
        j["message"]
            .as_str()
            .unwrap()
            .starts_with("batch of input records 2..=2"),
        "{j}"
    );
    assert_eq!(snapshot(&d, "p"), before);
    // A batch over max.message.bytes.
    let log2 = create(&d, "q", &["max.message.bytes=100"]);
    let r = d.run(&["log", "append", &log2], records(5).as_bytes());
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"], "MESSAGE_TOO_LARGE");
    // A client may not send control batches.
    let marker = d.run(&COMMIT_MARKER, b"").stdout;
    let r = d.run(&["log", "append", &log, "--raw"], &marker);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"], "INVALID_RECORD");
    assert_eq!(snapshot(&d, "p"), before);
}

#[test]
fn offsets_answer_list_offsets() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    let input = [3, 1, 7, 7, 2]
        .iter()
        .enumerate()
        .map(|(i, dt)| format!("{{\"timestamp\":{},\"value\":\"v{i}\"}}\n", T0 + dt))
        .collect::<String>();
    d.run(
        &["log", "append", &log, "--records-per-batch", "1"],
        input.as_bytes(),
    )
    .ok();
    let q = |spec: &[&str]| {
        let mut args = vec!["log", "offsets", log.as_str()];
        args.extend_from_slice(spec);
        d.run(&args, b"").json()
    };
    assert_eq!(q(&["--earliest"]), json!({"offset":0,"timestamp":null}));
    assert_eq!(q(&["--latest"]), json!({"offset":5,"timestamp":null}));
    assert_eq!(
        q(&["--max-timestamp"]),
        json!({"offset":2,"timestamp":T0 + 7})
    );
    let t = (T0 + 5).to_string();
    assert_eq!(q(&["--time", &t]), json!({"offset":2,"timestamp":T0 + 7}));
    // ISO 8601 too, as `krec offsets --time` and positions take it (T0 is 23:06:40Z).
    assert_eq!(
        q(&["--time", "2024-04-24T23:06:40.005Z"]),
        json!({"offset":2,"timestamp":T0 + 7})
    );
    let t = (T0 + 100).to_string();
    assert_eq!(q(&["--time", &t]), json!({"offset":-1,"timestamp":null}));
    // Exactly one of the four.
    assert_eq!(d.run(&["log", "offsets", &log], b"").code, 2);
    assert_eq!(
        d.run(&["log", "offsets", &log, "--earliest", "--latest"], b"")
            .code,
        2
    );
}

#[test]
fn info_lists_offsets_and_segments() {
    let d = Dir::new();
    let log = create(&d, "p", &["segment.bytes=200", "index.interval.bytes=0"]);
    d.run(
        &["log", "append", &log, "--records-per-batch", "2"],
        records(6).as_bytes(),
    )
    .ok();
    let j = d.run(&["log", "info", &log], b"").json();
    let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "log_start_offset",
            "high_watermark",
            "last_stable_offset",
            "segments"
        ]
    );
    assert_eq!(j["log_start_offset"], 0);
    assert_eq!(j["high_watermark"], 6);
    assert_eq!(j["last_stable_offset"], 6);
    let segments = j["segments"].as_array().unwrap();
    assert!(segments.len() >= 2, "{j}");
    assert_eq!(segments[0]["file"], "00000000000000000000.log");
    assert_eq!(segments[0]["base_offset"], 0);
    let total: u64 = segments
        .iter()
        .map(|s| s["size_bytes"].as_u64().unwrap())
        .sum();
    let on_disk: u64 = segments
        .iter()
        .map(|s| {
            std::fs::metadata(d.path("p").join(s["file"].as_str().unwrap()))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(total, on_disk);
    assert_eq!(segments.last().unwrap()["next_offset"], 6);
}

#[test]
fn compact_keeps_the_latest_record_of_each_key() {
    let d = Dir::new();
    let log = create(
        &d,
        "c",
        &[
            "cleanup.policy=compact",
            "segment.bytes=200",
            "delete.retention.ms=1000",
        ],
    );
    let input: String = (0..12)
        .map(|i| {
            format!(
                "{{\"timestamp\":{},\"key\":\"k{}\",\"value\":\"v{i}\"}}\n",
                T0 + i as i64,
                i % 3
            )
        })
        .collect();
    d.run(
        &["log", "append", &log, "--records-per-batch", "1"],
        input.as_bytes(),
    )
    .ok();
    let info = d.run(&["log", "info", &log], b"").json();
    assert!(info["dirty_ratio"].as_f64().unwrap() > 0.5, "{info}");
    let now = (T0 + 100).to_string();
    let r = d.run(&["log", "compact", &log, "--now", &now], b"").json();
    assert_eq!(r["cleaned"], true, "{r}");
    assert_eq!(r["first_dirty_offset"], 0);
    assert!(r["records_removed"].as_u64().unwrap() >= 3, "{r}");
    let next = r["next_dirty_offset"].as_i64().unwrap();
    assert!(next > 0);
    // Nothing dirty left below the first uncleanable offset: not eligible, not cleaned.
    let again = d.run(&["log", "compact", &log, "--now", &now], b"").json();
    assert_eq!(again["cleaned"], false, "{again}");
    assert_eq!(again["first_dirty_offset"], next);
    let read = d.run(&["log", "read", &log], b"").json_lines();
    let mut keys: Vec<String> = read
        .iter()
        .filter(|r| r["offset"].as_i64().unwrap() < next)
        .map(|r| r["key"].as_str().unwrap().to_owned())
        .collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n, "{read:?}");
    assert_eq!(d.run(&["verify", &d.arg("c")], b"").code, 0);
    // A checkpoint past records that were never cleaned is a problem verify reports.
    std::fs::write(d.path("c").join("krec-cleaner-offset"), "12\n").unwrap();
    let v = d.run(&["verify", &d.arg("c")], b"");
    assert_eq!(v.code, 1);
    assert!(
        String::from_utf8_lossy(&v.stdout).contains("[compaction]"),
        "{}",
        String::from_utf8_lossy(&v.stdout)
    );
}

#[test]
fn retain_deletes_old_segments_and_moves_the_log_start() {
    let d = Dir::new();
    let log = create(
        &d,
        "p",
        &["segment.bytes=200", "retention.bytes=50", "retention.ms=-1"],
    );
    d.run(
        &["log", "append", &log, "--records-per-batch", "2"],
        records(6).as_bytes(),
    )
    .ok();
    let segments_before = d.run(&["log", "info", &log], b"").json()["segments"]
        .as_array()
        .unwrap()
        .len();
    let r = d.run(&["log", "retain", &log], b"").json();
    let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["deleted_segments", "log_start_offset"]);
    let deleted = r["deleted_segments"].as_u64().unwrap() as usize;
    assert!(deleted >= 1 && deleted < segments_before, "{r}");
    let start = r["log_start_offset"].as_i64().unwrap();
    assert!(start > 0);
    let info = d.run(&["log", "info", &log], b"").json();
    assert_eq!(info["log_start_offset"], start);
    assert_eq!(
        d.run(&["log", "offsets", &log, "--earliest"], b"").json()["offset"],
        start
    );
    let first = d.run(&["log", "read", &log], b"").json_lines()[0]["offset"].clone();
    assert_eq!(first, start);
    // Reading below the log start is out of range: a usage error naming what the log holds,
    // as on every source.
    let r = d.run(&["log", "read", &log, "--offset", "0"], b"");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(&format!(
            "offset 0 is out of range: the partition holds [{start}, "
        )),
        "{}",
        r.stderr
    );
    // Nothing more to delete.
    assert_eq!(
        d.run(&["log", "retain", &log], b"").json()["deleted_segments"],
        0
    );
}

#[test]
fn recover_reports_and_cuts_a_torn_tail() {
    let d = Dir::new();
    let log = create(&d, "p", &["index.interval.bytes=0"]);
    d.run(
        &["log", "append", &log, "--records-per-batch", "2"],
        records(4).as_bytes(),
    )
    .ok();
    assert_eq!(
        d.run(&["log", "recover", &log], b"").json(),
        json!({"truncated_bytes":0,"segments":1,"next_offset":4})
    );
    // A torn write: the last batch loses its last 5 bytes.
    let seg = d.path("p/00000000000000000000.log");
    let mut bytes = std::fs::read(&seg).unwrap();
    let batch = bytes.len() / 2;
    bytes.truncate(bytes.len() - 5);
    std::fs::write(&seg, &bytes).unwrap();
    let r = d.run(&["log", "recover", &log], b"");
    assert_eq!(
        r.json(),
        json!({"truncated_bytes": batch - 5, "segments": 1, "next_offset": 2})
    );
    assert!(r.stderr.contains("truncated"), "{}", r.stderr);
    assert_eq!(d.run(&["log", "read", &log], b"").json_lines().len(), 2);
    assert_eq!(d.run(&["verify", &log], b"").code, 0);
    // Appends continue after the cut.
    let r = d.run(&["log", "append", &log], records(1).as_bytes());
    assert_eq!(r.json()["base_offset"], 2);
}

/// Segments whose offsets overlap (a segment renamed below the previous one's end) are damaged
/// data that recovery does not repair: exit 1, as `verify` says, naming salvage; no segment is
/// changed.
#[test]
fn recover_of_overlapping_segments_is_a_data_problem() {
    let d = Dir::new();
    let log = create(&d, "p", &["segment.bytes=200"]);
    d.run(
        &["log", "append", &log, "--records-per-batch", "2"],
        records(12).as_bytes(),
    )
    .ok();
    // The third segment renamed one offset below its base: it overlaps the second.
    misname_third_segment(&d, "p");
    // Recovery may rebuild indexes on its way; the segments' data stays as it was.
    let logs = |d: &Dir| -> Vec<(String, Vec<u8>)> {
        let mut s = snapshot(d, "p");
        s.retain(|(name, _)| name.ends_with(".log"));
        s
    };
    let before = logs(&d);
    let r = d.run(&["log", "recover", &log], b"");
    r.fails(1, "the segments overlap");
    assert!(r.stderr.contains("krec salvage"), "{}", r.stderr);
    assert_eq!(logs(&d), before);
    assert_eq!(d.run(&["verify", &log], b"").code, 1);
}

/// `krec log append DIR --producer-id PID --producer-epoch EPOCH --base-sequence SEQ
/// [--transactional]` of one batch of `values`.
fn produce(d: &Dir, log: &str, producer: (i64, i16, i32), txn: bool, values: &[&str]) -> Run {
    produce_in(d, log, producer, txn, values, "0")
}

/// As [`produce`], one batch per value.
fn produce_batches(
    d: &Dir,
    log: &str,
    producer: (i64, i16, i32),
    txn: bool,
    values: &[&str],
) -> Run {
    produce_in(d, log, producer, txn, values, "1")
}

fn produce_in(
    d: &Dir,
    log: &str,
    producer: (i64, i16, i32),
    txn: bool,
    values: &[&str],
    records_per_batch: &str,
) -> Run {
    let (pid, epoch, seq) = (
        producer.0.to_string(),
        producer.1.to_string(),
        producer.2.to_string(),
    );
    let mut args = vec![
        "log",
        "append",
        log,
        "--producer-id",
        &pid,
        "--producer-epoch",
        &epoch,
        "--base-sequence",
        &seq,
        "--records-per-batch",
        records_per_batch,
    ];
    if txn {
        args.push("--transactional");
    }
    d.run(&args, values_input(values).as_bytes())
}

/// JSON lines of one record per value, all at the time of the test run: the log forgets an
/// idempotent producer whose last batch is older than producer.id.expiration.ms (a day) when it
/// reopens, as Kafka does, so producer tests cannot use `T0`.
fn values_input(values: &[&str]) -> String {
    let now = *NOW;
    values
        .iter()
        .map(|v| format!("{{\"timestamp\":{now},\"value\":\"{v}\"}}\n"))
        .collect()
}

/// The wall clock when the tests started, in epoch milliseconds.
static NOW: std::sync::LazyLock<i64> = std::sync::LazyLock::new(|| {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(d.as_millis()).unwrap()
});

/// [`snapshot`] after a `krec log retain` that deletes nothing: opening a log for writing
/// deletes producer snapshots it no longer needs, which is housekeeping, not a write of the
/// command under test. (Reading commands such as `log info` change nothing at all.)
fn settled(d: &Dir, name: &str) -> Vec<(String, Vec<u8>)> {
    d.run(&["log", "retain", &d.arg(name)], b"").ok();
    snapshot(d, name)
}

/// `krec log end-txn` for `producer` at epoch 0.
fn end_txn(d: &Dir, log: &str, producer: i64, coordinator_epoch: i32, commit: bool) -> Run {
    let (pid, ce) = (producer.to_string(), coordinator_epoch.to_string());
    d.run(
        &[
            "log",
            "end-txn",
            log,
            "--producer-id",
            &pid,
            "--producer-epoch",
            "0",
            "--coordinator-epoch",
            &ce,
            if commit { "--commit" } else { "--abort" },
        ],
        b"",
    )
}

/// `(base_offset, last_offset, duplicate)` of append lines.
fn appended(r: &Run) -> Vec<(i64, i64, bool)> {
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.json_lines()
        .iter()
        .map(|l| {
            (
                l["base_offset"].as_i64().unwrap(),
                l["last_offset"].as_i64().unwrap(),
                l["duplicate"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// Asserts exit 1 with `{"error":name,...}` on stdout and returns the message.
#[track_caller]
fn refused(r: &Run, name: &str) -> String {
    assert_eq!(r.code, 1, "stdout: {} stderr: {}", r.out(), r.stderr);
    let j = r.json();
    assert_eq!(j["error"], name, "{j}");
    assert!(r.stderr.contains(name), "{}", r.stderr);
    j["message"].as_str().unwrap().to_string()
}

#[test]
fn an_idempotent_retry_is_a_duplicate_and_gaps_and_zombies_are_refused() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    d.run(
        &["log", "append", &log],
        values_input(&["plain"]).as_bytes(),
    )
    .ok();
    let first = produce(&d, &log, (7, 0, 0), false, &["a", "b", "c"]);
    assert_eq!(appended(&first), [(1, 3, false)]);
    // The producer did not hear back and sends the same batch again: the original offsets,
    // "duplicate":true, and the log does not change.
    let before = settled(&d, "p");
    let retry = produce(&d, &log, (7, 0, 0), false, &["a", "b", "c"]);
    assert_eq!(
        retry.ok(),
        "{\"base_offset\":1,\"last_offset\":3,\"log_append_time\":null,\"duplicate\":true}\n"
    );
    assert_eq!(snapshot(&d, "p"), before);
    // Two batches in one command.
    assert_eq!(
        appended(&produce_batches(&d, &log, (7, 0, 3), false, &["d", "e"])),
        [(4, 4, false), (5, 5, false)]
    );
    // Each command reopens the log, and across a restart the log knows a producer's last batch
    // only (Kafka's producer snapshot keeps one): the retry of the whole command is refused at
    // its first batch, a retry of the last batch is a duplicate.
    let before = settled(&d, "p");
    let msg = refused(
        &produce_batches(&d, &log, (7, 0, 3), false, &["d", "e"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    assert!(msg.starts_with("batch of input records 1..=1"), "{msg}");
    assert_eq!(
        appended(&produce(&d, &log, (7, 0, 4), false, &["e"])),
        [(5, 5, true)]
    );
    assert_eq!(snapshot(&d, "p"), before);
    // A gap in the sequence: OUT_OF_ORDER_SEQUENCE_NUMBER, nothing written.
    let before = settled(&d, "p");
    let msg = refused(
        &produce(&d, &log, (7, 0, 7), false, &["f"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    assert!(msg.contains("expected sequence 5"), "{msg}");
    assert_eq!(snapshot(&d, "p"), before);
    // A new epoch starts at 0 and fences the old one (a zombie).
    assert_eq!(
        appended(&produce(&d, &log, (7, 1, 0), false, &["e1"])),
        [(6, 6, false)]
    );
    let before = settled(&d, "p");
    let msg = refused(
        &produce(&d, &log, (7, 0, 6), false, &["zombie"]),
        "INVALID_PRODUCER_EPOCH",
    );
    assert!(
        msg.contains("epoch 0 is older than the current epoch 1"),
        "{msg}"
    );
    refused(
        &produce(&d, &log, (7, 2, 3), false, &["x"]),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    assert_eq!(snapshot(&d, "p"), before);
    let values: Vec<String> = values(&d.run(&["log", "read", &log], b"").json_lines());
    assert_eq!(values, ["plain", "a", "b", "c", "d", "e", "e1"]);
    assert_eq!(d.run(&["verify", &log], b"").code, 0);
}

#[test]
fn a_command_of_several_batches_is_all_or_nothing() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    // Three batches of producer 7 built separately; the third skips sequence 2.
    let build = |seq: &str, value: &str| {
        d.run(
            &[
                "build",
                "--producer-id",
                "7",
                "--producer-epoch",
                "0",
                "--base-sequence",
                seq,
            ],
            values_input(&[value]).as_bytes(),
        )
        .stdout
    };
    let (b0, b1, b3) = (build("0", "a"), build("1", "b"), build("3", "d"));
    let input = [b0.clone(), b1.clone(), b3].concat();
    let before = settled(&d, "p");
    let msg = refused(
        &d.run(&["log", "append", &log, "--raw"], &input),
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    );
    let third = b0.len() + b1.len();
    assert!(
        msg.starts_with(&format!("input entry at byte {third}")) && msg.contains("nothing"),
        "{msg}"
    );
    assert_eq!(snapshot(&d, "p"), before);
    // The first two with a retry of the first among them: the retry is a duplicate.
    let input = [b0.clone(), b1, b0].concat();
    assert_eq!(
        appended(&d.run(&["log", "append", &log, "--raw"], &input)),
        [(0, 0, false), (1, 1, false), (0, 0, true)]
    );
    // JSON lines: a transaction of two batches, then two non-transactional batches of the same
    // producer while it is open: refused at the first, nothing written.
    let r = produce_batches(&d, &log, (8, 0, 0), true, &["t1", "t2"]);
    assert_eq!(appended(&r), [(2, 2, false), (3, 3, false)]);
    let before = settled(&d, "p");
    let r = produce_batches(&d, &log, (8, 0, 2), false, &["n1", "n2"]);
    let msg = refused(&r, "INVALID_TXN_STATE");
    assert!(msg.starts_with("batch of input records 1..=1"), "{msg}");
    assert_eq!(snapshot(&d, "p"), before);
    assert_eq!(
        d.run(&["log", "info", &log], b"").json()["last_stable_offset"],
        2
    );
}

#[test]
fn transactions_commit_and_abort_and_read_committed_stops_at_the_lso() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    let plain = |v: &str| {
        d.run(&["log", "append", &log], values_input(&[v]).as_bytes())
            .ok();
    };
    plain("a"); // 0
    assert_eq!(
        appended(&produce(&d, &log, (1, 0, 0), true, &["p1-a"])),
        [(1, 1, false)]
    );
    produce(&d, &log, (2, 0, 0), true, &["p2-a"]).ok(); // 2
    plain("b"); // 3
    let info = d.run(&["log", "info", &log], b"").json();
    assert_eq!(
        (&info["high_watermark"], &info["last_stable_offset"]),
        (&json!(4), &json!(1))
    );
    // Nothing is stable past producer 1's open transaction.
    let rc = |extra: &[&str]| {
        let mut args = vec!["log", "read", log.as_str(), "--isolation", "read-committed"];
        args.extend_from_slice(extra);
        let r = d.run(&args, b"");
        assert_eq!(r.code, 0, "{}", r.stderr);
        values(&r.json_lines())
    };
    assert_eq!(rc(&[]), ["a"]);
    // The coordinator commits producer 1 (coordinator epoch 1): the marker's line.
    let r = end_txn(&d, &log, 1, 1, true);
    assert_eq!(
        r.ok(),
        "{\"base_offset\":4,\"last_offset\":4,\"log_append_time\":null,\"duplicate\":false}\n"
    );
    assert_eq!(
        d.run(&["log", "info", &log], b"").json()["last_stable_offset"],
        2
    );
    produce(&d, &log, (1, 0, 1), true, &["p1-b"]).ok(); // 5
                                                        // A non-transactional batch while the transaction is open.
    refused(
        &produce(&d, &log, (1, 0, 2), false, &["p1-plain"]),
        "INVALID_TXN_STATE",
    );
    end_txn(&d, &log, 2, 0, false).ok(); // 6: producer 2 aborts
    produce(&d, &log, (3, 0, 0), false, &["p3"]).ok(); // 7: idempotent, no transaction
                                                       // A coordinator older than the one that wrote producer 1's last marker is fenced.
    let before = settled(&d, "p");
    let msg = refused(
        &end_txn(&d, &log, 1, 0, true),
        "TRANSACTION_COORDINATOR_FENCED",
    );
    assert!(
        msg.contains("coordinator epoch 0 is older than the current 1"),
        "{msg}"
    );
    assert_eq!(snapshot(&d, "p"), before);
    end_txn(&d, &log, 1, 1, true).ok(); // 8
    produce(&d, &log, (4, 0, 0), true, &["p4-open"]).ok(); // 9: still open at the end
    plain("c"); // 10
    let info = d.run(&["log", "info", &log], b"").json();
    assert_eq!(
        (&info["high_watermark"], &info["last_stable_offset"]),
        (&json!(11), &json!(9))
    );
    // ListOffsets as consumers ask it: read-committed latest is the last stable offset.
    let latest = |iso: &str| {
        d.run(
            &["log", "offsets", &log, "--latest", "--isolation", iso],
            b"",
        )
        .json()["offset"]
            .clone()
    };
    assert_eq!(latest("read-committed"), json!(9));
    assert_eq!(latest("read-uncommitted"), json!(11));
    // read-committed: committed and non-transactional records, up to the open transaction.
    assert_eq!(rc(&[]), ["a", "p1-a", "b", "p1-b", "p3"]);
    assert_eq!(rc(&["--offset", "2"]), ["b", "p1-b", "p3"]);
    assert_eq!(rc(&["--offset", "9"]), Vec::<String>::new());
    assert_eq!(rc(&["--offset", "10"]), Vec::<String>::new());
    // read-uncommitted: every data record (aborted and open ones too), never a marker.
    let ru = d
        .run(
            &["log", "read", &log, "--isolation", "read-uncommitted"],
            b"",
        )
        .json_lines();
    assert_eq!(
        values(&ru),
        ["a", "p1-a", "p2-a", "b", "p1-b", "p3", "p4-open", "c"]
    );
    assert_eq!(ints(&ru, "offset"), [0, 1, 2, 3, 5, 7, 9, 10]);
    assert_eq!(d.run(&["log", "read", &log], b"").json_lines(), ru);
    // The abort is in the transaction index; the markers are control batches.
    assert!(d.path("p/00000000000000000000.txnindex").exists());
    let control: Vec<i64> = d
        .run(&["dump", "--format", "json", &log], b"")
        .json_lines()
        .iter()
        .filter(|e| e["control"] == true)
        .map(|e| e["base_offset"].as_i64().unwrap())
        .collect();
    assert_eq!(control, [4, 6, 8]);
    // Producer 4 commits: everything is stable.
    end_txn(&d, &log, 4, 0, true).ok();
    let info = d.run(&["log", "info", &log], b"").json();
    assert_eq!(info["last_stable_offset"], info["high_watermark"]);
    assert_eq!(rc(&["--offset", "9"]), ["p4-open", "c"]);
    assert_eq!(d.run(&["verify", &log], b"").code, 0);
}

#[test]
fn end_txn_arguments() {
    let d = Dir::new();
    let log = create(&d, "p", &[]);
    // A marker with a given timestamp, for a producer with no transaction: written anyway.
    let ts = T0.to_string();
    let r = d.run(
        &[
            "log",
            "end-txn",
            &log,
            "--producer-id",
            "1",
            "--producer-epoch",
            "0",
            "--coordinator-epoch",
            "0",
            "--abort",
            "--timestamp",
            &ts,
        ],
        b"",
    );
    assert_eq!(r.json()["base_offset"], 0);
    let dump = d.run(&["dump", "--format", "json", &log], b"").json_lines();
    assert_eq!(dump[0]["max_timestamp"], T0);
    assert_eq!(dump[0]["control"], true);
    // --commit or --abort, not both, not neither.
    let base = [
        "log",
        "end-txn",
        log.as_str(),
        "--producer-id",
        "1",
        "--producer-epoch",
        "0",
        "--coordinator-epoch",
        "0",
    ];
    assert_eq!(d.run(&base, b"").code, 2);
    let mut both = base.to_vec();
    both.extend(["--commit", "--abort"]);
    assert_eq!(d.run(&both, b"").code, 2);
    // Not a log.
    let mut missing = base.to_vec();
    missing[2] = "missing";
    missing.push("--commit");
    assert_eq!(d.run(&missing, b"").code, 2);
}

/// A partition directory as a broker with transactions writes it: producer 1 commits, producer
/// 2 aborts, producer 3's transaction is still open.
fn transactional_partition(d: &Dir) -> String {
    std::fs::create_dir(d.path("tx")).unwrap();
    let data = |d: &Dir, base: &str, value: &str, producer: Option<&str>| {
        let input = format!("{{\"timestamp\":{T0},\"value\":\"{value}\"}}\n");
        let mut args = vec![
            "build",
            "--base-offset",
            base,
            "--partition-leader-epoch",
            "0",
        ];
        if let Some(p) = producer {
            args.extend([
                "--producer-id",
                p,
                "--producer-epoch",
                "0",
                "--base-sequence",
                "0",
                "--transactional",
            ]);
        }
        d.run(&args, input.as_bytes()).stdout
    };
    let marker = |d: &Dir, base: &str, kind: &str, producer: &str| {
        let ts = T0.to_string();
        d.run(
            &[
                "build",
                "--control",
                kind,
                "--producer-id",
                producer,
                "--producer-epoch",
                "0",
                "--coordinator-epoch",
                "1",
                "--base-offset",
                base,
                "--timestamp",
                &ts,
                "--partition-leader-epoch",
                "0",
            ],
            b"",
        )
        .stdout
    };
    let mut seg = Vec::new();
    seg.extend(data(d, "0", "p1-a", Some("1")));
    seg.extend(data(d, "1", "p2-a", Some("2")));
    seg.extend(data(d, "2", "plain-2", None));
    seg.extend(marker(d, "3", "commit", "1"));
    seg.extend(data(d, "4", "p1-b", Some("1")));
    seg.extend(marker(d, "5", "abort", "2"));
    seg.extend(data(d, "6", "plain-6", None));
    seg.extend(marker(d, "7", "commit", "1"));
    seg.extend(data(d, "8", "p3-a", Some("3")));
    seg.extend(data(d, "9", "plain-9", None));
    d.write("tx/00000000000000000000.log", &seg);
    d.arg("tx")
}

fn values(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l["value"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn read_committed_drops_aborted_records_and_stops_at_an_open_transaction() {
    let d = Dir::new();
    let log = transactional_partition(&d);
    let all = d.run(&["log", "read", &log], b"").json_lines();
    assert_eq!(
        values(&all),
        ["p1-a", "p2-a", "plain-2", "p1-b", "plain-6", "p3-a", "plain-9"]
    );
    let committed = |extra: &[&str]| {
        let mut args = vec!["log", "read", log.as_str(), "--isolation", "read-committed"];
        args.extend_from_slice(extra);
        let r = d.run(&args, b"");
        assert_eq!(r.code, 0, "{}", r.stderr);
        values(&r.json_lines())
    };
    assert_eq!(committed(&[]), ["p1-a", "plain-2", "p1-b", "plain-6"]);
    // From the middle: producer 1's second transaction is decided by the marker at 7.
    assert_eq!(committed(&["--offset", "4"]), ["p1-b", "plain-6"]);
    // Past the open transaction nothing is stable yet.
    assert_eq!(committed(&["--offset", "9"]), Vec::<String>::new());
    // One entry's worth of bytes: the first record is held until its commit is seen, then
    // printed; nothing else.
    assert_eq!(committed(&["--max-bytes", "1"]), ["p1-a"]);
}

#[test]
fn usage_and_storage_errors_exit_2() {
    let d = Dir::new();
    let r = d.run(&["log", "read", "missing"], b"");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("cannot open missing: no such directory"),
        "{}",
        r.stderr
    );
    assert_eq!(r.out(), "");
    let r = d.run(&["log", "create", "p", "--config", "segment.bytes=x"], b"");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("segment.bytes"), "{}", r.stderr);
    let r = d.run(&["log", "create", "p", "--config", "nonsense"], b"");
    assert_eq!(r.code, 2);
    create(&d, "p", &[]);
    let r = d.run(&["log", "create", "p"], b"");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("already"), "{}", r.stderr);
    let r = d.run(&["log", "read", "p", "--offset", "1"], b"");
    assert_eq!(r.code, 2);
    assert_eq!(r.out(), "");
    assert_eq!(
        r.stderr,
        "krec: p: offset 1 is out of range: the partition holds [0, 0)\n"
    );
}

/// A damaged batch in the middle of a cleanly closed log (nothing scanned on open): `log read`
/// prints the records before it, as a consumer returns them before it raises the error, then
/// the error (exit 1); a read that ends before the damage is whole (exit 0).
#[test]
fn read_shows_the_records_before_damage_then_fails() {
    let d = Dir::new();
    let log = create(&d, "p", &["segment.bytes=300"]);
    d.run(
        &["log", "append", &log, "--records-per-batch", "2"],
        records(20).as_bytes(),
    )
    .ok();
    let info = d.run(&["log", "info", &log], b"").json();
    let second = info["segments"][1].clone();
    let (file, base) = (
        second["file"].as_str().unwrap().to_owned(),
        second["base_offset"].as_i64().unwrap(),
    );
    assert!(base > 0, "{info}");
    // A byte of the second segment's first batch's records: its CRC no longer matches.
    let mut bytes = d.read(&format!("p/{file}"));
    bytes[70] ^= 0xff;
    d.write(&format!("p/{file}"), &bytes);
    let r = d.run(&["log", "read", &log], b"");
    r.fails(1, "CORRUPT_MESSAGE");
    let lines = r.json_lines();
    let offsets: Vec<i64> = lines.iter().filter_map(|l| l["offset"].as_i64()).collect();
    assert_eq!(offsets, (0..base).collect::<Vec<_>>(), "{}", r.out());
    assert_eq!(
        lines.last().unwrap()["error"],
        "CORRUPT_MESSAGE",
        "{}",
        r.out()
    );
    let r = d.run(&["log", "read", &log, "--count", "3"], b"");
    assert_eq!(r.ok().lines().count(), 3);
}

/// `log create` writes into a new or empty directory, as its error says: a directory holding
/// files but no log is refused (exit 2), its files named and nothing created in it (a log was
/// created among them); an empty one is taken.
#[test]
fn create_refuses_a_directory_with_files_but_no_log() {
    let d = Dir::new();
    std::fs::create_dir(d.path("notes")).unwrap();
    d.write("notes/todo.txt", b"x");
    d.write("notes/a.md", b"x");
    let r = d.run(&["log", "create", "notes"], b"");
    r.fails(
        2,
        "notes: already holds files (a log is written into a new or empty directory); it \
         holds a.md, todo.txt",
    );
    assert_eq!(r.out(), "");
    let mut names: Vec<String> = std::fs::read_dir(d.path("notes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["a.md", "todo.txt"]);
    std::fs::create_dir(d.path("empty")).unwrap();
    create(&d, "empty", &[]);
    // A failed create's lock file alone does not count.
    std::fs::create_dir(d.path("locked")).unwrap();
    d.write("locked/krec.lock", b"");
    create(&d, "locked", &[]);
}

/// A partition directory's `krec-log.json` that cannot be used (not JSON, a setting Kafka
/// would refuse) is damaged data for every command that reads it: exit 1, the message naming
/// the file and what is wrong with it (log read, offsets and info exited 2; sql and export 2;
/// verify 1; an invalid setting was a usage error, exit 2, not naming the file). A writer
/// refuses the same way and leaves the file as it was.
#[test]
fn a_damaged_configuration_is_damaged_data_for_every_command_that_reads_it() {
    let d = Dir::new();
    let log = d.arg("t-0");
    d.run(&["log", "create", &log], b"").ok();
    d.run(&["log", "append", &log], records(10).as_bytes()).ok();
    let table = format!("t={log}");
    let exported = d.arg("exported");
    let converted = d.arg("converted");
    let salvaged = d.arg("salvaged");
    let appended = records(1);
    let commands: [(&[&str], &[u8]); 12] = [
        (&["log", "read", &log], b""),
        (&["log", "offsets", "--latest", &log], b""),
        (&["log", "info", &log], b""),
        // dump and stats read the configuration where they read the directory as its log.
        (&["dump", "--isolation", "read-committed", &log], b""),
        (&["stats", "--start", "0", &log], b""),
        (&["sql", "--table", &table, "select count(*) from t"], b""),
        (&["export", &log, "--output", &exported], b""),
        (&["verify", &log], b""),
        (&["convert", &log, &converted], b""),
        // salvage goes on with the default configuration and says why.
        (&["salvage", &log, "--output", &salvaged], b""),
        (&["log", "append", &log], appended.as_bytes()),
        (&["log", "retain", &log], b""),
    ];
    for (damage, what) in [
        (
            &b"not json {"[..],
            "not JSON: expected ident at line 1 column 2",
        ),
        (
            &b"{\"segment.bytes\":\"many\"}"[..],
            "invalid config segment.bytes=many",
        ),
    ] {
        d.write("t-0/krec-log.json", damage);
        for (args, stdin) in commands {
            for out in [&exported, &converted, &salvaged] {
                let _ = std::fs::remove_dir_all(out);
            }
            let r = d.run(args, stdin);
            let all = format!("{}{}", r.out(), r.stderr);
            assert_eq!(r.code, 1, "{args:?}: {all}");
            assert!(
                all.contains("t-0/krec-log.json") && all.contains(what),
                "{args:?}: {all}"
            );
            assert_eq!(d.read("t-0/krec-log.json"), damage, "{args:?}");
        }
        assert!(!d.path("converted").exists());
        // Reading the segment files as they are, dump and stats do not read it.
        d.run(&["dump", &log], b"").ok();
        d.run(&["stats", &log], b"").ok();
    }
}
