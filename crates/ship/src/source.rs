//! The sources of a job and their readers: what a source is ([`Source`]), how command-line
//! arguments become sources ([`Sources`]), and the next read_committed fetch of each.

use crate::stream::StreamReader;
use crate::{Error, Fetched, Result};
use krecords_client::{Client, ClientConfig, IsolationLevel, PartitionStream};
use krecords_log::transaction::AbortedTransaction;
use krecords_log::Log;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tokio::runtime::Runtime;

/// Where a source's data comes from.
pub enum SourceKind {
    /// A log or partition directory (read through a read-only view, reopened to see appends).
    Dir(PathBuf),
    /// Segment files of one directory, read as one read-only log
    /// ([`Log::open_segment_files`]).
    Segments(Vec<PathBuf>),
    /// A stream of entries (standard input), read once from its start (see
    /// [`crate::STREAM_HOLD_LIMIT`]).
    Stream(Mutex<Option<Box<dyn Read + Send>>>),
    /// A partition of a live cluster.
    Kafka {
        /// `host:port[,host:port…]`.
        servers: String,
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
}

impl std::fmt::Debug for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SourceKind::Dir(d) => f.debug_tuple("Dir").field(d).finish(),
            SourceKind::Segments(s) => f.debug_tuple("Segments").field(s).finish(),
            SourceKind::Stream(_) => f.write_str("Stream"),
            SourceKind::Kafka {
                servers,
                topic,
                partition,
            } => write!(f, "Kafka({servers}/{topic}/{partition})"),
        }
    }
}

/// One source and its target partition.
///
/// Its position in the committed metadata ([`crate::Positions`]) is keyed by what it holds,
/// found when it is opened: `topic:TOPIC_ID/PARTITION` for a Kafka partition directory (its
/// `partition.metadata`), segment files of one, or a live partition (Metadata's topic id) —
/// so a broker's directory, a copy of it and the live partition share their position;
/// `log:FIRST_OFFSET@CRC` (the first entry) for other logs and segment files; `id` for
/// standard input and a live partition without a topic id.
#[derive(Debug)]
pub struct Source {
    /// Where it is, for messages and the report: the canonical directory, `DIR/{NAME,…}` for
    /// segment files, `-` for standard input, `kafka://SERVERS/TOPIC/PARTITION`.
    pub id: String,
    /// The target partition.
    pub partition: i32,
    /// Where its data comes from.
    pub kind: SourceKind,
}

impl Source {
    /// A stream of entries read from `reader` (whole entries, as a segment file holds them),
    /// shipped to `partition`, with position key `id`.
    pub fn stream(
        id: impl Into<String>,
        partition: i32,
        reader: impl Read + Send + 'static,
    ) -> Self {
        Source {
            id: id.into(),
            partition,
            kind: SourceKind::Stream(Mutex::new(Some(Box::new(reader)))),
        }
    }
}

/// `NAME-N` → N (a partition directory's name; a topic name may hold `-` itself).
///
/// ```
/// use krecords_ship::partition_of_dir;
/// use std::path::Path;
///
/// assert_eq!(partition_of_dir(Path::new("/data/my-topic-12")), Some(12));
/// assert_eq!(partition_of_dir(Path::new("/data/log")), None);
/// ```
pub fn partition_of_dir(path: &Path) -> Option<i32> {
    let name = path.file_name()?.to_str()?;
    let (_, n) = name.rsplit_once('-')?;
    n.parse().ok().filter(|n: &i32| *n >= 0)
}

/// The sources of a job, from command-line arguments in their order: directories (partition
/// from `NAME-N` unless the target names one), segment files (grouped by directory, one source
/// per directory, after the others), `-` (standard input) and `kafka://` partitions.
#[derive(Debug)]
pub struct Sources {
    target_partition: Option<i32>,
    out: Vec<Source>,
    segments: BTreeMap<PathBuf, Vec<PathBuf>>,
}

impl Sources {
    /// No sources yet; `target_partition` (the target URL's partition) overrides the partition
    /// of every source.
    pub fn new(target_partition: Option<i32>) -> Self {
        Sources {
            target_partition,
            out: Vec::new(),
            segments: BTreeMap::new(),
        }
    }

    /// The target partition of a source whose own is `found`.
    fn pick(&self, found: Option<i32>, what: &str) -> Result<i32> {
        self.target_partition.or(found).ok_or_else(|| {
            Error::usage(format!(
                "{what}: no partition: name the target partition (kafka://…/TOPIC/N) or use a NAME-N directory"
            ))
        })
    }

    /// Adds a path argument: a directory, a segment file, or `-` for standard input.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when it cannot be opened; [`Error::Usage`] when no partition is known.
    pub fn add_path(&mut self, arg: &str) -> Result<()> {
        if arg == "-" {
            let partition = self.pick(None, arg)?;
            self.out
                .push(Source::stream(arg, partition, std::io::stdin()));
            return Ok(());
        }
        let path = PathBuf::from(arg);
        let canonical = std::fs::canonicalize(&path).map_err(|e| Error::Io {
            context: format!("cannot open {arg}"),
            source: e,
        })?;
        if canonical.is_dir() {
            // The name given first (a link named NAME-N), then the directory's own.
            let found = partition_of_dir(&path).or_else(|| partition_of_dir(&canonical));
            self.out.push(Source {
                id: canonical.display().to_string(),
                partition: self.pick(found, arg)?,
                kind: SourceKind::Dir(canonical),
            });
        } else {
            let parent = canonical
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            self.segments.entry(parent).or_default().push(canonical);
        }
        Ok(())
    }

    /// Adds a partition of a live cluster; `arg` (the URL as given) names it in errors, and
    /// `partition` must be given.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] without a partition.
    pub fn add_kafka(
        &mut self,
        arg: &str,
        servers: &str,
        topic: &str,
        partition: Option<i32>,
    ) -> Result<()> {
        let Some(p) = partition else {
            return Err(Error::usage(format!(
                "{arg}: a kafka:// source must name one partition"
            )));
        };
        self.out.push(Source {
            id: format!("kafka://{servers}/{topic}/{p}"),
            partition: self.pick(Some(p), arg)?,
            kind: SourceKind::Kafka {
                servers: servers.to_owned(),
                topic: topic.to_owned(),
                partition: p,
            },
        });
        Ok(())
    }

    /// Adds a source made otherwise (for instance [`Source::stream`]).
    pub fn add(&mut self, source: Source) {
        self.out.push(source);
    }

    /// The sources: those added, then one per directory of segment files.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] for a file that is not a `.log` segment, or segment files without a
    /// partition.
    pub fn finish(mut self) -> Result<Vec<Source>> {
        for (dir, files) in std::mem::take(&mut self.segments) {
            let partition = self.pick(partition_of_dir(&dir), &dir.display().to_string())?;
            if let Some(f) = files
                .iter()
                .find(|f| f.extension().and_then(|e| e.to_str()) != Some("log"))
            {
                return Err(Error::usage(format!(
                    "{}: not a segment file (.log) or directory",
                    f.display()
                )));
            }
            let names: Vec<String> = files
                .iter()
                .filter_map(|f| f.file_name().and_then(|n| n.to_str()).map(str::to_owned))
                .collect();
            self.out.push(Source {
                id: format!("{}/{{{}}}", dir.display(), names.join(",")),
                partition,
                kind: SourceKind::Segments(files),
            });
        }
        Ok(self.out)
    }
}

/// Largest fetch from a local log (a kafka:// source fetches max.partition.fetch.bytes). Small
/// enough that reading and planning one takes less time than the broker spends on the
/// requests in flight meanwhile.
pub(crate) const FETCH_BYTES: usize = 1 << 20;

/// What identifies a source's data (see [`Source`]).
pub(crate) struct Identity {
    /// The key of its position.
    pub(crate) id: String,
    /// For a log identified by its first entry: where the log starts now.
    pub(crate) log_start: Option<i64>,
}

/// A source being read: the next fetch of committed data.
pub(crate) enum Reader<'s> {
    Log {
        source: &'s Source,
        log: Option<Box<Log>>,
    },
    Stream(Box<StreamReader>),
    Kafka {
        client: Client,
        topic: String,
        partition: i32,
        stream: Option<PartitionStream>,
    },
}

impl<'s> Reader<'s> {
    /// Opens the reader of `source` (a kafka:// source connects with `config`).
    pub(crate) fn open(source: &'s Source, rt: &Runtime, config: &ClientConfig) -> Result<Self> {
        Ok(match &source.kind {
            SourceKind::Dir(_) | SourceKind::Segments(_) => Reader::Log { source, log: None },
            SourceKind::Stream(reader) => {
                let taken = reader.lock().unwrap_or_else(|e| e.into_inner()).take();
                let Some(reader) = taken else {
                    return Err(Error::usage(format!(
                        "{}: a stream can be read once only",
                        source.id
                    )));
                };
                Reader::Stream(Box::new(StreamReader::new(reader)))
            }
            SourceKind::Kafka {
                servers,
                topic,
                partition,
            } => {
                let mut c = config.clone();
                c.set("bootstrap.servers", servers)
                    .map_err(|e| Error::usage(format!("{}: {e}", source.id)))?;
                let client = rt
                    .block_on(Client::connect(c))
                    .map_err(|e| Error::client(&source.id, &e))?;
                Reader::Kafka {
                    client,
                    topic: topic.clone(),
                    partition: *partition,
                    stream: None,
                }
            }
        })
    }

    /// The identity of the source's data (see [`Source`]).
    pub(crate) fn identity(&mut self, rt: &Runtime, name: &str) -> Result<Identity> {
        let place = Identity {
            id: name.to_owned(),
            log_start: None,
        };
        match self {
            Reader::Log { source, .. } => {
                let dir = match &source.kind {
                    SourceKind::Dir(d) => Some(d.clone()),
                    SourceKind::Segments(files) => files
                        .first()
                        .and_then(|f| f.parent())
                        .map(Path::to_path_buf),
                    _ => None,
                };
                if let Some(dir) = dir {
                    if let (Some(topic_id), Some(p)) =
                        (krecords_log::files::topic_id(&dir), partition_of_dir(&dir))
                    {
                        return Ok(Identity {
                            id: format!("topic:{topic_id}/{p}"),
                            log_start: None,
                        });
                    }
                }
                let l = self.log(name)?;
                let start = l.log_start_offset();
                let f = l
                    .fetch(
                        start,
                        1,
                        krecords_log::transaction::IsolationLevel::ReadUncommitted,
                    )
                    .map_err(|e| Error::log(name, &e))?;
                let first = krecords_codec::read::Entries::new(&f.bytes)
                    .next()
                    .and_then(|e| e.ok())
                    .and_then(|b| {
                        b.first_offset()
                            .map(|o| crate::positions::log_identity(o, b.crc()))
                    });
                Ok(Identity {
                    id: first.unwrap_or(place.id),
                    log_start: Some(start),
                })
            }
            Reader::Stream(_) => Ok(place),
            Reader::Kafka {
                client,
                topic,
                partition,
                ..
            } => {
                let md = rt
                    .block_on(client.metadata(Some(&[topic.as_str()])))
                    .map_err(|e| Error::client(name, &e))?;
                let id = md
                    .topics
                    .iter()
                    .find(|t| t.name == *topic && !t.topic_id.is_nil())
                    .map(|t| krecords_client::topic_id_text(t.topic_id.as_bytes()));
                Ok(match id {
                    Some(id) => Identity {
                        id: format!("topic:{id}/{partition}"),
                        log_start: None,
                    },
                    None => place,
                })
            }
        }
    }

    /// The read-only log of a local source, opened on first use.
    fn log(&mut self, name: &str) -> Result<&Log> {
        let Reader::Log { source, log } = self else {
            return Err(Error::usage(format!("{name}: not a log")));
        };
        if log.is_none() {
            let opened = match &source.kind {
                SourceKind::Segments(files) => Log::open_segment_files(files),
                SourceKind::Dir(dir) => Log::open_read_only(dir),
                _ => return Err(Error::usage(format!("{name}: not a log"))),
            };
            *log = Some(Box::new(opened.map_err(|e| Error::log(name, &e))?));
        }
        match log {
            Some(l) => Ok(l),
            None => Err(Error::usage(format!("{name}: not a log"))),
        }
    }

    /// The next fetch from `pos`; `None` at the end of the committed data seen so far (a
    /// --follow caller calls [`Reader::refresh`] and tries again).
    pub(crate) fn next(
        &mut self,
        rt: &Runtime,
        pos: i64,
        max_bytes: usize,
        name: &str,
    ) -> Result<Option<Fetched>> {
        match self {
            Reader::Log { .. } => {
                let l = self.log(name)?;
                let pos = pos.max(l.log_start_offset());
                if pos >= l.last_stable_offset() {
                    // The end of a log whose end is damage is not the partition's end.
                    if let Some(d) = l.damage() {
                        return Err(Error::log(name, &d.error()));
                    }
                    return Ok(None);
                }
                let f = l
                    .fetch(
                        pos,
                        max_bytes.clamp(1, FETCH_BYTES),
                        krecords_log::transaction::IsolationLevel::ReadCommitted,
                    )
                    .map_err(|e| Error::log(name, &e))?;
                if f.bytes.is_empty() {
                    return Ok(None);
                }
                Ok(Some(Fetched {
                    bytes: f.bytes.into(),
                    aborted: f.aborted_transactions.unwrap_or_default(),
                    next_offset: f.next_offset,
                    end: Some(f.last_stable_offset),
                }))
            }
            Reader::Stream(s) => s.next(pos, max_bytes.clamp(1, FETCH_BYTES), name),
            Reader::Kafka {
                client,
                topic,
                partition,
                stream,
            } => {
                let s = stream.get_or_insert_with(|| {
                    let window = i32::try_from(max_bytes.clamp(1, FETCH_BYTES)).unwrap_or(1 << 20);
                    client
                        .stream_partition(
                            topic,
                            *partition,
                            pos,
                            None,
                            IsolationLevel::ReadCommitted,
                        )
                        .with_window(window.min(client.config().max_partition_fetch_bytes))
                });
                match rt.block_on(s.next_chunk()) {
                    Ok(Some(c)) => Ok(Some(Fetched {
                        bytes: c.records,
                        aborted: c
                            .aborted_transactions
                            .iter()
                            .map(|a| AbortedTransaction {
                                producer_id: a.producer_id,
                                first_offset: a.first_offset,
                            })
                            .collect(),
                        next_offset: c.next_offset,
                        end: Some(c.last_stable_offset),
                    })),
                    Ok(None) => Ok(None),
                    Err(e) => Err(Error::client(name, &e)),
                }
            }
        }
    }

    /// For a source whose reading stopped at its last stable offset below its high
    /// watermark: (last stable offset, high watermark). A transaction is open there; what
    /// follows it waits for its end.
    pub(crate) fn stalled(&self) -> Option<(i64, i64)> {
        match self {
            Reader::Log { log: Some(l), .. } if l.last_stable_offset() < l.high_watermark() => {
                Some((l.last_stable_offset(), l.high_watermark()))
            }
            Reader::Stream(s) => s.stalled(),
            _ => None,
        }
    }

    /// Forgets what was read so that the next fetch sees appended data.
    pub(crate) fn refresh(&mut self) {
        match self {
            Reader::Log { log, .. } => *log = None,
            Reader::Kafka { stream, .. } => *stream = None,
            Reader::Stream(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_from_dir_names() {
        assert_eq!(partition_of_dir(Path::new("/x/orders-3")), Some(3));
        assert_eq!(partition_of_dir(Path::new("/x/my-topic-12")), Some(12));
        assert_eq!(partition_of_dir(Path::new("/x/log")), None);
        assert_eq!(partition_of_dir(Path::new("/x/a-")), None);
        assert_eq!(partition_of_dir(Path::new("/x/a-b")), None);
        assert_eq!(
            partition_of_dir(Path::new("/x/a--1")),
            Some(1),
            "topic \"a-\""
        );
    }
}
