//! `__remote_log_metadata` read from a broker's partition directories and replayed as Kafka's
//! `RemotePartitionMetadataStore`/`RemoteLogMetadataCache` replay it, giving per partition the
//! segments the metadata says exist and their state.
//!
//! The records are decoded by [`krecords_topics::remote_log_metadata`] (the embedded Kafka
//! schemas: one wire parser). The rules, from Kafka's sources (`RemoteLogMetadataCache`,
//! `RemoteLogSegmentState.isValidTransition`, `RemotePartitionMetadataStore`,
//! `RemotePartitionMetadataEventHandler`):
//!
//! - a `RemoteLogSegmentMetadata` record must be in state COPY_SEGMENT_STARTED (Kafka throws
//!   otherwise) and is added unless a segment with its id is in another state (an invalid
//!   transition: Kafka logs it and drops the event);
//! - an update of a segment with no metadata is dropped (Kafka logs
//!   `RemoteResourceNotFoundException`); an update whose transition is invalid is dropped; an
//!   update to COPY_SEGMENT_STARTED is refused; DELETE_SEGMENT_FINISHED removes the segment;
//! - `RemotePartitionDeleteMetadata` in DELETE_PARTITION_FINISHED forgets the partition;
//! - a `RemoteLogSegmentMetadataSnapshot` record has no place in the topic (Kafka throws "is
//!   not supported").
//!
//! Each event Kafka drops or refuses is a [`MetadataProblem`]. Records are applied in the order
//! of their metadata partition's offsets; all events of one topic partition are in one metadata
//! partition (Kafka's `RemoteLogMetadataTopicPartitioner`).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use krecords_log::check::{EntrySource, EntryStream, Next};
use krecords_log::data_dir;
use krecords_topics::remote_log_metadata::{
    decode, RemoteLogMetadataRecord, RemoteLogSegmentMetadata, RemoteLogSegmentState,
    RemotePartitionDeleteState, TopicIdPartition,
};

/// The metadata topic's name.
pub const TOPIC: &str = "__remote_log_metadata";

/// Where an event was read: a segment file of the metadata topic and the record's offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventAt {
    /// The segment file (or another name of the source).
    pub file: String,
    /// The record's offset in its metadata partition.
    pub offset: i64,
}

/// One decoded record of the metadata topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataEvent {
    /// Where it was read.
    pub at: EventAt,
    /// The record.
    pub record: RemoteLogMetadataRecord,
}

/// A record that could not be read or that Kafka would drop or refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataProblem {
    /// Where it was read.
    pub at: EventAt,
    /// The partition it is about, when known.
    pub partition: Option<TopicIdPartition>,
    /// What is wrong.
    pub message: String,
}

/// The records of the metadata topic's partitions, in each partition's offset order, and the
/// records that could not be decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataLog {
    /// Every decoded record.
    pub events: Vec<MetadataEvent>,
    /// Records (or entries) that could not be read.
    pub problems: Vec<MetadataProblem>,
    /// The partition directories read.
    pub dirs: Vec<PathBuf>,
}

impl MetadataLog {
    /// Reads `path`: a `__remote_log_metadata-N` partition directory, or a broker's data
    /// directory holding some (each read in partition order). Entries that fail their checks
    /// end the reading of their segment with a problem (`krec verify` of the root reports
    /// them in detail); control batches are skipped.
    ///
    /// # Errors
    ///
    /// A directory or file cannot be listed or read; `path` holds no metadata partition
    /// ([`io::ErrorKind::NotFound`]).
    pub fn read(path: &Path, max_decompressed_bytes: usize) -> io::Result<MetadataLog> {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let dirs: Vec<PathBuf> = match data_dir::parse_partition_dir(name) {
            Some((TOPIC, _)) => vec![path.to_path_buf()],
            _ => data_dir::partition_dirs(path)?
                .into_iter()
                .filter(|p| p.topic == TOPIC)
                .map(|p| p.path)
                .collect(),
        };
        if dirs.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: no {TOPIC}-N partition directory", path.display()),
            ));
        }
        let mut log = MetadataLog::default();
        for dir in &dirs {
            log.read_dir(dir, max_decompressed_bytes)?;
        }
        log.dirs = dirs;
        Ok(log)
    }

    fn read_dir(&mut self, dir: &Path, limit: usize) -> io::Result<()> {
        let mut segments: Vec<(i64, PathBuf)> = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if let Some(base) = krecords_log::check::segment_base(&path) {
                segments.push((base, path));
            }
        }
        segments.sort();
        for (_, path) in segments {
            let mut stream = EntryStream::open_file(&path, None)?;
            self.read_entries(&mut stream, &path.display().to_string(), limit)?;
        }
        Ok(())
    }

    /// Reads the records of one source of entries named `file`.
    ///
    /// # Errors
    ///
    /// The source's I/O error.
    pub fn read_entries(
        &mut self,
        source: &mut dyn EntrySource,
        file: &str,
        limit: usize,
    ) -> io::Result<()> {
        let mut scratch = Vec::new();
        loop {
            let position = source.position();
            let problem = |offset: i64, message: String| MetadataProblem {
                at: EventAt {
                    file: file.to_string(),
                    offset,
                },
                partition: None,
                message,
            };
            let batch = match source.next_entry()? {
                Next::End => return Ok(()),
                Next::Partial(_) => return Ok(()), // a torn tail: not yet written
                Next::Error(e) => {
                    self.problems
                        .push(problem(-1, format!("entry at byte {position}: {e}")));
                    return Ok(());
                }
                Next::Entry(b) => b,
            };
            if batch.is_control() {
                continue;
            }
            if let Err(e) = batch.validate() {
                self.problems
                    .push(problem(batch.last_offset(), format!("entry: {e}")));
                return Ok(());
            }
            let records = match batch.records(&mut scratch, limit) {
                Ok(r) => r,
                Err(e) => {
                    self.problems
                        .push(problem(batch.last_offset(), format!("entry: {e}")));
                    continue;
                }
            };
            for record in records {
                let record = match record {
                    Ok(r) => r,
                    Err(e) => {
                        self.problems
                            .push(problem(batch.last_offset(), format!("record: {e}")));
                        break;
                    }
                };
                let offset = record.offset();
                let Some(value) = record.value() else {
                    continue; // Kafka's ConsumerTask skips records without a value
                };
                match decode(value) {
                    Ok(record) => self.events.push(MetadataEvent {
                        at: EventAt {
                            file: file.to_string(),
                            offset,
                        },
                        record,
                    }),
                    Err(e) => self.problems.push(problem(offset, e)),
                }
            }
        }
    }
}

/// A segment as the replayed metadata holds it: its latest metadata (state, custom metadata,
/// event time and broker updated by the updates applied) and where its events were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentState {
    /// The metadata, with the updates applied (`createWithUpdates`).
    pub metadata: RemoteLogSegmentMetadata,
    /// Where the segment's first record was read.
    pub added_at: EventAt,
    /// Where its latest applied event was read.
    pub updated_at: EventAt,
}

/// One partition's replayed metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionMetadata {
    /// The segments by id, in any state but DELETE_SEGMENT_FINISHED (those are removed).
    pub segments: BTreeMap<[u8; 16], SegmentState>,
    /// The partition's deletion state, when a `RemotePartitionDeleteMetadata` was read.
    pub delete_state: Option<RemotePartitionDeleteState>,
}

impl PartitionMetadata {
    /// The segments, sorted by start offset (then id).
    pub fn by_offset(&self) -> Vec<&SegmentState> {
        let mut v: Vec<&SegmentState> = self.segments.values().collect();
        v.sort_by_key(|s| (s.metadata.facts.start_offset, s.metadata.segment_id.id));
        v
    }
}

/// The state Kafka's metadata cache reaches by replaying the events, and every event it drops
/// or refuses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataCache {
    /// Each partition's segments.
    pub partitions: BTreeMap<TopicIdPartition, PartitionMetadata>,
    /// Events Kafka would drop or refuse, in the order applied.
    pub problems: Vec<MetadataProblem>,
}

impl MetadataCache {
    /// Replays `events` in order.
    pub fn replay<'e>(events: impl IntoIterator<Item = &'e MetadataEvent>) -> MetadataCache {
        let mut cache = MetadataCache::default();
        for e in events {
            cache.apply(e);
        }
        cache
    }

    /// Replays a metadata log's events; its read problems come first in
    /// [`MetadataCache::problems`].
    pub fn from_log(log: &MetadataLog) -> MetadataCache {
        let mut cache = MetadataCache {
            partitions: BTreeMap::new(),
            problems: log.problems.clone(),
        };
        for e in &log.events {
            cache.apply(e);
        }
        cache
    }

    fn problem(&mut self, at: &EventAt, partition: &TopicIdPartition, message: String) {
        self.problems.push(MetadataProblem {
            at: at.clone(),
            partition: Some(partition.clone()),
            message,
        });
    }

    /// Applies one event.
    pub fn apply(&mut self, event: &MetadataEvent) {
        let at = &event.at;
        match &event.record {
            RemoteLogMetadataRecord::Segment(m) => {
                let tp = &m.segment_id.partition;
                if m.facts.state != RemoteLogSegmentState::CopySegmentStarted {
                    return self.problem(at, tp, format!(
                        "segment {} is added in state {} (a segment's first record must be COPY_SEGMENT_STARTED)",
                        m.segment_id.id_string(), m.facts.state
                    ));
                }
                let part = self.partitions.entry(tp.clone()).or_default();
                let existing = part
                    .segments
                    .get(&m.segment_id.id)
                    .map(|s| s.metadata.facts.state);
                if !RemoteLogSegmentState::is_valid_transition(existing, m.facts.state) {
                    let from = existing.map_or("none", RemoteLogSegmentState::name);
                    return self.problem(
                        at,
                        tp,
                        format!(
                            "segment {}: invalid transition {from} -> {} (Kafka drops the event)",
                            m.segment_id.id_string(),
                            m.facts.state
                        ),
                    );
                }
                let added_at = part
                    .segments
                    .get(&m.segment_id.id)
                    .map_or_else(|| at.clone(), |s| s.added_at.clone());
                part.segments.insert(
                    m.segment_id.id,
                    SegmentState {
                        metadata: m.clone(),
                        added_at,
                        updated_at: at.clone(),
                    },
                );
            }
            RemoteLogMetadataRecord::Update(u) => {
                let tp = &u.segment_id.partition;
                let id = u.segment_id.id_string();
                let Some(seg) = self
                    .partitions
                    .get_mut(tp)
                    .and_then(|p| p.segments.get_mut(&u.segment_id.id))
                else {
                    return self.problem(
                        at,
                        tp,
                        format!(
                            "update to {} of segment {id}, which has no metadata (Kafka drops it)",
                            u.state
                        ),
                    );
                };
                let from = seg.metadata.facts.state;
                if !RemoteLogSegmentState::is_valid_transition(Some(from), u.state) {
                    return self.problem(
                        at,
                        tp,
                        format!(
                            "segment {id}: invalid transition {from} -> {} (Kafka drops the event)",
                            u.state
                        ),
                    );
                }
                if u.state == RemoteLogSegmentState::CopySegmentStarted
                    && from != RemoteLogSegmentState::CopySegmentStarted
                {
                    return self.problem(
                        at,
                        tp,
                        format!("segment {id}: an update to COPY_SEGMENT_STARTED"),
                    );
                }
                if u.state == RemoteLogSegmentState::DeleteSegmentFinished {
                    if let Some(p) = self.partitions.get_mut(tp) {
                        p.segments.remove(&u.segment_id.id);
                    }
                    return;
                }
                seg.metadata.facts.state = u.state;
                seg.metadata.facts.event_timestamp_ms = u.event_timestamp_ms;
                seg.metadata.facts.broker_id = u.broker_id;
                if u.custom_metadata.is_some() {
                    seg.metadata
                        .facts
                        .custom_metadata
                        .clone_from(&u.custom_metadata);
                }
                seg.updated_at = at.clone();
            }
            RemoteLogMetadataRecord::PartitionDelete(d) => {
                if d.state == RemotePartitionDeleteState::DeletePartitionFinished {
                    self.partitions.remove(&d.partition);
                } else {
                    self.partitions
                        .entry(d.partition.clone())
                        .or_default()
                        .delete_state = Some(d.state);
                }
            }
            RemoteLogMetadataRecord::Snapshot(s) => {
                self.problems.push(MetadataProblem {
                    at: at.clone(),
                    partition: None,
                    message: format!(
                        "a RemoteLogSegmentMetadataSnapshot record (segment {}) in the topic: Kafka refuses it (\"is not supported\")",
                        crate::key::KafkaUuid(s.segment_id)
                    ),
                });
            }
        }
    }
}
