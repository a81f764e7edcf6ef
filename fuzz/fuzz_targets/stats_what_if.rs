//! `stats::Stats::input` and `what_if::of_entries` over arbitrary entries. Byte 0 chooses the
//! what-if batching (bit 0: 3 records per batch, else convert's batching) and the sample (bits
//! 1-2: all, or 1, 10, 100 records); the rest is the input.
//!
//! Never panics; the summary accounts for every byte (entries + truncated tail + bytes that
//! cannot be read = the input), the groups add up to the summary's entries and bytes, and the
//! what-if rows never take more input than the entries stats counted.
#![no_main]

use krecords_codec::read::Entries;
use krecords_codec::stats::Stats;
use krecords_codec::what_if::{self, Config};
use krecords_fuzz::LIMIT;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [choice, input @ ..] = data else {
        return;
    };
    let mut stats = Stats::new(LIMIT);
    stats.input(input);
    let s = stats.summary();
    assert_eq!(
        s.bytes + s.partial_bytes + s.invalid_bytes,
        input.len() as u64
    );
    let groups = stats.groups();
    assert_eq!(groups.iter().map(|g| g.entries).sum::<u64>(), s.entries);
    assert_eq!(groups.iter().map(|g| g.bytes).sum::<u64>(), s.bytes);

    let records_per_batch = (choice & 1 == 1).then_some(3);
    let Ok(targets) = what_if::targets(&[], records_per_batch, LIMIT) else {
        panic!("the default targets are valid");
    };
    let cfg = Config {
        decompress_limit: LIMIT,
        sample: [0, 1, 10, 100][usize::from((choice >> 1) & 3)],
        records_per_batch,
        ..Config::sizes_only()
    };
    if let Ok(report) = what_if::of_entries(&targets, &cfg, Entries::new(input)) {
        assert!(report.info.input_bytes <= s.bytes);
        assert_eq!(report.rows.len(), targets.len());
    }
});
