//! What real records would take in every format and codec: the input converted to v0, v1 and
//! v2 with every codec each allows, each row exactly as [`crate::convert::Converter`] converts
//! with [`ConvertOptions::for_target`] (the options of `krec convert`), counting bytes and
//! optionally timing encode and decode (`krec stats --what-if`).
//!
//! Streamed: the caller feeds entries through a [`Feeder`] (from any source); they are handed to
//! the rows in blocks of whole entries and every row converts each block as it comes, keeping
//! only sizes and timings. Memory is bounded by a window of blocks plus each row's converter
//! state (at most one output entry held back), whatever the input size.
//!
//! Rows run in parallel on [`Config::threads`] threads: a row's blocks must be converted in
//! order (its converter carries a run of v0/v1 messages across blocks), so a thread takes the
//! row that is furthest behind and not busy, converts its next block, and gives it back. The
//! feeder waits while the window is full; a block is dropped once every row has converted it.
//!
//! Speeds are in MB/s (10^6 bytes per second) of record payload (keys, values and headers).
//! Encode is the conversion (reading and decompressing the input, building and compressing the
//! row's entries); decode reads the row's entries back as a consumer (CRCs, decompression, every
//! record). Entries already in a compressed row's format and codec are copied unchanged, as
//! convert does: their payload was never compressed, so it does not count in the row's encode
//! speed, and a compressed row that copied every entry shows none ([`Row::encode_mb_s`] `None`)
//! rather than an impossible figure. Copies into an uncompressed row count: copying (with its
//! CRC check) is all the encoding such a row does.
//!
//! # Examples
//!
//! ```
//! use krecords_codec::read::Entries;
//! use krecords_codec::what_if::{self, Config};
//! use krecords_codec::write::{LegacyBuilder, NewRecord};
//!
//! let mut b = LegacyBuilder::new(1, 0).unwrap();
//! for _ in 0..100 {
//!     b.append(&NewRecord::new(1714000000000, None, Some(&[b'x'; 100]))).unwrap();
//! }
//! let v1 = b.finish().unwrap();
//!
//! let targets = what_if::targets(&[], None, krecords_codec::DEFAULT_DECOMPRESS_LIMIT).unwrap();
//! let report = what_if::of_entries(&targets, &Config::sizes_only(), Entries::new(&v1))?;
//! let v1_none = &report.rows[4];
//! assert_eq!((v1_none.magic, v1_none.compression, v1_none.bytes), (1, "none", Some(13_400)));
//! # Ok::<(), krecords_codec::Error>(())
//! ```

use crate::convert::{batching_text, ConvertOptions, ConvertStats, Converter};
use crate::read::{Batch, Entries};
use crate::stats::{measure, opt_f64, per, Accounted, EntrySizes};
use crate::{Compression, Error};
use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Entries are handed to the rows in blocks of about this many bytes (one entry more at most).
pub const BLOCK_BYTES: usize = 2 << 20;

/// Whole entries of one input, contiguous in it.
#[derive(Debug, Default)]
struct Block {
    /// The entries' bytes.
    data: Vec<u8>,
    /// Position of `data[0]` in the input (so that errors name real positions).
    base: usize,
    /// The input's display name.
    name: Arc<str>,
    /// Keys, values and headers of each entry's data records (what speeds are counted in).
    payloads: Vec<u64>,
    /// The input ends after this block: rows finish their converters.
    input_end: bool,
}

impl Block {
    fn payload(&self) -> u64 {
        self.payloads.iter().sum()
    }
}

/// One row: a target magic, codec and level (`None`: the codec's default), and the conversion
/// options `krec convert` uses for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Target magic.
    pub magic: u8,
    /// Target codec.
    pub codec: Compression,
    /// Explicit level, `None` for the default.
    pub level: Option<i32>,
    /// The options of `krec convert --magic M --compression CODEC[:LEVEL]`.
    pub options: ConvertOptions,
}

/// The rows: every magic × codec it allows, at the default level and at the `levels` given for
/// that codec (sorted, the default level left out), each with the options `krec convert` would
/// use ([`ConvertOptions::for_target`]).
///
/// # Errors
///
/// A level the codec refuses (see [`ConvertOptions::validate`]).
pub fn targets(
    levels: &[(Compression, i32)],
    records_per_batch: Option<u64>,
    decompress_limit: usize,
) -> Result<Vec<Target>, Error> {
    let mut targets = Vec::new();
    for magic in 0..=2u8 {
        for codec in Compression::ALL.into_iter().filter(|c| c.allowed_in(magic)) {
            let mut extra: Vec<i32> = levels
                .iter()
                .filter(|(c, l)| *c == codec && Some(*l) != codec.default_level())
                .map(|&(_, l)| l)
                .collect();
            extra.sort_unstable();
            extra.dedup();
            for level in std::iter::once(None).chain(extra.into_iter().map(Some)) {
                let options = ConvertOptions::for_target(
                    magic,
                    Some(codec),
                    level,
                    records_per_batch,
                    decompress_limit,
                );
                options.validate()?;
                targets.push(Target {
                    magic,
                    codec,
                    level,
                    options,
                });
            }
        }
    }
    Ok(targets)
}

/// What a row's timings count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// CPU time of the thread, from Linux's `/proc/thread-self/schedstat` (nanoseconds on a
    /// CPU, brought up to date at least every scheduler tick): other rows and other processes
    /// on a busy machine do not count.
    ThreadCpu,
    /// Wall time (where schedstat cannot be read).
    Wall,
}

impl Clock {
    /// The thread CPU clock where it can be read, else wall time.
    pub fn detect() -> Clock {
        if thread_cpu_ns().is_some() {
            Clock::ThreadCpu
        } else {
            Clock::Wall
        }
    }

    fn start(self) -> Stopwatch {
        Stopwatch {
            wall: Instant::now(),
            cpu: match self {
                Clock::ThreadCpu => thread_cpu_ns(),
                Clock::Wall => None,
            },
        }
    }
}

/// Nanoseconds the calling thread has run on a CPU.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

struct Stopwatch {
    wall: Instant,
    cpu: Option<u64>,
}

impl Stopwatch {
    fn elapsed(&self) -> Duration {
        match self.cpu.zip(thread_cpu_ns()) {
            Some((a, b)) => Duration::from_nanos(b.saturating_sub(a)),
            None => self.wall.elapsed(),
        }
    }
}

/// How to run the rows.
#[derive(Debug, Clone)]
pub struct Config {
    /// Worker threads (1: everything on the calling thread; at most one per row is used).
    pub threads: usize,
    /// `Some(min)`: time each row, repeating conversions of the first blocks until at least
    /// `min` of each of encode and decode is measured; `None`: no timing and no reading back.
    pub timing: Option<Duration>,
    /// What timings count.
    pub clock: Clock,
    /// Decompression limit for reading the input and reading back.
    pub decompress_limit: usize,
    /// Use only the entries up to this many data records (0: all).
    pub sample: u64,
    /// The `records_per_batch` the targets were made with, to say how rows batch.
    pub records_per_batch: Option<u64>,
}

impl Config {
    /// One thread, no timing, every entry, the default decompression limit and batching.
    pub fn sizes_only() -> Config {
        Config {
            threads: 1,
            timing: None,
            clock: Clock::Wall,
            decompress_limit: crate::DEFAULT_DECOMPRESS_LIMIT,
            sample: 0,
            records_per_batch: None,
        }
    }
}

/// What a row measured.
#[derive(Debug, Default)]
struct Measured {
    /// Figures summed over the inputs (one converter per input, as convert does).
    stats: ConvertStats,
    /// The first error, after which the row stopped.
    error: Option<String>,
    /// Payload bytes and time of the conversions timed.
    encode: (u64, Duration),
    /// Payload bytes and time of reading the output back.
    decode: (u64, Duration),
}

struct RowState {
    opts: ConvertOptions,
    converter: Option<Converter>,
    measured: Measured,
    out: Vec<u8>,
    scratch: Vec<u8>,
}

fn add_stats(into: &mut ConvertStats, s: &ConvertStats) {
    into.entries_in += s.entries_in;
    into.bytes_in += s.bytes_in;
    into.entries_out += s.entries_out;
    into.bytes_out += s.bytes_out;
    into.entries_passed_through += s.entries_passed_through;
    into.records_converted += s.records_converted;
    into.dropped_control_batches += s.dropped_control_batches;
    into.dropped_control_records += s.dropped_control_records;
    into.dropped_empty_batches += s.dropped_empty_batches;
    into.dropped_headers += s.dropped_headers;
    into.dropped_producer_state += s.dropped_producer_state;
}

/// Pushes every entry of `block` into `converter`, appending the output to `out`. Returns the
/// payload the row encoded: every entry's, except those a compressed row copied unchanged.
fn push_block(converter: &mut Converter, block: &Block, out: &mut Vec<u8>) -> Result<u64, Error> {
    let compressed = converter.options().compression != Some(Compression::None);
    let mut entries = Entries::with_base(&block.data, block.base);
    let mut payloads = block.payloads.iter();
    let mut encoded = 0;
    while let Some(batch) = entries.next_entry()? {
        let copied = converter.stats().entries_passed_through;
        converter.push(&batch, out)?;
        let payload = payloads.next().copied().unwrap_or(0);
        if !(compressed && converter.stats().entries_passed_through > copied) {
            encoded += payload;
        }
    }
    Ok(encoded)
}

/// Reads `buf` back as a consumer would: entries, CRCs, decompression, every record.
fn read_back(buf: &[u8], scratch: &mut Vec<u8>, limit: usize) -> Result<u64, String> {
    let mut sum = 0u64;
    let mut entries = Entries::new(buf);
    for batch in &mut entries {
        let batch = batch.map_err(|e| e.to_string())?;
        if !batch.is_crc_valid() {
            return Err(format!("entry at byte {}: crc mismatch", batch.position()));
        }
        for r in batch.records(scratch, limit).map_err(|e| e.to_string())? {
            let r = r.map_err(|e| e.to_string())?;
            sum = sum
                .wrapping_add(r.value().map_or(0, <[u8]>::len) as u64 + r.headers().len() as u64);
        }
    }
    if let Some(p) = entries.partial() {
        return Err(format!(
            "{} bytes left over at byte {}",
            p.bytes, p.position
        ));
    }
    Ok(std::hint::black_box(sum))
}

impl RowState {
    /// Converts one block (and, at an input's end, finishes the input's converter).
    fn run(&mut self, block: &Block, cfg: &Config) {
        if self.measured.error.is_some() {
            return;
        }
        if let Err(e) = self.convert(block, cfg) {
            self.measured.error = Some(e);
            self.converter = None;
        }
        self.out.clear();
    }

    fn convert(&mut self, block: &Block, cfg: &Config) -> Result<(), String> {
        let name = &block.name;
        let started = cfg.clock.start();
        let converter = match &mut self.converter {
            Some(c) => c,
            None => self
                .converter
                .insert(Converter::new(self.opts.clone()).map_err(|e| format!("{name}: {e}"))?),
        };
        let encoded =
            push_block(converter, block, &mut self.out).map_err(|e| format!("{name}: {e}"))?;
        if block.input_end {
            if let Some(c) = self.converter.take() {
                let stats = c
                    .finish(&mut self.out)
                    .map_err(|e| format!("{name}: {e}"))?;
                add_stats(&mut self.measured.stats, &stats);
            }
        }
        let Some(min) = cfg.timing else {
            return Ok(());
        };
        let payload = block.payload();
        self.measure(encoded, payload, cfg, &started)?;
        // Small inputs: convert this block again on its own until enough time is measured.
        while payload > 0 && (self.measured.encode.1 < min || self.measured.decode.1 < min) {
            self.out.clear();
            let started = cfg.clock.start();
            let mut c = Converter::new(self.opts.clone()).map_err(|e| e.to_string())?;
            let encoded = push_block(&mut c, block, &mut self.out).map_err(|e| e.to_string())?;
            c.finish(&mut self.out).map_err(|e| e.to_string())?;
            self.measure(encoded, payload, cfg, &started)?;
        }
        Ok(())
    }

    /// Counts the conversion of `encoded` payload bytes into `self.out`, begun at `started`,
    /// then reads the output (`payload` bytes of records) back and counts that.
    fn measure(
        &mut self,
        encoded: u64,
        payload: u64,
        cfg: &Config,
        started: &Stopwatch,
    ) -> Result<(), String> {
        let m = &mut self.measured;
        m.encode.0 += encoded;
        m.encode.1 += started.elapsed();
        let started = cfg.clock.start();
        read_back(&self.out, &mut self.scratch, cfg.decompress_limit)
            .map_err(|e| format!("reading back: {e}"))?;
        m.decode.0 += payload;
        m.decode.1 += started.elapsed();
        Ok(())
    }
}

/// The scheduler's state, under one lock.
struct Sched {
    /// Blocks not yet converted by every row; `blocks[0]` has index `first`.
    blocks: VecDeque<Arc<Block>>,
    first: usize,
    /// Per row: index of the next block to convert, whether a thread has it, time spent.
    cursor: Vec<usize>,
    busy: Vec<bool>,
    spent: Vec<Duration>,
    reading_done: bool,
    /// Input bytes every row has converted.
    done_bytes: u64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes the entries of the inputs and hands them to the rows in blocks; see [`run`].
pub struct Feeder<'a> {
    sink: &'a mut dyn FnMut(Block),
    block: Block,
    sample: u64,
    /// What has been fed so far.
    fed: Fed,
    full: bool,
    scratch: Vec<u8>,
    decompress_limit: usize,
}

/// What the rows were fed.
#[derive(Debug, Default, Clone)]
struct Fed {
    records: u64,
    payload: u64,
    input_bytes: u64,
    control_records: u64,
    headers: u64,
    left_out: u64,
}

impl Feeder<'_> {
    /// Starts the next input, named `name` in errors. Every row converts each input on its own,
    /// as `krec convert` converts each file.
    pub fn start_input(&mut self, name: &str) {
        self.block.name = name.into();
    }

    /// Feeds one entry of the current input, measured by [`crate::stats::Stats::entry`]: it is
    /// left out (counted in [`WhatIf::entries_left_out`]) when its CRC does not match or its
    /// records cannot be decoded. Entries after the sample's size are ignored.
    pub fn entry(&mut self, batch: &Batch<'_>, accounted: &Accounted) {
        match &accounted.sizes {
            Ok(sizes) if accounted.crc_valid => self.add(batch, sizes),
            _ => self.leave_out(),
        }
    }

    /// Feeds one entry of the current input, measuring it here (for callers that do not keep
    /// [`crate::stats::Stats`]).
    pub fn measure_entry(&mut self, batch: &Batch<'_>) {
        if self.full {
            return;
        }
        match measure(batch, &mut self.scratch, self.decompress_limit) {
            Ok(sizes) if batch.is_crc_valid() => self.add(batch, &sizes),
            _ => self.leave_out(),
        }
    }

    fn add(&mut self, batch: &Batch<'_>, e: &EntrySizes) {
        if self.full {
            return;
        }
        let b = &mut self.block;
        if b.data.is_empty() {
            b.base = batch.position();
        }
        b.data.extend_from_slice(batch.as_bytes());
        self.fed.input_bytes += e.sizes.bytes;
        if e.control {
            self.fed.control_records += e.sizes.records;
            b.payloads.push(0);
        } else {
            self.fed.records += e.sizes.records;
            self.fed.payload += e.sizes.payload;
            self.fed.headers += e.headers;
            b.payloads.push(e.sizes.payload);
        }
        if b.data.len() >= BLOCK_BYTES {
            self.send(false);
        }
        self.check_sample();
    }

    fn leave_out(&mut self) {
        if self.full {
            return;
        }
        self.fed.left_out += 1;
        if !self.block.data.is_empty() {
            // The next block starts after the entry left out.
            self.send(false);
        }
        self.check_sample();
    }

    fn check_sample(&mut self) {
        if self.sample > 0 && self.fed.records >= self.sample {
            self.full = true;
        }
    }

    /// Ends the current input: every row finishes its converter.
    pub fn end_input(&mut self) {
        self.send(true);
    }

    fn send(&mut self, input_end: bool) {
        let name = Arc::clone(&self.block.name);
        let mut block = std::mem::take(&mut self.block);
        block.input_end = input_end;
        self.block.name = name;
        (self.sink)(block);
    }
}

/// Runs every row over the entries `scan` feeds (on the calling thread, while `threads` workers
/// convert); calls `progress` now and then with the input bytes every row has converted.
/// Returns the summary and one row per target, in order.
///
/// # Errors
///
/// `scan`'s error. A row that cannot convert an entry stops and says why in [`Row::error`].
pub fn run<E>(
    targets: &[Target],
    cfg: &Config,
    progress: &mut dyn FnMut(u64),
    scan: impl FnOnce(&mut Feeder<'_>) -> Result<(), E>,
) -> Result<Report, E> {
    let rows: Vec<Mutex<RowState>> = targets
        .iter()
        .map(|t| {
            Mutex::new(RowState {
                opts: t.options.clone(),
                converter: None,
                measured: Measured::default(),
                out: Vec::new(),
                scratch: Vec::new(),
            })
        })
        .collect();
    let mut fed = Fed::default();
    let feed = |sink: &mut dyn FnMut(Block)| {
        let mut feeder = Feeder {
            sink,
            block: Block::default(),
            sample: cfg.sample,
            fed: Fed::default(),
            full: false,
            scratch: Vec::new(),
            decompress_limit: cfg.decompress_limit,
        };
        let result = scan(&mut feeder);
        fed = feeder.fed;
        result
    };
    let threads = cfg.threads.clamp(1, rows.len().max(1));
    if threads == 1 {
        let mut done = 0u64;
        feed(&mut |block: Block| {
            for row in &rows {
                lock(row).run(&block, cfg);
            }
            done += block.data.len() as u64;
            progress(done);
        })?;
    } else {
        let window = 2 * threads + 4;
        let sched = Mutex::new(Sched {
            blocks: VecDeque::new(),
            first: 0,
            cursor: vec![0; rows.len()],
            busy: vec![false; rows.len()],
            spent: vec![Duration::ZERO; rows.len()],
            reading_done: false,
            done_bytes: 0,
        });
        let wake = Condvar::new();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| worker(&rows, &sched, &wake, cfg));
            }
            let result = feed(&mut |block: Block| {
                let mut g = lock(&sched);
                while g.blocks.len() >= window {
                    g = wake
                        .wait_timeout(g, Duration::from_millis(200))
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                    progress(g.done_bytes);
                }
                g.blocks.push_back(Arc::new(block));
                wake.notify_all();
            });
            let mut g = lock(&sched);
            g.reading_done = true;
            wake.notify_all();
            while g.cursor.iter().any(|&c| c < g.first + g.blocks.len()) {
                g = wake
                    .wait_timeout(g, Duration::from_millis(200))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                progress(g.done_bytes);
            }
            result
        })?;
    }
    let measured = rows.into_iter().map(|r| {
        r.into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .measured
    });
    Ok(report(targets, cfg, threads, &fed, measured))
}

/// [`run`] over the entries of one input (a segment file's, a fetch response's), on the
/// calling thread and `cfg.threads` workers.
///
/// # Errors
///
/// The first entry that cannot be read (a truncated tail is not an error: it ends the input).
pub fn of_entries<'a>(
    targets: &[Target],
    cfg: &Config,
    entries: impl IntoIterator<Item = Result<Batch<'a>, Error>>,
) -> Result<Report, Error> {
    run(targets, cfg, &mut |_| {}, |feeder| {
        feeder.start_input("input");
        for batch in entries {
            feeder.measure_entry(&batch?);
        }
        feeder.end_input();
        Ok(())
    })
}

/// Thread that takes the row furthest behind (the slowest first among equals), converts its
/// next block, until the input is read and every row has converted every block.
fn worker(rows: &[Mutex<RowState>], sched: &Mutex<Sched>, wake: &Condvar, cfg: &Config) {
    let mut g = lock(sched);
    loop {
        let end = g.first + g.blocks.len();
        let pick = (0..rows.len())
            .filter(|&i| !g.busy[i] && g.cursor[i] < end)
            .min_by(|&a, &b| {
                g.cursor[a]
                    .cmp(&g.cursor[b])
                    .then(g.spent[b].cmp(&g.spent[a]))
            });
        match pick {
            Some(i) => {
                g.busy[i] = true;
                let block = Arc::clone(&g.blocks[g.cursor[i] - g.first]);
                drop(g);
                let started = Instant::now();
                lock(&rows[i]).run(&block, cfg);
                let took = started.elapsed();
                drop(block);
                g = lock(sched);
                g.busy[i] = false;
                g.cursor[i] += 1;
                g.spent[i] += took;
                let min = g.cursor.iter().copied().min().unwrap_or(0);
                while g.first < min {
                    if let Some(b) = g.blocks.pop_front() {
                        g.done_bytes += b.data.len() as u64;
                    }
                    g.first += 1;
                }
                wake.notify_all();
            }
            None if g.reading_done && g.cursor.iter().all(|&c| c >= end) => return,
            None => g = wake.wait(g).unwrap_or_else(PoisonError::into_inner),
        }
    }
}

/// What a what-if run measured: the summary and one row per target.
#[derive(Debug, Clone)]
pub struct Report {
    /// What was converted and how it was measured.
    pub info: WhatIf,
    /// One row per target, in order.
    pub rows: Vec<Row>,
}

/// What a what-if run measured, besides the rows.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct WhatIf {
    /// Data records converted (control records not counted).
    pub records: u64,
    /// Stored bytes of the entries converted.
    pub input_bytes: u64,
    /// Keys, values and headers of those records.
    pub payload_bytes: u64,
    /// Entries of the uncompressed v2 row: the batches the records make.
    pub batches: u64,
    /// How rows batch records, in words.
    pub batching: String,
    /// The unit of the speeds, in words.
    pub speed_unit: &'static str,
    /// How the speed columns were measured, in words.
    pub timing: String,
    /// Threads that ran rows.
    pub threads: usize,
    /// Records of control batches (transaction markers): kept as they are in v2 rows, dropped
    /// in v0/v1 rows, as convert does; not counted in `records`.
    pub skipped_control_records: u64,
    /// Entries left out: CRC mismatches and entries whose records cannot be decoded.
    pub entries_left_out: u64,
}

/// One row: what the input takes in one magic, codec and level.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Row {
    /// Target magic.
    pub magic: u8,
    /// Target codec's name.
    pub compression: &'static str,
    /// Level (the codec's default when none was given; `None` for codecs without levels).
    pub level: Option<i32>,
    /// Bytes the row's entries take (`None` after an error).
    pub bytes: Option<u64>,
    /// Data records converted.
    pub records: u64,
    /// Entries written.
    pub entries: Option<u64>,
    /// Entries already in this format and codec, copied unchanged (as convert does).
    pub entries_copied: Option<u64>,
    /// Bytes per record.
    pub bytes_per_record: Option<f64>,
    /// Bytes / input bytes.
    pub ratio: Option<f64>,
    /// Encode speed in MB/s of payload; `None` without timing, or when the row compressed
    /// nothing (every entry copied unchanged).
    pub encode_mb_s: Option<f64>,
    /// Decode speed in MB/s of payload; `None` without timing.
    pub decode_mb_s: Option<f64>,
    /// What the reader should know about the row.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub note: Option<String>,
    /// Why the row stopped.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub error: Option<String>,
}

/// MB/s, to one decimal; `None` when no time was measured.
fn mb_s((payload, elapsed): (u64, Duration)) -> Option<f64> {
    let secs = elapsed.as_secs_f64();
    (secs > 0.0).then(|| (payload as f64 / secs / 1e6 * 10.0).round() / 10.0)
}

fn report(
    targets: &[Target],
    cfg: &Config,
    threads: usize,
    fed: &Fed,
    measured: impl Iterator<Item = Measured>,
) -> Report {
    let mut rows = Vec::new();
    let mut batches = 0;
    for (t, m) in targets.iter().zip(measured) {
        let mut row = Row {
            magic: t.magic,
            compression: t.codec.name(),
            level: t.level.or(t.codec.default_level()),
            bytes: None,
            records: fed.records,
            entries: None,
            entries_copied: None,
            bytes_per_record: None,
            ratio: None,
            encode_mb_s: None,
            decode_mb_s: None,
            note: (t.magic < 2 && fed.headers > 0)
                .then(|| "headers dropped: v0/v1 cannot carry them".to_string()),
            error: m.error,
        };
        if row.error.is_none() {
            let bytes = m.stats.bytes_out as u64;
            row.bytes = Some(bytes);
            row.entries = Some(m.stats.entries_out as u64);
            row.entries_copied = Some(m.stats.entries_passed_through as u64);
            row.bytes_per_record = per(bytes, fed.records);
            row.ratio = per(bytes, fed.input_bytes);
            // A row that compressed none of the payload (every entry copied unchanged) has no
            // encode speed: its time was spent copying compressed bytes.
            row.encode_mb_s = mb_s(m.encode).filter(|_| m.encode.0 > 0 || fed.payload == 0);
            row.decode_mb_s = mb_s(m.decode);
            if let (Some(level), n @ 1..) = (t.level, m.stats.entries_passed_through) {
                let note = format!(
                    "{n} entries already {} copied unchanged, not recompressed at level {level} \
                     (as convert does: Kafka compares codecs, not levels)",
                    t.codec.name()
                );
                row.note = Some(match row.note.take() {
                    Some(n) => format!("{n}; {note}"),
                    None => note,
                });
            }
            if t.magic == 2 && t.codec == Compression::None && t.level.is_none() {
                batches = m.stats.entries_out as u64;
            }
        }
        rows.push(row);
    }
    let timing = if cfg.timing.is_some() {
        let clock = match cfg.clock {
            Clock::ThreadCpu => {
                "CPU time of the one thread that ran it (Linux schedstat), so other rows and \
                 other processes do not count"
            }
            Clock::Wall => "wall time of the one thread that ran it",
        };
        format!(
            "each row timed single-threaded: {clock} ({threads} thread{} ran rows in parallel); \
             encode = converting the input into the row (reading and decompressing it, building \
             and compressing the entries), decode = reading the row's entries back (CRCs, \
             decompression, every record)",
            if threads == 1 { "" } else { "s" }
        )
    } else {
        "not measured (--no-timing)".to_string()
    };
    let info = WhatIf {
        records: fed.records,
        input_bytes: fed.input_bytes,
        payload_bytes: fed.payload,
        batches,
        batching: format!(
            "as krec convert does: {}",
            batching_text(cfg.records_per_batch)
        ),
        speed_unit: "MB/s: 10^6 bytes of record payload (keys, values, headers) per second",
        timing,
        threads,
        skipped_control_records: fed.control_records,
        entries_left_out: fed.left_out,
    };
    Report { info, rows }
}

/// Writes a what-if report as `krec stats --what-if` prints it: a head, an aligned table of
/// the rows, and lines that explain them.
pub fn write_text(out: &mut impl Write, info: &WhatIf, rows: &[Row]) -> io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "what if: the same {} records ({} payload bytes, now {} bytes) in {} batch{}, batched {}",
        info.records,
        info.payload_bytes,
        info.input_bytes,
        info.batches,
        if info.batches == 1 { "" } else { "es" },
        info.batching
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:>5}  {:<11}  {:>5}  {:>12}  {:>9}  {:>8}  {:>11}  {:>11}",
        "magic",
        "compression",
        "level",
        "bytes",
        "bytes/rec",
        "vs now",
        "encode MB/s",
        "decode MB/s"
    )?;
    for r in rows {
        let line = format!(
            "{:>5}  {:<11}  {:>5}  {:>12}  {:>9}  {:>8}  {:>11}  {:>11}",
            r.magic,
            r.compression,
            r.level.map_or_else(|| "-".into(), |l| l.to_string()),
            r.bytes.map_or_else(|| "-".into(), |b| b.to_string()),
            opt_f64(r.bytes_per_record, 2),
            opt_f64(r.ratio, 3),
            opt_f64(r.encode_mb_s, 1),
            opt_f64(r.decode_mb_s, 1),
        );
        match (&r.error, &r.note) {
            (Some(e), _) => writeln!(out, "{line}  error: {e}")?,
            (None, Some(n)) => writeln!(out, "{line}  {n}")?,
            (None, None) => writeln!(out, "{line}")?,
        }
    }
    writeln!(
        out,
        "(each row is what `krec convert --magic M --compression CODEC[:LEVEL]` writes, entries \
         already in its format and codec copied unchanged; vs now: bytes / current bytes)"
    )?;
    if info.skipped_control_records > 0 || info.entries_left_out > 0 {
        writeln!(
            out,
            "({} control records not counted: v2 rows keep their batches, v0/v1 rows drop them; \
             {} entries left out: crc mismatch or undecodable)",
            info.skipped_control_records, info.entries_left_out
        )?;
    }
    writeln!(out, "(speeds in {}; {})", info.speed_unit, info.timing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::{Sample, SampleSpec};
    use crate::DEFAULT_DECOMPRESS_LIMIT;

    fn sample(spec: SampleSpec) -> Vec<u8> {
        let mut s = Sample::new(spec);
        let mut out = Vec::new();
        while let Some(e) = s.next_entry() {
            out.extend_from_slice(e.unwrap().0);
        }
        out
    }

    fn row(r: &Report, magic: u8, codec: Compression) -> &Row {
        r.rows
            .iter()
            .find(|row| row.magic == magic && row.compression == codec.name())
            .unwrap()
    }

    #[test]
    fn rows_predict_what_convert_writes_whatever_the_threads() {
        let input = sample(SampleSpec {
            magic: 1,
            records: 3000,
            value_size: 50,
            ..SampleSpec::default()
        });
        let targets = targets(&[(Compression::Gzip, 1)], None, DEFAULT_DECOMPRESS_LIMIT).unwrap();
        assert_eq!(targets.len(), 13 + 3);
        let one = of_entries(&targets, &Config::sizes_only(), Entries::new(&input)).unwrap();
        let three = of_entries(
            &targets,
            &Config {
                threads: 3,
                ..Config::sizes_only()
            },
            Entries::new(&input),
        )
        .unwrap();
        assert_eq!(one.rows, three.rows[..]);
        assert_eq!(three.info.threads, 3);
        for (t, r) in targets.iter().zip(&one.rows) {
            let mut out = Vec::new();
            let stats = crate::convert::convert(&input, &t.options, &mut out).unwrap();
            assert_eq!(r.bytes, Some(out.len() as u64), "{t:?}");
            assert_eq!(r.entries_copied, Some(stats.entries_passed_through as u64));
        }
        assert_eq!(
            (one.info.records, one.info.input_bytes),
            (3000, input.len() as u64)
        );
        assert_eq!(one.info.batches, 1, "one run of v1 messages, one v2 batch");
    }

    #[test]
    fn a_compressed_row_that_copied_every_entry_has_no_encode_speed() {
        let input = sample(SampleSpec {
            compression: Compression::Gzip,
            records: 500,
            ..SampleSpec::default()
        });
        let cfg = Config {
            timing: Some(Duration::from_millis(1)),
            ..Config::sizes_only()
        };
        let targets = targets(&[], None, DEFAULT_DECOMPRESS_LIMIT).unwrap();
        let r = of_entries(&targets, &cfg, Entries::new(&input)).unwrap();
        let copied = row(&r, 2, Compression::Gzip);
        assert_eq!(copied.entries_copied, Some(5));
        assert_eq!(copied.encode_mb_s, None, "{copied:?}");
        assert!(copied.decode_mb_s.is_some_and(|s| s > 0.0), "{copied:?}");
        for converted in [row(&r, 2, Compression::Zstd), row(&r, 1, Compression::Gzip)] {
            assert_eq!(converted.entries_copied, Some(0));
            assert!(
                converted.encode_mb_s.is_some_and(|s| s > 0.0),
                "{converted:?}"
            );
        }
        // An uncompressed row copying uncompressed entries still measures its copy.
        let plain = sample(SampleSpec {
            records: 500,
            ..SampleSpec::default()
        });
        let r = of_entries(&targets, &cfg, Entries::new(&plain)).unwrap();
        let none = row(&r, 2, Compression::None);
        assert_eq!(none.entries_copied, Some(5));
        assert!(none.encode_mb_s.is_some_and(|s| s > 0.0), "{none:?}");
    }

    #[test]
    fn sample_and_left_out_entries() {
        let mut input = sample(SampleSpec {
            records: 1000,
            ..SampleSpec::default()
        });
        input[100] ^= 1; // the first batch's CRC no longer matches
        let targets = targets(&[], Some(50), DEFAULT_DECOMPRESS_LIMIT).unwrap();
        let cfg = Config {
            sample: 300,
            records_per_batch: Some(50),
            ..Config::sizes_only()
        };
        let r = of_entries(&targets, &cfg, Entries::new(&input)).unwrap();
        assert_eq!(r.info.entries_left_out, 1);
        assert_eq!(
            r.info.records, 300,
            "three batches of 100 after the bad one"
        );
        assert_eq!(row(&r, 2, Compression::None).entries, Some(6));
        assert!(r.info.batching.contains("50 records per batch"));
    }
}
