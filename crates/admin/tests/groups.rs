//! `__consumer_offsets` replayed into groups: lag that is not known, metadata committed empty,
//! and a partition whose replay ends at a damaged batch.

use krecords_admin::groups::{select, Group, GroupLog, GroupOffset, Member};
use krecords_codec::write::{NewRecord, V2Builder};
use std::collections::BTreeMap;

const TS: i64 = 1_700_000_000_000;

fn string(out: &mut Vec<u8>, s: &str) {
    out.extend(i16::try_from(s.len()).unwrap().to_be_bytes());
    out.extend(s.as_bytes());
}

/// An OffsetCommitKey v1.
fn key(group: &str, topic: &str, partition: i32) -> Vec<u8> {
    let mut k = 1i16.to_be_bytes().to_vec();
    string(&mut k, group);
    string(&mut k, topic);
    k.extend(partition.to_be_bytes());
    k
}

/// An OffsetCommitValue v3.
fn value(offset: i64, metadata: &str) -> Vec<u8> {
    let mut v = 3i16.to_be_bytes().to_vec();
    v.extend(offset.to_be_bytes());
    v.extend((-1i32).to_be_bytes());
    string(&mut v, metadata);
    v.extend(TS.to_be_bytes());
    v
}

#[test]
fn unknown_lag_totals_none_and_empty_metadata_stays_empty() {
    let mut log = GroupLog::default();
    log.apply(Some(&key("g", "t", 0)), Some(&value(4, "")), 0);
    log.apply(Some(&key("h", "gone", 0)), Some(&value(1, "m")), 1);
    let ends = BTreeMap::from([(("t".to_owned(), 0), 10)]);
    let groups = log.into_groups(&ends);
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0].offsets[0].metadata.as_deref(), Some(""));
    assert_eq!(groups[0].total_lag, Some(6));
    assert_eq!(groups[1].offsets[0].metadata.as_deref(), Some("m"));
    assert_eq!(groups[1].offsets[0].lag, None);
    assert_eq!(groups[1].total_lag, None);
}

/// A committed offset past the partition's end (its log truncated after an unclean leader
/// election, or the topic created again) has a negative lag, as `kafka-consumer-groups
/// --describe` shows it (`end - offset`), where it read 0 before; the total counts the records
/// still to read, so it takes no part in it; the text's total line says how many there are.
#[test]
fn a_commit_past_the_end_has_a_negative_lag_outside_the_total() {
    let mut log = GroupLog::default();
    log.apply(Some(&key("g", "t", 0)), Some(&value(4, "")), 0);
    log.apply(Some(&key("g", "t", 1)), Some(&value(99, "")), 1);
    let ends = BTreeMap::from([(("t".to_owned(), 0), 10), (("t".to_owned(), 1), 15)]);
    let groups = log.into_groups(&ends);
    let lags: Vec<Option<i64>> = groups[0].offsets.iter().map(|o| o.lag).collect();
    assert_eq!(lags, [Some(6), Some(-84)]);
    assert_eq!(groups[0].total_lag, Some(6));
    let mut text = Vec::new();
    krecords_admin::text::write_groups_text(&groups, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("\t15\t-84\t"), "{text}");
    assert!(
        text.contains("total lag 6; 1 partition committed past the end"),
        "{text}"
    );
}

/// A batch with a bad CRC after a clean shutdown (nothing scans the log at open): the
/// replay applies the batches before it and stops there with the damage named, none after it
/// applied; the damaged batch is not counted as a record that could not be decoded.
#[test]
fn a_batch_with_a_bad_crc_ends_the_replay() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join(".kafka_cleanshutdown"), b"").unwrap();
    let dir = tmp.path().join("__consumer_offsets-0");
    std::fs::create_dir(&dir).unwrap();
    let mut bytes = Vec::new();
    let mut at = Vec::new();
    let commits = [Some(5), None, Some(7)];
    for (o, commit) in (0i64..).zip(commits) {
        let v = commit.map(|c| value(c, ""));
        let mut b = V2Builder::new(o);
        b.append(&NewRecord::new(TS, Some(&key("g", "t", 0)), v.as_deref()))
            .unwrap();
        at.push(bytes.len());
        bytes.extend(b.finish().unwrap());
    }
    // The tombstone's stored CRC (bytes 17..21 of a v2 batch) overwritten.
    bytes[at[1] + 17] ^= 0xff;
    let segment = dir.join("00000000000000000000.log");
    std::fs::write(&segment, &bytes).unwrap();
    for index in ["index", "timeindex"] {
        std::fs::write(dir.join(format!("00000000000000000000.{index}")), b"").unwrap();
    }
    let mut log = GroupLog::default();
    let e = log.replay_dir(&dir).unwrap_err().to_string();
    let said = format!(
        "{}: the batch at offset 1 is damaged: entry at byte {}: crc mismatch",
        segment.display(),
        at[1]
    );
    assert!(e.contains(&said), "{e}");
    assert_eq!(log.skipped, 0);
    let groups = log.into_groups(&BTreeMap::new());
    assert_eq!(groups[0].offsets[0].committed, Some(5));
}

fn group(name: &str, state: Option<&str>, members: usize, offsets: usize) -> Group {
    Group {
        group: name.into(),
        kind: None,
        state: state.map(str::to_owned),
        protocol_type: None,
        generation: None,
        members: (0..members)
            .map(|i| Member {
                member_id: format!("m{i}"),
                client_id: None,
                host: None,
                assignment: BTreeMap::new(),
            })
            .collect(),
        offsets: (0..offsets)
            .map(|i| GroupOffset {
                topic: "t".into(),
                partition: i32::try_from(i).unwrap(),
                committed: Some(1),
                metadata: None,
                commit_time: None,
                end: None,
                lag: None,
                member_id: None,
                host: None,
                client_id: None,
            })
            .collect(),
        total_lag: None,
    }
}

/// Unknown to the coordinator: Dead, with neither a member nor a commit. A Dead group that
/// only committed, or a group offline (no state), is known.
#[test]
fn is_unknown_is_dead_with_no_member_and_no_offset() {
    assert!(group("g", Some("Dead"), 0, 0).is_unknown());
    assert!(!group("g", Some("Dead"), 0, 1).is_unknown());
    assert!(!group("g", Some("Dead"), 1, 0).is_unknown());
    assert!(!group("g", Some("Empty"), 0, 0).is_unknown());
    assert!(!group("g", None, 0, 0).is_unknown());
}

/// No name: every group, unknown ones too, nothing missing. Names: the named groups that
/// exist, in the groups' order, and the missing names in the order given (an unknown group
/// counts as missing).
#[test]
fn select_keeps_the_named_groups_and_names_the_missing() {
    let all = vec![
        group("a", Some("Stable"), 1, 1),
        group("b", Some("Dead"), 0, 1),
        group("c", Some("Dead"), 0, 0),
        group("d", None, 0, 2),
    ];
    let (kept, missing) = select(all.clone(), &[] as &[&str]);
    assert_eq!(kept, all);
    assert!(missing.is_empty());
    let (kept, missing) = select(all, &["nosuch", "d", "c", "b", "x"]);
    let kept: Vec<&str> = kept.iter().map(|g| g.group.as_str()).collect();
    assert_eq!(kept, ["b", "d"]);
    assert_eq!(missing, ["nosuch", "c", "x"]);
}

/// A root without any `__consumer_offsets-N` directory answers no groups, and a warning says
/// that no group can be known there (it printed only an empty table).
#[test]
fn a_root_without_consumer_offsets_warns_that_no_group_can_be_known() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("orders-0")).unwrap();
    let found = krecords_admin::groups::describe_root(root.path()).unwrap();
    assert!(found.groups.is_empty());
    assert!(found.unread.is_empty());
    let said = format!(
        "{}: no __consumer_offsets partitions here, so no consumer group can be known",
        root.path().display()
    );
    assert!(
        found.warnings.iter().any(|w| w.starts_with(&said)),
        "{:?}",
        found.warnings
    );
}

/// The batches of the fixture broker's `__consumer_offsets-0` (Kafka 4.x: a classic group and a
/// consumer-protocol group that each consumed twice, then stopped), read at read_committed:
/// each batch's records as (key, value).
type Batches = Vec<Vec<(Option<Vec<u8>>, Option<Vec<u8>>)>>;

fn fixture_batches() -> Batches {
    use krecords_codec::read::Step;
    use krecords_source::{IsolationLevel, ReadOptions, Sources};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cli/tests/fixtures/internal/__consumer_offsets-0");
    let sources = Sources::open_local(&[dir]).unwrap();
    let options = ReadOptions {
        isolation: IsolationLevel::ReadCommitted,
        ..ReadOptions::default()
    };
    let mut reader = sources.read(0, &options).unwrap();
    let mut scratch = Vec::new();
    let mut batches = Vec::new();
    while reader.next_file().unwrap().is_some() {
        while let Step::Entry(b) = reader.next_entry().unwrap() {
            if b.is_control() {
                continue;
            }
            let records = b.checked_records(&mut scratch, 1 << 20).unwrap();
            let records = records.map(|r| {
                let r = r.unwrap();
                (r.key().map(<[u8]>::to_vec), r.value().map(<[u8]>::to_vec))
            });
            batches.push(records.collect());
        }
    }
    batches
}

/// The states of each group after each step of `steps` (a step's records applied with those
/// of the steps before), a state in a row said once.
fn states_after(steps: &Batches) -> BTreeMap<String, Vec<String>> {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for n in 1..=steps.len() {
        let mut log = GroupLog::default();
        for (k, v) in steps[..n].iter().flatten() {
            log.apply(k.as_deref(), v.as_deref(), 0);
        }
        assert_eq!(log.skipped, 0);
        for g in log.into_groups(&BTreeMap::new()) {
            let states = seen.entry(g.group).or_default();
            let state = g.state.expect("a state");
            if states.last() != Some(&state) {
                states.push(state);
            }
        }
    }
    seen
}

/// Offline groups had no state (`null`); each has the state Kafka's group coordinator gives it
/// when it loads the records, here after each batch of a real broker's `__consumer_offsets`.
/// A classic group: `Empty` without members, `Stable` with (the GroupMetadata of a join, then
/// of the leave). A consumer-protocol group: `Stable` once its member is at the target
/// assignment's epoch (a join's records are one batch), `Empty` when it leaves. A group that
/// only committed offsets is an empty classic group; once its GroupMetadata is a tombstone and
/// its offsets are gone (`krecords-standalone`) it is `Dead` to Kafka: not listed. Record by
/// record, a consumer-protocol group is also `Assigning` while its epoch is past the target
/// assignment's and `Reconciling` while a member is not at the target assignment's epoch (not
/// yet, or its assignment deleted as it leaves).
#[test]
fn offline_groups_have_the_state_kafka_loads_them_in() {
    let batches = fixture_batches();
    let seen = states_after(&batches);
    let classic = ["Empty", "Stable", "Empty", "Stable", "Empty"];
    assert_eq!(seen["krecords-classic"], classic);
    let consumer = ["Stable", "Empty", "Stable", "Empty"];
    assert_eq!(seen["krecords-consumer"], consumer);
    assert_eq!(seen["krecords-standalone"], ["Empty"]);
    let mut log = GroupLog::default();
    for (k, v) in batches.iter().flatten() {
        log.apply(k.as_deref(), v.as_deref(), 0);
    }
    let last: Vec<(String, Option<String>)> = log
        .into_groups(&BTreeMap::new())
        .into_iter()
        .map(|g| (g.group, g.state))
        .collect();
    let empty = Some("Empty".to_owned());
    let names = ["krecords-classic", "krecords-consumer"].map(str::to_owned);
    assert_eq!(
        last,
        [(names[0].clone(), empty.clone()), (names[1].clone(), empty)]
    );
    let records: Batches = batches.into_iter().flatten().map(|r| vec![r]).collect();
    // A join: the member (epoch 0; listed from the group's own record on), the group's epoch,
    // the target assignment's, the member's. A leave: the member's assignment deleted, then
    // the member. The second join's member comes in at epoch 0 under the last target.
    let consumer = [
        "Assigning",
        "Reconciling",
        "Stable",
        "Reconciling",
        "Empty",
        "Reconciling",
        "Assigning",
        "Reconciling",
        "Stable",
        "Reconciling",
        "Empty",
    ];
    assert_eq!(states_after(&records)["krecords-consumer"], consumer);
}

/// A consumer-protocol (KIP-848) member's assignment is on disk by topic id
/// (ConsumerGroupCurrentMemberAssignment): named through the topic ids of the metadata log or
/// `partition.metadata` ([`GroupLog::name_topics`]), the member is assigned its partitions and
/// owns their rows, as live; it had no assignment offline. A topic id no name is known for is
/// returned (a warning), its partitions left out.
#[test]
fn a_consumer_protocol_members_assignment_is_named_by_topic_id() {
    let batches = fixture_batches();
    let replay = |n: usize| {
        let mut log = GroupLog::default();
        for (k, v) in batches[..n].iter().flatten() {
            log.apply(k.as_deref(), v.as_deref(), 0);
        }
        log
    };
    // The batches up to the first join's (a member stable at its assignment).
    let joined = (1..=batches.len())
        .find(|&n| {
            replay(n)
                .into_groups(&BTreeMap::new())
                .iter()
                .any(|g| g.group == "krecords-consumer" && g.state.as_deref() == Some("Stable"))
        })
        .unwrap();
    let mut log = replay(joined);
    let names = BTreeMap::from([(
        "pKUax5oxSYWLiBQFT9AaOA".to_owned(),
        "interop-groups".to_owned(),
    )]);
    assert!(log.name_topics(&names).is_empty());
    let ends = BTreeMap::from([(("interop-groups".to_owned(), 0), 3)]);
    let groups = log.into_groups(&ends);
    let g = groups
        .iter()
        .find(|g| g.group == "krecords-consumer")
        .unwrap();
    let member = &g.members[0];
    assert_eq!(
        member.assignment,
        BTreeMap::from([("interop-groups".to_owned(), vec![0])])
    );
    let row = g
        .offsets
        .iter()
        .find(|o| o.topic == "interop-groups" && o.partition == 0)
        .unwrap();
    assert_eq!(row.member_id.as_ref(), Some(&member.member_id));
    assert_eq!(row.end, Some(3));
    let mut log = replay(joined);
    assert_eq!(
        log.name_topics(&BTreeMap::new()),
        ["pKUax5oxSYWLiBQFT9AaOA"]
    );
    let groups = log.into_groups(&BTreeMap::new());
    let g = groups
        .iter()
        .find(|g| g.group == "krecords-consumer")
        .unwrap();
    assert!(g.members[0].assignment.is_empty());
}
