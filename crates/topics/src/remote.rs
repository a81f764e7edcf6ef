//! `__remote_log_metadata` as kafka-dump-log 4.4.0's --remote-log-metadata-decoder shows it:
//! the value is an ApiMessageAndVersion of kafka-storage's RemoteLogSegmentMetadataRecord (0),
//! RemoteLogSegmentMetadataUpdateRecord (1), RemotePartitionDeleteMetadataRecord (2) or
//! RemoteLogSegmentMetadataSnapshotRecord (3), printed as the `toString()` of the Java object
//! RemoteLogMetadataSerde makes of it (`RemoteLogSegmentMetadata{remoteLogSegmentId=...}`), with
//! the checks of those objects' constructors ("state can not be null", ...).

use super::schema::Message;
use super::value::Node;
use super::{api_message_and_version, upper_snake, Part};
use std::collections::{BTreeMap, HashMap};

/// `RemoteMetadataLogMessageParser.parse`.
pub(super) fn parse(schemas: &HashMap<i16, Message>, value: Option<&[u8]>, offset: i64) -> Part {
    let err = |m: String| Part::Error(format!("Error at offset {offset}, skipping. {m}"));
    let Some(value) = value else {
        return err("Cannot invoke \"java.nio.ByteBuffer.remaining()\" because the return value of \"org.apache.kafka.common.record.internal.Record.value()\" is null".into());
    };
    let (api_key, version, m, data) = match api_message_and_version(schemas, value) {
        Ok(x) => x,
        Err(e) => return err(e),
    };
    let text = match api_key {
        0 => segment(&data),
        1 => update(&data),
        2 => delete(&data),
        3 => snapshot(&data),
        k => Err(format!("Unknown metadata id {k}")),
    };
    match text {
        Ok(t) => Part::Text(
            Node::Obj(vec![
                ("type".into(), Node::Str(upper_snake(&m.name))),
                ("version".into(), Node::Int(i64::from(version))),
                ("data".into(), data),
            ]),
            t,
        ),
        Err(e) => err(e),
    }
}

fn int(j: &Node, name: &str) -> i64 {
    match j.get(name) {
        Some(Node::Int(i)) => *i,
        _ => 0,
    }
}

fn text<'a>(j: &'a Node, name: &str) -> &'a str {
    match j.get(name) {
        Some(Node::Str(s)) => s,
        _ => "",
    }
}

/// `TopicIdPartition.toString()`: `topicId:topic-partition`.
fn topic_id_partition(j: Option<&Node>) -> String {
    let Some(j) = j else {
        return "null".into();
    };
    format!(
        "{}:{}-{}",
        text(j, "id"),
        text(j, "name"),
        int(j, "partition")
    )
}

/// `RemoteLogSegmentId.toString()`.
fn segment_id(j: &Node) -> String {
    let id = j.get("remoteLogSegmentId");
    format!(
        "RemoteLogSegmentId{{topicIdPartition={}, id={}}}",
        topic_id_partition(id.and_then(|i| i.get("topicIdPartition"))),
        id.map_or("", |i| text(i, "id"))
    )
}

/// `Optional<CustomMetadata>.toString()`.
fn custom(j: &Node) -> String {
    match j.get("customMetadata") {
        Some(Node::Bin(b)) => format!("Optional[CustomMetadata{{{} bytes}}]", b.len()),
        _ => "Optional.empty".into(),
    }
}

/// `RemoteLogSegmentState` by id; unknown: the constructors' null check.
fn segment_state(j: &Node) -> Result<&'static str, String> {
    match int(j, "remoteLogSegmentState") {
        0 => Ok("COPY_SEGMENT_STARTED"),
        1 => Ok("COPY_SEGMENT_FINISHED"),
        2 => Ok("DELETE_SEGMENT_STARTED"),
        3 => Ok("DELETE_SEGMENT_FINISHED"),
        _ => Err("state can not be null".into()),
    }
}

/// The leader epochs as the `TreeMap` the constructors make of them: `{0=0, 2=150}`.
fn epochs(j: &Node) -> Result<String, String> {
    let mut m = BTreeMap::new();
    if let Some(Node::Arr(a)) = j.get("segmentLeaderEpochs") {
        for e in a {
            m.insert(int(e, "leaderEpoch") as i32, int(e, "offset"));
        }
    }
    if m.is_empty() {
        return Err("segmentLeaderEpochs can not be null or empty".into());
    }
    let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Ok(format!("{{{}}}", parts.join(", ")))
}

fn txn_index_empty(j: &Node) -> bool {
    matches!(j.get("txnIndexEmpty"), Some(Node::Bool(true)))
}

/// `RemoteLogSegmentMetadata.toString()`, after its constructor's checks.
fn segment(j: &Node) -> Result<String, String> {
    let state = segment_state(j)?;
    let (start, end) = super::remote_log_metadata::offsets(j)?;
    let epochs = epochs(j)?;
    Ok(format!(
        "RemoteLogSegmentMetadata{{remoteLogSegmentId={}, startOffset={start}, endOffset={end}, brokerId={}, maxTimestampMs={}, eventTimestampMs={}, segmentLeaderEpochs={epochs}, segmentSizeInBytes={}, customMetadata={}, state={state}, txnIdxEmpty={}}}",
        segment_id(j),
        int(j, "brokerId"),
        int(j, "maxTimestampMs"),
        int(j, "eventTimestampMs"),
        int(j, "segmentSizeInBytes"),
        custom(j),
        txn_index_empty(j)
    ))
}

/// `RemoteLogSegmentMetadataUpdate.toString()`.
fn update(j: &Node) -> Result<String, String> {
    let state = segment_state(j)?;
    Ok(format!(
        "RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={}, customMetadata={}, state={state}, eventTimestampMs={}, brokerId={}}}",
        segment_id(j),
        custom(j),
        int(j, "eventTimestampMs"),
        int(j, "brokerId")
    ))
}

/// `RemotePartitionDeleteMetadata.toString()`; an unknown state is a NullPointerException
/// without a message.
fn delete(j: &Node) -> Result<String, String> {
    let state = match int(j, "remotePartitionDeleteState") {
        0 => "DELETE_PARTITION_MARKED",
        1 => "DELETE_PARTITION_STARTED",
        2 => "DELETE_PARTITION_FINISHED",
        _ => return Err("null".into()),
    };
    Ok(format!(
        "RemotePartitionDeleteMetadata{{topicPartition={}, state={state}, eventTimestampMs={}, brokerId={}}}",
        topic_id_partition(j.get("topicIdPartition")),
        int(j, "eventTimestampMs"),
        int(j, "brokerId")
    ))
}

/// `RemoteLogSegmentMetadataSnapshot.toString()`.
fn snapshot(j: &Node) -> Result<String, String> {
    let state = segment_state(j)?;
    let epochs = epochs(j)?;
    Ok(format!(
        "RemoteLogSegmentMetadataSnapshot{{segmentId={}, startOffset={}, endOffset={}, maxTimestampMs={}, segmentLeaderEpochs={epochs}, segmentSizeInBytes={}, customMetadata={}, state={state}, txnIdxEmpty={}}}",
        text(j, "segmentId"),
        int(j, "startOffset"),
        int(j, "endOffset"),
        int(j, "maxTimestampMs"),
        int(j, "segmentSizeInBytes"),
        custom(j),
        txn_index_empty(j)
    ))
}
