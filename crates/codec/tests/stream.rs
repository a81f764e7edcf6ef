//! `read::stream::Streamer`: a whole buffer, positioned reads and a chunked stream give the same
//! entries and the same end; hostile size fields never grow the window past its bounds.

use crate::proptests::config;
use krecords_codec::read::{Entries, ReadFill, Step, Streamer};
use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::Compression;
use proptest::collection::vec;
use proptest::prelude::*;
use std::io::{self, Read};

const T0: i64 = 1_714_000_000_000;

/// One entry: (magic, codec index, values).
fn entry() -> impl Strategy<Value = (u8, u8, Vec<Vec<u8>>)> {
    (0u8..=2, 0u8..2, vec(vec(any::<u8>(), 0..300), 1..6))
}

fn build(offset: i64, (magic, codec, values): &(u8, u8, Vec<Vec<u8>>)) -> Vec<u8> {
    let codec = [Compression::None, Compression::Lz4][*codec as usize];
    if *magic == 2 {
        let mut b = V2Builder::new(offset).compression(codec, None);
        for v in values {
            b.append(&NewRecord::new(T0, Some(b"k"), Some(v))).unwrap();
        }
        b.finish().unwrap()
    } else {
        let mut b = LegacyBuilder::new(*magic, offset)
            .unwrap()
            .compression(codec, None)
            .unwrap();
        for v in values {
            b.append(&NewRecord::new(T0, None, Some(v))).unwrap();
        }
        b.finish().unwrap()
    }
}

/// How an input is damaged after it is built.
#[derive(Debug, Clone)]
enum Damage {
    None,
    /// Cut this many bytes off the end.
    Truncate(usize),
    /// Overwrite a byte.
    Byte(prop::sample::Index, u8),
    /// Overwrite an entry's size field (the `n`th entry, modulo).
    Size(usize, i32),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        2 => Just(Damage::None),
        2 => (1usize..400).prop_map(Damage::Truncate),
        2 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Damage::Byte(i, b)),
        3 => (
            0usize..8,
            prop_oneof![
                Just(i32::MAX),
                Just(i32::MIN),
                Just(0),
                Just(13),
                Just(14),
                0..4096i32,
                (1 << 20)..i32::MAX
            ]
        )
            .prop_map(|(n, s)| Damage::Size(n, s)),
    ]
}

fn input(entries: &[(u8, u8, Vec<Vec<u8>>)], damage: &Damage) -> Vec<u8> {
    let mut out = Vec::new();
    let mut starts = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        starts.push(out.len());
        out.extend(build(10 * i as i64, e));
    }
    match damage {
        Damage::None => {}
        Damage::Truncate(n) => out.truncate(out.len().saturating_sub(*n)),
        Damage::Byte(i, b) if !out.is_empty() => {
            let at = i.index(out.len());
            out[at] = *b;
        }
        Damage::Byte(..) => {}
        Damage::Size(n, size) if !starts.is_empty() => {
            let at = starts[n % starts.len()];
            out[at + 8..at + 12].copy_from_slice(&size.to_be_bytes());
        }
        Damage::Size(..) => {}
    }
    out
}

/// Everything a reading gives: each entry's position and bytes, then how it ended.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    entries: Vec<(usize, Vec<u8>)>,
    end: String,
}

fn whole(buf: &[u8], max: usize) -> Outcome {
    let mut entries = Entries::new(buf).max_entry_size(max);
    let mut out = Vec::new();
    let end = loop {
        match entries.next_entry() {
            Ok(Some(b)) => out.push((b.position(), b.as_bytes().to_vec())),
            Ok(None) => {
                break match entries.partial() {
                    Some(p) => format!("partial {p:?}"),
                    None => "end".to_string(),
                }
            }
            Err(e) => break format!("error {e}"),
        }
    };
    Outcome { entries: out, end }
}

fn streamed<F: krecords_codec::read::Fill>(mut s: Streamer<F>, bound: usize) -> Outcome {
    let mut out = Vec::new();
    let end = loop {
        let step = s.next_entry().unwrap();
        let end = match step {
            Step::Entry(b) => {
                out.push((b.position(), b.as_bytes().to_vec()));
                None
            }
            Step::Partial(p) => Some(format!("partial {p:?}")),
            Step::Error(e) => Some(format!("error {e}")),
            Step::End => Some("end".to_string()),
        };
        assert!(
            s.window_capacity() <= bound,
            "window {} above {bound}",
            s.window_capacity()
        );
        if let Some(end) = end {
            break end;
        }
    };
    assert!(matches!(s.next_entry().unwrap(), Step::End));
    Outcome { entries: out, end }
}

/// A reader that hands out its bytes in the given chunk sizes (cycling), with an `Interrupted`
/// error now and then.
struct Chunked<'a> {
    buf: &'a [u8],
    sizes: Vec<usize>,
    i: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.i += 1;
        let size = self.sizes[self.i % self.sizes.len()];
        if size == 0 {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let n = size.min(out.len()).min(self.buf.len());
        out[..n].copy_from_slice(&self.buf[..n]);
        self.buf = &self.buf[n..];
        Ok(n)
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// Whole buffer, positioned reads of a known length, and a chunked stream of unknown or
    /// known length: the same entries, positions, errors and partial tails, for any read size;
    /// and the window within its documented bounds.
    #[test]
    fn every_input_gives_the_same_entries(
        entries in vec(entry(), 0..6),
        damage in damage(),
        read_size in prop_oneof![1usize..64, 64usize..4096, Just(1 << 20)],
        chunks in vec(0usize..700, 1..8),
        max in prop_oneof![Just(i32::MAX as usize), 14usize..2048, Just(1 << 20)],
    ) {
        let buf = input(&entries, &damage);
        let expected = whole(&buf, max);
        let unknown_bound = (2 * (max + 17) + read_size).min(2 * buf.len() + read_size);
        let chunks: Vec<usize> = if chunks.iter().all(|&c| c == 0) { vec![1] } else { chunks };

        let positioned = Streamer::new(&buf[..], 0, max).read_size(read_size);
        prop_assert_eq!(&streamed(positioned, buf.len()), &expected);

        let stream = Chunked { buf: &buf, sizes: chunks.clone(), i: 0 };
        let s = Streamer::new(ReadFill::new(stream), 0, max).read_size(read_size);
        prop_assert_eq!(&streamed(s, unknown_bound), &expected);

        let stream = Chunked { buf: &buf, sizes: chunks, i: 0 };
        let s = Streamer::new(ReadFill::with_len(stream, buf.len() as u64), 0, max)
            .read_size(read_size);
        prop_assert_eq!(&streamed(s, buf.len()), &expected);
    }

    /// `skip_entry_if` leaves out exactly the entries it is told to and puts the others back:
    /// the entries read are the whole buffer's minus the skipped ones, with the same end.
    #[test]
    fn skipping_entries_leaves_the_others_and_the_end(
        entries in vec(entry(), 0..6),
        damage in damage(),
        skip in vec(any::<bool>(), 8),
        chunks in vec(1usize..700, 1..8),
    ) {
        let buf = input(&entries, &damage);
        let expected = whole(&buf, i32::MAX as usize);
        let stream = Chunked { buf: &buf, sizes: chunks, i: 0 };
        let mut s = Streamer::new(ReadFill::new(stream), 0, i32::MAX as usize).read_size(16);
        let mut seen = 0usize;
        let mut out = Vec::new();
        let end = loop {
            while s
                .skip_entry_if(|_| {
                    let skip_it = skip[seen % skip.len()];
                    if skip_it {
                        seen += 1;
                    }
                    skip_it
                })
                .unwrap()
            {}
            match s.next_entry().unwrap() {
                Step::Entry(b) => {
                    seen += 1;
                    out.push((b.position(), b.as_bytes().to_vec()));
                }
                Step::Partial(p) => break format!("partial {p:?}"),
                Step::Error(e) => break format!("error {e}"),
                Step::End => break "end".to_string(),
            }
        };
        let kept: Vec<_> = expected
            .entries
            .iter()
            .enumerate()
            .filter(|(i, _)| !skip[i % skip.len()])
            .map(|(_, e)| e.clone())
            .collect();
        prop_assert_eq!(out, kept);
        prop_assert_eq!(end, expected.end);
    }

    /// Random bytes with a hostile size field up front, from a stream of unknown length: the
    /// window never grows past the maximum entry size's bound nor twice what arrived.
    #[test]
    fn hostile_sizes_do_not_allocate(
        size in prop_oneof![Just(i32::MAX), (1 << 16)..i32::MAX, 14..(1 << 16)],
        magic in 0u8..4,
        rest in vec(any::<u8>(), 5..3000),
        max in prop_oneof![Just(i32::MAX as usize), 14usize..4096],
        read_size in 1usize..2048,
    ) {
        let mut buf = vec![0u8; 8];
        buf.extend(size.to_be_bytes());
        buf.extend([0, 0, 0, 0, magic]);
        buf.extend(rest);
        let bound = (2 * (max + 17) + read_size).min(2 * buf.len() + read_size);
        let s = Streamer::new(ReadFill::new(&buf[..]), 0, max).read_size(read_size);
        let got = streamed(s, bound);
        prop_assert_eq!(got, whole(&buf, max));
    }
}

/// A size field of 2 GiB from stdin-like input is a partial tail once the input ends, read with
/// a window no larger than the bytes that came.
#[test]
fn a_huge_declared_size_is_a_partial_tail_without_the_allocation() {
    let mut b = V2Builder::new(0);
    b.append(&NewRecord::new(T0, None, Some(b"x"))).unwrap();
    let mut buf = b.finish().unwrap();
    buf[8..12].copy_from_slice(&i32::MAX.to_be_bytes());
    let mut s = Streamer::new(ReadFill::new(&buf[..]), 0, i32::MAX as usize).read_size(64);
    match s.next_entry().unwrap() {
        Step::Partial(p) => {
            assert_eq!((p.position, p.bytes), (0, buf.len()));
            assert_eq!(p.declared_size, Some(i32::MAX as usize + 12));
        }
        other => panic!("{other:?}"),
    }
    assert!(s.window_capacity() <= 2 * buf.len() + 64);
}

/// Positions start where the streamer starts; `buffered` and `position` say where an error
/// left the input.
#[test]
fn a_stream_started_mid_file_reports_absolute_positions() {
    let one = build(0, &(2, 0, vec![b"a".to_vec()]));
    let mut file = [one.clone(), one.clone(), one.clone()].concat();
    let bad = 2 * one.len() + 16;
    file[bad] = 7; // the third entry's magic
    let mut s = Streamer::new(&file[..], one.len() as u64, 1 << 20).read_size(8);
    match s.next_entry().unwrap() {
        Step::Entry(b) => assert_eq!(b.position(), one.len()),
        other => panic!("{other:?}"),
    }
    match s.next_entry().unwrap() {
        Step::Error(e) => assert_eq!(e.position(), Some(bad)),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.position(), 2 * one.len() as u64);
    assert_eq!(s.buffered(), one.len());
}
