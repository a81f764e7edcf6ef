//! Salvages a partition directory into a new one with the log crate's salvage engine (the one
//! `krec salvage` runs; that command adds only argument handling and report formatting), and
//! prints the report. For `scripts/bench-salvage.sh` on machines where building the whole
//! `krec` binary in release mode takes too long (it links the SQL engine): this example builds
//! with the log crate's dependencies alone.
//!
//! Run: `cargo run --release -p krecords-log --example salvage -- PARTITION_DIR OUTPUT_DIR`
//! (exit 0: nothing lost, 1: something lost, 2: usage or an error). Without arguments it
//! writes a partition of several segments in a temporary directory, flips a byte in a batch of
//! the middle one, salvages it and shows that every other batch is kept (exit 0).

use krecords_codec::write::{NewRecord, V2Builder};
use krecords_log::salvage::{salvage_partition, NoSink, SalvageOptions};
use krecords_log::{AppendOrigin, Log, LogConfig};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        return match demo() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("salvage: {e}");
                ExitCode::from(2)
            }
        };
    }
    let [source, output] = args.as_slice() else {
        eprintln!("usage: salvage [PARTITION_DIR OUTPUT_DIR]");
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

/// A damaged partition made here, salvaged: one batch lost, every other one kept.
fn demo() -> Result<(), Box<dyn std::error::Error>> {
    let root = tempfile::tempdir()?;
    let dir = root.path().join("orders-0");
    let config = LogConfig::from_pairs([("segment.bytes", "2048")])?;
    let mut log = Log::create(&dir, config)?;
    for i in 0..30 {
        let mut b = V2Builder::new(0);
        for j in 0..5 {
            let value = format!("value {i}-{j} ........................");
            b.append(&NewRecord::new(
                1_714_000_000_000,
                Some(b"k"),
                Some(value.as_bytes()),
            ))?;
        }
        log.append(&b.finish()?, AppendOrigin::Client)?;
    }
    drop(log);
    let mut segments: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    segments.sort();
    let middle = &segments[segments.len() / 2];
    let mut bytes = std::fs::read(middle)?;
    // A byte inside the second batch's records: its CRC no longer checks.
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    std::fs::write(middle, &bytes)?;
    let output = root.path().join("salvaged").join("orders-0");
    let report = salvage_partition(&dir, Some(&output), SalvageOptions::default(), &mut NoSink)?;
    print!("{report}");
    let kept = Log::open_read_only(&output)?;
    println!(
        "salvaged log: offsets {}..{}, {} segments",
        kept.log_start_offset(),
        kept.log_end_offset(),
        segments.len()
    );
    if !report.lost_anything() {
        return Err("the flipped byte should have cost one batch".into());
    }
    Ok(())
}
