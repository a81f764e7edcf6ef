//! `verify()`: the checks of `krec verify` on a partition directory or a segment file
//! ([`krecords_log::check`]).

use crate::errors::{detached, Fail};
use krecords_log::check::{check_file, check_partition, CheckError, Report};
use krecords_source::ErrorClass;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;

/// Checks `path` as `krec verify` does: a partition directory (every segment, its indexes,
/// producer snapshots and leader-epoch checkpoint, offsets across segments) or one file of
/// entries (a segment and the indexes beside it). Returns `{"problems": [...], "summary":
/// {...}}`: each problem a dict with `file`, `position` (a byte position or `None`), `check`
/// (`entry`, `offsets`, `truncated`, `index`, ...) and `message`, as `krec verify --format
/// json` prints them; the summary counts files, entries, records, bytes and problems. Damage
/// is reported, not raised: only a path that cannot be read raises.
#[pyfunction]
#[pyo3(signature = (path, *, max_decompressed_bytes = krecords_codec::DEFAULT_DECOMPRESS_LIMIT))]
fn verify<'py>(
    py: Python<'py>,
    path: PathBuf,
    max_decompressed_bytes: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let report: Report = detached(py, move || {
        let r = if path.is_dir() {
            check_partition(&path, max_decompressed_bytes)
        } else {
            check_file(&path, max_decompressed_bytes)
        };
        r.map_err(|e| {
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
        })
    })?;
    let problems = PyList::empty(py);
    for p in &report.problems {
        let d = PyDict::new(py);
        d.set_item("file", &p.file)?;
        d.set_item("position", p.position)?;
        d.set_item("check", p.kind.as_str())?;
        d.set_item("message", &p.message)?;
        problems.append(d)?;
    }
    let s = &report.summary;
    let summary = PyDict::new(py);
    summary.set_item("files", s.files)?;
    summary.set_item("entries", s.entries)?;
    summary.set_item("records", s.records)?;
    summary.set_item("bytes", s.bytes)?;
    summary.set_item("problems", s.problems)?;
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
