//! A query's result as text ([`write_result`]): a table for people, JSON Lines, or CSV, each
//! telling a null from an empty string as DuckDB does.

use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::json;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::arrow::util::pretty::pretty_format_batches_with_options;
use std::io::Write;
use std::sync::Arc;

/// How [`write_result`] writes a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResultFormat {
    /// A text table (arrow's pretty printer) with a header; a null is `NULL`, an empty string
    /// an empty cell, as DuckDB's and datafusion-cli's tables show them.
    #[default]
    Table,
    /// JSON Lines: one object per row, a null as `null`.
    Json,
    /// CSV with a header line. A null is an empty field and an empty string `""`, the
    /// convention of DuckDB's `COPY ... TO` (a value that reads as its null string is quoted)
    /// and PostgreSQL's `COPY ... CSV`; other fields are quoted only when they hold a comma, a
    /// quote (doubled) or a line break.
    Csv,
}

/// Why a result of `schema` cannot be written as CSV: the first column that is a list or a
/// struct, which a CSV field cannot hold; `None` when it can be.
pub fn csv_refusal(schema: &Schema) -> Option<String> {
    let f = schema.fields().iter().find(|f| f.data_type().is_nested())?;
    Some(format!(
        "column {} is a {}, which CSV cannot hold; select other columns (or its parts), or use \
         --format json or --output FILE.parquet",
        f.name(),
        f.data_type()
    ))
}

/// Writes the result `batches` of `schema` in `format` into `out`. A result without rows
/// still has its header (table, CSV); a result without columns, such as the empty one of
/// `CREATE VIEW` or `CREATE TABLE AS`, writes nothing in any format (arrow's table printer
/// drew `++` for it). Formats each value once; the table is built whole in memory first.
///
/// # Errors
///
/// `out` cannot be written ([`ArrowError::IoError`]), or a value cannot be formatted (a list
/// or struct column in CSV: check with [`csv_refusal`] before anything is written).
pub fn write_result(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    format: ResultFormat,
    out: &mut dyn Write,
) -> Result<(), ArrowError> {
    if schema.fields().is_empty() {
        return Ok(());
    }
    // The header comes from a batch: an empty result writes that of an empty one.
    let empty = [RecordBatch::new_empty(Arc::clone(schema))];
    let batches = match batches.is_empty() {
        true => &empty[..],
        false => batches,
    };
    match format {
        ResultFormat::Table => {
            let options = FormatOptions::default()
                .with_display_error(true)
                .with_null("NULL");
            let table = pretty_format_batches_with_options(batches, &options)?;
            writeln!(out, "{table}").map_err(io)
        }
        ResultFormat::Json => {
            // Null columns are written as null (arrow-json leaves them out by default).
            let mut w = json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, json::writer::LineDelimited>(out);
            for b in batches {
                w.write(b)?;
            }
            w.finish()
        }
        ResultFormat::Csv => write_csv(schema, batches, out),
    }
}

/// The CSV of [`ResultFormat::Csv`], header first.
fn write_csv(
    schema: &Schema,
    batches: &[RecordBatch],
    out: &mut dyn Write,
) -> Result<(), ArrowError> {
    let mut line = String::new();
    for (i, f) in schema.fields().iter().enumerate() {
        push_field(&mut line, i, Some(f.name()));
    }
    line.push('\n');
    out.write_all(line.as_bytes()).map_err(io)?;
    // arrow-csv's writer's value formats (dates and times in RFC 3339, binary in hex).
    let options = FormatOptions::default();
    let mut value = String::new();
    for b in batches {
        // Logical nulls: a column of type Null (`SELECT NULL`) stores none and is all nulls.
        let columns = b
            .columns()
            .iter()
            .map(|a| ArrayFormatter::try_new(a.as_ref(), &options).map(|f| (a.logical_nulls(), f)))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..b.num_rows() {
            line.clear();
            for (i, (nulls, formatter)) in columns.iter().enumerate() {
                if nulls.as_ref().is_some_and(|n| n.is_null(row)) {
                    push_field(&mut line, i, None);
                    continue;
                }
                value.clear();
                formatter
                    .value(row)
                    .write(&mut value)
                    .map_err(|e| ArrowError::CsvError(format!("row {row}, column {i}: {e}")))?;
                push_field(&mut line, i, Some(&value));
            }
            line.push('\n');
            out.write_all(line.as_bytes()).map_err(io)?;
        }
    }
    out.flush().map_err(io)
}

/// Appends field `i` of a CSV line: `None` (a null) as nothing, a value quoted when it is
/// empty (to tell it from a null) or holds a comma, a quote or a line break.
fn push_field(line: &mut String, i: usize, value: Option<&str>) {
    if i > 0 {
        line.push(',');
    }
    let Some(v) = value else {
        return;
    };
    if !v.is_empty() && !v.contains([',', '"', '\n', '\r']) {
        line.push_str(v);
        return;
    }
    line.push('"');
    line.push_str(&v.replace('"', "\"\""));
    line.push('"');
}

/// An I/O error writing the result, as arrow's (its message says what was being done; the
/// error is its cause).
fn io(e: std::io::Error) -> ArrowError {
    ArrowError::IoError("cannot write the result".into(), e)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, BinaryArray, Int64Array, StringArray};

    fn batch() -> RecordBatch {
        let offsets: ArrayRef = Arc::new(Int64Array::from(vec![0, 1, 2, 3]));
        let keys: ArrayRef = Arc::new(StringArray::from(vec![
            Some(""),
            None,
            Some("a,\"b\""),
            Some("k"),
        ]));
        let values: ArrayRef = Arc::new(BinaryArray::from(vec![
            Some(&b""[..]),
            None,
            Some(b"\x01"),
            None,
        ]));
        RecordBatch::try_from_iter([("offset", offsets), ("key", keys), ("value", values)]).unwrap()
    }

    fn written(format: ResultFormat, batches: &[RecordBatch], schema: &SchemaRef) -> String {
        let mut out = Vec::new();
        write_result(schema, batches, format, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// `krec sql --format csv` wrote a null key or value exactly as an empty one (`0,,`).
    #[test]
    fn csv_tells_an_empty_string_from_a_null() {
        let b = batch();
        let csv = written(ResultFormat::Csv, std::slice::from_ref(&b), &b.schema());
        assert_eq!(
            csv,
            "offset,key,value\n0,\"\",\"\"\n1,,\n2,\"a,\"\"b\"\"\",01\n3,k,\n"
        );
        // An empty result keeps its header.
        assert_eq!(
            written(ResultFormat::Csv, &[], &b.schema()),
            "offset,key,value\n"
        );
    }

    /// A column of type Null (`SELECT NULL AS x`) stores no null bits: it was written as `""`.
    #[test]
    fn csv_writes_a_null_typed_column_as_nulls() {
        use datafusion::arrow::array::NullArray;
        use datafusion::arrow::datatypes::{DataType, Field};
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Null, true)]));
        let b =
            RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(NullArray::new(2))]).unwrap();
        let csv = written(ResultFormat::Csv, &[b], &schema);
        assert_eq!(csv, "x\n\n\n");
    }

    /// The text table showed a null as an empty cell, like an empty string.
    #[test]
    fn the_table_shows_null_as_null() {
        let b = batch();
        let table = written(ResultFormat::Table, std::slice::from_ref(&b), &b.schema());
        assert!(table.contains("| 0      |       |       |"), "{table}");
        assert!(table.contains("| 1      | NULL  | NULL  |"), "{table}");
        let empty = written(ResultFormat::Table, &[], &b.schema());
        assert!(empty.contains("| offset | key | value |"), "{empty}");
    }

    /// A statement that returns no columns (`CREATE TABLE AS`) printed `++`.
    #[test]
    fn a_result_without_columns_writes_nothing() {
        let schema = Arc::new(Schema::empty());
        for format in [ResultFormat::Table, ResultFormat::Json, ResultFormat::Csv] {
            assert_eq!(written(format, &[], &schema), "", "{format:?}");
        }
    }

    #[test]
    fn json_lines_write_nulls() {
        let b = batch();
        let json = written(ResultFormat::Json, std::slice::from_ref(&b), &b.schema());
        let second = json.lines().nth(1).unwrap();
        assert_eq!(second, "{\"offset\":1,\"key\":null,\"value\":null}");
    }
}
