//! The `krecords` Python extension (`krecords._krecords`): a thin layer over the library crates.
//!
//! - [`entries`]: the entries of a bytes-like object ([`krecords_codec::read::Entries`]), with
//!   their header fields and records as Python objects.
//! - `explain`: what every byte of a buffer of entries means, as `krec explain --format json`
//!   shows it ([`krecords_codec::explain`]).
//! - `verify`: `krec verify`'s checks of a partition directory or a segment file
//!   ([`krecords_log::check`]).
//! - `ship`: `krec ship` as a call ([`krecords_ship::ship`]).
//! - [`build_batch`]: entries from records ([`krecords_codec::build::build`], what `krec build`
//!   writes).
//! - [`Scan`]: a source read as Arrow record batches ([`krecords_source::Sources`] feeding
//!   [`krecords_arrow::RecordBatchBuilder`] on a worker thread), handed to Python through the
//!   Arrow C data and stream interfaces (PyCapsules), so pyarrow, polars and DuckDB take them.
//!
//! Every error is a `krecords.KrecordsError` subclass; a Rust panic is caught and raised as one
//! too. The GIL is released while decoding, building and reading.

mod args;
mod errors;
mod explain;
mod read;
mod scan;
mod ship;
mod verify;
mod write;

use pyo3::prelude::*;

/// The module `krecords._krecords`.
#[pymodule]
fn _krecords(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "DEFAULT_DECOMPRESS_LIMIT",
        krecords_codec::DEFAULT_DECOMPRESS_LIMIT,
    )?;
    errors::register(m)?;
    read::register(m)?;
    explain::register(m)?;
    write::register(m)?;
    scan::register(m)?;
    verify::register(m)?;
    ship::register(m)?;
    Ok(())
}
