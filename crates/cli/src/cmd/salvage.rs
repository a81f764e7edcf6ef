//! `krec salvage`: every intact entry of damaged segments into a new partition directory (the
//! log crate's [`krecords_log::salvage`]); this command picks the inputs and prints the report.

use crate::args::Format;
use crate::cmd::convert::say_removed;
use crate::outcome::{Failure, Outcome};
use crate::progress::{Progress, Unit};
use krecords_log::convert::{remove_leftovers, OutputFile};
use krecords_log::salvage::{
    self, Input, InputError, OutputState, SalvageOptions, SalvageReport, SalvageSink,
};
use krecords_log::storage::FsStorage;
use krecords_log::LogConfig;
use serde::Serialize;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Recover every intact entry of damaged segments into a new partition directory.
///
/// Where a broker's recovery truncates a segment at its first invalid entry and deletes every
/// later segment, salvage goes on: after a damaged region it finds the next position where a
/// whole entry starts (size, magic and header plausible, CRC checking; v0/v1 messages and
/// wrappers and v2 batches of every codec) and continues there. It gets past flipped bits, a
/// lying length field, runs of zeros (preallocated space, torn pages), garbage, a cut-off tail
/// and a damaged first entry. A CRC-valid entry whose offsets go backwards or overlap what was
/// kept is reported and left out, and so is one whose base offset (a field no CRC covers) the
/// next entry shows to be damaged. The input is never modified.
///
/// The output is a partition directory in Kafka's layout that a broker opens as it is: every
/// intact entry byte for byte at its offset, one segment per input segment (same name, unless misnamed), the
/// offset, time and transaction indexes and producer snapshots built as the log's recovery
/// would, while writing,
/// the leader-epoch-checkpoint rebuilt from the kept batches; it appears complete or not at
/// all. One thing is added: Kafka ends a producer's open transaction with that producer's
/// next end marker, so when damage swallowed a transaction's marker and the producer's next
/// entry shows another transaction, salvage writes an ABORT marker at the first lost offset
/// (the records stay, hidden at read_committed; --leave-transactions-open writes none). A
/// transaction the producer writes nothing after is left open and reported.
///
/// SOURCE is segment files (read in the offset order of their contents, whatever their names
/// and order) or one directory: a partition directory, or a broker's log.dirs root, where every
/// partition is scanned, the damaged ones salvaged into OUTPUT/<partition>, intact ones
/// reported and left alone (--all salvages them too); a partition with a misnamed segment is
/// not intact. Several directories are refused (salvage each, or give their root), and so is
/// an OUTPUT inside the source directory.
///
/// Each partition's output directory appears only when complete, and salvage never writes
/// into or over an existing one. To go on after a run that stopped part way (a full disk,
/// say), run the same command again with --skip-existing: the partitions already salvaged
/// are kept, reported as skipped (with what their scan finds), and the rest salvaged. A
/// directory holding anything a salvage does not write is refused even then.
///
/// The report, per partition: damaged byte ranges (file, position, length, reason, and the
/// offsets lost between the entries kept around them), entries left out, entries, records and
/// offset ranges kept, segments renamed (a name at or below the offsets before it, or above its
/// own: written under its first kept offset, as a broker needs), kept batches whose partition
/// leader epoch goes down (kept as Kafka's recovery keeps them; krec verify reports them),
/// what Kafka's recovery keeps.
/// Exit 0 when the input was intact, 1 when something was lost or renamed (the report says
/// what), 2 for usage or I/O errors.
///
/// Examples:
///   krec salvage /var/kafka/events-0 --output /tmp/events-0
///   krec salvage 00000000000000000000.log 00000000000000004096.log --output /tmp/events-0
///   krec salvage /var/kafka/data --output /tmp/salvaged --keep-damaged /tmp/damaged.bin
///   krec salvage /var/kafka/events-0 --output /tmp/events-0 --format json | jq .damaged
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Segment files, or one directory: a partition directory or a log.dirs root.
    #[arg(required = true)]
    source: Vec<PathBuf>,
    /// The new partition directory (for a log.dirs root: the directory of the new partition
    /// directories). Must not exist or be empty (see --skip-existing), and not be inside the
    /// source directory.
    #[arg(long, short)]
    output: PathBuf,
    /// Go on after an earlier run: a partition whose output directory already holds a
    /// partition salvaged by an earlier run (written only when complete) is kept and skipped;
    /// one holding other files is still refused.
    #[arg(long)]
    skip_existing: bool,
    /// Also write the bytes of every damaged region to FILE, in the report's order.
    #[arg(long, value_name = "FILE")]
    keep_damaged: Option<PathBuf>,
    /// The largest entry accepted (its size field); bigger claims are damage. Bounds memory.
    /// At least 14, the size of the smallest Kafka entry (a v0 message without key or value).
    #[arg(long, value_name = "BYTES", default_value_t = salvage::DEFAULT_MAX_ENTRY_SIZE,
          value_parser = at_least_an_entry)]
    max_entry_size: usize,
    /// In a log.dirs root, salvage intact partitions too.
    #[arg(long)]
    all: bool,
    /// Write no ABORT marker for a transaction whose end marker was lost (by default one is
    /// written at the first lost offset, so the producer's next marker cannot end it).
    #[arg(long)]
    leave_transactions_open: bool,
    /// Report format: text, or JSON (one object per partition).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// One partition's report, as `--format json` prints it.
#[derive(Serialize)]
struct Line<'a> {
    source: String,
    /// The new partition directory, when one was written (or kept: `skipped`).
    output: Option<String>,
    /// Whether `output` was salvaged by an earlier run and kept (`--skip-existing`): the
    /// report is then this run's scan.
    skipped: bool,
    lost_anything: bool,
    #[serde(flatten)]
    report: &'a SalvageReport,
}

/// Progress on a terminal, and the damaged bytes to a side file.
struct Sink {
    progress: Option<Progress>,
    label: String,
    damaged: Option<OutputFile>,
}

impl SalvageSink for Sink {
    fn progress(&mut self, scanned: u64, total: u64) {
        let label = &self.label;
        self.progress
            .get_or_insert_with(|| Progress::new(label.clone(), Unit::Bytes, total, 64 << 20))
            .update(scanned);
    }

    fn wants_damaged(&self) -> bool {
        self.damaged.is_some()
    }

    fn damaged(&mut self, _file: &Path, _position: u64, bytes: &[u8]) -> io::Result<()> {
        match self.damaged.as_mut() {
            Some(w) => w.write_all(bytes),
            None => Ok(()),
        }
    }

    fn damaged_path(&self) -> Option<&Path> {
        self.damaged.as_ref().map(OutputFile::path)
    }
}

impl From<InputError> for Failure {
    fn from(e: InputError) -> Failure {
        match e {
            InputError::Log(e) => failure(e),
            e => Failure::Usage(e.to_string()),
        }
    }
}

/// Maps a log error: an existing output is a usage error, I/O errors exit 2 too, the rest 1.
fn failure(e: krecords_log::Error) -> Failure {
    match e {
        krecords_log::Error::AlreadyExists { .. } => Failure::Usage(e.to_string()),
        krecords_log::Error::Io { .. } => {
            Failure::Io(io::Error::other(e.to_string()), String::new())
        }
        e => Failure::Data(e.to_string()),
    }
}

/// Runs the subcommand.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let options = SalvageOptions {
        max_entry_size: args.max_entry_size,
        close_lost_transactions: !args.leave_transactions_open,
        ..SalvageOptions::default()
    };
    // Sources and output checked before anything is created.
    let input = Input::of(&args.source, &args.output)?;
    // Whole or not at all: renamed into place when the salvage succeeds, removed otherwise.
    let damaged = match &args.keep_damaged {
        Some(p) => {
            say_removed(&remove_leftovers(&FsStorage, p));
            Some(OutputFile::create(p).map_err(failure)?)
        }
        None => None,
    };
    let mut sink = Sink {
        progress: None,
        label: "salvage".into(),
        damaged,
    };
    let mut lost = false;
    let partitions = match &input {
        Input::Root { partitions, .. } => partitions.as_slice(),
        _ => &[],
    };
    for p in partitions {
        let (name, dir) = (p.name(), &p.path);
        sink.label = format!("scan {name}");
        sink.progress = None;
        let scan = salvage::salvage_partition(dir, None, options, &mut NoDamaged(&mut sink))
            .map_err(failure)?;
        let (report, output) = if scan.found_anything() || args.all {
            let to = args.output.join(&name);
            if salvage::output_state(&to, args.skip_existing)? == OutputState::Free {
                say_removed(&remove_leftovers(&FsStorage, &to));
                sink.label = format!("salvage {name}");
                sink.progress = None;
                let r = salvage::salvage_partition(dir, Some(&to), options, &mut sink)
                    .map_err(failure)?;
                (r, Some((to, false)))
            } else {
                (scan, Some((to, true)))
            }
        } else {
            (scan, None)
        };
        lost |= report.found_anything();
        print(out, args.format, dir, output, &report)?;
    }
    // One partition: salvaged into the output, or only scanned when an earlier run's salvage
    // there is kept (--skip-existing).
    let mut to = None;
    if partitions.is_empty() {
        say_removed(&remove_leftovers(&FsStorage, &args.output));
        let state = salvage::output_state(&args.output, args.skip_existing)?;
        to = (state == OutputState::Free).then_some(args.output.as_path());
    }
    let single = match &input {
        Input::Partition(dir) => {
            Some((dir, salvage::salvage_partition(dir, to, options, &mut sink)))
        }
        Input::Files(files) => files.first().map(|first| {
            let config = LogConfig::default();
            (
                first,
                salvage::salvage_files(files, to, &config, options, &mut sink),
            )
        }),
        _ => None,
    };
    if let Some((first, report)) = single {
        let report = report.map_err(failure)?;
        lost = report.found_anything();
        let written = (args.output.clone(), to.is_none());
        print(out, args.format, first, Some(written), &report)?;
    }
    if let Some(w) = sink.damaged.take() {
        w.finish().map_err(failure)?;
    }
    Ok(if lost {
        Outcome::DataProblem
    } else {
        Outcome::Ok
    })
}

/// Passes progress on but no damaged bytes (the scan before a salvage).
struct NoDamaged<'a>(&'a mut Sink);

impl SalvageSink for NoDamaged<'_> {
    fn progress(&mut self, scanned: u64, total: u64) {
        self.0.progress(scanned, total);
    }
}

/// Prints one partition's report; `output` is where it went, and whether an earlier run's
/// salvage there was kept (`--skip-existing`).
fn print(
    out: &mut impl Write,
    format: Format,
    source: &Path,
    output: Option<(PathBuf, bool)>,
    report: &SalvageReport,
) -> Result<(), Failure> {
    let skipped = output.as_ref().is_some_and(|(_, skipped)| *skipped);
    match format {
        Format::Json => {
            let line = Line {
                source: source.display().to_string(),
                output: output.as_ref().map(|(o, _)| o.display().to_string()),
                skipped,
                lost_anything: report.lost_anything(),
                report,
            };
            crate::outcome::print_json(out, &line)?;
        }
        Format::Text => {
            match output {
                Some((o, false)) => {
                    writeln!(out, "{}: salvaged into {}", source.display(), o.display())?
                }
                Some((o, true)) => writeln!(
                    out,
                    "{}: skipped, already salvaged into {} by an earlier run (this run's scan \
                     follows)",
                    source.display(),
                    o.display()
                )?,
                None => writeln!(out, "{}: intact, left alone", source.display())?,
            }
            write!(out, "{report}")?;
        }
    }
    Ok(())
}

/// `--max-entry-size`: a size in bytes no smaller than the smallest Kafka entry.
fn at_least_an_entry(s: &str) -> Result<usize, String> {
    let n: usize = s
        .parse()
        .map_err(|_| format!("{s:?} is not a size in bytes"))?;
    if n < 14 {
        return Err(format!(
            "{n} is below 14, the size of the smallest Kafka entry (a v0 message without key \
             or value): every entry would be damage"
        ));
    }
    Ok(n)
}
