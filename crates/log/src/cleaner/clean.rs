//! Cleaning one batch (Kafka's `Cleaner.cleanInto` filter and `MemoryRecords.filterTo`): which
//! batches and records stay, and how a batch that loses records or gains a delete horizon is
//! written again.

use super::offset_map::OffsetMap;
use super::transactions::TxnMetadata;
use super::CompactInfo;
use crate::error::{Error, Result};
use krecords_codec::control::ControlRecordKey;
use krecords_codec::patch::set_last_offset_delta;
use krecords_codec::read::v2::V2Batch;
use krecords_codec::read::{Batch, Record};
use krecords_codec::write::{write_empty_batch, EmptyBatch, NewRecord, V2Builder};
use krecords_codec::{TimestampType, DEFAULT_DECOMPRESS_LIMIT};
use std::collections::HashMap;

/// What the cleaner knows of an active producer (Kafka's `LastRecord`): the last offset of its
/// last data batch, and its epoch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LastRecord {
    pub(crate) last_data_offset: Option<i64>,
    pub(crate) producer_epoch: i16,
}

/// The fixed inputs of a cleaning pass.
pub(crate) struct Context<'a> {
    pub(crate) map: &'a OffsetMap,
    pub(crate) now_ms: i64,
    pub(crate) delete_retention_ms: i64,
    pub(crate) active_producers: &'a HashMap<i64, LastRecord>,
    /// The log's high watermark: a v2 batch ending there is kept, emptied if need be.
    pub(crate) high_watermark: i64,
}

/// Kafka's `BatchRetention`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retention {
    /// The whole batch goes.
    Delete,
    /// Kept without records if every record goes (the producer state needs it).
    RetainEmpty,
    /// Goes if every record goes.
    DeleteEmpty,
}

/// The control record key of a control batch's first record, `None` when it has none.
pub(super) fn control_key(
    b: &V2Batch<'_>,
    scratch: &mut Vec<u8>,
) -> Result<Option<ControlRecordKey>> {
    let at = b.position();
    let mut records = b
        .records(scratch, DEFAULT_DECOMPRESS_LIMIT)
        .map_err(|e| codec(at, e))?;
    match records.next_record().map_err(|e| codec(at, e))? {
        Some(r) => Ok(Some(
            ControlRecordKey::parse(r.key, at).map_err(|e| codec(at, e))?,
        )),
        None => Ok(None),
    }
}

fn codec(at: usize, e: krecords_codec::Error) -> Error {
    Error::CorruptFile {
        path: std::path::PathBuf::from(format!("batch at byte {at}")),
        reason: e.to_string(),
    }
}

/// Kafka's `Cleaner.shouldRetainRecord` for a data record; `found` is the map's offset for its
/// key (looked up by the caller, -1 when absent or keyless).
fn retain_record(
    ctx: &Context<'_>,
    magic: u8,
    delete_horizon: Option<i64>,
    retain_legacy_deletes: bool,
    r: &Record<'_>,
    found: i64,
    info: &mut CompactInfo,
) -> bool {
    if r.offset() > ctx.map.latest_offset() {
        return true;
    }
    if r.key().is_none() {
        info.keyless_records_removed += 1;
        return false;
    }
    let latest = r.offset() >= found;
    let retain_deletes = if magic >= 2 {
        delete_horizon.is_none_or(|h| ctx.now_ms < h)
    } else {
        retain_legacy_deletes
    };
    latest && (r.value().is_some() || retain_deletes)
}

/// Filters one batch into `out`. Returns whether anything was written.
pub(crate) fn clean_batch(
    ctx: &Context<'_>,
    txn: &mut TxnMetadata,
    batch: &Batch<'_>,
    retain_legacy_deletes: bool,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
    info: &mut CompactInfo,
) -> Result<bool> {
    let at = batch.position();
    // Batch retention (Kafka's `checkBatchRetention`).
    let (retention, marker_for_empty_txn, discard_records) = match batch {
        Batch::V2(b) => {
            let control = b.is_control();
            let can_discard = if control {
                let key = control_key(b, scratch)?;
                txn.on_control_batch(b, key)
            } else {
                txn.on_batch(b.last_offset(), b.is_transactional(), b.raw_producer_id())
            };
            let discard_records = if control {
                can_discard && b.delete_horizon_ms().is_some_and(|h| h <= ctx.now_ms)
            } else {
                can_discard
            };
            let has_pid = b.raw_producer_id() >= 0;
            let last_of_producer =
                ctx.active_producers
                    .get(&b.raw_producer_id())
                    .is_some_and(|last| match last.last_data_offset {
                        Some(o) => b.last_offset() == o,
                        None => control && b.raw_producer_epoch() == last.producer_epoch,
                    });
            let retention = if (has_pid && last_of_producer)
                || b.last_offset().checked_add(1) == Some(ctx.high_watermark)
            {
                Retention::RetainEmpty
            } else if discard_records {
                Retention::Delete
            } else {
                Retention::DeleteEmpty
            };
            (retention, can_discard && control, discard_records)
        }
        Batch::Legacy(b) => {
            // Kafka 4.4 keeps a legacy batch ending at the high watermark empty too, and then
            // fails ("Empty batches are only supported for magic v2"); such a batch goes here.
            txn.on_batch(b.offset(), false, -1);
            (Retention::DeleteEmpty, false, false)
        }
    };
    let magic = batch.magic();
    let count_records = |scratch: &mut Vec<u8>| -> Result<u64> {
        Ok(batch
            .records(scratch, DEFAULT_DECOMPRESS_LIMIT)
            .map_err(|e| codec(at, e))?
            .count() as u64)
    };
    if retention == Retention::Delete {
        let n = count_records(scratch)?;
        info.records_read += n;
        info.records_removed += n;
        if let Batch::V2(b) = batch {
            if b.is_control() {
                info.markers_removed += 1;
            } else if b.is_transactional() {
                info.aborted_records_removed += n;
            }
        }
        info.batches_removed += 1;
        return Ok(false);
    }
    let (control, horizon) = match batch {
        Batch::V2(b) => (b.is_control(), b.delete_horizon_ms()),
        Batch::Legacy(_) => (false, None),
    };
    // Record filtering (Kafka's `filterBatch`).
    let mut kept: Vec<Record<'_>> = Vec::new();
    let mut total = 0u64;
    let mut tombstones = false;
    let mut removed_tombstones = 0u64;
    let mut all: Vec<Record<'_>> = Vec::new();
    for r in batch
        .records(scratch, DEFAULT_DECOMPRESS_LIMIT)
        .map_err(|e| codec(at, e))?
    {
        all.push(r.map_err(|e| codec(at, e))?);
    }
    // The map's offset of every key that needs it: digests first, then the lookups in a tight
    // loop, so their cache misses overlap (see `OffsetMap::put_digest`).
    let look_up = !discard_records && !control;
    let digests: Vec<Option<[u8; 16]>> = all
        .iter()
        .map(|r| match r.key() {
            Some(k) if look_up && r.offset() <= ctx.map.latest_offset() => {
                Some(super::offset_map::md5(k))
            }
            _ => None,
        })
        .collect();
    let found: Vec<i64> = digests
        .iter()
        .map(|d| d.as_ref().map_or(-1, |d| ctx.map.get_digest(d)))
        .collect();
    for (r, found) in all.into_iter().zip(found) {
        total += 1;
        let keep = !discard_records
            && (control
                || retain_record(ctx, magic, horizon, retain_legacy_deletes, &r, found, info));
        if keep {
            if r.value().is_none() {
                tombstones = true;
            }
            kept.push(r);
        } else if r.value().is_none() && r.key().is_some() && !control {
            removed_tombstones += 1;
        }
    }
    info.records_read += total;
    info.records_removed += total - kept.len() as u64;
    if discard_records && !control {
        info.aborted_records_removed += total - kept.len() as u64;
    }
    info.tombstones_removed += removed_tombstones;
    // Kafka 4.4's filterBatch: a v0/v1 batch is never copied; it is written again as v2.
    let write_original = magic >= 2 && kept.len() as u64 == total;
    if !kept.is_empty() {
        // A v0/v1 batch has no horizon, so one that keeps a tombstone gets one as it becomes v2.
        let need_horizon = (tombstones || marker_for_empty_txn) && horizon.is_none();
        if write_original && !need_horizon {
            out.extend_from_slice(batch.as_bytes());
            return Ok(true);
        }
        let new_horizon = if need_horizon {
            Some(ctx.now_ms.saturating_add(ctx.delete_retention_ms))
        } else {
            horizon
        };
        if need_horizon {
            info.delete_horizons_set += 1;
        }
        info.batches_rewritten += 1;
        rebuild(batch, &kept, new_horizon, out)?;
        return Ok(true);
    }
    if let (Retention::RetainEmpty, Batch::V2(b)) = (retention, batch) {
        info.batches_emptied += 1;
        write_empty_batch(
            out,
            &EmptyBatch {
                base_offset: b.base_offset(),
                last_offset: b.last_offset(),
                partition_leader_epoch: b.raw_partition_leader_epoch(),
                timestamp_type: b.timestamp_type(),
                timestamp: b.max_timestamp(),
                producer_id: b.raw_producer_id(),
                producer_epoch: b.raw_producer_epoch(),
                base_sequence: b.raw_base_sequence(),
                transactional: b.is_transactional(),
                control: b.is_control(),
            },
        )
        .map_err(|e| codec(at, e))?;
        return Ok(true);
    }
    info.batches_removed += 1;
    if control {
        info.markers_removed += 1;
    }
    Ok(false)
}

/// Writes `kept` as Kafka 4.4's `buildRetainedRecordsInto` does: always magic 2, the same codec
/// (at its default level); for a v2 batch the same timestamp type, producer fields,
/// transactional and control flags, leader epoch, base and last offset; for a v0/v1 batch base
/// offset the first kept record's, no producer and no leader epoch.
fn rebuild(
    batch: &Batch<'_>,
    kept: &[Record<'_>],
    delete_horizon: Option<i64>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let at = batch.position();
    let compression = batch.compression().map_err(|e| codec(at, e))?;
    match batch {
        Batch::V2(b) => {
            let log_append_time = if b.timestamp_type() == TimestampType::LogAppendTime {
                b.max_timestamp()
            } else {
                -1
            };
            let mut builder = V2Builder::new(b.base_offset())
                .compression(compression, None)
                .timestamp_type(b.timestamp_type(), log_append_time)
                .producer(
                    b.raw_producer_id(),
                    b.raw_producer_epoch(),
                    b.raw_base_sequence(),
                )
                .transactional(b.is_transactional())
                .control(b.is_control())
                .partition_leader_epoch(b.raw_partition_leader_epoch())
                .delete_horizon_ms(delete_horizon);
            for r in kept {
                let headers = r.header_vec();
                let ts = r.timestamp().unwrap_or(-1);
                if b.is_control() {
                    let o = builder
                        .append_control(ts, r.key().unwrap_or(&[]), r.value().unwrap_or(&[]))
                        .map_err(|e| codec(at, e))?;
                    if o != r.offset() {
                        return Err(codec(
                            at,
                            krecords_codec::Error::Unencodable {
                                reason: format!(
                                    "control record at offset {} is not the batch's first",
                                    r.offset()
                                ),
                            },
                        ));
                    }
                } else {
                    let rec = NewRecord::new(ts, r.key(), r.value()).with_headers(&headers);
                    builder
                        .append_with_offset(r.offset(), &rec)
                        .map_err(|e| codec(at, e))?;
                }
            }
            let start = out.len();
            builder.finish_into(out).map_err(|e| codec(at, e))?;
            // Kafka's `overrideLastOffset`: the original last offset stays, so the producer's
            // last sequence does too.
            set_last_offset_delta(&mut out[start..], b.last_offset_delta())
                .map_err(|e| codec(at, e))?;
        }
        Batch::Legacy(b) => {
            // Kafka 4.4's buildRetainedRecordsInto: magic 2, base offset the first kept
            // record's, CreateTime for a v0 batch, no producer, no leader epoch, no last offset
            // override. Inner records of a LogAppendTime wrapper carry the wrapper's time.
            let first = kept.first().map_or(b.offset(), Record::offset);
            let (ts_type, log_append_time) = match b.timestamp_type() {
                TimestampType::LogAppendTime => {
                    (TimestampType::LogAppendTime, b.timestamp().unwrap_or(-1))
                }
                _ => (TimestampType::CreateTime, -1),
            };
            let mut builder = V2Builder::new(first)
                .compression(compression, None)
                .timestamp_type(ts_type, log_append_time)
                .delete_horizon_ms(delete_horizon);
            for r in kept {
                let ts = if ts_type == TimestampType::LogAppendTime {
                    log_append_time
                } else {
                    r.timestamp().unwrap_or(-1)
                };
                let rec = NewRecord::new(ts, r.key(), r.value());
                builder
                    .append_with_offset(r.offset(), &rec)
                    .map_err(|e| codec(at, e))?;
            }
            builder.finish_into(out).map_err(|e| codec(at, e))?;
        }
    }
    Ok(())
}
