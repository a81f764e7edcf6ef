//! Append validation and offset assignment on the leader path: Kafka's
//! `UnifiedLog.analyzeAndValidateRecords` followed by `LogValidator`.
//!
//! 1. Shallow pass over the entries (any magic): a v2 batch from a client must have base offset
//!    0 (`INVALID_RECORD`); every entry must fit `max.message.bytes` counting its 12-byte prefix
//!    (`MESSAGE_TOO_LARGE`) and pass its CRC (`CORRUPT_MESSAGE`). A truncated trailing entry is
//!    dropped, as Kafka trims it; an append with no complete entry is `INVALID_RECORD`.
//! 2. The codec the log stores is `compression.type`, or the producer's for `producer`; the
//!    magic is `message.format.version`'s.
//! 3. Uncompressed in and out, same magic: offsets are assigned in place. For v2 that rewrites the
//!    base offset and the partition leader epoch, which the CRC does not cover; the max timestamp
//!    (and for LogAppendTime the attributes) only when they change, with a new CRC. For v1 the
//!    offset field, and the timestamp when it changes. For v0 the offset field.
//! 4. Uncompressed in and out, another magic: the records are rebuilt into one entry (v2) or
//!    one message each (v0/v1) of the log's magic: up-conversion of v0/v1 to v2, or
//!    down-conversion when the log is configured for an older format.
//! 5. Compressed in or out: records are decompressed and checked; the batch is kept as it is
//!    (offsets and timestamps patched) when codec and magic already match, the magic is not 0
//!    and the inner offsets run 0, 1, 2, ...; otherwise rebuilt with the target codec.
//!
//! Batch checks (Kafka's `validateBatch`): one magic per append; from a client, for v2, a
//! positive record count equal to `last offset delta + 1`, a zero base offset, one batch only, no
//! control batch, a base sequence with a producer id (the coordinator, which writes transaction
//! markers, skips these); no transactional or idempotent data below magic 2
//! (`UNSUPPORTED_FOR_MESSAGE_FORMAT`). Record checks (`validateRecord`): inner magic equal to
//! the wrapper's, inner CRC of v0/v1 compressed messages (`CORRUPT_MESSAGE`), a key on compacted
//! logs, and CreateTime timestamps within `now - before.max.ms ..= now + after.max.ms`
//! (`INVALID_TIMESTAMP`). Record errors are collected per batch as Kafka's produce response lists
//! them.
//!
//! An uncompressed control batch is never compressed, whatever `compression.type` says (Kafka's
//! "do not compress control records unless they are written compressed"); a control batch that
//! would have to be rebuilt is refused (`INVALID_RECORD`) rather than rebuilt as a data batch.
//!
//! One deliberate difference: an uncompressed v2 batch whose record offset deltas do not run 0, 1,
//! 2, ... is rebuilt instead of stored as is (Kafka does so for compressed batches only), so
//! every stored batch reads back with the offsets the broker assigned.

use crate::config::LogConfig;
use crate::error::{Error, Location, RecordError, Result};
use krecords_codec::layout::v2 as v2_layout;
use krecords_codec::patch::assign_offsets;
use krecords_codec::read::{Batch, LegacyRecord, Record, V2Records};
use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, Header, TimestampType};

/// Who is appending (Kafka's `AppendOrigin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AppendOrigin {
    /// A producer: the batch is validated and the log assigns offsets; control batches are
    /// refused; idempotent batches get duplicate and sequence checks.
    Client,
    /// The transaction coordinator writing COMMIT / ABORT markers (see
    /// [`Log::append_end_txn`](crate::Log::append_end_txn)): control batches are allowed, the client-only batch checks and
    /// the sequence checks are skipped, epochs and coordinator epochs are checked.
    Coordinator,
    /// Entries that already have their offsets, such as the batches of an existing segment
    /// (Kafka's `REPLICATION` origin: a follower appends the leader's batches as they are).
    /// They are stored byte for byte: each entry must be whole, within `max.message.bytes`
    /// and have a valid CRC, and the offsets are the entries' own, the first at or past the log
    /// end offset and each entry's past the one before it (a gap is allowed, as on a
    /// replica); [`Error::InvalidRecord`](crate::Error::InvalidRecord) otherwise.
    /// Records are not validated again, control batches are taken, the producer state is
    /// updated from the batches without duplicate, epoch or sequence checks, and the leader
    /// epoch cache from their partition leader epochs. One append may hold many entries.
    /// To move batches to other offsets first, use
    /// [`krecords_codec::write::set_base_offset`].
    Import,
}

/// The result of validating one append.
#[derive(Debug)]
pub(crate) struct Validated<'a> {
    /// The entries to write, offsets assigned; with a non-empty `tail`, the patched header of
    /// the one v2 batch, whose records `tail` borrows from the input.
    pub(crate) bytes: Vec<u8>,
    /// The rest of the one v2 batch stored as sent (after its header), or empty.
    pub(crate) tail: &'a [u8],
    pub(crate) first_offset: i64,
    pub(crate) last_offset: i64,
    pub(crate) record_count: u64,
    /// The time used for LogAppendTime (and timestamp checks).
    pub(crate) now: i64,
    /// Whether the records were rebuilt (conversion or recompression).
    pub(crate) rebuilt: bool,
    /// Bytes of a truncated trailing entry that were dropped.
    pub(crate) trimmed_bytes: usize,
}

impl Validated<'_> {
    /// The log's next offset after the append: `last_offset + 1`, which [`offset_after`] made
    /// sure exists (it saturates only where that was not the case, which is never).
    pub(crate) fn next_offset(&self) -> i64 {
        self.last_offset.saturating_add(1)
    }
}

/// Where the validator gets its settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings<'c> {
    pub(crate) config: &'c LogConfig,
    pub(crate) now: i64,
    pub(crate) partition_leader_epoch: i32,
    pub(crate) origin: AppendOrigin,
}

/// The log's next offset after `count` offsets from `first`: an append whose last offset
/// would be `i64::MAX` (or past it) is `INVALID_RECORD` at `at`, for it would leave the log no
/// next offset (recovery cuts an entry ending at `i64::MAX`: `segment::offsets_check`). Every
/// append's offsets go through here, so `last_offset + 1` of a [`Validated`] cannot overflow.
pub(crate) fn offset_after(first: i64, count: u64, at: Location) -> Result<i64> {
    i64::try_from(count)
        .ok()
        .and_then(|n| first.checked_add(n))
        .ok_or_else(|| {
            Error::invalid_record(
                at,
                format!(
                    "{count} offset(s) from {first} would end at or past offset {}: no offset \
                     could follow, so the log would have no end",
                    i64::MAX
                ),
            )
        })
}

fn at(position: usize) -> Location {
    Location::Append { position }
}

/// Kafka's `recordHasInvalidTimestamp`, with its 64-bit arithmetic: `now - ts` and its negation
/// wrap as Java's longs do, so a timestamp so far from `now` that the difference overflows is
/// taken, as the broker takes it (found by the differential tests against Kafka's log).
fn timestamp_out_of_range(now: i64, ts: i64, config: &LogConfig) -> bool {
    let diff = now.wrapping_sub(ts);
    diff > config.message_timestamp_before_max_ms
        || diff.wrapping_neg() > config.message_timestamp_after_max_ms
}

/// Maps a codec error met while reading records of the batch at `batch_at`.
fn record_read_error(batch_at: usize, e: krecords_codec::Error) -> Error {
    use krecords_codec::Error as C;
    let loc = at(e.position().unwrap_or(batch_at));
    match e {
        // As a Kafka broker answers a produce whose compressed records do not decompress (it
        // has no limit; data that would exceed ours is refused the same way).
        C::Decompress { .. } | C::DecompressLimit { .. } => {
            Error::UndecodableRecords { at: loc, source: e }
        }
        C::UnknownCompression { .. } | C::CrcMismatch { .. } => Error::corrupt_codec(loc, e),
        C::InvalidLength {
            what: "inner message size",
            ..
        } => Error::corrupt_codec(loc, e),
        // zstd in a v0/v1 wrapper: Kafka's legacy iterator refuses it as an invalid record.
        C::UnsupportedCompression { .. } => Error::invalid_record(loc, e.to_string()),
        C::Compress { .. }
        | C::InvalidLevel { .. }
        | C::Unencodable { .. }
        | C::ConfigAfterAppend { .. } => Error::Codec { at: loc, source: e },
        _ => Error::invalid_record(loc, e.to_string()),
    }
}

/// Maps a codec error met while building the stored batch.
fn build_error(e: krecords_codec::Error) -> Error {
    use krecords_codec::Error as C;
    match e {
        C::UnsupportedCompression { .. } => Error::UnsupportedCompressionType {
            reason: e.to_string(),
        },
        other => Error::Codec {
            at: Location::Unknown,
            source: other,
        },
    }
}

/// A record to rebuild: its fields, borrowed from the input or the decompression buffer.
struct Rec<'r> {
    timestamp: i64,
    key: Option<&'r [u8]>,
    value: Option<&'r [u8]>,
    headers: Vec<Header<'r>>,
}

/// Records of an uncompressed entry, borrowing from the input.
enum Uncompressed<'a> {
    V2(V2Records<'a>),
    One(Option<LegacyRecord<'a>>),
}

impl<'a> Iterator for Uncompressed<'a> {
    type Item = krecords_codec::Result<Record<'a>>;
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Uncompressed::V2(r) => r.next().map(|r| r.map(Record::V2)),
            Uncompressed::One(r) => r.take().map(|r| Ok(Record::Legacy(r))),
        }
    }
}

fn uncompressed_records<'a>(b: &Batch<'a>) -> Result<Uncompressed<'a>> {
    match b {
        Batch::V2(v) => v
            .uncompressed_records()
            .map(Uncompressed::V2)
            .map_err(|e| record_read_error(b.position(), e)),
        Batch::Legacy(l) => Ok(Uncompressed::One(Some(l.as_record()))),
    }
}

fn producer_fields(b: &Batch<'_>) -> (i64, i16, i32, bool) {
    match b {
        Batch::V2(v) => (
            v.raw_producer_id(),
            v.raw_producer_epoch(),
            v.raw_base_sequence(),
            v.is_transactional(),
        ),
        Batch::Legacy(_) => (-1, -1, -1, false),
    }
}

/// Kafka's `validateBatch`.
fn validate_batch(
    first: &Batch<'_>,
    b: &Batch<'_>,
    to_magic: u8,
    origin: AppendOrigin,
) -> Result<()> {
    let loc = at(b.position());
    if first.magic() != b.magic() {
        return Err(Error::invalid_record(
            loc,
            format!(
                "batch magic {} is not the same as the first batch's magic {}",
                b.magic(),
                first.magic()
            ),
        ));
    }
    let (producer_id, _, base_sequence, transactional) = producer_fields(b);
    let from_client = origin == AppendOrigin::Client;
    if let (Batch::V2(v), true) = (b, from_client) {
        let base = v.base_offset();
        let last = v.last_offset();
        let from_offsets = i64::from(v.last_offset_delta()) + 1;
        if from_offsets <= 0 {
            return Err(Error::invalid_record(
                loc,
                format!("batch has an invalid offset range [{base}, {last}]"),
            ));
        }
        let count = v.records_count();
        if count <= 0 {
            return Err(Error::invalid_record(
                loc,
                format!("invalid record count {count}"),
            ));
        }
        if from_offsets != i64::from(count) {
            return Err(Error::invalid_record(
                loc,
                format!(
                    "inconsistent batch offset range [{base}, {last}] and record count {count}"
                ),
            ));
        }
        if v.is_control() {
            return Err(Error::invalid_record(
                loc,
                "clients are not allowed to write control records",
            ));
        }
        if producer_id >= 0 && base_sequence < 0 {
            return Err(Error::invalid_record(
                loc,
                format!("invalid sequence number {base_sequence} in a batch with producer id {producer_id}"),
            ));
        }
    }
    if transactional && to_magic < 2 {
        return Err(Error::UnsupportedForMessageFormat {
            reason: format!("transactional records cannot be stored with magic {to_magic}"),
        });
    }
    if producer_id >= 0 && to_magic < 2 {
        return Err(Error::UnsupportedForMessageFormat {
            reason: format!("idempotent records cannot be stored with magic {to_magic}"),
        });
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RecordErrorKind {
    InvalidRecord,
    InvalidTimestamp,
}

/// Kafka's `validateRecord`: `Err` for errors that fail the append at once (an inner CRC),
/// `Ok(Some(..))` for a record error to collect.
fn validate_record(
    s: &Settings<'_>,
    b: &Batch<'_>,
    record: &Record<'_>,
    index: usize,
) -> Result<Option<(RecordErrorKind, RecordError)>> {
    let record_magic = match record {
        Record::Legacy(r) => r.magic,
        Record::V2(_) => 2,
    };
    let reject = |kind, message: String| {
        Ok(Some((
            kind,
            RecordError {
                batch_index: index,
                message,
            },
        )))
    };
    if record_magic != b.magic() {
        return reject(
            RecordErrorKind::InvalidRecord,
            format!(
                "record magic {record_magic} does not match the batch magic {}",
                b.magic()
            ),
        );
    }
    if let (Record::Legacy(r), Batch::Legacy(l)) = (record, b) {
        if l.is_compressed() {
            if (r.attributes & krecords_codec::layout::legacy::COMPRESSION_MASK) != 0 {
                return reject(
                    RecordErrorKind::InvalidRecord,
                    "compressed outer record should not have an inner record with a compression attribute set".into(),
                );
            }
            let computed = r.compute_crc();
            if computed != r.crc {
                return Err(Error::corrupt(
                    at(b.position()),
                    format!(
                        "inner message at offset {} has crc {} but its bytes give {computed}",
                        r.offset, r.crc
                    ),
                ));
            }
        }
    }
    if s.config.cleanup_policy.compact && record.key().is_none() {
        return reject(
            RecordErrorKind::InvalidRecord,
            "compacted topic cannot accept message without key".into(),
        );
    }
    let ts = record.timestamp().unwrap_or(-1);
    let config = s.config;
    if config.message_timestamp_type == TimestampType::CreateTime && ts != -1 {
        if timestamp_out_of_range(s.now, ts, config) {
            let lo = i128::from(s.now) - i128::from(config.message_timestamp_before_max_ms);
            let hi = i128::from(s.now) + i128::from(config.message_timestamp_after_max_ms);
            return reject(
                RecordErrorKind::InvalidTimestamp,
                format!(
                    "timestamp {ts} of message with offset {} is out of range; it must be within [{lo}, {hi}]",
                    record.offset()
                ),
            );
        }
    } else if b.timestamp_type() == TimestampType::LogAppendTime {
        return reject(
            RecordErrorKind::InvalidTimestamp,
            "invalid timestamp type: producers should not set LogAppendTime".into(),
        );
    }
    Ok(None)
}

/// Kafka's `processRecordErrors`.
fn record_errors_to_error(
    b: &Batch<'_>,
    errors: Vec<(RecordErrorKind, RecordError)>,
) -> Result<()> {
    if errors.is_empty() {
        return Ok(());
    }
    let any_timestamp = errors
        .iter()
        .any(|(k, _)| *k == RecordErrorKind::InvalidTimestamp);
    let n = errors.len();
    let record_errors: Vec<RecordError> = errors.into_iter().map(|(_, e)| e).collect();
    let loc = at(b.position());
    if any_timestamp {
        Err(Error::InvalidTimestamp {
            at: loc,
            reason: format!("{n} record(s) rejected because of invalid timestamps"),
            record_errors,
        })
    } else {
        let first = record_errors
            .first()
            .map(|e| e.message.clone())
            .unwrap_or_default();
        Err(Error::InvalidRecord {
            at: loc,
            reason: format!("{n} record(s) rejected, the first: {first}"),
            record_errors,
        })
    }
}

/// The checks of an [`AppendOrigin::Import`] append (Kafka's replica path, which appends with
/// the leader's offsets): `input` is whole entries of any format, kept byte for byte; each is
/// framed, within `max.message.bytes` and has a valid CRC, and the offsets are taken from the
/// entries: the first at or past `next_offset` (the log end), every entry's first offset past
/// the previous entry's last. Records are not looked at otherwise (no timestamp, key or
/// compression rules: the batches were validated where they were first appended).
pub(crate) fn import<'a>(
    input: &'a [u8],
    next_offset: i64,
    config: &LogConfig,
) -> Result<Validated<'a>> {
    let max = usize::try_from(config.max_message_bytes).unwrap_or(0);
    // Whole entries only: a truncated or corrupt size is an error, not a tail to trim.
    let entries = krecords_codec::read::Entries::new(input).strict();
    let mut first_offset = None;
    let mut last_offset = next_offset.saturating_sub(1);
    let mut record_count = 0u64;
    let mut scratch = Vec::new();
    for entry in entries {
        let b = entry.map_err(|e| Error::corrupt_codec(at(e.position().unwrap_or(0)), e))?;
        let loc = at(b.position());
        if b.size_in_bytes() > max {
            return Err(Error::MessageTooLarge {
                at: loc,
                size: b.size_in_bytes(),
                max: config.max_message_bytes,
            });
        }
        if !b.is_crc_valid() {
            return Err(Error::corrupt_codec(
                loc,
                krecords_codec::Error::CrcMismatch {
                    at: b.position(),
                    stored: b.crc(),
                    computed: b.compute_crc(),
                },
            ));
        }
        let span = b
            .record_span(&mut scratch, krecords_codec::DEFAULT_DECOMPRESS_LIMIT)
            .map_err(|e| record_read_error(b.position(), e))?;
        if span.first_offset <= last_offset || span.last_offset < span.first_offset {
            let what = if first_offset.is_none() {
                format!("the log end offset {next_offset}")
            } else {
                format!("the previous entry's last offset {last_offset}")
            };
            return Err(Error::invalid_record(
                loc,
                format!(
                    "imported offsets [{}, {}] do not follow {what}",
                    span.first_offset, span.last_offset
                ),
            ));
        }
        // The offset after it must exist (span.last_offset >= span.first_offset >= 0 here).
        let span_len = span
            .last_offset
            .abs_diff(span.first_offset)
            .saturating_add(1);
        offset_after(span.first_offset, span_len, loc)?;
        first_offset.get_or_insert(span.first_offset);
        last_offset = span.last_offset;
        record_count = record_count.saturating_add(span.count as u64);
    }
    let Some(first_offset) = first_offset else {
        return Err(Error::invalid_record(at(0), "no entries to import"));
    };
    Ok(Validated {
        bytes: input.to_vec(),
        tail: &[],
        first_offset,
        last_offset,
        record_count,
        now: -1,
        rebuilt: false,
        trimmed_bytes: 0,
    })
}

/// Validates and assigns offsets to `input`, the payload of one produce request for this
/// partition, starting at `next_offset`. On error nothing has been written anywhere.
pub(crate) fn validate<'a>(
    input: &'a [u8],
    next_offset: i64,
    s: &Settings<'_>,
) -> Result<Validated<'a>> {
    let config = s.config;
    // 0. A produce request's own check (Kafka's `ProduceRequest.validateRecords`, produce v3+,
    //    which is every produce that carries a v2 batch): exactly one batch. Framing the second
    //    entry comes first, so a broken one is CORRUPT_MESSAGE, as Kafka's iterator throws.
    if s.origin == AppendOrigin::Client {
        let mut two = krecords_codec::read::Entries::new(input);
        if let Ok(Some(first)) = two.next_entry() {
            if first.magic() >= 2 {
                match two.next_entry() {
                    Err(e) => return Err(Error::corrupt_codec(at(e.position().unwrap_or(0)), e)),
                    Ok(Some(second)) => {
                        return Err(Error::invalid_record(
                            at(second.position()),
                            "more than one batch: a produce request carries exactly one record batch per partition",
                        ))
                    }
                    Ok(None) => {}
                }
            }
        }
    }
    // 1. The shallow pass (Kafka's analyzeAndValidateRecords).
    let mut entries = krecords_codec::read::Entries::new(input);
    let mut batches: Vec<Batch<'_>> = Vec::new();
    let mut source = Compression::None;
    for entry in entries.by_ref() {
        let b = entry.map_err(|e| Error::corrupt_codec(at(e.position().unwrap_or(0)), e))?;
        let loc = at(b.position());
        if s.origin == AppendOrigin::Client && b.magic() >= 2 && b.offset_field() != 0 {
            return Err(Error::invalid_record(
                loc,
                format!(
                    "the base offset of the record batch should be 0, but it is {}",
                    b.offset_field()
                ),
            ));
        }
        if b.size_in_bytes() > usize::try_from(config.max_message_bytes).unwrap_or(0) {
            return Err(Error::MessageTooLarge {
                at: loc,
                size: b.size_in_bytes(),
                max: config.max_message_bytes,
            });
        }
        if !b.is_crc_valid() {
            return Err(Error::corrupt(
                loc,
                format!(
                    "record is corrupt (stored crc {}, computed {})",
                    b.crc(),
                    b.compute_crc()
                ),
            ));
        }
        let codec = b.compression().map_err(|e| match e {
            // zstd in a v0/v1 message: Kafka's legacy iterator refuses it as an invalid record.
            krecords_codec::Error::UnsupportedCompression { .. } => {
                Error::invalid_record(loc.clone(), e.to_string())
            }
            e => Error::corrupt_codec(loc.clone(), e),
        })?;
        if codec != Compression::None {
            source = codec;
        }
        batches.push(b);
    }
    let valid_bytes = entries.next_position();
    let trimmed_bytes = input.len() - valid_bytes;
    let Some(first) = batches.first().copied() else {
        return Err(Error::invalid_record(
            at(0),
            "the append holds no complete record batch",
        ));
    };
    let (target, level) = config.target_compression(source);
    let to_magic = config.record_magic();
    let input = &input[..valid_bytes];

    // getFirstBatchAndMaybeValidateNoMoreBatches
    if (first.magic() >= 2 || source != Compression::None) && batches.len() > 1 {
        return Err(Error::invalid_record(
            at(batches[1].position()),
            "compressed outer record has more than one batch",
        ));
    }

    let done = |bytes: Vec<u8>, tail: &'a [u8], count: u64, rebuilt: bool| {
        Ok(Validated {
            bytes,
            tail,
            first_offset: next_offset,
            last_offset: offset_after(next_offset, count, at(0))? - 1,
            record_count: count,
            now: s.now,
            rebuilt,
            trimmed_bytes,
        })
    };

    if source == Compression::None && target == Compression::None {
        if batches.iter().all(|b| b.magic() == to_magic) {
            let (bytes, tail, count) =
                assign_in_place_uncompressed(input, &batches, next_offset, s)?;
            return done(bytes, tail, count, false);
        }
        let records = collect_uncompressed(&batches, s, to_magic)?;
        offset_after(next_offset, records.len() as u64, at(0))?;
        let bytes = build(
            s,
            to_magic,
            Compression::None,
            None,
            next_offset,
            &first,
            &records,
        )?;
        return done(bytes, &[], records.len() as u64, true);
    }

    // 5. The compressed path (Kafka's validateMessagesAndAssignOffsetsCompressed).
    let mut in_place = source == target && first.magic() == to_magic && to_magic != 0;
    let control = matches!(&first, Batch::V2(v) if v.is_control());
    if source == Compression::None && control {
        in_place = true;
    }
    let mut scratch = Vec::new();
    let mut max_timestamp = -1i64;
    let records: Vec<Rec<'_>> = if source != Compression::None {
        validate_batch(&first, &first, to_magic, s.origin)?;
        let iter = first
            .records(&mut scratch, krecords_codec::DEFAULT_DECOMPRESS_LIMIT)
            .map_err(|e| record_read_error(first.position(), e))?;
        let mut out = Vec::new();
        check_records(
            s,
            &first,
            iter,
            to_magic,
            &mut 0,
            &mut in_place,
            &mut max_timestamp,
            &mut out,
        )?;
        out
    } else {
        let mut out = Vec::new();
        let mut expected = 0i64;
        for b in &batches {
            validate_batch(&first, b, to_magic, s.origin)?;
            let iter = uncompressed_records(b)?;
            check_records(
                s,
                b,
                iter,
                to_magic,
                &mut expected,
                &mut in_place,
                &mut max_timestamp,
                &mut out,
            )?;
        }
        out
    };
    let count = records.len() as u64;
    let last_offset = offset_after(next_offset, count, at(0))? - 1;
    if !in_place {
        let bytes = build(s, to_magic, target, level, next_offset, &first, &records)?;
        return done(bytes, &[], count, true);
    }
    // In place: one batch (compressed), patch offsets, timestamp and epoch.
    let mut bytes = input.to_vec();
    let ts = if config.message_timestamp_type == TimestampType::LogAppendTime {
        s.now
    } else {
        max_timestamp
    };
    patch(
        &mut bytes,
        &first,
        last_offset,
        Some((config.message_timestamp_type, ts)),
        s.partition_leader_epoch,
    )?;
    done(bytes, &[], count, false)
}

/// Validates the records of one batch of the compressed path, collecting them for a rebuild
/// and noting whether they still allow in-place assignment.
#[allow(clippy::too_many_arguments)]
fn check_records<'r>(
    s: &Settings<'_>,
    b: &Batch<'_>,
    iter: impl Iterator<Item = krecords_codec::Result<Record<'r>>>,
    to_magic: u8,
    expected_offset: &mut i64,
    in_place: &mut bool,
    max_timestamp: &mut i64,
    out: &mut Vec<Rec<'r>>,
) -> Result<()> {
    let mut errors = Vec::new();
    for (index, record) in iter.enumerate() {
        let record = record.map_err(|e| record_read_error(b.position(), e))?;
        let expected = *expected_offset;
        *expected_offset += 1;
        if let Some(err) = validate_record(s, b, &record, index)? {
            errors.push(err);
            continue;
        }
        if b.magic() > 0 && to_magic > 0 {
            let ts = record.timestamp().unwrap_or(-1);
            if ts > *max_timestamp {
                *max_timestamp = ts;
            }
            if record.offset() != expected {
                *in_place = false;
            }
        }
        out.push(rec_of(&record));
    }
    record_errors_to_error(b, errors)
}

fn rec_of<'r>(record: &Record<'r>) -> Rec<'r> {
    Rec {
        timestamp: record.timestamp().unwrap_or(-1),
        key: record.key(),
        value: record.value(),
        headers: record.headers().collect(),
    }
}

/// Validates every batch and record of an uncompressed append and collects the records.
fn collect_uncompressed<'a>(
    batches: &[Batch<'a>],
    s: &Settings<'_>,
    to_magic: u8,
) -> Result<Vec<Rec<'a>>> {
    let first = batches[0];
    let mut out = Vec::new();
    for b in batches {
        validate_batch(&first, b, to_magic, s.origin)?;
        let mut errors = Vec::new();
        for (index, record) in uncompressed_records(b)?.enumerate() {
            let record = record.map_err(|e| record_read_error(b.position(), e))?;
            match validate_record(s, b, &record, index)? {
                Some(err) => errors.push(err),
                None => out.push(rec_of(&record)),
            }
        }
        record_errors_to_error(b, errors)?;
    }
    Ok(out)
}

/// Kafka's `assignOffsetsNonCompressed`: offsets assigned in place, the records (and their
/// offset deltas, in whatever order) left as they are; never a rebuild. Returns the entries,
/// the borrowed tail (see below) and the record count.
///
/// A single non-control v2 batch is not copied: the result is its patched header and the rest
/// of the input, borrowed.
fn assign_in_place_uncompressed<'a>(
    input: &'a [u8],
    batches: &[Batch<'_>],
    next_offset: i64,
    s: &Settings<'_>,
) -> Result<(Vec<u8>, &'a [u8], u64)> {
    let first = batches[0];
    let tt = s.config.message_timestamp_type;
    // (batch, last offset assigned, timestamp to set)
    let mut patches = Vec::with_capacity(batches.len());
    let mut counter = next_offset;
    for b in batches {
        validate_batch(&first, b, b.magic(), s.origin)?;
        let mut errors = Vec::new();
        let mut max_batch_ts = -1i64;
        if let Some((count, max_ts)) = lean_scan(s, b) {
            counter = offset_after(counter, count.unsigned_abs(), at(b.position()))?;
            let ts = match tt {
                TimestampType::LogAppendTime => Some((tt, s.now)),
                _ => Some((tt, max_ts)),
            };
            patches.push((*b, counter - 1, ts));
            continue;
        }
        for (index, record) in uncompressed_records(b)?.enumerate() {
            let record = record.map_err(|e| record_read_error(b.position(), e))?;
            if let Some(err) = validate_record(s, b, &record, index)? {
                errors.push(err);
            }
            // Offset deltas are kept as they are, even out of order: Kafka's
            // `assignOffsetsNonCompressed` never rebuilds a v2 batch (differential tests).
            counter = offset_after(counter, 1, at(b.position()))?;
            if b.magic() > 0 {
                max_batch_ts = max_batch_ts.max(record.timestamp().unwrap_or(-1));
            }
        }
        record_errors_to_error(b, errors)?;
        let ts = match (b.magic(), tt) {
            (0, _) => None,
            (_, TimestampType::LogAppendTime) => Some((tt, s.now)),
            _ => Some((tt, max_batch_ts)),
        };
        patches.push((*b, counter - 1, ts));
    }
    let count = counter.abs_diff(next_offset);
    if let [(b @ Batch::V2(v), last, ts)] = patches.as_slice() {
        // No timestamp or attribute change, so the CRC stays: patch a copy of the header only.
        let crc_stays =
            !matches!(ts, Some((tt, ts)) if v.timestamp_type() != *tt || v.max_timestamp() != *ts);
        if crc_stays
            && !v.is_control()
            && b.position() == 0
            && b.size_in_bytes() == input.len()
            && input.len() > v2_layout::RECORDS_OFFSET
        {
            let (head, tail) = input.split_at(v2_layout::RECORDS_OFFSET);
            let mut head = head.to_vec();
            patch(&mut head, b, *last, *ts, s.partition_leader_epoch)?;
            return Ok((head, tail, count));
        }
    }
    let mut bytes = input.to_vec();
    for (b, last, ts) in patches {
        patch(&mut bytes, &b, last, ts, s.partition_leader_epoch)?;
    }
    Ok((bytes, &[], count))
}

/// The records of an uncompressed v2 batch checked without building them, through the codec's
/// [`V2Batch::scan_records`](krecords_codec::read::V2Batch::scan_records) (its record parser):
/// every record frames, its offset delta is its index, and no record would be rejected by
/// [`validate_record`]. Returns the record count and the batch's max timestamp when all is well,
/// `None` on any doubt (the caller then takes the full path, which reports the exact error).
fn lean_scan(s: &Settings<'_>, b: &Batch<'_>) -> Option<(i64, i64)> {
    let Batch::V2(v) = b else {
        return None;
    };
    if v.timestamp_type() != TimestampType::CreateTime
        || !matches!(v.compression(), Ok(Compression::None))
        || v.records_count() <= 0
    {
        return None;
    }
    let config = s.config;
    let check_ts = config.message_timestamp_type == TimestampType::CreateTime;
    let compact = config.cleanup_policy.compact;
    let mut index = 0i32;
    let scan = v.scan_records(|r| {
        let ok = r.offset_delta == index
            && !(compact && r.key.is_none())
            && !(check_ts
                && r.timestamp != -1
                && timestamp_out_of_range(s.now, r.timestamp, config));
        index = index.wrapping_add(1);
        ok
    })?;
    Some((scan.count as i64, scan.max_timestamp))
}

/// Kafka's `setLastOffset` / `setMaxTimestamp` / `setPartitionLeaderEpoch` on the copy of `b` in
/// `bytes` (same position), through the codec's [`assign_offsets`]: the offset fields, and the
/// timestamp and attributes with a new CRC only when they change.
fn patch(
    bytes: &mut [u8],
    b: &Batch<'_>,
    last_offset: i64,
    ts: Option<(TimestampType, i64)>,
    epoch: i32,
) -> Result<()> {
    let start = b.position();
    // `bytes` may hold only the header of a v2 batch whose CRC stays (see
    // `assign_in_place_uncompressed`).
    let end = (start + b.size_in_bytes()).min(bytes.len());
    assign_offsets(&mut bytes[start..end], last_offset, epoch, ts)
        .map_err(|e| Error::corrupt_codec(Location::Append { position: start }, e))
}

/// Kafka's `buildRecordsAndAssignOffsets` / the conversion path: one new entry (v2 batch or
/// v0/v1 wrapper, or one message per record when uncompressed v0/v1) of the log's magic and
/// codec, with the producer fields of the first batch.
fn build(
    s: &Settings<'_>,
    to_magic: u8,
    codec: Compression,
    level: Option<i32>,
    base_offset: i64,
    first: &Batch<'_>,
    records: &[Rec<'_>],
) -> Result<Vec<u8>> {
    if matches!(first, Batch::V2(v) if v.is_control()) {
        return Err(Error::invalid_record(
            at(first.position()),
            "a control batch cannot be converted or rebuilt",
        ));
    }
    let tt = s.config.message_timestamp_type;
    let mut out = Vec::new();
    if to_magic >= 2 {
        let (pid, epoch, seq, transactional) = producer_fields(first);
        let mut builder = V2Builder::new(base_offset)
            .compression(codec, level)
            .timestamp_type(tt, s.now)
            .producer(pid, epoch, seq)
            .transactional(transactional)
            .partition_leader_epoch(s.partition_leader_epoch);
        for (i, r) in records.iter().enumerate() {
            let rec = NewRecord::new(r.timestamp, r.key, r.value).with_headers(&r.headers);
            builder
                .append_with_offset(base_offset + i as i64, &rec)
                .map_err(build_error)?;
        }
        builder.finish_into(&mut out).map_err(build_error)?;
    } else {
        if records.iter().any(|r| !r.headers.is_empty()) {
            return Err(Error::UnsupportedForMessageFormat {
                reason: format!("record headers need magic 2, the log stores magic {to_magic}"),
            });
        }
        let mut builder = LegacyBuilder::new(to_magic, base_offset)
            .and_then(|b| b.compression(codec, level))
            .map_err(build_error)?
            .timestamp_type(tt, s.now);
        for (i, r) in records.iter().enumerate() {
            let rec = NewRecord::new(r.timestamp, r.key, r.value);
            builder
                .append_with_offset(base_offset + i as i64, &rec)
                .map_err(build_error)?;
        }
        builder.finish_into(&mut out).map_err(build_error)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use krecords_codec::write::NewRecord;

    const NOW: i64 = 1_714_000_000_000;

    fn settings(config: &LogConfig) -> Settings<'_> {
        Settings {
            config,
            now: NOW,
            partition_leader_epoch: 3,
            origin: AppendOrigin::Client,
        }
    }

    fn batch(records: &[(i64, Option<&[u8]>)]) -> Vec<u8> {
        let mut b = V2Builder::new(0).producer(7, 0, 0);
        for &(ts, key) in records {
            let h = [Header {
                key: b"h",
                value: Some(b"v"),
            }];
            b.append(&NewRecord::new(ts, key, Some(b"value")).with_headers(&h))
                .unwrap();
        }
        b.finish().unwrap()
    }

    /// The old path: the whole input copied and patched.
    fn copied(input: &[u8], next_offset: i64, s: &Settings<'_>, count: i64) -> Vec<u8> {
        let b = krecords_codec::read::Entries::new(input)
            .next()
            .unwrap()
            .unwrap();
        let mut bytes = input.to_vec();
        let ts = (s.config.message_timestamp_type, b.max_timestamp());
        patch(
            &mut bytes,
            &b,
            next_offset + count - 1,
            Some(ts),
            s.partition_leader_epoch,
        )
        .unwrap();
        bytes
    }

    #[test]
    fn one_v2_batch_is_its_patched_header_and_the_borrowed_rest() {
        let config = LogConfig::default();
        let s = settings(&config);
        let input = batch(&[(NOW, Some(b"a")), (NOW + 5, None), (NOW - 2, Some(b"c"))]);
        let v = validate(&input, 42, &s).unwrap();
        assert!(!v.rebuilt);
        assert_eq!(v.bytes.len(), v2_layout::RECORDS_OFFSET);
        assert!(std::ptr::eq(v.tail, &input[v2_layout::RECORDS_OFFSET..]));
        assert_eq!([&v.bytes[..], v.tail].concat(), copied(&input, 42, &s, 3));
        assert_eq!((v.first_offset, v.last_offset, v.record_count), (42, 44, 3));
    }

    #[test]
    fn the_lean_scan_defers_rejections_to_the_full_path() {
        let config = LogConfig::default();
        let s = settings(&config);
        let late = batch(&[(NOW, None), (NOW + 7_200_000, None)]);
        let b = krecords_codec::read::Entries::new(&late)
            .next()
            .unwrap()
            .unwrap();
        assert!(lean_scan(&s, &b).is_none());
        let e = validate(&late, 0, &s).unwrap_err();
        assert_eq!(e.kafka_name(), "INVALID_TIMESTAMP");

        let mut compact = LogConfig::default();
        compact.cleanup_policy.compact = true;
        let s = settings(&compact);
        let keyless = batch(&[(NOW, Some(b"k")), (NOW, None)]);
        let b = krecords_codec::read::Entries::new(&keyless)
            .next()
            .unwrap()
            .unwrap();
        assert!(lean_scan(&s, &b).is_none());
        let e = validate(&keyless, 0, &s).unwrap_err();
        assert_eq!(e.kafka_name(), "INVALID_RECORD");
        let keyed = batch(&[(NOW, Some(b"k")), (NOW + 1, Some(b"l"))]);
        let b = krecords_codec::read::Entries::new(&keyed)
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(lean_scan(&s, &b), Some((2, NOW + 1)));
    }
}
