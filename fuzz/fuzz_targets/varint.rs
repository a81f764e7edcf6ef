//! `varint::read_varint` / `read_varlong` on arbitrary bytes: a result exactly when Kafka's
//! `ByteUtils.readVarint` / `readVarlong` would give one (at most 5 / 10 bytes, the last without
//! a continuation bit, surplus high bits of the last byte dropped), `Truncated` when the input
//! ends inside the varint, `InvalidVarint` past the maximum length, both at the given position;
//! a value re-encodes canonically and reads back; write then read is the identity with the
//! length `varint_len` / `varlong_len` says.
#![no_main]

use krecords_codec::varint::{
    read_varint, read_varlong, unzigzag32, unzigzag64, varint_len, varlong_len, write_varint,
    write_varlong, zigzag32, zigzag64,
};
use krecords_codec::Error;
use libfuzzer_sys::fuzz_target;

/// Reference decoder: (unsigned value with dropped bits, length), or the error kind.
fn reference(data: &[u8], max: usize, bits: u32) -> Result<(u64, usize), bool> {
    let mut value = 0u64;
    for (i, &b) in data.iter().take(max).enumerate() {
        let shift = 7 * i as u32;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            return Ok((value & mask, i + 1));
        }
    }
    Err(data.len() >= max) // true: too long; false: truncated
}

fuzz_target!(|data: &[u8]| {
    // varint (i32)
    match (read_varint(data, 9), reference(data, 5, 32)) {
        (Ok((v, n)), Ok((u, m))) => {
            assert_eq!((zigzag32(v) as u64, n), (u, m));
            let mut enc = Vec::new();
            write_varint(&mut enc, v);
            assert_eq!(enc.len(), varint_len(v));
            assert!(enc.len() <= n);
            assert_eq!(read_varint(&enc, 0), Ok((v, enc.len())));
            // Canonical input re-encodes byte for byte.
            if n == enc.len() && (n < 5 || data[4] & 0x70 == 0) {
                assert_eq!(enc, data[..n]);
            }
        }
        (
            Err(Error::InvalidVarint {
                at: 9,
                max_bytes: 5,
            }),
            Err(true),
        ) => {}
        (Err(Error::Truncated { at: 9, .. }), Err(false)) => {}
        (ours, theirs) => panic!("varint {data:02x?}: ours {ours:?}, reference {theirs:?}"),
    }
    // varlong (i64)
    match (read_varlong(data, 9), reference(data, 10, 64)) {
        (Ok((v, n)), Ok((u, m))) => {
            assert_eq!((zigzag64(v), n), (u, m));
            let mut enc = Vec::new();
            write_varlong(&mut enc, v);
            assert_eq!(enc.len(), varlong_len(v));
            assert!(enc.len() <= n);
            assert_eq!(read_varlong(&enc, 0), Ok((v, enc.len())));
            if n == enc.len() && (n < 10 || data[9] & 0x7e == 0) {
                assert_eq!(enc, data[..n]);
            }
        }
        (
            Err(Error::InvalidVarint {
                at: 9,
                max_bytes: 10,
            }),
            Err(true),
        ) => {}
        (Err(Error::Truncated { at: 9, .. }), Err(false)) => {}
        (ours, theirs) => panic!("varlong {data:02x?}: ours {ours:?}, reference {theirs:?}"),
    }
    // write -> read for values taken from the input.
    for chunk in data.chunks(8) {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        let v64 = i64::from_be_bytes(b);
        let v32 = v64 as i32;
        assert_eq!(unzigzag32(zigzag32(v32)), v32);
        assert_eq!(unzigzag64(zigzag64(v64)), v64);
        let mut enc = Vec::new();
        write_varint(&mut enc, v32);
        assert_eq!(read_varint(&enc, 0), Ok((v32, varint_len(v32))));
        enc.clear();
        write_varlong(&mut enc, v64);
        assert_eq!(read_varlong(&enc, 0), Ok((v64, varlong_len(v64))));
    }
});
