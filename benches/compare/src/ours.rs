//! krecords itself, through its public API as a user would call it.

use krecords_codec::read::{Entries, Record};
use krecords_codec::DEFAULT_DECOMPRESS_LIMIT;

use crate::workload::Digest;
#[cfg(test)]
use crate::workload::OwnedRecord;

/// Decodes every entry of `bytes`: checks each batch's CRC, then iterates every record, touching
/// key and value. Compressed batches decompress into `scratch`, reused across batches.
///
/// # Errors
///
/// A CRC mismatch or any decode error, as text.
pub(crate) fn decode(bytes: &[u8], scratch: &mut Vec<u8>) -> Result<Digest, String> {
    let mut d = Digest::default();
    for batch in Entries::new(bytes) {
        let batch = batch.map_err(|e| e.to_string())?;
        if !batch.is_crc_valid() {
            return Err(format!("CRC mismatch in the batch at {}", batch.position()));
        }
        for r in batch
            .records(scratch, DEFAULT_DECOMPRESS_LIMIT)
            .map_err(|e| e.to_string())?
        {
            let r = r.map_err(|e| e.to_string())?;
            let headers = match &r {
                Record::V2(v) => v.headers.len(),
                Record::Legacy(_) => 0,
            };
            d.add(
                r.offset(),
                r.timestamp().unwrap_or(-1),
                r.key(),
                r.value(),
                headers,
            );
        }
    }
    Ok(d)
}

#[cfg(test)]
/// Every record of `bytes`, owned (for the cross-checks).
///
/// # Errors
///
/// As [`decode`].
pub(crate) fn collect(bytes: &[u8]) -> Result<Vec<OwnedRecord>, String> {
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    for batch in Entries::new(bytes) {
        let batch = batch.map_err(|e| e.to_string())?;
        if !batch.is_crc_valid() {
            return Err(format!("CRC mismatch in the batch at {}", batch.position()));
        }
        for r in batch
            .records(&mut scratch, DEFAULT_DECOMPRESS_LIMIT)
            .map_err(|e| e.to_string())?
        {
            let r = r.map_err(|e| e.to_string())?;
            out.push(OwnedRecord {
                offset: r.offset(),
                timestamp: r.timestamp().unwrap_or(-1),
                key: r.key().map(<[u8]>::to_vec),
                value: r.value().map(<[u8]>::to_vec),
                headers: r
                    .headers()
                    .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                    .collect(),
            });
        }
    }
    Ok(out)
}
