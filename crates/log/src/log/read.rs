//! Reads: raw reads, fetches at either isolation level, the consumer's view, offset lookups
//! (Kafka's `ListOffsets`).

use super::*;
use crate::consumer::{self, Consumed};
use crate::error::{Error, Result};
use crate::segment::Segment;
use crate::transaction::{AbortedTxn, IsolationLevel};

impl Log {
    /// Reads whole entries starting with the one holding `offset`, up to `max_bytes` (at least
    /// one entry even when it is larger, as Kafka's `minOneMessage`), across segments. The
    /// bytes are returned as stored: no decompression, no conversion.
    ///
    /// # Errors
    ///
    /// [`Error::OffsetOutOfRange`] outside `[log start offset, log end offset]`; corruption or
    /// I/O errors met while reading.
    pub fn read(&self, offset: i64, max_bytes: usize) -> Result<ReadResult> {
        let f = self.fetch(offset, max_bytes, IsolationLevel::ReadUncommitted)?;
        Ok(ReadResult {
            bytes: f.bytes,
            next_offset: f.next_offset,
            high_watermark: f.high_watermark,
            log_start_offset: f.log_start_offset,
        })
    }

    /// Reads as a Kafka Fetch does at `isolation`: whole entries from the one holding `offset`,
    /// up to `max_bytes` (at least one entry), stopping at the high watermark
    /// (read_uncommitted) or at the last stable offset (read_committed: an offset at or past it
    /// returns no bytes, as Kafka does). For read_committed the aborted transactions that
    /// overlap the range returned are listed, from the transaction indexes of the segments from
    /// the one holding `offset` on (Kafka's `collectAbortedTransactions`). Kafka bounds that
    /// range from the offset index (an approximation from above); this log uses the offset after
    /// the last entry returned, which lists no transaction that starts after the bytes.
    ///
    /// # Errors
    ///
    /// [`Error::OffsetOutOfRange`] outside `[log start offset, log end offset]`;
    /// [`Error::DamagedSegment`] for a fetch at the end of a log whose end is damage
    /// ([`Log::damage`]): the fetch before it returned the last entries before the damage;
    /// corruption or I/O errors met while reading.
    pub fn fetch(
        &self,
        offset: i64,
        max_bytes: usize,
        isolation: IsolationLevel,
    ) -> Result<FetchResult> {
        let mut bytes = Vec::new();
        let info = self.fetch_into(offset, max_bytes, isolation, &mut bytes)?;
        Ok(FetchResult {
            bytes,
            next_offset: info.next_offset,
            high_watermark: info.high_watermark,
            last_stable_offset: info.last_stable_offset,
            log_start_offset: info.log_start_offset,
            aborted_transactions: info.aborted_transactions,
        })
    }

    /// [`Log::fetch`] into a buffer of the caller's: the entries are appended to `buf` (read
    /// from the segment files straight into it, nothing else allocated for them), so one buffer
    /// serves fetch after fetch, or a response being assembled takes the entries where they
    /// belong. `max_bytes` counts the bytes of this fetch only, not what `buf` held before;
    /// [`FetchInfo::range`] says where in `buf` they are. On error `buf` is as it was.
    ///
    /// To share a [`FetchResult`]'s bytes instead (between threads, consumers, or as
    /// [`OwnedRecord`](krecords_codec::read::OwnedRecord)s), turn them into a `bytes::Bytes`:
    /// `Bytes::from(result.bytes)` takes the vector's allocation without copying.
    ///
    /// # Errors
    ///
    /// As [`Log::fetch`].
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_codec::write::{NewRecord, V2Builder};
    /// use krecords_log::{AppendOrigin, Env, IsolationLevel, Log, LogConfig};
    ///
    /// # fn main() -> krecords_log::Result<()> {
    /// let mut log = Log::create_with("/t-0", LogConfig::default(), Env::memory())?;
    /// for v in [b"a", b"b"] {
    ///     let mut b = V2Builder::new(0);
    ///     b.append(&NewRecord::new(1_714_000_000_000, None, Some(v))).unwrap();
    ///     log.append(&b.finish().unwrap(), AppendOrigin::Client)?;
    /// }
    /// let mut buf = b"response header".to_vec();
    /// let info = log.fetch_into(0, 1 << 20, IsolationLevel::ReadUncommitted, &mut buf)?;
    /// assert_eq!((info.range.start, info.next_offset), (15, 2));
    /// assert_eq!(&buf[info.range], &log.read(0, 1 << 20)?.bytes[..]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fetch_into(
        &self,
        offset: i64,
        max_bytes: usize,
        isolation: IsolationLevel,
        buf: &mut Vec<u8>,
    ) -> Result<FetchInfo> {
        let log_end = self.log_end_offset();
        let start = buf.len();
        let mut result = FetchInfo {
            range: start..start,
            next_offset: offset,
            high_watermark: self.high_watermark(),
            last_stable_offset: self.last_stable_offset(),
            log_start_offset: self.log_start_offset,
            aborted_transactions: None,
        };
        if offset < self.log_start_offset || offset > log_end {
            return Err(Error::OffsetOutOfRange {
                offset,
                log_start_offset: self.log_start_offset,
                log_end_offset: log_end,
            });
        }
        let max_offset = match isolation {
            IsolationLevel::ReadUncommitted => result.high_watermark,
            IsolationLevel::ReadCommitted => result.last_stable_offset,
        };
        // Nothing more to read because the damage ends the log here (and, read_committed, may
        // hide the marker of the transaction that holds the last stable offset), or hides the
        // offsets from `d.offset` on.
        if let Some(d) = self
            .damage
            .as_ref()
            .filter(|d| offset >= max_offset || offset >= d.offset)
        {
            return Err(d.error());
        }
        let first = self
            .segments
            .iter()
            .rposition(|s| s.base_offset() <= offset)
            .unwrap_or(0);
        if offset < max_offset {
            for segment in &self.segments[first..] {
                let read = segment.find_position(offset).and_then(|p| match p {
                    Some(position) => segment
                        .read_into(position, max_bytes, max_offset, buf, start)
                        .map(Some),
                    None => Ok(None),
                });
                let (last, full) = match read {
                    Ok(Some(r)) => r,
                    Ok(None) => continue,
                    Err(e) => {
                        buf.truncate(start);
                        return Err(e);
                    }
                };
                if let Some(last) = last {
                    result.next_offset = last + 1;
                }
                if full {
                    break;
                }
            }
        }
        result.range = start..buf.len();
        if result.range.is_empty() && offset < max_offset {
            self.check_offsets_beyond_end(&self.segments[first..], offset, log_end)?;
        }
        if isolation == IsolationLevel::ReadCommitted {
            let mut aborted = Vec::new();
            if !result.range.is_empty() {
                for segment in &self.segments[first..] {
                    let (found, complete) = segment.txn_index().collect(offset, result.next_offset);
                    aborted.extend(found.iter().map(AbortedTxn::as_aborted_transaction));
                    if complete {
                        break;
                    }
                }
            }
            result.aborted_transactions = Some(aborted);
        }
        Ok(result)
    }

    /// Why a fetch from `offset`, below what it may read, found nothing: the entry holding
    /// `offset` (the first of `segments` to hold one at or after it) claims offsets at or past
    /// the log end offset, which no entry of a log can hold — its offset field was damaged
    /// (no CRC covers a v2 batch's base offset). That is [`Error::DamagedSegment`]: a reader
    /// would otherwise take the empty answer for the end of the log and stop quietly. Any
    /// other empty answer (a compacted log's gap before the batch at the last stable offset)
    /// is not an error.
    fn check_offsets_beyond_end(
        &self,
        segments: &[Segment],
        offset: i64,
        log_end: i64,
    ) -> Result<()> {
        for segment in segments {
            let Some(position) = segment.find_position(offset)? else {
                continue;
            };
            if let Some((first, last)) = segment.offsets_at(position)? {
                if last >= log_end {
                    return Err(Error::DamagedSegment {
                        path: segment.log_path().to_path_buf(),
                        position,
                        reason: format!(
                            "byte {position}: the entry holds offsets {first}..={last}, at or past the log end \
                             offset {log_end}: its offset field is damaged, and the records \
                             from offset {offset} on cannot be read in order (`krec verify` \
                             lists the damage, `krec salvage` keeps every intact entry)"
                        ),
                    });
                }
            }
            break;
        }
        Ok(())
    }

    /// Fetches at `isolation` and filters the bytes as a Kafka consumer does
    /// ([`consumer::consume`]): the records an application would see, aborted transactions and
    /// control records dropped. This is `krec log read --isolation ...`: page on from
    /// `next_offset`; a result with `next_offset == offset` means nothing more is visible yet
    /// (the high watermark, or for read_committed the last stable offset, was reached).
    ///
    /// # Errors
    ///
    /// As [`Log::fetch`] and [`consumer::consume`].
    pub fn consume(
        &self,
        offset: i64,
        max_bytes: usize,
        isolation: IsolationLevel,
    ) -> Result<Consumed> {
        let f = self.fetch(offset, max_bytes, isolation)?;
        consumer::consume(
            &f.bytes,
            offset,
            isolation,
            f.aborted_transactions.as_deref(),
        )
        .map_err(|e| self.locate_fetched(offset, e))
    }

    /// `e` as found in the bytes of a fetch from `offset` ([`consumer::consume`] names a byte
    /// of those bytes, [`crate::Location::Read`]) with that byte turned into the segment file
    /// and byte it was read from, so the damage can be found in the directory. Other errors
    /// are returned as they are.
    pub fn locate_fetched(&self, offset: i64, mut e: Error) -> Error {
        if let Error::CorruptMessage { at, .. } = &mut e {
            if let crate::Location::Read { position } = *at {
                if let Some((path, position)) = self.fetched_byte(offset, position as u64) {
                    *at = crate::Location::File { path, position };
                }
            }
        }
        e
    }

    /// The segment file and byte of byte `n` of a fetch from `offset`: fetches read the
    /// segments one after another from the entry holding `offset`.
    fn fetched_byte(&self, offset: i64, mut n: u64) -> Option<(PathBuf, u64)> {
        let first = self
            .segments
            .iter()
            .rposition(|s| s.base_offset() <= offset)?;
        let mut start = self.segments.get(first)?.find_position(offset).ok()??;
        for s in self.segments.get(first..)? {
            let here = s.size().saturating_sub(start);
            if n < here {
                return Some((s.log_path().to_path_buf(), start + n));
            }
            n -= here;
            start = 0;
        }
        None
    }

    /// Kafka's ListOffsets: the log start or end offset, the record with the largest
    /// timestamp, or the first record with a timestamp at or after a given one (using the time
    /// indexes). Unlike Kafka, a time lookup that finds nothing in the first segment whose
    /// largest timestamp qualifies goes on to the next one (this only matters for segments
    /// without timestamps, which Kafka dates by file modification time).
    ///
    /// # Errors
    ///
    /// Corruption or I/O errors; a compressed batch the codec cannot decompress;
    /// [`Error::DamagedSegment`] when the log's end is damage ([`Log::damage`]) and the answer
    /// depends on what it hides (the end, the largest timestamp, a time found nowhere before
    /// it).
    pub fn offsets(&self, spec: OffsetSpec) -> Result<ListOffsetsResult> {
        let found = self.offsets_as_read(spec)?;
        self.before_damage(spec, found)
    }

    /// `found` for `spec`, unless the log's end is damage ([`Log::damage`]) and the answer
    /// depends on what the damage hides: the end, the largest timestamp, a time not found
    /// before it.
    fn before_damage(
        &self,
        spec: OffsetSpec,
        found: ListOffsetsResult,
    ) -> Result<ListOffsetsResult> {
        match (&self.damage, spec) {
            (None, _) | (Some(_), OffsetSpec::Earliest) => Ok(found),
            (Some(_), OffsetSpec::Timestamp(_)) if found.offset >= 0 => Ok(found),
            (Some(d), _) => Err(d.error()),
        }
    }

    /// [`Log::offsets`] of the log as read, whatever damage ends it.
    fn offsets_as_read(&self, spec: OffsetSpec) -> Result<ListOffsetsResult> {
        let epoch_of = |found: Option<crate::segment::TimestampAndOffset>| match found {
            Some(t) => ListOffsetsResult {
                offset: t.offset,
                timestamp: Some(t.timestamp),
                leader_epoch: t.leader_epoch,
            },
            None => ListOffsetsResult::NONE,
        };
        match spec {
            // As Kafka: the earliest cached epoch, when it starts at or before the log start
            // offset (after a format upgrade the oldest data may predate epochs).
            OffsetSpec::Earliest => Ok(ListOffsetsResult {
                offset: self.log_start_offset,
                timestamp: None,
                leader_epoch: self
                    .epoch_cache
                    .entries()
                    .first()
                    .filter(|&&(_, start)| start <= self.log_start_offset)
                    .map(|&(epoch, _)| epoch),
            }),
            OffsetSpec::Latest => Ok(ListOffsetsResult {
                offset: self.log_end_offset(),
                timestamp: None,
                leader_epoch: self.epoch_cache.latest_epoch(),
            }),
            OffsetSpec::MaxTimestamp => {
                let mut best: Option<&Segment> = None;
                for s in &self.segments {
                    if best.is_none_or(|b| s.max_timestamp() > b.max_timestamp()) {
                        best = Some(s);
                    }
                }
                match best {
                    Some(s) if s.size() > 0 => Ok(epoch_of(s.max_timestamp_record()?)),
                    _ => Ok(ListOffsetsResult::NONE),
                }
            }
            OffsetSpec::Timestamp(target) => {
                let st = self.env.storage.as_ref();
                for s in &self.segments {
                    if s.size() == 0 || s.largest_timestamp(st)? < target {
                        continue;
                    }
                    if let Some(found) =
                        s.find_offset_by_timestamp(target, self.log_start_offset)?
                    {
                        return Ok(epoch_of(Some(found)));
                    }
                }
                Ok(ListOffsetsResult::NONE)
            }
        }
    }

    /// ListOffsets as a consumer at `isolation` asks it (Kafka's
    /// `Partition.fetchOffsetForTimestamp`): the last fetchable offset is the high watermark for
    /// read_uncommitted and the last stable offset for read_committed. `Latest` answers it, and
    /// a timestamp or max-timestamp lookup that lands at or past it finds nothing (offset -1);
    /// `Earliest` is never filtered. [`Log::offsets`] is the same without an isolation level
    /// (a replica's view: up to the log end).
    ///
    /// # Examples
    ///
    /// ```
    /// # use krecords_log::{AppendOrigin, Env, IsolationLevel, Log, LogConfig, OffsetSpec};
    /// # use krecords_codec::write::{NewRecord, V2Builder};
    /// # fn main() -> krecords_log::Result<()> {
    /// let mut log = Log::create_with("/t-0", LogConfig::default(), Env::memory())?;
    /// let mut b = V2Builder::new(0).producer(7, 0, 0).transactional(true);
    /// b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"open"))).unwrap();
    /// log.append(&b.finish().unwrap(), AppendOrigin::Client)?;
    /// // The transaction is still open: read_committed consumers cannot see offset 0 yet.
    /// assert_eq!(log.offsets_at(OffsetSpec::Latest, IsolationLevel::ReadCommitted)?.offset, 0);
    /// assert_eq!(log.offsets_at(OffsetSpec::Latest, IsolationLevel::ReadUncommitted)?.offset, 1);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Log::offsets`].
    pub fn offsets_at(
        &self,
        spec: OffsetSpec,
        isolation: IsolationLevel,
    ) -> Result<ListOffsetsResult> {
        let last_fetchable = match isolation {
            IsolationLevel::ReadUncommitted => self.high_watermark(),
            IsolationLevel::ReadCommitted => self.last_stable_offset(),
        };
        match spec {
            OffsetSpec::Latest => self.before_damage(
                spec,
                ListOffsetsResult {
                    offset: last_fetchable,
                    timestamp: None,
                    leader_epoch: self.epoch_cache.latest_epoch(),
                },
            ),
            OffsetSpec::Earliest => self.offsets(spec),
            OffsetSpec::MaxTimestamp | OffsetSpec::Timestamp(_) => {
                let found = self.offsets(spec)?;
                Ok(if found.offset >= last_fetchable {
                    ListOffsetsResult::NONE
                } else {
                    found
                })
            }
        }
    }
}
