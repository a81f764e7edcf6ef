//! Checks shared by the fuzz targets in `fuzz_targets/`.
//!
//! Every check asserts properties, not only the absence of panics: error positions inside the
//! input, decompression never past its limit, `validate` agreeing with iteration, Kafka's offset
//! and timestamp rules for deep iteration.

use krecords_codec::read::{Batch, Entries, LegacyBatch, LegacyRecord, V2Batch, V2Record};
use krecords_codec::{Compression, Error, TimestampType};

/// Decompression limit used by every target: small, so bombs hit it quickly.
pub const LIMIT: usize = 1 << 20;

/// Base added by the shifted walk in [`check_entries`].
const SHIFT: usize = 1_000_003;

/// Smallest v0/v1 entry: 12-byte prefix + 14-byte v0 message.
const MIN_LEGACY_ENTRY: usize = 26;

/// Asserts `e` is a reader error whose position lies in `lo..=hi`, and that it displays.
pub fn check_error_in(e: &Error, lo: usize, hi: usize, context: &str) {
    let shown = e.to_string();
    match e.position() {
        Some(at) => assert!(
            (lo..=hi).contains(&at),
            "{context}: error position {at} outside {lo}..={hi}: {shown}"
        ),
        None => panic!("{context}: reader error without a position: {e:?}"),
    }
    assert!(
        e.is_corruption() || matches!(e, Error::DecompressLimit { .. }),
        "{context}: {e:?}"
    );
}

/// What [`check_batch`] saw, compared between a plain and a shifted walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// `records()` and iteration: the number of records, or the first error.
    pub records: Result<usize, Error>,
    /// `validate_with`.
    pub validate: Result<(), Error>,
}

impl Outcome {
    fn shifted(self, delta: usize) -> Self {
        Outcome {
            records: self.records.map_err(|e| e.shifted(delta)),
            validate: self.validate.map_err(|e| e.shifted(delta)),
        }
    }
}

/// Walks `data` with [`Entries`] and checks every entry, then walks it again with a base
/// position and checks that every position moved by exactly that base and nothing else changed.
pub fn check_entries(data: &[u8]) {
    check_strict_and_bounded(data);
    let plain = walk(data, 0);
    let shifted = walk(data, SHIFT);
    assert_eq!(
        plain.len(),
        shifted.len(),
        "shifted walk saw a different number of events"
    );
    for (a, b) in plain.into_iter().zip(shifted) {
        let a = match a {
            Event::Batch {
                position,
                size,
                outcome,
            } => Event::Batch {
                position: position + SHIFT,
                size,
                outcome: outcome.shifted(SHIFT),
            },
            Event::Error(e) => Event::Error(e.shifted(SHIFT)),
            Event::End {
                next_position,
                partial,
            } => Event::End {
                next_position: next_position + SHIFT,
                partial: partial.map(|(p, n, d)| (p + SHIFT, n, d)),
            },
        };
        assert_eq!(a, b, "a base position changed more than the positions");
    }
}

/// `Entries::strict` and `Entries::max_entry_size` against the default: the same entries up to
/// where they differ; strict turns the partial tail into a `Truncated` error at its position;
/// a bound turns the first entry whose size field exceeds it into an error at that field.
fn check_strict_and_bounded(data: &[u8]) {
    fn run(entries: Entries<'_>) -> (Vec<usize>, Option<Error>, Entries<'_>) {
        let mut entries = entries;
        let mut positions = Vec::new();
        let mut err = None;
        for e in entries.by_ref() {
            match e {
                Ok(b) => positions.push(b.position()),
                Err(e) => err = Some(e),
            }
        }
        (positions, err, entries)
    }
    let (plain, plain_err, plain_entries) = run(Entries::new(data));
    let partial = plain_entries.partial();
    let (strict, strict_err, strict_entries) = run(Entries::new(data).strict());
    assert_eq!(plain, strict, "strict read other entries");
    assert!(
        strict_entries.partial().is_none(),
        "strict reported a partial tail"
    );
    match (partial, &strict_err) {
        (Some(p), Some(Error::Truncated { at, available, .. })) => {
            assert_eq!((*at, *available), (p.position, p.bytes));
        }
        (None, e) => assert_eq!(e, &plain_err, "strict changed an error"),
        (Some(p), e) => panic!("partial tail {p:?} but strict gave {e:?}"),
    }
    const BOUND: usize = 4096;
    let (bounded, bounded_err, _) = run(Entries::new(data).max_entry_size(BOUND));
    let sizes = |at: usize| -> Option<i32> {
        data.get(at + 8..at + 12)
            .map(|s| i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    };
    let big = plain
        .iter()
        .position(|&at| sizes(at).is_some_and(|s| s as usize > BOUND));
    match big {
        Some(i) => {
            assert_eq!(bounded, plain[..i].to_vec());
            assert!(
                matches!(bounded_err, Some(Error::InvalidLength { at, what: "entry size", .. }) if at == plain[i] + 8),
                "{bounded_err:?}"
            );
        }
        None => {
            assert_eq!(bounded, plain);
            // Only where the default stopped (an error or a partial tail) can it differ: a
            // size field over the bound is refused first.
            let stop = plain_entries.next_position();
            let ended_early = plain_err.is_some() || partial.is_some();
            match sizes(stop) {
                Some(size) if ended_early && size >= 14 && size as usize > BOUND => assert!(
                    matches!(bounded_err, Some(Error::InvalidLength { at, what: "entry size", .. }) if at == stop + 8),
                    "{bounded_err:?}"
                ),
                _ => assert_eq!(bounded_err, plain_err),
            }
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Event {
    Batch {
        position: usize,
        size: usize,
        outcome: Outcome,
    },
    Error(Error),
    End {
        next_position: usize,
        partial: Option<(usize, usize, Option<usize>)>,
    },
}

fn walk(data: &[u8], base: usize) -> Vec<Event> {
    let len = data.len();
    let mut entries = Entries::with_base(data, base);
    let mut end = 0usize;
    let mut events = Vec::new();
    loop {
        match entries.next_entry() {
            Ok(Some(batch)) => {
                let position = batch.position();
                let size = batch.size_in_bytes();
                assert_eq!(position, base + end, "entries must be contiguous");
                assert!(size >= MIN_LEGACY_ENTRY, "entry of {size} bytes");
                assert!(end + size <= len, "entry runs past the input");
                assert!(
                    std::ptr::eq(batch.as_bytes(), &data[end..end + size]),
                    "entry bytes are not the input slice"
                );
                let outcome = check_batch(&batch);
                end += size;
                events.push(Event::Batch {
                    position,
                    size,
                    outcome,
                });
            }
            Ok(None) => break,
            Err(e) => {
                check_error_in(&e, base + end, base + len, "entries");
                assert!(entries.next().is_none(), "iteration went on after an error");
                assert!(
                    entries.partial().is_none(),
                    "an error is not a partial tail"
                );
                events.push(Event::Error(e));
                break;
            }
        }
    }
    // Once ended, it stays ended.
    assert!(entries.next().is_none());
    assert_eq!(entries.next_position(), base + end);
    assert_eq!(entries.remaining().len(), len - end);
    let partial = entries.partial();
    if let Some(p) = partial {
        assert_eq!(
            p.position,
            base + end,
            "partial tail not at the end of the last entry"
        );
        assert_eq!(
            p.bytes,
            len - end,
            "partial tail does not reach the end of the input"
        );
        assert!(p.bytes > 0);
        if let Some(declared) = p.declared_size {
            assert!(
                declared > p.bytes,
                "declared size {declared} would fit in {} bytes",
                p.bytes
            );
            assert!(declared >= MIN_LEGACY_ENTRY);
            assert!(p.bytes >= 12, "declared size without a complete size field");
        } else {
            assert!(p.bytes < 12, "size field complete but not reported");
        }
    } else if !matches!(events.last(), Some(Event::Error(_))) {
        assert_eq!(
            end, len,
            "iteration ended early without error or partial tail"
        );
    }
    events.push(Event::End {
        next_position: entries.next_position(),
        partial: partial.map(|p| (p.position, p.bytes, p.declared_size)),
    });
    events
}

/// Checks one entry: every accessor, `records` with [`LIMIT`], `validate_with`, and that the
/// two agree.
pub fn check_batch(batch: &Batch<'_>) -> Outcome {
    let lo = batch.position();
    let hi = lo + batch.size_in_bytes();
    let _ = (
        batch.magic(),
        batch.offset_field(),
        batch.last_offset(),
        batch.timestamp_type(),
    );
    let _ = (batch.crc(), batch.compute_crc());
    if let Err(e) = batch.compression() {
        check_error_in(&e, lo, hi, "compression()");
        assert!(matches!(e, Error::UnknownCompression { .. }));
    }
    let mut scratch = Vec::new();
    let (records, ok) = match batch {
        Batch::V2(b) => check_v2_records(b, &mut scratch),
        Batch::Legacy(l) => check_legacy_records(l, &mut scratch),
    };
    assert!(
        scratch.len() <= LIMIT,
        "scratch holds {} bytes, limit {LIMIT}",
        scratch.len()
    );
    assert!(
        scratch.capacity() <= LIMIT + 1,
        "scratch grew to {} bytes",
        scratch.capacity()
    );
    let mut scratch2 = Vec::new();
    let validate = batch.validate_with(&mut scratch2, LIMIT);
    if let Err(e) = &validate {
        check_error_in(e, lo, hi, "validate_with");
    }
    assert!(
        scratch2.capacity() <= LIMIT + 1,
        "validate grew scratch to {}",
        scratch2.capacity()
    );
    assert_eq!(
        validate.is_ok(),
        ok,
        "validate ({validate:?}) disagrees with iteration ({records:?}) for {} bytes at {lo}",
        hi - lo
    );
    check_owned(batch);
    Outcome { records, validate }
}

/// `Batch::owned_records` gives what `checked_records` gives, or the same error.
fn check_owned(batch: &Batch<'_>) {
    let input = bytes::Bytes::copy_from_slice(batch.as_bytes());
    let Some(Ok(copy)) = Entries::with_base(&input, batch.position()).next() else {
        panic!("the entry's own bytes do not read back");
    };
    let owned = copy.owned_records(&input, LIMIT);
    let mut scratch = Vec::new();
    let checked: Result<Vec<_>, Error> = batch
        .checked_records(&mut scratch, LIMIT)
        .and_then(|r| r.map(|r| r.map(|r| r.to_owned_record())).collect());
    assert_eq!(owned, checked, "owned_records and checked_records disagree");
}

/// Iterates a v2 batch; returns the outcome and whether everything validate checks held.
fn check_v2_records(b: &V2Batch<'_>, scratch: &mut Vec<u8>) -> (Result<usize, Error>, bool) {
    let lo = b.position();
    let hi = lo + b.as_bytes().len();
    let _ = (
        b.partition_leader_epoch(),
        b.is_transactional(),
        b.is_control(),
    );
    let _ = (
        b.delete_horizon_ms(),
        b.next_offset(),
        b.producer_id(),
        b.producer_epoch(),
    );
    let _ = (b.last_sequence(), b.records_section());
    assert_eq!(b.batch_length() as usize + 12, b.as_bytes().len());
    let count = b.records_count();
    let lod = b.last_offset_delta();
    let compressed = !matches!(b.compression(), Ok(Compression::None));
    let lat = (b.timestamp_type() == TimestampType::LogAppendTime).then(|| b.max_timestamp());

    let uncompressed: Option<Vec<V2Record<'_>>> = match b.uncompressed_records() {
        Ok(records) => Some(records.map_while(Result::ok).collect()),
        Err(e) => {
            check_error_in(&e, lo, hi, "uncompressed_records");
            None
        }
    };
    let mut records = match b.records(scratch, LIMIT) {
        Ok(r) => r,
        Err(e) => {
            check_error_in(&e, lo, hi, "v2 records()");
            return (Err(e), false);
        }
    };
    let mut n = 0usize;
    let mut deltas_ok = true;
    let mut seen = Vec::new();
    let result = loop {
        match records.next() {
            None => break Ok(n),
            Some(Ok(r)) => {
                n += 1;
                check_v2_record(b, &r, lat, compressed, lo, hi);
                deltas_ok &= r.offset_delta >= 0 && r.offset_delta <= lod;
                if seen.len() < 64 {
                    seen.push(r);
                }
            }
            Some(Err(e)) => {
                check_error_in(&e, lo, hi, "v2 record");
                assert!(
                    records.next().is_none(),
                    "v2 records went on after an error"
                );
                break Err(e);
            }
        }
    };
    assert!(
        n <= usize::try_from(count).unwrap_or(0),
        "{n} records of {count} declared"
    );
    if !compressed {
        let section = b.records_section().len();
        assert!(
            n.saturating_mul(7) <= section,
            "{n} records in {section} bytes"
        );
    }
    if result.is_ok() {
        assert_eq!(
            n, count as usize,
            "iteration ended cleanly before the declared count"
        );
    }
    if let Some(u) = &uncompressed {
        // The uncompressed view yields the same records as far as it gets.
        if !compressed || count == 0 {
            for (a, c) in u.iter().zip(&seen) {
                assert_eq!(a, c, "uncompressed_records disagrees with records");
            }
        }
    }
    let expect_valid = b.is_crc_valid()
        && result.is_ok()
        && deltas_ok
        && (count == 0 || (lod >= 0 && count - 1 <= lod));
    (result, expect_valid)
}

fn check_v2_record(
    b: &V2Batch<'_>,
    r: &V2Record<'_>,
    lat: Option<i64>,
    compressed: bool,
    lo: usize,
    hi: usize,
) {
    assert_eq!(
        r.offset,
        b.base_offset().wrapping_add(i64::from(r.offset_delta))
    );
    let ts = lat.unwrap_or_else(|| b.base_timestamp().wrapping_add(r.timestamp_delta));
    assert_eq!(r.timestamp, ts);
    assert_eq!(r.sequence.is_some(), b.base_sequence().is_some());
    assert!(r.size >= 7, "record of {} bytes", r.size);
    if !compressed {
        assert!(
            r.position >= lo + 61 && r.position + r.size <= hi,
            "record outside its batch"
        );
    }
    let declared = r.headers.len();
    let headers: Vec<_> = r.headers.collect();
    assert_eq!(
        headers.len(),
        declared,
        "headers yielded fewer than their count"
    );
    let total: usize = r.key.map_or(0, <[u8]>::len)
        + r.value.map_or(0, <[u8]>::len)
        + headers
            .iter()
            .map(|h| h.key.len() + h.value.map_or(0, <[u8]>::len))
            .sum::<usize>();
    assert!(
        total <= r.size,
        "record fields ({total} bytes) larger than the record ({})",
        r.size
    );
}

/// Iterates a v0/v1 entry; returns the outcome and whether everything validate checks held.
fn check_legacy_records(
    l: &LegacyBatch<'_>,
    scratch: &mut Vec<u8>,
) -> (Result<usize, Error>, bool) {
    let lo = l.position();
    let hi = lo + l.as_bytes().len();
    let _ = (l.message_size(), l.key(), l.value(), l.timestamp());
    assert!(l.magic() <= 1);
    let shallow = l.as_record();
    let records = match l.records(scratch, LIMIT) {
        Ok(r) => r,
        Err(e) => {
            check_error_in(&e, lo, hi, "legacy records()");
            assert!(
                l.is_compressed(),
                "records() of an uncompressed message failed: {e}"
            );
            return (Err(e), false);
        }
    };
    let mut yielded = Vec::new();
    for r in records {
        match r {
            Ok(r) => yielded.push(r),
            // The scan inside records() already checked every inner message.
            Err(e) => panic!("legacy iteration failed after records() succeeded: {e}"),
        }
    }
    if !l.is_compressed() {
        assert_eq!(yielded, vec![shallow]);
    } else {
        check_deep(l, &yielded);
    }
    let inner_crcs_ok = !l.is_compressed() || yielded.iter().all(|r| r.crc == r.compute_crc());
    let expect_valid = l.is_crc_valid() && l.trailing_bytes() == 0 && inner_crcs_ok;
    let n = yielded.len();
    let inner_bytes: usize = yielded.iter().map(|r| r.raw.len()).sum();
    drop(yielded);
    if l.is_compressed() {
        assert!(
            inner_bytes <= scratch.len(),
            "inner messages past the decompressed data"
        );
        assert!(
            n * MIN_LEGACY_ENTRY <= scratch.len(),
            "{n} inner messages in {} bytes",
            scratch.len()
        );
    }
    (Ok(n), expect_valid)
}

/// Kafka's deep iteration rules (`AbstractLegacyRecordBatch`) for the records of a wrapper.
pub fn check_deep(l: &LegacyBatch<'_>, records: &[LegacyRecord<'_>]) {
    assert!(
        !records.is_empty(),
        "a compressed wrapper yielded no records without an error"
    );
    let raw_offset = |r: &LegacyRecord<'_>| i64::from_be_bytes(r.raw[..8].try_into().unwrap());
    let last_raw = raw_offset(records.last().unwrap());
    let wrapper = l.offset();
    let mut end = 0;
    for r in records {
        assert!(r.raw.len() >= MIN_LEGACY_ENTRY);
        assert_eq!(r.position, end, "inner messages must be contiguous");
        end += r.raw.len();
        assert_eq!(
            r.attributes & 0x07,
            0,
            "a compressed inner message was yielded"
        );
        assert!(r.magic <= 1);
        let raw = raw_offset(r);
        let expected = match l.magic() {
            0 => raw,
            _ if wrapper == 0 => raw,
            _ => wrapper.wrapping_sub(last_raw).wrapping_add(raw),
        };
        assert_eq!(
            r.offset, expected,
            "inner offset (stored {raw}, wrapper {wrapper})"
        );
        if l.magic() == 1 {
            assert!(
                wrapper == 0 || wrapper >= last_raw,
                "wrapper offset below the last inner"
            );
        }
        if r.magic == 1 {
            assert_eq!(r.timestamp_type, l.timestamp_type());
            if l.timestamp_type() == TimestampType::LogAppendTime {
                assert_eq!(r.timestamp, l.timestamp());
            } else {
                assert_eq!(
                    r.timestamp,
                    Some(i64::from_be_bytes(r.raw[18..26].try_into().unwrap()))
                );
            }
        } else {
            assert_eq!(r.timestamp, None);
        }
    }
}

/// Position passed to the decompressors; every error must carry it.
const AT: usize = 4242;

/// One decompressor through Kafka's framing, on arbitrary bytes and on a round trip of them.
///
/// - `decompress` with a 1 MiB limit never panics, never appends more than the limit, never
///   grows the vector past `start + limit + 1`, leaves the caller's bytes alone, restores the
///   vector on error, and reports errors at the position it was given;
/// - the limit is exact: output that succeeded with n bytes succeeds with limit n and fails
///   with the limit error at n - 1;
/// - `compress` then `decompress` gives back the input, for every magic the codec is legal in.
pub fn check_decompress(codec: Compression, data: &[u8]) -> Option<Vec<u8>> {
    let magics: &[u8] = if codec == Compression::Lz4 {
        &[0, 1, 2]
    } else {
        &[2]
    };
    let mut first = None;
    for &magic in magics {
        let out = decompress_checked(codec, magic, data, LIMIT);
        if let Some(out) = &out {
            // A zstd frame that declares a content size above the limit is refused up front
            // (documented in compression/zstd.rs), even when its blocks hold less: the exact-limit
            // property holds for every other input.
            let declares_more = codec == Compression::Zstd
                && matches!(
                    zstd::zstd_safe::get_frame_content_size(data),
                    Ok(Some(declared)) if declared > out.len() as u64
                );
            if !out.is_empty() && !declares_more {
                let exact = decompress_checked(codec, magic, data, out.len());
                assert_eq!(
                    exact.as_ref(),
                    Some(out),
                    "{codec}: limit equal to the output failed"
                );
            }
            if !out.is_empty() {
                let mut v = Vec::new();
                let e = krecords_codec::compression::decompress(
                    codec,
                    magic,
                    data,
                    out.len() - 1,
                    AT,
                    &mut v,
                )
                .unwrap_err();
                assert_eq!(
                    e,
                    Error::DecompressLimit {
                        at: AT,
                        compression: codec,
                        limit: out.len() - 1
                    },
                    "{codec}: a limit one byte short"
                );
            }
        }
        if magic == 2 {
            first = out;
        }
        round_trip(codec, magic, data);
    }
    first
}

/// Decompresses after a few bytes of the caller's, checking the sink rules; the output on success.
fn decompress_checked(codec: Compression, magic: u8, data: &[u8], limit: usize) -> Option<Vec<u8>> {
    let prefix_len = data.len() % 3;
    let mut out = vec![0xa5u8; prefix_len];
    let start_capacity = out.capacity();
    let result = krecords_codec::compression::decompress(codec, magic, data, limit, AT, &mut out);
    assert!(
        out.capacity() <= start_capacity.max(prefix_len + limit + 1),
        "{codec}: capacity {} for limit {limit}",
        out.capacity()
    );
    assert!(
        out[..prefix_len].iter().all(|&b| b == 0xa5),
        "{codec}: caller's bytes overwritten"
    );
    match result {
        Ok(()) => {
            assert!(
                out.len() - prefix_len <= limit,
                "{codec}: {} bytes past limit {limit}",
                out.len()
            );
            Some(out.split_off(prefix_len))
        }
        Err(e) => {
            assert_eq!(
                out.len(),
                prefix_len,
                "{codec}: output left behind after {e}"
            );
            assert_eq!(e.position(), Some(AT), "{codec}: {e}");
            assert!(
                matches!(e, Error::Decompress { .. } | Error::DecompressLimit { .. }),
                "{codec}: {e:?}"
            );
            let _ = e.to_string();
            None
        }
    }
}

fn round_trip(codec: Compression, magic: u8, data: &[u8]) {
    let (lo, hi) = codec.level_range().unwrap_or((0, 0));
    let levels = [
        None,
        Some(lo),
        Some(hi.min(19)),
        Some(i32::from(data.first().copied().unwrap_or(0) % 10)),
    ];
    // High zstd levels cost tens of milliseconds on large inputs: only for small ones.
    let level = levels[data.len() % levels.len()]
        .filter(|&l| codec.is_valid_level(l))
        .filter(|&l| data.len() <= 4096 || l <= 9);
    let mut packed = vec![7u8; 3];
    krecords_codec::compression::compress(codec, level, magic, data, &mut packed)
        .expect("compress");
    assert_eq!(
        packed[..3],
        [7, 7, 7],
        "{codec}: compress overwrote the caller's bytes"
    );
    let mut back = Vec::new();
    krecords_codec::compression::decompress(codec, magic, &packed[3..], data.len(), AT, &mut back)
        .unwrap_or_else(|e| {
            panic!("{codec} level {level:?} magic {magic}: round trip failed: {e}")
        });
    assert!(
        back == data,
        "{codec} level {level:?} magic {magic}: round trip changed the data"
    );
    if !data.is_empty() {
        let e = krecords_codec::compression::decompress(
            codec,
            magic,
            &packed[3..],
            data.len() - 1,
            AT,
            &mut back,
        )
        .unwrap_err();
        assert!(matches!(e, Error::DecompressLimit { .. }), "{codec}: {e:?}");
        assert_eq!(
            back.len(),
            data.len(),
            "{codec}: a failed call changed the output"
        );
    }
}
