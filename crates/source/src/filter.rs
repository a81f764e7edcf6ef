//! Which entries and records of a read are shown: offset and time ranges, a producer id,
//! control or transactional batches only (the filters of `krec dump`).
//!
//! Ranges are half-open: the start offset (as [`crate::Range::resolve`] resolved it) and the
//! start time are inclusive, the end offset and end time exclusive. An entry is kept when its
//! offsets `[base, last]` and its timestamps `[base timestamp, max timestamp]` overlap the
//! ranges; of its records, only those inside both ranges ([`Filter::record`]). Everything an entry needs for that decision is in its header, so an
//! entry outside the ranges is skipped without decompressing or even checking its CRC; a v0/v1
//! compressed wrapper, whose header knows only its last offset and (v1) its max timestamp, is
//! decompressed when the header cannot rule it out.

use krecords_codec::read::{Batch, Record};
use krecords_codec::TimestampType;

/// The filters, all optional and combined with AND.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter {
    /// First offset printed (inclusive).
    pub offset_start: Option<i64>,
    /// Offsets from here on are not printed (exclusive).
    pub offset_end: Option<i64>,
    /// First timestamp printed, ms (inclusive).
    pub time_start: Option<i64>,
    /// Timestamps from here on are not printed, ms (exclusive).
    pub time_end: Option<i64>,
    /// Only entries with this producer id (-1: v0/v1 and non-idempotent v2 batches).
    pub producer_id: Option<i64>,
    /// Only control batches.
    pub control_only: bool,
    /// Only transactional batches (their commit/abort markers included).
    pub transactional_only: bool,
}

/// What the header of an entry says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Outside the filter: skip it without decoding.
    Skip,
    /// Print it.
    Keep,
    /// A v0/v1 compressed wrapper the header could not rule out: decide with
    /// [`Filter::wrapper_in_range`] once its records are decoded.
    Decode,
}

fn in_range(v: i64, start: Option<i64>, end: Option<i64>) -> bool {
    start.is_none_or(|s| v >= s) && end.is_none_or(|e| v < e)
}

impl Filter {
    fn has_time(&self) -> bool {
        self.time_start.is_some() || self.time_end.is_some()
    }

    fn has_offsets(&self) -> bool {
        self.offset_start.is_some() || self.offset_end.is_some()
    }

    /// Whether the closed interval `[lo, hi]` overlaps `[start, end)`.
    fn overlaps(lo: i64, hi: i64, start: Option<i64>, end: Option<i64>) -> bool {
        start.is_none_or(|s| hi >= s) && end.is_none_or(|e| lo < e)
    }

    /// Decides from the header alone.
    pub fn entry(&self, batch: &Batch<'_>) -> Verdict {
        match batch {
            Batch::V2(b) => {
                let pass = self.producer_id.is_none_or(|p| b.raw_producer_id() == p)
                    && (!self.control_only || b.is_control())
                    && (!self.transactional_only || b.is_transactional())
                    && Self::overlaps(
                        b.base_offset(),
                        b.last_offset(),
                        self.offset_start,
                        self.offset_end,
                    )
                    && {
                        let (base, max) = (b.base_timestamp(), b.max_timestamp());
                        // LogAppendTime: every record has the max timestamp (the append time).
                        let lo = match b.timestamp_type() {
                            TimestampType::LogAppendTime => max,
                            _ => base.min(max),
                        };
                        Self::overlaps(lo, base.max(max), self.time_start, self.time_end)
                    };
                if pass {
                    Verdict::Keep
                } else {
                    Verdict::Skip
                }
            }
            Batch::Legacy(b) => {
                if self.control_only
                    || self.transactional_only
                    || self.producer_id.is_some_and(|p| p != -1)
                {
                    return Verdict::Skip;
                }
                // The header has the last offset and (v1) the max timestamp; a v0 entry has no
                // timestamp and never matches a time range.
                let last = b.offset();
                let ts = b.timestamp();
                if self.has_time() && ts.is_none() {
                    return Verdict::Skip;
                }
                if self.offset_start.is_some_and(|s| last < s)
                    || ts.is_some_and(|t| self.time_start.is_some_and(|s| t < s))
                {
                    return Verdict::Skip;
                }
                if !b.is_compressed() || b.timestamp_type() == TimestampType::LogAppendTime {
                    // One message, or a wrapper whose timestamp is every inner message's.
                    let ts_ok = ts.is_none_or(|t| in_range(t, self.time_start, self.time_end));
                    if !b.is_compressed() {
                        return if ts_ok && in_range(last, self.offset_start, self.offset_end) {
                            Verdict::Keep
                        } else {
                            Verdict::Skip
                        };
                    }
                    if !ts_ok {
                        return Verdict::Skip;
                    }
                }
                if self.offset_end.is_some() || self.time_end.is_some() {
                    Verdict::Decode
                } else {
                    Verdict::Keep
                }
            }
        }
    }

    /// For a wrapper the header could not decide: whether its inner offsets `[first, last]` and
    /// inner timestamps (lowest `min_ts`) reach into the ranges.
    pub fn wrapper_in_range(&self, first: Option<i64>, min_ts: Option<i64>) -> bool {
        first.is_none_or(|f| self.offset_end.is_none_or(|e| f < e))
            && min_ts.is_none_or(|t| self.time_end.is_none_or(|e| t < e))
    }

    /// Whether the filter keeps every entry (no range, producer, control or transactional
    /// condition).
    ///
    /// ```
    /// use krecords_source::filter::Filter;
    /// assert!(Filter::default().is_all());
    /// assert!(!Filter { control_only: true, ..Filter::default() }.is_all());
    /// ```
    pub fn is_all(&self) -> bool {
        !self.has_offsets()
            && !self.has_time()
            && self.producer_id.is_none()
            && !self.control_only
            && !self.transactional_only
    }

    /// Whether records need checking one by one.
    pub fn filters_records(&self) -> bool {
        self.has_offsets() || self.has_time()
    }

    /// Whether a record is inside the offset and time ranges.
    pub fn record(&self, r: &Record<'_>) -> bool {
        in_range(r.offset(), self.offset_start, self.offset_end)
            && (!self.has_time()
                || r.timestamp()
                    .is_some_and(|t| in_range(t, self.time_start, self.time_end)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_half_open() {
        assert!(in_range(5, Some(5), Some(6)));
        assert!(!in_range(6, Some(5), Some(6)));
        assert!(!in_range(4, Some(5), None));
        assert!(in_range(i64::MIN, None, None));
        assert!(Filter::overlaps(0, 9, Some(9), Some(10)));
        assert!(!Filter::overlaps(0, 9, Some(10), None));
        assert!(!Filter::overlaps(10, 19, None, Some(10)));
        assert!(Filter::overlaps(10, 19, None, Some(11)));
    }
}
