//! `write::end_txn_marker` against Apache Kafka's `MemoryRecords.withEndTransactionMarker`
//! (the kafka-java golden vectors) and its refusals.

use krecords_codec::write::{end_txn_marker, EndTxnBatch};
use krecords_codec::Error;
use serde_json::Value;
use std::path::Path;

fn vector(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/vectors/kafka-java")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn commit_and_abort_markers_match_kafkas_bytes() {
    for (name, commit) in [
        ("v2_none_control_commit", true),
        ("v2_none_control_abort", false),
    ] {
        let v = vector(name);
        let b = &v["build"];
        let c = &b["control"];
        assert_eq!(c["version"], 0);
        assert_eq!(c["type"], if commit { "commit" } else { "abort" });
        let int = |v: &Value| v.as_i64().unwrap();
        let bytes = end_txn_marker(&EndTxnBatch {
            base_offset: int(&b["base_offset"]),
            partition_leader_epoch: int(&b["partition_leader_epoch"]) as i32,
            producer_id: int(&b["producer_id"]),
            producer_epoch: int(&b["producer_epoch"]) as i16,
            coordinator_epoch: int(&c["coordinator_epoch"]) as i32,
            commit,
            timestamp: int(&c["timestamp"]),
        })
        .unwrap();
        assert_eq!(hex::encode(bytes), v["hex"].as_str().unwrap(), "{name}");
    }
}

#[test]
fn markers_without_a_producer_or_with_a_bad_timestamp_are_refused() {
    let ok = EndTxnBatch {
        base_offset: 0,
        partition_leader_epoch: -1,
        producer_id: 1,
        producer_epoch: 0,
        coordinator_epoch: 0,
        commit: true,
        timestamp: -1,
    };
    assert!(end_txn_marker(&ok).is_ok(), "no timestamp (-1) is allowed");
    for bad in [
        EndTxnBatch {
            producer_id: -1,
            ..ok
        },
        EndTxnBatch {
            producer_epoch: -1,
            ..ok
        },
        EndTxnBatch {
            timestamp: -2,
            ..ok
        },
    ] {
        let e = end_txn_marker(&bad).unwrap_err();
        assert!(matches!(e, Error::Unencodable { .. }), "{bad:?}: {e:?}");
    }
}
