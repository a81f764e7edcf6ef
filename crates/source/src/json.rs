//! JSON values written straight into a byte buffer: integers, booleans, strings escaped exactly
//! as serde_json escapes them, byte fields as `--bytes utf8|hex|base64` renders them, and
//! timestamps with their ISO 8601 form. The pieces of the JSON Lines that `krec dump` prints
//! on its hot path, without a `serde_json::Value` or a `String` per field; each is byte for
//! byte what serde_json prints for the same value (the tests compare them).
//!
//! Strings are scanned eight bytes at a time: a word of eight plain bytes (no control
//! character, `"` or `\`) is copied whole, see [`string`].

use crate::time::write_iso;
use base64::Engine;
use krecords_codec::build::BytesEncoding;

/// Lowercase hex digits.
const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends an integer.
#[inline]
pub fn int(out: &mut Vec<u8>, v: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Appends `true` or `false`.
#[inline]
pub fn boolean(out: &mut Vec<u8>, v: bool) {
    out.extend_from_slice(if v { b"true" } else { b"false" });
}

/// serde_json's escape for a byte: 0 none, `u` for `\u00XX`, else the letter after `\`.
#[inline]
fn escape(c: u8) -> u8 {
    match c {
        0x08 => b'b',
        0x09 => b't',
        0x0a => b'n',
        0x0c => b'f',
        0x0d => b'r',
        0x00..=0x1f => b'u',
        b'"' => b'"',
        b'\\' => b'\\',
        _ => 0,
    }
}

/// The hex digit of the low four bits of `n`.
#[inline]
fn hex_digit(n: u8) -> u8 {
    HEX.get(usize::from(n & 0xf)).copied().unwrap_or(b'0')
}

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
        if let Some(word) = b.get(i..i + 8).and_then(|c| <[u8; 8]>::try_from(c).ok()) {
            if !word_needs_escape(u64::from_be_bytes(word)) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(b.len());
        for (at, &c) in b.iter().enumerate().take(end).skip(i) {
            let e = escape(c);
            if e == 0 {
                continue;
            }
            out.extend_from_slice(b.get(start..at).unwrap_or_default());
            if e == b'u' {
                out.extend_from_slice(&[b'\\', b'u', b'0', b'0', hex_digit(c >> 4), hex_digit(c)]);
            } else {
                out.extend_from_slice(&[b'\\', e]);
            }
            start = at + 1;
        }
        i = end;
    }
    out.extend_from_slice(b.get(start..).unwrap_or_default());
    out.push(b'"');
}

/// Appends bytes as a JSON string of their UTF-8 text, invalid sequences replaced as
/// `String::from_utf8_lossy` does.
pub fn utf8(out: &mut Vec<u8>, b: &[u8]) {
    match std::str::from_utf8(b) {
        Ok(s) => string(out, s),
        Err(_) => string(out, &String::from_utf8_lossy(b)),
    }
}

/// Appends bytes rendered as [`BytesEncoding::render`] renders them, as a JSON string, or
/// `null` for `None`.
pub fn bytes(out: &mut Vec<u8>, b: Option<&[u8]>, encoding: BytesEncoding) {
    let Some(b) = b else {
        out.extend_from_slice(b"null");
        return;
    };
    match encoding {
        BytesEncoding::Utf8 => utf8(out, b),
        BytesEncoding::Hex => {
            out.reserve(b.len().saturating_mul(2).saturating_add(2));
            out.push(b'"');
            for &c in b {
                out.extend_from_slice(&[hex_digit(c >> 4), hex_digit(c)]);
            }
            out.push(b'"');
        }
        BytesEncoding::Base64 => {
            let engine = &base64::engine::general_purpose::STANDARD;
            let at = out.len() + 1;
            out.push(b'"');
            out.resize(at + b.len().div_ceil(3) * 4, 0);
            let n = out
                .get_mut(at..)
                .and_then(|room| engine.encode_slice(b, room).ok())
                .unwrap_or_default();
            out.truncate(at + n);
            out.push(b'"');
        }
    }
}

/// Appends `"name":value` for an optional timestamp in epoch milliseconds, and with `iso`
/// `,"name_iso":"2024-04-24T23:06:40.000Z"` (null when there is no timestamp or it is Kafka's
/// -1, "no timestamp").
pub fn timestamp(out: &mut Vec<u8>, name: &str, ts: Option<i64>, iso: bool) {
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
    fn bytes_render_as_the_codec_renders() {
        let cases: [&[u8]; 6] = [
            b"",
            b"hello",
            &[0, 1, 2, 0xff, 0xfe],
            b"ab",
            b"abcd",
            b"\"\n",
        ];
        for b in cases {
            for e in [
                BytesEncoding::Utf8,
                BytesEncoding::Hex,
                BytesEncoding::Base64,
            ] {
                let mut out = Vec::new();
                bytes(&mut out, Some(b), e);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    serde_json::to_string(&e.render(b)).unwrap(),
                    "{e:?} {b:?}"
                );
            }
        }
        let mut out = Vec::new();
        bytes(&mut out, None, BytesEncoding::Hex);
        assert_eq!(out, b"null");
    }

    #[test]
    fn timestamps_with_and_without_iso() {
        let mut out = Vec::new();
        timestamp(&mut out, "t", Some(1_714_000_000_000), true);
        out.push(b',');
        timestamp(&mut out, "u", Some(-1), true);
        out.push(b',');
        timestamp(&mut out, "v", None, false);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#""t":1714000000000,"t_iso":"2024-04-24T23:06:40.000Z","u":-1,"u_iso":null,"v":null"#
        );
    }

    #[test]
    fn integers_print_as_display() {
        let check = |v: i64| {
            let mut out = b"x".to_vec();
            int(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), format!("x{v}"));
        };
        for v in [0, 1, -1, 9, 10, 99, 100, 101, 999, 1000, i64::MAX, i64::MIN] {
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
        boolean(&mut out, true);
        boolean(&mut out, false);
        let want = format!("{}{}{}truefalse", u64::MAX, u8::MAX, i16::MIN);
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
                    escape(c) != 0,
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
            let want = w.iter().any(|&c| escape(c) != 0);
            assert_eq!(word_needs_escape(x), want, "{w:?}");
        }
    }

    proptest::proptest! {
        /// Any string, any bytes: what serde_json prints.
        #[test]
        fn any_string_as_serde_json(s in ".*", b in proptest::collection::vec(0u8.., 0..64)) {
            let mut out = Vec::new();
            string(&mut out, &s);
            proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&s).unwrap());
            let mut out = Vec::new();
            utf8(&mut out, &b);
            let lossy = String::from_utf8_lossy(&b);
            proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&lossy).unwrap());
        }
    }
}
