//! A query's result as text ([`write_result`]): a table for people, JSON Lines, or CSV, each
//! telling a null from an empty string as DuckDB does, and each writing a date or time that
//! cannot be shown as one (a timestamp of `i64::MAX` ms) as its raw integer.

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
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

/// What to tell the user when [`write_result`] wrote `raw` values as their raw integer (none
/// when `raw` is 0).
pub fn raw_values_note(raw: u64) -> Option<String> {
    (raw > 0).then(|| {
        format!(
            "{raw} date or time value(s) are outside the calendar's range and were written as \
             their raw integer, in the column's unit (epoch milliseconds for a record's timestamp)"
        )
    })
}

/// Writes the result `batches` of `schema` in `format` into `out`. A result without rows
/// still has its header (table, CSV); a result without columns, such as the empty one of
/// `CREATE VIEW` or `CREATE TABLE AS`, writes nothing in any format (arrow's table printer
/// drew `++` for it). Formats each value once (a date or time column's twice: the first
/// pass finds the values below); the table is built whole in memory first.
///
/// A date, time or timestamp that no calendar date can show (a record's timestamp of
/// `i64::MAX` ms, or one before the year -262143) is written as its raw integer, in the
/// column's unit (epoch milliseconds for a source's `timestamp`), in every format: as the
/// cell of the table, a JSON string as the column's other values are, a CSV field. Such a
/// value used to abort CSV after its header and earlier rows, and to be written as `ERROR:
/// Cast error: ...` text in the table and in JSON. Returns how many values were written so,
/// for the caller to say.
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
) -> Result<u64, ArrowError> {
    if schema.fields().is_empty() {
        return Ok(0);
    }
    let mut raw = 0u64;
    let shown = batches
        .iter()
        .map(|b| showable(b, &mut raw))
        .collect::<Result<Vec<_>, _>>()?;
    let batches = &shown[..];
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
            writeln!(out, "{table}").map_err(io)?;
        }
        ResultFormat::Json => {
            // Null columns are written as null (arrow-json leaves them out by default).
            let mut w = json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, json::writer::LineDelimited>(out);
            for b in batches {
                w.write(b)?;
            }
            w.finish()?;
        }
        ResultFormat::Csv => write_csv(schema, batches, out)?,
    }
    Ok(raw)
}

/// `batch` with each date, time or timestamp column that holds a value no calendar can show
/// replaced by a string column: the other values as arrow's formatter writes them (the text
/// every format writes for them), those as their raw integer, counted in `raw`. A batch
/// without such a value is returned as it is.
fn showable(batch: &RecordBatch, raw: &mut u64) -> Result<RecordBatch, ArrowError> {
    let options = FormatOptions::default();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
    let mut fields: Vec<Field> = Vec::with_capacity(batch.num_columns());
    let mut changed = false;
    let mut value = String::new();
    for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
        let unshowable = |row: usize, f: &ArrayFormatter<'_>, value: &mut String| {
            value.clear();
            array.is_valid(row) && f.value(row).write(value).is_err()
        };
        let formatter = match array.data_type().is_temporal() {
            true => Some(ArrayFormatter::try_new(array.as_ref(), &options)?),
            false => None,
        };
        let Some(formatter) =
            formatter.filter(|f| (0..array.len()).any(|row| unshowable(row, f, &mut value)))
        else {
            columns.push(Arc::clone(array));
            fields.push(field.as_ref().clone());
            continue;
        };
        // The raw integers: the unit's count (epoch milliseconds for a timestamp(ms)).
        let integers = cast(array, &DataType::Int64)?;
        let integers = ArrayFormatter::try_new(integers.as_ref(), &options)?;
        let mut text = StringBuilder::with_capacity(array.len(), array.len() * 24);
        for row in 0..array.len() {
            if array.is_null(row) {
                text.append_null();
            } else if unshowable(row, &formatter, &mut value) {
                *raw += 1;
                value.clear();
                integers
                    .value(row)
                    .write(&mut value)
                    .map_err(|e| ArrowError::CastError(e.to_string()))?;
                text.append_value(&value);
            } else {
                text.append_value(&value);
            }
        }
        columns.push(Arc::new(text.finish()));
        fields.push(field.as_ref().clone().with_data_type(DataType::Utf8));
        changed = true;
    }
    if !changed {
        return Ok(batch.clone());
    }
    let schema = Schema::new_with_metadata(fields, batch.schema().metadata().clone());
    RecordBatch::try_new(Arc::new(schema), columns)
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
    // Rows counted from 1 over the whole result, for messages.
    let mut before = 0usize;
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
                formatter.value(row).write(&mut value).map_err(|e| {
                    let name = schema.fields().get(i).map_or("?", |f| f.name().as_str());
                    ArrowError::CsvError(format!(
                        "row {} of the result, column {name}: {e}",
                        before + row + 1
                    ))
                })?;
                push_field(&mut line, i, Some(&value));
            }
            line.push('\n');
            out.write_all(line.as_bytes()).map_err(io)?;
        }
        before += b.num_rows();
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

    /// A timestamp no calendar date can show (`i64::MAX` ms, far negative): CSV stopped after
    /// the header and earlier rows ("row 0, column 1", batch-relative), the table and JSON
    /// wrote `ERROR: Cast error: ...` text. Every format writes its epoch milliseconds now.
    #[test]
    fn an_unshowable_timestamp_is_written_as_its_epoch_milliseconds() {
        use datafusion::arrow::array::TimestampMillisecondArray;
        let ts = |v: Vec<Option<i64>>| -> ArrayRef {
            Arc::new(TimestampMillisecondArray::from(v).with_timezone("+00:00"))
        };
        let offsets = |v: Vec<i64>| -> ArrayRef { Arc::new(Int64Array::from(v)) };
        let first = RecordBatch::try_from_iter([
            ("offset", offsets(vec![0, 1])),
            ("timestamp", ts(vec![Some(1_714_000_000_000), None])),
        ])
        .unwrap();
        let second = RecordBatch::try_from_iter([
            ("offset", offsets(vec![2, 3, 4])),
            (
                "timestamp",
                ts(vec![Some(i64::MAX), Some(0), Some(-9_000_000_000_000_000)]),
            ),
        ])
        .unwrap();
        let schema = first.schema();
        let batches = [first, second];
        let mut out = Vec::new();
        let raw = write_result(&schema, &batches, ResultFormat::Csv, &mut out).unwrap();
        assert_eq!(raw, 2);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "offset,timestamp\n0,2024-04-24T23:06:40Z\n1,\n2,9223372036854775807\n\
             3,1970-01-01T00:00:00Z\n4,-9000000000000000\n"
        );
        let json = written(ResultFormat::Json, &batches, &schema);
        let lines: Vec<&str> = json.lines().collect();
        assert_eq!(
            lines,
            [
                "{\"offset\":0,\"timestamp\":\"2024-04-24T23:06:40Z\"}",
                "{\"offset\":1,\"timestamp\":null}",
                "{\"offset\":2,\"timestamp\":\"9223372036854775807\"}",
                "{\"offset\":3,\"timestamp\":\"1970-01-01T00:00:00Z\"}",
                "{\"offset\":4,\"timestamp\":\"-9000000000000000\"}",
            ]
        );
        let table = written(ResultFormat::Table, &batches, &schema);
        assert!(!table.contains("ERROR"), "{table}");
        assert!(
            table.contains("| 2      | 9223372036854775807  |"),
            "{table}"
        );
        assert!(
            table.contains("| 4      | -9000000000000000    |"),
            "{table}"
        );
        assert!(
            table.contains("| 0      | 2024-04-24T23:06:40Z |"),
            "{table}"
        );
    }

    #[test]
    fn json_lines_write_nulls() {
        let b = batch();
        let json = written(ResultFormat::Json, std::slice::from_ref(&b), &b.schema());
        let second = json.lines().nth(1).unwrap();
        assert_eq!(second, "{\"offset\":1,\"key\":null,\"value\":null}");
    }
}
