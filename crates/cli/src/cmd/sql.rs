//! `krec sql`: SQL over krec sources and exported datasets, on Apache DataFusion
//! (krecords-sql does the work; this parses, runs and prints).

use crate::isolation::isolation_parser;
use crate::kafka::ClientArgs;
use crate::outcome::{Context, Failure, Outcome};
use krecords_codec::txn::IsolationLevel;
use krecords_source::ErrorClass;
use krecords_sql::datafusion::arrow::array::RecordBatch;
use krecords_sql::datafusion::arrow::datatypes::SchemaRef;
use krecords_sql::datafusion::common::DataFusionError;
use krecords_sql::{
    check_output, csv_refusal, new_context, register_with, source_error, table_paths,
    write_parquet, write_refused, write_result, BytesFormat, ResultFormat, ScanCounters,
    TableOptions, WriteError,
};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Run a SQL query over Kafka data (Apache DataFusion).
///
/// Each --table NAME=SOURCE registers a table: SOURCE is anything the other commands read
/// (segment files, partition directories, a log.dirs root, kafka://HOST:PORT/TOPIC[/PARTITION];
/// several separated by commas), an exported dataset directory (DIR/topic=T/partition=P/
/// *.parquet or *.arrow), or one .parquet or .arrow file (its own columns: one file of a
/// dataset, or an earlier --output). A source table has one row per record with the columns
///   topic, partition, offset, timestamp (timestamp(ms, UTC)), timestamp_type, key, value,
///   headers (list of {key, value}), producer_id, producer_epoch, sequence, is_transactional,
///   batch_offset, magic, compression
/// (the source repository's docs/design.md, "Records as Arrow"); offset is an SQL keyword,
/// write it "offset". Only the columns the query
/// uses are built, and filters on partition, offset and timestamp are pushed down: excluded partitions
/// are not read, an offset range or a lower time bound starts (and an offset range ends) the
/// read where it says, through the offset and time indexes or ListOffsets.
///
/// JSON functions over string values: json_get_str(value, 'user'), json_get_int,
/// json_get_float, json_get_bool, json_get_json, json_length, json_contains, json_as_text,
/// and the -> and ->> operators (with --value-format string).
///
/// Examples:
///   krec sql "SELECT key, count(*) FROM t GROUP BY key ORDER BY 2 DESC LIMIT 10" \
///       --table t=/var/lib/kafka/data/events-0 --key-format string
///   krec sql "SELECT date_trunc('hour', timestamp) h, count(*) FROM t GROUP BY h ORDER BY h" \
///       --table t=kafka://localhost:9092/events
///
/// DataFusion's settings come from its DATAFUSION_* environment variables, as in
/// datafusion-cli (DATAFUSION_EXECUTION_TARGET_PARTITIONS=4 sets
/// datafusion.execution.target_partitions; SELECT * FROM information_schema.df_settings lists
/// them).
///
/// krec sql only reads: statements that write (INSERT, UPDATE, DELETE, TRUNCATE, COPY ... TO)
/// are refused (exit 2); --output FILE.parquet writes a result. CREATE VIEW, CREATE EXTERNAL
/// TABLE, CREATE TABLE AS, DROP and SET change only this run's in-memory session (no file).
///
/// A query DataFusion refuses, or a DATAFUSION_* value a setting cannot take, is a usage error
/// (exit 2) with its message; a corrupt source is a data error (exit 1).
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment, after_long_help = crate::kafka::REMOTE_HELP)]
pub struct Args {
    /// The SQL query.
    #[arg(value_name = "QUERY")]
    query: String,
    /// A table: NAME=SOURCE[,SOURCE...]; repeatable.
    #[arg(
        long = "table",
        short = 't',
        value_name = "NAME=SOURCE",
        required = true
    )]
    tables: Vec<String>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value = "table")]
    format: OutputFormat,
    /// Write the result to this Parquet file instead of stdout: written under a temporary
    /// name next to it and renamed when complete (a failed query leaves no file, and an
    /// existing one as it was). An existing Parquet file is replaced, unless it is one of the
    /// tables' sources or inside one of their directories or of any Kafka log (refused, as in
    /// krec export); its directory must exist.
    #[arg(long, short = 'o', value_name = "FILE.parquet")]
    output: Option<PathBuf>,
    /// Which records the source tables hold (an exported dataset holds what its export's
    /// isolation kept, said on stderr when that is another).
    #[arg(long, value_name = "LEVEL",
          value_parser = isolation_parser([
              (IsolationLevel::ReadCommitted, "what a consumer sees: aborted records and open transactions left out (default)"),
              (IsolationLevel::ReadUncommitted, "every record the log holds"),
          ]))]
    isolation: Option<IsolationLevel>,
    /// The type of the key column: binary, or string (UTF-8; other bytes are null, counted on stderr).
    #[arg(long, value_name = "FORMAT", default_value = "binary", value_parser = ["binary", "string"])]
    key_format: String,
    /// The type of the value column: binary, or string (UTF-8; other bytes are null, counted on stderr).
    #[arg(long, value_name = "FORMAT", default_value = "binary", value_parser = ["binary", "string"])]
    value_format: String,
    #[command(flatten)]
    client: ClientArgs,
}

/// `--format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum OutputFormat {
    /// A text table (a null is NULL, an empty string an empty cell).
    Table,
    /// JSON Lines: one object per row.
    Json,
    /// CSV with a header line (as DuckDB's: a null is an empty field, an empty string "").
    Csv,
}

/// Runs the command.
pub fn run(args: Args, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let format = |s: &str| BytesFormat::from_name(s).unwrap_or_default();
    let options = TableOptions {
        isolation: args.isolation.unwrap_or(IsolationLevel::ReadCommitted),
        key_format: format(&args.key_format),
        value_format: format(&args.value_format),
        ..TableOptions::default()
    };
    let mut tables = Vec::new();
    for t in &args.tables {
        let (name, source) = t
            .split_once('=')
            .filter(|(n, s)| !n.is_empty() && !s.is_empty())
            .ok_or_else(|| {
                Failure::Usage(format!(
                    "--table {t}: expected NAME=SOURCE, e.g. t=events-0"
                ))
            })?;
        tables.push((name.to_string(), source.to_string()));
    }
    // Not into what the query reads, and no directory created: refused before anything is read.
    let sources: Vec<PathBuf> = tables.iter().flat_map(|(_, s)| table_paths(s)).collect();
    args.client.warn_unused(&sources);
    if let Some(output) = &args.output {
        check_output(output, &sources).map_err(|e| Failure::Usage(e.to_string()))?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context(|| "cannot start the query runtime".into())?;
    let client = args.client.clone();
    let remote = args.client.remote_options()?;
    let mut config = || Ok(client.config()?);
    type Collected = (SchemaRef, Vec<RecordBatch>, Vec<Arc<ScanCounters>>);
    let result: Result<Collected, Failure> = rt.block_on(async {
        let ctx = new_context().map_err(|e| failure(&e, ErrorClass::Usage))?;
        let mut counters = Vec::new();
        for (name, source) in &tables {
            let c = register_with(&ctx, name, source, options, &mut config, remote.clone())
                .await
                .map_err(|e| named(&format!("--table {name}={source}"), &e))?;
            if let Some(n) = c.isolation_note(name, options.isolation, args.isolation.is_some()) {
                eprintln!("krec sql: {n}");
            }
            counters.push(c);
        }
        let df = krecords_sql::query(&ctx, &args.query).await.map_err(|e| {
            if let Some(w) = write_refused(&e) {
                return Failure::Usage(format!(
                    "krec sql only reads: {} writes (INSERT, UPDATE, DELETE, TRUNCATE and COPY \
                     are refused); to write a result, use --output FILE.parquet",
                    w.statement
                ));
            }
            match failure(&e, ErrorClass::Usage) {
                // DataFusion names the table it lacks by its full path; say which there are.
                Failure::Usage(m) if m.contains("table '") && m.ends_with("not found") => {
                    let names: Vec<&str> = tables.iter().map(|(n, _)| n.as_str()).collect();
                    Failure::Usage(format!("{m} (the tables are: {})", names.join(", ")))
                }
                Failure::Usage(m) if m.contains("ParserError") && unquoted_offset(&args.query) => {
                    Failure::Usage(format!(
                        "{m} (offset is an SQL keyword: name the column \"offset\", in double \
                         quotes)"
                    ))
                }
                f => f,
            }
        })?;
        let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
        // Refused before anything is written: a CSV header followed by an error is no result.
        if let (OutputFormat::Csv, None, Some(why)) =
            (args.format, &args.output, csv_refusal(&schema))
        {
            return Err(Failure::Usage(format!("--format csv: {why}")));
        }
        let batches = match &args.output {
            Some(path) => {
                let (_, removed) = write_parquet(df, path).await.map_err(|e| match e {
                    WriteError::Query(e) => failure(&e, ErrorClass::Usage),
                    // Its message names the output and says the cause.
                    WriteError::Output(e) => Failure::Io(e, String::new()),
                })?;
                crate::cmd::convert::say_removed(&removed);
                Vec::new()
            }
            None => df
                .collect()
                .await
                .map_err(|e| failure(&e, ErrorClass::Usage))?,
        };
        Ok((schema, batches, counters))
    });
    let (schema, batches, counters) = result?;
    for c in &counters {
        for n in c.notes() {
            eprintln!("krec sql: {n}");
        }
        for (column, n) in c.invalid() {
            eprintln!("krec sql: {n} {column} value(s) were not UTF-8 and are null");
        }
    }
    if args.output.is_some() {
        return Ok(Outcome::Ok);
    }
    print(&schema, &batches, args.format, out)?;
    Ok(Outcome::Ok)
}

/// Whether `query` has the word `offset` outside double quotes (and not inside a longer word):
/// the column of that name, which SQL's parser reads as the OFFSET keyword in most places.
fn unquoted_offset(query: &str) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let bytes = query.as_bytes();
    let mut quoted = false;
    for (i, &c) in bytes.iter().enumerate() {
        if c == b'"' {
            quoted = !quoted;
        } else if !quoted
            && bytes.len() - i >= 6
            && bytes[i..i + 6].eq_ignore_ascii_case(b"offset")
            && (i == 0 || !word(bytes[i - 1]))
            && bytes.get(i + 6).is_none_or(|&n| !word(n))
        {
            return true;
        }
    }
    false
}

/// Prints the result (of `schema`: an empty result still has its header; one without
/// columns, of a statement such as CREATE VIEW, nothing).
fn print(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    format: OutputFormat,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let format = match format {
        OutputFormat::Table => ResultFormat::Table,
        OutputFormat::Json => ResultFormat::Json,
        OutputFormat::Csv => ResultFormat::Csv,
    };
    let raw = write_result(schema, batches, format, out).map_err(|e| match e {
        krecords_sql::datafusion::arrow::error::ArrowError::IoError(m, e) => Failure::Io(e, m),
        e => Failure::Usage(e.to_string()),
    })?;
    if let Some(note) = krecords_sql::raw_values_note(raw) {
        eprintln!("krec sql: {note}");
    }
    Ok(())
}

/// A DataFusion error as a failure: a source's own error keeps its class (a corrupt segment is
/// a data error), anything else is `class`.
fn failure(e: &DataFusionError, class: ErrorClass) -> Failure {
    let class = source_error(e).map_or(class, krecords_source::Error::class);
    let message = match source_error(e) {
        Some(s) => s.to_string(),
        None => e.to_string(),
    };
    match class {
        ErrorClass::Data => Failure::Data(message),
        ErrorClass::Usage | ErrorClass::Io => Failure::Usage(message),
    }
}

/// [`failure`] with what was being done.
fn named(what: &str, e: &DataFusionError) -> Failure {
    match failure(e, ErrorClass::Usage) {
        Failure::Data(m) => Failure::Data(format!("{what}: {m}")),
        Failure::Usage(m) => Failure::Usage(format!("{what}: {m}")),
        f => f,
    }
}
