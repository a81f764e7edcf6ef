//! How `krec explain` shows a field's bytes: the hex column of the text form, the cut hex of the
//! JSON form, and the value column of key, value and header bytes (text when printable UTF-8,
//! else hex). Pure functions of the bytes, shared by every front end that renders [`Item`]s.
//!
//! [`Item`]: super::Item

use std::fmt::Write as _;

/// Bytes of a key, value or compressed section shown in the value column and in JSON "hex";
/// longer ones are cut and end in "…".
pub const SHOW_BYTES: usize = 32;

/// Bytes shown in the hex column of the text form.
pub const HEX_COLUMN_BYTES: usize = 8;

/// Lowercase hex of `bytes`, without separators.
fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len().saturating_mul(2));
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The first [`HEX_COLUMN_BYTES`] bytes as spaced hex, "…" when cut: `00 49`.
pub fn hex_column(bytes: &[u8]) -> String {
    let mut s: Vec<String> = bytes
        .iter()
        .take(HEX_COLUMN_BYTES)
        .map(|b| format!("{b:02x}"))
        .collect();
    if bytes.len() > HEX_COLUMN_BYTES {
        s.push("…".into());
    }
    s.join(" ")
}

/// The first [`SHOW_BYTES`] bytes as hex, "…" when cut (the JSON form's `"hex"`).
pub fn hex_prefix(bytes: &[u8]) -> String {
    let mut s = hex(bytes.get(..SHOW_BYTES).unwrap_or(bytes));
    if bytes.len() > SHOW_BYTES {
        s.push('…');
    }
    s
}

/// The text of key, value and header bytes when they are printable UTF-8 (up to where a
/// cut value's shown part ends).
fn printable(bytes: &[u8]) -> Option<&str> {
    let cut = bytes.len() > SHOW_BYTES;
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.chars().any(char::is_control) => Some(s),
        Err(e) if cut && e.valid_up_to() >= SHOW_BYTES.saturating_sub(3) => bytes
            .get(..e.valid_up_to())
            .and_then(|b| std::str::from_utf8(b).ok())
            .filter(|s| !s.chars().any(char::is_control)),
        _ => None,
    }
}

/// Whether content bytes show as (quoted) text.
pub fn is_text(bytes: &[u8]) -> bool {
    printable(bytes).is_some()
}

/// The value column for key, value and header bytes: text when printable UTF-8, else `0x` and
/// hex; cut past [`SHOW_BYTES`] bytes with "…".
pub fn content_value(bytes: &[u8]) -> String {
    match printable(bytes) {
        Some(s) => {
            let mut end = s.len().min(SHOW_BYTES);
            while !s.is_char_boundary(end) {
                end = end.saturating_sub(1);
            }
            let mut v = s.get(..end).unwrap_or_default().to_string();
            if end < bytes.len() {
                v.push('…');
            }
            v
        }
        None => {
            let mut v = format!("0x{}", hex(bytes.get(..SHOW_BYTES).unwrap_or(bytes)));
            if bytes.len() > SHOW_BYTES {
                v.push('…');
            }
            v
        }
    }
}

/// A shown value: a number, or text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShownValue {
    /// A number.
    Int(i64),
    /// Text: a value in words, a heading's text, an error, or a key, value or header shown
    /// by [`content_value`].
    Text(String),
}

/// One [`Item`](super::Item) as `krec explain --format json` prints it (and `krecords.explain`
/// returns it): where, how many bytes, the field's name (a heading's kind, or `error`), the
/// cut hex of its bytes, its value and note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// Byte position (in the decompressed bytes when `decompressed`).
    pub position: usize,
    /// Whether `position` is in an entry's decompressed records.
    pub decompressed: bool,
    /// Bytes the item covers.
    pub length: usize,
    /// The field's name, a heading's kind, or `error`.
    pub field: String,
    /// [`hex_prefix`] of the bytes (empty for headings and errors).
    pub hex: String,
    /// [`hex_column`] of the bytes, for the text form.
    pub hex_column: String,
    /// The value.
    pub value: ShownValue,
    /// Whether the text form quotes the value (printable key, value and header bytes).
    pub quoted: bool,
    /// A note on the value.
    pub note: Option<String>,
}

/// How an item is shown.
///
/// ```
/// use krecords_codec::explain::show::{shown, ShownValue};
/// use krecords_codec::explain::{Explainer, Item};
/// use krecords_codec::write::{NewRecord, V2Builder};
///
/// let mut b = V2Builder::new(0);
/// b.append(&NewRecord::new(1714000000000, None, Some(b"hello"))).unwrap();
/// let mut rows = Vec::new();
/// Explainer::new(1 << 20)
///     .explain_bytes(&b.finish().unwrap(), &mut |i: &Item<'_>| {
///         rows.push(shown(i));
///         Ok(())
///     })
///     .unwrap();
/// let value = rows.iter().find(|r| r.field == "record 0 value").unwrap();
/// assert_eq!((value.value.clone(), value.quoted), (ShownValue::Text("hello".into()), true));
/// ```
pub fn shown(item: &super::Item<'_>) -> Shown {
    use super::{Item, Value};
    match item {
        Item::Heading {
            at,
            length,
            kind,
            text,
        } => Shown {
            position: at.pos,
            decompressed: at.decompressed,
            length: *length,
            field: kind.name().to_owned(),
            hex: String::new(),
            hex_column: String::new(),
            value: ShownValue::Text(text.clone()),
            quoted: false,
            note: None,
        },
        Item::Field(f) => {
            let (value, quoted) = match &f.value {
                Value::Int(n) => (ShownValue::Int(*n), false),
                Value::Text(s) => (ShownValue::Text(s.clone()), false),
                Value::Content => (ShownValue::Text(content_value(f.bytes)), is_text(f.bytes)),
            };
            Shown {
                position: f.at.pos,
                decompressed: f.at.decompressed,
                length: f.bytes.len(),
                field: f.name.clone(),
                hex: hex_prefix(f.bytes),
                hex_column: hex_column(f.bytes),
                value,
                quoted,
                note: f.note.clone(),
            }
        }
        Item::Error { at, message } => Shown {
            position: at.pos,
            decompressed: at.decompressed,
            length: 0,
            field: "error".to_owned(),
            hex: String::new(),
            hex_column: hex_column(&[]),
            value: ShownValue::Text(message.clone()),
            quoted: false,
            note: None,
        },
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn hex_column_is_cut_after_eight_bytes() {
        assert_eq!(hex_column(&[0, 0x49]), "00 49");
        assert_eq!(hex_column(&[1; 9]), "01 01 01 01 01 01 01 01 …");
    }

    #[test]
    fn hex_prefix_is_cut_after_32_bytes() {
        assert_eq!(hex_prefix(&[0xab, 1]), "ab01");
        assert_eq!(hex_prefix(&[0; 33]), format!("{}…", "00".repeat(32)));
    }

    #[test]
    fn content_is_text_or_hex_and_cut() {
        assert_eq!(content_value(b"hello"), "hello");
        assert!(is_text(b"hello"));
        assert_eq!(content_value(&[0, 1, 2]), "0x000102");
        assert!(!is_text(&[0, 1, 2]));
        assert_eq!(content_value(&[b'a'; 40]), format!("{}…", "a".repeat(32)));
        // A multi-byte character across the cut is left out whole.
        let mut s = "a".repeat(31).into_bytes();
        s.extend("éé".as_bytes());
        assert_eq!(content_value(&s), format!("{}…", "a".repeat(31)));
    }
}
