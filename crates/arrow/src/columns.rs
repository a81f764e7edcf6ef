//! Column builders: the [`ColumnBuilder`] trait every column implements, fed one record at a
//! time, and the built-in ones for the fixed schema ([`column_builder`]).
//!
//! A value decoder (Avro, Protobuf) is one more [`ColumnBuilder`]: it reads
//! [`Record::value`] in [`ColumnBuilder::append`], appends to its own Arrow builder, and counts
//! what it could not decode in [`ColumnBuilder::invalid`]; give it to
//! [`RecordBatchBuilder::with_column`](crate::RecordBatchBuilder::with_column).

use crate::schema::{header_fields, header_item, BytesFormat, Column};
use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, BooleanBuilder, GenericByteBuilder, StringBuilder,
};
use arrow_array::types::{
    ArrowPrimitiveType, Int16Type, Int32Type, Int64Type, Int8Type, TimestampMillisecondType,
};
use arrow_array::{ArrayRef, BinaryArray, ListArray, PrimitiveArray, StringArray, StructArray};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
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
        Column::Topic => Box::new(Runs::new(field, Scope::Entry, |e, _| e.topic)),
        Column::Partition => Box::new(Prim::<Int32Type, _>::new(field, Scope::Entry, |e, _| {
            Some(e.partition)
        })),
        Column::Offset => Box::new(Prim::<Int64Type, _>::new(field, Scope::Record, |_, r| {
            Some(r.offset())
        })),
        Column::Timestamp => Box::new(Prim::<TimestampMillisecondType, _>::new(
            field,
            Scope::Record,
            |_, r| r.timestamp(),
        )),
        Column::TimestampType => Box::new(Runs::new(field, Scope::EntryIfV2, |e, r| {
            timestamp_type_name(record_timestamp_type(e, r))
        })),
        Column::Key => Box::new(Bytes::new(field, format, |r| r.key())),
        Column::Value => Box::new(Bytes::new(field, format, |r| r.value())),
        Column::Headers => Box::new(HeadersColumn::new(field)),
        Column::ProducerId => Box::new(Prim::<Int64Type, _>::new(field, Scope::Entry, |e, _| {
            Some(e.producer_id)
        })),
        Column::ProducerEpoch => {
            Box::new(Prim::<Int16Type, _>::new(field, Scope::Entry, |e, _| {
                Some(e.producer_epoch)
            }))
        }
        Column::Sequence => Box::new(Prim::<Int32Type, _>::new(
            field,
            Scope::RecordUnlessNull,
            |_, r| match r {
                Record::V2(r) => r.sequence,
                Record::Legacy(_) => None,
            },
        )),
        Column::IsTransactional => Box::new(BoolColumn {
            field,
            builder: BooleanBuilder::new(),
        }),
        Column::BatchOffset => Box::new(Prim::<Int64Type, _>::new(field, Scope::Entry, |e, _| {
            Some(e.first_offset)
        })),
        Column::Magic => Box::new(Prim::<Int8Type, _>::new(field, Scope::EntryIfV2, |e, r| {
            Some(record_magic(e, r) as i8)
        })),
        Column::Compression => {
            Box::new(Runs::new(field, Scope::Entry, |e, _| e.compression.name()))
        }
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

/// What a column's value depends on, so that a whole entry's rows can be filled at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The entry only: one value for all its records.
    Entry,
    /// The entry for a v2 batch (one value for all its records), each record for v0/v1 (an
    /// inner message has its own magic and timestamp type).
    EntryIfV2,
    /// Each record, but when the first record's value is null, so are all the others (a
    /// record's sequence is null exactly when its batch has no base sequence, and for v0/v1).
    RecordUnlessNull,
    /// Each record.
    Record,
}

impl Scope {
    /// Whether the value of `first`, an entry's first record, holds for all its records (the
    /// records of an entry are all of its format).
    /// `first_is_null`: whether the first record's value is null.
    #[inline]
    fn uniform(self, first: &Record<'_>, first_is_null: bool) -> bool {
        match self {
            Scope::Entry => true,
            Scope::EntryIfV2 => matches!(first, Record::V2(_)),
            Scope::RecordUnlessNull => first_is_null,
            Scope::Record => false,
        }
    }
}

/// The validity of a nullable column: nothing until its first null (most columns have none),
/// then one bit per row.
#[derive(Default)]
struct Nulls(Option<BooleanBufferBuilder>);

impl Nulls {
    /// `n` more valid rows.
    #[inline]
    fn valid_n(&mut self, n: usize) {
        if let Some(b) = &mut self.0 {
            b.append_n(n, true);
        }
    }

    /// `n` more null rows after the `len` rows so far.
    fn null_n(&mut self, len: usize, n: usize) {
        let b = self.0.get_or_insert_with(|| {
            let mut b = BooleanBufferBuilder::new(len.saturating_add(n));
            b.append_n(len, true);
            b
        });
        b.append_n(n, false);
    }

    /// The validity of the rows so far (`None`: all valid), and starts anew.
    fn finish(&mut self) -> Option<NullBuffer> {
        self.0.take().map(|mut b| NullBuffer::new(b.finish()))
    }
}

/// A primitive column whose value `get` reads from the entry and the record: a plain vector of
/// values (filled per entry when `scope` allows) and a validity made only if a null comes.
struct Prim<T: ArrowPrimitiveType, F> {
    field: FieldRef,
    values: Vec<T::Native>,
    nulls: Nulls,
    get: F,
    scope: Scope,
}

impl<T, F> Prim<T, F>
where
    T: ArrowPrimitiveType,
    F: Fn(&EntryInfo<'_>, &Record<'_>) -> Option<T::Native> + Send,
{
    fn new(field: FieldRef, scope: Scope, get: F) -> Self {
        Prim {
            field,
            values: Vec::new(),
            nulls: Nulls::default(),
            get,
            scope,
        }
    }

    /// Appends `value` `n` times.
    #[inline]
    fn push_n(&mut self, value: Option<T::Native>, n: usize) {
        match value {
            Some(v) => {
                self.nulls.valid_n(n);
                self.values.extend(std::iter::repeat_n(v, n));
            }
            None => {
                self.nulls.null_n(self.values.len(), n);
                self.values
                    .extend(std::iter::repeat_n(T::Native::default(), n));
            }
        }
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
        let value = (self.get)(entry, record);
        self.push_n(value, 1);
    }

    fn append_all(&mut self, entry: &EntryInfo<'_>, records: &[Record<'_>]) {
        let Some(first) = records.first() else {
            return;
        };
        let value = (self.get)(entry, first);
        if self.scope.uniform(first, value.is_none()) {
            self.push_n(value, records.len());
            return;
        }
        // The values in one pass over the records, as if none were null (the extend knows the
        // count: no capacity check per value); the validity in a second pass if any was null.
        let start = self.values.len();
        let get = &self.get;
        let mut any_null = false;
        self.values.extend(records.iter().map(|r| {
            get(entry, r).unwrap_or_else(|| {
                any_null = true;
                T::Native::default()
            })
        }));
        if any_null || self.nulls.0.is_some() {
            for (i, r) in records.iter().enumerate() {
                if get(entry, r).is_some() {
                    self.nulls.valid_n(1);
                } else {
                    self.nulls.null_n(start.saturating_add(i), 1);
                }
            }
        }
    }

    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        let rows = self.values.len();
        let values = std::mem::replace(&mut self.values, Vec::with_capacity(rows));
        let array = PrimitiveArray::<T>::try_new(ScalarBuffer::from(values), self.nulls.finish())?
            .with_data_type(self.field.data_type().clone());
        Ok(Arc::new(array))
    }
}

/// A non-null string column of a few short texts repeated over runs of rows (the topic, the
/// codec, the timestamp type): a text and a row count per run, one entry's rows taken at once
/// when `scope` allows, the array made at finish (one run, the usual case, without checking
/// the text again, and shared with the previous record batch when that had the same one run:
/// full record batches of one partition all do).
struct Runs<F> {
    field: FieldRef,
    /// The runs: a text, and on how many consecutive rows.
    runs: Vec<(String, usize)>,
    /// The last one-run array made, with its run.
    last: Option<((String, usize), ArrayRef)>,
    get: F,
    scope: Scope,
}

impl<F> Runs<F>
where
    F: for<'e> Fn(&EntryInfo<'e>, &Record<'_>) -> &'e str + Send,
{
    fn new(field: FieldRef, scope: Scope, get: F) -> Self {
        Runs {
            field,
            runs: Vec::new(),
            last: None,
            get,
            scope,
        }
    }

    /// Appends `text` `n` times.
    #[inline]
    fn push_n(&mut self, text: &str, n: usize) {
        match self.runs.last_mut() {
            Some((last, count)) if last == text => *count = count.saturating_add(n),
            _ => self.runs.push((text.to_owned(), n)),
        }
    }
}

impl<F> ColumnBuilder for Runs<F>
where
    F: for<'e> Fn(&EntryInfo<'e>, &Record<'_>) -> &'e str + Send,
{
    fn field(&self) -> FieldRef {
        self.field.clone()
    }

    #[inline]
    fn append(&mut self, entry: &EntryInfo<'_>, record: &Record<'_>) {
        let text = (self.get)(entry, record);
        self.push_n(text, 1);
    }

    fn append_all(&mut self, entry: &EntryInfo<'_>, records: &[Record<'_>]) {
        match records.first() {
            Some(first) if self.scope.uniform(first, false) => {
                let text = (self.get)(entry, first);
                self.push_n(text, records.len());
            }
            _ => {
                for r in records {
                    self.append(entry, r);
                }
            }
        }
    }

    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        let mut runs = std::mem::take(&mut self.runs);
        let array = match runs.as_slice() {
            [] => StringArray::new_repeated("", 0),
            [run] => {
                if let Some((last, array)) = &self.last {
                    if last == run {
                        return Ok(array.clone());
                    }
                }
                // A record batch's bytes, the topic's included, stay below `MAX_BATCH_BYTES`.
                let array: ArrayRef = Arc::new(StringArray::new_repeated(&run.0, run.1));
                self.last = runs.pop().map(|run| (run, array.clone()));
                return Ok(array);
            }
            _ => {
                let mut values = Vec::new();
                let mut offsets = vec![0i32];
                for (text, n) in &runs {
                    for _ in 0..*n {
                        values.extend_from_slice(text.as_bytes());
                        offsets.push(i32::try_from(values.len()).unwrap_or(i32::MAX));
                    }
                }
                StringArray::try_new(
                    OffsetBuffer::new(ScalarBuffer::from(offsets)),
                    Buffer::from_vec(values),
                    None,
                )?
            }
        };
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

/// The buffers behind a [`Bytes`] column.
enum BytesKind {
    Binary(BinaryBuffers),
    Utf8(StringBuilder),
}

/// A binary column's bytes, offsets and validity, as plain vectors.
struct BinaryBuffers {
    /// The values, one after the other.
    values: Vec<u8>,
    /// Offsets into `values`: row i is `offsets[i]..offsets[i + 1]`. Starts with 0.
    offsets: Vec<i32>,
    nulls: Nulls,
}

impl BinaryBuffers {
    fn new() -> Self {
        BinaryBuffers {
            values: Vec::new(),
            offsets: vec![0],
            nulls: Nulls::default(),
        }
    }

    #[inline]
    fn push(&mut self, bytes: Option<&[u8]>) {
        match bytes {
            Some(b) => {
                self.nulls.valid_n(1);
                self.values.extend_from_slice(b);
            }
            None => self.nulls.null_n(self.offsets.len().saturating_sub(1), 1),
        }
        // A record batch's bytes stay below `MAX_BATCH_BYTES`, far below i32::MAX.
        self.offsets
            .push(i32::try_from(self.values.len()).unwrap_or(i32::MAX));
    }

    /// Appends rows, the offsets in one extend (no capacity check per row).
    #[inline]
    fn extend<'a>(&mut self, rows: impl ExactSizeIterator<Item = Option<&'a [u8]>>) {
        let (values, nulls) = (&mut self.values, &mut self.nulls);
        let mut row = self.offsets.len().saturating_sub(1);
        self.offsets.extend(rows.map(|bytes| {
            match bytes {
                Some(b) => {
                    nulls.valid_n(1);
                    values.extend_from_slice(b);
                }
                None => nulls.null_n(row, 1),
            }
            row = row.saturating_add(1);
            // A record batch's bytes stay below `MAX_BATCH_BYTES`, far below i32::MAX.
            i32::try_from(values.len()).unwrap_or(i32::MAX)
        }));
    }

    /// The array of the rows so far; the next one starts with buffers of the same capacity, so
    /// that it does not grow them from nothing again.
    fn finish(&mut self) -> Result<BinaryArray, ArrowError> {
        let (rows, bytes) = (self.offsets.len(), self.values.len());
        let mut offsets = Vec::with_capacity(rows);
        offsets.push(0);
        let offsets = std::mem::replace(&mut self.offsets, offsets);
        let values = std::mem::replace(&mut self.values, Vec::with_capacity(bytes));
        BinaryArray::try_new(
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from_vec(values),
            self.nulls.finish(),
        )
    }
}

impl<F> Bytes<F>
where
    F: for<'a> Fn(&Record<'a>) -> Option<&'a [u8]> + Send,
{
    fn new(field: FieldRef, format: BytesFormat, get: F) -> Self {
        let kind = match format {
            BytesFormat::Binary => BytesKind::Binary(BinaryBuffers::new()),
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
            BytesKind::Binary(b) => b.push(bytes),
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
            BytesKind::Binary(b) => b.extend(records.iter().map(|r| (self.get)(r))),
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
            BytesKind::Binary(b) => Arc::new(b.finish()?),
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
    /// The last array made of rows without any header, and its row count: record batches of
    /// such rows (the usual case) share it.
    empty: Option<(usize, ArrayRef)>,
}

impl HeadersColumn {
    fn new(field: FieldRef) -> Self {
        HeadersColumn {
            field,
            offsets: vec![0],
            keys: StringBuilder::new(),
            values: BinaryBuilder::new(),
            invalid: 0,
            empty: None,
        }
    }
}

impl ColumnBuilder for HeadersColumn {
    fn field(&self) -> FieldRef {
        self.field.clone()
    }

    #[inline]
    fn append(&mut self, _: &EntryInfo<'_>, record: &Record<'_>) {
        let headers = record.headers();
        if !headers.is_empty() {
            for h in headers {
                if !append_utf8(&mut self.keys, Some(h.key)) {
                    self.invalid = self.invalid.saturating_add(1);
                }
                self.values.append_option(h.value);
            }
        }
        // The batch's bytes are bounded far below i32::MAX (see `MAX_BATCH_BYTES`), and every
        // header takes at least two bytes, so the count fits.
        let count = i32::try_from(self.values.len()).unwrap_or(i32::MAX);
        self.offsets.push(count);
    }

    fn append_all(&mut self, _: &EntryInfo<'_>, records: &[Record<'_>]) {
        if records.iter().all(|r| r.headers().is_empty()) {
            // As in `append`.
            let count = i32::try_from(self.values.len()).unwrap_or(i32::MAX);
            self.offsets
                .extend(std::iter::repeat_n(count, records.len()));
            return;
        }
        let (keys, values, invalid) = (&mut self.keys, &mut self.values, &mut self.invalid);
        self.offsets.extend(records.iter().map(|r| {
            let headers = r.headers();
            if !headers.is_empty() {
                for h in headers {
                    if !append_utf8(keys, Some(h.key)) {
                        *invalid = invalid.saturating_add(1);
                    }
                    values.append_option(h.value);
                }
            }
            // As in `append`.
            i32::try_from(values.len()).unwrap_or(i32::MAX)
        }));
    }

    fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        let rows = self.offsets.len().saturating_sub(1);
        if self.values.is_empty() {
            if let Some((n, array)) = &self.empty {
                if *n == rows {
                    self.offsets.truncate(1);
                    return Ok(array.clone());
                }
            }
        }
        let no_headers = self.values.is_empty();
        let keys: ArrayRef = Arc::new(self.keys.finish());
        let values: ArrayRef = Arc::new(self.values.finish());
        let items = StructArray::try_new(header_fields(), vec![keys, values], None)?;
        let mut next = Vec::with_capacity(self.offsets.len());
        next.push(0);
        let offsets = std::mem::replace(&mut self.offsets, next);
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        let list = ListArray::try_new(Arc::new(header_item()), offsets, Arc::new(items), None)?;
        let list: ArrayRef = Arc::new(list);
        if no_headers {
            self.empty = Some((rows, list.clone()));
        }
        Ok(list)
    }

    fn invalid(&self) -> u64 {
        self.invalid
    }
}
