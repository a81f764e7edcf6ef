//! `krec verify` through the binary: clean files and logs exit 0; a flipped bit, a truncated
//! tail, bad index and time index entries, offsets out of order, a corrupt producer snapshot
//! and a transaction index without its marker exit 1 naming the file and byte position.

use crate::util::{crc32c, Dir};
use serde_json::Value;

const T0: i64 = 1_714_000_000_000;

fn records(n: usize) -> String {
    (0..n)
        .map(|i| format!("{{\"timestamp\":{},\"value\":\"v{i}\"}}\n", T0 + i as i64))
        .collect()
}

/// A log of five 2-record batches (79 bytes each) in segments 0 (offsets 0..=3), 4 (4..=7) and
/// 8 (8..=9); index.interval.bytes=0 indexes every batch after the first of a segment, so
/// 00000000000000000000.index holds (offset 3, position 79) and the .timeindex
/// (T0 + 3, offset 3).
fn indexed_log(d: &Dir) -> String {
    d.run(
        &[
            "log",
            "create",
            "p",
            "--config",
            "index.interval.bytes=0",
            "--config",
            "segment.bytes=200",
        ],
        b"",
    )
    .ok();
    d.run(
        &["log", "append", "p", "--records-per-batch", "2"],
        records(10).as_bytes(),
    )
    .ok();
    d.arg("p")
}

fn patch(d: &Dir, name: &str, f: impl FnOnce(&mut Vec<u8>)) {
    let mut b = d.read(name);
    f(&mut b);
    d.write(name, &b);
}

/// Problems of a `--format json` run, and its summary.
fn json_run(d: &Dir, path: &str) -> (i32, Vec<Value>, Value) {
    let r = d.run(&["verify", "--format", "json", path], b"");
    let mut lines = r.json_lines();
    let summary = lines.pop().expect("a summary");
    (r.code, lines, summary["summary"].clone())
}

#[test]
fn a_clean_log_and_a_clean_file_pass() {
    let d = Dir::new();
    let log = indexed_log(&d);
    let r = d.run(&["verify", &log], b"");
    assert_eq!(r.code, 0, "{}", r.out());
    // 3 segments × (log, index, timeindex, snapshot) + leader-epoch-checkpoint + krec-log.json.
    assert_eq!(
        r.out(),
        "14 files, 5 entries, 10 records, 395 bytes: no problems\n"
    );
    let (code, problems, summary) = json_run(&d, &log);
    assert_eq!(code, 0);
    assert!(problems.is_empty());
    assert_eq!(
        summary,
        serde_json::json!({"files":14,"entries":5,"records":10,"bytes":395,"problems":0})
    );
    let hello = d.hello("hello.bin");
    let r = d.run(&["verify", &hello], b"");
    assert_eq!(
        r.ok(),
        "1 file, 1 entry, 2 records, 85 bytes: no problems\n"
    );
    // --topic and --partition select partitions by topic and number: a file outside a TOPIC-N
    // directory has neither, so they select nothing: exit 2, not ignored (issue 30, item 8).
    let none = "hello.bin: no partition of a topic matching \"x\" (it has no topics)";
    d.run(&["verify", &hello, "--topic", "x"], b"")
        .fails(2, none);
    d.run(&["dump", &hello, "--topic", "x"], b"").fails(2, none);
    d.run(&["verify", &hello, "--partition", "1"], b"")
        .fails(2, "no partition 1 (it has no topics)");
    // Stdin too.
    let bytes = d.read("hello.bin");
    assert_eq!(d.run(&["verify", "-"], &bytes).code, 0);
}

#[test]
fn every_format_and_codec_passes() {
    let d = Dir::new();
    let mut paths = Vec::new();
    for (i, (magic, codec)) in [
        ("0", "none"),
        ("0", "gzip"),
        ("1", "snappy"),
        ("1", "lz4"),
        ("2", "zstd"),
        ("2", "gzip"),
    ]
    .into_iter()
    .enumerate()
    {
        let base = (i * 100).to_string();
        let out = d
            .run(
                &[
                    "build",
                    "--magic",
                    magic,
                    "--compression",
                    codec,
                    "--base-offset",
                    &base,
                    "--records-per-batch",
                    "3",
                ],
                records(6).as_bytes(),
            )
            .stdout;
        paths.push(d.write(&format!("part-{magic}-{codec}.bin"), &out));
    }
    let mut args = vec!["verify"];
    args.extend(paths.iter().map(String::as_str));
    let r = d.run(&args, b"");
    assert_eq!(r.code, 0, "{}", r.out());
    // Uncompressed v0: one entry per record; otherwise one per 3 records.
    assert_eq!(
        r.out(),
        "6 files, 16 entries, 36 records, ".to_string()
            + &format!(
                "{} bytes: no problems\n",
                paths
                    .iter()
                    .map(|p| std::fs::metadata(p).unwrap().len())
                    .sum::<u64>()
            )
    );
}

#[test]
fn a_flipped_bit_is_a_crc_problem_with_its_position() {
    let d = Dir::new();
    let log = indexed_log(&d);
    // The second batch of the first segment starts at byte 79; flip a bit in its records.
    patch(&d, "p/00000000000000000000.log", |b| b[79 + 70] ^= 0x04);
    let r = d.run(&["verify", &log], b"");
    assert_eq!(r.code, 1);
    let out = r.out();
    let seg = d.arg("p/00000000000000000000.log");
    assert!(
        out.contains(&format!("{seg}: byte 79: [entry]")) && out.contains("crc"),
        "{out}"
    );
    assert!(out.ends_with("1 problem\n"), "{out}");
    let (code, problems, summary) = json_run(&d, &log);
    assert_eq!(code, 1);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["file"], seg.as_str());
    assert_eq!(problems[0]["position"], 79);
    assert_eq!(problems[0]["check"], "entry");
    assert_eq!(summary["problems"], 1);
    // A single file alone says the same.
    d.run(&["verify", &seg], b"").reports(1, "byte 79");
}

#[test]
fn a_truncated_tail_is_a_problem() {
    let d = Dir::new();
    let log = indexed_log(&d);
    patch(&d, "p/00000000000000000008.log", |b| {
        b.truncate(b.len() - 10)
    });
    let seg = d.arg("p/00000000000000000008.log");
    d.run(&["verify", &log], b"").reports(
        1,
        &format!("{seg}: byte 0: [truncated] truncated entry: the last 69 bytes"),
    );
    // A file cut inside the 12-byte prefix.
    let hello = d.hello("hello.bin");
    patch(&d, "hello.bin", |b| b.truncate(9));
    d.run(&["verify", &hello], b"")
        .reports(1, "byte 0: [truncated]");
}

#[test]
fn bad_index_entries_are_problems_with_their_positions() {
    let d = Dir::new();
    let log = indexed_log(&d);
    let index = d.arg("p/00000000000000000000.index");
    assert_eq!(
        d.read("p/00000000000000000000.index"),
        [0, 0, 0, 3, 0, 0, 0, 79]
    );
    // Point the entry into the middle of the first batch.
    patch(&d, "p/00000000000000000000.index", |b| b[7] = 40);
    d.run(&["verify", &log], b"").reports(
        1,
        &format!(
            "{index}: byte 0: [index] entry 0 (offset 3, position 40) is not at an entry boundary"
        ),
    );
    // The right position with the wrong offset for the batch there.
    patch(&d, "p/00000000000000000000.index", |b| {
        b[7] = 79;
        b[3] = 2;
    });
    let (code, problems, _) = json_run(&d, &log);
    assert_eq!(code, 1);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["file"], index.as_str());
    assert_eq!(problems[0]["position"], 0);
    assert_eq!(problems[0]["check"], "index");
    assert!(
        problems[0]["message"]
            .as_str()
            .unwrap()
            .contains("entry 0 (offset 2, position 79): the entry there has last offset 3"),
        "{problems:?}"
    );
    // An entry past the end of the segment.
    patch(&d, "p/00000000000000000000.index", |b| {
        b[3] = 3;
        b.extend_from_slice(&[0, 0, 0, 9, 0, 0, 1, 0]);
    });
    d.run(&["verify", &log], b"").reports(
        1,
        &format!(
            "{index}: byte 8: [index] entry 1 (offset 9, position 256) is past the last entry"
        ),
    );
    // An entry that does not increase.
    patch(&d, "p/00000000000000000000.index", |b| {
        b.truncate(8);
        b.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 90]);
    });
    d.run(&["verify", &log], b"").reports(
        1,
        &format!("{index}: byte 8: [index] entry 1 (offset 2, position 90) does not increase"),
    );
    // A partial entry.
    patch(&d, "p/00000000000000000000.index", |b| b.truncate(11));
    d.run(&["verify", &log], b"").reports(
        1,
        &format!("{index}: byte 8: [index] 3 bytes of a partial entry"),
    );
}

#[test]
fn a_preallocated_zero_tail_is_not_a_problem_but_a_zeroed_entry_is() {
    let d = Dir::new();
    let log = indexed_log(&d);
    patch(&d, "p/00000000000000000000.index", |b| b.resize(4096, 0));
    patch(&d, "p/00000000000000000000.timeindex", |b| {
        b.resize(4092, 0)
    });
    assert_eq!(d.run(&["verify", &log], b"").code, 0);
    // A zeroed entry before a real one is an entry (offset 0, position 0), and wrong: the
    // batch at position 0 ends at offset 1.
    patch(&d, "p/00000000000000000000.index", |b| {
        let mut z = vec![0u8; 8];
        z.extend_from_slice(&b[..8]);
        *b = z;
    });
    d.run(&["verify", &log], b"")
        .reports(1, "the entry there has last offset 1");
}

#[test]
fn bad_time_index_entries_are_problems() {
    let d = Dir::new();
    let log = indexed_log(&d);
    let ti = d.arg("p/00000000000000000000.timeindex");
    let mut expected = (T0 + 3).to_be_bytes().to_vec();
    expected.extend_from_slice(&3i32.to_be_bytes());
    assert_eq!(d.read("p/00000000000000000000.timeindex"), expected);
    // The entry claims a larger timestamp than the batches up to its offset hold.
    patch(&d, "p/00000000000000000000.timeindex", |b| b[7] += 50);
    let expected = format!(
        "{ti}: byte 0: [timeindex] entry 0 (timestamp {}, offset 3): the largest timestamp up to that offset is {}",
        T0 + 53,
        T0 + 3
    );
    d.run(&["verify", &log], b"").reports(1, &expected);
    // A second entry going back in time.
    patch(&d, "p/00000000000000000000.timeindex", |b| {
        b[7] -= 50;
        b.extend_from_slice(&(T0 + 1).to_be_bytes());
        b.extend_from_slice(&3i32.to_be_bytes());
    });
    let (code, problems, _) = json_run(&d, &log);
    assert_eq!(code, 1);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["position"], 12);
    assert!(
        problems[0]["message"]
            .as_str()
            .unwrap()
            .contains("does not increase"),
        "{problems:?}"
    );
    // An offset outside the segment.
    patch(&d, "p/00000000000000000000.timeindex", |b| {
        b.truncate(12);
        b.extend_from_slice(&(T0 + 9).to_be_bytes());
        b.extend_from_slice(&7i32.to_be_bytes());
    });
    d.run(&["verify", &log], b"").reports(
        1,
        &format!(
            "{ti}: byte 12: [timeindex] entry 1 (timestamp {}, offset 7) is past the last offset",
            T0 + 9
        ),
    );
}

#[test]
fn offsets_must_increase_across_entries_and_segments() {
    let d = Dir::new();
    std::fs::create_dir(d.path("q")).unwrap();
    let a = d
        .run(&["build", "--base-offset", "0"], records(3).as_bytes())
        .stdout;
    let b = d
        .run(&["build", "--base-offset", "2"], records(3).as_bytes())
        .stdout;
    d.write("q/00000000000000000000.log", &a);
    d.write("q/00000000000000000002.log", &b);
    d.run(&["verify", &d.arg("q")], b"").reports(
        1,
        "segment base offset 2 is not above the previous segment's last offset 2",
    );
    // Within one file.
    let mut both = a.clone();
    both.extend_from_slice(&b);
    let f = d.write("both.bin", &both);
    let expected = format!(
        "byte {}: [offsets] entry with offsets 2..=4 does not follow the previous last offset 2",
        a.len()
    );
    d.run(&["verify", &f], b"").reports(1, &expected);
    // Below the segment's own base offset.
    d.write("q/00000000000000000002.log", &a);
    std::fs::remove_file(d.path("q/00000000000000000000.log")).unwrap();
    d.run(&["verify", &d.arg("q")], b"")
        .reports(1, "is below the segment's base offset 2");
}

/// A partition's leader epochs never go down along its log, and no CRC covers them: a flipped
/// bit that lowers one is found; epochs that go up, or -1 (none), are clean.
#[test]
fn a_partition_leader_epoch_that_goes_down_is_reported() {
    let d = Dir::new();
    std::fs::create_dir(d.path("e")).unwrap();
    let batches = |epochs: &[i32]| -> Vec<u8> {
        let mut out = Vec::new();
        for (i, epoch) in epochs.iter().enumerate() {
            let (base, epoch) = ((2 * i).to_string(), epoch.to_string());
            let args = [
                "build",
                "--base-offset",
                &base,
                "--partition-leader-epoch",
                &epoch,
            ];
            out.extend(d.run(&args, records(2).as_bytes()).stdout);
        }
        out
    };
    let seg = "e/00000000000000000000.log";
    for epochs in [[0, 0, 3, 3, 5], [-1, 2, -1, 2, 5]] {
        d.write(seg, &batches(&epochs));
        d.run(&["verify", &d.arg("e")], b"").ok();
    }
    let mut flipped = batches(&[7, 7, 7, 7, 7]);
    let len = flipped.len() / 5;
    flipped[2 * len + 15] ^= 0x04; // epoch 7 of the middle batch becomes 3
    d.write(seg, &flipped);
    d.run(&["verify", &d.arg("e")], b"").reports(
        1,
        &format!(
            "byte {}: [entry] entry with offsets 4..=5: partition leader epoch 3 is below epoch 7 \
             of an earlier entry (last offset 3): epochs never go down in a partition's log (a \
             flipped bit, or logs of two replicas mixed)",
            2 * len
        ),
    );
    // Salvage keeps that batch, as Kafka's recovery does (nothing lost: exit 0), and lists
    // the place verify reports, in text and JSON.
    let r = d.run(&["salvage", &d.arg("e"), "-o", &d.arg("s1")], b"");
    r.ok();
    assert!(
        r.out().contains(&format!(
            "epoch goes down: {} byte {}: offsets 4..=5 have partition leader epoch 3, below \
             epoch 7 of offset 3 kept before them; kept, as Kafka's recovery keeps them (krec \
             verify reports it)",
            d.arg(seg),
            2 * len
        )),
        "{}",
        r.out()
    );
    let r = d.run(
        &[
            "salvage",
            &d.arg("e"),
            "-o",
            &d.arg("s2"),
            "--format",
            "json",
        ],
        b"",
    );
    r.ok();
    let down = &r.json()["epochs_down"];
    assert_eq!(down.as_array().unwrap().len(), 1, "{down}");
    assert_eq!(down[0]["position"], 2 * len as u64);
    assert_eq!(down[0]["first_offset"], 4);
    assert_eq!(down[0]["epoch"], 3);
    assert_eq!(down[0]["earlier_epoch"], 7);
    assert_eq!(down[0]["earlier_last_offset"], 3);
    d.run(&["verify", &d.arg("s2")], b"")
        .reports(1, "partition leader epoch 3 is below epoch 7");
}

/// Kafka's producer snapshot with one entry.
fn snapshot_bytes() -> Vec<u8> {
    let mut entries = Vec::new();
    entries.extend_from_slice(&7i64.to_be_bytes()); // producer id
    entries.extend_from_slice(&0i16.to_be_bytes()); // epoch
    entries.extend_from_slice(&4i32.to_be_bytes()); // last sequence
    entries.extend_from_slice(&9i64.to_be_bytes()); // last offset
    entries.extend_from_slice(&4i32.to_be_bytes()); // offset delta
    entries.extend_from_slice(&T0.to_be_bytes()); // timestamp
    entries.extend_from_slice(&(-1i32).to_be_bytes()); // coordinator epoch
    entries.extend_from_slice(&(-1i64).to_be_bytes()); // current txn first offset
    let mut body = 1i32.to_be_bytes().to_vec();
    body.extend_from_slice(&entries);
    let crc = crc32c(&body);
    let mut out = 1i16.to_be_bytes().to_vec();
    out.extend_from_slice(&crc.to_be_bytes());
    out.extend_from_slice(&body);
    out
}

#[test]
fn producer_snapshots_are_checked() {
    let d = Dir::new();
    let log = indexed_log(&d);
    d.write("p/00000000000000000010.snapshot", &snapshot_bytes());
    let r = d.run(&["verify", &log], b"");
    assert_eq!(r.code, 0, "{}", r.out());
    patch(&d, "p/00000000000000000010.snapshot", |b| b[20] ^= 1);
    let snap = d.arg("p/00000000000000000010.snapshot");
    d.run(&["verify", &log], b"")
        .reports(1, &format!("{snap}: byte 2: [snapshot] crc mismatch"));
    d.write("p/00000000000000000010.snapshot", &snapshot_bytes()[..30]);
    d.run(&["verify", &log], b"")
        .reports(1, "[snapshot] 1 producer entries do not fit");
}

/// A segment with an aborted transaction of producer 2 (data at 0, abort marker at 1) and its
/// `.txnindex` entry.
#[test]
fn transaction_index_entries_must_end_at_an_abort_marker() {
    let d = Dir::new();
    std::fs::create_dir(d.path("t")).unwrap();
    let mut seg = d
        .run(
            &[
                "build",
                "--producer-id",
                "2",
                "--producer-epoch",
                "0",
                "--base-sequence",
                "0",
                "--transactional",
            ],
            records(1).as_bytes(),
        )
        .stdout;
    seg.extend(
        d.run(
            &[
                "build",
                "--control",
                "abort",
                "--producer-id",
                "2",
                "--producer-epoch",
                "0",
                "--base-offset",
                "1",
            ],
            b"",
        )
        .stdout,
    );
    d.write("t/00000000000000000000.log", &seg);
    let txn = |producer: i64, first: i64, last: i64| {
        let mut e = 0i16.to_be_bytes().to_vec();
        e.extend_from_slice(&producer.to_be_bytes());
        e.extend_from_slice(&first.to_be_bytes());
        e.extend_from_slice(&last.to_be_bytes());
        e.extend_from_slice(&0i64.to_be_bytes());
        e
    };
    d.write("t/00000000000000000000.txnindex", &txn(2, 0, 1));
    let r = d.run(&["verify", &d.arg("t")], b"");
    assert_eq!(r.code, 0, "{}", r.out());
    d.write("t/00000000000000000000.txnindex", &txn(3, 0, 1));
    d.run(&["verify", &d.arg("t")], b"").reports(
        1,
        "byte 0: [txnindex] entry 0 (producer 3, offsets 0..=1): no abort marker",
    );
}

#[test]
fn missing_paths_exit_2() {
    let d = Dir::new();
    let r = d.run(&["verify", "nope.log"], b"");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("nope.log"), "{}", r.stderr);
    std::fs::create_dir(d.path("empty")).unwrap();
    assert_eq!(d.run(&["verify", &d.arg("empty")], b"").code, 2);
}

/// Kafka's `CheckpointFile` reads an empty file, or one that ends after its version line, as no
/// entries (Kafka 4.4 leaves an empty `leader-epoch-checkpoint` for a log without epochs);
/// anything else that does not start with version 0 is a problem.
#[test]
fn an_empty_leader_epoch_checkpoint_is_no_entries() {
    let d = Dir::new();
    let log = indexed_log(&d);
    for ok in [&b""[..], b"0\n"] {
        d.write("p/leader-epoch-checkpoint", ok);
        let r = d.run(&["verify", &log], b"");
        assert_eq!(r.code, 0, "{:?}: {}", ok, r.out());
    }
    d.write("p/leader-epoch-checkpoint", b"1\n0\n");
    let (code, problems, _) = json_run(&d, &log);
    assert_eq!(code, 1);
    assert!(
        problems
            .iter()
            .any(|p| p.to_string().contains("not version 0")),
        "{problems:?}"
    );
    // A count that does not match its lines, said in plain numbers; an epoch starting past the
    // log end offset; an epoch starting at the log end is a leader that has written nothing.
    let end = d.run(&["log", "info", &log], b"").json()["high_watermark"]
        .as_i64()
        .unwrap();
    for (text, problem) in [
        (
            "0\n3\n0 0\n".to_string(),
            "declares 3 entries but holds 1".to_string(),
        ),
        (
            format!("0\n2\n0 0\n1 {}\n", end + 1),
            format!(
                "epoch 1 starts at offset {}, past the log end offset {end}",
                end + 1
            ),
        ),
    ] {
        d.write("p/leader-epoch-checkpoint", text.as_bytes());
        let (code, problems, _) = json_run(&d, &log);
        assert_eq!(code, 1, "{text:?}");
        assert!(
            problems.iter().any(|p| p.to_string().contains(&problem)),
            "{text:?}: {problems:?}"
        );
    }
    d.write(
        "p/leader-epoch-checkpoint",
        format!("0\n2\n0 0\n1 {end}\n").as_bytes(),
    );
    assert_eq!(d.run(&["verify", &log], b"").code, 0);
}

/// A quoted glob pattern (one the shell did not expand) is every file it matches, each checked
/// as if named on its own: it used to check the first match only and pass over a corrupt one.
#[test]
fn a_quoted_pattern_checks_every_file_it_matches() {
    let d = Dir::new();
    std::fs::create_dir(d.path("segs")).unwrap();
    d.gen("segs/a.log", &["--records", "20"]);
    let mut bytes = std::fs::read(d.path("segs/a.log")).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    d.write("segs/b.log", &bytes);
    let r = d.run(&["verify", &d.arg("segs/*.log")], b"");
    r.fails(1, "");
    assert!(r.out().contains("2 files"), "{}", r.out());
    assert!(r.out().contains("b.log"), "{}", r.out());
    let r = d.run(&["verify", &d.arg("segs/*.nothing")], b"");
    r.fails(2, "no file matches");
}

/// verify checked a partition as many times as its arguments named it (a root twice, a root
/// and one of its partition directories, a segment file with its directory, two spellings of
/// one path), where the other commands read it once; it checks each once, the range of a
/// `--count` too, and says which were named twice as dump says it.
#[test]
fn a_partition_named_twice_is_verified_once_with_dumps_note() {
    let d = Dir::new();
    d.partition("data/a-0", 30);
    d.partition("data/b-0", 30);
    let (root, dir) = (d.arg("data"), d.arg("data/a-0"));
    let segment = d.arg("data/a-0/00000000000000000000.log");
    let (spelled, dot) = (format!("{root}/./"), format!("{dir}/."));
    let run = |cmd: &str, args: &[&str]| d.run(&[&[cmd][..], args].concat(), b"");
    let notes = |stderr: &str| -> Vec<String> {
        let notes: Vec<String> = stderr
            .lines()
            .filter(|l| l.contains("read once"))
            .map(str::to_owned)
            .collect();
        assert!(!notes.is_empty(), "{stderr}");
        notes
    };
    let cases: [(&[&str], &[&str]); 7] = [
        (&[&root, &root], &[&root]),
        (&[&root, &spelled], &[&root]),
        (&[&dir, &root], &[&root]),
        (&[&root, &dir], &[&root]),
        (&[&segment, &dir, &segment], &[&dir]),
        (&[&dir, &dot], &[&dir]),
        (&[&root, &root, "--count", "3"], &[&root, "--count", "3"]),
    ];
    for (twice, once) in cases {
        let r = run("verify", twice);
        assert_eq!(r.ok(), run("verify", once).ok(), "{twice:?}");
        assert_eq!(
            notes(&r.stderr),
            notes(&run("dump", twice).stderr),
            "{twice:?}"
        );
    }
    let r = d.run(&["verify", &root, &spelled], b"");
    assert!(r.out().starts_with("2 partitions (2 ok"), "{}", r.out());
}
