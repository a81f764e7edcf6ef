//! `explain()`: what every byte of a buffer of entries means, as `krec explain --format json`
//! shows it (the codec's tolerant walker, [`krecords_codec::explain`], and its
//! [`show::shown`](krecords_codec::explain::show::shown)).

use crate::errors::{detached, Fail};
use crate::read::bytes_of;
use krecords_codec::explain::show::{shown, Shown, ShownValue};
use krecords_codec::explain::{Explainer, Item};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The rows of `data`'s entries, each a dict with `position`, `decompressed`, `length`,
/// `field`, `hex`, `value` (int or str) and `note`, the objects `krec explain --format json`
/// prints: a heading per entry and section, a row per field, `error` rows where the bytes
/// make no sense (a CRC mismatch, a cut tail, bytes that are not Kafka data). Damaged input is
/// described, not refused: only a limit (`max_decompressed_bytes`) raises.
#[pyfunction]
#[pyo3(signature = (data, *, max_decompressed_bytes = krecords_codec::DEFAULT_DECOMPRESS_LIMIT))]
fn explain<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    max_decompressed_bytes: usize,
) -> PyResult<Bound<'py, PyList>> {
    let bytes = bytes_of(data)?;
    let rows: Vec<Shown> = detached(py, move || {
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

/// Adds the function to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    Ok(())
}
