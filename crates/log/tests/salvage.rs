//! `salvage`: a damage corpus (every magic and codec, transactions, compacted offset gaps,
//! three segments) damaged in every way at many positions, and random damage; on every case,
//! every untouched entry is in the output byte for byte at its offset, nothing else is, and
//! the report's damaged ranges are exactly the touched entries.

use crate::util::{mem, Mem, NOW};
use krecords_codec::read::Entries;
use krecords_codec::write::{end_txn_marker, EndTxnBatch, LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::Compression;
use krecords_log::salvage::{self, NoSink, SalvageOptions, SalvageReport, SalvageSink};
use krecords_log::storage::Storage;
use krecords_log::{Log, LogConfig};
use proptest::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One entry of the corpus: its file, position and bytes, and its offsets.
#[derive(Debug, Clone)]
struct Entry {
    file: usize,
    pos: usize,
    bytes: Vec<u8>,
    first: i64,
    last: i64,
    compressed: bool,
}

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn value(i: i64) -> Vec<u8> {
    format!("value {i} {}", "abcdefgh".repeat((i % 5) as usize)).into_bytes()
}

/// Three segments: v0 and v1 messages and wrappers of every codec; v2 batches of every codec
/// with leader epochs; transactions (committed and aborted) and compacted offset gaps.
fn corpus() -> (Vec<(i64, Vec<u8>)>, Vec<Entry>) {
    let mut segs: Vec<(i64, Vec<Vec<u8>>)> = vec![(0, vec![]), (0, vec![]), (0, vec![])];
    let mut next = 0i64;
    // Segment 0: legacy.
    for magic in [0u8, 1] {
        for codec in CODECS {
            if codec == Compression::Zstd {
                continue;
            }
            let b = LegacyBuilder::new(magic, next)
                .unwrap()
                .compression(codec, None)
                .unwrap();
            let mut b = b;
            for _ in 0..3 {
                let v = value(next);
                b.append(&NewRecord::new(NOW + next, Some(b"k"), Some(&v)))
                    .unwrap();
                next += 1;
            }
            segs[0].1.push(b.finish().unwrap());
        }
    }
    // Segment 1: v2, every codec, two leader epochs.
    next += 3; // a gap between segments
    segs[1].0 = next;
    for (i, codec) in CODECS.iter().chain(CODECS.iter()).enumerate() {
        let mut b = V2Builder::new(next)
            .compression(*codec, None)
            .partition_leader_epoch(if i < 5 { 3 } else { 4 });
        for _ in 0..4 {
            let v = value(next);
            b.append(&NewRecord::new(NOW + next, Some(b"key"), Some(&v)))
                .unwrap();
            next += 1;
        }
        segs[1].1.push(b.finish().unwrap());
    }
    // Segment 2: transactions and compacted gaps.
    segs[2].0 = next;
    for (t, commit) in [(0, true), (1, false), (2, true)] {
        let pid = 7 + t;
        let mut b = V2Builder::new(next)
            .compression(CODECS[t as usize + 1], None)
            .producer(pid, 0, 0)
            .transactional(true)
            .partition_leader_epoch(5);
        for _ in 0..3 {
            let v = value(next);
            b.append(&NewRecord::new(NOW + next, Some(b"t"), Some(&v)))
                .unwrap();
            next += 1;
        }
        segs[2].1.push(b.finish().unwrap());
        segs[2].1.push(
            end_txn_marker(&EndTxnBatch {
                base_offset: next,
                partition_leader_epoch: 5,
                producer_id: pid,
                producer_epoch: 0,
                coordinator_epoch: 1,
                commit,
                timestamp: NOW + next,
            })
            .unwrap(),
        );
        next += 1;
    }
    for gap in [5, 1, 17] {
        next += gap;
        let mut b = V2Builder::new(next).partition_leader_epoch(6);
        let v = value(next);
        b.append_with_offset(next + 2, &NewRecord::new(NOW, Some(b"c"), Some(&v)))
            .unwrap();
        next += 3;
        segs[2].1.push(b.finish().unwrap());
    }
    let mut files = Vec::new();
    let mut entries = Vec::new();
    for (f, (base, list)) in segs.into_iter().enumerate() {
        let mut bytes = Vec::new();
        for e in list {
            // A v0/v1 builder's output may hold several entries.
            for b in Entries::new(&e) {
                let b = b.unwrap();
                let mut scratch = Vec::new();
                let span = b.record_span(&mut scratch, 1 << 20).unwrap();
                entries.push(Entry {
                    file: f,
                    pos: bytes.len(),
                    bytes: b.as_bytes().to_vec(),
                    first: b.first_offset().unwrap_or(span.last_offset),
                    last: span.last_offset,
                    compressed: b.compression().unwrap() != Compression::None,
                });
                bytes.extend_from_slice(b.as_bytes());
            }
        }
        files.push((base, bytes));
    }
    (files, entries)
}

/// A kind of damage.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// XOR a byte inside the CRC-covered part of an entry.
    Flip,
    /// A size field set to this delta from the true one (or to a huge or negative value).
    Length(i32),
    /// A run of zeros of this length.
    Zeros(usize),
    /// A run of pseudo-random bytes of this length.
    Garbage(usize),
    /// The file cut off this many bytes into the entry.
    Cut(usize),
    /// A v2 batch's base offset (outside the CRC) raised by a flipped bit: the lowest clear
    /// bit at or above this one is set.
    BaseOffset(u32),
}

/// Applies `kind` to entry `e` of `files`, at `at` (a free number picking a position).
fn damage(files: &mut [(i64, Vec<u8>)], all: &[Entry], e: &Entry, kind: Kind, at: usize) {
    let buf = &mut files[e.file].1;
    let len = e.bytes.len();
    match kind {
        Kind::Flip => {
            // CRC-covered: v2 from byte 21 (attributes), v0/v1 from byte 16 (magic).
            let from = if e.bytes[16] == 2 { 21 } else { 16 };
            let p = e.pos + from + at % (len - from);
            buf[p] ^= 1 << (at % 8) | 1;
        }
        Kind::Length(delta) => {
            let size = i32::from_be_bytes(e.bytes[8..12].try_into().unwrap());
            let new = match delta {
                i32::MAX => 0x7fff_0000,
                i32::MIN => -5,
                d => size + d,
            };
            buf[e.pos + 8..e.pos + 12].copy_from_slice(&new.to_be_bytes());
        }
        Kind::Zeros(n) | Kind::Garbage(n) => {
            let start = e.pos + at % len;
            let mut end = (start + n).min(buf.len());
            // A run ending in a later entry's offset field would change no checked byte of
            // it: undetectable by any reader. Reach its size field.
            if let Some(n) = all
                .iter()
                .find(|n| n.file == e.file && n.pos > e.pos && end > n.pos && end < n.pos + 12)
            {
                end = (n.pos + 12).min(buf.len());
            }
            let mut x = (at as u32).wrapping_mul(2_654_435_761) | 1;
            for b in &mut buf[start..end] {
                *b = match kind {
                    Kind::Zeros(_) => 0,
                    _ => {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        (x >> 7) as u8
                    }
                };
            }
        }
        Kind::Cut(n) => {
            buf.truncate(e.pos + n.clamp(1, len - 1));
        }
        Kind::BaseOffset(bit) => {
            assert_eq!(e.bytes[16], 2, "base offset damage is for v2 batches");
            let old = i64::from_be_bytes(e.bytes[..8].try_into().unwrap());
            let bit = (bit..63).find(|b| old & (1 << b) == 0).unwrap();
            buf[e.pos..e.pos + 8].copy_from_slice(&(old | 1 << bit).to_be_bytes());
        }
    }
}

/// Writes `files` as segments of `m.dir` and salvages the directory into `/out/t-0`.
fn salvage_mem(m: &Mem, files: &[(i64, Vec<u8>)], options: SalvageOptions) -> SalvageReport {
    write_input(m, files);
    salvage::salvage_partition_with(
        &m.env,
        &m.dir,
        Some(Path::new("/out/t-0")),
        options,
        &mut NoSink,
    )
    .unwrap()
}

/// A read-only open of the damaged input `m.dir` (no recovery point: every segment scanned),
/// where every `touched` entry is broken (none still checks): when an untouched entry follows
/// the first touched one, the open fails naming the file and byte of that one; otherwise it
/// serves the log up to it, as Kafka's recovery cuts a torn tail.
fn read_only_open_after(
    m: &Mem,
    original: &[(i64, Vec<u8>)],
    entries: &[Entry],
    touched: &[bool],
    what: &str,
) {
    let opened = Log::open_read_only_with(&m.dir, m.env.clone());
    let Some(first) = touched.iter().position(|&t| t) else {
        let log = opened.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            log.log_end_offset(),
            entries.last().unwrap().last + 1,
            "{what}"
        );
        return;
    };
    let bad = &entries[first];
    let file = m
        .dir
        .join(krecords_log::files::file_name(original[bad.file].0, ".log"));
    if touched[first..].contains(&false) {
        let log = opened.unwrap_or_else(|e| panic!("{what}: {e}"));
        let Some(d) = log.damage() else {
            panic!("{what}: intact entries follow the damage, yet no damage");
        };
        assert_eq!((&d.file, d.position), (&file, bad.pos as u64), "{what}");
        // The log as read ends where the damage starts; a fetch there fails naming it.
        let end = log.log_end_offset();
        assert_eq!(d.offset, end, "{what}");
        match log.fetch(end, 1 << 20, krecords_log::IsolationLevel::ReadUncommitted) {
            Err(krecords_log::Error::DamagedSegment { path, position, .. }) => {
                assert_eq!((path, position), (file, bad.pos as u64), "{what}");
            }
            other => panic!("{what}: a fetch at the damage gave {other:?}"),
        }
    } else {
        let log = opened.unwrap_or_else(|e| panic!("{what}: a torn tail only, yet {e}"));
        assert_eq!(log.damage(), None, "{what}: a torn tail only");
        let first_of_file = entries.iter().position(|e| e.file == bad.file) == Some(first);
        let end = if first_of_file {
            original[bad.file].0
        } else {
            entries[first - 1].last + 1
        };
        assert_eq!(log.log_end_offset(), end, "{what}");
    }
}

/// Writes `files` as the segments of `m.dir`, with small preallocated indexes (fast).
fn write_input(m: &Mem, files: &[(i64, Vec<u8>)]) {
    m.storage.create_dir_all(&m.dir).unwrap();
    for (base, bytes) in files {
        let path = m.dir.join(krecords_log::files::file_name(*base, ".log"));
        m.storage.create(&path).unwrap().write_at(bytes, 0).unwrap();
    }
    let config = m.dir.join("krec-log.json");
    let json = br#"{"segment.index.bytes": "4096"}"#;
    m.storage
        .create(&config)
        .unwrap()
        .write_at(json, 0)
        .unwrap();
}

fn read_all(m: &Mem, path: &Path) -> Vec<u8> {
    let f = m.storage.open_read(path).unwrap();
    let mut buf = vec![0; f.len().unwrap() as usize];
    f.read_exact_at(&mut buf, 0).unwrap();
    buf
}

/// The property: the output holds exactly the untouched entries, byte for byte, each in the
/// segment named like its input's; the damaged ranges are the runs of touched entries.
fn check(original: &[(i64, Vec<u8>)], damaged: &[(i64, Vec<u8>)], entries: &[Entry], what: &str) {
    let m = mem();
    let report = salvage_mem(&m, damaged, SalvageOptions::default());
    let touched: Vec<bool> = entries
        .iter()
        .map(|e| {
            let buf = &damaged[e.file].1;
            buf.get(e.pos..e.pos + e.bytes.len()) != Some(&e.bytes[..])
        })
        .collect();
    // Output: per segment, the untouched entries of the input segment of the same name.
    let mut got = Vec::new();
    for (n, bytes) in output_segments(&m) {
        for b in Entries::new(&bytes).strict() {
            got.push((n.clone(), b.unwrap().as_bytes().to_vec()));
        }
    }
    let want: Vec<(String, Vec<u8>)> = entries
        .iter()
        .zip(&touched)
        .filter(|(_, t)| !**t)
        .map(|(e, _)| {
            let name = krecords_log::files::file_name(original[e.file].0, ".log");
            (name, e.bytes.clone())
        })
        .collect();
    assert_eq!(got.len(), want.len(), "{what}: entries kept");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            g == w,
            "{what}: output entry {i} differs: {} vs {}",
            g.0,
            w.0
        );
    }
    // Touched entries that still check (only their base offset changed) are left out; the
    // others make the damaged ranges.
    let still_valid: Vec<bool> = entries
        .iter()
        .zip(&touched)
        .map(|(e, t)| {
            *t && damaged[e.file]
                .1
                .get(e.pos..e.pos + e.bytes.len())
                .and_then(|b| Entries::new(b).strict().next())
                .is_some_and(|b| b.is_ok_and(|b| b.is_crc_valid()))
        })
        .collect();
    if !still_valid.contains(&true) {
        read_only_open_after(&m, original, entries, &touched, what);
    }
    let left_out: Vec<(usize, usize)> = entries
        .iter()
        .zip(&still_valid)
        .filter(|(_, v)| **v)
        .map(|(e, _)| (e.file, e.pos))
        .collect();
    let got_left_out: Vec<(usize, usize)> = report
        .left_out
        .iter()
        .map(|l| {
            let f = report.files.iter().position(|r| r.file == l.file).unwrap();
            (f, l.position as usize)
        })
        .collect();
    assert_eq!(
        got_left_out, left_out,
        "{what}: left out {:?}",
        report.left_out
    );
    // Damaged ranges: maximal runs of touched entries per file, cut at the file's end.
    let mut ranges = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if !touched[i] || still_valid[i] {
            continue;
        }
        let flen = damaged[e.file].1.len();
        if e.pos >= flen {
            continue;
        }
        let end = (e.pos + e.bytes.len()).min(flen);
        match ranges.last_mut() {
            Some((f, _, last_end)) if *f == e.file && *last_end == e.pos => *last_end = end,
            _ => ranges.push((e.file, e.pos, end)),
        }
    }
    let got_ranges: Vec<(usize, usize, usize)> = report
        .damaged
        .iter()
        .map(|d| {
            let f = report.files.iter().position(|r| r.file == d.file).unwrap();
            (f, d.position as usize, (d.position + d.length) as usize)
        })
        .collect();
    assert_eq!(got_ranges, ranges, "{what}: damaged ranges");
    // Offsets lost around each range, and Kafka's recovery.
    for d in &report.damaged {
        let before = entries
            .iter()
            .zip(&touched)
            .take_while(|(e, _)| {
                let f = report.files.iter().position(|r| r.file == d.file).unwrap();
                (e.file, e.pos) < (f, d.position as usize)
            })
            .filter(|(_, t)| !**t)
            .last()
            .map(|(e, _)| e.last);
        assert_eq!(d.last_kept_before, before, "{what}");
    }
    // Kafka's recovery keeps the untouched prefix, and an entry whose base offset rose (it
    // checks and its offsets increase), then stops.
    let clean = touched.iter().take_while(|t| !**t).count();
    let kafka = (clean + usize::from(still_valid.get(clean) == Some(&true))) as u64;
    assert_eq!(report.kafka_recovery.entries, kafka, "{what}");
    assert_eq!(report.kept_entries, want.len() as u64, "{what}");
    // The output opens as a log, with the kept offsets.
    let log = Log::open_read_only_with(Path::new("/out/t-0"), m.env.clone()).unwrap();
    if let Some(last) = entries.iter().zip(&touched).rfind(|(_, t)| !**t) {
        assert_eq!(log.log_end_offset(), last.0.last + 1, "{what}");
    }
}

#[test]
fn every_damage_at_every_kind_of_entry() {
    let (files, entries) = corpus();
    let n = entries.len();
    // First entry, last, the first and last of each segment, compressed ones, and others.
    let mut picks: Vec<usize> = vec![0, 1, n / 2, n - 1];
    for f in 0..files.len() {
        picks.push(entries.iter().position(|e| e.file == f).unwrap());
        picks.push(entries.iter().rposition(|e| e.file == f).unwrap());
    }
    picks.extend(
        entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.compressed)
            .map(|(i, _)| i)
            .step_by(3),
    );
    picks.sort_unstable();
    picks.dedup();
    let kinds = [
        Kind::Flip,
        Kind::Length(7),
        Kind::Length(-5),
        Kind::Length(i32::MAX),
        Kind::Length(i32::MIN),
        Kind::Zeros(40),
        Kind::Zeros(400),
        Kind::Garbage(33),
        Kind::Garbage(700),
    ];
    let mut cases = 0;
    for &i in &picks {
        for kind in kinds {
            for at in [0usize, 17, 123_457] {
                let mut d = files.clone();
                damage(&mut d, &entries, &entries[i], kind, at);
                check(
                    &files,
                    &d,
                    &entries,
                    &format!("{kind:?} at entry {i} ({at})"),
                );
                cases += 1;
            }
        }
        // A cut-off tail of the entry's file, and one with the next file's first entry
        // damaged too (across a segment boundary).
        let last_of_file = entries
            .iter()
            .rposition(|e| e.file == entries[i].file)
            .unwrap();
        let mut d = files.clone();
        damage(&mut d, &entries, &entries[last_of_file], Kind::Cut(30), 0);
        check(
            &files,
            &d,
            &entries,
            &format!("cut at entry {last_of_file}"),
        );
        if let Some(next) = entries.get(last_of_file + 1) {
            damage(&mut d, &entries, next, Kind::Zeros(50), 0);
            check(
                &files,
                &d,
                &entries,
                &format!("across the boundary after {last_of_file}"),
            );
        }
        cases += 2;
    }
    assert!(cases > 300, "{cases}");
}

#[test]
fn a_damaged_base_offset_leaves_out_that_batch_only() {
    // A flipped bit in a v2 batch's base offset (outside the CRC) used to keep that batch at
    // the wrong, higher offset and leave out every batch after it; now the next batch, which
    // follows what was kept, shows which one is wrong. Every v2 batch but the very last (whose
    // offsets nothing after it contradicts), low bits and high ones, across segment boundaries
    // and in compacted data with offset gaps.
    let (files, entries) = corpus();
    let (mut cases, mut skipped) = (0, 0);
    for (i, e) in entries.iter().enumerate().take(entries.len() - 1) {
        if e.bytes[16] != 2 {
            continue;
        }
        for bit in [0, 1, 4, 13, 31, 47, 62] {
            // A rise that stays below the next batch (into a gap of compacted offsets)
            // contradicts nothing: the batch is kept where it claims to be.
            let bit = (bit..63).find(|b| e.first & (1 << b) == 0).unwrap();
            if (e.first | 1 << bit) + (e.last - e.first) < entries[i + 1].first {
                skipped += 1;
                continue;
            }
            let mut d = files.clone();
            damage(&mut d, &entries, e, Kind::BaseOffset(bit), 0);
            check(
                &files,
                &d,
                &entries,
                &format!("base offset bit {bit} of entry {i}"),
            );
            cases += 1;
        }
    }
    assert!(cases > 100 && skipped < 10, "{cases} {skipped}");
    // With other damage around it (not on the entry right after it).
    let v2: Vec<usize> = (0..entries.len() - 1)
        .filter(|&i| entries[i].bytes[16] == 2)
        .collect();
    let mut d = files.clone();
    damage(&mut d, &entries, &entries[v2[2]], Kind::BaseOffset(5), 0);
    damage(&mut d, &entries, &entries[v2[2] - 1], Kind::Flip, 7);
    damage(&mut d, &entries, &entries[v2[6]], Kind::BaseOffset(40), 0);
    damage(&mut d, &entries, &entries[v2[8]], Kind::Zeros(64), 3);
    check(&files, &d, &entries, "base offsets among other damage");
}

#[test]
fn damaged_first_entries_of_every_segment_and_several_ranges() {
    let (files, entries) = corpus();
    let mut d = files.clone();
    for f in 0..files.len() {
        let first = entries.iter().find(|e| e.file == f).unwrap();
        damage(&mut d, &entries, first, Kind::Flip, 99);
    }
    check(&files, &d, &entries, "first entries");
}

#[test]
fn entries_going_backwards_or_overlapping_are_left_out_and_reported() {
    let (files, entries) = corpus();
    let mut d = files.clone();
    // A copy of an earlier entry (CRC-valid, offsets already kept) after the last one.
    let dup = &entries[3];
    d[2].1.extend_from_slice(&dup.bytes);
    let m = mem();
    let report = salvage_mem(&m, &d, SalvageOptions::default());
    assert_eq!(report.left_out.len(), 1);
    let l = &report.left_out[0];
    // A wrapper's first offset is its first inner message's.
    let dup_first = Entries::new(&dup.bytes)
        .next()
        .unwrap()
        .unwrap()
        .record_span(&mut Vec::new(), 1 << 20)
        .unwrap()
        .first_offset;
    assert_eq!(
        (l.position as usize, l.first_offset, l.last_offset),
        (files[2].1.len(), dup_first, dup.last)
    );
    assert_eq!(report.kept_entries, entries.len() as u64);
    assert!(report.damaged.is_empty());
    assert!(report.lost_anything());
    assert_eq!(report.kafka_recovery.entries, entries.len() as u64);
}

#[test]
fn an_intact_partition_loses_nothing_and_kafka_would_keep_all() {
    let (files, entries) = corpus();
    let m = mem();
    let report = salvage_mem(&m, &files, SalvageOptions::default());
    assert!(!report.lost_anything());
    assert_eq!(report.kept_entries, entries.len() as u64);
    assert_eq!(report.kafka_recovery.entries, entries.len() as u64);
    assert_eq!(report.kafka_recovery.stops_at, None);
    assert_eq!(report.segments_written, 3);
    assert_eq!(report.kept_ranges.len(), 1);
    assert!(report.to_string().contains("lost: 0 damaged ranges"));
}

#[test]
fn leader_epochs_are_rebuilt_from_what_was_kept() {
    let (files, entries) = corpus();
    let mut d = files.clone();
    // The first v2 batch of epoch 4 is damaged: epoch 4 starts at the next one.
    let first4 = entries.iter().position(|e| e.file == 1).unwrap() + 5;
    damage(&mut d, &entries, &entries[first4], Kind::Flip, 3);
    let m = mem();
    salvage_mem(&m, &d, SalvageOptions::default());
    let text =
        String::from_utf8(read_all(&m, Path::new("/out/t-0/leader-epoch-checkpoint"))).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let start4 = entries[first4 + 1].first;
    let start3 = entries[first4 - 5].first;
    let start5 = entries.iter().find(|e| e.file == 2).unwrap().first;
    assert_eq!(
        lines,
        [
            "0".to_string(),
            "4".into(),
            format!("3 {start3}"),
            format!("4 {start4}"),
            format!("5 {start5}"),
            format!("6 {}", entries[entries.len() - 3].first),
        ]
    );
}

#[test]
fn a_small_max_entry_size_bounds_the_window_and_makes_larger_entries_damage() {
    let (files, entries) = corpus();
    let largest = entries.iter().map(|e| e.bytes.len()).max().unwrap();
    let m = mem();
    let options = SalvageOptions {
        max_entry_size: largest - 12 - 1,
        ..SalvageOptions::default()
    };
    let report = salvage_mem(&m, &files, options);
    let too_large = entries.iter().filter(|e| e.bytes.len() == largest).count() as u64;
    assert_eq!(report.kept_entries, entries.len() as u64 - too_large);
    assert!(
        report.damaged[0].reason.contains("maximum entry size"),
        "{:?}",
        report.damaged
    );
}

/// A bound below the smallest entry, down to 0, makes every entry damage and panics nowhere
/// (it panicked below 5: `min > max` in the window's clamp).
#[test]
fn a_max_entry_size_below_any_entry_keeps_nothing_and_does_not_panic() {
    let (files, entries) = corpus();
    for max_entry_size in 0..20 {
        let m = mem();
        let options = SalvageOptions {
            max_entry_size,
            ..SalvageOptions::default()
        };
        let report = salvage_mem(&m, &files, options);
        assert_eq!(report.kept_entries, 0, "{max_entry_size}");
        assert!(!entries.is_empty());
    }
}

#[test]
fn zero_filled_gigantic_regions_are_crossed_and_inputs_never_change() {
    let (files, entries) = corpus();
    let mut d = files.clone();
    // Preallocated space inside the first segment: 3 MiB of zeros after its second entry.
    let at = entries[2].pos;
    d[0].1.splice(at..at, std::iter::repeat_n(0u8, 3 << 20));
    let m = mem();
    let report = salvage_mem(&m, &d, SalvageOptions::default());
    assert_eq!(report.kept_entries, entries.len() as u64);
    assert_eq!(report.damaged.len(), 1);
    assert_eq!(
        (report.damaged[0].position, report.damaged[0].length),
        (at as u64, 3 << 20)
    );
    // Nothing was lost: zeros hold no offsets.
    assert_eq!(report.damaged[0].lost_offsets(), None);
    for (base, bytes) in &d {
        let path = m.dir.join(krecords_log::files::file_name(*base, ".log"));
        assert_eq!(&read_all(&m, &path), bytes);
    }
}

#[derive(Default)]
struct Keep(Vec<(PathBuf, u64, Vec<u8>)>);

impl SalvageSink for Keep {
    fn wants_damaged(&self) -> bool {
        true
    }
    fn damaged(&mut self, file: &Path, position: u64, bytes: &[u8]) -> std::io::Result<()> {
        self.0.push((file.to_path_buf(), position, bytes.to_vec()));
        Ok(())
    }
}

#[test]
fn damaged_bytes_go_to_the_sink_and_a_report_without_output_writes_nothing() {
    let (files, entries) = corpus();
    let mut d = files.clone();
    damage(&mut d, &entries, &entries[7], Kind::Garbage(100), 5);
    let m = mem();
    write_input(&m, &d);
    let mut keep = Keep::default();
    let report =
        salvage::salvage_partition_with(&m.env, &m.dir, None, SalvageOptions::default(), &mut keep)
            .unwrap();
    assert_eq!(report.segments_written, 0);
    assert!(!m.storage.exists(Path::new("/out")).unwrap());
    let dmg = &report.damaged[0];
    let kept: Vec<u8> = keep.0.iter().flat_map(|c| c.2.clone()).collect();
    let start = dmg.position as usize;
    assert_eq!(kept, d[0].1[start..start + dmg.length as usize]);
}

#[test]
fn the_output_passes_verify_on_disk() {
    let (files, entries) = corpus();
    let mut d = files.clone();
    damage(&mut d, &entries, &entries[4], Kind::Zeros(300), 2);
    damage(&mut d, &entries, &entries[entries.len() - 4], Kind::Flip, 2);
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("t-0");
    std::fs::create_dir(&input).unwrap();
    for (base, bytes) in &d {
        std::fs::write(
            input.join(krecords_log::files::file_name(*base, ".log")),
            bytes,
        )
        .unwrap();
    }
    let out = tmp.path().join("out");
    let report =
        salvage::salvage_partition(&input, Some(&out), SalvageOptions::default(), &mut NoSink)
            .unwrap();
    assert!(report.lost_anything());
    let check = krecords_log::check::check_partition(&out, 1 << 26).unwrap();
    assert!(check.problems.is_empty(), "{:?}", check.problems);
    // Producer state and the transaction index were rebuilt.
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.ends_with(".snapshot")), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with(".txnindex")), "{names:?}");
    let _ = LogConfig::default();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_damage_keeps_exactly_the_untouched_entries(
        ops in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..5, any::<usize>(), 1usize..600), 1..4)
    ) {
        let (files, entries) = corpus();
        let mut d = files.clone();
        for (e, kind, at, n) in ops {
            let e = &entries[e.index(entries.len())];
            let kind = match kind {
                0 => Kind::Flip,
                1 => Kind::Length(((n as i32 % 41) - 20) | 1),
                2 => Kind::Zeros(n.max(16)),
                3 => Kind::Garbage(n.max(16)),
                _ => Kind::Cut(n),
            };
            if e.pos + e.bytes.len() > d[e.file].1.len() {
                continue; // already cut off
            }
            damage(&mut d, &entries, e, kind, at);
        }
        check(&files, &d, &entries, "random");
    }
}

/// Where an entry of [`txn_log`] is: file, position, length, first offset.
type At = (usize, usize, usize, i64);

/// One entry of [`txn_log`]: a producer's batch of two records, or its end marker.
#[derive(Debug, Clone, Copy)]
enum TxnEntry {
    /// A transactional batch: producer id, epoch.
    Data(i64, i16),
    /// An end marker: producer id, epoch, commit.
    Marker(i64, i16, bool),
    /// A batch of two records outside any transaction (values `plain-<offset>`).
    Plain,
}

/// The segment files (base offset, bytes) of `segments`, each a list of entries in offset order
/// from offset 0, and each entry's (file, position, length, first offset). Values name the
/// producer and epoch (`p1e10-<offset>`); sequences go on per producer and epoch from 0.
fn txn_log(segments: &[&[TxnEntry]]) -> (Vec<(i64, Vec<u8>)>, Vec<At>) {
    let mut files = Vec::new();
    let mut at = Vec::new();
    let mut next = 0i64;
    let mut seqs = std::collections::HashMap::new();
    for (f, entries) in segments.iter().enumerate() {
        let base = next;
        let mut bytes = Vec::new();
        for e in *entries {
            let b = match *e {
                TxnEntry::Data(pid, epoch) => {
                    let seq = seqs.entry((pid, epoch)).or_insert(0);
                    let mut b = V2Builder::new(next)
                        .producer(pid, epoch, *seq)
                        .transactional(true)
                        .partition_leader_epoch(2);
                    for _ in 0..2 {
                        let v = format!("p{pid}e{epoch}-{next}");
                        b.append(&NewRecord::new(NOW + next, Some(b"k"), Some(v.as_bytes())))
                            .unwrap();
                        next += 1;
                    }
                    *seq += 2;
                    b.finish().unwrap()
                }
                TxnEntry::Plain => {
                    let mut b = V2Builder::new(next).partition_leader_epoch(2);
                    for _ in 0..2 {
                        let v = format!("plain-{next}");
                        b.append(&NewRecord::new(NOW + next, None, Some(v.as_bytes())))
                            .unwrap();
                        next += 1;
                    }
                    b.finish().unwrap()
                }
                TxnEntry::Marker(pid, epoch, commit) => {
                    let m = end_txn_marker(&EndTxnBatch {
                        base_offset: next,
                        partition_leader_epoch: 2,
                        producer_id: pid,
                        producer_epoch: epoch,
                        coordinator_epoch: 3,
                        commit,
                        timestamp: NOW + next,
                    })
                    .unwrap();
                    next += 1;
                    m
                }
            };
            let first = Entries::new(&b)
                .next()
                .unwrap()
                .unwrap()
                .first_offset()
                .unwrap();
            at.push((f, bytes.len(), b.len(), first));
            bytes.extend(b);
        }
        files.push((base, bytes));
    }
    (files, at)
}

/// The values a consumer reads from the salvaged output at `isolation`.
fn consumed(m: &Mem, isolation: krecords_log::IsolationLevel) -> Vec<String> {
    let log = Log::open_read_only_with(Path::new("/out/t-0"), m.env.clone()).unwrap();
    let mut values = Vec::new();
    let mut offset = 0;
    loop {
        let c = log.consume(offset, 1 << 20, isolation).unwrap();
        if c.next_offset == offset {
            break;
        }
        values.extend(
            c.records
                .iter()
                .map(|r| String::from_utf8(r.value.clone().unwrap()).unwrap()),
        );
        offset = c.next_offset;
    }
    values
}

/// Zeros entry `i` of `at` in `files`.
fn zero_entry(files: &mut [(i64, Vec<u8>)], at: &[At], i: usize) {
    let (f, pos, len, _) = at[i];
    files[f].1[pos..pos + len].fill(0);
}

/// The one-segment [`txn_log`] of `log` with entry `lost` zeroed, salvaged.
fn salvaged_without(log: &[TxnEntry], lost: usize) -> (Mem, SalvageReport, Vec<At>) {
    let (mut files, at) = txn_log(&[log]);
    zero_entry(&mut files, &at, lost);
    let m = mem();
    let report = salvage_mem(&m, &files, SalvageOptions::default());
    (m, report, at)
}

/// Values of the records of producer 1 at `epoch` in the data batches of `at` numbered `idx`.
fn values_of(at: &[At], idx: &[usize], epoch: i16) -> Vec<String> {
    idx.iter()
        .flat_map(|&i| (0..2).map(move |d| format!("p1e{epoch}-{}", at[i].3 + d)))
        .collect()
}

#[test]
fn a_lost_end_marker_followed_by_the_producers_next_transaction_gets_an_abort_marker() {
    use krecords_log::IsolationLevel::{ReadCommitted, ReadUncommitted};
    use TxnEntry::{Data, Marker};
    // Transaction version 2: every transaction has its epoch, its marker one above.
    let log: &[TxnEntry] = &[
        Data(1, 10),
        Data(1, 10),
        Marker(1, 11, true),
        Data(1, 12),
        Data(1, 12),
        Marker(1, 13, false),
        Data(1, 14),
        Marker(1, 15, true),
    ];
    let (files, at) = txn_log(&[log]);
    // The aborted transaction's marker lost: Kafka would commit its records with the next one.
    let mut damaged = files.clone();
    zero_entry(&mut damaged, &at, 5);
    for close in [true, false] {
        let m = mem();
        let options = SalvageOptions {
            close_lost_transactions: close,
            ..SalvageOptions::default()
        };
        let report = salvage_mem(&m, &damaged, options);
        assert_eq!(report.kept_entries, 7);
        assert_eq!(report.transactions.len(), 1, "{report:?}");
        let t = &report.transactions[0];
        assert_eq!(
            (
                t.producer_id,
                t.producer_epoch,
                t.first_offset,
                t.last_offset
            ),
            (1, 12, 5, 8)
        );
        let mut committed = values_of(&at, &[0, 1], 10);
        if close {
            assert_eq!(t.aborted_at, Some(at[5].3), "{}", t.note);
            assert!(t.note.contains("ABORT marker at offset 9"), "{}", t.note);
            assert!(report
                .to_string()
                .contains("1 closed with an ABORT marker, 0 left open"));
        } else {
            assert_eq!(t.aborted_at, None);
            // What Kafka makes of it: the aborted transaction's records are served.
            committed.extend(values_of(&at, &[3, 4], 12));
        }
        committed.extend(values_of(&at, &[6], 14));
        assert_eq!(consumed(&m, ReadCommitted), committed, "close {close}");
        let mut all = values_of(&at, &[0, 1], 10);
        all.extend(values_of(&at, &[3, 4], 12));
        all.extend(values_of(&at, &[6], 14));
        assert_eq!(consumed(&m, ReadUncommitted), all);
        let log = Log::open_read_only_with(Path::new("/out/t-0"), m.env.clone()).unwrap();
        assert_eq!(log.log_end_offset(), 13);
        assert_eq!(log.last_stable_offset(), 13);
        log.verify_indexes().unwrap();
    }
    // A lost commit marker: the transaction is hidden too (its outcome is unknown).
    let m = mem();
    let mut damaged = files.clone();
    zero_entry(&mut damaged, &at, 2);
    let report = salvage_mem(&m, &damaged, SalvageOptions::default());
    assert_eq!(report.transactions[0].aborted_at, Some(4));
    assert_eq!(consumed(&m, ReadCommitted), values_of(&at, &[6], 14));
}

#[test]
fn a_transaction_whose_own_marker_or_next_batch_follows_the_loss_is_left_alone() {
    use krecords_log::IsolationLevel::ReadCommitted;
    use TxnEntry::{Data, Marker};
    // A batch of the transaction lost, its marker kept: with transaction version 2 known (an
    // earlier transaction of the producer ended one epoch above its batches), the next batch
    // of the same epoch can only be the same transaction.
    let log = [
        Data(1, 9),
        Marker(1, 10, true),
        Data(1, 10),
        Data(1, 10),
        Data(1, 10),
        Marker(1, 11, true),
    ];
    let (m, report, at) = salvaged_without(&log, 3);
    assert!(report.transactions.is_empty(), "{report:?}");
    assert_eq!(report.kept_entries, 5);
    let mut want = values_of(&at, &[0], 9);
    want.extend(values_of(&at, &[2, 4], 10));
    assert_eq!(consumed(&m, ReadCommitted), want);
    // The transaction's own marker after the loss: nothing to do.
    let log = [Data(1, 10), Data(1, 10), Marker(1, 11, true)];
    let (m, report, at) = salvaged_without(&log, 1);
    assert!(report.transactions.is_empty(), "{report:?}");
    assert_eq!(consumed(&m, ReadCommitted), values_of(&at, &[0], 10));
}

/// With transaction version 1 a producer's transactions share its epoch: a batch of that
/// epoch after a loss goes on with the transaction, or opens the next one after a lost end
/// marker. Salvage cannot tell them apart: it reports the transaction and writes nothing. A
/// lost ABORT marker so makes the aborted records served with the next commit, as Kafka would,
/// and the report says so. A kept marker after the loss decides it: nothing to report.
#[test]
fn a_same_epoch_batch_after_a_loss_is_reported_as_undecidable() {
    use krecords_log::IsolationLevel::ReadCommitted;
    use TxnEntry::{Data, Marker};
    let log = [
        Data(1, 10),
        Data(1, 10),
        Marker(1, 10, false),
        Data(1, 10),
        Marker(1, 10, true),
    ];
    // The ABORT marker lost.
    let (m, report, at) = salvaged_without(&log, 2);
    assert_eq!(report.transactions.len(), 1, "{report:?}");
    let t = &report.transactions[0];
    assert_eq!((t.producer_id, t.first_offset, t.aborted_at), (1, 0, None));
    assert!(t.note.contains("cannot tell them apart"), "{}", t.note);
    assert!(
        report
            .to_string()
            .contains("0 closed with an ABORT marker, 1 left open"),
        "{report}"
    );
    assert_eq!(consumed(&m, ReadCommitted), values_of(&at, &[0, 1, 3], 10));
    // A batch of the transaction lost, its ABORT marker kept: decided, nothing to report.
    let (m, report, at) = salvaged_without(&log, 1);
    assert!(report.transactions.is_empty(), "{report:?}");
    assert_eq!(consumed(&m, ReadCommitted), values_of(&at, &[3], 10));
}

#[test]
fn a_transaction_the_producer_writes_nothing_after_is_left_open_and_reported() {
    use krecords_log::IsolationLevel::ReadCommitted;
    use TxnEntry::{Data, Marker};
    let log = [
        Data(1, 10),
        Marker(1, 11, true),
        Data(1, 12),
        Marker(1, 13, true),
        Data(2, 0),
        Marker(2, 1, true),
    ];
    let (m, report, at) = salvaged_without(&log, 3);
    assert_eq!(report.transactions.len(), 1, "{report:?}");
    let t = &report.transactions[0];
    assert_eq!((t.aborted_at, t.first_offset), (None, 3));
    assert!(
        t.note.contains("left open") && t.note.contains("kafka-transactions.sh"),
        "{}",
        t.note
    );
    // Kafka's reading: the last stable offset stays at the open transaction.
    assert_eq!(consumed(&m, ReadCommitted), values_of(&at, &[0], 10));
    let log = Log::open_read_only_with(Path::new("/out/t-0"), m.env.clone()).unwrap();
    assert_eq!(log.last_stable_offset(), 3);
}

#[test]
fn an_abort_marker_for_a_lost_one_at_a_segment_boundary_goes_where_its_offset_belongs() {
    use krecords_log::IsolationLevel::ReadCommitted;
    use TxnEntry::{Data, Marker};
    let (a, b) = (
        [Data(1, 10), Marker(1, 11, true), Data(1, 12)],
        [Marker(1, 13, false), Data(1, 14), Marker(1, 15, true)],
    );
    // The lost marker ends the first segment, or starts the second.
    for split in [4, 3] {
        let all: Vec<TxnEntry> = a.iter().chain(&b).copied().collect();
        let (files, at) = txn_log(&[&all[..split], &all[split..]]);
        let lost = 3;
        let mut damaged = files.clone();
        zero_entry(&mut damaged, &at, lost);
        let m = mem();
        let report = salvage_mem(&m, &damaged, SalvageOptions::default());
        assert_eq!(
            report.transactions[0].aborted_at,
            Some(at[lost].3),
            "{report:?}"
        );
        let mut want = values_of(&at, &[0], 10);
        want.extend(values_of(&at, &[4], 14));
        assert_eq!(consumed(&m, ReadCommitted), want, "split {split}");
        // Each marker is in the segment its offset belongs to.
        let out = Path::new("/out/t-0");
        for (base, _) in &files {
            let name = krecords_log::files::file_name(*base, ".log");
            let bytes = read_all(&m, &out.join(&name));
            let firsts: Vec<i64> = Entries::new(&bytes)
                .map(|b| b.unwrap().first_offset().unwrap())
                .collect();
            assert!(firsts.iter().all(|&o| o >= *base), "{name}: {firsts:?}");
        }
        let log = Log::open_read_only_with(out, m.env.clone()).unwrap();
        log.verify_indexes().unwrap();
    }
}

/// Each transaction's outcome by (producer, epoch): committed or not, `None` while open.
type Outcomes = HashMap<(i64, i16), Option<bool>>;

/// Transactions of two producers interleaved with batches outside any, as version 2 writes
/// them (each transaction its epoch, its marker one above); `steps` pick, one at a time, a
/// producer (or a plain batch) and whether its open transaction gets a batch or ends (`commit`
/// deciding how). Returns the entries and each transaction's outcome by (producer, epoch):
/// `Some(commit)`, `None` for one still open at the end.
fn interleaved(steps: &[(u8, bool, bool)]) -> (Vec<TxnEntry>, Outcomes) {
    use TxnEntry::{Data, Marker, Plain};
    let mut log = Vec::new();
    let mut outcome = HashMap::new();
    let mut epoch = [0i16, 100];
    let mut open = [false, false];
    for &(who, end, commit) in steps {
        let p = usize::from(who % 3);
        if p == 2 {
            log.push(Plain);
            continue;
        }
        let pid = p as i64 + 1;
        if open[p] && end {
            log.push(Marker(pid, epoch[p] + 1, commit));
            outcome.insert((pid, epoch[p]), Some(commit));
            open[p] = false;
            epoch[p] += 2;
        } else {
            log.push(Data(pid, epoch[p]));
            outcome.entry((pid, epoch[p])).or_insert(None);
            open[p] = true;
        }
    }
    (log, outcome)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever the damage, a read_committed consumer of the salvaged partition is served no
    /// record of an aborted transaction, nor of one left open, only committed and plain ones
    /// (version 2 epochs: a lost marker is always seen); every ABORT marker salvage wrote is at
    /// an offset the damage lost; the output is a valid log.
    #[test]
    fn salvage_never_serves_aborted_records_at_read_committed(
        steps in proptest::collection::vec((0u8..3, any::<bool>(), any::<bool>()), 4..40),
        damage in proptest::collection::vec((any::<prop::sample::Index>(), 1usize..300), 1..4),
    ) {
        use krecords_log::IsolationLevel::{ReadCommitted, ReadUncommitted};
        let (log, outcome) = interleaved(&steps);
        let (mut files, at) = txn_log(&[&log]);
        let original = files.clone();
        for (i, len) in &damage {
            let (f, pos, _, _) = at[i.index(at.len())];
            let end = (pos + len).min(files[f].1.len());
            files[f].1[pos..end].fill(0);
        }
        let m = mem();
        let report = salvage_mem(&m, &files, SalvageOptions::default());
        let served = consumed(&m, ReadCommitted);
        for v in &served {
            if v.starts_with("plain-") {
                continue;
            }
            let (p, rest) = v[1..].split_once('e').unwrap();
            let e = rest.split_once('-').unwrap().0;
            let key = (p.parse::<i64>().unwrap(), e.parse::<i16>().unwrap());
            prop_assert_eq!(outcome.get(&key).copied().flatten(), Some(true), "{} in {:?}", v, report);
        }
        // The markers salvage wrote sit where nothing was kept.
        let all: Vec<i64> = consumed(&m, ReadUncommitted)
            .iter()
            .map(|v| v.rsplit('-').next().unwrap().parse().unwrap())
            .collect();
        for t in &report.transactions {
            if let Some(o) = t.aborted_at {
                prop_assert!(!all.contains(&o) && t.last_offset < o, "{:?}", t);
                // The input entry that held offset `o` was damaged.
                let i = at.iter().rposition(|a| a.3 <= o).unwrap();
                let (f, pos, len, _) = at[i];
                prop_assert_ne!(&files[f].1[pos..pos + len], &original[f].1[pos..pos + len]);
            }
        }
        let out = Log::open_read_only_with(Path::new("/out/t-0"), m.env.clone()).unwrap();
        out.verify_indexes().unwrap();
    }
}

/// Segment files handed over out of order are read in the offset order of their names, as a
/// partition directory's are: nothing is left out (every entry of a file after a later one was
/// left out as going backwards). A file named otherwise keeps its place.
#[test]
fn segment_files_given_out_of_order_are_salvaged_in_offset_order() {
    let m = mem();
    let files: Vec<(i64, Vec<u8>)> = (0..3i64)
        .map(|i| {
            let mut b = V2Builder::new(i * 2);
            b.append(&NewRecord::new(NOW, None, Some(&value(i))))
                .unwrap();
            b.append(&NewRecord::new(NOW, None, Some(&value(i))))
                .unwrap();
            (i * 2, b.finish().unwrap())
        })
        .collect();
    write_input(&m, &files);
    let mut given = salvage::segment_files(&m.env, &m.dir).unwrap();
    given.reverse();
    assert_eq!(
        salvage::in_offset_order(&given),
        salvage::segment_files(&m.env, &m.dir).unwrap()
    );
    let out = Path::new("/out/reversed-0");
    let config = LogConfig::default();
    let report = salvage::salvage_files_with(
        &m.env,
        &given,
        Some(out),
        &config,
        SalvageOptions::default(),
        &mut NoSink,
    )
    .unwrap();
    assert_eq!(
        (report.kept_entries, report.kept_records),
        (3, 6),
        "{report}"
    );
    assert!(
        report.left_out.is_empty() && !report.found_anything(),
        "{report}"
    );
    assert_eq!(
        Log::open_read_only_with(out, m.env.clone())
            .unwrap()
            .log_end_offset(),
        6
    );
    // Files named otherwise keep their places; the named ones are sorted among theirs.
    let mixed: Vec<PathBuf> = [
        "b.bin",
        "00000000000000000009.log",
        "a.bin",
        "x/00000000000000000001.log",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    assert_eq!(
        salvage::in_offset_order(&mixed),
        [0, 3, 2, 1].map(|i| mixed[i].clone())
    );
}

/// A segment of zstd v2 batches of `per_batch` records holding offsets `base..end`.
fn batches(base: i64, end: i64, per_batch: i64) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut o = base;
    while o < end {
        let mut b = V2Builder::new(o).compression(Compression::Zstd, None);
        for i in o..o + per_batch {
            b.append(&NewRecord::new(NOW + i, None, Some(&value(i))))
                .unwrap();
        }
        bytes.extend_from_slice(&b.finish().unwrap());
        o += per_batch;
    }
    bytes
}

/// A segment whose entries jump ahead (over offsets that come later in it) and then go back:
/// the entries that go back are left out, and the kept ranges do not claim their offsets.
#[test]
fn kept_ranges_leave_out_offsets_of_entries_left_out_after_a_jump() {
    let files = vec![(
        0,
        [
            batches(0, 384, 12),
            batches(816, 900, 12),
            batches(384, 816, 12),
        ]
        .concat(),
    )];
    let m = mem();
    let report = salvage_mem(&m, &files, SalvageOptions::default());
    assert_eq!(report.left_out.len(), 36, "{report}");
    let ranges: Vec<(i64, i64)> = report
        .kept_ranges
        .iter()
        .map(|r| (r.first, r.last))
        .collect();
    assert_eq!(ranges, [(0, 383), (816, 899)], "{report}");
}

/// The `.log` files of the salvage output `/out/t-0`, sorted, with their bytes.
fn output_segments(m: &Mem) -> Vec<(String, Vec<u8>)> {
    let out = Path::new("/out/t-0");
    let mut names: Vec<String> = m
        .storage
        .list_dir(out)
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".log"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let bytes = read_all(m, &out.join(&n));
            (n, bytes)
        })
        .collect()
}

/// The renamed segments of `report`: (input file name, named, written as).
fn renamed(report: &SalvageReport) -> Vec<(String, i64, i64)> {
    report
        .renamed
        .iter()
        .map(|r| {
            let name = r.file.file_name().unwrap().to_string_lossy().into_owned();
            (name, r.named, r.written_as)
        })
        .collect()
}

/// Two segments whose file names were swapped (the file named for offset 0 holds 500..=899,
/// the one named for 500 holds 0..=499) are read in the order of their contents: nothing is
/// lost (every entry of the second file was left out as going backwards, 450 of 900 records
/// kept), each is written under its own base offset, and the report says both were renamed.
#[test]
fn segments_whose_names_were_swapped_are_read_in_the_order_of_their_contents() {
    let (low, high) = (batches(0, 500, 10), batches(500, 900, 10));
    let files = vec![(0, high.clone()), (500, low.clone())];
    let m = mem();
    let report = salvage_mem(&m, &files, SalvageOptions::default());
    assert_eq!(
        (report.kept_entries, report.kept_records),
        (90, 900),
        "{report}"
    );
    assert!(!report.lost_anything(), "{report}");
    assert!(report.found_anything(), "a misnamed segment is found");
    let order: Vec<Option<i64>> = report.files.iter().map(|f| f.base_offset).collect();
    assert_eq!(
        order,
        [Some(500), Some(0)],
        "read in the order of their contents"
    );
    let ranges: Vec<(i64, i64)> = report
        .kept_ranges
        .iter()
        .map(|r| (r.first, r.last))
        .collect();
    assert_eq!(ranges, [(0, 899)], "{report}");
    let log = |b: i64| krecords_log::files::file_name(b, ".log");
    assert_eq!(
        renamed(&report),
        [(log(500), 500, 0), (log(0), 0, 500)],
        "{report}"
    );
    let text = report.to_string();
    for line in [
        "is named for base offset 500, above the offsets it holds; its entries start at 0: \
         written as 00000000000000000000.log",
        "is named for base offset 0, at or below the offsets before it; its entries start at \
         500: written as 00000000000000000500.log",
        "lost: 0 damaged ranges (0 bytes), 0 entries left out",
    ] {
        assert!(text.contains(line), "{text}");
    }
    assert_eq!(output_segments(&m), [(log(0), low), (log(500), high)]);
    let out = Log::open_read_only_with("/out/t-0", m.env.clone()).unwrap();
    assert_eq!(out.log_end_offset(), 900);
    out.verify_indexes().unwrap();
}

/// Misnamed segments with damage at their start: a segment renamed above its offsets (named
/// for 900, holding 0..=299) is read first; one whose first batch is damaged is placed by its
/// first intact one; and one whose first batch's base offset (outside every CRC) rose is
/// placed by the batch after it (the raised one is left out, not taken for where the segment
/// starts, which would put the segment last and leave out all of it).
#[test]
fn misnamed_segments_are_placed_by_their_first_intact_entries() {
    let log = |b: i64| krecords_log::files::file_name(b, ".log");
    let (a, b, c) = (
        batches(0, 300, 10),
        batches(300, 600, 10),
        batches(600, 900, 10),
    );
    let mut damaged_b = b.clone();
    damaged_b[30] ^= 0x40; // inside the first batch's CRC-covered bytes
    let files = vec![(0, damaged_b), (300, c), (900, a)];
    let m = mem();
    let report = salvage_mem(&m, &files, SalvageOptions::default());
    assert_eq!(report.kept_records, 890, "{report}");
    assert!(report.left_out.is_empty(), "{report}");
    assert_eq!(report.damaged.len(), 1, "{report}");
    assert_eq!(report.damaged[0].file, m.dir.join(log(0)), "{report}");
    assert_eq!(
        report.damaged[0].lost_offsets(),
        Some((Some(300), Some(309))),
        "{report}"
    );
    assert_eq!(
        renamed(&report),
        [(log(900), 900, 0), (log(0), 0, 310), (log(300), 300, 600)],
        "{report}"
    );
    let names: Vec<String> = output_segments(&m).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, [log(0), log(310), log(600)]);
    let out = Log::open_read_only_with("/out/t-0", m.env.clone()).unwrap();
    assert_eq!(out.log_end_offset(), 900);

    // Swapped names, and the first batch of the file named 0 (holding 500..=899) has its base
    // offset raised by 2^40; a third segment follows.
    let (low, mut high) = (batches(0, 500, 10), batches(500, 900, 10));
    high[2] |= 0x01;
    let m = mem();
    let files = [(0, high), (500, low), (900, batches(900, 1300, 10))];
    let report = salvage_mem(&m, &files, SalvageOptions::default());
    assert_eq!(report.kept_records, 1290, "{report}");
    assert!(report.damaged.is_empty(), "{report}");
    let l: Vec<(u64, i64)> = report
        .left_out
        .iter()
        .map(|l| (l.position, l.first_offset))
        .collect();
    assert_eq!(l, [(0, 500 + (1 << 40))], "{report}");
    assert_eq!(
        renamed(&report),
        [(log(500), 500, 0), (log(0), 0, 510)],
        "{report}"
    );
    let out = Log::open_read_only_with("/out/t-0", m.env.clone()).unwrap();
    assert_eq!(out.log_end_offset(), 1300);
}

/// One intact entry alone does not overrule its file's name: a flipped bit in the base offset
/// of a one-batch segment leaves that batch out, in place, and moves no other segment; two
/// entries that follow each other exactly do overrule a name above them, which loses nothing.
#[test]
fn one_entry_alone_does_not_move_its_segment_and_two_that_chain_do() {
    let log = |b: i64| krecords_log::files::file_name(b, ".log");
    let first_offsets =
        |r: &SalvageReport| -> Vec<i64> { r.left_out.iter().map(|l| l.first_offset).collect() };
    // 1152 read as 1024 (bit 7 of the base offset's last byte): below its segment's base.
    let mut lowered = batches(1152, 1252, 100);
    lowered[7] ^= 0x80;
    let m = mem();
    let files = [(1052, batches(1052, 1152, 100)), (1152, lowered)];
    let report = salvage_mem(&m, &files, SalvageOptions::default());
    assert_eq!(report.kept_records, 100, "{report}");
    assert_eq!(first_offsets(&report), [1024], "{report}");
    assert!(renamed(&report).is_empty(), "{report}");
    let names: Vec<String> = output_segments(&m).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, [log(1052)]);

    // 0 read as 2^40 in the first of three one-batch segments: left out, the others kept.
    let mut raised = batches(0, 100, 100);
    raised[2] |= 0x01;
    let m = mem();
    let files = [
        (0, raised),
        (100, batches(100, 200, 100)),
        (200, batches(200, 300, 100)),
    ];
    let report = salvage_mem(&m, &files, SalvageOptions::default());
    assert_eq!(report.kept_records, 200, "{report}");
    assert_eq!(first_offsets(&report), [1 << 40], "{report}");
    let out = Log::open_read_only_with("/out/t-0", m.env.clone()).unwrap();
    assert_eq!(out.log_end_offset(), 300);

    // A segment named 105 holding 100..=199 in batches that chain: renamed, nothing left out.
    let m = mem();
    let files = [(0, batches(0, 100, 10)), (105, batches(100, 200, 10))];
    let report = salvage_mem(&m, &files, SalvageOptions::default());
    assert_eq!(report.kept_records, 200, "{report}");
    assert!(report.left_out.is_empty(), "{report}");
    assert_eq!(renamed(&report), [(log(105), 105, 100)], "{report}");
}

/// A damaged v0 gzip wrapper: the offsets lost end before the next wrapper's first inner
/// offset, not its last (the wrapper's own offset).
#[test]
fn a_damaged_legacy_wrapper_loses_the_offsets_up_to_the_next_wrappers_first() {
    let mut bytes = Vec::new();
    let mut first_len = 0;
    for w in 0..5i64 {
        let mut b = LegacyBuilder::new(0, w * 10)
            .unwrap()
            .compression(Compression::Gzip, None)
            .unwrap();
        for i in w * 10..w * 10 + 10 {
            b.append(&NewRecord::new(NOW + i, Some(b"kkkk"), Some(&value(i))))
                .unwrap();
        }
        bytes.extend_from_slice(&b.finish().unwrap());
        if w == 0 {
            first_len = bytes.len();
        }
    }
    let at = first_len / 2;
    bytes[at] ^= 0xff;
    let m = mem();
    let report = salvage_mem(&m, &[(0, bytes)], SalvageOptions::default());
    assert_eq!(report.damaged.len(), 1, "{report}");
    let d = &report.damaged[0];
    assert_eq!(d.first_kept_after, Some(10), "{report}");
    assert_eq!(d.lost_offsets(), Some((None, Some(9))), "{report}");
    let ranges: Vec<(i64, i64)> = report
        .kept_ranges
        .iter()
        .map(|r| (r.first, r.last))
        .collect();
    assert_eq!(ranges, [(10, 49)], "{report}");
    assert!(
        report.to_string().contains("offsets lost: ?..=9"),
        "{report}"
    );
}

/// A kept v2 batch whose partition leader epoch is below an earlier one's is kept (as Kafka's
/// recovery keeps it) and listed in the report, at the places `krec verify` reports on the
/// output: epoch -1 is skipped, v0/v1 entries have no epoch, one fall is listed once.
#[test]
fn leader_epochs_that_go_down_are_kept_and_listed_where_verify_reports_them() {
    let mut bytes = Vec::new();
    let mut positions = Vec::new();
    for (o, epoch) in [(0i64, 3), (1, 5), (2, -1), (3, 4), (4, 4), (5, 6), (6, 2)] {
        positions.push(bytes.len() as u64);
        let mut b = V2Builder::new(o).partition_leader_epoch(epoch);
        b.append(&NewRecord::new(NOW + o, None, Some(&value(o))))
            .unwrap();
        bytes.extend_from_slice(&b.finish().unwrap());
    }
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("t-0");
    std::fs::create_dir(&input).unwrap();
    std::fs::write(input.join("00000000000000000000.log"), &bytes).unwrap();
    let out = tmp.path().join("out");
    let report =
        salvage::salvage_partition(&input, Some(&out), SalvageOptions::default(), &mut NoSink)
            .unwrap();
    assert_eq!(report.kept_entries, 7, "every batch is kept");
    let downs: Vec<_> = report
        .epochs_down
        .iter()
        .map(|e| {
            (
                e.position,
                e.first_offset,
                e.last_offset,
                e.epoch,
                e.earlier_epoch,
                e.earlier_last_offset,
            )
        })
        .collect();
    assert_eq!(
        downs,
        [(positions[3], 3, 3, 4, 5, 1), (positions[6], 6, 6, 2, 6, 5)]
    );
    assert!(!report.found_anything(), "not a loss");
    let text = report.to_string();
    assert!(
        text.contains(&format!(
            "epoch goes down: {} byte {}: offsets 3..=3 have partition leader epoch 4, below \
             epoch 5 of offset 1 kept before them",
            input.join("00000000000000000000.log").display(),
            positions[3]
        )),
        "{text}"
    );
    // Verify reports the same batches of the output, which holds them byte for byte.
    let check = krecords_log::check::check_partition(&out, 1 << 26).unwrap();
    let reported: Vec<Option<u64>> = check
        .problems
        .iter()
        .filter(|p| p.message.contains("partition leader epoch"))
        .map(|p| p.position)
        .collect();
    assert_eq!(reported, [Some(positions[3]), Some(positions[6])]);
}

/// What is at a salvage's output: nothing or an empty directory is free; a partition directory
/// as salvage writes it is skipped only when asked and refused otherwise, with the way on in
/// the message; a directory with anything else in it, or a file, is always refused.
#[test]
fn an_existing_output_is_skipped_only_when_an_earlier_salvage_wrote_it_and_asked() {
    use salvage::{output_state, InputError, OutputState};
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("t-0");
    std::fs::create_dir(&input).unwrap();
    std::fs::write(input.join("00000000000000000000.log"), batches(0, 20, 5)).unwrap();
    let out = tmp.path().join("out");
    for skip in [false, true] {
        assert_eq!(output_state(&out, skip).unwrap(), OutputState::Free);
    }
    std::fs::create_dir(&out).unwrap();
    assert_eq!(output_state(&out, false).unwrap(), OutputState::Free);
    std::fs::remove_dir(&out).unwrap();
    salvage::salvage_partition(&input, Some(&out), SalvageOptions::default(), &mut NoSink).unwrap();
    assert_eq!(output_state(&out, true).unwrap(), OutputState::Salvaged);
    let e = output_state(&out, false).unwrap_err();
    assert!(matches!(e, InputError::OutputExists { salvaged: true, .. }));
    assert!(e.is_usage());
    assert!(
        e.to_string()
            .contains("already holds a partition salvaged by an earlier run"),
        "{e}"
    );
    assert!(
        e.to_string().contains("run again with --skip-existing"),
        "{e}"
    );
    // Anything else in it: never skipped (nor written into).
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    for skip in [false, true] {
        let e = output_state(&out, skip).unwrap_err();
        assert!(matches!(
            e,
            InputError::OutputExists {
                salvaged: false,
                ..
            }
        ));
        assert!(
            e.to_string()
                .contains("already holds files a salvage did not write"),
            "{e}"
        );
    }
    // A directory of segments without salvage's krec-log.json (a broker's, say): refused.
    let broker = tmp.path().join("broker");
    std::fs::create_dir(&broker).unwrap();
    std::fs::write(broker.join("00000000000000000000.log"), b"").unwrap();
    assert!(output_state(&broker, true).is_err());
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let e = output_state(&file, true).unwrap_err();
    assert!(e.to_string().contains("is not a directory"), "{e}");
}
