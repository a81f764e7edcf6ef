//! A partition named more than once is listed (and so read) once: a root named twice, a root
//! and one of its partition directories, two spellings of one directory, a segment file
//! named twice or with its directory, the same `kafka://` partition twice, however its URLs
//! spell the cluster's servers. Each is said in [`Sources::notes`].

use krecords_client::kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use krecords_client::kafka_protocol::messages::{
    ApiKey, BrokerId, MetadataResponse, RequestHeader, TopicName,
};
use krecords_client::kafka_protocol::protocol::StrBytes;
use krecords_codec::read::Step;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_log::{AppendOrigin, Log, LogConfig};
use krecords_source::{ClientConfig, ReadOptions, Sources};
use krecords_testkit::broker::{api_versions_of, frame, READ_APIS};
use krecords_testkit::{Action, Fake, FakeCluster};
use std::path::{Path, PathBuf};

/// A partition directory of 6 records in several segments.
fn write_partition(dir: &Path) {
    let mut log = Log::create(
        dir,
        LogConfig::from_pairs([("segment.bytes", "100")]).unwrap(),
    )
    .unwrap();
    for i in 0..6i64 {
        let mut b = V2Builder::new(0);
        b.append(&NewRecord::new(1_714_000_000_000 + i, None, Some(b"value")))
            .unwrap();
        log.append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
    }
    log.close().unwrap();
}

/// Names and files of the partitions of `args`, and the notes.
fn open(args: &[PathBuf]) -> (Vec<(String, usize)>, Vec<String>) {
    let sources = Sources::open_local(args).unwrap();
    let parts = sources
        .partitions
        .iter()
        .map(|p| (p.name.clone(), p.files().len()))
        .collect();
    (parts, sources.notes().to_vec())
}

#[test]
fn a_partition_named_twice_is_listed_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let a = root.join("a-0");
    let b = root.join("b-0");
    write_partition(&a);
    write_partition(&b);
    let segments = krecords_source::dir_logs(&a).unwrap();
    assert!(segments.len() >= 3, "{segments:?}");
    let whole = open(std::slice::from_ref(&root));
    assert_eq!(whole.0.len(), 2);
    assert!(whole.1.is_empty(), "{:?}", whole.1);

    // The root twice.
    let (parts, notes) = open(&[root.clone(), root.clone()]);
    assert_eq!(parts, whole.0);
    assert_eq!(
        notes,
        [
            format!("{}: named more than once, read once", a.display()),
            format!("{}: named more than once, read once", b.display()),
        ]
    );
    // A root and one of its partitions, in either order; another spelling of the directory.
    let (parts, notes) = open(&[a.clone(), root.clone()]);
    assert_eq!(parts.len(), 2);
    assert_eq!(notes.len(), 1, "{notes:?}");
    let dotted = root.join(".").join("a-0");
    let (parts, notes) = open(&[root.clone(), dotted]);
    assert_eq!(parts.len(), 2);
    assert_eq!(notes.len(), 1, "{notes:?}");
    // Through a link.
    #[cfg(unix)]
    {
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let (parts, _) = open(&[a.clone(), link]);
        assert_eq!(parts.len(), 1);
    }

    // One pattern that matches a root and its partition directories: each partition once,
    // said (a single argument was taken for one that cannot name a partition twice). A
    // trailing `**` matches the directories below the one before it, at any depth, not that
    // one itself nor files: `ROOT/**` gives the partition directories once each, so the
    // pattern starts above the root, in a directory holding nothing else.
    let above = tempfile::tempdir().unwrap();
    let other_root = above.path().join("root");
    write_partition(&other_root.join("a-0"));
    write_partition(&other_root.join("b-0"));
    let once = open(std::slice::from_ref(&other_root));
    let (parts, notes) = open(&[above.path().join("**")]);
    assert_eq!(parts, once.0, "{notes:?}");
    let again = |p: &str| {
        let dir = other_root.join(p);
        format!("{}: named more than once, read once", dir.display())
    };
    assert_eq!(notes, [again("a-0"), again("b-0")]);

    // A segment named twice: one partition of its one file.
    let (parts, notes) = open(&[segments[0].clone(), segments[0].clone()]);
    assert_eq!(parts, [(segments[0].display().to_string(), 1)]);
    assert_eq!(
        notes,
        [format!(
            "{}: named more than once, read once",
            segments[0].display()
        )]
    );
    // Segments with their directory: read with it, before or after it.
    for args in [
        vec![segments[1].clone(), a.clone()],
        vec![a.clone(), segments[1].clone(), segments[2].clone()],
    ] {
        let (parts, notes) = open(&args);
        assert_eq!(
            parts,
            [(a.display().to_string(), segments.len())],
            "{args:?}"
        );
        assert_eq!(
            notes[0],
            format!(
                "{}: named with its partition directory {}, read once, with it",
                segments[1].display(),
                a.display()
            )
        );
    }
    // The segments of another partition are not.
    let other = krecords_source::dir_logs(&b).unwrap();
    let (parts, notes) = open(&[a.clone(), other[0].clone()]);
    assert_eq!(parts.len(), 2);
    assert!(notes.is_empty());
}

/// `Sources::paths_once` (how `krec verify` takes its arguments) keeps what `Sources::open`
/// reads, each partition once, with its notes.
#[test]
fn paths_once_keeps_what_open_reads_with_its_notes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let (a, b) = (root.join("a-0"), root.join("b-0"));
    write_partition(&a);
    write_partition(&b);
    let segments = krecords_source::dir_logs(&a).unwrap();
    let other = krecords_source::dir_logs(&b).unwrap();
    let (s0, s1) = (segments[0].clone(), segments[1].clone());
    let cases: [Vec<PathBuf>; 8] = [
        vec![root.clone(), root.clone()],
        vec![a.clone(), root.clone()],
        vec![root.clone(), root.join(".").join("a-0")],
        vec![s0.clone(), a.clone(), s0.clone()],
        vec![s0.clone(), s1.clone(), s0.clone()],
        vec![a.clone(), other[0].clone()],
        vec![b.clone(), s1.clone(), root.clone(), "-".into()],
        vec![a.join("."), a.clone(), b.clone()],
    ];
    for args in cases {
        let mut notes = Vec::new();
        let kept = Sources::paths_once(&args, &mut |n| notes.push(n.to_owned()));
        let (parts, said) = open(&args);
        assert_eq!(notes, said, "{args:?}");
        // The same partitions, of the same files (a root named after one of its partition
        // directories lists them in its order).
        let local: Vec<PathBuf> = kept.into_iter().filter(|p| p != Path::new("-")).collect();
        let mut read = open(&local).0;
        let mut parts: Vec<_> = parts.into_iter().filter(|p| p.0 != "-").collect();
        read.sort();
        parts.sort();
        assert_eq!(read, parts, "{args:?}");
    }
}

#[test]
fn a_live_partition_named_twice_is_listed_once() {
    let cluster = krecords_testkit::FakeCluster::start(&[("t", 2)]);
    let topic = PathBuf::from(format!("kafka://{}/t", cluster.addr()));
    let one = PathBuf::from(format!("kafka://{}/t/1", cluster.addr()));
    let sources = Sources::open(&[topic.clone(), one.clone(), topic], &mut || {
        Ok(ClientConfig::default())
    })
    .unwrap();
    let names: Vec<&str> = sources.partitions.iter().map(|p| p.name.as_str()).collect();
    let t = format!("kafka://{}/t", cluster.addr());
    assert_eq!(names, [format!("{t}/0"), format!("{t}/1")]);
    assert_eq!(
        sources.notes(),
        [
            format!("{t}/1: named more than once, read once"),
            format!("{t}/0: named more than once, read once"),
        ]
    );
}

/// `Sources::open` of `args` with the default client configuration.
fn open_live(args: &[String]) -> Sources {
    let args: Vec<PathBuf> = args.iter().map(PathBuf::from).collect();
    Sources::open(&args, &mut || Ok(ClientConfig::default())).unwrap()
}

/// Every record of every partition of `sources`: (partition, offset, value).
fn records(sources: &Sources) -> Vec<(i32, i64, String)> {
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    for (i, p) in sources.partitions.iter().enumerate() {
        let mut reader = sources.read(i, &ReadOptions::default()).unwrap();
        while reader.next_file().unwrap().is_some() {
            while let Step::Entry(b) = reader.next_entry().unwrap() {
                for r in b.records(&mut scratch, 1 << 20).unwrap() {
                    let r = r.unwrap();
                    let v = String::from_utf8(r.value().unwrap().to_vec()).unwrap();
                    out.push((p.partition.unwrap(), r.offset(), v));
                }
            }
        }
    }
    out
}

/// The fake cluster on 127.0.0.1 named `localhost:PORT` and `127.0.0.1:PORT`: one cluster (its
/// cluster id), so a partition both name is listed and read once, said with the name it is
/// read as.
#[test]
fn a_live_partition_spelled_twice_is_read_once() {
    let cluster = FakeCluster::start(&[("t", 2)]);
    for p in 0..2 {
        let log = krecords_testkit::batches::numbered(2, 2, |o| {
            (
                1_714_000_000_000 + o,
                b"k".to_vec(),
                format!("p{p} {o}").into_bytes(),
            )
        });
        cluster.append("t", p, &log);
    }
    let port = cluster.broker().port();
    let by_name = format!("kafka://localhost:{port}/t");
    let by_ip = format!("kafka://127.0.0.1:{port}/t");

    let once = open_live(std::slice::from_ref(&by_ip));
    let all = records(&once);
    assert_eq!(all.len(), 8, "{all:?}");

    // A partition, then its topic spelled otherwise: partition 0 once, from the first.
    let sources = open_live(&[format!("{by_name}/0"), by_ip.clone()]);
    let names: Vec<&str> = sources.partitions.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, [format!("{by_name}/0"), format!("{by_ip}/1")]);
    assert_eq!(
        sources.notes(),
        [format!(
            "{by_ip}/0: named more than once (as {by_name}/0, of the same cluster), read once"
        )]
    );
    for p in &sources.partitions {
        let cluster = &p.live().unwrap().cluster;
        assert!(cluster.starts_with("fake: brokers "), "{cluster}");
    }
    assert_eq!(records(&sources), all);

    // The topic three times, two spellings: every partition once, each repeat said once.
    let sources = open_live(&[by_ip.clone(), by_name.clone(), by_ip.clone()]);
    assert_eq!(sources.partitions.len(), 2);
    assert_eq!(
        sources.notes(),
        [
            format!(
                "{by_name}/0: named more than once (as {by_ip}/0, of the same cluster), read once"
            ),
            format!(
                "{by_name}/1: named more than once (as {by_ip}/1, of the same cluster), read once"
            ),
            format!("{by_ip}/0: named more than once, read once"),
            format!("{by_ip}/1: named more than once, read once"),
        ]
    );
    assert_eq!(records(&sources), all);
}

/// A scripted broker that answers ApiVersions and Metadata only (enough to open a source):
/// one topic `t` of one partition, led by node `node`; the brokers `brokers` (node, port) on
/// 127.0.0.1, and cluster id `cluster_id`.
fn metadata_broker(cluster_id: Option<&'static str>, node: i32, brokers: Vec<(i32, u16)>) -> Fake {
    Fake::start(move |ctx, header: &RequestHeader, _body| {
        match ApiKey::try_from(header.request_api_key) {
            Ok(ApiKey::ApiVersions) => Action::Send(api_versions_of(header, &READ_APIS)),
            Ok(ApiKey::Metadata) => {
                let mut listed = brokers.clone();
                if listed.is_empty() {
                    listed.push((node, ctx.port));
                }
                let resp = MetadataResponse::default()
                    .with_brokers(
                        listed
                            .iter()
                            .map(|&(id, port)| {
                                MetadataResponseBroker::default()
                                    .with_node_id(BrokerId(id))
                                    .with_host(StrBytes::from_static_str("127.0.0.1"))
                                    .with_port(i32::from(port))
                            })
                            .collect(),
                    )
                    .with_cluster_id(cluster_id.map(StrBytes::from_static_str))
                    .with_topics(vec![MetadataResponseTopic::default()
                        .with_name(Some(TopicName(StrBytes::from_static_str("t"))))
                        .with_partitions(vec![MetadataResponsePartition::default()
                            .with_partition_index(0)
                            .with_leader_id(BrokerId(node))
                            .with_replica_nodes(vec![BrokerId(node)])
                            .with_isr_nodes(vec![BrokerId(node)])])]);
                Action::Send(frame(header, &resp))
            }
            _ => Action::Close,
        }
    })
}

/// Live partitions are one partition when their cluster is: the same cluster id (or none) and
/// the same brokers listed in Metadata (two brokers of one cluster named apart are one
/// cluster; two clusters with the same topic are two, also when they share an id, as
/// containers of one image do).
#[test]
fn live_partitions_are_one_by_cluster_id_else_by_brokers() {
    let url = |f: &Fake| format!("kafka://127.0.0.1:{}/t/0", f.port());
    let local = |f: &Fake| format!("kafka://localhost:{}/t/0", f.port());
    let count = |args: &[String]| {
        let s = open_live(args);
        (s.partitions.len(), s.notes().len())
    };

    // Two clusters, each with its id: both read.
    let a = metadata_broker(Some("cluster-a"), 0, vec![]);
    let b = metadata_broker(Some("cluster-b"), 0, vec![]);
    assert_eq!(count(&[url(&a), url(&b)]), (2, 0));
    let ids: Vec<String> = open_live(&[url(&a), url(&b)])
        .partitions
        .iter()
        .map(|p| p.live().unwrap().cluster.clone())
        .collect();
    let listed = |f: &Fake| format!("brokers 0@127.0.0.1:{}", f.port());
    assert_eq!(
        ids,
        [
            format!("cluster-a: {}", listed(&a)),
            format!("cluster-b: {}", listed(&b))
        ]
    );
    // Another cluster with the same id (its brokers are others): both read.
    let twin = metadata_broker(Some("cluster-a"), 0, vec![]);
    assert_eq!(count(&[url(&a), url(&twin)]), (2, 0));
    // Two brokers of one cluster (the same id, the same brokers), named apart: one partition.
    let shared = vec![(0, 29092), (1, 29093)];
    let a0 = metadata_broker(Some("cluster-a"), 0, shared.clone());
    let a1 = metadata_broker(Some("cluster-a"), 1, shared);
    let sources = open_live(&[url(&a0), url(&a1)]);
    assert_eq!(sources.partitions.len(), 1);
    assert_eq!(
        sources.notes(),
        [format!(
            "{}: named more than once (as {}, of the same cluster), read once",
            url(&a1),
            url(&a0)
        )]
    );

    // No cluster id: the brokers listed say which cluster it is.
    let d = metadata_broker(None, 0, vec![]);
    let e = metadata_broker(None, 0, vec![]);
    let sources = open_live(&[url(&d), local(&d)]);
    assert_eq!(sources.partitions.len(), 1);
    assert_eq!(
        sources.partitions[0].live().unwrap().cluster,
        format!("brokers 0@127.0.0.1:{}", d.port())
    );
    assert_eq!(sources.notes().len(), 1);
    assert_eq!(count(&[url(&d), url(&e)]), (2, 0));
    // Both brokers of one cluster without an id list the same brokers.
    let both = vec![(0, 19092), (1, 19093)];
    let f = metadata_broker(None, 0, both.clone());
    let g = metadata_broker(None, 1, both);
    assert_eq!(count(&[url(&f), url(&g)]), (1, 1));
}
