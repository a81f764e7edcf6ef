//! zstd (`compression::decompress`, codec 4): arbitrary bytes never panic and never grow the
//! output past the 1 MiB limit; the limit is exact; compress then decompress is the identity;
//! and whatever we accept, libzstd's own streaming decoder (the zstd crate) decodes to the same
//! bytes; and decoding into an empty output accepts and refuses exactly what decoding after bytes
//! already there does, with the same output.
#![no_main]

use krecords_codec::Compression;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limit = 1 << 20;
    let mut empty = Vec::new();
    let fresh =
        krecords_codec::compression::decompress(Compression::Zstd, 2, data, limit, 0, &mut empty);
    let mut prefixed = vec![0x5a];
    let appended = krecords_codec::compression::decompress(
        Compression::Zstd,
        2,
        data,
        limit,
        0,
        &mut prefixed,
    );
    // Accepted or refused alike, and the same bytes when accepted. (Where an error is reported
    // may differ: libzstd stops at a different input position depending on the output room.)
    assert_eq!(
        fresh.is_ok(),
        appended.is_ok(),
        "zstd: accepted with bytes before or without, not both: {fresh:?} vs {appended:?}"
    );
    if fresh.is_ok() {
        assert!(
            empty[..] == prefixed[1..],
            "zstd: bytes differ with and without bytes before"
        );
    }
    if let Some(ours) = krecords_fuzz::check_decompress(Compression::Zstd, data) {
        let reference = zstd::stream::decode_all(data).unwrap_or_else(|e| {
            panic!("we decoded {} bytes that libzstd refuses: {e}", ours.len())
        });
        assert!(ours == reference, "zstd: ours and libzstd disagree");
    }
});
