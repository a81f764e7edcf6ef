//! Creates a partition directory with krecords-log (a transaction aborted, one left open),
//! then reads it through the sources layer: the last 6 offsets at read_uncommitted, then
//! everything at read_committed, printing the records and why each read stopped.
//!
//! Run with `cargo run -p krecords-source --example read_partition` (no input needed).

use krecords_codec::read::{Batch, Step};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_log::{AppendOrigin, Log, LogConfig};
use krecords_source::{IsolationLevel, Position, Range, ReadOptions, Sources};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let part = dir.path().join("events-0");
    let mut log = Log::create(&part, LogConfig::default())?;
    let append = |log: &mut Log,
                  values: &[&str],
                  txn: bool,
                  seq: i32|
     -> Result<(), Box<dyn std::error::Error>> {
        let mut b = V2Builder::new(0);
        if txn {
            b = b.producer(7, 0, seq).transactional(true);
        }
        for v in values {
            b.append(&NewRecord::new(1_714_000_000_000, None, Some(v.as_bytes())))?;
        }
        log.append(&b.finish()?, AppendOrigin::Client)?;
        Ok(())
    };
    append(&mut log, &["a", "b", "c"], false, 0)?; // offsets 0-2
    append(&mut log, &["aborted-1", "aborted-2"], true, 0)?; // 3-4
    log.append_end_txn(7, 0, 0, false, 1_714_000_000_000)?; // 5: ABORT
    append(&mut log, &["d", "e"], false, 0)?; // 6-7
    append(&mut log, &["open-1"], true, 2)?; // 8: a transaction still open
    log.close()?;

    let sources = Sources::open_local(&[part])?;
    for (what, options) in [
        (
            "last 6 offsets, read_uncommitted",
            ReadOptions {
                range: Range {
                    start: Some(Position::FromEnd(6)),
                    ..Range::default()
                },
                ..ReadOptions::default()
            },
        ),
        (
            "everything, read_committed",
            ReadOptions {
                isolation: IsolationLevel::ReadCommitted,
                ..ReadOptions::default()
            },
        ),
    ] {
        println!("== {what}");
        let mut reader = sources.read(0, &options)?;
        let mut scratch = Vec::new();
        while let Some(file) = reader.next_file()? {
            println!("-- {}", file.name);
            loop {
                let (step, bounds) = reader.next_with_bounds()?;
                let batch = match step {
                    Step::Entry(b) => b,
                    Step::End => break,
                    other => return Err(format!("{other:?}").into()),
                };
                if let Batch::V2(v) = &batch {
                    if v.is_control() {
                        println!("   marker at offset {}", v.base_offset());
                        continue;
                    }
                }
                // `checked_records`: the CRC first (the reader hands entries on as stored).
                for r in batch.checked_records(&mut scratch, 1 << 20)? {
                    let r = r?;
                    if bounds.contains(r.offset()) {
                        let value = String::from_utf8_lossy(r.value().unwrap_or_default());
                        println!("   offset {}: {value}", r.offset());
                    }
                }
            }
        }
        match reader.stop() {
            Some(stop) => println!("{stop}"),
            None => println!("read up to the high watermark"),
        }
    }
    Ok(())
}
