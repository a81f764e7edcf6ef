//! The v2 data batches of segment files and partition directories, as they are, for a producer
//! to send again (`krec produce --batches`, through `krecords_client::produce_batches`).
//!
//! The batches are read as a consumer at read_committed reads them: the batches of aborted
//! transactions are left out, and the read of a partition stops at its last stable offset (an
//! open transaction's batches, and all after them, are not sent, and that is said). Sent again,
//! by a producer whose batches are committed once acknowledged, an aborted or undecided
//! record would become a committed one.
//!
//! Only what a Kafka 4 broker takes is handed out: control batches (transaction markers) are
//! skipped, since the producer writes its own; a v0/v1 entry or an entry whose CRC fails is an
//! error before anything of it is sent (a broker answers CORRUPT_MESSAGE to the latter and the
//! producer stops); a truncated entry at the end of a partition's last file is passed over, and
//! reported, and one with more files of the partition after it is damage: an error, after the
//! batches before it.

use crate::{Error, IsolationLevel, ReadOptions, Reader, Sources};
use krecords_codec::read::Step;
use std::path::PathBuf;

/// The v2 data batches of files and partition directories, in argument order (see the
/// [module](self) docs).
///
/// # Example
///
/// ```
/// use krecords_codec::write::{NewRecord, V2Builder};
/// use krecords_source::batches::SendableBatches;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let file = dir.path().join("entries.bin");
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"v")))?;
/// let batch = b.finish()?.to_vec();
/// std::fs::write(&file, [batch.as_slice(), &batch[..20]].concat())?;
///
/// let at = batch.len();
/// let mut batches = SendableBatches::open(&[file.clone()])?;
/// let mut notes = Vec::new();
/// assert_eq!(batches.next_batch(&mut |n| notes.push(n.to_owned()))?, Some(batch));
/// assert_eq!(batches.next_batch(&mut |n| notes.push(n.to_owned()))?, None);
/// let cut = format!("{}: a truncated entry of 20 bytes at byte {at} is not sent", file.display());
/// assert_eq!(notes, [cut]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct SendableBatches {
    sources: Sources,
    /// The next partition to open.
    index: usize,
    reader: Option<Reader>,
}

impl SendableBatches {
    /// Opens segment files and partition directories (see [`Sources::open`]).
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] for a `kafka://` URL (a topic is copied with `krec ship`), for a
    /// directory of several partitions (a broker's root: there is no one order to send them
    /// in) and for standard input or a file that can be read only once (read twice:
    /// [`krecords_log::check::read_once`]); what [`Sources::open`] refuses.
    pub fn open(paths: &[PathBuf]) -> Result<SendableBatches, Error> {
        if let Some(live) = paths
            .iter()
            .find(|p| p.to_string_lossy().starts_with("kafka://"))
        {
            return Err(Error::Usage(format!(
                "{}: --batches reads files; to copy a topic, use krec ship",
                live.display()
            )));
        }
        let sources = Sources::open(paths, &mut || Err(Error::Usage("not a file".into())))?;
        if sources.partitions.len() > paths.len() {
            let names: Vec<&str> = sources.partitions.iter().map(|p| p.name.as_str()).collect();
            return Err(Error::Usage(format!(
                "--batches takes segment files or partition directories, not a directory of {} \
                 partitions ({})",
                names.len(),
                names.join(", ")
            )));
        }
        // Read as a read_committed consumer reads it, a partition is read twice (its
        // transactions first, then its batches), which a pipe cannot give.
        for p in &sources.partitions {
            let piped = p.is_stdin() || p.files().iter().any(|f| krecords_log::check::read_once(f));
            if piped {
                return Err(Error::Usage(format!(
                    "{}: --batches reads a partition twice (its transactions first, to leave \
                     out the aborted ones, then its batches), which a pipe or standard input \
                     cannot give: save it to a file first",
                    p.name
                )));
            }
        }
        Ok(SendableBatches {
            sources,
            index: 0,
            reader: None,
        })
    }

    /// The bytes of the next v2 data batch, `None` after the last one. What is not sent is
    /// said to `note`, a line each, the file or directory named: a truncated entry at the end
    /// of a file (passed over), a stop at a partition's last stable offset (the open
    /// transaction's batches and those after them).
    ///
    /// # Errors
    ///
    /// [`Error::Data`] for a v0/v1 entry, an entry whose CRC fails and a malformed entry;
    /// errors reading the files.
    pub fn next_batch(&mut self, note: &mut dyn FnMut(&str)) -> Result<Option<Vec<u8>>, Error> {
        loop {
            let r = match &mut self.reader {
                Some(r) => r,
                None => {
                    if self.index >= self.sources.partitions.len() {
                        return Ok(None);
                    }
                    // A directory is read as its log: damage in its middle is the log's
                    // error, a torn tail its end (a note).
                    let options = ReadOptions {
                        isolation: IsolationLevel::ReadCommitted,
                        as_log: true,
                        ..ReadOptions::default()
                    };
                    let mut r = self.sources.read(self.index, &options)?;
                    self.index += 1;
                    if r.next_file()?.is_none() {
                        continue;
                    }
                    self.reader.insert(r)
                }
            };
            let name = r.name().to_owned();
            let more_files = r.more_files();
            let step = r.next_entry().map_err(|e| Error::io(name.as_str(), e))?;
            match step {
                Step::Entry(b) if b.is_control() => {}
                Step::Entry(b) if b.magic() < 2 => {
                    return Err(Error::Data(format!(
                        "{name}: the entry at byte {} is a v{} message set, which Kafka 4 no \
                         longer takes: up-convert it first (krec convert --magic 2) or use \
                         krec ship",
                        b.position(),
                        b.magic()
                    )))
                }
                Step::Entry(b) if !b.is_crc_valid() => {
                    return Err(Error::Data(format!(
                        "{name}: the entry at byte {}: crc mismatch (stored {}, computed {}): \
                         not sent",
                        b.position(),
                        b.crc(),
                        b.compute_crc()
                    )))
                }
                Step::Entry(b) => return Ok(Some(b.as_bytes().to_vec())),
                Step::Error(e) => return Err(Error::Data(format!("{name}: {e}"))),
                // A read_committed read ends at a truncated entry: with more files of the
                // partition after it, that is damage in the middle of the log, and what
                // follows it is not sent (an error, not a note).
                Step::Partial(p) if more_files => {
                    return Err(Error::Data(format!(
                        "{name}: a truncated entry of {} bytes at byte {}, and more of the \
                         partition after it: the log is damaged there, and nothing from it on \
                         is sent (krec salvage copies what is intact)",
                        p.bytes, p.position
                    )))
                }
                Step::Partial(p) => note(&format!(
                    "{name}: a truncated entry of {} bytes at byte {} is not sent",
                    p.bytes, p.position
                )),
                Step::End => {
                    if r.next_file()?.is_none() {
                        r.notes().iter().for_each(|n| note(n));
                        if let Some(stop) = r.stop() {
                            note(&format!(
                                "{name}: {stop}; its batches from offset {} on are not sent",
                                stop.at
                            ));
                        }
                        self.reader = None;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use krecords_codec::write::{NewRecord, V2Builder};

    fn batch(base: i64) -> Vec<u8> {
        let mut b = V2Builder::new(base);
        b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"v")))
            .unwrap();
        b.finish().unwrap().to_vec()
    }

    fn next(b: &mut SendableBatches) -> Result<Option<Vec<u8>>, Error> {
        b.next_batch(&mut |n| panic!("no note: {n}"))
    }

    #[test]
    fn files_in_argument_order_and_bad_entries_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
        std::fs::write(&a, batch(5)).unwrap();
        std::fs::write(&b, batch(0)).unwrap();
        let mut batches = SendableBatches::open(&[a.clone(), b]).unwrap();
        assert_eq!(next(&mut batches).unwrap(), Some(batch(5)));
        assert_eq!(next(&mut batches).unwrap(), Some(batch(0)));
        assert_eq!(next(&mut batches).unwrap(), None);

        let mut bad = batch(0);
        let last = bad.len() - 1;
        bad[last] ^= 0xff;
        std::fs::write(&a, &bad).unwrap();
        let e = next(&mut SendableBatches::open(&[a]).unwrap()).unwrap_err();
        assert!(
            matches!(&e, Error::Data(m) if m.contains("crc mismatch")),
            "{e}"
        );
    }

    /// The trial that found it: a partition of committed, aborted and committed records was
    /// sent whole (the control batches left out), so the aborted records came back committed.
    /// Now only what a read_committed consumer reads is sent, and an open transaction ends
    /// what is sent, said in a note.
    #[test]
    fn aborted_and_open_transactions_are_not_sent() {
        use krecords_log::{AppendOrigin, Log, LogConfig};
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("t-0");
        let mut log = Log::create(&dir, LogConfig::default()).unwrap();
        let now = 1_714_000_000_000;
        let mut sent_as = Vec::new();
        let mut append = |log: &mut Log, producer: Option<i64>, value: &[u8]| {
            let mut b = V2Builder::new(0);
            if let Some(p) = producer {
                b = b.producer(p, 0, 0).transactional(true);
            }
            b.append(&NewRecord::new(now, None, Some(value))).unwrap();
            let info = log
                .append(&b.finish().unwrap(), AppendOrigin::Client)
                .unwrap();
            sent_as.push((value.to_vec(), info.base_offset));
        };
        append(&mut log, None, b"c0");
        append(&mut log, Some(7), b"a0");
        log.append_end_txn(7, 0, 0, false, now).unwrap();
        append(&mut log, Some(8), b"t0");
        log.append_end_txn(8, 0, 0, true, now).unwrap();
        append(&mut log, None, b"c1");
        append(&mut log, Some(9), b"open");
        append(&mut log, None, b"after");
        log.close().unwrap();

        let mut batches = SendableBatches::open(std::slice::from_ref(&dir)).unwrap();
        let mut notes = Vec::new();
        let mut values = Vec::new();
        while let Some(b) = batches
            .next_batch(&mut |n| notes.push(n.to_owned()))
            .unwrap()
        {
            let entries = krecords_codec::read::Entries::new(&b);
            for e in entries {
                let e = e.unwrap();
                for r in e.records(&mut Vec::new(), 1 << 20).unwrap() {
                    values.push(r.unwrap().value().unwrap().to_vec());
                }
            }
        }
        assert_eq!(values, [b"c0".to_vec(), b"t0".to_vec(), b"c1".to_vec()]);
        let open_at = sent_as[4].1;
        let said = format!(
            "{}: stopped at last stable offset {open_at}; high watermark {}: an open \
             transaction from producer 9 since offset {open_at}; its batches from offset \
             {open_at} on are not sent",
            dir.display(),
            sent_as[5].1 + 1
        );
        assert_eq!(notes, [said]);
    }

    /// A truncated entry with more of the partition after it is damage: an error after the
    /// batches before it, whether the partition is named by its directory or its files (a
    /// review found the files after it left out, exit 0). At the end of the partition it is a
    /// torn tail, passed over with a note.
    #[test]
    fn a_truncated_entry_in_the_middle_is_an_error_and_at_the_end_a_note() {
        use krecords_log::{AppendOrigin, Log, LogConfig};
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("t-0");
        let config = LogConfig::from_pairs([("segment.bytes", "100")]).unwrap();
        let mut log = Log::create(&dir, config).unwrap();
        for i in 0..3 {
            let mut b = V2Builder::new(0);
            b.append(&NewRecord::new(1_714_000_000_000 + i, None, Some(b"value")))
                .unwrap();
            log.append(&b.finish().unwrap(), AppendOrigin::Client)
                .unwrap();
        }
        log.close().unwrap();
        let files = crate::dir_logs(&dir).unwrap();
        assert_eq!(files.len(), 3, "{files:?}");
        let append = |f: &std::path::Path| {
            use std::io::Write;
            let mut w = std::fs::OpenOptions::new().append(true).open(f).unwrap();
            w.write_all(&batch(0)[..30]).unwrap();
        };
        // Cut into the last file: every batch sent, the cut said.
        append(&files[2]);
        let mut sent = 0;
        let mut notes = Vec::new();
        let mut all = SendableBatches::open(std::slice::from_ref(&dir)).unwrap();
        while all
            .next_batch(&mut |n| notes.push(n.to_owned()))
            .unwrap()
            .is_some()
        {
            sent += 1;
        }
        assert_eq!(sent, 3);
        assert_eq!(notes.len(), 1, "{notes:?}");
        // And into the first: its batch is sent, then the error.
        append(&files[0]);
        for (args, said) in [
            (vec![dir.clone()], "intact entries follow"),
            (files.clone(), "and more of the partition after it"),
        ] {
            let mut b = SendableBatches::open(&args).unwrap();
            assert!(next(&mut b).unwrap().is_some());
            let e = next(&mut b).unwrap_err();
            assert!(e.to_string().contains(said), "{args:?}: {e}");
            assert_eq!(e.class(), crate::ErrorClass::Data);
        }
    }

    /// Read at read_committed, a partition is read twice, which a pipe cannot give: a usage
    /// error before anything is sent (a FIFO was a usage error mid-send, exit 1).
    #[cfg(unix)]
    #[test]
    fn a_pipe_is_refused_before_anything_is_sent() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return;
        }
        let e = SendableBatches::open(std::slice::from_ref(&fifo)).unwrap_err();
        assert_eq!(e.class(), crate::ErrorClass::Usage, "{e}");
        assert!(e.to_string().contains("save it to a file first"), "{e}");
        let e = SendableBatches::open(&["-".into()]).unwrap_err();
        assert_eq!(e.class(), crate::ErrorClass::Usage, "{e}");
    }

    #[test]
    fn urls_are_refused() {
        let e = SendableBatches::open(&["kafka://localhost:9092/t/0".into()]).unwrap_err();
        assert!(e.to_string().contains("use krec ship"), "{e}");
    }
}
