//! Test inputs shared by the codec modules' tests.

#![allow(clippy::arithmetic_side_effects)]

/// `n` pseudo-random (xorshift64), incompressible bytes; the same `seed` gives the same bytes.
pub fn random(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A codec's `decompress(input, limit, at, out)`: appends to `out`, errors name byte `at`.
pub type Decompress = fn(&[u8], usize, usize, &mut Vec<u8>) -> crate::Result<()>;

/// Asserts that `decompress` appends `data` (compressed: `packed`) after what the output holds,
/// and reuses the output's capacity once cleared.
pub fn assert_appends_and_reuses_capacity(decompress: Decompress, packed: &[u8], data: &[u8]) {
    let mut out = b"prefix".to_vec();
    decompress(packed, data.len(), 0, &mut out).unwrap();
    assert_eq!(&out[..6], b"prefix");
    assert_eq!(&out[6..], data);
    let cap = out.capacity();
    out.clear();
    decompress(packed, data.len(), 0, &mut out).unwrap();
    assert_eq!(out.capacity(), cap);
}

/// Asserts that every strict prefix of `packed` fails to decompress with an
/// [`Error::Decompress`](crate::Error::Decompress) at byte `at`.
pub fn assert_every_truncation_fails(decompress: Decompress, packed: &[u8], at: usize) {
    for cut in 0..packed.len() {
        let mut out = Vec::new();
        let err = decompress(&packed[..cut], 1 << 20, at, &mut out).unwrap_err();
        assert!(
            matches!(err, crate::Error::Decompress { at: a, .. } if a == at),
            "cut {cut}: {err}"
        );
    }
}

/// The inputs every codec's round trip covers: nothing, one byte, 1 MiB of [`random`] bytes
/// from `seed` and 1 MiB of the codec's `compressible` text.
pub fn round_trip_inputs(seed: u64, compressible: impl Fn(usize) -> Vec<u8>) -> [Vec<u8>; 4] {
    [
        Vec::new(),
        b"x".to_vec(),
        random(1 << 20, seed),
        compressible(1 << 20),
    ]
}

/// The first `n` bytes of `line(0)`, `line(1)`, ... concatenated: compressible text.
pub fn lines(n: usize, line: impl Fn(u64) -> String) -> Vec<u8> {
    let mut v = Vec::with_capacity(n);
    let mut i = 0u64;
    while v.len() < n {
        v.extend_from_slice(line(i).as_bytes());
        i += 1;
    }
    v.truncate(n);
    v
}

/// Asserts that a bounded decompression gave up without holding on to much memory: `out` has
/// at most two limits of capacity (plus the two bytes growth may round to).
#[allow(clippy::ptr_arg)] // the capacity is what is checked
pub fn assert_capacity_bounded(out: &Vec<u8>, limit: usize) {
    assert!(
        out.capacity() <= 2 * limit + 2,
        "capacity {}",
        out.capacity()
    );
}

/// Asserts that `err` is the [`Error::DecompressLimit`] of `compression` at byte `at` for
/// `limit`, and that the output was left empty and bounded ([`assert_capacity_bounded`]).
#[allow(clippy::ptr_arg)] // the capacity is what is checked
pub fn assert_limit_refused(
    err: crate::Error,
    at: usize,
    compression: crate::Compression,
    limit: usize,
    out: &Vec<u8>,
) {
    assert_eq!(
        err,
        crate::Error::DecompressLimit {
            at,
            compression,
            limit
        }
    );
    assert!(out.is_empty());
    assert_capacity_bounded(out, limit);
}
