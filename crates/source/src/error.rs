//! Errors of the sources layer, and the one mapping of every library error to an exit code.
//!
//! Every krec command ends the same way: 0 when everything was fine, 1 when the data has a
//! problem (a corrupt entry, a truncated file, a request the log refuses), 2 for usage and I/O
//! errors (bad arguments, a missing file, a broker that cannot be reached). [`ErrorClass`]
//! names the two failing kinds and [`classify_log`], [`classify_codec`], [`classify_client`] and
//! [`Error::class`] decide which kind an error is, here and nowhere else.

use std::io;

/// What kind of failure an error is, which decides the exit code ([`ErrorClass::exit_code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The data has a problem: exit 1.
    Data,
    /// Bad arguments, or input that is not what it should be (exit 2).
    Usage,
    /// An I/O error reading or writing, or a connection that failed (exit 2).
    Io,
}

impl ErrorClass {
    /// The process exit code: 1 for data problems, 2 for usage and I/O errors.
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorClass::Data => 1,
            ErrorClass::Usage | ErrorClass::Io => 2,
        }
    }
}

/// How a file or stream that ends inside an entry (a truncated tail) ends every command that
/// reads it to its end (`verify`, `dump`, `explain`, `stats`): a data problem, exit 1, as
/// kafka-dump-log reports "invalid bytes at the end". A read that stops inside an entry on
/// purpose (a byte budget, a fetch the broker cut short) has no truncated tail.
pub const TRUNCATED_TAIL: ErrorClass = ErrorClass::Data;

/// How a log error ends a command: a request the log refuses as a broker would (an append that
/// fails validation, a read outside the log) and a segment damaged in the middle of the log
/// (`DamagedSegment`) and a damaged `krec-log.json` (`DamagedConfig`, whichever command reads
/// it, a writer's open included) are data problems; storage errors and damaged derived files
/// (indexes, checkpoints) are I/O; a directory that is not a log, a lock, a configuration
/// given as an argument are usage errors.
pub fn classify_log(e: &krecords_log::Error) -> ErrorClass {
    use krecords_log::Error as E;
    if e.is_storage_error() || matches!(e, E::CorruptFile { .. }) {
        return ErrorClass::Io;
    }
    if matches!(
        e,
        E::NotALog { .. }
            | E::NoSuchDirectory { .. }
            | E::AlreadyExists { .. }
            | E::InvalidConfig { .. }
            | E::LogLocked { .. }
            | E::BrokerRunning { .. }
            | E::ReadOnly { .. }
    ) {
        return ErrorClass::Usage;
    }
    match e {
        E::Codec { source, .. } => classify_codec(source),
        _ => ErrorClass::Data,
    }
}

/// How a codec error met while reading data ends a command: everything the data itself causes
/// is a data problem (exit 1), a record that decompresses past the limit included, as
/// [`classify_log`] has it for the same error met in a partition directory; an error only a
/// writer meets (a compression level out of range, a record a format cannot hold, a codec that
/// failed to compress) is a usage error (exit 2).
pub fn classify_codec(e: &krecords_codec::Error) -> ErrorClass {
    use krecords_codec::Error as E;
    match e {
        E::Compress { .. } | E::InvalidLevel { .. } | E::Unencodable { .. } => ErrorClass::Usage,
        E::ConfigAfterAppend { .. } => ErrorClass::Usage,
        _ => ErrorClass::Data,
    }
}

/// How an I/O error ends a command: exit 2, except for a log error a reader passed on as one
/// (the damage a read of a partition directory reached), classified as [`classify_log`] does.
/// A source with no segments (`NoSegments`) is a usage error: nothing failed to read.
pub fn classify_io(e: &io::Error) -> ErrorClass {
    if e.get_ref().is_some_and(|i| i.is::<NoSegments>()) {
        return ErrorClass::Usage;
    }
    passed_log_error(e).map_or(ErrorClass::Io, classify_log)
}

/// A local source that holds no `.log` segment (an empty partition directory, a broker's data
/// directory whose partitions are all empty, a directory that is neither): not an I/O error
/// (nothing failed to read) but a source that cannot be read as asked, a usage error, as `krec
/// verify` and `krec convert` have it for the same directory. The listing of local sources
/// returns it inside an `io::Error` of kind `NotFound`, whose message is its own;
/// [`classify_io`] finds it there.
#[derive(Debug)]
pub(crate) struct NoSegments(pub(crate) String);

impl std::fmt::Display for NoSegments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoSegments {}

/// The log error a reader passed on inside an I/O error (the damage a read of a partition
/// directory reached), if `e` is one.
pub fn passed_log_error(e: &io::Error) -> Option<&krecords_log::Error> {
    e.get_ref()
        .and_then(|i| i.downcast_ref::<krecords_log::Error>())
}

/// Whether an I/O error a reader passed on names its place itself, so that what was being
/// done (`cannot read NAME`) is not said in front of it: a log error (the damage a read of a
/// partition directory reached, naming its file) or a live partition's client error (naming
/// the partition, and where a read it stopped stopped).
pub fn names_its_place(e: &io::Error) -> bool {
    let passed = e.get_ref().and_then(|i| i.downcast_ref::<Error>());
    passed_log_error(e).is_some() || matches!(passed, Some(Error::Client { .. }))
}

/// How a client error ends a command: data that does not parse as log entries is a data
/// problem; everything else is exit 2, as an I/O error (no connection, a connection lost, no
/// answer in time) or a usage error (configuration, TLS, authentication, broker errors).
pub fn classify_client(e: &krecords_client::Error) -> ErrorClass {
    match e {
        krecords_client::Error::Corrupt { .. } => ErrorClass::Data,
        e if e.is_network() => ErrorClass::Io,
        _ => ErrorClass::Usage,
    }
}

/// How a remote tier error ends a command: objects whose content does not match their
/// manifest (a chunk that does not decrypt or decompress, a short object, a malformed
/// manifest) are data problems; storage errors, missing objects, keys that are missing or do
/// not fit and malformed locations are exit 2.
#[cfg(feature = "remote")]
pub fn classify_remote(e: &krecords_remote::Error) -> ErrorClass {
    use krecords_remote::Error as E;
    match e {
        E::Truncated { .. }
        | E::Manifest { .. }
        | E::ChunkIndex { .. }
        | E::IndexMismatch { .. }
        | E::Decrypt { .. }
        | E::Decompress { .. }
        | E::TooLarge { .. } => ErrorClass::Data,
        E::MissingKey { .. } | E::Key { .. } | E::DataKey { .. } | E::BadKey { .. } => {
            ErrorClass::Usage
        }
        _ => ErrorClass::Io,
    }
}

/// An error of the sources layer, naming the source it happened on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad arguments or a source that cannot be read as asked (exit 2).
    #[error("{0}")]
    Usage(String),
    /// An I/O error (exit 2): what was being done, and the error.
    #[error("{}{source}", if what.is_empty() { String::new() } else { format!("{what}: ") })]
    Io {
        /// What was being done (`cannot open x.log`); may be empty.
        what: String,
        /// The error.
        source: io::Error,
    },
    /// A client error on a live source.
    #[error("{name}: {}{source}", stopped_at(*next_offset))]
    Client {
        /// The source (`kafka://host:port/topic/partition`).
        name: String,
        /// The error.
        source: Box<krecords_client::Error>,
        /// Where a read the error stopped in its middle stopped: the first offset it did not
        /// read (`None`: the error is not one of a read, or came before it started).
        next_offset: Option<i64>,
    },
    /// A log error on a partition directory (the directory named once: not again in front of
    /// an error that names a file in it, [`named_once`]).
    #[error("{}", named_once(name, &source.to_string()))]
    Log {
        /// The directory.
        name: String,
        /// The error.
        source: Box<krecords_log::Error>,
    },
    /// The data has a problem (exit 1).
    #[error("{0}")]
    Data(String),
    /// A position outside a partition (exit 2, a usage error): "offset 5000 is out of range:
    /// the partition holds [0, 1050)", after the partition's name once the read names it. A
    /// read of many partitions leaves such a partition out rather than stopping.
    #[error("{0}")]
    OutOfRange(String),
    /// An error reading a remote tier location.
    #[cfg(feature = "remote")]
    #[error("{name}: {source}")]
    Remote {
        /// The location or partition.
        name: String,
        /// The error.
        source: Box<krecords_remote::Error>,
    },
}

/// What a live read stopped by an error says of where it stopped (`stopped at offset 3 (not
/// read): `, said once, after the partition's name); nothing for an error outside a read.
fn stopped_at(next_offset: Option<i64>) -> String {
    next_offset.map_or_else(String::new, |n| {
        format!("stopped at offset {n} (not read): ")
    })
}

/// `message` after the source's `name` (`name: message`), or alone when it names the source
/// already: it starts with `name` itself or with a path under it (the log errors of a
/// partition directory name its segment file), so that a path is not said twice.
///
/// # Examples
///
/// ```
/// use krecords_source::named_once;
/// assert_eq!(named_once("d/t-0", "d/t-0/00000000000000000000.log: byte 0: damaged"),
///            "d/t-0/00000000000000000000.log: byte 0: damaged");
/// assert_eq!(named_once("d/t-0", "offset 9 is out of range"), "d/t-0: offset 9 is out of range");
/// assert_eq!(named_once("d/t-0", "d/t-01: x"), "d/t-0: d/t-01: x");
/// ```
pub fn named_once(name: &str, message: &str) -> String {
    let named = !name.is_empty()
        && message.strip_prefix(name).is_some_and(|rest| {
            rest.starts_with(':')
                || rest.starts_with('/')
                || rest.starts_with(std::path::MAIN_SEPARATOR)
        });
    if named {
        message.to_owned()
    } else {
        format!("{name}: {message}")
    }
}

impl Error {
    /// A client error on the live source `name`.
    pub fn client(name: impl Into<String>, source: krecords_client::Error) -> Error {
        Error::Client {
            name: name.into(),
            source: Box::new(source),
            next_offset: None,
        }
    }

    /// An error met reading `name` (an entry source's I/O error): the client error of a live
    /// partition when the reader passed one on inside it (it names the partition and where
    /// its read stopped), so that the source is named once; else an I/O error
    /// `cannot read NAME`.
    pub fn reading(name: &str, e: io::Error) -> Error {
        if passed_log_error(&e).is_some() || !names_its_place(&e) {
            return Error::io(format!("cannot read {name}"), e);
        }
        match e.into_inner().map(|i| i.downcast::<Error>()) {
            Some(Ok(passed)) => *passed,
            Some(Err(other)) => Error::io(format!("cannot read {name}"), io::Error::other(other)),
            None => Error::Usage(format!("cannot read {name}")),
        }
    }

    /// The error with the partition's `name` in front of a usage or out-of-range message
    /// (other errors name their source already).
    pub fn named(self, name: &str) -> Error {
        match self {
            Error::Usage(m) => Error::Usage(format!("{name}: {m}")),
            Error::OutOfRange(m) => Error::OutOfRange(format!("{name}: {m}")),
            e => e,
        }
    }

    /// A log error on the directory `name`.
    pub fn log(name: impl Into<String>, source: krecords_log::Error) -> Error {
        Error::Log {
            name: name.into(),
            source: Box::new(source),
        }
    }

    /// Whether this is damage in the middle of a partition directory's log that a read or a
    /// question about its end reached ([`krecords_log::Log::damage`]).
    pub fn is_damage(&self) -> bool {
        matches!(
            self.log_error(),
            Some(krecords_log::Error::DamagedSegment { .. })
        )
    }

    /// The log error this is, on a partition directory or passed on by its reader inside an
    /// I/O error ([`passed_log_error`]).
    pub fn log_error(&self) -> Option<&krecords_log::Error> {
        match self {
            Error::Log { source, .. } => Some(source.as_ref()),
            Error::Io { source, .. } => passed_log_error(source),
            _ => None,
        }
    }

    /// The kind of failure, for the exit code.
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Usage(_) | Error::OutOfRange(_) => ErrorClass::Usage,
            Error::Io { source, .. } => classify_io(source),
            Error::Client { source, .. } => classify_client(source),
            Error::Log { source, .. } => classify_log(source),
            Error::Data(_) => ErrorClass::Data,
            #[cfg(feature = "remote")]
            Error::Remote { source, .. } => classify_remote(source),
        }
    }

    /// A remote tier error on the location or partition `name`.
    #[cfg(feature = "remote")]
    pub fn remote(name: impl Into<String>, source: krecords_remote::Error) -> Error {
        Error::Remote {
            name: name.into(),
            source: Box::new(source),
        }
    }

    /// An I/O error with what was being done.
    pub fn io(what: impl Into<String>, source: io::Error) -> Error {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}

/// The exit code of an error: 1 for data problems, 2 for usage and I/O errors.
///
/// # Examples
///
/// ```
/// use krecords_source::{exit_code, Error};
/// assert_eq!(exit_code(&Error::Usage("bad".into())), 2);
/// assert_eq!(exit_code(&Error::Data("corrupt".into())), 1);
/// ```
pub fn exit_code(e: &Error) -> u8 {
    e.class().exit_code()
}

/// The I/O error behind `e`, found down its chain of sources: what a write through a library's
/// writer failed with (arrow's and parquet's `External` and `Io error`, DataFusion's `IO
/// error` wrap it), if it was one.
pub fn io_cause<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a io::Error> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            return Some(io);
        }
        next = e.source();
    }
    None
}

/// A failed write of `path` as an I/O error whose message names it: `cannot {op} PATH: CAUSE`,
/// the cause being the I/O error behind `e` ([`io_cause`], of its kind: `No space left on
/// device (os error 28)`, without the writing library's wrapper) or else `e`'s own message
/// (of kind `Other`).
pub fn write_error(
    op: &str,
    path: &std::path::Path,
    e: &(dyn std::error::Error + 'static),
) -> io::Error {
    let (kind, cause) = match io_cause(e) {
        Some(io) => (io.kind(), io.to_string()),
        None => (io::ErrorKind::Other, e.to_string()),
    };
    io::Error::new(kind, format!("cannot {op} {}: {cause}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_read_stopped_by_an_error_names_its_partition_and_offset_once() {
        let name = "kafka://b:9092/t/0";
        let stopped = Error::Client {
            name: name.into(),
            source: Box::new(krecords_client::Error::Config("gone".into())),
            next_offset: Some(3),
        };
        let passed = io::Error::other(stopped);
        assert!(names_its_place(&passed));
        let e = Error::reading(name, passed);
        assert_eq!(
            e.to_string(),
            "kafka://b:9092/t/0: stopped at offset 3 (not read): configuration: gone"
        );
        // Outside a read, no offset; any other I/O error is what it was.
        let e = Error::client(name, krecords_client::Error::Config("x".into()));
        assert_eq!(e.to_string(), "kafka://b:9092/t/0: configuration: x");
        let e = Error::reading("f.log", io::Error::from(io::ErrorKind::NotFound));
        assert!(e.to_string().starts_with("cannot read f.log: "), "{e}");
    }

    #[test]
    fn log_errors_split_into_refusals_and_usage() {
        let refused = krecords_log::Error::OffsetOutOfRange {
            offset: 5,
            log_start_offset: 0,
            log_end_offset: 3,
        };
        assert_eq!(classify_log(&refused), ErrorClass::Data);
        let not_a_log = krecords_log::Error::NotALog { path: "/x".into() };
        assert_eq!(classify_log(&not_a_log).exit_code(), 2);
        let e = Error::io("cannot open x", io::Error::from(io::ErrorKind::NotFound));
        assert_eq!(exit_code(&e), 2);
        assert!(e.to_string().starts_with("cannot open x: "), "{e}");
    }

    #[test]
    fn a_source_with_no_segments_is_a_usage_error_not_an_io_error() {
        let empty = tempfile::tempdir().unwrap();
        let e = crate::spec::expand_local(&[empty.path().to_path_buf()]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(classify_io(&e), ErrorClass::Usage);
        assert!(e.to_string().contains("no .log segments here"), "{e}");
        let e = Error::io("cannot list input", e);
        assert_eq!(e.class(), ErrorClass::Usage);
        // A listing that fails is still an I/O error.
        let missing = io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(classify_io(&missing), ErrorClass::Io);
    }

    #[test]
    fn a_record_past_the_decompression_limit_is_a_data_problem_wherever_it_is_met() {
        use krecords_codec::{Compression, Error as C};
        let bomb = C::DecompressLimit {
            at: 61,
            compression: Compression::Zstd,
            limit: 1 << 20,
        };
        assert_eq!(classify_codec(&bomb), ErrorClass::Data);
        let in_a_log = krecords_log::Error::from(bomb);
        assert_eq!(classify_log(&in_a_log), ErrorClass::Data);
        let level = C::InvalidLevel {
            compression: Compression::Zstd,
            level: 99,
        };
        assert_eq!(classify_codec(&level), ErrorClass::Usage);
        // The same rule for a writer's error met inside the log.
        assert_eq!(
            classify_log(&krecords_log::Error::from(level)),
            ErrorClass::Usage
        );
    }

    /// A write failed through a library's wrapper (`External: ...` as parquet wraps an I/O
    /// error): the message names the file and says the I/O error alone, of its kind.
    #[test]
    fn a_write_error_names_the_file_and_the_cause_without_wrappers() {
        #[derive(Debug)]
        struct Wrapper(io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "External: {}", self.0)
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let full = Wrapper(io::Error::from_raw_os_error(28));
        let e = write_error("write", std::path::Path::new("out/r.parquet"), &full);
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        assert_eq!(
            e.to_string(),
            "cannot write out/r.parquet: No space left on device (os error 28)"
        );
        // Without an I/O error behind it, the library's own message.
        let other = io::Error::other("not an os error");
        let e = write_error("write", std::path::Path::new("x"), &other);
        assert_eq!(e.to_string(), "cannot write x: not an os error");
    }
}
