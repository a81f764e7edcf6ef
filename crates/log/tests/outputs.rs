//! Where new logs may be written: `Log::create` into a new or empty directory only, and no
//! output of salvage or convert inside the directories they read.

use crate::util::{config, dir_state, fs_log, mem};
use krecords_codec::convert::ConvertOptions;
use krecords_log::check::EntrySource;
use krecords_log::convert::{self, ConvertError, InsideSource};
use krecords_log::salvage::{Input, InputError};
use krecords_log::storage::Storage;
use krecords_log::{Error, Log};
use std::io;
use std::path::{Path, PathBuf};

#[test]
fn create_refuses_a_directory_holding_files_but_no_log_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    std::fs::create_dir(&dir).unwrap();
    for name in ["g", "f", "e", "d", "c", "b", "a"] {
        std::fs::write(dir.join(name), b"x").unwrap();
    }
    let before = dir_state(&dir);
    let e = Log::create(&dir, config(&[])).unwrap_err();
    match &e {
        Error::AlreadyExists { path, holds } => {
            assert_eq!(path, &dir);
            assert_eq!(holds, &["a", "b", "c", "d", "e", "f", "g"]);
        }
        e => panic!("{e}"),
    }
    assert_eq!(e.kafka_name(), "TOPIC_ALREADY_EXISTS");
    assert_eq!(
        e.to_string(),
        format!(
            "{}: already holds files (a log is written into a new or empty directory); it \
             holds a, b, c, d, e and 2 more",
            dir.display()
        )
    );
    assert_eq!(dir_state(&dir), before, "no lock file, no log");
    // A new directory, an empty one, and one holding only a lock file left by a refused
    // create are taken.
    Log::create(tmp.path().join("new/deeper"), config(&[]))
        .unwrap()
        .close()
        .unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    Log::create(&empty, config(&[])).unwrap().close().unwrap();
    let locked = tmp.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::write(locked.join("krec.lock"), b"").unwrap();
    Log::create(&locked, config(&[])).unwrap().close().unwrap();
    // A log: refused as before, its files named.
    let e = Log::create(&empty, config(&[])).unwrap_err();
    assert!(
        matches!(&e, Error::AlreadyExists { holds, .. } if holds.iter().any(|n| n == "krec-log.json")),
        "{e}"
    );
}

#[test]
fn create_in_memory_refuses_a_directory_with_a_file() {
    let m = mem();
    m.storage.create_dir_all(&m.dir).unwrap();
    m.storage
        .create(&m.path("README"))
        .unwrap()
        .write_at(b"x", 0)
        .unwrap();
    let e = Log::create_with(&m.dir, config(&[]), m.env.clone()).unwrap_err();
    assert!(
        matches!(&e, Error::AlreadyExists { holds, .. } if holds == &["README"]),
        "{e}"
    );
    assert_eq!(m.storage.list_dir(&m.dir).unwrap(), ["README"]);
}

/// Every path below `dir` with its size, sorted.
fn tree(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            all.extend(tree(&path));
        }
        let len = path.metadata().unwrap().len();
        all.push((path, len));
    }
    all.sort();
    all
}

#[test]
fn convert_refuses_an_output_inside_its_input_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("t-0");
    fs_log(&input).close().unwrap();
    let before = tree(&input);
    let mut open = |_: &Path| -> io::Result<Box<dyn EntrySource>> {
        Err(io::Error::other("nothing is opened"))
    };
    for output in [input.join("v1"), input.clone(), input.join("a/b")] {
        let e = convert::convert_dir(
            &input,
            &output,
            &ConvertOptions::default(),
            &mut open,
            &mut |_, _| {},
        )
        .unwrap_err();
        let ConvertError::InsideSource(InsideSource { output: o, dir }) = &e else {
            panic!("{e}");
        };
        assert_eq!((o, dir), (&output, &input));
        let text = e.to_string();
        assert!(
            text.contains(&output.display().to_string())
                && text.contains(&format!("is the source directory {} ", input.display())),
            "{text}"
        );
    }
    assert_eq!(tree(&input), before);
    // A file or a URL holds nothing; a sibling is fine.
    let segment = input.join("00000000000000000000.log");
    convert::check_output(&segment, &input.join("x")).unwrap();
    convert::check_output(Path::new("kafka://h:9092/t/0"), &input.join("x")).unwrap();
    convert::check_output(&input, &tmp.path().join("t-copy-0")).unwrap();
}

#[cfg(unix)]
#[test]
fn links_are_resolved_on_both_sides() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("t-0");
    std::fs::create_dir(&input).unwrap();
    std::os::unix::fs::symlink(&input, tmp.path().join("link")).unwrap();
    let via = tmp.path().join("link/out");
    assert_eq!(
        convert::source_holding(&via, &[&input]),
        Some(input.as_path())
    );
    assert!(convert::is_inside(
        &input.join("out"),
        &tmp.path().join("link")
    ));
    assert!(!convert::is_inside(&tmp.path().join("t-00"), &input));
}

#[test]
fn salvage_takes_segment_files_or_one_directory_and_no_output_inside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("data");
    let part = root.join("t-0");
    fs_log(&part).close().unwrap();
    let before = tree(&root);
    let input = |sources: &[&Path], output: &Path| {
        let sources: Vec<PathBuf> = sources.iter().map(|p| p.to_path_buf()).collect();
        Input::of(&sources, output)
    };
    // The partition directory, the root.
    let out = tmp.path().join("out");
    assert_eq!(
        input(&[&part], &out).unwrap(),
        Input::Partition(part.clone())
    );
    match input(&[&root], &out).unwrap() {
        Input::Root { dir, partitions } => {
            assert_eq!(dir, root);
            assert_eq!(partitions.len(), 1);
            assert_eq!(partitions[0].path, part);
        }
        other => panic!("{other:?}"),
    }
    // Outputs inside them.
    for (source, output) in [
        (&part, part.join("salvaged")),
        (&part, part.clone()),
        (&root, root.join("out")),
        (&root, part.join("x/y")),
    ] {
        let e = input(&[source], &output).unwrap_err();
        assert!(e.is_usage(), "{e}");
        let InputError::InsideSource(i) = &e else {
            panic!("{e}");
        };
        assert_eq!((&i.output, &i.dir), (&output, source));
    }
    // Several directories, or a directory among files.
    let other = tmp.path().join("u-0");
    std::fs::create_dir(&other).unwrap();
    let e = input(&[&part, &other], &out).unwrap_err();
    assert!(matches!(&e, InputError::NotOneDirectory { dirs, given: 2 } if dirs.len() == 2));
    assert!(
        e.to_string()
            .contains("salvage each directory into its own output"),
        "{e}"
    );
    let segment = part.join("00000000000000000000.log");
    let e = input(&[&segment, &part], &out).unwrap_err();
    assert!(
        matches!(&e, InputError::NotOneDirectory { given: 2, .. }),
        "{e}"
    );
    // Standard input, an empty directory.
    assert!(matches!(
        input(&[Path::new("-")], &out),
        Err(InputError::Stdin)
    ));
    assert!(matches!(input(&[&other], &out), Err(InputError::Empty(_))));
    // Segment files, sorted by their names' base offsets.
    let mut segments =
        krecords_log::salvage::segment_files(&krecords_log::Env::fs(), &part).unwrap();
    assert!(segments.len() >= 3);
    let sorted = segments.clone();
    segments.reverse();
    let refs: Vec<&Path> = segments.iter().map(PathBuf::as_path).collect();
    assert_eq!(
        input(&refs, &part.join("out")).unwrap(),
        Input::Files(sorted)
    );
    assert_eq!(tree(&root), before, "nothing created");
}

/// A source or a segment that is not a regular file is refused before it is opened, naming it:
/// a FIFO (opening it for reading waits for a writer: salvage hung), a link to /dev/zero (it
/// has no length: salvaged as an empty file, "nothing lost"), a directory named as a segment;
/// as a source file, as a segment of a partition directory or of a log.dirs root's partition,
/// and through `salvage_files` and `salvage_partition` directly.
#[cfg(unix)]
#[test]
fn salvage_refuses_a_fifo_a_device_or_a_directory_named_as_a_segment() {
    use krecords_log::salvage::{self, NoSink, SalvageOptions};
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let refused = |sources: &[PathBuf], path: &Path, kind: &str| {
        let e = Input::of(sources, &out).unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert!(
            matches!(&e, InputError::NotAFile { path: p, kind: k } if p == path && *k == kind),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("{}: {kind}, not a regular file", path.display())),
            "{text}"
        );
    };
    // A FIFO among a partition's segments (after a regular one), in a log.dirs root.
    let root = tmp.path().join("data");
    let part = root.join("t-0");
    std::fs::create_dir_all(&part).unwrap();
    std::fs::write(part.join("00000000000000000000.log"), b"").unwrap();
    let fifo = part.join("00000000000000000010.log");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("no mkfifo: skipped");
        return;
    }
    refused(std::slice::from_ref(&fifo), &fifo, "a FIFO");
    refused(std::slice::from_ref(&part), &fifo, "a FIFO");
    refused(std::slice::from_ref(&root), &fifo, "a FIFO");
    let options = SalvageOptions::default();
    let e = salvage::salvage_partition(&part, Some(&out), options, &mut NoSink).unwrap_err();
    assert!(matches!(&e, Error::Io { path, .. } if *path == fifo), "{e}");
    let config = krecords_log::LogConfig::default();
    let e = salvage::salvage_files(
        std::slice::from_ref(&fifo),
        Some(&out),
        &config,
        options,
        &mut NoSink,
    )
    .unwrap_err();
    assert!(e.to_string().contains("a FIFO, not a regular file"), "{e}");
    // A link to /dev/zero.
    if Path::new("/dev/zero").exists() {
        let zero = tmp.path().join("00000000000000000000.log");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        refused(std::slice::from_ref(&zero), &zero, "a character device");
    }
    // A directory named as a segment.
    let other = tmp.path().join("u-0");
    let named = other.join("00000000000000000000.log");
    std::fs::create_dir_all(&named).unwrap();
    refused(std::slice::from_ref(&other), &named, "a directory");
    assert!(!out.exists(), "nothing created");
}

/// Offsets that go back across segments are bad input named by the input segment and byte, as
/// within one (`ConvertError::Entry`), found while converting, and the output is left as it
/// was: no directory, no temporary one. It was the converted log's recovery that failed,
/// naming the temporary directory.
#[test]
fn convert_refuses_offsets_going_back_across_segments() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = |dir: &Path| -> Vec<PathBuf> {
        let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .collect();
        logs.sort();
        logs
    };
    let mut open = |path: &Path| -> io::Result<Box<dyn EntrySource>> {
        Ok(Box::new(krecords_log::check::EntryStream::open_file(
            path, None,
        )?))
    };
    // The second segment's first batch claims offset 0; the second segment renamed one below
    // its base (the first segment's last batch reaches it); renamed one above it (its first
    // batch is below its name).
    for (case, expect) in [
        ("back", "not after the previous entry's last offset"),
        ("lower", "reaching the next segment's base offset"),
        ("higher", "below the base offset"),
    ] {
        let input = tmp.path().join(format!("{case}-0"));
        fs_log(&input).close().unwrap();
        let segments = logs(&input);
        assert!(segments.len() >= 3, "{segments:?}");
        let second = &segments[1];
        let base: i64 = second
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        let named = |b: i64| input.join(format!("{b:020}.log"));
        let (file, at) = match case {
            "back" => {
                let mut bytes = std::fs::read(second).unwrap();
                bytes[..8].copy_from_slice(&0i64.to_be_bytes());
                std::fs::write(second, bytes).unwrap();
                (second.clone(), 0)
            }
            _ => {
                let to = if case == "lower" { base - 1 } else { base + 1 };
                std::fs::rename(second, named(to)).unwrap();
                if case == "lower" {
                    // The first segment's last batch, which holds offset base - 1.
                    let bytes = std::fs::read(&segments[0]).unwrap();
                    let mut at = 0;
                    let mut last = 0;
                    while at < bytes.len() {
                        last = at;
                        let len = i32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap());
                        at += 12 + len as usize;
                    }
                    (segments[0].clone(), last)
                } else {
                    (named(base + 1), 0)
                }
            }
        };
        let out = tmp.path().join(format!("out-{case}"));
        let e = convert::convert_dir(
            &input,
            &out,
            &ConvertOptions::default(),
            &mut open,
            &mut |_, _| {},
        )
        .unwrap_err();
        let ConvertError::Entry { name, error } = &e else {
            panic!("{case}: {e}");
        };
        assert_eq!(name, &file.display().to_string(), "{case}");
        assert!(
            matches!(error, krecords_codec::Error::InvalidRecord { at: a, reason }
                if *a == at && reason.contains(expect)),
            "{case}: {error}"
        );
        let left: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("out") || n.contains("krec-tmp"))
            .collect();
        assert!(left.is_empty(), "{case}: {left:?}");
    }
}
