//! The `kafka://` options: client properties (`-X`, `-F`), shared by every command that reads
//! or writes a live cluster.

use crate::outcome::Failure;
use krecords_client::ClientConfig;
pub use krecords_source::KafkaUrl;
use krecords_source::RemoteOptions;
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
    /// Properties krec does not use (group.id, debug, linger.ms, acks, batch.size,
    /// compression.type, enable.idempotence, ...) are ignored with a warning saying what krec
    /// does instead; sasl.jaas.config (PlainLoginModule, ScramLoginModule) sets the SASL
    /// username and password.
    /// Remote tier options (s3.*, aws.*, gcs.*, azure.*, remote.*, rsm.config.*) apply to
    /// remote tier locations instead (see the end of --help).
    #[arg(short = 'X', value_name = "NAME=VALUE", help_heading = HEADING)]
    pub property: Vec<String>,
    /// kafka://: a file of NAME=VALUE lines (as -X; `#` comments, `\` at a line's end goes on
    /// as in Java's .properties), read before -X. Remote tier options in it apply to remote tier
    /// locations, so a broker's properties (rsm.config.storage.s3.endpoint.url=...) work as is.
    #[arg(short = 'F', value_name = "FILE", help_heading = HEADING)]
    pub config_file: Vec<PathBuf>,
    /// Remote tier: the RSA private key (PEM) of a key pair named in the manifests' dataKey,
    /// as KEYID=PEMFILE; repeatable. Needed for segments uploaded with encryption on.
    #[arg(long, value_name = "KEYID=PEMFILE", help_heading = REMOTE_HEADING)]
    pub rsm_private_key: Vec<String>,
}

/// Help text of the remote tier options, for the reading commands' `--help`.
pub use krecords_remote::location::HELP as REMOTE_HELP;

impl ClientArgs {
    /// The client configuration of the `-F` files, then the `-X` properties.
    pub fn config(&self) -> Result<ClientConfig, Failure> {
        let mut c = ClientConfig::default();
        for f in &self.config_file {
            c.apply_str(&krecords_source::client_lines(&read_config_file(f)?))
                .map_err(|e| Failure::Usage(format!("-F {}: {e}", f.display())))?;
        }
        for x in self
            .property
            .iter()
            .filter(|x| !RemoteOptions::is_remote_pair(x))
        {
            c.set_pair(x).map_err(|e| {
                // A secret's value is never printed (sasl.jaas.config holds the password).
                Failure::Usage(format!("-X {}: {e}", krecords_client::Secret::shown(x)))
            })?;
        }
        for w in std::mem::take(&mut c.ignored) {
            eprintln!("krec: warning: {w}");
        }
        Ok(c)
    }

    /// For a command given no kafka:// source among `paths`: warns (once) that its client
    /// properties are ignored.
    pub fn warn_unused(&self, paths: &[PathBuf]) {
        let (x, f) = (&self.property, &self.config_file);
        if let Some(w) = krecords_source::unused_client_properties(paths, x, f) {
            static ONCE: std::sync::Once = std::sync::Once::new();
            ONCE.call_once(|| eprintln!("krec: warning: {w}"));
        }
    }

    /// The remote tier options of the `-F` files, then the `-X` properties, and the private
    /// keys of `--rsm-private-key`.
    pub fn remote_options(&self) -> Result<RemoteOptions, Failure> {
        let mut o = RemoteOptions::default();
        let mut warnings = Vec::new();
        for f in &self.config_file {
            let text = krecords_client::join_continuations(&read_config_file(f)?);
            let what = |i: usize| format!("-F {}: line {}", f.display(), i + 1);
            warnings.extend(o.set_lines(text.lines(), what).map_err(Failure::Usage)?);
        }
        let what = |i: usize| format!("-X {}", self.property[i]);
        let props = self.property.iter().map(String::as_str);
        warnings.extend(o.set_lines(props, what).map_err(Failure::Usage)?);
        for w in warnings {
            eprintln!("krec: warning: {w}");
        }
        for k in &self.rsm_private_key {
            o.keys
                .add_spec(k)
                .map_err(|e| Failure::Usage(format!("--rsm-private-key {k}: {e}")))?;
        }
        Ok(o)
    }
}

fn read_config_file(f: &std::path::Path) -> Result<String, Failure> {
    std::fs::read_to_string(f).map_err(|e| Failure::Usage(format!("-F {}: {e}", f.display())))
}
