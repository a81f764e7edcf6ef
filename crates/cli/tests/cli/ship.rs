//! `krec ship`: usage errors and an unreachable target end with one clear line and exit 2 before
//! anything is read or sent; segment files, standard input and `--compression` with a level
//! against the test kit's fake cluster. (The engine is tested in crates/ship/tests and, end to
//! end, by interop/run.sh step_ship.)

use crate::util::{run, Dir, Run};

/// `krec ship DIR/orders-0 kafka://127.0.0.1:1/t OPTION VALUE` (nothing listens on port 1).
fn ship_orders(d: &Dir, option: &str, value: &str) -> Run {
    run(&[
        "ship",
        &d.arg("orders-0"),
        "kafka://127.0.0.1:1/t",
        option,
        value,
    ])
}

#[test]
fn the_target_must_be_a_kafka_url() {
    let d = Dir::new();
    std::fs::create_dir(d.path("orders-0")).unwrap();
    let r = run(&["ship", &d.arg("orders-0"), &d.arg("elsewhere")]);
    r.fails(2, "the target must be kafka://").one_line();
}

#[test]
fn a_source_needs_a_partition() {
    let d = Dir::new();
    std::fs::create_dir(d.path("orders")).unwrap();
    let r = run(&["ship", &d.arg("orders"), "kafka://127.0.0.1:1/t"]);
    r.fails(2, "no partition");
    // A kafka:// source must name its partition.
    let r = run(&["ship", "kafka://127.0.0.1:1/src", "kafka://127.0.0.1:1/t/0"]);
    r.fails(2, "must name one partition");
}

#[test]
fn missing_sources_unknown_codecs_and_unreachable_brokers_exit_2() {
    let d = Dir::new();
    let r = run(&["ship", &d.arg("nope-0"), "kafka://127.0.0.1:1/t"]);
    r.fails(2, "cannot open");
    std::fs::create_dir(d.path("orders-0")).unwrap();
    let r = ship_orders(&d, "--compression", "brotli");
    r.fails(2, "unknown compression");
    // Port 1 on loopback: nothing listens.
    let r = ship_orders(&d, "-X", "socket.connection.setup.timeout.ms=2000");
    r.fails(2, "127.0.0.1:1").one_line();
}

/// --source-X and --source-F are checked before anything connects: a bad property or a
/// missing file is one line naming the option, exit 2.
#[test]
fn source_properties_are_checked_before_connecting() {
    let d = Dir::new();
    std::fs::create_dir(d.path("orders-0")).unwrap();
    let r = ship_orders(&d, "--source-X", "no.such.property=1");
    r.fails(2, "--source-X no.such.property=1").one_line();
    let r = ship_orders(&d, "--source-F", &d.arg("missing.properties"));
    r.fails(2, "--source-F").one_line();
}

/// Options may stand anywhere, between the sources and the target too; a target alone is a
/// usage error.
#[test]
fn options_may_stand_between_sources_and_target() {
    let d = Dir::new();
    std::fs::create_dir(d.path("orders")).unwrap();
    // Parsed (the error is about the source, not about the arguments).
    let r = run(&[
        "ship",
        &d.arg("orders"),
        "--job",
        "j",
        "kafka://127.0.0.1:1/t",
    ]);
    r.fails(2, "no partition");
    let r = run(&["ship", "kafka://127.0.0.1:1/t"]);
    r.fails(2, "at least one source");
}

/// Three batches of two records, values `v0`…`v5`.
fn segment() -> Vec<u8> {
    krecords_testkit::batches::numbered(3, 2, |o| {
        (
            1_714_000_000_000 + o,
            b"k".to_vec(),
            format!("v{o}").into_bytes(),
        )
    })
    .concat()
}

const FAST: [&str; 4] = ["-X", "retries=1", "-X", "retry.backoff.ms=1"];

/// A segment file named otherwise than by its offset: the error names the file, and no
/// temporary path (the files are read where they are, no links are made).
#[test]
fn a_badly_named_segment_file_is_named_in_the_error() {
    let cluster = krecords_testkit::FakeCluster::start(&[("t", 1)]);
    let d = Dir::new();
    let file = d.write("some.log", &segment());
    let target = format!("kafka://{}/t/0", cluster.addr());
    let r = run(&[&["ship", &file, &target][..], &FAST].concat());
    r.fails(2, &format!("{file}: not a segment file"))
        .one_line();
    // No path of a link farm (`$TMPDIR/krec-ship-PID-P/segments-P`, before).
    assert!(!r.stderr.contains("krec-ship-"), "{}", r.stderr);
    assert!(!r.stderr.contains("segments-"), "{}", r.stderr);
    // Named by its offset, it ships.
    let good = d.write("00000000000000000000.log", &segment());
    let r = run(&[&["ship", &good, &target, "--format", "json"][..], &FAST].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["partitions"][0]["records"], 6);
    assert_eq!(cluster.committed_values("t", 0).len(), 6);
}

/// `-` reads entries from standard input as a file source would; the position is kept under
/// `-`, so piping the same entries again ships nothing twice.
#[test]
fn standard_input_is_a_source() {
    let cluster = krecords_testkit::FakeCluster::start(&[("t", 1)]);
    let d = Dir::new();
    let target = format!("kafka://{}/t/0", cluster.addr());
    let args = [&["ship", "-", &target, "--job", "stdin"][..], &FAST].concat();
    let r = d.run(&args, &segment());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = r.out();
    assert!(
        out.starts_with(&format!(
            "{target}: 6 records in 1 transaction, offsets 0..=5;"
        )),
        "{out}"
    );
    let r = d.run(&args, &segment());
    assert!(
        r.ok().contains("0 records in 0 transactions, nothing new"),
        "{}",
        r.out()
    );
    assert_eq!(
        cluster.committed_values("t", 0),
        ["v0", "v1", "v2", "v3", "v4", "v5"]
    );
    // Without a target partition `-` has none.
    let r = d.run(
        &["ship", "-", &format!("kafka://{}/t", cluster.addr())],
        b"",
    );
    r.fails(2, "-: no partition");
}

/// SIGTERM during `--follow` (delivered twice): what was sent is committed, the report
/// printed, exit 0; a rerun ships nothing twice.
#[test]
fn sigterm_during_follow_commits_reports_and_exits_0() {
    let cluster = krecords_testkit::FakeCluster::start(&[("t", 1)]);
    let d = Dir::new();
    let part = d.path("orders-0");
    std::fs::create_dir_all(&part).unwrap();
    std::fs::write(part.join("00000000000000000000.log"), segment()).unwrap();
    let target = format!("kafka://{}/t/0", cluster.addr());
    let part_arg = part.to_str().unwrap();
    let args = [
        &[
            "ship",
            part_arg,
            &target,
            "--job",
            "f",
            "--follow",
            "--poll-ms",
            "50",
        ][..],
        &FAST,
    ]
    .concat();
    let mut cmd = crate::util::krec();
    cmd.args(&args);
    let started = crate::util::start(&mut cmd, Vec::new());
    // The six records are committed while the job keeps following.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while cluster.committed_values("t", 0).len() < 6 {
        assert!(std::time::Instant::now() < deadline, "nothing shipped");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Twice, as GNU timeout delivers it (to the command and to its process group): still the
    // graceful stop.
    let pid = started.0.id().to_string();
    for _ in 0..2 {
        let kill = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        assert!(kill.success());
    }
    let r = crate::util::finish(started);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = r.out();
    assert!(
        out.starts_with(&format!(
            "{target}: 6 records in 1 transaction, offsets 0..=5;"
        )),
        "{out}"
    );
    assert!(out.contains("stopped by a signal"), "{out}");
    // A rerun ships nothing twice.
    let again = run(&[&["ship", part_arg, &target, "--job", "f"][..], &FAST].concat());
    assert!(
        again
            .ok()
            .contains("0 records in 0 transactions, nothing new"),
        "{}",
        again.out()
    );
    assert_eq!(cluster.committed_values("t", 0).len(), 6);
}

/// `--compression zstd:3` as in every other command: the batches are rebuilt in zstd at level 3.
#[test]
fn compression_takes_a_level() {
    let cluster = krecords_testkit::FakeCluster::start(&[("t", 1)]);
    let d = Dir::new();
    std::fs::create_dir(d.path("orders-0")).unwrap();
    d.write("orders-0/00000000000000000000.log", &segment());
    let target = format!("kafka://{}/t", cluster.addr());
    let r = run(&[
        &[
            "ship",
            &d.arg("orders-0"),
            &target,
            "--compression",
            "zstd:3",
            "--format",
            "json",
        ][..],
        &FAST,
    ]
    .concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["partitions"][0]["batches_rebatched"], 3);
    for b in cluster.committed_batches("t", 0) {
        let e = krecords_codec::read::Entries::new(&b)
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(e.compression().unwrap(), krecords_codec::Compression::Zstd);
    }
    let r = run(&[
        "ship",
        &d.arg("orders-0"),
        &target,
        "--compression",
        "zstd:99",
    ]);
    r.fails(2, "zstd level 99 outside");
}

/// `-X` is the shared client option: ship refuses an unknown property with dump's message.
#[test]
fn an_unknown_property_is_refused_as_dump_refuses_it() {
    let d = Dir::new();
    std::fs::create_dir(d.path("orders-0")).unwrap();
    let ship = run(&[
        "ship",
        "-X",
        "unknown.property=1",
        &d.arg("orders-0"),
        "kafka://127.0.0.1:1/t",
    ]);
    let dump = run(&[
        "dump",
        "-X",
        "unknown.property=1",
        "kafka://127.0.0.1:1/t/0",
    ]);
    assert_eq!(ship.code, 2, "{}", ship.stderr);
    assert_eq!((ship.code, &ship.stderr), (dump.code, &dump.stderr));
}
