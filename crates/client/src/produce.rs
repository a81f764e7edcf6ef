//! Producing new records (what `krec produce` does): records are placed on partitions by
//! Kafka's default partitioner ([`crate::Partitioner`]) or an explicit partition, built into
//! v2 batches (any codec and level), and sent by a [`crate::TransactionalProducer`]:
//! idempotent by default, or in one transaction so that a consumer at `read_committed` sees
//! all of them or none. Existing v2 batches are sent as they are ([`produce_batches`]).
//!
//! The plan ([`plan_partitions`]) is separate from the sending ([`produce_records`]) so that
//! where each record goes is tested without a broker.

use std::collections::BTreeMap;

use bytes::{Bytes, BytesMut};
use krecords_codec::build::{build_batches, BatchOptions, BuildRecord};
use krecords_codec::Compression;

use crate::client::Client;
use crate::error::Error;
use crate::partitioner::Partitioner;
use crate::producer::Produced;

/// A record to produce: the record, and the partition it must go to (`None`: the default
/// partitioner picks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProduceRecord {
    /// An explicit partition, or `None`.
    pub partition: Option<i32>,
    /// The record (its `offset` is ignored: the broker assigns offsets).
    pub record: BuildRecord,
    /// The input line it was read from (from 1), which errors name; `None`: errors name its
    /// number among the records (from 1).
    pub line: Option<usize>,
}

/// How [`produce_records`] builds and sends batches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProduceOptions {
    /// The codec of every batch.
    pub compression: Compression,
    /// The codec's level (`None`: its default).
    pub level: Option<i32>,
    /// Records per batch (at least 1); keyless records stick to one partition for this many
    /// records, then move on to the next partition.
    pub records_per_batch: usize,
    /// The transactional id of the one transaction all records are produced in; `None`: an
    /// idempotent producer without a transaction (each batch visible once acknowledged).
    pub transactional_id: Option<String>,
    /// The first sticky partition for keyless records (taken modulo the partition count).
    pub sticky_start: u32,
    /// The partition of the records that name none (`krec produce kafka://HOST/TOPIC/3`);
    /// `None`: the default partitioner's. One the topic does not have is
    /// [`ProduceError::Topic`], before anything is sent.
    pub partition: Option<i32>,
}

impl ProduceOptions {
    /// Uncompressed, 1,000 records per batch, sticky partitions from 0, in a transaction of
    /// `transactional_id`.
    pub fn new(transactional_id: impl Into<String>) -> Self {
        ProduceOptions {
            transactional_id: Some(transactional_id.into()),
            ..ProduceOptions::idempotent()
        }
    }

    /// Uncompressed, 1,000 records per batch, sticky partitions from 0, by an idempotent
    /// producer without a transaction.
    pub fn idempotent() -> Self {
        ProduceOptions {
            compression: Compression::None,
            level: None,
            records_per_batch: 1000,
            transactional_id: None,
            sticky_start: 0,
            partition: None,
        }
    }
}

/// Why records could not be produced.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProduceError {
    /// The client or the broker failed (connection, metadata, Produce, the transaction).
    #[error(transparent)]
    Client(#[from] Error),
    /// The topic is not in the cluster's metadata, or has no partitions.
    #[error("topic {topic}: {reason}")]
    Topic {
        /// The topic.
        topic: String,
        /// What the metadata said.
        reason: String,
    },
    /// A record names a partition the topic does not have: `input line 3: partition 7 does
    /// not exist (the topic has 2)` (`record 3: ...` when its line is not known).
    #[error("{}: partition {partition} does not exist (the topic has {partitions})",
        line.map_or_else(|| format!("record {record}"), |l| format!("input line {l}")))]
    Partition {
        /// The record's number in the input, from 1.
        record: usize,
        /// The input line it was read from (from 1), when known.
        line: Option<usize>,
        /// The partition it named.
        partition: i32,
        /// How many partitions the topic has.
        partitions: i32,
    },
    /// A batch could not be built (a record the format cannot carry, a bad level).
    #[error("cannot build a batch: {0}")]
    Build(#[from] krecords_codec::Error),
    /// An existing batch cannot be sent as it is (a v0/v1 entry), or its input failed.
    #[error("{0}")]
    Input(String),
}

/// Assigns each record its partition: the explicit one, else its key's (murmur2, as Kafka's
/// Java producer), else the sticky partition, which moves on after every
/// `records_per_batch` keyless records. Returns the records per partition, in input order.
///
/// # Errors
///
/// [`ProduceError::Partition`] for an explicit partition outside `0..partitioner.partitions()`.
pub fn plan_partitions(
    records: Vec<ProduceRecord>,
    partitioner: &mut Partitioner,
    records_per_batch: usize,
) -> Result<BTreeMap<i32, Vec<BuildRecord>>, ProduceError> {
    let per = records_per_batch.max(1);
    let partitions = partitioner.partitions();
    let mut out: BTreeMap<i32, Vec<BuildRecord>> = BTreeMap::new();
    let mut sticky_count = 0usize;
    for (index, r) in records.into_iter().enumerate() {
        let partition = match (r.partition, r.record.key.as_deref()) {
            (Some(p), _) => {
                if !(0..partitions).contains(&p) {
                    return Err(ProduceError::Partition {
                        record: index.saturating_add(1),
                        line: r.line,
                        partition: p,
                        partitions,
                    });
                }
                p
            }
            (None, Some(key)) => partitioner.partition(Some(key)),
            (None, None) => {
                let p = partitioner.partition(None);
                sticky_count = sticky_count.saturating_add(1);
                if sticky_count >= per {
                    partitioner.next_batch();
                    sticky_count = 0;
                }
                p
            }
        };
        let mut record = r.record;
        record.offset = None;
        out.entry(partition).or_default().push(record);
    }
    Ok(out)
}

/// Produces `records` to `topic` (acks=all, idempotent: a retried batch is never written
/// twice), in one transaction of `opts.transactional_id` when there is one: looks up the
/// topic's partitions, places the records ([`plan_partitions`]), builds v2 batches with
/// `opts.compression`, sends them and commits. Returns the acknowledged batches, partition by
/// partition.
///
/// # Errors
///
/// [`ProduceError::Topic`] for a topic the cluster does not have, or an `opts.partition` it
/// does not have; [`ProduceError::Partition`];
/// [`ProduceError::Build`] (all three before anything is sent); the producer's errors
/// ([`ProduceError::Client`]). In a transaction, it is then aborted (or left to the broker to
/// abort when the connection is gone): no record of the call is visible to `read_committed`
/// consumers. Without one, the batches acknowledged before the error stay written.
pub async fn produce_records(
    client: &Client,
    topic: &str,
    records: Vec<ProduceRecord>,
    opts: &ProduceOptions,
) -> Result<Vec<Produced>, ProduceError> {
    let count = partition_count(client, topic).await?;
    if let Some(p) = opts.partition {
        check_partition(topic, p, count)?;
    }
    let records = records.into_iter().map(|r| ProduceRecord {
        partition: r.partition.or(opts.partition),
        ..r
    });
    let mut partitioner =
        Partitioner::new(count, opts.sticky_start).ok_or_else(|| ProduceError::Topic {
            topic: topic.to_owned(),
            reason: "the topic has no partitions".into(),
        })?;
    let planned = plan_partitions(records.collect(), &mut partitioner, opts.records_per_batch)?;

    let mut batch_opts = BatchOptions::new(2);
    batch_opts.compression = opts.compression;
    batch_opts.level = opts.level;
    batch_opts.records_per_batch = opts.records_per_batch.max(1);
    // Built before the transaction starts: a record the format refuses fails nothing.
    let mut built: Vec<(i32, Vec<Vec<u8>>)> = Vec::with_capacity(planned.len());
    for (partition, recs) in &planned {
        let mut batches = Vec::new();
        build_batches(&batch_opts, recs, |bytes, _| batches.push(bytes.to_vec()))?;
        built.push((*partition, batches));
    }

    let mut batches = built
        .into_iter()
        .flat_map(|(p, batches)| batches.into_iter().map(move |b| (p, b)));
    let mut acks = send_all(client, topic, opts.transactional_id.as_deref(), &mut || {
        Ok(batches.next())
    })
    .await?;
    acks.sort_by_key(|a| (a.partition, a.base_sequence));
    Ok(acks)
}

/// [`ProduceError::Topic`] when `topic`, of `count` partitions, does not have `partition`.
fn check_partition(topic: &str, partition: i32, count: i32) -> Result<(), ProduceError> {
    match (0..count).contains(&partition) {
        true => Ok(()),
        false => Err(ProduceError::Topic {
            topic: topic.to_owned(),
            reason: format!("partition {partition} does not exist (the topic has {count})"),
        }),
    }
}

/// The number of partitions of `topic`, from the cluster's metadata.
async fn partition_count(client: &Client, topic: &str) -> Result<i32, ProduceError> {
    let md = client.metadata(Some(&[topic])).await?;
    let bad = |reason: String| ProduceError::Topic {
        topic: topic.to_owned(),
        reason,
    };
    let t = md
        .topics
        .iter()
        .find(|t| t.name == topic)
        .ok_or_else(|| bad("not in the cluster's metadata".into()))?;
    if let Some(code) = &t.error {
        return Err(bad(code.to_string()));
    }
    Ok(i32::try_from(t.partitions.len()).unwrap_or(i32::MAX))
}

/// Sends the (partition, batch) pairs `next` gives to `topic`, idempotently or in one
/// transaction of `transactional_id`, and returns the acknowledgements. On an error a
/// transaction is aborted (best effort: a stopped producer refuses abort; the broker then
/// aborts it at its timeout or at the id's next InitProducerId); an idempotent producer has
/// nothing to abort.
async fn send_all(
    client: &Client,
    topic: &str,
    transactional_id: Option<&str>,
    next: &mut dyn FnMut() -> Result<Option<(i32, Vec<u8>)>, ProduceError>,
) -> Result<Vec<Produced>, ProduceError> {
    let mut producer = match transactional_id {
        Some(tid) => client.transactional_producer(tid).await?,
        None => client.idempotent_producer().await?,
    };
    producer.begin()?;
    let sent: Result<Vec<Produced>, ProduceError> = async {
        while let Some((partition, b)) = next()? {
            producer
                .send(topic, partition, BytesMut::from(Bytes::from(b)))
                .await?;
        }
        let acks = producer.flush().await?;
        producer.commit().await?;
        Ok(acks)
    }
    .await;
    if sent.is_err() && !producer.is_idempotent() {
        let _ = producer.abort().await;
    }
    sent
}

/// Sends existing v2 batches to `topic`/`partition` as they are (their records bytes and
/// compression untouched; the producer id, epoch, sequence, base offset and transactional
/// flag are the producer's), idempotently or in one transaction of `transactional_id`.
/// `next` gives the batches one at a time (`Ok(None)` at the end), so a large input is never
/// held in memory: each is sent while the next is read.
///
/// # Errors
///
/// [`ProduceError::Topic`] (a topic or `partition` the cluster does not have) before
/// anything is sent;
/// [`ProduceError::Input`] from `next`; the producer's errors. As for [`produce_records`], a
/// transaction is aborted on an error, and without one the acknowledged batches stay.
pub async fn produce_batches(
    client: &Client,
    topic: &str,
    partition: i32,
    transactional_id: Option<&str>,
    next: &mut dyn FnMut() -> Result<Option<Vec<u8>>, ProduceError>,
) -> Result<Vec<Produced>, ProduceError> {
    check_partition(topic, partition, partition_count(client, topic).await?)?;
    send_all(client, topic, transactional_id, &mut || {
        Ok(next()?.map(|b| (partition, b)))
    })
    .await
}

/// What [`produce_records`] wrote to one partition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Records written.
    pub records: i64,
    /// Batches written.
    pub batches: usize,
    /// The first offset the records got (`None` when every batch was answered as a duplicate).
    pub first_offset: Option<i64>,
    /// The last offset the records got.
    pub last_offset: Option<i64>,
}

impl Written {
    /// The offsets the records got, as people read them: `offsets 0-4`, `offset 7` for one
    /// record, `offsets unknown (answered as duplicates)` when the broker did not say.
    ///
    /// ```
    /// use krecords_client::Written;
    /// let w = |first, last| Written { records: 1, batches: 1, first_offset: first, last_offset: last };
    /// assert_eq!(w(Some(0), Some(4)).offsets(), "offsets 0-4");
    /// assert_eq!(w(Some(7), Some(7)).offsets(), "offset 7");
    /// assert_eq!(w(None, None).offsets(), "offsets unknown (answered as duplicates)");
    /// ```
    pub fn offsets(&self) -> String {
        match (self.first_offset, self.last_offset) {
            (Some(f), Some(l)) if f == l => format!("offset {f}"),
            (Some(f), Some(l)) => format!("offsets {f}-{l}"),
            _ => "offsets unknown (answered as duplicates)".to_owned(),
        }
    }
}

impl std::fmt::Display for Written {
    /// The records written and their offsets, as `krec produce` reports a partition:
    /// `4 records, offsets 0-3`, `1 record, offset 7`.
    ///
    /// ```
    /// use krecords_client::Written;
    /// let w = Written { records: 4, batches: 1, first_offset: Some(0), last_offset: Some(3) };
    /// assert_eq!(w.to_string(), "4 records, offsets 0-3");
    /// let w = Written { records: 1, batches: 1, first_offset: Some(7), last_offset: Some(7) };
    /// assert_eq!(w.to_string(), "1 record, offset 7");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = if self.records == 1 { "" } else { "s" };
        write!(f, "{} record{s}, {}", self.records, self.offsets())
    }
}

/// The acknowledgements of [`produce_records`] summed up per partition.
///
/// ```
/// use krecords_client::{written_per_partition, Produced};
///
/// let ack = |partition, base_offset, records| Produced {
///     topic: "t".into(),
///     partition,
///     base_offset,
///     records,
///     base_sequence: 0,
/// };
/// let w = written_per_partition(&[ack(1, Some(10), 5), ack(1, Some(15), 2), ack(0, None, 3)]);
/// assert_eq!((w[&1].records, w[&1].batches, w[&1].first_offset, w[&1].last_offset), (7, 2, Some(10), Some(16)));
/// assert_eq!((w[&0].records, w[&0].first_offset), (3, None));
/// ```
pub fn written_per_partition(acks: &[Produced]) -> BTreeMap<i32, Written> {
    let mut written: BTreeMap<i32, Written> = BTreeMap::new();
    for a in acks {
        let w = written.entry(a.partition).or_default();
        w.records = w.records.saturating_add(i64::from(a.records));
        w.batches = w.batches.saturating_add(1);
        if let Some(base) = a.base_offset {
            let last = base.saturating_add(i64::from(a.records)).saturating_sub(1);
            w.first_offset = Some(w.first_offset.map_or(base, |f| f.min(base)));
            w.last_offset = Some(w.last_offset.map_or(last, |l| l.max(last)));
        }
    }
    written
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::partitioner::partition_for_key;

    fn rec(partition: Option<i32>, key: Option<&str>, value: &str) -> ProduceRecord {
        ProduceRecord {
            partition,
            line: None,
            record: BuildRecord {
                offset: Some(99),
                ..BuildRecord::new(
                    1,
                    key.map(|k| k.as_bytes().to_vec()),
                    Some(value.as_bytes().to_vec()),
                )
            },
        }
    }

    fn values(v: &[BuildRecord]) -> Vec<String> {
        v.iter()
            .map(|r| String::from_utf8(r.value.clone().unwrap()).unwrap())
            .collect()
    }

    #[test]
    fn explicit_then_keyed_then_sticky() {
        let mut p = Partitioner::new(4, 1).unwrap();
        let input = vec![
            rec(Some(3), Some("foobar"), "explicit"),
            rec(None, Some("foobar"), "keyed"),
            rec(None, None, "a"),
            rec(None, None, "b"),
            rec(None, None, "c"),
            rec(None, None, "d"),
            rec(None, None, "e"),
        ];
        let plan = plan_partitions(input, &mut p, 2).unwrap();
        let keyed = partition_for_key(b"foobar", 4).unwrap();
        // Sticky from 1: a, b on 1; c, d on 2; e on 3.
        let mut want: BTreeMap<i32, Vec<&str>> = BTreeMap::new();
        want.entry(3).or_default().push("explicit");
        want.entry(keyed).or_default().push("keyed");
        for (part, v) in [(1, "a"), (1, "b"), (2, "c"), (2, "d"), (3, "e")] {
            want.entry(part).or_default().push(v);
        }
        let got: BTreeMap<i32, Vec<String>> = plan.iter().map(|(k, v)| (*k, values(v))).collect();
        let want: BTreeMap<i32, Vec<String>> = want
            .into_iter()
            .map(|(k, v)| (k, v.into_iter().map(str::to_owned).collect()))
            .collect();
        assert_eq!(got, want);
        assert!(plan.values().flatten().all(|r| r.offset.is_none()));
    }

    #[test]
    fn a_partition_out_of_range_is_refused_with_the_record_index() {
        let mut p = Partitioner::new(2, 0).unwrap();
        let e = plan_partitions(
            vec![rec(None, None, "a"), rec(Some(2), None, "b")],
            &mut p,
            5,
        )
        .unwrap_err();
        assert!(matches!(
            e,
            ProduceError::Partition {
                record: 2,
                line: None,
                partition: 2,
                partitions: 2
            }
        ));
        assert_eq!(
            e.to_string(),
            "record 2: partition 2 does not exist (the topic has 2)"
        );
        // The input line, when the record says which it was read from.
        let mut on_line_5 = rec(Some(3), None, "c");
        on_line_5.line = Some(5);
        let e = plan_partitions(vec![rec(None, None, "a"), on_line_5], &mut p, 5).unwrap_err();
        assert_eq!(
            e.to_string(),
            "input line 5: partition 3 does not exist (the topic has 2)"
        );
    }
}
