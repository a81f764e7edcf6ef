//! `krec convert`: rewrite a segment file or a partition directory in another message format
//! and/or codec, streaming through the codec's [`Converter`], offsets kept exactly.

use crate::args::{parse_compression, Format, ReadArgs};
use crate::kafka;
use crate::outcome::{Context, Failure, Outcome};
use crate::source::{Next, Source};
use krecords_codec::convert::{batching_text, ConvertOptions, ConvertStats, Converter};
use krecords_codec::read::Entries;
use krecords_log::files::{self, LOG_SUFFIX};
use krecords_log::storage::FsStorage;
use krecords_log::{Log, LogConfig};
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Rewrite a segment or a partition directory in another message format and/or codec.
///
/// Offsets are kept exactly (gaps included); Kafka's conversion rules apply (see the codec's
/// convert module): v2 → v0/v1 drops headers, producer state, transaction markers and empty
/// batches (counted in the report); entries already in the target format and codec are copied
/// unchanged. Every CRC is checked first: corrupt input is refused, never re-checksummed.
///
/// Batching (the rule `krec stats --what-if` predicts with, so its sizes are the sizes written
/// here): v2 batches and compressed v0/v1 wrappers keep their boundaries, one output entry each;
/// each run of uncompressed v0/v1 messages, which carry no batch boundaries, becomes entries of
/// up to 1 MiB of input (Kafka's default max.message.bytes) — one v2 batch or v0/v1 wrapper per
/// run rather than one per message. --records-per-batch N instead regroups all records (no
/// producer state, not transactional) into entries of at most N. Uncompressed v0/v1 output is
/// always one message per record.
///
/// IN a file (or `-` for stdin) → OUT a file (or `-` for stdout). IN a partition directory →
/// OUT a new directory: every segment converted under the same name, krec-log.json copied with
/// message.format.version set to the target format's, then the log is recovered there to build
/// the .index and .timeindex files (and checked to keep every byte). For --magic 2 the
/// leader-epoch-checkpoint, .txnindex files and producer snapshots are copied too (offsets
/// are unchanged); for v0/v1 they no longer apply and are left out.
///
/// IN a live partition, kafka://HOST:PORT/TOPIC/PARTITION (from --start to --end, at
/// --isolation) → OUT a new partition directory written as a directory input's is (segments
/// rolled at segment.bytes, 1 GiB, named by their first offset; indexes, .txnindex files,
/// producer snapshots and the leader-epoch-checkpoint built by recovery), or `-`. --magic is 2
/// unless given: with no --compression the batches are copied byte for byte, a local copy that
/// every other krec command reads.
///
/// Reports the batching and the size before and after (text, or one JSON object with
/// --format json).
///
/// Examples:
///   krec convert old.log new.log --magic 2 --compression zstd
///   krec convert old.log new.log --magic 2 --compression zstd:3 --records-per-batch 500
///   krec convert /var/kafka/events-0 /tmp/events-0-v1 --magic 1
///   krec convert --format json in.bin - --magic 0 > out.bin
///   krec convert kafka://localhost:9092/orders/3 /tmp/orders-3
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A segment file, a file of entries, a partition directory, `-` for stdin, or a live
    /// partition (kafka://HOST:PORT/TOPIC/PARTITION).
    input: PathBuf,
    /// The output file (`-` for stdout) or, for a directory or a live partition, a new directory.
    output: PathBuf,
    /// Target message format: 0, 1 or 2 (required, except for kafka:// input: 2).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=2))]
    magic: Option<u8>,
    /// Target codec, optionally with a level (default: each entry keeps its own):
    /// none, gzip[:1-9], snappy, lz4 (default level 9 only: Kafka writes other lz4 levels with
    /// LZ4 HC, which krecords does not have), zstd[:level] (zstd needs --magic 2).
    #[arg(long)]
    compression: Option<String>,
    /// Regroup records into entries of at most N records (v2 batches, v0/v1 wrappers) instead of
    /// the default batching (input batches kept, runs of uncompressed v0/v1 messages up to 1 MiB).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=i32::MAX as u64))]
    records_per_batch: Option<u64>,
    /// Report format: a few lines of text, or one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    read: ReadArgs,
}

/// What a conversion did, as `--format json` prints it.
#[derive(Serialize, Default)]
struct Report {
    input: String,
    output: String,
    magic: u8,
    /// The target codec, or "kept".
    compression: String,
    /// How records were grouped into entries.
    batching: String,
    segments: u64,
    entries_in: u64,
    entries_out: u64,
    entries_passed_through: u64,
    records_converted: u64,
    bytes_before: u64,
    bytes_after: u64,
    /// bytes_after / bytes_before.
    ratio: f64,
    dropped_control_batches: u64,
    dropped_empty_batches: u64,
    dropped_headers: u64,
    dropped_producer_state: u64,
    /// Bytes of a truncated entry at the end of an input, not converted.
    truncated_bytes: u64,
}

impl Report {
    fn add(&mut self, s: &ConvertStats) {
        self.entries_in += s.entries_in as u64;
        self.entries_out += s.entries_out as u64;
        self.entries_passed_through += s.entries_passed_through as u64;
        self.records_converted += s.records_converted as u64;
        self.bytes_before += s.bytes_in as u64;
        self.bytes_after += s.bytes_out as u64;
        self.dropped_control_batches += s.dropped_control_batches as u64;
        self.dropped_empty_batches += s.dropped_empty_batches as u64;
        self.dropped_headers += s.dropped_headers as u64;
        self.dropped_producer_state += s.dropped_producer_state as u64;
    }
}

/// Runs the subcommand.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let live = args
        .input
        .to_str()
        .is_some_and(|p| p.starts_with("kafka://"));
    let magic = match (args.magic, live) {
        (Some(m), _) => m,
        (None, true) => 2,
        (None, false) => {
            return Err(Failure::Usage(
                "the following required arguments were not provided: --magic <MAGIC>".into(),
            ))
        }
    };
    let (compression, level) = match &args.compression {
        Some(c) => {
            let (codec, level) = parse_compression(c)?;
            (Some(codec), level)
        }
        None => (None, None),
    };
    let opts = ConvertOptions::for_target(
        magic,
        compression,
        level,
        args.records_per_batch,
        args.read.max_decompressed_bytes(),
    );
    opts.validate().map_err(|e| Failure::Usage(e.to_string()))?;
    let mut report = Report {
        input: args.input.display().to_string(),
        output: args.output.display().to_string(),
        magic,
        compression: compression.map_or("kept".into(), |c| c.name().to_string()),
        batching: batching_text(args.records_per_batch),
        ..Report::default()
    };
    let same = args.input != Path::new("-")
        && matches!(
            (args.input.canonicalize(), args.output.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        );
    if same {
        return Err(Failure::Usage(format!(
            "{} is both the input and the output",
            args.input.display()
        )));
    }
    if live {
        convert_live(&args, &opts, &mut report)?;
    } else if args.input.is_dir() {
        convert_dir(&args.input, &args.output, &opts, &mut report)?;
    } else {
        let to_stdout = args.output == Path::new("-");
        if to_stdout {
            let mut sink = BufWriter::with_capacity(1 << 16, io::stdout().lock());
            convert_file(&args.input, &mut sink, &opts, &mut report)?;
            sink.flush()?;
        } else {
            let file = File::create(&args.output)
                .context(|| format!("cannot create {}", args.output.display()))?;
            let mut sink = BufWriter::with_capacity(1 << 16, file);
            let r = convert_file(&args.input, &mut sink, &opts, &mut report)
                .and_then(|()| sink.flush().map_err(Failure::from));
            if let Err(e) = r {
                drop(sink);
                let _ = std::fs::remove_file(&args.output);
                return Err(e);
            }
        }
    }
    report.ratio = if report.bytes_before == 0 {
        1.0
    } else {
        report.bytes_after as f64 / report.bytes_before as f64
    };
    if report.dropped_control_batches > 0 {
        eprintln!(
            "krec: dropped {} control batches (transaction markers): magic {} has none, so the \
             records of aborted transactions are visible again",
            report.dropped_control_batches, magic
        );
    }
    // With the data on stdout the report goes to stderr.
    if args.output == Path::new("-") && (live || !args.input.is_dir()) {
        let mut err = io::stderr().lock();
        write_report(&mut err, &report, args.format)?;
    } else {
        write_report(out, &report, args.format)?;
    }
    Ok(Outcome::Ok)
}

fn write_report(out: &mut impl Write, r: &Report, format: Format) -> io::Result<()> {
    match format {
        Format::Json => {
            serde_json::to_writer(&mut *out, r).map_err(io::Error::from)?;
            out.write_all(b"\n")
        }
        Format::Text => {
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
                    "  truncated: {} bytes at the end not converted",
                    r.truncated_bytes
                )?;
            }
            Ok(())
        }
    }
}

/// Converts the entries of one file into `sink`, one entry in memory at a time.
fn convert_file(
    input: &Path,
    sink: &mut impl Write,
    opts: &ConvertOptions,
    report: &mut Report,
) -> Result<(), Failure> {
    let source = Source::open(input).context(|| format!("cannot open {}", input.display()))?;
    convert_file_source(source, sink, opts, report)
}

/// Converts the entries of `source`, handing the output to `write` in pieces of whole entries.
fn convert_source(
    mut source: Source,
    opts: &ConvertOptions,
    report: &mut Report,
    write: &mut dyn FnMut(&[u8]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let name = source.name.clone();
    let mut converter = Converter::new(opts.clone()).map_err(|e| Failure::Usage(e.to_string()))?;
    let mut buf = Vec::new();
    loop {
        let next = source.next()?;
        match next {
            Next::End => break,
            Next::Entry(batch) => {
                converter
                    .push(&batch, &mut buf)
                    .map_err(|e| Failure::Data(format!("{name}: cannot convert: {e}")))?;
            }
            Next::Partial(p) => {
                eprintln!(
                    "krec: {name}: {} bytes of a truncated entry at byte {} were not converted",
                    p.bytes, p.position
                );
                report.truncated_bytes += p.bytes as u64;
                break;
            }
            Next::Error(e) => {
                return Err(Failure::Data(format!("{name}: cannot convert: {e}")));
            }
        }
        if buf.len() >= 1 << 16 {
            write(&buf)?;
            buf.clear();
        }
    }
    let stats = converter
        .finish(&mut buf)
        .map_err(|e| Failure::Data(format!("{name}: cannot convert: {e}")))?;
    write(&buf)?;
    report.add(&stats);
    Ok(())
}

/// Converts a live partition into a new partition directory (or stdout).
fn convert_live(args: &Args, opts: &ConvertOptions, report: &mut Report) -> Result<(), Failure> {
    let (inputs, live) =
        kafka::expand_one_partition(&args.input, &args.read.kafka, "krec convert")?;
    let source = inputs.open_live(&live)?;
    if args.output == Path::new("-") {
        let mut sink = BufWriter::with_capacity(1 << 16, io::stdout().lock());
        convert_file_source(source, &mut sink, opts, report)?;
        return sink.flush().map_err(Failure::from);
    }
    let output = &args.output;
    create_empty_dir(output)?;
    let result = (|| {
        let mut config = LogConfig::default();
        config
            .set(
                "message.format.version",
                krecords_log::convert::format_version(opts.magic),
            )
            .map_err(log_error)?;
        write_config(output, &config)?;
        let mut segments = SegmentWriter::new(output, config.segment_bytes as u64);
        convert_source(source, opts, report, &mut |bytes| {
            segments.write_entries(bytes)
        })?;
        report.segments += segments.finish()?;
        finish_dir(output)
    })();
    left_for_inspection(output, result)
}

/// [`convert_source`] into a writer.
fn convert_file_source(
    source: Source,
    sink: &mut impl Write,
    opts: &ConvertOptions,
    report: &mut Report,
) -> Result<(), Failure> {
    convert_source(source, opts, report, &mut |bytes| {
        sink.write_all(bytes)
            .context(|| "cannot write the output".into())
    })
}

/// Writes whole entries into segment files of a new partition directory, rolling as a log does:
/// a new segment, named by its first entry's first offset, when the next entry would take the
/// current one past `segment_bytes`.
struct SegmentWriter<'a> {
    dir: &'a Path,
    segment_bytes: u64,
    current: Option<(PathBuf, BufWriter<File>, u64)>,
    written: u64,
}

impl<'a> SegmentWriter<'a> {
    fn new(dir: &'a Path, segment_bytes: u64) -> Self {
        SegmentWriter {
            dir,
            segment_bytes,
            current: None,
            written: 0,
        }
    }

    fn write_entries(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        let mut entries = Entries::new(bytes);
        while let Some(batch) = entries
            .next_entry()
            .map_err(|e| Failure::Data(format!("converted output: {e}")))?
        {
            let size = batch.as_bytes().len() as u64;
            let full = self
                .current
                .as_ref()
                .is_some_and(|c| c.2 > 0 && c.2 + size > self.segment_bytes);
            if full || self.current.is_none() {
                self.close_current()?;
                let base = batch.first_offset().unwrap_or_else(|| batch.offset_field());
                let path = self.dir.join(files::file_name(base, LOG_SUFFIX));
                let file =
                    File::create(&path).context(|| format!("cannot create {}", path.display()))?;
                self.current = Some((path, BufWriter::with_capacity(1 << 16, file), 0));
                self.written += 1;
            }
            if let Some((path, w, n)) = self.current.as_mut() {
                w.write_all(batch.as_bytes())
                    .context(|| format!("cannot write {}", path.display()))?;
                *n += size;
            }
        }
        Ok(())
    }

    fn close_current(&mut self) -> Result<(), Failure> {
        if let Some((path, w, _)) = self.current.take() {
            let file = w.into_inner().map_err(|e| {
                Failure::Io(e.into_error(), format!("cannot write {}", path.display()))
            })?;
            file.sync_all()
                .context(|| format!("cannot sync {}", path.display()))?;
        }
        Ok(())
    }

    /// Closes the last segment; the number of segments written.
    fn finish(mut self) -> Result<u64, Failure> {
        self.close_current()?;
        Ok(self.written)
    }
}

/// Says where a failed directory conversion left its output.
fn left_for_inspection(output: &Path, result: Result<(), Failure>) -> Result<(), Failure> {
    if result.is_err() {
        eprintln!(
            "krec: the incomplete output is left in {} for inspection",
            output.display()
        );
    }
    result
}

/// Creates `dir`, or accepts it when it exists and is empty.
fn create_empty_dir(dir: &Path) -> Result<(), Failure> {
    ensure_empty(dir)?;
    std::fs::create_dir_all(dir).context(|| format!("cannot create {}", dir.display()))
}

/// Refuses an existing `dir` that is not empty.
fn ensure_empty(dir: &Path) -> Result<(), Failure> {
    if dir.exists()
        && std::fs::read_dir(dir)
            .context(|| format!("cannot list {}", dir.display()))?
            .next()
            .is_some()
    {
        return Err(Failure::Usage(format!(
            "{} exists and is not empty",
            dir.display()
        )));
    }
    Ok(())
}

/// Writes `krec-log.json` into `dir`.
fn write_config(dir: &Path, config: &LogConfig) -> Result<(), Failure> {
    let json = serde_json::to_vec_pretty(&config.to_json()).map_err(io::Error::from)?;
    std::fs::write(dir.join(files::CONFIG_FILE), json)
        .context(|| format!("cannot write {}", dir.display()))
}

/// Recovers a written partition directory (building its indexes, `.txnindex` files and producer
/// snapshots), which must keep every byte, then opens it once more to check it as a whole.
fn finish_dir(output: &Path) -> Result<(), Failure> {
    let info = Log::recover(output).map_err(log_error)?;
    if info.truncated_bytes > 0 {
        return Err(Failure::Data(format!(
            "the converted log failed recovery: {} bytes were cut ({})",
            info.truncated_bytes,
            info.problems.join("; ")
        )));
    }
    let log = Log::open(output).map_err(log_error)?;
    log.verify_indexes().map_err(log_error)?;
    log.close().map_err(log_error)
}

fn log_error(e: krecords_log::Error) -> Failure {
    if e.is_storage_error() {
        Failure::Io(io::Error::other(e.to_string()), String::new())
    } else {
        Failure::Data(e.to_string())
    }
}

/// Converts a partition directory into a new one, then recovers it there to build the indexes.
fn convert_dir(
    input: &Path,
    output: &Path,
    opts: &ConvertOptions,
    report: &mut Report,
) -> Result<(), Failure> {
    ensure_empty(output)?;
    let plan = krecords_log::convert::plan(&FsStorage, input, opts.magic).map_err(log_error)?;
    if plan.segments.is_empty() {
        return Err(Failure::Usage(format!(
            "{}: no segments (<base offset>.log files)",
            input.display()
        )));
    }
    create_empty_dir(output)?;
    let result = (|| {
        write_config(output, &plan.config)?;
        for segment in &plan.segments {
            let target = output.join(&segment.name);
            let file =
                File::create(&target).context(|| format!("cannot create {}", target.display()))?;
            let mut sink = BufWriter::with_capacity(1 << 16, file);
            convert_file(&input.join(&segment.name), &mut sink, opts, report)?;
            let file = sink.into_inner().map_err(|e| {
                Failure::Io(e.into_error(), format!("cannot write {}", target.display()))
            })?;
            file.sync_all()
                .context(|| format!("cannot sync {}", target.display()))?;
            report.segments += 1;
            if let Some(name) = &segment.copy_with {
                copy_if_exists(&input.join(name), &output.join(name))?;
            }
        }
        for name in &plan.copy_after {
            copy_if_exists(&input.join(name), &output.join(name))?;
        }
        finish_dir(output)
    })();
    left_for_inspection(output, result)
}

fn copy_if_exists(from: &Path, to: &Path) -> Result<(), Failure> {
    match std::fs::copy(from, to) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Failure::Io(e, format!("cannot copy {}", from.display()))),
    }
}
