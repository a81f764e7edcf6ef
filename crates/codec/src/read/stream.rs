//! Reading the entries of an input larger than memory through one bounded window.
//!
//! [`Streamer`] holds a window of the input in one reusable buffer, slices it by each entry's
//! size field and hands the entry to [`Entries`] for its structural checks, so every caller meets
//! the same four outcomes ([`Step`]): an entry, a malformed entry, a truncated tail, the end.
//! Where the bytes come from is a [`Fill`]:
//!
//! - a file or any [`std::io::Read`] (stdin, a pipe, a fetch response fed through a reader as
//!   `krec` does for `kafka://` sources) through [`ReadFill`];
//! - positioned reads (a log segment through its storage) by implementing [`Fill::fill_at`] over
//!   `read_at`;
//! - a buffer already in memory (`&[u8]`), such as a Fetch response's records: [`Entries`]
//!   reads such a buffer directly with the same checks, and `&[u8]` is a [`Fill`] too, for code
//!   written once over both.
//!
//! Memory stays bounded whatever the input claims: the window grows only as bytes arrive (by
//! at most the bytes it already holds, or one read size, per read) and never beyond the known end
//! of the input, and a size field above the caller's maximum entry size is an error before
//! anything is read for it. A size field that promises more bytes than the input has ends the
//! stream as a [`Partial`] tail.

use super::{Batch, Entries, EntryPrefix, Partial, HEADER_SIZE_UP_TO_MAGIC};
use crate::layout::LOG_OVERHEAD;
use crate::Error;
use std::io::{self, Read};

/// Where a [`Streamer`] takes its bytes from.
///
/// Reads are sequential: each call's `pos` is where the previous one ended (the first is the
/// streamer's start), so a stream may ignore `pos` and a positioned source reads at it.
pub trait Fill {
    /// Reads bytes of the input starting at absolute position `pos` into `buf`, returning how
    /// many it read; 0 only at the end of the input (or when `buf` is empty).
    ///
    /// # Errors
    ///
    /// The source's I/O errors; the streamer passes them on.
    fn fill_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<usize>;

    /// Bytes of the input from `pos` to its end, when known (a file's length). The streamer then
    /// never reads past the end, nor grows its window for an entry that cannot fit.
    fn len_from(&self, pos: u64) -> Option<u64> {
        let _ = pos;
        None
    }
}

/// A buffer in memory, read at positions relative to its start.
impl Fill for &[u8] {
    fn fill_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        let rest = usize::try_from(pos)
            .ok()
            .and_then(|p| self.get(p..))
            .unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), rest.get(..n)) {
            dst.copy_from_slice(src);
        }
        Ok(n)
    }

    fn len_from(&self, pos: u64) -> Option<u64> {
        Some((self.len() as u64).saturating_sub(pos))
    }
}

/// A [`Fill`] over any [`Read`], of known or unknown length.
#[derive(Debug)]
pub struct ReadFill<R> {
    reader: R,
    /// Bytes not read yet, when the length is known.
    unread: Option<u64>,
}

impl<R: Read> ReadFill<R> {
    /// A reader of unknown length (stdin, a pipe, a network stream).
    pub fn new(reader: R) -> Self {
        ReadFill {
            reader,
            unread: None,
        }
    }

    /// A reader that holds `len` bytes (a regular file, or a file read up to a limit).
    pub fn with_len(reader: R, len: u64) -> Self {
        ReadFill {
            reader,
            unread: Some(len),
        }
    }

    /// Bytes not read from the reader yet, when the length is known.
    pub fn unread(&self) -> Option<u64> {
        self.unread
    }

    /// The reader, to read what the streamer left (for instance to count it).
    pub fn reader_mut(&mut self) -> &mut R {
        &mut self.reader
    }
}

impl<R: Read> Fill for ReadFill<R> {
    fn fill_at(&mut self, _pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.reader.read(buf) {
                Ok(n) => {
                    if let Some(u) = self.unread.as_mut() {
                        *u = u.saturating_sub(n as u64);
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn len_from(&self, _pos: u64) -> Option<u64> {
        self.unread
    }
}

/// One step of a [`Streamer`].
#[derive(Debug)]
pub enum Step<'a> {
    /// A complete entry that passed [`Entries`]' checks; its position is `batch.position()`.
    Entry(Batch<'a>),
    /// A malformed entry at [`Streamer::position`]; the stream ends.
    Error(Error),
    /// A truncated tail (the input ends inside an entry); the stream ends. `bytes` counts every
    /// byte from the entry to the end of the input when the input's length is known.
    Partial(Partial),
    /// The end of the input.
    End,
}

/// The entries of a [`Fill`], read through one window buffer (see the [module](self) docs).
///
/// # Examples
///
/// ```
/// use krecords_codec::read::stream::{ReadFill, Step, Streamer};
/// use krecords_codec::write::{NewRecord, V2Builder};
///
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1714000000000, None, Some(b"x"))).unwrap();
/// let one = b.finish().unwrap();
/// let mut input = [one.clone(), one.clone()].concat();
/// input.truncate(input.len() - 3); // a torn write
///
/// // Any `io::Read`, read 16 bytes at a time, entries at most 1 MiB.
/// let mut s = Streamer::new(ReadFill::new(&input[..]), 0, 1 << 20).read_size(16);
/// let mut positions = Vec::new();
/// loop {
///     match s.next_entry().unwrap() {
///         Step::Entry(batch) => positions.push(batch.position()),
///         Step::Partial(p) => {
///             assert_eq!((p.position, p.bytes), (one.len(), one.len() - 3));
///             break;
///         }
///         Step::Error(e) => panic!("{e}"),
///         Step::End => unreachable!(),
///     }
/// }
/// assert_eq!(positions, [0]);
/// assert!(matches!(s.next_entry().unwrap(), Step::End));
/// ```
#[derive(Debug)]
pub struct Streamer<F> {
    input: F,
    buf: Vec<u8>,
    /// The unconsumed window is `buf[start..end]`.
    start: usize,
    end: usize,
    /// Absolute position of `buf[start]`: the next entry.
    pos: u64,
    /// Bytes asked of the input per read, at least.
    read_size: usize,
    /// Largest entry size field accepted.
    max_entry_size: usize,
    eof: bool,
    done: bool,
}

/// Default [`Streamer::read_size`]: 1 MiB.
pub const DEFAULT_READ_SIZE: usize = 1 << 20;

impl<F: Fill> Streamer<F> {
    /// Reads the entries of `input` from absolute position `start`, refusing entries whose size
    /// field (bytes after the 12-byte offset and size prefix) is above `max_entry_size`, as
    /// [`Entries::max_entry_size`] does. Pass `i32::MAX as usize` for no bound but the input's:
    /// the window still grows only with bytes that arrive.
    pub fn new(input: F, start: u64, max_entry_size: usize) -> Self {
        Streamer {
            input,
            buf: Vec::new(),
            start: 0,
            end: 0,
            pos: start,
            read_size: DEFAULT_READ_SIZE,
            max_entry_size,
            eof: false,
            done: false,
        }
    }

    /// Fills the window to at least `n` bytes when it reads (default [`DEFAULT_READ_SIZE`]; 1
    /// at least), so entries smaller than that take one read per window rather than one each.
    pub fn read_size(mut self, n: usize) -> Self {
        self.read_size = n.max(1);
        self
    }

    /// Absolute position of the next entry (after an error or a partial tail: of that entry).
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Bytes read from the input but not consumed by entries yet.
    pub fn buffered(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// Bytes allocated for the window. It never exceeds the input's length when that is known;
    /// otherwise it stays below `2 × (max entry size + 17) + read size` and below twice the
    /// bytes read plus the read size, whatever the size fields claim.
    pub fn window_capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// The input.
    pub fn input(&self) -> &F {
        &self.input
    }

    /// The input (to count or read what is left after the stream ended).
    pub fn input_mut(&mut self) -> &mut F {
        &mut self.input
    }

    /// Absolute position of the next byte to read from the input.
    fn read_pos(&self) -> u64 {
        self.pos.saturating_add(self.buffered() as u64)
    }

    /// Reads until at least `want` bytes are in the window or the input ends.
    fn fill(&mut self, want: usize) -> io::Result<()> {
        while self.buffered() < want && !self.eof {
            let held = self.buffered();
            // Enough for `want`, and the window filled to the read size: the bytes held are
            // moved to the front rather than read again, so a read asks for the rest only.
            let mut room = want
                .saturating_sub(held)
                .max(self.read_size.saturating_sub(held));
            match self.input.len_from(self.read_pos()) {
                // Never past the known end.
                Some(rest) => room = room.min(usize::try_from(rest).unwrap_or(usize::MAX)),
                // Unknown length: grow by at most what arrived so far (or one read size).
                None => room = room.min(held.max(self.read_size)),
            }
            if room == 0 {
                self.eof = true;
                break;
            }
            // Move the window to the front when the free tail cannot take the read.
            if self.start > 0 && self.end.saturating_add(room) > self.buf.len() {
                self.buf.copy_within(self.start..self.end, 0);
                self.start = 0;
                self.end = held;
            }
            let read_end = self.end.saturating_add(room);
            if self.buf.len() < read_end {
                self.buf
                    .reserve_exact(read_end.saturating_sub(self.buf.len()));
                self.buf.resize(read_end, 0);
            }
            let read_pos = self.read_pos();
            let Some(dst) = self.buf.get_mut(self.end..read_end) else {
                break;
            };
            let n = self.input.fill_at(read_pos, dst)?;
            if n == 0 {
                self.eof = true;
            }
            self.end = self.end.saturating_add(n.min(room));
        }
        Ok(())
    }

    /// Consumes the next entry when `skip` says so, without returning it: for readers that
    /// leave entries out (before a start offset, an aborted transaction) and hand the others on
    /// from [`Streamer::next_entry`]. Returns whether an entry was skipped; `skip` sees complete
    /// entries only, and the next entry, a malformed one or the end stay for `next_entry`.
    ///
    /// # Errors
    ///
    /// The input's I/O errors.
    pub fn skip_entry_if(&mut self, skip: impl FnOnce(&Batch<'_>) -> bool) -> io::Result<bool> {
        let was_done = self.done;
        let size = match self.next_entry()? {
            Step::Entry(batch) if skip(&batch) => return Ok(true),
            Step::Entry(batch) => batch.size_in_bytes(),
            Step::Error(_) | Step::Partial(_) | Step::End => 0,
        };
        // Put it back: the window still holds its bytes.
        self.start = self.start.saturating_sub(size);
        self.pos = self.pos.saturating_sub(size as u64);
        self.done = was_done;
        Ok(false)
    }

    /// The next entry.
    ///
    /// # Errors
    ///
    /// The input's I/O errors; format problems are [`Step::Error`].
    pub fn next_entry(&mut self) -> io::Result<Step<'_>> {
        if self.done {
            return Ok(Step::End);
        }
        self.fill(HEADER_SIZE_UP_TO_MAGIC)?;
        let mut exists = true;
        if let Some(prefix) = EntryPrefix::parse(self.buf.get(self.start..self.end).unwrap_or(&[]))
        {
            let len = prefix.entry_len().and_then(|l| usize::try_from(l).ok());
            if let Some(total) =
                len.filter(|&l| l.saturating_sub(LOG_OVERHEAD) <= self.max_entry_size)
            {
                // Do not grow the window for bytes that cannot exist.
                exists = match self.input.len_from(self.read_pos()) {
                    Some(rest) => (self.buffered() as u64).saturating_add(rest) >= total as u64,
                    None => true,
                };
                if exists {
                    self.fill(total)?;
                }
            }
        }
        let unread = if exists {
            0
        } else {
            self.input.len_from(self.read_pos()).unwrap_or(0)
        };
        let window = self.buf.get(self.start..self.end).unwrap_or(&[]);
        let base = usize::try_from(self.pos).unwrap_or(usize::MAX);
        let mut entries = Entries::with_base(window, base).max_entry_size(self.max_entry_size);
        match entries.next_entry() {
            Ok(Some(batch)) => {
                let size = batch.size_in_bytes();
                self.start = self.start.saturating_add(size);
                self.pos = self.pos.saturating_add(size as u64);
                Ok(Step::Entry(batch))
            }
            Ok(None) => {
                self.done = true;
                Ok(match entries.partial() {
                    Some(mut p) => {
                        p.bytes = p
                            .bytes
                            .saturating_add(usize::try_from(unread).unwrap_or(usize::MAX));
                        Step::Partial(p)
                    }
                    None => Step::End,
                })
            }
            Err(e) => {
                self.done = true;
                Ok(Step::Error(e))
            }
        }
    }
}
