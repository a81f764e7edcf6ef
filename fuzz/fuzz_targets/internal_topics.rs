//! `krecords_topics::parse` on arbitrary key and value bytes, with every decoder
//! (`__consumer_offsets`, `__transaction_state`, `__cluster_metadata`, `__share_group_state`,
//! `__remote_log_metadata`): a result, never a panic, and no allocation beyond the input's size
//! times a small factor (libFuzzer's -malloc_limit_mb); both renderings work, the text one is
//! kafka-dump-log's shape and the JSON fields make a valid object; a coordinator key that decodes
//! names the record type its first two bytes hold; a `__remote_log_metadata` value the typed
//! decoder reads is one the text decoder shows, and its re-encoding decodes to the same record.
//!
//! Input: byte 0 says whether there is a key (bit 0) and a value (bit 1); bytes 1-2 (big-endian)
//! how many of the rest are the key; the value is what follows.
#![no_main]

use krecords_topics::remote_log_metadata::{decode, encode};
use krecords_topics::{parse, Kind, Part};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&[flags, k0, k1], rest)) = data.split_first_chunk::<3>() else {
        return;
    };
    let split = usize::from(u16::from_be_bytes([k0, k1])).min(rest.len());
    let (key, value) = rest.split_at(split);
    let key = (flags & 1 != 0).then_some(key);
    let value = (flags & 2 != 0).then_some(value);
    if let Some(Ok(record)) = value.map(decode) {
        let p = parse(Kind::RemoteLogMetadata, None, value, 42);
        assert!(matches!(p.payload, Some(Part::Text(..))));
        assert_eq!(decode(&encode(&record)), Ok(record));
    }
    for kind in Kind::ALL {
        let p = parse(kind, key, value, 42);
        let mut text = Vec::new();
        p.write_text(&mut text);
        let text = String::from_utf8(text).expect("text is UTF-8");
        assert!(text.is_empty() || text.starts_with(" key: ") || text.starts_with(" payload: "));
        let mut json = b"{\"offset\":42".to_vec();
        p.write_json_fields(&mut json);
        json.push(b'}');
        let v: serde_json::Value = serde_json::from_slice(&json).expect("JSON fields");
        assert!(v.is_object());
        match kind {
            Kind::Metadata | Kind::RemoteLogMetadata => assert!(p.key.is_none()),
            _ => {
                if let Some(Part::Json(k)) = &p.key {
                    let t = key.and_then(|k| k.first_chunk::<2>()).map(|b| i16::from_be_bytes(*b));
                    let want = t.map(|t| t.to_string());
                    assert_eq!(k.get("type").and_then(|t| t.as_str()), want.as_deref());
                }
            }
        }
    }
});
