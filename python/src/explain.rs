//! `explain()`: what every byte of a buffer of entries means, as `krec explain --format json`
//! shows it (the codec's tolerant walker, [`krecords_codec::explain`], and its
//! [`show::shown`](krecords_codec::explain::show::shown)); `what_if()`: the sizing table of
//! `krec stats --what-if` ([`krecords_codec::what_if`]).

use crate::args::{Flag, Int, Levels, DEFAULT_LIMIT};
use crate::errors::{interruptible, Fail, OnInterrupt};
use crate::read::bytes_of;
use krecords_codec::explain::show::{shown, Shown, ShownValue};
use krecords_codec::explain::{Explainer, Item};
use krecords_codec::read::Entries;
use krecords_codec::what_if::{of_entries, targets, Clock, Config};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::time::Duration;

/// The rows of `data`'s entries, each a dict with `position`, `decompressed`, `length`,
/// `field`, `hex`, `value` (int or str) and `note`, the objects `krec explain --format json`
/// prints: a heading per entry and section, a row per field, `error` rows where the bytes
/// make no sense (a CRC mismatch, a cut tail, bytes that are not Kafka data). Damaged input is
/// described, not refused: only a limit (`max_decompressed_bytes`, at least 0) raises.
#[pyfunction]
#[pyo3(
    signature = (data, *, max_decompressed_bytes = DEFAULT_LIMIT),
    text_signature = "(data, *, max_decompressed_bytes=...)"
)]
fn explain<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    max_decompressed_bytes: Int,
) -> PyResult<Bound<'py, PyList>> {
    let max_decompressed_bytes = crate::args::limit(&max_decompressed_bytes, py)?;
    let bytes = bytes_of(data)?;
    let rows: Vec<Shown> = interruptible(py, OnInterrupt::Abandon, move || {
        let mut rows = Vec::new();
        Explainer::new(max_decompressed_bytes)
            .time_format(krecords_source::time::iso)
            .explain_bytes(&bytes, &mut |item: &Item<'_>| {
                rows.push(shown(item));
                Ok(())
            })
            .map_err(|e| Fail::usage(format!("cannot explain: {e}")))?;
        Ok(rows)
    })?;
    let out = PyList::empty(py);
    for r in rows {
        let d = PyDict::new(py);
        d.set_item("position", r.position)?;
        d.set_item("decompressed", r.decompressed)?;
        d.set_item("length", r.length)?;
        d.set_item("field", r.field)?;
        d.set_item("hex", r.hex)?;
        match r.value {
            ShownValue::Int(n) => d.set_item("value", n)?,
            ShownValue::Text(t) => d.set_item("value", t)?,
        }
        d.set_item("note", r.note)?;
        out.append(d)?;
    }
    Ok(out)
}

/// What the records of `data`'s entries would take in every magic, codec and level: a dict
/// `{"what_if": {...}, "rows": [...]}`, equal to the `what_if` and `rows` keys of `krec stats
/// --what-if --no-timing --format json` with the same `--threads` and `--levels` (that JSON also
/// has `summary` and `groups`, `krec stats`' own table, which are not here; with `timing`, the
/// speeds are measured anew) (one row per magic × codec × level: bytes, ratio, entries copied, notes and,
/// with `timing`, encode and decode MB/s, each row converted again until `min_time_ms` of each
/// is measured, at most 60000 ms). `levels` adds rows at these levels (`[("zstd", 19)]`);
/// `threads` run rows in parallel. Input that is not whole, CRC-valid entries (a truncated or
/// corrupt entry, bytes that are not Kafka data) raises `CorruptDataError`, where `krec stats
/// --what-if` exits 1. The integer arguments are ints (not `bool`s) in their ranges, as `krec
/// stats` has them, else `UsageError`: `min_time_ms`, `threads` and `max_decompressed_bytes`
/// at least 0, `records_per_batch` 1 to 2147483647, a level 32-bit.
#[pyfunction]
#[pyo3(
    signature = (
        data, *, timing = Flag::new(false), min_time_ms = Int::new(50), threads = Int::new(1),
        levels = Levels::default(), records_per_batch = None, max_decompressed_bytes = DEFAULT_LIMIT
    ),
    text_signature = "(data, *, timing=False, min_time_ms=50, threads=1, levels=..., \
        records_per_batch=None, max_decompressed_bytes=...)"
)]
#[allow(clippy::too_many_arguments)]
fn what_if<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    timing: Flag,
    min_time_ms: Int,
    threads: Int,
    levels: Levels,
    records_per_batch: Option<Int>,
    max_decompressed_bytes: Int,
) -> PyResult<Bound<'py, PyAny>> {
    let pyerr = |f: Fail| f.into_pyerr(py);
    let timing = timing.get("timing").map_err(pyerr)?;
    let levels = levels.get().map_err(pyerr)?;
    let min_time_ms = min_time_ms.at_least("min_time_ms", 0u64).map_err(pyerr)?;
    let threads = threads.at_least("threads", 0usize).map_err(pyerr)?;
    let records_per_batch = crate::args::opt(
        records_per_batch.as_ref(),
        "records_per_batch",
        1u64,
        i32::MAX.unsigned_abs().into(),
    )
    .map_err(pyerr)?;
    let max_decompressed_bytes = crate::args::limit(&max_decompressed_bytes, py)?;
    let bytes = bytes_of(data)?;
    let mut extra = Vec::with_capacity(levels.len());
    for (i, (codec, level)) in levels.into_iter().enumerate() {
        let c = krecords_codec::Compression::from_name(&codec)
            .ok_or_else(|| Fail::usage(format!("unknown codec {codec:?}")).into_pyerr(py))?;
        let level = level
            .get(&format!("levels[{i}] level"), i32::MIN, i32::MAX)
            .map_err(pyerr)?;
        extra.push((c, level));
    }
    let text = interruptible(py, OnInterrupt::Abandon, move || {
        // The input checked first, as `krec stats` reads it: every entry whole, its CRC and its
        // records. What-if rows of input that is not (all) Kafka data would be zeros or count
        // only what comes before the damage, without saying so.
        let mut scratch = Vec::new();
        for entry in Entries::new(&bytes).strict() {
            let entry = entry?;
            for record in entry.checked_records(&mut scratch, max_decompressed_bytes)? {
                record?;
            }
        }
        let targets = targets(&extra, records_per_batch, max_decompressed_bytes)?;
        let cfg = Config {
            threads: threads.clamp(1, 64),
            timing: timing.then(|| Duration::from_millis(min_time_ms.min(60_000))),
            clock: Clock::detect(),
            decompress_limit: max_decompressed_bytes,
            sample: 0,
            records_per_batch,
        };
        let report = of_entries(&targets, &cfg, Entries::new(&bytes))?;
        serde_json::to_string(&serde_json::json!({"what_if": report.info, "rows": report.rows}))
            .map_err(|e| Fail::usage(format!("cannot render the table: {e}")))
    })?;
    py.import("json")?.call_method1("loads", (text,))
}

/// Adds the functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(what_if, m)?)?;
    Ok(())
}
