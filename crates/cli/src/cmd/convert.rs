//! `krec convert`: rewrite a segment file or a partition directory in another message format
//! and/or codec, streaming through the codec's [`Converter`], offsets kept exactly.

use crate::args::{parse_compression, Format, ReadArgs};
use crate::outcome::{Context, Failure, Outcome};
use crate::source::{open_file, open_one_partition};
use krecords_codec::convert::{batching_text, ConvertOptions};
use krecords_codec::read::Partial;
use krecords_log::check::EntrySource;
use krecords_log::convert::NamedWriter;
use krecords_log::convert::{self, ConvertError, ConvertReport as Report, PartitionWriter};
use krecords_log::LogConfig;
use krecords_source::{classify_log, ErrorClass, Reader};
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
/// OUT a new directory, not inside IN: every segment converted under the same name,
/// krec-log.json copied with message.format.version set to the target format's, then the log
/// is recovered there to build the .index and .timeindex files (and checked to keep every
/// byte). For --magic 2 the leader-epoch-checkpoint, .txnindex files and producer snapshots
/// are copied too (offsets are unchanged); for v0/v1 they no longer apply and are left out.
///
/// IN a live partition, kafka://HOST:PORT/TOPIC/PARTITION (from --start to --end, at
/// --isolation; default read-uncommitted: a copy of the partition as the broker holds it,
/// transaction markers and aborted batches included; read-committed leaves them out) → OUT a new partition directory written as a directory input's is (segments
/// rolled at segment.bytes, 1 GiB, named by their first offset; indexes, .txnindex files,
/// producer snapshots and the leader-epoch-checkpoint built by recovery), or `-`. With --magic 2
/// (the default) and no --compression the batches are copied byte for byte, a local copy that
/// every other krec command reads.
///
/// A file output is written under a temporary name next to it (.NAME.krec-tmp-PID) and renamed
/// when complete, so a killed run leaves no shorter file under OUT's name. --start, --end and
/// --isolation choose what of a kafka:// or remote tier partition is read; a file or a
/// directory is converted whole (they are refused there).
///
/// Reports the batching and the size before and after (text, or one JSON object with
/// --format json). Exit codes: 0 converted; 1 a truncated entry at the end of an input was
/// not converted (said on stderr; the output holds everything before it) or the input is
/// corrupt; 2 usage and I/O errors.
///
/// Examples:
///   krec convert old.log new.log --compression zstd
///   krec convert old.log new.log --magic 2 --compression zstd:3 --records-per-batch 500
///   krec convert /var/kafka/events-0 /tmp/events-0-v1 --magic 1
///   krec convert --format json in.bin - --magic 0 > out.bin
///   krec convert kafka://localhost:9092/orders/3 /tmp/orders-3
#[derive(clap::Args)]
#[command(verbatim_doc_comment, after_long_help = crate::kafka::REMOTE_HELP)]
pub struct Args {
    /// A segment file, a file of entries, a partition directory, `-` for stdin, a live
    /// partition (kafka://HOST:PORT/TOPIC/PARTITION) or a remote tier partition
    /// (LOCATION/<topic>-<topicId>/<partition>, into a new partition directory).
    input: PathBuf,
    /// The output file (`-` for stdout) or, for a directory or a live partition, a new directory.
    output: PathBuf,
    /// Target message format: 0, 1 or 2 (default 2, the only one Kafka 4 takes: a v0/v1 input
    /// is up-converted unless --magic says otherwise).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=2))]
    magic: u8,
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

/// Runs the subcommand.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let live = crate::source::is_url_source(&args.input);
    let input = std::slice::from_ref(&args.input);
    args.read.kafka.client.warn_unused(input);
    let magic = args.magic;
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
    if !live && args.input.is_dir() && args.output == Path::new("-") {
        return Err(Failure::Usage(format!(
            "{}: a partition directory converts into a new directory, not to stdout (`-` takes \
             a file's or a live partition's entries)",
            args.input.display()
        )));
    }
    // Positions and isolation choose what of a live or remote partition is read; a file or a
    // directory is converted whole (its offsets are kept), so they would be ignored there.
    let range = &args.read.kafka.range;
    if !live && (range.start.is_some() || range.end.is_some() || range.isolation.is_some()) {
        return Err(Failure::Usage(format!(
            "{}: --start, --end and --isolation apply to kafka:// and remote tier inputs; a \
             file or a partition directory is converted whole (to convert part of one, `krec \
             dump`'s range is not a conversion: convert the whole and read the range from it)",
            args.input.display()
        )));
    }
    if args.output != Path::new("-") {
        // Not into the input directory: checked before anything is removed or created.
        convert::check_output(&args.input, &args.output)?;
        let removed = convert::remove_leftovers(&krecords_log::storage::FsStorage, &args.output);
        say_removed(&removed);
    }
    if live {
        convert_live(&args, &opts, &mut report)?;
    } else if args.input.is_dir() {
        convert_dir(&args.input, &args.output, &opts, &mut report)?;
    } else {
        let to_stdout = args.output == Path::new("-");
        if to_stdout {
            let mut sink =
                BufWriter::with_capacity(1 << 16, NamedWriter::stdout(io::stdout().lock()));
            convert_file(&args.input, &mut sink, &opts, &mut report)?;
            sink.flush()?;
        } else {
            // Complete or not at all: a killed run never leaves a shorter file under its name.
            convert::write_file(&args.output, |mut sink| {
                convert_file(&args.input, &mut sink, &opts, &mut report)
            })?;
        }
    }
    report.finish();
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
    // A truncated tail was not converted: the output lacks it, which the exit code says (the
    // sources layer's rule for a truncated tail, as dump, verify and stats).
    if report.truncated_bytes > 0 && krecords_source::TRUNCATED_TAIL == ErrorClass::Data {
        return Ok(Outcome::DataProblem);
    }
    Ok(Outcome::Ok)
}

/// Says which leftovers of killed runs were removed.
pub(crate) fn say_removed(paths: &[PathBuf]) {
    for p in paths {
        eprintln!(
            "krec: removed {}, left by an earlier run that did not finish",
            p.display()
        );
    }
}

fn write_report(out: &mut impl Write, r: &Report, format: Format) -> io::Result<()> {
    match format {
        Format::Json => crate::outcome::print_json(out, r),
        Format::Text => r.write_text(out),
    }
}

/// Converts the entries of one file into `sink`, one entry in memory at a time.
fn convert_file(
    input: &Path,
    sink: &mut impl Write,
    opts: &ConvertOptions,
    report: &mut Report,
) -> Result<(), Failure> {
    let (name, mut reader) =
        open_file(input).context(|| format!("cannot open {}", input.display()))?;
    convert_file_source(&name, &mut reader, sink, opts, report)
}

/// Converts the entries of `reader` ([`convert::convert_entries`]), handing the output to
/// `write` in pieces of whole entries.
fn convert_source(
    name: &str,
    reader: &mut Reader,
    opts: &ConvertOptions,
    report: &mut Report,
    write: &mut dyn FnMut(&[u8]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    // The files of the reader in turn (a remote tier partition's segments); the first one is
    // open already.
    loop {
        let converted = convert::convert_entries(reader, name, opts, write, &mut say_truncated)?;
        report.add(&converted);
        if reader.next_file()?.is_none() {
            return Ok(());
        }
    }
}

/// Says that a truncated entry at the end of an input was not converted.
fn say_truncated(name: &str, p: &Partial) {
    eprintln!(
        "krec: {name}: the {} bytes from byte {} on are not whole entries and were not \
         converted (a torn tail; if entries follow them, damage: `krec salvage` keeps those)",
        p.bytes, p.position
    );
}

/// Converts a live partition into a new partition directory (or stdout).
fn convert_live(args: &Args, opts: &ConvertOptions, report: &mut Report) -> Result<(), Failure> {
    let (name, mut reader) = open_one_partition(&args.input, &args.read, "krec convert")?;
    if args.output == Path::new("-") {
        let mut sink = BufWriter::with_capacity(1 << 16, NamedWriter::stdout(io::stdout().lock()));
        convert_file_source(&name, &mut reader, &mut sink, opts, report)?;
        return sink.flush().map_err(Failure::from);
    }
    let mut config = LogConfig::default();
    config
        .set(
            "message.format.version",
            krecords_log::convert::format_version(opts.magic),
        )
        .map_err(log_error)?;
    let mut writer = PartitionWriter::create(&args.output, &config).map_err(log_error)?;
    convert_source(&name, &mut reader, opts, report, &mut |bytes| {
        writer.write_rolling(bytes).map_err(log_error)
    })?;
    report.segments += writer.finish().map_err(log_error)?;
    Ok(())
}

/// [`convert_source`] into a writer.
fn convert_file_source(
    name: &str,
    reader: &mut Reader,
    sink: &mut impl Write,
    opts: &ConvertOptions,
    report: &mut Report,
) -> Result<(), Failure> {
    convert_source(name, reader, opts, report, &mut |bytes| {
        sink.write_all(bytes)
            .context(|| "cannot write the output".into())
    })
}

/// A log error as the command ends with it ([`classify_log`]): an output directory that holds
/// files is a usage error, a failed write an I/O error.
fn log_error(e: krecords_log::Error) -> Failure {
    let message = e.to_string();
    match classify_log(&e) {
        ErrorClass::Io => Failure::Io(io::Error::other(message), String::new()),
        ErrorClass::Usage => Failure::Usage(message),
        ErrorClass::Data => Failure::Data(message),
    }
}

/// Converts a partition directory into a new one ([`convert::convert_dir`]: the output appears
/// complete or not at all, a refused conversion writes nothing).
fn convert_dir(
    input: &Path,
    output: &Path,
    opts: &ConvertOptions,
    report: &mut Report,
) -> Result<(), Failure> {
    let mut open =
        |path: &Path| -> io::Result<Box<dyn EntrySource>> { Ok(Box::new(open_file(path)?.1)) };
    let converted = convert::convert_dir(input, output, opts, &mut open, &mut say_truncated)?;
    for c in &converted.segments {
        report.segments += 1;
        report.add(c);
    }
    Ok(())
}

impl From<ConvertError> for Failure {
    fn from(e: ConvertError) -> Failure {
        match e {
            ConvertError::Options(e) => Failure::Usage(e.to_string()),
            ConvertError::Open { name, source } => {
                Failure::Io(source, format!("cannot open {name}"))
            }
            ConvertError::Read { name, source } => {
                Failure::Io(source, format!("cannot read {name}"))
            }
            ConvertError::Refused { name, error } => refused(&name, &error),
            e @ (ConvertError::NoSegments { .. }
            | ConvertError::Root { .. }
            | ConvertError::InsideSource(_)) => Failure::Usage(e.to_string()),
            e @ ConvertError::Entry { .. } => Failure::Data(e.to_string()),
            ConvertError::Output(e) => log_error(e),
        }
    }
}

/// A conversion the target format cannot hold (zstd for v0/v1): a usage error naming the fix.
fn refused(name: &str, e: &krecords_codec::Error) -> Failure {
    let magic = match e {
        krecords_codec::Error::UnsupportedCompression { magic, .. } => *magic,
        _ => 0,
    };
    Failure::Usage(format!(
        "{name}: cannot convert: {e}; give --compression with a codec magic {magic} has \
         (none, gzip, snappy, lz4)"
    ))
}
