//! `krec verify ROOT --remote LOCATION` through the binary: a broker root with a real partition
//! (krecords-log) whose closed segments are uploaded as Aiven's plugin uploads them
//! (`krecords_remote::write::upload`) and a `__remote_log_metadata-0` saying so; clean exits 0
//! with every segment intact, a bucket altered exits 1 with one line per problem, bad
//! arguments exit 2.

use std::path::{Path, PathBuf};

use krecords_codec::write::{NewRecord, V2Builder};
use krecords_log::{AppendOrigin, Log, LogConfig};
use krecords_remote::crypto::KeyRing;
use krecords_remote::key::{KafkaUuid, ObjectKey, RemotePartition, Suffix};
use krecords_remote::manifest::RemoteLogSegmentMetadata;
use krecords_remote::storage::FileSystemStorage;
use krecords_remote::write::{upload, SegmentFiles, UploadOptions};
use krecords_topics::remote_log_metadata::{
    encode, RemoteLogMetadataRecord, RemoteLogSegmentId, RemoteLogSegmentMetadata as Record,
    RemoteLogSegmentMetadataUpdate, RemoteLogSegmentState, SegmentFacts, TopicIdPartition,
};
use rand::SeedableRng;

use crate::util::{run, Dir};

const NOW: i64 = 1_714_000_000_000;
const TOPIC_ID: [u8; 16] = [5; 16];

fn key_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../remote/tests/data/k1-private.pem")
}

/// A broker root (`data/`) and a bucket (`bucket/`, no key prefix); returns the manifest keys
/// of the uploaded segments and the batches of `__remote_log_metadata-0`.
fn fixture_and_metadata(d: &Dir, encryption: bool) -> (Vec<String>, Vec<Vec<u8>>) {
    let root = d.path("data");
    let part = root.join("orders-0");
    let config = LogConfig::from_pairs([("segment.bytes", "2048")]).unwrap();
    let mut log = Log::create(&part, config).unwrap();
    for i in 0..40 {
        let mut b = V2Builder::new(0);
        for j in 0..4 {
            let value = format!("order {i}-{j} {}", "x".repeat(60));
            b.append(&NewRecord::new(NOW + i, Some(b"k"), Some(value.as_bytes())))
                .unwrap();
        }
        log.append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
    }
    log.close().unwrap();
    let mut bases: Vec<i64> = std::fs::read_dir(&part)
        .unwrap()
        .filter_map(|e| krecords_log::check::segment_base(&e.unwrap().path()))
        .collect();
    bases.sort();
    assert!(bases.len() >= 3, "{bases:?}");
    let storage = FileSystemStorage::new(d.path("bucket"));
    let mut ring = KeyRing::new();
    ring.add_pem_file("k1", &key_file()).unwrap();
    let options = UploadOptions {
        chunk_size: 1024,
        compression: true,
        encryption: encryption.then(|| ("k1".to_string(), ring.public_key("k1").unwrap())),
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let tp = TopicIdPartition {
        topic_id: TOPIC_ID,
        topic: "orders".into(),
        partition: 0,
    };
    let mut values = Vec::new();
    let mut keys = Vec::new();
    for (n, pair) in bases.windows(2).enumerate() {
        let (base, next) = (pair[0], pair[1]);
        let file = |ext: &str| std::fs::read(part.join(format!("{base:020}.{ext}"))).unwrap();
        let log_bytes = file("log");
        let id = [n as u8 + 1; 16];
        let key = ObjectKey {
            prefix: String::new(),
            partition: RemotePartition {
                topic: "orders".into(),
                topic_id: KafkaUuid(TOPIC_ID),
                partition: 0,
            },
            start_offset: base,
            segment_id: KafkaUuid(id),
            suffix: Suffix::Manifest,
        };
        let epochs: std::collections::BTreeMap<i32, i64> = [(0, base)].into_iter().collect();
        let (offset_index, time_index) = (file("index"), file("timeindex"));
        let leader_epoch = format!("0\n1\n0 {base}\n");
        let files = SegmentFiles {
            log: &log_bytes,
            offset_index: &offset_index,
            time_index: &time_index,
            producer_snapshot: b"",
            leader_epoch: leader_epoch.as_bytes(),
            transaction: None,
        };
        let manifest_metadata = RemoteLogSegmentMetadata {
            topic_id: KafkaUuid(TOPIC_ID),
            topic: "orders".into(),
            partition: 0,
            segment_id: KafkaUuid(id),
            start_offset: base,
            end_offset: next - 1,
            max_timestamp_ms: NOW,
            broker_id: 1,
            event_timestamp_ms: NOW,
            segment_leader_epochs: epochs.clone(),
        };
        upload(&files, &options, Some(manifest_metadata), &mut rng)
            .unwrap()
            .put(&storage, &key)
            .unwrap();
        let segment_id = RemoteLogSegmentId {
            partition: tp.clone(),
            id,
        };
        values.push(encode(&RemoteLogMetadataRecord::Segment(Record {
            segment_id: segment_id.clone(),
            facts: SegmentFacts {
                start_offset: base,
                end_offset: next - 1,
                broker_id: 1,
                max_timestamp_ms: NOW,
                event_timestamp_ms: NOW,
                segment_leader_epochs: epochs,
                segment_size_in_bytes: log_bytes.len() as i32,
                custom_metadata: None,
                state: RemoteLogSegmentState::CopySegmentStarted,
                txn_index_empty: true,
            },
        })));
        values.push(encode(&RemoteLogMetadataRecord::Update(
            RemoteLogSegmentMetadataUpdate {
                segment_id,
                custom_metadata: None,
                state: RemoteLogSegmentState::CopySegmentFinished,
                event_timestamp_ms: NOW,
                broker_id: 1,
            },
        )));
        keys.push(key.to_string());
    }
    let mut meta = Log::create(root.join("__remote_log_metadata-0"), LogConfig::default()).unwrap();
    let mut batches = Vec::new();
    for (offset, v) in values.iter().enumerate() {
        // The log assigns offsets; the fake cluster serves batches as they are.
        let batch = |base: i64| {
            let mut b = V2Builder::new(base);
            b.append(&NewRecord::new(NOW, None, Some(v))).unwrap();
            b.finish().unwrap()
        };
        meta.append(&batch(0), AppendOrigin::Client).unwrap();
        batches.push(batch(offset as i64));
    }
    meta.close().unwrap();
    (keys, batches)
}

fn fixture(d: &Dir, encryption: bool) -> Vec<String> {
    fixture_and_metadata(d, encryption).0
}

#[test]
fn a_clean_broker_and_bucket() {
    let d = Dir::new();
    let keys = fixture(&d, false);
    let location = format!("file://{}/", d.arg("bucket"));
    let out = run(&["verify", &d.arg("data"), "--remote", &location]).ok();
    let last = out.lines().last().unwrap();
    let n = keys.len();
    assert!(
        last.starts_with(&format!(
            "remote tier {location}: 1 partition (1 ok, 0 with problems), {n} segments ({n} intact, 0 with problems), {} files,",
            3 * n
        )) && last.ends_with(": no problems"),
        "{out}"
    );
    // Each segment's .log, offset and time index were checked (no transaction index).
    // The root's own summary comes first, as without --remote.
    assert!(
        out.lines()
            .rev()
            .nth(1)
            .unwrap()
            .contains("partitions (2 ok, 0 with problems)"),
        "{out}"
    );
}

/// Alters the bucket: segment `without_indexes` loses its `.indexes` object (returned), the
/// first segment's manifest its last 5 bytes.
fn alter(d: &Dir, keys: &[String], without_indexes: usize) -> String {
    let bucket = d.path("bucket");
    let indexes = keys[without_indexes].replace(".rsm-manifest", ".indexes");
    std::fs::remove_file(bucket.join(&indexes)).unwrap();
    let manifest = bucket.join(&keys[0]);
    let text = std::fs::read(&manifest).unwrap();
    std::fs::write(&manifest, &text[..text.len() - 5]).unwrap();
    indexes
}

#[test]
fn an_altered_bucket_one_line_per_problem() {
    let d = Dir::new();
    let keys = fixture(&d, false);
    let (data, bucket_arg) = (d.arg("data"), d.arg("bucket"));
    let bucket = d.path("bucket");
    let indexes = alter(&d, &keys, 1);
    let stray = keys[0].replace("AQEBAQEBAQEBAQEBAQEBAQ", "CQkJCQkJCQkJCQkJCQkJCQ");
    std::fs::write(bucket.join(&stray), b"{}").unwrap();
    let r = run(&["verify", &data, "--remote", &bucket_arg]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let out = r.out();
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("orders-0: "))
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&stray) && l.contains("[orphan]")),
        "{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&keys[0]) && l.contains("[manifest]")),
        "{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&indexes) && l.contains("[missing]")),
        "{out}"
    );
    let n = keys.len();
    assert!(
        out.contains(&format!("{n} segments ({} intact, 2 with problems)", n - 2)),
        "{out}"
    );

    // The bucket alone, metadata from the root, as JSON Lines: no local summary.
    let json = ["--format", "json"];
    let r = run(&[
        &[
            "verify",
            "--remote",
            &bucket_arg,
            "--remote-metadata",
            &data,
        ],
        &json[..],
    ]
    .concat());
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines = r.json_lines();
    let checks: Vec<&str> = lines.iter().filter_map(|l| l["check"].as_str()).collect();
    assert_eq!(checks.len(), 3, "{lines:?}");
    let segments = lines.iter().filter(|l| l.get("segment").is_some()).count();
    assert_eq!(segments, n);
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["remote"]["intact"], (n - 2) as u64);
    assert_eq!(summary["remote"]["problems"], 3);
    assert!(summary.get("files").is_none(), "{summary}");
}

#[test]
fn the_report_is_the_same_whatever_the_threads() {
    let d = Dir::new();
    let keys = fixture(&d, false);
    let (data, bucket_arg) = (d.arg("data"), d.arg("bucket"));
    // Problems in the first and the third segment, the others intact.
    let indexes = alter(&d, &keys, 2);
    for format in ["text", "json"] {
        let args = |threads: &'static str| {
            run(&[
                "verify",
                &data,
                "--remote",
                &bucket_arg,
                "--format",
                format,
                "--threads",
                threads,
            ])
        };
        let one = args("1");
        assert_eq!(one.code, 1, "{}", one.stderr);
        assert!(one.out().contains(&indexes), "{}", one.out());
        for threads in ["2", "7"] {
            let many = args(threads);
            assert_eq!(many.code, 1, "{}", many.stderr);
            assert_eq!(many.out(), one.out(), "{format}, --threads {threads}");
        }
    }
}

#[test]
fn encrypted_segments_need_their_key() {
    let d = Dir::new();
    let keys = fixture(&d, true);
    let location = format!("file://{}/", d.arg("bucket"));
    let r = run(&["verify", &d.arg("data"), "--remote", &location]);
    assert_eq!(r.code, 1);
    let out = r.out();
    assert_eq!(out.matches("[manifest]").count(), keys.len(), "{out}");
    let key = format!("k1={}", key_file().display());
    run(&[
        "verify",
        &d.arg("data"),
        "--remote",
        &location,
        "--rsm-private-key",
        &key,
    ])
    .ok();
}

#[test]
fn usage_errors() {
    let d = Dir::new();
    fixture(&d, false);
    let (data, bucket) = (d.arg("data"), d.arg("bucket"));
    let v = |args: &[&str]| run(&[&["verify"], args].concat());
    v(&["--remote", &bucket]).fails(2, "--remote-metadata");
    // An object store is read through the same options as the reading commands: here one
    // that refuses connections, an error naming the location (exit 2).
    v(&[
        "--remote",
        "s3://b/p",
        "--remote-metadata",
        &data,
        "-X",
        "s3.endpoint.url=http://127.0.0.1:1",
        "-X",
        "aws.access.key.id=x",
        "-X",
        "aws.secret.access.key=y",
        "-X",
        "remote.retries=0",
    ])
    .fails(2, "remote tier s3://b/p");
    v(&["--remote", &bucket, "--remote-metadata", &bucket]).fails(2, "__remote_log_metadata");
    v(&[&data, "--remote", &bucket, "--rsm-private-key", "nokey"]).fails(2, "--rsm-private-key");
}

#[test]
fn the_metadata_from_a_live_cluster() {
    let d = Dir::new();
    let (keys, batches) = fixture_and_metadata(&d, false);
    let cluster = krecords_testkit::FakeCluster::start(&[("__remote_log_metadata", 1)]);
    cluster.append("__remote_log_metadata", 0, &batches);
    let url = format!(
        "kafka://127.0.0.1:{}/__remote_log_metadata",
        cluster.broker().port()
    );
    let bucket = d.arg("bucket");
    let fast = ["-X", "retries=1", "-X", "retry.backoff.ms=1"];
    let r = run(&[
        &["verify", "--remote", &bucket, "--remote-metadata", &url],
        &fast[..],
    ]
    .concat());
    let out = r.ok();
    let n = keys.len();
    assert!(
        out.contains(&format!("{n} segments ({n} intact, 0 with problems)")),
        "{out}"
    );
    // A segment the metadata names, gone from the bucket.
    std::fs::remove_file(d.path("bucket").join(&keys[0])).unwrap();
    let r = run(&[
        &["verify", "--remote", &bucket, "--remote-metadata", &url],
        &fast[..],
    ]
    .concat());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.out().contains("[missing]"), "{}", r.out());
}
