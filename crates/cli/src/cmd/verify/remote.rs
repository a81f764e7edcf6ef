//! `krec verify --remote LOCATION`: the remote tier reconciled with `__remote_log_metadata` and
//! the local logs ([`krecords_remote::verify`]), printed as the rest of `verify` prints.

use crate::args::Format;
use crate::outcome::{Failure, Outcome};
use krecords_remote::metadata::{MetadataCache, MetadataLog};
use krecords_remote::storage::FileSystemStorage;
use krecords_remote::verify::{self, Event, Options, Summary};
use krecords_remote::RemoteTier;
use serde_json::json;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A remote tier location this command reads: a storage root directory and a key prefix.
///
/// Kept small and apart so that the general location parser (`s3://`, `gs://`, `az://`) can
/// replace it: `file:///ROOT/PREFIX` is split at the last `/` (the directory is the storage
/// root, the rest the key prefix; `file:///var/tier/` has no prefix); a local path naming a
/// directory is a storage root with no prefix, any other local path is split as `file://`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLocation {
    /// The storage root directory.
    pub root: PathBuf,
    /// The plugin's key prefix (may be empty).
    pub prefix: String,
}

impl FileLocation {
    /// Parses `text`.
    ///
    /// # Errors
    ///
    /// [`Failure::Usage`] for another scheme or an empty path.
    pub fn parse(text: &str) -> Result<FileLocation, Failure> {
        let split = |path: &str| -> Result<FileLocation, Failure> {
            let (dir, prefix) = path.rsplit_once('/').unwrap_or(("", path));
            if dir.is_empty() && !path.starts_with('/') {
                return Ok(FileLocation {
                    root: PathBuf::from("."),
                    prefix: prefix.to_string(),
                });
            }
            Ok(FileLocation {
                root: PathBuf::from(if dir.is_empty() { "/" } else { dir }),
                prefix: prefix.to_string(),
            })
        };
        if let Some(path) = text.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err(Failure::Usage(format!(
                    "--remote {text}: file:// takes an absolute path (file:///ROOT/PREFIX)"
                )));
            }
            return split(path);
        }
        if let Some((scheme, _)) = text.split_once("://") {
            return Err(Failure::Usage(format!(
                "--remote {text}: {scheme}:// is not supported by verify yet (file:///ROOT/PREFIX or a local directory)"
            )));
        }
        if text.is_empty() {
            return Err(Failure::Usage("--remote: an empty location".into()));
        }
        if Path::new(text).is_dir() {
            return Ok(FileLocation {
                root: PathBuf::from(text),
                prefix: String::new(),
            });
        }
        split(text)
    }
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
    /// `--rsm-private-key`.
    pub keys: krecords_remote::crypto::KeyRing,
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
    let location = FileLocation::parse(request.location)?;
    if !location.root.is_dir() {
        return Err(Failure::Usage(format!(
            "--remote {}: {} is not a directory",
            request.location,
            location.root.display()
        )));
    }
    let cache = MetadataCache::from_log(&request.metadata);
    let tier = RemoteTier::new(FileSystemStorage::new(&location.root), &location.prefix)
        .with_keys(request.keys);
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
    fn file_locations() {
        let l = |s: &str| FileLocation::parse(s).map(|l| (l.root, l.prefix));
        assert_eq!(
            l("file:///var/tier/pfx/").unwrap(),
            (PathBuf::from("/var/tier/pfx"), String::new())
        );
        assert_eq!(
            l("file:///var/tier/pfx").unwrap(),
            (PathBuf::from("/var/tier"), "pfx".to_string())
        );
        assert_eq!(
            l("file:///x").unwrap(),
            (PathBuf::from("/"), "x".to_string())
        );
        let dir = std::env::temp_dir();
        let text = dir.display().to_string();
        assert_eq!(l(&text).unwrap(), (dir.clone(), String::new()));
        assert!(matches!(l("s3://b/p"), Err(Failure::Usage(_))));
        assert!(matches!(l("file://relative/p"), Err(Failure::Usage(_))));
        assert!(matches!(l(""), Err(Failure::Usage(_))));
    }
}
