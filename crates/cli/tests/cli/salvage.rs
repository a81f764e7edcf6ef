//! `krec salvage` through the binary: a damaged partition is salvaged into a directory that
//! `krec verify` passes, the exit code says whether anything was lost, a log.dirs root salvages
//! only its damaged partitions, and an existing output is a usage error.

use crate::util::{
    fails_keeping_earlier, finish, krec, misname_third_segment, start, temporaries, Dir, Run,
};

/// A partition directory `name` holding one zstd segment of `krec gen`, optionally with 64
/// zeroed bytes in its middle.
fn partition(d: &Dir, name: &str, damaged: bool) -> String {
    std::fs::create_dir_all(d.path(name)).unwrap();
    let seg = d.gen(
        &format!("{name}.gen"),
        &[
            "--records",
            "400",
            "--records-per-batch",
            "10",
            "--compression",
            "zstd",
        ],
    );
    let mut bytes = std::fs::read(&seg).unwrap();
    if damaged {
        let mid = bytes.len() / 2;
        bytes[mid..mid + 64].fill(0);
    }
    d.write(&format!("{name}/00000000000000000000.log"), &bytes);
    d.arg(name)
}

#[test]
fn a_damaged_partition_is_salvaged_into_a_verified_log() {
    let d = Dir::new();
    let input = partition(&d, "data/t-0", true);
    let out = d.arg("out/t-0");
    let r = d.run(
        &[
            "salvage",
            &input,
            "--output",
            &out,
            "--format",
            "json",
            "--keep-damaged",
            "dmg.bin",
        ],
        b"",
    );
    r.fails(1, "");
    let report = r.json();
    assert_eq!(report["lost_anything"], true);
    let damaged = report["damaged"].as_array().unwrap();
    assert!(!damaged.is_empty());
    let len: u64 = damaged.iter().map(|x| x["length"].as_u64().unwrap()).sum();
    assert_eq!(d.read("dmg.bin").len() as u64, len);
    assert!(report["kept_entries"].as_u64().unwrap() >= 38, "{report}");
    assert!(
        report["kafka_recovery"]["entries"].as_u64().unwrap()
            < report["kept_entries"].as_u64().unwrap()
    );
    d.run(&["verify", &out], b"").ok();
    // The text report names the damage.
    let again = d.run(&["salvage", &input, "--output", &d.arg("out2")], b"");
    again.fails(1, "");
    assert!(again.out().contains("damaged: "), "{}", again.out());
    // The input is unchanged; an existing output is a usage error: an earlier salvage's
    // (kept and skipped only with --skip-existing) or one holding any other file (never).
    d.run(&["salvage", &input, "--output", &out], b"").fails(
        2,
        "t-0: already holds a partition salvaged by an earlier run",
    );
    let skipped = d.run(
        &["salvage", &input, "--output", &out, "--skip-existing"],
        b"",
    );
    skipped.fails(1, "");
    assert!(
        skipped.out().contains(&format!(
            "skipped, already salvaged into {out} by an earlier run"
        )),
        "{}",
        skipped.out()
    );
    std::fs::create_dir(d.path("other")).unwrap();
    d.write("other/x", b"x");
    let other = d.arg("other");
    for skip in [&[][..], &["--skip-existing"][..]] {
        let args = [&["salvage", &input, "--output", &other][..], skip].concat();
        d.run(&args, b"").fails(
            2,
            "other: already holds files a salvage did not write (x); salvage never writes into \
             or over them",
        );
    }
    assert_eq!(d.read("other/x"), b"x");
}

/// A log.dirs root salvage that stopped part way (a full disk; here a file size limit) goes
/// on when run again with --skip-existing: the partition completed before is kept and
/// reported as skipped, the rest salvaged; without the flag the rerun says how to go on, and a
/// partition directory holding anything else is never written into.
#[test]
fn a_root_salvage_that_stopped_part_way_goes_on_with_skip_existing() {
    let d = Dir::new();
    partition(&d, "data/t-0", true);
    // t-1: a segment of about 30 MB, above the limit (12 or 24 MiB); t-0's files stay
    // below it.
    std::fs::create_dir_all(d.path("data/t-1")).unwrap();
    let big = d.gen(
        "big.gen",
        &[
            "--records",
            "30000",
            "--value-size",
            "1000",
            "--records-per-batch",
            "100",
        ],
    );
    let mut bytes = std::fs::read(&big).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid..mid + 64].fill(0);
    d.write("data/t-1/00000000000000000000.log", &bytes);
    let args = ["salvage", "data", "-o", "out"];
    let r = crate::util::run_with_file_limit(&d, 24576, &args, b"");
    r.fails(2, "File too large");
    assert!(d.path("out/t-0").is_dir(), "{}", r.stderr);
    assert!(!d.path("out/t-1").exists());
    assert_eq!(temporaries(&d, "out"), Vec::<String>::new());
    let t0 = tree(&d, "out/t-0");
    // Without the flag: refused, saying how to go on.
    d.run(&args, b"").fails(
        2,
        "out/t-0: already holds a partition salvaged by an earlier run (00000000000000000000.index, \
         00000000000000000000.log",
    );
    d.run(&args, b"").fails(2, "run again with --skip-existing");
    assert!(!d.path("out/t-1").exists());
    let r = d.run(&[&args[..], &["--skip-existing"]].concat(), b"");
    r.fails(1, "");
    assert!(
        r.out()
            .contains("data/t-0: skipped, already salvaged into out/t-0 by an earlier run"),
        "{}",
        r.out()
    );
    assert!(
        r.out().contains("data/t-1: salvaged into out/t-1"),
        "{}",
        r.out()
    );
    assert_eq!(tree(&d, "out/t-0"), t0, "t-0 left as it was");
    d.run(&["verify", "out/t-1"], b"").ok();
    // JSON says which were skipped.
    let r = d.run(
        &[&args[..], &["--skip-existing", "--format", "json"]].concat(),
        b"",
    );
    r.fails(1, "");
    let lines: Vec<serde_json::Value> = r
        .out()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l["skipped"] == true), "{lines:?}");
    // A partition directory holding a file salvage did not write is refused, even so.
    d.write("out/t-1/notes.txt", b"mine");
    d.run(&[&args[..], &["--skip-existing"]].concat(), b"")
        .fails(2, "out/t-1: already holds files a salvage did not write");
    assert_eq!(d.read("out/t-1/notes.txt"), b"mine");
}

#[test]
fn an_intact_partition_exits_0_and_a_root_salvages_only_damaged_partitions() {
    let d = Dir::new();
    let intact = partition(&d, "data/u-0", false);
    d.run(&["salvage", &intact, "--output", &d.arg("whole")], b"")
        .ok();
    partition(&d, "data/t-0", true);
    let r = d.run(&["salvage", &d.arg("data"), "--output", &d.arg("out")], b"");
    r.fails(1, "");
    assert!(d.path("out/t-0").is_dir());
    assert!(!d.path("out/u-0").exists());
    assert!(r.out().contains("intact, left alone"), "{}", r.out());
    d.run(
        &[
            "salvage",
            &d.arg("data"),
            "--output",
            &d.arg("all"),
            "--all",
        ],
        b"",
    )
    .fails(1, "");
    assert!(d.path("all/u-0").is_dir());
}

/// The 12-byte-prefixed entries of `bytes`: (position, length).
fn entry_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut pos = 0;
    while pos + 12 <= bytes.len() {
        let size = i32::from_be_bytes(bytes[pos + 8..pos + 12].try_into().unwrap()) as usize;
        spans.push((pos, 12 + size));
        pos += 12 + size;
    }
    spans
}

#[test]
fn krec_gen_segments_of_every_magic_and_codec_keep_every_untouched_entry() {
    // One entry damaged in the middle (a flipped byte inside it, or for v2 also its base
    // offset raised: no CRC covers that field): the output holds every other entry byte for
    // byte and in order, the report names the one entry lost, and the output verifies.
    let d = Dir::new();
    let mut cases = 0;
    for magic in ["0", "1", "2"] {
        for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
            if codec == "zstd" && magic != "2" {
                continue;
            }
            let name = format!("m{magic}-{codec}");
            let headers = if magic == "2" { "1" } else { "0" };
            let seg = d.gen(
                &format!("{name}.gen"),
                &[
                    "--magic",
                    magic,
                    "--compression",
                    codec,
                    "--records",
                    "120",
                    "--records-per-batch",
                    "8",
                    "--headers",
                    headers,
                ],
            );
            let original = std::fs::read(&seg).unwrap();
            let spans = entry_spans(&original);
            assert!(spans.len() >= 15, "{name}: {} entries", spans.len());
            let (pos, len) = spans[spans.len() / 2];
            let damages: &[&str] = if magic == "2" {
                &["flip", "base-offset"]
            } else {
                &["flip"]
            };
            for &damage in damages {
                let mut bytes = original.clone();
                match damage {
                    "flip" => bytes[pos + len / 2] ^= 0x21,
                    _ => bytes[pos + 3] |= 0x10, // base offset + 2^40
                }
                let dir = format!("{name}-{damage}/t-0");
                std::fs::create_dir_all(d.path(&dir)).unwrap();
                d.write(&format!("{dir}/00000000000000000000.log"), &bytes);
                let out = d.arg(&format!("out-{name}-{damage}"));
                let r = d.run(
                    &[
                        "salvage",
                        &d.arg(&dir),
                        "--output",
                        &out,
                        "--format",
                        "json",
                    ],
                    b"",
                );
                r.fails(1, "");
                let report = r.json();
                let (damaged, left_out) = (
                    report["damaged"].as_array().unwrap(),
                    report["left_out"].as_array().unwrap(),
                );
                let lost = if damage == "flip" { damaged } else { left_out };
                assert_eq!(lost.len(), 1, "{name} {damage}: {report}");
                assert_eq!(lost[0]["position"], pos as u64, "{name} {damage}");
                assert_eq!(lost[0]["length"], len as u64, "{name} {damage}");
                assert_eq!(damaged.len() + left_out.len(), 1, "{name} {damage}");
                let mut want = original[..pos].to_vec();
                want.extend_from_slice(&original[pos + len..]);
                let got =
                    std::fs::read(d.path(&format!("out-{name}-{damage}/00000000000000000000.log")))
                        .unwrap();
                assert!(
                    got == want,
                    "{name} {damage}: the output is not the other entries"
                );
                d.run(&["verify", &out], b"").ok();
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 18);
}

#[test]
fn a_lost_abort_marker_is_written_again_unless_transactions_are_left_open() {
    let d = Dir::new();
    // Producer 7: a transaction of epoch 0 aborted, one of epoch 1 committed (version 2).
    let data = |base: &str, epoch: &str, value: &str| {
        let line = format!("{{\"timestamp\":1714000000000,\"value\":\"{value}\"}}\n");
        let lines = line.repeat(2);
        let args = [
            "build",
            "--base-offset",
            base,
            "--producer-id",
            "7",
            "--producer-epoch",
            epoch,
            "--base-sequence",
            "0",
            "--transactional",
        ];
        let r = d.run(&args, lines.as_bytes());
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
    };
    let marker = |base: &str, epoch: &str, kind: &str| {
        let args = [
            "build",
            "--control",
            kind,
            "--base-offset",
            base,
            "--producer-id",
            "7",
            "--producer-epoch",
            epoch,
            "--timestamp",
            "1714000000000",
        ];
        let r = d.run(&args, b"");
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
    };
    let (aborted, abort) = (data("0", "0", "aborted"), marker("2", "1", "abort"));
    let (committed, commit) = (data("3", "2", "committed"), marker("5", "3", "commit"));
    let mut bytes = [aborted, vec![0; abort.len()], committed, commit].concat();
    // The abort marker zeroed (a torn page).
    assert!(bytes.len() > 100);
    std::fs::create_dir_all(d.path("in/t-0")).unwrap();
    d.write("in/t-0/00000000000000000000.log", &bytes);
    bytes.clear();
    let input = d.arg("in/t-0");
    let read = |out: &str| {
        let r = d.run(&["log", "read", out, "--isolation", "read-committed"], b"");
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.out()
    };
    let out = d.arg("out/t-0");
    let r = d.run(
        &["salvage", &input, "--output", &out, "--format", "json"],
        b"",
    );
    r.fails(1, "");
    let t = &r.json()["transactions"][0];
    assert_eq!(
        (t["producer_id"].as_i64(), t["aborted_at"].as_i64()),
        (Some(7), Some(2)),
        "{t}"
    );
    let served = read(&out);
    assert!(
        served.contains("committed") && !served.contains("aborted"),
        "{served}"
    );
    d.run(&["verify", &out], b"").ok();
    // The text report says it; left open, Kafka commits the aborted records with the next
    // transaction.
    let open = d.arg("open/t-0");
    let r = d.run(
        &[
            "salvage",
            &input,
            "--output",
            &open,
            "--leave-transactions-open",
        ],
        b"",
    );
    r.fails(1, "");
    assert!(
        r.out().contains("transaction: producer 7 epoch 0"),
        "{}",
        r.out()
    );
    assert!(
        r.out()
            .contains("0 closed with an ABORT marker, 1 left open"),
        "{}",
        r.out()
    );
    assert!(read(&open).contains("aborted"));
}

/// `--max-entry-size` below the smallest Kafka entry is a usage error (it panicked below 5).
#[test]
fn a_max_entry_size_below_any_entry_is_a_usage_error() {
    let d = Dir::new();
    let part = partition(&d, "t-0", false);
    for n in ["0", "4", "13"] {
        let r = d.run(
            &[
                "salvage",
                &part,
                "--output",
                &d.arg("out"),
                "--max-entry-size",
                n,
            ],
            b"",
        );
        assert_eq!(r.code, 2, "{n}: {}", r.stderr);
        assert!(r.stderr.contains("smallest Kafka entry"), "{}", r.stderr);
    }
    // Standard input is not a source salvage takes: said as such (it was "open -: No such
    // file or directory").
    let r = d.run(&["salvage", "-", "--output", &d.arg("out")], b"");
    r.fails(2, "not standard input");
}

/// A segment named for a base offset at or below what the segment before holds (a broker
/// refuses the directory, verify reports it): not intact. Salvage names it after its first
/// offset, says so, and exits 1; a root's salvage takes the partition in.
#[test]
fn a_misnamed_segment_is_renamed_and_reported() {
    let d = Dir::new();
    let log = d.arg("data/m-0");
    std::fs::create_dir_all(d.path("data")).unwrap();
    d.run(
        &["log", "create", &log, "--config", "segment.bytes=200"],
        b"",
    )
    .ok();
    let records: String = (0..12)
        .map(|i| {
            format!(
                "{{\"timestamp\":{},\"value\":\"v{i}\"}}\n",
                1_700_000_000_000i64 + i
            )
        })
        .collect();
    d.run(
        &["log", "append", &log, "--records-per-batch", "2"],
        records.as_bytes(),
    )
    .ok();
    let (named, real) = misname_third_segment(&d, "data/m-0");
    assert_eq!(d.run(&["verify", &log], b"").code, 1);
    let r = d.run(&["salvage", &d.arg("data"), "--output", &d.arg("out")], b"");
    r.fails(1, "");
    let want = format!("is named for base offset {named}");
    assert!(r.out().contains(&want), "{}", r.out());
    assert!(
        r.out().contains(&format!("written as {real:020}.log")),
        "{}",
        r.out()
    );
    let out = d.arg("out/m-0");
    d.run(&["verify", &out], b"").ok();
    assert!(d.path(&format!("out/m-0/{real:020}.log")).exists());
    let dump = |dir: &str| d.run(&["log", "read", dir], b"").ok();
    let original: Vec<String> = records.lines().map(str::to_owned).collect();
    assert_eq!(dump(&out).lines().count(), original.len());
    // JSON says it too.
    let r = d.run(
        &[
            "salvage",
            &log,
            "--output",
            &d.arg("one"),
            "--format",
            "json",
        ],
        b"",
    );
    let report = r.fails(1, "").json();
    assert_eq!(report["renamed"][0]["written_as"], real, "{report}");
}

/// The names below `dir`, sorted.
fn tree(d: &Dir, dir: &str) -> Vec<std::path::PathBuf> {
    let mut all = crate::util::walk(&d.path(dir));
    all.sort();
    all
}

/// An output inside the source — the partition directory, a log.dirs root, or the directory
/// itself through a link — would put a salvaged partition into the data a broker reads: a
/// usage error naming both paths, before anything is created (it salvaged into it).
#[test]
fn an_output_inside_the_source_is_refused_and_nothing_created() {
    let d = Dir::new();
    let part = partition(&d, "data/t-0", true);
    let before = tree(&d, "data");
    let inside = d.arg("data/t-0/salvaged");
    d.run(&["salvage", &part, "--output", &inside], b"").fails(
        2,
        &format!("the output {inside} is the source directory {part} "),
    );
    // Equal to it, under the root, and the root given through a link.
    d.run(&["salvage", &part, "--output", &part], b"")
        .fails(2, "is the source directory");
    let root = d.arg("data");
    d.run(&["salvage", &root, "--output", &d.arg("data/out")], b"")
        .fails(2, &format!("is the source directory {root} "));
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(d.path("data"), d.path("link")).unwrap();
        d.run(
            &["salvage", &d.arg("link"), "-o", &d.arg("data/via-link")],
            b"",
        )
        .fails(2, "is the source directory");
    }
    assert_eq!(tree(&d, "data"), before, "nothing created in the source");
    // --keep-damaged is not created either when the output is refused.
    d.run(
        &["salvage", &part, "-o", &inside, "--keep-damaged", "dmg.bin"],
        b"",
    )
    .fails(2, "is the source directory");
    assert!(!d.path("dmg.bin").exists());
}

/// Segment files given out of order are read in the offset order of their names, as a
/// partition directory's are: everything is kept (they were salvaged in the order given, every
/// entry of the later files left out as going backwards).
#[test]
fn segment_files_given_out_of_order_are_salvaged_in_offset_order() {
    let d = Dir::new();
    let log = d.arg("m-0");
    d.run(
        &["log", "create", &log, "--config", "segment.bytes=200"],
        b"",
    )
    .ok();
    let records: String = (0..12)
        .map(|i| format!("{{\"timestamp\":{i},\"value\":\"v{i}\"}}\n"))
        .collect();
    d.run(
        &["log", "append", &log, "--records-per-batch", "2"],
        records.as_bytes(),
    )
    .ok();
    let mut segments: Vec<String> = tree(&d, "m-0")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(segments.len() >= 3, "{segments:?}");
    segments.reverse();
    let out = d.arg("out");
    let mut args = vec!["salvage"];
    args.extend(segments.iter().map(String::as_str));
    args.extend(["--output", &out, "--format", "json"]);
    let r = d.run(&args, b"");
    let report = r.json();
    assert_eq!(r.code, 0, "{}\n{report}", r.stderr);
    assert_eq!(report["kept_records"], 12, "{report}");
    assert_eq!(report["left_out"].as_array().unwrap().len(), 0, "{report}");
    d.run(&["verify", &out], b"").ok();
}

/// Salvage takes segment files or one directory, as its help says: several directories (or a
/// directory among files) are a usage error saying what to do (it was "Is a directory").
#[test]
fn several_directories_are_a_usage_error() {
    let d = Dir::new();
    let a = partition(&d, "a-0", true);
    let b = partition(&d, "b-0", false);
    let out = d.arg("out");
    d.run(&["salvage", &a, &b, "--output", &out], b"")
        .fails(2, "salvage takes segment files or one directory")
        .fails(2, &format!("({a}, {b})"));
    let seg = d.arg("b-0/00000000000000000000.log");
    d.run(&["salvage", &seg, &a, "--output", &out], b"")
        .fails(2, "salvage each directory into its own output");
    assert!(!d.path("out").exists());
    let help = d.run(&["salvage", "--help"], b"").ok();
    assert!(help.contains("Several directories are refused"), "{help}");
}

/// A `krec-log.json` that cannot be used does not stop a salvage (a broker's directory has no
/// such file either): the default configuration is used, the report says why (text and
/// JSON), the exit code that something was found, and the output verifies.
#[test]
fn a_damaged_configuration_is_reported_and_the_defaults_used() {
    let d = Dir::new();
    let dir = partition(&d, "p-0", false);
    d.write("p-0/krec-log.json", b"{bad");
    let out = d.arg("out");
    let r = d.run(&["salvage", &dir, "-o", &out], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.out().contains("krec-log.json: not JSON") && r.out().contains("default configuration"),
        "{}",
        r.out()
    );
    d.run(&["verify", &out], b"").ok();
    let r = d.run(
        &["salvage", &dir, "-o", &d.arg("out2"), "--format", "json"],
        b"",
    );
    assert!(r.out().contains("\"config_problem\""), "{}", r.out());
}

/// A segment named after its first entry's offset as Kafka's recovery takes it: for a
/// compressed v1 wrapper, its last offset (its header has no other). Salvage keeps it whole,
/// as recovery does, and reports the offsets its inner messages hold (a change that took the
/// inner first offset for recovery's checks left it out as "below the segment's base").
#[test]
fn a_segment_named_after_its_legacy_wrappers_last_offset_is_kept() {
    let d = Dir::new();
    std::fs::create_dir(d.path("t-0")).unwrap();
    let args = [
        "--magic",
        "1",
        "--records",
        "10",
        "--compression",
        "gzip",
        "--records-per-batch",
        "10",
    ];
    d.gen("t-0/00000000000000000009.log", &args);
    let out = d.arg("out");
    let r = d.run(&["salvage", &d.arg("t-0"), "-o", &out], b"");
    assert!(
        r.ok()
            .contains("kept: 1 entries, 10 records, 671 bytes; offsets 0..=9"),
        "{}",
        r.out()
    );
    assert!(d.path("out/00000000000000000009.log").is_file());
}

/// Two segments whose file names were swapped: salvage read them in the order of their names,
/// left out every entry of the second file as going backwards and kept 20 of 60 records. They
/// are read in the order of their contents: nothing is lost, each is written under its own base
/// offset, and the report says they were renamed (exit 1, as for every misnamed segment: the
/// output is not a copy of the input).
#[test]
fn segments_whose_names_were_swapped_lose_nothing() {
    let d = Dir::new();
    std::fs::create_dir(d.path("data")).unwrap();
    let part = d.partition("data/t-0", 60);
    let name = |b: i64| format!("data/t-0/{b:020}.log");
    let (first, second) = (d.read(&name(0)), d.read(&name(20)));
    d.write(&name(0), &second);
    d.write(&name(20), &first);
    let out = d.arg("out");
    let r = d.run(&["salvage", &part, "-o", &out, "--format", "json"], b"");
    let report = r.fails(1, "").json();
    assert_eq!(report["lost_anything"], false, "{report}");
    assert_eq!(report["kept_records"], 60, "{report}");
    assert_eq!(report["left_out"].as_array().unwrap().len(), 0, "{report}");
    assert_eq!(report["damaged"].as_array().unwrap().len(), 0, "{report}");
    let renamed: Vec<(i64, i64)> = report["renamed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["named"].as_i64().unwrap(),
                r["written_as"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(renamed, [(20, 0), (0, 20)], "{report}");
    assert_eq!(d.read(&format!("out/{:020}.log", 0)), first);
    assert_eq!(d.read(&format!("out/{:020}.log", 20)), second);
    d.run(&["verify", &out], b"").ok();
    assert_eq!(d.run(&["log", "read", &out], b"").ok().lines().count(), 60);
    let r = d.run(&["salvage", &part, "-o", &d.arg("out2")], b"");
    assert!(
        r.fails(1, "")
            .out()
            .contains("is named for base offset 20, above the offsets it holds"),
        "{}",
        r.out()
    );
}

/// Runs `krec args...` in `d`, killed after 60 seconds (a FIFO opened for reading would wait
/// for a writer for ever).
fn run_within_a_minute(d: &Dir, args: &[&str]) -> Run {
    let mut started = start(krec().args(args).current_dir(d.tmp.path()), Vec::new());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while started.0.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            started.0.kill().unwrap();
            panic!(
                "krec {args:?} still running after a minute: {:?}",
                finish(started)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    finish(started)
}

/// A source that is not a regular file is refused with exit 2 naming it, before it is opened: a
/// link to /dev/zero (salvaged as an empty file: "nothing lost", exit 0) and a FIFO (salvage
/// waited for a writer for ever), given as a file or as a segment of a partition directory.
#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_is_refused_before_it_is_read() {
    let d = Dir::new();
    let out = d.arg("out");
    if std::path::Path::new("/dev/zero").exists() {
        let zero = d.arg("00000000000000000000.log");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        run_within_a_minute(&d, &["salvage", &zero, "-o", &out]).fails(
            2,
            &format!("{zero}: a character device, not a regular file"),
        );
    }
    std::fs::create_dir(d.path("t-0")).unwrap();
    let fifo = d.arg("t-0/00000000000000000000.log");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("no mkfifo: the FIFO is not tested");
        return;
    }
    for source in [fifo.clone(), d.arg("t-0")] {
        run_within_a_minute(&d, &["salvage", &source, "-o", &out])
            .fails(2, &format!("{fifo}: a FIFO, not a regular file"));
    }
    assert!(!d.path("out").exists(), "nothing created");
}

/// --keep-damaged is written whole or not at all: a salvage that fails writing it (a full
/// disk; here a file size limit) names the file, leaves an earlier file of that name as it was
/// and no temporary file or output; a salvage that succeeds replaces it.
#[test]
fn a_failed_keep_damaged_leaves_an_earlier_file_unchanged() {
    let d = Dir::new();
    let seg = d.gen("seg.bin", &["--records", "100", "--value-size", "50"]);
    std::fs::create_dir_all(d.path("data/t-0")).unwrap();
    // 16 MB of garbage after the entries: above the limit (12 or 24 MiB), unlike the
    // 10 MiB indexes.
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes.resize(bytes.len() + 16_000_000, 0xab);
    d.write("data/t-0/00000000000000000000.log", &bytes);
    d.write("dmg.bin", b"earlier");
    let args = [
        "salvage",
        "data/t-0",
        "-o",
        "out",
        "--keep-damaged",
        "dmg.bin",
    ];
    fails_keeping_earlier(&d, 24576, &args, b"", "dmg.bin");
    assert!(!d.path("out").exists());
    d.run(&args, b"").fails(1, "");
    assert_eq!(d.read("dmg.bin").len(), 16_000_000);
    assert_eq!(temporaries(&d, "."), Vec::<String>::new());
}
