//! Hostile and damaged objects: wrong or missing keys, truncated objects, flipped bytes,
//! absurd sizes. Each gives a clear error, or (without encryption, where zstd frames carry no
//! checksum) a batch whose CRC fails: never silently different data.

use krecords_remote::key::Suffix;
use krecords_remote::manifest::IndexType;
use krecords_remote::storage::{FileSystemStorage, Storage};
use krecords_remote::{Error, Limits, RemoteTier};

use crate::util::*;

struct Fixture {
    dir: tempfile::TempDir,
    local: LocalSegment,
}

impl Fixture {
    fn new(compression: bool, encryption: bool) -> Fixture {
        let local = local_segments()[0].clone();
        let dir = uploaded(std::slice::from_ref(&local), compression, encryption);
        Fixture { dir, local }
    }
    fn storage(&self) -> FileSystemStorage {
        FileSystemStorage::new(self.dir.path())
    }
    fn tier(&self) -> RemoteTier<FileSystemStorage> {
        RemoteTier::new(self.storage(), PREFIX).with_keys(keys())
    }
    fn key(&self, suffix: Suffix) -> String {
        object_key(&self.local).with_suffix(suffix).to_string()
    }
    fn path(&self, suffix: Suffix) -> std::path::PathBuf {
        self.storage().path(&self.key(suffix)).unwrap()
    }
    fn edit(&self, suffix: Suffix, f: impl FnOnce(&mut Vec<u8>)) {
        let path = self.path(suffix);
        let mut bytes = std::fs::read(&path).unwrap();
        f(&mut bytes);
        std::fs::write(&path, bytes).unwrap();
    }
    fn edit_manifest(&self, from: &str, to: &str) {
        self.edit(Suffix::Manifest, |b| {
            let text = String::from_utf8(b.clone()).unwrap();
            assert!(text.contains(from), "{from} not in {text}");
            *b = text.replacen(from, to, 1).into_bytes();
        });
    }
    fn manifest_text(&self) -> String {
        String::from_utf8(std::fs::read(self.path(Suffix::Manifest)).unwrap()).unwrap()
    }
    fn open_err(&self) -> Error {
        let tier = self.tier();
        let listing = tier.list().unwrap();
        let segment = &listing.partitions[&partition()][0];
        tier.open(segment).map(|_| ()).unwrap_err()
    }
    fn read_all(&self) -> Result<Vec<u8>, Error> {
        let tier = self.tier();
        let segment = tier.list().unwrap().partitions[&partition()][0].clone();
        tier.open(&segment)?.read_all()
    }
}

#[test]
fn wrong_or_missing_private_key() {
    let f = Fixture::new(true, true);
    let mut wrong = krecords_remote::crypto::KeyRing::new();
    wrong.add_pem("k1", &key_pem("k2-private.pem")).unwrap();
    let tier = RemoteTier::new(f.storage(), PREFIX).with_keys(wrong);
    let segment = tier.list().unwrap().partitions[&partition()][0].clone();
    let err = tier.open(&segment).unwrap_err();
    assert!(
        matches!(&err, Error::DataKey { key_id } if key_id == "k1"),
        "{err}"
    );
    assert!(err.to_string().contains("wrong private key"), "{err}");

    let tier = RemoteTier::new(f.storage(), PREFIX);
    let err = tier.open(&segment).unwrap_err();
    assert!(
        matches!(&err, Error::MissingKey { key_id } if key_id == "k1"),
        "{err}"
    );

    let mut ring = krecords_remote::crypto::KeyRing::new();
    let err = ring
        .add_pem(
            "k1",
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        )
        .unwrap_err();
    assert!(matches!(err, Error::Key { .. }), "{err}");
    let err = ring
        .add_pem_file("k1", std::path::Path::new("/nonexistent/k.pem"))
        .unwrap_err();
    let spec = format!(
        "k9={}/tests/data/k2-private.pem",
        env!("CARGO_MANIFEST_DIR")
    );
    ring.add_spec(&spec).unwrap();
    assert_eq!(ring.ids().collect::<Vec<_>>(), ["k9"]);
    for bad in ["k9", "=file", "k9="] {
        assert!(
            matches!(ring.add_spec(bad), Err(Error::Key { .. })),
            "{bad}"
        );
    }
    assert!(err.to_string().contains("/nonexistent/k.pem"), "{err}");
}

#[test]
fn a_wrong_aad_fails_every_chunk() {
    let f = Fixture::new(false, true);
    let text = f.manifest_text();
    let aad = text
        .split("\"aad\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let first = if aad.starts_with('A') { "B" } else { "A" };
    let other = format!("{first}{}", aad.get(1..).unwrap());
    f.edit_manifest(&aad, &other);
    let err = f.read_all().unwrap_err();
    assert!(
        matches!(
            err,
            Error::Decrypt {
                chunk: 0,
                at: 0,
                ..
            }
        ),
        "{err}"
    );
    let tier = f.tier();
    let segment = tier.list().unwrap().partitions[&partition()][0].clone();
    let err = tier
        .open(&segment)
        .unwrap()
        .index(IndexType::Offset)
        .unwrap_err();
    assert!(matches!(err, Error::Decrypt { .. }), "{err}");
}

#[test]
fn truncated_objects() {
    for (compression, encryption) in [(false, false), (true, false), (false, true), (true, true)] {
        let f = Fixture::new(compression, encryption);
        f.edit(Suffix::Indexes, |b| b.truncate(b.len() - 3));
        let tier = f.tier();
        let segment = tier.list().unwrap().partitions[&partition()][0].clone();
        let opened = tier.open(&segment).unwrap();
        let last = if f.local.transaction.is_some() {
            IndexType::Transaction
        } else {
            IndexType::LeaderEpoch
        };
        let err = opened.index(last).unwrap_err();
        assert!(matches!(err, Error::Truncated { .. }), "{err}");
        assert!(opened.index(IndexType::Offset).is_ok());

        f.edit(Suffix::Log, |b| b.truncate(b.len() - 10));
        let err = f.open_err();
        assert!(
            matches!(&err, Error::IndexMismatch { expected, found, .. } if expected - found == 10),
            "{err}"
        );

        f.edit(Suffix::Manifest, |b| b.truncate(b.len() / 2));
        let err = f.open_err();
        assert!(matches!(err, Error::Manifest { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with("manifest field (document): not a manifest"),
            "{err}"
        );

        std::fs::remove_file(f.path(Suffix::Log)).unwrap();
        std::fs::write(f.path(Suffix::Manifest), b"").unwrap();
        let tier = f.tier();
        let segment = tier.list().unwrap().partitions[&partition()][0].clone();
        assert!(!segment.is_complete());
        assert!(tier.open(&segment).is_err());
    }
}

#[test]
fn a_missing_log_object() {
    let f = Fixture::new(true, false);
    std::fs::remove_file(f.path(Suffix::Log)).unwrap();
    let err = f.open_err();
    assert!(
        matches!(&err, Error::NotFound { key } if key.ends_with(".log")),
        "{err}"
    );
}

/// Where byte `at` of a segment lies relative to its batch: the offset inside the batch.
fn offset_in_batch(log: &[u8], at: usize) -> usize {
    let mut start = 0;
    while start < log.len() {
        let len = i32::from_be_bytes(log[start + 8..start + 12].try_into().unwrap()) as usize + 12;
        if at < start + len {
            return at - start;
        }
        start += len;
    }
    unreachable!("byte {at} past the log")
}

/// With encryption, GCM refuses any altered byte and names the chunk. Without it the plugin's
/// objects carry no checksum of their own: an altered uncompressed chunk comes through as it is
/// (so Kafka's batch CRC, which covers a batch from its attributes at byte 21 on, is the check),
/// and an altered zstd frame fails to decompress or decompresses to different bytes.
#[test]
fn flipped_bytes_never_pass_unnoticed() {
    for (compression, encryption) in [(false, false), (true, false), (false, true), (true, true)] {
        let what = format!("compression {compression}, encryption {encryption}");
        for at in [0usize, 13, 100, 5000, 9001] {
            let f = Fixture::new(compression, encryption);
            let mut flipped = 0;
            f.edit(Suffix::Log, |b| {
                let at = at % b.len();
                b[at] ^= 0x20;
                flipped = at;
            });
            match f.read_all() {
                Err(err) => {
                    assert!(
                        compression || encryption,
                        "{what}: plain chunks cannot fail: {err}"
                    );
                    if encryption {
                        let chunk = (flipped / (CHUNK as usize + 28)) as u32;
                        let expected = if compression { None } else { Some(chunk) };
                        assert!(
                            matches!(err, Error::Decrypt { chunk: c, .. } if expected.is_none_or(|e| e == c)),
                            "{what}: {err}"
                        );
                    } else {
                        assert!(matches!(err, Error::Decompress { .. }), "{what}: {err}");
                    }
                }
                Ok(log) => {
                    assert!(!encryption, "{what}: GCM must catch byte {flipped}");
                    assert!(
                        log != f.local.log,
                        "{what}: byte {flipped} flipped, same bytes read"
                    );
                    if !compression {
                        let diff: Vec<usize> = (0..log.len())
                            .filter(|i| log[*i] != f.local.log[*i])
                            .collect();
                        assert_eq!(diff, [flipped], "{what}");
                        if offset_in_batch(&log, flipped) >= 21 {
                            assert!(
                                decode(&log).is_err(),
                                "{what}: byte {flipped} flipped, the CRC passes"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn absurd_sizes_in_the_manifest() {
    // A chunk size above the configured cap: refused before any chunk is read.
    let f = Fixture::new(false, false);
    let tier = f.tier().with_limits(Limits {
        max_chunk_bytes: 1024,
        ..Limits::default()
    });
    let segment = tier.list().unwrap().partitions[&partition()][0].clone();
    let err = tier.open(&segment).unwrap_err();
    assert!(
        matches!(&err, Error::Manifest { field, .. } if field == "chunkIndex.originalChunkSize"),
        "{err}"
    );

    // An original file size that does not match the object: the index is checked against it.
    let size = f.local.log.len();
    f.edit_manifest(
        &format!("\"originalFileSize\":{size}"),
        "\"originalFileSize\":2147483647",
    );
    let err = f.open_err();
    assert!(matches!(err, Error::IndexMismatch { .. }), "{err}");
    f.edit_manifest(
        "\"originalFileSize\":2147483647",
        "\"originalFileSize\":2147483648",
    );
    let err = f.open_err();
    assert!(
        matches!(&err, Error::Manifest { field, .. } if field == "chunkIndex.originalFileSize"),
        "{err}"
    );

    // A variable index whose count disagrees with the sizes.
    let f = Fixture::new(true, false);
    f.edit_manifest(
        &format!("\"originalFileSize\":{size}"),
        &format!("\"originalFileSize\":{}", size * 3),
    );
    let err = f.open_err();
    assert!(
        matches!(&err, Error::Manifest { field, .. } if field == "chunkIndex.transformedChunks"),
        "{err}"
    );

    // An index slice of two gigabytes: refused by the cap, not allocated.
    let f = Fixture::new(false, true);
    let text = f.manifest_text();
    let offset_slice = text
        .split("\"offset\":")
        .nth(1)
        .unwrap()
        .split('}')
        .next()
        .unwrap()
        .to_string()
        + "}";
    f.edit_manifest(&offset_slice, "{\"position\":0,\"size\":2147483647}");
    let tier = f.tier();
    let segment = tier.list().unwrap().partitions[&partition()][0].clone();
    let err = tier
        .open(&segment)
        .unwrap()
        .index(IndexType::Offset)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooLarge {
                size: 2147483647,
                ..
            }
        ),
        "{err}"
    );
    let tier = f.tier().with_limits(Limits {
        max_index_bytes: i32::MAX as u32,
        ..Limits::default()
    });
    let err = tier
        .open(&segment)
        .unwrap()
        .index(IndexType::Offset)
        .unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }), "{err}");

    // A manifest above its cap.
    let tier = f.tier().with_limits(Limits {
        max_manifest_bytes: 100,
        ..Limits::default()
    });
    let err = tier.open(&segment).unwrap_err();
    assert!(matches!(err, Error::TooLarge { limit: 100, .. }), "{err}");
}

#[test]
fn a_chunk_whose_frame_lies_about_its_size() {
    // Compression without encryption: rewrite chunk 0 as a valid zstd frame of another size,
    // keeping the object's length (pad the frame with a skippable frame is not needed: the
    // index is rewritten instead). The declared size no longer matches the index.
    let f = Fixture::new(true, false);
    let tier = f.tier();
    let segment = tier.list().unwrap().partitions[&partition()][0].clone();
    let opened = tier.open(&segment).unwrap();
    let chunk0 = opened.manifest().chunk_index.chunk(0).unwrap();
    let storage = f.storage();
    let raw = storage
        .get_range(&f.key(Suffix::Log), 0..u64::from(chunk0.transformed_size))
        .unwrap();
    // Same length, the content-size field altered: byte 5 onward of the frame header holds it
    // for a single-segment frame; flipping the low bit of the declared size is enough.
    let header_descriptor = raw[4];
    let fcs_flag = header_descriptor >> 6;
    let single_segment = header_descriptor & 0x20 != 0;
    let fcs_at = 5 + usize::from(!single_segment);
    assert!(
        fcs_flag > 0 || single_segment,
        "the plugin's frames carry a content size"
    );
    f.edit(Suffix::Log, |b| b[fcs_at] ^= 1);
    let err = f.read_all().unwrap_err();
    assert!(
        matches!(&err, Error::Decompress { chunk: 0, reason, .. } if reason.contains("declares")),
        "{err}"
    );
}
