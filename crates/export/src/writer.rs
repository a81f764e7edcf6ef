//! One dataset file being written: a temporary name, then synced and renamed.

use crate::{
    file_name, io_err, ExportError, ExportOptions, Format, ISOLATION_KEY, TMP_SUFFIX, TOPIC_ID_KEY,
};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Most rows per Parquet row group.
const ROW_GROUP_ROWS: usize = 1 << 20;

/// A writer that counts the bytes through it.
#[derive(Debug)]
struct Counting {
    inner: BufWriter<File>,
    bytes: u64,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes = self.bytes.saturating_add(n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

enum Writer {
    Parquet(ArrowWriter<Counting>),
    Arrow(arrow_ipc::writer::FileWriter<Counting>),
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Writer::Parquet(_) => "Parquet",
            Writer::Arrow(_) => "Arrow",
        })
    }
}

/// A file of a partition being written.
#[derive(Debug)]
pub(crate) struct OpenFile {
    dir: PathBuf,
    tmp: PathBuf,
    first: i64,
    /// The last offset written.
    pub last: i64,
    /// Rows written.
    pub records: u64,
    /// Bytes of the log entries read into it (counted in the summary once it is completed).
    pub bytes_in: u64,
    /// When it was created.
    pub opened: Instant,
    writer: Writer,
}

/// A failed write of `path` through arrow's or parquet's writer: `cannot write PATH: CAUSE`,
/// the cause being the I/O error behind the library's wrapper (`External: `, `Io error: `),
/// of its kind, when there is one ([`krecords_source::io_cause`]), else the library's message.
fn write_err(path: &Path, e: &(dyn std::error::Error + 'static)) -> ExportError {
    let source = match krecords_source::io_cause(e) {
        Some(io) => std::io::Error::new(io.kind(), io.to_string()),
        None => std::io::Error::other(e.to_string()),
    };
    ExportError::Io {
        what: format!("cannot write {}", path.display()),
        source,
    }
}

impl OpenFile {
    /// A temporary file in `dir` for rows from offset `first`; its metadata says the isolation
    /// level and, when known, the source topic's id.
    pub fn create(
        dir: &Path,
        first: i64,
        schema: SchemaRef,
        options: &ExportOptions,
        topic_id: Option<&str>,
    ) -> Result<OpenFile, ExportError> {
        let mut metadata = vec![(ISOLATION_KEY, options.isolation.name())];
        if let Some(id) = topic_id {
            metadata.push((TOPIC_ID_KEY, id));
        }
        let ext = options.format.extension();
        let tmp = dir.join(format!(".{first:020}.{ext}{TMP_SUFFIX}"));
        let file =
            File::create(&tmp).map_err(io_err(format!("cannot create {}", tmp.display())))?;
        let writer = Self::writer(file, &tmp, schema, options, &metadata).inspect_err(|_| {
            // Best effort: the space goes back at once; the next run removes it otherwise.
            let _ = std::fs::remove_file(&tmp);
        })?;
        Ok(OpenFile {
            dir: dir.to_path_buf(),
            tmp,
            first,
            last: first,
            records: 0,
            bytes_in: 0,
            opened: Instant::now(),
            writer,
        })
    }

    fn writer(
        file: File,
        tmp: &Path,
        schema: SchemaRef,
        options: &ExportOptions,
        metadata: &[(&str, &str)],
    ) -> Result<Writer, ExportError> {
        let out = Counting {
            inner: BufWriter::with_capacity(1 << 20, file),
            bytes: 0,
        };
        let writer = match options.format {
            Format::Parquet => {
                let props = WriterProperties::builder()
                    .set_compression(Compression::ZSTD(ZstdLevel::default()))
                    .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
                    .set_created_by(format!("krec export {}", env!("CARGO_PKG_VERSION")))
                    .set_key_value_metadata(Some(
                        metadata
                            .iter()
                            .map(|&(k, v)| KeyValue::new(k.into(), v.to_string()))
                            .collect(),
                    ))
                    .build();
                Writer::Parquet(
                    ArrowWriter::try_new(out, schema, Some(props))
                        .map_err(|e| write_err(tmp, &e))?,
                )
            }
            Format::Arrow => {
                let mut w = arrow_ipc::writer::FileWriter::try_new(out, &schema)
                    .map_err(|e| write_err(tmp, &e))?;
                for &(k, v) in metadata {
                    w.write_metadata(k, v);
                }
                Writer::Arrow(w)
            }
        };
        Ok(writer)
    }

    /// About the bytes of the file so far (written and buffered).
    pub fn size(&self) -> u64 {
        match &self.writer {
            Writer::Parquet(w) => w.inner().bytes.saturating_add(w.in_progress_size() as u64),
            Writer::Arrow(w) => w.get_ref().bytes,
        }
    }

    /// Appends `batch`, whose last offset is `last`.
    pub fn write(
        &mut self,
        batch: &RecordBatch,
        last: i64,
        row_group_bytes: usize,
    ) -> Result<(), ExportError> {
        match &mut self.writer {
            Writer::Parquet(w) => {
                w.write(batch).map_err(|e| write_err(&self.tmp, &e))?;
                if w.in_progress_size() >= row_group_bytes {
                    w.flush().map_err(|e| write_err(&self.tmp, &e))?;
                }
            }
            Writer::Arrow(w) => w.write(batch).map_err(|e| write_err(&self.tmp, &e))?,
        }
        self.last = last;
        self.records = self.records.saturating_add(batch.num_rows() as u64);
        Ok(())
    }

    /// Gives up the file: removes its temporary (best effort; the next run removes it
    /// otherwise), so that the space it holds is given back at once.
    pub fn discard(self) {
        let tmp = self.tmp.clone();
        drop(self);
        let _ = std::fs::remove_file(tmp);
    }

    /// Completes the file: footer, sync, rename to its final name (the caller syncs the
    /// directory). Returns the final path and size. On an error, its temporary is removed as
    /// [`discard`](Self::discard) does.
    pub fn complete(self, format: Format) -> Result<(PathBuf, u64), ExportError> {
        let tmp = self.tmp.clone();
        self.rename(format).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }

    fn rename(self, format: Format) -> Result<(PathBuf, u64), ExportError> {
        let tmp = self.tmp;
        let out = match self.writer {
            Writer::Parquet(w) => w.into_inner().map_err(|e| write_err(&tmp, &e))?,
            Writer::Arrow(mut w) => {
                w.finish().map_err(|e| write_err(&tmp, &e))?;
                w.into_inner().map_err(|e| write_err(&tmp, &e))?
            }
        };
        let bytes = out.bytes;
        let file = out
            .inner
            .into_inner()
            .map_err(|e| write_err(&tmp, e.error()))?;
        file.sync_all()
            .map_err(io_err(format!("cannot sync {}", tmp.display())))?;
        drop(file);
        let path = self.dir.join(file_name(self.first, self.last, format));
        std::fs::rename(&tmp, &path).map_err(io_err(format!("cannot rename {}", tmp.display())))?;
        Ok((path, bytes))
    }
}

/// Syncs a directory (a rename or removal in it is durable).
pub(crate) fn sync_dir(dir: &Path) -> Result<(), ExportError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(format!("cannot sync {}", dir.display())))
}
