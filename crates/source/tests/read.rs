//! Reading partitions through the sources layer: ranges and isolation on a partition
//! directory written by krecords-log, and on its segment file alone.

use krecords_codec::read::{Record, Step};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_log::{AppendOrigin, IsolationLevel, Log, LogConfig};
use krecords_source::{ClientConfig, Position, Range, ReadOptions, Sources};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

const T0: i64 = 1_714_000_000_000;

/// A log of `batches` batches of the given sizes; record `o` has timestamp `T0 + 10 * o`.
/// Producer 7 writes transactional batches where `txn[i]` says so, aborted when `abort[i]`.
fn write_log(dir: &Path, batches: &[(usize, bool, bool)]) -> i64 {
    let mut log = Log::create(
        dir,
        LogConfig::from_pairs([("segment.bytes", "2048")]).unwrap(),
    )
    .unwrap();
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
            b.append(&NewRecord::new(
                T0 + 10 * o,
                None,
                Some(format!("v{o}").as_bytes()),
            ))
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

/// Every (offset, value) a reader shows: the records of its entries within its bounds,
/// control records left out.
fn read(path: &Path, options: &ReadOptions) -> Result<Vec<(i64, String)>, String> {
    read_with(path, options, &mut || unreachable!())
}

/// [`read`] with the client configuration of a `kafka://` source.
fn read_with(
    path: &Path,
    options: &ReadOptions,
    config: &mut dyn FnMut() -> Result<ClientConfig, krecords_source::Error>,
) -> Result<Vec<(i64, String)>, String> {
    let sources = Sources::open(&[path.to_path_buf()], config).map_err(|e| e.to_string())?;
    let mut reader = sources.read(0, options).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    while reader.next_file().map_err(|e| e.to_string())?.is_some() {
        loop {
            let (step, bounds) = reader.next_with_bounds().unwrap();
            let b = match step {
                Step::Entry(b) => b,
                Step::End => break,
                other => panic!("{other:?}"),
            };
            if matches!(b, krecords_codec::read::Batch::V2(v) if v.is_control()) {
                continue;
            }
            for r in b.records(&mut scratch, 1 << 20).unwrap() {
                let r: Record<'_> = r.unwrap();
                if bounds.contains(r.offset()) {
                    let v = String::from_utf8(r.value().unwrap().to_vec()).unwrap();
                    out.push((r.offset(), v));
                }
            }
        }
    }
    Ok(out)
}

fn segment_files(dir: &Path) -> Vec<PathBuf> {
    krecords_source::dir_logs(dir).unwrap()
}

fn batches() -> impl Strategy<Value = Vec<(usize, bool, bool)>> {
    prop::collection::vec((1usize..6, prop::bool::ANY, prop::bool::ANY), 1..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The records read are exactly the data records with start <= offset < end, on the
    /// directory and on its first segment file alone.
    #[test]
    fn ranges_are_trimmed_to_records(b in batches(), s in 0i64..80, len in 1i64..40) {
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("t-0");
        let hw = write_log(&part, &b);
        let start = s.min(hw);
        let end = (start + len).min(hw);
        let all = read(&part, &ReadOptions::default()).unwrap();
        let range = Range {
            start: Some(Position::Offset(start)),
            end: Some(Position::Offset(end)),
            count: None,
        };
        let options = ReadOptions { range, ..ReadOptions::default() };
        let got = read(&part, &options);
        if end <= start {
            prop_assert!(got.unwrap_err().contains("empty range"));
        } else {
            let want: Vec<_> = all.iter().filter(|(o, _)| (start..end).contains(o)).cloned().collect();
            prop_assert_eq!(got.unwrap(), want);
        }
        // --count: the first N of the records from the start.
        let count = Range { start: Some(Position::Offset(start)), end: None, count: Some(3) };
        let got = read(&part, &ReadOptions { range: count, ..ReadOptions::default() }).unwrap();
        let want: Vec<_> = all.iter().filter(|(o, _)| *o >= start).take(3).cloned().collect();
        prop_assert_eq!(got, want);
        // A file of the directory, alone: the same trimming over what it holds.
        let first = segment_files(&part).remove(0);
        let in_file = read(&first, &ReadOptions::default()).unwrap();
        let tail = Range { start: Some(Position::FromEnd(2)), ..Range::default() };
        let got = read(&first, &ReadOptions { range: tail, ..ReadOptions::default() }).unwrap();
        let file_end = in_file.last().map_or(0, |r| r.0 + 1);
        prop_assert!(got.iter().all(|(o, _)| *o >= file_end - 2 - 1), "{:?}", got);
    }

    /// read_committed leaves the aborted transactions out, as the log's consumer does, on the
    /// directory (transaction indexes) and on a file alone (its markers).
    #[test]
    fn read_committed_is_the_consumers_view(b in batches()) {
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("t-0");
        write_log(&part, &b);
        let log = Log::open_read_only(&part).unwrap();
        let seen = log.consume(0, 1 << 30, IsolationLevel::ReadCommitted).unwrap();
        let want: Vec<(i64, String)> = seen
            .records
            .iter()
            .map(|r| (r.offset, String::from_utf8(r.value.clone().unwrap()).unwrap()))
            .collect();
        let rc = ReadOptions { isolation: IsolationLevel::ReadCommitted, ..ReadOptions::default() };
        prop_assert_eq!(read(&part, &rc).unwrap(), want.clone());
        // The log is one segment file when it is small: the file alone says the same.
        let files = segment_files(&part);
        if files.len() == 1 {
            prop_assert_eq!(read(&files[0], &rc).unwrap(), want);
        }
    }
}

#[test]
fn out_of_range_offsets_and_empty_ranges_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("t-0");
    let hw = write_log(&part, &[(5, false, false), (5, false, false)]);
    assert_eq!(hw, 10);
    let at = |start: Position, end: Option<Position>| ReadOptions {
        range: Range {
            start: Some(start),
            end,
            count: None,
        },
        ..ReadOptions::default()
    };
    let e = read(&part, &at(Position::Offset(5000), None)).unwrap_err();
    assert!(
        e.ends_with("offset 5000 is out of range: the partition holds [0, 10)"),
        "{e}"
    );
    let e = read(&part, &at(Position::Offset(8), Some(Position::Offset(3)))).unwrap_err();
    assert!(e.contains("empty range: end 3 is not after start 8"), "{e}");
    let last = read(&part, &at(Position::FromEnd(3), None)).unwrap();
    assert_eq!(last.iter().map(|r| r.0).collect::<Vec<_>>(), [7, 8, 9]);
    let from_time = read(&part, &at(Position::Time(T0 + 61), None)).unwrap();
    assert_eq!(from_time.first().map(|r| r.0), Some(7));
    let file = segment_files(&part).remove(0);
    let from_time = read(&file, &at(Position::Time(T0 + 61), None)).unwrap();
    assert_eq!(from_time.first().map(|r| r.0), Some(7));
}

/// A log at `part` of 3 records (offsets 0-2, timestamps `T0 + i`) and 3 records of a
/// transaction of producer 7 left open (offsets 3-5): last stable offset 3, high watermark 6.
fn write_open_txn_log(part: &Path) {
    let mut log = Log::create(part, LogConfig::default()).unwrap();
    for txn in [false, true] {
        let mut b = V2Builder::new(0);
        if txn {
            b = b.producer(7, 0, 0).transactional(true);
        }
        for i in 0..3 {
            b.append(&NewRecord::new(T0 + i, None, Some(b"x"))).unwrap();
        }
        log.append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
    }
    log.close().unwrap();
}

#[test]
fn a_read_committed_stop_at_an_open_transaction_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("t-0");
    write_open_txn_log(&part);
    for path in [part.clone(), segment_files(&part).remove(0)] {
        let sources = Sources::open(&[path], &mut || unreachable!()).unwrap();
        let rc = ReadOptions {
            isolation: IsolationLevel::ReadCommitted,
            ..ReadOptions::default()
        };
        let mut reader = sources.read(0, &rc).unwrap();
        let mut n = 0;
        while reader.next_file().unwrap().is_some() {
            while let Step::Entry(_) = reader.next_entry().unwrap() {
                n += 1;
            }
        }
        assert_eq!(n, 1);
        assert_eq!(
            reader.stop().unwrap().to_string(),
            "stopped at last stable offset 3; high watermark 6: an open transaction from \
             producer 7 since offset 3"
        );
    }
}

/// ListOffsets through the sources layer: the log start, the end a consumer at each isolation
/// level stops at, a time lookup, and max-timestamp refused (only a log directory answers it).
#[test]
fn list_offsets_answers_as_a_consumer_at_its_isolation() {
    use krecords_log::OffsetSpec;
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("t-0");
    write_open_txn_log(&part);
    let sources = Sources::open(std::slice::from_ref(&part), &mut || unreachable!()).unwrap();
    let ask = |spec, isolation| {
        let r = sources.list_offsets(0, spec, isolation).unwrap();
        (r.offset, r.timestamp)
    };
    let (ru, rc) = (
        IsolationLevel::ReadUncommitted,
        IsolationLevel::ReadCommitted,
    );
    assert_eq!(ask(OffsetSpec::Earliest, ru), (0, None));
    assert_eq!(ask(OffsetSpec::Latest, ru), (6, None));
    assert_eq!(ask(OffsetSpec::Latest, rc), (3, None));
    assert_eq!(ask(OffsetSpec::Timestamp(T0 + 1), ru), (1, Some(T0 + 1)));
    assert_eq!(ask(OffsetSpec::Timestamp(T0 + 100), ru), (-1, None));
    let e = sources
        .list_offsets(0, OffsetSpec::MaxTimestamp, ru)
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("t-0: --max-timestamp is answered from a log directory only"),
        "{e}"
    );
}

/// A live partition is read as the same bytes in a file are, whatever the range: each fetch
/// is cut into whole entries once (by the client) and the reader views them at those
/// boundaries, across many small fetches.
#[test]
fn a_live_partition_reads_as_its_bytes_in_a_file() {
    let batches = krecords_testkit::batches::numbered(12, 3, |o| {
        (T0 + o, b"k".to_vec(), format!("v{o}").into_bytes())
    });
    let cluster = krecords_testkit::FakeCluster::start(&[("t", 1)]);
    cluster.append("t", 0, &batches);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.bin");
    std::fs::write(&file, batches.concat()).unwrap();
    let url = PathBuf::from(format!("kafka://{}/t/0", cluster.addr()));
    // A window of about two batches: the partition comes in many fetches.
    let mut config = || {
        let mut c = ClientConfig::default();
        c.set(
            "max.partition.fetch.bytes",
            &(batches[0].len() * 2).to_string(),
        )
        .map_err(|e| krecords_source::Error::Usage(e.to_string()))?;
        Ok(c)
    };
    for (start, end) in [(0, 36), (0, 1), (4, 5), (5, 30), (17, 36), (35, 36)] {
        let range = Range {
            start: Some(Position::Offset(start)),
            end: Some(Position::Offset(end)),
            count: None,
        };
        let options = ReadOptions {
            range,
            ..ReadOptions::default()
        };
        let live = read_with(&url, &options, &mut config).unwrap();
        let want: Vec<_> = (start..end).map(|o| (o, format!("v{o}"))).collect();
        assert_eq!(live, want, "{start}..{end}");
        assert_eq!(read(&file, &options).unwrap(), want, "{start}..{end}");
    }
    let live = read_with(&url, &ReadOptions::default(), &mut config).unwrap();
    assert_eq!(live, read(&file, &ReadOptions::default()).unwrap());
    assert_eq!(live.len(), 36);
}

/// `records::read_entries` names the file and the byte in it where an entry fails its CRC, not
/// the partition and a position inside the entry.
#[test]
fn read_entries_names_the_file_and_byte_of_a_corrupt_entry() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("entries.bin");
    let entry = |offset: i64, value: &[u8]| {
        let mut b = V2Builder::new(offset);
        b.append(&NewRecord::new(T0, None, Some(value))).unwrap();
        b.finish().unwrap().to_vec()
    };
    let first = entry(0, b"aaaa");
    let mut second = entry(1, b"bbbb");
    let last = second.len() - 2;
    second[last] ^= 0xff; // inside the value: the CRC no longer checks
    std::fs::write(&file, [first.clone(), second].concat()).unwrap();
    let sources = Sources::open(std::slice::from_ref(&file), &mut || unreachable!()).unwrap();
    let mut reader = sources.read(0, &ReadOptions::default()).unwrap();
    let mut seen = Vec::new();
    let e = krecords_source::records::read_entries(&mut reader, None, None, &mut |r| {
        seen.push(r.offset);
        Ok(())
    })
    .unwrap_err()
    .to_string();
    assert_eq!(seen, [0]);
    let at = format!("{}: byte {}: ", file.display(), first.len());
    assert!(e.starts_with(&at), "{e}");
    assert!(e.contains("crc"), "{e}");
}

/// A path that is not there fails the open, before anything of the others is read; a glob
/// pattern that matches nothing fails too, naming the pattern.
#[test]
fn a_missing_path_fails_the_open() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("entries.bin");
    let mut b = V2Builder::new(0);
    b.append(&NewRecord::new(T0, None, Some(b"v"))).unwrap();
    std::fs::write(&file, b.finish().unwrap()).unwrap();
    let missing = dir.path().join("x-0");
    let e = Sources::open_local(&[file.clone(), missing.clone()])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("cannot open {}: ", missing.display())),
        "{e}"
    );
    let pattern = dir.path().join("nothing*.log");
    let e = Sources::open_local(&[pattern]).unwrap_err().to_string();
    assert!(e.contains("no file matches"), "{e}");
    assert_eq!(Sources::open_local(&[file]).unwrap().partitions.len(), 1);
}

/// Of several partitions (here a broker's root), one that ends before an end offset asked for
/// is read to its end, not refused as outside the range; a start past its end still leaves it
/// out; a partition read alone refuses an end past it.
#[test]
fn an_end_past_one_of_several_partitions_ends_at_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let (long, short) = (dir.path().join("t-0"), dir.path().join("t-1"));
    assert_eq!(write_log(&long, &[(10, false, false); 6]), 60);
    assert_eq!(write_log(&short, &[(10, false, false); 4]), 40);
    let sources = Sources::open(&[dir.path().to_path_buf()], &mut || unreachable!()).unwrap();
    assert_eq!(sources.partitions.len(), 2);
    let range = |start, end| ReadOptions {
        range: Range {
            start,
            end: Some(Position::Offset(end)),
            count: None,
        },
        ..ReadOptions::default()
    };
    let short_index = sources
        .partitions
        .iter()
        .position(|p| p.name.ends_with("t-1"))
        .unwrap();
    let reader = sources.read(short_index, &range(None, 50)).unwrap();
    assert_eq!((reader.range().start, reader.range().end), (0, Some(40)));
    let e = sources
        .read(short_index, &range(Some(Position::Offset(45)), 50))
        .err()
        .unwrap();
    assert!(matches!(e, krecords_source::Error::OutOfRange(_)), "{e}");
    let e = read(&short, &range(None, 50)).unwrap_err();
    assert!(
        e.ends_with("offset 50 is out of range: the partition holds [0, 40)"),
        "{e}"
    );
}
