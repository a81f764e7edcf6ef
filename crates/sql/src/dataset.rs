//! Exported datasets (`DIR/topic=T/partition=P/<first>-<last>.parquet` or `.arrow`, as
//! `krec export` writes them) as DataFusion listing tables.

use crate::{BytesFormat, Dataset, ScanCounters, TableOptions};
use datafusion::arrow::array::{Array, ArrayRef, BinaryArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{plan_err, Column, DataFusionError, Result};
use datafusion::datasource::file_format::options::{ArrowReadOptions, ParquetReadOptions};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::parquet::file::metadata::ParquetMetaDataReader;
use datafusion::prelude::{DataFrame, SessionContext};
use krecords_arrow::ISOLATION_KEY;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How deep below a dataset directory its files are looked for (`topic=T/partition=P/FILE`
/// is 3; a few more for datasets other tools laid out).
const MAX_DEPTH: usize = 6;

/// The file format of a dataset: which of its extensions its files have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileFormat {
    /// `.parquet` files.
    Parquet,
    /// `.arrow` (Arrow IPC file) files.
    Arrow,
}

/// Whether `path` is an exported dataset: a directory holding `topic=...` or `partition=...`
/// directories or `.parquet` or `.arrow` files (rather than segments or partition directories).
pub fn is_dataset(path: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(path) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name.starts_with("topic=")
            || name.starts_with("partition=")
            || name.ends_with(".parquet")
            || name.ends_with(".arrow")
    })
}

/// Whether `path` is one `.parquet` or `.arrow` file (one file of an exported dataset, or a
/// `krec sql --output` result), read as a dataset of that one file.
pub fn is_dataset_file(path: &Path) -> bool {
    path.is_file()
        && path
            .extension()
            .is_some_and(|e| e == "parquet" || e == "arrow")
}

/// The `.parquet` and `.arrow` files below `dir` (hidden names, such as an export's temporary
/// files, left out).
fn list_files(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() && depth < MAX_DEPTH {
            list_files(&entry.path(), depth + 1, files)?;
        } else if name.ends_with(".parquet") || name.ends_with(".arrow") {
            files.push(entry.path());
        }
    }
    Ok(())
}

/// The files of the dataset `dir` (or `dir` itself, one file) and their format.
///
/// # Errors
///
/// `dir` cannot be listed, holds no files, or holds files of both formats (a table reads one).
pub(crate) fn dataset_format(dir: &Path) -> Result<(Vec<PathBuf>, FileFormat)> {
    if is_dataset_file(dir) {
        let format = match dir.extension().is_some_and(|e| e == "arrow") {
            true => FileFormat::Arrow,
            false => FileFormat::Parquet,
        };
        return Ok((vec![dir.to_path_buf()], format));
    }
    let mut files = Vec::new();
    list_files(dir, 0, &mut files)
        .map_err(|e| DataFusionError::External(Box::new(e)).context(dir.display().to_string()))?;
    let arrow = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "arrow"))
        .count();
    match [files.len() - arrow, arrow] {
        [0, 0] => plan_err!(
            "{}: the dataset holds no .parquet or .arrow files yet",
            dir.display()
        ),
        [_, 0] => Ok((files, FileFormat::Parquet)),
        [0, _] => Ok((files, FileFormat::Arrow)),
        [p, a] => plan_err!(
            "{}: the dataset mixes {p} Parquet and {a} Arrow IPC files; a table reads one \
             format (export each format to its own directory)",
            dir.display()
        ),
    }
}

/// What the metadata of `files` say about the isolation level they were exported at: each
/// level (`read_committed`, `read_uncommitted`) with how many files say it, in name order;
/// files that say nothing (written before the key existed, or by another tool) or cannot be
/// read are left out. Reads each file's footer.
fn isolations(files: &[PathBuf], format: FileFormat) -> Vec<(String, u64)> {
    let mut levels: Vec<(String, u64)> = Vec::new();
    for f in files {
        let Some(level) = file_isolation(f, format) else {
            continue;
        };
        match levels.iter_mut().find(|(l, _)| *l == level) {
            Some((_, n)) => *n += 1,
            None => levels.push((level, 1)),
        }
    }
    levels.sort();
    levels
}

/// The isolation level in the metadata of one dataset file, if it says one.
fn file_isolation(file: &Path, format: FileFormat) -> Option<String> {
    let f = std::fs::File::open(file).ok()?;
    match format {
        FileFormat::Parquet => {
            let metadata = ParquetMetaDataReader::new().parse_and_finish(&f).ok()?;
            let kv = metadata.file_metadata().key_value_metadata()?;
            kv.iter()
                .find(|kv| kv.key == ISOLATION_KEY)
                .and_then(|kv| kv.value.clone())
        }
        FileFormat::Arrow => {
            let r = datafusion::arrow::ipc::reader::FileReader::try_new(f, None).ok()?;
            r.custom_metadata().get(ISOLATION_KEY).cloned()
        }
    }
}

/// Reads the dataset in `dir` as a data frame, with `topic` and `partition` taken from the
/// directory names (Hive style) when its files do not hold them.
async fn read(ctx: &SessionContext, dir: &Path, format: FileFormat) -> Result<DataFrame> {
    let file = is_dataset_file(dir);
    let url = match file {
        true => dir.display().to_string(),
        false => format!("{}/", dir.display()),
    };
    let hive = vec![
        ("topic".to_string(), DataType::Utf8),
        ("partition".to_string(), DataType::Int32),
    ];
    let read = |cols: Vec<(String, DataType)>| {
        let url = url.clone();
        async move {
            match format {
                FileFormat::Parquet => {
                    let options = ParquetReadOptions::default().table_partition_cols(cols);
                    ctx.read_parquet(url, options).await
                }
                FileFormat::Arrow => {
                    let options = ArrowReadOptions::default().table_partition_cols(cols);
                    ctx.read_arrow(url, options).await
                }
            }
        }
    };
    let df = read(Vec::new()).await?;
    let schema = df.schema();
    // One file has no directories to take them from: its own columns only.
    if !file
        && schema.field_with_unqualified_name("partition").is_err()
        && schema.field_with_unqualified_name("topic").is_err()
    {
        return read(hive).await;
    }
    Ok(df)
}

/// Registers the exported dataset in `dir` (`DIR/topic=T/partition=P/*.parquet`, or
/// `*.arrow`: every file of the format below it; or one such file, with its own columns) as
/// the table `name`: DataFusion's listing
/// table, which reads only the files, row groups and columns a query needs. A binary `key` or
/// `value` column is given as a string where `options` asks for one (UTF-8; other bytes are
/// null and counted in the returned counters), as a source table's would be. The isolation
/// level each file was exported at (its metadata's `krec.isolation`, one footer read per file)
/// goes into the counters too ([`ScanCounters::isolation_note`]).
///
/// # Errors
///
/// The directory cannot be listed, holds no files or files of both formats, or its files have
/// no schema in common.
pub async fn register_dataset(
    ctx: &SessionContext,
    name: &str,
    dir: &Path,
    options: TableOptions,
) -> Result<Arc<ScanCounters>> {
    let (files, format) = dataset_format(dir)?;
    let df = read(ctx, dir, format).await?;
    let counters = Arc::new(ScanCounters {
        dataset: Some(Dataset {
            dir: dir.to_path_buf(),
            isolations: isolations(&files, format),
        }),
        ..ScanCounters::default()
    });
    let mut exprs = Vec::new();
    let mut changed = false;
    for field in df.schema().fields() {
        let column = Expr::Column(Column::new_unqualified(field.name()));
        let wanted = match field.name().as_str() {
            "key" => options.key_format,
            "value" => options.value_format,
            _ => BytesFormat::Binary,
        };
        let binary = matches!(
            field.data_type(),
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        );
        if wanted == BytesFormat::String && binary {
            let udf = ScalarUDF::from(Utf8Of {
                column: field.name().clone(),
                counters: Arc::clone(&counters),
                // Volatile: evaluated once per row even when the query uses the column twice
                // (an immutable function may be inlined into each use, counting twice).
                signature: Signature::any(1, Volatility::Volatile),
            });
            exprs.push(udf.call(vec![column]).alias(field.name()));
            changed = true;
        } else {
            exprs.push(column);
        }
    }
    let df = if changed { df.select(exprs)? } else { df };
    ctx.register_table(name, df.into_view())?;
    Ok(counters)
}

/// The bytes of a binary column as UTF-8 strings: other bytes are null, counted in
/// `counters` under the column's name.
#[derive(Debug)]
struct Utf8Of {
    column: String,
    counters: Arc<ScanCounters>,
    signature: Signature,
}

impl PartialEq for Utf8Of {
    fn eq(&self, other: &Self) -> bool {
        self.column == other.column && Arc::ptr_eq(&self.counters, &other.counters)
    }
}

impl Eq for Utf8Of {}

impl Hash for Utf8Of {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.column.hash(state);
        Arc::as_ptr(&self.counters).hash(state);
    }
}

impl ScalarUDFImpl for Utf8Of {
    fn name(&self) -> &str {
        "krec_utf8"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [arg] = args.args.as_slice() else {
            return plan_err!("krec_utf8 takes one argument");
        };
        let array = arg.to_array(args.number_rows)?;
        let (strings, invalid) = utf8_of(&array)?;
        if invalid > 0 {
            self.counters.add_invalid(&self.column, invalid);
        }
        Ok(ColumnarValue::Array(strings))
    }
}

/// `array` (any binary type) as strings, and how many non-null values were not UTF-8 (null in
/// the result).
fn utf8_of(array: &ArrayRef) -> Result<(ArrayRef, u64)> {
    let binary = cast(array, &DataType::Binary)?;
    let Some(binary) = binary.as_any().downcast_ref::<BinaryArray>() else {
        return plan_err!("krec_utf8: not a binary column");
    };
    let mut out = StringBuilder::with_capacity(binary.len(), binary.values().len());
    let mut invalid = 0u64;
    for value in binary.iter() {
        match value.map(std::str::from_utf8) {
            None => out.append_null(),
            Some(Ok(s)) => out.append_value(s),
            Some(Err(_)) => {
                invalid += 1;
                out.append_null();
            }
        }
    }
    Ok((Arc::new(out.finish()), invalid))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{AsArray, BinaryViewArray};

    #[test]
    fn binary_values_become_strings_and_invalid_ones_are_counted() {
        let values: Vec<Option<&[u8]>> = vec![Some(b"ok"), None, Some(b"\xff\xfe"), Some(b"")];
        let array: ArrayRef = Arc::new(BinaryViewArray::from(values));
        let (strings, invalid) = utf8_of(&array).unwrap();
        let strings = strings.as_string::<i32>();
        assert_eq!(invalid, 1);
        let got: Vec<Option<&str>> = strings.iter().collect();
        assert_eq!(got, vec![Some("ok"), None, None, Some("")]);
    }
}
