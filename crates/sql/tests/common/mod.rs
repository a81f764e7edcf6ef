//! Helpers shared by the SQL integration tests.

use krecords_sql::datafusion::arrow::array::{Array, RecordBatch};
use krecords_sql::datafusion::arrow::util::display::array_value_to_string;

/// The rows of `batches` as strings, one `Vec` per row (null: "NULL").
pub fn rows_of(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for b in batches {
        for r in 0..b.num_rows() {
            out.push(
                b.columns()
                    .iter()
                    .map(|c| {
                        if c.is_null(r) {
                            "NULL".to_string()
                        } else {
                            array_value_to_string(c, r).unwrap()
                        }
                    })
                    .collect(),
            );
        }
    }
    out
}
