//! krecords-log: a Kafka partition log in Kafka's on-disk layout (work in progress).
#![deny(missing_docs)]

pub mod clock;
pub mod config;
mod error;
pub mod files;
mod index;
pub mod storage;

pub use config::LogConfig;
pub use error::{Error, Location, RecordError, Result};
