//! Deterministic synthetic records and entries (`krec gen`, benchmarks, sizing).
//!
//! Everything comes from one splitmix64 stream seeded by [`SampleSpec::seed`], consumed record by
//! record in a fixed order, so the same spec always gives the same bytes, and the records
//! themselves (keys, values, headers, timestamps) do not depend on the magic, codec or records
//! per batch: only the framing around them does.
//!
//! Record i (0-based) gets offset O+i, timestamp T+i ms, the key `key-<i>` with i zero-padded
//! (or the key cut) to exactly `key_size` bytes (a null key when 0), a value of exactly
//! `value_size` bytes, and `headers` headers "h0", "h1", ... with 8-byte values (v2 only).
//!
//! # Examples
//!
//! ```
//! use krecords_codec::sample::{Content, Sample, SampleSpec};
//! use krecords_codec::read::Entries;
//!
//! let spec = SampleSpec { records: 250, content: Content::Json, ..SampleSpec::default() };
//! let mut sample = Sample::new(spec);
//! let mut file = Vec::new();
//! while let Some(entry) = sample.next_entry() {
//!     let (bytes, _entries) = entry?;
//!     file.extend_from_slice(bytes);
//! }
//! assert_eq!(Entries::new(&file).count(), 3); // 100 records per batch
//! # Ok::<(), krecords_codec::Error>(())
//! ```

use crate::write::{LegacyBuilder, NewRecord, V2Builder};
use crate::{Compression, Error, Header};

/// What generated values contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Uniformly random bytes: incompressible, the worst case for every codec.
    Random,
    /// Words from a small built-in list separated by spaces: compresses like log lines.
    Text,
    /// Small JSON objects `{"id":..,"user":..,"event":..,"amount":..,"msg":".."}`, exactly the
    /// value size (valid JSON from 12 bytes up; shorter ones are cut).
    Json,
}

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough for synthetic data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// The built-in word list for `text` content: the vocabulary of application logs.
const WORDS: [&str; 64] = [
    "INFO",
    "WARN",
    "DEBUG",
    "ERROR",
    "request",
    "response",
    "user",
    "order",
    "payment",
    "session",
    "started",
    "completed",
    "failed",
    "retry",
    "timeout",
    "connected",
    "closed",
    "cache",
    "hit",
    "miss",
    "latency",
    "ms",
    "status",
    "200",
    "404",
    "500",
    "GET",
    "POST",
    "/api/v1/orders",
    "/api/v1/users",
    "/health",
    "consumer",
    "producer",
    "partition",
    "offset",
    "commit",
    "topic",
    "events",
    "broker",
    "leader",
    "epoch",
    "id",
    "took",
    "bytes",
    "from",
    "to",
    "with",
    "for",
    "the",
    "a",
    "of",
    "in",
    "on",
    "queue",
    "worker",
    "thread",
    "pool",
    "db",
    "query",
    "rows",
    "updated",
    "inserted",
    "deleted",
    "ok",
];

const EVENTS: [&str; 8] = [
    "click",
    "view",
    "purchase",
    "signup",
    "login",
    "logout",
    "search",
    "add_to_cart",
];

/// Generates records one by one into reusable buffers.
pub struct Generator {
    rng: Rng,
    content: Content,
    value_size: usize,
    key_size: usize,
    headers: usize,
    /// Index of the next record.
    i: u64,
    key: Vec<u8>,
    value: Vec<u8>,
    /// Header keys and values, `headers` of each.
    header_keys: Vec<Vec<u8>>,
    header_values: Vec<Vec<u8>>,
}

impl Generator {
    /// A generator of records with the given shape.
    pub fn new(
        seed: u64,
        content: Content,
        value_size: usize,
        key_size: usize,
        headers: usize,
    ) -> Self {
        Generator {
            rng: Rng::new(seed),
            content,
            value_size,
            key_size,
            headers,
            i: 0,
            key: Vec::with_capacity(key_size),
            value: Vec::with_capacity(value_size),
            header_keys: (0..headers).map(|j| format!("h{j}").into_bytes()).collect(),
            header_values: vec![Vec::with_capacity(8); headers],
        }
    }

    /// Produces the next record's key, value and header values into the buffers.
    pub fn advance(&mut self) {
        let i = self.i;
        self.i += 1;
        self.key.clear();
        if self.key_size > 0 {
            let width = self.key_size.saturating_sub(4);
            let key = format!("key-{i:0width$}");
            self.key
                .extend_from_slice(&key.as_bytes()[..key.len().min(self.key_size)]);
        }
        let mut value = std::mem::take(&mut self.value);
        self.fill(i, self.value_size, &mut value);
        self.value = value;
        for j in 0..self.headers {
            let mut v = std::mem::take(&mut self.header_values[j]);
            self.fill(i, 8, &mut v);
            self.header_values[j] = v;
        }
    }

    /// The current key (`None` when the key size is 0).
    pub fn key(&self) -> Option<&[u8]> {
        (self.key_size > 0).then_some(self.key.as_slice())
    }

    /// The current value.
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// The current headers.
    pub fn headers(&self) -> Vec<Header<'_>> {
        self.header_keys
            .iter()
            .zip(&self.header_values)
            .map(|(k, v)| Header {
                key: k,
                value: Some(v),
            })
            .collect()
    }

    fn fill(&mut self, i: u64, size: usize, out: &mut Vec<u8>) {
        out.clear();
        match self.content {
            Content::Random => {
                while out.len() < size {
                    let r = self.rng.next_u64().to_be_bytes();
                    let n = (size - out.len()).min(8);
                    out.extend_from_slice(&r[..n]);
                }
            }
            Content::Text => self.words(size, out),
            Content::Json => self.json(i, size, out),
        }
    }

    /// Words separated by spaces, cut to exactly `size` bytes.
    fn words(&mut self, size: usize, out: &mut Vec<u8>) {
        let start = out.len();
        while out.len() - start < size {
            if out.len() > start {
                out.push(b' ');
            }
            out.extend_from_slice(WORDS[self.rng.below(WORDS.len() as u64) as usize].as_bytes());
        }
        out.truncate(start + size);
    }

    /// A JSON object of exactly `size` bytes: fields while they fit, then a "msg" string of
    /// words filling the rest; below 12 bytes the object is cut.
    fn json(&mut self, i: u64, size: usize, out: &mut Vec<u8>) {
        let user = self.rng.below(10_000);
        let event = EVENTS[self.rng.below(EVENTS.len() as u64) as usize];
        let cents = self.rng.below(100_000);
        let mut s = format!("{{\"id\":{i}");
        for field in [
            format!(",\"user\":\"user-{user}\""),
            format!(",\"event\":\"{event}\""),
            format!(",\"amount\":{}.{:02}", cents / 100, cents % 100),
        ] {
            if s.len() + field.len() + 10 <= size {
                s.push_str(&field);
            }
        }
        out.extend_from_slice(s.as_bytes());
        const MSG_OPEN: &[u8] = b",\"msg\":\"";
        if out.len() + MSG_OPEN.len() + 2 <= size {
            out.extend_from_slice(MSG_OPEN);
            let room = size - out.len() - 2;
            self.words(room, out);
            out.extend_from_slice(b"\"}");
        } else {
            out.push(b'}');
            while out.len() < size {
                out.push(b' ');
            }
        }
        out.truncate(size);
    }
}

/// The shape of a sample: its records and how they are framed into entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleSpec {
    /// Message format: 0, 1 or 2.
    pub magic: u8,
    /// Codec of every entry.
    pub compression: Compression,
    /// Codec level (`None`: the default).
    pub level: Option<i32>,
    /// Number of records.
    pub records: u64,
    /// Bytes in every value.
    pub value_size: usize,
    /// Bytes in every key; 0 writes null keys.
    pub key_size: usize,
    /// Headers per record (v2 only).
    pub headers: usize,
    /// Records per entry (a v2 batch or a v0/v1 compressed wrapper; uncompressed v0/v1
    /// messages are one entry each, as in Kafka). At least 1.
    pub records_per_batch: u64,
    /// What the values contain.
    pub content: Content,
    /// Seed of the generator.
    pub seed: u64,
    /// Offset of the first record.
    pub base_offset: i64,
    /// Timestamp of the first record in ms; record i gets `timestamp + i`.
    pub timestamp: i64,
}

impl Default for SampleSpec {
    /// `krec gen`'s defaults: v2, uncompressed, no records, 100-byte text values, null keys,
    /// no headers, 100 records per batch, seed 0, offset 0, timestamp 1714000000000.
    fn default() -> Self {
        SampleSpec {
            magic: 2,
            compression: Compression::None,
            level: None,
            records: 0,
            value_size: 100,
            key_size: 0,
            headers: 0,
            records_per_batch: 100,
            content: Content::Text,
            seed: 0,
            base_offset: 0,
            timestamp: 1_714_000_000_000,
        }
    }
}

/// The entries of a sample, built one at a time into one reused buffer, so any number of
/// records takes constant memory.
pub struct Sample {
    spec: SampleSpec,
    gen: Generator,
    /// Records generated so far.
    done: u64,
    out: Vec<u8>,
}

impl Sample {
    /// The entries of `spec`.
    pub fn new(spec: SampleSpec) -> Self {
        Sample {
            gen: Generator::new(
                spec.seed,
                spec.content,
                spec.value_size,
                spec.key_size,
                spec.headers,
            ),
            spec,
            done: 0,
            out: Vec::new(),
        }
    }

    /// Records generated so far.
    pub fn records_done(&self) -> u64 {
        self.done
    }

    /// The next entry's bytes and the number of entries they hold (the records per batch for
    /// uncompressed v0/v1, else 1); `None` after the last record.
    ///
    /// # Errors
    ///
    /// The builders' errors (a codec the magic cannot carry, headers in v0/v1, a negative
    /// timestamp), and offsets past `i64::MAX`.
    pub fn next_entry(&mut self) -> Option<Result<(&[u8], u64), Error>> {
        let (i, records) = (self.done, self.spec.records);
        if i >= records {
            return None;
        }
        let n = self.spec.records_per_batch.max(1).min(records - i);
        self.done += n;
        match self.build(i, n) {
            Ok(entries) => Some(Ok((&self.out, entries))),
            Err(e) => {
                self.done = records;
                Some(Err(e))
            }
        }
    }

    /// Builds records `i..i + n` into `self.out`; returns the number of entries.
    fn build(&mut self, i: u64, n: u64) -> Result<u64, Error> {
        let spec = &self.spec;
        let gen = &mut self.gen;
        let base = i64::try_from(i)
            .ok()
            .and_then(|i| spec.base_offset.checked_add(i))
            .ok_or_else(|| Error::Unencodable {
                reason: "offsets overflow i64".into(),
            })?;
        self.out.clear();
        if spec.magic == 2 {
            // Written in place in `out`, whose capacity carries over from batch to batch.
            let mut b = V2Builder::appending_to(base, std::mem::take(&mut self.out))
                .compression(spec.compression, spec.level);
            for k in 0..n {
                gen.advance();
                let headers = gen.headers();
                let ts = spec.timestamp.saturating_add((i + k) as i64);
                b.append(&NewRecord::new(ts, gen.key(), Some(gen.value())).with_headers(&headers))?;
            }
            self.out = b.finish()?;
            Ok(1)
        } else {
            let mut b =
                LegacyBuilder::new(spec.magic, base)?.compression(spec.compression, spec.level)?;
            for k in 0..n {
                gen.advance();
                let ts = spec.timestamp.saturating_add((i + k) as i64);
                b.append(&NewRecord::new(ts, gen.key(), Some(gen.value())))?;
            }
            b.finish_into(&mut self.out)?;
            Ok(if spec.compression == Compression::None {
                n
            } else {
                1
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(content: Content, size: usize, n: usize) -> Vec<Vec<u8>> {
        let mut g = Generator::new(7, content, size, 0, 0);
        (0..n)
            .map(|_| {
                g.advance();
                g.value().to_vec()
            })
            .collect()
    }

    #[test]
    fn values_have_the_exact_size_and_repeat_per_seed() {
        for content in [Content::Random, Content::Text, Content::Json] {
            for size in [0, 1, 5, 11, 12, 30, 100, 1000] {
                let a = values(content, size, 20);
                assert!(a.iter().all(|v| v.len() == size), "{content:?} {size}");
                assert_eq!(a, values(content, size, 20));
            }
        }
    }

    #[test]
    fn json_values_parse_from_twelve_bytes() {
        for size in 12..200 {
            for v in values(Content::Json, size, 5) {
                let parsed: serde_json::Value = serde_json::from_slice(&v)
                    .unwrap_or_else(|e| panic!("{size}: {e}: {}", String::from_utf8_lossy(&v)));
                assert!(parsed.get("id").is_some());
            }
        }
    }

    #[test]
    fn keys_are_padded_or_cut() {
        let mut g = Generator::new(0, Content::Text, 1, 10, 0);
        g.advance();
        assert_eq!(g.key(), Some(&b"key-000000"[..]));
        let mut g = Generator::new(0, Content::Text, 1, 3, 0);
        g.advance();
        assert_eq!(g.key(), Some(&b"key"[..]));
        let mut g = Generator::new(0, Content::Text, 1, 0, 0);
        g.advance();
        assert_eq!(g.key(), None);
    }

    #[test]
    fn splitmix_matches_reference() {
        // First outputs of splitmix64 seeded with 0 (reference implementation by S. Vigna).
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }
}
