//! The crate's one error type.

use std::fmt;
use std::path::PathBuf;

/// A failure to read the remote tier: storage I/O, a malformed object name, manifest or chunk
/// index, a missing or wrong key, or a chunk that does not decrypt or decompress.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Storage I/O failed on an object.
    Io {
        /// What was being done ("read", "list").
        op: &'static str,
        /// The object key or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An object does not exist.
    NotFound {
        /// The object key.
        key: String,
    },
    /// An object is larger than the configured cap for its kind.
    TooLarge {
        /// The object key.
        key: String,
        /// Its size in bytes.
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// A ranged read returned fewer bytes than asked: the object is shorter than its manifest says.
    Truncated {
        /// The object key.
        key: String,
        /// The byte position read from.
        at: u64,
        /// Bytes asked for.
        needed: u64,
        /// Bytes the object had there.
        available: u64,
    },
    /// An object key is not `<prefix><topic>-<topicId>/<partition>/<offset>-<uuid>.<suffix>`.
    BadKey {
        /// The key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A remote tier location that cannot be opened: empty, not a directory, not a URL.
    BadLocation {
        /// The location as given.
        location: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A manifest is not valid JSON of the plugin's shape, or its values are inconsistent.
    Manifest {
        /// The manifest's field path, as `chunkIndex.originalChunkSize`.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The encoded variable chunk index (`transformedChunks`) is malformed.
    ChunkIndex {
        /// The byte position in the decoded blob.
        at: usize,
        /// What is wrong.
        reason: String,
    },
    /// The manifest's chunk index does not match the object it describes.
    IndexMismatch {
        /// The object key.
        key: String,
        /// Bytes the chunk index accounts for.
        expected: u64,
        /// Bytes the object has.
        found: u64,
    },
    /// The segment is encrypted with a key pair that was not given.
    MissingKey {
        /// The key pair id named in the manifest.
        key_id: String,
    },
    /// A private key could not be loaded.
    Key {
        /// Its file or id.
        what: String,
        /// Why.
        reason: String,
    },
    /// The wrapped data key did not decrypt with the named private key.
    DataKey {
        /// The key pair id.
        key_id: String,
    },
    /// A chunk failed to decrypt (wrong key, wrong AAD or altered bytes).
    Decrypt {
        /// The object key.
        key: String,
        /// The chunk number.
        chunk: u32,
        /// The chunk's position in the object.
        at: u64,
    },
    /// A chunk failed to decompress or decompressed to the wrong size.
    Decompress {
        /// The object key.
        key: String,
        /// The chunk number.
        chunk: u32,
        /// The chunk's position in the object.
        at: u64,
        /// What is wrong.
        reason: String,
    },
    /// A byte range asked of a segment lies outside it.
    Range {
        /// The first byte asked for.
        start: u64,
        /// One past the last byte asked for.
        end: u64,
        /// The segment's original size.
        size: u64,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { op, path, source } => write!(f, "{op} {}: {source}", path.display()),
            Error::NotFound { key } => write!(f, "object {key}: not found"),
            Error::TooLarge { key, size, limit } => {
                write!(f, "object {key}: {size} bytes, above the limit of {limit}")
            }
            Error::Truncated {
                key,
                at,
                needed,
                available,
            } => write!(
                f,
                "object {key}: truncated at byte {at}: needed {needed} bytes, {available} available"
            ),
            Error::BadKey { key, reason } => write!(f, "object key {key:?}: {reason}"),
            Error::BadLocation { location, reason } => write!(f, "{location}: {reason}"),
            Error::Manifest { field, reason } => write!(f, "manifest field {field}: {reason}"),
            Error::ChunkIndex { at, reason } => {
                write!(f, "encoded chunk index at byte {at}: {reason}")
            }
            Error::IndexMismatch {
                key,
                expected,
                found,
            } => write!(
                f,
                "object {key}: the chunk index accounts for {expected} bytes, the object has {found}"
            ),
            Error::MissingKey { key_id } => {
                write!(f, "segment encrypted with key pair {key_id:?}, which was not given")
            }
            Error::Key { what, reason } => write!(f, "private key {what}: {reason}"),
            Error::DataKey { key_id } => write!(
                f,
                "data key does not decrypt with key pair {key_id:?} (wrong private key?)"
            ),
            Error::Decrypt { key, chunk, at } => write!(
                f,
                "object {key}: chunk {chunk} at byte {at} does not decrypt (wrong key or altered bytes)"
            ),
            Error::Decompress {
                key,
                chunk,
                at,
                reason,
            } => write!(f, "object {key}: chunk {chunk} at byte {at}: {reason}"),
            Error::Range { start, end, size } => {
                write!(f, "byte range {start}..{end} outside a segment of {size} bytes")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A manifest error for `field`.
pub(crate) fn manifest(field: &str, reason: impl Into<String>) -> Error {
    Error::Manifest {
        field: field.to_string(),
        reason: reason.into(),
    }
}
