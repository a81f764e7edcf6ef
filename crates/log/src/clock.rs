//! Wall-clock time, behind a trait so tests control it.
//!
//! The log reads the clock for LogAppendTime, the timestamp window of `message.timestamp.*.ms`,
//! time-based segment rolls (`segment.ms`), retention (`retention.ms`) and `flush.ms`.

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};

/// A source of the current time in ms since the Unix epoch.
pub trait Clock: fmt::Debug + Send + Sync {
    /// Now, in ms since the epoch.
    fn now_ms(&self) -> i64;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        i64::try_from(ms).unwrap_or(i64::MAX)
    }
}

/// A clock that moves only when told to.
///
/// # Examples
///
/// ```
/// use krecords_log::clock::{Clock, ManualClock};
/// let clock = ManualClock::new(1_000);
/// clock.advance(500);
/// assert_eq!(clock.now_ms(), 1_500);
/// ```
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock showing `now_ms`.
    pub fn new(now_ms: i64) -> Self {
        ManualClock(AtomicI64::new(now_ms))
    }

    /// Sets the time.
    pub fn set(&self, now_ms: i64) {
        self.0.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `ms`.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}
