//! Records from JSON lines (feature `json`): `krec build`'s input.

use super::BuildRecord;
use base64::Engine;
use serde::Deserialize;
use std::fmt;
use std::io::BufRead;

/// How keys, values and header values are written as JSON strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BytesEncoding {
    /// UTF-8 text; rendering replaces invalid sequences (lossy), so prefer hex or base64 for
    /// binary.
    #[default]
    Utf8,
    /// Lowercase hex.
    Hex,
    /// Standard base64 with padding.
    Base64,
}

impl BytesEncoding {
    /// Renders bytes as a JSON string value.
    pub fn render(self, bytes: &[u8]) -> String {
        match self {
            BytesEncoding::Utf8 => String::from_utf8_lossy(bytes).into_owned(),
            BytesEncoding::Hex => hex::encode(bytes),
            BytesEncoding::Base64 => base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// Parses a JSON string in this encoding back to bytes.
    ///
    /// # Errors
    ///
    /// Invalid hex or base64, named with the text.
    pub fn parse(self, text: &str) -> Result<Vec<u8>, String> {
        match self {
            BytesEncoding::Utf8 => Ok(text.as_bytes().to_vec()),
            BytesEncoding::Hex => {
                hex::decode(text).map_err(|e| format!("invalid hex {text:?}: {e}"))
            }
            BytesEncoding::Base64 => base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| format!("invalid base64 {text:?}: {e}")),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InputRecord {
    #[serde(default)]
    offset: Option<i64>,
    #[serde(default)]
    partition: Option<i32>,
    #[serde(default)]
    timestamp: Option<i64>,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    headers: Vec<InputHeader>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InputHeader {
    key: String,
    #[serde(default)]
    value: Option<String>,
}

/// Why JSON lines could not be read as records.
#[derive(Debug)]
pub enum JsonLinesError {
    /// Reading the input failed.
    Io(std::io::Error),
    /// A line is not a record: malformed JSON, an unknown field, invalid hex or base64.
    Line {
        /// The line's number, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for JsonLinesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonLinesError::Io(e) => write!(f, "cannot read input: {e}"),
            JsonLinesError::Line { line, reason } => write!(f, "input line {line}: {reason}"),
        }
    }
}

impl std::error::Error for JsonLinesError {}

/// Reads records as JSON lines, one object a line:
/// `{"offset":..,"timestamp":..,"key":..,"value":..,"headers":[{"key":..,"value":..}]}`, every
/// field optional but a header's key, no other field allowed, an offset not negative; keys,
/// values and header values in `encoding`. Blank lines are skipped; a record without a
/// timestamp gets `now`.
///
/// # Errors
///
/// [`JsonLinesError::Line`] naming the first line that is not a record; I/O errors.
///
/// # Examples
///
/// ```
/// use krecords_codec::build::{read_json_records, BytesEncoding};
///
/// let input = b"{\"timestamp\":5,\"key\":\"6b\",\"value\":\"7631\"}\n\n{\"value\":null}\n";
/// let records = read_json_records(&input[..], BytesEncoding::Hex, 99).unwrap();
/// assert_eq!(records[0].key.as_deref(), Some(&b"k"[..]));
/// assert_eq!(records[0].value.as_deref(), Some(&b"v1"[..]));
/// assert_eq!((records[1].timestamp, records[1].value.as_deref()), (99, None));
/// ```
pub fn read_json_records(
    reader: impl BufRead,
    encoding: BytesEncoding,
    now: i64,
) -> Result<Vec<BuildRecord>, JsonLinesError> {
    let mut out = Vec::new();
    read_lines(reader, encoding, now, |line, partition, record| {
        if partition.is_some() {
            return Err(JsonLinesError::Line {
                line,
                reason: "\"partition\" is for krec produce: a batch file has no partition"
                    .to_owned(),
            });
        }
        out.push(record);
        Ok(())
    })?;
    Ok(out)
}

/// Reads records to produce, as [`read_json_records`] with one more optional field,
/// `"partition"` (an integer): each record with the number of the line it was read from (from
/// 1: blank lines are skipped, so that errors about a record can name its line) and the
/// partition it names, if any.
///
/// # Errors
///
/// As [`read_json_records`].
///
/// # Examples
///
/// ```
/// use krecords_codec::build::{read_json_produce_records, BytesEncoding};
///
/// let input = b"{\"partition\":3,\"value\":\"a\"}\n\n{\"key\":\"k\"}\n";
/// let records = read_json_produce_records(&input[..], BytesEncoding::Utf8, 0).unwrap();
/// assert_eq!((records[0].0, records[0].1, records[1].0, records[1].1), (1, Some(3), 3, None));
/// assert_eq!(records[1].2.key.as_deref(), Some(&b"k"[..]));
/// ```
pub fn read_json_produce_records(
    reader: impl BufRead,
    encoding: BytesEncoding,
    now: i64,
) -> Result<Vec<(usize, Option<i32>, BuildRecord)>, JsonLinesError> {
    let mut out = Vec::new();
    read_lines(reader, encoding, now, |line, partition, record| {
        out.push((line, partition, record));
        Ok(())
    })?;
    Ok(out)
}

/// Reads records to produce from plain text, each line one value taken as it is (blank lines
/// too; no key, no headers, the timestamp `now`): as [`read_json_produce_records`] returns
/// records, with their line numbers (from 1) and no partition.
///
/// # Errors
///
/// [`JsonLinesError::Io`]: the input cannot be read, or is not UTF-8.
///
/// # Examples
///
/// ```
/// use krecords_codec::build::read_value_lines;
///
/// let records = read_value_lines(&b"a\n\n{not json}\n"[..], 7).unwrap();
/// assert_eq!(records.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2, 3]);
/// assert_eq!(records[2].2.value.as_deref(), Some(&b"{not json}"[..]));
/// assert_eq!((records[2].1, records[2].2.timestamp), (None, 7));
/// ```
pub fn read_value_lines(
    reader: impl BufRead,
    now: i64,
) -> Result<Vec<(usize, Option<i32>, BuildRecord)>, JsonLinesError> {
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let value = line.map_err(JsonLinesError::Io)?.into_bytes();
        out.push((i + 1, None, BuildRecord::new(now, None, Some(value))));
    }
    Ok(out)
}

/// Parses each non-blank line and hands its number (from 1), partition and record to `each`.
fn read_lines(
    reader: impl BufRead,
    encoding: BytesEncoding,
    now: i64,
    mut each: impl FnMut(usize, Option<i32>, BuildRecord) -> Result<(), JsonLinesError>,
) -> Result<(), JsonLinesError> {
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(JsonLinesError::Io)?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |reason: String| JsonLinesError::Line {
            line: i + 1,
            reason,
        };
        let r: InputRecord = serde_json::from_str(&line).map_err(|e| bad(e.to_string()))?;
        if let Some(o) = r.offset.filter(|&o| o < 0) {
            return Err(bad(format!(
                "offset {o} is negative: Kafka's offsets are 0 to {}",
                i64::MAX
            )));
        }
        let parse = |s: Option<String>| s.map(|s| encoding.parse(&s).map_err(bad)).transpose();
        let mut headers = Vec::with_capacity(r.headers.len());
        for h in r.headers {
            headers.push((h.key.into_bytes(), parse(h.value)?));
        }
        let record = BuildRecord {
            offset: r.offset,
            timestamp: r.timestamp.unwrap_or(now),
            key: parse(r.key)?,
            value: parse(r.value)?,
            headers,
        };
        each(i + 1, r.partition, record)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_round_trip() {
        for f in [
            BytesEncoding::Hex,
            BytesEncoding::Base64,
            BytesEncoding::Utf8,
        ] {
            assert_eq!(f.parse(&f.render(b"hello")).unwrap(), b"hello");
        }
        assert_eq!(BytesEncoding::Hex.render(&[0xAB]), "ab");
    }

    #[test]
    fn bad_lines_are_named() {
        let input = b"{\"value\":\"a\"}\n{\"valeu\":\"b\"}\n";
        let e = read_json_records(&input[..], BytesEncoding::Utf8, 0).unwrap_err();
        assert!(matches!(e, JsonLinesError::Line { line: 2, .. }), "{e}");
        assert!(
            e.to_string().starts_with("input line 2: unknown field"),
            "{e}"
        );
        let e = read_json_records(&b"{\"key\":\"zz\"}"[..], BytesEncoding::Hex, 0).unwrap_err();
        assert!(e.to_string().contains("invalid hex"), "{e}");
        // Kafka's offsets are not negative: said with the line, not as a builder's error.
        let input = b"{\"value\":\"a\"}\n\n{\"offset\":-1,\"value\":\"b\"}\n";
        let e = read_json_records(&input[..], BytesEncoding::Utf8, 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "input line 3: offset -1 is negative: Kafka's offsets are 0 to 9223372036854775807"
        );
    }
}
