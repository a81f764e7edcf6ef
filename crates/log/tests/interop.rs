//! Kafka's own tools on our files. Needs the Kafka jars: set `KAFKA_CLASSPATH` to a Java
//! classpath holding `org.apache.kafka.tools.DumpLogSegments` and its dependencies, then run
//! `cargo test -p krecords-log --test integration interop -- --ignored`.

use crate::util::*;
use krecords_log::{Log, OffsetSpec};
use std::process::Command;

fn dump_log(classpath: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new("java")
        .args(["-cp", classpath, "org.apache.kafka.tools.DumpLogSegments"])
        .args(args)
        .output()
        .expect("run java");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
#[ignore = "needs the Kafka jars in KAFKA_CLASSPATH"]
fn kafka_dump_log_accepts_our_segments_and_indexes() {
    let Ok(classpath) = std::env::var("KAFKA_CLASSPATH") else {
        panic!("set KAFKA_CLASSPATH");
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("topic-0");
    let now = krecords_log::clock::Clock::now_ms(&krecords_log::clock::SystemClock);
    let mut log = Log::create(
        &path,
        config(&[
            ("segment.bytes", "2000"),
            ("index.interval.bytes", "100"),
            ("message.format.version", "0.9.0"),
        ]),
    )
    .unwrap();
    let mut cfg = log.config().clone();
    append(&mut log, &legacy(0, -1, &["v0-a", "v0-b"]));
    cfg.set("message.format.version", "0.10.2").unwrap();
    log.update_config(cfg.clone()).unwrap();
    append(&mut log, &legacy(1, now - 100, &["v1-c"]));
    cfg.set("message.format.version", "3.0").unwrap();
    log.update_config(cfg).unwrap();
    for i in 0..60 {
        append(
            &mut log,
            &v2_ts(&[(now + i, "value-value-value"), (now - i, "other")]),
        );
    }
    let active = log.segment_files().last().unwrap().clone();
    let sealed = log.segment_files()[0].clone();
    assert!(log.segment_files().len() > 2);
    let ts = log.offsets(OffsetSpec::Timestamp(now + 30)).unwrap();
    log.close().unwrap();
    for (l, i, t) in [&sealed, &active] {
        for file in [l, i, t] {
            let (ok, text) = dump_log(
                &classpath,
                &["--files", file.to_str().unwrap(), "--index-sanity-check"],
            );
            assert!(ok, "{text}");
            assert!(
                !text.contains("Exception") && !text.to_lowercase().contains("corrupt"),
                "{text}"
            );
            assert!(!text.contains("Mismatches"), "{text}");
        }
        let (ok, text) = dump_log(
            &classpath,
            &["--files", l.to_str().unwrap(), "--deep-iteration"],
        );
        assert!(ok, "{text}");
        assert!(!text.contains("isValid: false"), "{text}");
        let (ok, text) = dump_log(
            &classpath,
            &["--files", i.to_str().unwrap(), "--verify-index-only"],
        );
        assert!(ok && !text.contains("Mismatches"), "{text}");
        let (ok, text) = dump_log(
            &classpath,
            &["--files", t.to_str().unwrap(), "--verify-index-only"],
        );
        assert!(
            ok && !text.contains("Mismatches") && !text.contains("error"),
            "{text}"
        );
    }
    assert_eq!(ts.timestamp, Some(now + 30));
}
