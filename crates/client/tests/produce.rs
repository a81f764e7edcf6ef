//! `produce_records` against the test kit's fake cluster: records land on the partitions the
//! Java producer picks, read back exactly (keys, null keys, headers) with every codec, in one
//! committed transaction; a fatal error leaves nothing visible.

use krecords_client::{
    partition_for_key, produce_records, Client, ClientConfig, ProduceError, ProduceOptions,
    ProduceRecord,
};
use krecords_codec::build::BuildRecord;
use krecords_codec::read::Entries;
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};
use krecords_testkit::FakeCluster;

type Header = (Vec<u8>, Option<Vec<u8>>);
/// (key, value, headers) of a record read back.
type Read = (Option<Vec<u8>>, Option<Vec<u8>>, Vec<Header>);

fn config(cluster: &FakeCluster) -> ClientConfig {
    ClientConfig::from_pairs([
        format!("bootstrap.servers={}", cluster.addr()),
        "retries=3".to_owned(),
        "retry.backoff.ms=1".to_owned(),
        "retry.backoff.max.ms=4".to_owned(),
        "socket.timeout.ms=5000".to_owned(),
        "message.timeout.ms=2000".to_owned(),
    ])
    .unwrap()
}

/// The committed records of a partition, and the codec of each batch.
fn read_back(cluster: &FakeCluster, topic: &str, partition: i32) -> (Vec<Read>, Vec<Compression>) {
    let mut out = Vec::new();
    let mut codecs = Vec::new();
    let mut scratch = Vec::new();
    for b in cluster.committed_batches(topic, partition) {
        for e in Entries::new(&b) {
            let e = e.unwrap();
            codecs.push(e.compression().unwrap());
            for r in e.records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT).unwrap() {
                let r = r.unwrap();
                let headers = r
                    .headers()
                    .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                    .collect();
                out.push((
                    r.key().map(<[u8]>::to_vec),
                    r.value().map(<[u8]>::to_vec),
                    headers,
                ));
            }
        }
    }
    (out, codecs)
}

fn record(partition: Option<i32>, key: Option<String>, value: String) -> ProduceRecord {
    let mut r = BuildRecord::new(
        1_714_000_000_000,
        key.map(String::into_bytes),
        Some(value.into_bytes()),
    );
    r.headers = vec![
        (b"h".to_vec(), Some(b"hv".to_vec())),
        (b"null".to_vec(), None),
    ];
    ProduceRecord {
        partition,
        record: r,
        line: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyed_records_land_where_the_java_producer_puts_them_with_every_codec() {
    for (i, compression) in [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ]
    .into_iter()
    .enumerate()
    {
        let cluster = FakeCluster::start(&[("events", 12)]);
        let client = Client::connect(config(&cluster)).await.unwrap();
        let mut input = Vec::new();
        for k in 0..200 {
            input.push(record(None, Some(format!("key-{k}")), format!("keyed {k}")));
        }
        for k in 0..5 {
            input.push(record(Some(11), None, format!("explicit {k}")));
        }
        for k in 0..7 {
            input.push(record(None, None, format!("keyless {k}")));
        }
        let mut opts = ProduceOptions::new(format!("krec-produce-test-{i}"));
        opts.compression = compression;
        opts.records_per_batch = 3;
        opts.sticky_start = 4;
        let acks = produce_records(&client, "events", input.clone(), &opts)
            .await
            .unwrap();
        let acked: i32 = acks.iter().map(|a| a.records).sum();
        assert_eq!(acked, 212, "{compression:?}");
        assert_eq!(cluster.aborted_batches(), 0);

        // Expected placement: keys by murmur2; explicit on 11; keyless 3 per partition from 4.
        let mut want: Vec<Vec<Read>> = vec![Vec::new(); 12];
        for (n, r) in input.iter().enumerate() {
            let p = match (r.partition, &r.record.key) {
                (Some(p), _) => p,
                (None, Some(k)) => partition_for_key(k, 12).unwrap(),
                (None, None) => 4 + i32::try_from((n - 205) / 3).unwrap(),
            };
            want[usize::try_from(p).unwrap()].push((
                r.record.key.clone(),
                r.record.value.clone(),
                r.record.headers.clone(),
            ));
        }
        for (p, want) in want.iter().enumerate() {
            let (got, codecs) = read_back(&cluster, "events", i32::try_from(p).unwrap());
            assert_eq!(&got, want, "partition {p} with {compression:?}");
            assert!(codecs.iter().all(|c| *c == compression));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_partitions_and_topics_fail_before_anything_is_sent() {
    let cluster = FakeCluster::start(&[("events", 2)]);
    let client = Client::connect(config(&cluster)).await.unwrap();
    let opts = ProduceOptions::new("t");
    let e = produce_records(
        &client,
        "events",
        vec![record(Some(5), None, "x".into())],
        &opts,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(e, ProduceError::Partition { partition: 5, .. }),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "record 1: partition 5 does not exist (the topic has 2)"
    );
    // The partition of the records that name none (a URL's): the topic's error, no record's.
    let to_9 = ProduceOptions {
        partition: Some(9),
        ..ProduceOptions::new("t")
    };
    let e = produce_records(
        &client,
        "events",
        vec![record(None, None, "x".into())],
        &to_9,
    )
    .await
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "topic events: partition 9 does not exist (the topic has 2)"
    );
    let e = produce_records(&client, "nope", vec![record(None, None, "x".into())], &opts)
        .await
        .unwrap_err();
    assert!(e.to_string().starts_with("topic nope: "), "{e}");
    for p in 0..2 {
        assert!(cluster.committed_batches("events", p).is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fatal_produce_error_leaves_nothing_committed() {
    let cluster = FakeCluster::start(&[("events", 1)]);
    let client = Client::connect(config(&cluster)).await.unwrap();
    // 87: INVALID_RECORD, not retriable.
    cluster.fail_produce(&[87]);
    let input = (0..4)
        .map(|k| record(None, None, format!("v{k}")))
        .collect();
    let e = produce_records(&client, "events", input, &ProduceOptions::new("t"))
        .await
        .unwrap_err();
    assert!(matches!(e, ProduceError::Client(_)), "{e}");
    assert!(cluster.committed_values("events", 0).is_empty());
}
