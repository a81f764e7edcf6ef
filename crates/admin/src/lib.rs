//! An operator's first questions about a Kafka cluster, answered the same way from a live
//! cluster (the Kafka protocol, through krecords-client) and from a stopped broker's
//! `log.dirs` root (its KRaft metadata log replayed, its partition directories read):
//!
//! - which brokers, which controller, which topics and partitions, with leaders, replicas, ISR
//!   and offline partitions ([`live::describe`], [`offline::describe_root`]): `krec metadata`;
//! - each partition's earliest, latest and last stable offset, and the first offset at or
//!   after a time ([`live::offsets`], [`offline::dir_offsets`]): `krec metadata --offsets`,
//!   `krec offsets`;
//! - the cluster exactly as `krec metadata` and `krec offsets` show it, topics selected and
//!   offsets filled ([`live::load`], [`offline::load`]);
//! - consumer groups with their lag ([`groups::describe_root`],
//!   [`groups::describe_live_named`], and [`groups::select`] for the groups named): `krec
//!   groups`.
//!
//! All but the groups give a [`Cluster`], serialized as `krec metadata --format json` prints
//! it.
//!
//! # Example
//!
//! ```no_run
//! # fn main() -> Result<(), krecords_admin::Error> {
//! let cluster = krecords_admin::offline::describe_root(std::path::Path::new("/var/lib/kafka"))?;
//! for t in &cluster.topics {
//!     let offline = t.partitions.iter().filter(|p| p.is_offline()).count();
//!     println!("{}: {} partitions, {offline} offline", t.name, t.partitions.len());
//! }
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]

pub mod groups;
pub mod live;
pub mod model;
pub mod offline;
pub mod text;

pub use model::{Broker, Cluster, Offsets, Partition, Topic};

use krecords_source::ErrorClass;

/// An error of an admin question.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad arguments, or a source that is not what the question needs (exit 2).
    #[error("{0}")]
    Usage(String),
    /// An I/O error: what was being done, and the error (exit 2).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The sources layer's error (a partition directory that cannot be read).
    #[error(transparent)]
    Source(#[from] krecords_source::Error),
    /// The client's error (a broker that cannot be reached, a refused request).
    #[error(transparent)]
    Client(#[from] krecords_client::Error),
}

impl Error {
    pub(crate) fn io(what: String, source: std::io::Error) -> Error {
        Error::Io { what, source }
    }

    /// A `--topic` selection that could not be made: a usage error.
    pub(crate) fn select(e: krecords_log::data_dir::SelectError) -> Error {
        Error::Usage(e.to_string())
    }

    /// Which exit code the error calls for (krecords-source's one mapping).
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Usage(_) => ErrorClass::Usage,
            Error::Io { .. } => ErrorClass::Io,
            Error::Source(e) => e.class(),
            Error::Client(e) => krecords_source::classify_client(e),
        }
    }
}

/// The filter of the topic globs `topics` (`--topic`, repeatable: a topic matching any of
/// them), the one rule of every command that selects topics
/// ([`krecords_log::data_dir::PartitionFilter`]).
fn topic_filter(topics: &[String]) -> Result<krecords_log::data_dir::PartitionFilter, Error> {
    krecords_log::data_dir::PartitionFilter::globs(topics, None).map_err(Error::select)
}
