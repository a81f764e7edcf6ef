//! Sizes per magic and codec ([`krecords_codec::stats::Stats`]) of a partition read through the
//! sources layer, and its entries handed on to a `--what-if` re-encoding
//! ([`krecords_codec::what_if::Feeder`]): what `krec stats` reads.

use crate::{Error, ErrorClass, Reader, TRUNCATED_TAIL};
use krecords_codec::read::Step;
use krecords_codec::stats::Stats;
use krecords_codec::what_if::Feeder;

/// Accounts every entry of `reader`'s files, file by file, in `stats` (each file one input, or
/// one live input when `live`), and hands each one to `feeder` too when there is one.
///
/// What cannot be accounted is said to `warn`, one message a problem naming the input (an
/// entry whose CRC fails or whose records do not decode, a truncated tail, bytes that cannot be
/// read); an input that is not Kafka data at all is said so. The reading of an input stops at
/// its first malformed entry or truncated tail.
///
/// Returns [`TRUNCATED_TAIL`] when an input ends inside an entry (input that is not Kafka data
/// at all is counted by `stats` instead).
///
/// # Errors
///
/// The files cannot be read.
///
/// # Example
///
/// ```
/// use krecords_codec::stats::Stats;
/// use krecords_codec::write::{NewRecord, V2Builder};
/// use krecords_source::{ReadOptions, Sources};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let file = dir.path().join("entries.bin");
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"v")))?;
/// let batch = b.finish()?.to_vec();
/// std::fs::write(&file, [batch.as_slice(), &batch[..30]].concat())?;
///
/// let sources = Sources::open(&[file], &mut || unreachable!())?;
/// let mut reader = sources.read(0, &ReadOptions::default())?;
/// let mut stats = Stats::new(1 << 20);
/// let mut warnings = Vec::new();
/// let tail = krecords_source::stats::feed(&mut reader, false, &mut stats, None, &mut |w| {
///     warnings.push(w)
/// })?;
/// assert_eq!(tail, Some(krecords_source::TRUNCATED_TAIL));
/// assert_eq!(stats.summary().entries, 1);
/// assert!(warnings[0].ends_with("a truncated tail: the last 30 bytes are not a whole log entry"));
/// # Ok(())
/// # }
/// ```
pub fn feed(
    reader: &mut Reader,
    live: bool,
    stats: &mut Stats,
    mut feeder: Option<&mut Feeder<'_>>,
    warn: &mut dyn FnMut(String),
) -> Result<Option<ErrorClass>, Error> {
    let mut tail = None;
    while let Some(file) = reader.next_file()? {
        let name = file.name;
        if live {
            stats.start_live_input();
        } else {
            stats.start_input();
        }
        if let Some(f) = feeder.as_deref_mut() {
            f.start_input(&name);
        }
        let cannot_read = |e| Error::io(format!("cannot read {name}"), e);
        loop {
            match reader.next_entry().map_err(cannot_read)? {
                Step::End => break,
                Step::Partial(p) => {
                    if stats.partial(p.bytes as u64) {
                        warn(format!(
                            "{name}: not Kafka data: its {} bytes are not a whole log entry",
                            p.bytes
                        ));
                    } else {
                        warn(format!(
                            "{name}: a truncated tail: the last {} bytes are not a whole log entry",
                            p.bytes
                        ));
                        tail = Some(TRUNCATED_TAIL);
                    }
                    break;
                }
                Step::Error(e) => {
                    let e = e.to_string();
                    let rest = reader.remaining_bytes().map_err(cannot_read)?;
                    let what = if stats.unreadable(rest) {
                        "not Kafka data: "
                    } else {
                        ""
                    };
                    warn(format!(
                        "{name}: {what}{e}; the {rest} bytes from here on cannot be read"
                    ));
                    break;
                }
                Step::Entry(batch) => {
                    let accounted = stats.entry(&batch);
                    if !accounted.crc_valid {
                        warn(format!(
                            "{name}: entry at byte {}: crc mismatch",
                            batch.position()
                        ));
                    }
                    if let Err(e) = &accounted.sizes {
                        warn(format!(
                            "{name}: cannot decode the records of the entry at byte {}: {e}",
                            batch.position()
                        ));
                    }
                    if let Some(f) = feeder.as_deref_mut() {
                        f.entry(&batch, &accounted);
                    }
                }
            }
        }
        if let Some(f) = feeder.as_deref_mut() {
            f.end_input();
        }
    }
    Ok(tail)
}
