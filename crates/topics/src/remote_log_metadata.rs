//! `__remote_log_metadata` values as typed records: what Kafka's `RemoteLogMetadataSerde` makes
//! of them (`RemoteLogSegmentMetadata`, `RemoteLogSegmentMetadataUpdate`,
//! `RemotePartitionDeleteMetadata`, `RemoteLogSegmentMetadataSnapshot`), read with the same
//! embedded schemas and ApiMessageAndVersion framing as [`crate::parse`] (one wire parser), with
//! the checks of those classes' constructors.
//!
//! ```
//! use krecords_topics::remote_log_metadata::{decode, RemoteLogMetadataRecord};
//! // Frame version 1, apiKey 2 (RemotePartitionDeleteMetadataRecord), version 0, then the record.
//! let mut value = vec![1, 2, 0];
//! value.extend_from_slice(&[2, b't']); // topic name "t" (compact string)
//! value.extend_from_slice(&[7; 16]); // topic id
//! value.extend_from_slice(&3i32.to_be_bytes()); // partition
//! value.extend_from_slice(&[0]); // tagged fields of the TopicIdPartition
//! value.extend_from_slice(&1i32.to_be_bytes()); // broker id
//! value.extend_from_slice(&5i64.to_be_bytes()); // event timestamp
//! value.push(2); // DELETE_PARTITION_FINISHED
//! value.push(0); // tagged fields
//! let RemoteLogMetadataRecord::PartitionDelete(d) = decode(&value).unwrap() else { panic!() };
//! assert_eq!((d.partition.topic.as_str(), d.partition.partition), ("t", 3));
//! ```

use crate::value::Node;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use std::collections::BTreeMap;
use std::fmt;

/// Kafka's `TopicIdPartition`: a topic's id, name and a partition number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicIdPartition {
    /// The topic id (a Kafka `Uuid`).
    pub topic_id: [u8; 16],
    /// The topic name.
    pub topic: String,
    /// The partition number.
    pub partition: i32,
}

impl fmt::Display for TopicIdPartition {
    /// `TopicIdPartition.toString()`: `topicId:topic-partition`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}-{}",
            URL_SAFE_NO_PAD.encode(self.topic_id),
            self.topic,
            self.partition
        )
    }
}

/// Kafka's `RemoteLogSegmentId`: the partition and the segment's own id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RemoteLogSegmentId {
    /// The partition the segment belongs to.
    pub partition: TopicIdPartition,
    /// The segment id (a Kafka `Uuid`).
    pub id: [u8; 16],
}

impl RemoteLogSegmentId {
    /// The segment id in Kafka's string form (22 characters of base64url).
    pub fn id_string(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.id)
    }
}

/// Kafka's `RemoteLogSegmentState`, by its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RemoteLogSegmentState {
    /// 0: the copy to the remote tier started.
    CopySegmentStarted,
    /// 1: the copy finished; the segment is readable remotely.
    CopySegmentFinished,
    /// 2: deletion started.
    DeleteSegmentStarted,
    /// 3: deletion finished; the segment no longer exists.
    DeleteSegmentFinished,
}

impl RemoteLogSegmentState {
    /// The state of a record's `RemoteLogSegmentState` byte.
    pub fn from_id(id: i64) -> Option<RemoteLogSegmentState> {
        Some(match id {
            0 => RemoteLogSegmentState::CopySegmentStarted,
            1 => RemoteLogSegmentState::CopySegmentFinished,
            2 => RemoteLogSegmentState::DeleteSegmentStarted,
            3 => RemoteLogSegmentState::DeleteSegmentFinished,
            _ => return None,
        })
    }

    /// The Java constant's name (`COPY_SEGMENT_STARTED`, ...).
    pub fn name(self) -> &'static str {
        match self {
            RemoteLogSegmentState::CopySegmentStarted => "COPY_SEGMENT_STARTED",
            RemoteLogSegmentState::CopySegmentFinished => "COPY_SEGMENT_FINISHED",
            RemoteLogSegmentState::DeleteSegmentStarted => "DELETE_SEGMENT_STARTED",
            RemoteLogSegmentState::DeleteSegmentFinished => "DELETE_SEGMENT_FINISHED",
        }
    }

    /// `RemoteLogSegmentState.isValidTransition`: from no state only to COPY_SEGMENT_STARTED;
    /// a state to itself (retries); COPY_SEGMENT_STARTED to COPY_SEGMENT_FINISHED or
    /// DELETE_SEGMENT_STARTED; COPY_SEGMENT_FINISHED to DELETE_SEGMENT_STARTED;
    /// DELETE_SEGMENT_STARTED to DELETE_SEGMENT_FINISHED.
    pub fn is_valid_transition(
        from: Option<RemoteLogSegmentState>,
        to: RemoteLogSegmentState,
    ) -> bool {
        use RemoteLogSegmentState::*;
        match from {
            None => to == CopySegmentStarted,
            Some(f) if f == to => true,
            Some(CopySegmentStarted) => matches!(to, CopySegmentFinished | DeleteSegmentStarted),
            Some(CopySegmentFinished) => to == DeleteSegmentStarted,
            Some(DeleteSegmentStarted) => to == DeleteSegmentFinished,
            Some(DeleteSegmentFinished) => false,
        }
    }
}

impl fmt::Display for RemoteLogSegmentState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Kafka's `RemotePartitionDeleteState`, by its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemotePartitionDeleteState {
    /// 0: the partition is marked for deletion.
    DeletePartitionMarked,
    /// 1: deletion of its remote segments started.
    DeletePartitionStarted,
    /// 2: every remote segment of the partition is deleted.
    DeletePartitionFinished,
}

/// What a segment record says of its segment (the fields `RemoteLogSegmentMetadata` and
/// `RemoteLogSegmentMetadataSnapshot` share).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentFacts {
    /// Its first offset.
    pub start_offset: i64,
    /// Its last offset (inclusive).
    pub end_offset: i64,
    /// The broker that wrote the event.
    pub broker_id: i32,
    /// The largest record timestamp in the segment.
    pub max_timestamp_ms: i64,
    /// When the event was written.
    pub event_timestamp_ms: i64,
    /// Leader epoch to the first offset of that epoch in the segment (never empty).
    pub segment_leader_epochs: BTreeMap<i32, i64>,
    /// The segment's size in bytes.
    pub segment_size_in_bytes: i32,
    /// The RemoteStorageManager's custom metadata, when any.
    pub custom_metadata: Option<Vec<u8>>,
    /// The state.
    pub state: RemoteLogSegmentState,
    /// Whether the segment's transaction index is empty.
    pub txn_index_empty: bool,
}

/// `RemoteLogSegmentMetadata` (record type 0): a segment's copy starting (state
/// COPY_SEGMENT_STARTED in the records a broker writes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLogSegmentMetadata {
    /// The segment.
    pub segment_id: RemoteLogSegmentId,
    /// The rest of the record.
    pub facts: SegmentFacts,
}

/// `RemoteLogSegmentMetadataUpdate` (record type 1): a segment's state transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLogSegmentMetadataUpdate {
    /// The segment.
    pub segment_id: RemoteLogSegmentId,
    /// The RemoteStorageManager's custom metadata, when any.
    pub custom_metadata: Option<Vec<u8>>,
    /// The new state.
    pub state: RemoteLogSegmentState,
    /// When the event was written.
    pub event_timestamp_ms: i64,
    /// The broker that wrote the event.
    pub broker_id: i32,
}

/// `RemotePartitionDeleteMetadata` (record type 2): a partition's deletion state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotePartitionDeleteMetadata {
    /// The partition.
    pub partition: TopicIdPartition,
    /// The state.
    pub state: RemotePartitionDeleteState,
    /// When the event was written.
    pub event_timestamp_ms: i64,
    /// The broker that wrote the event.
    pub broker_id: i32,
}

/// `RemoteLogSegmentMetadataSnapshot` (record type 3): a segment as the file-based snapshot of
/// the metadata cache holds it (no partition: the snapshot file is per partition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLogSegmentMetadataSnapshot {
    /// The segment id (a Kafka `Uuid`).
    pub segment_id: [u8; 16],
    /// The rest of the record.
    pub facts: SegmentFacts,
}

/// One `__remote_log_metadata` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteLogMetadataRecord {
    /// Record type 0.
    Segment(RemoteLogSegmentMetadata),
    /// Record type 1.
    Update(RemoteLogSegmentMetadataUpdate),
    /// Record type 2.
    PartitionDelete(RemotePartitionDeleteMetadata),
    /// Record type 3.
    Snapshot(RemoteLogSegmentMetadataSnapshot),
}

/// Decodes one `__remote_log_metadata` value.
///
/// # Errors
///
/// Kafka's message for bytes that do not parse (unknown frame version or apiKey, garbage after
/// the record) or for a record its Java class refuses (unknown state, no leader epochs, a
/// negative start offset, an end before the start).
pub fn decode(value: &[u8]) -> Result<RemoteLogMetadataRecord, String> {
    let r = crate::registry();
    let (api_key, _, _, data) = crate::api_message_and_version(&r.remote, value)?;
    Ok(match api_key {
        0 => RemoteLogMetadataRecord::Segment(segment(&data)?),
        1 => RemoteLogMetadataRecord::Update(RemoteLogSegmentMetadataUpdate {
            segment_id: segment_id(&data)?,
            custom_metadata: custom(&data),
            state: state(&data)?,
            event_timestamp_ms: int(&data, "eventTimestampMs"),
            broker_id: int32(&data, "brokerId"),
        }),
        2 => {
            let state = match int(&data, "remotePartitionDeleteState") {
                0 => RemotePartitionDeleteState::DeletePartitionMarked,
                1 => RemotePartitionDeleteState::DeletePartitionStarted,
                2 => RemotePartitionDeleteState::DeletePartitionFinished,
                s => return Err(format!("unknown remote partition delete state {s}")),
            };
            RemoteLogMetadataRecord::PartitionDelete(RemotePartitionDeleteMetadata {
                partition: topic_id_partition(data.get("topicIdPartition"))?,
                state,
                event_timestamp_ms: int(&data, "eventTimestampMs"),
                broker_id: int32(&data, "brokerId"),
            })
        }
        3 => RemoteLogMetadataRecord::Snapshot(RemoteLogSegmentMetadataSnapshot {
            segment_id: uuid(data.get("segmentId"), "segmentId")?,
            facts: facts(&data)?,
        }),
        k => return Err(format!("Unknown metadata id {k}")),
    })
}

/// Encodes a record as Kafka's `RemoteLogMetadataSerde` writes it (frame version 1, the apiKey,
/// version 0, the flexible record), for fixtures and tests: [`decode`] reads it back.
pub fn encode(record: &RemoteLogMetadataRecord) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    match record {
        RemoteLogMetadataRecord::Segment(m) => {
            w.0.extend_from_slice(&[1, 0, 0]);
            w.segment_id(&m.segment_id);
            w.facts(&m.facts);
        }
        RemoteLogMetadataRecord::Update(u) => {
            w.0.extend_from_slice(&[1, 1, 0]);
            w.segment_id(&u.segment_id);
            w.0.extend_from_slice(&u.broker_id.to_be_bytes());
            w.0.extend_from_slice(&u.event_timestamp_ms.to_be_bytes());
            w.bytes(u.custom_metadata.as_deref());
            w.0.push(state_id(u.state));
            w.0.push(0);
        }
        RemoteLogMetadataRecord::PartitionDelete(d) => {
            w.0.extend_from_slice(&[1, 2, 0]);
            w.topic_id_partition(&d.partition);
            w.0.extend_from_slice(&d.broker_id.to_be_bytes());
            w.0.extend_from_slice(&d.event_timestamp_ms.to_be_bytes());
            w.0.push(match d.state {
                RemotePartitionDeleteState::DeletePartitionMarked => 0,
                RemotePartitionDeleteState::DeletePartitionStarted => 1,
                RemotePartitionDeleteState::DeletePartitionFinished => 2,
            });
            w.0.push(0);
        }
        RemoteLogMetadataRecord::Snapshot(s) => {
            w.0.extend_from_slice(&[1, 3, 0]);
            w.0.extend_from_slice(&s.segment_id);
            w.facts(&s.facts);
        }
    }
    w.0
}

fn state_id(s: RemoteLogSegmentState) -> u8 {
    match s {
        RemoteLogSegmentState::CopySegmentStarted => 0,
        RemoteLogSegmentState::CopySegmentFinished => 1,
        RemoteLogSegmentState::DeleteSegmentStarted => 2,
        RemoteLogSegmentState::DeleteSegmentFinished => 3,
    }
}

/// The flexible-version writer of [`encode`].
struct Writer(Vec<u8>);

impl Writer {
    fn uvarint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v & 0x7f) as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    /// A compact (nullable) byte string: length + 1, 0 for null.
    fn bytes(&mut self, b: Option<&[u8]>) {
        match b {
            None => self.0.push(0),
            Some(b) => {
                self.uvarint((b.len() as u64).saturating_add(1));
                self.0.extend_from_slice(b);
            }
        }
    }
    fn topic_id_partition(&mut self, t: &TopicIdPartition) {
        self.bytes(Some(t.topic.as_bytes()));
        self.0.extend_from_slice(&t.topic_id);
        self.0.extend_from_slice(&t.partition.to_be_bytes());
        self.0.push(0);
    }
    fn segment_id(&mut self, id: &RemoteLogSegmentId) {
        self.topic_id_partition(&id.partition);
        self.0.extend_from_slice(&id.id);
        self.0.push(0);
    }
    fn facts(&mut self, f: &SegmentFacts) {
        for v in [f.start_offset, f.end_offset] {
            self.0.extend_from_slice(&v.to_be_bytes());
        }
        self.0.extend_from_slice(&f.broker_id.to_be_bytes());
        for v in [f.max_timestamp_ms, f.event_timestamp_ms] {
            self.0.extend_from_slice(&v.to_be_bytes());
        }
        self.uvarint((f.segment_leader_epochs.len() as u64).saturating_add(1));
        for (e, o) in &f.segment_leader_epochs {
            self.0.extend_from_slice(&e.to_be_bytes());
            self.0.extend_from_slice(&o.to_be_bytes());
            self.0.push(0);
        }
        self.0
            .extend_from_slice(&f.segment_size_in_bytes.to_be_bytes());
        self.bytes(f.custom_metadata.as_deref());
        self.0.push(state_id(f.state));
        if f.txn_index_empty {
            // Tagged field 0 (TxnIndexEmpty): one field, tag 0, one byte.
            self.0.extend_from_slice(&[1, 0, 1, 1]);
        } else {
            self.0.push(0);
        }
    }
}

fn int(j: &Node, name: &str) -> i64 {
    j.get(name).and_then(Node::as_int).unwrap_or(0)
}

fn int32(j: &Node, name: &str) -> i32 {
    i32::try_from(int(j, name)).unwrap_or(0)
}

fn uuid(j: Option<&Node>, what: &str) -> Result<[u8; 16], String> {
    j.and_then(Node::as_str)
        .and_then(|s| URL_SAFE_NO_PAD.decode(s).ok())
        .and_then(|b| <[u8; 16]>::try_from(b).ok())
        .ok_or_else(|| format!("{what} is not a uuid"))
}

fn topic_id_partition(j: Option<&Node>) -> Result<TopicIdPartition, String> {
    let j = j.ok_or("topicIdPartition can not be null")?;
    Ok(TopicIdPartition {
        topic_id: uuid(j.get("id"), "topicIdPartition.id")?,
        topic: j
            .get("name")
            .and_then(Node::as_str)
            .ok_or("topicIdPartition.name can not be null")?
            .to_string(),
        partition: int32(j, "partition"),
    })
}

fn segment_id(j: &Node) -> Result<RemoteLogSegmentId, String> {
    let id = j
        .get("remoteLogSegmentId")
        .ok_or("remoteLogSegmentId can not be null")?;
    Ok(RemoteLogSegmentId {
        partition: topic_id_partition(id.get("topicIdPartition"))?,
        id: uuid(id.get("id"), "remoteLogSegmentId.id")?,
    })
}

fn custom(j: &Node) -> Option<Vec<u8>> {
    match j.get("customMetadata") {
        Some(Node::Bin(b)) => Some(b.clone()),
        _ => None,
    }
}

fn state(j: &Node) -> Result<RemoteLogSegmentState, String> {
    RemoteLogSegmentState::from_id(int(j, "remoteLogSegmentState"))
        .ok_or_else(|| "state can not be null".to_string())
}

fn txn_index_empty(j: &Node) -> bool {
    matches!(j.get("txnIndexEmpty"), Some(Node::Bool(true)))
}

/// The leader epochs as the constructors' `TreeMap` (a repeated epoch keeps its last offset).
fn epochs(j: &Node) -> Result<BTreeMap<i32, i64>, String> {
    let mut m = BTreeMap::new();
    if let Some(Node::Arr(a)) = j.get("segmentLeaderEpochs") {
        for e in a {
            m.insert(int32(e, "leaderEpoch"), int(e, "offset"));
        }
    }
    if m.is_empty() {
        return Err("segmentLeaderEpochs can not be null or empty".into());
    }
    Ok(m)
}

/// Start and end offsets with `RemoteLogSegmentMetadata`'s checks.
pub(crate) fn offsets(j: &Node) -> Result<(i64, i64), String> {
    let (start, end) = (int(j, "startOffset"), int(j, "endOffset"));
    if start < 0 {
        return Err(format!(
            "Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative"
        ));
    }
    if end < start {
        return Err(format!("Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than startOffset = {start}"));
    }
    Ok((start, end))
}

fn facts(j: &Node) -> Result<SegmentFacts, String> {
    let state = state(j)?;
    let (start_offset, end_offset) = offsets(j)?;
    Ok(SegmentFacts {
        start_offset,
        end_offset,
        broker_id: int32(j, "brokerId"),
        max_timestamp_ms: int(j, "maxTimestampMs"),
        event_timestamp_ms: int(j, "eventTimestampMs"),
        segment_leader_epochs: epochs(j)?,
        segment_size_in_bytes: int32(j, "segmentSizeInBytes"),
        custom_metadata: custom(j),
        state,
        txn_index_empty: txn_index_empty(j),
    })
}

fn segment(j: &Node) -> Result<RemoteLogSegmentMetadata, String> {
    let facts = facts(j)?;
    Ok(RemoteLogSegmentMetadata {
        segment_id: segment_id(j)?,
        facts,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn transitions_as_kafka() {
        use RemoteLogSegmentState::*;
        let all = [
            CopySegmentStarted,
            CopySegmentFinished,
            DeleteSegmentStarted,
            DeleteSegmentFinished,
        ];
        let valid: Vec<(Option<RemoteLogSegmentState>, RemoteLogSegmentState)> = [None]
            .into_iter()
            .chain(all.map(Some))
            .flat_map(|f| all.map(|t| (f, t)))
            .filter(|(f, t)| RemoteLogSegmentState::is_valid_transition(*f, *t))
            .collect();
        assert_eq!(
            valid,
            [
                (None, CopySegmentStarted),
                (Some(CopySegmentStarted), CopySegmentStarted),
                (Some(CopySegmentStarted), CopySegmentFinished),
                (Some(CopySegmentStarted), DeleteSegmentStarted),
                (Some(CopySegmentFinished), CopySegmentFinished),
                (Some(CopySegmentFinished), DeleteSegmentStarted),
                (Some(DeleteSegmentStarted), DeleteSegmentStarted),
                (Some(DeleteSegmentStarted), DeleteSegmentFinished),
                (Some(DeleteSegmentFinished), DeleteSegmentFinished),
            ]
        );
    }

    fn facts_strategy() -> impl proptest::strategy::Strategy<Value = SegmentFacts> {
        use proptest::prelude::*;
        (
            0i64..1 << 40,
            0i64..1 << 20,
            any::<i32>(),
            any::<(i64, i64)>(),
            proptest::collection::btree_map(any::<i32>(), any::<i64>(), 1..5),
            any::<i32>(),
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..20)),
            0i64..4,
            any::<bool>(),
        )
            .prop_map(
                |(start, len, broker, (max, event), epochs, size, custom, state, txn)| {
                    SegmentFacts {
                        start_offset: start,
                        end_offset: start + len,
                        broker_id: broker,
                        max_timestamp_ms: max,
                        event_timestamp_ms: event,
                        segment_leader_epochs: epochs,
                        segment_size_in_bytes: size,
                        custom_metadata: custom,
                        state: RemoteLogSegmentState::from_id(state).unwrap(),
                        txn_index_empty: txn,
                    }
                },
            )
    }

    proptest::proptest! {
        /// Every record encodes to bytes that decode to it, and that the text decoder shows.
        #[test]
        fn records_round_trip(
            facts in facts_strategy(),
            topic in "[a-z_.-]{1,20}",
            ids in proptest::prelude::any::<([u8; 16], [u8; 16])>(),
            partition in 0i32..1000,
            kind in 0u8..4,
        ) {
            let segment_id = RemoteLogSegmentId {
                partition: TopicIdPartition { topic_id: ids.0, topic, partition },
                id: ids.1,
            };
            let record = match kind {
                0 => RemoteLogMetadataRecord::Segment(RemoteLogSegmentMetadata {
                    segment_id,
                    facts: facts.clone(),
                }),
                1 => RemoteLogMetadataRecord::Update(RemoteLogSegmentMetadataUpdate {
                    segment_id,
                    custom_metadata: facts.custom_metadata.clone(),
                    state: facts.state,
                    event_timestamp_ms: facts.event_timestamp_ms,
                    broker_id: facts.broker_id,
                }),
                2 => RemoteLogMetadataRecord::PartitionDelete(RemotePartitionDeleteMetadata {
                    partition: segment_id.partition,
                    state: RemotePartitionDeleteState::DeletePartitionStarted,
                    event_timestamp_ms: facts.event_timestamp_ms,
                    broker_id: facts.broker_id,
                }),
                _ => RemoteLogMetadataRecord::Snapshot(RemoteLogSegmentMetadataSnapshot {
                    segment_id: segment_id.id,
                    facts: facts.clone(),
                }),
            };
            let bytes = encode(&record);
            proptest::prop_assert_eq!(decode(&bytes), Ok(record));
            let text = crate::parse(crate::Kind::RemoteLogMetadata, None, Some(&bytes), 0);
            proptest::prop_assert!(matches!(text.payload, Some(crate::Part::Text(..))));
        }

        /// Any bytes after a valid frame prefix decode or give an error, never a panic, and a
        /// value that decodes typed is one the text decoder shows without an error.
        #[test]
        fn any_bytes_decode_or_fail_as_the_text_decoder(
            api in 0u8..5,
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..96),
        ) {
            let value = [&[1, api, 0][..], &body].concat();
            let typed = decode(&value);
            let text = crate::parse(crate::Kind::RemoteLogMetadata, None, Some(&value), 0);
            if typed.is_ok() {
                proptest::prop_assert!(matches!(text.payload, Some(crate::Part::Text(..))));
            }
        }
    }
}
