//! A consumer group's offset commit as the group coordinator writes it to `__consumer_offsets`:
//! an OffsetCommitKey (record type 1: group, topic, partition) and an OffsetCommitValue
//! (version 3: offset, leader epoch, metadata, commit time) in a v2 batch built with the codec's
//! builder, then a tombstone for the same key (the commit expired). The batch is read back with
//! the codec and each record decoded with `krecords_topics`, printed as kafka-dump-log's
//! `--offsets-decoder` does and as fields.
//!
//! A whole `__consumer_offsets` partition is read with `krecords_admin::groups::GroupLog`
//! instead (segments at read_committed, damage reported, tombstones applied).
//!
//! Run: `cargo run -p krecords-topics --example consumer_offsets`.

use krecords_codec::read::Entries;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;
use krecords_topics::{parse, Kind};

const NOW: i64 = 1_714_000_000_000;

/// A non-flexible string: int16 length, then its bytes.
fn string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// OffsetCommitKey: record type 1, then group, topic and partition.
fn offset_commit_key(group: &str, topic: &str, partition: i32) -> Vec<u8> {
    let mut k = 1i16.to_be_bytes().to_vec();
    string(&mut k, group);
    string(&mut k, topic);
    k.extend_from_slice(&partition.to_be_bytes());
    k
}

/// OffsetCommitValue version 3: offset, leader epoch, metadata, commit timestamp.
fn offset_commit_value(offset: i64, leader_epoch: i32, metadata: &str) -> Vec<u8> {
    let mut v = 3i16.to_be_bytes().to_vec();
    v.extend_from_slice(&offset.to_be_bytes());
    v.extend_from_slice(&leader_epoch.to_be_bytes());
    string(&mut v, metadata);
    v.extend_from_slice(&NOW.to_be_bytes());
    v
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let key = offset_commit_key("orders-app", "orders", 3);
    let value = offset_commit_value(4711, 5, "");
    let mut batch = V2Builder::new(0);
    batch.append(&NewRecord::new(NOW, Some(&key), Some(&value)))?;
    batch.append(&NewRecord::new(NOW + 1, Some(&key), None))?;
    let log = batch.finish()?; // the temporary buffer: one batch, as a segment would hold it

    // The decoder a partition directory's name calls for.
    let kind = Kind::for_partition_dir("__consumer_offsets-12").ok_or("not an internal topic")?;
    let mut scratch = Vec::new();
    // `strict`: a truncated entry at the end is an error, not a quiet end of the bytes.
    for batch in Entries::new(&log).strict() {
        let batch = batch?;
        for record in batch.checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)? {
            let record = record?;
            let decoded = parse(kind, record.key(), record.value(), record.offset());
            // kafka-dump-log's text after the record's sizes.
            let mut text = Vec::new();
            decoded.write_text(&mut text);
            println!("offset {}:{}", record.offset(), String::from_utf8(text)?);
            // The fields themselves.
            let key = decoded
                .key
                .as_ref()
                .and_then(|k| k.data())
                .ok_or("no key")?;
            let text = |name: &str| key.get(name).and_then(|n| n.as_str()).unwrap_or_default();
            let partition = key.get("partition").and_then(|n| n.as_int()).unwrap_or(-1);
            let (group, topic) = (text("group"), text("topic"));
            match decoded.payload.as_ref().and_then(|v| v.data()) {
                Some(value) => {
                    let offset = value.get("offset").and_then(|o| o.as_int()).unwrap_or(-1);
                    println!("  group {group} topic {topic} partition {partition}: offset {offset}")
                }
                None => println!("  group {group} topic {topic} partition {partition}: deleted"),
            }
        }
    }
    Ok(())
}
