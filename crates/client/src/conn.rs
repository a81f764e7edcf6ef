//! One broker connection: framing, correlation ids, version negotiation, TLS and SASL.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, RequestHeader, ResponseHeader, SaslAuthenticateRequest,
    SaslHandshakeRequest,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};
use kafka_protocol::ResponseError;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::config::{ClientConfig, SaslMechanism};
use crate::error::{Error, KafkaCode, RequestName, Result};
use crate::scram::{random_nonce, ScramClient, ScramHash};

/// A socket, plain or TLS.
pub(crate) trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}

/// Highest ApiVersions version tried first. A broker that does not know it answers in v0 with
/// UNSUPPORTED_VERSION and its own range, and the client retries with that.
const API_VERSIONS_FIRST: i16 = 3;

/// Largest read made at once while a frame arrives: a frame's memory grows with the bytes that
/// actually came, not with what the size field claims.
const READ_CHUNK: usize = 64 * 1024;

/// An open, negotiated (and authenticated) connection to one broker.
pub(crate) struct Connection {
    stream: Box<dyn Stream>,
    /// `host:port`, for error messages.
    pub(crate) broker: String,
    client_id: StrBytes,
    correlation_id: i32,
    max_response_size: usize,
    /// The broker's (min, max) per API key, from ApiVersions.
    versions: HashMap<i16, (i16, i16)>,
    /// When the last response arrived (or the connection was set up).
    last_used: Instant,
    /// The buffer requests are encoded in, kept between requests (a Produce request is as
    /// large as its batch: a new buffer for each would be paged in each time).
    frame: BytesMut,
    /// Set up without SASL and nothing answered since ApiVersions: a broker that closes the
    /// connection now probably expects SASL on this listener.
    fresh_plain: bool,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("broker", &self.broker)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Connects to `host:port`, sets up TLS when configured, negotiates versions and
    /// authenticates, all within `socket.connection.setup.timeout.ms`.
    pub(crate) async fn open(
        host: &str,
        port: u16,
        config: &ClientConfig,
        tls: Option<&Arc<rustls::ClientConfig>>,
    ) -> Result<Connection> {
        let broker = format!("{host}:{port}");
        let stage = AtomicU8::new(STAGE_CONNECT);
        let setup = Self::open_inner(host, port, broker.clone(), config, tls, &stage);
        match tokio::time::timeout(config.connect_timeout, setup).await {
            Ok(r) => r.map_err(diagnose),
            Err(_) => Err(setup_timeout(
                broker,
                stage.load(Ordering::Relaxed),
                config.connect_timeout,
            )),
        }
    }

    async fn open_inner(
        host: &str,
        port: u16,
        broker: String,
        config: &ClientConfig,
        tls: Option<&Arc<rustls::ClientConfig>>,
        stage: &AtomicU8,
    ) -> Result<Connection> {
        let tcp = TcpStream::connect((host, port))
            .await
            .map_err(|source| Error::Connect {
                broker: broker.clone(),
                source,
            })?;
        let _ = tcp.set_nodelay(true);
        let stream: Box<dyn Stream> = match tls {
            None => Box::new(tcp),
            Some(tls) => {
                let name =
                    rustls_pki_types::ServerName::try_from(host.to_owned()).map_err(|e| {
                        Error::Tls {
                            broker: broker.clone(),
                            message: format!("{host:?} is not a valid TLS server name: {e}"),
                        }
                    })?;
                let connector = tokio_rustls::TlsConnector::from(Arc::clone(tls));
                stage.store(STAGE_TLS, Ordering::Relaxed);
                let s = connector.connect(name, tcp).await.map_err(|e| Error::Tls {
                    broker: broker.clone(),
                    message: format!("handshake failed: {e}{}", handshake_hint(&e, host)),
                })?;
                Box::new(s)
            }
        };
        let mut conn = Connection {
            stream,
            broker,
            client_id: StrBytes::from_string(config.client_id.clone()),
            correlation_id: 0,
            max_response_size: config.max_response_size,
            versions: HashMap::new(),
            last_used: Instant::now(),
            frame: BytesMut::new(),
            fresh_plain: false,
        };
        stage.store(STAGE_API_VERSIONS, Ordering::Relaxed);
        conn.negotiate_versions(config.request_timeout).await?;
        // A KRaft controller's listener answers ApiVersions with the controller's APIs only.
        if !conn.versions.contains_key(&(ApiKey::Metadata as i16)) {
            return Err(Error::WrongListener {
                broker: conn.broker.clone(),
                message: "this is a KRaft controller listener; use a broker's address (it \
                          answers no Metadata)"
                    .to_owned(),
            });
        }
        conn.fresh_plain = !config.security_protocol.uses_sasl();
        if config.security_protocol.uses_sasl() {
            let user = config.sasl_username.as_deref().unwrap_or_default();
            let password = config.sasl_password.as_deref().unwrap_or_default();
            stage.store(STAGE_SASL, Ordering::Relaxed);
            conn.authenticate(
                config.sasl_mechanism,
                user,
                password,
                config.request_timeout,
            )
            .await?;
        }
        Ok(conn)
    }

    /// Wraps a ready stream without negotiation (tests of the framing).
    #[cfg(test)]
    pub(crate) fn from_stream(stream: Box<dyn Stream>, max_response_size: usize) -> Self {
        Connection {
            stream,
            broker: "test".to_owned(),
            client_id: StrBytes::from_static_str("test"),
            correlation_id: 0,
            max_response_size,
            versions: HashMap::new(),
            last_used: Instant::now(),
            frame: BytesMut::new(),
            fresh_plain: false,
        }
    }

    async fn negotiate_versions(&mut self, timeout: Duration) -> Result<()> {
        let req = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("krecords"))
            .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
        let mut version = API_VERSIONS_FIRST;
        for _ in 0..2 {
            let body = self
                .roundtrip_raw::<ApiVersionsRequest>(&req, version, timeout)
                .await?;
            // An UNSUPPORTED_VERSION answer is always encoded in v0, whatever was asked.
            let code = body
                .get(..2)
                .map_or(0, |b| i16::from_be_bytes([b[0], b[1]]));
            let decode_version = if code == ResponseError::UnsupportedVersion.code() {
                0
            } else {
                version
            };
            let resp = self.decode_body::<ApiVersionsRequest>(body, decode_version)?;
            if resp.error_code == ResponseError::UnsupportedVersion.code() {
                let theirs = resp
                    .api_keys
                    .iter()
                    .find(|k| k.api_key == ApiKey::ApiVersions as i16)
                    .map(|k| k.max_version)
                    .unwrap_or(0);
                let next = theirs.min(API_VERSIONS_FIRST);
                if next >= version {
                    break;
                }
                version = next;
                continue;
            }
            if resp.error_code != 0 {
                return Err(self.kafka_error(ApiKey::ApiVersions, resp.error_code, None));
            }
            self.versions = resp
                .api_keys
                .iter()
                .map(|k| (k.api_key, (k.min_version, k.max_version)))
                .collect();
            return Ok(());
        }
        Err(self.unsupported::<ApiVersionsRequest>())
    }

    fn unsupported<R: Request>(&self) -> Error {
        let (bmin, bmax) = self.versions.get(&R::KEY).copied().unwrap_or((-1, -1));
        Error::UnsupportedVersion {
            broker: self.broker.clone(),
            request: name_of::<R>(),
            broker_min: bmin,
            broker_max: bmax,
            client_min: R::VERSIONS.min,
            client_max: R::VERSIONS.max,
        }
    }

    /// How long since the last response (or the setup) on this connection.
    pub(crate) fn idle_for(&self) -> Duration {
        self.last_used.elapsed()
    }

    /// The highest version of `R` both sides support, at most `cap`.
    pub(crate) fn version<R: Request>(&self, cap: i16) -> Result<i16> {
        let Some(&(bmin, bmax)) = self.versions.get(&R::KEY) else {
            return Err(self.unsupported::<R>());
        };
        let max = bmax.min(R::VERSIONS.max).min(cap);
        let min = bmin.max(R::VERSIONS.min);
        if max < min {
            return Err(self.unsupported::<R>());
        }
        Ok(max)
    }

    pub(crate) fn kafka_error(&self, key: ApiKey, code: i16, context: Option<String>) -> Error {
        Error::Kafka {
            broker: self.broker.clone(),
            request: RequestName(key),
            code: KafkaCode(code),
            context,
        }
    }

    /// Sends `req` at `version` and decodes its response, within `timeout`.
    pub(crate) async fn request<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response> {
        let body = self.roundtrip_raw(req, version, timeout).await?;
        self.decode_body::<R>(body, version)
    }

    fn decode_body<R: Request>(&self, body: Bytes, version: i16) -> Result<R::Response> {
        decode_body::<R>(&self.broker, body, version)
    }

    /// Sends `req`, reads one frame, checks its correlation id; returns the body after the
    /// response header.
    async fn roundtrip_raw<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<Bytes> {
        let request = name_of::<R>();
        let frame = self.encode_request(req, version)?;
        let correlation_id = self.correlation_id;
        let broker = self.broker.clone();
        let exchange = async {
            self.write_frame(&frame, request).await?;
            self.read_body::<R>(correlation_id, version).await
        };
        let body = within(&broker, timeout, request, exchange).await;
        self.keep_frame(frame);
        body
    }

    async fn write_frame(&mut self, frame: &[u8], request: RequestName) -> Result<()> {
        self.stream
            .write_all(frame)
            .await
            .map_err(|source| io_error(&self.broker, request, source))?;
        self.stream
            .flush()
            .await
            .map_err(|source| io_error(&self.broker, request, source))
    }

    /// Reads one response frame of `R`, checks its correlation id; returns the body after the
    /// response header.
    async fn read_body<R: Request>(&mut self, correlation_id: i32, version: i16) -> Result<Bytes> {
        let request = name_of::<R>();
        let frame = read_frame(&mut self.stream, self.max_response_size)
            .await
            .map_err(|e| match e {
                FrameError::Disconnected if self.fresh_plain => Error::Disconnected {
                    broker: self.broker.clone(),
                    request,
                    hint: SASL_EXPECTED,
                },
                e => e.into_error(&self.broker, request, self.max_response_size),
            })?;
        self.last_used = Instant::now();
        self.fresh_plain = false;
        let (found, body) = split_header::<R>(&self.broker, frame, version)?;
        if found != correlation_id {
            return Err(Error::CorrelationId {
                broker: self.broker.clone(),
                request,
                expected: correlation_id,
                found,
            });
        }
        Ok(body)
    }

    /// Writes `req` at `version` without waiting for its response (pipelining); returns its
    /// correlation id for [`Connection::receive`]. Responses arrive in request order.
    pub(crate) async fn send_only<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<i32> {
        let request = name_of::<R>();
        let frame = self.encode_request(req, version)?;
        let correlation_id = self.correlation_id;
        let broker = self.broker.clone();
        let written = within(&broker, timeout, request, self.write_frame(&frame, request)).await;
        self.keep_frame(frame);
        written.map(|()| correlation_id)
    }

    /// Reads the response of a request sent with [`Connection::send_only`]: the next frame,
    /// which must carry `correlation_id`.
    pub(crate) async fn receive<R: Request>(
        &mut self,
        correlation_id: i32,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response> {
        let request = name_of::<R>();
        let broker = self.broker.clone();
        let read = self.read_body::<R>(correlation_id, version);
        let body = within(&broker, timeout, request, read).await?;
        self.decode_body::<R>(body, version)
    }

    /// Keeps an encoded request's buffer for the next request (up to 16 MiB of it).
    fn keep_frame(&mut self, frame: BytesMut) {
        if frame.capacity() <= 16 << 20 {
            self.frame = frame;
        }
    }

    /// Encodes the size prefix, header and body of `req` in the connection's request buffer,
    /// with the next correlation id; [`Connection::keep_frame`] takes the buffer back.
    fn encode_request<R: Request>(&mut self, req: &R, version: i16) -> Result<BytesMut> {
        let request = name_of::<R>();
        let enc = |message: String| Error::Encode {
            request,
            version,
            message,
        };
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let header = RequestHeader::default()
            .with_request_api_key(R::KEY)
            .with_request_api_version(version)
            .with_correlation_id(self.correlation_id)
            .with_client_id(Some(self.client_id.clone()));
        let mut buf = std::mem::take(&mut self.frame);
        buf.clear();
        buf.extend_from_slice(&[0; 4]);
        header
            .encode(&mut buf, R::header_version(version))
            .map_err(|e| enc(format!("header: {e:#}")))?;
        req.encode(&mut buf, version)
            .map_err(|e| enc(format!("{e:#}")))?;
        let size = i32::try_from(buf.len() - 4)
            .map_err(|_| enc("request larger than 2 GiB".to_owned()))?;
        buf[..4].copy_from_slice(&size.to_be_bytes());
        Ok(buf)
    }

    async fn authenticate(
        &mut self,
        mechanism: SaslMechanism,
        user: &str,
        password: &str,
        timeout: Duration,
    ) -> Result<()> {
        let auth_err = |broker: &str, message: String| Error::Authentication {
            broker: broker.to_owned(),
            mechanism: mechanism.name(),
            message,
        };
        let v = self.version::<SaslHandshakeRequest>(1)?;
        if v < 1 {
            return Err(auth_err(
                &self.broker,
                "the broker lacks SaslHandshake v1 (Kafka 1.0 or later needed)".to_owned(),
            ));
        }
        let hs = SaslHandshakeRequest::default()
            .with_mechanism(StrBytes::from_static_str(mechanism.name()));
        let resp = self.request(&hs, v, timeout).await?;
        if resp.error_code != 0 {
            let offered: Vec<&str> = resp.mechanisms.iter().map(|m| m.as_str()).collect();
            if offered.is_empty() {
                return Err(Error::WrongListener {
                    broker: self.broker.clone(),
                    message: format!(
                        "SaslHandshake: {}: this listener takes no SASL (it is probably \
                         PLAINTEXT or SSL: set -X security.protocol to match it)",
                        KafkaCode(resp.error_code)
                    ),
                });
            }
            return Err(auth_err(
                &self.broker,
                format!(
                    "{}; the broker offers {}",
                    KafkaCode(resp.error_code),
                    offered.join(", ")
                ),
            ));
        }
        match mechanism {
            SaslMechanism::Plain => {
                let mut msg = Vec::with_capacity(user.len() + password.len() + 2);
                msg.push(0);
                msg.extend_from_slice(user.as_bytes());
                msg.push(0);
                msg.extend_from_slice(password.as_bytes());
                self.sasl_step(mechanism, msg.into(), timeout).await?;
            }
            SaslMechanism::ScramSha256 | SaslMechanism::ScramSha512 => {
                let hash = if mechanism == SaslMechanism::ScramSha256 {
                    ScramHash::Sha256
                } else {
                    ScramHash::Sha512
                };
                let mut scram = ScramClient::new(hash, user, password, random_nonce());
                let server_first = self
                    .sasl_step(mechanism, scram.client_first().into_bytes().into(), timeout)
                    .await?;
                let client_final = scram
                    .client_final(&server_first)
                    .map_err(|m| auth_err(&self.broker, m))?;
                let server_final = self
                    .sasl_step(mechanism, client_final.into_bytes().into(), timeout)
                    .await?;
                scram
                    .verify_server_final(&server_final)
                    .map_err(|m| auth_err(&self.broker, m))?;
            }
        }
        Ok(())
    }

    async fn sasl_step(
        &mut self,
        mechanism: SaslMechanism,
        auth_bytes: Bytes,
        timeout: Duration,
    ) -> Result<Bytes> {
        let v = self.version::<SaslAuthenticateRequest>(2)?;
        let req = SaslAuthenticateRequest::default().with_auth_bytes(auth_bytes);
        let resp = self.request(&req, v, timeout).await?;
        if resp.error_code != 0 {
            let msg = resp
                .error_message
                .as_ref()
                .map(|m| m.as_str().to_owned())
                .unwrap_or_default();
            return Err(Error::Authentication {
                broker: self.broker.clone(),
                mechanism: mechanism.name(),
                message: format!("{}: {msg}", KafkaCode(resp.error_code)),
            });
        }
        Ok(resp.auth_bytes)
    }
}

/// An I/O error, or a TLS error when rustls is behind it (a fatal alert from the broker, such as
/// its refusal of a missing client certificate, arrives on the first read after the handshake).
fn io_error(broker: &str, request: RequestName, source: std::io::Error) -> Error {
    if let Some(tls) = source
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        return Error::Tls {
            broker: broker.to_owned(),
            message: format!("{request}: {tls}"),
        };
    }
    Error::Io {
        broker: broker.to_owned(),
        request,
        source,
    }
}

/// What a failed TLS handshake suggests: the CA file for a certificate that does not verify,
/// the host name for a certificate of another name, plaintext only when the peer did not
/// speak TLS at all (a plaintext Kafka listener reads the ClientHello as a huge frame and
/// hangs up, or answers bytes that are not TLS).
fn handshake_hint(e: &std::io::Error, host: &str) -> String {
    use rustls::CertificateError as C;
    let tls = e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>());
    match tls {
        Some(rustls::Error::InvalidCertificate(C::NotValidForName))
        | Some(rustls::Error::InvalidCertificate(C::NotValidForNameContext { .. })) => format!(
            ": the broker's certificate is not for the host name {host:?}: connect with a \
             name the certificate holds (as the broker advertises it)"
        ),
        Some(rustls::Error::InvalidCertificate(
            C::UnknownIssuer | C::BadSignature | C::UnhandledCriticalExtension,
        )) => ": the broker's certificate is not signed by a trusted CA: set -X \
             ssl.ca.location to the PEM file of the CA that signed it"
            .to_owned(),
        Some(rustls::Error::InvalidCertificate(
            C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. },
        )) => ": the broker's certificate is outside its validity period (check its dates \
             and this machine's clock)"
            .to_owned(),
        Some(rustls::Error::InvalidCertificate(_)) => ": the broker's certificate does not \
             verify (check ssl.ca.location: the CA that signed the broker's certificate)"
            .to_owned(),
        Some(rustls::Error::InvalidMessage(_))
        | Some(rustls::Error::InappropriateMessage { .. }) => PLAINTEXT_HINT.to_owned(),
        Some(_) => String::new(),
        None if matches!(
            e.kind(),
            std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset
        ) =>
        {
            PLAINTEXT_HINT.to_owned()
        }
        None => String::new(),
    }
}

/// The hint of a handshake whose peer did not speak TLS.
const PLAINTEXT_HINT: &str = ": the listener probably speaks plaintext (set -X \
     security.protocol=PLAINTEXT or SASL_PLAINTEXT)";

/// The stages of a connection's setup, for naming the one that timed out.
const STAGE_CONNECT: u8 = 0;
const STAGE_TLS: u8 = 1;
const STAGE_API_VERSIONS: u8 = 2;
const STAGE_SASL: u8 = 3;

/// The error of a connection setup that did not finish within
/// `socket.connection.setup.timeout.ms`, naming the stage it was in.
fn setup_timeout(broker: String, stage: u8, after: Duration) -> Error {
    let request = match stage {
        STAGE_CONNECT => "TCP connect",
        STAGE_TLS => "TLS handshake",
        STAGE_SASL => {
            return Error::Timeout {
                broker,
                request: RequestName(ApiKey::SaslAuthenticate),
                after,
            }
        }
        _ => {
            return Error::Timeout {
                broker,
                request: RequestName(ApiKey::ApiVersions),
                after,
            }
        }
    };
    Error::SetupTimeout {
        broker,
        stage: request,
        after,
    }
}

/// `work`, or [`Error::Timeout`] after `timeout`.
async fn within<T>(
    broker: &str,
    timeout: Duration,
    request: RequestName,
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    match tokio::time::timeout(timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(Error::Timeout {
            broker: broker.to_owned(),
            request,
            after: timeout,
        }),
    }
}

/// Decodes the response header of `R` at `version`: the correlation id and the body after it.
pub(crate) fn split_header<R: Request>(
    broker: &str,
    mut frame: Bytes,
    version: i16,
) -> Result<(i32, Bytes)> {
    let header_version = R::Response::header_version(version);
    let header =
        ResponseHeader::decode(&mut frame, header_version).map_err(|e| Error::Protocol {
            broker: broker.to_owned(),
            request: name_of::<R>(),
            version,
            message: format!("response header: {e:#}"),
        })?;
    Ok((header.correlation_id, frame))
}

/// Decodes a response body of `R` at `version`.
pub(crate) fn decode_body<R: Request>(
    broker: &str,
    mut body: Bytes,
    version: i16,
) -> Result<R::Response> {
    R::Response::decode(&mut body, version).map_err(|e| Error::Protocol {
        broker: broker.to_owned(),
        request: name_of::<R>(),
        version,
        message: format!("{e:#}"),
    })
}

/// Why a broker closes a plaintext connection right after answering ApiVersions: Kafka's SASL
/// listeners answer ApiVersions before authentication, then hang up on any other request.
const SASL_EXPECTED: &str = " right after ApiVersions: this listener probably expects SASL \
     (set -X security.protocol=SASL_PLAINTEXT or SASL_SSL, with sasl.mechanism, \
     sasl.username and sasl.password)";

pub(crate) fn name_of<R: Request>() -> RequestName {
    RequestName(ApiKey::try_from(R::KEY).unwrap_or(ApiKey::ApiVersions))
}

/// A connection setup's error in words when it shows the listener is not what the
/// configuration expects: an HTTP answer, a TLS alert to plaintext.
fn diagnose(e: Error) -> Error {
    match e {
        Error::FrameSize {
            broker,
            request,
            size,
            max,
        } => {
            let prefix = i32::try_from(size)
                .map(i32::to_be_bytes)
                .unwrap_or_default();
            let message = match prefix {
                [b'H', b'T', b'T', b'P'] => {
                    "this looks like an HTTP server, not a Kafka listener".to_owned()
                }
                [0x15, 0x03, ..] => "the listener answered with a TLS alert: it speaks TLS \
                                     (set -X security.protocol=SSL or SASL_SSL)"
                    .to_owned(),
                _ => {
                    return Error::FrameSize {
                        broker,
                        request,
                        size,
                        max,
                    }
                }
            };
            Error::WrongListener { broker, message }
        }
        e => e,
    }
}

/// How reading a frame failed, before the broker and request are attached.
#[derive(Debug)]
pub(crate) enum FrameError {
    Io(std::io::Error),
    Disconnected,
    Truncated { expected: usize, received: usize },
    Size(i64),
}

impl FrameError {
    pub(crate) fn into_error(self, broker: &str, request: RequestName, max: usize) -> Error {
        let broker = broker.to_owned();
        match self {
            FrameError::Io(source) => io_error(&broker, request, source),
            FrameError::Disconnected => Error::Disconnected {
                broker,
                request,
                hint: "",
            },
            FrameError::Truncated { expected, received } => Error::Truncated {
                broker,
                request,
                expected,
                received,
            },
            FrameError::Size(size) => Error::FrameSize {
                broker,
                request,
                size,
                max,
            },
        }
    }
}

/// Reads one size-prefixed frame. The size is checked against `max` before any allocation;
/// the buffer then grows with the bytes received, at most [`READ_CHUNK`] ahead of them.
pub(crate) async fn read_frame<S: AsyncRead + Unpin + ?Sized>(
    stream: &mut S,
    max: usize,
) -> std::result::Result<Bytes, FrameError> {
    let mut size_buf = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match stream.read(&mut size_buf[got..]).await {
            Ok(0) if got == 0 => return Err(FrameError::Disconnected),
            Ok(0) => {
                return Err(FrameError::Truncated {
                    expected: 4,
                    received: got,
                })
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(if got == 0 {
                    FrameError::Disconnected
                } else {
                    FrameError::Truncated {
                        expected: 4,
                        received: got,
                    }
                })
            }
            Err(e) => return Err(FrameError::Io(e)),
        }
    }
    let size = i32::from_be_bytes(size_buf);
    // A response holds at least its correlation id.
    if size < 4 || size as usize > max {
        return Err(FrameError::Size(i64::from(size)));
    }
    let size = size as usize;
    let mut buf = BytesMut::with_capacity(size.min(READ_CHUNK));
    while buf.len() < size {
        if buf.capacity() == buf.len() {
            buf.reserve((size - buf.len()).min(READ_CHUNK.max(buf.len())));
        }
        let want = (size - buf.len()).min(buf.capacity() - buf.len());
        let mut limited = (&mut *stream).take(want as u64);
        match limited.read_buf(&mut buf).await {
            Ok(0) => {
                return Err(FrameError::Truncated {
                    expected: size + 4,
                    received: buf.len() + 4,
                })
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(FrameError::Truncated {
                    expected: size + 4,
                    received: buf.len() + 4,
                })
            }
            Err(e) => return Err(FrameError::Io(e)),
        }
    }
    Ok(buf.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frame_of(bytes: &[u8], max: usize) -> std::result::Result<Bytes, FrameError> {
        let mut r: &[u8] = bytes;
        read_frame(&mut r, max).await
    }

    #[tokio::test]
    async fn frames_are_size_checked_before_allocation() {
        // 2 GiB - 1 claimed, nothing sent: refused from the size field alone.
        let e = frame_of(&0x7fff_ffffi32.to_be_bytes(), 1 << 20).await;
        assert!(matches!(e, Err(FrameError::Size(0x7fff_ffff))), "{e:?}");
        let e = frame_of(&(-1i32).to_be_bytes(), 1 << 20).await;
        assert!(matches!(e, Err(FrameError::Size(-1))), "{e:?}");
        let e = frame_of(&3i32.to_be_bytes(), 1 << 20).await;
        assert!(matches!(e, Err(FrameError::Size(3))), "{e:?}");
        let e = frame_of(&[], 1 << 20).await;
        assert!(matches!(e, Err(FrameError::Disconnected)), "{e:?}");
        let e = frame_of(&[0, 0], 1 << 20).await;
        assert!(
            matches!(
                e,
                Err(FrameError::Truncated {
                    expected: 4,
                    received: 2
                })
            ),
            "{e:?}"
        );
        // A size within the limit but only part of the frame: truncated.
        let mut partial = 1_000_000i32.to_be_bytes().to_vec();
        partial.extend_from_slice(&[7; 100_000]);
        let e = frame_of(&partial, 1 << 20).await;
        assert!(
            matches!(
                e,
                Err(FrameError::Truncated {
                    expected: 1_000_004,
                    received: 100_004
                })
            ),
            "{e:?}"
        );
        let mut whole = 200_000i32.to_be_bytes().to_vec();
        whole.extend((0..200_000u32).map(|i| i as u8));
        whole.extend_from_slice(b"next");
        let f = frame_of(&whole, 1 << 20).await.unwrap();
        assert_eq!(f.len(), 200_000);
        assert_eq!(&f[..], &whole[4..200_004]);
    }

    #[tokio::test]
    async fn correlation_ids_are_checked() {
        let (client, mut server) = tokio::io::duplex(1 << 16);
        let mut conn = Connection::from_stream(Box::new(client), 1 << 20);
        let server_task = tokio::spawn(async move {
            let req = read_frame(&mut server, 1 << 20).await.unwrap();
            assert!(req.len() > 8);
            // Answer with correlation id 99 whatever was asked.
            let mut out = 8i32.to_be_bytes().to_vec();
            out.extend_from_slice(&99i32.to_be_bytes());
            out.extend_from_slice(&[0, 0, 0, 0]);
            server.write_all(&out).await.unwrap();
            server
        });
        let e = conn
            .roundtrip_raw(&ApiVersionsRequest::default(), 0, Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::CorrelationId {
                    expected: 1,
                    found: 99,
                    ..
                }
            ),
            "{e}"
        );
        let _server = server_task.await.unwrap();
    }
}
