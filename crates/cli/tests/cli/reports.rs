//! What a newcomer's trial on damaged partitions and broker roots found unclear: messages that
//! said the wrong thing (a read "whole before offset 0", a "truncated tail" in the middle of a
//! log, a batch named by its last offset, a path said twice), a partition of a root left out of
//! an `--end` it ends before, a root given to convert, and an empty input explained silently.

use crate::util::*;

/// A length field lying upwards: the entry runs past the end of its file.
fn lying_length(b: &mut [u8]) {
    b[8..12].copy_from_slice(&0x7fff_ff00u32.to_be_bytes());
}

/// The size of the first entry of a segment file's bytes.
fn first_entry_size(b: &[u8]) -> usize {
    12 + i32::from_be_bytes([b[8], b[9], b[10], b[11]]) as usize
}

/// Damage in the first entry of a log, with intact entries after it: the error of a read that
/// reaches it said "reads that end before offset 0 are whole"; it says that nothing of the log
/// is readable before the damage.
#[test]
fn damage_in_the_first_entry_says_nothing_before_it_is_readable() {
    let d = Dir::new();
    let log = d.partition("t-0", 60);
    d.damage_segment("t-0", 0, |b| lying_length(b));
    let r = d.run(&["log", "read", &log], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("no offset of the log is readable before the damage"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("reads that end before"), "{}", r.stderr);
}

/// stats called a damaged length field in the first of three segments "a truncated tail" and
/// counted nothing of that segment; it says what verify says (damage that intact entries
/// follow) and counts the entries verify counts.
#[test]
fn stats_tells_damage_in_the_middle_from_a_truncated_tail_as_verify_does() {
    let d = Dir::new();
    let log = d.partition("t-0", 60);
    d.damage_segment("t-0", 0, |b| lying_length(b));
    let v = d.run(&["verify", &log], b"");
    assert_eq!(v.code, 1, "{}", v.out());
    let follows = v
        .out()
        .lines()
        .find_map(|l| {
            l.split_once("intact entries follow from byte ")
                .map(|(_, rest)| rest.split(';').next().unwrap().to_owned())
        })
        .unwrap_or_else(|| panic!("{}", v.out()));
    assert!(v.out().contains(", 55 records"), "{}", v.out());
    let r = d.run(&["stats", "--format", "json", &log], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!r.stderr.contains("truncated tail"), "{}", r.stderr);
    let said = format!(
        "byte 0: damaged entry: its length field runs past the end of the file; intact entries \
         follow from byte {follows}"
    );
    assert!(r.stderr.contains(&said), "{}", r.stderr);
    assert_eq!(r.json()["summary"]["records"].as_u64(), Some(55));
    // A cut-off last segment is still a truncated tail.
    let torn = log_torn(&d);
    let r = d.run(&["stats", &torn], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("a truncated tail"), "{}", r.stderr);
}

/// A partition directory whose last segment is cut short.
fn log_torn(d: &Dir) -> String {
    let log = d.partition("torn-0", 60);
    d.damage_segment("torn-0", 40, |b| b.truncate(b.len() - 10));
    log
}

/// log read named a damaged batch by its last offset ("record batch at offset 29"), where
/// dump, verify and salvage name entries by their base offset and byte.
#[test]
fn log_read_names_a_damaged_entry_by_base_offset_file_and_byte() {
    let d = Dir::new();
    let log = d.partition("t-0", 60);
    let mut at = 0;
    let segment = d.damage_segment("t-0", 20, |b| {
        // The second entry of the segment: offsets 25..=29.
        at = first_entry_size(b);
        b[at + 70] ^= 0xff;
    });
    let r = d.run(&["log", "read", &log], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("{segment} at byte {at}")),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("the entry with base offset 25 (offsets 25..=29) is invalid: crc mismatch"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("at offset 29"), "{}", r.stderr);
}

/// offsets and export of a root said a damaged partition's path twice ("d/t-0: d/t-0/…log:"),
/// and offsets printed the whole warning again in the table row.
#[test]
fn offsets_and_export_of_a_root_say_a_damaged_partitions_path_once() {
    let d = Dir::new();
    d.partition("data/good-0", 60);
    d.partition("data/mid-0", 60);
    d.partition("data/off-0", 60);
    d.damage_segment("data/mid-0", 20, |b| lying_length(b));
    // The last entry of the first segment claims offsets 100..=104 (no CRC covers them).
    d.damage_segment("data/off-0", 0, |b| {
        let mut at = 0;
        for _ in 0..3 {
            at += first_entry_size(&b[at..]);
        }
        b[at..at + 8].copy_from_slice(&100i64.to_be_bytes());
    });
    let root = d.arg("data");
    let twice = |text: &str| -> Option<String> {
        text.lines()
            .find(|l| {
                ["mid-0", "off-0"].iter().any(|p| {
                    let dir = format!("{root}/{p}");
                    l.matches(&dir).count() > 1
                })
            })
            .map(str::to_owned)
    };
    let r = d.run(&["offsets", &root], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(twice(&r.stderr), None, "{}", r.stderr);
    assert!(r.stderr.contains("intact entries follow"), "{}", r.stderr);
    let row = r
        .out()
        .lines()
        .find(|l| l.starts_with("mid "))
        .unwrap_or_else(|| panic!("{}", r.out()))
        .to_owned();
    assert!(row.ends_with("  damaged"), "{row}");
    assert!(!r.out().contains(&root), "{}", r.out());
    // JSON keeps the whole error.
    let r = d.run(&["offsets", "--format", "json", &root], b"");
    assert!(r.out().contains("intact entries follow"), "{}", r.out());
    let out = d.arg("out");
    let r = d.run(&["export", &root, "--output", &out], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("off-0"), "{}", r.stderr);
    assert_eq!(twice(&r.stderr), None, "{}", r.stderr);
}

/// convert of a broker's root said "no segments"; it says that convert takes one partition
/// directory and what the root holds.
#[test]
fn convert_of_a_root_says_it_takes_one_partition() {
    let d = Dir::new();
    d.partition("data/a-0", 10);
    d.partition("data/a-1", 10);
    let root = d.arg("data");
    let r = d.run(&["convert", &root, &d.arg("out")], b"");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("a broker's log.dirs root with 2 partitions (a-0, a-1)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("convert takes one partition directory or segment files"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("no segments"), "{}", r.stderr);
    assert!(!d.path("out").exists());
    // An empty directory has no segments.
    std::fs::create_dir(d.path("empty")).unwrap();
    let r = d.run(&["convert", &d.arg("empty"), &d.arg("out")], b"");
    r.fails(2, "no segments");
}

/// dump and verify of a root with `--end` past one partition's end left that partition out
/// ("nothing of it is in the range") although its offsets are in the range; it is read to
/// its end, as export reads it. A partition read alone keeps its rule: an end past it is a
/// usage error.
#[test]
fn an_end_past_one_partition_of_a_root_reads_that_partition_to_its_end() {
    let d = Dir::new();
    d.partition("data/long-0", 60);
    let short = d.partition("data/short-0", 40);
    let root = d.arg("data");
    let r = d.run(&["dump", "--format", "json", "--end", "50", &root], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("nothing of it"), "{}", r.stderr);
    let short_entries = r
        .json_lines()
        .iter()
        .filter(|e| e["file"].as_str().unwrap().contains("short-0"))
        .count();
    assert_eq!(short_entries, 8, "{}", r.out());
    let r = d.run(&["verify", "--end", "50", &root], b"");
    assert_eq!(r.code, 0, "{}", r.out());
    assert!(r.out().contains(", 90 records"), "{}", r.out());
    assert!(!r.stderr.contains("nothing of it"), "{}", r.stderr);
    // A start past it still leaves it out.
    let r = d.run(&["dump", "--start", "45", "--end", "50", &root], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("nothing of it is in the range"),
        "{}",
        r.stderr
    );
    // Alone, an end past the partition is refused.
    let r = d.run(&["dump", "--end", "50", &short], b"");
    r.fails(2, "offset 50 is out of range: the partition holds [0, 40)");
}

/// explain of an empty file or /dev/null printed nothing at all; it says the input is empty,
/// and exits 0 (an empty log is not damaged data).
#[test]
fn explain_says_an_empty_input_is_empty() {
    let d = Dir::new();
    let empty = d.write("empty.log", b"");
    let mut inputs = vec![empty];
    if std::path::Path::new("/dev/null").exists() {
        inputs.push("/dev/null".into());
    }
    for input in &inputs {
        let r = d.run(&["explain", input], b"");
        assert_eq!(r.code, 0, "{input}: {}", r.stderr);
        assert_eq!(r.out(), "", "{input}");
        assert!(
            r.stderr
                .contains(&format!("{input}: empty input: no entries")),
            "{input}: {}",
            r.stderr
        );
        let r = d.run(&["explain", "--format", "json", input], b"");
        assert_eq!((r.code, r.out().as_str()), (0, "[]\n"), "{}", r.stderr);
    }
    let r = d.run(&["explain", "-"], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("-: empty input: no entries"),
        "{}",
        r.stderr
    );
}

/// What a read's stderr says of the data: the words after its first "byte N: " up to the
/// first digit after them ("invalid magic "), or the whole text when it names no byte.
#[cfg(target_os = "linux")]
fn error_class(stderr: &str) -> String {
    let Some((_, rest)) = stderr.split_once("byte ") else {
        return stderr.to_owned();
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest.trim_start_matches(": ");
    rest.split(|c: char| c.is_ascii_digit())
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// A file whose metadata says 0 bytes but which reads text (/proc/self/status) read as empty:
/// dump exited 0 where the same bytes through `-` were invalid data. It is read to its end, as
/// standard input is: the same exit code and the same error.
#[cfg(target_os = "linux")]
#[test]
fn a_proc_file_of_length_0_reads_as_its_bytes_through_stdin_do() {
    let path = "/proc/self/status";
    let bytes = std::fs::read(path).unwrap();
    assert!(!bytes.is_empty());
    assert_eq!(std::fs::metadata(path).unwrap().len(), 0);
    for cmd in ["dump", "stats", "explain"] {
        let file = run(&[cmd, path]);
        let stdin = run_in(std::path::Path::new("."), &[cmd, "-"], &bytes);
        assert_eq!(stdin.code, 1, "{cmd} -: {}", stdin.stderr);
        assert_eq!(file.code, stdin.code, "{cmd} {path}: {}", file.stderr);
        let (f, s) = (
            file.stderr.clone() + &file.out(),
            stdin.stderr.clone() + &stdin.out(),
        );
        assert!(f.contains("invalid magic"), "{cmd} {path}: {f}");
        assert_eq!(error_class(&f), error_class(&s), "{cmd}: {f}\n---\n{s}");
    }
    // A file whose bytes are the same whoever reads them: the same report, but for the name.
    let path = "/proc/version";
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        let bytes = std::fs::read(path).unwrap();
        for cmd in ["dump", "stats"] {
            let file = run(&[cmd, path]);
            let stdin = run_in(std::path::Path::new("."), &[cmd, "-"], &bytes);
            assert_eq!(file.code, stdin.code, "{cmd} {path}: {}", file.stderr);
            let named = |s: &str| s.replace(path, "-").replace("of version", "of -");
            assert_eq!(named(&file.stderr), stdin.stderr, "{cmd}");
            assert_eq!(named(&file.out()), stdin.out(), "{cmd}");
        }
    }
}

/// A FIFO has no length: it is read to its end, as standard input is (the same report), and a
/// read that needs a first pass over it (read_committed, a start) is refused as standard
/// input's is, rather than waiting for a second writer for ever.
#[cfg(target_os = "linux")]
#[test]
fn a_fifo_reads_as_standard_input_does() {
    let d = Dir::new();
    let fifo = d.tmp.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("no mkfifo: skipped");
        return;
    }
    let fifo = fifo.to_str().unwrap().to_owned();
    let bytes = b"not Kafka data, but a line of text long enough for an entry's prefix\n".to_vec();
    for cmd in ["dump", "stats"] {
        let writer = {
            let (fifo, bytes) = (fifo.clone(), bytes.clone());
            std::thread::spawn(move || std::fs::write(fifo, bytes).unwrap())
        };
        let file = d.run(&[cmd, &fifo], b"");
        writer.join().unwrap();
        let stdin = d.run(&[cmd, "-"], &bytes);
        assert_eq!((file.code, stdin.code), (1, 1), "{cmd}: {}", file.stderr);
        let named = |s: &str| s.replace(&fifo, "-").replace("of fifo", "of -");
        assert_eq!(named(&file.stderr), stdin.stderr, "{cmd}");
        assert_eq!(named(&file.out()), stdin.out(), "{cmd}");
    }
    let file = d.run(&["dump", "--isolation", "read-committed", &fifo], b"");
    let stdin = d.run(&["dump", "--isolation", "read-committed", "-"], &bytes);
    assert_eq!(
        (file.code, stdin.code),
        (2, 2),
        "{}\n{}",
        file.stderr,
        stdin.stderr
    );
    assert!(file.stderr.contains("read once"), "{}", file.stderr);
    assert!(stdin.stderr.contains("read once"), "{}", stdin.stderr);
}
