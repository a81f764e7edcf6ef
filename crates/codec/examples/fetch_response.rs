//! Walks the records of a fetch response's records field, whose last batch the broker cut
//! short, and keeps some records past the buffer.
//!
//! A broker fills a fetch response up to `max_bytes` and may cut the last batch: that tail is
//! not an error, `Entries` stops there and `partial()` says how much was left (the consumer
//! fetches again from the next offset). Records borrow from the buffer, so to keep them past
//! it, hold the buffer as `bytes::Bytes` and take `OwnedRecord`s, which share it.
//!
//! Run: `cargo run -p krecords-codec --example fetch_response`.

use bytes::Bytes;
use krecords_codec::read::{Entries, OwnedRecord};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};
use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    let records_field = Bytes::from(fetched_bytes()?);
    let fetch_offset = 120; // the offset the consumer asked for

    let mut kept: Vec<OwnedRecord> = Vec::new();
    let mut next_offset = fetch_offset;
    let mut entries = Entries::new(&records_field);
    for batch in entries.by_ref() {
        let batch = batch?;
        // The first batch may start before the fetch offset: skip the records below it.
        for record in batch.owned_records(&records_field, DEFAULT_DECOMPRESS_LIMIT)? {
            if record.offset >= fetch_offset {
                kept.push(record);
            }
        }
        next_offset = batch.last_offset() + 1;
    }
    match entries.partial() {
        Some(p) => println!(
            "stopped at a cut batch: {} of {:?} bytes at byte {}; fetch again from {next_offset}",
            p.bytes, p.declared_size, p.position
        ),
        None => println!("the response ended on a batch boundary"),
    }
    drop(records_field); // the kept records hold the bytes they need
    println!(
        "kept {} records, offsets {}..={}",
        kept.len(),
        kept.first().map_or(-1, |r| r.offset),
        kept.last().map_or(-1, |r| r.offset)
    );
    for r in kept.iter().step_by(25) {
        println!(
            "  {} {:?}",
            r.offset,
            r.value.as_deref().map(String::from_utf8_lossy)
        );
    }
    assert_eq!(kept.first().map(|r| r.offset), Some(fetch_offset));
    assert_eq!(next_offset, 250);
    Ok(())
}

/// What a broker might return: batches of offsets 100.. in gzip and snappy, cut 40 bytes into
/// the fourth batch.
fn fetched_bytes() -> Result<Vec<u8>, Box<dyn Error>> {
    let mut out = Vec::new();
    for i in 0..4i64 {
        let codec = if i % 2 == 0 {
            Compression::Gzip
        } else {
            Compression::Snappy
        };
        let mut b = V2Builder::new(100 + i * 50).compression(codec, None);
        for j in 0..50 {
            let v = format!("payload {}", 100 + i * 50 + j);
            b.append(&NewRecord::new(1_714_000_000_000, None, Some(v.as_bytes())))?;
        }
        let start = out.len();
        b.finish_into(&mut out)?;
        if i == 3 {
            out.truncate(start + 40);
        }
    }
    Ok(out)
}
