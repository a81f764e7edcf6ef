//! `build_batch()`: log entries from records, as `krec build` writes them.

use crate::args::{opt, Flag, Int, Str};
use crate::errors::{detached, guard, type_name, Fail};
use crate::read::bytes_of;
use krecords_codec::build::{build, BatchOptions, BuildRecord};
use krecords_codec::{Compression, TimestampType};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyMapping, PyString};

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

/// The fields a record may have: `krec build`'s JSON fields (`partition` is accepted and, as
/// there, not used).
const FIELDS: [&str; 6] = [
    "offset",
    "partition",
    "timestamp",
    "key",
    "value",
    "headers",
];

/// A record as given: a `dict` (or another mapping) or a `Record`.
enum Given<'a, 'py> {
    Mapping(&'a Bound<'py, PyMapping>),
    Record(&'a Bound<'py, PyAny>),
}

impl<'py> Given<'_, 'py> {
    /// The field `name`, `None` when it is missing.
    fn field(&self, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self {
            Given::Mapping(m) => match m.get_item(name) {
                Ok(v) => Ok(Some(v)),
                Err(e) if e.is_instance_of::<PyKeyError>(m.py()) => Ok(None),
                Err(e) => Err(e),
            },
            Given::Record(r) => Ok(Some(r.getattr(name)?)),
        }
    }
}

/// A header as given: a `(key, value)` tuple, or `krec build`'s JSON form, a mapping with `key`
/// and optionally `value` (a missing `value` is `None`) and no other field.
fn header<'py>(
    h: &Bound<'py, PyAny>,
) -> Result<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>), String> {
    let Ok(m) = h.cast::<PyMapping>() else {
        return h
            .extract::<(Bound<'py, PyAny>, Bound<'py, PyAny>)>()
            .map(|(k, v)| (k, Some(v)))
            .map_err(|_| {
                "each header is a (key, value) tuple or a dict with key and value".to_owned()
            });
    };
    let fields = m.keys().map_err(|e| e.to_string())?;
    for f in fields.iter() {
        let known = f
            .cast::<PyString>()
            .ok()
            .and_then(|f| f.to_cow().ok())
            .is_some_and(|f| f == "key" || f == "value");
        if !known {
            return Err(format!(
                "unknown header field {}: expected key, value",
                f.repr().map_or_else(|_| "?".into(), |r| r.to_string())
            ));
        }
    }
    let given = Given::Mapping(m);
    let key = given
        .field("key")
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "a header dict needs a key".to_owned())?;
    Ok((key, given.field("value").map_err(|e| e.to_string())?))
}

/// An optional int field of a record (`None`: not given) in `min..=i64::MAX`, or the message
/// saying why not (a `bool` is no int here either).
fn opt_int(v: Option<Bound<'_, PyAny>>, min: i64) -> Result<Option<i64>, String> {
    v.filter(|v| !v.is_none())
        .map(|v| Int::of(&v).check(min, i64::MAX))
        .transpose()
}

/// Record `index` from Python: a dict (or another mapping) with `value`, and optionally `key`,
/// `timestamp` (ms; default: now), `headers` (see [`header`]) and `offset` (not negative: a
/// Kafka offset never is); or a `Record`. Anything else, and a mapping with a field `krec build` does not know, is a
/// usage error (a misspelled `value` would otherwise build a null record).
fn record(r: &Bound<'_, PyAny>, index: usize, now: i64) -> Result<BuildRecord, Fail> {
    let wrong = |m: String| Fail::usage(format!("records[{index}]: {m}"));
    let given = if r.is_instance_of::<crate::read::Record>() {
        Given::Record(r)
    } else if let Ok(m) = r.cast::<PyMapping>() {
        for key in m.keys().map_err(|e| wrong(e.to_string()))?.iter() {
            let known = key
                .cast::<PyString>()
                .ok()
                .and_then(|k| k.to_cow().ok())
                .is_some_and(|k| FIELDS.contains(&k.as_ref()));
            if !known {
                return Err(wrong(format!(
                    "unknown field {}: expected one of {}",
                    key.repr().map_or_else(|_| "?".into(), |r| r.to_string()),
                    FIELDS.join(", ")
                )));
            }
        }
        Given::Mapping(m)
    } else {
        return Err(wrong(format!(
            "a record is a dict (or a krecords.Record), not {}",
            type_name(r)
        )));
    };
    let in_field = |name: &str| {
        let name = name.to_owned();
        move |e: PyErr| wrong(format!("{name}: {e}"))
    };
    let mut headers = Vec::new();
    if let Some(hs) = given
        .field("headers")
        .map_err(in_field("headers"))?
        .filter(|h| !h.is_none())
    {
        for h in hs.try_iter().map_err(in_field("headers"))? {
            let h = h.map_err(in_field("headers"))?;
            let (k, v) = header(&h).map_err(|m| wrong(format!("headers: {m}")))?;
            let key = opt_bytes(Some(k))
                .map_err(in_field("header key"))?
                .unwrap_or_default();
            headers.push((key, opt_bytes(v).map_err(in_field("header value"))?));
        }
    }
    let get = |name: &str| given.field(name).map_err(in_field(name));
    let int_field =
        |name: &str, min: i64| opt_int(get(name)?, min).map_err(|m| wrong(format!("{name}: {m}")));
    Ok(BuildRecord {
        offset: int_field("offset", 0)?,
        timestamp: int_field("timestamp", i64::MIN)?.unwrap_or(now),
        key: opt_bytes(get("key")?).map_err(in_field("key"))?,
        value: opt_bytes(get("value")?).map_err(in_field("value"))?,
        headers,
    })
}

/// Refuses timestamp options the entries would not carry (the builders would drop them
/// silently): magic 0 has no timestamps at all, so neither `log_append_time` timestamps nor an
/// append time; magic 1 and 2 always have a timestamp type (`none` is magic 0's); and an
/// append time is written only under `log_append_time`.
fn check_timestamps(
    magic: u8,
    timestamp_type: TimestampType,
    log_append_time: Option<i64>,
) -> Result<(), String> {
    let log_append = timestamp_type == TimestampType::LogAppendTime;
    if magic == 0 {
        if log_append || log_append_time.is_some() {
            return Err(
                "magic 0 has no timestamps: timestamp_type='log_append_time' and \
                 log_append_time cannot be written (use magic 1 or 2)"
                    .into(),
            );
        }
        return Ok(());
    }
    if timestamp_type == TimestampType::NoTimestamp {
        return Err(format!(
            "timestamp_type 'none' is magic 0's: magic {magic} writes create_time or \
             log_append_time"
        ));
    }
    if log_append_time.is_some() && !log_append {
        return Err(
            "log_append_time is written only with timestamp_type='log_append_time' \
             (under create_time each record's own timestamp is written)"
                .into(),
        );
    }
    Ok(())
}

/// Builds log entries from `records` (dicts with `value` and optionally `key`, `timestamp`,
/// `headers`, `offset`, `partition`; or `Record` objects), byte for byte what `krec build`
/// writes with the same options: `records_per_batch` records per entry (0: all in one), offsets
/// from `base_offset`, `producer=(id, epoch)` with sequences from `base_sequence`. A record's
/// `headers` is a list of `(key, value)` tuples or of dicts `{"key": ..., "value": ...}` as in
/// `krec build`'s JSON (`value` optional); both forms build the same bytes. A header key is a
/// `str` or bytes-like, a value a `str`, bytes-like or `None`. `timestamp_type` is
/// `"create_time"` (each record's `timestamp`) or `"log_append_time"` (every record reads as
/// `log_append_time`, default: now); `log_append_time` with another timestamp type raises
/// `UsageError`. Magic 0 has no timestamps: records' timestamps are not written, and
/// `timestamp_type="log_append_time"` or `log_append_time` raises `UsageError` (`"none"`, magic
/// 0's timestamp type, is refused with magic 1 and 2). A field `krec build` does not know (in a record or a header dict), or an item that is
/// not a record, raises `UsageError`. `compression` is a codec name or `codec:level`
/// (`"zstd:3"`); levels are checked as `krec` checks them (lz4 only at its default, none for
/// snappy). Offsets are not negative: `base_offset` (and a record's `offset`) below 0 raises
/// `UsageError`, and so do records whose offsets would run past 2**63-1. Every integer
/// argument is an `int` (not a `bool`) in its range (`magic` 0 to 2, `records_per_batch` at
/// least 0, `producer` a 64-bit id and a 16-bit epoch, `base_sequence`,
/// `partition_leader_epoch` and `level` 32-bit, `log_append_time` and `delete_horizon_ms`
/// 64-bit), else `UsageError` names it and its range.
#[pyfunction]
#[pyo3(signature = (
    records, *, magic = Int::new(2), compression = None, level = None,
    base_offset = Int::new(0), producer = None, base_sequence = Int::new(-1),
    transactional = Flag::new(false), partition_leader_epoch = Int::new(-1),
    timestamp_type = Str::new("create_time"), log_append_time = None, records_per_batch = Int::new(0),
    delete_horizon_ms = None
), text_signature = "(records, *, magic=2, compression=None, level=None, base_offset=0, \
    producer=None, base_sequence=-1, transactional=False, partition_leader_epoch=-1, \
    timestamp_type=\"create_time\", log_append_time=None, records_per_batch=0, \
    delete_horizon_ms=None)")]
#[allow(clippy::too_many_arguments)]
fn build_batch<'py>(
    py: Python<'py>,
    records: &Bound<'py, PyAny>,
    magic: Int,
    compression: Option<Str>,
    level: Option<Int>,
    base_offset: Int,
    producer: Option<Bound<'py, PyAny>>,
    base_sequence: Int,
    transactional: Flag,
    partition_leader_epoch: Int,
    timestamp_type: Str,
    log_append_time: Option<Int>,
    records_per_batch: Int,
    delete_horizon_ms: Option<Int>,
) -> PyResult<Bound<'py, PyBytes>> {
    guard(py, || {
        let usage = |m: String| Fail::usage(m).into_pyerr(py);
        let pyerr = |f: Fail| f.into_pyerr(py);
        let magic = magic.get::<u8>("magic", 0, 2).map_err(pyerr)?;
        let compression = compression
            .as_ref()
            .map(|c| c.get("compression"))
            .transpose()
            .map_err(pyerr)?;
        let transactional = transactional.get("transactional").map_err(pyerr)?;
        let timestamp_type = timestamp_type.get("timestamp_type").map_err(pyerr)?;
        let level = opt(level.as_ref(), "level", i32::MIN, i32::MAX).map_err(pyerr)?;
        // Kafka's offsets are not negative (the codec refuses such a base offset as well).
        let base_offset = base_offset.at_least("base_offset", 0i64).map_err(pyerr)?;
        let producer = producer
            .filter(|p| !p.is_none())
            .map(|p| -> PyResult<(i64, i16)> {
                let (id, epoch) = p.extract::<(Int, Int)>().map_err(|_| {
                    usage(format!(
                        "producer: expected an (id, epoch) tuple of ints, not {}",
                        type_name(&p)
                    ))
                })?;
                Ok((
                    id.get("producer id", i64::MIN, i64::MAX).map_err(pyerr)?,
                    epoch
                        .get("producer epoch", i16::MIN, i16::MAX)
                        .map_err(pyerr)?,
                ))
            })
            .transpose()?;
        let base_sequence = base_sequence
            .get("base_sequence", i32::MIN, i32::MAX)
            .map_err(pyerr)?;
        let partition_leader_epoch = partition_leader_epoch
            .get("partition_leader_epoch", i32::MIN, i32::MAX)
            .map_err(pyerr)?;
        let log_append_time = opt(
            log_append_time.as_ref(),
            "log_append_time",
            i64::MIN,
            i64::MAX,
        )
        .map_err(pyerr)?;
        let records_per_batch = records_per_batch
            .at_least("records_per_batch", 0usize)
            .map_err(pyerr)?;
        let delete_horizon_ms = opt(
            delete_horizon_ms.as_ref(),
            "delete_horizon_ms",
            i64::MIN,
            i64::MAX,
        )
        .map_err(pyerr)?;
        // `krec build --compression`'s spelling and checks: `zstd`, `zstd:3`; a level the CLI
        // refuses (lz4 at another level, snappy with one) is refused here too.
        let (compression, level) = match compression {
            None => (Compression::None, level),
            Some(spec) => {
                let (codec, named) = Compression::parse_with_level(spec).map_err(&usage)?;
                if named.is_some() && level.is_some() {
                    return Err(usage(format!(
                        "compression {spec:?} names a level and level= gives another: give one"
                    )));
                }
                (codec, named.or(level))
            }
        };
        compression.check_level(level).map_err(&usage)?;
        let timestamp_type = TimestampType::from_name(timestamp_type).ok_or_else(|| {
            usage(format!(
                "unknown timestamp type {timestamp_type:?}: create_time or log_append_time"
            ))
        })?;
        check_timestamps(magic, timestamp_type, log_append_time).map_err(&usage)?;
        let now = krecords_source::time::now_ms();
        if records.is_instance_of::<PyString>()
            || records.is_instance_of::<PyBytes>()
            || records.is_instance_of::<PyMapping>()
        {
            return Err(usage(format!(
                "records: a list (or another iterable) of records, not {}",
                type_name(records)
            )));
        }
        let mut recs = Vec::new();
        for (index, r) in records.try_iter()?.enumerate() {
            recs.push(record(&r?, index, now).map_err(|f| f.into_pyerr(py))?);
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
