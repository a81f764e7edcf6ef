//! `krec ship` without a broker: usage errors and an unreachable target end with one clear line
//! and exit 2 before anything is read or sent. (Shipping itself is tested against the client's
//! fake broker and, end to end, by interop/run.sh step_ship.)

use crate::util::{run, Dir};

#[test]
fn the_target_must_be_a_kafka_url() {
    let d = Dir::new();
    std::fs::create_dir(d.path("orders-0")).unwrap();
    let r = run(&["ship", &d.arg("orders-0"), &d.arg("elsewhere")]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("the target must be kafka://"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

#[test]
fn a_source_needs_a_partition() {
    let d = Dir::new();
    std::fs::create_dir(d.path("orders")).unwrap();
    let r = run(&["ship", &d.arg("orders"), "kafka://127.0.0.1:1/t"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no partition"), "{}", r.stderr);
    // A kafka:// source must name its partition.
    let r = run(&["ship", "kafka://127.0.0.1:1/src", "kafka://127.0.0.1:1/t/0"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("must name one partition"), "{}", r.stderr);
}

#[test]
fn missing_sources_unknown_codecs_and_unreachable_brokers_exit_2() {
    let d = Dir::new();
    let r = run(&["ship", &d.arg("nope-0"), "kafka://127.0.0.1:1/t"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("cannot open"), "{}", r.stderr);
    std::fs::create_dir(d.path("orders-0")).unwrap();
    let r = run(&[
        "ship",
        &d.arg("orders-0"),
        "kafka://127.0.0.1:1/t",
        "--compression",
        "brotli",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("unknown compression"), "{}", r.stderr);
    // Port 1 on loopback: nothing listens.
    let r = run(&[
        "ship",
        &d.arg("orders-0"),
        "kafka://127.0.0.1:1/t",
        "-X",
        "socket.connection.setup.timeout.ms=2000",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("127.0.0.1:1"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

/// --source-X and --source-F are checked before anything connects: a bad property or a
/// missing file is one line naming the option, exit 2.
#[test]
fn source_properties_are_checked_before_connecting() {
    let d = Dir::new();
    std::fs::create_dir(d.path("orders-0")).unwrap();
    let r = run(&[
        "ship",
        &d.arg("orders-0"),
        "kafka://127.0.0.1:1/t",
        "--source-X",
        "no.such.property=1",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--source-X no.such.property=1"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    let r = run(&[
        "ship",
        &d.arg("orders-0"),
        "kafka://127.0.0.1:1/t",
        "--source-F",
        &d.arg("missing.properties"),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--source-F"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
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
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no partition"), "{}", r.stderr);
    let r = run(&["ship", "kafka://127.0.0.1:1/t"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("at least one source"), "{}", r.stderr);
}
