//! Arbitrary bytes as the inner message set of a compressed v0/v1 wrapper (built around them by
//! the target), or as the wrapper's compressed value itself. Deep iteration must never panic,
//! stay within the 1 MiB limit and yield at most one record per 26 bytes, and must agree with an
//! independent model of Kafka's deep iterator: which inner message sets are refused (size below
//! the minimum, magic above 1, lengths past the message, nested compression, no complete inner
//! message, a v1 wrapper offset below the last inner offset), where each inner message starts,
//! and the offsets and timestamps it reports.
//!
//! Input: byte 0 chooses the wrapper (bit 0 magic; bits 1-2 codec gzip/snappy/lz4/zstd, zstd
//! being illegal in v0/v1; bit 3 LogAppendTime; bit 4 raw: the rest is the compressed value as
//! is; bits 5-7 the wrapper offset), the rest is the payload.
#![no_main]

use krecords_codec::read::{Batch, Entries, Record};
use krecords_codec::{compression, Compression, Error};
use krecords_fuzz::LIMIT;
use libfuzzer_sys::fuzz_target;

const WRAPPER_OFFSETS: [i64; 8] = [0, 1 << 20, i64::MAX, i64::MIN, -1, 99, 3, 1_000_000_007];
const WRAPPER_TIMESTAMP: i64 = 1_714_000_000_000;

/// A v0/v1 message with its 12-byte prefix, null key, written independently of the codec.
fn message(offset: i64, magic: u8, attributes: u8, value: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(value.len() + 34);
    m.extend_from_slice(&offset.to_be_bytes());
    m.extend_from_slice(&[0; 8]); // size, crc
    m.push(magic);
    m.push(attributes);
    if magic == 1 {
        m.extend_from_slice(&WRAPPER_TIMESTAMP.to_be_bytes());
    }
    m.extend_from_slice(&(-1i32).to_be_bytes());
    m.extend_from_slice(&(value.len() as i32).to_be_bytes());
    m.extend_from_slice(value);
    let size = (m.len() - 12) as i32;
    m[8..12].copy_from_slice(&size.to_be_bytes());
    let crc = krecords_codec::crc::crc32(&m[16..]);
    m[12..16].copy_from_slice(&crc.to_be_bytes());
    m
}

fn be32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

/// Kafka's deep iterator, written independently: the (position, length) of each inner message,
/// or `None` where Kafka refuses the set.
fn model(data: &[u8]) -> Option<Vec<(usize, usize)>> {
    let mut pos = 0;
    let mut out = Vec::new();
    while data.len() - pos >= 12 {
        let rest = &data[pos..];
        let size = be32(rest, 8);
        if size < 14 {
            return None;
        }
        let total = size as usize + 12;
        if rest.len() < total {
            break; // a truncated tail ends iteration silently
        }
        let m = &rest[..total];
        let magic = m[16];
        if magic > 1 || (magic == 1 && size < 22) {
            return None;
        }
        let mut p = if magic == 0 { 18 } else { 26 };
        for _ in 0..2 {
            if p + 4 > total {
                return None;
            }
            let len = be32(m, p);
            p += 4;
            if len >= 0 {
                if p + len as usize > total {
                    return None;
                }
                p += len as usize;
            }
        }
        if m[17] & 0x07 != 0 {
            return None; // nested compression
        }
        out.push((pos, total));
        pos += total;
    }
    (!out.is_empty()).then_some(out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, payload)) = data.split_first() else {
        return;
    };
    let magic = flags & 1;
    let codec = [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ][usize::from(flags >> 1 & 3)];
    let lat = flags & 0x08 != 0;
    let raw = flags & 0x10 != 0;
    let wrapper_offset = WRAPPER_OFFSETS[usize::from(flags >> 5)];

    let value = if raw {
        payload.to_vec()
    } else {
        let mut packed = Vec::new();
        compression::compress(codec, None, magic, payload, &mut packed).expect("compress");
        packed
    };
    let attributes = codec.id() | if lat && magic == 1 { 0x08 } else { 0 };
    let wrapper = message(wrapper_offset, magic, attributes, &value);
    let batch = Entries::new(&wrapper)
        .next()
        .expect("one entry")
        .expect("the wrapper parses");
    assert!(matches!(batch, Batch::Legacy(_)), "magic {}", batch.magic());

    // Every generic property (positions, limit, validate vs iteration, Kafka's offset rules).
    krecords_fuzz::check_batch(&batch);

    let mut scratch = Vec::new();
    let result = batch.records(&mut scratch, LIMIT);
    if codec == Compression::Zstd {
        assert!(
            matches!(result, Err(Error::UnsupportedCompression { .. })),
            "{result:?}"
        );
        return;
    }
    if raw {
        // Whatever the value decodes to, the limit holds and errors point at the wrapper.
        if let Err(e) = &result {
            let at = e.position().unwrap();
            assert!(
                at == 0 || at == wrapper.len() - value.len(),
                "error at {at}: {e}"
            );
        }
        return;
    }
    // We compressed the payload ourselves: it must decompress to exactly the payload, and the
    // outcome must be the model's.
    let expected = model(payload).filter(|inner| {
        if magic == 0 || wrapper_offset == 0 {
            return true;
        }
        let &(pos, _) = inner.last().unwrap();
        let last = i64::from_be_bytes(payload[pos..pos + 8].try_into().unwrap());
        wrapper_offset >= last
    });
    match (result, expected) {
        (Ok(records), Some(inner)) => {
            let records: Vec<_> = records.map(|r| r.expect("inner record")).collect();
            assert_eq!(records.len(), inner.len());
            for (r, &(pos, len)) in records.iter().zip(&inner) {
                let Record::Legacy(r) = r else {
                    panic!("v2 record in a wrapper")
                };
                assert_eq!((r.position, r.raw.len()), (pos, len));
                assert_eq!(r.raw, &payload[pos..pos + len]);
            }
            assert!(records.len() <= payload.len() / 26);
            drop(records);
            assert_eq!(scratch.len(), payload.len());
        }
        (Err(e), None) => {
            assert!(
                !matches!(e, Error::Decompress { .. } | Error::DecompressLimit { .. }),
                "our own compressed value failed to decompress: {e}"
            );
            assert!(e.position().is_some_and(|at| at < wrapper.len()), "{e}");
        }
        (Ok(r), None) => panic!(
            "deep iteration accepted what Kafka refuses: {} records",
            r.count()
        ),
        (Err(e), Some(inner)) => panic!(
            "deep iteration refused {} valid inner messages: {e}",
            inner.len()
        ),
    }
});
