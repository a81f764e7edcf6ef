//! The subcommands, one module each: its clap `Args` (the `--help` text) and its `run`.
//!
//! A command parses its arguments, calls krecords-codec and krecords-log, and prints; what
//! several commands share lives at the crate root ([`crate::args`], [`crate::outcome`],
//! [`crate::source`], [`crate::kafka`], [`crate::entry_json`], [`krecords_topics`], ...).

pub mod build;
pub mod convert;
pub mod demo;
pub mod docs;
pub mod dump;
pub mod explain;
pub mod export;
pub mod gen;
pub mod log;
pub mod metadata;
pub mod produce;
pub mod salvage;
pub mod ship;
pub mod sql;
pub mod stats;
pub mod verify;
