//! Reads segments of a remote tier laid out as Aiven's tiered-storage plugin writes it with its
//! filesystem backend: lists the partitions and their segments in offset order, opens each
//! (manifest, RSA-unwrapped data key), reads the original `.log` back, decodes its batches,
//! reads the chunks covering one byte range, and fetches the offset index.
//!
//! It makes its own input in a temporary directory: a partition log written by krecords-log,
//! its closed segments uploaded with compression and encryption on (key pair `k1`, the test key
//! of `tests/data/`), as the plugin would.
//!
//! Run: `cargo run -p krecords-remote --example read_remote_segment`.

use krecords_codec::read::Entries;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};
use krecords_log::{AppendOrigin, Log, LogConfig};
use krecords_remote::crypto::KeyRing;
use krecords_remote::key::{KafkaUuid, ObjectKey, RemotePartition, Suffix};
use krecords_remote::manifest::IndexType;
use krecords_remote::storage::FileSystemStorage;
use krecords_remote::write::{upload, SegmentFiles, UploadOptions};
use krecords_remote::RemoteTier;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const PRIVATE_KEY: &str = include_str!("../tests/data/k1-private.pem");

/// A closed local segment: base offset, `.log` and `.index` bytes.
type LocalSegment = (i64, Vec<u8>, Vec<u8>);

/// Writes a partition log and returns its closed segments.
fn local_segments(dir: &std::path::Path) -> Result<Vec<LocalSegment>> {
    let part = dir.join("payments-0");
    let mut log = Log::create(&part, LogConfig::from_pairs([("segment.bytes", "16384")])?)?;
    for i in 0..60 {
        let codec = Compression::ALL[i % Compression::ALL.len()];
        let mut b = V2Builder::new(0).compression(codec, None);
        for j in 0..20 {
            let value = format!("payment {i}-{j}: {} EUR", (i * 31 + j * 7) % 1000);
            b.append(&NewRecord::new(
                1_714_000_000_000 + i as i64,
                None,
                Some(value.as_bytes()),
            ))?;
        }
        log.append(&b.finish()?, AppendOrigin::Client)?;
    }
    log.roll()?;
    log.close()?;
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&part)? {
        let name = entry?.file_name().into_string().unwrap_or_default();
        if let Some(base) = name
            .strip_suffix(".log")
            .and_then(|b| b.parse::<i64>().ok())
        {
            let bytes = std::fs::read(part.join(&name))?;
            if !bytes.is_empty() {
                let index = std::fs::read(part.join(format!("{base:020}.index")))?;
                out.push((base, bytes, index));
            }
        }
    }
    Ok(out)
}

fn main() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut keys = KeyRing::new();
    keys.add_pem("k1", PRIVATE_KEY)?;

    // Upload as the plugin would: 4 KiB chunks, zstd, AES-256-GCM, data key wrapped for k1.
    let storage = FileSystemStorage::new(dir.path().join("bucket"));
    let partition = RemotePartition {
        topic: "payments".into(),
        topic_id: KafkaUuid::parse("MWJ6FHTfRYy67jzwZdeqSQ")?,
        partition: 0,
    };
    let options = UploadOptions {
        chunk_size: 4096,
        compression: true,
        encryption: Some(("k1".into(), keys.public_key("k1").ok_or("no key k1")?)),
    };
    let local = local_segments(dir.path())?;
    for (n, (base, log, index)) in local.iter().enumerate() {
        let files = SegmentFiles {
            log,
            offset_index: index,
            leader_epoch: b"0\n1\n0 0\n",
            ..SegmentFiles::default()
        };
        let key = ObjectKey {
            prefix: "tiered/".into(),
            partition: partition.clone(),
            start_offset: *base,
            segment_id: KafkaUuid([n as u8; 16]),
            suffix: Suffix::Manifest,
        };
        upload(&files, &options, None, &mut rand::rngs::OsRng)?.put(&storage, &key)?;
    }

    // Read it back through the public API only.
    let tier = RemoteTier::new(storage, "tiered/").with_keys(keys);
    let listing = tier.list()?;
    for (partition, segments) in &listing.partitions {
        println!("{partition}: {} segments", segments.len());
        for remote in segments {
            let segment = tier.open(remote)?;
            let m = segment.manifest();
            let log = segment.read_all()?;
            let mut scratch = Vec::new();
            let (mut batches, mut records) = (0, 0);
            for batch in Entries::new(&log).strict() {
                let batch = batch?;
                batches += 1;
                records += batch
                    .checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)?
                    .count();
            }
            let original = &local
                .iter()
                .find(|(b, _, _)| *b == remote.start_offset)
                .ok_or("segment not uploaded")?
                .1;
            assert!(log == *original, "the .log round trips byte for byte");
            let index = segment.index(IndexType::Offset)?.unwrap_or_default();
            let tail =
                segment.read(segment.original_size().saturating_sub(1)..segment.original_size())?;
            println!(
                "  {:020}: {} bytes in {} chunks ({} stored, key pair {}), {batches} batches, \
                 {records} records, offset index {} bytes; last byte read from chunk at {} ({} bytes)",
                remote.start_offset,
                log.len(),
                m.chunk_index.chunk_count(),
                remote.objects[&Suffix::Log],
                m.encryption.as_ref().map_or("-", |e| e.key_id.as_str()),
                index.len(),
                tail.start,
                tail.bytes.len(),
            );
        }
    }
    Ok(())
}
