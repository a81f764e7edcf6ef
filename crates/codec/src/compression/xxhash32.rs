//! XXH32, the 32-bit xxHash that the LZ4 frame format uses for its header checksum byte and its
//! optional block and content checksums.
//!
//! Written from the xxHash specification (`doc/xxhash_spec.md` in Cyan4973/xxHash): input is read
//! as little-endian 32-bit lanes, four accumulators take 16-byte stripes, the tail is mixed in 4
//! then 1 byte at a time, and a final avalanche spreads the bits. Used only on frame headers and
//! on LZ4 blocks whose frame asks for block checksums, so a plain loop is fast enough.

const PRIME1: u32 = 0x9E37_79B1;
const PRIME2: u32 = 0x85EB_CA77;
const PRIME3: u32 = 0xC2B2_AE3D;
const PRIME4: u32 = 0x27D4_EB2F;
const PRIME5: u32 = 0x1656_67B1;

/// Reads a little-endian lane of `bytes`, which its callers take from `chunks_exact(4)` (a
/// shorter slice would read as 0, which cannot happen).
#[allow(clippy::little_endian_bytes)] // xxHash is defined over little-endian lanes
#[inline]
fn lane(bytes: &[u8]) -> u32 {
    bytes.first_chunk().copied().map_or(0, u32::from_le_bytes)
}

#[inline]
fn round(acc: u32, lane: u32) -> u32 {
    acc.wrapping_add(lane.wrapping_mul(PRIME2))
        .rotate_left(13)
        .wrapping_mul(PRIME1)
}

/// The XXH32 hash of `data` with `seed`.
pub(crate) fn xxh32(data: &[u8], seed: u32) -> u32 {
    let mut rest = data;
    let mut hash = if data.len() >= 16 {
        let mut acc = [
            seed.wrapping_add(PRIME1).wrapping_add(PRIME2),
            seed.wrapping_add(PRIME2),
            seed,
            seed.wrapping_sub(PRIME1),
        ];
        let mut stripes = data.chunks_exact(16);
        for stripe in &mut stripes {
            for (a, word) in acc.iter_mut().zip(stripe.chunks_exact(4)) {
                *a = round(*a, lane(word));
            }
        }
        rest = stripes.remainder();
        acc[0]
            .rotate_left(1)
            .wrapping_add(acc[1].rotate_left(7))
            .wrapping_add(acc[2].rotate_left(12))
            .wrapping_add(acc[3].rotate_left(18))
    } else {
        seed.wrapping_add(PRIME5)
    };
    // The specification adds the length modulo 2^32.
    hash = hash.wrapping_add(data.len() as u32);
    let mut words = rest.chunks_exact(4);
    for word in &mut words {
        hash = hash
            .wrapping_add(lane(word).wrapping_mul(PRIME3))
            .rotate_left(17)
            .wrapping_mul(PRIME4);
    }
    for &byte in words.remainder() {
        hash = hash
            .wrapping_add(u32::from(byte).wrapping_mul(PRIME5))
            .rotate_left(11)
            .wrapping_mul(PRIME1);
    }
    hash ^= hash >> 15;
    hash = hash.wrapping_mul(PRIME2);
    hash ^= hash >> 13;
    hash = hash.wrapping_mul(PRIME3);
    hash ^= hash >> 16;
    hash
}

#[cfg(test)]
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::xxh32;

    #[test]
    fn reference_vectors() {
        // Values published with the reference implementation (and by every port's tests).
        assert_eq!(xxh32(b"", 0), 0x02CC_5D05);
        assert_eq!(xxh32(b"a", 0), 0x550D_7456);
        assert_eq!(xxh32(b"abc", 0), 0x32D1_53FF);
        assert_eq!(
            xxh32(b"Nobody inspects the spammish repetition", 0),
            0xE229_3B2F
        );
    }

    #[test]
    fn seed_changes_hash() {
        assert_ne!(xxh32(b"abc", 0), xxh32(b"abc", 1));
    }
}
