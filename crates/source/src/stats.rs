//! Sizes per magic and codec ([`krecords_codec::stats::Stats`]) of a partition read through the
//! sources layer, and its entries handed on to a `--what-if` re-encoding
//! ([`krecords_codec::what_if::Feeder`]): what `krec stats` reads.

use crate::{Error, ErrorClass, Reader, TRUNCATED_TAIL};
use krecords_codec::read::Step;
use krecords_codec::stats::Stats;
use krecords_codec::what_if::Feeder;
use krecords_log::check::{self, EntrySource, EntryStream};

/// Accounts every entry of `reader`'s files, file by file, in `stats` (each file one input, or
/// one live input when `live`), and hands each one to `feeder` too when there is one.
///
/// What cannot be accounted is said to `warn`, one message a problem naming the input (an
/// entry whose CRC fails or whose records do not decode, a truncated tail, bytes that cannot be
/// read); an input that is not Kafka data at all is said so. Damage in a file that intact
/// entries follow (a length field that runs past the end of the file, an entry that cannot be
/// read) is not a truncated tail: it is said in `krec verify`'s words ("intact entries follow
/// from byte N (offset O)", [`krecords_log::check::intact_after`]) and, when the files are read
/// whole, the entries after it are counted too, as verify counts them. Otherwise the reading
/// of an input stops at its first malformed entry or truncated tail.
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
    // Damage that intact entries follow in a file is told from a truncated tail as `krec
    // verify` tells it, and the intact entries are counted, when the files are read whole (a
    // read of a range ends at the damage).
    let whole = reader.range() == crate::Resolved::ALL;
    while let Some(file) = reader.next_file()? {
        let name = file.name;
        let path = file.path.filter(|_| whole);
        // The rest of the file after damage in its middle, when intact entries follow it.
        let mut resumed: Option<EntryStream> = None;
        let intact = |position: u64| -> Result<Option<(u64, i64, EntryStream)>, Error> {
            let Some(path) = path.as_deref() else {
                return Ok(None);
            };
            let cannot = |e| Error::io(format!("cannot read {}", path.display()), e);
            let found = check::intact_after(path, position)
                .map_err(|e| cannot(std::io::Error::other(e.to_string())))?;
            let Some((at, first)) = found else {
                return Ok(None);
            };
            let rest = EntryStream::open_file_at(path, at).map_err(cannot)?;
            Ok(Some((at, first, rest)))
        };
        if live {
            stats.start_live_input();
        } else {
            stats.start_input();
        }
        if let Some(f) = feeder.as_deref_mut() {
            f.start_input(&name);
        }
        let cannot_read = |e| Error::reading(&name, e);
        loop {
            let step = match resumed.as_mut() {
                Some(r) => r.next_entry(),
                None => reader.next_entry(),
            };
            match step.map_err(cannot_read)? {
                Step::End => break,
                Step::Partial(p) => {
                    let position = p.position as u64;
                    if let Some((at, first, rest)) = intact(position)? {
                        let what = check::LENGTH_PAST_THE_END;
                        let said = check::damage_before_intact(what, position, at, first);
                        warn(format!("{name}: byte {position}: {said}"));
                        stats.unreadable(at.saturating_sub(position));
                        resumed = Some(rest);
                        continue;
                    }
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
                    let position = match resumed.as_ref() {
                        Some(r) => r.position(),
                        None => reader.position(),
                    } as u64;
                    if let Some((at, first, rest)) = intact(position)? {
                        let said = check::damage_before_intact(&e, position, at, first);
                        warn(format!("{name}: {said}"));
                        stats.unreadable(at.saturating_sub(position));
                        resumed = Some(rest);
                        continue;
                    }
                    let rest = match resumed.as_mut() {
                        Some(r) => r.remaining_bytes(),
                        None => reader.remaining_bytes(),
                    }
                    .map_err(cannot_read)?;
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
