//! Writing a segment's three objects as the plugin's `KafkaRemoteStorageManager.copyLogSegmentData`
//! does, for tests, fixtures and examples:
//!
//! - `.log`: the segment cut into chunks of `chunk_size`, each zstd-compressed (one frame with
//!   its content size) when compression is on, then sealed with AES-256-GCM when encryption is
//!   on (`IV | ciphertext | tag`); a variable chunk index with compression, fixed without.
//! - `.indexes`: each non-empty index, encrypted as one chunk when encryption is on (never
//!   compressed), concatenated in the order offset, timestamp, producer snapshot, leader
//!   epoch, transaction; the manifest records each one's position and transformed size.
//! - `.rsm-manifest`: the JSON of [`SegmentManifest::to_json`].

use rsa::rand_core::CryptoRngCore;
use rsa::RsaPublicKey;

use crate::chunk_index::{ChunkIndex, ChunkSizes};
use crate::crypto::{wrap_data_key, DataKey, DATA_KEY_SIZE, IV_SIZE};
use crate::error::{Error, Result};
use crate::key::ObjectKey;
use crate::key::Suffix;
use crate::manifest::{
    EncryptionMetadata, IndexSlice, RemoteLogSegmentMetadata, SegmentIndexes, SegmentManifest,
};
use crate::storage::FileSystemStorage;

/// The files of a local segment, as Kafka hands them to the RemoteStorageManager.
#[derive(Debug, Clone, Copy, Default)]
pub struct SegmentFiles<'a> {
    /// The `.log` file.
    pub log: &'a [u8],
    /// The `.index` file.
    pub offset_index: &'a [u8],
    /// The `.timeindex` file.
    pub time_index: &'a [u8],
    /// The `.snapshot` file.
    pub producer_snapshot: &'a [u8],
    /// The leader epoch checkpoint.
    pub leader_epoch: &'a [u8],
    /// The `.txnindex` file, when the segment has one.
    pub transaction: Option<&'a [u8]>,
}

/// How to upload (`rsm.config.chunk.size`, `compression.enabled`, `encryption.*`).
#[derive(Debug, Clone)]
pub struct UploadOptions {
    /// Original bytes per chunk.
    pub chunk_size: u32,
    /// zstd per chunk.
    pub compression: bool,
    /// The active key pair id and its public key, when encryption is on.
    pub encryption: Option<(String, RsaPublicKey)>,
}

/// The three objects of an uploaded segment.
#[derive(Debug, Clone)]
pub struct Uploaded {
    /// The `.log` object.
    pub log: Vec<u8>,
    /// The `.indexes` object.
    pub indexes: Vec<u8>,
    /// The manifest.
    pub manifest: SegmentManifest,
}

fn failed(reason: &str) -> Error {
    Error::Key {
        what: "upload".into(),
        reason: reason.into(),
    }
}

/// Transforms a segment's files into its three objects.
///
/// # Errors
///
/// [`Error::Manifest`] for sizes above Java ints, [`Error::Key`] if encryption fails.
pub fn upload(
    files: &SegmentFiles<'_>,
    options: &UploadOptions,
    metadata: Option<RemoteLogSegmentMetadata>,
    rng: &mut impl CryptoRngCore,
) -> Result<Uploaded> {
    let key_and_aad = match &options.encryption {
        Some(_) => {
            let mut key = [0u8; DATA_KEY_SIZE];
            rng.fill_bytes(&mut key);
            let mut aad = vec![0u8; DATA_KEY_SIZE];
            rng.fill_bytes(&mut aad);
            Some((DataKey(key), aad))
        }
        None => None,
    };
    let seal = |plain: &[u8], rng: &mut dyn CryptoRngCore| -> Result<Vec<u8>> {
        match &key_and_aad {
            Some((key, aad)) => {
                let mut iv = [0u8; IV_SIZE];
                rng.fill_bytes(&mut iv);
                key.seal(iv, plain, aad)
                    .ok_or_else(|| failed("AES-GCM failed"))
            }
            None => Ok(plain.to_vec()),
        }
    };
    let chunk_size =
        usize::try_from(options.chunk_size.max(1)).map_err(|_| failed("chunk size"))?;
    let mut log = Vec::new();
    let mut sizes = Vec::new();
    for piece in files.log.chunks(chunk_size) {
        let compressed;
        let input = if options.compression {
            let mut c = zstd::bulk::Compressor::new(3).map_err(|e| failed(&e.to_string()))?;
            c.include_contentsize(true)
                .map_err(|e| failed(&e.to_string()))?;
            compressed = c.compress(piece).map_err(|e| failed(&e.to_string()))?;
            &compressed[..]
        } else {
            piece
        };
        let out = seal(input, rng)?;
        sizes.push(u32::try_from(out.len()).map_err(|_| failed("chunk too large"))?);
        log.extend_from_slice(&out);
    }
    let ofs = i64::try_from(files.log.len()).map_err(|_| failed("segment too large"))?;
    let chunk_sizes = if options.compression {
        ChunkSizes::Variable(sizes)
    } else {
        // What the plugin's fixed builder stores: the transformed size of a full chunk and of
        // the last one (for an encrypted chunk, 12 + size + 16).
        let full = match &key_and_aad {
            Some(_) => options.chunk_size.saturating_add(28),
            None => options.chunk_size,
        };
        ChunkSizes::Fixed {
            transformed_chunk_size: full,
            final_transformed_chunk_size: sizes.last().copied().unwrap_or(0),
        }
    };
    let chunk_index = ChunkIndex::new(i64::from(options.chunk_size), ofs, chunk_sizes)?;

    let mut indexes = Vec::new();
    let mut slice = |bytes: &[u8], rng: &mut dyn CryptoRngCore| -> Result<IndexSlice> {
        let position = u32::try_from(indexes.len()).map_err(|_| failed("indexes too large"))?;
        let out = if bytes.is_empty() {
            Vec::new()
        } else {
            seal(bytes, rng)?
        };
        indexes.extend_from_slice(&out);
        Ok(IndexSlice {
            position,
            size: u32::try_from(out.len()).map_err(|_| failed("index too large"))?,
        })
    };
    let segment_indexes = SegmentIndexes {
        offset: slice(files.offset_index, rng)?,
        timestamp: slice(files.time_index, rng)?,
        producer_snapshot: slice(files.producer_snapshot, rng)?,
        leader_epoch: slice(files.leader_epoch, rng)?,
        transaction: files.transaction.map(|t| slice(t, rng)).transpose()?,
    };
    let encryption = match (&options.encryption, key_and_aad) {
        (Some((key_id, public)), Some((key, aad))) => Some(EncryptionMetadata {
            key_id: key_id.clone(),
            wrapped_data_key: wrap_data_key(public, &key, rng)?,
            aad,
        }),
        _ => None,
    };
    Ok(Uploaded {
        log,
        indexes,
        manifest: SegmentManifest {
            chunk_index,
            segment_indexes,
            compression: options.compression,
            encryption,
            remote_log_segment_metadata: metadata,
        },
    })
}

impl Uploaded {
    /// Stores the three objects under `key`'s names (its suffix is ignored), `.log` and
    /// `.indexes` first and the manifest last, as the plugin does.
    ///
    /// # Errors
    ///
    /// [`Error::Io`].
    pub fn put(&self, storage: &FileSystemStorage, key: &ObjectKey) -> Result<()> {
        storage.put(&key.with_suffix(Suffix::Log).to_string(), &self.log)?;
        storage.put(&key.with_suffix(Suffix::Indexes).to_string(), &self.indexes)?;
        storage.put(
            &key.with_suffix(Suffix::Manifest).to_string(),
            self.manifest.to_json()?.as_bytes(),
        )
    }
}

/// Uploads a closed segment of a local partition directory as the broker and the plugin
/// would: the `.log` named by `log_path`, with its `.index`, `.timeindex` and `.txnindex`
/// (when present and not empty) beside it, under `prefix` for `partition`, with a
/// `remoteLogSegmentMetadata` whose end offset and max timestamp come from the segment's
/// batches. For fixtures and tests. Returns the manifest's key.
///
/// # Errors
///
/// [`Error::Io`] reading the files or writing the objects; [`Error::BadKey`] when the file
/// name is not `<20-digit base offset>.log` or the segment holds no batch; as [`upload`].
pub fn upload_local_segment(
    storage: &FileSystemStorage,
    prefix: &str,
    partition: &crate::key::RemotePartition,
    log_path: &std::path::Path,
    options: &UploadOptions,
    rng: &mut impl CryptoRngCore,
) -> Result<ObjectKey> {
    let bad = |reason: &str| Error::BadKey {
        key: log_path.display().to_string(),
        reason: reason.into(),
    };
    let base: i64 = log_path
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| s.len() == crate::key::OFFSET_DIGITS)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("not <20-digit base offset>.log"))?;
    let read = |ext: &str| -> Result<Vec<u8>> {
        let path = log_path.with_extension(ext);
        match std::fs::read(&path) {
            Ok(b) => Ok(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && ext != "log" => Ok(Vec::new()),
            Err(source) => Err(Error::Io {
                op: "read",
                path,
                source,
            }),
        }
    };
    let log = read("log")?;
    let (offset_index, time_index, txn) = (read("index")?, read("timeindex")?, read("txnindex")?);
    let mut last = None;
    let mut max_ts = -1;
    for b in krecords_codec::read::Entries::new(&log) {
        let b = b.map_err(|e| bad(&e.to_string()))?;
        last = Some(b.last_offset());
        max_ts = max_ts.max(b.max_timestamp());
    }
    let end_offset = last.ok_or_else(|| bad("no batch in the segment"))?;
    let leader_epoch = format!("0\n1\n0 {base}\n");
    let files = SegmentFiles {
        log: &log,
        offset_index: &offset_index,
        time_index: &time_index,
        producer_snapshot: b"",
        leader_epoch: leader_epoch.as_bytes(),
        transaction: (!txn.is_empty()).then_some(&txn[..]),
    };
    let mut id = [0u8; 16];
    rng.fill_bytes(&mut id);
    let key = ObjectKey {
        prefix: prefix.to_string(),
        partition: partition.clone(),
        start_offset: base,
        segment_id: crate::key::KafkaUuid(id),
        suffix: Suffix::Manifest,
    };
    let metadata = RemoteLogSegmentMetadata {
        topic_id: partition.topic_id,
        topic: partition.topic.clone(),
        partition: partition.partition,
        segment_id: key.segment_id,
        start_offset: base,
        end_offset,
        max_timestamp_ms: max_ts,
        broker_id: 0,
        event_timestamp_ms: max_ts,
        segment_leader_epochs: [(0, base)].into_iter().collect(),
    };
    upload(&files, options, Some(metadata), rng)?.put(storage, &key)?;
    Ok(key)
}
