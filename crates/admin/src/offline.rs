//! A stopped broker's view of the cluster, from its `log.dirs` root: the KRaft metadata log
//! (`__cluster_metadata-0`: the newest snapshot, then the log after it) replayed as the
//! broker's metadata cache replays it, and the partition directories this disk holds.
//!
//! Every file is untrusted: entries are read through the codec's checked readers (bounded
//! window, decompression limit), records decoded by krecords-topics (lengths checked before any
//! allocation), and a record that does not decode is skipped with a warning.

use crate::model::{Broker, Cluster, Offsets, Partition, Topic, INTERNAL_TOPICS};
use crate::Error;
use krecords_codec::read::{Fill, ReadFill, Step, Streamer};
use krecords_source::{ErrorClass, IsolationLevel, Sources};
use krecords_topics::{parse, Kind, Node};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The metadata log's partition directory in a broker's root.
pub const METADATA_DIR: &str = "__cluster_metadata-0";

/// Warnings kept at most: a damaged log does not fill memory with them.
const MAX_WARNINGS: usize = 100;

/// A partition as the metadata log describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PartState {
    leader: i32,
    leader_epoch: i32,
    replicas: Vec<i32>,
    isr: Vec<i32>,
}

/// The replayed state of the metadata log.
#[derive(Debug, Clone, Default)]
pub struct MetadataState {
    /// Topic id (as Kafka prints it) → name.
    topics: HashMap<String, String>,
    /// (topic id, partition) → state.
    partitions: BTreeMap<(String, i32), PartState>,
    brokers: BTreeMap<i32, Broker>,
    /// The KRaft quorum's last leader (LeaderChange control records).
    controller: Option<i32>,
    /// The state before the open metadata transaction (BEGIN_TRANSACTION_RECORD), restored
    /// on ABORT_TRANSACTION_RECORD.
    before_txn: Option<Box<MetadataState>>,
    /// Records and entries that could not be read.
    warnings: Vec<String>,
    /// Records applied.
    records: u64,
}

fn ints(n: Option<&Node>) -> Option<Vec<i32>> {
    match n? {
        Node::Arr(a) => a
            .iter()
            .map(|v| v.as_int().and_then(|i| i32::try_from(i).ok()))
            .collect(),
        _ => None,
    }
}

fn int(n: Option<&Node>) -> Option<i32> {
    n?.as_int().and_then(|i| i32::try_from(i).ok())
}

fn text(n: Option<&Node>) -> Option<String> {
    n?.as_str().map(str::to_owned)
}

impl MetadataState {
    /// Applies one decoded metadata record (`{"type":..,"version":..,"data":{..}}`).
    pub fn apply(&mut self, record: &Node) {
        let (Some(kind), Some(data)) = (
            record.get("type").and_then(Node::as_str),
            record.get("data"),
        ) else {
            return;
        };
        self.records = self.records.saturating_add(1);
        let topic_part = || Some((text(data.get("topicId"))?, int(data.get("partitionId"))?));
        match kind {
            "TOPIC_RECORD" => {
                if let (Some(id), Some(name)) = (text(data.get("topicId")), text(data.get("name")))
                {
                    self.topics.insert(id, name);
                }
            }
            "REMOVE_TOPIC_RECORD" => {
                if let Some(id) = text(data.get("topicId")) {
                    self.topics.remove(&id);
                    self.partitions.retain(|(t, _), _| *t != id);
                }
            }
            "PARTITION_RECORD" => {
                if let Some(key) = topic_part() {
                    let p = PartState {
                        leader: int(data.get("leader")).unwrap_or(-1),
                        leader_epoch: int(data.get("leaderEpoch")).unwrap_or(-1),
                        replicas: ints(data.get("replicas")).unwrap_or_default(),
                        isr: ints(data.get("isr")).unwrap_or_default(),
                    };
                    self.partitions.insert(key, p);
                }
            }
            "PARTITION_CHANGE_RECORD" => {
                let Some(p) = topic_part().and_then(|k| self.partitions.get_mut(&k)) else {
                    return;
                };
                if let Some(isr) = ints(data.get("isr")) {
                    p.isr = isr;
                }
                if let Some(replicas) = ints(data.get("replicas")) {
                    p.replicas = replicas;
                }
                // -2: the leader did not change; a change of leader (even to none) is a new
                // leader epoch, as the controller counts it.
                match int(data.get("leader")) {
                    Some(-2) | None => {}
                    Some(l) => {
                        p.leader = l;
                        p.leader_epoch = p.leader_epoch.saturating_add(1);
                    }
                }
            }
            "REGISTER_BROKER_RECORD" => {
                let Some(id) = int(data.get("brokerId")) else {
                    return;
                };
                let first = match data.get("endPoints") {
                    Some(Node::Arr(e)) => e.first(),
                    _ => None,
                };
                self.brokers.insert(
                    id,
                    Broker {
                        node_id: id,
                        host: text(first.and_then(|e| e.get("host"))).unwrap_or_default(),
                        port: first
                            .and_then(|e| e.get("port"))
                            .and_then(Node::as_int)
                            .and_then(|p| u16::try_from(p).ok())
                            .unwrap_or(0),
                        rack: text(data.get("rack")),
                        fenced: Some(matches!(data.get("fenced"), Some(Node::Bool(true)))),
                    },
                );
            }
            "UNREGISTER_BROKER_RECORD" => {
                if let Some(id) = int(data.get("brokerId")) {
                    self.brokers.remove(&id);
                }
            }
            "FENCE_BROKER_RECORD" | "UNFENCE_BROKER_RECORD" => {
                if let Some(b) = int(data.get("id")).and_then(|id| self.brokers.get_mut(&id)) {
                    b.fenced = Some(kind == "FENCE_BROKER_RECORD");
                }
            }
            "BROKER_REGISTRATION_CHANGE_RECORD" => {
                let b = int(data.get("brokerId")).and_then(|id| self.brokers.get_mut(&id));
                match (b, int(data.get("fenced"))) {
                    (Some(b), Some(1)) => b.fenced = Some(true),
                    (Some(b), Some(-1)) => b.fenced = Some(false),
                    _ => {}
                }
            }
            "BEGIN_TRANSACTION_RECORD" => {
                let mut saved = self.clone();
                saved.before_txn = None;
                self.before_txn = Some(Box::new(saved));
            }
            "END_TRANSACTION_RECORD" => self.before_txn = None,
            "ABORT_TRANSACTION_RECORD" => {
                if let Some(saved) = self.before_txn.take() {
                    let (warnings, records, controller) = (
                        std::mem::take(&mut self.warnings),
                        self.records,
                        self.controller,
                    );
                    *self = *saved;
                    self.warnings = warnings;
                    self.records = records;
                    self.controller = controller;
                }
            }
            _ => {}
        }
    }

    /// Reads the entries of one metadata file (a segment or a `.checkpoint` snapshot),
    /// applying the records at offsets `from` and after.
    ///
    /// # Errors
    ///
    /// The file cannot be opened or read.
    pub fn replay_file(&mut self, path: &Path, from: i64) -> Result<(), Error> {
        let io = |e| Error::io(format!("cannot read {}", path.display()), e);
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let stream = Streamer::new(ReadFill::with_len(file, len), 0, i32::MAX as usize);
        self.replay(&path.display().to_string(), stream, from)
            .map_err(io)
    }

    /// Reads the entries of metadata log bytes (a segment's or a snapshot's), named `name` in
    /// warnings, applying the records at offsets `from` and after. Any bytes are accepted:
    /// what does not parse ends the replay with a warning.
    pub fn replay_bytes(&mut self, name: &str, bytes: &[u8], from: i64) {
        // A slice's reads cannot fail.
        let _ = self.replay(name, Streamer::new(bytes, 0, i32::MAX as usize), from);
    }

    fn replay<F: Fill>(
        &mut self,
        name: &str,
        mut stream: Streamer<F>,
        from: i64,
    ) -> std::io::Result<()> {
        let mut scratch = Vec::new();
        loop {
            let batch = match stream.next_entry()? {
                Step::Entry(b) => b,
                Step::End => break,
                // The active segment of a stopped broker may end inside an entry.
                Step::Partial(_) => {
                    self.warn(format!("{name}: a truncated entry at its end was left out"));
                    break;
                }
                Step::Error(e) => {
                    self.warn(format!("{name}: stopped at an unreadable entry: {e}"));
                    break;
                }
            };
            let control = batch.is_control();
            let records = match batch
                .checked_records(&mut scratch, krecords_codec::DEFAULT_DECOMPRESS_LIMIT)
            {
                Ok(r) => r,
                Err(e) => {
                    self.warn(format!(
                        "{name}: the entry at offset {} cannot be read: {e}",
                        batch.offset_field()
                    ));
                    continue;
                }
            };
            for record in records {
                let record = match record {
                    Ok(r) => r,
                    Err(e) => {
                        self.warn(format!("{name}: a record cannot be read: {e}"));
                        break;
                    }
                };
                if record.offset() < from {
                    continue;
                }
                if control {
                    self.control(record.key(), record.value());
                    continue;
                }
                let parsed = parse(
                    Kind::Metadata,
                    record.key(),
                    record.value(),
                    record.offset(),
                );
                match parsed.payload.as_ref().and_then(|p| p.node()) {
                    Some(node) => self.apply(node),
                    None => self.warn(format!(
                        "{name}: offset {}: {}",
                        record.offset(),
                        parsed.payload.map(|p| p.to_java()).unwrap_or_default()
                    )),
                }
            }
        }
        Ok(())
    }

    /// Keeps a warning; past [`MAX_WARNINGS`], only counts it in the last one.
    fn warn(&mut self, w: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(w);
        } else if let Some(last) = self.warnings.last_mut() {
            *last = "more records could not be read (warnings stop here)".to_owned();
        }
    }

    /// A control record: LeaderChange (type 2) names the quorum's leader, the controller.
    fn control(&mut self, key: Option<&[u8]>, value: Option<&[u8]>) {
        let ty = key
            .and_then(|k| k.get(2..4))
            .and_then(|b| <[u8; 2]>::try_from(b).ok())
            .map(i16::from_be_bytes);
        // LeaderChangeMessage: int16 version, then int32 LeaderId.
        let leader = value
            .and_then(|v| v.get(2..6))
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(i32::from_be_bytes);
        if let (Some(2), Some(l)) = (ty, leader) {
            self.controller = (l >= 0).then_some(l);
        }
    }

    /// Replays a metadata partition directory: the newest `.checkpoint` snapshot, then the
    /// segments' records after it.
    ///
    /// # Errors
    ///
    /// The directory or a file cannot be read.
    pub fn replay_dir(&mut self, dir: &Path) -> Result<(), Error> {
        let io = |e| Error::io(format!("cannot list {}", dir.display()), e);
        let mut snapshots: Vec<(i64, PathBuf)> = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if let Some(stem) = name.strip_suffix(".checkpoint") {
                if let Some(Ok(end)) = stem.split('-').next().map(str::parse::<i64>) {
                    snapshots.push((end, path.clone()));
                }
            }
        }
        snapshots.sort();
        let from = match snapshots.last() {
            Some((end, path)) => {
                self.replay_file(path, 0)?;
                *end
            }
            None => 0,
        };
        let logs = krecords_source::dir_logs(dir).map_err(io)?;
        for log in logs {
            self.replay_file(&log, from)?;
        }
        Ok(())
    }

    /// The cluster this state describes, for `source`.
    pub fn into_cluster(self, source: String) -> Cluster {
        let live_brokers: BTreeSet<i32> = self
            .brokers
            .values()
            .filter(|b| b.fenced != Some(true))
            .map(|b| b.node_id)
            .collect();
        let mut topics: BTreeMap<String, Topic> = BTreeMap::new();
        for ((id, index), p) in self.partitions {
            let Some(name) = self.topics.get(&id) else {
                continue;
            };
            let topic = topics.entry(name.clone()).or_insert_with(|| Topic {
                name: name.clone(),
                id: Some(id.clone()),
                internal: INTERNAL_TOPICS.contains(&name.as_str()),
                error: None,
                partitions: Vec::new(),
            });
            topic.partitions.push(Partition {
                partition: index,
                leader: p.leader,
                leader_epoch: p.leader_epoch,
                offline_replicas: p
                    .replicas
                    .iter()
                    .copied()
                    .filter(|r| !live_brokers.contains(r))
                    .collect(),
                replicas: p.replicas,
                isr: p.isr,
                error: None,
                error_label: None,
                on_disk: None,
                offsets: None,
            });
        }
        for t in topics.values_mut() {
            t.partitions.sort_by_key(|p| p.partition);
        }
        Cluster {
            unanswered: None,
            source,
            live: false,
            cluster_id: None,
            controller: self.controller,
            brokers: self.brokers.into_values().collect(),
            topics: topics.into_values().collect(),
            warnings: self.warnings,
        }
    }
}

/// `key=value` of a Java properties file (`meta.properties`).
fn property(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().to_owned())
    })
}

/// What a directory given as a stopped broker's disk names: a `log.dirs` root, or one
/// partition directory of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootPath {
    /// The `log.dirs` root: the directory itself, or the one around a partition directory.
    pub root: PathBuf,
    /// The topic and partition, when the directory is one partition's (`TOPIC-N` with
    /// segments).
    pub partition: Option<(String, i32)>,
}

/// What `path` names: a broker's `log.dirs` root (`meta.properties` or `TOPIC-N` partition
/// directories), or a `TOPIC-N` partition directory, which stands for that partition of the
/// root around it.
///
/// # Errors
///
/// [`Error::Usage`] for a path that is not a directory, a partition directory whose name is
/// not `TOPIC-N`, or a directory that is neither a root nor a partition's; a directory that
/// cannot be listed.
pub fn root_of(path: &Path) -> Result<RootPath, Error> {
    let expected = "expected a broker's log.dirs root, one of its TOPIC-N partition \
                    directories, or kafka://HOST:PORT";
    if !path.is_dir() {
        let what = match path.try_exists() {
            Ok(false) => "no such file or directory",
            _ => "not a directory",
        };
        return Err(Error::Usage(format!(
            "{}: {what} ({expected})",
            path.display()
        )));
    }
    let kind = krecords_source::classify_dir(path)
        .map_err(|e| Error::io(format!("cannot list {}", path.display()), e))?;
    // A directory above a root (a broker's home around its `logs`): the root is the answer.
    let not_a_partition = !matches!(kind, krecords_source::DirKind::Root(_))
        && krecords_source::partition_of_dir(path).is_none();
    if let Some(sub) = root_below(path).filter(|_| not_a_partition) {
        return Err(Error::Usage(format!(
            "{}: not a broker's log.dirs root, but its subdirectory {} is one (it holds \
             meta.properties or TOPIC-N partition directories): give that",
            path.display(),
            sub.display()
        )));
    }
    match kind {
        krecords_source::DirKind::Root(_) => Ok(RootPath {
            root: path.to_path_buf(),
            partition: None,
        }),
        krecords_source::DirKind::Partition => match krecords_source::partition_of_dir(path) {
            Some(id) => {
                let root = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                Ok(RootPath {
                    root,
                    partition: Some(id),
                })
            }
            None => Err(Error::Usage(format!(
                "{}: a partition directory whose name is not TOPIC-N, so it names no topic \
                 ({expected}; `krec dump --start earliest` and `krec log` read any partition \
                 directory)",
                path.display()
            ))),
        },
        krecords_source::DirKind::Other => Err(Error::Usage(format!(
            "{}: holds neither meta.properties nor TOPIC-N partition directories nor segments \
             ({expected})",
            path.display()
        ))),
    }
}

/// The first subdirectory of `dir` (by name) that is a broker's `log.dirs` root.
fn root_below(dir: &Path) -> Option<PathBuf> {
    let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    subs.into_iter().find(|p| {
        matches!(
            krecords_source::classify_dir(p),
            Ok(krecords_source::DirKind::Root(_))
        )
    })
}

/// The cluster as a stopped broker's `log.dirs` root describes it: the metadata log's last
/// state (when the root holds `__cluster_metadata-0`), the cluster id of `meta.properties`,
/// and which partitions this disk holds (`on_disk`); partitions on disk that the metadata does
/// not name (a ZooKeeper-era broker, a deleted topic's leftovers) are listed with no leader.
/// `path` may also be one partition directory of the root ([`root_of`]): the root is
/// described with that partition only.
///
/// # Errors
///
/// As [`root_of`]; the metadata files cannot be read.
pub fn describe_root(path: &Path) -> Result<Cluster, Error> {
    let RootPath { root, partition } = root_of(path)?;
    let mut cluster = describe_dir(&root)?;
    if let Some((topic, partition)) = partition {
        // Named as given (its root may be `.`).
        cluster.source = path.display().to_string();
        cluster.topics.retain(|t| t.name == topic);
        for t in &mut cluster.topics {
            t.partitions.retain(|p| p.partition == partition);
        }
    }
    Ok(cluster)
}

/// The cluster as `krec metadata` and `krec offsets` show it from a stopped broker's disk:
/// [`describe_root`] of `path`, narrowed by [`Cluster::retain_topics`] to the topics matching
/// the globs `topics` (internal ones only with `all` or a glob, or when `path` is one
/// partition directory: that partition, internal or not), and with `offsets` = `Some(time)`
/// the offsets of every partition on the disk ([`fill_offsets`], with the first offset at or
/// after `time` when given); `offsets` = `None` leaves them out.
///
/// # Errors
///
/// As [`describe_root`]; [`Error::Usage`]: a glob that does not parse, globs that match no
/// topic (naming the root's).
pub fn load(
    path: &Path,
    topics: &[String],
    all: bool,
    offsets: Option<Option<i64>>,
) -> Result<Cluster, Error> {
    let filter = crate::topic_filter(topics)?;
    let mut cluster = describe_root(path)?;
    // One partition directory named: that partition, internal or not.
    let one = root_of(path).is_ok_and(|r| r.partition.is_some());
    cluster
        .retain_topics(&filter, all || one)
        .map_err(Error::select)?;
    if let Some(time) = offsets {
        fill_offsets(&mut cluster, path, time);
    }
    Ok(cluster)
}

/// [`describe_root`] of a root.
fn describe_dir(root: &Path) -> Result<Cluster, Error> {
    let mut state = MetadataState::default();
    let meta_dir = root.join(METADATA_DIR);
    if meta_dir.is_dir() {
        state.replay_dir(&meta_dir)?;
    }
    let mut cluster = state.into_cluster(root.display().to_string());
    cluster.cluster_id = std::fs::read_to_string(root.join("meta.properties"))
        .ok()
        .and_then(|t| property(&t, "cluster.id"));
    let io = |e| Error::io(format!("cannot list {}", root.display()), e);
    let mut on_disk: BTreeMap<(String, i32), PathBuf> = BTreeMap::new();
    for entry in std::fs::read_dir(root).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if !path.is_dir() {
            continue;
        }
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Some((topic, partition)) = krecords_log::data_dir::parse_partition_dir(name) {
            if topic != "__cluster_metadata" {
                on_disk.insert((topic.to_owned(), partition), path.clone());
            }
        }
    }
    if meta_dir.is_dir() {
        for t in &mut cluster.topics {
            for p in &mut t.partitions {
                p.on_disk = Some(on_disk.contains_key(&(t.name.clone(), p.partition)));
            }
        }
    }
    for ((topic, partition), dir) in on_disk {
        let known = cluster
            .topics
            .iter()
            .find(|t| t.name == topic)
            .is_some_and(|t| t.partitions.iter().any(|p| p.partition == partition));
        if known {
            continue;
        }
        let index = match cluster.topics.iter().position(|t| t.name == topic) {
            Some(i) => i,
            None => {
                cluster.topics.push(Topic {
                    id: krecords_log::files::topic_id(&dir),
                    internal: INTERNAL_TOPICS.contains(&topic.as_str()),
                    error: meta_dir
                        .is_dir()
                        .then(|| "not in the metadata log (deleted?)".to_owned()),
                    name: topic,
                    partitions: Vec::new(),
                });
                cluster.topics.len().saturating_sub(1)
            }
        };
        if let Some(t) = cluster.topics.get_mut(index) {
            t.partitions.push(Partition {
                partition,
                leader: -1,
                leader_epoch: -1,
                replicas: Vec::new(),
                isr: Vec::new(),
                offline_replicas: Vec::new(),
                error: None,
                error_label: None,
                on_disk: Some(true),
                offsets: None,
            });
            t.partitions.sort_by_key(|p| p.partition);
        }
    }
    cluster.topics.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cluster)
}

/// What `krec metadata` says of a root (or a partition directory's root) without a metadata
/// log: [`describe_root`] then lists its partitions with leader -1, which means unknown there,
/// not offline. `None` when the root has one (or `path` is no root).
pub fn missing_metadata(path: &Path) -> Option<String> {
    let RootPath { root, partition } = root_of(path).ok()?;
    // A partition directory is named as given, with its root (which may be `.`).
    let here = match partition {
        Some(_) => format!(
            "{} (a partition directory of {})",
            path.display(),
            root.display()
        ),
        None => root.display().to_string(),
    };
    (!root.join(METADATA_DIR).is_dir()).then(|| {
        format!(
            "{here}: no {METADATA_DIR} here, so leaders, replicas and ISRs are unknown: the \
             partitions on this disk are listed with leader -1 (a KRaft broker keeps the \
             metadata log in metadata.log.dir, which may be another directory; a \
             ZooKeeper-era broker kept it in ZooKeeper)"
        )
    })
}

/// A partition directory's offsets from its files (the log's start, high watermark and last
/// stable offset; with `time`, the time index's first offset at or after it).
///
/// # Errors
///
/// The directory is not a readable log.
pub fn dir_offsets(dir: &Path, time: Option<i64>) -> Result<Option<Offsets>, Error> {
    let sources = Sources::open(&[dir.to_path_buf()], &mut || {
        Err(krecords_source::Error::Usage(
            "not a kafka:// source".into(),
        ))
    })?;
    let Some(w) = sources.watermarks(0)? else {
        return Ok(None);
    };
    let at_time = match time {
        Some(t) => sources.offset_for_time(0, t, IsolationLevel::ReadUncommitted)?,
        None => None,
    };
    Ok(Some(Offsets {
        earliest: w.log_start,
        latest: w.high_watermark,
        last_stable: w.last_stable,
        at_time,
    }))
}

/// Fills the offsets of every partition of `cluster` (described by [`describe_root`] of `path`)
/// whose directory is on this disk, under `path`'s root; a directory that cannot be read adds a
/// warning (the partition's [`Partition::error`](crate::Partition::error), with a word for a
/// table row: `damaged` data, `unreadable`, ...).
pub fn fill_offsets(cluster: &mut Cluster, path: &Path, time: Option<i64>) {
    let root = root_of(path).map_or_else(|_| path.to_path_buf(), |r| r.root);
    for t in &mut cluster.topics {
        for p in &mut t.partitions {
            if p.on_disk != Some(true) {
                continue;
            }
            let dir = root.join(format!("{}-{}", t.name, p.partition));
            // The error names the directory.
            match dir_offsets(&dir, time) {
                Ok(o) => p.offsets = o,
                Err(e) => {
                    // A directory without segments (or not a partition's) only warns.
                    let nothing_there = matches!(
                        &e,
                        Error::Source(krecords_source::Error::Io { source, .. })
                            if source.kind() == std::io::ErrorKind::NotFound
                    );
                    let class = e.class();
                    let worse = cluster
                        .unanswered
                        .is_none_or(|c| class.exit_code() > c.exit_code());
                    if class != ErrorClass::Usage && !nothing_there && worse {
                        cluster.unanswered = Some(class);
                    }
                    // The whole error is a warning; a table row says a word of it.
                    p.error_label = Some(match class {
                        ErrorClass::Data => "damaged",
                        _ if nothing_there => "no segments",
                        ErrorClass::Usage => "not a log",
                        ErrorClass::Io => "unreadable",
                    });
                    p.error = Some(e.to_string());
                    cluster.warnings.push(e.to_string());
                }
            }
        }
    }
}
