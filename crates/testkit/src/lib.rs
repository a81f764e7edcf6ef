//! Test helpers shared by the krecords crates' tests (a dev-dependency only, never published):
//!
//! - [`broker`]: a scriptable fake Kafka broker on 127.0.0.1 (a handler per request: answer,
//!   hostile bytes, close, silence; TLS too) and the frames it answers with;
//! - [`cluster`]: a fake cluster with state built on it (partitions, transactions, committed
//!   group offsets) for producers and `krec ship`;
//! - [`batches`]: the batch builders several test modules use;
//! - [`data`]: deterministic record-like bytes for the codec's and the log's benchmarks;
//! - [`files`]: a directory's state, to check that a read-only command changed nothing.
//!
//! It depends on the codec only (not on the client or the log), so that those crates' own
//! tests can use it without a second copy of them in the build.

pub mod batches;
pub mod broker;
pub mod cluster;
pub mod data;
pub mod files;

pub use broker::{Action, Ctx, Fake, Seen};
pub use cluster::{FakeCluster, FakeGroup, FakeMember};
