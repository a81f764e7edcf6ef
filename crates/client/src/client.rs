//! The client: bootstrap, metadata, leader routing with retries, ListOffsets and Fetch.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{
    ApiKey, BrokerId, FetchRequest, ListOffsetsRequest, MetadataRequest, TopicName,
};
use kafka_protocol::protocol::{Request, StrBytes};
use kafka_protocol::ResponseError;
use krecords_codec::read::Entries;
use uuid::Uuid;

use crate::config::{split_host_port, ClientConfig};
use crate::conn::{name_of, Connection};
use crate::error::{Error, KafkaCode, RequestName, Result};
use krecords_codec::txn::{AbortedTransaction, IsolationLevel};

/// A Kafka client for reading raw record batches. Cheap to clone: clones share connections and
/// metadata.
///
/// At most one connection is open per broker address; requests to one broker take turns on it,
/// requests to different brokers run concurrently.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("bootstrap_servers", &self.inner.config.bootstrap_servers)
            .finish_non_exhaustive()
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<Connection>>>;

struct Inner {
    config: ClientConfig,
    tls: Option<Arc<rustls::ClientConfig>>,
    /// One slot per broker address (`host:port`).
    conns: Mutex<HashMap<String, Slot>>,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    brokers: HashMap<i32, (String, u16)>,
    topics: HashMap<String, CachedTopic>,
}

struct CachedTopic {
    id: Uuid,
    /// Partition → leader node id.
    leaders: HashMap<i32, i32>,
}

/// Where a partition's requests go.
#[derive(Debug, Clone)]
pub(crate) struct Leader {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) topic_id: Uuid,
}

/// A connection idle this long may have been closed by the broker (`connections.max.idle.ms`)
/// or a load balancer: a request failing on it is sent once more on a new connection.
const STALE_AFTER: Duration = Duration::from_secs(1);

/// Throttled (empty) Fetch responses waited out before a fetch gives up.
const MAX_THROTTLED: u32 = 10;
/// Longest throttle time honoured at once.
const MAX_THROTTLE_MS: u64 = 30_000;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A broker in the cluster's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerMetadata {
    /// Node id.
    pub node_id: i32,
    /// Advertised host.
    pub host: String,
    /// Advertised port.
    pub port: u16,
    /// Rack, when configured.
    pub rack: Option<String>,
}

/// A partition in the cluster's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionMetadata {
    /// Partition index.
    pub partition: i32,
    /// Leader's node id, `-1` when there is none.
    pub leader: i32,
    /// Leader epoch, `-1` when unknown.
    pub leader_epoch: i32,
    /// Replicas' node ids.
    pub replicas: Vec<i32>,
    /// In-sync replicas' node ids.
    pub isr: Vec<i32>,
    /// Offline replicas' node ids (Metadata v5+; empty before).
    pub offline_replicas: Vec<i32>,
    /// The partition's error (LEADER_NOT_AVAILABLE, ...), if any.
    pub error: Option<KafkaCode>,
}

/// A topic in the cluster's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicMetadata {
    /// Topic name.
    pub name: String,
    /// The topic's error (UNKNOWN_TOPIC_OR_PARTITION, TOPIC_AUTHORIZATION_FAILED, ...), if any.
    pub error: Option<KafkaCode>,
    /// Whether the topic is internal (`__consumer_offsets`, ...).
    pub internal: bool,
    /// The topic id (Metadata v10+; nil before).
    pub topic_id: Uuid,
    /// Partitions, sorted by index.
    pub partitions: Vec<PartitionMetadata>,
}

/// A topic id as Kafka prints it (`kafka-topics --describe`, `partition.metadata`): URL-safe
/// base64 of the 16 bytes, no padding.
///
/// ```
/// assert_eq!(krecords_client::topic_id_text(&[0; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
/// ```
pub fn topic_id_text(id: &[u8; 16]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id)
}

/// The answer of a Metadata request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// The broker that answered, `host:port`.
    pub broker: String,
    /// Cluster id, when the broker sends one.
    pub cluster_id: Option<String>,
    /// The controller's node id as the broker reports it (`-1` when unknown; KRaft brokers
    /// report a random broker, as Kafka does for clients).
    pub controller_id: i32,
    /// Brokers, sorted by node id.
    pub brokers: Vec<BrokerMetadata>,
    /// Topics, in the broker's order.
    pub topics: Vec<TopicMetadata>,
}

/// Which offset ListOffsets looks up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetSpec {
    /// The log start offset.
    Earliest,
    /// The high watermark (read_uncommitted) or last stable offset (read_committed).
    Latest,
    /// The first offset whose timestamp is at or after this many ms since the epoch (a time
    /// before the epoch is sent as the epoch: on the wire a negative time is a sentinel, -1
    /// the latest offset, -2 the earliest, ..., never a time).
    Timestamp(i64),
}

impl OffsetSpec {
    fn as_timestamp(self) -> i64 {
        match self {
            OffsetSpec::Earliest => -2,
            OffsetSpec::Latest => -1,
            OffsetSpec::Timestamp(t) => t.max(0),
        }
    }
}

/// The answer of ListOffsets for one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedOffset {
    /// The offset; `None` for a timestamp after the last record.
    pub offset: Option<i64>,
    /// The record's timestamp for [`OffsetSpec::Timestamp`], else `None`.
    pub timestamp: Option<i64>,
}

/// One partition of a Fetch response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedPartition {
    /// The `records` bytes as the broker sent them: concatenated log entries, the last one
    /// possibly cut short (read them with [`krecords_codec::read::Entries`]).
    pub records: Bytes,
    /// High watermark.
    pub high_watermark: i64,
    /// Last stable offset, `-1` when the broker does not send one.
    pub last_stable_offset: i64,
    /// Log start offset, `-1` when the broker does not send one.
    pub log_start_offset: i64,
    /// Aborted transactions overlapping the records (read_committed), sorted as sent.
    pub aborted_transactions: Vec<AbortedTransaction>,
    /// The broker that answered, `host:port`.
    pub broker: String,
}

impl Client {
    /// Connects to the first reachable bootstrap server (trying each in order), negotiates
    /// versions and authenticates.
    ///
    /// # Errors
    ///
    /// An invalid configuration, unreadable TLS files, an authentication failure (returned at
    /// once, see [`Error::is_authentication`]), or [`Error::NoBrokerReachable`].
    pub async fn connect(config: ClientConfig) -> Result<Client> {
        config.validate()?;
        let tls = if config.security_protocol.uses_tls() {
            Some(crate::tls::client_config(&config)?)
        } else {
            None
        };
        let client = Client {
            inner: Arc::new(Inner {
                config,
                tls,
                conns: Mutex::new(HashMap::new()),
                cache: Mutex::new(Cache::default()),
            }),
        };
        let mut last = None;
        let servers = client.inner.config.bootstrap_servers.clone();
        for addr in &servers {
            let (host, port) = split_host_port(addr)?;
            match Connection::open(&host, port, &client.inner.config, client.inner.tls.as_ref())
                .await
            {
                Ok(conn) => {
                    let slot = client.slot(&host, port);
                    *slot.lock().await = Some(conn);
                    return Ok(client);
                }
                Err(e) if e.is_authentication() => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(Error::NoBrokerReachable {
            tried: servers.len(),
            last: Box::new(last.unwrap_or_else(|| Error::Config("no bootstrap.servers".into()))),
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// Opens a connection of its own to `host:port` (a producer's, for pipelined requests).
    pub(crate) async fn open_connection(&self, host: &str, port: u16) -> Result<Connection> {
        Connection::open(host, port, &self.inner.config, self.inner.tls.as_ref()).await
    }

    fn slot(&self, host: &str, port: u16) -> Slot {
        let mut conns = lock(&self.inner.conns);
        Arc::clone(conns.entry(format!("{host}:{port}")).or_default())
    }

    /// Sends one request to `host:port`, opening the connection if needed; a connection that
    /// failed mid-request is dropped, to be reopened by the next request. A connection idle for
    /// [`STALE_AFTER`] or more that turns out closed (the broker dropped it while idle: a close
    /// before any byte of the response, or a reset) is reopened and the request sent once more:
    /// every request this client sends is a read, safe to repeat.
    pub(crate) async fn send<R, F>(
        &self,
        host: &str,
        port: u16,
        timeout: Duration,
        build: F,
    ) -> Result<(R::Response, String, i16)>
    where
        R: Request,
        F: Fn(&Connection) -> Result<(R, i16)>,
    {
        let slot = self.slot(host, port);
        let mut guard = slot.lock().await;
        // Only a connection idle for a while may have been closed under us; a failure on a
        // connection just used is the broker's answer, retried (or not) by the caller.
        let mut reused = guard.as_ref().is_some_and(|c| c.idle_for() >= STALE_AFTER);
        loop {
            if guard.is_none() {
                let conn =
                    Connection::open(host, port, &self.inner.config, self.inner.tls.as_ref())
                        .await?;
                *guard = Some(conn);
            }
            let Some(conn) = guard.as_mut() else {
                unreachable!("the slot was just filled")
            };
            let (req, version) = build(conn)?;
            let broker = conn.broker.clone();
            match conn.request(&req, version, timeout).await {
                Ok(resp) => return Ok((resp, broker, version)),
                Err(e) => {
                    if e.breaks_connection() {
                        *guard = None;
                    }
                    if reused && matches!(e, Error::Disconnected { .. } | Error::Io { .. }) {
                        reused = false;
                        continue;
                    }
                    return Err(e);
                }
            }
        }
    }

    /// Addresses to ask for metadata: known brokers, then the bootstrap servers.
    pub(crate) fn metadata_candidates(&self) -> Vec<(String, u16)> {
        let mut out: Vec<(String, u16)> = {
            let cache = lock(&self.inner.cache);
            let mut ids: Vec<_> = cache.brokers.keys().copied().collect();
            ids.sort_unstable();
            ids.iter()
                .filter_map(|id| cache.brokers.get(id).cloned())
                .collect()
        };
        for addr in &self.inner.config.bootstrap_servers {
            if let Ok(hp) = split_host_port(addr) {
                if !out.contains(&hp) {
                    out.push(hp);
                }
            }
        }
        out
    }

    /// Fetches metadata for `topics` (all topics for `None`) from any reachable broker, and
    /// refreshes the client's leader cache with it. Topic and partition errors are reported in
    /// the result, not as an `Err`.
    ///
    /// # Errors
    ///
    /// No broker reachable, or the response is malformed.
    pub async fn metadata(&self, topics: Option<&[&str]>) -> Result<Metadata> {
        let candidates = self.metadata_candidates();
        let tried = candidates.len();
        let mut last = None;
        for (host, port) in candidates {
            let build = |conn: &Connection| {
                let v = conn.version::<MetadataRequest>(i16::MAX)?;
                let mut req = MetadataRequest::default().with_topics(topics.map(|ts| {
                    ts.iter()
                        .map(|t| {
                            MetadataRequestTopic::default()
                                .with_name(Some(TopicName(StrBytes::from_string((*t).to_owned()))))
                        })
                        .collect()
                }));
                if v >= 4 {
                    req = req.with_allow_auto_topic_creation(false);
                }
                Ok((req, v))
            };
            match self
                .send(&host, port, self.inner.config.request_timeout, build)
                .await
            {
                Ok((resp, broker, _)) => return Ok(self.absorb_metadata(resp, broker)),
                Err(e) if e.breaks_connection() => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(Error::NoBrokerReachable {
            tried,
            last: Box::new(
                last.unwrap_or_else(|| Error::Config("no broker address known".to_owned())),
            ),
        })
    }

    fn absorb_metadata(
        &self,
        resp: kafka_protocol::messages::MetadataResponse,
        broker: String,
    ) -> Metadata {
        let code = |c: i16| (c != 0).then_some(KafkaCode(c));
        let mut brokers: Vec<BrokerMetadata> = resp
            .brokers
            .iter()
            .filter_map(|b| {
                Some(BrokerMetadata {
                    node_id: b.node_id.0,
                    host: b.host.as_str().to_owned(),
                    port: u16::try_from(b.port).ok()?,
                    rack: b.rack.as_ref().map(|r| r.as_str().to_owned()),
                })
            })
            .collect();
        brokers.sort_by_key(|b| b.node_id);
        let topics: Vec<TopicMetadata> = resp
            .topics
            .iter()
            .map(|t| {
                let mut partitions: Vec<PartitionMetadata> = t
                    .partitions
                    .iter()
                    .map(|p| PartitionMetadata {
                        partition: p.partition_index,
                        leader: p.leader_id.0,
                        leader_epoch: p.leader_epoch,
                        replicas: p.replica_nodes.iter().map(|b| b.0).collect(),
                        isr: p.isr_nodes.iter().map(|b| b.0).collect(),
                        offline_replicas: p.offline_replicas.iter().map(|b| b.0).collect(),
                        error: code(p.error_code),
                    })
                    .collect();
                partitions.sort_by_key(|p| p.partition);
                TopicMetadata {
                    name: t
                        .name
                        .as_ref()
                        .map(|n| n.0.as_str().to_owned())
                        .unwrap_or_default(),
                    error: code(t.error_code),
                    internal: t.is_internal,
                    topic_id: t.topic_id,
                    partitions,
                }
            })
            .collect();
        let mut cache = lock(&self.inner.cache);
        for b in &brokers {
            cache.brokers.insert(b.node_id, (b.host.clone(), b.port));
        }
        for (t, raw) in topics.iter().zip(&resp.topics) {
            if t.error.is_some() {
                cache.topics.remove(&t.name);
                continue;
            }
            let leaders = t
                .partitions
                .iter()
                .filter(|p| p.error.is_none() && p.leader >= 0)
                .map(|p| (p.partition, p.leader))
                .collect();
            cache.topics.insert(
                t.name.clone(),
                CachedTopic {
                    id: raw.topic_id,
                    leaders,
                },
            );
        }
        Metadata {
            broker,
            cluster_id: resp.cluster_id.as_ref().map(|c| c.as_str().to_owned()),
            controller_id: resp.controller_id.0,
            brokers,
            topics,
        }
    }

    fn cached_leader(&self, topic: &str, partition: i32) -> Option<Leader> {
        let cache = lock(&self.inner.cache);
        let t = cache.topics.get(topic)?;
        let node = t.leaders.get(&partition)?;
        let (host, port) = cache.brokers.get(node)?.clone();
        Some(Leader {
            host,
            port,
            topic_id: t.id,
        })
    }

    pub(crate) fn forget_leader(&self, topic: &str) {
        lock(&self.inner.cache).topics.remove(topic);
    }

    /// The partition's leader, from the cache or a metadata request.
    pub(crate) async fn leader(&self, topic: &str, partition: i32) -> Result<Leader> {
        if let Some(l) = self.cached_leader(topic, partition) {
            return Ok(l);
        }
        let md = self.metadata(Some(&[topic])).await?;
        let meta_err = |code: i16| Error::Kafka {
            broker: md.broker.clone(),
            request: RequestName(ApiKey::Metadata),
            code: KafkaCode(code),
            context: Some(if code == ResponseError::UnknownTopicOrPartition.code() {
                format!("{topic}/{partition}: the topic does not exist")
            } else {
                format!("{topic}/{partition}")
            }),
        };
        let Some(t) = md.topics.iter().find(|t| t.name == topic) else {
            return Err(meta_err(ResponseError::UnknownTopicOrPartition.code()));
        };
        if let Some(code) = t.error {
            return Err(meta_err(code.0));
        }
        let Some(p) = t.partitions.iter().find(|p| p.partition == partition) else {
            return Err(Error::UnknownPartition {
                topic: topic.to_owned(),
                partition,
                partitions: t.partitions.len(),
            });
        };
        if let Some(code) = p.error {
            return Err(meta_err(code.0));
        }
        self.cached_leader(topic, partition)
            .ok_or_else(|| meta_err(ResponseError::LeaderNotAvailable.code()))
    }

    /// Runs `op` against the partition's leader, retrying (with a metadata refresh and a
    /// doubling backoff) on leader changes, lost connections and timeouts, at most `retries`
    /// times, and only while less than `socket.timeout.ms` has passed since the first attempt:
    /// a broker that stops answering fails the operation after one timeout, not after one
    /// timeout per retry (each retry's metadata refresh and new connection would wait for the
    /// silent broker again).
    async fn on_leader<T, F, Fut>(&self, topic: &str, partition: i32, mut op: F) -> Result<T>
    where
        F: FnMut(Leader) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let config = &self.inner.config;
        let started = Instant::now();
        let mut attempt: u32 = 0;
        loop {
            let result = match self.leader(topic, partition).await {
                Ok(leader) => op(leader).await,
                Err(e) => Err(e),
            };
            match result {
                Err(e)
                    if e.is_retriable()
                        && attempt < config.retries
                        && started.elapsed() < config.request_timeout =>
                {
                    self.forget_leader(topic);
                    let factor = 1u32 << attempt.min(16);
                    let delay = config
                        .retry_backoff
                        .saturating_mul(factor)
                        .min(config.retry_backoff_max);
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// Looks up an offset of one partition with ListOffsets, on its leader.
    ///
    /// # Errors
    ///
    /// The broker's error (after retries for leader changes), a lost connection after retries,
    /// an unknown topic or partition.
    pub async fn list_offsets(
        &self,
        topic: &str,
        partition: i32,
        spec: OffsetSpec,
        isolation: IsolationLevel,
    ) -> Result<ListedOffset> {
        let timeout = self.inner.config.request_timeout;
        self.on_leader(topic, partition, |leader| async move {
            let build = |conn: &Connection| {
                let v = conn.version::<ListOffsetsRequest>(i16::MAX)?;
                let mut req = ListOffsetsRequest::default()
                    // A consumer, not a replica: kafka-protocol's default is 0.
                    .with_replica_id(BrokerId(-1))
                    .with_topics(vec![ListOffsetsTopic::default()
                        .with_name(TopicName(StrBytes::from_string(topic.to_owned())))
                        .with_partitions(vec![ListOffsetsPartition::default()
                            .with_partition_index(partition)
                            .with_timestamp(spec.as_timestamp())])]);
                if v >= 2 {
                    req = req.with_isolation_level(isolation.id());
                }
                if v >= 10 {
                    req =
                        req.with_timeout_ms(i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX));
                }
                Ok((req, v))
            };
            let (resp, broker, version) =
                self.send(&leader.host, leader.port, timeout, build).await?;
            let p = resp
                .topics
                .iter()
                .filter(|t| t.name.0.as_str() == topic)
                .flat_map(|t| t.partitions.iter())
                .find(|p| p.partition_index == partition)
                .ok_or_else(|| Error::Protocol {
                    broker: broker.clone(),
                    request: name_of::<ListOffsetsRequest>(),
                    version,
                    message: format!("no answer for {topic}/{partition}"),
                })?;
            if p.error_code != 0 {
                return Err(Error::Kafka {
                    broker,
                    request: name_of::<ListOffsetsRequest>(),
                    code: KafkaCode(p.error_code),
                    context: Some(format!("{topic}/{partition}")),
                });
            }
            Ok(ListedOffset {
                offset: (p.offset >= 0).then_some(p.offset),
                timestamp: match spec {
                    OffsetSpec::Timestamp(_) if p.timestamp >= 0 => Some(p.timestamp),
                    _ => None,
                },
            })
        })
        .await
    }

    /// Fetches one partition from `offset` on its leader: at most `max_bytes` of it (the
    /// partition's limit; the response's is `fetch.max.bytes`), though the broker returns the
    /// first batch whole even when it is larger.
    ///
    /// # Errors
    ///
    /// The broker's error (OFFSET_OUT_OF_RANGE, ...; retried for leader changes), a lost
    /// connection after retries, an unknown topic or partition.
    pub async fn fetch(
        &self,
        topic: &str,
        partition: i32,
        offset: i64,
        isolation: IsolationLevel,
        max_bytes: i32,
    ) -> Result<FetchedPartition> {
        let config = &self.inner.config;
        let timeout = config.request_timeout.saturating_add(config.fetch_wait_max);
        let max_bytes = max_bytes.max(1);
        self.on_leader(topic, partition, |leader| async move {
            let by_id = !leader.topic_id.is_nil();
            let build = |conn: &Connection| {
                // Fetch v13+ names topics by id only: without an id, stay below.
                let v = conn.version::<FetchRequest>(if by_id { i16::MAX } else { 12 })?;
                let mut ft = FetchTopic::default().with_partitions(vec![FetchPartition::default()
                    .with_partition(partition)
                    .with_fetch_offset(offset)
                    .with_partition_max_bytes(max_bytes)]);
                if v >= 13 {
                    ft = ft.with_topic_id(leader.topic_id);
                } else {
                    ft = ft.with_topic(TopicName(StrBytes::from_string(topic.to_owned())));
                }
                let req = FetchRequest::default()
                    .with_max_wait_ms(
                        i32::try_from(config.fetch_wait_max.as_millis()).unwrap_or(i32::MAX),
                    )
                    .with_min_bytes(config.fetch_min_bytes)
                    .with_max_bytes(config.fetch_max_bytes)
                    .with_isolation_level(isolation.id())
                    .with_topics(vec![ft]);
                Ok((req, v))
            };
            let mut throttled = 0;
            let (resp, broker, version) = loop {
                let (resp, broker, version) = self
                    .send(&leader.host, leader.port, timeout, &build)
                    .await?;
                // A broker over a quota answers at once with no partitions and the time to wait.
                if resp.throttle_time_ms > 0
                    && resp.responses.is_empty()
                    && throttled < MAX_THROTTLED
                {
                    throttled += 1;
                    let ms = u64::try_from(resp.throttle_time_ms)
                        .unwrap_or(0)
                        .min(MAX_THROTTLE_MS);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    continue;
                }
                break (resp, broker, version);
            };
            let kafka = |code: i16| Error::Kafka {
                broker: broker.clone(),
                request: name_of::<FetchRequest>(),
                code: KafkaCode(code),
                context: Some(format!("{topic}/{partition}")),
            };
            if resp.error_code != 0 {
                return Err(kafka(resp.error_code));
            }
            let p = resp
                .responses
                .into_iter()
                .filter(|t| {
                    if version >= 13 {
                        t.topic_id == leader.topic_id
                    } else {
                        t.topic.0.as_str() == topic
                    }
                })
                .flat_map(|t| t.partitions)
                .find(|p| p.partition_index == partition)
                .ok_or_else(|| Error::Protocol {
                    broker: broker.clone(),
                    request: name_of::<FetchRequest>(),
                    version,
                    message: format!("no answer for {topic}/{partition}"),
                })?;
            if p.error_code != 0 {
                return Err(kafka(p.error_code));
            }
            Ok(FetchedPartition {
                records: p.records.unwrap_or_default(),
                high_watermark: p.high_watermark,
                last_stable_offset: p.last_stable_offset,
                log_start_offset: p.log_start_offset,
                aborted_transactions: p
                    .aborted_transactions
                    .unwrap_or_default()
                    .iter()
                    .map(|a| AbortedTransaction {
                        producer_id: a.producer_id.0,
                        first_offset: a.first_offset,
                    })
                    .collect(),
                broker,
            })
        })
        .await
    }

    /// Streams one partition's whole batches from `start` to `end` (exclusive; `None`: the high
    /// watermark, or for read_committed the last stable offset, seen by the first fetch), a
    /// window of `max.partition.fetch.bytes` at a time. See [`PartitionStream`].
    pub fn stream_partition(
        &self,
        topic: &str,
        partition: i32,
        start: i64,
        end: Option<i64>,
        isolation: IsolationLevel,
    ) -> PartitionStream {
        PartitionStream {
            client: self.clone(),
            topic: topic.to_owned(),
            partition,
            next_offset: start,
            end,
            isolation,
            window: self.inner.config.max_partition_fetch_bytes,
            done: false,
        }
    }
}

/// Whole batches of one fetch, from [`PartitionStream::next_chunk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Whole log entries only, byte for byte as the broker sent them; the first may start
    /// before [`Chunk::fetch_offset`] (a batch holding it), the last may end after the stream's
    /// end offset.
    pub records: Bytes,
    /// The offset this chunk was fetched from.
    pub fetch_offset: i64,
    /// The offset after the last entry: where the next chunk starts.
    pub next_offset: i64,
    /// High watermark at this fetch.
    pub high_watermark: i64,
    /// Last stable offset at this fetch (`-1` if not sent).
    pub last_stable_offset: i64,
    /// Log start offset at this fetch (`-1` if not sent).
    pub log_start_offset: i64,
    /// Aborted transactions overlapping the records (read_committed).
    pub aborted_transactions: Vec<AbortedTransaction>,
    /// Where each entry of [`Chunk::records`] ends (positions in it, increasing; the last is
    /// its length): the boundaries found when the stream framed the response, so that a
    /// reader views each entry at them instead of framing the bytes again.
    pub entry_ends: Vec<usize>,
}

/// Reads a partition batch by batch with a bounded fetch window. A batch cut short at the end
/// of a response is fetched again from its offset; a batch larger than the window widens the
/// window (to the batch's size or double), up to `receive.message.max.bytes`. An empty response
/// below the high watermark (last stable offset for read_committed) means no batch until there:
/// the stream skips to it.
///
/// With an explicit end beyond the partition's data, [`PartitionStream::next_chunk`] waits
/// (long-polls, `fetch.wait.max.ms` a fetch) for the data to arrive.
#[derive(Debug)]
pub struct PartitionStream {
    client: Client,
    topic: String,
    partition: i32,
    next_offset: i64,
    end: Option<i64>,
    isolation: IsolationLevel,
    window: i32,
    done: bool,
}

impl PartitionStream {
    /// Sets the fetch window (bytes per fetch); defaults to `max.partition.fetch.bytes`.
    pub fn with_window(mut self, bytes: i32) -> Self {
        self.window = bytes.max(1);
        self
    }

    /// The offset the next chunk will be fetched from.
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }

    /// The end offset (exclusive), once known.
    pub fn end_offset(&self) -> Option<i64> {
        self.end
    }

    /// The next chunk of whole batches; `None` once the end offset is reached.
    ///
    /// # Errors
    ///
    /// As [`Client::fetch`], and [`Error::Corrupt`] for data that does not parse as log
    /// entries; the stream ends after an error.
    pub async fn next_chunk(&mut self) -> Result<Option<Chunk>> {
        let r = self.next_inner().await;
        if r.is_err() {
            self.done = true;
        }
        r
    }

    async fn next_inner(&mut self) -> Result<Option<Chunk>> {
        let max_window =
            i32::try_from(self.client.inner.config.max_response_size).unwrap_or(i32::MAX);
        loop {
            if self.done {
                return Ok(None);
            }
            if self.end.is_some_and(|end| self.next_offset >= end) {
                self.done = true;
                return Ok(None);
            }
            let f = self
                .client
                .fetch(
                    &self.topic,
                    self.partition,
                    self.next_offset,
                    self.isolation,
                    self.window,
                )
                .await?;
            let end = *self.end.get_or_insert(match self.isolation {
                IsolationLevel::ReadCommitted if f.last_stable_offset >= 0 => f.last_stable_offset,
                _ => f.high_watermark,
            });
            if self.next_offset >= end {
                self.done = true;
                return Ok(None);
            }
            let mut entries = Entries::new(&f.records);
            let mut cut = 0;
            let mut next = self.next_offset;
            let mut entry_ends = Vec::new();
            while next < end {
                match entries.next_entry() {
                    Ok(Some(batch)) => {
                        cut = entries.next_position();
                        entry_ends.push(cut);
                        next = next.max(batch.last_offset().saturating_add(1));
                    }
                    Ok(None) => break,
                    Err(source) => {
                        return Err(Error::Corrupt {
                            broker: f.broker.clone(),
                            topic: self.topic.clone(),
                            partition: self.partition,
                            offset: self.next_offset,
                            source: Box::new(source),
                            records: Box::new(f.records.clone()),
                        })
                    }
                }
            }
            if cut > 0 && next == self.next_offset {
                return Err(Error::Protocol {
                    broker: f.broker.clone(),
                    request: RequestName(ApiKey::Fetch),
                    version: -1,
                    message: format!(
                        "the response to a fetch at offset {} holds only earlier offsets",
                        self.next_offset
                    ),
                });
            }
            if cut == 0 && entries.partial().is_none() {
                // Nothing at or after the offset below what the broker can serve: a gap
                // (compaction, removed segments) up to there. Skip it rather than poll forever.
                let available = match self.isolation {
                    IsolationLevel::ReadCommitted if f.last_stable_offset >= 0 => {
                        f.last_stable_offset
                    }
                    _ => f.high_watermark,
                };
                if self.next_offset < available {
                    self.next_offset = available.min(end);
                    continue;
                }
            }
            if cut == 0 {
                if let Some(partial) = entries.partial() {
                    // Not one whole batch in the window: widen it and ask again.
                    if self.window >= max_window {
                        return Err(Error::Protocol {
                            broker: f.broker.clone(),
                            request: RequestName(ApiKey::Fetch),
                            version: -1,
                            message: format!(
                                "the batch at offset {} does not fit receive.message.max.bytes ({max_window})",
                                self.next_offset
                            ),
                        });
                    }
                    let declared = partial
                        .declared_size
                        .and_then(|d| i32::try_from(d).ok())
                        .unwrap_or(0);
                    self.window = self.window.saturating_mul(2).max(declared).min(max_window);
                }
                // Nothing new yet (the broker waited fetch.wait.max.ms): poll again.
                continue;
            }
            let chunk = Chunk {
                records: f.records.slice(..cut),
                fetch_offset: self.next_offset,
                next_offset: next,
                high_watermark: f.high_watermark,
                last_stable_offset: f.last_stable_offset,
                log_start_offset: f.log_start_offset,
                aborted_transactions: f.aborted_transactions,
                entry_ends,
            };
            self.next_offset = next;
            return Ok(Some(chunk));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OffsetSpec;

    /// A time before the epoch (SQL's `timestamp >= '1969-12-31 23:59:59.999'` pushed down is
    /// -1) went on the wire as itself, which Kafka reads as the latest offset: a live query
    /// then started at the end and found nothing. It is sent as the epoch.
    #[test]
    fn a_time_before_the_epoch_is_never_a_sentinel_on_the_wire() {
        assert_eq!(OffsetSpec::Timestamp(-1).as_timestamp(), 0);
        assert_eq!(OffsetSpec::Timestamp(i64::MIN).as_timestamp(), 0);
        assert_eq!(OffsetSpec::Timestamp(5).as_timestamp(), 5);
        assert_eq!(OffsetSpec::Latest.as_timestamp(), -1);
        assert_eq!(OffsetSpec::Earliest.as_timestamp(), -2);
    }
}
