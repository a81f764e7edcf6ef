//! Reading the partitions of a source one after another, as every command that reads several
//! does: a position outside one of them (past its end, before its start) leaves that
//! partition out with a note, as each partition answers for the range it holds; only when
//! every partition is left out does the read fail, as a read of one partition does. Likewise
//! a partition whose data cannot be read (corrupt, damaged before the range's end) is a note
//! and a problem, and the other partitions are read.

use crate::{Error, ErrorClass, ReadOptions, Reader, Sources};

/// The partitions of `sources` read one after another with one set of options: a partition a
/// position is outside of is left out with a note, and only when every one is left out does
/// the read fail; a partition whose data cannot be read is a note and a problem, and the
/// others are read. The notes go to the callback given to [`EachPartition::new`].
///
/// ```
/// use krecords_source::codec::write::{NewRecord, V2Builder};
/// use krecords_source::log::{AppendOrigin, Log, LogConfig};
/// use krecords_source::{EachPartition, Position, Range, ReadOptions, Sources};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let root = tempfile::tempdir()?;
/// for (partition, records) in [(0, 1), (1, 5)] {
///     let mut log = Log::create(root.path().join(format!("t-{partition}")), LogConfig::default())?;
///     let mut b = V2Builder::new(0);
///     for _ in 0..records {
///         b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"v")))?;
///     }
///     log.append(&b.finish()?, AppendOrigin::Client)?;
///     log.close()?;
/// }
/// let sources = Sources::open(&[root.path().to_path_buf()], &mut || unreachable!())?;
/// let options = ReadOptions {
///     range: Range { start: Some(Position::Offset(3)), ..Range::default() },
///     ..ReadOptions::default()
/// };
/// let mut notes = Vec::new();
/// let mut each = EachPartition::new(&sources, &options, |n| notes.push(n.to_owned()));
/// // Partition 0 holds [0, 1): left out; partition 1 is read from offset 3.
/// assert!(each.open(0)?.is_none());
/// assert_eq!(each.open(1)?.map(|r| r.range().start), Some(3));
/// assert_eq!(each.finish()?, 0);
/// assert!(notes[0].ends_with("nothing of it is in the range"));
/// # Ok(())
/// # }
/// ```
pub struct EachPartition<'a> {
    sources: &'a Sources,
    options: &'a ReadOptions,
    note: Box<dyn FnMut(&str) + 'a>,
    outside: LeftOut,
    damaged: u64,
}

/// The rule for positions outside some of the partitions a read asks for, on its own for a
/// reader that opens partitions its own way (the Arrow layer's scans): of several
/// partitions, one that a position is outside of ([`Error::OutOfRange`]) is left out with a
/// note; when every partition asked for is left out, the read fails with a usage error.
/// [`EachPartition`] applies it.
#[derive(Debug, Clone)]
pub struct LeftOut {
    several: bool,
    asked: usize,
    left_out: usize,
    last: Option<String>,
}

impl LeftOut {
    /// The rule for a read of `asked` partitions of `sources` (several when `sources` holds
    /// more than one, however many are asked for).
    pub fn new(sources: &Sources, asked: usize) -> LeftOut {
        LeftOut {
            several: sources.partitions.len() > 1,
            asked,
            left_out: 0,
            last: None,
        }
    }

    /// Whether the read is of several partitions (the rules of [`EachPartition`] apply only
    /// then).
    pub fn several(&self) -> bool {
        self.several
    }

    /// What becomes of a partition whose opening failed with `error`: `Ok(note)` when the
    /// partition is left out (`note` is the line a user should see), the error back when it
    /// is the read's.
    ///
    /// # Errors
    ///
    /// `error` itself, when it does not leave the partition out.
    pub fn leave_out(&mut self, error: Error) -> Result<String, Error> {
        match error {
            Error::OutOfRange(m) if self.several => {
                let note = format!("{m}; nothing of it is in the range");
                self.left_out = self.left_out.saturating_add(1);
                self.last = Some(m);
                Ok(note)
            }
            e => Err(e),
        }
    }

    /// The end of the read.
    ///
    /// # Errors
    ///
    /// A usage error when every partition asked for was left out, naming the last.
    pub fn finish(&self) -> Result<(), Error> {
        match &self.last {
            Some(m) if self.left_out == self.asked => Err(Error::Usage(format!(
                "no partition holds the positions asked for (the last: {m})"
            ))),
            _ => Ok(()),
        }
    }
}

impl std::fmt::Debug for EachPartition<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EachPartition")
            .field("outside", &self.outside)
            .field("damaged", &self.damaged)
            .finish_non_exhaustive()
    }
}

impl<'a> EachPartition<'a> {
    /// Reads the partitions of `sources` as `options` say; `note` is given each line a user
    /// should see (a partition left out, a partition whose data could not be read).
    pub fn new(
        sources: &'a Sources,
        options: &'a ReadOptions,
        note: impl FnMut(&str) + 'a,
    ) -> Self {
        EachPartition {
            sources,
            options,
            note: Box::new(note),
            outside: LeftOut::new(sources, sources.partitions.len()),
            damaged: 0,
        }
    }

    /// Opens partition `index` ([`Sources::read`]); `None` when it is left out: the
    /// positions are outside it, or its data cannot be read, and other partitions are read.
    ///
    /// # Errors
    ///
    /// As [`Sources::read`], for a read of one partition or an error that is not the data's.
    pub fn open(&mut self, index: usize) -> Result<Option<Reader>, Error> {
        let error = match self.sources.read(index, self.options) {
            Ok(r) => return Ok(Some(r)),
            Err(e) => e,
        };
        match self.outside.leave_out(error) {
            Ok(note) => (self.note)(&note),
            Err(e) if e.class() == ErrorClass::Data && self.outside.several() => {
                self.damaged_partition(&e.to_string());
            }
            Err(e) => return Err(e),
        }
        Ok(None)
    }

    /// Whether the read goes on after a partition's read failed with an error of `class`
    /// (said by `message`): a data error of one partition of several is a note and a problem
    /// ([`EachPartition::finish`] counts it), and the other partitions are read; any other
    /// error ends the read.
    pub fn goes_on(&mut self, class: ErrorClass, message: &str) -> bool {
        let on = class == ErrorClass::Data && self.outside.several();
        if on {
            self.damaged_partition(message);
        }
        on
    }

    fn damaged_partition(&mut self, message: &str) {
        (self.note)(&format!("{message}\nthe other partitions are read"));
        self.damaged = self.damaged.saturating_add(1);
    }

    /// How many partitions' data could not be read (a data problem: exit 1).
    ///
    /// # Errors
    ///
    /// A usage error when every partition was left out for being outside the positions.
    pub fn finish(self) -> Result<u64, Error> {
        self.outside.finish()?;
        Ok(self.damaged)
    }
}
