//! Finding entries in damaged bytes: a bounded read window over a file, the cheap tests that
//! pass over what cannot start an entry (zero runs, implausible headers), and the test of a
//! whole entry (framing and CRC). Salvage's scan is built on these, and a read-only open asks
//! [`first_intact`] whether the bytes Kafka's recovery would cut hold intact entries.

use crate::error::{Error, Result};
use crate::storage::{Storage, StorageFile};
use krecords_codec::layout::{LOG_OVERHEAD, MAGIC_OFFSET, MIN_ENTRY_SIZE};
use krecords_codec::read::{Batch, Entries};
use std::path::{Path, PathBuf};

/// Smallest window read at once.
pub(crate) const MIN_WINDOW: usize = 64 << 10;

/// The largest entry [`first_intact`] accepts, size field counted (salvage's default).
const MAX_ENTRY_SIZE: usize = 16 << 20;

/// The first entry that checks (whole, its CRC valid) at or after byte `pos` of `files[0]`,
/// then in the later files in order, passing over damage as salvage's scan does (zero runs and
/// implausible headers quickly): its file's index, its position and its first offset. This is
/// what a reader asks after Kafka's recovery cut a log at `pos`: whether the cut lost intact
/// entries, or only a torn tail. Only the first `seen` bytes of `files[0]` are searched (its
/// length when it was cut; `u64::MAX`: all): an entry that ends after them was written since,
/// by a writer still appending, and says nothing of what was cut.
///
/// # Errors
///
/// A file cannot be read.
pub(crate) fn first_intact(
    storage: &dyn Storage,
    files: &[PathBuf],
    pos: u64,
    seen: u64,
) -> Result<Option<(usize, u64, i64)>> {
    let max = MAX_ENTRY_SIZE;
    let cap = max.saturating_add(LOG_OVERHEAD).max(MIN_WINDOW);
    for (j, path) in files.iter().enumerate() {
        let file = storage
            .open_read(path)
            .map_err(|e| Error::io("open", path, e))?;
        let len = file.len().map_err(|e| Error::io("read", path, e))?;
        let mut w = Window::new(file, path, len, cap).chunked(MIN_WINDOW);
        let mut p = if j == 0 { pos } else { 0 };
        while p < len {
            let head = w.at(p, MAGIC_OFFSET + 1)?;
            if implausible(head, max) {
                p = p.saturating_add(skip_after_failure(head));
                continue;
            }
            let want = claimed_len(head)
                .unwrap_or(0)
                .clamp(MAGIC_OFFSET + 1, max.saturating_add(LOG_OVERHEAD));
            let avail = w.at(p, want)?;
            let step = match candidate(avail, p, max) {
                Ok(b)
                    if j == 0
                        && p.saturating_add(
                            u64::try_from(b.as_bytes().len()).unwrap_or(u64::MAX),
                        ) > seen =>
                {
                    // Written since the first file was cut (a writer appending): not what
                    // was cut.
                    break;
                }
                Ok(b) => {
                    let first = b.first_offset().unwrap_or_else(|| b.last_offset());
                    return Ok(Some((j, p, first)));
                }
                Err(_) => skip_after_failure(avail),
            };
            p = p.saturating_add(step);
        }
    }
    Ok(None)
}

/// A read window over one file: bounded, refilled from the position asked for.
pub(crate) struct Window {
    pub(crate) file: Box<dyn StorageFile>,
    pub(crate) path: PathBuf,
    pub(crate) len: u64,
    pub(crate) start: u64,
    pub(crate) buf: Vec<u8>,
    pub(crate) cap: usize,
    /// The least a refill reads (up to `cap`).
    pub(crate) chunk: usize,
    /// A position whose bytes a refill keeps when it can (the entry being decided on while
    /// the one after it is looked at).
    pub(crate) pin: Option<u64>,
}

impl Window {
    /// A window of at most `cap` bytes over `file` (`path`, `len` bytes long).
    pub(crate) fn new(file: Box<dyn StorageFile>, path: &Path, len: u64, cap: usize) -> Window {
        Window {
            file,
            path: path.to_path_buf(),
            len,
            start: 0,
            buf: Vec::new(),
            cap,
            chunk: cap,
            pin: None,
        }
    }

    /// The same window reading only `chunk` bytes at a time unless more are needed (for a
    /// look ahead that usually stops at the first entry).
    pub(crate) fn chunked(mut self, chunk: usize) -> Window {
        self.chunk = chunk.min(self.cap);
        self
    }

    /// The bytes from `pos` on: at least `need` of them, or all up to the end of the file.
    /// A refill keeps what the window already holds from `pos` on and reads only the rest,
    /// so every byte of the file is read once however the scan moves forward.
    pub(crate) fn at(&mut self, pos: u64, need: usize) -> Result<&[u8]> {
        let end = self.start.saturating_add(self.buf.len() as u64);
        let want_end = pos.saturating_add(need as u64).min(self.len);
        if pos < self.start || want_end > end {
            let cap = self.cap as u64;
            let at = self
                .pin
                .filter(|&p| p <= pos && p >= self.start && want_end.saturating_sub(p) <= cap)
                .unwrap_or(pos);
            let wanted = usize::try_from(want_end.saturating_sub(at)).unwrap_or(usize::MAX);
            let n = usize::try_from(self.len.saturating_sub(at))
                .unwrap_or(usize::MAX)
                .min(self.cap)
                .min(wanted.max(self.chunk));
            let keep = if at >= self.start && at < end {
                let from = usize::try_from(at.saturating_sub(self.start)).unwrap_or(usize::MAX);
                self.buf.copy_within(from.., 0);
                usize::try_from(end.saturating_sub(at))
                    .unwrap_or(usize::MAX)
                    .min(n)
            } else {
                0
            };
            self.start = at;
            self.buf.resize(n, 0);
            if let Some(rest) = self.buf.get_mut(keep..) {
                self.file
                    .read_exact_at(rest, at.saturating_add(keep as u64))
                    .map_err(|e| Error::io("read", &self.path, e))?;
            }
        }
        let from = usize::try_from(pos.saturating_sub(self.start)).unwrap_or(usize::MAX);
        Ok(self.buf.get(from..).unwrap_or(&[]))
    }
}

/// How far past a failed candidate at the start of `avail` the next one can be: past a run of
/// zeros, no size field can start before 11 bytes ahead of its first non-zero byte.
pub(crate) fn skip_after_failure(avail: &[u8]) -> u64 {
    let Some(rest) = avail.get(8..) else {
        return 1;
    };
    if rest.first().is_some_and(|&b| b != 0) {
        return 1;
    }
    let mut zeros = 0usize;
    for chunk in rest.chunks(64) {
        if chunk.iter().fold(0u8, |a, &b| a | b) == 0 {
            zeros = zeros.saturating_add(chunk.len());
        } else {
            zeros = zeros.saturating_add(chunk.iter().take_while(|&&b| b == 0).count());
            break;
        }
    }
    // Candidates p with p + 8 .. p + 12 inside the zeros all have size 0: skip them.
    (zeros.saturating_sub(3) as u64).max(1)
}

/// Whether the bytes at the start of `avail` cannot start an entry [`candidate`] accepts: a size
/// field below the smallest entry or above `max`, or a magic byte other than 0, 1 or 2. Only
/// what `candidate` rejects too; `false` when fewer than 17 bytes are left (it decides then).
pub(crate) fn implausible(avail: &[u8], max: usize) -> bool {
    let (Some(size), Some(&magic)) = (avail.get(8..LOG_OVERHEAD), avail.get(MAGIC_OFFSET)) else {
        return false;
    };
    let size = i32::from_be_bytes([
        size.first().copied().unwrap_or(0),
        size.get(1).copied().unwrap_or(0),
        size.get(2).copied().unwrap_or(0),
        size.get(3).copied().unwrap_or(0),
    ]);
    size < MIN_ENTRY_SIZE || usize::try_from(size).is_ok_and(|s| s > max) || magic > 2
}

/// The whole entry at the start of `avail` (at file position `pos`), or why there is none.
pub(crate) fn candidate(
    avail: &[u8],
    pos: u64,
    max: usize,
) -> std::result::Result<Batch<'_>, String> {
    let at = usize::try_from(pos).unwrap_or(usize::MAX);
    let mut entries = Entries::with_base(avail, at).max_entry_size(max).strict();
    match entries.next_entry() {
        Ok(Some(b)) => {
            if b.is_crc_valid() {
                Ok(b)
            } else {
                Err(format!(
                    "crc mismatch (stored {}, computed {})",
                    b.crc(),
                    b.compute_crc()
                ))
            }
        }
        Ok(None) => Err("end of file".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The length the entry at the start of `head` claims, prefix included (`None`: no size
/// field there, or a negative one).
pub(crate) fn claimed_len(head: &[u8]) -> Option<usize> {
    let size = <[u8; 4]>::try_from(head.get(8..LOG_OVERHEAD)?).ok()?;
    usize::try_from(i32::from_be_bytes(size))
        .ok()
        .map(|s| s.saturating_add(LOG_OVERHEAD))
}
