//! `krec verify --remote LOCATION`: the remote tier reconciled with `__remote_log_metadata` and
//! the local logs ([`krecords_remote::verify`]), printed as the rest of `verify` prints.

use crate::kafka::ClientArgs;
use crate::outcome::{Context, Failure};
use crate::source::{open_reader, open_sources};
use krecords_remote::location::RemoteOptions;
use krecords_remote::metadata::MetadataLog;
use krecords_remote::verify::{self, Options, Summary};
use krecords_source::{ReadOptions, SourceSpec};
use std::io::{self, Write};
use std::path::Path;

/// Reads `__remote_log_metadata` from `spec`: a broker root or one of its
/// `__remote_log_metadata-N` directories ([`MetadataLog::read`]), or a live cluster's topic
/// (`kafka://HOST:PORT/__remote_log_metadata`, every partition from its log start, read as
/// `verify` reads any live topic).
///
/// # Errors
///
/// [`Failure::Usage`] when the directory holds no metadata partition; [`Failure::Io`] otherwise.
pub fn read_metadata(
    spec: &Path,
    client: &ClientArgs,
    limit: usize,
) -> Result<MetadataLog, Failure> {
    if !matches!(SourceSpec::parse(spec)?, SourceSpec::Kafka(_)) {
        return MetadataLog::read(spec, limit).map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                Failure::Usage(format!("--remote-metadata: {e}"))
            } else {
                Failure::Io(e, format!("cannot read {}", spec.display()))
            }
        });
    }
    let sources = open_sources(&[spec.to_path_buf()], client)?;
    let options = ReadOptions {
        max_decompressed_bytes: limit,
        ..ReadOptions::default()
    };
    let mut log = MetadataLog::default();
    for i in 0..sources.partitions.len() {
        let mut reader = open_reader(&sources, i, &options)?;
        while let Some(file) = reader.next_file()? {
            log.read_entries(&mut reader, &file.name, limit)
                .context(|| format!("cannot read {}", spec.display()))?;
        }
    }
    Ok(log)
}

/// Opens the remote tier at `location` with `keys` (`-X`/`-F` remote options and
/// `--rsm-private-key`) and reconciles it with `metadata` ([`verify::verify_to`]), printing
/// one line per problem (and, in JSON, per segment); returns the summary.
pub fn run(
    location: &str,
    keys: &RemoteOptions,
    metadata: &MetadataLog,
    options: &Options<'_>,
    json: bool,
    out: &mut dyn Write,
) -> Result<Summary, Failure> {
    let tier = keys
        .open_tier(location)
        .map_err(|e| Failure::Usage(format!("--remote {e}")))?;
    verify::verify_to(&tier, metadata, options, json, out).map_err(|e| {
        let what = format!("remote tier {location}");
        Failure::Io(io::Error::other(e.to_string()), what)
    })
}
