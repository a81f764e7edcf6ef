//! The tolerant field walker: what it says of sound, damaged and foreign bytes.

use krecords_codec::explain::{Explainer, Item, Kind, Value};
use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::Compression;
use proptest::prelude::*;

/// Every item, fields as (position, decompressed, name, value, note, bytes length).
fn walk(bytes: &[u8]) -> (Vec<String>, u64) {
    let mut lines = Vec::new();
    let summary = Explainer::new(1 << 20)
        .explain_bytes(bytes, &mut |item: &Item<'_>| {
            lines.push(match item {
                Item::Heading { kind, text, .. } => format!("# {} {text}", kind.name()),
                Item::Field(f) => format!(
                    "{} {} {:?} {:?}{}",
                    f.at.label(),
                    f.name,
                    f.value,
                    f.note,
                    if f.problem { " PROBLEM" } else { "" }
                ),
                Item::Error { at, message } => format!("{} error {message}", at.label()),
            });
            Ok(())
        })
        .unwrap();
    (lines, summary.problems)
}

fn hello() -> Vec<u8> {
    let mut b = V2Builder::new(0);
    b.append(&NewRecord::new(1714000000000, None, Some(b"hello")))
        .unwrap();
    b.append(&NewRecord::new(1714000000000, None, Some(b"world")))
        .unwrap();
    b.finish().unwrap()
}

#[test]
fn a_sound_batch_is_described_field_by_field() {
    let (lines, problems) = walk(&hello());
    assert_eq!(problems, 0);
    assert_eq!(lines[0], "# entry magic 2 record batch at byte 0, 85 bytes");
    assert_eq!(lines[1], "0 base offset Int(0) None");
    assert!(lines
        .iter()
        .any(|l| l.starts_with("17 crc ") && l.contains("valid")));
    assert!(lines
        .iter()
        .any(|l| l.contains("record 1 value Content Some(\"5 bytes\")")));
}

#[test]
fn a_flipped_bit_is_a_crc_problem_and_the_walk_goes_on() {
    let mut two = [hello(), hello()].concat();
    two[80] ^= 1;
    let (lines, problems) = walk(&two);
    assert_eq!(problems, 1);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("17 crc") && l.ends_with("PROBLEM")));
    assert!(lines
        .iter()
        .any(|l| l == "# entry magic 2 record batch at byte 85, 85 bytes"));
}

#[test]
fn a_truncated_tail_is_explained_then_reported() {
    let mut bytes = hello();
    bytes.truncate(70);
    let (lines, problems) = walk(&bytes);
    assert_eq!(problems, 1);
    assert!(lines[0].contains("declares 85 bytes, only 70 present (a truncated tail)"));
    assert!(lines
        .iter()
        .any(|l| l.starts_with("# partial the entry is cut here")));
    assert_eq!(
        lines.last().unwrap(),
        "0 error truncated entry: the last 70 bytes are not a whole entry"
    );
}

#[test]
fn text_is_not_kafka_data() {
    let text = b"# A README\n\nwith words, not entries, and more than sixteen bytes.\n";
    let (lines, problems) = walk(text);
    assert_eq!(problems, 1);
    assert_eq!(
        lines.last().unwrap(),
        &format!(
            "16 error invalid magic 32 (expected 0, 1 or 2); the {} bytes from here on cannot be read",
            text.len()
        )
    );
}

#[test]
fn compressed_entries_are_explained_from_their_decompressed_bytes() {
    let mut b = V2Builder::new(0).compression(Compression::Gzip, None);
    b.append(&NewRecord::new(1714000000000, Some(b"k"), Some(b"v")))
        .unwrap();
    let (lines, problems) = walk(&b.finish().unwrap());
    assert_eq!(problems, 0);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("# records records, decompressed")));
    assert!(lines
        .iter()
        .any(|l| l.starts_with("d+") && l.contains("record 0 key Content")));

    let mut w = LegacyBuilder::new(1, 10)
        .unwrap()
        .compression(Compression::Snappy, None)
        .unwrap();
    w.append(&NewRecord::new(1714000000000, None, Some(b"a")))
        .unwrap();
    w.append(&NewRecord::new(1714000000000, None, Some(b"b")))
        .unwrap();
    let (lines, problems) = walk(&w.finish().unwrap());
    assert_eq!(problems, 0, "{lines:#?}");
    assert!(lines.iter().any(|l| l.starts_with("# inner messages")));
    assert!(lines.iter().any(|l| l.contains("inner 1 offset Int(1)")));
}

#[test]
fn values_and_kinds_have_names() {
    assert_eq!(Kind::Cut.name(), "partial");
    assert_eq!(Value::from(-1i16), Value::Int(-1));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary bytes, alone or after a sound batch, never panic, and every field lies inside
    /// the input (or inside the decompression limit for decompressed fields).
    #[test]
    fn arbitrary_bytes_never_panic_and_fields_stay_inside(
        tail in proptest::collection::vec(any::<u8>(), 0..600),
        prefix in any::<bool>(),
        flip in any::<usize>(),
    ) {
        let mut bytes = if prefix { hello() } else { Vec::new() };
        bytes.extend_from_slice(&tail);
        if !bytes.is_empty() {
            let i = flip % bytes.len();
            bytes[i] ^= 0x40;
        }
        let len = bytes.len();
        let mut entries_seen = 0u64;
        let summary = Explainer::new(1 << 16)
            .explain_bytes(&bytes, &mut |item: &Item<'_>| {
                match item {
                    Item::Field(f) => {
                        let bound = if f.at.decompressed { 1 << 16 } else { len };
                        assert!(f.at.pos + f.bytes.len() <= bound, "{f:?} in {len} bytes");
                    }
                    Item::Heading { at, kind: Kind::Entry, .. } => {
                        entries_seen += 1;
                        assert!(at.pos < len.max(1));
                    }
                    Item::Heading { .. } => {}
                    Item::Error { at, .. } => {
                        assert!(at.decompressed || at.pos <= len);
                    }
                }
                Ok(())
            })
            .unwrap();
        prop_assert_eq!(summary.entries, entries_seen);
    }
}

/// A walk starts only where an entry starts: every other position is refused with the reason,
/// and a walk from the second entry explains only it.
#[test]
fn positions_must_be_entry_boundaries() {
    use krecords_codec::explain::{entry_boundary, NotABoundary, WalkError};
    let one = hello();
    let mut two = one.clone();
    two.extend_from_slice(&one);
    let len = two.len() as u64;
    let first = one.len() as u64;
    let at = |bytes: &[u8], position: u64| {
        entry_boundary(
            &mut std::io::Cursor::new(bytes),
            bytes.len() as u64,
            position,
        )
    };
    assert!(at(&two, 0).is_ok());
    assert!(at(&two, first).is_ok());
    let refused = |bytes: &[u8], position: u64| match at(bytes, position) {
        Err(WalkError::Position(p)) => p,
        other => panic!("{position}: {other:?}"),
    };
    assert_eq!(
        refused(&two, 5),
        NotABoundary::InsideEntry {
            position: 5,
            at: 0,
            next: first
        }
    );
    assert_eq!(
        refused(&two, len),
        NotABoundary::PastEnd { position: len, len }
    );
    assert!(
        matches!(refused(&[one.as_slice(), &[0u8; 5]].concat(), first + 2), NotABoundary::InTail { at, .. } if at == first)
    );
    let mut bad = one.clone();
    bad[8..12].copy_from_slice(&(-7i32).to_be_bytes());
    bad.extend_from_slice(&one);
    assert_eq!(
        refused(&bad, first),
        NotABoundary::InvalidSize {
            position: first,
            at: 0,
            size: -7
        }
    );
    let mut fields = 0;
    let summary = Explainer::new(1 << 20)
        .explain_slice(&two, first, u64::MAX, &mut |item: &Item<'_>| {
            if let Item::Field(f) = item {
                assert!(
                    f.at.label().parse::<u64>().unwrap() >= first,
                    "{}",
                    f.at.label()
                );
                fields += 1;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(summary.problems, 0);
    assert_eq!(
        fields,
        walk(&one).0.iter().filter(|l| !l.starts_with('#')).count()
    );
}

/// An empty input is an empty log: nothing explained, no problem, and the summary says the
/// input was empty (for `krec explain` to say so instead of printing nothing).
#[test]
fn an_empty_input_is_said_empty_not_a_problem() {
    let mut items = 0;
    let summary = Explainer::new(1 << 20)
        .explain_slice(&[], 0, u64::MAX, &mut |_: &Item<'_>| {
            items += 1;
            Ok(())
        })
        .unwrap();
    assert_eq!(items, 0);
    assert_eq!((summary.entries, summary.problems), (0, 0));
    assert!(summary.empty_input);
    let summary = Explainer::new(1 << 20)
        .explain_slice(&hello(), 0, u64::MAX, &mut |_: &Item<'_>| Ok(()))
        .unwrap();
    assert!(!summary.empty_input);
}
