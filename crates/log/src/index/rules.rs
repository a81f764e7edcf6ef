//! The rules an index must follow against the entries of its segment, shared by `krec verify`
//! ([`crate::check`], reading the index files) and [`crate::Log::verify_indexes`] (the indexes
//! a log holds): offset index entries at entry boundaries with that entry's last offset, time
//! index entries with the largest timestamp up to their offset, aborted transactions ending at
//! an abort marker of their producer, entries increasing, none past the end.
//!
//! Each problem goes to a callback with the file, the position in it, the index it is in and
//! the message ([`Rules`]); the caller turns it into its own kind of report.

use crate::index::{offset, time};
use crate::transaction::ABORTED_TXN_SIZE;
use std::io;
use std::path::Path;

/// The three indexes of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IndexKind {
    /// `.index`.
    Offset,
    /// `.timeindex`.
    Time,
    /// `.txnindex`.
    Txn,
}

impl IndexKind {
    pub(crate) fn entry_size(self) -> usize {
        match self {
            IndexKind::Offset => offset::ENTRY_SIZE as usize,
            IndexKind::Time => time::ENTRY_SIZE as usize,
            IndexKind::Txn => ABORTED_TXN_SIZE,
        }
    }
}

/// One entry of an index, with where it is in its file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexEntry {
    /// Byte position of the entry in the index file.
    pub(crate) at: u64,
    /// Entry number.
    pub(crate) n: u64,
    /// Absolute offset.
    pub(crate) offset: i64,
    /// `.index`: position in the .log; `.timeindex`: the timestamp; `.txnindex`: the producer id.
    pub(crate) value: i64,
    /// `.txnindex`: the first offset of the transaction.
    pub(crate) first: i64,
}

/// An index being matched against the entries of its segment, in order.
pub(crate) struct Index {
    pub(crate) kind: IndexKind,
    pub(crate) name: String,
    pub(crate) entries: Vec<IndexEntry>,
    pub(crate) next: usize,
}

impl Index {
    pub(crate) fn new(kind: IndexKind, path: &Path) -> Self {
        Index {
            kind,
            name: path.display().to_string(),
            entries: Vec::new(),
            next: 0,
        }
    }

    fn current(&self) -> Option<IndexEntry> {
        self.entries.get(self.next).copied()
    }
}

/// What the scan of a segment needs to know about one entry.
pub(crate) struct EntryFacts {
    pub(crate) position: u64,
    pub(crate) first_offset: i64,
    pub(crate) last_offset: i64,
    pub(crate) max_timestamp: i64,
    /// Producer id of an abort marker batch.
    pub(crate) abort_marker_of: Option<i64>,
}

/// Checks a segment's offset and time indexes, already decoded (absolute offset and position;
/// timestamp and absolute offset), against its batches (position, first offset, last offset,
/// max timestamp, in file order; the batches end at byte `end`) by the rules `krec verify`
/// applies ([`crate::check::Checker::entries`]); returns the first problem, with the index it
/// is in ([`IndexKind::Offset`] or [`IndexKind::Time`]). For [`crate::Log::verify_indexes`].
pub(crate) fn first_index_problem(
    log_name: &str,
    offset_index: (&Path, &[(i64, u64)]),
    time_index: (&Path, &[(i64, i64)]),
    batches: &[(u64, i64, i64, i64)],
    end: u64,
) -> Option<(IndexKind, String)> {
    let mut first = None;
    let mut rules = Rules(|_: &str, _: Option<u64>, kind: IndexKind, message: &str| {
        first.get_or_insert((kind, message.to_string()));
        Err(io::Error::other("stop at the first problem"))
    });
    let _ = rules.match_decoded(log_name, offset_index, time_index, batches, end);
    first
}

/// The index rules, reporting each problem to the callback `F` (file, position in it, index,
/// message); an error from the callback ends the walk.
pub(crate) struct Rules<F>(pub(crate) F);

impl<F: FnMut(&str, Option<u64>, IndexKind, &str) -> io::Result<()>> Rules<F> {
    /// Reports a problem.
    fn problem(
        &mut self,
        file: &str,
        position: Option<u64>,
        kind: IndexKind,
        message: &str,
    ) -> io::Result<()> {
        (self.0)(file, position, kind, message)
    }

    /// Matches one entry of the log against the indexes of its segment.
    pub(crate) fn match_indexes(
        &mut self,
        [oi, ti, tx]: [&mut Option<Index>; 3],
        facts: &EntryFacts,
        running_max: i64,
        log_name: &str,
    ) -> io::Result<()> {
        if let Some(ix) = oi.as_mut() {
            self.match_offset_index(ix, facts, log_name)?;
        }
        if let Some(ix) = ti.as_mut() {
            self.match_time_index(ix, facts, running_max)?;
        }
        if let Some(ix) = tx.as_mut() {
            self.match_txn_index(ix, facts)?;
        }
        Ok(())
    }

    /// Reports the index entries no entry of the log matched: they point past its end (`end`,
    /// the byte after the last entry).
    pub(crate) fn index_leftovers(
        &mut self,
        indexes: [Option<Index>; 3],
        name: &str,
        end: u64,
    ) -> io::Result<()> {
        for ix in indexes.into_iter().flatten() {
            for e in &ix.entries[ix.next..] {
                let what = match ix.kind {
                    IndexKind::Offset => format!(
                        "entry {} (offset {}, position {}) is past the last entry of {name} (its entries end at byte {end})",
                        e.n, e.offset, e.value
                    ),
                    IndexKind::Time => format!(
                        "entry {} (timestamp {}, offset {}) is past the last offset of {name}",
                        e.n, e.value, e.offset
                    ),
                    IndexKind::Txn => format!(
                        "entry {} (producer {}, offsets {}..={}) is past the last offset of {name}",
                        e.n, e.value, e.first, e.offset
                    ),
                };
                self.problem(&ix.name, Some(e.at), ix.kind, &what)?;
            }
        }
        Ok(())
    }

    /// Offset index entries must sit at entry boundaries and carry that entry's last offset.
    fn match_offset_index(
        &mut self,
        ix: &mut Index,
        f: &EntryFacts,
        log_name: &str,
    ) -> io::Result<()> {
        while let Some(e) = ix.current() {
            let position = e.value as u64;
            if position > f.position {
                break;
            }
            ix.next += 1;
            if position < f.position {
                self.problem(
                    &ix.name,
                    Some(e.at),
                    IndexKind::Offset,
                    &format!(
                        "entry {} (offset {}, position {position}) is not at an entry boundary of {log_name}",
                        e.n, e.offset
                    ),
                )?;
            } else if e.offset != f.last_offset {
                self.problem(
                    &ix.name,
                    Some(e.at),
                    IndexKind::Offset,
                    &format!(
                        "entry {} (offset {}, position {position}): the entry there has last offset {}",
                        e.n, e.offset, f.last_offset
                    ),
                )?;
            }
        }
        Ok(())
    }

    /// Time index entries must name an offset of an entry and the largest timestamp up to it.
    fn match_time_index(
        &mut self,
        ix: &mut Index,
        f: &EntryFacts,
        running_max: i64,
    ) -> io::Result<()> {
        while let Some(e) = ix.current() {
            if e.offset > f.last_offset {
                break;
            }
            ix.next += 1;
            if e.offset < f.first_offset {
                self.problem(
                    &ix.name,
                    Some(e.at),
                    IndexKind::Time,
                    &format!(
                        "entry {} (timestamp {}, offset {}): no entry holds that offset",
                        e.n, e.value, e.offset
                    ),
                )?;
            } else if e.value != running_max {
                self.problem(
                    &ix.name,
                    Some(e.at),
                    IndexKind::Time,
                    &format!(
                        "entry {} (timestamp {}, offset {}): the largest timestamp up to that offset is {running_max}",
                        e.n, e.value, e.offset
                    ),
                )?;
            }
        }
        Ok(())
    }

    /// Aborted transactions must end at an abort marker of their producer.
    fn match_txn_index(&mut self, ix: &mut Index, f: &EntryFacts) -> io::Result<()> {
        while let Some(e) = ix.current() {
            if e.offset > f.last_offset {
                break;
            }
            ix.next += 1;
            let at_marker = e.offset >= f.first_offset && f.abort_marker_of == Some(e.value);
            if !at_marker {
                self.problem(
                    &ix.name,
                    Some(e.at),
                    IndexKind::Txn,
                    &format!(
                        "entry {} (producer {}, offsets {}..={}): no abort marker of that producer at offset {}",
                        e.n, e.value, e.first, e.offset, e.offset
                    ),
                )?;
            }
        }
        Ok(())
    }

    /// Adds a decoded entry to an index's `entries`, or reports it when it does not increase
    /// after the last one.
    pub(crate) fn push_index_entry(
        &mut self,
        name: &str,
        kind: IndexKind,
        entries: &mut Vec<IndexEntry>,
        entry: IndexEntry,
    ) -> io::Result<()> {
        let (n, at) = (entry.n, entry.at);
        if let Some(prev) = entries.last() {
            let bad = match kind {
                IndexKind::Offset => entry.offset <= prev.offset || entry.value <= prev.value,
                IndexKind::Time => entry.value <= prev.value || entry.offset < prev.offset,
                IndexKind::Txn => entry.offset <= prev.offset,
            };
            if bad {
                let what = match kind {
                        IndexKind::Offset => format!(
                            "entry {n} (offset {}, position {}) does not increase after entry {} (offset {}, position {})",
                            entry.offset, entry.value, prev.n, prev.offset, prev.value
                        ),
                        IndexKind::Time => format!(
                            "entry {n} (timestamp {}, offset {}) does not increase after entry {} (timestamp {}, offset {})",
                            entry.value, entry.offset, prev.n, prev.value, prev.offset
                        ),
                        IndexKind::Txn => format!(
                            "entry {n} (last offset {}) does not increase after entry {} (last offset {})",
                            entry.offset, prev.n, prev.offset
                        ),
                    };
                return self.problem(name, Some(at), kind, &what);
            }
        }
        entries.push(entry);
        Ok(())
    }

    /// An index from decoded `(absolute offset, value)` entries (value: the position or the
    /// timestamp), reporting those that do not increase.
    fn decoded_index(
        &mut self,
        kind: IndexKind,
        path: &Path,
        decoded: impl Iterator<Item = (i64, i64)>,
    ) -> io::Result<Index> {
        let mut ix = Index::new(kind, path);
        for (n, (offset, value)) in (0u64..).zip(decoded) {
            let at = n * kind.entry_size() as u64;
            let e = IndexEntry {
                at,
                n,
                offset,
                value,
                first: 0,
            };
            self.push_index_entry(&ix.name, kind, &mut ix.entries, e)?;
        }
        Ok(ix)
    }

    /// [`first_index_problem`]'s walk.
    fn match_decoded(
        &mut self,
        log_name: &str,
        (oi_path, oi): (&Path, &[(i64, u64)]),
        (ti_path, ti): (&Path, &[(i64, i64)]),
        batches: &[(u64, i64, i64, i64)],
        end: u64,
    ) -> io::Result<()> {
        let positions = oi
            .iter()
            .map(|&(o, p)| (o, i64::try_from(p).unwrap_or(i64::MAX)));
        let offsets = self.decoded_index(IndexKind::Offset, oi_path, positions)?;
        let timestamps = ti.iter().map(|&(ts, o)| (o, ts));
        let times = self.decoded_index(IndexKind::Time, ti_path, timestamps)?;
        let (mut oi, mut ti) = (Some(offsets), Some(times));
        let mut running_max = -1i64;
        for &(position, first_offset, last_offset, max_timestamp) in batches {
            running_max = running_max.max(max_timestamp);
            let facts = EntryFacts {
                position,
                first_offset,
                last_offset,
                max_timestamp,
                abort_marker_of: None,
            };
            self.match_indexes([&mut oi, &mut ti, &mut None], &facts, running_max, log_name)?;
        }
        self.index_leftovers([oi, ti, None], log_name, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two batches: offsets 0..=1 at byte 0 (max timestamp 10), 2..=3 at byte 79 (max 13).
    const BATCHES: [(u64, i64, i64, i64); 2] = [(0, 0, 1, 10), (79, 2, 3, 13)];

    fn first(oi: &[(i64, u64)], ti: &[(i64, i64)]) -> Option<String> {
        let (o, t) = (Path::new("0.index"), Path::new("0.timeindex"));
        first_index_problem("0.log", (o, oi), (t, ti), &BATCHES, 158).map(|(_, m)| m)
    }

    #[test]
    fn decoded_indexes_by_the_verify_rules() {
        assert_eq!(first(&[(3, 79)], &[(13, 3)]), None);
        assert_eq!(first(&[], &[(10, 1), (13, 3)]), None);
        let m = first(&[(3, 40)], &[]).unwrap();
        assert!(m.contains("is not at an entry boundary of 0.log"), "{m}");
        let m = first(&[(2, 79)], &[]).unwrap();
        assert!(m.contains("the entry there has last offset 3"), "{m}");
        let m = first(&[(3, 79), (5, 158)], &[]).unwrap();
        assert!(m.contains("is past the last entry of 0.log"), "{m}");
        let m = first(&[], &[(12, 3)]).unwrap();
        assert!(
            m.contains("the largest timestamp up to that offset is 13"),
            "{m}"
        );
        let m = first(&[], &[(13, 3), (13, 3)]).unwrap();
        assert!(m.contains("does not increase"), "{m}");
    }
}
