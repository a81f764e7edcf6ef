//! The Produce requests of one partition that are on their way: sent, and acknowledged in
//! order. Each partition's window runs as a task of its own ([`spawn`]) with a connection of
//! its own: [`TransactionalProducer::send`](super::TransactionalProducer::send) hands it a
//! batch and returns, so the caller reads the next batch while the broker appends the last
//! ones, and a partition whose broker is slow to take a request (a broker reads one request of
//! a connection at a time) holds up no other partition. A window writes up to
//! `max.in.flight.requests.per.connection` requests before it waits for the oldest answer.
//!
//! After a retriable error the leader's connection is dropped (answers still due on it are
//! discarded) and every batch not acknowledged is sent again, oldest first, with the sequence
//! it was given: the broker answers DUPLICATE_SEQUENCE_NUMBER for one it had appended already.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{ApiKey, ProduceRequest, TopicName, TransactionalId};
use kafka_protocol::ResponseError;
use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio::task::JoinHandle;

use super::{is_unknown_topic, produce_retriable, str_bytes, Produced, PRODUCE_MAX};
use crate::client::Client;
use crate::conn::Connection;
use crate::error::{Error, KafkaCode, RequestName, Result};

/// The producer's connections not in use by a window, by `host:port`.
#[derive(Debug, Clone, Default)]
pub(super) struct Pool(Arc<Mutex<HashMap<String, Vec<Connection>>>>);

impl Pool {
    fn take(&self, addr: &str) -> Option<Connection> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get_mut(addr).and_then(Vec::pop)
    }

    fn put(&self, addr: String, conn: Connection) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(addr).or_default().push(conn);
    }
}

/// A window's task, as the producer holds it.
#[derive(Debug)]
pub(super) struct Handle {
    pub(super) topic: String,
    pub(super) partition: i32,
    /// Batches for the task, each with its share of the producer's memory (given back when
    /// it is acknowledged); dropped to tell the task that no more come.
    tx: mpsc::UnboundedSender<(Prepared, OwnedSemaphorePermit)>,
    task: JoinHandle<(Vec<Produced>, Result<()>)>,
}

/// Starts the window of `topic`/`partition`.
pub(super) fn spawn(
    client: &Client,
    transactional_id: Option<&str>,
    pool: &Pool,
    topic: &str,
    partition: i32,
) -> Handle {
    let (tx, rx) = mpsc::unbounded_channel();
    let window = Window {
        client: client.clone(),
        transactional_id: transactional_id.map(str::to_owned),
        topic: topic.to_owned(),
        partition,
        leader: None,
        pool: pool.clone(),
        unacked: VecDeque::new(),
        acked: Vec::new(),
        attempt: 0,
        failing_since: None,
        unknown_topic_retries: 0,
    };
    let task = tokio::spawn(window.run(rx));
    Handle {
        topic: topic.to_owned(),
        partition,
        tx,
        task,
    }
}

impl Handle {
    /// Hands `batch` to the task. `false` when the task has ended (it failed:
    /// [`Handle::finish`] returns its error).
    pub(super) fn send(&self, batch: Prepared, memory: OwnedSemaphorePermit) -> bool {
        self.tx.send((batch, memory)).is_ok()
    }

    /// Whether the task has ended while batches may still come: it failed.
    pub(super) fn ended(&self) -> bool {
        self.task.is_finished()
    }

    /// Tells the task no more batches come and waits until every batch is acknowledged:
    /// their acknowledgements, and the first error.
    pub(super) async fn finish(self) -> (Vec<Produced>, Result<()>) {
        let Handle { tx, task, .. } = self;
        drop(tx);
        match task.await {
            Ok(r) => r,
            Err(e) => (
                Vec::new(),
                Err(Error::ProducerState(format!(
                    "a partition's Produce task ended abnormally: {e}"
                ))),
            ),
        }
    }
}

/// A patched batch with the sequence numbers it uses.
#[derive(Debug, Clone)]
pub(super) struct Prepared {
    pub(super) bytes: Bytes,
    /// Last offset delta + 1: the sequence numbers the batch takes.
    pub(super) span: i32,
    pub(super) sequence: i32,
}

/// A batch not acknowledged yet, and the correlation id of the request carrying it (`None`
/// while it is still to be sent, first or again).
#[derive(Debug)]
struct Unacked {
    batch: Prepared,
    correlation_id: Option<i32>,
    /// The batch's share of the producer's memory, given back when it is dropped.
    _memory: OwnedSemaphorePermit,
}

/// The leader's connection for this partition, with the Produce version agreed on it.
#[derive(Debug)]
struct Leader {
    addr: String,
    conn: Connection,
    version: i16,
}

/// A partition's task (see the module documentation).
#[derive(Debug)]
struct Window {
    client: Client,
    /// `None` for an idempotent producer.
    transactional_id: Option<String>,
    topic: String,
    partition: i32,
    leader: Option<Leader>,
    pool: Pool,
    unacked: VecDeque<Unacked>,
    /// Acknowledged batches, handed back when the task ends.
    acked: Vec<Produced>,
    /// Backoff attempts since the last acknowledgement.
    attempt: u32,
    /// When the errors that are being retried began.
    failing_since: Option<Instant>,
    unknown_topic_retries: u32,
}

impl Window {
    /// The task: writes the batches that arrive on `rx` (up to the in-flight limit, then the
    /// oldest answer first), and once `rx` is closed waits for every answer. Gives back the
    /// acknowledgements and the connection (to the pool), with the first error.
    async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<(Prepared, OwnedSemaphorePermit)>,
    ) -> (Vec<Produced>, Result<()>) {
        let max_in_flight = self.client.config().max_in_flight.max(1);
        let result = async {
            loop {
                if self.in_flight() >= max_in_flight {
                    self.ack_oldest().await?;
                    continue;
                }
                let next = if self.in_flight() == 0 {
                    rx.recv().await
                } else {
                    match rx.try_recv() {
                        Ok(b) => Some(b),
                        Err(mpsc::error::TryRecvError::Empty) => {
                            self.ack_oldest().await?;
                            continue;
                        }
                        Err(mpsc::error::TryRecvError::Disconnected) => None,
                    }
                };
                match next {
                    Some((b, memory)) => self.push(b, memory).await?,
                    None => break,
                }
            }
            while self.in_flight() > 0 {
                self.ack_oldest().await?;
            }
            Ok(())
        }
        .await;
        if result.is_ok() {
            if let Some(l) = self.leader.take() {
                self.pool.put(l.addr, l.conn);
            }
        }
        (std::mem::take(&mut self.acked), result)
    }

    /// Batches sent (or waiting to be sent again) and not acknowledged.
    fn in_flight(&self) -> usize {
        self.unacked.len()
    }

    /// Adds `batch` and writes its request (the connection is opened when needed). A
    /// retriable error is not returned: the batch waits to be sent again by
    /// [`Window::ack_oldest`].
    async fn push(&mut self, batch: Prepared, memory: OwnedSemaphorePermit) -> Result<()> {
        self.unacked.push_back(Unacked {
            batch,
            correlation_id: None,
            _memory: memory,
        });
        if let Err(e) = self.send_pending().await {
            self.recover(e).await?;
        }
        Ok(())
    }

    /// Waits for the oldest batch's answer, retrying (with its sequence unchanged) through
    /// lost connections and leader changes until `message.timeout.ms`.
    async fn ack_oldest(&mut self) -> Result<()> {
        while !self.unacked.is_empty() {
            let answered = match self.send_pending().await {
                Ok(()) => self.receive_oldest().await,
                Err(e) => Err(e),
            };
            match answered {
                Ok(()) => {
                    self.attempt = 0;
                    self.failing_since = None;
                    self.unknown_topic_retries = 0;
                    return Ok(());
                }
                Err(e) => self.recover(e).await?,
            }
        }
        Ok(())
    }

    /// Decides about an error: a fatal one (or one that lasted too long) is returned; for a
    /// retriable one the connection is dropped, every unacknowledged batch is marked to be
    /// sent again, and the backoff is waited.
    async fn recover(&mut self, e: Error) -> Result<()> {
        let client = &self.client;
        let config = client.config();
        let since = *self.failing_since.get_or_insert_with(Instant::now);
        let unknown = is_unknown_topic(&e);
        if unknown {
            self.unknown_topic_retries += 1;
        }
        if !produce_retriable(&e)
            || since.elapsed() >= config.delivery_timeout
            || (unknown && self.unknown_topic_retries > config.retries)
        {
            return Err(e);
        }
        self.leader = None;
        for u in &mut self.unacked {
            u.correlation_id = None;
        }
        client.forget_leader(&self.topic);
        client.backoff(&mut self.attempt).await;
        Ok(())
    }

    /// Writes the request of every batch not on the wire, oldest first.
    async fn send_pending(&mut self) -> Result<()> {
        let client = &self.client;
        let config = client.config();
        let timeout = config.request_timeout;
        let acks_timeout = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        for i in 0..self.unacked.len() {
            if self.unacked[i].correlation_id.is_some() {
                continue;
            }
            let leader = match &mut self.leader {
                Some(l) => l,
                None => {
                    let l = client.leader(&self.topic, self.partition).await?;
                    let addr = format!("{}:{}", l.host, l.port);
                    let pooled = self.pool.take(&addr);
                    let conn = match pooled {
                        Some(c) => c,
                        None => client.open_connection(&l.host, l.port).await?,
                    };
                    let version = conn.version::<ProduceRequest>(PRODUCE_MAX)?;
                    self.leader.insert(Leader {
                        addr,
                        conn,
                        version,
                    })
                }
            };
            let request = ProduceRequest::default()
                .with_transactional_id(
                    self.transactional_id
                        .as_deref()
                        .map(|t| TransactionalId(str_bytes(t))),
                )
                .with_acks(-1)
                .with_timeout_ms(acks_timeout)
                .with_topic_data(vec![TopicProduceData::default()
                    .with_name(TopicName(str_bytes(&self.topic)))
                    .with_partition_data(vec![PartitionProduceData::default()
                        .with_index(self.partition)
                        .with_records(Some(self.unacked[i].batch.bytes.clone()))])]);
            let corr = leader
                .conn
                .send_only(&request, leader.version, timeout)
                .await?;
            self.unacked[i].correlation_id = Some(corr);
        }
        Ok(())
    }

    /// Reads the answer to the oldest batch's request and records it.
    async fn receive_oldest(&mut self) -> Result<()> {
        let (Some(leader), Some(oldest)) = (&mut self.leader, self.unacked.front()) else {
            return Ok(());
        };
        let Some(corr) = oldest.correlation_id else {
            return Ok(());
        };
        // A request's answer may take the whole acks timeout, plus the network.
        let answer_timeout = self.client.config().request_timeout.saturating_mul(2);
        let version = leader.version;
        let resp = leader
            .conn
            .receive::<ProduceRequest>(corr, version, answer_timeout)
            .await?;
        let (topic, partition) = (&self.topic, self.partition);
        let p = resp
            .responses
            .iter()
            .filter(|t| t.name.0.as_str() == topic)
            .flat_map(|t| t.partition_responses.iter())
            .find(|p| p.index == partition)
            .ok_or_else(|| Error::Protocol {
                broker: leader.conn.broker.clone(),
                request: RequestName(ApiKey::Produce),
                version,
                message: format!("no answer for {topic}/{partition}"),
            })?;
        let batch = &oldest.batch;
        let base_offset = match p.error_code {
            0 => Some(p.base_offset),
            c if c == ResponseError::DuplicateSequenceNumber.code() => None,
            c => {
                let mut context = format!(
                    "{topic}/{partition} (sequence {}, {} bytes)",
                    batch.sequence,
                    batch.bytes.len()
                );
                if let Some(m) = &p.error_message {
                    context.push_str(": ");
                    context.push_str(m.as_str());
                }
                return Err(Error::Kafka {
                    broker: leader.conn.broker.clone(),
                    request: RequestName(ApiKey::Produce),
                    code: KafkaCode(c),
                    context: Some(context),
                });
            }
        };
        self.acked.push(Produced {
            topic: topic.clone(),
            partition,
            base_offset,
            records: batch.span,
            base_sequence: batch.sequence,
        });
        self.unacked.pop_front();
        Ok(())
    }
}
