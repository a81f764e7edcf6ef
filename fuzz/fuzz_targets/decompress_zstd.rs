//! zstd (`compression::decompress`, codec 4): arbitrary bytes never panic and never grow the
//! output past the 1 MiB limit; the limit is exact; compress then decompress is the identity;
//! and whatever we accept, libzstd's own streaming decoder (the zstd crate) decodes to the same
//! bytes; and decoding into an empty output agrees with decoding after bytes already there, errors
//! included.
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
    assert_eq!(
        fresh, appended,
        "zstd: results differ with and without bytes before"
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
