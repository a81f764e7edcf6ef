//! `verify()`: the checks of `krec verify` on a broker's data directory, a partition directory
//! or a segment file ([`krecords_log::check`]).

use crate::args::{limit, opt, Int, DEFAULT_LIMIT};
use crate::errors::{interruptible, wrong_type, Fail, OnInterrupt};
use krecords_log::check::{
    check_file, check_partition, check_root, CheckError, Report, RootReport, Summary,
};
use krecords_log::data_dir::PartitionDir;
use krecords_source::{classify_dir, DirKind, ErrorClass};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::{Path, PathBuf};

/// What was checked: one report, or a broker's data directory's.
enum Checked {
    One(Report),
    Root {
        parts: Vec<PartitionDir>,
        report: RootReport,
    },
}

fn check_fail(e: CheckError) -> Fail {
    let class = match &e {
        CheckError::NoSegments(_) => ErrorClass::Usage,
        CheckError::Io { .. } => ErrorClass::Io,
    };
    Fail {
        class: Some(class),
        message: e.to_string(),
        file: None,
        position: None,
    }
}

fn check(path: &Path, threads: usize, limit: usize) -> Result<Checked, Fail> {
    if !path.is_dir() {
        return check_file(path, limit)
            .map(Checked::One)
            .map_err(check_fail);
    }
    let kind = classify_dir(path).map_err(|e| {
        Fail::source(&krecords_source::Error::io(
            format!("cannot list {}", path.display()),
            e,
        ))
    })?;
    match kind {
        DirKind::Root(parts) if parts.is_empty() => Err(Fail::usage(format!(
            "{}: no partition directories to verify",
            path.display()
        ))),
        DirKind::Root(parts) => {
            let threads = threads.clamp(1, parts.len());
            let report = check_root(path, &parts, &parts, true, threads, limit, &|_| {})
                .map_err(check_fail)?;
            Ok(Checked::Root { parts, report })
        }
        DirKind::Partition | DirKind::Other => check_partition(path, limit)
            .map(Checked::One)
            .map_err(check_fail),
    }
}

fn add_problems(
    list: &Bound<'_, PyList>,
    report: &Report,
    partition: Option<&str>,
) -> PyResult<()> {
    for p in &report.problems {
        let d = PyDict::new(list.py());
        d.set_item("file", &p.file)?;
        d.set_item("position", p.position)?;
        d.set_item("check", p.kind.as_str())?;
        d.set_item("message", &p.message)?;
        if let Some(partition) = partition {
            d.set_item("partition", partition)?;
        }
        list.append(d)?;
    }
    Ok(())
}

/// Checks `path` as `krec verify` does: a broker's data directory (a `log.dirs` root: every
/// partition directory on `threads` threads, then `meta.properties` and the offset checkpoints
/// against the partitions), a partition directory (every segment, its indexes, producer
/// snapshots and leader-epoch checkpoint, offsets across segments) or one file of entries (a
/// segment and the indexes beside it). Returns `{"problems": [...], "summary": {...}}`: each
/// problem a dict with `file`, `position` (a byte position or `None`), `check` (`entry`,
/// `offsets`, `truncated`, `index`, ...), `message` and, in a root, `partition` (`TOPIC-N`;
/// not there for the root's own files), as `krec verify --format json` prints them; the summary counts files, entries,
/// records, bytes and problems, and for a root `partitions` and `partitions_with_problems`.
/// Damage is reported, not raised: only a path that cannot be read raises. A `path` that is not
/// a `str` or `os.PathLike` raises `UsageError`, and so does a directory with no segments
/// (as `read_table` of it). `threads` and `max_decompressed_bytes` are ints of at least 0,
/// else `UsageError`. Ctrl-C raises `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(
    signature = (path, *, threads = None, max_decompressed_bytes = DEFAULT_LIMIT),
    text_signature = "(path, *, threads=None, max_decompressed_bytes=...)"
)]
fn verify<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    threads: Option<Int>,
    max_decompressed_bytes: Int,
) -> PyResult<Bound<'py, PyDict>> {
    let threads = opt(threads.as_ref(), "threads", 0, usize::MAX).map_err(|f| f.into_pyerr(py))?;
    let max_decompressed_bytes = limit(&max_decompressed_bytes, py)?;
    let path: PathBuf = path
        .extract()
        .map_err(|_| wrong_type("path", "a path (str or os.PathLike)", path))?;
    let threads = threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let checked = interruptible(py, OnInterrupt::Abandon, move || {
        check(&path, threads, max_decompressed_bytes)
    })?;
    let problems = PyList::empty(py);
    let mut total = Summary::default();
    let summary = PyDict::new(py);
    match &checked {
        Checked::One(report) => {
            add_problems(&problems, report, None)?;
            total = report.summary;
        }
        Checked::Root { parts, report } => {
            let mut bad = 0u64;
            for (part, r) in parts.iter().zip(&report.partitions) {
                add_problems(&problems, r, Some(&part.name()))?;
                total.add(&r.summary);
                bad += u64::from(r.summary.problems > 0);
            }
            if let Some(files) = &report.files {
                add_problems(&problems, files, None)?;
                total.add(&files.summary);
            }
            summary.set_item("partitions", parts.len())?;
            summary.set_item("partitions_with_problems", bad)?;
        }
    }
    summary.set_item("files", total.files)?;
    summary.set_item("entries", total.entries)?;
    summary.set_item("records", total.records)?;
    summary.set_item("bytes", total.bytes)?;
    summary.set_item("problems", total.problems)?;
    let out = PyDict::new(py);
    out.set_item("problems", problems)?;
    out.set_item("summary", summary)?;
    Ok(out)
}

/// Adds the function to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    Ok(())
}
