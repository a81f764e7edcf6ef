//! Retention: deleting the oldest segments by time, size and the log start offset.

use super::*;
use crate::error::{Error, Result};
use crate::segment::Segment;

impl Log {
    /// Kafka's `deleteOldSegments` for `cleanup.policy=delete`: deletes the oldest segments
    /// while the log is over `retention.bytes`, then those whose largest timestamp is older
    /// than `retention.ms`, and moves the log start offset up. The active segment is deleted
    /// too when it qualifies, after rolling a new empty one at the log end.
    ///
    /// # Errors
    ///
    /// Storage errors, which poison the log.
    pub fn retain(&mut self) -> Result<RetainInfo> {
        self.check_writable()?;
        let r = self.retain_inner();
        self.guard(r)
    }

    pub(super) fn retain_inner(&mut self) -> Result<RetainInfo> {
        let mut deleted = 0;
        if self.config.cleanup_policy.delete {
            let retention_bytes = self.config.retention_bytes;
            let total: u64 = self.segments.iter().map(Segment::size).sum();
            if retention_bytes >= 0 && total >= retention_bytes as u64 {
                let mut diff = total - retention_bytes as u64;
                let n = self
                    .segments
                    .iter()
                    .take_while(|s| {
                        if s.size() <= diff {
                            diff -= s.size();
                            true
                        } else {
                            false
                        }
                    })
                    .count();
                deleted += self.delete_oldest(n)?;
            }
            let retention_ms = self.config.retention_ms;
            if retention_ms >= 0 {
                let now = self.env.clock.now_ms();
                let st = self.env.storage.clone();
                let mut n = 0;
                for s in &self.segments {
                    if now.saturating_sub(s.largest_timestamp(st.as_ref())?) > retention_ms {
                        n += 1;
                    } else {
                        break;
                    }
                }
                deleted += self.delete_oldest(n)?;
            }
        }
        Ok(RetainInfo {
            deleted_segments: deleted,
            log_start_offset: self.log_start_offset,
        })
    }

    /// Deletes the `n` oldest segments (never an empty active segment; rolls first when all
    /// would go). Returns how many were deleted.
    pub(super) fn delete_oldest(&mut self, mut n: usize) -> Result<usize> {
        n = n.min(self.segments.len());
        if n == self.segments.len() && self.active().size() == 0 {
            n -= 1;
        }
        if n == 0 {
            return Ok(0);
        }
        if n == self.segments.len() {
            self.roll_at(None)?;
        }
        let st = self.env.storage.clone();
        for segment in self.segments.drain(..n) {
            segment.delete(st.as_ref(), &self.dir)?;
            self.producer_state.delete_snapshot_at(
                st.as_ref(),
                &self.dir,
                segment.base_offset(),
            )?;
        }
        st.sync_dir(&self.dir)
            .map_err(|e| Error::io("sync", &self.dir, e))?;
        self.log_start_offset = self.segments[0].base_offset();
        self.producer_state
            .on_log_start_offset_incremented(self.log_start_offset);
        if self.epoch_cache.truncate_from_start(self.log_start_offset) {
            self.epoch_cache.store(st.as_ref(), &self.dir)?;
        }
        Ok(n)
    }
}
