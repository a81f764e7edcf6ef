//! Reading one partition: its entries between two offsets at an isolation level, file by file
//! (a live partition or standard input is one "file").
//!
//! Batch level: entries that end before the start are skipped, the stream ends at the first
//! entry that starts at or after the end, and at read_committed the batches of aborted
//! transactions are left out ([`krecords_codec::txn::ReadCommitted`], fed with the
//! transaction indexes of a directory, the markers of a file, or each Fetch response's list).
//! The entry holding the start is read whole; [`Reader::bounds`] tells a command that prints
//! records which of its records are inside. When a read stops before the high watermark,
//! [`Reader::stop`] says where and why.
//!
//! Entries come as they are stored, CRCs unchecked (see [`Reader`]).

use crate::error::Error;
use crate::filter::{Filter, Verdict};
use crate::live::{ChunkRx, Io, LivePartition, Msg};
use crate::local::FileStreamer;
use crate::position::{Resolved, Watermarks};
use crate::IsolationLevel;
use bytes::Bytes;
use krecords_codec::read::{Batch, Entries, LegacyBatch, Step, V2Batch};
use krecords_codec::txn::ReadCommitted;
use krecords_log::check::EntrySource;
use krecords_log::transaction::AbortedTransaction;
use krecords_log::Damage;
use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// What a [`Reader`] reports as it reads, for a progress line.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// A file (or a live partition, or standard input) starts: its name, and its size when
    /// known.
    Start {
        /// The name.
        name: &'a str,
        /// Its bytes, when known.
        bytes: Option<u64>,
        /// Whether it is a live partition.
        live: bool,
    },
    /// Bytes of the current file read.
    Bytes(u64),
    /// A live partition's fetch: the next offset, the end offset, bytes fetched so far.
    Live {
        /// The offset after the last entry fetched.
        next_offset: i64,
        /// The end of the read.
        end: i64,
        /// Bytes fetched so far.
        fetched: u64,
    },
    /// The current file is done.
    Done,
}

/// A callback for [`Progress`].
pub type ProgressFn = Box<dyn FnMut(Progress<'_>)>;

/// One file of a [`Reader`], from [`Reader::next_file`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// Its name: the path, `-`, or `kafka://…/TOPIC/PARTITION`.
    pub name: String,
    /// The path, for a file.
    pub path: Option<PathBuf>,
}

/// Why a read stopped before the high watermark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// `--end`.
    End,
    /// `--count` records were read (data records: transaction markers are not counted).
    Count(u64),
    /// The last stable offset (read_committed).
    LastStable,
}

/// Where and why a read stopped before the high watermark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    /// The offset it stopped at (the next one it would have read).
    pub at: i64,
    /// Why.
    pub cause: StopCause,
    /// The partition's high watermark, when known.
    pub high_watermark: Option<i64>,
    /// The partition's open transaction that holds its last stable offset (producer id, first
    /// offset), whatever the cause of this stop: the read may have stopped at `--end` or the
    /// count before reaching it. The message names it for a stop at the last stable offset.
    pub open_txn: Option<(i64, i64)>,
}

impl Stop {
    /// The stop of the read of `source` as `krec verify --format json` prints it:
    /// `{"stopped":{"source","at","message"}}`, the message its [`Display`](fmt::Display) form.
    pub fn to_json(&self, source: &str) -> serde_json::Value {
        serde_json::json!({"stopped": {
            "source": source, "at": self.at, "message": self.to_string(),
        }})
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cause {
            StopCause::End => write!(f, "stopped at --end offset {}", self.at)?,
            StopCause::Count(n) => write!(
                f,
                "stopped after --count {n} record{} at offset {}",
                if n == 1 { "" } else { "s" },
                self.at
            )?,
            StopCause::LastStable => write!(f, "stopped at last stable offset {}", self.at)?,
        }
        if let Some(hw) = self.high_watermark {
            write!(f, "; high watermark {hw}")?;
        }
        if self.cause == StopCause::LastStable {
            match self.open_txn {
                Some((p, first)) => write!(
                    f,
                    ": an open transaction from producer {p} since offset {first}"
                )?,
                None => f.write_str(": an open transaction")?,
            }
        }
        Ok(())
    }
}

/// The offsets of the records a command should show from the current entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// First offset (inclusive), when bounded.
    pub start: Option<i64>,
    /// Offset to stop at (exclusive), when bounded.
    pub end: Option<i64>,
}

impl Bounds {
    /// Whether `offset` is inside.
    pub fn contains(&self, offset: i64) -> bool {
        self.start.is_none_or(|s| offset >= s) && self.end.is_none_or(|e| offset < e)
    }
}

/// The batch-level trimming of a read.
struct Trim {
    range: Resolved,
    filter: Option<ReadCommitted>,
    /// Records still to read with `--count`.
    left: Option<u64>,
    /// The last offset of the entries read so far.
    prev_last: Option<i64>,
    scratch: Vec<u8>,
    limit: usize,
    /// The records `--count` counts (see [`crate::ReadOptions::counted`]).
    counted: Option<Filter>,
}

impl Trim {
    fn active(&self) -> bool {
        self.range.start != i64::MIN || self.filter.is_some()
    }

    /// Whether to leave `b` out: it ends before the start, or its transaction was aborted.
    fn skip(&mut self, b: &Batch<'_>) -> bool {
        if b.last_offset() < self.range.start {
            return true;
        }
        let Some(f) = self.filter.as_mut() else {
            return false;
        };
        let aborted = f.is_aborted(b, &mut self.scratch).unwrap_or(false);
        if aborted {
            self.prev_last = Some(self.prev_last.unwrap_or(i64::MIN).max(b.last_offset()));
        }
        aborted
    }

    /// Whether `b` starts at or after the end (or `--count` records were read).
    fn past_end(&self, b: &Batch<'_>) -> bool {
        if self.left == Some(0) {
            return true;
        }
        let Some(end) = self.range.end else {
            return false;
        };
        let first = b
            .first_offset()
            .or_else(|| self.prev_last.map(|p| p.saturating_add(1)));
        first.is_some_and(|f| f >= end)
    }

    /// Takes `b` into the count.
    fn deliver(&mut self, b: &Batch<'_>) {
        self.prev_last = Some(self.prev_last.unwrap_or(i64::MIN).max(b.last_offset()));
        let Some(left) = self.left else { return };
        // Control records (transaction markers) are not records a consumer sees: not counted,
        // unless the command shows control batches only.
        let control_only = self.counted.as_ref().is_some_and(|f| f.control_only);
        if matches!(b, Batch::V2(v) if v.is_control()) && !control_only {
            return;
        }
        if self
            .counted
            .as_ref()
            .is_some_and(|f| f.entry(b) == Verdict::Skip)
        {
            return;
        }
        let Ok(records) = b.records(&mut self.scratch, self.limit) else {
            return;
        };
        let mut n = 0;
        for r in records.flatten() {
            if !self.range.contains(r.offset()) {
                continue;
            }
            if self.counted.as_ref().is_some_and(|f| !f.record(&r)) {
                continue;
            }
            n += 1;
            if n == left {
                self.range.end = Some(r.offset().saturating_add(1));
                break;
            }
        }
        self.left = Some(left - n);
    }

    /// Whether the entries read so far reach the end of the range.
    fn at_end(&self) -> bool {
        self.left == Some(0) || self.range.end.is_some_and(|end| self.next_offset() >= end)
    }

    /// The offset after the entries read so far (the start before the first).
    fn next_offset(&self) -> i64 {
        self.prev_last
            .map_or(self.range.start, |p| p.saturating_add(1))
    }

    fn bounds(&self) -> Bounds {
        Bounds {
            start: self.range.start(),
            end: self.range.end,
        }
    }
}

/// A live partition's fetched chunks, framed in place.
struct LiveCursor {
    rt: Arc<Io>,
    rx: ChunkRx,
    part: LivePartition,
    committed: bool,
    chunk: Bytes,
    /// Where each entry of `chunk` ends, as the client found when it framed the response
    /// (empty for a corrupt response's bytes, framed here).
    ends: Vec<usize>,
    /// Index in `ends` of the next entry.
    idx: usize,
    /// Position of the next entry in `chunk`.
    pos: usize,
    /// Bytes of the chunks before this one.
    base: usize,
    /// No more chunks.
    eof: bool,
    /// An error or a truncated tail ended the stream.
    done: bool,
    fetched: u64,
    /// The offset after the chunks received so far (`None` before the first).
    next_offset: Option<i64>,
}

impl LiveCursor {
    /// Receives the next chunk (a corrupt response's bytes are the last one).
    fn recv(&mut self, trim: &mut Trim, progress: &mut Option<ProgressFn>) -> Result<(), Error> {
        let msg = self.rt.wait(self.rx.recv());
        let (records, ends, last) = match msg {
            Some(Ok(Msg::Chunk(c, end))) => {
                self.fetched += c.records.len() as u64;
                self.next_offset = Some(c.next_offset);
                if let Some(p) = progress.as_mut() {
                    p(Progress::Live {
                        next_offset: c.next_offset,
                        end: end.unwrap_or(c.high_watermark),
                        fetched: self.fetched,
                    });
                }
                if self.committed {
                    let aborted: Vec<AbortedTransaction> = c
                        .aborted_transactions
                        .iter()
                        .map(|t| AbortedTransaction {
                            producer_id: t.producer_id,
                            first_offset: t.first_offset,
                        })
                        .collect();
                    trim.filter = Some(ReadCommitted::new(&aborted));
                }
                (c.records, c.entry_ends, false)
            }
            Some(Ok(Msg::Start(..))) => return Ok(()),
            None => (Bytes::new(), Vec::new(), true),
            Some(Err(Error::Client { source, name, .. })) => match *source {
                krecords_client::Error::Corrupt { records, .. } => (*records, Vec::new(), true),
                // Every entry of the chunks before was read: the read stops at the next.
                other => {
                    return Err(Error::Client {
                        name,
                        source: Box::new(other),
                        next_offset: Some(self.next_offset.unwrap_or(trim.range.start)),
                    })
                }
            },
            Some(Err(e)) => return Err(e),
        };
        self.base += self.chunk.len();
        self.chunk = records;
        self.ends = ends;
        self.idx = 0;
        self.pos = 0;
        self.eof = last;
        if last {
            if let Some(p) = progress.as_mut() {
                p(Progress::Done);
            }
        }
        Ok(())
    }

    fn next<'a>(
        &'a mut self,
        trim: &mut Trim,
        progress: &mut Option<ProgressFn>,
        finished: &mut bool,
    ) -> io::Result<Step<'a>> {
        if self.done {
            return Ok(Step::End);
        }
        loop {
            while self.pos >= self.chunk.len() && !self.eof {
                self.recv(trim, progress).map_err(io::Error::other)?;
            }
            if self.pos >= self.chunk.len() || !trim.active() {
                break;
            }
            let skip = match self.ends.get(self.idx) {
                Some(&end) => view(&self.chunk, self.pos, end, self.base).ok(),
                None => {
                    let rest = self.chunk.get(self.pos..).unwrap_or(&[]);
                    Entries::with_base(rest, self.base + self.pos)
                        .next_entry()
                        .ok()
                        .flatten()
                }
            }
            .filter(|b| trim.skip(b))
            .map(|b| b.size_in_bytes());
            match skip {
                Some(n) => {
                    self.pos += n;
                    self.idx += 1;
                }
                None => break,
            }
        }
        let at = self.base + self.pos;
        let next = match self.ends.get(self.idx) {
            // A whole entry at the boundaries the client found: viewed, not framed again.
            Some(&end) => view(&self.chunk, self.pos, end, self.base).map(Some),
            // A corrupt response's bytes (or the end): framed here, for its error or tail.
            None => {
                let rest = self.chunk.get(self.pos..).unwrap_or(&[]);
                let mut entries = Entries::with_base(rest, at);
                match entries.next_entry() {
                    Ok(None) => {
                        self.done = true;
                        return Ok(entries.partial().map_or(Step::End, Step::Partial));
                    }
                    other => other,
                }
            }
        };
        match next {
            Ok(Some(b)) => {
                if trim.past_end(&b) {
                    *finished = true;
                    return Ok(Step::End);
                }
                trim.deliver(&b);
                self.pos += b.size_in_bytes();
                self.idx += 1;
                Ok(Step::Entry(b))
            }
            Ok(None) => {
                self.done = true;
                Ok(Step::End)
            }
            Err(e) => {
                self.done = true;
                Ok(Step::Error(e))
            }
        }
    }
}

/// The entry of `chunk` from `pos` to `end` (boundaries the client's framing found), as a
/// batch view; `base` is the chunk's position in the partition's stream.
fn view(chunk: &[u8], pos: usize, end: usize, base: usize) -> krecords_codec::Result<Batch<'_>> {
    let entry = chunk.get(pos..end).unwrap_or(&[]);
    let at = base.saturating_add(pos);
    if entry.get(krecords_codec::layout::MAGIC_OFFSET) == Some(&2) {
        V2Batch::new(entry, at).map(Batch::V2)
    } else {
        LegacyBatch::new(entry, at).map(Batch::Legacy)
    }
}

/// Where a [`Reader`] reads from.
enum Cur {
    None,
    File(Box<FileStreamer>),
    Live(Box<LiveCursor>),
}

/// What a [`Reader`] has still to open.
pub(crate) enum Pending {
    Files(VecDeque<PathBuf>),
    Stdin,
    Live(Box<(Arc<Io>, ChunkRx, LivePartition)>),
    /// A remote tier partition's segments, each opened when reached.
    #[cfg(feature = "remote")]
    Remote(VecDeque<crate::remote::RemoteFile>),
}

/// A partition read between two positions at an isolation level: its files one after
/// another ([`Reader::next_file`]), the entries of each ([`Reader::next_entry`]).
///
/// Entries come as they are stored: the reader checks their framing, not their CRCs, so that
/// a command can show a damaged entry for what it is. Decode records with
/// [`Batch::checked_records`](krecords_codec::read::Batch::checked_records), which checks the
/// CRC first, as [`crate::records`] and the Arrow layer do.
pub struct Reader {
    name: String,
    pending: Pending,
    max_bytes: Option<u64>,
    cur: Cur,
    /// The local file `cur` reads.
    cur_path: Option<PathBuf>,
    /// An entry whose offsets reach the next segment file's base offset is an error however
    /// the range is given (see [`crate::ReadOptions::as_log`]).
    check_offsets: bool,
    trim: Trim,
    watermarks: Option<Watermarks>,
    open_txn: Option<(i64, i64)>,
    isolation: IsolationLevel,
    progress: Option<ProgressFn>,
    finished: bool,
    /// The read ended cleanly (the end of the input or of the range), not at an error.
    clean: bool,
    /// The live partition read, to ask who holds its last stable offset back.
    live: Option<(Arc<Io>, LivePartition)>,
    /// Damage that ends the directory's log as read (see [`Reader::damage_reached`]).
    damage: Option<Damage>,
    /// See [`crate::ReadOptions::as_log`].
    as_log: bool,
    /// See [`Reader::notes`].
    notes: Vec<String>,
}

impl fmt::Debug for Reader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("name", &self.name)
            .field("range", &self.trim.range)
            .field("isolation", &self.isolation)
            .finish_non_exhaustive()
    }
}

/// How a [`Reader`] is set up (see [`crate::Sources::read`]).
pub(crate) struct Setup {
    pub name: String,
    pub pending: Pending,
    pub range: Resolved,
    pub isolation: IsolationLevel,
    pub aborted: Option<Vec<AbortedTransaction>>,
    pub watermarks: Option<Watermarks>,
    pub open_txn: Option<(i64, i64)>,
    pub max_bytes: Option<u64>,
    pub limit: usize,
    pub damage: Option<Damage>,
    pub counted: Option<Filter>,
    /// A directory read as its log ([`crate::ReadOptions::as_log`]).
    pub as_log: bool,
    /// Offsets checked against the next segment ([`crate::ReadOptions::as_log`], any source).
    pub check_offsets: bool,
}

impl Setup {
    /// Resolves `options`' range against a partition's facts (`time` looks times up), and
    /// takes its watermarks, open transaction and, at read_committed, the aborted transactions
    /// that end at or after the start.
    pub(crate) fn resolve(
        &mut self,
        options: &crate::ReadOptions,
        facts: &crate::local::Facts,
        time: &mut dyn FnMut(i64) -> Result<Option<i64>, Error>,
    ) -> Result<(), Error> {
        self.damage = facts.damage.clone();
        let w = facts.watermarks.as_ref();
        self.range = match &self.damage {
            None => options.range.resolve(w, options.isolation, time)?,
            Some(d) => options
                .range
                .resolve_before(w, options.isolation, time, d)?
                .ok_or_else(|| self.damage_error())?,
        };
        let start = self.range.start;
        if options.isolation == IsolationLevel::ReadCommitted {
            self.aborted = Some(
                facts
                    .aborted
                    .iter()
                    .filter(|(_, last)| *last >= start)
                    .map(|(t, _)| *t)
                    .collect(),
            );
        }
        self.watermarks = facts.watermarks;
        self.open_txn = facts.open_txn;
        Ok(())
    }
}

impl Setup {
    fn damage_error(&self) -> Error {
        damage_error(self.damage.as_ref())
    }
}

/// The damage a read ending now reached: `damage` ends a directory's log as read (damage in
/// the middle of the log, [`krecords_log::Log::damage`]), and the read has neither its count
/// nor an end of its own at or before it, so it did not see all it asked for and ends with the
/// damage's error instead of quietly.
fn reached<'a>(damage: Option<&'a Damage>, trim: &Trim) -> Option<&'a Damage> {
    damage.filter(|d| trim.left != Some(0) && !d.spares(trim.range.asked_end))
}

/// An entry at or past a read's end, which ends the read unless its offsets are damaged.
struct Beyond {
    position: usize,
    /// Where the entry after it starts.
    end: u64,
    first: i64,
    last: i64,
}

impl Beyond {
    fn of(b: &Batch<'_>) -> Beyond {
        Beyond {
            position: b.position(),
            end: (b.position() + b.size_in_bytes()) as u64,
            first: b.first_offset().unwrap_or_else(|| b.last_offset()),
            last: b.last_offset(),
        }
    }

    /// The offset field of the entry after this one in `path` (a v2 batch's base offset, a
    /// v0/v1 entry's offset), when one follows with a plausible size (not the zeros of a
    /// preallocated segment).
    fn next_offset_field(&self, path: &std::path::Path) -> io::Result<Option<i64>> {
        use std::io::{Read, Seek, SeekFrom};
        let mut head = [0u8; 12];
        let mut f = std::fs::File::open(path)?;
        f.seek(SeekFrom::Start(self.end))?;
        match f.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let [o0, o1, o2, o3, o4, o5, o6, o7, s0, s1, s2, s3] = head;
        let size = i32::from_be_bytes([s0, s1, s2, s3]);
        let plausible = size >= krecords_codec::layout::MIN_ENTRY_SIZE;
        Ok(plausible.then_some(i64::from_be_bytes([o0, o1, o2, o3, o4, o5, o6, o7])))
    }

    /// Why this entry of the local file `path` is not the end of the partition: its offsets
    /// reach the base offset of the next segment file still to read (`pending`), or the entry
    /// after it in the file goes back below it. Its offset field was then
    /// damaged (no CRC covers a v2 batch's base offset) and the records after it cannot be
    /// read in order. `None` for an entry that ends the read as it should (one a writer
    /// appends after it comes later).
    fn damaged(
        &self,
        pending: &Pending,
        path: Option<&std::path::Path>,
    ) -> io::Result<Option<krecords_log::Error>> {
        let Some(path) = path else {
            return Ok(None);
        };
        if next_segment(pending).is_some() {
            return Ok(self.overlaps_next_segment(pending, Some(path)));
        }
        Ok(match self.next_offset_field(path)? {
            Some(next) if next < self.first => {
                Some(self.error(path, &format!("the entry after it starts at offset {next}")))
            }
            _ => None,
        })
    }

    /// The damage of an entry of the local file `path` whose offsets reach the base offset of
    /// the next segment file still to read (`pending`).
    fn overlaps_next_segment(
        &self,
        pending: &Pending,
        path: Option<&std::path::Path>,
    ) -> Option<krecords_log::Error> {
        let (Some(path), Some(next)) = (path, next_segment(pending)) else {
            return None;
        };
        (self.last >= next)
            .then(|| self.error(path, &format!("the next segment starts at offset {next}")))
    }

    /// The error of this entry of `path`, damaged as `after` says.
    fn error(&self, path: &std::path::Path, after: &str) -> krecords_log::Error {
        krecords_log::Error::DamagedSegment {
            path: path.to_path_buf(),
            position: self.position as u64,
            reason: format!(
                "byte {}: the entry holds offsets {}..={} but {after}: its offset field is \
                 damaged, and the records after it cannot be read in order (`krec verify` \
                 lists the damage, `krec salvage` keeps every intact entry)",
                self.position, self.first, self.last
            ),
        }
    }
}

/// The note of a torn tail at the end of a log read as its log (see [`Reader::notes`]).
/// `later`: segment files follow, with no intact entry either.
fn torn_tail_note(
    file: Option<&str>,
    position: usize,
    bytes: usize,
    end: i64,
    later: bool,
) -> String {
    let later = if later {
        ", and the later segment files hold no intact entry"
    } else {
        ""
    };
    format!(
        "{}: the last {bytes} bytes, from byte {position}, are not a whole entry (a crash, or a \
         writer still writing){later}: the log ends before them (offset {end}), as Kafka's \
         recovery would cut them; nothing was changed",
        file.unwrap_or("-")
    )
}

/// The base offset of the next segment file a read of local files has still to open.
fn next_segment(pending: &Pending) -> Option<i64> {
    match pending {
        Pending::Files(files) => files
            .front()
            .and_then(|p| krecords_log::check::segment_base(p)),
        _ => None,
    }
}

/// The error of a read that reached `damage`.
pub(crate) fn damage_error(damage: Option<&Damage>) -> Error {
    match damage {
        Some(d) => {
            let dir = d.file.parent().unwrap_or(&d.file);
            Error::log(dir.display().to_string(), d.error())
        }
        None => Error::Usage("no damage".into()),
    }
}

impl Reader {
    pub(crate) fn new(s: Setup) -> Reader {
        Reader {
            name: s.name,
            pending: s.pending,
            max_bytes: s.max_bytes,
            cur: Cur::None,
            cur_path: None,
            check_offsets: s.check_offsets,
            trim: Trim {
                range: s.range,
                filter: s.aborted.map(|a| ReadCommitted::new(&a)),
                left: s.range.count,
                prev_last: None,
                scratch: Vec::new(),
                limit: s.limit,
                counted: s.counted.map(|f| Filter {
                    offset_start: None,
                    offset_end: None,
                    ..f
                }),
            },
            watermarks: s.watermarks,
            open_txn: s.open_txn,
            isolation: s.isolation,
            progress: None,
            finished: false,
            clean: false,
            live: None,
            damage: s.damage,
            as_log: s.as_log,
            notes: Vec::new(),
        }
    }

    /// What a read of a directory as its log ([`crate::ReadOptions::as_log`]) passed over
    /// without an error, one line each, for a command to show on stderr: a torn tail at the
    /// end of the log (`FILE: the last N bytes, from byte P, are not a whole entry ...`).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// See [`reached`].
    fn damage_reached(&self) -> Option<&Damage> {
        reached(self.damage.as_ref(), &self.trim)
    }

    /// Reports progress to `f`.
    pub fn set_progress(&mut self, f: ProgressFn) {
        self.progress = Some(f);
    }

    /// Whether files (or remote segments) of the partition are still to be opened: a read
    /// that ended at a truncated entry with more files after it ended at damage, not at the
    /// partition's end.
    pub fn more_files(&self) -> bool {
        match &self.pending {
            Pending::Files(f) => !f.is_empty(),
            #[cfg(feature = "remote")]
            Pending::Remote(f) => !f.is_empty(),
            Pending::Stdin | Pending::Live(_) => false,
        }
    }

    /// The partition's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The range read, in offsets.
    pub fn range(&self) -> Resolved {
        self.trim.range
    }

    /// The partition's watermarks, when the source knows them and the read needed them.
    pub fn watermarks(&self) -> Option<Watermarks> {
        self.watermarks
    }

    /// The offsets whose records the current entry should show.
    pub fn bounds(&self) -> Bounds {
        self.trim.bounds()
    }

    /// Opens the next file; `None` when the read is over.
    ///
    /// # Errors
    ///
    /// A file that cannot be opened; a live partition whose first fetch fails.
    pub fn next_file(&mut self) -> Result<Option<FileInfo>, Error> {
        if self.finished {
            self.cur = Cur::None;
            return Ok(None);
        }
        let (name, path, bytes, live) = match &mut self.pending {
            Pending::Files(files) => {
                let Some(path) = files.pop_front() else {
                    self.cur = Cur::None;
                    if self.damage_reached().is_some() {
                        self.finished = true;
                        return Err(damage_error(self.damage.as_ref()));
                    }
                    self.clean = true;
                    return Ok(None);
                };
                let s = crate::local::file_stream(&path, self.max_bytes)
                    .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
                let bytes = s.input().unread();
                self.cur = Cur::File(Box::new(s));
                self.cur_path = Some(path.clone());
                (path.display().to_string(), Some(path), bytes, false)
            }
            #[cfg(feature = "remote")]
            Pending::Remote(segments) => {
                let Some(mut segment) = segments.pop_front() else {
                    self.cur = Cur::None;
                    self.clean = true;
                    return Ok(None);
                };
                let (s, len) = segment.open()?;
                // The next segment's first chunks are fetched while this one is read.
                if let Some(next) = segments.front_mut() {
                    next.prefetch();
                }
                self.cur = Cur::File(Box::new(s));
                (segment.name(), None, Some(len), false)
            }
            Pending::Stdin => {
                let limit = self.max_bytes.unwrap_or(u64::MAX);
                let reader: Box<dyn io::Read> = Box::new(io::Read::take(io::stdin(), limit));
                let s = krecords_log::check::streamer(reader, None);
                self.cur = Cur::File(Box::new(s));
                self.finished = true;
                ("-".to_owned(), None, None, false)
            }
            Pending::Live(_) => {
                let Pending::Live(l) =
                    std::mem::replace(&mut self.pending, Pending::Files(VecDeque::new()))
                else {
                    return Ok(None);
                };
                let (rt, rx, part) = *l;
                self.live = Some((rt.clone(), part.clone()));
                let mut cursor = LiveCursor {
                    rt,
                    rx,
                    committed: self.isolation == IsolationLevel::ReadCommitted,
                    part,
                    chunk: Bytes::new(),
                    ends: Vec::new(),
                    idx: 0,
                    pos: 0,
                    base: 0,
                    eof: false,
                    done: false,
                    fetched: 0,
                    next_offset: None,
                };
                let name = cursor.part.name.clone();
                if let Some(p) = self.progress.as_mut() {
                    p(Progress::Start {
                        name: &name,
                        bytes: None,
                        live: true,
                    });
                }
                // The first answer decides whether the partition can be read at all.
                cursor.recv(&mut self.trim, &mut self.progress)?;
                self.cur = Cur::Live(Box::new(cursor));
                return Ok(Some(FileInfo { name, path: None }));
            }
        };
        if let Some(p) = self.progress.as_mut() {
            p(Progress::Start {
                name: &name,
                bytes,
                live,
            });
        }
        Ok(Some(FileInfo { name, path }))
    }

    /// The next entry of the current file, with the offsets of its records to show. The entry
    /// is as stored: its CRC is not checked (decode its records with `checked_records`, which
    /// checks it).
    ///
    /// # Errors
    ///
    /// An I/O error reading the input.
    pub fn next_with_bounds(&mut self) -> io::Result<(Step<'_>, Bounds)> {
        let Reader {
            cur,
            cur_path,
            check_offsets,
            pending,
            trim,
            progress,
            finished,
            clean,
            damage,
            as_log,
            notes,
            watermarks,
            ..
        } = self;
        let step = match cur {
            Cur::None => Step::End,
            Cur::File(s) => {
                if trim.active() {
                    while s.skip_entry_if(|b| trim.skip(b))? {}
                }
                let step = s.next_entry()?;
                // A partial entry in a read of a directory as its log: damage in the middle
                // of the log is the damage's error; a torn tail of the last segment where the
                // log as its recovery reads it ends is not part of the log a broker serves,
                // so the end of the read, with a note; after the read's own end (its count,
                // `--end`, the last stable offset) it is not the read's at all.
                let partial = match &step {
                    Step::Partial(p) if *as_log => Some((p.position, p.bytes)),
                    _ => None,
                };
                if let Some((position, bytes)) = partial {
                    if let Some(d) = reached(damage.as_ref(), trim) {
                        *finished = true;
                        return Err(io::Error::new(io::ErrorKind::InvalidData, d.error()));
                    }
                    // Damage that intact entries follow is the log's damage (above); a cut with
                    // nothing intact after it, in later segment files too, is the log's end.
                    let log_end = watermarks.map(|w| w.high_watermark);
                    let torn = log_end.is_some_and(|end| trim.next_offset() >= end);
                    if torn || trim.at_end() {
                        if let (true, Some(end)) = (torn, log_end) {
                            let file = cur_path.as_deref().map(|p| p.display().to_string());
                            let later = next_segment(pending).is_some();
                            notes.push(torn_tail_note(
                                file.as_deref(),
                                position,
                                bytes,
                                end,
                                later,
                            ));
                        }
                        *finished = true;
                        *clean = true;
                        if let Some(p) = progress.as_mut() {
                            p(Progress::Done);
                        }
                        return Ok((Step::End, trim.bounds()));
                    }
                }
                let beyond = match &step {
                    Step::Entry(b) if trim.past_end(b) => Some(Beyond::of(b)),
                    _ => None,
                };
                if let Some(beyond) = beyond {
                    *finished = true;
                    if let Some(e) = beyond.damaged(pending, cur_path.as_deref())? {
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                    if let Some(d) = reached(damage.as_ref(), trim) {
                        return Err(io::Error::new(io::ErrorKind::InvalidData, d.error()));
                    }
                    *clean = true;
                    if let Some(p) = progress.as_mut() {
                        p(Progress::Done);
                    }
                    return Ok((Step::End, trim.bounds()));
                }
                match &step {
                    Step::Entry(b) => {
                        // A read of offsets does not take an entry that reaches into the next
                        // segment (a damaged offset field) for part of the partition.
                        let of_offsets =
                            *check_offsets || trim.active() || trim.range.end.is_some();
                        let overlap = of_offsets
                            .then(|| {
                                Beyond::of(b).overlaps_next_segment(pending, cur_path.as_deref())
                            })
                            .flatten();
                        if let Some(e) = overlap {
                            *finished = true;
                            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                        }
                        trim.deliver(b);
                        if let Some(p) = progress.as_mut() {
                            p(Progress::Bytes((b.position() + b.size_in_bytes()) as u64));
                        }
                    }
                    Step::End => {
                        *clean = true;
                        if let Some(p) = progress.as_mut() {
                            p(Progress::Done);
                        }
                    }
                    Step::Error(_) | Step::Partial(_) => {
                        // A read of the files as they are goes on with the next file, as
                        // kafka-dump-log does (the bytes of this one past the error are
                        // reported by the caller); a read of offsets ends here, since what
                        // follows is not where the log goes on.
                        if trim.active() || trim.range.end.is_some() {
                            *finished = true;
                        }
                        *clean = false;
                        if let Some(p) = progress.as_mut() {
                            p(Progress::Done);
                        }
                    }
                }
                step
            }
            Cur::Live(l) => {
                let step = l.next(trim, progress, finished)?;
                match &step {
                    Step::End => *clean = true,
                    Step::Error(_) | Step::Partial(_) => {
                        *finished = true;
                        *clean = false;
                    }
                    Step::Entry(_) => {}
                }
                step
            }
        };
        let bounds = trim.bounds();
        Ok((step, bounds))
    }

    /// The next entry of the current file, as stored: its CRC is not checked (decode its
    /// records with `checked_records`, which checks it).
    ///
    /// # Errors
    ///
    /// An I/O error reading the input.
    pub fn next_entry(&mut self) -> io::Result<Step<'_>> {
        self.next_with_bounds().map(|(s, _)| s)
    }

    /// The isolation level it reads at.
    pub fn isolation(&self) -> IsolationLevel {
        self.isolation
    }

    /// Absolute position of the next unread entry of the current file.
    pub fn position(&self) -> usize {
        match &self.cur {
            Cur::None => 0,
            Cur::File(s) => usize::try_from(s.position()).unwrap_or(usize::MAX),
            Cur::Live(l) => l.base + l.pos,
        }
    }

    /// Bytes from the current position to the end of the current file (after an error: how
    /// many were left unread as invalid). Reads the rest of a stream to count it, at most
    /// [`krecords_log::check::COUNT_LIMIT`] bytes (beyond that, an error: the input
    /// does not end).
    ///
    /// # Errors
    ///
    /// An I/O error reading the input.
    pub fn remaining_bytes(&mut self) -> io::Result<u64> {
        match &mut self.cur {
            Cur::None => Ok(0),
            Cur::File(s) => {
                let buffered = s.buffered() as u64;
                let input = s.input_mut();
                if let Some(u) = input.unread() {
                    return Ok(buffered + u);
                }
                Ok(buffered + krecords_log::check::count_rest(input.reader_mut())?)
            }
            Cur::Live(l) => Ok(l.chunk.len().saturating_sub(l.pos) as u64),
        }
    }

    /// The bytes of the current live chunk from the current position on (after a corrupt or
    /// truncated entry: the bytes from it to the end of the response); empty for files.
    pub fn unread_bytes(&self) -> &[u8] {
        match &self.cur {
            Cur::Live(l) => l.chunk.get(l.pos..).unwrap_or(&[]),
            Cur::None | Cur::File(_) => &[],
        }
    }

    /// Where and why the read stopped before the high watermark; `None` when it read
    /// everything up to it (or ended at an error).
    pub fn stop(&self) -> Option<Stop> {
        if !self.clean {
            return None;
        }
        let end = self.trim.range.end?;
        // The high watermark of a log whose end is damage is not known.
        let high_watermark = self
            .watermarks
            .map(|w| w.high_watermark)
            .filter(|_| self.damage.is_none());
        let cause = if self.trim.left == Some(0) {
            StopCause::Count(self.trim.range.count.unwrap_or(0))
        } else if self.trim.range.asked_end == Some(end) {
            StopCause::End
        } else if self.isolation == IsolationLevel::ReadCommitted {
            StopCause::LastStable
        } else {
            return None;
        };
        if high_watermark.is_some_and(|h| end >= h) {
            return None;
        }
        let mut open_txn = self.open_txn;
        if cause == StopCause::LastStable && open_txn.is_none() {
            if let Some((rt, part)) = &self.live {
                open_txn = rt.wait(part.producer_at(end)).map(|p| (p, end));
            }
        }
        Some(Stop {
            at: end,
            cause,
            high_watermark,
            open_txn,
        })
    }
}

impl EntrySource for Reader {
    fn next_entry(&mut self) -> io::Result<Step<'_>> {
        Reader::next_entry(self)
    }

    fn position(&self) -> usize {
        Reader::position(self)
    }

    fn remaining_bytes(&mut self) -> io::Result<u64> {
        Reader::remaining_bytes(self)
    }
}
