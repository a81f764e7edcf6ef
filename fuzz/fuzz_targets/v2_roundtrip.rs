//! Arbitrary records and batch fields through `write::V2Builder` (every codec, levels at both
//! ends of each range) and back through `read::Entries`: decode(encode(x)) == x, every header
//! field as written, `validate` passes, and the builder accepts exactly the inputs Kafka's
//! `MemoryRecordsBuilder` accepts.
#![no_main]

use arbitrary::Arbitrary;
use krecords_codec::read::{Batch, Entries, Record};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, Error, Header, TimestampType};
use krecords_fuzz::LIMIT;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    base_offset: Offset,
    codec: u8,
    level: Level,
    log_append_time: Option<i64>,
    producer: Option<Producer>,
    partition_leader_epoch: i32,
    delete_horizon_ms: Option<i64>,
    records: Vec<Rec>,
}

/// Offsets near the ends of the i64 range are where arithmetic breaks.
#[derive(Arbitrary, Debug)]
enum Offset {
    Small(u16),
    Any(i64),
    NearMax(u8),
}

impl Offset {
    fn get(&self) -> i64 {
        match *self {
            Offset::Small(v) => i64::from(v),
            Offset::Any(v) => v,
            Offset::NearMax(v) => i64::MAX - i64::from(v),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Level {
    Default,
    Min,
    Max,
    Minus1,
    Value(i8),
}

#[derive(Arbitrary, Debug)]
struct Producer {
    id: i64,
    epoch: i16,
    base_sequence: i32,
    transactional: bool,
}

#[derive(Arbitrary, Debug)]
struct Rec {
    /// Offset gap before this record: `append` for None, `append_with_offset` otherwise.
    gap: Option<Gap>,
    timestamp: Timestamp,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

#[derive(Arbitrary, Debug)]
enum Gap {
    Small(u8),
    Any(i64),
}

#[derive(Arbitrary, Debug)]
enum Timestamp {
    Plausible(u32),
    NoTimestamp,
    Any(i64),
}

impl Timestamp {
    fn get(&self) -> i64 {
        match *self {
            Timestamp::Plausible(v) => 1_714_000_000_000 + i64::from(v),
            Timestamp::NoTimestamp => -1,
            Timestamp::Any(v) => v,
        }
    }
}

fn level_of(codec: Compression, level: &Level) -> Option<i32> {
    let (lo, hi) = codec.level_range().unwrap_or((0, 0));
    match *level {
        Level::Default => None,
        Level::Min => Some(lo),
        // zstd 20..=22 are legal but slow; Value(i8) still reaches them now and then.
        Level::Max if codec == Compression::Zstd => Some(19),
        Level::Max => Some(hi),
        Level::Minus1 => Some(-1),
        Level::Value(v) => Some(i32::from(v)),
    }
}

fuzz_target!(|input: Input| {
    let codec = Compression::ALL[usize::from(input.codec) % Compression::ALL.len()];
    let level = level_of(codec, &input.level);
    let base_offset = input.base_offset.get();
    let mut builder = V2Builder::new(base_offset)
        .compression(codec, level)
        .partition_leader_epoch(input.partition_leader_epoch)
        .delete_horizon_ms(input.delete_horizon_ms);
    if let Some(t) = input.log_append_time {
        builder = builder.timestamp_type(TimestampType::LogAppendTime, t);
    }
    if let Some(p) = &input.producer {
        builder = builder
            .producer(p.id, p.epoch, p.base_sequence)
            .transactional(p.transactional);
    }

    // Append, predicting each outcome as Kafka's builder would decide it.
    let mut accepted: Vec<(i64, &Rec, Vec<Header<'_>>)> = Vec::new();
    let mut last: Option<i64> = None;
    for rec in &input.records {
        let headers: Vec<Header<'_>> = rec
            .headers
            .iter()
            .map(|(k, v)| Header {
                key: k,
                value: v.as_deref(),
            })
            .collect();
        let record = NewRecord::new(
            rec.timestamp.get(),
            rec.key.as_deref(),
            rec.value.as_deref(),
        )
        .with_headers(&headers);
        let (offset, result) = match &rec.gap {
            None => {
                let expected = last.map_or(Some(base_offset), |l| l.checked_add(1));
                let result = builder.append(&record);
                match expected {
                    Some(o) => (Some(o), result.map(|got| assert_eq!(got, o))),
                    None => (None, result.map(|_| ())),
                }
            }
            Some(gap) => {
                let step = match *gap {
                    Gap::Small(g) => i64::from(g),
                    Gap::Any(g) => g,
                };
                let offset = last.unwrap_or(base_offset).wrapping_add(step);
                (Some(offset), builder.append_with_offset(offset, &record))
            }
        };
        let valid = offset.is_some_and(|o| {
            last.is_none_or(|l| o > l)
                && o.checked_sub(base_offset)
                    .is_some_and(|d| (0..=i64::from(i32::MAX)).contains(&d))
        }) && (record.timestamp >= 0 || record.timestamp == -1);
        match result {
            Ok(()) => {
                assert!(
                    valid,
                    "builder accepted offset {offset:?} after {last:?}, ts {}",
                    record.timestamp
                );
                let o = offset.unwrap();
                last = Some(o);
                accepted.push((o, rec, headers));
            }
            Err(e) => {
                assert!(!valid, "builder rejected a valid record at {offset:?}: {e}");
                assert!(matches!(e, Error::Unencodable { .. }), "{e:?}");
            }
        }
    }

    let producer_ok = match &input.producer {
        None => true,
        Some(p) => {
            !(p.transactional && p.id == -1)
                && (p.id == -1 || (p.epoch != -1 && p.base_sequence >= 0))
        }
    };
    let level_ok =
        level.is_none() || codec.level_range().is_none() || codec.is_valid_level(level.unwrap());
    let bytes = match builder.finish() {
        Ok(bytes) => {
            assert!(
                producer_ok,
                "builder accepted producer {:?}",
                input.producer
            );
            assert!(
                level_ok || accepted.is_empty(),
                "builder accepted {codec} level {level:?}"
            );
            bytes
        }
        Err(e) => {
            assert!(
                !producer_ok || (!level_ok && !accepted.is_empty()),
                "finish failed: {e}"
            );
            return;
        }
    };
    if accepted.is_empty() {
        assert!(
            bytes.is_empty(),
            "an empty builder wrote {} bytes",
            bytes.len()
        );
        return;
    }

    // Read back.
    let mut entries = Entries::new(&bytes);
    let batch = entries.next().expect("one entry").expect("entry parses");
    assert!(entries.next().is_none() && entries.partial().is_none());
    assert_eq!(batch.size_in_bytes(), bytes.len());
    let Batch::V2(b) = batch else {
        panic!("v2 builder wrote magic {}", batch.magic())
    };
    let first = accepted[0].0;
    let last = accepted.last().unwrap().0;
    let first_ts = accepted[0].1.timestamp.get();
    let dh = input.delete_horizon_ms.filter(|&d| d >= 0);
    let base_ts = dh.unwrap_or(first_ts);
    let max_ts = match input.log_append_time {
        Some(t) => t,
        None => accepted
            .iter()
            .map(|a| a.1.timestamp.get())
            .fold(-1, i64::max),
    };
    assert_eq!(b.base_offset(), base_offset);
    assert!(first >= base_offset);
    assert_eq!(b.last_offset(), last);
    assert_eq!(b.last_offset_delta() as i64, last - base_offset);
    assert_eq!(b.records_count() as usize, accepted.len());
    assert_eq!(b.compression().unwrap(), codec);
    assert!(b.is_crc_valid());
    assert_eq!(b.raw_partition_leader_epoch(), input.partition_leader_epoch);
    assert_eq!(b.base_timestamp(), base_ts);
    assert_eq!(b.max_timestamp(), max_ts);
    assert_eq!(b.delete_horizon_ms(), dh);
    assert_eq!(
        b.timestamp_type(),
        if input.log_append_time.is_some() {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    );
    assert!(!b.is_control());
    match &input.producer {
        Some(p) => {
            assert_eq!(b.raw_producer_id(), p.id);
            assert_eq!(b.raw_producer_epoch(), p.epoch);
            assert_eq!(b.raw_base_sequence(), p.base_sequence);
            assert_eq!(b.is_transactional(), p.transactional);
        }
        None => {
            assert_eq!(
                (
                    b.raw_producer_id(),
                    b.raw_producer_epoch(),
                    b.raw_base_sequence()
                ),
                (-1, -1, -1)
            );
            assert!(!b.is_transactional());
        }
    }

    let mut scratch = Vec::new();
    let records: Vec<Record<'_>> = batch
        .records(&mut scratch, usize::MAX)
        .expect("records")
        .collect::<Result<_, _>>()
        .expect("every record reads back");
    assert_eq!(records.len(), accepted.len());
    let mut section = 0usize;
    for (r, (offset, rec, headers)) in records.iter().zip(&accepted) {
        let Record::V2(v) = r else {
            panic!("legacy record from a v2 batch")
        };
        assert_eq!(r.offset(), *offset);
        assert_eq!(
            r.timestamp(),
            Some(input.log_append_time.unwrap_or(rec.timestamp.get()))
        );
        assert_eq!(r.key(), rec.key.as_deref());
        assert_eq!(r.value(), rec.value.as_deref());
        assert_eq!(&r.header_vec(), headers);
        assert_eq!(v.attributes, 0);
        let sequence = input
            .producer
            .as_ref()
            .filter(|p| p.base_sequence >= 0)
            .map(|p| krecords_codec::read::v2::increment_sequence(p.base_sequence, v.offset_delta));
        assert_eq!(v.sequence, sequence);
        section += v.size;
    }
    drop(records);
    batch
        .validate_with(&mut Vec::new(), usize::MAX)
        .expect("validate");
    if codec != Compression::None {
        // The decompressed records section is exactly the records: a limit one byte short fails
        // with the limit error, the exact size succeeds.
        assert_eq!(scratch.len(), section);
        let mut s = Vec::new();
        batch
            .records(&mut s, section)
            .expect("records at the exact limit");
        if section <= LIMIT {
            let err = batch.records(&mut s, section - 1).map(|_| ()).unwrap_err();
            assert!(matches!(err, Error::DecompressLimit { .. }), "{err:?}");
        }
    } else {
        assert_eq!(b.records_section().len(), section);
    }
});
