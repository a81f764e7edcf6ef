//! Records that own their bytes, for keeping records past the buffer they were read from.
//!
//! A [`Record`] borrows from the input or from the caller's scratch buffer, so it cannot outlive
//! either. An [`OwnedRecord`] holds [`Bytes`] instead. Owning is cheap when the input already is
//! a [`Bytes`]: [`Batch::owned_records`] slices it (uncompressed entries) or the one buffer a
//! compressed entry decompresses into, so every record of a batch shares one allocation and no
//! key, value or header is copied. [`Record::to_owned_record`] works from a borrowed record alone
//! and copies it into one allocation of its own.

use super::{Batch, Record};
use crate::{Compression, Error, Result};
use ::bytes::Bytes;
use std::ops::Range;

/// One record header that owns its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnedHeader {
    /// Header key bytes.
    pub key: Bytes,
    /// Header value, `None` for a null value.
    pub value: Option<Bytes>,
}

/// One record of any format that owns its bytes: what [`Record`] gives, detached from the
/// buffers it was read from.
///
/// # Examples
///
/// ```
/// use bytes::Bytes;
/// use krecords_codec::read::{Entries, OwnedRecord};
/// use krecords_codec::write::{NewRecord, V2Builder};
/// use krecords_codec::{Compression, DEFAULT_DECOMPRESS_LIMIT};
///
/// let mut b = V2Builder::new(0).compression(Compression::Zstd, None);
/// b.append(&NewRecord::new(1714000000000, Some(b"k"), Some(b"v1"))).unwrap();
/// b.append(&NewRecord::new(1714000000001, Some(b"k"), None)).unwrap();
/// let input = Bytes::from(b.finish().unwrap());
///
/// let mut kept: Vec<OwnedRecord> = Vec::new();
/// for batch in Entries::new(&input) {
///     kept.extend(batch?.owned_records(&input, DEFAULT_DECOMPRESS_LIMIT)?);
/// }
/// drop(input); // the records keep what they need
/// assert_eq!(kept[0].value.as_deref(), Some(&b"v1"[..]));
/// assert!(kept[1].is_tombstone());
/// # Ok::<(), krecords_codec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnedRecord {
    /// Absolute offset.
    pub offset: i64,
    /// Timestamp with LogAppendTime applied; `None` for v0.
    pub timestamp: Option<i64>,
    /// Key, `None` for a null key.
    pub key: Option<Bytes>,
    /// Value, `None` for a null value (a tombstone).
    pub value: Option<Bytes>,
    /// Headers in order, duplicates and null values kept (always empty for v0/v1).
    pub headers: Vec<OwnedHeader>,
}

impl OwnedRecord {
    /// Whether the value is null: a tombstone for compaction.
    pub fn is_tombstone(&self) -> bool {
        self.value.is_none()
    }
}

/// Where a slice of a record lies: within a shared buffer, or nowhere known (then copied).
#[derive(Debug)]
enum Loc {
    Input(Range<usize>),
    Scratch(Range<usize>),
    Copied(Bytes),
}

/// The range `part` occupies within `whole`, if it lies entirely inside it.
fn range_in(whole: &[u8], part: &[u8]) -> Option<Range<usize>> {
    range_at(whole, part.as_ptr() as usize, part.len())
}

fn locate(input: &[u8], scratch: &[u8], part: &[u8]) -> Loc {
    if let Some(r) = range_in(input, part) {
        Loc::Input(r)
    } else if let Some(r) = range_in(scratch, part) {
        Loc::Scratch(r)
    } else {
        Loc::Copied(Bytes::copy_from_slice(part))
    }
}

fn resolve(loc: Loc, input: &Bytes, scratch: &Bytes) -> Option<Bytes> {
    let slice = |b: &Bytes, r: Range<usize>| b.get(r.clone()).map(|_| b.slice(r));
    match loc {
        Loc::Input(r) => slice(input, r),
        Loc::Scratch(r) => slice(scratch, r),
        Loc::Copied(b) => Some(b),
    }
}

/// A record whose slices are located but not yet turned into [`Bytes`].
#[derive(Debug)]
struct Located {
    offset: i64,
    timestamp: Option<i64>,
    key: Option<Loc>,
    value: Option<Loc>,
    headers: Vec<(Loc, Option<Loc>)>,
}

impl Located {
    fn new(r: &Record<'_>, input: &[u8], scratch: &[u8]) -> Self {
        Located {
            offset: r.offset(),
            timestamp: r.timestamp(),
            key: r.key().map(|k| locate(input, scratch, k)),
            value: r.value().map(|v| locate(input, scratch, v)),
            headers: r
                .headers()
                .map(|h| {
                    (
                        locate(input, scratch, h.key),
                        h.value.map(|v| locate(input, scratch, v)),
                    )
                })
                .collect(),
        }
    }

    /// `None` if a range lies outside its buffer, which [`Batch::owned_records`] rules out.
    fn resolve(self, input: &Bytes, scratch: &Bytes) -> Option<OwnedRecord> {
        let r = |l: Loc| resolve(l, input, scratch).ok_or(());
        let opt = |l: Option<Loc>| l.map(r).transpose();
        let mut headers = Vec::with_capacity(self.headers.len());
        for (k, v) in self.headers {
            headers.push(OwnedHeader {
                key: r(k).ok()?,
                value: opt(v).ok()?,
            });
        }
        Some(OwnedRecord {
            offset: self.offset,
            timestamp: self.timestamp,
            key: opt(self.key).ok()?,
            value: opt(self.value).ok()?,
            headers,
        })
    }
}

impl<'a> Record<'a> {
    /// Copies the record into an [`OwnedRecord`] that needs neither the input nor the scratch
    /// buffer any more: key, value and headers go into one allocation, which the returned
    /// [`Bytes`] share. When the input is a [`Bytes`] already, [`Record::to_owned_in`] or
    /// [`Batch::owned_records`] own records without copying.
    pub fn to_owned_record(&self) -> OwnedRecord {
        let headers = self.headers();
        let mut len = self.key().map_or(0, <[u8]>::len);
        len = len.saturating_add(self.value().map_or(0, <[u8]>::len));
        for h in headers {
            len = len
                .saturating_add(h.key.len())
                .saturating_add(h.value.map_or(0, <[u8]>::len));
        }
        let mut buf = Vec::with_capacity(len);
        let mut push = |s: &[u8]| {
            let start = buf.len();
            buf.extend_from_slice(s);
            start..buf.len()
        };
        let key = self.key().map(&mut push);
        let value = self.value().map(&mut push);
        let header_ranges: Vec<_> = headers
            .map(|h| (push(h.key), h.value.map(&mut push)))
            .collect();
        let shared = Bytes::from(buf);
        OwnedRecord {
            offset: self.offset(),
            timestamp: self.timestamp(),
            key: key.map(|r| shared.slice(r)),
            value: value.map(|r| shared.slice(r)),
            headers: header_ranges
                .into_iter()
                .map(|(k, v)| OwnedHeader {
                    key: shared.slice(k),
                    value: v.map(|r| shared.slice(r)),
                })
                .collect(),
        }
    }

    /// An [`OwnedRecord`] whose key, value and headers are slices of `buf` (no copy) where the
    /// record's bytes lie within it, as for a record of an uncompressed entry read from `buf`;
    /// anything outside `buf` (a compressed entry's records, which live in the scratch buffer)
    /// is copied.
    pub fn to_owned_in(&self, buf: &Bytes) -> OwnedRecord {
        // Every range found lies within `buf`; the fallback is never taken.
        Located::new(self, buf, &[])
            .resolve(buf, &Bytes::new())
            .unwrap_or_else(|| self.to_owned_record())
    }
}

impl<'a> Batch<'a> {
    /// The entry's records as [`OwnedRecord`]s, checked as [`Batch::checked_records`] checks
    /// them (CRC first, one decompression of at most `limit` bytes).
    ///
    /// `input` should be the buffer the entry was read from (`Entries::new(&input)`): the
    /// records of an uncompressed entry are then slices of it, and those of a compressed entry
    /// slices of the one buffer it decompresses into, so no key, value or header is copied and
    /// the records of one batch share one allocation. Bytes outside `input` are copied, so any
    /// `input` gives correct records.
    ///
    /// # Errors
    ///
    /// As [`Batch::checked_records`] and its records; no record is returned after an error.
    pub fn owned_records(&self, input: &Bytes, limit: usize) -> Result<Vec<OwnedRecord>> {
        let compressed = match self {
            Batch::V2(b) => b.compression().is_ok_and(|c| c != Compression::None),
            Batch::Legacy(b) => b.is_compressed(),
        };
        let mut scratch = Vec::new();
        let (located, data) = {
            let records = self.checked_records(&mut scratch, limit)?;
            // A compressed entry's records borrow the decompressed bytes in `scratch`, which
            // cannot be looked at while they do: their slices are located relative to the
            // buffer the records iterate (`data`, the start of `scratch`), and that within
            // `scratch` afterwards. An uncompressed entry's lie in the input or are copied.
            let data = if compressed { records.data() } else { &[] };
            let data_span = (data.as_ptr() as usize, data.len());
            let mut located = Vec::new();
            for record in records {
                located.push(Located::new(&record?, input, data));
            }
            (located, data_span)
        };
        let shared = Bytes::from(scratch);
        let data = range_at(&shared, data.0, data.1).map_or_else(Bytes::new, |r| shared.slice(r));
        let mut owned = Vec::with_capacity(located.len());
        for l in located {
            owned.push(
                l.resolve(input, &data)
                    .ok_or_else(|| Error::InvalidRecord {
                        at: self.position(),
                        reason: "record bytes outside the entry and its decompressed records"
                            .into(),
                    })?,
            );
        }
        Ok(owned)
    }
}

/// The range of `whole` that starts at address `addr` and is `len` long, if inside it.
fn range_at(whole: &[u8], addr: usize, len: usize) -> Option<Range<usize>> {
    let start = addr.checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(len)?;
    (end <= whole.len()).then_some(start..end)
}
