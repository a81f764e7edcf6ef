//! `krec build` and `krec dump` through the binary: docs/design.md's bytes and JSON, round trips,
//! exit codes, a closed pipe.

use crate::util::{
    fails_keeping_earlier, run, run_with_file_limit, temporaries, Dir, HELLO_HEX, HELLO_INPUT,
};
use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;

#[test]
fn build_writes_the_design_hello_world_batch() {
    let d = Dir::new();
    let r = d.run(
        &["build", "--partition-leader-epoch", "0"],
        HELLO_INPUT.as_bytes(),
    );
    r.ok();
    assert_eq!(hex::encode(&r.stdout), HELLO_HEX);
    assert_eq!(r.stdout.len(), 85);
    d.hello("hello.bin");
    assert_eq!(hex::encode(d.read("hello.bin")), HELLO_HEX);
}

#[test]
fn dump_json_deep_is_exactly_design_md() {
    let d = Dir::new();
    d.hello("hello.bin");
    let out = d
        .run(
            &[
                "dump",
                "--format",
                "json",
                "--deep",
                "--bytes",
                "hex",
                "hello.bin",
            ],
            b"",
        )
        .ok();
    let expected = concat!(
        r#"{"file":"hello.bin","position":0,"magic":2,"base_offset":0,"last_offset":1,"count":2,"size_bytes":85,"#,
        r#""crc":3688505801,"crc_valid":true,"compression":"none","timestamp_type":"create_time","#,
        r#""base_timestamp":1714000000000,"max_timestamp":1714000000000,"partition_leader_epoch":0,"#,
        r#""producer_id":-1,"producer_epoch":-1,"base_sequence":-1,"transactional":false,"control":false,"#,
        r#""delete_horizon_ms":null,"#,
        r#""records":[{"offset":0,"timestamp":1714000000000,"key":null,"value":"68656c6c6f","headers":[]},"#,
        r#"{"offset":1,"timestamp":1714000000000,"key":null,"value":"776f726c64","headers":[]}]}"#,
        "\n"
    );
    assert_eq!(out, expected);
}

const ROUND_TRIP_V2: &str = r#"{"timestamp":1714000000000,"key":"k1","value":"hello","headers":[{"key":"h","value":"v"},{"key":"h","value":null}]}
{"timestamp":1714000000007,"key":null,"value":null}
{"timestamp":1714000000003,"key":"","value":"x"}
{"timestamp":1714000000009,"key":"k4","value":"a longer value that runs past thirty-two bytes, to be sure"}
{"timestamp":1714000000009,"key":"k5","value":"five","headers":[{"key":"only","value":""}]}
"#;

const ROUND_TRIP_LEGACY: &str = r#"{"timestamp":1714000000000,"key":"k1","value":"hello"}
{"timestamp":1714000000007,"key":null,"value":null}
{"timestamp":1714000000003,"key":"","value":"x"}
{"timestamp":1714000000009,"key":"k4","value":"a longer value that runs past thirty-two bytes, to be sure"}
{"timestamp":1714000000009,"key":"k5","value":"five"}
"#;

/// build → dump --deep --format json --bytes hex → the dumped records → build --bytes hex with the
/// same options must give the same bytes.
fn round_trip(magic: &str, compression: &str) {
    let d = Dir::new();
    let input = if magic == "2" {
        ROUND_TRIP_V2
    } else {
        ROUND_TRIP_LEGACY
    };
    let opts = [
        "--magic",
        magic,
        "--compression",
        compression,
        "--records-per-batch",
        "2",
        "--base-offset",
        "100",
    ];
    let mut args = vec!["build", "--output", "a.bin"];
    args.extend_from_slice(&opts);
    d.run(&args, input.as_bytes()).ok();
    let first = d.read("a.bin");
    let dumped = d.run(
        &[
            "dump", "--deep", "--format", "json", "--bytes", "hex", "a.bin",
        ],
        b"",
    );
    dumped.ok();
    let mut records = String::new();
    let mut count = 0;
    for entry in dumped.json_lines() {
        assert_eq!(entry["crc_valid"], true, "{entry}");
        assert_eq!(entry["compression"], compression.split(':').next().unwrap());
        for r in entry["records"].as_array().expect("records") {
            records.push_str(&r.to_string());
            records.push('\n');
            count += 1;
        }
    }
    assert_eq!(count, 5, "magic {magic} {compression}");
    let mut args = vec!["build", "--bytes", "hex", "--output", "b.bin"];
    args.extend_from_slice(&opts);
    d.run(&args, records.as_bytes()).ok();
    assert_eq!(
        hex::encode(d.read("b.bin")),
        hex::encode(&first),
        "magic {magic} {compression}"
    );
}

#[test]
fn build_dump_build_round_trips_uncompressed() {
    for magic in ["0", "1", "2"] {
        round_trip(magic, "none");
    }
}

#[test]
fn build_dump_build_round_trips_compressed() {
    for magic in ["0", "1", "2"] {
        for codec in ["gzip", "gzip:1", "snappy", "lz4"] {
            round_trip(magic, codec);
        }
    }
    round_trip("2", "zstd");
    round_trip("2", "zstd:10");
}

#[test]
fn dump_of_a_flipped_crc_bit_exits_1_with_crc_valid_false() {
    let d = Dir::new();
    let mut bytes = hex::decode(HELLO_HEX).unwrap();
    bytes[68] ^= 0x01; // a bit of "hello"
    let path = d.write("flipped.bin", &bytes);
    let r = d.run(&["dump", "--format", "json", &path], b"");
    assert_eq!(r.code, 1, "{r:?}");
    let lines = r.json_lines();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["crc_valid"], false);
    assert_eq!(lines[0]["crc"], 3688505801u64);
}

/// A batch whose records no longer parse (a bad CRC too): `--deep --format json` keeps the
/// header fields, `"crc_valid": false`, then the error, as the line without --deep and the
/// text do (it printed only file, position and error).
#[test]
fn dump_deep_json_of_a_damaged_batch_keeps_its_header_then_the_error() {
    let d = Dir::new();
    let mut bytes = d.read(&d.hello("hello.bin"));
    bytes[61] = 0x7f; // the first record's length: -64
    let path = d.write("damaged.bin", &bytes);
    let r = d.run(&["dump", "--deep", "--format", "json", &path], b"");
    assert_eq!(r.code, 1, "{r:?}");
    let lines = r.json_lines();
    assert_eq!(lines.len(), 1, "{}", r.out());
    let shallow = d
        .run(&["dump", "--format", "json", &path], b"")
        .json_lines();
    let mut header = lines[0].as_object().unwrap().clone();
    let error = header.remove("error").unwrap();
    assert_eq!(header.remove("records").unwrap(), serde_json::json!([]));
    assert_eq!(serde_json::Value::Object(header), shallow[0]);
    assert_eq!(shallow[0]["crc_valid"], false);
    assert!(
        error.as_str().unwrap().contains("invalid record length"),
        "{error}"
    );
    let text = d.run(&["dump", "--deep", &path], b"");
    assert!(
        text.out().contains(" crc: 3688505801 isvalid: false\n"),
        "{}",
        text.out()
    );
}

#[test]
fn dump_of_a_truncated_tail_prints_a_partial_line_and_exits_1() {
    let d = Dir::new();
    let mut bytes = hex::decode(HELLO_HEX).unwrap();
    bytes.extend_from_slice(&hex::decode(HELLO_HEX).unwrap()[..30]);
    d.write("cut.bin", &bytes);
    let r = d.run(&["dump", "--format", "json", "cut.bin"], b"");
    // A truncated file is a problem for dump as for verify (issue 27, observation 5).
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(d.run(&["verify", "cut.bin"], b"").code, 1);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["crc_valid"], true);
    assert_eq!(
        lines[1],
        serde_json::json!({"file": "cut.bin", "position": 85, "partial": true, "bytes": 30})
    );
}

#[test]
fn dump_of_a_bad_magic_prints_an_error_line_and_exits_1() {
    let d = Dir::new();
    let mut bytes = hex::decode(HELLO_HEX).unwrap();
    bytes[16] = 7;
    d.write("magic.bin", &bytes);
    let r = d.run(&["dump", "--format", "json", "magic.bin"], b"");
    assert_eq!(r.code, 1, "{r:?}");
    let lines = r.json_lines();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["position"], 0);
    let error = lines[0]["error"].as_str().expect("error message");
    assert!(error.contains("magic 7"), "{error}");
}

#[test]
fn dump_of_a_missing_file_exits_2() {
    let r = run(&["dump", "/nonexistent/krec-test/nothing.log"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("nothing.log"), "{}", r.stderr);
    assert!(r.stdout.is_empty());
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        &["dump", "--format", "xml", "x.log"][..],
        &["dump"][..],
        &["no-such-subcommand"][..],
        &["build", "--magic", "3"][..],
        &["gen", "--value-size", "10"][..],
        &["explain"][..],
        &["stats", "--what-if", "--levels", "gzip:99", "x.log"][..],
        // The what-if options without --what-if (they were ignored).
        &["stats", "--levels", "gzip:1", "x.log"][..],
        &["stats", "--threads", "1", "x.log"][..],
    ] {
        let r = run(args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(!r.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn build_with_bad_input_exits_2() {
    let d = Dir::new();
    let r = d.run(&["build"], b"{\"value\":\"x\",\"bogus\":1}\n");
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("line 1"), "{}", r.stderr);
}

/// A build that fails, on its input or writing (a full disk; here a file size limit), leaves
/// an earlier file of that name as it was and no temporary file, and names the output.
#[test]
fn a_failed_build_leaves_an_earlier_output_unchanged() {
    let d = Dir::new();
    d.write("out.bin", b"earlier");
    let good = "{\"timestamp\":1714000000000,\"value\":\"hello\"}\n".repeat(4);
    let bad = format!("{good}{{\"value\":\"x\",\"bogus\":1}}\n");
    d.run(&["build", "-o", "out.bin"], bad.as_bytes())
        .fails(2, "line 5");
    let kept = d.read("out.bin");
    assert!(
        kept == b"earlier",
        "out.bin was changed: {} bytes",
        kept.len()
    );
    let big = format!("{{\"timestamp\":1,\"value\":\"{}\"}}\n", "v".repeat(1000)).repeat(1000);
    fails_keeping_earlier(
        &d,
        128,
        &["build", "-o", "out.bin"],
        big.as_bytes(),
        "out.bin",
    );
    // Within the limit the file is replaced whole.
    run_with_file_limit(&d, 128, &["build", "-o", "out.bin"], good.as_bytes()).ok();
    assert_eq!(d.run(&["build"], good.as_bytes()).stdout, d.read("out.bin"));
    assert_eq!(temporaries(&d, "."), Vec::<String>::new());
}

#[test]
fn build_refuses_negative_offsets_and_offsets_past_i64_max() {
    let d = Dir::new();
    let three = b"{\"value\":\"a\"}\n{\"value\":\"b\"}\n{\"value\":\"c\"}\n";
    // Kafka's offsets are not negative: the base offset, or a record's own.
    for base in ["-1", "-9223372036854775808"] {
        d.run(&["build", &format!("--base-offset={base}")], three)
            .fails(
                2,
                &format!(
                    "base offset {base} is negative: Kafka's offsets are 0 to 9223372036854775807"
                ),
            );
    }
    let r = d.run(
        &["build"],
        b"{\"value\":\"a\"}\n{\"offset\":-1,\"value\":\"b\"}\n",
    );
    r.fails(2, "input line 2: offset -1 is negative");
    assert!(!r.stderr.contains("i32::MAX"), "{}", r.stderr);
    // Offsets that would run past i64::MAX (and wrap around to negative ones): refused up front.
    let r = d.run(&["build", "--base-offset", "9223372036854775807"], three);
    r.fails(
        2,
        "the batch's last offset would be past 9223372036854775807",
    );
    assert!(!r.stderr.contains("does not follow"), "{}", r.stderr);
    let r = d.run(
        &[
            "build",
            "--base-offset",
            "9223372036854775806",
            "--records-per-batch",
            "1",
        ],
        three,
    );
    r.fails(
        2,
        "the batch's last offset would be past 9223372036854775807",
    );
    assert!(r.stdout.is_empty(), "nothing written");
    // Up to i64::MAX exactly is fine as bytes, but as a log it has no end (its next offset
    // would be past i64::MAX): verify says so, and a read fails naming it (it wrapped around
    // to a high watermark of i64::MIN and read nothing, exit 0, or panicked in a debug build).
    let r = d.run(&["build", "--base-offset", "9223372036854775805"], three);
    let dir = d.path("m-0");
    std::fs::create_dir(&dir).unwrap();
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::write(dir.join("09223372036854775805.log"), &r.stdout).unwrap();
    let dir = dir.to_str().unwrap();
    let none = "no offset can follow it, so the log would have no end";
    d.run(&["verify", dir], b"").reports(1, none);
    d.run(&["log", "read", dir], b"").fails(1, none);
    // A transaction marker's base offset is not negative either.
    d.run(
        &[
            "build",
            "--control",
            "commit",
            "--producer-id",
            "7",
            "--producer-epoch",
            "0",
            "--base-offset=-1",
        ],
        b"",
    )
    .fails(2, "base offset -1 is negative");
}

/// A full standard output (`krec dump FILE > /dev/full`) said only `krec: No space left on
/// device (os error 28)`: it says what it could not write. (A closed pipe stays quiet, below.)
#[test]
fn a_full_standard_output_is_named() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    let d = Dir::new();
    let file = d.hello("hello.bin");
    let out = crate::util::krec()
        .args(["dump", &file])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "krec: cannot write to standard output: No space left on device (os error 28)\n"
    );
}

#[test]
fn dump_into_a_closed_pipe_exits_0_quietly() {
    let d = Dir::new();
    let big = d.gen(
        "big.bin",
        &[
            "--records",
            "200000",
            "--value-size",
            "10",
            "--records-per-batch",
            "1",
        ],
    );
    let mut child = crate::util::krec()
        .args(["dump", "--deep", &big])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader (and the pipe) are dropped here, as `| head -1` does.
    assert!(first.starts_with("Dumping"), "{first}");
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(stderr, "");
}
