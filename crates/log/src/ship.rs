//! Turning read_committed fetches into batches a producer can send again (`krec ship`).
//!
//! [`plan`] takes the bytes of one fetch at read_committed (from [`crate::Log::fetch`] or a
//! Kafka Fetch response) with its aborted-transaction list, and decides per entry, following
//! the Java consumer's read_committed rules (see [`crate::consumer`]):
//!
//! * control batches (transaction markers) are never shipped: a producer cannot send them, the
//!   target's own transactions write new ones;
//! * batches of aborted transactions are never shipped;
//! * a v2 data batch is shipped **as is** (its place in the fetched bytes, nothing copied; the
//!   producer then rewrites only header fields, see [`krecords_codec::patch`]) unless the broker would refuse it or the
//!   records would change: it is **re-batched** (records rebuilt into a new v2 batch with
//!   contiguous offsets, same codec unless another is asked for) when compaction left offset
//!   gaps (its record count is not its last offset delta + 1), when it starts before the
//!   position asked for (those records were shipped already), when it uses LogAppendTime (the
//!   target would stamp its own time: the consumer-visible timestamps are written as
//!   CreateTime), or when a codec is asked for ([`PlanOptions::compression`]) that differs;
//! * v0/v1 entries are **up-converted** to v2 with the codec's conversion rules
//!   ([`krecords_codec::convert`], runs of uncompressed messages merged up to 1 MiB), then
//!   re-batched if their offsets have gaps.
//!
//! Keys, values, headers and timestamps (as a consumer sees them) are preserved in every case.

use crate::consumer::{aborted_batch, checked_entry};
use crate::error::{Error, Location, Result};
use crate::transaction::AbortedTransaction;
use bytes::{Buf, Bytes, BytesMut};
use krecords_codec::convert::{ConvertOptions, Converter};
use krecords_codec::read::{Batch, Entries};
use krecords_codec::txn::ReadCommitted;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, Header, DEFAULT_DECOMPRESS_LIMIT};

/// How [`plan`] treats batches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// Recompress every batch whose codec differs with this one (`krec ship --compression`).
    pub compression: Option<Compression>,
    /// The level of [`PlanOptions::compression`] for the batches it recompresses or builds
    /// (`None`: the codec's default). Batches built in another codec (no codec asked for) use
    /// that codec's default.
    pub level: Option<i32>,
}

impl PlanOptions {
    /// The level to build a batch in `codec` with: [`PlanOptions::level`] for the codec asked
    /// for, the default otherwise.
    fn level_for(&self, codec: Compression) -> Option<i32> {
        self.level.filter(|_| self.compression == Some(codec))
    }
}

/// Why a batch is shipped the way it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShipKind {
    /// The source batch's bytes; only header fields will be rewritten.
    AsIs,
    /// Rebuilt from a v2 batch (offset gaps, a partial head, LogAppendTime, another codec).
    Rebatched,
    /// Up-converted from v0/v1 entries.
    UpConverted,
}

/// The bytes of a batch to ship: one whole v2 data batch (base offset still the source's; the
/// producer rewrites it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShipBytes {
    /// The source batch as it is: this range of the bytes given to [`plan`] (not copied).
    Source(std::ops::Range<usize>),
    /// A batch made by [`plan`] (re-batched or up-converted).
    Built(Vec<u8>),
}

impl ShipBytes {
    /// The batch's size in bytes.
    pub fn len(&self) -> usize {
        match self {
            ShipBytes::Source(r) => r.len(),
            ShipBytes::Built(b) => b.len(),
        }
    }

    /// Whether the batch has no bytes (never true for a batch [`plan`] made).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The batch's bytes, given the bytes [`plan`] was given (`None` when the range is not in
    /// them: other bytes than the plan's).
    ///
    /// ```
    /// use krecords_codec::write::{NewRecord, V2Builder};
    /// use krecords_log::ship::{plan, PlanOptions};
    ///
    /// let mut b = V2Builder::new(0);
    /// b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"v"))).unwrap();
    /// let fetched = b.finish().unwrap();
    /// let p = plan(&fetched, 0, &[], &PlanOptions::default()).unwrap();
    /// assert_eq!(p.batches[0].bytes.of(&fetched), Some(&fetched[..]));
    /// ```
    pub fn of<'a>(&'a self, fetched: &'a [u8]) -> Option<&'a [u8]> {
        match self {
            ShipBytes::Source(r) => fetched.get(r.clone()),
            ShipBytes::Built(b) => Some(b),
        }
    }
}

/// One batch to ship.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShipBatch {
    /// Its bytes: a range of the fetched bytes (as is) or a batch made here.
    pub bytes: ShipBytes,
    /// How it was made.
    pub kind: ShipKind,
    /// Records in it.
    pub records: usize,
    /// The source offset of its first record.
    pub source_first_offset: i64,
    /// The source offset of its last record.
    pub source_last_offset: i64,
}

/// What [`plan`] made of one fetch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Batches to ship, in source order.
    pub batches: Vec<ShipBatch>,
    /// Control batches skipped.
    pub skipped_control: u64,
    /// Batches of aborted transactions skipped.
    pub skipped_aborted: u64,
    /// Records of aborted transactions skipped.
    pub skipped_aborted_records: u64,
    /// The source position after the fetch: the offset after its last entry (the position
    /// given when the fetch held none).
    pub next_offset: i64,
    /// Source bytes covered (entries at or after the position).
    pub source_bytes: u64,
}

impl Plan {
    /// The batches' bytes, in order, for a producer that patches headers in place: each as-is
    /// batch split off `fetched` (the bytes given to [`plan`], taken over without a copy),
    /// made batches as they are. A range outside `fetched` or out of order (bytes other than
    /// the plan's) is copied from where it is, or left out when it is not there at all.
    /// `fetched` may be a `Vec<u8>` or the [`Bytes`] of a Fetch response: when nothing else
    /// holds its buffer, the batches are cut out of it without a copy.
    ///
    /// ```
    /// use krecords_codec::write::{NewRecord, V2Builder};
    /// use krecords_log::ship::{plan, PlanOptions};
    ///
    /// let mut b = V2Builder::new(0);
    /// b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"v"))).unwrap();
    /// let fetched = b.finish().unwrap();
    /// let p = plan(&fetched, 0, &[], &PlanOptions::default()).unwrap();
    /// let batches = p.into_bytes(fetched.clone());
    /// assert_eq!(batches.len(), 1);
    /// assert_eq!(&batches[0][..], &fetched[..]);
    /// ```
    pub fn into_bytes(self, fetched: impl Into<Bytes>) -> Vec<BytesMut> {
        let fetched: Bytes = fetched.into();
        let in_order = self
            .batches
            .iter()
            .filter_map(|b| match &b.bytes {
                ShipBytes::Source(r) => Some(r),
                ShipBytes::Built(_) => None,
            })
            .try_fold(0, |end, r| {
                (r.start >= end && r.start <= r.end && r.end <= fetched.len()).then_some(r.end)
            })
            .is_some();
        if !in_order {
            return self
                .batches
                .iter()
                .filter_map(|b| b.bytes.of(&fetched).map(BytesMut::from))
                .collect();
        }
        let mut rest = BytesMut::from(fetched);
        let mut cut = 0;
        self.batches
            .into_iter()
            .map(|b| match b.bytes {
                ShipBytes::Source(r) => {
                    rest.advance(r.start - cut);
                    cut = r.end;
                    rest.split_to(r.len())
                }
                ShipBytes::Built(v) => BytesMut::from(Bytes::from(v)),
            })
            .collect()
    }
}

/// Plans one read_committed fetch starting at source offset `position`: `bytes` are whole
/// entries (the first may start before `position`), `aborted` the fetch's aborted
/// transactions. See the module documentation.
///
/// # Errors
///
/// [`Error::CorruptMessage`] for an entry that does not parse, fails its CRC or cannot be
/// decompressed; [`Error::InvalidRecord`] for a control record without a control key.
pub fn plan(
    bytes: &[u8],
    position: i64,
    aborted: &[AbortedTransaction],
    options: &PlanOptions,
) -> Result<Plan> {
    let mut filter = ReadCommitted::new(aborted);
    let mut out = Plan {
        next_offset: position,
        ..Plan::default()
    };
    let mut scratch = Vec::new();
    let mut legacy = LegacyRun::default();
    for entry in Entries::new(bytes) {
        let batch = checked_entry(entry)?;
        let at = batch.position();
        let last = batch.last_offset();
        let aborted = aborted_batch(&mut filter, &batch, &mut scratch)?;
        if last < out.next_offset {
            continue;
        }
        out.source_bytes += batch.size_in_bytes() as u64;
        let min_offset = out.next_offset;
        out.next_offset = last + 1;
        let v = match &batch {
            Batch::Legacy(_) => {
                legacy.push(&batch, min_offset, options, &mut out)?;
                continue;
            }
            Batch::V2(v) => v,
        };
        legacy.flush(options, &mut out)?;
        if v.is_control() {
            out.skipped_control += 1;
            continue;
        }
        if aborted {
            out.skipped_aborted += 1;
            out.skipped_aborted_records += u64::try_from(v.records_count()).unwrap_or(0);
            continue;
        }
        if v.records_count() <= 0 {
            // An empty batch (compaction keeps one for a producer's state): nothing to ship.
            continue;
        }
        let codec = v
            .compression()
            .map_err(|e| Error::corrupt_codec(Location::Read { position: at }, e))?;
        let gaps = i64::from(v.records_count()) != i64::from(v.last_offset_delta()) + 1;
        let partial_head = v.base_offset() < min_offset;
        let append_time = v.timestamp_type() == krecords_codec::TimestampType::LogAppendTime;
        let recompress = options.compression.is_some_and(|c| c != codec);
        if gaps || partial_head || append_time || recompress {
            let c = options.compression.unwrap_or(codec);
            let level = options.level_for(c);
            let kind = ShipKind::Rebatched;
            if let Some(b) = rebuild(&batch, min_offset, (c, level), kind, &mut scratch)? {
                out.batches.push(b);
            }
        } else {
            out.batches.push(ShipBatch {
                bytes: ShipBytes::Source(at..at + batch.size_in_bytes()),
                kind: ShipKind::AsIs,
                records: usize::try_from(v.records_count()).unwrap_or(0),
                source_first_offset: v.base_offset(),
                source_last_offset: last,
            });
        }
    }
    legacy.flush(options, &mut out)?;
    Ok(out)
}

/// Rebuilds the records of `batch` at or after `min_offset` into one v2 batch with contiguous
/// offsets (base offset = the first record's source offset), CreateTime with the timestamps a
/// consumer sees, codec `compression`. `None` when no record is left.
fn rebuild(
    batch: &Batch<'_>,
    min_offset: i64,
    (compression, level): (Compression, Option<i32>),
    kind: ShipKind,
    scratch: &mut Vec<u8>,
) -> Result<Option<ShipBatch>> {
    let at = batch.position();
    let corrupt =
        |e: krecords_codec::Error| Error::corrupt_codec(Location::Read { position: at }, e);
    let records = batch
        .records(scratch, DEFAULT_DECOMPRESS_LIMIT)
        .map_err(corrupt)?;
    let mut builder: Option<V2Builder> = None;
    let (mut first, mut last, mut count) = (-1, -1, 0usize);
    let mut headers: Vec<Header<'_>> = Vec::new();
    for r in records {
        let r = r.map_err(corrupt)?;
        if r.offset() < min_offset {
            continue;
        }
        let b = builder.get_or_insert_with(|| {
            first = r.offset();
            V2Builder::new(r.offset()).compression(compression, level)
        });
        headers.clear();
        headers.extend(r.headers());
        // v0 messages have no timestamp: Kafka's up-conversion writes -1 (NO_TIMESTAMP).
        let record =
            NewRecord::new(r.timestamp().unwrap_or(-1), r.key(), r.value()).with_headers(&headers);
        b.append(&record).map_err(corrupt)?;
        last = r.offset();
        count += 1;
    }
    let Some(b) = builder else { return Ok(None) };
    Ok(Some(ShipBatch {
        bytes: ShipBytes::Built(b.finish().map_err(corrupt)?),
        kind,
        records: count,
        source_first_offset: first,
        source_last_offset: last,
    }))
}

/// Consecutive v0/v1 entries, up-converted together.
#[derive(Default)]
struct LegacyRun {
    converter: Option<Converter>,
    converted: Vec<u8>,
}

impl LegacyRun {
    fn push(
        &mut self,
        batch: &Batch<'_>,
        min_offset: i64,
        options: &PlanOptions,
        out: &mut Plan,
    ) -> Result<()> {
        let at = batch.position();
        let corrupt =
            |e: krecords_codec::Error| Error::corrupt_codec(Location::Read { position: at }, e);
        if batch.first_offset().is_none_or(|f| f < min_offset) {
            // A wrapper holding records shipped already (or of unknown first offset): its
            // remaining records, rebuilt on their own.
            self.flush(options, out)?;
            let c = options
                .compression
                .unwrap_or(batch.compression().map_err(corrupt)?);
            let c = if c.allowed_in(2) {
                c
            } else {
                Compression::None
            };
            let c = (c, options.level_for(c));
            if let Some(b) = rebuild(batch, min_offset, c, ShipKind::UpConverted, &mut Vec::new())?
            {
                out.batches.push(b);
            }
            return Ok(());
        }
        if self.converter.is_none() {
            let opts = ConvertOptions {
                compression: options.compression,
                level: options.level,
                ..ConvertOptions::batched(2)
            };
            self.converter = Some(Converter::new(opts).map_err(corrupt)?);
        }
        if let Some(c) = self.converter.as_mut() {
            c.push(batch, &mut self.converted).map_err(corrupt)?;
        }
        Ok(())
    }

    fn flush(&mut self, options: &PlanOptions, out: &mut Plan) -> Result<()> {
        let Some(c) = self.converter.take() else {
            return Ok(());
        };
        let corrupt =
            |e: krecords_codec::Error| Error::corrupt_codec(Location::Read { position: 0 }, e);
        c.finish(&mut self.converted).map_err(corrupt)?;
        let converted = std::mem::take(&mut self.converted);
        let mut scratch = Vec::new();
        for entry in Entries::new(&converted) {
            let batch = entry.map_err(corrupt)?;
            let Batch::V2(v) = &batch else {
                return Err(corrupt(krecords_codec::Error::Unencodable {
                    reason: "up-conversion gave a v0/v1 entry".into(),
                }));
            };
            if v.records_count() <= 0 {
                continue;
            }
            if i64::from(v.records_count()) == i64::from(v.last_offset_delta()) + 1 {
                out.batches.push(ShipBatch {
                    bytes: ShipBytes::Built(batch.as_bytes().to_vec()),
                    kind: ShipKind::UpConverted,
                    records: usize::try_from(v.records_count()).unwrap_or(0),
                    source_first_offset: v.base_offset(),
                    source_last_offset: v.last_offset(),
                });
            } else {
                let codec = v.compression().map_err(corrupt)?;
                let c = options.compression.unwrap_or(codec);
                let c = (c, options.level_for(c));
                if let Some(b) = rebuild(&batch, i64::MIN, c, ShipKind::UpConverted, &mut scratch)?
                {
                    out.batches.push(b);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use krecords_codec::write::LegacyBuilder;
    use krecords_testkit::batches::marker;

    fn data(offset: i64, pid: i64, txn: bool, values: &[&str], c: Compression) -> Vec<u8> {
        let mut b = V2Builder::new(offset).compression(c, None);
        if pid >= 0 {
            b = b.producer(pid, 0, 0).transactional(txn);
        }
        for (i, v) in values.iter().enumerate() {
            let h = [Header {
                key: b"h",
                value: Some(v.as_bytes()),
            }];
            b.append(
                &NewRecord::new(1_000 + i as i64, Some(b"k"), Some(v.as_bytes())).with_headers(&h),
            )
            .unwrap();
        }
        b.finish().unwrap()
    }

    fn values(p: &Plan, fetched: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        for b in &p.batches {
            for e in Entries::new(b.bytes.of(fetched).unwrap()) {
                let e = e.unwrap();
                assert!(e.is_crc_valid());
                assert_eq!(e.magic(), 2);
                for r in e.records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT).unwrap() {
                    out.push(String::from_utf8(r.unwrap().value().unwrap().to_vec()).unwrap());
                }
            }
        }
        out
    }

    #[test]
    fn committed_data_only_and_as_is_bytes() {
        let a = data(0, -1, false, &["a0", "a1"], Compression::Lz4);
        let t1 = data(2, 7, true, &["t1"], Compression::None);
        let t2 = data(3, 8, true, &["aborted"], Compression::None);
        let mut bytes = a.clone();
        bytes.extend(&t1);
        bytes.extend(&t2);
        bytes.extend(marker(4, 7, true));
        bytes.extend(marker(5, 8, false));
        let aborted = [AbortedTransaction {
            producer_id: 8,
            first_offset: 3,
        }];
        let p = plan(&bytes, 0, &aborted, &PlanOptions::default()).unwrap();
        assert_eq!(values(&p, &bytes), ["a0", "a1", "t1"]);
        assert_eq!(p.batches[0].bytes.of(&bytes), Some(&a[..]));
        assert_eq!(p.batches[1].bytes.of(&bytes), Some(&t1[..]));
        assert_eq!(p.batches[0].bytes, ShipBytes::Source(0..a.len()));
        // Split off the fetched bytes; other bytes than the plan's are copied or left out.
        let split = p.clone().into_bytes(bytes.clone());
        assert_eq!((&split[0][..], &split[1][..]), (&a[..], &t1[..]));
        let short = p.clone().into_bytes(a.clone());
        assert_eq!(short.len(), 1);
        assert_eq!(&short[0][..], &a[..]);
        // A Fetch response's bytes (a slice of a larger buffer, held nowhere else) are cut,
        // not copied: the batches point into the buffer.
        let mut response = b"header".to_vec();
        response.extend(&bytes);
        let records = Bytes::from(response).slice(6..);
        let at = records.as_ptr();
        let split = p.clone().into_bytes(records);
        assert_eq!(split[0].as_ptr(), at);
        assert_eq!(split[1].as_ptr(), at.wrapping_add(a.len()));
        assert_eq!((&split[0][..], &split[1][..]), (&a[..], &t1[..]));
        assert!(p.batches.iter().all(|b| b.kind == ShipKind::AsIs));
        assert_eq!(
            (p.skipped_control, p.skipped_aborted, p.next_offset),
            (2, 1, 6)
        );
        // From a position inside: the head is skipped.
        let p = plan(&bytes, 2, &aborted, &PlanOptions::default()).unwrap();
        assert_eq!(values(&p, &bytes), ["t1"]);
        // Mid-batch: rebuilt with the remaining records.
        let p = plan(&bytes, 1, &aborted, &PlanOptions::default()).unwrap();
        assert_eq!(values(&p, &bytes), ["a1", "t1"]);
        assert_eq!(p.batches[0].kind, ShipKind::Rebatched);
        assert_eq!(p.batches[0].source_first_offset, 1);
    }

    #[test]
    fn compaction_gaps_and_recompression_rebatch() {
        let mut b = V2Builder::new(10);
        for (o, v) in [(10, "x"), (12, "y"), (15, "z")] {
            b.append_with_offset(o, &NewRecord::new(o, Some(b"k"), Some(v.as_bytes())))
                .unwrap();
        }
        let gappy = b.finish().unwrap();
        let p = plan(&gappy, 0, &[], &PlanOptions::default()).unwrap();
        assert_eq!(values(&p, &gappy), ["x", "y", "z"]);
        assert_eq!(p.batches[0].kind, ShipKind::Rebatched);
        let Batch::V2(v) = Entries::new(p.batches[0].bytes.of(&gappy).unwrap())
            .next()
            .unwrap()
            .unwrap()
        else {
            panic!()
        };
        assert_eq!((v.records_count(), v.last_offset_delta()), (3, 2));
        assert_eq!(p.next_offset, 16);
        let plain = data(0, -1, false, &["p"], Compression::None);
        let o = PlanOptions {
            compression: Some(Compression::Zstd),
            ..PlanOptions::default()
        };
        let p = plan(&plain, 0, &[], &o).unwrap();
        assert_eq!(p.batches[0].kind, ShipKind::Rebatched);
        assert_eq!(
            Entries::new(p.batches[0].bytes.of(&plain).unwrap())
                .next()
                .unwrap()
                .unwrap()
                .compression()
                .unwrap(),
            Compression::Zstd
        );
        assert_eq!(values(&p, &plain), ["p"]);
    }

    /// The level of `--compression zstd:N` is the level of every batch built: the bytes are
    /// those of a builder at that level.
    #[test]
    fn recompression_uses_the_level_asked_for() {
        let values: Vec<String> = (0..200).map(|i| format!("value {i} ").repeat(9)).collect();
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        let plain = data(0, -1, false, &values, Compression::None);
        let built = |level| {
            let o = PlanOptions {
                compression: Some(Compression::Zstd),
                level,
            };
            let p = plan(&plain, 0, &[], &o).unwrap();
            p.batches[0].bytes.of(&plain).unwrap().to_vec()
        };
        let (default, fast, best) = (built(None), built(Some(1)), built(Some(19)));
        assert_ne!(fast, best, "the level changes the bytes");
        let expected = |level| {
            let mut b = V2Builder::new(0).compression(Compression::Zstd, level);
            for (i, v) in values.iter().enumerate() {
                let h = [Header {
                    key: b"h",
                    value: Some(v.as_bytes()),
                }];
                let r = NewRecord::new(1_000 + i as i64, Some(b"k"), Some(v.as_bytes()));
                b.append(&r.with_headers(&h)).unwrap();
            }
            b.finish().unwrap()
        };
        assert_eq!(fast, expected(Some(1)));
        assert_eq!(best, expected(Some(19)));
        assert_eq!(default, expected(None));
    }

    #[test]
    fn legacy_entries_are_up_converted() {
        let mut bytes = Vec::new();
        for (magic, o) in [(0u8, 0i64), (1, 1)] {
            let mut b = LegacyBuilder::new(magic, o).unwrap();
            b.append(&NewRecord::new(
                77,
                Some(b"k"),
                Some(format!("m{o}").as_bytes()),
            ))
            .unwrap();
            bytes.extend(b.finish().unwrap());
        }
        bytes.extend(data(2, -1, false, &["v2"], Compression::None));
        let p = plan(&bytes, 0, &[], &PlanOptions::default()).unwrap();
        assert_eq!(values(&p, &bytes), ["m0", "m1", "v2"]);
        assert_eq!(p.batches.last().unwrap().kind, ShipKind::AsIs);
        assert!(p.batches[..p.batches.len() - 1]
            .iter()
            .all(|b| b.kind == ShipKind::UpConverted));
        // A corrupt entry is an error, not a silent skip.
        let mut bad = bytes.clone();
        let n = bad.len();
        bad[n - 1] ^= 1;
        assert!(plan(&bad, 0, &[], &PlanOptions::default()).is_err());
    }
}
