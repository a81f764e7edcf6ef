//! Converts a v1 segment (old producers' messages: plain ones, a gzip wrapper, a compaction
//! gap) to v2 batches, as Kafka's log cleaner rewrites old data, and checks that every record
//! kept its offset, timestamp, key and value.
//!
//! Run: `cargo run -p krecords-codec --example convert_v1_to_v2`.

use krecords_codec::convert::{convert, ConvertOptions};
use krecords_codec::read::Entries;
use krecords_codec::write::{LegacyBuilder, NewRecord};
use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};
use std::error::Error;

type Row = (i64, Option<i64>, Option<Vec<u8>>, Option<Vec<u8>>);

fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let v1_path = dir.path().join("v1.log");
    let v2_path = dir.path().join("v2.log");

    // Plain v1 messages at offsets 0..5, then 7 and 9 (compaction removed 5, 6 and 8)...
    let mut v1 = Vec::new();
    let mut plain = LegacyBuilder::new(1, 0)?;
    for offset in [0, 1, 2, 3, 4, 7, 9] {
        let value = format!("plain {offset}");
        plain.append_with_offset(
            offset,
            &NewRecord::new(
                1_714_000_000_000 + offset,
                Some(b"k"),
                Some(value.as_bytes()),
            ),
        )?;
    }
    plain.finish_into(&mut v1)?;
    // ...then a gzip wrapper of offsets 10..20.
    let mut wrapper = LegacyBuilder::new(1, 10)?.compression(Compression::Gzip, None)?;
    for offset in 10..20 {
        let value = format!("wrapped {offset}");
        wrapper.append(&NewRecord::new(
            1_714_000_000_000 + offset,
            None,
            Some(value.as_bytes()),
        ))?;
    }
    v1.extend(wrapper.finish()?);
    std::fs::write(&v1_path, &v1)?;

    // Convert the file: batch the plain messages as a producer would, compress with zstd.
    let input = std::fs::read(&v1_path)?;
    let opts = ConvertOptions {
        compression: Some(Compression::Zstd),
        records_per_batch: Some(500),
        ..ConvertOptions::new(2)
    };
    let mut v2 = Vec::new();
    let stats = convert(&input, &opts, &mut v2)?;
    std::fs::write(&v2_path, &v2)?;
    println!(
        "{} entries ({} bytes) -> {} batches ({} bytes), {} records",
        stats.entries_in,
        input.len(),
        stats.entries_out,
        v2.len(),
        stats.records_converted
    );

    let before = rows(&input)?;
    let after = rows(&std::fs::read(&v2_path)?)?;
    assert_eq!(
        before, after,
        "every record kept its offset, timestamp, key and value"
    );
    for batch in Entries::new(&v2) {
        let batch = batch?;
        println!(
            "  v{} {} offsets {}..={} ({} records)",
            batch.magic(),
            batch.compression()?,
            batch.first_offset().unwrap_or(-1),
            batch.last_offset(),
            batch.record_count().unwrap_or(0)
        );
    }
    Ok(())
}

/// Every record of a buffer of entries, checked.
fn rows(bytes: &[u8]) -> Result<Vec<Row>, Box<dyn Error>> {
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    for batch in Entries::new(bytes).strict() {
        for r in batch?.checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)? {
            let r = r?;
            out.push((
                r.offset(),
                r.timestamp(),
                r.key().map(<[u8]>::to_vec),
                r.value().map(<[u8]>::to_vec),
            ));
        }
    }
    Ok(out)
}
