//! `verify`: the remote tier reconciled with `__remote_log_metadata` (records encoded here with
//! a small test-only encoder of Kafka's schemas, written to a real partition directory by
//! krecords-log) and with the local log. Each problem kind is reported once, with its object
//! and offset; a clean tier reports every segment intact.

use std::collections::BTreeMap;
use std::path::Path;

use krecords_codec::write::{NewRecord, V2Builder};
use krecords_log::{AppendOrigin, Log, LogConfig};
use krecords_remote::key::{KafkaUuid, ObjectKey, Suffix};
use krecords_remote::manifest::RemoteLogSegmentMetadata;
use krecords_remote::metadata::{MetadataCache, MetadataLog};
use krecords_remote::storage::FileSystemStorage;
use krecords_remote::verify::{verify, Event, Finding, Options, Summary};
use krecords_remote::write::{upload, UploadOptions};
use krecords_remote::{Limits, RemoteTier};
use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::util::*;

/// The metadata records, encoded with the topics crate's encoder.
mod enc {
    use krecords_topics::remote_log_metadata::{
        encode, RemoteLogMetadataRecord, RemoteLogSegmentId, RemoteLogSegmentMetadata,
        RemoteLogSegmentMetadataUpdate, RemoteLogSegmentState, SegmentFacts, TopicIdPartition,
    };

    fn segment_id(id: [u8; 16]) -> RemoteLogSegmentId {
        let p = super::partition();
        RemoteLogSegmentId {
            partition: TopicIdPartition {
                topic_id: p.topic_id.0,
                topic: p.topic,
                partition: p.partition,
            },
            id,
        }
    }
    /// RemoteLogSegmentMetadataRecord in COPY_SEGMENT_STARTED.
    pub fn segment(
        id: [u8; 16],
        start: i64,
        end: i64,
        epochs: &[(i32, i64)],
        size: i32,
    ) -> Vec<u8> {
        encode(&RemoteLogMetadataRecord::Segment(
            RemoteLogSegmentMetadata {
                segment_id: segment_id(id),
                facts: SegmentFacts {
                    start_offset: start,
                    end_offset: end,
                    broker_id: 1,
                    max_timestamp_ms: super::NOW,
                    event_timestamp_ms: super::NOW,
                    segment_leader_epochs: epochs.iter().copied().collect(),
                    segment_size_in_bytes: size,
                    custom_metadata: None,
                    state: RemoteLogSegmentState::CopySegmentStarted,
                    txn_index_empty: false,
                },
            },
        ))
    }
    /// RemoteLogSegmentMetadataUpdateRecord.
    pub fn update(id: [u8; 16], state: RemoteLogSegmentState) -> Vec<u8> {
        encode(&RemoteLogMetadataRecord::Update(
            RemoteLogSegmentMetadataUpdate {
                segment_id: segment_id(id),
                custom_metadata: None,
                state,
                event_timestamp_ms: super::NOW,
                broker_id: 1,
            },
        ))
    }
}

use krecords_topics::remote_log_metadata::RemoteLogSegmentState::{
    CopySegmentFinished, DeleteSegmentFinished, DeleteSegmentStarted,
};

/// One uploaded segment: which local segment, its id, its leader epochs.
#[derive(Clone)]
struct Seg {
    local: LocalSegment,
    id: [u8; 16],
    epochs: Vec<(i32, i64)>,
}

impl Seg {
    fn start(&self) -> i64 {
        self.local.base_offset
    }
    fn end(&self) -> i64 {
        last_offset(&self.local.log)
    }
    fn key(&self, suffix: Suffix) -> String {
        ObjectKey {
            prefix: PREFIX.into(),
            partition: partition(),
            start_offset: self.start(),
            segment_id: KafkaUuid(self.id),
            suffix,
        }
        .to_string()
    }
    /// Its COPY_SEGMENT_STARTED record.
    fn started(&self) -> Vec<u8> {
        enc::segment(
            self.id,
            self.start(),
            self.end(),
            &self.epochs,
            self.local.log.len() as i32,
        )
    }
}

fn segs() -> Vec<Seg> {
    local_segments()
        .iter()
        .enumerate()
        .map(|(i, l)| Seg {
            local: l.clone(),
            id: [i as u8 + 1; 16],
            epochs: vec![(0, l.base_offset)],
        })
        .collect()
}

/// A broker data directory (metadata topic, local partition) and a bucket.
struct World {
    root: tempfile::TempDir,
    bucket: tempfile::TempDir,
    compression: bool,
    encryption: bool,
}

impl World {
    fn new(compression: bool, encryption: bool) -> World {
        World {
            root: tempfile::tempdir().unwrap(),
            bucket: tempfile::tempdir().unwrap(),
            compression,
            encryption,
        }
    }
    fn storage(&self) -> FileSystemStorage {
        FileSystemStorage::new(self.bucket.path())
    }
    fn upload(&self, s: &Seg) {
        let mut rng = StdRng::seed_from_u64(7);
        let options = UploadOptions {
            chunk_size: CHUNK,
            compression: self.compression,
            encryption: self
                .encryption
                .then(|| ("k1".to_string(), keys().public_key("k1").unwrap())),
        };
        let p = partition();
        let metadata = RemoteLogSegmentMetadata {
            topic_id: p.topic_id,
            topic: p.topic.clone(),
            partition: p.partition,
            segment_id: KafkaUuid(s.id),
            start_offset: s.start(),
            end_offset: s.end(),
            max_timestamp_ms: NOW,
            broker_id: 1,
            event_timestamp_ms: NOW,
            segment_leader_epochs: s.epochs.iter().copied().collect::<BTreeMap<_, _>>(),
        };
        let key = ObjectKey::parse(PREFIX, &s.key(Suffix::Manifest)).unwrap();
        upload(&s.local.files(), &options, Some(metadata), &mut rng)
            .unwrap()
            .put(&self.storage(), &key)
            .unwrap();
    }
    /// Writes the metadata topic's partition 0 with these values, one record per batch.
    fn metadata(&self, values: &[Vec<u8>]) {
        let dir = self.root.path().join("__remote_log_metadata-0");
        let mut log = Log::create(&dir, LogConfig::default()).unwrap();
        for v in values {
            let mut b = V2Builder::new(0);
            b.append(&NewRecord::new(NOW, None, Some(v))).unwrap();
            log.append(&b.finish().unwrap(), AppendOrigin::Client)
                .unwrap();
        }
        log.close().unwrap();
    }
    /// The local partition: one segment starting at `start`, and its leader epoch checkpoint.
    fn local(&self, start: i64, checkpoint: &str) {
        let dir = self
            .root
            .path()
            .join(format!("{}-{}", partition().topic, partition().partition));
        std::fs::create_dir_all(&dir).unwrap();
        let mut b = V2Builder::new(start);
        b.append(&NewRecord::new(NOW, None, Some(b"local")))
            .unwrap();
        std::fs::write(dir.join(format!("{start:020}.log")), b.finish().unwrap()).unwrap();
        std::fs::write(dir.join("leader-epoch-checkpoint"), checkpoint).unwrap();
    }
    fn path(&self, key: &str) -> std::path::PathBuf {
        self.storage().path(key).unwrap()
    }
    /// Verifies with one thread and with several: the same events, in the same order, and the
    /// same summary (every test below checks this); returns the findings and the summary.
    fn run(&self) -> (Vec<Finding>, Summary) {
        let (events, summary) = self.run_with(1);
        for threads in [2, 5] {
            let (again, s) = self.run_with(threads);
            assert_eq!(again, events, "{threads} threads");
            assert_eq!(s, summary, "{threads} threads");
        }
        let mut findings = Vec::new();
        let mut segments = Vec::new();
        for e in events {
            match e {
                Event::Finding(f) => findings.push(f),
                Event::Segment(s) => segments.push(s),
            }
        }
        assert_eq!(segments.len() as u64, summary.segments);
        assert_eq!(
            segments.iter().filter(|s| s.problems == 0).count() as u64,
            summary.intact
        );
        assert_eq!(findings.len() as u64, summary.problems);
        (findings, summary)
    }
    fn run_with(&self, threads: usize) -> (Vec<Event>, Summary) {
        self.run_limited(threads, Limits::default())
    }
    fn run_limited(&self, threads: usize, limits: Limits) -> (Vec<Event>, Summary) {
        let log = MetadataLog::read(self.root.path(), 1 << 24).unwrap();
        let cache = MetadataCache::from_log(&log);
        let tier = RemoteTier::new(self.storage(), PREFIX)
            .with_keys(keys())
            .with_limits(limits);
        let mut events = Vec::new();
        let options = Options {
            local_root: Some(self.root.path()),
            max_decompressed_bytes: 1 << 24,
            topic_filter: None,
            threads,
        };
        let summary = verify(&tier, &cache, &options, &mut |e| {
            events.push(e);
            Ok(())
        })
        .unwrap();
        (events, summary)
    }
}

/// `segs` uploaded and copied: for each, the COPY_SEGMENT_STARTED record `started` gives
/// (`None`: neither uploaded nor in the metadata) then COPY_SEGMENT_FINISHED; the local log
/// right after, its checkpoint starting `local_epoch` there.
fn world_of(
    w: World,
    segs: &[Seg],
    local_epoch: i32,
    started: impl Fn(usize, &Seg) -> Option<Vec<u8>>,
) -> (World, Vec<Vec<u8>>) {
    let mut values = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        let Some(record) = started(i, s) else {
            continue;
        };
        w.upload(s);
        values.push(record);
        values.push(enc::update(s.id, CopySegmentFinished));
    }
    let end = segs.last().unwrap().end();
    w.local(end + 1, &format!("0\n1\n{local_epoch} {}\n", end + 1));
    (w, values)
}

/// Every segment uploaded and copied (STARTED then CopySegmentFinished), the local log right after.
fn clean_world(compression: bool, encryption: bool) -> (World, Vec<Seg>, Vec<Vec<u8>>) {
    let segs = segs();
    let (w, values) = world_of(World::new(compression, encryption), &segs, 0, |_, s| {
        Some(s.started())
    });
    (w, segs, values)
}

/// (check, object, offset) of each finding.
fn brief(findings: &[Finding]) -> Vec<(String, String, Option<i64>)> {
    findings
        .iter()
        .map(|f| (f.check.to_string(), f.object.clone(), f.offset))
        .collect()
}

fn one(findings: &[Finding], check: &str, object: &str, offset: i64) {
    assert_eq!(
        brief(findings),
        [(check.to_string(), object.to_string(), Some(offset))],
        "{findings:#?}"
    );
    assert_eq!(findings[0].partition, "orders-eu-3");
}

#[test]
fn a_clean_tier_is_intact_in_every_combination() {
    for (compression, encryption) in [(false, false), (true, false), (false, true), (true, true)] {
        let (w, segs, values) = clean_world(compression, encryption);
        w.metadata(&values);
        let (findings, s) = w.run();
        assert!(
            findings.is_empty(),
            "{compression} {encryption}: {findings:#?}"
        );
        assert_eq!(
            (s.partitions, s.segments, s.intact),
            (1, segs.len() as u64, segs.len() as u64)
        );
        let total: usize = segs.iter().map(|s| s.local.log.len()).sum();
        assert_eq!(s.log.bytes, total as u64);
        assert!(s.log.entries > 0 && s.log.records > 0);
    }
}

#[test]
fn segments_are_checked_chunk_by_chunk_not_read_whole() {
    // No read may return more than one chunk: a segment read whole would be refused.
    let limits = Limits {
        max_read_bytes: CHUNK as u64,
        ..Limits::default()
    };
    for (compression, encryption) in [(false, false), (true, true)] {
        let (w, segs, values) = clean_world(compression, encryption);
        assert!(segs.iter().any(|s| s.local.log.len() > 2 * CHUNK as usize));
        w.metadata(&values);
        let (events, s) = w.run_limited(2, limits);
        assert!(
            !events.iter().any(|e| matches!(e, Event::Finding(_))),
            "{events:#?}"
        );
        assert_eq!(s.intact, segs.len() as u64);
    }
}

#[test]
fn a_copy_that_never_finished() {
    let (w, segs, mut values) = clean_world(false, false);
    // A copy of the last segment again under another id, started, never finished.
    let mut again = segs.last().unwrap().clone();
    again.id = [0xaa; 16];
    values.push(again.started());
    w.metadata(&values);
    let (f, s) = w.run();
    one(
        &f,
        "copy-unfinished",
        &again.key(Suffix::Manifest),
        again.start(),
    );
    assert_eq!(s.intact, segs.len() as u64);
}

#[test]
fn a_deletion_that_never_finished_and_one_that_did() {
    let (w, segs, mut values) = clean_world(false, false);
    // The oldest segment's deletion started, never finished; the next one deleted, objects too.
    let (first, second) = (&segs[0], &segs[1]);
    values.push(enc::update(first.id, DeleteSegmentStarted));
    values.push(enc::update(second.id, DeleteSegmentStarted));
    values.push(enc::update(second.id, DeleteSegmentFinished));
    for suffix in Suffix::ALL {
        std::fs::remove_file(w.path(&second.key(suffix))).unwrap();
    }
    w.metadata(&values);
    let (f, s) = w.run();
    one(
        &f,
        "delete-unfinished",
        &first.key(Suffix::Manifest),
        first.start(),
    );
    assert_eq!(s.segments, segs.len() as u64 - 2);
}

#[test]
fn objects_the_bucket_lacks() {
    let (w, segs, values) = clean_world(true, true);
    w.metadata(&values);
    let s1 = &segs[1];
    std::fs::remove_file(w.path(&s1.key(Suffix::Indexes))).unwrap();
    let (f, s) = w.run();
    one(&f, "missing", &s1.key(Suffix::Indexes), s1.start());
    assert_eq!(s.intact, segs.len() as u64 - 1);
}

#[test]
fn orphans() {
    let (w, segs, values) = clean_world(false, false);
    w.metadata(&values);
    let mut orphan = segs[0].clone();
    orphan.id = [0xbb; 16];
    w.upload(&orphan);
    w.storage()
        .put(&format!("{PREFIX}stray.txt"), b"x")
        .unwrap();
    let (f, _) = w.run();
    assert_eq!(
        brief(&f),
        [
            (
                "orphan".into(),
                orphan.key(Suffix::Log),
                Some(orphan.start())
            ),
            ("orphan".into(), format!("{PREFIX}stray.txt"), None),
        ]
    );
}

#[test]
fn a_deleted_segment_whose_objects_remain_is_an_orphan() {
    let (w, segs, mut values) = clean_world(false, false);
    values.push(enc::update(segs[0].id, DeleteSegmentStarted));
    values.push(enc::update(segs[0].id, DeleteSegmentFinished));
    w.metadata(&values);
    let (f, _) = w.run();
    one(&f, "orphan", &segs[0].key(Suffix::Log), segs[0].start());
}

#[test]
fn manifests_truncated_or_not_matching_their_object() {
    let (w, segs, values) = clean_world(true, false);
    w.metadata(&values);
    let (s0, s1) = (&segs[0], &segs[1]);
    let m = w.path(&s0.key(Suffix::Manifest));
    let bytes = std::fs::read(&m).unwrap();
    std::fs::write(&m, &bytes[..bytes.len() / 2]).unwrap();
    let log = w.path(&s1.key(Suffix::Log));
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.push(0);
    std::fs::write(&log, bytes).unwrap();
    let (f, s) = w.run();
    assert_eq!(
        brief(&f),
        [
            (
                "manifest".into(),
                s0.key(Suffix::Manifest),
                Some(s0.start())
            ),
            ("manifest".into(), s1.key(Suffix::Log), Some(s1.start())),
        ],
        "{f:#?}"
    );
    assert_eq!(s.intact, segs.len() as u64 - 2);
}

#[test]
fn a_gap_between_remote_segments() {
    let segs = segs();
    let (w, values) = world_of(World::new(false, false), &segs, 0, |i, s| {
        (i != 1).then(|| s.started())
    });
    w.metadata(&values);
    let (f, _) = w.run();
    one(
        &f,
        "offsets",
        &segs[2].key(Suffix::Manifest),
        segs[0].end() + 1,
    );
    assert!(f[0].message.starts_with("gap"), "{}", f[0].message);
}

#[test]
fn overlapping_remote_segments() {
    let (w, segs, mut values) = clean_world(false, false);
    // The second segment uploaded again under another id: two copies of its offsets.
    let mut again = segs[1].clone();
    again.id = [0x11; 16];
    w.upload(&again);
    values.push(again.started());
    values.push(enc::update(again.id, CopySegmentFinished));
    w.metadata(&values);
    let (f, s) = w.run();
    // Sorted by (start offset, id): the copy with the smaller id comes first.
    let second = if again.id < segs[1].id {
        &segs[1]
    } else {
        &again
    };
    one(&f, "offsets", &second.key(Suffix::Manifest), second.start());
    assert!(f[0].message.starts_with("overlap"), "{}", f[0].message);
    assert_eq!(s.intact, segs.len() as u64 + 1);
}

#[test]
fn a_gap_between_the_tiers() {
    let (w, segs, values) = clean_world(false, false);
    w.metadata(&values);
    let end = segs.last().unwrap().end();
    std::fs::remove_dir_all(w.root.path().join("orders-eu-3")).unwrap();
    w.local(end + 10, &format!("0\n1\n0 {}\n", end + 10));
    let (f, _) = w.run();
    one(
        &f,
        "offsets",
        &segs.last().unwrap().key(Suffix::Manifest),
        end + 1,
    );
}

#[test]
fn leader_epochs_going_backwards() {
    let mut segs = segs();
    for s in segs.iter_mut().skip(1) {
        s.epochs = vec![(3, s.start())];
    }
    segs[2].epochs = vec![(2, segs[2].start())];
    let (w, values) = world_of(World::new(false, false), &segs, 3, |_, s| Some(s.started()));
    w.metadata(&values);
    let (f, _) = w.run();
    one(&f, "epoch", &segs[2].key(Suffix::Manifest), segs[2].start());
}

#[test]
fn leader_epochs_not_in_the_local_checkpoint() {
    let (w, segs, values) = clean_world(false, false);
    w.metadata(&values);
    let end = segs.last().unwrap().end();
    std::fs::remove_dir_all(w.root.path().join("orders-eu-3")).unwrap();
    // The local lineage says epoch 1 began just after the second segment's start: the later
    // segments, all in epoch 0 in the metadata, disagree with it.
    let first = segs[0].start();
    let mid = segs[1].start() + 1;
    w.local(end + 1, &format!("0\n2\n0 {first}\n1 {mid}\n"));
    let (f, _) = w.run();
    let expected: Vec<_> = segs[2..]
        .iter()
        .map(|s| {
            (
                "epoch".to_string(),
                s.key(Suffix::Manifest),
                Some(s.start()),
            )
        })
        .collect();
    assert_eq!(brief(&f), expected, "{f:#?}");
}

#[test]
fn a_flipped_byte_fails_the_batch_crc_at_its_position() {
    let (w, segs, values) = clean_world(false, false);
    w.metadata(&values);
    let s1 = &segs[1];
    let path = w.path(&s1.key(Suffix::Log));
    let mut bytes = std::fs::read(&path).unwrap();
    // Inside the first batch's records (its header is 61 bytes).
    bytes[80] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();
    let (f, s) = w.run();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0].check.to_string(), f[0].object.clone(), f[0].position),
        ("entry".into(), s1.key(Suffix::Log), Some(0))
    );
    assert_eq!(s.intact, segs.len() as u64 - 1);
}

#[test]
fn a_flipped_byte_in_an_encrypted_chunk() {
    let (w, segs, values) = clean_world(true, true);
    w.metadata(&values);
    let s1 = &segs[1];
    let path = w.path(&s1.key(Suffix::Log));
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    let (f, _) = w.run();
    one(&f, "chunk", &s1.key(Suffix::Log), s1.start());
}

#[test]
fn an_offset_index_entry_pointing_elsewhere() {
    let (w, segs, values) = clean_world(false, false);
    w.metadata(&values);
    let s0 = &segs[0];
    assert!(
        s0.local.offset_index.len() >= 8,
        "the segment has an offset index entry"
    );
    let path = w.path(&s0.key(Suffix::Indexes));
    let mut bytes = std::fs::read(&path).unwrap();
    // The offset index is the first slice: entry 0's position field, moved by one byte.
    bytes[7] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    let (f, _) = w.run();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].check.to_string(), "index");
    assert_eq!(
        f[0].object,
        format!("{} (offset index)", s0.key(Suffix::Indexes))
    );
    assert_eq!(f[0].position, Some(0));
}

#[test]
fn metadata_disagreeing_with_the_manifest() {
    let segs = segs();
    let (w, values) = world_of(World::new(false, false), &segs, 0, |i, s| {
        let size = s.local.log.len() as i32 + i32::from(i == 0);
        Some(enc::segment(s.id, s.start(), s.end(), &s.epochs, size))
    });
    w.metadata(&values);
    let (f, _) = w.run();
    one(
        &f,
        "mismatch",
        &segs[0].key(Suffix::Manifest),
        segs[0].start(),
    );
}

#[test]
fn events_kafka_drops() {
    let (w, segs, mut values) = clean_world(false, false);
    // An update of a segment nobody added, and COPY_SEGMENT_FINISHED -> DELETE_SEGMENT_FINISHED.
    values.push(enc::update([0xcc; 16], CopySegmentFinished));
    values.push(enc::update(segs[0].id, DeleteSegmentFinished));
    w.metadata(&values);
    let (f, s) = w.run();
    let file = w
        .root
        .path()
        .join("__remote_log_metadata-0/00000000000000000000.log")
        .display()
        .to_string();
    let n = values.len() as i64;
    assert_eq!(
        brief(&f),
        [
            ("metadata".into(), file.clone(), Some(n - 2)),
            ("metadata".into(), file, Some(n - 1)),
        ],
        "{f:#?}"
    );
    assert!(f[1]
        .message
        .contains("COPY_SEGMENT_FINISHED -> DELETE_SEGMENT_FINISHED"));
    assert_eq!(s.intact, segs.len() as u64);
}

#[test]
fn the_metadata_directory_alone_is_read() {
    let (w, segs, values) = clean_world(false, false);
    w.metadata(&values);
    let dir = w.root.path().join("__remote_log_metadata-0");
    let log = MetadataLog::read(&dir, 1 << 24).unwrap();
    assert_eq!(log.events.len(), values.len());
    let cache = MetadataCache::replay(&log.events);
    assert_eq!(
        cache.partitions.values().next().unwrap().segments.len(),
        segs.len()
    );
    assert!(MetadataLog::read(Path::new("/nonexistent-krec-dir"), 1).is_err());
}
