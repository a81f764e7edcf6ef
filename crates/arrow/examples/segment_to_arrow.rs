//! Writes a small segment file with the codec (a v2 batch with keys, a null key, a tombstone and
//! headers; an lz4 batch of an idempotent producer; a transaction's commit marker), reads it
//! back, turns it into Arrow record batches and prints their rows.
//!
//! Run: `cargo run -p krecords-arrow --example segment_to_arrow`.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampMillisecondType};
use arrow_array::{Array, RecordBatch};
use krecords_arrow::{BytesFormat, Column, Options, RecordBatches};
use krecords_codec::read::Entries;
use krecords_codec::write::{end_txn_marker, EndTxnBatch, NewRecord, V2Builder};
use krecords_codec::{Compression, Header};
use std::error::Error;

const T0: i64 = 1_714_000_000_000;

fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("00000000000000000000.log");
    std::fs::write(&path, segment()?)?;

    let bytes = std::fs::read(&path)?;
    let options = Options {
        columns: vec![
            Column::Offset,
            Column::Timestamp,
            Column::Key,
            Column::Value,
            Column::Headers,
            Column::Compression,
        ],
        key_format: BytesFormat::String,
        value_format: BytesFormat::String,
        max_rows: 4,
        ..Options::default()
    };
    let mut batches = RecordBatches::new(Entries::new(&bytes).strict(), "events", 0, options);
    println!("offset  timestamp      key     value          headers                  codec");
    for batch in batches.by_ref() {
        print_rows(&batch?);
    }
    let report = batches.report();
    println!(
        "{} rows in {} record batches; {} control batch skipped",
        report.rows, report.record_batches, report.control_entries
    );
    Ok(())
}

/// Three entries: plain records, an lz4 batch of an idempotent producer, a commit marker.
fn segment() -> Result<Vec<u8>, krecords_codec::Error> {
    let mut out = Vec::new();
    let headers = [
        Header {
            key: b"source",
            value: Some(b"web"),
        },
        Header {
            key: b"source",
            value: None,
        },
    ];
    let mut b = V2Builder::new(0);
    b.append(
        &NewRecord::new(T0, Some(b"user-1"), Some(br#"{"clicks":3}"#)).with_headers(&headers),
    )?;
    b.append(&NewRecord::new(T0 + 10, None, Some(b"no key")))?;
    b.append(&NewRecord::new(T0 + 20, Some(b"user-1"), None))?; // a tombstone
    b.finish_into(&mut out)?;
    let mut b = V2Builder::new(3)
        .compression(Compression::Lz4, None)
        .producer(7, 0, 0)
        .transactional(true);
    for i in 0..3 {
        let value = format!("payment {i}");
        b.append(&NewRecord::new(
            T0 + 30 + i,
            Some(b"user-2"),
            Some(value.as_bytes()),
        ))?;
    }
    b.finish_into(&mut out)?;
    out.extend(end_txn_marker(&EndTxnBatch {
        base_offset: 6,
        partition_leader_epoch: 0,
        producer_id: 7,
        producer_epoch: 0,
        coordinator_epoch: 0,
        commit: true,
        timestamp: T0 + 40,
    })?);
    Ok(out)
}

/// Prints each row of `batch` on a line.
fn print_rows(batch: &RecordBatch) {
    let offset = batch.column(0).as_primitive::<Int64Type>();
    let timestamp = batch.column(1).as_primitive::<TimestampMillisecondType>();
    let key = batch.column(2).as_string::<i32>();
    let value = batch.column(3).as_string::<i32>();
    let headers = batch.column(4).as_list::<i32>();
    let codec = batch.column(5).as_string::<i32>();
    let text = |a: &arrow_array::StringArray, i: usize| {
        if a.is_null(i) {
            "null".to_string()
        } else {
            a.value(i).to_string()
        }
    };
    for i in 0..batch.num_rows() {
        let hs = headers.value(i);
        let hs = hs.as_struct();
        let (hk, hv) = (
            hs.column(0).as_string::<i32>(),
            hs.column(1).as_binary::<i32>(),
        );
        let headers: Vec<String> = (0..hs.len())
            .map(|j| {
                let v = if hv.is_null(j) {
                    "null".into()
                } else {
                    String::from_utf8_lossy(hv.value(j)).into_owned()
                };
                format!("{}={v}", text(hk, j))
            })
            .collect();
        println!(
            "{:<7} {:<14} {:<7} {:<14} {:<24} {}",
            offset.value(i),
            timestamp.value(i),
            text(key, i),
            text(value, i),
            format!("[{}]", headers.join(",")),
            codec.value(i)
        );
    }
}
