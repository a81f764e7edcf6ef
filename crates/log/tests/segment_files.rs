//! `Log::open_segment_files`: a list of segment files, from several directories, read as one
//! log where they are, without links and without changing anything.

use crate::util::*;
use krecords_log::{IsolationLevel, Log, LogConfig};
use std::path::{Path, PathBuf};

/// Every name in `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn segments_of_two_directories_read_as_the_log_they_came_from() {
    let tmp = tempfile::tempdir().unwrap();
    let orig = tmp.path().join("orig-0");
    let batch = v2(NOW, &["0123456789"]);
    let config =
        LogConfig::from_pairs([("segment.bytes", (2 * batch.len()).to_string().as_str())]).unwrap();
    let mut log = Log::create(&orig, config).unwrap();
    for _ in 0..6 {
        append(&mut log, &batch);
    }
    log.close().unwrap();
    let log = Log::open_read_only(&orig).unwrap();
    let segments: Vec<PathBuf> = log.segment_files().into_iter().map(|(l, _, _)| l).collect();
    assert_eq!(segments.len(), 3);
    // The first segment with its indexes in one directory, the others alone in another.
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let mut listed = Vec::new();
    for (i, s) in segments.iter().enumerate() {
        let name = s.file_name().unwrap();
        let to = if i == 0 { &a } else { &b };
        std::fs::copy(s, to.join(name)).unwrap();
        if i == 0 {
            for ext in ["index", "timeindex"] {
                std::fs::copy(s.with_extension(ext), to.join(name).with_extension(ext)).unwrap();
            }
        }
        listed.push(to.join(name));
    }
    let (before_a, before_b) = (snapshot(&a), snapshot(&b));
    let files = Log::open_segment_files(&listed).unwrap();
    assert_eq!(files.dir(), a);
    assert_eq!(files.log_end_offset(), log.log_end_offset());
    let whole = |l: &Log| {
        l.fetch(0, 1 << 20, IsolationLevel::ReadCommitted)
            .unwrap()
            .bytes
    };
    assert_eq!(whole(&files), whole(&log));
    assert_eq!(whole(&files).len(), 6 * batch.len());
    drop(files);
    assert_eq!(snapshot(&a), before_a, "nothing written");
    assert_eq!(snapshot(&b), before_b, "nothing written");
}

#[test]
fn other_names_duplicates_and_an_empty_list_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let bytes = v2(NOW, &["x"]);
    let some = tmp.path().join("some.log");
    std::fs::write(&some, &bytes).unwrap();
    let e = Log::open_segment_files(&[&some]).unwrap_err().to_string();
    assert!(
        e.contains(&format!("{}: not a segment file", some.display())),
        "{e}"
    );
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("00000000000000000000.log"), &bytes).unwrap();
    }
    let e = Log::open_segment_files(&[
        a.join("00000000000000000000.log"),
        b.join("00000000000000000000.log"),
    ])
    .unwrap_err()
    .to_string();
    assert!(e.contains("base offset 0 is listed twice"), "{e}");
    let none: [&Path; 0] = [];
    assert!(Log::open_segment_files(&none).is_err());
    let missing = tmp.path().join("00000000000000000005.log");
    assert!(Log::open_segment_files(&[missing]).is_err());
}
