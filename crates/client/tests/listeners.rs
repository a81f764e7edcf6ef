//! A wrong listener is named in words: a KRaft controller's, an HTTP server, a TLS listener
//! spoken to in plaintext, a listener without SASL asked for SASL (issue 30, observation 5).

use kafka_protocol::messages::{ApiKey, SaslHandshakeResponse};
use krecords_client::{Client, ClientConfig, Error};
use krecords_testkit::broker::{api_versions_of, frame};
use krecords_testkit::{Action, Fake};

fn config(fake: &Fake, extra: &[&str]) -> ClientConfig {
    let mut pairs = vec![
        format!("bootstrap.servers={}", fake.addr()),
        "retries=0".into(),
    ];
    pairs.extend(extra.iter().map(|s| (*s).to_owned()));
    ClientConfig::from_pairs(pairs).unwrap()
}

fn wrong_listener(e: &Error) -> &str {
    let Error::NoBrokerReachable { last, .. } = e else {
        panic!("{e}")
    };
    match &**last {
        Error::WrongListener { message, .. } => message,
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn a_controller_listener_is_named() {
    // A controller answers ApiVersions with controller APIs only (Vote, no Metadata).
    let fake = Fake::start(|_, header, _| {
        Action::Send(api_versions_of(
            header,
            &[(ApiKey::ApiVersions, 0, 4), (ApiKey::Vote, 0, 2)],
        ))
    });
    let e = Client::connect(config(&fake, &[])).await.unwrap_err();
    assert!(
        wrong_listener(&e).contains("KRaft controller listener; use a broker's address"),
        "{e}"
    );
}

#[tokio::test]
async fn an_http_server_is_named() {
    let fake = Fake::start(|_, _, _| {
        Action::SendAndClose(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".to_vec())
    });
    let e = Client::connect(config(&fake, &[])).await.unwrap_err();
    assert!(
        wrong_listener(&e).contains("looks like an HTTP server, not a Kafka listener"),
        "{e}"
    );
}

#[tokio::test]
async fn a_tls_alert_to_plaintext_is_named() {
    // A TLS server's alert record: content type 21, version 3.3.
    let fake =
        Fake::start(|_, _, _| Action::SendAndClose(vec![0x15, 0x03, 0x03, 0x00, 0x02, 2, 70]));
    let e = Client::connect(config(&fake, &[])).await.unwrap_err();
    assert!(wrong_listener(&e).contains("it speaks TLS"), "{e}");
}

#[tokio::test]
async fn sasl_on_a_listener_without_sasl_says_so_in_full() {
    let fake = Fake::start(
        |_, header, _| match ApiKey::try_from(header.request_api_key) {
            Ok(ApiKey::SaslHandshake) => Action::Send(frame(
                header,
                &SaslHandshakeResponse::default().with_error_code(34),
            )),
            _ => Action::Send(api_versions_of(
                header,
                &[
                    (ApiKey::ApiVersions, 0, 3),
                    (ApiKey::Metadata, 0, 12),
                    (ApiKey::SaslHandshake, 0, 1),
                ],
            )),
        },
    );
    let e = Client::connect(config(
        &fake,
        &[
            "security.protocol=SASL_PLAINTEXT",
            "sasl.username=u",
            "sasl.password=p",
        ],
    ))
    .await
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("this listener takes no SASL"), "{msg}");
    assert!(!msg.trim_end().ends_with("offers"), "{msg}");
}

#[tokio::test]
async fn plaintext_on_a_sasl_listener_says_so() {
    // A SASL listener answers ApiVersions before authentication, then hangs up on Metadata.
    let fake = Fake::start(
        |_, header, _| match ApiKey::try_from(header.request_api_key) {
            Ok(ApiKey::ApiVersions) => Action::Send(api_versions_of(
                header,
                &[
                    (ApiKey::ApiVersions, 0, 3),
                    (ApiKey::Metadata, 0, 12),
                    (ApiKey::SaslHandshake, 0, 1),
                ],
            )),
            _ => Action::Close,
        },
    );
    let client = Client::connect(config(&fake, &[])).await.unwrap();
    let e = client.metadata(None).await.unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("connection closed by the broker right after ApiVersions: this listener probably expects SASL (set -X security.protocol=SASL_PLAINTEXT or SASL_SSL"),
        "{text}"
    );
}
