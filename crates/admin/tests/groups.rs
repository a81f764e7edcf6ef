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
