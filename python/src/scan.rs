//! `Scan`: a source read as Arrow record batches on a worker thread.
//!
//! The sources layer's `Sources` is not `Send` (a live partition's runtime is shared by `Rc`), so
//! the whole read happens on one thread of its own: it opens the sources and runs
//! krecords-arrow's [`ArrowScan`] over every partition (positions, isolation, projection),
//! sending its record batches through a channel of one slot (memory: about two record batches
//! and one entry). Python waits on the channel without the
//! GIL; dropping the `Scan` ends the thread at its next send.

use crate::args::{limit, Int, Str, StrMap, DEFAULT_LIMIT};
use crate::errors::{damage_place, detached, type_name, wrong_type, Fail, SIGNAL_TICK};
use arrow_array::ffi::{to_ffi, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, RecordBatch, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, SchemaRef};
use krecords_arrow::{
    scan_schema, BytesFormat, Column, Options, Scan as ArrowScan, ScanError, ScanOptions,
};
use krecords_source::{ClientConfig, IsolationLevel, Position, Range, SourceSpec, Sources};
use pyo3::exceptions::PyUserWarning;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyString};
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the worker sends.
enum Msg {
    /// The sources are open and the first partition's read could start.
    Ready,
    /// A record batch.
    Batch(RecordBatch),
    /// The read failed; nothing follows.
    Err(Fail),
    /// The read is over; per column, the values it could not represent and holds as null,
    /// and its notes (see `Scan::notes`).
    Done(Vec<(String, u64)>, Vec<String>),
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

/// What a read that ended says: per column, the values held as null; the notes.
type Ended = (Vec<(String, u64)>, Vec<String>);

/// The read, on the worker thread: krecords-arrow's scan of every partition of the sources.
fn run(job: &Job, tx: &SyncSender<Msg>) -> Result<Ended, Stop> {
    let sources = Sources::open(&job.paths, &mut || client_config(&job.config))?;
    send(tx, Msg::Ready)?;
    let mut scan = ArrowScan::new(&sources, job.options.clone());
    for batch in scan.by_ref() {
        let batch = batch.map_err(|e| scan_fail(&e))?;
        send(tx, Msg::Batch(batch))?;
    }
    let totals = scan.totals();
    // A partition named twice is read once: said first.
    let mut notes = sources.notes().to_vec();
    notes.extend(totals.notes);
    Ok((totals.invalid, notes))
}

/// The worker thread's body: the read, its end or error, a panic as an error.
fn work(job: Job, tx: SyncSender<Msg>) {
    let last = match catch_unwind(AssertUnwindSafe(|| run(&job, &tx))) {
        Ok(Ok((invalid, notes))) => Msg::Done(invalid, notes),
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
    /// What the worker's `Done` said: per column, the values held as null. Shared with the
    /// `Scan`, which reads it after an Arrow consumer took the feed (`__arrow_c_stream__`).
    invalid: Arc<Mutex<Vec<(String, u64)>>>,
    /// The notes of the worker's `Done` (see `Scan::notes`), shared as `invalid` is.
    notes: Arc<Mutex<Vec<String>>>,
    /// Whether Python was warned of `invalid` and `notes`.
    warned: bool,
    /// A record batch received while waiting for the sources to open.
    pending: Option<RecordBatch>,
}

/// What one wait on the worker gives.
enum Step {
    Batch(RecordBatch),
    /// The sources are open.
    Ready,
    /// The read is over.
    End,
    /// Nothing within the wait's time: the caller handles Python's signals and waits again.
    Waiting,
}

impl Feed {
    fn new(rx: Receiver<Msg>, schema: SchemaRef) -> Feed {
        Feed {
            rx,
            schema,
            over: false,
            invalid: Arc::default(),
            notes: Arc::default(),
            warned: false,
            pending: None,
        }
    }

    /// The worker's next message, waiting at most `tick` (`None`: as long as it takes).
    fn step(&mut self, tick: Option<Duration>) -> Result<Step, Fail> {
        if let Some(b) = self.pending.take() {
            return Ok(Step::Batch(b));
        }
        if self.over {
            return Ok(Step::End);
        }
        let msg = match tick {
            None => self.rx.recv().ok(),
            Some(t) => match self.rx.recv_timeout(t) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => return Ok(Step::Waiting),
                Err(RecvTimeoutError::Disconnected) => None,
            },
        };
        match msg {
            Some(Msg::Batch(b)) => Ok(Step::Batch(b)),
            Some(Msg::Ready) => Ok(Step::Ready),
            Some(Msg::Done(invalid, notes)) => {
                self.over = true;
                *self.invalid.lock().unwrap_or_else(|e| e.into_inner()) = invalid;
                *self.notes.lock().unwrap_or_else(|e| e.into_inner()) = notes;
                Ok(Step::End)
            }
            Some(Msg::Err(f)) => {
                self.over = true;
                Err(f)
            }
            None => {
                self.over = true;
                Err(Fail {
                    class: None,
                    message: "internal error: the reading thread ended early".into(),
                    file: None,
                    position: None,
                })
            }
        }
    }

    /// The next record batch, waiting as long as it takes (for an Arrow consumer).
    fn next(&mut self) -> Result<Option<RecordBatch>, Fail> {
        loop {
            match self.step(None)? {
                Step::Batch(b) => return Ok(Some(b)),
                Step::End => return Ok(None),
                Step::Ready | Step::Waiting => {}
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
/// to an Arrow consumer (pyarrow, polars, DuckDB) in one go. Threads may share one: each record
/// batch goes to one of them.
#[pyclass(module = "krecords", frozen)]
pub struct Scan {
    /// Locked without the GIL (a thread waiting for a record batch holds it).
    feed: Mutex<Option<Feed>>,
    schema: SchemaRef,
    /// The feed's invalid counts, also once an Arrow consumer has it.
    invalid: Arc<Mutex<Vec<(String, u64)>>>,
    /// The feed's notes, also once an Arrow consumer has it.
    notes: Arc<Mutex<Vec<String>>>,
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

impl Scan {
    fn invalid_counts(&self) -> Vec<(String, u64)> {
        self.invalid
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn read_notes(&self) -> Vec<String> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Says once, as `UserWarning`s, which values were read as null because their column
    /// could not represent them (a read never replaces bytes silently), and the read's notes
    /// (see `Scan::notes`).
    fn warn_invalid(&self, py: Python<'_>) -> PyResult<()> {
        let (counts, notes) = detached(py, || {
            let mut feed = self.feed.lock().unwrap_or_else(|e| e.into_inner());
            Ok(match feed.as_mut() {
                Some(f) if !f.warned => {
                    f.warned = true;
                    (self.invalid_counts(), self.read_notes())
                }
                _ => (Vec::new(), Vec::new()),
            })
        })?;
        for note in notes {
            let message = CString::new(format!("krecords: {note}"))
                .unwrap_or_else(|_| c"krecords: see Scan.notes".into());
            PyErr::warn(py, &py.get_type::<PyUserWarning>(), &message, 1)?;
        }
        if counts.is_empty() {
            return Ok(());
        }
        let what: Vec<String> = counts
            .iter()
            .map(|(column, n)| format!("{n} of column {column}"))
            .collect();
        let message = format!(
            "krecords: values not UTF-8 were read as null: {} (key_format/value_format \"binary\" keeps the bytes)",
            what.join(", ")
        );
        let message =
            CString::new(message).unwrap_or_else(|_| c"krecords: values read as null".into());
        PyErr::warn(py, &py.get_type::<PyUserWarning>(), &message, 1)
    }
}

#[pymethods]
impl Scan {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<ArrowBatch>> {
        // Short waits, so that Ctrl-C is handled while a slow source (a live topic, a pipe)
        // gives nothing.
        loop {
            let step = detached(py, || {
                match self.feed.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                    Some(feed) => feed.step(Some(SIGNAL_TICK)),
                    None => Ok(Step::End),
                }
            })?;
            match step {
                Step::Batch(batch) => return Ok(Some(ArrowBatch { batch })),
                Step::End => {
                    self.warn_invalid(py)?;
                    return Ok(None);
                }
                Step::Ready | Step::Waiting => py.check_signals()?,
            }
        }
    }

    /// Per column, how many values could not be represented and were read as null (a
    /// `string` key or value whose bytes are not UTF-8), once the scan has ended; `{}` before.
    /// Iterating the scan warns of them at its end; an Arrow consumer of `__arrow_c_stream__`
    /// (pyarrow, polars, DuckDB) cannot be warned: read `invalid` after it has read the stream.
    #[getter]
    fn invalid(&self, py: Python<'_>) -> PyResult<std::collections::BTreeMap<String, u64>> {
        let counts = detached(py, || Ok(self.invalid_counts()))?;
        Ok(counts.into_iter().collect())
    }

    /// What a reader should know of the read, once the scan has ended (`[]` before), one line
    /// each: a partition of several that a position is outside of, left out; a stop at the
    /// last stable offset (read_committed: an open transaction holds the rest back); a torn
    /// tail at the end of a partition directory's log (a crash, or a writer still writing),
    /// which is not part of the log Kafka serves, passed over. Iterating the scan warns of
    /// them at its end, as of `invalid`.
    #[getter]
    fn notes(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        detached(py, || Ok(self.read_notes()))
    }

    /// The Arrow PyCapsule interface: the schema.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }

    /// The Arrow PyCapsule interface: the rest of the read as a C stream (once).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let feed = detached(py, || {
            self.feed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .ok_or_else(|| Fail::usage("the scan was already consumed"))
        })?;
        let stream = FFI_ArrowArrayStream::new(Box::new(feed));
        PyCapsule::new(py, stream, Some(CString::from(c"arrow_array_stream")))
    }
}

/// A path or a list of paths (anything `os.fspath` takes).
fn paths(source: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if let Ok(p) = source.extract::<PathBuf>() {
        return Ok(vec![p]);
    }
    source
        .extract::<Vec<PathBuf>>()
        .map_err(|_| wrong_type("source", "a path, a kafka:// URL or a list of them", source))
}

/// `config` (librdkafka-style properties) is read by `kafka://` sources only: given with none
/// among `paths` it would be ignored, so it is a usage error naming the sources. Decided from
/// the parsed [`SourceSpec`]s (a remote tier location takes no options through `config`: the
/// sources open with the default remote options). An empty `config` has nothing to ignore.
fn check_config_applies(paths: &[PathBuf], config: &[(String, String)]) -> Result<(), Fail> {
    if config.is_empty() {
        return Ok(());
    }
    let mut any_kafka = false;
    for p in paths {
        // A malformed source is refused here as opening it would refuse it.
        if matches!(SourceSpec::parse(p)?, SourceSpec::Kafka(_)) {
            any_kafka = true;
        }
    }
    if any_kafka {
        return Ok(());
    }
    const SHOWN: usize = 5;
    let mut named: Vec<String> = paths
        .iter()
        .take(SHOWN)
        .map(|p| format!("{:?}", p.display().to_string()))
        .collect();
    if paths.len() > SHOWN {
        named.push(format!("and {} more", paths.len() - SHOWN));
    }
    let sources = if paths.is_empty() {
        "none".to_owned()
    } else {
        named.join(", ")
    };
    Err(Fail::usage(format!(
        "config applies to kafka:// sources only, and no source given is one (sources: {sources})"
    )))
}

/// The position argument `name` (`start`, `end`): an int or a string `krec` takes (a `bool`,
/// an int to Python, is refused).
fn position(name: &str, v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Position>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    // An int is an offset, or -N: N before the end (a `bool` is neither).
    let int = Int::of(v);
    let text = if int.is_int() {
        int.get(name, -i64::MAX, i64::MAX)
            .map_err(|f| f.into_pyerr(v.py()))?
            .to_string()
    } else {
        v.extract::<String>().map_err(|_| {
            wrong_type(
                name,
                "an offset (int), \"earliest\", \"latest\", an ISO 8601 time or \"@<ms>\"",
                v,
            )
        })?
    };
    Position::parse(&text)
        .map(Some)
        .map_err(|m| Fail::usage(format!("{name}: {m}")).into_pyerr(v.py()))
}

/// The `columns` argument: an iterable of column names (not a `str`, whose letters are no
/// column names), each known and named once.
fn column_list(v: &Bound<'_, PyAny>) -> PyResult<Vec<Column>> {
    let usage = |m: String| Fail::usage(format!("columns: {m}")).into_pyerr(v.py());
    if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() {
        return Err(usage(format!(
            "a list of column names, not {}",
            type_name(v)
        )));
    }
    let mut out = Vec::new();
    for (i, name) in v
        .try_iter()
        .map_err(|_| usage(format!("a list of column names, not {}", type_name(v))))?
        .enumerate()
    {
        let name = name?;
        let text = name.extract::<String>().map_err(|_| {
            Fail::usage(format!(
                "columns[{i}]: a column name is a str, not {}",
                type_name(&name)
            ))
            .into_pyerr(v.py())
        })?;
        let column =
            Column::from_name(&text).ok_or_else(|| usage(format!("unknown column {text:?}")))?;
        if out.contains(&column) {
            return Err(usage(format!("{text} is named twice")));
        }
        out.push(column);
    }
    Ok(out)
}

/// Reads `source` (a path, a list of paths, a partition directory, a `log.dirs` root, a
/// `kafka://` URL with `config` as librdkafka-style properties) between `start` and `end` at
/// `isolation`, as Arrow record batches of the `columns` asked for (a list of names, each named
/// once; default: all 15) and of at most `max_rows` rows (at least 1). A non-empty `config`
/// with no `kafka://` source among the sources is a usage error (nothing would read it).
#[pyfunction]
#[pyo3(signature = (
    source, *, start = None, end = None, isolation = Str::new("read_committed"),
    columns = None, config = None, key_format = Str::new("binary"),
    value_format = Str::new("binary"), max_rows = Int::new(8192),
    max_decompressed_bytes = DEFAULT_LIMIT
), text_signature = "(source, *, start=None, end=None, isolation=\"read_committed\", \
    columns=None, config=None, key_format=\"binary\", value_format=\"binary\", max_rows=8192, \
    max_decompressed_bytes=...)")]
#[allow(clippy::too_many_arguments)]
fn scan(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    start: Option<Bound<'_, PyAny>>,
    end: Option<Bound<'_, PyAny>>,
    isolation: Str,
    columns: Option<Bound<'_, PyAny>>,
    config: Option<StrMap>,
    key_format: Str,
    value_format: Str,
    max_rows: Int,
    max_decompressed_bytes: Int,
) -> PyResult<Scan> {
    let usage = |m: String| Fail::usage(m).into_pyerr(py);
    let pyerr = |f: Fail| f.into_pyerr(py);
    let config = config.map(|c| c.get("config")).transpose().map_err(pyerr)?;
    let isolation = isolation.get("isolation").map_err(pyerr)?;
    let isolation = match isolation.replace('-', "_").as_str() {
        "read_committed" => IsolationLevel::ReadCommitted,
        "read_uncommitted" => IsolationLevel::ReadUncommitted,
        other => {
            return Err(usage(format!(
                "isolation {other:?}: read_committed or read_uncommitted"
            )))
        }
    };
    let columns = match columns.filter(|c| !c.is_none()) {
        None => Column::ALL.to_vec(),
        Some(names) => column_list(&names)?,
    };
    let max_rows = max_rows
        .at_least("max_rows", 1usize)
        .map_err(|f| f.into_pyerr(py))?;
    let max_decompressed_bytes = limit(&max_decompressed_bytes, py)?;
    let format = |arg: &str, v: &Str| {
        let name = v.get(arg).map_err(pyerr)?;
        BytesFormat::from_name(name)
            .ok_or_else(|| usage(format!("unknown bytes format {name:?}: binary or string")))
    };
    let options = Options {
        columns,
        key_format: format("key_format", &key_format)?,
        value_format: format("value_format", &value_format)?,
        max_rows,
        decompress_limit: max_decompressed_bytes,
        ..Options::default()
    };
    let range = Range {
        start: position("start", start.as_ref())?,
        end: position("end", end.as_ref())?,
        count: None,
    };
    let options = ScanOptions {
        range,
        isolation,
        batch: options,
        allow_truncated_tail: false,
    };
    let schema = scan_schema(&options);
    let paths = paths(source)?;
    let config: Vec<(String, String)> = config.unwrap_or_default().into_iter().collect();
    check_config_applies(&paths, &config).map_err(|f| f.into_pyerr(py))?;
    let job = Job {
        paths,
        config,
        options,
    };
    let (tx, rx) = sync_channel(1);
    std::thread::Builder::new()
        .name("krecords-scan".into())
        .spawn(move || work(job, tx))
        .map_err(|e| {
            Fail::source(&krecords_source::Error::io("cannot start a thread", e)).into_pyerr(py)
        })?;
    // Wait for the sources to open, so that a bad source raises here (Ctrl-C too).
    let mut feed = Feed::new(rx, schema.clone());
    loop {
        match detached(py, || feed.step(Some(SIGNAL_TICK)))? {
            Step::Waiting => py.check_signals()?,
            Step::Ready | Step::End => break,
            // The worker sends `Ready` before any record batch; kept all the same.
            Step::Batch(b) => {
                feed.pending = Some(b);
                break;
            }
        }
    }
    Ok(Scan {
        invalid: feed.invalid.clone(),
        notes: feed.notes.clone(),
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
