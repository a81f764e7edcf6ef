//! A real partition log written by krecords-log, its closed segments' files, and an uploader
//! that stores them as the plugin does.

use std::path::Path;
use std::sync::OnceLock;

use krecords_codec::read::Entries;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};
use krecords_log::{AppendOrigin, Log, LogConfig};
use krecords_remote::crypto::KeyRing;
use krecords_remote::key::{KafkaUuid, ObjectKey, RemotePartition, Suffix};
use krecords_remote::manifest::RemoteLogSegmentMetadata;
use krecords_remote::storage::FileSystemStorage;
use krecords_remote::write::{upload, SegmentFiles, UploadOptions};
use rand::rngs::StdRng;
use rand::SeedableRng;

pub const NOW: i64 = 1_714_000_000_000;
pub const PREFIX: &str = "tiered/";
pub const CHUNK: u32 = 4096;

/// The files of one closed local segment.
#[derive(Debug, Clone)]
pub struct LocalSegment {
    pub base_offset: i64,
    pub log: Vec<u8>,
    pub offset_index: Vec<u8>,
    pub time_index: Vec<u8>,
    pub producer_snapshot: Vec<u8>,
    pub leader_epoch: Vec<u8>,
    pub transaction: Option<Vec<u8>>,
}

impl LocalSegment {
    pub fn files(&self) -> SegmentFiles<'_> {
        SegmentFiles {
            log: &self.log,
            offset_index: &self.offset_index,
            time_index: &self.time_index,
            producer_snapshot: &self.producer_snapshot,
            leader_epoch: &self.leader_epoch,
            transaction: self.transaction.as_deref(),
        }
    }
}

fn batch(base_value: usize, codec: Compression, producer: Option<(i64, i32)>, n: usize) -> Vec<u8> {
    let mut b = V2Builder::new(0).compression(codec, None);
    if let Some((id, seq)) = producer {
        b = b.producer(id, 0, seq).transactional(true);
    }
    for i in 0..n {
        // Half compressible text, half pseudo-random bytes, so chunks compress unevenly.
        let v = base_value + i;
        let mut value = format!("order {v} of customer {} ", v % 17).into_bytes();
        let mut x = (v as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        for _ in 0..40 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            value.push(x as u8);
        }
        let key = format!("k{}", v % 5);
        b.append(&NewRecord::new(
            NOW + v as i64,
            Some(key.as_bytes()),
            Some(&value),
        ))
        .unwrap();
    }
    b.finish().unwrap()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The closed segments of a partition log written with every codec, headers-free records, a
/// committed and an aborted transaction; segments of about 24 KiB.
pub fn local_segments() -> &'static [LocalSegment] {
    static SEGMENTS: OnceLock<Vec<LocalSegment>> = OnceLock::new();
    SEGMENTS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("orders-0");
        let config = LogConfig::from_pairs([("segment.bytes", "24576")]).unwrap();
        let mut log = Log::create(&part, config).unwrap();
        let mut v = 0;
        for round in 0..6 {
            for codec in Compression::ALL {
                log.append(&batch(v, codec, None, 40), AppendOrigin::Client)
                    .unwrap();
                v += 40;
            }
            // A transaction per round: producer 10 commits, 11 aborts on odd rounds.
            let pid = 10 + (round % 2) as i64;
            log.append(
                &batch(v, Compression::Lz4, Some((pid, (round / 2) * 5)), 5),
                AppendOrigin::Client,
            )
            .unwrap();
            v += 5;
            log.append_end_txn(pid, 0, 0, round % 2 == 0, NOW + v as i64)
                .unwrap();
        }
        log.roll().unwrap();
        log.close().unwrap();
        let mut bases: Vec<i64> = std::fs::read_dir(&part)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".log").and_then(|b| b.parse().ok())
            })
            .collect();
        bases.sort();
        let mut out = Vec::new();
        for pair in bases.windows(2) {
            let (base, next) = (pair[0], pair[1]);
            let file = |ext: &str| part.join(format!("{base:020}.{ext}"));
            let log_bytes = read(&file("log"));
            if log_bytes.is_empty() {
                continue;
            }
            let snapshot = part.join(format!("{next:020}.snapshot"));
            let txn = file("txnindex");
            out.push(LocalSegment {
                base_offset: base,
                log: log_bytes,
                offset_index: read(&file("index")),
                time_index: read(&file("timeindex")),
                producer_snapshot: if snapshot.exists() {
                    read(&snapshot)
                } else {
                    Vec::new()
                },
                // The checkpoint text Kafka hands over for the segment's epochs.
                leader_epoch: format!("0\n1\n0 {base}\n").into_bytes(),
                transaction: txn.exists().then(|| read(&txn)).filter(|t| !t.is_empty()),
            });
        }
        assert!(out.len() >= 3, "only {} closed segments", out.len());
        out
    })
}

pub fn key_pem(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    read(&path).into_iter().map(char::from).collect()
}

/// A key ring holding pair `k1`.
pub fn keys() -> KeyRing {
    let mut ring = KeyRing::new();
    ring.add_pem("k1", &key_pem("k1-private.pem")).unwrap();
    ring
}

pub fn partition() -> RemotePartition {
    RemotePartition {
        topic: "orders-eu".into(),
        topic_id: KafkaUuid::parse("MWJ6FHTfRYy67jzwZdeqSQ").unwrap(),
        partition: 3,
    }
}

pub fn object_key(segment: &LocalSegment) -> ObjectKey {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&segment.base_offset.to_be_bytes());
    id[15] = 0xfb;
    ObjectKey {
        prefix: PREFIX.into(),
        partition: partition(),
        start_offset: segment.base_offset,
        segment_id: KafkaUuid(id),
        suffix: Suffix::Manifest,
    }
}

/// Uploads `segments` into a fresh directory as the plugin would, returning the directory.
pub fn uploaded(
    segments: &[LocalSegment],
    compression: bool,
    encryption: bool,
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let storage = FileSystemStorage::new(dir.path());
    let mut rng = StdRng::seed_from_u64(32);
    let options = UploadOptions {
        chunk_size: CHUNK,
        compression,
        encryption: encryption.then(|| ("k1".to_string(), keys().public_key("k1").unwrap())),
    };
    for s in segments {
        let key = object_key(s);
        let metadata = RemoteLogSegmentMetadata {
            topic_id: key.partition.topic_id,
            topic: key.partition.topic.clone(),
            partition: key.partition.partition,
            segment_id: key.segment_id,
            start_offset: s.base_offset,
            end_offset: last_offset(&s.log),
            max_timestamp_ms: NOW,
            broker_id: 1,
            event_timestamp_ms: NOW,
            segment_leader_epochs: [(0, s.base_offset)].into_iter().collect(),
        };
        upload(&s.files(), &options, Some(metadata), &mut rng)
            .unwrap()
            .put(&storage, &key)
            .unwrap();
    }
    dir
}

/// The last offset of the last batch of a segment.
pub fn last_offset(log: &[u8]) -> i64 {
    Entries::new(log)
        .map(|b| b.unwrap().last_offset())
        .last()
        .unwrap()
}

/// Each batch's (base offset, record count), CRC-checked and decompressed.
pub fn decode(log: &[u8]) -> Result<Vec<(i64, usize)>, krecords_codec::Error> {
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    for b in Entries::new(log).strict() {
        let b = b?;
        let mut n = 0;
        for r in b.checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)? {
            r?;
            n += 1;
        }
        out.push((b.offset_field(), n));
    }
    Ok(out)
}
