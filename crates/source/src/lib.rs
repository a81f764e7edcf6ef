//! Kafka data sources, one model for all of them: files, partition directories, a broker's
//! `log.dirs` root, standard input and live `kafka://` partitions, each split into its
//! partitions and read as a stream of entries between two positions at an isolation level.
//!
//! - [`Sources::open`] takes source arguments (see [`SourceSpec`]) and lists their
//!   [`Partition`]s, each with its identity (topic and partition when known).
//! - [`Sources::read`] opens one partition between the positions of a [`Range`] (offsets,
//!   offsets from the end, `earliest`, `latest`, times) at an [`IsolationLevel`], resolved the
//!   same way on every source; the [`Reader`] yields entries file by file, says which records
//!   of an entry are inside the range, and why it stopped before the high watermark
//!   ([`Stop`]).
//! - [`Error`], [`ErrorClass`] and [`exit_code`]: every library error mapped to the exit code
//!   of a command (1: the data has a problem; 2: usage or I/O), in one place.
//!
//! A live partition's fetched bytes are framed in place: each Fetch response's records are a
//! [`bytes::Bytes`] the reader walks with [`krecords_codec::read::Entries`], not copied into a
//! buffer. Files are streamed through one window buffer
//! ([`krecords_codec::read::Streamer`]), so memory stays bounded by the largest entry.
//!
//! # Example
//!
//! ```
//! use krecords_source::{IsolationLevel, Position, Range, ReadOptions, Sources};
//! use krecords_codec::write::{NewRecord, V2Builder};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let file = dir.path().join("entries.bin");
//! let mut bytes = Vec::new();
//! for base in [0, 3, 6] {
//!     let mut b = V2Builder::new(base);
//!     for i in 0..3 {
//!         b.append(&NewRecord::new(1_714_000_000_000 + base + i, None, Some(b"v")))?;
//!     }
//!     bytes.extend(b.finish()?);
//! }
//! std::fs::write(&file, &bytes)?;
//!
//! let sources = Sources::open_local(&[file])?;
//! let range = Range { start: Some(Position::FromEnd(4)), ..Range::default() };
//! let options = ReadOptions { range, ..ReadOptions::default() };
//! let mut reader = sources.read(0, &options)?;
//! let mut firsts = Vec::new();
//! while reader.next_file()?.is_some() {
//!     while let krecords_codec::read::Step::Entry(b) = reader.next_entry()? {
//!         firsts.push(b.offset_field());
//!     }
//! }
//! // Offsets 5..9: the batch at 3 holds offset 5 and is read whole.
//! assert_eq!(firsts, [3, 6]);
//! assert_eq!(reader.bounds().start, Some(5));
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
// The panic lints of the codec's parsers, for the code that walks untrusted bytes (tests may
// unwrap).
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]

pub mod batches;
pub mod dump;
mod each;
pub mod entry_json;
pub mod entry_text;
mod error;
pub mod filter;
pub mod json;
mod live;
mod local;
mod once;
mod position;
mod reader;
pub mod records;
#[cfg(feature = "remote")]
mod remote;
mod spec;
pub mod stats;
pub mod time;

pub use each::{EachPartition, LeftOut};
pub use error::{
    classify_client, classify_codec, classify_io, classify_log, exit_code, io_cause, named_once,
    names_its_place, passed_log_error, write_error, Error, ErrorClass, TRUNCATED_TAIL,
};
#[cfg(feature = "remote")]
pub use krecords_remote::location::{Location as RemoteLocation, RemoteOptions};
pub use live::{LivePartition, SeenLive};
pub use position::{Position, Range, Resolved, Watermarks};
pub use reader::{Bounds, FileInfo, Progress, ProgressFn, Reader, Stop, StopCause};
pub use spec::{
    classify_dir, client_lines, dir_logs, expand_globs, partition_filter, partition_of_dir,
    partition_of_path, unused_client_properties, ClusterUrl, DirKind, KafkaUrl, SourceSpec,
    DEFAULT_PORT,
};

/// The client configuration of `kafka://` sources.
pub use krecords_client::ClientConfig;
/// The codec, whose types the reader hands out (`Step`, `Batch`, records): re-exported so that a
/// user of this crate needs no other dependency to name them.
pub use krecords_codec as codec;
/// The partition log, whose types a directory's reads use (`consumer::ConsumedRecord` of
/// [`records`], errors): re-exported for the same reason.
pub use krecords_log as log;
use krecords_log::data_dir::{PartitionFilter, Taken};
/// The isolation level of a read. One type for the workspace: krecords-log's, re-exported
/// here so that the sources layer and its users name it once.
pub use krecords_log::IsolationLevel;
use krecords_log::{ListOffsetsResult, OffsetSpec};

use live::Live;
use reader::{Pending, Reader as R, Setup};
use spec::LocalPartition;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// One partition of a source.
#[derive(Debug, Clone)]
pub struct Partition {
    /// Its name: a directory or file path, `-`, or `kafka://HOST:PORT/TOPIC/PARTITION`.
    pub name: String,
    /// The topic, when known (a `TOPIC-N` directory, a `kafka://` URL).
    pub topic: Option<String>,
    /// The partition number, when known.
    pub partition: Option<i32>,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Stdin,
    Local(LocalPartition),
    Live(LivePartition),
    #[cfg(feature = "remote")]
    Remote(remote::RemotePart),
}

impl Partition {
    /// Its files in offset order (none for standard input and live partitions).
    pub fn files(&self) -> &[PathBuf] {
        match &self.kind {
            Kind::Local(l) => &l.files,
            Kind::Stdin | Kind::Live(_) => &[],
            #[cfg(feature = "remote")]
            Kind::Remote(_) => &[],
        }
    }

    /// The partition directory, when a whole directory was named.
    pub fn dir(&self) -> Option<&Path> {
        match &self.kind {
            Kind::Local(l) => l.dir.as_deref(),
            Kind::Stdin | Kind::Live(_) => None,
            #[cfg(feature = "remote")]
            Kind::Remote(_) => None,
        }
    }

    /// The live partition, for a `kafka://` source.
    pub fn live(&self) -> Option<&LivePartition> {
        match &self.kind {
            Kind::Live(l) => Some(l),
            Kind::Stdin | Kind::Local(_) => None,
            #[cfg(feature = "remote")]
            Kind::Remote(_) => None,
        }
    }

    /// The topic's id as Kafka prints it, where the source says: a partition directory's
    /// `partition.metadata`, a live topic's Metadata, a remote tier's object keys. A topic
    /// deleted and created again under the same name has another id.
    pub fn topic_id(&self) -> Option<String> {
        match &self.kind {
            Kind::Local(l) => l.dir.as_deref().and_then(krecords_log::files::topic_id),
            Kind::Live(l) => l.topic_id.clone(),
            Kind::Stdin => None,
            #[cfg(feature = "remote")]
            Kind::Remote(r) => Some(r.partition.topic_id.to_string()),
        }
    }

    /// Whether it is a partition of a remote tier location (`s3://`, `file://`, ...).
    pub fn is_remote(&self) -> bool {
        #[cfg(feature = "remote")]
        return matches!(self.kind, Kind::Remote(_));
        #[cfg(not(feature = "remote"))]
        false
    }

    /// Whether it is standard input.
    pub fn is_stdin(&self) -> bool {
        matches!(self.kind, Kind::Stdin)
    }
}

/// How to read a partition.
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions {
    /// Which offsets.
    pub range: Range,
    /// read_uncommitted (the default here: everything, as the files hold it, the way the
    /// inspecting commands read) or read_committed (what a transactional consumer sees: up to
    /// the last stable offset, aborted batches left out). The consumer-like readers built on
    /// this one, `krecords_arrow::ScanOptions` and the export, default to read_committed.
    pub isolation: IsolationLevel,
    /// Read at most this many bytes of each file (`dump --max-bytes`).
    pub max_bytes: Option<u64>,
    /// Upper bound on one entry's decompressed size, when records are counted (`--count`) or
    /// times looked up in a file.
    pub max_decompressed_bytes: usize,
    /// The records `--count` counts when the command shows only some of the records it reads
    /// (`dump --producer-id`, `--control-only`, `--time-start`, ...): those this filter keeps
    /// (control records too, when it keeps only control batches). `None`: every data record in
    /// the range. Its offset bounds are not used (the range is the reader's).
    pub counted: Option<filter::Filter>,
    /// Reads a partition directory as its log, the way a broker serves it to a consumer (the
    /// consumer-like readers set it: the Arrow layer's scans, so `sql`, `export` and the Python
    /// package). The log is opened even for a whole read at read_uncommitted, so the read ends
    /// at the log's end as recovery finds it: an entry claiming offsets past it is damage, and
    /// a torn tail (a last entry cut short by a crash or a writer still writing, which Kafka's
    /// recovery cuts) ends the read with a note ([`Reader::notes`]) instead of an error.
    /// Of any source, it reads records, not files as they are: an entry whose offsets reach
    /// the base offset of the next segment file (its offset field damaged) is an error however
    /// the range is given, so that no record gets an offset the partition does not hold.
    /// `false` (the default): the files as they are, as the inspecting commands read them
    /// (`dump`, `verify` and `stats` report a torn tail, and `dump` of whole files shows an
    /// entry with a damaged offset field as it is).
    pub as_log: bool,
}

impl Default for ReadOptions {
    /// The whole partition at read_uncommitted (unlike `krecords_arrow::ScanOptions`, which
    /// reads as a consumer does: read_committed), entries up to the codec's default
    /// decompression limit.
    fn default() -> Self {
        ReadOptions {
            range: Range::default(),
            isolation: IsolationLevel::ReadUncommitted,
            max_bytes: None,
            max_decompressed_bytes: krecords_codec::DEFAULT_DECOMPRESS_LIMIT,
            counted: None,
            as_log: false,
        }
    }
}

/// The options remote tier locations are opened with (nothing without the `remote` feature).
#[cfg(feature = "remote")]
type RemoteOpts = RemoteOptions;
#[cfg(not(feature = "remote"))]
#[derive(Default)]
struct RemoteOpts;

/// The partitions of a command's source arguments.
///
/// Each partition is listed once, however many arguments name it ([`Sources::notes`] says
/// which were named more than once): a partition directory named twice (`ROOT ROOT`, a root
/// and one of its partition directories, two spellings of one path: the same directory,
/// links resolved), a segment file named twice or named with its partition directory (read
/// with the directory), the same remote tier partition twice (the same location's topic and
/// partition), the same `kafka://` topic partition twice: of the same cluster
/// ([`LivePartition::cluster`]: its cluster id), however its URLs spell the bootstrap servers
/// (`kafka://localhost:9092/t/0` and `kafka://127.0.0.1:9092/t/0`, or two lists naming
/// different brokers of one cluster). A command reads the union of what its arguments name,
/// every record once.
#[derive(Debug)]
pub struct Sources {
    /// Every partition, in argument order (a partition named again is where it was first).
    pub partitions: Vec<Partition>,
    live: Option<Live>,
    notes: Vec<String>,
}

impl Sources {
    /// Lists the partitions of `args` (see [`SourceSpec`]); `kafka://` URLs connect (with the
    /// configuration `config` returns, asked for once, only when there is one) and ask for
    /// the topic's metadata.
    ///
    /// # Errors
    ///
    /// A path that does not exist (before anything is read), a malformed URL, a pattern
    /// matching nothing, a directory with nothing to read, a broker that cannot be reached or
    /// does not have the topic.
    pub fn open(
        args: &[PathBuf],
        config: &mut dyn FnMut() -> Result<ClientConfig, Error>,
    ) -> Result<Sources, Error> {
        Sources::open_all(args, config, &mut || Ok(Default::default()))
    }

    /// [`Sources::open`] for local sources only (files, `-`, partition directories, `log.dirs`
    /// roots, `file://` remote tiers): a `kafka://` URL among `args` is a usage error, and no
    /// client configuration is needed.
    ///
    /// # Errors
    ///
    /// As [`Sources::open`]; [`Error::Usage`] for a `kafka://` URL.
    ///
    /// ```
    /// use krecords_source::{Error, Sources};
    ///
    /// let e = Sources::open_local(&["kafka://localhost:9092/t".into()]).unwrap_err();
    /// assert!(matches!(e, Error::Usage(_)), "{e}");
    /// ```
    pub fn open_local(args: &[PathBuf]) -> Result<Sources, Error> {
        Sources::open(args, &mut || {
            Err(Error::Usage(
                "kafka:// sources need a client configuration: open them with Sources::open".into(),
            ))
        })
    }

    /// [`Sources::open`], with remote tier locations (`s3://BUCKET/PREFIX`, `gs://`, `az://`,
    /// `file:///ROOT/PREFIX`, see [`RemoteLocation`]) opened with the options `remote`
    /// returns (asked for once, only when there is one): each partition found under a
    /// location is one partition, named `LOCATION/<topic>-<topicId>/<partition>`.
    ///
    /// # Errors
    ///
    /// As [`Sources::open`]; a location that cannot be listed or holds no segment.
    #[cfg(feature = "remote")]
    pub fn open_with(
        args: &[PathBuf],
        config: &mut dyn FnMut() -> Result<ClientConfig, Error>,
        remote: &mut dyn FnMut() -> Result<RemoteOptions, Error>,
    ) -> Result<Sources, Error> {
        Sources::open_all(args, config, remote)
    }

    /// [`Sources::open_with`], or without the `remote` feature [`Sources::open`].
    fn open_all(
        args: &[PathBuf],
        config: &mut dyn FnMut() -> Result<ClientConfig, Error>,
        remote: &mut dyn FnMut() -> Result<RemoteOpts, Error>,
    ) -> Result<Sources, Error> {
        let mut remote_options: Option<RemoteOpts> = None;
        // Without the `remote` feature no location gets here: `SourceSpec::parse` refuses them.
        #[cfg(not(feature = "remote"))]
        let _ = (remote, &mut remote_options);
        let mut sources = Sources {
            partitions: Vec::new(),
            live: None,
            notes: Vec::new(),
        };
        let mut base: Option<ClientConfig> = None;
        let mut files: Vec<PathBuf> = Vec::new();
        for arg in args {
            let spec = SourceSpec::parse(arg)?;
            if !matches!(spec, SourceSpec::Path(_)) {
                sources.push_local(&mut files)?;
            }
            match spec {
                SourceSpec::Path(p) => files.push(p),
                #[cfg(feature = "remote")]
                SourceSpec::Remote(location) => {
                    let o = match &remote_options {
                        Some(o) => o,
                        None => remote_options.insert(remote()?),
                    };
                    let tier = std::sync::Arc::new(remote::Tier::open(location, o)?);
                    for p in tier.partitions()? {
                        sources.partitions.push(Partition {
                            name: p.name.clone(),
                            topic: Some(p.partition.topic.clone()),
                            partition: Some(p.partition.partition),
                            kind: Kind::Remote(p),
                        });
                    }
                }
                SourceSpec::Stdin => sources.partitions.push(Partition {
                    name: "-".into(),
                    topic: None,
                    partition: None,
                    kind: Kind::Stdin,
                }),
                SourceSpec::Kafka(url) => {
                    let c = match &base {
                        Some(c) => c.clone(),
                        None => base.insert(config()?).clone(),
                    };
                    if sources.live.is_none() {
                        sources.live = Some(Live::new()?);
                    }
                    let Some(live) = &sources.live else { continue };
                    for p in live.connect(&url, c)? {
                        sources.partitions.push(Partition {
                            name: p.name.clone(),
                            topic: Some(p.topic.clone()),
                            partition: Some(p.partition),
                            kind: Kind::Live(p),
                        });
                    }
                }
            }
        }
        sources.push_local(&mut files)?;
        // One argument that is not a pattern names each partition once (a root, a directory,
        // a topic): only several arguments, or a pattern (`data/**` matches a root and its
        // partition directories), can name one twice.
        let pattern = |p: &PathBuf| p.to_str().is_some_and(|t| t.contains(['*', '?', '[']));
        if args.len() > 1 || args.iter().any(pattern) {
            sources.keep_once();
        }
        Ok(sources)
    }

    /// What opening the sources passed over, one line each: the partitions and files named
    /// more than once, each listed (and read) once.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Lists each partition once (see [`Sources`]), noting those named more than once.
    fn keep_once(&mut self) {
        use std::collections::HashSet;
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        fn note(notes: &mut Vec<String>, n: String) {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        // The files of the partition directories named whole: a file among them is read with
        // its directory.
        let mut dirs: HashMap<PathBuf, PathBuf> = HashMap::new();
        for p in &self.partitions {
            if let Kind::Local(LocalPartition {
                dir: Some(d),
                files,
                ..
            }) = &p.kind
            {
                for f in files {
                    dirs.entry(canonical(f)).or_insert_with(|| d.clone());
                }
            }
        }
        let mut notes = Vec::new();
        let mut seen_dirs = HashSet::new();
        let mut seen_files = HashSet::new();
        #[cfg(feature = "remote")]
        let mut seen_names = HashSet::new();
        let mut seen_live = SeenLive::new();
        let mut kept = Vec::with_capacity(self.partitions.len());
        for mut p in std::mem::take(&mut self.partitions) {
            let again = match &mut p.kind {
                Kind::Stdin => false,
                Kind::Local(LocalPartition { dir: Some(d), .. }) => !seen_dirs.insert(canonical(d)),
                Kind::Local(l) => {
                    l.files.retain(|f| {
                        let c = canonical(f);
                        if let Some(d) = dirs.get(&c) {
                            note(
                                &mut notes,
                                format!(
                                    "{}: named with its partition directory {}, read once, with \
                                     it",
                                    f.display(),
                                    d.display()
                                ),
                            );
                            return false;
                        }
                        let first = seen_files.insert(c);
                        if !first {
                            let n = format!("{}: named more than once, read once", f.display());
                            note(&mut notes, n);
                        }
                        first
                    });
                    match l.files.first() {
                        Some(f) => {
                            p.name = f.display().to_string();
                            false
                        }
                        // Every file said above.
                        None => continue,
                    }
                }
                // One partition of one cluster, however the URLs spell its servers.
                Kind::Live(l) => match seen_live.repeat(l) {
                    Some(n) => {
                        note(&mut notes, n);
                        continue;
                    }
                    None => false,
                },
                #[cfg(feature = "remote")]
                Kind::Remote(_) => !seen_names.insert(p.name.clone()),
            };
            if again {
                note(
                    &mut notes,
                    format!("{}: named more than once, read once", p.name),
                );
                continue;
            }
            kept.push(p);
        }
        self.partitions = kept;
        self.notes = notes;
    }

    fn push_local(&mut self, files: &mut Vec<PathBuf>) -> Result<(), Error> {
        if files.is_empty() {
            return Ok(());
        }
        // A path that is not there is said now, before anything is read (a glob pattern is
        // matched instead; `-` is standard input).
        for p in files.iter() {
            let pattern = p.to_str().is_some_and(|t| t.contains(['*', '?', '[']));
            if p.as_os_str() != "-" && !pattern {
                if let Err(e) = std::fs::metadata(p) {
                    return Err(Error::io(format!("cannot open {}", p.display()), e));
                }
            }
        }
        let expanded = spec::expand_local(files).map_err(|e| Error::io("cannot list input", e))?;
        files.clear();
        for l in expanded {
            let name = match (&l.dir, l.files.first()) {
                (Some(d), _) => d.display().to_string(),
                (None, Some(f)) => f.display().to_string(),
                (None, None) => String::new(),
            };
            self.partitions.push(Partition {
                name,
                topic: l.id.as_ref().map(|(t, _)| t.clone()),
                partition: l.id.as_ref().map(|&(_, p)| p),
                kind: Kind::Local(l),
            });
        }
        Ok(())
    }

    /// Keeps the partitions `filter` takes ([`PartitionFilter::take`]: by topic and number; a
    /// partition without a topic, a file's or standard input's, only when it takes every
    /// partition), noting them in `taken`.
    pub fn retain(&mut self, filter: &PartitionFilter, taken: &mut Taken) {
        self.partitions
            .retain(|p| filter.take(taken, p.topic.as_deref(), p.partition));
    }

    /// [`Sources::retain`] of these sources alone, named `source` in the error.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`]: the filter takes none of the partitions (the message of
    /// [`krecords_log::data_dir::SelectError::NoMatch`]: the filter and the topics there are).
    pub fn select(&mut self, filter: &PartitionFilter, source: &str) -> Result<(), Error> {
        let mut taken = Taken::default();
        self.retain(filter, &mut taken);
        filter
            .check(&taken, source)
            .map_err(|e| Error::Usage(e.to_string()))
    }

    /// Whether any partition is live.
    pub fn has_live(&self) -> bool {
        self.live.is_some()
    }

    /// The watermarks of partition `index`: from its log for a directory, from its entries for
    /// files, ListOffsets for a live partition; `None` for standard input.
    ///
    /// # Errors
    ///
    /// The log, the files or the broker cannot be read; a directory whose log ends at damage
    /// in its middle ([`krecords_log::Log::damage`]: its end is not the partition's).
    pub fn watermarks(&self, index: usize) -> Result<Option<Watermarks>, Error> {
        let Some(part) = self.partitions.get(index) else {
            return Ok(None);
        };
        match &part.kind {
            Kind::Stdin => Ok(None),
            Kind::Local(l) => Ok(match &l.dir {
                // A log whose end is damage has no high watermark to tell.
                Some(d) => match local::dir_facts(d)?.0 {
                    local::Facts {
                        damage: Some(damage),
                        ..
                    } => return Err(reader::damage_error(Some(&damage))),
                    f => f.watermarks,
                },
                None => local::files_facts(&l.files)?.watermarks,
            }),
            Kind::Live(p) => {
                let Some(live) = &self.live else {
                    return Ok(None);
                };
                let w = live
                    .rt
                    .wait(p.watermarks())
                    .map_err(|e| Error::client(p.name.clone(), e))?;
                Ok(Some(w))
            }
            #[cfg(feature = "remote")]
            Kind::Remote(r) => Ok(r.source_facts(false)?.watermarks),
        }
    }

    /// The first offset of partition `index` whose timestamp is at or after `ms` (Kafka's
    /// ListOffsets by time), `None` after the last record (and for standard input).
    ///
    /// # Errors
    ///
    /// The log, the files or the broker cannot be read.
    pub fn offset_for_time(
        &self,
        index: usize,
        ms: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<i64>, Error> {
        let Some(part) = self.partitions.get(index) else {
            return Ok(None);
        };
        match &part.kind {
            Kind::Stdin => Ok(None),
            Kind::Local(l) => match &l.dir {
                Some(d) => local::dir_time(&local::dir_facts(d)?.1, ms),
                None => local::files_time(&l.files, ms, krecords_codec::DEFAULT_DECOMPRESS_LIMIT),
            },
            Kind::Live(p) => {
                let Some(live) = &self.live else {
                    return Ok(None);
                };
                live.rt
                    .wait(p.offset_for_time(ms, isolation))
                    .map_err(|e| Error::client(p.name.clone(), e))
            }
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.offset_for_time(ms, krecords_codec::DEFAULT_DECOMPRESS_LIMIT),
        }
    }

    /// Kafka's ListOffsets on partition `index`, answered as a consumer at `isolation` asks it:
    /// earliest is the log start offset, latest where such a consumer stops (the last stable
    /// offset at read_committed, else the high watermark), a time the first offset at or after
    /// it with that time (offset -1 and no timestamp when there is none). A partition without
    /// watermarks (standard input) answers 0.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] for [`OffsetSpec::MaxTimestamp`], which only a log directory answers
    /// (`krecords_log::Log::offsets`); the log, the files or the broker cannot be read.
    pub fn list_offsets(
        &self,
        index: usize,
        spec: OffsetSpec,
        isolation: IsolationLevel,
    ) -> Result<ListOffsetsResult, Error> {
        let w = self.watermarks(index)?.unwrap_or(Watermarks::EMPTY);
        let (offset, timestamp) = match spec {
            OffsetSpec::Earliest => (w.log_start, None),
            OffsetSpec::Latest => (w.readable_end(isolation), None),
            OffsetSpec::MaxTimestamp => {
                let name = self.partitions.get(index).map_or("", |p| p.name.as_str());
                return Err(Error::Usage(format!(
                    "{name}: --max-timestamp is answered from a log directory only"
                )));
            }
            OffsetSpec::Timestamp(t) => {
                let found = self.offset_for_time(index, t, isolation)?;
                (found.unwrap_or(-1), found.map(|_| t))
            }
        };
        Ok(ListOffsetsResult {
            offset,
            timestamp,
            leader_epoch: None,
        })
    }

    /// `options` for one partition, whose files say `facts`, of these sources: when they are
    /// several partitions, an end offset past its end ends at its end ([`Range::ending_within`])
    /// — unless damage ends its log as read (a read past it is not whole, and says so).
    fn one_of(&self, options: &ReadOptions, facts: &local::Facts) -> ReadOptions {
        match (&facts.watermarks, &facts.damage) {
            (Some(w), None) if self.partitions.len() > 1 => ReadOptions {
                range: options.range.ending_within(w),
                ..*options
            },
            _ => *options,
        }
    }

    /// Opens partition `index` for reading `options.range` at `options.isolation`. Of several
    /// partitions, one that ends before an end offset asked for is read to its end
    /// ([`Range::ending_within`]); a partition read alone refuses an end past it.
    ///
    /// # Errors
    ///
    /// A position outside the partition or an empty range given explicitly (usage errors with
    /// the resolved offsets), read_committed on standard input, a log or broker that cannot
    /// be read.
    pub fn read(&self, index: usize, options: &ReadOptions) -> Result<Reader, Error> {
        options.range.check()?;
        let part = self
            .partitions
            .get(index)
            .ok_or_else(|| Error::Usage(format!("no partition {index}")))?;
        let committed = options.isolation == IsolationLevel::ReadCommitted;
        let limit = options.max_decompressed_bytes;
        let mut setup = Setup {
            name: part.name.clone(),
            pending: Pending::Stdin,
            range: Resolved::ALL,
            isolation: options.isolation,
            aborted: None,
            watermarks: None,
            open_txn: None,
            max_bytes: options.max_bytes,
            limit,
            damage: None,
            counted: options.counted,
            as_log: false,
            check_offsets: options.as_log,
        };
        match &part.kind {
            Kind::Stdin => {
                if committed {
                    return Err(Error::Usage(
                        "-: read_committed needs the partition's transaction markers and last \
                         stable offset before reading, which standard input cannot give (it \
                         is read once); save it to a file, or read it read_uncommitted"
                            .into(),
                    ));
                }
                setup.range = options
                    .range
                    .resolve(None, options.isolation, &mut |_| Ok(None))
                    .map_err(|e| e.named(&part.name))?;
            }
            Kind::Local(l) => {
                let mut files: VecDeque<PathBuf> = l.files.iter().cloned().collect();
                // Files without their directory are read as they are.
                let as_log = options.as_log && l.dir.is_some();
                setup.as_log = as_log;
                if !options.range.is_all() || committed || as_log {
                    let (facts, log) = match &l.dir {
                        Some(d) => {
                            let (f, log) = local::dir_facts(d)?;
                            (f, Some(log))
                        }
                        None => (local::files_facts(&l.files)?, None),
                    };
                    let mut time = |ms| match &log {
                        Some(log) => local::dir_time(log, ms),
                        None => local::files_time(&l.files, ms, limit),
                    };
                    let options = &self.one_of(options, &facts);
                    setup
                        .resolve(options, &facts, &mut time)
                        .map_err(|e| e.named(&part.name))?;
                    let start = setup.range.start;
                    // Segments that end before the start: the next one's base offset is at or
                    // below it.
                    while files.len() > 1
                        && files
                            .get(1)
                            .and_then(|f| krecords_log::check::segment_base(f))
                            .is_some_and(|b| b <= start)
                    {
                        files.pop_front();
                    }
                    // Segments that start at or after the end are never opened.
                    if let Some(end) = setup.range.end {
                        while files.len() > 1
                            && files
                                .back()
                                .and_then(|f| krecords_log::check::segment_base(f))
                                .is_some_and(|b| b >= end)
                        {
                            files.pop_back();
                        }
                    }
                }
                setup.pending = Pending::Files(files);
            }
            #[cfg(feature = "remote")]
            Kind::Remote(r) => {
                let (mut start, mut end) = (None, None);
                if !options.range.is_all() || committed {
                    let facts = r.source_facts(committed)?;
                    let mut time = |ms| r.offset_for_time(ms, limit);
                    let options = &self.one_of(options, &facts);
                    setup
                        .resolve(options, &facts, &mut time)
                        .map_err(|e| e.named(&part.name))?;
                    start = Some(setup.range.start);
                    end = setup.range.end;
                }
                setup.pending = Pending::Remote(r.files(start, end).into());
            }
            Kind::Live(p) => {
                let live = self
                    .live
                    .as_ref()
                    .ok_or_else(|| Error::Usage("no runtime".into()))?;
                let ahead: Vec<LivePartition> = self
                    .partitions
                    .iter()
                    .skip(index)
                    .filter_map(Partition::live)
                    .cloned()
                    .collect();
                let several = self.partitions.len() > 1;
                let mut rx = live.chunks(&ahead, options.range, options.isolation, several)?;
                match live.rt.wait(rx.recv()) {
                    Some(Ok(live::Msg::Start(wm, resolved))) => {
                        setup.watermarks = Some(wm);
                        setup.range = resolved;
                    }
                    Some(Err(e)) => return Err(e),
                    _ => {
                        return Err(Error::Usage(format!(
                            "{}: the partition's fetching ended early",
                            p.name
                        )))
                    }
                }
                setup.pending = Pending::Live(Box::new((live.rt.clone(), rx, p.clone())));
            }
        }
        Ok(R::new(setup))
    }
}
