//! A live cluster's answers over the Kafka protocol: Metadata and ListOffsets through
//! krecords-client.

use crate::model::{topic_id_text, Broker, Cluster, Offsets, Partition, Topic, INTERNAL_TOPICS};
use krecords_client::{Client, ClientConfig, IsolationLevel, Metadata, OffsetSpec, Result};

/// The cluster as a Metadata request for every topic describes it (`source` names it).
///
/// # Errors
///
/// No broker reachable, or the response is malformed.
pub async fn describe(client: &Client, source: String) -> Result<Cluster> {
    let metadata = client.metadata(None).await?;
    Ok(from_metadata(metadata, source))
}

/// The cluster as `krec metadata` and `krec offsets` show it from a live cluster: connected
/// to by `config` (its `bootstrap.servers`), described by [`describe`] (`source` names it),
/// narrowed by [`Cluster::retain_topics`] to the topics matching the globs `topics` (internal
/// ones only with `all` or a glob), and with `offsets` = `Some(time)` every partition's
/// offsets ([`fill_offsets`], with the first offset at or after `time` when given); `offsets`
/// = `None` leaves them out. With `partition` = `Some((topic, n))` (a
/// `kafka://HOST/TOPIC/PARTITION` URL's), the topics matching the glob `topic` keep partition
/// `n` only ([`Cluster::retain_partition`]), before any offset is asked.
///
/// # Errors
///
/// [`crate::Error::Usage`]: a glob that does not parse (before anything is asked), globs
/// that match no topic (naming the cluster's); [`crate::Error::Client`]: no broker reachable,
/// or the Metadata response is malformed (a partition whose ListOffsets fails gets the error
/// in [`Partition::error`] instead).
pub async fn load(
    config: ClientConfig,
    source: String,
    topics: &[String],
    all: bool,
    offsets: Option<Option<i64>>,
    partition: Option<(&str, i32)>,
) -> std::result::Result<Cluster, crate::Error> {
    let filter = crate::topic_filter(topics)?;
    let client = Client::connect(config).await?;
    let mut cluster = describe(&client, source).await?;
    cluster
        .retain_topics(&filter, all)
        .map_err(crate::Error::select)?;
    if let Some((topic, n)) = partition {
        cluster.retain_partition(topic, n)?;
    }
    if let Some(time) = offsets {
        fill_offsets(&client, &mut cluster, time).await;
    }
    Ok(cluster)
}

/// The model of a Metadata answer. Topics sorted by name; a nil topic id (brokers before
/// Metadata v10) is `None`.
pub fn from_metadata(m: Metadata, source: String) -> Cluster {
    let mut topics: Vec<Topic> = m
        .topics
        .into_iter()
        .map(|t| {
            let id = *t.topic_id.as_bytes();
            // Kafka marks exactly these internal; a broker that does not say so too.
            let internal = t.internal || INTERNAL_TOPICS.contains(&t.name.as_str());
            Topic {
                name: t.name,
                id: (id != [0; 16]).then(|| topic_id_text(&id)),
                internal,
                error: t.error.map(|c| c.to_string()),
                partitions: t
                    .partitions
                    .into_iter()
                    .map(|p| Partition {
                        partition: p.partition,
                        leader: p.leader,
                        leader_epoch: p.leader_epoch,
                        replicas: p.replicas,
                        isr: p.isr,
                        offline_replicas: p.offline_replicas,
                        error: p.error.map(|c| c.to_string()),
                        error_label: None,
                        on_disk: None,
                        offsets: None,
                    })
                    .collect(),
            }
        })
        .collect();
    topics.sort_by(|a, b| a.name.cmp(&b.name));
    Cluster {
        unanswered: None,
        source,
        live: true,
        cluster_id: m.cluster_id,
        controller: (m.controller_id >= 0).then_some(m.controller_id),
        brokers: m
            .brokers
            .into_iter()
            .map(|b| Broker {
                node_id: b.node_id,
                host: b.host,
                port: b.port,
                rack: b.rack,
                fenced: None,
            })
            .collect(),
        topics,
        warnings: Vec::new(),
    }
}

/// Fills every partition's [`Partition::offsets`] (with the first offset at or after `time`,
/// when given) by [`offsets`]; a partition without a leader is left without, and one whose
/// ListOffsets fails gets the error in [`Partition::error`].
pub async fn fill_offsets(client: &Client, cluster: &mut Cluster, time: Option<i64>) {
    for t in &mut cluster.topics {
        for p in &mut t.partitions {
            if p.error.is_some() || p.leader < 0 {
                continue;
            }
            match offsets(client, &t.name, p.partition, time).await {
                Ok(o) => p.offsets = Some(o),
                Err(e) => p.error = Some(format!("ListOffsets: {e}")),
            }
        }
    }
}

/// A partition's offsets by ListOffsets: earliest, latest (read_uncommitted: the high
/// watermark), latest at read_committed (the last stable offset), and with `time` the first
/// offset whose timestamp is at or after it.
///
/// # Errors
///
/// The client's errors (the leader cannot be reached, the partition does not exist).
pub async fn offsets(
    client: &Client,
    topic: &str,
    partition: i32,
    time: Option<i64>,
) -> Result<Offsets> {
    let list = |spec, isolation| client.list_offsets(topic, partition, spec, isolation);
    let earliest = list(OffsetSpec::Earliest, IsolationLevel::ReadUncommitted).await?;
    let latest = list(OffsetSpec::Latest, IsolationLevel::ReadUncommitted).await?;
    let stable = list(OffsetSpec::Latest, IsolationLevel::ReadCommitted).await?;
    let at_time = match time {
        Some(t) => {
            list(OffsetSpec::Timestamp(t), IsolationLevel::ReadUncommitted)
                .await?
                .offset
        }
        None => None,
    };
    Ok(Offsets {
        earliest: earliest.offset.unwrap_or(0),
        latest: latest.offset.unwrap_or(0),
        last_stable: stable.offset,
        at_time,
    })
}
