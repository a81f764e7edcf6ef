//! `krec export`: the dataset a run leaves, its report and exit codes, and exactly once when
//! killed with SIGKILL at random moments.
//!
//! The kill test: a partition directory of ~20 000 records (transactions among them, some
//! aborted), the same bounded by `--start`/`--end`, and a live partition of 20 000 records on
//! the fake broker, are exported with small files (`--roll-bytes`, so renames happen all the
//! time); each round starts `krec export` and SIGKILLs it (`Child::kill`) at a random moment
//! within the time a whole run takes (a run that ended first is checked all the same; the
//! output says how many rounds cut a run short after it wrote files), checks that the files present are valid Parquet holding a
//! prefix of what a read_committed consumer gets, each record once; every fifth round (and the
//! last) then runs the export to the end and checks the dataset holds every record exactly
//! once, and starts over. Rounds: `KRECORDS_EXPORT_KILL_ROUNDS` (default 6; 30 or more
//! locally).

use crate::util::{krec, run, walk, Dir};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_log::{AppendOrigin, IsolationLevel, Log, LogConfig};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const T0: i64 = 1_714_000_000_000;

/// A partition directory `dir` of `batches` batches of 50 records; every seventh a
/// transaction, every third of those aborted. Record `o` has value `value-{o}`.
pub(crate) fn write_log(dir: &Path, batches: usize) {
    let config = LogConfig::from_pairs([("segment.bytes", "65536")]).unwrap();
    let mut log = Log::create(dir, config).unwrap();
    let mut next = 0i64;
    for i in 0..batches {
        let txn = i % 7 == 3;
        let mut b = V2Builder::new(0);
        if txn {
            b = b.producer(next, 0, 0).transactional(true);
        }
        for j in 0..50 {
            let o = next + j;
            let key = format!("key-{}", o % 13);
            let value = format!("value-{o}");
            b.append(&NewRecord::new(
                T0 + o,
                Some(key.as_bytes()),
                Some(value.as_bytes()),
            ))
            .unwrap();
        }
        let info = log
            .append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
        let pid = next;
        next = info.last_offset + 1;
        if txn {
            let commit = i % 21 != 3;
            next = log
                .append_end_txn(pid, 0, 0, commit, T0)
                .unwrap()
                .last_offset
                + 1;
        }
    }
    log.close().unwrap();
}

/// What a read_committed consumer of `dir` gets: (offset, value).
pub(crate) fn consumed(dir: &Path) -> Vec<(i64, Vec<u8>)> {
    let log = Log::open_read_only(dir).unwrap();
    log.consume(0, 1 << 30, IsolationLevel::ReadCommitted)
        .unwrap()
        .records
        .into_iter()
        .map(|r| (r.offset, r.value.unwrap()))
        .collect()
}

/// Every (offset, value) row of a partition of the dataset, read back with the parquet crate,
/// in offset order; the files may not overlap and their names state their rows' offsets.
fn dataset(dir: &Path) -> Vec<(i64, Vec<u8>)> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    let mut out = Vec::new();
    if !dir.exists() {
        return out;
    }
    let mut prev_last = -1;
    for (first, last, path) in krecords_export::dataset_files(dir).unwrap() {
        assert!(first > prev_last, "{} overlaps", path.display());
        prev_last = last;
        let batches = krecords_export::read_file(&path).unwrap();
        let start = out.len();
        for b in &batches {
            let offsets = b
                .column_by_name("offset")
                .unwrap()
                .as_primitive::<Int64Type>();
            let values = b.column_by_name("value").unwrap().as_binary::<i32>();
            for i in 0..b.num_rows() {
                out.push((offsets.value(i), values.value(i).to_vec()));
            }
        }
        assert_eq!(out.get(start).map(|r| r.0), Some(first));
        assert_eq!(out.last().map(|r| r.0), Some(last));
    }
    out
}

/// Runs `krec export PART -o OUT MORE...`.
pub(crate) fn export(part: &Path, out: &Path, more: &[&str]) -> crate::util::Run {
    let mut args = vec![
        "export",
        part.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    run(&args)
}

/// splitmix64.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn export_killed_at_random_moments_leaves_every_record_once() {
    kill_local(0x6578, &[], 0..i64::MAX, 15_000);
}

/// A bounded export (`--start`/`--end`) killed at random moments and run again with the same
/// arguments ends with every record of the range once, and nothing outside it.
#[test]
fn bounded_export_killed_at_random_moments_leaves_the_range_once() {
    kill_local(
        0x626f,
        &["--start", "3000", "--end", "17000"],
        3000..17_000,
        10_000,
    );
}

/// [`kill_rounds`] on a partition directory of ~20 000 records exported with `more`, whose
/// records at offsets in `range` (more than `least`) make the dataset.
fn kill_local(seed: u64, more: &[&str], range: std::ops::Range<i64>, least: usize) {
    let d = Dir::new();
    let part = d.path("events-0");
    write_log(&part, 400);
    let want = consumed_in(&part, range);
    assert!(want.len() > least);
    kill_rounds(
        &d,
        part.to_str().unwrap(),
        "topic=events/partition=0",
        &want,
        seed,
        more,
    );
}

#[test]
fn export_of_a_live_topic_killed_at_random_moments_leaves_every_record_once() {
    let cluster = krecords_testkit::cluster::FakeCluster::start(&[("live", 1)]);
    let batches = krecords_testkit::batches::numbered(400, 50, |o| {
        (T0 + o, b"k".to_vec(), format!("value-{o}").into_bytes())
    });
    cluster.append("live", 0, &batches);
    let want: Vec<(i64, Vec<u8>)> = (0..20_000)
        .map(|o| (o, format!("value-{o}").into_bytes()))
        .collect();
    let d = Dir::new();
    let url = format!("kafka://{}/live/0", cluster.addr());
    kill_rounds(&d, &url, "topic=live/partition=0", &want, 0x6c69, &[]);
}

/// Exports `source` into `d/out` in rounds killed at random moments (see the module docs);
/// `want`: the rows of the partition `partition_dir` of the dataset; `more`: more arguments.
fn kill_rounds(
    d: &Dir,
    source: &str,
    partition_dir: &str,
    want: &[(i64, Vec<u8>)],
    seed: u64,
    more: &[&str],
) {
    let out = d.path("out");
    let pdir = out.join(partition_dir);
    let mut args = vec![
        "export",
        source,
        "--output",
        out.to_str().unwrap(),
        "--roll-bytes",
        "20000",
    ];
    args.extend_from_slice(more);
    // A whole run's time, to kill within it.
    let started = Instant::now();
    run(&args).ok();
    let full = started.elapsed();
    assert_eq!(dataset(&pdir), want);
    std::fs::remove_dir_all(&out).unwrap();

    let rounds: u64 = std::env::var("KRECORDS_EXPORT_KILL_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    let mut rng = seed;
    let mut killed_with_files = 0;
    let mut cut_short = 0;
    for round in 0..rounds {
        let delay = next(&mut rng) % (full.as_micros() as u64).max(1);
        let mut child = krec()
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(delay));
        // SIGKILL (or the run already ended).
        let _ = child.kill();
        child.wait().unwrap();
        let got = dataset(&pdir);
        if !got.is_empty() {
            killed_with_files += 1;
        }
        if !got.is_empty() && got.len() < want.len() {
            cut_short += 1;
        }
        assert_eq!(got[..], want[..got.len()], "round {round}: not a prefix");
        if round % 5 == 4 || round + 1 == rounds {
            run(&args).ok();
            assert_eq!(dataset(&pdir), want, "round {round}");
            let leftovers = std::fs::read_dir(&pdir)
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .ends_with(krecords_export::TMP_SUFFIX)
                })
                .count();
            assert_eq!(leftovers, 0);
            std::fs::remove_dir_all(&out).unwrap();
        }
    }
    eprintln!(
        "export kill test {source}: {rounds} rounds, {killed_with_files} killed after files \
         were written ({cut_short} of them before the end); a whole run {full:?}"
    );
}

#[test]
fn export_reports_and_continues() {
    let d = Dir::new();
    let part = d.path("events-0");
    write_log(&part, 30);
    let out = d.path("out");
    let args = [
        "export",
        part.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--format-report",
        "json",
    ];
    let first = run(&args).json();
    let want = consumed(&part);
    assert_eq!(first["records"], want.len() as u64);
    assert_eq!(first["files"], 1);
    assert_eq!(first["partitions"], 1);
    assert!(first["bytes_in"].as_u64().unwrap() > 0);
    assert!(first["bytes_out"].as_u64().unwrap() > 0);
    let again = run(&args).json();
    assert_eq!(again["records"], 0);
    assert_eq!(again["files"], 0);
    let text = run(&args[..4]).ok();
    assert!(
        text.starts_with("exported 0 records of 1 partitions into 0 files"),
        "{text}"
    );
    assert_eq!(dataset(&out.join("topic=events/partition=0")), want);
    // Arrow IPC files, the same layout.
    let arrow_out = d.path("arrow");
    export(&part, &arrow_out, &["--format", "arrow"]).ok();
    let files =
        krecords_export::dataset_files(&arrow_out.join("topic=events/partition=0")).unwrap();
    assert!(files.iter().all(|f| f.2.extension().unwrap() == "arrow"));
    assert_eq!(dataset(&arrow_out.join("topic=events/partition=0")), want);
}

/// A dataset is read as one table, so an export that would add files of another format or
/// schema to it is refused (exit 2), naming the option and writing nothing; the same options
/// continue it.
#[test]
fn export_into_a_dataset_of_another_format_or_schema_is_refused() {
    let d = Dir::new();
    let part = d.path("events-0");
    write_log(&part, 10);
    let out = d.path("out");
    export(&part, &out, &["--end", "100"]).ok();
    let before = krecords_export::dataset_files(&out.join("topic=events/partition=0")).unwrap();
    export(&part, &out, &["--format", "arrow"]).fails(2, "--format parquet");
    export(&part, &out, &["--key-format", "string"]).fails(2, "(--key-format)");
    export(&part, &out, &["--value-format", "string"]).fails(2, "(--value-format)");
    let after = krecords_export::dataset_files(&out.join("topic=events/partition=0")).unwrap();
    assert_eq!(before, after, "nothing written");
    export(&part, &out, &[]).ok();
    assert_eq!(
        dataset(&out.join("topic=events/partition=0")),
        consumed(&part)
    );
    // An Arrow dataset with string values continues with the same options only.
    let arrow = d.path("arrow");
    let strings = ["--format", "arrow", "--value-format", "string"];
    export(&part, &arrow, &[&strings[..], &["--end", "100"]].concat()).ok();
    export(&part, &arrow, &["--format", "arrow"]).fails(2, "column value is Utf8");
    export(&part, &arrow, &strings).ok();
}

#[test]
fn export_of_a_corrupt_segment_exits_1_and_keeps_valid_files() {
    let d = Dir::new();
    let part = d.path("events-0");
    write_log(&part, 100);
    let all = consumed(&part);
    let segments = krecords_source::dir_logs(&part).unwrap();
    let bad = &segments[1];
    let base = krecords_log::check::segment_base(bad).unwrap();
    let mut bytes = std::fs::read(bad).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(bad, &bytes).unwrap();
    let out = d.path("out");
    export(&part, &out, &["--roll-bytes", "20000"])
        .fails(1, &format!("{}: corrupt entry at byte 0", bad.display()));
    let got = dataset(&out.join("topic=events/partition=0"));
    let want: Vec<_> = all.into_iter().take_while(|r| r.0 < base).collect();
    assert_eq!(got, want);
    // The JSON report names the failed partition, for scripts that read it.
    let r = export(&part, &out, &["--format-report", "json"]);
    let report = r.fails(1, "corrupt entry").json();
    let errors = report["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{report}");
    assert_eq!(errors[0]["partition"], part.display().to_string());
    assert_eq!(errors[0]["exit_code"], 1);
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("corrupt entry"),
        "{report}"
    );
}

/// Starts `krec export PART -o OUT --follow --poll-ms 50 --roll-ms ROLL_MS`, its output piped.
fn follow(part: &Path, out: &Path, roll_ms: &str) -> std::process::Child {
    krec()
        .args([
            "export",
            part.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .args(["--follow", "--poll-ms", "50", "--roll-ms", roll_ms])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn export_follow_exports_what_is_appended_and_rolls_by_time() {
    let d = Dir::new();
    let part = d.path("events-0");
    write_log(&part, 10);
    let out = d.path("out");
    let pdir = out.join("topic=events/partition=0");
    let mut child = follow(&part, &out, "100");
    // Wait for `want` in the dataset (files roll every 100 ms); fail after a minute.
    let wait_for = |want: &[(i64, Vec<u8>)]| {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let got = dataset(&pdir);
            if got == want {
                return;
            }
            assert_eq!(got[..], want[..got.len().min(want.len())]);
            assert!(Instant::now() < deadline, "the dataset did not catch up");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait_for(&consumed(&part));
    // More records, appended while the export follows.
    let mut log = Log::open(&part).unwrap();
    let end = log
        .offsets(krecords_log::OffsetSpec::Latest)
        .unwrap()
        .offset;
    let mut b = V2Builder::new(0);
    b.append(&NewRecord::new(T0, None, Some(b"late"))).unwrap();
    log.append(&b.finish().unwrap(), AppendOrigin::Client)
        .unwrap();
    log.close().unwrap();
    let want = consumed(&part);
    assert_eq!(want.last().unwrap().0, end);
    wait_for(&want);
    let _ = child.kill();
    child.wait().unwrap();
    // A later run has nothing left to do.
    let again = export(&part, &out, &["--format-report", "json"]).json();
    assert_eq!(again["records"], 0);
    assert_eq!(dataset(&pdir), want);
}

/// SIGINT (Ctrl-C) or SIGTERM stops `--follow` gracefully: the open file is completed, the
/// report printed and the exit code 0 (it was killed by the signal, a temporary file left and
/// no report).
#[test]
fn export_follow_stops_at_a_signal_with_its_files_complete_and_its_report() {
    for signal in ["-INT", "-TERM"] {
        let d = Dir::new();
        let part = d.path("events-0");
        write_log(&part, 10);
        let out = d.path("out");
        let pdir = out.join("topic=events/partition=0");
        let child = follow(&part, &out, "600000");
        // The first pass has written into a file it keeps open.
        let deadline = Instant::now() + Duration::from_secs(60);
        let open_file = || {
            std::fs::read_dir(&pdir).is_ok_and(|r| {
                r.flatten()
                    .any(|e| e.file_name().to_string_lossy().ends_with(".krec-tmp"))
            })
        };
        while !open_file() {
            assert!(Instant::now() < deadline, "no open file");
            std::thread::sleep(Duration::from_millis(20));
        }
        let status = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let r = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&r.stdout);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(0), "{signal}: {stderr}");
        let want = consumed(&part);
        assert!(
            stdout.starts_with(&format!(
                "exported {} records of 1 partitions into 1 files",
                want.len()
            )),
            "{signal}: {stdout}"
        );
        assert!(stderr.contains("stopped by a signal"), "{stderr}");
        assert!(!open_file(), "{signal}: a temporary file is left");
        assert_eq!(dataset(&pdir), want);
    }
}

/// `--start` past the partition's end with `--follow`: the first pass writes nothing and
/// the later ones export from the start, not from the log's start (they dropped `--start`,
/// and the dataset held offsets 0..11), and the run ends without an "outside" usage error.
#[test]
fn export_follow_keeps_a_start_past_the_end_after_a_pass_that_wrote_nothing() {
    let d = Dir::new();
    let part = d.path("events-0");
    let append = |n: i64| {
        let mut log = match part.exists() {
            true => Log::open(&part).unwrap(),
            false => Log::create(&part, LogConfig::default()).unwrap(),
        };
        let next = log
            .offsets(krecords_log::OffsetSpec::Latest)
            .unwrap()
            .offset;
        let mut b = V2Builder::new(0);
        for o in next..next + n {
            b.append(&NewRecord::new(
                T0 + o,
                None,
                Some(format!("v{o}").as_bytes()),
            ))
            .unwrap();
        }
        log.append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
        log.close().unwrap();
    };
    append(5);
    let out = d.path("out");
    let pdir = out.join("topic=events/partition=0");
    let child = krec()
        .args([
            "export",
            part.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .args([
            "--start",
            "8",
            "--follow",
            "--poll-ms",
            "50",
            "--roll-ms",
            "100",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A few passes over the 5 records first.
    std::thread::sleep(Duration::from_millis(300));
    append(7);
    let want = consumed_in(&part, 8..12);
    assert_eq!(want.len(), 4);
    let deadline = Instant::now() + Duration::from_secs(60);
    while dataset(&pdir) != want {
        let got = dataset(&pdir);
        assert!(got.iter().all(|r| r.0 >= 8), "{got:?}");
        assert!(Instant::now() < deadline, "the dataset did not catch up");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let r = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(0), "{stderr}");
    assert_eq!(dataset(&pdir), want);
}

/// The records of `dir` a read_committed consumer gets at offsets in `range`.
fn consumed_in(dir: &Path, range: std::ops::Range<i64>) -> Vec<(i64, Vec<u8>)> {
    consumed(dir)
        .into_iter()
        .filter(|r| range.contains(&r.0))
        .collect()
}

#[test]
fn export_start_end_bound_the_export_and_a_rerun_continues_after_the_dataset() {
    let (_d, part, out) = partition_and_output(40);
    let end = consumed(&part).last().unwrap().0 + 1;
    let pdir = out.join("topic=events/partition=0");
    let report = |more: &[&str]| {
        let mut args = vec!["--format-report", "json"];
        args.extend_from_slice(more);
        export(&part, &out, &args).json()
    };
    // Offsets 200..700 (the end exclusive).
    let first = report(&["--start", "200", "--end", "700"]);
    let want = consumed_in(&part, 200..700);
    assert_eq!(first["records"], want.len() as u64);
    assert_eq!(dataset(&pdir), want);
    // The same range again: nothing left to do.
    assert_eq!(report(&["--start", "200", "--end", "700"])["records"], 0);
    // An earlier start: the partition continues after the dataset's end (offsets 700..1000),
    // nothing is written twice.
    report(&["--start", "100", "--end", "1000"]);
    assert_eq!(dataset(&pdir), consumed_in(&part, 200..1000));
    // A time position (the timestamp of offset o is T0 + o) later than the dataset's end:
    // from there to the end of the partition.
    let at = format!("@{}", T0 + 1200);
    report(&["--start", &at]);
    let mut want = consumed_in(&part, 200..1000);
    want.extend(consumed_in(&part, 1200..end));
    assert_eq!(dataset(&pdir), want);
    // -N: the last N offsets; the dataset already ends there.
    assert_eq!(report(&["--start", "-10"])["records"], 0);
    // A range before the dataset's end exports nothing.
    assert_eq!(report(&["--start", "0", "--end", "150"])["records"], 0);
    assert_eq!(dataset(&pdir), want);
    // A range past the partition's end leaves it out, with --end as without: here the only
    // partition, so it is the usage error a read of it gives.
    for more in [
        &["--start", "5000"][..],
        &["--start", "5000", "--end", "6000"],
    ] {
        let r = export(
            &part,
            &out,
            &[&["--format-report", "json"][..], more].concat(),
        );
        r.fails(2, "no partition holds the positions asked for");
        r.fails(2, "offset 5000 is out of range");
        let outside = r.json()["outside"].as_array().unwrap().len();
        assert_eq!(outside, 1, "{more:?}");
    }
    // An end past the partition's end stops at its end (here where the dataset ends).
    let near_end = (end - 5).to_string();
    let r = report(&["--start", &near_end, "--end", "99999"]);
    assert_eq!(r["records"], 0);
    assert!(r["outside"].as_array().unwrap().is_empty(), "{r}");
}

/// A scratch directory with the partition directory `events-0` of `batches` batches
/// ([`write_log`]) and the path of a dataset `out` in it.
fn partition_and_output(batches: usize) -> (Dir, std::path::PathBuf, std::path::PathBuf) {
    let d = Dir::new();
    let part = d.path("events-0");
    write_log(&part, batches);
    let out = d.path("out");
    (d, part, out)
}

/// A narrow range reads only the segments that hold it: the bytes read for offsets
/// 10 000..10 200 of a ~20 000-record log of 64 KiB segments are a small part of the whole.
#[test]
fn export_of_a_narrow_range_reads_only_its_segments() {
    let (d, part, out) = partition_and_output(400);
    let full = export(&part, &out, &["--format-report", "json"]).json();
    let narrow = export(
        &part,
        &d.path("narrow"),
        &[
            "--start",
            "10000",
            "--end",
            "10200",
            "--format-report",
            "json",
        ],
    )
    .json();
    assert_eq!(
        dataset(&d.path("narrow/topic=events/partition=0")),
        consumed_in(&part, 10_000..10_200)
    );
    let (all, some) = (
        full["bytes_in"].as_u64().unwrap(),
        narrow["bytes_in"].as_u64().unwrap(),
    );
    assert!(some > 0 && some * 20 < all, "{some} of {all} bytes read");
}

#[test]
fn export_start_end_bad_positions_are_usage_errors() {
    let (_d, part, out) = partition_and_output(4);
    export(&part, &out, &["--start", "50", "--end", "50"]).fails(2, "empty range");
    export(&part, &out, &["--start", "99999"]).fails(2, "offset 99999 is out of range");
    export(&part, &out, &["--start", "soon"]).fails(2, "invalid position");
    export(&part, &out, &["--end", "100", "--follow"]).fails(2, "cannot be used with");
    export(&part, &out, &["--jobs", "0"]).fails(2, "--jobs");
    assert!(dataset(&out.join("topic=events/partition=0")).is_empty());
    // An output inside a source (its partition directory, its log.dirs root) is refused, and
    // nothing is created there.
    let root = part.parent().unwrap().to_path_buf();
    for output in [part.join("ds"), part.join("a/b"), part.clone()] {
        export(&part, &output, &[]).fails(2, "is inside the source");
    }
    export(&root, &root.join("lake"), &[]).fails(2, "is inside the source");
    assert!(!part.join("ds").exists() && !part.join("a").exists() && !root.join("lake").exists());
    // An output that is a file, and a source with nothing to read: clear errors, and the
    // latter leaves no dataset directory behind.
    let file = out.with_file_name("afile");
    std::fs::write(&file, b"x").unwrap();
    export(&part, &file, &[]).fails(2, "not a directory");
    let empty = part.with_file_name("empty-0");
    std::fs::create_dir(&empty).unwrap();
    let fresh = out.with_file_name("fresh");
    export(&empty, &fresh, &[]).fails(2, "no .log segments");
    assert!(!fresh.exists());
}

/// (offset, value) rows.
type Rows = Vec<(i64, Vec<u8>)>;

/// Every partition's rows of the dataset in `out`: `topic=T/partition=P` and its rows.
fn datasets(out: &Path) -> Vec<(String, Rows)> {
    let mut all = Vec::new();
    for topic in std::fs::read_dir(out).unwrap() {
        let topic = topic.unwrap().path();
        if !topic.is_dir() {
            continue;
        }
        for p in std::fs::read_dir(&topic).unwrap() {
            let p = p.unwrap().path();
            let label = format!(
                "{}/{}",
                topic.file_name().unwrap().to_string_lossy(),
                p.file_name().unwrap().to_string_lossy()
            );
            all.push((label, dataset(&p)));
        }
    }
    all.sort();
    all
}

#[test]
fn export_jobs_1_and_jobs_4_write_the_same_rows() {
    let d = Dir::new();
    let root = d.path("logs");
    for p in 0..5 {
        write_log(&root.join(format!("events-{p}")), 20 + 10 * p);
    }
    let one = d.path("one");
    let four = d.path("four");
    let r1 = export(
        &root,
        &one,
        &[
            "--jobs",
            "1",
            "--format-report",
            "json",
            "--roll-bytes",
            "20000",
        ],
    )
    .json();
    let r4 = export(
        &root,
        &four,
        &[
            "--jobs",
            "4",
            "--format-report",
            "json",
            "--roll-bytes",
            "20000",
        ],
    )
    .json();
    assert_eq!(r1["records"], r4["records"]);
    assert_eq!(r4["partitions"], 5);
    let (a, b) = (datasets(&one), datasets(&four));
    assert_eq!(a.len(), 5);
    assert_eq!(a, b);
    for (label, rows) in &a {
        let p = label.trim_start_matches("topic=events/partition=");
        assert_eq!(
            rows,
            &consumed(&root.join(format!("events-{p}"))),
            "{label}"
        );
    }
}

/// A live topic of 3 partitions exported with 4 threads, in two runs (the first bounded): each
/// partition continues from its own offset (a fetch started ahead for another partition with
/// another range is not reused).
#[test]
fn export_jobs_of_a_live_topic_resume_each_partition_from_its_own_offset() {
    let cluster = krecords_testkit::cluster::FakeCluster::start(&[("live", 3)]);
    let mut want = Vec::new();
    for p in 0..3i64 {
        let batches = krecords_testkit::batches::numbered(20 + 10 * p, 50, |o| {
            (T0 + o, b"k".to_vec(), format!("p{p}-{o}").into_bytes())
        });
        cluster.append("live", p as i32, &batches);
        want.push(
            (0..(20 + 10 * p) * 50)
                .map(|o| (o, format!("p{p}-{o}").into_bytes()))
                .collect::<Vec<_>>(),
        );
    }
    let d = Dir::new();
    let out = d.path("out");
    let url = format!("kafka://{}/live", cluster.addr());
    let args = |more: &[&str]| {
        let mut a = vec![
            "export",
            url.as_str(),
            "-o",
            out.to_str().unwrap(),
            "--jobs",
            "4",
        ];
        a.extend_from_slice(more);
        run(&a).ok();
    };
    args(&["--end", "-300"]);
    for (p, rows) in want.iter().enumerate() {
        let got = dataset(&out.join(format!("topic=live/partition={p}")));
        assert_eq!(got[..], rows[..rows.len() - 300], "partition {p}");
    }
    args(&[]);
    for (p, rows) in want.iter().enumerate() {
        assert_eq!(
            &dataset(&out.join(format!("topic=live/partition={p}"))),
            rows,
            "partition {p}"
        );
    }
}

/// A source without a topic and partition (a segment file outside a TOPIC-N directory, a
/// directory named otherwise) is refused before anything is written: no dataset directory, no
/// lock file, no "exported 0 records" report.
#[test]
fn a_source_without_topic_and_partition_is_refused_before_anything_is_written() {
    let d = Dir::new();
    let part = d.path("events-0");
    write_log(&part, 2);
    let plain = d.path("copy");
    std::fs::create_dir(&plain).unwrap();
    let segment = "00000000000000000000.log";
    std::fs::copy(part.join(segment), plain.join(segment)).unwrap();
    for source in [plain.join(segment), plain.clone()] {
        let out = d.path("out");
        let r = export(&source, &out, &[]);
        r.fails(2, "its topic and partition are unknown");
        assert_eq!(r.out(), "");
        assert!(!out.exists(), "{source:?}");
    }
}

/// `--topic GLOB` (repeatable) exports the partitions of the topics it matches, dump's rule:
/// without it every topic of a root, internal ones included; a glob matching nothing is exit
/// 2 naming the topics there, before anything is written.
#[test]
fn export_topic_chooses_the_topics_of_a_root() {
    let d = Dir::new();
    let root = d.path("root");
    for name in ["orders-0", "orders-1", "payments-0", "__consumer_offsets-0"] {
        write_log(&root.join(name), 1);
    }
    let topics = |out: &Path| -> Vec<String> {
        let mut t: Vec<String> = std::fs::read_dir(out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("topic="))
            .collect();
        t.sort();
        t
    };
    let out = d.path("all");
    export(&root, &out, &[]).ok();
    assert_eq!(
        topics(&out),
        ["topic=__consumer_offsets", "topic=orders", "topic=payments"]
    );
    let out = d.path("some");
    export(&root, &out, &["--topic", "ord*", "--topic", "payments"]).ok();
    assert_eq!(topics(&out), ["topic=orders", "topic=payments"]);
    let parts = std::fs::read_dir(out.join("topic=orders")).unwrap().count();
    assert_eq!(parts, 2);
    let out = d.path("none");
    let r = export(&root, &out, &["--topic", "nope*"]);
    r.fails(
        2,
        &format!(
            "{}: no partition of a topic matching \"nope*\" (its topics: __consumer_offsets, \
             orders, payments)",
            root.display()
        ),
    );
    assert!(!out.exists());
    export(&root, &out, &["--topic", "[x"]).fails(2, "topic glob \"[x\"");
}

/// export made a partition's `topic=T/partition=N` directory before finding its
/// `krec-log.json` damaged; the partition's source is opened first, so a damaged one leaves no
/// directory behind, whether it is exported alone or with others (which are exported).
#[test]
fn a_damaged_configuration_leaves_no_dataset_directory() {
    let d = Dir::new();
    d.partition("data/good-0", 10);
    d.partition("data/bad-0", 10);
    d.write("data/bad-0/krec-log.json", b"not json {");
    let out = d.path("out");
    for source in [d.arg("data"), d.arg("data/bad-0")] {
        let _ = std::fs::remove_dir_all(&out);
        let r = d.run(&["export", &source, "--output", &d.arg("out")], b"");
        r.fails(1, "bad-0/krec-log.json");
        assert!(
            !out.join("topic=bad").exists(),
            "{source}: {:?}",
            walk(&out)
        );
        let good = out.join("topic=good/partition=0");
        assert_eq!(good.is_dir(), source.ends_with("data"), "{:?}", walk(&out));
    }
}
