//! `krec stats --what-if`, streamed: the input arrives in blocks of whole entries and every row
//! (magic × codec × level) converts each block as it comes, with the same options `krec convert`
//! would use, keeping only sizes and timings. Memory is bounded by a window of blocks plus each
//! row's converter state (at most one output entry held back), whatever the input size.
//!
//! Rows run in parallel on `--threads` threads: a row's blocks must be converted in order (its
//! converter carries a run of v0/v1 messages across blocks), so a thread takes the row that is
//! furthest behind and not busy, converts its next block, and gives it back. The reader waits
//! while the window is full; a block is dropped once every row has converted it.

use crate::progress::{Progress, Unit};
use krecords_codec::convert::{ConvertOptions, ConvertStats, Converter};
use krecords_codec::read::Entries;
use krecords_codec::{Compression, Error};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Entries are handed to the rows in blocks of about this many bytes (one entry more at most).
pub const BLOCK_BYTES: usize = 2 << 20;

/// Whole entries of one input file, contiguous in it.
#[derive(Debug, Default)]
pub struct Block {
    /// The entries' bytes.
    pub data: Vec<u8>,
    /// Position of `data[0]` in the file (so that errors name real positions).
    pub base: usize,
    /// The file's display name.
    pub name: Arc<str>,
    /// Keys, values and headers of the block's data records (what speeds are counted in).
    pub payload: u64,
    /// The file ends after this block: rows finish their converters.
    pub file_end: bool,
}

/// One row: a target magic, codec and level (`None`: the codec's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// Target magic.
    pub magic: u8,
    /// Target codec.
    pub codec: Compression,
    /// Explicit level, `None` for the default.
    pub level: Option<i32>,
}

/// What a row measured.
#[derive(Debug, Default)]
pub struct Measured {
    /// Figures summed over the input files (one converter per file, as convert does).
    pub stats: ConvertStats,
    /// The first error, after which the row stopped.
    pub error: Option<String>,
    /// Payload bytes and time of the conversions timed.
    pub encode: (u64, Duration),
    /// Payload bytes and time of reading the output back.
    pub decode: (u64, Duration),
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
    /// Worker threads (1: everything on the calling thread).
    pub threads: usize,
    /// `Some(min)`: time each row, repeating conversions of the first blocks until at least
    /// `min` of each of encode and decode is measured; `None`: no timing and no reading back.
    pub timing: Option<Duration>,
    /// What timings count.
    pub clock: Clock,
    /// Decompression limit for reading back.
    pub decompress_limit: usize,
    /// Total input bytes, for the progress line (0: unknown).
    pub total_bytes: u64,
}

struct Row {
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

/// Pushes every entry of `block` into `converter`, appending the output to `out`.
fn push_block(converter: &mut Converter, block: &Block, out: &mut Vec<u8>) -> Result<(), Error> {
    let mut entries = Entries::with_base(&block.data, block.base);
    while let Some(batch) = entries.next_entry()? {
        converter.push(&batch, out)?;
    }
    Ok(())
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

impl Row {
    /// Converts one block (and, at a file's end, finishes the file's converter).
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
        push_block(converter, block, &mut self.out).map_err(|e| format!("{name}: {e}"))?;
        if block.file_end {
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
        self.measure(block, cfg, &started)?;
        // Small inputs: convert this block again on its own until enough time is measured.
        while block.payload > 0 && (self.measured.encode.1 < min || self.measured.decode.1 < min) {
            self.out.clear();
            let started = cfg.clock.start();
            let mut c = Converter::new(self.opts.clone()).map_err(|e| e.to_string())?;
            push_block(&mut c, block, &mut self.out).map_err(|e| e.to_string())?;
            c.finish(&mut self.out).map_err(|e| e.to_string())?;
            self.measure(block, cfg, &started)?;
        }
        Ok(())
    }

    /// Counts the conversion of `block` into `self.out`, begun at `started`, then reads the
    /// output back and counts that.
    fn measure(&mut self, block: &Block, cfg: &Config, started: &Stopwatch) -> Result<(), String> {
        let m = &mut self.measured;
        m.encode.0 += block.payload;
        m.encode.1 += started.elapsed();
        let started = cfg.clock.start();
        read_back(&self.out, &mut self.scratch, cfg.decompress_limit)
            .map_err(|e| format!("reading back: {e}"))?;
        m.decode.0 += block.payload;
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

/// Runs every row over the blocks `scan` produces; returns what each row measured, in order.
///
/// # Errors
///
/// `scan`'s error.
pub fn run<E>(
    specs: &[(Spec, ConvertOptions)],
    cfg: &Config,
    scan: impl FnOnce(&mut dyn FnMut(Block)) -> Result<(), E>,
) -> Result<Vec<Measured>, E> {
    let rows: Vec<Mutex<Row>> = specs
        .iter()
        .map(|(_, opts)| {
            Mutex::new(Row {
                opts: opts.clone(),
                converter: None,
                measured: Measured::default(),
                out: Vec::new(),
                scratch: Vec::new(),
            })
        })
        .collect();
    let mut progress = Progress::new(
        "krec stats --what-if",
        Unit::Bytes,
        cfg.total_bytes,
        64 << 20,
    );
    let threads = cfg.threads.clamp(1, rows.len().max(1));
    if threads == 1 {
        let mut done = 0u64;
        scan(&mut |block: Block| {
            for row in &rows {
                lock(row).run(&block, cfg);
            }
            done += block.data.len() as u64;
            progress.update(done);
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
            let result = scan(&mut |block: Block| {
                let mut g = lock(&sched);
                while g.blocks.len() >= window {
                    g = wake
                        .wait_timeout(g, Duration::from_millis(200))
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                    progress.update(g.done_bytes);
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
                progress.update(g.done_bytes);
            }
            result
        })?;
    }
    progress.finish();
    Ok(rows
        .into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .measured
        })
        .collect())
}

/// Takes the row furthest behind (the slowest first among equals), converts its next block,
/// until the input is read and every row has converted every block.
fn worker(rows: &[Mutex<Row>], sched: &Mutex<Sched>, wake: &Condvar, cfg: &Config) {
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
