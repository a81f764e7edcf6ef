//! The Rust peers: the `kafka-protocol` crate and `rskafka`'s record batch parser.
//!
//! Both decode into owned records (kafka-protocol: `Bytes` slices of the input for uncompressed
//! batches and of one decompressed buffer otherwise, plus an `IndexMap` of headers; rskafka: a
//! fresh `Vec<u8>` per key, value and header). Their encoders take owned records, which are built
//! once before timing starts, so the encode comparison does not charge them for building their
//! input (in our favour would be the other way round).

use bytes::{Buf, Bytes, BytesMut};
use krecords_codec::Compression;

#[cfg(test)]
use crate::workload::OwnedRecord;
use crate::workload::{Digest, Inputs};

/// kafka-protocol 0.18 (`kafka_protocol::records`).
pub(crate) mod kp {
    use super::*;
    use kafka_protocol::protocol::StrBytes;
    use kafka_protocol::records::{
        Compression as KpCompression, Record, RecordBatchDecoder, RecordBatchEncoder,
        RecordEncodeOptions, TimestampType,
    };

    /// `RecordBatchDecoder::decode` over every batch of `bytes` (CRC checked, it always is),
    /// touching every record's key and value.
    ///
    /// # Errors
    ///
    /// kafka-protocol's error, as text.
    pub(crate) fn decode(bytes: &Bytes) -> Result<Digest, String> {
        let mut buf = bytes.clone();
        let mut d = Digest::default();
        while buf.has_remaining() {
            let set = RecordBatchDecoder::decode(&mut buf).map_err(|e| format!("{e:#}"))?;
            for r in &set.records {
                d.add(
                    r.offset,
                    r.timestamp,
                    r.key.as_deref(),
                    r.value.as_deref(),
                    r.headers.len(),
                );
            }
        }
        Ok(d)
    }

    #[cfg(test)]
    /// Every record of `bytes`, owned.
    ///
    /// # Errors
    ///
    /// As [`decode`].
    pub(crate) fn collect(bytes: &Bytes) -> Result<Vec<OwnedRecord>, String> {
        let mut buf = bytes.clone();
        let mut out = Vec::new();
        while buf.has_remaining() {
            let set = RecordBatchDecoder::decode(&mut buf).map_err(|e| format!("{e:#}"))?;
            for r in set.records {
                out.push(OwnedRecord {
                    offset: r.offset,
                    timestamp: r.timestamp,
                    key: r.key.map(|b| b.to_vec()),
                    value: r.value.map(|b| b.to_vec()),
                    headers: r
                        .headers
                        .iter()
                        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_ref().map(|b| b.to_vec())))
                        .collect(),
                });
            }
        }
        Ok(out)
    }

    /// The workload's records as kafka-protocol's owned `Record`s, one vector per batch. Sequence
    /// numbers run from -1 by offset delta, so that the encoder (which splits batches where
    /// `offset - sequence` changes) writes one batch per vector with base sequence -1, as ours.
    pub(crate) fn records(inputs: &Inputs) -> Vec<Vec<Record>> {
        (0..inputs.spec.batches)
            .map(|b| {
                let range = inputs.batch_range(b);
                let base = range.start;
                range
                    .map(|i| {
                        let mut headers: kafka_protocol::indexmap::IndexMap<
                            StrBytes,
                            Option<Bytes>,
                        > = Default::default();
                        if inputs.spec.headers {
                            for h in inputs.headers(i) {
                                let key = std::str::from_utf8(h.key).expect("UTF-8").to_owned();
                                headers.insert(
                                    StrBytes::from_string(key),
                                    h.value.map(Bytes::copy_from_slice),
                                );
                            }
                        }
                        Record {
                            transactional: false,
                            control: false,
                            delete_horizon: false,
                            partition_leader_epoch: -1,
                            producer_id: -1,
                            producer_epoch: -1,
                            timestamp_type: TimestampType::Creation,
                            offset: i as i64,
                            sequence: (-1i32).wrapping_add((i - base) as i32),
                            timestamp: Inputs::timestamp(i),
                            key: Some(Bytes::copy_from_slice(inputs.key(i))),
                            value: Some(Bytes::copy_from_slice(inputs.value(i))),
                            headers,
                        }
                    })
                    .collect()
            })
            .collect()
    }

    fn codec(c: Compression) -> KpCompression {
        match c {
            Compression::None => KpCompression::None,
            Compression::Gzip => KpCompression::Gzip,
            Compression::Snappy => KpCompression::Snappy,
            Compression::Lz4 => KpCompression::Lz4,
            Compression::Zstd => KpCompression::Zstd,
        }
    }

    /// `RecordBatchEncoder::encode` of every batch into `out`.
    ///
    /// # Errors
    ///
    /// kafka-protocol's error, as text.
    pub(crate) fn encode(
        batches: &[Vec<Record>],
        c: Compression,
        out: &mut BytesMut,
    ) -> Result<(), String> {
        let options = RecordEncodeOptions {
            version: 2,
            compression: codec(c),
        };
        for batch in batches {
            RecordBatchEncoder::encode(out, batch.iter(), &options)
                .map_err(|e| format!("{e:#}"))?;
        }
        Ok(())
    }
}

/// rskafka 0.6 (`rskafka::protocol::record`, public only with its `unstable-fuzzing` feature).
pub(crate) mod rsk {
    use super::*;
    use rskafka::protocol::record::{
        ControlBatchOrRecords, Record, RecordBatch, RecordBatchCompression,
        RecordBatchTimestampType, RecordHeader,
    };
    use rskafka::protocol::traits::{ReadType, WriteType};
    use std::io::Cursor;

    fn each(bytes: &[u8], mut f: impl FnMut(i64, i64, Record)) -> Result<(), String> {
        let mut cur = Cursor::new(bytes);
        while (cur.position() as usize) < bytes.len() {
            let b = RecordBatch::read(&mut cur).map_err(|e| e.to_string())?;
            if let ControlBatchOrRecords::Records(records) = b.records {
                for r in records {
                    let timestamp = match b.timestamp_type {
                        RecordBatchTimestampType::LogAppendTime => b.max_timestamp,
                        RecordBatchTimestampType::CreateTime => {
                            b.first_timestamp + r.timestamp_delta
                        }
                    };
                    f(b.base_offset + i64::from(r.offset_delta), timestamp, r);
                }
            }
        }
        Ok(())
    }

    /// `RecordBatch::read` over every batch of `bytes` (CRC checked, it always is), touching
    /// every record's key and value.
    ///
    /// # Errors
    ///
    /// rskafka's error, as text.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Digest, String> {
        let mut d = Digest::default();
        each(bytes, |offset, timestamp, r| {
            d.add(
                offset,
                timestamp,
                r.key.as_deref(),
                r.value.as_deref(),
                r.headers.len(),
            );
        })?;
        Ok(d)
    }

    #[cfg(test)]
    /// Every record of `bytes`, owned.
    ///
    /// # Errors
    ///
    /// As [`decode`].
    pub(crate) fn collect(bytes: &[u8]) -> Result<Vec<OwnedRecord>, String> {
        let mut out = Vec::new();
        each(bytes, |offset, timestamp, r| {
            out.push(OwnedRecord {
                offset,
                timestamp,
                key: r.key,
                value: r.value,
                headers: r
                    .headers
                    .into_iter()
                    .map(|h| (h.key.into_bytes(), Some(h.value)))
                    .collect(),
            })
        })?;
        Ok(out)
    }

    /// The workload as rskafka's owned batches.
    pub(crate) fn batches(inputs: &Inputs) -> Vec<RecordBatch> {
        let compression = match inputs.spec.codec {
            Compression::None => RecordBatchCompression::NoCompression,
            Compression::Gzip => RecordBatchCompression::Gzip,
            Compression::Snappy => RecordBatchCompression::Snappy,
            Compression::Lz4 => RecordBatchCompression::Lz4,
            Compression::Zstd => RecordBatchCompression::Zstd,
        };
        (0..inputs.spec.batches)
            .map(|b| {
                let range = inputs.batch_range(b);
                let base = range.start;
                let records: Vec<Record> = range
                    .clone()
                    .map(|i| Record {
                        timestamp_delta: (i - base) as i64,
                        offset_delta: (i - base) as i32,
                        key: Some(inputs.key(i).to_vec()),
                        value: Some(inputs.value(i).to_vec()),
                        headers: if inputs.spec.headers {
                            inputs
                                .headers(i)
                                .iter()
                                .map(|h| RecordHeader {
                                    key: String::from_utf8(h.key.to_vec()).expect("UTF-8"),
                                    value: h.value.unwrap_or_default().to_vec(),
                                })
                                .collect()
                        } else {
                            Vec::new()
                        },
                    })
                    .collect();
                RecordBatch {
                    base_offset: base as i64,
                    partition_leader_epoch: -1,
                    last_offset_delta: (range.len() - 1) as i32,
                    first_timestamp: Inputs::timestamp(base),
                    max_timestamp: Inputs::timestamp(range.end - 1),
                    producer_id: -1,
                    producer_epoch: -1,
                    base_sequence: -1,
                    records: ControlBatchOrRecords::Records(records),
                    compression,
                    is_transactional: false,
                    timestamp_type: RecordBatchTimestampType::CreateTime,
                }
            })
            .collect()
    }

    /// `RecordBatch::write` of every batch into `out`.
    ///
    /// # Errors
    ///
    /// rskafka's error, as text.
    pub(crate) fn encode(batches: &[RecordBatch], out: &mut Vec<u8>) -> Result<(), String> {
        for b in batches {
            b.write(out).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}
