//! `krec gen`: deterministic synthetic log entries for demos, benchmarks and sizing, from
//! [`krecords_codec::sample`].

use crate::args::EncodingArgs;
use crate::cmd::convert::say_removed;
use crate::outcome::{Failure, Outcome};
use crate::progress::{Progress, Unit};
use clap::ValueEnum;
use krecords_codec::sample::{self, Sample, SampleSpec};
use krecords_codec::Compression;
use krecords_log::convert::{remove_leftovers, write_file};
use krecords_log::storage::FsStorage;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

/// Generate synthetic log entries, deterministically: same arguments, same bytes.
///
/// Record i (0-based) gets offset O+i, timestamp T+i ms, the key "key-<i>" with i zero-padded
/// (or the key cut) to exactly --key-size bytes (a null key when 0), a value of exactly
/// --value-size bytes, and --headers headers "h0", "h1", ... with 8-byte values (v2 only).
///
/// Content of values (and header values):
///   random  uniformly random bytes: incompressible, the worst case for every codec
///   text    words from a small built-in list separated by spaces: compresses like log lines
///   json    small JSON objects {"id":..,"user":..,"event":..,"amount":..,"msg":".."},
///           exactly --value-size bytes (valid JSON from 12 bytes up; shorter ones are cut)
///
/// Each entry holds --records-per-batch records: a v2 batch or a v0/v1 compressed wrapper.
/// Uncompressed v0/v1 messages are one entry each, as in Kafka. Entries are built and written
/// one at a time, so any --records count runs in constant memory. With --output, a summary
/// goes to stdout; without it the entries themselves do (not to a terminal). A progress line
/// appears on stderr for large runs when stderr is a terminal.
///
/// Examples:
///   krec gen --magic 1 --records 1000 --value-size 100 --records-per-batch 1000 --output v1.bin
///   krec gen --records 1000000 --value-size 512 --content json --compression zstd:3 -o big.log
///   krec gen --records 10 --value-size 16 --key-size 8 --headers 2 | krec dump --deep -
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(flatten)]
    encoding: EncodingArgs,
    /// Number of records.
    #[arg(long)]
    records: u64,
    /// Bytes in every value.
    #[arg(long, default_value_t = 100)]
    value_size: usize,
    /// Bytes in every key; 0 writes null keys.
    #[arg(long, default_value_t = 0)]
    key_size: usize,
    /// Headers per record (v2 only).
    #[arg(long, default_value_t = 0)]
    headers: usize,
    /// Records per entry (v2 batch or v0/v1 compressed wrapper).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=i32::MAX as u64))]
    records_per_batch: u64,
    /// What the values contain.
    #[arg(long, value_enum, default_value_t = Content::Text)]
    content: Content,
    /// Seed of the generator.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Offset of the first record.
    #[arg(long, default_value_t = 0)]
    base_offset: i64,
    /// Timestamp of the first record in ms; record i gets T + i.
    #[arg(long, default_value_t = 1_714_000_000_000)]
    timestamp: i64,
    /// Write the entries here (`-` for stdout); without it they go to stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Format of the summary printed after writing to --output.
    #[arg(long, value_enum, default_value_t = SummaryFormat::Text)]
    format: SummaryFormat,
}

/// What generated values contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Content {
    /// Random bytes (incompressible).
    Random,
    /// Words from a built-in list (compressible like logs).
    Text,
    /// Small JSON objects (realistic events).
    Json,
}

/// Format of the summary line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummaryFormat {
    /// One human-readable line.
    Text,
    /// One JSON object: {"file","records","entries","bytes"}.
    Json,
}

impl From<Content> for sample::Content {
    fn from(c: Content) -> Self {
        match c {
            Content::Random => sample::Content::Random,
            Content::Text => sample::Content::Text,
            Content::Json => sample::Content::Json,
        }
    }
}

/// Runs the subcommand.
pub fn run(args: Args, stdout: &mut impl Write) -> Result<Outcome, Failure> {
    let (codec, level) = args.encoding.compression()?;
    if !codec.allowed_in(args.encoding.magic) {
        return Err(Failure::Usage(format!(
            "{codec} compression needs magic 2, not {}",
            args.encoding.magic
        )));
    }
    if args.headers > 0 && args.encoding.magic < 2 {
        return Err(Failure::Usage(format!(
            "magic {} cannot carry headers (--headers needs magic 2)",
            args.encoding.magic
        )));
    }
    if args.timestamp < 0 {
        return Err(Failure::Usage(format!(
            "--timestamp {} is negative",
            args.timestamp
        )));
    }
    let to_file = args.output.as_ref().filter(|p| p.as_os_str() != "-");
    if to_file.is_none() && io::stdout().is_terminal() {
        return Err(Failure::Usage(
            "refusing to write binary entries to a terminal; use --output FILE or a pipe".into(),
        ));
    }
    let name = to_file.map_or_else(|| "-".to_string(), |p| p.display().to_string());
    let stats = match to_file {
        // Whole or not at all: a failed run leaves an earlier file of that name as it was.
        Some(path) => {
            say_removed(&remove_leftovers(&FsStorage, path));
            let mut stats = Written {
                entries: 0,
                bytes: 0,
            };
            write_file(path, |mut sink| {
                stats = generate(&args, codec, level, &mut sink).map_err(|e| match e {
                    Failure::Io(e, what) if what.is_empty() => {
                        Failure::Io(e, format!("cannot write {name}"))
                    }
                    other => other,
                })?;
                Ok::<_, Failure>(())
            })?;
            stats
        }
        None => generate(&args, codec, level, stdout)?,
    };
    if to_file.is_some() {
        match args.format {
            SummaryFormat::Json => writeln!(
                stdout,
                "{}",
                serde_json::json!({"file": name, "records": args.records, "entries": stats.entries, "bytes": stats.bytes})
            )?,
            SummaryFormat::Text => {
                let per = if args.records == 0 {
                    0.0
                } else {
                    stats.bytes as f64 / args.records as f64
                };
                writeln!(
                    stdout,
                    "wrote {} records in {} entries, {} bytes ({per:.2} bytes/record), to {name}",
                    args.records, stats.entries, stats.bytes
                )?
            }
        }
    }
    Ok(Outcome::Ok)
}

struct Written {
    entries: u64,
    bytes: u64,
}

fn generate(
    args: &Args,
    codec: Compression,
    level: Option<i32>,
    sink: &mut impl Write,
) -> Result<Written, Failure> {
    let mut sample = Sample::new(SampleSpec {
        magic: args.encoding.magic,
        compression: codec,
        level,
        records: args.records,
        value_size: args.value_size,
        key_size: args.key_size,
        headers: args.headers,
        records_per_batch: args.records_per_batch,
        content: args.content.into(),
        seed: args.seed,
        base_offset: args.base_offset,
        timestamp: args.timestamp,
    });
    let mut progress = Progress::new("krec gen", Unit::Records, args.records, 100_000);
    let mut written = Written {
        entries: 0,
        bytes: 0,
    };
    while let Some(entry) = sample.next_entry() {
        let (bytes, entries) = entry.map_err(|e| Failure::Usage(e.to_string()))?;
        sink.write_all(bytes)?;
        written.entries += entries;
        written.bytes += bytes.len() as u64;
        progress.update(sample.records_done());
    }
    progress.finish();
    Ok(written)
}
