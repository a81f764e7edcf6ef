//! Timing: warm up, then several runs of at least a minimum duration each; report the median time
//! per pass and the spread of the runs.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// How long to measure.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    /// Passes run untimed first, for at least this long (at least one pass).
    pub warmup: Duration,
    /// Each timed run repeats passes until at least this long.
    pub min_run: Duration,
    /// Timed runs; the median is reported.
    pub runs: usize,
}

impl Plan {
    /// Full mode: 0.5 s warm-up, 5 runs of at least 1 s each.
    pub fn full() -> Self {
        Plan {
            warmup: Duration::from_millis(500),
            min_run: Duration::from_secs(1),
            runs: 5,
        }
    }

    /// Quick mode: checks that everything runs, measures nothing meaningful.
    pub fn quick() -> Self {
        Plan {
            warmup: Duration::ZERO,
            min_run: Duration::ZERO,
            runs: 1,
        }
    }
}

/// Seconds per pass: the median of the runs, and the fastest and slowest run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Timing {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub runs: usize,
}

impl Timing {
    /// (slowest - fastest) / median: how noisy the runs were.
    pub fn spread(&self) -> f64 {
        if self.median > 0.0 {
            (self.max - self.min) / self.median
        } else {
            0.0
        }
    }

    /// The median of `per_pass` (seconds per pass of each run).
    pub fn from_runs(mut per_pass: Vec<f64>) -> Self {
        per_pass.sort_by(f64::total_cmp);
        let n = per_pass.len();
        let median = if n == 0 {
            0.0
        } else if n % 2 == 1 {
            per_pass[n / 2]
        } else {
            (per_pass[n / 2 - 1] + per_pass[n / 2]) / 2.0
        };
        Timing {
            median,
            min: per_pass.first().copied().unwrap_or(0.0),
            max: per_pass.last().copied().unwrap_or(0.0),
            runs: n,
        }
    }
}

/// Times each pass of a group as `plan` says, interleaved: every pass is warmed up, then each
/// round runs every pass once for at least `plan.min_run`, so that load from other processes on
/// a shared machine falls on all of them alike rather than on whichever ran at the time. Results
/// go through `black_box` so that they cannot be optimised away.
pub(crate) fn measure_group(
    plan: &Plan,
    passes: &mut [Box<dyn FnMut() -> u64 + '_>],
) -> Vec<Timing> {
    let mut estimate = Vec::with_capacity(passes.len());
    for pass in passes.iter_mut() {
        let start = Instant::now();
        let mut n = 0u64;
        loop {
            black_box(pass());
            n += 1;
            if start.elapsed() >= plan.warmup {
                break;
            }
        }
        estimate.push(start.elapsed().as_secs_f64() / n as f64);
    }
    let mut per_pass = vec![Vec::with_capacity(plan.runs); passes.len()];
    for _ in 0..plan.runs.max(1) {
        for (i, pass) in passes.iter_mut().enumerate() {
            let n = (plan.min_run.as_secs_f64() / estimate[i].max(1e-9))
                .ceil()
                .max(1.0) as u64;
            let t = Instant::now();
            for _ in 0..n {
                black_box(pass());
            }
            let secs = t.elapsed().as_secs_f64() / n as f64;
            per_pass[i].push(secs);
            estimate[i] = secs;
        }
    }
    per_pass.into_iter().map(Timing::from_runs).collect()
}

/// Times a group like [`measure_group`], interleaved the same way, but each pass times itself
/// and returns the seconds of its measured part, so that per-pass setup (a fresh directory, a
/// fresh log or file) stays out of the timing. Warm-up and runs repeat a pass until its measured
/// seconds add up to `plan.warmup` and `plan.min_run` (at least one pass each).
pub(crate) fn measure_group_self_timed(
    plan: &Plan,
    passes: &mut [Box<dyn FnMut() -> f64 + '_>],
) -> Vec<Timing> {
    // Repeats `pass` until its seconds reach `min` (or a pass measures nothing at all, which
    // would otherwise never end); returns the seconds per pass.
    let repeat = |pass: &mut Box<dyn FnMut() -> f64 + '_>, min: f64| {
        let (mut spent, mut n) = (0.0, 0u64);
        loop {
            let secs = pass();
            spent += secs;
            n += 1;
            if spent >= min || secs <= 0.0 {
                return spent / n as f64;
            }
        }
    };
    for pass in passes.iter_mut() {
        repeat(pass, plan.warmup.as_secs_f64());
    }
    let mut per_pass = vec![Vec::with_capacity(plan.runs); passes.len()];
    for _ in 0..plan.runs.max(1) {
        for (i, pass) in passes.iter_mut().enumerate() {
            per_pass[i].push(repeat(pass, plan.min_run.as_secs_f64()));
        }
    }
    per_pass.into_iter().map(Timing::from_runs).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_run_counts() {
        let t = Timing::from_runs(vec![3.0, 1.0, 2.0]);
        assert_eq!((t.median, t.min, t.max, t.runs), (2.0, 1.0, 3.0, 3));
        assert_eq!(Timing::from_runs(vec![4.0, 1.0, 2.0, 3.0]).median, 2.5);
        assert!((Timing::from_runs(vec![0.9, 1.0, 1.1]).spread() - 0.2).abs() < 1e-9);
    }

    #[test]
    fn self_timed_passes_report_their_own_seconds() {
        let plan = Plan {
            warmup: Duration::ZERO,
            min_run: Duration::from_secs(1),
            runs: 3,
        };
        let mut calls = [0u32; 2];
        let [a, b] = &mut calls;
        let mut passes: Vec<Box<dyn FnMut() -> f64 + '_>> = vec![
            Box::new(|| {
                *a += 1;
                0.25
            }),
            Box::new(|| {
                *b += 1;
                2.0
            }),
        ];
        let t = measure_group_self_timed(&plan, &mut passes);
        drop(passes);
        assert_eq!((t[0].median, t[0].runs, t[1].median), (0.25, 3, 2.0));
        // One warm-up pass each, then 4 passes of 0.25 s per run and 1 pass of 2 s per run.
        assert_eq!(calls, [1 + 3 * 4, 1 + 3]);
    }
}
