//! Every combination of chunk compression and encryption: the `.log` comes back byte for byte,
//! its batches decode, ranged reads fetch only the chunks they need, indexes come back.

use krecords_remote::chunk_index::ChunkSizes;
use krecords_remote::key::Suffix;
use krecords_remote::manifest::IndexType;
use krecords_remote::storage::{FileSystemStorage, Storage};
use krecords_remote::RemoteTier;

use crate::util::*;

pub const COMBINATIONS: [(bool, bool); 4] =
    [(false, false), (true, false), (false, true), (true, true)];

#[test]
fn every_combination_round_trips_byte_for_byte() {
    let segments = local_segments();
    for (compression, encryption) in COMBINATIONS {
        let what = format!("compression {compression}, encryption {encryption}");
        let dir = uploaded(segments, compression, encryption);
        let tier = RemoteTier::new(FileSystemStorage::new(dir.path()), PREFIX).with_keys(keys());
        let listing = tier.list().unwrap();
        assert!(listing.unrecognized.is_empty(), "{what}");
        assert_eq!(listing.partitions.len(), 1, "{what}");
        assert_eq!(tier.partitions().unwrap(), [partition()], "{what}");
        let remote = &listing.partitions[&partition()];
        let offsets: Vec<i64> = remote.iter().map(|s| s.start_offset).collect();
        let expected: Vec<i64> = segments.iter().map(|s| s.base_offset).collect();
        assert_eq!(offsets, expected, "{what}: segments in offset order");
        assert_eq!(tier.segments(&partition()).unwrap(), *remote, "{what}");

        for (local, remote) in segments.iter().zip(remote) {
            assert!(remote.is_complete(), "{what}");
            let segment = tier.open(remote).unwrap();
            let m = segment.manifest();
            assert_eq!(m.compression, compression, "{what}");
            assert_eq!(m.encryption.is_some(), encryption, "{what}");
            assert_eq!(
                matches!(m.chunk_index.sizes(), ChunkSizes::Variable(_)),
                compression,
                "{what}: variable index exactly with compression"
            );
            let chunks = u64::from(m.chunk_index.chunk_count());
            assert_eq!(
                chunks,
                (local.log.len() as u64).div_ceil(u64::from(CHUNK)),
                "{what}"
            );
            if local.base_offset == 0 {
                assert!(chunks >= 5, "{what}: several chunks");
            }
            let stored = remote.objects[&Suffix::Log];
            if encryption || compression {
                assert_ne!(
                    stored,
                    local.log.len() as u64,
                    "{what}: the object is transformed"
                );
            }

            let log = segment.read_all().unwrap();
            assert!(
                log == local.log,
                "{what}: .log at {} differs",
                local.base_offset
            );
            let batches = decode(&log).unwrap();
            assert_eq!(batches, decode(&local.log).unwrap(), "{what}");
            assert!(batches.iter().map(|b| b.1).sum::<usize>() > 100, "{what}");

            for (index, original) in [
                (IndexType::Offset, Some(&local.offset_index)),
                (IndexType::Timestamp, Some(&local.time_index)),
                (IndexType::ProducerSnapshot, Some(&local.producer_snapshot)),
                (IndexType::LeaderEpoch, Some(&local.leader_epoch)),
                (IndexType::Transaction, local.transaction.as_ref()),
            ] {
                assert_eq!(
                    segment.index(index).unwrap().as_ref(),
                    original,
                    "{what}: {index:?}"
                );
            }
            let rlsm = m.remote_log_segment_metadata.as_ref().unwrap();
            assert_eq!(rlsm.start_offset, local.base_offset);
            assert_eq!(rlsm.end_offset, last_offset(&local.log));
        }
    }
    // Some segment carries a transaction index, so that path is exercised.
    assert!(segments.iter().any(|s| s.transaction.is_some()));
}

#[test]
fn ranged_reads_fetch_only_the_covering_chunks() {
    let segments = local_segments();
    let local = &segments[0];
    for (compression, encryption) in COMBINATIONS {
        let dir = uploaded(&segments[..1], compression, encryption);
        let tier = RemoteTier::new(FileSystemStorage::new(dir.path()), PREFIX).with_keys(keys());
        let remote = &tier.list().unwrap().partitions[&partition()][0];
        let segment = tier.open(remote).unwrap();
        let size = local.log.len() as u64;
        let chunk = u64::from(CHUNK);
        for (start, end) in [
            (0, 1),
            (chunk - 1, chunk + 1),
            (5000, 9000),
            (size - 1, size),
            (0, size),
            (7, 7),
        ] {
            let read = segment.read(start..end).unwrap();
            if start == end {
                assert!(read.bytes.is_empty());
                continue;
            }
            let first = start / chunk * chunk;
            let last_end = end.div_ceil(chunk) * chunk;
            assert_eq!(read.start, first, "{start}..{end}");
            assert_eq!(
                read.start + read.bytes.len() as u64,
                last_end.min(size),
                "{start}..{end}"
            );
            assert!(read.bytes[..] == local.log[read.start as usize..][..read.bytes.len()]);
        }
        assert!(matches!(
            segment.read(0..size + 1),
            Err(krecords_remote::Error::Range { .. })
        ));
        let capped = RemoteTier::new(FileSystemStorage::new(dir.path()), PREFIX)
            .with_keys(keys())
            .with_limits(krecords_remote::Limits {
                max_read_bytes: 2 * chunk,
                ..Default::default()
            });
        let capped_segment = capped.open(remote).unwrap();
        assert_eq!(
            capped_segment.read(0..2 * chunk).unwrap().bytes.len() as u64,
            2 * chunk
        );
        let err = capped_segment.read(0..2 * chunk + 1).unwrap_err();
        assert!(
            matches!(err, krecords_remote::Error::TooLarge { .. }),
            "{err}"
        );
        let (start, end) = (5, 4);
        assert!(segment.read(start..end).is_err());
    }
}

#[test]
fn manifests_on_disk_use_the_plugins_field_names() {
    let segments = &local_segments()[..1];
    let key = object_key(&segments[0]).to_string();
    for (compression, encryption) in COMBINATIONS {
        let dir = uploaded(segments, compression, encryption);
        let storage = FileSystemStorage::new(dir.path());
        let text = String::from_utf8(storage.get(&key, 1 << 20).unwrap().to_vec()).unwrap();
        assert!(
            text.starts_with(r#"{"version":"1","chunkIndex":{"type":""#),
            "{text}"
        );
        for field in [
            "originalChunkSize",
            "originalFileSize",
            "segmentIndexes",
            "producerSnapshot",
            "leaderEpoch",
            "remoteLogSegmentMetadata",
            "segmentLeaderEpochs",
        ] {
            assert!(text.contains(&format!("\"{field}\":")), "{field} in {text}");
        }
        assert_eq!(text.contains("\"transformedChunks\":"), compression);
        assert_eq!(
            text.contains("\"finalTransformedChunkSize\":"),
            !compression
        );
        assert_eq!(text.contains("\"dataKey\":\"k1:"), encryption);
        assert!(text.contains(&format!("\"compression\":{compression}")));
        // Object names: 20-digit offset and 22-character ids.
        let names: Vec<String> = storage
            .list(PREFIX)
            .unwrap()
            .into_iter()
            .map(|m| m.key)
            .collect();
        assert_eq!(names.len(), 3);
        for n in &names {
            assert!(
                n.starts_with("tiered/orders-eu-MWJ6FHTfRYy67jzwZdeqSQ/3/00000000000000000000-"),
                "{n}"
            );
        }
    }
}
