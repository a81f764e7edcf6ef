//! Writes the seed corpus of every fuzz target from the golden vectors.
//!
//! Usage: `cargo run --release --manifest-path fuzz/Cargo.toml -p krecords-fuzz-seed --
//! tests/vectors fuzz/corpus` (scripts/fuzz.sh does this).
//!
//! Every `*hex` string field of every JSON file under the vectors folder is decoded. Record
//! vectors seed `entries`; their compressed sections (v2 records sections, v0/v1 wrapper values)
//! seed the decompressor of their codec; decompressed inner message sets and uncompressed v0/v1
//! message sets seed `legacy_deep` (under several wrapper flag bytes); control records seed
//! `control`; codec vectors seed their decompressor; varint vectors seed `varint`; record
//! vectors up to 32 KiB seed `convert` under several option bytes. A few
//! synthetic inputs are added: bombs above the targets' 1 MiB limit for each codec, a raw snappy
//! preamble claiming 4 GiB, a xerial chunk claiming 2 GiB, a zstd header claiming 8 GiB.
//! The log targets (`txn_index`, `snapshot`, `log_recovery`) are seeded from small logs written
//! by `krecords-log` itself in its in-memory storage (see `log_seeds`). `client_response` is
//! seeded with Fetch responses carrying each record vector up to 32 KiB at several versions, and
//! ApiVersions, Metadata, ListOffsets and SASL responses encoded by kafka-protocol (see
//! `response_seeds`). `internal_topics` is seeded with the records of the internal-topic fixtures
//! Kafka wrote (see `internal_seeds`). `arrow` takes the record vectors behind three option bytes.

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiVersionsResponse, BrokerId, FetchResponse, ListOffsetsResponse, MetadataResponse,
    ProducerId, ResponseHeader, SaslAuthenticateResponse, SaslHandshakeResponse, TopicName,
};
use kafka_protocol::protocol::{Encodable, HeaderVersion, StrBytes};
use krecords_codec::read::{Batch, Entries};
use krecords_codec::{compression, Compression};
use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

struct Corpus {
    root: PathBuf,
    written: usize,
}

impl Corpus {
    fn add(&mut self, target: &str, bytes: &[u8]) {
        let dir = self.root.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        let mut h = DefaultHasher::new();
        bytes.hash(&mut h);
        let path = dir.join(format!("seed-{:016x}", h.finish()));
        if !path.exists() {
            std::fs::write(&path, bytes).unwrap();
            self.written += 1;
        }
    }
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

/// Every (key, decoded bytes) of string fields whose key ends in "hex".
fn hex_fields(v: &Value, out: &mut Vec<(String, Vec<u8>)>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match v {
                    Value::String(s) if k.ends_with("hex") => {
                        if let Ok(b) = hex::decode(s) {
                            out.push((k.clone(), b));
                        }
                    }
                    _ => hex_fields(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| hex_fields(v, out)),
        _ => {}
    }
}

fn decompress_target(codec: Compression) -> Option<&'static str> {
    Some(match codec {
        Compression::Gzip => "decompress_gzip",
        Compression::Snappy => "decompress_snappy",
        Compression::Lz4 => "decompress_lz4",
        Compression::Zstd => "decompress_zstd",
        Compression::None => return None,
    })
}

/// legacy_deep's flag byte: magic, codec (0 gzip, 1 snappy, 2 lz4, 3 zstd), LogAppendTime, raw,
/// wrapper offset choice.
fn deep_flags(magic: u8, codec: u8, lat: bool, raw: bool, offset_choice: u8) -> u8 {
    magic | codec << 1 | u8::from(lat) << 3 | u8::from(raw) << 4 | offset_choice << 5
}

fn seed_deep(corpus: &mut Corpus, message_set: &[u8], magic: u8) {
    for (codec, offset_choice) in [(0, 0), (1, 1), (2, 5), (0, 2)] {
        let mut s = vec![deep_flags(
            magic,
            codec,
            magic == 1 && offset_choice == 1,
            false,
            offset_choice,
        )];
        s.extend_from_slice(message_set);
        corpus.add("legacy_deep", &s);
    }
}

/// Seeds from one buffer of log entries.
fn seed_entries(corpus: &mut Corpus, bytes: &[u8]) {
    corpus.add("entries", bytes);
    // arrow: an option byte before the entries (see fuzz_targets/arrow.rs).
    for options in [0x00u8, 0x1f, 0xe3] {
        corpus.add("arrow", &[&[options][..], bytes].concat());
    }
    // ship_stream: a fetch-size byte (16 × 64 bytes) before the entries.
    if bytes.len() <= 32 << 10 {
        corpus.add("ship_stream", &[&[16u8][..], bytes].concat());
    }
    if bytes.len() <= 30 << 10 {
        fetch_seeds(corpus, bytes);
    }
    // convert: an option byte and a level byte before the entries (see fuzz_targets/convert.rs).
    if bytes.len() <= 32 << 10 {
        for flags in [0x02u8, 0x00, 0x09, 0x16, 0x65, 0xa2] {
            let mut s = vec![flags, 0];
            s.extend_from_slice(bytes);
            corpus.add("convert", &s);
        }
        // stats_what_if: a choice byte (batching, sample) before the entries.
        for choice in [0x00u8, 0x03] {
            let mut s = vec![choice];
            s.extend_from_slice(bytes);
            corpus.add("stats_what_if", &s);
        }
    }
    let mut scratch = Vec::new();
    let mut all_plain_legacy = Some(None::<u8>);
    for batch in Entries::new(bytes) {
        let Ok(batch) = batch else { break };
        let codec = batch.compression().ok();
        match (&batch, codec) {
            (Batch::V2(b), Some(c)) => {
                all_plain_legacy = None;
                if let Some(t) = decompress_target(c) {
                    corpus.add(t, b.records_section());
                }
            }
            (Batch::Legacy(l), Some(c)) => {
                if c == Compression::None {
                    if let Some(m) = &mut all_plain_legacy {
                        m.get_or_insert(l.magic());
                    }
                    continue;
                }
                all_plain_legacy = None;
                if let (Some(t), Some(v)) = (decompress_target(c), l.value()) {
                    corpus.add(t, v);
                    let mut inner = Vec::new();
                    if compression::decompress(c, l.magic(), v, 1 << 20, 0, &mut inner).is_ok() {
                        seed_deep(corpus, &inner, l.magic());
                    }
                }
            }
            _ => all_plain_legacy = None,
        }
        if let Batch::V2(b) = &batch {
            if b.is_control() {
                if let Ok(records) = batch.records(&mut scratch, 1 << 20) {
                    for r in records.flatten() {
                        let mut s = r.key().unwrap_or_default().to_vec();
                        s.extend_from_slice(r.value().unwrap_or_default());
                        corpus.add("control", &s);
                        if let Some(v) = r.value() {
                            corpus.add("control", v);
                        }
                    }
                }
            }
        }
    }
    if let Some(Some(magic)) = all_plain_legacy {
        seed_deep(corpus, bytes, magic);
    }
}

/// The records of the internal-topic fixtures (crates/cli/tests/fixtures/internal: segments and
/// snapshots Kafka itself wrote), each as an `internal_topics` input: flags (key and value
/// present), the key's length (u16 big-endian), the key, the value.
fn internal_seeds(corpus: &mut Corpus) {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crates/cli/tests/fixtures/internal");
    let Ok(dirs) = std::fs::read_dir(&root) else {
        return;
    };
    let mut scratch = Vec::new();
    for dir in dirs.flatten() {
        let Ok(files) = std::fs::read_dir(dir.path()) else {
            continue;
        };
        for file in files.flatten() {
            let Ok(bytes) = std::fs::read(file.path()) else {
                continue;
            };
            for batch in Entries::new(&bytes).flatten() {
                let Ok(records) = batch.checked_records(&mut scratch, 1 << 20) else {
                    continue;
                };
                for r in records.flatten() {
                    let (key, value) = (r.key().unwrap_or_default(), r.value().unwrap_or_default());
                    let flags = u8::from(r.key().is_some()) | u8::from(r.value().is_some()) << 1;
                    let mut seed = vec![flags];
                    seed.extend_from_slice(
                        &(key.len().min(usize::from(u16::MAX)) as u16).to_be_bytes(),
                    );
                    seed.extend_from_slice(key);
                    seed.extend_from_slice(value);
                    corpus.add("internal_topics", &seed);
                }
            }
        }
    }
}

fn synthetic(corpus: &mut Corpus) {
    let zeros = vec![0u8; 2 << 20];
    let text: Vec<u8> = (0..20_000u32)
        .flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes())
        .collect();
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let t = decompress_target(codec).unwrap();
        for (magic, data) in [
            (2, &zeros[..]),
            (2, &text[..4096]),
            (0, &text[..300]),
            (1, b""),
        ] {
            let mut packed = Vec::new();
            compression::compress(codec, None, magic, data, &mut packed).unwrap();
            corpus.add(t, &packed);
        }
    }
    // Raw snappy preamble claiming 4 GiB - 1; xerial chunk claiming 2 GiB - 1.
    corpus.add(
        "decompress_snappy",
        &[0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x01, 0x02],
    );
    let mut x = compression::snappy::XERIAL_HEADER.to_vec();
    x.extend_from_slice(&0x7fff_ffffu32.to_be_bytes());
    x.extend_from_slice(&[0; 64]);
    corpus.add("decompress_snappy", &x);
    // zstd frame header claiming 8 GiB.
    corpus.add(
        "decompress_zstd",
        &hex::decode("28b52ffdc0000000000002000000").unwrap(),
    );
    // Structured targets read their input through `arbitrary`; any bytes will do as a start.
    for t in ["v2_roundtrip", "legacy_roundtrip", "control", "varint"] {
        corpus.add(t, &text[..256]);
        corpus.add(t, &[0xff; 64]);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (vectors, out) = match &args[..] {
        [_, v, o] => (PathBuf::from(v), PathBuf::from(o)),
        _ => {
            eprintln!("usage: krecords-fuzz-seed VECTORS_DIR CORPUS_DIR");
            std::process::exit(2);
        }
    };
    let mut corpus = Corpus {
        root: out,
        written: 0,
    };
    let mut files = Vec::new();
    json_files(&vectors, &mut files);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let mut fields = Vec::new();
        hex_fields(&v, &mut fields);
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        for (key, bytes) in fields {
            if kind.starts_with("codec") {
                let codec = v
                    .get("codec")
                    .and_then(Value::as_str)
                    .and_then(Compression::from_name);
                if let Some(t) = codec.and_then(decompress_target) {
                    if key == "hex" {
                        corpus.add(t, &bytes);
                    } else if key == "decompressed_hex" {
                        corpus.add(t, &bytes); // round-trip material
                    }
                }
            } else if kind.starts_with("varint") {
                corpus.add("varint", &bytes);
            } else if key == "frame_header_hex" {
                let mut frame = bytes.clone();
                frame.extend_from_slice(&[0, 0, 0, 0]);
                corpus.add("decompress_lz4", &frame);
            } else if key.ends_with("key_hex") || kind.starts_with("crc") {
                corpus.add("varint", &bytes);
            } else {
                seed_entries(&mut corpus, &bytes);
                // Also the first 4 KiB of large buffers, which fit the structured targets.
                for t in ["v2_roundtrip", "legacy_roundtrip"] {
                    corpus.add(t, &bytes[..bytes.len().min(4096)]);
                }
            }
        }
    }
    synthetic(&mut corpus);
    response_seeds(&mut corpus);
    log_seeds(&mut corpus);
    internal_seeds(&mut corpus);
    remote_seeds(&mut corpus);
    println!(
        "{} vector files, {} new seed files under {}",
        files.len(),
        corpus.written,
        corpus.root.display()
    );
}

/// Serialises a log directory image as the `log_recovery` target decodes it: for each file
/// `[tag][len: u16 LE][bytes]`, the tag naming the kind (low 4 bits) and the segment base offset
/// slot (bits 4-6, base offsets 0, 1, 2, 3, 5, 10, 100, 1000). Files it cannot name are left out.
fn encode_image(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    use krecords_log::files as f;
    const BASES: [i64; 8] = [0, 1, 2, 3, 5, 10, 100, 1000];
    let mut out = Vec::new();
    for (name, bytes) in files {
        let fixed = [
            (f::LEADER_EPOCH_CHECKPOINT_FILE, 5u8),
            (f::CONFIG_FILE, 6),
            (f::CLEAN_SHUTDOWN_FILE, 7),
            (f::RECOVERY_POINT_FILE, 8),
        ];
        let suffixes = [
            (f::LOG_SUFFIX, 0u8),
            (f::INDEX_SUFFIX, 1),
            (f::TIME_INDEX_SUFFIX, 2),
            (f::TXN_INDEX_SUFFIX, 3),
            (f::SNAPSHOT_SUFFIX, 4),
        ];
        let tag = fixed
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, k)| k)
            .or_else(|| {
                suffixes.iter().find_map(|&(suffix, kind)| {
                    let base = f::parse_file_name(name, suffix)?;
                    let slot = BASES.iter().position(|&b| b == base)? as u8;
                    Some(kind | (slot << 4))
                })
            });
        let (Some(tag), Ok(len)) = (tag, u16::try_from(bytes.len())) else {
            continue;
        };
        out.push(tag);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out
}

/// Small logs written by `krecords-log` in memory: their directory images seed `log_recovery`
/// (closed cleanly, and without the clean shutdown marker so that recovery runs), their
/// `.txnindex` files seed `txn_index`, their `.snapshot` files seed `snapshot`.
fn log_seeds(corpus: &mut Corpus) {
    use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
    use krecords_log::storage::{MemStorage, Storage};
    use krecords_log::{AppendOrigin, Env, Log, LogConfig};
    use std::sync::Arc;

    const NOW: i64 = 1_714_000_000_000;
    let dir = Path::new("/logs/t-0");
    for variant in 0..4 {
        let clock = Arc::new(krecords_log::clock::ManualClock::new(NOW));
        let storage = MemStorage::with_clock(clock.clone());
        let env = Env::new(Arc::new(storage.clone()), clock);
        let pairs: &[(&str, &str)] = match variant {
            0 => &[],
            1 => &[("segment.bytes", "300"), ("index.interval.bytes", "1")],
            2 => &[("index.interval.bytes", "1")],
            _ => &[("segment.bytes", "400"), ("compression.type", "gzip")],
        };
        // Small preallocated indexes: the 10 MiB default makes every execution slow.
        let pairs = pairs
            .iter()
            .copied()
            .chain([("segment.index.bytes", "4096")]);
        let Ok(config) = LogConfig::from_pairs(pairs.clone()) else {
            eprintln!("seed: config {:?} refused", pairs.collect::<Vec<_>>());
            continue;
        };
        let Ok(mut log) = Log::create_with(dir, config, env) else {
            continue;
        };
        for i in 0..6i64 {
            let mut b = V2Builder::new(0);
            for j in 0..=(i % 3) {
                let v = format!("value-{i}-{j}");
                b.append(&NewRecord::new(
                    NOW + i * 10 + j,
                    Some(b"k"),
                    Some(v.as_bytes()),
                ))
                .unwrap();
            }
            let _ = log.append(&b.finish().unwrap(), AppendOrigin::Client);
        }
        // A transaction aborted and one committed: a .txnindex entry and producer state.
        for (pid, commit) in [(42i64, false), (43, true)] {
            let mut b = V2Builder::new(0).producer(pid, 0, 0).transactional(true);
            b.append(&NewRecord::new(NOW + 100, None, Some(b"txn")))
                .unwrap();
            let _ = log.append(&b.finish().unwrap(), AppendOrigin::Client);
            let _ = log.append_end_txn(pid, 0, 0, commit, NOW + 101);
        }
        if variant == 2 {
            if let Ok(mut b) = LegacyBuilder::new(1, 0) {
                b.append(&NewRecord::new(NOW + 200, Some(b"k"), Some(b"old")))
                    .unwrap();
                let _ = log.append(&b.finish().unwrap(), AppendOrigin::Client);
            }
        }
        let _ = log.roll();
        let _ = log.close();
        let mut names = storage.list_dir(dir).unwrap_or_default();
        names.sort();
        let files: Vec<(String, Vec<u8>)> = names
            .into_iter()
            .filter_map(|n| {
                let b = storage.file_bytes(&dir.join(&n))?;
                Some((n, b))
            })
            .collect();
        for (name, bytes) in &files {
            if name.ends_with(krecords_log::files::TXN_INDEX_SUFFIX) {
                corpus.add("txn_index", bytes);
            } else if name.ends_with(krecords_log::files::SNAPSHOT_SUFFIX) {
                corpus.add("snapshot", bytes);
            }
        }
        corpus.add("log_recovery", &encode_image(&files));
        let unclean: Vec<_> = files
            .iter()
            .filter(|(n, _)| n != krecords_log::files::CLEAN_SHUTDOWN_FILE)
            .cloned()
            .collect();
        corpus.add("log_recovery", &encode_image(&unclean));
        // Only the segments: every index and the producer state rebuilt from them.
        let logs: Vec<_> = files
            .iter()
            .filter(|(n, _)| {
                n.ends_with(krecords_log::files::LOG_SUFFIX)
                    || n == krecords_log::files::CONFIG_FILE
            })
            .cloned()
            .collect();
        corpus.add("log_recovery", &encode_image(&logs));
    }
    corpus.add("txn_index", &[]);
    corpus.add(
        "snapshot",
        &krecords_log::producer_state::encode_snapshot(&[]),
    );
}

/// One client_response seed: the API index and version byte its target reads first (see
/// fuzz_targets/client_response.rs), then the response as it arrives on the socket.
fn response_seed<R: Encodable + HeaderVersion>(
    corpus: &mut Corpus,
    api: u8,
    min: i16,
    version: i16,
    resp: &R,
) {
    let mut frame = Vec::new();
    ResponseHeader::default()
        .with_correlation_id(1)
        .encode(&mut frame, R::header_version(version))
        .unwrap();
    resp.encode(&mut frame, version).unwrap();
    let mut seed = vec![api, u8::try_from(version - min).unwrap()];
    seed.extend_from_slice(&i32::try_from(frame.len()).unwrap().to_be_bytes());
    seed.extend_from_slice(&frame);
    corpus.add("client_response", &seed);
}

/// Fetch responses carrying `records` (v4, the last v with names, the first with topic ids, v16).
fn fetch_seeds(corpus: &mut Corpus, records: &[u8]) {
    use kafka_protocol::messages::fetch_response::{
        AbortedTransaction, FetchableTopicResponse, PartitionData,
    };
    for version in [4, 11, 12, 13, 16] {
        let mut topic = FetchableTopicResponse::default();
        if version >= 13 {
            topic.topic_id = uuid::Uuid::from_u128(7);
        } else {
            topic.topic = TopicName(StrBytes::from_static_str("topic"));
        }
        topic.partitions = vec![PartitionData::default()
            .with_high_watermark(100)
            .with_last_stable_offset(90)
            .with_log_start_offset(0)
            .with_aborted_transactions(Some(vec![AbortedTransaction::default()
                .with_producer_id(ProducerId(5))
                .with_first_offset(3)]))
            .with_records(Some(Bytes::copy_from_slice(records)))];
        let resp = FetchResponse::default().with_responses(vec![topic]);
        response_seed(corpus, 3, 4, version, &resp);
    }
}

/// ApiVersions, Metadata, ListOffsets, SaslHandshake and SaslAuthenticate responses at several
/// versions.
fn response_seeds(corpus: &mut Corpus) {
    use kafka_protocol::messages::api_versions_response::ApiVersion;
    use kafka_protocol::messages::list_offsets_response::{
        ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
    };
    use kafka_protocol::messages::metadata_response::{
        MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    };
    let keys: Vec<ApiVersion> = [(0i16, 0i16, 17i16), (1, 0, 13), (2, 1, 10), (3, 0, 4)]
        .iter()
        .map(|&(k, min, max)| {
            ApiVersion::default()
                .with_api_key(k)
                .with_min_version(min)
                .with_max_version(max)
        })
        .collect();
    for version in 0..=4 {
        let resp = ApiVersionsResponse::default().with_api_keys(keys.clone());
        response_seed(corpus, 0, 0, version, &resp);
    }
    for version in [1, 4, 9, 10, 12, 13] {
        let mut topic = MetadataResponseTopic::default()
            .with_name(Some(TopicName(StrBytes::from_static_str("topic"))))
            .with_partitions(vec![MetadataResponsePartition::default()
                .with_leader_id(BrokerId(1))
                .with_replica_nodes(vec![BrokerId(1), BrokerId(2)])
                .with_isr_nodes(vec![BrokerId(1)])]);
        if version >= 10 {
            topic.topic_id = uuid::Uuid::from_u128(7);
        }
        let resp = MetadataResponse::default()
            .with_brokers(vec![MetadataResponseBroker::default()
                .with_node_id(BrokerId(1))
                .with_host(StrBytes::from_static_str("broker-1"))
                .with_port(9092)])
            .with_topics(vec![topic]);
        response_seed(corpus, 1, 0, version, &resp);
    }
    for version in [1, 4, 6, 8, 10] {
        let resp =
            ListOffsetsResponse::default().with_topics(vec![ListOffsetsTopicResponse::default()
                .with_name(TopicName(StrBytes::from_static_str("topic")))
                .with_partitions(vec![ListOffsetsPartitionResponse::default()
                    .with_offset(42)
                    .with_timestamp(1_700_000_000_000)])]);
        response_seed(corpus, 2, 1, version, &resp);
    }
    for version in [0, 1] {
        let resp = SaslHandshakeResponse::default()
            .with_mechanisms(vec![StrBytes::from_static_str("SCRAM-SHA-512")]);
        response_seed(corpus, 4, 0, version, &resp);
    }
    for version in [0, 1, 2] {
        let resp = SaslAuthenticateResponse::default()
            .with_auth_bytes(Bytes::from_static(b"r=abc,s=c2FsdA==,i=4096"));
        response_seed(corpus, 5, 0, version, &resp);
    }
}

/// Manifests as the tiered-storage plugin writes them (fixed and variable chunk indexes, with and
/// without encryption and a transaction index) seed `remote_manifest`; chunk-size lists, bare
/// and behind the 8 size bytes `remote_chunk_index` reads first, seed `remote_chunk_index`.
fn remote_seeds(corpus: &mut Corpus) {
    use krecords_remote::chunk_index::{encode_chunk_sizes, ChunkIndex, ChunkSizes};
    use krecords_remote::manifest::{
        EncryptionMetadata, IndexSlice, SegmentIndexes, SegmentManifest,
    };

    let lists: [&[u32]; 5] = [
        &[],
        &[7],
        &[1_000_000, 1_000_010, 1_000_020, 7],
        &[300, 70_000, 5],
        &[4096, 4096, 4096, 1234],
    ];
    for list in lists {
        let bytes = encode_chunk_sizes(list).unwrap();
        corpus.add("remote_chunk_index", &bytes);
        let ocs: i32 = 4096;
        let ofs = (list.len() as i32).saturating_sub(1).max(0) * ocs
            + if list.is_empty() { 0 } else { 100 };
        let mut framed = ocs.to_be_bytes().to_vec();
        framed.extend(ofs.to_be_bytes());
        framed.extend(&bytes);
        corpus.add("remote_chunk_index", &framed);
    }
    let slice = |position, size| IndexSlice { position, size };
    for (variable, encrypted, txn) in [
        (false, false, false),
        (true, false, true),
        (false, true, true),
        (true, true, false),
    ] {
        let sizes = if variable {
            ChunkSizes::Variable(vec![1500, 1400, 90])
        } else {
            let extra = if encrypted { 28 } else { 0 };
            ChunkSizes::Fixed {
                transformed_chunk_size: 4096 + extra,
                final_transformed_chunk_size: 100 + extra,
            }
        };
        let manifest = SegmentManifest {
            chunk_index: ChunkIndex::new(4096, 8292, sizes).unwrap(),
            segment_indexes: SegmentIndexes {
                offset: slice(0, 36),
                timestamp: slice(36, 40),
                producer_snapshot: slice(76, 0),
                leader_epoch: slice(76, 36),
                transaction: txn.then(|| slice(112, 62)),
            },
            compression: variable,
            encryption: encrypted.then(|| EncryptionMetadata {
                key_id: "k1".into(),
                wrapped_data_key: vec![0x5a; 256],
                aad: vec![0xa5; 32],
            }),
            remote_log_segment_metadata: None,
        };
        corpus.add("remote_manifest", manifest.to_json().unwrap().as_bytes());
    }
}
