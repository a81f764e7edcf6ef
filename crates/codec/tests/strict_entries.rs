//! `Entries::max_entry_size` and `Entries::strict`: a corrupt size field in the middle of a file
//! is an error, where the default (for fetch responses) reads it as a partial tail.

use krecords_codec::read::Entries;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::{Compression, Error};

const T0: i64 = 1_714_000_000_000;

/// Three batches of different sizes, concatenated, and where each starts.
fn file() -> (Vec<u8>, Vec<usize>) {
    let mut out = Vec::new();
    let mut starts = Vec::new();
    for (i, codec) in [Compression::None, Compression::Lz4, Compression::Zstd]
        .into_iter()
        .enumerate()
    {
        let mut b = V2Builder::new(10 * i as i64).compression(codec, None);
        for j in 0..=i {
            b.append(&NewRecord::new(T0, None, Some(format!("v{j}").as_bytes())))
                .unwrap();
        }
        starts.push(out.len());
        out.extend(b.finish().unwrap());
    }
    (out, starts)
}

fn set_size(buf: &mut [u8], at: usize, size: i32) {
    buf[at + 8..at + 12].copy_from_slice(&size.to_be_bytes());
}

fn positions(entries: Entries<'_>) -> (Vec<usize>, Option<Error>) {
    let mut ok = Vec::new();
    for e in entries {
        match e {
            Ok(b) => ok.push(b.position()),
            Err(e) => return (ok, Some(e)),
        }
    }
    (ok, None)
}

#[test]
fn a_corrupt_size_in_the_middle_is_a_silent_partial_tail_by_default() {
    let (mut buf, starts) = file();
    set_size(&mut buf, starts[1], 50_000_000);
    let mut entries = Entries::new(&buf);
    let (ok, err) = positions(entries.clone());
    assert_eq!((ok, err), (vec![starts[0]], None));
    while entries.next().is_some() {}
    let p = entries.partial().unwrap();
    assert_eq!(p.position, starts[1]);
    assert_eq!(p.declared_size, Some(50_000_012));
}

#[test]
fn max_entry_size_makes_it_an_error_after_the_entries_before_it() {
    let (mut buf, starts) = file();
    set_size(&mut buf, starts[1], 50_000_000);
    for strict in [false, true] {
        let mut entries = Entries::new(&buf).max_entry_size(1 << 20);
        if strict {
            entries = entries.strict();
        }
        let (ok, err) = positions(entries);
        assert_eq!(ok, vec![starts[0]]);
        match err {
            Some(Error::InvalidLength {
                at, what, found, ..
            }) => {
                assert_eq!((at, what, found), (starts[1] + 8, "entry size", 50_000_000));
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn max_entry_size_is_inclusive_and_does_not_touch_valid_files() {
    let (buf, starts) = file();
    let sizes: Vec<usize> = starts
        .iter()
        .zip(starts.iter().skip(1).chain([&buf.len()]))
        .map(|(a, b)| b - a - 12)
        .collect();
    let largest = *sizes.iter().max().unwrap();
    let (ok, err) = positions(Entries::new(&buf).max_entry_size(largest));
    assert_eq!((ok, err.is_none()), (starts.clone(), true));
    let (ok, err) = positions(Entries::new(&buf).max_entry_size(largest - 1));
    let refused = sizes.iter().position(|&s| s == largest).unwrap();
    assert_eq!(ok, starts[..refused].to_vec());
    assert!(matches!(err, Some(Error::InvalidLength { .. })), "{err:?}");
}

#[test]
fn a_cut_tail_within_the_bound_stays_a_partial_tail() {
    let (buf, starts) = file();
    let cut = &buf[..buf.len() - 3];
    let mut entries = Entries::new(cut).max_entry_size(1 << 20);
    let (ok, err) = positions(entries.clone());
    assert_eq!((ok, err.is_none()), (starts[..2].to_vec(), true));
    while entries.next().is_some() {}
    assert_eq!(entries.partial().unwrap().position, starts[2]);
}

#[test]
fn strict_refuses_every_cut_that_is_not_at_an_entry_boundary() {
    let (buf, starts) = file();
    for n in 0..=buf.len() {
        let cut = &buf[..n];
        let complete: Vec<usize> = starts
            .iter()
            .zip(starts.iter().skip(1).chain([&buf.len()]))
            .filter(|(_, &end)| end <= n)
            .map(|(&s, _)| s)
            .collect();
        let boundary = n == buf.len() || starts.contains(&n);
        let mut lax = Entries::new(cut);
        let (ok, err) = positions(lax.clone());
        assert_eq!((ok, err.is_none()), (complete.clone(), true), "cut {n}");
        while lax.next().is_some() {}
        assert_eq!(lax.partial().is_some(), !boundary, "cut {n}");

        let mut strict = Entries::new(cut).strict();
        let (ok, err) = positions(strict.clone());
        assert_eq!(ok, complete, "cut {n}");
        match err {
            None => assert!(boundary, "cut {n}"),
            Some(Error::Truncated { at, available, .. }) => {
                assert!(!boundary, "cut {n}");
                let tail = complete.len();
                assert_eq!((at, available), (starts[tail], n - starts[tail]), "cut {n}");
            }
            Some(e) => panic!("cut {n}: {e}"),
        }
        while strict.next().is_some() {}
        assert!(strict.partial().is_none());
    }
}
