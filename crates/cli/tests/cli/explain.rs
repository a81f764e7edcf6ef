//! `krec explain`: the chapter's byte diagrams for real data.

use crate::util::{crc32c, Dir, HELLO_HEX};

#[test]
fn hello_world_fields_are_explained_exactly() {
    let d = Dir::new();
    let path = d.hello("hello.bin");
    let out = d.run(&["explain", &path], b"").ok();
    let lines: Vec<&str> = out.lines().collect();
    for expected in [
        "# magic 2 record batch at byte 0, 85 bytes",
        "         8  00 00 00 49               batch length                   73 (bytes after this field; the entry is 85 bytes)",
        "        17  db da 21 c9               crc                            3688505801 (CRC-32C of bytes 21..85, attributes to the end: valid)",
        "        21  00 00                     attributes                     0x0000 (bits 0-2: compression none; bit 3: create_time; bit 4: not transactional; bit 5: not control; bit 6: no delete horizon)",
        "        27  00 00 01 8f 12 5c 74 00   base timestamp                 1714000000000 (2024-04-24T23:06:40.000Z)",
        "        57  00 00 00 02               records count                  2",
        // The chapter mislabels this byte: 0x16 is the record length varint, zigzag 11.
        "        61  16                        record 0 length                11 (varint, 1 byte; record 0 is 12 bytes)",
        "        65  01                        record 0 key length            -1 (varint, 1 byte; null key)",
        "        66  0a                        record 0 value length          5 (varint, 1 byte)",
        "        67  68 65 6c 6c 6f            record 0 value                 \"hello\" (5 bytes)",
        "        76  02                        record 1 offset delta          1 (varint, 1 byte; offset = base + delta = 1)",
        "        84  00                        record 1 header count          0 (varint, 1 byte)",
    ] {
        assert!(lines.contains(&expected), "missing line:\n{expected}\nin:\n{out}");
    }
    // One line per field: 13 header fields, 8 per record, 2 headings.
    assert_eq!(lines.len(), 13 + 2 * 8 + 2, "{out}");
}

/// A FIFO (as `<(...)` gives) has no length: it is read as standard input is, not explained
/// as an empty file (no output, exit 0, before).
#[test]
fn a_fifo_is_read_as_standard_input() {
    let d = Dir::new();
    let path = d.hello("hello.bin");
    let fifo = d.arg("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let (bytes, to) = (std::fs::read(&path).unwrap(), fifo.clone());
    let writer = std::thread::spawn(move || std::fs::write(to, bytes).unwrap());
    let out = d.run(&["explain", &fifo], b"").ok();
    writer.join().unwrap();
    assert!(
        out.contains("# magic 2 record batch at byte 0, 85 bytes"),
        "{out}"
    );
}

#[test]
fn json_output_lists_position_length_field_and_value() {
    let d = Dir::new();
    let path = d.hello("hello.bin");
    let fields = d.run(&["explain", "--format", "json", &path], b"").json();
    let fields = fields.as_array().expect("a JSON array");
    let find = |name: &str| {
        fields
            .iter()
            .find(|f| f["field"] == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let length = find("record 0 length");
    assert_eq!(length["position"], 61);
    assert_eq!(length["length"], 1);
    assert_eq!(length["hex"], "16");
    assert_eq!(length["value"], 11);
    assert_eq!(length["decompressed"], false);
    assert_eq!(find("crc")["value"], 3688505801u64);
    assert_eq!(find("record 1 value")["value"], "world");
    // Fields tile the entry: every byte is covered once.
    let covered: u64 = fields
        .iter()
        .filter(|f| !["entry", "records"].contains(&f["field"].as_str().unwrap()))
        .map(|f| f["length"].as_u64().unwrap())
        .sum();
    assert_eq!(covered, 85);
}

#[test]
fn position_must_be_an_entry_boundary() {
    let d = Dir::new();
    let path = d.gen(
        "v1.bin",
        &["--magic", "1", "--records", "3", "--value-size", "5"],
    );
    // v1 messages with null keys and 5-byte values are 12 + 22 + 5 = 39 bytes.
    let out = d
        .run(&["explain", "--position", "39", "--count", "1", &path], b"")
        .ok();
    assert!(
        out.starts_with("# magic 1 message at byte 39, 39 bytes\n"),
        "{out}"
    );
    assert!(
        out.contains("        39  00 00 00 00 00 00 00 01   offset                         1\n"),
        "{out}"
    );
    assert!(
        !out.contains("at byte 78"),
        "--count 1 stops after one entry"
    );
    let r = d.run(&["explain", "--position", "40", &path], b"");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("position 40 is not an entry boundary"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("inside the entry at byte 39"),
        "{}",
        r.stderr
    );
    let r = d.run(&["explain", "--position", "500", &path], b"");
    assert_eq!(r.code, 2);
}

#[test]
fn legacy_message_fields() {
    let d = Dir::new();
    let path = d.gen(
        "v0.bin",
        &[
            "--magic",
            "0",
            "--records",
            "1",
            "--value-size",
            "3",
            "--key-size",
            "2",
        ],
    );
    let out = d.run(&["explain", &path], b"").ok();
    for expected in [
        "        12  ",
        "crc ",
        "(CRC-32 of bytes 16..31, magic to the end: valid)",
        "        16  00                        magic                          0 (v0 message)",
        "        17  00                        attributes                     0x00 (bits 0-2: compression none)",
        "        18  00 00 00 02               key length                     2 (int32, 4 bytes)",
        "        22  6b 65                     key                            \"ke\" (2 bytes)",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
}

#[test]
fn compressed_v1_wrapper_shows_inner_messages_with_absolute_offsets() {
    let d = Dir::new();
    let path = d.gen(
        "w.bin",
        &[
            "--magic",
            "1",
            "--compression",
            "gzip",
            "--records",
            "3",
            "--records-per-batch",
            "3",
            "--value-size",
            "8",
            "--base-offset",
            "100",
        ],
    );
    let out = d.run(&["explain", &path], b"").ok();
    for expected in [
        "# magic 1 gzip-compressed wrapper at byte 0",
        "offset                         102 (the offset of the wrapper's last inner message)",
        "value (gzip) ",
        "# inner messages, decompressed: 126 bytes (positions d+N are in the decompressed data)",
        "       d+0  00 00 00 00 00 00 00 00   inner 0 offset                 0 (relative to the wrapper; absolute offset 100)",
        "      d+42  00 00 00 00 00 00 00 01   inner 1 offset                 1 (relative to the wrapper; absolute offset 101)",
        "inner 2 crc ",
        "(CRC-32 of d+100..d+126, magic to the end: valid)",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
}

#[test]
fn compressed_v2_batch_shows_records_from_the_decompressed_buffer() {
    let d = Dir::new();
    for codec in ["gzip", "snappy", "lz4", "zstd"] {
        let path = d.gen(
            "z.bin",
            &[
                "--compression",
                codec,
                "--records",
                "2",
                "--value-size",
                "10",
            ],
        );
        let out = d.run(&["explain", &path], b"").ok();
        for expected in [
            format!("records ({codec})"),
            "# records, decompressed: 34 bytes (positions d+N are in the decompressed data)".to_string(),
            "       d+0  20                        record 0 length                16 (varint, 1 byte; record 0 is 17 bytes)".to_string(),
            "      d+17  20                        record 1 length                16 (varint, 1 byte; record 1 is 17 bytes)".to_string(),
        ] {
            assert!(out.contains(&expected), "{codec}: missing {expected:?} in:\n{out}");
        }
    }
}

#[test]
fn control_records_are_decoded() {
    let d = Dir::new();
    let r = d.run(
        &[
            "build",
            "--control",
            "abort",
            "--producer-id",
            "7",
            "--producer-epoch",
            "2",
            "--coordinator-epoch",
            "5",
            "--timestamp",
            "1714000000000",
        ],
        b"",
    );
    r.ok();
    let path = d.write("marker.bin", &r.stdout);
    let out = d.run(&["explain", &path], b"").ok();
    for expected in [
        "bit 4: transactional; bit 5: control;",
        "        43  00 00 00 00 00 00 00 07   producer id                    7",
        "        66  00 00                     record 0 control key version   0",
        "        68  00 00                     record 0 control key type      0 (abort: an end-transaction marker)",
        "        71  00 00                     record 0 marker version        0 (end-transaction marker)",
        "        73  00 00 00 05               record 0 coordinator epoch     5",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
}

#[test]
fn headers_are_explained_one_field_per_line() {
    let d = Dir::new();
    let input = br#"{"timestamp":1714000000000,"key":"k","value":"v","headers":[{"key":"trace","value":"abc"},{"key":"empty","value":null}]}"#;
    let r = d.run(&["build"], input);
    r.ok();
    let path = d.write("h.bin", &r.stdout);
    let out = d.run(&["explain", &path], b"").ok();
    for expected in [
        "record 0 header count          2 (varint, 1 byte)",
        "record 0 header 0 key          \"trace\" (5 bytes)",
        "record 0 header 0 value        \"abc\" (3 bytes)",
        "record 0 header 1 value length -1 (varint, 1 byte; null value)",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
}

#[test]
fn a_flipped_crc_bit_is_reported_invalid_and_exits_1() {
    let d = Dir::new();
    let mut bytes = hex::decode(HELLO_HEX).unwrap();
    bytes[80] ^= 0x20;
    let path = d.write("bad.bin", &bytes);
    let r = d.run(&["explain", &path], b"");
    assert_eq!(r.code, 1, "{r:?}");
    let out = r.out();
    assert!(
        out.contains("attributes to the end: INVALID, computed "),
        "{out}"
    );
    assert!(
        out.contains("record 1 value                 \"wOrld\" (5 bytes)"),
        "{out}"
    );
}

#[test]
fn a_truncated_tail_is_explained_as_far_as_it_goes_and_exits_1_as_verify_does() {
    let d = Dir::new();
    let mut bytes = hex::decode(HELLO_HEX).unwrap();
    bytes.extend_from_slice(&hex::decode(HELLO_HEX).unwrap()[..66]);
    let path = d.write("cut.bin", &bytes);
    let r = d.run(&["explain", &path], b"");
    assert_eq!(r.code, 1, "{r:?}");
    let out = r.out();
    assert!(
        out.contains(
            "# partial magic 2 record batch at byte 85: declares 85 bytes, only 66 present"
        ),
        "{out}"
    );
    assert!(
        out.contains("cannot check, the entry is incomplete"),
        "{out}"
    );
    assert!(
        out.contains("       146  16                        record 0 length"),
        "{out}"
    );
    assert!(out.contains("# the entry is cut here"), "{out}");
    assert!(
        out.contains("error                          truncated entry: the last 66 bytes are not a whole entry"),
        "{out}"
    );
    // verify says the same of the same file.
    let v = d.run(&["verify", &path], b"");
    assert_eq!(v.code, 1, "{v:?}");
    assert!(
        v.out()
            .contains("truncated entry: the last 66 bytes are not a whole entry"),
        "{v:?}"
    );
}

#[test]
fn a_file_shorter_than_an_entry_prefix_is_a_truncated_entry_and_exits_1() {
    let d = Dir::new();
    let path = d.write("short.bin", &hex::decode(HELLO_HEX).unwrap()[..5]);
    let r = d.run(&["explain", &path], b"");
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.out()
            .contains("truncated entry: the last 5 bytes are not a whole entry"),
        "{}",
        r.out()
    );
}

#[test]
fn readme_text_is_not_kafka_data_and_exits_1() {
    let d = Dir::new();
    let text = b"# krecords\n\nKafka's message formats in Rust: read and write every byte.\n";
    let path = d.write("README.md", text);
    let r = d.run(&["explain", &path], b"");
    assert_eq!(r.code, 1, "{r:?}");
    let out = r.out();
    assert!(
        out.contains(&format!(
            "error                          invalid magic 97 (expected 0, 1 or 2); the {} bytes from here on cannot be read",
            text.len()
        )),
        "{out}"
    );
    assert!(!out.contains("not corruption"), "{out}");
}

#[test]
fn random_bytes_are_not_kafka_data_and_exit_1() {
    let d = Dir::new();
    // Deterministic "random" bytes whose size field is positive and large and whose magic byte
    // is none of 0, 1, 2: old krec explain called them a truncated tail and exited 0.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut bytes: Vec<u8> = (0..3000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    bytes[8] &= 0x7f; // a positive size, far beyond the file
    bytes[16] = 0xc3;
    let path = d.write("random.bin", &bytes);
    let error = json_error(&d, &path);
    assert_eq!(
        error["value"],
        "invalid magic -61 (expected 0, 1 or 2); the 3000 bytes from here on cannot be read"
    );
    assert_eq!(error["position"], 16);
}

#[test]
fn broken_structure_gives_an_error_line_and_exit_1() {
    let d = Dir::new();
    let mut bytes = hex::decode(HELLO_HEX).unwrap();
    bytes[16] = 9;
    let path = d.write("magic.bin", &bytes);
    let r = d.run(&["explain", &path], b"");
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.out()
            .contains("error                          invalid magic 9"),
        "{}",
        r.out()
    );

    // A record length that disagrees with its fields (CRC fixed up so only the structure is wrong).
    let mut bytes = hex::decode(HELLO_HEX).unwrap();
    bytes[61] = 0x18; // 12 instead of 11
    let crc = crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    let path = d.write("len.bin", &bytes);
    let error = json_error(&d, &path);
    assert!(
        error["value"]
            .as_str()
            .unwrap()
            .contains("record 0: its length says 12 bytes but its fields take 11"),
        "{error}"
    );
}

#[test]
fn stdin_is_read_with_a_dash() {
    let d = Dir::new();
    let out = d
        .run(&["explain", "-"], &hex::decode(HELLO_HEX).unwrap())
        .ok();
    assert!(
        out.contains("record 1 value                 \"world\" (5 bytes)"),
        "{out}"
    );
}

/// The first `error` item of `krec explain --format json PATH`, which must exit 1.
fn json_error(d: &Dir, path: &str) -> serde_json::Value {
    let r = d.run(&["explain", "--format", "json", path], b"");
    assert_eq!(r.code, 1, "{r:?}");
    r.json()
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["field"] == "error")
        .expect("an error field")
        .clone()
}

/// `--start N` on a file or a partition directory explains the entry holding offset N, read
/// through the sources layer (positions from the first byte read).
#[test]
fn start_picks_the_entry_holding_the_offset_in_a_file_and_a_directory() {
    let d = Dir::new();
    std::fs::create_dir(d.path("t-0")).unwrap();
    let file = d.gen(
        "t-0/00000000000000000000.log",
        &["--records", "30", "--records-per-batch", "10"],
    );
    for path in [file, d.arg("t-0")] {
        let out = d.run(&["explain", "--start", "15", &path], b"").ok();
        let base = out
            .lines()
            .find(|l| l.contains("base offset"))
            .unwrap_or_else(|| panic!("no base offset in:\n{out}"));
        assert!(base.trim_end().ends_with(" 10"), "{path}: {base}\n{out}");
        assert_eq!(out.matches("# magic 2 record batch").count(), 1, "{out}");
    }
}

/// A partition directory without --start is explained from its first entry (it said "Is a
/// directory"); a range that holds no entries says so on stderr (it printed nothing, exit 0).
#[test]
fn a_directory_is_explained_from_its_start_and_an_empty_range_says_so() {
    let d = Dir::new();
    std::fs::create_dir(d.path("t-0")).unwrap();
    d.gen(
        "t-0/00000000000000000000.log",
        &["--records", "30", "--records-per-batch", "10"],
    );
    let dir = d.arg("t-0");
    let out = d.run(&["explain", &dir], b"").ok();
    assert_eq!(out.matches("# magic 2 record batch").count(), 1, "{out}");
    let base = out.lines().find(|l| l.contains("base offset")).unwrap();
    assert!(base.trim_end().ends_with(" 0"), "{base}");
    let r = d.run(&["explain", &dir, "--start", "2030-01-01T00:00:00Z"], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.out().is_empty(), "{}", r.out());
    assert!(
        r.stderr
            .contains(&format!("{dir}: the range holds no entries to explain")),
        "{}",
        r.stderr
    );
}

/// A partition of two segments whose first has a batch with a broken length in its middle
/// (the bytes after it are not entries): `(dir, offset of the broken batch)`.
fn broken_length_partition(d: &Dir) -> (String, i64) {
    let dir = d.arg("t-0");
    d.run(
        &["log", "create", &dir, "--config", "segment.bytes=20000"],
        b"",
    )
    .ok();
    let lines: String = (0..2000)
        .map(|i| {
            format!(
                "{{\"key\":\"k{}\",\"value\":\"value {i} lorem ipsum dolor\"}}\n",
                i % 37
            )
        })
        .collect();
    d.run(
        &["log", "append", &dir, "--records-per-batch", "50"],
        lines.as_bytes(),
    )
    .ok();
    let first = format!("{dir}/00000000000000000000.log");
    let mut bytes = std::fs::read(&first).unwrap();
    // The sixth batch (offsets 250..299): its length field becomes 0x7fffffff.
    let mut at = 0usize;
    for _ in 0..5 {
        let len = u32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 12 + len;
    }
    bytes[at + 8..at + 12].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
    std::fs::write(&first, bytes).unwrap();
    assert!(
        d.path("t-0").read_dir().unwrap().count() > 4,
        "two segments at least"
    );
    (dir, 250)
}

/// `--count 0` explains every entry of the range across the partition's segments (it stopped
/// at the end of the first); a range whose first entry is damaged is explained up to the
/// damage and exits 1 (it said the range was empty, exit 0).
#[test]
fn a_range_goes_across_segments_and_damage_in_it_exits_1() {
    let d = Dir::new();
    std::fs::create_dir(d.path("s-0")).unwrap();
    for (base, n) in [(0, 10), (10, 10), (20, 10)] {
        d.gen(
            &format!("s-0/{base:020}.log"),
            &[
                "--records",
                &n.to_string(),
                "--records-per-batch",
                "5",
                "--base-offset",
                &base.to_string(),
            ],
        );
    }
    let out = d
        .run(
            &["explain", &d.arg("s-0"), "--start", "3", "--count", "0"],
            b"",
        )
        .ok();
    assert_eq!(out.matches("# magic 2 record batch").count(), 6, "{out}");
    let (dir, broken) = broken_length_partition(&d);
    let r = d.run(
        &["explain", &dir, "--start", &(broken + 50).to_string()],
        b"",
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.out().contains("truncated entry"), "{}", r.out());
}

/// `dump` of a partition's files as they are goes on with the next segment after one whose
/// bytes stop being entries (it silently left out every later segment), as kafka-dump-log
/// dumps each file; the exit code says there was damage.
#[test]
fn dump_goes_on_with_the_next_segment_after_a_broken_one() {
    let d = Dir::new();
    let (dir, _) = broken_length_partition(&d);
    let r = d.run(&["dump", &dir], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    let out = r.out();
    assert!(
        out.contains("invalid bytes at the end of 00000000000000000000.log"),
        "{out}"
    );
    let segments: Vec<String> = std::fs::read_dir(d.path("t-0"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    assert!(segments.len() >= 2, "{segments:?}");
    for s in &segments {
        assert!(out.contains(&format!("Dumping {dir}/{s}")), "{s}: {out}");
    }
    assert!(out.contains("baseOffset: 1950 "), "the last batch: {out}");
    // Recovery cuts the first segment there and deletes the later ones, as Kafka's does:
    // each deleted file is named (only the cut was).
    let r = d.run(&["log", "recover", &dir], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    for s in segments
        .iter()
        .filter(|s| !s.starts_with("00000000000000000000"))
    {
        assert!(
            r.stderr
                .contains(&format!("{dir}/{s}: deleted, as it follows the cut")),
            "{s}: {}",
            r.stderr
        );
    }
}
