//! A segment's original `.log` as a [`std::io::Read`]: its chunks fetched with ranged reads,
//! a few of them concurrently, and decoded in order.
//!
//! Memory is bounded by `lookahead` decoded chunks plus the one being read (each at most the
//! manifest's validated `originalChunkSize`), never by the segment's size. A stream that
//! starts at byte `from` fetches nothing before the chunk holding it.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::chunk_index::{Chunk, ChunkIndex};
use crate::crypto::DataKey;
use crate::error::Result;
use crate::storage::Storage;

/// A storage shared by the threads that fetch chunks.
pub type SharedStorage = Arc<dyn Storage + Send + Sync>;

/// What a fetching thread needs to decode a chunk: the object and its transforms.
struct Source {
    storage: SharedStorage,
    log_key: String,
    compression: bool,
    key: Option<(DataKey, Vec<u8>)>,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("log_key", &self.log_key)
            .field("compression", &self.compression)
            .finish_non_exhaustive()
    }
}

impl Source {
    fn fetch(&self, chunk: &Chunk) -> Result<Vec<u8>> {
        let end = chunk
            .transformed_position
            .saturating_add(u64::from(chunk.transformed_size));
        let raw = self
            .storage
            .get_range(&self.log_key, chunk.transformed_position..end)?;
        crate::transform::detransform(
            &raw,
            chunk,
            self.compression,
            self.key.as_ref().map(|(k, aad)| (k, aad.as_slice())),
            &self.log_key,
        )
    }
}

/// The original bytes of one segment from a byte position on (fetched from the chunk holding
/// it), as a reader (see the module
/// documentation). Errors of the storage, decryption or decompression come back as
/// [`io::Error`]s wrapping the crate's [`crate::Error`].
#[derive(Debug)]
pub struct SegmentStream {
    source: Arc<Source>,
    index: ChunkIndex,
    /// The next chunk to start fetching.
    next: u32,
    /// Chunks being fetched, in order.
    inflight: VecDeque<JoinHandle<Result<Vec<u8>>>>,
    lookahead: usize,
    current: Vec<u8>,
    pos: usize,
    /// Where the stream starts in the original `.log`.
    start: u64,
    /// Bytes of the first chunk before `start`, dropped when it arrives.
    skip: usize,
    failed: bool,
}

impl SegmentStream {
    /// A stream of the chunks of `index` from the one holding original byte `from`, with at
    /// most `lookahead` (at least 1) chunks fetched ahead.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        storage: SharedStorage,
        log_key: String,
        index: ChunkIndex,
        compression: bool,
        key: Option<(DataKey, Vec<u8>)>,
        from: u64,
        lookahead: usize,
    ) -> SegmentStream {
        let first = index.chunk_at(from);
        let next = first.map_or(index.chunk_count(), |c| c.id);
        let start = from.min(u64::from(index.original_file_size()));
        let skip = first.map_or(0, |c| {
            usize::try_from(start.saturating_sub(c.original_position)).unwrap_or(0)
        });
        SegmentStream {
            source: Arc::new(Source {
                storage,
                log_key,
                compression,
                key,
            }),
            index,
            next,
            inflight: VecDeque::new(),
            lookahead: lookahead.max(1),
            current: Vec::new(),
            pos: 0,
            start,
            skip,
            failed: false,
        }
    }

    /// The position in the original `.log` of the stream's first byte.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The bytes the stream yields: from [`SegmentStream::start`] to the end of the segment.
    pub fn len(&self) -> u64 {
        u64::from(self.index.original_file_size()).saturating_sub(self.start)
    }

    /// Whether the stream yields nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Starts fetching the first `lookahead` chunks now, before the first read: a reader of
    /// the segment before this one calls it so that this one's first chunks arrive while it
    /// finishes. Adds no memory beyond the stream's own bound.
    pub fn prefetch(&mut self) {
        if !self.failed {
            self.fill();
        }
    }

    /// Starts fetching chunks until `lookahead` are in flight.
    fn fill(&mut self) {
        while self.inflight.len() < self.lookahead {
            let Some(chunk) = self.index.chunk(self.next) else {
                return;
            };
            self.next = self.next.saturating_add(1);
            let source = Arc::clone(&self.source);
            self.inflight
                .push_back(std::thread::spawn(move || source.fetch(&chunk)));
        }
    }
}

impl Read for SegmentStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.failed {
            return Err(io::Error::other("the remote segment failed to read"));
        }
        while self.pos >= self.current.len() {
            self.fill();
            let Some(handle) = self.inflight.pop_front() else {
                return Ok(0);
            };
            let decoded = handle
                .join()
                .map_err(|_| io::Error::other("a chunk fetch panicked"))
                .and_then(|r| r.map_err(io::Error::other));
            match decoded {
                Ok(bytes) => {
                    self.current = bytes;
                    self.pos = std::mem::take(&mut self.skip);
                }
                Err(e) => {
                    self.failed = true;
                    return Err(e);
                }
            }
            // Keep `lookahead` chunks in flight while this one is read.
            self.fill();
        }
        let rest = self.current.get(self.pos..).unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        buf.get_mut(..n)
            .unwrap_or_default()
            .copy_from_slice(rest.get(..n).unwrap_or(&[]));
        self.pos += n;
        Ok(n)
    }
}
