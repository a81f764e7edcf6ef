//! `krecords_log::salvage` over an arbitrary segment file, in the log's in-memory storage.
//!
//! Input: the bytes of one segment (`00000000000000000000.log`). Salvaged with a 4 KiB maximum
//! entry size (so memory stays bounded whatever the size fields claim) into a new partition
//! directory.
//!
//! Asserts: no panic; salvage succeeds, and the output, which the writer indexed as it wrote,
//! then passes the log's own full recovery without a byte cut; every output entry is CRC-valid, its bytes are at the position the scan found
//! them in the input, in increasing positions and offsets, but for the ABORT markers the
//! report says salvage wrote for transactions whose own was lost; Kafka's recovery count is the
//! number of leading entries of the input a strict reader accepts before the first loss; the
//! kept, damaged and left-out bytes add up to the input's length.
#![no_main]

use krecords_codec::read::Entries;
use krecords_log::clock::ManualClock;
use krecords_log::salvage::{self, NoSink, SalvageOptions};
use krecords_log::storage::{MemStorage, Storage};
use krecords_log::{Env, Log, LogConfig};
use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let storage = MemStorage::new();
    let env = Env::new(Arc::new(storage.clone()), Arc::new(ManualClock::new(0)));
    storage.create_dir_all(Path::new("/in")).unwrap();
    let seg = PathBuf::from("/in/00000000000000000000.log");
    storage.create(&seg).unwrap().write_at(data, 0).unwrap();
    let config = LogConfig::from_pairs([("segment.index.bytes", "4096")]).unwrap();
    let options = SalvageOptions {
        max_entry_size: 4096,
        max_decompressed_bytes: 1 << 16,
        close_lost_transactions: true,
    };
    let out = Path::new("/out/t-0");
    let report =
        salvage::salvage_files_with(&env, &[seg], Some(out), &config, options, &mut NoSink)
            .expect("salvage of a readable file succeeds");
    let recovered = Log::recover_with(out, env.clone()).expect("the output recovers");
    assert_eq!(recovered.truncated_bytes, 0, "{:?}", recovered.problems);
    // The output's entries, in order.
    let mut names: Vec<String> = storage
        .list_dir(out)
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".log"))
        .collect();
    names.sort();
    // The ABORT markers salvage wrote for transactions whose own was lost.
    let markers: Vec<i64> = report.transactions.iter().filter_map(|t| t.aborted_at).collect();
    let mut kept = Vec::new();
    let mut written = Vec::new();
    for n in names {
        let bytes = storage.file_bytes(&out.join(n)).unwrap();
        for b in Entries::new(&bytes).strict() {
            let b = b.expect("output entries parse");
            assert!(b.is_crc_valid());
            if b.is_control() && b.first_offset().is_some_and(|o| markers.contains(&o)) {
                written.push(b.first_offset().unwrap_or(-1));
                continue;
            }
            kept.push(b.as_bytes().to_vec());
        }
    }
    assert_eq!(written, markers);
    assert_eq!(kept.len() as u64, report.kept_entries);
    // Each kept entry occurs in the input after the previous one.
    let mut from = 0usize;
    for k in &kept {
        let at = data[from..]
            .windows(k.len())
            .position(|w| w == &k[..])
            .expect("a kept entry comes from the input");
        from += at + k.len();
    }
    let left: u64 = report.left_out.iter().map(|l| l.length).sum();
    assert_eq!(report.kept_bytes + report.damaged_bytes() + left, data.len() as u64);
    // Kafka's recovery: the strictly valid prefix.
    let mut prefix = 0u64;
    let mut prev = -1i64;
    for b in Entries::new(data).max_entry_size(4096) {
        let Ok(b) = b else { break };
        let last = b.last_offset();
        let first = b.first_offset().unwrap_or(last);
        if !b.is_crc_valid() || first <= prev || last < first || first < 0 {
            break;
        }
        prev = last;
        prefix += 1;
    }
    assert_eq!(report.kafka_recovery.entries, prefix);
});
