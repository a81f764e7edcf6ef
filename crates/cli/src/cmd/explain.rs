//! `krec explain`: annotated hex, one line per field, for every format (the chapter's byte
//! diagrams, drawn from real data).
//!
//! The walk is the codec's ([`krecords_codec::explain`]): it explains corrupt entries field by
//! field up to the first byte that makes no sense and says what is wrong there. This command
//! opens the input, walks to `--position` and renders the walker's items.

use crate::args::{Format, ReadArgs};
use crate::outcome::{Context, Failure, Outcome};
use crate::source::open_one_partition;
use krecords_codec::explain::show::{shown, ShownValue};
use krecords_codec::explain::{entry_boundary, Explainer, Item, Loc, NotABoundary, WalkError};
use krecords_codec::layout::LOG_OVERHEAD;
use krecords_codec::read::Step;
use serde_json::json;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Explain entries byte by byte: one line per field with its position, bytes and meaning.
///
/// Each line reads: position in the file, the field's bytes in hex (long fields cut with "…"),
/// the field name, and the decoded value with notes (varint widths, absolute offsets and
/// timestamps from deltas, what the CRC covers and whether it is valid, attribute bits).
/// Every format: v0/v1 messages (a compressed wrapper shows its value as compressed bytes, then
/// its inner messages decoded from the decompressed buffer, at positions "d+N" in the
/// decompressed data), v2 batch headers and every record's internals, including headers and
/// control records (transaction markers).
///
/// Corrupt entries are explained up to the first field that makes no sense, then an "error" line
/// says what is wrong (exit 1). A truncated tail is explained as far as it goes, then reported
/// as `krec verify` reports it (exit 1); bytes that are not Kafka data stop the walk (exit 1).
/// An empty input (an empty file, /dev/null) is an empty log: a note on stderr says "empty
/// input: no entries" (exit 0).
///
/// Without --count, every entry is explained when the file holds at most 1 MiB from --position,
/// otherwise only the first one (a note on stderr says so); --count 0 explains all.
///
/// A live partition, kafka://HOST:PORT/TOPIC/PARTITION, a partition directory, and any file
/// given --start or --end, is read through the sources layer and explained from the entry
/// holding --start (default: the first one) on: --count entries (default 1; 0: every entry up
/// to --end, at most 64 MiB of them), positions counted from the first byte read; a range
/// that holds no entries says so on stderr. Isolation:
/// read-uncommitted (every batch, as the log holds it) unless --isolation read-committed.
///
/// Examples:
///   krec explain hello.bin
///   krec explain 00000000000000000000.log --position 4096 --count 2
///   krec explain kafka://localhost:9092/orders/0 --start 1200 --count 2
///   krec explain /var/kafka/orders-0 --start 1200
///   krec explain --format json one.bin | jq '.[] | select(.field == "crc")'
#[derive(clap::Args)]
#[command(verbatim_doc_comment, after_long_help = crate::kafka::REMOTE_HELP)]
pub struct Args {
    /// A segment file or any file of concatenated entries; `-` reads stdin;
    /// kafka://HOST:PORT/TOPIC/PARTITION reads a live partition, a remote tier partition
    /// (LOCATION/<topic>-<topicId>/<partition>) its uploaded segments; a partition directory
    /// from its first entry (or --start).
    path: PathBuf,
    /// Byte position of the first entry to explain; must be where an entry starts.
    #[arg(long, default_value_t = 0)]
    position: u64,
    /// Entries to explain (0: all). Default: all when at most 1 MiB follows --position, else 1.
    #[arg(long)]
    count: Option<u64>,
    /// Output format: aligned text, or a JSON array of
    /// {"position","decompressed","length","field","hex","value","note"}.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    read: ReadArgs,
}

/// When no --count is given, files up to this size (from --position) are explained whole.
const EXPLAIN_ALL_UP_TO: u64 = 1 << 20;

/// At most this many bytes of a live partition are fetched for one explain.
const LIVE_CAP: usize = 64 << 20;

/// Where `krec explain` reads its bytes from.
enum Input {
    /// Fetched entries or standard input, in memory.
    Bytes(Vec<u8>),
    /// A file, read where the walk goes.
    File(File),
}

/// Runs the subcommand.
pub fn run(mut args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let name = args.path.display().to_string();
    let given = std::slice::from_ref(&args.path);
    args.read.kafka.client.warn_unused(given);
    let range = &args.read.kafka.range;
    // A partition directory (or root) is read through the sources layer, from its start
    // unless --start says where.
    let ranged = range.start.is_some()
        || range.end.is_some()
        || crate::source::is_url_source(&args.path)
        || args.path.is_dir();
    let (mut input, len) = if ranged {
        let count = args.count.unwrap_or(1);
        // Explaining the whole fetched buffer is what was asked for.
        args.count = Some(0);
        let buf = fetch_entries(&args, count)?;
        let len = buf.len() as u64;
        (Input::Bytes(buf), len)
    } else if args.path == Path::new("-") {
        let mut buf = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .context(|| "cannot read stdin".into())?;
        let len = buf.len() as u64;
        (Input::Bytes(buf), len)
    } else {
        let mut file = File::open(&args.path).context(|| format!("cannot open {name}"))?;
        let meta = file.metadata().context(|| format!("cannot read {name}"))?;
        if let Some(len) = krecords_log::check::known_len(&meta) {
            (Input::File(file), len)
        } else {
            // A FIFO or a device has no length, and a file under /proc says 0 and reads text:
            // read as standard input is.
            let mut buf = Vec::new();
            file.read_to_end(&mut buf)
                .context(|| format!("cannot read {name}"))?;
            let len = buf.len() as u64;
            (Input::Bytes(buf), len)
        }
    };
    let from = len.saturating_sub(args.position);
    let count = match args.count {
        Some(0) => u64::MAX,
        Some(n) => n,
        None if from <= EXPLAIN_ALL_UP_TO => u64::MAX,
        None => {
            eprintln!(
                "krec: explaining 1 entry of {name} ({from} bytes from position {}); use --count N, or --count 0 for all",
                args.position
            );
            1
        }
    };
    let mut em = Emitter {
        out,
        json: args.format == Format::Json,
        started: false,
    };
    let mut explainer =
        Explainer::new(args.read.max_decompressed_bytes()).time_format(crate::time_fmt::iso);
    let sink = &mut |item: &Item<'_>| em.item(item);
    let summary = match &mut input {
        Input::Bytes(b) => explainer.explain_slice(b, args.position, count, sink),
        Input::File(f) => entry_boundary(f, len, args.position)
            .and_then(|()| explainer.explain_reader(f, len, args.position, count, sink)),
    }
    .map_err(|e| match e {
        WalkError::Read(e) => Failure::Io(e, format!("cannot read {name}")),
        WalkError::Sink(e) => Failure::from(e),
        WalkError::Position(NotABoundary::PastEnd { position, len }) => Failure::Usage(format!(
            "position {position} is at or past the end of {name} ({len} bytes)"
        )),
        WalkError::Position(p) => Failure::Usage(p.to_string()),
    })?;
    em.finish()?;
    // An empty file is an empty log, not damaged data (a read of a range said so already).
    if summary.empty_input && !ranged {
        eprintln!("krec: {name}: empty input: no entries");
    }
    Ok(if summary.problems > 0 {
        Outcome::DataProblem
    } else {
        Outcome::Ok
    })
}

/// The bytes of the first `count` entries (0: all, up to [`LIVE_CAP`]) of the one partition
/// of PATH from the entry holding `--start`; a truncated or corrupt entry ends the buffer with
/// the bytes that follow it (and is explained as such).
fn fetch_entries(args: &Args, count: u64) -> Result<Vec<u8>, Failure> {
    let (mut name, mut reader) = open_one_partition(&args.path, &args.read, "krec explain")?;
    let mut buf = Vec::new();
    let mut done = 0u64;
    while count == 0 || done < count {
        let entry = match reader
            .next_entry()
            .context(|| format!("cannot read {name}"))?
        {
            Step::Entry(e) => e.as_bytes(),
            // The partition's next file (segment), if any.
            Step::End => match reader.next_file()? {
                Some(f) => {
                    name = f.name;
                    continue;
                }
                None => break,
            },
            Step::Error(_) | Step::Partial(_) => {
                let rest = reader.unread_bytes();
                if rest.is_empty() {
                    // A file: its bytes from the bad entry on (as much as fits).
                    let cap = LIVE_CAP.saturating_sub(buf.len());
                    read_rest(Path::new(&name), reader.position(), cap, &mut buf)?;
                } else {
                    buf.extend_from_slice(rest);
                }
                break;
            }
        };
        if buf.len() + entry.len() > LIVE_CAP {
            if done == 0 {
                return Err(Failure::Usage(format!(
                    "{name}: an entry of {} bytes is more than krec explain fetches ({} MiB)",
                    entry.len().saturating_sub(LOG_OVERHEAD),
                    LIVE_CAP >> 20
                )));
            }
            eprintln!(
                "krec: explaining the first {done} entries of {name} ({} MiB at most)",
                LIVE_CAP >> 20
            );
            break;
        }
        buf.extend_from_slice(entry);
        done += 1;
    }
    if buf.is_empty() {
        let why = reader.stop().map(|s| format!(" ({s})")).unwrap_or_default();
        let path = args.path.display();
        eprintln!("krec: {path}: the range holds no entries to explain{why}");
    }
    Ok(buf)
}

/// Appends at most `cap` bytes of the file `path` from byte `from` on to `buf`.
fn read_rest(path: &Path, from: usize, cap: usize, buf: &mut Vec<u8>) -> Result<(), Failure> {
    use std::io::{Seek, SeekFrom};
    let what = || format!("cannot read {}", path.display());
    let mut file = File::open(path).context(what)?;
    file.seek(SeekFrom::Start(from as u64)).context(what)?;
    file.take(cap as u64).read_to_end(buf).context(what)?;
    Ok(())
}

/// Writes the walker's items as text lines or as one JSON array.
struct Emitter<'w, W: Write> {
    out: &'w mut W,
    json: bool,
    started: bool,
}

impl<W: Write> Emitter<'_, W> {
    fn item(&mut self, item: &Item<'_>) -> io::Result<()> {
        let s = shown(item);
        if self.json {
            let value = match &s.value {
                ShownValue::Int(n) => json!(n),
                ShownValue::Text(t) => json!(t),
            };
            let obj = json!({
                "position": s.position,
                "decompressed": s.decompressed,
                "length": s.length,
                "field": s.field,
                "hex": s.hex,
                "value": value,
                "note": s.note,
            });
            self.out
                .write_all(if self.started { b",\n" } else { b"[\n" })?;
            self.started = true;
            return serde_json::to_writer(&mut *self.out, &obj).map_err(io::Error::from);
        }
        let value = match s.value {
            ShownValue::Int(n) => n.to_string(),
            ShownValue::Text(t) if s.quoted => format!("\"{t}\""),
            ShownValue::Text(t) => t,
        };
        if let Item::Heading { .. } = item {
            return writeln!(self.out, "# {value}");
        }
        let text = match s.note {
            Some(n) if value.is_empty() => n,
            Some(n) => format!("{value} ({n})"),
            None => value,
        };
        let at = Loc {
            pos: s.position,
            decompressed: s.decompressed,
        };
        let row = format!(
            "{:>10}  {:<25} {:<30} {}",
            at.label(),
            s.hex_column,
            s.field,
            text
        );
        writeln!(self.out, "{}", row.trim_end())
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.json {
            self.out
                .write_all(if self.started { b"\n]\n" } else { b"[]\n" })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso8601_renders_epoch_millis() {
        assert_eq!(crate::time_fmt::iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            crate::time_fmt::iso(1_714_000_000_000),
            "2024-04-24T23:06:40.000Z"
        );
        assert_eq!(
            crate::time_fmt::iso(951_782_400_123),
            "2000-02-29T00:00:00.123Z"
        );
        assert_eq!(crate::time_fmt::iso(-1), "1969-12-31T23:59:59.999Z");
    }
}
