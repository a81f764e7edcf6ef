//! Shipping Kafka data into a topic exactly once (`krec ship` as a library).
//!
//! Sources — local logs and partition directories, lists of segment files, a stream of entries
//! (standard input), a partition of another cluster — are read at read_committed, each fetch is
//! planned with [`plan`] (v2 batches shipped as they are, others re-batched or up-converted;
//! control batches and aborted transactions left out), and the batches go out with the client's
//! [`krecords_client::TransactionalProducer`] in target transactions that also commit where
//! each source stopped. The protocol (docs/design.md, "krec ship"):
//!
//! * transactional id and consumer group `krec-ship-JOB` ([`Job`]);
//! * at start: InitProducerId (fences an older run of the job and aborts its open
//!   transaction), then OffsetFetch with require_stable: the group's committed offset of each
//!   target partition carries, in its metadata, the position (next source offset) of every
//!   source shipped to that partition, keyed by what the source holds (topic id and
//!   partition, or its first entry: a copied or moved source resumes) ([`Positions`], format
//!   `krec-ship/2`); the committed offset itself is the target partition's end, so the
//!   group shows no lag once everything is shipped;
//! * then per transaction (up to [`ShipOptions::txn_bytes`] of source data): Produce the
//!   batches, TxnOffsetCommit the new positions, EndTxn commit. A crash anywhere leaves either
//!   the whole transaction (data and position) or none of it, so running the job again ships
//!   every source record exactly once. [`ShipOptions::stop`] (SIGTERM in `krec ship`) ends
//!   the job after committing what was sent.
//!
//! The target partitions are shipped in lanes (one per target partition, its sources in
//! order), up to [`ShipOptions::parallel`] at once, each on a connection of its own.
//!
//! ```no_run
//! use krecords_ship::{ship, Event, ShipOptions, Sources, Target};
//! use std::ops::ControlFlow;
//!
//! let target = Target::new("localhost:9092", "orders", None);
//! let mut sources = Sources::new(target.partition);
//! sources.add_path("/var/kafka/data/orders-0")?;
//! let report = ship(&target, sources.finish()?, &ShipOptions::default(), |event| {
//!     if let Event::Progress(p) = event {
//!         eprintln!("{} records", p.records);
//!     }
//!     ControlFlow::Continue(())
//! })?;
//! println!("{} transactions", report.partitions[&0].transactions);
//! # Ok::<(), krecords_ship::Error>(())
//! ```

#[doc(hidden)]
pub mod fuzzing;
mod positions;
mod report;
mod shipper;
mod source;
krecords_codec::untrusted_modules! {
    mod stream;
}

pub use krecords_log::ship::{plan, Plan, PlanOptions, ShipBatch, ShipBytes, ShipKind};
pub use positions::{Positions, POSITIONS_TAG};
pub use shipper::{ship, Event, Job, PartitionReport, Progress, Report, ShipOptions, Target};
pub use source::{partition_of_dir, Source, SourceKind, Sources};
pub use stream::STREAM_HOLD_LIMIT;

use krecords_log::transaction::AbortedTransaction;
use std::fmt;
use std::io;

/// A result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why shipping failed. `krec` exits 2 for [`Error::Usage`] and [`Error::Io`], 1 for
/// [`Error::Data`].
#[derive(Debug)]
pub enum Error {
    /// The job cannot run as asked: a bad source or target, a refused configuration, a
    /// broker that cannot be reached or refuses the job.
    Usage(String),
    /// An I/O error on a source, with what was being done.
    Io {
        /// What was being done (`cannot open PATH`).
        context: String,
        /// The error.
        source: io::Error,
    },
    /// Source data that cannot be shipped (corrupt entries).
    Data(String),
}

impl Error {
    pub(crate) fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    /// A client error about `what`: corrupt fetched data is [`Error::Data`], the network
    /// failing ([`krecords_client::Error::is_network`]) [`Error::Io`], anything else
    /// [`Error::Usage`].
    pub(crate) fn client(what: &str, e: &krecords_client::Error) -> Self {
        match e {
            krecords_client::Error::Corrupt { .. } => Error::Data(format!("{what}: {e}")),
            e if e.is_network() => Error::Io {
                context: what.to_owned(),
                source: io::Error::other(e.to_string()),
            },
            _ => Error::Usage(format!("{what}: {e}")),
        }
    }

    /// A log error about `what`: a missing or unreadable source is [`Error::Usage`], bad data
    /// [`Error::Data`].
    pub(crate) fn log(what: &str, e: &krecords_log::Error) -> Self {
        let text = format!("{what}: {e}");
        match e {
            krecords_log::Error::Io { .. }
            | krecords_log::Error::NotALog { .. }
            | krecords_log::Error::NoSuchDirectory { .. } => Error::Usage(text),
            _ => Error::Data(text),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) | Error::Data(m) => f.write_str(m),
            Error::Io { context, source } if context.is_empty() => write!(f, "{source}"),
            Error::Io { context, source } => write!(f, "{context}: {source}"),
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

/// One fetch's committed bytes.
pub(crate) struct Fetched {
    /// Whole entries: a kafka:// source's are the Fetch response's bytes as they came (not
    /// copied: the shipper cuts its as-is batches out of them).
    pub bytes: bytes::Bytes,
    pub aborted: Vec<AbortedTransaction>,
    /// Where reading continues (past gaps with no entries).
    pub next_offset: i64,
    /// The source's last stable offset when it was read, if known (for the lag shown).
    pub end: Option<i64>,
}
