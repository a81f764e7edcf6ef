//! Helpers shared by the integration tests.
#![allow(dead_code)]

use krecords_codec::read::{Batch, Entries};
use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, Header, TimestampType};
use krecords_log::clock::ManualClock;
use krecords_log::storage::{MemStorage, Storage};
use krecords_log::{AppendInfo, AppendOrigin, Env, Error, Log, LogConfig};
use std::path::{Path, PathBuf};

pub use krecords_testkit::files::dir_state;
use std::sync::Arc;

/// A fixed "now" for tests: 2024-04-25.
pub const NOW: i64 = 1_714_000_000_000;

pub struct Mem {
    pub env: Env,
    pub storage: MemStorage,
    pub clock: Arc<ManualClock>,
    pub dir: PathBuf,
}

pub fn mem() -> Mem {
    let clock = Arc::new(ManualClock::new(NOW));
    let storage = MemStorage::with_clock(clock.clone());
    let env = Env::new(Arc::new(storage.clone()), clock.clone());
    Mem {
        env,
        storage,
        clock,
        dir: PathBuf::from("/logs/topic-0"),
    }
}

impl Mem {
    pub fn create(&self, pairs: &[(&str, &str)]) -> Log {
        Log::create_with(&self.dir, config(pairs), self.env.clone()).unwrap()
    }

    pub fn open(&self) -> Log {
        Log::open_with(&self.dir, self.env.clone()).unwrap()
    }

    pub fn file(&self, name: &str) -> Option<Vec<u8>> {
        self.storage.file_bytes(&self.dir.join(name))
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The same storage and clock, another log directory.
    pub fn at(&self, dir: &str) -> Mem {
        Mem {
            env: self.env.clone(),
            storage: self.storage.clone(),
            clock: self.clock.clone(),
            dir: PathBuf::from(dir),
        }
    }

    /// Creates a log in another directory of the same storage.
    pub fn create_in(&self, dir: &str, pairs: &[(&str, &str)]) -> Log {
        self.at(dir).create(pairs)
    }

    /// Every file of the log directory with its bytes (to check that nothing changed).
    pub fn snapshot(&self) -> Vec<(String, Vec<u8>)> {
        let mut names = self.storage.list_dir(&self.dir).unwrap();
        names.sort();
        names
            .into_iter()
            .map(|n| {
                let b = self.storage.file_bytes(&self.dir.join(&n)).unwrap();
                (n, b)
            })
            .collect()
    }
}

pub fn config(pairs: &[(&str, &str)]) -> LogConfig {
    LogConfig::from_pairs(pairs.iter().copied()).unwrap()
}

/// One uncompressed v2 batch (base offset 0, as producers send it) of `values`, all at `ts`.
pub fn v2(ts: i64, values: &[&str]) -> Vec<u8> {
    let mut b = V2Builder::new(0);
    for v in values {
        b.append(&NewRecord::new(ts, Some(b"k"), Some(v.as_bytes())))
            .unwrap();
    }
    b.finish().unwrap()
}

/// One uncompressed v2 batch with per-record timestamps.
pub fn v2_ts(records: &[(i64, &str)]) -> Vec<u8> {
    let mut b = V2Builder::new(0);
    for (ts, v) in records {
        b.append(&NewRecord::new(*ts, Some(b"k"), Some(v.as_bytes())))
            .unwrap();
    }
    b.finish().unwrap()
}

/// A v2 batch with headers.
pub fn v2_with_headers(ts: i64, value: &str) -> Vec<u8> {
    let headers = [Header {
        key: b"h",
        value: Some(b"v"),
    }];
    let mut b = V2Builder::new(0);
    b.append(&NewRecord::new(ts, Some(b"k"), Some(value.as_bytes())).with_headers(&headers))
        .unwrap();
    b.finish().unwrap()
}

/// Uncompressed v0/v1 messages of `values` (offsets 0.., as old producers send them).
pub fn legacy(magic: u8, ts: i64, values: &[&str]) -> Vec<u8> {
    let mut b = LegacyBuilder::new(magic, 0).unwrap();
    for v in values {
        b.append(&NewRecord::new(ts, Some(b"k"), Some(v.as_bytes())))
            .unwrap();
    }
    b.finish().unwrap()
}

/// A compressed v2 batch (needs the compression branch).
pub fn v2_compressed(codec: Compression, ts: i64, values: &[&str]) -> Vec<u8> {
    let mut b = V2Builder::new(0).compression(codec, None);
    for v in values {
        b.append(&NewRecord::new(ts, Some(b"k"), Some(v.as_bytes())))
            .unwrap();
    }
    b.finish().unwrap()
}

pub fn append(log: &mut Log, bytes: &[u8]) -> AppendInfo {
    log.append(bytes, AppendOrigin::Client).unwrap()
}

/// Appends `bytes`, expects the Kafka error `name`, and checks that nothing in the directory
/// changed and the log still takes appends.
pub fn rejected(m: &Mem, log: &mut Log, bytes: &[u8], name: &str) -> Error {
    let before = m.snapshot();
    let end = log.log_end_offset();
    let e = log.append(bytes, AppendOrigin::Client).unwrap_err();
    assert_eq!(e.kafka_name(), name, "{e}");
    assert_eq!(
        m.snapshot(),
        before,
        "a rejected append changed the directory"
    );
    assert_eq!(log.log_end_offset(), end);
    assert!(!log.is_poisoned());
    e
}

/// [`rejected`], with an error message that contains `needle`.
pub fn rejected_for(m: &Mem, log: &mut Log, bytes: &[u8], name: &str, needle: &str) {
    let e = rejected(m, log, bytes, name);
    assert!(e.to_string().contains(needle), "{e}");
}

/// `append_all`, expecting the Kafka error `name` for entry `index`; the directory, the log end
/// offset and the producer state must not change.
pub fn rejected_all(m: &Mem, log: &mut Log, entries: &[&[u8]], index: usize, name: &str) -> Error {
    let before = m.snapshot();
    let end = log.log_end_offset();
    let producers = log.producer_states();
    let e = log.append_all(entries, AppendOrigin::Client).unwrap_err();
    assert_eq!(e.kafka_name(), name, "{e}");
    let (i, inner) = e.in_entry().expect("an InEntry error");
    assert_eq!(i, index, "{e}");
    assert_eq!(inner.kafka_name(), name);
    assert!(
        e.to_string().starts_with(&format!("entry {index}: ")),
        "{e}"
    );
    assert_eq!(
        m.snapshot(),
        before,
        "a rejected append_all changed the directory"
    );
    assert_eq!(log.log_end_offset(), end);
    assert_eq!(log.producer_states(), producers);
    assert!(!log.is_poisoned());
    e
}

/// Rewrites the CRC of the v2 batch at the start of `bytes` after a test edited it.
pub fn fix_v2_crc(bytes: &mut [u8]) {
    let crc = krecords_codec::crc::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
}

/// Rewrites the CRC of the v0/v1 message at the start of `bytes`.
pub fn fix_legacy_crc(bytes: &mut [u8]) {
    let crc = krecords_codec::crc::crc32(&bytes[16..]);
    bytes[12..16].copy_from_slice(&crc.to_be_bytes());
}

/// A record as a consumer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub offset: i64,
    pub timestamp: Option<i64>,
    pub value: Vec<u8>,
    pub magic: u8,
}

/// Decodes every record of `bytes` (whole entries).
pub fn records_of(bytes: &[u8]) -> Vec<Seen> {
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    for batch in Entries::new(bytes) {
        let batch = batch.unwrap();
        batch.validate().unwrap();
        for r in batch.records(&mut scratch, usize::MAX).unwrap() {
            let r = r.unwrap();
            out.push(Seen {
                offset: r.offset(),
                timestamp: r.timestamp(),
                value: r.value().unwrap_or_default().to_vec(),
                magic: batch.magic(),
            });
        }
    }
    out
}

/// Every record of the log, read in pages of `page` bytes.
pub fn read_all(log: &Log, page: usize) -> Vec<Seen> {
    let mut out: Vec<Seen> = Vec::new();
    let mut offset = log.log_start_offset();
    while offset < log.log_end_offset() {
        let r = log.read(offset, page).unwrap();
        assert!(!r.bytes.is_empty(), "empty read at {offset}");
        for s in records_of(&r.bytes) {
            if s.offset >= offset {
                out.push(s);
            }
        }
        offset = r.next_offset;
    }
    out
}

/// Magic bytes of the entries of `bytes`.
pub fn magics(bytes: &[u8]) -> Vec<u8> {
    Entries::new(bytes).map(|b| b.unwrap().magic()).collect()
}

pub fn first_batch(bytes: &[u8]) -> Batch<'_> {
    Entries::new(bytes).next().unwrap().unwrap()
}

pub fn timestamp_type(bytes: &[u8]) -> TimestampType {
    first_batch(bytes).timestamp_type()
}

pub fn exists(m: &Mem, name: &str) -> bool {
    m.storage.file_bytes(&m.dir.join(name)).is_some()
}

pub fn seg(n: i64, suffix: &str) -> String {
    krecords_log::files::file_name(n, suffix)
}

pub fn p(s: &str) -> &Path {
    Path::new(s)
}

/// A v0/v1 compressed wrapper (needs the compression branch).
pub fn legacy_compressed(magic: u8, codec: Compression, ts: i64, values: &[&str]) -> Vec<u8> {
    let mut b = LegacyBuilder::new(magic, 0)
        .unwrap()
        .compression(codec, None)
        .unwrap();
    for v in values {
        b.append(&NewRecord::new(ts, Some(b"k"), Some(v.as_bytes())))
            .unwrap();
    }
    b.finish().unwrap()
}

/// A v2 batch from an idempotent (and maybe transactional) producer, records at `NOW`.
pub fn idem(pid: i64, epoch: i16, seq: i32, txn: bool, values: &[&str]) -> Vec<u8> {
    let mut b = V2Builder::new(0)
        .producer(pid, epoch, seq)
        .transactional(txn);
    for v in values {
        b.append(&NewRecord::new(NOW, Some(b"k"), Some(v.as_bytes())))
            .unwrap();
    }
    b.finish().unwrap()
}

/// An idempotent producer's batch with per-record timestamps.
pub fn idem_ts(pid: i64, epoch: i16, seq: i32, records: &[(i64, &str)]) -> Vec<u8> {
    let mut b = V2Builder::new(0).producer(pid, epoch, seq);
    for (ts, v) in records {
        b.append(&NewRecord::new(*ts, Some(b"k"), Some(v.as_bytes())))
            .unwrap();
    }
    b.finish().unwrap()
}

/// The values a consumer at `isolation` sees from offset 0.
pub fn consumed(log: &Log, isolation: krecords_log::IsolationLevel) -> Vec<String> {
    log.consume(log.log_start_offset(), usize::MAX, isolation)
        .unwrap()
        .records
        .into_iter()
        .map(|r| String::from_utf8(r.value.unwrap_or_default()).unwrap())
        .collect()
}

/// Every entry of every `.txnindex` file of the directory, parsed, in segment order.
pub fn txn_index_files(m: &Mem) -> Vec<(String, Vec<krecords_log::transaction::AbortedTxn>)> {
    m.snapshot()
        .into_iter()
        .filter(|(n, _)| n.ends_with(".txnindex"))
        .map(|(n, b)| {
            let entries = krecords_log::transaction::parse_txn_index(Path::new(&n), &b).unwrap();
            (n, entries)
        })
        .collect()
}

/// Offsets of the `.snapshot` files of the directory.
pub fn snapshot_files(m: &Mem) -> Vec<i64> {
    m.snapshot()
        .into_iter()
        .filter_map(|(n, _)| krecords_log::files::parse_file_name(&n, ".snapshot"))
        .collect()
}

/// The base offsets of the log's segments.
pub fn segment_bases(log: &Log) -> Vec<i64> {
    log.info()
        .unwrap()
        .segments
        .iter()
        .map(|s| s.base_offset)
        .collect()
}

/// Asserts that no file of an interrupted swap (a cleaning pass or a split) is left.
pub fn assert_no_swap_leftovers(m: &Mem, what: &str) {
    let names = m.storage.list_dir(&m.dir).unwrap();
    assert!(
        !names.iter().any(|n| n.ends_with(".cleaned")
            || n.ends_with(".swap")
            || n.ends_with(".deleted")
            || n == "krec-cleaner-swap"),
        "{what}: {names:?}"
    );
}

/// A log in `dir` on the file system: 12 batches of two records over 400-byte segments.
pub fn fs_log(dir: &Path) -> Log {
    let mut log = Log::create(dir, config(&[("segment.bytes", "400")])).unwrap();
    for i in 0..12 {
        append(&mut log, &v2(NOW + i, &["0123456789", "abcdefghij"]));
    }
    log
}

/// Whether an open failed because another writer holds the directory's lock.
pub fn locked(r: krecords_log::Result<Log>) -> bool {
    matches!(r, Err(Error::LogLocked { .. }))
}
