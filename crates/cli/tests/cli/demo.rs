//! `krec demo` through the binary: the partition is written by the log engine, one segment per
//! format, with an idempotent producer's retry and a committed and an aborted transaction; the
//! walkthrough reads it at both isolation levels and ends with a clean `krec verify`.

use crate::util::{segment_bases, Dir};

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
        "--isolation read-uncommitted | head -8",
        "--isolation read-committed | head -8",
        "$ krec verify",
    ] {
        assert!(out.contains(step), "{step}: {out}");
    }
    assert!(out.contains(": no problems\n"), "{out}");
    assert!(
        out.contains("its retry was answered as a duplicate of offsets 10..19"),
        "{out}"
    );
    // The dump shows both markers.
    assert!(out.contains("endTxnMarker: COMMIT"), "{out}");
    assert!(out.contains("endTxnMarker: ABORT"), "{out}");
    // The two reads: the aborted producer's records only in the first.
    let reads: Vec<&str> = out.split("$ krec log read").skip(1).collect();
    assert_eq!(reads.len(), 2);
    let uncommitted = reads[0].split("\n\n").next().unwrap();
    let committed = reads[1].split("\n\n").next().unwrap();
    assert!(uncommitted.contains(r#"\"txn\":2001"#), "{uncommitted}");
    assert!(!committed.contains(r#"\"txn\":2001"#), "{committed}");
    assert!(committed.contains(r#"\"txn\":2000"#), "{committed}");
    // A log the engine opens: three segments, v0, v1 and v2 in order.
    let p = d.arg("demo/orders-0");
    let info = d.run(&["log", "info", &p], b"").json();
    assert_eq!(segment_bases(&info), [0, 5, 10]);
    // 10 idempotent records (the retry wrote nothing), 3 zstd, 4 transactional, 2 markers.
    assert_eq!(info["high_watermark"], 29);
    assert_eq!(info["last_stable_offset"], 29);
    let dump = d.run(&["dump", "--format", "json", &p], b"").json_lines();
    let magics: Vec<u64> = dump.iter().map(|e| e["magic"].as_u64().unwrap()).collect();
    assert_eq!(magics, [0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2]);
    let control: Vec<i64> = dump
        .iter()
        .filter(|e| e["control"] == true)
        .map(|e| e["base_offset"].as_i64().unwrap())
        .collect();
    assert_eq!(control, [27, 28]);
    assert!(d
        .path("demo/orders-0/00000000000000000010.txnindex")
        .exists());
    // Running it again in the same place is refused rather than mixed with the old log.
    let r = d.run(&["demo", "--dir", &dir], b"");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("already holds a log"), "{}", r.stderr);
}

/// Issue 30, item 8: without `--keep` the demo says that it deleted its folder, and how to
/// keep it.
#[test]
fn demo_says_it_deleted_its_temporary_folder() {
    let r = crate::util::run(&["demo"]);
    let out = r.ok();
    let built = out
        .lines()
        .find_map(|l| l.strip_prefix("# built in "))
        .and_then(|l| l.strip_suffix(":"))
        .expect("the partition's folder");
    let folder = std::path::Path::new(built).parent().unwrap();
    assert!(
        out.ends_with(&format!(
            "\n# {} deleted; `krec demo --keep` keeps the files to explore them\n",
            folder.display()
        )),
        "{out}"
    );
    assert!(!folder.exists());
}

/// A reader that stops early (`krec demo | head`) ends the demo at its next write: its
/// temporary directory goes all the same, and the exit is 0 (a closed pipe is not an error).
#[test]
fn demo_cut_short_by_its_reader_leaves_no_directory() {
    use std::io::Read;
    let d = Dir::new();
    let mut child = crate::util::krec()
        .arg("demo")
        .env("TMPDIR", d.path(""))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    assert_eq!(&first, b"# krec demo: a p");
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let dir = d.path(&format!("krec-demo-{}", child.id()));
    assert!(!dir.exists(), "{} left behind", dir.display());
}

/// A folder named with `--dir` is the user's: kept without `--keep`, as the help says (it
/// said `--keep` kept the folder, and --dir kept it all the same).
#[test]
fn demo_keeps_a_dir_folder_and_its_help_says_so() {
    let d = Dir::new();
    let dir = d.arg("mine");
    let out = d.run(&["demo", "--dir", &dir], b"").ok();
    let part = d.path("mine/orders-0");
    assert!(
        out.ends_with(&format!("\n# files kept in {}\n", part.display())),
        "{out}"
    );
    assert!(part.join("00000000000000000000.log").exists());
    let help = d.run(&["demo", "--help"], b"").ok();
    assert!(
        help.contains("Keep the temporary folder afterwards (a --dir folder is always kept)"),
        "{help}"
    );
    assert!(help.contains("it is kept afterwards"), "{help}");
}
