//! `krec gen`: deterministic synthetic data.

use crate::util::{fails_keeping_earlier, ints, run_with_file_limit, temporaries, Dir};

fn dump_records(d: &Dir, path: &str) -> Vec<serde_json::Value> {
    let r = d.run(
        &["dump", "--deep", "--format", "json", "--bytes", "hex", path],
        b"",
    );
    r.ok();
    let mut records = Vec::new();
    for entry in r.json_lines() {
        assert_eq!(entry["crc_valid"], true, "{entry}");
        records.extend(entry["records"].as_array().unwrap().iter().cloned());
    }
    records
}

#[test]
fn same_arguments_give_the_same_bytes() {
    let d = Dir::new();
    for content in ["random", "text", "json"] {
        let args = [
            "--records",
            "300",
            "--value-size",
            "50",
            "--key-size",
            "12",
            "--headers",
            "2",
            "--content",
            content,
            "--seed",
            "9",
        ];
        d.gen("a.bin", &args);
        d.gen("b.bin", &args);
        assert_eq!(d.read("a.bin"), d.read("b.bin"), "{content}");
        let mut other = args.to_vec();
        let last = other.len() - 1;
        other[last] = "10";
        d.gen("c.bin", &other);
        assert_ne!(
            d.read("a.bin"),
            d.read("c.bin"),
            "{content}: a different seed changes the data"
        );
    }
}

#[test]
fn records_have_the_documented_shape() {
    let d = Dir::new();
    let path = d.gen(
        "g.bin",
        &[
            "--records",
            "25",
            "--value-size",
            "40",
            "--key-size",
            "10",
            "--headers",
            "2",
            "--records-per-batch",
            "10",
            "--base-offset",
            "1000",
            "--timestamp",
            "1700000000000",
        ],
    );
    let entries = d
        .run(&["dump", "--format", "json", &path], b"")
        .json_lines();
    assert_eq!(ints(&entries, "count"), [10, 10, 5]);
    let records = dump_records(&d, &path);
    assert_eq!(records.len(), 25);
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r["offset"], 1000 + i as i64);
        assert_eq!(r["timestamp"], 1_700_000_000_000i64 + i as i64);
        let key = hex::decode(r["key"].as_str().unwrap()).unwrap();
        assert_eq!(String::from_utf8(key).unwrap(), format!("key-{i:06}"));
        assert_eq!(r["value"].as_str().unwrap().len(), 80, "40 bytes in hex");
        let headers = r["headers"].as_array().unwrap();
        assert_eq!(headers.len(), 2);
        assert_eq!(headers[0]["key"], "h0");
        assert_eq!(headers[1]["key"], "h1");
        assert_eq!(headers[1]["value"].as_str().unwrap().len(), 16);
    }
}

#[test]
fn key_size_zero_means_null_keys_and_small_sizes_cut_the_key() {
    let d = Dir::new();
    let path = d.gen("n.bin", &["--records", "3", "--value-size", "5"]);
    assert!(dump_records(&d, &path).iter().all(|r| r["key"].is_null()));
    let path = d.gen(
        "k.bin",
        &["--records", "3", "--value-size", "5", "--key-size", "2"],
    );
    assert!(dump_records(&d, &path)
        .iter()
        .all(|r| r["key"] == hex::encode("ke")));
}

#[test]
fn content_kinds_differ_as_documented() {
    let d = Dir::new();
    let values = |content: &str| -> Vec<Vec<u8>> {
        let path = d.gen(
            &format!("{content}.bin"),
            &[
                "--records",
                "50",
                "--value-size",
                "120",
                "--content",
                content,
            ],
        );
        dump_records(&d, &path)
            .iter()
            .map(|r| hex::decode(r["value"].as_str().unwrap()).unwrap())
            .collect()
    };
    for v in values("json") {
        let parsed: serde_json::Value = serde_json::from_slice(&v).expect("json content parses");
        assert!(parsed["id"].is_u64());
    }
    for v in values("text") {
        let text = String::from_utf8(v).expect("text content is text");
        assert!(text.split(' ').count() > 5, "{text}");
    }
    let random = values("random");
    assert!(
        random.iter().any(|v| std::str::from_utf8(v).is_err()),
        "random bytes are not text"
    );
}

#[test]
fn every_magic_and_codec_is_written_and_reads_back() {
    let d = Dir::new();
    for magic in ["0", "1", "2"] {
        for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
            if codec == "zstd" && magic != "2" {
                continue;
            }
            let path = d.gen(
                "x.bin",
                &[
                    "--magic",
                    magic,
                    "--compression",
                    codec,
                    "--records",
                    "30",
                    "--value-size",
                    "64",
                    "--records-per-batch",
                    "8",
                ],
            );
            let entries = d.run(&["dump", "--deep", "--format", "json", &path], b"");
            entries.ok();
            let entries = entries.json_lines();
            let expected_entries = if codec == "none" && magic != "2" {
                30
            } else {
                4
            };
            assert_eq!(entries.len(), expected_entries, "magic {magic} {codec}");
            assert!(entries
                .iter()
                .all(|e| e["compression"] == codec && e["magic"] == magic.parse::<i64>().unwrap()));
            let n: usize = entries
                .iter()
                .map(|e| e["records"].as_array().unwrap().len())
                .sum();
            assert_eq!(n, 30, "magic {magic} {codec}");
        }
    }
}

#[test]
fn gen_writes_to_stdout_when_piped_and_prints_a_summary_with_output() {
    let d = Dir::new();
    let args = ["--records", "10", "--value-size", "20", "--magic", "1"];
    let mut all = vec!["gen"];
    all.extend_from_slice(&args);
    let piped = d.run(&all, b"");
    piped.ok();
    let mut all = vec!["gen", "--format", "json", "--output", "f.bin"];
    all.extend_from_slice(&args);
    let summary = d.run(&all, b"").json();
    assert_eq!(piped.stdout, d.read("f.bin"));
    assert_eq!(
        summary,
        serde_json::json!({"file": "f.bin", "records": 10, "entries": 10, "bytes": 10 * (12 + 22 + 20)})
    );
}

#[test]
fn impossible_combinations_are_usage_errors() {
    let d = Dir::new();
    for args in [
        &[
            "gen",
            "--records",
            "1",
            "--magic",
            "1",
            "--headers",
            "1",
            "-o",
            "x",
        ][..],
        &[
            "gen",
            "--records",
            "1",
            "--magic",
            "0",
            "--compression",
            "zstd",
            "-o",
            "x",
        ][..],
        &[
            "gen",
            "--records",
            "1",
            "--compression",
            "gzip:12",
            "-o",
            "x",
        ][..],
        &[
            "gen",
            "--records",
            "1",
            "--records-per-batch",
            "0",
            "-o",
            "x",
        ][..],
        &["gen", "--records", "1", "--content", "poetry", "-o", "x"][..],
    ] {
        let r = d.run(args, b"");
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
    }
    let r = d.run(
        &["gen", "--records", "1", "-o", "/nonexistent/dir/x.bin"],
        b"",
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cannot create"), "{}", r.stderr);
}

/// A gen that fails writing (a full disk; here a file size limit) leaves an earlier file of
/// that name as it was and no temporary file, and names the output; `-o -` still streams.
#[test]
fn a_failed_gen_leaves_an_earlier_output_unchanged() {
    let d = Dir::new();
    d.write("out.bin", b"earlier");
    let args = [
        "gen",
        "--records",
        "20000",
        "--value-size",
        "100",
        "-o",
        "out.bin",
    ];
    fails_keeping_earlier(&d, 128, &args, b"", "out.bin");
    // Within the limit the file is replaced whole; to stdout the entries stream.
    let small = [
        "gen",
        "--records",
        "10",
        "--value-size",
        "10",
        "-o",
        "out.bin",
    ];
    run_with_file_limit(&d, 128, &small, b"").ok();
    let piped = d.run(
        &["gen", "--records", "10", "--value-size", "10", "-o", "-"],
        b"",
    );
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert_eq!(piped.stdout, d.read("out.bin"));
    assert_eq!(temporaries(&d, "."), Vec::<String>::new());
}
