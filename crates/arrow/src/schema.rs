//! The fixed schema: one [`Column`] per field of a Kafka record, and how keys and values are typed
//! ([`BytesFormat`]).

use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use std::sync::Arc;

/// One column of the fixed schema, in schema order ([`Column::ALL`]).
///
/// ```
/// use krecords_arrow::{BytesFormat, Column};
/// assert_eq!(Column::from_name("batch_offset"), Some(Column::BatchOffset));
/// let field = Column::Key.field(BytesFormat::String);
/// assert_eq!((field.name().as_str(), field.is_nullable()), ("key", true));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Column {
    /// `topic` string, not null: the partition's topic name as given to the builder.
    Topic,
    /// `partition` int32, not null.
    Partition,
    /// `offset` int64, not null: the record's absolute offset.
    Offset,
    /// `timestamp` timestamp(ms, UTC): the record's timestamp with LogAppendTime applied (as a
    /// consumer sees it, -1 stays -1); null for v0, which has none.
    Timestamp,
    /// `timestamp_type` string, not null: `CreateTime`, `LogAppendTime` or `NoTimestamp` (v0).
    TimestampType,
    /// `key` binary (or string with [`BytesFormat::String`]); null for a null key.
    Key,
    /// `value` binary (or string with [`BytesFormat::String`]); null for a tombstone.
    Value,
    /// `headers` list<struct<key string, value binary>>, not null (empty for v0/v1 and records
    /// without headers): order and duplicates kept; a null header value is null; a header key
    /// that is not UTF-8 is null and counted.
    Headers,
    /// `producer_id` int64, not null: as stored (-1: none, and for v0/v1).
    ProducerId,
    /// `producer_epoch` int16, not null: as stored (-1: none, and for v0/v1).
    ProducerEpoch,
    /// `sequence` int32: the record's producer sequence (base sequence + offset delta,
    /// wrapping); null when the batch has no base sequence (-1) and for v0/v1.
    Sequence,
    /// `is_transactional` bool, not null (false for v0/v1).
    IsTransactional,
    /// `batch_offset` int64, not null: the entry's first offset (a v2 batch's base offset, a
    /// compressed v0/v1 wrapper's first inner offset).
    BatchOffset,
    /// `magic` int8, not null: 0, 1 or 2 (an inner v0/v1 message's own magic).
    Magic,
    /// `compression` string, not null: the entry's codec, `none`, `gzip`, `snappy`, `lz4`,
    /// `zstd`.
    Compression,
}

impl Column {
    /// Every column, in schema order.
    pub const ALL: [Column; 15] = [
        Column::Topic,
        Column::Partition,
        Column::Offset,
        Column::Timestamp,
        Column::TimestampType,
        Column::Key,
        Column::Value,
        Column::Headers,
        Column::ProducerId,
        Column::ProducerEpoch,
        Column::Sequence,
        Column::IsTransactional,
        Column::BatchOffset,
        Column::Magic,
        Column::Compression,
    ];

    /// The column's name in the schema.
    pub fn name(self) -> &'static str {
        match self {
            Column::Topic => "topic",
            Column::Partition => "partition",
            Column::Offset => "offset",
            Column::Timestamp => "timestamp",
            Column::TimestampType => "timestamp_type",
            Column::Key => "key",
            Column::Value => "value",
            Column::Headers => "headers",
            Column::ProducerId => "producer_id",
            Column::ProducerEpoch => "producer_epoch",
            Column::Sequence => "sequence",
            Column::IsTransactional => "is_transactional",
            Column::BatchOffset => "batch_offset",
            Column::Magic => "magic",
            Column::Compression => "compression",
        }
    }

    /// The column of a name ([`Column::name`]), `None` for any other.
    pub fn from_name(name: &str) -> Option<Column> {
        Column::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The column's field. `format` types the `key` and `value` columns and is ignored by the
    /// others.
    pub fn field(self, format: BytesFormat) -> Field {
        let (data_type, nullable) = match self {
            Column::Topic | Column::TimestampType | Column::Compression => (DataType::Utf8, false),
            Column::Partition => (DataType::Int32, false),
            Column::Offset | Column::ProducerId | Column::BatchOffset => (DataType::Int64, false),
            Column::Timestamp => (timestamp_type(), true),
            Column::Key | Column::Value => (format.data_type(), true),
            Column::Headers => (DataType::List(Arc::new(header_item())), false),
            Column::ProducerEpoch => (DataType::Int16, false),
            Column::Sequence => (DataType::Int32, true),
            Column::IsTransactional => (DataType::Boolean, false),
            Column::Magic => (DataType::Int8, false),
        };
        Field::new(self.name(), data_type, nullable)
    }
}

/// How the `key` and `value` columns hold their bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BytesFormat {
    /// Arrow `binary`: the bytes as they are.
    #[default]
    Binary,
    /// Arrow `utf8`: the bytes when they are valid UTF-8. Bytes that are not are never replaced:
    /// the row holds null there, and the column's invalid count ([`crate::Report::invalid`])
    /// says how many.
    String,
}

impl BytesFormat {
    /// The name `--key-format` and `--value-format` take: `binary` or `string`.
    pub fn name(self) -> &'static str {
        match self {
            BytesFormat::Binary => "binary",
            BytesFormat::String => "string",
        }
    }

    /// The format of a name ([`BytesFormat::name`]).
    pub fn from_name(name: &str) -> Option<BytesFormat> {
        [BytesFormat::Binary, BytesFormat::String]
            .into_iter()
            .find(|f| f.name() == name)
    }

    /// The Arrow type: `Binary` or `Utf8`.
    pub fn data_type(self) -> DataType {
        match self {
            BytesFormat::Binary => DataType::Binary,
            BytesFormat::String => DataType::Utf8,
        }
    }
}

/// `timestamp(ms, UTC)`.
pub(crate) fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
}

/// The fields of a header: `key` string (null when not UTF-8), `value` binary (null for a null
/// value).
pub(crate) fn header_fields() -> Fields {
    Fields::from(vec![
        Field::new("key", DataType::Utf8, true),
        Field::new("value", DataType::Binary, true),
    ])
}

/// The item of the `headers` list: a non-null struct of [`header_fields`].
pub(crate) fn header_item() -> Field {
    Field::new_list_field(DataType::Struct(header_fields()), false)
}

/// The whole fixed schema, every column in [`Column::ALL`] order, `key` and `value` typed by the
/// formats given.
///
/// ```
/// use krecords_arrow::{full_schema, BytesFormat};
/// let schema = full_schema(BytesFormat::Binary, BytesFormat::String);
/// assert_eq!(schema.fields().len(), 15);
/// assert_eq!(schema.field_with_name("value").unwrap().data_type(), &arrow_schema::DataType::Utf8);
/// ```
pub fn full_schema(key_format: BytesFormat, value_format: BytesFormat) -> Schema {
    Schema::new(
        Column::ALL
            .into_iter()
            .map(|c| c.field(format_of(c, key_format, value_format)))
            .collect::<Vec<_>>(),
    )
}

/// The format that applies to `column`.
pub(crate) fn format_of(column: Column, key: BytesFormat, value: BytesFormat) -> BytesFormat {
    match column {
        Column::Value => value,
        _ => key,
    }
}

/// The key of an exported file's metadata (Parquet key-value metadata, Arrow IPC custom
/// metadata) that says at which isolation level its rows were read: `read_committed` or
/// `read_uncommitted`. Written by krecords-export, read by krecords-sql.
pub const ISOLATION_KEY: &str = "krec.isolation";
