//! Builders that write entries byte for byte as Apache Kafka's `MemoryRecordsBuilder` does.
//!
//! Both builders reserve the header, append records, compress the records section when a codec
//! is set, then fill in the header with lengths and the checksum.

mod legacy;
mod marker;
mod offset;
mod v2;

pub use legacy::LegacyBuilder;
pub use marker::{end_txn_marker, EndTxnBatch};
pub use offset::set_base_offset;
pub use v2::{write_empty_batch, EmptyBatch, V2Builder};

use crate::{Error, Header, Result};

/// One record to append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewRecord<'a> {
    /// Timestamp in ms; -1 means none (Kafka's `NO_TIMESTAMP`), other negatives are rejected.
    pub timestamp: i64,
    /// Key, `None` for null.
    pub key: Option<&'a [u8]>,
    /// Value, `None` for null.
    pub value: Option<&'a [u8]>,
    /// Headers in order (v2 only).
    pub headers: &'a [Header<'a>],
}

impl<'a> NewRecord<'a> {
    /// A record without headers.
    pub fn new(timestamp: i64, key: Option<&'a [u8]>, value: Option<&'a [u8]>) -> Self {
        NewRecord {
            timestamp,
            key,
            value,
            headers: &[],
        }
    }

    /// The same record with headers.
    pub fn with_headers(mut self, headers: &'a [Header<'a>]) -> Self {
        self.headers = headers;
        self
    }
}

/// Checks what Kafka's `appendWithOffset` checks: increasing offsets, offset delta within i32,
/// and timestamps that are -1 or non-negative.
#[inline]
pub(crate) fn check_append(
    base_offset: i64,
    last_offset: Option<i64>,
    offset: i64,
    timestamp: i64,
) -> Result<()> {
    if let Some(last) = last_offset {
        if offset <= last {
            return Err(Error::Unencodable {
                reason: format!("offset {offset} does not follow the previous offset {last}"),
            });
        }
    }
    let delta = offset.checked_sub(base_offset);
    if !delta.is_some_and(|d| (0..=i64::from(i32::MAX)).contains(&d)) {
        return Err(Error::Unencodable {
            reason: format!("offset {offset} is outside base offset {base_offset} + 0..=i32::MAX"),
        });
    }
    if timestamp < 0 && timestamp != -1 {
        return Err(Error::Unencodable {
            reason: format!("invalid negative timestamp {timestamp}"),
        });
    }
    Ok(())
}

/// Converts a length to Kafka's i32, or reports it as unencodable.
#[inline]
pub(crate) fn len_i32(len: usize, what: &str) -> Result<i32> {
    i32::try_from(len).map_err(|_| Error::Unencodable {
        reason: format!("{what} of {len} bytes does not fit an i32 length"),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn offset_delta_overflow_is_an_error_not_a_panic() {
        // Regression: base -1 and offset i64::MAX wrapped around the delta check.
        assert!(super::check_append(-1, None, i64::MAX, 0).is_err());
        assert!(super::check_append(i64::MIN, None, i64::MAX, 0).is_err());
        assert!(super::check_append(5, None, 5 + i64::from(i32::MAX), 0).is_ok());
    }
}
