//! `krecords_arrow::PartitionScan` over an arbitrary segment file: the sources layer and the
//! Arrow conversion together. Byte 0 chooses the options: bit 0 read_committed, bit 1 a start
//! offset (byte 1), bit 2 an end offset (start + byte 2 + 1), bit 3 truncated tails allowed,
//! bits 4-6 the row limit (1..=8). Never panics; every record batch has the scan's schema and at
//! most the row limit, rows' offsets are inside the range and increase; after an error nothing
//! more comes.
#![no_main]

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use krecords_arrow::{Column, Options, PartitionScan, ScanOptions};
use krecords_source::{IsolationLevel, Position, Range, Sources};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [flags, a, b, bytes @ ..] = data else {
        return;
    };
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("00000000000000000000.log");
    if std::fs::write(&path, bytes).is_err() {
        return;
    }
    let start = (flags & 2 != 0).then_some(i64::from(*a));
    let end = (flags & 4 != 0).then(|| start.unwrap_or(0) + i64::from(*b) + 1);
    let max_rows = usize::from((flags >> 4) & 7) + 1;
    let options = ScanOptions {
        range: Range {
            start: start.map(Position::Offset),
            end: end.map(Position::Offset),
            count: None,
        },
        isolation: if flags & 1 != 0 {
            IsolationLevel::ReadCommitted
        } else {
            IsolationLevel::ReadUncommitted
        },
        batch: Options {
            columns: vec![Column::Offset, Column::Key, Column::Value, Column::Headers],
            max_rows,
            decompress_limit: 1 << 20,
            ..Options::default()
        },
        allow_truncated_tail: flags & 8 != 0,
    };
    let Ok(sources) = Sources::open(&[path], &mut || unreachable!()) else {
        return;
    };
    let Ok(mut scan) = PartitionScan::open(&sources, 0, &options) else {
        return;
    };
    let schema = scan.schema();
    let mut prev = i64::MIN;
    let mut failed = false;
    for batch in scan.by_ref() {
        assert!(!failed, "a record batch after an error");
        let Ok(batch) = batch else {
            failed = true;
            continue;
        };
        assert_eq!(batch.schema(), schema);
        assert!(batch.num_rows() <= max_rows);
        for &o in batch.column(0).as_primitive::<Int64Type>().values() {
            assert!(o >= start.unwrap_or(i64::MIN) && end.is_none_or(|e| o < e));
            assert!(o > prev || prev == i64::MIN, "offsets go back: {prev} then {o}");
            prev = o;
        }
    }
});
