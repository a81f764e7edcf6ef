//! `krecords_arrow::RecordBatches` over arbitrary entries. Byte 0 chooses the options: bits 0-2
//! the row limit (1..=8), bit 3 keys as strings, bit 4 values as strings, bits 5-7 a projection
//! (every column, none, or a rotating subset); the rest are log entries. Never panics; every
//! record batch holds at most the row limit, has the projected schema and validates in full
//! (UTF-8 of string columns, offsets, lengths); after an error nothing more comes; the rows equal
//! the records the codec's `checked_records` yields (control batches left out) up to the first
//! error.
#![no_main]

use krecords_arrow::{BytesFormat, Column, Options, RecordBatches};
use krecords_codec::read::Entries;
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, bytes)) = data.split_first() else {
        return;
    };
    let max_rows = usize::from(flags & 7) + 1;
    let format = |bit: u8| {
        if flags & bit != 0 {
            BytesFormat::String
        } else {
            BytesFormat::Binary
        }
    };
    let columns: Vec<Column> = match flags >> 5 {
        0 => Column::ALL.to_vec(),
        1 => Vec::new(),
        n => Column::ALL
            .iter()
            .copied()
            .enumerate()
            .filter(|(i, _)| i % usize::from(n) == 0)
            .map(|(_, c)| c)
            .collect(),
    };
    let options = Options {
        columns: columns.clone(),
        key_format: format(8),
        value_format: format(16),
        max_rows,
        decompress_limit: LIMIT,
        ..Options::default()
    };

    // What a consumer reads: the records of data entries up to the first error.
    let mut want = 0usize;
    let mut scratch = Vec::new();
    'entries: for entry in Entries::new(bytes) {
        let Ok(entry) = entry else { break };
        if entry.is_control() {
            continue;
        }
        if entry.compression().is_err() {
            break;
        }
        let Ok(records) = entry.checked_records(&mut scratch, LIMIT) else {
            break;
        };
        for r in records {
            if r.is_err() {
                break 'entries;
            }
            want += 1;
        }
    }

    let mut it = RecordBatches::new(Entries::new(bytes), "fuzz", 0, options);
    let mut rows = 0usize;
    let mut failed = false;
    for batch in it.by_ref() {
        assert!(!failed, "a record batch after the error");
        match batch {
            Ok(b) => {
                assert!(b.num_rows() >= 1 && b.num_rows() <= max_rows);
                assert_eq!(b.num_columns(), columns.len());
                for (field, column) in b.schema().fields().iter().zip(&columns) {
                    assert_eq!(field.name(), column.name());
                }
                for c in b.columns() {
                    assert_eq!(c.len(), b.num_rows());
                    c.to_data().validate_full().unwrap();
                }
                rows += b.num_rows();
            }
            Err(_) => failed = true,
        }
    }
    assert!(it.next().is_none());
    assert_eq!(rows, want);
    assert_eq!(it.report().rows as usize, want);
});
