//! The `kafka://` options: client properties (`-X`, `-F`), shared by every command that reads
//! or writes a live cluster.

use crate::outcome::Failure;
use krecords_client::ClientConfig;
pub use krecords_source::KafkaUrl;
use std::path::PathBuf;

const HEADING: &str = "Live clusters (kafka:// sources)";

const REMOTE_HEADING: &str = "Remote tier (s3://BUCKET/PREFIX, gs://, az://, file:///ROOT/PREFIX)";

/// The client properties of `kafka://` sources.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ClientArgs {
    /// kafka://: a client property NAME=VALUE with librdkafka's names (security.protocol,
    /// sasl.mechanism, sasl.username, ssl.ca.location, socket.timeout.ms, ...); repeatable.
    /// bootstrap.servers comes from the URL. A new connection must answer within 10 s
    /// (socket.connection.setup.timeout.ms), a request within 60 s (socket.timeout.ms).
    /// Properties that do not apply to krec (group.id, debug, ...) are ignored with a warning.
    #[arg(short = 'X', value_name = "NAME=VALUE", help_heading = HEADING)]
    pub property: Vec<String>,
    /// kafka://: a file of NAME=VALUE lines (as -X; `#` comments), read before the -X options.
    #[arg(short = 'F', value_name = "FILE", help_heading = HEADING)]
    pub config_file: Vec<PathBuf>,
    /// Remote tier: the RSA private key (PEM) of a key pair named in the manifests' dataKey,
    /// as KEYID=PEMFILE; repeatable. Needed for segments uploaded with encryption on.
    #[arg(long, value_name = "KEYID=PEMFILE", help_heading = REMOTE_HEADING)]
    pub rsm_private_key: Vec<String>,
}

impl ClientArgs {
    /// The client configuration of the `-F` files, then the `-X` properties.
    pub fn config(&self) -> Result<ClientConfig, Failure> {
        let mut c = ClientConfig::default();
        for f in &self.config_file {
            c.apply_file(f)
                .map_err(|e| Failure::Usage(format!("-F {}: {e}", f.display())))?;
        }
        for x in &self.property {
            c.set_pair(x)
                .map_err(|e| Failure::Usage(format!("-X {x}: {e}")))?;
        }
        for w in std::mem::take(&mut c.ignored) {
            eprintln!("krec: warning: {w}");
        }
        Ok(c)
    }

    /// The private keys of `--rsm-private-key`.
    pub fn rsm_keys(&self) -> Result<krecords_remote::crypto::KeyRing, Failure> {
        let mut keys = krecords_remote::crypto::KeyRing::new();
        for k in &self.rsm_private_key {
            keys.add_spec(k)
                .map_err(|e| Failure::Usage(format!("--rsm-private-key {k}: {e}")))?;
        }
        Ok(keys)
    }
}
