//! `krec stats`: sizes now, and `--what-if` re-encoded and measured.

use crate::util::{zigzag_len, Dir, COMMIT_MARKER};
use serde_json::Value;

/// docs/design.md's example: one v1 batch of 1000 records with 100-byte values and no key.
fn thousand_v1_records(d: &Dir) -> String {
    d.gen(
        "v1.bin",
        &[
            "--magic",
            "1",
            "--records",
            "1000",
            "--value-size",
            "100",
            "--records-per-batch",
            "1000",
        ],
    )
}

/// `krec stats --what-if --format json --min-time-ms 1 extra... path`, which must succeed.
fn what_if_json(d: &Dir, path: &str, extra: &[&str]) -> Value {
    let args = [
        "stats",
        "--what-if",
        "--format",
        "json",
        "--min-time-ms",
        "1",
    ];
    let r = d.run(&[&args[..], extra, &[path]].concat(), b"");
    r.ok();
    r.json()
}

fn row<'a>(rows: &'a Value, magic: u8, codec: &str, level: Option<i64>) -> &'a Value {
    rows["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["magic"] == magic && r["compression"] == codec && r["level"].as_i64() == level)
        .unwrap_or_else(|| panic!("no row for magic {magic} {codec} {level:?}"))
}

/// docs/design.md's must-show: 1000 v1 records with 100-byte values and no key take 134 bytes each
/// as v1 and, measured by encoding, the exact v2 figure (about 110, not the chapter's 105).
#[test]
fn what_if_gives_134_bytes_for_v1_and_the_exact_v2_figure() {
    let d = Dir::new();
    let path = thousand_v1_records(&d);
    let stats = what_if_json(&d, &path, &[]);

    let v1 = row(&stats, 1, "none", None);
    assert_eq!(v1["bytes"], 134_000);
    assert_eq!(v1["records"], 1000);
    assert_eq!(v1["bytes_per_record"], 134.0);
    assert_eq!(v1["ratio"], 1.0);

    // By hand: one batch (the input's 1000 messages are one run), a 61-byte header, and per
    // record: length varint + attributes 1 + timestamp delta varlong (timestamps are start + i
    // ms) + offset delta varint + key length 1 (-1) + value length varint (100 zigzags to 200:
    // 2 bytes) + 100 + header count 1.
    let mut v2_bytes = 61u64;
    for i in 0..1000i64 {
        let body = 1 + zigzag_len(i) + zigzag_len(i) + 1 + zigzag_len(100) + 100 + 1;
        v2_bytes += (zigzag_len(body as i64) + body) as u64;
    }
    assert_eq!(zigzag_len(100), 2);
    assert_eq!(v2_bytes, 110_933);
    let v2 = row(&stats, 2, "none", None);
    assert_eq!(v2["bytes"], v2_bytes);
    assert_eq!(v2["entries"], 1);
    assert_eq!(v2["bytes_per_record"], v2_bytes as f64 / 1000.0);
    assert_eq!(v2["ratio"], v2_bytes as f64 / 134_000.0);
    // v0: 12 + 14 + 100 per message.
    assert_eq!(row(&stats, 0, "none", None)["bytes_per_record"], 126.0);

    // Every codec each magic allows, at its default level; speeds measured.
    let rows = stats["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4 + 4 + 5);
    for r in rows {
        assert!(r.get("error").is_none(), "{r}");
        assert!(r["encode_mb_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["decode_mb_s"].as_f64().unwrap() > 0.0, "{r}");
        if r["compression"] != "none" {
            assert!(
                r["bytes"].as_u64().unwrap() < 134_000 / 2,
                "text content compresses: {r}"
            );
        }
    }
    assert_eq!(row(&stats, 2, "zstd", Some(3))["records"], 1000);
    assert_eq!(row(&stats, 1, "gzip", Some(6))["entries"], 1);

    // The current-data summary.
    let g = &stats["groups"][0];
    assert_eq!(
        (g["magic"].as_u64(), g["compression"].as_str()),
        (Some(1), Some("none"))
    );
    assert_eq!(g["entries"], 1000);
    assert_eq!(g["bytes_per_record"], 134.0);
    assert_eq!(g["batch_overhead_per_record"], 0.0);
    assert_eq!(g["record_overhead_per_record"], 34.0);
    assert_eq!(g["payload_per_record"], 100.0);
    assert_eq!(g["compression_ratio"], 1.0);
    assert_eq!(stats["what_if"]["batches"], 1);
    assert_eq!(stats["summary"]["records"], 1000);
}

#[test]
fn text_output_shows_the_table() {
    let d = Dir::new();
    let path = thousand_v1_records(&d);
    let out = d
        .run(&["stats", "--what-if", "--min-time-ms", "1", &path], b"")
        .ok();
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines.contains(&"1 file, 1000 entries, 1000 records, 134000 bytes"),
        "{out}"
    );
    let starts = |prefix: &str| lines.iter().any(|l| l.starts_with(prefix));
    assert!(starts("    1  none              1000        1000        134000     134.00       0.00      34.00     100.00        1.0    1.00"), "{out}");
    assert!(
        starts("    1  none             -        134000     134.00     1.000"),
        "{out}"
    );
    assert!(
        starts("    2  none             -        110933     110.93     0.828"),
        "{out}"
    );
    assert!(starts("    2  zstd             3"), "{out}");
}

#[test]
fn current_sizes_split_overheads_per_format() {
    let d = Dir::new();
    // v2, 10 records per batch, 20-byte values, 4-byte keys, gzip.
    let path = d.gen(
        "v2.bin",
        &[
            "--compression",
            "gzip",
            "--records",
            "100",
            "--value-size",
            "20",
            "--key-size",
            "4",
            "--records-per-batch",
            "10",
        ],
    );
    let stats = d.run(&["stats", "--format", "json", &path], b"").json();
    let g = &stats["groups"][0];
    assert_eq!(g["compression"], "gzip");
    assert_eq!(g["entries"], 10);
    assert_eq!(g["records_per_batch"], 10.0);
    assert_eq!(g["batch_overhead_per_record"], 6.1);
    assert_eq!(g["payload_per_record"], 24.0);
    // Record overhead: length 1 + attributes 1 + deltas 1 + 1 + key length 1 + value length 1 + header count 1.
    assert_eq!(g["record_overhead_per_record"], 7.0);
    let uncompressed = g["uncompressed_bytes"].as_u64().unwrap();
    assert_eq!(uncompressed, 10 * 61 + 100 * (7 + 24));
    assert_eq!(
        g["compression_ratio"],
        uncompressed as f64 / g["bytes"].as_u64().unwrap() as f64
    );
    assert!(stats.get("rows").is_none());

    // A v1 gzip wrapper: 34 bytes of wrapper overhead per entry, 34 per inner message.
    let path = d.gen(
        "w.bin",
        &[
            "--magic",
            "1",
            "--compression",
            "gzip",
            "--records",
            "20",
            "--value-size",
            "10",
            "--records-per-batch",
            "10",
        ],
    );
    let stats = d.run(&["stats", "--format", "json", &path], b"").json();
    let g = &stats["groups"][0];
    assert_eq!(g["batch_overhead_bytes"], 2 * 34);
    assert_eq!(g["record_overhead_per_record"], 34.0);
    assert_eq!(g["uncompressed_bytes"], 2 * 34 + 20 * 44);
}

#[test]
fn several_inputs_are_grouped_by_magic_and_codec() {
    let d = Dir::new();
    let a = d.gen(
        "a.bin",
        &["--magic", "0", "--records", "5", "--value-size", "10"],
    );
    let b = d.gen(
        "b.bin",
        &[
            "--magic",
            "2",
            "--compression",
            "lz4",
            "--records",
            "5",
            "--value-size",
            "10",
        ],
    );
    let stats = d.run(&["stats", "--format", "json", &a, &b], b"").json();
    let groups: Vec<(u64, String)> = stats["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["magic"].as_u64().unwrap(),
                g["compression"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(groups, [(0, "none".to_string()), (2, "lz4".to_string())]);
    assert_eq!(stats["summary"]["files"], 2);
    assert_eq!(stats["summary"]["records"], 10);
}

#[test]
fn levels_and_records_per_batch_shape_the_what_if_rows() {
    let d = Dir::new();
    let path = d.gen(
        "v2.bin",
        &[
            "--records",
            "200",
            "--value-size",
            "50",
            "--records-per-batch",
            "200",
        ],
    );
    let stats = what_if_json(
        &d,
        &path,
        &[
            "--levels",
            "gzip:1,gzip:9,zstd:19,gzip:6,lz4:9",
            "--records-per-batch",
            "10",
        ],
    );
    let rows = stats["rows"].as_array().unwrap();
    // 13 default rows, gzip 1 and 9 for each of three magics, zstd 19 for v2 (gzip:6 and lz4:9
    // are the defaults).
    assert_eq!(rows.len(), 13 + 6 + 1);
    // Kafka writes lz4 at other levels with LZ4 HC, which krecords does not have: refused.
    let r = d.run(&["stats", "--what-if", "--levels", "lz4:12", &path], b"");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("LZ4 HC"), "{}", r.stderr);
    assert_eq!(row(&stats, 0, "gzip", Some(1))["records"], 200);
    assert_eq!(row(&stats, 2, "zstd", Some(19))["entries"], 20);
    assert_eq!(row(&stats, 1, "lz4", Some(9))["entries"], 20);
    assert_eq!(row(&stats, 1, "none", None)["entries"], 200);
    assert_eq!(stats["what_if"]["batches"], 20);
    let r = d.run(&["stats", "--what-if", "--levels", "snappy:3", &path], b"");
    assert_eq!(r.code, 2);
    let r = d.run(&["stats", "--what-if", "--levels", "zstd", &path], b"");
    assert_eq!(r.code, 2);
}

#[test]
fn headers_are_dropped_in_legacy_rows_and_control_batches_skipped() {
    let d = Dir::new();
    let data = d.run(
        &[
            "gen",
            "--records",
            "10",
            "--value-size",
            "10",
            "--headers",
            "1",
        ],
        b"",
    );
    data.ok();
    let at = ["--base-offset", "10", "--timestamp", "1714000000000"];
    let marker = d.run(&[&COMMIT_MARKER[..], &at].concat(), b"");
    marker.ok();
    let path = d.write("mixed.bin", &[data.stdout, marker.stdout].concat());
    let stats = what_if_json(&d, &path, &[]);
    assert_eq!(stats["summary"]["records"], 11);
    assert_eq!(stats["what_if"]["records"], 10);
    assert_eq!(stats["what_if"]["skipped_control_records"], 1);
    assert_eq!(
        row(&stats, 1, "none", None)["note"],
        "headers dropped: v0/v1 cannot carry them"
    );
    assert!(row(&stats, 2, "none", None).get("note").is_none());
    // v2 rows keep the 78-byte marker, as convert does (v0/v1 rows drop it).
    assert_eq!(
        row(&stats, 2, "none", None)["bytes"],
        d.read("mixed.bin").len() as u64
    );
}

#[test]
fn corrupt_input_exits_1_and_still_reports() {
    let d = Dir::new();
    let path = d.hello("hello.bin");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[70] ^= 1;
    let bad = d.write("bad.bin", &bytes);
    let r = d.run(&["stats", "--format", "json", &bad], b"");
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.json()["summary"]["invalid_crc_entries"], 1);
    assert!(r.stderr.contains("crc mismatch"), "{}", r.stderr);
    let r = d.run(&["stats", "/nonexistent/krec/x.log"], b"");
    assert_eq!(r.code, 2);
}

/// Issue 18: a truncated tail that starts before a 1 MiB read boundary of a file and ends after
/// it counts every byte to the end, as from stdin (the file's count stopped at the boundary).
#[test]
fn a_truncated_tail_across_a_read_boundary_counts_every_byte() {
    let d = Dir::new();
    let path = d.gen(
        "big.log",
        &[
            "--records",
            "30000",
            "--value-size",
            "200",
            "--content",
            "random",
            "--records-per-batch",
            "700",
        ],
    );
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(bytes.len() - 5000);
    std::fs::write(&path, &bytes).unwrap();
    let from_file = d.run(&["stats", "--format", "json", &path], b"");
    let from_stdin = d.run(&["stats", "--format", "json", "-"], &bytes);
    assert_eq!(from_file.out(), from_stdin.out());
    let stats = &from_file.json()["summary"];
    let tail = stats["partial_bytes"].as_u64().expect("partial_bytes");
    assert_eq!(
        tail + stats["bytes"].as_u64().unwrap(),
        bytes.len() as u64,
        "{stats}"
    );
}

/// Issue 30 item 8: bytes that are not Kafka data are reported as such and exit 1, as `verify`
/// does, whether too short for an entry or not starting with one.
#[test]
fn bytes_that_are_not_kafka_data_exit_1() {
    let d = Dir::new();
    let short = d.write("short.txt", b"hello\n");
    let r = d.run(&["stats", &short], b"");
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("not Kafka data"), "{}", r.stderr);
    assert!(
        r.out()
            .starts_with("1 file, 0 entries, 0 records, 0 bytes (+6 bytes that cannot be read)\n"),
        "{}",
        r.out()
    );
    let text = d.write(
        "notes.txt",
        &b"these are notes, not a log segment\n".repeat(20),
    );
    let r = d.run(&["stats", "--format", "json", &text], b"");
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("not Kafka data"), "{}", r.stderr);
    assert_eq!(r.json()["summary"]["invalid_bytes"], 700);
    assert_eq!(r.json()["summary"]["errors"], 1);
    // Good data has no such field and exits 0.
    let good = d.hello("hello.bin");
    let r = d.run(&["stats", "--format", "json", &good], b"");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.json()["summary"].get("invalid_bytes").is_none());
}

/// Issue 30 item 8: a compressed what-if row that copied every entry unchanged did no
/// compression; it shows no encode speed ("-") instead of the speed of a copy.
#[test]
fn a_row_copied_unchanged_shows_no_encode_speed() {
    let d = Dir::new();
    let path = d.gen(
        "gz.log",
        &[
            "--compression",
            "gzip",
            "--records",
            "2000",
            "--value-size",
            "100",
        ],
    );
    let stats = what_if_json(&d, &path, &[]);
    let copied = row(&stats, 2, "gzip", Some(6));
    assert_eq!(copied["entries_copied"], 20, "{copied}");
    assert!(copied["encode_mb_s"].is_null(), "{copied}");
    assert!(copied["decode_mb_s"].as_f64().unwrap() > 0.0, "{copied}");
    assert!(
        row(&stats, 1, "gzip", Some(6))["encode_mb_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let text = d
        .run(&["stats", "--what-if", "--min-time-ms", "1", &path], b"")
        .ok();
    let line = text
        .lines()
        .find(|l| l.starts_with("    2  gzip             6"))
        .unwrap_or_else(|| panic!("{text}"));
    let speeds: Vec<&str> = line.split_whitespace().skip(6).take(2).collect();
    assert_eq!(speeds[0], "-", "{line}");
    assert_ne!(speeds[1], "-", "{line}");
}

/// Issue 27 observation 5: a file that ends inside an entry exits 1 in `stats` as in `verify`,
/// `dump` and `explain` (the sources layer's one rule for a truncated tail); stats says so and
/// still reports the whole entries.
#[test]
fn a_truncated_tail_exits_1_as_in_verify_dump_and_explain() {
    let d = Dir::new();
    let path = d.gen("cut.log", &["--records", "100"]);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(bytes.len() - 10);
    std::fs::write(&path, &bytes).unwrap();
    for command in ["stats", "verify", "dump", "explain"] {
        let r = d.run(&[command, &path], b"");
        assert_eq!(r.code, 1, "{command}: {r:?}");
    }
    let r = d.run(&["stats", "--format", "json", &path], b"");
    assert!(r.stderr.contains("a truncated tail"), "{}", r.stderr);
    let summary = &r.json()["summary"];
    assert_eq!(
        summary["partial_bytes"].as_u64().unwrap() + summary["bytes"].as_u64().unwrap(),
        bytes.len() as u64,
        "{summary}"
    );
    // The intact file is clean.
    let whole = d.gen("whole.log", &["--records", "100"]);
    assert_eq!(d.run(&["stats", &whole], b"").code, 0);
}
