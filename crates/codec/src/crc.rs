//! The two checksums of Kafka's formats and the byte ranges they cover.
//!
//! * v0/v1 messages: CRC-32 (IEEE) over `magic .. end of value`, i.e. from byte 16 of the entry
//!   (after offset, size and the CRC itself) to the end of the message.
//! * v2 batches: CRC-32C (Castagnoli) over `attributes .. end of batch`, i.e. from byte 21 of the
//!   entry to the end; base offset, length, partition leader epoch and magic are not covered, so a
//!   broker can assign offsets and set the leader epoch without recomputing it.

/// CRC-32C (Castagnoli), hardware accelerated where the CPU has it.
#[inline]
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
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
}
