//! `krec verify --remote LOCATION`: the remote tier reconciled with `__remote_log_metadata` and
//! the local logs ([`krecords_remote::verify`]), printed as the rest of `verify` prints.

use crate::args::Format;
use crate::outcome::Failure;
use krecords_remote::location::RemoteOptions;
use krecords_remote::metadata::MetadataLog;
use krecords_remote::verify::{self, Options, Summary};
use std::io::{self, Write};
use std::path::Path;

/// What `verify --remote` was given.
pub struct Request<'a> {
    /// `--remote`.
    pub location: &'a str,
    /// `__remote_log_metadata`, read from `--remote-metadata` or the broker root
    /// ([`read_metadata_dir`]) or from a live cluster.
    pub metadata: MetadataLog,
    /// The broker root whose partitions the remote tier is compared with.
    pub local_root: Option<&'a Path>,
    /// `-X`/`-F` remote options and `--rsm-private-key`.
    pub options: RemoteOptions,
    /// `--topic`.
    pub topic: Option<&'a glob::Pattern>,
    /// `--max-decompressed-bytes`.
    pub limit: usize,
    /// `--format`.
    pub format: Format,
    /// `--threads`: remote segments checked at once.
    pub threads: usize,
}

/// Reads `__remote_log_metadata` from a broker root or one of its `__remote_log_metadata-N`
/// directories.
///
/// # Errors
///
/// [`Failure::Usage`] when `dir` holds no metadata partition; [`Failure::Io`] otherwise.
pub fn read_metadata_dir(dir: &Path, limit: usize) -> Result<MetadataLog, Failure> {
    MetadataLog::read(dir, limit).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            Failure::Usage(format!("--remote-metadata: {e}"))
        } else {
            Failure::Io(e, format!("cannot read {}", dir.display()))
        }
    })
}

/// Runs the reconciliation ([`verify::verify_to`]), printing one line per problem (and, in
/// JSON, per segment); returns the summary.
pub fn run(request: Request<'_>, out: &mut dyn Write) -> Result<Summary, Failure> {
    let tier = request
        .options
        .open_tier(request.location)
        .map_err(|e| Failure::Usage(format!("--remote {e}")))?;
    let filter = request.topic.map(|g| move |t: &str| g.matches(t));
    let options = Options {
        local_root: request.local_root,
        max_decompressed_bytes: request.limit,
        topic_filter: filter.as_ref().map(|f| f as &dyn Fn(&str) -> bool),
        threads: request.threads,
    };
    let json = request.format == Format::Json;
    verify::verify_to(&tier, &request.metadata, &options, json, out).map_err(|e| {
        let what = format!("remote tier {}", request.location);
        Failure::Io(io::Error::other(e.to_string()), what)
    })
}
