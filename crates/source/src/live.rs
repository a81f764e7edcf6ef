//! Live partitions over the Kafka protocol (krecords-client).
//!
//! Partitions are read one after another, in order, while the next few are fetched
//! concurrently: each partition's fetching is a task on a current-thread tokio runtime (driven
//! while a read waits), holding at most a couple of chunks of a bounded fetch window
//! (`max.partition.fetch.bytes`, widened for a larger batch) ahead of the reader. A chunk's
//! `records` are whole entries, byte for byte as the broker sent them; the reader frames them
//! in place ([`krecords_codec::read::Entries`] over the chunk), without copying them.

use crate::error::Error;
use crate::position::{Position, Range, Resolved, Watermarks};
use crate::IsolationLevel;
use krecords_client::{Chunk, Client, ClientConfig, Error as ClientError, OffsetSpec};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

/// Live partitions fetched ahead of the one being read.
const PREFETCH_PARTITIONS: usize = 4;

/// Fetched chunks a partition read ahead may hold (each at most a fetch window).
const PREFETCH_CHUNKS: usize = 2;

/// What a partition's fetching task sends: its watermarks and range first, then its chunks.
#[derive(Debug)]
pub(crate) enum Msg {
    /// The partition's watermarks and the range resolved against them.
    Start(Watermarks, Resolved),
    /// A chunk, with the stream's end offset.
    Chunk(Chunk, Option<i64>),
}

/// A partition's messages as its fetching task sends them.
pub(crate) type ChunkRx = mpsc::Receiver<Result<Msg, Error>>;

/// Resolves `range` against a live partition's watermarks (ListOffsets).
async fn resolve(
    x: &LivePartition,
    range: Range,
    isolation: IsolationLevel,
    several: bool,
) -> Result<(Watermarks, Resolved), Error> {
    let fail = |e: ClientError| Error::client(x.name.clone(), e);
    let wm = x.watermarks().await.map_err(fail)?;
    // One partition of several reads to its end when the end asked for is past it.
    let range = if several {
        range.ending_within(&wm)
    } else {
        range
    };
    let mut times = Vec::new();
    for p in [range.start, range.end].into_iter().flatten() {
        if let Position::Time(t) = p {
            times.push((t, x.offset_for_time(t, isolation).await.map_err(fail)?));
        }
    }
    let resolved = range
        .resolve(Some(&wm), isolation, &mut |t| {
            Ok(times.iter().find(|(at, _)| *at == t).and_then(|(_, o)| *o))
        })
        .map_err(|e| e.named(&x.name))?;
    Ok((wm, resolved))
}

/// The identity of the cluster that answered `metadata` (see [`LivePartition::cluster`]): its
/// cluster id (when it sends one) and the brokers it lists, sorted by node id as the client
/// sorts them.
fn cluster_of(metadata: &krecords_client::Metadata) -> String {
    let brokers: Vec<String> = metadata
        .brokers
        .iter()
        .map(|b| format!("{}@{}:{}", b.node_id, b.host, b.port))
        .collect();
    match &metadata.cluster_id {
        Some(id) if !id.is_empty() => format!("{id}: brokers {}", brokers.join(" ")),
        _ => format!("brokers {}", brokers.join(" ")),
    }
}

/// The live partitions listed so far, each by its cluster, topic and partition
/// ([`LivePartition::cluster`]) with the name it was first listed under: [`Sources`]' rule
/// (each partition read once however many arguments name it, however they spell the
/// bootstrap servers) for a command that opens its arguments one at a time (`krec verify`).
///
/// [`Sources`]: crate::Sources
#[derive(Debug, Default)]
pub struct SeenLive {
    first: HashMap<(String, String, i32), String>,
}

impl SeenLive {
    /// Nothing seen yet.
    pub fn new() -> SeenLive {
        SeenLive::default()
    }

    /// `None` the first time `p` (its cluster, topic and partition) is seen, now remembered
    /// under its name; after that, the note that says it is left out: `NAME: named more than
    /// once, read once`, and when the name is spelled otherwise than the first time,
    /// `NAME: named more than once (as FIRST, of the same cluster), read once`.
    pub fn repeat(&mut self, p: &LivePartition) -> Option<String> {
        let key = (p.cluster.clone(), p.topic.clone(), p.partition);
        match self.first.get(&key) {
            None => {
                self.first.insert(key, p.name.clone());
                None
            }
            Some(first) if *first == p.name => {
                Some(format!("{}: named more than once, read once", p.name))
            }
            Some(first) => Some(format!(
                "{}: named more than once (as {first}, of the same cluster), read once",
                p.name
            )),
        }
    }
}

/// The client isolation level of ours.
pub(crate) fn client_isolation(i: IsolationLevel) -> krecords_client::IsolationLevel {
    match i {
        IsolationLevel::ReadCommitted => krecords_client::IsolationLevel::ReadCommitted,
        IsolationLevel::ReadUncommitted => krecords_client::IsolationLevel::ReadUncommitted,
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
    /// The topic's id as Kafka prints it, when the broker gives one (Metadata v10+).
    pub topic_id: Option<String>,
    /// The cluster it is of, however its URL spells the bootstrap servers (`localhost` or
    /// `127.0.0.1`, one broker of the cluster or another): the cluster id of the Metadata
    /// answer (when the broker sends one: Metadata v2 on) and the brokers that answer lists,
    /// as `ID: brokers NODE@HOST:PORT ...` in node order (the addresses the partition is
    /// fetched from). The brokers are part of it because cluster ids repeat: containers of
    /// one image and copied disks share one. Two live partitions of one cluster, topic and
    /// partition are one partition.
    pub cluster: String,
    /// The connected client.
    pub client: Client,
}

impl LivePartition {
    /// The partition's watermarks: ListOffsets earliest, latest at read_uncommitted (the high
    /// watermark) and at read_committed (the last stable offset).
    ///
    /// # Errors
    ///
    /// The client's errors.
    pub async fn watermarks(&self) -> Result<Watermarks, ClientError> {
        let list = |spec, isolation| async move {
            let l = self
                .client
                .list_offsets(
                    &self.topic,
                    self.partition,
                    spec,
                    client_isolation(isolation),
                )
                .await?;
            Ok::<i64, ClientError>(l.offset.unwrap_or(0))
        };
        let log_start = list(OffsetSpec::Earliest, IsolationLevel::ReadUncommitted).await?;
        let high_watermark = list(OffsetSpec::Latest, IsolationLevel::ReadUncommitted).await?;
        let last_stable = list(OffsetSpec::Latest, IsolationLevel::ReadCommitted).await?;
        Ok(Watermarks {
            log_start,
            high_watermark,
            last_stable: Some(last_stable),
        })
    }

    /// The first offset whose timestamp is at or after `ms` (ListOffsets), `None` after the
    /// last record (a time before the epoch asks for the epoch: see
    /// [`OffsetSpec::Timestamp`]).
    ///
    /// # Errors
    ///
    /// The client's errors.
    pub async fn offset_for_time(
        &self,
        ms: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<i64>, ClientError> {
        let l = self
            .client
            .list_offsets(
                &self.topic,
                self.partition,
                OffsetSpec::Timestamp(ms),
                client_isolation(isolation),
            )
            .await?;
        Ok(l.offset)
    }

    /// The producer of the batch at `offset` (a read_uncommitted fetch of one window), for
    /// saying who holds the last stable offset back.
    pub(crate) async fn producer_at(&self, offset: i64) -> Option<i64> {
        let f = self
            .client
            .fetch(
                &self.topic,
                self.partition,
                offset,
                krecords_client::IsolationLevel::ReadUncommitted,
                1 << 16,
            )
            .await
            .ok()?;
        let batch = krecords_codec::read::Entries::new(&f.records)
            .next()?
            .ok()?;
        batch.producer_id()
    }
}

/// The sources layer's own runtime (current-thread: several threads may wait on it, one of
/// them driving its I/O at a time).
///
/// The sources layer is synchronous, and may be called from inside another Tokio runtime (a
/// DataFusion query registering a table, an application's async code), where Tokio refuses to
/// block a thread: there [`Io::wait`] waits on a scoped thread of its own, and the last owner
/// dropping the runtime shuts it down in the background instead of waiting for its threads.
#[derive(Debug)]
pub(crate) struct Io(Option<Runtime>);

impl Io {
    fn new() -> Result<Io, Error> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io("cannot start the I/O runtime", e))?;
        Ok(Io(Some(rt)))
    }

    fn rt(&self) -> &Runtime {
        match &self.0 {
            Some(rt) => rt,
            None => unreachable!("the runtime is taken only by drop"),
        }
    }

    /// Starts `f` on the runtime; it runs while some thread waits on the runtime.
    fn spawn<F>(&self, f: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        self.rt().spawn(f);
    }

    /// Runs `f` to completion on the runtime, and waits for it (on the calling thread, or on
    /// a scoped thread when the caller is inside another runtime).
    pub(crate) fn wait<F>(&self, f: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        let rt = self.rt();
        if tokio::runtime::Handle::try_current().is_err() {
            return rt.block_on(f);
        }
        std::thread::scope(|s| match s.spawn(|| rt.block_on(f)).join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        })
    }
}

impl Drop for Io {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                rt.shutdown_background();
            }
        }
    }
}

/// The runtime and the fetching tasks of a command's live partitions (shared by the threads
/// that read partitions at the same time: tokio lets several threads `block_on` one
/// current-thread runtime, one of them driving its I/O at a time).
#[derive(Debug)]
pub(crate) struct Live {
    pub rt: Arc<Io>,
    /// Fetching tasks started, by partition name, with the range and isolation they fetch.
    fetching: Mutex<HashMap<String, (Range, IsolationLevel, ChunkRx)>>,
}

impl Live {
    pub fn new() -> Result<Live, Error> {
        Ok(Live {
            rt: Arc::new(Io::new()?),
            fetching: Mutex::new(HashMap::new()),
        })
    }

    /// Connects to a topic and lists its partitions (all, or the URL's one).
    pub fn connect(
        &self,
        url: &crate::KafkaUrl,
        mut config: ClientConfig,
    ) -> Result<Vec<LivePartition>, Error> {
        let source = url.topic_name();
        let fail = |e: ClientError| Error::client(source.clone(), e);
        config
            .set("bootstrap.servers", &url.servers)
            .map_err(|e| Error::Usage(format!("{source}: {e}")))?;
        let client = self.rt.wait(Client::connect(config)).map_err(fail)?;
        let metadata = self
            .rt
            .wait(client.metadata(Some(&[url.topic.as_str()])))
            .map_err(fail)?;
        const UNKNOWN_TOPIC: krecords_client::kafka_protocol::ResponseError =
            krecords_client::kafka_protocol::ResponseError::UnknownTopicOrPartition;
        let topic = metadata.topics.iter().find(|t| t.name == url.topic);
        let topic = match topic {
            Some(t) if t.error.is_none() => t,
            Some(t) if t.error.and_then(|c| c.response_error()) != Some(UNKNOWN_TOPIC) => {
                let code = t.error.map(|c| c.name()).unwrap_or_default();
                return Err(Error::Usage(format!(
                    "{source}: Metadata from {}: {code}",
                    metadata.broker
                )));
            }
            // Worded as `krec ship` words it.
            _ => {
                return Err(Error::Usage(format!(
                    "{source}: the topic does not exist (UNKNOWN_TOPIC_OR_PARTITION from {})",
                    metadata.broker
                )))
            }
        };
        let topic_id = Some(topic.topic_id)
            .filter(|id| !id.is_nil())
            .map(|id| krecords_client::topic_id_text(id.as_bytes()));
        let cluster = cluster_of(&metadata);
        let mut partitions: Vec<i32> = topic.partitions.iter().map(|p| p.partition).collect();
        partitions.sort_unstable();
        if let Some(p) = url.partition {
            if !partitions.contains(&p) {
                return Err(Error::Usage(format!(
                    "{source}: no partition {p} (the topic has {})",
                    partitions.len()
                )));
            }
            partitions = vec![p];
        }
        Ok(partitions
            .into_iter()
            .map(|partition| LivePartition {
                name: format!("{source}/{partition}"),
                topic: url.topic.clone(),
                partition,
                topic_id: topic_id.clone(),
                cluster: cluster.clone(),
                client: client.clone(),
            })
            .collect())
    }

    /// Starts fetching `parts` (the partition to read now and the ones after it), each from
    /// `range` resolved against its watermarks (as one of `several` partitions:
    /// [`Range::ending_within`]), unless already started; returns the messages
    /// of the first. A fetch started ahead with another range or isolation (the partitions of
    /// an export each continue from their own offset) is dropped and started again.
    pub fn chunks(
        &self,
        parts: &[LivePartition],
        range: Range,
        isolation: IsolationLevel,
        several: bool,
    ) -> Result<ChunkRx, Error> {
        let mut fetching = self.fetching.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(first) = parts.first() {
            if fetching
                .get(&first.name)
                .is_some_and(|(r, i, _)| (*r, *i) != (range, isolation))
            {
                fetching.remove(&first.name);
            }
        }
        for x in parts.iter().take(PREFETCH_PARTITIONS) {
            if fetching.contains_key(&x.name) {
                continue;
            }
            let (tx, rx) = mpsc::channel(PREFETCH_CHUNKS);
            let name = x.name.clone();
            let x = x.clone();
            self.rt.spawn(async move {
                let start = match resolve(&x, range, isolation, several).await {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                };
                let (_, resolved) = start;
                let mut stream = x.client.stream_partition(
                    &x.topic,
                    x.partition,
                    resolved.start,
                    resolved.end,
                    client_isolation(isolation),
                );
                if tx.send(Ok(Msg::Start(start.0, resolved))).await.is_err() {
                    return;
                }
                loop {
                    let next = stream.next_chunk().await.transpose();
                    let next = next.map(|r| match r {
                        Ok(c) => Ok(Msg::Chunk(c, stream.end_offset())),
                        Err(e) => Err(Error::client(x.name.clone(), e)),
                    });
                    let last = !matches!(next, Some(Ok(_)));
                    let Some(next) = next else { break };
                    if tx.send(next).await.is_err() || last {
                        break;
                    }
                }
            });
            fetching.insert(name, (range, isolation, rx));
        }
        let name = parts.first().map(|p| p.name.as_str()).unwrap_or_default();
        fetching
            .remove(name)
            .map(|(_, _, rx)| rx)
            .ok_or_else(|| Error::Usage(format!("{name}: read twice")))
    }
}
