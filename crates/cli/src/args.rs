//! Arguments that several subcommands share: parsed once, declared once.

use crate::outcome::Failure;
use krecords_codec::Compression;

/// Parses `codec[:level]`.
pub fn parse_compression(s: &str) -> Result<(Compression, Option<i32>), Failure> {
    let (name, level) = match s.split_once(':') {
        Some((n, l)) => (n, Some(l)),
        None => (s, None),
    };
    let codec = Compression::from_name(name).ok_or_else(|| {
        Failure::Usage(format!(
            "unknown compression {name:?} (none, gzip, snappy, lz4, zstd)"
        ))
    })?;
    let level = match level {
        None => None,
        Some(l) => {
            let l: i32 = l
                .parse()
                .map_err(|_| Failure::Usage(format!("invalid level {l:?}")))?;
            match codec.level_range() {
                Some(_) if codec.is_valid_level(l) => Some(l),
                Some((lo, hi)) => {
                    return Err(Failure::Usage(format!(
                        "{name} level {l} outside {lo}..={hi}"
                    )))
                }
                None => return Err(Failure::Usage(format!("{name} has no levels"))),
            }
        }
    };
    Ok((codec, level))
}
