//! Rendering and parsing of keys, values and header values as `--bytes utf8|hex|base64`.

use clap::ValueEnum;
use krecords_codec::build::BytesEncoding;

/// How byte fields appear in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum BytesFormat {
    /// UTF-8 text; invalid sequences are replaced (lossy), so prefer hex or base64 for binary.
    #[default]
    Utf8,
    /// Lowercase hex.
    Hex,
    /// Standard base64 with padding.
    Base64,
}

impl From<BytesFormat> for BytesEncoding {
    fn from(f: BytesFormat) -> Self {
        match f {
            BytesFormat::Utf8 => BytesEncoding::Utf8,
            BytesFormat::Hex => BytesEncoding::Hex,
            BytesFormat::Base64 => BytesEncoding::Base64,
        }
    }
}

impl BytesFormat {
    /// Renders bytes as a JSON string value.
    pub fn render(self, bytes: &[u8]) -> String {
        BytesEncoding::from(self).render(bytes)
    }

    /// Parses a JSON string in this format back to bytes.
    pub fn parse(self, text: &str) -> Result<Vec<u8>, String> {
        BytesEncoding::from(self).parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for f in [BytesFormat::Hex, BytesFormat::Base64, BytesFormat::Utf8] {
            assert_eq!(f.parse(&f.render(b"hello")).unwrap(), b"hello");
        }
        assert_eq!(BytesFormat::Hex.render(&[0xAB]), "ab");
    }
}
