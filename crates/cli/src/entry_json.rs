//! The JSON Lines form of entries and records (other tools parse it; the contract is in
//! docs/design.md).

use crate::bytes_fmt::BytesFormat;
use krecords_codec::control::{ControlRecordKey, EndTxnMarker};
use krecords_codec::read::{Batch, Record};
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
    /// -1 for v0/v1.
    pub partition_leader_epoch: i32,
    /// -1 for v0/v1 and non-idempotent batches.
    pub producer_id: i64,
    /// -1 when absent.
    pub producer_epoch: i16,
    /// -1 when absent.
    pub base_sequence: i32,
    /// Transactional flag.
    pub transactional: bool,
    /// Control flag.
    pub control: bool,
    /// Delete horizon when attributes bit 6 is set.
    pub delete_horizon_ms: Option<i64>,
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
    /// Key per `--bytes`, null when absent.
    pub key: serde_json::Value,
    /// Value per `--bytes`, null when absent.
    pub value: serde_json::Value,
    /// Headers in order.
    pub headers: Vec<HeaderJson>,
    /// For records of control batches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlJson>,
}

/// A header in JSON: key as a string, value per `--bytes`.
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

/// Summarises an entry. `records` are the decoded records when the caller iterated them (needed
/// for the first offset and count of a v0/v1 wrapper).
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
    let v2 = batch.v2_header_fields();
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
        partition_leader_epoch: v2.partition_leader_epoch,
        producer_id: v2.producer_id,
        producer_epoch: v2.producer_epoch,
        base_sequence: v2.base_sequence,
        transactional: v2.transactional,
        control: v2.control,
        delete_horizon_ms: v2.delete_horizon_ms,
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

/// Decodes the key (and for commit/abort markers the value) of a control batch's record.
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

/// Converts a record; `control` is whether it belongs to a control batch.
///
/// The serde form of a record; `krec dump` writes the same bytes directly
/// (`cmd/dump/json.rs`, whose tests check it against this).
#[allow(dead_code)]
pub fn record(r: &Record<'_>, control: bool, bytes: BytesFormat) -> RecordJson {
    let control = control.then(|| self::control(r));
    RecordJson {
        offset: r.offset(),
        timestamp: r.timestamp(),
        key: bytes.render_opt(r.key()),
        value: bytes.render_opt(r.value()),
        headers: r
            .headers()
            .map(|h| HeaderJson {
                key: String::from_utf8_lossy(h.key).into_owned(),
                value: bytes.render_opt(h.value),
            })
            .collect(),
        control,
    }
}
