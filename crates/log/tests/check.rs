//! The integrity check (`krecords_log::check`): a clean log has no problems; each kind of
//! damage gives its problem kind; any damage never panics and never changes the directory.

use crate::util::*;
use krecords_log::check::{
    check_partition, CheckError, Checker, EntrySource, EntryStream, Next, Problem, ProblemKind,
};
use krecords_log::{AppendOrigin, Log};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

const LIMIT: usize = 64 << 20;

/// A closed log on disk: six 2-record batches over several segments, every batch indexed, an
/// aborted transaction (so a `.txnindex` and producer snapshots) and a committed one.
fn sample_log() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut log = Log::create(
        dir.path(),
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
    dir
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
