//! Workloads: the records, the v2 bytes every implementation decodes, and the digest that every
//! implementation must agree on.

use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, Header};

/// First record timestamp (2024-04-24T23:06:40Z, the chapter's example time).
pub(crate) const BASE_TIMESTAMP: i64 = 1_714_000_000_000;

/// Header keys of the `+hdr` workloads.
pub(crate) const HEADER_KEYS: [&str; 2] = ["trace-id", "source"];

/// What a workload is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spec {
    /// Codec of every batch.
    pub codec: Compression,
    /// Bytes per value.
    pub value_size: usize,
    /// Records per batch.
    pub records_per_batch: usize,
    /// Batches in the buffer.
    pub batches: usize,
    /// Two headers per record (`trace-id`, `source`).
    pub headers: bool,
}

impl Spec {
    /// `v2-<codec>-<size>[+hdr]`, e.g. `v2-none-100B`, `v2-zstd-10KiB`.
    pub fn name(&self) -> String {
        let size = if self.value_size >= 1024 && self.value_size.is_multiple_of(1024) {
            format!("{}KiB", self.value_size / 1024)
        } else {
            format!("{}B", self.value_size)
        };
        let hdr = if self.headers { "+hdr" } else { "" };
        format!("v2-{}-{size}{hdr}", self.codec.name())
    }

    /// Total records.
    pub fn records(&self) -> usize {
        self.records_per_batch * self.batches
    }
}

/// The workloads of a run. Full mode sizes each buffer at about `target_bytes` of uncompressed v2
/// entries (well past the 32 MiB L3 cache, so reads come from DRAM); quick mode uses two batches
/// of 100 records.
pub(crate) fn specs(quick: bool, target_bytes: usize) -> Vec<Spec> {
    let mut out = Vec::new();
    let mut push = |codec, value_size, headers| {
        let (records_per_batch, batches) = if quick {
            (100, 2)
        } else {
            // Approximate entry bytes per record: value + key (12) + ~10 bytes of framing.
            let per_record = value_size + 22 + if headers { 40 } else { 0 };
            let per_batch = 1000 * per_record + 61;
            (1000, target_bytes.div_ceil(per_batch).max(2))
        };
        out.push(Spec {
            codec,
            value_size,
            records_per_batch,
            batches,
            headers,
        });
    };
    for size in [100, 10, 10 * 1024] {
        for codec in Compression::ALL {
            push(codec, size, false);
        }
    }
    push(Compression::None, 100, true);
    out
}

/// The input records of a workload, stored flat: record `i` has offset `i`, timestamp
/// `BASE_TIMESTAMP + i`, key `key-%08d` and a value slice of a deterministic JSON-like text (so
/// that codecs see realistic, moderately compressible data).
#[derive(Debug)]
pub(crate) struct Inputs {
    pub spec: Spec,
    keys: Vec<u8>,
    values: Vec<u8>,
    trace_ids: Vec<u8>,
}

const KEY_LEN: usize = 12;
const TRACE_LEN: usize = 16;

impl Inputs {
    /// Generates the records of `spec`.
    pub fn new(spec: &Spec) -> Self {
        let n = spec.records();
        let mut keys = Vec::with_capacity(n * KEY_LEN);
        for i in 0..n {
            keys.extend_from_slice(format!("key-{:08}", i % 100_000_000).as_bytes());
        }
        let values = text(n * spec.value_size);
        let mut trace_ids = Vec::new();
        if spec.headers {
            trace_ids.reserve(n * TRACE_LEN);
            for i in 0..n as u64 {
                let x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                trace_ids.extend_from_slice(format!("{x:016x}").as_bytes());
            }
        }
        Inputs {
            spec: spec.clone(),
            keys,
            values,
            trace_ids,
        }
    }

    /// Key of record `i`.
    pub fn key(&self, i: usize) -> &[u8] {
        &self.keys[i * KEY_LEN..(i + 1) * KEY_LEN]
    }

    /// Value of record `i`.
    pub fn value(&self, i: usize) -> &[u8] {
        let s = self.spec.value_size;
        &self.values[i * s..(i + 1) * s]
    }

    /// Headers of record `i` (empty unless the spec has headers).
    pub fn headers(&self, i: usize) -> [Header<'_>; 2] {
        [
            Header {
                key: HEADER_KEYS[0].as_bytes(),
                value: Some(&self.trace_ids[i * TRACE_LEN..(i + 1) * TRACE_LEN]),
            },
            Header {
                key: HEADER_KEYS[1].as_bytes(),
                value: Some(b"bench"),
            },
        ]
    }

    /// Timestamp of record `i`.
    pub fn timestamp(i: usize) -> i64 {
        BASE_TIMESTAMP + i as i64
    }

    /// Record indices of batch `b`.
    pub fn batch_range(&self, b: usize) -> std::ops::Range<usize> {
        let r = self.spec.records_per_batch;
        b * r..(b + 1) * r
    }
}

/// Encodes every batch of `inputs` with our builder (Kafka's bytes, default codec level),
/// appending to `out`, one builder buffer reused across batches. This is both the encode workload
/// and how the decode input is made.
///
/// # Panics
///
/// On a builder error, which these inputs never cause.
pub(crate) fn encode_ours(inputs: &Inputs, out: &mut Vec<u8>) {
    let spec = &inputs.spec;
    for b in 0..spec.batches {
        let range = inputs.batch_range(b);
        // Each batch is written in place at the end of `out` (no copy, no per-batch buffer).
        let mut builder = V2Builder::appending_to(range.start as i64, std::mem::take(out))
            .compression(spec.codec, None);
        for i in range {
            let headers = inputs.headers_if_any(i);
            let record = NewRecord::new(
                Inputs::timestamp(i),
                Some(inputs.key(i)),
                Some(inputs.value(i)),
            )
            .with_headers(headers.as_ref().map_or(&[][..], |h| &h[..]));
            builder.append(&record).expect("append");
        }
        *out = builder.finish().expect("finish");
    }
}

impl Inputs {
    fn headers_if_any(&self, i: usize) -> Option<[Header<'_>; 2]> {
        self.spec.headers.then(|| self.headers(i))
    }
}

/// A deterministic stream of JSON-lines events (field names repeat, ids and amounts vary), cut to
/// `len` bytes: compressible about as much as typical event data (gzip ~3-4x).
pub(crate) fn text(len: usize) -> Vec<u8> {
    const USERS: [&str; 8] = [
        "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
    ];
    const EVENTS: [&str; 5] = ["page_view", "click", "add_to_cart", "purchase", "logout"];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::with_capacity(len + 256);
    let mut ts = BASE_TIMESTAMP as u64;
    let mut seq = 0u64;
    while out.len() < len {
        let r = next();
        ts += r % 50;
        let line = format!(
            "{{\"seq\":{seq},\"ts\":{ts},\"user\":\"{}\",\"session\":\"{:012x}\",\"event\":\"{}\",\"amount\":{}.{:02}}}\n",
            USERS[(r % 8) as usize],
            next() & 0xffff_ffff_ffff,
            EVENTS[((r >> 3) % 5) as usize],
            (r >> 20) % 500,
            (r >> 30) % 100,
        );
        out.extend_from_slice(line.as_bytes());
        seq += 1;
    }
    out.truncate(len);
    out
}

/// What an implementation saw: the record count and a wrapping sum over every record of offset,
/// timestamp, header count and, for key and value, `1 + length + first byte` (0 when null).
/// Every implementation (JavaBench too) computes the same sum, so agreeing digests show that each
/// one read the same records, and that each touched every key and value.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Digest {
    pub records: u64,
    pub sum: u64,
}

impl Digest {
    /// Adds one record.
    #[inline(always)]
    pub fn add(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: usize,
    ) {
        self.records += 1;
        self.sum = self
            .sum
            .wrapping_add(offset as u64)
            .wrapping_add(timestamp as u64)
            .wrapping_add(touch(key))
            .wrapping_add(touch(value))
            .wrapping_add(headers as u64);
    }
}

#[inline(always)]
fn touch(b: Option<&[u8]>) -> u64 {
    match b {
        None => 0,
        Some(b) => 1 + b.len() as u64 + u64::from(b.first().copied().unwrap_or(0)),
    }
}

/// The digest of the inputs themselves: what every decoder must report.
pub(crate) fn expected_digest(inputs: &Inputs) -> Digest {
    let mut d = Digest::default();
    let hdrs = if inputs.spec.headers { 2 } else { 0 };
    for i in 0..inputs.spec.records() {
        d.add(
            i as i64,
            Inputs::timestamp(i),
            Some(inputs.key(i)),
            Some(inputs.value(i)),
            hdrs,
        );
    }
    d
}

#[cfg(test)]
/// One record, owned, for cross-checking implementations field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OwnedRecord {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

#[cfg(test)]
impl OwnedRecord {
    /// The records of `inputs`, as every decoder must return them.
    pub fn expected(inputs: &Inputs) -> Vec<OwnedRecord> {
        (0..inputs.spec.records())
            .map(|i| OwnedRecord {
                offset: i as i64,
                timestamp: Inputs::timestamp(i),
                key: Some(inputs.key(i).to_vec()),
                value: Some(inputs.value(i).to_vec()),
                headers: inputs
                    .headers_if_any(i)
                    .map(|h| {
                        h.iter()
                            .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                            .collect()
                    })
                    .unwrap_or_default(),
            })
            .collect()
    }
}
