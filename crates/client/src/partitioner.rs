//! Where a producer puts a record: Kafka's default partitioner.
//!
//! A record with a key goes to `toPositive(murmur2(key)) % partitions`, as the Java producer's
//! `BuiltInPartitioner.partitionForKey` (and librdkafka's `murmur2_random` partitioner) does,
//! so records produced by krec and by Java clients with the same key share a partition. A
//! record without a key goes to the sticky partition: all keyless records of one batch go to
//! the same partition, and the next batch picks the next partition (KIP-480, without the
//! adaptive load statistics: the partitions are taken in turn from a random start).

#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

/// Kafka's `Utils.murmur2`: the 32-bit MurmurHash2 of `data` with seed `0x9747b28c`, as a
/// signed Java `int`.
///
/// # Examples
///
/// ```
/// assert_eq!(krecords_client::murmur2(b"foobar"), -790332482);
/// ```
// MurmurHash2 reads its input as little-endian words, by definition.
#[allow(clippy::little_endian_bytes)]
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    // Java's `seed ^ length` on ints: the length's low 32 bits.
    #[allow(clippy::cast_possible_truncation)]
    let mut h: u32 = SEED ^ (data.len() as u32);
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut word = [0u8; 4];
        word.copy_from_slice(c);
        let mut k = u32::from_le_bytes(word);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        // Java's fall-through switch: byte 2 << 16, byte 1 << 8, byte 0, i.e. the tail read
        // little-endian.
        let mut word = [0u8; 4];
        for (w, b) in word.iter_mut().zip(tail) {
            *w = *b;
        }
        h ^= u32::from_le_bytes(word);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    i32::from_be_bytes(h.to_be_bytes())
}

/// The partition of `key` among `partitions` (`partitions` > 0): Kafka's
/// `Utils.toPositive(Utils.murmur2(key)) % partitions`. `None` when `partitions` is not
/// positive.
///
/// # Examples
///
/// ```
/// assert_eq!(krecords_client::partition_for_key(b"foobar", 12), Some(6));
/// ```
pub fn partition_for_key(key: &[u8], partitions: i32) -> Option<i32> {
    if partitions <= 0 {
        return None;
    }
    (murmur2(key) & 0x7fff_ffff).checked_rem(partitions)
}

/// Kafka's default partitioner for one topic: keyed records by [`partition_for_key`], keyless
/// ones to a sticky partition that moves on at each [`Partitioner::next_batch`].
#[derive(Debug, Clone)]
pub struct Partitioner {
    partitions: i32,
    sticky: i32,
}

impl Partitioner {
    /// A partitioner over `partitions` partitions (at least 1) whose first sticky partition is
    /// `start % partitions`. `None` when `partitions` is not positive.
    pub fn new(partitions: i32, start: u32) -> Option<Partitioner> {
        if partitions <= 0 {
            return None;
        }
        let start = i32::try_from(start & 0x7fff_ffff)
            .ok()?
            .checked_rem(partitions)?;
        Some(Partitioner {
            partitions,
            sticky: start,
        })
    }

    /// The number of partitions.
    pub fn partitions(&self) -> i32 {
        self.partitions
    }

    /// The partition of a record with `key`: its key's partition, or the sticky partition for
    /// a record without a key.
    pub fn partition(&self, key: Option<&[u8]>) -> i32 {
        match key {
            Some(k) => partition_for_key(k, self.partitions).unwrap_or(0),
            None => self.sticky,
        }
    }

    /// Moves the sticky partition on to the next one (after a batch of keyless records).
    pub fn next_batch(&mut self) {
        self.sticky = self
            .sticky
            .checked_add(1)
            .and_then(|p| p.checked_rem(self.partitions))
            .unwrap_or(0);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::arithmetic_side_effects)]
    use super::*;
    use proptest::prelude::*;

    /// Kafka's own vectors: `UtilsTest.testMurmur2` in apache/kafka
    /// (clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java).
    #[test]
    fn murmur2_matches_kafka_test_vectors() {
        let cases: [(&[u8], i32); 6] = [
            (b"21", -973932308),
            (b"foobar", -790332482),
            (b"a-little-bit-long-string", -985981536),
            (b"a-little-bit-longer-string", -1486304829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58897971,
            ),
            (b"abc", 479470107),
        ];
        for (data, want) in cases {
            assert_eq!(murmur2(data), want, "{}", String::from_utf8_lossy(data));
        }
    }

    #[test]
    fn partition_is_the_positive_hash_modulo_the_count() {
        let h = i64::from(-790332482i32 & 0x7fff_ffff);
        assert_eq!(partition_for_key(b"foobar", 12), Some((h % 12) as i32));
        assert_eq!(partition_for_key(b"abc", 1), Some(0));
        assert_eq!(partition_for_key(b"abc", 0), None);
        assert_eq!(partition_for_key(b"abc", -3), None);
    }

    #[test]
    fn keyless_records_stick_to_one_partition_per_batch() {
        let mut p = Partitioner::new(3, 7).unwrap();
        assert_eq!(p.partition(None), 1);
        assert_eq!(p.partition(None), 1);
        p.next_batch();
        assert_eq!(p.partition(None), 2);
        p.next_batch();
        assert_eq!(p.partition(None), 0);
        assert_eq!(
            p.partition(Some(b"foobar")),
            partition_for_key(b"foobar", 3).unwrap()
        );
        assert!(Partitioner::new(0, 0).is_none());
    }

    proptest! {
        #[test]
        fn any_key_lands_in_range(key in proptest::collection::vec(any::<u8>(), 0..64),
                                  n in 1i32..10_000) {
            let p = partition_for_key(&key, n).unwrap();
            prop_assert!((0..n).contains(&p));
        }
    }
}
