//! A remote tier as a source: segments written by krecords-log, uploaded as Aiven's plugin
//! does (every combination of chunk compression and encryption), read through the sources
//! layer from a `file://` location, give the same records, watermarks, positions and
//! read_committed view as the same segment files read locally.

#![cfg(feature = "remote")]

use krecords_codec::read::{Record, Step};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, Header};
use krecords_log::{AppendOrigin, IsolationLevel, Log, LogConfig};
use krecords_remote::crypto::KeyRing;
use krecords_remote::key::{KafkaUuid, RemotePartition};
use krecords_remote::storage::FileSystemStorage;
use krecords_remote::write::{upload_local_segment, UploadOptions};
use krecords_source::{Position, Range, ReadOptions, RemoteOptions, Sources};
use std::path::{Path, PathBuf};

const T0: i64 = 1_714_000_000_000;

/// A partition log of several segments: every codec, headers, producer 7's transactions
/// (every third one aborted); record `o` has timestamp `T0 + 10 * o`. Returns the closed
/// segment files.
fn write_log(dir: &Path) -> Vec<PathBuf> {
    let config = LogConfig::from_pairs([("segment.bytes", "2048")]).unwrap();
    let mut log = Log::create(dir, config).unwrap();
    let mut next = 0i64;
    let mut seq = 0;
    for i in 0..60usize {
        let codec = Compression::ALL[i % Compression::ALL.len()];
        let txn = i % 4 == 1;
        let mut b = V2Builder::new(0).compression(codec, None);
        if txn {
            b = b.producer(7, 0, seq).transactional(true);
            seq += 3;
        }
        for j in 0..3 {
            let o = next + j;
            let value = format!("value {o} {}", "x".repeat((o % 13) as usize));
            let h = format!("h{o}");
            let headers = [Header {
                key: b"trace",
                value: Some(h.as_bytes()),
            }];
            b.append(
                &NewRecord::new(T0 + 10 * o, Some(b"k"), Some(value.as_bytes()))
                    .with_headers(&headers),
            )
            .unwrap();
        }
        let info = log
            .append(&b.finish().unwrap(), AppendOrigin::Client)
            .unwrap();
        next = info.last_offset + 1;
        if txn {
            let commit = i % 12 != 1;
            let m = log.append_end_txn(7, 0, 0, commit, T0 + 10 * next).unwrap();
            next = m.last_offset + 1;
        }
    }
    log.roll().unwrap();
    log.close().unwrap();
    krecords_source::dir_logs(dir)
        .unwrap()
        .into_iter()
        .filter(|p| std::fs::metadata(p).unwrap().len() > 0)
        .collect()
}

fn key_ring() -> KeyRing {
    let pem = Path::new(env!("CARGO_MANIFEST_DIR")).join("../remote/tests/data/k1-private.pem");
    let mut ring = KeyRing::new();
    ring.add_pem_file("k1", &pem).unwrap();
    ring
}

/// Uploads `segments` under `root` with the key prefix `tiered/`, chunks of 512 bytes.
fn upload_all(segments: &[PathBuf], root: &Path, compression: bool, encryption: bool) {
    let storage = FileSystemStorage::new(root);
    let options = UploadOptions {
        chunk_size: 512,
        compression,
        encryption: encryption.then(|| ("k1".to_string(), key_ring().public_key("k1").unwrap())),
    };
    let partition = RemotePartition {
        topic: "orders".into(),
        topic_id: KafkaUuid([3; 16]),
        partition: 0,
    };
    for path in segments {
        upload_local_segment(
            &storage,
            "tiered/",
            &partition,
            path,
            &options,
            &mut rand::rngs::OsRng,
        )
        .unwrap();
    }
}

fn open(args: &[PathBuf], keys: KeyRing) -> Result<Sources, krecords_source::Error> {
    Sources::open_with(args, &mut || unreachable!(), &mut || {
        Ok(RemoteOptions {
            keys: keys.clone(),
            lookahead: 2,
            ..RemoteOptions::default()
        })
    })
}

/// Every (offset, key, value, headers) the reader of partition 0 shows, control records left
/// out, and the number of segments opened.
type Shown = Vec<(i64, String, Vec<String>)>;
fn read(sources: &Sources, options: &ReadOptions) -> Result<(Shown, usize), String> {
    let mut reader = sources.read(0, options).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    let mut files = 0;
    while reader.next_file().map_err(|e| e.to_string())?.is_some() {
        files += 1;
        loop {
            let (step, bounds) = reader.next_with_bounds().map_err(|e| e.to_string())?;
            let b = match step {
                Step::Entry(b) => b,
                Step::End => break,
                other => return Err(format!("{other:?}")),
            };
            if matches!(b, krecords_codec::read::Batch::V2(v) if v.is_control()) {
                continue;
            }
            for r in b.records(&mut scratch, 1 << 20).unwrap() {
                let r: Record<'_> = r.unwrap();
                if bounds.contains(r.offset()) {
                    let v = String::from_utf8(r.value().unwrap().to_vec()).unwrap();
                    let h = r
                        .headers()
                        .map(|h| String::from_utf8_lossy(h.value.unwrap_or_default()).into_owned())
                        .collect();
                    out.push((r.offset(), v, h));
                }
            }
        }
    }
    Ok((out, files))
}

fn options(start: Option<Position>, end: Option<Position>, committed: bool) -> ReadOptions {
    ReadOptions {
        range: Range {
            start,
            end,
            count: None,
        },
        isolation: if committed {
            IsolationLevel::ReadCommitted
        } else {
            IsolationLevel::ReadUncommitted
        },
        ..ReadOptions::default()
    }
}

#[test]
fn a_file_location_reads_as_its_segment_files() {
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("orders-0");
    let segments = write_log(&part);
    assert!(segments.len() >= 4, "{} segments", segments.len());
    let local = Sources::open(&segments, &mut || unreachable!()).unwrap();
    let local_wm = local.watermarks(0).unwrap().unwrap();
    for (compression, encryption) in [(false, false), (true, false), (false, true), (true, true)] {
        let root = tempfile::tempdir().unwrap();
        upload_all(&segments, root.path(), compression, encryption);
        let url = PathBuf::from(format!("file://{}/tiered/", root.path().display()));
        let remote = open(std::slice::from_ref(&url), key_ring()).unwrap();
        let what = format!("compression {compression}, encryption {encryption}");
        assert_eq!(remote.partitions.len(), 1, "{what}");
        let p = &remote.partitions[0];
        assert_eq!((p.topic.as_deref(), p.partition), (Some("orders"), Some(0)));
        assert!(p.is_remote());
        assert!(
            p.name.ends_with("/tiered/orders-AwMDAwMDAwMDAwMDAwMDAw/0"),
            "{}",
            p.name
        );
        assert_eq!(remote.watermarks(0).unwrap(), Some(local_wm), "{what}");
        let hw = local_wm.high_watermark;
        for ms in [T0 - 5, T0 + 10 * 37 + 3, T0 + 10 * (hw / 2), T0 + 10 * hw] {
            assert_eq!(
                remote
                    .offset_for_time(0, ms, IsolationLevel::ReadUncommitted)
                    .unwrap(),
                local
                    .offset_for_time(0, ms, IsolationLevel::ReadUncommitted)
                    .unwrap(),
                "{what}: time {ms}"
            );
        }
        let cases = [
            (None, None),
            (Some(Position::Offset(hw / 2)), None),
            (Some(Position::Offset(7)), Some(Position::Offset(hw - 9))),
            (Some(Position::FromEnd(10)), None),
            (Some(Position::Time(T0 + 10 * 50)), Some(Position::Latest)),
        ];
        for (start, end) in cases {
            for committed in [false, true] {
                let o = options(start, end, committed);
                let (want, local_files) = read(&local, &o).unwrap();
                let (got, remote_files) = read(&remote, &o).unwrap();
                assert!(!want.is_empty());
                assert_eq!(
                    got, want,
                    "{what}: {start:?}..{end:?} committed {committed}"
                );
                // Segments outside the range are never opened.
                assert_eq!(remote_files, local_files, "{what}: {start:?}..{end:?}");
            }
        }
        // Uncommitted reads show the aborted records, committed ones do not.
        let all = read(&remote, &options(None, None, false)).unwrap().0;
        let committed = read(&remote, &options(None, None, true)).unwrap().0;
        assert!(committed.len() < all.len(), "{what}");
    }
}

#[test]
fn encrypted_segments_need_their_key() {
    let dir = tempfile::tempdir().unwrap();
    let segments = write_log(&dir.path().join("orders-0"));
    let root = tempfile::tempdir().unwrap();
    upload_all(&segments, root.path(), true, true);
    let url = PathBuf::from(format!("file://{}/tiered/", root.path().display()));
    let remote = open(std::slice::from_ref(&url), KeyRing::new()).unwrap();
    let err = read(&remote, &ReadOptions::default()).unwrap_err();
    assert!(err.contains("k1"), "{err}");
    let e = remote.watermarks(0).unwrap_err();
    assert_eq!(krecords_source::exit_code(&e), 2, "{e}");
}

#[test]
fn a_damaged_chunk_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let segments = write_log(&dir.path().join("orders-0"));
    let root = tempfile::tempdir().unwrap();
    upload_all(&segments, root.path(), true, false);
    // Cut the second segment's .log short: its manifest no longer matches it.
    let logs: Vec<PathBuf> = walk(root.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    let victim = &logs[1];
    let len = std::fs::metadata(victim).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(victim)
        .unwrap()
        .set_len(len - 10)
        .unwrap();
    let url = PathBuf::from(format!("file://{}/tiered/", root.path().display()));
    let remote = open(std::slice::from_ref(&url), KeyRing::new()).unwrap();
    let err = read(&remote, &ReadOptions::default()).unwrap_err();
    let name = victim.file_name().unwrap().to_str().unwrap();
    assert!(err.contains(name), "{err}");
    // A location with nothing in it says so.
    let empty = tempfile::tempdir().unwrap();
    let url = PathBuf::from(format!("file://{}/", empty.path().display()));
    let err = open(&[url], KeyRing::new()).unwrap_err();
    assert!(err.to_string().contains("no uploaded segments"), "{err}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}
