//! What `krec dump` prints: entries rendered as kafka-dump-log's text (Kafka 4.4.0's
//! `DumpLogSegments` with `--deep-iteration` / `--print-data-log`, line for line) or as krec's
//! JSON Lines (one object per entry, [`crate::entry_json`]'s), through the [`Filter`]s of the
//! read.
//!
//! A [`Dumper`] renders one entry at a time ([`Dumper::entry`]) or every file of a partition's
//! [`Reader`] ([`Dumper::partition`]: the `Dumping NAME` headers, truncated tails and corrupt
//! entries included). Each printed entry is rendered into a reused buffer and written in one
//! go, so memory stays bounded by the largest entry; entries the filters exclude are skipped
//! from their header, without decompressing them.
//!
//! # Example
//!
//! ```
//! use krecords_codec::read::Entries;
//! use krecords_codec::write::{NewRecord, V2Builder};
//! use krecords_source::dump::{DumpOptions, Dumper, Format};
//!
//! let mut b = V2Builder::new(7);
//! b.append(&NewRecord::new(1_714_000_000_000, Some(b"k"), Some(b"v"))).unwrap();
//! let bytes = b.finish().unwrap();
//! let batch = Entries::new(&bytes).next().unwrap().unwrap();
//!
//! let options = DumpOptions { print_data: true, ..DumpOptions::default() };
//! let mut out = Vec::new();
//! assert!(Dumper::new(options).entry("x.log", &batch, &mut out).unwrap());
//! let text = String::from_utf8(out).unwrap();
//! assert!(text.starts_with("baseOffset: 7 lastOffset: 7 count: 1 "), "{text}");
//! assert!(text.ends_with("\n| offset: 7 CreateTime: 1714000000000 keySize: 1 valueSize: 1 \
//!                         sequence: -1 headerKeys: [] key: k payload: v\n"), "{text}");
//!
//! let options = DumpOptions { format: Format::Json, deep: true, ..DumpOptions::default() };
//! let mut out = Vec::new();
//! Dumper::new(options).entry("x.log", &batch, &mut out).unwrap();
//! let line: serde_json::Value = serde_json::from_slice(&out).unwrap();
//! assert_eq!(line["file"], "x.log");
//! assert_eq!(line["records"][0]["value"], "v");
//! ```

use crate::filter::{Filter, Verdict};
use crate::{entry_json, entry_text, Error, ErrorClass, Partition, Reader};
use krecords_codec::build::BytesEncoding;
use krecords_codec::read::{Batch, Step};
use krecords_topics::Kind;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// kafka-dump-log's lines.
    #[default]
    Text,
    /// One JSON object per entry ([`crate::entry_json`]).
    Json,
}

/// Which of [`krecords_topics`]' decoders shows the records of Kafka's internal topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Decode {
    /// From the partition directory's topic name (`__consumer_offsets-N`, ...; for a live
    /// partition its topic).
    #[default]
    Auto,
    /// None: keys and values as bytes.
    None,
    /// This topic's decoder, whatever the file.
    Topic(Kind),
}

impl Decode {
    /// The decoder for the file at `path`.
    pub fn for_file(self, path: &Path) -> Option<Kind> {
        match self {
            Decode::Auto => Kind::for_file(path),
            Decode::None => None,
            Decode::Topic(k) => Some(k),
        }
    }
}

/// How a [`Dumper`] renders entries: `krec dump`'s options.
#[derive(Debug, Clone, Copy)]
pub struct DumpOptions {
    /// Text or JSON.
    pub format: Format,
    /// Show the records of every entry (kafka-dump-log's `--deep-iteration`).
    pub deep: bool,
    /// Show keys, values and headers (`--print-data-log`); implies `deep`.
    pub print_data: bool,
    /// How keys, values and header values appear in JSON.
    pub bytes: BytesEncoding,
    /// Add ISO 8601 UTC forms of the timestamps (`--timestamps human`).
    pub iso: bool,
    /// Upper bound on one entry's decompressed size.
    pub max_decompressed_bytes: usize,
    /// Which entries and records are shown. With `bounded`, its offsets are set from the
    /// reader's as [`Dumper::partition`] reads.
    pub filter: Filter,
    /// Show only the records inside the reader's [`crate::Bounds`]: set when a range was asked
    /// for (`!ReadOptions::range.is_all()`), as `krec dump` does.
    pub bounded: bool,
    /// Report a truncated tail (text: `Found N invalid bytes at the end of FILE`, JSON: a
    /// `"partial"` line) as a problem. kafka-dump-log with `--max-bytes` does not: false when
    /// the files are read up to a byte budget ([`crate::ReadOptions::max_bytes`]).
    pub partial_tails: bool,
    /// The internal topic decoder.
    pub decode: Decode,
}

impl Default for DumpOptions {
    /// `krec dump`'s defaults: text, entries only, UTF-8 bytes, timestamps in ms, no filter,
    /// truncated tails reported, internal topics decoded by their directory's name.
    fn default() -> Self {
        DumpOptions {
            format: Format::Text,
            deep: false,
            print_data: false,
            bytes: BytesEncoding::Utf8,
            iso: false,
            max_decompressed_bytes: krecords_codec::DEFAULT_DECOMPRESS_LIMIT,
            filter: Filter::default(),
            bounded: false,
            partial_tails: true,
            decode: Decode::Auto,
        }
    }
}

/// Where a [`Dumper`] reports the errors its text output only counts (an entry's records that
/// do not decode, a corrupt entry): the input's name and the error.
pub type ErrorFn = Box<dyn FnMut(&str, &krecords_codec::Error)>;

/// Renders entries as `krec dump` does; holds the buffers reused from entry to entry.
pub struct Dumper {
    options: DumpOptions,
    filter: Filter,
    /// Decompressed records of the current entry.
    scratch: Vec<u8>,
    /// The rendered entry line (text: the batch line).
    line: Vec<u8>,
    /// The rendered records of the current entry.
    records: Vec<u8>,
    /// The internal topic decoder of the current file.
    decoder: Option<Kind>,
    /// The partition of the current live (`kafka://`) input, tagged on JSON lines.
    partition: Option<i32>,
    on_error: Option<ErrorFn>,
}

impl std::fmt::Debug for Dumper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dumper")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// The last component of `name`, as kafka-dump-log names a file in its messages.
fn file_name(name: &str) -> &str {
    Path::new(name)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(name)
}

impl Dumper {
    /// A dumper rendering as `options` say. Until [`Dumper::partition`] picks one per file,
    /// the internal topic decoder is the topic `options.decode` names, if any.
    pub fn new(options: DumpOptions) -> Dumper {
        Dumper {
            options,
            filter: options.filter,
            scratch: Vec::new(),
            line: Vec::new(),
            records: Vec::new(),
            decoder: match options.decode {
                Decode::Topic(k) => Some(k),
                Decode::Auto | Decode::None => None,
            },
            partition: None,
            on_error: None,
        }
    }

    /// Reports to `f` the errors that the text output shows only as a count of invalid bytes
    /// or not at all (records that do not decode); `krec dump` prints them on stderr. Without
    /// it they are only counted as problems (JSON lines carry them as `"error"`).
    pub fn on_error(mut self, f: impl FnMut(&str, &krecords_codec::Error) + 'static) -> Self {
        self.on_error = Some(Box::new(f));
        self
    }

    /// The filter of the options: what a read's `--count` counts
    /// ([`crate::ReadOptions::counted`]).
    pub fn filter(&self) -> Filter {
        self.options.filter
    }

    fn deep(&self) -> bool {
        self.options.deep || self.options.print_data
    }

    fn report(&mut self, name: &str, e: &krecords_codec::Error) {
        if let Some(f) = self.on_error.as_mut() {
            f(name, e);
        }
    }

    /// A JSON line about a place in input `name` (`file`, for a live input `partition`,
    /// `position`) with `fields` after them.
    fn place<const N: usize>(
        &self,
        name: &str,
        position: usize,
        fields: [(&str, serde_json::Value); N],
    ) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("file".into(), name.into());
        if let Some(p) = self.partition {
            m.insert("partition".into(), p.into());
        }
        m.insert("position".into(), position.into());
        for (k, v) in fields {
            m.insert(k.into(), v);
        }
        serde_json::Value::Object(m)
    }

    /// Dumps every file of `reader`, a read of `part`, to `out`: in text a `Dumping NAME` line
    /// (and a segment's `Log starting offset`, a snapshot's end offset and epoch) before each
    /// file's entries, then the entries [`Dumper::entry`] shows, a truncated tail and a corrupt
    /// entry as kafka-dump-log reports them (`Found N invalid bytes at the end of FILE`; in
    /// JSON a line with `"partial"` or `"error"`). Returns whether it showed a problem (an
    /// invalid entry, a truncated tail).
    ///
    /// A file of which nothing is shown has no `Dumping` lines either when the read shows part
    /// of the log (a range, a `--count`, a filter: [`DumpOptions::bounded`], a
    /// [`DumpOptions::filter`] that is not [`Filter::is_all`]); read whole, every file has
    /// them, an empty segment too, as kafka-dump-log prints it.
    ///
    /// # Errors
    ///
    /// A file that cannot be opened or read; an error writing to `out` (an [`Error::Io`]
    /// without a description).
    pub fn partition(
        &mut self,
        part: &Partition,
        reader: &mut Reader,
        out: &mut impl Write,
    ) -> Result<bool, Error> {
        let written = |e| Error::io("", e);
        let mut problem = false;
        self.partition = part.live().map(|l| l.partition);
        let text = self.options.format == Format::Text;
        let whole = !self.options.bounded && self.options.filter.is_all();
        let mut header = Vec::new();
        while let Some(file) = reader.next_file()? {
            let name = file.name;
            let decoder_path = match (part.live(), &file.path) {
                (Some(l), _) => Path::new(&format!("{}-{}", l.topic, l.partition)).join("x.log"),
                (None, Some(p)) => p.clone(),
                (None, None) => PathBuf::from(&name),
            };
            self.decoder = self.options.decode.for_file(&decoder_path);
            header.clear();
            if text {
                file_header(&mut header, &name, file.path.as_deref());
            }
            // The header goes out with the file's first line.
            let mut out = HeaderFirst {
                header: &mut header,
                out: &mut *out,
            };
            let unread = |e| Error::reading(&name, e);
            loop {
                let (next, bounds) = reader.next_with_bounds().map_err(unread)?;
                if self.options.bounded {
                    self.filter.offset_start = bounds.start;
                    self.filter.offset_end = bounds.end;
                }
                match next {
                    Step::End => break,
                    Step::Entry(batch) => {
                        problem |= !self.entry(&name, &batch, &mut out).map_err(written)?;
                    }
                    // Cut by a byte budget: not reported, as kafka-dump-log's --max-bytes.
                    Step::Partial(_) if !self.options.partial_tails => {}
                    // A truncated tail: the sources layer's one rule (exit 1, as verify).
                    Step::Partial(p) => {
                        problem |= crate::TRUNCATED_TAIL == ErrorClass::Data;
                        if text {
                            let file = file_name(&name);
                            writeln!(out, "Found {} invalid bytes at the end of {file}", p.bytes)
                        } else {
                            let fields = [("partial", true.into()), ("bytes", p.bytes.into())];
                            writeln!(out, "{}", self.place(&name, p.position, fields))
                        }
                        .map_err(written)?;
                    }
                    Step::Error(e) => {
                        problem = true;
                        let position = reader.position();
                        let rest = reader.remaining_bytes().map_err(unread)?;
                        if text {
                            let file = file_name(&name);
                            writeln!(out, "Found {rest} invalid bytes at the end of {file}")
                                .map_err(written)?;
                            self.report(&name, &e);
                        } else {
                            let line =
                                self.place(&name, position, [("error", e.to_string().into())]);
                            writeln!(out, "{line}").map_err(written)?;
                        }
                    }
                }
            }
            // Nothing of the file shown: its header only when every file is.
            if whole {
                out.flush_header().map_err(written)?;
            }
        }
        Ok(problem)
    }

    /// Writes `batch`, an entry of input `name`, to `out` if the filter keeps it: its line and
    /// with `deep` its records (only those inside the filter's ranges). Returns false when it
    /// has a problem (a bad CRC, records that do not decode: text shows the entry and the
    /// records before the error and reports the error to [`Dumper::on_error`]'s callback;
    /// JSON shows the entry's header fields, with `deep` the records before the error, then
    /// `"error"`).
    ///
    /// # Errors
    ///
    /// An error writing to `out`.
    pub fn entry(
        &mut self,
        name: &str,
        batch: &Batch<'_>,
        out: &mut impl Write,
    ) -> io::Result<bool> {
        let verdict = self.filter.entry(batch);
        if verdict == Verdict::Skip {
            return Ok(true);
        }
        let deep = self.deep();
        let iso = self.options.iso;
        let legacy_wrapper = matches!(batch, Batch::Legacy(b) if b.is_compressed());
        let control = matches!(batch, Batch::V2(b) if b.is_control());
        let json = self.options.format == Format::Json;
        let ts_name = batch.timestamp_type().kafka_name();
        // JSON: the whole line goes into `records` and out in one write. The header comes first
        // unless it needs the records (a v0/v1 wrapper's first offset and count).
        self.records.clear();
        let header_first = json && !legacy_wrapper;
        let mut crc_valid = None;
        if header_first {
            let e = entry_json::entry(name, batch, None, None);
            crc_valid = Some(e.crc_valid);
            entry_json::write_entry_fields(&mut self.records, &e, iso, self.partition);
            if deep {
                self.records.extend_from_slice(b",\"records\":[");
            }
        }
        let records_start = self.records.len();
        let mut record_error = None;
        let mut first_offset = None;
        let mut min_ts: Option<i64> = None;
        let mut count = 0i64;
        if deep || legacy_wrapper {
            // Records of a v2 entry inside every range need no check one by one.
            let check = self.filter.filters_records();
            match batch.records(&mut self.scratch, self.options.max_decompressed_bytes) {
                Ok(iter) => {
                    for r in iter {
                        let r = match r {
                            Ok(r) => r,
                            Err(e) => {
                                record_error = Some(e);
                                break;
                            }
                        };
                        first_offset.get_or_insert(r.offset());
                        if let Some(t) = r.timestamp() {
                            min_ts = Some(min_ts.map_or(t, |m| m.min(t)));
                        }
                        count += 1;
                        if !deep || (check && !self.filter.record(&r)) {
                            continue;
                        }
                        if json {
                            if self.records.len() > records_start {
                                self.records.push(b',');
                            }
                            entry_json::write_record(
                                &mut self.records,
                                &r,
                                control,
                                self.options.bytes,
                                iso,
                                self.decoder,
                            );
                        } else {
                            entry_text::record(
                                &mut self.records,
                                &r,
                                ts_name,
                                control,
                                self.options.print_data,
                                iso,
                                self.decoder,
                            );
                        }
                    }
                }
                Err(e) => record_error = Some(e),
            }
        }
        if verdict == Verdict::Decode
            && record_error.is_none()
            && !self.filter.wrapper_in_range(first_offset, min_ts)
        {
            return Ok(true);
        }
        let (first, cnt) = if legacy_wrapper {
            (first_offset, Some(count))
        } else {
            (None, None)
        };
        if json {
            if !header_first {
                let e = entry_json::entry(name, batch, first, cnt);
                crc_valid = Some(e.crc_valid);
                self.line.clear();
                entry_json::write_entry_fields(&mut self.line, &e, iso, self.partition);
                if deep {
                    self.line.extend_from_slice(b",\"records\":[");
                    self.line.extend_from_slice(&self.records);
                }
                // The whole line is in `records` from here on, as when the header came first.
                std::mem::swap(&mut self.line, &mut self.records);
            }
            if deep {
                self.records.push(b']');
            }
            // Records that do not decode: the header as it is, the records before them, then
            // what is wrong (a damaged entry's header is what its reader wants to see).
            if let Some(e) = &record_error {
                self.records.extend_from_slice(b",\"error\":");
                crate::json::string(&mut self.records, &e.to_string());
            }
            self.records.extend_from_slice(b"}\n");
            out.write_all(&self.records)?;
        } else {
            let e = entry_json::entry("", batch, first, cnt);
            crc_valid = Some(e.crc_valid);
            self.line.clear();
            entry_text::entry(&mut self.line, batch, &e, iso);
            out.write_all(&self.line)?;
            out.write_all(&self.records)?;
            if let Some(e) = &record_error {
                self.report(name, e);
            }
        }
        Ok(crc_valid.unwrap_or(false) && record_error.is_none())
    }
}

/// kafka-dump-log's lines before a file's entries: `Dumping NAME`, and for a segment its
/// `Log starting offset`, for a snapshot its end offset and epoch.
fn file_header(header: &mut Vec<u8>, name: &str, path: Option<&Path>) {
    // Writing to a Vec<u8> cannot fail.
    let _ = writeln!(header, "Dumping {name}");
    if let Some(path) = path {
        if let Some(start) = krecords_log::check::segment_base(path) {
            let _ = writeln!(header, "Log starting offset: {start}");
        }
        if let Some((end, epoch)) = krecords_log::files::snapshot_id(path) {
            let _ = writeln!(header, "Snapshot end offset: {end}, epoch: {epoch}");
        }
    }
}

/// A writer that writes `header` (a file's `Dumping` lines) before the first bytes written
/// through it, so that a file of which nothing is shown has no header.
struct HeaderFirst<'a, W: Write> {
    header: &'a mut Vec<u8>,
    out: &'a mut W,
}

impl<W: Write> HeaderFirst<'_, W> {
    /// Writes the header if it is still pending.
    fn flush_header(&mut self) -> io::Result<()> {
        if !self.header.is_empty() {
            self.out.write_all(self.header)?;
            self.header.clear();
        }
        Ok(())
    }
}

impl<W: Write> Write for HeaderFirst<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.flush_header()?;
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
