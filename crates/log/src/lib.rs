//! krecords-log: a Kafka partition log in Kafka's on-disk layout (work in progress).
#![deny(missing_docs)]

pub mod clock;
pub mod config;
mod epoch;
mod error;
pub mod files;
mod index;
mod log;
mod producer_state;
mod reader;
mod recovery;
mod segment;
pub mod storage;
mod validate;

pub use config::LogConfig;
pub use error::{Error, Location, RecordError, Result};
pub use log::{
    AppendInfo, AppendOrigin, Env, ListOffsetsResult, Log, LogInfo, OffsetSpec, ReadResult,
    RetainInfo, SegmentInfo,
};
pub use recovery::RecoverInfo;
