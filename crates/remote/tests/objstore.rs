//! The object_store backend: the same objects read through object_store's LocalFileSystem
//! and InMemory stores as through the plugin's filesystem backend; segments streamed with a
//! bounded look-ahead; a server that answers 500 or stalls fails in bounded retries.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use krecords_remote::location::{Location, RemoteOptions};
use krecords_remote::objstore::{ObjectStoreStorage, Timeouts};
use krecords_remote::storage::{FileSystemStorage, ObjectMeta, Storage};
use krecords_remote::stream::SharedStorage;
use krecords_remote::RemoteTier;
use object_store::ObjectStoreExt;

use crate::roundtrip::COMBINATIONS;
use crate::util::{keys, local_segments, partition, uploaded, CHUNK, PREFIX};

/// A storage that records the ranges read from it.
struct Recording {
    inner: SharedStorage,
    ranges: Mutex<Vec<Range<u64>>>,
}

impl Storage for Recording {
    fn get(&self, key: &str, limit: u64) -> krecords_remote::Result<Bytes> {
        self.inner.get(key, limit)
    }
    fn get_range(&self, key: &str, range: Range<u64>) -> krecords_remote::Result<Bytes> {
        if key.ends_with(".log") {
            self.ranges.lock().unwrap().push(range.clone());
        }
        self.inner.get_range(key, range)
    }
    fn size(&self, key: &str) -> krecords_remote::Result<u64> {
        self.inner.size(key)
    }
    fn list(&self, prefix: &str) -> krecords_remote::Result<Vec<ObjectMeta>> {
        self.inner.list(prefix)
    }
}

fn in_memory(dir: &std::path::Path, fs: &FileSystemStorage) -> ObjectStoreStorage {
    let store = Arc::new(object_store::memory::InMemory::new());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for meta in fs.list("").unwrap() {
        let bytes = std::fs::read(dir.join(&meta.key)).unwrap();
        rt.block_on(store.put(&meta.key.as_str().into(), bytes.into()))
            .unwrap();
    }
    ObjectStoreStorage::new(store, "memory://", Timeouts::default()).unwrap()
}

#[test]
fn object_store_backends_read_as_the_filesystem_backend() {
    let segments = local_segments();
    for (compression, encryption) in COMBINATIONS {
        let dir = uploaded(segments, compression, encryption);
        let fs = FileSystemStorage::new(dir.path());
        let local = object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap();
        let stores: Vec<SharedStorage> = vec![
            Arc::new(
                ObjectStoreStorage::new(Arc::new(local), "file://", Timeouts::default()).unwrap(),
            ),
            Arc::new(in_memory(dir.path(), &fs)),
        ];
        let want = RemoteTier::new(fs.clone(), PREFIX).list().unwrap();
        for store in stores {
            let tier = RemoteTier::new(store, PREFIX).with_keys(keys());
            let listing = tier.list().unwrap();
            assert_eq!(listing, want);
            for (remote, local) in listing.partitions[&partition()].iter().zip(segments) {
                let segment = tier.open(remote).unwrap();
                let mut all = Vec::new();
                segment.stream(0, 3).read_to_end(&mut all).unwrap();
                assert!(all == local.log, "{compression} {encryption}");
                // From the middle of a chunk to the end.
                let from = local.log.len() as u64 / 2;
                let mut s = segment.stream(from, 2);
                assert_eq!(s.start(), from);
                let mut tail = Vec::new();
                s.read_to_end(&mut tail).unwrap();
                assert!(tail[..] == local.log[s.start() as usize..]);
            }
        }
    }
}

#[test]
fn a_stream_fetches_from_its_start_and_only_a_few_chunks_ahead() {
    let segments = local_segments();
    let dir = uploaded(&segments[..1], true, true);
    let recording = Arc::new(Recording {
        inner: Arc::new(FileSystemStorage::new(dir.path())),
        ranges: Mutex::new(Vec::new()),
    });
    let shared: SharedStorage = recording.clone();
    let tier = RemoteTier::new(shared, PREFIX).with_keys(keys());
    let remote = &tier.list().unwrap().partitions[&partition()][0];
    let segment = tier.open(remote).unwrap();
    let chunks = segment.manifest().chunk_index.chunk_count();
    assert!(chunks >= 5, "{chunks} chunks");
    let from = 2 * u64::from(CHUNK) + 10;
    let mut s = segment.stream(from, 2);
    let mut first = [0u8; 16];
    s.read_exact(&mut first).unwrap();
    // Reading the first bytes fetched the chunk holding them and at most two more.
    let fetched = recording.ranges.lock().unwrap().clone();
    assert!((1..=3).contains(&fetched.len()), "{fetched:?}");
    let index = &segment.manifest().chunk_index;
    let third = index.chunk(2).unwrap();
    // The look-ahead fetches run on threads of their own, in no fixed order: the chunk
    // holding the start is among them, and is the first in the object.
    let first_start = fetched.iter().map(|r| r.start).min();
    assert_eq!(first_start, Some(third.transformed_position), "{fetched:?}");
    drop(s);
    // Nothing before the start's chunk is ever read.
    let mut s = segment.stream(from, 2);
    std::io::copy(&mut s, &mut std::io::sink()).unwrap();
    let all = recording.ranges.lock().unwrap().clone();
    assert!(all.iter().all(|r| r.start >= third.transformed_position));
}

/// A server on 127.0.0.1 that answers every request with `answer` (or never, when `None`),
/// counting connections.
fn server(answer: Option<&'static str>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            seen.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            match answer {
                Some(a) => {
                    let _ = conn.write_all(a.as_bytes());
                }
                None => held.push(conn),
            }
        }
    });
    (url, count)
}

fn s3_storage(endpoint: &str, timeouts: Timeouts) -> SharedStorage {
    let mut o = RemoteOptions::default();
    for (k, v) in [
        ("s3.endpoint.url", endpoint),
        ("s3.region", "us-east-1"),
        ("s3.path.style.access.enabled", "true"),
        ("aws.access.key.id", "test"),
        ("aws.secret.access.key", "test"),
    ] {
        assert_eq!(o.set(k, v), Ok(None));
    }
    o.timeouts = timeouts;
    let location = Location::parse("s3://bucket/tiered/").unwrap().unwrap();
    let (storage, prefix) = o.open(&location).unwrap();
    assert_eq!(prefix, "tiered/");
    storage
}

#[test]
fn a_server_answering_500_fails_after_bounded_retries() {
    let (url, count) = server(Some(
        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    ));
    let timeouts = Timeouts {
        request: Duration::from_secs(5),
        connect: Duration::from_secs(2),
        retries: 2,
    };
    let storage = s3_storage(&url, timeouts);
    let err = storage.get_range("tiered/x.log", 0..10).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("500"), "{text}");
    assert!(text.contains("s3://bucket/tiered/x.log"), "{text}");
    // The first attempt and two retries.
    assert_eq!(count.load(Ordering::SeqCst), 3, "{text}");
    let err = storage.list("tiered/").unwrap_err();
    assert!(err.to_string().contains("500"), "{err}");
}

#[test]
fn a_stalled_server_times_out() {
    let (url, count) = server(None);
    let timeouts = Timeouts {
        request: Duration::from_millis(300),
        connect: Duration::from_millis(300),
        retries: 1,
    };
    let storage = s3_storage(&url, timeouts);
    let err = storage.get("tiered/x.rsm-manifest", 1 << 20).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("timed out") || text.contains("timeout") || text.contains("no answer"),
        "{text}"
    );
    assert!(count.load(Ordering::SeqCst) >= 1);
}
