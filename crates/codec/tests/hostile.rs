//! Hostile inputs against a counting allocator: every test states a bound on the peak number of
//! bytes allocated while the hostile bytes are parsed, iterated and validated, and asserts it.
//!
//! This file is its own test target (`cargo test -p krecords-codec --test hostile`) because it
//! installs a `#[global_allocator]`: a counting wrapper around the system allocator that keeps
//! the bytes currently allocated and their high-water mark. Tests take one lock for their whole
//! run, so no other test allocates while one measures. A reallocation is counted as holding the
//! old and the new block at once (an upper bound of what `realloc` really needs).
//!
//! libzstd allocates its context and window buffers with C `malloc`, which no Rust allocator
//! sees. The zstd tests measure that separately through glibc's `mallinfo2` (Linux, glibc only):
//! the context is kept per thread, so what it retains after a call is what it grew to.
//!
//! Bounds, named after what they allow:
//! - [`PARSE_BOUND`]: parsing uncompressed bytes allocates nothing sized from the input; only
//!   error messages.
//! - [`bomb_bound`]: decompressing with limit [`LIMIT`] holds one output buffer of at most the
//!   limit plus one byte, the codec's state, and nothing that grows with a length the input
//!   claims: 4 MiB plus twice the input.
//! - [`ZSTD_C_HEAP_BOUND`]: libzstd's own buffers with limit [`LIMIT`]: its window is capped at
//!   2^23 bytes (`window_log_max`'s floor), plus the context and block buffers.
//!
//! The last section holds regression tests for bugs the fuzz targets (`fuzz/`) found, each named
//! after the bug.
#![allow(unsafe_code)] // the counting allocator and the mallinfo2 call
#![allow(clippy::little_endian_bytes)] // gzip, lz4 and zstd fields are little-endian

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering::SeqCst};
use std::sync::{Mutex, MutexGuard};

use krecords_codec::compression::{self, snappy};
use krecords_codec::crc::{crc32, crc32c};
use krecords_codec::read::{Batch, Entries, Record};
use krecords_codec::varint::write_varint;
use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, Error};

// ------------------------------------------------------------------------------ the allocator

/// Counts the bytes allocated through the global allocator and their high-water mark.
struct Counting;

static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    /// Above zero on the thread being measured: allocations of other threads (the test harness
    /// printing results while a test runs) are not the code's under test and are not counted.
    static MEASURED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

fn measured() -> bool {
    MEASURED.try_with(|m| m.get() > 0).unwrap_or(false)
}

/// Counts this thread's allocations while `f` runs (nestable).
fn measuring<T>(f: impl FnOnce() -> T) -> T {
    MEASURED.with(|m| m.set(m.get() + 1));
    let r = f();
    MEASURED.with(|m| m.set(m.get() - 1));
    r
}

fn grow(n: usize) {
    if measured() {
        let n = n as isize;
        let now = CURRENT.fetch_add(n, SeqCst) + n;
        PEAK.fetch_max(now, SeqCst);
    }
}

fn shrink(n: usize) {
    if measured() {
        CURRENT.fetch_sub(n as isize, SeqCst);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the counters
// are only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        shrink(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as old and new at once, then the old released.
        grow(new_size);
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            shrink(new_size);
        } else {
            shrink(layout.size());
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

static SERIAL: Mutex<()> = Mutex::new(());

/// Taken by every test for its whole run, so that measurements see only their own allocations.
fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `f` and returns its result with the peak bytes allocated above the level at the start.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    measuring(|| {
        let base = CURRENT.load(SeqCst);
        PEAK.store(base, SeqCst);
        let r = f();
        (r, (PEAK.load(SeqCst) - base).max(0) as usize)
    })
}

/// Bytes in use in the C heap (glibc: small blocks plus mmapped ones), Rust's included.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn c_heap_in_use() -> Option<usize> {
    #[repr(C)]
    struct Mallinfo2 {
        arena: usize,
        ordblks: usize,
        smblks: usize,
        hblks: usize,
        hblkhd: usize,
        usmblks: usize,
        fsmblks: usize,
        uordblks: usize,
        fordblks: usize,
        keepcost: usize,
    }
    extern "C" {
        fn mallinfo2() -> Mallinfo2;
    }
    // SAFETY: mallinfo2 takes no arguments and returns a plain struct (glibc >= 2.33).
    let m = unsafe { mallinfo2() };
    Some(m.uordblks + m.hblkhd)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn c_heap_in_use() -> Option<usize> {
    None
}

// ------------------------------------------------------------------------------ bounds

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// The decompression limit every test passes.
const LIMIT: usize = MIB;

/// Parsing uncompressed hostile bytes: nothing sized from a claimed length or count, only error
/// messages (a few hundred bytes).
const PARSE_BOUND: usize = 4 * KIB;

/// Decompressing hostile bytes with [`LIMIT`]: 4 MiB plus twice the input.
fn bomb_bound(input: usize) -> usize {
    4 * MIB + 2 * input
}

/// libzstd's C heap with [`LIMIT`]: a window of at most 2^23 bytes, plus 1 MiB for the context,
/// its input buffer and block scratch.
const ZSTD_C_HEAP_BOUND: usize = (8 << 20) + MIB;

fn assert_within(what: &str, peak: usize, bound: usize, bound_name: &str) {
    eprintln!("{what}: peak {peak} bytes (bound {bound_name} = {bound})");
    assert!(
        peak <= bound,
        "{what}: peak allocation {peak} bytes exceeds {bound_name} = {bound}"
    );
}

/// [`assert_within`] the fixed bound of a parse that sizes nothing from the input.
fn assert_parse_bounded(what: &str, peak: usize) {
    assert_within(what, peak, PARSE_BOUND, "PARSE_BOUND");
}

/// [`assert_within`] the bound of a decompression of `input_len` compressed bytes.
fn assert_bomb_bounded(what: &str, peak: usize, input_len: usize) {
    assert_within(what, peak, bomb_bound(input_len), "bomb_bound");
}

// ------------------------------------------------------------------------------ input builders

/// Two minimal v2 records (offset deltas 0 and 1), uncompressed.
fn two_records() -> Vec<u8> {
    [
        v2_record(&[0, 0, 0, 1, 1, 0]),
        v2_record(&[0, 0, 2, 1, 1, 0]),
    ]
    .concat()
}

/// A v2 batch around `records` (already compressed if `attributes` says so), CRC-32C valid.
fn v2_batch(attributes: i16, last_offset_delta: i32, count: i32, records: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(61 + records.len());
    b.extend_from_slice(&0i64.to_be_bytes()); // base offset
    b.extend_from_slice(&((49 + records.len()) as i32).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes()); // partition leader epoch
    b.push(2);
    b.extend_from_slice(&[0; 4]); // crc
    b.extend_from_slice(&attributes.to_be_bytes());
    b.extend_from_slice(&last_offset_delta.to_be_bytes());
    b.extend_from_slice(&1_714_000_000_000i64.to_be_bytes());
    b.extend_from_slice(&1_714_000_000_000i64.to_be_bytes());
    b.extend_from_slice(&(-1i64).to_be_bytes());
    b.extend_from_slice(&(-1i16).to_be_bytes());
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b.extend_from_slice(&count.to_be_bytes());
    b.extend_from_slice(records);
    let crc = crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// A v2 record body from raw field bytes: length varint, then `fields` as given.
fn v2_record(fields: &[u8]) -> Vec<u8> {
    let mut r = Vec::new();
    write_varint(&mut r, fields.len() as i32);
    r.extend_from_slice(fields);
    r
}

/// A v0/v1 message with its 12-byte prefix: `after_attributes` is everything after the
/// attributes byte (timestamp for v1, key and value with their lengths), taken as given.
fn legacy_raw(offset: i64, magic: u8, attributes: u8, after_attributes: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(18 + after_attributes.len());
    m.extend_from_slice(&offset.to_be_bytes());
    m.extend_from_slice(&((6 + after_attributes.len()) as i32).to_be_bytes());
    m.extend_from_slice(&[0; 4]);
    m.push(magic);
    m.push(attributes);
    m.extend_from_slice(after_attributes);
    let crc = crc32(&m[16..]);
    m[12..16].copy_from_slice(&crc.to_be_bytes());
    m
}

/// A v0/v1 message with a null key and the given value.
fn legacy_message(offset: i64, magic: u8, attributes: u8, value: &[u8]) -> Vec<u8> {
    let mut rest = Vec::new();
    if magic == 1 {
        rest.extend_from_slice(&1_714_000_000_000i64.to_be_bytes());
    }
    rest.extend_from_slice(&(-1i32).to_be_bytes());
    rest.extend_from_slice(&(value.len() as i32).to_be_bytes());
    rest.extend_from_slice(value);
    legacy_raw(offset, magic, attributes, &rest)
}

fn compress(codec: Compression, magic: u8, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    compression::compress(codec, None, magic, data, &mut out).unwrap();
    out
}

/// What reading every entry of `bytes` gave: per entry, the records count or the first error
/// of `records` + iteration, and the outcome of `validate_with`; then the entries error, if any.
#[derive(Debug)]
struct Outcome {
    entries: Vec<(Result<usize, Error>, Result<(), Error>)>,
    error: Option<Error>,
    partial: Option<krecords_codec::read::Partial>,
}

/// Reads everything there is to read in `bytes` with decompression limit [`LIMIT`], with the
/// scratch buffers dropped in between as a streaming reader would.
fn read_all(bytes: &[u8]) -> Outcome {
    let mut entries = Entries::new(bytes);
    let mut out = Outcome {
        entries: Vec::new(),
        error: None,
        partial: None,
    };
    loop {
        match entries.next_entry() {
            Ok(Some(batch)) => {
                let records = {
                    let mut scratch = Vec::new();
                    let r = count_records(&batch, &mut scratch);
                    assert!(
                        scratch.capacity() <= LIMIT + 1,
                        "scratch grew to {}",
                        scratch.capacity()
                    );
                    r
                };
                let validate = batch.validate_with(&mut Vec::new(), LIMIT);
                out.entries.push((records, validate));
            }
            Ok(None) => break,
            Err(e) => {
                out.error = Some(e);
                break;
            }
        }
    }
    out.partial = entries.partial();
    out
}

fn count_records(batch: &Batch<'_>, scratch: &mut Vec<u8>) -> Result<usize, Error> {
    let mut n = 0;
    for r in batch.records(scratch, LIMIT)? {
        let r: Record<'_> = r?;
        // Walk the headers the way a consumer would.
        let _ = r.headers().count();
        n += 1;
    }
    Ok(n)
}

fn only_entry(o: &Outcome) -> &(Result<usize, Error>, Result<(), Error>) {
    assert!(o.error.is_none() && o.partial.is_none(), "{o:?}");
    assert_eq!(o.entries.len(), 1, "{o:?}");
    &o.entries[0]
}

// ------------------------------------------------------------------------------ huge counts

/// The 75-byte batch that makes some peers abort: a valid header claiming i32::MAX records over
/// 14 bytes of records.
#[test]
fn v2_batch_claiming_i32_max_records_in_75_bytes() {
    let _s = serial();
    let records = two_records();
    let bytes = v2_batch(0, i32::MAX, i32::MAX, &records);
    assert_eq!(bytes.len(), 75);
    let (o, peak) = peak_of(|| read_all(&bytes));
    let (records, validate) = only_entry(&o);
    assert!(
        matches!(
            records,
            Err(Error::RecordCountMismatch {
                declared: 2147483647,
                ..
            })
        ),
        "{o:?}"
    );
    assert!(validate.is_err());
    assert_parse_bounded("v2 count i32::MAX in 75 bytes", peak);
}

/// `Batch::owned_records` on the same 75 bytes: the claimed count sizes nothing either.
#[test]
fn owned_records_of_a_batch_claiming_i32_max_records() {
    let _s = serial();
    let records = two_records();
    let input = bytes::Bytes::from(v2_batch(0, i32::MAX, i32::MAX, &records));
    let batch = Entries::new(&input).next().unwrap().unwrap();
    let (r, peak) = peak_of(|| batch.owned_records(&input, LIMIT).map(|v| v.len()));
    assert!(r.is_err(), "{r:?}");
    assert_parse_bounded("owned_records, count i32::MAX in 75 bytes", peak);
}

/// The same claim over a gzip-compressed records section: the count is checked against the
/// decompressed bytes before anything is sized from it.
#[test]
fn v2_gzip_batch_claiming_i32_max_records() {
    let _s = serial();
    let records = two_records();
    let bytes = v2_batch(
        1,
        i32::MAX,
        i32::MAX,
        &compress(Compression::Gzip, 2, &records),
    );
    let (o, peak) = peak_of(|| read_all(&bytes));
    let (records, validate) = only_entry(&o);
    assert!(
        matches!(records, Err(Error::RecordCountMismatch { .. })),
        "{o:?}"
    );
    assert!(validate.is_err());
    assert_bomb_bounded("v2 gzip count i32::MAX", peak, bytes.len());
}

/// A negative count (-1 is what a careless writer leaves) is refused before any use.
#[test]
fn v2_batch_with_negative_count() {
    let _s = serial();
    let bytes = v2_batch(0, 0, i32::MIN, &v2_record(&[0, 0, 0, 1, 1, 0]));
    let (o, peak) = peak_of(|| read_all(&bytes));
    assert!(
        matches!(only_entry(&o).0, Err(Error::InvalidLength { .. })),
        "{o:?}"
    );
    assert_parse_bounded("v2 count i32::MIN", peak);
}

// ------------------------------------------------------------------------------ huge lengths

/// zigzag varint of i32::MAX: fe ff ff ff 0f.
const VARINT_I32_MAX: [u8; 5] = [0xfe, 0xff, 0xff, 0xff, 0x0f];

fn v2_one_record(fields: &[u8]) -> Vec<u8> {
    v2_batch(0, 0, 1, &v2_record(fields))
}

/// Reads `bytes`, one v2 batch, within [`PARSE_BOUND`] (reported as `what`): its records are
/// refused as truncated, short of `i32::MAX` bytes where `needs_i32_max`. Returns whether the
/// batch's `validate` refused it too.
fn assert_truncated(what: &str, bytes: &[u8], needs_i32_max: bool) -> bool {
    let (o, peak) = peak_of(|| read_all(bytes));
    let (records, validate) = only_entry(&o);
    match records {
        Err(Error::Truncated { needed, .. }) => {
            assert!(!needs_i32_max || *needed == 2147483647, "{what}: {o:?}")
        }
        _ => panic!("{what}: {o:?}"),
    }
    assert_parse_bounded(what, peak);
    validate.is_err()
}

#[test]
fn v2_record_key_length_i32_max() {
    let _s = serial();
    let mut fields = vec![0, 0, 0]; // attributes, timestamp delta, offset delta
    fields.extend_from_slice(&VARINT_I32_MAX);
    fields.extend_from_slice(b"only a few bytes follow");
    let refused = assert_truncated("v2 key length i32::MAX", &v2_one_record(&fields), true);
    assert!(refused, "validate refuses it too");
}

#[test]
fn v2_record_value_length_i32_max() {
    let _s = serial();
    let mut fields = vec![0, 0, 0, 1]; // attributes, deltas, null key
    fields.extend_from_slice(&VARINT_I32_MAX);
    fields.extend_from_slice(&[0; 20]);
    assert_truncated("v2 value length i32::MAX", &v2_one_record(&fields), true);
}

#[test]
fn v2_record_length_i32_max() {
    let _s = serial();
    let mut section = VARINT_I32_MAX.to_vec();
    section.extend_from_slice(&[0; 20]);
    assert_truncated(
        "v2 record length i32::MAX",
        &v2_batch(0, 0, 1, &section),
        false,
    );
}

/// A header count of i32::MAX: the loop stops at the first header that is not there, and the
/// count never sizes an allocation.
#[test]
fn v2_header_count_i32_max() {
    let _s = serial();
    let mut fields = vec![0, 0, 0, 1, 1]; // attributes, deltas, null key, null value
    fields.extend_from_slice(&VARINT_I32_MAX);
    for _ in 0..100 {
        fields.extend_from_slice(&[2, b'k', 1]); // key "k", null value
    }
    assert_truncated("v2 header count i32::MAX", &v2_one_record(&fields), false);
}

/// Header key and value lengths of i32::MAX.
#[test]
fn v2_header_lengths_i32_max() {
    let _s = serial();
    for value_too in [false, true] {
        let mut fields = vec![0, 0, 0, 1, 1, 2]; // one header
        if value_too {
            fields.extend_from_slice(&[2, b'k']);
        }
        fields.extend_from_slice(&VARINT_I32_MAX);
        fields.extend_from_slice(&[0; 10]);
        assert_truncated("v2 header length i32::MAX", &v2_one_record(&fields), true);
    }
}

/// The fields of a v2 record after its length: null key and value, `headers` real headers with
/// an empty key and a null value (2 bytes each).
fn empty_headers(headers: i32) -> Vec<u8> {
    let mut fields = vec![0, 0, 0, 1, 1];
    write_varint(&mut fields, headers);
    for _ in 0..headers {
        fields.extend_from_slice(&[0, 1]); // empty key, null value
    }
    fields
}

/// `Batch::owned_records` of a record with 200,000 empty headers: memory grows with the
/// headers present (each took at least 2 input bytes), never with a length the input claims:
/// an `OwnedHeader` (two `Bytes`, 64 bytes) and its location while the batch is read (80
/// bytes) per header, both held at the peak: 144 bytes per 2 input bytes, 72 times the input
/// (measured: 28.8 MB for 400 kB), bounded here at 80 times.
#[test]
fn owned_records_of_200k_empty_headers_cost_linear_in_the_input() {
    let _s = serial();
    let headers = 200_000;
    let input = bytes::Bytes::from(v2_one_record(&empty_headers(headers)));
    let batch = Entries::new(&input).next().unwrap().unwrap();
    let (owned, peak) = peak_of(|| batch.owned_records(&input, LIMIT).unwrap());
    assert_eq!(owned[0].headers.len(), headers as usize);
    assert_within(
        "owned_records, 200k empty headers",
        peak,
        80 * input.len() + PARSE_BOUND,
        "80 x input + PARSE_BOUND",
    );
}

/// Many real, empty headers: iterating allocates nothing; collecting them with `header_vec`
/// allocates one `Header` (32 bytes) per header, each of which took at least 2 input bytes, so
/// at most 16 times the record.
#[test]
fn v2_many_empty_headers_cost_at_most_16_times_the_input() {
    let _s = serial();
    let headers = 200_000;
    let bytes = v2_one_record(&empty_headers(headers));
    let (o, peak) = peak_of(|| read_all(&bytes));
    assert!(matches!(only_entry(&o), (Ok(1), Ok(()))), "{o:?}");
    assert_parse_bounded("v2 200k empty headers, iterated", peak);
    let batch = Entries::new(&bytes).next().unwrap().unwrap();
    let (n, peak) = peak_of(|| {
        let mut scratch = Vec::new();
        let mut records = batch.records(&mut scratch, LIMIT).unwrap();
        records.next().unwrap().unwrap().header_vec().len()
    });
    assert_eq!(n, headers as usize);
    assert_within(
        "v2 200k empty headers, header_vec",
        peak,
        16 * bytes.len() + PARSE_BOUND,
        "16 x input + PARSE_BOUND",
    );
}

#[test]
fn legacy_key_and_value_length_i32_max() {
    let _s = serial();
    for magic in [0u8, 1] {
        for field in 0..2 {
            let mut rest = Vec::new();
            if magic == 1 {
                rest.extend_from_slice(&0i64.to_be_bytes());
            }
            if field == 1 {
                rest.extend_from_slice(&(-1i32).to_be_bytes()); // null key
            }
            rest.extend_from_slice(&i32::MAX.to_be_bytes());
            rest.extend_from_slice(&[0; 16]);
            let bytes = legacy_raw(0, magic, 0, &rest);
            let (o, peak) = peak_of(|| read_all(&bytes));
            assert!(
                matches!(
                    o.error,
                    Some(Error::Truncated {
                        needed: 2147483647,
                        ..
                    })
                ),
                "{o:?}"
            );
            assert_parse_bounded(
                &format!("v{magic} {} length i32::MAX", ["key", "value"][field]),
                peak,
            );
        }
    }
}

/// An entry whose size field says i32::MAX, with a few bytes behind it: a partial tail, not an
/// allocation of 2 GiB and not an error.
#[test]
fn entry_size_i32_max_with_few_bytes() {
    let _s = serial();
    for magic in 0..=2u8 {
        let mut bytes = vec![0; 8];
        bytes.extend_from_slice(&i32::MAX.to_be_bytes());
        bytes.extend_from_slice(&[0, 0, 0, 0, magic, 0, 0, 0, 0, 0]);
        let (o, peak) = peak_of(|| read_all(&bytes));
        assert!(o.entries.is_empty() && o.error.is_none(), "{o:?}");
        let p = o.partial.expect("partial");
        assert_eq!(
            (p.position, p.bytes, p.declared_size),
            (0, bytes.len(), Some(i32::MAX as usize + 12))
        );
        assert_parse_bounded(&format!("magic {magic} entry size i32::MAX"), peak);
    }
}

// ------------------------------------------------------------------------------ bombs

/// Runs a decompression bomb through `Batch::records` and `validate_with` with [`LIMIT`]: both
/// must fail (limit or corruption), within [`bomb_bound`].
fn assert_bomb(what: &str, bytes: &[u8]) -> Error {
    let (o, peak) = peak_of(|| read_all(bytes));
    let (records, validate) = only_entry(&o);
    let err = records.clone().expect_err(what);
    assert!(
        matches!(
            err,
            Error::DecompressLimit { limit: LIMIT, .. } | Error::Decompress { .. }
        ),
        "{what}: {err:?}"
    );
    assert!(validate.is_err(), "{what}");
    assert_bomb_bounded(what, peak, bytes.len());
    err
}

/// A v2 batch with one claimed record whose records section is `payload`, compressed by `codec`.
fn v2_bomb(codec: Compression, payload: &[u8]) -> Vec<u8> {
    v2_batch(i16::from(codec.id()), 0, 1, payload)
}

/// `count` copies of a gzip member of `member_mib` MiB of zeros, concatenated.
fn gzip_zeros(member_mib: usize, count: usize) -> Vec<u8> {
    let member = compress(Compression::Gzip, 2, &vec![0; member_mib * MIB]);
    member.repeat(count)
}

#[test]
fn gzip_bomb_of_zeros() {
    let _s = serial();
    // One member: 4 MiB of zeros in about 4 KiB.
    let one = gzip_zeros(4, 1);
    assert!(one.len() < 8 * KIB, "{}", one.len());
    let err = assert_bomb(
        "gzip 4 MiB of zeros in one member",
        &v2_bomb(Compression::Gzip, &one),
    );
    assert!(matches!(err, Error::DecompressLimit { .. }));
    // 256 concatenated members: 1 GiB of zeros in about 1 MiB.
    let many = gzip_zeros(4, 256);
    assert_bomb(
        "gzip 1 GiB of zeros in 256 members",
        &v2_bomb(Compression::Gzip, &many),
    );
    // The same in a v1 and a v0 wrapper.
    for magic in [0, 1] {
        let wrapper = legacy_message(0, magic, 1, &one);
        assert_bomb(&format!("gzip bomb in a v{magic} wrapper"), &wrapper);
    }
}

#[test]
fn snappy_raw_preamble_claiming_4_gib() {
    let _s = serial();
    let mut block = vec![0xff, 0xff, 0xff, 0xff, 0x0f];
    block.extend_from_slice(&[0; 64]);
    let err = assert_bomb(
        "snappy raw preamble claiming 4 GiB",
        &v2_bomb(Compression::Snappy, &block),
    );
    assert!(matches!(err, Error::Decompress { .. }));
    // A truthful preamble of 2 MiB (a real block of zeros, ~100 KiB): the limit, up front.
    let zeros = vec![0; 2 * MIB];
    let mut raw = vec![0; snap::raw::max_compress_len(zeros.len())];
    let n = snap::raw::Encoder::new()
        .compress(&zeros, &mut raw)
        .unwrap();
    raw.truncate(n);
    let err = assert_bomb(
        "snappy raw block of 2 MiB of zeros",
        &v2_bomb(Compression::Snappy, &raw),
    );
    assert!(matches!(err, Error::DecompressLimit { .. }));
}

#[test]
fn snappy_xerial_chunk_claiming_2_gib() {
    let _s = serial();
    let mut stream = snappy::XERIAL_HEADER.to_vec();
    stream.extend_from_slice(&0x7fff_ffffu32.to_be_bytes());
    stream.extend_from_slice(&[0; 4096]);
    let err = assert_bomb(
        "xerial chunk claiming 2 GiB",
        &v2_bomb(Compression::Snappy, &stream),
    );
    assert!(matches!(err, Error::Decompress { .. }));
    // A chunk whose raw preamble claims 2 GiB inside a well-formed chunk length.
    let mut stream = snappy::XERIAL_HEADER.to_vec();
    let block = [0x80, 0x80, 0x80, 0x80, 0x08, 0, 0, 0];
    stream.extend_from_slice(&(block.len() as u32).to_be_bytes());
    stream.extend_from_slice(&block);
    assert_bomb(
        "xerial chunk preamble claiming 2 GiB",
        &v2_bomb(Compression::Snappy, &stream),
    );
}

#[test]
fn snappy_xerial_stream_of_zero_chunks() {
    let _s = serial();
    let chunk = {
        let zeros = vec![0; snappy::BLOCK_SIZE];
        snap::raw::Encoder::new().compress_vec(&zeros).unwrap()
    };
    let mut stream = snappy::XERIAL_HEADER.to_vec();
    for _ in 0..256 {
        stream.extend_from_slice(&(chunk.len() as u32).to_be_bytes());
        stream.extend_from_slice(&chunk);
    }
    let err = assert_bomb(
        "xerial 256 chunks of 32 KiB zeros (8 MiB)",
        &v2_bomb(Compression::Snappy, &stream),
    );
    assert!(matches!(err, Error::DecompressLimit { .. }));
    let wrapper = legacy_message(0, 1, 2, &stream);
    assert_bomb("xerial zero chunks in a v1 wrapper", &wrapper);
}

/// An LZ4 frame (Kafka's: FLG 0x60) with block size id `bd >> 4`, blocks given as (word, bytes).
fn lz4_frame(magic: u8, bd: u8, blocks: &[(u32, &[u8])]) -> Vec<u8> {
    let mut f = vec![0x04, 0x22, 0x4d, 0x18, 0x60, bd];
    f.push(compression::lz4::header_checksum(&f, magic));
    for (word, bytes) in blocks {
        f.extend_from_slice(&word.to_le_bytes());
        f.extend_from_slice(bytes);
    }
    f.extend_from_slice(&[0; 4]);
    f
}

#[test]
fn lz4_bombs() {
    let _s = serial();
    // 4096 blocks of 64 KiB zeros: 256 MiB in about 1 MiB.
    let block = lz4_flex::block::compress(&vec![0u8; 64 * KIB]);
    let blocks: Vec<(u32, &[u8])> = (0..4096)
        .map(|_| (block.len() as u32, &block[..]))
        .collect();
    let frame = lz4_frame(2, 0x40, &blocks);
    let err = assert_bomb(
        "lz4 4096 blocks of 64 KiB zeros",
        &v2_bomb(Compression::Lz4, &frame),
    );
    assert!(matches!(err, Error::DecompressLimit { .. }));
    // Block size id 7 (4 MiB blocks): 16 blocks of 4 MiB zeros, 64 MiB in about 256 KiB.
    let big = lz4_flex::block::compress(&vec![0u8; 4 * MIB]);
    let blocks: Vec<(u32, &[u8])> = (0..16).map(|_| (big.len() as u32, &big[..])).collect();
    let frame = lz4_frame(2, 0x70, &blocks);
    assert_bomb(
        "lz4 16 blocks of 4 MiB zeros",
        &v2_bomb(Compression::Lz4, &frame),
    );
    // A block claiming 2 GiB - 1.
    let frame = lz4_frame(2, 0x70, &[(0x7fff_ffff, &[0; 64])]);
    let err = assert_bomb(
        "lz4 block claiming 2 GiB",
        &v2_bomb(Compression::Lz4, &frame),
    );
    assert!(matches!(err, Error::Decompress { .. }));
    // A stored block claiming 4 MiB with 64 bytes behind it.
    let frame = lz4_frame(2, 0x70, &[(0x8040_0000, &[0; 64])]);
    assert_bomb(
        "lz4 stored block claiming 4 MiB",
        &v2_bomb(Compression::Lz4, &frame),
    );
    // In a v0 wrapper (Kafka's broken v0 header checksum).
    let frame = lz4_frame(0, 0x40, &blocks_of(&block, 64));
    assert_bomb("lz4 bomb in a v0 wrapper", &legacy_message(0, 0, 3, &frame));
}

fn blocks_of(block: &[u8], n: usize) -> Vec<(u32, &[u8])> {
    (0..n).map(|_| (block.len() as u32, block)).collect()
}

/// A zstd frame with no content size, window `2^(10 + exponent)`, and `blocks` RLE blocks of
/// `block_size` bytes each (RLE blocks are 4 bytes whatever their size).
fn zstd_rle_frame(window_exponent: u8, blocks: usize, block_size: u32) -> Vec<u8> {
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, window_exponent << 3];
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        let header = last | 1 << 1 | block_size << 3; // RLE
        f.extend_from_slice(&header.to_le_bytes()[..3]);
        f.push(0);
    }
    f
}

/// Runs `f` and reports how much the C heap grew outside the Rust allocator (libzstd).
fn c_heap_growth<T>(f: impl FnOnce() -> T) -> (T, Option<usize>) {
    measuring(|| c_heap_growth_measured(f))
}

fn c_heap_growth_measured<T>(f: impl FnOnce() -> T) -> (T, Option<usize>) {
    let rust_before = CURRENT.load(SeqCst);
    let before = c_heap_in_use();
    let r = f();
    let rust_after = CURRENT.load(SeqCst);
    let growth = c_heap_in_use()
        .zip(before)
        .map(|(after, before)| (after as isize - before as isize) - (rust_after - rust_before))
        .map(|g| g.max(0) as usize);
    (r, growth)
}

#[test]
fn zstd_bombs() {
    let _s = serial();
    // Each case runs on a fresh thread so it starts without a zstd context and the context it
    // leaves behind (its high-water mark) is measured.
    let run = |what: &'static str, payload: Vec<u8>| {
        std::thread::scope(|s| {
            s.spawn(move || {
                let bytes = v2_bomb(Compression::Zstd, &payload);
                let (err, c_heap) = c_heap_growth(|| assert_bomb(what, &bytes));
                if let Some(c) = c_heap {
                    eprintln!("{what}: libzstd C heap {c} bytes (bound ZSTD_C_HEAP_BOUND = {ZSTD_C_HEAP_BOUND})");
                    assert!(c <= ZSTD_C_HEAP_BOUND, "{what}: libzstd holds {c} bytes");
                }
                err
            })
            .join()
            .unwrap()
        })
    };
    // The frame header claiming 8 GiB (franz-go's vector): refused before decoding.
    let err = run(
        "zstd header claiming 8 GiB",
        hex::decode("28b52ffdc0000000000002000000").unwrap(),
    );
    assert!(matches!(err, Error::DecompressLimit { .. }));
    // 8192 RLE blocks of 128 KiB: 1 GiB in 32 KiB.
    let err = run(
        "zstd 1 GiB of RLE blocks in 32 KiB",
        zstd_rle_frame(7, 8192, 128 << 10),
    );
    assert!(matches!(err, Error::DecompressLimit { .. }));
    // A window of 2 GiB claimed in the header: libzstd refuses the window, so nothing that size
    // is allocated.
    let err = run(
        "zstd frame claiming a 2 GiB window",
        zstd_rle_frame(21, 4, 128 << 10),
    );
    assert!(matches!(
        err,
        Error::DecompressLimit { .. } | Error::Decompress { .. }
    ));
    // A window of 8 MiB (the floor of window_log_max): allowed, even with a 1 MiB limit.
    run(
        "zstd frame with an 8 MiB window",
        zstd_rle_frame(13, 64, 128 << 10),
    );
    // Real zstd: 8 MiB of zeros in one frame, repeated 128 times (1 GiB).
    let frame = compress(Compression::Zstd, 2, &vec![0; 8 * MIB]);
    assert!(frame.len() < 4 * KIB, "{}", frame.len());
    run("zstd 128 frames of 8 MiB zeros", frame.repeat(128));
}

// ------------------------------------------------------------------------------ nesting

/// Kafka refuses nested compression; the inner wrapper (itself a gzip bomb) is never opened.
#[test]
fn wrapper_inside_a_wrapper_is_refused() {
    let _s = serial();
    for magic in [0, 1] {
        let bomb = gzip_zeros(4, 8);
        let inner = legacy_message(0, magic, 1, &bomb);
        let outer = legacy_message(0, magic, 1, &compress(Compression::Gzip, magic, &inner));
        let (o, peak) = peak_of(|| read_all(&outer));
        let (records, validate) = only_entry(&o);
        let Err(Error::InvalidRecord { reason, .. }) = records else {
            panic!("{o:?}")
        };
        assert!(reason.contains("must not be compressed"), "{reason}");
        assert!(validate.is_err());
        // The outer value decompresses to the inner wrapper (~32 KiB); the inner bomb stays shut.
        assert_bomb_bounded(
            &format!("v{magic} gzip wrapper around a gzip bomb wrapper"),
            peak,
            outer.len(),
        );
    }
}

/// As many minimal inner messages as the limit holds (40329 v0 messages of 26 bytes in 1 MiB):
/// iterated without an allocation per message; ten times as many hit the limit.
#[test]
fn deeply_repeated_inner_messages() {
    let _s = serial();
    let one = legacy_message(0, 0, 0, b"");
    assert_eq!(one.len(), 26);
    let fits = LIMIT / one.len();
    let set = one.repeat(fits);
    for codec in [Compression::Gzip, Compression::Snappy, Compression::Lz4] {
        let wrapper = legacy_message(0, 0, codec.id(), &compress(codec, 0, &set));
        let (o, peak) = peak_of(|| read_all(&wrapper));
        assert!(
            matches!(only_entry(&o), (Ok(n), Ok(())) if *n == fits),
            "{codec}: {o:?}"
        );
        assert_bomb_bounded(
            &format!("{codec} wrapper of {fits} inner messages"),
            peak,
            wrapper.len(),
        );
    }
    let too_many = one.repeat(fits * 10);
    let wrapper = legacy_message(0, 0, 1, &compress(Compression::Gzip, 0, &too_many));
    assert_bomb("gzip wrapper of 10x the limit in inner messages", &wrapper);
}

/// A v2 batch of the most records 1 MiB of decompressed bytes can hold (7 bytes each).
#[test]
fn v2_batch_of_minimal_records_up_to_the_limit() {
    let _s = serial();
    let n = LIMIT / 7;
    let mut section = Vec::with_capacity(n * 7);
    for _ in 0..n {
        section.extend_from_slice(&v2_record(&[0, 0, 0, 1, 1, 0]));
    }
    let bytes = v2_batch(
        3,
        n as i32 - 1,
        n as i32,
        &compress(Compression::Lz4, 2, &section),
    );
    let (o, peak) = peak_of(|| read_all(&bytes));
    // Every record has offset delta 0, which validate accepts (a compacted batch keeps
    // deltas); iteration yields them all.
    assert!(matches!(only_entry(&o).0, Ok(m) if m == n), "{o:?}");
    assert_bomb_bounded("lz4 v2 batch of 149796 minimal records", peak, bytes.len());
}

/// An inner message set whose last message claims i32::MAX bytes: a truncated inner tail ends
/// iteration silently, as Kafka's DataLogInputStream does, without sizing anything from it.
#[test]
fn inner_message_claiming_i32_max_bytes() {
    let _s = serial();
    let mut set = legacy_message(5, 1, 0, b"x");
    let mut tail = vec![0; 8];
    tail.extend_from_slice(&i32::MAX.to_be_bytes());
    tail.extend_from_slice(&[0; 40]);
    set.extend_from_slice(&tail);
    let wrapper = legacy_message(5, 1, 1, &compress(Compression::Gzip, 1, &set));
    let (o, peak) = peak_of(|| read_all(&wrapper));
    assert!(matches!(only_entry(&o), (Ok(1), Ok(()))), "{o:?}");
    assert_bomb_bounded("inner message claiming i32::MAX", peak, wrapper.len());
}

// ------------------------------------------------------------------------------ fuzz findings

/// Found by `fuzz/` targets `v2_roundtrip` and `legacy_roundtrip`: `V2Builder::next_offset`
/// and `LegacyBuilder::next_offset` compute `last_offset + 1` with `+`, which overflows when a
/// record was appended at offset i64::MAX. `append` then panics in debug builds ("attempt to add
/// with overflow", write/v2.rs and write/legacy.rs `next_offset`) and in release builds wraps to
/// i64::MIN. Expected: `append` after i64::MAX fails with `Error::Unencodable`, like every other
/// offset the builder cannot write.
#[test]
fn builder_append_after_offset_i64_max_does_not_overflow() {
    let _s = serial();
    let record = NewRecord::new(1_714_000_000_000, None, Some(b"v"));
    let mut v2 = V2Builder::new(i64::MAX);
    assert_eq!(v2.append(&record), Ok(i64::MAX));
    let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| v2.append(&record)));
    assert!(
        matches!(next, Ok(Err(Error::Unencodable { .. }))),
        "V2Builder::append: {next:?}"
    );
    for magic in [0, 1] {
        let mut legacy = LegacyBuilder::new(magic, i64::MAX).unwrap();
        assert_eq!(legacy.append(&record), Ok(i64::MAX));
        let next =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| legacy.append(&record)));
        assert!(
            matches!(next, Ok(Err(Error::Unencodable { .. }))),
            "LegacyBuilder v{magic}::append: {next:?}"
        );
    }
}
