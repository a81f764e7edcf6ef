//! Salvages a partition directory into a new one with the log crate's salvage engine (the one
//! `krec salvage` runs; that command adds only argument handling and report formatting), and
//! prints the report. For `scripts/bench-salvage.sh` on machines where building the whole
//! `krec` binary in release mode takes too long (it links the SQL engine): this example builds
//! with the log crate's dependencies alone.
//!
//! Run: `cargo run --release -p krecords-log --example salvage -- PARTITION_DIR OUTPUT_DIR`
//! (exit 0: nothing lost, 1: something lost, 2: usage or an error).

use krecords_log::salvage::{salvage_partition, NoSink, SalvageOptions};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [source, output] = args.as_slice() else {
        eprintln!("usage: salvage PARTITION_DIR OUTPUT_DIR");
        return ExitCode::from(2);
    };
    match salvage_partition(
        Path::new(source),
        Some(Path::new(output)),
        SalvageOptions::default(),
        &mut NoSink,
    ) {
        Ok(report) => {
            print!("{report}");
            if report.lost_anything() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("salvage: {e}");
            ExitCode::from(2)
        }
    }
}
