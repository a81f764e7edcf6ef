//! `krec salvage` through the binary: a damaged partition is salvaged into a directory that
//! `krec verify` passes, the exit code says whether anything was lost, a log.dirs root salvages
//! only its damaged partitions, and an existing output is a usage error.

use crate::util::Dir;

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
    // The input is unchanged; an existing output is a usage error.
    d.run(&["salvage", &input, "--output", &out], b"")
        .fails(2, "exists");
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
