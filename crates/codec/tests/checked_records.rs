//! `Batch::checked_records`: the CRC and structure checks of `validate_with`, with the records,
//! from one decompression; and what `records` alone lets through.

use krecords_codec::read::{Batch, Entries, Record};
use krecords_codec::write::{LegacyBuilder, V2Builder};
use krecords_codec::{compression, crc, write, Compression, Error, DEFAULT_DECOMPRESS_LIMIT};

const T0: i64 = 1_714_000_000_000;

fn v2(codec: Compression) -> Vec<u8> {
    let mut b = V2Builder::new(10).compression(codec, None);
    for i in 0..50i64 {
        let value = format!("value-{i}");
        b.append(&write::NewRecord::new(
            T0 + i,
            Some(b"k"),
            Some(value.as_bytes()),
        ))
        .unwrap();
    }
    b.finish().unwrap()
}

fn first(bytes: &[u8]) -> Batch<'_> {
    Entries::new(bytes).next().unwrap().unwrap()
}

fn checked<'b>(batch: &Batch<'b>, scratch: &'b mut Vec<u8>) -> Result<Vec<Record<'b>>, Error> {
    batch
        .checked_records(scratch, DEFAULT_DECOMPRESS_LIMIT)?
        .collect()
}

fn unchecked<'b>(batch: &Batch<'b>, scratch: &'b mut Vec<u8>) -> Result<Vec<Record<'b>>, Error> {
    batch.records(scratch, DEFAULT_DECOMPRESS_LIMIT)?.collect()
}

#[test]
fn valid_batches_yield_what_records_yields() {
    for codec in Compression::ALL {
        let bytes = v2(codec);
        let batch = first(&bytes);
        let (mut s1, mut s2) = (Vec::new(), Vec::new());
        let got = checked(&batch, &mut s1).unwrap();
        assert_eq!(got.len(), 50);
        assert_eq!(got, unchecked(&batch, &mut s2).unwrap(), "{codec}");
    }
    for magic in [0, 1] {
        for codec in [Compression::None, Compression::Gzip, Compression::Lz4] {
            let mut b = LegacyBuilder::new(magic, 5)
                .unwrap()
                .compression(codec, None)
                .unwrap();
            for i in 0..3 {
                b.append(&write::NewRecord::new(T0 + i, None, Some(b"v")))
                    .unwrap();
            }
            let bytes = b.finish().unwrap();
            for batch in Entries::new(&bytes) {
                let batch = batch.unwrap();
                let (mut s1, mut s2) = (Vec::new(), Vec::new());
                assert_eq!(
                    checked(&batch, &mut s1).unwrap(),
                    unchecked(&batch, &mut s2).unwrap()
                );
            }
        }
    }
}

/// `records` does not check the CRC: a flipped value byte reads back as a different value.
/// `checked_records` refuses before the first record.
#[test]
fn a_corrupted_value_is_caught_by_the_crc() {
    let mut bytes = v2(Compression::None);
    let at = bytes.windows(7).position(|w| w == b"value-7").unwrap();
    bytes[at] = b'V';
    let batch = first(&bytes);
    let mut scratch = Vec::new();
    let records = unchecked(&batch, &mut scratch).unwrap();
    assert_eq!(
        records[7].value(),
        Some(&b"Value-7"[..]),
        "records() does not check"
    );
    let e = batch
        .checked_records(&mut Vec::new(), DEFAULT_DECOMPRESS_LIMIT)
        .unwrap_err();
    assert!(matches!(e, Error::CrcMismatch { at: 0, .. }), "{e:?}");
    assert_eq!(Err(e), batch.validate());
}

/// A record whose offset delta lies beyond the batch's last offset delta (CRC recomputed):
/// Kafka's reader takes it (differential tests, class "a" before this was aligned), so
/// `checked_records` reads it; `validate`, krecords' integrity check, refuses it.
#[test]
fn a_record_outside_the_batch_offsets_is_read_as_kafka_reads_it_and_fails_validate() {
    let mut b = V2Builder::new(0);
    b.append(&write::NewRecord::new(T0, None, Some(b"a")))
        .unwrap();
    b.append(&write::NewRecord::new(T0, None, Some(b"b")))
        .unwrap();
    let mut bytes = b.finish().unwrap();
    // Second record: length, attributes, timestamp delta 0, offset delta 1 (zigzag 2) -> 2.
    let second = 61 + 1 + usize::from(bytes[61] / 2);
    assert_eq!(&bytes[second..second + 4], &[2 * 7, 0, 0, 2]);
    bytes[second + 3] = 4;
    let c = crc::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&c.to_be_bytes());
    let batch = first(&bytes);

    let mut scratch = Vec::new();
    assert_eq!(unchecked(&batch, &mut scratch).unwrap()[1].offset(), 2);
    let offsets = crate::checked_offsets(&batch);
    assert_eq!(offsets, [0, 2]);
    let e = batch.validate().unwrap_err();
    assert!(e.to_string().contains("outside the batch's 0..=1"), "{e}");
}

/// A count the last offset delta cannot hold: Kafka's reader iterates the declared count, and
/// so does `checked_records`; `validate` refuses it up front (as the broker refuses such a
/// batch from a producer).
#[test]
fn a_count_beyond_the_last_offset_delta_is_read_and_fails_validate() {
    let mut bytes = v2(Compression::Lz4);
    bytes[23..27].copy_from_slice(&3i32.to_be_bytes());
    let c = crc::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&c.to_be_bytes());
    let batch = first(&bytes);
    let n = batch
        .checked_records(&mut Vec::new(), DEFAULT_DECOMPRESS_LIMIT)
        .unwrap()
        .filter(|r| r.is_ok())
        .count();
    assert_eq!(Some(n), batch.record_count());
    let e = batch.validate().unwrap_err();
    assert!(matches!(e, Error::RecordCountMismatch { .. }), "{e:?}");
}

/// A v1 gzip wrapper whose second inner message has a bad CRC (the wrapper's own CRC is fine).
#[test]
fn a_bad_inner_crc_is_an_error_in_its_place() {
    let mut b = LegacyBuilder::new(1, 0).unwrap();
    for v in [b"a", b"b", b"c"] {
        b.append(&write::NewRecord::new(T0, None, Some(v))).unwrap();
    }
    let mut inner = b.finish().unwrap();
    // Each message is 35 bytes (12 + 22 + the 1-byte value): the second one's value is byte 69.
    let len = inner.len() / 3;
    assert_eq!(inner[2 * len - 1], b'b');
    inner[2 * len - 1] = b'B';
    let mut value = Vec::new();
    compression::compress(Compression::Gzip, None, 1, &inner, &mut value).unwrap();
    let mut wrapper = Vec::new();
    wrapper.extend_from_slice(&2i64.to_be_bytes()); // last inner offset
    wrapper.extend_from_slice(&((22 + value.len()) as i32).to_be_bytes());
    wrapper.extend_from_slice(&[0; 4]);
    wrapper.push(1); // magic
    wrapper.push(Compression::Gzip.id());
    wrapper.extend_from_slice(&T0.to_be_bytes());
    wrapper.extend_from_slice(&(-1i32).to_be_bytes());
    wrapper.extend_from_slice(&(value.len() as i32).to_be_bytes());
    wrapper.extend_from_slice(&value);
    let c = crc::crc32(&wrapper[16..]);
    wrapper[12..16].copy_from_slice(&c.to_be_bytes());

    let batch = first(&wrapper);
    assert!(batch.is_crc_valid());
    let mut scratch = Vec::new();
    let values: Vec<_> = unchecked(&batch, &mut scratch)
        .unwrap()
        .iter()
        .map(|r| r.value().unwrap().to_vec())
        .collect();
    assert_eq!(values, [b"a".to_vec(), b"B".to_vec(), b"c".to_vec()]);
    let mut scratch = Vec::new();
    let mut it = batch
        .checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
        .unwrap();
    assert_eq!(it.next().unwrap().unwrap().offset(), 0);
    let e = it.next().unwrap().unwrap_err();
    assert!(
        matches!(&e, Error::CrcMismatch { at: 0, stored, computed } if stored != computed),
        "{e:?}"
    );
    assert!(it.next().is_none());
    assert_eq!(Err(e), batch.validate());
}

#[test]
fn the_decompression_limit_holds() {
    let bytes = v2(Compression::Zstd);
    let batch = first(&bytes);
    let e = batch.checked_records(&mut Vec::new(), 100).unwrap_err();
    assert!(
        matches!(e, Error::DecompressLimit { limit: 100, .. }),
        "{e:?}"
    );
}
