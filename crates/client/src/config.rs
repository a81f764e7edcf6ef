//! Client configuration with librdkafka's property names.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use krecords_codec::txn::IsolationLevel;

/// How the client talks to the brokers (`security.protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecurityProtocol {
    /// Plain TCP, no authentication.
    #[default]
    Plaintext,
    /// TLS, no SASL.
    Ssl,
    /// SASL over plain TCP.
    SaslPlaintext,
    /// SASL over TLS.
    SaslSsl,
}

impl SecurityProtocol {
    /// Whether connections use TLS.
    pub fn uses_tls(self) -> bool {
        matches!(self, Self::Ssl | Self::SaslSsl)
    }

    /// Whether connections authenticate with SASL.
    pub fn uses_sasl(self) -> bool {
        matches!(self, Self::SaslPlaintext | Self::SaslSsl)
    }
}

/// A SASL mechanism (`sasl.mechanism`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SaslMechanism {
    /// RFC 4616 PLAIN: the password is sent as is (use it over TLS only).
    #[default]
    Plain,
    /// RFC 5802/7677 SCRAM with SHA-256.
    ScramSha256,
    /// RFC 5802 SCRAM with SHA-512.
    ScramSha512,
}

impl SaslMechanism {
    /// The mechanism's name as sent in SaslHandshake.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plain => "PLAIN",
            Self::ScramSha256 => "SCRAM-SHA-256",
            Self::ScramSha512 => "SCRAM-SHA-512",
        }
    }
}

/// Client configuration, built from librdkafka property names.
///
/// Supported properties (the names of librdkafka's and the Java client's properties that do not
/// apply, such as `group.id`, `debug`, `acks`, `linger.ms`, `batch.size`, `compression.type` or
/// `enable.idempotence`, are accepted and listed in [`ClientConfig::ignored`] with why and what
/// krec does instead; anything else is an error naming it and the closest known name):
///
/// | property | default | meaning |
/// | --- | --- | --- |
/// | `bootstrap.servers` (`metadata.broker.list`) | none, required | `host:port[,host:port…]` |
/// | `client.id` | `krecords` | sent in every request header |
/// | `security.protocol` | `PLAINTEXT` | `PLAINTEXT`, `SSL`, `SASL_PLAINTEXT`, `SASL_SSL` |
/// | `sasl.mechanism` (`sasl.mechanisms`) | `PLAIN` | `PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512` |
/// | `sasl.username`, `sasl.password` | none | SASL credentials |
/// | `ssl.ca.location` | the system bundle | PEM file of trusted CA certificates |
/// | `ssl.certificate.location`, `ssl.key.location` | none | PEM client certificate and key (mutual TLS) |
/// | `ssl.endpoint.identification.algorithm` | `https` | only `https` (hostname verification) is supported |
/// | `socket.timeout.ms` (Java's `request.timeout.ms`) | 60000 | timeout of one request |
/// | `socket.connection.setup.timeout.ms` | 10000 | connect, TLS, ApiVersions and SASL of a new connection |
/// | `fetch.max.bytes` | 52428800 | `max_bytes` of a Fetch request |
/// | `max.partition.fetch.bytes` | 1048576 | the fetch window of [`crate::Client::stream_partition`] |
/// | `fetch.wait.max.ms` (Java's `fetch.max.wait.ms`) | 500 | how long a broker may wait for `fetch.min.bytes` |
/// | `fetch.min.bytes` | 1 | minimum bytes a Fetch response waits for |
/// | `receive.message.max.bytes` | 104923136 (100 MiB + 64 KiB) | largest response accepted; checked before allocation |
/// | `isolation.level` | `read_committed` | default isolation of [`crate::Client::stream_partition`] users |
/// | `retries` | 5 | retries of a read on a leader change, a lost connection or a timeout, while less than `socket.timeout.ms` has passed since its first attempt |
/// | `retry.backoff.ms`, `retry.backoff.max.ms` | 100, 1000 | backoff between retries, doubling |
/// | `transaction.timeout.ms` | 60000 | a producer's transaction timeout (InitProducerId) |
/// | `message.timeout.ms` (`delivery.timeout.ms`) | 120000 | how long a produce or a transactional request is retried before it fails |
/// | `max.in.flight.requests.per.connection` (`max.in.flight`) | 5 | Produce requests in flight per partition (1..=5, the idempotent producer's limit) |
/// | `sasl.jaas.config` | none | the Java client's `PlainLoginModule` or `ScramLoginModule` line: sets `sasl.username` and `sasl.password` |
/// | `queue.buffering.max.kbytes` (KiB) / `buffer.memory` (bytes) | 32 MiB | a producer's batches not acknowledged yet, all partitions together; a send waits while they take more (librdkafka's default is 1 GiB, Java's 32 MiB) |
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Bootstrap addresses, tried in order.
    pub bootstrap_servers: Vec<String>,
    /// `client.id`.
    pub client_id: String,
    /// `security.protocol`.
    pub security_protocol: SecurityProtocol,
    /// `sasl.mechanism`.
    pub sasl_mechanism: SaslMechanism,
    /// `sasl.username`.
    pub sasl_username: Option<String>,
    /// `sasl.password` (its `Debug` output is redacted).
    pub sasl_password: Option<Secret>,
    /// `ssl.ca.location`.
    pub ssl_ca_location: Option<PathBuf>,
    /// `ssl.certificate.location`.
    pub ssl_certificate_location: Option<PathBuf>,
    /// `ssl.key.location`.
    pub ssl_key_location: Option<PathBuf>,
    /// `socket.timeout.ms`.
    pub request_timeout: Duration,
    /// `socket.connection.setup.timeout.ms`.
    pub connect_timeout: Duration,
    /// `fetch.max.bytes`.
    pub fetch_max_bytes: i32,
    /// `max.partition.fetch.bytes`.
    pub max_partition_fetch_bytes: i32,
    /// `fetch.wait.max.ms`.
    pub fetch_wait_max: Duration,
    /// `fetch.min.bytes`.
    pub fetch_min_bytes: i32,
    /// `receive.message.max.bytes`.
    pub max_response_size: usize,
    /// `isolation.level`.
    pub isolation_level: IsolationLevel,
    /// `retries`.
    pub retries: u32,
    /// `retry.backoff.ms`.
    pub retry_backoff: Duration,
    /// `retry.backoff.max.ms`.
    pub retry_backoff_max: Duration,
    /// `transaction.timeout.ms`.
    pub transaction_timeout: Duration,
    /// `message.timeout.ms` / `delivery.timeout.ms`.
    pub delivery_timeout: Duration,
    /// `max.in.flight.requests.per.connection`.
    pub max_in_flight: usize,
    /// `queue.buffering.max.kbytes` (librdkafka's name, in KiB) or `buffer.memory` (Java's, in
    /// bytes): how many bytes of batches a producer holds that are not acknowledged yet
    /// (queued or in flight, all partitions together); a send waits while they are more.
    /// Default 32 MiB (librdkafka's default is 1 GiB, Java's 32 MiB).
    pub buffer_memory: usize,
    /// Properties of librdkafka or the Java client that were given but do not apply here
    /// (`group.id`, `debug`, ...), each with why: accepted and ignored, for the caller to warn
    /// about.
    pub ignored: Vec<String>,
}

/// librdkafka and Java client properties that mean nothing to a client that reads batches,
/// sends them as they are and commits no consumer offsets of its own: accepted with a warning
/// (so an existing client.properties works) and ignored. With why.
const NOT_APPLICABLE: &[(&str, &str)] = &[
    ("group.id", "krec commits no consumer offsets of its own"),
    ("group.instance.id", "krec joins no group"),
    ("group.protocol", "krec joins no group"),
    (
        "auto.offset.reset",
        "positions are given with --start/--end",
    ),
    (
        "enable.auto.commit",
        "krec commits no consumer offsets of its own",
    ),
    (
        "auto.commit.interval.ms",
        "krec commits no consumer offsets of its own",
    ),
    (
        "enable.auto.offset.store",
        "krec commits no consumer offsets of its own",
    ),
    ("session.timeout.ms", "krec joins no group"),
    ("heartbeat.interval.ms", "krec joins no group"),
    ("max.poll.interval.ms", "krec joins no group"),
    ("max.poll.records", "krec reads whole fetch responses"),
    ("partition.assignment.strategy", "krec joins no group"),
    ("debug", "krec has no librdkafka debug contexts"),
    ("log_level", "krec has no librdkafka log levels"),
    (
        "statistics.interval.ms",
        "krec emits no librdkafka statistics",
    ),
    (
        "message.max.bytes",
        "krec sends batches as they are; the broker's limit applies",
    ),
    (
        "max.request.size",
        "krec sends batches as they are; the broker's limit applies",
    ),
    (
        "enable.ssl.certificate.verification",
        "certificates are always verified",
    ),
    ("api.version.request", "ApiVersions is always sent"),
    ("broker.version.fallback", "ApiVersions is always sent"),
    ("enable.partition.eof", "krec stops at the end it was given"),
    ("key.deserializer", "krec reads raw bytes"),
    ("value.deserializer", "krec reads raw bytes"),
    ("key.serializer", "krec writes raw bytes"),
    ("value.serializer", "krec writes raw bytes"),
    ("client.rack", "krec fetches from leaders"),
    ("socket.keepalive.enable", "not configurable here"),
    ("reconnect.backoff.ms", "retry.backoff.ms applies"),
    ("reconnect.backoff.max.ms", "retry.backoff.max.ms applies"),
    ("metadata.max.age.ms", "metadata is fetched when needed"),
    (
        "topic.metadata.refresh.interval.ms",
        "metadata is fetched when needed",
    ),
    ("allow.auto.create.topics", "krec never creates topics"),
    ("check.crcs", "krec always checks CRCs"),
    ("linger.ms", "krec sends batches as they are"),
    ("queue.buffering.max.ms", "krec sends batches as they are"),
    ("acks", "krec always produces with acks=all"),
    (
        "request.required.acks",
        "krec always produces with acks=all",
    ),
    ("enable.idempotence", "krec's producer is always idempotent"),
    ("compression.type", "use --compression"),
    ("compression.codec", "use --compression"),
    ("batch.size", "use --records-per-batch"),
    ("batch.num.messages", "use --records-per-batch"),
    (
        "partitioner.class",
        "krec partitions as Java's default partitioner does (murmur2 of the key)",
    ),
    (
        "partitioner",
        "krec partitions as Java's default partitioner does (murmur2 of the key)",
    ),
    ("max.block.ms", "message.timeout.ms bounds a produce"),
    (
        "default.api.timeout.ms",
        "socket.timeout.ms bounds each request",
    ),
    (
        "connections.max.idle.ms",
        "krec reopens a connection the broker closed",
    ),
    (
        "client.dns.lookup",
        "krec connects to each address it resolves",
    ),
    ("send.buffer.bytes", "the system's socket buffers apply"),
    ("receive.buffer.bytes", "the system's socket buffers apply"),
    (
        "exclude.internal.topics",
        "krec reads the topics it is given",
    ),
];

/// The properties [`ClientConfig::set`] takes, for "did you mean" suggestions.
const KNOWN: &[&str] = &[
    "bootstrap.servers",
    "metadata.broker.list",
    "client.id",
    "security.protocol",
    "sasl.mechanism",
    "sasl.mechanisms",
    "sasl.username",
    "sasl.password",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.endpoint.identification.algorithm",
    "socket.timeout.ms",
    "request.timeout.ms",
    "socket.connection.setup.timeout.ms",
    "fetch.max.bytes",
    "max.partition.fetch.bytes",
    "fetch.wait.max.ms",
    "fetch.max.wait.ms",
    "fetch.min.bytes",
    "receive.message.max.bytes",
    "isolation.level",
    "retries",
    "retry.backoff.ms",
    "retry.backoff.max.ms",
    "transaction.timeout.ms",
    "message.timeout.ms",
    "delivery.timeout.ms",
    "queue.buffering.max.kbytes",
    "buffer.memory",
    "max.in.flight.requests.per.connection",
    "max.in.flight",
    "sasl.jaas.config",
];

/// Edit distance (insertions, deletions, substitutions), on bytes; property names are short.
fn distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut prev = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, &cb) in b.iter().enumerate() {
            let (Some(&left), Some(&up)) = (row.get(j), row.get(j + 1)) else {
                break;
            };
            let cost = if ca == cb { prev } else { prev + 1 };
            let v = cost.min(left + 1).min(up + 1);
            prev = up;
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = v;
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

/// The known property closest to `name`, when it is close.
fn closest(name: &str) -> Option<&'static str> {
    KNOWN
        .iter()
        .chain(NOT_APPLICABLE.iter().map(|(n, _)| n))
        .map(|k| (distance(name, k), *k))
        .filter(|&(d, k)| d <= (k.len() / 3).max(2))
        .min()
        .map(|(_, k)| k)
}

/// A secret string (`sasl.password`): readable as a `&str`, shown as `"<redacted>"` by `Debug`,
/// so that logging a configuration, a client or a stream never prints it.
///
/// ```
/// use krecords_client::ClientConfig;
/// let c = ClientConfig::from_pairs(["bootstrap.servers=b:9092", "sasl.password=hunter2"]).unwrap();
/// assert_eq!(c.sasl_password.as_deref(), Some("hunter2"));
/// assert!(!format!("{c:?}").contains("hunter2"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        Secret(secret.into())
    }
}

impl std::ops::Deref for Secret {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Secret {
    /// A `NAME=VALUE` property as a message may show it: the value of a property holding a
    /// secret (`sasl.password`, `sasl.jaas.config`, any `*.password` or `*.secret`) as
    /// `<redacted>`, others as given.
    ///
    /// ```
    /// use krecords_client::Secret;
    /// assert_eq!(Secret::shown("sasl.password=hunter2"), "sasl.password=<redacted>");
    /// assert_eq!(Secret::shown("acks=1"), "acks=1");
    /// ```
    pub fn shown(pair: &str) -> String {
        match pair.split_once('=') {
            Some((name, _)) if is_secret(name.trim()) => format!("{name}=<redacted>"),
            _ => pair.to_owned(),
        }
    }
}

/// Whether the property `name` holds a secret.
fn is_secret(name: &str) -> bool {
    name == "sasl.jaas.config" || name.ends_with(".password") || name.ends_with(".secret")
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("\"<redacted>\"")
    }
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            bootstrap_servers: Vec::new(),
            client_id: "krecords".to_owned(),
            security_protocol: SecurityProtocol::Plaintext,
            sasl_mechanism: SaslMechanism::Plain,
            sasl_username: None,
            sasl_password: None,
            ssl_ca_location: None,
            ssl_certificate_location: None,
            ssl_key_location: None,
            request_timeout: Duration::from_millis(60_000),
            // kcat's and librdkafka's: a listener that does not answer fails within 10 s.
            connect_timeout: Duration::from_millis(10_000),
            fetch_max_bytes: 52_428_800,
            max_partition_fetch_bytes: 1_048_576,
            fetch_wait_max: Duration::from_millis(500),
            fetch_min_bytes: 1,
            max_response_size: 100 * 1024 * 1024 + 64 * 1024,
            isolation_level: IsolationLevel::ReadCommitted,
            retries: 5,
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_millis(1000),
            transaction_timeout: Duration::from_millis(60_000),
            delivery_timeout: Duration::from_millis(120_000),
            max_in_flight: 5,
            buffer_memory: 32 << 20,
            ignored: Vec::new(),
        }
    }
}

fn config_err(msg: impl Into<String>) -> Error {
    Error::Config(msg.into())
}

fn positive(name: &str, n: usize) -> Result<usize> {
    if n == 0 {
        return Err(config_err(format!("{name}: must be at least 1")));
    }
    Ok(n)
}

fn parse_num<T: std::str::FromStr>(name: &str, value: &str) -> Result<T> {
    value
        .trim()
        .parse()
        .map_err(|_| config_err(format!("{name}: not a valid number: {value:?}")))
}

fn parse_ms(name: &str, value: &str) -> Result<Duration> {
    let ms: u64 = parse_num(name, value)?;
    Ok(Duration::from_millis(ms))
}

fn parse_positive_i32(name: &str, value: &str) -> Result<i32> {
    let n: i32 = parse_num(name, value)?;
    if n <= 0 {
        return Err(config_err(format!("{name}: must be positive, got {n}")));
    }
    Ok(n)
}

impl ClientConfig {
    /// A default configuration with the given bootstrap servers (`host:port,host:port`).
    ///
    /// # Errors
    ///
    /// An empty list.
    pub fn new(bootstrap_servers: &str) -> Result<Self> {
        let mut c = ClientConfig::default();
        c.set("bootstrap.servers", bootstrap_servers)?;
        Ok(c)
    }

    /// Sets one property by its librdkafka name.
    ///
    /// # Errors
    ///
    /// An unknown name (the error names it) or a value that does not parse.
    pub fn set(&mut self, name: &str, value: &str) -> Result<&mut Self> {
        let v = value.trim();
        match name.trim() {
            "bootstrap.servers" | "metadata.broker.list" => {
                let servers: Vec<String> = v
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
                if servers.is_empty() {
                    return Err(config_err(format!("{name}: no address given")));
                }
                for s in &servers {
                    split_host_port(s)?;
                }
                self.bootstrap_servers = servers;
            }
            "client.id" => self.client_id = v.to_owned(),
            "security.protocol" => {
                self.security_protocol = match v.to_ascii_uppercase().as_str() {
                    "PLAINTEXT" => SecurityProtocol::Plaintext,
                    "SSL" => SecurityProtocol::Ssl,
                    "SASL_PLAINTEXT" => SecurityProtocol::SaslPlaintext,
                    "SASL_SSL" => SecurityProtocol::SaslSsl,
                    _ => {
                        return Err(config_err(format!(
                            "{name}: {v:?} is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"
                        )))
                    }
                }
            }
            "sasl.mechanism" | "sasl.mechanisms" => {
                self.sasl_mechanism = match v.to_ascii_uppercase().as_str() {
                    "PLAIN" => SaslMechanism::Plain,
                    "SCRAM-SHA-256" => SaslMechanism::ScramSha256,
                    "SCRAM-SHA-512" => SaslMechanism::ScramSha512,
                    _ => {
                        return Err(config_err(format!(
                            "{name}: {v:?} is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"
                        )))
                    }
                }
            }
            // Secrets are taken verbatim: a password may start or end with spaces.
            "sasl.username" => self.sasl_username = Some(value.to_owned()),
            "sasl.password" => self.sasl_password = Some(Secret(value.to_owned())),
            "sasl.jaas.config" => {
                let (user, password) = parse_jaas(v).map_err(|why| {
                    config_err(format!(
                        "{name}: {why}; krec takes PlainLoginModule and ScramLoginModule with \
                         username and password, or use sasl.username and sasl.password"
                    ))
                })?;
                self.sasl_username = Some(user);
                self.sasl_password = Some(Secret(password));
            }
            "transactional.id" => {
                return Err(config_err(format!(
                    "{name}: give it as krec produce --transactional-id (a property would \
                     not say which command runs the transaction)"
                )))
            }
            "ssl.ca.location" => self.ssl_ca_location = Some(PathBuf::from(v)),
            "ssl.certificate.location" => self.ssl_certificate_location = Some(PathBuf::from(v)),
            "ssl.key.location" => self.ssl_key_location = Some(PathBuf::from(v)),
            "ssl.endpoint.identification.algorithm" => {
                if !v.eq_ignore_ascii_case("https") {
                    return Err(config_err(format!(
                        "{name}: only \"https\" (hostname verification) is supported, got {v:?}"
                    )));
                }
            }
            "socket.timeout.ms" | "request.timeout.ms" => self.request_timeout = parse_ms(name, v)?,
            "socket.connection.setup.timeout.ms" => self.connect_timeout = parse_ms(name, v)?,
            "fetch.max.bytes" => self.fetch_max_bytes = parse_positive_i32(name, v)?,
            "max.partition.fetch.bytes" => {
                self.max_partition_fetch_bytes = parse_positive_i32(name, v)?
            }
            "fetch.wait.max.ms" | "fetch.max.wait.ms" => self.fetch_wait_max = parse_ms(name, v)?,
            "fetch.min.bytes" => self.fetch_min_bytes = parse_positive_i32(name, v)?,
            "receive.message.max.bytes" => {
                let n: usize = parse_num(name, v)?;
                if !(1000..=i32::MAX as usize).contains(&n) {
                    return Err(config_err(format!(
                        "{name}: must be within 1000..={}, got {n}",
                        i32::MAX
                    )));
                }
                self.max_response_size = n;
            }
            "isolation.level" => {
                self.isolation_level = v.parse().map_err(|e| config_err(format!("{name}: {e}")))?
            }
            "retries" => self.retries = parse_num(name, v)?,
            "retry.backoff.ms" => self.retry_backoff = parse_ms(name, v)?,
            "retry.backoff.max.ms" => self.retry_backoff_max = parse_ms(name, v)?,
            "transaction.timeout.ms" => self.transaction_timeout = parse_ms(name, v)?,
            "message.timeout.ms" | "delivery.timeout.ms" => {
                self.delivery_timeout = parse_ms(name, v)?
            }
            "queue.buffering.max.kbytes" => {
                let kib: usize = parse_num(name, v)?;
                self.buffer_memory = positive(name, kib)?.saturating_mul(1024);
            }
            "buffer.memory" => {
                let bytes: usize = parse_num(name, v)?;
                self.buffer_memory = positive(name, bytes)?;
            }
            "max.in.flight.requests.per.connection" | "max.in.flight" => {
                let n: usize = parse_num(name, v)?;
                if !(1..=5).contains(&n) {
                    return Err(config_err(format!(
                        "{name}: must be 1..=5 for an idempotent producer, got {n}"
                    )));
                }
                self.max_in_flight = n;
            }
            // What krec's producer does anyway: taken without a warning.
            "acks" | "request.required.acks" if v.eq_ignore_ascii_case("all") || v == "-1" => {}
            "enable.idempotence" if v.eq_ignore_ascii_case("true") => {}
            other => {
                if let Some((n, why)) = NOT_APPLICABLE.iter().find(|(n, _)| *n == other) {
                    self.ignored
                        .push(format!("{n} does not apply to krec and is ignored ({why})"));
                    return Ok(self);
                }
                let hint = closest(other)
                    .map(|k| format!("; did you mean {k:?}?"))
                    .unwrap_or_default();
                return Err(config_err(format!(
                    "unknown configuration property {other:?}{hint}"
                )));
            }
        }
        Ok(self)
    }

    /// Builds a configuration from `name=value` pairs, applied in order over the defaults.
    ///
    /// # Errors
    ///
    /// A pair without `=`, an unknown name, a bad value, or a missing `bootstrap.servers`.
    pub fn from_pairs<I, S>(pairs: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut c = ClientConfig::default();
        for pair in pairs {
            c.set_pair(pair.as_ref())?;
        }
        c.validate()?;
        Ok(c)
    }

    /// Applies one `name=value` pair.
    ///
    /// # Errors
    ///
    /// A pair without `=`, an unknown name or a bad value.
    pub fn set_pair(&mut self, pair: &str) -> Result<&mut Self> {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(config_err(format!(
                "expected name=value, got {:?}",
                pair.split_once(' ').map_or(pair, |(a, _)| a)
            )));
        };
        self.set(name, value)
    }

    /// Applies the `name=value` lines of a file (blank lines and lines starting with `#` are
    /// skipped), as librdkafka's and kcat's `-F`; a line ending in a backslash continues on the
    /// next, as in a Java `.properties` file ([`join_continuations`]).
    ///
    /// # Errors
    ///
    /// The file cannot be read, or a line fails as in [`ClientConfig::set_pair`]; the error names
    /// the file and line.
    pub fn apply_file(&mut self, path: &Path) -> Result<&mut Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| config_err(format!("{}: {e}", path.display())))?;
        self.apply_str(&text)
            .map_err(|e| config_err(format!("{}: {e}", path.display())))
    }

    /// Applies the `name=value` lines of a string, as [`ClientConfig::apply_file`]; a line
    /// ending in a backslash continues on the next, as in a Java `.properties` file
    /// ([`join_continuations`]).
    ///
    /// # Errors
    ///
    /// As [`ClientConfig::set_pair`], naming the line.
    pub fn apply_str(&mut self, text: &str) -> Result<&mut Self> {
        for (i, line) in join_continuations(text).lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let line = line.strip_suffix('\r').unwrap_or(line);
            self.set_pair(line.trim_start())
                .map_err(|e| config_err(format!("line {}: {}", i + 1, config_message(&e))))?;
        }
        Ok(self)
    }

    /// Checks the properties together: bootstrap servers given, SASL credentials present when
    /// SASL is on, a client key together with a client certificate.
    ///
    /// # Errors
    ///
    /// The first inconsistency found.
    pub fn validate(&self) -> Result<()> {
        if self.bootstrap_servers.is_empty() {
            return Err(config_err("bootstrap.servers is not set"));
        }
        if self.security_protocol.uses_sasl()
            && (self.sasl_username.is_none() || self.sasl_password.is_none())
        {
            return Err(config_err(
                "security.protocol uses SASL but sasl.username or sasl.password is not set",
            ));
        }
        if (self.max_response_size as u64) < self.fetch_max_bytes as u64 + 512 {
            return Err(config_err(format!(
                "receive.message.max.bytes ({}) must be at least fetch.max.bytes ({}) + 512",
                self.max_response_size, self.fetch_max_bytes
            )));
        }
        if self.ssl_certificate_location.is_some() != self.ssl_key_location.is_some() {
            return Err(config_err(
                "ssl.certificate.location and ssl.key.location go together",
            ));
        }
        Ok(())
    }
}

/// The lines of a client properties file (`-F`) with Java `.properties` line continuations
/// joined: a line ending in an odd number of backslashes continues on the next line, the last
/// backslash dropped and the next line's leading whitespace too (a multi-line
/// `sasl.jaas.config`, as Java clients' files often have it); an even number is escaped
/// backslashes (`\\`), which end the line; a continuation at the end of the text ends there. A
/// comment line (`#` first) does not continue. Each joined line stays at the number of the
/// line it starts on, the lines it took in left empty, so that errors name the file's lines.
/// Nothing else is unescaped: values are taken as they are written, as librdkafka's `-F`.
///
/// ```
/// use krecords_client::join_continuations;
/// let text = "sasl.jaas.config=PlainLoginModule required \\\n    username=\"u\";\nacks=all";
/// assert_eq!(join_continuations(text), "sasl.jaas.config=PlainLoginModule required username=\"u\";\n\nacks=all");
/// ```
pub fn join_continuations(text: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    // The line being continued, while the previous one ended in a continuation.
    let mut open: Option<usize> = None;
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let piece = match open {
            Some(_) => line.trim_start(),
            None => line,
        };
        let comment = open.is_none() && piece.trim_start().starts_with('#');
        let backslashes = piece.len() - piece.trim_end_matches('\\').len();
        let continues = !comment && backslashes % 2 == 1;
        let piece = match continues {
            true => piece.strip_suffix('\\').unwrap_or(piece),
            false => piece,
        };
        match open.and_then(|i| lines.get_mut(i)) {
            Some(joined) => {
                joined.push_str(piece);
                lines.push(String::new());
            }
            None => lines.push(piece.to_owned()),
        }
        open = match (continues, open) {
            (false, _) => None,
            (true, Some(i)) => Some(i),
            (true, None) => Some(lines.len().saturating_sub(1)),
        };
    }
    lines.join("\n")
}

/// The username and password of a Java client's `sasl.jaas.config` for PLAIN or SCRAM:
/// `org.apache.kafka.common.security.plain.PlainLoginModule required username="u"
/// password="p";` (or `...scram.ScramLoginModule`). Values are double-quoted (with `\`
/// escaping the next character) or bare words. The error never shows a value.
fn parse_jaas(text: &str) -> std::result::Result<(String, String), String> {
    let text = text.trim();
    let (module, rest) = text.split_once(char::is_whitespace).ok_or_else(|| {
        "expected LOGIN_MODULE required username=\"...\" password=\"...\";".to_owned()
    })?;
    let short = module.rsplit('.').next().unwrap_or(module);
    if !matches!(short, "PlainLoginModule" | "ScramLoginModule") {
        return Err(format!(
            "the login module {short} is not supported (SASL mechanisms: PLAIN, SCRAM-SHA-256, \
             SCRAM-SHA-512)"
        ));
    }
    let rest = rest.trim_start();
    let Some(mut rest) = ["required", "requisite", "sufficient", "optional"]
        .iter()
        .find_map(|flag| rest.strip_prefix(flag))
    else {
        return Err(format!("expected a control flag (required) after {short}"));
    };
    let (mut user, mut password) = (None, None);
    loop {
        rest = rest.trim_start();
        if rest.is_empty() || rest.starts_with(';') {
            break;
        }
        let (key, after) = rest
            .split_once('=')
            .ok_or_else(|| "expected NAME=VALUE options".to_owned())?;
        let key = key.trim();
        // A value is quoted with " or ' (Java's StreamTokenizer, which Kafka's JaasConfig
        // uses, takes both: Confluent's generated configurations use '), or bare; a missing
        // value is an error, not the next option taken for it.
        let after = after.trim_start();
        let empty = || format!("the value of {key} is empty");
        if after.is_empty() || after.starts_with(';') {
            return Err(empty());
        }
        let quote = after.chars().next().filter(|&c| c == '"' || c == '\'');
        let (value, next) = if let Some(q) = quote {
            let quoted = &after[1..];
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, e)) = chars.next() {
                            value.push(e);
                        }
                    }
                    c if c == q => {
                        end = Some(i + 1);
                        break;
                    }
                    c => value.push(c),
                }
            }
            let end = end.ok_or_else(|| format!("the value of {key} has no closing quote"))?;
            (value, &quoted[end..])
        } else {
            let end = after
                .find(|c: char| c.is_whitespace() || c == ';')
                .unwrap_or(after.len());
            if after[..end].contains('=') {
                return Err(empty());
            }
            (after[..end].to_owned(), &after[end..])
        };
        match key {
            "username" => user = Some(value),
            "password" => password = Some(value),
            _ => {}
        }
        rest = next;
    }
    match (user, password) {
        (Some(u), Some(p)) => Ok((u, p)),
        _ => Err(format!("{short} needs both username and password")),
    }
}

fn config_message(e: &Error) -> String {
    match e {
        Error::Config(m) => m.clone(),
        other => other.to_string(),
    }
}

/// Splits `host:port` (`[v6]:port` for IPv6) into its parts.
pub(crate) fn split_host_port(addr: &str) -> Result<(String, u16)> {
    let bad = || config_err(format!("{addr:?} is not host:port"));
    let (host, port) = if let Some(rest) = addr.strip_prefix('[') {
        let (h, p) = rest.split_once("]:").ok_or_else(bad)?;
        (h, p)
    } else {
        addr.rsplit_once(':').ok_or_else(bad)?
    };
    if host.is_empty() {
        return Err(bad());
    }
    let port: u16 = port.parse().map_err(|_| bad())?;
    Ok((host.to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_that_do_not_apply_are_ignored_and_typos_get_a_suggestion() {
        let mut c = ClientConfig::default();
        for p in [
            "group.id=g",
            "auto.offset.reset=earliest",
            "debug=all",
            "message.max.bytes=1000000",
            "enable.ssl.certificate.verification=false",
        ] {
            c.set_pair(p).unwrap();
        }
        assert_eq!(c.ignored.len(), 5);
        assert!(
            c.ignored[0].starts_with("group.id does not apply"),
            "{:?}",
            c.ignored
        );
        c.set_pair("request.timeout.ms=1234").unwrap();
        assert_eq!(c.request_timeout, Duration::from_millis(1234));
        let e = c.set_pair("socket.timout.ms=5").unwrap_err().to_string();
        assert!(e.contains("did you mean \"socket.timeout.ms\"?"), "{e}");
        let e = c.set_pair("zzzz=5").unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn producer_properties_krec_does_not_use_are_ignored_with_the_krec_way() {
        let mut c = ClientConfig::default();
        c.apply_str(
            "acks=1\nbatch.size=16384\ncompression.type=gzip\nenable.idempotence=false\n\
             linger.ms=5\nmax.block.ms=1000\n",
        )
        .unwrap();
        let ignored = c.ignored.join("\n");
        for want in [
            "acks does not apply to krec and is ignored (krec always produces with acks=all)",
            "batch.size does not apply to krec and is ignored (use --records-per-batch)",
            "compression.type does not apply to krec and is ignored (use --compression)",
            "enable.idempotence does not apply to krec and is ignored (krec's producer is \
             always idempotent)",
            "linger.ms does not apply",
        ] {
            assert!(ignored.contains(want), "{want}: {ignored}");
        }
        // What krec does anyway is taken without a warning.
        let mut c = ClientConfig::default();
        c.apply_str("acks=all\nacks=-1\nenable.idempotence=true\n")
            .unwrap();
        assert!(c.ignored.is_empty(), "{:?}", c.ignored);
        // A misspelt one is still an error, with the nearest name.
        let e = c.set_pair("compresion.type=gzip").unwrap_err().to_string();
        assert!(e.contains("did you mean \"compression.type\"?"), "{e}");
        let e = c.set_pair("transactional.id=t").unwrap_err().to_string();
        assert!(e.contains("--transactional-id"), "{e}");
    }

    #[test]
    fn sasl_jaas_config_gives_the_username_and_password() {
        let mut c = ClientConfig::default();
        c.set_pair(
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
             username=\"alice\" password=\"s3c \\\"ret\\\";x\";",
        )
        .unwrap();
        assert_eq!(c.sasl_username.as_deref(), Some("alice"));
        assert_eq!(c.sasl_password.as_deref(), Some("s3c \"ret\";x"));
        c.set_pair(
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
             password=p2 username=bob;",
        )
        .unwrap();
        assert_eq!(c.sasl_username.as_deref(), Some("bob"));
        assert_eq!(c.sasl_password.as_deref(), Some("p2"));
        // Single quotes, as Confluent's generated configurations write them; spaces around =.
        c.set_pair(
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
             username='KEY' password = 'SE\"CRET';",
        )
        .unwrap();
        assert_eq!(c.sasl_username.as_deref(), Some("KEY"));
        assert_eq!(c.sasl_password.as_deref(), Some("SE\"CRET"));
        for bad in [
            "org.apache.kafka.common.security.plain.PlainLoginModule required username= password=x;",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\";",
            "org.apache.kafka.common.security.plain.PlainLoginModule required password=\"hunter2",
            "x",
        ] {
            let e = c
                .set_pair(&format!("sasl.jaas.config={bad}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("use sasl.username and sasl.password"), "{e}");
            assert!(!e.contains("hunter2"), "{e}");
        }
    }

    #[test]
    fn librdkafka_names_and_files() {
        let c = ClientConfig::from_pairs([
            "bootstrap.servers=a:9092, b:9093,[::1]:9094",
            "security.protocol=sasl_ssl",
            "sasl.mechanisms=SCRAM-SHA-512",
            "sasl.username=alice",
            "sasl.password= s3cret=x",
            "ssl.ca.location=/tmp/ca.pem",
            "socket.timeout.ms=1500",
            "fetch.max.bytes=1000000",
            "isolation.level=read_uncommitted",
        ])
        .unwrap();
        assert_eq!(c.bootstrap_servers, ["a:9092", "b:9093", "[::1]:9094"]);
        assert_eq!(c.security_protocol, SecurityProtocol::SaslSsl);
        assert_eq!(c.sasl_mechanism, SaslMechanism::ScramSha512);
        assert_eq!(c.sasl_password.as_deref(), Some(" s3cret=x"));
        assert_eq!(c.request_timeout, Duration::from_millis(1500));
        assert_eq!(c.fetch_max_bytes, 1_000_000);
        assert_eq!(c.isolation_level, IsolationLevel::ReadUncommitted);
        assert_eq!(
            split_host_port("[::1]:9094").unwrap(),
            ("::1".to_owned(), 9094)
        );

        let mut f = ClientConfig::default();
        f.apply_str("# comment\n\nbootstrap.servers=h:1\r\n  # indented comment\nclient.id=me\n")
            .unwrap();
        assert_eq!(f.bootstrap_servers, ["h:1"]);
        assert_eq!(f.client_id, "me");
        f.validate().unwrap();
    }

    #[test]
    fn lines_ending_in_a_backslash_continue_as_in_java_properties() {
        // A multi-line sasl.jaas.config: continued, the next lines' indentation dropped.
        let text = "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n\
                    sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule \\\n  \
                    required \\\n\tusername=\"alice\" \\\r\n    password=\"s3cret\";\n\
                    client.id=me\n";
        let mut c = ClientConfig::default();
        c.apply_str(text).unwrap();
        assert_eq!(c.sasl_username.as_deref(), Some("alice"));
        assert_eq!(c.client_id, "me");
        // Joined lines keep the file's line numbers: an error names the line it starts on.
        assert_eq!(
            join_continuations("a=1\nb=2 \\\n  3\nc=4"),
            "a=1\nb=2 3\n\nc=4"
        );
        let e = ClientConfig::default()
            .apply_str("client.id=x \\\n y\nno.such=\\\n1\nacks=all")
            .unwrap_err();
        assert!(e.to_string().contains("line 3"), "{e}");
        // An escaped backslash (an even number) ends the line; an odd number continues.
        assert_eq!(join_continuations("a=x\\\\\nb=y"), "a=x\\\\\nb=y");
        assert_eq!(join_continuations("a=x\\\\\\\n  y\nb=z"), "a=x\\\\y\n\nb=z");
        // A continuation at the end of the text ends there, its backslash dropped.
        assert_eq!(join_continuations("a=1\nb=2\\"), "a=1\nb=2");
        assert_eq!(join_continuations("a=1\\\n"), "a=1");
        // A comment does not continue; a continued line is taken as it is, `#` or not.
        assert_eq!(join_continuations("# x \\\nb=2"), "# x \\\nb=2");
        assert_eq!(join_continuations("a=1\\\n#2"), "a=1#2\n");
        let mut c = ClientConfig::default();
        c.apply_str("client.id=a\\\n\n").unwrap();
        assert_eq!(c.client_id, "a");
    }

    #[test]
    fn errors_name_the_property() {
        let e = ClientConfig::from_pairs(["bootstrap.servers=h:1", "sasl.kerberos.keytab=x"])
            .unwrap_err();
        assert!(e.to_string().contains("\"sasl.kerberos.keytab\""), "{e}");
        let e = ClientConfig::default()
            .apply_str("bootstrap.servers=h:1\nno.such=1\n")
            .unwrap_err();
        assert!(
            e.to_string().contains("line 2") && e.to_string().contains("no.such"),
            "{e}"
        );
        let e = ClientConfig::from_pairs(["bootstrap.servers"]).unwrap_err();
        assert!(e.to_string().contains("name=value"), "{e}");
        let e = ClientConfig::from_pairs(["bootstrap.servers=nohost"]).unwrap_err();
        assert!(e.to_string().contains("host:port"), "{e}");
        let e = ClientConfig::from_pairs(["bootstrap.servers=h:1", "security.protocol=SASL_SSL"])
            .unwrap_err();
        assert!(e.to_string().contains("sasl.username"), "{e}");
        let e = ClientConfig::from_pairs(["bootstrap.servers=h:1", "socket.timeout.ms=soon"])
            .unwrap_err();
        assert!(e.to_string().contains("socket.timeout.ms"), "{e}");
        assert!(ClientConfig::from_pairs(["client.id=x"]).is_err());
        let e = ClientConfig::from_pairs([
            "bootstrap.servers=h:1",
            "receive.message.max.bytes=1000000",
        ])
        .unwrap_err();
        assert!(e.to_string().contains("fetch.max.bytes"), "{e}");
    }
}
