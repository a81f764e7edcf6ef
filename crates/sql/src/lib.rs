//! SQL over Kafka data: krec sources and exported datasets as Apache DataFusion tables.
//!
//! - [`KrecTable`]: any source [`krecords_source::Sources::open`] takes (segment files, partition
//!   directories, a broker's `log.dirs` root, `kafka://` topics and partitions) as a
//!   [`TableProvider`](datafusion::catalog::TableProvider) of krecords-arrow's fixed schema
//!   ([`krecords_arrow::full_schema`]), with projection pushdown (columns a query does not use
//!   are not built) and filter pushdown on `partition`, `offset` and `timestamp` (a narrow range
//!   reads only the segments or fetches that hold it).
//! - [`register_dataset`]: an exported dataset directory (`DIR/topic=T/partition=P/*.parquet`,
//!   or `*.arrow`) as DataFusion's listing table.
//! - [`new_context`]: a [`SessionContext`] with the JSON functions of
//!   `datafusion-functions-json` (`json_get_str(value, 'user')`, `json_get_int`, `->>`, ...).
//! - [`register`]: one `NAME=SOURCE` argument of `krec sql`, whichever of the two it is.
//! - [`query`]: a query planned read-only: statements that write (`INSERT`, `UPDATE`,
//!   `DELETE`, `COPY ... TO`) are refused ([`WriteRefused`]), so a query cannot write into
//!   the files it reads.
//! - [`check_output`] and [`write_parquet`]: a result written into a Parquet file that is none
//!   of the query's sources nor inside one, whole or not at all.
//! - [`write_result`]: a result as a text table, JSON Lines or CSV ([`ResultFormat`]), a null
//!   told from an empty string in each (`NULL` in the table; in CSV an empty field, and an
//!   empty string `""`, as DuckDB writes them).
//!
//! ```
//! use krecords_sql::{new_context, KrecTable, TableOptions};
//! use krecords_codec::write::{NewRecord, V2Builder};
//! use std::sync::Arc;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let file = dir.path().join("00000000000000000000.log");
//! let mut b = V2Builder::new(0);
//! for (k, v) in [("a", "{\"n\":1}"), ("b", "{\"n\":2}"), ("a", "{\"n\":3}")] {
//!     b.append(&NewRecord::new(1_714_000_000_000, Some(k.as_bytes()), Some(v.as_bytes())))?;
//! }
//! std::fs::write(&file, b.finish()?)?;
//!
//! let options = TableOptions::strings();
//! let table = KrecTable::open(&[file], options, &mut || unreachable!())?;
//! let rt = tokio::runtime::Runtime::new()?;
//! let batches = rt.block_on(async {
//!     let ctx = new_context()?;
//!     ctx.register_table("events", Arc::new(table))?;
//!     ctx.sql("SELECT key, sum(json_get_int(value, 'n')) AS n FROM events GROUP BY key ORDER BY key")
//!         .await?
//!         .collect()
//!         .await
//! })?;
//! let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
//! assert!(text.contains("| a   | 4 |"), "{text}");
//! # Ok(())
//! # }
//! ```

#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod dataset;
mod output;
mod print;
mod pushdown;
mod read;
mod table;

/// The DataFusion this crate builds on, for callers that run queries.
pub use datafusion;
pub use dataset::{is_dataset, is_dataset_file, register_dataset};
pub use krecords_arrow::BytesFormat;
pub use output::{
    check_output, query, read_only, table_paths, write_parquet, write_refused, OutputError,
    WriteError, WriteRefused,
};
pub use print::{csv_refusal, raw_values_note, write_result, ResultFormat};
pub use pushdown::{Interval, Pushdown};
pub use table::KrecTable;

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use krecords_source::{ClientConfig, IsolationLevel};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How a [`KrecTable`] reads its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableOptions {
    /// read_committed (default: what a consumer sees, aborted records left out) or
    /// read_uncommitted.
    pub isolation: IsolationLevel,
    /// How the `key` column holds its bytes.
    pub key_format: BytesFormat,
    /// How the `value` column holds its bytes.
    pub value_format: BytesFormat,
    /// Most rows per record batch.
    pub batch_rows: usize,
}

impl Default for TableOptions {
    /// read_committed, binary keys and values, 8192 rows per record batch.
    fn default() -> Self {
        TableOptions {
            isolation: IsolationLevel::ReadCommitted,
            key_format: BytesFormat::Binary,
            value_format: BytesFormat::Binary,
            batch_rows: 8192,
        }
    }
}

impl TableOptions {
    /// The defaults with keys and values as strings (UTF-8; other bytes are null and counted).
    pub fn strings() -> TableOptions {
        TableOptions {
            key_format: BytesFormat::String,
            value_format: BytesFormat::String,
            ..TableOptions::default()
        }
    }
}

/// What the scans of a [`KrecTable`] have read, summed over its partitions.
#[derive(Debug, Default)]
pub struct ScanCounters {
    /// Partitions opened for reading.
    pub partitions: AtomicU64,
    /// Files (segments; for a live partition, the partition itself) opened.
    pub files: AtomicU64,
    /// Log entries (batches, v0/v1 messages) read.
    pub entries: AtomicU64,
    invalid: Mutex<Vec<(String, u64)>>,
    notes: Mutex<Vec<String>>,
    /// The exported dataset the table is ([`register_dataset`]); `None` for sources.
    dataset: Option<Dataset>,
}

/// What [`register_dataset`] found out about a dataset.
#[derive(Debug, Clone)]
pub(crate) struct Dataset {
    /// The dataset directory (or its one file), as given.
    pub(crate) dir: PathBuf,
    /// The isolation levels its files say they were exported at, each with its number of
    /// files, in name order (files that say none left out).
    pub(crate) isolations: Vec<(String, u64)>,
}

impl ScanCounters {
    /// Per column with any: the values the string format could not hold (not UTF-8), which
    /// are null in the results.
    pub fn invalid(&self) -> Vec<(String, u64)> {
        self.invalid.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// What the scans passed over without an error, one line each: a torn tail at the end of
    /// a partition directory's log, which is not part of the log Kafka serves (see
    /// `krecords_source::Reader::notes`).
    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// Whether the table is an exported dataset ([`register_dataset`]), which holds what its
    /// export's isolation kept, rather than sources read at the table's isolation.
    pub fn is_dataset(&self) -> bool {
        self.dataset.is_some()
    }

    /// For a table that is an exported dataset: what to say about its isolation level to a
    /// query reading sources at `isolation` (`asked`: the level was asked for, not the
    /// default), one line naming the table `name`. A dataset holds the rows its export's level
    /// kept (in its files' metadata, `krec.isolation`), whatever the query's: said when that
    /// level differs from `isolation`, or its files were exported at different levels (written
    /// by other tools than `krec export`, which refuses that); otherwise said only when
    /// `asked`, since the level asked for does not apply to it. `None` for sources, and for a
    /// dataset whose level is the query's when it was not asked for.
    ///
    /// ```
    /// # use krecords_sql::ScanCounters;
    /// # use krecords_source::IsolationLevel;
    /// let sources = ScanCounters::default();
    /// assert_eq!(sources.isolation_note("t", IsolationLevel::ReadCommitted, true), None);
    /// ```
    pub fn isolation_note(
        &self,
        name: &str,
        isolation: IsolationLevel,
        asked: bool,
    ) -> Option<String> {
        let d = self.dataset.as_ref()?;
        let dir = d.dir.display();
        let rule = "(--isolation applies to sources, not datasets)";
        match d.isolations.as_slice() {
            [(level, _)] if level != isolation.name() => Some(format!(
                "table {name}: the dataset {dir} was exported at {level}; its rows are what it \
                 holds {rule}"
            )),
            [_, _, ..] => {
                let levels: Vec<String> = d
                    .isolations
                    .iter()
                    .map(|(level, n)| format!("{level} ({n} file(s))"))
                    .collect();
                Some(format!(
                    "table {name}: the dataset {dir} mixes files exported at {}; its rows are \
                     what they hold, each file's at its level {rule}",
                    levels.join(" and ")
                ))
            }
            levels if asked => {
                let level = match levels {
                    [(level, _)] => format!(" ({level})"),
                    _ => String::new(),
                };
                Some(format!(
                    "table {name}: the dataset {dir} holds what its export's isolation{level} \
                     kept, and --isolation does not apply to it"
                ))
            }
            _ => None,
        }
    }

    /// `(partitions, files, entries)` read so far.
    pub fn read(&self) -> (u64, u64, u64) {
        (
            self.partitions.load(Ordering::Relaxed),
            self.files.load(Ordering::Relaxed),
            self.entries.load(Ordering::Relaxed),
        )
    }

    fn add_notes(&self, notes: &[String]) {
        if let Ok(mut v) = self.notes.lock() {
            // A partition scanned again (a self-join) says the same once.
            for n in notes {
                if !v.contains(n) {
                    v.push(n.clone());
                }
            }
        }
    }

    fn add_invalid(&self, column: &str, n: u64) {
        if let Ok(mut v) = self.invalid.lock() {
            match v.iter_mut().find(|(c, _)| c == column) {
                Some((_, total)) => *total = total.saturating_add(n),
                None => v.push((column.to_string(), n)),
            }
        }
    }
}

/// A DataFusion session with the JSON functions of `datafusion-functions-json` registered,
/// configured from DataFusion's `DATAFUSION_*` environment variables as `datafusion-cli` is
/// (`DATAFUSION_EXECUTION_TARGET_PARTITIONS=4` sets `datafusion.execution.target_partitions`;
/// variables that name no setting are ignored).
///
/// # Errors
///
/// A `DATAFUSION_*` variable holds a value its setting cannot take, or a function could not
/// be registered (not expected).
pub fn new_context() -> Result<SessionContext> {
    let config = SessionConfig::from_env()?.with_information_schema(true);
    let mut state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .build();
    datafusion_functions_json::register_all(&mut state)?;
    Ok(SessionContext::new_with_state(state))
}

/// Registers `source` as the table `name`: an exported dataset directory ([`is_dataset`]) or
/// one `.parquet` or `.arrow` file ([`is_dataset_file`]) as a listing table, anything else as a [`KrecTable`] of the sources it names (a comma-separated
/// list). Returns the table's counters (for a dataset, only its not-UTF-8 counts).
///
/// # Errors
///
/// The errors of [`Sources::open`](krecords_source::Sources::open) (as
/// [`DataFusionError::External`] holding the [`krecords_source::Error`]; see [`source_error`]),
/// or of [`register_dataset`].
pub async fn register(
    ctx: &SessionContext,
    name: &str,
    source: &str,
    options: TableOptions,
    config: &mut dyn FnMut() -> Result<ClientConfig, krecords_source::Error>,
) -> Result<Arc<ScanCounters>> {
    register_with(
        ctx,
        name,
        source,
        options,
        config,
        krecords_source::RemoteOptions::default(),
    )
    .await
}

/// [`register`], remote tier locations (`s3://…`, `file://…`) opened with `remote`.
///
/// # Errors
///
/// As [`register`].
pub async fn register_with(
    ctx: &SessionContext,
    name: &str,
    source: &str,
    options: TableOptions,
    config: &mut dyn FnMut() -> Result<ClientConfig, krecords_source::Error>,
    remote: krecords_source::RemoteOptions,
) -> Result<Arc<ScanCounters>> {
    let path = Path::new(source);
    if (path.is_dir() && is_dataset(path)) || dataset::is_dataset_file(path) {
        return register_dataset(ctx, name, path, options).await;
    }
    let args: Vec<PathBuf> = table_paths(source);
    let table = KrecTable::open_with(&args, options, config, remote)
        .map_err(|e| DataFusionError::External(Box::new(e)))?;
    let counters = table.counters();
    ctx.register_table(name, Arc::new(table))?;
    Ok(counters)
}

/// The sources-layer error inside a DataFusion error, when there is one (a source could not be
/// opened or read): its [`class`](krecords_source::Error::class) gives the exit code.
pub fn source_error(e: &DataFusionError) -> Option<&krecords_source::Error> {
    match e {
        DataFusionError::External(inner) => inner.downcast_ref::<krecords_source::Error>(),
        DataFusionError::Context(_, inner) => source_error(inner),
        DataFusionError::Shared(inner) => source_error(inner),
        DataFusionError::ArrowError(inner, _) => match inner.as_ref() {
            datafusion::arrow::error::ArrowError::ExternalError(x) => x
                .downcast_ref::<DataFusionError>()
                .and_then(source_error)
                .or_else(|| x.downcast_ref::<krecords_source::Error>()),
            _ => None,
        },
        _ => None,
    }
}
