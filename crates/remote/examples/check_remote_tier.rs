//! Checks a remote tier that a real broker's tiered-storage plugin wrote (the interop suite's
//! tiered step runs it on the storage root of Aiven's plugin, filesystem backend, or on a copy of
//! an S3 bucket): lists every partition and segment, reads each segment's `.log` back through the
//! manifest (decrypting and decompressing chunk by chunk), and checks that every batch's CRC
//! holds, that offsets run on without gap or overlap within and across segments, and that the
//! manifest's `remoteLogSegmentMetadata` agrees with the object name and the data.
//!
//! ```text
//! check_remote_tier ROOT PREFIX [--key ID=PEM]... [--local DIR]... [--export DIR]
//! ```
//!
//! - `--local DIR`: a folder of the broker's own segment files, captured before the retention
//!   check deleted them (`<20-digit base>.log`, `.index`, `.timeindex`, optionally with Kafka's
//!   `.deleted` suffix), in a sub-folder per partition (`TOPIC-PARTITION`): each remote `.log`
//!   and its offset and time indexes must equal the local file of the same base offset byte for
//!   byte.
//! - `--export DIR`: writes each segment's original `.log` to `DIR/TOPIC-PARTITION/<base>.log`,
//!   a partition directory any log reader can open.
//!
//! Without arguments it makes its own input in a temporary directory (a partition of three
//! segments uploaded as the plugin does, zstd and AES-256-GCM, key pair `k1` of `tests/data/`, and
//! the local copies) and checks that: `cargo run -p krecords-remote --example check_remote_tier`.
//!
//! Prints `PASS name: detail` / `FAIL name: detail` lines and `INFO` lines describing the objects
//! (chunk counts, compression, key pair), then `SUMMARY partitions=N segments=N records=N` and per
//! partition `END TOPIC-PARTITION NEXT_OFFSET`; exits 1 when a check failed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use krecords_codec::read::Entries;
use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;
use krecords_remote::crypto::KeyRing;
use krecords_remote::manifest::{IndexType, SegmentManifest};
use krecords_remote::storage::FileSystemStorage;
use krecords_remote::RemoteTier;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

struct Args {
    root: PathBuf,
    prefix: String,
    keys: KeyRing,
    local: Vec<PathBuf>,
    export: Option<PathBuf>,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args> {
    let usage =
        "usage: check_remote_tier ROOT PREFIX [--key ID=PEM]... [--local DIR]... [--export DIR]";
    let root = PathBuf::from(it.next().ok_or(usage)?);
    let prefix = it.next().ok_or(usage)?;
    let mut args = Args {
        root,
        prefix,
        keys: KeyRing::new(),
        local: Vec::new(),
        export: None,
    };
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(usage)?;
        match flag.as_str() {
            "--key" => {
                let (id, file) = value.split_once('=').ok_or("--key takes ID=PEMFILE")?;
                args.keys.add_pem_file(id, Path::new(file))?;
            }
            "--local" => args.local.push(PathBuf::from(value)),
            "--export" => args.export = Some(PathBuf::from(value)),
            _ => return Err(usage.into()),
        }
    }
    Ok(args)
}

/// The local copy of `name` (e.g. `00000000000000001006.log`) in `dir`, with or without Kafka's
/// `.deleted` suffix.
fn local_file(dirs: &[PathBuf], partition: &str, name: &str) -> Option<Vec<u8>> {
    dirs.iter().find_map(|d| {
        let p = d.join(partition);
        std::fs::read(p.join(name))
            .or_else(|_| std::fs::read(p.join(format!("{name}.deleted"))))
            .ok()
    })
}

fn report(ok: bool, name: &str, detail: &str, failed: &mut usize) {
    if !ok {
        *failed += 1;
    }
    println!("{} {name}: {detail}", if ok { "PASS" } else { "FAIL" });
}

/// Checks one segment's batches; returns (records, next offset) or a description of the problem.
fn check_batches(
    log: &[u8],
    expect_start: i64,
) -> std::result::Result<(usize, usize, i64), String> {
    let mut scratch = Vec::new();
    let (mut batches, mut records, mut next) = (0usize, 0usize, expect_start);
    for (n, batch) in Entries::new(log).strict().enumerate() {
        let batch = batch.map_err(|e| format!("batch {n}: {e}"))?;
        let first = batch
            .first_offset()
            .ok_or_else(|| format!("batch {n}: not a v2 batch"))?;
        if first != next {
            return Err(format!(
                "batch {n} starts at offset {first}, expected {next}"
            ));
        }
        let count = batch
            .checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
            .map_err(|e| format!("batch {n} at offset {first}: {e}"))?
            .count();
        batches += 1;
        records += count;
        next = batch.last_offset() + 1;
    }
    Ok((batches, records, next))
}

fn describe(m: &SegmentManifest) -> String {
    format!(
        "{} chunks of {} bytes ({} bytes original), compression {}, encryption {}",
        m.chunk_index.chunk_count(),
        m.chunk_index.original_chunk_size(),
        m.chunk_index.original_file_size(),
        m.compression,
        m.encryption.as_ref().map_or("off".to_string(), |e| format!(
            "key pair {} (wrapped key {} bytes, aad {} bytes)",
            e.key_id,
            e.wrapped_data_key.len(),
            e.aad.len()
        )),
    )
}

const DEMO_PRIVATE_KEY: &str = include_str!("../tests/data/k1-private.pem");

/// The input of a run without arguments: in `dir`, a bucket with the three segments of
/// `payments-0` uploaded as the plugin does (4 KiB chunks, zstd, AES-256-GCM for key pair `k1`)
/// and their local copies; returns the arguments that check them.
fn demo_args(dir: &Path) -> Result<Vec<String>> {
    use krecords_codec::write::{NewRecord, V2Builder};
    use krecords_codec::Compression;
    use krecords_remote::key::{KafkaUuid, ObjectKey, RemotePartition, Suffix};
    use krecords_remote::write::{upload, SegmentFiles, UploadOptions};

    let key_file = dir.join("k1-private.pem");
    std::fs::write(&key_file, DEMO_PRIVATE_KEY)?;
    let mut keys = KeyRing::new();
    keys.add_pem("k1", DEMO_PRIVATE_KEY)?;
    let options = UploadOptions {
        chunk_size: 4096,
        compression: true,
        encryption: Some(("k1".into(), keys.public_key("k1").ok_or("no key k1")?)),
    };
    let storage = FileSystemStorage::new(dir.join("bucket"));
    let partition = RemotePartition {
        topic: "payments".into(),
        topic_id: KafkaUuid::parse("MWJ6FHTfRYy67jzwZdeqSQ")?,
        partition: 0,
    };
    let local = dir.join("local").join("payments-0");
    std::fs::create_dir_all(&local)?;
    let mut offset = 0i64;
    for segment in 0..3u8 {
        let base = offset;
        let mut log = Vec::new();
        for batch in 0..20 {
            let mut b = V2Builder::new(offset).compression(Compression::Lz4, None);
            for i in 0..10 {
                let value = format!(
                    "payment {segment}-{batch}-{i}: {} EUR",
                    (batch * 31 + i * 7) % 1000
                );
                b.append(&NewRecord::new(
                    1_714_000_000_000 + offset,
                    None,
                    Some(value.as_bytes()),
                ))?;
                offset += 1;
            }
            log.extend_from_slice(&b.finish()?);
        }
        let files = SegmentFiles {
            log: &log,
            ..SegmentFiles::default()
        };
        let key = ObjectKey {
            prefix: "tiered/".into(),
            partition: partition.clone(),
            start_offset: base,
            segment_id: KafkaUuid([segment + 1; 16]),
            suffix: Suffix::Manifest,
        };
        upload(&files, &options, None, &mut rand::rngs::OsRng)?.put(&storage, &key)?;
        std::fs::write(local.join(format!("{base:020}.log")), &log)?;
    }
    Ok(vec![
        dir.join("bucket").display().to_string(),
        "tiered/".into(),
        "--key".into(),
        format!("k1={}", key_file.display()),
        "--local".into(),
        dir.join("local").display().to_string(),
    ])
}

fn main() -> Result<()> {
    let demo = tempfile::tempdir()?;
    let args = if std::env::args().len() > 1 {
        parse_args(std::env::args().skip(1))?
    } else {
        parse_args(demo_args(demo.path())?.into_iter())?
    };
    let tier = RemoteTier::new(FileSystemStorage::new(&args.root), args.prefix.clone())
        .with_keys(args.keys);
    let listing = tier.list()?;
    let mut failed = 0usize;
    for key in &listing.unrecognized {
        report(
            false,
            "remote-object-name",
            &format!("{key}: not a plugin object name"),
            &mut failed,
        );
    }
    let (mut total_segments, mut total_records) = (0usize, 0usize);
    let mut ends = BTreeMap::new();
    for (partition, segments) in &listing.partitions {
        let pname = format!("{}-{}", partition.topic, partition.partition);
        let mut next: Option<i64> = None;
        for remote in segments {
            total_segments += 1;
            let name = format!("remote-segment/{pname}/{:020}", remote.start_offset);
            if !remote.is_complete() {
                report(
                    false,
                    &name,
                    &format!("objects {:?}: not all three", remote.objects.keys()),
                    &mut failed,
                );
                next = None; // its end is unknown: the next segment is not blamed for it
                continue;
            }
            let segment = match tier.open(remote) {
                Ok(s) => s,
                Err(e) => {
                    report(false, &name, &format!("cannot open: {e}"), &mut failed);
                    next = None;
                    continue;
                }
            };
            let m = segment.manifest();
            println!("INFO {name}: {}", describe(m));
            let log = match segment.read_all() {
                Ok(l) => l,
                Err(e) => {
                    report(
                        false,
                        &name,
                        &format!("cannot read the .log: {e}"),
                        &mut failed,
                    );
                    next = None;
                    continue;
                }
            };
            let expect = next.unwrap_or(remote.start_offset);
            if expect != remote.start_offset {
                report(
                    false,
                    &name,
                    &format!(
                        "starts at {}, the previous segment ended before {expect}",
                        remote.start_offset
                    ),
                    &mut failed,
                );
            }
            match check_batches(&log, remote.start_offset) {
                Ok((batches, records, end)) => {
                    total_records += records;
                    let meta = m.remote_log_segment_metadata.as_ref();
                    let meta_ok = meta.is_none_or(|r| {
                        r.start_offset == remote.start_offset
                            && r.end_offset == end - 1
                            && r.segment_id == remote.segment_id
                            && r.topic == partition.topic
                            && r.partition == partition.partition
                    });
                    report(
                        meta_ok,
                        &name,
                        &format!(
                            "{} bytes, {batches} batches with valid CRCs, {records} records, offsets {}..={} contiguous{}",
                            log.len(),
                            remote.start_offset,
                            end - 1,
                            match meta {
                                Some(_) if meta_ok => " (manifest metadata agrees)".to_string(),
                                Some(r) => format!(
                                    "; manifest metadata disagrees: start {} end {} id {:?}",
                                    r.start_offset, r.end_offset, r.segment_id
                                ),
                                None => " (no remoteLogSegmentMetadata in the manifest)".to_string(),
                            }
                        ),
                        &mut failed,
                    );
                    next = Some(end);
                }
                Err(e) => {
                    report(false, &name, &e, &mut failed);
                    next = None;
                }
            }
            if !args.local.is_empty() {
                // One line per segment: its .log and two indexes against the broker's own files.
                let base = format!("{:020}", remote.start_offset);
                let check = format!("remote-equals-local/{pname}/{base}");
                let (mut same, mut differ, mut absent) = (Vec::new(), Vec::new(), Vec::new());
                for (ext, remote_bytes) in [
                    ("log", Some(log.clone())),
                    ("index", segment.index(IndexType::Offset)?),
                    ("timeindex", segment.index(IndexType::Timestamp)?),
                ] {
                    match (
                        local_file(&args.local, &pname, &format!("{base}.{ext}")),
                        remote_bytes,
                    ) {
                        (Some(l), Some(r)) if l == r => {
                            same.push(format!(".{ext} {} bytes", l.len()))
                        }
                        (Some(l), Some(r)) => differ.push(format!(
                            ".{ext} (remote {} bytes, local {})",
                            r.len(),
                            l.len()
                        )),
                        (Some(_), None) => differ.push(format!(".{ext} (not in the manifest)")),
                        (None, _) => absent.push(format!(".{ext}")),
                    }
                }
                if !differ.is_empty() {
                    report(
                        false,
                        &check,
                        &format!("differ: {}", differ.join(", ")),
                        &mut failed,
                    );
                } else if !same.is_empty() {
                    report(
                        true,
                        &check,
                        &format!("equal to the broker's local files: {}", same.join(", ")),
                        &mut failed,
                    );
                }
                if !absent.is_empty() {
                    println!("INFO {check}: no local copy of {}", absent.join(", "));
                }
            }
            if let Some(dir) = &args.export {
                let d = dir.join(&pname);
                std::fs::create_dir_all(&d)?;
                std::fs::write(d.join(format!("{:020}.log", remote.start_offset)), &log)?;
            }
        }
        if let Some(end) = next {
            ends.insert(pname, end);
        }
    }
    println!(
        "SUMMARY partitions={} segments={total_segments} records={total_records}",
        listing.partitions.len()
    );
    for (p, end) in &ends {
        println!("END {p} {end}");
    }
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
