//! The cleaner's offset map: key → latest offset in a fixed amount of memory (the design of
//! Kafka's `SkimpyOffsetMap`).
//!
//! Keys are not stored, only their 16-byte MD5 digest; each slot is the digest followed by the
//! 8-byte offset (24 bytes), the table has `memory / 24` slots and open addressing probes for a
//! free one: attempt `n` reads the 4 bytes of the digest at `min(n, 12)` as a big-endian `i32`,
//! adds `max(0, n - 12)`, and takes its absolute value modulo the slot count. An all-zero slot is
//! empty. Two keys with the same digest are one key, as in Kafka.
//!
//! The cleaner fills the map up to `slots * 0.9` distinct keys (Kafka's
//! `log.cleaner.io.buffer.load.factor`); a put beyond that ends the map early (a partial clean).

/// Bytes of one slot: the digest and the offset.
pub(crate) const BYTES_PER_ENTRY: usize = 16 + 8;

/// The share of slots the cleaner fills (Kafka's default `log.cleaner.io.buffer.load.factor`).
pub(crate) const LOAD_FACTOR: f64 = 0.9;

#[derive(Debug)]
pub(crate) struct OffsetMap {
    bytes: Vec<u8>,
    slots: usize,
    entries: usize,
    latest_offset: i64,
}

impl OffsetMap {
    /// A map in `memory` bytes (at least one slot).
    pub(crate) fn new(memory: usize) -> Self {
        let slots = (memory / BYTES_PER_ENTRY).max(1);
        OffsetMap {
            bytes: vec![0; slots * BYTES_PER_ENTRY],
            slots,
            entries: 0,
            latest_offset: -1,
        }
    }

    /// Number of slots.
    #[cfg(test)]
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// Distinct keys mapped.
    pub(crate) fn len(&self) -> usize {
        self.entries
    }

    /// How many distinct keys the cleaner puts before the map counts as full.
    pub(crate) fn max_desired_len(&self) -> usize {
        (self.slots as f64 * LOAD_FACTOR) as usize
    }

    /// The last offset put or set with [`OffsetMap::update_latest_offset`] (-1 when none).
    pub(crate) fn latest_offset(&self) -> i64 {
        self.latest_offset
    }

    pub(crate) fn update_latest_offset(&mut self, offset: i64) {
        self.latest_offset = offset;
    }

    fn position_of(hash: &[u8; 16], attempt: usize, slots: usize) -> usize {
        let at = attempt.min(12);
        let probe = i32::from_be_bytes([hash[at], hash[at + 1], hash[at + 2], hash[at + 3]]);
        let probe = probe.wrapping_add(attempt.saturating_sub(12) as i32);
        // Kafka's `Utils.abs`: i32::MIN maps to 0.
        let abs = if probe == i32::MIN { 0 } else { probe.abs() };
        (abs as usize % slots) * BYTES_PER_ENTRY
    }

    fn is_empty_slot(&self, pos: usize) -> bool {
        let slot = &self.bytes[pos..pos + BYTES_PER_ENTRY];
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&slot[i..i + 8]);
            u64::from_be_bytes(w)
        };
        word(0) | word(8) | word(16) == 0
    }

    /// Maps `key` to `offset` (replacing an earlier offset of the same key).
    ///
    /// # Panics
    ///
    /// Never when the caller respects [`OffsetMap::max_desired_len`]; a put into a table with no
    /// free slot is refused with `false` instead.
    #[cfg(test)]
    pub(crate) fn put(&mut self, key: &[u8], offset: i64) -> bool {
        self.put_digest(&md5(key), offset)
    }

    /// [`OffsetMap::put`] of a key whose digest ([`md5`]) the caller computed. (Digesting a
    /// batch's keys first and then probing in a tight loop lets the probes' cache misses
    /// overlap.)
    pub(crate) fn put_digest(&mut self, hash: &[u8; 16], offset: i64) -> bool {
        let hash = *hash;
        let mut attempt = 0;
        loop {
            let pos = Self::position_of(&hash, attempt, self.slots);
            if self.is_empty_slot(pos) {
                if self.entries >= self.slots {
                    return false;
                }
                self.bytes[pos..pos + 16].copy_from_slice(&hash);
                self.bytes[pos + 16..pos + 24].copy_from_slice(&offset.to_be_bytes());
                self.entries += 1;
                self.latest_offset = offset;
                return true;
            }
            if self.bytes[pos..pos + 16] == hash {
                self.bytes[pos + 16..pos + 24].copy_from_slice(&offset.to_be_bytes());
                self.latest_offset = offset;
                return true;
            }
            attempt += 1;
            if attempt > self.slots + 12 {
                return false;
            }
        }
    }

    /// The latest offset of `key`, -1 when it is not mapped.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &[u8]) -> i64 {
        self.get_digest(&md5(key))
    }

    /// [`OffsetMap::get`] of a key whose digest the caller computed.
    pub(crate) fn get_digest(&self, hash: &[u8; 16]) -> i64 {
        let hash = *hash;
        let mut attempt = 0;
        loop {
            let pos = Self::position_of(&hash, attempt, self.slots);
            if self.is_empty_slot(pos) {
                return -1;
            }
            if self.bytes[pos..pos + 16] == hash {
                let mut o = [0u8; 8];
                o.copy_from_slice(&self.bytes[pos + 16..pos + 24]);
                return i64::from_be_bytes(o);
            }
            attempt += 1;
            if attempt > self.slots + 12 {
                return -1;
            }
        }
    }
}

/// MD5 (RFC 1321), the digest Kafka's cleaner uses by default (`log.cleaner.hash.algorithm`).
// MD5 is defined on little-endian words and a little-endian bit length.
#[allow(clippy::little_endian_bytes)]
pub(crate) fn md5(input: &[u8]) -> [u8; 16] {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    // floor(|sin(i + 1)| * 2^32), RFC 1321's table (computing it per digest cost more than the
    // digest).
    const K: [u32; 64] = [
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
        0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
        0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
        0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
        0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
        0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
        0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
        0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
        0xeb86d391,
    ];
    let mut state: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
    let bit_len = (input.len() as u64).wrapping_mul(8);
    // The last partial block, the 0x80 byte, zeros and the length: one or two blocks, on the
    // stack.
    let full = input.len() / 64 * 64;
    let rest = input.len() - full;
    let mut tail = [0u8; 128];
    tail[..rest].copy_from_slice(&input[full..]);
    tail[rest] = 0x80;
    let tail_len = if rest < 56 { 64 } else { 128 };
    tail[tail_len - 8..tail_len].copy_from_slice(&bit_len.to_le_bytes());
    let tail = &tail[..tail_len];
    let mut process = |chunk: &[u8]| {
        let m: [u32; 16] = std::array::from_fn(|i| {
            u32::from_le_bytes([
                chunk[4 * i],
                chunk[4 * i + 1],
                chunk[4 * i + 2],
                chunk[4 * i + 3],
            ])
        });
        let [mut a, mut b, mut c, mut d] = state;
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(K[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        state[0] = state[0].wrapping_add(a);
        state[1] = state[1].wrapping_add(b);
        state[2] = state[2].wrapping_add(c);
        state[3] = state[3].wrapping_add(d);
    };
    for chunk in input[..full].chunks_exact(64) {
        process(chunk);
    }
    for chunk in tail.chunks_exact(64) {
        process(chunk);
    }
    let mut out = [0u8; 16];
    for (i, w) in state.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn md5_vectors() {
        assert_eq!(hex(&md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(&md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            hex(&md5(b"The quick brown fox jumps over the lazy dog")),
            "9e107d9d372bb6826bd81d3542a419d6"
        );
        assert_eq!(hex(&md5(&[b'a'; 56])), "3b0c8ac703f828b04c6c197006d17218");
        assert_eq!(hex(&md5(&[b'a'; 64])), "014842d480b571495a4a0363793f7367");
        let long = vec![b'a'; 1000];
        assert_eq!(hex(&md5(&long)), "cabe45dcc9ae5b66ba86600cca6b8ba8");
    }

    #[test]
    fn puts_gets_and_bounded_memory() {
        let mut m = OffsetMap::new(24 * 1000);
        assert_eq!(m.slots(), 1000);
        assert_eq!(m.max_desired_len(), 900);
        for i in 0..900i64 {
            assert!(m.put(format!("key{i}").as_bytes(), i));
        }
        for i in 0..900i64 {
            assert_eq!(m.get(format!("key{i}").as_bytes()), i);
        }
        assert!(m.put(b"key7", 5000));
        assert_eq!(m.get(b"key7"), 5000);
        assert_eq!(m.len(), 900);
        assert_eq!(m.latest_offset(), 5000);
        assert_eq!(m.get(b"missing"), -1);
        let mut tiny = OffsetMap::new(48);
        assert!(tiny.put(b"a", 1));
        assert!(tiny.put(b"b", 2));
        assert!(!tiny.put(b"c", 3));
    }
}
