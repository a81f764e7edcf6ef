//! Properties of the decoders over generated input: any key and value bytes give a result (never
//! a panic) that renders in both forms, and well-formed records built here decode to the fields
//! they were built from.

use krecords_topics::{parse, Kind, Node, Parsed, Part};
use proptest::prelude::*;

/// Both renderings of a result; the JSON fields form a valid object.
fn render(p: &Parsed) {
    let mut text = Vec::new();
    p.write_text(&mut text);
    assert!(String::from_utf8(text).is_ok());
    let mut json = b"{\"offset\":0".to_vec();
    p.write_json_fields(&mut json);
    json.push(b'}');
    let v: serde_json::Value = serde_json::from_slice(&json).expect("JSON fields");
    assert!(v.is_object());
}

fn kind() -> impl Strategy<Value = Kind> {
    prop::sample::select(Kind::ALL.to_vec())
}

/// Bytes that often start as a real record does: an int16 record type or version, or the
/// unsigned varints of an ApiMessageAndVersion, then small bytes (lengths and counts that fit).
fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64),
        (0u8..30, prop::collection::vec(0u8..4, 0..64)).prop_map(|(t, rest)| {
            let mut b = vec![0, t];
            b.extend(rest);
            b
        }),
        (0u8..30, 0u8..4, prop::collection::vec(0u8..4, 0..64)).prop_map(|(t, v, rest)| {
            let mut b = vec![1, t, v];
            b.extend(rest);
            b
        }),
    ]
}

/// A non-flexible string (int16 length).
fn string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// An unsigned varint.
fn uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A flexible (compact) string: unsigned varint of length + 1.
fn compact(out: &mut Vec<u8>, s: &str) {
    uvarint(out, s.len() as u32 + 1);
    out.extend_from_slice(s.as_bytes());
}

fn obj(fields: &[(&str, Node)]) -> Node {
    Node::Obj(
        fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

fn text(s: &str) -> Node {
    Node::Str(s.into())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_bytes_decode_without_panic(
        kind in kind(),
        key in prop::option::of(bytes()),
        value in prop::option::of(bytes()),
        offset in any::<i64>(),
    ) {
        render(&parse(kind, key.as_deref(), value.as_deref(), offset));
    }

    /// OffsetCommitKey (type 1) with an OffsetCommitValue at version 3 (fixed-size fields) or 4
    /// (flexible: compact string, a tagged topic id).
    #[test]
    fn offset_commits_round_trip(
        group in "\\PC{0,20}",
        topic in "[a-zA-Z0-9._-]{1,40}",
        partition in any::<i32>(),
        offset in any::<i64>(),
        leader_epoch in any::<i32>(),
        metadata in "\\PC{0,30}",
        commit_ts in any::<i64>(),
        topic_id in any::<[u8; 16]>(),
        flexible in any::<bool>(),
    ) {
        let mut key = 1i16.to_be_bytes().to_vec();
        string(&mut key, &group);
        string(&mut key, &topic);
        key.extend_from_slice(&partition.to_be_bytes());
        let version: i16 = if flexible { 4 } else { 3 };
        let mut value = version.to_be_bytes().to_vec();
        value.extend_from_slice(&offset.to_be_bytes());
        value.extend_from_slice(&leader_epoch.to_be_bytes());
        if flexible {
            compact(&mut value, &metadata);
        } else {
            string(&mut value, &metadata);
        }
        value.extend_from_slice(&commit_ts.to_be_bytes());
        if flexible {
            // One tagged field: tag 0 (topicId), 16 bytes.
            value.extend_from_slice(&[1, 0, 16]);
            value.extend_from_slice(&topic_id);
        }
        let p = parse(Kind::Offsets, Some(&key), Some(&value), 9);
        render(&p);
        let want_key = obj(&[
            ("type", text("1")),
            ("data", obj(&[
                ("group", text(&group)),
                ("topic", text(&topic)),
                ("partition", Node::Int(partition.into())),
            ])),
        ]);
        prop_assert_eq!(p.key, Some(Part::Json(want_key)));
        let mut data = vec![
            ("offset", Node::Int(offset)),
            ("leaderEpoch", Node::Int(leader_epoch.into())),
            ("metadata", text(&metadata)),
            ("commitTimestamp", Node::Int(commit_ts)),
        ];
        // A tagged field is shown unless it is its default (the zero UUID).
        if flexible && topic_id != [0; 16] {
            use base64::Engine;
            let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(topic_id);
            data.push(("topicId", Node::Str(id)));
        }
        let want_value = obj(&[("version", text(&version.to_string())), ("data", obj(&data))]);
        prop_assert_eq!(p.payload, Some(Part::Json(want_value)));
    }

    /// A TopicRecord of `__cluster_metadata`: ApiMessageAndVersion (frame 1, apiKey 2,
    /// version 0), compact name, UUID, no tagged fields; bytes after it are garbage.
    #[test]
    fn topic_records_round_trip(
        name in "[a-zA-Z0-9._-]{1,249}",
        id in any::<[u8; 16]>(),
        garbage in 0usize..3,
    ) {
        let mut value = vec![1, 2, 0];
        compact(&mut value, &name);
        value.extend_from_slice(&id);
        value.push(0);
        value.extend(std::iter::repeat_n(7u8, garbage));
        let p = parse(Kind::Metadata, None, Some(&value), 4);
        render(&p);
        prop_assert_eq!(&p.key, &None);
        let payload = p.payload.expect("payload");
        if garbage > 0 {
            prop_assert_eq!(
                payload.to_java(),
                format!("Error at 4, skipping. Found {garbage} byte(s) of garbage after 2")
            );
        } else {
            use base64::Engine;
            let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id);
            let want = obj(&[
                ("type", text("TOPIC_RECORD")),
                ("version", Node::Int(0)),
                ("data", obj(&[("name", text(&name)), ("topicId", Node::Str(id))])),
            ]);
            prop_assert_eq!(payload, Part::Json(want));
        }
    }

    /// A TransactionLogKey and a tombstone: `<DELETE>`, null in JSON.
    #[test]
    fn transaction_tombstones_round_trip(id in "\\PC{0,40}") {
        let mut key = 0i16.to_be_bytes().to_vec();
        string(&mut key, &id);
        let p = parse(Kind::Transactions, Some(&key), None, 0);
        let want = obj(&[("type", text("0")), ("data", obj(&[("transactionalId", text(&id))]))]);
        prop_assert_eq!(p.key.as_ref(), Some(&Part::Json(want)));
        prop_assert_eq!(p.payload.as_ref(), Some(&Part::Tombstone));
        let mut json = Vec::new();
        p.write_json_fields(&mut json);
        prop_assert!(String::from_utf8(json).unwrap().ends_with(",\"value_decoded\":null"));
    }
}

#[test]
fn decoders_by_topic_and_directory() {
    for (topic, kind) in [
        ("__consumer_offsets", Kind::Offsets),
        ("__transaction_state", Kind::Transactions),
        ("__cluster_metadata", Kind::Metadata),
        ("__share_group_state", Kind::ShareState),
        ("__remote_log_metadata", Kind::RemoteLogMetadata),
    ] {
        assert_eq!(Kind::for_topic(topic), Some(kind));
        assert_eq!(Kind::for_partition_dir(&format!("{topic}-7")), Some(kind));
        assert_eq!(Kind::for_partition_dir(topic), None);
    }
    assert_eq!(Kind::for_topic("orders"), None);
    assert_eq!(Kind::for_partition_dir("orders-0"), None);
}
