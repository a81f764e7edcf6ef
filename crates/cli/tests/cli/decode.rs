//! `krec dump` on Kafka's internal topics: the decoders kafka-dump-log applies with
//! --transaction-log-decoder, --cluster-metadata-decoder, --offsets-decoder,
//! --share-group-state-decoder and --remote-log-metadata-decoder.
//!
//! The fixtures (tests/fixtures/internal) are the interop broker's own partition files (Kafka
//! 4.4.0; __consumer_offsets and __share_group_state after interop/java's ConsumerGroups); the
//! expected texts next to them are Kafka 4.4.0's DumpLogSegments output on them
//! with the matching decoder (tests/fixtures/internal/regenerate.sh).

use crate::util::{run_in, Dir};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/internal")
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(fixtures().join("expected").join(name)).unwrap()
}

/// `krec dump --deep --print-data FILE` run in the fixtures directory, against Kafka's text.
#[track_caller]
fn assert_like_kafka(file: &str, expected_name: &str) {
    let ours = run_in(&fixtures(), &["dump", "--deep", "--print-data", file], b"").ok();
    let theirs = expected(expected_name);
    if ours != theirs {
        let first = ours
            .lines()
            .zip(theirs.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(ours.lines().count().min(theirs.lines().count()));
        panic!(
            "{file}: krec's text differs from kafka-dump-log's from line {}:\nkrec:  {:?}\nkafka: {:?}",
            first + 1,
            ours.lines().nth(first),
            theirs.lines().nth(first)
        );
    }
}

#[test]
fn decode_transaction_state_like_kafka_dump_log() {
    assert_like_kafka(
        "__transaction_state-0/00000000000000000000.log",
        "transaction_state.txt",
    );
}

#[test]
fn decode_cluster_metadata_segment_like_kafka_dump_log() {
    assert_like_kafka(
        "__cluster_metadata-0/00000000000000000000.log",
        "cluster_metadata.txt",
    );
}

/// Record types the broker did not write: ClientQuotaRecord (float64 as Java prints doubles,
/// strings with quotes, control characters and non-BMP text), UserScramCredentialRecord (bytes
/// as base64), PartitionChangeRecord with and without tagged fields, ACLs, delegation tokens, a
/// TopicRecord at a version above its validVersions (MetadataRecords.java).
#[test]
fn decode_cluster_metadata_record_types_like_kafka_dump_log() {
    assert_like_kafka(
        "__cluster_metadata-1/00000000000000000000.log",
        "cluster_metadata_records.txt",
    );
}

/// Values that are not metadata records: Kafka's message for each (no value, empty, frame
/// versions 0, 2 and 0xffffffff, a 16-bit overflow, an unknown apiKey, short bytes, trailing
/// garbage).
#[test]
fn decode_cluster_metadata_errors_like_kafka_dump_log() {
    assert_like_kafka(
        "__cluster_metadata-2/00000000000000000000.log",
        "cluster_metadata_errors.txt",
    );
}

#[test]
fn decode_cluster_metadata_checkpoint_like_kafka_dump_log() {
    assert_like_kafka(
        "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint",
        "cluster_metadata_checkpoint.txt",
    );
}

/// Classic and consumer-protocol groups (members' subscriptions and assignments decoded),
/// offset commits with and without metadata, a deleted group's tombstones, a share group's
/// records (interop/java's ConsumerGroups on a Kafka 4.4.0 broker).
#[test]
fn decode_consumer_offsets_like_kafka_dump_log() {
    assert_like_kafka(
        "__consumer_offsets-0/00000000000000000000.log",
        "consumer_offsets.txt",
    );
}

/// A share group's ShareSnapshot and ShareUpdate records (--share-group-state-decoder).
#[test]
fn decode_share_group_state_like_kafka_dump_log() {
    assert_like_kafka(
        "__share_group_state-27/00000000000000000000.log",
        "share_group_state.txt",
    );
}

/// Remote log metadata (no tiered storage in the interop broker: RemoteLogMetadataSerde's bytes
/// for the objects tests/fixtures/internal/RemoteLogMetadataRecords.java makes, and hand-written
/// bad ones), printed as the Java objects' toString() as --remote-log-metadata-decoder does; in
/// JSON the record's fields and that text.
#[test]
fn decode_remote_log_metadata_like_kafka_dump_log() {
    let f = "__remote_log_metadata-0/00000000000000000000.log";
    assert_like_kafka(f, "remote_log_metadata.txt");
    let lines = run_in(&fixtures(), &["dump", "--deep", "--format", "json", f], b"").json_lines();
    let v = &lines[0]["records"][0]["value_decoded"];
    assert_eq!(v["type"], "REMOTE_LOG_SEGMENT_METADATA_RECORD");
    assert_eq!(v["data"]["endOffset"], 299);
    assert!(v["text"]
        .as_str()
        .unwrap()
        .starts_with("RemoteLogSegmentMetadata{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition=EjRWeBI0VngKvN7wCrze8A:tiered-topic-3,"));
    assert!(lines[0]["records"][0].get("key_decoded").is_none());
}

/// Out of its directory the file is raw bytes unless --decode names its decoder.
#[test]
fn decode_flag_for_files_out_of_their_directory() {
    let t = Dir::new();
    let src = fixtures().join("__transaction_state-0/00000000000000000000.log");
    std::fs::copy(&src, t.path("00000000000000000000.log")).unwrap();
    let raw = run_in(
        &t.path(""),
        &["dump", "--print-data", "00000000000000000000.log"],
        b"",
    )
    .ok();
    assert!(!raw.contains("transactionalId"));
    let decoded = run_in(
        &t.path(""),
        &[
            "dump",
            "--print-data",
            "--decode",
            "transactions",
            "00000000000000000000.log",
        ],
        b"",
    )
    .ok();
    let want = expected("transaction_state.txt");
    // Kafka's "Dumping" line names the fixture's path; the rest is the same.
    let skip_first = |s: &str| s.split_once('\n').map(|x| x.1.to_string()).unwrap();
    assert!(
        skip_first(&decoded) == skip_first(&want),
        "--decode transactions differs from kafka-dump-log's text"
    );
    // --decode none keeps the bytes in a partition directory too.
    let none = run_in(
        &fixtures(),
        &[
            "dump",
            "--print-data",
            "--decode",
            "none",
            "__transaction_state-0/00000000000000000000.log",
        ],
        b"",
    )
    .ok();
    assert!(!none.contains("\"transactionalId\""));
}

/// JSON Lines: the existing fields as they were, plus key_decoded/value_decoded holding the
/// objects kafka-dump-log prints.
#[test]
fn decode_json_adds_structured_key_and_value() {
    let f = "__transaction_state-0/00000000000000000000.log";
    let with = run_in(&fixtures(), &["dump", "--deep", "--format", "json", f], b"");
    let without = run_in(
        &fixtures(),
        &["dump", "--deep", "--format", "json", "--decode", "none", f],
        b"",
    );
    let (with, without) = (with.json_lines(), without.json_lines());
    assert_eq!(with.len(), without.len());
    let kafka: Vec<String> = expected("transaction_state.txt")
        .lines()
        .filter(|l| l.starts_with("| offset: "))
        .map(str::to_string)
        .collect();
    let mut n = 0;
    for (a, b) in with.iter().zip(&without) {
        for (ra, rb) in a["records"]
            .as_array()
            .unwrap()
            .iter()
            .zip(b["records"].as_array().unwrap())
        {
            let mut stripped = ra.clone();
            let o = stripped.as_object_mut().unwrap();
            let key = o.remove("key_decoded").expect("key_decoded");
            let value = o.remove("value_decoded").expect("value_decoded");
            assert_eq!(&stripped, rb);
            // Field by field the same as kafka-dump-log's key: and payload: JSON.
            let line = &kafka[n];
            let (k, p) = line
                .split_once(" key: ")
                .unwrap()
                .1
                .split_once(" payload: ")
                .unwrap();
            assert_eq!(key, serde_json::from_str::<serde_json::Value>(k).unwrap());
            assert_eq!(value, serde_json::from_str::<serde_json::Value>(p).unwrap());
            n += 1;
        }
        let mut a2 = a.clone();
        a2.as_object_mut().unwrap().remove("records");
        let mut b2 = b.clone();
        b2.as_object_mut().unwrap().remove("records");
        assert_eq!(a2, b2);
    }
    assert_eq!(n, kafka.len());
    assert_eq!(
        with[0]["records"][0]["value_decoded"]["data"]["transactionStatus"],
        "Empty"
    );
}

/// Records krec builds: an unknown record type, an unknown value version, a tombstone, bytes
/// that do not parse, a record without a key; each shown as kafka-dump-log shows it (checked
/// against DumpLogSegments --offsets-decoder on the same file). The one difference: on a record
/// without a key kafka-dump-log stops with "Exception in thread "main"
/// java.lang.RuntimeException: Failed to decode message at offset 5 ..."; krec prints the
/// message as the key and goes on.
#[test]
fn decode_unknown_types_versions_and_garbage() {
    let t = Dir::new();
    // GroupMetadataKey "g": type 2, then the string.
    let input = concat!(
        "{\"timestamp\":1,\"key\":\"0063\",\"value\":\"0000\"}\n",
        "{\"timestamp\":1,\"key\":\"00020001 67\",\"value\":\"0009\"}\n",
        "{\"timestamp\":1,\"key\":\"0002000167\",\"value\":null}\n",
        "{\"timestamp\":1,\"key\":\"00020005\",\"value\":null}\n",
        "{\"timestamp\":1,\"key\":\"0002000167\",\"value\":\"000300\"}\n",
        "{\"timestamp\":1,\"key\":null,\"value\":\"00\"}\n",
        "{\"timestamp\":1,\"key\":\"00\",\"value\":\"00\"}\n",
    )
    .replace(' ', "");
    let built = t.run(
        &["build", "--bytes", "hex", "--output", &t.arg("o.log")],
        input.as_bytes(),
    );
    assert_eq!(built.code, 0, "{}", built.stderr);
    let out = t
        .run(
            &[
                "dump",
                "--print-data",
                "--decode",
                "offsets",
                &t.arg("o.log"),
            ],
            b"",
        )
        .ok();
    let tails: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("| offset"))
        .map(|l| l.split_once("headerKeys: []").unwrap().1)
        .collect();
    assert_eq!(
        tails,
        [
            " key: Unknown record type 99 at offset 0, skipping.",
            " key: Error at offset 1, skipping. Found an unknown record version 9 for 2 type",
            " key: {\"type\":\"2\",\"data\":{\"group\":\"g\"}} payload: <DELETE>",
            " key: Error at offset 3, skipping. Could not read record with version 2 from key's buffer due to: Error reading byte array of 5 byte(s): only 0 byte(s) available.",
            " key: Error at offset 4, skipping. Could not read record with version 3 from value's buffer due to: null.",
            // kafka-dump-log stops on this record with the exception; krec shows its message.
            " key: Failed to decode message at offset 5 using the specified decoder (message had a missing key)",
            " key: Error at offset 6, skipping. Could not read version from key's buffer.",
        ]
    );
    // In JSON: an error object, a null tombstone.
    let lines = t
        .run(
            &[
                "dump",
                "--deep",
                "--format",
                "json",
                "--decode",
                "offsets",
                &t.arg("o.log"),
            ],
            b"",
        )
        .json_lines();
    let recs: Vec<&serde_json::Value> = lines
        .iter()
        .flat_map(|l| l["records"].as_array().unwrap())
        .collect();
    assert_eq!(
        recs[0]["key_decoded"]["error"],
        "Unknown record type 99 at offset 0, skipping."
    );
    assert!(recs[0].get("value_decoded").is_none());
    assert_eq!(recs[2]["key_decoded"]["data"]["group"], "g");
    assert!(recs[2]["value_decoded"].is_null());
}
