//! A one-line progress report on stderr for long work, shown only when stderr is a terminal
//! (so pipes, files and CI logs never see it) and cleared when the work ends.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// What the counter counts.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    /// Bytes of input (shown in MiB, with a rate).
    Bytes,
    /// Records.
    Records,
}

/// A progress line; a no-op unless enabled.
#[derive(Debug)]
pub struct Progress {
    label: String,
    unit: Unit,
    total: u64,
    enabled: bool,
    started: Instant,
    last: Instant,
    shown: bool,
}

impl Progress {
    /// A progress line for `total` units, enabled when the work is at least `min_total` and
    /// stderr is a terminal.
    pub fn new(label: impl Into<String>, unit: Unit, total: u64, min_total: u64) -> Self {
        let now = Instant::now();
        Progress {
            label: label.into(),
            unit,
            total,
            enabled: total >= min_total && std::io::stderr().is_terminal(),
            started: now,
            last: now,
            shown: false,
        }
    }

    /// Reports `done` units, at most five times a second.
    pub fn update(&mut self, done: u64) {
        if !self.enabled || self.last.elapsed() < Duration::from_millis(200) {
            return;
        }
        self.last = Instant::now();
        let pct = done.saturating_mul(100) / self.total.max(1);
        let line = match self.unit {
            Unit::Bytes => {
                let secs = self.started.elapsed().as_secs_f64().max(1e-3);
                format!(
                    "{}: {pct}% ({} of {} MiB, {:.0} MB/s)",
                    self.label,
                    done >> 20,
                    self.total >> 20,
                    done as f64 / secs / 1e6
                )
            }
            Unit::Records => format!("{}: {done} of {} records ({pct}%)", self.label, self.total),
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
        self.shown = true;
    }

    /// Shows `line` as it is (work without a known total), at most five times a second.
    pub fn message(&mut self, line: &str) {
        if !self.enabled || (self.shown && self.last.elapsed() < Duration::from_millis(200)) {
            return;
        }
        self.last = Instant::now();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
        self.shown = true;
    }

    /// Clears the line (also done on drop).
    pub fn finish(&mut self) {
        if self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
            self.shown = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
