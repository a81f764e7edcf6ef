//! `krec gen`: deterministic synthetic log entries for demos, benchmarks and sizing.
//!
//! Everything comes from one splitmix64 stream seeded by `--seed`, consumed record by record in
//! a fixed order, so the same arguments always give the same bytes, and the records themselves
//! (keys, values, headers, timestamps) do not depend on `--magic`, `--compression` or
//! `--records-per-batch`: only the framing around them does.

use crate::args::EncodingArgs;
use crate::outcome::{Context, Failure, Outcome};
use crate::progress::{Progress, Unit};
use clap::ValueEnum;
use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, Header};
use std::fs::File;
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

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough for synthetic data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// The built-in word list for `text` content: the vocabulary of application logs.
const WORDS: [&str; 64] = [
    "INFO",
    "WARN",
    "DEBUG",
    "ERROR",
    "request",
    "response",
    "user",
    "order",
    "payment",
    "session",
    "started",
    "completed",
    "failed",
    "retry",
    "timeout",
    "connected",
    "closed",
    "cache",
    "hit",
    "miss",
    "latency",
    "ms",
    "status",
    "200",
    "404",
    "500",
    "GET",
    "POST",
    "/api/v1/orders",
    "/api/v1/users",
    "/health",
    "consumer",
    "producer",
    "partition",
    "offset",
    "commit",
    "topic",
    "events",
    "broker",
    "leader",
    "epoch",
    "id",
    "took",
    "bytes",
    "from",
    "to",
    "with",
    "for",
    "the",
    "a",
    "of",
    "in",
    "on",
    "queue",
    "worker",
    "thread",
    "pool",
    "db",
    "query",
    "rows",
    "updated",
    "inserted",
    "deleted",
    "ok",
];

const EVENTS: [&str; 8] = [
    "click",
    "view",
    "purchase",
    "signup",
    "login",
    "logout",
    "search",
    "add_to_cart",
];

/// Generates the records of `krec gen` one by one into reusable buffers.
pub struct Generator {
    rng: Rng,
    content: Content,
    value_size: usize,
    key_size: usize,
    headers: usize,
    /// Index of the next record.
    i: u64,
    key: Vec<u8>,
    value: Vec<u8>,
    /// Header keys and values, `headers` of each.
    header_keys: Vec<Vec<u8>>,
    header_values: Vec<Vec<u8>>,
}

impl Generator {
    /// A generator of records with the given shape.
    pub fn new(
        seed: u64,
        content: Content,
        value_size: usize,
        key_size: usize,
        headers: usize,
    ) -> Self {
        Generator {
            rng: Rng::new(seed),
            content,
            value_size,
            key_size,
            headers,
            i: 0,
            key: Vec::with_capacity(key_size),
            value: Vec::with_capacity(value_size),
            header_keys: (0..headers).map(|j| format!("h{j}").into_bytes()).collect(),
            header_values: vec![Vec::with_capacity(8); headers],
        }
    }

    /// Produces the next record's key, value and header values into the buffers.
    pub fn advance(&mut self) {
        let i = self.i;
        self.i += 1;
        self.key.clear();
        if self.key_size > 0 {
            let width = self.key_size.saturating_sub(4);
            let key = format!("key-{i:0width$}");
            self.key
                .extend_from_slice(&key.as_bytes()[..key.len().min(self.key_size)]);
        }
        let mut value = std::mem::take(&mut self.value);
        self.fill(i, self.value_size, &mut value);
        self.value = value;
        for j in 0..self.headers {
            let mut v = std::mem::take(&mut self.header_values[j]);
            self.fill(i, 8, &mut v);
            self.header_values[j] = v;
        }
    }

    /// The current key (`None` when --key-size is 0).
    pub fn key(&self) -> Option<&[u8]> {
        (self.key_size > 0).then_some(self.key.as_slice())
    }

    /// The current value.
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// The current headers.
    pub fn headers(&self) -> Vec<Header<'_>> {
        self.header_keys
            .iter()
            .zip(&self.header_values)
            .map(|(k, v)| Header {
                key: k,
                value: Some(v),
            })
            .collect()
    }

    fn fill(&mut self, i: u64, size: usize, out: &mut Vec<u8>) {
        out.clear();
        match self.content {
            Content::Random => {
                while out.len() < size {
                    let r = self.rng.next_u64().to_be_bytes();
                    let n = (size - out.len()).min(8);
                    out.extend_from_slice(&r[..n]);
                }
            }
            Content::Text => self.words(size, out),
            Content::Json => self.json(i, size, out),
        }
    }

    /// Words separated by spaces, cut to exactly `size` bytes.
    fn words(&mut self, size: usize, out: &mut Vec<u8>) {
        let start = out.len();
        while out.len() - start < size {
            if out.len() > start {
                out.push(b' ');
            }
            out.extend_from_slice(WORDS[self.rng.below(WORDS.len() as u64) as usize].as_bytes());
        }
        out.truncate(start + size);
    }

    /// A JSON object of exactly `size` bytes: fields while they fit, then a "msg" string of
    /// words filling the rest; below 12 bytes the object is cut.
    fn json(&mut self, i: u64, size: usize, out: &mut Vec<u8>) {
        let user = self.rng.below(10_000);
        let event = EVENTS[self.rng.below(EVENTS.len() as u64) as usize];
        let cents = self.rng.below(100_000);
        let mut s = format!("{{\"id\":{i}");
        for field in [
            format!(",\"user\":\"user-{user}\""),
            format!(",\"event\":\"{event}\""),
            format!(",\"amount\":{}.{:02}", cents / 100, cents % 100),
        ] {
            if s.len() + field.len() + 10 <= size {
                s.push_str(&field);
            }
        }
        out.extend_from_slice(s.as_bytes());
        const MSG_OPEN: &[u8] = b",\"msg\":\"";
        if out.len() + MSG_OPEN.len() + 2 <= size {
            out.extend_from_slice(MSG_OPEN);
            let room = size - out.len() - 2;
            self.words(room, out);
            out.extend_from_slice(b"\"}");
        } else {
            out.push(b'}');
            while out.len() < size {
                out.push(b' ');
            }
        }
        out.truncate(size);
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
    let mut file = match to_file {
        Some(path) => Some(io::BufWriter::with_capacity(
            1 << 20,
            File::create(path).context(|| format!("cannot create {}", path.display()))?,
        )),
        None if io::stdout().is_terminal() => {
            return Err(Failure::Usage(
                "refusing to write binary entries to a terminal; use --output FILE or a pipe"
                    .into(),
            ))
        }
        None => None,
    };
    let name = to_file.map_or_else(|| "-".to_string(), |p| p.display().to_string());
    let stats = match file.as_mut() {
        Some(f) => generate(&args, codec, level, f).map_err(|e| match e {
            Failure::Io(e, what) if what.is_empty() => {
                Failure::Io(e, format!("cannot write {name}"))
            }
            other => other,
        })?,
        None => generate(&args, codec, level, stdout)?,
    };
    if let Some(mut file) = file {
        file.flush().context(|| format!("cannot write {name}"))?;
    }
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

fn encode_error(e: krecords_codec::Error) -> Failure {
    Failure::Usage(e.to_string())
}

fn generate(
    args: &Args,
    codec: Compression,
    level: Option<i32>,
    sink: &mut impl Write,
) -> Result<Written, Failure> {
    let mut gen = Generator::new(
        args.seed,
        args.content,
        args.value_size,
        args.key_size,
        args.headers,
    );
    let mut progress = Progress::new("krec gen", Unit::Records, args.records, 100_000);
    let mut written = Written {
        entries: 0,
        bytes: 0,
    };
    let mut out = Vec::new();
    let mut i = 0u64;
    while i < args.records {
        let n = args.records_per_batch.min(args.records - i);
        let base = args
            .base_offset
            .checked_add(i as i64)
            .ok_or_else(|| Failure::Usage("offsets overflow i64".into()))?;
        out.clear();
        if args.encoding.magic == 2 {
            // Written in place in `out`, whose capacity carries over from batch to batch.
            let mut b =
                V2Builder::appending_to(base, std::mem::take(&mut out)).compression(codec, level);
            for k in 0..n {
                gen.advance();
                let headers = gen.headers();
                let ts = args.timestamp.saturating_add((i + k) as i64);
                let r = NewRecord::new(ts, gen.key(), Some(gen.value())).with_headers(&headers);
                b.append(&r).map_err(encode_error)?;
            }
            out = b.finish().map_err(encode_error)?;
            written.entries += 1;
        } else {
            let mut b = LegacyBuilder::new(args.encoding.magic, base)
                .and_then(|b| b.compression(codec, level))
                .map_err(encode_error)?;
            for k in 0..n {
                gen.advance();
                let ts = args.timestamp.saturating_add((i + k) as i64);
                b.append(&NewRecord::new(ts, gen.key(), Some(gen.value())))
                    .map_err(encode_error)?;
            }
            b.finish_into(&mut out).map_err(encode_error)?;
            written.entries += if codec == Compression::None { n } else { 1 };
        }
        sink.write_all(&out)?;
        written.bytes += out.len() as u64;
        i += n;
        progress.update(i);
    }
    progress.finish();
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(content: Content, size: usize, n: usize) -> Vec<Vec<u8>> {
        let mut g = Generator::new(7, content, size, 0, 0);
        (0..n)
            .map(|_| {
                g.advance();
                g.value().to_vec()
            })
            .collect()
    }

    #[test]
    fn values_have_the_exact_size_and_repeat_per_seed() {
        for content in [Content::Random, Content::Text, Content::Json] {
            for size in [0, 1, 5, 11, 12, 30, 100, 1000] {
                let a = values(content, size, 20);
                assert!(a.iter().all(|v| v.len() == size), "{content:?} {size}");
                assert_eq!(a, values(content, size, 20));
            }
        }
    }

    #[test]
    fn json_values_parse_from_twelve_bytes() {
        for size in 12..200 {
            for v in values(Content::Json, size, 5) {
                let parsed: serde_json::Value = serde_json::from_slice(&v)
                    .unwrap_or_else(|e| panic!("{size}: {e}: {}", String::from_utf8_lossy(&v)));
                assert!(parsed.get("id").is_some());
            }
        }
    }

    #[test]
    fn keys_are_padded_or_cut() {
        let mut g = Generator::new(0, Content::Text, 1, 10, 0);
        g.advance();
        assert_eq!(g.key(), Some(&b"key-000000"[..]));
        let mut g = Generator::new(0, Content::Text, 1, 3, 0);
        g.advance();
        assert_eq!(g.key(), Some(&b"key"[..]));
        let mut g = Generator::new(0, Content::Text, 1, 0, 0);
        g.advance();
        assert_eq!(g.key(), None);
    }

    #[test]
    fn splitmix_matches_reference() {
        // First outputs of splitmix64 seeded with 0 (reference implementation by S. Vigna).
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }
}
