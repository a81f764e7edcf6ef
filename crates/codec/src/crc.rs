//! The two checksums of Kafka's formats and the byte ranges they cover.
//!
//! * v0/v1 messages: CRC-32 (IEEE) over `magic .. end of value`, i.e. from byte 16 of the entry
//!   (after offset, size and the CRC itself) to the end of the message.
//! * v2 batches: CRC-32C (Castagnoli) over `attributes .. end of batch`, i.e. from byte 21 of the
//!   entry to the end; base offset, length, partition leader epoch and magic are not covered, so a
//!   broker can assign offsets and set the leader epoch without recomputing it.

/// CRC-32C (Castagnoli), hardware accelerated where the CPU has it.
///
/// Uses `crc-fast`, which folds with carry-less multiplication (PCLMULQDQ/VPCLMULQDQ, or PMULL
/// on ARM) and runs at memory speed on large inputs: about twice the `crc32c` crate's SSE4.2
/// path on the machine BENCHMARKS.md describes. Both compute the same function; a test pins
/// them together.
#[inline]
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, bytes) as u32
}

/// CRC-32 (IEEE 802.3), as `java.util.zip.CRC32`.
#[inline]
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_values() {
        assert_eq!(super::crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(super::crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn agrees_with_the_crc32c_crate_at_every_length_and_alignment() {
        let data: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for start in 0..16 {
            for len in (0..600).chain([1021, 2048, 4000]) {
                if let Some(s) = data.get(start..start + len) {
                    assert_eq!(
                        super::crc32c(s),
                        crc32c::crc32c(s),
                        "start {start} len {len}"
                    );
                }
            }
        }
    }
}
