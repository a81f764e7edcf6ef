//! A scriptable fake Kafka broker on 127.0.0.1: each request is handed to a handler that
//! answers with bytes (a whole frame, or a hostile one), closes the connection, or stays
//! silent. Plain threads, a thread per connection, so it serves blocking and async clients
//! alike (and tests that run their own runtime).

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::add_partitions_to_txn_response::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnTopicResult,
};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{
    AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, ApiKey, ApiVersionsResponse, BrokerId,
    FetchResponse, FindCoordinatorRequest, FindCoordinatorResponse, MetadataResponse,
    RequestHeader, ResponseHeader, TopicName,
};
use kafka_protocol::protocol::{
    decode_request_header_from_buffer, Encodable, HeaderVersion, StrBytes,
};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use uuid::Uuid;

/// What the fake broker does with one request.
#[derive(Debug)]
pub enum Action {
    /// Send these bytes (a whole frame, or a hostile one).
    Send(Vec<u8>),
    /// Send these bytes, then close the connection.
    SendAndClose(Vec<u8>),
    /// Close without answering.
    Close,
    /// Never answer (the connection stays open for 30 s).
    Silence,
}

/// One received request.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Its API.
    pub key: ApiKey,
    /// Its version.
    pub version: i16,
    /// The connection it came on (numbered from 1 in the order they were accepted).
    pub connection: usize,
}

/// What a handler knows about a request.
#[derive(Debug)]
pub struct Ctx {
    /// The host the fake advertises (`127.0.0.1`, or `localhost` behind TLS).
    pub host: &'static str,
    /// Its port.
    pub port: u16,
    /// How many requests of this key came before this one, on all connections.
    pub nth: usize,
    /// The connection (numbered from 1 in the order they were accepted).
    pub connection: usize,
}

type Handler = dyn Fn(&Ctx, &RequestHeader, Bytes) -> Action + Send + Sync;

/// A running fake broker (it runs until the test process ends).
#[derive(Debug, Clone)]
pub struct Fake {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    /// Listens on a free local port and answers every request with `handler`.
    pub fn start(
        handler: impl Fn(&Ctx, &RequestHeader, Bytes) -> Action + Send + Sync + 'static,
    ) -> Fake {
        Self::listen(None, handler)
    }

    /// As [`Fake::start`], behind TLS with `tls` (it advertises `localhost`).
    pub fn start_tls(
        tls: Arc<rustls::ServerConfig>,
        handler: impl Fn(&Ctx, &RequestHeader, Bytes) -> Action + Send + Sync + 'static,
    ) -> Fake {
        Self::listen(Some(tls), handler)
    }

    fn listen(
        tls: Option<Arc<rustls::ServerConfig>>,
        handler: impl Fn(&Ctx, &RequestHeader, Bytes) -> Action + Send + Sync + 'static,
    ) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let seen2 = Arc::clone(&seen);
        std::thread::spawn(move || {
            for (n, sock) in listener.incoming().enumerate() {
                let Ok(sock) = sock else { return };
                let connection = n + 1;
                let (handler, seen) = (Arc::clone(&handler), Arc::clone(&seen2));
                let tls = tls.clone();
                std::thread::spawn(move || match tls {
                    None => serve(sock, "127.0.0.1", port, connection, &*handler, &seen),
                    Some(config) => {
                        let Ok(conn) = rustls::ServerConnection::new(config) else {
                            return;
                        };
                        let stream = rustls::StreamOwned::new(conn, sock);
                        serve(stream, "localhost", port, connection, &*handler, &seen);
                    }
                });
            }
        });
        Fake { port, seen }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// How many requests of `key` it received.
    pub fn count(&self, key: ApiKey) -> usize {
        self.seen().iter().filter(|s| s.key == key).count()
    }

    /// Every request received, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn serve<S: Read + Write>(
    mut sock: S,
    host: &'static str,
    port: u16,
    connection: usize,
    handler: &Handler,
    seen: &Mutex<Vec<Seen>>,
) {
    loop {
        let mut size = [0; 4];
        if sock.read_exact(&mut size).is_err() {
            return;
        }
        let Ok(size) = usize::try_from(i32::from_be_bytes(size)) else {
            return;
        };
        let mut buf = vec![0; size];
        if sock.read_exact(&mut buf).is_err() {
            return;
        }
        let mut body = Bytes::from(buf);
        let Ok(header) = decode_request_header_from_buffer(&mut body) else {
            return;
        };
        let Ok(key) = ApiKey::try_from(header.request_api_key) else {
            return;
        };
        let nth = {
            let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
            let nth = seen.iter().filter(|s| s.key == key).count();
            seen.push(Seen {
                key,
                version: header.request_api_version,
                connection,
            });
            nth
        };
        let ctx = Ctx {
            host,
            port,
            nth,
            connection,
        };
        match handler(&ctx, &header, body) {
            Action::Send(bytes) => {
                if sock.write_all(&bytes).and_then(|()| sock.flush()).is_err() {
                    return;
                }
            }
            Action::SendAndClose(bytes) => {
                let _ = sock.write_all(&bytes).and_then(|()| sock.flush());
                return;
            }
            Action::Close => return,
            Action::Silence => {
                std::thread::sleep(Duration::from_secs(30));
                return;
            }
        }
    }
}

/// A whole response frame: size, header, body.
pub fn frame<R: Encodable + HeaderVersion>(header: &RequestHeader, resp: &R) -> Vec<u8> {
    let version = header.request_api_version;
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&[0; 4]);
    ResponseHeader::default()
        .with_correlation_id(header.correlation_id)
        .encode(&mut buf, R::header_version(version))
        .expect("encode a response header");
    resp.encode(&mut buf, version).expect("encode a response");
    let size = i32::try_from(buf.len() - 4).expect("a small frame");
    buf[..4].copy_from_slice(&size.to_be_bytes());
    buf.to_vec()
}

/// An ApiVersions answer offering `keys` (key, min, max).
pub fn api_versions_of(header: &RequestHeader, keys: &[(ApiKey, i16, i16)]) -> Vec<u8> {
    let resp = ApiVersionsResponse::default().with_api_keys(
        keys.iter()
            .map(|&(k, min, max)| {
                ApiVersion::default()
                    .with_api_key(k as i16)
                    .with_min_version(min)
                    .with_max_version(max)
            })
            .collect(),
    );
    frame(header, &resp)
}

/// The versions a fake that reads offers: ApiVersions, Metadata, ListOffsets, Fetch.
pub const READ_APIS: [(ApiKey, i16, i16); 4] = [
    (ApiKey::ApiVersions, 0, 3),
    (ApiKey::Metadata, 0, 12),
    (ApiKey::ListOffsets, 1, 8),
    (ApiKey::Fetch, 4, 16),
];

/// The versions a fake transaction and group coordinator offers, besides [`READ_APIS`].
pub const TXN_APIS: [(ApiKey, i16, i16); 8] = [
    (ApiKey::Produce, 3, 12),
    (ApiKey::FindCoordinator, 0, 6),
    (ApiKey::InitProducerId, 0, 5),
    (ApiKey::AddPartitionsToTxn, 0, 5),
    (ApiKey::AddOffsetsToTxn, 0, 4),
    (ApiKey::TxnOffsetCommit, 0, 5),
    (ApiKey::EndTxn, 0, 5),
    (ApiKey::OffsetFetch, 1, 9),
];

/// A FindCoordinator answer: the fake is the coordinator of every key asked for.
pub fn find_coordinator(
    ctx: &Ctx,
    header: &RequestHeader,
    req: &FindCoordinatorRequest,
) -> Vec<u8> {
    let mut resp = FindCoordinatorResponse::default();
    if header.request_api_version >= 4 {
        resp = resp.with_coordinators(
            req.coordinator_keys
                .iter()
                .map(|k| {
                    Coordinator::default()
                        .with_key(k.clone())
                        .with_node_id(BrokerId(0))
                        .with_host(StrBytes::from_static_str(ctx.host))
                        .with_port(i32::from(ctx.port))
                })
                .collect(),
        );
    } else {
        resp = resp
            .with_node_id(BrokerId(0))
            .with_host(StrBytes::from_static_str(ctx.host))
            .with_port(i32::from(ctx.port));
    }
    frame(header, &resp)
}

/// An AddPartitionsToTxn answer (versions up to 3) with error `code` for every partition.
pub fn add_partitions_to_txn(
    header: &RequestHeader,
    req: &AddPartitionsToTxnRequest,
    code: i16,
) -> Vec<u8> {
    let resp = AddPartitionsToTxnResponse::default().with_results_by_topic_v3_and_below(
        req.v3_and_below_topics
            .iter()
            .map(|t| {
                AddPartitionsToTxnTopicResult::default()
                    .with_name(t.name.clone())
                    .with_results_by_partition(
                        t.partitions
                            .iter()
                            .map(|p| {
                                AddPartitionsToTxnPartitionResult::default()
                                    .with_partition_index(*p)
                                    .with_partition_error_code(code)
                            })
                            .collect(),
                    )
            })
            .collect(),
    );
    frame(header, &resp)
}

/// A topic as [`metadata`] describes it.
#[derive(Debug, Clone, Copy)]
pub struct TopicInfo<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its id.
    pub id: Uuid,
    /// Its partitions, all led by the fake.
    pub partitions: i32,
    /// The topic's error code.
    pub error: i16,
    /// Every partition's error code (a partition with an error has no leader).
    pub partition_error: i16,
}

impl<'a> TopicInfo<'a> {
    /// A topic without errors (its id derived from the name).
    pub fn new(name: &'a str, partitions: i32) -> Self {
        TopicInfo {
            name,
            id: topic_id(name),
            partitions,
            error: 0,
            partition_error: 0,
        }
    }
}

/// A stable topic id for a name.
pub fn topic_id(name: &str) -> Uuid {
    let mut h: u128 = 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef;
    for b in name.bytes() {
        h = h.rotate_left(7) ^ u128::from(b);
    }
    Uuid::from_u128(h)
}

/// A Metadata answer: the fake (`host:port`, node 0) leads every partition of `topics`.
pub fn metadata(
    header: &RequestHeader,
    host: &'static str,
    port: u16,
    topics: &[TopicInfo<'_>],
) -> Vec<u8> {
    let resp = MetadataResponse::default()
        .with_brokers(vec![MetadataResponseBroker::default()
            .with_node_id(BrokerId(0))
            .with_host(StrBytes::from_static_str(host))
            .with_port(i32::from(port))])
        .with_cluster_id(Some(StrBytes::from_static_str("fake")))
        .with_topics(
            topics
                .iter()
                .map(|t| {
                    MetadataResponseTopic::default()
                        .with_name(Some(TopicName(StrBytes::from_string(t.name.to_owned()))))
                        .with_error_code(t.error)
                        .with_topic_id(t.id)
                        .with_partitions(
                            (0..t.partitions)
                                .map(|p| {
                                    let leader = if t.partition_error == 0 { 0 } else { -1 };
                                    MetadataResponsePartition::default()
                                        .with_partition_index(p)
                                        .with_error_code(t.partition_error)
                                        .with_leader_id(BrokerId(leader))
                                        .with_leader_epoch(7)
                                        .with_replica_nodes(vec![BrokerId(0)])
                                        .with_isr_nodes(vec![BrokerId(0)])
                                })
                                .collect(),
                        )
                })
                .collect(),
        );
    frame(header, &resp)
}

/// A Fetch answer for one partition of topic `name` (named by its id from version 13).
pub fn fetch_response(header: &RequestHeader, name: &str, partition: PartitionData) -> Vec<u8> {
    let mut topic = FetchableTopicResponse::default().with_partitions(vec![partition]);
    if header.request_api_version >= 13 {
        topic = topic.with_topic_id(topic_id(name));
    } else {
        topic = topic.with_topic(TopicName(StrBytes::from_string(name.to_owned())));
    }
    frame(
        header,
        &FetchResponse::default().with_responses(vec![topic]),
    )
}
