//! Reading the remote tier: partitions and their segments in offset order, a segment's
//! original `.log` bytes (whole or the chunks covering a range) and its indexes.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::chunk_index::Chunk;
use crate::crypto::{DataKey, KeyRing};
use crate::error::{Error, Result};
use crate::key::{KafkaUuid, ObjectKey, RemotePartition, Suffix};
use crate::manifest::{IndexType, SegmentManifest};
use crate::storage::Storage;
use crate::stream::{SegmentStream, SharedStorage};

/// Caps on what untrusted objects may make the reader allocate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest manifest read: 16 MiB by default (a manifest is a few hundred bytes plus
    /// the encoded variable index, which the plugin caps at 10 MiB before compression).
    pub max_manifest_bytes: u64,
    /// The largest `originalChunkSize` accepted: 64 MiB by default. The plugin's `chunk.size`
    /// has no default and may be up to 1 GiB - 1; deployments use a few MiB. Every chunk
    /// buffer is sized by it at most.
    pub max_chunk_bytes: u32,
    /// The largest single index accepted: 256 MiB by default.
    pub max_index_bytes: u32,
    /// The most original bytes one [`Segment::read`] returns: 2 GiB by default (a Java segment
    /// is at most 2 GiB).
    pub max_read_bytes: u64,
    /// The largest decoded variable chunk index (`transformedChunks`): 10 MiB by default, the
    /// plugin's own cap; the parsed index costs up to 12 bytes per byte of it.
    pub max_encoded_chunk_index: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_manifest_bytes: 16 << 20,
            max_chunk_bytes: 64 << 20,
            max_index_bytes: 256 << 20,
            max_read_bytes: 2 << 30,
            max_encoded_chunk_index: crate::chunk_index::MAX_ENCODED_CHUNK_SIZES,
        }
    }
}

/// One uploaded segment as the listing shows it: its name and which of its three objects exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSegment {
    /// The key of the segment's manifest (the other objects differ by suffix).
    pub manifest_key: ObjectKey,
    /// The segment's base offset.
    pub start_offset: i64,
    /// The remote segment id.
    pub segment_id: KafkaUuid,
    /// Sizes of the objects present, by suffix.
    pub objects: BTreeMap<Suffix, u64>,
}

impl RemoteSegment {
    /// Whether all three objects (`.log`, `.indexes`, `.rsm-manifest`) exist.
    pub fn is_complete(&self) -> bool {
        Suffix::ALL.iter().all(|s| self.objects.contains_key(s))
    }

    /// The key of one of the segment's objects.
    pub fn key(&self, suffix: Suffix) -> String {
        self.manifest_key.with_suffix(suffix).to_string()
    }
}

/// What a listing found under the prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Each partition's segments, in offset order (then segment id).
    pub partitions: BTreeMap<RemotePartition, Vec<RemoteSegment>>,
    /// Keys under the prefix that are not objects of a segment.
    pub unrecognized: Vec<String>,
}

/// A remote tier written by Aiven's plugin: a storage, the key prefix
/// (`rsm.config.key.prefix`), the private keys of its key pairs and the limits.
#[derive(Debug)]
pub struct RemoteTier<S> {
    storage: S,
    prefix: String,
    keys: KeyRing,
    limits: Limits,
}

impl<S: Storage> RemoteTier<S> {
    /// A remote tier in `storage` under `prefix`, with no keys (unencrypted segments only) and
    /// default limits.
    pub fn new(storage: S, prefix: impl Into<String>) -> RemoteTier<S> {
        RemoteTier {
            storage,
            prefix: prefix.into(),
            keys: KeyRing::new(),
            limits: Limits::default(),
        }
    }

    /// Uses `keys` to unwrap data keys.
    pub fn with_keys(mut self, keys: KeyRing) -> RemoteTier<S> {
        self.keys = keys;
        self
    }

    /// Uses `limits`.
    pub fn with_limits(mut self, limits: Limits) -> RemoteTier<S> {
        self.limits = limits;
        self
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The storage.
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// Lists every segment under the prefix, grouped by partition, in offset order. Costs one
    /// listing of the prefix.
    ///
    /// # Errors
    ///
    /// The storage's listing error.
    pub fn list(&self) -> Result<Listing> {
        self.list_under(&self.prefix)
    }

    /// The partitions that have at least one object under the prefix, sorted by topic,
    /// topic id and partition.
    ///
    /// # Errors
    ///
    /// The storage's listing error.
    pub fn partitions(&self) -> Result<Vec<RemotePartition>> {
        Ok(self.list()?.partitions.into_keys().collect())
    }

    /// Lists the segments of one partition, in offset order.
    ///
    /// # Errors
    ///
    /// The storage's listing error.
    pub fn segments(&self, partition: &RemotePartition) -> Result<Vec<RemoteSegment>> {
        let mut listing = self.list_under(&partition.key_prefix(&self.prefix))?;
        Ok(listing.partitions.remove(partition).unwrap_or_default())
    }

    fn list_under(&self, prefix: &str) -> Result<Listing> {
        let mut segments: BTreeMap<(RemotePartition, i64, KafkaUuid), RemoteSegment> =
            BTreeMap::new();
        let mut listing = Listing::default();
        for meta in self.storage.list(prefix)? {
            let Ok(key) = ObjectKey::parse(&self.prefix, &meta.key) else {
                listing.unrecognized.push(meta.key);
                continue;
            };
            let entry = segments
                .entry((key.partition.clone(), key.start_offset, key.segment_id))
                .or_insert_with(|| RemoteSegment {
                    manifest_key: key.with_suffix(Suffix::Manifest),
                    start_offset: key.start_offset,
                    segment_id: key.segment_id,
                    objects: BTreeMap::new(),
                });
            entry.objects.insert(key.suffix, meta.size);
        }
        for ((partition, _, _), segment) in segments {
            listing
                .partitions
                .entry(partition)
                .or_default()
                .push(segment);
        }
        Ok(listing)
    }

    /// Opens a segment: reads and validates its manifest, unwraps its data key, and checks that
    /// the `.log` object has the size the chunk index accounts for.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] for a missing object, [`Error::Manifest`]/[`Error::ChunkIndex`] for a
    /// malformed manifest, [`Error::MissingKey`]/[`Error::DataKey`] for keys,
    /// [`Error::IndexMismatch`] when the `.log` object's size differs from the index's.
    pub fn open(&self, segment: &RemoteSegment) -> Result<Segment<'_, S>> {
        self.open_key(&segment.manifest_key)
    }

    /// [`RemoteTier::open`] by the key of any of the segment's objects.
    ///
    /// # Errors
    ///
    /// As [`RemoteTier::open`].
    pub fn open_key(&self, key: &ObjectKey) -> Result<Segment<'_, S>> {
        let manifest_key = key.with_suffix(Suffix::Manifest).to_string();
        let bytes = self
            .storage
            .get(&manifest_key, self.limits.max_manifest_bytes)?;
        let manifest =
            SegmentManifest::parse_with_limit(&bytes, self.limits.max_encoded_chunk_index)?;
        let ocs = manifest.chunk_index.original_chunk_size();
        if ocs > self.limits.max_chunk_bytes {
            return Err(crate::error::manifest(
                "chunkIndex.originalChunkSize",
                format!(
                    "{ocs} is above the limit of {}",
                    self.limits.max_chunk_bytes
                ),
            ));
        }
        let data_key = match &manifest.encryption {
            Some(e) => Some(self.keys.unwrap_data_key(&e.key_id, &e.wrapped_data_key)?),
            None => None,
        };
        let log_key = key.with_suffix(Suffix::Log).to_string();
        let found = self.storage.size(&log_key)?;
        let expected = manifest.chunk_index.transformed_size();
        if found != expected {
            return Err(Error::IndexMismatch {
                key: log_key,
                expected,
                found,
            });
        }
        Ok(Segment {
            tier: self,
            key: key.with_suffix(Suffix::Manifest),
            manifest,
            data_key,
        })
    }
}

/// An opened segment: a validated manifest and its unwrapped data key.
#[derive(Debug)]
pub struct Segment<'t, S> {
    tier: &'t RemoteTier<S>,
    key: ObjectKey,
    manifest: SegmentManifest,
    data_key: Option<DataKey>,
}

impl Segment<'_, SharedStorage> {
    /// The original `.log` from byte `from` to its end (fetched from the chunk holding
    /// `from`), as a reader that
    /// fetches and decodes up to `lookahead` chunks ahead (see [`crate::stream`]).
    pub fn stream(&self, from: u64, lookahead: usize) -> SegmentStream {
        let key = self
            .data_key
            .clone()
            .zip(self.manifest.encryption.as_ref().map(|e| e.aad.clone()));
        SegmentStream::new(
            std::sync::Arc::clone(&self.tier.storage),
            self.key.with_suffix(Suffix::Log).to_string(),
            self.manifest.chunk_index.clone(),
            self.manifest.compression,
            key,
            from,
            lookahead,
        )
    }
}

/// A segment's original `.log` read chunk by chunk ([`Segment::chunks`]).
#[derive(Debug)]
pub struct ChunkReader<'s, S> {
    segment: &'s Segment<'s, S>,
    /// The original position of the next chunk to fetch.
    next: u64,
    buf: Vec<u8>,
    pos: usize,
    failed: bool,
}

impl<S> ChunkReader<'_, S> {
    /// The crate's error inside an I/O error this reader returned, if it is one.
    pub fn error_of(e: &std::io::Error) -> Option<&Error> {
        e.get_ref().and_then(|inner| inner.downcast_ref::<Error>())
    }
}

impl<S: Storage> std::io::Read for ChunkReader<'_, S> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.failed {
            return Err(std::io::Error::other("the remote segment failed to read"));
        }
        while self.pos >= self.buf.len() {
            if self.next >= self.segment.original_size() {
                return Ok(0);
            }
            let chunk = self
                .segment
                .read(self.next..self.next.saturating_add(1))
                .map_err(|e| {
                    self.failed = true;
                    std::io::Error::other(e)
                })?;
            let end = chunk.start.saturating_add(chunk.bytes.len() as u64);
            if end <= self.next {
                self.failed = true;
                return Err(std::io::Error::other(
                    "a chunk of the remote segment decoded to no bytes",
                ));
            }
            self.pos = usize::try_from(self.next.saturating_sub(chunk.start)).unwrap_or(0);
            self.next = end;
            self.buf = chunk.bytes;
        }
        let rest = self.buf.get(self.pos..).unwrap_or(&[]);
        let n = rest.len().min(out.len());
        if let (Some(dst), Some(src)) = (out.get_mut(..n), rest.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.pos = self.pos.saturating_add(n);
        Ok(n)
    }
}

/// Original bytes of a segment read by chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkRead {
    /// The position in the original `.log` of the first byte of `bytes` (a chunk boundary).
    pub start: u64,
    /// The original bytes of the chunks read.
    pub bytes: Vec<u8>,
}

impl<S: Storage> Segment<'_, S> {
    /// The manifest.
    pub fn manifest(&self) -> &SegmentManifest {
        &self.manifest
    }

    /// The segment's manifest key.
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// The size of the original `.log`.
    pub fn original_size(&self) -> u64 {
        u64::from(self.manifest.chunk_index.original_file_size())
    }

    /// The whole original `.log`: every chunk fetched, decrypted and decompressed. Costs one
    /// ranged read per chunk.
    ///
    /// # Errors
    ///
    /// As [`Segment::read`].
    pub fn read_all(&self) -> Result<Vec<u8>> {
        Ok(self.read(0..self.original_size())?.bytes)
    }

    /// The whole original `.log` as a reader fetching and decoding one chunk at a time on the
    /// caller's thread: memory is one chunk, whatever the segment's size. A read error is an
    /// [`std::io::Error`] wrapping this crate's [`Error`] (see [`ChunkReader::error_of`]).
    pub fn chunks(&self) -> ChunkReader<'_, S> {
        ChunkReader {
            segment: self,
            next: 0,
            buf: Vec::new(),
            pos: 0,
            failed: false,
        }
    }

    /// The chunks covering original bytes `range`, decoded: whole chunks, so the result starts
    /// at or before `range.start` and ends at or after `range.end`.
    ///
    /// # Errors
    ///
    /// [`Error::Range`] for a range outside the segment; [`Error::TooLarge`] when the chunks
    /// covering it hold more than `max_read_bytes`;
    /// [`Error::Truncated`] for a short object; [`Error::Decrypt`] or [`Error::Decompress`]
    /// for a chunk that does not decode to its original size.
    pub fn read(&self, range: Range<u64>) -> Result<ChunkRead> {
        let size = self.original_size();
        if range.start > range.end || range.end > size {
            return Err(Error::Range {
                start: range.start,
                end: range.end,
                size,
            });
        }
        let index = &self.manifest.chunk_index;
        let mut chunks = index.chunks_for_range(range.start, range.end).peekable();
        let start = chunks.peek().map_or(range.start, |c| c.original_position);
        let mut bytes = Vec::new();
        for chunk in chunks {
            let total = u64::try_from(bytes.len())
                .unwrap_or(u64::MAX)
                .saturating_add(u64::from(chunk.original_size));
            if total > self.tier.limits.max_read_bytes {
                return Err(Error::TooLarge {
                    key: self.key.with_suffix(Suffix::Log).to_string(),
                    size: total,
                    limit: self.tier.limits.max_read_bytes,
                });
            }
            let plain = self.read_chunk(&chunk)?;
            bytes.extend_from_slice(&plain);
        }
        Ok(ChunkRead { start, bytes })
    }

    /// One chunk, fetched and decoded.
    ///
    /// # Errors
    ///
    /// As [`Segment::read`].
    pub fn read_chunk(&self, chunk: &Chunk) -> Result<Vec<u8>> {
        let key = self.key.with_suffix(Suffix::Log).to_string();
        let end = chunk
            .transformed_position
            .saturating_add(u64::from(chunk.transformed_size));
        let raw = self
            .tier
            .storage
            .get_range(&key, chunk.transformed_position..end)?;
        crate::transform::detransform(
            &raw,
            chunk,
            self.manifest.compression,
            self.data_key
                .as_ref()
                .zip(self.manifest.encryption.as_ref().map(|e| e.aad.as_slice())),
            &key,
        )
    }

    /// One index, decrypted, or `None` when the manifest has none of that type (only the
    /// transaction index may be absent). An empty index is `Some(vec![])`.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`] above `max_index_bytes`; [`Error::Truncated`] for a short
    /// `.indexes` object; [`Error::Decrypt`] for an altered index.
    pub fn index(&self, index: IndexType) -> Result<Option<Vec<u8>>> {
        let Some(slice) = self.manifest.segment_indexes.get(index) else {
            return Ok(None);
        };
        let key = self.key.with_suffix(Suffix::Indexes).to_string();
        if slice.size > self.tier.limits.max_index_bytes {
            return Err(Error::TooLarge {
                key,
                size: u64::from(slice.size),
                limit: u64::from(self.tier.limits.max_index_bytes),
            });
        }
        if slice.size == 0 {
            return Ok(Some(Vec::new()));
        }
        let raw = self
            .tier
            .storage
            .get_range(&key, u64::from(slice.position)..slice.end())?;
        let plain = match (&self.data_key, &self.manifest.encryption) {
            (Some(dk), Some(e)) => dk.open(&raw, &e.aad).ok_or(Error::Decrypt {
                key,
                chunk: 0,
                at: u64::from(slice.position),
            })?,
            _ => raw.to_vec(),
        };
        Ok(Some(plain))
    }
}
