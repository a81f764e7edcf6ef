//! `krec produce` against the test kit's fake cluster: JSON lines land on the partition they
//! name, or where Kafka's Java producer puts their key; `--lines` values; the report; bad input
//! and unknown partitions refused with exit 2 before anything is sent; `krec dump` of the topic
//! reads back what went in.

use crate::util::{finish, krec, start, Run};
use krecords_client::partition_for_key;
use krecords_testkit::FakeCluster;

/// Runs `krec produce ARGS...` with `stdin`.
fn produce(args: &[&str], stdin: &str) -> Run {
    let mut cmd = krec();
    cmd.arg("produce").args(args);
    finish(start(&mut cmd, stdin.as_bytes().to_vec()))
}

#[test]
fn json_lines_land_on_their_partition_or_their_keys_partition() {
    let c = FakeCluster::start(&[("events", 3)]);
    let url = format!("kafka://{}/events", c.addr());
    let mut input = String::new();
    for i in 0..30 {
        input += &format!(
            "{{\"key\":\"user-{i}\",\"value\":\"v{i}\",\"headers\":[{{\"key\":\"h\",\"value\":\"x{i}\"}}],\"timestamp\":{}}}\n",
            1_714_000_000_000i64 + i
        );
    }
    input += "{\"partition\":2,\"key\":\"pinned\",\"value\":\"to-2\"}\n";
    let r = produce(&[&url, "--format", "json", "--compression", "zstd"], &input);
    assert_eq!(r.code, 0, "{}", r.stderr);

    // Where the Java producer's default partitioner would put each record.
    let mut want: Vec<Vec<String>> = vec![Vec::new(); 3];
    for i in 0..30 {
        let p = partition_for_key(format!("user-{i}").as_bytes(), 3).unwrap();
        want[usize::try_from(p).unwrap()].push(format!("v{i}"));
    }
    want[2].push("to-2".to_owned());
    for (p, values) in want.iter().enumerate() {
        let p32 = i32::try_from(p).unwrap();
        assert_eq!(&c.committed_values("events", p32), values, "partition {p}");
    }

    // The report: one line per partition with the offsets the records got.
    let lines = r.json_lines();
    let total: u64 = lines.iter().map(|l| l["records"].as_u64().unwrap()).sum();
    assert_eq!(total, 31);
    for l in &lines {
        let p = usize::try_from(l["partition"].as_u64().unwrap()).unwrap();
        assert_eq!(l["topic"], "events");
        assert_eq!(l["records"].as_u64().unwrap(), want[p].len() as u64);
        assert_eq!(l["first_offset"], 0);
        assert_eq!(l["last_offset"].as_u64().unwrap(), want[p].len() as u64 - 1);
    }

    // krec dump of the live topic reads back keys, values, headers and timestamps.
    let dumped = crate::util::run(&["dump", "--deep", &format!("{url}/0"), "--format", "json"]);
    assert_eq!(dumped.code, 0, "{}", dumped.stderr);
    let records: Vec<serde_json::Value> = dumped
        .json_lines()
        .into_iter()
        .filter(|e| e["control"] == false)
        .flat_map(|e| e["records"].as_array().cloned().unwrap_or_default())
        .collect();
    assert_eq!(records.len(), want[0].len());
    for rec in &records {
        let value = rec["value"].as_str().unwrap();
        let i: i64 = value[1..].parse().unwrap();
        assert_eq!(rec["key"], format!("user-{i}"));
        assert_eq!(rec["timestamp"], 1_714_000_000_000i64 + i);
        assert_eq!(rec["headers"][0]["key"], "h");
        assert_eq!(rec["headers"][0]["value"], format!("x{i}"));
    }
}

#[test]
fn lines_go_to_the_url_partition_and_the_text_report_counts_them() {
    let c = FakeCluster::start(&[("logs", 2)]);
    let url = format!("kafka://{}/logs/1", c.addr());
    let r = produce(
        &[&url, "--lines"],
        "first line\nsecond {not json}\n\nthird\n",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        c.committed_values("logs", 1),
        ["first line", "second {not json}", "", "third"]
    );
    assert!(c.committed_values("logs", 0).is_empty());
    assert_eq!(
        r.out(),
        "logs/1: 4 records, offsets 0-3\nproduced 4 records to logs idempotently, acks=all\n"
    );
    // Idempotent: the batch carries a producer id and sequence 0, and no transactional flag.
    let batches = c.committed_batches("logs", 1);
    let b = krecords_codec::read::Entries::new(&batches[0])
        .next()
        .unwrap()
        .unwrap();
    assert!(b.producer_id().is_some_and(|p| p >= 0));
    assert!(!b.is_transactional());
}

#[test]
fn a_transactional_id_sends_everything_in_one_transaction() {
    let c = FakeCluster::start(&[("logs", 2)]);
    let url = format!("kafka://{}/logs/0", c.addr());
    let r = produce(
        &[&url, "--lines", "--transactional-id", "loader-1"],
        "a\nb\n",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.out(),
        "logs/0: 2 records, offsets 0-1\nproduced 2 records to logs in one committed transaction of loader-1\n"
    );
    assert_eq!(c.committed_values("logs", 0), ["a", "b"]);
    // One record more: its one offset.
    let r = produce(&[&url, "--lines"], "c\n");
    assert_eq!(
        r.ok(),
        "logs/0: 1 record, offset 2\nproduced 1 record to logs idempotently, acks=all\n"
    );
    let batches = c.committed_batches("logs", 0);
    let b = krecords_codec::read::Entries::new(&batches[0])
        .next()
        .unwrap()
        .unwrap();
    assert!(b.is_transactional());
}

#[test]
fn bad_input_and_unknown_partitions_send_nothing() {
    let c = FakeCluster::start(&[("events", 2)]);
    let url = format!("kafka://{}/events", c.addr());
    // A bad third line: nothing is sent, the line is named.
    let r = produce(
        &[&url],
        "{\"value\":\"a\"}\n{\"value\":\"b\"}\n{\"value\":\n",
    );
    r.fails(2, "line 3");
    // A partition the topic does not have: the input line named (from 1, blank lines
    // counted), as a line that does not parse is.
    let r = produce(
        &[&url],
        "{\"value\":\"a\"}\n\n{\"partition\":7,\"value\":\"b\"}\n",
    );
    r.fails(
        2,
        "input line 3: partition 7 does not exist (the topic has 2)",
    );
    // The URL's partition: the topic's error, no record's; with --batches too.
    let to_9 = format!("{url}/9");
    let said = "topic events: partition 9 does not exist (the topic has 2)";
    let r = produce(&[&to_9, "--lines"], "a\n");
    r.fails(2, said);
    assert!(!r.stderr.contains("record"), "{}", r.stderr);
    let dir = tempfile::tempdir().unwrap();
    let seg = dir.path().join("00000000000000000000.log");
    std::fs::write(&seg, krecords_testkit::batches::batch(0, None, &["x"])).unwrap();
    let r = produce(&[&to_9, "--batches", seg.to_str().unwrap()], "");
    r.fails(2, said);
    assert!(!r.stderr.contains("record"), "{}", r.stderr);
    // An unknown topic.
    let r = produce(
        &[&format!("kafka://{}/nope", c.addr())],
        "{\"value\":\"a\"}\n",
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    // Not a kafka:// target.
    produce(&["some/dir"], "{\"value\":\"a\"}\n").fails(2, "kafka://");
    for p in 0..2 {
        assert!(c.committed_batches("events", p).is_empty(), "partition {p}");
    }
}

#[test]
fn batch_files_are_sent_as_they_are_to_the_named_partition() {
    use krecords_codec::read::Entries;
    let c = FakeCluster::start(&[("copy", 2)]);
    let dir = tempfile::tempdir().unwrap();
    // Two lz4 batches, then a control batch (skipped), in a segment file.
    let mut seg = Vec::new();
    let mut want = Vec::new();
    for (base, n) in [(0i64, 3), (3, 2)] {
        let mut b = krecords_codec::write::V2Builder::new(base)
            .compression(krecords_codec::Compression::Lz4, None);
        for i in 0..n {
            let v = format!("v{}", base + i);
            b.append(&krecords_codec::write::NewRecord::new(
                1_714_000_000_000 + base + i,
                None,
                Some(v.as_bytes()),
            ))
            .unwrap();
            want.push(v);
        }
        seg.extend(b.finish().unwrap());
    }
    let file = dir.path().join("00000000000000000000.log");
    std::fs::write(&file, &seg).unwrap();
    let url = format!("kafka://{}/copy/1", c.addr());
    let r = produce(&[&url, "--batches", file.to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.out(),
        "copy/1: 5 records, offsets 0-4\nproduced 5 records to copy idempotently, acks=all\n"
    );
    assert_eq!(c.committed_values("copy", 1), want);
    // The records bytes are the file's: same codec, same length.
    let sent = c.committed_batches("copy", 1);
    let first = Entries::new(&sent[0]).next().unwrap().unwrap();
    assert_eq!(
        first.compression().unwrap(),
        krecords_codec::Compression::Lz4
    );
    let original = Entries::new(&seg).next().unwrap().unwrap();
    assert_eq!(first.as_bytes().len(), original.as_bytes().len());
    assert_eq!(first.as_bytes()[61..], original.as_bytes()[61..]);

    // No partition named; a v0 message set; a corrupt entry.
    produce(
        &[
            &format!("kafka://{}/copy", c.addr()),
            "--batches",
            file.to_str().unwrap(),
        ],
        "",
    )
    .fails(2, "name it");
    let v0 = dir.path().join("v0.log");
    let mut b = krecords_codec::write::LegacyBuilder::new(0, 0).unwrap();
    b.append(&krecords_codec::write::NewRecord::new(
        0,
        None,
        Some(b"old"),
    ))
    .unwrap();
    std::fs::write(&v0, b.finish().unwrap()).unwrap();
    produce(&[&url, "--batches", v0.to_str().unwrap()], "").fails(1, "krec convert --magic 2");
    let bad = dir.path().join("bad.log");
    let mut flipped = seg.clone();
    flipped[70] ^= 0xff;
    std::fs::write(&bad, &flipped).unwrap();
    produce(&[&url, "--batches", bad.to_str().unwrap()], "").fails(1, "crc");
    assert_eq!(c.committed_values("copy", 1).len(), 5);
}

/// A newcomer trial sent a partition of committed, aborted and committed records with
/// `--batches`, and the aborted records came back committed (the producer commits what it
/// sends). Only what a read_committed consumer reads is sent; an open transaction ends what is
/// sent, said on stderr.
#[test]
fn batches_of_aborted_and_open_transactions_are_not_sent() {
    use krecords_codec::write::{NewRecord, V2Builder};
    use krecords_log::{AppendOrigin, Log, LogConfig};
    let c = FakeCluster::start(&[("copy", 1)]);
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("t-0");
    let mut log = Log::create(&part, LogConfig::default()).unwrap();
    let now = 1_714_000_000_000;
    let append = |log: &mut Log, producer: Option<i64>, value: &str| {
        let mut b = V2Builder::new(0);
        if let Some(p) = producer {
            b = b.producer(p, 0, 0).transactional(true);
        }
        b.append(&NewRecord::new(now, None, Some(value.as_bytes())))
            .unwrap();
        log.append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
    };
    append(&mut log, None, "c0");
    append(&mut log, Some(7), "aborted");
    log.append_end_txn(7, 0, 0, false, now).unwrap();
    append(&mut log, Some(8), "c1");
    log.append_end_txn(8, 0, 0, true, now).unwrap();
    append(&mut log, Some(9), "open");
    append(&mut log, None, "after");
    log.close().unwrap();
    let url = format!("kafka://{}/copy/0", c.addr());
    let r = produce(&[&url, "--batches", part.to_str().unwrap()], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(c.committed_values("copy", 0), ["c0", "c1"]);
    assert!(
        r.stderr.contains(&format!(
            "krec: warning: {}: stopped at last stable offset 5; high watermark 7: an open \
             transaction from producer 9 since offset 5; its batches from offset 5 on are not sent",
            part.display()
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn a_java_producer_properties_file_works_with_warnings_for_what_krec_does_its_own_way() {
    let c = FakeCluster::start(&[("events", 1)]);
    let url = format!("kafka://{}/events/0", c.addr());
    let dir = tempfile::tempdir().unwrap();
    let props = dir.path().join("producer.properties");
    std::fs::write(
        &props,
        "client.id=ops\nacks=all\nenable.idempotence=true\nlinger.ms=5\nbatch.size=16384\n\
         compression.type=gzip\nsasl.jaas.config=org.apache.kafka.common.security.plain.\
         PlainLoginModule required \\\n    username=\"u\" \\\n    password=\"hunter2\";\n",
    )
    .unwrap();
    let r = produce(&[&url, "--lines", "-F", props.to_str().unwrap()], "a\nb\n");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(c.committed_values("events", 0), ["a", "b"]);
    for want in [
        "krec: warning: batch.size does not apply to krec and is ignored (use --records-per-batch)",
        "krec: warning: compression.type does not apply to krec and is ignored (use --compression)",
        "krec: warning: linger.ms does not apply",
    ] {
        assert!(r.stderr.contains(want), "{want}: {}", r.stderr);
    }
    // acks=all and enable.idempotence=true are what krec does: no warning.
    assert!(
        !r.stderr.contains("acks") && !r.stderr.contains("idempotence"),
        "{}",
        r.stderr
    );
    let r = produce(&[&url, "--lines", "-X", "acks=1"], "c\n");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "acks does not apply to krec and is ignored (krec always produces with acks=all)"
        ),
        "{}",
        r.stderr
    );
    // A misspelt name is still an error; a JAAS line krec cannot use names the way out and
    // never shows the password.
    produce(&[&url, "--lines", "-X", "compresion.type=gzip"], "d\n")
        .fails(2, "did you mean \"compression.type\"?");
    let r = produce(
        &[
            &url,
            "--lines",
            "-X",
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
             password=\"hunter2\";",
        ],
        "d\n",
    );
    r.fails(2, "use sasl.username and sasl.password");
    assert!(!r.stderr.contains("hunter2"), "{}", r.stderr);
}
