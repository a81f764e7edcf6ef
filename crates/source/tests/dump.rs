//! `krecords_source::dump`: entries rendered as `krec dump` prints them, in text and JSON.

use krecords_codec::read::Entries;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::Header;
use krecords_source::dump::{DumpOptions, Dumper, Format};
use krecords_source::Sources;
use std::cell::RefCell;
use std::rc::Rc;

/// One v2 batch at offset 7: a record with a key, a value and a header, one without a key.
fn batch_bytes() -> Vec<u8> {
    let mut b = V2Builder::new(7);
    let headers = [Header {
        key: b"h",
        value: Some(b"x"),
    }];
    let r = NewRecord {
        headers: &headers,
        ..NewRecord::new(1_714_000_000_000, Some(b"k"), Some(b"v"))
    };
    b.append(&r).unwrap();
    b.append(&NewRecord::new(1_714_000_000_001, None, Some(b"w")))
        .unwrap();
    b.finish().unwrap()
}

fn render(options: DumpOptions, bytes: &[u8]) -> String {
    let batch = Entries::new(bytes).next().unwrap().unwrap();
    let mut out = Vec::new();
    assert!(Dumper::new(options)
        .entry("x.log", &batch, &mut out)
        .unwrap());
    String::from_utf8(out).unwrap()
}

#[test]
fn renders_an_entry_in_text_and_json() {
    let bytes = batch_bytes();
    let crc = Entries::new(&bytes).next().unwrap().unwrap().crc();
    let text = render(
        DumpOptions {
            print_data: true,
            ..DumpOptions::default()
        },
        &bytes,
    );
    assert_eq!(
        text,
        format!(
            "baseOffset: 7 lastOffset: 8 count: 2 baseSequence: -1 lastSequence: -1 \
             producerId: -1 producerEpoch: -1 partitionLeaderEpoch: -1 isTransactional: false \
             isControl: false deleteHorizonMs: OptionalLong.empty position: 0 \
             CreateTime: 1714000000001 size: {} magic: 2 compresscodec: none crc: {crc} \
             isvalid: true\n\
             | offset: 7 CreateTime: 1714000000000 keySize: 1 valueSize: 1 sequence: -1 \
             headerKeys: [h] key: k payload: v\n\
             | offset: 8 CreateTime: 1714000000001 keySize: -1 valueSize: 1 sequence: -1 \
             headerKeys: [] payload: w\n",
            bytes.len()
        )
    );

    // --timestamps human, entries only.
    let text = render(
        DumpOptions {
            iso: true,
            ..DumpOptions::default()
        },
        &bytes,
    );
    assert!(
        text.contains(" CreateTime: 1714000000001 (2024-04-24T23:06:40.001Z) size: "),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1);

    let json = render(
        DumpOptions {
            format: Format::Json,
            deep: true,
            bytes: krecords_codec::build::BytesEncoding::Hex,
            ..DumpOptions::default()
        },
        &bytes,
    );
    assert_eq!(
        json,
        format!(
            "{{\"file\":\"x.log\",\"position\":0,\"magic\":2,\"base_offset\":7,\
             \"last_offset\":8,\"count\":2,\"size_bytes\":{},\"crc\":{crc},\"crc_valid\":true,\
             \"compression\":\"none\",\"timestamp_type\":\"create_time\",\
             \"base_timestamp\":1714000000000,\"max_timestamp\":1714000000001,\
             \"partition_leader_epoch\":-1,\"producer_id\":-1,\"producer_epoch\":-1,\
             \"base_sequence\":-1,\"transactional\":false,\"control\":false,\
             \"delete_horizon_ms\":null,\"records\":[\
             {{\"offset\":7,\"timestamp\":1714000000000,\"key\":\"6b\",\"value\":\"76\",\
             \"headers\":[{{\"key\":\"h\",\"value\":\"78\"}}]}},\
             {{\"offset\":8,\"timestamp\":1714000000001,\"key\":null,\"value\":\"77\",\
             \"headers\":[]}}]}}\n",
            bytes.len()
        )
    );
}

#[test]
fn filters_records_and_entries() {
    let bytes = batch_bytes();
    let mut options = DumpOptions {
        format: Format::Json,
        deep: true,
        ..DumpOptions::default()
    };
    options.filter.offset_start = Some(8);
    let json = render(options, &bytes);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    // The entry's count stays its own; only offset 8 is shown.
    assert_eq!(v["count"], 2);
    assert_eq!(v["records"].as_array().unwrap().len(), 1);
    assert_eq!(v["records"][0]["offset"], 8);

    options.filter.producer_id = Some(5);
    assert_eq!(render(options, &bytes), "");
}

#[test]
fn dumps_a_segment_with_its_headers_and_a_truncated_tail() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("00000000000000000007.log");
    let bytes = batch_bytes();
    let mut data = bytes.clone();
    data.extend_from_slice(&bytes[..20]);
    std::fs::write(&file, &data).unwrap();
    let name = file.display().to_string();

    let sources = Sources::open_local(std::slice::from_ref(&file)).unwrap();
    let dump = |options: DumpOptions| {
        let mut reader = sources.read(0, &Default::default()).unwrap();
        let mut out = Vec::new();
        let problem = Dumper::new(options)
            .partition(&sources.partitions[0], &mut reader, &mut out)
            .unwrap();
        (problem, String::from_utf8(out).unwrap())
    };

    let (problem, text) = dump(DumpOptions::default());
    assert!(problem);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0], format!("Dumping {name}"));
    assert_eq!(lines[1], "Log starting offset: 7");
    assert!(lines[2].starts_with("baseOffset: 7 lastOffset: 8 count: 2 "));
    assert_eq!(
        lines[3],
        "Found 20 invalid bytes at the end of 00000000000000000007.log"
    );

    let (problem, json) = dump(DumpOptions {
        format: Format::Json,
        ..DumpOptions::default()
    });
    assert!(problem);
    let last = json.lines().last().unwrap();
    assert_eq!(
        last,
        format!(
            "{{\"file\":{},\"position\":{},\"partial\":true,\"bytes\":20}}",
            serde_json::Value::from(name.as_str()),
            bytes.len()
        )
    );

    // A byte budget's cut is not reported (kafka-dump-log's --max-bytes).
    let (problem, text) = dump(DumpOptions {
        partial_tails: false,
        ..DumpOptions::default()
    });
    assert!(!problem);
    assert_eq!(text.lines().count(), 3, "{text}");
}

#[test]
fn reports_a_corrupt_entry_through_the_callback() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("00000000000000000000.log");
    let mut data = batch_bytes();
    // The magic byte of the entry: an unknown format.
    data[16] = 9;
    std::fs::write(&file, &data).unwrap();
    let sources = Sources::open_local(std::slice::from_ref(&file)).unwrap();
    let mut reader = sources.read(0, &Default::default()).unwrap();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let sink = seen.clone();
    let mut dumper = Dumper::new(DumpOptions::default())
        .on_error(move |name, e| sink.borrow_mut().push(format!("{name}: {e}")));
    let mut out = Vec::new();
    assert!(dumper
        .partition(&sources.partitions[0], &mut reader, &mut out)
        .unwrap());
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.ends_with(&format!(
            "Found {} invalid bytes at the end of 00000000000000000000.log\n",
            data.len()
        )),
        "{text}"
    );
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].starts_with(&file.display().to_string()), "{seen:?}");
}

/// An entry whose records do not decode (its CRC bad too): in JSON the line keeps the entry's
/// header fields, `crc_valid` false, with `--deep` the records before the damage, then the
/// error (it printed only `file`, `position` and `error`), as the text keeps the batch line.
#[test]
fn a_damaged_entry_keeps_its_header_in_json() {
    let mut bytes = batch_bytes();
    // The first record's length (byte 61 of a v2 batch): -64.
    bytes[61] = 0x7f;
    let batch = Entries::new(&bytes).next().unwrap().unwrap();
    for deep in [true, false] {
        let mut out = Vec::new();
        let options = DumpOptions {
            format: Format::Json,
            deep,
            ..DumpOptions::default()
        };
        let ok = Dumper::new(options)
            .entry("x.log", &batch, &mut out)
            .unwrap();
        assert!(!ok);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            (&v["file"], &v["base_offset"], &v["count"], &v["crc_valid"]),
            (&"x.log".into(), &7.into(), &2.into(), &false.into()),
            "{v}"
        );
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        if deep {
            assert_eq!(v["records"], serde_json::json!([]), "{v}");
            let error = v["error"].as_str().unwrap();
            assert!(error.contains("invalid record length -64"), "{error}");
            assert_eq!(keys[keys.len() - 2..], ["records", "error"], "{v}");
        } else {
            // Without --deep a v2 entry's records are not read: its CRC says it is damaged.
            assert!(v.get("error").is_none(), "{v}");
            assert_eq!(keys.last().unwrap().as_str(), "delete_horizon_ms");
        }
    }
    let mut out = Vec::new();
    let options = DumpOptions {
        deep: true,
        ..DumpOptions::default()
    };
    assert!(!Dumper::new(options)
        .entry("x.log", &batch, &mut out)
        .unwrap());
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with(" isvalid: false\n"), "{text}");
}

/// A file of which a filter or a range shows nothing prints no `Dumping` lines (a `--count`
/// ending at a segment's end printed the next segment's); a whole read keeps them for every
/// file, an empty segment too, as kafka-dump-log prints it.
#[test]
fn a_file_with_nothing_shown_has_no_header_unless_every_file_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("00000000000000000007.log"), batch_bytes()).unwrap();
    std::fs::write(dir.path().join("00000000000000000009.log"), b"").unwrap();
    let sources = Sources::open_local(&[dir.path().to_path_buf()]).unwrap();
    let dump = |options: DumpOptions, read: &krecords_source::ReadOptions| {
        let mut reader = sources.read(0, read).unwrap();
        let mut out = Vec::new();
        Dumper::new(options)
            .partition(&sources.partitions[0], &mut reader, &mut out)
            .unwrap();
        String::from_utf8(out).unwrap()
    };
    let whole = dump(DumpOptions::default(), &Default::default());
    let heads: Vec<&str> = whole.lines().filter(|l| !l.starts_with("base")).collect();
    let names = |base: &str| {
        let file = dir.path().join(format!("{base:0>20}.log"));
        format!("Dumping {}", file.display())
    };
    assert_eq!(
        heads,
        [
            names("7").as_str(),
            "Log starting offset: 7",
            &names("9"),
            "Log starting offset: 9"
        ]
    );
    // A filter that keeps nothing: nothing at all.
    let mut none = DumpOptions::default();
    none.filter.producer_id = Some(5);
    assert_eq!(dump(none, &Default::default()), "");
    // A range: the empty segment after it is not shown.
    let read = krecords_source::ReadOptions {
        range: krecords_source::Range {
            count: Some(2),
            ..Default::default()
        },
        ..Default::default()
    };
    let bounded = DumpOptions {
        bounded: true,
        ..DumpOptions::default()
    };
    let text = dump(bounded, &read);
    assert!(!text.contains(&names("9")), "{text}");
    assert!(text.starts_with(&format!("{}\n", names("7"))), "{text}");
}
