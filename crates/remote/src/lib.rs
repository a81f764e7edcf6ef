//! Kafka's remote tier (KIP-405) as Aiven's tiered-storage-for-apache-kafka plugin writes it,
//! read without a broker.
//!
//! The plugin uploads each closed segment as three objects named by [`key::ObjectKey`]:
//! `<prefix><topic>-<topicId>/<partition>/<20-digit start offset>-<segment id>.{log,indexes,rsm-manifest}`.
//! The `.log` is the segment cut into chunks, each compressed with zstd and/or sealed with
//! AES-256-GCM on its own; the JSON manifest ([`manifest::SegmentManifest`]) holds the chunk
//! index ([`chunk_index::ChunkIndex`]), the slices of the `.indexes` object, the compression
//! flag and the RSA-wrapped data key ([`crypto`]).
//!
//! - [`RemoteTier`] over a [`storage::Storage`] (a [`storage::FileSystemStorage`] for the
//!   plugin's filesystem backend) lists partitions and their segments in offset order and
//!   opens a [`Segment`]: the original `.log` bytes whole or by the chunks covering a range,
//!   and each index.
//! - Every length in a manifest or object is validated before use: chunk buffers are sized by
//!   a chunk's original size, itself capped by [`Limits`]; no input panics.
//! - [`write::upload`] produces the three objects as the plugin does, for tests and fixtures.
//!
//! # Example
//!
//! ```
//! use krecords_remote::key::{KafkaUuid, ObjectKey, RemotePartition, Suffix};
//! use krecords_remote::storage::FileSystemStorage;
//! use krecords_remote::write::{upload, SegmentFiles, UploadOptions};
//! use krecords_remote::RemoteTier;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let storage = FileSystemStorage::new(dir.path());
//! let log: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
//! let files = SegmentFiles { log: &log, offset_index: b"idx", ..SegmentFiles::default() };
//! let options = UploadOptions { chunk_size: 4096, compression: true, encryption: None };
//! let uploaded = upload(&files, &options, None, &mut rand::rngs::OsRng)?;
//! let key = ObjectKey {
//!     prefix: "tiered/".into(),
//!     partition: RemotePartition { topic: "orders".into(), topic_id: KafkaUuid([7; 16]), partition: 0 },
//!     start_offset: 0,
//!     segment_id: KafkaUuid([9; 16]),
//!     suffix: Suffix::Manifest,
//! };
//! uploaded.put(&storage, &key)?;
//!
//! let tier = RemoteTier::new(storage, "tiered/");
//! let listing = tier.list()?;
//! let segments = &listing.partitions[&key.partition];
//! let segment = tier.open(&segments[0])?;
//! assert_eq!(segment.manifest().chunk_index.chunk_count(), 3);
//! assert_eq!(segment.read_all()?, log);
//! // Bytes 5000..5001 lie in the second chunk: only it is fetched and decoded.
//! let read = segment.read(5000..5001)?;
//! assert_eq!((read.start, read.bytes.len()), (4096, 4096));
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod crypto;
mod error;
pub mod metadata;
pub(crate) mod ordered;
pub mod reader;
pub mod storage;
pub mod stream;
pub mod verify;
pub mod write;

#[cfg(feature = "object-store")]
pub mod location;
#[cfg(feature = "object-store")]
pub mod objstore;

krecords_codec::untrusted_modules! {
    pub mod chunk_index;
    pub mod key;
    pub mod manifest;
    mod transform;
}

pub use error::{Error, Result};
pub use reader::{ChunkRead, Limits, Listing, RemoteSegment, RemoteTier, Segment};
