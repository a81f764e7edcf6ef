//! The shipper against the test kit's fake cluster: whole jobs, an interrupted job resumed,
//! the committed positions, lanes over several partitions, the progress events, a stream.

use krecords_ship::{ship, Error, Event, Positions, Report, ShipOptions, Source, Sources, Target};
use krecords_testkit::batches::{batch, marker, numbered};
use krecords_testkit::FakeCluster;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// `count` batches of 3 records, values `{tag}{offset}`.
fn values_batches(tag: &str, count: i64) -> Vec<Vec<u8>> {
    numbered(count, 3, |o| {
        (
            1_714_000_000_000 + o,
            b"k".to_vec(),
            format!("{tag}{o}").into_bytes(),
        )
    })
}

fn expected(tag: &str, count: i64) -> Vec<String> {
    (0..count * 3).map(|o| format!("{tag}{o}")).collect()
}

/// A partition directory `dir/NAME` with one segment of `batches`.
fn partition_dir(dir: &Path, name: &str, batches: &[Vec<u8>]) -> PathBuf {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("00000000000000000000.log"), batches.concat()).unwrap();
    d
}

/// A fake cluster with one `orders` partition; a temporary directory holding `orders-0`, a
/// partition directory of [`values_batches`]`(tag, count)`; those batches; that directory.
fn orders(tag: &str, count: i64) -> (FakeCluster, tempfile::TempDir, Vec<Vec<u8>>, PathBuf) {
    let cluster = FakeCluster::start(&[("orders", 1)]);
    let tmp = tempfile::tempdir().unwrap();
    let batches = values_batches(tag, count);
    let dir = partition_dir(tmp.path(), "orders-0", &batches);
    (cluster, tmp, batches, dir)
}

fn target(cluster: &FakeCluster, topic: &str) -> Target {
    Target::new(cluster.addr(), topic, None)
}

fn sources(paths: &[&Path]) -> Vec<Source> {
    let mut s = Sources::new(None);
    for p in paths {
        s.add_path(p.to_str().unwrap()).unwrap();
    }
    s.finish().unwrap()
}

/// Ships `srcs` to `t`, ignoring the events.
fn ship_quietly(t: &Target, srcs: Vec<Source>, options: &ShipOptions) -> Result<Report, Error> {
    ship(t, srcs, options, |_| ControlFlow::Continue(()))
}

fn run(cluster: &FakeCluster, topic: &str, srcs: Vec<Source>, options: &ShipOptions) -> Report {
    ship_quietly(&target(cluster, topic), srcs, options).unwrap()
}

/// Ships the partition directory `dir` to `orders` with the default options.
fn ship_dir(cluster: &FakeCluster, dir: &Path) -> Report {
    run(cluster, "orders", sources(&[dir]), &ShipOptions::default())
}

/// Ships `dir` again: it ships `records` new records, and `orders` then holds `want`.
fn reship(cluster: &FakeCluster, dir: &Path, records: u64, want: &[String]) {
    let again = ship_dir(cluster, dir);
    assert_eq!(
        again.partitions[&0].records, records,
        "records shipped again"
    );
    assert_eq!(cluster.committed_values("orders", 0), want);
}

/// Ships `dir` to `orders`, calling `at` with the number of each progress event (from 1): what
/// it returns goes back to the shipper.
fn ship_with_rounds(
    cluster: &FakeCluster,
    dir: &Path,
    options: &ShipOptions,
    mut at: impl FnMut(usize) -> ControlFlow<()>,
) -> Report {
    let mut rounds = 0;
    ship(&target(cluster, "orders"), sources(&[dir]), options, |e| {
        if let Event::Progress(_) = e {
            rounds += 1;
            return at(rounds);
        }
        ControlFlow::Continue(())
    })
    .unwrap()
}

#[test]
fn a_local_log_is_shipped_whole_with_its_positions_committed() {
    let (cluster, _tmp, _, dir) = orders("v", 4);
    let report = ship_dir(&cluster, &dir);
    assert_eq!(cluster.committed_values("orders", 0), expected("v", 4));
    let p = &report.partitions[&0];
    assert_eq!((p.records, p.batches_as_is, p.transactions), (12, 4, 1));
    assert_eq!(
        (p.target_first_offset, p.target_last_offset),
        (Some(0), Some(11))
    );
    assert_eq!(report.job.group, "krec-ship-orders");
    // The position of the source, in the group's committed metadata: the resume format.
    let (offset, meta) = cluster
        .committed_offset("krec-ship-orders", "orders", 0)
        .unwrap();
    // The committed offset is the target's end (12 records and the commit marker), so the
    // job's group shows no lag; the source positions are in the metadata.
    assert_eq!(offset, 13);
    let positions = Positions::from_metadata(meta.as_deref(), "orders/0").unwrap();
    let place = std::fs::canonicalize(&dir).unwrap().display().to_string();
    // Keyed by the log's first entry (no partition.metadata here), with the place as an alias.
    let (id, next) = positions.positions.iter().next().unwrap();
    assert!(id.starts_with("log:0@"), "{id}");
    assert_eq!((positions.positions.len(), *next), (1, 12));
    assert_eq!(positions.aliases[&place], *id);
    // Run again: nothing new, nothing twice.
    reship(&cluster, &dir, 0, &expected("v", 4));
}

/// Writes `batches` as segment files of `dir`, a new segment at each index in `cuts`.
fn segments(dir: &Path, batches: &[Vec<u8>], cuts: &[usize]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut start = 0;
    for end in cuts.iter().copied().chain([batches.len()]) {
        let base = krecords_codec::read::Entries::new(&batches[start])
            .next()
            .unwrap()
            .unwrap()
            .first_offset()
            .unwrap();
        std::fs::write(
            dir.join(format!("{base:020}.log")),
            batches[start..end].concat(),
        )
        .unwrap();
        start = end;
    }
}

#[test]
fn a_copied_directory_resumes_and_ships_nothing_twice() {
    let (cluster, tmp, batches, dir) = orders("c", 4);
    ship_dir(&cluster, &dir);
    // The same partition copied elsewhere, with two more batches appended to the copy.
    let copy = tmp.path().join("elsewhere").join("orders-0");
    let more = values_batches("c", 6);
    segments(&copy, &more, &[]);
    // Only the two new batches are shipped.
    reship(&cluster, &copy, 6, &expected("c", 6));
    drop(batches);
}

#[test]
fn a_different_log_at_the_same_place_is_a_different_source() {
    let (cluster, _tmp, _, dir) = orders("a", 2);
    ship_dir(&cluster, &dir);
    // Replaced by another log (other records from offset 0): shipped whole, not skipped.
    std::fs::remove_dir_all(&dir).unwrap();
    segments(&dir, &values_batches("b", 3), &[]);
    let mut want = expected("a", 2);
    want.extend(expected("b", 3));
    reship(&cluster, &dir, 9, &want);
}

#[test]
fn retention_of_the_first_segment_does_not_ship_anything_twice() {
    let cluster = FakeCluster::start(&[("orders", 1)]);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("orders-0");
    let batches = values_batches("r", 6);
    segments(&dir, &batches, &[3]);
    ship_dir(&cluster, &dir);
    // Retention removes the first segment; the log grows by two batches.
    std::fs::remove_dir_all(&dir).unwrap();
    let grown = values_batches("r", 8);
    segments(&dir, &grown[3..], &[3]);
    reship(&cluster, &dir, 6, &expected("r", 8));
}

#[test]
fn a_kafka_partition_directory_and_its_copy_share_their_position_by_topic_id() {
    let (cluster, tmp, batches, dir) = orders("t", 4);
    std::fs::write(
        dir.join("partition.metadata"),
        "version: 0\ntopic_id: bF2mVp1_Rv6x9Nq3Z0a1Yw\n",
    )
    .unwrap();
    let report = ship_dir(&cluster, &dir);
    assert_eq!(report.partitions[&0].records, 12);
    let (_, meta) = cluster
        .committed_offset("krec-ship-orders", "orders", 0)
        .unwrap();
    let positions = Positions::from_metadata(meta.as_deref(), "orders/0").unwrap();
    assert_eq!(positions.positions["topic:bF2mVp1_Rv6x9Nq3Z0a1Yw/0"], 12);
    // A replica's copy on another disk: the same partition, nothing new.
    let copy = tmp.path().join("disk2").join("orders-0");
    segments(&copy, &batches, &[2]);
    std::fs::copy(
        dir.join("partition.metadata"),
        copy.join("partition.metadata"),
    )
    .unwrap();
    reship(&cluster, &copy, 0, &expected("t", 4));
}

#[test]
fn a_graceful_stop_commits_what_is_in_flight_and_the_rerun_ships_the_rest_once() {
    let (cluster, _tmp, batches, dir) = orders("g", 6);
    let stop = Arc::new(AtomicBool::new(false));
    let options = ShipOptions {
        job: Some("graceful".into()),
        txn_bytes: 2 * batches[0].len() as u64,
        stop: Some(stop.clone()),
        ..ShipOptions::default()
    };
    // A SIGTERM handler would set the flag: here, during the second transaction.
    let first = ship_with_rounds(&cluster, &dir, &options, |round| {
        if round == 3 {
            stop.store(true, Ordering::Relaxed);
        }
        ControlFlow::Continue(())
    });
    assert!(first.stopped);
    let shipped = first.partitions[&0].records;
    assert!(shipped > 0 && shipped < 18, "{shipped} records");
    // What was sent is committed: nothing is left open for the next run to abort.
    assert_eq!(
        cluster.committed_values("orders", 0),
        &expected("g", 6)[..usize::try_from(shipped).unwrap()]
    );
    let (offset, _) = cluster
        .committed_offset("krec-ship-graceful", "orders", 0)
        .unwrap();
    let last = first.partitions[&0].target_last_offset.unwrap();
    assert_eq!(
        offset,
        last + 2,
        "the target's end: the records and the marker"
    );
    let rest = ShipOptions {
        stop: None,
        ..options
    };
    let second = run(&cluster, "orders", sources(&[&dir]), &rest);
    assert!(!second.stopped);
    assert_eq!(second.partitions[&0].records, 18 - shipped);
    assert_eq!(cluster.committed_values("orders", 0), expected("g", 6));
    assert_eq!(cluster.aborted_batches(), 0);
}

#[test]
fn an_interrupted_job_resumes_where_its_last_commit_ended() {
    let (cluster, _tmp, batches, dir) = orders("r", 6);
    // A transaction per batch; the job stops in its third transaction, after its batches
    // were sent and before the commit (as a crash would).
    let options = ShipOptions {
        job: Some("resume".into()),
        txn_bytes: batches[0].len() as u64,
        ..ShipOptions::default()
    };
    let first = ship_with_rounds(&cluster, &dir, &options, |round| {
        if round == 3 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    assert!(first.stopped);
    assert_eq!(first.partitions[&0].transactions, 2);
    assert_eq!(
        cluster.committed_values("orders", 0),
        &expected("r", 6)[..6]
    );
    // The same job continues: its open transaction is aborted, the rest shipped once.
    let second = run(&cluster, "orders", sources(&[&dir]), &options);
    assert!(!second.stopped);
    assert_eq!(second.partitions[&0].records, 12);
    assert_eq!(second.producer_epoch, first.producer_epoch + 1);
    assert_eq!(cluster.committed_values("orders", 0), expected("r", 6));
    assert_eq!(
        cluster.aborted_batches(),
        1,
        "the interrupted transaction's batch"
    );
}

#[test]
fn lanes_ship_several_partitions_each_in_order() {
    let cluster = FakeCluster::start(&[("orders", 3)]);
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..3)
        .map(|p| {
            partition_dir(
                tmp.path(),
                &format!("orders-{p}"),
                &values_batches(&format!("p{p}-"), 3),
            )
        })
        .collect();
    // Two lanes at once; a small transaction so that lanes share several of them.
    let options = ShipOptions {
        parallel: 2,
        txn_bytes: 200,
        ..ShipOptions::default()
    };
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    let report = run(&cluster, "orders", sources(&refs), &options);
    for p in 0..3 {
        assert_eq!(
            cluster.committed_values("orders", p),
            expected(&format!("p{p}-"), 3),
            "partition {p}"
        );
        assert_eq!(report.partitions[&p].records, 9);
    }
    // Two sources in one lane (the target names the partition): one after the other.
    let cluster = FakeCluster::start(&[("all", 1)]);
    let mut s = Sources::new(Some(0));
    s.add_path(dirs[1].to_str().unwrap()).unwrap();
    s.add_path(dirs[2].to_str().unwrap()).unwrap();
    let t = Target::new(cluster.addr(), "all", Some(0));
    ship_quietly(&t, s.finish().unwrap(), &options).unwrap();
    let mut want = expected("p1-", 3);
    want.extend(expected("p2-", 3));
    assert_eq!(cluster.committed_values("all", 0), want);
}

#[test]
fn progress_events_count_up_to_the_totals() {
    let (cluster, _tmp, batches, dir) = orders("x", 5);
    let options = ShipOptions {
        txn_bytes: batches[0].len() as u64 * 2,
        ..ShipOptions::default()
    };
    let mut seen = Vec::new();
    ship(
        &target(&cluster, "orders"),
        sources(&[&dir]),
        &options,
        |e| {
            if let Event::Progress(p) = e {
                seen.push((p.records, p.bytes, p.partitions));
            }
            ControlFlow::Continue(())
        },
    )
    .unwrap();
    assert!(seen.len() >= 3, "{seen:?}");
    assert!(seen
        .windows(2)
        .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    assert_eq!(seen.last().unwrap().0, 15);
    assert!(seen.iter().all(|s| s.2 == 1));
}

#[test]
fn a_stream_is_shipped_read_committed_and_resumed_by_offset() {
    let cluster = FakeCluster::start(&[("events", 1)]);
    // Committed data, an aborted transaction, a committed one, interleaved.
    let input = [
        batch(0, None, &["a", "b"]),
        batch(2, Some(7), &["aborted"]),
        batch(3, Some(8), &["t1", "t2"]),
        marker(5, 7, false),
        batch(6, None, &["c"]),
        marker(7, 8, true),
        batch(8, None, &["d"]),
    ]
    .concat();
    let t = Target::new(cluster.addr(), "events", Some(0));
    let once = |bytes: Vec<u8>| {
        let src = vec![Source::stream("-", 0, std::io::Cursor::new(bytes))];
        ship_quietly(&t, src, &ShipOptions::default()).unwrap()
    };
    let r = once(input.clone());
    assert_eq!(
        cluster.committed_values("events", 0),
        ["a", "b", "t1", "t2", "c", "d"]
    );
    assert_eq!(r.partitions[&0].batches_skipped_aborted, 1);
    assert_eq!(r.partitions[&0].batches_skipped_control, 2);
    // The same stream again: everything before the committed position is skipped.
    let r = once(input);
    assert_eq!(r.partitions[&0].records, 0);
    assert_eq!(cluster.committed_values("events", 0).len(), 6);
}

#[test]
fn a_stream_ending_in_an_open_transaction_stops_before_it() {
    let cluster = FakeCluster::start(&[("events", 1)]);
    let input = [
        batch(0, None, &["a"]),
        batch(1, Some(9), &["open"]),
        batch(2, None, &["after"]),
    ]
    .concat();
    let t = Target::new(cluster.addr(), "events", Some(0));
    let src = vec![Source::stream("-", 0, std::io::Cursor::new(input))];
    let mut stalled = None;
    ship(&t, src, &ShipOptions::default(), |e| {
        if let Event::Stalled {
            last_stable_offset,
            high_watermark,
            ..
        } = e
        {
            stalled = Some((last_stable_offset, high_watermark));
        }
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(cluster.committed_values("events", 0), ["a"]);
    assert_eq!(stalled, Some((1, 3)));
}

#[test]
fn segment_files_and_a_badly_named_one() {
    let (cluster, tmp, _, d) = orders("s", 2);
    let seg = d.join("00000000000000000000.log");
    let t = Target::new(cluster.addr(), "orders", Some(0));
    let mut s = Sources::new(Some(0));
    s.add_path(seg.to_str().unwrap()).unwrap();
    let srcs = s.finish().unwrap();
    let id = srcs[0].id.clone();
    assert!(id.ends_with("orders-0/{00000000000000000000.log}"), "{id}");
    ship_quietly(&t, srcs, &ShipOptions::default()).unwrap();
    assert_eq!(cluster.committed_values("orders", 0), expected("s", 2));
    // A .log file not named by its offset: the error names the file, no other path.
    let bad = tmp.path().join("notes-0");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("some.log"), values_batches("z", 1).concat()).unwrap();
    let mut s = Sources::new(Some(0));
    s.add_path(bad.join("some.log").to_str().unwrap()).unwrap();
    let err = ship_quietly(&t, s.finish().unwrap(), &ShipOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Usage(_)), "{text}");
    assert!(text.contains("some.log: not a segment file"), "{text}");
    let tmpdir = std::env::temp_dir().join("krec-ship");
    assert!(!text.contains(tmpdir.to_str().unwrap()), "{text}");
}

#[test]
fn recompression_with_a_level_rebatches() {
    let (cluster, _tmp, _, dir) = orders("c", 2);
    let options = ShipOptions {
        plan: krecords_ship::PlanOptions {
            compression: Some(krecords_codec::Compression::Zstd),
            level: Some(3),
        },
        ..ShipOptions::default()
    };
    let r = run(&cluster, "orders", sources(&[&dir]), &options);
    assert_eq!(r.partitions[&0].batches_rebatched, 2);
    assert_eq!(cluster.committed_values("orders", 0), expected("c", 2));
    for b in cluster.committed_batches("orders", 0) {
        let e = krecords_codec::read::Entries::new(&b)
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(e.compression().unwrap(), krecords_codec::Compression::Zstd);
    }
}

/// `txn_bytes` 0 (it hung before): one fetch per transaction, everything shipped.
#[test]
fn a_zero_transaction_size_ships_a_fetch_per_transaction() {
    let (cluster, _tmp, _, dir) = orders("z", 2);
    let options = ShipOptions {
        txn_bytes: 0,
        ..ShipOptions::default()
    };
    let r = run(&cluster, "orders", sources(&[&dir]), &options);
    assert_eq!(cluster.committed_values("orders", 0), expected("z", 2));
    assert!(r.partitions[&0].transactions >= 1);
}
