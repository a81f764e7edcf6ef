//! `convert::convert` over arbitrary entries. Byte 0 chooses the options (bits 0-1 target magic
//! 0/1/2, bits 2-4 codec: keep, none, gzip, snappy, lz4, zstd; bit 5 pass-through; bit 6
//! records per batch 3; bit 7 LogAppendTime), byte 1 the level choice, the rest is the input.
//!
//! Never panics; an error leaves `out` as it was and points inside the input (builder errors
//! carry no position); on success the stats count what was written, the output is complete
//! entries of the target magic, every entry that was rebuilt (all of them without pass-through)
//! validates, converting the output again with pass-through copies it byte for byte
//! (idempotence), and when every input entry validates, has no control records and only
//! non-negative offsets, the output holds the same records: same offsets, keys and values, in
//! order.
#![no_main]

use krecords_codec::convert::{convert, ConvertOptions};
use krecords_codec::read::{Batch, Entries};
use krecords_codec::{Compression, TimestampType};
use krecords_fuzz::LIMIT;
use libfuzzer_sys::fuzz_target;

type Rec = (i64, Option<Vec<u8>>, Option<Vec<u8>>);

/// Every record of every entry (deep), or None when something does not read or validate.
fn records_of(bytes: &[u8], limit: usize) -> Option<Vec<Rec>> {
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    let mut entries = Entries::new(bytes);
    for batch in entries.by_ref() {
        let batch = batch.ok()?;
        batch.validate_with(&mut Vec::new(), limit).ok()?;
        if let Batch::V2(b) = &batch {
            if b.is_control() {
                return None;
            }
        }
        for r in batch.records(&mut scratch, limit).ok()? {
            let r = r.ok()?;
            if r.offset() < 0 {
                return None;
            }
            out.push((
                r.offset(),
                r.key().map(<[u8]>::to_vec),
                r.value().map(<[u8]>::to_vec),
            ));
        }
    }
    entries.partial().is_none().then_some(out)
}

/// Whether any entry or record of `bytes` has a negative offset.
fn negative_offsets(bytes: &[u8]) -> bool {
    let mut scratch = Vec::new();
    Entries::new(bytes).flatten().any(|b| {
        let shallow = b.offset_field() < 0 || b.last_offset() < 0;
        shallow
            || b.records(&mut scratch, LIMIT)
                .is_ok_and(|mut records| records.any(|r| r.is_ok_and(|r| r.offset() < 0)))
    })
}

fuzz_target!(|data: &[u8]| {
    let [flags, level_choice, input @ ..] = data else {
        return;
    };
    let magic = (flags & 3) % 3;
    let codec = match flags >> 2 & 7 {
        0 | 6 | 7 => None,
        i => Some(Compression::ALL[usize::from(i - 1)]),
    };
    let level = match (codec, level_choice % 4) {
        (Some(c), 1) => c.level_range().map(|r| r.0),
        (Some(c), 2) => c.level_range().map(|r| r.1.min(19)),
        (_, 3) => Some(i32::from(*level_choice as i8)),
        _ => None,
    };
    let opts = ConvertOptions {
        compression: codec,
        level,
        timestamp_type: (flags & 0x80 != 0).then_some(TimestampType::LogAppendTime),
        decompress_limit: LIMIT,
        records_per_batch: (flags & 0x40 != 0).then_some(3),
        pass_through: flags & 0x20 != 0,
        ..ConvertOptions::new(magic)
    };

    let mut out = vec![0x5a; 3];
    let result = convert(input, &opts, &mut out);
    let stats = match result {
        Err(e) => {
            assert_eq!(
                out, [0x5a; 3],
                "a failed conversion left output behind: {e}"
            );
            if let Some(at) = e.position() {
                assert!(at <= input.len(), "error at {at} past the input: {e}");
            }
            let _ = e.to_string();
            return;
        }
        Ok(stats) => stats,
    };
    assert!(opts.validate().is_ok());
    let out = &out[3..];
    assert_eq!(stats.bytes_out, out.len());
    let mut entries = Entries::new(out);
    let written: Vec<Batch<'_>> = entries
        .by_ref()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("converted output does not read: {e}"));
    assert!(
        entries.partial().is_none(),
        "converted output ends in a partial entry"
    );
    assert_eq!(written.len(), stats.entries_out);
    assert!(stats.entries_passed_through <= stats.entries_out);
    for b in &written {
        assert_eq!(b.magic(), magic, "converted output in magic {}", b.magic());
        // Batches without records and uncompressed control batches are always copied as is.
        let copied = matches!(b, Batch::V2(v) if v.records_count() == 0 || v.is_control());
        // Negative offsets (never in a Kafka log) give a v1 wrapper offset below its relative
        // inner offsets, which Kafka's reader (and ours) refuses; the writers do not check.
        let copied = copied || (b.magic() == 1 && negative_offsets(input));
        if let Some(c) = codec {
            if !opts.pass_through && !copied {
                assert_eq!(b.compression().ok(), Some(c));
            }
        }
        if !opts.pass_through && !copied {
            if let Err(e) = b.validate_with(&mut Vec::new(), LIMIT * 8) {
                panic!("a rebuilt entry at {} does not validate: {e}", b.position());
            }
        }
    }
    // Idempotence: the output is already in the target format.
    if opts.records_per_batch.is_none() {
        let again = ConvertOptions {
            pass_through: true,
            decompress_limit: LIMIT * 8,
            ..opts.clone()
        };
        let mut twice = Vec::new();
        match convert(out, &again, &mut twice) {
            Ok(s) => {
                assert_eq!(s.entries_passed_through, s.entries_in);
                assert!(twice == out, "converting converted output changed it");
            }
            Err(e) => panic!("converted output does not convert again: {e}"),
        }
    }
    // Same records, when the input is clean.
    if let Some(before) = records_of(input, LIMIT) {
        let after = records_of(out, LIMIT * 8).expect("converted output reads and validates");
        assert_eq!(before, after, "conversion changed the records");
    }
});
