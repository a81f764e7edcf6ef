//! `ship()`: `krec ship` as a call ([`krecords_ship::ship`]): sources into a Kafka topic
//! exactly once.

use crate::args::{Int, Str, StrMap};
use crate::errors::{interruptible, type_name, wrong_type, Fail, OnInterrupt};
use krecords_client::ClientConfig;
use krecords_ship::{ship as ship_job, Error, ShipOptions, Sources, Target};
use krecords_source::{ErrorClass, KafkaUrl};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn fail(e: Error) -> Fail {
    let (class, message) = match e {
        Error::Usage(m) => (ErrorClass::Usage, m),
        Error::Data(m) => (ErrorClass::Data, m),
        Error::Io { context, source } => (ErrorClass::Io, format!("{context}: {source}")),
    };
    Fail {
        class: Some(class),
        message,
        file: None,
        position: None,
    }
}

fn client_config(pairs: &BTreeMap<String, String>) -> Result<ClientConfig, Fail> {
    let mut c = ClientConfig::default();
    for (k, v) in pairs {
        c.set(k, v)
            .map_err(|e| Fail::usage(format!("config {k}: {e}")))?;
    }
    Ok(c)
}

/// Ships `sources` (a path or a list of paths: partition directories, segment files, or
/// `kafka://HOST:PORT/TOPIC/PARTITION` partitions of another cluster) into the topic of
/// `target` (`kafka://HOST:PORT/TOPIC[/PARTITION]`) exactly once, as `krec ship` does: the
/// job's transactional id and consumer group are `krec-ship-JOB` (default: the target
/// topic), and running the same job again ships only what is new. `config` are client
/// properties for the target and `kafka://` sources; `source_config` adds properties for the
/// sources only. Returns the report `krec ship --format json` prints.
///
/// Ctrl-C stops the job gracefully, as it stops `krec ship`: what was sent is committed with
/// its positions, then `KeyboardInterrupt` is raised (the same job run again goes on from
/// there); a second Ctrl-C raises at once, leaving the open transaction to be aborted by the
/// next run.
///
/// `txn_bytes` and `parallel` are ints of at least 0 (not `bool`s), else `UsageError`.
#[pyfunction]
#[pyo3(
    signature = (
        sources, target, *, job = None, config = None, source_config = None,
        txn_bytes = Int::new(64 << 20), parallel = Int::new(4)
    ),
    text_signature = "(sources, target, *, job=None, config=None, source_config=None, \
        txn_bytes=67108864, parallel=4)"
)]
#[allow(clippy::too_many_arguments)]
fn ship<'py>(
    py: Python<'py>,
    sources: &Bound<'py, PyAny>,
    target: Str,
    job: Option<Str>,
    config: Option<StrMap>,
    source_config: Option<StrMap>,
    txn_bytes: Int,
    parallel: Int,
) -> PyResult<Bound<'py, PyAny>> {
    let pyerr = |f: Fail| f.into_pyerr(py);
    let target = target.get("target").map_err(pyerr)?.to_owned();
    let job = job
        .map(|j| j.get("job").map(str::to_owned))
        .transpose()
        .map_err(pyerr)?;
    let config = config.map(|c| c.get("config")).transpose().map_err(pyerr)?;
    let source_config = source_config
        .map(|c| c.get("source_config"))
        .transpose()
        .map_err(pyerr)?;
    let txn_bytes = txn_bytes
        .at_least("txn_bytes", 0u64)
        .map_err(|f| f.into_pyerr(py))?;
    let parallel = parallel
        .at_least("parallel", 0usize)
        .map_err(|f| f.into_pyerr(py))?;
    let paths = source_paths(sources)?;
    let stop = Arc::new(AtomicBool::new(false));
    let stop_job = Arc::clone(&stop);
    let request_stop = move || stop.store(true, Ordering::Relaxed);
    let text = interruptible(py, OnInterrupt::Stop(&request_stop), move || {
        let url = KafkaUrl::parse(&target)
            .unwrap_or_else(|| {
                Err(format!(
                    "{target}: the target must be kafka://HOST:PORT/TOPIC[/PARTITION]"
                ))
            })
            .map_err(Fail::usage)?;
        let target_config = client_config(&config.unwrap_or_default())?;
        let mut source_cfg = target_config.clone();
        for (k, v) in source_config.unwrap_or_default() {
            source_cfg
                .set(&k, &v)
                .map_err(|e| Fail::usage(format!("source_config {k}: {e}")))?;
        }
        let mut list = Sources::new(url.partition);
        if paths.is_empty() {
            return Err(Fail::usage("no sources"));
        }
        for p in &paths {
            match KafkaUrl::parse(p) {
                Some(u) => {
                    let u = u.map_err(Fail::usage)?;
                    list.add_kafka(p, &u.servers, &u.topic, u.partition)
                        .map_err(fail)?;
                }
                None => list.add_path(p).map_err(fail)?,
            }
        }
        let options = ShipOptions {
            job,
            txn_bytes,
            parallel,
            target_config,
            source_config: source_cfg,
            stop: Some(stop_job),
            ..ShipOptions::default()
        };
        let target = Target::new(url.servers, url.topic, url.partition);
        let report = ship_job(&target, list.finish().map_err(fail)?, &options, |_| {
            ControlFlow::Continue(())
        })
        .map_err(fail)?;
        Ok(report.to_json().to_string())
    })?;
    py.import("json")?.call_method1("loads", (text,))
}

/// The `sources` argument: a path (a `str` or an `os.PathLike`; a `kafka://` URL is a `str`) or
/// a list (or another iterable, not a `str` or `bytes`) of them, else `UsageError`.
fn source_paths(sources: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    /// One path as a `str`; `Err`: what it is instead.
    fn one(p: &Bound<'_, PyAny>) -> Result<String, String> {
        let path = p
            .extract::<std::path::PathBuf>()
            .map_err(|_| format!("expected a path (str or os.PathLike), not {}", type_name(p)))?;
        path.into_os_string()
            .into_string()
            .map_err(|p| format!("a path that is not UTF-8: {p:?}"))
    }
    let usage = |m: String| Fail::usage(m).into_pyerr(sources.py());
    if sources.is_instance_of::<PyString>() || sources.hasattr("__fspath__")? {
        return one(sources)
            .map(|p| vec![p])
            .map_err(|m| usage(format!("sources: {m}")));
    }
    let what = "a path, a kafka:// URL or a list of them";
    // Bytes are iterable, but their items (ints) are no paths.
    if sources.is_instance_of::<PyBytes>() {
        return Err(wrong_type("sources", what, sources));
    }
    let items = sources
        .try_iter()
        .map_err(|_| wrong_type("sources", what, sources))?;
    let mut out = Vec::new();
    for (i, p) in items.enumerate() {
        let p = p?;
        out.push(one(&p).map_err(|m| usage(format!("sources[{i}]: {m}")))?);
    }
    Ok(out)
}

/// Adds the function to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ship, m)?)?;
    Ok(())
}
