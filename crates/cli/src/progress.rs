//! A one-line progress report on stderr for long work, shown only when stderr is a terminal
//! (so pipes, files and CI logs never see it) and cleared when the work ends.
//!
//! Kept here rather than taken from `indicatif`: one rewritten line at most a few times a
//! second is all the commands show (no bars, templates, multi-line layouts or draw threads),
//! and it is a page of code against a crate with its own dependency tree.

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

    /// A progress line for a live partition ([`Progress::update_live`]), enabled when stderr is
    /// a terminal.
    pub fn live(label: impl Into<String>) -> Self {
        Progress::new(label, Unit::Bytes, 1, 0)
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
        self.show(&line);
    }

    /// A live partition: at offset `next` of `end`, `bytes` fetched so far; at most five times
    /// a second.
    pub fn update_live(&mut self, next: i64, end: i64, bytes: u64) {
        if !self.enabled || self.last.elapsed() < Duration::from_millis(200) {
            return;
        }
        self.last = Instant::now();
        self.total = end.max(0) as u64;
        let line = self.live_line(next.max(0) as u64, bytes);
        self.show(&line);
    }

    /// `LABEL: offset N of END (M left), X MiB, Y MB/s`.
    pub fn live_line(&self, next: u64, bytes: u64) -> String {
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        format!(
            "{}: offset {next} of {} ({} left), {} MiB, {:.0} MB/s",
            self.label,
            self.total,
            self.total.saturating_sub(next),
            bytes >> 20,
            bytes as f64 / secs / 1e6
        )
    }

    fn show(&mut self, line: &str) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_line_says_where_the_reading_is() {
        let mut p = Progress::live("krec: kafka://b:9092/t/0");
        p.total = 5_000;
        let line = p.live_line(1_200, 3 << 20);
        assert!(
            line.starts_with("krec: kafka://b:9092/t/0: offset 1200 of 5000 (3800 left), 3 MiB, "),
            "{line}"
        );
        assert!(line.ends_with(" MB/s"), "{line}");
    }
}
