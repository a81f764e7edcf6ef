//! A tolerant field walker: what every byte of an entry means, for damaged input and input that
//! is not Kafka data at all (the library side of `krec explain`).
//!
//! The walk is deliberately independent of the validating readers in [`read`](crate::read): it
//! describes a corrupt entry field by field up to the first byte that makes no sense and says
//! what is wrong there, rather than refusing it. The entry boundaries come from the codec's
//! framing ([`EntryPrefix`], [`Entries`]), the field positions from [`layout`](crate::layout).
//!
//! The description is a sequence of [`Item`]s handed to a callback as they are found (so a
//! decompressed batch's fields can borrow from the decompressed bytes, and nothing is
//! collected): a [`Kind::Entry`] heading per entry, then one [`Field`] per field with its
//! position ([`Loc`]), its bytes, its decoded [`Value`] and a note, [`Item::Error`] for what
//! makes no sense, and headings for the records section, a v0/v1 wrapper's inner messages and
//! the place a truncated entry is cut. Every position and byte range lies inside the input (or
//! for [`Loc::decompressed`] fields, inside the decompressed bytes of the entry).
//!
//! How bytes are classified follows `krec verify`: an entry whose magic no format has is not
//! Kafka data, and the walk ends there with an error; an entry the input ends inside is a
//! truncated tail, explained as far as it goes and then reported as an error; a CRC mismatch
//! or a broken structure inside an entry with a sound size is an error, and the walk goes on
//! with the next entry.
//!
//! # Examples
//!
//! ```
//! use krecords_codec::explain::{Explainer, Item, Value};
//! use krecords_codec::write::{NewRecord, V2Builder};
//!
//! let mut b = V2Builder::new(0);
//! b.append(&NewRecord::new(1714000000000, None, Some(b"hello"))).unwrap();
//! let bytes = b.finish().unwrap();
//!
//! let mut fields = Vec::new();
//! let summary = Explainer::new(1 << 20)
//!     .explain_bytes(&bytes, &mut |item: &Item<'_>| {
//!         if let Item::Field(f) = item {
//!             fields.push((f.at.pos, f.name.clone(), f.value.clone()));
//!         }
//!         Ok(())
//!     })
//!     .unwrap();
//! assert_eq!(summary.problems, 0);
//! assert_eq!(fields[0], (0, "base offset".to_string(), Value::Int(0)));
//! assert!(fields.iter().any(|f| f.1 == "record 0 value" && f.2 == Value::Content));
//! ```

#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

pub mod show;

use crate::control::{ControlRecordKey, ControlRecordType};
use crate::layout::{legacy as l, v2, LOG_OVERHEAD, MAGIC_OFFSET, MIN_ENTRY_SIZE};
use crate::read::{Entries, EntryPrefix};
use crate::varint::{read_varint, read_varlong};
use crate::{Compression, Error};
use std::io::{self, Read, Seek, SeekFrom};

/// Of a truncated tail, at most this many bytes are read and explained.
pub const PARTIAL_READ_CAP: u64 = 1 << 20;

/// Where a field is: a byte position in the input, or in an entry's decompressed bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    /// The position.
    pub pos: usize,
    /// Whether `pos` counts in the decompressed bytes of the entry (its records, or a v0/v1
    /// wrapper's inner messages) rather than in the input.
    pub decompressed: bool,
}

impl Loc {
    /// A position in the input.
    pub fn file(pos: usize) -> Self {
        Loc {
            pos,
            decompressed: false,
        }
    }

    /// `pos`, or `d+pos` in the decompressed bytes.
    pub fn label(self) -> String {
        if self.decompressed {
            format!("d+{}", self.pos)
        } else {
            self.pos.to_string()
        }
    }
}

/// What a heading introduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An entry starts.
    Entry,
    /// A v2 batch's records section (or its decompressed records).
    Records,
    /// A v0/v1 wrapper's decompressed inner messages.
    InnerMessages,
    /// A truncated entry is cut here.
    Cut,
}

impl Kind {
    /// The name: `entry`, `records`, `inner messages`, `partial`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Entry => "entry",
            Kind::Records => "records",
            Kind::InnerMessages => "inner messages",
            Kind::Cut => "partial",
        }
    }
}

/// The decoded value of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A number.
    Int(i64),
    /// A value in words (attributes in hex, a section's description).
    Text(String),
    /// The field's bytes are its value: a key, a value, a header, a cut tail.
    Content,
}

macro_rules! int_values {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
            }
        }
    )*};
}
int_values!(i8, i16, i32, i64, u32, usize);

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}

/// One field of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    /// Where it is.
    pub at: Loc,
    /// Its bytes.
    pub bytes: &'a [u8],
    /// Its name, with the record, header or inner message it belongs to (`record 0 key`).
    pub name: String,
    /// What it holds.
    pub value: Value,
    /// What it means (widths, absolute offsets and timestamps from deltas, what a CRC covers
    /// and whether it is valid, attribute bits).
    pub note: Option<String>,
    /// Whether the field is wrong (a CRC that does not match).
    pub problem: bool,
}

impl<'a> Field<'a> {
    fn new(at: Loc, bytes: &'a [u8], name: impl Into<String>, value: impl Into<Value>) -> Self {
        Field {
            at,
            bytes,
            name: name.into(),
            value: value.into(),
            note: None,
            problem: false,
        }
    }

    /// Bytes that are their own value, noted with their count.
    fn content(at: Loc, bytes: &'a [u8], name: String) -> Self {
        let note = plural(bytes.len(), "byte");
        Field::new(at, bytes, name, Value::Content).note(note)
    }

    fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// One piece of the description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item<'a> {
    /// A heading: an entry, a records section, inner messages, the place an entry is cut.
    Heading {
        /// Where.
        at: Loc,
        /// Bytes it covers.
        length: usize,
        /// What it introduces.
        kind: Kind,
        /// Its text.
        text: String,
    },
    /// A field.
    Field(Field<'a>),
    /// What makes no sense at `at`.
    Error {
        /// Where.
        at: Loc,
        /// What is wrong.
        message: String,
    },
}

/// What a walk did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Entries explained (complete or not).
    pub entries: u64,
    /// Problems found: [`Item::Error`]s and fields with [`Field::problem`].
    pub problems: u64,
    /// The input held no bytes at all: nothing was explained, and nothing is wrong (an empty
    /// file is an empty log, not damaged data; `krec explain` says "empty input: no entries").
    pub empty_input: bool,
}

/// Why a walk over a reader stopped early.
#[derive(Debug)]
pub enum WalkError {
    /// Reading the input failed.
    Read(io::Error),
    /// The callback failed (writing the output).
    Sink(io::Error),
    /// The position to start from is not where an entry starts ([`entry_boundary`]).
    Position(NotABoundary),
}

/// Why a walk cannot start at a byte position of its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotABoundary {
    /// The position is at or past the end of the input, which holds `len` bytes.
    PastEnd {
        /// The position asked for.
        position: u64,
        /// The input's length.
        len: u64,
    },
    /// The position is inside a truncated tail that starts at byte `at`.
    InTail {
        /// The position asked for.
        position: u64,
        /// Where the tail starts.
        at: u64,
    },
    /// The entry at byte `at`, before the position, has an invalid size field.
    InvalidSize {
        /// The position asked for.
        position: u64,
        /// Where that entry starts.
        at: u64,
        /// Its size field.
        size: i32,
    },
    /// The position is inside the entry at byte `at`; the next one starts at `next`.
    InsideEntry {
        /// The position asked for.
        position: u64,
        /// Where that entry starts.
        at: u64,
        /// Where the next entry starts.
        next: u64,
    },
}

impl std::fmt::Display for NotABoundary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            NotABoundary::PastEnd { position, len } => write!(
                f,
                "position {position} is at or past the end of the input ({len} bytes)"
            ),
            NotABoundary::InTail { position, at } => write!(
                f,
                "position {position} is not an entry boundary: a truncated tail starts at byte {at}"
            ),
            NotABoundary::InvalidSize { position, at, size } => write!(
                f,
                "cannot walk to position {position}: the entry at byte {at} has an invalid size \
                 {size}; explain it with --position {at}"
            ),
            NotABoundary::InsideEntry { position, at, next } => write!(
                f,
                "position {position} is not an entry boundary: it is inside the entry at byte \
                 {at} ({} bytes; the next entry starts at byte {next})",
                next.saturating_sub(at)
            ),
        }
    }
}

/// Checks that `position` is where an entry of `input` (`len` bytes) starts, walking the entry
/// prefixes from byte 0 (each entry's offset and size, nothing else is read). Position 0 always
/// is.
///
/// # Errors
///
/// [`WalkError::Position`] when it is not; [`WalkError::Read`] when reading fails.
pub fn entry_boundary<R: Read + Seek + ?Sized>(
    input: &mut R,
    len: u64,
    position: u64,
) -> Result<(), WalkError> {
    let fail = |e: NotABoundary| Err(WalkError::Position(e));
    if position > 0 && position >= len {
        return fail(NotABoundary::PastEnd { position, len });
    }
    let mut at = 0u64;
    let mut prefix = [0u8; LOG_OVERHEAD];
    while at < position {
        if len.saturating_sub(at) < LOG_OVERHEAD as u64 {
            return fail(NotABoundary::InTail { position, at });
        }
        input
            .seek(SeekFrom::Start(at))
            .and_then(|_| input.read_exact(&mut prefix))
            .map_err(WalkError::Read)?;
        let p = EntryPrefix::parse(&prefix);
        let Some(entry_len) = p.and_then(|p| p.entry_len()) else {
            let size = p.map_or(0, |p| p.size);
            return fail(NotABoundary::InvalidSize { position, at, size });
        };
        let next = at.saturating_add(entry_len);
        if next > position {
            return fail(NotABoundary::InsideEntry { position, at, next });
        }
        at = next;
    }
    Ok(())
}

/// The callback that receives the description.
pub type Sink<'s> = dyn FnMut(&Item<'_>) -> io::Result<()> + 's;

/// Walks entries and describes their fields (see the [module](self) docs).
#[derive(Debug)]
pub struct Explainer {
    limit: usize,
    time: fn(i64) -> String,
    scratch: Vec<u8>,
}

impl Explainer {
    /// A walker that decompresses at most `decompress_limit` bytes per entry.
    pub fn new(decompress_limit: usize) -> Self {
        Explainer {
            limit: decompress_limit,
            time: |ms| format!("{ms} ms since the epoch"),
            scratch: Vec::new(),
        }
    }

    /// How notes show a timestamp in range (default: milliseconds since the epoch); `krec`
    /// passes its ISO 8601 formatter.
    pub fn time_format(mut self, f: fn(i64) -> String) -> Self {
        self.time = f;
        self
    }

    /// Explains every entry of `bytes` (positions count from its first byte).
    ///
    /// # Errors
    ///
    /// The callback's errors.
    pub fn explain_bytes(&mut self, bytes: &[u8], sink: &mut Sink<'_>) -> io::Result<Summary> {
        let len = bytes.len() as u64;
        self.explain_reader(&mut io::Cursor::new(bytes), len, 0, u64::MAX, sink)
            .map_err(|e| match e {
                WalkError::Read(e) | WalkError::Sink(e) => e,
                WalkError::Position(p) => {
                    io::Error::new(io::ErrorKind::InvalidInput, p.to_string())
                }
            })
    }

    /// Explains up to `count` entries of `bytes` from `position` on, which must be an entry
    /// boundary ([`entry_boundary`]); positions count from the first byte of `bytes`.
    ///
    /// # Errors
    ///
    /// [`WalkError::Position`] when `position` is not an entry boundary; the callback's errors.
    pub fn explain_slice(
        &mut self,
        bytes: &[u8],
        position: u64,
        count: u64,
        sink: &mut Sink<'_>,
    ) -> Result<Summary, WalkError> {
        let (input, len) = (&mut io::Cursor::new(bytes), bytes.len() as u64);
        entry_boundary(input, len, position)?;
        self.explain_reader(input, len, position, count, sink)
    }

    /// Explains up to `count` entries of `input`, which holds `len` bytes, from `position` on
    /// (which should be an entry boundary). An entry is read whole when the input holds it; of
    /// a truncated tail at most [`PARTIAL_READ_CAP`] bytes are read.
    ///
    /// # Errors
    ///
    /// Reading the input or the callback failed.
    pub fn explain_reader<R: Read + Seek + ?Sized>(
        &mut self,
        input: &mut R,
        len: u64,
        position: u64,
        count: u64,
        sink: &mut Sink<'_>,
    ) -> Result<Summary, WalkError> {
        let mut walk = Walk {
            sink,
            limit: self.limit,
            time: self.time,
            scratch: std::mem::take(&mut self.scratch),
            problems: 0,
        };
        let mut pos = position;
        let mut entries = 0u64;
        let mut buf = Vec::new();
        let result = loop {
            if pos >= len || entries >= count {
                break Ok(());
            }
            let avail = len.saturating_sub(pos);
            let prefix_len = avail.min(LOG_OVERHEAD as u64);
            if let Err(e) = read_at(input, pos, prefix_len, &mut buf) {
                break Err(WalkError::Read(e));
            }
            let declared = EntryPrefix::parse(&buf).and_then(|p| p.entry_len());
            let present = match declared {
                Some(total) if total <= avail => total,
                Some(_) => avail.min(PARTIAL_READ_CAP),
                None => prefix_len,
            };
            if let Err(e) = read_at(input, pos, present, &mut buf) {
                break Err(WalkError::Read(e));
            }
            let at = usize::try_from(pos).unwrap_or(usize::MAX);
            let stop = match walk.entry(&buf, at, declared, avail) {
                Ok(stop) => stop,
                Err(Halt::Io(e)) => break Err(WalkError::Sink(e)),
                // `entry` reports problems in the data as items.
                Err(Halt::Data(..)) => true,
            };
            entries += 1;
            match (stop, declared) {
                (false, Some(total)) => pos = pos.saturating_add(total),
                _ => break Ok(()),
            }
        };
        self.scratch = walk.scratch;
        result.map(|()| Summary {
            entries,
            problems: walk.problems,
            empty_input: len == 0,
        })
    }
}

/// Reads `n` bytes at `pos` into `buf`; `n` is at most what the input holds from `pos`.
fn read_at<R: Read + Seek + ?Sized>(
    input: &mut R,
    pos: u64,
    n: u64,
    buf: &mut Vec<u8>,
) -> io::Result<()> {
    input.seek(SeekFrom::Start(pos))?;
    buf.clear();
    input.take(n).read_to_end(buf)?;
    if (buf.len() as u64) < n {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

/// Why explaining an entry stopped early.
enum Halt {
    /// The callback failed.
    Io(io::Error),
    /// The data makes no sense at this location.
    Data(Loc, String),
}

impl From<io::Error> for Halt {
    fn from(e: io::Error) -> Self {
        Halt::Io(e)
    }
}

/// A varint reader: the value and its width.
type ReadVar<T> = fn(&[u8], usize) -> crate::Result<(T, usize)>;

/// One walk: the callback, the decompression buffer and the problems counted.
struct Walk<'s, 'f> {
    sink: &'s mut Sink<'f>,
    limit: usize,
    time: fn(i64) -> String,
    scratch: Vec<u8>,
    problems: u64,
}

/// A cursor over the bytes of one structure, reporting absolute locations.
struct Cur<'a> {
    data: &'a [u8],
    p: usize,
    /// Location of `data[0]`.
    base: Loc,
}

impl<'a> Cur<'a> {
    fn new(data: &'a [u8], base: Loc) -> Self {
        Cur { data, p: 0, base }
    }

    fn loc(&self) -> Loc {
        Loc {
            pos: self.base.pos.saturating_add(self.p),
            decompressed: self.base.decompressed,
        }
    }

    fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.p)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<(Loc, &'a [u8]), Halt> {
        let loc = self.loc();
        match self.data.get(self.p..self.p.saturating_add(n)) {
            Some(b) => {
                self.p = self.p.saturating_add(n);
                Ok((loc, b))
            }
            None => Err(Halt::Data(
                loc,
                crate::error::shortfall(what, n, self.remaining()),
            )),
        }
    }

    /// The next `N` bytes as an array.
    fn array<const N: usize>(&mut self, what: &str) -> Result<(Loc, &'a [u8], [u8; N]), Halt> {
        let (loc, b) = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok((loc, b, a))
    }

    fn i8(&mut self, what: &str) -> Result<(Loc, &'a [u8], i8), Halt> {
        let (loc, b, a) = self.array(what)?;
        Ok((loc, b, i8::from_be_bytes(a)))
    }

    fn i16(&mut self, what: &str) -> Result<(Loc, &'a [u8], i16), Halt> {
        let (loc, b, a) = self.array(what)?;
        Ok((loc, b, i16::from_be_bytes(a)))
    }

    fn i32(&mut self, what: &str) -> Result<(Loc, &'a [u8], i32), Halt> {
        let (loc, b, a) = self.array(what)?;
        Ok((loc, b, i32::from_be_bytes(a)))
    }

    fn u32(&mut self, what: &str) -> Result<(Loc, &'a [u8], u32), Halt> {
        let (loc, b, a) = self.array(what)?;
        Ok((loc, b, u32::from_be_bytes(a)))
    }

    fn i64(&mut self, what: &str) -> Result<(Loc, &'a [u8], i64), Halt> {
        let (loc, b, a) = self.array(what)?;
        Ok((loc, b, i64::from_be_bytes(a)))
    }

    /// The bytes not read yet.
    fn rest(&self) -> &'a [u8] {
        self.data.get(self.p..).unwrap_or(&[])
    }

    /// A varint or varlong read by `read`, which returns the value and its width.
    fn var<T>(&mut self, what: &str, read: ReadVar<T>) -> Result<(Loc, &'a [u8], T), Halt> {
        let loc = self.loc();
        let (v, n) =
            read(self.rest(), loc.pos).map_err(|e| Halt::Data(loc, format!("{what}: {e}")))?;
        let (_, b) = self.take(n, what)?;
        Ok((loc, b, v))
    }

    fn varint(&mut self, what: &str) -> Result<(Loc, &'a [u8], i32), Halt> {
        self.var(what, read_varint)
    }

    fn varlong(&mut self, what: &str) -> Result<(Loc, &'a [u8], i64), Halt> {
        self.var(what, read_varlong)
    }

    /// A cursor over the next `n` bytes (at most the rest); advances past them.
    fn sub(&mut self, n: usize) -> Cur<'a> {
        let data = self.rest().get(..n).unwrap_or(self.rest());
        let c = Cur::new(data, self.loc());
        self.p = self.p.saturating_add(data.len());
        c
    }
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn timestamp_note(ts: i64, time: fn(i64) -> String) -> String {
    if ts == -1 {
        "none".into()
    } else if (0..=253_402_300_799_999).contains(&ts) {
        time(ts)
    } else {
        "out of range".into()
    }
}

fn width_note(kind: &str, n: usize) -> String {
    format!("{kind}, {}", plural(n, "byte"))
}

fn length_note(kind: &str, n: usize, len: i64, what: &str) -> String {
    match len {
        -1 => format!("{}; null {what}", width_note(kind, n)),
        l if l < -1 => format!(
            "{}; negative: a null {what}, as Kafka reads it",
            width_note(kind, n)
        ),
        _ => width_note(kind, n),
    }
}

/// Facts about the v2 batch its records need.
struct V2Ctx {
    base_offset: i64,
    base_timestamp: i64,
    log_append_time: Option<i64>,
    control: bool,
}

/// Facts about a v0/v1 message being explained.
struct LegacyCtx<'p> {
    /// Field name prefix ("" or "inner 3 ").
    prefix: &'p str,
    /// For an inner message: its absolute offset and the wrapper's LogAppendTime, if any.
    inner: Option<(i64, Option<i64>)>,
}

impl Walk<'_, '_> {
    fn timestamp_note(&self, ts: i64) -> String {
        timestamp_note(ts, self.time)
    }

    fn line(&mut self, field: Field<'_>) -> Result<(), Halt> {
        if field.problem {
            self.problems += 1;
        }
        Ok((self.sink)(&Item::Field(field))?)
    }

    fn heading(&mut self, at: Loc, length: usize, kind: Kind, text: &str) -> Result<(), Halt> {
        let text = text.to_string();
        Ok((self.sink)(&Item::Heading {
            at,
            length,
            kind,
            text,
        })?)
    }

    /// A problem in the data: an error item.
    fn error(&mut self, at: Loc, message: &str) -> Result<(), Halt> {
        self.problems += 1;
        let message = message.to_string();
        Ok((self.sink)(&Item::Error { at, message })?)
    }

    /// Explains one entry. `buf` holds what was read of it (all of it unless partial);
    /// `declared` is its declared total size (None when the size field is missing or below 14),
    /// `avail` the bytes the input has from its position. Returns whether reading must stop.
    fn entry(
        &mut self,
        buf: &[u8],
        at: usize,
        declared: Option<u64>,
        avail: u64,
    ) -> Result<bool, Halt> {
        let partial = declared.is_none_or(|d| d > avail);
        // The codec's framing decides what the bytes are, as `krec verify` reads them: bytes
        // that are not an entry at all (a magic no format has) cannot be read on from here;
        // an entry that the input ends inside is a truncated tail.
        let not_kafka = partial
            && matches!(
                Entries::with_base(buf, at).next_entry(),
                Err(Error::InvalidMagic { .. })
            );
        let truncated = partial && declared.is_some_and(|d| d > avail) && !not_kafka;
        let magic = buf.get(MAGIC_OFFSET).copied();
        let kind = match magic {
            Some(2) => "magic 2 record batch".to_string(),
            Some(m @ (0 | 1)) => {
                let codec = buf
                    .get(l::ATTRIBUTES_OFFSET)
                    .map_or(0, |a| a & l::COMPRESSION_MASK);
                match Compression::from_id(codec) {
                    Some(Compression::None) => format!("magic {m} message"),
                    Some(c) => format!("magic {m} {c}-compressed wrapper"),
                    None => format!("magic {m} message with unknown codec {codec}"),
                }
            }
            Some(m) => format!("entry with invalid magic {}", m as i8),
            None => "entry".into(),
        };
        let size_field = EntryPrefix::parse(buf).map(|p| p.size);
        let heading = match (declared, size_field) {
            (Some(d), _) if d <= avail => {
                format!("{kind} at byte {at}, {}", plural(usize::try_from(d).unwrap_or(usize::MAX), "byte"))
            }
            (Some(d), _) if not_kafka => {
                format!("{kind} at byte {at}: declares {d} bytes, only {avail} present")
            }
            (Some(d), _) => format!(
                "partial {kind} at byte {at}: declares {d} bytes, only {avail} present (a truncated tail)"
            ),
            (None, Some(s)) => format!("{kind} at byte {at} with invalid size {s}"),
            (None, None) => format!(
                "partial entry at byte {at}: only {} (a truncated tail)",
                plural(buf.len(), "byte")
            ),
        };
        self.heading(Loc::file(at), buf.len(), Kind::Entry, &heading)?;
        let mut c = Cur::new(buf, Loc::file(at));
        if let (None, Some(size)) = (declared, size_field) {
            let (loc, b, offset) = c.i64("offset")?;
            self.line(Field::new(loc, b, "offset", offset))?;
            let (loc, b, _) = c.i32("size")?;
            self.line(Field::new(loc, b, "size", size).note("bytes after this field"))?;
            self.error(
                loc,
                &format!(
                    "entry size {size} is below the minimum of {MIN_ENTRY_SIZE}; cannot go on"
                ),
            )?;
            return Ok(true);
        }
        if size_field.is_none() {
            let l = Field::content(Loc::file(at), buf, "truncated entry".into());
            self.line(l.note(format!(
                "{}; shorter than the 12-byte offset and size prefix",
                plural(buf.len(), "byte")
            )))?;
            self.truncated(at, avail)?;
            return Ok(true);
        }
        let result = match magic {
            Some(2) => self.v2_batch(&mut c, partial),
            _ => self.legacy_message(
                &mut c,
                &LegacyCtx {
                    prefix: "",
                    inner: None,
                },
                partial,
            ),
        };
        match result {
            Ok(()) => {}
            Err(Halt::Io(e)) => return Err(Halt::Io(e)),
            Err(Halt::Data(loc, msg)) if not_kafka => {
                self.error(
                    loc,
                    &format!("{msg}; the {avail} bytes from here on cannot be read"),
                )?;
            }
            Err(Halt::Data(loc, msg)) if truncated => {
                // Running out of bytes in a truncated tail is expected.
                self.heading(loc, 0, Kind::Cut, &format!("the entry is cut here: {msg}"))?;
            }
            Err(Halt::Data(loc, msg)) => {
                self.error(loc, &msg)?;
                // A bad entry with a sound size can be skipped; anything else stops the walk.
                return Ok(partial || declared.is_none() || !matches!(magic, Some(0..=2)));
            }
        }
        if truncated {
            self.truncated(at, avail)?;
        }
        Ok(partial || declared.is_none())
    }

    /// The error that ends a truncated tail, in `krec verify`'s words.
    fn truncated(&mut self, at: usize, avail: u64) -> Result<(), Halt> {
        self.error(
            Loc::file(at),
            &format!("truncated entry: the last {avail} bytes are not a whole entry"),
        )
    }

    fn v2_batch(&mut self, c: &mut Cur<'_>, partial: bool) -> Result<(), Halt> {
        let entry = c.data;
        let at = c.base.pos;
        let (loc, b, base_offset) = c.i64("base offset")?;
        self.line(Field::new(loc, b, "base offset", base_offset))?;
        let (loc, b, length) = c.i32("batch length")?;
        self.line(Field::new(loc, b, "batch length", length).note(format!(
            "bytes after this field; the entry is {} bytes",
            i64::from(length) + LOG_OVERHEAD as i64
        )))?;
        let (loc, b, epoch) = c.i32("partition leader epoch")?;
        let note = if epoch == -1 {
            "not set, as producers write it"
        } else {
            "set by the leader that appended it"
        };
        self.line(Field::new(loc, b, "partition leader epoch", epoch).note(note))?;
        let (loc, b, magic) = c.i8("magic")?;
        self.line(Field::new(loc, b, "magic", magic).note("v2: record batch"))?;
        let (loc, b, stored) = c.u32("crc")?;
        let covered = format!(
            "CRC-32C of bytes {}..{}, attributes to the end",
            at + v2::ATTRIBUTES_OFFSET,
            at + entry.len()
        );
        if partial {
            self.line(
                Field::new(loc, b, "crc", stored)
                    .note(format!("{covered}: cannot check, the entry is incomplete")),
            )?;
        } else {
            let computed = crate::crc::crc32c(entry.get(v2::ATTRIBUTES_OFFSET..).unwrap_or(&[]));
            let verdict = if computed == stored {
                "valid".to_string()
            } else {
                format!("INVALID, computed {computed}")
            };
            let mut f = Field::new(loc, b, "crc", stored).note(format!("{covered}: {verdict}"));
            f.problem = computed != stored;
            self.line(f)?;
        }
        let (loc, b, attributes) = c.i16("attributes")?;
        let codec_id = (attributes & v2::COMPRESSION_MASK) as u8;
        let codec = Compression::from_id(codec_id);
        let bit = |mask: i16| u8::from(attributes & mask != 0);
        let mut note = format!(
            "bits 0-2: compression {}{}; bit 3: {}; bit 4: {}; bit 5: {}; bit 6: {}",
            codec.map_or("unknown", Compression::name),
            if codec.is_none() {
                format!(" id {codec_id}")
            } else {
                String::new()
            },
            if bit(v2::TIMESTAMP_TYPE_MASK) == 1 {
                "log_append_time"
            } else {
                "create_time"
            },
            if bit(v2::TRANSACTIONAL_MASK) == 1 {
                "transactional"
            } else {
                "not transactional"
            },
            if bit(v2::CONTROL_MASK) == 1 {
                "control"
            } else {
                "not control"
            },
            if bit(v2::DELETE_HORIZON_MASK) == 1 {
                "delete horizon set"
            } else {
                "no delete horizon"
            },
        );
        if attributes as u16 & 0xff80 != 0 {
            note.push_str(&format!(
                "; unused bits 7-15 set: 0x{:04x}",
                attributes as u16 & 0xff80
            ));
        }
        self.line(
            Field::new(loc, b, "attributes", format!("0x{:04x}", attributes as u16)).note(note),
        )?;
        let (loc, b, last_delta) = c.i32("last offset delta")?;
        self.line(
            Field::new(loc, b, "last offset delta", last_delta).note(format!(
                "last offset = base offset + delta = {}",
                base_offset.wrapping_add(i64::from(last_delta))
            )),
        )?;
        let (loc, b, base_ts) = c.i64("base timestamp")?;
        let note = if attributes & v2::DELETE_HORIZON_MASK != 0 {
            format!(
                "the delete horizon (attributes bit 6): {}",
                self.timestamp_note(base_ts)
            )
        } else {
            self.timestamp_note(base_ts)
        };
        self.line(Field::new(loc, b, "base timestamp", base_ts).note(note))?;
        let (loc, b, max_ts) = c.i64("max timestamp")?;
        let log_append = attributes & v2::TIMESTAMP_TYPE_MASK != 0;
        let note = if log_append {
            format!(
                "{}; the log append time, every record's timestamp",
                self.timestamp_note(max_ts)
            )
        } else {
            self.timestamp_note(max_ts)
        };
        self.line(Field::new(loc, b, "max timestamp", max_ts).note(note))?;
        let (loc, b, pid) = c.i64("producer id")?;
        let l = Field::new(loc, b, "producer id", pid);
        self.line(if pid == -1 {
            l.note("none: not idempotent")
        } else {
            l
        })?;
        let (loc, b, pepoch) = c.i16("producer epoch")?;
        let l = Field::new(loc, b, "producer epoch", pepoch);
        self.line(if pepoch == -1 { l.note("none") } else { l })?;
        let (loc, b, seq) = c.i32("base sequence")?;
        let l = Field::new(loc, b, "base sequence", seq);
        self.line(if seq == -1 {
            l.note("none")
        } else {
            l.note(format!(
                "last sequence {}",
                crate::read::v2::increment_sequence(seq, last_delta.max(0))
            ))
        })?;
        let (loc, b, count) = c.i32("records count")?;
        self.line(Field::new(loc, b, "records count", count))?;
        if count < 0 {
            return Err(Halt::Data(loc, format!("negative records count {count}")));
        }
        let section = c.rest();
        let section_loc = c.loc();
        let ctx = V2Ctx {
            base_offset,
            base_timestamp: base_ts,
            log_append_time: log_append.then_some(max_ts),
            control: attributes & v2::CONTROL_MASK != 0,
        };
        let Some(codec) = codec else {
            return Err(Halt::Data(
                loc,
                format!("unknown compression id {codec_id} (attributes bits 0-2)"),
            ));
        };
        if codec == Compression::None || count == 0 {
            let what = if count == 0 {
                "no records (an empty batch, as compaction leaves)"
            } else {
                "uncompressed"
            };
            self.heading(
                section_loc,
                section.len(),
                Kind::Records,
                &format!(
                    "records: {} at bytes {}..{}, {what}",
                    plural(section.len(), "byte"),
                    section_loc.pos,
                    section_loc.pos + section.len()
                ),
            )?;
            let mut rc = Cur::new(section, section_loc);
            return self.v2_records(&mut rc, count, &ctx, partial);
        }
        if partial {
            let l = Field::new(
                section_loc,
                section,
                format!("records ({codec})"),
                section.len(),
            );
            self.line(l.note(format!("{codec}-compressed; incomplete, cannot decompress")))?;
            return Err(Halt::Data(
                c.loc(),
                "the compressed records are incomplete".into(),
            ));
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let decompressed = crate::compression::decompress(
            codec,
            2,
            section,
            self.limit,
            section_loc.pos,
            &mut scratch,
        );
        let note = match &decompressed {
            Ok(()) => format!(
                "{codec}-compressed; decompresses to {}, explained below at d+N",
                plural(scratch.len(), "byte")
            ),
            Err(_) => format!("{codec}-compressed"),
        };
        self.line(
            Field::new(
                section_loc,
                section,
                format!("records ({codec})"),
                section.len(),
            )
            .note(note),
        )?;
        let result = match decompressed {
            Err(e) => Err(Halt::Data(
                section_loc,
                format!("cannot decompress the records: {e}"),
            )),
            Ok(()) => {
                self.heading(
                    Loc {
                        pos: 0,
                        decompressed: true,
                    },
                    scratch.len(),
                    Kind::Records,
                    &format!(
                        "records, decompressed: {} (positions d+N are in the decompressed data)",
                        plural(scratch.len(), "byte")
                    ),
                )?;
                let mut rc = Cur::new(
                    &scratch,
                    Loc {
                        pos: 0,
                        decompressed: true,
                    },
                );
                self.v2_records(&mut rc, count, &ctx, false)
            }
        };
        self.scratch = scratch;
        result
    }

    fn v2_records(
        &mut self,
        c: &mut Cur<'_>,
        count: i32,
        ctx: &V2Ctx,
        partial: bool,
    ) -> Result<(), Halt> {
        for i in 0..count {
            if c.remaining() == 0 {
                return Err(Halt::Data(
                    c.loc(),
                    format!("the header declares {count} records but the records end after {i}"),
                ));
            }
            let (loc, b, len) = c.varint(&format!("record {i} length"))?;
            self.line(
                Field::new(loc, b, format!("record {i} length"), len).note(format!(
                    "{}; record {i} is {} bytes",
                    width_note("varint", b.len()),
                    i64::from(len) + b.len() as i64
                )),
            )?;
            let Ok(len) = usize::try_from(len) else {
                return Err(Halt::Data(loc, format!("negative record length {len}")));
            };
            if len > c.remaining() {
                if partial {
                    let mut r = c.sub(c.remaining());
                    self.v2_record_body(&mut r, i, ctx)?;
                }
                return Err(Halt::Data(
                    c.loc(),
                    format!(
                        "record {i} declares {} but {}",
                        crate::error::bytes_text(len),
                        crate::error::remain_text(c.remaining())
                    ),
                ));
            }
            let mut r = c.sub(len);
            self.v2_record_body(&mut r, i, ctx)?;
            if r.remaining() != 0 {
                return Err(Halt::Data(
                    r.loc(),
                    format!(
                        "record {i}: its length says {len} bytes but its fields take {}",
                        r.p
                    ),
                ));
            }
        }
        if c.remaining() != 0 {
            return Err(Halt::Data(
                c.loc(),
                format!(
                    "{} remain after the last declared record",
                    plural(c.remaining(), "byte")
                ),
            ));
        }
        Ok(())
    }

    fn v2_record_body(&mut self, r: &mut Cur<'_>, i: i32, ctx: &V2Ctx) -> Result<(), Halt> {
        let name = |f: &str| format!("record {i} {f}");
        let (loc, b, attributes) = r.i8(&name("attributes"))?;
        self.line(
            Field::new(loc, b, name("attributes"), attributes).note("unused, Kafka writes 0"),
        )?;
        let (loc, b, ts_delta) = r.varlong(&name("timestamp delta"))?;
        let note = match ctx.log_append_time {
            Some(t) => format!(
                "{}; ignored under log_append_time: timestamp {t}",
                width_note("varlong", b.len())
            ),
            None => {
                let ts = ctx.base_timestamp.wrapping_add(ts_delta);
                format!(
                    "{}; timestamp = base + delta = {ts} = {}",
                    width_note("varlong", b.len()),
                    self.timestamp_note(ts)
                )
            }
        };
        self.line(Field::new(loc, b, name("timestamp delta"), ts_delta).note(note))?;
        let (loc, b, off_delta) = r.varint(&name("offset delta"))?;
        self.line(
            Field::new(loc, b, name("offset delta"), off_delta).note(format!(
                "{}; offset = base + delta = {}",
                width_note("varint", b.len()),
                ctx.base_offset.wrapping_add(i64::from(off_delta))
            )),
        )?;
        let (loc, b, key_len) = r.varint(&name("key length"))?;
        self.line(
            Field::new(loc, b, name("key length"), key_len).note(length_note(
                "varint",
                b.len(),
                key_len.into(),
                "key",
            )),
        )?;
        let mut control_kind = None;
        if let Ok(n) = usize::try_from(key_len) {
            let (loc, key) = r.take(n, &name("key"))?;
            if ctx.control {
                control_kind = self.control_key(loc, key, i)?;
            } else {
                self.line(Field::content(loc, key, name("key")))?;
            }
        }
        let (loc, b, value_len) = r.varint(&name("value length"))?;
        self.line(
            Field::new(loc, b, name("value length"), value_len).note(length_note(
                "varint",
                b.len(),
                value_len.into(),
                "value",
            )),
        )?;
        if let Ok(n) = usize::try_from(value_len) {
            let (loc, value) = r.take(n, &name("value"))?;
            match control_kind {
                Some(kind) if kind.is_end_txn() && value.len() >= 6 => {
                    self.end_txn_marker(loc, value, i)?
                }
                _ => self.line(Field::content(loc, value, name("value")))?,
            }
        }
        let (loc, b, header_count) = r.varint(&name("header count"))?;
        self.line(
            Field::new(loc, b, name("header count"), header_count)
                .note(width_note("varint", b.len())),
        )?;
        if header_count < 0 {
            return Err(Halt::Data(
                loc,
                format!("negative header count {header_count}"),
            ));
        }
        for j in 0..header_count {
            let hname = |f: &str| format!("record {i} header {j} {f}");
            let (loc, b, klen) = r.varint(&hname("key length"))?;
            self.line(
                Field::new(loc, b, hname("key length"), klen).note(width_note("varint", b.len())),
            )?;
            let Ok(klen) = usize::try_from(klen) else {
                return Err(Halt::Data(
                    loc,
                    format!("negative header key length {klen} (header keys cannot be null)"),
                ));
            };
            let (loc, key) = r.take(klen, &hname("key"))?;
            self.line(Field::content(loc, key, hname("key")))?;
            let (loc, b, vlen) = r.varint(&hname("value length"))?;
            self.line(
                Field::new(loc, b, hname("value length"), vlen).note(length_note(
                    "varint",
                    b.len(),
                    vlen.into(),
                    "value",
                )),
            )?;
            if let Ok(n) = usize::try_from(vlen) {
                let (loc, value) = r.take(n, &hname("value"))?;
                self.line(Field::content(loc, value, hname("value")))?;
            }
        }
        Ok(())
    }

    /// Explains a control record key field by field; returns its type when it parses.
    fn control_key(
        &mut self,
        loc: Loc,
        key: &[u8],
        i: i32,
    ) -> Result<Option<ControlRecordType>, Halt> {
        let mut k = Cur::new(key, loc);
        let (loc, b, version) = k.i16(&format!("record {i} control key version"))?;
        self.line(Field::new(
            loc,
            b,
            format!("record {i} control key version"),
            version,
        ))?;
        let (loc, b, kind) = k.i16(&format!("record {i} control key type"))?;
        let parsed = ControlRecordKey::parse(Some(key), loc.pos)
            .ok()
            .map(|k| k.kind);
        let t = ControlRecordType::from_id(kind);
        self.line(
            Field::new(loc, b, format!("record {i} control key type"), kind).note(match t {
                ControlRecordType::Abort => "abort: an end-transaction marker".to_string(),
                ControlRecordType::Commit => "commit: an end-transaction marker".to_string(),
                ControlRecordType::Unknown(_) => "unknown control type".to_string(),
                other => format!("{} (KRaft)", other.name()),
            }),
        )?;
        if k.remaining() > 0 {
            let (loc, rest) = k.take(k.remaining(), "")?;
            self.line(Field::content(
                loc,
                rest,
                format!("record {i} control key rest"),
            ))?;
        }
        Ok(parsed)
    }

    fn end_txn_marker(&mut self, loc: Loc, value: &[u8], i: i32) -> Result<(), Halt> {
        let mut v = Cur::new(value, loc);
        let (loc, b, version) = v.i16("marker version")?;
        self.line(
            Field::new(loc, b, format!("record {i} marker version"), version)
                .note("end-transaction marker"),
        )?;
        let (loc, b, epoch) = v.i32("coordinator epoch")?;
        self.line(Field::new(
            loc,
            b,
            format!("record {i} coordinator epoch"),
            epoch,
        ))?;
        if v.remaining() > 0 {
            let (loc, rest) = v.take(v.remaining(), "")?;
            self.line(Field::content(loc, rest, format!("record {i} marker rest")))?;
        }
        Ok(())
    }

    /// Explains a v0/v1 message (an entry, or an inner message of a wrapper when `ctx.inner`).
    fn legacy_message(
        &mut self,
        c: &mut Cur<'_>,
        ctx: &LegacyCtx<'_>,
        partial: bool,
    ) -> Result<(), Halt> {
        let entry = c.data;
        let name = |f: &str| format!("{}{f}", ctx.prefix);
        let (loc, b, offset) = c.i64(&name("offset"))?;
        let magic_byte = entry.get(MAGIC_OFFSET).copied();
        let codec_id = entry
            .get(l::ATTRIBUTES_OFFSET)
            .map_or(0, |a| a & l::COMPRESSION_MASK);
        let note = match (ctx.inner, magic_byte) {
            (Some((abs, _)), Some(1)) => {
                Some(format!("relative to the wrapper; absolute offset {abs}"))
            }
            (Some(_), _) => Some("absolute, as v0 inner offsets are".to_string()),
            (None, _) if codec_id != 0 => {
                Some("the offset of the wrapper's last inner message".to_string())
            }
            (None, _) => None,
        };
        let line = Field::new(loc, b, name("offset"), offset);
        self.line(match note {
            Some(n) => line.note(n),
            None => line,
        })?;
        let (loc, b, size) = c.i32(&name("message size"))?;
        self.line(Field::new(loc, b, name("message size"), size).note(format!(
            "bytes after this field; the message is {} bytes",
            i64::from(size) + LOG_OVERHEAD as i64
        )))?;
        if size < MIN_ENTRY_SIZE {
            return Err(Halt::Data(
                loc,
                format!("message size {size} is below the minimum of {MIN_ENTRY_SIZE}"),
            ));
        }
        let (loc, b, stored) = c.u32(&name("crc"))?;
        let start = c.base.pos + l::MAGIC_OFFSET;
        let covered = if c.base.decompressed {
            format!(
                "CRC-32 of d+{start}..d+{}, magic to the end",
                c.base.pos + entry.len()
            )
        } else {
            format!(
                "CRC-32 of bytes {start}..{}, magic to the end",
                c.base.pos + entry.len()
            )
        };
        if partial {
            self.line(
                Field::new(loc, b, name("crc"), stored)
                    .note(format!("{covered}: cannot check, the entry is incomplete")),
            )?;
        } else {
            let computed = crate::crc::crc32(entry.get(l::MAGIC_OFFSET..).unwrap_or(&[]));
            let verdict = if computed == stored {
                "valid".to_string()
            } else {
                format!("INVALID, computed {computed}")
            };
            self.line(Field {
                problem: computed != stored,
                ..Field::new(loc, b, name("crc"), stored).note(format!("{covered}: {verdict}"))
            })?;
        }
        let (loc, b, magic) = c.i8(&name("magic"))?;
        if !(0..=1).contains(&magic) {
            self.line(Field::new(loc, b, name("magic"), magic))?;
            let expected = if ctx.inner.is_some() {
                "0 or 1 (inner message)"
            } else {
                "0, 1 or 2"
            };
            return Err(Halt::Data(
                loc,
                format!("invalid magic {magic} (expected {expected})"),
            ));
        }
        self.line(
            Field::new(loc, b, name("magic"), magic).note(if magic == 0 {
                "v0 message"
            } else {
                "v1 message"
            }),
        )?;
        let (loc, b, attributes) = c.i8(&name("attributes"))?;
        let attributes = attributes as u8;
        let codec = Compression::from_id(attributes & l::COMPRESSION_MASK);
        let mut note = format!(
            "bits 0-2: compression {}",
            codec.map_or_else(
                || format!("unknown id {}", attributes & l::COMPRESSION_MASK),
                |c| c.name().to_string()
            ),
        );
        let log_append = magic == 1 && attributes & l::TIMESTAMP_TYPE_MASK != 0;
        if magic == 1 {
            note.push_str(if log_append {
                "; bit 3: log_append_time"
            } else {
                "; bit 3: create_time"
            });
        }
        if attributes & 0xf0 != 0 || (magic == 0 && attributes & 0x08 != 0) {
            note.push_str(&format!(
                "; unused bits set: 0x{:02x}",
                attributes & if magic == 0 { 0xf8 } else { 0xf0 }
            ));
        }
        self.line(
            Field::new(loc, b, name("attributes"), format!("0x{attributes:02x}")).note(note),
        )?;
        let mut timestamp = None;
        if magic == 1 {
            let (loc, b, ts) = c.i64(&name("timestamp"))?;
            timestamp = Some(ts);
            let mut note = self.timestamp_note(ts);
            if let Some((_, Some(t))) = ctx.inner {
                note = format!("{note}; replaced by the wrapper's log append time {t}");
            } else if log_append && codec != Some(Compression::None) {
                note = format!("{note}; the log append time, applies to every inner message");
            } else if log_append {
                note = format!("{note}; the log append time");
            } else if codec.is_some_and(|c| c != Compression::None) {
                note = format!("{note}; the max inner timestamp");
            }
            self.line(Field::new(loc, b, name("timestamp"), ts).note(note))?;
        }
        let (loc, b, key_len) = c.i32(&name("key length"))?;
        self.line(
            Field::new(loc, b, name("key length"), key_len).note(length_note(
                "int32",
                4,
                key_len.into(),
                "key",
            )),
        )?;
        if let Ok(n) = usize::try_from(key_len) {
            let (loc, key) = c.take(n, &name("key"))?;
            self.line(Field::content(loc, key, name("key")))?;
        }
        let (loc, b, value_len) = c.i32(&name("value length"))?;
        self.line(
            Field::new(loc, b, name("value length"), value_len).note(length_note(
                "int32",
                4,
                value_len.into(),
                "value",
            )),
        )?;
        let mut value = None;
        if let Ok(n) = usize::try_from(value_len) {
            let (loc, v) = c.take(n, &name("value"))?;
            match codec {
                Some(codec) if codec != Compression::None => {
                    let l = Field::new(loc, v, name(&format!("value ({codec})")), v.len());
                    self.line(l.note(format!("{codec}-compressed inner messages")))?;
                    value = Some((loc, v, codec));
                }
                _ => self.line(Field::content(loc, v, name("value")))?,
            }
        }
        if c.remaining() > 0 {
            return Err(Halt::Data(
                c.loc(),
                format!(
                    "{} after the value that no field accounts for",
                    plural(c.remaining(), "byte")
                ),
            ));
        }
        let Some(codec) = codec else {
            let loc = Loc {
                pos: c.base.pos + l::ATTRIBUTES_OFFSET,
                decompressed: c.base.decompressed,
            };
            return Err(Halt::Data(
                loc,
                format!(
                    "unknown compression id {}",
                    attributes & l::COMPRESSION_MASK
                ),
            ));
        };
        if codec == Compression::None {
            return Ok(());
        }
        if ctx.inner.is_some() {
            return Err(Halt::Data(
                c.base,
                "inner messages must not be compressed".into(),
            ));
        }
        let at = c.base;
        let Some((value_loc, compressed, codec)) = value else {
            return Err(Halt::Data(
                at,
                format!("compressed message (magic {magic}) has a null value"),
            ));
        };
        if !codec.allowed_in(magic as u8) {
            return Err(Halt::Data(
                at,
                format!("{codec} compression is not allowed in magic {magic}"),
            ));
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let result = match crate::compression::decompress(
            codec,
            magic as u8,
            compressed,
            self.limit,
            value_loc.pos,
            &mut scratch,
        ) {
            Err(e) => Err(Halt::Data(
                value_loc,
                format!("cannot decompress the value: {e}"),
            )),
            Ok(()) => self.inner_messages(
                &scratch,
                offset,
                magic,
                log_append.then_some(timestamp).flatten(),
            ),
        };
        self.scratch = scratch;
        result
    }

    fn inner_messages(
        &mut self,
        data: &[u8],
        wrapper_offset: i64,
        magic: i8,
        log_append_time: Option<i64>,
    ) -> Result<(), Halt> {
        let dz = Loc {
            pos: 0,
            decompressed: true,
        };
        self.heading(
            dz,
            data.len(),
            Kind::InnerMessages,
            &format!(
                "inner messages, decompressed: {} (positions d+N are in the decompressed data)",
                plural(data.len(), "byte")
            ),
        )?;
        // The last inner offset, for v1's relative offsets.
        let mut pos = 0usize;
        let mut last = 0i64;
        let mut count = 0usize;
        while let Some(p) = data.get(pos..).and_then(EntryPrefix::parse) {
            let Some(len) = p.entry_len().and_then(|l| usize::try_from(l).ok()) else {
                break;
            };
            if data.len() - pos < len {
                break;
            }
            last = p.offset;
            count += 1;
            pos += len;
        }
        if count == 0 {
            return Err(Halt::Data(
                dz,
                "compressed message set has no inner messages".into(),
            ));
        }
        if magic == 1 && wrapper_offset != 0 && wrapper_offset < last {
            return Err(Halt::Data(
                dz,
                format!("wrapper offset {wrapper_offset} is less than the last inner offset {last} and not 0"),
            ));
        }
        let mut c = Cur::new(data, dz);
        let mut k = 0usize;
        while c.remaining() > 0 {
            if c.remaining() < LOG_OVERHEAD {
                return self.inner_tail(&c);
            }
            let rest = c.rest();
            let Some(EntryPrefix {
                offset: relative,
                size,
            }) = EntryPrefix::parse(rest)
            else {
                return self.inner_tail(&c);
            };
            let total =
                usize::try_from(size).map_or(usize::MAX, |s| s.saturating_add(LOG_OVERHEAD));
            if size >= MIN_ENTRY_SIZE && total > rest.len() {
                return self.inner_tail(&c);
            }
            let absolute = if magic == 1 && wrapper_offset != 0 {
                wrapper_offset.wrapping_sub(last).wrapping_add(relative)
            } else {
                relative
            };
            let prefix = format!("inner {k} ");
            let ctx = LegacyCtx {
                prefix: &prefix,
                inner: Some((absolute, log_append_time)),
            };
            if size < MIN_ENTRY_SIZE {
                let mut sub = c.sub(rest.len());
                return self.legacy_message(&mut sub, &ctx, false);
            }
            let mut sub = c.sub(total);
            self.legacy_message(&mut sub, &ctx, false)?;
            k += 1;
        }
        Ok(())
    }

    /// A truncated last inner message: Kafka's deep iterator stops there silently.
    fn inner_tail(&mut self, c: &Cur<'_>) -> Result<(), Halt> {
        let rest = c.rest();
        let l = Field::content(c.loc(), rest, "truncated inner message".into());
        self.line(l.note(format!(
            "{}; ignored, as Kafka ignores a cut last inner message",
            plural(rest.len(), "byte")
        )))
    }
}
