//! `krec stats --what-if` against `krec convert`: every row's predicted bytes are the size of
//! what convert writes with the same options, exactly, for inputs of every kind.

use crate::util::Dir;
use serde_json::Value;

/// The what-if rows of `input` (`extra` flags added), without timing.
fn what_if(d: &Dir, input: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "stats",
        "--what-if",
        "--no-timing",
        "--format",
        "json",
        "--levels",
        "gzip:1,zstd:1",
    ];
    args.extend_from_slice(extra);
    args.push(input);
    let r = d.run(&args, b"");
    r.ok();
    r.json()
}

/// Bytes of a file, or of the `.log` files of a directory.
fn size_of(path: &std::path::Path) -> u64 {
    if path.is_dir() {
        std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum()
    } else {
        std::fs::metadata(path).unwrap().len()
    }
}

/// Converts `input` as each row of `stats` says and checks the row's bytes and entries against
/// the file (or directory) convert wrote. Returns the number of rows checked.
fn check_rows(d: &Dir, name: &str, input: &str, stats: &Value, extra: &[&str]) -> usize {
    let rows = stats["rows"].as_array().unwrap();
    // 13 default rows, gzip:1 for each magic, zstd:1 for v2.
    assert_eq!(rows.len(), 13 + 3 + 1, "{name}");
    for (i, row) in rows.iter().enumerate() {
        assert!(row.get("error").is_none(), "{name}: {row}");
        assert!(row["encode_mb_s"].is_null(), "--no-timing: {row}");
        let magic = row["magic"].to_string();
        let codec = row["compression"].as_str().unwrap();
        let compression = match row["level"].as_i64() {
            Some(level) => format!("{codec}:{level}"),
            None => codec.to_string(),
        };
        let out = format!("{name}-{i}");
        let mut args = vec![
            "convert",
            input,
            &out,
            "--magic",
            &magic,
            "--compression",
            &compression,
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let r = d.run(&args, b"");
        let report = r.json();
        let written = size_of(&d.path(&out));
        let ctx = format!("{name} -> v{magic} {compression} {extra:?}");
        assert_eq!(report["bytes_after"], written, "{ctx}");
        assert_eq!(
            row["bytes"], written,
            "{ctx}: what-if predicts what convert writes"
        );
        assert_eq!(row["entries"], report["entries_out"], "{ctx}");
        assert_eq!(
            row["entries_copied"], report["entries_passed_through"],
            "{ctx}"
        );
    }
    rows.len()
}

#[test]
fn what_if_predicts_the_bytes_convert_writes() {
    let d = Dir::new();
    let gen = |name: &str, args: &[&str]| d.gen(name, args);
    let inputs = [
        // 3000 v0 messages: one run, one batch or wrapper.
        (
            "v0",
            gen(
                "v0.log",
                &["--magic", "0", "--records", "3000", "--value-size", "100"],
            ),
        ),
        // 9000 v1 messages, 1.2 MB: two runs of at most 1 MiB each.
        (
            "v1",
            gen(
                "v1.log",
                &["--magic", "1", "--records", "9000", "--value-size", "100"],
            ),
        ),
        // v1 gzip wrappers of 100 messages, kept as they are.
        (
            "v1-gzip",
            gen(
                "v1gz.log",
                &[
                    "--magic",
                    "1",
                    "--compression",
                    "gzip",
                    "--records",
                    "2000",
                    "--value-size",
                    "100",
                    "--records-per-batch",
                    "100",
                ],
            ),
        ),
        // v2 lz4 batches with keys and a header each (dropped in v0/v1 rows).
        (
            "v2-lz4",
            gen(
                "v2lz4.log",
                &[
                    "--compression",
                    "lz4",
                    "--records",
                    "2000",
                    "--value-size",
                    "100",
                    "--key-size",
                    "8",
                    "--headers",
                    "1",
                    "--records-per-batch",
                    "250",
                ],
            ),
        ),
    ];
    let mut checked = 0;
    for (name, input) in &inputs {
        let stats = what_if(&d, input, &[]);
        checked += check_rows(&d, name, input, &stats, &[]);
    }
    assert_eq!(stats_batches(&d, &inputs[1].1), 2, "two runs of 1 MiB");
    // --records-per-batch for both.
    let stats = what_if(&d, &inputs[1].1, &["--records-per-batch", "700"]);
    checked += check_rows(
        &d,
        "v1-700",
        &inputs[1].1,
        &stats,
        &["--records-per-batch", "700"],
    );
    assert_eq!(checked, 5 * 17);
}

fn stats_batches(d: &Dir, input: &str) -> u64 {
    what_if(d, input, &[])["what_if"]["batches"]
        .as_u64()
        .unwrap()
}

/// The demo's partition: v0, v1 and v2 segments, a zstd batch, an idempotent producer and two
/// transactions with their markers (kept in v2 rows, dropped in v0/v1 rows, as convert does).
#[test]
fn what_if_predicts_the_bytes_convert_writes_for_a_mixed_partition() {
    let d = Dir::new();
    d.run(&["demo", "--dir", &d.arg("demo"), "--keep"], b"")
        .ok();
    let src = d.arg("demo/orders-0");
    let stats = what_if(&d, &src, &[]);
    assert_eq!(stats["summary"]["files"], 3);
    assert_eq!(stats["what_if"]["skipped_control_records"], 2);
    check_rows(&d, "mixed", &src, &stats, &[]);
    let stats = what_if(&d, &src, &["--records-per-batch", "4"]);
    check_rows(&d, "mixed-4", &src, &stats, &["--records-per-batch", "4"]);
}

/// The rows do not depend on the number of threads; lz4 at another level is refused by both.
#[test]
fn threads_change_nothing_but_time_and_lz4_levels_are_refused() {
    let d = Dir::new();
    let input = d.gen(
        "v1.log",
        &["--magic", "1", "--records", "3000", "--value-size", "50"],
    );
    let sizes = |threads: &str| -> Vec<Value> {
        what_if(&d, &input, &["--threads", threads])["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["bytes"].clone())
            .collect()
    };
    assert_eq!(sizes("1"), sizes("3"));
    let r = d.run(&["stats", "--what-if", "--levels", "lz4:1", &input], b"");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("LZ4 HC"), "{}", r.stderr);
    let r = d.run(
        &[
            "convert",
            &input,
            "out.log",
            "--magic",
            "2",
            "--compression",
            "lz4:12",
        ],
        b"",
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("LZ4 HC"), "{}", r.stderr);
    // With timing, the output says how the speeds were measured.
    let text = d
        .run(
            &[
                "stats",
                "--what-if",
                "--min-time-ms",
                "1",
                "--threads",
                "2",
                &input,
            ],
            b"",
        )
        .ok();
    assert!(text.contains("each row timed single-threaded"), "{text}");
    assert!(text.contains("2 threads ran rows in parallel"), "{text}");
}

/// Entries already in a row's codec are copied as convert copies them, whatever the level; the
/// row says so.
#[test]
fn a_level_row_says_which_entries_were_copied_unchanged() {
    let d = Dir::new();
    let input = d.gen(
        "gz.log",
        &[
            "--compression",
            "gzip",
            "--records",
            "300",
            "--value-size",
            "40",
        ],
    );
    let stats = what_if(&d, &input, &[]);
    let rows = stats["rows"].as_array().unwrap();
    let row = |magic: u64, level: i64| {
        rows.iter()
            .find(|r| r["magic"] == magic && r["compression"] == "gzip" && r["level"] == level)
            .unwrap()
    };
    let copied = row(2, 1);
    assert_eq!(copied["entries_copied"], 3, "{copied}");
    assert_eq!(copied["bytes"], d.read("gz.log").len() as u64);
    assert!(
        copied["note"]
            .as_str()
            .unwrap()
            .contains("copied unchanged"),
        "{copied}"
    );
    assert!(row(2, 6).get("note").is_none());
    assert!(row(1, 1).get("note").is_none());
}
