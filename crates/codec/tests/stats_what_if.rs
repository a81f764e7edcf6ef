//! `stats` and `what_if` on hostile input: entries damaged anywhere are counted, left out or
//! reported, never a panic; on intact input the groups add up to the summary and every row's
//! bytes are what `convert` writes.

use crate::proptests::config;
use krecords_codec::convert::convert;
use krecords_codec::read::Entries;
use krecords_codec::sample::{Content, Sample, SampleSpec};
use krecords_codec::stats::Stats;
use krecords_codec::what_if::{self, Config};
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};
use proptest::prelude::*;

/// A small sample of `magic` and `codec`, 7 records per entry.
fn sample(magic: u8, codec: Compression, seed: u64) -> Vec<u8> {
    let mut s = Sample::new(SampleSpec {
        magic,
        compression: codec,
        records: 20,
        value_size: 30,
        key_size: 4,
        headers: usize::from(magic == 2),
        records_per_batch: 7,
        content: Content::Text,
        seed,
        ..SampleSpec::default()
    });
    let mut out = Vec::new();
    while let Some(e) = s.next_entry() {
        out.extend_from_slice(e.expect("sample").0);
    }
    out
}

/// Stats over `bytes` as one input, the way `krec stats` feeds them.
fn stats_of(bytes: &[u8]) -> Stats {
    let mut stats = Stats::new(1 << 20);
    stats.input(bytes);
    stats
}

fn inputs() -> impl Strategy<Value = Vec<u8>> {
    (0u8..=2, 0usize..5, any::<u64>()).prop_map(|(magic, codec, seed)| {
        let codec = Compression::ALL[codec];
        let codec = if codec.allowed_in(magic) {
            codec
        } else {
            Compression::Gzip
        };
        sample(magic, codec, seed)
    })
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn damaged_entries_never_panic(
        input in inputs(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = input;
        for (at, x) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= x;
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        let stats = stats_of(&bytes);
        let s = stats.summary();
        let grouped: u64 = stats.groups().iter().map(|g| g.bytes).sum();
        prop_assert_eq!(grouped, s.bytes);
        prop_assert_eq!(s.bytes + s.partial_bytes + s.invalid_bytes, bytes.len() as u64);
        let targets = what_if::targets(&[], None, 1 << 20).expect("targets");
        let report = what_if::of_entries(&targets, &Config::sizes_only(), Entries::new(&bytes));
        if let Ok(report) = report {
            prop_assert!(report.info.input_bytes <= s.bytes);
        }
    }

    #[test]
    fn intact_input_adds_up_and_rows_are_what_convert_writes(input in inputs()) {
        let stats = stats_of(&input);
        let s = stats.summary();
        prop_assert!(!stats.has_problems());
        prop_assert_eq!(s.records, 20);
        prop_assert_eq!(s.bytes, input.len() as u64);
        for g in stats.groups() {
            prop_assert_eq!(
                g.batch_overhead_bytes + g.record_overhead_bytes + g.payload_bytes,
                g.uncompressed_bytes
            );
        }
        let targets = what_if::targets(&[(Compression::Zstd, 1)], Some(5), DEFAULT_DECOMPRESS_LIMIT)
            .expect("targets");
        let cfg = Config { records_per_batch: Some(5), ..Config::sizes_only() };
        let report = what_if::of_entries(&targets, &cfg, Entries::new(&input)).expect("report");
        prop_assert_eq!(report.info.records, 20);
        for (t, row) in targets.iter().zip(&report.rows) {
            let mut out = Vec::new();
            convert(&input, &t.options, &mut out).expect("convert");
            prop_assert_eq!(row.bytes, Some(out.len() as u64));
        }
    }
}
