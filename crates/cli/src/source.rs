//! The sources layer ([`krecords_source`]) as the commands use it: partitions opened with the
//! shared position and isolation options, and a progress line drawn from what a reader
//! reports.

use crate::args::{CountArgs, RangeArgs, ReadArgs};
use crate::kafka::ClientArgs;
use crate::outcome::Failure;
use crate::progress::{Progress, Unit};
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

/// Lists the partitions of PATH arguments (files, directories, roots, globs, `-`, kafka://,
/// remote tier locations).
pub fn open_sources(paths: &[PathBuf], client: &ClientArgs) -> Result<Sources, Failure> {
    let to_source = |f: Failure| match f {
        Failure::Io(e, what) => krecords_source::Error::io(what, e),
        Failure::Usage(m) | Failure::Data(m) => krecords_source::Error::Usage(m),
    };
    Ok(Sources::open_with(
        paths,
        &mut || client.config().map_err(to_source),
        &mut || client.remote_options().map_err(to_source),
    )?)
}

/// Whether PATH names a partition read through the sources layer only: a `kafka://` URL or a
/// remote tier location (`s3://`, `gs://`, `az://`, `file://`).
pub fn is_url_source(path: &Path) -> bool {
    matches!(
        krecords_source::SourceSpec::parse(path),
        Ok(krecords_source::SourceSpec::Kafka(_) | krecords_source::SourceSpec::Remote(_))
    )
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

/// The partitions of a read of several, opened one after another with [`open_reader`]: a
/// position outside one of them (past its end, before its start) leaves that partition out
/// with a note on stderr, as each partition answers for the range it holds (`sql` does the
/// same), where it stopped the whole read before; only when every partition is left out does
/// the read fail, as a read of one partition does. Likewise a partition whose data cannot be
/// read (corrupt, damaged before the range's end) is said on stderr and the others are read:
/// the read then exits 1 ([`EachPartition::carry_on`]).
pub struct EachPartition<'a> {
    sources: &'a Sources,
    options: &'a ReadOptions,
    left_out: usize,
    last: Option<String>,
    /// Partitions whose data could not be read ([`EachPartition::carry_on`]).
    damaged: u64,
}

impl<'a> EachPartition<'a> {
    /// Reads the partitions of `sources` as `options` say.
    pub fn new(sources: &'a Sources, options: &'a ReadOptions) -> Self {
        EachPartition {
            sources,
            options,
            left_out: 0,
            last: None,
            damaged: 0,
        }
    }

    /// Opens partition `index`; `None` when the positions are outside it and other
    /// partitions are read.
    pub fn open(&mut self, index: usize) -> Result<Option<Reader>, Failure> {
        match self.sources.read(index, self.options) {
            Err(krecords_source::Error::OutOfRange(m)) if self.sources.partitions.len() > 1 => {
                eprintln!("krec: {m}; nothing of it is in the range");
                self.left_out += 1;
                self.last = Some(m);
                Ok(None)
            }
            Err(e)
                if e.class() == krecords_source::ErrorClass::Data
                    && self.sources.partitions.len() > 1 =>
            {
                self.carry_on(Err(e.into())).map(|_| None)
            }
            r => {
                let mut reader = r?;
                with_progress(&mut reader);
                Ok(Some(reader))
            }
        }
    }

    /// The result of reading one partition (whether it showed a problem): a data error of
    /// one partition of several is said on stderr and is a problem, so that the read goes on
    /// with the other partitions; any other error ends the read.
    pub fn carry_on(&mut self, r: Result<bool, Failure>) -> Result<bool, Failure> {
        match r {
            Err(f)
                if f.class() == krecords_source::ErrorClass::Data
                    && self.sources.partitions.len() > 1 =>
            {
                eprintln!("krec: {f}\nkrec: the other partitions are read");
                self.damaged += 1;
                Ok(true)
            }
            r => r,
        }
    }

    /// Fails when every partition was left out; else how many partitions' data could not be
    /// read (a data problem: exit 1).
    pub fn finish(self) -> Result<u64, Failure> {
        match self.last {
            Some(m) if self.left_out == self.sources.partitions.len() => Err(Failure::Usage(
                format!("no partition holds the positions asked for (the last: {m})"),
            )),
            _ => Ok(self.damaged),
        }
    }
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
        counted: None,
        as_log: false,
    }
}

/// Opens a file, or stdin for `-`, with a progress line: its name and a reader of its
/// entries (what `verify` and `convert` read a file with).
pub fn open_file(path: &Path) -> io::Result<(String, Reader)> {
    let sources = Sources::open(&[path.to_path_buf()], &mut || {
        Err(krecords_source::Error::Usage("not a file".into()))
    })
    .map_err(to_io)?;
    let mut reader = sources.read(0, &ReadOptions::default()).map_err(to_io)?;
    with_progress(&mut reader);
    let name = first_file(&mut reader).map_err(to_io)?;
    Ok((name, reader))
}

/// The one partition of PATH (a file, `-`, a partition directory or
/// `kafka://HOST:PORT/TOPIC/PARTITION`), opened with a progress line at `options`: its name and
/// a reader of its entries; a usage error naming `command` when PATH has several partitions.
/// Positions and isolation are `read`'s (default: read-uncommitted).
pub fn open_one_partition(
    path: &Path,
    read: &ReadArgs,
    command: &str,
) -> Result<(String, Reader), Failure> {
    let options = read_options(
        &read.kafka.range,
        CountArgs::default(),
        IsolationLevel::ReadUncommitted,
        read.max_decompressed_bytes(),
        None,
    );
    let sources = open_sources(&[path.to_path_buf()], &read.kafka.client)?;
    if sources.partitions.len() != 1 {
        return Err(Failure::Usage(format!(
            "{}: {command} reads one partition: a file, a partition directory or \
             kafka://HOST:PORT/TOPIC/PARTITION",
            path.display()
        )));
    }
    let mut reader = open_reader(&sources, 0, &options)?;
    let name = first_file(&mut reader)?;
    Ok((name, reader))
}

/// Opens `reader`'s first file and returns its name.
fn first_file(reader: &mut Reader) -> Result<String, krecords_source::Error> {
    Ok(match reader.next_file()? {
        Some(f) => f.name,
        None => reader.name().to_owned(),
    })
}

/// A sources error as an I/O error (its own when it is one).
fn to_io(e: krecords_source::Error) -> io::Error {
    match e {
        krecords_source::Error::Io { source, .. } => source,
        e => io::Error::other(e),
    }
}
