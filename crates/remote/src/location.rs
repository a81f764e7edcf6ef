//! Where a remote tier is, and how to reach it: a URL whose path is where object keys start
//! (the storage root plus the plugin's `key.prefix`), and the options of its storage.
//!
//! - `s3://BUCKET/PREFIX`, `gs://BUCKET/PREFIX`, `az://CONTAINER/PREFIX` (and the other
//!   spellings object_store knows: `s3a://`, `gcs://`, `abfs://`, `abfss://`, `azure://`,
//!   `adl://`): the bucket through object_store, keys starting with `PREFIX`.
//! - `file:///ROOT/PREFIX`: the plugin's filesystem backend, split at the last `/`: the
//!   directory is the storage root (`rsm.config.storage.root`), the rest is the key prefix
//!   (`file:///var/tier/` is the root `/var/tier` with no prefix).
//!
//! Options ([`RemoteOptions::set`]) use the plugin's own configuration names, alone or with
//! the broker's `rsm.config.storage.` prefix: `s3.endpoint.url`, `s3.region`,
//! `s3.path.style.access.enabled`, `aws.access.key.id`, `aws.secret.access.key`,
//! `gcs.credentials.path`, `azure.account.name`, `azure.account.key`, and krec's
//! `remote.request.timeout.ms`, `remote.connect.timeout.ms`, `remote.retries`,
//! `remote.lookahead`. The usual environment applies underneath (`AWS_*`, `GOOGLE_*`,
//! `AZURE_*`, as object_store's `from_env` reads them); options given win.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;

use crate::crypto::KeyRing;
use crate::error::{Error, Result};
use crate::objstore::{ObjectStoreStorage, Timeouts};
use crate::storage::FileSystemStorage;
use crate::stream::SharedStorage;

/// The object store behind a location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Amazon S3 or an S3-compatible server.
    S3,
    /// Google Cloud Storage.
    Gcs,
    /// Azure Blob Storage.
    Azure,
    /// A local directory, the plugin's filesystem backend.
    File,
}

/// A parsed remote tier location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The URL as given.
    pub url: String,
    /// Which store.
    pub backend: Backend,
    /// The bucket or container (empty for `file://`).
    pub bucket: String,
    /// The storage root directory, for `file://`.
    pub root: Option<PathBuf>,
    /// Where object keys start: the plugin's `key.prefix` (may be empty).
    pub prefix: String,
}

const SCHEMES: [(&str, Backend); 10] = [
    ("s3", Backend::S3),
    ("s3a", Backend::S3),
    ("gs", Backend::Gcs),
    ("gcs", Backend::Gcs),
    ("az", Backend::Azure),
    ("azure", Backend::Azure),
    ("abfs", Backend::Azure),
    ("abfss", Backend::Azure),
    ("adl", Backend::Azure),
    ("file", Backend::File),
];

impl Location {
    /// Parses `text` as a remote tier location; `None` when it is not a URL of one of the
    /// schemes above (so a path or a `kafka://` URL).
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_remote::location::{Backend, Location};
    /// let l = Location::parse("s3://bucket/tiered/").unwrap().unwrap();
    /// assert_eq!((l.backend, l.bucket.as_str(), l.prefix.as_str()), (Backend::S3, "bucket", "tiered/"));
    /// let f = Location::parse("file:///var/tier/pre-").unwrap().unwrap();
    /// assert_eq!((f.root.unwrap().to_str(), f.prefix.as_str()), (Some("/var/tier"), "pre-"));
    /// assert!(Location::parse("events-0/").is_none());
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BadKey`] for a URL of a known scheme without a bucket, or a `file:` URL that
    /// is not `file:///ABSOLUTE/PATH`.
    pub fn parse(text: &str) -> Option<Result<Location>> {
        let (scheme, rest) = text.split_once("://")?;
        let backend = SCHEMES
            .iter()
            .find(|(s, _)| s.eq_ignore_ascii_case(scheme))?
            .1;
        let bad = |reason: &str| Error::BadKey {
            key: text.to_string(),
            reason: reason.to_string(),
        };
        if backend == Backend::File {
            if !rest.starts_with('/') {
                return Some(Err(bad(
                    "expected file:///ROOT/PREFIX (an absolute path after file://)",
                )));
            }
            let cut = rest.rfind('/').unwrap_or(0);
            let (root, prefix) = rest.split_at(cut);
            let prefix = prefix.get(1..).unwrap_or("");
            let root = if root.is_empty() { "/" } else { root };
            return Some(Ok(Location {
                url: text.to_string(),
                backend,
                bucket: String::new(),
                root: Some(PathBuf::from(root)),
                prefix: prefix.to_string(),
            }));
        }
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Some(Err(bad("no bucket or container after the scheme")));
        }
        Some(Ok(Location {
            url: text.to_string(),
            backend,
            bucket: bucket.to_string(),
            root: None,
            prefix: prefix.to_string(),
        }))
    }

    /// A location naming one partition (`…/<topic>-<topicId>/<partition>`, as
    /// [`Location::partition_name`] writes it) split into the location of the whole tier and
    /// that partition; any other location is returned as it is, with `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_remote::location::Location;
    /// let l = Location::parse("s3://b/tiered/orders-MWJ6FHTfRYy67jzwZdeqSQ/3").unwrap().unwrap();
    /// let (tier, p) = l.split_partition();
    /// assert_eq!((tier.url.as_str(), tier.prefix.as_str()), ("s3://b/tiered/", "tiered/"));
    /// let p = p.unwrap();
    /// assert_eq!((p.topic.as_str(), p.partition), ("orders", 3));
    /// ```
    pub fn split_partition(&self) -> (Location, Option<crate::key::RemotePartition>) {
        let full = match &self.root {
            Some(root) => {
                let root = root.to_string_lossy();
                let sep = if root.ends_with('/') { "" } else { "/" };
                format!("{root}{sep}{}", self.prefix)
            }
            None => self.prefix.clone(),
        };
        let trimmed = full.trim_end_matches('/');
        let split = || {
            let (rest, number) = trimmed.rsplit_once('/')?;
            if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let partition: i32 = number.parse().ok()?;
            let (base, topic_part) = rest.rsplit_once('/').unwrap_or(("", rest));
            let cut = topic_part.len().checked_sub(crate::key::UUID_CHARS)?;
            let topic = topic_part.get(..cut)?.strip_suffix('-')?;
            let topic_id = crate::key::KafkaUuid::parse(topic_part.get(cut..)?).ok()?;
            if topic.is_empty() {
                return None;
            }
            Some((base.to_string(), topic.to_string(), topic_id, partition))
        };
        let Some((base, topic, topic_id, partition)) = split() else {
            return (self.clone(), None);
        };
        let scheme = self.url.split("://").next().unwrap_or("");
        let tier = match &self.root {
            Some(_) => {
                let root = if base.is_empty() {
                    "/".to_string()
                } else {
                    base
                };
                Location {
                    url: format!("{scheme}://{}/", root.trim_end_matches('/')),
                    root: Some(PathBuf::from(root)),
                    prefix: String::new(),
                    ..self.clone()
                }
            }
            None => {
                let prefix = if base.is_empty() {
                    base
                } else {
                    format!("{base}/")
                };
                Location {
                    url: format!("{scheme}://{}/{prefix}", self.bucket),
                    prefix,
                    ..self.clone()
                }
            }
        };
        let p = crate::key::RemotePartition {
            topic,
            topic_id,
            partition,
        };
        (tier, Some(p))
    }

    /// The name of a partition of this location: the URL up to the prefix, then
    /// `<topic>-<topicId>/<partition>`.
    pub fn partition_name(&self, partition: &crate::key::RemotePartition) -> String {
        let base = self
            .url
            .strip_suffix(self.prefix.as_str())
            .unwrap_or(&self.url);
        let sep = if base.ends_with('/') { "" } else { "/" };
        format!(
            "{base}{sep}{}",
            partition.key_prefix(&self.prefix).trim_end_matches('/')
        )
    }
}

/// The options of a remote tier's storage and reading (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct RemoteOptions {
    /// `s3.endpoint.url`: an S3-compatible server; `http://` allows plain HTTP.
    pub endpoint: Option<String>,
    /// `s3.region`.
    pub region: Option<String>,
    /// `s3.path.style.access.enabled`.
    pub path_style: Option<bool>,
    /// `aws.access.key.id`.
    pub access_key_id: Option<String>,
    /// `aws.secret.access.key`.
    pub secret_access_key: Option<String>,
    /// `gcs.credentials.path`: a service account JSON file.
    pub gcs_credentials: Option<String>,
    /// `azure.account.name`.
    pub azure_account: Option<String>,
    /// `azure.account.key`.
    pub azure_key: Option<String>,
    /// Timeouts and retries (`remote.request.timeout.ms`, `remote.connect.timeout.ms`,
    /// `remote.retries`).
    pub timeouts: Timeouts,
    /// Chunks fetched ahead of the one being read (`remote.lookahead`); 0: the default, 4.
    pub lookahead: usize,
    /// The private keys of the manifests' `dataKey`s (`--rsm-private-key ID=FILE`).
    pub keys: KeyRing,
}

/// The prefix a broker's properties give the plugin's storage options.
pub const BROKER_STORAGE_PREFIX: &str = "rsm.config.storage.";

/// The prefix of every option of the plugin in a broker's properties.
pub const BROKER_PREFIX: &str = "rsm.config.";

/// Families of remote tier option names; a name of one of them that is not known is an error.
const FAMILIES: [&str; 5] = ["s3.", "aws.", "gcs.", "azure.", "remote."];

/// Plugin options that mean nothing to a reader: accepted with a warning.
const NOT_APPLICABLE: [&str; 12] = [
    "s3.bucket.name",
    "s3.multipart.upload.part.size",
    "s3.api.call.timeout",
    "s3.api.call.attempt.timeout",
    "s3.storage.class",
    "s3.checksum.check.enabled",
    "s3.certificate.check.enabled",
    "aws.credentials.provider.class",
    "aws.checksum.check.enabled",
    "gcs.bucket.name",
    "azure.container.name",
    "backend.class",
];

impl RemoteOptions {
    /// The default lookahead, in chunks.
    pub const DEFAULT_LOOKAHEAD: usize = 4;

    /// Whether `name` is a remote tier option (known or not): one of the families above, with
    /// or without `rsm.config.storage.`, or any `rsm.config.` name.
    pub fn is_remote_key(name: &str) -> bool {
        let name = name.trim();
        name.starts_with(BROKER_PREFIX) || FAMILIES.iter().any(|f| name.starts_with(f))
    }

    /// Whether a NAME=VALUE line names a remote tier option ([`RemoteOptions::is_remote_key`]).
    pub fn is_remote_pair(pair: &str) -> bool {
        pair.split_once('=')
            .is_some_and(|(n, _)| Self::is_remote_key(n))
    }

    /// The chunks to fetch ahead.
    pub fn lookahead(&self) -> usize {
        if self.lookahead == 0 {
            Self::DEFAULT_LOOKAHEAD
        } else {
            self.lookahead
        }
    }

    /// Sets option `name` to `value`. Returns a warning for a plugin option that does not
    /// apply to reading (it is ignored).
    ///
    /// # Errors
    ///
    /// A message for an unknown name or a bad value.
    pub fn set(&mut self, name: &str, value: &str) -> std::result::Result<Option<String>, String> {
        let full = name.trim();
        let value = value.trim();
        let name = full.strip_prefix(BROKER_STORAGE_PREFIX).unwrap_or(full);
        let some = || Some(value.to_string());
        let ms = |v: &str| {
            v.parse::<u64>()
                .ok()
                .filter(|&n| n > 0)
                .map(Duration::from_millis)
                .ok_or_else(|| {
                    format!("{full}: expected a positive number of milliseconds, got {v:?}")
                })
        };
        match name {
            "s3.endpoint.url" => self.endpoint = some(),
            "s3.region" => self.region = some(),
            "s3.path.style.access.enabled" => {
                self.path_style = Some(match value {
                    "true" => true,
                    "false" => false,
                    v => return Err(format!("{full}: expected true or false, got {v:?}")),
                })
            }
            "aws.access.key.id" => self.access_key_id = some(),
            "aws.secret.access.key" => self.secret_access_key = some(),
            "gcs.credentials.path" => self.gcs_credentials = some(),
            "azure.account.name" => self.azure_account = some(),
            "azure.account.key" => self.azure_key = some(),
            "remote.request.timeout.ms" => self.timeouts.request = ms(value)?,
            "remote.connect.timeout.ms" => self.timeouts.connect = ms(value)?,
            "remote.retries" => {
                self.timeouts.retries = value
                    .parse()
                    .map_err(|_| format!("{full}: expected a number of retries, got {value:?}"))?
            }
            "remote.lookahead" => {
                self.lookahead = value
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=256).contains(n))
                    .ok_or_else(|| format!("{full}: expected 1..=256 chunks, got {value:?}"))?
            }
            n if NOT_APPLICABLE.contains(&n) || full.starts_with(BROKER_PREFIX) => {
                return Ok(Some(format!(
                    "{full} does not apply to reading the remote tier and is ignored"
                )))
            }
            other => {
                let known = [
                    "s3.endpoint.url",
                    "s3.region",
                    "s3.path.style.access.enabled",
                    "aws.access.key.id",
                    "aws.secret.access.key",
                    "gcs.credentials.path",
                    "azure.account.name",
                    "azure.account.key",
                    "remote.request.timeout.ms",
                    "remote.connect.timeout.ms",
                    "remote.retries",
                    "remote.lookahead",
                ];
                return Err(format!(
                    "unknown remote tier property {other:?} (known: {})",
                    known.join(", ")
                ));
            }
        }
        Ok(None)
    }

    /// Sets a `name=value` pair, as [`RemoteOptions::set`].
    ///
    /// # Errors
    ///
    /// As [`RemoteOptions::set`]; a pair without `=`.
    pub fn set_pair(&mut self, pair: &str) -> std::result::Result<Option<String>, String> {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("expected name=value, got {pair:?}"))?;
        self.set(name, value)
    }

    /// Opens the storage of `location`: `(storage, key prefix)`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when object_store refuses the configuration (no credentials found is
    /// only an error at the first request).
    pub fn open(&self, location: &Location) -> Result<(SharedStorage, String)> {
        let failed = |e: object_store::Error| Error::Io {
            op: "configure",
            path: PathBuf::from(&location.url),
            source: std::io::Error::other(e.to_string()),
        };
        let name = format!(
            "{}://{}",
            location.url.split("://").next().unwrap_or(""),
            location.bucket
        );
        let store: Arc<dyn object_store::ObjectStore> = match location.backend {
            Backend::File => {
                let root = location.root.clone().unwrap_or_default();
                let storage: SharedStorage = Arc::new(FileSystemStorage::new(root));
                return Ok((storage, location.prefix.clone()));
            }
            Backend::S3 => {
                let mut b = AmazonS3Builder::from_env()
                    .with_bucket_name(&location.bucket)
                    .with_retry(self.timeouts.retry_config());
                let endpoint = self.endpoint.clone().or_else(|| {
                    ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"]
                        .iter()
                        .find_map(|v| std::env::var(v).ok())
                });
                let mut client = self.timeouts.client_options();
                if let Some(e) = &endpoint {
                    b = b.with_endpoint(e);
                    if e.starts_with("http://") {
                        client = client.with_allow_http(true);
                    }
                }
                b = b.with_client_options(client);
                if let Some(r) = self
                    .region
                    .clone()
                    .or_else(|| std::env::var("AWS_REGION").ok())
                {
                    b = b.with_region(r);
                }
                if let Some(p) = self.path_style {
                    b = b.with_virtual_hosted_style_request(!p);
                }
                if let Some(k) = &self.access_key_id {
                    b = b.with_access_key_id(k);
                }
                if let Some(s) = &self.secret_access_key {
                    b = b.with_secret_access_key(s);
                }
                Arc::new(b.build().map_err(failed)?)
            }
            Backend::Gcs => {
                let mut b = GoogleCloudStorageBuilder::from_env()
                    .with_bucket_name(&location.bucket)
                    .with_retry(self.timeouts.retry_config())
                    .with_client_options(self.timeouts.client_options());
                if let Some(c) = &self.gcs_credentials {
                    b = b.with_service_account_path(c);
                }
                Arc::new(b.build().map_err(failed)?)
            }
            Backend::Azure => {
                let mut b = MicrosoftAzureBuilder::from_env()
                    .with_url(format!(
                        "{}://{}",
                        location.url.split("://").next().unwrap_or("az"),
                        location.bucket
                    ))
                    .with_retry(self.timeouts.retry_config())
                    .with_client_options(self.timeouts.client_options());
                if let Some(a) = &self.azure_account {
                    b = b.with_account(a);
                }
                if let Some(k) = &self.azure_key {
                    b = b.with_access_key(k);
                }
                Arc::new(b.build().map_err(failed)?)
            }
        };
        let storage: SharedStorage = Arc::new(ObjectStoreStorage::new(store, name, self.timeouts)?);
        Ok((storage, location.prefix.clone()))
    }

    /// Sets the remote tier options among NAME=VALUE `lines` (others are left to the client
    /// configuration; `#` comments skipped); `what(i)` names line `i` in errors. Returns the
    /// warnings of plugin options that do not apply to reading.
    ///
    /// # Errors
    ///
    /// An unknown name of a remote family, or a bad value: the line named.
    pub fn set_lines<'a>(
        &mut self,
        lines: impl IntoIterator<Item = &'a str>,
        what: impl Fn(usize) -> String,
    ) -> std::result::Result<Vec<String>, String> {
        let mut warnings = Vec::new();
        for (i, line) in lines.into_iter().enumerate() {
            let line = line.trim();
            if line.starts_with('#') || !Self::is_remote_pair(line) {
                continue;
            }
            warnings.extend(
                self.set_pair(line)
                    .map_err(|e| format!("{}: {e}", what(i)))?,
            );
        }
        Ok(warnings)
    }

    /// Opens the remote tier at `text`: a location URL ([`Location::parse`]) or a local
    /// directory, which is a filesystem-backend storage root with no key prefix; with this
    /// configuration's keys.
    ///
    /// # Errors
    ///
    /// [`Error::BadLocation`] for an empty text, a path that is no directory, a `file://` root
    /// that is none; a URL that does not parse; the store's configuration errors.
    pub fn open_tier(&self, text: &str) -> Result<crate::RemoteTier<SharedStorage>> {
        let bad = |reason: String| Error::BadLocation {
            location: text.to_owned(),
            reason,
        };
        let location = match Location::parse(text) {
            Some(l) => l?,
            None if text.is_empty() => return Err(bad("an empty location".into())),
            None if std::path::Path::new(text).is_dir() => {
                let storage: SharedStorage = Arc::new(FileSystemStorage::new(text));
                return Ok(crate::RemoteTier::new(storage, "").with_keys(self.keys.clone()));
            }
            None => {
                return Err(bad(
                    "not a directory, nor a location (s3://BUCKET/PREFIX, gs://, \
                     az://, file:///ROOT/PREFIX)"
                        .into(),
                ))
            }
        };
        if let Some(root) = location.root.as_ref().filter(|r| !r.is_dir()) {
            return Err(bad(format!("{} is not a directory", root.display())));
        }
        let (storage, prefix) = self.open(&location)?;
        Ok(crate::RemoteTier::new(storage, prefix).with_keys(self.keys.clone()))
    }
}

/// The remote tier options as the reading commands' help gives them.
pub const HELP: &str = "Remote tier locations (Kafka tiered storage as Aiven's \
tiered-storage plugin writes it): s3://BUCKET/PREFIX, gs://BUCKET/PREFIX, az://CONTAINER/PREFIX, \
or file:///ROOT/PREFIX for the plugin's filesystem backend (split at the last '/': the directory \
is the storage root, the rest the key prefix). Every partition found there is read, named \
LOCATION/<topic>-<topicId>/<partition>. Options, with -X or -F, by the plugin's names (also \
with the broker's rsm.config.storage. prefix): s3.endpoint.url (http:// allows plain HTTP), \
s3.region, s3.path.style.access.enabled, aws.access.key.id, aws.secret.access.key, \
gcs.credentials.path, azure.account.name, azure.account.key; krec's remote.request.timeout.ms \
(30000), remote.connect.timeout.ms (10000), remote.retries (3), remote.lookahead (chunks \
fetched ahead, 4). The environment applies underneath: AWS_ACCESS_KEY_ID, \
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION/AWS_DEFAULT_REGION, AWS_ENDPOINT_URL, \
GOOGLE_*, AZURE_*. Encrypted segments need --rsm-private-key KEYID=PEMFILE.";

#[cfg(test)]
mod tests {

    #[test]
    fn tiers_open_or_say_why_not() {
        let o = RemoteOptions::default();
        let err = |t: &str| match o.open_tier(t) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{t}: opened"),
        };
        assert!(err("").contains("empty"));
        assert!(err("/nonexistent/krec-tier").contains("nor a location"));
        assert!(err("file:///nonexistent-krec/p").contains("is not a directory"));
        let dir = tempfile::tempdir().unwrap();
        assert!(o.open_tier(&dir.path().display().to_string()).is_ok());
        assert!(o
            .open_tier(&format!("file://{}/pfx-", dir.path().display()))
            .is_ok());
        // An object store is configured, not contacted.
        assert!(o.open_tier("s3://bucket/prefix/").is_ok());
    }

    #[test]
    fn remote_lines_are_taken_and_others_left() {
        let mut o = RemoteOptions::default();
        let lines = [
            "# a comment",
            "bootstrap.servers=x:9092",
            "rsm.config.storage.s3.region=eu-west-1",
            "rsm.config.chunk.size=4194304",
        ];
        let warnings = o.set_lines(lines, |i| format!("line {}", i + 1)).unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let e = o
            .set_lines(["s3.nope=1"], |i| format!("line {}", i + 1))
            .unwrap_err();
        assert!(e.starts_with("line 1: "), "{e}");
    }
    use super::*;

    #[test]
    fn locations() {
        let l = Location::parse("s3://b/p/q").unwrap().unwrap();
        assert_eq!(
            (l.backend, l.bucket.as_str(), l.prefix.as_str()),
            (Backend::S3, "b", "p/q")
        );
        let l = Location::parse("s3://b").unwrap().unwrap();
        assert_eq!(l.prefix, "");
        let l = Location::parse("GS://b/x/").unwrap().unwrap();
        assert_eq!((l.backend, l.prefix.as_str()), (Backend::Gcs, "x/"));
        assert_eq!(
            Location::parse("az://c/").unwrap().unwrap().backend,
            Backend::Azure
        );
        let f = Location::parse("file:///r/o/ot/").unwrap().unwrap();
        assert_eq!(
            (f.root.as_deref(), f.prefix.as_str()),
            (Some(std::path::Path::new("/r/o/ot")), "")
        );
        let f = Location::parse("file:///tier").unwrap().unwrap();
        assert_eq!(
            (f.root.as_deref(), f.prefix.as_str()),
            (Some(std::path::Path::new("/")), "tier")
        );
        assert!(matches!(Location::parse("file://relative/x"), Some(Err(_))));
        assert!(matches!(Location::parse("s3:///p"), Some(Err(_))));
        assert!(Location::parse("kafka://h/t").is_none());
        assert!(Location::parse("http://h/t").is_none());
        assert!(Location::parse("dir/file.log").is_none());
    }

    #[test]
    fn a_partitions_name_is_a_location_of_it() {
        let f = Location::parse("file:///r/tiered/orders-AAAAAAAAAAAAAAAAAAAAAA/0/")
            .unwrap()
            .unwrap();
        let (tier, p) = f.split_partition();
        assert_eq!(
            tier.root.as_deref(),
            Some(std::path::Path::new("/r/tiered"))
        );
        assert_eq!(
            (tier.prefix.as_str(), tier.url.as_str()),
            ("", "file:///r/tiered/")
        );
        let p = p.unwrap();
        assert_eq!(
            tier.partition_name(&p),
            "file:///r/tiered/orders-AAAAAAAAAAAAAAAAAAAAAA/0"
        );
        let s = Location::parse("s3://b/orders-AAAAAAAAAAAAAAAAAAAAAA/7")
            .unwrap()
            .unwrap();
        let (tier, p) = s.split_partition();
        assert_eq!((tier.prefix.as_str(), p.unwrap().partition), ("", 7));
        for whole in [
            "s3://b/tiered/",
            "s3://b/x/0",
            "file:///r/t/",
            "s3://b/-AAAAAAAAAAAAAAAAAAAAAA/0",
        ] {
            let l = Location::parse(whole).unwrap().unwrap();
            assert_eq!(l.split_partition(), (l.clone(), None), "{whole}");
        }
    }

    #[test]
    fn partition_names() {
        use crate::key::{KafkaUuid, RemotePartition};
        let p = RemotePartition {
            topic: "orders".into(),
            topic_id: KafkaUuid([0; 16]),
            partition: 3,
        };
        let l = Location::parse("s3://b/p/").unwrap().unwrap();
        assert_eq!(
            l.partition_name(&p),
            "s3://b/p/orders-AAAAAAAAAAAAAAAAAAAAAA/3"
        );
        let l = Location::parse("s3://b/pre-").unwrap().unwrap();
        assert_eq!(
            l.partition_name(&p),
            "s3://b/pre-orders-AAAAAAAAAAAAAAAAAAAAAA/3"
        );
        let l = Location::parse("s3://b").unwrap().unwrap();
        assert_eq!(
            l.partition_name(&p),
            "s3://b/orders-AAAAAAAAAAAAAAAAAAAAAA/3"
        );
    }

    #[test]
    fn options_by_plugin_and_broker_names() {
        let mut o = RemoteOptions::default();
        assert_eq!(o.set("s3.endpoint.url", "http://127.0.0.1:9000"), Ok(None));
        assert_eq!(
            o.set_pair("rsm.config.storage.s3.region=eu-west-1"),
            Ok(None)
        );
        assert_eq!(o.set("s3.path.style.access.enabled", "true"), Ok(None));
        assert_eq!(
            o.set("rsm.config.storage.aws.access.key.id", "AK"),
            Ok(None)
        );
        assert_eq!(o.set("remote.request.timeout.ms", "1500"), Ok(None));
        assert_eq!(
            (
                o.endpoint.as_deref(),
                o.region.as_deref(),
                o.path_style,
                o.access_key_id.as_deref()
            ),
            (
                Some("http://127.0.0.1:9000"),
                Some("eu-west-1"),
                Some(true),
                Some("AK")
            )
        );
        assert_eq!(o.timeouts.request, Duration::from_millis(1500));
        assert!(o.set("s3.path.style.access.enabled", "yes").is_err());
        assert!(o.set("remote.request.timeout.ms", "0").is_err());
        let err = o.set("s3.endpoint", "x").unwrap_err();
        assert!(err.contains("unknown remote tier property"), "{err}");
        assert!(o.set("rsm.config.chunk.size", "4194304").unwrap().is_some());
        assert!(o.set("s3.bucket.name", "b").unwrap().is_some());
        assert!(RemoteOptions::is_remote_key("aws.secret.access.key"));
        assert!(RemoteOptions::is_remote_key("rsm.config.storage.s3.region"));
        assert!(!RemoteOptions::is_remote_key("security.protocol"));
        assert!(o.set_pair("novalue").is_err());
    }
}
