//! The exceptions, and the one conversion of every library error into one of them.

use krecords_source::ErrorClass;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::time::Duration;

/// How often a call waiting on Rust work lets Python handle its signals (Ctrl-C).
pub const SIGNAL_TICK: Duration = Duration::from_millis(50);

create_exception!(
    krecords,
    KrecordsError,
    PyException,
    "Base class of every krecords error; `file` and `position` say where, when known."
);
create_exception!(
    krecords,
    CorruptDataError,
    KrecordsError,
    "The data has a problem: a corrupt or truncated entry, a bad CRC, a record that does not \
     parse or decompress (krec's exit code 1)."
);
/// The docstring of `UsageError`.
const USAGE_ERROR_DOC: &str = "Bad arguments, or a source that cannot be read as asked (krec's \
     exit code 2). Also a ValueError: an argument out of its range or of the wrong kind is a bad \
     value, as Python's own functions say.";

/// `UsageError`, made once: a `KrecordsError` and a `ValueError` (two bases, which
/// `create_exception!` cannot give).
static USAGE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The `UsageError` type.
pub fn usage_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    USAGE_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(
                py,
                [
                    py.get_type::<KrecordsError>(),
                    py.get_type::<PyValueError>(),
                ],
            )?;
            let namespace = PyDict::new(py);
            namespace.set_item("__module__", "krecords")?;
            namespace.set_item("__doc__", USAGE_ERROR_DOC)?;
            let made = py
                .get_type::<PyType>()
                .call1(("UsageError", bases, namespace))?;
            Ok::<_, PyErr>(made.cast_into::<PyType>()?.unbind())
        })
        .map(|t| t.bind(py))
}
create_exception!(
    krecords,
    KrecordsIOError,
    KrecordsError,
    "An I/O error reading or writing, or a broker that cannot be reached (krec's exit code 2)."
);

/// An error on its way to Python, built without the GIL (it crosses threads).
#[derive(Debug, Clone)]
pub struct Fail {
    /// Which exception (`None`: an internal error, raised as `KrecordsError` itself).
    pub class: Option<ErrorClass>,
    /// The message.
    pub message: String,
    /// The file or source, when known.
    pub file: Option<String>,
    /// The byte position in it, when known.
    pub position: Option<u64>,
}

impl Fail {
    /// A usage error.
    pub fn usage(message: impl Into<String>) -> Fail {
        Fail {
            class: Some(ErrorClass::Usage),
            message: message.into(),
            file: None,
            position: None,
        }
    }

    /// An internal error: a caught panic.
    pub fn internal(payload: &(dyn std::any::Any + Send)) -> Fail {
        Fail {
            class: None,
            message: panic_message(payload),
            file: None,
            position: None,
        }
    }

    /// A codec error, classified as krec classifies it (data problems, a record past the
    /// decompression limit included; a writer's errors are usage errors), with its position.
    pub fn codec(e: &krecords_codec::Error) -> Fail {
        Fail {
            class: Some(krecords_source::classify_codec(e)),
            message: e.to_string(),
            file: None,
            position: e.position().map(|p| p as u64),
        }
    }

    /// A sources-layer error, classified as krec classifies it.
    pub fn source(e: &krecords_source::Error) -> Fail {
        let (file, position) = damage_place(e.log_error()).unzip();
        Fail {
            class: Some(e.class()),
            message: e.to_string(),
            file,
            position,
        }
    }

    /// The Python exception.
    pub fn into_pyerr(self, py: Python<'_>) -> PyErr {
        let err = match self.class {
            Some(ErrorClass::Data) => CorruptDataError::new_err(self.message),
            Some(ErrorClass::Usage) => match usage_error_type(py) {
                Ok(t) => PyErr::from_type(t.clone(), self.message),
                // Only if the type could not be made (it never fails in practice).
                Err(_) => KrecordsError::new_err(self.message),
            },
            Some(ErrorClass::Io) => KrecordsIOError::new_err(self.message),
            None => KrecordsError::new_err(self.message),
        };
        let value = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail in practice; if it did,
        // the exception without them is still the right one to raise.
        let _ = value.setattr("file", self.file);
        let _ = value.setattr("position", self.position);
        err
    }
}

/// The segment file and byte of the damage a read reached, when `log` is that.
pub(crate) fn damage_place(log: Option<&krecords_log::Error>) -> Option<(String, u64)> {
    match log {
        Some(krecords_log::Error::DamagedSegment { path, position, .. }) => {
            Some((path.display().to_string(), *position))
        }
        _ => None,
    }
}

impl From<krecords_codec::Error> for Fail {
    fn from(e: krecords_codec::Error) -> Fail {
        Fail::codec(&e)
    }
}

impl From<krecords_source::Error> for Fail {
    fn from(e: krecords_source::Error) -> Fail {
        Fail::source(&e)
    }
}

/// The name of `v`'s type, for an error about an argument of the wrong type.
pub fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string())
}

/// The `UsageError` for the argument `name` of the wrong type:
/// `NAME: expected EXPECTED, not TYPE`.
pub fn wrong_type(name: &str, expected: &str, v: &Bound<'_, PyAny>) -> PyErr {
    Fail::usage(format!("{name}: expected {expected}, not {}", type_name(v))).into_pyerr(v.py())
}

/// The message of a caught panic.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    format!("internal error (please report it): {what}")
}

/// Runs `f`, turning a panic into a `KrecordsError` (the interpreter never crashes).
pub fn guard<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(Fail::internal(payload.as_ref()).into_pyerr(py)),
    }
}

/// Runs `f` without the GIL, turning a panic into a [`Fail`].
pub fn detached<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, Fail> + Send,
) -> PyResult<T> {
    let r = py.detach(|| match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(Fail::internal(payload.as_ref())),
    });
    r.map_err(|f| f.into_pyerr(py))
}

/// What [`interruptible`] does when Python raises from a signal handler (Ctrl-C's
/// `KeyboardInterrupt`) while the work runs.
pub enum OnInterrupt<'a> {
    /// Raise at once; the work's thread runs to its end and its result is dropped (for work
    /// that only reads).
    Abandon,
    /// Call this (a graceful stop: the work ends soon after, in a consistent state), wait for
    /// the work to end, then raise. A second interrupt while waiting raises at once.
    Stop(&'a dyn Fn()),
}

/// Runs `f` on a thread of its own and waits for it without the GIL, letting Python handle its
/// signals every [`SIGNAL_TICK`], so that Ctrl-C interrupts a long call (a blocking call
/// without the GIL would otherwise hold the interrupt until it returned). A panic in `f` is an
/// internal error.
pub fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    on_interrupt: OnInterrupt<'_>,
    f: impl FnOnce() -> Result<T, Fail> + Send + 'static,
) -> PyResult<T> {
    let (tx, mut rx) = sync_channel(1);
    std::thread::Builder::new()
        .name("krecords-call".into())
        .spawn(move || {
            let r = match catch_unwind(AssertUnwindSafe(f)) {
                Ok(r) => r,
                Err(payload) => Err(Fail::internal(payload.as_ref())),
            };
            // The caller may have stopped waiting (an interrupt): nothing to tell then.
            let _ = tx.send(r);
        })
        .map_err(|e| {
            Fail::source(&krecords_source::Error::io("cannot start a thread", e)).into_pyerr(py)
        })?;
    let mut interrupted: Option<PyErr> = None;
    loop {
        let (got, back) = py.detach(move || (rx.recv_timeout(SIGNAL_TICK), rx));
        rx = back;
        match got {
            Ok(r) => {
                return match interrupted {
                    Some(e) => Err(e),
                    None => r.map_err(|f| f.into_pyerr(py)),
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(interrupted.unwrap_or_else(|| {
                    Fail::internal(&"the worker thread ended without a result").into_pyerr(py)
                }))
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    match (&on_interrupt, interrupted.is_some()) {
                        (OnInterrupt::Stop(stop), false) => {
                            stop();
                            interrupted = Some(e);
                        }
                        _ => return Err(e),
                    }
                }
            }
        }
    }
}

/// Adds the exceptions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("KrecordsError", py.get_type::<KrecordsError>())?;
    m.add("CorruptDataError", py.get_type::<CorruptDataError>())?;
    m.add("UsageError", usage_error_type(py)?)?;
    m.add("KrecordsIOError", py.get_type::<KrecordsIOError>())?;
    Ok(())
}
