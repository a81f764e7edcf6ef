//! Segment grouping (Kafka's `Cleaner.groupSegmentsBySize`): consecutive segments cleaned into
//! one new segment while their summed log sizes stay within `segment.bytes`, their summed offset
//! and time index sizes each within `segment.index.bytes`, and every offset the group may hold
//! within 2^31 - 1 of its base offset (the indexes store 32-bit relative offsets).

/// What grouping needs to know of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SegmentSizes {
    pub(crate) base_offset: i64,
    pub(crate) log_bytes: u64,
    pub(crate) offset_index_bytes: u64,
    pub(crate) time_index_bytes: u64,
}

/// Groups `segments` (consecutive, oldest first) into ranges of indexes. The worst-case last
/// offset of a candidate is the next segment's base offset - 1, or `first_uncleanable_offset - 1`
/// for the last one; an empty candidate skips the offset check (Kafka: so an empty segment is not
/// left behind every 2^31 offsets).
pub(crate) fn group_segments(
    segments: &[SegmentSizes],
    max_size: u64,
    max_index_size: u64,
    first_uncleanable_offset: i64,
) -> Vec<std::ops::Range<usize>> {
    let mut groups = Vec::new();
    let mut i = 0;
    while i < segments.len() {
        let start = i;
        let first = segments[i];
        let mut log = first.log_bytes;
        let mut oi = first.offset_index_bytes;
        let mut ti = first.time_index_bytes;
        i += 1;
        while i < segments.len() {
            let s = segments[i];
            let last_offset = match segments.get(i + 1) {
                Some(next) => next.base_offset - 1,
                None => first_uncleanable_offset - 1,
            };
            let fits = log + s.log_bytes <= max_size
                && oi + s.offset_index_bytes <= max_index_size
                && ti + s.time_index_bytes <= max_index_size
                && (s.log_bytes == 0
                    || last_offset.saturating_sub(first.base_offset) <= i64::from(i32::MAX));
            if !fits {
                break;
            }
            log += s.log_bytes;
            oi += s.offset_index_bytes;
            ti += s.time_index_bytes;
            i += 1;
        }
        groups.push(start..i);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(base: i64, log: u64) -> SegmentSizes {
        SegmentSizes {
            base_offset: base,
            log_bytes: log,
            offset_index_bytes: 8,
            time_index_bytes: 12,
        }
    }

    #[test]
    fn test_segment_grouping() {
        let segs: Vec<_> = (0..10).map(|i| seg(i * 10, 100)).collect();
        let g = group_segments(&segs, 300, 1 << 20, 100);
        assert_eq!(g, vec![0..3, 3..6, 6..9, 9..10]);
        let g = group_segments(&segs, u64::MAX, 24, 100);
        assert_eq!(g, vec![0..2, 2..4, 4..6, 6..8, 8..10]);
        let g = group_segments(&segs, u64::MAX, u64::MAX, 100);
        assert_eq!(g, vec![0..10]);
    }

    #[test]
    fn test_segment_grouping_with_sparse_offsets() {
        let max = i64::from(i32::MAX);
        // The second segment may hold offsets up to the third's base - 1.
        let segs = vec![
            seg(0, 1),
            seg(max - 10, 1),
            seg(max + 1, 1),
            seg(max + 2, 0),
        ];
        let g = group_segments(&segs, u64::MAX, u64::MAX, max + 100);
        assert_eq!(g, vec![0..2, 2..4]);
        // Empty segments never break a group on offsets.
        let segs = vec![seg(0, 1), seg(max + 5, 0), seg(max + 9, 0)];
        assert_eq!(
            group_segments(&segs, u64::MAX, u64::MAX, 3 * max),
            vec![0..3]
        );
    }

    /// Kafka's `testSegmentGroupingFollowingLoadOfZeroIndex`: a segment at 2^31 / 2 whose
    /// last batch is at 2^31 + 1 cannot join the segment at 0, whatever its (empty) index says:
    /// the span is taken from the offsets that bound the segment, never from its index.
    #[test]
    fn test_segment_grouping_following_load_of_zero_index() {
        let max = i64::from(i32::MAX);
        let segs = vec![seg(0, 2), seg(max / 2, 2)];
        let g = group_segments(&segs, u64::MAX, u64::MAX, max + 2);
        assert_eq!(g, vec![0..1, 1..2]);
        // One offset less and both fit.
        assert_eq!(
            group_segments(&segs, u64::MAX, u64::MAX, max + 1),
            vec![0..2]
        );
    }
}
