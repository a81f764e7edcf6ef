//! The answer to "what does this cluster hold": one model for a live cluster and for a broker's
//! files, serialized as `krec metadata --format json` prints it.

use krecords_log::data_dir::{PartitionFilter, SelectError, Taken};
use krecords_source::ErrorClass;
use serde::Serialize;

/// A cluster's metadata: brokers, controller, topics and their partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cluster {
    /// Where the answer comes from: `kafka://HOST:PORT` or the broker's root directory.
    pub source: String,
    /// Whether it is a live cluster's answer (`false`: a broker's files).
    pub live: bool,
    /// The cluster id (Metadata response; `meta.properties` offline), when known.
    pub cluster_id: Option<String>,
    /// The controller's node id, when known (offline: the KRaft quorum's last leader).
    pub controller: Option<i32>,
    /// Brokers, sorted by node id.
    pub brokers: Vec<Broker>,
    /// Topics, sorted by name.
    pub topics: Vec<Topic>,
    /// What could not be read (a torn metadata log tail, an unreadable partition), in words.
    pub warnings: Vec<String>,
    /// The partitions left without an answer ([`Partition::error`]) because their data is
    /// damaged ([`ErrorClass::Data`]) or could not be read ([`ErrorClass::Io`]): the worse of
    /// the two, which a command answering the rest exits with. `None` when every partition
    /// asked about was answered (a directory that is not a partition's only warns).
    #[serde(skip)]
    pub unanswered: Option<ErrorClass>,
}

impl Cluster {
    /// Keeps the topics `krec metadata` and `krec offsets` show: those whose name matches one
    /// of the topic globs of `filter` ([`PartitionFilter::take`]: every topic when there is
    /// none); internal topics only with `all` or when some glob is given (a topic named
    /// explicitly is shown even when internal).
    ///
    /// # Errors
    ///
    /// [`SelectError::NoMatch`]: the filter takes no topic (it names the globs and lists the
    /// cluster's topics).
    ///
    /// ```
    /// use krecords_admin::{Cluster, Topic};
    /// use krecords_log::data_dir::PartitionFilter;
    ///
    /// let topic = |name: &str, internal| Topic {
    ///     name: name.into(), id: None, internal, error: None, partitions: Vec::new(),
    /// };
    /// let mut cluster = Cluster {
    ///     source: "kafka://localhost:9092".into(), live: true, cluster_id: None,
    ///     controller: None, brokers: Vec::new(), warnings: Vec::new(), unanswered: None,
    ///     topics: vec![topic("__consumer_offsets", true), topic("orders", false)],
    /// };
    /// let names = |c: &Cluster| c.topics.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    /// let mut all = cluster.clone();
    /// all.retain_topics(&PartitionFilter::default(), false).unwrap();
    /// assert_eq!(names(&all), ["orders"]);
    /// let e = cluster.clone().retain_topics(&PartitionFilter::globs(&["x*"], None).unwrap(), false);
    /// assert_eq!(
    ///     e.unwrap_err().to_string(),
    ///     "kafka://localhost:9092: no partition of a topic matching \"x*\" \
    ///      (its topics: __consumer_offsets, orders)"
    /// );
    /// cluster.retain_topics(&PartitionFilter::globs(&["__*"], None).unwrap(), false).unwrap();
    /// assert_eq!(names(&cluster), ["__consumer_offsets"]);
    /// ```
    pub fn retain_topics(
        &mut self,
        filter: &PartitionFilter,
        all: bool,
    ) -> Result<(), SelectError> {
        let all = all || !filter.is_all();
        let mut taken = Taken::default();
        self.topics
            .retain(|t| (all || !t.internal) && filter.take(&mut taken, Some(&t.name), None));
        filter.check(&taken, &self.source)
    }
}

impl Cluster {
    /// Writes the cluster as `krec metadata --format json` prints it: one object, one line.
    ///
    /// # Errors
    ///
    /// `out`'s.
    pub fn write_json(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer(&mut *out, self)?;
        writeln!(out)
    }

    /// Keeps only partition `partition` of the topics matching the glob `topic` (a
    /// `kafka://HOST/TOPIC/PARTITION` URL's), as `krec dump` reads that one partition; other
    /// topics (of `--topic` globs) keep all theirs.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Usage`]: the glob does not parse, or a topic it matches has no such
    /// partition, worded as `krec dump` words it: `kafka://HOST:PORT/TOPIC: no partition 9
    /// (the topic has 4)`; for a topic whose metadata carries an error (and so no partitions),
    /// the error: `kafka://HOST:PORT/TOPIC: TOPIC_AUTHORIZATION_FAILED (29)`.
    ///
    /// ```
    /// use krecords_admin::{Cluster, Partition, Topic};
    ///
    /// let partition = |partition| Partition {
    ///     partition, leader: 1, leader_epoch: 0, replicas: vec![1], isr: vec![1],
    ///     offline_replicas: Vec::new(), error: None, error_label: None, on_disk: None,
    ///     offsets: None,
    /// };
    /// let topic = Topic {
    ///     name: "multi".into(), id: None, internal: false, error: None,
    ///     partitions: (0..4).map(partition).collect(),
    /// };
    /// let mut cluster = Cluster {
    ///     source: "kafka://b:9092".into(), live: true, cluster_id: None, controller: None,
    ///     brokers: Vec::new(), warnings: Vec::new(), unanswered: None, topics: vec![topic],
    /// };
    /// let e = cluster.clone().retain_partition("multi", 9).unwrap_err();
    /// assert_eq!(e.to_string(), "kafka://b:9092/multi: no partition 9 (the topic has 4)");
    /// cluster.retain_partition("multi", 2).unwrap();
    /// assert_eq!(cluster.topics[0].partitions.len(), 1);
    /// assert_eq!(cluster.topics[0].partitions[0].partition, 2);
    /// ```
    pub fn retain_partition(&mut self, topic: &str, partition: i32) -> Result<(), crate::Error> {
        let filter = PartitionFilter::new(Some(topic), None).map_err(crate::Error::select)?;
        for t in self
            .topics
            .iter_mut()
            .filter(|t| filter.matches_topic(&t.name))
        {
            if !t.partitions.iter().any(|p| p.partition == partition) {
                let why = no_partition(&self.source, t, partition);
                return Err(crate::Error::Usage(why));
            }
            t.partitions.retain(|p| p.partition == partition);
        }
        Ok(())
    }
}

/// Why `topic` of `source` has no partition `partition`: the topic's error when the metadata
/// gives one (`kafka://b:9092/t: TOPIC_AUTHORIZATION_FAILED (29)`, after the topic's name as
/// `krec metadata` says it), else how many partitions it has.
fn no_partition(source: &str, topic: &Topic, partition: i32) -> String {
    match &topic.error {
        Some(e) => format!("{source}/{}: {e}", topic.name),
        None => format!(
            "{source}/{}: no partition {partition} (the topic has {})",
            topic.name,
            topic.partitions.len()
        ),
    }
}

/// A broker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Broker {
    /// Node id.
    pub node_id: i32,
    /// Host of its first listener.
    pub host: String,
    /// Port of its first listener.
    pub port: u16,
    /// Rack, when configured.
    pub rack: Option<String>,
    /// Whether the controller has fenced it (offline answers only; `None` live).
    pub fenced: Option<bool>,
}

/// A topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Topic {
    /// Its name.
    pub name: String,
    /// Its id as Kafka prints it (URL-safe base64 without padding), when known.
    pub id: Option<String>,
    /// Whether Kafka treats it as internal (`__consumer_offsets`, `__transaction_state`,
    /// `__share_group_state`).
    pub internal: bool,
    /// The topic's error (`UNKNOWN_TOPIC_OR_PARTITION (3)`), if any.
    pub error: Option<String>,
    /// Partitions, sorted by index.
    pub partitions: Vec<Partition>,
}

/// A partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Partition {
    /// Partition index.
    pub partition: i32,
    /// Leader's node id, `-1` when there is none (the partition is offline).
    pub leader: i32,
    /// Leader epoch, `-1` when unknown.
    pub leader_epoch: i32,
    /// Replicas' node ids, in preferred order.
    pub replicas: Vec<i32>,
    /// In-sync replicas' node ids.
    pub isr: Vec<i32>,
    /// Offline replicas' node ids (live: as the broker reports them; offline: replicas whose
    /// broker is fenced or unregistered).
    pub offline_replicas: Vec<i32>,
    /// The partition's error, if any.
    pub error: Option<String>,
    /// A word or two for a table row in place of [`Partition::error`] when the whole error is
    /// said as a warning ([`Cluster::warnings`]): `damaged`, `unreadable`. Not serialized (the
    /// JSON answers carry the error whole).
    #[serde(skip)]
    pub error_label: Option<&'static str>,
    /// Offline answers: whether this disk holds the partition's directory (`None` live).
    pub on_disk: Option<bool>,
    /// Earliest, high watermark and last stable offset, when asked for.
    pub offsets: Option<Offsets>,
}

impl Partition {
    /// Whether the partition has no leader.
    pub fn is_offline(&self) -> bool {
        self.leader < 0
    }

    /// Whether some replica is out of the ISR.
    pub fn is_under_replicated(&self) -> bool {
        self.replicas.iter().any(|r| !self.isr.contains(r))
    }

    /// The partition's error as a text row says it (`krec offsets`, `krec metadata
    /// --offsets`): its [`Partition::error_label`] when the whole error is one of
    /// [`Cluster::warnings`] (said once, on stderr), else the error.
    pub fn row_error(&self) -> Option<&str> {
        self.error_label.or(self.error.as_deref())
    }
}

/// A partition's offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Offsets {
    /// The log start offset.
    pub earliest: i64,
    /// The high watermark: the offset after the last record.
    pub latest: i64,
    /// The last stable offset (what a read_committed consumer reads up to), when known.
    pub last_stable: Option<i64>,
    /// The first offset at or after the asked time, `None` after the last record or when no
    /// time was asked.
    pub at_time: Option<i64>,
}

/// The topics Kafka marks internal in its Metadata responses.
pub const INTERNAL_TOPICS: [&str; 3] = [
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

pub use krecords_client::topic_id_text;

#[cfg(test)]
mod tests {
    use super::{Cluster, Partition, Topic};

    /// A cluster of one topic, `t`, with `partitions` and the metadata's `error`.
    fn cluster(partitions: i32, error: Option<&str>) -> Cluster {
        let partition = |partition| Partition {
            partition,
            leader: 1,
            leader_epoch: 0,
            replicas: vec![1],
            isr: vec![1],
            offline_replicas: Vec::new(),
            error: None,
            error_label: None,
            on_disk: None,
            offsets: None,
        };
        let topic = Topic {
            name: "t".into(),
            id: None,
            internal: false,
            error: error.map(str::to_owned),
            partitions: (0..partitions).map(partition).collect(),
        };
        Cluster {
            source: "kafka://b:9092".into(),
            live: true,
            cluster_id: None,
            controller: None,
            brokers: Vec::new(),
            warnings: Vec::new(),
            unanswered: None,
            topics: vec![topic],
        }
    }

    /// A topic the metadata answers with an error (and no partitions) is said with its error,
    /// not as a topic of 0 partitions.
    #[test]
    fn a_partition_of_a_topic_with_an_error_is_said_with_the_error() {
        for error in [
            "TOPIC_AUTHORIZATION_FAILED (29)",
            "UNKNOWN_TOPIC_OR_PARTITION (3)",
        ] {
            let e = cluster(0, Some(error))
                .retain_partition("t", 0)
                .unwrap_err();
            assert_eq!(e.to_string(), format!("kafka://b:9092/t: {error}"));
        }
        let e = cluster(2, None).retain_partition("t", 5).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kafka://b:9092/t: no partition 5 (the topic has 2)"
        );
    }
}
