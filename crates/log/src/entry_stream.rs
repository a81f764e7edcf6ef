//! Streaming input of log entries from any reader in constant memory.
//!
//! Entries are read one at a time into a reusable buffer that grows only to the size of the
//! largest entry (never to a size the input merely claims: a declared size beyond the bytes that
//! exist is a partial tail).

use krecords_codec::read::{ReadFill, Streamer};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// One step of reading an [`EntryStream`]: the codec's [`Step`](krecords_codec::read::Step).
pub use krecords_codec::read::Step as Next;

/// Where the checker (`check::Checker::entries`) reads entries from: an [`EntryStream`],
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

/// The codec's [`Streamer`] over a file opened for reading (never for writing), reading at most
/// `max_bytes` of it: the input ends there, so entries that do not end within the limit are a
/// partial tail. What [`EntryStream::open_file`] reads, for readers that drive the streamer
/// themselves (skipping entries with [`Streamer::skip_entry_if`]).
///
/// # Errors
///
/// The file cannot be opened.
pub fn file_streamer(
    path: &Path,
    max_bytes: Option<u64>,
) -> io::Result<Streamer<ReadFill<Box<dyn Read>>>> {
    let limit = max_bytes.unwrap_or(u64::MAX);
    let file = File::open(path)?;
    let len = file
        .metadata()
        .ok()
        .and_then(|m| known_len(&m))
        .map(|len| len.min(limit));
    Ok(streamer(Box::new(file.take(limit)), len))
}

/// The length a file's metadata gives, when it is the number of bytes the file reads: a regular
/// file's with a length. A length of 0 is not trusted (a file under `/proc` or `/sys` says 0 and
/// reads text), and a FIFO or a device has none: those are read to their end, as standard input
/// is (an empty regular file costs one read that returns nothing). `None` is not "read once"
/// (see [`read_once`]): an empty or `/proc` regular file has no known length but reads again.
pub fn known_len(meta: &std::fs::Metadata) -> Option<u64> {
    Some(meta.len()).filter(|&len| len > 0 && meta.is_file())
}

/// Whether the file at `path` is taken as one whose bytes can be read only once: it exists
/// (symbolic links followed) and is neither a regular file, a directory nor a block device
/// (which is read again as a file is) — a FIFO, a socket, a character device (a terminal,
/// `/dev/null`, `/dev/zero`).
/// Only a regular file is read twice; a second pass over anything else (looking for intact
/// entries after damage, reading transaction markers first) could wait for a writer for ever
/// or see other bytes, so it is not made, as it is not over standard input. A path that cannot
/// be looked up is not read once: opening it says why it cannot be read.
pub fn read_once(path: &Path) -> bool {
    file_kind(path).is_some_and(|k| {
        !matches!(
            k,
            FileKind::Regular | FileKind::Directory | FileKind::BlockDevice
        )
    })
}

/// What a file is, told from its metadata ([`file_kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A FIFO (a named pipe).
    Fifo,
    /// A character device (a terminal, `/dev/null`, `/dev/zero`).
    CharDevice,
    /// A block device (a disk, a loop device): seekable, read again as a file is.
    BlockDevice,
    /// A socket.
    Socket,
    /// Anything else.
    Other,
}

impl FileKind {
    /// What it is, in words ("a FIFO", "a character device").
    pub(crate) fn describe(self) -> &'static str {
        match self {
            FileKind::Regular => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Fifo => "a FIFO",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Socket => "a socket",
            FileKind::Other => "a special file",
        }
    }
}

/// What the file at `path` is (symbolic links followed); `None` when it cannot be looked up.
/// Only its metadata is read: a FIFO is never opened, which would wait for a writer.
pub(crate) fn file_kind(path: &Path) -> Option<FileKind> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() {
        return Some(FileKind::Regular);
    }
    if meta.is_dir() {
        return Some(FileKind::Directory);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        let kinds = [
            (t.is_fifo(), FileKind::Fifo),
            (t.is_char_device(), FileKind::CharDevice),
            (t.is_block_device(), FileKind::BlockDevice),
            (t.is_socket(), FileKind::Socket),
        ];
        if let Some((_, kind)) = kinds.iter().find(|(is, _)| *is) {
            return Some(*kind);
        }
    }
    Some(FileKind::Other)
}

/// The codec's [`Streamer`] over a reader; `len`, when known, is how many bytes it holds.
pub fn streamer<R: Read>(reader: R, len: Option<u64>) -> Streamer<ReadFill<R>> {
    let input = match len {
        Some(len) => ReadFill::with_len(reader, len),
        None => ReadFill::new(reader),
    };
    Streamer::new(input, 0, i32::MAX as usize)
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
pub struct EntryStream<R: Read = Box<dyn Read>> {
    stream: Streamer<ReadFill<R>>,
}

impl<R: Read> std::fmt::Debug for EntryStream<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntryStream")
            .field("position", &self.stream.position())
            .field("unread", &self.unread())
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
        Ok(EntryStream {
            stream: file_streamer(path, max_bytes)?,
        })
    }

    /// [`EntryStream::open_file`] from byte `position` of the file on: the entries there and
    /// after, named by their positions in the whole file.
    ///
    /// # Errors
    ///
    /// The file cannot be opened or read.
    pub fn open_file_at(path: &Path, position: u64) -> io::Result<EntryStream> {
        use std::io::{Seek, SeekFrom};
        let mut file = File::open(path)?;
        let len = known_len(&file.metadata()?).map(|len| len.saturating_sub(position));
        file.seek(SeekFrom::Start(position))?;
        let file = Box::new(file) as Box<dyn Read>;
        let input = match len {
            Some(len) => ReadFill::with_len(file, len),
            None => ReadFill::new(file),
        };
        Ok(EntryStream {
            stream: Streamer::new(input, position, i32::MAX as usize),
        })
    }

    /// A stream over any reader; `len`, when known, is how many bytes it holds (so that a
    /// declared entry size beyond them is not read for). The codec's
    /// [`Streamer`](krecords_codec::read::Streamer) reads it, with no bound on an entry but the
    /// input's bytes.
    pub fn from_reader(reader: Box<dyn Read>, len: Option<u64>) -> EntryStream {
        EntryStream::new(reader, len)
    }
}

impl<R: Read> EntryStream<R> {
    /// A stream over `reader`, which may borrow (see [`EntryStream::from_reader`]).
    pub fn new(reader: R, len: Option<u64>) -> EntryStream<R> {
        EntryStream {
            stream: streamer(reader, len),
        }
    }

    /// Bytes of the input not read yet, when its length is known.
    pub fn unread(&self) -> Option<u64> {
        self.stream.input().unread()
    }
}

impl<R: Read> EntrySource for EntryStream<R> {
    fn position(&self) -> usize {
        self.stream.position() as usize
    }

    fn next_entry(&mut self) -> io::Result<Next<'_>> {
        self.stream.next_entry()
    }

    fn remaining_bytes(&mut self) -> io::Result<u64> {
        let buffered = self.stream.buffered() as u64;
        let input = self.stream.input_mut();
        if let Some(u) = input.unread() {
            return Ok(buffered + u);
        }
        Ok(buffered + count_rest(input.reader_mut())?)
    }
}

/// How much of a stream is counted after an invalid entry, at most: the bytes of a file are
/// known without reading them, but a pipe or a device is read to be counted, and one that never
/// ends (`/dev/zero`) would be read for ever.
pub const COUNT_LIMIT: u64 = 1 << 30;

/// Reads `reader` to its end and counts its bytes, or fails once more than [`COUNT_LIMIT`]
/// were read (the input does not end: a device, or an endless stream).
///
/// # Errors
///
/// The reader's; more than [`COUNT_LIMIT`] bytes.
pub fn count_rest(reader: &mut dyn io::Read) -> io::Result<u64> {
    let rest = io::copy(&mut reader.take(COUNT_LIMIT + 1), &mut io::sink())?;
    if rest > COUNT_LIMIT {
        return Err(io::Error::other(format!(
            "more than {COUNT_LIMIT} bytes follow an invalid entry and the input does not end \
             (a device or an endless stream?): stopped counting them"
        )));
    }
    Ok(rest)
}

#[cfg(test)]
mod tests {
    use super::{file_kind, read_once, FileKind};
    use std::path::Path;

    #[test]
    fn only_a_regular_file_or_a_directory_is_read_more_than_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("00000000000000000000.log");
        std::fs::write(&file, b"bytes").unwrap();
        assert!(!read_once(&file), "a regular file");
        let empty = dir.path().join("empty");
        assert!(!read_once(&empty), "a missing file");
        std::fs::write(&empty, b"").unwrap();
        assert!(!read_once(&empty), "an empty regular file");
        assert!(!read_once(dir.path()), "a directory");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert!(read_once(&fifo), "a FIFO");
        } else {
            eprintln!("no mkfifo: the FIFO is not tested");
        }
        let null = Path::new("/dev/null");
        if null.exists() {
            assert!(read_once(null), "a character device");
        }
    }

    #[test]
    fn file_kind_tells_files_directories_and_devices_apart() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"").unwrap();
        assert_eq!(file_kind(&file), Some(FileKind::Regular));
        assert_eq!(file_kind(dir.path()), Some(FileKind::Directory));
        assert_eq!(file_kind(&dir.path().join("missing")), None);
        let null = Path::new("/dev/null");
        if null.exists() {
            assert_eq!(file_kind(null), Some(FileKind::CharDevice));
            assert_eq!(FileKind::CharDevice.describe(), "a character device");
        }
    }
}
