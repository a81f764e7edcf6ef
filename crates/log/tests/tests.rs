//! Integration tests of krecords-log, one module per area.

mod util;

mod append;
mod broker;
mod check;
mod compact;
mod crash;
mod fetch_into;
mod import;
mod interop;
mod locking;
mod mixed_formats;
mod offsets;
mod outputs;
mod overflow;
mod recovery;
mod retention;
mod roll;
mod salvage;
mod segment_files;
mod transactions;
mod txn_model;
