//! The JSON Lines form of entries and records: what `krec dump --format json` and
//! `krec log read` print (other tools parse it; the contract is in docs/design.md).
//!
//! Two forms of the same objects:
//!
//! - serde: [`EntryJson`], [`RecordJson`], [`HeaderJson`] and [`ControlJson`], built by
//!   [`entry`], [`record`], [`consumed`] and [`control`];
//! - written straight into a byte buffer by [`write_entry_fields`] and [`write_record`], the hot
//!   path of `krec dump --deep --format json`: byte for byte what serializing the serde form
//!   with serde_json prints (same field order, string escapes and number forms; the tests
//!   compare them), without a `serde_json::Value` or a `String` per field. The values are
//!   written by [`crate::json`].
//!
//! # Example
//!
//! ```
//! use krecords_codec::build::BytesEncoding;
//! use krecords_codec::read::Entries;
//! use krecords_codec::write::{NewRecord, V2Builder};
//! use krecords_source::entry_json;
//!
//! let mut b = V2Builder::new(7);
//! b.append(&NewRecord::new(1_714_000_000_000, Some(b"k"), Some(b"v"))).unwrap();
//! let bytes = b.finish().unwrap();
//! let batch = Entries::new(&bytes).next().unwrap().unwrap();
//! let mut scratch = Vec::new();
//! let r = batch.records(&mut scratch, 1 << 20).unwrap().next().unwrap().unwrap();
//! let mut out = Vec::new();
//! entry_json::write_record(&mut out, &r, false, BytesEncoding::Utf8, false, None);
//! assert_eq!(
//!     out,
//!     br#"{"offset":7,"timestamp":1714000000000,"key":"k","value":"v","headers":[]}"#
//! );
//! ```

use crate::json::{boolean, bytes, int, string, timestamp, utf8};
use krecords_codec::build::BytesEncoding;
use krecords_codec::control::{ControlRecordKey, EndTxnMarker};
use krecords_codec::read::{Batch, Record, V2HeaderFields};
use krecords_log::consumer::ConsumedRecord;
use serde::Serialize;

/// One entry, as `krec dump --format json` prints it.
#[derive(Serialize)]
pub struct EntryJson<'a> {
    /// The file it came from.
    pub file: &'a str,
    /// Absolute byte position of the entry.
    pub position: usize,
    /// 0, 1 or 2.
    pub magic: u8,
    /// First offset (v0/v1 wrapper: its first inner offset).
    pub base_offset: i64,
    /// Last offset.
    pub last_offset: i64,
    /// Records in the entry (v2: the count field).
    pub count: i64,
    /// Whole entry including the 12-byte prefix.
    pub size_bytes: usize,
    /// Stored CRC.
    pub crc: u32,
    /// Whether it matches.
    pub crc_valid: bool,
    /// Codec name.
    pub compression: String,
    /// none | create_time | log_append_time.
    pub timestamp_type: &'static str,
    /// v2 base timestamp; v1 the message timestamp; v0 null.
    pub base_timestamp: Option<i64>,
    /// v2 max timestamp; v1 the message timestamp; v0 null.
    pub max_timestamp: Option<i64>,
    /// The v2 header's leader epoch, producer, flags and delete horizon, inline in the object
    /// in that order ([`V2HeaderFields::NONE`] for v0/v1).
    #[serde(flatten)]
    pub header: V2HeaderFields,
    /// Records, with `--deep` or `--print-data`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records: Option<Vec<RecordJson>>,
}

/// One record in JSON.
#[derive(Serialize)]
pub struct RecordJson {
    /// Absolute offset.
    pub offset: i64,
    /// Timestamp (null for v0).
    pub timestamp: Option<i64>,
    /// Key per the bytes encoding, null when absent.
    pub key: serde_json::Value,
    /// Value per the bytes encoding, null when absent.
    pub value: serde_json::Value,
    /// Headers in order.
    pub headers: Vec<HeaderJson>,
    /// For records of control batches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlJson>,
}

/// A header in JSON: key as a string, value per the bytes encoding.
#[derive(Serialize)]
pub struct HeaderJson {
    /// Header key (UTF-8, lossy).
    pub key: String,
    /// Header value or null.
    pub value: serde_json::Value,
}

/// A decoded control record.
#[derive(Serialize)]
pub struct ControlJson {
    /// abort | commit | leader_change | ... | unknown.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Key version.
    pub version: i16,
    /// Coordinator epoch of an end-transaction marker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinator_epoch: Option<i32>,
}

/// Optional bytes as a JSON value: a string in `encoding`, or null for `None`.
pub fn bytes_value(b: Option<&[u8]>, encoding: BytesEncoding) -> serde_json::Value {
    match b {
        Some(b) => serde_json::Value::String(encoding.render(b)),
        None => serde_json::Value::Null,
    }
}

/// Summarises an entry. `first_offset` and `count` are those of the decoded records when the
/// caller iterated them (needed for the first offset and count of a v0/v1 wrapper; without
/// them: the wrapper's own offset and 1). Reads the header only, decompresses nothing.
pub fn entry<'a>(
    file: &'a str,
    batch: &Batch<'_>,
    first_offset: Option<i64>,
    count: Option<i64>,
) -> EntryJson<'a> {
    let compression = match batch.compression() {
        Ok(c) => c.name().to_string(),
        // The error names the id; JSON carries it as "unknown(N)".
        Err(krecords_codec::Error::UnknownCompression { id, .. }) => format!("unknown({id})"),
        Err(e) => format!("unknown ({e})"),
    };
    let common = |base_offset, count| EntryJson {
        file,
        position: batch.position(),
        magic: batch.magic(),
        base_offset,
        last_offset: batch.last_offset(),
        count,
        size_bytes: batch.size_in_bytes(),
        crc: batch.crc(),
        crc_valid: batch.is_crc_valid(),
        compression: compression.clone(),
        timestamp_type: batch.timestamp_type().name(),
        base_timestamp: None,
        max_timestamp: None,
        header: batch.v2_header_fields(),
        records: None,
    };
    match batch {
        Batch::V2(b) => EntryJson {
            base_timestamp: Some(b.base_timestamp()),
            max_timestamp: Some(b.max_timestamp()),
            ..common(b.base_offset(), i64::from(b.records_count()))
        },
        Batch::Legacy(b) => EntryJson {
            base_timestamp: b.timestamp(),
            max_timestamp: b.timestamp(),
            ..common(first_offset.unwrap_or(b.offset()), count.unwrap_or(1))
        },
    }
}

/// Decodes the key (and for commit/abort markers the value) of a control batch's record; a key
/// that does not parse is `"invalid"` with version -1.
pub fn control(r: &Record<'_>) -> ControlJson {
    match ControlRecordKey::parse(r.key(), 0) {
        Ok(k) => ControlJson {
            kind: k.kind.name(),
            version: k.version,
            coordinator_epoch: if k.kind.is_end_txn() {
                EndTxnMarker::parse(r.value(), 0)
                    .ok()
                    .map(|m| m.coordinator_epoch)
            } else {
                None
            },
        },
        Err(_) => ControlJson {
            kind: "invalid",
            version: -1,
            coordinator_epoch: None,
        },
    }
}

/// The serde form of a record; `control` is whether it belongs to a control batch.
/// [`write_record`] writes the same bytes directly.
pub fn record(r: &Record<'_>, control: bool, encoding: BytesEncoding) -> RecordJson {
    let control = control.then(|| self::control(r));
    RecordJson {
        offset: r.offset(),
        timestamp: r.timestamp(),
        key: bytes_value(r.key(), encoding),
        value: bytes_value(r.value(), encoding),
        headers: r
            .headers()
            .map(|h| HeaderJson {
                key: String::from_utf8_lossy(h.key).into_owned(),
                value: bytes_value(h.value, encoding),
            })
            .collect(),
        control,
    }
}

/// A record as a consumer received it ([`ConsumedRecord`]: control records never are), as
/// `krec log read` prints it: `{"offset":..,"timestamp":..,"key":..,"value":..,"headers":[..]}`.
pub fn consumed(r: &ConsumedRecord, encoding: BytesEncoding) -> RecordJson {
    RecordJson {
        offset: r.offset,
        timestamp: r.timestamp,
        key: bytes_value(r.key.as_deref(), encoding),
        value: bytes_value(r.value.as_deref(), encoding),
        headers: r
            .headers
            .iter()
            .map(|h| HeaderJson {
                key: String::from_utf8_lossy(&h.key).into_owned(),
                value: bytes_value(h.value.as_deref(), encoding),
            })
            .collect(),
        control: None,
    }
}

/// Appends an entry object up to (not including) its `records` and closing brace, with
/// `"partition":N` after `"file"` when given and the `_iso` forms of the timestamps with `iso`.
pub fn write_entry_fields(out: &mut Vec<u8>, e: &EntryJson<'_>, iso: bool, partition: Option<i32>) {
    out.extend_from_slice(b"{\"file\":");
    string(out, e.file);
    if let Some(p) = partition {
        out.extend_from_slice(b",\"partition\":");
        int(out, p);
    }
    // Positions and sizes of bytes in memory or a file: far below i64::MAX.
    let wide = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    int_fields(
        out,
        &[
            (b",\"position\":", wide(e.position)),
            (b",\"magic\":", e.magic.into()),
            (b",\"base_offset\":", e.base_offset),
            (b",\"last_offset\":", e.last_offset),
            (b",\"count\":", e.count),
            (b",\"size_bytes\":", wide(e.size_bytes)),
            (b",\"crc\":", e.crc.into()),
        ],
    );
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
    let h = &e.header;
    int_fields(
        out,
        &[
            (
                b",\"partition_leader_epoch\":",
                h.partition_leader_epoch.into(),
            ),
            (b",\"producer_id\":", h.producer_id),
            (b",\"producer_epoch\":", h.producer_epoch.into()),
            (b",\"base_sequence\":", h.base_sequence.into()),
        ],
    );
    out.extend_from_slice(b",\"transactional\":");
    boolean(out, h.transactional);
    out.extend_from_slice(b",\"control\":");
    boolean(out, h.control);
    out.extend_from_slice(b",\"delete_horizon_ms\":");
    match h.delete_horizon_ms {
        Some(d) => int(out, d),
        None => out.extend_from_slice(b"null"),
    }
}

/// Appends `,"name":N` for each (`,"name":`, N) pair.
fn int_fields(out: &mut Vec<u8>, fields: &[(&[u8], i64)]) {
    for &(name, n) in fields {
        out.extend_from_slice(name);
        int(out, n);
    }
}

/// Appends `,"control":{..}`.
fn write_control(out: &mut Vec<u8>, c: &ControlJson) {
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

/// Appends one record object; `control_batch` is whether it belongs to a control batch (its
/// key and value are decoded into `"control"`), `decoder` the internal topic whose key and
/// value to decode after the headers, as kafka-dump-log's decoders show them.
pub fn write_record(
    out: &mut Vec<u8>,
    r: &Record<'_>,
    control_batch: bool,
    encoding: BytesEncoding,
    iso: bool,
    decoder: Option<krecords_topics::Kind>,
) {
    out.extend_from_slice(b"{\"offset\":");
    int(out, r.offset());
    out.push(b',');
    timestamp(out, "timestamp", r.timestamp(), iso);
    out.extend_from_slice(b",\"key\":");
    bytes(out, r.key(), encoding);
    out.extend_from_slice(b",\"value\":");
    bytes(out, r.value(), encoding);
    out.extend_from_slice(b",\"headers\":[");
    for (i, h) in r.headers().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"key\":");
        utf8(out, h.key);
        out.extend_from_slice(b",\"value\":");
        bytes(out, h.value, encoding);
        out.push(b'}');
    }
    out.push(b']');
    if control_batch {
        write_control(out, &control(r));
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
    use krecords_codec::read::Entries;
    use krecords_codec::write::{NewRecord, V2Builder};
    use krecords_codec::Header;

    /// The direct writers against serde_json on the structs, for records of every kind.
    #[test]
    fn entries_and_records_match_serde() {
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
            let e = entry("dir/\"q\".log", &batch, None, None);
            let mut out = Vec::new();
            write_entry_fields(&mut out, &e, iso, None);
            out.push(b'}');
            let mut want = serde_json::to_value(&e).unwrap();
            if iso {
                let m = want.as_object_mut().unwrap();
                let mut ordered = serde_json::Map::new();
                for (k, v) in m.iter() {
                    ordered.insert(k.clone(), v.clone());
                    if k == "base_timestamp" || k == "max_timestamp" {
                        let s = crate::time::iso(v.as_i64().unwrap());
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
            for f in [
                BytesEncoding::Utf8,
                BytesEncoding::Hex,
                BytesEncoding::Base64,
            ] {
                for control in [false, true] {
                    let mut out = Vec::new();
                    write_record(&mut out, &r, control, f, false, None);
                    let want = serde_json::to_string(&record(&r, control, f)).unwrap();
                    assert_eq!(String::from_utf8(out).unwrap(), want);
                }
            }
        }
    }

    /// A consumed record prints as the same record read from its batch (no control field).
    #[test]
    fn consumed_matches_record() {
        use krecords_log::consumer::ConsumedHeader;
        let mut b = V2Builder::new(3);
        let headers = [Header {
            key: b"h",
            value: Some(b"\x01"),
        }];
        b.append(&NewRecord::new(5, Some(b"k"), None).with_headers(&headers))
            .unwrap();
        let bytes = b.finish().unwrap();
        let batch = Entries::new(&bytes).next().unwrap().unwrap();
        let mut scratch = Vec::new();
        let r = batch
            .records(&mut scratch, 1 << 20)
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let c = ConsumedRecord {
            offset: 3,
            timestamp: Some(5),
            timestamp_type: krecords_codec::TimestampType::CreateTime,
            key: Some(b"k".to_vec()),
            value: None,
            headers: vec![ConsumedHeader {
                key: b"h".to_vec(),
                value: Some(vec![1]),
            }],
            leader_epoch: None,
        };
        let enc = BytesEncoding::Hex;
        assert_eq!(
            serde_json::to_string(&consumed(&c, enc)).unwrap(),
            serde_json::to_string(&record(&r, false, enc)).unwrap()
        );
    }
}
