//! Bytes as text the way Java's `new String(bytes, UTF_8)` (JDK 17+) renders them: how Kafka's
//! Java code turns header keys (and kafka-dump-log turns keys and values) into strings. `krec dump
//! --print-data` uses it to print what kafka-dump-log prints, invalid UTF-8 included; the
//! differential tests use it to compare header keys with what Kafka's reader returns.
//!
//! Java and Rust both replace invalid sequences with U+FFFD but split them differently: Java
//! replaces a malformed 3-byte form such as an encoded surrogate (`ed a0 80`) with one U+FFFD
//! where Rust's `from_utf8_lossy` gives three, and a form cut short by the end of the input
//! ends the text after its replacement.

const REPLACEMENT: char = '\u{fffd}';

fn cont(b: u8) -> bool {
    b & 0xc0 == 0x80
}

/// Decodes `b` as Java's UTF-8 decoder with replacement does.
///
/// # Examples
///
/// ```
/// use krecords_codec::java_text::decode;
/// assert_eq!(decode(b"plain"), "plain");
/// // An encoded surrogate: one replacement in Java, three in `String::from_utf8_lossy`.
/// assert_eq!(decode(b"a\xed\xa0\x80b"), "a\u{fffd}b");
/// ```
pub fn decode(b: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(b) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(b.len());
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let (mut sp, sl) = (0usize, b.len());
    while sp < sl {
        let b1 = at(sp);
        sp += 1;
        match b1 {
            0x00..=0x7f => out.push(char::from(b1)),
            0xc2..=0xdf => {
                if sp < sl {
                    let b2 = at(sp);
                    if cont(b2) {
                        let c = (u32::from(b1 & 0x1f) << 6) | u32::from(b2 & 0x3f);
                        out.push(char::from_u32(c).unwrap_or(REPLACEMENT));
                        sp += 1;
                    } else {
                        out.push(REPLACEMENT);
                    }
                    continue;
                }
                out.push(REPLACEMENT);
                break;
            }
            0xe0..=0xef => {
                let overlong = |b2: u8| b1 == 0xe0 && b2 & 0xe0 == 0x80;
                if sp + 1 < sl {
                    let (b2, b3) = (at(sp), at(sp + 1));
                    if overlong(b2) || !cont(b2) || !cont(b3) {
                        out.push(REPLACEMENT);
                        if !overlong(b2) && cont(b2) {
                            sp += 1;
                        }
                    } else {
                        let c = (u32::from(b1 & 0x0f) << 12)
                            | (u32::from(b2 & 0x3f) << 6)
                            | u32::from(b3 & 0x3f);
                        out.push(char::from_u32(c).unwrap_or(REPLACEMENT));
                        sp += 2;
                    }
                    continue;
                }
                out.push(REPLACEMENT);
                if sp < sl && (overlong(at(sp)) || !cont(at(sp))) {
                    continue;
                }
                break;
            }
            0xf0..=0xf7 => {
                let bad_second = |b2: u8| {
                    b1 > 0xf4
                        || (b1 == 0xf0 && !(0x90..=0xbf).contains(&b2))
                        || (b1 == 0xf4 && b2 & 0xf0 != 0x80)
                        || !cont(b2)
                };
                if sp + 2 < sl {
                    let (b2, b3, b4) = (at(sp), at(sp + 1), at(sp + 2));
                    let uc = (u32::from(b1 & 0x07) << 18)
                        | (u32::from(b2 & 0x3f) << 12)
                        | (u32::from(b3 & 0x3f) << 6)
                        | u32::from(b4 & 0x3f);
                    if !(cont(b2) && cont(b3) && cont(b4) && (0x10000..=0x10ffff).contains(&uc)) {
                        out.push(REPLACEMENT);
                        if bad_second(b2) {
                            // one byte
                        } else if !cont(b3) {
                            sp += 1;
                        } else {
                            sp += 2;
                        }
                    } else {
                        out.push(char::from_u32(uc).unwrap_or(REPLACEMENT));
                        sp += 3;
                    }
                    continue;
                }
                if b1 > 0xf4 || (sp < sl && bad_second(at(sp))) {
                    out.push(REPLACEMENT);
                    continue;
                }
                sp += 1;
                out.push(REPLACEMENT);
                if sp < sl && !cont(at(sp)) {
                    continue;
                }
                break;
            }
            _ => out.push(REPLACEMENT),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn matches_java_where_rust_lossy_differs() {
        assert_eq!(decode(b"hello"), "hello");
        assert_eq!(decode("clé-€".as_bytes()), "clé-€");
        // An encoded surrogate is one replacement in Java (three in from_utf8_lossy).
        assert_eq!(decode(&[0xed, 0xa0, 0x80]), "\u{fffd}");
        // ED B6 01: a bad 3-byte form where the third byte is not a continuation.
        assert_eq!(decode(&[0xed, 0xb6, 0x01]), "\u{fffd}\u{1}");
        assert_eq!(decode(&[0x61, 0xff, 0x62]), "a\u{fffd}b");
        assert_eq!(decode(&[0xf0, 0x9f, 0x98, 0x80]), "😀");
    }
}
