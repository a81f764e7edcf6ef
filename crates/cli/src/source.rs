//! Streaming input of log entries from a file or stdin in constant memory.
//!
//! Entries are read one at a time into a reusable buffer that grows only to the size of the
//! largest entry (never to a size the input merely claims: a declared size beyond the bytes that
//! exist is a partial tail).

use crate::outcome::Failure;
use crate::progress::{Progress, Unit};
pub use krecords_log::check::Next;
use krecords_log::check::{EntrySource, EntryStream};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// A stream of entries from a reader ([`EntryStream`]) with a progress line.
pub struct Source {
    /// Display name (a path or `-`).
    pub name: String,
    stream: EntryStream,
    /// Progress over the bytes of a large file, on a terminal only.
    progress: Progress,
}

impl Source {
    /// Opens a file, or stdin for `-`.
    pub fn open(path: &Path) -> io::Result<Source> {
        Source::open_limited(path, None)
    }

    /// Opens a file, or stdin for `-`, reading at most `max_bytes` of it: the input ends there,
    /// so entries that do not end within the limit are a partial tail.
    pub fn open_limited(path: &Path, max_bytes: Option<u64>) -> io::Result<Source> {
        if path == Path::new("-") {
            let limit = max_bytes.unwrap_or(u64::MAX);
            return Ok(Source::new(
                "-".into(),
                EntryStream::from_reader(Box::new(io::stdin().take(limit)), None),
            ));
        }
        let stream = EntryStream::open_file(path, max_bytes)?;
        Ok(Source::new(path.display().to_string(), stream))
    }

    /// A source over any reader (a live partition's fetched bytes), of unknown length.
    pub fn from_reader(name: String, reader: Box<dyn Read>) -> Source {
        Source::new(name, EntryStream::from_reader(reader, None))
    }

    fn new(name: String, stream: EntryStream) -> Source {
        let progress = Progress::new(
            format!("krec: {name}"),
            Unit::Bytes,
            stream.unread().unwrap_or(0),
            64 << 20,
        );
        Source {
            progress,
            name,
            stream,
        }
    }

    /// Turns the progress line off, for callers that show their own.
    pub fn without_progress(mut self) -> Source {
        self.progress = Progress::new(String::new(), Unit::Bytes, 0, 1);
        self
    }

    /// Absolute position of the next unread entry.
    pub fn position(&self) -> usize {
        self.stream.position()
    }

    /// Returns the next entry.
    pub fn next_entry(&mut self) -> io::Result<Next<'_>> {
        step(&mut self.stream, &mut self.progress)
    }

    /// [`Self::next_entry`] for a command: an I/O error becomes a [`Failure`] naming the input.
    pub fn next(&mut self) -> Result<Next<'_>, Failure> {
        let name = &self.name;
        step(&mut self.stream, &mut self.progress)
            .map_err(|e| Failure::Io(e, format!("cannot read {name}")))
    }

    /// Bytes from the current position to the end of the input (after an error: how many bytes
    /// were left unread as invalid). Reads the rest of the input to count it.
    pub fn remaining_bytes(&mut self) -> io::Result<u64> {
        self.stream.remaining_bytes()
    }
}

/// The next entry of `stream`, with the progress line brought up to it.
fn step<'a>(stream: &'a mut EntryStream, progress: &mut Progress) -> io::Result<Next<'a>> {
    let next = stream.next_entry()?;
    match &next {
        Next::Entry(b) => progress.update((b.position() + b.size_in_bytes()) as u64),
        Next::End | Next::Partial(_) | Next::Error(_) => progress.finish(),
    }
    Ok(next)
}

impl EntrySource for Source {
    fn next_entry(&mut self) -> io::Result<Next<'_>> {
        Source::next_entry(self)
    }

    fn position(&self) -> usize {
        Source::position(self)
    }

    fn remaining_bytes(&mut self) -> io::Result<u64> {
        Source::remaining_bytes(self)
    }
}

/// Expands PATH arguments: a directory means its `.log` files in offset order (a broker's data
/// directory: those of every partition, by topic and partition; a directory with neither is an
/// error); `-` is stdin; a
/// path that does not exist and contains `*`, `?` or `[` is a glob pattern (for when the shell
/// did not expand it, as on Windows or when quoted), replaced by its matches in sorted order, each
/// of them expanded in turn (so `'data/topic-*'` gives every partition's segments). `*` and `?`
/// do not match `/` or a leading dot. A pattern that matches nothing is an error.
pub fn expand_paths(paths: &[PathBuf]) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        match glob_matches(p)? {
            Some(matches) => {
                for m in matches {
                    push_path(&mut out, m)?;
                }
            }
            None => push_path(&mut out, p.clone())?,
        }
    }
    Ok(out)
}

fn push_path(out: &mut Vec<PathBuf>, p: PathBuf) -> io::Result<()> {
    if !p.is_dir() {
        out.push(p);
        return Ok(());
    }
    let logs = dir_logs(&p)?;
    if !logs.is_empty() {
        out.extend(logs);
        return Ok(());
    }
    // A broker's data directory: every partition's segments, partition by partition.
    let mut found = false;
    for part in krecords_log::data_dir::partition_dirs(&p)? {
        let logs = dir_logs(&part.path)?;
        found |= !logs.is_empty();
        out.extend(logs);
    }
    if found {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!(
            "{}: no .log segments here (neither a partition directory nor a broker's data \
             directory with partitions)",
            p.display()
        ),
    ))
}

/// The `.log` files directly in `dir`, in name (so offset) order.
fn dir_logs(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    Ok(logs)
}

/// The matches of `p` when it is a glob pattern rather than an existing path.
fn glob_matches(p: &Path) -> io::Result<Option<Vec<PathBuf>>> {
    let Some(text) = p.to_str() else {
        return Ok(None);
    };
    if p == Path::new("-") || !text.contains(['*', '?', '[']) || p.exists() {
        return Ok(None);
    }
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let invalid = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
    let paths = glob::glob_with(text, options)
        .map_err(|e| invalid(format!("invalid pattern {text:?}: {e}")))?;
    let mut matches = Vec::new();
    for m in paths {
        matches.push(m.map_err(io::Error::from)?);
    }
    if matches.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no file matches {text:?}"),
        ));
    }
    matches.sort();
    Ok(Some(matches))
}
