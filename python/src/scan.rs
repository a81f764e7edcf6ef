//! `Scan`: a source read as Arrow record batches on a worker thread.
//!
//! The sources layer's `Sources` is not `Send` (a live partition's runtime is shared by `Rc`), so
//! the whole read happens on one thread of its own: it opens the sources and runs
//! krecords-arrow's [`ArrowScan`] over every partition (positions, isolation, projection),
//! sending its record batches through a channel of one slot (memory: about two record batches
//! and one entry). Python waits on the channel without the
//! GIL; dropping the `Scan` ends the thread at its next send.

use crate::errors::{damage_place, detached, Fail};
use arrow_array::ffi::{to_ffi, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, RecordBatch, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, SchemaRef};
use krecords_arrow::{
    scan_schema, BytesFormat, Column, Options, Scan as ArrowScan, ScanError, ScanOptions,
};
use krecords_source::{ClientConfig, IsolationLevel, Position, Range, Sources};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Mutex;

/// What the worker sends.
enum Msg {
    /// The sources are open and the first partition's read could start.
    Ready,
    /// A record batch.
    Batch(RecordBatch),
    /// The read failed; nothing follows.
    Err(Fail),
    /// The read is over.
    Done,
}

/// Everything the worker needs (all `Send`).
struct Job {
    paths: Vec<PathBuf>,
    config: Vec<(String, String)>,
    options: ScanOptions,
}

/// The receiver went away: stop quietly.
struct Cancelled;

fn send(tx: &SyncSender<Msg>, msg: Msg) -> Result<(), Cancelled> {
    tx.send(msg).map_err(|_| Cancelled)
}

enum Stop {
    Cancelled,
    Fail(Fail),
}

impl From<Fail> for Stop {
    fn from(f: Fail) -> Stop {
        Stop::Fail(f)
    }
}

impl From<krecords_source::Error> for Stop {
    fn from(e: krecords_source::Error) -> Stop {
        Stop::Fail(Fail::source(&e))
    }
}

impl From<Cancelled> for Stop {
    fn from(_: Cancelled) -> Stop {
        Stop::Cancelled
    }
}

/// A scan error, with its file and position.
fn scan_fail(e: &ScanError) -> Fail {
    let (file, position) = match e {
        ScanError::Corrupt { name, position, .. } | ScanError::Truncated { name, position, .. } => {
            (Some(name.clone()), Some(*position as u64))
        }
        // The damage a read of a partition directory reached, passed on as an I/O error.
        ScanError::Io { name, source } => {
            match damage_place(krecords_source::passed_log_error(source)) {
                Some((file, position)) => (Some(file), Some(position)),
                None => (Some(name.clone()), None),
            }
        }
        ScanError::Source(s) => {
            let f = Fail::source(s);
            (f.file, f.position)
        }
    };
    Fail {
        class: Some(e.class()),
        message: e.to_string(),
        file,
        position,
    }
}

fn client_config(pairs: &[(String, String)]) -> Result<ClientConfig, krecords_source::Error> {
    let mut c = ClientConfig::default();
    for (k, v) in pairs {
        c.set(k, v)
            .map_err(|e| krecords_source::Error::Usage(format!("config {k}: {e}")))?;
    }
    Ok(c)
}

/// The read, on the worker thread: krecords-arrow's scan of every partition of the sources.
fn run(job: &Job, tx: &SyncSender<Msg>) -> Result<(), Stop> {
    let sources = Sources::open(&job.paths, &mut || client_config(&job.config))?;
    send(tx, Msg::Ready)?;
    for batch in ArrowScan::new(&sources, job.options.clone()) {
        let batch = batch.map_err(|e| scan_fail(&e))?;
        send(tx, Msg::Batch(batch))?;
    }
    Ok(())
}

/// The worker thread's body: the read, its end or error, a panic as an error.
fn work(job: Job, tx: SyncSender<Msg>) {
    let last = match catch_unwind(AssertUnwindSafe(|| run(&job, &tx))) {
        Ok(Ok(())) => Msg::Done,
        Ok(Err(Stop::Cancelled)) => return,
        Ok(Err(Stop::Fail(f))) => Msg::Err(f),
        Err(payload) => Msg::Err(Fail::internal(payload.as_ref())),
    };
    let _ = tx.send(last);
}

/// The receiving end: record batches in order, then the end or an error.
struct Feed {
    rx: Receiver<Msg>,
    schema: SchemaRef,
    over: bool,
}

impl Feed {
    fn next(&mut self) -> Result<Option<RecordBatch>, Fail> {
        loop {
            if self.over {
                return Ok(None);
            }
            match self.rx.recv() {
                Ok(Msg::Batch(b)) => return Ok(Some(b)),
                Ok(Msg::Ready) => continue,
                Ok(Msg::Done) => self.over = true,
                Ok(Msg::Err(f)) => {
                    self.over = true;
                    return Err(f);
                }
                Err(_) => {
                    self.over = true;
                    return Err(Fail {
                        class: None,
                        message: "internal error: the reading thread ended early".into(),
                        file: None,
                        position: None,
                    });
                }
            }
        }
    }
}

impl Iterator for Feed {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        Feed::next(self)
            .map_err(|f| ArrowError::ExternalError(f.message.into()))
            .transpose()
    }
}

impl RecordBatchReader for Feed {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// A source read as Arrow record batches (see `krecords.scan`). Iterating it gives objects with
/// `__arrow_c_array__` (one record batch each); `__arrow_c_stream__` hands the rest of the read
/// to an Arrow consumer (pyarrow, polars, DuckDB) in one go.
#[pyclass(module = "krecords")]
pub struct Scan {
    /// In a mutex only for `Sync` (a `Receiver` is not); methods take `&mut self`.
    feed: Mutex<Option<Feed>>,
    schema: SchemaRef,
}

/// One record batch, for `pyarrow.record_batch()` (`__arrow_c_array__`).
#[pyclass(module = "krecords", frozen)]
pub struct ArrowBatch {
    batch: RecordBatch,
}

fn schema_capsule<'py>(py: Python<'py>, schema: &SchemaRef) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema.as_ref())
        .map_err(|e| Fail::usage(e.to_string()).into_pyerr(py))?;
    PyCapsule::new(py, ffi, Some(CString::from(c"arrow_schema")))
}

#[pymethods]
impl ArrowBatch {
    /// The Arrow PyCapsule interface: `(schema capsule, array capsule)`.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let data = StructArray::from(self.batch.clone()).into_data();
        let (array, schema) =
            to_ffi(&data).map_err(|e| Fail::usage(e.to_string()).into_pyerr(py))?;
        Ok((
            PyCapsule::new(py, schema, Some(CString::from(c"arrow_schema")))?,
            PyCapsule::new(py, array, Some(CString::from(c"arrow_array")))?,
        ))
    }

    /// Rows in the record batch.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }
}

#[pymethods]
impl Scan {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<ArrowBatch>> {
        let Some(feed) = self
            .feed
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        else {
            return Ok(None);
        };
        let next = detached(py, || feed.next())?;
        Ok(next.map(|batch| ArrowBatch { batch }))
    }

    /// The Arrow PyCapsule interface: the schema.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }

    /// The Arrow PyCapsule interface: the rest of the read as a C stream (once).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let feed = self
            .feed
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| Fail::usage("the scan was already consumed").into_pyerr(py))?;
        let stream = FFI_ArrowArrayStream::new(Box::new(feed));
        PyCapsule::new(py, stream, Some(CString::from(c"arrow_array_stream")))
    }
}

/// A path or a list of paths (anything `os.fspath` takes).
fn paths(source: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if let Ok(p) = source.extract::<PathBuf>() {
        return Ok(vec![p]);
    }
    source.extract::<Vec<PathBuf>>().map_err(|_| {
        Fail::usage("source: expected a path, a kafka:// URL or a list of them")
            .into_pyerr(source.py())
    })
}

fn position(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Position>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let text = if let Ok(n) = v.extract::<i64>() {
        n.to_string()
    } else {
        v.extract::<String>()?
    };
    Position::parse(&text)
        .map(Some)
        .map_err(|e| Fail::usage(e).into_pyerr(v.py()))
}

/// Reads `source` (a path, a list of paths, a partition directory, a `log.dirs` root, a
/// `kafka://` URL with `config` as librdkafka-style properties) between `start` and `end` at
/// `isolation`, as Arrow record batches of the `columns` asked for (default: all 15).
#[pyfunction]
#[pyo3(signature = (
    source, *, start = None, end = None, isolation = "read_committed", columns = None,
    config = None, key_format = "binary", value_format = "binary", max_rows = 8192,
    max_decompressed_bytes = krecords_codec::DEFAULT_DECOMPRESS_LIMIT
))]
#[allow(clippy::too_many_arguments)]
fn scan(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    start: Option<Bound<'_, PyAny>>,
    end: Option<Bound<'_, PyAny>>,
    isolation: &str,
    columns: Option<Vec<String>>,
    config: Option<std::collections::BTreeMap<String, String>>,
    key_format: &str,
    value_format: &str,
    max_rows: usize,
    max_decompressed_bytes: usize,
) -> PyResult<Scan> {
    let usage = |m: String| Fail::usage(m).into_pyerr(py);
    let isolation = match isolation.replace('-', "_").as_str() {
        "read_committed" => IsolationLevel::ReadCommitted,
        "read_uncommitted" => IsolationLevel::ReadUncommitted,
        other => {
            return Err(usage(format!(
                "isolation {other:?}: read_committed or read_uncommitted"
            )))
        }
    };
    let columns = match columns {
        None => Column::ALL.to_vec(),
        Some(names) => names
            .iter()
            .map(|n| Column::from_name(n).ok_or_else(|| usage(format!("unknown column {n:?}"))))
            .collect::<PyResult<Vec<_>>>()?,
    };
    let format = |name: &str| {
        BytesFormat::from_name(name)
            .ok_or_else(|| usage(format!("unknown bytes format {name:?}: binary or string")))
    };
    let options = Options {
        columns,
        key_format: format(key_format)?,
        value_format: format(value_format)?,
        max_rows: max_rows.max(1),
        decompress_limit: max_decompressed_bytes,
        ..Options::default()
    };
    let range = Range {
        start: position(start.as_ref())?,
        end: position(end.as_ref())?,
        count: None,
    };
    let options = ScanOptions {
        range,
        isolation,
        batch: options,
        allow_truncated_tail: false,
    };
    let schema = scan_schema(&options);
    let job = Job {
        paths: paths(source)?,
        config: config.unwrap_or_default().into_iter().collect(),
        options,
    };
    let (tx, rx) = sync_channel(1);
    std::thread::Builder::new()
        .name("krecords-scan".into())
        .spawn(move || work(job, tx))
        .map_err(|e| {
            Fail::source(&krecords_source::Error::io("cannot start a thread", e)).into_pyerr(py)
        })?;
    // Wait for the sources to open, so that a bad source raises here.
    let (over, rx) = detached(py, move || match rx.recv() {
        Ok(Msg::Err(f)) => Err(f),
        Ok(Msg::Done) => Ok((true, rx)),
        // The worker sends `Ready` before any record batch.
        Ok(Msg::Ready | Msg::Batch(_)) => Ok((false, rx)),
        Err(_) => Err(Fail {
            class: None,
            message: "internal error: the reading thread ended early".into(),
            file: None,
            position: None,
        }),
    })?;
    let feed = Feed {
        rx,
        schema: schema.clone(),
        over,
    };
    Ok(Scan {
        feed: Mutex::new(Some(feed)),
        schema,
    })
}

/// Adds the function and classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Scan>()?;
    m.add_class::<ArrowBatch>()?;
    m.add_function(wrap_pyfunction!(scan, m)?)?;
    Ok(())
}
