//! Arbitrary records through `write::LegacyBuilder` (magic 0 and 1; none, gzip, snappy, lz4 and
//! the rejected zstd; CreateTime and LogAppendTime) and back: decode(encode(x)) == x under
//! Kafka's deep-iteration rules (v0 inner offsets absolute; v1 inner offsets relative to a
//! wrapper carrying the last absolute offset, wrapper offset 0 meaning "as stored"; a v1
//! LogAppendTime wrapper's time on every inner message), `validate` passes, and the builder
//! accepts exactly what Kafka's accepts.
#![no_main]

use arbitrary::Arbitrary;
use krecords_codec::read::{Batch, Entries, Record};
use krecords_codec::write::{LegacyBuilder, NewRecord};
use krecords_codec::{Compression, Error, TimestampType};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    v1: bool,
    codec: u8,
    level: Option<i8>,
    log_append_time: Option<i64>,
    base_offset: Offset,
    records: Vec<Rec>,
}

#[derive(Arbitrary, Debug)]
enum Offset {
    Zero,
    Small(u16),
    Any(i64),
    NearMax(u8),
}

impl Offset {
    fn get(&self) -> i64 {
        match *self {
            Offset::Zero => 0,
            Offset::Small(v) => i64::from(v),
            Offset::Any(v) => v,
            Offset::NearMax(v) => i64::MAX - i64::from(v),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Rec {
    gap: Option<u8>,
    timestamp: Timestamp,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    /// A header, which magic 0 and 1 cannot carry: the builder must refuse the record.
    header: bool,
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

fuzz_target!(|input: Input| {
    let magic = u8::from(input.v1);
    let codec = Compression::ALL[usize::from(input.codec) % Compression::ALL.len()];
    let level = input.level.map(i32::from);
    let base_offset = input.base_offset.get();
    let builder = LegacyBuilder::new(magic, base_offset).expect("magic 0 and 1 are legal");
    let mut builder = match builder.compression(codec, level) {
        Ok(b) => {
            assert!(codec.allowed_in(magic));
            b
        }
        Err(e) => {
            assert_eq!(codec, Compression::Zstd, "{e}");
            assert!(matches!(e, Error::UnsupportedCompression { .. }));
            return;
        }
    };
    if let Some(t) = input.log_append_time {
        builder = builder.timestamp_type(TimestampType::LogAppendTime, t);
    }
    let lat = if magic == 1 {
        input.log_append_time
    } else {
        None
    };

    let header = [krecords_codec::Header {
        key: b"h",
        value: None,
    }];
    let mut accepted = Vec::new();
    let mut last: Option<i64> = None;
    for rec in &input.records {
        let mut record = NewRecord::new(
            rec.timestamp.get(),
            rec.key.as_deref(),
            rec.value.as_deref(),
        );
        if rec.header {
            record = record.with_headers(&header);
        }
        let next = last.map_or(Some(base_offset), |l| l.checked_add(1));
        let offset = match rec.gap {
            None => next,
            Some(g) => next.and_then(|n| n.checked_add(i64::from(g))),
        };
        let Some(offset) = offset else {
            // Past i64::MAX. append() must refuse (not overflow); there is no offset to pass to
            // append_with_offset.
            if rec.gap.is_none() {
                let result = builder.append(&record);
                assert!(
                    matches!(result, Err(Error::Unencodable { .. })),
                    "{result:?}"
                );
            }
            continue;
        };
        let result = match rec.gap {
            None => builder.append(&record).map(|o| assert_eq!(o, offset)),
            Some(_) => builder.append_with_offset(offset, &record),
        };
        let valid = offset
            .checked_sub(base_offset)
            .is_some_and(|d| d <= i64::from(i32::MAX))
            && (record.timestamp >= 0 || record.timestamp == -1)
            && !rec.header;
        match result {
            Ok(()) => {
                assert!(
                    valid,
                    "builder accepted offset {offset}, ts {}",
                    record.timestamp
                );
                last = Some(offset);
                accepted.push((offset, rec));
            }
            Err(e) => {
                assert!(!valid, "builder rejected a valid record at {offset}: {e}");
                assert!(matches!(e, Error::Unencodable { .. }), "{e:?}");
            }
        }
    }
    let level_ok =
        level.is_none() || codec.level_range().is_none() || codec.is_valid_level(level.unwrap());
    let bytes = match builder.finish() {
        Ok(b) => {
            assert!(level_ok || accepted.is_empty() || codec == Compression::None);
            b
        }
        Err(e) => {
            assert!(!level_ok, "finish failed: {e}");
            assert!(matches!(e, Error::InvalidLevel { .. }), "{e:?}");
            return;
        }
    };
    if accepted.is_empty() {
        assert!(bytes.is_empty());
        return;
    }

    let batches: Vec<Batch<'_>> = {
        let mut entries = Entries::new(&bytes);
        let b = entries
            .by_ref()
            .collect::<Result<Vec<_>, _>>()
            .expect("entries parse");
        assert!(entries.partial().is_none());
        b
    };
    let ts_type = match (magic, lat) {
        (0, _) => TimestampType::NoTimestamp,
        (_, Some(_)) => TimestampType::LogAppendTime,
        _ => TimestampType::CreateTime,
    };
    let expected_ts = |r: &Rec| (magic == 1).then(|| lat.unwrap_or(r.timestamp.get()));
    let last_offset = accepted.last().unwrap().0;
    let mut scratch = Vec::new();
    let mut got = Vec::new();
    if codec == Compression::None {
        assert_eq!(batches.len(), accepted.len());
        for b in &batches {
            let Batch::Legacy(l) = b else {
                panic!("magic {}", b.magic())
            };
            let mut s = Vec::new();
            let rs: Vec<_> = b.records(&mut s, usize::MAX).expect("records").collect();
            assert_eq!(rs, vec![Ok(Record::Legacy(l.as_record()))]);
            got.push(Record::Legacy(l.as_record()));
        }
    } else {
        assert_eq!(batches.len(), 1);
        let Batch::Legacy(l) = &batches[0] else {
            panic!("magic {}", batches[0].magic())
        };
        assert!(l.is_compressed());
        assert_eq!(l.offset(), last_offset);
        assert_eq!(l.compression().unwrap(), codec);
        assert_eq!(l.key(), None);
        let wrapper_ts = lat.unwrap_or_else(|| {
            accepted
                .iter()
                .map(|a| a.1.timestamp.get())
                .fold(-1, i64::max)
        });
        assert_eq!(l.timestamp(), (magic == 1).then_some(wrapper_ts));
        // v1: the wrapper must not sit below the last relative offset unless it is 0; with a
        // negative base offset it does, and Kafka's reader refuses the wrapper.
        let last_relative = last_offset - base_offset;
        let refused = magic == 1 && last_offset != 0 && last_offset < last_relative;
        match batches[0].records(&mut scratch, usize::MAX) {
            Ok(records) => {
                assert!(!refused);
                for r in records {
                    got.push(r.expect("inner record"));
                }
            }
            Err(e) => {
                assert!(refused, "wrapper refused: {e}");
                return;
            }
        }
    }
    assert_eq!(got.len(), accepted.len());
    for (r, (offset, rec)) in got.iter().zip(&accepted) {
        let Record::Legacy(l) = r else {
            panic!("v2 record from a legacy entry")
        };
        let expected_offset = if magic == 1 && codec != Compression::None && last_offset == 0 {
            offset - base_offset // wrapper offset 0: inner (relative) offsets as stored
        } else {
            *offset
        };
        assert_eq!(l.offset, expected_offset);
        assert_eq!(l.magic, magic);
        assert_eq!(l.timestamp, expected_ts(rec));
        assert_eq!(l.timestamp_type, ts_type);
        assert_eq!(l.key, rec.key.as_deref());
        assert_eq!(l.value, rec.value.as_deref());
        assert_eq!(l.crc, l.compute_crc());
    }
    drop(got);
    for b in &batches {
        assert!(b.is_crc_valid());
        assert_eq!(b.timestamp_type(), ts_type);
        b.validate_with(&mut Vec::new(), usize::MAX)
            .expect("validate");
    }
});
