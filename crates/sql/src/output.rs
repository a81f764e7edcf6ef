//! What a query may write: nothing through SQL ([`query`] refuses the statements that write),
//! and its result only into a file that is none of its sources ([`check_output`]), written
//! whole or not at all ([`write_parquet`]), its failures naming that file ([`WriteError`]).

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::context::SQLOptions;
use datafusion::logical_expr::{LogicalPlan, WriteOp};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::file::properties::WriterPropertiesBuilder;
use datafusion::prelude::{DataFrame, SessionContext};
use futures::StreamExt;
use krecords_source::log::convert::{remove_leftovers, temporary_path, InsideSource};
use krecords_source::write_error;
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// A statement [`query`] refuses: it would write (`INSERT`, `UPDATE`, `DELETE`, `TRUNCATE`,
/// `COPY ... TO`), and a query over krec sources only reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteRefused {
    /// What it is: `INSERT`, `UPDATE`, `DELETE`, `TRUNCATE`, `CREATE TABLE AS` or `COPY`.
    pub statement: String,
}

impl fmt::Display for WriteRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} writes, and a query here only reads (statements that write are refused)",
            self.statement
        )
    }
}

impl std::error::Error for WriteRefused {}

/// The [`WriteRefused`] inside a DataFusion error, when [`query`] refused a statement.
pub fn write_refused(e: &DataFusionError) -> Option<&WriteRefused> {
    match e {
        DataFusionError::External(inner) => inner.downcast_ref::<WriteRefused>(),
        DataFusionError::Context(_, inner) => write_refused(inner),
        _ => None,
    }
}

/// The options [`query`] plans with: no DML (`INSERT`, `UPDATE`, `DELETE`, `TRUNCATE`) and no
/// `COPY ... TO`, which write files, tables' data among them. DDL (`CREATE VIEW`, `CREATE
/// EXTERNAL TABLE`, `CREATE TABLE AS`, `DROP`) and statements (`SET`) are allowed: they change
/// only the session's in-memory catalog and settings and write no file.
pub fn read_only() -> SQLOptions {
    SQLOptions::new().with_allow_dml(false)
}

/// Plans `sql` in `ctx` as [`SessionContext::sql`] does, refusing the statements that write
/// ([`read_only`]).
///
/// # Errors
///
/// [`DataFusionError::External`] holding a [`WriteRefused`] ([`write_refused`]) for a
/// statement that writes; DataFusion's errors otherwise.
pub async fn query(ctx: &SessionContext, sql: &str) -> Result<DataFrame> {
    let plan = ctx.state().create_logical_plan(sql).await?;
    if let Some(statement) = writes(&plan)? {
        return Err(DataFusionError::External(Box::new(WriteRefused {
            statement,
        })));
    }
    // DataFusion's own check of the same rule, should a writing plan be missed above.
    read_only().verify_plan(&plan)?;
    ctx.execute_logical_plan(plan).await
}

/// The first statement of `plan` (or of a plan inside it: EXPLAIN ANALYZE, subqueries) that
/// writes.
fn writes(plan: &LogicalPlan) -> Result<Option<String>> {
    let mut found = None;
    plan.apply_with_subqueries(|p| {
        let name = match p {
            LogicalPlan::Copy(_) => "COPY",
            LogicalPlan::Dml(d) => match d.op {
                WriteOp::Insert(_) => "INSERT",
                WriteOp::Delete => "DELETE",
                WriteOp::Update => "UPDATE",
                WriteOp::Ctas => "CREATE TABLE AS",
                WriteOp::Truncate => "TRUNCATE",
            },
            _ => return Ok(TreeNodeRecursion::Continue),
        };
        found = Some(name.to_string());
        Ok(TreeNodeRecursion::Stop)
    })?;
    Ok(found)
}

/// An output file [`check_output`] refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputError {
    /// It is a directory (the result is one file).
    Directory(PathBuf),
    /// The directory it would be in does not exist (none is created).
    NoParent {
        /// The output, as given.
        output: PathBuf,
        /// Its directory.
        parent: PathBuf,
    },
    /// It is a source directory (a partition directory, a `log.dirs` root, a dataset) or
    /// inside one: the words of `krec export`, `convert` and `salvage`.
    InsideSource(InsideSource),
    /// It is a source file (a segment, a `.parquet` file), links resolved.
    SourceFile {
        /// The output, as given.
        output: PathBuf,
        /// The source, as given.
        source: PathBuf,
    },
    /// Its directory holds a Kafka log's files (a partition directory's segments, a
    /// `log.dirs` root's `meta.properties`), a source of this query or not: a broker or a
    /// later read would take the file for its own.
    KafkaDirectory {
        /// The output, as given.
        output: PathBuf,
        /// The Kafka file that says so.
        evidence: PathBuf,
    },
    /// It exists and is not a Parquet file (nor empty): only a Parquet file, an earlier
    /// result, is replaced.
    NotParquet(PathBuf),
    /// It exists and is not a regular file (a device, a FIFO), or cannot be read to tell.
    NotAFile(PathBuf, String),
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputError::Directory(o) => write!(
                f,
                "the output {} is a directory; the result is one Parquet file: name it (e.g. {})",
                o.display(),
                o.join("result.parquet").display()
            ),
            OutputError::NoParent { output, parent } => write!(
                f,
                "the output {}: the directory {} does not exist (it is not created: create it, \
                 or write the output into an existing directory)",
                output.display(),
                parent.display()
            ),
            OutputError::InsideSource(e) => write!(f, "{e}"),
            OutputError::SourceFile { output, source } => write!(
                f,
                "the output {} is the source file {}: writing it would destroy the data read; \
                 write the output into another file",
                output.display(),
                source.display()
            ),
            OutputError::KafkaDirectory { output, evidence } => write!(
                f,
                "the output {} is in a Kafka log's directory ({} is there): a broker or a \
                 later read would take it for its own; write the output outside it",
                output.display(),
                evidence.display()
            ),
            OutputError::NotParquet(o) => write!(
                f,
                "the output {} exists and is not a Parquet file: only an earlier result is \
                 replaced; remove it first or name another file",
                o.display()
            ),
            OutputError::NotAFile(o, why) => write!(
                f,
                "the output {} {why}: the result is written into a new file and renamed over \
                 it; name a file",
                o.display()
            ),
        }
    }
}

impl std::error::Error for OutputError {}

/// The paths a `NAME=SOURCE` table argument reads ([`register`](crate::register)'s rule): an
/// exported dataset directory or one `.parquet`/`.arrow` file as it is, anything else the
/// comma-separated list of sources, where the commas of a `kafka://` URL's list of bootstrap
/// servers (before its topic) stay in the URL.
///
/// ```
/// use krecords_sql::table_paths;
/// use std::path::PathBuf;
///
/// let paths = table_paths("kafka://h1:9092,h2:9092/t,data/t-0,kafka://h3/u");
/// let want: Vec<PathBuf> = ["kafka://h1:9092,h2:9092/t", "data/t-0", "kafka://h3/u"]
///     .iter()
///     .map(PathBuf::from)
///     .collect();
/// assert_eq!(paths, want);
/// ```
pub fn table_paths(source: &str) -> Vec<PathBuf> {
    let path = Path::new(source);
    if (path.is_dir() && crate::is_dataset(path)) || crate::is_dataset_file(path) {
        return vec![path.to_path_buf()];
    }
    let mut paths: Vec<String> = Vec::new();
    for piece in source.split(',') {
        // A URL whose servers are not yet followed by its topic goes on with the next server.
        let servers_go_on = paths
            .last()
            .and_then(|last| last.strip_prefix("kafka://"))
            .is_some_and(|servers| !servers.contains('/'))
            && !piece.contains("://");
        match paths.last_mut() {
            Some(last) if servers_go_on => {
                last.push(',');
                last.push_str(piece);
            }
            _ => paths.push(piece.to_owned()),
        }
    }
    paths.into_iter().map(PathBuf::from).collect()
}

/// Refuses writing a query's result into `output` when it would destroy or add to the data the
/// query reads, or needs more than a file: `output` is a directory, its directory does not
/// exist, it is one of `sources` (the paths of the tables, [`table_paths`]; glob patterns
/// expanded; links resolved) or inside one of their directories (a partition directory, a
/// `log.dirs` root, a dataset: [`InsideSource`], the rule of `krec export`, `convert` and
/// `salvage`; for a source file, the partition directory of a segment and the dataset of one
/// of its files count too), or in any directory holding a Kafka log's files, a source or not
/// (segments, `meta.properties`). An existing file may be replaced ([`write_parquet`]) only
/// when it is a Parquet file (an earlier result) or empty.
///
/// # Errors
///
/// The [`OutputError`] that says why.
pub fn check_output(output: &Path, sources: &[PathBuf]) -> Result<(), OutputError> {
    if output.is_dir() {
        return Err(OutputError::Directory(output.to_path_buf()));
    }
    let parent = match output.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => return Err(OutputError::Directory(output.to_path_buf())),
    };
    if !parent.is_dir() {
        return Err(OutputError::NoParent {
            output: output.to_path_buf(),
            parent: parent.to_path_buf(),
        });
    }
    // Each pattern with its matches (a pattern matching nothing fails later, when opened).
    let mut all: Vec<PathBuf> = sources.to_vec();
    for s in sources {
        if let Ok(matches) = krecords_source::expand_globs(std::slice::from_ref(s)) {
            all.extend(matches.into_iter().filter(|m| m != s));
        }
    }
    if let Ok(out) = output.canonicalize() {
        for s in &all {
            if s.is_file() && s.canonicalize().is_ok_and(|s| s == out) {
                return Err(OutputError::SourceFile {
                    output: output.to_path_buf(),
                    source: s.clone(),
                });
            }
        }
    }
    // A file of a dataset or a segment file read alone: the directory that holds it is a
    // source too (a result written there would join the dataset or the partition).
    let holders: Vec<PathBuf> = all.iter().filter_map(|s| holder(s)).collect();
    all.extend(holders);
    InsideSource::check(output, &all).map_err(OutputError::InsideSource)?;
    if let Some(evidence) = kafka_file_in(parent) {
        return Err(OutputError::KafkaDirectory {
            output: output.to_path_buf(),
            evidence,
        });
    }
    replaceable(output)
}

/// A file in `dir` that makes it a Kafka log's directory: a segment of a partition directory
/// (named by its base offset: 20 digits and `.log`; an `app.log` is not one), or a `log.dirs`
/// root's `meta.properties`.
fn kafka_file_in(dir: &Path) -> Option<PathBuf> {
    let meta = dir.join(krecords_source::log::data_dir::META_PROPERTIES);
    if meta.is_file() {
        return Some(meta);
    }
    krecords_source::dir_logs(dir)
        .ok()?
        .into_iter()
        .find(|f| krecords_source::log::check::segment_base(f).is_some())
}

/// Whether the file at `output` may be replaced: it does not exist, or is a regular file that
/// is empty or a Parquet file (it starts with Parquet's magic `PAR1`).
fn replaceable(output: &Path) -> Result<(), OutputError> {
    use std::io::Read;
    let not_a_file = |why: String| Err(OutputError::NotAFile(output.to_path_buf(), why));
    match std::fs::metadata(output) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return not_a_file(format!("cannot be looked at ({e})")),
        Ok(m) if !m.is_file() => return not_a_file("is not a regular file".into()),
        Ok(m) if m.len() == 0 => return Ok(()),
        Ok(_) => {}
    }
    let mut magic = Vec::with_capacity(4);
    let read = std::fs::File::open(output).and_then(|f| f.take(4).read_to_end(&mut magic));
    match read {
        Err(e) => not_a_file(format!("cannot be read ({e})")),
        Ok(_) if magic == b"PAR1" => Ok(()),
        Ok(_) => Err(OutputError::NotParquet(output.to_path_buf())),
    }
}

/// The directory a source file belongs to: the dataset that holds a `.parquet`/`.arrow` file
/// in `topic=T/partition=P/`, the partition directory of a segment file.
fn holder(file: &Path) -> Option<PathBuf> {
    if !file.is_file() {
        return None;
    }
    if crate::is_dataset_file(file) {
        // Up through `partition=P` and `topic=T`: the dataset's directory.
        let file = file.canonicalize().ok()?;
        let parent = file.parent()?;
        let mut dir = parent;
        while dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("partition=") || n.starts_with("topic="))
        {
            dir = dir.parent()?;
        }
        return (dir != parent).then(|| dir.to_path_buf());
    }
    krecords_source::partition_of_path(file)
        .and(file.parent())
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
}

/// Why [`write_parquet`] failed: the query, or the output file.
#[derive(Debug)]
pub enum WriteError {
    /// The query failed: its rows could not be computed (a corrupt source among them:
    /// [`source_error`](crate::source_error) finds it).
    Query(DataFusionError),
    /// The output could not be created, written, synced or renamed: an I/O error of the
    /// failure's kind whose message names the output as it was given, never the temporary
    /// file, and says the cause without the writing library's wrapper (`cannot write
    /// out.parquet: No space left on device (os error 28)`).
    Output(std::io::Error),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Query(e) => write!(f, "{e}"),
            WriteError::Output(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::Query(e) => Some(e),
            WriteError::Output(e) => Some(e),
        }
    }
}

impl From<DataFusionError> for WriteError {
    fn from(e: DataFusionError) -> Self {
        WriteError::Query(e)
    }
}

/// Writes the result of `df` into the Parquet file `output` with the session's Parquet
/// settings (`datafusion.execution.parquet.*`), whole or not at all: the rows go into a
/// temporary file next to it (`.NAME.krec-tmp-PID`), which is synced and renamed to `output`
/// once the query has succeeded; when it fails, the temporary file is removed and `output`,
/// if there was one, is left as it was. Temporary files that killed runs left next to
/// `output` are removed first; their paths are returned with the number of rows written.
/// Check the output first ([`check_output`]): no directory is created.
///
/// # Errors
///
/// [`WriteError::Query`] for the query's errors, [`WriteError::Output`] (naming `output`)
/// when the temporary file cannot be created, written, synced or renamed.
pub async fn write_parquet(
    df: DataFrame,
    output: &Path,
) -> std::result::Result<(u64, Vec<PathBuf>), WriteError> {
    let removed = remove_leftovers(&krecords_source::log::storage::FsStorage, output);
    let tmp = temporary_path(output);
    let written = write_into(df, &tmp, output).await.and_then(|rows| {
        std::fs::rename(&tmp, output)
            .map_err(|e| WriteError::Output(write_error("replace", output, &e)))?;
        Ok(rows)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    Ok((written?, removed))
}

/// Writes the result of `df` into the new file `tmp`, synced; errors name `output`.
async fn write_into(
    df: DataFrame,
    tmp: &Path,
    output: &Path,
) -> std::result::Result<u64, WriteError> {
    let failed = |op: &str, e: &(dyn std::error::Error + 'static)| {
        WriteError::Output(write_error(op, output, e))
    };
    // The session's Parquet settings, as DataFusion's own `write_parquet` takes them.
    let config = df.task_ctx().session_config().options().clone();
    let mut table = datafusion::config::TableOptions::default_from_session_config(&config);
    let mut stream = df.execute_stream().await?;
    let schema = stream.schema();
    if !table.parquet.global.skip_arrow_metadata {
        table.parquet.arrow_schema(&schema);
    }
    let properties = WriterPropertiesBuilder::try_from(&table.parquet)?.build();
    // Named with this process's id: one left by a killed run of the same id (krec as PID 1
    // of a container) is stale.
    let file = std::fs::File::create(tmp).map_err(|e| failed("write", &e))?;
    let sink = std::io::BufWriter::with_capacity(1 << 16, file);
    let mut writer =
        ArrowWriter::try_new(sink, schema, Some(properties)).map_err(|e| failed("write", &e))?;
    let mut rows = 0u64;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        rows += batch.num_rows() as u64;
        writer.write(&batch).map_err(|e| failed("write", &e))?;
    }
    let mut sink = writer.into_inner().map_err(|e| failed("write", &e))?;
    sink.flush().map_err(|e| failed("write", &e))?;
    sink.get_ref().sync_all().map_err(|e| failed("sync", &e))?;
    Ok(rows)
}
