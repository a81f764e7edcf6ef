//! The text form of entries and records: kafka-dump-log's lines (Kafka 4.4.0's
//! `DumpLogSegments` with `--deep-iteration` / `--print-data-log`), what `krec dump` prints,
//! written straight into a byte buffer. The JSON form is [`crate::entry_json`]'s, and the
//! fields both print come from its [`EntryJson`].
//!
//! # Example
//!
//! ```
//! use krecords_codec::read::Entries;
//! use krecords_codec::write::{NewRecord, V2Builder};
//! use krecords_source::{entry_json, entry_text};
//!
//! let mut b = V2Builder::new(7);
//! b.append(&NewRecord::new(1_714_000_000_000, Some(b"k"), Some(b"v"))).unwrap();
//! let bytes = b.finish().unwrap();
//! let batch = Entries::new(&bytes).next().unwrap().unwrap();
//! let mut out = Vec::new();
//! entry_text::entry(&mut out, &batch, &entry_json::entry("", &batch, None, None), false);
//! assert!(out.starts_with(b"baseOffset: 7 lastOffset: 7 count: 1 baseSequence: -1"));
//! let mut scratch = Vec::new();
//! let r = batch.records(&mut scratch, 1 << 20).unwrap().next().unwrap().unwrap();
//! out.clear();
//! entry_text::record(&mut out, &r, "CreateTime", false, true, false, None);
//! assert_eq!(
//!     out,
//!     b"| offset: 7 CreateTime: 1714000000000 keySize: 1 valueSize: 1 sequence: -1 \
//!       headerKeys: [] key: k payload: v\n"
//! );
//! ```

use crate::entry_json::{self, EntryJson};
use crate::json::int;
use crate::time::write_iso;
use krecords_codec::java_text;
use krecords_codec::read::{Batch, Record};

/// Bytes as Java's `new String(bytes, UTF_8)` shows them (valid UTF-8 as it is).
fn java_bytes(out: &mut Vec<u8>, b: &[u8]) {
    match std::str::from_utf8(b) {
        Ok(_) => out.extend_from_slice(b),
        Err(_) => out.extend_from_slice(java_text::decode(b).as_bytes()),
    }
}

/// With `--timestamps human`: ` (2024-04-24T23:06:40.000Z)` after a timestamp (none after -1).
fn human(out: &mut Vec<u8>, ts: i64, iso: bool) {
    if iso && ts != -1 {
        out.extend_from_slice(b" (");
        write_iso(out, ts);
        out.push(b')');
    }
}

/// Writes the batch line (`printBatchLevel`) of `batch`, whose fields `e` holds
/// ([`entry_json::entry`]); with `iso`, each timestamp is followed by its ISO 8601 form in
/// parentheses (`--timestamps human`).
pub fn entry(out: &mut Vec<u8>, batch: &Batch<'_>, e: &EntryJson<'_>, iso: bool) {
    match batch {
        Batch::V2(b) => {
            out.extend_from_slice(b"baseOffset: ");
            int(out, e.base_offset);
            out.extend_from_slice(b" lastOffset: ");
            int(out, e.last_offset);
            out.extend_from_slice(b" count: ");
            int(out, e.count);
            out.extend_from_slice(b" baseSequence: ");
            int(out, e.header.base_sequence);
            out.extend_from_slice(b" lastSequence: ");
            int(out, b.last_sequence().unwrap_or(-1));
            out.extend_from_slice(b" producerId: ");
            int(out, e.header.producer_id);
            out.extend_from_slice(b" producerEpoch: ");
            int(out, e.header.producer_epoch);
            out.extend_from_slice(b" partitionLeaderEpoch: ");
            int(out, e.header.partition_leader_epoch);
            out.extend_from_slice(b" isTransactional: ");
            out.extend_from_slice(if e.header.transactional {
                b"true"
            } else {
                b"false"
            });
            out.extend_from_slice(b" isControl: ");
            out.extend_from_slice(if e.header.control { b"true" } else { b"false" });
            out.extend_from_slice(b" deleteHorizonMs: ");
            match b.delete_horizon_ms() {
                Some(d) => {
                    out.extend_from_slice(b"OptionalLong[");
                    int(out, d);
                    out.push(b']');
                }
                None => out.extend_from_slice(b"OptionalLong.empty"),
            }
        }
        // Legacy entries print only their (last) offset.
        Batch::Legacy(b) => {
            out.extend_from_slice(b"offset: ");
            int(out, b.offset());
        }
    }
    out.extend_from_slice(b" position: ");
    int(out, e.position);
    out.push(b' ');
    out.extend_from_slice(batch.timestamp_type().kafka_name().as_bytes());
    out.extend_from_slice(b": ");
    let ts = e.max_timestamp.unwrap_or(-1);
    int(out, ts);
    human(out, ts, iso);
    out.extend_from_slice(b" size: ");
    int(out, e.size_bytes);
    out.extend_from_slice(b" magic: ");
    int(out, e.magic);
    out.extend_from_slice(b" compresscodec: ");
    out.extend_from_slice(e.compression.as_bytes());
    out.extend_from_slice(b" crc: ");
    int(out, e.crc);
    out.extend_from_slice(b" isvalid: ");
    out.extend_from_slice(if e.crc_valid { b"true\n" } else { b"false\n" });
}

/// KRaft control records as kafka-dump-log 4.4.0 prints them: the type and the value as JSON.
fn kraft_control(out: &mut Vec<u8>, r: &Record<'_>) {
    use krecords_codec::control::{kraft_json, ControlRecordKey, ControlRecordType};
    let Ok(key) = ControlRecordKey::parse(r.key(), 0) else {
        return;
    };
    let label = match key.kind {
        ControlRecordType::LeaderChange => "LeaderChange:",
        ControlRecordType::SnapshotHeader => "SnapshotHeader",
        ControlRecordType::SnapshotFooter => "SnapshotFooter",
        ControlRecordType::KRaftVersion => "KRaftVersion",
        ControlRecordType::KRaftVoters => "KRaftVoters",
        _ => {
            out.extend_from_slice(b" controlType: ");
            out.extend_from_slice(key.kind.kafka_name().as_bytes());
            out.push(b'(');
            int(out, key.kind.id());
            out.push(b')');
            return;
        }
    };
    out.push(b' ');
    out.extend_from_slice(label.as_bytes());
    if let Ok(Some(json)) = kraft_json(key.kind, r.value(), 0) {
        out.push(b' ');
        out.extend_from_slice(json.to_string().as_bytes());
    }
}

/// Writes a record line (`| offset: ...`), with Java's rendering of bytes as text:
/// `batch_ts_name` is the entry's timestamp type as Kafka names it, `control` whether the entry
/// is a control batch (its marker or KRaft record is shown), `data` whether keys and values
/// are shown (`--print-data-log`), through `decoder` for an internal topic; `iso` as for
/// [`entry`].
pub fn record(
    out: &mut Vec<u8>,
    r: &Record<'_>,
    batch_ts_name: &'static str,
    control: bool,
    data: bool,
    iso: bool,
    decoder: Option<krecords_topics::Kind>,
) {
    let size = |b: Option<&[u8]>| b.map_or(-1, |b| b.len() as i64);
    out.extend_from_slice(b"| offset: ");
    int(out, r.offset());
    out.push(b' ');
    out.extend_from_slice(batch_ts_name.as_bytes());
    out.extend_from_slice(b": ");
    let ts = r.timestamp().unwrap_or(-1);
    int(out, ts);
    human(out, ts, iso);
    out.extend_from_slice(b" keySize: ");
    int(out, size(r.key()));
    out.extend_from_slice(b" valueSize: ");
    int(out, size(r.value()));
    match r {
        Record::V2(v) => {
            out.extend_from_slice(b" sequence: ");
            int(out, v.sequence.unwrap_or(-1));
            out.extend_from_slice(b" headerKeys: [");
            for (i, h) in r.headers().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                java_bytes(out, h.key);
            }
            out.push(b']');
        }
        Record::Legacy(l) => {
            out.extend_from_slice(b" isValid: ");
            out.extend_from_slice(if l.crc == l.compute_crc() {
                b"true"
            } else {
                b"false"
            });
            out.extend_from_slice(b" crc: ");
            int(out, l.crc);
        }
    }
    if control {
        let c = entry_json::control(r);
        match c.coordinator_epoch {
            Some(epoch) => {
                out.extend_from_slice(b" endTxnMarker: ");
                out.extend_from_slice(c.kind.to_uppercase().as_bytes());
                out.extend_from_slice(b" coordinatorEpoch: ");
                int(out, epoch);
            }
            // Not a commit/abort marker: a KRaft record (nothing for an unparsable key).
            None => kraft_control(out, r),
        }
    } else if let (true, Some(kind)) = (data, decoder) {
        // DumpLogSegments' parser for the internal topic: its ParseResult's key and payload.
        krecords_topics::parse(kind, r.key(), r.value(), r.offset()).write_text(out);
    } else if data {
        if let Some(k) = r.key() {
            out.extend_from_slice(b" key: ");
            java_bytes(out, k);
        }
        if let Some(v) = r.value() {
            out.extend_from_slice(b" payload: ");
            java_bytes(out, v);
        }
    }
    out.push(b'\n');
}
