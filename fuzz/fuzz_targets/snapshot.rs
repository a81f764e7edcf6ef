//! Producer state snapshot reader: `producer_state::parse_snapshot` on arbitrary bytes never
//! panics; it accepts only version 1 with a matching CRC-32C and a non-negative count that fits
//! the bytes; on success `encode_snapshot` of the entries parses to the same entries, and
//! reproduces the input exactly when the input has no bytes after the last entry (the format is
//! canonical up to trailing bytes, which Kafka's reader ignores but the CRC covers).
#![no_main]

use krecords_log::producer_state::{encode_snapshot, parse_snapshot};
use krecords_log::Error;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

const HEADER: usize = 10;
const ENTRY: usize = 46;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("/logs/t-0/00000000000000000000.snapshot");
    match parse_snapshot(path, data) {
        Ok(entries) => {
            assert!(data.len() >= HEADER);
            assert_eq!(i16::from_be_bytes([data[0], data[1]]), 1, "version");
            let count = i32::from_be_bytes([data[6], data[7], data[8], data[9]]);
            assert_eq!(usize::try_from(count).ok(), Some(entries.len()));
            assert!(HEADER + entries.len() * ENTRY <= data.len());
            let encoded = encode_snapshot(&entries);
            assert_eq!(encoded.len(), HEADER + entries.len() * ENTRY);
            let again = parse_snapshot(path, &encoded).expect("re-encoded snapshot parses");
            assert_eq!(
                again, entries,
                "re-encoded snapshot parses to other entries"
            );
            if data.len() == encoded.len() {
                assert_eq!(encoded, data, "canonical snapshot not reproduced");
            } else {
                // Trailing bytes: everything before them is the canonical encoding except the
                // CRC, which also covered the trailing bytes.
                assert_eq!(encoded[..2], data[..2]);
                assert_eq!(encoded[6..], data[..encoded.len()][6..]);
            }
        }
        Err(e) => {
            assert!(matches!(e, Error::CorruptFile { .. }), "{e:?}");
            let _ = e.to_string();
        }
    }
    // Encoding is total: a snapshot of entries read from the input bytes always parses back.
    let entries: Vec<_> = data
        .chunks_exact(ENTRY)
        .take(16)
        .map(|e| {
            let i64_at = |at: usize| i64::from_be_bytes(e[at..at + 8].try_into().unwrap());
            let i32_at = |at: usize| i32::from_be_bytes(e[at..at + 4].try_into().unwrap());
            krecords_log::producer_state::ProducerSnapshotEntry {
                producer_id: i64_at(0),
                producer_epoch: i16::from_be_bytes([e[8], e[9]]),
                last_sequence: i32_at(10),
                last_offset: i64_at(14),
                offset_delta: i32_at(22),
                timestamp: i64_at(26),
                coordinator_epoch: i32_at(34),
                current_txn_first_offset: i64_at(38),
            }
        })
        .collect();
    let encoded = encode_snapshot(&entries);
    assert_eq!(
        parse_snapshot(path, &encoded).expect("encoded parses"),
        entries
    );
});
