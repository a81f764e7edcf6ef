//! Both tiers of a broker checked together: the remote tier's objects (any [`Storage`])
//! reconciled with `__remote_log_metadata` replayed ([`MetadataCache`]) and with the local
//! partition directories, and every remote segment checked as `krec verify` checks a local one.
//!
//! Per partition, one [`Finding`] per problem, naming the partition, the object and an offset:
//!
//! - `metadata`: an event Kafka would drop or refuse (invalid transition, update of an unknown
//!   segment, a record that does not decode);
//! - `copy-unfinished`: COPY_SEGMENT_STARTED never followed by COPY_SEGMENT_FINISHED;
//!   `delete-unfinished`: DELETE_SEGMENT_STARTED never followed by DELETE_SEGMENT_FINISHED;
//! - `missing`: a segment the metadata says exists (COPY_SEGMENT_FINISHED) lacking any of its
//!   `.log`, `.indexes` and `.rsm-manifest` objects;
//! - `orphan`: objects no metadata names (and keys under the prefix that name no segment);
//! - `manifest`: a manifest that does not parse, cannot be decrypted, or whose chunk index does
//!   not match its `.log` object's size;
//! - `mismatch`: the manifest's `remoteLogSegmentMetadata`, the object name or the segment's
//!   data disagreeing with the metadata topic's record (offsets, leader epochs, size);
//! - `offsets`: a gap or an overlap between consecutive remote segments, or a gap between the
//!   remote tier's end and the local log's first offset (an overlap there is normal: Kafka
//!   keeps copied segments locally until local retention removes them);
//! - `epoch`: leader epochs going backwards across remote segments, or not matching the local
//!   `leader-epoch-checkpoint`;
//! - `chunk`: a chunk or index that does not decrypt or decompress, or a short object;
//! - `entry`, `truncated`, `index`, `timeindex`, `txnindex`: what [`krecords_log::check`] finds
//!   in the segment's decoded bytes and its indexes, positions being bytes of the original
//!   segment (or index);
//! - `io`: the storage failed.
//!
//! A segment with no problem is reported intact ([`SegmentReport`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use krecords_log::check::{
    CheckError, Checker, EntryStream, Problem, ProblemKind, SegmentIndexBytes,
};
use krecords_topics::remote_log_metadata::{RemoteLogSegmentState, TopicIdPartition};

use crate::error::{Error, Result};
use crate::key::{KafkaUuid, ObjectKey, RemotePartition, Suffix};
use crate::manifest::IndexType;
use crate::metadata::{MetadataCache, SegmentState};
use crate::reader::{ChunkReader, RemoteSegment, RemoteTier};
use crate::storage::Storage;

/// What a [`Finding`] is about (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Check {
    /// A metadata event Kafka would drop or refuse, or one that does not decode.
    Metadata,
    /// COPY_SEGMENT_STARTED without COPY_SEGMENT_FINISHED.
    CopyUnfinished,
    /// DELETE_SEGMENT_STARTED without DELETE_SEGMENT_FINISHED.
    DeleteUnfinished,
    /// Objects of a copied segment absent from the bucket.
    Missing,
    /// Objects no metadata names.
    Orphan,
    /// A manifest that does not parse or decrypt, or whose chunk index does not match.
    Manifest,
    /// The manifest, object name or data disagreeing with the metadata record.
    Mismatch,
    /// Gaps and overlaps between segments, or between the tiers.
    Offsets,
    /// Leader epoch lineage.
    Epoch,
    /// A chunk or index that does not decode, or a short object.
    Chunk,
    /// A log check's problem in the decoded segment (its [`krecords_log::check::ProblemKind`]).
    Log(krecords_log::check::ProblemKind),
    /// The storage failed.
    Io,
}

impl Check {
    /// The name printed in brackets and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Check::Metadata => "metadata",
            Check::CopyUnfinished => "copy-unfinished",
            Check::DeleteUnfinished => "delete-unfinished",
            Check::Missing => "missing",
            Check::Orphan => "orphan",
            Check::Manifest => "manifest",
            Check::Mismatch => "mismatch",
            Check::Offsets => "offsets",
            Check::Epoch => "epoch",
            Check::Chunk => "chunk",
            Check::Log(k) => k.as_str(),
            Check::Io => "io",
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// `topic-partition`, or empty for a key that names no partition.
    pub partition: String,
    /// The object key (or metadata segment file) the problem is in.
    pub object: String,
    /// The Kafka offset the problem is at: the segment's start offset, the first offset of a
    /// gap, or the metadata record's offset for `metadata` findings.
    pub offset: Option<i64>,
    /// A byte position in the original segment or index, when the problem has one.
    pub position: Option<u64>,
    /// What kind of problem.
    pub check: Check,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Finding {
    /// `partition: object: offset N: byte B: [check] message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.partition.is_empty() {
            write!(f, "{}: ", self.partition)?;
        }
        write!(f, "{}", self.object)?;
        if let Some(o) = self.offset {
            write!(f, ": offset {o}")?;
        }
        if let Some(p) = self.position {
            write!(f, ": byte {p}")?;
        }
        write!(f, ": [{}] {}", self.check, self.message)
    }
}

/// One remote segment the metadata says exists, as checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentReport {
    /// `topic-partition`.
    pub partition: String,
    /// The manifest key.
    pub object: String,
    /// The segment's start offset.
    pub start_offset: i64,
    /// Its end offset (inclusive), as the metadata says.
    pub end_offset: i64,
    /// Problems found in it.
    pub problems: u64,
}

/// What [`verify`] reports, in order: findings as they are found and each checked segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A problem.
    Finding(Finding),
    /// A segment checked (after its findings).
    Segment(SegmentReport),
}

/// What was checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Partitions seen in the metadata or the bucket.
    pub partitions: u64,
    /// Partitions with at least one problem.
    pub partitions_with_problems: u64,
    /// Segments the metadata says exist (COPY_SEGMENT_FINISHED) that were checked.
    pub segments: u64,
    /// Of those, the ones with no problem.
    pub intact: u64,
    /// Objects, entries, records and bytes the log checks read.
    pub log: krecords_log::check::Summary,
    /// Every problem.
    pub problems: u64,
}

impl Summary {
    /// The line for people: `remote tier LOCATION: 2 partitions (1 ok, 1 with problems),
    /// 7 segments (6 intact, 1 with problems), 21 files, ...: 1 problem`.
    pub fn describe(&self, location: &str) -> String {
        let n = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut log = self.log;
        log.problems = self.problems;
        format!(
            "remote tier {location}: {} ({} ok, {} with problems), {} ({} intact, {} with problems), {}",
            n(self.partitions, "partition", "partitions"),
            self.partitions - self.partitions_with_problems,
            self.partitions_with_problems,
            n(self.segments, "segment", "segments"),
            self.intact,
            self.segments - self.intact,
            log.describe(0)
        )
    }

    /// The summary as `krec verify --format json` prints it, under `"remote"`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "partitions": self.partitions,
            "partitions_with_problems": self.partitions_with_problems,
            "segments": self.segments,
            "intact": self.intact,
            "files": self.log.files,
            "entries": self.log.entries,
            "records": self.log.records,
            "bytes": self.log.bytes,
            "problems": self.problems,
        })
    }
}

impl Event {
    /// The event as a line of `krec verify --format json`: a problem as the local ones are
    /// (`"tier": "remote"`), a segment as `{"segment": {...}}`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Event::Finding(f) => serde_json::json!({
                "tier": "remote",
                "partition": f.partition,
                "file": f.object,
                "offset": f.offset,
                "position": f.position,
                "check": f.check.as_str(),
                "message": f.message,
            }),
            Event::Segment(s) => serde_json::json!({"segment": {
                "partition": s.partition,
                "object": s.object,
                "start_offset": s.start_offset,
                "end_offset": s.end_offset,
                "ok": s.problems == 0,
                "problems": s.problems,
            }}),
        }
    }
}

impl Event {
    /// Writes the event as `krec verify --remote` prints it: with `json`, [`Event::to_json`] on
    /// a line; in text, a finding's line (its [`Display`](fmt::Display) form) and nothing for a
    /// segment.
    ///
    /// # Errors
    ///
    /// Writing to `out` failed.
    pub fn write_line(&self, json: bool, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        match (json, self) {
            (false, Event::Finding(f)) => writeln!(out, "{f}"),
            (false, Event::Segment(_)) => Ok(()),
            (true, _) => writeln!(out, "{}", self.to_json()),
        }
    }
}

/// [`verify`] against a metadata log: `metadata` replayed as Kafka's metadata cache replays it
/// ([`MetadataCache::from_log`]), each event written to `out` as a line ([`Event::write_line`]).
///
/// # Errors
///
/// As [`verify`]; writing to `out` failed.
pub fn verify_to<S: Storage + Sync>(
    tier: &RemoteTier<S>,
    metadata: &crate::metadata::MetadataLog,
    options: &Options<'_>,
    json: bool,
    out: &mut dyn std::io::Write,
) -> Result<Summary> {
    let cache = MetadataCache::from_log(metadata);
    verify(tier, &cache, options, &mut |e| e.write_line(json, out))
}

/// Options of [`verify`].
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// A broker's data directory: the local partitions the remote tier is compared with.
    pub local_root: Option<&'a Path>,
    /// The most bytes one entry may decompress to.
    pub max_decompressed_bytes: usize,
    /// Only partitions of topics this predicate accepts.
    pub topic_filter: Option<&'a dyn Fn(&str) -> bool>,
    /// Segments checked at once (0 counts as 1). The report is the same whatever the number.
    pub threads: usize,
}

impl fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("local_root", &self.local_root)
            .field("max_decompressed_bytes", &self.max_decompressed_bytes)
            .field("topic_filter", &self.topic_filter.is_some())
            .field("threads", &self.threads)
            .finish()
    }
}

fn remote_partition(tp: &TopicIdPartition) -> RemotePartition {
    RemotePartition {
        topic: tp.topic.clone(),
        topic_id: KafkaUuid(tp.topic_id),
        partition: tp.partition,
    }
}

fn partition_name(p: &RemotePartition) -> String {
    format!("{}-{}", p.topic, p.partition)
}

/// Reconciles the remote tier with the replayed metadata (and the local logs), reporting each
/// problem and each checked segment to `sink` in partition order.
///
/// The copied segments (the costly part: every chunk fetched, decoded and checked) are checked
/// by [`Options::threads`] workers, across partitions; what they find is reported in the same
/// order, and the same events, as with one thread. Memory: each of the `threads` workers
/// holds one decoded chunk, one entry and the segment's indexes (segments are streamed chunk
/// by chunk, whatever their size), plus the findings of at most `threads` checked segments
/// waiting for their turn to be reported.
///
/// # Errors
///
/// The storage cannot be listed, or `sink` failed.
pub fn verify<S: Storage + Sync>(
    tier: &RemoteTier<S>,
    metadata: &MetadataCache,
    options: &Options<'_>,
    sink: &mut dyn FnMut(Event) -> std::io::Result<()>,
) -> Result<Summary> {
    let listing = tier.list()?;
    let mut summary = Summary::default();
    let mut emit = |summary: &mut Summary, e: Event| -> Result<()> {
        if let Event::Finding(_) = e {
            summary.problems += 1;
        }
        sink(e).map_err(|source| Error::Io {
            op: "write",
            path: "report".into(),
            source,
        })
    };
    let wanted = |topic: &str| options.topic_filter.is_none_or(|f| f(topic));
    // Problems of the metadata topic that name no partition.
    for p in metadata.problems.iter().filter(|p| p.partition.is_none()) {
        emit(
            &mut summary,
            Event::Finding(Finding {
                partition: String::new(),
                object: p.at.file.clone(),
                offset: (p.at.offset >= 0).then_some(p.at.offset),
                position: None,
                check: Check::Metadata,
                message: p.message.clone(),
            }),
        )?;
    }
    let mut partitions: BTreeSet<RemotePartition> = listing.partitions.keys().cloned().collect();
    partitions.extend(metadata.partitions.keys().map(remote_partition));
    partitions.extend(
        metadata
            .problems
            .iter()
            .filter_map(|p| p.partition.as_ref().map(remote_partition)),
    );
    let empty = Vec::new();
    // Each wanted partition: its name, objects and segments by offset.
    let plan: Vec<PartitionPlan<'_>> = partitions
        .iter()
        .filter(|p| wanted(&p.topic))
        .map(|rp| {
            let tp = TopicIdPartition {
                topic_id: rp.topic_id.0,
                topic: rp.topic.clone(),
                partition: rp.partition,
            };
            let segments = metadata
                .partitions
                .get(&tp)
                .map(|p| p.by_offset())
                .unwrap_or_default();
            PartitionPlan {
                rp,
                name: partition_name(rp),
                objects: listing.partitions.get(rp).unwrap_or(&empty),
                segments,
                tp,
            }
        })
        .collect();
    let jobs = copied_jobs(&plan);
    let limit = options.max_decompressed_bytes;
    let work = |job: &SegmentJob<'_>| {
        let part = plan.get(job.partition);
        match part {
            Some(p) => SegmentCheck::run(tier, p.rp, &p.name, limit, job.state, job.objects),
            None => SegmentOutcome::default(),
        }
    };
    let threads = options.threads.max(1);
    crate::ordered::run(&jobs, threads, threads, &work, |next| -> Result<()> {
        for p in &plan {
            summary.partitions += 1;
            let before = summary.problems;
            let mut partition = PartitionCheck {
                tier,
                rp: p.rp,
                name: &p.name,
                summary: &mut summary,
                emit: &mut emit,
            };
            for m in metadata
                .problems
                .iter()
                .filter(|m| m.partition.as_ref() == Some(&p.tp))
            {
                partition.finding(
                    m.at.file.clone(),
                    Some(m.at.offset),
                    None,
                    Check::Metadata,
                    m.message.clone(),
                )?;
            }
            partition.check(&p.segments, p.objects, options.local_root, next)?;
            if summary.problems > before {
                summary.partitions_with_problems += 1;
            }
        }
        Ok(())
    })?;
    for key in &listing.unrecognized {
        emit(
            &mut summary,
            Event::Finding(Finding {
                partition: String::new(),
                object: key.clone(),
                offset: None,
                position: None,
                check: Check::Orphan,
                message: "an object under the prefix that is no segment's object".into(),
            }),
        )?;
    }
    Ok(summary)
}

/// Where a check's findings go, and what names them.
trait Findings<S: Storage> {
    /// The tier, the partition and its name.
    fn at(&self) -> (&RemoteTier<S>, &RemotePartition, &str);

    /// Reports one finding.
    fn push(&mut self, finding: Finding) -> Result<()>;

    /// Reports a finding of the partition.
    fn finding(
        &mut self,
        object: String,
        offset: Option<i64>,
        position: Option<u64>,
        check: Check,
        message: String,
    ) -> Result<()> {
        let partition = self.at().2.to_string();
        self.push(Finding {
            partition,
            object,
            offset,
            position,
            check,
            message,
        })
    }

    /// The key of one of the partition's objects.
    fn key(&self, start_offset: i64, id: [u8; 16], suffix: Suffix) -> ObjectKey {
        let (tier, rp, _) = self.at();
        object_key(tier, rp, start_offset, id, suffix)
    }
}

/// The key of a segment's object under the tier's prefix.
fn object_key<S: Storage>(
    tier: &RemoteTier<S>,
    rp: &RemotePartition,
    start_offset: i64,
    id: [u8; 16],
    suffix: Suffix,
) -> ObjectKey {
    ObjectKey {
        prefix: tier.prefix().to_string(),
        partition: rp.clone(),
        start_offset,
        segment_id: KafkaUuid(id),
        suffix,
    }
}

/// One partition [`verify`] checks.
struct PartitionPlan<'m> {
    rp: &'m RemotePartition,
    tp: TopicIdPartition,
    name: String,
    objects: &'m [RemoteSegment],
    segments: Vec<&'m SegmentState>,
}

/// The copied segments (COPY_SEGMENT_FINISHED) of every partition of `plan`, in the order
/// [`PartitionCheck::check`] reports them: partition by partition, by offset.
fn copied_jobs<'m>(plan: &[PartitionPlan<'m>]) -> Vec<SegmentJob<'m>> {
    let mut jobs = Vec::new();
    for (i, p) in plan.iter().enumerate() {
        let by_id: BTreeMap<KafkaUuid, &RemoteSegment> =
            p.objects.iter().map(|o| (o.segment_id, o)).collect();
        for s in &p.segments {
            if s.metadata.facts.state == RemoteLogSegmentState::CopySegmentFinished {
                jobs.push(SegmentJob {
                    partition: i,
                    state: s,
                    objects: by_id.get(&KafkaUuid(s.metadata.segment_id.id)).copied(),
                });
            }
        }
    }
    jobs
}

type Emit<'e> = dyn FnMut(&mut Summary, Event) -> Result<()> + 'e;

/// The checks of one partition.
struct PartitionCheck<'c, 'e, S> {
    tier: &'c RemoteTier<S>,
    rp: &'c RemotePartition,
    name: &'c str,
    summary: &'c mut Summary,
    emit: &'c mut Emit<'e>,
}

impl<S: Storage> Findings<S> for PartitionCheck<'_, '_, S> {
    fn at(&self) -> (&RemoteTier<S>, &RemotePartition, &str) {
        (self.tier, self.rp, self.name)
    }

    fn push(&mut self, finding: Finding) -> Result<()> {
        (self.emit)(self.summary, Event::Finding(finding))
    }
}

impl<S: Storage> PartitionCheck<'_, '_, S> {
    /// Checks the partition; its copied segments' outcomes, in offset order, come from `next`
    /// (see [`copied_jobs`]).
    fn check(
        &mut self,
        segments: &[&SegmentState],
        objects: &[RemoteSegment],
        local_root: Option<&Path>,
        next: &mut dyn FnMut() -> Option<SegmentOutcome>,
    ) -> Result<()> {
        let named: BTreeSet<KafkaUuid> = segments
            .iter()
            .map(|s| KafkaUuid(s.metadata.segment_id.id))
            .collect();
        let mut copied: Vec<&SegmentState> = Vec::new();
        for s in segments {
            let (m, id) = (&s.metadata.facts, s.metadata.segment_id.id);
            let key = self.key(m.start_offset, id, Suffix::Manifest);
            match m.state {
                RemoteLogSegmentState::CopySegmentStarted => self.finding(
                    key.to_string(),
                    Some(m.start_offset),
                    None,
                    Check::CopyUnfinished,
                    format!(
                        "segment {} (offsets {}..={}) is COPY_SEGMENT_STARTED (at {} offset {}) and its copy never finished",
                        key.segment_id, m.start_offset, m.end_offset, s.updated_at.file, s.updated_at.offset
                    ),
                )?,
                RemoteLogSegmentState::DeleteSegmentStarted => self.finding(
                    key.to_string(),
                    Some(m.start_offset),
                    None,
                    Check::DeleteUnfinished,
                    format!(
                        "segment {} (offsets {}..={}) is DELETE_SEGMENT_STARTED (at {} offset {}) and its deletion never finished",
                        key.segment_id, m.start_offset, m.end_offset, s.updated_at.file, s.updated_at.offset
                    ),
                )?,
                RemoteLogSegmentState::CopySegmentFinished => copied.push(s),
                RemoteLogSegmentState::DeleteSegmentFinished => {}
            }
        }
        for o in objects.iter().filter(|o| !named.contains(&o.segment_id)) {
            let first = o.objects.keys().next().copied().unwrap_or(Suffix::Manifest);
            let names: Vec<&str> = o.objects.keys().map(|s| s.as_str()).collect();
            self.finding(
                o.key(first),
                Some(o.start_offset),
                None,
                Check::Orphan,
                format!(
                    "segment {} ({}) is in the bucket but no metadata names it",
                    o.segment_id,
                    names.join(", ")
                ),
            )?;
        }
        // Consecutive copied segments.
        for w in copied.windows(2) {
            let (a, b) = (&w[0].metadata.facts, &w[1].metadata.facts);
            let (a_id, b_id) = (w[0].metadata.segment_id.id, w[1].metadata.segment_id.id);
            let key = self.key(b.start_offset, b_id, Suffix::Manifest).to_string();
            let next = a.end_offset.saturating_add(1);
            if b.start_offset > next {
                self.finding(
                    key,
                    Some(next),
                    None,
                    Check::Offsets,
                    format!(
                        "gap: offsets {next}..={} are in no remote segment (the previous one ends at {})",
                        b.start_offset - 1,
                        a.end_offset
                    ),
                )?;
            } else if b.start_offset < next {
                self.finding(
                    key,
                    Some(b.start_offset),
                    None,
                    Check::Offsets,
                    format!(
                        "overlap: the segment starts at {} but the previous one ({}) ends at {}",
                        b.start_offset,
                        KafkaUuid(a_id),
                        a.end_offset
                    ),
                )?;
            }
            let (last_a, first_b) = (
                a.segment_leader_epochs.keys().next_back(),
                b.segment_leader_epochs.keys().next(),
            );
            if let (Some(&ea), Some(&eb)) = (last_a, first_b) {
                if eb < ea {
                    let key = self.key(b.start_offset, b_id, Suffix::Manifest);
                    self.finding(
                        key.to_string(),
                        Some(b.start_offset),
                        None,
                        Check::Epoch,
                        format!("leader epoch goes backwards: the segment starts in epoch {eb}, the previous one ends in epoch {ea}"),
                    )?;
                }
            }
        }
        for s in &copied {
            self.epochs_within(s)?;
        }
        if let Some(root) = local_root {
            self.local(&copied, root)?;
        }
        for s in &copied {
            let Some(outcome) = next() else {
                return Err(Error::Io {
                    op: "check",
                    path: self.name.into(),
                    source: std::io::Error::other("a segment check stopped without a result"),
                });
            };
            self.emit_segment(s, outcome)?;
        }
        Ok(())
    }

    /// Reports one copied segment's outcome: its findings, then the segment.
    fn emit_segment(&mut self, s: &SegmentState, outcome: SegmentOutcome) -> Result<()> {
        let (m, id) = (&s.metadata.facts, s.metadata.segment_id.id);
        self.summary.segments += 1;
        self.summary.log.add(&outcome.log);
        let problems = outcome.findings.len() as u64;
        for f in outcome.findings {
            (self.emit)(self.summary, Event::Finding(f))?;
        }
        if problems == 0 {
            self.summary.intact += 1;
        }
        let object = self.key(m.start_offset, id, Suffix::Manifest).to_string();
        (self.emit)(
            self.summary,
            Event::Segment(SegmentReport {
                partition: self.name.to_string(),
                object,
                start_offset: m.start_offset,
                end_offset: m.end_offset,
                problems,
            }),
        )
    }

    /// A segment's leader epochs: start offsets increasing and within the segment.
    fn epochs_within(&mut self, s: &SegmentState) -> Result<()> {
        let (m, id) = (&s.metadata.facts, s.metadata.segment_id.id);
        let mut prev: Option<i64> = None;
        for (&epoch, &offset) in &m.segment_leader_epochs {
            let bad = offset < m.start_offset
                || offset > m.end_offset
                || prev.is_some_and(|p| offset < p);
            if bad {
                let key = self.key(m.start_offset, id, Suffix::Manifest);
                return self.finding(
                    key.to_string(),
                    Some(offset),
                    None,
                    Check::Epoch,
                    format!(
                        "leader epoch {epoch} starts at offset {offset}, outside the segment's {}..={} or before the previous epoch's start",
                        m.start_offset, m.end_offset
                    ),
                );
            }
            prev = Some(offset);
        }
        Ok(())
    }

    /// The remote tier against the local partition directory: no gap between them, and the
    /// leader epochs of both one lineage.
    fn local(&mut self, copied: &[&SegmentState], root: &Path) -> Result<()> {
        let dir = root.join(self.name);
        let Some(last) = copied.iter().max_by_key(|s| s.metadata.facts.end_offset) else {
            return Ok(());
        };
        let (m, id) = (&last.metadata.facts, last.metadata.segment_id.id);
        let key = self.key(m.start_offset, id, Suffix::Manifest).to_string();
        let mut bases: Vec<i64> = std::fs::read_dir(&dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter_map(|e| krecords_log::check::segment_base(&e.path()))
                    .collect()
            })
            .unwrap_or_default();
        bases.sort_unstable();
        if let Some(&local_start) = bases.first() {
            let next = m.end_offset.saturating_add(1);
            if local_start > next {
                self.finding(
                    key.clone(),
                    Some(next),
                    None,
                    Check::Offsets,
                    format!(
                        "gap between the tiers: the remote tier ends at {}, the local log {} starts at {local_start}",
                        m.end_offset,
                        dir.display()
                    ),
                )?;
            }
        }
        let checkpoint = dir.join(krecords_log::files::LEADER_EPOCH_CHECKPOINT_FILE);
        let Ok(bytes) = std::fs::read(&checkpoint) else {
            return Ok(());
        };
        // A malformed checkpoint is `krec verify` of the root's to report.
        let Ok(local) = krecords_log::files::parse_epoch_checkpoint(&checkpoint, &bytes) else {
            return Ok(());
        };
        let Some(&(first_epoch, first_start)) = local.first() else {
            return Ok(());
        };
        let cp = checkpoint.display().to_string();
        for s in copied {
            let (m, id) = (&s.metadata.facts, s.metadata.segment_id.id);
            let key = self.key(m.start_offset, id, Suffix::Manifest).to_string();
            // Each entry is the epoch of the segment's records from that offset on.
            for (&epoch, &start) in &m.segment_leader_epochs {
                let problem = if start < first_start {
                    // Below the local log: only the order of the epochs is known.
                    (epoch > first_epoch).then(|| format!(
                        "leader epoch {epoch} at offset {start} is above epoch {first_epoch}, which {cp} starts at the later offset {first_start}"
                    ))
                } else {
                    let local_epoch = local
                        .iter()
                        .take_while(|(_, s)| *s <= start)
                        .last()
                        .map(|(e, _)| *e);
                    (local_epoch != Some(epoch)).then(|| format!(
                        "offset {start} is in leader epoch {epoch} in the remote segment but in epoch {} in {cp}",
                        local_epoch.map_or_else(|| "none".to_string(), |e| e.to_string())
                    ))
                };
                if let Some(message) = problem {
                    self.finding(key.clone(), Some(start), None, Check::Epoch, message)?;
                }
            }
        }
        Ok(())
    }
}

/// The checks of one copied segment, run on a worker of [`verify`]: its findings are kept,
/// in the order found, until the segment's turn comes to be reported.
struct SegmentCheck<'c, S> {
    tier: &'c RemoteTier<S>,
    rp: &'c RemotePartition,
    name: &'c str,
    limit: usize,
    findings: Vec<Finding>,
    log: krecords_log::check::Summary,
}

/// What checking one copied segment found: its problems, in order, and what the log checks
/// read. Small: the segment's bytes are dropped before it is returned.
#[derive(Debug, Default)]
struct SegmentOutcome {
    findings: Vec<Finding>,
    log: krecords_log::check::Summary,
}

/// One copied segment to check: its partition (an index into the plan) and state, and its
/// objects as listed.
struct SegmentJob<'m> {
    partition: usize,
    state: &'m SegmentState,
    objects: Option<&'m RemoteSegment>,
}

impl<S: Storage> Findings<S> for SegmentCheck<'_, S> {
    fn at(&self) -> (&RemoteTier<S>, &RemotePartition, &str) {
        (self.tier, self.rp, self.name)
    }

    fn push(&mut self, finding: Finding) -> Result<()> {
        self.findings.push(finding);
        Ok(())
    }
}

impl<'c, S: Storage> SegmentCheck<'c, S> {
    /// Checks `s` (with its `objects`), as [`PartitionCheck`] would in line.
    fn run(
        tier: &'c RemoteTier<S>,
        rp: &'c RemotePartition,
        name: &'c str,
        limit: usize,
        s: &SegmentState,
        objects: Option<&RemoteSegment>,
    ) -> SegmentOutcome {
        let mut check = SegmentCheck {
            tier,
            rp,
            name,
            limit,
            findings: Vec::new(),
            log: krecords_log::check::Summary::default(),
        };
        // Its findings are kept, never written: pushing one cannot fail.
        let _kept = check.segment(s, objects);
        SegmentOutcome {
            findings: check.findings,
            log: check.log,
        }
    }

    /// One copied segment: its objects, manifest, data and indexes.
    fn segment(&mut self, s: &SegmentState, objects: Option<&RemoteSegment>) -> Result<()> {
        let (m, id) = (&s.metadata.facts, s.metadata.segment_id.id);
        let manifest_key = self.key(m.start_offset, id, Suffix::Manifest);
        let present: BTreeSet<Suffix> = objects
            .map(|o| o.objects.keys().copied().collect())
            .unwrap_or_default();
        let missing: Vec<Suffix> = Suffix::ALL
            .into_iter()
            .filter(|x| !present.contains(x))
            .collect();
        if let Some(&first) = missing.first() {
            let names: Vec<&str> = missing.iter().map(|x| x.as_str()).collect();
            self.finding(
                manifest_key.with_suffix(first).to_string(),
                Some(m.start_offset),
                None,
                Check::Missing,
                format!(
                    "segment {} (offsets {}..={}) is COPY_SEGMENT_FINISHED but the bucket lacks its {}",
                    manifest_key.segment_id,
                    m.start_offset,
                    m.end_offset,
                    names.join(", ")
                ),
            )?;
            return Ok(());
        }
        if let Some(o) = objects {
            if o.start_offset != m.start_offset {
                self.finding(
                    o.key(Suffix::Manifest),
                    Some(m.start_offset),
                    None,
                    Check::Mismatch,
                    format!(
                        "the object name says start offset {}, the metadata {}",
                        o.start_offset, m.start_offset
                    ),
                )?;
                return Ok(());
            }
        }
        let segment = match self.tier.open_key(&manifest_key) {
            Ok(seg) => seg,
            Err(e) => {
                let (check, object) = match &e {
                    Error::Io { .. } | Error::NotFound { .. } => {
                        (Check::Io, manifest_key.to_string())
                    }
                    Error::IndexMismatch { key, .. } => (Check::Manifest, key.clone()),
                    _ => (Check::Manifest, manifest_key.to_string()),
                };
                self.finding(object, Some(m.start_offset), None, check, e.to_string())?;
                return Ok(());
            }
        };
        let man = segment.manifest();
        let original = segment.original_size();
        let mut mismatches = Vec::new();
        if let Some(r) = &man.remote_log_segment_metadata {
            if (r.start_offset, r.end_offset) != (m.start_offset, m.end_offset) {
                mismatches.push(format!(
                    "the manifest says offsets {}..={}, the metadata {}..={}",
                    r.start_offset, r.end_offset, m.start_offset, m.end_offset
                ));
            }
            if r.segment_id != KafkaUuid(id) {
                mismatches.push(format!(
                    "the manifest names segment {}, the metadata {}",
                    r.segment_id,
                    KafkaUuid(id)
                ));
            }
            if r.segment_leader_epochs != m.segment_leader_epochs {
                mismatches.push(format!(
                    "the manifest's leader epochs {:?} differ from the metadata's {:?}",
                    r.segment_leader_epochs, m.segment_leader_epochs
                ));
            }
        }
        if u64::try_from(m.segment_size_in_bytes).ok() != Some(original) {
            mismatches.push(format!(
                "the metadata says {} bytes, the manifest's chunk index {original}",
                m.segment_size_in_bytes
            ));
        }
        for message in mismatches {
            self.finding(
                manifest_key.to_string(),
                Some(m.start_offset),
                None,
                Check::Mismatch,
                message,
            )?;
        }
        let log_key = manifest_key.with_suffix(Suffix::Log).to_string();
        let index_key = manifest_key.with_suffix(Suffix::Indexes).to_string();
        let mut indexes: BTreeMap<IndexType, (String, Vec<u8>)> = BTreeMap::new();
        for (t, label) in [
            (IndexType::Offset, "offset index"),
            (IndexType::Timestamp, "time index"),
            (IndexType::Transaction, "transaction index"),
        ] {
            match segment.index(t) {
                Ok(Some(b)) => {
                    indexes.insert(t, (format!("{index_key} ({label})"), b));
                }
                Ok(None) => {}
                Err(e) => {
                    let check = match &e {
                        Error::Io { .. } | Error::NotFound { .. } => Check::Io,
                        _ => Check::Chunk,
                    };
                    self.finding(
                        format!("{index_key} ({label})"),
                        Some(m.start_offset),
                        None,
                        check,
                        e.to_string(),
                    )?;
                }
            }
        }
        let given = |t: IndexType| indexes.get(&t).map(|(n, b)| (n.as_str(), b.as_slice()));
        let mut problems: Vec<Problem> = Vec::new();
        let mut collect = |p: Problem| {
            problems.push(p);
            Ok(())
        };
        let mut checker = Checker::new(self.limit, &mut collect);
        let mut chain = None;
        // Streamed chunk by chunk: memory is a chunk and an entry, not the segment.
        let mut chunks = segment.chunks();
        let mut source = EntryStream::new(&mut chunks, Some(original));
        let checked = checker.segment_entries(
            &mut source,
            &log_key,
            m.start_offset,
            SegmentIndexBytes {
                offset: given(IndexType::Offset),
                time: given(IndexType::Timestamp),
                txn: given(IndexType::Transaction),
            },
            &mut chain,
        );
        let mut log_summary = checker.summary();
        drop(checker);
        log_summary.problems = 0; // counted as findings below
        self.log.add(&log_summary);
        // A chunk that did not fetch or decode ends the check there.
        let failed = match checked {
            Ok(()) => None,
            Err(CheckError::Io { error, what }) => Some(match ChunkReader::<S>::error_of(&error) {
                Some(e) => {
                    let (check, position) = match e {
                        Error::Io { .. } | Error::NotFound { .. } => (Check::Io, None),
                        Error::Decrypt { at, .. } | Error::Truncated { at, .. } => {
                            (Check::Chunk, Some(*at))
                        }
                        _ => (Check::Chunk, None),
                    };
                    (check, position, e.to_string())
                }
                None => (
                    Check::Log(ProblemKind::Io),
                    None,
                    format!("{what}: {error}"),
                ),
            }),
            Err(e) => Some((Check::Log(ProblemKind::Io), None, e.to_string())),
        };
        let clean = problems.is_empty() && failed.is_none();
        for p in problems {
            self.finding(
                p.file,
                Some(m.start_offset),
                p.position,
                Check::Log(p.kind),
                p.message,
            )?;
        }
        if let Some((check, position, message)) = failed {
            self.finding(
                log_key.clone(),
                Some(m.start_offset),
                position,
                check,
                message,
            )?;
        }
        if clean {
            if let Some(last) = chain {
                if last != m.end_offset {
                    self.finding(
                        log_key,
                        Some(m.start_offset),
                        None,
                        Check::Mismatch,
                        format!(
                            "the segment's last offset is {last}, the metadata says {}",
                            m.end_offset
                        ),
                    )?;
                }
            }
        }
        Ok(())
    }
}
