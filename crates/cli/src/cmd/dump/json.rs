//! The JSON Lines of `krec dump`, written straight into a byte buffer.
//!
//! Byte for byte what serializing [`crate::entry_json::EntryJson`] with serde_json prints (same
//! field order, same string escapes, same number forms), without building a `serde_json::Value`
//! or a `String` per field: the hot path of `krec dump --deep --format json`. The values are
//! written by [`krecords_source::json`].

use crate::bytes_fmt::BytesFormat;
use crate::entry_json::{self, ControlJson, EntryJson};
use krecords_codec::read::Record;
pub use krecords_source::json::int;
use krecords_source::json::{boolean, string, timestamp, utf8};

/// Appends bytes rendered per `--bytes` as a JSON string, or `null`.
fn bytes(out: &mut Vec<u8>, b: Option<&[u8]>, format: BytesFormat) {
    krecords_source::json::bytes(out, b, format.into());
}

/// Appends an entry object up to (not including) its `records` and closing brace.
pub fn entry_fields(out: &mut Vec<u8>, e: &EntryJson<'_>, iso: bool, partition: Option<i32>) {
    out.extend_from_slice(b"{\"file\":");
    string(out, e.file);
    if let Some(p) = partition {
        out.extend_from_slice(b",\"partition\":");
        int(out, p);
    }
    out.extend_from_slice(b",\"position\":");
    int(out, e.position);
    out.extend_from_slice(b",\"magic\":");
    int(out, e.magic);
    out.extend_from_slice(b",\"base_offset\":");
    int(out, e.base_offset);
    out.extend_from_slice(b",\"last_offset\":");
    int(out, e.last_offset);
    out.extend_from_slice(b",\"count\":");
    int(out, e.count);
    out.extend_from_slice(b",\"size_bytes\":");
    int(out, e.size_bytes);
    out.extend_from_slice(b",\"crc\":");
    int(out, e.crc);
    out.extend_from_slice(b",\"crc_valid\":");
    boolean(out, e.crc_valid);
    out.extend_from_slice(b",\"compression\":");
    string(out, &e.compression);
    out.extend_from_slice(b",\"timestamp_type\":");
    string(out, e.timestamp_type);
    out.push(b',');
    timestamp(out, "base_timestamp", e.base_timestamp, iso);
    out.push(b',');
    timestamp(out, "max_timestamp", e.max_timestamp, iso);
    out.extend_from_slice(b",\"partition_leader_epoch\":");
    int(out, e.partition_leader_epoch);
    out.extend_from_slice(b",\"producer_id\":");
    int(out, e.producer_id);
    out.extend_from_slice(b",\"producer_epoch\":");
    int(out, e.producer_epoch);
    out.extend_from_slice(b",\"base_sequence\":");
    int(out, e.base_sequence);
    out.extend_from_slice(b",\"transactional\":");
    boolean(out, e.transactional);
    out.extend_from_slice(b",\"control\":");
    boolean(out, e.control);
    out.extend_from_slice(b",\"delete_horizon_ms\":");
    match e.delete_horizon_ms {
        Some(d) => int(out, d),
        None => out.extend_from_slice(b"null"),
    }
}

fn control(out: &mut Vec<u8>, c: &ControlJson) {
    out.extend_from_slice(b",\"control\":{\"type\":");
    string(out, c.kind);
    out.extend_from_slice(b",\"version\":");
    int(out, c.version);
    if let Some(epoch) = c.coordinator_epoch {
        out.extend_from_slice(b",\"coordinator_epoch\":");
        int(out, epoch);
    }
    out.push(b'}');
}

/// Appends one record object; `control` is whether it belongs to a control batch.
pub fn record(
    out: &mut Vec<u8>,
    r: &Record<'_>,
    control_batch: bool,
    format: BytesFormat,
    iso: bool,
    decoder: Option<krecords_topics::Kind>,
) {
    out.extend_from_slice(b"{\"offset\":");
    int(out, r.offset());
    out.push(b',');
    timestamp(out, "timestamp", r.timestamp(), iso);
    out.extend_from_slice(b",\"key\":");
    bytes(out, r.key(), format);
    out.extend_from_slice(b",\"value\":");
    bytes(out, r.value(), format);
    out.extend_from_slice(b",\"headers\":[");
    for (i, h) in r.headers().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"key\":");
        utf8(out, h.key);
        out.extend_from_slice(b",\"value\":");
        bytes(out, h.value, format);
        out.push(b'}');
    }
    out.push(b']');
    if control_batch {
        control(out, &entry_json::control(r));
    } else if let Some(kind) = decoder {
        // The internal topic's key and value decoded, as kafka-dump-log's decoder shows them
        // (absent: Kafka prints nothing there; null: a tombstone).
        krecords_topics::parse(kind, r.key(), r.value(), r.offset()).write_json_fields(out);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct writer against serde_json on `entry_json`'s structs, for records of every kind.
    #[test]
    fn entries_and_records_match_serde() {
        use krecords_codec::read::Entries;
        use krecords_codec::write::{NewRecord, V2Builder};
        use krecords_codec::Header;
        let headers = [
            Header {
                key: b"h\x01\"k\xff",
                value: Some(b"\xff\x00v"),
            },
            Header {
                key: "é".as_bytes(),
                value: None,
            },
        ];
        let mut b = V2Builder::new(42);
        b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"hello")))
            .unwrap();
        b.append(&NewRecord::new(1_714_000_000_001, Some(b"k\n\"\\"), None).with_headers(&headers))
            .unwrap();
        b.append(&NewRecord::new(
            1_714_000_000_002,
            Some(&[0xed, 0xa0, 0x80, b'x']),
            Some(b""),
        ))
        .unwrap();
        let bytes = b.finish().unwrap();
        let batch = Entries::new(&bytes).next().unwrap().unwrap();
        for iso in [false, true] {
            let e = entry_json::entry("dir/\"q\".log", &batch, None, None);
            let mut out = Vec::new();
            entry_fields(&mut out, &e, iso, None);
            out.push(b'}');
            let mut want = serde_json::to_value(&e).unwrap();
            if iso {
                let m = want.as_object_mut().unwrap();
                let mut ordered = serde_json::Map::new();
                for (k, v) in m.iter() {
                    ordered.insert(k.clone(), v.clone());
                    if k == "base_timestamp" || k == "max_timestamp" {
                        let s = crate::time_fmt::iso(v.as_i64().unwrap());
                        ordered.insert(format!("{k}_iso"), serde_json::Value::String(s));
                    }
                }
                want = serde_json::Value::Object(ordered);
            }
            assert_eq!(String::from_utf8(out).unwrap(), want.to_string());
        }
        let mut scratch = Vec::new();
        for r in batch.records(&mut scratch, 1 << 20).unwrap() {
            let r = r.unwrap();
            for f in [BytesFormat::Utf8, BytesFormat::Hex, BytesFormat::Base64] {
                for control in [false, true] {
                    let mut out = Vec::new();
                    record(&mut out, &r, control, f, false, None);
                    let want = serde_json::to_string(&entry_json::record(&r, control, f)).unwrap();
                    assert_eq!(String::from_utf8(out).unwrap(), want);
                }
            }
        }
    }
}
