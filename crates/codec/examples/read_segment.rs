//! Reads a segment file: once from a buffer read with `std::fs::read`, once from a memory map,
//! checking every batch's CRC and iterating its records with one decompression.
//!
//! A segment file (`00000000000000000000.log` in a partition directory) is entries back to
//! back, so `Entries` walks it as it walks any buffer. For a file, a truncated tail is what a
//! crash leaves and is reported, but a corrupt size field must not pass for one:
//! `max_entry_size` bounds the sizes (Kafka's `max.message.bytes`).
//!
//! Run: `cargo run -p krecords-codec --example read_segment` (it writes its own segment into a
//! temporary directory first).

use krecords_codec::read::{Batch, Entries};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};
use std::error::Error;
use std::fs;
use std::path::Path;

/// Kafka's default `max.message.bytes` (a batch and its 12-byte prefix).
const MAX_MESSAGE_BYTES: usize = 1_048_588;

fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("00000000000000000000.log");
    write_segment(&path)?;

    // 1. Read into memory.
    let bytes = fs::read(&path)?;
    let (batches, records) = scan(&bytes)?;
    println!("read: {batches} batches, {records} records");

    // 2. Memory-map it: the records borrow from the mapping, nothing is copied until a
    //    compressed batch decompresses into the scratch buffer.
    let file = fs::File::open(&path)?;
    // SAFETY: the file is ours and nothing writes to it while it is mapped. (A broker's active
    // segment can grow under a reader; map only closed segments, or a length you checked.)
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(&file)? };
    let (mapped_batches, mapped_records) = scan(&map)?;
    println!("mmap: {mapped_batches} batches, {mapped_records} records");
    assert_eq!((batches, records), (mapped_batches, mapped_records));
    Ok(())
}

/// Counts the batches and records of a segment's bytes, checking each batch.
fn scan(bytes: &[u8]) -> Result<(usize, usize), Box<dyn Error>> {
    let max_size = MAX_MESSAGE_BYTES - krecords_codec::layout::LOG_OVERHEAD;
    let mut entries = Entries::new(bytes).max_entry_size(max_size);
    let mut scratch = Vec::new(); // reused by every compressed batch
    let (mut batches, mut records) = (0, 0);
    for batch in entries.by_ref() {
        let batch: Batch<'_> = batch?;
        batches += 1;
        for record in batch.checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)? {
            let record = record?;
            records += 1;
            if record.offset() % 250 == 0 {
                println!(
                    "  offset {:>4} ts {:?} key {:?} value {} bytes ({}, magic {})",
                    record.offset(),
                    record.timestamp(),
                    record.key().map(String::from_utf8_lossy),
                    record.value().map_or(0, <[u8]>::len),
                    batch.compression()?,
                    batch.magic(),
                );
            }
        }
    }
    if let Some(tail) = entries.partial() {
        println!(
            "  {} bytes of a truncated entry at byte {}",
            tail.bytes, tail.position
        );
    }
    Ok((batches, records))
}

/// Writes a segment of ten batches of 100 records, in several codecs, with real offsets.
fn write_segment(path: &Path) -> Result<(), Box<dyn Error>> {
    let codecs = [Compression::None, Compression::Lz4, Compression::Zstd];
    let mut segment = Vec::new();
    for i in 0..10i64 {
        let mut b = V2Builder::new(i * 100).compression(codecs[i as usize % 3], None);
        for j in 0..100i64 {
            let key = format!("user-{}", j % 10);
            let value = format!("{{\"event\":\"click\",\"n\":{}}}", i * 100 + j);
            b.append(&NewRecord::new(
                1_714_000_000_000 + i * 100 + j,
                Some(key.as_bytes()),
                Some(value.as_bytes()),
            ))?;
        }
        b.finish_into(&mut segment)?;
    }
    fs::write(path, segment)?;
    Ok(())
}
