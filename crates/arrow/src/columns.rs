//! Column builders: the [`ColumnBuilder`] trait every column implements, fed one record at a
//! time, and the built-in ones for the fixed schema ([`column_builder`]).
//!
//! A value decoder (Avro, Protobuf) is one more [`ColumnBuilder`]: it reads
//! [`Record::value`] in [`ColumnBuilder::append`], appends to its own Arrow builder, and counts
//! what it could not decode in [`ColumnBuilder::invalid`]; give it to
//! [`RecordBatchBuilder::with_column`](crate::RecordBatchBuilder::with_column).

use crate::schema::{header_fields, header_item, timestamp_type, BytesFormat, Column};
use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, BooleanBuilder, GenericByteBuilder, PrimitiveBuilder,
    StringBuilder,
};
use arrow_array::types::{
    ArrowPrimitiveType, Int16Type, Int32Type, Int64Type, Int8Type, TimestampMillisecondType,
};
use arrow_array::{ArrayRef, ListArray, StringArray, StructArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, FieldRef};
use krecords_codec::read::Record;
use krecords_codec::{Compression, TimestampType};
use std::sync::Arc;

/// What a record's entry says about all its records: the partition's identity and the entry's
/// header fields. Built once per entry and handed to every column with each record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryInfo<'a> {
    /// The partition's topic.
    pub topic: &'a str,
    /// The partition.
    pub partition: i32,
    /// The entry's magic (for v0/v1, the outer message's).
    pub magic: u8,
    /// The entry's codec (for v0/v1, the wrapper's).
    pub compression: Compression,
    /// The entry's timestamp type (for v0/v1, the outer message's).
    pub timestamp_type: TimestampType,
    /// Producer id as stored (-1: none, and for v0/v1).
    pub producer_id: i64,
    /// Producer epoch as stored (-1: none, and for v0/v1).
    pub producer_epoch: i16,
    /// The transactional flag (false for v0/v1).
    pub transactional: bool,
    /// The entry's first offset: a v2 batch's base offset, a v0/v1 message's offset, a
    /// compressed wrapper's first inner offset.
    pub first_offset: i64,
}

/// Builds one column of record batches, fed one record at a time.
///
/// Every builder of a [`RecordBatchBuilder`](crate::RecordBatchBuilder) gets every row in the
/// same order, so their arrays have equal lengths. `append` cannot fail: a value the column cannot
/// represent (bytes that are not UTF-8, a payload a decoder does not understand) is appended as
/// null and counted in [`ColumnBuilder::invalid`], so that one bad record does not stop a scan.
///
/// ```
/// use arrow_array::builder::UInt32Builder;
/// use arrow_array::{Array, ArrayRef};
/// use arrow_schema::{ArrowError, DataType, Field, FieldRef};
/// use krecords_arrow::{ColumnBuilder, EntryInfo, Options, RecordBatchBuilder};
/// use krecords_codec::read::{Entries, Record};
/// use krecords_codec::write::{NewRecord, V2Builder};
/// use std::sync::Arc;
///
/// /// The length of each value, as a custom column.
/// struct ValueLen(FieldRef, UInt32Builder);
/// impl ColumnBuilder for ValueLen {
///     fn field(&self) -> FieldRef { self.0.clone() }
///     fn append(&mut self, _: &EntryInfo<'_>, record: &Record<'_>) {
///         self.1.append_option(record.value().map(|v| v.len() as u32));
///     }
///     fn finish(&mut self) -> Result<ArrayRef, ArrowError> { Ok(Arc::new(self.1.finish())) }
/// }
///
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1714000000000, None, Some(b"hello"))).unwrap();
/// let bytes = b.finish().unwrap();
///
/// let field = Arc::new(Field::new("value_len", DataType::UInt32, true));
/// let options = Options { columns: vec![], ..Options::default() };
/// let mut builder = RecordBatchBuilder::new("t", 0, options)
///     .with_column(Box::new(ValueLen(field, UInt32Builder::new())));
/// builder.push(&Entries::new(&bytes).next().unwrap().unwrap()).unwrap();
/// builder.finish().unwrap();
/// let batch = builder.pop().unwrap();
/// assert_eq!(batch.schema().field(0).name(), "value_len");
/// assert_eq!(batch.num_rows(), 1);
/// ```
pub trait ColumnBuilder: Send {
    /// The column's field (name, type, nullability).
    fn field(&self) -> FieldRef;

    /// Appends the column's value for one record of the entry `entry`.
    fn append(&mut self, entry: &EntryInfo<'_>, record: &Record<'_>);

    /// Appends the values of consecutive records of one entry. The default calls
    /// [`ColumnBuilder::append`] for each (statically dispatched within the implementation).
    fn append_all(&mut self, entry: &EntryInfo<'_>, records: &[Record<'_>]) {
        for record in records {
            self.append(entry, record);
        }
    }

    /// The values appended since the last call as an array, and starts anew.
    ///
    /// # Errors
    ///
    /// When the array cannot be made (the built-in columns never fail).
    fn finish(&mut self) -> Result<ArrayRef, ArrowError>;

    /// How many values this column could not represent and holds as null, since it was made.
    fn invalid(&self) -> u64 {
        0
    }
}

/// The built-in builder of `column`; `format` types the `key` and `value` columns.
///
/// ```
/// use krecords_arrow::{column_builder, BytesFormat, Column};
/// let b = column_builder(Column::Offset, BytesFormat::Binary);
/// assert_eq!(b.field().name(), "offset");
/// ```
pub fn column_builder(column: Column, format: BytesFormat) -> Box<dyn ColumnBuilder> {
    let field: FieldRef = Arc::new(column.field(format));
    match column {
        Column::Topic => Box::new(Str::entry(field, |e, _| e.topic)),
        Column::Partition => Box::new(Prim::<Int32Type, _>::entry(field, |e, _| Some(e.partition))),
        Column::Offset => Box::new(Prim::<Int64Type, _>::new(field, |_, r| Some(r.offset()))),
        Column::Timestamp => Box::new(
            Prim::<TimestampMillisecondType, _>::new(field, |_, r| r.timestamp())
                .with_type(timestamp_type()),
        ),
        Column::TimestampType => Box::new(Str::new(field, |e, r| {
            timestamp_type_name(record_timestamp_type(e, r))
        })),
        Column::Key => Box::new(Bytes::new(field, format, |r| r.key())),
        Column::Value => Box::new(Bytes::new(field, format, |r| r.value())),
        Column::Headers => Box::new(HeadersColumn::new(field)),
        Column::ProducerId => Box::new(Prim::<Int64Type, _>::entry(field, |e, _| {
            Some(e.producer_id)
        })),
        Column::ProducerEpoch => Box::new(Prim::<Int16Type, _>::entry(field, |e, _| {
            Some(e.producer_epoch)
        })),
        Column::Sequence => Box::new(Prim::<Int32Type, _>::new(field, |_, r| match r {
            Record::V2(r) => r.sequence,
            Record::Legacy(_) => None,
        })),
        Column::IsTransactional => Box::new(BoolColumn {
            field,
            builder: BooleanBuilder::new(),
        }),
        Column::BatchOffset => Box::new(Prim::<Int64Type, _>::entry(field, |e, _| {
            Some(e.first_offset)
        })),
        Column::Magic => Box::new(Prim::<Int8Type, _>::new(field, |e, r| {
            Some(record_magic(e, r) as i8)
        })),
        Column::Compression => Box::new(Str::entry(field, |e, _| e.compression.name())),
    }
}

/// The `timestamp_type` column's text: `CreateTime`, `LogAppendTime`, `NoTimestamp`.
pub fn timestamp_type_name(t: TimestampType) -> &'static str {
    match t {
        TimestampType::NoTimestamp => "NoTimestamp",
        TimestampType::CreateTime => "CreateTime",
        TimestampType::LogAppendTime => "LogAppendTime",
    }
}

/// A record's own magic: an inner v0/v1 message's, else the entry's.
fn record_magic(entry: &EntryInfo<'_>, record: &Record<'_>) -> u8 {
    match record {
        Record::Legacy(r) => r.magic,
        Record::V2(_) => entry.magic,
    }
}

/// A record's timestamp type: an inner v0/v1 message's (the wrapper's for magic 1), else the
/// entry's.
fn record_timestamp_type(entry: &EntryInfo<'_>, record: &Record<'_>) -> TimestampType {
    match record {
        Record::Legacy(r) => r.timestamp_type,
        Record::V2(_) => entry.timestamp_type,
    }
}

/// A primitive column whose value `get` reads from the entry and the record.
struct Prim<T: ArrowPrimitiveType, F> {
    field: FieldRef,
    builder: PrimitiveBuilder<T>,
    get: F,
    /// Whether `get` reads the entry only: one value for all the records of an entry.
    per_entry: bool,
}

impl<T, F> Prim<T, F>
where
    T: ArrowPrimitiveType,
    F: Fn(&EntryInfo<'_>, &Record<'_>) -> Option<T::Native> + Send,
{
    fn new(field: FieldRef, get: F) -> Self {
        Prim {
            field,
            builder: PrimitiveBuilder::new(),
            get,
            per_entry: false,
        }
    }

    /// A column whose value is the entry's, the same for all its records.
    fn entry(field: FieldRef, get: F) -> Self {
        Prim {
            per_entry: true,
            ..Prim::new(field, get)
        }
    }

    /// Gives the array another type of the same physical layout (a timestamp's time zone).
    fn with_type(mut self, data_type: arrow_schema::DataType) -> Self {
        self.builder = self.builder.with_data_type(data_type);
        self
    }
}

impl<T, F> ColumnBuilder for Prim<T, F>
where
    T: ArrowPrimitiveType,
    F: Fn(&EntryInfo<'_>, &Record<'_>) -> Option<T::Native> + Send,
{
    fn field(&self) -> FieldRef {
        self.field.clone()
    }

    #[inline]
    fn append(&mut self, entry: &EntryInfo<'_>, record: &Record<'_>) {
        self.builder.append_option((self.get)(entry, record));
    }

    fn append_all(&mut self, entry: &EntryInfo<'_>, records: &[Record<'_>]) {
        match records.first() {
            Some(first) if self.per_entry => match (self.get)(entry, first) {
                Some(v) => self.builder.append_value_n(v, records.len()),
                None => self.builder.append_nulls(records.len()),
            },
            _ => {
                for r in records {
                    self.append(entry, r);
                }
            }
        }
    }

    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        Ok(Arc::new(self.builder.finish()))
    }
}

/// A non-null string column whose text `get` reads from the entry and the record. Its values and
/// offsets are plain vectors: no null bitmap to keep, and the appends inline (these columns
/// repeat a few short texts on every row).
struct Str<F> {
    field: FieldRef,
    /// The texts, one after the other.
    values: Vec<u8>,
    /// Offsets into `values`: row i is `offsets[i]..offsets[i + 1]`. Starts with 0.
    offsets: Vec<i32>,
    get: F,
    /// Whether `get` reads the entry only: one text for all the records of an entry.
    per_entry: bool,
}

impl<F> Str<F>
where
    F: for<'e> Fn(&EntryInfo<'e>, &Record<'_>) -> &'e str + Send,
{
    fn new(field: FieldRef, get: F) -> Self {
        Str {
            field,
            values: Vec::new(),
            offsets: vec![0],
            get,
            per_entry: false,
        }
    }

    /// A column whose text is the entry's, the same for all its records.
    fn entry(field: FieldRef, get: F) -> Self {
        Str {
            per_entry: true,
            ..Str::new(field, get)
        }
    }

    #[inline]
    fn push(&mut self, text: &str) {
        self.values.extend_from_slice(text.as_bytes());
        // A record batch's bytes, the topic's included, stay below `MAX_BATCH_BYTES`.
        self.offsets
            .push(i32::try_from(self.values.len()).unwrap_or(i32::MAX));
    }
}

impl<F> ColumnBuilder for Str<F>
where
    F: for<'e> Fn(&EntryInfo<'e>, &Record<'_>) -> &'e str + Send,
{
    fn field(&self) -> FieldRef {
        self.field.clone()
    }

    #[inline]
    fn append(&mut self, entry: &EntryInfo<'_>, record: &Record<'_>) {
        self.push((self.get)(entry, record));
    }

    fn append_all(&mut self, entry: &EntryInfo<'_>, records: &[Record<'_>]) {
        match records.first() {
            Some(first) if self.per_entry => {
                let text = (self.get)(entry, first);
                for _ in records {
                    self.push(text);
                }
            }
            _ => {
                for r in records {
                    self.append(entry, r);
                }
            }
        }
    }

    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        let (rows, bytes) = (self.offsets.len(), self.values.len());
        let mut offsets = Vec::with_capacity(rows);
        offsets.push(0);
        let offsets = std::mem::replace(&mut self.offsets, offsets);
        let values = std::mem::replace(&mut self.values, Vec::with_capacity(bytes));
        let array = StringArray::try_new(
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from_vec(values),
            None,
        )?;
        Ok(Arc::new(array))
    }
}

/// `is_transactional`.
struct BoolColumn {
    field: FieldRef,
    builder: BooleanBuilder,
}

impl ColumnBuilder for BoolColumn {
    fn field(&self) -> FieldRef {
        self.field.clone()
    }

    #[inline]
    fn append(&mut self, entry: &EntryInfo<'_>, _: &Record<'_>) {
        self.builder.append_value(entry.transactional);
    }

    fn append_all(&mut self, entry: &EntryInfo<'_>, records: &[Record<'_>]) {
        self.builder.append_n(records.len(), entry.transactional);
    }

    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        Ok(Arc::new(self.builder.finish()))
    }
}

/// Appends `bytes` to a string builder when they are UTF-8, else a null; returns whether they
/// were.
#[inline]
fn append_utf8(builder: &mut StringBuilder, bytes: Option<&[u8]>) -> bool {
    match bytes.map(std::str::from_utf8) {
        None => {
            builder.append_null();
            true
        }
        Some(Ok(s)) => {
            builder.append_value(s);
            true
        }
        Some(Err(_)) => {
            builder.append_null();
            false
        }
    }
}

/// `key` or `value`: the bytes `get` reads from the record, as binary or as UTF-8 text.
struct Bytes<F> {
    field: FieldRef,
    kind: BytesKind,
    invalid: u64,
    get: F,
}

/// The Arrow builder behind a [`Bytes`] column.
enum BytesKind {
    Binary(BinaryBuilder),
    Utf8(StringBuilder),
}

impl<F> Bytes<F>
where
    F: for<'a> Fn(&Record<'a>) -> Option<&'a [u8]> + Send,
{
    fn new(field: FieldRef, format: BytesFormat, get: F) -> Self {
        let kind = match format {
            BytesFormat::Binary => BytesKind::Binary(BinaryBuilder::new()),
            BytesFormat::String => BytesKind::Utf8(StringBuilder::new()),
        };
        Bytes {
            field,
            kind,
            invalid: 0,
            get,
        }
    }
}

impl<F> ColumnBuilder for Bytes<F>
where
    F: for<'a> Fn(&Record<'a>) -> Option<&'a [u8]> + Send,
{
    fn field(&self) -> FieldRef {
        self.field.clone()
    }

    #[inline]
    fn append(&mut self, _: &EntryInfo<'_>, record: &Record<'_>) {
        let bytes = (self.get)(record);
        match &mut self.kind {
            BytesKind::Binary(b) => b.append_option(bytes),
            BytesKind::Utf8(b) => {
                if !append_utf8(b, bytes) {
                    self.invalid = self.invalid.saturating_add(1);
                }
            }
        }
    }

    fn append_all(&mut self, _: &EntryInfo<'_>, records: &[Record<'_>]) {
        // One match per entry rather than per record.
        match &mut self.kind {
            BytesKind::Binary(b) => {
                for r in records {
                    b.append_option((self.get)(r));
                }
            }
            BytesKind::Utf8(b) => {
                for r in records {
                    if !append_utf8(b, (self.get)(r)) {
                        self.invalid = self.invalid.saturating_add(1);
                    }
                }
            }
        }
    }

    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        Ok(match &mut self.kind {
            BytesKind::Binary(b) => Arc::new(finish_sized(b)),
            BytesKind::Utf8(b) => Arc::new(finish_sized(b)),
        })
    }

    fn invalid(&self) -> u64 {
        self.invalid
    }
}

/// Finishes a byte builder and replaces it with one sized as the batch just made (at most
/// [`MAX_BATCH_BYTES`](crate::MAX_BATCH_BYTES) of values), so that the next batch does not grow
/// its buffers from nothing again.
fn finish_sized<T: arrow_array::types::ByteArrayType>(
    b: &mut GenericByteBuilder<T>,
) -> arrow_array::GenericByteArray<T> {
    let (items, bytes) = (b.len(), b.values_slice().len());
    let array = b.finish();
    *b = GenericByteBuilder::with_capacity(items, bytes);
    array
}

/// `headers`: list offsets, and the keys and values of every header of the batch.
struct HeadersColumn {
    field: FieldRef,
    /// List offsets: `offsets[i]..offsets[i + 1]` are row i's headers. Starts with 0.
    offsets: Vec<i32>,
    keys: StringBuilder,
    values: BinaryBuilder,
    /// Header keys that were not UTF-8.
    invalid: u64,
}

impl HeadersColumn {
    fn new(field: FieldRef) -> Self {
        HeadersColumn {
            field,
            offsets: vec![0],
            keys: StringBuilder::new(),
            values: BinaryBuilder::new(),
            invalid: 0,
        }
    }
}

impl ColumnBuilder for HeadersColumn {
    fn field(&self) -> FieldRef {
        self.field.clone()
    }

    #[inline]
    fn append(&mut self, _: &EntryInfo<'_>, record: &Record<'_>) {
        for h in record.headers() {
            if !append_utf8(&mut self.keys, Some(h.key)) {
                self.invalid = self.invalid.saturating_add(1);
            }
            self.values.append_option(h.value);
        }
        // The batch's bytes are bounded far below i32::MAX (see `MAX_BATCH_BYTES`), and every
        // header takes at least two bytes, so the count fits.
        let count = i32::try_from(self.values.len()).unwrap_or(i32::MAX);
        self.offsets.push(count);
    }

    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        let keys: ArrayRef = Arc::new(self.keys.finish());
        let values: ArrayRef = Arc::new(self.values.finish());
        let items = StructArray::try_new(header_fields(), vec![keys, values], None)?;
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        let list = ListArray::try_new(Arc::new(header_item()), offsets, Arc::new(items), None)?;
        Ok(Arc::new(list))
    }

    fn invalid(&self) -> u64 {
        self.invalid
    }
}
