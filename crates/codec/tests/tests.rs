//! Integration tests of krecords-codec, behind one aggregator (as ripgrep's `tests/tests.rs`).
//!
//! * `vectors`: golden vectors from other Kafka clients (`tests/vectors/peers`) and from Kafka's own
//!   `MemoryRecordsBuilder` (`tests/vectors/kafka-java`), decoded and re-encoded.
//! * `proptests`: build → read round trips in every format, and no panics on hostile bytes.
//! * `regression`: one test per bug found, named after it.
//! * `builder_config`: every builder setter before and after the first append (issue 19).
//! * `batch_accessors`: `read::Batch`'s format-independent accessors over v0, v1 and v2.
//! * `checked_records`: the checked iteration against `validate` and `records`.
//! * `explain`: the tolerant field walker on sound, damaged and foreign bytes.
//! * `end_txn_marker`: `write::end_txn_marker` against Kafka's bytes.
//! * `owned_records`: `OwnedRecord`, shared slices of the input or of one decompressed buffer.
//! * `scan_records`: `V2Batch::scan_records` against the full record parser.
//! * `stream`: `read::stream::Streamer` over whole, positioned and chunked inputs, and hostile sizes.
//! * `strict_entries`: `Entries::max_entry_size` and `Entries::strict` against the default.

mod batch_accessors;
mod builder_config;
mod checked_records;
mod end_txn_marker;
mod explain;
mod owned_records;
mod proptests;
mod regression;
mod scan_records;
mod stats_what_if;
mod stream;
mod strict_entries;
mod vectors;

use krecords_codec::read::{Batch, Record};
use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;

/// Every record of `batch` (decompressed into `scratch`), each of which must read.
fn all_records<'b>(batch: &Batch<'b>, scratch: &'b mut Vec<u8>) -> Vec<Record<'b>> {
    batch
        .records(scratch, DEFAULT_DECOMPRESS_LIMIT)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The offsets of `batch`'s records through `checked_records`, each of which must read.
fn checked_offsets(batch: &Batch<'_>) -> Vec<i64> {
    let mut scratch = Vec::new();
    batch
        .checked_records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
        .unwrap()
        .map(|r| r.unwrap().offset())
        .collect()
}
