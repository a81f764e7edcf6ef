//! The client against a fake broker on 127.0.0.1: a correct ApiVersions/Metadata/ListOffsets/
//! Fetch exchange, and hostile answers (truncated frames, a 2 GiB size field, an error code
//! storm, disconnects, silence, a refused login). Every hostile case must end in a typed error
//! or a bounded number of retries, never a panic or a large allocation: the test binary's
//! allocator records the largest single allocation and the tests assert it stays small.

#![allow(unsafe_code)] // the recording allocator

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::fetch_response::PartitionData;
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsResponse, BrokerId, FetchRequest, FetchResponse, ListOffsetsRequest,
    ListOffsetsResponse, RequestHeader, SaslAuthenticateResponse, SaslHandshakeResponse, TopicName,
};
use kafka_protocol::protocol::{Decodable, StrBytes};
use kafka_protocol::ResponseError;
use krecords_client::{Client, ClientConfig, Error, IsolationLevel, OffsetSpec};
use krecords_codec::read::Entries;
use krecords_testkit::batches::numbered;
use krecords_testkit::broker::{
    self, api_versions_of, frame, topic_id, Action, Ctx, Fake, TopicInfo, READ_APIS, TXN_APIS,
};

// ------------------------------------------------------------------------ recording allocator

struct Recording;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Recording = Recording;

/// No test here legitimately allocates more than this at once (the largest frames are a few
/// KiB; the test harness's own buffers are small).
const LARGEST_ALLOWED: usize = 8 << 20;

fn assert_no_large_allocation() {
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(
        largest <= LARGEST_ALLOWED,
        "an allocation of {largest} bytes"
    );
}

// ------------------------------------------------------------------------------ fake broker

const TOPIC: &str = "events";

/// The client configuration for a fake: fast retries and timeouts.
trait FakeConfig {
    fn config(&self, extra: &[&str]) -> ClientConfig;
}

impl FakeConfig for Fake {
    fn config(&self, extra: &[&str]) -> ClientConfig {
        let mut pairs = vec![
            format!("bootstrap.servers={}", self.addr()),
            "retries=3".to_owned(),
            "retry.backoff.ms=1".to_owned(),
            "retry.backoff.max.ms=4".to_owned(),
            "socket.timeout.ms=5000".to_owned(),
            "socket.connection.setup.timeout.ms=5000".to_owned(),
            "fetch.wait.max.ms=10".to_owned(),
        ];
        pairs.extend(extra.iter().map(|s| (*s).to_owned()));
        ClientConfig::from_pairs(pairs).unwrap()
    }
}

/// A fake behind TLS (the fixtures' server certificate, for `localhost` only); with
/// `client_ca`, it requires a client certificate signed by that CA.
fn start_tls(
    client_ca: bool,
    handler: impl Fn(&Ctx, &RequestHeader, Bytes) -> Action + Send + Sync + 'static,
) -> Fake {
    Fake::start_tls(server_tls(client_ca), handler)
}

fn api_versions(header: &RequestHeader, sasl: bool) -> Vec<u8> {
    let mut keys = vec![
        (ApiKey::ApiVersions, 0, 3),
        (ApiKey::Metadata, 0, 12),
        (ApiKey::ListOffsets, 1, 8),
        (ApiKey::Fetch, 4, 16),
    ];
    if sasl {
        keys.push((ApiKey::SaslHandshake, 0, 1));
        keys.push((ApiKey::SaslAuthenticate, 0, 2));
    }
    api_versions_of(header, &keys)
}

/// A fake that answers ApiVersions, and Metadata with these errors for the topic and its
/// partition, and closes the connection on anything else.
async fn metadata_only(topic_error: i16, partition_error: i16) -> Fake {
    Fake::start(
        move |ctx, header, _| match ApiKey::try_from(header.request_api_key).unwrap() {
            ApiKey::ApiVersions => Action::Send(api_versions(header, false)),
            ApiKey::Metadata => Action::Send(metadata(ctx, header, topic_error, partition_error)),
            _ => Action::Close,
        },
    )
}

fn metadata(ctx: &Ctx, header: &RequestHeader, topic_error: i16, partition_error: i16) -> Vec<u8> {
    metadata_of(ctx, header, topic_error, partition_error, 1)
}

/// Metadata of `TOPIC` with `partitions` partitions, all led by the fake.
fn metadata_of(
    ctx: &Ctx,
    header: &RequestHeader,
    topic_error: i16,
    partition_error: i16,
    partitions: i32,
) -> Vec<u8> {
    let topic = TopicInfo {
        error: topic_error,
        partition_error,
        ..TopicInfo::new(TOPIC, partitions)
    };
    broker::metadata(header, ctx.host, ctx.port, &[topic])
}

fn fetch_response(header: &RequestHeader, partition: PartitionData) -> Vec<u8> {
    broker::fetch_response(header, TOPIC, partition)
}

/// A fetch response of partition 0 holding `records`, of a log of 9 records (offsets 0 to 8)
/// with no open transaction.
fn fetch_of_nine(header: &RequestHeader, records: Bytes) -> Vec<u8> {
    fetch_response(
        header,
        PartitionData::default()
            .with_partition_index(0)
            .with_high_watermark(9)
            .with_last_stable_offset(9)
            .with_log_start_offset(0)
            .with_records(Some(records)),
    )
}

fn fetch_error(header: &RequestHeader, code: i16) -> Vec<u8> {
    fetch_response(
        header,
        PartitionData::default()
            .with_partition_index(0)
            .with_error_code(code),
    )
}

/// Three batches: offsets 0..3, 3..6, 6..9.
/// Connects to `fake` with the default configuration and fetches partition 0 of [`TOPIC`]
/// from offset 0, which must fail.
async fn failed_fetch(fake: &Fake, isolation: IsolationLevel) -> Error {
    let client = Client::connect(fake.config(&[])).await.unwrap();
    client
        .fetch(TOPIC, 0, 0, isolation, 1 << 20)
        .await
        .unwrap_err()
}

/// Asks `client` for the read-committed earliest offset of `partition` of [`TOPIC`], which must
/// fail.
async fn failed_earliest(client: &Client, partition: i32) -> Error {
    client
        .list_offsets(
            TOPIC,
            partition,
            OffsetSpec::Earliest,
            IsolationLevel::ReadCommitted,
        )
        .await
        .unwrap_err()
}

fn batches() -> Vec<Vec<u8>> {
    numbered(3, 3, |o| {
        let value = format!("value {o}").repeat(20);
        (1_700_000_000_000 + o, b"key".to_vec(), value.into_bytes())
    })
}

/// A fake broker that answers ApiVersions and Metadata as [`basic`] does, and every other
/// request (a Fetch) with `fetch`.
fn fetch_fake(
    fetch: impl Fn(&Ctx, &RequestHeader, Bytes) -> Action + Send + Sync + 'static,
) -> Fake {
    Fake::start(move |ctx, header, body| {
        basic(ctx, header).unwrap_or_else(|| fetch(ctx, header, body))
    })
}

/// The standard handlers for ApiVersions and Metadata, `None` for anything else.
fn basic(ctx: &Ctx, header: &RequestHeader) -> Option<Action> {
    match ApiKey::try_from(header.request_api_key).unwrap() {
        ApiKey::ApiVersions => Some(Action::Send(api_versions(header, false))),
        ApiKey::Metadata => Some(Action::Send(metadata(ctx, header, 0, 0))),
        _ => None,
    }
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tls")
        .join(name)
}

fn server_tls(client_ca: bool) -> Arc<rustls::ServerConfig> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(fixture("server.pem"))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(fixture("server.key")).unwrap();
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = if client_ca {
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_file_iter(fixture("ca.pem")).unwrap() {
            roots.add(c.unwrap()).unwrap();
        }
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap();
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    Arc::new(builder.with_single_cert(chain, key).unwrap())
}

/// Runs the futures concurrently on the current task (no extra dependency for join_all).
async fn futures_join<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut set = Vec::new();
    for f in futures {
        set.push(Box::pin(f));
    }
    let mut out: Vec<Option<F::Output>> = set.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, o) in set.iter_mut().zip(out.iter_mut()) {
            if o.is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *o = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().map(|o| o.unwrap()).collect()
}

// ------------------------------------------------------------------------------------ tests

#[tokio::test]
async fn correct_exchange_metadata_list_offsets_fetch_and_stream() {
    let all = batches();
    let log: Vec<u8> = all.concat();
    let starts: Vec<(i64, usize)> = {
        let mut pos = 0;
        all.iter()
            .enumerate()
            .map(|(i, b)| {
                let s = (i as i64 * 3, pos);
                pos += b.len();
                s
            })
            .collect()
    };
    let log = Arc::new(log);
    let log2 = Arc::clone(&log);
    let all2 = all.clone();
    let fake = fetch_fake(move |_, header, mut body| {
        let v = header.request_api_version;
        match ApiKey::try_from(header.request_api_key).unwrap() {
            ApiKey::ListOffsets => {
                let req = ListOffsetsRequest::decode(&mut body, v).unwrap();
                assert_eq!(req.replica_id, BrokerId(-1), "a consumer's replica id");
                let ts = req.topics[0].partitions[0].timestamp;
                let (offset, timestamp) = match ts {
                    -2 => (0, -1),
                    -1 => (if req.isolation_level == 1 { 6 } else { 9 }, -1),
                    t if t <= 1_700_000_000_004 => (4, 1_700_000_000_004),
                    _ => (-1, -1),
                };
                Action::Send(frame(
                    header,
                    &ListOffsetsResponse::default().with_topics(vec![
                        ListOffsetsTopicResponse::default()
                            .with_name(TopicName(StrBytes::from_static_str(TOPIC)))
                            .with_partitions(vec![ListOffsetsPartitionResponse::default()
                                .with_partition_index(0)
                                .with_offset(offset)
                                .with_timestamp(timestamp)]),
                    ]),
                ))
            }
            ApiKey::Fetch => {
                let req = FetchRequest::decode(&mut body, v).unwrap();
                assert!(v >= 13, "the highest common version, with topic ids");
                assert_eq!(req.topics[0].topic_id, topic_id(TOPIC));
                let p = &req.topics[0].partitions[0];
                // From the batch holding the offset, at most the window, at least one batch.
                let (_, from) = starts
                    .iter()
                    .rev()
                    .find(|(o, _)| *o <= p.fetch_offset)
                    .copied()
                    .unwrap();
                let first_len = all2
                    .iter()
                    .scan(0, |pos, b| {
                        let s = *pos;
                        *pos += b.len();
                        Some((s, b.len()))
                    })
                    .find(|(s, _)| *s == from)
                    .map_or(0, |(_, l)| l);
                let window = usize::try_from(p.partition_max_bytes).unwrap();
                let to = (from + window.max(first_len)).min(log2.len());
                let records = Bytes::copy_from_slice(&log2[from..to]);
                Action::Send(fetch_of_nine(header, records))
            }
            other => panic!("unexpected {other:?}"),
        }
    });

    let client = Client::connect(fake.config(&[])).await.unwrap();
    assert_eq!(fake.seen()[0].key, ApiKey::ApiVersions, "ApiVersions first");

    let md = client.metadata(Some(&[TOPIC])).await.unwrap();
    assert_eq!(md.cluster_id.as_deref(), Some("fake"));
    assert_eq!(md.brokers.len(), 1);
    assert_eq!(md.topics[0].name, TOPIC);
    assert_eq!(md.topics[0].partitions[0].leader, 0);
    assert_eq!(md.topics[0].partitions[0].leader_epoch, 7);
    assert!(fake
        .seen()
        .iter()
        .any(|s| s.key == ApiKey::Metadata && s.version == 12));

    let ru = IsolationLevel::ReadUncommitted;
    let rc = IsolationLevel::ReadCommitted;
    let lo = |spec| client.list_offsets(TOPIC, 0, spec, ru);
    assert_eq!(lo(OffsetSpec::Earliest).await.unwrap().offset, Some(0));
    assert_eq!(lo(OffsetSpec::Latest).await.unwrap().offset, Some(9));
    let at = lo(OffsetSpec::Timestamp(1_700_000_000_003)).await.unwrap();
    assert_eq!(
        (at.offset, at.timestamp),
        (Some(4), Some(1_700_000_000_004))
    );
    let after = lo(OffsetSpec::Timestamp(1_800_000_000_000)).await.unwrap();
    assert_eq!(after.offset, None);
    let latest_rc = client
        .list_offsets(TOPIC, 0, OffsetSpec::Latest, rc)
        .await
        .unwrap();
    assert_eq!(latest_rc.offset, Some(6), "read_committed asks for the LSO");

    let f = client.fetch(TOPIC, 0, 0, ru, 1 << 20).await.unwrap();
    assert_eq!(&f.records[..], &log[..]);
    assert_eq!(
        (f.high_watermark, f.last_stable_offset, f.log_start_offset),
        (9, 9, 0)
    );
    assert_eq!(f.broker, fake.addr());

    // A window of one and a half batches: each response ends in a partial batch, fetched
    // again from its offset; the chunks put together are the log, byte for byte.
    let window = i32::try_from(all[0].len() * 3 / 2).unwrap();
    let mut stream = client
        .stream_partition(TOPIC, 0, 0, None, ru)
        .with_window(window);
    let mut got = Vec::new();
    let mut next_offsets = Vec::new();
    while let Some(chunk) = stream.next_chunk().await.unwrap() {
        assert_eq!(Entries::new(&chunk.records).partial(), None);
        got.extend_from_slice(&chunk.records);
        next_offsets.push(chunk.next_offset);
    }
    assert_eq!(got, *log);
    assert_eq!(next_offsets, [3, 6, 9]);
    assert_eq!(stream.end_offset(), Some(9));

    // From inside a batch to an explicit end inside another.
    let mut stream = client.stream_partition(TOPIC, 0, 4, Some(7), ru);
    let mut got = Vec::new();
    while let Some(chunk) = stream.next_chunk().await.unwrap() {
        got.extend_from_slice(&chunk.records);
    }
    assert_eq!(got, [all[1].clone(), all[2].clone()].concat());

    // Partitions read concurrently share the broker's one connection.
    let fetches = (0..4).map(|_| client.fetch(TOPIC, 0, 3, ru, 1 << 20));
    for f in futures_join(fetches).await {
        assert_eq!(&f.unwrap().records[..], &log[all[0].len()..]);
    }

    // One connection served everything.
    assert!(fake.seen().iter().all(|s| s.connection == 1));
    assert_no_large_allocation();
}

#[tokio::test]
async fn bootstrap_tries_each_address() {
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_addr = dead.local_addr().unwrap();
    drop(dead);
    let fake = Fake::start(|ctx, header, _| basic(ctx, header).unwrap_or(Action::Close));
    let config =
        ClientConfig::from_pairs([format!("bootstrap.servers={dead_addr},{}", fake.addr())])
            .unwrap();
    let client = Client::connect(config).await.unwrap();
    client.metadata(None).await.unwrap();

    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_addr = dead.local_addr().unwrap();
    drop(dead);
    let e = Client::connect(ClientConfig::new(&dead_addr.to_string()).unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, Error::NoBrokerReachable { tried: 1, last } if matches!(**last, Error::Connect { .. })),
        "{e}"
    );
}

#[tokio::test]
async fn size_field_of_2_gib_is_refused_before_allocation() {
    let fake =
        Fake::start(
            |ctx, header, _| match ApiKey::try_from(header.request_api_key).unwrap() {
                ApiKey::ApiVersions => Action::Send(api_versions(header, false)),
                ApiKey::Metadata if ctx.nth == 0 => Action::Send(metadata(ctx, header, 0, 0)),
                _ => {
                    // 2 GiB (as an unsigned size), then 2 GiB - 1, then a correlation id.
                    let mut b = 0x8000_0000u32.to_be_bytes().to_vec();
                    b.extend_from_slice(&header.correlation_id.to_be_bytes());
                    Action::Send(b)
                }
            },
        );
    let e = failed_fetch(&fake, IsolationLevel::ReadUncommitted).await;
    assert!(
        matches!(
            e,
            Error::FrameSize {
                size: -2_147_483_648,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("Fetch"), "{e}");
    // A positive size above receive.message.max.bytes, on a fresh connection.
    let fake =
        Fake::start(
            |_, header, _| match ApiKey::try_from(header.request_api_key).unwrap() {
                ApiKey::ApiVersions => {
                    let mut b = 0x7fff_ffffi32.to_be_bytes().to_vec();
                    b.extend_from_slice(&header.correlation_id.to_be_bytes());
                    Action::Send(b)
                }
                _ => Action::Close,
            },
        );
    let e = Client::connect(fake.config(&[])).await.unwrap_err();
    let Error::NoBrokerReachable { last, .. } = &e else {
        panic!("{e}")
    };
    assert!(
        matches!(
            **last,
            Error::FrameSize {
                size: 0x7fff_ffff,
                ..
            }
        ),
        "{e}"
    );
    assert_no_large_allocation();
}

#[tokio::test]
async fn truncated_frame_body_is_a_protocol_error() {
    let fake = fetch_fake(|_, header, _| {
        // A consistent size field around a Fetch response cut in the middle.
        let whole = fetch_response(
            header,
            PartitionData::default()
                .with_partition_index(0)
                .with_high_watermark(9)
                .with_records(Some(Bytes::from(batches().concat()))),
        );
        let mut cut = whole[..whole.len() / 2].to_vec();
        let size = i32::try_from(cut.len() - 4).unwrap();
        cut[..4].copy_from_slice(&size.to_be_bytes());
        Action::Send(cut)
    });
    let e = failed_fetch(&fake, IsolationLevel::ReadCommitted).await;
    assert!(matches!(e, Error::Protocol { .. }), "{e}");
    // Not retried: the broker's answer is malformed, not lost.
    assert_eq!(fake.count(ApiKey::Fetch), 1);
    assert_no_large_allocation();
}

#[tokio::test]
async fn mid_response_disconnect_is_retried_then_a_typed_error() {
    let fake = fetch_fake(|_, header, _| {
        let whole = fetch_error(header, 0);
        Action::SendAndClose(whole[..whole.len() - 3].to_vec())
    });
    let e = failed_fetch(&fake, IsolationLevel::ReadCommitted).await;
    assert!(
        matches!(e, Error::Truncated { expected, received, .. } if received + 3 == expected),
        "{e}"
    );
    // retries=3: four attempts, each on a new connection (the first on the bootstrap one).
    assert_eq!(fake.count(ApiKey::Fetch), 4);
    let connections = fake.seen().iter().map(|s| s.connection).max().unwrap();
    assert_eq!(connections, 4);
    assert_no_large_allocation();
}

#[tokio::test]
async fn disconnect_before_the_response_is_retried_then_a_typed_error() {
    let fake = Fake::start(|ctx, header, _| basic(ctx, header).unwrap_or(Action::Close));
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let e = client
        .list_offsets(TOPIC, 0, OffsetSpec::Latest, IsolationLevel::ReadCommitted)
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Disconnected { .. }), "{e}");
    assert!(e.to_string().contains("ListOffsets"), "{e}");
    assert_eq!(fake.count(ApiKey::ListOffsets), 4);
}

#[tokio::test]
async fn error_code_storm_is_bounded() {
    let fake = Fake::start(|ctx, header, _| {
        basic(ctx, header).unwrap_or_else(|| {
            Action::Send(fetch_error(
                header,
                ResponseError::NotLeaderOrFollower.code(),
            ))
        })
    });
    let client = Client::connect(fake.config(&["retries=5"])).await.unwrap();
    let started = std::time::Instant::now();
    let e = client
        .fetch(TOPIC, 0, 0, IsolationLevel::ReadCommitted, 1 << 20)
        .await
        .unwrap_err();
    assert_eq!(
        e.kafka_code().and_then(|c| c.response_error()),
        Some(ResponseError::NotLeaderOrFollower),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("NOT_LEADER_OR_FOLLOWER")
            && msg.contains("Fetch")
            && msg.contains(&fake.addr()),
        "{msg}"
    );
    assert_eq!(fake.count(ApiKey::Fetch), 6, "retries=5: six attempts");
    // Each retry refreshed the leader.
    assert_eq!(fake.count(ApiKey::Metadata), 6);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn unknown_topic_and_leaderless_partition_are_retried_then_reported() {
    let fake = metadata_only(ResponseError::UnknownTopicOrPartition.code(), 0).await;
    let e = failed_fetch(&fake, IsolationLevel::ReadCommitted).await;
    assert!(e.to_string().contains("UNKNOWN_TOPIC_OR_PARTITION"), "{e}");
    assert!(e.to_string().starts_with(&fake.addr()), "{e}");
    assert!(e.to_string().contains("events/0"), "{e}");
    assert_eq!(fake.count(ApiKey::Metadata), 4);
    assert_eq!(fake.count(ApiKey::Fetch), 0);

    let fake = metadata_only(0, ResponseError::LeaderNotAvailable.code()).await;
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let e = failed_earliest(&client, 0).await;
    assert!(e.to_string().contains("LEADER_NOT_AVAILABLE"), "{e}");
    let e = failed_earliest(&client, 3).await;
    assert!(
        matches!(
            e,
            Error::UnknownPartition {
                partition: 3,
                partitions: 1,
                ..
            }
        ),
        "{e}"
    );
}

#[tokio::test]
async fn a_silent_broker_times_out() {
    let fake = Fake::start(|ctx, header, _| basic(ctx, header).unwrap_or(Action::Silence));
    let client = Client::connect(fake.config(&["socket.timeout.ms=100", "retries=1"]))
        .await
        .unwrap();
    let e = failed_earliest(&client, 0).await;
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    // Not retried: the operation's socket.timeout.ms has passed.
    assert_eq!(fake.count(ApiKey::ListOffsets), 1);
}

#[tokio::test]
async fn refused_sasl_login_is_an_authentication_error() {
    let fake =
        Fake::start(
            |_, header, _| match ApiKey::try_from(header.request_api_key).unwrap() {
                ApiKey::ApiVersions => Action::Send(api_versions(header, true)),
                ApiKey::SaslHandshake => Action::Send(frame(
                    header,
                    &SaslHandshakeResponse::default()
                        .with_mechanisms(vec![StrBytes::from_static_str("PLAIN")]),
                )),
                ApiKey::SaslAuthenticate => Action::Send(frame(
                    header,
                    &SaslAuthenticateResponse::default()
                        .with_error_code(ResponseError::SaslAuthenticationFailed.code())
                        .with_error_message(Some(StrBytes::from_static_str(
                            "Authentication failed: Invalid username or password",
                        ))),
                )),
                _ => Action::Close,
            },
        );
    let config = fake.config(&[
        "security.protocol=SASL_PLAINTEXT",
        "sasl.mechanism=PLAIN",
        "sasl.username=alice",
        "sasl.password=wrong",
    ]);
    let e = Client::connect(config).await.unwrap_err();
    assert!(e.is_authentication(), "{e}");
    assert!(
        matches!(
            e,
            Error::Authentication {
                mechanism: "PLAIN",
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("Invalid username or password"),
        "{e}"
    );
    // Not retried, not tried elsewhere.
    assert_eq!(fake.count(ApiKey::SaslAuthenticate), 1);

    // A mechanism the broker does not offer.
    let config = fake.config(&[
        "security.protocol=SASL_PLAINTEXT",
        "sasl.mechanism=SCRAM-SHA-512",
        "sasl.username=alice",
        "sasl.password=x",
    ]);
    let fake2 =
        Fake::start(
            |_, header, _| match ApiKey::try_from(header.request_api_key).unwrap() {
                ApiKey::ApiVersions => Action::Send(api_versions(header, true)),
                ApiKey::SaslHandshake => Action::Send(frame(
                    header,
                    &SaslHandshakeResponse::default()
                        .with_error_code(ResponseError::UnsupportedSaslMechanism.code())
                        .with_mechanisms(vec![StrBytes::from_static_str("PLAIN")]),
                )),
                _ => Action::Close,
            },
        );
    let mut config = config;
    config.bootstrap_servers = vec![fake2.addr()];
    let e = Client::connect(config).await.unwrap_err();
    assert!(e.is_authentication(), "{e}");
    assert!(e.to_string().contains("UNSUPPORTED_SASL_MECHANISM"), "{e}");
}

#[tokio::test]
async fn hostile_array_count_is_refused_before_allocation() {
    // A Metadata v12 answer claiming u32::MAX - 1 brokers (a compact array) in a few bytes, and
    // an ApiVersions v3 answer claiming 2^31 - 1 API keys: kafka-protocol 0.18.0 as released
    // reserved room for every claimed element first; the patched copy refuses the count.
    let fake =
        Fake::start(
            |ctx, header, _| match ApiKey::try_from(header.request_api_key).unwrap() {
                ApiKey::ApiVersions => Action::Send(api_versions(header, false)),
                ApiKey::Metadata => {
                    let _ = ctx;
                    let mut b = Vec::new();
                    b.extend_from_slice(&header.correlation_id.to_be_bytes());
                    b.push(0); // response header tagged fields
                    b.extend_from_slice(&0i32.to_be_bytes()); // throttle_time_ms
                    b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]); // brokers: u32::MAX - 1
                    b.extend_from_slice(&[0; 8]);
                    let mut f = i32::try_from(b.len()).unwrap().to_be_bytes().to_vec();
                    f.extend_from_slice(&b);
                    Action::Send(f)
                }
                _ => Action::Close,
            },
        );
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let e = client.metadata(None).await.unwrap_err();
    let Error::NoBrokerReachable { last, .. } = &e else {
        panic!("{e}")
    };
    assert!(
        matches!(&**last, Error::Protocol { message, .. } if message.contains("exceeds")),
        "{e}"
    );

    let fake = Fake::start(|_, header, _| {
        let mut b = Vec::new();
        b.extend_from_slice(&header.correlation_id.to_be_bytes());
        b.extend_from_slice(&0i16.to_be_bytes()); // error_code
        b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x07]); // api_keys: 2^31 - 2 (compact)
        b.extend_from_slice(&[0; 8]);
        let mut f = i32::try_from(b.len()).unwrap().to_be_bytes().to_vec();
        f.extend_from_slice(&b);
        Action::Send(f)
    });
    let e = Client::connect(fake.config(&[])).await.unwrap_err();
    let Error::NoBrokerReachable { last, .. } = &e else {
        panic!("{e}")
    };
    assert!(matches!(&**last, Error::Protocol { .. }), "{e}");
    assert_no_large_allocation();
}

fn tls_config(fake: &Fake, host: &str, extra: &[String]) -> ClientConfig {
    let mut config = fake.config(&["security.protocol=SSL"]);
    config.bootstrap_servers = vec![format!("{host}:{}", fake.port())];
    for pair in extra {
        config.set_pair(pair).unwrap();
    }
    config
}

#[tokio::test]
async fn tls_with_a_ca_file_verifies_the_broker_and_its_hostname() {
    let fake = start_tls(false, |ctx, header, _| {
        basic(ctx, header).unwrap_or(Action::Close)
    });
    let ca = format!("ssl.ca.location={}", fixture("ca.pem").display());

    let client = Client::connect(tls_config(&fake, "localhost", std::slice::from_ref(&ca)))
        .await
        .unwrap();
    let md = client.metadata(Some(&[TOPIC])).await.unwrap();
    assert_eq!(md.brokers[0].host, "localhost");

    // An unrelated CA.
    let other = format!("ssl.ca.location={}", fixture("other-ca.pem").display());
    let e = Client::connect(tls_config(&fake, "localhost", &[other]))
        .await
        .unwrap_err();
    assert!(e.is_authentication(), "{e}");
    assert!(matches!(e, Error::Tls { .. }), "{e}");

    // The right CA, but the certificate is for localhost, not 127.0.0.1.
    let e = Client::connect(tls_config(&fake, "127.0.0.1", &[ca]))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Tls { .. }), "{e}");
    assert!(e.to_string().contains("127.0.0.1"), "{e}");

    // A CA file that does not exist is a TLS error before any connection.
    let missing = "ssl.ca.location=/nonexistent/ca.pem".to_owned();
    let e = Client::connect(tls_config(&fake, "localhost", &[missing]))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Tls { .. }), "{e}");
    assert!(e.to_string().contains("/nonexistent/ca.pem"), "{e}");
}

#[tokio::test]
async fn mutual_tls_sends_the_client_certificate() {
    let fake = start_tls(true, |ctx, header, _| {
        basic(ctx, header).unwrap_or(Action::Close)
    });
    let ca = format!("ssl.ca.location={}", fixture("ca.pem").display());
    let cert = format!(
        "ssl.certificate.location={}",
        fixture("client.pem").display()
    );
    let key = format!("ssl.key.location={}", fixture("client.key").display());

    let client = Client::connect(tls_config(&fake, "localhost", &[ca.clone(), cert, key]))
        .await
        .unwrap();
    client.metadata(None).await.unwrap();

    // Without a client certificate the broker refuses: a TLS error, not a lost connection.
    let e = Client::connect(tls_config(&fake, "localhost", &[ca]))
        .await
        .unwrap_err();
    assert!(e.is_authentication(), "{e}");
    assert!(
        matches!(&e, Error::Tls { message, .. } if message.contains("ApiVersions")),
        "{e}"
    );
}

/// The server side of SCRAM (RFC 5802) for the fake broker: checks the client's proof against
/// `password` and answers with its signature (or, with `forge`, a wrong one).
struct ScramServer {
    sha512: bool,
    password: &'static str,
    forge: bool,
    state: Mutex<Option<(String, String)>>, // client-first-bare, server-first
}

impl ScramServer {
    fn hmac(&self, key: &[u8], data: &[u8]) -> Vec<u8> {
        use hmac::Mac;
        if self.sha512 {
            let mut m = hmac::Hmac::<sha2::Sha512>::new_from_slice(key).unwrap();
            m.update(data);
            m.finalize().into_bytes().to_vec()
        } else {
            let mut m = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
            m.update(data);
            m.finalize().into_bytes().to_vec()
        }
    }

    fn hash(&self, data: &[u8]) -> Vec<u8> {
        use sha2::Digest;
        if self.sha512 {
            sha2::Sha512::digest(data).to_vec()
        } else {
            sha2::Sha256::digest(data).to_vec()
        }
    }

    /// One SaslAuthenticate step: the bytes to answer, or an error message.
    fn step(&self, msg: &[u8]) -> Result<Vec<u8>, String> {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        let msg = std::str::from_utf8(msg).unwrap();
        let mut state = self.state.lock().unwrap();
        match state.take() {
            None => {
                let bare = msg.strip_prefix("n,,").unwrap().to_owned();
                let nonce = bare.split(",r=").nth(1).unwrap();
                let first = format!("r={nonce}server-nonce,s={},i=4096", b64.encode(b"salt"));
                *state = Some((bare, first.clone()));
                Ok(first.into_bytes())
            }
            Some((bare, first)) => {
                let (without_proof, proof) = msg.rsplit_once(",p=").unwrap();
                let proof = b64.decode(proof).unwrap();
                let mut salted = vec![0; if self.sha512 { 64 } else { 32 }];
                if self.sha512 {
                    pbkdf2::pbkdf2_hmac::<sha2::Sha512>(
                        self.password.as_bytes(),
                        b"salt",
                        4096,
                        &mut salted,
                    );
                } else {
                    pbkdf2::pbkdf2_hmac::<sha2::Sha256>(
                        self.password.as_bytes(),
                        b"salt",
                        4096,
                        &mut salted,
                    );
                }
                let stored = self.hash(&self.hmac(&salted, b"Client Key"));
                let auth = format!("{bare},{first},{without_proof}");
                let signature = self.hmac(&stored, auth.as_bytes());
                let client_key: Vec<u8> =
                    proof.iter().zip(&signature).map(|(a, b)| a ^ b).collect();
                if self.hash(&client_key) != stored {
                    return Err("Authentication failed during authentication due to invalid credentials with SASL mechanism".to_owned());
                }
                let mut server_sig = self.hmac(&self.hmac(&salted, b"Server Key"), auth.as_bytes());
                if self.forge {
                    server_sig[0] ^= 1;
                }
                Ok(format!("v={}", b64.encode(server_sig)).into_bytes())
            }
        }
    }
}

async fn scram_fake(sha512: bool, password: &'static str, forge: bool) -> Fake {
    let server = ScramServer {
        sha512,
        password,
        forge,
        state: Mutex::new(None),
    };
    let mechanism = if sha512 {
        "SCRAM-SHA-512"
    } else {
        "SCRAM-SHA-256"
    };
    Fake::start(move |ctx, header, mut body| {
        match ApiKey::try_from(header.request_api_key).unwrap() {
            ApiKey::ApiVersions => Action::Send(api_versions(header, true)),
            ApiKey::SaslHandshake => {
                let req = kafka_protocol::messages::SaslHandshakeRequest::decode(
                    &mut body,
                    header.request_api_version,
                )
                .unwrap();
                assert_eq!(req.mechanism.as_str(), mechanism);
                Action::Send(frame(
                    header,
                    &SaslHandshakeResponse::default()
                        .with_mechanisms(vec![StrBytes::from_static_str(mechanism)]),
                ))
            }
            ApiKey::SaslAuthenticate => {
                let req = kafka_protocol::messages::SaslAuthenticateRequest::decode(
                    &mut body,
                    header.request_api_version,
                )
                .unwrap();
                let resp = match server.step(&req.auth_bytes) {
                    Ok(bytes) => SaslAuthenticateResponse::default().with_auth_bytes(bytes.into()),
                    Err(message) => SaslAuthenticateResponse::default()
                        .with_error_code(ResponseError::SaslAuthenticationFailed.code())
                        .with_error_message(Some(StrBytes::from_string(message))),
                };
                Action::Send(frame(header, &resp))
            }
            _ => basic(ctx, header).unwrap_or(Action::Close),
        }
    })
}

fn scram_config(fake: &Fake, mechanism: &str, password: &str) -> ClientConfig {
    fake.config(&[
        "security.protocol=SASL_PLAINTEXT",
        &format!("sasl.mechanism={mechanism}"),
        "sasl.username=alice",
        &format!("sasl.password={password}"),
    ])
}

#[tokio::test]
async fn scram_logins_verify_both_ways() {
    for (sha512, mechanism) in [(true, "SCRAM-SHA-512"), (false, "SCRAM-SHA-256")] {
        let fake = scram_fake(sha512, "pencil", false).await;
        let client = Client::connect(scram_config(&fake, mechanism, "pencil"))
            .await
            .unwrap();
        client.metadata(None).await.unwrap();
        assert_eq!(fake.count(ApiKey::SaslAuthenticate), 2, "{mechanism}");

        let fake = scram_fake(sha512, "pencil", false).await;
        let e = Client::connect(scram_config(&fake, mechanism, "wrong"))
            .await
            .unwrap_err();
        assert!(e.is_authentication(), "{e}");
        assert!(e.to_string().contains("SASL_AUTHENTICATION_FAILED"), "{e}");

        // A server that does not hold the credentials cannot sign the exchange.
        let fake = scram_fake(sha512, "pencil", true).await;
        let e = Client::connect(scram_config(&fake, mechanism, "pencil"))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, Error::Authentication { message, .. } if message.contains("does not verify")),
            "{e}"
        );
    }
}

#[tokio::test]
async fn an_older_broker_answers_api_versions_in_v0_and_the_client_steps_down() {
    let fake = Fake::start(|ctx, header, _| {
        let key = ApiKey::try_from(header.request_api_key).unwrap();
        if key == ApiKey::ApiVersions && header.request_api_version > 2 {
            // As Kafka does for a version it does not know: UNSUPPORTED_VERSION, encoded in v0,
            // with its own range.
            let mut v0 = header.clone();
            v0.request_api_version = 0;
            let resp = ApiVersionsResponse::default()
                .with_error_code(ResponseError::UnsupportedVersion.code())
                .with_api_keys(vec![ApiVersion::default()
                    .with_api_key(ApiKey::ApiVersions as i16)
                    .with_max_version(2)]);
            return Action::Send(frame(&v0, &resp));
        }
        basic(ctx, header).unwrap_or(Action::Close)
    });
    let client = Client::connect(fake.config(&[])).await.unwrap();
    client.metadata(None).await.unwrap();
    let versions: Vec<i16> = fake
        .seen()
        .iter()
        .filter(|s| s.key == ApiKey::ApiVersions)
        .map(|s| s.version)
        .collect();
    assert_eq!(versions, [3, 2]);
}

#[tokio::test]
async fn throttled_fetches_are_waited_out_and_gaps_skipped() {
    let all = batches();
    let second = Bytes::from(all[1].clone());
    // Offsets 0..3 and 6..9 are gone (compacted away, say): a fetch at 0 returns the batch at 3,
    // a fetch at 6 nothing although the high watermark is 9. The first fetch is throttled (no
    // partitions, a throttle time).
    let fake = fetch_fake(move |ctx, header, mut body| {
        if ctx.nth == 0 {
            return Action::Send(frame(
                header,
                &FetchResponse::default().with_throttle_time_ms(20),
            ));
        }
        let req = FetchRequest::decode(&mut body, header.request_api_version).unwrap();
        let offset = req.topics[0].partitions[0].fetch_offset;
        let records = if offset < 6 {
            second.clone()
        } else {
            Bytes::new()
        };
        Action::Send(fetch_of_nine(header, records))
    });
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let mut stream = client.stream_partition(TOPIC, 0, 0, None, IsolationLevel::ReadCommitted);
    let chunk = stream.next_chunk().await.unwrap().unwrap();
    assert_eq!(chunk.records, all[1]);
    assert_eq!((chunk.fetch_offset, chunk.next_offset), (0, 6));
    assert_eq!(stream.next_chunk().await.unwrap(), None);
    assert_eq!(stream.next_offset(), 9);
    // Throttled, the batch, the empty tail.
    assert_eq!(fake.count(ApiKey::Fetch), 3);
}

#[tokio::test]
async fn an_idle_connection_closed_by_the_broker_is_reopened() {
    // The broker closes the connection after its first Metadata answer, as it does with idle
    // connections (connections.max.idle.ms).
    let fake =
        Fake::start(
            |ctx, header, _| match ApiKey::try_from(header.request_api_key).unwrap() {
                ApiKey::Metadata if ctx.nth == 0 => {
                    Action::SendAndClose(metadata(ctx, header, 0, 0))
                }
                _ => basic(ctx, header).unwrap_or(Action::Close),
            },
        );
    let client = Client::connect(fake.config(&["retries=0"])).await.unwrap();
    client.metadata(None).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // No retries configured: the one resend on a new connection does it (the request written
    // to the closed connection never reached the broker).
    client.metadata(None).await.unwrap();
    assert_eq!(fake.count(ApiKey::Metadata), 2);
    assert_eq!(fake.seen().last().unwrap().connection, 2);
}

// ------------------------------------------------------------------ transactional producer

use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponsePartition, OffsetFetchResponseTopic,
};
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::txn_offset_commit_response::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use kafka_protocol::messages::{
    AddOffsetsToTxnResponse, AddPartitionsToTxnRequest, EndTxnRequest, EndTxnResponse,
    FindCoordinatorRequest, InitProducerIdResponse, OffsetFetchRequest, OffsetFetchResponse,
    ProduceRequest, ProduceResponse, ProducerId, TxnOffsetCommitRequest, TxnOffsetCommitResponse,
};
use krecords_client::OffsetToCommit;

/// One Produce request as the fake saw it.
#[derive(Debug, Clone)]
struct Sent {
    partition: i32,
    /// The connection it came on.
    connection: usize,
    pid: i64,
    epoch: i16,
    sequence: i32,
    transactional: bool,
    base_offset: i64,
    /// The records section (after the 61-byte header).
    records: Vec<u8>,
    crc_ok: bool,
}

/// What the transaction fake answers to the nth Produce (counted over all partitions) to a
/// partition (`None`: success).
type ProduceScript = dyn Fn(usize, i32) -> Option<ProduceAnswer> + Send + Sync;

#[derive(Clone, Copy)]
enum ProduceAnswer {
    Error(ResponseError),
    Close,
}

#[derive(Default)]
struct TxnLog {
    sent: Vec<Sent>,
    /// Sequences appended per partition (the fake's log), in order.
    appended: BTreeMap<i32, Vec<i32>>,
    end_txn: Vec<bool>,
    offsets: Vec<(i64, Option<String>)>,
    init_calls: usize,
    /// EndTxn answers still to be NOT_COORDINATOR, OffsetFetch answers still to be
    /// UNSTABLE_OFFSET_COMMIT.
    end_txn_errors: usize,
    offset_fetch_errors: usize,
    /// AddPartitionsToTxn answers still to be CONCURRENT_TRANSACTIONS (the previous
    /// transaction's markers still being written).
    add_partitions_errors: usize,
}

fn producer_api_versions(header: &RequestHeader) -> Vec<u8> {
    api_versions_of(header, &[&READ_APIS[..2], &TXN_APIS[..]].concat())
}

/// A fake broker that is also the transaction and group coordinator. `init_errors` answers
/// the first InitProducerId calls with that many CONCURRENT_TRANSACTIONS.
async fn txn_fake(
    init_errors: usize,
    script: impl Fn(usize, i32) -> Option<ProduceAnswer> + Send + Sync + 'static,
) -> (Fake, Arc<Mutex<TxnLog>>) {
    let log = Arc::new(Mutex::new(TxnLog::default()));
    let log2 = Arc::clone(&log);
    let script: Arc<ProduceScript> = Arc::new(script);
    let fake = Fake::start(move |ctx, header, mut body| {
        let v = header.request_api_version;
        let key = ApiKey::try_from(header.request_api_key).unwrap();
        let mut log = log2.lock().unwrap();
        match key {
            ApiKey::ApiVersions => Action::Send(producer_api_versions(header)),
            ApiKey::Metadata => Action::Send(metadata_of(ctx, header, 0, 0, 2)),
            ApiKey::FindCoordinator => {
                let req = FindCoordinatorRequest::decode(&mut body, v).unwrap();
                if v >= 4 {
                    assert_eq!(req.coordinator_keys.len(), 1);
                }
                Action::Send(broker::find_coordinator(ctx, header, &req))
            }
            ApiKey::InitProducerId => {
                log.init_calls += 1;
                let resp = if log.init_calls <= init_errors {
                    InitProducerIdResponse::default()
                        .with_error_code(ResponseError::ConcurrentTransactions.code())
                } else {
                    InitProducerIdResponse::default()
                        .with_producer_id(ProducerId(4242))
                        .with_producer_epoch(3)
                };
                Action::Send(frame(header, &resp))
            }
            ApiKey::AddPartitionsToTxn => {
                assert!(v <= 3, "transaction version 1 requests only");
                let req = AddPartitionsToTxnRequest::decode(&mut body, v).unwrap();
                assert_eq!(req.v3_and_below_producer_id, ProducerId(4242));
                // Versions up to 3 carry errors per partition.
                let code = if log.add_partitions_errors > 0 {
                    log.add_partitions_errors -= 1;
                    ResponseError::ConcurrentTransactions.code()
                } else {
                    0
                };
                Action::Send(broker::add_partitions_to_txn(header, &req, code))
            }
            ApiKey::Produce => {
                assert!(v <= 11, "below transaction version 2");
                let req = ProduceRequest::decode(&mut body, v).unwrap();
                assert_eq!(req.acks, -1);
                assert_eq!(req.topic_data.len(), 1);
                assert_eq!(
                    req.topic_data[0].partition_data.len(),
                    1,
                    "one batch per request"
                );
                let partition = req.topic_data[0].partition_data[0].index;
                let records = req.topic_data[0].partition_data[0].records.clone().unwrap();
                let b = Entries::new(&records).next().unwrap().unwrap();
                let sent = Sent {
                    partition,
                    connection: ctx.connection,
                    pid: b.producer_id().unwrap(),
                    epoch: b.producer_epoch().unwrap(),
                    sequence: b.base_sequence().unwrap(),
                    transactional: b.is_transactional(),
                    base_offset: b.offset_field(),
                    records: records[61..].to_vec(),
                    crc_ok: b.is_crc_valid(),
                };
                let nth = log.sent.len();
                log.sent.push(sent.clone());
                let span = i32::try_from(b.last_offset() - b.offset_field() + 1).unwrap();
                let answer = script(nth, partition);
                if let Some(ProduceAnswer::Close) = answer {
                    // The broker appends, then the connection dies before the answer.
                    let appended = log.appended.entry(partition).or_default();
                    if !appended.contains(&sent.sequence) {
                        appended.push(sent.sequence);
                    }
                    return Action::Close;
                }
                let code = match answer {
                    Some(ProduceAnswer::Error(e)) => e.code(),
                    _ => {
                        let appended = log.appended.entry(partition).or_default();
                        let expected = appended.len() as i32 * span;
                        if appended.contains(&sent.sequence) {
                            ResponseError::DuplicateSequenceNumber.code()
                        } else if sent.sequence != expected {
                            ResponseError::OutOfOrderSequenceNumber.code()
                        } else {
                            appended.push(sent.sequence);
                            0
                        }
                    }
                };
                let base = i64::from(sent.sequence) + 100;
                let resp =
                    ProduceResponse::default().with_responses(vec![TopicProduceResponse::default(
                    )
                    .with_name(TopicName(StrBytes::from_static_str(TOPIC)))
                    .with_partition_responses(vec![PartitionProduceResponse::default()
                        .with_index(partition)
                        .with_error_code(code)
                        .with_base_offset(if code == 0 { base } else { -1 })])]);
                Action::Send(frame(header, &resp))
            }
            ApiKey::AddOffsetsToTxn => {
                Action::Send(frame(header, &AddOffsetsToTxnResponse::default()))
            }
            ApiKey::TxnOffsetCommit => {
                let req = TxnOffsetCommitRequest::decode(&mut body, v).unwrap();
                assert!(v <= 4);
                let t = &req.topics[0];
                let p = &t.partitions[0];
                log.offsets.push((
                    p.committed_offset,
                    p.committed_metadata.as_ref().map(|m| m.as_str().to_owned()),
                ));
                let resp = TxnOffsetCommitResponse::default().with_topics(vec![
                    TxnOffsetCommitResponseTopic::default()
                        .with_name(t.name.clone())
                        .with_partitions(vec![TxnOffsetCommitResponsePartition::default()
                            .with_partition_index(p.partition_index)]),
                ]);
                Action::Send(frame(header, &resp))
            }
            ApiKey::EndTxn => {
                assert!(v <= 4);
                let req = EndTxnRequest::decode(&mut body, v).unwrap();
                if log.end_txn_errors > 0 {
                    log.end_txn_errors -= 1;
                    return Action::Send(frame(
                        header,
                        &EndTxnResponse::default()
                            .with_error_code(ResponseError::NotCoordinator.code()),
                    ));
                }
                log.end_txn.push(req.committed);
                Action::Send(frame(header, &EndTxnResponse::default()))
            }
            ApiKey::OffsetFetch => {
                let req = OffsetFetchRequest::decode(&mut body, v).unwrap();
                assert!(req.require_stable);
                if log.offset_fetch_errors > 0 {
                    log.offset_fetch_errors -= 1;
                    return Action::Send(frame(
                        header,
                        &OffsetFetchResponse::default()
                            .with_error_code(ResponseError::UnstableOffsetCommit.code()),
                    ));
                }
                let (offset, meta) = log.offsets.last().cloned().unwrap_or((-1, None));
                let resp = OffsetFetchResponse::default().with_topics(vec![
                    OffsetFetchResponseTopic::default()
                        .with_name(TopicName(StrBytes::from_static_str(TOPIC)))
                        .with_partitions(vec![OffsetFetchResponsePartition::default()
                            .with_partition_index(0)
                            .with_committed_offset(offset)
                            .with_metadata(meta.map(StrBytes::from_string))]),
                ]);
                Action::Send(frame(header, &resp))
            }
            other => panic!("unexpected {other:?}"),
        }
    });
    (fake, log)
}

#[tokio::test]
async fn transactional_produce_patches_headers_only_and_counts_sequences() {
    let (fake, log) = txn_fake(2, |_, _| None).await;
    let client = Client::connect(fake.config(&[])).await.unwrap();
    // Two CONCURRENT_TRANSACTIONS answers (an older producer's transaction being aborted).
    let mut p = client
        .transactional_producer("krec-ship-test")
        .await
        .unwrap();
    assert_eq!((p.producer_id(), p.epoch()), (4242, 3));
    assert_eq!(log.lock().unwrap().init_calls, 3);
    let originals = batches();
    for round in 0..2 {
        p.begin().unwrap();
        let produced = p.produce(TOPIC, 0, originals.clone()).await.unwrap();
        assert_eq!(produced.len(), 3);
        for (i, pr) in produced.iter().enumerate() {
            let seq = (round * 3 + i as i32) * 3;
            assert_eq!(pr.base_sequence, seq);
            assert_eq!(pr.base_offset, Some(i64::from(seq) + 100));
            assert_eq!(pr.records, 3);
        }
        p.send_offsets(
            "krec-ship-test",
            &[OffsetToCommit {
                topic: TOPIC.into(),
                partition: 0,
                offset: 9 * (i64::from(round) + 1),
                metadata: Some(format!("round {round}")),
            }],
        )
        .await
        .unwrap();
        p.commit().await.unwrap();
    }
    assert_eq!(p.next_sequence(TOPIC, 0), 18);
    {
        let log = log.lock().unwrap();
        assert_eq!(log.end_txn, [true, true]);
        assert_eq!(log.sent.len(), 6);
        for (i, s) in log.sent.iter().enumerate() {
            assert_eq!((s.pid, s.epoch, s.sequence), (4242, 3, i as i32 * 3));
            assert!(s.transactional && s.crc_ok);
            assert_eq!(s.base_offset, 0);
            // Records bytes exactly as given.
            assert_eq!(s.records, originals[i % 3][61..]);
        }
    }
    let committed = client
        .offset_fetch("krec-ship-test", TOPIC, &[0], true)
        .await
        .unwrap();
    assert_eq!(committed[0].offset, Some(18));
    assert_eq!(committed[0].metadata.as_deref(), Some("round 1"));
}

#[tokio::test]
async fn a_lost_produce_answer_is_retried_with_the_same_sequence() {
    // The second batch's answer is lost twice (appended, then the connection closes): the
    // retries carry sequence 3 again, the broker answers DUPLICATE_SEQUENCE_NUMBER, and the
    // third batch follows with sequence 6.
    let (fake, log) = txn_fake(0, |nth, _| {
        matches!(nth, 1 | 2).then_some(ProduceAnswer::Close)
    })
    .await;
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let mut p = client.transactional_producer("t").await.unwrap();
    p.begin().unwrap();
    let produced = p.produce(TOPIC, 0, batches()).await.unwrap();
    assert_eq!(
        produced.iter().map(|p| p.base_sequence).collect::<Vec<_>>(),
        [0, 3, 6]
    );
    let log = log.lock().unwrap();
    let seqs: Vec<i32> = log.sent.iter().map(|s| s.sequence).collect();
    // Pipelined: the third batch may have been sent before the second's answer was lost,
    // then again after the reconnection; the second is always sent again with sequence 3.
    assert!(seqs.iter().filter(|s| **s == 3).count() >= 3, "{seqs:?}");
    assert_eq!(log.appended[&0], [0, 3, 6], "each batch once in the log");
    assert!(produced[1].base_offset.is_none(), "answered as a duplicate");
}

#[tokio::test]
async fn produce_error_storm_is_bounded_and_fatal_errors_stop_the_producer() {
    // NOT_LEADER_OR_FOLLOWER forever: retried until message.timeout.ms, then a typed error.
    let (fake, log) = txn_fake(0, |_, _| {
        Some(ProduceAnswer::Error(ResponseError::NotLeaderOrFollower))
    })
    .await;
    let client = Client::connect(fake.config(&["message.timeout.ms=200"]))
        .await
        .unwrap();
    let mut p = client.transactional_producer("t").await.unwrap();
    p.begin().unwrap();
    let e = p.produce(TOPIC, 0, batches()).await.unwrap_err();
    assert_eq!(
        e.kafka_code().and_then(|c| c.response_error()),
        Some(ResponseError::NotLeaderOrFollower),
        "{e}"
    );
    let sent = log.lock().unwrap().sent.clone();
    assert!(sent.len() > 3, "retried");
    assert!(sent.iter().all(|s| s.sequence % 3 == 0 && s.sequence <= 6));
    assert!(matches!(p.commit().await, Err(Error::ProducerState(_))));

    for fatal in [
        ResponseError::ProducerFenced,
        ResponseError::InvalidProducerEpoch,
        ResponseError::MessageTooLarge,
        ResponseError::TopicAuthorizationFailed,
    ] {
        let (fake, log) = txn_fake(0, move |_, _| Some(ProduceAnswer::Error(fatal))).await;
        let client = Client::connect(fake.config(&[])).await.unwrap();
        let mut p = client.transactional_producer("t").await.unwrap();
        p.begin().unwrap();
        let e = p.produce(TOPIC, 0, batches()).await.unwrap_err();
        let msg = e.to_string();
        let name = e.kafka_code().unwrap().name();
        assert!(
            msg.contains("Produce") && msg.contains(&name) && msg.contains(&fake.addr()),
            "{msg}"
        );
        assert_eq!(e.kafka_code().and_then(|c| c.response_error()), Some(fatal));
        // All three were in flight (max.in.flight 5) when the first answer came; none again.
        // (The fake's thread may still be reading the last of them.)
        let sent = || log.lock().unwrap().sent.len();
        for _ in 0..200 {
            if sent() >= 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(sent(), 3, "no retry of {name}");
        assert!(matches!(
            p.produce(TOPIC, 0, batches()).await,
            Err(Error::ProducerState(_))
        ));
    }
}

#[tokio::test]
async fn producer_state_errors() {
    let (fake, _) = txn_fake(0, |_, _| None).await;
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let mut p = client.transactional_producer("t").await.unwrap();
    assert!(matches!(
        p.produce(TOPIC, 0, batches()).await,
        Err(Error::ProducerState(_))
    ));
    assert!(matches!(p.commit().await, Err(Error::ProducerState(_))));
    p.begin().unwrap();
    assert!(matches!(p.begin(), Err(Error::ProducerState(_))));
    // A batch that is not one whole v2 batch is refused before anything is sent.
    let two = batches().concat();
    assert!(matches!(
        p.produce(TOPIC, 0, vec![two]).await,
        Err(Error::Corrupt { .. })
    ));
}

#[tokio::test]
async fn coordinator_errors_are_retried_with_a_new_lookup() {
    let (fake, log) = txn_fake(0, |_, _| None).await;
    {
        let mut log = log.lock().unwrap();
        log.end_txn_errors = 2;
        log.offset_fetch_errors = 3;
    }
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let mut p = client.transactional_producer("t").await.unwrap();
    let lookups = fake.count(ApiKey::FindCoordinator);
    p.begin().unwrap();
    p.produce(TOPIC, 0, batches()).await.unwrap();
    p.send_offsets(
        "g",
        &[OffsetToCommit {
            topic: TOPIC.into(),
            partition: 0,
            offset: 9,
            metadata: None,
        }],
    )
    .await
    .unwrap();
    // NOT_COORDINATOR twice: each time the coordinator is looked up again.
    p.commit().await.unwrap();
    assert_eq!(log.lock().unwrap().end_txn, [true]);
    assert_eq!(fake.count(ApiKey::EndTxn), 3);
    // One lookup for the group, two after the NOT_COORDINATOR answers.
    assert_eq!(fake.count(ApiKey::FindCoordinator), lookups + 3);
    // A pending transaction's offsets (UNSTABLE_OFFSET_COMMIT) are waited for.
    let committed = client.offset_fetch("g", TOPIC, &[0], true).await.unwrap();
    assert_eq!(committed[0].offset, Some(9));
    assert_eq!(fake.count(ApiKey::OffsetFetch), 4);
}

#[tokio::test]
async fn partitions_sent_in_turn_each_have_a_connection_and_their_own_sequences() {
    let (fake, log) = txn_fake(0, |_, _| None).await;
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let mut p = client.transactional_producer("t").await.unwrap();
    p.begin().unwrap();
    let originals = batches();
    for b in &originals {
        for partition in [0, 1] {
            p.send(TOPIC, partition, BytesMut::from(&b[..]))
                .await
                .unwrap();
        }
    }
    let produced = p.flush().await.unwrap();
    // Per partition in send order, partitions in the order first sent to.
    let got: Vec<(i32, i32)> = produced
        .iter()
        .map(|pr| (pr.partition, pr.base_sequence))
        .collect();
    assert_eq!(got, [(0, 0), (0, 3), (0, 6), (1, 0), (1, 3), (1, 6)]);
    assert!(produced.iter().all(|pr| pr.topic == TOPIC));
    assert!(produced
        .iter()
        .all(|pr| pr.base_offset == Some(i64::from(pr.base_sequence) + 100)));
    p.commit().await.unwrap();
    let log = log.lock().unwrap();
    assert_eq!(log.appended[&0], [0, 3, 6]);
    assert_eq!(log.appended[&1], [0, 3, 6]);
    assert_eq!(log.end_txn, [true]);
    let conn_of = |partition: i32| {
        let conns: std::collections::BTreeSet<usize> = log
            .sent
            .iter()
            .filter(|s| s.partition == partition)
            .map(|s| s.connection)
            .collect();
        assert_eq!(conns.len(), 1, "partition {partition}: {conns:?}");
        conns.into_iter().next().unwrap()
    };
    assert_ne!(conn_of(0), conn_of(1), "a connection per partition");
}

#[tokio::test]
async fn a_buffer_memory_smaller_than_a_batch_still_sends_every_batch() {
    for property in ["buffer.memory=1", "queue.buffering.max.kbytes=1"] {
        let (fake, log) = txn_fake(0, |_, _| None).await;
        let client = Client::connect(fake.config(&[property])).await.unwrap();
        let mut p = client.transactional_producer("t").await.unwrap();
        p.begin().unwrap();
        for round in 0..3 {
            for b in batches() {
                p.send(TOPIC, round % 2, BytesMut::from(&b[..]))
                    .await
                    .unwrap();
            }
        }
        assert_eq!(p.flush().await.unwrap().len(), 9, "{property}");
        p.commit().await.unwrap();
        assert_eq!(log.lock().unwrap().sent.len(), 9, "{property}");
    }
    assert!(ClientConfig::from_pairs(["buffer.memory=0"]).is_err());
    assert!(ClientConfig::from_pairs(["queue.buffering.max.kbytes=0"]).is_err());
}

#[tokio::test]
async fn an_abort_waits_for_every_produce_answer_before_end_txn() {
    let (fake, log) = txn_fake(0, |_, _| None).await;
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let mut p = client.transactional_producer("t").await.unwrap();
    p.begin().unwrap();
    for b in batches() {
        p.send(TOPIC, 0, BytesMut::from(&b[..])).await.unwrap();
        p.send(TOPIC, 1, BytesMut::from(&b[..])).await.unwrap();
    }
    p.abort().await.unwrap();
    assert_eq!(log.lock().unwrap().end_txn, [false]);
    let seen = fake.seen();
    let end = seen.iter().position(|s| s.key == ApiKey::EndTxn).unwrap();
    let produce: Vec<usize> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| s.key == ApiKey::Produce)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(produce.len(), 6);
    assert!(produce.iter().all(|i| *i < end), "{seen:?}");
    // The aborted batches' acknowledgements are not handed out by a later flush.
    p.begin().unwrap();
    assert!(p.flush().await.unwrap().is_empty());
}

#[tokio::test]
async fn concurrent_transactions_after_a_commit_is_retried_without_the_full_backoff() {
    let (fake, log) = txn_fake(0, |_, _| None).await;
    log.lock().unwrap().add_partitions_errors = 3;
    // retry.backoff.ms of 10 minutes: only the short CONCURRENT_TRANSACTIONS backoff lets this
    // finish (the bound below is a hang guard, not a measurement).
    let config = fake.config(&[
        "retry.backoff.ms=600000",
        "retry.backoff.max.ms=600000",
        "message.timeout.ms=600000",
    ]);
    let client = Client::connect(config).await.unwrap();
    let mut p = client.transactional_producer("t").await.unwrap();
    p.begin().unwrap();
    let done = tokio::time::timeout(Duration::from_secs(120), async {
        p.produce(TOPIC, 0, batches()).await?;
        p.commit().await
    })
    .await;
    assert!(matches!(done, Ok(Ok(()))), "{done:?}");
    assert_eq!(fake.count(ApiKey::AddPartitionsToTxn), 4);
    assert_eq!(log.lock().unwrap().end_txn, [true]);
}

#[tokio::test]
async fn a_partition_that_failed_stops_the_next_send_to_any_partition() {
    // Partition 1 is refused (MESSAGE_TOO_LARGE); sends to partition 0 go on until the failure
    // is seen, which must happen before any flush or commit.
    let (fake, _) = txn_fake(0, |_, partition| {
        (partition == 1).then_some(ProduceAnswer::Error(ResponseError::MessageTooLarge))
    })
    .await;
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let mut p = client.transactional_producer("t").await.unwrap();
    p.begin().unwrap();
    let b = batches().remove(0);
    p.send(TOPIC, 1, BytesMut::from(&b[..])).await.unwrap();
    let mut failed = None;
    // Bounded: the refusal arrives within milliseconds; the bound is a hang guard.
    for _ in 0..100_000 {
        if let Err(e) = p.send(TOPIC, 0, BytesMut::from(&b[..])).await {
            failed = Some(e);
            break;
        }
        tokio::task::yield_now().await;
    }
    let e = failed.expect("the refusal of partition 1 was never reported");
    assert_eq!(
        e.kafka_code().and_then(|c| c.response_error()),
        Some(ResponseError::MessageTooLarge),
        "{e}"
    );
    assert!(matches!(p.flush().await, Err(Error::ProducerState(_))));
}

#[tokio::test]
async fn tls_handshake_failures_point_at_their_cause() {
    let fake = start_tls(false, |ctx, header, _| {
        basic(ctx, header).unwrap_or(Action::Close)
    });
    // A CA that did not sign the broker's certificate: the listener speaks TLS, the CA is
    // wrong.
    let other = format!("ssl.ca.location={}", fixture("other-ca.pem").display());
    let e = Client::connect(tls_config(&fake, "localhost", &[other]))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "UnknownIssuer: the broker's certificate is not signed by a trusted CA: set -X \
             ssl.ca.location to the PEM file of the CA that signed it"
        ),
        "{e}"
    );
    assert!(!e.contains("plaintext"), "{e}");

    // The right CA, another host name.
    let ca = format!("ssl.ca.location={}", fixture("ca.pem").display());
    let e = Client::connect(tls_config(&fake, "127.0.0.1", std::slice::from_ref(&ca)))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("not for the host name \"127.0.0.1\""), "{e}");
    assert!(!e.contains("plaintext"), "{e}");

    // TLS to a plaintext listener: the peer does not speak TLS at all (a Kafka listener
    // reads the ClientHello as a frame size far too large and hangs up).
    let plain = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = plain.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::Read;
        if let Ok((mut sock, _)) = plain.accept() {
            let _ = sock.read(&mut [0; 4]);
        }
    });
    let mut config = tls_config(&fake, "127.0.0.1", &[ca]);
    config.bootstrap_servers = vec![format!("127.0.0.1:{port}")];
    let e = Client::connect(config).await.unwrap_err().to_string();
    assert!(e.contains("the listener probably speaks plaintext"), "{e}");
}

#[tokio::test]
async fn a_connection_setup_that_hangs_names_its_stage_and_timeout() {
    // A listener whose connections are never served: the TCP connect completes (the kernel
    // accepts into the backlog), the TLS handshake gets no answer.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let config = |extra: &str| {
        ClientConfig::from_pairs([
            format!("bootstrap.servers={addr}"),
            "socket.connection.setup.timeout.ms=300".to_owned(),
            "retries=0".to_owned(),
            extra.to_owned(),
        ])
        .unwrap()
    };
    let started = std::time::Instant::now();
    let e = Client::connect(config("security.protocol=SSL"))
        .await
        .unwrap_err()
        .to_string();
    assert!(started.elapsed() < Duration::from_secs(3), "{e}");
    assert!(
        e.contains(&format!("{addr}: TLS handshake: timed out after 300ms")),
        "{e}"
    );
    // In plaintext, the ApiVersions request is the one that goes unanswered.
    let e = Client::connect(config("security.protocol=PLAINTEXT"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("{addr}: ApiVersions: timed out after 300ms")),
        "{e}"
    );
    drop(silent);
}

#[tokio::test]
async fn a_broker_that_stops_answering_mid_read_fails_after_one_timeout() {
    // The broker answers the first Fetch, then stops answering anything, on any connection
    // (as a broker paused with SIGSTOP: the kernel still accepts connections).
    let fake =
        Fake::start(
            |ctx, header, _| match ApiKey::try_from(header.request_api_key).unwrap() {
                ApiKey::ApiVersions if ctx.connection == 1 => {
                    Action::Send(api_versions(header, false))
                }
                ApiKey::Metadata if ctx.connection == 1 => {
                    Action::Send(metadata(ctx, header, 0, 0))
                }
                ApiKey::Fetch if ctx.nth == 0 => {
                    let records: Vec<u8> = batches().concat();
                    Action::Send(fetch_of_nine(header, records.into()))
                }
                _ => Action::Silence,
            },
        );
    let client =
        Client::connect(fake.config(&["socket.timeout.ms=400", "retries=5", "retry.backoff.ms=1"]))
            .await
            .unwrap();
    client
        .fetch(TOPIC, 0, 0, IsolationLevel::ReadCommitted, 1 << 20)
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let e = client
        .fetch(TOPIC, 0, 9, IsolationLevel::ReadCommitted, 1 << 20)
        .await
        .unwrap_err();
    let took = started.elapsed();
    // One Fetch timeout (socket.timeout.ms + fetch.wait.max.ms), not one per retry.
    assert!(took < Duration::from_millis(1000), "{took:?}: {e}");
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("{}: Fetch: timed out after 410ms", fake.addr())),
        "{e}"
    );
}

/// A fake that answers an idempotent producer's InitProducerId with `errors` in turn, then
/// with producer id 77.
fn init_fake(errors: Vec<ResponseError>) -> Fake {
    Fake::start(
        move |ctx, header, _| match ApiKey::try_from(header.request_api_key).unwrap() {
            ApiKey::ApiVersions => Action::Send(producer_api_versions(header)),
            ApiKey::Metadata => Action::Send(metadata_of(ctx, header, 0, 0, 1)),
            ApiKey::InitProducerId => {
                let resp = match errors.get(ctx.nth) {
                    Some(e) => InitProducerIdResponse::default().with_error_code(e.code()),
                    None => InitProducerIdResponse::default()
                        .with_producer_id(ProducerId(77))
                        .with_producer_epoch(0),
                };
                Action::Send(frame(header, &resp))
            }
            _ => Action::Close,
        },
    )
}

#[tokio::test]
async fn an_idempotent_producer_retries_a_loading_coordinator() {
    // A broker just restarted: its coordinator state is loading, then moves.
    let fake = init_fake(vec![
        ResponseError::CoordinatorLoadInProgress,
        ResponseError::CoordinatorLoadInProgress,
        ResponseError::CoordinatorNotAvailable,
        ResponseError::NotCoordinator,
        ResponseError::ConcurrentTransactions,
    ]);
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let p = client.idempotent_producer().await.unwrap();
    assert_eq!(p.producer_id(), 77);
    assert_eq!(fake.count(ApiKey::InitProducerId), 6);

    // Not retriable: the first answer is the error.
    let fake = init_fake(vec![ResponseError::ClusterAuthorizationFailed]);
    let client = Client::connect(fake.config(&[])).await.unwrap();
    let e = client.idempotent_producer().await.unwrap_err();
    assert!(
        e.to_string().contains("CLUSTER_AUTHORIZATION_FAILED"),
        "{e}"
    );
    assert_eq!(fake.count(ApiKey::InitProducerId), 1);

    // Retried until message.timeout.ms, then the last error.
    let fake = init_fake(vec![ResponseError::CoordinatorLoadInProgress; 10_000]);
    let client = Client::connect(fake.config(&["message.timeout.ms=200"]))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let e = client.idempotent_producer().await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3), "{e}");
    assert!(
        e.to_string().contains("COORDINATOR_LOAD_IN_PROGRESS"),
        "{e}"
    );
    assert!(fake.count(ApiKey::InitProducerId) > 2);
}
