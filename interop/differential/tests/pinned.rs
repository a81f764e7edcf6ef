//! One test per documented difference from Kafka's reader (`compare::PINNED`): what krecords
//! does, on a minimal input, and that the difference's predicate recognises Kafka's answer.

use krecords_codec::crc::crc32c;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::Compression;
use krecords_differential::compare::{classify, pinned, Class, PINNED};
use krecords_differential::ours;
use serde_json::json;

fn batch(codec: Compression) -> Vec<u8> {
    let mut b = V2Builder::new(0).compression(codec, None);
    b.append(&NewRecord::new(
        1_714_000_000_000,
        None,
        Some(&[7u8; 200][..]),
    ))
    .unwrap();
    b.finish().unwrap()
}

fn fix_crc(bytes: &mut [u8]) {
    let crc = crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
}

#[test]
fn every_pinned_difference_has_a_reason() {
    for (name, why) in PINNED {
        assert!(!name.is_empty() && why.len() > 40, "{name}");
    }
}

/// Kafka: `size + LOG_OVERHEAD` overflows int and `ByteBuffer.limit` throws. krecords: the
/// entry claims more bytes than there are, a partial tail, dropped as a consumer drops one.
#[test]
fn kafka_int_overflow_on_size() {
    let mut bytes = batch(Compression::None);
    bytes.extend_from_slice(&[
        0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 2,
    ]);
    let v = ours::verdict(&bytes);
    assert_eq!(v["accept"], true);
    assert_eq!(v["batches"].as_array().unwrap().len(), 1);
    let kafka = json!({"accept": false, "error": "IllegalArgumentException",
                       "message": "newLimit < 0: (-2147483637 < 0)"});
    let (class, _) = classify(&v, &kafka);
    assert_eq!(class, Class::OursOnly);
    assert_eq!(
        pinned(&bytes, class, &v, &kafka),
        Some("kafka-int-overflow-on-size")
    );
}

/// A literal, then a match with offset 0: refused here.
#[test]
#[allow(clippy::little_endian_bytes)] // LZ4 frame fields are little-endian
fn lz4_match_offset_0() {
    let mut bytes = batch(Compression::Lz4);
    // The frame (after the 61-byte header): magic 4, FLG, BD, HC = 7 bytes, then a block size.
    let block = 61 + 7;
    let size = u32::from_le_bytes(bytes[block..block + 4].try_into().unwrap());
    assert_eq!(size & 0x8000_0000, 0, "the test needs a compressed block");
    // Token: 1 literal, match length 4 + 0; the literal; offset 0; then the end-of-block
    // sequence the format wants: 5 literals.
    let body = [0x10u8, 0xaa, 0x00, 0x00, 0x50, 1, 2, 3, 4, 5];
    let mut new = bytes[..block].to_vec();
    new.extend_from_slice(&(body.len() as u32).to_le_bytes());
    new.extend_from_slice(&body);
    new.extend_from_slice(&[0, 0, 0, 0]); // end mark
    let length = (new.len() - 12) as i32;
    new[8..12].copy_from_slice(&length.to_be_bytes());
    bytes = new;
    fix_crc(&mut bytes);
    let v = ours::verdict(&bytes);
    assert_eq!(v["accept"], false);
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("0 is not a valid match offset"),
        "{v}"
    );
    let kafka = json!({"accept": true, "batches": [], "records": []});
    let (class, _) = classify(&v, &kafka);
    assert_eq!(
        pinned(&bytes, class, &v, &kafka),
        Some("lz4-match-offset-0")
    );
}

/// A zstd frame whose last bytes are gone: refused here (Kafka's stream reader may stop before
/// noticing).
#[test]
fn zstd_frame_cut_short() {
    let full = batch(Compression::Zstd);
    let mut bytes = full[..full.len() - 2].to_vec();
    let length = (bytes.len() - 12) as i32;
    bytes[8..12].copy_from_slice(&length.to_be_bytes());
    fix_crc(&mut bytes);
    let v = ours::verdict(&bytes);
    assert_eq!(v["accept"], false, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("zstd frame is cut short"),
        "{v}"
    );
    let kafka = json!({"accept": true, "batches": [], "records": []});
    let (class, _) = classify(&v, &kafka);
    assert_eq!(
        pinned(&bytes, class, &v, &kafka),
        Some("zstd-frame-cut-short")
    );
}

#[path = "replay.rs"]
#[allow(dead_code)]
mod replay;

/// Each documented produce difference is exercised by a saved input whose Kafka verdict was
/// recorded by `krec-diff --mode produce --save-kinds` (no Java needed here).
fn produce_pin_is_seen(name: &str) {
    let seen = replay::replay("cases-produce")
        .into_iter()
        .filter(|(_, r)| matches!(r, Ok(Some(p)) if *p == name))
        .count();
    assert!(
        seen > 0,
        "no saved produce case shows the pinned difference {name}"
    );
}

#[test]
fn produce_kafka_internal_exception() {
    produce_pin_is_seen("kafka-internal-exception");
}

#[test]
fn produce_framing_checks_first() {
    produce_pin_is_seen("framing-checks-first");
}

#[test]
fn produce_stream_order() {
    produce_pin_is_seen("stream-order");
}

#[test]
fn every_produce_pin_has_a_reason() {
    use krecords_differential::compare::PINNED_PRODUCE;
    for (name, why) in PINNED_PRODUCE {
        assert!(!name.is_empty() && why.len() > 40, "{name}");
    }
}

#[test]
fn produce_kafka_skips_record_bodies() {
    produce_pin_is_seen("kafka-skips-record-bodies");
}

#[test]
fn produce_kafka_frames_all_inner_messages_first() {
    produce_pin_is_seen("kafka-frames-all-inner-messages-first");
}
