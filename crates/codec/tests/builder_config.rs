//! Issue 19: every builder setter, before and after the first append. Before, the setting shows in
//! the batch read back, and the records read back exactly; after, the builder refuses (the setter
//! is named in [`Error::ConfigAfterAppend`]) on every later append and on finish.

use krecords_codec::read::{Batch, Entries};
use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, Error, TimestampType, DEFAULT_DECOMPRESS_LIMIT};

const T0: i64 = 1_714_000_000_000;
const COMMIT_KEY: [u8; 4] = [0, 0, 0, 1];
const MARKER: [u8; 6] = [0; 6];

/// A v2 setter: its name, how to apply it, and what a batch built with it must show.
struct Setter {
    name: &'static str,
    apply: fn(V2Builder) -> V2Builder,
    check: fn(&krecords_codec::read::V2Batch<'_>),
    /// Settings the batch also needs to finish (a transactional batch needs a producer).
    needs: fn(V2Builder) -> V2Builder,
    control: bool,
}

fn same(b: V2Builder) -> V2Builder {
    b
}

fn with_producer(b: V2Builder) -> V2Builder {
    b.producer(7, 1, 0)
}

fn setters() -> Vec<Setter> {
    let mut v: Vec<Setter> = vec![
        Setter {
            name: "timestamp_type",
            apply: |b| b.timestamp_type(TimestampType::LogAppendTime, T0 + 99),
            check: |v| {
                assert_eq!(v.timestamp_type(), TimestampType::LogAppendTime);
                assert_eq!(v.max_timestamp(), T0 + 99);
            },
            needs: same,
            control: false,
        },
        Setter {
            name: "producer",
            apply: |b| b.producer(7, 1, 5),
            check: |v| {
                assert_eq!(v.producer_id(), Some(7));
                assert_eq!(v.producer_epoch(), Some(1));
                assert_eq!(v.base_sequence(), Some(5));
            },
            needs: same,
            control: false,
        },
        Setter {
            name: "transactional",
            apply: |b| b.transactional(true),
            check: |v| assert!(v.is_transactional()),
            needs: with_producer,
            control: false,
        },
        Setter {
            name: "control",
            apply: |b| b.control(true),
            check: |v| assert!(v.is_control()),
            needs: same,
            control: true,
        },
        Setter {
            name: "partition_leader_epoch",
            apply: |b| b.partition_leader_epoch(9),
            check: |v| assert_eq!(v.partition_leader_epoch(), Some(9)),
            needs: same,
            control: false,
        },
        Setter {
            name: "delete_horizon_ms",
            apply: |b| b.delete_horizon_ms(Some(T0 - 1_000)),
            check: |v| {
                assert_eq!(v.delete_horizon_ms(), Some(T0 - 1_000));
                assert_eq!(v.base_timestamp(), T0 - 1_000);
            },
            needs: same,
            control: false,
        },
    ];
    // One compression setter per codec (fn pointers cannot capture the codec).
    v.push(Setter {
        name: "compression",
        apply: |b| b.compression(Compression::None, None),
        check: |v| assert_eq!(v.compression().unwrap(), Compression::None),
        needs: same,
        control: false,
    });
    v.push(Setter {
        name: "compression",
        apply: |b| b.compression(Compression::Gzip, Some(1)),
        check: |v| assert_eq!(v.compression().unwrap(), Compression::Gzip),
        needs: same,
        control: false,
    });
    v.push(Setter {
        name: "compression",
        apply: |b| b.compression(Compression::Snappy, None),
        check: |v| assert_eq!(v.compression().unwrap(), Compression::Snappy),
        needs: same,
        control: false,
    });
    v.push(Setter {
        name: "compression",
        apply: |b| b.compression(Compression::Lz4, None),
        check: |v| assert_eq!(v.compression().unwrap(), Compression::Lz4),
        needs: same,
        control: false,
    });
    v.push(Setter {
        name: "compression",
        apply: |b| b.compression(Compression::Zstd, None),
        check: |v| assert_eq!(v.compression().unwrap(), Compression::Zstd),
        needs: same,
        control: false,
    });
    v
}

/// Appends two records (data or control) and returns their offsets.
fn append_two(b: &mut V2Builder, control: bool) -> Result<(), Error> {
    for i in 0..2 {
        if control {
            b.append_control(T0 + i, &COMMIT_KEY, &MARKER)?;
        } else {
            b.append(&NewRecord::new(T0 + i, Some(b"k"), Some(b"value")))?;
        }
    }
    Ok(())
}

#[test]
fn every_v2_setter_before_the_first_append_is_applied() {
    for s in setters() {
        for pre_append_failure in [false, true] {
            let mut b = (s.needs)(V2Builder::new(100));
            if pre_append_failure {
                // A refused append leaves the builder empty: configuring it is still fine.
                assert!(b.append(&NewRecord::new(-5, None, None)).is_err());
            }
            let mut b = (s.apply)(b);
            append_two(&mut b, s.control).unwrap();
            let bytes = b.finish().unwrap();
            let batch = Entries::new(&bytes).next().unwrap().unwrap();
            let Batch::V2(v) = batch else { panic!("v2") };
            (s.check)(&v);
            batch.validate().unwrap();
            let mut scratch = Vec::new();
            let records = crate::all_records(&batch, &mut scratch);
            assert_eq!(records.len(), 2, "{}", s.name);
            for (i, r) in records.iter().enumerate() {
                assert_eq!(r.offset(), 100 + i as i64);
                let expected_ts = if v.timestamp_type() == TimestampType::LogAppendTime {
                    v.max_timestamp()
                } else {
                    T0 + i as i64
                };
                assert_eq!(r.timestamp(), Some(expected_ts), "{}", s.name);
                if !s.control {
                    assert_eq!(r.value(), Some(&b"value"[..]));
                }
            }
        }
    }
}

#[test]
fn every_v2_setter_after_an_append_is_refused_by_append_and_finish() {
    let late = |setter| Error::ConfigAfterAppend { setter };
    for s in setters() {
        for codec in [Compression::None, Compression::Lz4] {
            for control in [false, true] {
                let base = if control {
                    V2Builder::new(100).producer(7, 1, -1).control(true)
                } else {
                    (s.needs)(V2Builder::new(100))
                };
                let mut b = base.compression(codec, None);
                append_two(&mut b, control).unwrap();
                let mut b = (s.apply)(b);
                assert_eq!(b.count(), 2, "the records are kept, not rewritten");
                let rec = NewRecord::new(T0, None, Some(b"v"));
                assert_eq!(b.append(&rec), Err(late(s.name)), "{}", s.name);
                assert_eq!(
                    b.append_with_offset(500, &rec),
                    Err(late(s.name)),
                    "{}",
                    s.name
                );
                assert_eq!(
                    b.append_control(T0, &COMMIT_KEY, &MARKER),
                    Err(late(s.name)),
                    "{}",
                    s.name
                );
                // A second late setter does not hide the first.
                let b = b.partition_leader_epoch(3);
                let mut out = b"prefix".to_vec();
                assert_eq!(
                    b.clone().finish_into(&mut out),
                    Err(late(s.name)),
                    "{}",
                    s.name
                );
                assert_eq!(out, b"prefix", "nothing written on refusal");
                assert_eq!(b.finish(), Err(late(s.name)), "{} {codec}", s.name);
            }
        }
    }
}

#[test]
fn legacy_setters_before_the_first_append_are_applied() {
    for magic in [0u8, 1] {
        for codec in [Compression::None, Compression::Gzip, Compression::Lz4] {
            let b = LegacyBuilder::new(magic, 100)
                .unwrap()
                .compression(codec, None)
                .unwrap();
            let mut b = b.timestamp_type(TimestampType::LogAppendTime, T0 + 99);
            for i in 0..2 {
                b.append(&NewRecord::new(T0 + i, Some(b"k"), Some(b"value")))
                    .unwrap();
            }
            let bytes = b.finish().unwrap();
            let batches: Vec<Batch<'_>> = Entries::new(&bytes).map(Result::unwrap).collect();
            let expected_entries = if codec == Compression::None { 2 } else { 1 };
            assert_eq!(batches.len(), expected_entries);
            let mut offsets = Vec::new();
            for batch in &batches {
                batch.validate().unwrap();
                assert_eq!(batch.compression().unwrap(), codec);
                let expected_tt = if magic == 0 {
                    TimestampType::NoTimestamp
                } else {
                    TimestampType::LogAppendTime
                };
                assert_eq!(batch.timestamp_type(), expected_tt);
                let mut scratch = Vec::new();
                for r in batch
                    .records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
                    .unwrap()
                {
                    let r = r.unwrap();
                    offsets.push(r.offset());
                    let ts = (magic == 1).then_some(T0 + 99);
                    assert_eq!(r.timestamp(), ts);
                    assert_eq!(r.value(), Some(&b"value"[..]));
                }
            }
            assert_eq!(offsets, [100, 101], "v{magic} {codec}");
        }
    }
}

#[test]
fn legacy_setters_after_an_append_are_refused() {
    let late = |setter| Err(Error::ConfigAfterAppend { setter });
    for magic in [0u8, 1] {
        for codec in [Compression::None, Compression::Gzip] {
            let new = || {
                let mut b = LegacyBuilder::new(magic, 100)
                    .unwrap()
                    .compression(codec, None)
                    .unwrap();
                b.append(&NewRecord::new(T0, None, Some(b"v"))).unwrap();
                b
            };
            for to in [Compression::None, Compression::Gzip, Compression::Zstd] {
                assert_eq!(
                    new().compression(to, None).map(|_| ()),
                    late("compression"),
                    "v{magic} {codec} -> {to}"
                );
            }
            let mut b = new().timestamp_type(TimestampType::LogAppendTime, T0 + 99);
            let rec = NewRecord::new(T0, None, Some(b"v"));
            assert_eq!(b.append(&rec), late("timestamp_type").map(|()| 0));
            assert_eq!(b.append_with_offset(500, &rec), late("timestamp_type"));
            // The first late setter is the one reported.
            assert_eq!(
                b.clone().compression(codec, None).map(|_| ()),
                late("timestamp_type")
            );
            let mut out = Vec::new();
            assert_eq!(b.clone().finish_into(&mut out), late("timestamp_type"));
            assert!(out.is_empty());
            assert_eq!(b.finish(), late("timestamp_type").map(|()| Vec::new()));
        }
    }
}
