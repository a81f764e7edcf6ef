//! A broker's whole data directory (a log.dirs root) as one PATH: verify in parallel with a
//! deterministic report, dump and stats over every partition, and a clear error for a
//! directory with nothing to read.

use crate::util::{walk, Dir};

/// A root with three partitions of two topics, an empty partition directory, meta.properties
/// and checkpoints naming the partitions.
fn root(d: &Dir) -> String {
    std::fs::create_dir_all(d.path("data")).unwrap();
    let records: String = (0..40)
        .map(|i| format!("{{\"key\":\"k{i}\",\"value\":\"value number {i}\"}}\n"))
        .collect();
    for part in ["orders-0", "orders-1", "payments-0"] {
        let dir = d.arg(&format!("data/{part}"));
        d.run(
            &[
                "log",
                "create",
                &dir,
                "--config",
                "segment.bytes=1000",
                "--config",
                "index.interval.bytes=100",
            ],
            b"",
        )
        .ok();
        d.run(
            &["log", "append", &dir, "--records-per-batch", "4"],
            records.as_bytes(),
        )
        .ok();
    }
    std::fs::create_dir_all(d.path("data/empty-0")).unwrap();
    d.write(
        "data/meta.properties",
        b"#\nnode.id=1\nversion=1\ncluster.id=abc\n",
    );
    d.write(
        "data/recovery-point-offset-checkpoint",
        b"0\n3\norders 0 40\norders 1 12\npayments 0 0\n",
    );
    d.write(
        "data/log-start-offset-checkpoint",
        b"0\n2\norders 0 0\npayments 0 0\n",
    );
    d.arg("data")
}

#[test]
fn a_clean_root_verifies_in_any_thread_count_with_the_same_report() {
    let d = Dir::new();
    let root = root(&d);
    let one = d.run(
        &["verify", &root, "--threads", "1", "--format", "json"],
        b"",
    );
    let four = d.run(
        &["verify", &root, "--threads", "4", "--format", "json"],
        b"",
    );
    assert_eq!(one.stdout, four.stdout);
    let lines = one.json_lines();
    let parts: Vec<&serde_json::Value> = lines.iter().filter_map(|l| l.get("partition")).collect();
    let names: Vec<&str> = parts.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["empty-0", "orders-0", "orders-1", "payments-0"]);
    assert!(parts.iter().all(|p| p["ok"] == true));
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["partitions"], 4);
    assert_eq!(summary["partitions_with_problems"], 0);
    assert_eq!(summary["records"], 120);
    let text = d.run(&["verify", &root], b"").ok();
    assert!(
        text.contains("4 partitions (4 ok, 0 with problems)"),
        "{text}"
    );
}

#[test]
fn each_problem_is_reported_once_with_its_partition() {
    let d = Dir::new();
    let root = root(&d);
    // A flipped byte in a record of orders-0, a truncated index in orders-1, a checkpoint
    // naming a partition that is not here.
    let seg = d.path("data/orders-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes[80] ^= 0xff;
    std::fs::write(&seg, bytes).unwrap();
    let index = d.path("data/orders-1/00000000000000000000.index");
    let len = std::fs::metadata(&index).unwrap().len();
    assert!(len >= 8, "the test needs index entries");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&index)
        .unwrap()
        .set_len(len - 3)
        .unwrap();
    d.write(
        "data/replication-offset-checkpoint",
        b"0\n2\norders 0 40\nghost 7 5\n",
    );
    let r = d.run(&["verify", &root, "--format", "json"], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines = r.json_lines();
    let problems: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l.get("check").is_some()).collect();
    let by = |check: &str| problems.iter().filter(|p| p["check"] == check).count();
    assert_eq!(by("entry"), 1, "{problems:?}");
    assert_eq!(by("index"), 1, "{problems:?}");
    assert_eq!(by("checkpoint"), 1, "{problems:?}");
    assert_eq!(problems.len(), 3, "{problems:?}");
    let entry = problems.iter().find(|p| p["check"] == "entry").unwrap();
    assert_eq!(entry["partition"], "orders-0");
    assert_eq!(entry["position"], 0);
    let index = problems.iter().find(|p| p["check"] == "index").unwrap();
    assert_eq!(index["partition"], "orders-1");
    assert_eq!(index["position"], (len - 8) as i64 / 8 * 8);
    let cp = problems
        .iter()
        .find(|p| p["check"] == "checkpoint")
        .unwrap();
    assert!(cp["message"].as_str().unwrap().contains("ghost-7"), "{cp}");
    let ok: Vec<(String, bool)> = lines
        .iter()
        .filter_map(|l| l.get("partition").filter(|p| p.is_object()))
        .map(|p| (p["name"].as_str().unwrap().to_owned(), p["ok"] == true))
        .collect();
    assert_eq!(
        ok,
        [
            ("empty-0".into(), true),
            ("orders-0".into(), false),
            ("orders-1".into(), false),
            ("payments-0".into(), true)
        ]
    );
    let text = d.run(&["verify", &root], b"").out();
    assert!(
        text.contains("4 partitions (2 ok, 2 with problems)"),
        "{text}"
    );
    assert!(text.contains("problems in: orders-0, orders-1"), "{text}");
}

#[test]
fn topic_and_partition_narrow_a_root() {
    let d = Dir::new();
    let root = root(&d);
    let r = d.run(
        &["verify", &root, "--topic", "ord*", "--partition", "1"],
        b"",
    );
    assert!(r.ok().contains("1 partitions (1 ok"), "{}", r.out());
    let r = d.run(&["verify", &root, "--topic", "nothing*"], b"");
    assert_eq!(r.code, 2);
    let topics = "(its topics: empty, orders, payments)";
    let said = format!("krec: {root}: no partition of a topic matching \"nothing*\" {topics}\n");
    assert_eq!(r.stderr, said);
    // --topic is repeatable (a topic matching any), and selects the same in every command.
    let two = ["--topic", "ord*", "--topic", "pay*"];
    let r = d.run(&[&["verify", &root][..], &two[..]].concat(), b"");
    assert!(r.out().contains("3 partitions ("), "{}", r.out());
    let r = d.run(
        &[&["dump", "--format", "json", &root][..], &two[..]].concat(),
        b"",
    );
    let files: std::collections::BTreeSet<String> = r
        .json_lines()
        .iter()
        .map(|l| {
            l["file"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .nth(1)
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        files.into_iter().collect::<Vec<_>>(),
        ["orders-0", "orders-1", "payments-0"]
    );
    // (dump lists the topics it could read: empty-0 has no segment.)
    for cmd in ["dump", "verify", "metadata", "offsets"] {
        let r = d.run(&[cmd, &root, "--topic", "nothing*", "--topic", "x"], b"");
        assert_eq!(r.code, 2, "{cmd}: {}", r.stderr);
        let said = format!("{root}: no partition of a topic matching \"nothing*\" or \"x\" (its");
        assert!(r.stderr.contains(&said), "{cmd}: {}", r.stderr);
        assert!(
            r.stderr.contains("orders, payments)"),
            "{cmd}: {}",
            r.stderr
        );
    }
}

/// verify of a partition directory (or a segment file of one) with --topic or --partition
/// filters it as dump does (it was refused); a directory neither selects is exit 2 naming
/// its topic.
#[test]
fn verify_and_dump_filter_a_partition_directory_by_topic() {
    let d = Dir::new();
    let root = root(&d);
    let dir = format!("{root}/payments-0");
    let segment = format!("{dir}/00000000000000000000.log");
    for cmd in ["verify", "dump"] {
        for path in [&dir, &segment] {
            d.run(&[cmd, path, "--topic", "pay*"], b"").ok();
            let r = d.run(&[cmd, path, "--topic", "ord*"], b"");
            let said =
                format!("{path}: no partition of a topic matching \"ord*\" (its topics: payments)");
            assert_eq!(
                (r.code, r.stderr.trim_end()),
                (2, &*format!("krec: {said}")),
                "{cmd}"
            );
        }
    }
    let r = d.run(&["verify", &dir, "--partition", "0"], b"");
    assert!(r.ok().contains("no problems"), "{}", r.out());
    d.run(&["verify", &dir, "--partition", "1"], b"")
        .fails(2, "no partition 1 (its topics: payments)");
    // Of several, those selected.
    let orders = format!("{root}/orders-0");
    let r = d.run(&["verify", &orders, &dir, "--topic", "pay*"], b"");
    assert_eq!(r.ok(), d.run(&["verify", &dir], b"").ok());
}

#[test]
fn dump_and_stats_read_every_partition_of_a_root() {
    let d = Dir::new();
    let root = root(&d);
    let dump = d.run(&["dump", &root], b"").ok();
    let dumped: Vec<&str> = dump.lines().filter(|l| l.starts_with("Dumping ")).collect();
    assert!(dumped.len() >= 6, "{dumped:?}");
    assert!(dumped[0].contains("orders-0"), "{dumped:?}");
    assert!(dumped.last().unwrap().contains("payments-0"), "{dumped:?}");
    let stats = d.run(&["stats", "--format", "json", &root], b"").json();
    assert_eq!(stats["summary"]["records"], 120, "{stats}");
}

#[test]
fn a_directory_with_nothing_to_read_is_exit_2() {
    let d = Dir::new();
    std::fs::create_dir_all(d.path("nothing")).unwrap();
    d.write("nothing/notes.txt", b"hello");
    for cmd in ["dump", "verify", "stats"] {
        let r = d.run(&[cmd, &d.arg("nothing")], b"");
        assert_eq!(r.code, 2, "{cmd}: {}", r.stderr);
        assert!(r.stderr.contains("nothing"), "{cmd}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{cmd}: {}", r.out());
    }
}

/// Damage in the middle of a partition directory that has no recovery point: Kafka's recovery
/// would cut the log there and delete every intact entry after it. Every command that reads
/// the directory through its log (positions, read_committed, offsets) says so and exits 1;
/// none of them shows the first entries as if they were the whole partition (they did: `sql`
/// counted 4 records of 100 and `export` exported them, exit 0, nothing on stderr).
#[test]
fn damage_in_the_middle_of_a_partition_is_an_error_not_a_shorter_log() {
    let d = Dir::new();
    std::fs::create_dir_all(d.path("data/t-0")).unwrap();
    let segment = d.gen(
        "data/t-0/00000000000000000000.log",
        &[
            "--records",
            "100",
            "--records-per-batch",
            "1",
            "--value-size",
            "50",
        ],
    );
    let mut bytes = std::fs::read(&segment).unwrap();
    let entry = bytes.len() / 100;
    bytes[4 * entry + 30] ^= 0xff;
    std::fs::write(&segment, &bytes).unwrap();
    let part = d.arg("data/t-0");
    let said = format!("{segment}: byte {}: crc mismatch", 4 * entry);
    let follows = format!(
        "intact entries follow (the first at byte {}, offset 5)",
        5 * entry
    );
    let out = d.arg("out");
    let cases: [&[&str]; 6] = [
        &[
            "sql",
            "--table",
            &format!("t={part}"),
            "SELECT count(*) FROM t",
        ],
        &["export", &part, "--output", &out],
        &["dump", "--start", "10", &part],
        &["dump", "--isolation", "read-committed", &part],
        &["log", "read", &part],
        &["stats", "--start", "earliest", &part],
    ];
    for args in cases {
        let r = d.run(args, b"");
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(&said), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(&follows), "{args:?}: {}", r.stderr);
    }
    // What export wrote before it reached the damage is the records before it, once (a
    // second run exits 1 the same way and adds nothing); nothing in the partition changed.
    let parquet = || -> Vec<String> {
        walk(&d.path("out"))
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(
        parquet(),
        ["00000000000000000000-00000000000000000003.parquet"]
    );
    let r = d.run(&["export", &part, "--output", &out], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        parquet(),
        ["00000000000000000000-00000000000000000003.parquet"]
    );
    assert_eq!(std::fs::read(&segment).unwrap(), bytes);
    // The root's offsets: that partition has none to show, a warning says why, and the exit
    // code that its data is damaged.
    let r = d.run(&["offsets", &d.arg("data")], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.out().contains("t              0             -"),
        "{}",
        r.out()
    );
    assert!(r.stderr.contains(&follows), "{}", r.stderr);
    // Reading every entry as the files hold them reports the damage and goes on past it.
    let r = d.run(&["dump", &part], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.out().contains("baseOffset: 99 "), "{}", r.out());
    // Reads that end before the damage (offset 4) are whole: served, exit 0.
    let sql4 = format!("t={part}");
    let before: [(&[&str], &str, &str); 5] = [
        (
            &["dump", "--count", "3", &part],
            "baseOffset: 2 ",
            "baseOffset: 3 ",
        ),
        (
            &["dump", "--end", "4", "--isolation", "read-committed", &part],
            "baseOffset: 3 ",
            "baseOffset: 4 ",
        ),
        (
            &["log", "read", &part, "--start", "1", "--end", "4"],
            "\"offset\":3,",
            "\"offset\":0,",
        ),
        (
            &[
                "sql",
                "--table",
                &sql4,
                r#"SELECT count(*) AS n FROM t WHERE "offset" < 4"#,
            ],
            "| 4 ",
            "| 5 ",
        ),
        (
            &["stats", "--end", "4", &part],
            "      4           4  ",
            "crc",
        ),
    ];
    for (args, has, lacks) in before {
        let r = d.run(args, b"");
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(r.out().contains(has), "{args:?}: {}", r.out());
        assert!(!r.out().contains(lacks), "{args:?}: {}", r.out());
        assert!(
            !r.stderr.contains("not whole batches"),
            "{args:?}: {}",
            r.stderr
        );
    }
    // Reads that reach it, and questions about the end, fail naming it; nothing is printed
    // for a position counted from an end the damage hides.
    let reach: [&[&str]; 7] = [
        &["dump", "--end", "5", "--isolation", "read-committed", &part],
        &["dump", "--start", "-3", &part],
        &["log", "read", &part, "--end", "latest"],
        &["log", "offsets", &part, "--latest"],
        &["log", "info", &part],
        &[
            "sql",
            "--table",
            &sql4,
            r#"SELECT count(*) FROM t WHERE "offset" < 6"#,
        ],
        &["export", &part, "--end", "4", "--output", &out],
    ];
    for args in reach {
        let r = d.run(args, b"");
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(&said), "{args:?}: {}", r.stderr);
    }
    let r = d.run(&["dump", "--start", "-3", &part], b"");
    assert!(!r.out().contains("baseOffset"), "{}", r.out());
    // In a read of several partitions the damaged one is said and the others are read (the
    // read stopped at it, leaving those after it out); the exit code still says it.
    std::fs::create_dir_all(d.path("data/u-0")).unwrap();
    d.gen("data/u-0/00000000000000000000.log", &["--records", "20"]);
    let r = d.run(&["dump", "--start", "10", &d.arg("data")], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains(&said), "{}", r.stderr);
    assert!(
        r.stderr.contains("the other partitions are read"),
        "{}",
        r.stderr
    );
    assert!(r.out().contains("u-0"), "{}", r.out());
    assert!(
        !r.stderr.contains("cannot read"),
        "named once: {}",
        r.stderr
    );
    // verify of the same range checks u-0 and counts t-0 as a problem.
    let r = d.run(&["verify", "--start", "10", &d.arg("data")], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains(&said), "{}", r.stderr);
    assert!(
        r.out().contains("20 records") && r.out().contains("1 problem"),
        "{}",
        r.out()
    );
}

#[test]
fn a_log_read_ends_at_its_end_not_at_damage_after_it() {
    // A krec log closed cleanly (no scan at open) with a damaged batch at offset 30.
    let d = Dir::new();
    let dir = d.arg("t-0");
    assert_eq!(d.run(&["log", "create", &dir], b"").code, 0);
    let lines: String = (0..100)
        .map(|i| {
            format!(
                "{{\"timestamp\":{},\"value\":\"v{i:050}\"}}\n",
                1_714_000_000_000i64 + i
            )
        })
        .collect();
    let r = d.run(
        &["log", "append", &dir, "--records-per-batch", "1"],
        lines.as_bytes(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let segment = d.path("t-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&segment).unwrap();
    let entry = bytes.len() / 100;
    bytes[30 * entry + 70] ^= 0xff;
    std::fs::write(&segment, &bytes).unwrap();
    // The fetch of 5..20 holds the damaged batch too: not this read's.
    let r = d.run(&["log", "read", &dir, "--start", "5", "--end", "20"], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let offsets: Vec<i64> = r
        .out()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["offset"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(offsets, (5..20).collect::<Vec<_>>());
    // A read that reaches it fails.
    let r = d.run(&["log", "read", &dir, "--start", "5", "--end", "40"], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("offset 30 is invalid"), "{}", r.stderr);
    // Named by the segment's file and byte, not a byte of the fetch.
    let at = format!("{} at byte {}", segment.display(), 30 * entry);
    assert!(r.stderr.contains(&at), "{}", r.stderr);
}

/// A partition directory whose segment is gone but whose index files are left: verify warns
/// about the orphaned index files (as Kafka's loader does before deleting them) without calling
/// them a problem, and offsets names them (and calls an empty partition directory one)
/// instead of calling the directory "neither a partition directory nor a broker's data
/// directory".
#[test]
fn orphaned_index_files_are_named_by_verify_offsets_and_dump() {
    let d = Dir::new();
    let root = root(&d);
    std::fs::create_dir_all(d.path("data/lost-0")).unwrap();
    d.write("data/lost-0/00000000000000000000.index", b"");
    d.write("data/lost-0/00000000000000000000.timeindex", b"");
    let orphans = "00000000000000000000.index, 00000000000000000000.timeindex";
    let r = d.run(&["verify", &root], b"");
    assert_eq!(r.code, 0, "{}", r.out());
    assert!(
        r.stderr.contains(&format!(
            "lost-0: index files whose segments are gone: {orphans}"
        )),
        "{}",
        r.stderr
    );
    let r = d.run(&["offsets", &root], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let all = format!("{}{}", r.out(), r.stderr);
    assert!(
        all.contains(&format!(
            "only index files whose segments are gone: {orphans}"
        )),
        "{all}"
    );
    assert!(!all.contains("neither a partition directory"), "{all}");
    assert!(
        all.contains("empty-0: no .log segments here (an empty partition directory)"),
        "{all}"
    );
}

/// A partition of a root whose files cannot be read (a second segment that is a directory): verify,
/// offsets and metadata --offsets answer for the other partitions and exit 2, as for that
/// partition alone, since what they say is incomplete.
#[test]
fn an_unreadable_partition_of_a_root_is_exit_2_after_the_others_are_answered() {
    let d = Dir::new();
    for p in ["good-0", "bad-0"] {
        let dir = d.arg(&format!("data/{p}"));
        d.run(&["log", "create", &dir], b"").ok();
        d.run(&["log", "append", &dir], b"{\"value\":\"a\"}\n").ok();
    }
    std::fs::create_dir(d.path("data/bad-0/00000000000000000001.log")).unwrap();
    let root = d.arg("data");
    let r = d.run(&["verify", &root], b"");
    assert_eq!(r.code, 2, "{}", r.out());
    assert!(r.out().contains("[io]"), "{}", r.out());
    assert!(r.out().contains("2 partitions (1 ok"), "{}", r.out());
    assert_eq!(d.run(&["verify", &d.arg("data/bad-0")], b"").code, 2);
    for args in [
        &["offsets", &root][..],
        &["metadata", "--offsets", &root][..],
    ] {
        let r = d.run(args, b"");
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("bad-0"), "{args:?}: {}", r.stderr);
        assert!(r.out().contains("good"), "{args:?}: {}", r.out());
    }
}
