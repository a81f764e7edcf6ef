//! `kafka://HOST:PORT[,HOST:PORT…]/TOPIC[/PARTITION]` sources: a live partition read over the
//! Kafka protocol (krecords-client) and fed to the same entry reader as files.
//!
//! A Fetch response carries the stored batches byte for byte, so a partition's fetched
//! `records` bytes, concatenated, are what its segment files hold over the same offsets: the
//! commands read them through [`crate::source::Source`] like a file. Partitions are read one
//! after another, in order, while the next few are fetched concurrently: each partition's
//! fetching is a task on a current-thread tokio runtime (driven while a read waits), holding at
//! most a couple of chunks of a bounded fetch window (`max.partition.fetch.bytes`, widened for
//! a larger batch) ahead of the reader.

use crate::outcome::{Context, Failure};
use crate::progress::Progress;
use crate::source::{expand_paths, Source};
use bytes::Bytes;
use krecords_client::{
    Chunk, Client, ClientConfig, Error, IsolationLevel, OffsetSpec, PartitionStream,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

const HEADING: &str = "Live clusters (kafka:// sources)";

/// Options for `kafka://` sources.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct KafkaArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// kafka://: where to start: an offset, `earliest` (default), `latest`, or a time (ISO 8601
    /// or `@` and epoch ms, e.g. @1714000000000): the first offset at or after it (ListOffsets).
    #[arg(long, value_name = "POS", help_heading = HEADING)]
    pub start: Option<String>,
    /// kafka://: where to stop (exclusive), as --start; default: the high watermark (last
    /// stable offset for read-committed) seen when the partition's reading starts.
    #[arg(long, value_name = "POS", help_heading = HEADING)]
    pub end: Option<String>,
    /// kafka://: isolation level of the fetches (default: isolation.level, read_committed).
    #[arg(long, help_heading = HEADING, value_parser = crate::isolation::isolation_parser([
        (IsolationLevel::ReadCommitted, "Up to the last stable offset"),
        (IsolationLevel::ReadUncommitted, "Up to the high watermark"),
    ]))]
    pub isolation: Option<IsolationLevel>,
}

/// The client properties of `kafka://` sources (for commands with their own position options).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClientArgs {
    /// kafka://: a client property NAME=VALUE with librdkafka's names (security.protocol,
    /// sasl.mechanism, sasl.username, ssl.ca.location, ...); repeatable. bootstrap.servers
    /// comes from the URL.
    #[arg(short = 'X', value_name = "NAME=VALUE", help_heading = HEADING)]
    property: Vec<String>,
    /// kafka://: a file of NAME=VALUE lines (as -X; `#` comments), read before the -X options.
    #[arg(short = 'F', value_name = "FILE", help_heading = HEADING)]
    config_file: Vec<PathBuf>,
}

/// A position given to `--start` or `--end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// An offset.
    Offset(i64),
    /// The log start offset.
    Earliest,
    /// The high watermark (last stable offset at read_committed).
    Latest,
    /// The first offset whose timestamp is at or after this (ms since the epoch).
    Time(i64),
}

/// Parses `--start`/`--end`.
pub fn parse_position(text: &str) -> Result<Position, String> {
    let t = text.trim();
    match t {
        "earliest" | "beginning" => return Ok(Position::Earliest),
        "latest" | "end" => return Ok(Position::Latest),
        _ => {}
    }
    if let Some(ms) = t.strip_prefix('@') {
        return crate::time_fmt::parse_time(ms).map(Position::Time);
    }
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse()
            .map(Position::Offset)
            .map_err(|e| format!("invalid offset {text:?}: {e}"));
    }
    crate::time_fmt::parse_time(t)
        .map(Position::Time)
        .map_err(|_| {
            format!(
            "invalid position {text:?}: expected an offset, earliest, latest, an ISO 8601 time \
             (2024-04-24T23:06:40Z) or @ and epoch milliseconds (@1714000000000)"
        )
        })
}

/// A parsed `kafka://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaUrl {
    /// `host:port,host:port`.
    pub servers: String,
    /// The topic.
    pub topic: String,
    /// The partition; `None`: every partition.
    pub partition: Option<i32>,
}

impl KafkaUrl {
    /// Parses `kafka://HOST:PORT[,HOST:PORT…]/TOPIC[/PARTITION]`; `None` if `text` is not a
    /// `kafka://` URL at all.
    pub fn parse(text: &str) -> Option<Result<KafkaUrl, String>> {
        let rest = text.strip_prefix("kafka://")?;
        let bad = |why: &str| {
            Err(format!(
                "{text}: {why} (expected kafka://HOST:PORT[,HOST:PORT...]/TOPIC[/PARTITION])"
            ))
        };
        let Some((servers, path)) = rest.split_once('/') else {
            return Some(bad("no topic"));
        };
        if servers.is_empty() {
            return Some(bad("no broker address"));
        }
        for s in servers.split(',') {
            let ok = s
                .rsplit_once(':')
                .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok());
            if !ok {
                return Some(bad(&format!("{s:?} is not HOST:PORT")));
            }
        }
        let path = path.strip_suffix('/').unwrap_or(path);
        let (topic, partition) = match path.split_once('/') {
            None => (path, None),
            Some((t, p)) => match p.parse::<i32>() {
                Ok(n) if n >= 0 => (t, Some(n)),
                _ => return Some(bad(&format!("{p:?} is not a partition number"))),
            },
        };
        if topic.is_empty() {
            return Some(bad("no topic"));
        }
        Some(Ok(KafkaUrl {
            servers: servers.to_owned(),
            topic: topic.to_owned(),
            partition,
        }))
    }
}

/// One partition of a live topic.
#[derive(Debug, Clone)]
pub struct LivePartition {
    /// `kafka://servers/topic/partition`.
    pub name: String,
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    client: Client,
}

/// One input of a command.
#[derive(Debug, Clone)]
pub enum Input {
    /// A file (or `-`).
    File(PathBuf),
    /// A live partition.
    Kafka(LivePartition),
}

impl Input {
    /// The path for a decoder choice by directory name: `TOPIC-N/` for a live partition.
    pub fn decoder_path(&self) -> PathBuf {
        match self {
            Input::File(p) => p.clone(),
            Input::Kafka(k) => Path::new(&format!("{}-{}", k.topic, k.partition)).join("x.log"),
        }
    }

    /// The partition of a live input.
    pub fn partition(&self) -> Option<i32> {
        match self {
            Input::File(_) => None,
            Input::Kafka(k) => Some(k.partition),
        }
    }

    /// The file path, if a file.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Input::File(p) => Some(p),
            Input::Kafka(_) => None,
        }
    }
}

/// Live partitions fetched ahead of the one being read: the partitions of a topic are fetched
/// concurrently, read in partition order.
const PREFETCH_PARTITIONS: usize = 4;

/// Fetched chunks a partition read ahead may hold (each at most a fetch window): what bounds
/// the memory of the read-ahead.
const PREFETCH_CHUNKS: usize = 2;

/// A partition's chunks as its fetching task sends them, each with the stream's end offset.
type ChunkRx = mpsc::Receiver<Result<(Chunk, Option<i64>), Error>>;

/// The inputs of a command: files and live partitions, in argument order.
pub struct Inputs {
    /// Every input.
    pub items: Vec<Input>,
    rt: Option<Rc<Runtime>>,
    start: Option<Position>,
    end: Option<Position>,
    isolation: IsolationLevel,
    /// Fetching tasks started, by partition name.
    fetching: RefCell<HashMap<String, ChunkRx>>,
}

/// A client error as a command failure: exit 2, one line naming the source.
pub fn client_failure(name: &str, e: &Error) -> Failure {
    Failure::Usage(format!("{name}: {e}"))
}

/// Expands the PATH of a command that reads one live partition: the inputs and that
/// partition, or a usage error naming `command` when `path` is not one
/// `kafka://HOST:PORT/TOPIC/PARTITION`.
pub fn expand_one_partition(
    path: &Path,
    args: &KafkaArgs,
    command: &str,
) -> Result<(Inputs, LivePartition), Failure> {
    let inputs = expand_inputs(&[path.to_path_buf()], args)?;
    let [Input::Kafka(live)] = inputs.items.as_slice() else {
        return Err(Failure::Usage(format!(
            "{}: {command} reads one partition: kafka://HOST:PORT/TOPIC/PARTITION",
            path.display()
        )));
    };
    let live = live.clone();
    Ok((inputs, live))
}

/// Expands PATH arguments (see [`expand_paths`]); `kafka://` URLs are resolved to their
/// partitions (a connection and a Metadata request each).
pub fn expand_inputs(paths: &[PathBuf], args: &KafkaArgs) -> Result<Inputs, Failure> {
    let mut inputs = Inputs {
        items: Vec::new(),
        rt: None,
        start: args
            .start
            .as_deref()
            .map(parse_position)
            .transpose()
            .map_err(Failure::Usage)?,
        end: args
            .end
            .as_deref()
            .map(parse_position)
            .transpose()
            .map_err(Failure::Usage)?,
        isolation: IsolationLevel::ReadCommitted,
        fetching: RefCell::new(HashMap::new()),
    };
    let mut files = Vec::new();
    let mut base_config: Option<ClientConfig> = None;
    for p in paths {
        let url = p.to_str().and_then(KafkaUrl::parse);
        let Some(url) = url else {
            files.push(p.clone());
            continue;
        };
        let url = url.map_err(Failure::Usage)?;
        if !files.is_empty() {
            let expanded = expand_paths(&files).context(|| "cannot list input".into())?;
            inputs.items.extend(expanded.into_iter().map(Input::File));
            files.clear();
        }
        let base = match &base_config {
            Some(c) => c.clone(),
            None => {
                let c = client_config(args)?;
                inputs.isolation = args.isolation.unwrap_or(c.isolation_level);
                base_config = Some(c.clone());
                c
            }
        };
        let rt = match &inputs.rt {
            Some(rt) => rt.clone(),
            None => {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .context(|| "cannot start the I/O runtime".into())?;
                let rt = Rc::new(rt);
                inputs.rt = Some(rt.clone());
                rt
            }
        };
        let mut config = base;
        let source = format!("kafka://{}/{}", url.servers, url.topic);
        config
            .set("bootstrap.servers", &url.servers)
            .map_err(|e| Failure::Usage(format!("{source}: {e}")))?;
        let client = rt
            .block_on(Client::connect(config))
            .map_err(|e| client_failure(&source, &e))?;
        let metadata = rt
            .block_on(client.metadata(Some(&[url.topic.as_str()])))
            .map_err(|e| client_failure(&source, &e))?;
        let topic = metadata.topics.iter().find(|t| t.name == url.topic);
        let topic = match topic {
            Some(t) if t.error.is_none() => t,
            Some(t) => {
                let code = t.error.map(|c| c.name()).unwrap_or_default();
                return Err(Failure::Usage(format!(
                    "{source}: Metadata from {}: {code}",
                    metadata.broker
                )));
            }
            None => {
                return Err(Failure::Usage(format!(
                    "{source}: Metadata from {}: UNKNOWN_TOPIC_OR_PARTITION",
                    metadata.broker
                )))
            }
        };
        let mut partitions: Vec<i32> = topic.partitions.iter().map(|p| p.partition).collect();
        partitions.sort_unstable();
        if let Some(p) = url.partition {
            if !partitions.contains(&p) {
                return Err(Failure::Usage(format!(
                    "{source}: no partition {p} (the topic has {})",
                    partitions.len()
                )));
            }
            partitions = vec![p];
        }
        for partition in partitions {
            inputs.items.push(Input::Kafka(LivePartition {
                name: format!("{source}/{partition}"),
                topic: url.topic.clone(),
                partition,
                client: client.clone(),
            }));
        }
    }
    if !files.is_empty() {
        let expanded = expand_paths(&files).context(|| "cannot list input".into())?;
        inputs.items.extend(expanded.into_iter().map(Input::File));
    }
    if inputs.rt.is_none() && (args.start.is_some() || args.end.is_some()) {
        return Err(Failure::Usage(
            "--start and --end apply to kafka:// sources only (for files: --offset-start, \
             --offset-end)"
                .into(),
        ));
    }
    Ok(inputs)
}

/// The client configuration of `-F` files then `-X` properties.
fn client_config(args: &KafkaArgs) -> Result<ClientConfig, Failure> {
    config_from(&args.client.config_file, &args.client.property)
}

/// The client configuration of `-F` files then `-X` properties.
pub fn config_from(files: &[PathBuf], properties: &[String]) -> Result<ClientConfig, Failure> {
    let mut c = ClientConfig::default();
    for f in files {
        c.apply_file(f)
            .map_err(|e| Failure::Usage(format!("-F {}: {e}", f.display())))?;
    }
    for x in properties {
        c.set_pair(x)
            .map_err(|e| Failure::Usage(format!("-X {x}: {e}")))?;
    }
    Ok(c)
}

impl Inputs {
    /// Opens an input for reading (a file: at most `max_bytes` of it).
    pub fn open(&self, input: &Input, max_bytes: Option<u64>) -> Result<Source, Failure> {
        match input {
            Input::File(path) => Source::open_limited(path, max_bytes)
                .context(|| format!("cannot open {}", path.display())),
            Input::Kafka(k) => self.open_live(k),
        }
    }

    /// Opens a live partition for reading, from `--start` to `--end`.
    pub fn open_live(&self, k: &LivePartition) -> Result<Source, Failure> {
        let reader = self.live_reader(k)?;
        Ok(Source::from_reader(k.name.clone(), Box::new(reader)))
    }

    /// The fetched bytes of a live partition from `--start` to `--end`, as a byte stream (what
    /// its segment files hold over those offsets).
    pub fn open_raw(&self, k: &LivePartition) -> Result<impl Read, Failure> {
        self.live_reader(k)
    }

    fn live_reader(&self, k: &LivePartition) -> Result<LiveReader, Failure> {
        let Some(rt) = self.rt.clone() else {
            return Err(Failure::Usage("no runtime".into()));
        };
        // Start fetching this partition and the next few ones of the inputs.
        let at = self
            .items
            .iter()
            .position(|i| matches!(i, Input::Kafka(x) if x.name == k.name))
            .unwrap_or(0);
        let mut fetching = self.fetching.borrow_mut();
        let ahead = self.items[at..]
            .iter()
            .filter_map(|i| match i {
                Input::Kafka(x) => Some(x),
                Input::File(_) => None,
            })
            .take(PREFETCH_PARTITIONS);
        for x in ahead {
            if fetching.contains_key(&x.name) {
                continue;
            }
            let (tx, rx) = mpsc::channel(PREFETCH_CHUNKS);
            let (x2, start, end, isolation) = (x.clone(), self.start, self.end, self.isolation);
            rt.spawn(async move {
                let mut stream = match open_stream(&x2, start, end, isolation).await {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                };
                loop {
                    let next = stream.next_chunk().await.transpose();
                    let next = next.map(|r| r.map(|c| (c, stream.end_offset())));
                    let last = !matches!(next, Some(Ok(_)));
                    let Some(next) = next else { break };
                    if tx.send(next).await.is_err() || last {
                        break;
                    }
                }
            });
            fetching.insert(x.name.clone(), rx);
        }
        let Some(mut rx) = fetching.remove(&k.name) else {
            return Err(Failure::Usage(format!("{}: read twice", k.name)));
        };
        drop(fetching);
        // The first answer decides whether the partition can be read at all (a failed
        // ListOffsets or Fetch is a command failure, exit 2, before any output).
        let first = match rt.block_on(rx.recv()) {
            None => None,
            Some(Ok(c)) => Some(c),
            Some(Err(e @ Error::Corrupt { .. })) => {
                let mut r = LiveReader::new(rt, rx, k.clone(), self.isolation);
                r.corrupt(e)
                    .map_err(|e| Failure::Usage(format!("{}: {e}", k.name)))?;
                return Ok(r);
            }
            Some(Err(e)) => return Err(client_failure(&k.name, &e)),
        };
        let mut r = LiveReader::new(rt, rx, k.clone(), self.isolation);
        match first {
            Some(c) => r.next_bytes(c),
            None => r.eof = true,
        }
        Ok(r)
    }

    /// A live partition's batches from `--start` to `--end` (positions resolved with
    /// ListOffsets), with the runtime that drives them.
    pub fn stream(&self, k: &LivePartition) -> Result<(Rc<Runtime>, PartitionStream), Failure> {
        let Some(rt) = self.rt.clone() else {
            return Err(Failure::Usage("no runtime".into()));
        };
        let stream = rt
            .block_on(open_stream(k, self.start, self.end, self.isolation))
            .map_err(|e| client_failure(&k.name, &e))?;
        Ok((rt, stream))
    }
}

/// Resolves `start` and `end` with ListOffsets and opens the partition's stream.
async fn open_stream(
    k: &LivePartition,
    start: Option<Position>,
    end: Option<Position>,
    isolation: IsolationLevel,
) -> Result<PartitionStream, Error> {
    let resolve = |pos: Position| async move {
        let spec = match pos {
            Position::Offset(n) => return Ok(n),
            Position::Earliest => OffsetSpec::Earliest,
            Position::Latest => OffsetSpec::Latest,
            Position::Time(t) => OffsetSpec::Timestamp(t),
        };
        let listed = k
            .client
            .list_offsets(&k.topic, k.partition, spec, isolation)
            .await?;
        match listed.offset {
            Some(o) => Ok(o),
            // A time after the last record: the end of the partition.
            None => k
                .client
                .list_offsets(&k.topic, k.partition, OffsetSpec::Latest, isolation)
                .await
                .map(|l| l.offset.unwrap_or(0)),
        }
    };
    let from = resolve(start.unwrap_or(Position::Earliest)).await?;
    let to = match end {
        Some(e) => Some(resolve(e).await?),
        None => None,
    };
    Ok(k.client
        .stream_partition(&k.topic, k.partition, from, to, isolation))
}

/// The fetched bytes of one partition as a byte stream.
struct LiveReader {
    rt: Rc<Runtime>,
    chunks: ChunkRx,
    live: LivePartition,
    isolation: IsolationLevel,
    chunk: Bytes,
    pos: usize,
    eof: bool,
    /// Bytes fetched so far, for the progress line.
    fetched: u64,
    progress: Progress,
}

impl LiveReader {
    fn new(
        rt: Rc<Runtime>,
        chunks: ChunkRx,
        live: LivePartition,
        isolation: IsolationLevel,
    ) -> Self {
        LiveReader {
            rt,
            chunks,
            isolation,
            chunk: Bytes::new(),
            pos: 0,
            eof: false,
            fetched: 0,
            progress: Progress::live(format!("krec: {}", live.name)),
            live,
        }
    }

    /// Makes `chunk` the bytes to read next; updates the progress line.
    fn next_bytes(&mut self, (chunk, end): (Chunk, Option<i64>)) {
        self.fetched += chunk.records.len() as u64;
        let end = end.unwrap_or(chunk.high_watermark);
        self.progress
            .update_live(chunk.next_offset, end, self.fetched);
        self.chunk = chunk.records;
        self.pos = 0;
    }

    /// After the stream found a corrupt batch: the response's bytes as they are, the last
    /// chunk. The entry reader reports the corruption as it does for a file (exit 1), after the
    /// entries before it.
    fn corrupt(&mut self, e: Error) -> io::Result<()> {
        let Error::Corrupt { offset, .. } = e else {
            return Err(io::Error::other(e));
        };
        let k = &self.live;
        let window = k.client.config().max_partition_fetch_bytes;
        let f = self
            .rt
            .block_on(
                k.client
                    .fetch(&k.topic, k.partition, offset, self.isolation, window),
            )
            .map_err(io::Error::other)?;
        self.chunk = f.records;
        self.pos = 0;
        self.eof = true;
        Ok(())
    }
}

impl Read for LiveReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.pos < self.chunk.len() {
                let n = buf.len().min(self.chunk.len() - self.pos);
                buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            if self.eof {
                return Ok(0);
            }
            match self.rt.block_on(self.chunks.recv()) {
                Some(Ok(c)) => self.next_bytes(c),
                None => {
                    self.eof = true;
                    self.progress.finish();
                }
                Some(Err(e)) => self.corrupt(e)?,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            KafkaUrl::parse("kafka://a:1,b:2/t/3"),
            Some(Ok(KafkaUrl {
                servers: "a:1,b:2".into(),
                topic: "t".into(),
                partition: Some(3)
            }))
        );
        assert_eq!(
            KafkaUrl::parse("kafka://a:1/my.topic").map(|u| u.map(|u| u.partition)),
            Some(Ok(None))
        );
        assert!(KafkaUrl::parse("topic-0/").is_none());
        assert!(matches!(KafkaUrl::parse("kafka://a/t"), Some(Err(_))));
        assert!(matches!(KafkaUrl::parse("kafka://a:1/"), Some(Err(_))));
        assert!(matches!(KafkaUrl::parse("kafka://a:1/t/x"), Some(Err(_))));
        assert!(matches!(KafkaUrl::parse("kafka://a:1"), Some(Err(_))));
    }

    #[test]
    fn positions() {
        assert_eq!(parse_position("42"), Ok(Position::Offset(42)));
        assert_eq!(parse_position("earliest"), Ok(Position::Earliest));
        assert_eq!(parse_position("latest"), Ok(Position::Latest));
        assert_eq!(
            parse_position("@1714000000000"),
            Ok(Position::Time(1_714_000_000_000))
        );
        assert_eq!(
            parse_position("2024-04-24T23:06:40Z"),
            Ok(Position::Time(1_714_000_000_000))
        );
        assert!(parse_position("soon").is_err());
    }
}
