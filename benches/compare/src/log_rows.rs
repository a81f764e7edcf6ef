//! The `log-append` and `log-read` rows: krecords-log's [`Log`] on the same pre-built v2 batches
//! the decode rows read, next to raw sequential file I/O of the same bytes in the same directory
//! (the approach of `crates/log/benches/log.rs`, as interleaved groups of this harness).
//!
//! * `log-append`: [`Log::append`] of every batch, one append per batch, to a fresh log with
//!   the default configuration (no fsync per append, as in Kafka), next to `write_all` of the
//!   same batches to a fresh plain file. Creating the log or file (and removing the previous
//!   pass's) is outside the timing; only the appends and writes are timed.
//! * `log-read`: [`Log::read`] in 1 MiB pages over the whole log (built once with the same
//!   appends and closed cleanly, then reopened), next to sequential 1 MiB `read`s of its segment
//!   files into one buffer. Both find the files in the page cache.

use std::fs::File;
use std::hint::black_box;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use krecords_codec::read::Entries;
use krecords_log::{AppendOrigin, Log, LogConfig};

use crate::measure::{self, Plan};
use crate::report::{Op, Outcome, Row, OURS_APPEND, OURS_READ};
use crate::workload::Digest;

/// Bytes per [`Log::read`] and per raw `read` (as in `crates/log/benches/log.rs`).
const FETCH_BYTES: usize = 1 << 20;

/// The label of the `log-append` limit row (the goal looks it up by this prefix).
pub(crate) const RAW_WRITE: &str = "raw sequential write";
/// The label of the `log-read` limit row.
pub(crate) const RAW_READ: &str = "raw sequential read (1 MiB reads)";

/// One workload's measurements: its name and (op, implementation, outcome) per row.
pub(crate) type Measured = (&'static str, Vec<(Op, String, Outcome)>);

/// What to measure and on which bytes.
pub(crate) struct LogBench<'a> {
    /// The workload's v2 entries, as the decode rows read them.
    pub bytes: &'a [u8],
    /// What those entries hold.
    pub expected: Digest,
    /// Measure `log-append`.
    pub append: bool,
    /// Measure `log-read`.
    pub read: bool,
}

/// `bytes` as a producer sends them: every batch's base offset 0 (Kafka refuses a client batch
/// with another; the log assigns the offsets, which give back the workload's). The base offset
/// is outside the CRC, so the batches stay valid.
///
/// # Errors
///
/// A decode error or a truncated tail, as text.
pub(crate) fn as_sent(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = bytes.to_vec();
    let mut covered = 0;
    for b in Entries::new(bytes) {
        let b = b.map_err(|e| e.to_string())?;
        out[b.position()..b.position() + 8].fill(0);
        covered += b.size_in_bytes();
    }
    if covered != bytes.len() {
        return Err(format!(
            "the entries cover {covered} of {} bytes",
            bytes.len()
        ));
    }
    Ok(out)
}

/// Splits `bytes` into its entries (whole batches, appended one by one).
///
/// # Errors
///
/// A decode error, as text.
pub(crate) fn batches(bytes: &[u8]) -> Result<Vec<&[u8]>, String> {
    Entries::new(bytes)
        .map(|b| b.map(|b| b.as_bytes()).map_err(|e| e.to_string()))
        .collect()
}

/// Removes `path` (a directory or a file) if it exists.
fn remove(path: &Path) -> Result<(), String> {
    let r = if path.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    match r {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("remove {}: {e}", path.display())),
    }
}

/// Creates a fresh log in `dir` (removing what was there), then appends `batches` one by one.
/// Returns the seconds spent in [`Log::append`] only, the log, and the bytes it wrote.
fn append_fresh(dir: &Path, batches: &[&[u8]]) -> Result<(f64, Log, u64), String> {
    remove(dir)?;
    let mut log = Log::create(dir, LogConfig::default())
        .map_err(|e| format!("Log::create {}: {e}", dir.display()))?;
    let mut written = 0u64;
    let mut rebuilt = false;
    let start = Instant::now();
    for batch in batches {
        let info = log
            .append(black_box(batch), AppendOrigin::Client)
            .map_err(|e| format!("Log::append: {e}"))?;
        written += info.size_bytes as u64;
        rebuilt |= info.rebuilt;
    }
    let secs = start.elapsed().as_secs_f64();
    if rebuilt {
        return Err("the log rebuilt batches instead of storing them as sent".into());
    }
    Ok((secs, log, written))
}

/// Creates a fresh file at `path` (removing what was there), then writes `batches` one by one
/// with `write_all`. Returns the seconds spent writing only.
fn write_fresh(path: &Path, batches: &[&[u8]]) -> Result<f64, String> {
    remove(path)?;
    let mut f = File::create(path).map_err(|e| format!("create {}: {e}", path.display()))?;
    let start = Instant::now();
    for batch in batches {
        f.write_all(black_box(batch))
            .map_err(|e| format!("write {}: {e}", path.display()))?;
    }
    Ok(start.elapsed().as_secs_f64())
}

/// Reads the whole log in [`FETCH_BYTES`] pages, handing each page to `sink`; returns the bytes
/// read.
fn read_all(log: &Log, mut sink: impl FnMut(&[u8])) -> Result<u64, String> {
    let mut offset = log.log_start_offset();
    let end = log.log_end_offset();
    let mut bytes = 0u64;
    while offset < end {
        let r = log
            .read(offset, FETCH_BYTES)
            .map_err(|e| format!("Log::read({offset}): {e}"))?;
        if r.next_offset <= offset {
            return Err(format!("Log::read({offset}) made no progress"));
        }
        sink(&r.bytes);
        bytes += r.bytes.len() as u64;
        offset = r.next_offset;
    }
    Ok(bytes)
}

/// Reads `files` sequentially into `buf`; returns the bytes read.
fn raw_read(files: &[PathBuf], buf: &mut [u8]) -> Result<u64, String> {
    let mut bytes = 0u64;
    for path in files {
        let mut f = File::open(path).map_err(|e| format!("open {}: {e}", path.display()))?;
        loop {
            let n = f
                .read(buf)
                .map_err(|e| format!("read {}: {e}", path.display()))?;
            if n == 0 {
                break;
            }
            bytes += black_box(&buf[..n]).len() as u64;
        }
    }
    Ok(bytes)
}

/// Measures the selected rows; each comes back as (op, implementation, outcome), ours first.
pub(crate) fn measure(
    bench: &LogBench<'_>,
    plan: &Plan,
    progress: &mut dyn FnMut(String),
) -> Vec<Measured> {
    let mut out = Vec::new();
    let failed = |e: &str, append: bool| {
        let (op, ours, limit_op, limit) = if append {
            (Op::Append, OURS_APPEND, Op::AppendLimit, RAW_WRITE)
        } else {
            (Op::Read, OURS_READ, Op::ReadLimit, RAW_READ)
        };
        vec![
            (op, ours.to_owned(), Outcome::Failed(e.to_owned())),
            (limit_op, limit.to_owned(), Outcome::Failed(e.to_owned())),
        ]
    };
    let sent = as_sent(bench.bytes);
    let setup = sent.as_deref().map_err(Clone::clone).and_then(|sent| {
        let b = batches(sent)?;
        tempfile::Builder::new()
            .prefix("krecords-compare-log-")
            .tempdir()
            .map(|tmp| (b, tmp))
            .map_err(|e| format!("temporary directory: {e}"))
    });
    let (batches, tmp) = match setup {
        Ok(s) => s,
        Err(e) => {
            if bench.append {
                out.push(("log-append", failed(&e, true)));
            }
            if bench.read {
                out.push(("log-read", failed(&e, false)));
            }
            return out;
        }
    };
    let n_bytes = bench.bytes.len() as u64;
    if bench.append {
        progress(format!(
            "  log-append: Log::append and raw write of {} batches, interleaved, in {}",
            batches.len(),
            tmp.path().display()
        ));
        let log_dir = tmp.path().join("append-0");
        let raw_dir = tmp.path().join("raw");
        let raw_file = raw_dir.join("00000000000000000000.log");
        let check = std::fs::create_dir_all(&raw_dir)
            .map_err(|e| format!("create {}: {e}", raw_dir.display()))
            .and_then(|()| append_fresh(&log_dir, &batches))
            .and_then(|(_, log, written)| {
                if written != n_bytes {
                    Err(format!("the log wrote {written} bytes of {n_bytes}"))
                } else if log.log_end_offset() as u64 != bench.expected.records {
                    Err(format!(
                        "log end offset {} after {} records",
                        log.log_end_offset(),
                        bench.expected.records
                    ))
                } else {
                    Ok(())
                }
            })
            .and_then(|()| write_fresh(&raw_file, &batches));
        let rows = match check {
            Err(e) => failed(&e, true),
            Ok(_) => {
                let mut passes: Vec<Box<dyn FnMut() -> f64 + '_>> = vec![
                    Box::new(|| append_fresh(&log_dir, &batches).expect("checked").0),
                    Box::new(|| write_fresh(&raw_file, &batches).expect("checked")),
                ];
                let t = measure::measure_group_self_timed(plan, &mut passes);
                vec![
                    (Op::Append, OURS_APPEND.to_owned(), Outcome::Timed(t[0])),
                    (Op::AppendLimit, RAW_WRITE.to_owned(), Outcome::Timed(t[1])),
                ]
            }
        };
        // The files of the last passes are not needed any more.
        let _ = remove(&log_dir);
        let _ = remove(&raw_dir);
        out.push(("log-append", rows));
    }
    if bench.read {
        progress("  log-read: Log::read and raw read of the segment files, interleaved".into());
        let dir = tmp.path().join("read-0");
        let opened = append_fresh(&dir, &batches).and_then(|(_, log, _)| {
            log.close().map_err(|e| format!("Log::close: {e}"))?;
            Log::open(&dir).map_err(|e| format!("Log::open: {e}"))
        });
        let rows = match opened {
            Err(e) => failed(&e, false),
            Ok(log) => {
                let files: Vec<PathBuf> = log.segment_files().into_iter().map(|f| f.0).collect();
                let mut whole = Vec::with_capacity(bench.bytes.len());
                let check = read_all(&log, |page| whole.extend_from_slice(page))
                    .and_then(|_| crate::ours::decode(&whole, &mut Vec::new()));
                drop(whole);
                let mut buf = vec![0u8; FETCH_BYTES];
                let raw_check = raw_read(&files, &mut buf);
                let log_outcome = match check {
                    Err(e) => Err(Outcome::Failed(e)),
                    Ok(d) if d != bench.expected => Err(Outcome::Failed(format!(
                        "read {d:?}, expected {:?}",
                        bench.expected
                    ))),
                    Ok(_) => Ok(()),
                };
                let raw_outcome = match raw_check {
                    Err(e) => Err(Outcome::Failed(e)),
                    Ok(n) if n != n_bytes => Err(Outcome::Failed(format!(
                        "the segment files hold {n} bytes, expected {n_bytes}"
                    ))),
                    Ok(_) => Ok(()),
                };
                let mut passes: Vec<Box<dyn FnMut() -> u64 + '_>> = Vec::new();
                if log_outcome.is_ok() {
                    passes.push(Box::new(|| read_all(&log, |_| {}).expect("checked")));
                }
                if raw_outcome.is_ok() {
                    passes.push(Box::new(|| raw_read(&files, &mut buf).expect("checked")));
                }
                let mut timings = measure::measure_group(plan, &mut passes).into_iter();
                drop(passes);
                let mut outcome = |o: Result<(), Outcome>| match o {
                    Ok(()) => Outcome::Timed(timings.next().expect("one timing per pass")),
                    Err(o) => o,
                };
                vec![
                    (Op::Read, OURS_READ.to_owned(), outcome(log_outcome)),
                    (Op::ReadLimit, RAW_READ.to_owned(), outcome(raw_outcome)),
                ]
            }
        };
        out.push(("log-read", rows));
    }
    out
}

/// Rows for `measure`'s results: every row counts the workload's bytes and records.
pub(crate) fn rows(measured: Vec<Measured>, bytes: u64, records: u64) -> Vec<Row> {
    measured
        .into_iter()
        .flat_map(|(workload, rows)| {
            rows.into_iter()
                .map(move |(op, implementation, outcome)| Row {
                    workload: workload.into(),
                    op,
                    implementation,
                    bytes,
                    records,
                    outcome,
                    detail: None,
                })
        })
        .collect()
}
