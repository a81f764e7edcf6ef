//! Integration tests of krecords-codec, behind one aggregator (as ripgrep's `tests/tests.rs`).
//!
//! * `vectors`: golden vectors from other Kafka clients (`tests/vectors/peers`) and from Kafka's own
//!   `MemoryRecordsBuilder` (`tests/vectors/kafka-java`), decoded and re-encoded.
//! * `proptests`: build → read round trips in every format, and no panics on hostile bytes.
//! * `regression`: one test per bug found, named after it.

mod batch_accessors;
mod builder_config;
mod checked_records;
mod end_txn_marker;
mod proptests;
mod regression;
mod vectors;
