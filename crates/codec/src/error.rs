//! The one error type of krecords-codec.
//!
//! Every variant that describes malformed input carries the absolute byte position (`at`) in the
//! buffer the caller handed in, and what was expected against what was found.

use crate::Compression;
use std::fmt;

/// A result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while reading or writing Kafka records.
///
/// `at`, in every variant that has it ([`Error::position`]), is one thing: a byte position in
/// the buffer the reader was given (plus the base of [`Entries::with_base`](crate::read::Entries::with_base)),
/// the start of what was wrong. A problem inside decompressed data is reported at the position
/// of the compressed data (a v2 records section, a wrapper's value), with the position within
/// the decompressed bytes in the message, since those bytes are not in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The input ended before a field or a declared length was complete.
    Truncated {
        /// Byte position where the field starts.
        at: usize,
        /// What was being read.
        what: &'static str,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes that were left.
        available: usize,
    },
    /// A magic byte other than 0, 1 or 2.
    InvalidMagic {
        /// Position of the magic byte.
        at: usize,
        /// The value found.
        found: i8,
    },
    /// A stored CRC does not match the CRC computed over the bytes it covers.
    CrcMismatch {
        /// Position of the entry whose CRC failed.
        at: usize,
        /// CRC in the header.
        stored: u32,
        /// CRC of the bytes.
        computed: u32,
    },
    /// A declared length or count is impossible (negative, too small, too large, or inconsistent
    /// with the bytes present).
    InvalidLength {
        /// Position of the length field.
        at: usize,
        /// Which length.
        what: &'static str,
        /// What the format allows.
        expected: String,
        /// The value found.
        found: i64,
    },
    /// A varint longer than 5 bytes (or varlong longer than 10).
    InvalidVarint {
        /// Position of the first byte of the varint.
        at: usize,
        /// Maximum length in bytes of this varint kind.
        max_bytes: usize,
    },
    /// The records section does not hold what the header declares.
    RecordCountMismatch {
        /// Position of the batch.
        at: usize,
        /// Records declared by the header (or implied by `last_offset_delta`).
        declared: i64,
        /// Records found, or a description of what was found.
        found: String,
    },
    /// Structurally decodable input that breaks a rule of the format, such as a null header key,
    /// nested compression or an empty compressed wrapper.
    InvalidRecord {
        /// Position of the offending record or field.
        at: usize,
        /// What rule was broken, in lowercase words.
        reason: String,
    },
    /// Compression id 5..7 in the attributes.
    UnknownCompression {
        /// Position of the attributes.
        at: usize,
        /// The id found.
        id: u8,
    },
    /// A codec the format version does not allow (zstd in v0/v1).
    UnsupportedCompression {
        /// Position of the batch.
        at: usize,
        /// The codec.
        compression: Compression,
        /// The message format.
        magic: u8,
    },
    /// Compressed data that the codec cannot decode.
    Decompress {
        /// Position of the compressed data (start of the records section or wrapper value).
        at: usize,
        /// The codec.
        compression: Compression,
        /// What the decoder reported.
        reason: String,
    },
    /// Decompression would produce more than the configured limit.
    DecompressLimit {
        /// Position of the compressed data.
        at: usize,
        /// The codec.
        compression: Compression,
        /// The limit in bytes.
        limit: usize,
    },
    /// Compression failed (only an I/O style failure inside a codec library).
    Compress {
        /// The codec.
        compression: Compression,
        /// What the encoder reported.
        reason: String,
    },
    /// A compression level outside the codec's range.
    InvalidLevel {
        /// The codec.
        compression: Compression,
        /// The level asked for.
        level: i32,
    },
    /// A value the writer cannot represent (a record too large for an i32 length, an offset delta
    /// beyond i32, a header key that is not valid for the format).
    Unencodable {
        /// What cannot be written.
        reason: String,
    },
    /// A builder setter was called after a record had been appended. A batch's configuration
    /// (codec, timestamp type, producer fields, control flag, delete horizon, ...) shapes the
    /// records already written, so it is fixed by the first append: the late setting was not
    /// applied and the builder refuses to append or finish.
    ConfigAfterAppend {
        /// The setter called too late, such as `"compression"`.
        setter: &'static str,
    },
}

/// Matches an [`Error`] on whether its variant has a position: `$at` binds the `at` field of
/// those that do (by value, or by reference when matching a reference) for `$some`; the others
/// give `$none`. The one list of the positioned variants.
macro_rules! match_position {
    ($error:expr, $at:ident => $some:expr, $none:expr) => {
        match $error {
            Error::Truncated { at: $at, .. }
            | Error::InvalidMagic { at: $at, .. }
            | Error::CrcMismatch { at: $at, .. }
            | Error::InvalidLength { at: $at, .. }
            | Error::InvalidVarint { at: $at, .. }
            | Error::RecordCountMismatch { at: $at, .. }
            | Error::InvalidRecord { at: $at, .. }
            | Error::UnknownCompression { at: $at, .. }
            | Error::UnsupportedCompression { at: $at, .. }
            | Error::Decompress { at: $at, .. }
            | Error::DecompressLimit { at: $at, .. } => $some,
            Error::Compress { .. }
            | Error::InvalidLevel { .. }
            | Error::Unencodable { .. }
            | Error::ConfigAfterAppend { .. } => $none,
        }
    };
}

impl Error {
    /// The absolute byte position the error refers to, where it has one.
    pub fn position(&self) -> Option<usize> {
        match_position!(*self, at => Some(at), None)
    }

    /// The same error with every position moved by `delta` bytes (used when a parser ran over a
    /// sub-slice that starts `delta` bytes into the caller's buffer).
    pub fn shifted(mut self, delta: usize) -> Self {
        match_position!(&mut self, at => *at = at.saturating_add(delta), {});
        self
    }

    /// True when the error says the data is corrupt (as opposed to a limit or a writer problem).
    pub fn is_corruption(&self) -> bool {
        !matches!(
            self,
            Error::DecompressLimit { .. }
                | Error::Compress { .. }
                | Error::InvalidLevel { .. }
                | Error::Unencodable { .. }
                | Error::ConfigAfterAppend { .. }
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated {
                at,
                what,
                needed,
                available,
            } => write!(f, "byte {at}: {}", shortfall(what, *needed, *available)),
            Error::InvalidMagic { at, found } => {
                write!(f, "byte {at}: invalid magic {found} (expected 0, 1 or 2)")
            }
            Error::CrcMismatch {
                at,
                stored,
                computed,
            } => write!(
                f,
                "entry at byte {at}: crc mismatch (stored {stored}, computed {computed})"
            ),
            Error::InvalidLength {
                at,
                what,
                expected,
                found,
            } => {
                write!(f, "byte {at}: invalid {what} {found} (expected {expected})")
            }
            Error::InvalidVarint { at, max_bytes } => {
                write!(f, "byte {at}: varint longer than {max_bytes} bytes")
            }
            Error::RecordCountMismatch {
                at,
                declared,
                found,
            } => write!(
                f,
                "batch at byte {at}: header declares {declared} records but {found}"
            ),
            Error::InvalidRecord { at, reason } => write!(f, "byte {at}: {reason}"),
            Error::UnknownCompression { at, id } => {
                write!(f, "byte {at}: unknown compression id {id} (expected 0..4)")
            }
            Error::UnsupportedCompression {
                at,
                compression,
                magic,
            } => write!(
                f,
                "entry at byte {at}: {} compression is not allowed in magic {magic}",
                compression.name()
            ),
            Error::Decompress {
                at,
                compression,
                reason,
            } => write!(
                f,
                "byte {at}: invalid {} data: {reason}",
                compression.name()
            ),
            Error::DecompressLimit {
                at,
                compression,
                limit,
            } => write!(
                f,
                "byte {at}: {} data decompresses to more than the limit of {limit} bytes",
                compression.name()
            ),
            Error::Compress {
                compression,
                reason,
            } => {
                write!(f, "{} compression failed: {reason}", compression.name())
            }
            Error::InvalidLevel { compression, level } => {
                let (lo, hi) = compression.level_range().unwrap_or((0, 0));
                write!(
                    f,
                    "invalid {} level {level} (expected {lo} to {hi})",
                    compression.name()
                )
            }
            Error::Unencodable { reason } => write!(f, "cannot encode: {reason}"),
            Error::ConfigAfterAppend { setter } => write!(
                f,
                "builder setting {setter}() came after a record was appended; \
                 configure the batch before the first append"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// `"1 byte"`, `"N bytes"`.
pub(crate) fn bytes_text(n: usize) -> String {
    if n == 1 {
        "1 byte".to_owned()
    } else {
        format!("{n} bytes")
    }
}

/// `"only 1 remains"`, `"only N remain"`.
pub(crate) fn remain_text(n: usize) -> String {
    if n == 1 {
        "only 1 remains".to_owned()
    } else {
        format!("only {n} remain")
    }
}

/// `"WHAT needs N bytes but only M remain"`, in singular where a count is one.
pub(crate) fn shortfall(what: &str, needed: usize, available: usize) -> String {
    format!(
        "{what} needs {} but {}",
        bytes_text(needed),
        remain_text(available)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shortfall_of_one_byte_reads_in_the_singular() {
        let e = Error::Truncated {
            at: 33,
            what: "varint",
            needed: 1,
            available: 0,
        };
        assert_eq!(
            e.to_string(),
            "byte 33: varint needs 1 byte but only 0 remain"
        );
        let e = Error::Truncated {
            at: 19,
            what: "record value",
            needed: 2,
            available: 1,
        };
        assert_eq!(
            e.to_string(),
            "byte 19: record value needs 2 bytes but only 1 remains"
        );
    }
}
