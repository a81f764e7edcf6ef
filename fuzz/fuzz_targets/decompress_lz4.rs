//! LZ4 through Kafka's frame (`compression::decompress`, codec 3) for magic 0 (the broken header
//! checksum accepted), 1 and 2: arbitrary bytes never panic and never grow the output past the
//! 1 MiB limit; the limit is exact; compress then decompress is the identity for every magic.
//! The codec's lz4_flex is built without `safe-decode`, so this exercises its unsafe decoder
//! under AddressSanitizer. See `krecords_fuzz::check_decompress`.
#![no_main]

use krecords_codec::Compression;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    krecords_fuzz::check_decompress(Compression::Lz4, data);
});
