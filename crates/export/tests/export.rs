//! Exports of partition directories: the rows are the consumer's, reruns continue exactly,
//! leftover temporary files go, corrupt segments leave valid files, one export per directory.

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::RecordBatch;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_export::{
    dataset_files, read_file, ExportError, ExportOptions, Exporter, Format, TMP_SUFFIX,
};
use krecords_log::{AppendOrigin, IsolationLevel, Log, LogConfig};
use krecords_source::{ErrorClass, Sources};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

const T0: i64 = 1_714_000_000_000;

/// Appends `batches` (records, transactional, aborted) to the log at `dir` (created with small
/// segments when missing); record `o` has value `v{o}`.
fn append(dir: &Path, batches: &[(usize, bool, bool)]) {
    let mut log = if dir.exists() {
        Log::open(dir).unwrap()
    } else {
        Log::create(
            dir,
            LogConfig::from_pairs([("segment.bytes", "4096")]).unwrap(),
        )
        .unwrap()
    };
    let mut next = log
        .offsets(krecords_log::OffsetSpec::Latest)
        .unwrap()
        .offset;
    for &(n, txn, abort) in batches {
        let mut b = V2Builder::new(0);
        if txn {
            // A new producer id per transaction: no sequence bookkeeping across runs.
            b = b.producer(next, 0, 0).transactional(true);
        }
        for i in 0..n {
            let o = next + i as i64;
            let value = format!("v{o}");
            b.append(&NewRecord::new(T0 + o, None, Some(value.as_bytes())))
                .unwrap();
        }
        let info = log
            .append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
        let pid = next;
        next = info.last_offset + 1;
        if txn {
            next = log
                .append_end_txn(pid, 0, 0, !abort, T0)
                .unwrap()
                .last_offset
                + 1;
        }
    }
    log.close().unwrap();
}

/// The (offset, value) records a read_committed consumer of `dir` gets.
fn consumed(dir: &Path, isolation: IsolationLevel) -> Vec<(i64, String)> {
    let log = Log::open_read_only(dir).unwrap();
    log.consume(0, 1 << 30, isolation)
        .unwrap()
        .records
        .iter()
        .map(|r| {
            (
                r.offset,
                String::from_utf8(r.value.clone().unwrap()).unwrap(),
            )
        })
        .collect()
}

/// Every (offset, value) row of a partition's dataset files, in file order; checks that the
/// files' names cover their rows and do not overlap. No directory (nothing was exported into
/// it) holds no rows.
fn dataset(dir: &Path) -> Vec<(i64, String)> {
    let mut out: Vec<(i64, String)> = Vec::new();
    if !dir.exists() {
        return out;
    }
    let mut prev_last = i64::MIN;
    for (first, last, path) in dataset_files(dir).unwrap() {
        assert!(first > prev_last, "{} overlaps", path.display());
        prev_last = last;
        let batches = read_file(&path).unwrap();
        let rows = rows(&batches);
        assert_eq!(rows.first().map(|r| r.0), Some(first), "{}", path.display());
        assert_eq!(rows.last().map(|r| r.0), Some(last), "{}", path.display());
        out.extend(rows);
    }
    out
}

fn rows(batches: &[RecordBatch]) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    for b in batches {
        let offsets = b
            .column_by_name("offset")
            .unwrap()
            .as_primitive::<Int64Type>();
        let values = b.column_by_name("value").unwrap().as_binary::<i32>();
        for i in 0..b.num_rows() {
            out.push((
                offsets.value(i),
                String::from_utf8(values.value(i).to_vec()).unwrap(),
            ));
        }
    }
    out
}

fn export(part: &Path, options: ExportOptions) -> Result<Exporter, ExportError> {
    let args = [part.to_path_buf()];
    let sources = Sources::open(&args, &mut || unreachable!()).unwrap();
    let mut exporter = Exporter::open(options, &args)?;
    for i in 0..sources.partitions.len() {
        exporter.export(&sources, i, &mut |_| {})?;
    }
    exporter.finish(&mut |_| {})?;
    Ok(exporter)
}

/// Asserts that exporting `part` with `options` is refused as a mismatch whose message holds
/// every one of `needles`, and that the partition's dataset directory `dir` stays as it was.
fn assert_refused(part: &Path, options: ExportOptions, dir: &Path, needles: &[&str]) {
    let before = dataset_files(dir).unwrap();
    let e = export(part, options).unwrap_err();
    assert!(matches!(e, ExportError::Mismatch(_)), "{e}");
    let m = e.to_string();
    for n in needles {
        assert!(m.contains(n), "{m}");
    }
    assert_eq!(dataset_files(dir).unwrap(), before);
}

fn out_dir(root: &Path) -> PathBuf {
    root.join("out/topic=events/partition=2")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Exported in two runs (more appended in between), small files: the dataset holds what a
    /// read_committed consumer gets, each record once, in files named by their offsets.
    #[test]
    fn a_dataset_is_the_consumers_view_across_runs(
        a in prop::collection::vec((1usize..8, prop::bool::ANY, prop::bool::ANY), 1..30),
        b in prop::collection::vec((1usize..8, prop::bool::ANY, prop::bool::ANY), 0..30),
        roll in 1u64..20_000,
        arrow in prop::bool::ANY,
    ) {
        let root = tempfile::tempdir().unwrap();
        let part = root.path().join("events-2");
        let mut options = ExportOptions::new(root.path().join("out"));
        options.roll_bytes = roll;
        if arrow {
            options.format = Format::Arrow;
        }
        append(&part, &a);
        export(&part, options.clone()).unwrap();
        prop_assert_eq!(dataset(&out_dir(root.path())), consumed(&part, IsolationLevel::ReadCommitted));
        append(&part, &b);
        let again_in = export(&part, options.clone()).unwrap().summary().bytes_in;
        prop_assert_eq!(dataset(&out_dir(root.path())), consumed(&part, IsolationLevel::ReadCommitted));
        // A third run has nothing to do.
        let third = export(&part, options).unwrap();
        prop_assert_eq!(third.summary().records, 0);
        prop_assert_eq!(third.summary().files, 0);
        prop_assert!(again_in > 0 || b.is_empty());
    }
}

#[test]
fn read_uncommitted_keeps_aborted_records() {
    let root = tempfile::tempdir().unwrap();
    let part = root.path().join("events-2");
    append(
        &part,
        &[(3, true, true), (2, false, false), (4, true, false)],
    );
    let mut options = ExportOptions::new(root.path().join("out"));
    options.isolation = IsolationLevel::ReadUncommitted;
    let e = export(&part, options).unwrap();
    let want = consumed(&part, IsolationLevel::ReadUncommitted);
    assert_eq!(want.len(), 9);
    assert_eq!(dataset(&out_dir(root.path())), want);
    assert_eq!(e.summary().records, 9);
}

/// A dataset holds one isolation level's view: the level is in every file's metadata, and an
/// export at the other level into it is refused before anything is written (Parquet and Arrow
/// IPC alike).
#[test]
fn an_export_at_another_isolation_level_is_refused() {
    for format in [Format::Parquet, Format::Arrow] {
        let root = tempfile::tempdir().unwrap();
        let part = root.path().join("events-2");
        append(&part, &[(3, true, true), (2, false, false)]);
        let options = |isolation| {
            let mut o = ExportOptions::new(root.path().join("out"));
            o.isolation = isolation;
            o.format = format;
            o
        };
        export(&part, options(IsolationLevel::ReadUncommitted)).unwrap();
        append(&part, &[(2, false, false)]);
        assert_refused(
            &part,
            options(IsolationLevel::ReadCommitted),
            &out_dir(root.path()),
            &[
                "was exported at read_uncommitted, this export reads at read_committed",
                "--isolation read-uncommitted",
            ],
        );
        // The same level continues.
        let e = export(&part, options(IsolationLevel::ReadUncommitted)).unwrap();
        assert_eq!(e.summary().records, 2);
    }
}

/// A partition's files keep the source topic's id (a partition directory's
/// `partition.metadata`): a topic of the same name with another id (deleted and created
/// again, another cluster's) does not continue them; the same topic does, and a source
/// without an id is not compared.
#[test]
fn a_recreated_topic_does_not_continue_the_dataset() {
    let root = tempfile::tempdir().unwrap();
    let first = root.path().join("a/events-2");
    let again = root.path().join("b/events-2");
    let bare = root.path().join("c/events-2");
    for dir in [&first, &again, &bare] {
        append(dir, &[(5, false, false), (5, false, false)]);
    }
    let meta = |dir: &Path, id: &str| {
        std::fs::write(
            dir.join("partition.metadata"),
            format!("version: 0\ntopic_id: {id}\n"),
        )
        .unwrap();
    };
    meta(&first, "bF2mVp1_Rv6x9Nq3Z0a1Yw");
    meta(&again, "Qk1sN0a7TbyZ2p4xWc8d1A");
    let options = || ExportOptions::new(root.path().join("out"));
    export(&first, options()).unwrap();
    append(&again, &[(5, false, false)]);
    assert_refused(
        &again,
        options(),
        &out_dir(root.path()),
        &[
            "holds topic id bF2mVp1_Rv6x9Nq3Z0a1Yw",
            "this source's topic has id Qk1sN0a7TbyZ2p4xWc8d1A",
        ],
    );
    // The same topic continues; a source that does not say its id is not compared.
    append(&first, &[(3, false, false)]);
    assert_eq!(export(&first, options()).unwrap().summary().records, 3);
    append(&bare, &[(2, false, false), (2, false, false)]);
    assert_eq!(export(&bare, options()).unwrap().summary().records, 1);
}

/// Keys and values exported as strings that are not UTF-8 are null in the dataset and counted
/// in the summary, per column.
#[test]
fn values_that_are_not_utf8_are_counted() {
    let root = tempfile::tempdir().unwrap();
    let part = root.path().join("events-2");
    let mut log = Log::create(&part, LogConfig::default()).unwrap();
    let mut b = V2Builder::new(0);
    for (k, v) in [
        (&b"\xc3\x28"[..], &b"ok"[..]),
        (b"k", b"\xff\xfe"),
        (b"\xff", b"\xfe"),
    ] {
        b.append(&NewRecord::new(T0, Some(k), Some(v))).unwrap();
    }
    log.append(&b.finish().unwrap(), AppendOrigin::Client)
        .unwrap();
    log.close().unwrap();
    let mut options = ExportOptions::new(root.path().join("out"));
    options.key_format = krecords_arrow::BytesFormat::String;
    options.value_format = krecords_arrow::BytesFormat::String;
    let e = export(&part, options).unwrap();
    let invalid: Vec<(&str, u64)> = e
        .summary()
        .invalid
        .iter()
        .map(|(c, n)| (c.as_str(), *n))
        .collect();
    assert_eq!(invalid, [("key", 2), ("value", 2)]);
    let mut text = Vec::new();
    e.summary().write_text(Path::new("out"), &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("2 key value(s) were not UTF-8 and are null in the dataset"),
        "{text}"
    );
    assert_eq!(e.summary().to_json(Path::new("out"))["invalid"]["value"], 2);
}

#[test]
fn leftover_temporary_files_are_removed_and_their_records_exported_again() {
    let root = tempfile::tempdir().unwrap();
    let part = root.path().join("events-2");
    append(&part, &[(5, false, false); 10]);
    let dir = out_dir(root.path());
    std::fs::create_dir_all(&dir).unwrap();
    let tmp = dir.join(format!(".00000000000000000000.parquet{TMP_SUFFIX}"));
    std::fs::write(&tmp, b"PAR1 torn").unwrap();
    let e = export(&part, ExportOptions::new(root.path().join("out"))).unwrap();
    assert!(!tmp.exists());
    assert_eq!(e.summary().removed_temporary, 1);
    assert_eq!(
        dataset(&dir),
        consumed(&part, IsolationLevel::ReadCommitted)
    );
}

#[test]
fn one_export_at_a_time_per_directory() {
    let root = tempfile::tempdir().unwrap();
    let first = Exporter::open(ExportOptions::new(root.path()), &[]).unwrap();
    let second = Exporter::open(ExportOptions::new(root.path()), &[]).unwrap_err();
    assert!(matches!(second, ExportError::Locked(_)), "{second}");
    assert_eq!(second.exit_code(), 2);
    drop(first);
    Exporter::open(ExportOptions::new(root.path()), &[]).unwrap();
}

#[test]
fn an_output_inside_a_source_directory_is_refused_and_nothing_created() {
    let root = tempfile::tempdir().unwrap();
    let part = root.path().join("events-0");
    append(&part, &[(3, false, false)]);
    let link = root.path().join("link");
    std::os::unix::fs::symlink(&part, &link).unwrap();
    // The partition directory itself, a directory in it, a path not yet there, the same
    // through a link to it, and a log.dirs root's new directory; each source as named and
    // through the link.
    let cases = [
        (&part, part.clone()),
        (&part, part.join("ds")),
        (&part, part.join("a/b")),
        (&part, link.join("ds")),
        (&link, part.join("ds")),
        (&root.path().to_path_buf(), root.path().join("lake")),
    ];
    for (source, output) in cases {
        let e =
            Exporter::open(ExportOptions::new(&output), std::slice::from_ref(source)).unwrap_err();
        assert!(matches!(e, ExportError::InsideSource { .. }), "{e}");
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().contains("export into another directory"),
            "{e}"
        );
    }
    assert!(!part.join("ds").exists() && !part.join("a").exists());
    assert!(!root.path().join("lake").exists());
    // Beside the source (a sibling directory, not inside it): exported.
    let exporter = export(&part, ExportOptions::new(root.path().join("events-out"))).unwrap();
    assert_eq!(exporter.summary().records, 3);
}

#[test]
fn a_plain_file_has_no_partition_to_export_to() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("x.bin");
    let mut b = V2Builder::new(0);
    b.append(&NewRecord::new(T0, None, Some(b"v"))).unwrap();
    std::fs::write(&file, b.finish().unwrap()).unwrap();
    let e = export(&file, ExportOptions::new(root.path().join("out"))).unwrap_err();
    assert!(matches!(e, ExportError::Unnamed(_)), "{e}");
    assert_eq!(e.exit_code(), 2);
}

#[test]
fn a_corrupt_segment_is_a_data_error_and_the_files_written_stay_valid() {
    let root = tempfile::tempdir().unwrap();
    let part = root.path().join("events-2");
    append(&part, &[(5, false, false); 200]);
    let segments = krecords_source::dir_logs(&part).unwrap();
    assert!(segments.len() > 2);
    let bad = &segments[1];
    let base = krecords_log::check::segment_base(bad).unwrap();
    let mut bytes = std::fs::read(bad).unwrap();
    let first_size = 12 + u32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
    bytes[first_size + 70] ^= 0xff;
    std::fs::write(bad, &bytes).unwrap();

    let mut options = ExportOptions::new(root.path().join("out"));
    options.roll_bytes = 2000;
    for _ in 0..2 {
        let e = export(&part, options.clone()).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Data, "{e}");
        assert!(e.to_string().contains(&bad.display().to_string()), "{e}");
        // Every record before the corrupt entry, once, in valid files.
        let want: Vec<(i64, String)> = (0..base + 5).map(|o| (o, format!("v{o}"))).collect();
        assert_eq!(dataset(&out_dir(root.path())), want);
    }
}

/// An export that writes no file into a partition's directory (its range is outside the
/// partition, the partition's data is corrupt before any row) left an empty
/// `topic=T/partition=P` directory behind; it is made only when a file is about to be written,
/// and one that was there before stays.
#[test]
fn an_export_that_writes_no_file_leaves_no_directory() {
    let root = tempfile::tempdir().unwrap();
    let part = root.path().join("events-2");
    append(&part, &[(5, false, false); 2]);
    let mut options = ExportOptions::new(root.path().join("out"));
    options.range.start = Some(krecords_source::Position::Offset(1000));
    let summary = export(&part, options.clone()).unwrap().summary().clone();
    assert_eq!((summary.files, summary.outside.len()), (0, 1));
    assert!(!root.path().join("out/topic=events").exists());
    // One made before stays, empty.
    std::fs::create_dir_all(out_dir(root.path())).unwrap();
    export(&part, options).unwrap();
    assert!(out_dir(root.path()).is_dir());

    let bad = root.path().join("bad/events-2");
    append(&bad, &[(5, false, false); 2]);
    let segment = krecords_source::dir_logs(&bad).unwrap()[0].clone();
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes[70] ^= 0xff;
    std::fs::write(&segment, &bytes).unwrap();
    let out = root.path().join("bad-out");
    let e = export(&bad, ExportOptions::new(&out)).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Data, "{e}");
    assert!(!out.join("topic=events").exists());
}

/// A file that cannot be completed (here its temporary is `/dev/full`, as on a full disk):
/// the export fails, the report counts only the records of the files completed (and those
/// read into the failed one as not written), and the failed file's temporary is removed at
/// once rather than by the next run.
///
/// The error names the file and says the disk's error alone: it said `PATH: External: No
/// space left on device` (parquet's wrapper), `PATH: Io error: ...` for Arrow (arrow's).
#[test]
fn a_file_that_cannot_be_completed_is_not_counted_and_its_temporary_is_removed() {
    cannot_complete(Format::Parquet);
}

/// [`a_file_that_cannot_be_completed_is_not_counted_and_its_temporary_is_removed`] in Arrow
/// IPC files.
#[test]
fn an_arrow_file_that_cannot_be_completed_is_named_without_arrows_wrapper() {
    cannot_complete(Format::Arrow);
}

fn cannot_complete(format: Format) {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let part = root.path().join("events-2");
    // More records than a scan's batch (the files roll between batches), in larger segments.
    Log::create(
        &part,
        LogConfig::from_pairs([("segment.bytes", "1048576")]).unwrap(),
    )
    .unwrap()
    .close()
    .unwrap();
    append(&part, &[(100, false, false); 200]);
    let mut options = ExportOptions::new(root.path().join("out"));
    options.roll_bytes = 1;
    options.format = format;
    let dir = out_dir(root.path());
    let args = [part.clone()];
    let sources = Sources::open(&args, &mut || unreachable!()).unwrap();
    let mut exporter = Exporter::open(options, &args).unwrap();
    // Once the first file is completed, the next one's temporary writes into /dev/full.
    let mut tmp: Option<PathBuf> = None;
    let e = exporter.export(&sources, 0, &mut |e| {
        if let (krecords_export::Event::File { path, .. }, None) = (e, &tmp) {
            let name = path.file_name().unwrap().to_str().unwrap();
            let (_, last) = krecords_export::parse_file_name(name).unwrap();
            let t = dir.join(format!(
                ".{:020}.{}{TMP_SUFFIX}",
                last + 1,
                format.extension()
            ));
            std::os::unix::fs::symlink("/dev/full", &t).unwrap();
            tmp = Some(t);
        }
    });
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let e = e.expect_err(&format!("{names:?} {tmp:?}"));
    let tmp = tmp.expect("a first file was completed");
    assert_eq!(
        e.to_string(),
        format!(
            "cannot write {}: No space left on device (os error 28)",
            tmp.display()
        )
    );
    assert_eq!(e.class(), ErrorClass::Io);
    assert!(tmp.symlink_metadata().is_err(), "{} left", tmp.display());
    assert!(Path::new("/dev/full").exists());
    let held = dataset(&dir);
    let summary = exporter.summary();
    assert_eq!(summary.files, 1);
    assert!(!held.is_empty());
    assert_eq!(summary.records, held.len() as u64);
    assert!(summary.records_not_written > 0);
    assert!(summary.records + summary.records_not_written <= 20_000);
    let json = summary.to_json(Path::new("out"));
    assert_eq!(json["records"], held.len() as u64);
    let mut text = Vec::new();
    summary.write_text(Path::new("out"), &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.starts_with(&format!(
            "exported {} records of 1 partitions into 1 files",
            held.len()
        )),
        "{text}"
    );
    assert!(text.contains("records read were not written"), "{text}");
    // Nothing else of the dataset's directory went.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // The next run continues exactly.
    drop(exporter);
    export(&part, {
        let mut o = ExportOptions::new(root.path().join("out"));
        o.roll_bytes = 1;
        o.format = format;
        o
    })
    .unwrap();
    assert_eq!(
        dataset(&dir),
        consumed(&part, IsolationLevel::ReadCommitted)
    );
}

/// The records and bytes read count once their file is completed: a run's summary matches
/// what its files hold, and a failed source read keeps the rows before it in a completed file.
#[test]
fn the_summary_counts_what_the_completed_files_hold() {
    let root = tempfile::tempdir().unwrap();
    let part = root.path().join("events-2");
    append(&part, &[(5, true, false); 20]);
    let mut options = ExportOptions::new(root.path().join("out"));
    options.roll_bytes = 2000;
    let e = export(&part, options).unwrap();
    let held = dataset(&out_dir(root.path()));
    assert_eq!(e.summary().records, held.len() as u64);
    assert_eq!(e.summary().records_not_written, 0);
    // Every entry read, control batches included.
    let log_bytes: u64 = krecords_source::dir_logs(&part)
        .unwrap()
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert_eq!(e.summary().bytes_in, log_bytes);
}

/// `--start` with `--follow`: a first pass that writes nothing (the start is past the
/// partition's end, or resolves to its end) does not drop the start for the later passes,
/// which exported from the log's start: the offset the start resolved to is kept as the
/// floor of every pass, and a start past the end is waited for, not reported outside.
#[test]
fn a_followed_start_holds_after_a_pass_that_wrote_nothing() {
    use krecords_source::Position;
    let cases = [
        (Position::Offset(8), 8),
        (Position::Latest, 5),
        // A time after every record resolves to the end then, and stays that offset.
        (Position::Time(T0 + 100), 5),
    ];
    for (start, from) in cases {
        let root = tempfile::tempdir().unwrap();
        let part = root.path().join("events-2");
        append(&part, &[(5, false, false)]);
        let mut options = ExportOptions::new(root.path().join("out"));
        options.range.start = Some(start);
        let args = [part.clone()];
        let mut exporter = Exporter::open(options, &args).unwrap();
        let pass = |exporter: &mut Exporter| {
            let sources = Sources::open(&args, &mut || unreachable!()).unwrap();
            exporter.export_open(&sources, 0, &mut |_| {}).unwrap();
        };
        pass(&mut exporter);
        pass(&mut exporter);
        assert!(dataset(&out_dir(root.path())).is_empty(), "{start:?}");
        append(&part, &[(7, false, false)]);
        pass(&mut exporter);
        pass(&mut exporter);
        exporter.finish(&mut |_| {}).unwrap();
        let want: Vec<(i64, String)> = (from..12).map(|o| (o, format!("v{o}"))).collect();
        assert_eq!(dataset(&out_dir(root.path())), want, "{start:?}");
        let summary = exporter.summary();
        assert_eq!(summary.partitions, 1, "{start:?}");
        assert!(
            summary.outside.is_empty(),
            "{start:?}: {:?}",
            summary.outside
        );
    }
}
