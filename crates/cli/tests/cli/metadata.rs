//! `krec metadata` and `krec offsets`: a live cluster (the test kit's fake cluster) and a
//! broker's files (the 4.4 broker's internal topics fixture), same model, same output forms.

use crate::util::{run, Dir};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_testkit::batches::numbered;
use krecords_testkit::{FakeCluster, FakeGroup, FakeMember};
use std::path::{Path, PathBuf};

const TS: i64 = 1_700_000_000_000;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/internal")
}

/// A cluster with topic `a` (2 partitions: 6 and 3 records) and `__transaction_state`.
fn cluster() -> FakeCluster {
    let c = FakeCluster::start(&[("a", 2), ("__transaction_state", 1)]);
    let log = |n| numbered(n, 3, |o| (TS + o, b"k".to_vec(), b"v".to_vec()));
    c.append("a", 0, &log(2));
    c.append("a", 1, &log(1));
    c
}

#[test]
fn live_metadata_json_lists_brokers_topics_and_partitions() {
    let c = cluster();
    let url = format!("kafka://{}", c.addr());
    let r = run(&["metadata", &url, "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["live"], true);
    assert_eq!(v["cluster_id"], "fake");
    assert_eq!(v["brokers"][0]["node_id"], 0);
    assert_eq!(v["brokers"][0]["port"], c.broker().port());
    // Internal topics only with --all.
    let topics = v["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 1);
    assert_eq!(topics[0]["name"], "a");
    let parts = topics[0]["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p["partition"], i);
        assert_eq!(p["leader"], 0);
        assert_eq!(p["replicas"], serde_json::json!([0]));
        assert_eq!(p["isr"], serde_json::json!([0]));
    }
    let all = run(&["metadata", &url, "--all", "--format", "json"]).json();
    let names: Vec<&str> = all["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["__transaction_state", "a"]);
    assert_eq!(all["topics"][0]["internal"], true);
}

#[test]
fn live_metadata_text_with_offsets_and_a_topic_filter() {
    let c = cluster();
    let url = format!("kafka://{}", c.addr());
    let out = run(&["metadata", &url, "--offsets", "--topic", "a*"]).ok();
    assert!(out.contains("1 broker:\n  broker 0 at 127.0.0.1:"), "{out}");
    assert!(out.contains("1 topic, 0 offline partitions:"), "{out}");
    assert!(
        out.contains(
            "    partition 0, leader 0, epoch 7, replicas: 0, isrs: 0, offsets: 0..6 stable 6\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "    partition 1, leader 0, epoch 7, replicas: 0, isrs: 0, offsets: 0..3 stable 3\n"
        ),
        "{out}"
    );
    // A selection of nothing is a usage error naming the topics there are (it was an empty
    // answer), as in dump and verify; --topic is repeatable.
    let said = format!(
        "{url}: no partition of a topic matching \"zz*\" (its topics: __transaction_state, a)"
    );
    for cmd in ["metadata", "offsets"] {
        run(&[cmd, &url, "--topic", "zz*"]).fails(2, &said);
        let r = run(&[
            cmd, &url, "--topic", "zz*", "--topic", "a", "--format", "json",
        ]);
        assert_eq!(r.code, 0, "{cmd}: {}", r.stderr);
    }
    run(&["metadata", &format!("{url}/zz")]).fails(2, "no partition of a topic matching \"zz\"");
}

#[test]
fn live_offsets_per_partition_with_a_time() {
    let c = cluster();
    let url = format!("kafka://{}/a", c.addr());
    let r = run(&[
        "offsets",
        &url,
        "--time",
        &(TS + 4).to_string(),
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        (lines[0]["earliest"].as_i64(), lines[0]["latest"].as_i64()),
        (Some(0), Some(6))
    );
    assert_eq!(lines[0]["last_stable"], 6);
    assert_eq!(lines[1]["latest"], 3);
    // Partition 1's records end at TS + 2.
    assert!(lines[1]["at_time"].is_null());
    let text = run(&["offsets", &url]).ok();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[0].starts_with("TOPIC"));
    let cells: Vec<&str> = rows[2].split_whitespace().collect();
    assert_eq!(cells, ["a", "1", "0", "3", "3"]);
}

/// `--time` takes a time in every form the positions take it: epoch ms, `@` and epoch ms (it
/// was exit 2) and ISO 8601, with the same answer.
#[test]
fn offsets_time_takes_the_forms_of_the_positions() {
    let c = cluster();
    let url = format!("kafka://{}/a", c.addr());
    let at = |time: &str| {
        let r = run(&["offsets", &url, "--time", time, "--format", "json"]);
        assert_eq!(r.code, 0, "{time}: {}", r.stderr);
        r.json_lines()
            .iter()
            .map(|l| l["at_time"].clone())
            .collect::<Vec<_>>()
    };
    let want = at(&(TS + 4).to_string());
    assert!(!want[0].is_null());
    assert_eq!(at(&format!("@{}", TS + 4)), want);
    let iso = krecords_source::time::iso(TS + 4);
    assert_eq!(at(&iso), want);
    assert_eq!(at(&format!("@{iso}")), want);
    run(&["offsets", &url, "--time", "@@1"]).fails(2, "invalid time \"@@1\"");
}

/// A negative `--time` is no time: live it went to ListOffsets as its sentinel (-1: the latest
/// offsets), offline it found offset 0, and -7 answered "-" everywhere with exit 0. Now a
/// usage error wherever a time to look up is taken, live or offline, saying what a time is.
#[test]
fn a_negative_time_is_a_usage_error_everywhere() {
    let c = cluster();
    let url = format!("kafka://{}/a", c.addr());
    let root = fixtures();
    let root = root.to_str().unwrap();
    let said = "a time is milliseconds since the epoch (0 or more), ISO 8601";
    let columns = "the earliest and latest offsets are already columns of `krec offsets`";
    for time in ["-1", "-7", "@-2", "1969-12-31"] {
        for source in [url.as_str(), root] {
            let r = run(&["offsets", source, "--time", time]);
            r.fails(2, said).fails(2, columns);
        }
        let start = if time.starts_with('-') {
            format!("@{time}")
        } else {
            time.to_owned()
        };
        run(&["dump", "--start", &start, root]).fails(2, said);
        run(&["dump", "--end", &start, root]).fails(2, said);
    }
}

#[test]
fn offline_metadata_is_the_metadata_logs_last_state() {
    let root = fixtures();
    let v = run(&[
        "metadata",
        root.to_str().unwrap(),
        "--all",
        "--format",
        "json",
    ])
    .json();
    assert_eq!(v["live"], false);
    assert_eq!(v["controller"], 1);
    assert_eq!(v["brokers"][0]["fenced"], true);
    let t = v["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "interop-zstd")
        .unwrap();
    assert_eq!(t["id"], "BUsf61KDQ7aG4rQaad0pow");
    assert_eq!(t["partitions"][0]["replicas"], serde_json::json!([1]));
    assert_eq!(t["partitions"][0]["on_disk"], false);
    let text = run(&["metadata", root.to_str().unwrap()]).ok();
    assert!(text.starts_with(&format!("Metadata of {} (broker files)\n", root.display())));
    // Without --all, no internal topic.
    assert!(!text.contains("__transaction_state"), "{text}");
}

#[test]
fn offline_offsets_match_the_partitions_records() {
    let root = fixtures();
    let r = run(&[
        "offsets",
        root.to_str().unwrap(),
        "--topic",
        "__transaction_state",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 1);
    let dir = root.join("__transaction_state-0");
    let records = run(&["dump", "--deep", "--format", "json", dir.to_str().unwrap()]).json_lines();
    let last = records
        .iter()
        .filter_map(|l| l["last_offset"].as_i64())
        .max()
        .unwrap();
    assert_eq!(lines[0]["latest"].as_i64(), Some(last + 1));
    assert_eq!(lines[0]["earliest"], 0);
    assert_eq!(lines[0]["error"], serde_json::Value::Null);
    // A partition directory of the root holding no segment: its row says why it has no
    // answer, naming the directory (the error was null; the warning said "cannot list input").
    let root = fixture_copy();
    let odd = root.path().join("odd-0");
    std::fs::create_dir(&odd).unwrap();
    std::fs::write(odd.join("00000000000000000000.index"), [0u8; 8]).unwrap();
    let r = run(&["offsets", root.path().to_str().unwrap(), "--format", "json"]);
    let rows = r.json_lines();
    let row = rows.iter().find(|l| l["topic"] == "odd").unwrap();
    let error = row["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!("{}: no .log segments", odd.display())),
        "{row}"
    );
    assert!(r.stderr.contains(error), "{}", r.stderr);
}

#[test]
fn sources_that_cannot_answer_exit_2() {
    run(&["metadata", "/nonexistent/krec"]).fails(2, "no such file or directory");
    let file = std::env::current_exe().unwrap();
    run(&["offsets", file.to_str().unwrap()]).fails(2, "not a directory");
    run(&["offsets", "kafka://"]).fails(2, "no broker address");
    run(&["metadata", "kafka://127.0.0.1:1", "-X", "retries=0"]).fails(2, "kafka://127.0.0.1:1");
}

/// One partition directory of a root stands for that partition (internal or not); a directory
/// that is neither a root nor a partition's, or a partition that holds no groups, is exit 2
/// with what was expected (both once printed an empty table and exited 0).
#[test]
fn one_partition_directory_answers_for_its_partition() {
    let root = fixtures();
    let dir = root.join("__transaction_state-0");
    let whole = run(&[
        "offsets",
        root.to_str().unwrap(),
        "--all",
        "--format",
        "json",
    ])
    .json_lines();
    let want: Vec<_> = whole
        .into_iter()
        .filter(|l| l["topic"] == "__transaction_state" && l["partition"] == 0)
        .collect();
    assert_eq!(want.len(), 1);
    let one = run(&["offsets", dir.to_str().unwrap(), "--format", "json"]).json_lines();
    assert_eq!(one, want);
    let meta = run(&["metadata", dir.to_str().unwrap(), "--format", "json"]).json();
    let topics = meta["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 1, "{meta}");
    assert_eq!(topics[0]["name"], "__transaction_state");
    assert_eq!(topics[0]["partitions"].as_array().unwrap().len(), 1);
    let groups = run(&[
        "groups",
        root.join("__consumer_offsets-0").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(groups.code, 0, "{}", groups.stderr);
    assert!(!groups.json_lines().is_empty());
    run(&["groups", dir.to_str().unwrap()]).fails(2, "consumer groups are in __consumer_offsets");
    let empty = tempfile::tempdir().unwrap();
    for cmd in ["metadata", "offsets", "groups"] {
        run(&[cmd, empty.path().to_str().unwrap()]).fails(
            2,
            "holds neither meta.properties nor TOPIC-N partition directories",
        );
    }
}

/// A root without __consumer_offsets partitions: no group, a warning saying why, and the exit
/// code `krec groups --help` documents (0: answered; 2 for a GROUP named).
#[test]
fn groups_of_a_root_without_consumer_offsets_warn() {
    let d = Dir::new();
    let root = d.arg("root");
    std::fs::create_dir_all(d.path("root/orders-0")).unwrap();
    let r = run(&["groups", &root]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.out().starts_with("GROUP"), "{}", r.out());
    let said = format!(
        "krec: warning: {root}: no __consumer_offsets partitions here, so no consumer group can \
         be known"
    );
    assert!(r.stderr.contains(&said), "{}", r.stderr);
    let r = run(&["groups", &root, "app"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains(&said), "{}", r.stderr);
}

#[test]
fn offline_groups_are_the_last_commits_of_consumer_offsets() {
    let root = fixtures();
    let r = run(&["groups", root.to_str().unwrap(), "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let groups = r.json_lines();
    let names: Vec<&str> = groups
        .iter()
        .map(|g| g["group"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["krecords-classic", "krecords-consumer"]);
    assert_eq!(groups[0]["kind"], "classic");
    assert_eq!(groups[0]["protocol_type"], "consumer");
    assert_eq!(groups[1]["kind"], "consumer");
    // The state Kafka's coordinator loads them in (it was null): the consumers left before the
    // broker stopped, so neither group has members.
    for g in &groups {
        assert_eq!(g["state"], "Empty", "{g}");
        assert_eq!(g["members"], serde_json::json!([]), "{g}");
    }
    // The last commit of each partition, as the decoded records show them.
    let dump = run(&[
        "dump",
        "--deep",
        "--format",
        "json",
        root.join("__consumer_offsets-0").to_str().unwrap(),
    ])
    .json_lines();
    // Commits replace each other; a tombstone (value_decoded null) deletes.
    let mut last = std::collections::BTreeMap::new();
    for rec in dump
        .iter()
        .flat_map(|b| b["records"].as_array().cloned().unwrap_or_default())
    {
        let Some(k) = rec["key_decoded"].get("data") else {
            continue;
        };
        let (Some(g), Some(t), Some(p)) = (
            k["group"].as_str(),
            k["topic"].as_str(),
            k["partition"].as_i64(),
        ) else {
            continue;
        };
        let id = (g.to_owned(), t.to_owned(), p);
        match rec["value_decoded"]["data"]["offset"].as_i64() {
            Some(o) => last.insert(id, o),
            None => last.remove(&id),
        };
    }
    let mine: std::collections::BTreeMap<_, _> = groups
        .iter()
        .flat_map(|g| {
            g["offsets"].as_array().unwrap().iter().map(move |o| {
                (
                    (
                        g["group"].as_str().unwrap().to_owned(),
                        o["topic"].as_str().unwrap().to_owned(),
                        o["partition"].as_i64().unwrap(),
                    ),
                    o["committed"].as_i64().unwrap(),
                )
            })
        })
        .collect();
    assert!(!mine.is_empty());
    assert_eq!(mine, last);
    let text = run(&["groups", root.to_str().unwrap(), "krecords-classic"]).ok();
    assert!(
        text.contains("# krecords-classic: classic group, Empty, generation 4, 0 members"),
        "{text}"
    );
    assert!(!text.contains("krecords-consumer"), "{text}");
}

#[test]
fn live_groups_are_listed_and_described_with_members_state_and_lag() {
    let c = cluster();
    let member = |id: &str, assignment: Vec<(String, Vec<i32>)>| FakeMember {
        member_id: id.into(),
        client_id: format!("{id}-client"),
        host: "/127.0.0.1".into(),
        assignment,
    };
    // A classic group whose member has both partitions, one committed.
    c.set_group(
        "classic-app",
        FakeGroup {
            state: "Stable".into(),
            members: vec![member("m1", vec![("a".into(), vec![0, 1])])],
            ..FakeGroup::default()
        },
    );
    c.commit("classic-app", "a", 0, 4);
    // A consumer-protocol group with two members, nothing committed.
    c.set_group(
        "new-app",
        FakeGroup {
            consumer_protocol: true,
            state: "Stable".into(),
            members: vec![
                member("n1", vec![("a".into(), vec![1])]),
                member("n2", vec![("a".into(), vec![0])]),
            ],
            ..FakeGroup::default()
        },
    );
    // A group that only committed, and a share group (listed, never described).
    c.commit("old-app", "a", 1, 1);
    c.set_group(
        "shared-app",
        FakeGroup {
            share: true,
            state: "Stable".into(),
            ..FakeGroup::default()
        },
    );
    let url = format!("kafka://{}", c.addr());
    let r = run(&["groups", &url, "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let groups = r.json_lines();
    let names: Vec<&str> = groups
        .iter()
        .map(|g| g["group"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["classic-app", "new-app", "old-app", "shared-app"]);
    assert_eq!(groups[3]["kind"], "share");
    assert_eq!(groups[3]["state"], "Stable");
    assert_eq!(groups[3]["offsets"], serde_json::json!([]));
    type Row = (i64, Option<i64>, i64, Option<i64>, String);
    let rows = |g: &serde_json::Value| -> Vec<Row> {
        g["offsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["partition"].as_i64().unwrap(),
                    o["committed"].as_i64(),
                    o["end"].as_i64().unwrap(),
                    o["lag"].as_i64(),
                    o["member_id"].as_str().unwrap_or("-").to_owned(),
                )
            })
            .collect()
    };
    // Partition 0 holds 6 records (two batches of 3), partition 1 holds 3.
    assert_eq!(
        rows(&groups[0]),
        [
            (0, Some(4), 6, Some(2), "m1".into()),
            (1, None, 3, None, "m1".into())
        ]
    );
    assert_eq!(groups[0]["kind"], "classic");
    assert_eq!(groups[0]["state"], "Stable");
    assert_eq!(groups[0]["protocol_type"], "consumer");
    assert_eq!(groups[0]["members"][0]["client_id"], "m1-client");
    assert_eq!(groups[0]["members"][0]["host"], "/127.0.0.1");
    assert_eq!(
        groups[0]["members"][0]["assignment"]["a"],
        serde_json::json!([0, 1])
    );
    assert_eq!(groups[0]["total_lag"], 2);
    assert_eq!(
        rows(&groups[1]),
        [
            (0, None, 6, None, "n2".into()),
            (1, None, 3, None, "n1".into())
        ]
    );
    assert_eq!(groups[1]["kind"], "consumer");
    assert_eq!(groups[1]["generation"], 3);
    assert_eq!(rows(&groups[2]), [(1, Some(1), 3, Some(2), "-".into())]);
    assert_eq!(groups[2]["state"], "Dead");
    assert_eq!(groups[2]["members"], serde_json::json!([]));

    let text = run(&["groups", &url, "classic-app", "new-app"]).ok();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "GROUP\tTOPIC\tPARTITION\tCOMMITTED\tEND\tLAG\tCONSUMER_ID\tHOST\tCLIENT_ID\tCOMMITTED_AT"
    );
    assert_eq!(
        lines[1],
        "classic-app\ta\t0\t4\t6\t2\tm1\t/127.0.0.1\tm1-client\t-"
    );
    assert_eq!(
        lines[2],
        "classic-app\ta\t1\t-\t3\t-\tm1\t/127.0.0.1\tm1-client\t-"
    );
    assert_eq!(
        lines[3],
        "# classic-app: classic group, Stable, 1 member, 2 partitions, total lag at least 2 (1 of \
         unknown lag)"
    );
    assert_eq!(
        lines[6],
        "# new-app: consumer group, Stable, epoch 3, 2 members, 2 partitions, total lag -"
    );
    assert_eq!(lines.len(), 7, "{text}");
}

#[test]
fn client_properties_that_do_not_apply_are_warned_about_not_refused() {
    let c = cluster();
    let dir = tempfile::tempdir().unwrap();
    let props = dir.path().join("client.properties");
    std::fs::write(
        &props,
        "group.id=g\nauto.offset.reset=earliest\ndebug=all\nrequest.timeout.ms=5000\n\
         message.max.bytes=1000000\nenable.ssl.certificate.verification=false\n",
    )
    .unwrap();
    let url = format!("kafka://{}", c.addr());
    let r = run(&["metadata", &url, "-F", props.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for name in [
        "group.id",
        "auto.offset.reset",
        "debug",
        "message.max.bytes",
        "enable.ssl.certificate.verification",
    ] {
        assert!(
            r.stderr
                .contains(&format!("krec: warning: {name} does not apply to krec")),
            "{name}: {}",
            r.stderr
        );
    }
    // request.timeout.ms is Java's socket.timeout.ms: taken, no warning.
    assert!(!r.stderr.contains("request.timeout.ms"), "{}", r.stderr);
    run(&["metadata", &url, "-X", "socket.timout.ms=5"])
        .fails(2, "did you mean \"socket.timeout.ms\"?");
}

/// A copy of the fixture root in a temporary directory.
fn fixture_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(fixtures()).unwrap().flatten() {
        let to = tmp.path().join(e.file_name());
        if e.path().is_dir() {
            std::fs::create_dir(&to).unwrap();
            for f in std::fs::read_dir(e.path()).unwrap().flatten() {
                std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
            }
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
    tmp
}

/// Groups of a root whose `__consumer_offsets` partition is damaged in the middle: shown as
/// far as they can be read, a warning naming the damage, and exit 1 (it was exit 0, the
/// warning alone).
#[test]
fn groups_of_a_damaged_consumer_offsets_partition_exit_1_with_the_damage_named() {
    let root = fixture_copy();
    let whole = run(&["groups", root.path().to_str().unwrap()]);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    let log = root
        .path()
        .join("__consumer_offsets-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[2000] ^= 0xff;
    std::fs::write(&log, &bytes).unwrap();
    let r = run(&["groups", root.path().to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("{}: byte 1979: crc mismatch", log.display())),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("none at or after it are applied"),
        "{}",
        r.stderr
    );
    assert!(r.out().starts_with("GROUP\t"), "{}", r.out());
    // The first batch's length broken, so nothing after it reads as entries (the broker
    // closed cleanly: nothing recovers it at open): not an empty partition, exit 1 (it was
    // exit 0 with no group and no warning).
    let root = fixture_copy();
    let log = root
        .path()
        .join("__consumer_offsets-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[8..12].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
    std::fs::write(&log, &bytes).unwrap();
    let r = run(&["groups", root.path().to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("{}: byte 0: ", log.display())),
        "{}",
        r.stderr
    );
}

/// A commit of `__consumer_offsets`: group, topic, partition, and the offset and metadata
/// committed (`None`: the tombstone that deletes the committed offset).
type Commit<'a> = (&'a str, &'a str, i32, Option<(i64, &'a str)>);

/// A broker's root, stopped cleanly (`.kafka_cleanshutdown` and index files: its logs are
/// read as they are, not scanned), with `__consumer_offsets-0` holding one batch per commit (offsets from 0) and
/// `t-0` holding 10 records; the byte position of each commit's batch.
fn offsets_root(d: &Dir, commits: &[Commit]) -> Vec<usize> {
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend(i16::try_from(s.len()).unwrap().to_be_bytes());
        out.extend(s.as_bytes());
    };
    let mut log = Vec::new();
    let mut positions = Vec::new();
    for (o, &(group, topic, partition, commit)) in (0i64..).zip(commits) {
        // OffsetCommitKey v1, OffsetCommitValue v3.
        let mut key = 1i16.to_be_bytes().to_vec();
        string(&mut key, group);
        string(&mut key, topic);
        key.extend(partition.to_be_bytes());
        let value = commit.map(|(offset, metadata)| {
            let mut v = 3i16.to_be_bytes().to_vec();
            v.extend(offset.to_be_bytes());
            v.extend((-1i32).to_be_bytes());
            string(&mut v, metadata);
            v.extend(TS.to_be_bytes());
            v
        });
        let mut b = V2Builder::new(o);
        b.append(&NewRecord::new(TS + o, Some(&key), value.as_deref()))
            .unwrap();
        positions.push(log.len());
        log.extend(b.finish().unwrap());
    }
    for dir in ["__consumer_offsets-0", "t-0"] {
        std::fs::create_dir_all(d.path(&format!("data/{dir}"))).unwrap();
    }
    d.write("data/.kafka_cleanshutdown", b"");
    d.write("data/__consumer_offsets-0/00000000000000000000.log", &log);
    for index in ["index", "timeindex"] {
        d.write(
            &format!("data/__consumer_offsets-0/00000000000000000000.{index}"),
            b"",
        );
    }
    let t = numbered(1, 10, |o| (TS + o, b"k".to_vec(), b"v".to_vec()));
    d.write("data/t-0/00000000000000000000.log", &t.concat());
    positions
}

/// A batch with a bad CRC in the middle of `__consumer_offsets` (its stored CRC alone
/// overwritten; it holds a tombstone) is damage, named with its file, byte and offset, and
/// exit 1, as `krec verify` says; the partition's commits are applied up to it and none after
/// it, as Kafka's broker loads them (it once left the batch out, so the deleted offset came
/// back, applied the commits after it, warned "could not be decoded" and exited 0).
#[test]
fn groups_stop_at_a_batch_with_a_bad_crc_and_exit_1_naming_it() {
    let d = Dir::new();
    let at = offsets_root(
        &d,
        &[
            ("g", "t", 0, Some((5, "m"))),
            ("g", "t", 1, Some((3, "m"))),
            ("g", "t", 0, None),
            ("g", "t", 1, Some((7, "m"))),
            ("h", "t", 0, Some((9, "m"))),
        ],
    );
    let log = d.path("data/__consumer_offsets-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    // The stored CRC: bytes 17..21 of a v2 batch.
    let crc = at[2] + 17;
    let bad = !u32::from_be_bytes(bytes[crc..crc + 4].try_into().unwrap());
    bytes[crc..crc + 4].copy_from_slice(&bad.to_be_bytes());
    std::fs::write(&log, &bytes).unwrap();
    d.run(&["verify", &d.arg("data/__consumer_offsets-0")], b"")
        .reports(1, "crc mismatch");
    let r = d.run(&["groups", &d.arg("data"), "--format", "json"], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    let said = format!(
        "{}: the batch at offset 2 is damaged: entry at byte {}: crc mismatch",
        log.display(),
        at[2]
    );
    assert!(r.stderr.contains(&said), "{}", r.stderr);
    assert!(
        r.stderr.contains("none at or after it are applied"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("could not be decoded"), "{}", r.stderr);
    // Commits before the damage only: t-0's deletion and t-1's commit of 7 are not applied,
    // nor group h's commit after it.
    let groups = r.json_lines();
    assert_eq!(groups.len(), 1, "{groups:?}");
    let committed: Vec<(i64, i64)> = groups[0]["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["partition"].as_i64().unwrap(),
                o["committed"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(committed, [(0, 5), (1, 3)]);
}

/// A lag that is not known is null in JSON where the text says "-" (total_lag was 0), and
/// metadata committed empty stays "" (it was null).
#[test]
fn groups_json_total_lag_is_null_when_unknown_and_empty_metadata_stays_empty() {
    let d = Dir::new();
    offsets_root(
        &d,
        &[
            ("known", "t", 0, Some((4, ""))),
            ("known", "gone", 0, Some((1, "m"))),
            ("unknown", "gone", 0, Some((1, "m"))),
        ],
    );
    let root = d.arg("data");
    let groups = d
        .run(&["groups", &root, "--format", "json"], b"")
        .json_lines();
    assert_eq!(groups.len(), 2, "{groups:?}");
    assert_eq!(groups[0]["group"], "known");
    assert_eq!(groups[0]["total_lag"], 6);
    assert_eq!(groups[0]["offsets"][0]["topic"], "gone");
    assert_eq!(groups[0]["offsets"][0]["metadata"], "m");
    assert_eq!(groups[0]["offsets"][1]["metadata"], "");
    assert_eq!(groups[0]["offsets"][1]["lag"], 6);
    assert_eq!(groups[1]["group"], "unknown");
    assert_eq!(groups[1]["offsets"][0]["lag"], serde_json::Value::Null);
    assert_eq!(groups[1]["total_lag"], serde_json::Value::Null);
    // A group that only committed offsets is an empty group to Kafka's coordinator.
    assert_eq!(groups[1]["state"], "Empty");
    let text = d.run(&["groups", &root, "unknown"], b"").ok();
    assert!(
        text.contains("# unknown: Empty, 0 members, 1 partition, total lag -"),
        "{text}"
    );
}

/// A GROUP named that the source does not hold is exit 2 naming it (it was exit 0 with the
/// header alone), checked before anything is printed: nothing on stdout, not the header (it
/// was printed ahead of the error) nor the groups that are there.
#[test]
fn groups_named_that_do_not_exist_exit_2() {
    let d = Dir::new();
    offsets_root(&d, &[("g", "t", 0, Some((4, "")))]);
    let root = d.arg("data");
    let r = d.run(&["groups", &root, "nosuch"], b"");
    r.fails(
        2,
        &format!("nosuch: no such group in {root} (no committed offsets"),
    );
    assert_eq!(r.out(), "");
    let r = d.run(&["groups", &root, "g", "nosuch", "--format", "json"], b"");
    r.fails(2, "nosuch: no such group");
    assert_eq!(r.out(), "");
    let c = cluster();
    c.commit("old-app", "a", 1, 1);
    let url = format!("kafka://{}", c.addr());
    let r = run(&["groups", &url, "nosuch"]);
    r.fails(2, "nosuch: no such group");
    assert_eq!(r.out(), "");
    assert_eq!(run(&["groups", &url, "old-app"]).code, 0);
}

/// Offline without a metadata log, `metadata` says the leaders are unknown (text on stderr,
/// JSON in `warnings`); `offsets` and `groups`, which do not show leaders, say nothing of it.
#[test]
fn metadata_of_a_root_without_a_metadata_log_says_leaders_are_unknown() {
    let d = Dir::new();
    offsets_root(&d, &[("g", "t", 0, Some((4, "")))]);
    let root = d.arg("data");
    let r = d.run(&["metadata", &root, "--format", "json"], b"");
    let json = r.json();
    let warnings = json["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains(
                "no __cluster_metadata-0 here, so leaders, replicas and ISRs are unknown"
            )),
        "{json}"
    );
    assert!(
        r.stderr.contains("leaders, replicas and ISRs are unknown"),
        "{}",
        r.stderr
    );
    for args in [&["offsets", &root][..], &["groups", &root]] {
        let r = d.run(args, b"");
        assert!(
            !r.stderr.contains("__cluster_metadata"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

/// metadata --offsets printed a damaged partition's whole error in its row, where offsets says
/// `damaged` there and gives the error on stderr; it does what offsets does: the word in the
/// row, the error on stderr once, the same exit code. JSON keeps the whole error.
#[test]
fn metadata_offsets_says_damaged_in_the_row_as_offsets_does() {
    let d = Dir::new();
    d.partition("data/good-0", 60);
    d.partition("data/mid-0", 60);
    // A length field lying upwards in the middle of the log: intact entries follow it.
    let segment = d.path("data/mid-0/00000000000000000020.log");
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes[8..12].copy_from_slice(&0x7fff_ff00u32.to_be_bytes());
    std::fs::write(&segment, bytes).unwrap();
    let root = d.arg("data");
    let offsets = d.run(&["offsets", &root], b"");
    let r = d.run(&["metadata", "--offsets", &root], b"");
    assert_eq!((r.code, offsets.code), (1, 1), "{}", r.stderr);
    let error = "intact entries follow";
    assert_eq!(r.stderr.matches(error).count(), 1, "{}", r.stderr);
    assert!(!r.out().contains(error), "{}", r.out());
    let text = r.out();
    let row = text
        .lines()
        .skip_while(|l| !l.contains("topic \"mid\""))
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.ends_with(": damaged"), "{row}");
    let r = d.run(&["metadata", "--offsets", "--format", "json", &root], b"");
    assert!(r.out().contains(error), "{}", r.out());
}

/// A consumer-protocol (KIP-848) member offline: its assignment is stored by topic id, named
/// by the topic's `partition.metadata` (or the metadata log): the member is assigned
/// `interop-groups:0` and owns the row, as live krec and kafka-consumer-groups show it (it was
/// CONSUMER-ID `-` and `"assignment":{}`).
#[test]
fn offline_consumer_protocol_members_have_their_assignment() {
    let root = fixture_copy();
    // The log up to the first join (the batch of offsets 5..=9 ends at byte 1371): the member
    // is in the group.
    let log = root
        .path()
        .join("__consumer_offsets-0/00000000000000000000.log");
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..1371]).unwrap();
    let dir = root.path().join("interop-groups-0");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("partition.metadata"),
        "version: 0\ntopic_id: pKUax5oxSYWLiBQFT9AaOA\n",
    )
    .unwrap();
    let t = numbered(1, 4, |o| (TS + o, b"k".to_vec(), b"v".to_vec()));
    std::fs::write(dir.join("00000000000000000000.log"), t.concat()).unwrap();
    let path = root.path().to_str().unwrap();
    let r = run(&["groups", path, "krecords-consumer", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let g = &r.json_lines()[0];
    assert_eq!(g["state"], "Stable", "{g}");
    let member = &g["members"][0];
    assert_eq!(
        member["assignment"],
        serde_json::json!({"interop-groups": [0]})
    );
    let row = &g["offsets"][0];
    assert_eq!(row["topic"], "interop-groups", "{g}");
    assert_eq!(row["member_id"], member["member_id"], "{g}");
    assert_eq!(row["end"], 4, "{g}");
    let text = run(&["groups", path, "krecords-consumer"]).ok();
    let id = member["member_id"].as_str().unwrap();
    assert!(text.contains("interop-groups\t0\t"), "{text}");
    assert!(text.contains(id), "{text}");
}

/// `kafka://HOST/TOPIC/PARTITION`, as dump and produce take it, answers for that partition in
/// offsets and metadata (it was "no partition of a topic matching \"a/1\""); a partition the
/// topic does not have is named as dump names it.
#[test]
fn offsets_and_metadata_take_a_partition_url() {
    let c = cluster();
    let url = format!("kafka://{}/a/1", c.addr());
    let r = run(&["offsets", &url, "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = r.json_lines();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (&rows[0]["topic"], &rows[0]["partition"]),
        (&"a".into(), &1.into())
    );
    assert_eq!(rows[0]["latest"], 3);
    let m = run(&["metadata", &url, "--format", "json"]).json_lines();
    let partitions = m[0]["topics"][0]["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 1);
    assert_eq!(partitions[0]["partition"], 1);
    let missing = format!("kafka://{}/a: no partition 9 (the topic has 2)", c.addr());
    for cmd in ["offsets", "metadata"] {
        let url = format!("kafka://{}/a/9", c.addr());
        run(&[cmd, &url]).fails(2, &missing);
        let url = format!("kafka://{}/a/x", c.addr());
        run(&[cmd, &url]).fails(2, "\"x\" is not a partition number");
    }
    // The URL as given in the error (it was `kafka:///-` and `kafka://b:99999/-`).
    run(&["offsets", "kafka:///"]).fails(2, "kafka:///: no broker address");
    run(&["metadata", "kafka://b:99999"]).fails(2, "kafka://b:99999: \"b:99999\" is not");
}

/// `krec groups kafka://HOST/TOPIC` answers for that topic: the groups with a row of it
/// (a commit, an assigned partition), those rows only, total lag over them; with a partition,
/// its rows only; GROUPs named stay even without one. The topic was dropped silently (every
/// group, every row).
#[test]
fn groups_of_a_topic_url_are_the_topics_consumers() {
    let c = FakeCluster::start(&[("a", 2), ("b", 1)]);
    let log = |n| numbered(n, 3, |o| (TS + o, b"k".to_vec(), b"v".to_vec()));
    c.append("a", 0, &log(1));
    c.append("a", 1, &log(1));
    c.append("b", 0, &log(2));
    c.commit("both", "a", 0, 1);
    c.commit("both", "a", 1, 3);
    c.commit("both", "b", 0, 2);
    c.commit("only-b", "b", 0, 5);
    let groups = |url: &str, names: &[&str]| {
        let mut args = vec!["groups", url, "--format", "json"];
        args.extend(names);
        let r = run(&args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.json_lines()
            .iter()
            .map(|g| {
                let rows: Vec<(String, i64)> = g["offsets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| {
                        (
                            o["topic"].as_str().unwrap().into(),
                            o["partition"].as_i64().unwrap(),
                        )
                    })
                    .collect();
                (
                    g["group"].as_str().unwrap().to_owned(),
                    rows,
                    g["total_lag"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let a = format!("kafka://{}/a", c.addr());
    let rows_a = vec![("a".to_owned(), 0), ("a".to_owned(), 1)];
    assert_eq!(groups(&a, &[]), [("both".into(), rows_a, 2.into())]);
    let a1 = format!("kafka://{}/a/1", c.addr());
    assert_eq!(
        groups(&a1, &[]),
        [("both".into(), vec![("a".to_owned(), 1)], 0.into())]
    );
    assert_eq!(
        groups(&a, &["only-b"]),
        [("only-b".into(), vec![], 0.into())]
    );
    let b = format!("kafka://{}/b", c.addr());
    assert_eq!(groups(&b, &[]).len(), 2);
}

/// The metadata of a live commit made empty is "" as offline (the broker stores a string; the
/// JSON help says "" when empty, null when absent): it was null live.
#[test]
fn live_commit_metadata_is_empty_not_null() {
    let c = cluster();
    c.commit("g", "a", 0, 1);
    c.set_group(
        "assigned",
        FakeGroup {
            state: "Stable".into(),
            members: vec![FakeMember {
                member_id: "m".into(),
                client_id: "c".into(),
                host: "/127.0.0.1".into(),
                assignment: vec![("a".into(), vec![1])],
            }],
            ..FakeGroup::default()
        },
    );
    let url = format!("kafka://{}", c.addr());
    let r = run(&["groups", &url, "g", "assigned", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let groups = r.json_lines();
    assert_eq!(groups[0]["offsets"][0]["metadata"], "", "{}", groups[0]);
    // Nothing committed: no metadata, null.
    let row = &groups[1]["offsets"][0];
    assert_eq!(row["committed"], serde_json::Value::Null, "{row}");
    assert_eq!(row["metadata"], serde_json::Value::Null, "{row}");
}

/// Client properties given to a command with only local sources apply to nothing: a warning
/// says so, once, naming them (`-X garbage` was silently taken offline, and exit 2 live).
/// Remote tier options (s3.*) are not client properties: no warning for them.
#[test]
fn client_properties_without_a_kafka_source_are_said_to_be_ignored() {
    let root = fixtures();
    let root = root.to_str().unwrap();
    let said = "krec: warning: client properties apply only to kafka:// sources, and none is \
                given: ignored, unchecked: -X garbage";
    let txn = format!("{root}/__transaction_state-0");
    let d = Dir::new();
    let copy = d.arg("copy.log");
    for args in [
        &["offsets", root][..],
        &["metadata", root],
        &["groups", root],
        &["dump", &txn],
        &["verify", &txn],
        &["log", "read", &txn],
        &["log", "info", &txn],
        &["log", "offsets", &txn, "--latest"],
        &["explain", &txn],
        &["convert", &txn, &copy],
    ] {
        let mut args = args.to_vec();
        args.extend(["-X", "garbage", "-X", "s3.region=eu-west-1"]);
        let r = run(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.matches(said).count(), 1, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("s3.region"), "{}", r.stderr);
    }
    let r = run(&["offsets", root, "-X", "s3.region=eu-west-1"]);
    assert!(!r.stderr.contains("client properties"), "{}", r.stderr);
}

/// One partition directory given by its name is named as given ("Metadata of ." and a
/// warning about "." before); its empty replica lists print "-" (they printed nothing,
/// `isrs: ,`) and one topic is "1 topic"; the parent of a root (a broker's home, whose
/// `broker.log` made it look like a partition directory) names the root below it.
#[test]
fn partition_directories_and_homes_are_named_as_given() {
    let d = Dir::new();
    d.partition("lonely-0", 5);
    let r = d.run(&["metadata", "lonely-0"], b"");
    let out = r.ok();
    assert!(
        out.starts_with("Metadata of lonely-0 (broker files)\n"),
        "{out}"
    );
    assert!(out.contains("1 topic, 1 offline partition:\n"), "{out}");
    assert!(out.contains("replicas: -, isrs: - OFFLINE"), "{out}");
    assert!(
        r.stderr
            .contains("lonely-0 (a partition directory of .): no __cluster_metadata-0 here"),
        "{}",
        r.stderr
    );
    std::fs::create_dir_all(d.path("home/logs")).unwrap();
    std::fs::rename(d.path("lonely-0"), d.path("home/logs/lonely-0")).unwrap();
    d.write("home/broker.log", b"[2026-12-07] INFO started");
    for cmd in ["offsets", "metadata", "groups"] {
        d.run(&[cmd, "home"], b"").fails(
            2,
            "home: not a broker's log.dirs root, but its subdirectory home/logs is one",
        );
    }
}

/// The help says what the total lag adds up: the positive known lags (it said "the sum of the
/// known lags", where a negative lag, committed past the end, is left out by design).
#[test]
fn groups_help_says_the_total_lag_is_of_the_positive_lags() {
    let help = run(&["groups", "--help"]).ok();
    assert!(
        help.contains("the sum of the positive known lags"),
        "{help}"
    );
    assert!(!help.contains("the sum of the known lags,"), "{help}");
}
