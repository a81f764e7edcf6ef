//! A Kafka broker's data directory (one of its `log.dirs`): the partition directories in it and
//! the files of the root itself.
//!
//! ```text
//! meta.properties                    version, node.id / broker.id, cluster.id, directory.id
//! recovery-point-offset-checkpoint   "0\n<count>\n<topic> <partition> <offset>\n..."
//! log-start-offset-checkpoint        the same format
//! replication-offset-checkpoint      the same format (high watermarks)
//! cleaner-offset-checkpoint          the same format (first dirty offsets of compacted logs)
//! .lock                              locked by the running broker
//! .kafka_cleanshutdown               present while the broker is stopped after a clean shutdown
//! <topic>-<partition>/               one partition directory each (see crate::files)
//! <topic>-<partition>.<id>-delete/   a deleted partition waiting for removal (not a partition)
//! <topic>-<partition>.<id>-future/   a partition being moved between log dirs (not a partition)
//! ```

use crate::storage::Storage;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The broker's identity file.
pub const META_PROPERTIES: &str = "meta.properties";
/// Recovery points per partition.
pub const RECOVERY_POINT_CHECKPOINT: &str = "recovery-point-offset-checkpoint";
/// Log start offsets per partition.
pub const LOG_START_OFFSET_CHECKPOINT: &str = "log-start-offset-checkpoint";
/// High watermarks per partition.
pub const REPLICATION_OFFSET_CHECKPOINT: &str = "replication-offset-checkpoint";
/// First dirty offsets of compacted partitions.
pub const CLEANER_OFFSET_CHECKPOINT: &str = "cleaner-offset-checkpoint";
/// Kafka's clean shutdown marker, written into each data directory when the broker has stopped
/// cleanly and deleted when it starts (`CleanShutdownFileHandler`).
pub const CLEAN_SHUTDOWN: &str = ".kafka_cleanshutdown";
/// The largest recovery-point checkpoint read (a line per partition: about a million
/// partitions); a larger one is not trusted.
const MAX_CHECKPOINT_BYTES: u64 = 64 << 20;
/// Every offset checkpoint file of a data directory.
pub const OFFSET_CHECKPOINTS: [&str; 4] = [
    RECOVERY_POINT_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    CLEANER_OFFSET_CHECKPOINT,
];

/// The topic and partition of a partition directory's name (`events-3` → `("events", 3)`),
/// `None` for anything else, Kafka's `-delete`, `-future` and `-stray` directories included.
///
/// # Examples
///
/// ```
/// use krecords_log::data_dir::parse_partition_dir;
/// assert_eq!(parse_partition_dir("__consumer_offsets-49"), Some(("__consumer_offsets", 49)));
/// assert_eq!(parse_partition_dir("my.topic-with-dashes-0"), Some(("my.topic-with-dashes", 0)));
/// assert_eq!(parse_partition_dir("events-0.9a8b7c-delete"), None);
/// assert_eq!(parse_partition_dir("meta.properties"), None);
/// ```
pub fn parse_partition_dir(name: &str) -> Option<(&str, i32)> {
    let (topic, partition) = name.rsplit_once('-')?;
    if topic.is_empty()
        || partition.is_empty()
        || partition.len() > 10
        || !partition.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((topic, partition.parse().ok()?))
}

/// One partition directory of a data directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PartitionDir {
    /// The topic.
    pub topic: String,
    /// The partition number.
    pub partition: i32,
    /// The directory.
    pub path: PathBuf,
}

impl PartitionDir {
    /// `topic-partition`, the directory's name.
    pub fn name(&self) -> String {
        format!("{}-{}", self.topic, self.partition)
    }

    /// The total size of the `.log` segment files in the directory (0 when it cannot be
    /// listed): how much a check of the partition reads, for progress.
    pub fn log_bytes(&self) -> u64 {
        std::fs::read_dir(&self.path).map_or(0, |entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| {
                    e.file_name()
                        .to_str()
                        .is_some_and(|n| n.ends_with(crate::files::LOG_SUFFIX))
                })
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
    }
}

/// The partition directories directly under `root`, by topic then partition number.
///
/// # Errors
///
/// I/O errors listing `root`.
pub fn partition_dirs(root: &Path) -> io::Result<Vec<PartitionDir>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Some((topic, partition)) = parse_partition_dir(&name) else {
            continue;
        };
        if entry.file_type()?.is_dir() {
            out.push(PartitionDir {
                topic: topic.to_owned(),
                partition,
                path: entry.path(),
            });
        }
    }
    out.sort();
    Ok(out)
}

/// What a broker's data directory `path` holds, for a command that takes one partition
/// directory and was given a root: "a broker's log.dirs root with 2 partitions (orders-0,
/// orders-1)" (at most a few named). `None` when `path` does not look like one
/// ([`is_data_dir`]).
pub fn root_summary(path: &Path) -> Option<String> {
    if !is_data_dir(path) {
        return None;
    }
    let parts = partition_dirs(path).unwrap_or_default();
    const NAMED: usize = 4;
    let mut names: Vec<String> = parts
        .iter()
        .take(NAMED)
        .map(|p| format!("{}-{}", p.topic, p.partition))
        .collect();
    if parts.len() > NAMED {
        names.push("...".into());
    }
    let n = parts.len();
    let s = if n == 1 { "" } else { "s" };
    let named = if names.is_empty() {
        String::new()
    } else {
        format!(" ({})", names.join(", "))
    };
    Some(format!(
        "a broker's log.dirs root with {n} partition{s}{named}"
    ))
}

/// Whether `path` looks like a broker's data directory: it has `meta.properties` or a partition
/// directory.
pub fn is_data_dir(path: &Path) -> bool {
    path.join(META_PROPERTIES).is_file() || partition_dirs(path).is_ok_and(|p| !p.is_empty())
}

/// Which partitions to take: those of topics matching one of some globs (`*`, `?`, `[...]`)
/// and with a given number, each condition only when given (the default takes every
/// partition). The one rule of `--topic` (and `--partition`) of every krec command that has
/// it: the partitions of a data directory ([`PartitionFilter::select`]), of the sources of a
/// read, of a cluster's answer ([`PartitionFilter::take`] and [`PartitionFilter::check`]). A
/// filter that takes nothing is an error naming it and listing the topics there are
/// ([`SelectError::NoMatch`]).
///
/// # Examples
///
/// ```
/// use krecords_log::data_dir::{PartitionFilter, SelectError};
///
/// let f = PartitionFilter::new(Some("orders*"), Some(1)).unwrap();
/// assert!(f.matches_topic("orders.eu") && !f.matches_topic("payments"));
/// assert!(!f.is_all() && PartitionFilter::default().is_all());
/// assert!(matches!(PartitionFilter::new(Some("[a"), None), Err(SelectError::Glob { .. })));
/// let f = PartitionFilter::globs(&["orders*", "payments"], None).unwrap();
/// assert!(f.matches_topic("payments") && f.matches_topic("orders") && !f.matches_topic("x"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionFilter {
    topics: Vec<glob::Pattern>,
    partition: Option<i32>,
}

/// What a [`PartitionFilter`] took of the partitions it was shown ([`PartitionFilter::take`]):
/// whether any, and the topics they belong to, which [`PartitionFilter::check`] lists when
/// it took none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Taken {
    any: bool,
    topics: BTreeSet<String>,
}

impl Taken {
    /// Whether some partition was taken.
    pub fn any(&self) -> bool {
        self.any
    }
}

/// The longest list of topics an error names (then how many more there are).
const LISTED_TOPICS: usize = 20;

impl PartitionFilter {
    /// The partitions of topics matching the glob `topic` (every topic when `None`) numbered
    /// `partition` (any number when `None`).
    ///
    /// # Errors
    ///
    /// [`SelectError::Glob`]: `topic` is not a valid glob.
    pub fn new(topic: Option<&str>, partition: Option<i32>) -> Result<Self, SelectError> {
        Self::globs(topic.as_slice(), partition)
    }

    /// The partitions of topics matching any of the globs `topics` (every topic when there is
    /// none) numbered `partition` (any number when `None`).
    ///
    /// # Errors
    ///
    /// [`SelectError::Glob`]: one of `topics` is not a valid glob.
    pub fn globs<S: AsRef<str>>(topics: &[S], partition: Option<i32>) -> Result<Self, SelectError> {
        let topics = topics
            .iter()
            .map(|glob| {
                let glob = glob.as_ref();
                glob::Pattern::new(glob).map_err(|error| SelectError::Glob {
                    glob: glob.to_owned(),
                    error,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(PartitionFilter { topics, partition })
    }

    /// Whether the filter takes every partition (neither a topic glob nor a number).
    pub fn is_all(&self) -> bool {
        self.topics.is_empty() && self.partition.is_none()
    }

    /// Whether a topic glob (if any) matches `topic`.
    pub fn matches_topic(&self, topic: &str) -> bool {
        self.topics.is_empty() || self.topics.iter().any(|g| g.matches(topic))
    }

    /// Whether the filter takes the partition directory `part`.
    pub fn matches(&self, part: &PartitionDir) -> bool {
        self.matches_topic(&part.topic) && self.partition.is_none_or(|n| n == part.partition)
    }

    /// Whether the filter takes partition `partition` of `topic`, noting it in `taken`. A
    /// source without a topic or number (a file outside a `TOPIC-N` directory, standard input)
    /// is taken only by a filter that takes everything.
    ///
    /// ```
    /// use krecords_log::data_dir::{PartitionFilter, Taken};
    ///
    /// let f = PartitionFilter::globs(&["a*"], None).unwrap();
    /// let mut taken = Taken::default();
    /// assert!(!f.take(&mut taken, None, None));
    /// assert!(!f.take(&mut taken, Some("b"), Some(0)));
    /// assert!(f.check(&taken, "root").is_err());
    /// assert!(f.take(&mut taken, Some("ab"), Some(0)));
    /// assert!(f.check(&taken, "root").is_ok() && taken.any());
    /// ```
    pub fn take(&self, taken: &mut Taken, topic: Option<&str>, partition: Option<i32>) -> bool {
        if let Some(t) = topic {
            if !taken.topics.contains(t) {
                taken.topics.insert(t.to_owned());
            }
        }
        let topic_ok = match topic {
            Some(t) => self.matches_topic(t),
            None => self.topics.is_empty(),
        };
        let yes = topic_ok && self.partition.is_none_or(|n| partition == Some(n));
        taken.any |= yes;
        yes
    }

    /// Nothing to say when the filter took something of `source` (or takes everything);
    /// otherwise [`SelectError::NoMatch`] naming `source`, the filter and the topics seen.
    ///
    /// # Errors
    ///
    /// [`SelectError::NoMatch`].
    pub fn check(&self, taken: &Taken, source: &str) -> Result<(), SelectError> {
        if taken.any || self.is_all() {
            return Ok(());
        }
        Err(SelectError::NoMatch {
            source: source.to_owned(),
            topics: self.topics.iter().map(|g| g.as_str().to_owned()).collect(),
            partition: self.partition,
            there: taken.topics.iter().cloned().collect(),
        })
    }

    /// The partition directories of the data directory `root` that the filter takes.
    ///
    /// # Errors
    ///
    /// [`SelectError::List`]: `root` cannot be listed; [`SelectError::Empty`]: the root has
    /// no partition directory; [`SelectError::NoMatch`]: the filter takes none of them.
    pub fn select(&self, root: &Path) -> Result<Selection, SelectError> {
        let mut taken = Taken::default();
        let selection = self.select_noting(root, &mut taken)?;
        self.check(&taken, &root.display().to_string())?;
        selection.ok_or_else(|| SelectError::Empty {
            root: root.to_path_buf(),
        })
    }

    /// [`PartitionFilter::select`] as one source of several: the partitions taken noted in
    /// `taken` (for [`PartitionFilter::check`] once every source is seen), `None` when the
    /// filter takes none of the root's partitions.
    ///
    /// # Errors
    ///
    /// [`SelectError::List`]: `root` cannot be listed; [`SelectError::Empty`]: the root has
    /// no partition directory.
    pub fn select_noting(
        &self,
        root: &Path,
        taken: &mut Taken,
    ) -> Result<Option<Selection>, SelectError> {
        let all = partition_dirs(root).map_err(|error| SelectError::List {
            root: root.to_path_buf(),
            error,
        })?;
        if all.is_empty() {
            return Err(SelectError::Empty {
                root: root.to_path_buf(),
            });
        }
        let chosen: Vec<PartitionDir> = all
            .iter()
            .filter(|p| self.take(taken, Some(&p.topic), Some(p.partition)))
            .cloned()
            .collect();
        Ok((!chosen.is_empty()).then(|| Selection {
            root: root.to_path_buf(),
            all,
            chosen,
            whole: self.is_all(),
        }))
    }
}

/// The partition directories of `root` of topics matching the glob `topic` and numbered
/// `partition` (each only when given): [`PartitionFilter::new`] then
/// [`PartitionFilter::select`].
///
/// # Examples
///
/// ```
/// use krecords_log::data_dir::{select_partitions, SelectError};
///
/// let root = tempfile::tempdir().unwrap();
/// for dir in ["orders-0", "orders-1", "payments-0"] {
///     std::fs::create_dir(root.path().join(dir)).unwrap();
/// }
/// let s = select_partitions(root.path(), Some("ord*"), Some(1)).unwrap();
/// assert_eq!(s.chosen.iter().map(|p| p.name()).collect::<Vec<_>>(), ["orders-1"]);
/// assert_eq!((s.all.len(), s.whole), (3, false));
/// let e = select_partitions(root.path(), Some("x*"), None).unwrap_err();
/// assert!(matches!(e, SelectError::NoMatch { .. }));
/// let said = "no partition of a topic matching \"x*\" (its topics: orders, payments)";
/// assert!(e.to_string().ends_with(said), "{e}");
/// ```
///
/// # Errors
///
/// As [`PartitionFilter::new`] and [`PartitionFilter::select`].
pub fn select_partitions(
    root: &Path,
    topic: Option<&str>,
    partition: Option<i32>,
) -> Result<Selection, SelectError> {
    PartitionFilter::new(topic, partition)?.select(root)
}

/// Partition directories of a data directory chosen by a [`PartitionFilter`] (what
/// [`crate::check::check_selection`] checks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The data directory.
    pub root: PathBuf,
    /// Every partition directory in it ([`partition_dirs`]), which the root's own files are
    /// checked against.
    pub all: Vec<PartitionDir>,
    /// Those chosen, in the same order; never empty.
    pub chosen: Vec<PartitionDir>,
    /// Whether the filter took every partition: only then are the root's own files
    /// (`meta.properties`, the offset checkpoints) checked, with the partitions' reports.
    pub whole: bool,
}

impl Selection {
    /// The total size of the chosen partitions' `.log` files ([`PartitionDir::log_bytes`]):
    /// how much a check of them reads, for progress.
    pub fn log_bytes(&self) -> u64 {
        self.chosen.iter().map(PartitionDir::log_bytes).sum()
    }
}

/// Why no [`Selection`] was made.
#[derive(Debug)]
pub enum SelectError {
    /// The topic glob does not parse.
    Glob {
        /// The glob as given.
        glob: String,
        /// What is wrong with it.
        error: glob::PatternError,
    },
    /// The data directory cannot be listed.
    List {
        /// The data directory.
        root: PathBuf,
        /// The error.
        error: io::Error,
    },
    /// The data directory has no partition directory.
    Empty {
        /// The data directory.
        root: PathBuf,
    },
    /// The filter takes no partition of a source that has some (a usage error: a topic
    /// misspelled, a number the topics do not have).
    NoMatch {
        /// The source: a data directory, the paths of a read, a cluster.
        source: String,
        /// The filter's topic globs.
        topics: Vec<String>,
        /// The filter's partition number.
        partition: Option<i32>,
        /// The topics the source has, sorted.
        there: Vec<String>,
    },
}

impl std::fmt::Display for SelectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SelectError::Glob { glob, error } => write!(f, "topic glob {glob:?}: {error}"),
            SelectError::List { root, error } => {
                write!(f, "cannot list {}: {error}", root.display())
            }
            SelectError::Empty { root } => {
                write!(f, "{}: no partition directories", root.display())
            }
            SelectError::NoMatch {
                source,
                topics,
                partition,
                there,
            } => {
                write!(f, "{source}: no partition")?;
                if let Some(n) = partition {
                    write!(f, " {n}")?;
                }
                if !topics.is_empty() {
                    let globs: Vec<String> = topics.iter().map(|g| format!("{g:?}")).collect();
                    write!(f, " of a topic matching {}", globs.join(" or "))?;
                }
                if there.is_empty() {
                    return write!(f, " (it has no topics)");
                }
                let listed = there.iter().take(LISTED_TOPICS).cloned();
                let mut list = listed.collect::<Vec<_>>().join(", ");
                if there.len() > LISTED_TOPICS {
                    list.push_str(&format!(" and {} more", there.len() - LISTED_TOPICS));
                }
                write!(f, " (its topics: {list})")
            }
        }
    }
}

impl std::error::Error for SelectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SelectError::Glob { error, .. } => Some(error),
            SelectError::List { error, .. } => Some(error),
            SelectError::Empty { .. } | SelectError::NoMatch { .. } => None,
        }
    }
}

/// What the data directory around a partition directory says about recovering it, as Kafka's
/// `LogManager` reads it at startup: which of the partition's segments a loader must scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RootRecovery {
    /// The broker stopped cleanly ([`CLEAN_SHUTDOWN`]): no segment is scanned.
    Clean,
    /// Segments from the one holding this offset on (the partition's line of
    /// [`RECOVERY_POINT_CHECKPOINT`]): everything below it was flushed.
    From(i64),
    /// No usable answer (not in a data directory, no checkpoint, no line for the partition, an
    /// unreadable or malformed file): every segment is scanned.
    Unknown,
}

/// Reads the root files of the data directory holding `partition_dir` (its parent) through
/// `storage`: the clean shutdown marker, else the partition's recovery point.
pub(crate) fn root_recovery(storage: &dyn Storage, partition_dir: &Path) -> RootRecovery {
    let (Some(root), Some(name)) = (
        partition_dir.parent(),
        partition_dir.file_name().and_then(|n| n.to_str()),
    ) else {
        return RootRecovery::Unknown;
    };
    let Some((topic, partition)) = parse_partition_dir(name) else {
        return RootRecovery::Unknown;
    };
    if storage.open_read(&root.join(CLEAN_SHUTDOWN)).is_ok() {
        return RootRecovery::Clean;
    }
    let path = root.join(RECOVERY_POINT_CHECKPOINT);
    // Asked before the open: a read-only storage answers for files it has not opened.
    let modified = storage.modified(&path);
    let Ok(file) = storage.open_read(&path) else {
        return RootRecovery::Unknown;
    };
    let len = match file.len() {
        Ok(len) if len <= MAX_CHECKPOINT_BYTES => len,
        _ => return RootRecovery::Unknown,
    };
    let answer = |points: &CheckpointMap| {
        point_of(points, topic, partition).map_or(RootRecovery::Unknown, RootRecovery::From)
    };
    let stamp = modified.map(|t| (path.clone(), len, t));
    if let Some(points) = stamp.as_ref().and_then(cached_checkpoint) {
        return answer(&points);
    }
    let mut bytes = vec![0; len as usize];
    if file.read_exact_at(&mut bytes, 0).is_err() {
        return RootRecovery::Unknown;
    }
    // Every partition of the root asks: the file is parsed once for all of them when its
    // stamp tells a later ask that it is still the same.
    let points = Arc::new(checkpoint_points(&bytes));
    let found = answer(&points);
    if let Some(stamp) = stamp {
        cache_checkpoint(stamp, points);
    }
    found
}

/// Every line of an offset checkpoint, `None` when it is malformed anywhere (as
/// [`parse_offset_checkpoint`] judges it); a partition with two lines has the last one.
fn checkpoint_points(bytes: &[u8]) -> CheckpointMap {
    let mut map = HashMap::new();
    for_each_checkpoint_line(bytes, |t, p, o| {
        map.insert((t.to_owned(), p), o);
    })
    .ok()
    .map(|()| map)
}

/// A data directory's recovery points by topic and partition; `None` when the file is
/// malformed (then no line of it is trusted).
type CheckpointMap = Option<HashMap<(String, i32), i64>>;

/// A checkpoint file as it was read: its path, length and modification time.
type Stamp = (PathBuf, u64, std::time::SystemTime);

/// Checkpoints parsed by [`root_recovery`], newest last: opening the N partitions of a root
/// parsed its N-line checkpoint N times (6 s for 3,000 partitions in a debug build).
static CHECKPOINTS: Mutex<Vec<(Stamp, Arc<CheckpointMap>)>> = Mutex::new(Vec::new());

/// Data directories whose checkpoint is remembered at once.
const CACHED_CHECKPOINTS: usize = 16;

fn cached_checkpoint(stamp: &Stamp) -> Option<Arc<CheckpointMap>> {
    let cache = CHECKPOINTS.lock().unwrap_or_else(|p| p.into_inner());
    cache
        .iter()
        .find(|(s, _)| s == stamp)
        .map(|(_, points)| points.clone())
}

fn cache_checkpoint(stamp: Stamp, points: Arc<CheckpointMap>) {
    let mut cache = CHECKPOINTS.lock().unwrap_or_else(|p| p.into_inner());
    cache.retain(|(s, _)| s.0 != stamp.0);
    if cache.len() >= CACHED_CHECKPOINTS {
        cache.remove(0);
    }
    cache.push((stamp, points));
}

/// The offset of `topic`/`partition` in a parsed checkpoint, `None` when it has no line for
/// it or is malformed.
fn point_of(points: &CheckpointMap, topic: &str, partition: i32) -> Option<i64> {
    points
        .as_ref()?
        .get(&(topic.to_owned(), partition))
        .copied()
}

/// One line of an offset checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointEntry {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The offset.
    pub offset: i64,
}

/// Parses Kafka's offset checkpoint format (`OffsetCheckpointFile`): version `0`, the entry
/// count, then `topic partition offset` lines. The error says what is wrong.
///
/// # Examples
///
/// ```
/// let e = krecords_log::data_dir::parse_offset_checkpoint(b"0\n1\nevents 3 42\n").unwrap();
/// assert_eq!((e[0].topic.as_str(), e[0].partition, e[0].offset), ("events", 3, 42));
/// assert!(krecords_log::data_dir::parse_offset_checkpoint(b"0\n2\nevents 3 42\n").is_err());
/// ```
///
/// # Errors
///
/// A message naming the line: a version other than 0, a missing or wrong count, a malformed line.
pub fn parse_offset_checkpoint(bytes: &[u8]) -> Result<Vec<CheckpointEntry>, String> {
    let mut entries = Vec::new();
    for_each_checkpoint_line(bytes, |topic, partition, offset| {
        entries.push(CheckpointEntry {
            topic: topic.to_owned(),
            partition,
            offset,
        });
    })?;
    Ok(entries)
}

/// Checks an offset checkpoint and calls `f` with each line's topic, partition and offset.
fn for_each_checkpoint_line(bytes: &[u8], mut f: impl FnMut(&str, i32, i64)) -> Result<(), String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
    let mut lines = text.lines();
    match lines.next().map(str::trim) {
        Some("0") => {}
        Some(v) => return Err(format!("line 1: unsupported version {v:?} (expected 0)")),
        None => return Err("empty file".into()),
    }
    let count: usize = lines
        .next()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| "line 2: missing entry count".to_string())?;
    let mut seen = 0;
    for (i, line) in lines.enumerate() {
        let n = i + 3;
        if line.trim().is_empty() {
            continue;
        }
        let malformed = || format!("line {n}: expected \"topic partition offset\", got {line:?}");
        let mut it = line.split_whitespace();
        let (Some(topic), Some(p), Some(o), None) = (it.next(), it.next(), it.next(), it.next())
        else {
            return Err(malformed());
        };
        let (Ok(partition), Ok(offset)) = (p.parse(), o.parse()) else {
            return Err(malformed());
        };
        f(topic, partition, offset);
        seen += 1;
    }
    if seen != count {
        return Err(format!("line 2 says {count} entries, the file has {seen}"));
    }
    Ok(())
}

/// Parses `meta.properties` (Java properties: `key=value` lines, `#` comments) and checks what
/// Kafka requires of it: `version` 0 with `broker.id`, or version 1 with `node.id` and
/// `cluster.id`.
///
/// # Examples
///
/// ```
/// let p = krecords_log::data_dir::parse_meta_properties(
///     b"#\nnode.id=1\nversion=1\ncluster.id=abc\n").unwrap();
/// assert_eq!(p["node.id"], "1");
/// assert!(krecords_log::data_dir::parse_meta_properties(b"version=1\nnode.id=1\n").is_err());
/// ```
///
/// # Errors
///
/// A message saying what is missing or malformed.
pub fn parse_meta_properties(bytes: &[u8]) -> Result<BTreeMap<String, String>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
    let mut props = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        let Some((k, v)) = line.split_once(['=', ':']) else {
            return Err(format!("line {}: expected key=value, got {line:?}", i + 1));
        };
        props.insert(k.trim().to_owned(), v.trim().to_owned());
    }
    let need = |key: &str, props: &BTreeMap<String, String>| -> Result<(), String> {
        match props.get(key) {
            Some(v) if !v.is_empty() => Ok(()),
            _ => Err(format!("missing {key}")),
        }
    };
    let number = |key: &str, props: &BTreeMap<String, String>| -> Result<(), String> {
        need(key, props)?;
        props[key]
            .parse::<i32>()
            .map(|_| ())
            .map_err(|_| format!("{key} is not a number: {:?}", props[key]))
    };
    match props.get("version").map(String::as_str) {
        Some("0") => number("broker.id", &props)?,
        Some("1") => {
            number("node.id", &props)?;
            need("cluster.id", &props)?;
        }
        Some(v) => return Err(format!("unsupported version {v:?}")),
        None => return Err("missing version".into()),
    }
    Ok(props)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint_offset(bytes: &[u8], topic: &str, partition: i32) -> Option<i64> {
        point_of(&checkpoint_points(bytes), topic, partition)
    }

    /// Every partition of a root is answered from one parse of its checkpoint, and a
    /// checkpoint rewritten since (another modification time, the same length) is read again.
    #[test]
    fn a_roots_checkpoint_is_parsed_once_and_read_again_when_it_changes() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join(RECOVERY_POINT_CHECKPOINT);
        let write = |text: &str, secs: u64| {
            std::fs::write(&path, text).unwrap();
            let f = std::fs::File::options().write(true).open(&path).unwrap();
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
            f.set_modified(t).unwrap();
        };
        let ask = |dir: &str| {
            let storage = crate::storage::ReadOnlyStorage::new(Arc::new(crate::storage::FsStorage));
            root_recovery(&storage, &root.path().join(dir))
        };
        write("0\n2\nevents 0 10\nevents 1 20\n", 1_000);
        assert_eq!(ask("events-0"), RootRecovery::From(10));
        assert_eq!(ask("events-1"), RootRecovery::From(20));
        assert_eq!(ask("events-2"), RootRecovery::Unknown);
        let stamp = (
            path.clone(),
            std::fs::metadata(&path).unwrap().len(),
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000),
        );
        assert!(cached_checkpoint(&stamp).is_some(), "parsed once, kept");
        write("0\n2\nevents 0 30\nevents 1 40\n", 2_000);
        assert_eq!(ask("events-0"), RootRecovery::From(30));
        assert_eq!(ask("events-1"), RootRecovery::From(40));
        // Malformed: no line is trusted, cached or not.
        write("0\n3\nevents 0 30\nevents 1 40\n", 3_000);
        assert_eq!(ask("events-0"), RootRecovery::Unknown);
        assert_eq!(ask("events-0"), RootRecovery::Unknown);
    }

    #[test]
    fn a_partitions_line_of_a_checkpoint() {
        let cp = b"0\n3\nevents 0 5\nevents 1 7\nother-topic 0 9\n";
        assert_eq!(checkpoint_offset(cp, "events", 1), Some(7));
        assert_eq!(checkpoint_offset(cp, "other-topic", 0), Some(9));
        assert_eq!(checkpoint_offset(cp, "events", 2), None);
        assert_eq!(checkpoint_offset(cp, "other", 0), None);
        // Anything malformed anywhere, or a count that disagrees, is no answer.
        assert_eq!(checkpoint_offset(b"0\n2\nevents 1 7\n", "events", 1), None);
        assert_eq!(
            checkpoint_offset(b"0\n2\nevents 1 7\nx y z\n", "events", 1),
            None
        );
        assert_eq!(checkpoint_offset(b"1\n1\nevents 1 7\n", "events", 1), None);
        assert_eq!(checkpoint_offset(b"\xff", "events", 1), None);
        assert_eq!(checkpoint_offset(b"", "events", 1), None);
    }

    #[test]
    fn a_filter_takes_partitions_by_topic_glob_and_number() {
        let part = |topic: &str, partition| PartitionDir {
            topic: topic.into(),
            partition,
            path: PathBuf::from(format!("{topic}-{partition}")),
        };
        let every = PartitionFilter::new(None, None).unwrap();
        assert!(every.is_all() && every.matches(&part("__consumer_offsets", 49)));
        let f = PartitionFilter::new(Some("orders.?[0-9]*"), None).unwrap();
        assert!(!f.is_all());
        assert!(f.matches(&part("orders.a1x", 3)) && !f.matches(&part("orders.ab", 3)));
        assert!(f.matches_topic("orders.b2") && !f.matches_topic("payments"));
        let f = PartitionFilter::new(None, Some(2)).unwrap();
        assert!(!f.is_all() && f.matches_topic("anything"));
        assert!(f.matches(&part("t", 2)) && !f.matches(&part("t", 20)));
        let f = PartitionFilter::new(Some("t*"), Some(0)).unwrap();
        assert!(f.matches(&part("tx", 0)) && !f.matches(&part("tx", 1)));
        assert!(!f.matches(&part("x", 0)));
        for bad in ["[", "a[b", "***"] {
            let e = PartitionFilter::new(Some(bad), Some(0)).unwrap_err();
            assert!(
                matches!(&e, SelectError::Glob { glob, .. } if glob == bad),
                "{e:?}"
            );
        }
    }

    #[test]
    fn partition_names() {
        assert_eq!(parse_partition_dir("a-1"), Some(("a", 1)));
        assert_eq!(parse_partition_dir("a-"), None);
        assert_eq!(parse_partition_dir("-1"), None);
        assert_eq!(parse_partition_dir("a-99999999999"), None);
        assert_eq!(parse_partition_dir("a-0.abc-future"), None);
        assert_eq!(parse_partition_dir("a-0.abc-stray"), None);
    }

    #[test]
    fn checkpoints() {
        assert!(parse_offset_checkpoint(b"").is_err());
        assert!(parse_offset_checkpoint(b"1\n0\n").is_err());
        assert!(parse_offset_checkpoint(b"0\nx\n").is_err());
        assert!(parse_offset_checkpoint(b"0\n1\nt x 3\n").is_err());
        assert_eq!(parse_offset_checkpoint(b"0\n0\n").unwrap(), vec![]);
    }

    #[test]
    fn meta() {
        assert!(parse_meta_properties(b"version=0\nbroker.id=3\n").is_ok());
        assert!(parse_meta_properties(b"version=0\n").is_err());
        assert!(parse_meta_properties(b"version=2\n").is_err());
        assert!(parse_meta_properties(b"version=1\nnode.id=x\ncluster.id=c\n").is_err());
    }
}
