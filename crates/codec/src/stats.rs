//! What entries hold, per magic and codec: entries, records, stored bytes, and the bytes per
//! record split into batch overhead, record overhead and payload (the figures of `krec stats`).
//!
//! [`Stats`] is fed entries one at a time (from any source: a segment file, a partition, a live
//! fetch) and keeps only sums, so memory stays bounded whatever the input size;
//! [`Stats::groups`] and [`Stats::summary`] are the result rows.
//!
//! For one entry, [`measure`] gives:
//!
//! - batch overhead — v2: the 61-byte batch header (12-byte offset and size prefix included);
//!   v0/v1: a compressed wrapper's own message overhead (34 bytes for v1);
//! - record overhead — v2: each record's varints, attributes and lengths; v0/v1: the 12-byte
//!   prefix and 14 (v0) or 22 (v1) bytes per message;
//! - payload — keys, values, header keys and header values.
//!
//! The three add up to the size the entry would take uncompressed; the compression ratio is that
//! size divided by the bytes stored.
//!
//! # Examples
//!
//! ```
//! use krecords_codec::read::Entries;
//! use krecords_codec::stats::Stats;
//! use krecords_codec::write::{NewRecord, V2Builder};
//! use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;
//!
//! let mut b = V2Builder::new(0);
//! b.append(&NewRecord::new(1714000000000, None, Some(b"hello"))).unwrap();
//! let bytes = b.finish().unwrap();
//!
//! // Entry by entry, as a caller streaming from a file or a live partition does ...
//! let mut stats = Stats::new(DEFAULT_DECOMPRESS_LIMIT);
//! stats.start_input();
//! for batch in Entries::new(&bytes) {
//!     stats.entry(&batch?);
//! }
//! // ... or a whole input held in memory.
//! stats.input(&bytes);
//! assert_eq!((stats.summary().files, stats.summary().entries), (2, 2));
//! let groups = stats.groups();
//! assert_eq!((groups[0].magic, groups[0].records, groups[0].bytes), (2, 2, 146));
//! assert_eq!(groups[0].payload_per_record, Some(5.0));
//! assert_eq!(groups[0].batch_overhead_bytes, 2 * 61);
//! # Ok::<(), krecords_codec::Error>(())
//! ```

// Entries measured here come from anywhere: the same panic lints as the readers.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use crate::layout::v2;
use crate::read::{Batch, Entries, Record};
use crate::{Compression, Error};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// Sizes of entries, summed (one entry's, or a group's).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sizes {
    /// Entries.
    pub entries: u64,
    /// Their stored bytes (offset and size prefixes included).
    pub bytes: u64,
    /// Entries whose records were decoded.
    pub decoded_entries: u64,
    /// Stored bytes of those entries.
    pub decoded_bytes: u64,
    /// Records of the decoded entries.
    pub records: u64,
    /// Batch overhead of the decoded entries (see the module docs).
    pub batch_overhead: u64,
    /// Record overhead of the decoded entries.
    pub record_overhead: u64,
    /// Keys, values and headers of the decoded entries.
    pub payload: u64,
    /// Size the decoded entries would take uncompressed.
    pub uncompressed: u64,
}

impl Sizes {
    /// Adds `other` to these sums.
    pub fn add(&mut self, other: &Sizes) {
        self.entries += other.entries;
        self.bytes += other.bytes;
        self.decoded_entries += other.decoded_entries;
        self.decoded_bytes += other.decoded_bytes;
        self.records += other.records;
        self.batch_overhead += other.batch_overhead;
        self.record_overhead += other.record_overhead;
        self.payload += other.payload;
        self.uncompressed += other.uncompressed;
    }
}

/// One entry, measured by [`measure`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrySizes {
    /// The entry's magic.
    pub magic: u8,
    /// Its codec.
    pub codec: Compression,
    /// Its sizes (one entry, decoded).
    pub sizes: Sizes,
    /// Headers of its records.
    pub headers: u64,
    /// Whether it is a control batch (transaction markers).
    pub control: bool,
}

/// Keys, values and headers of a record.
fn payload_of(r: &Record<'_>) -> u64 {
    let headers: usize = r
        .headers()
        .map(|h| h.key.len() + h.value.map_or(0, <[u8]>::len))
        .sum();
    (r.key().map_or(0, <[u8]>::len) + r.value().map_or(0, <[u8]>::len) + headers) as u64
}

/// Measures one entry, decoding its records (at most `limit` decompressed bytes, in `scratch`).
///
/// # Errors
///
/// The entry's records cannot be decoded: an unknown codec, corrupt compressed data, a
/// malformed record.
pub fn measure(
    batch: &Batch<'_>,
    scratch: &mut Vec<u8>,
    limit: usize,
) -> Result<EntrySizes, Error> {
    let size = batch.size_in_bytes() as u64;
    let codec = batch.compression()?;
    let mut sizes = Sizes {
        entries: 1,
        bytes: size,
        decoded_entries: 1,
        decoded_bytes: size,
        ..Sizes::default()
    };
    let mut records_size = 0u64;
    let mut headers = 0u64;
    for r in batch.records(scratch, limit)? {
        let r = r?;
        let payload = payload_of(&r);
        let stored = match &r {
            Record::V2(v) => u64::try_from(v.size).unwrap_or(0),
            Record::Legacy(m) => m.size_in_bytes() as u64,
        };
        sizes.records += 1;
        sizes.payload += payload;
        sizes.record_overhead += stored.saturating_sub(payload);
        records_size += stored;
        headers += r.headers().len() as u64;
    }
    sizes.batch_overhead = match batch {
        Batch::V2(_) => v2::RECORDS_OFFSET as u64,
        Batch::Legacy(b) if b.is_compressed() => {
            size.saturating_sub(b.value().map_or(0, <[u8]>::len) as u64)
        }
        Batch::Legacy(_) => 0,
    };
    sizes.uncompressed = sizes.batch_overhead + records_size;
    Ok(EntrySizes {
        magic: batch.magic(),
        codec,
        sizes,
        headers,
        control: batch.is_control(),
    })
}

/// The codec id of an entry's attributes (bits 0..2), known or not.
fn codec_id(batch: &Batch<'_>) -> u8 {
    match batch {
        Batch::Legacy(b) => b.attributes() & 7,
        Batch::V2(b) => (b.attributes() & 7) as u8,
    }
}

/// The totals over every input.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Summary {
    /// Inputs (files, partition directories' segments, standard input) started with
    /// [`Stats::start_input`].
    pub files: usize,
    /// Live partitions (a topic read over the Kafka protocol) started with
    /// [`Stats::start_live_input`]: not files, so not counted in [`Summary::files`].
    pub live_partitions: usize,
    /// Entries.
    pub entries: u64,
    /// Records of the entries that could be decoded.
    pub records: u64,
    /// Stored bytes of the entries.
    pub bytes: u64,
    /// Bytes of truncated tails (not corruption).
    pub partial_bytes: u64,
    /// Entries with a CRC mismatch.
    pub invalid_crc_entries: u64,
    /// Entries whose records could not be decoded, and inputs cut short by an invalid entry or
    /// holding no Kafka data.
    pub errors: u64,
    /// Bytes that cannot be read as entries: from an invalid entry to the end of its input, or
    /// a whole input too short for an entry's prefix and magic byte (left out of JSON when 0).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "is_zero"))]
    pub invalid_bytes: u64,
}

#[cfg(feature = "serde")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One group of entries: a magic and a codec, with its sizes and per-record figures.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct GroupRow {
    /// Magic.
    pub magic: u8,
    /// Codec name (`unknown(N)` for an id Kafka does not define).
    pub compression: String,
    /// Entries.
    pub entries: u64,
    /// Records (of the decoded entries).
    pub records: u64,
    /// Stored bytes of every entry.
    pub bytes: u64,
    /// Entries whose records could not be decoded (in `entries` and `bytes` only).
    pub undecoded_entries: u64,
    /// Stored bytes per record.
    pub bytes_per_record: Option<f64>,
    /// Batch overhead per record.
    pub batch_overhead_per_record: Option<f64>,
    /// Record overhead per record.
    pub record_overhead_per_record: Option<f64>,
    /// Payload per record.
    pub payload_per_record: Option<f64>,
    /// Records per decoded entry.
    pub records_per_batch: Option<f64>,
    /// Uncompressed size / stored bytes.
    pub compression_ratio: Option<f64>,
    /// Batch overhead in bytes.
    pub batch_overhead_bytes: u64,
    /// Record overhead in bytes.
    pub record_overhead_bytes: u64,
    /// Payload in bytes.
    pub payload_bytes: u64,
    /// Size uncompressed.
    pub uncompressed_bytes: u64,
}

/// `n / d`, `None` when `d` is 0.
pub(crate) fn per(n: u64, d: u64) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

impl GroupRow {
    /// The row of the entries of `magic` and codec id `codec` summed in `s`.
    pub fn new(magic: u8, codec: u8, s: &Sizes) -> Self {
        GroupRow {
            magic,
            compression: Compression::from_id(codec)
                .map_or_else(|| format!("unknown({codec})"), |c| c.name().to_string()),
            entries: s.entries,
            records: s.records,
            bytes: s.bytes,
            undecoded_entries: s.entries - s.decoded_entries,
            bytes_per_record: per(s.decoded_bytes, s.records),
            batch_overhead_per_record: per(s.batch_overhead, s.records),
            record_overhead_per_record: per(s.record_overhead, s.records),
            payload_per_record: per(s.payload, s.records),
            records_per_batch: per(s.records, s.decoded_entries),
            compression_ratio: per(s.uncompressed, s.decoded_bytes),
            batch_overhead_bytes: s.batch_overhead,
            record_overhead_bytes: s.record_overhead,
            payload_bytes: s.payload,
            uncompressed_bytes: s.uncompressed,
        }
    }
}

/// What [`Stats::entry`] found in one entry.
#[derive(Debug)]
pub struct Accounted {
    /// Whether the entry's CRC matched.
    pub crc_valid: bool,
    /// The entry measured, or why its records could not be decoded.
    pub sizes: Result<EntrySizes, Error>,
}

/// Sums of the entries fed so far, per magic and codec.
#[derive(Debug)]
pub struct Stats {
    summary: Summary,
    groups: BTreeMap<(u8, u8), Sizes>,
    /// Entries and partial bytes of the current input, to tell an input with no Kafka data.
    input_entries: u64,
    limit: usize,
    scratch: Vec<u8>,
}

impl Stats {
    /// Empty sums; records are decoded with at most `decompress_limit` bytes per entry.
    pub fn new(decompress_limit: usize) -> Self {
        Stats {
            summary: Summary::default(),
            groups: BTreeMap::new(),
            input_entries: 0,
            limit: decompress_limit,
            scratch: Vec::new(),
        }
    }

    /// Starts the next input (counted in [`Summary::files`]).
    pub fn start_input(&mut self) {
        self.summary.files += 1;
        self.input_entries = 0;
    }

    /// Starts the next input, a live partition (counted in [`Summary::live_partitions`]).
    pub fn start_live_input(&mut self) {
        self.summary.live_partitions += 1;
        self.input_entries = 0;
    }

    /// Feeds one whole input held in memory (a segment file's bytes, a fetch response's
    /// records): [`Stats::start_input`], every entry, then a truncated tail, or the bytes from
    /// an entry that cannot be read to the end.
    pub fn input(&mut self, bytes: &[u8]) {
        self.start_input();
        let mut entries = Entries::new(bytes);
        let mut end = 0;
        for batch in &mut entries {
            match batch {
                Ok(batch) => {
                    end = batch.position().saturating_add(batch.size_in_bytes());
                    self.entry(&batch);
                }
                Err(_) => {
                    self.unreadable(bytes.len().saturating_sub(end) as u64);
                    return;
                }
            }
        }
        if let Some(p) = entries.partial() {
            self.partial(p.bytes as u64);
        }
    }

    /// Counts one entry: its bytes, CRC, records and sizes in its magic and codec's group. An
    /// entry whose records cannot be decoded counts in its group's entries and bytes and in
    /// [`Summary::errors`].
    pub fn entry(&mut self, batch: &Batch<'_>) -> Accounted {
        let s = &mut self.summary;
        s.entries += 1;
        self.input_entries += 1;
        s.bytes += batch.size_in_bytes() as u64;
        let crc_valid = batch.is_crc_valid();
        if !crc_valid {
            s.invalid_crc_entries += 1;
        }
        let sizes = measure(batch, &mut self.scratch, self.limit);
        match &sizes {
            Ok(e) => {
                s.records += e.sizes.records;
                self.groups
                    .entry((e.magic, e.codec.id()))
                    .or_default()
                    .add(&e.sizes);
            }
            Err(_) => {
                s.errors += 1;
                let g = self
                    .groups
                    .entry((batch.magic(), codec_id(batch)))
                    .or_default();
                g.entries += 1;
                g.bytes += batch.size_in_bytes() as u64;
            }
        }
        Accounted { crc_valid, sizes }
    }

    /// Counts a truncated tail of `bytes` at the end of the current input. When the input held
    /// no entry before it and is too short to hold an entry's prefix and magic byte, its bytes
    /// are not Kafka data: counted in [`Summary::invalid_bytes`] and as an error, and the result
    /// is `true`. (A longer tail had a valid prefix and magic: a truncated entry.)
    pub fn partial(&mut self, bytes: u64) -> bool {
        let not_kafka = self.input_entries == 0 && bytes <= crate::layout::MAGIC_OFFSET as u64;
        if not_kafka {
            self.unreadable(bytes);
        } else {
            self.summary.partial_bytes += bytes;
        }
        not_kafka
    }

    /// Counts an input cut short by an entry that cannot be read, with the `bytes` from there
    /// to the input's end. Returns `true` when the input held no entry before it (its bytes are
    /// not Kafka data).
    pub fn unreadable(&mut self, bytes: u64) -> bool {
        self.summary.errors += 1;
        self.summary.invalid_bytes += bytes;
        self.input_entries == 0
    }

    /// The totals.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// One row per magic and codec seen, in magic and codec id order.
    pub fn groups(&self) -> Vec<GroupRow> {
        self.groups
            .iter()
            .map(|(&(m, c), g)| GroupRow::new(m, c, g))
            .collect()
    }

    /// Whether any entry had a CRC mismatch or could not be decoded, or an input could not be
    /// read to its end or held no Kafka data.
    pub fn has_problems(&self) -> bool {
        self.summary.errors > 0 || self.summary.invalid_crc_entries > 0
    }
}

/// A number with `decimals` decimals, or `-` when there is none.
pub(crate) fn opt_f64(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.decimals$}"))
}

/// "2 files", "3 live partitions", "1 file, 2 live partitions": what a summary read.
fn inputs_text(s: &Summary) -> String {
    let files = format!("{} file{}", s.files, if s.files == 1 { "" } else { "s" });
    let live = format!(
        "{} live partition{}",
        s.live_partitions,
        if s.live_partitions == 1 { "" } else { "s" }
    );
    match (s.files, s.live_partitions) {
        (_, 0) => files,
        (0, _) => live,
        _ => format!("{files}, {live}"),
    }
}

/// Writes the summary and the per-(magic, codec) rows as `krec stats` prints them: a line of
/// totals, then an aligned table and a line that explains its columns.
pub fn write_text(out: &mut impl Write, s: &Summary, groups: &[GroupRow]) -> io::Result<()> {
    writeln!(
        out,
        "{}, {} {}, {} records, {} bytes{}{}",
        inputs_text(s),
        s.entries,
        if s.entries == 1 { "entry" } else { "entries" },
        s.records,
        s.bytes,
        if s.partial_bytes > 0 {
            format!(" (+{} bytes of a truncated tail)", s.partial_bytes)
        } else {
            String::new()
        },
        if s.invalid_bytes > 0 {
            format!(" (+{} bytes that cannot be read)", s.invalid_bytes)
        } else {
            String::new()
        }
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:>5}  {:<11}  {:>9}  {:>10}  {:>12}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>6}",
        "magic",
        "compression",
        "entries",
        "records",
        "bytes",
        "bytes/rec",
        "batch",
        "record",
        "payload",
        "rec/batch",
        "ratio"
    )?;
    for g in groups {
        writeln!(
            out,
            "{:>5}  {:<11}  {:>9}  {:>10}  {:>12}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>6}",
            g.magic,
            g.compression,
            g.entries,
            g.records,
            g.bytes,
            opt_f64(g.bytes_per_record, 2),
            opt_f64(g.batch_overhead_per_record, 2),
            opt_f64(g.record_overhead_per_record, 2),
            opt_f64(g.payload_per_record, 2),
            opt_f64(g.records_per_batch, 1),
            opt_f64(g.compression_ratio, 2),
        )?;
    }
    writeln!(
        out,
        "(bytes/rec: stored; batch + record overhead + payload per record add up to the uncompressed size; ratio: uncompressed / stored)"
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::write::{LegacyBuilder, NewRecord, V2Builder};
    use crate::DEFAULT_DECOMPRESS_LIMIT;

    #[test]
    fn v1_messages_split_into_overhead_and_payload() {
        let mut b = LegacyBuilder::new(1, 0).unwrap();
        for _ in 0..10 {
            b.append(&NewRecord::new(1, None, Some(&[7u8; 100])))
                .unwrap();
        }
        let bytes = b.finish().unwrap();
        let mut stats = Stats::new(DEFAULT_DECOMPRESS_LIMIT);
        stats.input(&bytes);
        let g = &stats.groups()[0];
        assert_eq!((g.magic, g.compression.as_str()), (1, "none"));
        assert_eq!((g.entries, g.records, g.bytes), (10, 10, 1340));
        assert_eq!(g.bytes_per_record, Some(134.0));
        assert_eq!(g.record_overhead_per_record, Some(34.0));
        assert_eq!(g.batch_overhead_per_record, Some(0.0));
        assert_eq!(g.compression_ratio, Some(1.0));
        assert!(!stats.has_problems());
    }

    #[test]
    fn compressed_v2_adds_up_to_its_uncompressed_size() {
        let mut b = V2Builder::new(0).compression(Compression::Gzip, None);
        let h = [crate::Header {
            key: b"h",
            value: Some(b"vv"),
        }];
        for _ in 0..50 {
            b.append(&NewRecord::new(1, Some(b"k"), Some(&[b'a'; 40])).with_headers(&h))
                .unwrap();
        }
        let bytes = b.finish().unwrap();
        let batch = Entries::new(&bytes).next().unwrap().unwrap();
        let e = measure(&batch, &mut Vec::new(), DEFAULT_DECOMPRESS_LIMIT).unwrap();
        assert_eq!(
            (e.magic, e.codec, e.headers, e.control),
            (2, Compression::Gzip, 50, false)
        );
        assert_eq!(e.sizes.payload, 50 * (1 + 40 + 1 + 2));
        assert_eq!(e.sizes.batch_overhead, 61);
        assert_eq!(
            e.sizes.uncompressed,
            e.sizes.batch_overhead + e.sizes.record_overhead + e.sizes.payload
        );
        assert!(e.sizes.uncompressed > e.sizes.bytes);
    }

    #[test]
    fn bytes_that_are_not_kafka_data_are_an_error() {
        let mut stats = Stats::new(DEFAULT_DECOMPRESS_LIMIT);
        stats.input(b"# A README, not a segment file\n");
        stats.input(b"too short");
        let s = stats.summary();
        assert_eq!((s.files, s.entries, s.errors), (2, 0, 2));
        assert_eq!((s.invalid_bytes, s.partial_bytes), (31 + 9, 0));
        assert!(stats.has_problems());
        assert!(stats.groups().is_empty());
        // A truncated tail after whole entries is not.
        let mut b = V2Builder::new(0);
        b.append(&NewRecord::new(1, None, Some(b"x"))).unwrap();
        let mut bytes = b.finish().unwrap();
        bytes.extend_from_slice(&bytes.clone()[..20]);
        let mut stats = Stats::new(DEFAULT_DECOMPRESS_LIMIT);
        stats.input(&bytes);
        assert_eq!(
            (stats.summary().partial_bytes, stats.summary().errors),
            (20, 0)
        );
        // So is a first entry cut short after its magic byte.
        let mut stats = Stats::new(DEFAULT_DECOMPRESS_LIMIT);
        stats.input(&bytes[..20]);
        assert_eq!(
            (stats.summary().partial_bytes, stats.summary().errors),
            (20, 0)
        );
    }

    #[test]
    fn crc_mismatch_and_undecodable_entries_are_counted() {
        let mut b = V2Builder::new(0).compression(Compression::Gzip, None);
        b.append(&NewRecord::new(1, None, Some(b"hello"))).unwrap();
        let mut bytes = b.finish().unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xFF; // the gzip trailer: CRC mismatch and undecodable
        let mut stats = Stats::new(DEFAULT_DECOMPRESS_LIMIT);
        stats.start_input();
        let batch = Entries::new(&bytes).next().unwrap().unwrap();
        let a = stats.entry(&batch);
        assert!(!a.crc_valid);
        assert!(a.sizes.is_err());
        let s = stats.summary();
        assert_eq!((s.entries, s.invalid_crc_entries, s.errors), (1, 1, 1));
        let g = &stats.groups()[0];
        assert_eq!((g.entries, g.undecoded_entries, g.records), (1, 1, 0));
        assert_eq!(g.bytes_per_record, None);
    }
}
