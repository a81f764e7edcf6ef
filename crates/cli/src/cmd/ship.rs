//! `krec ship SOURCE… kafka://HOST:PORT/TOPIC[/PARTITION]`: copy committed source data into a
//! Kafka topic exactly once, in target transactions, without re-encoding.
//!
//! Glue only: sources are read at read_committed (a local log or partition directory with
//! [`krecords_log::Log::fetch`], segment files through a read-only view of them, a `kafka://`
//! partition with the client's stream), each fetch is planned with
//! [`krecords_log::ship::plan`], and the batches go out with the client's
//! [`krecords_client::TransactionalProducer`]. The protocol (docs/design.md, "krec ship"):
//!
//! * transactional id and consumer group `krec-ship-JOB`;
//! * at start: InitProducerId (fences an older `krec ship` of the job and aborts its open
//!   transaction), then OffsetFetch with require_stable: the group's committed offset of each
//!   target partition carries, in its metadata, the position (next source offset) of every
//!   source shipped to that partition;
//! * then per transaction (up to `--txn-bytes` of source data): Produce the batches,
//!   TxnOffsetCommit the new positions, EndTxn commit. A crash anywhere leaves either the
//!   whole transaction (data and position) or none of it.

use crate::args::Format;
use crate::kafka::{config_from, KafkaUrl};
use crate::outcome::{Failure, Outcome};
use crate::progress::Progress;
use krecords_client::{
    Client, ClientConfig, IsolationLevel, OffsetToCommit, PartitionStream, TransactionalProducer,
};
use krecords_codec::Compression;
use krecords_log::ship::{plan, Plan, PlanOptions, ShipKind};
use krecords_log::transaction::AbortedTransaction;
use krecords_log::Log;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// Metadata format tag of the committed positions.
const POSITIONS_TAG: &str = "krec-ship/1";

/// Copy committed data of local logs, partition directories, segment files or another
/// cluster's partition into a Kafka topic, exactly once (transactions), keeping v2 batches'
/// records bytes and compression. Resumable: run it again with the same --job.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Sources then the target: SOURCE… kafka://HOST:PORT[,…]/TOPIC[/PARTITION]. A SOURCE is
    /// a log or partition directory (`NAME-N` goes to partition N unless the target names
    /// one), segment files (`.log`, grouped by directory), or kafka://HOST:PORT/TOPIC/PARTITION
    /// of another cluster.
    // One or more values per occurrence (options may stand between the sources and the
    // target); `run` asks for at least two in all.
    #[arg(required = true, num_args = 1.., value_name = "SOURCE… TARGET")]
    paths: Vec<String>,
    /// Job name: the transactional id and consumer group are `krec-ship-JOB`; default: the
    /// target topic.
    #[arg(long)]
    job: Option<String>,
    /// A client property NAME=VALUE (librdkafka names), for the target and kafka:// sources.
    #[arg(short = 'X', value_name = "NAME=VALUE")]
    property: Vec<String>,
    /// A file of NAME=VALUE lines, read before the -X options.
    #[arg(short = 'F', value_name = "FILE")]
    config_file: Vec<PathBuf>,
    /// A client property for kafka:// sources only, applied after -F and -X (a source cluster
    /// with other security settings than the target's).
    #[arg(long = "source-X", value_name = "NAME=VALUE")]
    source_property: Vec<String>,
    /// A file of NAME=VALUE lines for kafka:// sources only, read after -F and -X and before
    /// --source-X.
    #[arg(long = "source-F", value_name = "FILE")]
    source_config_file: Vec<PathBuf>,
    /// Output of the final report: a few lines for people, or one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Keep shipping what is appended to the sources (polling every --poll-ms); stop with a
    /// signal (a later run resumes exactly).
    #[arg(long)]
    follow: bool,
    /// Poll interval of --follow, in ms.
    #[arg(long, default_value_t = 500, value_name = "MS")]
    poll_ms: u64,
    /// Recompress every batch with this codec (none, gzip, snappy, lz4, zstd); default: keep.
    #[arg(long, value_name = "CODEC")]
    compression: Option<String>,
    /// Source bytes per target transaction (a crash costs at most one transaction of work).
    #[arg(long, default_value_t = 64 << 20, value_name = "BYTES")]
    txn_bytes: u64,
    /// Target partitions shipped at once, each on a connection of its own (a broker appends
    /// one connection's requests one at a time); with --follow, all of them.
    #[arg(long, default_value_t = 4, value_name = "N")]
    parallel: usize,
}

/// Where a source's data comes from.
enum Kind {
    /// A log or partition directory (a read-only view, reopened to see appends).
    Dir(PathBuf),
    /// Segment files, linked into a private directory that is then read as a log.
    Segments(LinkedDir),
    /// A partition of a live cluster.
    Kafka(KafkaUrl, i32),
}

/// One source and its target partition.
struct Source {
    /// Stable identity, the key of its position in the committed metadata.
    id: String,
    kind: Kind,
    partition: i32,
}

/// A private directory of symlinks to segment files, removed on drop.
struct LinkedDir {
    /// The directory made for it (removed on drop).
    base: PathBuf,
    /// The log directory inside.
    path: PathBuf,
}

impl Drop for LinkedDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// `base` with the --source-F files, then the --source-X properties, applied.
fn layered(
    mut base: ClientConfig,
    files: &[PathBuf],
    properties: &[String],
) -> Result<ClientConfig, Failure> {
    for f in files {
        base.apply_file(f)
            .map_err(|e| usage(format!("--source-F {}: {e}", f.display())))?;
    }
    for x in properties {
        base.set_pair(x)
            .map_err(|e| usage(format!("--source-X {x}: {e}")))?;
    }
    Ok(base)
}

fn usage(msg: impl Into<String>) -> Failure {
    Failure::Usage(msg.into())
}

/// `NAME-N` → N.
fn partition_of_dir(path: &Path) -> Option<i32> {
    let name = path.file_name()?.to_str()?;
    let (_, n) = name.rsplit_once('-')?;
    n.parse().ok().filter(|n: &i32| *n >= 0)
}

fn client_failure(what: &str, e: &krecords_client::Error) -> Failure {
    match e {
        krecords_client::Error::Corrupt { .. } => Failure::Data(format!("{what}: {e}")),
        _ => Failure::Usage(format!("{what}: {e}")),
    }
}

fn log_failure(what: &str, e: &krecords_log::Error) -> Failure {
    let text = format!("{what}: {e}");
    match e {
        krecords_log::Error::Io { .. } | krecords_log::Error::NotALog { .. } => {
            Failure::Usage(text)
        }
        _ => Failure::Data(text),
    }
}

/// Sorts the SOURCE arguments into sources; `target_partition` overrides `NAME-N`.
fn sources(args: &[String], target_partition: Option<i32>) -> Result<Vec<Source>, Failure> {
    let mut out = Vec::new();
    let mut segments: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let pick = |found: Option<i32>, what: &str| -> Result<i32, Failure> {
        target_partition.or(found).ok_or_else(|| {
            usage(format!(
                "{what}: no partition: name the target partition (kafka://…/TOPIC/N) or use a NAME-N directory"
            ))
        })
    };
    for a in args {
        if let Some(url) = KafkaUrl::parse(a) {
            let url = url.map_err(Failure::Usage)?;
            let Some(p) = url.partition else {
                return Err(usage(format!(
                    "{a}: a kafka:// source must name one partition"
                )));
            };
            out.push(Source {
                id: format!("kafka://{}/{}/{p}", url.servers, url.topic),
                partition: pick(Some(p), a)?,
                kind: Kind::Kafka(url, p),
            });
            continue;
        }
        let path = PathBuf::from(a);
        let canonical =
            std::fs::canonicalize(&path).map_err(|e| Failure::Io(e, format!("cannot open {a}")))?;
        if canonical.is_dir() {
            // The name given first (a link named NAME-N), then the directory's own.
            let found = partition_of_dir(&path).or_else(|| partition_of_dir(&canonical));
            out.push(Source {
                id: canonical.display().to_string(),
                partition: pick(found, a)?,
                kind: Kind::Dir(canonical),
            });
        } else {
            let parent = canonical
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            segments.entry(parent).or_default().push(canonical);
        }
    }
    for (dir, files) in segments {
        let partition = pick(partition_of_dir(&dir), &dir.display().to_string())?;
        let linked = link_segments(&dir, &files, partition)?;
        let names: Vec<String> = files
            .iter()
            .filter_map(|f| f.file_name().and_then(|n| n.to_str()).map(str::to_owned))
            .collect();
        out.push(Source {
            id: format!("{}/{{{}}}", dir.display(), names.join(",")),
            partition,
            kind: Kind::Segments(linked),
        });
    }
    Ok(out)
}

/// Links `files` (and their index files, when present) into a new private directory.
fn link_segments(dir: &Path, files: &[PathBuf], partition: i32) -> Result<LinkedDir, Failure> {
    let base = std::env::temp_dir().join(format!("krec-ship-{}-{partition}", std::process::id()));
    let path = base.join(format!("segments-{partition}"));
    std::fs::create_dir_all(&path)
        .map_err(|e| Failure::Io(e, format!("cannot create {}", path.display())))?;
    let linked = LinkedDir {
        base,
        path: path.clone(),
    };
    for f in files {
        if f.extension().and_then(|e| e.to_str()) != Some("log") {
            return Err(usage(format!(
                "{}: not a segment file (.log) or directory",
                f.display()
            )));
        }
        for ext in ["log", "index", "timeindex", "txnindex"] {
            let src = f.with_extension(ext);
            if !src.exists() {
                continue;
            }
            let Some(name) = src.file_name() else {
                continue;
            };
            std::os::unix::fs::symlink(&src, path.join(name)).map_err(|e| {
                Failure::Io(
                    e,
                    format!("cannot link {} from {}", src.display(), dir.display()),
                )
            })?;
        }
    }
    Ok(linked)
}

/// A source being read: the next fetch of committed data.
enum Reader {
    Log {
        dir: PathBuf,
        log: Option<Box<Log>>,
    },
    Kafka {
        client: Client,
        topic: String,
        partition: i32,
        stream: Option<PartitionStream>,
    },
}

/// One fetch's committed bytes.
struct Fetched {
    bytes: Vec<u8>,
    aborted: Vec<AbortedTransaction>,
    /// Where reading continues (past gaps with no entries).
    next_offset: i64,
    /// The source's last stable offset when it was read, if known (for the lag shown).
    end: Option<i64>,
}

/// Largest fetch from a local log (a kafka:// source fetches max.partition.fetch.bytes). Small
/// enough that reading and planning one takes less time than the broker spends on the
/// requests in flight meanwhile.
const FETCH_BYTES: usize = 1 << 20;

impl Reader {
    /// The next fetch from `pos`; `None` at the end of the committed data seen so far (a
    /// --follow caller calls [`Reader::refresh`] and tries again).
    fn next(
        &mut self,
        rt: &Runtime,
        pos: i64,
        max_bytes: usize,
        name: &str,
    ) -> Result<Option<Fetched>, Failure> {
        match self {
            Reader::Log { dir, log } => {
                if log.is_none() {
                    *log = Some(Box::new(
                        Log::open_read_only(&*dir).map_err(|e| log_failure(name, &e))?,
                    ));
                }
                let Some(l) = log.as_ref() else {
                    return Ok(None);
                };
                let pos = pos.max(l.log_start_offset());
                if pos >= l.last_stable_offset() {
                    return Ok(None);
                }
                let f = l
                    .fetch(
                        pos,
                        max_bytes.clamp(1, FETCH_BYTES),
                        krecords_log::transaction::IsolationLevel::ReadCommitted,
                    )
                    .map_err(|e| log_failure(name, &e))?;
                if f.bytes.is_empty() {
                    return Ok(None);
                }
                Ok(Some(Fetched {
                    bytes: f.bytes,
                    aborted: f.aborted_transactions.unwrap_or_default(),
                    next_offset: f.next_offset,
                    end: Some(f.last_stable_offset),
                }))
            }
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
                        bytes: c.records.to_vec(),
                        aborted: c.aborted_transactions,
                        next_offset: c.next_offset,
                        end: Some(c.last_stable_offset),
                    })),
                    Ok(None) => Ok(None),
                    Err(e) => Err(client_failure(name, &e)),
                }
            }
        }
    }

    /// For a local log whose reading stopped at its last stable offset below its high
    /// watermark: (last stable offset, high watermark). A transaction is open there; what
    /// follows it waits for its end.
    fn stalled(&self) -> Option<(i64, i64)> {
        match self {
            Reader::Log { log: Some(l), .. } if l.last_stable_offset() < l.high_watermark() => {
                Some((l.last_stable_offset(), l.high_watermark()))
            }
            _ => None,
        }
    }

    /// Forgets what was read so that the next fetch sees appended data.
    fn refresh(&mut self) {
        match self {
            Reader::Log { log, .. } => *log = None,
            Reader::Kafka { stream, .. } => *stream = None,
        }
    }
}

/// What the lanes share while shipping.
struct Context<'a> {
    rt: &'a Runtime,
    /// The client configuration for kafka:// sources.
    base: &'a ClientConfig,
    options: PlanOptions,
    /// The target topic.
    topic: &'a str,
    follow: bool,
    producer: TransactionalProducer,
    /// Per target partition: each source's position (what is committed, plus what this
    /// transaction moved).
    positions: BTreeMap<i32, BTreeMap<String, i64>>,
    totals: BTreeMap<i32, Totals>,
}

/// A failed step: the target's errors are named after the target by the caller.
enum StepError {
    Client(krecords_client::Error),
    Other(Failure),
}

impl From<Failure> for StepError {
    fn from(f: Failure) -> Self {
        StepError::Other(f)
    }
}

/// The sources of one target partition, shipped one after the other.
struct Lane<'a> {
    partition: i32,
    sources: Vec<&'a Source>,
    /// The source being read: an index into `sources`.
    current: usize,
    reader: Option<Reader>,
    /// Where reading continues in the current source.
    pos: i64,
    /// Read to the end of its last source (until the next --follow poll).
    idle: bool,
    /// When it became idle (--follow polls again --poll-ms later).
    idle_since: Option<Instant>,
    /// Positions moved since the last commit.
    moved: bool,
    /// Committed source records not read yet, as of the last fetch.
    lag: i64,
}

impl<'a> Lane<'a> {
    fn new(partition: i32, sources: Vec<&'a Source>) -> Self {
        Lane {
            partition,
            sources,
            current: 0,
            reader: None,
            pos: 0,
            idle: false,
            idle_since: None,
            moved: false,
            lag: 0,
        }
    }

    /// Reads one fetch of the current source (moving on to the next source at the end of
    /// one), plans it and sends its batches. The source bytes read, or `None` once the last
    /// source has nothing more (the lane is then idle).
    fn step(&mut self, cx: &mut Context<'_>, budget: usize) -> Result<Option<u64>, StepError> {
        loop {
            let Some(&source) = self.sources.get(self.current) else {
                self.set_idle();
                return Ok(None);
            };
            let reader = match &mut self.reader {
                Some(r) => r,
                None => {
                    self.pos = cx
                        .positions
                        .get(&self.partition)
                        .and_then(|p| p.get(&source.id))
                        .copied()
                        .unwrap_or(0);
                    cx.totals
                        .entry(self.partition)
                        .or_default()
                        .sources
                        .push(source.id.clone());
                    self.reader.insert(open_reader(source, cx)?)
                }
            };
            let Some(f) = reader.next(cx.rt, self.pos, budget, &source.id)? else {
                self.lag = 0;
                let last = self.current + 1 == self.sources.len();
                if last && cx.follow {
                    self.set_idle();
                    return Ok(None);
                }
                if let Some((lso, hw)) = reader.stalled() {
                    eprintln!(
                        "krec: note: {}: stopped at offset {lso}, the last stable offset (high watermark {hw}): a transaction is still open there; run again once it has ended",
                        source.id
                    );
                }
                self.current += 1;
                self.reader = None;
                continue;
            };
            let p = plan(&f.bytes, self.pos, &f.aborted, &cx.options)
                .map_err(|e| log_failure(&source.id, &e))?;
            let t = cx.totals.entry(self.partition).or_default();
            t.add_plan(&p);
            let next = p.next_offset.max(f.next_offset).max(self.pos);
            self.lag = f.end.map_or(0, |end| (end - next).max(0));
            if next != self.pos {
                self.pos = next;
                self.moved = true;
                cx.positions
                    .entry(self.partition)
                    .or_default()
                    .insert(source.id.clone(), next);
            }
            let read = p.source_bytes.max(1);
            if p.batches.is_empty() {
                return Ok(Some(read));
            }
            let producer = &mut cx.producer;
            if !producer.in_transaction() {
                producer.begin().map_err(StepError::Client)?;
            }
            let (topic, partition) = (cx.topic, self.partition);
            // Batches shipped as is are cut out of the fetch's buffer, not copied: the producer
            // patches their headers in place.
            let batches = p.into_bytes(f.bytes);
            cx.rt
                .block_on(async {
                    for b in batches {
                        producer.send(topic, partition, b).await?;
                    }
                    Ok(())
                })
                .map_err(StepError::Client)?;
            return Ok(Some(read));
        }
    }

    fn set_idle(&mut self) {
        self.idle = true;
        self.idle_since = Some(Instant::now());
    }

    /// After a --follow poll interval: look for appended data again.
    fn wake(&mut self) {
        if let Some(r) = self.reader.as_mut() {
            r.refresh();
        }
        self.idle = false;
        self.idle_since = None;
    }
}

/// Opens the reader of `source`.
fn open_reader(source: &Source, cx: &Context<'_>) -> Result<Reader, Failure> {
    Ok(match &source.kind {
        Kind::Dir(d) => Reader::Log {
            dir: d.clone(),
            log: None,
        },
        Kind::Segments(l) => Reader::Log {
            dir: l.path.clone(),
            log: None,
        },
        Kind::Kafka(url, p) => {
            let mut c = cx.base.clone();
            c.set("bootstrap.servers", &url.servers)
                .map_err(|e| usage(format!("{}: {e}", source.id)))?;
            let sc = cx
                .rt
                .block_on(Client::connect(c))
                .map_err(|e| client_failure(&source.id, &e))?;
            Reader::Kafka {
                client: sc,
                topic: url.topic.clone(),
                partition: *p,
                stream: None,
            }
        }
    })
}

/// Per target partition totals for the report.
#[derive(Default)]
struct Totals {
    sources: Vec<String>,
    as_is: u64,
    rebatched: u64,
    upconverted: u64,
    skipped_control: u64,
    skipped_aborted: u64,
    records: u64,
    bytes: u64,
    source_bytes: u64,
    transactions: u64,
    first_offset: Option<i64>,
    last_offset: Option<i64>,
    duplicates: u64,
}

impl Totals {
    fn add_plan(&mut self, p: &Plan) {
        self.skipped_control += p.skipped_control;
        self.skipped_aborted += p.skipped_aborted;
        self.source_bytes += p.source_bytes;
        for b in &p.batches {
            match b.kind {
                ShipKind::AsIs => self.as_is += 1,
                ShipKind::Rebatched => self.rebatched += 1,
                ShipKind::UpConverted => self.upconverted += 1,
            }
            self.records += b.records as u64;
            self.bytes += b.bytes.len() as u64;
        }
    }

    fn json(&self, partition: i32) -> Value {
        json!({
            "partition": partition,
            "sources": self.sources,
            "transactions": self.transactions,
            "batches_as_is": self.as_is,
            "batches_rebatched": self.rebatched,
            "batches_upconverted": self.upconverted,
            "batches_skipped_control": self.skipped_control,
            "batches_skipped_aborted": self.skipped_aborted,
            "records": self.records,
            "bytes": self.bytes,
            "source_bytes": self.source_bytes,
            "target_first_offset": self.first_offset,
            "target_last_offset": self.last_offset,
            "duplicate_batches": self.duplicates,
        })
    }
}

/// Parses the committed metadata of a target partition: source id → next source offset.
fn parse_positions(meta: Option<&str>, what: &str) -> Result<BTreeMap<String, i64>, Failure> {
    let Some(meta) = meta else {
        return Ok(BTreeMap::new());
    };
    let v: Value = serde_json::from_str(meta).map_err(|_| {
        usage(format!("{what}: the group's committed metadata is not krec ship's ({meta:?}): another job name?"))
    })?;
    if v.get("format").and_then(Value::as_str) != Some(POSITIONS_TAG) {
        return Err(usage(format!(
            "{what}: the group's committed metadata is not krec ship's: another job name?"
        )));
    }
    let mut out = BTreeMap::new();
    if let Some(m) = v.get("positions").and_then(Value::as_object) {
        for (k, v) in m {
            if let Some(n) = v.as_i64() {
                out.insert(k.clone(), n);
            }
        }
    }
    Ok(out)
}

fn positions_json(positions: &BTreeMap<String, i64>) -> String {
    json!({ "format": POSITIONS_TAG, "positions": positions }).to_string()
}

/// Runs `krec ship`.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let started = Instant::now();
    let Some((target_arg, source_args)) = args.paths.split_last() else {
        return Err(usage("krec ship: SOURCE… TARGET"));
    };
    if source_args.is_empty() {
        return Err(usage(
            "krec ship: SOURCE… TARGET: name at least one source before the target",
        ));
    }
    let target = match KafkaUrl::parse(target_arg) {
        Some(r) => r.map_err(Failure::Usage)?,
        None => {
            return Err(usage(format!(
                "{target_arg}: the target must be kafka://HOST:PORT/TOPIC[/PARTITION]"
            )))
        }
    };
    let compression = args
        .compression
        .as_deref()
        .map(|c| {
            Compression::from_name(c)
                .ok_or_else(|| usage(format!("--compression {c}: unknown codec")))
        })
        .transpose()?;
    let options = PlanOptions { compression };
    let sources = sources(source_args, target.partition)?;
    let job = args.job.clone().unwrap_or_else(|| target.topic.clone());
    let txn_id = format!("krec-ship-{job}");
    let group = txn_id.clone();
    let mut config: ClientConfig = config_from(&args.config_file, &args.property)?;
    let base = layered(
        config.clone(),
        &args.source_config_file,
        &args.source_property,
    )?;
    config
        .set("bootstrap.servers", &target.servers)
        .map_err(|e| usage(format!("{target_arg}: {e}")))?;
    // One I/O thread: the target partitions' Produce tasks write and read there while this
    // thread reads and plans the sources.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| Failure::Io(e, "cannot start the I/O runtime".into()))?;
    let tname = format!("kafka://{}/{}", target.servers, target.topic);
    let fail = |e: krecords_client::Error| client_failure(&tname, &e);
    let client = rt.block_on(Client::connect(config)).map_err(fail)?;

    // The target topic must exist with every partition the sources need.
    let md = rt
        .block_on(client.metadata(Some(&[target.topic.as_str()])))
        .map_err(fail)?;
    let topic = md.topics.iter().find(|t| t.name == target.topic);
    match topic {
        None => return Err(usage(format!("{tname}: the topic does not exist"))),
        Some(t)
            if t.error.and_then(|c| c.response_error())
                == Some(
                    krecords_client::kafka_protocol::ResponseError::UnknownTopicOrPartition,
                ) =>
        {
            return Err(usage(format!("{tname}: the topic does not exist")))
        }
        Some(t) if t.error.is_some() => {
            let code = t.error.map(|c| c.name()).unwrap_or_default();
            return Err(usage(format!("{tname}: the topic cannot be used: {code}")));
        }
        Some(t) => {
            for s in &sources {
                if !t.partitions.iter().any(|p| p.partition == s.partition) {
                    return Err(usage(format!(
                        "{tname}: the topic has {} partitions, {} needs partition {}",
                        t.partitions.len(),
                        s.id,
                        s.partition
                    )));
                }
            }
        }
    }

    // Fence an older run and abort its open transaction, then read where the last commit ended.
    let producer: TransactionalProducer = rt
        .block_on(client.transactional_producer(&txn_id))
        .map_err(fail)?;
    let mut partitions: Vec<i32> = sources.iter().map(|s| s.partition).collect();
    partitions.sort_unstable();
    partitions.dedup();
    let committed = rt
        .block_on(client.offset_fetch(&group, &target.topic, &partitions, true))
        .map_err(fail)?;
    let mut positions: BTreeMap<i32, BTreeMap<String, i64>> = BTreeMap::new();
    for p in &partitions {
        let meta = committed
            .iter()
            .find(|c| c.partition == *p)
            .and_then(|c| c.metadata.as_deref());
        positions.insert(
            *p,
            parse_positions(meta, &format!("{tname}/{p} group {group}"))?,
        );
    }

    // One lane per target partition (its sources in order); up to --parallel lanes are
    // shipped at once, each on its own connection, in shared transactions.
    let mut by_partition: BTreeMap<i32, Vec<&Source>> = BTreeMap::new();
    for s in &sources {
        by_partition.entry(s.partition).or_default().push(s);
    }
    let mut waiting: VecDeque<Lane> = by_partition
        .into_iter()
        .map(|(partition, sources)| Lane::new(partition, sources))
        .collect();
    // --follow keeps every lane open: each follows its last source.
    let parallel = if args.follow {
        waiting.len()
    } else {
        args.parallel.max(1)
    };
    let mut active: Vec<Lane> = Vec::new();
    let mut cx = Context {
        rt: &rt,
        base: &base,
        options,
        topic: &target.topic,
        follow: args.follow,
        producer,
        positions,
        totals: BTreeMap::new(),
    };
    let mut progress = Progress::new("ship", crate::progress::Unit::Bytes, u64::MAX, 0);
    let mut shipped_bytes = 0u64;
    loop {
        while active.len() < parallel {
            let Some(lane) = waiting.pop_front() else {
                break;
            };
            active.push(lane);
        }
        // One transaction: fetches up to --txn-bytes of source data, a fetch per lane in turn,
        // each batch sent as soon as it is planned (the next fetch is read while the broker
        // appends), then every lane's position and the commit.
        let mut txn_source_bytes = 0u64;
        while txn_source_bytes < args.txn_bytes {
            let mut read_any = false;
            for lane in active.iter_mut().filter(|l| !l.idle) {
                let budget =
                    usize::try_from(args.txn_bytes - txn_source_bytes).unwrap_or(usize::MAX);
                if let Some(n) = lane.step(&mut cx, budget).map_err(|e| match e {
                    StepError::Client(e) => fail(e),
                    StepError::Other(f) => f,
                })? {
                    txn_source_bytes += n;
                    read_any = true;
                }
                if txn_source_bytes >= args.txn_bytes {
                    break;
                }
            }
            let done = shipped_bytes + txn_source_bytes;
            let records: u64 = cx.totals.values().map(|t| t.records).sum();
            let lag: i64 = active.iter().map(|l| l.lag).sum();
            progress.message(&format!(
                "ship: {records} records, {} MiB, {:.1} MB/s, lag {lag} records, {} of {} partitions shipping",
                done >> 20,
                done as f64 / started.elapsed().as_secs_f64().max(1e-3) / 1e6,
                active.iter().filter(|l| !l.idle).count(),
                active.len() + waiting.len(),
            ));
            if !read_any {
                break;
            }
        }
        // Also when nothing was produced (only control or aborted batches read): the positions
        // move on in a transaction of their own.
        let no_positions = BTreeMap::new();
        let offsets: Vec<OffsetToCommit> = active
            .iter()
            .filter(|l| l.moved)
            .map(|l| OffsetToCommit {
                topic: target.topic.clone(),
                partition: l.partition,
                offset: l.pos,
                metadata: Some(positions_json(
                    cx.positions.get(&l.partition).unwrap_or(&no_positions),
                )),
            })
            .collect();
        if !offsets.is_empty() {
            let producer = &mut cx.producer;
            if !producer.in_transaction() {
                producer.begin().map_err(fail)?;
            }
            let produced = rt
                .block_on(async {
                    let produced = producer.flush().await?;
                    producer.send_offsets(&group, &offsets).await?;
                    producer.commit().await?;
                    Ok(produced)
                })
                .map_err(fail)?;
            for pr in produced {
                let t = cx.totals.entry(pr.partition).or_default();
                match pr.base_offset {
                    Some(b) => {
                        t.first_offset.get_or_insert(b);
                        t.last_offset = Some(b + i64::from(pr.records) - 1);
                    }
                    None => t.duplicates += 1,
                }
            }
            for lane in active.iter_mut().filter(|l| l.moved) {
                lane.moved = false;
                cx.totals.entry(lane.partition).or_default().transactions += 1;
            }
            shipped_bytes += txn_source_bytes;
        }
        if args.follow {
            // Each idle lane looks again --poll-ms after it found nothing; when all are idle,
            // sleep until the first of those moments.
            let poll = Duration::from_millis(args.poll_ms);
            if active.iter().all(|l| l.idle) {
                let wait = active
                    .iter()
                    .filter_map(|l| l.idle_since)
                    .map(|t| poll.saturating_sub(t.elapsed()))
                    .min()
                    .unwrap_or(poll);
                std::thread::sleep(wait);
            }
            for lane in &mut active {
                if lane.idle_since.is_some_and(|t| t.elapsed() >= poll) {
                    lane.wake();
                }
            }
        } else {
            active.retain(|l| !l.idle);
            if active.is_empty() && waiting.is_empty() {
                break;
            }
        }
    }
    let Context {
        producer, totals, ..
    } = cx;
    progress.finish();
    let elapsed = started.elapsed();
    match args.format {
        Format::Json => {
            let report = json!({
                "job": job,
                "transactional_id": txn_id,
                "group": group,
                "target": tname,
                "producer_id": producer.producer_id(),
                "producer_epoch": producer.epoch(),
                "partitions": totals.iter().map(|(p, t)| t.json(*p)).collect::<Vec<_>>(),
                "elapsed_ms": elapsed.as_millis() as u64,
            });
            writeln!(out, "{report}")?;
        }
        Format::Text => {
            for (p, t) in &totals {
                let range = match (t.first_offset, t.last_offset) {
                    (Some(a), Some(b)) => format!("offsets {a}..={b}"),
                    _ => "nothing new".to_owned(),
                };
                writeln!(
                    out,
                    "{tname}/{p}: {} records in {} transactions, {range}; batches: {} as is, {} re-batched, {} up-converted; skipped: {} control, {} aborted",
                    t.records, t.transactions, t.as_is, t.rebatched, t.upconverted, t.skipped_control, t.skipped_aborted
                )?;
            }
        }
    }
    Ok(Outcome::Ok)
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

    #[test]
    fn positions_round_trip_and_foreign_metadata_is_refused() {
        let mut m = BTreeMap::new();
        m.insert("/data/a-0".to_owned(), 42);
        m.insert("kafka://h:1/t/0".to_owned(), 7);
        let text = positions_json(&m);
        assert_eq!(parse_positions(Some(&text), "x").unwrap(), m);
        assert!(parse_positions(None, "x").unwrap().is_empty());
        assert!(parse_positions(Some("consumer-7"), "x").is_err());
        assert!(parse_positions(Some("{\"format\":\"other\"}"), "x").is_err());
    }
}
