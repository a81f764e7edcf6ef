//! A remote tier (Kafka's tiered storage, as Aiven's plugin writes it) as a source: each
//! partition found under the location is one [`crate::Partition`], its uploaded segments read
//! in offset order as files.
//!
//! What a partition knows, from its segments' manifests and indexes, never from their data:
//! the watermarks (log start: the first segment's start offset; end: the last segment's end
//! offset + 1, from each manifest's `remoteLogSegmentMetadata`; last stable offset: the end,
//! since Kafka uploads only stable segments), the aborted transactions (the `.indexes`
//! objects' transaction indexes), the offset of a time (a segment's `maxTimestampMs`, then its
//! time index and offset index narrow the chunks scanned). A read opens a segment only when it
//! reaches it, and starts a segment in the middle at the chunk holding the offset index's
//! position for the start offset.

use crate::error::Error;
use crate::local::{Aborted, Facts, FileStreamer};
use crate::position::Watermarks;
use krecords_codec::read::{ReadFill, Step, Streamer};
use krecords_log::index_entries::{offset_entry, time_entry, OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE};
use krecords_remote::key::RemotePartition;
use krecords_remote::location::{Location, RemoteOptions};
use krecords_remote::manifest::IndexType;
use krecords_remote::stream::SegmentStream;
use krecords_remote::stream::SharedStorage;
use krecords_remote::{RemoteSegment, RemoteTier, Segment};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// One opened location: its storage, prefix and keys.
pub(crate) struct Tier {
    pub location: Location,
    /// The one partition the location named, when it named one.
    pub only: Option<RemotePartition>,
    pub tier: RemoteTier<SharedStorage>,
    pub lookahead: usize,
}

impl Tier {
    /// Opens `location` with `options` (the private keys are taken from it).
    pub(crate) fn open(location: Location, options: &RemoteOptions) -> Result<Tier, Error> {
        let (location, only) = location.split_partition();
        let (storage, prefix) = options
            .open(&location)
            .map_err(|e| Error::remote(location.url.clone(), e))?;
        let tier = RemoteTier::new(storage, prefix).with_keys(options.keys.clone());
        Ok(Tier {
            location,
            only,
            tier,
            lookahead: options.lookahead(),
        })
    }

    /// The partitions under the location, each with its segments in offset order (the ones
    /// whose three objects all exist).
    pub(crate) fn partitions(self: &Arc<Tier>) -> Result<Vec<RemotePart>, Error> {
        let listing = match &self.only {
            Some(p) => {
                let segments = self.tier.segments(p);
                let segments = segments.map_err(|e| Error::remote(self.location.url.clone(), e))?;
                [(p.clone(), segments)].into_iter().collect()
            }
            None => {
                self.tier
                    .list()
                    .map_err(|e| Error::remote(self.location.url.clone(), e))?
                    .partitions
            }
        };
        let mut out = Vec::new();
        for (partition, segments) in listing {
            let segments: Vec<RemoteSegment> = segments
                .into_iter()
                .filter(RemoteSegment::is_complete)
                .collect();
            if segments.is_empty() {
                continue;
            }
            out.push(RemotePart {
                name: self.location.partition_name(&partition),
                tier: Arc::clone(self),
                partition,
                segments,
                facts: Arc::new(Mutex::new(None)),
            });
        }
        if out.is_empty() {
            return Err(Error::Usage(format!(
                "{}: no uploaded segments here (expected objects named \
                 <prefix><topic>-<topicId>/<partition>/<offset>-<id>.rsm-manifest under the \
                 location's path)",
                self.location.url
            )));
        }
        Ok(out)
    }
}

/// What a remote partition's manifests say of one segment.
#[derive(Debug, Clone, Copy)]
struct SegmentFacts {
    start: i64,
    /// The last offset (inclusive).
    end: i64,
    max_timestamp: i64,
}

/// The facts of a remote partition, gathered once.
#[derive(Debug, Clone)]
struct PartFacts {
    segments: Vec<SegmentFacts>,
    /// The aborted transactions, once read.
    aborted: Option<Vec<Aborted>>,
}

/// One partition of a remote tier.
#[derive(Clone)]
pub struct RemotePart {
    /// `<location>/<topic>-<topicId>/<partition>`.
    pub(crate) name: String,
    tier: Arc<Tier>,
    /// The topic, its id and the partition.
    pub(crate) partition: RemotePartition,
    segments: Vec<RemoteSegment>,
    facts: Arc<Mutex<Option<PartFacts>>>,
}

impl fmt::Debug for RemotePart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemotePart")
            .field("name", &self.name)
            .field("segments", &self.segments.len())
            .finish_non_exhaustive()
    }
}

/// One segment of a read: opened when the reader reaches it, or just before, by
/// [`RemoteFile::prefetch`].
pub(crate) struct RemoteFile {
    part: RemotePart,
    index: usize,
    /// Start the segment at the chunk holding this offset (the read's start), when set.
    from_offset: Option<i64>,
    /// The segment being opened on a thread, its first chunks fetched: its stream and size.
    ready: Option<JoinHandle<Result<(SegmentStream, u64), Error>>>,
}

impl RemotePart {
    fn err(&self, e: krecords_remote::Error) -> Error {
        Error::remote(self.name.clone(), e)
    }

    fn open(&self, index: usize) -> Result<Segment<'_, SharedStorage>, Error> {
        let s = self
            .segments
            .get(index)
            .ok_or_else(|| Error::Usage(format!("{}: no segment {index}", self.name)))?;
        self.tier.tier.open(s).map_err(|e| self.err(e))
    }

    /// The segments' offsets and times, and the aborted transactions when `aborted` (their
    /// transaction indexes are read once, the first time they are asked for).
    fn facts(&self, aborted: bool) -> Result<PartFacts, Error> {
        if let Some(f) = self.facts.lock().ok().and_then(|g| g.clone()) {
            if !aborted || f.aborted.is_some() {
                return Ok(f);
            }
        }
        let mut segments = Vec::new();
        let mut txns = Vec::new();
        for (i, s) in self.segments.iter().enumerate() {
            let seg = self.open(i)?;
            let meta = seg.manifest().remote_log_segment_metadata.as_ref();
            let Some(m) = meta else {
                return Err(Error::Data(format!(
                    "{}: manifest {} has no remoteLogSegmentMetadata: the segment's end offset \
                     is unknown",
                    self.name,
                    seg.key()
                )));
            };
            if m.start_offset != s.start_offset || m.end_offset < m.start_offset {
                return Err(Error::Data(format!(
                    "{}: manifest {} says offsets {}..={}, its name says {}",
                    self.name,
                    seg.key(),
                    m.start_offset,
                    m.end_offset,
                    s.start_offset
                )));
            }
            segments.push(SegmentFacts {
                start: m.start_offset,
                end: m.end_offset,
                max_timestamp: m.max_timestamp_ms,
            });
            if aborted {
                if let Some(bytes) = seg.index(IndexType::Transaction).map_err(|e| self.err(e))? {
                    let key = seg.key().to_string();
                    let list = krecords_log::transaction::parse_txn_index(key.as_ref(), &bytes)
                        .map_err(|e| Error::Data(format!("{}: {e}", self.name)))?;
                    txns.extend(
                        list.iter()
                            .map(|t| (t.as_aborted_transaction(), t.last_offset)),
                    );
                }
            }
        }
        let facts = PartFacts {
            segments,
            aborted: aborted.then_some(txns),
        };
        if let Ok(mut g) = self.facts.lock() {
            *g = Some(facts.clone());
        }
        Ok(facts)
    }

    /// Watermarks, aborted transactions (when asked for) and no open transaction.
    pub(crate) fn source_facts(&self, aborted: bool) -> Result<Facts, Error> {
        let f = self.facts(aborted)?;
        let log_start = f.segments.first().map_or(0, |s| s.start);
        let end = f.segments.last().map_or(0, |s| s.end.saturating_add(1));
        Ok(Facts {
            watermarks: Some(Watermarks {
                log_start,
                high_watermark: end,
                last_stable: Some(end),
            }),
            aborted: f.aborted.unwrap_or_default(),
            open_txn: None,
            damage: None,
        })
    }

    /// The first offset whose record timestamp is at or after `ms`: the first segment whose
    /// max timestamp reaches it, scanned from the last time index entry before it.
    pub(crate) fn offset_for_time(&self, ms: i64, limit: usize) -> Result<Option<i64>, Error> {
        let f = self.facts(false)?;
        for (i, s) in f.segments.iter().enumerate() {
            if s.max_timestamp < ms {
                continue;
            }
            let seg = self.open(i)?;
            // The last time index entry below `ms`: everything up to its offset is earlier.
            let mut after = None;
            if let Some(bytes) = seg.index(IndexType::Timestamp).map_err(|e| self.err(e))? {
                for e in bytes.chunks_exact(TIME_ENTRY_SIZE as usize) {
                    let (t, rel) = time_entry(e);
                    if t >= ms || rel < 0 {
                        break;
                    }
                    after = Some(s.start.saturating_add(i64::from(rel)).saturating_add(1));
                }
            }
            let from = after.unwrap_or(s.start);
            let mut stream = self.streamer(&seg, Some(from))?;
            let mut scratch = Vec::new();
            loop {
                let step = stream
                    .next_entry()
                    .map_err(|e| Error::io(format!("cannot read {}", seg.key()), e))?;
                let Step::Entry(b) = step else { break };
                if b.max_timestamp() < ms {
                    continue;
                }
                let records = b
                    .records(&mut scratch, limit)
                    .map_err(|e| Error::Data(e.to_string()))?;
                for r in records {
                    let r = r.map_err(|e| Error::Data(e.to_string()))?;
                    if r.offset() >= from && r.timestamp().is_some_and(|t| t >= ms) {
                        return Ok(Some(r.offset()));
                    }
                }
            }
        }
        Ok(None)
    }

    /// The segments a read of `start..end` opens, the first one started at `start`.
    pub(crate) fn files(&self, start: Option<i64>, end: Option<i64>) -> Vec<RemoteFile> {
        let mut first = 0;
        if let Some(start) = start {
            while self
                .segments
                .get(first + 1)
                .is_some_and(|s| s.start_offset <= start)
            {
                first += 1;
            }
        }
        let mut last = self.segments.len();
        if let Some(end) = end {
            while last > first + 1
                && self
                    .segments
                    .get(last - 1)
                    .is_some_and(|s| s.start_offset >= end)
            {
                last -= 1;
            }
        }
        (first..last)
            .map(|index| RemoteFile {
                part: self.clone(),
                index,
                from_offset: if index == first { start } else { None },
                ready: None,
            })
            .collect()
    }

    /// A streamer of segment `seg` from the chunk holding `from` (by its offset index).
    fn streamer(
        &self,
        seg: &Segment<'_, SharedStorage>,
        from: Option<i64>,
    ) -> Result<FileStreamer, Error> {
        Ok(file_streamer(self.stream(seg, from)?))
    }

    /// The stream of segment `seg` from the chunk holding `from` (by its offset index).
    fn stream(
        &self,
        seg: &Segment<'_, SharedStorage>,
        from: Option<i64>,
    ) -> Result<SegmentStream, Error> {
        let mut position = 0u64;
        if let Some(from) = from {
            let base = seg.key().start_offset;
            if let Some(bytes) = seg.index(IndexType::Offset).map_err(|e| self.err(e))? {
                for e in bytes.chunks_exact(OFFSET_ENTRY_SIZE as usize) {
                    let (rel, pos) = offset_entry(e);
                    if rel < 0 || pos < 0 || base.saturating_add(i64::from(rel)) > from {
                        break;
                    }
                    position = u64::try_from(pos).unwrap_or(0);
                }
            }
        }
        let position = position.min(seg.original_size());
        Ok(seg.stream(position, self.tier.lookahead))
    }

    /// Opens segment `index` (its manifest, data key and, to start at `from`, its offset
    /// index): its stream and original size.
    fn open_stream(&self, index: usize, from: Option<i64>) -> Result<(SegmentStream, u64), Error> {
        let seg = self.open(index)?;
        let stream = self.stream(&seg, from)?;
        Ok((stream, seg.original_size()))
    }
}

/// A segment's stream as the reader reads files.
fn file_streamer(stream: SegmentStream) -> FileStreamer {
    let start = stream.start();
    let len = stream.len();
    let input = ReadFill::with_len(Box::new(stream) as Box<dyn std::io::Read>, len);
    Streamer::new(input, start, i32::MAX as usize)
}

impl RemoteFile {
    /// The segment's name: its `.log` object's URL.
    pub(crate) fn name(&self) -> String {
        let key = self
            .part
            .segments
            .get(self.index)
            .map(|s| s.key(krecords_remote::key::Suffix::Log))
            .unwrap_or_default();
        let base = self
            .part
            .tier
            .location
            .url
            .strip_suffix(self.part.tier.location.prefix.as_str())
            .unwrap_or(&self.part.tier.location.url);
        let sep = if base.ends_with('/') { "" } else { "/" };
        format!("{base}{sep}{key}")
    }

    /// Opens the segment (its manifest, data key and, to start inside it, its offset index)
    /// and streams it: `(streamer, original bytes it yields)`. A segment prefetched
    /// ([`RemoteFile::prefetch`]) is taken as the thread opened it, its error included.
    pub(crate) fn open(&mut self) -> Result<(FileStreamer, u64), Error> {
        let opened = match self.ready.take() {
            Some(handle) => handle.join().map_err(|_| {
                Error::Data(format!(
                    "{}: opening {} panicked",
                    self.part.name,
                    self.name()
                ))
            })?,
            None => self.part.open_stream(self.index, self.from_offset),
        };
        let (stream, len) = opened?;
        Ok((file_streamer(stream), len))
    }

    /// Starts opening the segment on a thread and fetching its first chunks (at most
    /// `remote.lookahead` of them, decoded), so that they arrive while the segment before it
    /// is read: a read holds at most `2 × lookahead + 1` decoded chunks, the segment being
    /// read's and the next one's. Errors come when the segment is [opened](RemoteFile::open).
    pub(crate) fn prefetch(&mut self) {
        if self.ready.is_some() {
            return;
        }
        let part = self.part.clone();
        let (index, from) = (self.index, self.from_offset);
        self.ready = Some(std::thread::spawn(move || {
            let (mut stream, len) = part.open_stream(index, from)?;
            stream.prefetch();
            Ok((stream, len))
        }));
    }
}
