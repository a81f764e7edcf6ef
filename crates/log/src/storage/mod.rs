//! File access behind a small trait, so tests can inject faults and simulate crashes.
//!
//! The log touches the disk only through [`Storage`] (directory operations) and [`StorageFile`]
//! (positioned reads and writes, length changes, sync). [`FsStorage`] is the real file system;
//! [`MemStorage`] keeps everything in memory, keeps the bytes that reached "disk" (synced) apart
//! from the bytes only written, and can fail the Nth write or sync, cut a write short, and crash:
//! drop everything not synced, or keep a random prefix of it, as a power cut might.
//!
//! Directory entries are durable only after [`Storage::sync_dir`], as on Linux: a file created,
//! renamed or removed since the last directory sync may come back or vanish after a crash.

use crate::clock::{Clock, ManualClock};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

mod listed;
mod lock;
mod read_only;

pub use listed::ListedStorage;
pub use lock::{DirLock, LockWait, KAFKA_LOCK_FILE};
pub use read_only::ReadOnlyStorage;

/// Directory-level operations of a storage backend.
pub trait Storage: fmt::Debug + Send + Sync {
    /// Creates `path` (truncating an existing file) and opens it for reading and writing.
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn create(&self, path: &Path) -> io::Result<Box<dyn StorageFile>>;

    /// Opens an existing file for reading and writing.
    ///
    /// # Errors
    ///
    /// `NotFound` when it does not exist; any I/O error.
    fn open(&self, path: &Path) -> io::Result<Box<dyn StorageFile>>;

    /// Opens an existing file for reading only. Writes through the handle may fail. The
    /// default opens it as [`Storage::open`] does.
    ///
    /// # Errors
    ///
    /// `NotFound` when it does not exist; any I/O error.
    fn open_read(&self, path: &Path) -> io::Result<Box<dyn StorageFile>> {
        self.open(path)
    }

    /// Whether `path` exists.
    ///
    /// # Errors
    ///
    /// Any I/O error other than "not found".
    fn exists(&self, path: &Path) -> io::Result<bool>;

    /// When the real file `path` was last modified (`None` for a backend whose files are not
    /// the machine's, like [`MemStorage`]): with its length, what tells a reader that a file
    /// it parsed before, through any storage of the same files, is still the same. Unlike
    /// [`Storage::modified_ms`], which a backend may make up, it is only ever the file
    /// system's.
    fn modified(&self, _path: &Path) -> Option<std::time::SystemTime> {
        None
    }

    /// Renames `from` to `to`, replacing `to`.
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Removes a file.
    ///
    /// # Errors
    ///
    /// Any I/O error, `NotFound` included.
    fn remove(&self, path: &Path) -> io::Result<()>;

    /// The names of the files in `dir` (not paths; subdirectories may be listed too).
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>>;

    /// Makes the creations, renames and removals in `dir` durable.
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;

    /// Creates `dir` and its parents.
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;

    /// Removes the empty directory `dir`. The default cannot (`Unsupported`).
    ///
    /// # Errors
    ///
    /// Any I/O error, `NotFound` included, and a directory that is not empty.
    fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        let _ = dir;
        Err(io::ErrorKind::Unsupported.into())
    }

    /// Last modification time of `path` in ms since the epoch (Kafka falls back to it for the
    /// age of a segment without timestamps).
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn modified_ms(&self, path: &Path) -> io::Result<i64>;

    /// Sets the modification time of `path` (the cleaner gives a cleaned segment the time of
    /// the last segment it replaces, as Kafka's does: v0/v1 deletes are timed by it). The
    /// default does nothing, for storages that cannot.
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()> {
        let _ = (path, ms);
        Ok(())
    }

    /// Takes the exclusive writer's lock of a directory: an OS lock on the file `lock_file`
    /// in it (created when missing, never deleted; the log passes its `krec.lock`), waiting as
    /// `wait` says (see [`LockWait`]); `Ok(None)` when another holder keeps it. The lock lasts
    /// until the returned [`DirLock`] is dropped or the process ends.
    ///
    /// # Errors
    ///
    /// Any I/O error (a missing directory included).
    fn lock_file(&self, lock_file: &Path, wait: LockWait) -> io::Result<Option<DirLock>>;

    /// The path of the `.lock` file of a running Kafka broker whose data directory holds `dir`
    /// (the broker keeps an OS lock on `.lock` in each of its `log.dirs`), `None` when no
    /// broker holds one. Only tests; takes nothing. The default knows no brokers.
    ///
    /// # Errors
    ///
    /// Any I/O error other than a missing `.lock`.
    fn running_broker_lock(&self, dir: &Path) -> io::Result<Option<PathBuf>> {
        let _ = dir;
        Ok(None)
    }
}

/// An open file of a storage backend. All positions are absolute; there is no cursor.
pub trait StorageFile: fmt::Debug + Send + Sync {
    /// Current length in bytes.
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn len(&self) -> io::Result<u64>;

    /// Whether the file is empty.
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Reads up to `buf.len()` bytes at `pos`; returns how many were read (fewer only at the end
    /// of the file).
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize>;

    /// Reads exactly `buf.len()` bytes at `pos`.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` when the file is shorter; any I/O error.
    fn read_exact_at(&self, mut buf: &mut [u8], mut pos: u64) -> io::Result<()> {
        while !buf.is_empty() {
            let n = self.read_at(buf, pos)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "file ended early",
                ));
            }
            buf = &mut buf[n..];
            pos += n as u64;
        }
        Ok(())
    }

    /// Writes all of `buf` at `pos`, extending the file as needed.
    ///
    /// # Errors
    ///
    /// Any I/O error; part of `buf` may have been written.
    fn write_at(&self, buf: &[u8], pos: u64) -> io::Result<()>;

    /// Writes the pieces of `bufs`, one after the other, starting at `pos`: one logical write of
    /// their concatenation. The default writes them in turn with [`StorageFile::write_at`].
    ///
    /// # Errors
    ///
    /// As [`StorageFile::write_at`]; part of the bytes may have been written.
    fn write_all_vectored_at(&self, bufs: &[&[u8]], mut pos: u64) -> io::Result<()> {
        for buf in bufs {
            if buf.is_empty() {
                continue;
            }
            self.write_at(buf, pos)?;
            pos += buf.len() as u64;
        }
        Ok(())
    }

    /// Writes `buf` at the end of the file and returns the position it was written at.
    ///
    /// # Errors
    ///
    /// As [`StorageFile::write_at`].
    fn append(&self, buf: &[u8]) -> io::Result<u64> {
        let pos = self.len()?;
        self.write_at(buf, pos)?;
        Ok(pos)
    }

    /// Truncates or extends (with zeros) the file to `len` bytes.
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn set_len(&self, len: u64) -> io::Result<()>;

    /// Makes the file's contents durable (`fsync`).
    ///
    /// # Errors
    ///
    /// Any I/O error.
    fn sync(&self) -> io::Result<()>;

    /// A hint: starts writing the bytes `offset..offset + len` to the device without waiting,
    /// and says they will not be read again soon, so that a later [`StorageFile::sync`] has
    /// less left to wait for. Durability still needs `sync`. The default does nothing.
    fn start_writeback(&self, _offset: u64, _len: u64) {}
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct FsStorage;

#[derive(Debug)]
struct FsFile(std::fs::File);

impl Storage for FsStorage {
    fn create(&self, path: &Path) -> io::Result<Box<dyn StorageFile>> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Box::new(FsFile(f)))
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn StorageFile>> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)?;
        Ok(Box::new(FsFile(f)))
    }

    fn open_read(&self, path: &Path) -> io::Result<Box<dyn StorageFile>> {
        let f = std::fs::OpenOptions::new().read(true).open(path)?;
        Ok(Box::new(FsFile(f)))
    }

    fn modified(&self, path: &Path) -> Option<std::time::SystemTime> {
        std::fs::metadata(path).and_then(|m| m.modified()).ok()
    }

    fn exists(&self, path: &Path) -> io::Result<bool> {
        path.try_exists()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            if let Some(name) = entry?.file_name().to_str() {
                names.push(name.to_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        #[cfg(unix)]
        {
            std::fs::File::open(dir)?.sync_all()
        }
        #[cfg(not(unix))]
        {
            let _ = dir;
            Ok(())
        }
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::remove_dir(dir)
    }

    fn modified_ms(&self, path: &Path) -> io::Result<i64> {
        let modified = std::fs::metadata(path)?.modified()?;
        let ms = modified
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        Ok(i64::try_from(ms).unwrap_or(i64::MAX))
    }

    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()> {
        let f = std::fs::OpenOptions::new().write(true).open(path)?;
        let ms = u64::try_from(ms).unwrap_or(0);
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
    }

    fn lock_file(&self, lock_file: &Path, wait: LockWait) -> io::Result<Option<DirLock>> {
        lock::lock_file(lock_file, wait)
    }

    fn running_broker_lock(&self, dir: &Path) -> io::Result<Option<PathBuf>> {
        lock::running_broker_lock(dir)
    }
}

impl StorageFile for FsFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    #[cfg(unix)]
    fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(&self.0, buf, pos)
    }

    #[cfg(windows)]
    fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(&self.0, buf, pos)
    }

    #[cfg(unix)]
    fn write_at(&self, buf: &[u8], pos: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(&self.0, buf, pos)
    }

    /// One `writev` at `pos` instead of a `pwrite` per buffer: an append is a patched 61-byte
    /// batch header plus the records it borrows, and a separate small write cost a page-cache
    /// round trip per batch. Positioned by a seek first (std has no stable `pwritev`); nothing
    /// else uses this file's cursor (reads are positioned).
    fn write_all_vectored_at(&self, bufs: &[&[u8]], pos: u64) -> io::Result<()> {
        use std::io::{IoSlice, Seek, SeekFrom, Write};
        let mut slices: Vec<IoSlice<'_>> = bufs
            .iter()
            .filter(|b| !b.is_empty())
            .map(|b| IoSlice::new(b))
            .collect();
        let mut rest = &mut slices[..];
        if rest.is_empty() {
            return Ok(());
        }
        let mut f = &self.0;
        f.seek(SeekFrom::Start(pos))?;
        while !rest.is_empty() {
            match f.write_vectored(rest) {
                Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "wrote nothing")),
                Ok(n) => IoSlice::advance_slices(&mut rest, n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    #[cfg(windows)]
    fn write_at(&self, mut buf: &[u8], mut pos: u64) -> io::Result<()> {
        while !buf.is_empty() {
            let n = std::os::windows::fs::FileExt::seek_write(&self.0, buf, pos)?;
            if n == 0 {
                return Err(io::Error::new(io::ErrorKind::WriteZero, "wrote nothing"));
            }
            buf = &buf[n..];
            pos += n as u64;
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn sync(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn start_writeback(&self, offset: u64, len: u64) {
        // Linux's POSIX_FADV_DONTNEED starts the writeback of the range's dirty pages without
        // waiting for it (`generic_fadvise`) and drops its clean pages from the cache.
        #[cfg(target_os = "linux")]
        if let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) {
            let advice = nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED;
            let _ = nix::fcntl::posix_fadvise(&self.0, offset, len, advice);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (offset, len);
    }
}

/// How [`MemStorage::crash_with`] treats bytes written but not synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashMode {
    /// Every file reverts to its last synced contents.
    DropUnsynced,
    /// A file whose unsynced changes only appended keeps a random prefix of them (a torn write:
    /// the cut may fall anywhere, inside a batch included); other files revert. The seed makes
    /// the choice reproducible.
    TornTail {
        /// Seed of the random cut points.
        seed: u64,
    },
}

#[derive(Debug, Default, Clone)]
struct MemFileData {
    /// What reads see.
    live: Vec<u8>,
    /// What survives a crash.
    durable: Vec<u8>,
    modified_ms: i64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Faults {
    /// Fail the write whose ordinal (counting from 1) is this.
    fail_write: Option<u64>,
    /// Write half of the data of this write, then fail.
    short_write: Option<u64>,
    /// Fail the sync (file or directory) whose ordinal is this.
    fail_sync: Option<u64>,
    /// Fail the rename or removal whose ordinal is this (the entry stays as it was).
    fail_rename: Option<u64>,
}

impl MemState {
    /// Counts a rename or removal and fails it when a fault is due.
    fn rename_fault(&mut self) -> io::Result<()> {
        self.renames += 1;
        if self.faults.fail_rename == Some(self.renames) {
            self.faults.fail_rename = None;
            return Err(injected("rename"));
        }
        Ok(())
    }
}

#[derive(Debug, Default)]
struct MemState {
    files: HashMap<u64, MemFileData>,
    /// Directory entries as the running system sees them.
    live_names: BTreeMap<PathBuf, u64>,
    /// Directory entries that survive a crash.
    durable_names: BTreeMap<PathBuf, u64>,
    dirs: Vec<PathBuf>,
    next_id: u64,
    writes: u64,
    syncs: u64,
    renames: u64,
    faults: Faults,
    /// Locked directories and the generation of their holder (a crash ends every holder).
    locks: HashMap<PathBuf, u64>,
    lock_generation: u64,
}

/// An in-memory storage backend for tests, with fault injection and crash simulation.
///
/// Clones share the same files, so a test can keep a handle while a [`crate::Log`] owns another.
///
/// # Examples
///
/// ```
/// use krecords_log::storage::{MemStorage, Storage, StorageFile};
/// use std::path::Path;
///
/// let storage = MemStorage::new();
/// storage.create_dir_all(Path::new("/d")).unwrap();
/// let f = storage.create(Path::new("/d/a")).unwrap();
/// storage.sync_dir(Path::new("/d")).unwrap();
/// f.write_at(b"synced", 0).unwrap();
/// f.sync().unwrap();
/// f.write_at(b" lost", 6).unwrap();
/// storage.crash();
/// assert_eq!(storage.file_bytes(Path::new("/d/a")).unwrap(), b"synced");
/// ```
#[derive(Debug, Clone)]
pub struct MemStorage {
    state: Arc<Mutex<MemState>>,
    clock: Arc<dyn Clock>,
}

impl Default for MemStorage {
    fn default() -> Self {
        Self::new()
    }
}

fn injected(what: &str) -> io::Error {
    io::Error::other(format!("injected {what} failure"))
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{} not found", path.display()),
    )
}

impl MemStorage {
    /// An empty storage whose file modification times are always 0.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(ManualClock::new(0)))
    }

    /// An empty storage stamping modification times from `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        MemStorage {
            state: Arc::new(Mutex::new(MemState::default())),
            clock,
        }
    }

    fn lock(&self) -> MutexGuard<'_, MemState> {
        // A panic while holding the lock leaves consistent data; keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes the `n`th write from now (1 = the next one) fail without writing anything.
    pub fn fail_write_after(&self, n: u64) {
        let mut s = self.lock();
        s.faults.fail_write = Some(s.writes + n.max(1));
    }

    /// Makes the `n`th write from now write only the first half of its bytes, then fail.
    pub fn short_write_after(&self, n: u64) {
        let mut s = self.lock();
        s.faults.short_write = Some(s.writes + n.max(1));
    }

    /// Makes the `n`th sync from now (file or directory) fail.
    pub fn fail_sync_after(&self, n: u64) {
        let mut s = self.lock();
        s.faults.fail_sync = Some(s.syncs + n.max(1));
    }

    /// Makes the `n`th rename or removal from now (1 = the next one) fail without changing
    /// the directory.
    pub fn fail_rename_after(&self, n: u64) {
        let mut s = self.lock();
        s.faults.fail_rename = Some(s.renames + n.max(1));
    }

    /// Renames and removals done so far.
    pub fn rename_count(&self) -> u64 {
        self.lock().renames
    }

    /// Removes every pending fault.
    pub fn clear_faults(&self) {
        self.lock().faults = Faults::default();
    }

    /// Writes done so far (`write_at`, `append` and `set_len` count).
    pub fn write_count(&self) -> u64 {
        self.lock().writes
    }

    /// Syncs done so far (file and directory syncs count).
    pub fn sync_count(&self) -> u64 {
        self.lock().syncs
    }

    /// Simulates a power cut: every file reverts to its last synced bytes and every directory to
    /// its last synced entries. Handles opened before stay usable but see the reverted data.
    pub fn crash(&self) {
        self.crash_with(CrashMode::DropUnsynced);
    }

    /// Simulates a power cut as `mode` says.
    pub fn crash_with(&self, mode: CrashMode) {
        let mut s = self.lock();
        // The processes died with the machine: their directory locks are gone.
        s.locks.clear();
        let mut rng = match mode {
            CrashMode::DropUnsynced => None,
            CrashMode::TornTail { seed } => Some(SplitMix(seed)),
        };
        let names = s.durable_names.clone();
        s.live_names = names;
        let alive: Vec<u64> = s.live_names.values().copied().collect();
        s.files.retain(|id, _| alive.contains(id));
        let mut ids: Vec<u64> = s.files.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let Some(f) = s.files.get_mut(&id) else {
                continue;
            };
            let appended_only = f.live.len() > f.durable.len() && f.live.starts_with(&f.durable);
            match rng.as_mut() {
                Some(rng) if appended_only => {
                    let extra = (f.live.len() - f.durable.len()) as u64;
                    let keep = f.durable.len() + (rng.next() % (extra + 1)) as usize;
                    f.live.truncate(keep);
                }
                _ => f.live = f.durable.clone(),
            }
            f.durable = f.live.clone();
        }
    }

    /// The bytes a read would see in `path`, `None` if there is no such file.
    pub fn file_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        let s = self.lock();
        let id = s.live_names.get(path)?;
        s.files.get(id).map(|f| f.live.clone())
    }

    /// The synced bytes of `path`, `None` if there is no such file.
    pub fn durable_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        let s = self.lock();
        let id = s.live_names.get(path)?;
        s.files.get(id).map(|f| f.durable.clone())
    }

    /// Replaces the contents of `path` (live and durable), creating it if needed; for tests that
    /// corrupt files directly.
    pub fn put_file(&self, path: &Path, bytes: &[u8]) {
        let mut s = self.lock();
        let id = match s.live_names.get(path) {
            Some(&id) => id,
            None => {
                let id = s.next_id;
                s.next_id += 1;
                s.live_names.insert(path.to_path_buf(), id);
                s.durable_names.insert(path.to_path_buf(), id);
                id
            }
        };
        let f = s.files.entry(id).or_default();
        f.live = bytes.to_vec();
        f.durable = bytes.to_vec();
    }
}

/// A tiny deterministic generator (SplitMix64) for crash cut points.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[derive(Debug)]
struct MemFile {
    storage: MemStorage,
    id: u64,
}

impl MemFile {
    fn with<T>(&self, f: impl FnOnce(&mut MemFileData) -> T) -> io::Result<T> {
        let mut s = self.storage.lock();
        match s.files.get_mut(&self.id) {
            Some(data) => Ok(f(data)),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                "file was lost in a crash",
            )),
        }
    }

    /// Counts a write and returns how many bytes of `len` it may write before failing.
    fn write_fault(&self, len: usize) -> io::Result<Option<usize>> {
        let mut s = self.storage.lock();
        s.writes += 1;
        let n = s.writes;
        if s.faults.fail_write == Some(n) {
            s.faults.fail_write = None;
            return Err(injected("write"));
        }
        if s.faults.short_write == Some(n) {
            s.faults.short_write = None;
            return Ok(Some(len / 2));
        }
        Ok(None)
    }
}

impl StorageFile for MemFile {
    fn len(&self) -> io::Result<u64> {
        self.with(|f| f.live.len() as u64)
    }

    fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        self.with(|f| {
            let start = usize::try_from(pos).unwrap_or(usize::MAX).min(f.live.len());
            let n = buf.len().min(f.live.len() - start);
            buf[..n].copy_from_slice(&f.live[start..start + n]);
            n
        })
    }

    fn write_at(&self, buf: &[u8], pos: u64) -> io::Result<()> {
        let short = self.write_fault(buf.len())?;
        let now = self.storage.clock.now_ms();
        let data = match short {
            Some(n) => &buf[..n],
            None => buf,
        };
        self.with(|f| {
            let start = pos as usize;
            let end = start + data.len();
            if f.live.len() < end {
                f.live.resize(end, 0);
            }
            f.live[start..end].copy_from_slice(data);
            f.modified_ms = now;
        })?;
        match short {
            Some(_) => Err(injected("short write")),
            None => Ok(()),
        }
    }

    /// One logical write for fault injection: the pieces are joined and written at once, so a
    /// fault hits the append as a whole (a short write tears it in the middle).
    fn write_all_vectored_at(&self, bufs: &[&[u8]], pos: u64) -> io::Result<()> {
        self.write_at(&bufs.concat(), pos)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        if self.write_fault(0)?.is_some() {
            return Err(injected("short write"));
        }
        let now = self.storage.clock.now_ms();
        self.with(|f| {
            f.live.resize(len as usize, 0);
            f.modified_ms = now;
        })
    }

    fn sync(&self) -> io::Result<()> {
        {
            let mut s = self.storage.lock();
            s.syncs += 1;
            if s.faults.fail_sync == Some(s.syncs) {
                s.faults.fail_sync = None;
                return Err(injected("sync"));
            }
        }
        self.with(|f| f.durable = f.live.clone())
    }
}

/// A [`MemStorage`] directory lock; dropping it unlocks the directory unless a crash did.
#[derive(Debug)]
struct MemLock {
    storage: MemStorage,
    lock_file: PathBuf,
    generation: u64,
}

impl Drop for MemLock {
    fn drop(&mut self) {
        let mut s = self.storage.lock();
        if s.locks.get(&self.lock_file) == Some(&self.generation) {
            s.locks.remove(&self.lock_file);
        }
    }
}

impl Storage for MemStorage {
    fn create(&self, path: &Path) -> io::Result<Box<dyn StorageFile>> {
        let now = self.clock.now_ms();
        let mut s = self.lock();
        if let Some(parent) = path.parent() {
            if !s.dirs.iter().any(|d| d == parent) {
                return Err(not_found(parent));
            }
        }
        let id = s.next_id;
        s.next_id += 1;
        s.files.insert(
            id,
            MemFileData {
                modified_ms: now,
                ..MemFileData::default()
            },
        );
        s.live_names.insert(path.to_path_buf(), id);
        drop(s);
        Ok(Box::new(MemFile {
            storage: self.clone(),
            id,
        }))
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn StorageFile>> {
        let s = self.lock();
        let id = *s.live_names.get(path).ok_or_else(|| not_found(path))?;
        drop(s);
        Ok(Box::new(MemFile {
            storage: self.clone(),
            id,
        }))
    }

    fn exists(&self, path: &Path) -> io::Result<bool> {
        let s = self.lock();
        Ok(s.live_names.contains_key(path) || s.dirs.iter().any(|d| d == path))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.lock();
        s.rename_fault()?;
        if !s.live_names.contains_key(from) && s.dirs.iter().any(|d| d == from) {
            // A directory: it and everything under it move (not modelled by `crash`).
            let moved = |p: &Path| p.strip_prefix(from).ok().map(|rest| to.join(rest));
            s.dirs = s
                .dirs
                .iter()
                .map(|d| moved(d).unwrap_or_else(|| d.clone()))
                .collect();
            s.live_names = std::mem::take(&mut s.live_names)
                .into_iter()
                .map(|(p, id)| (moved(&p).unwrap_or(p), id))
                .collect();
            return Ok(());
        }
        let id = s.live_names.remove(from).ok_or_else(|| not_found(from))?;
        s.live_names.insert(to.to_path_buf(), id);
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut s = self.lock();
        s.rename_fault()?;
        s.live_names.remove(path).ok_or_else(|| not_found(path))?;
        Ok(())
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let s = self.lock();
        if !s.dirs.iter().any(|d| d == dir) {
            return Err(not_found(dir));
        }
        Ok(s.live_names
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
            .collect())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.lock();
        s.syncs += 1;
        if s.faults.fail_sync == Some(s.syncs) {
            s.faults.fail_sync = None;
            return Err(injected("directory sync"));
        }
        let in_dir = |p: &PathBuf| p.parent() == Some(dir);
        s.durable_names.retain(|p, _| !in_dir(p));
        let live: Vec<(PathBuf, u64)> = s
            .live_names
            .iter()
            .filter(|(p, _)| in_dir(p))
            .map(|(p, id)| (p.clone(), *id))
            .collect();
        s.durable_names.extend(live);
        Ok(())
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.lock();
        for d in dir.ancestors() {
            if !d.as_os_str().is_empty() && !s.dirs.iter().any(|x| x == d) {
                s.dirs.push(d.to_path_buf());
            }
        }
        Ok(())
    }

    fn modified_ms(&self, path: &Path) -> io::Result<i64> {
        let s = self.lock();
        let id = s.live_names.get(path).ok_or_else(|| not_found(path))?;
        Ok(s.files.get(id).map_or(0, |f| f.modified_ms))
    }

    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()> {
        let mut s = self.lock();
        let id = *s.live_names.get(path).ok_or_else(|| not_found(path))?;
        if let Some(f) = s.files.get_mut(&id) {
            f.modified_ms = ms;
        }
        Ok(())
    }

    fn lock_file(&self, lock_file: &Path, wait: LockWait) -> io::Result<Option<DirLock>> {
        let dir = lock_file.parent().unwrap_or(Path::new(""));
        let try_once = || {
            let mut s = self.lock();
            if !s.dirs.iter().any(|d| d == dir) {
                return Err(not_found(dir));
            }
            if s.locks.contains_key(lock_file) {
                return Ok(None);
            }
            s.lock_generation += 1;
            let generation = s.lock_generation;
            s.locks.insert(lock_file.to_path_buf(), generation);
            Ok(Some(DirLock::new(MemLock {
                storage: self.clone(),
                lock_file: lock_file.to_path_buf(),
                generation,
            })))
        };
        lock::wait_for(wait, try_once, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (MemStorage, PathBuf) {
        let s = MemStorage::new();
        let d = PathBuf::from("/d");
        s.create_dir_all(&d).unwrap();
        (s, d)
    }

    #[test]
    fn unsynced_names_and_bytes_vanish_on_crash() {
        let (s, d) = setup();
        let f = s.create(&d.join("a")).unwrap();
        f.write_at(b"abc", 0).unwrap();
        f.sync().unwrap();
        s.crash();
        // The file was synced but its directory entry never was.
        assert!(s.file_bytes(&d.join("a")).is_none());

        let f = s.create(&d.join("b")).unwrap();
        s.sync_dir(&d).unwrap();
        f.write_at(b"abc", 0).unwrap();
        f.sync().unwrap();
        f.write_at(b"def", 3).unwrap();
        s.crash();
        assert_eq!(s.file_bytes(&d.join("b")).unwrap(), b"abc");
    }

    #[test]
    fn torn_tail_keeps_a_prefix_of_appends() {
        let (s, d) = setup();
        let f = s.create(&d.join("a")).unwrap();
        s.sync_dir(&d).unwrap();
        f.write_at(b"0123", 0).unwrap();
        f.sync().unwrap();
        f.write_at(b"456789", 4).unwrap();
        s.crash_with(CrashMode::TornTail { seed: 7 });
        let bytes = s.file_bytes(&d.join("a")).unwrap();
        assert!(bytes.len() >= 4 && bytes.len() <= 10);
        assert!(b"0123456789".starts_with(&bytes));
    }

    #[test]
    fn faults_fire_once() {
        let (s, d) = setup();
        let f = s.create(&d.join("a")).unwrap();
        s.fail_write_after(2);
        f.write_at(b"x", 0).unwrap();
        assert!(f.write_at(b"y", 1).is_err());
        f.write_at(b"z", 1).unwrap();
        assert_eq!(s.file_bytes(&d.join("a")).unwrap(), b"xz");

        s.short_write_after(1);
        assert!(f.write_at(b"abcd", 2).is_err());
        assert_eq!(s.file_bytes(&d.join("a")).unwrap(), b"xzab");

        s.fail_sync_after(1);
        assert!(f.sync().is_err());
        f.sync().unwrap();
    }

    #[test]
    fn rename_and_remove_are_durable_after_dir_sync() {
        let (s, d) = setup();
        let f = s.create(&d.join("a.tmp")).unwrap();
        f.write_at(b"v", 0).unwrap();
        f.sync().unwrap();
        s.rename(&d.join("a.tmp"), &d.join("a")).unwrap();
        s.sync_dir(&d).unwrap();
        s.remove(&d.join("a")).unwrap();
        s.crash();
        assert_eq!(s.file_bytes(&d.join("a")).unwrap(), b"v");
        assert_eq!(s.list_dir(&d).unwrap(), vec!["a".to_string()]);
    }

    #[test]
    fn fs_storage_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let s = FsStorage;
        let p = dir.path().join("f");
        let f = s.create(&p).unwrap();
        assert_eq!(f.append(b"hello").unwrap(), 0);
        assert_eq!(f.append(b" world").unwrap(), 5);
        let mut buf = [0u8; 11];
        f.read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(&buf, b"hello world");
        f.set_len(5).unwrap();
        f.sync().unwrap();
        s.sync_dir(dir.path()).unwrap();
        assert_eq!(f.len().unwrap(), 5);
        assert!(s.exists(&p).unwrap());
        assert_eq!(s.list_dir(dir.path()).unwrap(), vec!["f".to_string()]);
        assert!(s.modified_ms(&p).unwrap() > 0);
        s.remove(&p).unwrap();
        assert!(!s.exists(&p).unwrap());
    }
}
