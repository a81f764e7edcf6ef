//! `krecords_ship::fuzzing::ship_stream` on arbitrary bytes: the first byte picks the fetch
//! size, the rest is read as `krec ship -` reads standard input (entries, open transactions
//! tracked from them, read_committed fetches planned). Every input ends in records planned or
//! a typed error: never a panic, never an allocation sized from a claimed length.
#![no_main]

use krecords_ship::fuzzing::ship_stream;
use krecords_ship::Error;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [size, bytes @ ..] = data else {
        return;
    };
    match ship_stream(bytes, usize::from(*size) * 64) {
        Ok(_) | Err(Error::Data(_) | Error::Usage(_)) => {}
        Err(e) => panic!("unexpected error kind: {e:?}"),
    }
});
