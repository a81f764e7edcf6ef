//! The metadata log replayed: record sequences (leader changes, removed topics, aborted
//! metadata transactions, fenced brokers), any bytes without a panic, and the 4.4 broker's own
//! metadata log (the CLI tests' fixture).

use krecords_admin::offline::{describe_root, load, missing_metadata, MetadataState};
use krecords_topics::Node;
use proptest::prelude::*;
use std::path::PathBuf;

fn obj(fields: &[(&str, Node)]) -> Node {
    Node::Obj(
        fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}

fn s(v: &str) -> Node {
    Node::Str(v.to_owned())
}

fn arr(v: &[i64]) -> Node {
    Node::Arr(v.iter().map(|&i| Node::Int(i)).collect())
}

fn record(kind: &str, data: &[(&str, Node)]) -> Node {
    obj(&[
        ("type", s(kind)),
        ("version", Node::Int(0)),
        ("data", obj(data)),
    ])
}

fn topic(name: &str, id: &str) -> Node {
    record("TOPIC_RECORD", &[("name", s(name)), ("topicId", s(id))])
}

fn partition(id: &str, p: i64, replicas: &[i64], leader: i64) -> Node {
    record(
        "PARTITION_RECORD",
        &[
            ("partitionId", Node::Int(p)),
            ("topicId", s(id)),
            ("replicas", arr(replicas)),
            ("isr", arr(replicas)),
            ("leader", Node::Int(leader)),
            ("leaderEpoch", Node::Int(0)),
        ],
    )
}

fn broker(id: i64, fenced: bool) -> Node {
    record(
        "REGISTER_BROKER_RECORD",
        &[
            ("brokerId", Node::Int(id)),
            (
                "endPoints",
                Node::Arr(vec![obj(&[("host", s("h")), ("port", Node::Int(9092))])]),
            ),
            ("rack", Node::Null),
            ("fenced", Node::Bool(fenced)),
        ],
    )
}

#[test]
fn partition_changes_apply_and_minus_two_keeps_the_leader() {
    let mut st = MetadataState::default();
    for r in [
        broker(1, false),
        broker(2, false),
        topic("t", "ID"),
        partition("ID", 0, &[1, 2], 1),
        // The ISR shrinks, the leader stays (-2).
        record(
            "PARTITION_CHANGE_RECORD",
            &[
                ("partitionId", Node::Int(0)),
                ("topicId", s("ID")),
                ("isr", arr(&[2])),
                ("leader", Node::Int(-2)),
            ],
        ),
    ] {
        st.apply(&r);
    }
    let c = st.clone().into_cluster("x".into());
    let p = &c.topics[0].partitions[0];
    assert_eq!((p.leader, p.leader_epoch), (1, 0));
    assert_eq!(p.isr, [2]);
    assert!(p.is_under_replicated() && !p.is_offline());
    // No leader: offline; broker 2 fenced: an offline replica.
    st.apply(&record(
        "PARTITION_CHANGE_RECORD",
        &[
            ("partitionId", Node::Int(0)),
            ("topicId", s("ID")),
            ("leader", Node::Int(-1)),
        ],
    ));
    st.apply(&record("FENCE_BROKER_RECORD", &[("id", Node::Int(2))]));
    let c = st.into_cluster("x".into());
    let p = &c.topics[0].partitions[0];
    assert_eq!((p.leader, p.leader_epoch), (-1, 1));
    assert!(p.is_offline());
    assert_eq!(p.offline_replicas, [2]);
    assert_eq!(c.brokers[1].fenced, Some(true));
}

#[test]
fn removed_topics_and_aborted_transactions_leave_no_trace() {
    let mut st = MetadataState::default();
    st.apply(&topic("gone", "G"));
    st.apply(&partition("G", 0, &[1], 1));
    st.apply(&record("REMOVE_TOPIC_RECORD", &[("topicId", s("G"))]));
    st.apply(&record("BEGIN_TRANSACTION_RECORD", &[("name", s("x"))]));
    st.apply(&topic("aborted", "A"));
    st.apply(&partition("A", 0, &[1], 1));
    st.apply(&record("ABORT_TRANSACTION_RECORD", &[]));
    st.apply(&record("BEGIN_TRANSACTION_RECORD", &[("name", s("y"))]));
    st.apply(&topic("kept", "K"));
    st.apply(&partition("K", 0, &[1], 1));
    st.apply(&record("END_TRANSACTION_RECORD", &[]));
    let c = st.into_cluster("x".into());
    let names: Vec<&str> = c.topics.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["kept"]);
}

#[test]
fn the_brokers_own_metadata_log_replays_to_its_last_state() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures/internal");
    let c = describe_root(&root).unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    // The LeaderChange control record at offset 0 names node 1.
    assert_eq!(c.controller, Some(1));
    assert_eq!(c.brokers.len(), 1);
    let t = c.topics.iter().find(|t| t.name == "interop-none").unwrap();
    assert_eq!(t.id.as_deref(), Some("Stwl25exRdWiVdO4rRxQRg"));
    assert_eq!(t.partitions[0].replicas, [1]);
    assert_eq!(t.partitions[0].on_disk, Some(false));
    let on_disk = c
        .topics
        .iter()
        .find(|t| t.name == "__transaction_state")
        .unwrap();
    assert!(on_disk.internal);
    assert_eq!(on_disk.partitions[0].on_disk, Some(true));
}

/// A root without a metadata log lists its partitions with leader -1, and says why: the
/// leaders are unknown, not offline.
#[test]
fn a_root_without_a_metadata_log_says_the_leaders_are_unknown() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("t-0")).unwrap();
    std::fs::write(root.path().join("t-0/00000000000000000000.log"), b"").unwrap();
    let c = describe_root(root.path()).unwrap();
    assert_eq!(c.topics.len(), 1);
    assert_eq!(c.topics[0].partitions[0].leader, -1);
    let w = missing_metadata(root.path()).unwrap();
    assert!(
        w.contains("no __cluster_metadata-0 here")
            && w.contains("leaders, replicas and ISRs are unknown"),
        "{w}"
    );
    // The same root through one of its partition directories, named as given (its root was
    // named alone, "." for a directory given by its name); a root with the log says nothing.
    let t0 = root.path().join("t-0");
    let said = format!(
        "{} (a partition directory of {}): ",
        t0.display(),
        root.path().display()
    );
    let w0 = missing_metadata(&t0).unwrap();
    assert_eq!(
        w0,
        w.replacen(&format!("{}: ", root.path().display()), &said, 1)
    );
    assert_eq!(describe_root(&t0).unwrap().source, t0.display().to_string());
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures/internal");
    assert_eq!(missing_metadata(&fixture), None);
}

/// A directory above a root (a broker's home, whose `logs` is the root, with a `broker.log`
/// that makes it look like a partition directory) names the root below it (it said "a
/// partition directory whose name is not TOPIC-N").
#[test]
fn a_directory_above_a_root_names_the_root() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("broker.log"), b"log4j lines").unwrap();
    std::fs::create_dir(home.path().join("a-tls")).unwrap();
    let logs = home.path().join("logs");
    std::fs::create_dir_all(logs.join("t-0")).unwrap();
    std::fs::write(logs.join("meta.properties"), b"cluster.id=x\n").unwrap();
    let e = describe_root(home.path()).unwrap_err().to_string();
    let said = format!(
        "{}: not a broker's log.dirs root, but its subdirectory {} is one",
        home.path().display(),
        logs.display()
    );
    assert!(e.starts_with(&said), "{e}");
    std::fs::remove_file(home.path().join("broker.log")).unwrap();
    let e = describe_root(home.path()).unwrap_err().to_string();
    assert!(e.starts_with(&said), "{e}");
}

fn names(c: &krecords_admin::Cluster) -> Vec<&str> {
    c.topics.iter().map(|t| t.name.as_str()).collect()
}

/// `load` as `krec metadata`/`krec offsets` answer: internal topics with `all` or a glob
/// only, except that one partition directory stands for its partition, internal or not;
/// offsets only when asked for.
#[test]
fn load_keeps_a_partition_directory_named_even_when_internal() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures/internal");
    let plain = load(&root, &[], false, None).unwrap();
    assert!(
        plain.topics.iter().all(|t| !t.internal),
        "{:?}",
        names(&plain)
    );
    let all = load(&root, &[], true, None).unwrap();
    assert!(names(&all).contains(&"__transaction_state"));
    let globbed = load(&root, &["__tr*".into()], false, None).unwrap();
    assert_eq!(names(&globbed), ["__transaction_state"]);
    assert_eq!(globbed.topics[0].partitions[0].offsets, None);

    let one = load(&root.join("__transaction_state-0"), &[], false, Some(None)).unwrap();
    assert_eq!(names(&one), ["__transaction_state"]);
    let p = &one.topics[0].partitions;
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].partition, 0);
    // The same offsets as the whole root's.
    let whole = load(&root, &[], true, Some(None)).unwrap();
    let want = whole
        .topics
        .iter()
        .find(|t| t.name == "__transaction_state")
        .unwrap();
    assert!(p[0].offsets.is_some());
    assert_eq!(p[0].offsets, want.partitions[0].offsets);
    // A glob that does not match the directory's topic: a usage error naming the glob and
    // the topics there are (it left an empty answer).
    let other = load(
        &root.join("__transaction_state-0"),
        &["orders".into(), "x*".into()],
        false,
        None,
    )
    .unwrap_err();
    assert!(
        matches!(other, krecords_admin::Error::Usage(_)),
        "{other:?}"
    );
    let said = "no partition of a topic matching \"orders\" or \"x*\" (its topics: \
                __transaction_state)";
    assert!(other.to_string().ends_with(said), "{other}");
    let e = load(&root, &["[".into()], false, None).unwrap_err();
    assert!(e.to_string().starts_with("topic glob \"[\""), "{e}");
    // Not a root: describe_root's error.
    let empty = tempfile::tempdir().unwrap();
    let e = load(empty.path(), &[], false, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("holds neither meta.properties"), "{e}");
}

proptest! {
    #[test]
    fn any_bytes_replay_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut st = MetadataState::default();
        st.replay_bytes("fuzz", &bytes, 0);
        let _ = st.into_cluster("fuzz".into());
    }

    #[test]
    fn mutated_metadata_log_replays_without_panic(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)
    ) {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../cli/tests/fixtures/internal/__cluster_metadata-0/00000000000000000000.log");
        let mut bytes = std::fs::read(root).unwrap();
        for (i, b) in flips {
            let at = i.index(bytes.len());
            bytes[at] = b;
        }
        let mut st = MetadataState::default();
        st.replay_bytes("fuzz", &bytes, 0);
        let _ = st.into_cluster("fuzz".into());
    }
}
