//! Loading a partition directory and recovering it after an unclean shutdown (Kafka's
//! `LogLoader`).
//!
//! 1. An interrupted compaction swap is finished or undone as Kafka's loader does it
//!    (`.cleaned` files deleted, complete `.swap` sets renamed in after the old segments they
//!    replace are removed; see `swap`). Then leftovers go: `*.tmp` files of interrupted
//!    atomic writes, Kafka's `*.deleted` and `*.cleaned` files, and index files whose segment is
//!    gone.
//! 2. Every `<offset>.log` is opened with its indexes. A missing index, or one that fails the
//!    sanity checks (an untrimmed, zero-filled preallocated tail included), gets the segment
//!    recovered.
//! 3. Without the clean shutdown marker, every segment from the one holding the recovery point
//!    on is recovered: each batch is validated (structure, CRC, offsets), the file is truncated
//!    at the first invalid one and both indexes are rebuilt. Once a segment had to be truncated,
//!    every later segment is deleted: nothing written after a torn write survives.
//!    A read-only open of a broker's partition takes the marker and the recovery point from the
//!    data directory around it (`data_dir::root_recovery`), as Kafka's `LogManager` does.
//!    A segment that holds offsets beyond its indexes' 32-bit relative range (written by a
//!    broker before KAFKA-6264) is split into segments that each fit, as Kafka's
//!    `splitOverflowedSegment` does, with every batch copied as it is ([`split_overflowed`]).
//! 4. The log keeps what the log files say; indexes and checkpoints are derived and rebuilt.
//!    A recovered segment's `.txnindex` is emptied here and refilled by the producer state
//!    replay that follows (in `log/open.rs`): from the latest valid `.snapshot` at or below the first
//!    recovered segment, through the rest of the log.

use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::files::{self, CLEANED_SUFFIX, DELETED_SUFFIX, LOG_SUFFIX, TMP_SUFFIX};
use crate::reader::SCAN_WINDOW;
use crate::segment::{BatchMeta, Segment};
use crate::storage::Storage;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What opening (or `krec log recover`) found and repaired.
///
/// Serializes as `{"truncated_bytes":N,"segments":N,"next_offset":N}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecoverInfo {
    /// Bytes cut from the ends of segments, plus the bytes of segments deleted after a torn
    /// write.
    pub truncated_bytes: u64,
    /// Segments in the log afterwards.
    pub segments: usize,
    /// The log end offset afterwards.
    pub next_offset: i64,
    /// Whether the log had been closed cleanly (no scan was needed).
    #[serde(skip)]
    pub clean_shutdown: bool,
    /// Segments scanned and rebuilt.
    #[serde(skip)]
    pub recovered_segments: usize,
    /// Segments deleted because an earlier segment was truncated.
    #[serde(skip)]
    pub deleted_segments: usize,
    /// What was wrong at each truncation point (`path: byte N: reason`).
    #[serde(skip)]
    pub problems: Vec<String>,
    /// Segments whose offsets overflowed their 32-bit relative range and were split (each
    /// `path: into N segments`).
    #[serde(skip)]
    pub splits: Vec<String>,
    /// Where bytes were cut, one per segment truncated, in offset order.
    #[serde(skip)]
    pub cuts: Vec<Cut>,
}

/// Where recovery cut a log: a segment truncated at its first invalid entry, and the later
/// segments that went with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cut {
    /// The segment file truncated.
    pub file: PathBuf,
    /// The first byte cut from it.
    pub position: u64,
    /// Its length when it was cut: the bytes recovery saw (a writer may have appended since).
    pub len: u64,
    /// What was wrong there (`byte N: reason`).
    pub reason: String,
    /// The later segment files deleted with it, in offset order.
    pub later: Vec<PathBuf>,
}

impl RecoverInfo {
    /// What opening the log at `dir` had to do, one line each (no `krec:` prefix), for a
    /// command to show on stderr; empty when the log opened as it was.
    ///
    /// `read_only`: the log was opened read-only, so a torn tail was skipped and overflowing
    /// segments read as if split, in memory only. Otherwise only a log that was not closed
    /// cleanly and had bytes cut gets a note, followed by one indented line per problem.
    pub fn notes(&self, dir: &Path, read_only: bool) -> Vec<String> {
        let how = if read_only {
            "read as if split, nothing in the directory was changed"
        } else {
            "split"
        };
        // A segment of a broker before KAFKA-6264 whose offsets overflow its indexes.
        let mut notes: Vec<String> = self
            .splits
            .iter()
            .map(|split| format!("offsets overflow a segment's 32-bit range, {how}: {split}"))
            .collect();
        let cut = self.truncated_bytes > 0 || self.deleted_segments > 0;
        if read_only && cut {
            notes.push(format!(
                "{}: the last {} bytes are not whole batches (a crash, or a writer still \
                 writing); reading up to them, nothing in the directory was changed",
                dir.display(),
                self.truncated_bytes
            ));
        } else if !read_only && !self.clean_shutdown && cut {
            notes.push(format!(
                "{} was not closed cleanly; recovery truncated {} bytes",
                dir.display(),
                self.truncated_bytes
            ));
            notes.extend(self.problems.iter().map(|p| format!("  {p}")));
            notes.extend(self.deleted().into_iter().map(|d| format!("  {d}")));
        }
        notes
    }

    /// The segment files deleted after a cut, one line each (`path: deleted, as it follows
    /// the cut in path`): Kafka's recovery deletes them whatever they hold.
    pub fn deleted(&self) -> Vec<String> {
        self.cuts
            .iter()
            .flat_map(|cut| {
                cut.later.iter().map(move |f| {
                    format!(
                        "{}: deleted, as it follows the cut in {}",
                        f.display(),
                        cut.file.display()
                    )
                })
            })
            .collect()
    }
}

/// Damage in the middle of a log found by a read-only open ([`Log::damage`](crate::Log::damage)):
/// recovery cut the log at `position` of `file` although intact entries follow, so the log
/// a reader sees ends at `offset` where the partition does not. Reads that end before
/// `offset` are whole; a read that reaches it fails with [`Damage::error`] instead of
/// ending there quietly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The segment file with the damaged entry.
    pub file: PathBuf,
    /// The byte of the damaged entry in it.
    pub position: u64,
    /// The first offset the damage hides: the log as read ends here, or holds no entry from
    /// here to its end (reads from it on fail).
    pub offset: i64,
    /// The damage and the first intact entry after it.
    pub reason: String,
}

impl Damage {
    /// The error a read that reaches the damage fails with ([`Error::DamagedSegment`]).
    pub fn error(&self) -> Error {
        Error::DamagedSegment {
            path: self.file.clone(),
            position: self.position,
            reason: self.reason.clone(),
        }
    }

    /// Whether a read that stopped at `end` (exclusive; `None`: no end of its own, it read
    /// to the end of the log) is whole: it asked to stop at or before the damage.
    pub fn spares(&self, end: Option<i64>) -> bool {
        end.is_some_and(|e| e <= self.offset)
    }
}

/// A read-only open's check of `cut` against the untouched files (`storage`): the damage when
/// an intact entry follows it, that is damage in the middle of the log, which Kafka's recovery
/// would delete with everything after it and a reader of the recovered log would never see;
/// `None` when only a torn tail was cut (a crash, a writer still writing, zeros of a
/// preallocated segment). `offset` is where the log, as recovered, ends; the damage starts
/// there or at the first intact entry's first offset, whichever is lower (an intact entry cut
/// because it lies below its segment's base offset, a misnamed segment, hides offsets below
/// the log's end too).
///
/// # Errors
///
/// A file cannot be read.
pub(crate) fn check_cut(
    storage: &dyn Storage,
    cut: &Cut,
    offset: i64,
    log_start: i64,
) -> Result<Option<Damage>> {
    let files: Vec<PathBuf> = std::iter::once(cut.file.clone())
        .chain(cut.later.iter().cloned())
        .collect();
    let found = crate::resync::first_intact(storage, &files, cut.position, cut.len)?;
    let Some((j, pos, first)) = found else {
        return Ok(None);
    };
    let of = match files.get(j) {
        Some(f) if j > 0 => format!(" of {}", f.display()),
        _ => String::new(),
    };
    let offset = offset.min(first);
    // Nothing before the damage: no read of the log is whole (the log as read is empty).
    let before = if offset <= log_start {
        "no offset of the log is readable before the damage (the log as read is empty)".to_owned()
    } else {
        format!("reads that end before offset {offset} are whole")
    };
    Ok(Some(Damage {
        file: cut.file.clone(),
        position: cut.position,
        offset,
        reason: format!(
            "{}; intact entries follow (the first at byte {pos}{of}, offset {first}), which \
             Kafka's recovery would delete with everything after the damage: {before}, `krec \
             verify` lists the damage, `krec salvage` keeps every intact entry",
            cut.reason
        ),
    }))
}

/// Removes leftovers (step 1); returns the base offsets of the segments, sorted.
pub(crate) fn clean_dir(storage: &dyn Storage, dir: &Path, names: &[String]) -> Result<Vec<i64>> {
    let listed;
    let names = if crate::swap::recover(storage, dir, names)? {
        listed = storage
            .list_dir(dir)
            .map_err(|e| Error::io("list", dir, e))?;
        &listed[..]
    } else {
        names
    };
    let mut bases: Vec<i64> = names
        .iter()
        .filter_map(|n| files::parse_file_name(n, LOG_SUFFIX))
        .collect();
    bases.sort_unstable();
    bases.dedup();
    let mut removed = false;
    let orphans = files::orphaned_indexes(names);
    for name in names {
        let leftover = name.ends_with(TMP_SUFFIX)
            || name.ends_with(DELETED_SUFFIX)
            || name.ends_with(CLEANED_SUFFIX);
        if leftover || orphans.contains(&name.as_str()) {
            removed |= files::remove_if_exists(storage, &dir.join(name))?;
        }
    }
    if removed {
        storage
            .sync_dir(dir)
            .map_err(|e| Error::io("sync", dir, e))?;
    }
    Ok(bases)
}

/// Opens the segments `bases` and recovers them as the module documentation describes.
/// `recover_from` is the recovery point (`None` after a clean shutdown: no scan).
///
/// A segment recovered because its indexes needed rebuilding (not scanned from the recovery
/// point) keeps the segments after it when it is cut, as Kafka's loader does — unless
/// `read_only`: a reader's view of the log ends at any cut (the later segments are left out
/// of the view and named in [`Cut::later`]), so that damage in a middle segment is found by
/// [`check_cut`] and ends the log as read instead of leaving a hole that a fetch would skip
/// silently.
pub(crate) fn load_segments(
    storage: &dyn Storage,
    dir: &Path,
    config: &LogConfig,
    bases: &[i64],
    recover_from: Option<i64>,
    read_only: bool,
    now_ms: i64,
) -> Result<(Vec<Segment>, RecoverInfo)> {
    let mut info = RecoverInfo {
        clean_shutdown: recover_from.is_none(),
        ..RecoverInfo::default()
    };
    let mut segments = Vec::with_capacity(bases.len());
    let mut needs = Vec::with_capacity(bases.len());
    for &base in bases {
        let (segment, needs_recovery) = Segment::open(storage, dir, base, config, now_ms)?;
        segments.push(segment);
        needs.push(needs_recovery);
    }
    // The first segment to scan: the one holding the recovery point (by base offset, which
    // a split leaves in place).
    let scan_from = recover_from.map(|rp| {
        segments
            .iter()
            .rposition(|s| s.base_offset() <= rp)
            .map_or(i64::MIN, |i| segments[i].base_offset())
    });
    let mut i = 0;
    while i < segments.len() {
        let scan = scan_from.is_some_and(|from| segments[i].base_offset() >= from);
        let mut truncated = 0;
        if scan || needs[i] {
            let problem;
            (truncated, problem) = segments[i].recover(config)?;
            info.recovered_segments += 1;
            info.truncated_bytes += truncated;
            if truncated > 0 {
                info.cuts.push(Cut {
                    file: segments[i].log_path().to_path_buf(),
                    position: segments[i].size(),
                    len: segments[i].size().saturating_add(truncated),
                    reason: problem.clone().unwrap_or_default(),
                    later: Vec::new(),
                });
            }
            if let Some(p) = problem {
                info.problems
                    .push(format!("{}: {p}", segments[i].log_path().display()));
            }
        }
        if segments[i].has_overflow() {
            let old = segments.remove(i);
            needs.remove(i);
            let path = old.log_path().display().to_string();
            let new = split_overflowed(storage, dir, config, old, now_ms)?;
            info.splits
                .push(format!("{path}: into {} segments", new.len()));
            let n = new.len();
            needs.splice(i..i, std::iter::repeat_n(false, n));
            segments.splice(i..i, new);
            i += n.saturating_sub(1);
        }
        if truncated > 0 && (scan || read_only) {
            // Everything after a torn write goes (for a reader, from its view only).
            for later in segments.drain(i + 1..) {
                info.truncated_bytes += later.size();
                info.deleted_segments += 1;
                if let Some(cut) = info.cuts.last_mut() {
                    cut.later.push(later.log_path().to_path_buf());
                }
                later.delete(storage, dir)?;
            }
            if info.deleted_segments > 0 {
                storage
                    .sync_dir(dir)
                    .map_err(|e| Error::io("sync", dir, e))?;
            }
            break;
        }
        i += 1;
    }
    check_order(&segments)?;
    Ok((segments, info))
}

/// Segments must hold increasing offsets: each one ends before the next one's base. Segments
/// that overlap are damaged data (exit 1), which recovery does not repair: salvage does.
fn check_order(segments: &[Segment]) -> Result<()> {
    for pair in segments.windows(2) {
        if pair[0].next_offset() > pair[1].base_offset() {
            return Err(Error::DamagedSegment {
                path: pair[0].log_path().to_path_buf(),
                position: 0,
                reason: format!(
                    "holds offsets up to {} but the next segment starts at {}: the segments \
                     overlap (`krec salvage` writes every intact entry, in offset order, into a \
                     new directory)",
                    pair[0].next_offset() - 1,
                    pair[1].base_offset()
                ),
            });
        }
    }
    Ok(())
}

/// Kafka's `LocalLog.splitOverflowedSegment`: replaces `old`, a segment whose offsets overflow
/// its indexes' 32-bit relative range, by segments that each fit: the first at `old`'s base
/// offset, every later one at the first offset of its first batch, each holding as many
/// batches as fit. Batches are copied byte for byte (nothing is validated or rewritten again),
/// transaction index entries go to the segment holding their marker, and every new segment
/// gets `old`'s modification time. The new segments are written as `.cleaned` files and swapped
/// in crash-safely (`swap`, which the next load finishes or undoes). Returns them,
/// opened.
pub(crate) fn split_overflowed(
    storage: &dyn Storage,
    dir: &Path,
    config: &LogConfig,
    old: Segment,
    now_ms: i64,
) -> Result<Vec<Segment>> {
    let old_base = old.base_offset();
    let end = old.next_offset();
    let modified = old.last_modified(storage)?;
    let txn_rebuild = old.txn_index().needs_rebuild();
    let mut new: Vec<Segment> = Vec::new();
    let mut out = Vec::new();
    let mut metas = Vec::new();
    let mut scratch = Vec::new();
    {
        let mut r = old.reader(SCAN_WINDOW);
        while let Some(b) = old.next_batch(&mut r)? {
            let last = b.last_offset();
            if !new.last().is_some_and(|s| s.can_convert_offset(last)) {
                if let Some(s) = new.last_mut() {
                    s.append(&out, &[], &metas)?;
                    out.clear();
                    metas.clear();
                }
                let base = if new.is_empty() {
                    old_base
                } else {
                    match b.first_offset() {
                        Some(first) => first,
                        None => {
                            b.record_span(&mut scratch, krecords_codec::DEFAULT_DECOMPRESS_LIMIT)
                                .map_err(|e| {
                                    Error::corrupt_codec(old.location(b.position() as u64), e)
                                })?
                                .first_offset
                        }
                    }
                };
                let segment = Segment::create_with_suffix(
                    storage,
                    dir,
                    base,
                    config,
                    now_ms,
                    CLEANED_SUFFIX,
                )?;
                if !segment.can_convert_offset(last) {
                    return Err(Error::corrupt(
                        old.location(b.position() as u64),
                        format!(
                            "a batch with offsets {base}..={last} cannot be placed in a segment \
                             (its offsets span more than 2^31)"
                        ),
                    ));
                }
                new.push(segment);
            }
            metas.push(BatchMeta {
                position: out.len() as u64,
                size: b.size_in_bytes() as u64,
                last_offset: last,
                max_timestamp: b.max_timestamp(),
            });
            out.extend_from_slice(b.as_bytes());
            if out.len() >= SCAN_WINDOW {
                if let Some(s) = new.last_mut() {
                    s.append(&out, &[], &metas)?;
                }
                out.clear();
                metas.clear();
            }
        }
    }
    if let Some(s) = new.last_mut() {
        s.append(&out, &[], &metas)?;
    }
    for t in old.aborted_entries() {
        let at = new
            .iter()
            .rposition(|s| s.base_offset() <= t.last_offset)
            .unwrap_or(0);
        if let Some(s) = new.get_mut(at) {
            s.append_aborted(storage, *t)?;
        }
    }
    let total: u64 = new.iter().map(Segment::size).sum();
    if total != old.size() {
        return Err(Error::CorruptFile {
            path: old.log_path().to_path_buf(),
            reason: format!(
                "splitting the segment copied {total} of its {} bytes",
                old.size()
            ),
        });
    }
    let bases: Vec<i64> = new.iter().map(Segment::base_offset).collect();
    for s in &mut new {
        s.seal()?;
    }
    drop(new);
    drop(old);
    for &base in &bases {
        let path = dir.join(format!(
            "{}{CLEANED_SUFFIX}",
            files::file_name(base, LOG_SUFFIX)
        ));
        storage
            .set_modified_ms(&path, modified)
            .map_err(|e| Error::io("set the modification time of", &path, e))?;
    }
    storage
        .sync_dir(dir)
        .map_err(|e| Error::io("sync", dir, e))?;
    crate::swap::replace(storage, dir, &bases, end, &[old_base])?;
    let mut segments = Vec::with_capacity(bases.len());
    for base in bases {
        let (mut segment, needs_recovery) = Segment::open(storage, dir, base, config, now_ms)?;
        if needs_recovery || txn_rebuild {
            // A split of a segment that recovery scanned: its transaction index is refilled by
            // the producer state replay, as the old one would have been.
            segment.recover(config)?;
        }
        segments.push(segment);
    }
    Ok(segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cut of a torn last entry, which a writer completed before the read-only open looked
    /// for intact entries after the cut, is a torn tail, not damage (a newcomer's trial: an
    /// export of a log being appended to failed with "a truncated entry; intact entries follow
    /// (the first at" the same byte)); an entry that was whole when cut is damage.
    #[test]
    fn an_entry_completed_after_the_cut_is_not_damage() {
        use krecords_codec::write::{NewRecord, V2Builder};
        let entry = |base: i64| {
            let mut b = V2Builder::new(base);
            b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"value")))
                .unwrap();
            b.finish().unwrap()
        };
        let (first, second) = (entry(0), entry(1));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("00000000000000000000.log");
        std::fs::write(&file, [first.clone(), second.clone()].concat()).unwrap();
        let at = first.len() as u64;
        let cut = |len: u64| Cut {
            file: file.clone(),
            position: at,
            len,
            reason: format!("byte {at}: a truncated entry"),
            later: Vec::new(),
        };
        let storage = crate::storage::FsStorage;
        // Half of the second entry was there when it was cut: written since, a torn tail.
        let torn = cut(at + second.len() as u64 / 2);
        assert_eq!(check_cut(&storage, &torn, 1, 0).unwrap(), None);
        // Whole when cut (cut for another reason): damage that hides offset 1 on.
        let whole = cut(at + second.len() as u64);
        let damage = check_cut(&storage, &whole, 1, 0).unwrap().unwrap();
        assert_eq!((damage.position, damage.offset), (at, 1));
    }

    #[test]
    fn notes_say_what_the_open_did() {
        let dir = Path::new("/d");
        assert!(RecoverInfo::default().notes(dir, true).is_empty());
        let clean = RecoverInfo {
            clean_shutdown: true,
            truncated_bytes: 7,
            ..RecoverInfo::default()
        };
        // A clean shutdown needed no scan: nothing to say when writing.
        assert!(clean.notes(dir, false).is_empty());
        let torn = RecoverInfo {
            truncated_bytes: 7,
            problems: vec!["/d/0.log: byte 9: crc".into()],
            splits: vec!["/d/0.log: into 2 segments".into()],
            ..RecoverInfo::default()
        };
        assert_eq!(
            torn.notes(dir, false),
            [
                "offsets overflow a segment's 32-bit range, split: /d/0.log: into 2 segments",
                "/d was not closed cleanly; recovery truncated 7 bytes",
                "  /d/0.log: byte 9: crc",
            ]
        );
        let read = torn.notes(dir, true);
        assert_eq!(read.len(), 2);
        assert!(read[0].ends_with(
            "read as if split, nothing in the directory was changed: /d/0.log: into 2 segments"
        ));
        assert!(read[1].starts_with("/d: the last 7 bytes are not whole batches"));
        // The segments deleted after a cut are named, each (they were counted in the bytes
        // only).
        let deleted = RecoverInfo {
            truncated_bytes: 30,
            deleted_segments: 1,
            problems: vec!["/d/0.log: byte 9: crc".into()],
            cuts: vec![Cut {
                file: "/d/0.log".into(),
                position: 9,
                len: 39,
                reason: "byte 9: crc".into(),
                later: vec!["/d/5.log".into()],
            }],
            ..RecoverInfo::default()
        };
        assert_eq!(
            deleted.notes(dir, false).last().map(String::as_str),
            Some("  /d/5.log: deleted, as it follows the cut in /d/0.log")
        );
    }
}
