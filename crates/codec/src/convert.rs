//! Conversion between message formats (magic 0, 1, 2) and codecs, following Apache Kafka's rules.
//!
//! [`convert`] rewrites a buffer of concatenated entries (a segment, a fetch response's records)
//! into another magic and/or codec; [`Converter`] does the same one entry at a time, for callers
//! that stream. Offsets are always kept exactly, gaps left by compaction included: this is a
//! rewrite of existing data, not an append, so no offsets are assigned.
//!
//! Down-conversion does what a broker does for an old consumer (`RecordsUtil.downConvert` and
//! `convertRecordBatch`, used by `LazyDownConversionRecords`); up-conversion does what Kafka 4's
//! log cleaner does when it rewrites an old batch (`MemoryRecords.buildRetainedRecordsInto`, which
//! always writes magic 2) and, for timestamps, what `LogValidator` does to an old produce request
//! (`convertAndAssignOffsetsNonCompressed`, `buildRecordsAndAssignOffsets`). Paths are under
//! `clients/src/main/java/org/apache/kafka/common/record/` and, for `LogValidator`,
//! `storage/src/main/java/org/apache/kafka/storage/internals/log/`.
//!
//! | input → target | what happens | Kafka |
//! |---|---|---|
//! | same magic and codec, timestamp type kept | the entry is copied byte for byte (counted in [`ConvertStats::entries_passed_through`]) | `RecordsUtil.downConvert`: `batch.magic() <= toMagic` → `writeTo` |
//! | v2 → v2, other codec | rebuilt with the same base offset, last offset (even past the last record, after compaction), partition leader epoch, producer id/epoch, base sequence, transactional and control flags, timestamp type, append time, delete horizon and headers | `MemoryRecords.buildRetainedRecordsInto` (`overrideLastOffset`) |
//! | v2 control batch → v2 | an uncompressed one is always copied as is; a compressed one is rebuilt with the target codec | `LogValidator`: "do not compress control records unless they are written compressed" |
//! | v2 with no records → v2 | copied as is (it keeps producer state for compaction) | `DefaultRecordBatch.writeEmptyHeader` writes them uncompressed |
//! | v2 → v0/v1 | control batches and batches with no records produce nothing; headers are dropped (counted); producer id, epoch, sequence, transactional flag, partition leader epoch and delete horizon are lost; v1 keeps timestamps and type (a LogAppendTime batch's append time is its max timestamp); v0 has no timestamps | `RecordsUtil.downConvert`, `convertRecordBatch` |
//! | v0/v1 → v2 | one v2 batch per entry (a wrapper's inner messages become one batch), or with [`ConvertOptions::legacy_run_bytes`] one per run of uncompressed messages; base offset = first offset; v0: CreateTime and timestamp -1 (`NO_TIMESTAMP`); v1: timestamps and type kept, a LogAppendTime entry's append time is its timestamp; producer fields and partition leader epoch -1 | `MemoryRecords.buildRetainedRecordsInto` (`resolveTimestampType`, `resolveLogAppendTime`, `resolveBaseOffset`) |
//! | v0 → v1 | CreateTime, timestamp -1 | `LegacyRecord` v0 reads as `NO_TIMESTAMP` |
//! | v1 → v0 | timestamps and timestamp type dropped | `MemoryRecordsBuilder` for magic 0 |
//! | any → v0/v1 uncompressed | one message per record (v0/v1 cannot batch without a wrapper) | `MemoryRecordsBuilder.appendLegacyRecord` |
//! | any → v0/v1 compressed | one wrapper per output group; inner offsets absolute (v0) or relative to the first (v1), wrapper offset = last inner offset | `MemoryRecordsBuilder.writeLegacyCompressedWrapperHeader` |
//! | zstd → v0/v1, or target zstd with v0/v1 | [`Error::UnsupportedCompression`] (Kafka's `UNSUPPORTED_COMPRESSION_TYPE`) | `MemoryRecordsBuilder`: "ZStandard compression is not supported for magic" |
//!
//! The codec defaults to each entry's own ([`ConvertOptions::compression`] `None`), as Kafka's
//! down-conversion keeps `batch.compressionType()`. One input entry gives one output entry
//! (uncompressed v0/v1 output: one per record) unless [`ConvertOptions::records_per_batch`]
//! regroups records. Kafka's `LogValidator` makes one v2 batch per produce request, so upgrading
//! uncompressed v0/v1 data one entry at a time makes one single-record v2 batch per message
//! (61 bytes of header each); set `records_per_batch` to batch them as a producer would.
//!
//! # The batching rule of `krec convert` and `krec stats --what-if`
//!
//! [`ConvertOptions::batched`] is the one rule both tools use, so that what-if's sizes are the
//! sizes convert writes: v2 batches and compressed v0/v1 wrappers keep their boundaries (one
//! output entry each); a run of consecutive uncompressed v0/v1 messages, which carries no batch
//! boundaries, becomes one output entry of at most [`LEGACY_RUN_BYTES`] input bytes (Kafka's
//! default `max.message.bytes`, rounded to 1 MiB; a message larger than that alone is one entry);
//! [`ConvertOptions::records_per_batch`] replaces all of that with entries of at most N records.
//! A run also ends where the batch-level fields change (a v1 LogAppendTime message has its own
//! append time) and at the end of the input.
//!
//! # Examples
//!
//! ```
//! use krecords_codec::convert::{convert, ConvertOptions};
//! use krecords_codec::read::{Batch, Entries};
//! use krecords_codec::write::{LegacyBuilder, NewRecord};
//!
//! // Two v1 messages at offsets 7 and 9 (a gap left by compaction).
//! let mut b = LegacyBuilder::new(1, 7).unwrap();
//! b.append_with_offset(7, &NewRecord::new(1714000000000, Some(b"k"), Some(b"a"))).unwrap();
//! b.append_with_offset(9, &NewRecord::new(1714000000001, Some(b"k"), Some(b"b"))).unwrap();
//! let v1 = b.finish().unwrap();
//!
//! let mut v2 = Vec::new();
//! let opts = ConvertOptions { records_per_batch: Some(500), ..ConvertOptions::new(2) };
//! let stats = convert(&v1, &opts, &mut v2).unwrap();
//! assert_eq!((stats.entries_in, stats.entries_out, stats.records_converted), (2, 1, 2));
//!
//! let Some(Ok(Batch::V2(batch))) = Entries::new(&v2).next() else { panic!() };
//! assert_eq!((batch.base_offset(), batch.last_offset()), (7, 9));
//! ```

use crate::read::{Batch, Entries, Partial, Record, V2HeaderFields};
use crate::write::{LegacyBuilder, NewRecord, V2Builder};
use crate::{Compression, Error, Header, Result, TimestampType, DEFAULT_DECOMPRESS_LIMIT};

/// The most input bytes of uncompressed v0/v1 messages that [`ConvertOptions::batched`] puts in
/// one output entry: Kafka's default `max.message.bytes` (1048588, 1 MiB + 12) rounded to 1 MiB,
/// so that the entry a run becomes is one a broker with default settings accepts.
pub const LEGACY_RUN_BYTES: usize = 1 << 20;

/// What to convert to.
///
/// Build one with [`ConvertOptions::new`] and struct update syntax:
/// `ConvertOptions { compression: Some(Compression::Gzip), ..ConvertOptions::new(1) }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertOptions {
    /// Target magic: 0, 1 or 2.
    pub magic: u8,
    /// Target codec; `None` keeps each entry's own codec, as Kafka's down-conversion does.
    /// zstd with magic 0 or 1 is [`Error::UnsupportedCompression`].
    pub compression: Option<Compression>,
    /// Codec level (`None`: the codec's default, see [`Compression::default_level`]).
    pub level: Option<i32>,
    /// Target timestamp type, `None` to keep each entry's (v0 input becomes CreateTime).
    /// `LogAppendTime` on an entry that was CreateTime takes the entry's max timestamp as the
    /// append time (Kafka would take the broker's clock; a rewrite has none). Ignored for magic
    /// 0; `NoTimestamp` is only valid with magic 0.
    pub timestamp_type: Option<TimestampType>,
    /// Cap on the decompressed bytes of one entry (see [`crate::DEFAULT_DECOMPRESS_LIMIT`]).
    pub decompress_limit: usize,
    /// `None`: one output entry per input entry. `Some(n)`: records are regrouped into output
    /// entries of at most `n` records, across input entries, as long as the batch-level fields
    /// agree (codec, timestamp type and append time, partition leader epoch). v2 batches with a
    /// producer id, sequence, transactional or control flag or delete horizon are never split or
    /// merged when the target is v2. Meaningless for uncompressed v0/v1 output (one message per
    /// record). Must not be 0.
    pub records_per_batch: Option<usize>,
    /// With `records_per_batch` `None`: `Some(max)` merges each run of consecutive uncompressed
    /// v0/v1 messages into output entries of at most `max` input bytes (an input message larger
    /// than `max` is one entry on its own); other entries keep their boundaries. `None`: one
    /// output entry per input entry. Ignored with `records_per_batch`. Must not be 0.
    /// [`ConvertOptions::batched`] sets [`LEGACY_RUN_BYTES`].
    pub legacy_run_bytes: Option<usize>,
    /// Copy entries that are already in the target magic, codec and timestamp type unchanged
    /// (the default, as Kafka does). `false` rebuilds them too, e.g. to apply a new
    /// [`ConvertOptions::level`]: Kafka compares codecs, never levels, so a level alone does not
    /// cause a rewrite. Batches without records and uncompressed v2 control batches are always
    /// copied.
    pub pass_through: bool,
    /// Check each entry's CRC (and each inner message's CRC of a v0/v1 wrapper) before using it,
    /// so that a conversion never launders corrupt data into entries with fresh, valid CRCs.
    pub verify_crc: bool,
}

impl ConvertOptions {
    /// Options for `magic`: codec and timestamp type kept, one output entry per input entry,
    /// entries already in the target format copied, CRCs verified, the default decompression
    /// limit.
    pub fn new(magic: u8) -> Self {
        ConvertOptions {
            magic,
            compression: None,
            level: None,
            timestamp_type: None,
            decompress_limit: DEFAULT_DECOMPRESS_LIMIT,
            records_per_batch: None,
            legacy_run_bytes: None,
            pass_through: true,
            verify_crc: true,
        }
    }

    /// [`ConvertOptions::new`] with the batching rule `krec convert` and `krec stats --what-if`
    /// share (see the module docs): runs of uncompressed v0/v1 messages merged up to
    /// [`LEGACY_RUN_BYTES`] input bytes, every other entry's boundaries kept.
    pub fn batched(magic: u8) -> Self {
        ConvertOptions {
            legacy_run_bytes: Some(LEGACY_RUN_BYTES),
            ..ConvertOptions::new(magic)
        }
    }

    /// The options of `krec convert`'s flags, which each row of `krec stats --what-if` uses too:
    /// [`ConvertOptions::batched`] with a target codec and level, and `records_per_batch`
    /// regrouping instead when given (see [`batching_text`]).
    pub fn for_target(
        magic: u8,
        compression: Option<Compression>,
        level: Option<i32>,
        records_per_batch: Option<u64>,
        decompress_limit: usize,
    ) -> Self {
        ConvertOptions {
            compression,
            level,
            records_per_batch: records_per_batch.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            decompress_limit,
            ..ConvertOptions::batched(magic)
        }
    }

    /// Checks the options on their own.
    ///
    /// # Errors
    ///
    /// [`Error::Unencodable`] for a magic above 2, `records_per_batch` or `legacy_run_bytes` 0,
    /// `NoTimestamp` with magic 1 or 2, or lz4 at a level other than its default (see
    /// [`check_lz4_level`]); [`Error::UnsupportedCompression`] (at byte 0) for zstd with magic 0
    /// or 1; [`Error::InvalidLevel`] for a level outside the target codec's range.
    pub fn validate(&self) -> Result<()> {
        if self.magic > 2 {
            return Err(Error::Unencodable {
                reason: format!("target magic {} (expected 0, 1 or 2)", self.magic),
            });
        }
        if self.records_per_batch == Some(0) {
            return Err(Error::Unencodable {
                reason: "records per batch must be at least 1".into(),
            });
        }
        if self.legacy_run_bytes == Some(0) {
            return Err(Error::Unencodable {
                reason: "the bytes of a run of v0/v1 messages must be at least 1".into(),
            });
        }
        if self.magic > 0 && self.timestamp_type == Some(TimestampType::NoTimestamp) {
            return Err(Error::Unencodable {
                reason: format!(
                    "magic {} needs a timestamp type (create_time or log_append_time)",
                    self.magic
                ),
            });
        }
        if let Some(compression) = self.compression {
            if !compression.allowed_in(self.magic) {
                return Err(Error::UnsupportedCompression {
                    at: 0,
                    compression,
                    magic: self.magic,
                });
            }
            check_level(compression, self.level)?;
            check_lz4_level(compression, self.level)?;
        }
        Ok(())
    }

    /// Whether [`ConvertOptions::check_codec`] can refuse an entry: only when entries keep
    /// their own codec ([`ConvertOptions::compression`] unset) and the target is v0/v1, which
    /// cannot hold zstd. (Any other refusal of a codec is [`ConvertOptions::validate`]'s.)
    pub fn may_refuse_codecs(&self) -> bool {
        self.compression.is_none() && self.magic < 2
    }

    /// Whether the target format can hold `batch` as these options convert it: for an entry
    /// that [`Converter::push`] would refuse for its codec (a zstd v2 batch keeping its codec
    /// for a v0/v1 target), [`Error::UnsupportedCompression`] at the entry's position. Entries
    /// the conversion drops (v2 control and empty batches for v0/v1) are never refused. Reads
    /// the header only, so a scan of the input can find a refusal before anything is written.
    ///
    /// # Errors
    ///
    /// As said, and the entry's unknown codec id.
    pub fn check_codec(&self, batch: &Batch<'_>) -> Result<()> {
        if let Batch::V2(b) = batch {
            if self.magic < 2 && (b.is_control() || b.records_count() == 0) {
                return Ok(());
            }
        }
        let codec = match self.compression {
            Some(c) => c,
            None => batch.compression()?,
        };
        if codec.allowed_in(self.magic) {
            Ok(())
        } else {
            Err(Error::UnsupportedCompression {
                at: batch.position(),
                compression: codec,
                magic: self.magic,
            })
        }
    }
}

/// How [`ConvertOptions::for_target`] batches, in words.
pub fn batching_text(records_per_batch: Option<u64>) -> String {
    match records_per_batch {
        Some(n) => format!("{n} records per batch (--records-per-batch)"),
        None => format!(
            "input batches and wrappers kept, each run of uncompressed v0/v1 messages one entry \
             of up to {} MiB",
            LEGACY_RUN_BYTES >> 20
        ),
    }
}

/// Refuses lz4 at a level other than its default (9).
///
/// Kafka (`Lz4BlockOutputStream`) compresses lz4 at its default level with lz4-java's fast
/// compressor and at every other level with the high-compression (LZ4 HC) compressor, whose
/// output differs. krecords has the fast compressor only, so another level would write what the
/// default writes while claiming a level Kafka would have compressed differently: refused rather
/// than converted (or predicted) wrongly.
///
/// # Errors
///
/// [`Error::Unencodable`] naming the reason.
pub fn check_lz4_level(compression: Compression, level: Option<i32>) -> Result<()> {
    let default = compression.default_level();
    match level {
        Some(level) if compression == Compression::Lz4 && Some(level) != default => {
            Err(Error::Unencodable {
                reason: format!(
                    "lz4 level {level}: Kafka compresses lz4 at any level but its default ({}) \
                     with LZ4 HC (lz4-java's high compressor), which krecords does not have; \
                     use the default level",
                    default.unwrap_or(9)
                ),
            })
        }
        _ => Ok(()),
    }
}

impl Default for ConvertOptions {
    /// [`ConvertOptions::new`] with magic 2.
    fn default() -> Self {
        Self::new(2)
    }
}

/// What a conversion did. Kafka reports the same figures in `RecordConversionStats`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConvertStats {
    /// Complete input entries read.
    pub entries_in: usize,
    /// Bytes of those entries (offset and size prefixes included).
    pub bytes_in: usize,
    /// Entries written.
    pub entries_out: usize,
    /// Bytes written.
    pub bytes_out: usize,
    /// Entries copied unchanged, without decoding (already in the target magic and codec).
    pub entries_passed_through: usize,
    /// Records decoded and written again (Kafka's `numRecordsConverted`). Records of entries
    /// passed through are not counted.
    pub records_converted: usize,
    /// v2 control batches skipped because the target is v0/v1.
    pub dropped_control_batches: usize,
    /// Records of those control batches.
    pub dropped_control_records: usize,
    /// v2 batches without records (left by compaction) skipped because the target is v0/v1.
    pub dropped_empty_batches: usize,
    /// Record headers dropped because the target is v0/v1 (each header counts once).
    pub dropped_headers: usize,
    /// v2 batches converted to v0/v1 that lost a producer id, epoch, sequence or the
    /// transactional flag (Kafka drops them silently).
    pub dropped_producer_state: usize,
    /// A truncated entry at the end of the input, not converted ([`convert`] only).
    pub partial: Option<Partial>,
}

/// Converts every entry of `input` and appends the result to `out`.
///
/// A truncated last entry is not an error: it is left out and reported in
/// [`ConvertStats::partial`], as [`Entries`] reports it.
///
/// # Errors
///
/// The options' errors (see [`ConvertOptions::validate`]), then the first entry that cannot be
/// read or converted, with its absolute position in `input` (builder errors name it in their
/// reason). On error `out` is truncated back to its length on entry.
///
/// # Examples
///
/// ```
/// use krecords_codec::convert::{convert, ConvertOptions};
/// use krecords_codec::write::{NewRecord, V2Builder};
///
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1714000000000, None, Some(b"hello"))).unwrap();
/// let v2 = b.finish().unwrap();
///
/// let mut v0 = Vec::new();
/// let stats = convert(&v2, &ConvertOptions::new(0), &mut v0).unwrap();
/// assert_eq!(v0.len(), 12 + 14 + 5); // one v0 message
/// assert_eq!(stats.bytes_out, v0.len());
/// ```
pub fn convert(input: &[u8], opts: &ConvertOptions, out: &mut Vec<u8>) -> Result<ConvertStats> {
    let start = out.len();
    let result = convert_into(input, opts, out);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

fn convert_into(input: &[u8], opts: &ConvertOptions, out: &mut Vec<u8>) -> Result<ConvertStats> {
    let mut converter = Converter::new(opts.clone())?;
    let mut entries = Entries::new(input);
    while let Some(batch) = entries.next_entry()? {
        converter.push(&batch, out)?;
    }
    let mut stats = converter.finish(out)?;
    stats.partial = entries.partial();
    Ok(stats)
}

/// Converts entries one at a time, for callers that stream (a segment read in windows, output
/// written as it comes).
///
/// Output for an entry may be held back until a later [`Converter::push`] or
/// [`Converter::finish`] when [`ConvertOptions::records_per_batch`] or
/// [`ConvertOptions::legacy_run_bytes`] merges entries; otherwise
/// each push writes its entry's output before returning.
///
/// # Examples
///
/// ```
/// use krecords_codec::convert::{ConvertOptions, Converter};
/// use krecords_codec::read::Entries;
/// use krecords_codec::write::{NewRecord, V2Builder};
///
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1714000000000, Some(b"k"), Some(b"v"))).unwrap();
/// let input = b.finish().unwrap();
///
/// let mut converter = Converter::new(ConvertOptions::new(1)).unwrap();
/// let mut out = Vec::new();
/// for batch in Entries::new(&input) {
///     converter.push(&batch.unwrap(), &mut out).unwrap();
///     // write `out` somewhere and clear it here
/// }
/// let stats = converter.finish(&mut out).unwrap();
/// assert_eq!(stats.records_converted, 1);
/// ```
#[derive(Debug)]
pub struct Converter {
    opts: ConvertOptions,
    /// Decompression buffer, reused across entries.
    scratch: Vec<u8>,
    /// The output entry being built.
    group: Option<Group>,
    stats: ConvertStats,
    /// Number of entries pushed so far; identifies the entry a group last took records from.
    entry_seq: u64,
}

impl Converter {
    /// A converter for `opts`.
    ///
    /// # Errors
    ///
    /// As [`ConvertOptions::validate`].
    pub fn new(opts: ConvertOptions) -> Result<Self> {
        opts.validate()?;
        Ok(Converter {
            opts,
            scratch: Vec::new(),
            group: None,
            stats: ConvertStats::default(),
            entry_seq: 0,
        })
    }

    /// The options.
    pub fn options(&self) -> &ConvertOptions {
        &self.opts
    }

    /// The figures so far (entries still held back for merging are not yet in the output
    /// figures).
    pub fn stats(&self) -> &ConvertStats {
        &self.stats
    }

    /// Converts one entry and appends what is ready to `out`. Costs one decompression and one
    /// compression for entries that change; entries passed through are copied.
    ///
    /// # Errors
    ///
    /// A CRC mismatch (with [`ConvertOptions::verify_crc`]), an unknown codec, zstd for a v0/v1
    /// target, the entry's read errors, and builder errors (a negative timestamp other than -1,
    /// offsets that do not increase, inconsistent producer fields), named with the entry's
    /// position. After an error, `out` may hold part of an entry: discard it and the converter.
    pub fn push(&mut self, batch: &Batch<'_>, out: &mut Vec<u8>) -> Result<()> {
        let at = batch.position();
        let magic = self.opts.magic;
        self.stats.entries_in += 1;
        self.stats.bytes_in += batch.size_in_bytes();
        self.entry_seq += 1;
        if self.opts.verify_crc && !batch.is_crc_valid() {
            return Err(Error::CrcMismatch {
                at,
                stored: batch.crc(),
                computed: batch.compute_crc(),
            });
        }
        let source_codec = batch.compression()?;
        if let Batch::V2(b) = batch {
            if magic < 2 && b.is_control() {
                self.stats.dropped_control_batches += 1;
                self.stats.dropped_control_records +=
                    usize::try_from(b.records_count()).unwrap_or(0);
                return Ok(());
            }
            if b.records_count() == 0 {
                if magic < 2 {
                    self.stats.dropped_empty_batches += 1;
                    return Ok(());
                }
                return self.pass_through(batch, out);
            }
            if magic == 2 && b.is_control() && source_codec == Compression::None {
                return self.pass_through(batch, out);
            }
        }
        self.opts.check_codec(batch)?;
        let codec = self.opts.compression.unwrap_or(source_codec);
        if self.opts.compression.is_none() {
            check_level(codec, self.opts.level)?;
            check_lz4_level(codec, self.opts.level)?;
        }
        let props = self.props(batch, codec);
        let legacy_run = self.opts.records_per_batch.is_none()
            && self.opts.legacy_run_bytes.is_some()
            && matches!(batch, Batch::Legacy(b) if !b.is_compressed());
        let mergeable = props.is_plain() && (self.opts.records_per_batch.is_some() || legacy_run);
        let regroups = mergeable && !(magic < 2 && codec == Compression::None);
        let timestamp_kept = magic == 0
            || self
                .opts
                .timestamp_type
                .is_none_or(|t| t == batch.timestamp_type());
        if self.opts.pass_through
            && batch.magic() == magic
            && source_codec == codec
            && timestamp_kept
            && !regroups
        {
            return self.pass_through(batch, out);
        }
        if let Batch::V2(b) = batch {
            if magic < 2 && (b.raw_producer_id() != -1 || b.is_transactional()) {
                self.stats.dropped_producer_state += 1;
            }
        }
        self.rebuild(batch, props, mergeable, out)
    }

    /// Writes out the entry still held back, if any, and returns the figures.
    ///
    /// # Errors
    ///
    /// A compression or builder error for that entry.
    pub fn finish(mut self, out: &mut Vec<u8>) -> Result<ConvertStats> {
        self.flush(out)?;
        Ok(self.stats)
    }

    fn pass_through(&mut self, batch: &Batch<'_>, out: &mut Vec<u8>) -> Result<()> {
        self.flush(out)?;
        let bytes = batch.as_bytes();
        out.extend_from_slice(bytes);
        self.stats.entries_out += 1;
        self.stats.entries_passed_through += 1;
        self.stats.bytes_out += bytes.len();
        Ok(())
    }

    /// The batch-level fields of the output for `batch`.
    fn props(&self, batch: &Batch<'_>, compression: Compression) -> Props {
        let magic = self.opts.magic;
        let (timestamp_type, log_append_time) = if magic == 0 {
            (TimestampType::NoTimestamp, -1)
        } else {
            let source = batch.timestamp_type();
            match self.opts.timestamp_type.unwrap_or(source) {
                // A v2 batch's max timestamp is its append time under LogAppendTime and its
                // largest record timestamp otherwise; a v1 message's timestamp likewise.
                TimestampType::LogAppendTime => {
                    (TimestampType::LogAppendTime, batch.max_timestamp())
                }
                TimestampType::CreateTime | TimestampType::NoTimestamp => {
                    (TimestampType::CreateTime, -1)
                }
            }
        };
        Props {
            compression,
            timestamp_type,
            log_append_time,
            // v0/v1 targets carry none of them.
            v2: if magic == 2 {
                batch.v2_header_fields()
            } else {
                V2HeaderFields::NONE
            },
        }
    }

    /// Decodes `batch` and appends its records to the current output group (or new ones).
    fn rebuild(
        &mut self,
        batch: &Batch<'_>,
        props: Props,
        mergeable: bool,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let at = batch.position();
        if !mergeable {
            self.flush(out)?;
        }
        let Converter {
            opts,
            scratch,
            group,
            stats,
            entry_seq,
        } = self;
        let entry = *entry_seq;
        let entry_bytes = batch.size_in_bytes();
        let legacy_compressed = matches!(batch, Batch::Legacy(b) if b.is_compressed());
        let source_log_append_time = batch.timestamp_type() == TimestampType::LogAppendTime;
        let (v2_base_offset, v2_base_timestamp) = match batch {
            Batch::V2(b) => (Some(b.base_offset()), b.base_timestamp()),
            Batch::Legacy(_) => (None, -1),
        };
        let mut headers: Vec<Header<'_>> = Vec::new();
        let mut first = true;
        for record in batch.records(scratch, opts.decompress_limit)? {
            let record = record?;
            if let (Record::Legacy(r), true) = (&record, opts.verify_crc && legacy_compressed) {
                let computed = r.compute_crc();
                if r.crc != computed {
                    return Err(Error::InvalidRecord {
                        at,
                        reason: format!(
                            "inner message at offset {} has crc {} but its bytes give {computed}",
                            r.offset, r.crc
                        ),
                    });
                }
            }
            let offset = record.offset();
            let full = match group {
                None => true,
                Some(g) => {
                    mergeable
                        && (g.props != props
                            || opts.records_per_batch.is_some_and(|n| g.count >= n)
                            || (g.entry != entry
                                && (!g.can_take(offset) || g.run_full(opts, entry_bytes))))
                }
            };
            if full {
                flush_group(group.take(), stats, out)?;
            }
            let g = match group {
                Some(g) => g,
                None => {
                    // Kafka keeps a v2 batch's base offset when the target is v2; otherwise the
                    // first record's offset is the base.
                    let base_offset = match (first, v2_base_offset, opts.magic) {
                        (true, Some(base), 2) => base,
                        _ => offset,
                    };
                    group.insert(Group::new(opts, props, at, base_offset)?)
                }
            };
            first = false;
            if g.entry != entry {
                g.input_bytes = g.input_bytes.saturating_add(entry_bytes);
            }
            g.entry = entry;
            if !g.fits(offset) {
                return Err(Error::Unencodable {
                    reason: format!(
                        "entry at byte {at}: offset {offset} is not within base offset {} + \
                         0..=i32::MAX",
                        g.base_offset
                    ),
                });
            }
            let timestamp = if opts.magic == 0 {
                -1
            } else {
                match record {
                    // Keep a LogAppendTime batch's stored record timestamps (the producer's),
                    // which reads replace with the append time.
                    Record::V2(r)
                        if source_log_append_time
                            && props.timestamp_type == TimestampType::LogAppendTime =>
                    {
                        let stored = v2_base_timestamp.wrapping_add(r.timestamp_delta);
                        if stored >= -1 {
                            stored
                        } else {
                            r.timestamp
                        }
                    }
                    _ => record.timestamp().unwrap_or(-1),
                }
            };
            headers.clear();
            headers.extend(record.headers());
            let appended = match &mut g.builder {
                Builder::V2(b) if props.v2.control => append_control(b, offset, timestamp, &record),
                Builder::V2(b) => b.append_with_offset(
                    offset,
                    &NewRecord::new(timestamp, record.key(), record.value()).with_headers(&headers),
                ),
                Builder::Legacy(b) => {
                    stats.dropped_headers += headers.len();
                    b.append_with_offset(
                        offset,
                        &NewRecord::new(timestamp, record.key(), record.value()),
                    )
                }
            };
            appended.map_err(|e| locate(e, at))?;
            g.count += 1;
            g.last_offset = offset;
            g.covered = g.covered.max(offset);
        }
        if let (Batch::V2(b), Some(g)) = (batch, group.as_mut()) {
            // Kafka keeps a v2 batch's last offset through rewrites (`overrideLastOffset`), so
            // that the producer's last sequence survives compaction.
            if opts.magic == 2 && g.entry == entry {
                g.covered = g.covered.max(b.last_offset());
            }
        }
        if !mergeable {
            flush_group(group.take(), stats, out)?;
        }
        Ok(())
    }

    fn flush(&mut self, out: &mut Vec<u8>) -> Result<()> {
        flush_group(self.group.take(), &mut self.stats, out)
    }
}

/// The batch-level fields of an output entry; records only share an entry when these agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Props {
    compression: Compression,
    /// CreateTime or LogAppendTime (NoTimestamp for magic 0).
    timestamp_type: TimestampType,
    /// The append time under LogAppendTime, else -1.
    log_append_time: i64,
    /// Producer state and flags, kept from a v2 source into a v2 target.
    v2: V2HeaderFields,
}

impl Props {
    /// Whether records with these fields may be split and merged freely: no producer state,
    /// not control, no delete horizon (always true for v0/v1 targets, which carry none).
    /// The partition leader epoch does not count.
    fn is_plain(&self) -> bool {
        self.v2
            == V2HeaderFields {
                partition_leader_epoch: self.v2.partition_leader_epoch,
                ..V2HeaderFields::NONE
            }
    }
}

#[derive(Debug)]
enum Builder {
    V2(V2Builder),
    Legacy(LegacyBuilder),
}

/// One output entry being built.
#[derive(Debug)]
struct Group {
    builder: Builder,
    props: Props,
    /// Position of the first input entry that contributed (for errors).
    at: usize,
    /// Sequence number of the input entry that last contributed.
    entry: u64,
    /// Bytes of the input entries that contributed.
    input_bytes: usize,
    base_offset: i64,
    count: usize,
    /// Offset of the last record appended.
    last_offset: i64,
    /// Last offset the entry covers: the last record's, or a v2 source batch's last offset when
    /// compaction removed its tail.
    covered: i64,
}

impl Group {
    fn new(opts: &ConvertOptions, props: Props, at: usize, base_offset: i64) -> Result<Self> {
        let builder = if opts.magic == 2 {
            Builder::V2(
                V2Builder::new(base_offset)
                    .compression(props.compression, opts.level)
                    .timestamp_type(props.timestamp_type, props.log_append_time)
                    .producer(
                        props.v2.producer_id,
                        props.v2.producer_epoch,
                        props.v2.base_sequence,
                    )
                    .transactional(props.v2.transactional)
                    .control(props.v2.control)
                    .partition_leader_epoch(props.v2.partition_leader_epoch)
                    .delete_horizon_ms(props.v2.delete_horizon_ms),
            )
        } else {
            Builder::Legacy(
                LegacyBuilder::new(opts.magic, base_offset)?
                    .compression(props.compression, opts.level)
                    .map_err(|e| e.shifted(at))?
                    .timestamp_type(props.timestamp_type, props.log_append_time),
            )
        };
        Ok(Group {
            builder,
            props,
            at,
            entry: 0,
            input_bytes: 0,
            base_offset,
            count: 0,
            last_offset: base_offset,
            covered: base_offset,
        })
    }

    /// Whether a record at `offset` from another input entry can join: offsets must increase
    /// and stay within an i32 delta of the base offset.
    fn can_take(&self, offset: i64) -> bool {
        offset > self.covered && self.fits(offset)
    }

    /// Whether a run of v0/v1 messages (records per batch not set) is too full for another input
    /// entry of `bytes`.
    fn run_full(&self, opts: &ConvertOptions, bytes: usize) -> bool {
        opts.records_per_batch.is_none()
            && opts
                .legacy_run_bytes
                .is_some_and(|max| self.input_bytes.saturating_add(bytes) > max)
    }

    /// Whether `offset` is within an i32 delta above the base offset, checked without overflow
    /// (the builders subtract the base offset).
    fn fits(&self, offset: i64) -> bool {
        offset
            .checked_sub(self.base_offset)
            .is_some_and(|d| (0..=i64::from(i32::MAX)).contains(&d))
    }
}

/// Finishes `group` into `out` and counts it.
fn flush_group(group: Option<Group>, stats: &mut ConvertStats, out: &mut Vec<u8>) -> Result<()> {
    let Some(g) = group else {
        return Ok(());
    };
    let start = out.len();
    match g.builder {
        Builder::V2(b) => {
            b.finish_into(out).map_err(|e| locate(e, g.at))?;
            if g.covered > g.last_offset {
                // Kafka's `overrideLastOffset`: the batch covers the group's offsets.
                let delta = g
                    .covered
                    .checked_sub(g.base_offset)
                    .and_then(|d| i32::try_from(d).ok());
                if let (Some(delta), Some(batch)) = (delta, out.get_mut(start..)) {
                    crate::patch::set_last_offset_delta(batch, delta)?;
                }
            }
            stats.entries_out += 1;
        }
        Builder::Legacy(b) => {
            let entries = if g.props.compression == Compression::None {
                b.count()
            } else {
                1
            };
            b.finish_into(out).map_err(|e| locate(e, g.at))?;
            stats.entries_out += entries;
        }
    }
    stats.records_converted += g.count;
    stats.bytes_out += out.len() - start;
    Ok(())
}

/// Appends a control record at `offset`, which must be the builder's next offset (control
/// batches hold one record).
fn append_control(
    b: &mut V2Builder,
    offset: i64,
    timestamp: i64,
    record: &Record<'_>,
) -> Result<()> {
    let (Some(key), Some(value)) = (record.key(), record.value()) else {
        return Err(Error::Unencodable {
            reason: format!("control record at offset {offset} has a null key or value"),
        });
    };
    if offset != b.next_offset() {
        return Err(Error::Unencodable {
            reason: format!(
                "control record at offset {offset} does not follow at offset {}",
                b.next_offset()
            ),
        });
    }
    b.append_control(timestamp, key, value).map(|_| ())
}

/// Rejects a level the codec does not accept, as [`crate::compression::compress`] would (codecs
/// without levels ignore it).
fn check_level(compression: Compression, level: Option<i32>) -> Result<()> {
    if let (Some(level), Some(_)) = (level, compression.level_range()) {
        if !compression.is_valid_level(level) {
            return Err(Error::InvalidLevel { compression, level });
        }
    }
    Ok(())
}

/// Names the input entry in errors that carry no position of their own.
fn locate(e: Error, at: usize) -> Error {
    match e {
        Error::Unencodable { reason } => Error::Unencodable {
            reason: format!("entry at byte {at}: {reason}"),
        },
        Error::Compress {
            compression,
            reason,
        } => Error::Compress {
            compression,
            reason: format!("entry at byte {at}: {reason}"),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::{ControlRecordKey, ControlRecordType, EndTxnMarker};
    use crate::read::V2Batch;
    use crate::write::{write_empty_batch, EmptyBatch};
    use proptest::prelude::*;

    const T0: i64 = 1_714_000_000_000;
    const CODECS: [Compression; 4] = [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// A record as a test sees it: absolute offset, timestamp as read (`None` for v0).
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Rec {
        offset: i64,
        timestamp: Option<i64>,
        key: Option<Vec<u8>>,
        value: Option<Vec<u8>>,
        headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    }

    /// `n` records from `base` with offset gaps, null keys and values, and (optionally) headers
    /// with duplicates and null values on every other record.
    fn sample(n: usize, base: i64, headers: bool) -> Vec<Rec> {
        let mut offset = base;
        (0..n)
            .map(|i| {
                let r = Rec {
                    offset,
                    timestamp: Some(T0 + i as i64 * 7),
                    key: (i % 3 != 1).then(|| format!("k{i}").into_bytes()),
                    value: (i % 4 != 2).then(|| format!("value {i}").into_bytes()),
                    headers: if headers && i % 2 == 0 {
                        vec![
                            (b"trace".to_vec(), Some(format!("t{i}").into_bytes())),
                            (b"dup".to_vec(), None),
                            (b"dup".to_vec(), Some(Vec::new())),
                        ]
                    } else {
                        Vec::new()
                    },
                };
                offset += 1 + i as i64 % 3;
                r
            })
            .collect()
    }

    fn header_refs(r: &Rec) -> Vec<Header<'_>> {
        r.headers.iter().map(Header::from).collect()
    }

    fn write_rec<'a>(r: &'a Rec, headers: &'a [Header<'a>]) -> NewRecord<'a> {
        NewRecord::new(
            r.timestamp.unwrap_or(-1),
            r.key.as_deref(),
            r.value.as_deref(),
        )
        .with_headers(headers)
    }

    /// A v2 builder over `recs` (headers kept) with the given settings, not yet finished.
    fn v2_builder(
        codec: Compression,
        recs: &[Rec],
        setup: impl FnOnce(V2Builder) -> V2Builder,
    ) -> Vec<u8> {
        let mut b = setup(V2Builder::new(recs[0].offset).compression(codec, None));
        for r in recs {
            let h = header_refs(r);
            b.append_with_offset(r.offset, &write_rec(r, &h)).unwrap();
        }
        b.finish().unwrap()
    }

    /// Entries of `magic` and `codec` holding `recs` (headers only for v2).
    fn build_with(
        magic: u8,
        codec: Compression,
        ts: TimestampType,
        lat: i64,
        recs: &[Rec],
    ) -> Vec<u8> {
        if magic == 2 {
            return v2_builder(codec, recs, |b| b.timestamp_type(ts, lat));
        }
        let mut b = LegacyBuilder::new(magic, recs[0].offset)
            .unwrap()
            .compression(codec, None)
            .unwrap()
            .timestamp_type(ts, lat);
        for r in recs {
            b.append_with_offset(
                r.offset,
                &NewRecord::new(
                    r.timestamp.unwrap_or(-1),
                    r.key.as_deref(),
                    r.value.as_deref(),
                ),
            )
            .unwrap();
        }
        b.finish().unwrap()
    }

    fn build(magic: u8, codec: Compression, recs: &[Rec]) -> Vec<u8> {
        build_with(magic, codec, TimestampType::CreateTime, -1, recs)
    }

    fn to_rec(r: &Record<'_>) -> Rec {
        Rec {
            offset: r.offset(),
            timestamp: r.timestamp(),
            key: r.key().map(<[u8]>::to_vec),
            value: r.value().map(<[u8]>::to_vec),
            headers: r
                .headers()
                .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                .collect(),
        }
    }

    /// Every entry of `bytes`, fully validated, with its records.
    fn read(bytes: &[u8]) -> Vec<(Batch<'_>, Vec<Rec>)> {
        let mut entries = Entries::new(bytes);
        let mut out = Vec::new();
        for batch in &mut entries {
            let batch = batch.unwrap();
            batch.validate().unwrap();
            let mut scratch = Vec::new();
            let recs = batch
                .records(&mut scratch, usize::MAX)
                .unwrap()
                .map(|r| to_rec(&r.unwrap()))
                .collect();
            out.push((batch, recs));
        }
        assert_eq!(entries.partial(), None);
        out
    }

    fn records(bytes: &[u8]) -> Vec<Rec> {
        read(bytes).into_iter().flat_map(|(_, r)| r).collect()
    }

    fn v2_batches(bytes: &[u8]) -> Vec<V2Batch<'_>> {
        read(bytes)
            .into_iter()
            .map(|(b, _)| match b {
                Batch::V2(b) => b,
                Batch::Legacy(_) => panic!("expected v2"),
            })
            .collect()
    }

    /// What records from magic `src` look like after conversion to `dst`.
    fn expect(recs: &[Rec], src: u8, dst: u8) -> Vec<Rec> {
        recs.iter()
            .map(|r| Rec {
                timestamp: match (src, dst) {
                    (_, 0) => None,
                    (0, _) => Some(-1),
                    _ => r.timestamp,
                },
                headers: if src == 2 && dst == 2 {
                    r.headers.clone()
                } else {
                    Vec::new()
                },
                ..r.clone()
            })
            .collect()
    }

    /// `recs` as read back from magic `magic` (v0 has no timestamps, v0/v1 no headers).
    fn as_read(recs: &[Rec], magic: u8) -> Vec<Rec> {
        expect(recs, 2, magic)
    }

    fn conv(input: &[u8], opts: &ConvertOptions) -> (Vec<u8>, ConvertStats) {
        let mut out = Vec::new();
        let stats = convert(input, opts, &mut out).unwrap();
        assert_eq!(stats.bytes_out, out.len());
        assert_eq!(stats.bytes_in, input.len());
        (out, stats)
    }

    fn to(magic: u8) -> ConvertOptions {
        ConvertOptions::new(magic)
    }

    fn to_codec(magic: u8, codec: Compression) -> ConvertOptions {
        ConvertOptions {
            compression: Some(codec),
            ..ConvertOptions::new(magic)
        }
    }

    /// Rewrites the stored CRC of the entry at `bytes[start..end]` after a test edited it.
    fn fix_crc(bytes: &mut [u8], start: usize, end: usize) {
        let entry = &mut bytes[start..end];
        if entry[16] == 2 {
            let crc = crate::crc::crc32c(&entry[21..]);
            entry[17..21].copy_from_slice(&crc.to_be_bytes());
        } else {
            let crc = crate::crc::crc32(&entry[16..]);
            entry[12..16].copy_from_slice(&crc.to_be_bytes());
        }
    }

    /// A v2 batch marked zstd without being compressed: enough to hit codec checks, which come
    /// before any decompression.
    fn fake_zstd_batch(base: i64) -> Vec<u8> {
        let mut bytes = build(2, Compression::None, &sample(2, base, false));
        bytes[22] |= Compression::Zstd.id();
        let len = bytes.len();
        fix_crc(&mut bytes, 0, len);
        bytes
    }

    fn commit_marker(offset: i64, producer_id: i64, epoch: i16) -> Vec<u8> {
        let key = ControlRecordKey {
            version: 0,
            kind: ControlRecordType::Commit,
        }
        .to_bytes();
        let value = EndTxnMarker {
            version: 0,
            coordinator_epoch: 3,
        }
        .to_bytes();
        let mut b = V2Builder::new(offset)
            .control(true)
            .transactional(true)
            .producer(producer_id, epoch, -1)
            .partition_leader_epoch(4);
        b.append_control(T0, &key, &value).unwrap();
        b.finish().unwrap()
    }

    fn idempotent(recs: &[Rec], producer_id: i64, transactional: bool) -> Vec<u8> {
        v2_builder(Compression::None, recs, |b| {
            b.producer(producer_id, 2, 40)
                .transactional(transactional)
                .partition_leader_epoch(4)
        })
    }

    #[test]
    fn every_magic_pair_uncompressed() {
        for src in 0..=2u8 {
            for dst in 0..=2u8 {
                for compression in [None, Some(Compression::None)] {
                    let recs = sample(5, 100, src == 2);
                    let input = build(src, Compression::None, &recs);
                    let opts = ConvertOptions {
                        compression,
                        ..to(dst)
                    };
                    let (out, stats) = conv(&input, &opts);
                    let ctx = format!("v{src} -> v{dst}");
                    assert_eq!(records(&out), expect(&recs, src, dst), "{ctx}");
                    let entries = read(&out);
                    // v0/v1 uncompressed: one message per record, in and out; v2 in, v2 out: one.
                    let expected_entries = if src == 2 && dst == 2 { 1 } else { 5 };
                    assert_eq!(entries.len(), expected_entries, "{ctx}");
                    assert_eq!(stats.entries_in, if src == 2 { 1 } else { 5 }, "{ctx}");
                    assert_eq!(stats.entries_out, expected_entries, "{ctx}");
                    for (batch, _) in &entries {
                        assert_eq!(batch.magic(), dst, "{ctx}");
                        assert_eq!(batch.compression().unwrap(), Compression::None, "{ctx}");
                        let ts = if dst == 0 {
                            TimestampType::NoTimestamp
                        } else {
                            TimestampType::CreateTime
                        };
                        assert_eq!(batch.timestamp_type(), ts, "{ctx}");
                        if let Batch::V2(b) = batch {
                            assert_eq!(b.producer_id(), None);
                            assert_eq!(b.base_sequence(), None);
                            assert!(!b.is_transactional());
                        }
                    }
                    if src == dst {
                        assert_eq!(out, input, "{ctx}: pass-through");
                        assert_eq!(stats.entries_passed_through, stats.entries_in, "{ctx}");
                        assert_eq!(stats.records_converted, 0, "{ctx}");
                    } else {
                        assert_eq!(stats.entries_passed_through, 0, "{ctx}");
                        assert_eq!(stats.records_converted, 5, "{ctx}");
                    }
                    let headers = if src == 2 && dst < 2 { 9 } else { 0 };
                    assert_eq!(stats.dropped_headers, headers, "{ctx}");
                }
            }
        }
    }

    #[test]
    fn every_magic_and_codec_pair() {
        for src in 0..=2u8 {
            for src_codec in Compression::ALL.into_iter().filter(|c| c.allowed_in(src)) {
                let recs = sample(6, 1000, src == 2);
                let input = build(src, src_codec, &recs);
                for dst in 0..=2u8 {
                    let targets = Compression::ALL
                        .into_iter()
                        .filter(|c| c.allowed_in(dst))
                        .map(Some);
                    for compression in targets.chain([None]) {
                        let ctx = format!("v{src} {src_codec} -> v{dst} {compression:?}");
                        let opts = ConvertOptions {
                            compression,
                            ..to(dst)
                        };
                        let dst_codec = compression.unwrap_or(src_codec);
                        if !dst_codec.allowed_in(dst) {
                            let mut out = Vec::new();
                            let e = convert(&input, &opts, &mut out).unwrap_err();
                            assert_eq!(
                                e,
                                Error::UnsupportedCompression {
                                    at: 0,
                                    compression: dst_codec,
                                    magic: dst
                                },
                                "{ctx}"
                            );
                            assert!(out.is_empty());
                            continue;
                        }
                        let (out, stats) = conv(&input, &opts);
                        assert_eq!(records(&out), expect(&recs, src, dst), "{ctx}");
                        let entries = read(&out);
                        let expected_entries = if dst < 2 && dst_codec == Compression::None {
                            6
                        } else if src == 2 || src_codec != Compression::None {
                            1
                        } else {
                            6
                        };
                        assert_eq!(entries.len(), expected_entries, "{ctx}");
                        assert_eq!(stats.entries_out, expected_entries, "{ctx}");
                        for (batch, _) in &entries {
                            assert_eq!(batch.magic(), dst, "{ctx}");
                            assert_eq!(batch.compression().unwrap(), dst_codec, "{ctx}");
                        }
                        if src == dst && src_codec == dst_codec {
                            assert_eq!(out, input, "{ctx}: pass-through");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn pass_through_is_byte_identical() {
        let mut input = Vec::new();
        input.extend(idempotent(&sample(3, 0, true), 7, true));
        input.extend(commit_marker(5, 7, 2));
        input.extend(build_with(
            2,
            Compression::None,
            TimestampType::LogAppendTime,
            T0 + 5,
            &sample(4, 6, false),
        ));
        input.extend(fake_zstd_batch(20));
        let (out, stats) = conv(&input, &to(2));
        assert_eq!(out, input);
        assert_eq!(
            (
                stats.entries_in,
                stats.entries_out,
                stats.entries_passed_through
            ),
            (4, 4, 4)
        );
        assert_eq!(stats.records_converted, 0);
        // Asking for the codec and timestamp type an entry already has changes nothing either.
        let plain = build(2, Compression::None, &sample(4, 0, true));
        let opts = ConvertOptions {
            compression: Some(Compression::None),
            timestamp_type: Some(TimestampType::CreateTime),
            level: Some(5),
            ..to(2)
        };
        assert_eq!(conv(&plain, &opts).0, plain);
        for magic in [0, 1] {
            let legacy = build(magic, Compression::None, &sample(4, 0, false));
            let (out, stats) = conv(&legacy, &to(magic));
            assert_eq!(out, legacy);
            assert_eq!(stats.entries_passed_through, 4);
        }
    }

    #[test]
    fn control_batches_skipped_on_down_conversion() {
        let txn = sample(3, 0, false);
        let mut input = idempotent(&txn, 7, true);
        let marker_at = input.len();
        input.extend(commit_marker(5, 7, 2));
        let after = sample(2, 6, false);
        input.extend(idempotent(&after, 8, false));
        for magic in [0, 1] {
            let (out, stats) = conv(&input, &to(magic));
            let mut expected = as_read(&txn, magic);
            expected.extend(as_read(&after, magic));
            assert_eq!(records(&out), expected);
            assert_eq!(stats.dropped_control_batches, 1);
            assert_eq!(stats.dropped_control_records, 1);
            assert_eq!(stats.dropped_producer_state, 2);
            assert_eq!(stats.entries_out, 5);
        }
        // Kept, and untouched, for v2; an uncompressed marker stays uncompressed even when
        // the target codec is set (LogValidator does not compress control records).
        let marker = &input[marker_at..marker_at + commit_marker(5, 7, 2).len()];
        let (out, stats) = conv(marker, &to_codec(2, Compression::Gzip));
        assert_eq!(out, marker);
        assert_eq!(stats.entries_passed_through, 1);
    }

    #[test]
    fn headers_dropped_and_counted() {
        let recs = sample(6, 0, true);
        let input = build(2, Compression::None, &recs);
        let total: usize = recs.iter().map(|r| r.headers.len()).sum();
        assert_eq!(total, 9);
        for magic in [0, 1] {
            let (out, stats) = conv(&input, &to(magic));
            assert_eq!(stats.dropped_headers, total);
            assert_eq!(records(&out), as_read(&recs, magic));
        }
        // Kept when the target is v2, also through a rebuild.
        let opts = ConvertOptions {
            timestamp_type: Some(TimestampType::LogAppendTime),
            ..to(2)
        };
        let (out, stats) = conv(&input, &opts);
        assert_eq!(stats.dropped_headers, 0);
        let got = records(&out);
        assert_eq!(
            got.iter().map(|r| &r.headers).collect::<Vec<_>>(),
            recs.iter().map(|r| &r.headers).collect::<Vec<_>>()
        );
    }

    #[test]
    fn zstd_rejected_for_v0_and_v1() {
        for magic in [0, 1] {
            let e = Converter::new(to_codec(magic, Compression::Zstd)).unwrap_err();
            assert_eq!(
                e,
                Error::UnsupportedCompression {
                    at: 0,
                    compression: Compression::Zstd,
                    magic
                }
            );
            // Keeping the codec of a zstd batch: rejected at that batch, nothing written.
            let mut input = build(2, Compression::None, &sample(2, 0, false));
            let at = input.len();
            input.extend(fake_zstd_batch(10));
            let mut out = b"kept".to_vec();
            let e = convert(&input, &to(magic), &mut out).unwrap_err();
            assert_eq!(
                e,
                Error::UnsupportedCompression {
                    at,
                    compression: Compression::Zstd,
                    magic
                }
            );
            assert_eq!(out, b"kept");
        }
    }

    #[test]
    fn empty_batches() {
        let mut input = Vec::new();
        let empty = EmptyBatch {
            base_offset: 10,
            last_offset: 14,
            partition_leader_epoch: 3,
            timestamp_type: TimestampType::CreateTime,
            timestamp: T0,
            producer_id: 9,
            producer_epoch: 1,
            base_sequence: 20,
            transactional: false,
            control: false,
        };
        write_empty_batch(&mut input, &empty).unwrap();
        for magic in [0, 1] {
            let (out, stats) = conv(&input, &to(magic));
            assert!(out.is_empty());
            assert_eq!((stats.dropped_empty_batches, stats.entries_out), (1, 0));
        }
        // For v2 they keep producer state for compaction: copied as they are, whatever the codec.
        for codec in Compression::ALL {
            let (out, stats) = conv(&input, &to_codec(2, codec));
            assert_eq!(out, input);
            assert_eq!(stats.entries_passed_through, 1);
        }
    }

    #[test]
    fn v2_rebuild_keeps_header_fields_and_compacted_last_offset() {
        let recs = sample(3, 10, true);
        let mut input = v2_builder(Compression::None, &recs, |b| {
            b.producer(42, 3, 100)
                .transactional(true)
                .partition_leader_epoch(9)
        });
        // Compaction removed records after offset 14 but kept the last offset, 20.
        assert_eq!(v2_batches(&input)[0].last_offset(), 13);
        crate::patch::set_last_offset_delta(&mut input, 10).unwrap();
        let source = v2_batches(&input)[0];
        assert_eq!(
            (source.last_offset(), source.last_sequence()),
            (20, Some(110))
        );
        let opts = ConvertOptions {
            timestamp_type: Some(TimestampType::LogAppendTime),
            ..to(2)
        };
        let (out, stats) = conv(&input, &opts);
        assert_eq!(stats.records_converted, 3);
        let got = v2_batches(&out);
        assert_eq!(got.len(), 1);
        let b = got[0];
        assert_eq!(
            (b.base_offset(), b.last_offset(), b.records_count()),
            (10, 20, 3)
        );
        assert_eq!(
            (b.producer_id(), b.producer_epoch(), b.base_sequence()),
            (Some(42), Some(3), Some(100))
        );
        assert_eq!(b.last_sequence(), Some(110));
        assert!(b.is_transactional() && !b.is_control());
        assert_eq!(b.partition_leader_epoch(), Some(9));
        assert_eq!(b.timestamp_type(), TimestampType::LogAppendTime);
        // The append time is the batch's max timestamp; stored record deltas are kept.
        assert_eq!(b.max_timestamp(), source.max_timestamp());
        assert_eq!(b.base_timestamp(), source.base_timestamp());
        let got = records(&out);
        assert_eq!(
            got.iter().map(|r| r.offset).collect::<Vec<_>>(),
            [10, 11, 13]
        );
        assert!(got
            .iter()
            .all(|r| r.timestamp == Some(source.max_timestamp())));
        assert_eq!(
            got.iter().map(|r| &r.headers).collect::<Vec<_>>(),
            recs.iter().map(|r| &r.headers).collect::<Vec<_>>()
        );
        // And back to CreateTime: the append time becomes every record's timestamp.
        let (back, _) = conv(
            &out,
            &ConvertOptions {
                timestamp_type: Some(TimestampType::CreateTime),
                ..to(2)
            },
        );
        let b = v2_batches(&back)[0];
        assert_eq!(
            (b.timestamp_type(), b.last_offset(), b.last_sequence()),
            (TimestampType::CreateTime, 20, Some(110))
        );
        assert!(records(&back)
            .iter()
            .all(|r| r.timestamp == Some(source.max_timestamp())));
    }

    #[test]
    fn delete_horizon_kept_on_v2_rebuild() {
        let recs = sample(3, 0, false);
        let input = v2_builder(Compression::None, &recs, |b| {
            b.delete_horizon_ms(Some(T0 + 1000))
        });
        let opts = ConvertOptions {
            timestamp_type: Some(TimestampType::LogAppendTime),
            ..to(2)
        };
        let (out, _) = conv(&input, &opts);
        let b = v2_batches(&out)[0];
        assert_eq!(b.delete_horizon_ms(), Some(T0 + 1000));
        assert_eq!(b.max_timestamp(), v2_batches(&input)[0].max_timestamp());
    }

    #[test]
    fn v2_recompression_keeps_header_fields() {
        let recs = sample(5, 10, true);
        let input = v2_builder(Compression::Gzip, &recs, |b| {
            b.producer(42, 3, 100)
                .transactional(true)
                .partition_leader_epoch(9)
                .timestamp_type(TimestampType::LogAppendTime, T0 + 99)
        });
        let (out, stats) = conv(&input, &to_codec(2, Compression::Zstd));
        assert_eq!(stats.records_converted, 5);
        let (a, b) = (v2_batches(&input)[0], v2_batches(&out)[0]);
        assert_eq!(b.compression().unwrap(), Compression::Zstd);
        assert_eq!(b.attributes() & !7, a.attributes() & !7);
        for (x, y) in [
            (a.base_offset(), b.base_offset()),
            (a.last_offset(), b.last_offset()),
            (a.base_timestamp(), b.base_timestamp()),
            (a.max_timestamp(), b.max_timestamp()),
            (a.raw_producer_id(), b.raw_producer_id()),
        ] {
            assert_eq!(x, y);
        }
        assert_eq!(
            (
                a.raw_producer_epoch(),
                a.raw_base_sequence(),
                a.raw_partition_leader_epoch()
            ),
            (
                b.raw_producer_epoch(),
                b.raw_base_sequence(),
                b.raw_partition_leader_epoch()
            )
        );
        assert_eq!(records(&out), records(&input));
        // Control batches written compressed are rebuilt with the target codec.
        let key = ControlRecordKey {
            version: 0,
            kind: ControlRecordType::Abort,
        }
        .to_bytes();
        let value = EndTxnMarker {
            version: 0,
            coordinator_epoch: 3,
        }
        .to_bytes();
        let mut m = V2Builder::new(50)
            .compression(Compression::Gzip, None)
            .control(true)
            .transactional(true)
            .producer(42, 3, -1);
        m.append_control(T0, &key, &value).unwrap();
        let marker = m.finish().unwrap();
        let (out, _) = conv(&marker, &to_codec(2, Compression::None));
        let b = v2_batches(&out)[0];
        assert!(b.is_control() && b.is_transactional());
        assert_eq!(b.compression().unwrap(), Compression::None);
        assert_eq!(records(&out), records(&marker));
    }

    #[test]
    fn pass_through_off_rebuilds_with_a_new_level() {
        let recs: Vec<Rec> = sample(200, 0, true);
        let input = v2_builder(Compression::Gzip, &recs, |b| {
            b.producer(42, 3, 0).partition_leader_epoch(2)
        });
        let level = |l| ConvertOptions {
            level: Some(l),
            ..to_codec(2, Compression::Gzip)
        };
        // Kafka compares codecs, not levels: same codec, copied as it is.
        assert_eq!(conv(&input, &level(1)).0, input);
        for l in [1, 9, -1] {
            let opts = ConvertOptions {
                pass_through: false,
                ..level(l)
            };
            let (out, stats) = conv(&input, &opts);
            assert_eq!(
                (stats.entries_passed_through, stats.records_converted),
                (0, 200)
            );
            assert_eq!(records(&out), recs);
            let (a, b) = (v2_batches(&input)[0], v2_batches(&out)[0]);
            assert_eq!(b.attributes(), a.attributes());
            assert_eq!(
                (b.producer_id(), b.base_sequence(), b.last_offset()),
                (a.producer_id(), a.base_sequence(), a.last_offset())
            );
        }
        let bad = ConvertOptions {
            level: Some(0),
            ..to_codec(2, Compression::Gzip)
        };
        assert!(matches!(
            Converter::new(bad),
            Err(Error::InvalidLevel { level: 0, .. })
        ));
        // With the codec kept, a bad level is found at the first entry that needs it.
        let keep = ConvertOptions {
            level: Some(30),
            pass_through: false,
            ..to(2)
        };
        assert!(matches!(
            convert(&input, &keep, &mut Vec::new()),
            Err(Error::InvalidLevel { level: 30, .. })
        ));
    }

    #[test]
    fn log_append_time_between_v1_and_v2() {
        let recs = sample(3, 0, false);
        let v1 = build_with(
            1,
            Compression::None,
            TimestampType::LogAppendTime,
            T0 + 500,
            &recs,
        );
        let (v2, _) = conv(&v1, &to(2));
        let batches = v2_batches(&v2);
        assert_eq!(batches.len(), 3);
        for b in &batches {
            assert_eq!(
                (b.timestamp_type(), b.max_timestamp()),
                (TimestampType::LogAppendTime, T0 + 500)
            );
        }
        assert!(records(&v2).iter().all(|r| r.timestamp == Some(T0 + 500)));
        // v2 LogAppendTime -> v1: LogAppendTime messages carrying the append time.
        let v2 = build_with(
            2,
            Compression::None,
            TimestampType::LogAppendTime,
            T0 + 600,
            &recs,
        );
        let (v1, _) = conv(&v2, &to(1));
        for (batch, got) in read(&v1) {
            assert_eq!(batch.timestamp_type(), TimestampType::LogAppendTime);
            assert_eq!(got[0].timestamp, Some(T0 + 600));
        }
        // ... and v0 has none.
        let (v0, _) = conv(&v2, &to(0));
        assert!(records(&v0).iter().all(|r| r.timestamp.is_none()));
    }

    #[test]
    fn v0_up_conversion_has_create_time_and_no_timestamps() {
        let recs = sample(3, 5, false);
        let v0 = build(0, Compression::None, &recs);
        let (v2, _) = conv(&v0, &to(2));
        for b in v2_batches(&v2) {
            assert_eq!(b.timestamp_type(), TimestampType::CreateTime);
            assert_eq!((b.base_timestamp(), b.max_timestamp()), (-1, -1));
            assert_eq!(
                (
                    b.raw_producer_id(),
                    b.raw_producer_epoch(),
                    b.raw_base_sequence()
                ),
                (-1, -1, -1)
            );
            assert_eq!(b.raw_partition_leader_epoch(), -1);
        }
        assert_eq!(records(&v2), expect(&recs, 0, 2));
        let (v1, _) = conv(&v0, &to(1));
        for (batch, got) in read(&v1) {
            assert_eq!(batch.timestamp_type(), TimestampType::CreateTime);
            assert_eq!(got[0].timestamp, Some(-1));
        }
        // v1 -> v0 drops timestamps.
        let v1 = build(1, Compression::None, &recs);
        assert_eq!(records(&conv(&v1, &to(0)).0), as_read(&recs, 0));
    }

    #[test]
    fn records_per_batch_regroups_plain_data_only() {
        let recs = sample(10, 0, false);
        let v0 = build(0, Compression::None, &recs);
        let (one_each, _) = conv(&v0, &to(2));
        assert_eq!(v2_batches(&one_each).len(), 10);
        let opts = ConvertOptions {
            records_per_batch: Some(4),
            ..to(2)
        };
        let (grouped, stats) = conv(&v0, &opts);
        let batches = v2_batches(&grouped);
        assert_eq!(
            batches
                .iter()
                .map(|b| b.records_count())
                .collect::<Vec<_>>(),
            [4, 4, 2]
        );
        assert_eq!(batches[1].base_offset(), recs[4].offset);
        assert_eq!(
            (stats.entries_in, stats.entries_out, stats.records_converted),
            (10, 3, 10)
        );
        assert_eq!(records(&grouped), expect(&recs, 0, 2));

        // Plain v2 batches merge (base offset of the first), producer batches stay as they are.
        let mut input = build(2, Compression::None, &recs[..3]);
        input.extend(build(2, Compression::None, &recs[3..5]));
        let producer_at = input.len();
        input.extend(idempotent(&recs[5..8], 7, false));
        input.extend(idempotent(&recs[8..], 7, false));
        let opts = ConvertOptions {
            records_per_batch: Some(100),
            ..to(2)
        };
        let (out, stats) = conv(&input, &opts);
        let batches = v2_batches(&out);
        assert_eq!(
            batches
                .iter()
                .map(|b| b.records_count())
                .collect::<Vec<_>>(),
            [5, 3, 2]
        );
        assert_eq!(
            &out[out.len() - (input.len() - producer_at)..],
            &input[producer_at..]
        );
        assert_eq!(stats.entries_passed_through, 2);
        assert_eq!(records(&out), records(&input));

        // Legacy entries with different timestamp types or append times do not share a batch.
        let mut mixed = build_with(
            1,
            Compression::None,
            TimestampType::LogAppendTime,
            T0,
            &recs[..1],
        );
        mixed.extend(build_with(
            1,
            Compression::None,
            TimestampType::LogAppendTime,
            T0 + 1,
            &recs[1..2],
        ));
        mixed.extend(build_with(
            1,
            Compression::None,
            TimestampType::LogAppendTime,
            T0 + 1,
            &recs[2..3],
        ));
        mixed.extend(build(1, Compression::None, &recs[3..5]));
        let (out, _) = conv(
            &mixed,
            &ConvertOptions {
                records_per_batch: Some(100),
                ..to(2)
            },
        );
        let types: Vec<_> = v2_batches(&out)
            .iter()
            .map(|b| (b.timestamp_type(), b.records_count()))
            .collect();
        assert_eq!(
            types,
            [
                (TimestampType::LogAppendTime, 1),
                (TimestampType::LogAppendTime, 2),
                (TimestampType::CreateTime, 2)
            ]
        );
    }

    #[test]
    fn mixed_input_converted_in_order() {
        let all = sample(12, 0, false);
        let mut input = build(0, Compression::None, &all[..2]);
        input.extend(build(1, Compression::None, &all[2..4]));
        input.extend(build(2, Compression::None, &all[4..7]));
        input.extend(commit_marker(all[7].offset, 5, 0));
        input.extend(build_with(
            1,
            Compression::None,
            TimestampType::LogAppendTime,
            T0 + 1,
            &all[8..10],
        ));
        input.extend(build(2, Compression::None, &all[10..]));
        let expected = |dst: u8| {
            let mut e = expect(&all[..2], 0, dst);
            e.extend(expect(&all[2..4], 1, dst));
            e.extend(expect(&all[4..7], 2, dst));
            let mut lat = expect(&all[8..10], 1, dst);
            if dst > 0 {
                lat.iter_mut().for_each(|r| r.timestamp = Some(T0 + 1));
            }
            e.extend(lat);
            e.extend(expect(&all[10..], 2, dst));
            e
        };
        let (v2, stats) = conv(&input, &to(2));
        let mut want = expected(2);
        let marker = records(&commit_marker(all[7].offset, 5, 0)).remove(0);
        want.insert(7, marker);
        assert_eq!(records(&v2), want);
        assert_eq!((stats.entries_in, stats.entries_passed_through), (9, 3));
        for dst in [0, 1] {
            let (out, stats) = conv(&input, &to(dst));
            assert_eq!(records(&out), expected(dst));
            assert_eq!(stats.dropped_control_batches, 1);
            let offsets: Vec<i64> = records(&out).iter().map(|r| r.offset).collect();
            assert!(offsets.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn errors_carry_entry_positions() {
        let mut input = build(2, Compression::None, &sample(2, 0, false));
        let second = input.len();
        input.extend(build(1, Compression::None, &sample(1, 5, false)));
        let end = input.len();
        *input.last_mut().unwrap() ^= 0xff; // corrupt the v1 value
        let mut out = Vec::new();
        let e = convert(&input, &to(2), &mut out).unwrap_err();
        assert!(
            matches!(e, Error::CrcMismatch { at, .. } if at == second),
            "{e}"
        );
        assert!(out.is_empty());
        // Without verification the data converts (with a fresh CRC).
        let opts = ConvertOptions {
            verify_crc: false,
            ..to(2)
        };
        assert_eq!(conv(&input, &opts).1.entries_out, 2);

        // A v1 timestamp no builder accepts (-5): the writer's error names the entry.
        input[second + 18..second + 26].copy_from_slice(&(-5i64).to_be_bytes());
        fix_crc(&mut input, second, end);
        let e = convert(&input, &to(2), &mut out).unwrap_err();
        assert!(
            matches!(&e, Error::Unencodable { reason } if reason.starts_with(&format!("entry at byte {second}:"))),
            "{e}"
        );
        assert!(out.is_empty());

        // An unknown codec id.
        let mut bad = build(2, Compression::None, &sample(1, 0, false));
        bad[22] |= 6;
        let len = bad.len();
        fix_crc(&mut bad, 0, len);
        let e = convert(&bad, &to(1), &mut out).unwrap_err();
        assert!(
            matches!(e, Error::UnknownCompression { at: 21, id: 6 }),
            "{e}"
        );
    }

    #[test]
    fn hostile_offsets_are_errors_not_overflows() {
        // A v0 wrapper's inner offsets are absolute and unchecked: -1 then i64::MAX. Our
        // builders refuse such offsets, so patch them in (the offset is outside the CRC).
        let mut b = LegacyBuilder::new(0, -1).unwrap();
        b.append_with_offset(-1, &NewRecord::new(-1, None, Some(b"a")))
            .unwrap();
        b.append_with_offset(0, &NewRecord::new(-1, None, Some(b"b")))
            .unwrap();
        let mut inner = b.finish().unwrap();
        let second = inner.len() / 2;
        inner[second..second + 8].copy_from_slice(&i64::MAX.to_be_bytes());
        let mut value = Vec::new();
        crate::compression::compress(Compression::Gzip, None, 0, &inner, &mut value).unwrap();
        let mut w = LegacyBuilder::new(0, i64::MAX).unwrap();
        w.append(&NewRecord::new(-1, None, Some(&value))).unwrap();
        let mut input = w.finish().unwrap();
        input[17] = Compression::Gzip.id();
        let len = input.len();
        fix_crc(&mut input, 0, len);
        for opts in [
            to(2),
            to(1),
            to_codec(1, Compression::Gzip),
            to_codec(0, Compression::Lz4),
        ] {
            let mut out = Vec::new();
            match convert(&input, &opts, &mut out) {
                Err(Error::Unencodable { reason }) => {
                    assert!(reason.starts_with("entry at byte 0:"), "{reason}")
                }
                // v0 keeps absolute offsets and uncompressed v1 needs no deltas.
                Ok(_) => assert!(opts.magic == 0 || opts.compression.is_none()),
                Err(e) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn partial_tail_is_reported_not_converted() {
        let recs = sample(3, 0, false);
        let mut input = build(2, Compression::None, &recs);
        let whole = input.len();
        input.extend_from_slice(&build(2, Compression::None, &recs)[..30]);
        let mut out = Vec::new();
        let stats = convert(&input, &to(1), &mut out).unwrap();
        assert_eq!(records(&out), as_read(&recs, 1));
        let partial = stats.partial.unwrap();
        assert_eq!((partial.position, partial.bytes), (whole, 30));
        assert_eq!(stats.bytes_in, whole);
    }

    #[test]
    fn options_are_validated() {
        let bad = [
            to(3),
            ConvertOptions {
                records_per_batch: Some(0),
                ..to(2)
            },
            ConvertOptions {
                timestamp_type: Some(TimestampType::NoTimestamp),
                ..to(1)
            },
        ];
        for opts in bad {
            assert!(matches!(
                Converter::new(opts),
                Err(Error::Unencodable { .. })
            ));
        }
        let level = ConvertOptions {
            level: Some(10),
            ..to_codec(1, Compression::Gzip)
        };
        assert!(matches!(
            Converter::new(level),
            Err(Error::InvalidLevel { level: 10, .. })
        ));
        // NoTimestamp is what v0 has; any timestamp type is accepted (and ignored) for v0.
        let v0 = ConvertOptions {
            timestamp_type: Some(TimestampType::LogAppendTime),
            ..to(0)
        };
        let input = build(1, Compression::None, &sample(2, 0, false));
        assert_eq!(
            records(&conv(&input, &v0).0),
            as_read(&sample(2, 0, false), 0)
        );
        assert!(Converter::new(ConvertOptions {
            timestamp_type: Some(TimestampType::NoTimestamp),
            ..to(0)
        })
        .is_ok());
        assert_eq!(ConvertOptions::default(), to(2));
    }

    #[test]
    fn batched_merges_runs_of_uncompressed_legacy_messages_only() {
        for src in 0..=1u8 {
            let recs = sample(9, 10, false);
            // Three plain messages, a gzip wrapper of three, three plain messages, a v2 batch.
            let mut input = build(src, Compression::None, &recs[..3]);
            input.extend(build(src, Compression::Gzip, &recs[3..6]));
            input.extend(build(src, Compression::None, &recs[6..]));
            let tail = sample(2, 100, false);
            input.extend(build(2, Compression::None, &tail));
            for dst in 0..=2u8 {
                for codec in [Compression::None, Compression::Lz4] {
                    let ctx = format!("v{src} -> v{dst} {codec}");
                    let opts = ConvertOptions {
                        compression: Some(codec),
                        ..ConvertOptions::batched(dst)
                    };
                    let (out, stats) = conv(&input, &opts);
                    let mut all = expect(&recs, src, dst);
                    all.extend(expect(&tail, 2, dst));
                    assert_eq!(records(&out), all, "{ctx}");
                    let expected = if dst < 2 && codec == Compression::None {
                        11
                    } else {
                        4
                    };
                    assert_eq!(stats.entries_out, expected, "{ctx}");
                    // A bound of two messages' bytes splits each run of three into 2 + 1.
                    let one = build(src, Compression::None, &recs[..1]).len();
                    let opts = ConvertOptions {
                        legacy_run_bytes: Some(2 * one + 1),
                        ..opts
                    };
                    let (out, stats) = conv(&input, &opts);
                    assert_eq!(records(&out), all, "{ctx}");
                    let expected = if dst < 2 && codec == Compression::None {
                        11
                    } else {
                        6
                    };
                    assert_eq!(stats.entries_out, expected, "{ctx}");
                }
            }
        }
        // Streaming: the run is held back until something ends it.
        let recs = sample(3, 0, false);
        let input = build(1, Compression::None, &recs);
        let mut converter = Converter::new(ConvertOptions::batched(2)).unwrap();
        let mut out = Vec::new();
        for batch in Entries::new(&input) {
            converter.push(&batch.unwrap(), &mut out).unwrap();
        }
        assert!(out.is_empty());
        let stats = converter.finish(&mut out).unwrap();
        assert_eq!((stats.entries_out, v2_batches(&out).len()), (1, 1));
    }

    #[test]
    fn non_default_lz4_levels_are_refused() {
        let opts = ConvertOptions {
            compression: Some(Compression::Lz4),
            level: Some(12),
            ..ConvertOptions::batched(2)
        };
        let e = opts.validate().unwrap_err().to_string();
        assert!(e.contains("LZ4 HC"), "{e}");
        let opts = ConvertOptions {
            level: Some(9),
            ..opts
        };
        assert!(opts.validate().is_ok());
        // With each entry's own codec kept, the level is checked against an lz4 entry.
        let input = build(2, Compression::Lz4, &sample(2, 0, false));
        let opts = ConvertOptions {
            level: Some(3),
            ..ConvertOptions::new(2)
        };
        let mut out = Vec::new();
        let e = convert(&input, &opts, &mut out).unwrap_err().to_string();
        assert!(e.contains("LZ4 HC"), "{e}");
    }

    #[test]
    fn converter_streams_entry_by_entry() {
        let recs = sample(6, 0, true);
        let input = build(2, Compression::None, &recs);
        let mut converter = Converter::new(to(1)).unwrap();
        let mut out = Vec::new();
        for batch in Entries::new(&input) {
            converter.push(&batch.unwrap(), &mut out).unwrap();
        }
        // Nothing is held back without records_per_batch.
        let written = out.len();
        assert_eq!(converter.stats().bytes_out, written);
        let stats = converter.finish(&mut out).unwrap();
        assert_eq!(out.len(), written);
        assert_eq!(
            (
                stats.entries_out,
                stats.records_converted,
                stats.dropped_headers
            ),
            (6, 6, 9)
        );
    }

    #[test]
    fn legacy_wrappers_offsets_and_timestamps() {
        let recs = sample(4, 100, false); // offsets 100, 101, 103, 106
        let v2 = build(2, Compression::Gzip, &recs);
        for magic in [0u8, 1] {
            let (out, stats) = conv(&v2, &to(magic));
            assert_eq!(stats.entries_out, 1);
            let entries = read(&out);
            let Batch::Legacy(wrapper) = entries[0].0 else {
                panic!()
            };
            assert_eq!(wrapper.offset(), 106, "wrapper carries the last offset");
            assert_eq!(entries[0].1, as_read(&recs, magic));
            let mut scratch = Vec::new();
            let stored: Vec<i64> = wrapper
                .records(&mut scratch, usize::MAX)
                .unwrap()
                .map(|r| i64::from_be_bytes(r.unwrap().raw[..8].try_into().unwrap()))
                .collect();
            // v1 inner offsets are relative to the first, v0's absolute.
            let want: Vec<i64> = if magic == 1 {
                vec![0, 1, 3, 6]
            } else {
                vec![100, 101, 103, 106]
            };
            assert_eq!(stored, want);
            if magic == 1 {
                assert_eq!(wrapper.timestamp(), Some(recs[3].timestamp.unwrap()));
            }
        }
        // A v1 LogAppendTime wrapper becomes one LogAppendTime v2 batch with the wrapper's time.
        let v1 = build_with(
            1,
            Compression::Snappy,
            TimestampType::LogAppendTime,
            T0 + 42,
            &recs,
        );
        let (out, _) = conv(&v1, &to(2));
        let b = v2_batches(&out)[0];
        assert_eq!(
            (b.records_count(), b.base_offset(), b.last_offset()),
            (4, 100, 106)
        );
        assert_eq!(
            (b.timestamp_type(), b.max_timestamp()),
            (TimestampType::LogAppendTime, T0 + 42)
        );
        assert_eq!(b.compression().unwrap(), Compression::Snappy);
        // Regrouping compressed legacy output.
        let v0 = build(0, Compression::None, &sample(10, 0, false));
        let opts = ConvertOptions {
            records_per_batch: Some(4),
            ..to_codec(1, Compression::Lz4)
        };
        let (out, _) = conv(&v0, &opts);
        let counts: Vec<usize> = read(&out).iter().map(|(_, r)| r.len()).collect();
        assert_eq!(counts, [4, 4, 2]);
        for codec in CODECS {
            let (out, _) = conv(&v2, &to_codec(2, codec));
            assert_eq!(records(&out), records(&v2));
        }
    }

    fn arb_records(headers: bool) -> impl Strategy<Value = Vec<Rec>> {
        let ts = prop_oneof![Just(-1i64), 0i64..(1 << 42)];
        let bytes = proptest::option::of(proptest::collection::vec(any::<u8>(), 0..12));
        let header = (
            proptest::collection::vec(any::<u8>(), 0..6),
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..6)),
        );
        let hs = proptest::collection::vec(header, 0..if headers { 3 } else { 1 });
        let rec = (1i64..4, ts, bytes.clone(), bytes, hs);
        (0i64..1 << 40, proptest::collection::vec(rec, 1..12)).prop_map(|(base, items)| {
            let mut offset = base;
            items
                .into_iter()
                .map(|(gap, timestamp, key, value, headers)| {
                    offset += gap;
                    Rec {
                        offset,
                        timestamp: Some(timestamp),
                        key,
                        value,
                        headers,
                    }
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn down_and_up_again_keeps_records(
            recs in arb_records(true),
            per_batch in proptest::option::of(1usize..5),
            log_append_time in any::<bool>(),
        ) {
            let ts = if log_append_time { TimestampType::LogAppendTime } else { TimestampType::CreateTime };
            let v2 = build_with(2, Compression::None, ts, T0, &recs);
            let source = records(&v2);
            for magic in [0u8, 1] {
                let (legacy, stats) = conv(&v2, &to(magic));
                prop_assert_eq!(stats.dropped_headers, recs.iter().map(|r| r.headers.len()).sum::<usize>());
                let opts = ConvertOptions { records_per_batch: per_batch, ..to(2) };
                let (back, _) = conv(&legacy, &opts);
                prop_assert_eq!(records(&back), expect(&source, magic, 2));
                for b in v2_batches(&back) {
                    let want = if magic == 1 { ts } else { TimestampType::CreateTime };
                    prop_assert_eq!(b.timestamp_type(), want);
                }
            }
        }

        #[test]
        fn corrupted_input_never_panics(
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
            magic in 0u8..3,
            codec in proptest::option::of(proptest::sample::select(Compression::ALL.to_vec())),
            per_batch in proptest::option::of(1usize..4),
        ) {
            let recs = sample(5, 7, true);
            let mut input = build(0, Compression::Gzip, &recs);
            input.extend(build(1, Compression::None, &recs));
            input.extend(build(1, Compression::Snappy, &recs));
            input.extend(build(2, Compression::Lz4, &recs));
            input.extend(build(2, Compression::None, &recs));
            input.extend(commit_marker(100, 5, 0));
            for (i, b) in flips {
                let at = i.index(input.len());
                input[at] ^= b | 1;
            }
            let opts = ConvertOptions {
                compression: codec.filter(|c| c.allowed_in(magic)),
                records_per_batch: per_batch,
                verify_crc: false,
                ..to(magic)
            };
            let mut out = Vec::new();
            let _ = convert(&input, &opts, &mut out);
        }

        #[test]
        fn up_and_down_again_keeps_records(recs in arb_records(false), magic in 0u8..2, per_batch in proptest::option::of(1usize..5)) {
            let legacy = build(magic, Compression::None, &recs);
            let opts = ConvertOptions { records_per_batch: per_batch, ..to(2) };
            let (v2, _) = conv(&legacy, &opts);
            let (back, _) = conv(&v2, &to(magic));
            prop_assert_eq!(back, legacy);
        }
    }
}
