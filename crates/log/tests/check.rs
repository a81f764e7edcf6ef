//! The integrity check (`krecords_log::check`): a clean log has no problems; each kind of
//! damage gives its problem kind; any damage never panics and never changes the directory.

use crate::util::*;
use krecords_log::check::{
    check_partition, check_selection, CheckError, Checker, EntrySource, EntryStream, Next, Problem,
    ProblemKind, Totals,
};
use krecords_log::data_dir::{select_partitions, PartitionFilter, SelectError};
use krecords_log::{AppendOrigin, Log};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

const LIMIT: usize = 64 << 20;

/// A closed log on disk: six 2-record batches over several segments, every batch indexed, an
/// aborted transaction (so a `.txnindex` and producer snapshots) and a committed one.
fn sample_log() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_sample_log(dir.path());
    dir
}

/// [`sample_log`] written into `dir`.
fn write_sample_log(dir: &Path) {
    let mut log = Log::create(
        dir,
        config(&[("index.interval.bytes", "0"), ("segment.bytes", "300")]),
    )
    .unwrap();
    for i in 0..6 {
        log.append(&v2(NOW + i * 10, &["a", "b"]), AppendOrigin::Client)
            .unwrap();
    }
    log.append(&idem(7, 0, 0, true, &["t1", "t2"]), AppendOrigin::Client)
        .unwrap();
    log.append_end_txn(7, 0, 0, false, NOW).unwrap();
    log.append(&idem(8, 0, 0, true, &["u"]), AppendOrigin::Client)
        .unwrap();
    log.append_end_txn(8, 0, 0, true, NOW).unwrap();
    log.append(&v2(NOW + 100, &["z"]), AppendOrigin::Client)
        .unwrap();
    log.close().unwrap();
}

/// Files of `dir` ending in `suffix`, sorted.
fn files_with(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(suffix))
        .collect();
    v.sort();
    v
}

fn patch(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut b = std::fs::read(path).unwrap();
    f(&mut b);
    std::fs::write(path, b).unwrap();
}

/// The problem kinds of a check of `dir`.
fn kinds(dir: &Path) -> Vec<ProblemKind> {
    let r = check_partition(dir, LIMIT).unwrap();
    assert_eq!(r.summary.problems, r.problems.len() as u64);
    r.problems.iter().map(|p| p.kind).collect()
}

/// Every file of `dir` with its bytes.
fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_clean_log_has_no_problems() {
    let d = sample_log();
    let before = contents(d.path());
    let r = check_partition(d.path(), LIMIT).unwrap();
    assert_eq!(r.problems, Vec::<Problem>::new());
    assert_eq!(r.summary.problems, 0);
    assert_eq!(r.summary.entries, 11);
    assert_eq!(r.summary.records, 6 * 2 + 2 + 1 + 1 + 1 + 1);
    assert!(r.summary.bytes > 0);
    assert!(r.summary.files >= files_with(d.path(), ".log").len() as u64);
    assert_eq!(r.range, Some((0, 18)));
    // Read-only: nothing was created, changed or removed.
    assert_eq!(contents(d.path()), before);
    assert!(!files_with(d.path(), ".txnindex").is_empty());
}

#[test]
fn a_directory_without_segments_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    assert!(matches!(
        check_partition(d.path(), LIMIT),
        Err(CheckError::NoSegments(_))
    ));
    let missing = d.path().join("nope");
    let e = check_partition(&missing, LIMIT).unwrap_err();
    assert!(matches!(e, CheckError::Io { .. }));
    assert!(e.to_string().starts_with("cannot list "), "{e}");
}

/// The problem kinds of a sample log after `f` damaged its first non-empty file ending in
/// `suffix`.
fn damaged(suffix: &str, f: impl FnOnce(&mut Vec<u8>)) -> Vec<ProblemKind> {
    let d = sample_log();
    let path = files_with(d.path(), suffix)
        .into_iter()
        .find(|p| std::fs::metadata(p).unwrap().len() > 0)
        .unwrap();
    patch(&path, f);
    kinds(d.path())
}

#[test]
fn a_truncated_tail_is_truncated() {
    assert_eq!(
        damaged(".log", |b| b.truncate(b.len() - 5)),
        [ProblemKind::Truncated]
    );
    // Truncating the last segment leaves the latest producer snapshot past the end too.
    let d = sample_log();
    let last = files_with(d.path(), ".log").pop().unwrap();
    patch(&last, |b| b.truncate(b.len() - 5));
    assert_eq!(
        kinds(d.path()),
        [ProblemKind::Truncated, ProblemKind::Snapshot]
    );
}

#[test]
fn a_flipped_byte_in_a_batch_is_an_entry_problem_at_its_position() {
    let d = sample_log();
    let first = &files_with(d.path(), ".log")[0];
    patch(first, |b| b[70] ^= 0x01);
    let r = check_partition(d.path(), LIMIT).unwrap();
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].kind, ProblemKind::Entry);
    assert_eq!(r.problems[0].position, Some(0));
    assert_eq!(r.problems[0].file, first.display().to_string());
    assert!(r.problems[0].message.contains("crc"), "{:?}", r.problems);
}

/// A length field damaged in the middle of a segment (it claims more bytes than the file
/// holds) is not a torn tail: the check finds the intact entries after it, as salvage does,
/// says where they resume, and checks and counts them.
#[test]
fn a_damaged_length_in_the_middle_of_a_segment_is_not_a_torn_tail() {
    let d = sample_log();
    let clean = check_partition(d.path(), LIMIT).unwrap().summary;
    let first = &files_with(d.path(), ".log")[0];
    let second_batch = v2(NOW, &["a", "b"]).len();
    patch(first, |b| {
        b[8..12].copy_from_slice(&0x7fff_ff00u32.to_be_bytes());
    });
    let r = check_partition(d.path(), LIMIT).unwrap();
    let entry: Vec<&Problem> = r
        .problems
        .iter()
        .filter(|p| p.kind != ProblemKind::Index && p.kind != ProblemKind::TimeIndex)
        .collect();
    assert_eq!(entry.len(), 1, "{:?}", r.problems);
    assert_eq!(entry[0].kind, ProblemKind::Entry);
    assert_eq!(entry[0].position, Some(0));
    assert!(
        entry[0].message.contains(&format!(
            "intact entries follow from byte {second_batch} (offset 2)"
        )),
        "{:?}",
        entry[0]
    );
    // Only the damaged batch (two records) is missing from the counts.
    assert_eq!(r.summary.entries, clean.entries - 1);
    assert_eq!(r.summary.records, clean.records - 2);
    // The same file checked alone.
    let r = krecords_log::check::check_file(first, LIMIT).unwrap();
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert!(
        r.problems[0].message.contains("offset 2"),
        "{:?}",
        r.problems
    );
}

#[test]
fn bad_index_entries_are_index_problems() {
    // A wrong offset or timestamp in the first entry, and the next entry no longer increases
    // after it.
    use ProblemKind::{Index, TimeIndex, TxnIndex};
    assert_eq!(damaged(".index", |b| b[3] ^= 0x40), [Index, Index]);
    assert_eq!(
        damaged(".timeindex", |b| b[7] ^= 0x40),
        [TimeIndex, TimeIndex]
    );
    // The producer id of the aborted transaction: that producer aborted nothing there.
    assert_eq!(damaged(".txnindex", |b| b[9] ^= 0x01), [TxnIndex]);
    // A partial entry at the end.
    assert_eq!(damaged(".txnindex", |b| b.push(0)), [TxnIndex]);
}

#[test]
fn damaged_snapshots_are_snapshot_problems() {
    let d = sample_log();
    let snap = files_with(d.path(), ".snapshot").pop().unwrap();
    patch(&snap, |b| {
        let n = b.len();
        b[n - 1] ^= 0x01;
    });
    let r = check_partition(d.path(), LIMIT).unwrap();
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].kind, ProblemKind::Snapshot);
    assert_eq!(r.problems[0].position, Some(2));
    patch(&snap, |b| b.truncate(4));
    assert_eq!(kinds(d.path()), [ProblemKind::Snapshot]);
}

#[test]
fn a_bad_leader_epoch_checkpoint_is_a_checkpoint_problem() {
    let d = sample_log();
    let path = d.path().join("leader-epoch-checkpoint");
    std::fs::write(&path, "0\n2\n3 0\n1 5\n").unwrap();
    assert_eq!(kinds(d.path()), [ProblemKind::Checkpoint]);
    std::fs::write(&path, "").unwrap();
    assert_eq!(kinds(d.path()), []);
}

#[test]
fn a_bad_config_is_a_config_problem() {
    let d = sample_log();
    std::fs::write(d.path().join("krec-log.json"), "{").unwrap();
    assert_eq!(kinds(d.path()), [ProblemKind::Config]);
}

#[test]
fn a_segment_that_overlaps_the_previous_one_is_an_offsets_problem() {
    let d = sample_log();
    let logs = files_with(d.path(), ".log");
    std::fs::copy(&logs[0], d.path().join("00000000000000000001.log")).unwrap();
    assert!(kinds(d.path()).contains(&ProblemKind::Offsets));
}

#[test]
fn a_checker_reports_problems_as_they_are_found_and_stops_on_a_sink_error() {
    let d = sample_log();
    let first = &files_with(d.path(), ".log")[0];
    patch(first, |b| b[70] ^= 0x01);
    let mut seen = Vec::new();
    let mut sink = |p: Problem| {
        seen.push(p.kind);
        Err(std::io::Error::other("stop"))
    };
    let mut checker = Checker::new(LIMIT, &mut sink);
    let e = checker.partition_dir(d.path()).unwrap_err();
    assert_eq!(checker.summary().problems, 1);
    drop(checker);
    assert!(matches!(e, CheckError::Io { ref what, .. } if what.is_empty()));
    assert_eq!(seen, [ProblemKind::Entry]);
}

#[test]
fn a_stream_of_entries_is_checked_without_indexes() {
    let mut bytes = v2(NOW, &["a", "b"]);
    bytes.extend(v2(NOW, &["c"]));
    let mut problems = Vec::new();
    let mut sink = |p: Problem| {
        problems.push(p);
        Ok(())
    };
    let mut checker = Checker::new(LIMIT, &mut sink);
    let mut s = EntryStream::from_reader(Box::new(std::io::Cursor::new(bytes)), None);
    checker.entries(&mut s, "-", None, None, &mut None).unwrap();
    let summary = checker.summary();
    drop(checker);
    // Both batches have base offset 0: the second does not follow the first.
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].kind, ProblemKind::Offsets);
    assert_eq!((summary.entries, summary.records), (2, 3));
}

/// A v1 gzip wrapper of ten messages, inner offsets 0..=9 (the wrapper's own offset 9).
fn v1_wrapper_0_to_9() -> Vec<u8> {
    let values: Vec<String> = (0..10).map(|i| format!("v{i}")).collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    legacy_compressed(1, krecords_codec::Compression::Gzip, NOW, &values)
}

/// Kafka rolls a segment at the first entry's `firstOrLastOffsetOfFirstBatch`: for a
/// compressed v0/v1 wrapper its last offset, so a segment may be named after the last
/// inner offset of its first wrapper. Verify took that for an entry below the base offset;
/// it now takes the wrapper's offset as recovery does (`segment::recovery_first_offset`).
#[test]
fn a_segment_named_after_its_first_legacy_wrappers_last_offset_is_clean() {
    let wrapper = v1_wrapper_0_to_9();
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("00000000000000000009.log"), &wrapper).unwrap();
    let r = check_partition(d.path(), LIMIT).unwrap();
    assert_eq!(r.problems, Vec::<Problem>::new());
    assert_eq!((r.summary.records, r.range), (10, Some((9, 10))));
    // A wrapper whose last offset is below the base offset is still damage.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("00000000000000000010.log"), &wrapper).unwrap();
    let r = check_partition(d.path(), LIMIT).unwrap();
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].kind, ProblemKind::Offsets);
    assert_eq!(
        r.problems[0].message,
        "entry with offsets 0..=9 is below the segment's base offset 10"
    );
}

/// Two-record v2 batches from offset `first`, one per epoch of `epochs`.
fn epoch_batches(first: i64, epochs: &[i32]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, &epoch) in epochs.iter().enumerate() {
        let mut b = krecords_codec::write::V2Builder::new(first + 2 * i as i64)
            .partition_leader_epoch(epoch);
        for v in ["a", "b"] {
            b.append(&krecords_codec::write::NewRecord::new(
                NOW,
                None,
                Some(v.as_bytes()),
            ))
            .unwrap();
        }
        out.extend(b.finish().unwrap());
    }
    out
}

/// A partition directory of segments, each `(base offset, epochs of its batches)`.
fn epoch_partition(segments: &[(i64, &[i32])]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (base, epochs) in segments {
        let name = format!("{base:020}.log");
        std::fs::write(d.path().join(name), epoch_batches(*base, epochs)).unwrap();
    }
    d
}

/// Size of one batch of [`epoch_batches`].
fn epoch_batch_len() -> usize {
    epoch_batches(0, &[0]).len()
}

#[test]
fn partition_leader_epochs_that_go_up_or_are_unset_are_clean() {
    for segments in [
        &[(0, &[0, 0, 3, 3, 5][..])][..],
        &[(0, &[-1, 2, -1, 2, 5, -1][..])],
        &[(0, &[0, 0, 3][..]), (6, &[3, 5][..])],
        &[(0, &[4][..]), (2, &[-1][..]), (4, &[4, 6][..])],
    ] {
        let d = epoch_partition(segments);
        let r = check_partition(d.path(), LIMIT).unwrap();
        assert_eq!(r.problems, Vec::<Problem>::new(), "{segments:?}");
    }
}

/// The partition leader epoch is outside every CRC: a flipped bit there was not found.
#[test]
fn a_flipped_bit_in_a_partition_leader_epoch_is_an_entry_problem() {
    let len = epoch_batch_len();
    // Epoch 7 of the middle batch becomes 3: found at that batch.
    let d = epoch_partition(&[(0, &[7, 7, 7, 7, 7])]);
    let log = d.path().join("00000000000000000000.log");
    patch(&log, |b| b[2 * len + 15] ^= 0x04);
    let r = check_partition(d.path(), LIMIT).unwrap();
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    let p = &r.problems[0];
    assert_eq!(
        (p.kind, p.position),
        (ProblemKind::Entry, Some(2 * len as u64))
    );
    assert_eq!(p.file, log.display().to_string());
    assert_eq!(
        p.message,
        "entry with offsets 4..=5: partition leader epoch 3 is below epoch 7 of an earlier entry \
         (last offset 3): epochs never go down in a partition's log (a flipped bit, or logs of \
         two replicas mixed)"
    );
    // Epoch 0 of the middle batch becomes 256: found once, at the batch after it.
    let d = epoch_partition(&[(0, &[0, 0, 0, 0, 0])]);
    let log = d.path().join("00000000000000000000.log");
    patch(&log, |b| b[2 * len + 14] ^= 0x01);
    let r = check_partition(d.path(), LIMIT).unwrap();
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].position, Some(3 * len as u64));
    assert!(r.problems[0]
        .message
        .starts_with("entry with offsets 6..=7: partition leader epoch 0 is below epoch 256 "));
}

#[test]
fn a_partition_leader_epoch_below_the_previous_segments_is_an_entry_problem() {
    let d = epoch_partition(&[(0, &[5, 5]), (4, &[-1, 3, 5])]);
    let r = check_partition(d.path(), LIMIT).unwrap();
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    let p = &r.problems[0];
    let second = d.path().join("00000000000000000004.log");
    assert_eq!(p.file, second.display().to_string());
    assert_eq!(p.position, Some(epoch_batch_len() as u64));
    assert!(p
        .message
        .contains("epoch 3 is below epoch 5 of an earlier entry (last offset 3)"));
    // A file checked on its own (not as a segment of a partition) starts afresh.
    let r = krecords_log::check::check_file(&second, LIMIT).unwrap();
    assert_eq!(r.problems, Vec::<Problem>::new());
}

/// One kind of damage to one file.
#[derive(Debug, Clone)]
enum Damage {
    Flip { at: usize, mask: u8 },
    Truncate { keep: usize },
    Append { bytes: Vec<u8> },
    Overwrite { at: usize, bytes: Vec<u8> },
}

fn damage() -> impl Strategy<Value = (usize, Damage)> {
    let d = prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(at, mask)| Damage::Flip { at, mask }),
        any::<usize>().prop_map(|keep| Damage::Truncate { keep }),
        proptest::collection::vec(any::<u8>(), 1..64).prop_map(|bytes| Damage::Append { bytes }),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..16)
        )
            .prop_map(|(at, bytes)| Damage::Overwrite { at, bytes }),
    ];
    (any::<usize>(), d)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random damage to any files of a log: the check returns (problems or not), never panics,
    /// and never changes the directory.
    #[test]
    fn random_damage_never_panics(damages in proptest::collection::vec(damage(), 1..5)) {
        let d = sample_log();
        let names: Vec<PathBuf> = contents(d.path()).into_iter().map(|(p, _)| p).collect();
        for (pick, dmg) in damages {
            let path = &names[pick % names.len()];
            patch(path, |b| match dmg {
                Damage::Flip { at, mask } if !b.is_empty() => {
                    let n = b.len();
                    b[at % n] ^= mask;
                }
                Damage::Flip { .. } => {}
                Damage::Truncate { keep } => {
                    let n = b.len();
                    b.truncate(keep % (n + 1));
                }
                Damage::Append { bytes } => b.extend(bytes),
                Damage::Overwrite { at, bytes } => {
                    let n = b.len();
                    for (i, x) in bytes.into_iter().enumerate() {
                        if let Some(slot) = b.get_mut((at % (n + 1)) + i) {
                            *slot = x;
                        }
                    }
                }
            });
        }
        let before = contents(d.path());
        let r = check_partition(d.path(), LIMIT);
        prop_assert!(r.is_ok(), "{:?}", r.err());
        let r = r.unwrap();
        prop_assert_eq!(r.summary.problems, r.problems.len() as u64);
        prop_assert_eq!(contents(d.path()), before);
    }

    /// Any bytes as a stream of entries: every step returns, and the stream ends.
    #[test]
    fn any_bytes_stream_to_an_end(bytes in proptest::collection::vec(any::<u8>(), 0..400), known in any::<bool>()) {
        let len = known.then_some(bytes.len() as u64);
        let mut s = EntryStream::from_reader(Box::new(std::io::Cursor::new(bytes)), len);
        let mut steps = 0;
        loop {
            steps += 1;
            prop_assert!(steps < 1000);
            match s.next_entry().unwrap() {
                Next::Entry(_) => {}
                Next::End | Next::Partial(_) | Next::Error(_) => break,
            }
        }
        prop_assert!(matches!(s.next_entry().unwrap(), Next::End));
    }
}

#[test]
fn segments_named_near_the_largest_offset_do_not_panic() {
    let d = sample_log();
    let logs = files_with(d.path(), ".log");
    let stem = logs[0].file_stem().unwrap().to_str().unwrap().to_string();
    for suffix in [".log", ".index", ".timeindex"] {
        std::fs::copy(
            d.path().join(format!("{stem}{suffix}")),
            d.path().join(format!("{:020}{suffix}", i64::MAX)),
        )
        .unwrap();
    }
    let k = kinds(d.path());
    assert!(k.contains(&ProblemKind::Offsets), "{k:?}");
}

/// A broker's data directory: sample logs in `orders-0`, `orders-1` (a flipped byte in its
/// first segment) and `payments-0`, and a recovery-point checkpoint naming `gone-7`, which has
/// no directory.
fn sample_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for name in ["orders-0", "orders-1", "payments-0"] {
        write_sample_log(&root.path().join(name));
    }
    patch(&files_with(&root.path().join("orders-1"), ".log")[0], |b| {
        b[70] ^= 0x01
    });
    let checkpoint = "0\n4\norders 0 0\norders 1 0\npayments 0 0\ngone 7 0\n";
    std::fs::write(
        root.path().join("recovery-point-offset-checkpoint"),
        checkpoint,
    )
    .unwrap();
    root
}

#[test]
fn a_whole_root_is_checked_with_its_own_files_and_totalled() {
    let root = sample_root();
    let selection = select_partitions(root.path(), None, None).unwrap();
    assert!(selection.whole);
    assert_eq!(selection.all, selection.chosen);
    let names: Vec<String> = selection.chosen.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["orders-0", "orders-1", "payments-0"]);
    assert!(selection.log_bytes() > 0);
    let done = std::sync::Mutex::new(Vec::new());
    let report = check_selection(&selection, 2, LIMIT, &|p| {
        done.lock().unwrap().push(p.name());
    })
    .unwrap();
    let mut done = done.into_inner().unwrap();
    done.sort();
    assert_eq!(done, names);
    let files = report
        .files
        .as_ref()
        .expect("the root's own files are checked");
    assert!(
        files.problems.iter().any(|p| p.message.contains("gone")),
        "{:?}",
        files.problems
    );
    let totals = report.totals(&selection.chosen);
    assert_eq!(totals.partitions, 3);
    assert_eq!(totals.with_problems, ["orders-1"]);
    assert!(totals.files_with_problems && !totals.is_clean());
    let mut sum = files.summary;
    for r in &report.partitions {
        sum.add(&r.summary);
    }
    assert_eq!(totals.counts, sum);
    // Two roots add up; the partitions with problems do not count the root's files.
    let mut all = Totals::default();
    all.add_root(&totals);
    all.add_root(&totals);
    assert_eq!(all.partitions, Some(6));
    assert_eq!(all.partitions_with_problems, Some(2));
    assert_eq!(all.counts.problems, 2 * sum.problems);
    assert!(
        all.describe(0)
            .starts_with("6 partitions (4 ok, 2 with problems), "),
        "{}",
        all.describe(0)
    );
    let json = serde_json::to_value(all).unwrap();
    assert_eq!(json["partitions"], 6);
    assert_eq!(json["partitions_with_problems"], 2);
    assert_eq!(json["problems"], 2 * sum.problems);
}

#[test]
fn a_selection_of_a_root_leaves_its_own_files_out() {
    let root = sample_root();
    let selection = select_partitions(root.path(), Some("ord*"), Some(1)).unwrap();
    assert!(!selection.whole);
    assert_eq!(selection.all.len(), 3);
    let names: Vec<String> = selection.chosen.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["orders-1"]);
    let report = check_selection(&selection, 8, LIMIT, &|_| {}).unwrap();
    assert!(report.files.is_none());
    let totals = report.totals(&selection.chosen);
    assert_eq!((totals.partitions, totals.files_with_problems), (1, false));
    assert_eq!(totals.with_problems, ["orders-1"]);
    // A partition number alone, in every topic.
    let zeros = select_partitions(root.path(), None, Some(0)).unwrap();
    let names: Vec<String> = zeros.chosen.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["orders-0", "payments-0"]);
    let report = check_selection(&zeros, 1, LIMIT, &|_| {}).unwrap();
    let totals = report.totals(&zeros.chosen);
    assert!(totals.is_clean(), "{totals:?}");
    // No data directory checked: no partition counts.
    let json = serde_json::to_value(Totals::default()).unwrap();
    assert!(json.get("partitions").is_none(), "{json}");
    assert_eq!(
        Totals::default().describe(0),
        "0 files, 0 entries, 0 records, 0 bytes: no problems"
    );
}

#[test]
fn a_bad_glob_or_nothing_selected_is_an_error() {
    let root = sample_root();
    let e = select_partitions(root.path(), Some("orders["), None).unwrap_err();
    assert!(
        matches!(&e, SelectError::Glob { glob, .. } if glob == "orders["),
        "{e:?}"
    );
    assert!(e.to_string().starts_with("topic glob \"orders[\": "), "{e}");
    assert!(std::error::Error::source(&e).is_some());
    // The glob is refused before the root is listed.
    let missing = root.path().join("missing");
    assert!(matches!(
        select_partitions(&missing, Some("["), None),
        Err(SelectError::Glob { .. })
    ));
    // Nothing taken: the filter and the topics there are, named.
    let topics = "(its topics: orders, payments)";
    for (topic, partition, says) in [
        (
            Some("nope*"),
            None,
            "no partition of a topic matching \"nope*\"",
        ),
        (
            Some("order"),
            None,
            "no partition of a topic matching \"order\"",
        ),
        (None, Some(9), "no partition 9"),
        (
            Some("ord*"),
            Some(7),
            "no partition 7 of a topic matching \"ord*\"",
        ),
    ] {
        let e = select_partitions(root.path(), topic, partition).unwrap_err();
        assert!(
            matches!(&e, SelectError::NoMatch { source, .. } if *source == root.path().display().to_string()),
            "{e:?}"
        );
        let want = format!("{}: {says} {topics}", root.path().display());
        assert_eq!(e.to_string(), want);
    }
    // Several globs: any of them.
    let f = PartitionFilter::globs(&["nope", "pay*"], None).unwrap();
    let names: Vec<String> = f
        .select(root.path())
        .unwrap()
        .chosen
        .iter()
        .map(|p| p.name())
        .collect();
    assert_eq!(names, ["payments-0"]);
    let f = PartitionFilter::globs(&["a", "b*"], None).unwrap();
    let e = f.select(root.path()).unwrap_err().to_string();
    assert!(
        e.ends_with(&format!("matching \"a\" or \"b*\" {topics}")),
        "{e}"
    );
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("meta.properties"), "version=1\n").unwrap();
    for filter in [
        PartitionFilter::default(),
        PartitionFilter::new(Some("x"), None).unwrap(),
    ] {
        let e = filter.select(empty.path()).unwrap_err();
        assert!(matches!(&e, SelectError::Empty { .. }), "{e:?}");
        assert!(e.to_string().ends_with(": no partition directories"), "{e}");
    }
    let e = PartitionFilter::default().select(&missing).unwrap_err();
    assert!(
        matches!(&e, SelectError::List { root: r, .. } if *r == missing),
        "{e:?}"
    );
    assert!(e.to_string().starts_with("cannot list "), "{e}");
}
