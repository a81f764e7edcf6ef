//! Streaming input of log entries from any reader in constant memory.
//!
//! Entries are read one at a time into a reusable buffer that grows only to the size of the
//! largest entry (never to a size the input merely claims: a declared size beyond the bytes that
//! exist is a partial tail).

use krecords_codec::read::{Batch, Entries, Partial};
use krecords_codec::LOG_OVERHEAD;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

const CHUNK: usize = 1 << 20;

/// One step of reading an [`EntryStream`].
#[derive(Debug)]
pub enum Next<'a> {
    /// A complete entry.
    Entry(Batch<'a>),
    /// A malformed entry; reading stops.
    Error(krecords_codec::Error),
    /// A truncated tail; reading stops.
    Partial(Partial),
    /// End of input.
    End,
}

/// Where [`Checker::entries`](super::Checker::entries) reads entries from: an [`EntryStream`],
/// or a wrapper around one (a command line tool's, showing progress).
pub trait EntrySource {
    /// Returns the next entry.
    ///
    /// # Errors
    ///
    /// An I/O error of the underlying reader.
    fn next_entry(&mut self) -> io::Result<Next<'_>>;
    /// Absolute position of the next unread entry.
    fn position(&self) -> usize;
    /// Bytes from the current position to the end of the input (after an error: how many bytes
    /// were left unread as invalid).
    ///
    /// # Errors
    ///
    /// An I/O error of the underlying reader.
    fn remaining_bytes(&mut self) -> io::Result<u64>;
}

/// A stream of entries from a reader, one entry in memory at a time.
///
/// # Examples
///
/// ```
/// use krecords_codec::write::{NewRecord, V2Builder};
/// use krecords_log::check::{EntrySource, EntryStream, Next};
///
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"x"))).unwrap();
/// let bytes = b.finish().unwrap().to_vec();
/// let mut s = EntryStream::from_reader(Box::new(std::io::Cursor::new(bytes)), None);
/// assert!(matches!(s.next_entry().unwrap(), Next::Entry(_)));
/// assert!(matches!(s.next_entry().unwrap(), Next::End));
/// ```
pub struct EntryStream {
    reader: Box<dyn Read>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Absolute position of `buf[start]`.
    base: usize,
    eof: bool,
    done: bool,
    /// Bytes of the input that are not read yet, when known (a regular file).
    unread: Option<u64>,
}

impl std::fmt::Debug for EntryStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntryStream")
            .field("position", &self.base)
            .field("unread", &self.unread)
            .finish_non_exhaustive()
    }
}

impl EntryStream {
    /// Opens a file for reading (never for writing), reading at most `max_bytes` of it: the
    /// input ends there, so entries that do not end within the limit are a partial tail.
    ///
    /// # Errors
    ///
    /// The file cannot be opened.
    pub fn open_file(path: &Path, max_bytes: Option<u64>) -> io::Result<EntryStream> {
        let limit = max_bytes.unwrap_or(u64::MAX);
        let file = File::open(path)?;
        let len = file
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len().min(limit));
        Ok(EntryStream::from_reader(Box::new(file.take(limit)), len))
    }

    /// A stream over any reader; `len`, when known, is how many bytes it holds (so that a
    /// declared entry size beyond them is not read for).
    pub fn from_reader(reader: Box<dyn Read>, len: Option<u64>) -> EntryStream {
        EntryStream {
            reader,
            buf: Vec::new(),
            start: 0,
            end: 0,
            base: 0,
            eof: false,
            done: false,
            unread: len,
        }
    }

    /// Bytes of the input not read yet, when its length is known.
    pub fn unread(&self) -> Option<u64> {
        self.unread
    }

    /// Reads until at least `want` bytes are buffered or the input ends.
    fn fill(&mut self, want: usize) -> io::Result<()> {
        while self.end - self.start < want && !self.eof {
            if self.start > 0 && (self.buf.len() - self.end < CHUNK || self.start == self.end) {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            // Grow by what is read, never by what an entry claims: a size field can lie.
            let need = self.end + CHUNK;
            if self.buf.len() < need {
                self.buf.resize(need, 0);
            }
            let n = match self.reader.read(&mut self.buf[self.end..]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
            if let Some(u) = self.unread.as_mut() {
                *u = u.saturating_sub(n as u64);
            }
        }
        Ok(())
    }
}

impl EntrySource for EntryStream {
    fn position(&self) -> usize {
        self.base
    }

    fn next_entry(&mut self) -> io::Result<Next<'_>> {
        if self.done {
            return Ok(Next::End);
        }
        self.fill(LOG_OVERHEAD + 5)?;
        let avail = self.end - self.start;
        if avail >= LOG_OVERHEAD {
            let at = self.start + krecords_codec::read::v2::LENGTH_OFFSET;
            let size = i32::from_be_bytes(self.buf[at..at + 4].try_into().unwrap_or([0; 4]));
            if size > 0 {
                let total = size as usize + LOG_OVERHEAD;
                // Do not grow the buffer for bytes that cannot exist.
                let exists = match self.unread {
                    Some(u) => (avail as u64).saturating_add(u) >= total as u64,
                    None => true,
                };
                if exists {
                    self.fill(total)?;
                }
            }
        }
        let window = &self.buf[self.start..self.end];
        let mut entries = Entries::with_base(window, self.base);
        match entries.next_entry() {
            Ok(Some(batch)) => {
                let size = batch.size_in_bytes();
                self.start += size;
                self.base += size;
                Ok(Next::Entry(batch))
            }
            Ok(None) => {
                self.done = true;
                match entries.partial() {
                    Some(p) => Ok(Next::Partial(p)),
                    None => Ok(Next::End),
                }
            }
            Err(e) => {
                self.done = true;
                Ok(Next::Error(e))
            }
        }
    }

    fn remaining_bytes(&mut self) -> io::Result<u64> {
        let buffered = (self.end - self.start) as u64;
        if let Some(u) = self.unread {
            return Ok(buffered + u);
        }
        let mut sink = io::sink();
        let rest = io::copy(&mut self.reader, &mut sink)?;
        Ok(buffered + rest)
    }
}
