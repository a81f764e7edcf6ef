//! `krec demo` through the binary: the partition is written by the log engine, one segment per
//! format, and the walkthrough ends with a clean `krec verify`.

use crate::util::Dir;

#[test]
fn demo_builds_a_mixed_format_log_and_verifies_it() {
    let d = Dir::new();
    let dir = d.arg("demo");
    let r = d.run(&["demo", "--dir", &dir, "--keep"], b"");
    let out = r.ok();
    for step in [
        "$ krec dump --deep --print-data",
        "$ krec explain",
        "$ krec stats --what-if",
        "$ krec verify",
    ] {
        assert!(out.contains(step), "{step}: {out}");
    }
    assert!(out.contains(": no problems\n"), "{out}");
    // A log the engine opens: three segments, v0, v1 and v2 in order.
    let p = d.arg("demo/orders-0");
    let info = d.run(&["log", "info", &p], b"").json();
    let bases: Vec<i64> = info["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["base_offset"].as_i64().unwrap())
        .collect();
    assert_eq!(bases, [0, 5, 10]);
    assert_eq!(info["high_watermark"], 23);
    let magics: Vec<u64> = d
        .run(&["dump", "--format", "json", &p], b"")
        .json_lines()
        .iter()
        .map(|e| e["magic"].as_u64().unwrap())
        .collect();
    assert_eq!(magics, [0, 0, 0, 1, 1, 1, 1, 1, 2, 2]);
    // Running it again in the same place is refused rather than mixed with the old log.
    let r = d.run(&["demo", "--dir", &dir], b"");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("already holds a log"), "{}", r.stderr);
}
