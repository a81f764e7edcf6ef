//! `entries()` and `records()`: the entries of a bytes-like object and their records.

use crate::args::{limit, Flag, Int, DEFAULT_LIMIT};
use crate::errors::{detached, guard, Fail};
use krecords_codec::read::{Batch as CodecBatch, Entries as CodecEntries, Record as CodecRecord};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyList, PyTuple};
use std::sync::Arc;

/// The input of `entries()` and `records()`: a `bytes` object held as it is (immutable, so its
/// bytes are read in place, without a copy), or a copy of any other bytes-like object.
#[derive(Clone)]
pub enum Input {
    /// A `bytes` object.
    Held(Arc<Py<PyBytes>>),
    /// A copy of a `bytearray`, `memoryview`, `mmap`, ...
    Copied(Arc<[u8]>),
}

impl Input {
    /// The input of `obj`, which must be bytes-like (else `UsageError`).
    pub fn of(obj: &Bound<'_, PyAny>) -> PyResult<Input> {
        match obj.cast::<PyBytes>() {
            Ok(b) => Ok(Input::Held(Arc::new(b.clone().unbind()))),
            Err(_) => bytes_of(obj).map(Input::Copied),
        }
    }

    /// The bytes.
    pub fn bytes<'a>(&'a self, py: Python<'_>) -> &'a [u8] {
        match self {
            Input::Held(b) => b.as_bytes(py),
            Input::Copied(c) => c,
        }
    }
}

/// The bytes of a bytes-like object (`bytes`, `bytearray`, `memoryview`, `mmap`, ...), copied
/// once into memory the decoder owns (the stable ABI has no buffer protocol before 3.11).
pub fn bytes_of(obj: &Bound<'_, PyAny>) -> PyResult<Arc<[u8]>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Arc::from(b.as_bytes()));
    }
    if obj.is_instance_of::<pyo3::types::PyString>() {
        return Err(Fail::usage("expected a bytes-like object, not str").into_pyerr(obj.py()));
    }
    // Through memoryview: it takes only objects with the buffer protocol. (`bytes(obj)` would
    // also take an int and allocate that many zero bytes.)
    let builtins = obj.py().import("builtins")?;
    let copied = builtins
        .getattr("memoryview")?
        .call1((obj,))
        .and_then(|view| builtins.getattr("bytes")?.call1((view,)))
        .map_err(|e| {
            Fail::usage(format!("expected a bytes-like object: {e}")).into_pyerr(obj.py())
        })?;
    let b = copied.cast::<PyBytes>()?;
    Ok(Arc::from(b.as_bytes()))
}

/// `None` or the value, as Python shows it.
fn py_opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "None".into(), |v| v.to_string())
}

/// One log entry: a v2 record batch or a v0/v1 message (possibly a compressed wrapper). Every
/// header field is an attribute; `records()` decodes its records (checking the CRC unless
/// `entries(..., check_crc=False)`).
#[pyclass(module = "krecords", frozen)]
pub struct Batch {
    /// Position of the entry in the input.
    #[pyo3(get)]
    position: usize,
    /// Size of the entry in bytes, the 12-byte offset and size prefix included.
    #[pyo3(get)]
    size: usize,
    /// Magic byte: 0, 1 or 2.
    #[pyo3(get)]
    magic: u8,
    /// The offset field: a v2 batch's base offset, a v0/v1 entry's (last) offset.
    #[pyo3(get)]
    offset: i64,
    /// First offset when the header holds it (`None` for a compressed v0/v1 wrapper).
    #[pyo3(get)]
    first_offset: Option<i64>,
    /// Last offset the entry covers.
    #[pyo3(get)]
    last_offset: i64,
    /// Record count when the header holds it.
    #[pyo3(get)]
    record_count: Option<usize>,
    /// The stored CRC.
    #[pyo3(get)]
    crc: u32,
    /// Whether the stored CRC matches the entry.
    #[pyo3(get)]
    crc_valid: bool,
    /// The attributes field.
    #[pyo3(get)]
    attributes: i16,
    /// Codec name (`none`, `gzip`, `snappy`, `lz4`, `zstd`), `None` for an unknown codec id.
    #[pyo3(get)]
    compression: Option<&'static str>,
    /// `create_time`, `log_append_time` or `none` (v0).
    #[pyo3(get)]
    timestamp_type: &'static str,
    /// A v2 batch's base timestamp (`None` for v0/v1).
    #[pyo3(get)]
    base_timestamp: Option<i64>,
    /// The max timestamp (v2), the message timestamp (v1), -1 (v0).
    #[pyo3(get)]
    max_timestamp: i64,
    /// Partition leader epoch as stored (-1: unset or v0/v1).
    #[pyo3(get)]
    partition_leader_epoch: i32,
    /// Producer id (-1: none).
    #[pyo3(get)]
    producer_id: i64,
    /// Producer epoch (-1: none).
    #[pyo3(get)]
    producer_epoch: i16,
    /// Base sequence (-1: none).
    #[pyo3(get)]
    base_sequence: i32,
    /// The transactional flag.
    #[pyo3(get)]
    is_transactional: bool,
    /// The control flag (a transaction marker).
    #[pyo3(get)]
    is_control: bool,
    /// The delete horizon (KIP-534), when set.
    #[pyo3(get)]
    delete_horizon_ms: Option<i64>,
    data: Input,
    check_crc: bool,
    limit: usize,
}

impl Batch {
    fn new(b: &CodecBatch<'_>, data: Input, check_crc: bool, limit: usize) -> Batch {
        let h = b.v2_header_fields();
        let (attributes, base_timestamp) = match b {
            CodecBatch::Legacy(l) => (i16::from(l.attributes()), None),
            CodecBatch::V2(v) => (v.attributes(), Some(v.base_timestamp())),
        };
        Batch {
            position: b.position(),
            size: b.size_in_bytes(),
            magic: b.magic(),
            offset: b.offset_field(),
            first_offset: b.first_offset(),
            last_offset: b.last_offset(),
            record_count: b.record_count(),
            crc: b.crc(),
            crc_valid: b.is_crc_valid(),
            attributes,
            compression: b.compression().ok().map(|c| c.name()),
            timestamp_type: b.timestamp_type().name(),
            base_timestamp,
            max_timestamp: b.max_timestamp(),
            partition_leader_epoch: h.partition_leader_epoch,
            producer_id: h.producer_id,
            producer_epoch: h.producer_epoch,
            base_sequence: h.base_sequence,
            is_transactional: h.transactional,
            is_control: h.control,
            delete_horizon_ms: h.delete_horizon_ms,
            data,
            check_crc,
            limit,
        }
    }

    /// The entry's bytes.
    fn entry<'a>(&'a self, py: Python<'_>) -> &'a [u8] {
        self.data
            .bytes(py)
            .get(self.position..self.position.saturating_add(self.size))
            .unwrap_or_default()
    }

    /// Decodes the records, the GIL released, then makes them Python objects.
    fn decode(&self, py: Python<'_>, out: &Bound<'_, PyList>) -> PyResult<()> {
        let mut scratch = Vec::new();
        let (entry, position, check, limit) =
            (self.entry(py), self.position, self.check_crc, self.limit);
        let scratch_ref = &mut scratch;
        let decoded: Vec<CodecRecord<'_>> = detached(py, move || {
            let batch = CodecEntries::with_base(entry, position)
                .next()
                .ok_or_else(|| Fail::usage("empty entry"))??;
            let records = if check {
                batch.checked_records(scratch_ref, limit)?
            } else {
                batch.records(scratch_ref, limit)?
            };
            Ok(records.collect::<Result<Vec<_>, _>>()?)
        })?;
        for r in &decoded {
            out.append(Bound::new(py, Record::from_codec(py, r)?)?)?;
        }
        Ok(())
    }
}

#[pymethods]
impl Batch {
    /// The records, as `Record` objects (control records included for a control batch).
    ///
    /// Raises `CorruptDataError` for a bad CRC (with `check_crc`), a record that does not parse
    /// or an entry that does not decompress within the limit.
    fn records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        guard(py, || {
            let out = PyList::empty(py);
            self.decode(py, &out)?;
            Ok(out)
        })
    }

    /// The entry's bytes, prefix included.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.entry(py))
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.records(py)?.into_any().try_iter().map(Bound::into_any)
    }

    fn __len__(&self) -> usize {
        self.record_count.unwrap_or(0)
    }

    /// Equal to a `Batch` of the same entry: the same position and the same bytes (so every
    /// header field the same); `NotImplemented` for anything else.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        let Ok(other) = other.cast::<Batch>() else {
            return py.NotImplemented();
        };
        let other = other.get();
        let equal = self.position == other.position && self.entry(py) == other.entry(py);
        PyBool::new(py, equal).to_owned().into_any().unbind()
    }

    /// Of the position and the bytes, which never change (`Batch` is immutable).
    fn __hash__(&self, py: Python<'_>) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.position.hash(&mut h);
        self.entry(py).hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> String {
        format!(
            "Batch(position={}, magic={}, offset={}, last_offset={}, record_count={}, compression={})",
            self.position,
            self.magic,
            self.offset,
            self.last_offset,
            py_opt(self.record_count),
            py_opt(self.compression.map(|c| format!("'{c}'"))),
        )
    }
}

/// One record: `offset`, `timestamp` (ms, `None` for v0), `key` and `value` (bytes, `None` for
/// null) and `headers` (a list of `(str, bytes | None)`).
///
/// `offset`, `timestamp`, `key` and `value` are Python objects made with the record: fields of
/// a frozen class that are `Py` are read by Python as plain struct members, without a call into
/// Rust per attribute. `headers` is a list made with the record when there are headers, and on
/// first access when there are none (a list per record, tracked by Python's cyclic garbage
/// collector, made it run every 700 records).
#[pyclass(module = "krecords", frozen)]
pub struct Record {
    /// Absolute offset (`int`).
    #[pyo3(get)]
    offset: Py<PyAny>,
    /// Timestamp in ms since the epoch (LogAppendTime applied); `None` for v0.
    #[pyo3(get)]
    timestamp: Py<PyAny>,
    /// Key bytes, `None` for a null key.
    #[pyo3(get)]
    key: Py<PyAny>,
    /// Value bytes, `None` for a tombstone.
    #[pyo3(get)]
    value: Py<PyAny>,
    /// The headers list, once made.
    headers: PyOnceLock<Py<PyList>>,
}

/// `bytes`, or `None` for a null field.
fn py_bytes_or_none(py: Python<'_>, b: Option<&[u8]>) -> Py<PyAny> {
    match b {
        Some(b) => PyBytes::new(py, b).into_any().unbind(),
        None => py.None(),
    }
}

impl Record {
    fn from_codec(py: Python<'_>, r: &CodecRecord<'_>) -> PyResult<Record> {
        let headers = PyOnceLock::new();
        let mut list = r.headers().peekable();
        if list.peek().is_some() {
            let made = PyList::empty(py);
            for h in list {
                let key = String::from_utf8_lossy(h.key);
                made.append(PyTuple::new(
                    py,
                    [
                        key.into_pyobject(py)?.into_any().unbind(),
                        py_bytes_or_none(py, h.value),
                    ],
                )?)?;
            }
            // A fresh lock: setting it cannot find it set.
            let _ = headers.set(py, made.unbind());
        }
        Ok(Record {
            offset: r.offset().into_pyobject(py)?.into_any().unbind(),
            timestamp: r.timestamp().into_pyobject(py)?.unbind(),
            key: py_bytes_or_none(py, r.key()),
            value: py_bytes_or_none(py, r.value()),
            headers,
        })
    }
}

#[pymethods]
impl Record {
    /// Headers in order: a list of `(key, value)`, keys decoded as UTF-8 (as Kafka's Java
    /// client does); the same list on every access.
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> Bound<'py, PyList> {
        self.headers
            .get_or_init(py, || PyList::empty(py).unbind())
            .bind(py)
            .clone()
    }

    /// Equal to a `Record` with equal fields (`offset`, `timestamp`, `key`, `value`, `headers`);
    /// `NotImplemented` for anything else. Not hashable: its `headers` list can change.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<Record>() else {
            return Ok(py.NotImplemented());
        };
        let other = other.get();
        let equal = self.offset.bind(py).eq(&other.offset)?
            && self.timestamp.bind(py).eq(&other.timestamp)?
            && self.key.bind(py).eq(&other.key)?
            && self.value.bind(py).eq(&other.value)?
            && self.headers(py).eq(other.headers(py))?;
        Ok(PyBool::new(py, equal).to_owned().into_any().unbind())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Record(offset={}, timestamp={}, key={}, value={}, headers={})",
            self.offset.bind(py).repr()?,
            self.timestamp.bind(py).repr()?,
            self.key.bind(py).repr()?,
            self.value.bind(py).repr()?,
            self.headers(py).repr()?
        ))
    }
}

/// The entries of a buffer, one `Batch` at a time. A truncated last entry ends the iteration
/// quietly (a fetch response may end inside one) and is described by `trailing_bytes`; with
/// `strict=True` it raises `CorruptDataError` instead. A malformed entry raises
/// `CorruptDataError` with its `position`.
#[pyclass(module = "krecords")]
pub struct Entries {
    data: Input,
    pos: usize,
    done: bool,
    check_crc: bool,
    strict: bool,
    limit: usize,
    trailing: usize,
}

impl Entries {
    /// The next entry, or `None` at the end.
    fn next_batch(&mut self, py: Python<'_>) -> Result<Option<Batch>, Fail> {
        if self.done {
            return Ok(None);
        }
        let data = self.data.bytes(py);
        let rest = data.get(self.pos..).unwrap_or_default();
        let mut it = CodecEntries::with_base(rest, self.pos);
        if self.strict {
            it = it.strict();
        }
        match it.next_entry() {
            Ok(Some(b)) => {
                self.pos = b.position().saturating_add(b.size_in_bytes());
                Ok(Some(Batch::new(
                    &b,
                    self.data.clone(),
                    self.check_crc,
                    self.limit,
                )))
            }
            Ok(None) => {
                self.done = true;
                self.trailing = it
                    .partial()
                    .map_or(0, |p| data.len().saturating_sub(p.position));
                Ok(None)
            }
            Err(e) => {
                self.done = true;
                Err(Fail::codec(&e))
            }
        }
    }
}

#[pymethods]
impl Entries {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Batch>> {
        guard(py, || self.next_batch(py).map_err(|f| f.into_pyerr(py)))
    }

    /// Bytes of a truncated entry at the end of the input, once iteration has ended (0: none).
    #[getter]
    fn trailing_bytes(&self) -> usize {
        self.trailing
    }
}

/// The entries of `data` (any bytes-like object: the records of a fetch response, a segment
/// file's bytes, an mmap), as `Batch` objects. A truncated last entry ends the iteration
/// quietly (a fetch response may end inside one; `trailing_bytes` then counts its bytes) unless
/// `strict=True`, which raises `CorruptDataError` for it. A malformed entry raises
/// `CorruptDataError` either way; `check_crc=False` lets `Batch.records()` decode records whose
/// entry's CRC does not match. `max_decompressed_bytes` is an int of at least 0.
#[pyfunction]
#[pyo3(
    signature = (
        data, *, check_crc = Flag::new(true), strict = Flag::new(false),
        max_decompressed_bytes = DEFAULT_LIMIT
    ),
    text_signature = "(data, *, check_crc=True, strict=False, max_decompressed_bytes=...)"
)]
fn entries(
    data: &Bound<'_, PyAny>,
    check_crc: Flag,
    strict: Flag,
    max_decompressed_bytes: Int,
) -> PyResult<Entries> {
    let pyerr = |f: Fail| f.into_pyerr(data.py());
    let check_crc = check_crc.get("check_crc").map_err(pyerr)?;
    let strict = strict.get("strict").map_err(pyerr)?;
    let max_decompressed_bytes = limit(&max_decompressed_bytes, data.py())?;
    Ok(Entries {
        data: Input::of(data)?,
        pos: 0,
        done: false,
        check_crc,
        strict,
        limit: max_decompressed_bytes,
        trailing: 0,
    })
}

/// Every record of the data entries of `data` (control batches left out, as a consumer leaves
/// them out), as a list of `Record` objects. A truncated last entry is left out quietly (so a
/// buffer holding only part of one entry gives `[]`) unless `strict=True`, which raises
/// `CorruptDataError` for it. A malformed entry, a bad CRC (unless `check_crc=False`) or a
/// record past `max_decompressed_bytes` (an int of at least 0) raises `CorruptDataError`.
#[pyfunction]
#[pyo3(
    signature = (
        data, *, check_crc = Flag::new(true), strict = Flag::new(false),
        max_decompressed_bytes = DEFAULT_LIMIT
    ),
    text_signature = "(data, *, check_crc=True, strict=False, max_decompressed_bytes=...)"
)]
fn records<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    check_crc: Flag,
    strict: Flag,
    max_decompressed_bytes: Int,
) -> PyResult<Bound<'py, PyList>> {
    let mut it = entries(data, check_crc, strict, max_decompressed_bytes)?;
    guard(py, || {
        let out = PyList::empty(py);
        while let Some(b) = it.next_batch(py).map_err(|f| f.into_pyerr(py))? {
            if !b.is_control {
                b.decode(py, &out)?;
            }
        }
        Ok(out)
    })
}

/// Adds the functions and classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Batch>()?;
    m.add_class::<Record>()?;
    m.add_class::<Entries>()?;
    m.add_function(wrap_pyfunction!(entries, m)?)?;
    m.add_function(wrap_pyfunction!(records, m)?)?;
    Ok(())
}
