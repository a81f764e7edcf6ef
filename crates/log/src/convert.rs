//! Converting a partition directory to another message format: which files the new directory
//! keeps ([`plan`]), the scan that refuses a conversion before anything is written
//! ([`first_refused`]), and the writer of the new directory ([`PartitionWriter`]), which
//! appears complete or not at all.
//!
//! Converting a partition (`krec convert DIR OUT --magic M`) rewrites every segment under the
//! same name and copies the configuration with `message.format.version` set to the target
//! format's; the indexes are not copied but built anew by the [`PartitionWriter`]. For magic 2
//! the files whose offsets still hold are copied too: each segment's `.txnindex`, the
//! `leader-epoch-checkpoint` and the producer snapshots. For v0/v1 they no longer apply (no
//! transactions, producer state or leader epochs there) and are left out. [`plan`] reads the
//! directory through a [`Storage`] and says all of this; [`convert_dir`] does all of it,
//! converting every segment with [`convert_entries`] (the codec's `Converter` over any
//! [`EntrySource`]) into a [`PartitionWriter`], which also copies the files.

use crate::config::LogConfig;
use crate::entry_stream::EntrySource;
use crate::error::{Error, Result};
use crate::files::{
    self, CONFIG_FILE, LEADER_EPOCH_CHECKPOINT_FILE, LOG_SUFFIX, SNAPSHOT_SUFFIX, TXN_INDEX_SUFFIX,
};
use crate::log::{lock_for_writing, replay_batch, Env, Log, OpenOptions};
use crate::producer_state::ProducerStateManager;
use crate::reader::{segment_reader, SCAN_WINDOW};
use crate::segment::{offsets_check, BatchMeta, Segment};
use crate::storage::Storage;
use krecords_codec::convert::{ConvertOptions, ConvertStats, Converter};
use krecords_codec::read::{Entries, Partial, Step};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// One segment of a [`ConversionPlan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentPlan {
    /// The segment's base offset.
    pub base_offset: i64,
    /// Its file name, the same in the input and the output directory.
    pub name: String,
    /// A file to copy unchanged right after the segment is converted, when it exists (its
    /// `.txnindex`, for magic 2).
    pub copy_with: Option<String>,
}

/// What converting a partition directory writes (see the [module](self) docs).
#[derive(Debug, Clone)]
pub struct ConversionPlan {
    /// The segments to convert, in offset order (empty: the directory holds no segment).
    pub segments: Vec<SegmentPlan>,
    /// Files to copy unchanged after the segments, when they exist, in name order.
    pub copy_after: Vec<String>,
    /// The configuration to write first: the input's `krec-log.json` (the default without one,
    /// and unread when there is no segment), with `message.format.version` set to the target
    /// format's.
    pub config: LogConfig,
}

/// Plans the conversion of the partition directory `dir` to message format `magic` (0, 1 or 2).
///
/// # Errors
///
/// The directory cannot be listed, or its `krec-log.json` cannot be read or is not a valid
/// configuration.
///
/// # Examples
///
/// ```
/// use krecords_log::convert;
/// use krecords_log::storage::{MemStorage, Storage};
/// use std::path::Path;
///
/// let st = MemStorage::new();
/// let dir = Path::new("/p");
/// st.create_dir_all(dir).unwrap();
/// for name in ["00000000000000000000.log", "00000000000000000000.index",
///              "00000000000000000000.txnindex", "00000000000000000000.snapshot",
///              "leader-epoch-checkpoint"] {
///     st.create(&dir.join(name)).unwrap();
/// }
/// let v2 = convert::plan(&st, dir, 2).unwrap();
/// assert_eq!(v2.segments[0].copy_with.as_deref(), Some("00000000000000000000.txnindex"));
/// assert_eq!(v2.copy_after, ["00000000000000000000.snapshot", "leader-epoch-checkpoint"]);
/// assert_eq!(v2.config.to_json()["message.format.version"], "3.0");
///
/// let v1 = convert::plan(&st, dir, 1).unwrap();
/// assert_eq!(v1.segments[0].copy_with, None);
/// assert!(v1.copy_after.is_empty());
/// assert_eq!(v1.config.to_json()["message.format.version"], "0.10.2");
/// ```
pub fn plan(storage: &dyn Storage, dir: &Path, magic: u8) -> Result<ConversionPlan> {
    let names = storage
        .list_dir(dir)
        .map_err(|e| Error::io("list", dir, e))?;
    let mut segments: Vec<SegmentPlan> = names
        .iter()
        .filter_map(|n| {
            let base_offset = files::parse_file_name(n, LOG_SUFFIX)?;
            Some(SegmentPlan {
                base_offset,
                name: n.clone(),
                copy_with: (magic == 2).then(|| files::file_name(base_offset, TXN_INDEX_SUFFIX)),
            })
        })
        .collect();
    segments.sort_by_key(|s| s.base_offset);
    let copy_after = if magic == 2 {
        names
            .iter()
            .filter(|n| {
                *n == LEADER_EPOCH_CHECKPOINT_FILE
                    || files::parse_file_name(n, SNAPSHOT_SUFFIX).is_some()
            })
            .cloned()
            .collect()
    } else {
        Vec::new()
    };
    let mut config = if segments.is_empty() {
        LogConfig::default()
    } else {
        files::read_config(storage, dir)?.unwrap_or_default()
    };
    config.set("message.format.version", format_version(magic))?;
    Ok(ConversionPlan {
        segments,
        copy_after,
        config,
    })
}

/// The `message.format.version` that makes a log write `magic` (0.9.0, 0.10.2, or 3.0 for 2).
///
/// ```
/// assert_eq!(krecords_log::convert::format_version(1), "0.10.2");
/// ```
pub fn format_version(magic: u8) -> &'static str {
    match magic {
        0 => "0.9.0",
        1 => "0.10.2",
        _ => "3.0",
    }
}

/// An entry of the input that the conversion would refuse for its codec (see
/// [`first_refused`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The segment file holding it (a name of the plan).
    pub segment: String,
    /// The codec's refusal ([`krecords_codec::Error::UnsupportedCompression`], at the entry's
    /// position in the segment).
    pub error: krecords_codec::Error,
}

/// Scans the planned segments of `dir` for the first entry that converting with `opts` would
/// refuse for its codec ([`ConvertOptions::check_codec`]: a zstd batch keeping its codec for
/// a v0/v1 target), so that a refused conversion is found before anything is written. Reads
/// nothing when `opts` cannot refuse a codec. A segment's unreadable or truncated tail ends
/// its scan: the conversion itself reports it.
///
/// # Errors
///
/// A segment cannot be opened or read.
pub fn first_refused(
    storage: &dyn Storage,
    dir: &Path,
    plan: &ConversionPlan,
    opts: &ConvertOptions,
) -> Result<Option<Refused>> {
    if !opts.may_refuse_codecs() {
        return Ok(None);
    }
    for segment in &plan.segments {
        let path = dir.join(&segment.name);
        let file = storage
            .open_read(&path)
            .map_err(|e| Error::io("open", &path, e))?;
        let len = file.len().map_err(|e| Error::io("read", &path, e))?;
        let mut reader = segment_reader(file.as_ref(), 0, len, SCAN_WINDOW);
        loop {
            match reader.next_entry() {
                Ok(Step::Entry(batch)) => {
                    if let Err(error @ krecords_codec::Error::UnsupportedCompression { .. }) =
                        opts.check_codec(&batch)
                    {
                        return Ok(Some(Refused {
                            segment: segment.name.clone(),
                            error,
                        }));
                    }
                }
                Ok(_) => break,
                Err(e) => return Err(Error::io("read", &path, e)),
            }
        }
    }
    Ok(None)
}

/// Why a conversion stopped.
#[derive(Debug)]
pub enum ConvertError {
    /// The options cannot convert anything (see `ConvertOptions::validate`): a usage error.
    Options(krecords_codec::Error),
    /// An input (named) cannot be opened.
    Open {
        /// The input's name.
        name: String,
        /// The error.
        source: io::Error,
    },
    /// An input (named) cannot be read.
    Read {
        /// The input's name.
        name: String,
        /// The error.
        source: io::Error,
    },
    /// The target format refuses an entry of the input (named) for its codec (zstd for v0/v1):
    /// a usage error, fixed by converting to another codec.
    Refused {
        /// The input's name.
        name: String,
        /// The codec's refusal.
        error: krecords_codec::Error,
    },
    /// An entry of the input (named) cannot be read or converted: bad data.
    Entry {
        /// The input's name.
        name: String,
        /// The codec's error.
        error: krecords_codec::Error,
    },
    /// The input directory holds no segment.
    NoSegments {
        /// The input directory.
        dir: PathBuf,
    },
    /// The input directory is a broker's data directory (a `log.dirs` root), not a partition
    /// directory: a usage error.
    Root {
        /// The input directory.
        dir: PathBuf,
        /// What it holds ([`data_dir::root_summary`](crate::data_dir::root_summary)).
        holds: String,
    },
    /// Writing the output, or the log's checks of it, failed.
    Output(Error),
    /// The output is the input directory or inside it ([`check_output`]): a usage error.
    InsideSource(InsideSource),
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConvertError::Options(e) => write!(f, "{e}"),
            ConvertError::Open { name, source } => write!(f, "cannot open {name}: {source}"),
            ConvertError::Read { name, source } => write!(f, "cannot read {name}: {source}"),
            ConvertError::Refused { name, error } | ConvertError::Entry { name, error } => {
                write!(f, "{name}: cannot convert: {error}")
            }
            ConvertError::NoSegments { dir } => {
                write!(
                    f,
                    "{}: no segments (<base offset>.log files)",
                    dir.display()
                )
            }
            ConvertError::Root { dir, holds } => write!(
                f,
                "{}: {holds}, not a partition directory: convert takes one partition directory \
                 or segment files (convert each partition: `krec convert {}/TOPIC-N OUTPUT`)",
                dir.display(),
                dir.display()
            ),
            ConvertError::Output(e) => write!(f, "{e}"),
            ConvertError::InsideSource(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ConvertError {}

impl From<Error> for ConvertError {
    fn from(e: Error) -> Self {
        ConvertError::Output(e)
    }
}

/// What [`convert_entries`] converted.
#[derive(Debug, Clone, Default)]
pub struct Converted {
    /// The converter's figures.
    pub stats: ConvertStats,
    /// A truncated entry at the end of the input, not converted.
    pub truncated: Option<Partial>,
}

/// What a conversion did over all its inputs, as `krec convert` reports it (`--format json`
/// serializes it).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ConvertReport {
    /// The input's name.
    pub input: String,
    /// The output's name.
    pub output: String,
    /// The target magic.
    pub magic: u8,
    /// The target codec, or "kept".
    pub compression: String,
    /// How records were grouped into entries.
    pub batching: String,
    /// Segments written (a partition directory's conversion).
    pub segments: u64,
    /// Entries read.
    pub entries_in: u64,
    /// Entries written.
    pub entries_out: u64,
    /// Entries copied unchanged (already in the target format and codec).
    pub entries_passed_through: u64,
    /// Records re-encoded.
    pub records_converted: u64,
    /// Bytes read.
    pub bytes_before: u64,
    /// Bytes written.
    pub bytes_after: u64,
    /// bytes_after / bytes_before (set by [`ConvertReport::finish`]).
    pub ratio: f64,
    /// Control batches dropped (the target magic has none).
    pub dropped_control_batches: u64,
    /// Batches left empty and dropped.
    pub dropped_empty_batches: u64,
    /// Record headers dropped (the target magic has none).
    pub dropped_headers: u64,
    /// Batches whose producer id, epoch and sequence were dropped.
    pub dropped_producer_state: u64,
    /// Bytes of a truncated entry at the end of an input, not converted.
    pub truncated_bytes: u64,
}

impl ConvertReport {
    /// Adds one input's conversion.
    pub fn add(&mut self, c: &Converted) {
        let s = &c.stats;
        let n = |v: usize| v as u64;
        self.truncated_bytes += c.truncated.map_or(0, |p| n(p.bytes));
        self.entries_in += n(s.entries_in);
        self.entries_out += n(s.entries_out);
        self.entries_passed_through += n(s.entries_passed_through);
        self.records_converted += n(s.records_converted);
        self.bytes_before += n(s.bytes_in);
        self.bytes_after += n(s.bytes_out);
        self.dropped_control_batches += n(s.dropped_control_batches);
        self.dropped_empty_batches += n(s.dropped_empty_batches);
        self.dropped_headers += n(s.dropped_headers);
        self.dropped_producer_state += n(s.dropped_producer_state);
    }

    /// Sets the ratio once every input is added (1 when nothing was read).
    pub fn finish(&mut self) {
        self.ratio = if self.bytes_before == 0 {
            1.0
        } else {
            self.bytes_after as f64 / self.bytes_before as f64
        };
    }

    /// Writes the report as `krec convert` prints it: a head line, then indented lines of
    /// segments, batching, entries, records, size, what was dropped and truncated.
    pub fn write_text(&self, out: &mut impl io::Write) -> io::Result<()> {
        let r = self;
        writeln!(
            out,
            "{} -> {}: magic {}, compression {}",
            r.input, r.output, r.magic, r.compression
        )?;
        if r.segments > 0 {
            writeln!(out, "  segments:  {}", r.segments)?;
        }
        writeln!(out, "  batching:  {}", r.batching)?;
        writeln!(
            out,
            "  entries:   {} -> {} ({} copied unchanged)",
            r.entries_in, r.entries_out, r.entries_passed_through
        )?;
        writeln!(out, "  records:   {} re-encoded", r.records_converted)?;
        writeln!(
            out,
            "  size:      {} -> {} bytes ({:.1}%)",
            r.bytes_before,
            r.bytes_after,
            r.ratio * 100.0
        )?;
        let mut dropped = Vec::new();
        if r.dropped_control_batches > 0 {
            dropped.push(format!("{} control batches", r.dropped_control_batches));
        }
        if r.dropped_empty_batches > 0 {
            dropped.push(format!("{} empty batches", r.dropped_empty_batches));
        }
        if r.dropped_headers > 0 {
            dropped.push(format!("{} headers", r.dropped_headers));
        }
        if r.dropped_producer_state > 0 {
            dropped.push(format!(
                "the producer id, epoch and sequence of {} batches",
                r.dropped_producer_state
            ));
        }
        if !dropped.is_empty() {
            writeln!(out, "  dropped:   {}", dropped.join(", "))?;
        }
        if r.truncated_bytes > 0 {
            writeln!(
                out,
                "  not converted: {} bytes that are not whole entries (a torn tail, or damage \
                 that `krec salvage` recovers the intact entries after)",
                r.truncated_bytes
            )?;
        }
        Ok(())
    }
}

/// Converts the entries of `source` (named `name` in errors) with `opts`, handing the output to
/// `write` in pieces of whole entries (64 KiB or more, and the rest at the end), one input entry
/// in memory at a time. A truncated entry at the end is not converted: it ends the input, and
/// `on_truncated` hears of it at once.
///
/// # Errors
///
/// [`ConvertError::Read`], [`ConvertError::Refused`] (an entry's codec, which the target format
/// cannot hold), [`ConvertError::Entry`] (an entry that does not read or convert), or `write`'s
/// error.
pub fn convert_entries<E: From<ConvertError>>(
    source: &mut dyn EntrySource,
    name: &str,
    opts: &ConvertOptions,
    write: &mut dyn FnMut(&[u8]) -> std::result::Result<(), E>,
    on_truncated: &mut dyn FnMut(&str, &Partial),
) -> std::result::Result<Converted, E> {
    convert_within(
        source,
        name,
        opts,
        &mut Bounds::default(),
        write,
        on_truncated,
    )
}

/// Where the entries of one input may hold offsets: after the last offset of what was read
/// before it (the previous segment's entries too), and, for a segment of a partition
/// directory, from its base offset up to the next segment's.
#[derive(Debug, Default)]
struct Bounds {
    /// The last offset of the previous entry, and the file holding it when that is another
    /// input (the previous segment).
    previous: Option<(i64, Option<String>)>,
    /// The segment's base offset (its name).
    base: Option<i64>,
    /// The next segment's base offset and its file's name.
    next: Option<(i64, String)>,
}

impl Bounds {
    /// Why an entry holding `first..=last` is not where its offsets belong, if it is not: an
    /// offset field is damaged (no CRC covers a v2 base offset) or a segment file misnamed.
    /// Such an entry is bad input here, not a converted log that fails recovery.
    fn refuse(&self, first: i64, last: i64) -> Option<String> {
        const WHAT: &str = "(`krec verify` lists the damage, `krec salvage` keeps every intact \
                            entry)";
        if let Some((p, file)) = self.previous.as_ref().filter(|(p, _)| first <= *p) {
            let of = file
                .as_ref()
                .map_or_else(String::new, |f| format!(" (the last entry of {f})"));
            return Some(format!(
                "the entry holds offsets {first}..={last}, not after the previous entry's last \
                 offset {p}{of}: an offset field is damaged {WHAT}"
            ));
        }
        if let Some(base) = self.base.filter(|&b| first < b) {
            return Some(format!(
                "the entry holds offsets {first}..={last}, below the base offset {base} its \
                 segment file is named by: an offset field is damaged or the file is misnamed \
                 {WHAT}"
            ));
        }
        if let Some((next, file)) = self.next.as_ref().filter(|(n, _)| last >= *n) {
            return Some(format!(
                "the entry holds offsets {first}..={last}, reaching the next segment's base \
                 offset {next} ({file}): an offset field is damaged or a segment file is \
                 misnamed {WHAT}"
            ));
        }
        None
    }
}

/// [`convert_entries`], refusing entries outside `bounds` (which follow the entries read).
fn convert_within<E: From<ConvertError>>(
    source: &mut dyn EntrySource,
    name: &str,
    opts: &ConvertOptions,
    bounds: &mut Bounds,
    write: &mut dyn FnMut(&[u8]) -> std::result::Result<(), E>,
    on_truncated: &mut dyn FnMut(&str, &Partial),
) -> std::result::Result<Converted, E> {
    let named = |error| ConvertError::Entry {
        name: name.to_string(),
        error,
    };
    let mut converter = Converter::new(opts.clone()).map_err(ConvertError::Options)?;
    let mut buf = Vec::new();
    let mut truncated = None;
    loop {
        let next = source.next_entry().map_err(|e| ConvertError::Read {
            name: name.to_string(),
            source: e,
        })?;
        match next {
            Step::End => break,
            Step::Entry(batch) => {
                // A v0/v1 wrapper's first offset needs decompression: its last stands in, as
                // in recovery's check.
                let last = batch.last_offset();
                let first = batch.first_offset().unwrap_or(last);
                if let Some(reason) = bounds.refuse(first, last) {
                    return Err(named(krecords_codec::Error::InvalidRecord {
                        at: batch.position(),
                        reason,
                    })
                    .into());
                }
                bounds.previous = Some((last, None));
                converter
                    .push(&batch, &mut buf)
                    .map_err(|error| match error {
                        krecords_codec::Error::UnsupportedCompression { .. } => {
                            ConvertError::Refused {
                                name: name.to_string(),
                                error,
                            }
                        }
                        error => named(error),
                    })?;
            }
            Step::Partial(p) => {
                on_truncated(name, &p);
                truncated = Some(p);
                break;
            }
            Step::Error(e) => return Err(named(e).into()),
        }
        if buf.len() >= 1 << 16 {
            write(&buf)?;
            buf.clear();
        }
    }
    let stats = converter.finish(&mut buf).map_err(named)?;
    write(&buf)?;
    Ok(Converted { stats, truncated })
}

/// What [`convert_dir`] converted: each segment's [`Converted`], in offset order.
#[derive(Debug, Clone, Default)]
pub struct ConvertedDir {
    /// One per segment.
    pub segments: Vec<Converted>,
}

/// Converts the partition directory `input` into the new partition directory `output` (which
/// must not exist, or be empty) with `opts`: [`plan`], [`first_refused`] before anything is
/// written, then every segment through [`convert_entries`] (`open` opens a segment file as an
/// entry source, named by its path) into a [`PartitionWriter`], with the planned files copied.
/// `output` holds the whole converted partition afterwards, or, after any error, what it held
/// before.
///
/// # Errors
///
/// [`ConvertError::InsideSource`], [`ConvertError::NoSegments`] ([`ConvertError::Root`] for
/// a broker's data directory), [`ConvertError::Refused`],
/// the errors of [`convert_entries`], and [`ConvertError::Output`] for the plan, the writer and
/// the checks of the new log.
pub fn convert_dir(
    input: &Path,
    output: &Path,
    opts: &ConvertOptions,
    open: &mut dyn FnMut(&Path) -> io::Result<Box<dyn EntrySource>>,
    on_truncated: &mut dyn FnMut(&str, &Partial),
) -> std::result::Result<ConvertedDir, ConvertError> {
    check_output(input, output)?;
    let fs = crate::storage::FsStorage;
    let plan = plan(&fs, input, opts.magic)?;
    if plan.segments.is_empty() {
        if let Some(holds) = crate::data_dir::root_summary(input) {
            let dir = input.to_path_buf();
            return Err(ConvertError::Root { dir, holds });
        }
        return Err(ConvertError::NoSegments {
            dir: input.to_path_buf(),
        });
    }
    if let Some(r) = first_refused(&fs, input, &plan, opts)? {
        return Err(ConvertError::Refused {
            name: input.join(&r.segment).display().to_string(),
            error: r.error,
        });
    }
    let mut writer = PartitionWriter::create(output, &plan.config)?;
    let mut out = ConvertedDir::default();
    // Offsets go up across segments too, each segment's within its name and the next one's.
    let mut previous = None;
    for (i, segment) in plan.segments.iter().enumerate() {
        writer.start_segment(segment.base_offset)?;
        let path = input.join(&segment.name);
        let name = path.display().to_string();
        let mut source = open(&path).map_err(|e| ConvertError::Open {
            name: name.clone(),
            source: e,
        })?;
        let mut bounds = Bounds {
            previous,
            base: Some(segment.base_offset),
            next: plan
                .segments
                .get(i + 1)
                .map(|n| (n.base_offset, input.join(&n.name).display().to_string())),
        };
        let converted = convert_within(
            source.as_mut(),
            &name,
            opts,
            &mut bounds,
            &mut |bytes: &[u8]| writer.write(bytes).map_err(ConvertError::Output),
            on_truncated,
        )?;
        previous = bounds
            .previous
            .map(|(last, file)| (last, file.or_else(|| Some(name.clone()))));
        out.segments.push(converted);
        if let Some(name) = &segment.copy_with {
            writer.copy_if_exists(&input.join(name), name)?;
        }
    }
    for name in &plan.copy_after {
        writer.copy_if_exists(&input.join(name), name)?;
    }
    writer.finish()?;
    Ok(out)
}

/// Bytes written into a segment between two starts of its writeback to the device.
const WRITEBACK_BYTES: u64 = 8 << 20;

/// A new partition directory, written completely or not at all: everything goes into a
/// temporary sibling directory (`.<name>.krec-tmp-<pid>`), which [`PartitionWriter::finish`]
/// closes as a log and renames into place. Dropping the writer before that, or a failure of
/// `finish`, removes the temporary directory: the output path never holds a partial
/// directory.
///
/// The writer does what the log's recovery would do while it writes, so that nothing is read
/// again: each entry gets recovery's checks (structure, CRC, offsets increasing within the
/// segment), the offset and time indexes are built as an append builds them, the producer
/// state is replayed (aborted transactions into the `.txnindex` of the segment holding their
/// marker, snapshots at the bases of the last two segments and at the log end, as Kafka's
/// loader takes them), and `finish` closes the directory as a clean shutdown. Where that
/// cannot be done exactly — an entry recovery would not keep, offsets past a segment's 32-bit
/// relative range (which recovery splits), a segment that does not follow the one before,
/// files copied in with [`PartitionWriter::copy_if_exists`], nothing written at all — the
/// writer only writes, and `finish` recovers the directory with the log, opens it once more
/// to check its indexes whole, and fails where recovery would cut anything. Both ways give
/// the same files (tested).
#[derive(Debug)]
pub struct PartitionWriter {
    env: Env,
    output: PathBuf,
    tmp: PathBuf,
    config: LogConfig,
    segment_bytes: u64,
    /// The segments written, the last one open.
    written: Vec<Segment>,
    /// Whether everything written so far was checked and indexed as recovery would have.
    indexed: bool,
    /// The producer state replayed from what was written.
    producer_state: ProducerStateManager,
    /// The last offset written into the open segment (its base - 1 when none).
    prev_last: i64,
    /// How far into the open segment writing to the device was started.
    written_back: u64,
    metas: Vec<BatchMeta>,
    scratch: Vec<u8>,
    now: i64,
    done: bool,
}

impl PartitionWriter {
    /// Starts the partition directory `output` on the real file system, with the configuration
    /// `config` (written as `krec-log.json`; its `segment.bytes` rolls
    /// [`PartitionWriter::write_rolling`]). The temporary directories that killed runs left
    /// next to `output` are removed first ([`remove_leftovers`]; call it before this to learn
    /// their names).
    ///
    /// # Errors
    ///
    /// As [`PartitionWriter::create_with`].
    pub fn create(output: &Path, config: &LogConfig) -> Result<PartitionWriter> {
        PartitionWriter::create_with(output, config, Env::fs())
    }

    /// As [`PartitionWriter::create`], through `env`'s storage (which must rename and remove
    /// directories, as the real file system does).
    ///
    /// # Errors
    ///
    /// [`Error::AlreadyExists`] when `output` exists and is not an empty directory; the
    /// temporary directory or the configuration cannot be written.
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_codec::write::{NewRecord, V2Builder};
    /// use krecords_log::convert::PartitionWriter;
    /// use krecords_log::{Log, LogConfig};
    ///
    /// let dir = std::env::temp_dir().join(format!("krec-doc-writer-{}", std::process::id()));
    /// let out = dir.join("events-0");
    /// let mut w = PartitionWriter::create(&out, &LogConfig::default())?;
    /// let mut b = V2Builder::new(0);
    /// b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"x"))).unwrap();
    /// w.write_rolling(&b.finish().unwrap())?;
    /// assert!(!out.exists(), "nothing at the output before finish");
    /// assert_eq!(w.finish()?, 1);
    /// assert_eq!(Log::open_read_only(&out)?.log_end_offset(), 1);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), krecords_log::Error>(())
    /// ```
    pub fn create_with(output: &Path, config: &LogConfig, env: Env) -> Result<PartitionWriter> {
        let st = env.storage.clone();
        let exists = st
            .exists(output)
            .map_err(|e| Error::io("stat", output, e))?;
        let listed = if exists {
            Some(st.list_dir(output))
        } else {
            None
        };
        if let Some(listed) = listed.filter(|l| !l.as_ref().is_ok_and(Vec::is_empty)) {
            // Unlisted (a file, not a directory): no names to show.
            let mut holds = listed.unwrap_or_default();
            holds.sort();
            return Err(Error::AlreadyExists {
                path: output.to_path_buf(),
                holds,
            });
        }
        // Killed runs' temporary directories go first; a caller that names them to its user
        // calls `remove_leftovers` itself before this (as krec does), so this finds none.
        remove_leftovers(st.as_ref(), output);
        let tmp = temporary_path(output);
        let now = env.clock.now_ms();
        let mut writer = PartitionWriter {
            env,
            output: output.to_path_buf(),
            tmp,
            config: config.clone(),
            segment_bytes: config.segment_bytes as u64,
            written: Vec::new(),
            indexed: true,
            producer_state: ProducerStateManager::new(0, now),
            prev_last: -1,
            written_back: 0,
            metas: Vec::new(),
            scratch: Vec::new(),
            now,
            done: false,
        };
        // A leftover of an earlier process with the same id never counts.
        writer.remove_tmp();
        st.create_dir_all(&writer.tmp)
            .map_err(|e| Error::io("create", &writer.tmp, e))?;
        let json = serde_json::to_vec_pretty(&config.to_json()).unwrap_or_default();
        files::write_atomic(st.as_ref(), &writer.tmp, CONFIG_FILE, &json)?;
        Ok(writer)
    }

    /// Starts a new segment file for the entries from `base_offset` on (sealing the current
    /// one: final time index entry, indexes trimmed, synced).
    ///
    /// # Errors
    ///
    /// The files cannot be created, or the current one sealed.
    pub fn start_segment(&mut self, base_offset: i64) -> Result<()> {
        let st = self.env.storage.clone();
        match self.written.last_mut() {
            Some(last) => {
                last.seal()?;
                // Recovery refuses segments that do not follow each other.
                self.indexed &= base_offset >= last.next_offset();
            }
            None => self.producer_state = ProducerStateManager::new(base_offset, self.now),
        }
        let segment = Segment::create(st.as_ref(), &self.tmp, base_offset, &self.config, self.now)?;
        self.written.push(segment);
        self.prev_last = base_offset.saturating_sub(1);
        self.written_back = 0;
        if self.indexed {
            // The loader's replay snapshots the state at the bases of the last two segments;
            // `finish` deletes those of the earlier ones.
            self.producer_state.set_map_end_offset(base_offset);
            self.producer_state.take_snapshot(st.as_ref(), &self.tmp)?;
        }
        Ok(())
    }

    /// Appends `bytes` (whole entries) to the current segment, starting one at the first
    /// entry's first offset when there is none.
    ///
    /// # Errors
    ///
    /// The bytes cannot be written.
    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.write_entries(bytes, true)
    }

    /// As [`PartitionWriter::write`], for entries whose CRCs the caller has just checked
    /// (salvage keeps only such entries): recovery's other checks still apply.
    pub(crate) fn write_checked(&mut self, bytes: &[u8]) -> Result<()> {
        self.write_entries(bytes, false)
    }

    fn write_entries(&mut self, bytes: &[u8], check_crc: bool) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        if self.written.is_empty() {
            let base = Entries::new(bytes)
                .next()
                .and_then(|b| b.ok())
                .map_or(0, |b| b.first_offset().unwrap_or_else(|| b.offset_field()));
            self.start_segment(base)?;
        }
        let st = self.env.storage.clone();
        let Some(segment) = self.written.last_mut() else {
            return Ok(());
        };
        self.metas.clear();
        let mut aborted = Vec::new();
        if self.indexed {
            self.indexed = index_entries(
                bytes,
                check_crc,
                segment,
                &mut self.prev_last,
                &mut self.metas,
                &mut |b| {
                    aborted.extend(replay_batch(&mut self.producer_state, b, &mut self.scratch))
                },
            );
        }
        if !self.indexed {
            self.metas.clear();
            aborted.clear();
        }
        segment.append(bytes, &[], &self.metas)?;
        for t in aborted {
            segment.append_aborted(st.as_ref(), t)?;
        }
        // The device writes while the next bytes are made: the final syncs wait for less.
        if segment.size().saturating_sub(self.written_back) >= WRITEBACK_BYTES {
            segment.start_writeback(self.written_back);
            self.written_back = segment.size();
        }
        Ok(())
    }

    /// Appends whole entries, rolling segments as a log does: a new segment, named by its first
    /// entry's first offset, when the next entry would take the current one past
    /// `segment.bytes`.
    ///
    /// # Errors
    ///
    /// `bytes` do not hold whole entries, or cannot be written.
    pub fn write_rolling(&mut self, bytes: &[u8]) -> Result<()> {
        let mut entries = Entries::new(bytes);
        while let Some(batch) = entries
            .next_entry()
            .map_err(|e| Error::corrupt_codec(crate::Location::Read { position: 0 }, e))?
        {
            let size = batch.as_bytes().len() as u64;
            let full = self
                .written
                .last()
                .is_some_and(|c| c.size() > 0 && c.size() + size > self.segment_bytes);
            if full || self.written.is_empty() {
                self.start_segment(batch.first_offset().unwrap_or_else(|| batch.offset_field()))?;
            }
            self.write(batch.as_bytes())?;
        }
        Ok(())
    }

    /// Copies the file `from` (on the same storage) into the new directory as `name`, when it
    /// exists. `finish` then recovers the directory (the copied files take part in it).
    ///
    /// # Errors
    ///
    /// The file cannot be read or written.
    pub fn copy_if_exists(&mut self, from: &Path, name: &str) -> Result<()> {
        let st = self.env.storage.as_ref();
        let Some(bytes) = files::read_small_file(st, from)? else {
            return Ok(());
        };
        self.indexed = false;
        let to = self.tmp.join(name);
        let file = st.create(&to).map_err(|e| Error::io("create", &to, e))?;
        file.write_at(&bytes, 0)
            .map_err(|e| Error::io("write", &to, e))?;
        file.sync().map_err(|e| Error::io("sync", &to, e))
    }

    /// Writes `cache` as the new directory's `leader-epoch-checkpoint`.
    pub(crate) fn store_epochs(&self, cache: &crate::epoch::LeaderEpochCache) -> Result<()> {
        cache.store(self.env.storage.as_ref(), &self.tmp)
    }

    /// The segments started so far.
    pub fn segments(&self) -> u64 {
        self.written.len() as u64
    }

    /// Closes the new directory as a log after a clean shutdown and moves it into place
    /// durably. Returns the number of segments written.
    ///
    /// # Errors
    ///
    /// A storage error; [`Error::CorruptFile`] when recovery would cut written bytes; the
    /// errors of opening the new log. The output path is then left as it was.
    pub fn finish(mut self) -> Result<u64> {
        let segments = self.segments();
        if self.indexed && !self.written.is_empty() {
            self.close_indexed()?;
        } else {
            self.recover()?;
        }
        let st = self.env.storage.clone();
        st.sync_dir(&self.tmp)
            .map_err(|e| Error::io("sync", &self.tmp, e))?;
        st.rename(&self.tmp, &self.output)
            .map_err(|e| Error::io("rename", &self.tmp, e))?;
        self.done = true;
        if let Some(parent) = self.output.parent().filter(|p| !p.as_os_str().is_empty()) {
            st.sync_dir(parent)
                .map_err(|e| Error::io("sync", parent, e))?;
        }
        Ok(segments)
    }

    /// Closes what was written and indexed as the log: the producer state's last snapshots,
    /// the leader epochs cut to the log, the recovery point and the clean shutdown marker.
    fn close_indexed(&mut self) -> Result<()> {
        let st = self.env.storage.clone();
        let segments = std::mem::take(&mut self.written);
        let log_end = segments.last().map_or(0, Segment::next_offset);
        let ps = &mut self.producer_state;
        ps.set_map_end_offset(log_end);
        ps.take_snapshot(st.as_ref(), &self.tmp)?;
        if let Some(keep_from) = segments.len().checked_sub(2).and_then(|i| segments.get(i)) {
            ps.delete_snapshots_before(st.as_ref(), &self.tmp, keep_from.base_offset())?;
        }
        let lock = lock_for_writing(st.as_ref(), &self.tmp, OpenOptions::default())?;
        let producer_state = std::mem::replace(ps, ProducerStateManager::new(0, self.now));
        let log = Log::assemble(
            &self.tmp,
            self.env.clone(),
            self.config.clone(),
            segments,
            producer_state,
            lock,
        )?;
        log.close()
    }

    /// Recovers the new directory with the log (which must keep every byte) and opens it once
    /// more to check its indexes.
    fn recover(&mut self) -> Result<()> {
        for s in &mut self.written {
            s.flush()?;
        }
        self.written.clear();
        let info = Log::recover_with(&self.tmp, self.env.clone())?;
        if info.truncated_bytes > 0 {
            return Err(Error::CorruptFile {
                path: self.output.clone(),
                reason: format!(
                    "the converted log failed recovery: {} bytes were cut ({})",
                    info.truncated_bytes,
                    info.problems.join("; ")
                ),
            });
        }
        let log = Log::open_with(&self.tmp, self.env.clone())?;
        log.verify_indexes()?;
        log.close()
    }

    /// Removes the temporary directory and its files, as far as it can.
    fn remove_tmp(&mut self) {
        self.written.clear();
        let st = self.env.storage.as_ref();
        if let Ok(names) = st.list_dir(&self.tmp) {
            for name in names {
                let _ = st.remove(&self.tmp.join(name));
            }
        }
        let _ = st.remove_dir(&self.tmp);
    }
}

/// The suffix of a temporary output, before the id of the process writing it.
const TMP_MARK: &str = ".krec-tmp-";

/// Where this process writes `output` until it is complete: `.NAME.krec-tmp-PID` next to it
/// (hidden, and named by the process, so that runs never share one and a leftover tells whose
/// it was).
pub fn temporary_path(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy());
    output.with_file_name(format!(".{name}{TMP_MARK}{}", std::process::id()))
}

/// Writes the file `output` whole or not at all, as `krec convert FILE OUT` does: `write` fills
/// a buffered file under [`temporary_path`], which is synced and renamed to `output` once
/// `write` has succeeded. The sink's write errors name `output`: an [`io::Error`] of the
/// failure's kind holding an [`Error::Io`] (`cannot write OUT: No space left on device`). On
/// any failure the temporary file is removed and `output` is left as it was, so a killed or
/// failed run never leaves a shorter file under the output's name.
///
/// # Errors
///
/// `write`'s error, or [`ConvertError::Output`] when the temporary file cannot be created,
/// written, synced or renamed.
///
/// # Examples
///
/// ```
/// use krecords_log::convert::{write_file, ConvertError};
///
/// let dir = std::env::temp_dir().join(format!("krec-doc-write-file-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let out = dir.join("converted.log");
/// write_file(&out, |sink| -> Result<(), ConvertError> {
///     sink.write_all(b"entries").map_err(|e| ConvertError::Read { name: "x".into(), source: e })
/// })?;
/// assert_eq!(std::fs::read(&out).unwrap(), b"entries");
/// // A failed write leaves the output as it was and no temporary file behind.
/// let failed = write_file(&out, |sink| -> Result<(), ConvertError> {
///     sink.write_all(b"half").unwrap();
///     Err(ConvertError::NoSegments { dir: dir.clone() })
/// });
/// assert!(failed.is_err());
/// assert_eq!(std::fs::read(&out).unwrap(), b"entries");
/// assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), ConvertError>(())
/// ```
pub fn write_file<E: From<ConvertError>>(
    output: &Path,
    write: impl FnOnce(&mut dyn io::Write) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let fail = |e: Error| E::from(ConvertError::Output(e));
    let mut file = OutputFile::create(output).map_err(fail)?;
    // Dropped unfinished on failure: the temporary file is removed.
    let name = file.path().to_path_buf();
    write(&mut NamedWriter::new(&mut file, name))?;
    file.finish().map_err(fail)
}

/// A writer whose errors name where its bytes go: each is an [`io::Error`] of the failure's
/// kind (a closed pipe stays [`io::ErrorKind::BrokenPipe`]) holding [`Error::Io`], which reads
/// `cannot write out.log: No space left on device (os error 28)`. [`write_file`]'s sink names
/// the output, never its temporary file; `krec` names standard output with [`Self::stdout`].
/// An error that already holds a log error passes unchanged.
pub struct NamedWriter<W> {
    inner: W,
    op: &'static str,
    name: PathBuf,
}

impl<W> NamedWriter<W> {
    /// `inner`, whose write errors read `cannot write NAME: ...`.
    pub fn new(inner: W, name: impl Into<PathBuf>) -> Self {
        NamedWriter {
            inner,
            op: "write",
            name: name.into(),
        }
    }

    /// `inner` as standard output: its write errors read `cannot write to standard output:
    /// ...`.
    pub fn stdout(inner: W) -> Self {
        NamedWriter {
            inner,
            op: "write to",
            name: PathBuf::from("standard output"),
        }
    }

    fn named(&self, e: io::Error) -> io::Error {
        if e.get_ref().is_some_and(|i| i.is::<Error>()) {
            return e;
        }
        io::Error::new(e.kind(), Error::io(self.op, &self.name, e))
    }
}

impl<W: io::Write> io::Write for NamedWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).map_err(|e| self.named(e))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().map_err(|e| self.named(e))
    }
}

/// A file written whole or not at all (the rule of [`write_file`], for writers that cannot be
/// a closure): the bytes go into a buffered file under [`temporary_path`] next to `output`,
/// and [`OutputFile::finish`] syncs it and renames it to `output`. Dropping it unfinished,
/// or a failed `finish`, removes the temporary file: `output` keeps what it held before (or
/// stays absent) and never holds a partial file.
///
/// Writes return the plain I/O error; [`OutputFile::path`] names the output for messages.
///
/// # Examples
///
/// ```
/// use krecords_log::convert::OutputFile;
/// use std::io::Write;
///
/// let dir = std::env::temp_dir().join(format!("krec-doc-output-file-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let out = dir.join("damaged.bin");
/// std::fs::write(&out, b"earlier").unwrap();
/// let mut file = OutputFile::create(&out)?;
/// file.write_all(b"half").unwrap();
/// drop(file); // unfinished: `out` is as it was and no temporary file is left
/// assert_eq!(std::fs::read(&out).unwrap(), b"earlier");
/// assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
/// let mut file = OutputFile::create(&out)?;
/// file.write_all(b"whole").unwrap();
/// file.finish()?;
/// assert_eq!(std::fs::read(&out).unwrap(), b"whole");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), krecords_log::Error>(())
/// ```
#[derive(Debug)]
pub struct OutputFile {
    output: PathBuf,
    tmp: PathBuf,
    /// `None` once finished.
    sink: Option<io::BufWriter<std::fs::File>>,
}

impl OutputFile {
    /// Creates the temporary file of `output` ([`temporary_path`]); `output` itself is not
    /// touched until [`OutputFile::finish`].
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming `output`: it is a directory, or the temporary file cannot be
    /// created (a missing or read-only directory).
    pub fn create(output: &Path) -> Result<OutputFile> {
        if output.is_dir() {
            let e = io::Error::new(io::ErrorKind::IsADirectory, "it is a directory");
            return Err(Error::io("write", output, e));
        }
        let tmp = temporary_path(output);
        // Errors name the output, as the user gave it, not the temporary file.
        let file = std::fs::File::create(&tmp).map_err(|e| Error::io("create", output, e))?;
        Ok(OutputFile {
            output: output.to_path_buf(),
            tmp,
            sink: Some(io::BufWriter::with_capacity(1 << 16, file)),
        })
    }

    /// The output's path, as given.
    pub fn path(&self) -> &Path {
        &self.output
    }

    /// Flushes and syncs the temporary file and renames it to the output, replacing what was
    /// there.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming the output when the flush, the sync or the rename fails; the
    /// temporary file is removed then and the output left as it was.
    pub fn finish(mut self) -> Result<()> {
        use io::Write as _;
        let Some(mut sink) = self.sink.take() else {
            let e = io::Error::other("the file was finished already");
            return Err(Error::io("write", &self.output, e));
        };
        let output = &self.output;
        let done = sink
            .flush()
            .map_err(|e| Error::io("write", output, e))
            .and_then(|()| {
                sink.get_ref()
                    .sync_all()
                    .map_err(|e| Error::io("sync", output, e))
            })
            .and_then(|()| {
                std::fs::rename(&self.tmp, output).map_err(|e| Error::io("replace", output, e))
            });
        drop(sink);
        if done.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        done
    }
}

impl io::Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.sink.as_mut() {
            Some(s) => s.write(buf),
            None => Err(io::Error::other("the file was finished already")),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self.sink.as_mut() {
            Some(s) => s.write_all(buf),
            None => Err(io::Error::other("the file was finished already")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sink.as_mut().map_or(Ok(()), io::Write::flush)
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if self.sink.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Whether `path` (existing or not) is the directory `dir` or inside it, links resolved: the
/// nearest existing ancestor of `path` is resolved and the rest of `path` appended to it.
/// `false` for a `dir` that is no local directory (a file, a URL, a path that does not exist).
///
/// # Examples
///
/// ```
/// use krecords_log::convert::is_inside;
///
/// let dir = std::env::temp_dir().join(format!("krec-doc-inside-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// assert!(is_inside(&dir, &dir));
/// assert!(is_inside(&dir.join("new/deeper"), &dir));
/// assert!(!is_inside(&dir.with_extension("sibling"), &dir));
/// assert!(!is_inside(&dir, &dir.join("missing")));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn is_inside(path: &Path, dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    // The nearest existing ancestor, resolved, and the rest of `path` after it.
    let mut rest = Vec::new();
    let mut at = path.to_path_buf();
    let resolved = loop {
        if let Ok(p) = at.canonicalize() {
            break p;
        }
        match (at.file_name(), at.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_owned());
                at = if parent.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    parent.to_path_buf()
                };
            }
            _ => return false,
        }
    };
    let full: PathBuf = std::iter::once(resolved.into_os_string())
        .chain(rest.into_iter().rev())
        .collect();
    dir.is_dir() && full.starts_with(&dir)
}

/// The first of `sources` that is a local directory `output` is or is inside ([`is_inside`],
/// links resolved; sources that are no local directories, such as files and URLs, never
/// hold it). A command writing `output` from `sources` would put its files into the data it
/// reads, where a broker would take them for its own: `krec export`, `krec salvage` and
/// `krec convert` refuse such an output before they create anything ([`InsideSource`]).
///
/// # Examples
///
/// ```
/// use krecords_log::convert::source_holding;
/// use std::path::PathBuf;
///
/// let root = std::env::temp_dir().join(format!("krec-doc-holding-{}", std::process::id()));
/// let part = root.join("events-0");
/// std::fs::create_dir_all(&part).unwrap();
/// let sources = [PathBuf::from("kafka://localhost:9092/events/0"), part.clone()];
/// assert_eq!(source_holding(&part.join("salvaged"), &sources), Some(part.as_path()));
/// assert_eq!(source_holding(&root.join("events-copy-0"), &sources), None);
/// # std::fs::remove_dir_all(&root).unwrap();
/// ```
pub fn source_holding<'a, P: AsRef<Path>>(output: &Path, sources: &'a [P]) -> Option<&'a Path> {
    sources
        .iter()
        .map(AsRef::as_ref)
        .find(|dir| is_inside(output, dir))
}

/// An output that is a source directory or inside one ([`source_holding`]): refused, as its
/// files would land in the data read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsideSource {
    /// The output, as given.
    pub output: PathBuf,
    /// The source directory holding it, as given.
    pub dir: PathBuf,
}

impl InsideSource {
    /// `Err` when one of `sources` holds `output` ([`source_holding`]).
    ///
    /// # Errors
    ///
    /// The [`InsideSource`] naming `output` and the first source directory holding it.
    pub fn check<P: AsRef<Path>>(output: &Path, sources: &[P]) -> std::result::Result<(), Self> {
        match source_holding(output, sources) {
            Some(dir) => Err(InsideSource {
                output: output.to_path_buf(),
                dir: dir.to_path_buf(),
            }),
            None => Ok(()),
        }
    }
}

impl fmt::Display for InsideSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the output {} is the source directory {} or inside it: its files would land in \
             the data read (a broker would take them for its own); write the output into \
             another directory",
            self.output.display(),
            self.dir.display()
        )
    }
}

impl std::error::Error for InsideSource {}

/// Refuses converting `input` into `output` when `output` is the directory `input` or inside
/// it ([`InsideSource::check`]); a file or a URL input holds no output. `krec convert` asks
/// before anything is written, removed or created; [`convert_dir`] asks too.
///
/// # Errors
///
/// [`ConvertError::InsideSource`].
pub fn check_output(input: &Path, output: &Path) -> std::result::Result<(), ConvertError> {
    InsideSource::check(output, &[input]).map_err(ConvertError::InsideSource)
}

/// Removes the temporary outputs that killed runs left next to `output` (files or directories
/// named as [`temporary_path`] names them, by processes that no longer run) and returns their
/// paths. A leftover of a process that still runs is kept, and so is every leftover where
/// processes cannot be looked up (systems without Linux's `/proc`); a leftover that cannot be
/// removed is left as it is (the output itself never depends on it).
pub fn remove_leftovers(st: &dyn Storage, output: &Path) -> Vec<PathBuf> {
    let (Some(parent), Some(name)) = (output.parent(), output.file_name()) else {
        return Vec::new();
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let prefix = format!(".{}{TMP_MARK}", name.to_string_lossy());
    let Ok(names) = st.list_dir(parent) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in names {
        let Some(pid) = entry.strip_prefix(&prefix) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if process_may_run(pid) {
            continue;
        }
        let path = parent.join(&entry);
        let gone = match st.list_dir(&path) {
            Ok(files) => {
                for f in files {
                    let _ = st.remove(&path.join(f));
                }
                st.remove_dir(&path).is_ok()
            }
            Err(_) => st.remove(&path).is_ok(),
        };
        if gone {
            removed.push(path);
        }
    }
    removed
}

/// Whether process `pid` may still run: it is this process, or Linux's `/proc` has it, or
/// there is no `/proc` to tell.
fn process_may_run(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

/// Checks the entries of `bytes` as recovery does (their CRCs only when `check_crc`) and
/// describes them for `segment`'s indexes (into `metas`, positions within `bytes`), calling
/// `replay` on each; `prev_last` follows. Returns whether every byte was such an entry that
/// the segment can index.
fn index_entries(
    bytes: &[u8],
    check_crc: bool,
    segment: &Segment,
    prev_last: &mut i64,
    metas: &mut Vec<BatchMeta>,
    replay: &mut dyn FnMut(&krecords_codec::read::Batch<'_>),
) -> bool {
    let mut entries = Entries::new(bytes);
    let mut end = 0usize;
    loop {
        let b = match entries.next_entry() {
            Ok(Some(b)) => b,
            Ok(None) => return end == bytes.len(),
            Err(_) => return false,
        };
        let last = b.last_offset();
        if (check_crc && !b.is_crc_valid())
            || offsets_check(&b, segment.base_offset(), *prev_last).is_some()
            || !segment.can_convert_offset(last)
        {
            return false;
        }
        let size = b.size_in_bytes();
        metas.push(BatchMeta {
            position: b.position() as u64,
            size: size as u64,
            last_offset: last,
            max_timestamp: b.max_timestamp(),
        });
        replay(&b);
        *prev_last = last;
        end = b.position() + size;
    }
}

impl Drop for PartitionWriter {
    fn drop(&mut self) {
        if !self.done {
            self.remove_tmp();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemStorage;

    /// A failed rename (the output became a non-empty directory meanwhile) names the output,
    /// removes the temporary file and leaves the output as it was; an unfinished file is
    /// removed when dropped, and a failure of the writing closure leaves the output as well.
    #[test]
    fn output_file_failures_leave_the_output_and_no_temporary() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.bin");
        let names = || -> Vec<String> {
            let mut v: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        let mut file = OutputFile::create(&out).unwrap();
        file.write_all(b"new bytes").unwrap();
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("held"), b"x").unwrap();
        let e = file.finish().unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("cannot replace {}: ", out.display())),
            "{e}"
        );
        assert_eq!(names(), ["out.bin"]);
        assert_eq!(std::fs::read(out.join("held")).unwrap(), b"x");
        // A directory is refused before anything is created.
        let e = OutputFile::create(&out).unwrap_err();
        assert!(e.to_string().contains("out.bin: it is a directory"), "{e}");
        std::fs::remove_dir_all(&out).unwrap();
        std::fs::write(&out, b"earlier").unwrap();
        let mut file = OutputFile::create(&out).unwrap();
        assert_eq!(file.path(), out);
        file.write_all(&[7; 100_000]).unwrap();
        drop(file);
        assert_eq!(names(), ["out.bin"]);
        assert_eq!(std::fs::read(&out).unwrap(), b"earlier");
        let failed = write_file(&out, |sink| {
            sink.write_all(&[7; 100_000]).unwrap();
            Err(ConvertError::NoSegments {
                dir: dir.path().into(),
            })
        });
        assert!(failed.is_err());
        assert_eq!(names(), ["out.bin"]);
        assert_eq!(std::fs::read(&out).unwrap(), b"earlier");
        // A missing directory: the error names the output, not the temporary file.
        let missing = dir.path().join("no/such.bin");
        let e = OutputFile::create(&missing).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "cannot create {}: No such file or directory (os error 2)",
                missing.display()
            )
        );
    }

    fn dir_with(names: &[(&str, &[u8])]) -> (MemStorage, &'static Path) {
        let st = MemStorage::new();
        let dir = Path::new("/p");
        st.create_dir_all(dir).unwrap();
        for (name, bytes) in names {
            st.create(&dir.join(name))
                .unwrap()
                .write_at(bytes, 0)
                .unwrap();
        }
        (st, dir)
    }

    #[test]
    fn segments_in_offset_order_with_their_txnindex_for_magic_2_only() {
        let (st, dir) = dir_with(&[
            ("00000000000000000100.log", b""),
            ("00000000000000000007.log", b""),
            ("00000000000000000007.index", b""),
            ("00000000000000000007.timeindex", b""),
            ("00000000000000000100.txnindex", b""),
            ("00000000000000000042.snapshot", b""),
            ("leader-epoch-checkpoint", b""),
            ("krec-recovery-point", b""),
            ("krec-clean-shutdown", b""),
            ("x.log", b""),
            ("00000000000000000009.log.deleted", b""),
            ("00000000000000000009.snapshot.tmp", b""),
        ]);
        let p = plan(&st, dir, 2).unwrap();
        let names: Vec<_> = p.segments.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["00000000000000000007.log", "00000000000000000100.log"]
        );
        assert_eq!(
            p.segments.iter().map(|s| s.base_offset).collect::<Vec<_>>(),
            [7, 100]
        );
        assert_eq!(
            p.segments[1].copy_with.as_deref(),
            Some("00000000000000000100.txnindex")
        );
        assert_eq!(
            p.copy_after,
            ["00000000000000000042.snapshot", "leader-epoch-checkpoint"]
        );
        for magic in [0, 1] {
            let p = plan(&st, dir, magic).unwrap();
            assert_eq!(p.segments.len(), 2);
            assert!(p.segments.iter().all(|s| s.copy_with.is_none()));
            assert!(p.copy_after.is_empty());
            assert_eq!(
                p.config.to_json()["message.format.version"],
                format_version(magic)
            );
        }
    }

    #[test]
    fn the_configuration_is_the_inputs_with_the_target_format() {
        let mut config = LogConfig::default();
        config.set("segment.bytes", "12345").unwrap();
        let json = serde_json::to_vec(&config.to_json()).unwrap();
        let (st, dir) = dir_with(&[("00000000000000000000.log", b""), ("krec-log.json", &json)]);
        let p = plan(&st, dir, 1).unwrap();
        assert_eq!(p.config.to_json()["segment.bytes"], 12345);
        assert_eq!(p.config.to_json()["message.format.version"], "0.10.2");
    }

    /// Segments of entries for the writer's two ways: plain v2 batches with leader epochs and
    /// timestamps out of order, idempotent batches, committed and aborted transactions (one
    /// open across a segment boundary), compacted offset gaps; or v0/v1 messages.
    fn mixed_segments(legacy: bool) -> Vec<(i64, Vec<Vec<u8>>)> {
        use krecords_codec::write::{
            end_txn_marker, EndTxnBatch, LegacyBuilder, NewRecord, V2Builder,
        };
        let rec = |i: i64| NewRecord::new(1_000 + (i * 37) % 11, Some(b"k"), Some(b"some value"));
        if legacy {
            let mut segs = Vec::new();
            let mut next = 0;
            for (magic, codec) in [
                (0, krecords_codec::Compression::None),
                (1, krecords_codec::Compression::Gzip),
            ] {
                let base = next;
                let mut list = Vec::new();
                for _ in 0..6 {
                    let mut b = LegacyBuilder::new(magic, next)
                        .unwrap()
                        .compression(codec, None)
                        .unwrap();
                    for _ in 0..3 {
                        b.append(&rec(next)).unwrap();
                        next += 1;
                    }
                    list.push(b.finish().unwrap());
                }
                segs.push((base, list));
            }
            return segs;
        }
        let marker = |offset: i64, pid: i64, commit: bool| {
            end_txn_marker(&EndTxnBatch {
                base_offset: offset,
                partition_leader_epoch: 2,
                producer_id: pid,
                producer_epoch: 0,
                coordinator_epoch: 1,
                commit,
                timestamp: 2_000 + offset,
            })
            .unwrap()
        };
        // A v2 batch of `n` records from `offset`, of producer `(id, sequence)` if any.
        let v2 = |offset: i64, n: i64, epoch: i32, producer: Option<(i64, i32)>, txn: bool| {
            let mut b = V2Builder::new(offset).partition_leader_epoch(epoch);
            if let Some((pid, seq)) = producer {
                b = b.producer(pid, 0, seq).transactional(txn);
            }
            for i in 0..n {
                b.append(&rec(offset + i)).unwrap();
            }
            b
        };
        let mut a = Vec::new();
        for i in 0..5 {
            a.push(v2(i * 3, 3, 1, None, false).finish().unwrap());
        }
        a.push(v2(15, 3, 2, Some((7, 0)), true).finish().unwrap());
        a.push(v2(18, 3, 2, Some((8, 0)), true).finish().unwrap());
        a.push(marker(21, 7, false));
        a.push(marker(22, 8, true));
        a.push(v2(23, 2, 2, Some((10, 0)), true).finish().unwrap());
        let mut b = Vec::new();
        for i in 0..4 {
            b.push(
                v2(30 + i * 2, 2, 3, Some((9, i as i32 * 2)), false)
                    .finish()
                    .unwrap(),
            );
        }
        b.push(marker(38, 10, false));
        let mut c = Vec::new();
        let mut start = 39;
        for gap in [3, 1, 9] {
            start += gap;
            let mut bb = v2(start, 0, 3, None, false);
            bb.append_with_offset(start + 2, &rec(start)).unwrap();
            c.push(bb.finish().unwrap());
            start += 3;
        }
        let a2 = a.split_off(3);
        vec![(0, a), (9, a2), (25, b), (39, c)]
    }

    /// Every file of `dir`, by name, with its bytes.
    fn files_of(st: &MemStorage, dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut names = st.list_dir(dir).unwrap();
        names.sort();
        names
            .into_iter()
            .map(|n| {
                let f = st.open_read(&dir.join(&n)).unwrap();
                let mut buf = vec![0; f.len().unwrap() as usize];
                f.read_exact_at(&mut buf, 0).unwrap();
                (n, buf)
            })
            .collect()
    }

    #[test]
    fn indexing_while_writing_gives_the_files_recovery_gives() {
        use crate::clock::ManualClock;
        use std::sync::Arc;
        let mut config = LogConfig::default();
        config.set("index.interval.bytes", "100").unwrap();
        config.set("segment.index.bytes", "4096").unwrap();
        for legacy in [false, true] {
            let mut outputs = Vec::new();
            for indexed in [true, false] {
                let clock = Arc::new(ManualClock::new(5_000));
                let st = MemStorage::with_clock(clock.clone());
                let env = Env::new(Arc::new(st.clone()), clock);
                let out = Path::new("/out/t-0");
                let mut w = PartitionWriter::create_with(out, &config, env).unwrap();
                w.indexed = indexed;
                let mut epochs = crate::epoch::LeaderEpochCache::default();
                for (base, entries) in mixed_segments(legacy) {
                    w.start_segment(base).unwrap();
                    for e in entries {
                        for b in Entries::new(&e) {
                            let b = b.unwrap();
                            if let Some(epoch) = b.partition_leader_epoch() {
                                epochs.assign(epoch, b.first_offset().unwrap());
                            }
                        }
                        w.write(&e).unwrap();
                    }
                }
                assert_eq!(w.indexed, indexed, "legacy {legacy}");
                w.store_epochs(&epochs).unwrap();
                assert_eq!(w.finish().unwrap(), if legacy { 2 } else { 4 });
                outputs.push(files_of(&st, out));
            }
            let names: Vec<&str> = outputs[0].iter().map(|f| f.0.as_str()).collect();
            assert_eq!(
                names,
                outputs[1].iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
                "legacy {legacy}"
            );
            for (fast, slow) in outputs[0].iter().zip(&outputs[1]) {
                assert!(fast.1 == slow.1, "legacy {legacy}: {} differs", fast.0);
            }
            if !legacy {
                for want in [
                    "00000000000000000009.txnindex",
                    "00000000000000000025.txnindex",
                    "00000000000000000025.snapshot",
                    "00000000000000000039.snapshot",
                    "leader-epoch-checkpoint",
                ] {
                    assert!(names.contains(&want), "{want} in {names:?}");
                }
            }
        }
    }

    #[test]
    fn what_recovery_would_not_keep_is_left_to_recovery_and_refused() {
        // An entry with offsets going backwards: the writer stops indexing, and finish
        // recovers and refuses, as before.
        let mut w = PartitionWriter::create_with(
            Path::new("/out/t-0"),
            &LogConfig::default(),
            Env::memory(),
        )
        .unwrap();
        w.write(&batch(5, krecords_codec::Compression::None))
            .unwrap();
        assert!(w.indexed);
        w.write(&batch(3, krecords_codec::Compression::None))
            .unwrap();
        assert!(!w.indexed);
        let e = w.finish().unwrap_err();
        assert!(e.to_string().contains("failed recovery"), "{e}");
    }

    fn batch(offset: i64, compression: krecords_codec::Compression) -> Vec<u8> {
        let mut b = krecords_codec::write::V2Builder::new(offset).compression(compression, None);
        b.append(&krecords_codec::write::NewRecord::new(1, None, Some(b"v")))
            .unwrap();
        b.finish().unwrap()
    }

    #[test]
    fn a_zstd_batch_is_refused_for_v0_v1_only_when_it_keeps_its_codec() {
        use krecords_codec::Compression::{Gzip, Zstd};
        let mut seg = batch(0, Gzip);
        let second = seg.len();
        seg.extend(batch(1, Zstd));
        let (st, dir) = dir_with(&[("00000000000000000000.log", &seg)]);
        let p = plan(&st, dir, 1).unwrap();
        let keep = |magic| ConvertOptions::batched(magic);
        let r = first_refused(&st, dir, &p, &keep(1)).unwrap().unwrap();
        assert_eq!(r.segment, "00000000000000000000.log");
        assert!(
            matches!(
                r.error,
                krecords_codec::Error::UnsupportedCompression { at, .. } if at == second
            ),
            "{:?}",
            r.error
        );
        assert_eq!(first_refused(&st, dir, &p, &keep(2)).unwrap(), None);
        let gzip = ConvertOptions {
            compression: Some(Gzip),
            ..keep(1)
        };
        assert_eq!(first_refused(&st, dir, &p, &gzip).unwrap(), None);
    }

    #[test]
    fn a_partition_writer_leaves_nothing_unless_it_finishes() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("p-0");
        let names = || -> Vec<String> {
            let mut n: Vec<String> = std::fs::read_dir(root.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            n.sort();
            n
        };
        // Dropped midway: no output, no temporary directory.
        let mut w = PartitionWriter::create(&out, &LogConfig::default()).unwrap();
        w.write(&batch(0, krecords_codec::Compression::None))
            .unwrap();
        assert_eq!(names().len(), 1, "only the temporary directory");
        drop(w);
        assert!(names().is_empty(), "{:?}", names());
        // Finished: the whole log, rolled at segment.bytes.
        let mut config = LogConfig::default();
        config.set("segment.bytes", "100").unwrap();
        let mut w = PartitionWriter::create(&out, &config).unwrap();
        let mut bytes = batch(0, krecords_codec::Compression::None);
        bytes.extend(batch(1, krecords_codec::Compression::None));
        w.write_rolling(&bytes).unwrap();
        assert_eq!(w.segments(), 2);
        assert_eq!(w.finish().unwrap(), 2);
        assert_eq!(names(), ["p-0"]);
        let log = Log::open_read_only(&out).unwrap();
        assert_eq!((log.log_end_offset(), log.segment_files().len()), (2, 2));
        // An output that is not empty is refused.
        let e = PartitionWriter::create(&out, &config).unwrap_err();
        assert!(matches!(e, Error::AlreadyExists { .. }), "{e}");
        assert_eq!(names(), ["p-0"]);
    }

    #[test]
    fn a_directory_converts_whole_or_is_refused_before_anything_is_written() {
        use crate::entry_stream::EntryStream;
        let root = tempfile::tempdir().unwrap();
        let input = root.path().join("in-0");
        let mut log = Log::create(&input, LogConfig::default()).unwrap();
        for codec in [
            krecords_codec::Compression::Gzip,
            krecords_codec::Compression::Zstd,
        ] {
            log.append(&batch(0, codec), crate::AppendOrigin::Client)
                .unwrap();
        }
        log.close().unwrap();
        let out = root.path().join("out-0");
        let mut open = |p: &Path| -> io::Result<Box<dyn EntrySource>> {
            Ok(Box::new(EntryStream::open_file(p, None)?))
        };
        let mut truncated = |_: &str, _: &Partial| panic!("no truncated entry");
        let v1 = ConvertOptions::batched(1);
        let e = convert_dir(&input, &out, &v1, &mut open, &mut truncated).unwrap_err();
        assert!(matches!(e, ConvertError::Refused { .. }), "{e}");
        assert!(e.to_string().contains("zstd"), "{e}");
        assert_eq!(
            std::fs::read_dir(root.path()).unwrap().count(),
            1,
            "nothing written"
        );
        let v2 = ConvertOptions::batched(2);
        let done = convert_dir(&input, &out, &v2, &mut open, &mut truncated).unwrap();
        assert_eq!(done.segments.len(), 1);
        assert_eq!(done.segments[0].stats.entries_in, 2);
        let converted = Log::open_read_only(&out).unwrap();
        assert_eq!(converted.log_end_offset(), 2);
        let e = convert_dir(&input, &out, &v2, &mut open, &mut truncated).unwrap_err();
        assert!(
            matches!(e, ConvertError::Output(Error::AlreadyExists { .. })),
            "{e}"
        );
        let empty = root.path().join("empty-0");
        std::fs::create_dir(&empty).unwrap();
        let e = convert_dir(&empty, &out, &v2, &mut open, &mut truncated).unwrap_err();
        assert!(matches!(e, ConvertError::NoSegments { .. }), "{e}");
    }

    #[test]
    fn a_broken_configuration_is_an_error_only_beside_segments() {
        let (st, dir) = dir_with(&[("krec-log.json", b"{not json")]);
        let p = plan(&st, dir, 2).unwrap();
        assert!(p.segments.is_empty());
        st.create(&dir.join("00000000000000000000.log")).unwrap();
        let e = plan(&st, dir, 2).unwrap_err();
        assert!(
            e.to_string().starts_with("/p/krec-log.json: not JSON"),
            "{e}"
        );
    }
}
