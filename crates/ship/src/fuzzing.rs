//! Entry point of the `ship_stream` fuzz target: not part of the stable API.

use crate::stream::StreamReader;
use crate::Result;
use krecords_log::ship::{plan, PlanOptions};

/// Reads `bytes` as a `-` (standard input) source, fetch by fetch of at most `max_bytes`, and
/// plans every fetch as the shipper would: the records planned, or the first error.
///
/// # Errors
///
/// The stream's or the plan's error (bad data, an open transaction holding too much back).
pub fn ship_stream(bytes: &[u8], max_bytes: usize) -> Result<u64> {
    let mut s = StreamReader::new(Box::new(std::io::Cursor::new(bytes.to_vec())));
    let (mut pos, mut records) = (0i64, 0u64);
    while let Some(f) = s.next(pos, max_bytes.max(1), "-")? {
        let p = plan(&f.bytes, pos, &f.aborted, &PlanOptions::default())
            .map_err(|e| crate::Error::log("-", &e))?;
        records = records.saturating_add(p.batches.iter().map(|b| b.records as u64).sum());
        let next = p.next_offset.max(f.next_offset).max(pos);
        if next == pos {
            break;
        }
        pos = next;
    }
    Ok(records)
}
