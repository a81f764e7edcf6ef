//! `OwnedRecord`: `Batch::owned_records` (slices of the input or of one decompressed buffer),
//! `Record::to_owned_in` and `Record::to_owned_record` (one copy), against the borrowed records.

use bytes::Bytes;
use krecords_codec::read::{Batch, Entries, OwnedHeader, OwnedRecord, Record};
use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, Error, Header, DEFAULT_DECOMPRESS_LIMIT};

const T0: i64 = 1_714_000_000_000;

/// A v2 batch with keys, null keys, tombstones, and headers with duplicate keys and null values.
fn v2(codec: Compression) -> Vec<u8> {
    let mut b = V2Builder::new(100).compression(codec, None);
    for i in 0..40i64 {
        let key = format!("key-{}", i % 7);
        let value = format!("value-{i}-{}", "x".repeat(i as usize));
        let headers = [
            Header {
                key: b"h",
                value: Some(key.as_bytes()),
            },
            Header {
                key: b"h",
                value: None,
            },
        ];
        let n = (i % 3) as usize;
        let rec = NewRecord::new(
            T0 + i,
            (i % 5 != 0).then_some(key.as_bytes()),
            (i % 4 != 0).then_some(value.as_bytes()),
        )
        .with_headers(&headers[..n]);
        b.append(&rec).unwrap();
    }
    b.finish().unwrap()
}

fn legacy(magic: u8, codec: Compression) -> Vec<u8> {
    let mut b = LegacyBuilder::new(magic, 7)
        .unwrap()
        .compression(codec, None)
        .unwrap();
    for i in 0..20i64 {
        let value = format!("legacy-{i}");
        let ts = if magic == 0 { -1 } else { T0 + i };
        b.append(&NewRecord::new(
            ts,
            Some(b"k"),
            (i % 3 != 0).then_some(value.as_bytes()),
        ))
        .unwrap();
    }
    b.finish().unwrap()
}

fn every_format() -> Vec<(String, Vec<u8>)> {
    let mut all = Vec::new();
    for codec in Compression::ALL {
        all.push((format!("v2 {codec}"), v2(codec)));
        for magic in [0, 1] {
            if codec.allowed_in(magic) {
                all.push((format!("v{magic} {codec}"), legacy(magic, codec)));
            }
        }
    }
    all
}

fn first(bytes: &[u8]) -> Batch<'_> {
    Entries::new(bytes).next().unwrap().unwrap()
}

/// What a borrowed record says, owned by plain vectors, to compare with.
fn expected(r: &Record<'_>) -> OwnedRecord {
    OwnedRecord {
        offset: r.offset(),
        timestamp: r.timestamp(),
        key: r.key().map(Bytes::copy_from_slice),
        value: r.value().map(Bytes::copy_from_slice),
        headers: r
            .headers()
            .map(|h| OwnedHeader {
                key: Bytes::copy_from_slice(h.key),
                value: h.value.map(Bytes::copy_from_slice),
            })
            .collect(),
    }
}

fn borrowed(bytes: &[u8]) -> Vec<OwnedRecord> {
    let mut scratch = Vec::new();
    first(bytes)
        .checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
        .unwrap()
        .map(|r| expected(&r.unwrap()))
        .collect()
}

fn inside(whole: &[u8], part: &[u8]) -> bool {
    let (w, p) = (whole.as_ptr() as usize, part.as_ptr() as usize);
    p >= w && p + part.len() <= w + whole.len()
}

fn slices(r: &OwnedRecord) -> Vec<Bytes> {
    let mut all: Vec<Bytes> = r.key.iter().chain(r.value.iter()).cloned().collect();
    for h in &r.headers {
        all.push(h.key.clone());
        all.extend(h.value.clone());
    }
    all.retain(|b| !b.is_empty());
    all
}

#[test]
fn owned_records_are_the_borrowed_records_in_every_format() {
    for (name, bytes) in every_format() {
        let want = borrowed(&bytes);
        assert!(!want.is_empty(), "{name}");
        let input = Bytes::from(bytes.clone());
        let owned = first(&input)
            .owned_records(&input, DEFAULT_DECOMPRESS_LIMIT)
            .unwrap();
        assert_eq!(owned, want, "{name}");
        // The same through the per-record conversions.
        let mut scratch = Vec::new();
        let batch = first(&input);
        let (copied, shared): (Vec<_>, Vec<_>) = batch
            .checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
            .unwrap()
            .map(|r| {
                let r = r.unwrap();
                (r.to_owned_record(), r.to_owned_in(&input))
            })
            .unzip();
        assert_eq!(copied, want, "{name}");
        assert_eq!(shared, want, "{name}");
    }
}

#[test]
fn records_of_an_uncompressed_entry_are_slices_of_the_input() {
    for bytes in [v2(Compression::None), legacy(1, Compression::None)] {
        let input = Bytes::from(bytes);
        let mut seen = 0;
        for batch in Entries::new(&input) {
            for r in batch
                .unwrap()
                .owned_records(&input, DEFAULT_DECOMPRESS_LIMIT)
                .unwrap()
            {
                for s in slices(&r) {
                    assert!(inside(&input, &s), "record {} was copied", r.offset);
                    seen += 1;
                }
            }
        }
        assert!(seen > 0);
    }
    // to_owned_in shares too.
    let input = Bytes::from(v2(Compression::None));
    let mut scratch = Vec::new();
    for r in first(&input)
        .checked_records(&mut scratch, 1 << 20)
        .unwrap()
    {
        for s in slices(&r.unwrap().to_owned_in(&input)) {
            assert!(inside(&input, &s));
        }
    }
}

#[test]
fn records_of_a_compressed_entry_share_one_decompressed_buffer() {
    for bytes in [
        v2(Compression::Gzip),
        v2(Compression::Lz4),
        v2(Compression::Zstd),
        v2(Compression::Snappy),
        legacy(1, Compression::Gzip),
        legacy(0, Compression::Lz4),
    ] {
        let mut scratch = Vec::new();
        let _ = first(&bytes)
            .records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
            .unwrap();
        let decompressed = scratch.len();
        let input = Bytes::from(bytes);
        let owned = first(&input)
            .owned_records(&input, DEFAULT_DECOMPRESS_LIMIT)
            .unwrap();
        let all: Vec<Bytes> = owned.iter().flat_map(slices).collect();
        assert!(all.len() > 2);
        let lo = all.iter().map(|b| b.as_ptr() as usize).min().unwrap();
        let hi = all
            .iter()
            .map(|b| b.as_ptr() as usize + b.len())
            .max()
            .unwrap();
        // One buffer of the decompressed size holds every slice (separate copies would be
        // scattered over the heap), and none is in the compressed input.
        assert!(hi - lo <= decompressed, "{} > {decompressed}", hi - lo);
        assert!(all.iter().all(|b| !inside(&input, b)));
    }
}

#[test]
fn owned_records_outlive_the_input_and_the_scratch_buffer() {
    for (name, bytes) in every_format() {
        let want = borrowed(&bytes);
        let input = Bytes::from(bytes);
        let owned = first(&input)
            .owned_records(&input, DEFAULT_DECOMPRESS_LIMIT)
            .unwrap();
        let mut copied = Vec::new();
        let mut scratch = Vec::new();
        for r in first(&input)
            .checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
            .unwrap()
        {
            copied.push(r.unwrap().to_owned_record());
        }
        drop(input);
        // Reuse the scratch buffer for something else: the copies must not depend on it.
        scratch.clear();
        scratch.resize(1 << 16, 0xAA);
        assert_eq!(owned, want, "{name}");
        assert_eq!(copied, want, "{name}");
    }
}

#[test]
fn an_input_that_does_not_hold_the_entry_gives_copies() {
    let bytes = v2(Compression::None);
    let unrelated = Bytes::from(vec![0u8; bytes.len()]);
    let owned = first(&bytes)
        .owned_records(&unrelated, DEFAULT_DECOMPRESS_LIMIT)
        .unwrap();
    assert_eq!(owned, borrowed(&bytes));
    for r in &owned {
        for s in slices(r) {
            assert!(!inside(&unrelated, &s) && !inside(&bytes, &s));
        }
    }
}

#[test]
fn owned_records_check_the_crc_and_the_limit() {
    for (name, mut bytes) in every_format() {
        // The last byte of the first entry (uncompressed v0/v1 write one entry per record).
        let last = first(&bytes).size_in_bytes() - 1;
        bytes[last] ^= 0x01;
        let input = Bytes::from(bytes);
        let e = first(&input)
            .owned_records(&input, DEFAULT_DECOMPRESS_LIMIT)
            .unwrap_err();
        assert!(matches!(e, Error::CrcMismatch { .. }), "{name}: {e}");
    }
    let input = Bytes::from(v2(Compression::Zstd));
    let e = first(&input).owned_records(&input, 16).unwrap_err();
    assert!(matches!(e, Error::DecompressLimit { .. }), "{e}");
}

#[test]
fn tombstones_and_null_keys_stay_null() {
    let input = Bytes::from(v2(Compression::Lz4));
    let owned = first(&input)
        .owned_records(&input, DEFAULT_DECOMPRESS_LIMIT)
        .unwrap();
    for r in &owned {
        let i = r.offset - 100;
        assert_eq!(r.is_tombstone(), i % 4 == 0, "offset {}", r.offset);
        assert_eq!(r.key.is_none(), i % 5 == 0, "offset {}", r.offset);
        assert_eq!(r.headers.len(), (i % 3) as usize);
    }
}
