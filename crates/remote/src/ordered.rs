//! Work done by a few threads, its results taken in the order of the jobs, with a bounded number
//! of results computed ahead of the one taken.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};

/// What the workers and the taker share.
struct State<R> {
    /// The next job to start.
    next: usize,
    /// The next job whose result is taken.
    taken: usize,
    /// Results computed and not yet taken, by job.
    done: BTreeMap<usize, R>,
    /// Set when the taker is done (or a worker died): workers stop starting jobs.
    stop: bool,
}

struct Shared<R> {
    state: Mutex<State<R>>,
    changed: Condvar,
}

impl<R> Shared<R> {
    fn lock(&self) -> MutexGuard<'_, State<R>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'g>(&self, guard: MutexGuard<'g, State<R>>) -> MutexGuard<'g, State<R>> {
        self.changed.wait(guard).unwrap_or_else(|e| e.into_inner())
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}

/// Stops the workers when dropped: when the taker returns (or unwinds).
struct StopOnDrop<'s, R>(&'s Shared<R>);

impl<R> Drop for StopOnDrop<'_, R> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Stops the workers and wakes the taker when a worker unwinds: its job has no result.
struct StopOnUnwind<'s, R>(&'s Shared<R>);

impl<R> Drop for StopOnUnwind<'_, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// Runs `work` on each of `jobs` on `threads` threads and calls `take` with a function that
/// returns the results in the order of `jobs` (`None` after the last, or when a worker died).
///
/// A job starts only while fewer than `window` (at least 1) results are computed or being
/// computed ahead of the one `take` waits for: at most `window` results exist at once, beside
/// the ones `take` holds. With `threads` ≤ 1 nothing is spawned: each result is computed when
/// it is taken.
pub(crate) fn run<J: Sync, R: Send, T>(
    jobs: &[J],
    threads: usize,
    window: usize,
    work: &(dyn Fn(&J) -> R + Sync),
    take: impl FnOnce(&mut dyn FnMut() -> Option<R>) -> T,
) -> T {
    if threads <= 1 || jobs.len() <= 1 {
        let mut it = jobs.iter();
        return take(&mut || it.next().map(work));
    }
    let window = window.max(1);
    let shared = Shared {
        state: Mutex::new(State {
            next: 0,
            taken: 0,
            done: BTreeMap::new(),
            stop: false,
        }),
        changed: Condvar::new(),
    };
    std::thread::scope(|scope| {
        for _ in 0..threads.min(jobs.len()) {
            scope.spawn(|| {
                // A worker that unwinds stops the others and wakes the taker.
                let _stop = StopOnUnwind(&shared);
                loop {
                    let i = {
                        let mut g = shared.lock();
                        loop {
                            if g.stop || g.next >= jobs.len() {
                                return;
                            }
                            if g.next < g.taken.saturating_add(window) {
                                break;
                            }
                            g = shared.wait(g);
                        }
                        g.next += 1;
                        g.next - 1
                    };
                    let Some(job) = jobs.get(i) else { return };
                    let r = work(job);
                    shared.lock().done.insert(i, r);
                    shared.changed.notify_all();
                }
            });
        }
        let _stop = StopOnDrop(&shared);
        let mut next = || {
            let mut g = shared.lock();
            let i = g.taken;
            if i >= jobs.len() {
                return None;
            }
            loop {
                if let Some(r) = g.done.remove(&i) {
                    g.taken += 1;
                    drop(g);
                    shared.changed.notify_all();
                    return Some(r);
                }
                if g.stop {
                    return None;
                }
                g = shared.wait(g);
            }
        };
        take(&mut next)
    })
}

#[cfg(test)]
mod tests {
    use super::run;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_come_in_job_order_whatever_the_threads() {
        let jobs: Vec<u64> = (0..200).collect();
        // Later jobs finish first: job i sleeps less the larger i is.
        let work = |j: &u64| {
            std::thread::sleep(std::time::Duration::from_micros((200 - j) * 20));
            j * 3
        };
        for threads in [1, 2, 5] {
            let got = run(&jobs, threads, threads, &work, |next| {
                std::iter::from_fn(next).collect::<Vec<_>>()
            });
            assert_eq!(got, jobs.iter().map(|j| j * 3).collect::<Vec<_>>());
        }
    }

    #[test]
    fn at_most_window_results_exist_ahead_of_the_taker() {
        let jobs: Vec<usize> = (0..100).collect();
        let taken = AtomicUsize::new(0);
        let most_ahead = AtomicUsize::new(0);
        let work = |j: &usize| {
            let ahead = j - taken.load(Ordering::SeqCst);
            most_ahead.fetch_max(ahead, Ordering::SeqCst);
            *j
        };
        for (threads, window) in [(4, 2), (3, 3), (2, 1)] {
            most_ahead.store(0, Ordering::SeqCst);
            taken.store(0, Ordering::SeqCst);
            let sum = run(&jobs, threads, window, &work, |next| {
                let mut sum = 0;
                while let Some(r) = next() {
                    sum += r;
                    // Slow taker: workers would run far ahead if nothing held them.
                    std::thread::sleep(std::time::Duration::from_micros(300));
                    taken.fetch_add(1, Ordering::SeqCst);
                }
                sum
            });
            assert_eq!(sum, 4950);
            let ahead = most_ahead.load(Ordering::SeqCst);
            assert!(
                ahead <= window,
                "{threads} threads, window {window}: {ahead} ahead"
            );
        }
    }

    #[test]
    fn a_taker_that_stops_early_stops_the_workers() {
        let jobs: Vec<usize> = (0..1000).collect();
        let started = AtomicUsize::new(0);
        let work = |j: &usize| {
            started.fetch_add(1, Ordering::SeqCst);
            *j
        };
        let first = run(&jobs, 3, 3, &work, |next| next());
        assert_eq!(first, Some(0));
        // Started: the one taken plus at most the window ahead of it.
        assert!(started.load(Ordering::SeqCst) <= 4);
    }

    #[test]
    fn a_worker_that_panics_does_not_leave_the_taker_waiting() {
        let jobs: Vec<usize> = (0..50).collect();
        let work = |j: &usize| {
            assert!(*j != 7, "job 7 fails");
            *j
        };
        let outcome = std::panic::catch_unwind(|| {
            run(&jobs, 3, 3, &work, |next| std::iter::from_fn(next).count())
        });
        assert!(outcome.is_err());
    }
}
