//! Regression tests, each named after the bug it pins (as ripgrep's `tests/regression.rs`).
//!
//! Expected values follow Apache Kafka's Java client; where Kafka's arithmetic wraps (Java ints
//! and longs), so must ours, without panicking.

use krecords_codec::read::v2::increment_sequence;
use krecords_codec::read::{Batch, Entries};
use krecords_codec::write::{self, EmptyBatch, NewRecord, V2Builder};
use krecords_codec::{crc, varint, Compression, Error, TimestampType, DEFAULT_DECOMPRESS_LIMIT};

/// A v2 batch written by hand: `count` records in `records`, CRC-32C computed.
fn v2_batch(base_sequence: i32, last_offset_delta: i32, count: i32, records: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0i64.to_be_bytes()); // base offset
    b.extend_from_slice(&((49 + records.len()) as i32).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes()); // partition leader epoch
    b.push(2);
    b.extend_from_slice(&[0; 4]); // crc
    b.extend_from_slice(&0i16.to_be_bytes()); // attributes
    b.extend_from_slice(&last_offset_delta.to_be_bytes());
    b.extend_from_slice(&1714000000000i64.to_be_bytes());
    b.extend_from_slice(&1714000000000i64.to_be_bytes());
    b.extend_from_slice(&7i64.to_be_bytes()); // producer id
    b.extend_from_slice(&1i16.to_be_bytes()); // producer epoch
    b.extend_from_slice(&base_sequence.to_be_bytes());
    b.extend_from_slice(&count.to_be_bytes());
    b.extend_from_slice(records);
    let c = crc::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&c.to_be_bytes());
    b
}

/// One record body with the given offset delta, null key, value "v", no headers.
fn record(offset_delta: i32) -> Vec<u8> {
    let mut body = vec![0u8]; // attributes
    varint::write_varlong(&mut body, 0); // timestamp delta
    varint::write_varint(&mut body, offset_delta);
    varint::write_varint(&mut body, -1); // null key
    varint::write_varint(&mut body, 1);
    body.push(b'v');
    varint::write_varint(&mut body, 0); // no headers
    let mut r = Vec::new();
    varint::write_varint(&mut r, body.len() as i32);
    r.extend_from_slice(&body);
    r
}

/// `increment_sequence` computed `i32::MAX - increment`, which overflows (a panic in debug builds)
/// for a negative increment. Hostile input reaches it through `V2Batch::last_sequence` (a negative
/// last offset delta) and through every record of a batch with a base sequence (a negative offset
/// delta). Kafka's `DefaultRecordBatch.incrementSequence` uses Java int arithmetic, which wraps:
/// incrementSequence(0, -1) = Integer.MAX_VALUE.
#[test]
fn increment_sequence_wraps_like_java_for_negative_increments() {
    assert_eq!(increment_sequence(0, -1), i32::MAX);
    // Java: MAX - MIN wraps to -1; 5 > -1, so MIN - (MAX - 5) - 1, which wraps to 5.
    assert_eq!(increment_sequence(5, i32::MIN), 5);
    // The documented positive wrap still holds.
    assert_eq!(increment_sequence(i32::MAX, 1), 0);
    assert_eq!(increment_sequence(i32::MAX - 7, 20), 12);
}

/// See [`increment_sequence_wraps_like_java_for_negative_increments`]: a CRC-valid record-less
/// batch with last offset delta -1 and base sequence 0.
#[test]
fn last_sequence_of_a_negative_last_offset_delta_does_not_panic() {
    let bytes = v2_batch(0, -1, 0, &[]);
    let batch = Entries::new(&bytes).next().unwrap().unwrap();
    let Batch::V2(b) = batch else {
        panic!("not v2")
    };
    assert_eq!(b.last_sequence(), Some(i32::MAX));
}

/// See [`increment_sequence_wraps_like_java_for_negative_increments`]: a record with offset delta
/// -1 in a batch with base sequence 0. Reading must not panic; `validate()` rejects the delta.
#[test]
fn record_sequence_of_a_negative_offset_delta_does_not_panic() {
    let bytes = v2_batch(0, 0, 1, &record(-1));
    let batch = Entries::new(&bytes).next().unwrap().unwrap();
    let mut scratch = Vec::new();
    let records = crate::all_records(&batch, &mut scratch);
    assert_eq!(records[0].offset(), -1);
    let krecords_codec::read::Record::V2(r) = records[0] else {
        panic!("not v2")
    };
    assert_eq!(r.sequence, Some(i32::MAX));
    assert!(matches!(batch.validate(), Err(Error::InvalidRecord { .. })));
}

/// `V2Records::next_record` reported "records still remaining" as
/// `RecordCountMismatch { declared: 0, .. }`, so the message read "header declares 0 records";
/// `declared` should be the header's count.
#[test]
fn records_remaining_error_reports_the_declared_count() {
    let mut records = record(0);
    records.push(0); // one byte no record accounts for
    let bytes = v2_batch(-1, 0, 1, &records);
    let batch = Entries::new(&bytes).next().unwrap().unwrap();
    let e = batch.validate().unwrap_err();
    assert!(
        matches!(
            e,
            Error::RecordCountMismatch {
                at: 0,
                declared: 1,
                ..
            }
        ),
        "{e:?}: {e}"
    );
}

/// Kafka's `DefaultRecordBatch.writeEmptyHeader` (what compaction keeps of a batch whose records
/// are all gone) writes NO_TIMESTAMP (-1) as the base timestamp and the given timestamp as the max;
/// `write_empty_batch` wrote the timestamp into both. These bytes are `MemoryRecords.filterTo`
/// output from Kafka 4.4.0 (kafka-java vector `v2_none_compacted_empty`).
#[test]
fn write_empty_batch_writes_no_timestamp_as_base_timestamp() {
    let kafka = "00000000000001f4000000310000000402d216381c000000000002ffffffffffffffff\
                 0000018f125c7402000000000012d68700050000000a00000000";
    let mut ours = Vec::new();
    write::write_empty_batch(
        &mut ours,
        &EmptyBatch {
            base_offset: 500,
            last_offset: 502,
            partition_leader_epoch: 4,
            timestamp_type: TimestampType::CreateTime,
            timestamp: 1714000000002,
            producer_id: 1234567,
            producer_epoch: 5,
            base_sequence: 10,
            transactional: false,
            control: false,
        },
    )
    .unwrap();
    assert_eq!(hex::encode(&ours), kafka);
}

/// `V2Builder::compression` drops the reserved 61-byte header when a codec is set, and does not
/// put it back when the codec is set to none again, so the header was then written over the first
/// record.
#[test]
fn v2_builder_compression_reset_to_none_keeps_the_header_space() {
    let mut b = V2Builder::new(0)
        .compression(Compression::Gzip, None)
        .compression(Compression::None, None);
    b.append(&NewRecord::new(1714000000000, Some(b"key"), Some(b"value")))
        .unwrap();
    let bytes = b.finish().unwrap();
    let mut plain = V2Builder::new(0);
    plain
        .append(&NewRecord::new(1714000000000, Some(b"key"), Some(b"value")))
        .unwrap();
    assert_eq!(hex::encode(&bytes), hex::encode(plain.finish().unwrap()));
}

/// A minimal gzip member holding `data` in one stored deflate block, written by hand so this
/// test does not depend on the compression module's writer.
fn gzip_stored(data: &[u8]) -> Vec<u8> {
    // gzip and deflate store these fields little-endian (RFC 1951, 1952).
    fn le(v: u32, n: usize) -> Vec<u8> {
        (0..n).map(|i| (v >> (8 * i)) as u8).collect()
    }
    let len = data.len() as u32;
    let mut g = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    g.push(1); // BFINAL, stored
    g.extend_from_slice(&le(len, 2));
    g.extend_from_slice(&le(!len & 0xffff, 2));
    g.extend_from_slice(data);
    g.extend_from_slice(&le(crc::crc32(data), 4));
    g.extend_from_slice(&le(len, 4));
    g
}

/// A v0/v1 message with its 12-byte prefix.
fn legacy_message(offset: i64, magic: u8, attributes: u8, value: &[u8]) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&offset.to_be_bytes());
    m.extend_from_slice(&[0; 4]); // size
    m.extend_from_slice(&[0; 4]); // crc
    m.push(magic);
    m.push(attributes);
    if magic == 1 {
        m.extend_from_slice(&0i64.to_be_bytes());
    }
    m.extend_from_slice(&(-1i32).to_be_bytes()); // null key
    m.extend_from_slice(&(value.len() as i32).to_be_bytes());
    m.extend_from_slice(value);
    let size = (m.len() - 12) as i32;
    m[8..12].copy_from_slice(&size.to_be_bytes());
    let c = crc::crc32(&m[16..]);
    m[12..16].copy_from_slice(&c.to_be_bytes());
    m
}

/// `LegacyBatch::records` computed the absolute base of a v1 wrapper as
/// `wrapper offset - last inner offset` with `-`, which overflows (a panic in debug builds) for a
/// wrapper offset near i64::MAX and a negative inner offset. Kafka's
/// `AbstractLegacyRecordBatch.DeepRecordsIterator` uses Java long arithmetic, which wraps:
/// base = i64::MAX - (-1) = i64::MIN, inner offset = i64::MIN + (-1) = i64::MAX.
///
/// Needs gzip decompression (fails with "not implemented yet" until the compression work lands).
#[test]
fn legacy_wrapper_offset_arithmetic_wraps_like_java() {
    let inner = legacy_message(-1, 1, 0, b"x");
    let wrapper = legacy_message(i64::MAX, 1, 1, &gzip_stored(&inner));
    let batch = Entries::new(&wrapper).next().unwrap().unwrap();
    let mut scratch = Vec::new();
    let records = crate::all_records(&batch, &mut scratch);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].offset(), i64::MAX);
}

/// `check_append` (write/mod.rs) tested the offset range with `offset.wrapping_sub(base_offset)`,
/// which let base offset i64::MIN with offset i64::MAX through (the wrapped difference is -1);
/// the builders then computed `offset - base_offset` unchecked and panicked on the overflow.
/// Fixed in 6fc3057; this pins it through the public builders.
#[test]
fn builders_reject_offset_ranges_beyond_i64_instead_of_panicking() {
    let mut v2 = V2Builder::new(i64::MIN);
    let r = v2.append_with_offset(i64::MAX, &NewRecord::new(0, None, None));
    assert!(matches!(r, Err(Error::Unencodable { .. })), "{r:?}");
    let mut v1 = write::LegacyBuilder::new(1, i64::MIN).unwrap();
    let r = v1.append_with_offset(i64::MAX, &NewRecord::new(0, None, None));
    assert!(matches!(r, Err(Error::Unencodable { .. })), "{r:?}");
}

// ------------------------------------------------- issue 19: setters after append
//
// Written against behaviour only (refused, or read back exactly), so that they also build against
// the builders before the fix and fail there; `builder_config.rs` pins the error variant.

fn hello() -> NewRecord<'static> {
    NewRecord::new(1_714_000_000_000, None, Some(b"hello"))
}

/// What one record must read back as: offset, timestamp, value.
type Expected<'a> = (i64, i64, &'a [u8]);

/// The builder's output is either refused, or a valid batch holding exactly `expected`, of the
/// kind (data or control) the records were appended as, with no delete horizon shifting them.
fn refused_or_reads_back(r: Result<Vec<u8>, Error>, expected: &[Expected<'_>], control: bool) {
    let Ok(bytes) = r else { return };
    let batches: Vec<Batch<'_>> = Entries::new(&bytes)
        .collect::<Result<_, _>>()
        .expect("entries");
    let mut scratch = Vec::new();
    let mut got = Vec::new();
    for batch in &batches {
        batch
            .validate()
            .expect("a batch the builder finished validates");
        if let Batch::V2(v) = batch {
            assert_eq!(v.is_control(), control, "control flag of the batch");
        }
        for r in batch
            .records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
            .unwrap()
        {
            let r = r.unwrap();
            got.push((
                r.offset(),
                r.timestamp().unwrap_or(-1),
                r.value().unwrap_or(&[]).to_vec(),
            ));
        }
    }
    let expected: Vec<_> = expected
        .iter()
        .map(|&(o, t, v)| (o, t, v.to_vec()))
        .collect();
    assert_eq!(got, expected, "the records appended");
}

/// Issue 19: `compression(..)` after an append moved where the builder writes records without
/// moving the record already written, so `finish()` returned a batch whose CRC was valid but whose
/// records section was empty (validate(): RecordCountMismatch).
#[test]
fn v2_builder_compression_after_append_is_refused_not_an_empty_records_section() {
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut b = V2Builder::new(0);
        b.append(&hello()).unwrap();
        let r = b.compression(codec, None).finish();
        refused_or_reads_back(r, &[(0, 1_714_000_000_000, b"hello")], false);
    }
}

/// Issue 19, the other way round: gzip (or any codec), append, then `compression(None)`:
/// `finish()` returned an empty buffer, the record gone without an error.
#[test]
fn v2_builder_compression_reset_after_append_does_not_drop_the_records() {
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut b = V2Builder::new(0).compression(codec, None);
        b.append(&hello()).unwrap();
        let r = b.compression(Compression::None, None).finish();
        refused_or_reads_back(r, &[(0, 1_714_000_000_000, b"hello")], false);
    }
}

/// Issue 19: `delete_horizon_ms(..)` after an append made the horizon the base timestamp of
/// deltas computed from the first record's timestamp, shifting every record's timestamp (and
/// `validate()` passed).
#[test]
fn v2_builder_delete_horizon_after_append_does_not_shift_timestamps() {
    let mut b = V2Builder::new(0);
    b.append(&hello()).unwrap();
    b.append(&NewRecord::new(1_714_000_000_005, None, Some(b"world")))
        .unwrap();
    let r = b.delete_horizon_ms(Some(1_000)).finish();
    refused_or_reads_back(
        r,
        &[
            (0, 1_714_000_000_000, b"hello"),
            (1, 1_714_000_000_005, b"world"),
        ],
        false,
    );
}

/// Issue 19: `control(true)` after a data append made a control batch holding a data record (and
/// `control(false)` after a control record a data batch holding a control record).
#[test]
fn v2_builder_control_after_append_does_not_mix_data_and_control_records() {
    let mut b = V2Builder::new(0);
    b.append(&hello()).unwrap();
    let b = b.control(true);
    refused_or_reads_back(b.finish(), &[(0, 1_714_000_000_000, b"hello")], false);

    let mut b = V2Builder::new(0).producer(7, 0, -1).control(true);
    b.append_control(5, &[0, 0, 0, 1], &[0; 6]).unwrap();
    refused_or_reads_back(b.control(false).finish(), &[(0, 5, &[0; 6])], true);
}

/// Issue 19, legacy side: a v1 wrapper's inner offsets are relative, plain entries' absolute, so
/// `compression(None)` after appending to a gzip builder at base offset 100 wrote the record at
/// offset 0.
#[test]
fn legacy_builder_compression_after_append_does_not_move_offsets() {
    for (from, to) in [
        (Compression::Gzip, Compression::None),
        (Compression::None, Compression::Gzip),
    ] {
        for magic in [0, 1] {
            let mut b = write::LegacyBuilder::new(magic, 100)
                .unwrap()
                .compression(from, None)
                .unwrap();
            b.append(&hello()).unwrap();
            let r = b.compression(to, None).and_then(|b| b.finish());
            let ts = if magic == 0 { -1 } else { 1_714_000_000_000 };
            refused_or_reads_back(r, &[(100, ts, b"hello")], false);
        }
    }
}

/// Issue 19: `write::set_base_offset` moves a batch (v2 and plain v0/v1), the CRC untouched and
/// still valid, the records with it; refuses what it cannot move without changing the bytes.
#[test]
fn set_base_offset_moves_batches_without_touching_the_crc() {
    use krecords_codec::write::{set_base_offset, LegacyBuilder};
    use krecords_codec::Compression;
    for codec in Compression::ALL {
        let mut b = V2Builder::new(5).compression(codec, None).producer(3, 1, 0);
        for v in [b"a", b"b", b"c"] {
            b.append(&NewRecord::new(1_714_000_000_000, None, Some(v)))
                .unwrap();
        }
        let original = b.finish().unwrap();
        let mut moved = original.clone();
        set_base_offset(&mut moved, 1_000_000).unwrap();
        assert_eq!(
            moved[8..],
            original[8..],
            "{codec}: only the offset field changes"
        );
        let batch = krecords_codec::read::Entries::new(&moved)
            .next()
            .unwrap()
            .unwrap();
        batch.validate().unwrap();
        let offsets = crate::checked_offsets(&batch);
        assert_eq!(offsets, [1_000_000, 1_000_001, 1_000_002], "{codec}");
        // Overflowing the last offset, negative offsets: refused, bytes unchanged.
        for bad in [i64::MAX - 1, -1] {
            let mut copy = moved.clone();
            assert!(set_base_offset(&mut copy, bad).is_err());
            assert_eq!(copy, moved);
        }
    }
    let mut plain = LegacyBuilder::new(1, 7).unwrap();
    plain
        .append(&NewRecord::new(1_714_000_000_000, None, Some(b"x")))
        .unwrap();
    let mut plain = plain.finish().unwrap();
    set_base_offset(&mut plain, 42).unwrap();
    let batch = krecords_codec::read::Entries::new(&plain)
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(
        (batch.first_offset(), batch.is_crc_valid()),
        (Some(42), true)
    );
    let mut wrapper = LegacyBuilder::new(1, 7)
        .unwrap()
        .compression(Compression::Gzip, None)
        .unwrap();
    wrapper
        .append(&NewRecord::new(1_714_000_000_000, None, Some(b"x")))
        .unwrap();
    let wrapper = wrapper.finish().unwrap();
    let mut copy = wrapper.clone();
    assert!(set_base_offset(&mut copy, 42).is_err());
    assert_eq!(copy, wrapper);
    assert!(set_base_offset(&mut [0u8; 10], 1).is_err());
    let mut short = original_v2_header_only();
    assert!(set_base_offset(&mut short, 1).is_err());
}

fn original_v2_header_only() -> Vec<u8> {
    let mut b = V2Builder::new(0);
    b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"x")))
        .unwrap();
    let mut bytes = b.finish().unwrap();
    bytes.truncate(40);
    bytes
}

/// Found by the `entries` fuzz target: in a zstd batch, a record whose offset delta lies outside
/// the batch's range was reported at its position in the *decompressed* records (byte 0), not
/// inside the batch. The error now points at the compressed records section, as every other
/// error from decompressed records does.
#[test]
fn offset_delta_error_in_compressed_records_points_into_the_batch() {
    let input =
        include_bytes!("../../../fuzz/regressions/entries/offset-delta-in-compressed-records");
    let base = 1_000_003;
    let mut scratch = Vec::new();
    let mut seen = 0;
    for batch in Entries::with_base(input, base) {
        let Ok(batch) = batch else { break };
        let (lo, hi) = (batch.position(), batch.position() + batch.size_in_bytes());
        if let Err(e) = batch.validate_with(&mut scratch, DEFAULT_DECOMPRESS_LIMIT) {
            seen += 1;
            let at = e.position().expect("a reader error has a position");
            assert!(
                (lo..hi).contains(&at),
                "error at {at} outside {lo}..{hi}: {e}"
            );
            assert!(e.to_string().contains("in the decompressed records"), "{e}");
        }
    }
    assert_eq!(seen, 1, "the input's one batch is refused");
}
