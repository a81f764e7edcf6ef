//! The JSON Lines of `krec dump`, written straight into a byte buffer.
//!
//! Byte for byte what serializing [`crate::entry_json::EntryJson`] with serde_json prints (same
//! field order, same string escapes, same number forms), without building a `serde_json::Value`
//! or a `String` per field: the hot path of `krec dump --deep --format json`.

use crate::bytes_fmt::BytesFormat;
use crate::entry_json::{self, ControlJson, EntryJson};
use crate::time_fmt::write_iso;
use base64::Engine;
use krecords_codec::read::Record;

/// Appends an integer.
#[inline]
pub fn int(out: &mut Vec<u8>, v: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Appends `true` or `false`.
#[inline]
fn boolean(out: &mut Vec<u8>, v: bool) {
    out.extend_from_slice(if v { b"true" } else { b"false" });
}

/// serde_json's escape for each byte: 0 none, `u` for `\u00XX`, else the letter after `\`.
const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// Whether any of the 8 bytes of `w` needs an escape: below 0x20, `"` or `\\` (exact, as in
/// "Bit Twiddling Hacks": `haszero` and `hasless`).
#[inline]
fn word_needs_escape(w: u64) -> bool {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES * 0x80;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    w.wrapping_sub(ONES * 0x20) & !w & HIGH != 0
        || has_zero(w ^ (ONES * u64::from(b'"')))
        || has_zero(w ^ (ONES * u64::from(b'\\')))
}

/// Appends `s` as a JSON string, quotes included, escaped exactly as serde_json escapes.
pub fn string(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        // Skip 8 plain bytes at a time (the common case: printable text).
        if let Some(chunk) = b.get(i..i + 8) {
            let w = u64::from_be_bytes(chunk.try_into().unwrap_or([0; 8]));
            if !word_needs_escape(w) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(b.len());
        while i < end {
            let c = b[i];
            // `ESCAPE` has 256 entries: any u8 indexes it.
            let e = ESCAPE[c as usize];
            if e != 0 {
                out.extend_from_slice(&b[start..i]);
                if e == b'u' {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.extend_from_slice(&[
                        b'\\',
                        b'u',
                        b'0',
                        b'0',
                        HEX[usize::from(c >> 4)],
                        HEX[usize::from(c & 0xf)],
                    ]);
                } else {
                    out.extend_from_slice(&[b'\\', e]);
                }
                start = i + 1;
            }
            i += 1;
        }
    }
    out.extend_from_slice(&b[start..]);
    out.push(b'"');
}

/// Appends bytes as a JSON string of their UTF-8 text, invalid sequences replaced as
/// `String::from_utf8_lossy` does.
fn utf8(out: &mut Vec<u8>, b: &[u8]) {
    match std::str::from_utf8(b) {
        Ok(s) => string(out, s),
        Err(_) => string(out, &String::from_utf8_lossy(b)),
    }
}

/// Appends bytes rendered per `--bytes` as a JSON string, or `null`.
pub fn bytes(out: &mut Vec<u8>, b: Option<&[u8]>, format: BytesFormat) {
    let Some(b) = b else {
        out.extend_from_slice(b"null");
        return;
    };
    match format {
        BytesFormat::Utf8 => utf8(out, b),
        BytesFormat::Hex => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.reserve(b.len() * 2 + 2);
            out.push(b'"');
            for &c in b {
                out.extend_from_slice(&[HEX[usize::from(c >> 4)], HEX[usize::from(c & 0xf)]]);
            }
            out.push(b'"');
        }
        BytesFormat::Base64 => {
            let engine = &base64::engine::general_purpose::STANDARD;
            let at = out.len();
            out.push(b'"');
            out.resize(at + 1 + b.len().div_ceil(3) * 4, 0);
            let n = engine
                .encode_slice(b, &mut out[at + 1..])
                .unwrap_or_default();
            out.truncate(at + 1 + n);
            out.push(b'"');
        }
    }
}

/// Appends `"name":value` for an optional timestamp, and with `iso` `,"name_iso":"..."`
/// (null when there is no timestamp or it is Kafka's -1, "no timestamp").
fn timestamp(out: &mut Vec<u8>, name: &str, ts: Option<i64>, iso: bool) {
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
    match ts {
        Some(t) => int(out, t),
        None => out.extend_from_slice(b"null"),
    }
    if iso {
        out.extend_from_slice(b",\"");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"_iso\":");
        match ts.filter(|&t| t != -1) {
            Some(t) => {
                out.push(b'"');
                write_iso(out, t);
                out.push(b'"');
            }
            None => out.extend_from_slice(b"null"),
        }
    }
}

/// Appends an entry object up to (not including) its `records` and closing brace.
pub fn entry_fields(out: &mut Vec<u8>, e: &EntryJson<'_>, iso: bool, partition: Option<i32>) {
    out.extend_from_slice(b"{\"file\":");
    string(out, e.file);
    if let Some(p) = partition {
        out.extend_from_slice(b",\"partition\":");
        int(out, p);
    }
    out.extend_from_slice(b",\"position\":");
    int(out, e.position);
    out.extend_from_slice(b",\"magic\":");
    int(out, e.magic);
    out.extend_from_slice(b",\"base_offset\":");
    int(out, e.base_offset);
    out.extend_from_slice(b",\"last_offset\":");
    int(out, e.last_offset);
    out.extend_from_slice(b",\"count\":");
    int(out, e.count);
    out.extend_from_slice(b",\"size_bytes\":");
    int(out, e.size_bytes);
    out.extend_from_slice(b",\"crc\":");
    int(out, e.crc);
    out.extend_from_slice(b",\"crc_valid\":");
    boolean(out, e.crc_valid);
    out.extend_from_slice(b",\"compression\":");
    string(out, &e.compression);
    out.extend_from_slice(b",\"timestamp_type\":");
    string(out, e.timestamp_type);
    out.push(b',');
    timestamp(out, "base_timestamp", e.base_timestamp, iso);
    out.push(b',');
    timestamp(out, "max_timestamp", e.max_timestamp, iso);
    out.extend_from_slice(b",\"partition_leader_epoch\":");
    int(out, e.partition_leader_epoch);
    out.extend_from_slice(b",\"producer_id\":");
    int(out, e.producer_id);
    out.extend_from_slice(b",\"producer_epoch\":");
    int(out, e.producer_epoch);
    out.extend_from_slice(b",\"base_sequence\":");
    int(out, e.base_sequence);
    out.extend_from_slice(b",\"transactional\":");
    boolean(out, e.transactional);
    out.extend_from_slice(b",\"control\":");
    boolean(out, e.control);
    out.extend_from_slice(b",\"delete_horizon_ms\":");
    match e.delete_horizon_ms {
        Some(d) => int(out, d),
        None => out.extend_from_slice(b"null"),
    }
}

fn control(out: &mut Vec<u8>, c: &ControlJson) {
    out.extend_from_slice(b",\"control\":{\"type\":");
    string(out, c.kind);
    out.extend_from_slice(b",\"version\":");
    int(out, c.version);
    if let Some(epoch) = c.coordinator_epoch {
        out.extend_from_slice(b",\"coordinator_epoch\":");
        int(out, epoch);
    }
    out.push(b'}');
}

/// Appends one record object; `control` is whether it belongs to a control batch.
pub fn record(
    out: &mut Vec<u8>,
    r: &Record<'_>,
    control_batch: bool,
    format: BytesFormat,
    iso: bool,
    decoder: Option<krecords_topics::Kind>,
) {
    out.extend_from_slice(b"{\"offset\":");
    int(out, r.offset());
    out.push(b',');
    timestamp(out, "timestamp", r.timestamp(), iso);
    out.extend_from_slice(b",\"key\":");
    bytes(out, r.key(), format);
    out.extend_from_slice(b",\"value\":");
    bytes(out, r.value(), format);
    out.extend_from_slice(b",\"headers\":[");
    for (i, h) in r.headers().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"key\":");
        utf8(out, h.key);
        out.extend_from_slice(b",\"value\":");
        bytes(out, h.value, format);
        out.push(b'}');
    }
    out.push(b']');
    if control_batch {
        control(out, &entry_json::control(r));
    } else if let Some(kind) = decoder {
        // The internal topic's key and value decoded, as kafka-dump-log's decoder shows them
        // (absent: Kafka prints nothing there; null: a tombstone).
        krecords_topics::parse(kind, r.key(), r.value(), r.offset()).write_json_fields(out);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_as_serde_json() {
        let mut all = String::new();
        for c in 0u8..=0x7f {
            all.push(char::from(c));
        }
        all.push_str("é€😀\u{2028}\u{fffd}");
        let long = format!("{all}{all}0123456789abcdef\"x\\y0123456789\u{1}");
        for s in [
            all.as_str(),
            "",
            "plain",
            "\"\\",
            "a\u{7f}b",
            &long,
            "exactly8",
            "exactly8\n",
        ] {
            let mut out = Vec::new();
            string(&mut out, s);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(s).unwrap()
            );
        }
    }

    #[test]
    fn bytes_render_as_bytes_fmt() {
        let cases: [&[u8]; 5] = [b"", b"hello", &[0, 1, 2, 0xff, 0xfe], b"ab", b"abcd"];
        for b in cases {
            for f in [BytesFormat::Utf8, BytesFormat::Hex, BytesFormat::Base64] {
                let mut out = Vec::new();
                bytes(&mut out, Some(b), f);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    f.render_opt(Some(b)).to_string(),
                    "{f:?} {b:?}"
                );
            }
        }
        let mut out = Vec::new();
        bytes(&mut out, None, BytesFormat::Hex);
        assert_eq!(out, b"null");
    }

    #[test]
    fn integers_print_as_display() {
        let check = |v: i64| {
            let mut out = b"x".to_vec();
            int(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), format!("x{v}"));
        };
        for v in [
            0,
            1,
            -1,
            9,
            10,
            99,
            100,
            101,
            999,
            1000,
            i64::MAX,
            i64::MIN,
            -10,
            -100,
        ] {
            check(v);
        }
        let mut p = 1i64;
        for _ in 0..18 {
            p *= 10;
            for v in [p - 1, p, p + 1, -p, -p + 1, -p - 1] {
                check(v);
            }
        }
        let mut out = Vec::new();
        int(&mut out, u64::MAX);
        int(&mut out, u8::MAX);
        int(&mut out, i16::MIN);
        int(&mut out, u32::MAX);
        int(&mut out, usize::MAX);
        let want = format!(
            "{}{}{}{}{}",
            u64::MAX,
            u8::MAX,
            i16::MIN,
            u32::MAX,
            usize::MAX
        );
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn word_check_is_exact() {
        for c in 0u8..=255 {
            for p in 0..8 {
                let mut w = [b'a'; 8];
                w[p] = c;
                assert_eq!(
                    word_needs_escape(u64::from_be_bytes(w)),
                    ESCAPE[c as usize] != 0,
                    "{c:#x} at {p}"
                );
            }
        }
        // High bytes around a plain byte must not look like escapes.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let w = x.to_be_bytes();
            let want = w.iter().any(|&c| ESCAPE[c as usize] != 0);
            assert_eq!(word_needs_escape(x), want, "{w:?}");
        }
    }

    /// The direct writer against serde_json on `entry_json`'s structs, for records of every kind.
    #[test]
    fn entries_and_records_match_serde() {
        use krecords_codec::read::Entries;
        use krecords_codec::write::{NewRecord, V2Builder};
        use krecords_codec::Header;
        let headers = [
            Header {
                key: b"h\x01\"k\xff",
                value: Some(b"\xff\x00v"),
            },
            Header {
                key: "é".as_bytes(),
                value: None,
            },
        ];
        let mut b = V2Builder::new(42);
        b.append(&NewRecord::new(1_714_000_000_000, None, Some(b"hello")))
            .unwrap();
        b.append(&NewRecord::new(1_714_000_000_001, Some(b"k\n\"\\"), None).with_headers(&headers))
            .unwrap();
        b.append(&NewRecord::new(
            1_714_000_000_002,
            Some(&[0xed, 0xa0, 0x80, b'x']),
            Some(b""),
        ))
        .unwrap();
        let bytes = b.finish().unwrap();
        let batch = Entries::new(&bytes).next().unwrap().unwrap();
        for iso in [false, true] {
            let e = entry_json::entry("dir/\"q\".log", &batch, None, None);
            let mut out = Vec::new();
            entry_fields(&mut out, &e, iso, None);
            out.push(b'}');
            let mut want = serde_json::to_value(&e).unwrap();
            if iso {
                let m = want.as_object_mut().unwrap();
                let mut ordered = serde_json::Map::new();
                for (k, v) in m.iter() {
                    ordered.insert(k.clone(), v.clone());
                    if k == "base_timestamp" || k == "max_timestamp" {
                        let s = crate::time_fmt::iso(v.as_i64().unwrap());
                        ordered.insert(format!("{k}_iso"), serde_json::Value::String(s));
                    }
                }
                want = serde_json::Value::Object(ordered);
            }
            assert_eq!(String::from_utf8(out).unwrap(), want.to_string());
        }
        let mut scratch = Vec::new();
        for r in batch.records(&mut scratch, 1 << 20).unwrap() {
            let r = r.unwrap();
            for f in [BytesFormat::Utf8, BytesFormat::Hex, BytesFormat::Base64] {
                for control in [false, true] {
                    let mut out = Vec::new();
                    record(&mut out, &r, control, f, false, None);
                    let want = serde_json::to_string(&entry_json::record(&r, control, f)).unwrap();
                    assert_eq!(String::from_utf8(out).unwrap(), want);
                }
            }
        }
    }
}
