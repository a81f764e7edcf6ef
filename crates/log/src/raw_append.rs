//! Pre-built entries (`krec log append --raw`) split into appends: each entry's structure and
//! CRC are checked first, a run of uncompressed v0/v1 messages of one magic is one append (as a
//! producer's message set), every other entry is an append of its own.
//!
//! The bytes are untrusted: the codec's panic lints apply (`untrusted_modules!` in lib.rs).

use krecords_codec::layout::LOG_OVERHEAD;
use krecords_codec::read::{Batch, Entries};
use krecords_codec::Compression;

/// One append: whole entries, and the byte position of the first in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawAppend {
    /// The entries' bytes.
    pub bytes: Vec<u8>,
    /// The first entry's byte position in the input.
    pub position: usize,
}

/// A truncated entry at the end of the input, dropped as Kafka trims one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DroppedTail {
    /// Its byte position in the input.
    pub position: usize,
    /// How many bytes of it there are.
    pub bytes: usize,
}

/// The input split into appends.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawAppends {
    /// The appends, in input order.
    pub appends: Vec<RawAppend>,
    /// The truncated entry at the end that was dropped, if any.
    pub dropped: Option<DroppedTail>,
}

/// Splits pre-built entries into appends, checking each entry's structure and CRC first.
///
/// A truncated trailing entry is dropped (see [`RawAppends::dropped`]), as Kafka trims it,
/// unless it declares more than `max_message_bytes` (prefix included; the log's
/// `max.message.bytes`): that is a corrupt size field, which would otherwise hide the entries
/// after it, and is refused. (A complete entry over the limit is left to the append, which
/// answers MESSAGE_TOO_LARGE.) The error is the reason, as a sentence naming the byte position.
pub fn split(input: &[u8], max_message_bytes: usize) -> Result<RawAppends, String> {
    let mut out = RawAppends::default();
    // Magic of the open run of uncompressed v0/v1 messages, if the last append is one.
    let mut run_magic: Option<u8> = None;
    let mut entries = Entries::new(input);
    loop {
        let batch = match entries.next_entry() {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(e) => return Err(e.to_string()),
        };
        let position = batch.position();
        if !batch.is_crc_valid() {
            return Err(format!(
                "entry at byte {position}: record is corrupt (stored crc {}, computed {})",
                batch.crc(),
                batch.compute_crc()
            ));
        }
        let codec = batch
            .compression()
            .map_err(|e| format!("entry at byte {position}: {e}"))?;
        let plain_legacy = matches!(batch, Batch::Legacy(_)) && codec == Compression::None;
        match out.appends.last_mut() {
            Some(a) if plain_legacy && run_magic == Some(batch.magic()) => {
                a.bytes.extend_from_slice(batch.as_bytes());
            }
            _ => {
                out.appends.push(RawAppend {
                    bytes: batch.as_bytes().to_vec(),
                    position,
                });
                run_magic = plain_legacy.then_some(batch.magic());
            }
        }
    }
    if let Some(p) = entries.partial() {
        if let Some(declared) = p.declared_size.filter(|&d| d > max_message_bytes) {
            // Read again bounded, for the codec's own message about the size field.
            let bounded = input.get(p.position..).and_then(|rest| {
                Entries::with_base(rest, p.position)
                    .max_entry_size(max_message_bytes.saturating_sub(LOG_OVERHEAD))
                    .next()
            });
            return Err(match bounded {
                Some(Err(e)) => format!(
                    "{e}: the entry would need {declared} bytes, {} are left, and \
                     max.message.bytes is {max_message_bytes}",
                    p.bytes
                ),
                _ => format!("entry at byte {} declares {declared} bytes", p.position),
            });
        }
        out.dropped = Some(DroppedTail {
            position: p.position,
            bytes: p.bytes,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
    use proptest::prelude::*;

    fn v2(offset: i64) -> Vec<u8> {
        let mut b = V2Builder::new(offset);
        b.append(&NewRecord::new(5, None, Some(b"v"))).unwrap();
        b.finish().unwrap()
    }

    fn v1(offset: i64) -> Vec<u8> {
        let mut b = LegacyBuilder::new(1, offset).unwrap();
        b.append(&NewRecord::new(5, None, Some(b"v"))).unwrap();
        b.finish().unwrap()
    }

    #[test]
    fn legacy_runs_group_and_batches_stand_alone() {
        let input = [v1(0), v1(1), v2(2), v2(3), v1(4)].concat();
        let split = split(&input, 1 << 20).unwrap();
        let positions: Vec<usize> = split.appends.iter().map(|a| a.position).collect();
        let (a, b, c) = (v1(0).len(), v2(2).len(), v1(4).len());
        assert_eq!(positions, [0, 2 * a, 2 * a + b, 2 * a + 2 * b]);
        assert_eq!(split.appends[0].bytes.len(), 2 * a);
        assert_eq!(split.appends[3].bytes.len(), c);
        assert_eq!(split.dropped, None);
    }

    #[test]
    fn truncated_tail_is_dropped_unless_its_size_is_over_the_limit() {
        let one = v2(0);
        let mut input = [one.clone(), one.clone()].concat();
        input.truncate(one.len() + 20);
        let split = split(&input, 1 << 20).unwrap();
        assert_eq!(split.appends.len(), 1);
        assert_eq!(
            split.dropped,
            Some(DroppedTail {
                position: one.len(),
                bytes: 20
            })
        );
        // The same tail with a declared size over max.message.bytes is refused.
        let err = super::split(&input, 30).unwrap_err();
        assert!(err.contains("max.message.bytes is 30"), "{err}");
    }

    #[test]
    fn a_bad_crc_is_refused() {
        let mut input = v2(0);
        let last = input.len() - 1;
        input[last] ^= 1;
        let err = split(&input, 1 << 20).unwrap_err();
        assert!(err.starts_with("entry at byte 0: record is corrupt"), "{err}");
    }

    proptest! {
        #[test]
        fn any_bytes_split_or_refused_and_appends_cover_the_input(
            bytes in proptest::collection::vec(any::<u8>(), 0..400),
            max in 0usize..2000,
        ) {
            if let Ok(split) = split(&bytes, max) {
                let kept: usize = split.appends.iter().map(|a| a.bytes.len()).sum();
                let dropped = split.dropped.map_or(0, |d| d.bytes);
                prop_assert_eq!(kept + dropped, bytes.len());
            }
        }
    }
}
