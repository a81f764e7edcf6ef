//! Handles corrupt input: a flipped bit, a size field that corruption made huge in the middle
//! of a file, a compressed batch that would decompress past the limit, and bytes that are not
//! entries at all. Each is an error that says what and where (a byte position), never a panic,
//! and never memory sized by the corrupt field.
//!
//! Run: `cargo run -p krecords-codec --example corrupt_input`.

use krecords_codec::read::Entries;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, Error, DEFAULT_DECOMPRESS_LIMIT};

fn batch(base_offset: i64, codec: Compression, values: usize) -> Result<Vec<u8>, Error> {
    let mut b = V2Builder::new(base_offset).compression(codec, None);
    for i in 0..values {
        b.append(&NewRecord::new(
            1_714_000_000_000,
            None,
            Some(format!("value {i} {}", "z".repeat(100)).as_bytes()),
        ))?;
    }
    b.finish()
}

/// Reads every record of a file's bytes as a careful reader does; the first error ends it.
fn read_file(bytes: &[u8]) -> Result<usize, Error> {
    let mut scratch = Vec::new();
    let mut records = 0;
    // A file holds whole entries: bound the entry size (here Kafka's default max.message.bytes),
    // so a corrupt size is an error and not a "truncated tail" hiding what follows.
    for batch in Entries::new(bytes).max_entry_size(1 << 20) {
        for record in batch?.checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)? {
            record?;
            records += 1;
        }
    }
    Ok(records)
}

fn main() -> Result<(), Error> {
    let first = batch(0, Compression::None, 10)?;
    let second = batch(10, Compression::Lz4, 10)?;
    let third = batch(20, Compression::None, 10)?;
    let file = [first.clone(), second.clone(), third].concat();
    println!("intact: {} records", read_file(&file)?);

    // 1. One flipped bit in a record's value: the CRC catches it before any record is read.
    let mut flipped = file.clone();
    flipped[first.len() / 2] ^= 0x10;
    report("flipped bit", read_file(&flipped));

    // 2. The second batch's size field made huge: an error at that field, not a silent stop.
    let mut huge = file.clone();
    let at = first.len() + 8;
    huge[at..at + 4].copy_from_slice(&0x4000_0000i32.to_be_bytes());
    report("corrupt size field", read_file(&huge));
    // Without a bound, the same bytes read as two thirds of the file missing.
    let mut lax = Entries::new(&huge);
    let complete = lax.by_ref().count();
    println!(
        "  (unbounded: {complete} entry, then a 'partial tail' of {} bytes)",
        lax.partial().map_or(0, |p| p.bytes)
    );

    // 3. A small zstd batch of 1,000 compressible records, read with a 64 KiB limit: the
    //    decompression stops at the limit instead of allocating what the batch claims.
    let bomb = batch(0, Compression::Zstd, 1000)?;
    let b = Entries::new(&bomb).next().unwrap_or(Err(Error::Truncated {
        at: 0,
        what: "entry",
        needed: 12,
        available: 0,
    }))?;
    let mut scratch = Vec::new();
    report(
        &format!("{} compressed bytes, 64 KiB limit", bomb.len()),
        b.checked_records(&mut scratch, 64 << 10).map(|r| r.count()),
    );

    // 4. Not entries at all.
    report(
        "text",
        read_file(b"this is not a kafka segment file, but text"),
    );

    // Errors carry Kafka's view too: the log crate maps them to Kafka error names and codes.
    Ok(())
}

fn report<T: std::fmt::Debug>(what: &str, result: Result<T, Error>) {
    match result {
        Ok(v) => println!("{what}: unexpectedly fine: {v:?}"),
        Err(e) => println!(
            "{what}: {e} (at byte {})",
            e.position().map_or("?".into(), |p| p.to_string())
        ),
    }
}
