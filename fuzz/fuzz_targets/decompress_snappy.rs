//! snappy through Kafka's framing (`compression::decompress`, codec 2: xerial streams and raw
//! blocks): arbitrary bytes never panic and never grow the output past the 1 MiB limit; the
//! limit is exact; compress then decompress is the identity; and a raw (non-xerial) block
//! decodes exactly as the snap crate decodes it, both ways, whenever its declared length fits
//! the limit.
#![no_main]

use krecords_codec::compression::snappy;
use krecords_codec::Compression;
use krecords_fuzz::LIMIT;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let ours = krecords_fuzz::check_decompress(Compression::Snappy, data);
    if !data.is_empty() && !snappy::is_xerial(data) {
        if let Ok(declared) = snap::raw::decompress_len(data) {
            if declared <= LIMIT {
                let reference = snap::raw::Decoder::new().decompress_vec(data).ok();
                assert_eq!(ours, reference, "raw snappy: ours and snap disagree");
            }
        }
    }
    // A raw block of the input (not xerial-framed) reads back too.
    let raw = snap::raw::Encoder::new()
        .compress_vec(data)
        .expect("snap compress");
    if !snappy::is_xerial(&raw) {
        let mut out = Vec::new();
        krecords_codec::compression::decompress(
            Compression::Snappy,
            2,
            &raw,
            data.len(),
            0,
            &mut out,
        )
        .expect("raw snappy block of the input");
        assert!(out == data);
    }
});
