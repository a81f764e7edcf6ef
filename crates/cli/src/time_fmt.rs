//! Timestamps as ISO 8601 text: the sources layer's ([`krecords_source::time`]).

pub use krecords_source::time::{iso, now_ms, parse_lookup_time, parse_record_time};
