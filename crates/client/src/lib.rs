//! A Kafka protocol client for reading raw record batches.
//!
//! A Fetch response carries a partition's stored batches byte for byte; this crate fetches them
//! and hands them over as [`bytes::Bytes`] for [`krecords_codec::read::Entries`], with no
//! re-encoding. It covers what reading needs: bootstrap over several addresses, ApiVersions
//! (then the highest version of each request both sides support), Metadata with leader routing
//! and bounded retries, ListOffsets, Fetch at either isolation level, TLS (rustls, hostname
//! verification on, optional client certificate) and SASL PLAIN, SCRAM-SHA-256 and
//! SCRAM-SHA-512. Messages are encoded and decoded by the `kafka-protocol` crate.
//!
//! It also writes: [`TransactionalProducer`] sends stored v2 batches in Kafka transactions
//! (records bytes untouched, only the producer fields of the header rewritten), with consumer
//! offsets committed in the same transaction, and [`Client::offset_fetch`] reads them back.
//!
//! Configuration uses librdkafka's property names ([`ClientConfig`]).
//!
//! Responses are size-checked against `receive.message.max.bytes` before anything is
//! allocated for them, and a response's buffer grows only with the bytes that arrive.
//!
//! # Example
//!
//! ```no_run
//! use krecords_client::{Client, ClientConfig, IsolationLevel, OffsetSpec};
//! use krecords_codec::read::Entries;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = ClientConfig::from_pairs([
//!     "bootstrap.servers=localhost:9092",
//!     "security.protocol=SASL_SSL",
//!     "sasl.mechanism=SCRAM-SHA-512",
//!     "sasl.username=alice",
//!     "sasl.password=secret",
//!     "ssl.ca.location=/etc/kafka/ca.pem",
//! ])?;
//! let client = Client::connect(config).await?;
//! let isolation = IsolationLevel::ReadCommitted;
//! let start = client
//!     .list_offsets("events", 0, OffsetSpec::Earliest, isolation)
//!     .await?
//!     .offset
//!     .unwrap_or(0);
//! // Up to the last stable offset seen by the first fetch.
//! let mut stream = client.stream_partition("events", 0, start, None, isolation);
//! while let Some(chunk) = stream.next_chunk().await? {
//!     for batch in Entries::new(&chunk.records) {
//!         let batch = batch?;
//!         println!("batch at {} ({} bytes)", batch.offset_field(), batch.size_in_bytes());
//!     }
//! }
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

mod client;
mod config;
mod conn;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod groups;
mod partitioner;
mod produce;
mod producer;
mod scram;
mod tls;

pub use client::topic_id_text;
pub use client::{
    BrokerMetadata, Chunk, Client, FetchedPartition, ListedOffset, Metadata, OffsetSpec,
    PartitionMetadata, PartitionStream, TopicMetadata,
};
pub use config::{join_continuations, ClientConfig, SaslMechanism, Secret, SecurityProtocol};
pub use error::{Error, KafkaCode, RequestName, Result};
pub use groups::{GroupDescription, GroupMember, ListedGroup};
/// The `kafka-protocol` crate this client is built on (its [`kafka_protocol::ResponseError`]
/// appears in [`KafkaCode::response_error`]).
pub use kafka_protocol;
pub use krecords_codec::txn::{AbortedTransaction, IsolationLevel};
pub use partitioner::{murmur2, partition_for_key, Partitioner};
pub use produce::{
    plan_partitions, produce_batches, produce_records, written_per_partition, ProduceError,
    ProduceOptions, ProduceRecord, Written,
};
pub use producer::{CommittedOffset, OffsetToCommit, Produced, TransactionalProducer};
