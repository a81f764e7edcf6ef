//! gzip through Kafka's framing (`compression::decompress`, codec 1): arbitrary bytes never
//! panic and never grow the output past the 1 MiB limit; the limit is exact; compress then
//! decompress is the identity. See `krecords_fuzz::check_decompress`.
#![no_main]

use krecords_codec::Compression;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    krecords_fuzz::check_decompress(Compression::Gzip, data);
});
