//! Replacing cleaned segments crash-safely, and finishing or undoing an interrupted replacement
//! when the log is loaded (Kafka's `LocalLog.replaceSegments` and the swap handling of
//! `LogLoader`).
//!
//! A group of old segments `[B, E)` (`E` the base offset of the segment after the group) is
//! replaced by new segments, the first at `B`: the cleaner writes one (Kafka's
//! `cleanSegments`), splitting a segment whose offsets overflow writes several, `B < N2 < …`,
//! in place of one (Kafka's `splitOverflowedSegment`).
//!
//! 1. Each new segment is written as `N.log.cleaned`, `N.index.cleaned`, `N.timeindex.cleaned`
//!    (and `N.txnindex.cleaned` when it keeps aborted transactions), synced, directory synced.
//! 2. `krec-cleaner-swap` records `B E N2 …` (atomically). Kafka has no such file: it takes the
//!    end of the range from the swap segment's last offset, which misses old segments past the
//!    new segment's last batch when the cleaner emptied them; ours knows the range, and which
//!    names in it are new.
//! 3. The `.cleaned` files are renamed `.swap`; directory synced.
//! 4. Each old segment's files are renamed `.deleted`, indexes first and `.log` last; directory
//!    synced.
//! 5. The `.swap` files lose their suffix, segment by segment from the highest base offset down
//!    to `B`, indexes first and `.log` last; directory synced. `B.log.swap` is thus the last
//!    `.swap` file to go.
//! 6. The `.deleted` files and `krec-cleaner-swap` are removed; directory synced.
//!
//! On load ([`recover`]): any `.cleaned` file means step 3 did not complete, so no old segment
//! was touched: every `.cleaned` and `.swap` file is removed. Otherwise a `B.log.swap` means the
//! replacement got past step 3: the old segments' files still named in `[B, E)` are removed
//! (never at a new base `N2 …`, whose names are the new segments'; at `B` only while the old
//! `B.log` is still there, since after step 4 the names at `B` are the new segment's), and the
//! `.swap` files are renamed. `.deleted` files are removed as before.

use crate::error::{Error, Result};
use crate::files::{
    self, CLEANED_SUFFIX, CLEANER_SWAP_FILE, DELETED_SUFFIX, INDEX_SUFFIX, LOG_SUFFIX, SWAP_SUFFIX,
    TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX,
};
use crate::reader::{segment_reader, SCAN_WINDOW};
use crate::storage::Storage;
use krecords_codec::read::Step;
use std::path::Path;

/// The segment file suffixes, in the order files are renamed (the `.log` last).
const SUFFIXES: [&str; 4] = [
    INDEX_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    LOG_SUFFIX,
];

fn rename(st: &dyn Storage, dir: &Path, from: &str, to: &str) -> Result<bool> {
    let from = dir.join(from);
    if !st.exists(&from).map_err(|e| Error::io("stat", &from, e))? {
        return Ok(false);
    }
    st.rename(&from, &dir.join(to))
        .map_err(|e| Error::io("rename", &from, e))?;
    Ok(true)
}

fn sync_dir(st: &dyn Storage, dir: &Path) -> Result<()> {
    st.sync_dir(dir).map_err(|e| Error::io("sync", dir, e))
}

/// Steps 2 to 6 of the module documentation: the `.cleaned` files of the new segments at
/// `new_bases` (ascending, the first being the first old base; already synced) replace the
/// segments `old_bases`, which end before `end`.
pub(crate) fn replace(
    st: &dyn Storage,
    dir: &Path,
    new_bases: &[i64],
    end: i64,
    old_bases: &[i64],
) -> Result<()> {
    let Some(&base) = new_bases.first() else {
        return Ok(());
    };
    let mut record = format!("{base} {end}");
    for n in &new_bases[1..] {
        record.push_str(&format!(" {n}"));
    }
    record.push('\n');
    files::write_atomic(st, dir, CLEANER_SWAP_FILE, record.as_bytes())?;
    for &new in new_bases.iter().rev() {
        for s in SUFFIXES {
            let name = files::file_name(new, s);
            rename(
                st,
                dir,
                &format!("{name}{CLEANED_SUFFIX}"),
                &format!("{name}{SWAP_SUFFIX}"),
            )?;
        }
    }
    sync_dir(st, dir)?;
    for &old in old_bases {
        for s in SUFFIXES {
            let name = files::file_name(old, s);
            rename(st, dir, &name, &format!("{name}{DELETED_SUFFIX}"))?;
        }
    }
    sync_dir(st, dir)?;
    for &new in new_bases.iter().rev() {
        for s in SUFFIXES {
            let name = files::file_name(new, s);
            rename(st, dir, &format!("{name}{SWAP_SUFFIX}"), &name)?;
        }
    }
    sync_dir(st, dir)?;
    for &old in old_bases {
        for s in SUFFIXES {
            let name = files::file_name(old, s);
            files::remove_if_exists(st, &dir.join(format!("{name}{DELETED_SUFFIX}")))?;
        }
    }
    files::remove_if_exists(st, &dir.join(CLEANER_SWAP_FILE))?;
    sync_dir(st, dir)
}

/// The offset after the last complete batch of the segment file `path` (its base offset when
/// it has none): Kafka's `readNextOffset`, the fallback end of a swap without our record.
fn next_offset_of(st: &dyn Storage, path: &Path, base: i64) -> Result<i64> {
    let f = st.open(path).map_err(|e| Error::io("open", path, e))?;
    let len = f.len().map_err(|e| Error::io("read", path, e))?;
    let mut r = segment_reader(f.as_ref(), 0, len, SCAN_WINDOW);
    let mut next = base;
    while let Step::Entry(b) = r.next_entry().map_err(|e| Error::io("read", path, e))? {
        next = b.last_offset() + 1;
    }
    Ok(next)
}

/// Finishes or undoes an interrupted replacement (see the module documentation). Returns
/// whether the directory changed (it is then synced).
pub(crate) fn recover(st: &dyn Storage, dir: &Path, names: &[String]) -> Result<bool> {
    let swap_name = |n: &str| n.strip_suffix(SWAP_SUFFIX).map(str::to_owned);
    let has_cleaned = names.iter().any(|n| n.ends_with(CLEANED_SUFFIX));
    let swap_logs: Vec<i64> = names
        .iter()
        .filter_map(|n| swap_name(n))
        .filter_map(|n| files::parse_file_name(&n, LOG_SUFFIX))
        .collect();
    let record = names.iter().any(|n| n == CLEANER_SWAP_FILE);
    let mut changed = false;
    if has_cleaned || swap_logs.is_empty() {
        // Nothing was replaced yet (or everything was): drop the new files.
        for n in names {
            if n.ends_with(CLEANED_SUFFIX) || n.ends_with(SWAP_SUFFIX) {
                changed |= files::remove_if_exists(st, &dir.join(n))?;
            }
        }
    } else {
        let base = swap_logs.iter().copied().min().unwrap_or(0);
        // The recorded end and the new bases above `B`; without our record (a broker's own
        // swap), the `.swap` logs present are the new segments.
        let recorded = match files::read_small_file(st, &dir.join(CLEANER_SWAP_FILE))? {
            Some(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let fields: std::result::Result<Vec<i64>, _> =
                    text.split_whitespace().map(str::parse::<i64>).collect();
                match fields.as_deref() {
                    Ok([b, e, new @ ..]) if *b == base => Some((*e, new.to_vec())),
                    _ => None,
                }
            }
            None => None,
        };
        let new_bases = match &recorded {
            Some((_, new)) => new.clone(),
            None => swap_logs.iter().copied().filter(|&b| b != base).collect(),
        };
        let end = match recorded {
            Some((e, _)) => e,
            None => swap_logs
                .iter()
                .map(|&b| {
                    let name = format!("{}{SWAP_SUFFIX}", files::file_name(b, LOG_SUFFIX));
                    next_offset_of(st, &dir.join(name), b)
                })
                .collect::<Result<Vec<i64>>>()?
                .into_iter()
                .max()
                .unwrap_or(base),
        };
        let old_at_base = names
            .iter()
            .any(|n| *n == files::file_name(base, LOG_SUFFIX));
        for n in names {
            if n.ends_with(SWAP_SUFFIX) {
                continue;
            }
            let Some(b) = SUFFIXES.iter().find_map(|s| files::parse_file_name(n, s)) else {
                continue;
            };
            if new_bases.contains(&b) {
                continue;
            }
            if (b > base && b < end) || (b == base && old_at_base) {
                changed |= files::remove_if_exists(st, &dir.join(n))?;
            }
        }
        for n in names
            .iter()
            .filter(|n| !n.ends_with(&format!("{LOG_SUFFIX}{SWAP_SUFFIX}")))
        {
            if let Some(to) = swap_name(n) {
                changed |= rename(st, dir, n, &to)?;
            }
        }
        // Highest base first, `B.log.swap` last (names sort by offset), as in step 5.
        let mut logs: Vec<&String> = names
            .iter()
            .filter(|n| n.ends_with(&format!("{LOG_SUFFIX}{SWAP_SUFFIX}")))
            .collect();
        logs.sort_unstable_by(|a, b| b.cmp(a));
        for n in logs {
            if let Some(to) = swap_name(n) {
                changed |= rename(st, dir, n, &to)?;
            }
        }
    }
    if record {
        changed |= files::remove_if_exists(st, &dir.join(CLEANER_SWAP_FILE))?;
    }
    if changed {
        sync_dir(st, dir)?;
    }
    Ok(changed)
}
