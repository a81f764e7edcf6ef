//! rustls client configuration from `ssl.*` properties.

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::config::ClientConfig;
use crate::error::{Error, Result};

/// CA bundles of common distributions, used when `ssl.ca.location` is not set.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
    "/etc/ssl/ca-bundle.pem",
];

fn tls_err(message: String) -> Error {
    Error::Tls {
        broker: "(configuration)".to_owned(),
        message,
    }
}

fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| tls_err(format!("{}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(tls_err(format!(
            "{}: no PEM certificate found",
            path.display()
        )));
    }
    Ok(certs)
}

/// Builds the rustls configuration: trusted roots from `ssl.ca.location` (else the system
/// bundle), a client certificate and key for mutual TLS when given; hostname verification is
/// always on.
pub(crate) fn client_config(config: &ClientConfig) -> Result<Arc<rustls::ClientConfig>> {
    let mut roots = RootCertStore::empty();
    let ca_path = match &config.ssl_ca_location {
        Some(p) => p.clone(),
        None => SYSTEM_BUNDLES
            .iter()
            .map(Path::new)
            .find(|p| p.is_file())
            .ok_or_else(|| {
                tls_err("ssl.ca.location is not set and no system CA bundle was found".to_owned())
            })?
            .to_path_buf(),
    };
    let certs = load_certs(&ca_path)?;
    let (added, _ignored) = roots.add_parsable_certificates(certs);
    if added == 0 {
        return Err(tls_err(format!(
            "{}: no usable CA certificate",
            ca_path.display()
        )));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_err(format!("{e}")))?
        .with_root_certificates(roots);
    let tls = match (&config.ssl_certificate_location, &config.ssl_key_location) {
        (Some(cert), Some(key)) => {
            let chain = load_certs(cert)?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| tls_err(format!("{}: {e}", key.display())))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| tls_err(format!("client certificate and key: {e}")))?
        }
        _ => builder.with_no_client_auth(),
    };
    Ok(Arc::new(tls))
}
