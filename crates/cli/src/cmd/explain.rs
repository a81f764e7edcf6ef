//! `krec explain`: annotated hex, one line per field, for every format (the chapter's byte
//! diagrams, drawn from real data).
//!
//! The walk here is deliberately independent of the codec's validating readers: it is a
//! diagnostic tool, so it explains corrupt entries field by field up to the first byte that makes
//! no sense, and says what is wrong there. It uses the codec only for varints, CRCs,
//! decompression and the layout constants.

use crate::args::{Format, ReadArgs};
use crate::kafka;
use crate::outcome::{Context, Failure, Outcome};
use krecords_codec::control::{ControlRecordKey, ControlRecordType};
use krecords_codec::layout::{legacy as l, v2, LOG_OVERHEAD, MAGIC_OFFSET, MIN_ENTRY_SIZE};
use krecords_codec::read::EntryPrefix;
use krecords_codec::varint::{read_varint, read_varlong};
use krecords_codec::Compression;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
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
/// says what is wrong (exit 1). A truncated tail is explained as far as it goes (exit 0).
///
/// Without --count, every entry is explained when the file holds at most 1 MiB from --position,
/// otherwise only the first one (a note on stderr says so); --count 0 explains all.
///
/// A live partition, kafka://HOST:PORT/TOPIC/PARTITION, is explained from the entry holding
/// --start (default: the first one) on: --count entries (default 1; 0: every entry up to --end,
/// at most 64 MiB of them), positions counted from the first fetched byte.
///
/// Examples:
///   krec explain hello.bin
///   krec explain 00000000000000000000.log --position 4096 --count 2
///   krec explain kafka://localhost:9092/orders/0 --start 1200 --count 2
///   krec explain --format json one.bin | jq '.[] | select(.field == "crc")'
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A segment file or any file of concatenated entries; `-` reads stdin;
    /// kafka://HOST:PORT/TOPIC/PARTITION reads a live partition.
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

/// Of a truncated tail, at most this many bytes are read and explained.
const PARTIAL_READ_CAP: u64 = 1 << 20;

/// At most this many bytes of a live partition are fetched for one explain.
const LIVE_CAP: usize = 64 << 20;

/// Bytes of a key, value or compressed section shown in the value column and in JSON "hex".
const SHOW_BYTES: usize = 32;

/// Bytes shown in the hex column of the text output.
const HEX_COLUMN_BYTES: usize = 8;

trait Input: Read + Seek {}
impl<T: Read + Seek> Input for T {}

/// Runs the subcommand.
pub fn run(mut args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let name = args.path.display().to_string();
    let live = args
        .path
        .to_str()
        .is_some_and(|p| p.starts_with("kafka://"));
    let (mut input, len): (Box<dyn Input>, u64) = if live {
        let count = args.count.unwrap_or(1);
        // Explaining the whole fetched buffer is what was asked for.
        args.count = Some(0);
        let buf = fetch_entries(&args, count)?;
        let len = buf.len() as u64;
        (Box::new(io::Cursor::new(buf)), len)
    } else if args.path == Path::new("-") {
        let mut buf = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .context(|| "cannot read stdin".into())?;
        let len = buf.len() as u64;
        (Box::new(io::Cursor::new(buf)), len)
    } else {
        let file = File::open(&args.path).context(|| format!("cannot open {name}"))?;
        let len = file
            .metadata()
            .context(|| format!("cannot read {name}"))?
            .len();
        (Box::new(file), len)
    };
    let read_err = |e: io::Error| Failure::Io(e, format!("cannot read {name}"));
    seek_to_position(&mut *input, len, args.position, &name).map_err(|e| match e {
        Halt::Io(e) => read_err(e),
        Halt::Data(_, msg) => Failure::Usage(msg),
    })?;
    let count = match args.count {
        Some(0) => u64::MAX,
        Some(n) => n,
        None if len - args.position <= EXPLAIN_ALL_UP_TO => u64::MAX,
        None => {
            eprintln!(
                "krec: explaining 1 entry of {name} ({} bytes from position {}); use --count N, or --count 0 for all",
                len - args.position,
                args.position
            );
            1
        }
    };
    let mut em = Emitter {
        out,
        json: args.format == Format::Json,
        started: false,
        problem: false,
    };
    let mut ex = Explainer {
        em: &mut em,
        limit: args.read.max_decompressed_bytes(),
        scratch: Vec::new(),
    };
    let mut pos = args.position;
    let mut done = 0u64;
    let mut buf = Vec::new();
    while pos < len && done < count {
        let avail = len - pos;
        let prefix_len = avail.min(LOG_OVERHEAD as u64) as usize;
        read_at(&mut *input, pos, prefix_len, &mut buf).map_err(read_err)?;
        let declared = EntryPrefix::parse(&buf).and_then(|p| p.entry_len());
        let present = match declared {
            Some(total) if total <= avail => total,
            Some(_) => avail.min(PARTIAL_READ_CAP),
            None => prefix_len as u64,
        };
        read_at(&mut *input, pos, present as usize, &mut buf).map_err(read_err)?;
        let stop = ex
            .entry(&buf, pos as usize, declared, avail)
            .map_err(|e| match e {
                Halt::Io(e) => Failure::from(e),
                Halt::Data(..) => Failure::Data("unreachable".into()),
            })?;
        done += 1;
        match (stop, declared) {
            (false, Some(total)) => pos += total,
            _ => break,
        }
    }
    em.finish()?;
    Ok(if em.problem {
        Outcome::DataProblem
    } else {
        Outcome::Ok
    })
}

/// The bytes of the first `count` entries (0: all, up to [`LIVE_CAP`]) of a live partition
/// from `--start`; a truncated or corrupt entry ends the buffer (and is explained as such).
fn fetch_entries(args: &Args, count: u64) -> Result<Vec<u8>, Failure> {
    let (inputs, live) = kafka::expand_one_partition(&args.path, &args.read.kafka, "krec explain")?;
    let mut reader = inputs.open_raw(&live)?;
    let read_err = |e: io::Error| Failure::Usage(format!("{}: {e}", live.name));
    let mut buf = Vec::new();
    let mut done = 0u64;
    while count == 0 || done < count {
        let start = buf.len();
        let got = (&mut reader)
            .take(LOG_OVERHEAD as u64)
            .read_to_end(&mut buf)
            .map_err(read_err)?;
        if got < LOG_OVERHEAD {
            break;
        }
        let Some(size) =
            EntryPrefix::parse(&buf[start..]).and_then(|p| usize::try_from(p.size).ok())
        else {
            break;
        };
        if start + LOG_OVERHEAD + size > LIVE_CAP {
            if done == 0 {
                return Err(Failure::Usage(format!(
                    "{}: an entry of {size} bytes is more than krec explain fetches ({} MiB)",
                    live.name,
                    LIVE_CAP >> 20
                )));
            }
            buf.truncate(start);
            eprintln!(
                "krec: explaining the first {done} entries of {} ({} MiB at most)",
                live.name,
                LIVE_CAP >> 20
            );
            break;
        }
        let got = (&mut reader)
            .take(size as u64)
            .read_to_end(&mut buf)
            .map_err(read_err)?;
        done += 1;
        if got < size {
            break;
        }
    }
    Ok(buf)
}

/// Reads `n` bytes at `pos` into `buf`.
fn read_at(input: &mut dyn Input, pos: u64, n: usize, buf: &mut Vec<u8>) -> io::Result<()> {
    input.seek(SeekFrom::Start(pos))?;
    buf.clear();
    buf.resize(n, 0);
    input.read_exact(buf)
}

/// Walks the entry prefixes from byte 0 to `position`, which must be an entry boundary.
fn seek_to_position(
    input: &mut dyn Input,
    len: u64,
    position: u64,
    name: &str,
) -> Result<(), Halt> {
    if position > 0 && position >= len {
        return Err(Halt::Data(
            Loc::file(0),
            format!("position {position} is at or past the end of {name} ({len} bytes)"),
        ));
    }
    let mut pos = 0u64;
    let mut prefix = Vec::new();
    while pos < position {
        if len - pos < LOG_OVERHEAD as u64 {
            return Err(Halt::Data(
                Loc::file(0),
                format!("position {position} is not an entry boundary: a truncated tail starts at byte {pos}"),
            ));
        }
        read_at(input, pos, LOG_OVERHEAD, &mut prefix)?;
        let p = EntryPrefix::parse(&prefix);
        let Some(len) = p.and_then(|p| p.entry_len()) else {
            let size = p.map_or(0, |p| p.size);
            return Err(Halt::Data(
                Loc::file(0),
                format!(
                    "cannot walk to position {position}: the entry at byte {pos} has an invalid size {size}; \
                     explain it with --position {pos}"
                ),
            ));
        };
        let next = pos + len;
        if next > position {
            return Err(Halt::Data(
                Loc::file(0),
                format!(
                    "position {position} is not an entry boundary: it is inside the entry at byte {pos} \
                     ({} bytes; the next entry starts at byte {next})",
                    next - pos
                ),
            ));
        }
        pos = next;
    }
    Ok(())
}

/// Where a field is: a byte position in the file, or in a decompressed buffer.
#[derive(Debug, Clone, Copy)]
struct Loc {
    pos: usize,
    decompressed: bool,
}

impl Loc {
    fn file(pos: usize) -> Self {
        Loc {
            pos,
            decompressed: false,
        }
    }

    fn label(self) -> String {
        if self.decompressed {
            format!("d+{}", self.pos)
        } else {
            self.pos.to_string()
        }
    }
}

/// Why explaining an entry stopped early.
enum Halt {
    /// Writing the output failed.
    Io(io::Error),
    /// The data makes no sense at this location.
    Data(Loc, String),
}

impl From<io::Error> for Halt {
    fn from(e: io::Error) -> Self {
        Halt::Io(e)
    }
}

/// One explained field.
struct Line<'a> {
    loc: Loc,
    bytes: &'a [u8],
    field: String,
    value: Value,
    /// Render a string value in quotes in the text output (keys, values, header keys).
    quoted: bool,
    note: Option<String>,
}

impl<'a> Line<'a> {
    fn new(loc: Loc, bytes: &'a [u8], field: impl Into<String>, value: impl Into<Value>) -> Self {
        Line {
            loc,
            bytes,
            field: field.into(),
            value: value.into(),
            quoted: false,
            note: None,
        }
    }

    fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// Writes lines as text or as one JSON array.
struct Emitter<'w, W: Write> {
    out: &'w mut W,
    json: bool,
    started: bool,
    problem: bool,
}

impl<W: Write> Emitter<'_, W> {
    fn line(&mut self, line: &Line<'_>) -> io::Result<()> {
        if self.json {
            let mut hex = hex::encode(&line.bytes[..line.bytes.len().min(SHOW_BYTES)]);
            if line.bytes.len() > SHOW_BYTES {
                hex.push('…');
            }
            let obj = json!({
                "position": line.loc.pos,
                "decompressed": line.loc.decompressed,
                "length": line.bytes.len(),
                "field": line.field,
                "hex": hex,
                "value": line.value,
                "note": line.note,
            });
            self.out
                .write_all(if self.started { b",\n" } else { b"[\n" })?;
            self.started = true;
            serde_json::to_writer(&mut *self.out, &obj).map_err(io::Error::from)
        } else {
            let value = match &line.value {
                Value::String(s) if line.quoted => format!("\"{s}\""),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let text = match &line.note {
                Some(n) if value.is_empty() => n.clone(),
                Some(n) => format!("{value} ({n})"),
                None => value,
            };
            let row = format!(
                "{:>10}  {:<25} {:<30} {}",
                line.loc.label(),
                hex_column(line.bytes),
                line.field,
                text
            );
            writeln!(self.out, "{}", row.trim_end())
        }
    }

    /// A section heading: `# text` in text output, a field named `kind` in JSON.
    fn heading(&mut self, loc: Loc, length: usize, kind: &str, text: &str) -> io::Result<()> {
        if self.json {
            let obj = json!({
                "position": loc.pos,
                "decompressed": loc.decompressed,
                "length": length,
                "field": kind,
                "hex": "",
                "value": text,
                "note": null,
            });
            self.out
                .write_all(if self.started { b",\n" } else { b"[\n" })?;
            self.started = true;
            serde_json::to_writer(&mut *self.out, &obj).map_err(io::Error::from)
        } else {
            writeln!(self.out, "# {text}")
        }
    }

    /// A problem in the data: an `error` line; the run will exit 1.
    fn error(&mut self, loc: Loc, msg: &str) -> io::Result<()> {
        self.problem = true;
        self.line(&Line::new(loc, &[], "error", msg))
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.json {
            self.out
                .write_all(if self.started { b"\n]\n" } else { b"[]\n" })?;
        }
        Ok(())
    }
}

/// Spaced hex of the first bytes, "…" when cut.
fn hex_column(bytes: &[u8]) -> String {
    let mut s: Vec<String> = bytes
        .iter()
        .take(HEX_COLUMN_BYTES)
        .map(|b| format!("{b:02x}"))
        .collect();
    if bytes.len() > HEX_COLUMN_BYTES {
        s.push("…".into());
    }
    s.join(" ")
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
            pos: self.base.pos + self.p,
            decompressed: self.base.decompressed,
        }
    }

    fn remaining(&self) -> usize {
        self.data.len() - self.p
    }

    fn take(&mut self, n: usize, what: &str) -> Result<(Loc, &'a [u8]), Halt> {
        let loc = self.loc();
        match self.data.get(self.p..self.p.saturating_add(n)) {
            Some(b) => {
                self.p += n;
                Ok((loc, b))
            }
            None => Err(Halt::Data(
                loc,
                format!(
                    "{what} needs {n} bytes but only {} remain",
                    self.remaining()
                ),
            )),
        }
    }

    fn i8(&mut self, what: &str) -> Result<(Loc, &'a [u8], i8), Halt> {
        let (loc, b) = self.take(1, what)?;
        Ok((loc, b, b[0] as i8))
    }

    fn i16(&mut self, what: &str) -> Result<(Loc, &'a [u8], i16), Halt> {
        let (loc, b) = self.take(2, what)?;
        Ok((loc, b, i16::from_be_bytes([b[0], b[1]])))
    }

    fn i32(&mut self, what: &str) -> Result<(Loc, &'a [u8], i32), Halt> {
        let (loc, b) = self.take(4, what)?;
        Ok((loc, b, i32::from_be_bytes([b[0], b[1], b[2], b[3]])))
    }

    fn u32(&mut self, what: &str) -> Result<(Loc, &'a [u8], u32), Halt> {
        let (loc, b) = self.take(4, what)?;
        Ok((loc, b, u32::from_be_bytes([b[0], b[1], b[2], b[3]])))
    }

    fn i64(&mut self, what: &str) -> Result<(Loc, &'a [u8], i64), Halt> {
        let (loc, b) = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok((loc, b, i64::from_be_bytes(a)))
    }

    fn varint(&mut self, what: &str) -> Result<(Loc, &'a [u8], i32), Halt> {
        let loc = self.loc();
        let (v, n) = read_varint(&self.data[self.p..], loc.pos)
            .map_err(|e| Halt::Data(loc, format!("{what}: {e}")))?;
        let b = &self.data[self.p..self.p + n];
        self.p += n;
        Ok((loc, b, v))
    }

    fn varlong(&mut self, what: &str) -> Result<(Loc, &'a [u8], i64), Halt> {
        let loc = self.loc();
        let (v, n) = read_varlong(&self.data[self.p..], loc.pos)
            .map_err(|e| Halt::Data(loc, format!("{what}: {e}")))?;
        let b = &self.data[self.p..self.p + n];
        self.p += n;
        Ok((loc, b, v))
    }

    /// A cursor over the next `n` bytes (which the caller checked exist); advances past them.
    fn sub(&mut self, n: usize) -> Cur<'a> {
        let c = Cur::new(&self.data[self.p..self.p + n], self.loc());
        self.p += n;
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

fn timestamp_note(ts: i64) -> String {
    if ts == -1 {
        "none".into()
    } else if (0..=253_402_300_799_999).contains(&ts) {
        crate::time_fmt::iso(ts)
    } else {
        "out of range".into()
    }
}

/// The value column for key, value and header bytes: text when printable UTF-8, else hex; cut
/// past 32 bytes.
fn content_line<'a>(loc: Loc, bytes: &'a [u8], field: String) -> Line<'a> {
    let shown = &bytes[..bytes.len().min(SHOW_BYTES)];
    let cut = bytes.len() > SHOW_BYTES;
    let text = match std::str::from_utf8(bytes) {
        Ok(s) if !s.chars().any(char::is_control) => Some(s),
        Err(e) if cut && e.valid_up_to() >= SHOW_BYTES.saturating_sub(3) => {
            std::str::from_utf8(&bytes[..e.valid_up_to()])
                .ok()
                .filter(|s| !s.chars().any(char::is_control))
        }
        _ => None,
    };
    let mut line = match text {
        Some(s) => {
            let mut end = s.len().min(SHOW_BYTES);
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            let mut v = s[..end].to_string();
            if end < bytes.len() {
                v.push('…');
            }
            let mut l = Line::new(loc, bytes, field, v);
            l.quoted = true;
            l
        }
        None => {
            let mut v = format!("0x{}", hex::encode(shown));
            if cut {
                v.push('…');
            }
            Line::new(loc, bytes, field, v)
        }
    };
    line.note = Some(plural(bytes.len(), "byte"));
    line
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

struct Explainer<'e, 'w, W: Write> {
    em: &'e mut Emitter<'w, W>,
    limit: usize,
    scratch: Vec<u8>,
}

impl<W: Write> Explainer<'_, '_, W> {
    fn line(&mut self, line: Line<'_>) -> Result<(), Halt> {
        Ok(self.em.line(&line)?)
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
            (Some(d), _) if d <= avail => format!("{kind} at byte {at}, {}", plural(d as usize, "byte")),
            (Some(d), _) => format!(
                "partial {kind} at byte {at}: declares {d} bytes, only {avail} present (a truncated tail, not corruption)"
            ),
            (None, Some(s)) => format!("{kind} at byte {at} with invalid size {s}"),
            (None, None) => format!("partial entry at byte {at}: only {} (a truncated tail, not corruption)", plural(buf.len(), "byte")),
        };
        self.em
            .heading(Loc::file(at), buf.len(), "entry", &heading)?;
        let mut c = Cur::new(buf, Loc::file(at));
        if let (None, Some(size)) = (declared, size_field) {
            let (loc, b, offset) = c.i64("offset")?;
            self.line(Line::new(loc, b, "offset", offset))?;
            let (loc, b, _) = c.i32("size")?;
            self.line(Line::new(loc, b, "size", size).note("bytes after this field"))?;
            self.em.error(
                loc,
                &format!(
                    "entry size {size} is below the minimum of {MIN_ENTRY_SIZE}; cannot go on"
                ),
            )?;
            return Ok(true);
        }
        if size_field.is_none() {
            let l = content_line(Loc::file(at), buf, "truncated entry".into());
            self.line(l.note(format!(
                "{}; shorter than the 12-byte offset and size prefix",
                plural(buf.len(), "byte")
            )))?;
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
            Ok(()) => Ok(partial || declared.is_none()),
            Err(Halt::Io(e)) => Err(Halt::Io(e)),
            Err(Halt::Data(loc, msg)) => {
                if partial && declared.is_some() {
                    // Running out of bytes in a truncated tail is expected.
                    self.em
                        .heading(loc, 0, "partial", &format!("the entry is cut here: {msg}"))?;
                } else {
                    self.em.error(loc, &msg)?;
                }
                // A bad entry with a sound size can be skipped; anything else stops the walk.
                Ok(partial || declared.is_none() || !matches!(magic, Some(0..=2)))
            }
        }
    }

    fn v2_batch(&mut self, c: &mut Cur<'_>, partial: bool) -> Result<(), Halt> {
        let entry = c.data;
        let at = c.base.pos;
        let (loc, b, base_offset) = c.i64("base offset")?;
        self.line(Line::new(loc, b, "base offset", base_offset))?;
        let (loc, b, length) = c.i32("batch length")?;
        self.line(Line::new(loc, b, "batch length", length).note(format!(
            "bytes after this field; the entry is {} bytes",
            i64::from(length) + LOG_OVERHEAD as i64
        )))?;
        let (loc, b, epoch) = c.i32("partition leader epoch")?;
        let note = if epoch == -1 {
            "not set, as producers write it"
        } else {
            "set by the leader that appended it"
        };
        self.line(Line::new(loc, b, "partition leader epoch", epoch).note(note))?;
        let (loc, b, magic) = c.i8("magic")?;
        self.line(Line::new(loc, b, "magic", magic).note("v2: record batch"))?;
        let (loc, b, stored) = c.u32("crc")?;
        let covered = format!(
            "CRC-32C of bytes {}..{}, attributes to the end",
            at + v2::ATTRIBUTES_OFFSET,
            at + entry.len()
        );
        let crc_ok = if partial {
            self.line(
                Line::new(loc, b, "crc", stored)
                    .note(format!("{covered}: cannot check, the entry is incomplete")),
            )?;
            true
        } else {
            let computed = krecords_codec::crc::crc32c(&entry[v2::ATTRIBUTES_OFFSET..]);
            let verdict = if computed == stored {
                "valid".to_string()
            } else {
                format!("INVALID, computed {computed}")
            };
            self.line(Line::new(loc, b, "crc", stored).note(format!("{covered}: {verdict}")))?;
            computed == stored
        };
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
            Line::new(loc, b, "attributes", format!("0x{:04x}", attributes as u16)).note(note),
        )?;
        let (loc, b, last_delta) = c.i32("last offset delta")?;
        self.line(
            Line::new(loc, b, "last offset delta", last_delta).note(format!(
                "last offset = base offset + delta = {}",
                base_offset.wrapping_add(i64::from(last_delta))
            )),
        )?;
        let (loc, b, base_ts) = c.i64("base timestamp")?;
        let note = if attributes & v2::DELETE_HORIZON_MASK != 0 {
            format!(
                "the delete horizon (attributes bit 6): {}",
                timestamp_note(base_ts)
            )
        } else {
            timestamp_note(base_ts)
        };
        self.line(Line::new(loc, b, "base timestamp", base_ts).note(note))?;
        let (loc, b, max_ts) = c.i64("max timestamp")?;
        let log_append = attributes & v2::TIMESTAMP_TYPE_MASK != 0;
        let note = if log_append {
            format!(
                "{}; the log append time, every record's timestamp",
                timestamp_note(max_ts)
            )
        } else {
            timestamp_note(max_ts)
        };
        self.line(Line::new(loc, b, "max timestamp", max_ts).note(note))?;
        let (loc, b, pid) = c.i64("producer id")?;
        let l = Line::new(loc, b, "producer id", pid);
        self.line(if pid == -1 {
            l.note("none: not idempotent")
        } else {
            l
        })?;
        let (loc, b, pepoch) = c.i16("producer epoch")?;
        let l = Line::new(loc, b, "producer epoch", pepoch);
        self.line(if pepoch == -1 { l.note("none") } else { l })?;
        let (loc, b, seq) = c.i32("base sequence")?;
        let l = Line::new(loc, b, "base sequence", seq);
        self.line(if seq == -1 {
            l.note("none")
        } else {
            l.note(format!(
                "last sequence {}",
                krecords_codec::read::v2::increment_sequence(seq, last_delta.max(0))
            ))
        })?;
        let (loc, b, count) = c.i32("records count")?;
        self.line(Line::new(loc, b, "records count", count))?;
        if !crc_ok {
            self.em.problem = true;
        }
        if count < 0 {
            return Err(Halt::Data(loc, format!("negative records count {count}")));
        }
        let section = &c.data[c.p..];
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
            self.em.heading(
                section_loc,
                section.len(),
                "records",
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
            let l = Line::new(
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
        let decompressed = krecords_codec::compression::decompress(
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
            Line::new(
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
                self.em.heading(
                    Loc {
                        pos: 0,
                        decompressed: true,
                    },
                    scratch.len(),
                    "records",
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
                Line::new(loc, b, format!("record {i} length"), len).note(format!(
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
                        "record {i} declares {len} bytes but only {} remain",
                        c.remaining()
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
            Line::new(loc, b, name("attributes"), attributes).note("unused, Kafka writes 0"),
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
                    timestamp_note(ts)
                )
            }
        };
        self.line(Line::new(loc, b, name("timestamp delta"), ts_delta).note(note))?;
        let (loc, b, off_delta) = r.varint(&name("offset delta"))?;
        self.line(
            Line::new(loc, b, name("offset delta"), off_delta).note(format!(
                "{}; offset = base + delta = {}",
                width_note("varint", b.len()),
                ctx.base_offset.wrapping_add(i64::from(off_delta))
            )),
        )?;
        let (loc, b, key_len) = r.varint(&name("key length"))?;
        self.line(
            Line::new(loc, b, name("key length"), key_len).note(length_note(
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
                self.line(content_line(loc, key, name("key")))?;
            }
        }
        let (loc, b, value_len) = r.varint(&name("value length"))?;
        self.line(
            Line::new(loc, b, name("value length"), value_len).note(length_note(
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
                _ => self.line(content_line(loc, value, name("value")))?,
            }
        }
        let (loc, b, header_count) = r.varint(&name("header count"))?;
        self.line(
            Line::new(loc, b, name("header count"), header_count)
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
                Line::new(loc, b, hname("key length"), klen).note(width_note("varint", b.len())),
            )?;
            let Ok(klen) = usize::try_from(klen) else {
                return Err(Halt::Data(
                    loc,
                    format!("negative header key length {klen} (header keys cannot be null)"),
                ));
            };
            let (loc, key) = r.take(klen, &hname("key"))?;
            self.line(content_line(loc, key, hname("key")))?;
            let (loc, b, vlen) = r.varint(&hname("value length"))?;
            self.line(
                Line::new(loc, b, hname("value length"), vlen).note(length_note(
                    "varint",
                    b.len(),
                    vlen.into(),
                    "value",
                )),
            )?;
            if let Ok(n) = usize::try_from(vlen) {
                let (loc, value) = r.take(n, &hname("value"))?;
                self.line(content_line(loc, value, hname("value")))?;
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
        self.line(Line::new(
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
            Line::new(loc, b, format!("record {i} control key type"), kind).note(match t {
                ControlRecordType::Abort => "abort: an end-transaction marker".to_string(),
                ControlRecordType::Commit => "commit: an end-transaction marker".to_string(),
                ControlRecordType::Unknown(_) => "unknown control type".to_string(),
                other => format!("{} (KRaft)", other.name()),
            }),
        )?;
        if k.remaining() > 0 {
            let (loc, rest) = k.take(k.remaining(), "")?;
            self.line(content_line(
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
            Line::new(loc, b, format!("record {i} marker version"), version)
                .note("end-transaction marker"),
        )?;
        let (loc, b, epoch) = v.i32("coordinator epoch")?;
        self.line(Line::new(
            loc,
            b,
            format!("record {i} coordinator epoch"),
            epoch,
        ))?;
        if v.remaining() > 0 {
            let (loc, rest) = v.take(v.remaining(), "")?;
            self.line(content_line(loc, rest, format!("record {i} marker rest")))?;
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
        let line = Line::new(loc, b, name("offset"), offset);
        self.line(match note {
            Some(n) => line.note(n),
            None => line,
        })?;
        let (loc, b, size) = c.i32(&name("message size"))?;
        self.line(Line::new(loc, b, name("message size"), size).note(format!(
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
        let crc_ok = if partial {
            self.line(
                Line::new(loc, b, name("crc"), stored)
                    .note(format!("{covered}: cannot check, the entry is incomplete")),
            )?;
            true
        } else {
            let computed = krecords_codec::crc::crc32(entry.get(l::MAGIC_OFFSET..).unwrap_or(&[]));
            let verdict = if computed == stored {
                "valid".to_string()
            } else {
                format!("INVALID, computed {computed}")
            };
            self.line(
                Line::new(loc, b, name("crc"), stored).note(format!("{covered}: {verdict}")),
            )?;
            computed == stored
        };
        if !crc_ok {
            self.em.problem = true;
        }
        let (loc, b, magic) = c.i8(&name("magic"))?;
        if !(0..=1).contains(&magic) {
            self.line(Line::new(loc, b, name("magic"), magic))?;
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
        self.line(Line::new(loc, b, name("magic"), magic).note(if magic == 0 {
            "v0 message"
        } else {
            "v1 message"
        }))?;
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
        self.line(Line::new(loc, b, name("attributes"), format!("0x{attributes:02x}")).note(note))?;
        let mut timestamp = None;
        if magic == 1 {
            let (loc, b, ts) = c.i64(&name("timestamp"))?;
            timestamp = Some(ts);
            let mut note = timestamp_note(ts);
            if let Some((_, Some(t))) = ctx.inner {
                note = format!("{note}; replaced by the wrapper's log append time {t}");
            } else if log_append && codec != Some(Compression::None) {
                note = format!("{note}; the log append time, applies to every inner message");
            } else if log_append {
                note = format!("{note}; the log append time");
            } else if codec.is_some_and(|c| c != Compression::None) {
                note = format!("{note}; the max inner timestamp");
            }
            self.line(Line::new(loc, b, name("timestamp"), ts).note(note))?;
        }
        let (loc, b, key_len) = c.i32(&name("key length"))?;
        self.line(
            Line::new(loc, b, name("key length"), key_len).note(length_note(
                "int32",
                4,
                key_len.into(),
                "key",
            )),
        )?;
        if let Ok(n) = usize::try_from(key_len) {
            let (loc, key) = c.take(n, &name("key"))?;
            self.line(content_line(loc, key, name("key")))?;
        }
        let (loc, b, value_len) = c.i32(&name("value length"))?;
        self.line(
            Line::new(loc, b, name("value length"), value_len).note(length_note(
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
                    let l = Line::new(loc, v, name(&format!("value ({codec})")), v.len());
                    self.line(l.note(format!("{codec}-compressed inner messages")))?;
                    value = Some((loc, v, codec));
                }
                _ => self.line(content_line(loc, v, name("value")))?,
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
        let result = match krecords_codec::compression::decompress(
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
        self.em.heading(
            dz,
            data.len(),
            "inner messages",
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
            let rest = &c.data[c.p..];
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
                wrapper_offset - last + relative
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
        let rest = &c.data[c.p..];
        let l = content_line(c.loc(), rest, "truncated inner message".into());
        self.line(l.note(format!(
            "{}; ignored, as Kafka ignores a cut last inner message",
            plural(rest.len(), "byte")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn hex_column_is_cut_after_eight_bytes() {
        assert_eq!(hex_column(&[0, 0x49]), "00 49");
        assert_eq!(hex_column(&[1; 9]), "01 01 01 01 01 01 01 01 …");
    }

    #[test]
    fn content_is_text_or_hex_and_cut() {
        let l = content_line(Loc::file(0), b"hello", "v".into());
        assert_eq!(l.value, Value::String("hello".into()));
        assert!(l.quoted);
        let l = content_line(Loc::file(0), &[0, 1, 2], "v".into());
        assert_eq!(l.value, Value::String("0x000102".into()));
        let long = [b'a'; 40];
        let l = content_line(Loc::file(0), &long, "v".into());
        assert_eq!(l.value, Value::String(format!("{}…", "a".repeat(32))));
        assert_eq!(l.note.as_deref(), Some("40 bytes"));
    }
}
