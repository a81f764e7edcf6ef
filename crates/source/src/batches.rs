//! The v2 data batches of segment files and partition directories, as they are, for a producer
//! to send again (`krec produce --batches`, through `krecords_client::produce_batches`).
//!
//! Only what a Kafka 4 broker takes is handed out: control batches (transaction markers) are
//! skipped, since the producer writes its own; a v0/v1 entry or an entry whose CRC fails is an
//! error before anything of it is sent (a broker answers CORRUPT_MESSAGE to the latter and the
//! producer stops); a truncated entry at the end of a file is passed over, and reported.

use crate::{Error, ReadOptions, Reader, Sources};
use krecords_codec::read::{Partial, Step};
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
/// let mut batches = SendableBatches::open(&[file])?;
/// let mut cut = Vec::new();
/// assert_eq!(batches.next_batch(&mut |_, p| cut.push(p.bytes))?, Some(batch));
/// assert_eq!(batches.next_batch(&mut |_, p| cut.push(p.bytes))?, None);
/// assert_eq!(cut, [20]);
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
    /// [`Error::Usage`] for a `kafka://` URL (a topic is copied with `krec ship`) and for a
    /// directory of several partitions (a broker's root: there is no one order to send them
    /// in); what [`Sources::open`] refuses.
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
        Ok(SendableBatches {
            sources,
            index: 0,
            reader: None,
        })
    }

    /// The bytes of the next v2 data batch, `None` after the last one. A truncated entry at the
    /// end of a file is handed to `truncated` with the file's name, and passed over.
    ///
    /// # Errors
    ///
    /// [`Error::Data`] for a v0/v1 entry, an entry whose CRC fails and a malformed entry;
    /// errors reading the files.
    pub fn next_batch(
        &mut self,
        truncated: &mut dyn FnMut(&str, Partial),
    ) -> Result<Option<Vec<u8>>, Error> {
        loop {
            let r = match &mut self.reader {
                Some(r) => r,
                None => {
                    if self.index >= self.sources.partitions.len() {
                        return Ok(None);
                    }
                    let mut r = self.sources.read(self.index, &ReadOptions::default())?;
                    self.index += 1;
                    if r.next_file()?.is_none() {
                        continue;
                    }
                    self.reader.insert(r)
                }
            };
            let name = r.name().to_owned();
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
                Step::Partial(p) => truncated(&name, p),
                Step::End => {
                    if r.next_file()?.is_none() {
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
        b.next_batch(&mut |_, _| panic!("no truncated tail"))
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

    #[test]
    fn urls_are_refused() {
        let e = SendableBatches::open(&["kafka://localhost:9092/t/0".into()]).unwrap_err();
        assert!(e.to_string().contains("use krec ship"), "{e}");
    }
}
