//! One writer per log directory: the writer's lock, and the check for a running Kafka broker.
//!
//! A [`crate::Log`] opened for writing holds an exclusive OS lock on
//! [`files::LOCK_FILE`](crate::files::LOCK_FILE) in its directory for as long as it lives
//! ([`Storage::lock_file`](super::Storage::lock_file), given that file's path). On the real file system this is
//! `flock(2)` (`LockFileEx` on Windows) through [`std::fs::File::try_lock`]: the kernel releases
//! it when the holder closes the file or dies, so a SIGKILLed writer never leaves the directory
//! locked. The lock file itself is never deleted (deleting it would let two processes lock two
//! different files of the same name).
//!
//! A Kafka broker holds a POSIX record lock (`fcntl(F_SETLK)`, Java's `FileChannel.tryLock`)
//! on `.lock` in each of its `log.dirs`, the parent of every partition directory. That lock and
//! `flock` do not see each other, so the broker check asks the kernel with `F_GETLK`, which
//! only tests and takes nothing: a broker starting at that moment is never disturbed.

use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long opening a log for writing waits while another writer holds its directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LockWait {
    /// Fail at once ([`crate::Error::LogLocked`]).
    #[default]
    NoWait,
    /// Wait up to this long, then fail.
    For(Duration),
    /// Wait until the other writer lets go.
    Forever,
}

impl std::str::FromStr for LockWait {
    type Err = String;

    /// Parses a `--wait` value: a number of seconds (fractions allowed, at most 10^9), or
    /// `forever`.
    ///
    /// # Errors
    ///
    /// Anything else, with an example of a valid value.
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "forever" {
            return Ok(LockWait::Forever);
        }
        match s.parse::<f64>() {
            Ok(secs) if secs.is_finite() && (0.0..=1e9).contains(&secs) => {
                Ok(LockWait::For(Duration::from_secs_f64(secs)))
            }
            _ => Err(format!(
                "expected a number of seconds (e.g. --wait=30) or --wait alone, not {s:?}"
            )),
        }
    }
}

/// An exclusive hold on a log directory; dropping it lets the next writer in.
pub struct DirLock {
    _hold: Box<dyn fmt::Debug + Send + Sync>,
}

impl DirLock {
    /// A hold kept alive by `hold` (an open locked file, or a storage's own token) until this
    /// value is dropped.
    pub fn new(hold: impl fmt::Debug + Send + Sync + 'static) -> Self {
        DirLock {
            _hold: Box::new(hold),
        }
    }
}

impl fmt::Debug for DirLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirLock").finish_non_exhaustive()
    }
}

/// Polls `try_once` until it returns a hold or `wait` runs out. `block` is the blocking
/// variant for [`LockWait::Forever`], when the backend has one.
pub(crate) fn wait_for<T>(
    wait: LockWait,
    mut try_once: impl FnMut() -> io::Result<Option<T>>,
    block: Option<&dyn Fn() -> io::Result<T>>,
) -> io::Result<Option<T>> {
    const POLL: Duration = Duration::from_millis(20);
    let deadline = match wait {
        LockWait::NoWait => return try_once(),
        LockWait::For(d) => Instant::now().checked_add(d),
        LockWait::Forever => {
            if let Some(block) = block {
                return block().map(Some);
            }
            None
        }
    };
    loop {
        if let Some(hold) = try_once()? {
            return Ok(Some(hold));
        }
        let sleep = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => left.min(POLL),
                _ => return Ok(None),
            },
            None => POLL,
        };
        std::thread::sleep(sleep);
    }
}

/// The open lock file, locked; the lock goes with the descriptor.
#[derive(Debug)]
struct LockedFile {
    _file: File,
    _path: PathBuf,
}

/// Takes the writer's lock on `path` (created if missing), waiting as `wait` says. `None` when
/// another holder keeps it.
pub(crate) fn lock_file(path: &Path, wait: LockWait) -> io::Result<Option<DirLock>> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    let try_once = || match file.try_lock() {
        Ok(()) => Ok(Some(())),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    };
    let block = || file.lock();
    let got = wait_for(wait, try_once, Some(&block))?;
    Ok(got.map(|()| {
        DirLock::new(LockedFile {
            _file: file,
            _path: path.to_path_buf(),
        })
    }))
}

/// The name of the file a Kafka broker locks in each of its `log.dirs`.
pub const KAFKA_LOCK_FILE: &str = ".lock";

/// `Some(path of .lock)` when a running process (a Kafka broker) holds a POSIX record lock on
/// `.lock` in `dir`'s parent. Only tests for the lock (`F_GETLK`); takes nothing.
pub(crate) fn running_broker_lock(dir: &Path) -> io::Result<Option<PathBuf>> {
    let Some(parent) = dir.parent() else {
        return Ok(None);
    };
    let path = parent.join(KAFKA_LOCK_FILE);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(posix_lock_held(&file)?.then_some(path))
}

#[cfg(target_os = "linux")]
fn posix_lock_held(file: &File) -> io::Result<bool> {
    use nix::fcntl::{fcntl, FcntlArg};
    use nix::libc;
    let mut query = libc::flock {
        l_type: libc::F_WRLCK as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: 0,
        l_len: 0,
        l_pid: 0,
    };
    fcntl(file, FcntlArg::F_GETLK(&mut query)).map_err(io::Error::from)?;
    Ok(query.l_type != libc::F_UNLCK as libc::c_short)
}

#[cfg(not(target_os = "linux"))]
fn posix_lock_held(_file: &File) -> io::Result<bool> {
    // Elsewhere the check is not made; the writer's own lock still keeps writers apart.
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_wait_parses_seconds_and_forever() {
        assert_eq!("forever".parse(), Ok(LockWait::Forever));
        assert_eq!(
            "1.5".parse(),
            Ok(LockWait::For(Duration::from_millis(1500)))
        );
        assert_eq!("0".parse(), Ok(LockWait::For(Duration::ZERO)));
        for bad in ["-1", "inf", "NaN", "1e10", "soon", ""] {
            assert!(bad.parse::<LockWait>().is_err(), "{bad}");
        }
    }
}
