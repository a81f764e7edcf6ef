//! zstd (`compression::decompress`, codec 4): arbitrary bytes never panic and never grow the
//! output past the 1 MiB limit; the limit is exact; compress then decompress is the identity;
//! and whatever we accept, libzstd's own streaming decoder (the zstd crate) decodes to the same
//! bytes.
#![no_main]

use krecords_codec::Compression;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(ours) = krecords_fuzz::check_decompress(Compression::Zstd, data) {
        let reference = zstd::stream::decode_all(data).unwrap_or_else(|e| {
            panic!("we decoded {} bytes that libzstd refuses: {e}", ours.len())
        });
        assert!(ours == reference, "zstd: ours and libzstd disagree");
    }
});
