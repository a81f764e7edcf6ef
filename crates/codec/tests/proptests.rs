//! Property tests: build → read round trips in all three formats, entries over concatenations and
//! their prefixes, and no panics (with in-bounds error positions) on random or corrupted bytes.
//!
//! The expected values are computed here from the inputs (a model of Kafka's builder), not by
//! asking the crate. Failure persistence is off so the suite writes no files; a failure prints the
//! minimal input.

use krecords_codec::control::{ControlRecordKey, ControlRecordType, EndTxnMarker};
use krecords_codec::read::{Batch, Entries, LegacyBatch, Record, V2Batch};
use krecords_codec::write::{self, EmptyBatch, LegacyBuilder, V2Builder};
use krecords_codec::{Compression, Error, Header, TimestampType, DEFAULT_DECOMPRESS_LIMIT};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;

/// `cases` unless `PROPTEST_CASES` asks for another number (for a longer local run).
/// Proptest settings: `cases` unless `PROPTEST_CASES` says otherwise, no persistence file.
pub(crate) fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ------------------------------------------------------------------ inputs

type Headers = Vec<(Vec<u8>, Option<Vec<u8>>)>;

#[derive(Debug, Clone)]
struct Rec {
    /// Offset minus the previous record's offset (for the first record: minus base offset - 1).
    gap: i64,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Headers,
}

fn bytes_opt(max: usize) -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        2 => Just(None),
        2 => Just(Some(Vec::new())),
        5 => vec(any::<u8>(), 1..48).prop_map(Some),
        1 => vec(any::<u8>(), 48..max.max(49)).prop_map(Some),
    ]
}

/// 0, -1 (Kafka's NO_TIMESTAMP), up to i64::MAX / 2, and realistic times; mixed freely, so a
/// batch's timestamps may decrease (negative deltas).
fn timestamp() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(0i64),
        Just(-1i64),
        Just(i64::MAX / 2),
        0..=i64::MAX / 2,
        1_700_000_000_000i64..1_800_000_000_000,
    ]
}

fn header_key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"trace".to_vec()),
        Just(Vec::new()),
        Just("clé-ü-€".as_bytes().to_vec()),
        vec(any::<u8>(), 0..16),
    ]
}

fn headers(max: usize) -> impl Strategy<Value = Headers> {
    vec((header_key(), bytes_opt(64)), 0..max)
}

fn gap() -> impl Strategy<Value = i64> {
    prop_oneof![8 => Just(1i64), 1 => 2..1000i64, 1 => 1000..(1i64 << 24)]
}

fn rec(with_headers: bool) -> impl Strategy<Value = Rec> {
    let max_headers = if with_headers { 5 } else { 1 };
    (
        gap(),
        timestamp(),
        bytes_opt(4096),
        bytes_opt(4096),
        headers(max_headers),
    )
        .prop_map(|(gap, timestamp, key, value, headers)| Rec {
            gap,
            timestamp,
            key,
            value,
            headers,
        })
}

/// Small offsets, or offsets near i64::MAX - 2^31 (the last offset of a batch must still fit).
fn base_offset() -> impl Strategy<Value = i64> {
    const HIGH: i64 = i64::MAX - (1i64 << 31);
    prop_oneof![0..1000i64, (HIGH - 1000)..=HIGH]
}

#[derive(Debug, Clone)]
struct Producer {
    id: i64,
    epoch: i16,
    base_sequence: i32,
    transactional: bool,
}

fn producer() -> impl Strategy<Value = Option<Producer>> {
    prop::option::of(
        (
            0..=i64::MAX,
            0..=i16::MAX,
            prop_oneof![0..1000i32, (i32::MAX - 20)..=i32::MAX],
            any::<bool>(),
        )
            .prop_map(|(id, epoch, base_sequence, transactional)| Producer {
                id,
                epoch,
                base_sequence,
                transactional,
            }),
    )
}

#[derive(Debug, Clone)]
struct V2Spec {
    base_offset: i64,
    codec: Compression,
    log_append_time: Option<i64>,
    producer: Option<Producer>,
    partition_leader_epoch: i32,
    delete_horizon_ms: Option<i64>,
    records: Vec<Rec>,
}

fn v2_spec(codecs: Vec<Compression>) -> impl Strategy<Value = V2Spec> {
    (
        base_offset(),
        prop::sample::select(codecs),
        prop::option::of(0..=i64::MAX / 2),
        producer(),
        prop_oneof![Just(-1i32), 0..=i32::MAX],
        prop::option::of(0..=i64::MAX / 2),
        vec(rec(true), 1..12),
    )
        .prop_map(
            |(
                base_offset,
                codec,
                log_append_time,
                producer,
                partition_leader_epoch,
                delete_horizon_ms,
                records,
            )| {
                V2Spec {
                    base_offset,
                    codec,
                    log_append_time,
                    producer,
                    partition_leader_epoch,
                    delete_horizon_ms,
                    records,
                }
            },
        )
}

#[derive(Debug, Clone)]
struct LegacySpec {
    magic: u8,
    base_offset: i64,
    codec: Compression,
    /// v1 only: LogAppendTime with this append time.
    log_append_time: Option<i64>,
    records: Vec<Rec>,
}

fn legacy_spec(codecs: Vec<Compression>) -> impl Strategy<Value = LegacySpec> {
    (
        0u8..=1,
        base_offset(),
        prop::sample::select(codecs),
        prop::option::of(0..=i64::MAX / 2),
        vec(rec(false), 1..8),
    )
        .prop_map(
            |(magic, base_offset, codec, log_append_time, records)| LegacySpec {
                magic,
                base_offset,
                codec,
                log_append_time: log_append_time.filter(|_| magic == 1),
                records,
            },
        )
}

#[derive(Debug, Clone)]
enum Spec {
    V2(V2Spec),
    Legacy(LegacySpec),
}

fn spec(codecs: Vec<Compression>) -> impl Strategy<Value = Spec> {
    let legacy: Vec<Compression> = codecs.iter().copied().filter(|c| c.allowed_in(1)).collect();
    prop_oneof![
        v2_spec(codecs).prop_map(Spec::V2),
        legacy_spec(legacy).prop_map(Spec::Legacy),
    ]
}

const NONE: [Compression; 1] = [Compression::None];
const CODECS: [Compression; 4] = [
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

// ------------------------------------------------------------------ the model

/// Absolute offsets of the records.
fn offsets(base: i64, records: &[Rec]) -> Vec<i64> {
    let mut next = base - 1;
    records
        .iter()
        .map(|r| {
            next += r.gap;
            next
        })
        .collect()
}

/// Kafka's `DefaultRecordBatch.incrementSequence`, computed in i64: past i32::MAX it wraps to 0.
fn model_sequence(base: i32, delta: i64) -> i32 {
    let s = i64::from(base) + delta;
    let s = if s > i64::from(i32::MAX) {
        s - i64::from(i32::MAX) - 1
    } else {
        s
    };
    i32::try_from(s).expect("sequence in range")
}

fn header_refs(h: &Headers) -> Vec<Header<'_>> {
    h.iter()
        .map(|(k, v)| Header {
            key: k,
            value: v.as_deref(),
        })
        .collect()
}

fn build_v2(s: &V2Spec) -> Result<Vec<u8>, Error> {
    let mut b = V2Builder::new(s.base_offset)
        .compression(s.codec, None)
        .partition_leader_epoch(s.partition_leader_epoch)
        .delete_horizon_ms(s.delete_horizon_ms);
    if let Some(t) = s.log_append_time {
        b = b.timestamp_type(TimestampType::LogAppendTime, t);
    }
    if let Some(p) = &s.producer {
        b = b
            .producer(p.id, p.epoch, p.base_sequence)
            .transactional(p.transactional);
    }
    for (r, offset) in s.records.iter().zip(offsets(s.base_offset, &s.records)) {
        let headers = header_refs(&r.headers);
        let record = write::NewRecord::new(r.timestamp, r.key.as_deref(), r.value.as_deref())
            .with_headers(&headers);
        if offset == b.next_offset() {
            assert_eq!(b.append(&record)?, offset);
        } else {
            b.append_with_offset(offset, &record)?;
        }
    }
    b.finish()
}

fn build_legacy(s: &LegacySpec) -> Result<Vec<u8>, Error> {
    let mut b = LegacyBuilder::new(s.magic, s.base_offset)?.compression(s.codec, None)?;
    if let Some(t) = s.log_append_time {
        b = b.timestamp_type(TimestampType::LogAppendTime, t);
    }
    for (r, offset) in s.records.iter().zip(offsets(s.base_offset, &s.records)) {
        let record = write::NewRecord::new(r.timestamp, r.key.as_deref(), r.value.as_deref());
        if offset == b.next_offset() {
            assert_eq!(b.append(&record)?, offset);
        } else {
            b.append_with_offset(offset, &record)?;
        }
    }
    b.finish()
}

fn build(s: &Spec) -> Result<Vec<u8>, Error> {
    match s {
        Spec::V2(s) => build_v2(s),
        Spec::Legacy(s) => build_legacy(s),
    }
}

/// Entries a spec builds: one batch, one wrapper, or one message per record.
fn entry_count(s: &Spec) -> usize {
    match s {
        Spec::Legacy(l) if l.codec == Compression::None => l.records.len(),
        _ => 1,
    }
}

fn collect_records<'a: 'b, 'b>(batch: &Batch<'a>, scratch: &'b mut Vec<u8>) -> Vec<Record<'b>> {
    batch
        .records(scratch, DEFAULT_DECOMPRESS_LIMIT)
        .expect("records")
        .collect::<Result<Vec<_>, _>>()
        .expect("every record")
}

fn headers_of(r: &Record<'_>) -> Headers {
    r.headers()
        .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
        .collect()
}

/// Checks a v2 batch read back against its spec, field by field.
fn check_v2(s: &V2Spec, batch: &Batch<'_>) {
    let Batch::V2(b) = batch else {
        panic!("expected a v2 batch, got magic {}", batch.magic())
    };
    let offs = offsets(s.base_offset, &s.records);
    let last = *offs.last().unwrap();
    let lod = i32::try_from(last - s.base_offset).unwrap();
    let first_ts = s.records[0].timestamp;
    let base_ts = s.delete_horizon_ms.unwrap_or(first_ts);
    let max_ts = match s.log_append_time {
        Some(t) => t,
        None => s.records.iter().map(|r| r.timestamp).fold(-1, i64::max),
    };
    assert_eq!(b.base_offset(), s.base_offset);
    assert_eq!(b.batch_length() as usize, b.as_bytes().len() - 12);
    assert_eq!(b.raw_partition_leader_epoch(), s.partition_leader_epoch);
    assert_eq!(
        b.partition_leader_epoch(),
        Some(s.partition_leader_epoch).filter(|&e| e >= 0)
    );
    assert!(b.is_crc_valid());
    assert_eq!(b.compression().unwrap(), s.codec);
    let lat = if s.log_append_time.is_some() {
        TimestampType::LogAppendTime
    } else {
        TimestampType::CreateTime
    };
    assert_eq!(b.timestamp_type(), lat);
    assert_eq!(b.has_delete_horizon(), s.delete_horizon_ms.is_some());
    assert_eq!(b.delete_horizon_ms(), s.delete_horizon_ms);
    assert!(!b.is_control());
    assert_eq!(b.last_offset_delta(), lod);
    assert_eq!(b.last_offset(), last);
    assert_eq!(b.next_offset(), last + 1);
    assert_eq!(batch.last_offset(), last);
    assert_eq!(batch.offset_field(), s.base_offset);
    assert_eq!(b.base_timestamp(), base_ts);
    assert_eq!(b.max_timestamp(), max_ts);
    assert_eq!(b.records_count() as usize, s.records.len());
    let expected_attributes = i16::from(s.codec.id())
        | if s.log_append_time.is_some() { 0x08 } else { 0 }
        | if s.producer.as_ref().is_some_and(|p| p.transactional) {
            0x10
        } else {
            0
        }
        | if s.delete_horizon_ms.is_some() {
            0x40
        } else {
            0
        };
    assert_eq!(b.attributes(), expected_attributes);
    match &s.producer {
        Some(p) => {
            assert_eq!(b.producer_id(), Some(p.id));
            assert_eq!(b.producer_epoch(), Some(p.epoch));
            assert_eq!(b.base_sequence(), Some(p.base_sequence));
            assert_eq!(
                b.last_sequence(),
                Some(model_sequence(p.base_sequence, i64::from(lod)))
            );
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
            assert_eq!(
                (b.producer_id(), b.producer_epoch(), b.base_sequence()),
                (None, None, None)
            );
            assert_eq!(b.last_sequence(), None);
            assert!(!b.is_transactional());
        }
    }
    let mut scratch = Vec::new();
    let records = collect_records(batch, &mut scratch);
    assert_eq!(records.len(), s.records.len());
    for ((r, spec), offset) in records.iter().zip(&s.records).zip(&offs) {
        let Record::V2(v) = r else {
            panic!("a v2 batch yielded a legacy record")
        };
        assert_eq!(r.offset(), *offset);
        assert_eq!(v.offset_delta as i64, offset - s.base_offset);
        assert_eq!(
            r.timestamp(),
            Some(s.log_append_time.unwrap_or(spec.timestamp))
        );
        assert_eq!(v.timestamp_delta, spec.timestamp - base_ts);
        assert_eq!(r.key(), spec.key.as_deref());
        assert_eq!(r.value(), spec.value.as_deref());
        assert_eq!(headers_of(r), spec.headers);
        assert_eq!(r.headers().len(), spec.headers.len());
        assert_eq!(v.attributes, 0);
        let sequence = s
            .producer
            .as_ref()
            .map(|p| model_sequence(p.base_sequence, offset - s.base_offset));
        assert_eq!(v.sequence, sequence);
    }
    batch.validate().expect("validate");
}

/// Checks the entries a legacy spec built, read back.
fn check_legacy(s: &LegacySpec, batches: &[Batch<'_>]) {
    let offs = offsets(s.base_offset, &s.records);
    let ts_type = match (s.magic, s.log_append_time) {
        (0, _) => TimestampType::NoTimestamp,
        (_, Some(_)) => TimestampType::LogAppendTime,
        _ => TimestampType::CreateTime,
    };
    let lat_bit = if s.log_append_time.is_some() { 0x08 } else { 0 };
    let read_ts = |r: &Rec| (s.magic == 1).then(|| s.log_append_time.unwrap_or(r.timestamp));
    let mut records = Vec::new();
    let mut scratch = Vec::new();
    if s.codec == Compression::None {
        assert_eq!(batches.len(), s.records.len());
        for ((batch, r), offset) in batches.iter().zip(&s.records).zip(&offs) {
            let Batch::Legacy(l) = batch else {
                panic!("expected v{}", s.magic)
            };
            assert_eq!(l.offset(), *offset);
            assert_eq!(l.magic(), s.magic);
            assert_eq!(l.attributes(), lat_bit);
            assert!(!l.is_compressed());
            assert_eq!(l.timestamp(), read_ts(r));
            assert_eq!(l.key(), r.key.as_deref());
            assert_eq!(l.value(), r.value.as_deref());
            assert_eq!(l.trailing_bytes(), 0);
            assert_eq!(l.message_size() as usize, l.as_bytes().len() - 12);
            let mut inner = collect_records(batch, &mut scratch)
                .into_iter()
                .map(|r| match r {
                    Record::Legacy(l) => (
                        l.offset,
                        l.timestamp,
                        l.key.map(<[u8]>::to_vec),
                        l.value.map(<[u8]>::to_vec),
                        l.magic,
                        l.timestamp_type,
                    ),
                    Record::V2(_) => panic!("v2 record from a legacy entry"),
                });
            records.push(inner.next().expect("one record"));
            assert!(inner.next().is_none());
        }
    } else {
        assert_eq!(batches.len(), 1);
        let Batch::Legacy(l) = &batches[0] else {
            panic!("expected v{}", s.magic)
        };
        assert_eq!(l.offset(), *offs.last().unwrap());
        assert!(l.is_compressed());
        assert_eq!(l.compression().unwrap(), s.codec);
        assert_eq!(l.attributes(), s.codec.id() | lat_bit);
        let wrapper_ts = match s.log_append_time {
            Some(t) => t,
            None => s.records.iter().map(|r| r.timestamp).fold(-1, i64::max),
        };
        assert_eq!(l.timestamp(), (s.magic == 1).then_some(wrapper_ts));
        assert_eq!(l.key(), None);
        for r in collect_records(&batches[0], &mut scratch) {
            let Record::Legacy(l) = r else {
                panic!("v2 record from a legacy entry")
            };
            records.push((
                l.offset,
                l.timestamp,
                l.key.map(<[u8]>::to_vec),
                l.value.map(<[u8]>::to_vec),
                l.magic,
                l.timestamp_type,
            ));
        }
    }
    assert_eq!(records.len(), s.records.len());
    for ((got, r), offset) in records.iter().zip(&s.records).zip(&offs) {
        let expected = (
            *offset,
            read_ts(r),
            r.key.clone(),
            r.value.clone(),
            s.magic,
            ts_type,
        );
        assert_eq!(got, &expected);
    }
    for b in batches {
        assert!(b.is_crc_valid());
        assert_eq!(b.timestamp_type(), ts_type);
        b.validate().expect("validate");
    }
}

fn check_spec(s: &Spec, batches: &[Batch<'_>]) {
    match s {
        Spec::V2(s) => {
            assert_eq!(batches.len(), 1);
            check_v2(s, &batches[0]);
        }
        Spec::Legacy(s) => check_legacy(s, batches),
    }
}

fn read_all(bytes: &[u8]) -> Vec<Batch<'_>> {
    let mut entries = Entries::new(bytes);
    let batches = entries
        .by_ref()
        .collect::<Result<Vec<_>, _>>()
        .expect("entries");
    assert_eq!(entries.partial(), None);
    assert_eq!(entries.next_position(), bytes.len());
    batches
}

// ------------------------------------------------------------------ no panics, positions in bounds

fn check_position(e: &Error, len: usize) {
    if let Some(at) = e.position() {
        assert!(
            at <= len,
            "error position {at} past the input ({len} bytes): {e}"
        );
    }
    // Display must not panic either.
    let _ = e.to_string();
}

/// Calls every accessor of every entry and record, iterates everything, validates; asserts only
/// that nothing panics and that error positions are inside the input.
fn exercise(bytes: &[u8]) {
    let len = bytes.len();
    let mut entries = Entries::new(bytes);
    let mut scratch = Vec::new();
    let mut end = 0;
    loop {
        let batch = match entries.next_entry() {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(e) => {
                check_position(&e, len);
                assert!(
                    entries.next().is_none(),
                    "iteration continued after an error"
                );
                return;
            }
        };
        assert_eq!(batch.position(), end);
        end += batch.size_in_bytes();
        touch_batch(&batch, len);
        match batch.records(&mut scratch, 1 << 20) {
            Ok(records) => {
                for r in records {
                    match r {
                        Ok(r) => touch_record(&batch, &r, len),
                        Err(e) => check_position(&e, len),
                    }
                }
            }
            Err(e) => check_position(&e, len),
        }
        let mut scratch2 = Vec::new();
        let validated = batch.validate_with(&mut scratch2, 1 << 20);
        if let Err(e) = &validated {
            check_position(e, len);
        }
        // The checked iteration (Kafka's reader) takes everything validation takes, and then
        // yields what `records` yields; validation refuses more only for the batch's own
        // consistency (count against last offset delta, offset deltas, unaccounted bytes).
        let mut scratch3 = Vec::new();
        let checked: Result<Vec<Record<'_>>, Error> = batch
            .checked_records(&mut scratch3, 1 << 20)
            .and_then(|r| r.collect());
        match (checked, validated) {
            (Ok(checked), _) => {
                let mut scratch4 = Vec::new();
                let plain: Vec<Record<'_>> = batch
                    .records(&mut scratch4, 1 << 20)
                    .and_then(|r| r.collect())
                    .expect("records of a checked batch");
                assert_eq!(checked, plain);
            }
            // Validation's own consistency checks come first; any other refusal is the same.
            (Err(_), Err(v)) if strict_only(&v) => {}
            (Err(c), Err(v)) => assert_eq!(c, v),
            (c, v) => panic!("checked_records {c:?} but validate {v:?}"),
        }
    }
    assert_eq!(entries.next_position(), end);
    if let Some(p) = entries.partial() {
        assert_eq!(p.position, end);
        assert_eq!(p.position + p.bytes, len);
    } else {
        assert_eq!(end, len);
    }
}

fn touch_batch(batch: &Batch<'_>, len: usize) {
    let _ = (
        batch.as_bytes(),
        batch.magic(),
        batch.offset_field(),
        batch.last_offset(),
    );
    let _ = (
        batch.crc(),
        batch.compute_crc(),
        batch.is_crc_valid(),
        batch.timestamp_type(),
    );
    if let Err(e) = batch.compression() {
        check_position(&e, len);
    }
    match batch {
        Batch::V2(b) => touch_v2(b, len),
        Batch::Legacy(l) => touch_legacy(l),
    }
}

fn touch_v2(b: &V2Batch<'_>, len: usize) {
    let _ = (
        b.base_offset(),
        b.batch_length(),
        b.partition_leader_epoch(),
    );
    let _ = (
        b.raw_partition_leader_epoch(),
        b.crc(),
        b.compute_crc(),
        b.attributes(),
    );
    let _ = (
        b.timestamp_type(),
        b.is_transactional(),
        b.is_control(),
        b.has_delete_horizon(),
    );
    let _ = (
        b.delete_horizon_ms(),
        b.last_offset_delta(),
        b.last_offset(),
        b.next_offset(),
    );
    let _ = (
        b.base_timestamp(),
        b.max_timestamp(),
        b.producer_id(),
        b.raw_producer_id(),
    );
    let _ = (
        b.producer_epoch(),
        b.raw_producer_epoch(),
        b.base_sequence(),
        b.raw_base_sequence(),
    );
    let _ = (b.last_sequence(), b.records_count(), b.records_section());
    match b.uncompressed_records() {
        Ok(records) => {
            for r in records {
                if let Err(e) = r {
                    check_position(&e, len);
                }
            }
        }
        Err(e) => check_position(&e, len),
    }
}

fn touch_legacy(l: &LegacyBatch<'_>) {
    let _ = (
        l.offset(),
        l.message_size(),
        l.crc(),
        l.compute_crc(),
        l.magic(),
        l.attributes(),
    );
    let _ = (
        l.compression(),
        l.is_compressed(),
        l.timestamp_type(),
        l.timestamp(),
    );
    let _ = (l.key(), l.value(), l.trailing_bytes(), l.as_record());
}

fn touch_record(batch: &Batch<'_>, r: &Record<'_>, len: usize) {
    let _ = (r.offset(), r.timestamp(), r.key(), r.value());
    let headers = r.headers();
    let declared = headers.len();
    assert_eq!(headers.count(), declared, "headers yield what they declare");
    assert_eq!(r.header_vec().len(), declared);
    if let Record::Legacy(l) = r {
        let _ = (l.compute_crc(), l.size_in_bytes());
    }
    if matches!(batch, Batch::V2(b) if b.is_control()) {
        if let Err(e) = ControlRecordKey::parse(r.key(), 0) {
            check_position(&e, len);
        }
        let _ = EndTxnMarker::parse(r.value(), 0);
    }
}

/// A random log entry: offset and a size field that covers exactly the random rest, the magic
/// at byte 16, optionally a correct CRC for the format, so parsing goes past the checksum.
fn entry_shaped() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<i64>(),
        prop_oneof![Just(0u8), Just(1u8), Just(2u8), any::<u8>()],
        vec(any::<u8>(), 0..400),
        any::<bool>(),
    )
        .prop_map(|(offset, magic, body, fix_crc)| {
            let mut e = Vec::with_capacity(17 + body.len());
            e.extend_from_slice(&offset.to_be_bytes());
            e.extend_from_slice(&(5 + body.len() as i32).to_be_bytes());
            e.extend_from_slice(&[0; 4]);
            e.push(magic);
            e.extend_from_slice(&body);
            if fix_crc {
                match magic {
                    2 if e.len() >= 21 => {
                        let c = krecords_codec::crc::crc32c(&e[21..]);
                        e[17..21].copy_from_slice(&c.to_be_bytes());
                    }
                    0 | 1 => {
                        let c = krecords_codec::crc::crc32(&e[16..]);
                        e[12..16].copy_from_slice(&c.to_be_bytes());
                    }
                    _ => {}
                }
            }
            e
        })
}

// ------------------------------------------------------------------ properties

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn v2_round_trip(s in v2_spec(NONE.to_vec())) {
        let bytes = build_v2(&s).expect("build");
        let batches = read_all(&bytes);
        prop_assert_eq!(batches.len(), 1);
        check_v2(&s, &batches[0]);
    }

    #[test]
    fn legacy_round_trip(s in legacy_spec(NONE.to_vec())) {
        let bytes = build_legacy(&s).expect("build");
        check_legacy(&s, &read_all(&bytes));
    }

    /// Entries of mixed magic, concatenated, come back in order and each as built.
    #[test]
    fn concatenated_entries_of_mixed_magic(specs in vec(spec(NONE.to_vec()), 1..5)) {
        let mut bytes = Vec::new();
        let mut ranges = Vec::new();
        for s in &specs {
            let start = bytes.len();
            bytes.extend_from_slice(&build(s).expect("build"));
            ranges.push(start..bytes.len());
        }
        let batches = read_all(&bytes);
        prop_assert_eq!(batches.len(), specs.iter().map(entry_count).sum::<usize>());
        let mut pos = 0;
        for b in &batches {
            prop_assert_eq!(b.position(), pos);
            prop_assert_eq!(b.as_bytes(), &bytes[pos..pos + b.size_in_bytes()]);
            pos += b.size_in_bytes();
        }
        let mut next = 0;
        for (s, range) in specs.iter().zip(ranges) {
            let n = entry_count(s);
            let mine = &batches[next..next + n];
            prop_assert_eq!(mine.first().unwrap().position(), range.start);
            prop_assert_eq!(mine.last().map(|b| b.position() + b.size_in_bytes()), Some(range.end));
            check_spec(s, mine);
            next += n;
        }
    }

    /// Any prefix yields exactly the complete entries and reports the rest as partial, never an
    /// error.
    #[test]
    fn prefixes_yield_complete_entries_and_a_partial_tail(
        specs in vec(spec(NONE.to_vec()), 1..4),
        cut in any::<Index>(),
    ) {
        let mut bytes = Vec::new();
        for s in &specs {
            bytes.extend_from_slice(&build(s).expect("build"));
        }
        let whole = read_all(&bytes);
        let cut = cut.index(bytes.len() + 1);
        let prefix = &bytes[..cut];
        let complete: Vec<&Batch<'_>> =
            whole.iter().filter(|b| b.position() + b.size_in_bytes() <= cut).collect();
        let mut entries = Entries::new(prefix);
        let got = entries.by_ref().collect::<Result<Vec<_>, _>>();
        let got = match got {
            Ok(g) => g,
            Err(e) => return Err(TestCaseError::fail(format!("prefix of {cut} bytes: {e}"))),
        };
        prop_assert_eq!(got.len(), complete.len());
        for (g, w) in got.iter().zip(&complete) {
            prop_assert_eq!(g.as_bytes(), w.as_bytes());
            prop_assert_eq!(g.position(), w.position());
        }
        let end = complete.last().map_or(0, |b| b.position() + b.size_in_bytes());
        prop_assert_eq!(entries.next_position(), end);
        match entries.partial() {
            None => prop_assert_eq!(end, cut),
            Some(p) => {
                prop_assert!(end < cut);
                prop_assert_eq!(p.position, end);
                prop_assert_eq!(p.bytes, cut - end);
                let cut_entry = whole.iter().find(|b| b.position() == end).unwrap();
                let declared = (p.bytes >= 12).then_some(cut_entry.size_in_bytes());
                prop_assert_eq!(p.declared_size, declared);
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..600)) {
        exercise(&bytes);
    }

    #[test]
    fn random_entries_never_panic(entries in vec(entry_shaped(), 1..4)) {
        exercise(&entries.concat());
    }

    /// A single corrupted byte anywhere in valid entries: no panic, errors inside the input.
    #[test]
    fn corrupted_entries_never_panic(
        specs in vec(spec(NONE.to_vec()), 1..4),
        at in any::<Index>(),
        flip in 1u8..=255,
    ) {
        let mut bytes = Vec::new();
        for s in &specs {
            bytes.extend_from_slice(&build(s).expect("build"));
        }
        let i = at.index(bytes.len());
        bytes[i] ^= flip;
        exercise(&bytes);
    }

    /// End-transaction markers (the control batches a transaction coordinator writes).
    #[test]
    fn control_batch_round_trip(
        base_offset in base_offset(),
        commit in any::<bool>(),
        coordinator_epoch in any::<i32>(),
        producer_id in 0..=i64::MAX,
        producer_epoch in 0..=i16::MAX,
        partition_leader_epoch in prop_oneof![Just(-1i32), 0..=i32::MAX],
        timestamp in 0..=i64::MAX / 2,
    ) {
        let kind = if commit { ControlRecordType::Commit } else { ControlRecordType::Abort };
        let key = ControlRecordKey { version: 0, kind }.to_bytes();
        let value = EndTxnMarker { version: 0, coordinator_epoch }.to_bytes();
        let mut b = V2Builder::new(base_offset)
            .producer(producer_id, producer_epoch, -1)
            .transactional(true)
            .control(true)
            .partition_leader_epoch(partition_leader_epoch);
        prop_assert_eq!(b.append_control(timestamp, &key, &value).unwrap(), base_offset);
        let bytes = b.finish().unwrap();
        let batches = read_all(&bytes);
        prop_assert_eq!(batches.len(), 1);
        let Batch::V2(v) = batches[0] else { panic!("not v2") };
        prop_assert!(v.is_control() && v.is_transactional());
        prop_assert_eq!(v.attributes(), 0x30);
        prop_assert_eq!((v.base_offset(), v.last_offset(), v.records_count()), (base_offset, base_offset, 1));
        prop_assert_eq!((v.raw_producer_id(), v.raw_producer_epoch(), v.raw_base_sequence()), (producer_id, producer_epoch, -1));
        prop_assert_eq!(v.raw_partition_leader_epoch(), partition_leader_epoch);
        prop_assert_eq!((v.base_timestamp(), v.max_timestamp()), (timestamp, timestamp));
        let mut scratch = Vec::new();
        let records = collect_records(&batches[0], &mut scratch);
        prop_assert_eq!(records.len(), 1);
        let k = ControlRecordKey::parse(records[0].key(), 0).unwrap();
        prop_assert_eq!((k.version, k.kind), (0, kind));
        prop_assert_eq!(EndTxnMarker::parse(records[0].value(), 0).unwrap().coordinator_epoch, coordinator_epoch);
        prop_assert_eq!(records[0].timestamp(), Some(timestamp));
        batches[0].validate().unwrap();
    }

    /// Record-less batches, as compaction leaves them (Kafka's `writeEmptyHeader`: base timestamp
    /// -1, max timestamp the given one).
    #[test]
    fn empty_batch_round_trip(
        base_offset in base_offset(),
        span in 0..=i32::MAX,
        partition_leader_epoch in prop_oneof![Just(-1i32), 0..=i32::MAX],
        log_append_time in any::<bool>(),
        timestamp in timestamp(),
        producer in producer(),
        control in any::<bool>(),
    ) {
        let (producer_id, producer_epoch, base_sequence, transactional) = match &producer {
            Some(p) => (p.id, p.epoch, p.base_sequence, p.transactional),
            None => (-1, -1, -1, false),
        };
        let timestamp_type = if log_append_time { TimestampType::LogAppendTime } else { TimestampType::CreateTime };
        let mut bytes = Vec::new();
        write::write_empty_batch(&mut bytes, &EmptyBatch {
            base_offset,
            last_offset: base_offset + i64::from(span),
            partition_leader_epoch,
            timestamp_type,
            timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            transactional,
            control,
        }).unwrap();
        prop_assert_eq!(bytes.len(), 61);
        let batches = read_all(&bytes);
        let Batch::V2(v) = batches[0] else { panic!("not v2") };
        prop_assert_eq!((v.base_offset(), v.last_offset_delta(), v.records_count()), (base_offset, span, 0));
        prop_assert_eq!(v.raw_partition_leader_epoch(), partition_leader_epoch);
        prop_assert_eq!(v.timestamp_type(), timestamp_type);
        prop_assert_eq!((v.is_transactional(), v.is_control()), (transactional, control));
        prop_assert_eq!((v.raw_producer_id(), v.raw_producer_epoch(), v.raw_base_sequence()), (producer_id, producer_epoch, base_sequence));
        prop_assert_eq!(v.max_timestamp(), timestamp);
        prop_assert_eq!(v.base_timestamp(), -1, "Kafka's writeEmptyHeader writes NO_TIMESTAMP as the base timestamp");
        prop_assert_eq!(v.last_sequence(), producer.as_ref().map(|p| model_sequence(p.base_sequence, i64::from(span))));
        let mut scratch = Vec::new();
        prop_assert_eq!(collect_records(&batches[0], &mut scratch).len(), 0);
        batches[0].validate().unwrap();
    }
}

proptest! {
    // Fewer cases: these compress and decompress.
    #![proptest_config(config(64))]

    #[test]
    fn v2_compressed_round_trip(s in v2_spec(CODECS.to_vec())) {
        let bytes = build_v2(&s).expect("build");
        let batches = read_all(&bytes);
        prop_assert_eq!(batches.len(), 1);
        check_v2(&s, &batches[0]);
    }

    #[test]
    fn legacy_compressed_round_trip(
        s in legacy_spec(vec![Compression::Gzip, Compression::Snappy, Compression::Lz4]),
    ) {
        let bytes = build_legacy(&s).expect("build");
        check_legacy(&s, &read_all(&bytes));
    }

    /// Mixed magic and codecs, with one corrupted byte: no panic, errors inside the input (for
    /// a compressed section, at its start).
    #[test]
    fn corrupted_compressed_entries_never_panic(
        specs in vec(spec(CODECS.to_vec()), 1..3),
        at in any::<Index>(),
        flip in 1u8..=255,
    ) {
        let mut bytes = Vec::new();
        for s in &specs {
            bytes.extend_from_slice(&build(s).expect("build"));
        }
        exercise(&bytes);
        let i = at.index(bytes.len());
        bytes[i] ^= flip;
        exercise(&bytes);
    }
}

// ------------------------------------------- setters interleaved with appends (issue 19)

/// A builder setter call, as the interleaving properties make them.
#[derive(Debug, Clone)]
enum SetterCall {
    Compression(Compression),
    /// `Some(t)`: LogAppendTime at `t`; `None`: back to CreateTime.
    LogAppendTime(Option<i64>),
    /// `None`: no producer (-1, -1, -1).
    Producer(Option<(i64, i16, i32)>),
    Transactional(bool),
    /// Only `false`: a data batch stays one (control batches take `append_control`).
    NotControl,
    PartitionLeaderEpoch(i32),
    DeleteHorizon(Option<i64>),
}

impl SetterCall {
    fn name(&self) -> &'static str {
        match self {
            SetterCall::Compression(_) => "compression",
            SetterCall::LogAppendTime(_) => "timestamp_type",
            SetterCall::Producer(_) => "producer",
            SetterCall::Transactional(_) => "transactional",
            SetterCall::NotControl => "control",
            SetterCall::PartitionLeaderEpoch(_) => "partition_leader_epoch",
            SetterCall::DeleteHorizon(_) => "delete_horizon_ms",
        }
    }

    fn apply(&self, b: V2Builder) -> V2Builder {
        match *self {
            SetterCall::Compression(c) => b.compression(c, None),
            SetterCall::LogAppendTime(Some(t)) => b.timestamp_type(TimestampType::LogAppendTime, t),
            SetterCall::LogAppendTime(None) => b.timestamp_type(TimestampType::CreateTime, -1),
            SetterCall::Producer(Some((id, epoch, seq))) => b.producer(id, epoch, seq),
            SetterCall::Producer(None) => b.producer(-1, -1, -1),
            SetterCall::Transactional(t) => b.transactional(t),
            SetterCall::NotControl => b.control(false),
            SetterCall::PartitionLeaderEpoch(e) => b.partition_leader_epoch(e),
            SetterCall::DeleteHorizon(d) => b.delete_horizon_ms(d),
        }
    }
}

fn setter_call(codecs: Vec<Compression>) -> impl Strategy<Value = SetterCall> {
    prop_oneof![
        prop::sample::select(codecs).prop_map(SetterCall::Compression),
        prop::option::of(0..=i64::MAX / 2).prop_map(SetterCall::LogAppendTime),
        prop::option::of((0..=i64::MAX, 0..=i16::MAX, 0..1000i32)).prop_map(SetterCall::Producer),
        any::<bool>().prop_map(SetterCall::Transactional),
        Just(SetterCall::NotControl),
        prop_oneof![Just(-1i32), 0..=i32::MAX].prop_map(SetterCall::PartitionLeaderEpoch),
        prop::option::of(0..=i64::MAX / 2).prop_map(SetterCall::DeleteHorizon),
    ]
}

/// Builds `s` with `calls` interleaved with the appends: what the builder returns.
fn build_v2_interleaved(s: &V2Spec, calls: &[(usize, SetterCall)]) -> Result<Vec<u8>, Error> {
    let mut b = V2Builder::new(s.base_offset);
    let offs = offsets(s.base_offset, &s.records);
    for i in 0..=s.records.len() {
        for (_, call) in calls.iter().filter(|(at, _)| *at == i) {
            b = call.apply(b);
        }
        let (Some(r), Some(&offset)) = (s.records.get(i), offs.get(i)) else {
            break;
        };
        let headers = header_refs(&r.headers);
        let record = write::NewRecord::new(r.timestamp, r.key.as_deref(), r.value.as_deref())
            .with_headers(&headers);
        b.append_with_offset(offset, &record)?;
    }
    b.finish()
}

/// What the builder must answer: refused naming the first setter that came after an append; or
/// refused as unencodable (transactional without a producer); or the spec the calls made before
/// the first append describe, to be read back exactly.
fn model_v2_interleaved(s: &V2Spec, calls: &[(usize, SetterCall)]) -> Result<V2Spec, Error> {
    if let Some((_, late)) = calls.iter().find(|(at, _)| *at > 0) {
        return Err(Error::ConfigAfterAppend {
            setter: late.name(),
        });
    }
    let mut m = V2Spec {
        codec: Compression::None,
        log_append_time: None,
        producer: None,
        partition_leader_epoch: -1,
        delete_horizon_ms: None,
        ..s.clone()
    };
    let (mut producer, mut transactional) = (None, false);
    for (_, call) in calls {
        match *call {
            SetterCall::Compression(c) => m.codec = c,
            SetterCall::LogAppendTime(t) => m.log_append_time = t,
            SetterCall::Producer(p) => producer = p,
            SetterCall::Transactional(t) => transactional = t,
            SetterCall::NotControl => {}
            SetterCall::PartitionLeaderEpoch(e) => m.partition_leader_epoch = e,
            SetterCall::DeleteHorizon(d) => m.delete_horizon_ms = d,
        }
    }
    m.producer = match producer {
        Some((id, epoch, base_sequence)) => Some(Producer {
            id,
            epoch,
            base_sequence,
            transactional,
        }),
        None if transactional => {
            return Err(Error::Unencodable {
                reason: "transactional batches need a producer id".into(),
            })
        }
        None => None,
    };
    Ok(m)
}

/// A legacy setter call: compression (`Err` for zstd is part of the model) or timestamp type.
#[derive(Debug, Clone)]
enum LegacyCall {
    Compression(Compression),
    LogAppendTime(Option<i64>),
}

fn legacy_call() -> impl Strategy<Value = LegacyCall> {
    prop_oneof![
        prop::sample::select(Compression::ALL.to_vec()).prop_map(LegacyCall::Compression),
        prop::option::of(0..=i64::MAX / 2).prop_map(LegacyCall::LogAppendTime),
    ]
}

fn build_legacy_interleaved(
    s: &LegacySpec,
    calls: &[(usize, LegacyCall)],
) -> Result<Vec<u8>, Error> {
    let mut b = LegacyBuilder::new(s.magic, s.base_offset)?;
    let offs = offsets(s.base_offset, &s.records);
    for i in 0..=s.records.len() {
        for (_, call) in calls.iter().filter(|(at, _)| *at == i) {
            b = match *call {
                LegacyCall::Compression(c) => b.compression(c, None)?,
                LegacyCall::LogAppendTime(Some(t)) => {
                    b.timestamp_type(TimestampType::LogAppendTime, t)
                }
                LegacyCall::LogAppendTime(None) => b.timestamp_type(TimestampType::CreateTime, -1),
            };
        }
        let (Some(r), Some(&offset)) = (s.records.get(i), offs.get(i)) else {
            break;
        };
        let record = write::NewRecord::new(r.timestamp, r.key.as_deref(), r.value.as_deref());
        b.append_with_offset(offset, &record)?;
    }
    b.finish()
}

fn model_legacy_interleaved(
    s: &LegacySpec,
    calls: &[(usize, LegacyCall)],
) -> Result<LegacySpec, Error> {
    let mut m = LegacySpec {
        codec: Compression::None,
        log_append_time: None,
        ..s.clone()
    };
    for (at, call) in calls {
        match *call {
            LegacyCall::Compression(_) if *at > 0 => {
                return Err(Error::ConfigAfterAppend {
                    setter: "compression",
                })
            }
            LegacyCall::Compression(c) if !c.allowed_in(s.magic) => {
                return Err(Error::UnsupportedCompression {
                    at: 0,
                    compression: c,
                    magic: s.magic,
                })
            }
            LegacyCall::Compression(c) => m.codec = c,
            // A late timestamp type is refused by the next append (or finish), which comes
            // before any later call.
            LegacyCall::LogAppendTime(_) if *at > 0 => {
                return Err(Error::ConfigAfterAppend {
                    setter: "timestamp_type",
                })
            }
            LegacyCall::LogAppendTime(t) => m.log_append_time = t.filter(|_| s.magic == 1),
        }
    }
    Ok(m)
}

/// Setter calls at random positions: each made before the record at its index (the number of
/// records: before finish); without `late_bias`, all before the first append (half the cases,
/// so that most builds succeed).
fn positions<T: Clone>(calls: &[(Index, T)], records: usize, late_bias: bool) -> Vec<(usize, T)> {
    let mut calls: Vec<(usize, T)> = calls
        .iter()
        .map(|(i, c)| (if late_bias { i.index(records + 1) } else { 0 }, c.clone()))
        .collect();
    // Calls happen in the order of their positions (a stable sort keeps the order at one).
    calls.sort_by_key(|(at, _)| *at);
    calls
}

proptest! {
    #![proptest_config(config(128))]

    /// Issue 19: random records with random setter calls interleaved. The builder either refuses
    /// (exactly when the model says: a setter after an append, or a transactional batch without
    /// a producer) or what it wrote reads back exactly as the calls before the first append say.
    #[test]
    fn v2_setters_interleaved_with_appends_are_refused_or_read_back_exactly(
        s in v2_spec(Compression::ALL.to_vec()),
        calls in vec((any::<Index>(), setter_call(Compression::ALL.to_vec())), 0..6),
        late_bias in any::<bool>(),
    ) {
        let calls = positions(&calls, s.records.len(), late_bias);
        let built = build_v2_interleaved(&s, &calls);
        match model_v2_interleaved(&s, &calls) {
            Err(expected) => prop_assert_eq!(built, Err(expected)),
            Ok(m) => {
                let bytes = built.expect("build");
                let batches = read_all(&bytes);
                prop_assert_eq!(batches.len(), 1);
                check_v2(&m, &batches[0]);
            }
        }
    }

    /// As above for the v0/v1 builder.
    #[test]
    fn legacy_setters_interleaved_with_appends_are_refused_or_read_back_exactly(
        s in legacy_spec(NONE.to_vec()),
        calls in vec((any::<Index>(), legacy_call()), 0..4),
        late_bias in any::<bool>(),
    ) {
        let calls = positions(&calls, s.records.len(), late_bias);
        let built = build_legacy_interleaved(&s, &calls);
        match model_legacy_interleaved(&s, &calls) {
            Err(expected) => prop_assert_eq!(built, Err(expected)),
            Ok(m) => {
                let bytes = built.expect("build");
                check_legacy(&m, &read_all(&bytes));
            }
        }
    }
}

/// The refusals of `validate` that Kafka's reader (and so `checked_records`) does not make.
fn strict_only(e: &Error) -> bool {
    let text = e.to_string();
    match e {
        Error::RecordCountMismatch { .. } => text.contains("last offset delta"),
        Error::InvalidRecord { .. } => text.contains("outside the batch"),
        Error::InvalidLength { what, .. } => *what == "message size",
        _ => false,
    }
}
