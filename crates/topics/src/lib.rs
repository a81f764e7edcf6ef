//! Kafka's internal topics decoded as Kafka 4.4.0's kafka-dump-log decodes them with
//! `--offsets-decoder`, `--transaction-log-decoder`, `--cluster-metadata-decoder`,
//! `--share-group-state-decoder` and `--remote-log-metadata-decoder`: a record's key and value
//! read with Kafka's own message schemas (the JSON files of Kafka's jars, embedded from
//! `crates/topics/schemas` and interpreted at run time) and shown as Kafka's generated JSON
//! converters write them.
//!
//! - `__consumer_offsets`, `__transaction_state`, `__share_group_state` (coordinator records):
//!   the key is an int16 record type then the key message (the schema whose `apiKey` is that
//!   type), the value an int16 version then the value message; no value is a tombstone
//!   (`<DELETE>`). Text: `key: {"type":"T","data":{...}} payload: {"version":"V","data":{...}}`.
//! - `__cluster_metadata` (segments and `.checkpoint` snapshots): the value is an
//!   ApiMessageAndVersion (unsigned varints: frame version 1, apiKey, version; then the metadata
//!   record). Text: `payload: {"type":"TOPIC_RECORD","version":0,"data":{...}}`, no key.
//! - `__remote_log_metadata`: an ApiMessageAndVersion of kafka-storage's remote log metadata
//!   records, shown as the `toString()` of the Java objects Kafka makes of them.
//!
//! An unknown record type or version, or bytes that do not parse, give Kafka's message for it
//! ("Unknown record type 99 at offset 7, skipping.", "Error at offset 7, skipping. ...").
//!
//! Any bytes give a result, never a panic: every length is checked against the bytes left before
//! anything is allocated, and nesting is bounded.
//!
//! This crate decodes one record at a time. To get committed offsets per group out of a
//! `__consumer_offsets` partition (its segments read at read_committed, truncated tails and
//! corrupt entries reported, tombstones applied), use `krecords_admin::groups::GroupLog`
//! (`replay_dir`) or `describe_root`, which `krec groups` uses.
//!
//! ```
//! use krecords_topics::{parse, Kind};
//! // An OffsetCommitKey (record type 1): group "g", topic "t", partition 0; no value.
//! let key = [0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 0];
//! let decoded = parse(Kind::Offsets, Some(&key), None, 0);
//! let mut text = Vec::new();
//! decoded.write_text(&mut text);
//! assert_eq!(
//!     String::from_utf8(text).unwrap(),
//!     r#" key: {"type":"1","data":{"group":"g","topic":"t","partition":0}} payload: <DELETE>"#
//! );
//! ```

#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

mod remote;
pub mod remote_log_metadata;
mod schema;
mod schema_files;
mod value;

pub use value::Node;

use krecords_codec::varint::read_unsigned_varint;
use schema::Message;
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

/// Which internal topic's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `__consumer_offsets` (kafka-dump-log's `--offsets-decoder`).
    Offsets,
    /// `__transaction_state` (`--transaction-log-decoder`).
    Transactions,
    /// `__cluster_metadata` segments and snapshots (`--cluster-metadata-decoder`).
    Metadata,
    /// `__share_group_state` (`--share-group-state-decoder`).
    ShareState,
    /// `__remote_log_metadata` (`--remote-log-metadata-decoder`).
    RemoteLogMetadata,
}

impl Kind {
    /// Every decoder.
    pub const ALL: [Kind; 5] = [
        Kind::Offsets,
        Kind::Transactions,
        Kind::Metadata,
        Kind::ShareState,
        Kind::RemoteLogMetadata,
    ];

    /// The decoder of an internal topic (`__consumer_offsets`, ...); `None` for any other topic.
    pub fn for_topic(topic: &str) -> Option<Kind> {
        Some(match topic {
            "__consumer_offsets" => Kind::Offsets,
            "__transaction_state" => Kind::Transactions,
            "__cluster_metadata" => Kind::Metadata,
            "__share_group_state" => Kind::ShareState,
            "__remote_log_metadata" => Kind::RemoteLogMetadata,
            _ => return None,
        })
    }

    /// The decoder of a partition directory's topic (`__consumer_offsets-17`).
    pub fn for_partition_dir(name: &str) -> Option<Kind> {
        let (topic, _) = krecords_log::data_dir::parse_partition_dir(name)?;
        Kind::for_topic(topic)
    }

    /// The decoder for a file of a partition directory: its parent directory's topic.
    ///
    /// ```
    /// use krecords_topics::Kind;
    /// use std::path::Path;
    /// let f = Path::new("/var/kafka/__consumer_offsets-17/00000000000000000000.log");
    /// assert_eq!(Kind::for_file(f), Some(Kind::Offsets));
    /// assert_eq!(Kind::for_file(Path::new("t-0/00000000000000000000.log")), None);
    /// ```
    pub fn for_file(path: &Path) -> Option<Kind> {
        Kind::for_partition_dir(path.parent()?.file_name()?.to_str()?)
    }
}

/// A decoded key or value.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// The message as JSON.
    Json(Node),
    /// No value: a coordinator tombstone (`<DELETE>`).
    Tombstone,
    /// What Kafka prints instead (unknown type, parse error).
    Error(String),
    /// A message Kafka prints as its Java object's `toString()` (remote log metadata): the
    /// message as JSON for krec's JSON Lines, and Kafka's text.
    Text(Node, String),
}

impl Part {
    /// The decoded message's tree (of [`Part::Json`] and [`Part::Text`]).
    pub fn node(&self) -> Option<&Node> {
        match self {
            Part::Json(j) | Part::Text(j, _) => Some(j),
            Part::Tombstone | Part::Error(_) => None,
        }
    }

    /// The message's fields: the `data` of the tree (`{"type":..,"data":{..}}`).
    pub fn data(&self) -> Option<&Node> {
        self.node()?.get("data")
    }

    /// As kafka-dump-log prints it.
    pub fn to_java(&self) -> String {
        match self {
            Part::Json(j) => j.to_java(),
            Part::Tombstone => "<DELETE>".into(),
            Part::Error(e) => e.clone(),
            Part::Text(_, t) => t.clone(),
        }
    }

    /// As krec's JSON Lines show it: the object, `null` for a tombstone, `{"error": ...}`.
    pub fn to_serde(&self) -> serde_json::Value {
        match self {
            Part::Json(j) => j.to_serde(),
            Part::Tombstone => serde_json::Value::Null,
            Part::Error(e) => serde_json::json!({ "error": e }),
            Part::Text(j, t) => {
                let mut v = j.to_serde();
                if let Some(o) = v.as_object_mut() {
                    o.insert("text".into(), serde_json::Value::String(t.clone()));
                }
                v
            }
        }
    }
}

/// Kafka's `ParseResult`: what is printed after `key:` and `payload:` (nothing when `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// After ` key: `.
    pub key: Option<Part>,
    /// After ` payload: `.
    pub payload: Option<Part>,
}

impl Parsed {
    /// Appends what kafka-dump-log prints after a record's sizes and headers with its decoder:
    /// ` key: K` and ` payload: P`, each only when present.
    pub fn write_text(&self, out: &mut Vec<u8>) {
        for (label, part) in [(&b" key: "[..], &self.key), (b" payload: ", &self.payload)] {
            if let Some(part) = part {
                out.extend_from_slice(label);
                out.extend_from_slice(part.to_java().as_bytes());
            }
        }
    }

    /// Appends the fields krec's JSON Lines add to a record object being written:
    /// `,"key_decoded":K` and `,"value_decoded":V` ([`Part::to_serde`]), each only when present
    /// (absent: Kafka prints nothing there; `null`: a tombstone).
    pub fn write_json_fields(&self, out: &mut Vec<u8>) {
        for (name, part) in [("key_decoded", &self.key), ("value_decoded", &self.payload)] {
            if let Some(part) = part {
                out.extend_from_slice(b",\"");
                out.extend_from_slice(name.as_bytes());
                out.extend_from_slice(b"\":");
                out.extend_from_slice(part.to_serde().to_string().as_bytes());
            }
        }
    }
}

/// The schemas of one coordinator, by record type.
struct Coordinator {
    keys: HashMap<i16, Message>,
    values: HashMap<i16, Message>,
}

struct Registry {
    metadata: HashMap<i16, Message>,
    remote: HashMap<i16, Message>,
    group: Coordinator,
    transaction: Coordinator,
    share: Coordinator,
    subscription: Option<Message>,
    assignment: Option<Message>,
}

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(|| {
        let empty = || Coordinator {
            keys: HashMap::new(),
            values: HashMap::new(),
        };
        let mut r = Registry {
            metadata: HashMap::new(),
            remote: HashMap::new(),
            group: empty(),
            transaction: empty(),
            share: empty(),
            subscription: None,
            assignment: None,
        };
        for (group, file, text) in schema_files::FILES {
            // The embedded schemas are checked by a unit test; one that does not parse is left out.
            let Ok(m) = Message::parse(text) else {
                debug_assert!(false, "schema {group}/{file} does not parse");
                continue;
            };
            let key = m.api_key.unwrap_or(-1);
            let coord = match *group {
                "metadata" => {
                    r.metadata.insert(key, m);
                    continue;
                }
                "remote" => {
                    r.remote.insert(key, m);
                    continue;
                }
                "group" => &mut r.group,
                "transaction" => &mut r.transaction,
                "share" => &mut r.share,
                _ => continue,
            };
            match m.kind.as_str() {
                "coordinator-key" => {
                    coord.keys.insert(key, m);
                }
                "coordinator-value" => {
                    coord.values.insert(key, m);
                }
                _ if m.name == "ConsumerProtocolSubscription" => r.subscription = Some(m),
                _ if m.name == "ConsumerProtocolAssignment" => r.assignment = Some(m),
                _ => {}
            }
        }
        r
    })
}

/// Decodes one record's key and value.
pub fn parse(kind: Kind, key: Option<&[u8]>, value: Option<&[u8]>, offset: i64) -> Parsed {
    let r = registry();
    match kind {
        Kind::Metadata => Parsed {
            key: None,
            payload: Some(metadata(r, value, offset)),
        },
        Kind::Offsets => coordinator(&r.group, kind, key, value, offset),
        Kind::Transactions => coordinator(&r.transaction, kind, key, value, offset),
        Kind::ShareState => coordinator(&r.share, kind, key, value, offset),
        Kind::RemoteLogMetadata => Parsed {
            key: None,
            payload: Some(remote::parse(&r.remote, value, offset)),
        },
    }
}

/// The int16 version (or record type) before a message, and the message's bytes.
fn be16(b: &[u8]) -> Option<(i16, &[u8])> {
    let (v, rest) = b.split_first_chunk::<2>()?;
    Some((i16::from_be_bytes(*v), rest))
}

/// `CoordinatorRecordMessageParser.parse`.
fn coordinator(
    c: &Coordinator,
    kind: Kind,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    offset: i64,
) -> Parsed {
    let fail = |msg: String| Parsed {
        key: Some(Part::Error(msg)),
        payload: None,
    };
    let error = |msg: String| fail(format!("Error at offset {offset}, skipping. {msg}"));
    let Some(key) = key else {
        // kafka-dump-log stops with this exception; krec shows it and goes on.
        return fail(format!("Failed to decode message at offset {offset} using the specified decoder (message had a missing key)"));
    };
    let Some((t, key)) = be16(key) else {
        return error("Could not read version from key's buffer.".into());
    };
    let (Some(km), Some(vm)) = (c.keys.get(&t), c.values.get(&t)) else {
        return fail(format!(
            "Unknown record type {t} at offset {offset}, skipping."
        ));
    };
    let kj = match km.read(key, t) {
        Ok((j, _)) => j,
        Err(e) => {
            return error(format!(
                "Could not read record with version {t} from key's buffer due to: {e}."
            ))
        }
    };
    let key_part = Part::Json(Node::Obj(vec![
        ("type".into(), Node::Str(t.to_string())),
        ("data".into(), kj),
    ]));
    let Some(value) = value else {
        return Parsed {
            key: Some(key_part),
            payload: Some(Part::Tombstone),
        };
    };
    let Some((v, value)) = be16(value) else {
        return error("Could not read version from value's buffer.".into());
    };
    if !vm.valid.contains(i32::from(v)) {
        return error(format!("Found an unknown record version {v} for {t} type"));
    }
    let mut vj = match vm.read(value, v) {
        Ok((j, _)) => j,
        Err(e) => {
            return error(format!(
                "Could not read record with version {v} from value's buffer due to: {e}."
            ))
        }
    };
    match kind {
        Kind::Transactions if vm.name == "TransactionLogValue" => transaction_status(&mut vj),
        Kind::Offsets if vm.name == "GroupMetadataValue" => consumer_protocol(&mut vj),
        _ => {}
    }
    Parsed {
        key: Some(key_part),
        payload: Some(Part::Json(Node::Obj(vec![
            ("version".into(), Node::Str(v.to_string())),
            ("data".into(), vj),
        ]))),
    }
}

/// `TransactionLogMessageParser`: the state's name (`TransactionState.stateName()`) for its id.
fn transaction_status(v: &mut Node) {
    const NAMES: [&str; 8] = [
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "PrepareAbort",
        "CompleteCommit",
        "CompleteAbort",
        "Dead",
        "PrepareEpochFence",
    ];
    if let Some(Node::Int(id)) = v.get("transactionStatus").cloned() {
        let name = usize::try_from(id)
            .ok()
            .and_then(|i| NAMES.get(i))
            .map_or_else(|| id.to_string(), |n| (*n).to_string());
        v.put("transactionStatus", Node::Str(name));
    }
}

/// `OffsetsMessageParser`: a classic consumer group's member subscriptions and assignments
/// decoded (ConsumerProtocolSubscription/Assignment, an int16 version first); left as base64
/// when they do not parse.
fn consumer_protocol(v: &mut Node) {
    if v.get("protocolType") != Some(&Node::Str("consumer".into())) {
        return;
    }
    let r = registry();
    let Some(Node::Arr(members)) = v.get_mut("members") else {
        return;
    };
    for m in members {
        for (field, schema) in [
            ("subscription", r.subscription.as_ref()),
            ("assignment", r.assignment.as_ref()),
        ] {
            let (Some(schema), Some(Node::Bin(b))) = (schema, m.get(field)) else {
                continue;
            };
            let Some((ver, b)) = be16(b) else { continue };
            if let Ok((j, _)) = schema.read(b, ver) {
                m.put(field, j);
            }
        }
    }
}

/// `UPPER_SNAKE_CASE` of a schema name, as `MetadataRecordType`'s constants.
fn upper_snake(name: &str) -> String {
    let mut s = String::with_capacity(name.len().saturating_add(8));
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            s.push('_');
        }
        s.push(c.to_ascii_uppercase());
    }
    s
}

/// An ApiMessageAndVersion as `AbstractApiMessageSerde.read` reads it: frame version 1, apiKey
/// and version (unsigned varints), the message of that apiKey in `schemas`, nothing after it.
/// Returns (apiKey, version, schema, message) or Kafka's exception message.
fn api_message_and_version<'a>(
    schemas: &'a HashMap<i16, Message>,
    value: &[u8],
) -> Result<(i16, i16, &'a Message, Node), String> {
    let mut rest = value;
    let mut next = |what: &str| -> Result<i16, String> {
        let (v, n) =
            read_unsigned_varint(rest, 0).map_err(|_| format!("Error while reading {what}"))?;
        rest = rest.get(n..).unwrap_or_default();
        // `unsignedIntToShort`: the varint as a Java int, too large above Short.MAX_VALUE,
        // else narrowed as Java's (short) cast does (0xffffffff is -1).
        let v = v as i32;
        if v > i32::from(i16::MAX) {
            return Err(format!("Value for {what} was too large."));
        }
        Ok(v as i16)
    };
    let frame = next("frame version")?;
    if frame == 0 {
        return Err("Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.".into());
    }
    if frame != 1 {
        return Err(format!("Could not deserialize metadata record due to unknown frame version {frame}(only frame version 1 is supported)"));
    }
    let api_key = next("type")?;
    let version = next("version")?;
    let Some(m) = schemas.get(&api_key) else {
        return Err(format!(
            "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}"
        ));
    };
    let (data, garbage) = m
        .read(rest, version)
        .map_err(|_| format!("Failed to deserialize record with type {api_key}"))?;
    let garbage = garbage.len();
    if garbage > 0 {
        return Err(format!(
            "Found {garbage} byte(s) of garbage after {api_key}"
        ));
    }
    Ok((api_key, version, m, data))
}

/// `ClusterMetadataLogMessageParser.parse` (MetadataRecordSerde's read).
fn metadata(r: &Registry, value: Option<&[u8]>, offset: i64) -> Part {
    let err = |m: String| Part::Error(format!("Error at {offset}, skipping. {m}"));
    // No value reads as no bytes (Kafka: "Error while reading frame version").
    match api_message_and_version(&r.metadata, value.unwrap_or_default()) {
        Ok((_, version, m, data)) => Part::Json(Node::Obj(vec![
            ("type".into(), Node::Str(upper_snake(&m.name))),
            ("version".into(), Node::Int(i64::from(version))),
            ("data".into(), data),
        ])),
        Err(e) => err(e),
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_schema_parses() {
        for (group, file, text) in schema_files::FILES {
            if let Err(e) = Message::parse(text) {
                panic!("{group}/{file}: {e}");
            }
        }
        let r = registry();
        assert!(r.metadata.len() >= 27);
        assert!(r.group.keys.contains_key(&0) && r.group.keys.contains_key(&2));
        assert!(r.subscription.is_some() && r.assignment.is_some());
        assert_eq!(r.transaction.keys.len(), 1);
        assert_eq!(r.share.keys.len(), 2);
    }

    #[test]
    fn metadata_type_names() {
        assert_eq!(
            upper_snake("ZkMigrationStateRecord"),
            "ZK_MIGRATION_STATE_RECORD"
        );
        assert_eq!(upper_snake("TopicRecord"), "TOPIC_RECORD");
    }

    #[test]
    fn topic_selection() {
        assert_eq!(
            Kind::for_file(Path::new(
                "/d/__consumer_offsets-17/00000000000000000000.log"
            )),
            Some(Kind::Offsets)
        );
        assert_eq!(
            Kind::for_file(Path::new(
                "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
            )),
            Some(Kind::Metadata)
        );
        assert_eq!(
            Kind::for_file(Path::new("t-0/00000000000000000000.log")),
            None
        );
    }

    #[test]
    fn unknown_types_and_versions_are_shown() {
        let p = parse(Kind::Offsets, Some(&[0, 99]), Some(&[0, 0]), 7);
        assert_eq!(
            p.key.unwrap().to_java(),
            "Unknown record type 99 at offset 7, skipping."
        );
        assert_eq!(p.payload, None);
        // GroupMetadataKey "g" with a value version beyond GroupMetadataValue's 0-4.
        let p = parse(Kind::Offsets, Some(&[0, 2, 0, 1, b'g']), Some(&[0, 9]), 3);
        assert_eq!(
            p.key.unwrap().to_java(),
            "Error at offset 3, skipping. Found an unknown record version 9 for 2 type"
        );
        let p = parse(Kind::Offsets, Some(&[0, 2, 0, 1, b'g']), None, 3);
        assert_eq!(
            p.key.unwrap().to_java(),
            r#"{"type":"2","data":{"group":"g"}}"#
        );
        assert_eq!(p.payload.unwrap().to_java(), "<DELETE>");
        let p = parse(Kind::Metadata, None, Some(&[1, 0x7f, 0]), 5);
        assert_eq!(
            p.payload.unwrap().to_java(),
            "Error at 5, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 127"
        );
    }

    /// The codec's unsigned varint with Kafka's messages: a fifth byte that says more follow,
    /// and bytes that end inside the varint (Java's BufferUnderflowException, "null").
    #[test]
    fn varint_errors_as_kafka() {
        // OffsetCommitKey g/t/0, then an OffsetCommitValue v4 (flexible) whose metadata length
        // is the varint under test.
        let key = [0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 0];
        let value = |tail: &[u8]| [&[0, 4][..], &[0; 12], tail].concat();
        let msg = |tail: &[u8]| {
            parse(Kind::Offsets, Some(&key), Some(&value(tail)), 0)
                .key
                .unwrap()
                .to_java()
        };
        assert_eq!(
            msg(&[0xff; 5]),
            "Error at offset 0, skipping. Could not read record with version 4 from value's buffer due to: Varint is too long, the most significant bit in the 5th byte is set, converted value: ffffffff."
        );
        assert_eq!(
            msg(&[0xff]),
            "Error at offset 0, skipping. Could not read record with version 4 from value's buffer due to: null."
        );
        // Five bytes, the last without a continuation bit: its surplus high bits dropped.
        assert_eq!(
            msg(&[0x81, 0x80, 0x80, 0x80, 0x01]),
            "Error at offset 0, skipping. Could not read record with version 4 from value's buffer due to: string field metadata had invalid length 268435456."
        );
    }

    /// Property: any bytes, after a valid or invalid record type / version / apiKey prefix, give
    /// a result (JSON, tombstone or error), never a panic, and every JSON renders.
    #[test]
    fn random_bytes_never_panic() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for i in 0..60_000u32 {
            let t = (next() % 26) as u8;
            let v = (next() % 6) as u8;
            let mut bytes = |prefix: &[u8]| {
                let n = (next() % 48) as usize;
                let mut b = prefix.to_vec();
                for _ in 0..n {
                    let x = next();
                    // Mostly small bytes, so that lengths and counts fit what is left.
                    b.push(if x % 3 == 0 {
                        (x >> 8) as u8
                    } else {
                        (x >> 8) as u8 % 4
                    });
                }
                b
            };
            let kind = [
                Kind::Offsets,
                Kind::Transactions,
                Kind::ShareState,
                Kind::Metadata,
                Kind::RemoteLogMetadata,
            ][(i % 5) as usize];
            let key = bytes(&[0, t]);
            let value = match kind {
                Kind::Metadata => bytes(&[1, t, v]),
                Kind::RemoteLogMetadata => bytes(&[1, t % 5, v % 2]),
                _ => bytes(&[0, v]),
            };
            let p = parse(kind, Some(&key), (i % 7 != 0).then_some(&value[..]), 1);
            for part in [p.key, p.payload].into_iter().flatten() {
                let _ = part.to_java();
                let _ = part.to_serde();
            }
        }
    }
}
