//! Transaction index reader: `transaction::parse_txn_index` on arbitrary bytes never panics,
//! accepts exactly inputs whose length is a multiple of 34 with every entry at version 0, and
//! on success re-serialising each entry with `AbortedTxn::to_bytes` reproduces the input byte
//! for byte.
#![no_main]

use krecords_log::transaction::{parse_txn_index, AbortedTxn, ABORTED_TXN_SIZE};
use krecords_log::Error;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("/logs/t-0/00000000000000000000.txnindex");
    let versions_ok = data
        .chunks_exact(ABORTED_TXN_SIZE)
        .all(|c| c[0] == 0 && c[1] == 0);
    match parse_txn_index(path, data) {
        Ok(entries) => {
            assert_eq!(data.len() % ABORTED_TXN_SIZE, 0);
            assert!(versions_ok);
            assert_eq!(entries.len(), data.len() / ABORTED_TXN_SIZE);
            let mut back = Vec::with_capacity(data.len());
            for (e, chunk) in entries.iter().zip(data.chunks_exact(ABORTED_TXN_SIZE)) {
                back.extend_from_slice(&e.to_bytes());
                assert_eq!(AbortedTxn::parse(chunk), Ok(Some(*e)));
            }
            assert_eq!(back, data, "re-serialised entries differ from the input");
        }
        Err(e) => {
            assert!(
                data.len() % ABORTED_TXN_SIZE != 0 || !versions_ok,
                "refused a well-formed index: {e}"
            );
            assert!(matches!(e, Error::CorruptFile { .. }), "{e:?}");
            let _ = e.to_string();
        }
    }
});
