//! Inputs for the differential test: valid entries of every magic and codec (the Kafka-made
//! vectors, plus batches built here with random contents), mutated field by field, and pure
//! random bytes.
//!
//! A mutation picks a target — a header field of the first entry (every v2 header field, every
//! v0/v1 message field), the records or compressed section, a length, or anywhere — and
//! overwrites it with a boundary value, flips bits, inserts or deletes bytes, or cuts the input
//! short. Half of the mutated inputs then get their CRCs fixed, so that the mutation reaches the
//! checks behind the checksum. Every input is reproducible from the seed and its index.

use krecords_codec::crc::{crc32, crc32c};
use krecords_codec::layout::{legacy, v2};
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, Header};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One generated input.
#[derive(Debug, Clone)]
pub struct Case {
    /// The bytes both readers get.
    pub bytes: Vec<u8>,
    /// How it was made: the seed input and the mutations, for reports.
    pub origin: String,
}

/// The valid inputs mutations start from.
pub struct Seeds {
    seeds: Vec<(String, Vec<u8>)>,
}

impl Seeds {
    /// The vectors' entries (`name`, bytes) plus batches built here of every codec.
    pub fn new(vectors: Vec<(String, Vec<u8>)>) -> Self {
        let mut seeds: Vec<(String, Vec<u8>)> = vectors
            .into_iter()
            .filter(|(_, b)| !b.is_empty() && b.len() <= 64 * 1024)
            .collect();
        let mut rng = StdRng::seed_from_u64(0x6b72_6563);
        for codec in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            for i in 0..4 {
                seeds.push((format!("built-{codec:?}-{i}"), built(&mut rng, codec)));
            }
        }
        Seeds { seeds }
    }

    /// How many seed inputs there are.
    pub fn len(&self) -> usize {
        self.seeds.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.seeds.is_empty()
    }

    /// Input number `index` of the run with `seed`.
    pub fn case(&self, seed: u64, index: u64) -> Case {
        let mut rng = StdRng::seed_from_u64(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        if self.seeds.is_empty() || rng.gen_ratio(1, 12) {
            return random_bytes(&mut rng);
        }
        let (name, base) = &self.seeds[rng.gen_range(0..self.seeds.len())];
        let mut bytes = base.clone();
        let mut origin = name.clone();
        if rng.gen_ratio(1, 10) {
            // Two inputs back to back, the second maybe cut.
            let (n2, b2) = &self.seeds[rng.gen_range(0..self.seeds.len())];
            bytes.extend_from_slice(b2);
            origin.push_str(&format!("+{n2}"));
        }
        let mutations = match rng.gen_range(0..10) {
            0 => 0,
            1..=6 => 1,
            7 | 8 => 2,
            _ => 3,
        };
        for _ in 0..mutations {
            let what = mutate(&mut rng, &mut bytes);
            origin.push(':');
            origin.push_str(&what);
        }
        if mutations > 0 && rng.gen_bool(0.5) {
            fix_crcs(&mut bytes);
            origin.push_str(":crc-fixed");
        }
        Case { bytes, origin }
    }
}

/// A v2 batch with random keys, values, headers and producer fields, compressed with `codec`.
fn built(rng: &mut StdRng, codec: Compression) -> Vec<u8> {
    let mut b = V2Builder::new(rng.gen_range(0..1000)).compression(codec, None);
    if rng.gen_bool(0.5) {
        b = b
            .producer(
                rng.gen_range(0..10_000),
                rng.gen_range(0..5),
                rng.gen_range(0..100),
            )
            .transactional(rng.gen_bool(0.3));
    }
    let n = rng.gen_range(1..6);
    let ts = 1_714_000_000_000 + rng.gen_range(0..1000);
    let keys: Vec<Vec<u8>> = (0..n).map(|_| random_vec(rng, 0..12)).collect();
    let values: Vec<Vec<u8>> = (0..n).map(|_| random_vec(rng, 0..80)).collect();
    let hkeys: Vec<Vec<u8>> = (0..n).map(|_| random_vec(rng, 0..6)).collect();
    for i in 0..n {
        let headers = [Header {
            key: &hkeys[i],
            value: Some(&values[i][..values[i].len().min(4)]),
        }];
        let key = (i % 3 != 0).then_some(&keys[i][..]);
        let value = (i % 4 != 3).then_some(&values[i][..]);
        let mut r = NewRecord::new(ts + i as i64, key, value);
        if i % 2 == 0 {
            r = r.with_headers(&headers);
        }
        if b.append(&r).is_err() {
            break;
        }
    }
    b.finish().unwrap_or_default()
}

fn random_vec(rng: &mut StdRng, len: std::ops::Range<usize>) -> Vec<u8> {
    let n = rng.gen_range(len);
    (0..n).map(|_| rng.gen()).collect()
}

fn random_bytes(rng: &mut StdRng) -> Case {
    let mut bytes = random_vec(rng, 0..300);
    if bytes.len() >= 17 && rng.gen_bool(0.5) {
        // A plausible prefix: a size that fits and a valid magic.
        let size = (bytes.len() - 12) as i32;
        bytes[8..12].copy_from_slice(&size.to_be_bytes());
        bytes[16] = rng.gen_range(0..3);
    }
    Case {
        bytes,
        origin: "random".into(),
    }
}

/// Values that sit on boundaries.
const INTERESTING_I32: [i32; 10] = [0, 1, -1, 2, 7, 60, 61, 127, i32::MAX, i32::MIN];
const INTERESTING_I64: [i64; 6] = [0, -1, 1, i64::MAX, i64::MIN, 1 << 31];

/// The header fields of the entry at `at`: (name, position, width).
fn fields(bytes: &[u8], at: usize) -> Vec<(&'static str, usize, usize)> {
    let magic = bytes.get(at + 16).copied().unwrap_or(2);
    let mut f = vec![("offset", at, 8), ("size", at + 8, 4)];
    if magic >= 2 {
        f.extend([
            ("leader_epoch", at + v2::PARTITION_LEADER_EPOCH_OFFSET, 4),
            ("magic", at + v2::MAGIC_OFFSET, 1),
            ("crc", at + v2::CRC_OFFSET, 4),
            ("attributes", at + v2::ATTRIBUTES_OFFSET, 2),
            ("last_offset_delta", at + v2::LAST_OFFSET_DELTA_OFFSET, 4),
            ("base_timestamp", at + v2::BASE_TIMESTAMP_OFFSET, 8),
            ("max_timestamp", at + v2::MAX_TIMESTAMP_OFFSET, 8),
            ("producer_id", at + v2::PRODUCER_ID_OFFSET, 8),
            ("producer_epoch", at + v2::PRODUCER_EPOCH_OFFSET, 2),
            ("base_sequence", at + v2::BASE_SEQUENCE_OFFSET, 4),
            ("records_count", at + v2::RECORDS_COUNT_OFFSET, 4),
        ]);
    } else {
        f.extend([
            ("crc", at + legacy::CRC_OFFSET, 4),
            ("magic", at + legacy::MAGIC_OFFSET, 1),
            ("attributes", at + legacy::ATTRIBUTES_OFFSET, 1),
        ]);
        if magic == 1 {
            f.push(("timestamp", at + legacy::TIMESTAMP_OFFSET, 8));
            f.push(("key_size", at + legacy::KEY_SIZE_OFFSET_V1, 4));
        } else {
            f.push(("key_size", at + legacy::KEY_SIZE_OFFSET_V0, 4));
        }
    }
    f.retain(|&(_, p, w)| p + w <= bytes.len());
    f
}

/// Start positions of the entries of `bytes` whose size field fits.
fn entry_starts(bytes: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0usize;
    while at + 12 <= bytes.len() {
        starts.push(at);
        let size =
            i32::from_be_bytes([bytes[at + 8], bytes[at + 9], bytes[at + 10], bytes[at + 11]]);
        if size < 14 {
            break;
        }
        at = at.saturating_add(12 + size as usize);
    }
    starts
}

/// Applies one mutation; returns its description.
fn mutate(rng: &mut StdRng, bytes: &mut Vec<u8>) -> String {
    if bytes.is_empty() {
        bytes.push(rng.gen());
        return "grow".into();
    }
    let starts = entry_starts(bytes);
    let entry = starts
        .get(rng.gen_range(0..starts.len().max(1)))
        .copied()
        .unwrap_or(0);
    match rng.gen_range(0..100) {
        // A header field: a boundary value or random bits.
        0..=39 => {
            let f = fields(bytes, entry);
            if f.is_empty() {
                return flip(rng, bytes);
            }
            let (name, pos, width) = f[rng.gen_range(0..f.len())];
            match width {
                1 => {
                    let v: u8 = [0, 1, 2, 3, 0x7f, 0x80, 0xff, rng.gen()][rng.gen_range(0..8)];
                    bytes[pos] = v;
                    format!("{name}={v}")
                }
                2 => {
                    let v: i16 = [0, 1, -1, 0x07, 0x08, 0x10, 0x20, 0x40, 0x7f, rng.gen()]
                        [rng.gen_range(0..10)];
                    let v = if rng.gen_bool(0.3) {
                        // one attribute bit more or less
                        let old = i16::from_be_bytes([bytes[pos], bytes[pos + 1]]);
                        old ^ (1 << rng.gen_range(0..8))
                    } else {
                        v
                    };
                    bytes[pos..pos + 2].copy_from_slice(&v.to_be_bytes());
                    format!("{name}={v}")
                }
                4 => {
                    let old = i32::from_be_bytes([
                        bytes[pos],
                        bytes[pos + 1],
                        bytes[pos + 2],
                        bytes[pos + 3],
                    ]);
                    let v = match rng.gen_range(0..4) {
                        0 => old.wrapping_add(1),
                        1 => old.wrapping_sub(1),
                        2 => rng.gen(),
                        _ => INTERESTING_I32[rng.gen_range(0..INTERESTING_I32.len())],
                    };
                    bytes[pos..pos + 4].copy_from_slice(&v.to_be_bytes());
                    format!("{name}={v}")
                }
                _ => {
                    let v = if rng.gen_bool(0.5) {
                        INTERESTING_I64[rng.gen_range(0..INTERESTING_I64.len())]
                    } else {
                        rng.gen()
                    };
                    bytes[pos..pos + 8].copy_from_slice(&v.to_be_bytes());
                    format!("{name}={v}")
                }
            }
        }
        // Inside the records (or the compressed section): flips and overwrites.
        40..=64 => {
            let body = entry + 61;
            if body >= bytes.len() {
                return flip(rng, bytes);
            }
            let pos = rng.gen_range(body..bytes.len());
            match rng.gen_range(0..4) {
                0 => {
                    bytes[pos] ^= 1 << rng.gen_range(0..8);
                    format!("body-flip@{pos}")
                }
                1 => {
                    let v = [0u8, 1, 0x7f, 0x80, 0xff, 0xfe][rng.gen_range(0..6)];
                    bytes[pos] = v;
                    format!("body={v}@{pos}")
                }
                2 => {
                    // An over-long varint.
                    let n = rng.gen_range(1..6);
                    for i in 0..n {
                        if let Some(b) = bytes.get_mut(pos + i) {
                            *b = 0x80;
                        }
                    }
                    format!("varint-run{n}@{pos}")
                }
                _ => {
                    let v: u8 = rng.gen();
                    bytes[pos] = v;
                    format!("body-random@{pos}")
                }
            }
        }
        65..=74 => {
            let pos = rng.gen_range(0..=bytes.len());
            let n = rng.gen_range(1..5);
            let ins: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
            bytes.splice(pos..pos, ins);
            fix_sizes_maybe(rng, bytes, entry, n).map_or(format!("insert{n}@{pos}"), |s| {
                format!("insert{n}@{pos}{s}")
            })
        }
        75..=84 => {
            let pos = rng.gen_range(0..bytes.len());
            let n = rng.gen_range(1..5).min(bytes.len() - pos);
            bytes.drain(pos..pos + n);
            fix_sizes_maybe(rng, bytes, entry, -(n as i32))
                .map_or(format!("delete{n}@{pos}"), |s| {
                    format!("delete{n}@{pos}{s}")
                })
        }
        85..=89 => {
            let n = rng.gen_range(0..bytes.len());
            bytes.truncate(n);
            format!("truncate@{n}")
        }
        _ => flip(rng, bytes),
    }
}

fn flip(rng: &mut StdRng, bytes: &mut [u8]) -> String {
    let pos = rng.gen_range(0..bytes.len());
    bytes[pos] ^= 1 << rng.gen_range(0..8);
    format!("flip@{pos}")
}

/// After an insert or delete inside the entry at `entry`: half the time, move its size field
/// (and a v2 batch's length) with it.
fn fix_sizes_maybe(rng: &mut StdRng, bytes: &mut [u8], entry: usize, by: i32) -> Option<String> {
    if !rng.gen_bool(0.5) || entry + 12 > bytes.len() {
        return None;
    }
    let old = i32::from_be_bytes([
        bytes[entry + 8],
        bytes[entry + 9],
        bytes[entry + 10],
        bytes[entry + 11],
    ]);
    let new = old.wrapping_add(by);
    bytes[entry + 8..entry + 12].copy_from_slice(&new.to_be_bytes());
    Some(":size-fixed".into())
}

/// Recomputes the CRC of every entry whose size field fits (CRC-32C over attributes..end for
/// v2, CRC-32 over magic..end for v0/v1), so that mutations behind the checksum are reached.
pub fn fix_crcs(bytes: &mut [u8]) {
    for at in entry_starts(bytes) {
        let size =
            i32::from_be_bytes([bytes[at + 8], bytes[at + 9], bytes[at + 10], bytes[at + 11]]);
        let Ok(size) = usize::try_from(size) else {
            continue;
        };
        let end = at + 12 + size;
        if end > bytes.len() || at + 17 > bytes.len() {
            continue;
        }
        if bytes[at + 16] >= 2 {
            if end < at + v2::RECORDS_OFFSET {
                continue;
            }
            let crc = crc32c(&bytes[at + v2::ATTRIBUTES_OFFSET..end]);
            bytes[at + v2::CRC_OFFSET..at + v2::CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        } else {
            if end < at + legacy::MAGIC_OFFSET {
                continue;
            }
            let crc = crc32(&bytes[at + legacy::MAGIC_OFFSET..end]);
            bytes[at + legacy::CRC_OFFSET..at + legacy::CRC_OFFSET + 4]
                .copy_from_slice(&crc.to_be_bytes());
        }
    }
}
