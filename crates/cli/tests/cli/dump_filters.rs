//! `krec dump` filters, `--max-bytes`, `--timestamps human`, PATH globs, and `krec completions` /
//! `krec man`, through the binary, in text and JSON.

use crate::util::{run, Dir};
use serde_json::Value;

/// 100 v2 records (offset i, timestamp T0 + i), 10 per batch: batches at offsets 0, 10, ... 90.
const T0: i64 = 1_714_000_000_000;

pub(crate) fn v2_file(d: &Dir) -> String {
    d.gen(
        "v2.log",
        &[
            "--records",
            "100",
            "--value-size",
            "8",
            "--records-per-batch",
            "10",
        ],
    )
}

/// Base offsets of the entries of a JSON dump.
fn bases(lines: &[Value]) -> Vec<i64> {
    lines
        .iter()
        .map(|e| e["base_offset"].as_i64().expect("base_offset"))
        .collect()
}

/// Offsets of every record of a JSON dump.
fn record_offsets(lines: &[Value]) -> Vec<i64> {
    lines
        .iter()
        .flat_map(|e| e["records"].as_array().expect("records").clone())
        .map(|r| r["offset"].as_i64().expect("offset"))
        .collect()
}

fn json(d: &Dir, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["dump", "--format", "json"];
    all.extend_from_slice(args);
    let r = d.run(&all, b"");
    r.ok();
    r.json_lines()
}

fn text(d: &Dir, args: &[&str]) -> String {
    let mut all = vec!["dump"];
    all.extend_from_slice(args);
    d.run(&all, b"").ok()
}

/// The offsets of the `| offset: N` record lines of a text dump.
fn text_record_offsets(out: &str) -> Vec<i64> {
    out.lines()
        .filter_map(|l| l.strip_prefix("| offset: "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

/// The `baseOffset` of the batch lines of a text dump.
fn text_bases(out: &str) -> Vec<i64> {
    out.lines()
        .filter_map(|l| l.strip_prefix("baseOffset: "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn offset_range_is_start_inclusive_end_exclusive() {
    let d = Dir::new();
    let f = v2_file(&d);
    let range = ["--start", "15", "--end", "35"];
    // Entries overlapping [15, 35): the batches at 10, 20 and 30, whole (count stays 10).
    let shallow = json(&d, &[&range[..], &[f.as_str()]].concat());
    assert_eq!(bases(&shallow), [10, 20, 30]);
    assert!(shallow
        .iter()
        .all(|e| e["count"] == 10 && e.get("records").is_none()));
    // With --deep only the records inside.
    let deep = json(&d, &[&range[..], &["--deep", f.as_str()]].concat());
    assert_eq!(bases(&deep), [10, 20, 30]);
    assert_eq!(record_offsets(&deep), (15..35).collect::<Vec<_>>());
    let t = text(&d, &[&range[..], &["--deep", f.as_str()]].concat());
    assert_eq!(text_bases(&t), [10, 20, 30]);
    assert_eq!(text_record_offsets(&t), (15..35).collect::<Vec<_>>());
    assert!(t.starts_with(&format!("Dumping {f}\n")), "{t}");
    // Batch boundaries: the end is exclusive, the start inclusive.
    let edge = json(&d, &["--start", "19", "--end", "20", "--deep", &f]);
    assert_eq!(bases(&edge), [10]);
    assert_eq!(record_offsets(&edge), [19]);
    let edge = json(&d, &["--start", "20", "--end", "21", &f]);
    assert_eq!(bases(&edge), [20]);
    // Open-ended.
    assert_eq!(bases(&json(&d, &["--start", "90", &f])), [90]);
    assert_eq!(bases(&json(&d, &["--end", "10", &f])), [0]);
    assert!(json(&d, &["--start", "100", &f]).is_empty());
    assert_eq!(text_bases(&text(&d, &["--end", "1", &f])), [0]);
}

#[test]
fn time_range_takes_epoch_ms_and_iso_8601() {
    let d = Dir::new();
    let f = v2_file(&d);
    // T0 = 2024-04-24T23:06:40.000Z; records have T0 + offset.
    let forms: [[&str; 2]; 4] = [
        ["1714000000015", "1714000000035"],
        ["2024-04-24T23:06:40.015Z", "2024-04-24T23:06:40.035Z"],
        [
            "2024-04-25T01:06:40.015+02:00",
            "2024-04-24T22:06:40.035-01:00",
        ],
        ["2024-04-24 23:06:40.0159z", "2024-04-24T23:06:40.035"],
    ];
    for [start, end] in forms {
        let args = [
            "--time-start",
            start,
            "--time-end",
            end,
            "--deep",
            f.as_str(),
        ];
        let lines = json(&d, &args);
        assert_eq!(bases(&lines), [10, 20, 30], "{start} {end}");
        assert_eq!(record_offsets(&lines), (15..35).collect::<Vec<_>>());
        let t = text(&d, &args);
        assert_eq!(text_bases(&t), [10, 20, 30]);
        assert_eq!(text_record_offsets(&t), (15..35).collect::<Vec<_>>());
    }
    // An entry is kept when [base timestamp, max timestamp] overlaps the range.
    let t = (T0 + 19).to_string();
    assert_eq!(
        bases(&json(&d, &["--time-start", &t, &f])).first(),
        Some(&10)
    );
    let t = (T0 + 20).to_string();
    assert_eq!(bases(&json(&d, &["--time-end", &t, &f])), [0, 10]);
    assert!(json(&d, &["--time-start", "2030-01-01", &f]).is_empty());
}

#[test]
fn v0_entries_never_match_a_time_range_and_v1_use_their_timestamps() {
    let d = Dir::new();
    let v0 = d.gen("v0.log", &["--magic", "0", "--records", "5"]);
    assert_eq!(json(&d, &[&v0]).len(), 5);
    assert!(json(&d, &["--time-start", "0", &v0]).is_empty());
    assert!(json(&d, &["--time-end", "2100-01-01T00:00:00Z", &v0]).is_empty());
    // Nothing of the file shown: not its header either.
    assert_eq!(text(&d, &["--time-start", "0", &v0]), "");
    // v0 entries are kept by the offset filters.
    assert_eq!(bases(&json(&d, &["--start", "3", &v0])), [3, 4]);
    // A time before 1970 is no timestamp (-1 is v0's NO_TIMESTAMP, which it would take): a
    // usage error, as a negative --time of `krec offsets`.
    for args in [
        &["--time-start", "-1"][..],
        &["--time-end", "-5"],
        &["--time-start", "@-1"],
        &["--time-start", "1969-12-31"],
    ] {
        let r = d.run(&[&["dump"][..], args, &[v0.as_str()]].concat(), b"");
        r.fails(2, "a time is milliseconds since the epoch (0 or more)");
        assert!(r.stderr.contains("NO_TIMESTAMP"), "{}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}");
    }

    let v1 = d.gen("v1.log", &["--magic", "1", "--records", "5"]);
    let start = (T0 + 2).to_string();
    let end = (T0 + 4).to_string();
    assert_eq!(
        bases(&json(
            &d,
            &["--time-start", &start, "--time-end", &end, &v1]
        )),
        [2, 3]
    );
}

#[test]
fn legacy_wrappers_filter_on_their_inner_offsets_and_timestamps() {
    let d = Dir::new();
    // v1 gzip wrappers of 10 messages: offsets 0..9, 10..19, ...
    let f = d.gen(
        "v1gz.log",
        &[
            "--magic",
            "1",
            "--compression",
            "gzip",
            "--records",
            "50",
            "--records-per-batch",
            "10",
        ],
    );
    let lines = json(&d, &["--start", "15", "--end", "25", "--deep", &f]);
    assert_eq!(bases(&lines), [10, 20]);
    assert_eq!(
        lines
            .iter()
            .map(|e| e["last_offset"].clone())
            .collect::<Vec<_>>(),
        [19, 29]
    );
    assert_eq!(record_offsets(&lines), (15..25).collect::<Vec<_>>());
    // The end bound needs the first inner offset: a wrapper starting at the end is out.
    let lines = json(&d, &["--end", "20", &f]);
    assert_eq!(bases(&lines), [0, 10]);
    let start = (T0 + 35).to_string();
    let end = (T0 + 40).to_string();
    let lines = json(
        &d,
        &["--time-start", &start, "--time-end", &end, "--deep", &f],
    );
    assert_eq!(bases(&lines), [30]);
    assert_eq!(record_offsets(&lines), (35..40).collect::<Vec<_>>());
    let t = text(
        &d,
        &["--time-start", &start, "--time-end", &end, "--deep", &f],
    );
    assert_eq!(text_record_offsets(&t), (35..40).collect::<Vec<_>>());
    assert_eq!(
        t.lines().filter(|l| l.starts_with("offset: 39 ")).count(),
        1
    );
}

/// Three producers: a plain batch (pid -1), an idempotent one (pid 7), a transaction of
/// producer 9 and its commit marker.
fn producers_file(d: &Dir) -> String {
    let rec = |ts: i64| format!("{{\"timestamp\":{ts},\"value\":\"v\"}}\n");
    let build = |name: &str, args: &[&str], input: String| {
        let mut all = vec!["build", "--output", name];
        all.extend_from_slice(args);
        d.run(&all, input.as_bytes()).ok();
        d.read(name)
    };
    let mut all = build("a", &["--base-offset", "0"], rec(T0) + &rec(T0 + 1));
    all.extend(build(
        "b",
        &[
            "--base-offset",
            "2",
            "--producer-id",
            "7",
            "--producer-epoch",
            "0",
            "--base-sequence",
            "0",
        ],
        rec(T0 + 2),
    ));
    all.extend(build(
        "c",
        &[
            "--base-offset",
            "3",
            "--producer-id",
            "9",
            "--producer-epoch",
            "1",
            "--base-sequence",
            "0",
            "--transactional",
        ],
        rec(T0 + 3) + &rec(T0 + 4),
    ));
    all.extend(build(
        "d",
        &[
            "--control",
            "commit",
            "--base-offset",
            "5",
            "--producer-id",
            "9",
            "--producer-epoch",
            "1",
            "--coordinator-epoch",
            "4",
            "--timestamp",
            &(T0 + 5).to_string(),
        ],
        String::new(),
    ));
    d.write("producers.log", &all)
}

#[test]
fn producer_control_and_transactional_filters() {
    let d = Dir::new();
    let f = producers_file(&d);
    assert_eq!(bases(&json(&d, &[&f])), [0, 2, 3, 5]);
    assert_eq!(bases(&json(&d, &["--producer-id", "7", &f])), [2]);
    assert_eq!(bases(&json(&d, &["--producer-id", "9", &f])), [3, 5]);
    assert_eq!(bases(&json(&d, &["--producer-id", "-1", &f])), [0]);
    assert!(json(&d, &["--producer-id", "8", &f]).is_empty());
    assert_eq!(bases(&json(&d, &["--transactional-only", &f])), [3, 5]);
    let control = json(&d, &["--control-only", "--deep", &f]);
    assert_eq!(bases(&control), [5]);
    assert_eq!(control[0]["records"][0]["control"]["type"], "commit");
    assert_eq!(control[0]["records"][0]["control"]["coordinator_epoch"], 4);
    // Filters combine with AND.
    assert!(json(&d, &["--control-only", "--producer-id", "7", &f]).is_empty());
    assert_eq!(
        bases(&json(&d, &["--transactional-only", "--end", "4", &f])),
        [3]
    );
    let t = text(&d, &["--control-only", "--deep", &f]);
    assert_eq!(t.lines().count(), 3, "{t}");
    assert!(t.contains("isTransactional: true isControl: true"), "{t}");
    assert!(
        t.contains("endTxnMarker: COMMIT coordinatorEpoch: 4"),
        "{t}"
    );
    let t = text(&d, &["--producer-id", "7", &f]);
    assert_eq!(text_bases(&t), [2]);
    assert!(t.contains("producerId: 7 producerEpoch: 0"), "{t}");
    // v0/v1 entries are not transactional, not control, producer -1.
    let v1 = d.gen("v1.log", &["--magic", "1", "--records", "3"]);
    assert!(json(&d, &["--transactional-only", &v1]).is_empty());
    assert!(json(&d, &["--control-only", &v1]).is_empty());
    assert_eq!(json(&d, &["--producer-id", "-1", &v1]).len(), 3);
}

#[test]
fn entries_outside_the_filter_are_not_decoded_or_checked() {
    let d = Dir::new();
    let f = v2_file(&d);
    let mut bytes = d.read("v2.log");
    let last = bytes.len() - 3;
    bytes[last] ^= 0x40; // in the last batch (offsets 90..99)
    d.write("v2.log", &bytes);
    let r = d.run(&["dump", "--deep", "--format", "json", &f], b"");
    assert_eq!(r.code, 1, "{r:?}");
    let r = d.run(&["dump", "--deep", "--end", "90", &f], b"");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(text_bases(&r.out()).len(), 9);
    let r = d.run(&["dump", "--start", "95", &f], b"");
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.out().contains("isvalid: false"));
}

#[test]
fn max_bytes_reads_whole_entries_within_the_first_n_bytes() {
    let d = Dir::new();
    let f = v2_file(&d);
    let all = json(&d, &[&f]);
    let size = all[0]["size_bytes"].as_u64().unwrap();
    assert!(all.iter().all(|e| e["size_bytes"] == size));
    for (n, entries) in [
        (0, 0),
        (size - 1, 0),
        (size, 1),
        (2 * size + 5, 2),
        (u64::MAX, 10),
    ] {
        let n = n.to_string();
        let lines = json(&d, &["--max-bytes", &n, &f]);
        assert_eq!(lines.len(), entries, "--max-bytes {n}");
        // The cut is not reported: no partial line, no "invalid bytes".
        assert!(
            lines.iter().all(|e| e.get("partial").is_none()),
            "{lines:?}"
        );
        let t = text(&d, &["--max-bytes", &n, &f]);
        assert_eq!(text_bases(&t).len(), entries);
        assert!(!t.contains("invalid bytes"), "{t}");
    }
    let t = text(&d, &["--max-bytes", &(2 * size).to_string(), "--deep", &f]);
    assert_eq!(text_record_offsets(&t), (0..20).collect::<Vec<_>>());
    // Per file (two files: one named twice is read once), and for stdin.
    let copy = d.write("copy.log", &std::fs::read(&f).unwrap());
    let two = json(&d, &["--max-bytes", &size.to_string(), &f, &copy]);
    assert_eq!(two.len(), 2);
    let r = d.run(
        &[
            "dump",
            "--format",
            "json",
            "--max-bytes",
            &size.to_string(),
            "-",
        ],
        &d.read("v2.log"),
    );
    assert_eq!(r.ok().lines().count(), 1);
    // A truncated file: without --max-bytes the tail is reported, with it not.
    let bytes = d.read("v2.log");
    let cut = d.write("cut.log", &bytes[..bytes.len() - 10]);
    let r = d.run(&["dump", &cut], b"");
    assert_eq!(r.code, 1);
    assert!(r.out().contains("invalid bytes at the end of cut.log"));
    let r = d.run(&["dump", "--format", "json", &cut], b"");
    assert_eq!(r.code, 1);
    assert_eq!(r.json_lines().last().unwrap()["partial"], true);
    let huge = (bytes.len() * 2).to_string();
    assert!(!text(&d, &["--max-bytes", &huge, &cut]).contains("invalid bytes"));
    let lines = json(&d, &["--max-bytes", &huge, &cut]);
    assert_eq!(lines.len(), 9);
}

#[test]
fn timestamps_human_adds_iso_8601() {
    let d = Dir::new();
    let f = d.gen("one.log", &["--records", "2", "--value-size", "4"]);
    let plain = json(&d, &["--deep", &f]);
    assert!(plain[0].get("base_timestamp_iso").is_none());
    assert!(plain[0]["records"][0].get("timestamp_iso").is_none());
    let lines = json(&d, &["--deep", "--timestamps", "human", &f]);
    let e = &lines[0];
    assert_eq!(e["base_timestamp"], T0);
    assert_eq!(e["base_timestamp_iso"], "2024-04-24T23:06:40.000Z");
    assert_eq!(e["max_timestamp_iso"], "2024-04-24T23:06:40.001Z");
    assert_eq!(e["records"][1]["timestamp_iso"], "2024-04-24T23:06:40.001Z");
    // The extra fields follow the ones they render.
    let raw = d
        .run(
            &["dump", "--format", "json", "--timestamps", "human", &f],
            b"",
        )
        .ok();
    assert!(
        raw.contains(r#""base_timestamp":1714000000000,"base_timestamp_iso":"2024-04-24T23:06:40.000Z","max_timestamp":1714000000001,"max_timestamp_iso":"2024-04-24T23:06:40.001Z","#),
        "{raw}"
    );
    let t = text(&d, &["--deep", "--timestamps", "human", &f]);
    assert!(
        t.contains(" CreateTime: 1714000000001 (2024-04-24T23:06:40.001Z) size: "),
        "{t}"
    );
    assert!(
        t.contains("| offset: 0 CreateTime: 1714000000000 (2024-04-24T23:06:40.000Z) keySize: -1"),
        "{t}"
    );
    // Without the flag the text stays kafka-dump-log's.
    assert!(!text(&d, &["--deep", &f]).contains('('));
    // v0: no timestamp, so no ISO form.
    let v0 = d.gen("v0.log", &["--magic", "0", "--records", "1"]);
    let lines = json(&d, &["--deep", "--timestamps", "human", &v0]);
    assert_eq!(lines[0]["base_timestamp_iso"], Value::Null);
    assert_eq!(lines[0]["records"][0]["timestamp_iso"], Value::Null);
    let t = text(&d, &["--deep", "--timestamps", "human", &v0]);
    assert!(t.contains("NoTimestampType: -1 size:"), "{t}");
    assert!(!t.contains('('), "{t}");
}

#[test]
fn globs_expand_when_the_shell_did_not() {
    let d = Dir::new();
    for (dir, base) in [
        ("topic-0", "0"),
        ("topic-1", "0"),
        ("topic-1", "5"),
        ("other-0", "0"),
    ] {
        std::fs::create_dir_all(d.path(dir)).unwrap();
        let name = format!("{dir}/{base:0>20}.log");
        d.gen(&name, &["--records", "5", "--base-offset", base]);
    }
    std::fs::write(d.path("topic-1/00000000000000000000.index"), b"").unwrap();
    let files = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["dump"];
        all.extend_from_slice(args);
        d.run(&all, b"")
            .ok()
            .lines()
            .filter_map(|l| l.strip_prefix("Dumping ").map(str::to_string))
            .collect()
    };
    let p = |s: &str| d.arg(s);
    // Partition directories matched by a pattern expand to their segments, in order.
    let want = [
        p("topic-0/00000000000000000000.log"),
        p("topic-1/00000000000000000000.log"),
        p("topic-1/00000000000000000005.log"),
    ];
    assert_eq!(files(&[&p("topic-*")]), want);
    assert_eq!(files(&[&p("topic-?/*.log")]), want);
    assert_eq!(files(&[&p("topic-[01]/*.log")]), want);
    assert_eq!(
        files(&[&p("*-0/*.log")]),
        [p("other-0/00000000000000000000.log"), want[0].clone()]
    );
    assert_eq!(files(&[&p("topic-1/*5.log")]), [want[2].clone()]);
    // Relative patterns, in the working directory.
    assert_eq!(
        files(&["topic-[!0]/0*"]),
        [
            "topic-1/00000000000000000000.index",
            "topic-1/00000000000000000000.log",
            "topic-1/00000000000000000005.log"
        ]
        .map(String::from)
    );
    // JSON names the matched files.
    let lines = json(&d, &["topic-1/*.log"]);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["file"], "topic-1/00000000000000000005.log");
    // Nothing matches: a usage error.
    let r = d.run(&["dump", "nothing-*/*.log"], b"");
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("nothing-*/*.log"), "{}", r.stderr);
    let r = d.run(&["dump", "topic-[0"], b"");
    assert_eq!(r.code, 2, "{r:?}");
}

#[test]
fn bad_filter_arguments_exit_2() {
    for args in [
        &["dump", "--start", "5", "--end", "5", "x.log"][..],
        &[
            "dump",
            "--time-start",
            "2024-04-24",
            "--time-end",
            "2024-04-23",
            "x.log",
        ][..],
        &["dump", "--time-start", "yesterday", "x.log"][..],
        &["dump", "--time-end", "2024-02-30T00:00:00Z", "x.log"][..],
        &["dump", "--max-bytes", "-1", "x.log"][..],
        &["dump", "--timestamps", "local", "x.log"][..],
        &["dump", "--start", "x", "x.log"][..],
    ] {
        let r = run(args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(!r.stderr.is_empty(), "{args:?}");
        assert!(r.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn completions_for_bash_zsh_and_fish_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run(&["completions", shell]).ok();
        assert!(out.len() > 1000, "{shell}: {out}");
        for word in [
            "dump",
            "verify",
            "stats",
            "explain",
            "convert",
            "isolation",
            "deep",
        ] {
            assert!(out.contains(word), "{shell} completions lack {word}");
        }
    }
    assert_eq!(run(&["completions", "tcsh"]).code, 2);
}

#[test]
fn man_pages_for_krec_and_its_subcommands() {
    let out = run(&["man"]).ok();
    assert!(
        out.starts_with(".ie \\n(.g .ds Aq"),
        "{}",
        &out[..100.min(out.len())]
    );
    assert!(
        out.contains(".TH krec 1 ") && out.contains("\"krec 0."),
        "{out}"
    );
    for sub in [
        "dump",
        "verify",
        "stats",
        "explain",
        "convert",
        "gen",
        "demo",
        "log",
        "completions",
    ] {
        assert!(
            out.contains(&format!("krec\\-{sub}")),
            "krec(1) lacks {sub}"
        );
    }
    let dump = run(&["man", "dump"]).ok();
    assert!(
        dump.contains(".TH krec-dump 1 ") && dump.contains("\"krec 0."),
        "{dump}"
    );
    assert!(dump.contains("isolation"), "{dump}");
    let append = run(&["man", "log", "append"]).ok();
    assert!(append.contains(".TH krec-log-append 1"), "{append}");
    assert_eq!(run(&["man", "nope"]).code, 2);
    let d = Dir::new();
    let r = d.run(&["man", "--dir", "pages"], b"");
    let listed = r.ok();
    assert!(listed.contains("krec-dump.1"), "{listed}");
    assert!(std::fs::read_to_string(d.path("pages/krec.1"))
        .unwrap()
        .contains(".TH krec 1"));
    assert!(d.path("pages/krec-log-append.1").is_file());
}

/// A partition named more than once (a root twice, a root and one of its partitions) is read
/// once, said on stderr (every entry was dumped twice); `--topic` and the counts agree.
#[test]
fn dump_reads_a_partition_named_twice_once() {
    let d = Dir::new();
    d.partition("root/a-0", 12);
    d.partition("root/b-0", 8);
    let root = d.arg("root");
    let a = d.arg("root/a-0");
    let entries = |args: &[&str]| -> (usize, String) {
        let mut all = vec!["dump", "--format", "json"];
        all.extend_from_slice(args);
        let r = d.run(&all, b"");
        let n = r.json_lines().len();
        assert_eq!(r.code, 0, "{}", r.stderr);
        (n, r.stderr)
    };
    let (once, stderr) = entries(&[&root]);
    assert_eq!(once, 5, "12 + 8 records in batches of at most 5");
    assert_eq!(stderr, "");
    let (twice, stderr) = entries(&[&root, &root]);
    assert_eq!(twice, once);
    assert!(
        stderr.contains(&format!("krec: {a}: named more than once, read once\n")),
        "{stderr}"
    );
    let (n, stderr) = entries(&[&a, &root]);
    assert_eq!(n, once);
    assert!(stderr.contains("named more than once"), "{stderr}");
}
