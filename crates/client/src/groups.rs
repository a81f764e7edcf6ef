//! Consumer groups as the group coordinators describe them: ListGroups on every broker,
//! ConsumerGroupDescribe (KIP-848 consumer-protocol groups) and DescribeGroups (classic
//! groups, whose members' assignments are decoded as the consumer protocol's
//! `ConsumerProtocolAssignment`), as Kafka's Admin client asks them for
//! `kafka-consumer-groups --list` and `--describe`.

use crate::client::Client;
use crate::conn::{name_of, Connection};
use crate::error::{Error, KafkaCode, Result};
use crate::producer::{str_bytes, GROUP};
use bytes::{Buf, Bytes};
use kafka_protocol::messages::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerProtocolAssignment,
    DescribeGroupsRequest, DescribeGroupsResponse, GroupId, ListGroupsRequest, ListGroupsResponse,
};
use kafka_protocol::protocol::Decodable;
use std::collections::BTreeMap;

/// GROUP_ID_NOT_FOUND: ConsumerGroupDescribe's answer for a group that is not a
/// consumer-protocol group (a classic one, then described with DescribeGroups).
const GROUP_ID_NOT_FOUND: i16 = 69;
/// UNSUPPORTED_VERSION: Kafka 3.9's answer to ConsumerGroupDescribe, which it lists in
/// ApiVersions, when its new group coordinator is off: every group is then classic.
const UNSUPPORTED_VERSION: i16 = 35;

/// A group as ListGroups names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedGroup {
    /// The group id.
    pub group: String,
    /// The protocol type (`consumer`, `connect`, empty for a group that only commits offsets).
    pub protocol_type: String,
    /// The state (`Stable`, `Empty`, ...; ListGroups 4 and later).
    pub state: Option<String>,
    /// `classic` or `consumer` (ListGroups 5 and later).
    pub group_type: Option<String>,
}

/// A group as its coordinator describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDescription {
    /// The group id.
    pub group: String,
    /// `classic` (DescribeGroups) or `consumer` (ConsumerGroupDescribe).
    pub group_type: String,
    /// The state as Kafka names it (`Stable`, `Empty`, `PreparingRebalance`, `Dead`, ...).
    pub state: String,
    /// Classic groups: the protocol type (`consumer`, `connect`, ...).
    pub protocol_type: Option<String>,
    /// Classic groups: the assignment strategy (`range`, ...); consumer groups: the assignor.
    pub assignor: Option<String>,
    /// Consumer groups: the group epoch.
    pub epoch: Option<i32>,
    /// The members, in the coordinator's order.
    pub members: Vec<GroupMember>,
}

/// A member of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMember {
    /// The member id (kafka-consumer-groups' CONSUMER-ID).
    pub member_id: String,
    /// The client id.
    pub client_id: String,
    /// The client's host as the broker saw it (`/127.0.0.1`).
    pub host: String,
    /// The partitions assigned to it, by topic (empty when unknown: a classic group whose
    /// protocol is not the consumer protocol).
    pub assignment: BTreeMap<String, Vec<i32>>,
}

/// The consumer protocol's assignment bytes (an int16 version, then
/// `ConsumerProtocolAssignment`): topic → partitions. `None` when the bytes are not one.
pub(crate) fn consumer_assignment(mut bytes: Bytes) -> Option<BTreeMap<String, Vec<i32>>> {
    if bytes.remaining() < 2 {
        return None;
    }
    let version = bytes.get_i16().min(3);
    if version < 0 {
        return None;
    }
    let a = ConsumerProtocolAssignment::decode(&mut bytes, version).ok()?;
    let mut out: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for tp in a.assigned_partitions {
        out.entry(tp.topic.0.to_string())
            .or_default()
            .extend(tp.partitions);
    }
    for p in out.values_mut() {
        p.sort_unstable();
    }
    Some(out)
}

impl Client {
    /// Every group of the cluster (ListGroups on every broker, each coordinator naming its
    /// own), sorted by group id.
    ///
    /// # Errors
    ///
    /// A broker that cannot be reached or answers with an error.
    pub async fn list_groups(&self) -> Result<Vec<ListedGroup>> {
        let metadata = self.metadata(Some(&[])).await?;
        let timeout = self.config().request_timeout;
        let mut out = Vec::new();
        for b in &metadata.brokers {
            let build = |conn: &Connection| {
                let v = conn.version::<ListGroupsRequest>(5)?;
                Ok((ListGroupsRequest::default(), v))
            };
            let (resp, broker, version): (ListGroupsResponse, String, i16) = self
                .send::<ListGroupsRequest, _>(&b.host, b.port, timeout, build)
                .await?;
            if resp.error_code != 0 {
                return Err(Error::Kafka {
                    broker,
                    request: name_of::<ListGroupsRequest>(),
                    code: KafkaCode(resp.error_code),
                    context: None,
                });
            }
            for g in resp.groups {
                out.push(ListedGroup {
                    group: g.group_id.0.to_string(),
                    protocol_type: g.protocol_type.to_string(),
                    state: (version >= 4).then(|| g.group_state.to_string()),
                    group_type: (version >= 5).then(|| g.group_type.to_string()),
                });
            }
        }
        out.sort_by(|a, b| a.group.cmp(&b.group));
        out.dedup_by(|a, b| a.group == b.group);
        Ok(out)
    }

    /// Describes `group` on its coordinator: ConsumerGroupDescribe first when the broker has
    /// it (a consumer-protocol group), DescribeGroups for a classic group. A group the
    /// coordinator does not know is described as `Dead` with no members, as Kafka's Admin
    /// client reports it.
    ///
    /// # Errors
    ///
    /// GROUP_AUTHORIZATION_FAILED and the like, or a coordinator that cannot be found.
    pub async fn describe_group(&self, group: &str) -> Result<GroupDescription> {
        let mut coordinator = None;
        let consumer = self
            .on_coordinator(
                GROUP,
                group,
                &mut coordinator,
                |conn: &Connection| {
                    let v = conn.version::<ConsumerGroupDescribeRequest>(1)?;
                    let req = ConsumerGroupDescribeRequest::default()
                        .with_group_ids(vec![GroupId(str_bytes(group))]);
                    Ok((req, v))
                },
                |resp: ConsumerGroupDescribeResponse, broker: String| {
                    let Some(g) = resp.groups.into_iter().next() else {
                        return Ok(None);
                    };
                    if g.error_code == GROUP_ID_NOT_FOUND || g.error_code == UNSUPPORTED_VERSION {
                        return Ok(None);
                    }
                    if g.error_code != 0 {
                        return Err(Error::Kafka {
                            broker,
                            request: name_of::<ConsumerGroupDescribeRequest>(),
                            code: KafkaCode(g.error_code),
                            context: Some(group.to_owned()),
                        });
                    }
                    Ok(Some(GroupDescription {
                        group: g.group_id.0.to_string(),
                        group_type: "consumer".into(),
                        state: g.group_state.to_string(),
                        protocol_type: Some("consumer".into()),
                        assignor: Some(g.assignor_name.to_string()).filter(|a| !a.is_empty()),
                        epoch: Some(g.group_epoch),
                        members: g
                            .members
                            .into_iter()
                            .map(|m| {
                                let mut assignment: BTreeMap<String, Vec<i32>> = BTreeMap::new();
                                for tp in m.assignment.topic_partitions {
                                    assignment
                                        .entry(tp.topic_name.0.to_string())
                                        .or_default()
                                        .extend(tp.partitions);
                                }
                                for p in assignment.values_mut() {
                                    p.sort_unstable();
                                }
                                GroupMember {
                                    member_id: m.member_id.to_string(),
                                    client_id: m.client_id.to_string(),
                                    host: m.client_host.to_string(),
                                    assignment,
                                }
                            })
                            .collect(),
                    }))
                },
            )
            .await;
        match consumer {
            Ok(Some(d)) => return Ok(d),
            Ok(None) => {}
            // A broker without KIP-848 groups: every group is classic.
            Err(Error::UnsupportedVersion { .. }) => {}
            Err(e) => return Err(e),
        }
        self.on_coordinator(
            GROUP,
            group,
            &mut coordinator,
            |conn: &Connection| {
                let v = conn.version::<DescribeGroupsRequest>(5)?;
                let req =
                    DescribeGroupsRequest::default().with_groups(vec![GroupId(str_bytes(group))]);
                Ok((req, v))
            },
            |resp: DescribeGroupsResponse, broker: String| {
                let Some(g) = resp.groups.into_iter().next() else {
                    return Err(Error::Protocol {
                        broker,
                        request: name_of::<DescribeGroupsRequest>(),
                        version: 0,
                        message: format!("no group {group} in the answer"),
                    });
                };
                if g.error_code != 0 && g.error_code != GROUP_ID_NOT_FOUND {
                    return Err(Error::Kafka {
                        broker,
                        request: name_of::<DescribeGroupsRequest>(),
                        code: KafkaCode(g.error_code),
                        context: Some(group.to_owned()),
                    });
                }
                let protocol_type = g.protocol_type.to_string();
                let consumer = protocol_type == "consumer";
                Ok(GroupDescription {
                    group: g.group_id.0.to_string(),
                    group_type: "classic".into(),
                    state: if g.error_code == GROUP_ID_NOT_FOUND {
                        "Dead".into()
                    } else {
                        g.group_state.to_string()
                    },
                    assignor: Some(g.protocol_data.to_string()).filter(|a| !a.is_empty()),
                    protocol_type: Some(protocol_type).filter(|t| !t.is_empty()),
                    epoch: None,
                    members: g
                        .members
                        .into_iter()
                        .map(|m| GroupMember {
                            member_id: m.member_id.to_string(),
                            client_id: m.client_id.to_string(),
                            host: m.client_host.to_string(),
                            assignment: if consumer {
                                consumer_assignment(m.member_assignment).unwrap_or_default()
                            } else {
                                BTreeMap::new()
                            },
                        })
                        .collect(),
                })
            },
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition;
    use kafka_protocol::messages::TopicName;
    use kafka_protocol::protocol::Encodable;

    #[test]
    fn a_consumer_protocol_assignment_decodes_by_topic_and_garbage_is_none() {
        let a = ConsumerProtocolAssignment::default().with_assigned_partitions(vec![
            TopicPartition::default()
                .with_topic(TopicName(str_bytes("b")))
                .with_partitions(vec![2, 0]),
            TopicPartition::default()
                .with_topic(TopicName(str_bytes("a")))
                .with_partitions(vec![1]),
        ]);
        let mut buf = bytes::BytesMut::new();
        buf.extend_from_slice(&1i16.to_be_bytes());
        a.encode(&mut buf, 1).unwrap();
        let got = consumer_assignment(buf.freeze()).unwrap();
        assert_eq!(
            got.into_iter().collect::<Vec<_>>(),
            [("a".to_owned(), vec![1]), ("b".to_owned(), vec![0, 2])]
        );
        assert_eq!(consumer_assignment(Bytes::from_static(b"\x00")), None);
        assert_eq!(
            consumer_assignment(Bytes::from_static(b"\x00\x00\xff\xff\xff\xff")),
            None
        );
    }
}
