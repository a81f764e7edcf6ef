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
/// remote tier locations), each once: a partition named more than once is said on stderr
/// ([`Sources::notes`]).
pub fn open_sources(paths: &[PathBuf], client: &ClientArgs) -> Result<Sources, Failure> {
    let sources = open_sources_quietly(paths, client)?;
    for n in sources.notes() {
        eprintln!("krec: {n}");
    }
    Ok(sources)
}

/// [`open_sources`] without saying its notes (a source opened again, each pass of a
/// `--follow`, said them the first time).
pub fn open_sources_quietly(paths: &[PathBuf], client: &ClientArgs) -> Result<Sources, Failure> {
    Ok(Sources::open_with(
        paths,
        &mut || Ok(client.config()?),
        &mut || Ok(client.remote_options()?),
    )?)
}

/// A failure of the command line's own (options that do not parse) as the sources layer's
/// error, for the callbacks that give it a client's or a remote tier's options.
impl From<Failure> for krecords_source::Error {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Io(e, what) => krecords_source::Error::io(what, e),
            Failure::Usage(m) | Failure::Data(m) => krecords_source::Error::Usage(m),
        }
    }
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

/// The partitions of a read of several ([`krecords_source::EachPartition`]: a partition a
/// position is outside of is left out, one whose data cannot be read is a problem and the
/// others are read), with its notes on stderr and a progress line for each.
pub struct EachPartition<'a>(krecords_source::EachPartition<'a>);

impl<'a> EachPartition<'a> {
    /// Reads the partitions of `sources` as `options` say.
    pub fn new(sources: &'a Sources, options: &'a ReadOptions) -> Self {
        let note = |n: &str| eprintln!("krec: {}", n.replace('\n', "\nkrec: "));
        EachPartition(krecords_source::EachPartition::new(sources, options, note))
    }

    /// Opens partition `index`; `None` when it is left out.
    pub fn open(&mut self, index: usize) -> Result<Option<Reader>, Failure> {
        let mut reader = self.0.open(index)?;
        if let Some(r) = reader.as_mut() {
            with_progress(r);
        }
        Ok(reader)
    }

    /// The result of reading one partition (whether it showed a problem), a data error of one
    /// partition of several being a problem the read goes on after.
    pub fn carry_on(&mut self, r: Result<bool, Failure>) -> Result<bool, Failure> {
        match r {
            Err(f) if self.0.goes_on(f.class(), &f.to_string()) => Ok(true),
            r => r,
        }
    }

    /// How many partitions' data could not be read; an error when every one was left out.
    pub fn finish(self) -> Result<u64, Failure> {
        Ok(self.0.finish()?)
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
