//! Entries built from a list of records with owned bytes, as `krec build` and `krec log append`
//! build them: records grouped N per entry, offsets running on across entries (or restarting,
//! as a producer sends batches for a broker to assign offsets), producer sequences continuing
//! from batch to batch. With the `json` feature, `read_json_records` reads the records from
//! JSON lines (`krec build`'s input).
//!
//! # Examples
//!
//! ```
//! use krecords_codec::build::{build, BatchOptions, BuildRecord};
//!
//! let records: Vec<BuildRecord> = ["hello", "world"]
//!     .iter()
//!     .map(|v| BuildRecord::new(1714000000000, None, Some(v.as_bytes().to_vec())))
//!     .collect();
//! let opts = BatchOptions { partition_leader_epoch: 0, ..BatchOptions::new(2) };
//! let bytes = build(&opts, &records)?;
//! assert_eq!(bytes.len(), 85); // one v2 batch of two records
//! # Ok::<(), krecords_codec::Error>(())
//! ```

use crate::write::{LegacyBuilder, NewRecord, V2Builder};
use crate::{Compression, Error, Header, TimestampType};

/// A record with owned bytes, to build entries from (the input of `krec build`; what the read
/// side gives back is `read::OwnedRecord`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildRecord {
    /// The record's offset, if given (offsets must increase, and are not negative; gaps are
    /// allowed); `None`: the next one.
    pub offset: Option<i64>,
    /// The timestamp (ms).
    pub timestamp: i64,
    /// Key bytes.
    pub key: Option<Vec<u8>>,
    /// Value bytes.
    pub value: Option<Vec<u8>>,
    /// Headers in order: key bytes, optional value bytes.
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl BuildRecord {
    /// A record at the next offset, without headers.
    pub fn new(timestamp: i64, key: Option<Vec<u8>>, value: Option<Vec<u8>>) -> Self {
        BuildRecord {
            offset: None,
            timestamp,
            key,
            value,
            headers: Vec::new(),
        }
    }
}

/// Batch-level settings for [`build_batches`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchOptions {
    /// Message format: 0, 1 or 2.
    pub magic: u8,
    /// Codec.
    pub compression: Compression,
    /// Codec level (`None`: the codec's default).
    pub level: Option<i32>,
    /// Timestamp type (v1, v2).
    pub timestamp_type: TimestampType,
    /// Append time written under LogAppendTime.
    pub log_append_time: i64,
    /// Producer id (v2; -1 for none).
    pub producer_id: i64,
    /// Producer epoch (v2; -1 for none).
    pub producer_epoch: i16,
    /// Base sequence of the first batch (v2; -1 for none); later batches continue from it.
    pub base_sequence: i32,
    /// Transactional flag (v2).
    pub transactional: bool,
    /// Partition leader epoch (v2).
    pub partition_leader_epoch: i32,
    /// Delete horizon (v2).
    pub delete_horizon_ms: Option<i64>,
    /// Records per entry; 0 = all in one.
    pub records_per_batch: usize,
    /// Offset of the first record: not negative, as no Kafka offset is ([`check_offsets`]).
    pub base_offset: i64,
    /// Start every batch at `base_offset` again, as a producer writes batches for a broker to
    /// assign offsets (`krec log append`), instead of running offsets on across batches.
    pub restart_offsets: bool,
}

impl BatchOptions {
    /// `magic`, uncompressed, CreateTime, no producer, partition leader epoch -1 (as a producer
    /// writes it), all records in one entry from offset 0.
    pub fn new(magic: u8) -> Self {
        BatchOptions {
            magic,
            compression: Compression::None,
            level: None,
            timestamp_type: TimestampType::CreateTime,
            log_append_time: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            transactional: false,
            partition_leader_epoch: -1,
            delete_horizon_ms: None,
            records_per_batch: 0,
            base_offset: 0,
            restart_offsets: false,
        }
    }

    /// These options with the producer of an idempotent or transactional producer's batches,
    /// as `krec log append` takes it: no `id` and no `epoch` (nor `base_sequence`) is no
    /// producer; an `id` needs an `epoch`, both at least 0; `base_sequence` (default 0) at
    /// least 0; `transactional` needs an `id`. The error names the option that is wrong, as
    /// `--producer-id`, `--producer-epoch`, `--base-sequence` or `--transactional`.
    pub fn with_producer(
        self,
        id: Option<i64>,
        epoch: Option<i16>,
        base_sequence: Option<i32>,
        transactional: bool,
    ) -> Result<Self, String> {
        let (producer_id, producer_epoch, base_sequence) = match (id, epoch, base_sequence) {
            (None, None, None) if !transactional => (-1, -1, -1),
            (None, None, None) => return Err("--transactional needs --producer-id".into()),
            (None, ..) => {
                return Err("--producer-epoch and --base-sequence need --producer-id".into())
            }
            (Some(_), None, _) => return Err("--producer-id needs --producer-epoch".into()),
            (Some(id), Some(epoch), _) if id < 0 || epoch < 0 => {
                return Err(format!(
                    "--producer-id and --producer-epoch must be at least 0, not {id} and {epoch}"
                ))
            }
            (Some(_), Some(_), Some(seq)) if seq < 0 => {
                return Err(format!("--base-sequence must be at least 0, not {seq}"))
            }
            (Some(id), Some(epoch), seq) => (id, epoch, seq.unwrap_or(0)),
        };
        Ok(BatchOptions {
            producer_id,
            producer_epoch,
            base_sequence,
            transactional,
            ..self
        })
    }
}

/// Appends `$recs` (each at its given offset, or at the next one) to `$b`, a `V2Builder` or a
/// `LegacyBuilder` (alike in these methods, with no trait in common), and finishes the entry into
/// `$buf`; evaluates to the offset after the entry, returning a codec error from the function.
macro_rules! append_all {
    ($b:ident, $recs:expr, $buf:expr) => {{
        let mut b = $b;
        for (offset, r) in $recs {
            match offset {
                Some(o) => b.append_with_offset(*o, r)?,
                None => {
                    b.append(r)?;
                }
            }
        }
        let next_offset = b.next_offset();
        b.finish_into($buf)?;
        next_offset
    }};
}

/// Checks a base offset given to build entries from (records, or a transaction marker): Kafka's
/// offsets are not negative.
///
/// # Errors
///
/// [`Error::Unencodable`]: `base offset -1 is negative: Kafka's offsets are 0 to
/// 9223372036854775807`.
pub fn check_base_offset(base_offset: i64) -> Result<(), Error> {
    if base_offset < 0 {
        return Err(Error::Unencodable {
            reason: format!(
                "base offset {base_offset} is negative: Kafka's offsets are 0 to {}",
                i64::MAX
            ),
        });
    }
    Ok(())
}

/// Checks the offsets `records` would get from `opts` before anything is built (so that `emit`
/// sees no entry of a build that fails on them): Kafka's offsets are not negative, so neither
/// the base offset nor a record's given offset may be, and the offsets the records run on to
/// may not pass `i64::MAX` (where they would wrap around to negative ones).
///
/// # Errors
///
/// [`Error::Unencodable`] saying which: `base offset -1 is negative: Kafka's offsets are 0 to
/// 9223372036854775807`, `records[3]: offset -1 is negative: ...`, `the batch's last offset
/// would be past 9223372036854775807 (base offset 9223372036854775807 and 3 records)`.
///
/// # Examples
///
/// ```
/// use krecords_codec::build::{check_offsets, BatchOptions, BuildRecord};
///
/// let records = vec![BuildRecord::new(0, None, None); 2];
/// let opts = |base_offset| BatchOptions { base_offset, ..BatchOptions::new(2) };
/// assert!(check_offsets(&opts(0), &records).is_ok());
/// assert!(check_offsets(&opts(-1), &records).is_err());
/// assert!(check_offsets(&opts(i64::MAX - 1), &records).is_ok());
/// let past = check_offsets(&opts(i64::MAX), &records).unwrap_err();
/// assert!(past.to_string().contains("the batch's last offset would be past 9223372036854775807"));
/// ```
pub fn check_offsets(opts: &BatchOptions, records: &[BuildRecord]) -> Result<(), Error> {
    let refuse = |reason: String| Err(Error::Unencodable { reason });
    check_base_offset(opts.base_offset)?;
    let per = if opts.records_per_batch == 0 {
        records.len().max(1)
    } else {
        opts.records_per_batch
    };
    // The offset the next record without one gets (`None`: past `i64::MAX`).
    let mut next = Some(opts.base_offset);
    for (i, r) in records.iter().enumerate() {
        if opts.restart_offsets && i % per == 0 {
            next = Some(opts.base_offset);
        }
        let offset = match (r.offset, next) {
            (Some(o), _) if o < 0 => {
                return refuse(format!(
                    "records[{i}]: offset {o} is negative: Kafka's offsets are 0 to {}",
                    i64::MAX
                ))
            }
            (Some(o), _) | (None, Some(o)) => o,
            (None, None) => {
                return refuse(format!(
                    "the batch's last offset would be past {} (base offset {} and {} records)",
                    i64::MAX,
                    opts.base_offset,
                    records.len()
                ))
            }
        };
        next = offset.checked_add(1);
    }
    Ok(())
}

/// Builds entries from `records` (`records_per_batch` at a time) and hands each entry's bytes and
/// record count to `emit`, in order.
///
/// # Errors
///
/// [`Error::Unencodable`] for producer fields, transactions or a delete horizon with magic 0 or
/// 1, and for offsets [`check_offsets`] refuses (before any entry is emitted); the builders'
/// errors for options the magic cannot carry and records they refuse.
pub fn build_batches(
    opts: &BatchOptions,
    records: &[BuildRecord],
    mut emit: impl FnMut(&[u8], usize),
) -> Result<(), Error> {
    check_offsets(opts, records)?;
    if opts.magic < 2
        && (opts.producer_id != -1 || opts.transactional || opts.delete_horizon_ms.is_some())
    {
        return Err(Error::Unencodable {
            reason: format!(
                "magic {} has no producer id, transactions or delete horizon",
                opts.magic
            ),
        });
    }
    let per = if opts.records_per_batch == 0 {
        records.len().max(1)
    } else {
        opts.records_per_batch
    };
    let mut buf = Vec::new();
    let mut next_offset = opts.base_offset;
    let mut sequence = opts.base_sequence;
    for chunk in records.chunks(per) {
        if opts.restart_offsets {
            next_offset = opts.base_offset;
        }
        // As Kafka's builder: the batch starts at the running offset; records with explicit
        // offsets may sit after it (gaps), and the next batch starts after the last offset.
        let base = next_offset;
        let header_store: Vec<Vec<Header<'_>>> = chunk
            .iter()
            .map(|r| r.headers.iter().map(Header::from).collect())
            .collect();
        let recs: Vec<(Option<i64>, NewRecord<'_>)> = chunk
            .iter()
            .zip(&header_store)
            .map(|(r, h)| {
                (
                    r.offset,
                    NewRecord::new(r.timestamp, r.key.as_deref(), r.value.as_deref())
                        .with_headers(h),
                )
            })
            .collect();
        buf.clear();
        if opts.magic == 2 {
            let b = V2Builder::new(base)
                .compression(opts.compression, opts.level)
                .timestamp_type(opts.timestamp_type, opts.log_append_time)
                .producer(opts.producer_id, opts.producer_epoch, sequence)
                .transactional(opts.transactional)
                .partition_leader_epoch(opts.partition_leader_epoch)
                .delete_horizon_ms(opts.delete_horizon_ms);
            next_offset = append_all!(b, &recs, &mut buf);
        } else {
            let b = LegacyBuilder::new(opts.magic, base)?
                .compression(opts.compression, opts.level)?
                .timestamp_type(opts.timestamp_type, opts.log_append_time);
            next_offset = append_all!(b, &recs, &mut buf);
        }
        emit(&buf, chunk.len());
        if sequence >= 0 {
            // A record's sequence is the base sequence plus its offset delta, so the next batch
            // continues after the offset span of this one.
            let span = i32::try_from(next_offset.wrapping_sub(base)).unwrap_or(i32::MAX);
            sequence = crate::read::v2::increment_sequence(sequence, span);
        }
    }
    Ok(())
}

/// [`build_batches`] into one buffer: the bytes `krec build` writes.
///
/// # Errors
///
/// As [`build_batches`].
pub fn build(opts: &BatchOptions, records: &[BuildRecord]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    build_batches(opts, records, |bytes, _| out.extend_from_slice(bytes))?;
    Ok(out)
}

#[cfg(feature = "json")]
mod json;
#[cfg(feature = "json")]
pub use json::{
    read_json_produce_records, read_json_records, read_value_lines, BytesEncoding, JsonLinesError,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{Batch, Entries};

    /// `krec log append`'s producer options: none, a whole producer, and each refusal naming
    /// its option.
    #[test]
    fn a_producer_is_whole_or_refused_naming_the_option() {
        let o = |id, epoch, seq, txn| BatchOptions::new(2).with_producer(id, epoch, seq, txn);
        let none = o(None, None, None, false).unwrap();
        assert_eq!(
            (none.producer_id, none.producer_epoch, none.base_sequence),
            (-1, -1, -1)
        );
        let p = o(Some(7), Some(1), None, true).unwrap();
        assert_eq!(
            (p.producer_id, p.producer_epoch, p.base_sequence),
            (7, 1, 0)
        );
        assert!(p.transactional);
        assert_eq!(
            o(Some(7), Some(1), Some(5), false).unwrap().base_sequence,
            5
        );
        let refused = |id, epoch, seq, txn, option: &str| {
            let e = o(id, epoch, seq, txn).unwrap_err();
            assert!(e.starts_with(option), "{e}");
        };
        refused(
            None,
            None,
            None,
            true,
            "--transactional needs --producer-id",
        );
        refused(
            None,
            Some(0),
            None,
            false,
            "--producer-epoch and --base-sequence need",
        );
        refused(
            None,
            None,
            Some(0),
            false,
            "--producer-epoch and --base-sequence need",
        );
        refused(
            Some(7),
            None,
            None,
            false,
            "--producer-id needs --producer-epoch",
        );
        refused(
            Some(-2),
            Some(0),
            None,
            false,
            "--producer-id and --producer-epoch must",
        );
        refused(
            Some(7),
            Some(0),
            Some(-1),
            false,
            "--base-sequence must be at least 0",
        );
    }

    fn records(n: usize) -> Vec<BuildRecord> {
        (0..n)
            .map(|i| BuildRecord::new(1000 + i as i64, None, Some(vec![b'v'; i])))
            .collect()
    }

    #[test]
    fn offsets_and_sequences_run_on_across_batches() {
        let opts = BatchOptions {
            records_per_batch: 2,
            base_offset: 10,
            producer_id: 7,
            producer_epoch: 0,
            base_sequence: 5,
            ..BatchOptions::new(2)
        };
        let mut counts = Vec::new();
        build_batches(&opts, &records(5), |_, n| counts.push(n)).unwrap();
        assert_eq!(counts, [2, 2, 1]);
        let bytes = build(&opts, &records(5)).unwrap();
        let got: Vec<(i64, i64, Option<i32>)> = Entries::new(&bytes)
            .map(|b| {
                let b = b.unwrap();
                (b.offset_field(), b.last_offset(), b.base_sequence())
            })
            .collect();
        assert_eq!(
            got,
            [(10, 11, Some(5)), (12, 13, Some(7)), (14, 14, Some(9))]
        );
        let restart = BatchOptions {
            restart_offsets: true,
            ..opts
        };
        let bytes = build(&restart, &records(5)).unwrap();
        assert!(Entries::new(&bytes).all(|b| b.unwrap().offset_field() == 10));
    }

    #[test]
    fn offsets_are_not_negative_and_do_not_pass_i64_max() {
        let opts = |base_offset| BatchOptions {
            base_offset,
            ..BatchOptions::new(2)
        };
        for base in [-1, i64::MIN] {
            let e = build(&opts(base), &records(3)).unwrap_err();
            assert!(
                e.to_string()
                    .contains(&format!("base offset {base} is negative")),
                "{e}"
            );
        }
        // Up to i64::MAX exactly: one record there, or three ending there.
        assert!(build(&opts(i64::MAX), &records(1)).is_ok());
        let bytes = build(&opts(i64::MAX - 2), &records(3)).unwrap();
        assert_eq!(
            Entries::new(&bytes).next().unwrap().unwrap().last_offset(),
            i64::MAX
        );
        for per in [0, 1, 2] {
            let o = BatchOptions {
                records_per_batch: per,
                ..opts(i64::MAX - 1)
            };
            let mut emitted = 0;
            let e = build_batches(&o, &records(3), |_, _| emitted += 1).unwrap_err();
            assert!(
                e.to_string().contains(
                    "the batch's last offset would be past 9223372036854775807 \
                     (base offset 9223372036854775806 and 3 records)"
                ),
                "{e}"
            );
            assert_eq!(emitted, 0, "refused before any entry is emitted");
        }
        // Each batch from the base offset again: no offset runs past.
        let restart = BatchOptions {
            records_per_batch: 1,
            restart_offsets: true,
            ..opts(i64::MAX)
        };
        assert!(build(&restart, &records(3)).is_ok());
        // A given offset is not negative either.
        let mut given = records(2);
        given[1].offset = Some(-1);
        let e = build(&opts(0), &given).unwrap_err();
        assert!(
            e.to_string()
                .contains("records[1]: offset -1 is negative: Kafka's offsets are 0 to"),
            "{e}"
        );
    }

    #[test]
    fn legacy_magic_refuses_producer_fields() {
        let opts = BatchOptions {
            producer_id: 1,
            ..BatchOptions::new(1)
        };
        let e = build(&opts, &records(1)).unwrap_err();
        assert!(e.to_string().contains("magic 1 has no producer id"), "{e}");
        let bytes = build(&BatchOptions::new(0), &records(3)).unwrap();
        assert_eq!(Entries::new(&bytes).count(), 3, "one v0 message per record");
        assert!(matches!(
            Entries::new(&bytes).next(),
            Some(Ok(Batch::Legacy(_)))
        ));
    }
}
