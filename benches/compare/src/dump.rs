//! The `dump-*` rows: `krec dump --deep` against Kafka's `kafka-dump-log --deep-iteration`
//! (`DumpLogSegments` run with `java`, as `bin/kafka-dump-log.sh` runs it) on the same segment
//! file, one process per pass, stdout to /dev/null. The in-one-run version of
//! `scripts/bench-dump.sh`.
//!
//! The segment is the workload's v2 entries written as `00000000000000000000.log` in a temporary
//! directory (DumpLogSegments wants a numeric name), or, with `--dump-mib N`, its batches
//! repeated until the file reaches N MiB, each repetition's base offsets moved past the previous
//! one's (the 8-byte base offset is outside the CRC), so the file is a valid log. The processes
//! run interleaved (after one untimed run each, which also checks that they succeed); the median
//! wall time is reported. Peak RSS comes from `/proc/<pid>/status` (`VmHWM`) sampled every
//! millisecond while the process runs: the workspace forbids `unsafe`, so `wait4` and
//! `getrusage` are out of reach; growth in the last millisecond before exit can be missed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use krecords_codec::read::Entries;

use crate::measure::Timing;
use crate::report::{Op, Outcome, Row, OURS_DUMP};

/// As `bin/kafka-run-class.sh` sets `KAFKA_HEAP_OPTS` when unset (kafka-dump-log.sh does not
/// set it).
const DEFAULT_HEAP: &str = "-Xmx256M";
/// As `bin/kafka-run-class.sh` sets `KAFKA_JVM_PERFORMANCE_OPTS` when unset.
const DEFAULT_JVM_OPTS: &str = "-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
     -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent \
     -XX:MaxInlineLevel=15 -Djava.awt.headless=true";
/// Heaps tried after an OutOfMemoryError, as `scripts/bench-dump.sh` does.
const BIGGER_HEAPS: [&str; 2] = ["-Xmx1G", "-Xmx4G"];

/// Kafka's jars, to run `DumpLogSegments` from.
#[derive(Debug, Clone)]
pub(crate) struct KafkaTools {
    /// `interop/java/target/lib`.
    lib: PathBuf,
    /// Kafka's version, from the `kafka-tools-<version>.jar` name.
    version: String,
}

impl KafkaTools {
    /// Checks for `java` and Kafka's tools jar in `repo_root/interop/java/target/lib`; `Err`
    /// says why kafka-dump-log is skipped.
    ///
    /// # Errors
    ///
    /// The reason for skipping, as text.
    pub fn find(repo_root: &Path) -> Result<Self, String> {
        let lib = repo_root.join("interop/java/target/lib");
        let version = std::fs::read_dir(&lib)
            .ok()
            .and_then(|d| {
                d.filter_map(|e| e.ok()).find_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let v = name.strip_prefix("kafka-tools-")?.strip_suffix(".jar")?;
                    v.starts_with(|c: char| c.is_ascii_digit())
                        .then(|| v.to_owned())
                })
            })
            .ok_or_else(|| {
                format!(
                    "no kafka-tools jar in {}: run `mvn -q -B -f interop/java/pom.xml package \
                     -DskipTests` (or interop/run.sh) once",
                    lib.display()
                )
            })?;
        match Command::new("java").arg("-version").output() {
            Ok(o) if o.status.success() => Ok(KafkaTools { lib, version }),
            Ok(o) => Err(format!(
                "`java -version` failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Err(format!("no `java` on PATH: {e}")),
        }
    }

    /// The command for `file` with `heap` (e.g. `-Xmx256M`).
    fn command(&self, heap: &str, file: &Path) -> Command {
        let mut c = Command::new("java");
        c.args(heap.split_whitespace());
        let opts = std::env::var("KAFKA_JVM_PERFORMANCE_OPTS")
            .unwrap_or_else(|_| DEFAULT_JVM_OPTS.to_owned());
        c.args(opts.split_whitespace())
            .arg("-cp")
            .arg(format!("{}/*", self.lib.display()))
            .arg("org.apache.kafka.tools.DumpLogSegments")
            .arg("--deep-iteration")
            .arg("--files")
            .arg(file);
        c
    }
}

/// `krec` next to this executable (or one directory up, for test binaries in `deps/`).
///
/// # Errors
///
/// Why the krec row is skipped, as text.
pub(crate) fn find_krec() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current executable: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let found = [Some(dir), dir.parent()]
        .into_iter()
        .flatten()
        .map(|d| d.join("krec"))
        .find(|p| p.is_file());
    found.ok_or_else(|| {
        format!(
            "no krec in {}: build it with `cargo build --release -p krec`",
            dir.display()
        )
    })
}

/// What the dump rows need.
pub(crate) struct DumpBench<'a> {
    /// The workload's v2 entries.
    pub bytes: &'a [u8],
    /// Grow the segment to this many bytes by repeating the batches (`None`: the bytes as they
    /// are).
    pub target_bytes: Option<u64>,
    /// Timed runs of each tool (after one untimed run).
    pub runs: usize,
    /// `krec`, or why it is skipped.
    pub krec: Result<PathBuf, String>,
    /// Kafka's tools, or why they are skipped.
    pub kafka: Result<KafkaTools, String>,
}

/// Writes the segment: `bytes`' batches, repeated with base offsets moved past the previous
/// repetition's until the file has at least `target` bytes. Returns its bytes and records.
fn write_segment(path: &Path, bytes: &[u8], target: Option<u64>) -> Result<(u64, u64), String> {
    let mut batches = Vec::new();
    for b in Entries::new(bytes) {
        let b = b.map_err(|e| e.to_string())?;
        let records = b.last_offset() - b.offset_field() + 1;
        batches.push((b.as_bytes(), b.offset_field(), records));
    }
    let (Some(first), Some(last)) = (batches.first(), batches.last()) else {
        return Err("the workload has no batches".into());
    };
    // Offsets each repetition moves on by.
    let span = last.1 + last.2 - first.1;
    let target = target.unwrap_or(bytes.len() as u64);
    let mut f = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(path).map_err(|e| format!("create {}: {e}", path.display()))?,
    );
    let (mut written, mut records, mut scratch) = (0u64, 0u64, Vec::new());
    'outer: for copy in 0i64.. {
        for &(batch, base, n) in &batches {
            scratch.clear();
            scratch.extend_from_slice(batch);
            scratch[..8].copy_from_slice(&(base + copy * span).to_be_bytes());
            f.write_all(&scratch)
                .map_err(|e| format!("write {}: {e}", path.display()))?;
            written += batch.len() as u64;
            records += n as u64;
            if written >= target {
                break 'outer;
            }
        }
    }
    f.flush()
        .map_err(|e| format!("write {}: {e}", path.display()))?;
    Ok((written, records))
}

/// `VmHWM` of process `pid` in KiB, if it is still running and named `name`.
fn vm_hwm_kib(pid: u32, name: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let mut lines = status.lines();
    if lines.next()?.strip_prefix("Name:")?.trim() != name {
        return None;
    }
    lines
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// One run of a process.
struct Run {
    secs: f64,
    /// Peak RSS seen, in KiB.
    peak_kib: Option<u64>,
}

/// Runs `cmd` with stdout to /dev/null, timing it from spawn to exit and sampling its peak RSS.
///
/// # Errors
///
/// A failure to start or a non-zero exit, with the last lines of stderr.
fn run(mut cmd: Command) -> Result<Run, String> {
    let name = Path::new(cmd.get_program())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // /proc/<pid>/status shows at most 15 bytes of the name.
    let name: String = name.chars().take(15).collect();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", cmd.get_program().to_string_lossy()))?;
    let pid = child.id();
    let done = AtomicBool::new(false);
    let (output, secs, peak) = std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut peak = None;
            while !done.load(Ordering::Relaxed) {
                if let Some(kib) = vm_hwm_kib(pid, &name) {
                    peak = Some(peak.unwrap_or(0).max(kib));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            peak
        });
        let output = child.wait_with_output();
        let secs = start.elapsed().as_secs_f64();
        done.store(true, Ordering::Relaxed);
        (output, secs, sampler.join().unwrap_or(None))
    });
    let output = output.map_err(|e| format!("waiting for {name}: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
        let tail: Vec<&str> = tail.into_iter().rev().map(str::trim).collect();
        return Err(format!(
            "exited with {}: {}",
            output.status,
            tail.join(" | ")
        ));
    }
    Ok(Run {
        secs,
        peak_kib: peak,
    })
}

/// One tool of the group.
struct Tool {
    op_label: String,
    make: Box<dyn Fn() -> Command>,
    secs: Vec<f64>,
    peak_kib: Option<u64>,
    /// Shown with the timing.
    note: String,
    failed: Option<String>,
}

/// Measures both tools; returns the workload name and its rows.
pub(crate) fn measure(bench: DumpBench<'_>, progress: &mut dyn FnMut(String)) -> Vec<Row> {
    let java_label = |heap: &str| match &bench.kafka {
        Ok(k) => format!("kafka-dump-log {} ({heap})", k.version),
        Err(_) => "kafka-dump-log --deep-iteration".to_owned(),
    };
    let heap = std::env::var("KAFKA_HEAP_OPTS").unwrap_or_else(|_| DEFAULT_HEAP.to_owned());
    let row = |workload: &str, op_label: String, bytes: u64, records: u64, outcome, detail| Row {
        workload: workload.to_owned(),
        op: Op::Dump,
        implementation: op_label,
        bytes,
        records,
        outcome,
        detail,
    };
    let tmp = tempfile::Builder::new()
        .prefix("krecords-compare-dump-")
        .tempdir()
        .map_err(|e| format!("temporary directory: {e}"));
    let file = tmp
        .as_ref()
        .map(|t| t.path().join("00000000000000000000.log"))
        .map_err(Clone::clone);
    let written = file
        .clone()
        .and_then(|f| write_segment(&f, bench.bytes, bench.target_bytes));
    let (file, (n_bytes, n_records)) = match (file, written) {
        (Ok(f), Ok(w)) => (f, w),
        (Err(e), _) | (_, Err(e)) => {
            return vec![
                row(
                    "dump",
                    OURS_DUMP.into(),
                    0,
                    0,
                    Outcome::Failed(e.clone()),
                    None,
                ),
                row("dump", java_label(&heap), 0, 0, Outcome::Failed(e), None),
            ];
        }
    };
    let workload = if n_bytes >= 1 << 20 {
        format!("dump-{}MiB", (n_bytes + (1 << 19)) >> 20)
    } else {
        format!("dump-{}KiB", n_bytes.div_ceil(1024))
    };
    progress(format!(
        "  {workload}: krec dump --deep and kafka-dump-log --deep-iteration on {} ({n_bytes} \
         bytes, {n_records} records), interleaved",
        file.display()
    ));

    let mut tools = Vec::new();
    let mut skipped = Vec::new();
    match &bench.krec {
        Ok(krec) => {
            let (krec, file) = (krec.clone(), file.clone());
            tools.push(Tool {
                op_label: OURS_DUMP.into(),
                make: Box::new(move || {
                    let mut c = Command::new(&krec);
                    c.arg("dump").arg("--deep").arg(&file);
                    c
                }),
                secs: Vec::new(),
                peak_kib: None,
                note: String::new(),
                failed: None,
            });
        }
        Err(e) => skipped.push((OURS_DUMP.to_owned(), format!("krec: {e}"))),
    }
    match &bench.kafka {
        Ok(kafka) => {
            // The untimed first run, with more heap after an OutOfMemoryError.
            let mut heaps = vec![heap.clone()];
            heaps.extend(BIGGER_HEAPS.iter().map(|h| (*h).to_owned()));
            let mut notes = Vec::new();
            let mut chosen = Err(String::new());
            for h in &heaps {
                progress(format!("  {workload}: kafka-dump-log ({h}), first run"));
                match run(kafka.command(h, &file)) {
                    Ok(_) => {
                        chosen = Ok(h.clone());
                        break;
                    }
                    Err(e) if e.contains("OutOfMemoryError") => {
                        notes.push(format!("OutOfMemoryError with {h}"));
                        chosen = Err(e);
                    }
                    Err(e) => {
                        chosen = Err(e);
                        break;
                    }
                }
            }
            match chosen {
                Ok(h) => {
                    let (kafka, file) = (kafka.clone(), file.clone());
                    tools.push(Tool {
                        op_label: java_label(&h),
                        make: Box::new(move || kafka.command(&h, &file)),
                        secs: Vec::new(),
                        peak_kib: None,
                        note: notes.join("; "),
                        failed: None,
                    });
                }
                Err(e) => {
                    notes.push(e);
                    tools.push(Tool {
                        op_label: java_label(&heap),
                        make: Box::new(|| Command::new("java")),
                        secs: Vec::new(),
                        peak_kib: None,
                        note: String::new(),
                        failed: Some(notes.join("; ")),
                    });
                }
            }
        }
        Err(e) => skipped.push((java_label(&heap), format!("java: {e}"))),
    }
    // krec's untimed first run (Java's was the heap check above).
    if let Some(t) = tools.first_mut().filter(|t| t.op_label == OURS_DUMP) {
        if let Err(e) = run((t.make)()) {
            t.failed = Some(e);
        }
    }
    for round in 0..bench.runs.max(1) {
        for t in tools.iter_mut().filter(|t| t.failed.is_none()) {
            progress(format!("  {workload}: {} run {}", t.op_label, round + 1));
            match run((t.make)()) {
                Ok(r) => {
                    t.secs.push(r.secs);
                    t.peak_kib = t.peak_kib.max(r.peak_kib);
                }
                Err(e) => t.failed = Some(e),
            }
        }
    }

    let mut rows = Vec::new();
    for t in tools {
        let outcome = match t.failed {
            Some(e) => Outcome::Failed(e),
            None => Outcome::Timed(Timing::from_runs(t.secs)),
        };
        let mut detail = match t.peak_kib {
            Some(kib) => format!("peak RSS {:.1} MiB", kib as f64 / 1024.0),
            None => "peak RSS not sampled (the process ended before the first sample)".to_owned(),
        };
        if !t.note.is_empty() {
            detail = format!("{detail}; {}", t.note);
        }
        rows.push(row(
            &workload,
            t.op_label,
            n_bytes,
            n_records,
            outcome,
            Some(detail),
        ));
    }
    for (label, why) in skipped {
        rows.push(row(
            &workload,
            label,
            n_bytes,
            n_records,
            Outcome::Skipped(why),
            None,
        ));
    }
    // Ours first, as in the other groups.
    rows.sort_by_key(|r| r.implementation != OURS_DUMP);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repeated segment is a valid log: every batch's CRC holds and offsets keep increasing.
    #[test]
    fn repeated_segment_has_increasing_offsets() {
        let spec = crate::workload::specs(true, 0)
            .into_iter()
            .find(|s| s.name() == "v2-none-100B")
            .unwrap();
        let mut bytes = Vec::new();
        crate::workload::encode_ours(&crate::workload::Inputs::new(&spec), &mut bytes);
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("00000000000000000000.log");
        let target = bytes.len() as u64 * 5 / 2;
        let (n, records) = write_segment(&path, &bytes, Some(target)).unwrap();
        let file = std::fs::read(&path).unwrap();
        assert_eq!(file.len() as u64, n);
        assert!(n >= target && n < target + bytes.len() as u64);
        let mut next = 0;
        for b in Entries::new(&file) {
            let b = b.unwrap();
            assert!(b.is_crc_valid());
            assert_eq!(b.offset_field(), next);
            next = b.last_offset() + 1;
        }
        assert_eq!(next as u64, records);
        assert_eq!(records, 5 * spec.records_per_batch as u64);
    }
}
