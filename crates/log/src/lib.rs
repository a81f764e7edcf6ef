//! krecords-log: a Kafka partition log in Kafka's on-disk layout (work in progress).
#![deny(missing_docs)]

mod error;

pub use error::{Error, Location, RecordError, Result};
