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
