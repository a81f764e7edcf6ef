//! Aiven tiered-storage manifests: `SegmentManifest::parse_with_limit` on arbitrary bytes never
//! panics and allocates nothing sized by a claimed count (a 1 MiB cap on the decoded variable
//! chunk index); an accepted manifest is internally consistent (its chunks tile the original
//! file and the transformed object, checked for up to 4096 chunks) and writing it back with
//! `to_json` parses to the same manifest.
#![no_main]

use krecords_remote::manifest::SegmentManifest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(m) = SegmentManifest::parse_with_limit(data, 1 << 20) else {
        return;
    };
    let ci = &m.chunk_index;
    assert!(
        u64::from(ci.chunk_count()) * u64::from(ci.original_chunk_size())
            >= u64::from(ci.original_file_size())
    );
    if ci.chunk_count() <= 4096 {
        let (mut original, mut transformed) = (0u64, 0u64);
        for c in ci.chunks() {
            assert_eq!(
                (c.original_position, c.transformed_position),
                (original, transformed)
            );
            assert!(c.original_size > 0 && c.original_size <= ci.original_chunk_size());
            original += u64::from(c.original_size);
            transformed += u64::from(c.transformed_size);
        }
        assert_eq!(original, u64::from(ci.original_file_size()));
        assert_eq!(transformed, ci.transformed_size());
    }
    let text = m.to_json().expect("an accepted manifest writes back");
    let again =
        SegmentManifest::parse_with_limit(text.as_bytes(), 1 << 20).expect("its own JSON parses");
    assert_eq!(again, m);
});
