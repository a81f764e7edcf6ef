//! The segment manifest (`.rsm-manifest`), the JSON the plugin's Jackson mapper writes for a
//! `SegmentManifestV1` (plugin: `core/.../manifest/SegmentManifestV1.java`,
//! `manifest/serde/*.java`):
//!
//! ```json
//! {"version":"1",
//!  "chunkIndex":{"type":"fixed","originalChunkSize":100,"originalFileSize":1000,
//!                "transformedChunkSize":110,"finalTransformedChunkSize":110},
//!  "segmentIndexes":{"offset":{"position":0,"size":1},"timestamp":{"position":1,"size":1},
//!                    "producerSnapshot":{"position":2,"size":1},"leaderEpoch":{"position":3,"size":1},
//!                    "transaction":{"position":4,"size":1}},
//!  "compression":false,
//!  "encryption":{"dataKey":"<key pair id>:<base64 RSA-wrapped key>","aad":"<base64>"},
//!  "remoteLogSegmentMetadata":{"remoteLogSegmentId":{"topicIdPartition":{"topicId":"…",
//!      "topicPartition":{"topic":"t","partition":42}},"id":"…"},"startOffset":0,"endOffset":1000,
//!      "maxTimestampMs":…,"brokerId":2,"eventTimestampMs":…,"segmentLeaderEpochs":{"0":100}}}
//! ```
//!
//! `encryption` is absent without encryption; `transaction` is `null` when the segment had no
//! transaction index; `remoteLogSegmentMetadata` is written but never read back by the plugin
//! (read here when present). A variable index has `"type":"variable"` and `transformedChunks`
//! instead of the two sizes (see [`crate::chunk_index`]).

use std::collections::BTreeMap;

use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::chunk_index::{decode_transformed_chunks, encode_transformed_chunks, ChunkIndex, ChunkSizes, BASE64, MAX_ENCODED_CHUNK_SIZES};
use crate::error::{manifest, Result};
use crate::key::KafkaUuid;

/// The five indexes of a segment, in their order in the `.indexes` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IndexType {
    /// `offset`: the `.index` file.
    Offset,
    /// `timestamp`: the `.timeindex` file.
    Timestamp,
    /// `producerSnapshot`: the `.snapshot` file.
    ProducerSnapshot,
    /// `leaderEpoch`: the leader epoch checkpoint for the segment.
    LeaderEpoch,
    /// `transaction`: the `.txnindex` file, when the segment has one.
    Transaction,
}

impl IndexType {
    /// All index types, in upload order.
    pub const ALL: [IndexType; 5] = [
        IndexType::Offset,
        IndexType::Timestamp,
        IndexType::ProducerSnapshot,
        IndexType::LeaderEpoch,
        IndexType::Transaction,
    ];

    /// The manifest's field name.
    pub fn field(self) -> &'static str {
        match self {
            IndexType::Offset => "offset",
            IndexType::Timestamp => "timestamp",
            IndexType::ProducerSnapshot => "producerSnapshot",
            IndexType::LeaderEpoch => "leaderEpoch",
            IndexType::Transaction => "transaction",
        }
    }
}

/// Where one index lies in the `.indexes` object (`SegmentIndexV1`): its transformed bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexSlice {
    /// `position`: the first byte in the object.
    pub position: u32,
    /// `size`: transformed bytes (with IV and tag when encrypted); 0 for an empty index.
    pub size: u32,
}

impl IndexSlice {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        u64::from(self.position).saturating_add(u64::from(self.size))
    }
}

/// The slices of the `.indexes` object (`SegmentIndexesV1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentIndexes {
    /// `offset`.
    pub offset: IndexSlice,
    /// `timestamp`.
    pub timestamp: IndexSlice,
    /// `producerSnapshot`.
    pub producer_snapshot: IndexSlice,
    /// `leaderEpoch`.
    pub leader_epoch: IndexSlice,
    /// `transaction`: `None` when null or absent.
    pub transaction: Option<IndexSlice>,
}

impl SegmentIndexes {
    /// The slice of one index.
    pub fn get(&self, index: IndexType) -> Option<IndexSlice> {
        match index {
            IndexType::Offset => Some(self.offset),
            IndexType::Timestamp => Some(self.timestamp),
            IndexType::ProducerSnapshot => Some(self.producer_snapshot),
            IndexType::LeaderEpoch => Some(self.leader_epoch),
            IndexType::Transaction => self.transaction,
        }
    }

    /// The size the `.indexes` object must have: the end of the last slice.
    pub fn total_size(&self) -> u64 {
        IndexType::ALL
            .iter()
            .filter_map(|t| self.get(*t))
            .map(|s| s.end())
            .max()
            .unwrap_or(0)
    }
}

/// The `encryption` field (`SegmentEncryptionMetadataV1`), the data key still wrapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncryptionMetadata {
    /// The key pair id before the `:` of `dataKey`.
    pub key_id: String,
    /// The RSA-wrapped data key: the base64 after the `:`, decoded.
    pub wrapped_data_key: Vec<u8>,
    /// `aad`, decoded (32 bytes as the plugin makes it).
    pub aad: Vec<u8>,
}

/// The `remoteLogSegmentMetadata` field: Kafka's `RemoteLogSegmentMetadata`, as the plugin's
/// `KafkaTypeSerdeModule` writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLogSegmentMetadata {
    /// `remoteLogSegmentId.topicIdPartition.topicId`.
    pub topic_id: KafkaUuid,
    /// `remoteLogSegmentId.topicIdPartition.topicPartition.topic`.
    pub topic: String,
    /// `remoteLogSegmentId.topicIdPartition.topicPartition.partition`.
    pub partition: i32,
    /// `remoteLogSegmentId.id`.
    pub segment_id: KafkaUuid,
    /// `startOffset`.
    pub start_offset: i64,
    /// `endOffset` (inclusive).
    pub end_offset: i64,
    /// `maxTimestampMs`.
    pub max_timestamp_ms: i64,
    /// `brokerId`.
    pub broker_id: i32,
    /// `eventTimestampMs`.
    pub event_timestamp_ms: i64,
    /// `segmentLeaderEpochs`: leader epoch to its start offset.
    pub segment_leader_epochs: BTreeMap<i32, i64>,
}

/// A parsed and validated manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentManifest {
    /// `chunkIndex`.
    pub chunk_index: ChunkIndex,
    /// `segmentIndexes`.
    pub segment_indexes: SegmentIndexes,
    /// `compression`: whether each chunk of the `.log` is a zstd frame.
    pub compression: bool,
    /// `encryption`, when the segment is encrypted.
    pub encryption: Option<EncryptionMetadata>,
    /// `remoteLogSegmentMetadata`, when present.
    pub remote_log_segment_metadata: Option<RemoteLogSegmentMetadata>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawManifest {
    version: Option<Value>,
    chunk_index: Option<RawChunkIndex>,
    segment_indexes: Option<RawIndexes>,
    compression: Option<bool>,
    encryption: Option<RawEncryption>,
    remote_log_segment_metadata: Option<RawRlsm>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawChunkIndex {
    #[serde(rename = "type")]
    kind: Option<String>,
    original_chunk_size: Option<i64>,
    original_file_size: Option<i64>,
    transformed_chunk_size: Option<i64>,
    final_transformed_chunk_size: Option<i64>,
    transformed_chunks: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawIndexes {
    offset: Option<RawSlice>,
    timestamp: Option<RawSlice>,
    producer_snapshot: Option<RawSlice>,
    leader_epoch: Option<RawSlice>,
    transaction: Option<RawSlice>,
}

#[derive(Deserialize)]
struct RawSlice {
    position: Option<i64>,
    size: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEncryption {
    data_key: Option<String>,
    aad: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRlsm {
    remote_log_segment_id: RawSegmentId,
    start_offset: i64,
    end_offset: i64,
    max_timestamp_ms: i64,
    broker_id: i32,
    event_timestamp_ms: i64,
    #[serde(default)]
    segment_leader_epochs: BTreeMap<String, i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSegmentId {
    topic_id_partition: RawTopicIdPartition,
    id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTopicIdPartition {
    topic_id: String,
    topic_partition: RawTopicPartition,
}

#[derive(Deserialize)]
struct RawTopicPartition {
    topic: String,
    partition: i32,
}

fn required<T>(v: Option<T>, field: &str) -> Result<T> {
    v.ok_or_else(|| manifest(field, "missing"))
}

fn int(v: Option<i64>, field: &str) -> Result<u32> {
    let v = required(v, field)?;
    u32::try_from(v)
        .ok()
        .filter(|u| i32::try_from(*u).is_ok())
        .ok_or_else(|| manifest(field, format!("{v} is not a non-negative int")))
}

fn slice(v: Option<RawSlice>, field: &str) -> Result<IndexSlice> {
    let s = required(v, field)?;
    Ok(IndexSlice {
        position: int(s.position, &format!("{field}.position"))?,
        size: int(s.size, &format!("{field}.size"))?,
    })
}

impl SegmentManifest {
    /// Parses and validates a manifest. The encoded variable index is decoded (at most
    /// [`MAX_ENCODED_CHUNK_SIZES`] bytes, as the plugin allows); the data key stays wrapped.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Manifest`] naming the field, or [`crate::Error::ChunkIndex`].
    pub fn parse(json: &[u8]) -> Result<SegmentManifest> {
        SegmentManifest::parse_with_limit(json, MAX_ENCODED_CHUNK_SIZES)
    }

    /// [`SegmentManifest::parse`] with a lower cap on the decoded `transformedChunks` list.
    /// The parsed index holds 12 bytes per chunk, and a list of `limit` bytes holds at most
    /// `limit` chunk sizes (one byte each), so memory stays under `12 * limit` plus the JSON.
    ///
    /// # Errors
    ///
    /// As [`SegmentManifest::parse`].
    pub fn parse_with_limit(json: &[u8], limit: usize) -> Result<SegmentManifest> {
        let raw: RawManifest =
            serde_json::from_slice(json).map_err(|e| manifest("(document)", format!("not a manifest: {e}")))?;
        match raw.version {
            Some(Value::String(v)) if v == "1" => {}
            Some(other) => return Err(manifest("version", format!("{other} is not \"1\""))),
            None => return Err(manifest("version", "missing")),
        }
        let ci = required(raw.chunk_index, "chunkIndex")?;
        let sizes = match ci.kind.as_deref() {
            Some("fixed") => ChunkSizes::Fixed {
                transformed_chunk_size: int(ci.transformed_chunk_size, "chunkIndex.transformedChunkSize")?,
                final_transformed_chunk_size: int(
                    ci.final_transformed_chunk_size,
                    "chunkIndex.finalTransformedChunkSize",
                )?,
            },
            Some("variable") => {
                let text = required(ci.transformed_chunks, "chunkIndex.transformedChunks")?;
                ChunkSizes::Variable(decode_transformed_chunks(&text, limit)?)
            }
            Some(other) => return Err(manifest("chunkIndex.type", format!("unknown type {other:?}"))),
            None => return Err(manifest("chunkIndex.type", "missing")),
        };
        let chunk_index = ChunkIndex::new(
            required(ci.original_chunk_size, "chunkIndex.originalChunkSize")?,
            required(ci.original_file_size, "chunkIndex.originalFileSize")?,
            sizes,
        )?;
        let si = required(raw.segment_indexes, "segmentIndexes")?;
        let segment_indexes = SegmentIndexes {
            offset: slice(si.offset, "segmentIndexes.offset")?,
            timestamp: slice(si.timestamp, "segmentIndexes.timestamp")?,
            producer_snapshot: slice(si.producer_snapshot, "segmentIndexes.producerSnapshot")?,
            leader_epoch: slice(si.leader_epoch, "segmentIndexes.leaderEpoch")?,
            transaction: si
                .transaction
                .map(|s| slice(Some(s), "segmentIndexes.transaction"))
                .transpose()?,
        };
        let compression = required(raw.compression, "compression")?;
        let encryption = raw.encryption.map(parse_encryption).transpose()?;
        let remote_log_segment_metadata = raw.remote_log_segment_metadata.map(parse_rlsm).transpose()?;
        Ok(SegmentManifest {
            chunk_index,
            segment_indexes,
            compression,
            encryption,
            remote_log_segment_metadata,
        })
    }

    /// Writes the manifest as the plugin's mapper does (same fields, same order), with
    /// `dataKey` as `<key id>:<base64 wrapped key>`. For tests and fixtures.
    ///
    /// # Errors
    ///
    /// [`crate::Error::ChunkIndex`] if a variable index cannot be encoded.
    pub fn to_json(&self) -> Result<String> {
        let ci = &self.chunk_index;
        let chunk_index = match ci.sizes() {
            ChunkSizes::Fixed {
                transformed_chunk_size,
                final_transformed_chunk_size,
            } => json!({
                "type": "fixed",
                "originalChunkSize": ci.original_chunk_size(),
                "originalFileSize": ci.original_file_size(),
                "transformedChunkSize": transformed_chunk_size,
                "finalTransformedChunkSize": final_transformed_chunk_size,
            }),
            ChunkSizes::Variable(sizes) => json!({
                "type": "variable",
                "originalChunkSize": ci.original_chunk_size(),
                "originalFileSize": ci.original_file_size(),
                "transformedChunks": encode_transformed_chunks(sizes)?,
            }),
        };
        let slice = |s: Option<IndexSlice>| match s {
            Some(s) => json!({"position": s.position, "size": s.size}),
            None => Value::Null,
        };
        let si = &self.segment_indexes;
        let mut doc = serde_json::Map::new();
        doc.insert("version".into(), json!("1"));
        doc.insert("chunkIndex".into(), chunk_index);
        doc.insert(
            "segmentIndexes".into(),
            json!({
                "offset": slice(Some(si.offset)),
                "timestamp": slice(Some(si.timestamp)),
                "producerSnapshot": slice(Some(si.producer_snapshot)),
                "leaderEpoch": slice(Some(si.leader_epoch)),
                "transaction": slice(si.transaction),
            }),
        );
        doc.insert("compression".into(), json!(self.compression));
        let std = base64::engine::general_purpose::STANDARD;
        if let Some(e) = &self.encryption {
            doc.insert(
                "encryption".into(),
                json!({
                    "dataKey": format!("{}:{}", e.key_id, std.encode(&e.wrapped_data_key)),
                    "aad": std.encode(&e.aad),
                }),
            );
        }
        if let Some(m) = &self.remote_log_segment_metadata {
            let epochs: serde_json::Map<String, Value> = m
                .segment_leader_epochs
                .iter()
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect();
            doc.insert(
                "remoteLogSegmentMetadata".into(),
                json!({
                    "remoteLogSegmentId": {
                        "topicIdPartition": {
                            "topicId": m.topic_id.to_string(),
                            "topicPartition": {"topic": m.topic, "partition": m.partition},
                        },
                        "id": m.segment_id.to_string(),
                    },
                    "startOffset": m.start_offset,
                    "endOffset": m.end_offset,
                    "maxTimestampMs": m.max_timestamp_ms,
                    "brokerId": m.broker_id,
                    "eventTimestampMs": m.event_timestamp_ms,
                    "segmentLeaderEpochs": epochs,
                }),
            );
        }
        Ok(Value::Object(doc).to_string())
    }
}

/// `EncryptedDataKey.parse`: exactly one `:`, a non-blank id, non-empty base64.
fn parse_encryption(raw: RawEncryption) -> Result<EncryptionMetadata> {
    let text = required(raw.data_key, "encryption.dataKey")?;
    let bad = || manifest("encryption.dataKey", "not <key pair id>:<base64 wrapped key>");
    let (id, b64) = text.split_once(':').ok_or_else(bad)?;
    if b64.contains(':') || id.trim().is_empty() {
        return Err(bad());
    }
    let wrapped_data_key = BASE64.decode(b64).map_err(|_| bad())?;
    if wrapped_data_key.is_empty() {
        return Err(bad());
    }
    let aad_text = required(raw.aad, "encryption.aad")?;
    let aad = BASE64
        .decode(aad_text)
        .map_err(|_| manifest("encryption.aad", "not base64"))?;
    Ok(EncryptionMetadata {
        key_id: id.to_string(),
        wrapped_data_key,
        aad,
    })
}

fn parse_rlsm(raw: RawRlsm) -> Result<RemoteLogSegmentMetadata> {
    let field = "remoteLogSegmentMetadata";
    let id = raw.remote_log_segment_id;
    let uuid = |s: &str, name: &str| {
        KafkaUuid::parse(s).map_err(|_| manifest(&format!("{field}.{name}"), format!("{s:?} is not a Kafka uuid")))
    };
    let mut epochs = BTreeMap::new();
    for (k, v) in raw.segment_leader_epochs {
        let epoch: i32 = k
            .parse()
            .map_err(|_| manifest(&format!("{field}.segmentLeaderEpochs"), format!("key {k:?} is not an int")))?;
        epochs.insert(epoch, v);
    }
    Ok(RemoteLogSegmentMetadata {
        topic_id: uuid(&id.topic_id_partition.topic_id, "remoteLogSegmentId.topicIdPartition.topicId")?,
        topic: id.topic_id_partition.topic_partition.topic,
        partition: id.topic_id_partition.topic_partition.partition,
        segment_id: uuid(&id.id, "remoteLogSegmentId.id")?,
        start_offset: raw.start_offset,
        end_offset: raw.end_offset,
        max_timestamp_ms: raw.max_timestamp_ms,
        broker_id: raw.broker_id,
        event_timestamp_ms: raw.event_timestamp_ms,
        segment_leader_epochs: epochs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use proptest::prelude::*;

    /// `SegmentManifestV1SerdeTest.WITHOUT_ENCRYPTION_JSON` of the plugin.
    const PLUGIN_JSON: &str = concat!(
        r#"{"version":"1","chunkIndex":{"type":"fixed","originalChunkSize":100,"#,
        r#""originalFileSize":1000,"transformedChunkSize":110,"finalTransformedChunkSize":110},"#,
        r#""segmentIndexes":{"offset":{"position":0,"size":1},"timestamp":{"position":1,"size":1},"#,
        r#""producerSnapshot":{"position":2,"size":1},"leaderEpoch":{"position":3,"size":1},"#,
        r#""transaction":{"position":4,"size":1}},"compression":false,"remoteLogSegmentMetadata":"#,
        r#"{"remoteLogSegmentId":{"topicIdPartition":{"topicId":"lZ6vvmajTWKDBUTV6SQAtQ","topicPartition":"#,
        r#"{"topic":"topic1","partition":42}},"id":"adh9f8BMS4anaUnD8KWfWg"},"startOffset":0,"endOffset":1000,"#,
        r#""maxTimestampMs":1000000000,"brokerId":2,"eventTimestampMs":2000000000,"#,
        r#""segmentLeaderEpochs":{"0":100,"1":200,"2":300}}}"#
    );

    #[test]
    fn parses_the_plugins_test_manifest_and_writes_it_back_identically() {
        let m = SegmentManifest::parse(PLUGIN_JSON.as_bytes()).unwrap();
        assert_eq!(m.chunk_index.chunk_count(), 10);
        assert_eq!(m.chunk_index.transformed_size(), 1100);
        assert_eq!(m.segment_indexes.transaction, Some(IndexSlice { position: 4, size: 1 }));
        assert_eq!(m.segment_indexes.total_size(), 5);
        assert!(!m.compression && m.encryption.is_none());
        let rlsm = m.remote_log_segment_metadata.as_ref().unwrap();
        assert_eq!((rlsm.topic.as_str(), rlsm.partition, rlsm.end_offset), ("topic1", 42, 1000));
        assert_eq!(rlsm.segment_id.to_string(), "adh9f8BMS4anaUnD8KWfWg");
        assert_eq!(rlsm.segment_leader_epochs.get(&2), Some(&300));
        assert_eq!(m.to_json().unwrap(), PLUGIN_JSON);
    }

    #[test]
    fn null_transaction_index_and_encryption() {
        let text = PLUGIN_JSON
            .replace(r#"{"position":4,"size":1}"#, "null")
            .replace(
                r#""compression":false"#,
                r#""compression":false,"encryption":{"dataKey":"k1:AAEC","aad":"CgsMDQ=="}"#,
            );
        let m = SegmentManifest::parse(text.as_bytes()).unwrap();
        assert_eq!(m.segment_indexes.transaction, None);
        let e = m.encryption.unwrap();
        assert_eq!((e.key_id.as_str(), e.wrapped_data_key.as_slice(), e.aad.as_slice()), ("k1", &[0u8, 1, 2][..], &[10u8, 11, 12, 13][..]));
    }

    #[test]
    fn hostile_manifests_get_clear_errors() {
        let cases = [
            ("originalChunkSize\":100", "originalChunkSize\":0", "chunkIndex.originalChunkSize"),
            ("originalFileSize\":1000", "originalFileSize\":99999999999", "chunkIndex.originalFileSize"),
            ("originalFileSize\":1000", "originalFileSize\":-1", "chunkIndex.originalFileSize"),
            ("\"transformedChunkSize\":110", "\"transformedChunkSize\":-5", "chunkIndex.transformedChunkSize"),
            ("\"type\":\"fixed\"", "\"type\":\"zigzag\"", "chunkIndex.type"),
            ("\"version\":\"1\"", "\"version\":\"2\"", "version"),
            ("\"compression\":false", "\"compression\":null", "compression"),
            ("\"offset\":{\"position\":0,\"size\":1}", "\"offset\":{\"position\":-3,\"size\":1}", "segmentIndexes.offset.position"),
            ("\"topicId\":\"lZ6vvmajTWKDBUTV6SQAtQ\"", "\"topicId\":\"nope\"", "remoteLogSegmentMetadata.remoteLogSegmentId.topicIdPartition.topicId"),
            ("\"compression\":false", "\"compression\":false,\"encryption\":{\"dataKey\":\"k1AAEC\",\"aad\":\"\"}", "encryption.dataKey"),
            ("\"compression\":false", "\"compression\":false,\"encryption\":{\"dataKey\":\":AAEC\",\"aad\":\"\"}", "encryption.dataKey"),
            ("\"compression\":false", "\"compression\":false,\"encryption\":{\"dataKey\":\"a:b:AAEC\",\"aad\":\"\"}", "encryption.dataKey"),
            ("\"compression\":false", "\"compression\":false,\"encryption\":{\"dataKey\":\"k1:AAEC\",\"aad\":\"%%\"}", "encryption.aad"),
        ];
        for (from, to, field) in cases {
            let text = PLUGIN_JSON.replacen(from, to, 1);
            assert_ne!(text, PLUGIN_JSON, "{from}");
            let err = SegmentManifest::parse(text.as_bytes()).unwrap_err();
            assert!(matches!(&err, Error::Manifest { field: f, .. } if f == field), "{to}: {err}");
        }
        for cut in [0, 1, 10, PLUGIN_JSON.len() / 2, PLUGIN_JSON.len() - 1] {
            let err = SegmentManifest::parse(&PLUGIN_JSON.as_bytes()[..cut]).unwrap_err();
            assert!(err.to_string().starts_with("manifest field (document): not a manifest"), "{err}");
        }
    }

    #[test]
    fn variable_index_with_absurd_count() {
        // A two-billion count, zstd-compressed and base64: refused without allocating it.
        let mut raw = i32::MAX.to_be_bytes().to_vec();
        raw.extend([0, 0, 0, 0, 4]);
        let text = base64::engine::general_purpose::STANDARD.encode(zstd::bulk::compress(&raw, 1).unwrap());
        let doc = PLUGIN_JSON.replace(
            r#""type":"fixed","originalChunkSize":100,"originalFileSize":1000,"transformedChunkSize":110,"finalTransformedChunkSize":110"#,
            &format!(r#""type":"variable","originalChunkSize":100,"originalFileSize":1000,"transformedChunks":"{text}""#),
        );
        let err = SegmentManifest::parse(doc.as_bytes()).unwrap_err();
        assert!(matches!(err, Error::ChunkIndex { .. }), "{err}");
    }

    fn arb_manifest() -> impl Strategy<Value = SegmentManifest> {
        let slice = (0u32..1 << 20, 0u32..1 << 20).prop_map(|(position, size)| IndexSlice { position, size });
        (
            1i64..1 << 24,
            0i64..1 << 26,
            any::<bool>(),
            proptest::collection::vec(0u32..1 << 24, 0..5),
            any::<bool>(),
            [slice.clone(), slice.clone(), slice.clone(), slice.clone()],
            proptest::option::of(slice),
            proptest::option::of(("[a-z0-9]{1,8}", proptest::collection::vec(any::<u8>(), 1..64), proptest::collection::vec(any::<u8>(), 0..40))),
        )
            .prop_filter_map("consistent chunk count", |(ocs, ofs, fixed, sizes, compression, s, txn, enc)| {
                let count = usize::try_from((ofs + ocs - 1) / ocs).ok()?;
                let chunk_sizes = if fixed {
                    ChunkSizes::Fixed {
                        transformed_chunk_size: sizes.first().copied().unwrap_or(0),
                        final_transformed_chunk_size: sizes.last().copied().unwrap_or(0),
                    }
                } else {
                    if count > 64 {
                        return None;
                    }
                    ChunkSizes::Variable((0..count).map(|i| sizes.get(i % sizes.len().max(1)).copied().unwrap_or(7)).collect())
                };
                Some(SegmentManifest {
                    chunk_index: ChunkIndex::new(ocs, ofs, chunk_sizes).ok()?,
                    segment_indexes: SegmentIndexes {
                        offset: s[0],
                        timestamp: s[1],
                        producer_snapshot: s[2],
                        leader_epoch: s[3],
                        transaction: txn,
                    },
                    compression,
                    encryption: enc.map(|(key_id, wrapped_data_key, aad)| EncryptionMetadata { key_id, wrapped_data_key, aad }),
                    remote_log_segment_metadata: None,
                })
            })
    }

    proptest! {
        #[test]
        fn manifest_round_trips(m in arb_manifest()) {
            let text = m.to_json().unwrap();
            prop_assert_eq!(SegmentManifest::parse(text.as_bytes()).unwrap(), m);
        }

        #[test]
        fn manifest_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = SegmentManifest::parse(&bytes);
        }

        #[test]
        fn mutated_manifests_never_panic(pos in 0usize..600, byte in any::<u8>()) {
            let mut bytes = PLUGIN_JSON.as_bytes().to_vec();
            let at = pos % bytes.len();
            bytes[at] = byte;
            if let Ok(m) = SegmentManifest::parse(&bytes) {
                let ci = &m.chunk_index;
                prop_assert!(u64::from(ci.chunk_count()) * u64::from(ci.original_chunk_size()) >= u64::from(ci.original_file_size()));
            }
        }
    }
}
