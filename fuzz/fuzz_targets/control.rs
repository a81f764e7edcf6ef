//! Control records: `ControlRecordKey::parse` and `EndTxnMarker::parse` on arbitrary bytes
//! accept exactly what Kafka's `ControlRecordType.parse` / `EndTransactionMarker.deserialize`
//! accept (at least 4 / 6 bytes, version >= 0, extra bytes of newer versions ignored) and
//! parse(to_bytes(x)) == x; and a control batch built from the same fields with `V2Builder`
//! reads back as the same key and marker.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use krecords_codec::control::{ControlRecordKey, ControlRecordType, EndTxnMarker};
use krecords_codec::read::{Batch, Entries};
use krecords_codec::write::V2Builder;
use krecords_codec::Error;
use libfuzzer_sys::fuzz_target;

fn be16(b: &[u8]) -> i16 {
    i16::from_be_bytes([b[0], b[1]])
}

fuzz_target!(|data: &[u8]| {
    // Arbitrary bytes as a key.
    match ControlRecordKey::parse(Some(data), 17) {
        Ok(k) => {
            assert!(data.len() >= 4 && be16(data) >= 0);
            assert_eq!(k.version, be16(data));
            assert_eq!(k.kind.id(), be16(&data[2..]));
            assert_eq!(k.to_bytes(), data[..4]);
            assert_eq!(ControlRecordKey::parse(Some(&k.to_bytes()), 0), Ok(k));
        }
        Err(e) => {
            assert!(data.len() < 4 || be16(data) < 0, "{e}");
            assert!(matches!(e, Error::InvalidRecord { at: 17, .. }), "{e:?}");
        }
    }
    // Arbitrary bytes as an end transaction marker.
    match EndTxnMarker::parse(Some(data), 23) {
        Ok(m) => {
            assert!(data.len() >= 6 && be16(data) >= 0);
            assert_eq!(m.version, be16(data));
            assert_eq!(
                m.coordinator_epoch,
                i32::from_be_bytes(data[2..6].try_into().unwrap())
            );
            assert_eq!(m.to_bytes(), data[..6]);
            assert_eq!(EndTxnMarker::parse(Some(&m.to_bytes()), 0), Ok(m));
        }
        Err(e) => {
            assert!(data.len() < 6 || be16(data) < 0, "{e}");
            assert!(matches!(e, Error::InvalidRecord { at: 23, .. }), "{e:?}");
        }
    }
    assert!(ControlRecordKey::parse(None, 0).is_err());
    assert!(EndTxnMarker::parse(None, 0).is_err());

    // Structured: types round trip by id and by name; a control batch reads back.
    let mut u = Unstructured::new(data);
    let Ok(id) = i16::arbitrary(&mut u) else {
        return;
    };
    let kind = ControlRecordType::from_id(id);
    assert_eq!(kind.id(), id);
    if !matches!(kind, ControlRecordType::Unknown(_)) {
        assert_eq!(ControlRecordType::from_name(kind.name()), Some(kind));
        assert_eq!(ControlRecordType::from_name(kind.kafka_name()), Some(kind));
    } else {
        assert!(!(0..=6).contains(&id));
    }
    let (Ok(version), Ok(epoch), Ok(producer_id), Ok(producer_epoch), Ok(base), Ok(ts)) = (
        u16::arbitrary(&mut u),
        i32::arbitrary(&mut u),
        u32::arbitrary(&mut u),
        u16::arbitrary(&mut u),
        u32::arbitrary(&mut u),
        u32::arbitrary(&mut u),
    ) else {
        return;
    };
    let key = ControlRecordKey {
        version: (version >> 1) as i16,
        kind,
    };
    let marker = EndTxnMarker {
        version: (version >> 1) as i16,
        coordinator_epoch: epoch,
    };
    let producer_epoch = (producer_epoch >> 1) as i16;
    let timestamp = 1_714_000_000_000 + i64::from(ts);
    let mut b = V2Builder::new(i64::from(base))
        .control(true)
        .transactional(true)
        .producer(i64::from(producer_id), producer_epoch, -1);
    assert!(b
        .append(&krecords_codec::write::NewRecord::new(
            timestamp, None, None
        ))
        .is_err());
    b.append_control(timestamp, &key.to_bytes(), &marker.to_bytes())
        .expect("append_control");
    let bytes = b.finish().expect("finish a control batch");
    let batch = Entries::new(&bytes)
        .next()
        .expect("one entry")
        .expect("parses");
    batch.validate().expect("validate");
    let Batch::V2(v) = batch else {
        panic!("magic {}", batch.magic())
    };
    assert!(v.is_control() && v.is_transactional());
    assert_eq!(v.producer_id(), Some(i64::from(producer_id)));
    assert_eq!(v.raw_producer_epoch(), producer_epoch);
    let mut scratch = Vec::new();
    let records: Vec<_> = batch
        .records(&mut scratch, 1 << 20)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].offset(), i64::from(base));
    assert_eq!(ControlRecordKey::parse(records[0].key(), 0), Ok(key));
    assert_eq!(EndTxnMarker::parse(records[0].value(), 0), Ok(marker));
});
