//! `Log::fetch_into` (entries appended to the caller's buffer) against `Log::fetch`, and a
//! fetch's bytes shared as `bytes::Bytes` without a copy.

use crate::util::*;
use bytes::Bytes;
use krecords_codec::read::Entries;
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};
use krecords_log::{IsolationLevel, Log};

/// Several segments (small segment.bytes) of plain and compressed batches.
fn log(m: &Mem) -> Log {
    let mut log = m.create(&[("segment.bytes", "600")]);
    for i in 0..30 {
        let value = format!("value-{i}");
        if i % 3 == 0 {
            append(
                &mut log,
                &v2_compressed(Compression::Lz4, NOW, &[&value, "x"]),
            );
        } else {
            append(&mut log, &v2(NOW, &[&value]));
        }
    }
    assert!(
        log.segment_files().len() > 3,
        "{}",
        log.segment_files().len()
    );
    log
}

#[test]
fn fetch_into_appends_what_fetch_returns() {
    let m = mem();
    let log = log(&m);
    let prefix = b"already in the buffer".to_vec();
    for iso in [
        IsolationLevel::ReadUncommitted,
        IsolationLevel::ReadCommitted,
    ] {
        for offset in 0..=log.log_end_offset() {
            for max_bytes in [0, 1, 90, 400, 1000, 1 << 20] {
                let f = log.fetch(offset, max_bytes, iso).unwrap();
                let mut buf = prefix.clone();
                let info = log.fetch_into(offset, max_bytes, iso, &mut buf).unwrap();
                assert_eq!(&buf[..prefix.len()], &prefix[..]);
                assert_eq!(info.range, prefix.len()..buf.len());
                assert_eq!(
                    &buf[info.range.clone()],
                    &f.bytes[..],
                    "{offset} {max_bytes}"
                );
                assert_eq!(
                    (
                        info.next_offset,
                        info.high_watermark,
                        info.last_stable_offset
                    ),
                    (f.next_offset, f.high_watermark, f.last_stable_offset)
                );
                assert_eq!(info.log_start_offset, f.log_start_offset);
                assert_eq!(info.aborted_transactions, f.aborted_transactions);
            }
        }
    }
}

#[test]
fn one_buffer_serves_fetch_after_fetch() {
    let m = mem();
    let log = log(&m);
    let mut buf = Vec::with_capacity(1 << 16);
    let address = buf.as_ptr();
    let mut offset = 0;
    let mut values = 0;
    while offset < log.log_end_offset() {
        buf.clear();
        let info = log
            .fetch_into(offset, 300, IsolationLevel::ReadUncommitted, &mut buf)
            .unwrap();
        assert!(!info.range.is_empty());
        for b in Entries::new(&buf[info.range.clone()]) {
            values += b.unwrap().record_count().unwrap();
        }
        offset = info.next_offset;
        // The entries went into the buffer given, which never had to grow.
        assert_eq!(buf.as_ptr(), address);
    }
    assert_eq!(values as i64, log.log_end_offset());
}

#[test]
fn a_failed_fetch_into_leaves_the_buffer_alone() {
    let m = mem();
    let log = log(&m);
    let mut buf = b"keep".to_vec();
    let e = log
        .fetch_into(
            log.log_end_offset() + 1,
            1000,
            IsolationLevel::ReadUncommitted,
            &mut buf,
        )
        .unwrap_err();
    assert_eq!(e.kafka_name(), "OFFSET_OUT_OF_RANGE");
    assert_eq!(buf, b"keep");
}

#[test]
fn a_fetch_is_shared_as_bytes_without_a_copy() {
    let m = mem();
    let log = log(&m);
    let f = log
        .fetch(0, 1 << 20, IsolationLevel::ReadUncommitted)
        .unwrap();
    let address = f.bytes.as_ptr();
    let shared = Bytes::from(f.bytes);
    assert_eq!(
        shared.as_ptr(),
        address,
        "Bytes::from took the vector's allocation"
    );
    // Owned records of its uncompressed batches are slices of the same allocation.
    let mut owned = Vec::new();
    for b in Entries::new(&shared) {
        let b = b.unwrap();
        let plain = b.compression().unwrap() == Compression::None;
        for r in b.owned_records(&shared, DEFAULT_DECOMPRESS_LIMIT).unwrap() {
            let v = r.value.clone().unwrap();
            let inside = v.as_ptr() as usize >= address as usize
                && v.as_ptr() as usize + v.len() <= address as usize + shared.len();
            assert_eq!(inside, plain);
            owned.push(r);
        }
    }
    assert_eq!(owned.len() as i64, log.log_end_offset());
    let clone = shared.clone();
    drop(shared);
    assert_eq!(clone.as_ptr(), address);
}
