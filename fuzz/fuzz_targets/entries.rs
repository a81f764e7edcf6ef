//! `read::Entries` over arbitrary bytes: never panics; error positions lie inside the input (or
//! at the compressed section they came from); the partial tail accounts for every byte left;
//! every batch's `records` (1 MiB limit) and `validate_with` agree; a base position moves every
//! position and changes nothing else. See `krecords_fuzz::check_entries`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    krecords_fuzz::check_entries(data);
});
