//! File names of a partition directory and the small text files beside the segments.
//!
//! ```text
//! 00000000000000000000.log        segment: concatenated entries, any magic (Kafka's FileRecords)
//! 00000000000000000000.index      offset index: [relative offset i32 BE, position i32 BE]*
//! 00000000000000000000.timeindex  time index: [timestamp i64 BE, relative offset i32 BE]*
//! 00000000000000000000.txnindex   aborted transactions (only once there is one), see transaction
//! 00000000000000000042.snapshot   producer state after the batches below 42, see producer_state
//! leader-epoch-checkpoint         "0\n<count>\n<epoch> <start offset>\n..." (Kafka's format)
//! krec-log.json                   our configuration, Kafka's names
//! krec-recovery-point             "<offset>\n": every segment below it is fully synced
//! krec-clean-shutdown             present only while the log is closed cleanly
//! krec-cleaner-offset             "<offset>\n": the compaction's first dirty offset
//! krec-cleaner-swap               "<base> <end>\n": only while cleaned segments are swapped in
//! krec.lock                       locked (flock) by the one writer; empty, never deleted
//! ```
//!
//! Segment files are named after their base offset in 20 decimal digits (Kafka's
//! `LogFileUtils.filenamePrefixFromOffset`). Small files are replaced atomically: written to
//! `<name>.tmp`, synced, renamed over the old one, then the directory is synced (Kafka's
//! `CheckpointFile`).

use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::storage::{Storage, StorageFile};
use std::io;
use std::path::Path;

/// Suffix of segment files.
pub const LOG_SUFFIX: &str = ".log";
/// Suffix of offset index files.
pub const INDEX_SUFFIX: &str = ".index";
/// Suffix of time index files.
pub const TIME_INDEX_SUFFIX: &str = ".timeindex";
/// Suffix of transaction index files.
pub const TXN_INDEX_SUFFIX: &str = ".txnindex";
/// Suffix of producer state snapshot files (`<20-digit offset>.snapshot`).
pub const SNAPSHOT_SUFFIX: &str = ".snapshot";
/// Suffix Kafka gives files scheduled for deletion.
pub const DELETED_SUFFIX: &str = ".deleted";
/// Suffix Kafka gives files being cleaned.
pub const CLEANED_SUFFIX: &str = ".cleaned";
/// Suffix Kafka gives cleaned segment files while they replace the old ones.
pub const SWAP_SUFFIX: &str = ".swap";
/// Suffix of temporary files written before an atomic rename.
pub const TMP_SUFFIX: &str = ".tmp";
/// The configuration file.
pub const CONFIG_FILE: &str = "krec-log.json";
/// The clean shutdown marker.
pub const CLEAN_SHUTDOWN_FILE: &str = "krec-clean-shutdown";
/// The writer's lock file (see [`crate::storage::LockWait`] and [`crate::Log::open`]).
pub const LOCK_FILE: &str = "krec.lock";
/// Kafka's partition metadata file in a partition directory (`version: 0`, `topic_id: ID`).
pub const PARTITION_METADATA_FILE: &str = "partition.metadata";
/// The recovery point checkpoint.
pub const RECOVERY_POINT_FILE: &str = "krec-recovery-point";
/// The cleaner's first dirty offset (Kafka's `cleaner-offset-checkpoint`, for this one
/// partition): `"<offset>\n"`.
pub const CLEANER_OFFSET_FILE: &str = "krec-cleaner-offset";
/// The offset range of a cleaned segment being swapped in: `"<base> <end>\n"`, present only
/// while a replacement is under way (see the cleaner).
pub const CLEANER_SWAP_FILE: &str = "krec-cleaner-swap";
/// Kafka's leader epoch checkpoint.
pub const LEADER_EPOCH_CHECKPOINT_FILE: &str = "leader-epoch-checkpoint";

/// `<20-digit base offset><suffix>`, as Kafka names segment files.
///
/// # Examples
///
/// ```
/// assert_eq!(krecords_log::files::file_name(42, ".log"), "00000000000000000042.log");
/// ```
pub fn file_name(base_offset: i64, suffix: &str) -> String {
    format!("{base_offset:020}{suffix}")
}

/// The base offset of a file named `<digits><suffix>`, `None` for any other name.
pub fn parse_file_name(name: &str, suffix: &str) -> Option<i64> {
    let digits = name.strip_suffix(suffix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The index files (`.index`, `.timeindex`, `.txnindex`) among the file names `names` of a
/// partition directory whose segment (`.log` of the same base offset) is not among them: what
/// Kafka's loader calls orphaned index files and deletes, with a warning, when it loads the
/// partition (as the log's open does).
///
/// # Examples
///
/// ```
/// let names = ["00000000000000000000.log", "00000000000000000000.index", "00000000000000000007.index"];
/// let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
/// assert_eq!(krecords_log::files::orphaned_indexes(&names), ["00000000000000000007.index"]);
/// ```
pub fn orphaned_indexes(names: &[String]) -> Vec<&str> {
    let mut bases: Vec<i64> = names
        .iter()
        .filter_map(|n| parse_file_name(n, LOG_SUFFIX))
        .collect();
    bases.sort_unstable();
    names
        .iter()
        .filter(|name| {
            [INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX]
                .iter()
                .find_map(|s| parse_file_name(name, s))
                .is_some_and(|base| bases.binary_search(&base).is_err())
        })
        .map(String::as_str)
        .collect()
}

/// What to say of the [`orphaned_indexes_in`] `dir`, when it has any: "index files whose
/// segments are gone: NAMES; Kafka deletes such orphaned index files when it loads the
/// partition" (they hold no data).
pub fn orphaned_indexes_note(dir: &Path) -> Option<String> {
    let orphans = orphaned_indexes_in(dir);
    (!orphans.is_empty()).then(|| {
        format!(
            "index files whose segments are gone: {}; Kafka deletes such orphaned index files \
             when it loads the partition",
            orphans.join(", ")
        )
    })
}

/// [`orphaned_indexes`] of the directory `dir` on the real file system, in name order (none
/// when it cannot be listed).
pub fn orphaned_indexes_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    orphaned_indexes(&names)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// The end offset and epoch of a KRaft snapshot file, named
/// `<20-digit end offset>-<10-digit epoch>.checkpoint` (Kafka's `Snapshots`); `None` for any
/// other name.
///
/// ```
/// use std::path::Path;
/// use krecords_log::files::snapshot_id;
///
/// let p = Path::new("__cluster_metadata-0/00000000000000000103-0000000001.checkpoint");
/// assert_eq!(snapshot_id(p), Some((103, 1)));
/// assert_eq!(snapshot_id(Path::new("00000000000000000103.log")), None);
/// ```
pub fn snapshot_id(path: &Path) -> Option<(i64, i32)> {
    let stem = path.file_stem()?.to_str()?;
    let (offset, epoch) = stem.split_once('-')?;
    if path.extension()? != "checkpoint" || offset.len() != 20 || epoch.len() != 10 {
        return None;
    }
    Some((offset.parse().ok()?, epoch.parse().ok()?))
}

/// Reads a whole small file, `None` when it does not exist.
pub(crate) fn read_small_file(storage: &dyn Storage, path: &Path) -> Result<Option<Vec<u8>>> {
    Ok(small_file(storage, path, true)?.map(|(_, bytes)| bytes))
}

/// An open file and all of its bytes.
pub(crate) type FileAndBytes = (Box<dyn StorageFile>, Vec<u8>);

/// Opens a small file for reading and writing and reads all of it, `None` when it does not
/// exist.
pub(crate) fn open_small_file(storage: &dyn Storage, path: &Path) -> Result<Option<FileAndBytes>> {
    small_file(storage, path, false)
}

/// Opens a small file (read-only or not) and reads all of it, `None` when it does not exist.
fn small_file(storage: &dyn Storage, path: &Path, read_only: bool) -> Result<Option<FileAndBytes>> {
    let opened = if read_only {
        storage.open_read(path)
    } else {
        storage.open(path)
    };
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("open", path, e)),
    };
    let len = file.len().map_err(|e| Error::io("read", path, e))?;
    let len = usize::try_from(len).map_err(|_| Error::CorruptFile {
        path: path.to_path_buf(),
        reason: format!("{len} bytes is too large"),
    })?;
    let mut buf = vec![0; len];
    file.read_exact_at(&mut buf, 0)
        .map_err(|e| Error::io("read", path, e))?;
    Ok(Some((file, buf)))
}

/// The configuration in `dir`'s [`CONFIG_FILE`], `None` when there is none.
///
/// # Errors
///
/// The file cannot be read; [`Error::DamagedConfig`] when it cannot be used
/// ([`parse_config`]).
pub(crate) fn read_config(storage: &dyn Storage, dir: &Path) -> Result<Option<LogConfig>> {
    let path = dir.join(CONFIG_FILE);
    let Some(bytes) = read_small_file(storage, &path)? else {
        return Ok(None);
    };
    parse_config(&path, &bytes).map(Some)
}

/// The configuration file `path` holding `bytes`: JSON holding a valid [`LogConfig`], or
/// [`Error::DamagedConfig`] naming `path` and what is wrong (the one rule of every reader of
/// the file, `krec verify`'s check included).
pub(crate) fn parse_config(path: &Path, bytes: &[u8]) -> Result<LogConfig> {
    let damaged = |reason| Error::DamagedConfig {
        path: path.to_path_buf(),
        reason,
    };
    let json: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| damaged(format!("not JSON: {e}")))?;
    LogConfig::from_json(&json).map_err(|e| damaged(e.to_string()))
}

/// Replaces `dir/name` with `bytes` atomically and durably: temporary file, sync, rename,
/// directory sync.
pub(crate) fn write_atomic(
    storage: &dyn Storage,
    dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<()> {
    let tmp = dir.join(format!("{name}{TMP_SUFFIX}"));
    let path = dir.join(name);
    let file = storage
        .create(&tmp)
        .map_err(|e| Error::io("create", &tmp, e))?;
    file.write_at(bytes, 0)
        .map_err(|e| Error::io("write", &tmp, e))?;
    file.sync().map_err(|e| Error::io("sync", &tmp, e))?;
    drop(file);
    storage
        .rename(&tmp, &path)
        .map_err(|e| Error::io("rename", &tmp, e))?;
    storage.sync_dir(dir).map_err(|e| Error::io("sync", dir, e))
}

/// Removes a file if it exists; returns whether it did.
pub(crate) fn remove_if_exists(storage: &dyn Storage, path: &Path) -> Result<bool> {
    match storage.remove(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io("remove", path, e)),
    }
}

/// Parses the recovery point file: one decimal offset.
pub(crate) fn parse_recovery_point(path: &Path, bytes: &[u8]) -> Result<i64> {
    let text = std::str::from_utf8(bytes).unwrap_or("");
    text.trim().parse().map_err(|_| Error::CorruptFile {
        path: path.to_path_buf(),
        reason: "expected one offset".into(),
    })
}

/// Formats Kafka's leader epoch checkpoint: version 0, the count, then `epoch start` lines.
pub(crate) fn format_epoch_checkpoint(entries: &[(i32, i64)]) -> String {
    let mut s = format!("0\n{}\n", entries.len());
    for (epoch, start) in entries {
        s.push_str(&format!("{epoch} {start}\n"));
    }
    s
}

/// One `epoch start-offset` line of a leader epoch checkpoint.
fn parse_epoch_line(line: &str) -> Option<(i32, i64)> {
    let mut it = line.split_whitespace();
    match (it.next(), it.next(), it.next()) {
        (Some(e), Some(o), None) => Some((e.parse().ok()?, o.parse().ok()?)),
        _ => None,
    }
}

/// Parses Kafka's leader epoch checkpoint (`0`, a count, then `epoch start-offset` lines):
/// the entries in file order.
///
/// # Errors
///
/// [`Error::CorruptFile`] naming `path` when the text is not such a checkpoint.
pub fn parse_epoch_checkpoint(path: &Path, bytes: &[u8]) -> Result<Vec<(i32, i64)>> {
    let bad = |reason: String| Error::CorruptFile {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8".into()))?;
    let mut lines = text.lines();
    match lines.next().map(str::trim) {
        Some("0") => {}
        Some(v) => return Err(bad(format!("unsupported checkpoint version {v:?}"))),
        None => return Err(bad("empty: no version line".into())),
    }
    let count: usize = lines
        .next()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| bad("missing entry count".into()))?;
    let mut entries = Vec::new();
    for line in lines.by_ref().take(count) {
        let entry =
            parse_epoch_line(line).ok_or_else(|| bad(format!("malformed line {line:?}")))?;
        entries.push(entry);
    }
    if entries.len() != count {
        return Err(bad(format!(
            "expected {count} entries, found {}",
            entries.len()
        )));
    }
    Ok(entries)
}

/// What is wrong with a leader epoch checkpoint, in words; `None` when nothing is. Stricter
/// than the parser the log loads it with: every line after the count must be an entry, the
/// count must match them, and epochs and start offsets must increase. An empty file, or one
/// that ends after the version, holds no entries (Kafka's `CheckpointFile` reads it so; Kafka
/// 4.4 leaves an empty file for a log without epochs).
pub(crate) fn epoch_checkpoint_problem(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    if text.lines().count() < 2 && text.lines().next().is_none_or(|l| l.trim() == "0") {
        return None;
    }
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("0") {
        return Some("the first line is not version 0".to_string());
    }
    let count: Option<usize> = lines.next().and_then(|l| l.trim().parse().ok());
    let entries: Vec<Option<(i32, i64)>> = lines.map(parse_epoch_line).collect();
    match count {
        None => return Some("the second line is not an entry count".into()),
        Some(n) if n != entries.len() => {
            return Some(format!("declares {n} entries but holds {}", entries.len()))
        }
        Some(_) => {}
    }
    if entries.iter().any(Option::is_none) {
        return Some("a line is not `epoch start-offset`".into());
    }
    let e: Vec<(i32, i64)> = entries.into_iter().flatten().collect();
    if e.windows(2).any(|w| w[1].0 <= w[0].0 || w[1].1 < w[0].1) {
        return Some("epochs or start offsets do not increase".into());
    }
    None
}

/// The topic id a Kafka partition directory's `partition.metadata` names (as Kafka prints it:
/// URL-safe base64), or `None` without the file or the field.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// assert_eq!(krecords_log::files::topic_id(dir.path()), None);
/// std::fs::write(dir.path().join("partition.metadata"), "version: 0\ntopic_id: bF2mVp1_Rv6x9Nq3Z0a1Yw\n").unwrap();
/// assert_eq!(krecords_log::files::topic_id(dir.path()).as_deref(), Some("bF2mVp1_Rv6x9Nq3Z0a1Yw"));
/// ```
pub fn topic_id(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(PARTITION_METADATA_FILE)).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("topic_id:").map(|v| v.trim().to_owned()))
        .filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(file_name(0, LOG_SUFFIX), "00000000000000000000.log");
        assert_eq!(
            file_name(i64::MAX, INDEX_SUFFIX),
            "09223372036854775807.index"
        );
        assert_eq!(
            parse_file_name("00000000000000000100.timeindex", TIME_INDEX_SUFFIX),
            Some(100)
        );
        assert_eq!(
            parse_file_name("00000000000000000100.index", TIME_INDEX_SUFFIX),
            None
        );
        assert_eq!(parse_file_name("x.log", LOG_SUFFIX), None);
        assert_eq!(parse_file_name(".log", LOG_SUFFIX), None);
    }

    #[test]
    fn epoch_checkpoint_round_trip() {
        let p = Path::new("leader-epoch-checkpoint");
        let text = format_epoch_checkpoint(&[(0, 0), (3, 150)]);
        assert_eq!(text, "0\n2\n0 0\n3 150\n");
        assert_eq!(
            parse_epoch_checkpoint(p, text.as_bytes()).unwrap(),
            vec![(0, 0), (3, 150)]
        );
        assert!(parse_epoch_checkpoint(p, b"1\n0\n").is_err());
        assert!(parse_epoch_checkpoint(p, b"0\n2\n0 0\n").is_err());
        assert!(parse_epoch_checkpoint(p, b"0\n1\n0 x\n").is_err());
        assert_eq!(parse_recovery_point(p, b"42\n").unwrap(), 42);
    }
}
