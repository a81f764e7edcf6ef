//! The `kafka://` options: client properties (`-X`, `-F`) and, for the commands not yet on the
//! sources layer's readers, a compatibility shim (marked below) over [`krecords_source`].

use crate::outcome::Failure;
use crate::source::{open_sources, reader_first_file, Source};

use krecords_source::{IsolationLevel, ReadOptions, Reader, Sources};
pub use krecords_source::{KafkaUrl, LivePartition};
use std::io::{self, Read};
use std::path::Path;

pub use crate::args::{config_from, ClientArgs, KafkaArgs};

// Compatibility shim for `explain` and `convert` (to be removed when they read through
// `krecords_source::Reader` themselves).

/// The sources of a command that reads one live partition.
pub struct Inputs {
    sources: Sources,
    options: ReadOptions,
}

/// Expands the PATH of a command that reads one live partition: the inputs and that
/// partition, or a usage error naming `command` when `path` is not one
/// `kafka://HOST:PORT/TOPIC/PARTITION`.
pub fn expand_one_partition(
    path: &Path,
    args: &KafkaArgs,
    command: &str,
) -> Result<(Inputs, LivePartition), Failure> {
    let sources = open_sources(&[path.to_path_buf()], &args.client)?;
    let live = match sources.partitions.as_slice() {
        [p] => p.live().cloned(),
        _ => None,
    };
    let Some(live) = live else {
        return Err(Failure::Usage(format!(
            "{}: {command} reads one partition: kafka://HOST:PORT/TOPIC/PARTITION",
            path.display()
        )));
    };
    let options = ReadOptions {
        range: krecords_source::Range {
            start: args.range.start,
            end: args.range.end,
            count: None,
        },
        isolation: args.range.isolation(IsolationLevel::ReadUncommitted),
        ..ReadOptions::default()
    };
    Ok((Inputs { sources, options }, live))
}

impl Inputs {
    fn reader(&self) -> Result<Reader, Failure> {
        Ok(self.sources.read(0, &self.options)?)
    }

    /// The live partition's entries, as a [`Source`].
    pub fn open_live(&self, _: &LivePartition) -> Result<Source, Failure> {
        let mut reader = self.reader()?;
        let name = reader_first_file(&mut reader)?;
        Ok(Source::from_reader(name, reader)?)
    }

    /// The live partition's fetched bytes as a byte stream: its entries from `--start` to
    /// `--end`, then what follows a corrupt or truncated entry.
    pub fn open_raw(&self, _: &LivePartition) -> Result<impl Read, Failure> {
        let mut reader = self.reader()?;
        reader_first_file(&mut reader)?;
        Ok(RawRead {
            reader,
            buf: Vec::new(),
            pos: 0,
            end: false,
        })
    }
}

/// The bytes of a reader's entries (copied: explain reads a few entries).
struct RawRead {
    reader: Reader,
    buf: Vec<u8>,
    pos: usize,
    end: bool,
}

impl Read for RawRead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos >= self.buf.len() && !self.end {
            self.buf.clear();
            self.pos = 0;
            match self.reader.next_entry()? {
                krecords_codec::read::Step::Entry(b) => self.buf.extend_from_slice(b.as_bytes()),
                krecords_codec::read::Step::End => self.end = true,
                krecords_codec::read::Step::Error(_) | krecords_codec::read::Step::Partial(_) => {
                    self.end = true;
                    self.buf.extend_from_slice(self.reader.unread_bytes());
                }
            }
        }
        let rest = &self.buf[self.pos.min(self.buf.len())..];
        let n = rest.len().min(out.len());
        out[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}
