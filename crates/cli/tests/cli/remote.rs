//! A remote tier location read by the reading commands: segments of a partition directory
//! written by `krec log`, uploaded as Aiven's plugin does (krecords-remote's uploader, every
//! combination of chunk compression and encryption), read from `file://`.

use crate::util::{record_offsets, Dir};
use krecords_remote::key::{KafkaUuid, RemotePartition};
use krecords_remote::storage::FileSystemStorage;
use krecords_remote::write::{upload_local_segment, UploadOptions};
use std::path::{Path, PathBuf};

const KEY: &str = "../remote/tests/data/k1-private.pem";

/// A partition directory `orders-0` of several segments: every codec, headers, a committed
/// and an aborted transaction.
fn partition(d: &Dir) -> String {
    let log = d.arg("orders-0");
    d.run(
        &["log", "create", &log, "--config", "segment.bytes=1500"],
        b"",
    )
    .ok();
    let mut n = 0;
    for round in 0..3 {
        for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
            let mut lines = String::new();
            for _ in 0..6 {
                lines.push_str(&format!(
                    "{{\"timestamp\":{},\"key\":\"k{}\",\"value\":\"value {n} {}\",\"headers\":[{{\"key\":\"h\",\"value\":\"{n}\"}}]}}\n",
                    1_714_000_000_000i64 + 10 * n,
                    n % 3,
                    "x".repeat((n % 11) as usize)
                ));
                n += 1;
            }
            d.run(
                &["log", "append", &log, "--compression", codec],
                lines.as_bytes(),
            )
            .ok();
        }
        let producer = ["--producer-id", "7", "--producer-epoch", "0"];
        let txn = format!("{{\"value\":\"txn {round}\"}}\n{{\"value\":\"txn {round}b\"}}\n");
        d.run(
            &[
                &["log", "append", &log, "--transactional"][..],
                &producer[..],
            ]
            .concat(),
            txn.as_bytes(),
        )
        .ok();
        let end = if round == 1 { "--abort" } else { "--commit" };
        d.run(
            &[
                &["log", "end-txn", &log, "--coordinator-epoch", "0", end][..],
                &producer[..],
            ]
            .concat(),
            b"",
        )
        .ok();
    }
    log
}

/// Uploads every segment of `dir` under `root` with the key prefix `tiered/`.
fn upload(dir: &Path, root: &Path, compression: bool, encryption: bool) {
    let storage = FileSystemStorage::new(root);
    let encryption = encryption.then(|| {
        let mut ring = krecords_remote::crypto::KeyRing::new();
        ring.add_pem_file("k1", Path::new(KEY)).unwrap();
        ("k1".to_string(), ring.public_key("k1").unwrap())
    });
    let options = UploadOptions {
        chunk_size: 700,
        compression,
        encryption,
    };
    let p = RemotePartition {
        topic: "orders".into(),
        topic_id: KafkaUuid([5; 16]),
        partition: 0,
    };
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    for log in logs {
        upload_local_segment(
            &storage,
            "tiered/",
            &p,
            &log,
            &options,
            &mut rand::rngs::OsRng,
        )
        .unwrap();
    }
}

/// dump's JSON lines without the fields that name the file.
fn entries(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if let Some(o) = v.as_object_mut() {
                o.remove("file");
            }
            v
        })
        .collect()
}

#[test]
fn dump_of_a_file_location_equals_dump_of_the_partition_directory() {
    let d = Dir::new();
    let log = partition(&d);
    let segments = std::fs::read_dir(&log)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "log")
        })
        .count();
    assert!(segments >= 3, "{segments} segments");
    let key = format!("k1={}", std::fs::canonicalize(KEY).unwrap().display());
    for (compression, encryption) in [(false, false), (true, false), (false, true), (true, true)] {
        let root = d.path(&format!("tier-{compression}-{encryption}"));
        upload(Path::new(&log), &root, compression, encryption);
        let url = format!("file://{}/tiered/", root.display());
        let what = format!("compression {compression}, encryption {encryption}");
        for range in [
            &[][..],
            &["--start", "20", "--end", "70"][..],
            &["--start", "-15"][..],
            &["--isolation", "read-committed"][..],
            &[
                "--start",
                "2024-04-24T23:06:40.300Z",
                "--isolation",
                "read-committed",
            ][..],
        ] {
            let dump = |source: &str| {
                let mut args = vec![
                    "dump",
                    "--deep",
                    "--format",
                    "json",
                    "--rsm-private-key",
                    &key,
                ];
                args.extend_from_slice(range);
                args.push(source);
                let r = d.run(&args, b"");
                assert_eq!(r.code, 0, "{what} {range:?}: {}", r.stderr);
                r.out()
            };
            let want = dump(&log);
            let got = dump(&url);
            let (want, got) = (entries(&want), entries(&got));
            assert!(!want.is_empty());
            assert_eq!(
                record_offsets(&got),
                record_offsets(&want),
                "{what} {range:?}"
            );
            assert_eq!(got, want, "{what} {range:?}");
        }
        // The partition's name is a location of it: the one-partition commands take it.
        let one = format!("{url}orders-BQUFBQUFBQUFBQUFBQUFBQ/0");
        let r = d.run(&["dump", "--rsm-private-key", &key, &url], b"");
        assert!(r.ok().contains(&one), "{}", r.out());
        let read = |args: &[&str]| {
            let r = d.run(args, b"");
            assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
            r.out()
        };
        let k = ["--rsm-private-key", key.as_str()];
        let remote_read = d.run(
            &[&["log", "read", "--start", "5", &one][..], &k[..]].concat(),
            b"",
        );
        assert_eq!(
            remote_read.out(),
            read(&["log", "read", "--start", "5", &log]),
            "{}",
            remote_read.stderr
        );
        let explain = ["explain", "--start", "40", "--count", "2"];
        assert_eq!(
            read(&[&explain[..], &k[..], &[one.as_str()][..]].concat()),
            read(&[&explain[..], &[log.as_str()][..]].concat()).replace(&log, &one),
            "{what}"
        );
        // convert: into a new partition directory that reads as the original.
        let out = d.arg(&format!("converted-{compression}-{encryption}"));
        read(&[&["convert", &one, &out][..], &k[..]].concat());
        assert_eq!(read(&["log", "read", &out]), read(&["log", "read", &log]));
        // sql and export read it (with the private key for encrypted segments).
        let query = "select count(*) as n, sum(offset) as s, max(value) as v from t";
        let sql = |source: &str| {
            let table = format!("t={source}");
            read(&[&["sql", query, "--table", &table][..], &k[..]].concat())
        };
        assert_eq!(sql(&url), sql(&log), "{what}");
        let exported = d.arg(&format!("export-{compression}-{encryption}"));
        read(&[&["export", "--output", &exported, &url][..], &k[..]].concat());
        assert_eq!(sql(&exported), sql(&log), "{what}");
        // stats --what-if reads it.
        assert!(read(&[&["stats", "--what-if", &url][..], &k[..]].concat()).contains("records"));
    }
}

#[test]
fn remote_failures_are_clear() {
    let d = Dir::new();
    let log = partition(&d);
    let root = d.path("tier");
    upload(Path::new(&log), &root, true, true);
    let url = format!("file://{}/tiered/", root.display());
    // Encrypted, no key: the key pair is named.
    d.run(&["dump", &url], b"").fails(2, "k1");
    // A key file that does not exist.
    d.run(
        &["dump", "--rsm-private-key", "k1=/nonexistent.pem", &url],
        b"",
    )
    .fails(2, "/nonexistent.pem");
    // Unknown remote options are refused like unknown client properties; plugin options
    // that do not apply to reading are a warning.
    d.run(&["dump", "-X", "s3.endpoint=http://x", &url], b"")
        .fails(2, "unknown remote tier property");
    let key = format!("k1={}", std::fs::canonicalize(KEY).unwrap().display());
    let r = d.run(
        &[
            "dump",
            "--rsm-private-key",
            &key,
            "-X",
            "rsm.config.chunk.size=4194304",
            &url,
        ],
        b"",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("rsm.config.chunk.size does not apply"),
        "{}",
        r.stderr
    );
    // --topic selects partitions by topic.
    let k = key.as_str();
    let all = d.run(&["dump", "--rsm-private-key", k, &url], b"");
    let some = d.run(&["dump", "--rsm-private-key", k, "--topic", "*", &url], b"");
    assert_eq!((some.code, some.out()), (0, all.out()), "{}", some.stderr);
    d.run(
        &["dump", "--rsm-private-key", k, "--topic", "nope*", &url],
        b"",
    )
    .fails(
        2,
        "no partition of a topic matching \"nope*\" (its topics: ",
    );
    // verify checks a remote tier against its metadata, with --remote.
    d.run(&["verify", &url], b"").fails(2, "--remote LOCATION");
    // ship cannot take one, and says what to do instead.
    d.run(&["ship", &url, "kafka://localhost:1/x"], b"")
        .fails(2, "krec convert");
    // A location with nothing: exit 2.
    std::fs::create_dir(d.path("empty")).unwrap();
    d.run(&["dump", &format!("file://{}/", d.arg("empty"))], b"")
        .fails(2, "no uploaded segments");
}
