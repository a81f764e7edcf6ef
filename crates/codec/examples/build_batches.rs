//! Builds batches as a producer does: headers (duplicate keys kept), a tombstone, every codec,
//! an idempotent and transactional producer's fields, and the commit marker that ends the
//! transaction; then reads them back through the format-independent `Batch` accessors.
//!
//! Builder settings go first: once a record is in, a setter makes the builder refuse to go on
//! (`Error::ConfigAfterAppend`) rather than write a batch that no longer says what it holds.
//!
//! Run: `cargo run -p krecords-codec --example build_batches`.

use krecords_codec::control::{ControlRecordKey, ControlRecordType};
use krecords_codec::read::{Entries, Record};
use krecords_codec::write::{end_txn_marker, EndTxnBatch, NewRecord, V2Builder};
use krecords_codec::{Compression, Error, Header, DEFAULT_DECOMPRESS_LIMIT};

const NOW: i64 = 1_714_000_000_000;
const PRODUCER_ID: i64 = 4000;
const EPOCH: i16 = 0;

fn main() -> Result<(), Error> {
    let mut log = Vec::new(); // the entries, as a segment would hold them
    let mut offset = 0;
    let mut sequence = 0;
    for codec in Compression::ALL {
        let mut b = V2Builder::new(offset)
            .compression(codec, codec.default_level())
            .producer(PRODUCER_ID, EPOCH, sequence)
            .transactional(true);
        let headers = [
            Header {
                key: b"trace",
                value: Some(b"a1"),
            },
            Header {
                key: b"trace",
                value: Some(b"b2"),
            },
            Header {
                key: b"empty",
                value: None,
            },
        ];
        b.append(&NewRecord::new(NOW, Some(b"order-1"), Some(b"created")).with_headers(&headers))?;
        b.append(&NewRecord::new(NOW + 1, Some(b"order-1"), Some(b"paid")))?;
        // A tombstone: a null value deletes the key on a compacted topic.
        b.append(&NewRecord::new(NOW + 2, Some(b"order-1"), None))?;
        let records = b.count();
        offset = b.next_offset();
        sequence += records;
        b.finish_into(&mut log)?;
    }
    // The transaction coordinator's commit marker, in one call.
    log.extend(end_txn_marker(&EndTxnBatch {
        base_offset: offset,
        partition_leader_epoch: -1,
        producer_id: PRODUCER_ID,
        producer_epoch: EPOCH,
        coordinator_epoch: 3,
        commit: true,
        timestamp: NOW + 10,
    })?);

    // A setter after an append is refused, not silently applied.
    let mut late = V2Builder::new(0);
    late.append(&NewRecord::new(NOW, None, Some(b"x")))?;
    let refused = late.compression(Compression::Gzip, None).finish();
    assert_eq!(
        refused,
        Err(Error::ConfigAfterAppend {
            setter: "compression"
        })
    );

    let mut scratch = Vec::new();
    for batch in Entries::new(&log) {
        let batch = batch?;
        println!(
            "offsets {}..={} {:>6} {} records, producer {:?}/{:?} seq {:?}, txn {}, control {}, {} bytes",
            batch.first_offset().unwrap_or(-1),
            batch.last_offset(),
            batch.compression()?.name(),
            batch.record_count().unwrap_or(0),
            batch.producer_id(),
            batch.producer_epoch(),
            batch.base_sequence(),
            batch.is_transactional(),
            batch.is_control(),
            batch.size_in_bytes(),
        );
        for record in batch.checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)? {
            let record: Record<'_> = record?;
            if batch.is_control() {
                let key = ControlRecordKey::parse(record.key(), batch.position())?;
                assert_eq!(key.kind, ControlRecordType::Commit);
                println!("  {} control record: {:?}", record.offset(), key.kind);
                continue;
            }
            let headers: Vec<String> = record
                .headers()
                .map(|h| {
                    format!(
                        "{}={}",
                        String::from_utf8_lossy(h.key),
                        h.value
                            .map_or("null".into(), |v| String::from_utf8_lossy(v).into_owned())
                    )
                })
                .collect();
            println!(
                "  {} {:?} -> {:?} {headers:?}",
                record.offset(),
                record.key().map(String::from_utf8_lossy),
                record.value().map(String::from_utf8_lossy),
            );
        }
    }
    Ok(())
}
