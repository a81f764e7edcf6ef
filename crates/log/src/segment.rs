//! One segment: a `.log` file of entries, its two sparse indexes and its transaction index
//! (Kafka's `LogSegment`).
//!
//! Appends write the validated bytes at the end of the `.log` file with one logical positioned
//! write (a patched v2 header and the records borrowed from the request are written in turn),
//! then add index entries: after every `index.interval.bytes` of batches, an offset index entry
//! `(last offset of the batch, its position)` and a time index entry with the running maximum
//! timestamp (Kafka's `LogSegment.append`). Recovery rebuilds the same entries from the file.

use crate::config::LogConfig;
use crate::error::{Error, Location, Result};
use crate::files::{self, INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX};
use crate::index::{OffsetIndex, TimeIndex, TxnIndex};
use crate::reader::{segment_reader, SegmentReader, SCAN_WINDOW, SEEK_WINDOW};
use crate::storage::{Storage, StorageFile};
use crate::transaction::AbortedTxn;
use krecords_codec::layout::v2 as v2_layout;
use krecords_codec::read::v2::{header_only, HeaderPeek};
use krecords_codec::read::Batch;
use krecords_codec::read::Step;
use std::path::{Path, PathBuf};

/// What an append tells the segment about each batch it wrote.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchMeta {
    /// Position of the batch within the appended bytes.
    pub(crate) position: u64,
    /// Size including the 12-byte prefix.
    pub(crate) size: u64,
    pub(crate) last_offset: i64,
    pub(crate) max_timestamp: i64,
}

/// A timestamp and offset found by a time lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimestampAndOffset {
    pub(crate) timestamp: i64,
    pub(crate) offset: i64,
    pub(crate) leader_epoch: Option<i32>,
}

#[derive(Debug)]
pub(crate) struct Segment {
    base_offset: i64,
    log_path: PathBuf,
    log: Box<dyn StorageFile>,
    /// Bytes of complete, validated entries in the `.log` file.
    size: u64,
    offset_index: OffsetIndex,
    time_index: TimeIndex,
    /// Aborted transactions whose markers are in this segment.
    txn_index: TxnIndex,
    /// Offset after the last batch (`base_offset` when empty).
    next_offset: i64,
    /// Largest batch max timestamp so far, -1 when none.
    max_timestamp: i64,
    /// Last offset of the batch where `max_timestamp` first appeared (`base_offset` if none).
    offset_of_max_timestamp: i64,
    /// Bytes appended since the batch that got the last offset index entry.
    bytes_since_last_index_entry: u64,
    /// Max timestamp of the first append (Kafka's `rollingBasedTimestamp`).
    rolling_based_timestamp: Option<i64>,
    /// When this segment object was created (Kafka's `created`).
    created_ms: i64,
    index_interval_bytes: u64,
}

fn max_index_bytes(config: &LogConfig) -> u64 {
    u64::try_from(config.segment_index_bytes).unwrap_or(0)
}

impl Segment {
    /// Creates the three files of a new, empty segment (the caller syncs the directory).
    pub(crate) fn create(
        storage: &dyn Storage,
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        now_ms: i64,
    ) -> Result<Self> {
        Self::create_with_suffix(storage, dir, base_offset, config, now_ms, "")
    }

    /// As [`Segment::create`], every file name followed by `suffix` (the cleaner writes its
    /// segments as `.cleaned` files, Kafka's `LogFileUtils.CLEANED_FILE_SUFFIX`).
    pub(crate) fn create_with_suffix(
        storage: &dyn Storage,
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        now_ms: i64,
        suffix: &str,
    ) -> Result<Self> {
        let name = |s: &str| format!("{}{suffix}", files::file_name(base_offset, s));
        let log_path = dir.join(name(LOG_SUFFIX));
        let log = storage
            .create(&log_path)
            .map_err(|e| Error::io("create", &log_path, e))?;
        let max = max_index_bytes(config);
        let offset_index =
            OffsetIndex::create(storage, &dir.join(name(INDEX_SUFFIX)), base_offset, max)?;
        let time_index = TimeIndex::create(
            storage,
            &dir.join(name(TIME_INDEX_SUFFIX)),
            base_offset,
            max,
        )?;
        let txn_path = dir.join(name(TXN_INDEX_SUFFIX));
        // A leftover transaction index of an earlier segment at this offset must not survive.
        files::remove_if_exists(storage, &txn_path)?;
        Ok(Segment {
            base_offset,
            log_path,
            log,
            size: 0,
            offset_index,
            time_index,
            txn_index: TxnIndex::new(&txn_path, base_offset),
            next_offset: base_offset,
            max_timestamp: -1,
            offset_of_max_timestamp: base_offset,
            bytes_since_last_index_entry: 0,
            rolling_based_timestamp: None,
            created_ms: now_ms,
            index_interval_bytes: u64::try_from(config.index_interval_bytes).unwrap_or(0),
        })
    }

    /// Opens an existing segment. Returns it and whether it needs [`Segment::recover`]: a
    /// missing or insane index, or a tail that does not parse.
    pub(crate) fn open(
        storage: &dyn Storage,
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        now_ms: i64,
    ) -> Result<(Self, bool)> {
        let path = |suffix: &str| dir.join(files::file_name(base_offset, suffix));
        let log_path = path(LOG_SUFFIX);
        let log = storage
            .open(&log_path)
            .map_err(|e| Error::io("open", &log_path, e))?;
        let size = log.len().map_err(|e| Error::io("read", &log_path, e))?;
        let max = max_index_bytes(config);
        let (offset_index, no_index) =
            OffsetIndex::open_or_create(storage, &path(INDEX_SUFFIX), base_offset, max)?;
        let (time_index, no_time_index) =
            TimeIndex::open_or_create(storage, &path(TIME_INDEX_SUFFIX), base_offset, max)?;
        let mut needs_recovery = no_index || no_time_index;
        let (txn_index, txn_problem) =
            TxnIndex::open(storage, &path(TXN_INDEX_SUFFIX), base_offset)?;
        needs_recovery |= txn_problem.is_some();
        let (last_ts, last_ts_offset) = time_index.last_entry();
        let mut segment = Segment {
            base_offset,
            log_path,
            log,
            size,
            offset_index,
            time_index,
            txn_index,
            next_offset: base_offset,
            max_timestamp: last_ts,
            offset_of_max_timestamp: last_ts_offset,
            bytes_since_last_index_entry: 0,
            rolling_based_timestamp: None,
            created_ms: now_ms,
            index_interval_bytes: u64::try_from(config.index_interval_bytes).unwrap_or(0),
        };
        if needs_recovery || segment.offset_index.sanity_check(size).is_err() {
            return Ok((segment, true));
        }
        // Find the next offset and any larger timestamp after the last index entries.
        let start = segment.offset_index.last_entry().map_or(0, |(_, p)| p);
        let mut last_offset = None;
        let mut max_ts = (segment.max_timestamp, segment.offset_of_max_timestamp);
        {
            let mut r = segment_reader(segment.log.as_ref(), start, size, SCAN_WINDOW);
            loop {
                match r
                    .next_entry()
                    .map_err(|e| Error::io("read", &segment.log_path, e))?
                {
                    Step::Entry(b) => {
                        let ts = b.max_timestamp();
                        if ts > max_ts.0 {
                            max_ts = (ts, b.last_offset());
                        }
                        last_offset = Some(b.last_offset());
                    }
                    Step::End => break,
                    Step::Partial(_) | Step::Error(_) => return Ok((segment, true)),
                }
            }
        }
        segment.next_offset = last_offset.map_or(base_offset, |o| o + 1);
        (segment.max_timestamp, segment.offset_of_max_timestamp) = max_ts;
        if segment
            .time_index
            .sanity_check(Some(segment.next_offset))
            .is_err()
        {
            return Ok((segment, true));
        }
        segment.bytes_since_last_index_entry = size - start;
        segment.rolling_based_timestamp = segment.first_batch_max_timestamp()?;
        Ok((segment, false))
    }

    fn first_batch_max_timestamp(&self) -> Result<Option<i64>> {
        let mut r = segment_reader(self.log.as_ref(), 0, self.size, SEEK_WINDOW);
        match r.next_entry().map_err(|e| self.read_error(e))? {
            Step::Entry(b) => Ok(Some(b.max_timestamp())),
            _ => Ok(None),
        }
    }

    /// Max timestamp of the first batch (Kafka's `getFirstBatchTimestamp`), `None` when empty.
    pub(crate) fn first_batch_timestamp(&self) -> Result<Option<i64>> {
        match self.rolling_based_timestamp {
            Some(ts) => Ok(Some(ts)),
            None => self.first_batch_max_timestamp(),
        }
    }

    /// The `.log` file's modification time (Kafka's `LogSegment.lastModified`).
    pub(crate) fn last_modified(&self, storage: &dyn Storage) -> Result<i64> {
        storage
            .modified_ms(&self.log_path)
            .map_err(|e| Error::io("stat", &self.log_path, e))
    }

    /// Bytes the offset and time indexes hold (Kafka's `sizeInBytes` of each).
    pub(crate) fn index_bytes(&self) -> (u64, u64) {
        let (oi, ti) = self.index_entries();
        (oi * 8, ti * 12)
    }

    /// A reader over the whole `.log` file with a `window`-byte read buffer.
    pub(crate) fn reader(&self, window: usize) -> SegmentReader<'_> {
        segment_reader(self.log.as_ref(), 0, self.size, window)
    }

    /// Next batch of `r` (a reader from [`Segment::reader`]); corruption is an error.
    pub(crate) fn next_batch<'r>(&self, r: &'r mut SegmentReader<'_>) -> Result<Option<Batch<'r>>> {
        self.next(r)
    }

    pub(crate) fn base_offset(&self) -> i64 {
        self.base_offset
    }

    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    pub(crate) fn next_offset(&self) -> i64 {
        self.next_offset
    }

    pub(crate) fn max_timestamp(&self) -> i64 {
        self.max_timestamp
    }

    /// A failed read of the `.log` file, as the log reports it.
    fn read_error(&self, e: std::io::Error) -> Error {
        Error::io("read", &self.log_path, e)
    }

    pub(crate) fn log_path(&self) -> &Path {
        &self.log_path
    }

    pub(crate) fn location(&self, position: u64) -> Location {
        Location::File {
            path: self.log_path.clone(),
            position,
        }
    }

    /// Kafka's `largestTimestamp`: the max timestamp, or the file's modification time when the
    /// segment holds no timestamps.
    pub(crate) fn largest_timestamp(&self, storage: &dyn Storage) -> Result<i64> {
        if self.max_timestamp >= 0 {
            return Ok(self.max_timestamp);
        }
        storage
            .modified_ms(&self.log_path)
            .map_err(|e| Error::io("stat", &self.log_path, e))
    }

    /// Kafka's `LogSegment.hasOverflow`: whether the segment holds offsets beyond its indexes'
    /// 32-bit relative range (a legacy segment of a broker before KAFKA-6264), so that it must
    /// be split (see `recovery::split_overflowed`).
    pub(crate) fn has_overflow(&self) -> bool {
        self.next_offset > self.base_offset && !self.can_convert_offset(self.next_offset - 1)
    }

    /// The transaction index entries, to carry into the segments a split makes.
    pub(crate) fn aborted_entries(&self) -> &[AbortedTxn] {
        self.txn_index.entries()
    }

    /// Whether `offset` fits the indexes' 32-bit relative offsets.
    pub(crate) fn can_convert_offset(&self, offset: i64) -> bool {
        self.offset_index.can_append_offset(offset)
    }

    /// Kafka's `LogSegment.shouldRoll` (with `LogConfig.maxSegmentMs` for the age).
    pub(crate) fn should_roll(
        &self,
        config: &LogConfig,
        messages_size: u64,
        max_timestamp_in_messages: i64,
        max_offset_in_messages: i64,
        now_ms: i64,
    ) -> bool {
        let waited = match self.rolling_based_timestamp {
            Some(ts) if ts >= 0 => max_timestamp_in_messages.saturating_sub(ts),
            _ => now_ms.saturating_sub(self.created_ms),
        };
        let size = self.size as i64;
        size > i64::from(config.segment_bytes) - messages_size as i64
            || (size > 0 && waited > config.max_segment_ms())
            || self.offset_index.is_full()
            || self.time_index.is_full()
            || !self.can_convert_offset(max_offset_in_messages)
    }

    /// Writes `bytes` (whole validated entries, described by `batches`) at the end of the log
    /// file and indexes them. An I/O error leaves the segment's in-memory state unchanged
    /// except for indexes, and the caller poisons the log.
    ///
    /// The bytes are `head` followed by `tail` (a patched batch header and the records it
    /// borrows from the produce request), written as one logical write.
    pub(crate) fn append(&mut self, head: &[u8], tail: &[u8], batches: &[BatchMeta]) -> Result<()> {
        let len = head.len() + tail.len();
        if len == 0 {
            return Ok(());
        }
        let start = self.size;
        let r = if tail.is_empty() {
            self.log.write_at(head, start)
        } else {
            self.log.write_all_vectored_at(&[head, tail], start)
        };
        r.map_err(|e| Error::io("write", &self.log_path, e))?;
        if start == 0 {
            let largest = batches.iter().map(|b| b.max_timestamp).max().unwrap_or(-1);
            self.rolling_based_timestamp = Some(largest);
        }
        self.size = start + len as u64;
        for b in batches {
            self.index_batch(start + b.position, b.size, b.last_offset, b.max_timestamp)?;
            self.next_offset = b.last_offset + 1;
        }
        Ok(())
    }

    /// Index bookkeeping for one batch at `position` (append and recovery share it).
    fn index_batch(
        &mut self,
        position: u64,
        size: u64,
        last_offset: i64,
        max_ts: i64,
    ) -> Result<()> {
        if max_ts > self.max_timestamp {
            self.max_timestamp = max_ts;
            self.offset_of_max_timestamp = last_offset;
        }
        if self.bytes_since_last_index_entry > self.index_interval_bytes {
            if !self.offset_index.is_full() {
                self.offset_index.append(last_offset, position)?;
            }
            self.time_index.maybe_append(
                self.max_timestamp,
                self.offset_of_max_timestamp,
                false,
            )?;
            self.bytes_since_last_index_entry = 0;
        }
        self.bytes_since_last_index_entry += size;
        Ok(())
    }

    /// Kafka's `LogSegment.recover`: rebuilds both indexes from the log file, validating every
    /// batch (structure, CRC, offsets increasing and within the segment), truncates the file at
    /// the first invalid batch, and syncs. The transaction index is emptied and marked for the
    /// producer state replay to fill (Kafka fills it here from a producer state rebuilt up to
    /// the segment's base offset; the log's loader does the same replay once for every
    /// recovered segment). Returns the bytes truncated and, if any, why.
    pub(crate) fn recover(&mut self, config: &LogConfig) -> Result<(u64, Option<String>)> {
        let max = max_index_bytes(config);
        self.offset_index.reset(max)?;
        self.time_index.reset(max)?;
        self.txn_index.reset()?;
        self.max_timestamp = -1;
        self.offset_of_max_timestamp = self.base_offset;
        self.bytes_since_last_index_entry = 0;
        self.rolling_based_timestamp = None;
        let file_len = self.log.len().map_err(|e| self.read_error(e))?;
        let mut valid = 0u64;
        let mut prev_last = self.base_offset - 1;
        let mut first_ts = None;
        let mut problem = None;
        let mut metas = Vec::new();
        {
            let mut r = segment_reader(self.log.as_ref(), 0, file_len, SCAN_WINDOW);
            loop {
                match r.next_entry().map_err(|e| self.read_error(e))? {
                    Step::Entry(b) => {
                        if let Some(reason) = recovery_check(&b, self.base_offset, prev_last) {
                            problem = Some(format!("byte {}: {reason}", b.position()));
                            break;
                        }
                        let ts = b.max_timestamp();
                        first_ts.get_or_insert(ts);
                        prev_last = b.last_offset();
                        metas.push(BatchMeta {
                            position: b.position() as u64,
                            size: b.size_in_bytes() as u64,
                            last_offset: prev_last,
                            max_timestamp: ts,
                        });
                        valid = r.position();
                    }
                    Step::End => break,
                    Step::Partial(p) => {
                        problem = Some(format!(
                            "byte {}: {} bytes of a truncated entry",
                            p.position, p.bytes
                        ));
                        break;
                    }
                    Step::Error(e) => {
                        problem = Some(format!("byte {valid}: {e}"));
                        break;
                    }
                }
            }
        }
        for m in &metas {
            if !self.offset_index.can_append_offset(m.last_offset) {
                break;
            }
            self.index_batch(m.position, m.size, m.last_offset, m.max_timestamp)?;
        }
        let truncated = file_len - valid;
        if truncated > 0 {
            self.log
                .set_len(valid)
                .map_err(|e| Error::io("truncate", &self.log_path, e))?;
        }
        self.size = valid;
        self.next_offset = prev_last + 1;
        self.rolling_based_timestamp = first_ts;
        self.offset_index.trim()?;
        self.time_index
            .maybe_append(self.max_timestamp, self.offset_of_max_timestamp, true)?;
        self.time_index.trim()?;
        self.sync_all()?;
        Ok((truncated, problem))
    }

    /// Cuts the log file back to `size` bytes (a whole-batch boundary it had before), for a
    /// rollback that reloads the segment afterwards: the indexes and the in-memory state are
    /// left as they are, for [`Self::recover`] to rebuild.
    pub(crate) fn cut(&mut self, size: u64) -> Result<()> {
        self.log
            .set_len(size)
            .map_err(|e| Error::io("truncate", &self.log_path, e))?;
        self.log
            .sync()
            .map_err(|e| Error::io("sync", &self.log_path, e))
    }

    /// Preallocates the indexes again (the active segment after open or recovery).
    pub(crate) fn resize_indexes(&mut self, config: &LogConfig) -> Result<()> {
        let max = max_index_bytes(config);
        self.offset_index.resize(max)?;
        self.time_index.resize(max)
    }

    /// Kafka's `onBecomeInactiveSegment` plus the flush that follows a roll: writes the final
    /// time index entry, trims both indexes to their entries and syncs all three files.
    pub(crate) fn seal(&mut self) -> Result<()> {
        self.time_index
            .maybe_append(self.max_timestamp, self.offset_of_max_timestamp, true)?;
        self.offset_index.trim()?;
        self.time_index.trim()?;
        self.sync_all()
    }

    /// Starts writing the log file's bytes from `from` on to the device, without waiting
    /// ([`crate::storage::StorageFile::start_writeback`]).
    pub(crate) fn start_writeback(&self, from: u64) {
        self.log
            .start_writeback(from, self.size.saturating_sub(from));
    }

    /// Syncs the log file.
    pub(crate) fn flush(&self) -> Result<()> {
        self.log
            .sync()
            .map_err(|e| Error::io("sync", &self.log_path, e))
    }

    fn sync_all(&self) -> Result<()> {
        self.flush()?;
        self.offset_index.sync()?;
        self.time_index.sync()?;
        self.txn_index.sync()
    }

    /// The transaction index.
    pub(crate) fn txn_index(&self) -> &TxnIndex {
        &self.txn_index
    }

    /// Adds an aborted transaction whose marker is in this segment.
    pub(crate) fn append_aborted(&mut self, storage: &dyn Storage, txn: AbortedTxn) -> Result<()> {
        self.txn_index.append(storage, txn)
    }

    /// Marks the transaction index rebuilt by a replay and syncs it.
    pub(crate) fn txn_index_rebuilt(&mut self) -> Result<()> {
        self.txn_index.rebuilt();
        self.txn_index.sync()
    }

    /// Removes the segment's files (the caller syncs the directory).
    pub(crate) fn delete(&self, storage: &dyn Storage, dir: &Path) -> Result<()> {
        files::remove_if_exists(storage, &self.log_path)?;
        for suffix in [INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX] {
            files::remove_if_exists(
                storage,
                &dir.join(files::file_name(self.base_offset, suffix)),
            )?;
        }
        Ok(())
    }

    /// Position of the first batch whose last offset is >= `offset`, `None` if there is none.
    ///
    /// Walks the v2 batch headers only; anything else (a v0/v1 entry, a header that does not
    /// parse) sends the whole lookup through [`Self::find_position_parsed`], which parses every
    /// entry and reports corruption.
    pub(crate) fn find_position(&self, offset: i64) -> Result<Option<u64>> {
        let start = self.index_position(offset)?;
        let mut w = HeaderWalk::new(self.log.as_ref(), self.size);
        let mut pos = start;
        loop {
            match w.at(pos).map_err(|e| self.read_error(e))? {
                Head::Batch {
                    size, last_offset, ..
                } => {
                    if last_offset >= offset {
                        return Ok(Some(pos));
                    }
                    pos += size;
                }
                Head::End => return Ok(None),
                Head::Other => return self.find_position_parsed(start, offset),
            }
        }
    }

    /// Where to start looking for `offset`: the offset index's position for it when the entry
    /// there fits the index entry (Kafka indexes an append's largest offset at the position of
    /// its first entry, so the entry's offset field, a v2 batch's base offset or a v0/v1
    /// entry's offset, lies between the segment's base offset and the indexed offset), else
    /// the segment's start. A damaged index entry pointing further on would otherwise skip
    /// records silently; the scan from the start is slower and right.
    fn index_position(&self, offset: i64) -> Result<u64> {
        let (indexed, start) = self.offset_index.lookup(offset)?;
        if start == 0 {
            return Ok(0);
        }
        let mut field = [0u8; 8];
        let fits = start.checked_add(8).is_some_and(|end| end <= self.size)
            && self.log.read_exact_at(&mut field, start).is_ok()
            && (self.base_offset..=indexed).contains(&i64::from_be_bytes(field));
        Ok(if fits { start } else { 0 })
    }

    /// [`Self::find_position`] parsing every entry from `start`.
    fn find_position_parsed(&self, start: u64, offset: i64) -> Result<Option<u64>> {
        let mut r = segment_reader(self.log.as_ref(), start, self.size, SEEK_WINDOW);
        loop {
            match self.next(&mut r)? {
                Some(b) if b.last_offset() >= offset => return Ok(Some(b.position() as u64)),
                Some(_) => {}
                None => return Ok(None),
            }
        }
    }

    /// Next batch of a reader over this segment; corruption inside the validated size is an
    /// error.
    fn next<'r>(&self, r: &'r mut SegmentReader<'_>) -> Result<Option<Batch<'r>>> {
        let position = r.position();
        match r.next_entry().map_err(|e| self.read_error(e))? {
            Step::Entry(b) => Ok(Some(b)),
            Step::End => Ok(None),
            Step::Partial(p) => Err(Error::corrupt(
                self.location(position),
                format!("entry cut short: {} bytes left", p.bytes),
            )),
            Step::Error(e) => Err(Error::corrupt(self.location(position), e.to_string())),
        }
    }

    /// The first and last offsets of the entry at `position` (a v0/v1 wrapper's last offset
    /// stands in for its first), `None` at the end of the segment.
    ///
    /// # Errors
    ///
    /// The entry cannot be read.
    pub(crate) fn offsets_at(&self, position: u64) -> Result<Option<(i64, i64)>> {
        let mut r = segment_reader(self.log.as_ref(), position, self.size, SEEK_WINDOW);
        Ok(self.next(&mut r)?.map(|b| {
            (
                b.first_offset().unwrap_or_else(|| b.last_offset()),
                b.last_offset(),
            )
        }))
    }

    /// Appends whole batches from `position` to `out` while they fit `max_bytes` (the first one
    /// always, as Kafka's `minOneMessage`) and end below `max_offset` (exclusive: the last stable
    /// offset or the high watermark, always a batch boundary). Returns the last offset copied
    /// and whether a limit stopped the copy.
    ///
    /// Finds the end from the v2 batch headers alone, then reads the range straight into `out`
    /// with one read; anything but a v2 header that parses goes through
    /// [`Self::read_into_parsed`] instead.
    pub(crate) fn read_into(
        &self,
        position: u64,
        max_bytes: usize,
        max_offset: i64,
        out: &mut Vec<u8>,
        start: usize,
    ) -> Result<(Option<i64>, bool)> {
        let mut w = HeaderWalk::new(self.log.as_ref(), self.size);
        let base_len = out.len();
        // Bytes of this fetch already in `out`.
        let fetched = base_len.saturating_sub(start);
        let mut len = 0usize;
        let mut pos = position;
        let mut last = None;
        let full = loop {
            match w.at(pos).map_err(|e| self.read_error(e))? {
                Head::Batch {
                    size, last_offset, ..
                } => {
                    if last_offset >= max_offset {
                        break true;
                    }
                    let have = fetched + len;
                    let size_usize = usize::try_from(size).unwrap_or(usize::MAX);
                    if have != 0 && have.saturating_add(size_usize) > max_bytes {
                        break true;
                    }
                    len += size_usize;
                    last = Some(last_offset);
                    if fetched + len >= max_bytes {
                        break true;
                    }
                    pos += size;
                }
                Head::End => break false,
                Head::Other => {
                    return self.read_into_parsed(position, max_bytes, max_offset, out, start)
                }
            }
        };
        if len > 0 {
            out.resize(base_len + len, 0);
            let r = self.log.read_exact_at(&mut out[base_len..], position);
            if let Err(e) = r {
                out.truncate(base_len);
                return Err(Error::io("read", &self.log_path, e));
            }
        }
        Ok((last, full))
    }

    /// [`Self::read_into`] parsing every entry.
    fn read_into_parsed(
        &self,
        position: u64,
        max_bytes: usize,
        max_offset: i64,
        out: &mut Vec<u8>,
        start: usize,
    ) -> Result<(Option<i64>, bool)> {
        let mut r = segment_reader(self.log.as_ref(), position, self.size, SCAN_WINDOW);
        let mut last = None;
        loop {
            let Some(b) = self.next(&mut r)? else {
                return Ok((last, false));
            };
            if b.last_offset() >= max_offset {
                return Ok((last, true));
            }
            let bytes = b.as_bytes();
            let fetched = out.len().saturating_sub(start);
            if fetched != 0 && fetched + bytes.len() > max_bytes {
                return Ok((last, true));
            }
            out.extend_from_slice(bytes);
            last = Some(b.last_offset());
            if out.len().saturating_sub(start) >= max_bytes {
                return Ok((last, true));
            }
        }
    }

    /// Kafka's `findOffsetByTimestamp`: the first record at or after `starting_offset` with a
    /// timestamp >= `target`, using the time index to skip ahead. Decompresses the batch it
    /// finds.
    pub(crate) fn find_offset_by_timestamp(
        &self,
        target: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let (_, indexed_offset) = self.time_index.lookup(target)?;
        let start = self.index_position(indexed_offset.max(starting_offset))?;
        let mut r = segment_reader(self.log.as_ref(), start, self.size, SCAN_WINDOW);
        let mut scratch = Vec::new();
        while let Some(b) = self.next(&mut r)? {
            if b.max_timestamp() < target {
                continue;
            }
            let epoch = b.partition_leader_epoch();
            let records = b
                .records(&mut scratch, krecords_codec::DEFAULT_DECOMPRESS_LIMIT)
                .map_err(|e| self.codec_error(&b, e))?;
            for record in records {
                let record = record.map_err(|e| self.codec_error(&b, e))?;
                let ts = record.timestamp().unwrap_or(-1);
                if ts >= target && record.offset() >= starting_offset {
                    return Ok(Some(TimestampAndOffset {
                        timestamp: ts,
                        offset: record.offset(),
                        leader_epoch: epoch,
                    }));
                }
            }
        }
        Ok(None)
    }

    /// The record with this segment's max timestamp (ListOffsets `MAX_TIMESTAMP`): the first
    /// batch whose max timestamp is the segment's, and in it the first record with that
    /// timestamp (`None` for magic 0, as Kafka's `offsetOfMaxTimestamp`).
    pub(crate) fn max_timestamp_record(&self) -> Result<Option<TimestampAndOffset>> {
        let start = self.index_position(self.offset_of_max_timestamp)?;
        let mut r = segment_reader(self.log.as_ref(), start, self.size, SCAN_WINDOW);
        let mut scratch = Vec::new();
        while let Some(b) = self.next(&mut r)? {
            if b.max_timestamp() != self.max_timestamp {
                continue;
            }
            if b.magic() == 0 {
                return Ok(None);
            }
            let epoch = b.partition_leader_epoch();
            let records = b
                .records(&mut scratch, krecords_codec::DEFAULT_DECOMPRESS_LIMIT)
                .map_err(|e| self.codec_error(&b, e))?;
            for record in records {
                let record = record.map_err(|e| self.codec_error(&b, e))?;
                if record.timestamp() == Some(self.max_timestamp) {
                    return Ok(Some(TimestampAndOffset {
                        timestamp: self.max_timestamp,
                        offset: record.offset(),
                        leader_epoch: epoch,
                    }));
                }
            }
            return Ok(None);
        }
        Ok(None)
    }

    fn codec_error(&self, b: &Batch<'_>, e: krecords_codec::Error) -> Error {
        let at = self.location(b.position() as u64);
        if e.is_corruption() {
            Error::corrupt_codec(at, e)
        } else {
            Error::Codec { at, source: e }
        }
    }

    /// Visits every batch of the segment in order.
    pub(crate) fn for_each_batch(&self, mut f: impl FnMut(&Batch<'_>) -> Result<()>) -> Result<()> {
        let mut r = segment_reader(self.log.as_ref(), 0, self.size, SCAN_WINDOW);
        while let Some(b) = self.next(&mut r)? {
            f(&b)?;
        }
        Ok(())
    }

    /// Visits every batch of the segment in order, as [`Self::for_each_batch`], but gives a
    /// non-control v2 batch as its header alone: a batch with the same header fields and
    /// position and an empty records section. For callers that read header fields only of such
    /// batches (the producer state replay); its records are never read.
    pub(crate) fn for_each_batch_header(
        &self,
        mut f: impl FnMut(&Batch<'_>) -> Result<()>,
    ) -> Result<()> {
        let io = |e| Error::io("read", &self.log_path, e);
        let mut w = HeaderWalk::new(self.log.as_ref(), self.size);
        let mut pos = 0u64;
        loop {
            let (size, control) = match w.at(pos).map_err(io)? {
                Head::End => return Ok(()),
                Head::Batch { size, control, .. } => (size, control),
                Head::Other => break,
            };
            if control {
                // Control batches are read whole: the replay reads their marker record.
                let mut r = segment_reader(self.log.as_ref(), pos, self.size, SEEK_WINDOW);
                match self.next(&mut r)? {
                    Some(b) => f(&b)?,
                    None => return Ok(()),
                }
            } else {
                let head = w.header(pos, v2_layout::RECORDS_OFFSET).map_err(io)?;
                let view = header_only(head)
                    .ok_or_else(|| Error::corrupt(self.location(pos), "short v2 header"))?;
                let b = krecords_codec::read::V2Batch::new(&view, pos as usize)
                    .map_err(|e| Error::corrupt_codec(self.location(pos), e))?;
                f(&Batch::V2(b))?;
            }
            pos += size;
        }
        // Anything else: parse every entry from here, as `for_each_batch` does.
        let mut r = segment_reader(self.log.as_ref(), pos, self.size, SCAN_WINDOW);
        while let Some(b) = self.next(&mut r)? {
            f(&b)?;
        }
        Ok(())
    }

    /// Checks both indexes entry by entry against the log by `krec verify`'s rules
    /// ([`crate::check`]): every offset index entry points at the start of the batch ending at
    /// its offset, positions and offsets increase, and every time index entry holds the largest
    /// timestamp of the batches up to its offset; and the segment's own idea of its largest
    /// timestamp and next offset.
    pub(crate) fn verify_indexes(&self) -> Result<()> {
        // (position, first offset, last offset, max timestamp) of every batch.
        let mut batches = Vec::new();
        self.for_each_batch(|b| {
            let last = b.last_offset();
            let first = b.first_offset().unwrap_or(last);
            batches.push((b.position() as u64, first, last, b.max_timestamp()));
            Ok(())
        })?;
        let oi = &self.offset_index;
        let offsets = (0..oi.entries())
            .map(|n| oi.entry(n))
            .collect::<Result<Vec<_>>>()?;
        let ti = &self.time_index;
        let times = (0..ti.entries())
            .map(|n| ti.entry(n))
            .collect::<Result<Vec<_>>>()?;
        let log_name = self.log_path.display().to_string();
        if let Some((kind, message)) = crate::index::rules::first_index_problem(
            &log_name,
            (oi.path(), &offsets),
            (ti.path(), &times),
            &batches,
            self.size,
        ) {
            let index = if kind == crate::index::rules::IndexKind::Offset {
                oi.corrupt(message)
            } else {
                ti.corrupt(message)
            };
            return Err(index);
        }
        let seen_max = batches.iter().map(|b| b.3).max().unwrap_or(-1);
        if seen_max != self.max_timestamp {
            return Err(ti.corrupt(format!(
                "segment max timestamp {} but the batches hold {seen_max}",
                self.max_timestamp
            )));
        }
        let next = batches.last().map_or(self.base_offset, |b| b.2 + 1);
        if next != self.next_offset {
            return Err(Error::corrupt(
                self.location(self.size),
                format!(
                    "segment next offset {} but the batches end at {next}",
                    self.next_offset
                ),
            ));
        }
        Ok(())
    }

    /// Paths of the two index files.
    pub(crate) fn index_paths(&self) -> (&Path, &Path) {
        (self.offset_index.path(), self.time_index.path())
    }

    /// Entries in the (offset, time) indexes.
    pub(crate) fn index_entries(&self) -> (u64, u64) {
        (self.offset_index.entries(), self.time_index.entries())
    }
}

/// What [`HeaderWalk::at`] found.
enum Head {
    /// A v2 batch whose header parses: its size including the 12-byte prefix, its last offset,
    /// whether it is a control batch.
    Batch {
        size: u64,
        last_offset: i64,
        control: bool,
    },
    /// The end of the range.
    End,
    /// Anything else: a v0/v1 entry, a truncated or unparsable entry.
    Other,
}

/// Reads the headers of the v2 batches of a range through a small window, without their
/// records: the read path's way to find batch boundaries.
///
/// The window holds the headers of many small batches in one read; when the batches are
/// large (steps of more than [`HEADER_ONLY_STEP`] between lookups) it would copy most of the
/// file to find a few headers, so each miss then reads the header alone.
struct HeaderWalk<'f> {
    file: &'f dyn StorageFile,
    end: u64,
    buf: Vec<u8>,
    /// File position of `buf[0]`.
    buf_start: u64,
    /// Position of the previous lookup.
    last: u64,
}

/// A step between two header lookups above which a miss reads the header alone rather than
/// [`SEEK_WINDOW`] bytes: one more small read then costs less than copying the window.
const HEADER_ONLY_STEP: u64 = (SEEK_WINDOW / 4) as u64;

impl<'f> HeaderWalk<'f> {
    fn new(file: &'f dyn StorageFile, end: u64) -> Self {
        HeaderWalk {
            file,
            end,
            buf: Vec::new(),
            buf_start: 0,
            last: 0,
        }
    }

    /// `n` bytes at `pos` (at most [`SEEK_WINDOW`], all before the end), through the window.
    fn header(&mut self, pos: u64, n: usize) -> std::io::Result<&[u8]> {
        let buf_end = self.buf_start + self.buf.len() as u64;
        let step = pos.abs_diff(self.last);
        self.last = pos;
        if pos < self.buf_start || pos + n as u64 > buf_end {
            let available = self.end.saturating_sub(pos);
            let window = if step > HEADER_ONLY_STEP {
                v2_layout::RECORDS_OFFSET
            } else {
                SEEK_WINDOW
            };
            let len = usize::try_from(available)
                .unwrap_or(usize::MAX)
                .min(window)
                .max(n);
            self.buf.resize(len, 0);
            self.file.read_exact_at(&mut self.buf, pos)?;
            self.buf_start = pos;
        }
        let off = (pos - self.buf_start) as usize;
        Ok(&self.buf[off..off + n])
    }

    /// The entry at `pos`, as the codec's `Entries` would accept it for a v2 batch (size at
    /// least the v2 header, magic 2, the whole entry before the end).
    fn at(&mut self, pos: u64) -> std::io::Result<Head> {
        if pos >= self.end {
            return Ok(Head::End);
        }
        let available = self.end - pos;
        if available < v2_layout::RECORDS_OFFSET as u64 {
            return Ok(Head::Other);
        }
        let h = self.header(pos, v2_layout::PEEK_LEN)?;
        let Some(peek) = HeaderPeek::parse(h) else {
            return Ok(Head::Other);
        };
        match peek.v2_entry_size() {
            Some(total) if total <= available => Ok(Head::Batch {
                size: total,
                last_offset: peek.last_offset(),
                control: peek.is_control(),
            }),
            _ => Ok(Head::Other),
        }
    }
}

/// Why recovery stops at `b`, if it must: a bad CRC, or offsets that go backwards or below the
/// segment's base offset.
pub(crate) fn recovery_check(b: &Batch<'_>, base_offset: i64, prev_last: i64) -> Option<String> {
    if !b.is_crc_valid() {
        return Some(format!(
            "crc mismatch (stored {}, computed {})",
            b.crc(),
            b.compute_crc()
        ));
    }
    offsets_check(b, base_offset, prev_last)
}

/// The first offset of `b` as Kafka's recovery takes it, for the rule that an entry is at or
/// above its segment's base offset: a compressed v0/v1 wrapper's header has no other offset
/// than its last (its first needs decompression), so its last stands in. Kafka rolls a
/// segment at that offset too (`LogAppendInfo.firstOrLastOffsetOfFirstBatch`, the last offset
/// of a v0/v1 append's first wrapper): a segment written by a broker that took v0/v1 appends,
/// whose first entry is a wrapper of inner offsets `0..=9`, may be named after offset 9.
pub(crate) fn recovery_first_offset(b: &Batch<'_>) -> i64 {
    b.first_offset().unwrap_or_else(|| b.last_offset())
}

/// Recovery's rule for an entry whose last offset is `i64::MAX`: the log's next offset (its end,
/// the high watermark) would not fit in 64 bits, so no log may hold it. The reason, when it
/// applies; recovery, salvage and verify all take it from here.
pub(crate) fn leaves_no_next_offset(last: i64) -> Option<String> {
    (last == i64::MAX).then(|| {
        format!("last offset {last}: no offset can follow it, so the log would have no end")
    })
}

/// The offsets part of [`recovery_check`]: within the segment, increasing, and leaving room
/// for a next offset.
pub(crate) fn offsets_check(b: &Batch<'_>, base_offset: i64, prev_last: i64) -> Option<String> {
    let last = b.last_offset();
    let first = recovery_first_offset(b);
    if first < base_offset || last < first {
        return Some(format!(
            "offsets {first}..={last} outside the segment based at {base_offset}"
        ));
    }
    if last <= prev_last {
        return Some(format!("last offset {last} does not follow {prev_last}"));
    }
    if let Some(why) = leaves_no_next_offset(last) {
        return Some(why);
    }
    // Offsets past the 32-bit relative range are not a reason to stop: the batches are valid
    // and the loader splits the segment (see `Segment::has_overflow`).
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemStorage;
    use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};

    /// A batch whose last offset is `i64::MAX` leaves the log no next offset: recovery stops
    /// before it (the next offset, `last + 1`, overflowed: a panic in a debug build, a high
    /// watermark of `i64::MIN` and nothing read in a release build; a newcomer's trial).
    #[test]
    fn a_last_offset_of_i64_max_is_where_recovery_stops() {
        let base = i64::MAX - 2;
        let mut b = V2Builder::new(base);
        for _ in 0..3 {
            b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"v")))
                .unwrap();
        }
        let bytes = b.finish().unwrap();
        let batch = krecords_codec::read::Entries::new(&bytes)
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(batch.last_offset(), i64::MAX);
        let why = offsets_check(&batch, base, base - 1).unwrap();
        assert!(why.contains("no offset can follow it"), "{why}");
        let why = recovery_check(&batch, base, base - 1).unwrap();
        assert!(why.contains("no offset can follow it"), "{why}");
    }

    /// A segment of v2 batches of assorted sizes (some larger than the header window), then,
    /// with `legacy`, a v0 message.
    fn segment(storage: &MemStorage, legacy: bool) -> Segment {
        let dir = Path::new("/s-0");
        storage.create_dir_all(dir).unwrap();
        let config = LogConfig::default();
        let mut seg = Segment::create(storage, dir, 0, &config, 0).unwrap();
        let mut next = 0i64;
        let value = vec![7u8; 5000];
        for (i, n) in [1usize, 3, 9, 1, 2, 7, 1, 4].into_iter().enumerate() {
            let mut b = V2Builder::new(next).producer(-1, -1, -1);
            for r in 0..n {
                let len = (i * 97 + r * 31) % value.len();
                b.append(&NewRecord::new(1000 + r as i64, None, Some(&value[..len])))
                    .unwrap();
            }
            let bytes = b.finish().unwrap();
            append(&mut seg, &bytes, &mut next);
        }
        if legacy {
            let mut b = LegacyBuilder::new(0, next).unwrap();
            b.append(&NewRecord::new(-1, None, Some(b"old"))).unwrap();
            let mut bytes = Vec::new();
            b.finish_into(&mut bytes).unwrap();
            append(&mut seg, &bytes, &mut next);
        }
        seg
    }

    fn append(seg: &mut Segment, bytes: &[u8], next: &mut i64) {
        let b = krecords_codec::read::Entries::new(bytes)
            .next()
            .unwrap()
            .unwrap();
        let meta = BatchMeta {
            position: 0,
            size: bytes.len() as u64,
            last_offset: b.last_offset(),
            max_timestamp: b.max_timestamp(),
        };
        *next = b.last_offset() + 1;
        let (head, tail) = bytes.split_at(bytes.len() / 3);
        seg.append(head, tail, &[meta]).unwrap();
    }

    /// Checks that the header walks (`find_position`, `read_into`, `for_each_batch_header`)
    /// agree with parsing every entry of `seg`, everywhere; returns the number of batches.
    fn walks_agree(seg: &Segment) -> usize {
        let end = seg.next_offset();
        for offset in 0..=end {
            let found = seg.find_position(offset).unwrap();
            assert_eq!(found, seg.find_position_parsed(0, offset).unwrap());
            let Some(position) = found else { continue };
            for max_bytes in [0, 1, 100, 5000, 20_000, 60_000, 1 << 20] {
                for max_offset in [offset, offset + 3, end - 1, end] {
                    for prefix in [vec![1u8; 3], Vec::new()] {
                        let (mut a, mut b) = (prefix.clone(), prefix);
                        let ra = seg.read_into(position, max_bytes, max_offset, &mut a, 0);
                        let rb = seg.read_into_parsed(position, max_bytes, max_offset, &mut b, 0);
                        assert_eq!(ra.unwrap(), rb.unwrap());
                        assert_eq!(a, b);
                    }
                }
            }
        }
        let mut whole = Vec::new();
        seg.for_each_batch(|b| {
            whole.push((b.position(), b.last_offset(), b.max_timestamp()));
            Ok(())
        })
        .unwrap();
        let mut headers = Vec::new();
        seg.for_each_batch_header(|b| {
            headers.push((b.position(), b.last_offset(), b.max_timestamp()));
            Ok(())
        })
        .unwrap();
        assert_eq!(whole, headers);
        whole.len()
    }

    #[test]
    fn header_walks_agree_with_parsing_every_entry() {
        for legacy in [false, true] {
            let storage = MemStorage::new();
            let seg = segment(&storage, legacy);
            assert_eq!(walks_agree(&seg), if legacy { 9 } else { 8 });
        }
    }

    /// Batches far apart and close together in turn: the walk reads the header alone after a
    /// long step and a whole window after a short one, and finds the same batches either way.
    #[test]
    fn header_walks_agree_across_large_and_small_batches() {
        let storage = MemStorage::new();
        let dir = Path::new("/s-1");
        storage.create_dir_all(dir).unwrap();
        let mut seg = Segment::create(&storage, dir, 0, &LogConfig::default(), 0).unwrap();
        let mut next = 0i64;
        let sizes = [
            10usize, 10, 20_000, 10, 10, 9_000, 4_097, 4_095, 30, 70_000, 5, 5, 5, 17_000, 3_000,
            16_384, 1, 40_000,
        ];
        for (i, &len) in sizes.iter().enumerate() {
            let value = vec![i as u8; len];
            let mut b = V2Builder::new(next).producer(-1, -1, -1);
            b.append(&NewRecord::new(i as i64, None, Some(&value)))
                .unwrap();
            append(&mut seg, &b.finish().unwrap(), &mut next);
        }
        assert_eq!(walks_agree(&seg), sizes.len());
    }
}
