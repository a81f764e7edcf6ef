//! A small fake Kafka cluster with state: one broker on 127.0.0.1 that leads every partition
//! and is the transaction and group coordinator. It keeps each partition's batches (offsets
//! assigned on Produce, shown to Fetch once committed), transactions (InitProducerId fences the
//! id's previous producer and aborts its open transaction), and the committed offsets of
//! groups (TxnOffsetCommit, visible to OffsetFetch once the transaction commits) — enough for a
//! transactional producer, `krec ship` and the reading commands to run against it.

use crate::batches::next_offset;
use crate::broker::{
    add_partitions_to_txn, api_versions_of, fetch_response, find_coordinator, frame, metadata,
    Action, Ctx, Fake, TopicInfo, READ_APIS, TXN_APIS,
};
use bytes::Bytes;
use kafka_protocol::messages::consumer_group_describe_response::{
    Assignment, DescribedGroup as CgDescribedGroup, Member as CgMember,
    TopicPartitions as CgTopicPartitions,
};
use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition as CpaTopicPartition;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::fetch_response::PartitionData;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponsePartition, OffsetFetchResponseTopic,
};
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::txn_offset_commit_response::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use kafka_protocol::messages::{
    AddOffsetsToTxnResponse, AddPartitionsToTxnRequest, ApiKey, EndTxnRequest, EndTxnResponse,
    FetchRequest, FindCoordinatorRequest, InitProducerIdRequest, InitProducerIdResponse,
    ListOffsetsRequest, ListOffsetsResponse, MetadataRequest, OffsetFetchRequest,
    OffsetFetchResponse, ProduceRequest, ProduceResponse, ProducerId, RequestHeader,
    TxnOffsetCommitRequest, TxnOffsetCommitResponse,
};
use kafka_protocol::messages::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerProtocolAssignment,
    DescribeGroupsRequest, DescribeGroupsResponse, GroupId, ListGroupsResponse, TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use krecords_codec::read::Entries;
use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Whether a stored batch is visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Committed,
    /// In the open transaction of this producer id.
    Open(i64),
    Aborted,
}

/// One stored batch.
#[derive(Debug, Clone)]
struct Stored {
    bytes: Vec<u8>,
    state: State,
}

#[derive(Debug, Default)]
struct Partition {
    batches: Vec<Stored>,
    /// The next offset to assign.
    end: i64,
}

impl Partition {
    /// The first offset of an open transaction, or the end.
    fn last_stable_offset(&self) -> i64 {
        self.batches
            .iter()
            .find(|b| matches!(b.state, State::Open(_)))
            .map_or(self.end, |b| base_offset(&b.bytes))
    }
}

#[derive(Debug)]
struct Txn {
    producer_id: i64,
    epoch: i16,
    /// Offsets to commit with the transaction: (group, topic, partition) → (offset, metadata).
    offsets: BTreeMap<(String, String, i32), (i64, Option<String>)>,
}

#[derive(Debug, Default)]
struct Cluster {
    topics: BTreeMap<String, Vec<Partition>>,
    txns: BTreeMap<String, Txn>,
    next_producer_id: i64,
    committed: BTreeMap<(String, String, i32), (i64, Option<String>)>,
    /// Produce requests still to be refused with this error code (then the count drops).
    produce_errors: Vec<i16>,
    /// Groups with members, as [`FakeCluster::set_group`] made them.
    groups: BTreeMap<String, FakeGroup>,
    /// Fetch requests still to be answered before the broker stops
    /// ([`FakeCluster::stop_after_fetches`]); `None`: it never stops.
    fetches_left: Option<usize>,
    /// The broker has stopped: every request's connection is closed unanswered.
    stopped: bool,
}

/// A group the fake coordinator describes (see [`FakeCluster::set_group`]).
#[derive(Debug, Clone, Default)]
pub struct FakeGroup {
    /// A KIP-848 consumer-protocol group (ConsumerGroupDescribe), else a classic one
    /// (DescribeGroups, protocol type `consumer`).
    pub consumer_protocol: bool,
    /// A KIP-932 share group: only listed (ListGroups type `share`), never described.
    pub share: bool,
    /// The state (`Stable`, `Empty`, ...).
    pub state: String,
    /// The members.
    pub members: Vec<FakeMember>,
}

/// A member of a [`FakeGroup`].
#[derive(Debug, Clone, Default)]
pub struct FakeMember {
    /// Member id.
    pub member_id: String,
    /// Client id.
    pub client_id: String,
    /// Host, as brokers write it (`/127.0.0.1`).
    pub host: String,
    /// Assigned partitions: (topic, partitions).
    pub assignment: Vec<(String, Vec<i32>)>,
}

/// The group APIs the fake coordinator answers, besides [`READ_APIS`] and [`TXN_APIS`].
const GROUP_APIS: [(ApiKey, i16, i16); 3] = [
    (ApiKey::ListGroups, 0, 5),
    (ApiKey::DescribeGroups, 0, 5),
    (ApiKey::ConsumerGroupDescribe, 0, 1),
];

/// A running fake cluster. See the module documentation.
#[derive(Debug, Clone)]
pub struct FakeCluster {
    fake: Fake,
    state: Arc<Mutex<Cluster>>,
}

fn base_offset(batch: &[u8]) -> i64 {
    batch.get(..8).map_or(0, |b| {
        b.iter().fold(0i64, |acc, &x| (acc << 8) | i64::from(x))
    })
}

impl FakeCluster {
    /// A cluster with these topics: (name, partitions), all empty.
    pub fn start(topics: &[(&str, i32)]) -> FakeCluster {
        let mut cluster = Cluster {
            next_producer_id: 1000,
            ..Cluster::default()
        };
        for (name, partitions) in topics {
            let parts = (0..*partitions).map(|_| Partition::default()).collect();
            cluster.topics.insert((*name).to_owned(), parts);
        }
        let state = Arc::new(Mutex::new(cluster));
        let shared = Arc::clone(&state);
        let fake = Fake::start(move |ctx, header, body| {
            let mut c = shared.lock().unwrap_or_else(|e| e.into_inner());
            c.answer(ctx, header, body)
        });
        FakeCluster { fake, state }
    }

    fn lock(&self) -> MutexGuard<'_, Cluster> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The broker (its address, the requests it saw).
    pub fn broker(&self) -> &Fake {
        &self.fake
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        self.fake.addr()
    }

    /// Appends committed batches to a partition as they are (their offsets kept; the
    /// partition's end moves past them).
    pub fn append(&self, topic: &str, partition: i32, batches: &[Vec<u8>]) {
        let mut c = self.lock();
        let p = c
            .partition_mut(topic, partition)
            .expect("a partition of the fake");
        for b in batches {
            p.end = p.end.max(next_offset(b));
            p.batches.push(Stored {
                bytes: b.clone(),
                state: State::Committed,
            });
        }
    }

    /// Appends the batches of a transaction of `producer_id` that stays open (no marker): the
    /// partition's last stable offset stays at the first of them until the producer's next
    /// EndTxn.
    pub fn append_open(&self, topic: &str, partition: i32, producer_id: i64, batches: &[Vec<u8>]) {
        let mut c = self.lock();
        let p = c
            .partition_mut(topic, partition)
            .expect("a partition of the fake");
        for b in batches {
            p.end = p.end.max(next_offset(b));
            p.batches.push(Stored {
                bytes: b.clone(),
                state: State::Open(producer_id),
            });
        }
    }

    /// The committed batches of a partition, with the offsets the fake gave them.
    pub fn committed_batches(&self, topic: &str, partition: i32) -> Vec<Vec<u8>> {
        let mut c = self.lock();
        c.partition_mut(topic, partition)
            .map(|p| {
                p.batches
                    .iter()
                    .filter(|b| b.state == State::Committed)
                    .map(|b| b.bytes.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The values of the committed records of a partition, in offset order.
    pub fn committed_values(&self, topic: &str, partition: i32) -> Vec<String> {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        for b in self.committed_batches(topic, partition) {
            for e in Entries::new(&b) {
                let e = e.expect("a stored entry");
                for r in e
                    .records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
                    .expect("records")
                {
                    let r = r.expect("a record");
                    out.push(String::from_utf8_lossy(r.value().unwrap_or_default()).into_owned());
                }
            }
        }
        out
    }

    /// Batches stored in transactions that were aborted (or fenced), on every partition.
    pub fn aborted_batches(&self) -> usize {
        let c = self.lock();
        c.topics
            .values()
            .flatten()
            .flat_map(|p| &p.batches)
            .filter(|b| b.state == State::Aborted)
            .count()
    }

    /// The committed offset of a group on a partition, with its metadata.
    pub fn committed_offset(
        &self,
        group: &str,
        topic: &str,
        partition: i32,
    ) -> Option<(i64, Option<String>)> {
        let key = (group.to_owned(), topic.to_owned(), partition);
        self.lock().committed.get(&key).cloned()
    }

    /// Records `group`'s committed offset of a partition, as a committed OffsetCommit would.
    pub fn commit(&self, group: &str, topic: &str, partition: i32, offset: i64) {
        let key = (group.to_owned(), topic.to_owned(), partition);
        self.lock().committed.insert(key, (offset, None));
    }

    /// Makes `group` a group with members, described by ListGroups, DescribeGroups (classic)
    /// or ConsumerGroupDescribe (consumer protocol).
    pub fn set_group(&self, group: &str, spec: FakeGroup) {
        self.lock().groups.insert(group.to_owned(), spec);
    }

    /// Refuses the next Produce requests, one per code given (e.g. 15, COORDINATOR_NOT_AVAILABLE;
    /// a fatal code ends a producer).
    pub fn fail_produce(&self, codes: &[i16]) {
        self.lock().produce_errors.extend_from_slice(codes);
    }

    /// Answers `n` more Fetch requests (a stopped broker starts again), then stops as a broker
    /// that went down: from the next Fetch on, every request's connection is closed unanswered.
    pub fn stop_after_fetches(&self, n: usize) {
        let mut c = self.lock();
        c.fetches_left = Some(n);
        c.stopped = false;
    }
}

/// A classic consumer's assignment bytes: version 0, then `ConsumerProtocolAssignment`.
fn classic_assignment(assignment: &[(String, Vec<i32>)]) -> Bytes {
    let a = ConsumerProtocolAssignment::default().with_assigned_partitions(
        assignment
            .iter()
            .map(|(t, ps)| {
                CpaTopicPartition::default()
                    .with_topic(TopicName(StrBytes::from_string(t.clone())))
                    .with_partitions(ps.clone())
            })
            .collect(),
    );
    let mut buf = bytes::BytesMut::new();
    buf.extend_from_slice(&0i16.to_be_bytes());
    a.encode(&mut buf, 0).expect("an assignment encodes");
    buf.freeze()
}

impl Cluster {
    fn partition_mut(&mut self, topic: &str, partition: i32) -> Option<&mut Partition> {
        self.topics
            .get_mut(topic)?
            .get_mut(usize::try_from(partition).ok()?)
    }

    fn topic_name_by_id(&self, id: uuid::Uuid) -> Option<String> {
        self.topics
            .keys()
            .find(|n| crate::broker::topic_id(n) == id)
            .cloned()
    }

    fn answer(&mut self, ctx: &Ctx, header: &RequestHeader, mut body: Bytes) -> Action {
        let v = header.request_api_version;
        let Ok(key) = ApiKey::try_from(header.request_api_key) else {
            return Action::Close;
        };
        if key == ApiKey::Fetch {
            match self.fetches_left {
                Some(0) => self.stopped = true,
                Some(n) => self.fetches_left = Some(n - 1),
                None => {}
            }
        }
        if self.stopped {
            return Action::Close;
        }
        let bytes = match key {
            ApiKey::ApiVersions => api_versions_of(
                header,
                &[&READ_APIS[..], &TXN_APIS[..], &GROUP_APIS[..]].concat(),
            ),
            ApiKey::Metadata => {
                let Ok(req) = MetadataRequest::decode(&mut body, v) else {
                    return Action::Close;
                };
                let names: Vec<String> = match req.topics {
                    Some(ts) => ts
                        .iter()
                        .filter_map(|t| t.name.as_ref().map(|n| n.0.to_string()))
                        .collect(),
                    None => self.topics.keys().cloned().collect(),
                };
                let topics: Vec<TopicInfo<'_>> = names
                    .iter()
                    .map(|n| match self.topics.get(n) {
                        Some(parts) => TopicInfo::new(n, i32::try_from(parts.len()).unwrap_or(0)),
                        None => TopicInfo {
                            error: 3, // UNKNOWN_TOPIC_OR_PARTITION
                            ..TopicInfo::new(n, 0)
                        },
                    })
                    .collect();
                metadata(header, ctx.host, ctx.port, &topics)
            }
            ApiKey::ListOffsets => return self.list_offsets(header, body),
            ApiKey::Fetch => return self.fetch(header, body),
            ApiKey::FindCoordinator => {
                let Ok(req) = FindCoordinatorRequest::decode(&mut body, v) else {
                    return Action::Close;
                };
                find_coordinator(ctx, header, &req)
            }
            ApiKey::InitProducerId => {
                let Ok(req) = InitProducerIdRequest::decode(&mut body, v) else {
                    return Action::Close;
                };
                let id = req
                    .transactional_id
                    .map(|t| t.0.to_string())
                    .unwrap_or_default();
                let (pid, epoch) = match self.txns.get(&id) {
                    Some(t) => (t.producer_id, t.epoch + 1),
                    None => {
                        self.next_producer_id += 1;
                        (self.next_producer_id, 0)
                    }
                };
                // Fencing aborts the previous producer's open transaction.
                self.end_txn(pid, false);
                self.txns.insert(
                    id,
                    Txn {
                        producer_id: pid,
                        epoch,
                        offsets: BTreeMap::new(),
                    },
                );
                frame(
                    header,
                    &InitProducerIdResponse::default()
                        .with_producer_id(ProducerId(pid))
                        .with_producer_epoch(epoch),
                )
            }
            ApiKey::AddPartitionsToTxn => {
                let Ok(req) = AddPartitionsToTxnRequest::decode(&mut body, v) else {
                    return Action::Close;
                };
                add_partitions_to_txn(header, &req, 0)
            }
            ApiKey::AddOffsetsToTxn => frame(header, &AddOffsetsToTxnResponse::default()),
            ApiKey::Produce => return self.produce(header, body),
            ApiKey::TxnOffsetCommit => {
                let Ok(req) = TxnOffsetCommitRequest::decode(&mut body, v) else {
                    return Action::Close;
                };
                let group = req.group_id.0.to_string();
                let mut topics = Vec::new();
                if let Some(txn) = self.txns.get_mut(req.transactional_id.0.as_str()) {
                    for t in &req.topics {
                        let mut parts = Vec::new();
                        for p in &t.partitions {
                            let meta = p.committed_metadata.as_ref().map(|m| m.as_str().to_owned());
                            let key = (group.clone(), t.name.0.to_string(), p.partition_index);
                            txn.offsets.insert(key, (p.committed_offset, meta));
                            parts.push(
                                TxnOffsetCommitResponsePartition::default()
                                    .with_partition_index(p.partition_index),
                            );
                        }
                        topics.push(
                            TxnOffsetCommitResponseTopic::default()
                                .with_name(t.name.clone())
                                .with_partitions(parts),
                        );
                    }
                }
                frame(
                    header,
                    &TxnOffsetCommitResponse::default().with_topics(topics),
                )
            }
            ApiKey::EndTxn => {
                let Ok(req) = EndTxnRequest::decode(&mut body, v) else {
                    return Action::Close;
                };
                let id = req.transactional_id.0.to_string();
                let offsets = self
                    .txns
                    .get_mut(&id)
                    .map(|t| std::mem::take(&mut t.offsets))
                    .unwrap_or_default();
                if req.committed {
                    self.committed.extend(offsets);
                }
                self.end_txn(req.producer_id.0, req.committed);
                frame(header, &EndTxnResponse::default())
            }
            ApiKey::OffsetFetch => {
                let Ok(req) = OffsetFetchRequest::decode(&mut body, v) else {
                    return Action::Close;
                };
                let group = req.group_id.0.to_string();
                let topics = req
                    .topics
                    .unwrap_or_default()
                    .iter()
                    .map(|t| {
                        OffsetFetchResponseTopic::default()
                            .with_name(t.name.clone())
                            .with_partitions(
                                t.partition_indexes
                                    .iter()
                                    .map(|p| {
                                        let key = (group.clone(), t.name.0.to_string(), *p);
                                        let (offset, meta) =
                                            self.committed.get(&key).cloned().unwrap_or((-1, None));
                                        OffsetFetchResponsePartition::default()
                                            .with_partition_index(*p)
                                            .with_committed_offset(offset)
                                            .with_metadata(meta.map(StrBytes::from_string))
                                    })
                                    .collect(),
                            )
                    })
                    .collect();
                frame(header, &OffsetFetchResponse::default().with_topics(topics))
            }
            ApiKey::ListGroups => frame(header, &self.list_groups()),
            ApiKey::DescribeGroups => {
                let Ok(req) = DescribeGroupsRequest::decode(&mut body, v) else {
                    return Action::Close;
                };
                frame(header, &self.describe_groups(&req))
            }
            ApiKey::ConsumerGroupDescribe => {
                let Ok(req) = ConsumerGroupDescribeRequest::decode(&mut body, v) else {
                    return Action::Close;
                };
                frame(header, &self.consumer_group_describe(&req))
            }
            _ => return Action::Close,
        };
        Action::Send(bytes)
    }

    /// Groups with members, then groups that only have committed offsets (classic, `Empty`).
    fn list_groups(&self) -> ListGroupsResponse {
        let mut names: BTreeMap<String, (String, String, String)> = BTreeMap::new();
        for (g, _, _) in self.committed.keys() {
            names.insert(g.clone(), (String::new(), "Empty".into(), "classic".into()));
        }
        for (g, spec) in &self.groups {
            let kind = if spec.share {
                "share"
            } else if spec.consumer_protocol {
                "consumer"
            } else {
                "classic"
            };
            names.insert(
                g.clone(),
                ("consumer".into(), spec.state.clone(), kind.into()),
            );
        }
        ListGroupsResponse::default().with_groups(
            names
                .into_iter()
                .map(|(g, (protocol, state, kind))| {
                    ListedGroup::default()
                        .with_group_id(GroupId(StrBytes::from_string(g)))
                        .with_protocol_type(StrBytes::from_string(protocol))
                        .with_group_state(StrBytes::from_string(state))
                        .with_group_type(StrBytes::from_string(kind))
                })
                .collect(),
        )
    }

    /// Classic groups (GROUP_ID_NOT_FOUND-free: an unknown group is `Dead`, as Kafka answers).
    fn describe_groups(&self, req: &DescribeGroupsRequest) -> DescribeGroupsResponse {
        let groups = req
            .groups
            .iter()
            .map(|g| {
                let name = g.0.to_string();
                let described = DescribedGroup::default().with_group_id(g.clone());
                match self.groups.get(&name).filter(|s| !s.consumer_protocol) {
                    None => described.with_group_state(StrBytes::from_static_str("Dead")),
                    Some(spec) => described
                        .with_group_state(StrBytes::from_string(spec.state.clone()))
                        .with_protocol_type(StrBytes::from_static_str("consumer"))
                        .with_protocol_data(StrBytes::from_static_str("range"))
                        .with_members(
                            spec.members
                                .iter()
                                .map(|m| {
                                    DescribedGroupMember::default()
                                        .with_member_id(StrBytes::from_string(m.member_id.clone()))
                                        .with_client_id(StrBytes::from_string(m.client_id.clone()))
                                        .with_client_host(StrBytes::from_string(m.host.clone()))
                                        .with_member_assignment(classic_assignment(&m.assignment))
                                })
                                .collect(),
                        ),
                }
            })
            .collect();
        DescribeGroupsResponse::default().with_groups(groups)
    }

    /// Consumer-protocol groups; any other group is GROUP_ID_NOT_FOUND (69), as Kafka answers.
    fn consumer_group_describe(
        &self,
        req: &ConsumerGroupDescribeRequest,
    ) -> ConsumerGroupDescribeResponse {
        let groups = req
            .group_ids
            .iter()
            .map(|g| {
                let name = g.0.to_string();
                let described = CgDescribedGroup::default().with_group_id(g.clone());
                match self.groups.get(&name).filter(|s| s.consumer_protocol) {
                    None => described.with_error_code(69),
                    Some(spec) => described
                        .with_group_state(StrBytes::from_string(spec.state.clone()))
                        .with_group_epoch(3)
                        .with_assignor_name(StrBytes::from_static_str("uniform"))
                        .with_members(
                            spec.members
                                .iter()
                                .map(|m| {
                                    CgMember::default()
                                        .with_member_id(StrBytes::from_string(m.member_id.clone()))
                                        .with_client_id(StrBytes::from_string(m.client_id.clone()))
                                        .with_client_host(StrBytes::from_string(m.host.clone()))
                                        .with_assignment(
                                            Assignment::default().with_topic_partitions(
                                                m.assignment
                                                    .iter()
                                                    .map(|(t, ps)| {
                                                        CgTopicPartitions::default()
                                                            .with_topic_id(crate::broker::topic_id(
                                                                t,
                                                            ))
                                                            .with_topic_name(TopicName(
                                                                StrBytes::from_string(t.clone()),
                                                            ))
                                                            .with_partitions(ps.clone())
                                                    })
                                                    .collect(),
                                            ),
                                        )
                                })
                                .collect(),
                        ),
                }
            })
            .collect();
        ConsumerGroupDescribeResponse::default().with_groups(groups)
    }

    /// Commits or aborts the open transaction of `pid` on every partition.
    fn end_txn(&mut self, pid: i64, commit: bool) {
        for b in self
            .topics
            .values_mut()
            .flatten()
            .flat_map(|p| &mut p.batches)
        {
            if b.state == State::Open(pid) {
                b.state = if commit {
                    State::Committed
                } else {
                    State::Aborted
                };
            }
        }
    }

    fn produce(&mut self, header: &RequestHeader, mut body: Bytes) -> Action {
        let Ok(req) = ProduceRequest::decode(&mut body, header.request_api_version) else {
            return Action::Close;
        };
        let refuse = (!self.produce_errors.is_empty()).then(|| self.produce_errors.remove(0));
        let mut responses = Vec::new();
        for t in &req.topic_data {
            let mut parts = Vec::new();
            for pd in &t.partition_data {
                let mut code = refuse.unwrap_or(0);
                let mut base = -1;
                let records = pd.records.clone().unwrap_or_default();
                let first = Entries::new(&records).next().and_then(Result::ok);
                let pid = first.as_ref().and_then(|b| b.producer_id()).unwrap_or(-1);
                // An idempotent producer's batches are visible at once.
                let transactional = first.as_ref().is_some_and(|b| b.is_transactional());
                let span = first
                    .as_ref()
                    .map_or(0, |b| b.last_offset() - b.offset_field() + 1);
                match self.partition_mut(&t.name.0, pd.index) {
                    _ if code != 0 => {}
                    None => code = 3,
                    Some(p) => {
                        base = p.end;
                        let mut bytes = records.to_vec();
                        if let Some(head) = bytes.get_mut(..8) {
                            head.copy_from_slice(&base.to_be_bytes());
                        }
                        p.end += span;
                        p.batches.push(Stored {
                            bytes,
                            state: if transactional {
                                State::Open(pid)
                            } else {
                                State::Committed
                            },
                        });
                    }
                }
                parts.push(
                    PartitionProduceResponse::default()
                        .with_index(pd.index)
                        .with_error_code(code)
                        .with_base_offset(base),
                );
            }
            responses.push(
                TopicProduceResponse::default()
                    .with_name(t.name.clone())
                    .with_partition_responses(parts),
            );
        }
        Action::Send(frame(
            header,
            &ProduceResponse::default().with_responses(responses),
        ))
    }

    fn list_offsets(&mut self, header: &RequestHeader, mut body: Bytes) -> Action {
        let Ok(req) = ListOffsetsRequest::decode(&mut body, header.request_api_version) else {
            return Action::Close;
        };
        let mut topics = Vec::new();
        for t in &req.topics {
            let mut parts = Vec::new();
            for rp in &t.partitions {
                let (offset, timestamp) = match self.partition_mut(&t.name.0, rp.partition_index) {
                    None => (-1, -1),
                    Some(p) => match rp.timestamp {
                        -2 => (0, -1),
                        -1 if req.isolation_level == 1 => (p.last_stable_offset(), -1),
                        -1 => (p.end, -1),
                        ts => first_at_or_after(p, ts),
                    },
                };
                parts.push(
                    ListOffsetsPartitionResponse::default()
                        .with_partition_index(rp.partition_index)
                        .with_offset(offset)
                        .with_timestamp(timestamp),
                );
            }
            topics.push(
                ListOffsetsTopicResponse::default()
                    .with_name(t.name.clone())
                    .with_partitions(parts),
            );
        }
        Action::Send(frame(
            header,
            &ListOffsetsResponse::default().with_topics(topics),
        ))
    }

    fn fetch(&mut self, header: &RequestHeader, mut body: Bytes) -> Action {
        let Ok(req) = FetchRequest::decode(&mut body, header.request_api_version) else {
            return Action::Close;
        };
        let Some(t) = req.topics.first() else {
            return Action::Close;
        };
        let name = if header.request_api_version >= 13 {
            self.topic_name_by_id(t.topic_id).unwrap_or_default()
        } else {
            t.topic.0.to_string()
        };
        let Some(fp) = t.partitions.first() else {
            return Action::Close;
        };
        let committed_only = req.isolation_level == 1;
        let Some(p) = self.partition_mut(&name, fp.partition) else {
            let data = PartitionData::default()
                .with_partition_index(fp.partition)
                .with_error_code(3);
            return Action::Send(fetch_response(header, &name, data));
        };
        let lso = p.last_stable_offset();
        let end = if committed_only { lso } else { p.end };
        let window = usize::try_from(fp.partition_max_bytes).unwrap_or(0);
        let mut records = Vec::new();
        for b in &p.batches {
            if next_offset(&b.bytes) <= fp.fetch_offset || base_offset(&b.bytes) >= end {
                continue;
            }
            if b.state == State::Aborted || matches!(b.state, State::Open(_)) && committed_only {
                continue;
            }
            if !records.is_empty() && records.len() + b.bytes.len() > window {
                break;
            }
            records.extend_from_slice(&b.bytes);
        }
        let data = PartitionData::default()
            .with_partition_index(fp.partition)
            .with_high_watermark(p.end)
            .with_last_stable_offset(lso)
            .with_log_start_offset(0)
            .with_records(Some(Bytes::from(records)));
        Action::Send(fetch_response(header, &name, data))
    }
}

/// ListOffsets by time: the first record at or after `ts` (offset, its timestamp); (-1, -1)
/// past the last.
fn first_at_or_after(p: &Partition, ts: i64) -> (i64, i64) {
    let mut scratch = Vec::new();
    for b in p.batches.iter().filter(|b| b.state == State::Committed) {
        for e in Entries::new(&b.bytes).flatten() {
            let Ok(records) = e.records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT) else {
                continue;
            };
            for r in records.flatten() {
                if let Some(t) = r.timestamp().filter(|t| *t >= ts) {
                    return (r.offset(), t);
                }
            }
        }
    }
    (-1, -1)
}
