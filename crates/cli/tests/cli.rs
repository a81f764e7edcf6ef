//! Integration tests: the built `krec` binary, run as scripts and users run it.
//!
//! One aggregator (as ripgrep's `tests/tests.rs`), one module per subcommand under `cli/`.

#[path = "cli/util.rs"]
mod util;

#[path = "cli/build_dump.rs"]
mod build_dump;
#[path = "cli/concurrency.rs"]
mod concurrency;
#[path = "cli/convert.rs"]
mod convert;
#[path = "cli/data_dir.rs"]
mod data_dir;
#[path = "cli/decode.rs"]
mod decode;
#[path = "cli/demo.rs"]
mod demo;
#[path = "cli/dump_filters.rs"]
mod dump_filters;
#[path = "cli/explain.rs"]
mod explain;
#[path = "cli/export.rs"]
mod export;
#[path = "cli/gen.rs"]
mod gen;
#[path = "cli/kafka.rs"]
mod kafka;
#[path = "cli/log.rs"]
mod log;
#[path = "cli/metadata.rs"]
mod metadata;
#[path = "cli/positions.rs"]
mod positions;
#[path = "cli/produce.rs"]
mod produce;
#[path = "cli/remote.rs"]
mod remote;
#[path = "cli/reports.rs"]
mod reports;
#[path = "cli/salvage.rs"]
mod salvage;
#[path = "cli/ship.rs"]
mod ship;
#[path = "cli/sigkill.rs"]
mod sigkill;
#[path = "cli/sql.rs"]
mod sql;
#[path = "cli/stats.rs"]
mod stats;
#[path = "cli/verify.rs"]
mod verify;
#[path = "cli/verify_remote.rs"]
mod verify_remote;
#[path = "cli/what_if.rs"]
mod what_if;
