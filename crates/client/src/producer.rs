//! A transactional producer of stored record batches, and OffsetFetch.
//!
//! [`TransactionalProducer`] sends v2 batches that already exist (read from segment files or
//! fetched from another cluster): each batch's header gets the producer's id, epoch and the
//! partition's next sequence (and the transactional flag, base offset 0) with
//! [`krecords_codec::patch`]; its records bytes, compression included, are sent as they are.
//!
//! The protocol is Kafka's transactional producer (KIP-98), transaction version 1 (requests are
//! kept below the versions of KIP-890's version 2, so every broker from 2.5 on behaves alike):
//!
//! 1. FindCoordinator (transaction) and InitProducerId with the transactional id. The
//!    coordinator bumps the epoch, which fences any older producer of the same id, and aborts
//!    (or completes) that producer's open transaction before answering.
//! 2. Per transaction: AddPartitionsToTxn before a partition's first Produce, Produce with
//!    `acks=all` (one batch per partition per request; up to `max.in.flight.requests.per.connection`
//!    requests in flight per partition), AddOffsetsToTxn then TxnOffsetCommit (on the group's
//!    coordinator) for consumer offsets, and EndTxn to commit or abort, once every Produce is
//!    answered.
//!
//! Sending does not wait for the broker: [`TransactionalProducer::send`] hands the batch to its
//! partition's Produce task, which has a connection of its own (a broker reads a connection's
//! next request only after answering the last one, so partitions sharing a connection would
//! take turns), and returns; [`TransactionalProducer::flush`] waits for the answers. The
//! batches not acknowledged yet take at most `buffer.memory` bytes (32 MiB by default); a send
//! waits while they take more.
//!
//! Errors: retriable ones (leader changes, lost connections, timeouts, NOT_ENOUGH_REPLICAS,
//! COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, CONCURRENT_TRANSACTIONS, the last after a
//! backoff of 5 ms doubling up to `retry.backoff.ms`: the coordinator answers it for the
//! milliseconds it takes to finish the previous transaction) are retried until
//! `message.timeout.ms`, a batch always with the sequence it was given first (a batch the
//! broker already has is answered DUPLICATE_SEQUENCE_NUMBER, taken as success);
//! UNKNOWN_TOPIC_OR_PARTITION is retried `retries` times with fresh metadata. Anything else
//! (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, TOPIC_AUTHORIZATION_FAILED, MESSAGE_TOO_LARGE,
//! OUT_OF_ORDER_SEQUENCE_NUMBER, ...) is returned at once as [`Error::Kafka`], naming the
//! broker, the request and Kafka's error name; the producer is then unusable
//! ([`Error::ProducerState`] for every later call) and the transaction is left to be aborted
//! by the next InitProducerId of the same transactional id, or by its timeout.

mod window;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_protocol::messages::{
    AddOffsetsToTxnRequest, AddPartitionsToTxnRequest, EndTxnRequest, FindCoordinatorRequest,
    GroupId, InitProducerIdRequest, OffsetFetchRequest, OffsetFetchResponse, ProducerId, TopicName,
    TransactionalId, TxnOffsetCommitRequest, TxnOffsetCommitResponse,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;
use krecords_codec::patch::{patch_v2_header, V2HeaderPatch};
use krecords_codec::read::{Batch, Entries};

use crate::client::Client;
use crate::conn::{name_of, Connection};
use crate::error::{Error, KafkaCode, Result};
use window::{Handle, Pool, Prepared};

/// Highest versions used: below KIP-890's transaction version 2 (Produce 12, EndTxn 5,
/// TxnOffsetCommit 5, AddOffsetsToTxn 4, AddPartitionsToTxn 4+ is broker-only), and the last
/// versions naming topics by name (Produce 13 and OffsetFetch 10 take topic ids).
const PRODUCE_MAX: i16 = 11;
const INIT_PRODUCER_ID_MAX: i16 = 4;
const ADD_PARTITIONS_MAX: i16 = 3;
const ADD_OFFSETS_MAX: i16 = 3;
const TXN_OFFSET_COMMIT_MAX: i16 = 4;
const END_TXN_MAX: i16 = 4;
const OFFSET_FETCH_MAX: i16 = 7;

/// FindCoordinator key types.
pub(crate) const GROUP: i8 = 0;
const TRANSACTION: i8 = 1;

pub(crate) fn str_bytes(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_owned())
}

/// How a failed coordinator request is retried.
#[derive(Debug, PartialEq, Eq)]
enum Retry {
    /// Not retriable.
    No,
    /// Retry on the same coordinator after a backoff.
    Same,
    /// Retry on the same coordinator soon: the previous transaction is still being completed
    /// (its markers written), which takes milliseconds.
    Soon,
    /// Look the coordinator up again, then retry.
    Refind,
}

fn coordinator_retry(e: &Error) -> Retry {
    match e {
        Error::Kafka { code, .. } => match code.response_error() {
            Some(ResponseError::NotCoordinator | ResponseError::CoordinatorNotAvailable) => {
                Retry::Refind
            }
            Some(ResponseError::ConcurrentTransactions) => Retry::Soon,
            Some(
                ResponseError::CoordinatorLoadInProgress
                | ResponseError::UnstableOffsetCommit
                | ResponseError::RequestTimedOut
                | ResponseError::NetworkException
                | ResponseError::OperationNotAttempted,
            ) => Retry::Same,
            _ => Retry::No,
        },
        Error::Io { .. }
        | Error::Disconnected { .. }
        | Error::Truncated { .. }
        | Error::Timeout { .. }
        | Error::SetupTimeout { .. }
        | Error::Connect { .. } => Retry::Refind,
        Error::NoBrokerReachable { last, .. } => coordinator_retry(last),
        _ => Retry::No,
    }
}

/// Whether an idempotent producer's InitProducerId that failed with `e` is asked again: a
/// retriable error code (Kafka's Java producer retries every `RetriableException` there), or a
/// lost or refused connection; not a timeout, which has already waited `socket.timeout.ms`.
fn init_retriable(e: &Error) -> bool {
    match e {
        // CONCURRENT_TRANSACTIONS is not marked retriable in the protocol's table, but the
        // Java producer retries it (ConcurrentTransactionsException is retriable there).
        Error::Kafka { code, .. } => {
            code.is_retriable()
                || code.response_error() == Some(ResponseError::ConcurrentTransactions)
        }
        Error::Io { .. }
        | Error::Disconnected { .. }
        | Error::Truncated { .. }
        | Error::Connect { .. } => true,
        Error::NoBrokerReachable { last, .. } => init_retriable(last),
        _ => false,
    }
}

/// Whether a Produce error may go away by itself (a leader change, replicas catching up, a
/// lost connection): the batch is sent again with the same sequence.
fn produce_retriable(e: &Error) -> bool {
    match e {
        Error::Kafka { code, .. } => matches!(
            code.response_error(),
            Some(
                ResponseError::NotLeaderOrFollower
                    | ResponseError::LeaderNotAvailable
                    | ResponseError::UnknownTopicOrPartition
                    | ResponseError::NotEnoughReplicas
                    | ResponseError::NotEnoughReplicasAfterAppend
                    | ResponseError::RequestTimedOut
                    | ResponseError::NetworkException
                    | ResponseError::KafkaStorageError
                    | ResponseError::FencedLeaderEpoch
                    | ResponseError::UnknownLeaderEpoch
                    | ResponseError::ReplicaNotAvailable
                    | ResponseError::ThrottlingQuotaExceeded
            )
        ),
        Error::Io { .. }
        | Error::Disconnected { .. }
        | Error::Truncated { .. }
        | Error::Timeout { .. }
        | Error::SetupTimeout { .. }
        | Error::Connect { .. }
        | Error::CorrelationId { .. } => true,
        Error::NoBrokerReachable { last, .. } => produce_retriable(last),
        _ => false,
    }
}

fn is_unknown_topic(e: &Error) -> bool {
    e.kafka_code()
        .is_some_and(|c| c.response_error() == Some(ResponseError::UnknownTopicOrPartition))
}

/// One batch acknowledged by Produce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Produced {
    /// The topic the batch went to.
    pub topic: String,
    /// The partition the batch went to.
    pub partition: i32,
    /// The offset the broker gave the batch's first record; `None` when the broker answered
    /// DUPLICATE_SEQUENCE_NUMBER (it had the batch already, from a request whose answer was
    /// lost).
    pub base_offset: Option<i64>,
    /// The batch's offset span (last offset delta + 1): the sequence numbers it used.
    pub records: i32,
    /// The sequence the batch was sent with.
    pub base_sequence: i32,
}

/// A committed consumer offset read with [`Client::offset_fetch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedOffset {
    /// The partition.
    pub partition: i32,
    /// The offset, `None` when the group has none for the partition.
    pub offset: Option<i64>,
    /// The metadata string committed with it.
    pub metadata: Option<String>,
}

/// An offset to commit in a transaction with [`TransactionalProducer::send_offsets`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetToCommit {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The offset.
    pub offset: i64,
    /// A metadata string (brokers limit it to `offset.metadata.max.bytes`, 4096 by default).
    pub metadata: Option<String>,
}

/// A coordinator's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Coordinator {
    host: String,
    port: u16,
}

impl Client {
    /// Finds the coordinator of `key` (a group for key type 0, a transactional id for 1) on
    /// any broker, retrying COORDINATOR_NOT_AVAILABLE and lost connections until `deadline`.
    async fn find_coordinator(
        &self,
        key_type: i8,
        key: &str,
        deadline: Instant,
    ) -> Result<Coordinator> {
        let timeout = self.config().request_timeout;
        let mut attempt = 0u32;
        loop {
            let mut last = None;
            for (host, port) in self.metadata_candidates() {
                let build = |conn: &Connection| {
                    let v = conn.version::<FindCoordinatorRequest>(i16::MAX)?;
                    let mut req = FindCoordinatorRequest::default();
                    if v >= 1 {
                        req = req.with_key_type(key_type);
                    }
                    if v >= 4 {
                        req = req.with_coordinator_keys(vec![str_bytes(key)]);
                    } else {
                        req = req.with_key(str_bytes(key));
                    }
                    Ok((req, v))
                };
                let r = self
                    .send::<FindCoordinatorRequest, _>(&host, port, timeout, build)
                    .await
                    .and_then(|(resp, broker, version)| {
                        let (code, node, h, p) = if version >= 4 {
                            let c = resp.coordinators.into_iter().next().ok_or_else(|| {
                                Error::Protocol {
                                    broker: broker.clone(),
                                    request: name_of::<FindCoordinatorRequest>(),
                                    version,
                                    message: "no coordinator in the answer".to_owned(),
                                }
                            })?;
                            (c.error_code, c.node_id.0, c.host, c.port)
                        } else {
                            (resp.error_code, resp.node_id.0, resp.host, resp.port)
                        };
                        if code != 0 {
                            return Err(Error::Kafka {
                                broker,
                                request: name_of::<FindCoordinatorRequest>(),
                                code: KafkaCode(code),
                                context: Some(key.to_owned()),
                            });
                        }
                        let port = u16::try_from(p).map_err(|_| Error::Protocol {
                            broker: broker.clone(),
                            request: name_of::<FindCoordinatorRequest>(),
                            version,
                            message: format!("coordinator {node} has port {p}"),
                        })?;
                        Ok(Coordinator {
                            host: h.as_str().to_owned(),
                            port,
                        })
                    });
                match r {
                    Ok(c) => return Ok(c),
                    Err(e) if coordinator_retry(&e) != Retry::No => last = Some(e),
                    Err(e) => return Err(e),
                }
            }
            let e = last.unwrap_or_else(|| Error::Config("no bootstrap.servers".into()));
            if Instant::now() >= deadline {
                return Err(e);
            }
            self.backoff(&mut attempt).await;
        }
    }

    /// Sleeps `retry.backoff.ms`, doubled per attempt up to `retry.backoff.max.ms`.
    /// The backoff before retrying CONCURRENT_TRANSACTIONS: 5 ms, doubling up to
    /// `retry.backoff.ms`. The coordinator answers it while the previous transaction's markers
    /// are being written, for the first request of the next transaction right after a commit;
    /// waiting the full `retry.backoff.ms` (100 ms) there would idle every partition once per
    /// transaction. (Kafka's Java producer retries the first AddPartitionsToTxn of a
    /// transaction after 20 ms for the same reason.)
    async fn backoff_soon(&self, attempt: &mut u32) {
        const SOON: Duration = Duration::from_millis(5);
        sleep_doubling(SOON, self.config().retry_backoff.max(SOON), attempt).await;
    }

    /// `retry.backoff.ms`, doubling up to `retry.backoff.max.ms`.
    async fn backoff(&self, attempt: &mut u32) {
        let config = self.config();
        sleep_doubling(config.retry_backoff, config.retry_backoff_max, attempt).await;
    }

    /// Sends `R` to the coordinator of `key` (key type [`GROUP`] or [`TRANSACTION`]), retrying
    /// as [`coordinator_retry`] says until `message.timeout.ms` has passed. `coordinator` is
    /// the one known from before and is kept current: looked up when `None`, dropped when an
    /// error says it moved. `answer` turns a response and the broker's name into the result,
    /// or the error the response carries.
    pub(crate) async fn on_coordinator<R, B, A, T>(
        &self,
        key_type: i8,
        key: &str,
        coordinator: &mut Option<Coordinator>,
        build: B,
        answer: A,
    ) -> Result<T>
    where
        R: kafka_protocol::protocol::Request,
        B: Fn(&Connection) -> Result<(R, i16)>,
        A: Fn(R::Response, String) -> Result<T>,
    {
        let deadline = Instant::now() + self.config().delivery_timeout;
        let timeout = self.config().request_timeout;
        let mut attempt = 0;
        let mut soon_attempt = 0;
        loop {
            let c = match coordinator {
                Some(c) => c.clone(),
                None => coordinator
                    .insert(self.find_coordinator(key_type, key, deadline).await?)
                    .clone(),
            };
            let r = self
                .send::<R, _>(&c.host, c.port, timeout, &build)
                .await
                .and_then(|(resp, broker, _)| answer(resp, broker));
            match r {
                Ok(t) => return Ok(t),
                Err(e) => match coordinator_retry(&e) {
                    Retry::No => return Err(e),
                    _ if Instant::now() >= deadline => return Err(e),
                    Retry::Refind => *coordinator = None,
                    Retry::Same => {}
                    Retry::Soon => {
                        self.backoff_soon(&mut soon_attempt).await;
                        continue;
                    }
                },
            }
            self.backoff(&mut attempt).await;
        }
    }

    /// Reads a consumer group's committed offsets of `topic`'s `partitions` (OffsetFetch, on
    /// the group's coordinator). With `require_stable`, offsets of a pending transaction are
    /// waited for (the broker answers UNSTABLE_OFFSET_COMMIT until the transaction ends; the
    /// request is retried until `message.timeout.ms`).
    ///
    /// # Errors
    ///
    /// The broker's error (GROUP_AUTHORIZATION_FAILED, ...), or a retriable one that lasted
    /// past `message.timeout.ms`.
    pub async fn offset_fetch(
        &self,
        group: &str,
        topic: &str,
        partitions: &[i32],
        require_stable: bool,
    ) -> Result<Vec<CommittedOffset>> {
        let build = |conn: &Connection| {
            let v = conn.version::<OffsetFetchRequest>(OFFSET_FETCH_MAX)?;
            let mut req = OffsetFetchRequest::default()
                .with_group_id(GroupId(str_bytes(group)))
                .with_topics(Some(vec![OffsetFetchRequestTopic::default()
                    .with_name(TopicName(str_bytes(topic)))
                    .with_partition_indexes(partitions.to_vec())]));
            if v >= 7 {
                req = req.with_require_stable(require_stable);
            }
            Ok((req, v))
        };
        let answer = |resp: OffsetFetchResponse, broker: String| {
            let kafka = |code: i16, context: String| Error::Kafka {
                broker: broker.clone(),
                request: name_of::<OffsetFetchRequest>(),
                code: KafkaCode(code),
                context: Some(context),
            };
            if resp.error_code != 0 {
                return Err(kafka(resp.error_code, group.to_owned()));
            }
            let mut out = Vec::with_capacity(partitions.len().min(resp.topics.len() * 64));
            for t in resp.topics.iter().filter(|t| t.name.0.as_str() == topic) {
                for p in &t.partitions {
                    if p.error_code != 0 {
                        return Err(kafka(
                            p.error_code,
                            format!("{group} {topic}/{}", p.partition_index),
                        ));
                    }
                    out.push(CommittedOffset {
                        partition: p.partition_index,
                        offset: (p.committed_offset >= 0).then_some(p.committed_offset),
                        metadata: p
                            .metadata
                            .as_ref()
                            .map(|m| m.as_str().to_owned())
                            .filter(|m| !m.is_empty()),
                    });
                }
            }
            Ok(out)
        };
        self.on_coordinator(GROUP, group, &mut None, build, answer)
            .await
    }

    /// Initializes a transactional producer (FindCoordinator, InitProducerId): a new epoch
    /// for `transactional_id`, which fences older producers with the same id and aborts their
    /// open transaction. See [`TransactionalProducer`].
    ///
    /// # Errors
    ///
    /// The coordinator's error (TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    /// INVALID_TRANSACTION_TIMEOUT, ...), or a retriable one lasting past `message.timeout.ms`.
    pub async fn transactional_producer(
        &self,
        transactional_id: &str,
    ) -> Result<TransactionalProducer> {
        let mut p = self.new_producer(transactional_id, false);
        let timeout_ms =
            i32::try_from(self.config().transaction_timeout.as_millis()).unwrap_or(i32::MAX);
        let tid = transactional_id.to_owned();
        let resp = p
            .on_txn_coordinator::<InitProducerIdRequest, _, _>(
                INIT_PRODUCER_ID_MAX,
                || {
                    InitProducerIdRequest::default()
                        .with_transactional_id(Some(TransactionalId(str_bytes(&tid))))
                        .with_transaction_timeout_ms(timeout_ms)
                        .with_producer_id(ProducerId(-1))
                        .with_producer_epoch(-1)
                },
                |resp| (resp.error_code != 0).then_some(resp.error_code),
            )
            .await?;
        p.producer_id = resp.producer_id.0;
        p.epoch = resp.producer_epoch;
        Ok(p)
    }

    /// Initializes an idempotent producer without transactions (InitProducerId without a
    /// transactional id, on any broker): its batches carry a producer id, epoch and sequences,
    /// so a retried Produce is never appended twice (`acks=all`), and each is visible once
    /// acknowledged. Use [`TransactionalProducer::begin`], [`TransactionalProducer::send`] and
    /// [`TransactionalProducer::commit`] as for a transaction: `commit` only waits for the
    /// acknowledgements; there is nothing to abort and no offsets to send.
    ///
    /// As Kafka's Java producer, a retriable error is retried with the doubling
    /// `retry.backoff.ms` until `message.timeout.ms` has passed: COORDINATOR_LOAD_IN_PROGRESS
    /// (a broker just restarted loads its coordinator state), COORDINATOR_NOT_AVAILABLE,
    /// NOT_COORDINATOR, CONCURRENT_TRANSACTIONS and Kafka's other retriable codes, and a lost or
    /// refused connection. A broker that does not answer within `socket.timeout.ms` is not
    /// asked again.
    ///
    /// # Errors
    ///
    /// The broker's error (CLUSTER_AUTHORIZATION_FAILED, ...), a retriable one lasting past
    /// `message.timeout.ms`, or no broker reachable.
    pub async fn idempotent_producer(&self) -> Result<TransactionalProducer> {
        let mut p = self.new_producer("", true);
        let timeout = self.config().request_timeout;
        let deadline = Instant::now() + self.config().delivery_timeout;
        let mut attempt = 0u32;
        loop {
            let mut last = None;
            for (host, port) in self.metadata_candidates() {
                let build = |conn: &Connection| {
                    let v = conn.version::<InitProducerIdRequest>(INIT_PRODUCER_ID_MAX)?;
                    let req = InitProducerIdRequest::default()
                        .with_transactional_id(None)
                        .with_transaction_timeout_ms(i32::MAX)
                        .with_producer_id(ProducerId(-1))
                        .with_producer_epoch(-1);
                    Ok((req, v))
                };
                match self
                    .send::<InitProducerIdRequest, _>(&host, port, timeout, build)
                    .await
                {
                    Ok((resp, broker, _)) if resp.error_code != 0 => {
                        last = Some(Error::Kafka {
                            broker,
                            request: name_of::<InitProducerIdRequest>(),
                            code: KafkaCode(resp.error_code),
                            context: Some("idempotent producer".into()),
                        });
                    }
                    Ok((resp, _, _)) => {
                        p.producer_id = resp.producer_id.0;
                        p.epoch = resp.producer_epoch;
                        return Ok(p);
                    }
                    Err(e) => last = Some(e),
                }
            }
            let e = last.unwrap_or_else(|| Error::Config("no bootstrap.servers".into()));
            if !init_retriable(&e) || Instant::now() >= deadline {
                return Err(e);
            }
            self.backoff(&mut attempt).await;
        }
    }

    fn new_producer(&self, transactional_id: &str, idempotent: bool) -> TransactionalProducer {
        TransactionalProducer {
            client: self.clone(),
            transactional_id: transactional_id.to_owned(),
            idempotent,
            producer_id: -1,
            epoch: -1,
            coordinator: None,
            group_coordinators: HashMap::new(),
            sequences: HashMap::new(),
            in_transaction: false,
            added: HashSet::new(),
            failed: None,
            pool: Pool::default(),
            memory: Arc::new(Semaphore::new(memory_kib(self.config()))),
            windows: Vec::new(),
            acknowledged: Vec::new(),
        }
    }
}

/// A transactional producer of stored v2 batches (see the module documentation for the
/// protocol and the error handling). Made by [`Client::transactional_producer`].
///
/// Use: [`TransactionalProducer::begin`], then [`TransactionalProducer::send`] (or
/// [`TransactionalProducer::produce`], which also waits for the answers) and
/// [`TransactionalProducer::send_offsets`] any number of times, then
/// [`TransactionalProducer::commit`] or [`TransactionalProducer::abort`];
/// [`TransactionalProducer::flush`] hands out the acknowledgements (the target offsets).
#[derive(Debug)]
pub struct TransactionalProducer {
    client: Client,
    transactional_id: String,
    /// Made by [`Client::idempotent_producer`]: no transactional id, no transactions.
    idempotent: bool,
    producer_id: i64,
    epoch: i16,
    coordinator: Option<Coordinator>,
    group_coordinators: HashMap<String, Coordinator>,
    /// Next sequence per topic-partition.
    sequences: HashMap<(String, i32), i32>,
    in_transaction: bool,
    /// Partitions added to the open transaction, and groups (`("", -1)` keys are not used).
    added: HashSet<(String, i32)>,
    /// Why the producer stopped, once a fatal error happened.
    failed: Option<String>,
    /// The producer's own connections (pipelined Produce) not in use by a window.
    pool: Pool,
    /// `buffer.memory` in KiB: a batch takes its size from it until it is acknowledged.
    memory: Arc<Semaphore>,
    /// The Produce tasks of the partitions sent to since the last flush. Each has a
    /// connection of its own: a broker serves one connection's requests one at a time, so
    /// partitions on separate connections are appended in parallel.
    windows: Vec<Handle>,
    /// Acknowledgements of earlier windows not taken by [`TransactionalProducer::flush`] yet.
    acknowledged: Vec<Produced>,
}

impl TransactionalProducer {
    /// The producer id.
    pub fn producer_id(&self) -> i64 {
        self.producer_id
    }

    /// The producer epoch.
    pub fn epoch(&self) -> i16 {
        self.epoch
    }

    /// The transactional id (empty for an idempotent producer).
    pub fn transactional_id(&self) -> &str {
        &self.transactional_id
    }

    /// Whether it is an idempotent producer without transactions
    /// ([`Client::idempotent_producer`]).
    pub fn is_idempotent(&self) -> bool {
        self.idempotent
    }

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.in_transaction
    }

    /// The sequence the next batch to `topic`/`partition` gets.
    pub fn next_sequence(&self, topic: &str, partition: i32) -> i32 {
        self.sequences
            .get(&(topic.to_owned(), partition))
            .copied()
            .unwrap_or(0)
    }

    fn check(&self) -> Result<()> {
        match &self.failed {
            Some(why) => Err(Error::ProducerState(format!(
                "the producer stopped after an error: {why}"
            ))),
            None => Ok(()),
        }
    }

    fn fail<T>(&mut self, e: Error) -> Result<T> {
        if !matches!(e, Error::ProducerState(_)) {
            self.failed = Some(e.to_string());
        }
        Err(e)
    }

    /// Starts a transaction (local only: the coordinator learns of it with the first
    /// AddPartitionsToTxn or AddOffsetsToTxn).
    ///
    /// # Errors
    ///
    /// [`Error::ProducerState`] when a transaction is open already or the producer stopped.
    pub fn begin(&mut self) -> Result<()> {
        self.check()?;
        if self.in_transaction {
            return Err(Error::ProducerState("a transaction is open already".into()));
        }
        self.in_transaction = true;
        Ok(())
    }

    /// Sends the request `build` makes, at the highest version up to `max_version` the broker
    /// takes, to the transaction coordinator, retrying as [`coordinator_retry`] says until
    /// `message.timeout.ms`. `error` extracts the response's error code.
    async fn on_txn_coordinator<R, B, E>(
        &mut self,
        max_version: i16,
        build: B,
        error: E,
    ) -> Result<R::Response>
    where
        R: kafka_protocol::protocol::Request,
        B: Fn() -> R,
        E: Fn(&R::Response) -> Option<i16>,
    {
        let build = |conn: &Connection| {
            let v = conn.version::<R>(max_version)?;
            Ok((build(), v))
        };
        let tid = &self.transactional_id;
        let answer = |resp: R::Response, broker: String| match error(&resp) {
            Some(code) => Err(Error::Kafka {
                broker,
                request: name_of::<R>(),
                code: KafkaCode(code),
                context: Some(format!("transactional id {tid}")),
            }),
            None => Ok(resp),
        };
        self.client
            .on_coordinator(TRANSACTION, tid, &mut self.coordinator, build, answer)
            .await
    }

    /// AddPartitionsToTxn for the partitions of `topic` not added yet.
    async fn add_partitions(&mut self, topic: &str, partitions: &[i32]) -> Result<()> {
        let new: Vec<i32> = partitions
            .iter()
            .copied()
            .filter(|p| !self.added.contains(&(topic.to_owned(), *p)))
            .collect();
        if new.is_empty() {
            return Ok(());
        }
        let (tid, pid, epoch) = (self.transactional_id.clone(), self.producer_id, self.epoch);
        let parts = new.clone();
        self.on_txn_coordinator::<AddPartitionsToTxnRequest, _, _>(
            ADD_PARTITIONS_MAX,
            || {
                AddPartitionsToTxnRequest::default()
                    .with_v3_and_below_transactional_id(TransactionalId(str_bytes(&tid)))
                    .with_v3_and_below_producer_id(ProducerId(pid))
                    .with_v3_and_below_producer_epoch(epoch)
                    .with_v3_and_below_topics(vec![AddPartitionsToTxnTopic::default()
                        .with_name(TopicName(str_bytes(topic)))
                        .with_partitions(parts.clone())])
            },
            |resp| {
                if resp.error_code != 0 {
                    return Some(resp.error_code);
                }
                // The first real error; OPERATION_NOT_ATTEMPTED only accompanies one.
                let codes = resp
                    .results_by_topic_v3_and_below
                    .iter()
                    .flat_map(|t| t.results_by_partition.iter())
                    .map(|p| p.partition_error_code)
                    .filter(|c| *c != 0);
                let mut first = None;
                for c in codes {
                    if c != ResponseError::OperationNotAttempted.code() {
                        return Some(c);
                    }
                    first.get_or_insert(c);
                }
                first
            },
        )
        .await?;
        for p in new {
            self.added.insert((topic.to_owned(), p));
        }
        Ok(())
    }

    /// Produces `batches` (each one whole v2 batch, not a control batch) to `topic`/`partition`
    /// in the open transaction, in order, and waits until all are acknowledged (`acks=all`):
    /// [`TransactionalProducer::send`] for each, then [`TransactionalProducer::flush`], whose
    /// acknowledgements it returns (those of earlier `send`s not taken yet come first).
    ///
    /// # Errors
    ///
    /// As [`TransactionalProducer::send`].
    pub async fn produce(
        &mut self,
        topic: &str,
        partition: i32,
        batches: Vec<Vec<u8>>,
    ) -> Result<Vec<Produced>> {
        for b in batches {
            // A vector becomes a BytesMut without a copy.
            self.send(topic, partition, BytesMut::from(Bytes::from(b)))
                .await?;
        }
        self.flush().await
    }

    /// Sends `batch` (one whole v2 batch, not a control batch) to `topic`/`partition` in the
    /// open transaction, after the batches sent before it, and returns once its request is
    /// written: the caller reads the next batch while the broker appends. Up to
    /// `max.in.flight.requests.per.connection` requests are in flight; a full window first
    /// waits for the oldest answer. The batch gets the producer id, epoch, the partition's
    /// next sequence, the transactional flag, base offset 0 and partition leader epoch -1,
    /// patched in place; its records bytes are not touched. (A `Vec<u8>` becomes a `BytesMut`
    /// without a copy: `BytesMut::from(Bytes::from(vec))`; so do batches split off one
    /// buffer with `BytesMut::split_to`.) Acknowledgements are collected by
    /// [`TransactionalProducer::flush`], which [`TransactionalProducer::commit`] also waits
    /// for. Each partition has its own window and connection: batches of several partitions
    /// sent in turn are appended by the broker in parallel.
    ///
    /// # Errors
    ///
    /// [`Error::ProducerState`] outside a transaction; [`Error::Corrupt`] for a batch that is
    /// not one whole v2 data batch; the broker's fatal errors for this or an earlier batch
    /// ([`Error::Kafka`] with the Produce request and the partition); [`Error::UnknownPartition`];
    /// retriable errors that lasted past `message.timeout.ms`. After an error the producer is
    /// stopped.
    pub async fn send(&mut self, topic: &str, partition: i32, batch: BytesMut) -> Result<()> {
        self.check()?;
        if !self.in_transaction {
            return Err(Error::ProducerState("send outside a transaction".into()));
        }
        match self.send_inner(topic, partition, batch).await {
            Ok(()) => Ok(()),
            Err(e) => self.fail(e),
        }
    }

    async fn send_inner(&mut self, topic: &str, partition: i32, batch: BytesMut) -> Result<()> {
        // A partition's task that ended by itself failed: say so now, not at the commit.
        if let Some(i) = self.windows.iter().position(Handle::ended) {
            let (acked, r) = self.windows.remove(i).finish().await;
            self.acknowledged.extend(acked);
            return Err(r.err().unwrap_or_else(|| {
                Error::ProducerState("a partition's Produce task ended early".into())
            }));
        }
        // Patch first: a bad batch stops before anything is sent.
        let prepared = self.prepare(topic, partition, batch)?;
        if !self.idempotent {
            self.add_partitions(topic, &[partition]).await?;
        }
        let i = match self
            .windows
            .iter()
            .position(|w| w.topic == topic && w.partition == partition)
        {
            Some(i) => i,
            None => {
                let h = window::spawn(
                    &self.client,
                    (!self.idempotent).then_some(self.transactional_id.as_str()),
                    &self.pool,
                    topic,
                    partition,
                );
                self.windows.push(h);
                self.windows.len() - 1
            }
        };
        // Wait while the batches not acknowledged yet take all of buffer.memory (the
        // partitions' tasks make room as answers arrive).
        let kib = prepared
            .bytes
            .len()
            .div_ceil(1024)
            .clamp(1, memory_kib(self.client.config()));
        let memory = Arc::clone(&self.memory)
            .acquire_many_owned(u32::try_from(kib).unwrap_or(u32::MAX))
            .await
            .map_err(|_| Error::ProducerState("the producer's memory was closed".into()))?;
        if self.windows[i].send(prepared, memory) {
            return Ok(());
        }
        // The partition's task ended: it failed.
        let (acked, r) = self.windows.remove(i).finish().await;
        self.acknowledged.extend(acked);
        Err(r.err().unwrap_or_else(|| {
            Error::ProducerState("a partition's Produce task ended early".into())
        }))
    }

    /// Patches `bytes` for the partition's next sequence and advances it.
    fn prepare(&mut self, topic: &str, partition: i32, mut bytes: BytesMut) -> Result<Prepared> {
        let corrupt = |source| Error::Corrupt {
            source: Box::new(source),
            broker: "(local)".to_owned(),
            topic: topic.to_owned(),
            partition,
            offset: -1,
            records: Box::default(),
        };
        let span = batch_span(&bytes).map_err(corrupt)?;
        let key = (topic.to_owned(), partition);
        let sequence = self.sequences.get(&key).copied().unwrap_or(0);
        let patch = V2HeaderPatch {
            base_offset: Some(0),
            partition_leader_epoch: Some(-1),
            producer: Some((self.producer_id, self.epoch, sequence)),
            transactional: Some(!self.idempotent),
        };
        patch_v2_header(&mut bytes, &patch).map_err(corrupt)?;
        // Kafka's sequences wrap at i32::MAX to 0.
        let next = if i32::MAX - sequence < span {
            span - (i32::MAX - sequence) - 1
        } else {
            sequence + span
        };
        self.sequences.insert(key, next);
        Ok(Prepared {
            bytes: bytes.freeze(),
            span,
            sequence,
        })
    }

    /// Waits until every batch sent is acknowledged, and returns the acknowledgements not
    /// taken yet: per partition in the order its batches were sent, the partitions in the
    /// order they were first sent to.
    ///
    /// # Errors
    ///
    /// As [`TransactionalProducer::send`]. After an error the producer is stopped.
    pub async fn flush(&mut self) -> Result<Vec<Produced>> {
        self.check()?;
        match self.retire_windows().await {
            Ok(()) => Ok(std::mem::take(&mut self.acknowledged)),
            Err(e) => self.fail(e),
        }
    }

    /// Ends every window's task once all its batches are acknowledged, keeping the
    /// acknowledgements; the first error.
    async fn retire_windows(&mut self) -> Result<()> {
        let mut first_error = None;
        for h in std::mem::take(&mut self.windows) {
            let (mut acked, r) = h.finish().await;
            self.acknowledged.append(&mut acked);
            if let Err(e) = r {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Adds `group`'s offsets to the open transaction: AddOffsetsToTxn on the transaction
    /// coordinator, then TxnOffsetCommit on the group's coordinator. They become visible (to
    /// OffsetFetch with `require_stable`, and to consumers) when the transaction commits.
    ///
    /// # Errors
    ///
    /// [`Error::ProducerState`] outside a transaction; the coordinators' errors. After an
    /// error the producer is stopped.
    pub async fn send_offsets(&mut self, group: &str, offsets: &[OffsetToCommit]) -> Result<()> {
        self.check()?;
        if !self.in_transaction {
            return Err(Error::ProducerState(
                "send_offsets outside a transaction".into(),
            ));
        }
        match self.send_offsets_inner(group, offsets).await {
            Ok(()) => Ok(()),
            Err(e) => self.fail(e),
        }
    }

    async fn send_offsets_inner(&mut self, group: &str, offsets: &[OffsetToCommit]) -> Result<()> {
        if self.idempotent {
            return Err(Error::ProducerState(
                "an idempotent producer cannot commit offsets (they need a transaction)".into(),
            ));
        }
        let (tid, pid, epoch) = (self.transactional_id.clone(), self.producer_id, self.epoch);
        let group_key = (format!("\0group {group}"), -1);
        if !self.added.contains(&group_key) {
            self.on_txn_coordinator::<AddOffsetsToTxnRequest, _, _>(
                ADD_OFFSETS_MAX,
                || {
                    AddOffsetsToTxnRequest::default()
                        .with_transactional_id(TransactionalId(str_bytes(&tid)))
                        .with_producer_id(ProducerId(pid))
                        .with_producer_epoch(epoch)
                        .with_group_id(GroupId(str_bytes(group)))
                },
                |resp| (resp.error_code != 0).then_some(resp.error_code),
            )
            .await?;
            self.added.insert(group_key);
        }
        // TxnOffsetCommit goes to the group's coordinator.
        let mut by_topic: Vec<TxnOffsetCommitRequestTopic> = Vec::new();
        for o in offsets {
            let part = TxnOffsetCommitRequestPartition::default()
                .with_partition_index(o.partition)
                .with_committed_offset(o.offset)
                .with_committed_leader_epoch(-1)
                .with_committed_metadata(o.metadata.as_deref().map(str_bytes));
            match by_topic.iter_mut().find(|t| t.name.0.as_str() == o.topic) {
                Some(t) => t.partitions.push(part),
                None => by_topic.push(
                    TxnOffsetCommitRequestTopic::default()
                        .with_name(TopicName(str_bytes(&o.topic)))
                        .with_partitions(vec![part]),
                ),
            }
        }
        let build = |conn: &Connection| {
            let v = conn.version::<TxnOffsetCommitRequest>(TXN_OFFSET_COMMIT_MAX)?;
            let mut req = TxnOffsetCommitRequest::default()
                .with_transactional_id(TransactionalId(str_bytes(&tid)))
                .with_group_id(GroupId(str_bytes(group)))
                .with_producer_id(ProducerId(pid))
                .with_producer_epoch(epoch)
                .with_topics(by_topic.clone());
            if v >= 3 {
                req = req
                    .with_generation_id(-1)
                    .with_member_id(StrBytes::from_static_str(""))
                    .with_group_instance_id(None);
            }
            Ok((req, v))
        };
        let answer = |resp: TxnOffsetCommitResponse, broker: String| {
            for t in &resp.topics {
                for p in &t.partitions {
                    if p.error_code != 0 {
                        return Err(Error::Kafka {
                            broker,
                            request: name_of::<TxnOffsetCommitRequest>(),
                            code: KafkaCode(p.error_code),
                            context: Some(format!(
                                "group {group} {}/{}",
                                t.name.0.as_str(),
                                p.partition_index
                            )),
                        });
                    }
                }
            }
            Ok(())
        };
        let mut coordinator = self.group_coordinators.get(group).cloned();
        let r = self
            .client
            .on_coordinator(GROUP, group, &mut coordinator, build, answer)
            .await;
        match coordinator {
            Some(c) => self.group_coordinators.insert(group.to_owned(), c),
            None => self.group_coordinators.remove(group),
        };
        r
    }

    /// Commits the open transaction (EndTxn).
    ///
    /// # Errors
    ///
    /// As [`TransactionalProducer::abort`].
    pub async fn commit(&mut self) -> Result<()> {
        self.end(true).await
    }

    /// Aborts the open transaction (EndTxn).
    ///
    /// # Errors
    ///
    /// [`Error::ProducerState`] without an open transaction; the coordinator's error
    /// (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, ...). After an error the
    /// producer is stopped.
    pub async fn abort(&mut self) -> Result<()> {
        self.end(false).await
    }

    async fn end(&mut self, committed: bool) -> Result<()> {
        self.check()?;
        if !self.in_transaction {
            return Err(Error::ProducerState("no transaction is open".into()));
        }
        if self.idempotent {
            if !committed {
                return Err(Error::ProducerState(
                    "an idempotent producer has no transaction to abort: what was acknowledged \
                     is visible"
                        .into(),
                ));
            }
            let produced = self.retire_windows().await;
            if let Err(e) = produced {
                return self.fail(e);
            }
            self.in_transaction = false;
            return Ok(());
        }
        // Every Produce of the transaction is answered before its EndTxn (one arriving after
        // an abort's markers would start a transaction nobody ends).
        let produced = self.retire_windows().await;
        if committed {
            if let Err(e) = produced {
                return self.fail(e);
            }
        } else {
            self.acknowledged.clear();
        }
        if self.added.is_empty() {
            // Nothing reached the coordinator: there is no transaction to end.
            self.in_transaction = false;
            return Ok(());
        }
        let (tid, pid, epoch) = (self.transactional_id.clone(), self.producer_id, self.epoch);
        let r = self
            .on_txn_coordinator::<EndTxnRequest, _, _>(
                END_TXN_MAX,
                || {
                    EndTxnRequest::default()
                        .with_transactional_id(TransactionalId(str_bytes(&tid)))
                        .with_producer_id(ProducerId(pid))
                        .with_producer_epoch(epoch)
                        .with_committed(committed)
                },
                |resp| (resp.error_code != 0).then_some(resp.error_code),
            )
            .await;
        match r {
            Ok(_) => {
                self.in_transaction = false;
                self.added.clear();
                Ok(())
            }
            Err(e) => self.fail(e),
        }
    }
}

/// Sleeps `base` doubled `attempt` times, at most `cap`, and counts the attempt.
async fn sleep_doubling(base: Duration, cap: Duration, attempt: &mut u32) {
    let delay = base.saturating_mul(1u32 << (*attempt).min(16)).min(cap);
    *attempt = attempt.saturating_add(1);
    tokio::time::sleep(delay).await;
}

/// `buffer.memory` in KiB, as the producer's semaphore counts it.
fn memory_kib(config: &crate::ClientConfig) -> usize {
    config
        .buffer_memory
        .div_ceil(1024)
        .clamp(1, u32::MAX as usize)
}

/// The offset span (last offset delta + 1) of `bytes`, which must be exactly one v2 data
/// batch.
fn batch_span(bytes: &[u8]) -> krecords_codec::Result<i32> {
    let mut entries = Entries::new(bytes);
    let invalid = |reason: &str| krecords_codec::Error::Unencodable {
        reason: reason.to_owned(),
    };
    let Some(batch) = entries.next_entry()? else {
        return Err(invalid("no batch to produce"));
    };
    if entries.next_position() != bytes.len() {
        return Err(invalid("a produce batch must be exactly one entry"));
    }
    match batch {
        Batch::V2(v) if v.is_control() => Err(invalid("a control batch cannot be produced")),
        Batch::V2(v) => Ok(v.last_offset_delta().saturating_add(1)),
        Batch::Legacy(_) => Err(invalid(
            "only v2 batches can be produced by a transactional producer",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RequestName;
    use kafka_protocol::messages::ApiKey;
    use krecords_codec::write::{NewRecord, V2Builder};

    #[test]
    fn spans_and_refusals() {
        let mut b = V2Builder::new(10);
        for i in 0..4 {
            b.append(&NewRecord::new(i, None, Some(b"v"))).unwrap();
        }
        let one = b.finish().unwrap();
        assert_eq!(batch_span(&one).unwrap(), 4);
        let mut two = one.clone();
        two.extend_from_slice(&one);
        assert!(batch_span(&two).is_err());
        assert!(batch_span(&[]).is_err());
        assert!(batch_span(&one[..one.len() - 1]).is_err());
    }

    #[test]
    fn retry_classes() {
        let kafka = |e: ResponseError| Error::Kafka {
            broker: "b:1".into(),
            request: RequestName(ApiKey::Produce),
            code: KafkaCode(e.code()),
            context: None,
        };
        assert!(produce_retriable(&kafka(
            ResponseError::NotLeaderOrFollower
        )));
        assert!(produce_retriable(&kafka(ResponseError::NotEnoughReplicas)));
        assert!(!produce_retriable(&kafka(ResponseError::ProducerFenced)));
        assert!(!produce_retriable(&kafka(ResponseError::MessageTooLarge)));
        assert!(!produce_retriable(&kafka(
            ResponseError::OutOfOrderSequenceNumber
        )));
        assert!(!produce_retriable(&kafka(
            ResponseError::TopicAuthorizationFailed
        )));
        assert_eq!(
            coordinator_retry(&kafka(ResponseError::NotCoordinator)),
            Retry::Refind
        );
        assert_eq!(
            coordinator_retry(&kafka(ResponseError::ConcurrentTransactions)),
            Retry::Soon
        );
        assert_eq!(
            coordinator_retry(&kafka(ResponseError::InvalidProducerEpoch)),
            Retry::No
        );
    }
}
