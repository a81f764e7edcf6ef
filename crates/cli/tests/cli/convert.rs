//! `krec convert` through the binary: v1 → v2 → v1 round trips keep offsets, keys, values and
//! timestamps (dump before and after compared); sizes are reported; partition directories are
//! converted into verified logs with rebuilt indexes.

use crate::util::{segment_bases, Dir};
use serde_json::Value;

/// Writes `krec build --base-offset 3 args...` of [`INPUT`] as `name` and returns its path.
fn build(d: &Dir, name: &str, args: &[&str]) -> String {
    let mut all = vec!["build", "--base-offset", "3"];
    all.extend_from_slice(args);
    d.write(name, &d.run(&all, INPUT.as_bytes()).stdout)
}

/// (offset, timestamp, key, value) of every record, from `krec dump --deep --format json`.
fn records_of(d: &Dir, path: &str) -> Vec<(i64, Value, Value, Value)> {
    d.run(
        &["dump", "--deep", "--format", "json", "--bytes", "hex", path],
        b"",
    )
    .json_lines()
    .iter()
    .flat_map(|e| e["records"].as_array().cloned().unwrap_or_default())
    .map(|r| {
        (
            r["offset"].as_i64().unwrap(),
            r["timestamp"].clone(),
            r["key"].clone(),
            r["value"].clone(),
        )
    })
    .collect()
}

const INPUT: &str = r#"{"offset":3,"timestamp":1714000000000,"key":"k1","value":"hello"}
{"offset":4,"timestamp":1714000000007,"key":null,"value":null}
{"offset":7,"timestamp":1714000000003,"key":"","value":"x"}
{"offset":8,"timestamp":1714000000009,"key":"k4","value":"a longer value that runs past thirty-two bytes"}
{"offset":9,"timestamp":1714000000009,"key":"k5","value":"five"}
"#;

#[test]
fn v1_to_v2_to_v1_round_trips_records_and_offsets() {
    let d = Dir::new();
    let v1 = build(&d, "v1.bin", &["--magic", "1"]);
    let before = records_of(&d, &v1);
    assert_eq!(before.len(), 5);
    assert_eq!(
        before.iter().map(|r| r.0).collect::<Vec<_>>(),
        [3, 4, 7, 8, 9],
        "gaps kept"
    );
    let r = d.run(
        &[
            "convert",
            &v1,
            "v2.bin",
            "--magic",
            "2",
            "--records-per-batch",
            "100",
            "--format",
            "json",
        ],
        b"",
    );
    let j = r.json();
    let v1_size = d.read("v1.bin").len() as u64;
    let v2_size = d.read("v2.bin").len() as u64;
    assert_eq!(j["bytes_before"], v1_size);
    assert_eq!(j["bytes_after"], v2_size);
    assert_eq!(
        (&j["entries_in"], &j["entries_out"]),
        (&5.into(), &1.into())
    );
    assert_eq!(j["records_converted"], 5);
    assert!(v2_size < v1_size);
    let dumped = d
        .run(&["dump", "--format", "json", &d.arg("v2.bin")], b"")
        .json_lines();
    assert_eq!(dumped.len(), 1);
    assert_eq!(dumped[0]["magic"], 2);
    assert_eq!(records_of(&d, &d.arg("v2.bin")), before);
    // And back: byte for byte what `krec build --magic 1` wrote.
    let r = d.run(
        &["convert", &d.arg("v2.bin"), "back.bin", "--magic", "1"],
        b"",
    );
    let text = r.ok();
    assert!(
        text.contains(&format!("size:      {v2_size} -> {v1_size} bytes")),
        "{text}"
    );
    assert_eq!(d.read("back.bin"), d.read("v1.bin"));
}

#[test]
fn v2_to_v1_and_back_with_compression() {
    let d = Dir::new();
    let v2 = build(&d, "v2.bin", &["--compression", "zstd"]);
    let before = records_of(&d, &v2);
    // zstd cannot be written as v1: the entry's own codec is not allowed, a usage error that
    // names the fix.
    let r = d.run(&["convert", &v2, "x.bin", "--magic", "1"], b"");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("zstd"), "{}", r.stderr);
    assert!(r.stderr.contains("--compression"), "{}", r.stderr);
    assert!(!d.path("x.bin").exists(), "no partial output left");
    // With another codec it works, and the round trip keeps every record.
    d.run(
        &[
            "convert",
            &v2,
            "v1.bin",
            "--magic",
            "1",
            "--compression",
            "gzip:9",
        ],
        b"",
    )
    .ok();
    let v1 = d.run(&["dump", "--format", "json", &d.arg("v1.bin")], b"");
    let e = v1.json_lines();
    assert_eq!(
        (&e[0]["magic"], &e[0]["compression"]),
        (&1.into(), &"gzip".into())
    );
    assert_eq!(records_of(&d, &d.arg("v1.bin")), before);
    let r = d.run(
        &[
            "convert",
            &d.arg("v1.bin"),
            "-",
            "--magic",
            "2",
            "--compression",
            "lz4",
        ],
        b"",
    );
    // Data on stdout, the report on stderr.
    assert!(r.stderr.contains("size:"), "{}", r.stderr);
    let again = d.write("again.bin", &r.stdout);
    assert_eq!(records_of(&d, &again), before);
    // Stdin in.
    let r = d.run(
        &["convert", "-", "-", "--magic", "0", "--compression", "none"],
        &d.read("v2.bin"),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v0 = d.write("v0.bin", &r.stdout);
    let v0_records = records_of(&d, &v0);
    assert_eq!(
        v0_records
            .iter()
            .map(|r| (r.0, &r.2, &r.3))
            .collect::<Vec<_>>(),
        before.iter().map(|r| (r.0, &r.2, &r.3)).collect::<Vec<_>>()
    );
}

#[test]
fn corrupt_input_is_refused() {
    let d = Dir::new();
    let hello = d.hello("hello.bin");
    let mut b = d.read("hello.bin");
    b[80] ^= 1;
    d.write("hello.bin", &b);
    let r = d.run(&["convert", &hello, "out.bin", "--magic", "1"], b"");
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("crc"), "{}", r.stderr);
    // Bad options are usage errors.
    let r = d.run(
        &[
            "convert",
            &hello,
            "o.bin",
            "--magic",
            "1",
            "--compression",
            "zstd",
        ],
        b"",
    );
    assert_eq!(r.code, 2);
    let r = d.run(&["convert", &hello, "o.bin", "--magic", "3"], b"");
    assert_eq!(r.code, 2);
    // Never over its own input.
    let r = d.run(&["convert", &hello, &hello, "--magic", "2"], b"");
    assert_eq!(r.code, 2);
    assert_eq!(d.read("hello.bin"), b);
}

/// `krec log read` lines as (offset, key, value).
fn log_records(d: &Dir, log: &str) -> Vec<(i64, Value, Value)> {
    d.run(&["log", "read", log, "--bytes", "hex"], b"")
        .json_lines()
        .iter()
        .map(|l| {
            (
                l["offset"].as_i64().unwrap(),
                l["key"].clone(),
                l["value"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_partition_directory_converts_into_a_verified_log() {
    let d = Dir::new();
    // The demo's mixed v0/v1/v2 partition, written by the log engine.
    d.run(&["demo", "--dir", &d.arg("demo"), "--keep"], b"")
        .ok();
    let src = d.arg("demo/orders-0");
    let before = log_records(&d, &src);
    assert_eq!(before.len(), 27); // the demo's 29 offsets less its 2 markers
    let input_bytes: u64 = std::fs::read_dir(d.path("demo/orders-0"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    let r = d.run(
        &[
            "convert",
            &src,
            &d.arg("v2"),
            "--magic",
            "2",
            "--compression",
            "zstd",
            "--records-per-batch",
            "100",
            "--format",
            "json",
        ],
        b"",
    );
    let j = r.json();
    assert_eq!(j["segments"], 3);
    assert_eq!(j["bytes_before"], input_bytes);
    assert!(j["bytes_after"].as_u64().unwrap() < input_bytes, "{j}");
    assert_eq!(d.run(&["verify", &d.arg("v2")], b"").code, 0);
    let info = d.run(&["log", "info", &d.arg("v2")], b"").json();
    assert_eq!(segment_bases(&info), [0, 5, 10]);
    assert!(
        info["segments"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["time_index_entries"].as_u64().unwrap() >= 1 || s["base_offset"] == 0),
        "{info}"
    );
    assert_eq!(log_records(&d, &d.arg("v2")), before);
    let dump = d
        .run(&["dump", "--format", "json", &d.arg("v2")], b"")
        .json_lines();
    // Transaction markers stay uncompressed, as Kafka writes them.
    assert!(dump
        .iter()
        .all(|e| e["magic"] == 2 && (e["compression"] == "zstd") != (e["control"] == true)));
    // The log takes appends in its new format.
    let r = d.run(&["log", "append", &d.arg("v2")], b"{\"value\":\"after\"}\n");
    assert_eq!(r.json()["base_offset"], 29);
    // And down to v1 with gzip.
    let r = d.run(
        &[
            "convert",
            &src,
            &d.arg("v1"),
            "--magic",
            "1",
            "--compression",
            "gzip",
        ],
        b"",
    );
    let text = r.ok();
    assert!(
        text.contains("segments:  3") && text.contains("dropped:   2 control batches, 10 headers"),
        "{text}"
    );
    assert_eq!(d.run(&["verify", &d.arg("v1")], b"").code, 0);
    assert_eq!(log_records(&d, &d.arg("v1")), before);
    let config: Value = serde_json::from_slice(&d.read("v1/krec-log.json")).unwrap();
    assert_eq!(config["message.format.version"], "0.10.2");
    // The output must be new.
    let r = d.run(&["convert", &src, &d.arg("v1"), "--magic", "2"], b"");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("already holds files"), "{}", r.stderr);
}

/// A partition directory of `batches` zstd batches of two records each, one segment per batch.
fn zstd_partition(d: &Dir, name: &str, batches: usize) -> String {
    let dir = d.arg(name);
    d.run(
        &["log", "create", &dir, "--config", "segment.bytes=100"],
        b"",
    )
    .ok();
    for i in 0..batches {
        let records = format!("{{\"value\":\"hello {i}\"}}\n{{\"value\":\"x\"}}\n");
        d.run(
            &["log", "append", &dir, "--compression", "zstd"],
            records.as_bytes(),
        )
        .ok();
    }
    dir
}

/// Issue 27, observation 6: a conversion the target format refuses is a usage error naming the
/// fix, found before anything is written, and leaves nothing that blocks a rerun.
#[test]
fn a_refused_directory_conversion_writes_nothing() {
    let d = Dir::new();
    let src = zstd_partition(&d, "zstd-0", 3);
    let out = d.arg("out");
    let r = d.run(&["convert", &src, &out, "--magic", "1"], b"");
    r.fails(2, "zstd");
    assert!(r.stderr.contains("--compression"), "{}", r.stderr);
    assert!(!d.path("out").exists(), "no output directory");
    let leftovers: Vec<_> = std::fs::read_dir(d.path(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("krec-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // The rerun with the fix works, into the same path.
    let text = d
        .run(
            &[
                "convert",
                &src,
                &out,
                "--magic",
                "1",
                "--compression",
                "gzip",
            ],
            b"",
        )
        .ok();
    assert!(text.contains("segments:  3"), "{text}");
    assert_eq!(d.run(&["verify", &out], b"").code, 0);
    assert_eq!(log_records(&d, &out), log_records(&d, &src));
}

/// A conversion that fails midway (a corrupt entry in the last segment) leaves no output
/// directory either.
#[test]
fn a_directory_conversion_failing_midway_leaves_no_output() {
    let d = Dir::new();
    let src = zstd_partition(&d, "zstd-0", 3);
    let mut last: Vec<_> = std::fs::read_dir(d.path("zstd-0"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    last.sort();
    let last = last.pop().unwrap();
    let mut bytes = std::fs::read(&last).unwrap();
    let end = bytes.len() - 1;
    bytes[end] ^= 1;
    std::fs::write(&last, bytes).unwrap();
    let out = d.arg("out");
    let r = d.run(&["convert", &src, &out, "--magic", "2"], b"");
    r.fails(1, "crc");
    assert!(!d.path("out").exists(), "no output directory");
    // An empty directory given as the output stays, empty.
    std::fs::create_dir(d.path("empty")).unwrap();
    let r = d.run(&["convert", &src, &d.arg("empty"), "--magic", "2"], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(std::fs::read_dir(d.path("empty")).unwrap().count(), 0);
}

/// A truncated tail is not converted and the exit code says so (it was 0); positions on a
/// file are refused (they were ignored: all 30 records converted); a file output is renamed
/// into place only when complete (no temporary file left, nothing under OUT on failure).
#[test]
fn a_truncated_tail_exits_1_positions_on_files_are_refused_and_outputs_are_whole() {
    let d = Dir::new();
    let input = d.gen("c.log", &["--records", "30", "--records-per-batch", "10"]);
    let bytes = d.read("c.log");
    d.write("torn.log", &bytes[..bytes.len() - 40]);
    let torn = d.arg("torn.log");
    let out = d.arg("torn2.log");
    let r = d.run(
        &[
            "convert",
            &torn,
            &out,
            "--magic",
            "2",
            "--compression",
            "gzip",
        ],
        b"",
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("were not converted"), "{}", r.stderr);
    let r = d.run(&["verify", "--format", "json", &out], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.out().contains("\"records\":20"), "{}", r.out());
    for args in [
        &["--start", "10"][..],
        &["--end", "20"][..],
        &["--isolation", "read-committed"][..],
    ] {
        let o = d.arg("c2.log");
        let r = d.run(
            &[&["convert", &input, &o, "--magic", "2"][..], args].concat(),
            b"",
        );
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("converted whole"), "{}", r.stderr);
        assert!(!std::path::Path::new(&o).exists());
    }
    let names: Vec<String> = std::fs::read_dir(d.path("."))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("krec-tmp")), "{names:?}");
    // A failed conversion (corrupt input) leaves nothing under the output's name.
    let mut bad = bytes.clone();
    bad[80] ^= 1;
    d.write("bad.log", &bad);
    let o = d.arg("bad2.log");
    let r = d.run(&["convert", &d.arg("bad.log"), &o, "--magic", "1"], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!std::path::Path::new(&o).exists());
}

/// The id of a process that has ended.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// A killed convert or salvage leaves its temporary output (`.NAME.krec-tmp-PID`); the next
/// run into the same output removes it and says so, and keeps one of a process that still
/// runs (this test's).
#[test]
fn leftovers_of_killed_runs_are_removed_and_named() {
    let d = Dir::new();
    let src = zstd_partition(&d, "zstd-0", 2);
    let dead = dead_pid();
    let live = std::process::id();
    let leftover = |name: &str, pid: u32, dir: bool| {
        let p = d.path(&format!(".{name}.krec-tmp-{pid}"));
        if dir {
            std::fs::create_dir(&p).unwrap();
            std::fs::write(p.join("00000000000000000000.log"), b"partial").unwrap();
        } else {
            std::fs::write(&p, b"partial").unwrap();
        }
        p
    };
    for (out, dir, args) in [
        (
            "conv-0",
            true,
            &["convert", "SRC", "OUT", "--magic", "2"][..],
        ),
        (
            "conv.log",
            false,
            &["convert", "SEG", "OUT", "--magic", "2"][..],
        ),
        ("salv-0", true, &["salvage", "SRC", "--output", "OUT"][..]),
    ] {
        let gone = leftover(out, dead, dir);
        let kept = leftover(out, live, dir);
        let seg = format!("{src}/00000000000000000000.log");
        let o = d.arg(out);
        let args: Vec<&str> = args
            .iter()
            .map(|a| match *a {
                "SRC" => src.as_str(),
                "SEG" => seg.as_str(),
                "OUT" => o.as_str(),
                a => a,
            })
            .collect();
        let r = d.run(&args, b"");
        assert_eq!(r.code, 0, "{out}: {}", r.stderr);
        assert!(!gone.exists(), "{out}: {}", gone.display());
        assert!(
            r.stderr.contains(&format!("removed {}", gone.display())),
            "{out}: {}",
            r.stderr
        );
        assert!(kept.exists(), "{out}: a running process's is kept");
        assert!(d.path(out).exists());
    }
}

/// `--magic` defaults to 2 for every input, so changing only the codec needs `--compression`
/// alone, and a v0/v1 input without `--magic` comes out as v2 with the same records.
#[test]
fn magic_defaults_to_2_so_a_codec_change_needs_compression_alone() {
    let d = Dir::new();
    let v2 = build(&d, "v2.bin", &[]);
    let r = d.run(
        &[
            "convert",
            &v2,
            "zstd.bin",
            "--compression",
            "zstd",
            "--format",
            "json",
        ],
        b"",
    );
    let j = r.json();
    assert_eq!(
        (&j["magic"], &j["compression"]),
        (&2.into(), &"zstd".into())
    );
    assert_eq!(records_of(&d, &d.arg("zstd.bin")), records_of(&d, &v2));
    let v1 = build(&d, "v1.bin", &["--magic", "1"]);
    d.run(&["convert", &v1, "up.bin"], b"").ok();
    let dumped = d
        .run(&["dump", "--format", "json", &d.arg("up.bin")], b"")
        .json_lines();
    assert!(dumped.iter().all(|e| e["magic"] == 2), "{dumped:?}");
    assert_eq!(records_of(&d, &d.arg("up.bin")), records_of(&d, &v1));
}

/// Outputs that cannot be written are said by the name given, never the temporary file's: an
/// existing directory, a missing parent; a partition directory to stdout is refused (it
/// converts into a directory), and no `-` directory appears.
#[test]
fn unwritable_outputs_are_named_as_given() {
    let d = Dir::new();
    let v2 = build(&d, "v2.bin", &[]);
    std::fs::create_dir(d.path("outdir")).unwrap();
    let r = d.run(&["convert", &v2, &d.arg("outdir")], b"");
    r.fails(2, "outdir: it is a directory");
    assert!(!r.stderr.contains("krec-tmp"), "{}", r.stderr);
    let r = d.run(&["convert", &v2, &d.arg("nb/x.log")], b"");
    r.fails(2, "cannot create");
    assert!(r.stderr.contains("nb/x.log"), "{}", r.stderr);
    assert!(!r.stderr.contains("krec-tmp"), "{}", r.stderr);
    d.run(&["log", "create", &d.arg("p")], b"").ok();
    d.run(&["log", "append", &d.arg("p")], b"{\"value\":\"v\"}\n")
        .ok();
    let r = d.run(&["convert", &d.arg("p"), "-"], b"");
    r.fails(2, "not to stdout");
    assert!(!d.path("-").exists());
    assert_eq!(std::fs::read_dir(d.path("outdir")).unwrap().count(), 0);
}

/// The names in `dir`, sorted.
fn names_in(d: &Dir, dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(d.path(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// A partition directory converted into a directory inside itself (or into a directory that
/// is it through a link) would put a partition inside the partition a broker reads: a usage
/// error naming both paths, found before anything is created (it converted into it).
#[test]
fn an_output_inside_the_input_directory_is_refused_and_nothing_created() {
    let d = Dir::new();
    let src = zstd_partition(&d, "zstd-0", 2);
    let before = names_in(&d, "zstd-0");
    let inside = d.arg("zstd-0/v1");
    let r = d.run(
        &[
            "convert",
            &src,
            &inside,
            "--magic",
            "1",
            "--compression",
            "gzip",
        ],
        b"",
    );
    r.fails(2, "is the source directory");
    assert!(
        r.stderr.contains(&inside) && r.stderr.contains(&format!("directory {src} ")),
        "{}",
        r.stderr
    );
    assert_eq!(
        names_in(&d, "zstd-0"),
        before,
        "nothing created in the input"
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(d.path("zstd-0"), d.path("link")).unwrap();
        d.run(
            &["convert", &d.arg("link"), &d.arg("zstd-0/deeper/v2")],
            b"",
        )
        .fails(2, "is the source directory");
        assert_eq!(
            names_in(&d, "zstd-0"),
            before,
            "nothing created through the link"
        );
    }
    // Beside it is fine.
    d.run(&["convert", &src, &d.arg("zstd-copy-0")], b"").ok();
}

/// Offsets that go back across two segments — a base offset overwritten in the first batch of
/// the second segment, in the last batch of the first, a segment renamed below the one before
/// or above its entries — are bad input, said of the input file and byte (exit 1), as within
/// one segment; nothing is left at the output, no temporary directory either. They exited 2
/// ("the converted log failed recovery", naming the temporary directory) or 1 naming it.
#[test]
fn offsets_going_back_across_segments_are_bad_input_naming_the_input() {
    let d = Dir::new();
    let records: String = (0..40)
        .map(|i| format!("{{\"key\":\"k{i}\",\"value\":\"v{i}\",\"timestamp\":1714000000000}}\n"))
        .collect();
    // Each case: the directory's name, its damage, the file and text the message names.
    type Damage = fn(&Dir, &str, &[i64]) -> (String, String);
    let cases: [(&str, Damage); 4] = [
        ("first-of-second-0", |d, dir, bases| {
            let segment = format!("{dir}/{:020}.log", bases[1]);
            let mut bytes = d.read(&segment);
            bytes[..8].copy_from_slice(&3i64.to_be_bytes());
            d.write(&segment, &bytes);
            (segment, "byte 0: the entry holds offsets 3..=".to_string())
        }),
        ("last-of-first-0", |d, dir, bases| {
            let segment = format!("{dir}/{:020}.log", bases[0]);
            let mut bytes = d.read(&segment);
            let mut at = 0;
            let mut last = 0;
            while at < bytes.len() {
                last = at;
                let len = i32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap());
                at += 12 + len as usize;
            }
            let claimed = bases[1] - 3;
            bytes[last..last + 8].copy_from_slice(&claimed.to_be_bytes());
            d.write(&segment, &bytes);
            (
                segment,
                format!("byte {last}: the entry holds offsets {claimed}..="),
            )
        }),
        ("renamed-lower-0", |d, dir, bases| {
            let named = bases[1] - 5;
            for ext in ["log", "index", "timeindex"] {
                std::fs::rename(
                    d.path(&format!("{dir}/{:020}.{ext}", bases[1])),
                    d.path(&format!("{dir}/{named:020}.{ext}")),
                )
                .unwrap();
            }
            (
                format!("{dir}/{:020}.log", bases[0]),
                format!("reaching the next segment's base offset {named}"),
            )
        }),
        ("renamed-higher-0", |d, dir, bases| {
            let named = bases[1] + 2;
            for ext in ["log", "index", "timeindex"] {
                std::fs::rename(
                    d.path(&format!("{dir}/{:020}.{ext}", bases[1])),
                    d.path(&format!("{dir}/{named:020}.{ext}")),
                )
                .unwrap();
            }
            (
                format!("{dir}/{named:020}.log"),
                format!("byte 0: the entry holds offsets {}..=", bases[1]),
            )
        }),
    ];
    for (name, damage) in cases {
        let log = d.arg(name);
        d.run(
            &["log", "create", &log, "--config", "segment.bytes=700"],
            b"",
        )
        .ok();
        d.run(
            &["log", "append", &log, "--records-per-batch", "5"],
            records.as_bytes(),
        )
        .ok();
        let info = d.run(&["log", "info", &log], b"").json();
        let bases = segment_bases(&info);
        assert!(bases.len() >= 2, "{bases:?}");
        let (file, text) = damage(&d, name, &bases);
        let out = format!("out-{name}");
        let r = d.run(&["convert", &log, &d.arg(&out)], b"");
        assert_eq!(r.code, 1, "{name}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("{file}: cannot convert: ")) && r.stderr.contains(&text),
            "{name}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("krec-tmp"), "{name}: {}", r.stderr);
        assert!(!d.path(&out).exists(), "{name}");
        let left: Vec<_> = names_in(&d, ".")
            .into_iter()
            .filter(|n| n.contains("krec-tmp"))
            .collect();
        assert!(left.is_empty(), "{name}: {left:?}");
    }
}

/// `krec convert FILE OUT` on a full disk said `cannot write the output: File too large`: it
/// names the file, leaves none (nor its temporary) behind, and exits 2.
#[test]
fn a_full_disk_names_the_converted_file() {
    let d = Dir::new();
    let all = d.big_log_and_small_dir();
    let r = crate::util::run_with_file_limit(&d, 128, &["convert", &all, "small/out.log"], b"");
    r.fails(
        2,
        "krec: cannot write small/out.log: File too large (os error 27)",
    )
    .one_line();
    assert_eq!(crate::util::temporaries(&d, "small"), Vec::<String>::new());
    assert!(!d.path("small/out.log").exists());
}
