//! What local files know about their partition: watermarks, aborted transactions and the last
//! stable offset, and the offset of a time.
//!
//! A partition directory answers from its log ([`Log::open_read_only`]: the offset and time
//! indexes, the transaction indexes, the producer state). A file without its directory (or a
//! few segment files) answers from one pass over its entries' headers: offsets, max timestamps
//! and the transaction markers of control batches (nothing is decompressed).

use crate::error::Error;
use crate::position::Watermarks;
use krecords_codec::read::{Batch, ReadFill, Step, Streamer};
use krecords_log::transaction::AbortedTransaction;
use krecords_log::{Log, OffsetSpec};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// An aborted transaction and the offset of its ABORT marker.
pub(crate) type Aborted = (AbortedTransaction, i64);

/// What a partition's files say about it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    pub watermarks: Option<Watermarks>,
    /// Aborted transactions, in marker order.
    pub aborted: Vec<Aborted>,
    /// The open transaction that holds the last stable offset: (producer, first offset).
    pub open_txn: Option<(i64, i64)>,
    /// Damage in the middle of a directory's log: the log as read ends at its offset.
    pub damage: Option<krecords_log::Damage>,
}

/// A streamer over a file, from its start (at most `max_bytes` of it).
pub(crate) use krecords_log::check::file_streamer as file_stream;

/// The entry streamer of local files and standard input.
pub(crate) type FileStreamer = Streamer<ReadFill<Box<dyn Read>>>;

/// Calls `f` with every complete entry of `files`, in order, until it returns `false`. This pass
/// comes before the read: a file that can be read only once ([`krecords_log::check::read_once`]:
/// a FIFO, a socket, a device; the read would wait for a writer for ever), is refused, as
/// standard input is.
fn each_entry(
    files: &[PathBuf],
    mut f: impl FnMut(&Batch<'_>) -> Result<bool, Error>,
) -> Result<(), Error> {
    for path in files {
        if krecords_log::check::read_once(path) {
            return Err(Error::Usage(format!(
                "{}: read_committed, a start or an end needs the partition's transaction \
                 markers and offsets before reading, which a FIFO or a device cannot give (it \
                 is read once, as standard input is); save it to a file, or read all of it \
                 read_uncommitted",
                path.display()
            )));
        }
        let mut s = file_stream(path, None)
            .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
        loop {
            let step = s
                .next_entry()
                .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
            match step {
                Step::Entry(b) => {
                    if !f(&b)? {
                        return Ok(());
                    }
                }
                Step::Error(_) | Step::Partial(_) | Step::End => break,
            }
        }
    }
    Ok(())
}

/// The facts of a partition directory, from its log.
pub(crate) fn dir_facts(dir: &Path) -> Result<(Facts, Log), Error> {
    let log = Log::open_read_only(dir).map_err(|e| Error::log(dir.display().to_string(), e))?;
    let lso = log.last_stable_offset();
    let open_txn = log.producer_states().into_iter().find_map(|p| {
        p.current_txn_first_offset
            .filter(|&f| f == lso)
            .map(|f| (p.producer_id, f))
    });
    let facts = Facts {
        watermarks: Some(Watermarks {
            log_start: log.log_start_offset(),
            high_watermark: log.high_watermark(),
            last_stable: Some(lso),
        }),
        aborted: log
            .aborted_txns()
            .iter()
            .map(|t| (t.as_aborted_transaction(), t.last_offset))
            .collect(),
        open_txn,
        damage: log.damage().cloned(),
    };
    Ok((facts, log))
}

/// The first offset of a directory's log whose timestamp is at or after `ms`.
pub(crate) fn dir_time(log: &Log, ms: i64) -> Result<Option<i64>, Error> {
    let found = log
        .offsets(OffsetSpec::Timestamp(ms))
        .map_err(|e| Error::log(log.dir().display().to_string(), e))?;
    Ok((found.offset >= 0).then_some(found.offset))
}

/// The facts of files without their directory: one pass over the entries' headers.
pub(crate) fn files_facts(files: &[PathBuf]) -> Result<Facts, Error> {
    let mut first = None;
    let mut next = 0i64;
    // Open transactions: producer -> first offset.
    let mut open: HashMap<i64, i64> = HashMap::new();
    let mut aborted = Vec::new();
    let mut scratch = Vec::new();
    each_entry(files, |b| {
        let lo = b.first_offset().unwrap_or_else(|| b.last_offset());
        first.get_or_insert(lo);
        next = next.max(b.last_offset().saturating_add(1));
        let Batch::V2(v) = b else { return Ok(true) };
        let producer = v.raw_producer_id();
        if producer < 0 || !v.is_transactional() {
            return Ok(true);
        }
        if v.is_control() {
            let started = open.remove(&producer).unwrap_or(first.unwrap_or(lo));
            let abort = krecords_codec::txn::contains_abort_marker(b, &mut scratch)
                .map_err(|e| Error::Data(e.to_string()))?;
            if abort {
                let t = AbortedTransaction {
                    producer_id: producer,
                    first_offset: started,
                };
                aborted.push((t, b.last_offset()));
            }
        } else {
            open.entry(producer).or_insert(v.base_offset());
        }
        Ok(true)
    })?;
    let open_txn = open.iter().map(|(&p, &f)| (p, f)).min_by_key(|&(_, f)| f);
    let Some(log_start) = first else {
        return Ok(Facts {
            watermarks: Some(Watermarks {
                log_start: 0,
                high_watermark: 0,
                last_stable: Some(0),
            }),
            ..Facts::default()
        });
    };
    Ok(Facts {
        watermarks: Some(Watermarks {
            log_start,
            high_watermark: next,
            last_stable: Some(open_txn.map_or(next, |(_, f)| f)),
        }),
        aborted,
        open_txn,
        damage: None,
    })
}

/// The first offset of `files` whose record timestamp is at or after `ms`: the first entry
/// whose max timestamp reaches it, then its first record that does.
pub(crate) fn files_time(files: &[PathBuf], ms: i64, limit: usize) -> Result<Option<i64>, Error> {
    let mut found = None;
    let mut scratch = Vec::new();
    each_entry(files, |b| {
        if b.max_timestamp() < ms {
            return Ok(true);
        }
        let records = b
            .records(&mut scratch, limit)
            .map_err(|e| Error::Data(e.to_string()))?;
        for r in records {
            let r = r.map_err(|e| Error::Data(e.to_string()))?;
            if r.timestamp().is_some_and(|t| t >= ms) {
                found = Some(r.offset());
                return Ok(false);
            }
        }
        Ok(true)
    })?;
    Ok(found)
}
