//! A partition named more than once is listed (and so read) once: a root named twice, a root
//! and one of its partition directories, two spellings of one directory, a segment file
//! named twice or with its directory, the same `kafka://` partition twice. Each is said in
//! [`Sources::notes`].

use krecords_codec::write::{NewRecord, V2Builder};
use krecords_log::{AppendOrigin, Log, LogConfig};
use krecords_source::{ClientConfig, Sources};
use std::path::{Path, PathBuf};

/// A partition directory of 6 records in several segments.
fn write_partition(dir: &Path) {
    let mut log = Log::create(
        dir,
        LogConfig::from_pairs([("segment.bytes", "100")]).unwrap(),
    )
    .unwrap();
    for i in 0..6i64 {
        let mut b = V2Builder::new(0);
        b.append(&NewRecord::new(1_714_000_000_000 + i, None, Some(b"value")))
            .unwrap();
        log.append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
    }
    log.close().unwrap();
}

/// Names and files of the partitions of `args`, and the notes.
fn open(args: &[PathBuf]) -> (Vec<(String, usize)>, Vec<String>) {
    let sources = Sources::open_local(args).unwrap();
    let parts = sources
        .partitions
        .iter()
        .map(|p| (p.name.clone(), p.files().len()))
        .collect();
    (parts, sources.notes().to_vec())
}

#[test]
fn a_partition_named_twice_is_listed_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let a = root.join("a-0");
    let b = root.join("b-0");
    write_partition(&a);
    write_partition(&b);
    let segments = krecords_source::dir_logs(&a).unwrap();
    assert!(segments.len() >= 3, "{segments:?}");
    let whole = open(std::slice::from_ref(&root));
    assert_eq!(whole.0.len(), 2);
    assert!(whole.1.is_empty(), "{:?}", whole.1);

    // The root twice.
    let (parts, notes) = open(&[root.clone(), root.clone()]);
    assert_eq!(parts, whole.0);
    assert_eq!(
        notes,
        [
            format!("{}: named more than once, read once", a.display()),
            format!("{}: named more than once, read once", b.display()),
        ]
    );
    // A root and one of its partitions, in either order; another spelling of the directory.
    let (parts, notes) = open(&[a.clone(), root.clone()]);
    assert_eq!(parts.len(), 2);
    assert_eq!(notes.len(), 1, "{notes:?}");
    let dotted = root.join(".").join("a-0");
    let (parts, notes) = open(&[root.clone(), dotted]);
    assert_eq!(parts.len(), 2);
    assert_eq!(notes.len(), 1, "{notes:?}");
    // Through a link.
    #[cfg(unix)]
    {
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let (parts, _) = open(&[a.clone(), link]);
        assert_eq!(parts.len(), 1);
    }

    // One pattern that matches the root, its partition directories and their files: each
    // partition once (a single argument was taken for one that cannot name a partition twice).
    let (parts, notes) = open(&[root.join("**")]);
    assert_eq!(parts, whole.0, "{notes:?}");

    // A segment named twice: one partition of its one file.
    let (parts, notes) = open(&[segments[0].clone(), segments[0].clone()]);
    assert_eq!(parts, [(segments[0].display().to_string(), 1)]);
    assert_eq!(
        notes,
        [format!(
            "{}: named more than once, read once",
            segments[0].display()
        )]
    );
    // Segments with their directory: read with it, before or after it.
    for args in [
        vec![segments[1].clone(), a.clone()],
        vec![a.clone(), segments[1].clone(), segments[2].clone()],
    ] {
        let (parts, notes) = open(&args);
        assert_eq!(
            parts,
            [(a.display().to_string(), segments.len())],
            "{args:?}"
        );
        assert_eq!(
            notes[0],
            format!(
                "{}: named with its partition directory {}, read once, with it",
                segments[1].display(),
                a.display()
            )
        );
    }
    // The segments of another partition are not.
    let other = krecords_source::dir_logs(&b).unwrap();
    let (parts, notes) = open(&[a.clone(), other[0].clone()]);
    assert_eq!(parts.len(), 2);
    assert!(notes.is_empty());
}

#[test]
fn a_live_partition_named_twice_is_listed_once() {
    let cluster = krecords_testkit::FakeCluster::start(&[("t", 2)]);
    let topic = PathBuf::from(format!("kafka://{}/t", cluster.addr()));
    let one = PathBuf::from(format!("kafka://{}/t/1", cluster.addr()));
    let sources = Sources::open(&[topic.clone(), one.clone(), topic], &mut || {
        Ok(ClientConfig::default())
    })
    .unwrap();
    let names: Vec<&str> = sources.partitions.iter().map(|p| p.name.as_str()).collect();
    let t = format!("kafka://{}/t", cluster.addr());
    assert_eq!(names, [format!("{t}/0"), format!("{t}/1")]);
    assert_eq!(
        sources.notes(),
        [
            format!("{t}/1: named more than once, read once"),
            format!("{t}/0: named more than once, read once"),
        ]
    );
}
