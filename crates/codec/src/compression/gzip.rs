//! gzip (placeholder until the compression work lands).
use crate::{Compression, Error, Result};

fn unsupported(at: usize) -> Error {
    Error::Decompress { at, compression: Compression::from_name("gzip").unwrap_or(Compression::None), reason: "not implemented yet".into() }
}
/// Compresses.
pub fn compress(_input: &[u8], _level: Option<i32>, _out: &mut Vec<u8>) -> Result<()> { Err(unsupported(0)) }
/// Decompresses.
pub fn decompress(_input: &[u8], _limit: usize, at: usize, _out: &mut Vec<u8>) -> Result<()> { Err(unsupported(at)) }
