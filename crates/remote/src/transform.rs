//! Undoing the plugin's per-chunk transforms: decryption, then decompression (the reverse of
//! `CompressionChunkEnumeration` then `EncryptionChunkEnumeration`; plugin:
//! `DecryptionChunkEnumeration`, `DecompressionChunkEnumeration`).

use crate::chunk_index::Chunk;
use crate::crypto::DataKey;
use crate::error::{Error, Result};

/// Decodes one transformed chunk to its `chunk.original_size` bytes. No buffer is sized by
/// anything but the chunk's validated original size.
pub(crate) fn detransform(
    raw: &[u8],
    chunk: &Chunk,
    compression: bool,
    key: Option<(&DataKey, &[u8])>,
    object: &str,
) -> Result<Vec<u8>> {
    let decrypted;
    let plain: &[u8] = match key {
        Some((dk, aad)) => {
            decrypted = dk.open(raw, aad).ok_or_else(|| Error::Decrypt {
                key: object.to_string(),
                chunk: chunk.id,
                at: chunk.transformed_position,
            })?;
            &decrypted
        }
        None => raw,
    };
    let bad = |reason: String| Error::Decompress {
        key: object.to_string(),
        chunk: chunk.id,
        at: chunk.transformed_position,
        reason,
    };
    let want = usize::try_from(chunk.original_size).map_err(|_| bad("chunk too large".into()))?;
    if !compression {
        if plain.len() != want {
            return Err(bad(format!(
                "{} bytes where the chunk index says {want}",
                plain.len()
            )));
        }
        return Ok(plain.to_vec());
    }
    // The plugin sets the frame's content size and decompresses to exactly that.
    let declared = zstd::zstd_safe::get_frame_content_size(plain)
        .map_err(|_| bad("not a zstd frame".into()))?
        .ok_or_else(|| bad("zstd frame without a content size".into()))?;
    if declared != u64::from(chunk.original_size) {
        return Err(bad(format!(
            "zstd frame declares {declared} bytes, the chunk index says {want}"
        )));
    }
    let out = zstd::bulk::decompress(plain, want).map_err(|e| bad(format!("zstd: {e}")))?;
    if out.len() != want {
        return Err(bad(format!(
            "decompressed to {} bytes, the chunk index says {want}",
            out.len()
        )));
    }
    Ok(out)
}
