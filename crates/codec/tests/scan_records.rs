//! `V2Batch::scan_records` against the full record iteration (`uncompressed_records`) on random
//! valid and corrupted batches: the scan succeeds exactly when every record parses, with the same
//! count and max timestamp.

use crate::proptests::config;
use krecords_codec::read::{Batch, Entries, RecordsScan, V2Batch};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::Header;
use proptest::collection::vec;
use proptest::prelude::*;

type Rec = (
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(Vec<u8>, Option<Vec<u8>>)>,
);

fn rec() -> impl Strategy<Value = Rec> {
    (
        prop_oneof![
            Just(-1i64),
            0..10_000_000i64,
            1_700_000_000_000i64..1_800_000_000_000
        ],
        prop::option::of(vec(any::<u8>(), 0..40)),
        prop::option::of(prop_oneof![
            vec(any::<u8>(), 0..40),
            vec(any::<u8>(), 200..3000)
        ]),
        vec(
            (
                vec(any::<u8>(), 0..8),
                prop::option::of(vec(any::<u8>(), 0..8)),
            ),
            0..3,
        ),
    )
}

fn build(records: &[Rec]) -> Vec<u8> {
    let mut b = V2Builder::new(100);
    for (ts, k, v, h) in records {
        let headers: Vec<Header<'_>> = h
            .iter()
            .map(|(k, v)| Header {
                key: k,
                value: v.as_deref(),
            })
            .collect();
        let r = NewRecord::new(*ts, k.as_deref(), v.as_deref()).with_headers(&headers);
        b.append(&r).unwrap();
    }
    b.finish().unwrap()
}

/// The full iteration's answer, with the same rule as the visitor.
fn full(v: &V2Batch<'_>, keyed_only: bool) -> Option<RecordsScan> {
    let mut scan = RecordsScan {
        count: 0,
        max_timestamp: -1,
    };
    for r in v.uncompressed_records().ok()? {
        let r = r.ok()?;
        if keyed_only && r.key.is_none() {
            return None;
        }
        scan.count += 1;
        scan.max_timestamp = scan.max_timestamp.max(r.timestamp);
    }
    Some(scan)
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn the_scan_agrees_with_the_full_parser(
        records in vec(rec(), 1..8),
        damage in vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
        keyed_only in any::<bool>(),
    ) {
        let mut bytes = build(&records);
        // Damage the records section only, so the batch header still parses.
        let section = krecords_codec::layout::v2::RECORDS_OFFSET..bytes.len();
        for (i, b) in &damage {
            let at = section.start + i.index(section.len());
            bytes[at] = *b;
        }
        let Some(Ok(Batch::V2(v))) = Entries::new(&bytes).next() else {
            panic!("the header is intact");
        };
        let scan = v.scan_records(|r| !keyed_only || r.key.is_some());
        prop_assert_eq!(scan, full(&v, keyed_only));
        if damage.is_empty() {
            let expected_max = records.iter().map(|r| r.0).max().unwrap().max(-1);
            let fine = !keyed_only || records.iter().all(|r| r.1.is_some());
            let expected = fine.then_some(RecordsScan { count: records.len(), max_timestamp: expected_max });
            prop_assert_eq!(scan, expected);
        }
    }
}

#[test]
fn a_compressed_batch_is_not_scanned() {
    let mut b = V2Builder::new(0).compression(krecords_codec::Compression::Lz4, None);
    b.append(&NewRecord::new(5, None, Some(b"x"))).unwrap();
    let bytes = b.finish().unwrap();
    let Some(Ok(Batch::V2(v))) = Entries::new(&bytes).next() else {
        panic!()
    };
    assert_eq!(v.scan_records(|_| true), None);
}
