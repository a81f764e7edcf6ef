//! Scans through the sources layer: pushdown of offset and time ranges (only the segments that
//! hold them are opened), read_committed as the log's consumer sees it, corrupt segments.

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use krecords_arrow::{BytesFormat, Column, Options, PartitionScan, Scan, ScanError, ScanOptions};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_log::{AppendOrigin, IsolationLevel, Log, LogConfig};
use krecords_source::{ErrorClass, Position, Range, Sources};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

const T0: i64 = 1_714_000_000_000;

/// A log of `batches` (records, transactional, aborted); record `o` has timestamp `T0 + 10 * o`
/// and value `v{o}`. Small segments: many files. Returns the high watermark.
fn write_log(dir: &Path, batches: &[(usize, bool, bool)]) -> i64 {
    let config = LogConfig::from_pairs([("segment.bytes", "2048")]).unwrap();
    let mut log = Log::create(dir, config).unwrap();
    let mut next = 0i64;
    let mut seq = 0;
    for &(n, txn, abort) in batches {
        let mut b = V2Builder::new(0);
        if txn {
            b = b.producer(7, 0, seq).transactional(true);
            seq += i32::try_from(n).unwrap();
        }
        for i in 0..n {
            let o = next + i as i64;
            let value = format!("v{o}");
            b.append(&NewRecord::new(T0 + 10 * o, None, Some(value.as_bytes())))
                .unwrap();
        }
        let info = log
            .append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
        next = info.last_offset + 1;
        if txn {
            let m = log.append_end_txn(7, 0, 0, !abort, T0 + 10 * next).unwrap();
            next = m.last_offset + 1;
        }
    }
    log.close().unwrap();
    next
}

fn options(range: Range, isolation: IsolationLevel) -> ScanOptions {
    ScanOptions {
        range,
        isolation,
        batch: Options {
            columns: vec![Column::Offset, Column::Value],
            value_format: BytesFormat::String,
            max_rows: 7,
            ..Options::default()
        },
        ..ScanOptions::default()
    }
}

/// The (offset, value) rows of record batches of `options`' columns.
fn rows(batches: &[RecordBatch]) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    for b in batches {
        let offsets = b.column(0).as_primitive::<Int64Type>();
        let values = b.column(1).as_string::<i32>();
        for i in 0..b.num_rows() {
            out.push((offsets.value(i), values.value(i).to_owned()));
        }
    }
    out
}

/// Scans partition 0 of `path`: its rows and the files it opened.
fn scan(path: &Path, options: &ScanOptions) -> (Vec<(i64, String)>, Vec<PathBuf>) {
    let sources = Sources::open(&[path.to_path_buf()], &mut || unreachable!()).unwrap();
    let mut scan = PartitionScan::open(&sources, 0, options).unwrap();
    let batches: Vec<RecordBatch> = scan.by_ref().map(Result::unwrap).collect();
    assert!(batches.iter().all(|b| b.schema() == scan.schema()));
    let files = scan.files().iter().filter_map(|f| f.path.clone()).collect();
    (rows(&batches), files)
}

/// The segment files of `dir` that hold an offset in `first..=last`.
fn holding(dir: &Path, first: i64, last: i64) -> Vec<PathBuf> {
    let files = krecords_source::dir_logs(dir).unwrap();
    let bases: Vec<i64> = files
        .iter()
        .map(|f| krecords_log::check::segment_base(f).unwrap())
        .collect();
    files
        .iter()
        .enumerate()
        .filter(|&(i, _)| {
            let next = bases.get(i + 1).copied().unwrap_or(i64::MAX);
            bases[i] <= last && next > first
        })
        .map(|(_, f)| f.clone())
        .collect()
}

fn plain(n: usize) -> Vec<(usize, bool, bool)> {
    vec![(5, false, false); n]
}

#[test]
fn a_narrow_offset_range_opens_only_the_segments_that_hold_it() {
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("events-3");
    assert_eq!(write_log(&part, &plain(100)), 500);
    assert!(krecords_source::dir_logs(&part).unwrap().len() > 3);
    for (start, end) in [(203, 207), (0, 3), (497, 500), (150, 260)] {
        let range = Range {
            start: Some(Position::Offset(start)),
            end: Some(Position::Offset(end)),
            count: None,
        };
        let (rows, files) = scan(&part, &options(range, IsolationLevel::ReadCommitted));
        let want: Vec<(i64, String)> = (start..end).map(|o| (o, format!("v{o}"))).collect();
        assert_eq!(rows, want);
        assert_eq!(files, holding(&part, start, end - 1), "{start}..{end}");
    }
}

#[test]
fn a_narrow_time_range_opens_only_the_segments_that_hold_it() {
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("events-0");
    write_log(&part, &plain(100));
    // Offsets 311..=318 by their times (record o at T0 + 10 o; the end time is exclusive).
    let range = Range {
        start: Some(Position::Time(T0 + 10 * 311 - 5)),
        end: Some(Position::Time(T0 + 10 * 319)),
        count: None,
    };
    let (rows, files) = scan(&part, &options(range, IsolationLevel::ReadCommitted));
    let want: Vec<(i64, String)> = (311..319).map(|o| (o, format!("v{o}"))).collect();
    assert_eq!(rows, want);
    assert_eq!(files, holding(&part, 311, 318));
    assert!(files.len() < 3);
}

#[test]
fn a_scan_of_all_partitions_has_one_schema_and_every_row() {
    let dir = tempfile::tempdir().unwrap();
    for p in 0..3 {
        write_log(&dir.path().join(format!("events-{p}")), &plain(4 + p));
    }
    let sources = Sources::open(&[dir.path().to_path_buf()], &mut || unreachable!()).unwrap();
    assert_eq!(sources.partitions.len(), 3);
    let mut opts = options(Range::default(), IsolationLevel::ReadCommitted);
    opts.batch.columns.insert(0, Column::Partition);
    opts.batch.columns.insert(0, Column::Topic);
    let mut scan = Scan::new(&sources, opts.clone());
    let schema = scan.schema();
    let mut per_partition = [0usize; 3];
    for b in scan.by_ref() {
        let b = b.unwrap();
        assert_eq!(b.schema(), schema);
        let topics = b.column(0).as_string::<i32>();
        let parts = b.column(1).as_primitive::<arrow_array::types::Int32Type>();
        for i in 0..b.num_rows() {
            assert_eq!(topics.value(i), "events");
            per_partition[usize::try_from(parts.value(i)).unwrap()] += 1;
        }
    }
    assert_eq!(per_partition, [20, 25, 30]);
    let totals = scan.totals();
    assert_eq!((totals.partitions, totals.rows), (3, 75));
    // A filter on partition: only partition 1 is opened.
    let only: usize = Scan::of(&sources, [1], opts)
        .map(|b| b.unwrap().num_rows())
        .sum();
    assert_eq!(only, 25);
}

/// A start past one partition's end leaves that partition out with a note, and the others
/// are read, as every krec command that reads several partitions does (the scan failed at the
/// first such partition before); a start past every partition's end is the usage error.
#[test]
fn a_start_outside_one_of_several_partitions_leaves_it_out_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    write_log(&dir.path().join("events-0"), &plain(1));
    write_log(&dir.path().join("events-1"), &plain(4));
    let sources = Sources::open(&[dir.path().to_path_buf()], &mut || unreachable!()).unwrap();
    let at = |start| {
        let range = Range {
            start: Some(Position::Offset(start)),
            ..Range::default()
        };
        Scan::new(&sources, options(range, IsolationLevel::ReadCommitted))
    };
    let mut scan = at(10);
    let got: Vec<RecordBatch> = scan.by_ref().map(Result::unwrap).collect();
    assert_eq!(rows(&got).len(), 10);
    let notes = scan.totals().notes;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("events-0"), "{notes:?}");
    assert!(
        notes[0].ends_with("nothing of it is in the range"),
        "{notes:?}"
    );
    let errors: Vec<ScanError> = at(100).filter_map(Result::err).collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].class(), ErrorClass::Usage, "{}", errors[0]);
    // A filter on `partition` asking only for the one the range is outside of: every
    // partition asked for is left out, which is the usage error too.
    let range = Range {
        start: Some(Position::Offset(10)),
        ..Range::default()
    };
    let errors: Vec<ScanError> =
        Scan::of(&sources, [0], options(range, IsolationLevel::ReadCommitted))
            .filter_map(Result::err)
            .collect();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0]
            .to_string()
            .starts_with("no partition holds the positions asked for (the last: "),
        "{}",
        errors[0]
    );
}

/// read_committed stops at an open transaction's first offset: the rows before it, and a
/// note that says where and why (it stopped silently before).
#[test]
fn a_stop_at_the_last_stable_offset_is_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("events-0");
    let mut log = Log::create(&part, LogConfig::default()).unwrap();
    for (producer, n) in [(None, 3), (Some(9), 2), (None, 2)] {
        let mut b = V2Builder::new(0);
        if let Some(p) = producer {
            b = b.producer(p, 0, 0).transactional(true);
        }
        for _ in 0..n {
            b.append(&NewRecord::new(T0, None, Some(b"v"))).unwrap();
        }
        log.append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
    }
    log.close().unwrap();
    let sources = Sources::open(&[part], &mut || unreachable!()).unwrap();
    let mut scan = PartitionScan::open(
        &sources,
        0,
        &options(Range::default(), IsolationLevel::ReadCommitted),
    )
    .unwrap();
    let got: Vec<RecordBatch> = scan.by_ref().map(Result::unwrap).collect();
    assert_eq!(got.iter().map(RecordBatch::num_rows).sum::<usize>(), 3);
    let notes = scan.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("stopped at last stable offset 3; high watermark 7: an open transaction from producer 9"),
        "{notes:?}"
    );
}

#[test]
fn the_totals_sum_the_invalid_values_of_every_partition() {
    let dir = tempfile::tempdir().unwrap();
    // Partition p: 10 records, values not UTF-8 at every (p + 2)-th: 5 and 4 of them.
    for p in 0..2usize {
        let mut log =
            Log::create(dir.path().join(format!("events-{p}")), LogConfig::default()).unwrap();
        let mut b = V2Builder::new(0);
        for i in 0..10usize {
            let value: &[u8] = if i % (p + 2) == 0 { b"\xff\xfe" } else { b"ok" };
            b.append(&NewRecord::new(T0, None, Some(value))).unwrap();
        }
        log.append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
        log.close().unwrap();
    }
    let sources = Sources::open(&[dir.path().to_path_buf()], &mut || unreachable!()).unwrap();
    let mut scan = Scan::new(
        &sources,
        options(Range::default(), IsolationLevel::ReadCommitted),
    );
    let nulls: usize = scan
        .by_ref()
        .map(|b| b.unwrap().column(1).null_count())
        .sum();
    assert_eq!(nulls, 9);
    assert_eq!(scan.totals().invalid, vec![("value".to_string(), 9)]);
}

#[test]
fn a_corrupt_segment_gives_the_rows_before_it_then_a_data_error() {
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("events-0");
    write_log(&part, &plain(100));
    let files = krecords_source::dir_logs(&part).unwrap();
    let bad = &files[2];
    let base = krecords_log::check::segment_base(bad).unwrap();
    let mut bytes = std::fs::read(bad).unwrap();
    // The second entry's records: its CRC fails.
    let first_size = 12 + u32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
    bytes[first_size + 70] ^= 0xff;
    std::fs::write(bad, &bytes).unwrap();

    let sources = Sources::open(std::slice::from_ref(&part), &mut || unreachable!()).unwrap();
    let opts = options(Range::default(), IsolationLevel::ReadUncommitted);
    let mut got = Vec::new();
    let mut error = None;
    for b in PartitionScan::open(&sources, 0, &opts).unwrap() {
        match b {
            Ok(b) => got.push(b),
            Err(e) => error = Some(e),
        }
    }
    let error = error.expect("an error");
    assert!(matches!(error, ScanError::Corrupt { .. }), "{error}");
    assert_eq!(error.class(), ErrorClass::Data);
    assert_eq!(error.exit_code(), 1);
    // The file and the entry's byte, each said once.
    let at = format!(
        "{}: corrupt entry at byte {first_size}: crc mismatch",
        bad.display()
    );
    assert!(error.to_string().starts_with(&at), "{error}");
    // Every record before the corrupt entry is a row, nothing after it.
    let want: Vec<(i64, String)> = (0..base + 5).map(|o| (o, format!("v{o}"))).collect();
    assert_eq!(rows(&got), want);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// read_committed rows are what the log's consumer returns at read_committed; at
    /// read_uncommitted every data record is a row (control records never are).
    #[test]
    fn rows_are_the_consumers_view(
        b in prop::collection::vec((1usize..6, prop::bool::ANY, prop::bool::ANY), 1..30),
        start in 0i64..40,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("t-0");
        let hw = write_log(&part, &b);
        let log = Log::open_read_only(&part).unwrap();
        let start = start.min(hw - 1);
        for isolation in [IsolationLevel::ReadCommitted, IsolationLevel::ReadUncommitted] {
            let seen = log.consume(0, 1 << 30, isolation).unwrap();
            let want: Vec<(i64, String)> = seen
                .records
                .iter()
                .filter(|r| r.offset >= start)
                .map(|r| (r.offset, String::from_utf8(r.value.clone().unwrap()).unwrap()))
                .collect();
            let range = Range { start: Some(Position::Offset(start)), ..Range::default() };
            let (got, _) = scan(&part, &options(range, isolation));
            prop_assert_eq!(got, want);
        }
    }
}
