//! The client's error type.

use std::fmt;
use std::time::Duration;

use kafka_protocol::messages::ApiKey;
use kafka_protocol::ResponseError;

/// Result with the client's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A request's name, as Kafka's protocol guide spells it (`Fetch`, `Metadata`, ...).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RequestName(pub(crate) ApiKey);

impl fmt::Display for RequestName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Debug for RequestName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// A Kafka error code with its name as Kafka spells it (`NOT_LEADER_OR_FOLLOWER`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct KafkaCode(pub i16);

impl KafkaCode {
    /// kafka-protocol's variant for the code (`None` for 0).
    pub fn response_error(self) -> Option<ResponseError> {
        ResponseError::try_from_code(self.0)
    }

    /// Kafka's name of the error (`NOT_LEADER_OR_FOLLOWER`), `UNKNOWN_CODE_<n>` for codes this
    /// client does not know.
    pub fn name(self) -> String {
        match self.response_error() {
            None => "NONE".to_owned(),
            Some(ResponseError::Unknown(c)) => format!("UNKNOWN_CODE_{c}"),
            Some(e) => upper_snake(&e.to_string()),
        }
    }

    /// Whether Kafka marks the error as retriable.
    pub fn is_retriable(self) -> bool {
        self.response_error().is_some_and(|e| e.is_retriable())
    }
}

impl fmt::Display for KafkaCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.0)
    }
}

impl fmt::Debug for KafkaCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `NotLeaderOrFollower` → `NOT_LEADER_OR_FOLLOWER`.
fn upper_snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 8);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// Every failure of the client. Messages name the broker (`host:port`), the request and, for a
/// broker's error code, Kafka's error name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration property is unknown, malformed or inconsistent.
    #[error("configuration: {0}")]
    Config(String),

    /// TLS setup failed: a CA, certificate or key file could not be loaded, or the handshake
    /// failed (an untrusted certificate, a hostname mismatch).
    #[error("{broker}: TLS: {message}")]
    Tls {
        /// The broker, `host:port`.
        broker: String,
        /// What went wrong.
        message: String,
    },

    /// SASL authentication was refused, or the server's SCRAM signature did not verify.
    #[error("{broker}: authentication failed ({mechanism}): {message}")]
    Authentication {
        /// The broker, `host:port`.
        broker: String,
        /// The SASL mechanism.
        mechanism: &'static str,
        /// The broker's message, or what did not verify.
        message: String,
    },

    /// No TCP connection could be opened to the broker.
    #[error("{broker}: cannot connect: {source}")]
    Connect {
        /// The broker, `host:port`.
        broker: String,
        /// The I/O error.
        source: std::io::Error,
    },

    /// None of the bootstrap servers could be reached; the last error is given.
    #[error("no bootstrap server reachable ({tried} tried), last: {last}")]
    NoBrokerReachable {
        /// How many addresses were tried.
        tried: usize,
        /// The last address's error.
        last: Box<Error>,
    },

    /// Reading or writing the socket failed.
    #[error("{broker}: {request}: I/O error: {source}")]
    Io {
        /// The broker, `host:port`.
        broker: String,
        /// The request in flight.
        request: RequestName,
        /// The I/O error.
        source: std::io::Error,
    },

    /// The broker closed the connection before any byte of the response.
    #[error("{broker}: {request}: connection closed by the broker{hint}")]
    Disconnected {
        /// The broker, `host:port`.
        broker: String,
        /// The request in flight.
        request: RequestName,
        /// What the closing probably means, when the connection's state tells (empty, or a
        /// clause starting with a space).
        hint: &'static str,
    },

    /// The connection ended inside a response frame.
    #[error(
        "{broker}: {request}: connection closed inside a response: {received} of {expected} bytes"
    )]
    Truncated {
        /// The broker, `host:port`.
        broker: String,
        /// The request in flight.
        request: RequestName,
        /// Bytes the frame's size field (plus the field itself) announced.
        expected: usize,
        /// Bytes received before the end of the stream.
        received: usize,
    },

    /// A response's size field is negative, too small for a header, or above
    /// `receive.message.max.bytes`; nothing was allocated for it.
    #[error(
        "{broker}: {request}: response size {size} outside 4..={max} (receive.message.max.bytes){}",
        tls_hint(*.size)
    )]
    FrameSize {
        /// The broker, `host:port`.
        broker: String,
        /// The request in flight.
        request: RequestName,
        /// The size field.
        size: i64,
        /// The configured maximum.
        max: usize,
    },

    /// A response carries another correlation id than the request.
    #[error("{broker}: {request}: response correlation id {found}, expected {expected}")]
    CorrelationId {
        /// The broker, `host:port`.
        broker: String,
        /// The request in flight.
        request: RequestName,
        /// The id sent.
        expected: i32,
        /// The id received.
        found: i32,
    },

    /// A response frame did not decode as the request's response at the negotiated version, or
    /// lacks what was asked for.
    #[error("{broker}: {request} v{version}: malformed response: {message}")]
    Protocol {
        /// The broker, `host:port`.
        broker: String,
        /// The request.
        request: RequestName,
        /// The version used.
        version: i16,
        /// What is wrong.
        message: String,
    },

    /// A request could not be encoded (a client bug or an out-of-range argument).
    #[error("{request} v{version}: cannot encode request: {message}")]
    Encode {
        /// The request.
        request: RequestName,
        /// The version used.
        version: i16,
        /// kafka-protocol's message.
        message: String,
    },

    /// No version of the request is supported by both the broker and this client.
    #[error("{broker}: {request}: no common version (broker {broker_min}..={broker_max}, client {client_min}..={client_max})")]
    UnsupportedVersion {
        /// The broker, `host:port`.
        broker: String,
        /// The request.
        request: RequestName,
        /// Broker's minimum (`-1` when the broker does not know the request).
        broker_min: i16,
        /// Broker's maximum.
        broker_max: i16,
        /// Client's minimum.
        client_min: i16,
        /// Client's maximum.
        client_max: i16,
    },

    /// The address is not the Kafka listener the configuration expects: an HTTP server, a TLS
    /// listener spoken to in plaintext, a SASL listener without SASL, a KRaft controller. The
    /// message says which, in words, and what to set.
    #[error("{broker}: {message}")]
    WrongListener {
        /// The broker, `host:port`.
        broker: String,
        /// What the listener looks like and what to do.
        message: String,
    },

    /// The request did not complete within the timeout.
    #[error("{broker}: {request}: timed out after {after:?}")]
    Timeout {
        /// The broker, `host:port`.
        broker: String,
        /// The request (ApiVersions for the connection setup).
        request: RequestName,
        /// The timeout.
        after: Duration,
    },

    /// A new connection's TCP connect or TLS handshake did not finish within
    /// `socket.connection.setup.timeout.ms` (a silent ApiVersions or SASL exchange is an
    /// [`Error::Timeout`] naming that request).
    #[error("{broker}: {stage}: timed out after {after:?} (socket.connection.setup.timeout.ms)")]
    SetupTimeout {
        /// The broker, `host:port`.
        broker: String,
        /// `TCP connect` or `TLS handshake`.
        stage: &'static str,
        /// The timeout.
        after: Duration,
    },

    /// The broker answered with an error code.
    #[error("{broker}: {request}: {code}{}", context.as_ref().map(|c| format!(" for {c}")).unwrap_or_default())]
    Kafka {
        /// The broker, `host:port`.
        broker: String,
        /// The request.
        request: RequestName,
        /// The error code and its name.
        code: KafkaCode,
        /// The topic-partition concerned, `topic/partition` or `topic`.
        context: Option<String>,
    },

    /// A partition is not in the cluster's metadata (the topic exists with fewer partitions).
    #[error("{topic}/{partition}: no such partition (the topic has {partitions})")]
    UnknownPartition {
        /// The topic.
        topic: String,
        /// The partition asked for.
        partition: i32,
        /// How many partitions the topic has.
        partitions: usize,
    },

    /// A producer call out of order (produce outside a transaction, a second begin), or any
    /// call after a fatal error stopped the producer.
    #[error("producer: {0}")]
    ProducerState(String),

    /// The broker's data did not parse as log entries.
    #[error("{broker}: {topic}/{partition} at offset {offset}: corrupt data: {source}")]
    Corrupt {
        /// The broker, `host:port`.
        broker: String,
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The fetch offset of the response.
        offset: i64,
        /// The codec's error.
        source: Box<krecords_codec::Error>,
        /// The response's records as they came (empty when there was no response), so that a
        /// reader can report what precedes the corruption without fetching it again.
        records: Box<bytes::Bytes>,
    },
}

impl Error {
    /// Whether this is the network failing: no connection could be opened, a connection was
    /// lost or closed, or no answer came in time (an I/O error, as opposed to a configuration,
    /// authentication or broker error, or corrupt data).
    pub fn is_network(&self) -> bool {
        matches!(
            self,
            Error::Connect { .. }
                | Error::NoBrokerReachable { .. }
                | Error::Io { .. }
                | Error::Disconnected { .. }
                | Error::Timeout { .. }
                | Error::SetupTimeout { .. }
        )
    }

    /// Whether this is an authentication, authorization or TLS failure (a wrong password, an
    /// untrusted CA, a missing client certificate, TOPIC_AUTHORIZATION_FAILED): retrying will
    /// not help and the user must fix the configuration or the credentials.
    pub fn is_authentication(&self) -> bool {
        match self {
            Error::Authentication { .. } | Error::Tls { .. } => true,
            Error::Kafka { code, .. } => matches!(
                code.response_error(),
                Some(
                    ResponseError::SaslAuthenticationFailed
                        | ResponseError::UnsupportedSaslMechanism
                        | ResponseError::IllegalSaslState
                        | ResponseError::TopicAuthorizationFailed
                        | ResponseError::ClusterAuthorizationFailed
                )
            ),
            Error::NoBrokerReachable { last, .. } => last.is_authentication(),
            _ => false,
        }
    }

    /// The broker's error code, for [`Error::Kafka`].
    pub fn kafka_code(&self) -> Option<KafkaCode> {
        match self {
            Error::Kafka { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Whether the connection is unusable after this error (it is then dropped and reopened).
    pub(crate) fn breaks_connection(&self) -> bool {
        self.is_network()
            || matches!(
                self,
                Error::Tls { .. }
                    | Error::Truncated { .. }
                    | Error::FrameSize { .. }
                    | Error::CorrelationId { .. }
                    | Error::Protocol { .. }
            )
    }

    /// Whether a retry (after a metadata refresh) may succeed: a leader change, a lost
    /// connection, a timeout.
    pub(crate) fn is_retriable(&self) -> bool {
        match self {
            Error::Kafka { code, .. } => matches!(
                code.response_error(),
                Some(
                    ResponseError::NotLeaderOrFollower
                        | ResponseError::UnknownTopicOrPartition
                        | ResponseError::LeaderNotAvailable
                        | ResponseError::FencedLeaderEpoch
                        | ResponseError::UnknownLeaderEpoch
                        | ResponseError::ReplicaNotAvailable
                        | ResponseError::NotController
                        | ResponseError::RequestTimedOut
                        | ResponseError::NetworkException
                        | ResponseError::OffsetNotAvailable
                )
            ),
            Error::Io { .. }
            | Error::Disconnected { .. }
            | Error::Truncated { .. }
            | Error::Timeout { .. }
            | Error::SetupTimeout { .. }
            | Error::Connect { .. } => true,
            Error::NoBrokerReachable { last, .. } => last.is_retriable(),
            _ => false,
        }
    }
}

/// A hint for a frame size whose bytes are a TLS record header (content type 21 or 22, version
/// 3.x): a PLAINTEXT client talking to a TLS listener reads the broker's TLS alert as a size.
fn tls_hint(size: i64) -> &'static str {
    let b = (size as u32).to_be_bytes();
    if matches!(b[0], 0x15 | 0x16) && b[1] == 0x03 && b[2] <= 0x04 {
        "; the broker answered with TLS: is this an SSL or SASL_SSL listener? (-X security.protocol=SSL)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tls_alert_read_as_a_frame_size_gets_a_hint() {
        // 0x15030300: a TLS alert record header (what Kafka's SSL listener sends a plaintext client).
        assert!(tls_hint(0x1503_0300).contains("security.protocol=SSL"));
        assert!(tls_hint(0x1603_0100).contains("SSL"));
        assert_eq!(tls_hint(2_000_000_000), "");
        assert_eq!(tls_hint(-1), "");
    }
}
