//! What krecords makes of a buffer, in the shape of the referee's answer
//! (`interop/java/.../Referee.java`): every batch and record as a consumer sees them, or a
//! rejection.

use krecords_codec::read::{Batch, Entries, Record};
use krecords_codec::{Compression, TimestampType, DEFAULT_DECOMPRESS_LIMIT};
use serde_json::{json, Map, Value};

/// Reads `bytes` as a consumer with `check.crcs=true` reads a fetched partition: every entry
/// ([`Entries`]: sizes, magic, header), then [`Batch::checked_records`] (the CRC, every record
/// decompressed and checked); a partial entry at the end is dropped.
/// Returns `{"accept":true,"batches":[..],"records":[..]}` or
/// `{"accept":false,"error":"Variant","message":".."}`.
pub fn verdict(bytes: &[u8]) -> Value {
    let mut batches = Vec::new();
    let mut records = Vec::new();
    let mut scratch = Vec::new();
    for entry in Entries::new(bytes) {
        let batch = match entry {
            Ok(b) => b,
            Err(e) => return reject(&e),
        };
        // `checked_records`, the iteration the crate teaches: the CRC, then every record with
        // its own checks (each v0/v1 message's CRC, the consumer's `record.ensureValid()`).
        let recs = match batch.checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT) {
            Ok(r) => r,
            Err(e) => return reject(&e),
        };
        let mut first_offset = None;
        let mut described = Vec::new();
        for r in recs {
            let r = match r {
                Ok(r) => r,
                Err(e) => return reject(&e),
            };
            first_offset.get_or_insert(r.offset());
            described.push(record(&batch, &r));
        }
        batches.push(describe_batch(&batch, first_offset));
        records.extend(described);
    }
    json!({"accept": true, "batches": batches, "records": records})
}

fn reject(e: &krecords_codec::Error) -> Value {
    let debug = format!("{e:?}");
    let variant = debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("")
        .to_owned();
    json!({"accept": false, "error": variant, "message": e.to_string()})
}

fn codec_name(c: Compression) -> &'static str {
    match c {
        Compression::None => "none",
        Compression::Gzip => "gzip",
        Compression::Snappy => "snappy",
        Compression::Lz4 => "lz4",
        Compression::Zstd => "zstd",
    }
}

fn timestamp_type_name(t: TimestampType) -> &'static str {
    match t {
        TimestampType::NoTimestamp => "none",
        TimestampType::CreateTime => "create_time",
        TimestampType::LogAppendTime => "log_append_time",
    }
}

use krecords_codec::read::v2::increment_sequence;

/// The batch fields of the referee's `Describe.batch`. `first_offset` is the offset of the
/// first record read (a v0/v1 wrapper's base offset is its first inner message's, as Kafka's
/// `AbstractLegacyRecordBatch.baseOffset` reads it).
fn describe_batch(batch: &Batch<'_>, first_offset: Option<i64>) -> Value {
    let codec = batch.compression().map(codec_name).unwrap_or("unknown");
    let mut m = Map::new();
    match batch {
        Batch::V2(b) => {
            let base_seq = b.raw_base_sequence();
            m.insert("base_offset".into(), json!(b.base_offset()));
            m.insert("last_offset".into(), json!(b.last_offset()));
            m.insert("batch_length".into(), json!(b.batch_length()));
            m.insert(
                "partition_leader_epoch".into(),
                json!(b.raw_partition_leader_epoch()),
            );
            m.insert("magic".into(), json!(2));
            m.insert("crc".into(), json!(b.crc()));
            m.insert("attributes".into(), json!(b.attributes() as u16));
            m.insert("codec".into(), json!(codec));
            m.insert(
                "timestamp_type".into(),
                json!(timestamp_type_name(b.timestamp_type())),
            );
            m.insert("transactional".into(), json!(b.is_transactional()));
            m.insert("control".into(), json!(b.is_control()));
            m.insert("last_offset_delta".into(), json!(b.last_offset_delta()));
            m.insert("first_timestamp".into(), json!(b.base_timestamp()));
            m.insert("max_timestamp".into(), json!(b.max_timestamp()));
            m.insert("producer_id".into(), json!(b.raw_producer_id()));
            m.insert("producer_epoch".into(), json!(b.raw_producer_epoch()));
            m.insert("base_sequence".into(), json!(base_seq));
            let last_seq = if base_seq == -1 {
                -1
            } else {
                increment_sequence(base_seq, b.last_offset_delta())
            };
            m.insert("last_sequence".into(), json!(last_seq));
            m.insert("record_count".into(), json!(b.records_count()));
            m.insert("delete_horizon_ms".into(), json!(b.delete_horizon_ms()));
            m.insert("size_in_bytes".into(), json!(b.as_bytes().len()));
        }
        Batch::Legacy(b) => {
            let base = if b.is_compressed() {
                json!(first_offset)
            } else {
                json!(b.offset())
            };
            m.insert("base_offset".into(), base);
            m.insert("last_offset".into(), json!(b.offset()));
            m.insert("batch_length".into(), json!(b.message_size()));
            m.insert("partition_leader_epoch".into(), json!(-1));
            m.insert("magic".into(), json!(b.magic()));
            m.insert("crc".into(), json!(b.crc()));
            m.insert("attributes".into(), json!(b.attributes()));
            m.insert("codec".into(), json!(codec));
            m.insert(
                "timestamp_type".into(),
                json!(timestamp_type_name(b.timestamp_type())),
            );
            m.insert("transactional".into(), json!(false));
            m.insert("control".into(), json!(false));
            m.insert("last_offset_delta".into(), Value::Null);
            m.insert("first_timestamp".into(), Value::Null);
            m.insert("max_timestamp".into(), json!(b.timestamp().unwrap_or(-1)));
            m.insert("producer_id".into(), json!(-1));
            m.insert("producer_epoch".into(), json!(-1));
            m.insert("base_sequence".into(), json!(-1));
            m.insert("last_sequence".into(), json!(-1));
            m.insert("record_count".into(), Value::Null);
            m.insert("delete_horizon_ms".into(), Value::Null);
            m.insert("size_in_bytes".into(), json!(b.as_bytes().len()));
        }
    }
    Value::Object(m)
}

/// The record fields of the referee's `Referee.record`.
fn record(batch: &Batch<'_>, r: &Record<'_>) -> Value {
    let headers: Vec<Value> = r
        .headers()
        .map(|h| {
            json!({
                "key": hex::encode(krecords_codec::java_text::decode(h.key).as_bytes()),
                "value": h.value.map(hex::encode),
            })
        })
        .collect();
    let sequence = match batch {
        Batch::V2(b) => {
            let base = b.raw_base_sequence();
            if base >= 0 {
                let delta = r.offset().wrapping_sub(b.base_offset()) as i32;
                json!(increment_sequence(base, delta))
            } else {
                json!(-1)
            }
        }
        Batch::Legacy(_) => Value::Null,
    };
    json!({
        "offset": r.offset(),
        "timestamp": r.timestamp(),
        "key": r.key().map(hex::encode),
        "value": r.value().map(hex::encode),
        "headers": headers,
        "sequence": sequence,
    })
}

/// The fixed "now" of the produce comparison, as the referee's (`Referee.NOW`).
pub const NOW: i64 = 1_714_000_000_000;

/// What krecords' log makes of `bytes` as one produce request's records for one partition:
/// appended by a client to a new log with the default configuration, leader epoch 0, the clock
/// at [`NOW`] (the engine behind `krec log append --raw`, which first splits its input into
/// such appends). `{"accept":true,"first_offset":N,"last_offset":N}` or
/// `{"accept":false,"error":"KAFKA_ERROR_NAME","message":".."}`.
pub fn produce(bytes: &[u8]) -> Value {
    use krecords_log::clock::ManualClock;
    use krecords_log::storage::MemStorage;
    use krecords_log::{AppendOrigin, Env, Log, LogConfig};
    use std::sync::Arc;
    let clock = Arc::new(ManualClock::new(NOW));
    let env = Env::new(Arc::new(MemStorage::with_clock(clock.clone())), clock);
    // Small preallocated indexes (Kafka's 10 MiB default changes no verdict, only the time).
    let config = match LogConfig::from_pairs([("segment.index.bytes", "4096")]) {
        Ok(c) => c,
        Err(e) => return json!({"accept": false, "error": "HARNESS", "message": e.to_string()}),
    };
    let mut log = match Log::create_with("/referee/t-0", config, env) {
        Ok(l) => l,
        Err(e) => return json!({"accept": false, "error": "HARNESS", "message": e.to_string()}),
    };
    match log.append(bytes, AppendOrigin::Client) {
        Ok(info) => json!({
            "accept": true,
            "first_offset": info.base_offset,
            "last_offset": info.last_offset,
        }),
        Err(e) => json!({"accept": false, "error": e.kafka_name(), "message": e.to_string()}),
    }
}
