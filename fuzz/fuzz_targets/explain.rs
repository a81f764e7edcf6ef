//! `krecords_codec::explain` on arbitrary bytes: the tolerant field walker behind `krec explain`
//! describes anything (damaged entries, truncated tails, bytes that are not Kafka data) without
//! a panic and without an allocation sized from a claimed length (libFuzzer's -malloc_limit_mb
//! catches those); every field it reports lies inside the input, or for decompressed fields
//! inside the 1 MiB of decompressed bytes it may make.
#![no_main]

use krecords_codec::explain::{Explainer, Item};
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let mut explainer = Explainer::new(LIMIT);
    let summary = explainer
        .explain_bytes(data, &mut |item: &Item<'_>| {
            if let Item::Field(f) = item {
                let bound = if f.at.decompressed { LIMIT } else { data.len() };
                assert!(f.at.pos.saturating_add(f.bytes.len()) <= bound, "{f:?}");
            }
            Ok(())
        })
        .expect("the callback never fails");
    assert!(summary.entries <= data.len() as u64 / 12 + 1);
});
