//! `AppendOrigin::Import`: existing batches appended with their own offsets (Kafka's replica
//! path), byte for byte, and moved with `write::set_base_offset` first.

use crate::util::*;
use krecords_codec::read::Entries;
use krecords_codec::write::{set_base_offset, NewRecord, V2Builder};
use krecords_codec::Compression;
use krecords_log::{AppendOrigin, IsolationLevel, Log};

/// A transactional or idempotent batch as a producer sends it (base offset 0).
fn producer_batch(pid: i64, seq: i32, txn: bool, codec: Compression, values: &[&str]) -> Vec<u8> {
    let mut b = V2Builder::new(0)
        .compression(codec, None)
        .producer(pid, 0, seq)
        .transactional(txn);
    for v in values {
        b.append(&NewRecord::new(NOW, Some(b"k"), Some(v.as_bytes())))
            .unwrap();
    }
    b.finish().unwrap()
}

/// A log with every kind of entry: plain, compressed, idempotent, committed and aborted
/// transactions (with their markers) and a transaction left open.
fn source(m: &Mem) -> Log {
    let mut log = m.create(&[]);
    append(&mut log, &v2(NOW, &["a", "b"]));
    append(
        &mut log,
        &v2_compressed(Compression::Zstd, NOW, &["c", "d", "e"]),
    );
    append(
        &mut log,
        &producer_batch(5, 0, false, Compression::Lz4, &["i0", "i1"]),
    );
    append(
        &mut log,
        &producer_batch(6, 0, true, Compression::None, &["t0"]),
    );
    append(
        &mut log,
        &producer_batch(7, 0, true, Compression::Gzip, &["x0", "x1"]),
    );
    log.append_end_txn(6, 0, 1, true, NOW).unwrap();
    append(
        &mut log,
        &producer_batch(5, 2, false, Compression::Snappy, &["i2"]),
    );
    log.append_end_txn(7, 0, 1, false, NOW).unwrap();
    append(
        &mut log,
        &producer_batch(8, 0, true, Compression::None, &["open"]),
    );
    log
}

fn all_bytes(log: &Log) -> Vec<u8> {
    log.read(0, usize::MAX >> 1).unwrap().bytes
}

fn batches(bytes: &[u8]) -> Vec<Vec<u8>> {
    Entries::new(bytes)
        .map(|b| b.unwrap().as_bytes().to_vec())
        .collect()
}

#[test]
fn a_segments_batches_imported_into_a_fresh_log_read_back_identical() {
    let m = mem();
    let src = source(&m);
    let bytes = all_bytes(&src);
    assert!(batches(&bytes).len() >= 9);
    // Twice: one append per batch, and every batch in one append.
    for one_append in [false, true] {
        let dst_mem = m.at(if one_append {
            "/logs/one-0"
        } else {
            "/logs/each-0"
        });
        let mut dst = dst_mem.create(&[]);
        if one_append {
            let info = dst.append(&bytes, AppendOrigin::Import).unwrap();
            assert_eq!(
                (info.base_offset, info.last_offset),
                (0, src.log_end_offset() - 1)
            );
        } else {
            for b in batches(&bytes) {
                dst.append(&b, AppendOrigin::Import).unwrap();
            }
        }
        assert_eq!(all_bytes(&dst), bytes);
        // The segment file itself is the same, byte for byte.
        assert_eq!(
            dst_mem.file(&seg(0, ".log")),
            m.file(&seg(0, ".log")),
            "one append: {one_append}"
        );
        // Producer state and transactions came along: the open transaction holds the last
        // stable offset, the aborted one is in the transaction index.
        assert_eq!(dst.log_end_offset(), src.log_end_offset());
        assert_eq!(dst.last_stable_offset(), src.last_stable_offset());
        assert!(dst.last_stable_offset() < dst.log_end_offset());
        for iso in [
            IsolationLevel::ReadCommitted,
            IsolationLevel::ReadUncommitted,
        ] {
            assert_eq!(
                dst.fetch(0, 1 << 20, iso).unwrap(),
                src.fetch(0, 1 << 20, iso).unwrap(),
                "{iso:?}"
            );
        }
        // And survive a reopen (recovery reads what was imported).
        drop(dst);
        let reopened = dst_mem.open();
        assert_eq!(all_bytes(&reopened), bytes);
        assert_eq!(reopened.last_stable_offset(), src.last_stable_offset());
    }
}

#[test]
fn imported_offsets_must_follow_the_log_end_and_each_other() {
    let m = mem();
    let src = source(&m);
    let all = batches(&all_bytes(&src));
    let dst_mem = m.at("/logs/dst-0");
    let mut dst = dst_mem.create(&[]);
    dst.append(&all[0], AppendOrigin::Import).unwrap();
    let before = dst_mem.snapshot();
    // The same batch again: at or below the log end.
    let e = dst.append(&all[0], AppendOrigin::Import).unwrap_err();
    assert_eq!(e.kafka_name(), "INVALID_RECORD", "{e}");
    assert!(e.to_string().contains("log end offset 2"), "{e}");
    // Two batches out of order in one append.
    let swapped = [all[2].clone(), all[1].clone()].concat();
    let e = dst.append(&swapped, AppendOrigin::Import).unwrap_err();
    assert!(e.to_string().contains("previous entry"), "{e}");
    // A corrupt CRC, a truncated entry, nothing at all.
    let mut bad = all[1].clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert_eq!(
        dst.append(&bad, AppendOrigin::Import)
            .unwrap_err()
            .kafka_name(),
        "CORRUPT_MESSAGE"
    );
    let cut = &all[1][..all[1].len() - 1];
    assert_eq!(
        dst.append(cut, AppendOrigin::Import)
            .unwrap_err()
            .kafka_name(),
        "CORRUPT_MESSAGE"
    );
    assert!(dst.append(&[], AppendOrigin::Import).is_err());
    assert_eq!(
        dst_mem.snapshot(),
        before,
        "a refused import wrote something"
    );
    // A gap is allowed, as on a replica: the offsets of all[1] are skipped.
    let third = Entries::new(&all[2]).next().unwrap().unwrap();
    assert!(third.first_offset().unwrap() > dst.log_end_offset());
    dst.append(&all[2], AppendOrigin::Import).unwrap();
    assert_eq!(dst.log_end_offset(), third.last_offset() + 1);
}

/// A v2 batch of `n` records at `base`.
fn batch_at(base: i64, n: usize) -> Vec<u8> {
    let mut b = V2Builder::new(base);
    for _ in 0..n {
        b.append(&NewRecord::new(NOW, Some(b"k"), Some(b"v")))
            .unwrap();
    }
    b.finish().unwrap()
}

/// No append, imported or assigned offsets, ends at offset `i64::MAX`: the log would have no
/// next offset (recovery cuts such an entry). Before, the import was taken and the log end,
/// `last_offset + 1`, overflowed (a panic in a debug build), as did a client's append at a log
/// end near `i64::MAX`.
#[test]
fn an_append_ending_at_i64_max_is_refused_for_the_log_would_have_no_next_offset() {
    let m = mem();
    let mut log = m.create(&[]);
    let before = m.snapshot();
    let e = log
        .append(&batch_at(i64::MAX - 2, 3), AppendOrigin::Import)
        .unwrap_err();
    assert_eq!(e.kafka_name(), "INVALID_RECORD", "{e}");
    assert!(
        e.to_string().ends_with(
            "3 offset(s) from 9223372036854775805 would end at or past offset \
             9223372036854775807: no offset could follow, so the log would have no end"
        ),
        "{e}"
    );
    assert_eq!((m.snapshot(), log.log_end_offset()), (before, 0));
    // One offset lower is taken: the log end is then i64::MAX - 1.
    log.append(&batch_at(i64::MAX - 3, 2), AppendOrigin::Import)
        .unwrap();
    assert_eq!(log.log_end_offset(), i64::MAX - 1);
    // Assigned offsets: two records would end at i64::MAX, whatever the path (in place, a
    // compressed batch, a rebuilt v1 message set); one goes in.
    for two in [
        v2(NOW, &["a", "b"]),
        v2_compressed(Compression::Gzip, NOW, &["a", "b"]),
        legacy(1, NOW, &["a", "b"]),
    ] {
        rejected_for(
            &m,
            &mut log,
            &two,
            "INVALID_RECORD",
            "the log would have no end",
        );
    }
    assert_eq!(append(&mut log, &v2(NOW, &["a"])).last_offset, i64::MAX - 1);
    assert_eq!(log.log_end_offset(), i64::MAX);
    // Nothing more fits, and no sum overflows.
    rejected_for(
        &m,
        &mut log,
        &v2(NOW, &["b"]),
        "INVALID_RECORD",
        "the log would have no end",
    );
    let e = log
        .append(&batch_at(i64::MAX, 1), AppendOrigin::Import)
        .unwrap_err();
    assert_eq!(e.kafka_name(), "INVALID_RECORD", "{e}");
    log.close().unwrap();
    assert_eq!(m.open().log_end_offset(), i64::MAX);
}

#[test]
fn set_base_offset_moves_a_segment_after_what_a_log_holds() {
    let m = mem();
    let src = source(&m);
    let bytes = all_bytes(&src);
    let dst_mem = m.at("/logs/moved-0");
    let mut dst = dst_mem.create(&[]);
    append(
        &mut dst,
        &v2(NOW, &["existing-0", "existing-1", "existing-2"]),
    );
    let shift = dst.log_end_offset();
    let mut moved = Vec::new();
    for mut b in batches(&bytes) {
        let base = Entries::new(&b).next().unwrap().unwrap().offset_field();
        set_base_offset(&mut b, base + shift).unwrap();
        moved.extend(b);
    }
    let info = dst.append(&moved, AppendOrigin::Import).unwrap();
    assert_eq!(info.base_offset, shift);
    assert_eq!(dst.log_end_offset(), shift + src.log_end_offset());
    // Everything past the existing batch is the source's bytes but for the offset fields.
    let got = dst.read(shift, 1 << 20).unwrap().bytes;
    assert_eq!(got, moved);
    assert_eq!(got.len(), bytes.len());
    for (g, s) in batches(&got).iter().zip(batches(&bytes)) {
        assert_eq!(g[8..], s[8..]);
    }
}
