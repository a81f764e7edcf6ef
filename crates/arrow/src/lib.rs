//! Kafka records as Apache Arrow record batches.
//!
//! Log entries of any format (v0/v1 messages, v2 batches, every codec) go in; Arrow
//! [`RecordBatch`](arrow_array::RecordBatch)es of one fixed schema come out, one row per record,
//! of bounded size. The schema ([`Column`], [`full_schema`]; docs/design.md, "Records as Arrow"):
//!
//! | column | type | null when |
//! |---|---|---|
//! | `topic` | string | never |
//! | `partition` | int32 | never |
//! | `offset` | int64 | never |
//! | `timestamp` | timestamp(ms, UTC) | v0 (no timestamp) |
//! | `timestamp_type` | string: `CreateTime`, `LogAppendTime`, `NoTimestamp` | never |
//! | `key` | binary or string | null key; as string, not UTF-8 (counted) |
//! | `value` | binary or string | tombstone; as string, not UTF-8 (counted) |
//! | `headers` | list<struct<key string, value binary>> | never (a header key: not UTF-8, counted; a value: null) |
//! | `producer_id` | int64 | never (-1: none) |
//! | `producer_epoch` | int16 | never (-1: none) |
//! | `sequence` | int32 | the batch has no base sequence, v0/v1 |
//! | `is_transactional` | bool | never |
//! | `batch_offset` | int64 | never |
//! | `magic` | int8 | never |
//! | `compression` | string | never |
//!
//! [`RecordBatchBuilder`] takes entries one at a time ([`krecords_codec::read::Batch`]); it
//! builds only the columns [`Options::columns`] names (none for a row count), keys and values as
//! binary or UTF-8 ([`BytesFormat`]). [`RecordBatches`] does the same over an iterator of
//! entries. Which entries to read (a partition's files, positions, read_committed) is the
//! caller's business: control batches are skipped here, every other entry pushed is rows.
//! More columns, such as a value decoder's, implement [`ColumnBuilder`].
//!
//! [`Scan`] and [`PartitionScan`] do all of it for any krec source
//! ([`krecords_source::Sources`]: files, partition directories, a `log.dirs` root, `kafka://`
//! topics): a range of positions pushed down to the source, read_committed by default
//! ([`ScanOptions`]).
//!
//! ```
//! use arrow_array::cast::AsArray;
//! use krecords_arrow::{BytesFormat, Column, Options, RecordBatches};
//! use krecords_codec::read::Entries;
//! use krecords_codec::write::{NewRecord, V2Builder};
//!
//! let mut b = V2Builder::new(0);
//! b.append(&NewRecord::new(1714000000000, Some(b"user-1"), Some(b"{\"n\":1}"))).unwrap();
//! b.append(&NewRecord::new(1714000000001, Some(b"user-2"), None)).unwrap();
//! let segment = b.finish().unwrap();
//!
//! let options = Options {
//!     columns: vec![Column::Key, Column::Value],
//!     key_format: BytesFormat::String,
//!     ..Options::default()
//! };
//! let batch = RecordBatches::new(Entries::new(&segment), "events", 0, options)
//!     .next()
//!     .unwrap()
//!     .unwrap();
//! assert_eq!(batch.column(0).as_string::<i32>().value(1), "user-2");
//! assert!(batch.column(1).is_null(1)); // a tombstone
//! ```

krecords_codec::untrusted_modules! {
    mod builder;
    mod columns;
    mod scan;
    mod schema;
}

pub use builder::{Options, RecordBatchBuilder, RecordBatches, Report, MAX_BATCH_BYTES};
pub use columns::{column_builder, timestamp_type_name, ColumnBuilder, EntryInfo};
/// The sources layer the scans read, re-exported so that `Sources`, `Range` and
/// `IsolationLevel` need no other dependency.
pub use krecords_source as source;
pub use scan::{scan_schema, PartitionScan, Scan, ScanError, ScanOptions, Totals};
pub use schema::{full_schema, BytesFormat, Column, ISOLATION_KEY};
/// The Arrow crates of the batches this crate makes (`RecordBatch`, arrays, schemas), at the
/// version it is built with, so that a user needs no Arrow dependency of a matching version.
pub use {arrow_array, arrow_schema};

/// Why entries could not be turned into record batches.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An entry or one of its records is corrupt, or does not decompress.
    #[error(transparent)]
    Codec(#[from] krecords_codec::Error),
    /// A column could not make its array (only a custom [`ColumnBuilder`] can fail so).
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
}
