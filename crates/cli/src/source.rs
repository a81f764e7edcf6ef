//! The sources layer ([`krecords_source`]) as the commands use it: partitions opened with the
//! shared position and isolation options, and a progress line drawn from what a reader
//! reports.

use crate::args::{ClientArgs, CountArgs, RangeArgs};
use crate::outcome::Failure;
use crate::progress::{Progress, Unit};
use krecords_log::check::EntrySource;
pub use krecords_log::check::Next;
use krecords_source::{IsolationLevel, ReadOptions, Reader, Sources};
use std::io;
use std::path::{Path, PathBuf};

impl From<krecords_source::Error> for Failure {
    fn from(e: krecords_source::Error) -> Self {
        use krecords_source::{Error as E, ErrorClass};
        match e {
            E::Io { what, source } => Failure::Io(source, what),
            e => match e.class() {
                ErrorClass::Data => Failure::Data(e.to_string()),
                ErrorClass::Usage | ErrorClass::Io => Failure::Usage(e.to_string()),
            },
        }
    }
}

/// Lists the partitions of PATH arguments (files, directories, roots, globs, `-`, kafka://).
pub fn open_sources(paths: &[PathBuf], client: &ClientArgs) -> Result<Sources, Failure> {
    Ok(Sources::open(paths, &mut || {
        crate::args::config_from(&client.config_file, &client.property).map_err(|f| match f {
            Failure::Io(e, what) => krecords_source::Error::io(what, e),
            Failure::Usage(m) | Failure::Data(m) => krecords_source::Error::Usage(m),
        })
    })?)
}

/// Opens partition `index` with a progress line on the terminal.
pub fn open_reader(
    sources: &Sources,
    index: usize,
    options: &ReadOptions,
) -> Result<Reader, Failure> {
    let mut reader = sources.read(index, options)?;
    with_progress(&mut reader);
    Ok(reader)
}

/// Draws `reader`'s progress: bytes of a large file, or a live partition's offsets.
pub fn with_progress(reader: &mut Reader) {
    let mut line: Option<Progress> = None;
    reader.set_progress(Box::new(move |p| match p {
        krecords_source::Progress::Start { name, bytes, live } => {
            let label = format!("krec: {name}");
            line = Some(if live {
                Progress::live(label)
            } else {
                Progress::new(label, Unit::Bytes, bytes.unwrap_or(0), 64 << 20)
            });
        }
        krecords_source::Progress::Bytes(n) => {
            if let Some(l) = line.as_mut() {
                l.update(n);
            }
        }
        krecords_source::Progress::Live {
            next_offset,
            end,
            fetched,
        } => {
            if let Some(l) = line.as_mut() {
                l.update_live(next_offset, end, fetched);
            }
        }
        krecords_source::Progress::Done => {
            if let Some(l) = line.as_mut() {
                l.finish();
            }
        }
    }));
}

/// The options of a read: `--start/--end/--count/--isolation` (isolation `default` when not
/// given) and the bounds of the command.
pub fn read_options(
    range: &RangeArgs,
    count: CountArgs,
    default: IsolationLevel,
    max_decompressed_bytes: usize,
    max_bytes: Option<u64>,
) -> ReadOptions {
    ReadOptions {
        range: range.with_count(count),
        isolation: range.isolation(default),
        max_bytes,
        max_decompressed_bytes,
    }
}

/// One file of entries (or standard input) read whole, with a progress line: what
/// `convert` reads. (A compatibility shim over [`Reader`] until convert reads partitions.)
pub struct Source {
    /// Display name (a path or `-`).
    pub name: String,
    reader: Reader,
}

impl Source {
    /// Opens a file, or stdin for `-`.
    pub fn open(path: &Path) -> io::Result<Source> {
        let sources = Sources::open(&[path.to_path_buf()], &mut || {
            Err(krecords_source::Error::Usage("not a file".into()))
        })
        .map_err(to_io)?;
        let mut reader = sources.read(0, &ReadOptions::default()).map_err(to_io)?;
        Source::from_reader(reader_first_file(&mut reader)?, reader)
    }

    /// A source over a reader whose first file is open.
    pub fn from_reader(name: String, reader: Reader) -> io::Result<Source> {
        Ok(Source { name, reader })
    }
}

/// Opens `reader`'s first file (with a progress line) and returns its name.
pub fn reader_first_file(reader: &mut Reader) -> io::Result<String> {
    with_progress(reader);
    match reader.next_file().map_err(to_io)? {
        Some(f) => Ok(f.name),
        None => Ok(reader.name().to_owned()),
    }
}

/// A sources error as an I/O error (its own when it is one).
fn to_io(e: krecords_source::Error) -> io::Error {
    match e {
        krecords_source::Error::Io { source, .. } => source,
        e => io::Error::other(e),
    }
}

impl EntrySource for Source {
    fn next_entry(&mut self) -> io::Result<Next<'_>> {
        self.reader.next_entry()
    }

    fn position(&self) -> usize {
        self.reader.position()
    }

    fn remaining_bytes(&mut self) -> io::Result<u64> {
        self.reader.remaining_bytes()
    }
}
