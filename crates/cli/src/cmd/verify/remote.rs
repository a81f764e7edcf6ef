//! `krec verify --remote LOCATION`: the remote tier reconciled with `__remote_log_metadata` and
//! the local logs ([`krecords_remote::verify`]), printed as the rest of `verify` prints.

use crate::args::Format;
use crate::outcome::{Failure, Outcome};
use krecords_remote::location::{Location, RemoteOptions};
use krecords_remote::metadata::{MetadataCache, MetadataLog};
use krecords_remote::storage::FileSystemStorage;
use krecords_remote::verify::{self, Event, Options, Summary};
use krecords_remote::RemoteTier;
use serde_json::json;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Opens the remote tier at `text`: a location URL (`s3://BUCKET/PREFIX`, `gs://`, `az://`,
/// `file:///ROOT/PREFIX`, see [`krecords_remote::location`]), or a local directory, which is a
/// filesystem-backend storage root with no key prefix.
fn open_tier(
    text: &str,
    options: &RemoteOptions,
) -> Result<RemoteTier<krecords_remote::stream::SharedStorage>, Failure> {
    let usage = |m: String| Failure::Usage(format!("--remote {text}: {m}"));
    let location = match Location::parse(text) {
        Some(l) => l.map_err(|e| usage(e.to_string()))?,
        None if text.is_empty() => {
            return Err(Failure::Usage("--remote: an empty location".into()))
        }
        None if Path::new(text).is_dir() => {
            let root = PathBuf::from(text);
            let storage: krecords_remote::stream::SharedStorage =
                std::sync::Arc::new(FileSystemStorage::new(root));
            return Ok(RemoteTier::new(storage, "").with_keys(options.keys.clone()));
        }
        None => {
            return Err(usage(
                "not a directory, nor a location (s3://BUCKET/PREFIX, gs://, az://, \
                 file:///ROOT/PREFIX)"
                    .into(),
            ))
        }
    };
    if let Some(root) = location.root.as_ref().filter(|r| !r.is_dir()) {
        return Err(usage(format!("{} is not a directory", root.display())));
    }
    let (storage, prefix) = options.open(&location).map_err(|e| usage(e.to_string()))?;
    Ok(RemoteTier::new(storage, prefix).with_keys(options.keys.clone()))
}

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
}

fn io_failure(e: impl std::fmt::Display, what: String) -> Failure {
    Failure::Io(io::Error::other(e.to_string()), what)
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

/// Runs the reconciliation, printing one line per problem (and, in JSON, per segment); returns
/// the summary.
pub fn run(request: Request<'_>, out: &mut dyn Write) -> Result<Summary, Failure> {
    let cache = MetadataCache::from_log(&request.metadata);
    let tier = open_tier(request.location, &request.options)?;
    let filter = request.topic.map(|g| move |t: &str| g.matches(t));
    let options = Options {
        local_root: request.local_root,
        max_decompressed_bytes: request.limit,
        topic_filter: filter.as_ref().map(|f| f as &dyn Fn(&str) -> bool),
    };
    let format = request.format;
    let mut sink = |e: Event| -> io::Result<()> {
        match (format, e) {
            (Format::Text, Event::Finding(f)) => writeln!(out, "{f}"),
            (Format::Text, Event::Segment(_)) => Ok(()),
            (Format::Json, Event::Finding(f)) => {
                let line = json!({
                    "tier": "remote",
                    "partition": f.partition,
                    "file": f.object,
                    "offset": f.offset,
                    "position": f.position,
                    "check": f.check.as_str(),
                    "message": f.message,
                });
                writeln!(out, "{line}")
            }
            (Format::Json, Event::Segment(s)) => {
                let line = json!({"segment": {
                    "partition": s.partition,
                    "object": s.object,
                    "start_offset": s.start_offset,
                    "end_offset": s.end_offset,
                    "ok": s.problems == 0,
                    "problems": s.problems,
                }});
                writeln!(out, "{line}")
            }
        }
    };
    verify::verify(&tier, &cache, &options, &mut sink)
        .map_err(|e| io_failure(e, format!("remote tier {}", request.location)))
}

/// The summary line for people: `remote tier LOCATION: 2 partitions (1 ok, 1 with problems),
/// 7 segments (6 intact, 1 with problems), 21 files, ...: 1 problem`.
pub fn describe(location: &str, s: &Summary) -> String {
    let n = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut log = s.log;
    log.problems = s.problems;
    format!(
        "remote tier {location}: {} ({} ok, {} with problems), {} ({} intact, {} with problems), {}",
        n(s.partitions, "partition", "partitions"),
        s.partitions - s.partitions_with_problems,
        s.partitions_with_problems,
        n(s.segments, "segment", "segments"),
        s.intact,
        s.segments - s.intact,
        log.describe(0)
    )
}

/// The summary as `--format json` prints it, under `"remote"`.
pub fn json_summary(s: &Summary) -> serde_json::Value {
    json!({
        "partitions": s.partitions,
        "partitions_with_problems": s.partitions_with_problems,
        "segments": s.segments,
        "intact": s.intact,
        "files": s.log.files,
        "entries": s.log.entries,
        "records": s.log.records,
        "bytes": s.log.bytes,
        "problems": s.problems,
    })
}

/// The outcome of the remote part alone.
pub fn outcome(s: &Summary) -> Outcome {
    if s.problems == 0 {
        Outcome::Ok
    } else {
        Outcome::DataProblem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_open_or_say_why_not() {
        let o = RemoteOptions::default();
        let err = |s: &str| match open_tier(s, &o) {
            Err(Failure::Usage(m)) => m,
            Err(e) => panic!("{s}: {e:?}"),
            Ok(_) => panic!("{s}: opened"),
        };
        assert!(err("").contains("empty"));
        assert!(err("/nonexistent/krec-tier").contains("nor a location"));
        assert!(err("file:///nonexistent-krec/p").contains("is not a directory"));
        let dir = tempfile::tempdir().unwrap();
        assert!(open_tier(&dir.path().display().to_string(), &o).is_ok());
        assert!(open_tier(&format!("file://{}/pfx-", dir.path().display()), &o).is_ok());
        // An object store is configured, not contacted.
        assert!(open_tier("s3://bucket/prefix/", &o).is_ok());
    }
}
