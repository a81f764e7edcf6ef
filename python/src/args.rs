//! Integer arguments, checked one way for every function: an `int` (or an object with
//! `__index__`, as numpy's integers), never a `bool` (`True` is not 1 here), in the range the
//! argument allows. Anything else is a `UsageError` naming the argument and its range
//! (`magic: between 0 and 2, not 3`; `max_rows: at least 1, not 0`; `magic: expected an int,
//! not bool`), never Python's `OverflowError` or `TypeError`.
//!
//! The other typed arguments ([`Str`], [`Flag`], [`StrMap`], [`Levels`]) are taken the same
//! way: their extraction never fails (PyO3 would raise its `TypeError` while binding the
//! arguments), and a value of the wrong type is a `UsageError` naming the argument and what
//! was given (`isolation: expected a str, not int`).

use crate::errors::{type_name, Fail};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyMapping, PyString};
use std::collections::BTreeMap;
use std::fmt::Display;

/// The Rust integer types arguments are converted to, with their bounds.
pub trait Bounded: Copy + Display {
    /// The type's largest value.
    const MAX: Self;
    /// The value as an `i128` (every type here fits).
    fn wide(self) -> i128;
    /// `v` as this type, if it fits.
    fn narrow(v: i128) -> Option<Self>;
}

macro_rules! bounded {
    ($($t:ty),*) => {$(
        impl Bounded for $t {
            const MAX: Self = <$t>::MAX;
            fn wide(self) -> i128 {
                i128::try_from(self).unwrap_or(i128::MAX)
            }
            fn narrow(v: i128) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
        }
    )*};
}

bounded!(u8, i16, i32, i64, u64, usize);

/// What was given instead of an int that fits an `i128`.
#[derive(Debug, Clone)]
enum NotInt {
    /// Not an int at all: the type's name.
    WrongType(String),
    /// An int past `i128`: as Python shows it, and whether it is negative.
    Huge(String, bool),
}

/// An integer argument as given, checked against its range (and named in the error) by
/// [`Int::get`] or [`Int::at_least`]. Its extraction never fails, so that the error is the
/// function's `UsageError`, not the one PyO3 would raise while binding the arguments.
#[derive(Debug, Clone)]
pub struct Int(Result<i128, NotInt>);

impl Int {
    /// A default value.
    pub const fn new(v: i64) -> Int {
        Int(Ok(v as i128))
    }

    /// What `v` is as an integer argument.
    pub fn of(v: &Bound<'_, PyAny>) -> Int {
        if v.is_instance_of::<PyBool>() {
            return Int(Err(NotInt::WrongType("bool".into())));
        }
        // `operator.index`: ints and objects that are integers (numpy's), not floats or str.
        let index = v
            .py()
            .import("operator")
            .and_then(|m| m.getattr("index"))
            .and_then(|index| index.call1((v,)));
        let Ok(n) = index else {
            return Int(Err(NotInt::WrongType(type_name(v))));
        };
        match n.extract::<i128>() {
            Ok(n) => Int(Ok(n)),
            Err(_) => {
                let shown = n
                    .str()
                    .map_or_else(|_| "a larger int".into(), |s| s.to_string());
                let negative = n.lt(0).unwrap_or(false);
                Int(Err(NotInt::Huge(shown, negative)))
            }
        }
    }

    /// Whether an int was given (not a `bool`, not another type), whatever its value: for
    /// arguments that take an int or something else.
    pub fn is_int(&self) -> bool {
        !matches!(self.0, Err(NotInt::WrongType(_)))
    }

    /// The value as a `T` in `min..=max`, or the message (without the argument's name) saying
    /// the range: `between MIN and MAX, not V`, or `at least MIN, not V` for a value below an
    /// argument of at least 0 bounded only by `T` above (a count, a size).
    pub fn check<T: Bounded>(&self, min: T, max: T) -> Result<T, String> {
        // `at least MIN` says it all of a count or a size, bounded only by its type above.
        let at_least = max.wide() == T::MAX.wide() && min.wide() >= 0;
        let range = |shown: &dyn Display, below: bool| {
            if below && at_least {
                format!("at least {min}, not {shown}")
            } else {
                format!("between {min} and {max}, not {shown}")
            }
        };
        match &self.0 {
            Err(NotInt::WrongType(t)) => Err(format!("expected an int, not {t}")),
            Err(NotInt::Huge(shown, negative)) => Err(range(shown, *negative)),
            Ok(n) if *n < min.wide() => Err(range(n, true)),
            Ok(n) if *n > max.wide() => Err(range(n, false)),
            Ok(n) => T::narrow(*n).ok_or_else(|| range(n, false)),
        }
    }

    /// The value as a `T` in `min..=max`, else a `UsageError` naming `name` and the range.
    pub fn get<T: Bounded>(&self, name: &str, min: T, max: T) -> Result<T, Fail> {
        self.check(min, max)
            .map_err(|m| Fail::usage(format!("{name}: {m}")))
    }

    /// The value as a `T` of at least `min`, else a `UsageError` naming `name` and the range.
    pub fn at_least<T: Bounded>(&self, name: &str, min: T) -> Result<T, Fail> {
        self.get(name, min, T::MAX)
    }
}

impl<'py> FromPyObject<'_, 'py> for Int {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Int> {
        Ok(Int::of(&obj))
    }
}

/// An optional integer argument: `None` is `None`.
pub fn opt<T: Bounded>(v: Option<&Int>, name: &str, min: T, max: T) -> Result<Option<T>, Fail> {
    v.map(|v| v.get(name, min, max)).transpose()
}

/// The default of `max_decompressed_bytes`.
pub const DEFAULT_LIMIT: Int = Int::new(krecords_codec::DEFAULT_DECOMPRESS_LIMIT as i64);

/// The `max_decompressed_bytes` argument: at least 0.
pub fn limit(v: &Int, py: Python<'_>) -> PyResult<usize> {
    v.at_least("max_decompressed_bytes", 0usize)
        .map_err(|f| f.into_pyerr(py))
}

/// A `str` argument as given: `Err` is what was given instead, as the message says it
/// (`expected a str, not int`).
#[derive(Debug, Clone)]
pub struct Str(Result<String, String>);

impl Str {
    /// A default value.
    pub fn new(v: &str) -> Str {
        Str(Ok(v.to_owned()))
    }

    /// The value, else a `UsageError` naming `name` and what was given.
    pub fn get(&self, name: &str) -> Result<&str, Fail> {
        self.0
            .as_deref()
            .map_err(|m| Fail::usage(format!("{name}: {m}")))
    }
}

/// `v` as a `str`, or the message saying what it is instead.
fn text_of(v: &Bound<'_, PyAny>) -> Result<String, String> {
    let Ok(s) = v.cast::<PyString>() else {
        return Err(format!("expected a str, not {}", type_name(v)));
    };
    s.to_cow()
        .map(|s| s.into_owned())
        .map_err(|_| "a str that is not valid Unicode (a lone surrogate)".to_owned())
}

impl<'py> FromPyObject<'_, 'py> for Str {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Str> {
        Ok(Str(text_of(&obj)))
    }
}

/// A `bool` argument as given (a `bool`, or numpy's): an int or another object, truthy or not,
/// is refused, as a `bool` is refused where an int is expected.
#[derive(Debug, Clone)]
pub struct Flag(Result<bool, String>);

impl Flag {
    /// A default value.
    pub const fn new(v: bool) -> Flag {
        Flag(Ok(v))
    }

    /// The value, else a `UsageError` naming `name` and what was given.
    pub fn get(&self, name: &str) -> Result<bool, Fail> {
        self.0
            .clone()
            .map_err(|t| Fail::usage(format!("{name}: expected a bool, not {t}")))
    }
}

impl<'py> FromPyObject<'_, 'py> for Flag {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Flag> {
        Ok(Flag(obj.extract::<bool>().map_err(|_| type_name(&obj))))
    }
}

/// A mapping of `str` to `str` as given (client properties): `Err` is the message, without the
/// argument's name, saying what is wrong (`expected a dict of str to str, not list`,
/// `["retries"]: expected a str, not int`).
#[derive(Debug, Clone)]
pub struct StrMap(Result<BTreeMap<String, String>, String>);

impl StrMap {
    /// The pairs, else a `UsageError` naming `name` and what was given.
    pub fn get(self, name: &str) -> Result<BTreeMap<String, String>, Fail> {
        self.0.map_err(|m| {
            let sep = if m.starts_with('[') { "" } else { ": " };
            Fail::usage(format!("{name}{sep}{m}"))
        })
    }

    fn of(v: &Bound<'_, PyAny>) -> Result<BTreeMap<String, String>, String> {
        let Ok(m) = v.cast::<PyMapping>() else {
            return Err(format!(
                "expected a dict of str to str, not {}",
                type_name(v)
            ));
        };
        let items = m.items().map_err(|e| e.to_string())?;
        let mut out = BTreeMap::new();
        for item in items.iter() {
            let (k, v) = item
                .extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()
                .map_err(|e| e.to_string())?;
            let key = text_of(&k).map_err(|m| format!("key {}: {m}", shown(&k)))?;
            let value = text_of(&v).map_err(|m| format!("[{key:?}]: {m}"))?;
            out.insert(key, value);
        }
        Ok(out)
    }
}

impl<'py> FromPyObject<'_, 'py> for StrMap {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<StrMap> {
        Ok(StrMap(StrMap::of(&obj)))
    }
}

/// `v` as Python shows it (`repr`).
fn shown(v: &Bound<'_, PyAny>) -> String {
    v.repr().map_or_else(|_| "?".into(), |r| r.to_string())
}

/// The `levels` argument as given: a list (or another iterable) of `(codec, level)` pairs, a
/// codec a `str`, a level an [`Int`] (checked with the rows' other levels). `Err` is the
/// message, with the argument's name.
#[derive(Debug, Clone)]
pub struct Levels(Result<Vec<(String, Int)>, String>);

impl Default for Levels {
    fn default() -> Levels {
        Levels(Ok(Vec::new()))
    }
}

impl Levels {
    /// The pairs, else a `UsageError` naming the argument and what was given.
    pub fn get(self) -> Result<Vec<(String, Int)>, Fail> {
        self.0.map_err(Fail::usage)
    }

    fn of(v: &Bound<'_, PyAny>) -> Result<Vec<(String, Int)>, String> {
        const PAIRS: &str = "a list of (codec, level) pairs";
        let not_pairs = || format!("levels: expected {PAIRS}, not {}", type_name(v));
        // A str or bytes is iterable, but its items are no pairs.
        if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() {
            return Err(not_pairs());
        }
        let items = v.try_iter().map_err(|_| not_pairs())?;
        let mut out = Vec::new();
        for (i, item) in items.enumerate() {
            let item = item.map_err(|e| format!("levels: {e}"))?;
            let pair = if item.is_instance_of::<PyString>() || item.is_instance_of::<PyBytes>() {
                None
            } else {
                item.extract::<(Bound<'_, PyAny>, Int)>().ok()
            };
            let Some((codec, level)) = pair else {
                return Err(format!(
                    "levels[{i}]: expected a (codec, level) pair, not {}",
                    type_name(&item)
                ));
            };
            let codec = text_of(&codec).map_err(|m| format!("levels[{i}] codec: {m}"))?;
            out.push((codec, level));
        }
        Ok(out)
    }
}

impl<'py> FromPyObject<'_, 'py> for Levels {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Levels> {
        Ok(Levels(Levels::of(&obj)))
    }
}
