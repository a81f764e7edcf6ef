//! `build_batch()`: log entries from records, as `krec build` writes them.

use crate::errors::{detached, guard, Fail};
use crate::read::bytes_of;
use krecords_codec::build::{build, BatchOptions, BuildRecord};
use krecords_codec::{Compression, TimestampType};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

/// Bytes of a key, value or header value: `None`, `str` (UTF-8) or bytes-like.
fn opt_bytes(v: Option<Bound<'_, PyAny>>) -> PyResult<Option<Vec<u8>>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Some(s.to_cow()?.as_bytes().to_vec()));
    }
    Ok(Some(bytes_of(&v)?.to_vec()))
}

/// A field of a record given as a mapping or as an object with attributes (a `Record`).
fn field<'py>(r: &Bound<'py, PyAny>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    if let Ok(d) = r.cast::<PyDict>() {
        return d.get_item(name);
    }
    if r.hasattr(name)? {
        return Ok(Some(r.getattr(name)?));
    }
    Ok(None)
}

fn opt_int(v: Option<Bound<'_, PyAny>>) -> PyResult<Option<i64>> {
    v.filter(|v| !v.is_none()).map(|v| v.extract()).transpose()
}

/// One record from Python: a dict (or a `Record`) with `value`, and optionally `key`,
/// `timestamp` (ms; default: now), `headers` (pairs of `str` and bytes or `None`) and `offset`.
fn record(r: &Bound<'_, PyAny>, now: i64) -> PyResult<BuildRecord> {
    let mut headers = Vec::new();
    if let Some(hs) = field(r, "headers")?.filter(|h| !h.is_none()) {
        for h in hs.try_iter()? {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = h?.extract()?;
            let key = opt_bytes(Some(k))?.unwrap_or_default();
            headers.push((key, opt_bytes(Some(v))?));
        }
    }
    Ok(BuildRecord {
        offset: opt_int(field(r, "offset")?)?,
        timestamp: opt_int(field(r, "timestamp")?)?.unwrap_or(now),
        key: opt_bytes(field(r, "key")?)?,
        value: opt_bytes(field(r, "value")?)?,
        headers,
    })
}

/// Builds log entries from `records` (dicts with `value` and optionally `key`, `timestamp`,
/// `headers`, `offset`; or `Record` objects), byte for byte what `krec build` writes with the
/// same options: `records_per_batch` records per entry (0: all in one), offsets from
/// `base_offset`, `producer=(id, epoch)` with sequences from `base_sequence`.
#[pyfunction]
#[pyo3(signature = (
    records, *, magic = 2, compression = None, level = None, base_offset = 0, producer = None,
    base_sequence = -1, transactional = false, partition_leader_epoch = -1,
    timestamp_type = "create_time", log_append_time = None, records_per_batch = 0,
    delete_horizon_ms = None
))]
#[allow(clippy::too_many_arguments)]
fn build_batch<'py>(
    py: Python<'py>,
    records: &Bound<'py, PyAny>,
    magic: u8,
    compression: Option<&str>,
    level: Option<i32>,
    base_offset: i64,
    producer: Option<(i64, i16)>,
    base_sequence: i32,
    transactional: bool,
    partition_leader_epoch: i32,
    timestamp_type: &str,
    log_append_time: Option<i64>,
    records_per_batch: usize,
    delete_horizon_ms: Option<i64>,
) -> PyResult<Bound<'py, PyBytes>> {
    guard(py, || {
        let usage = |m: String| Fail::usage(m).into_pyerr(py);
        let compression = match compression {
            None => Compression::None,
            Some(name) => Compression::from_name(name).ok_or_else(|| {
                usage(format!(
                    "unknown compression {name:?}: none, gzip, snappy, lz4 or zstd"
                ))
            })?,
        };
        let timestamp_type = TimestampType::from_name(timestamp_type).ok_or_else(|| {
            usage(format!(
                "unknown timestamp type {timestamp_type:?}: create_time or log_append_time"
            ))
        })?;
        let now = krecords_source::time::now_ms();
        let mut recs = Vec::new();
        for r in records.try_iter()? {
            recs.push(record(&r?, now)?);
        }
        let (producer_id, producer_epoch) = producer.unwrap_or((-1, -1));
        let opts = BatchOptions {
            magic,
            compression,
            level,
            timestamp_type,
            log_append_time: log_append_time.unwrap_or(now),
            producer_id,
            producer_epoch,
            base_sequence,
            transactional,
            partition_leader_epoch,
            delete_horizon_ms,
            records_per_batch,
            base_offset,
            restart_offsets: false,
        };
        let bytes = detached(py, || {
            build(&opts, &recs).map_err(|e| Fail::usage(e.to_string()))
        })?;
        Ok(PyBytes::new(py, &bytes))
    })
}

/// Adds the function to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(build_batch, m)?)?;
    Ok(())
}
